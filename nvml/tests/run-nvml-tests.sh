#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Runs mdgpu's NVML tests against a real build/mdgpud (sim backend) on a
# temporary socket, as libcuda/tests/run-driver-tests.sh does.
#   run-nvml-tests.sh NVMLDIR CUDADIR   (BUILD: the build directory)
# NVMLDIR holds libnvidia-ml.so.1 and tests/, CUDADIR the libcuda.so.1 it
# goes with.  test_nvml runs with a daemon (as is, and logging, where each
# stub it calls must be logged once) and without one; test_nvml_only with
# a daemon.
set -u

NDIR=$1
CDIR=$2
BUILD=${BUILD:?}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d /tmp/mdgpu-nvml-test.XXXXXX)
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
	env -u MDGPU_DEVICE -u MDGPU_VFIO LD_LIBRARY_PATH="$NDIR:$CDIR" \
		MDGPU_SOCKET="$SOCK" MDGPU_TYPE=1g \
		MDGPU_NVML_LIST="$HERE/../entry-points.txt" "$@"
}

run "$NDIR/tests/test_nvml" || FAILS=$((FAILS + 1))
run "$NDIR/tests/test_nvml_only" || FAILS=$((FAILS + 1))

run env MDGPU_NVML_LOG=1 "$NDIR/tests/test_nvml" >"$TMP/out" 2>"$TMP/err" ||
	{ cat "$TMP/out" "$TMP/err"; FAILS=$((FAILS + 1)); }
n=$(grep -c '^libnvidia-ml(mdgpu): nvmlDeviceGetEccMode: not supported$' \
	"$TMP/err")
[ "$n" = 1 ] || { echo "FAIL: nvmlDeviceGetEccMode logged $n times"; FAILS=$((FAILS + 1)); }

env -u MDGPU_DEVICE -u MDGPU_VFIO LD_LIBRARY_PATH="$NDIR:$CDIR" \
	MDGPU_SOCKET="$TMP/none.sock" "$NDIR/tests/test_nvml" --no-daemon ||
	FAILS=$((FAILS + 1))

echo "run-nvml-tests ($NDIR): $FAILS failed"
[ "$FAILS" = 0 ]
