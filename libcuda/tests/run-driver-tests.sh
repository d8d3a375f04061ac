#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Runs a driver-API test program on mdgpu's libcuda.so.1 against a real
# build/mdgpud (sim backend) on a temporary socket.
#   run-driver-tests.sh LIBDIR PROGRAM   (BUILD: the build directory)
# LIBDIR holds the libcuda.so.1 to test (LD_LIBRARY_PATH).  The program
# runs twice: as is, and with MDGPU_CUDA_LOG=1, where each unsupported
# entry point it calls must be logged exactly once.
set -u

LIBDIR=$1
PROG=$2
BUILD=${BUILD:?}
TMP=$(mktemp -d /tmp/mdgpu-libcuda-test.XXXXXX)
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

run() {
	env -u MDGPU_DEVICE -u MDGPU_VFIO LD_LIBRARY_PATH="$LIBDIR" \
		MDGPU_SOCKET="$SOCK" MDGPU_TYPE=1g "$@"
}

run "$PROG" || FAILS=$((FAILS + 1))

run env MDGPU_CUDA_LOG=1 "$PROG" >"$TMP/out" 2>"$TMP/err" ||
	{ cat "$TMP/out" "$TMP/err"; FAILS=$((FAILS + 1)); }
n=$(grep -c '^libcuda(mdgpu): cuMemAllocManaged: not supported$' "$TMP/err")
[ "$n" = 1 ] || { echo "FAIL: cuMemAllocManaged logged $n times"; FAILS=$((FAILS + 1)); }
grep -q '^libcuda(mdgpu): cuInit: vGPU [0-9]* over the socket transport' \
	"$TMP/err" || { echo "FAIL: cuInit not logged"; FAILS=$((FAILS + 1)); }

# No daemon: cuInit fails and every later call says NOT_INITIALIZED.
env LD_LIBRARY_PATH="$LIBDIR" MDGPU_SOCKET="$TMP/none.sock" \
	"$PROG" --no-daemon || FAILS=$((FAILS + 1))

echo "run-driver-tests ($LIBDIR): $FAILS failed"
[ "$FAILS" = 0 ]
