#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Runs rt_basic (NVIDIA's CUDA runtime, built by nvcc, unmodified) on
# mdgpu's libcuda.so.1 against a real build/mdgpud (sim backend) over the
# socket transport.
#   run-rt-tests.sh LIBDIR PROGRAM...   (BUILD: the build directory)
# Each PROGRAM (the static- and the shared-runtime build) runs twice, with
# lazy loading (the default) and with CUDA_MODULE_LOADING=EAGER; what each
# run must print is rt-check.sh's.
set -u

# The sim backend's 1g type.
QUOTA=$((1 << 30))
CHECK=$(dirname "$0")/rt-check.sh

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

dump() {
	grep -v 'cuGetProcAddress(.*): no such symbol' "$TMP/out"
}

for prog in "$@"; do
	name=$(basename "$prog")
	run "$prog"
	if "$CHECK" lazy "$TMP/out" "$name" socket "$QUOTA" $?; then
		echo "$name: every step passes, the launch fails 801 (lazy loading)"
	else
		FAILS=$((FAILS + 1))
		dump
	fi
	# Eager: the first runtime call loads the fatbin and fails.
	run "$prog" CUDA_MODULE_LOADING=EAGER
	if "$CHECK" eager "$TMP/out" "$name (EAGER)" socket "$QUOTA" $?; then
		echo "$name: CUDA_MODULE_LOADING=EAGER: the first call fails 801 at the fatbin's load"
	else
		FAILS=$((FAILS + 1))
		dump
	fi
done

echo "run-rt-tests ($LIBDIR): $FAILS failed"
[ "$FAILS" = 0 ]
