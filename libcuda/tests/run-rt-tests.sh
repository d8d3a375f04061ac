#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Runs rt_basic (NVIDIA's CUDA runtime, built by nvcc, unmodified) on
# mdgpu's libcuda.so.1 against a real build/mdgpud (sim backend) over the
# socket transport.
#   run-rt-tests.sh LIBDIR PROGRAM...   (BUILD: the build directory)
# Each PROGRAM (the static- and the shared-runtime build) runs twice:
#  - lazy loading (the default): every step passes but the kernel's: the
#    export tables are served, the integrity check passes, device query,
#    allocations, copies and memsets (contents checked), cudaMemGetInfo =
#    the quota, events, streams, cudaGetLastError; the program's library
#    is loaded only at its kernel's look-up, which the sim backend refuses
#    (it loads no code), so the launch fails with cudaErrorNotSupported
#    (801) and leaves the kernel's buffer unchanged (rt_basic --no-code);
#  - CUDA_MODULE_LOADING=EAGER: the runtime loads its fatbin at its first
#    call, which the sim refuses, so that call fails 801.
set -u

# The sim backend's 1g type.
QUOTA=$((1 << 30))
STEPS='cudaGetDeviceCount cudaGetDeviceProperties cudaMalloc cudaMemGetInfo
cudaMemcpy cudaMemset events streams cudaGetLastError launch'
NO_CODE='module_load: not supported by this backend or transport (-95)'

LIBDIR=$1
shift
BUILD=${BUILD:?}
TMP=$(mktemp -d /tmp/mdgpu-rt-test.XXXXXX)
SOCK=$TMP/mdgpud.sock
DPID=
FAILS=0

cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

"$BUILD/mdgpud" -o backend=sim -o sim_realtime=0 -o "socket_path=$SOCK" \
	-o "admin_socket_path=$TMP/admin.sock" -o log_level=warn &
DPID=$!
for _ in $(seq 200); do [ -S "$SOCK" ] && break; sleep 0.05; done
[ -S "$SOCK" ] || { echo "FAIL: mdgpud did not create $SOCK"; exit 1; }

# run PROG [env...]: its stdout and stderr, in order, in $TMP/out (the
# program flushes stdout after each step; the log is unbuffered).
run() {
	local prog=$1
	shift
	env -u MDGPU_DEVICE -u MDGPU_VFIO -u CUDA_MODULE_LOADING \
		LD_LIBRARY_PATH="$LIBDIR" MDGPU_SOCKET="$SOCK" MDGPU_TYPE=1g \
		MDGPU_CUDA_LOG=1 "$@" "$prog" "$QUOTA" --no-code \
		>"$TMP/out" 2>&1
}

# has NAME LINE-REGEX: the output has such a line.
has() { grep -q -- "$2" "$TMP/out" || fail "$1: no line '$2'"; }
# line REGEX: the number of the first line that matches, or 0.
line() { grep -n -m1 -- "$1" "$TMP/out" | cut -d: -f1 | grep . || echo 0; }

dump() {
	grep -v 'cuGetProcAddress(.*): no such symbol' "$TMP/out"
}

for prog in "$@"; do
	name=$(basename "$prog")
	run "$prog"
	rc=$?
	f0=$FAILS
	has "$name" '^libcuda(mdgpu): cuInit: vGPU [0-9]* over the socket transport, quota '"$QUOTA"' bytes'
	has "$name" '^libcuda(mdgpu): cuGetExportTable(f8cff951-2146-8b4e-b9e2-fb469e7c0dd9): not found$'
	for t in CUDART_INTERFACE TOOLS_RUNTIME_CALLBACK_HOOKS TOOLS_TLS \
		 CONTEXT_LOCAL_STORAGE CONTEXT_CHECKS INTEGRITY_CHECK; do
		has "$name" "^libcuda(mdgpu): cuGetExportTable($t) = "
	done
	grep -q 'integrity checks failed' "$TMP/out" &&
		fail "$name: the runtime's integrity check failed"
	grep -q 'not supported (its private tables' "$TMP/out" &&
		fail "$name: runtime version refused"
	for s in $STEPS; do
		has "$name" "^rt_basic: ok $s\$"
	done
	has "$name" '^rt_basic: launch error 801 '
	has "$name" '^rt_basic: all passed$'
	[ "$rc" = 0 ] || fail "$name: exit status $rc"
	# Lazy: nothing loaded before the kernel is looked up, at its launch.
	has "$name" "^libcuda(mdgpu): cuLibraryGetKernel: $NO_CODE\$"
	grep -q '^libcuda(mdgpu): cuLibraryLoadData: loading' "$TMP/out" &&
		fail "$name: cuLibraryLoadData loaded its library (lazy mode)"
	load=$(line '^libcuda(mdgpu): cuLibraryGetKernel: loading library ')
	before=$(line '^rt_basic: ok cudaGetLastError$')
	[ "$load" -gt "$before" ] ||
		fail "$name: library loaded at line $load, before the launch step (line $before)"
	if [ "$FAILS" = "$f0" ]; then
		echo "$name: every step passes, the launch fails 801 (lazy loading)"
	else
		dump
	fi

	# Eager: the first runtime call loads the fatbin and fails.
	run "$prog" CUDA_MODULE_LOADING=EAGER
	rc=$?
	f0=$FAILS
	has "$name (EAGER)" '^rt_basic: FAIL cudaGetDeviceCount: .* = 801 '
	has "$name (EAGER)" "^libcuda(mdgpu): cuLibraryLoadData: $NO_CODE\$"
	[ "$rc" = 1 ] || fail "$name (EAGER): exit status $rc, expected 1"
	if [ "$FAILS" = "$f0" ]; then
		echo "$name: CUDA_MODULE_LOADING=EAGER: the first call fails 801 at the fatbin's load"
	else
		dump
	fi
done

echo "run-rt-tests ($LIBDIR): $FAILS failed"
[ "$FAILS" = 0 ]
