#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Runs rt_basic (NVIDIA's CUDA runtime, built by nvcc, unmodified) on
# mdgpu's libcuda.so.1 against a real build/mdgpud (sim backend) over the
# socket transport.
#   run-rt-tests.sh LIBDIR PROGRAM...   (BUILD: the build directory)
# Each PROGRAM (the static- and the shared-runtime build) must either
# pass every step, or stop at the first step libcuda cannot serve yet:
# RT_FRONTIER below, with the entry point that stops it logged.  The
# export tables must be served and the integrity check passed whatever
# the frontier.
set -u

# Where the runtime stops today, and the libcuda log line that says why
# (move both as entry points are implemented; empty when all pass).
# Today: the export tables and the integrity check pass; at its first
# call the runtime loads its fatbin (cuLibraryLoadData, no context yet)
# and the sim backend cannot load code (--no-code), so that call fails.
RT_FRONTIER='cudaGetDeviceCount'
RT_FRONTIER_LOG='^libcuda(mdgpu): cuLibraryLoadData: module_load: not supported by this backend or transport (-95)$'
# The sim backend's 1g type.
QUOTA=$((1 << 30))

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

for prog in "$@"; do
	name=$(basename "$prog")
	env -u MDGPU_DEVICE -u MDGPU_VFIO LD_LIBRARY_PATH="$LIBDIR" \
		MDGPU_SOCKET="$SOCK" MDGPU_TYPE=1g MDGPU_CUDA_LOG=1 \
		"$prog" "$QUOTA" --no-code >"$TMP/out" 2>"$TMP/err"
	rc=$?
	log() { grep -q -- "$1" "$TMP/err" || fail "$name: no log line '$1'"; }
	log '^libcuda(mdgpu): cuInit: vGPU [0-9]* over the socket transport, quota '"$QUOTA"' bytes'
	log '^libcuda(mdgpu): cuGetExportTable(f8cff951-2146-8b4e-b9e2-fb469e7c0dd9): not found$'
	log '^libcuda(mdgpu): cuGetExportTable(CUDART_INTERFACE) = '
	log '^libcuda(mdgpu): cuGetExportTable(TOOLS_RUNTIME_CALLBACK_HOOKS) = '
	log '^libcuda(mdgpu): cuGetExportTable(TOOLS_TLS) = '
	log '^libcuda(mdgpu): cuGetExportTable(CONTEXT_LOCAL_STORAGE) = '
	log '^libcuda(mdgpu): cuGetExportTable(CONTEXT_CHECKS) = '
	log '^libcuda(mdgpu): cuGetExportTable(INTEGRITY_CHECK) = '
	grep -q 'integrity checks failed' "$TMP/out" &&
		fail "$name: the runtime's integrity check failed"
	grep -q 'not supported (its private tables' "$TMP/err" &&
		fail "$name: runtime version refused"
	if grep -q '^rt_basic: all passed$' "$TMP/out" && [ "$rc" = 0 ]; then
		echo "$name: all steps pass"
		[ -n "$RT_FRONTIER" ] &&
			echo "note: RT_FRONTIER in $0 can be cleared"
		continue
	fi
	first=$(sed -n 's/^rt_basic: FAIL \([^:]*\):.*/\1/p' "$TMP/out" | head -1)
	if [ -n "$RT_FRONTIER" ] && [ "$first" = "$RT_FRONTIER" ] &&
	   grep -q -- "$RT_FRONTIER_LOG" "$TMP/err"; then
		echo "$name: stops at the known frontier: $(grep '^rt_basic: FAIL' "$TMP/out")"
		continue
	fi
	fail "$name (rc $rc) stops at '$first', expected '$RT_FRONTIER':"
	cat "$TMP/out"
	grep -v 'cuGetProcAddress(.*): no such symbol' "$TMP/err"
done

echo "run-rt-tests ($LIBDIR): $FAILS failed"
[ "$FAILS" = 0 ]
