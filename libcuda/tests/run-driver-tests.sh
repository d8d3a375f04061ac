#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Runs a driver-API test program on mdgpu's libcuda.so.1 against a real
# build/mdgpud (sim backend) on a temporary socket.
#   run-driver-tests.sh LIBDIR PROGRAM   (BUILD: the build directory)
# LIBDIR holds the libcuda.so.1 to test (LD_LIBRARY_PATH).  The program
# runs twice: as is, and with MDGPU_CUDA_LOG=1, where each unsupported
# entry point it calls must be logged exactly once.  Then once more
# against an mdgpud on the cuda backend over CI's fake libcuda
# (build/cuda-fake, workers build/mdgpud-worker; MDGPU_TEST_BACKEND=cuda
# tells the program), skipped with the reason where that cannot start.
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

# The transport (Documentation/libcuda.md, "Choosing the vGPU"): a set
# variable wins, in the order MDGPU_VFIO, MDGPU_DEVICE, MDGPU_SOCKET, then
# the first /dev/mdgpu-vgpuN.  cuInit logs the transport it took.
# took WANT CMD...: CMD's cuInit (MDGPU_CUDA_LOG) took the WANT transport;
# CMD's exit status in $rc.
took() {
	local want=$1
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	grep -q "^libcuda(mdgpu): cuInit: \(vGPU [0-9]* over the \)\?$want transport" \
		"$TMP/err" || { cat "$TMP/out" "$TMP/err"
		echo "FAIL: cuInit did not take the $want transport: $*"
		FAILS=$((FAILS + 1)); }
}
# must_pass WHAT: the last took's command exited 0.
must_pass() {
	[ "$rc" = 0 ] || { cat "$TMP/out" "$TMP/err"; echo "FAIL: $1"
			   FAILS=$((FAILS + 1)); }
}
pick=(env -u MDGPU_DEVICE -u MDGPU_VFIO -u MDGPU_SOCKET
      LD_LIBRARY_PATH="$LIBDIR" MDGPU_CUDA_LOG=1)
# A device node that does not exist, named beside a live socket: the
# guest transport, so no vGPU (--no-daemon: CUDA_ERROR_NO_DEVICE).
took guest "${pick[@]}" MDGPU_DEVICE="$TMP/no-node" MDGPU_SOCKET="$SOCK" \
	"$PROG" --no-daemon
must_pass "MDGPU_DEVICE of no node beside MDGPU_SOCKET"
took vfio "${pick[@]}" MDGPU_VFIO=00000000-0000-0000-0000-000000000000 \
	MDGPU_DEVICE="$TMP/no-node" MDGPU_SOCKET="$SOCK" "$PROG" --no-daemon
# A guest device present (a file on a private /dev, in a user and mount
# namespace): MDGPU_SOCKET still reaches the daemon, and every group
# passes; without it, the probe takes the device.
guest_dev=(unshare -rm sh -c
	   'mount -t tmpfs tmpfs /dev && : >/dev/mdgpu-vgpu0 && exec "$@"' sh)
if "${guest_dev[@]}" true 2>/dev/null; then
	took socket "${guest_dev[@]}" "${pick[@]}" MDGPU_SOCKET="$SOCK" \
		MDGPU_TYPE=1g "$PROG"
	must_pass "test_driver over MDGPU_SOCKET beside /dev/mdgpu-vgpu0"
	took guest "${guest_dev[@]}" "${pick[@]}" "$PROG" --no-daemon
else
	echo "SKIP: MDGPU_SOCKET beside /dev/mdgpu-vgpu0: no user and mount namespace (unshare -rm)"
fi

# The cuda backend: the same program through the supervisor, a worker
# per vGPU and the fake libcuda (its streams run truly concurrently, so
# ordering the sim hides shows up).
CSOCK=$TMP/cuda.sock
if [ -f "$BUILD/cuda-fake/libcuda.so.1" ] && [ -x "$BUILD/mdgpud-worker" ]; then
	env LD_LIBRARY_PATH="$BUILD/cuda-fake" MDGPUD_FAKE_CUDA_MEM_MIB=16384 		"$BUILD/mdgpud" -o backend=cuda -o "socket_path=$CSOCK" 		-o "cuda_worker=$BUILD/mdgpud-worker" 		-o "admin_socket_path=$TMP/cuda-admin.sock" 		-o cuda_fb_reserve_mib=1 -o ctx_overhead_mib=1 		-o log_level=warn 2>"$TMP/cuda.log" &
	CPID=$!
	for _ in $(seq 200); do
		[ -S "$CSOCK" ] && break
		kill -0 "$CPID" 2>/dev/null || break
		sleep 0.05
	done
	if [ -S "$CSOCK" ]; then
		env -u MDGPU_DEVICE -u MDGPU_VFIO LD_LIBRARY_PATH="$LIBDIR" 			MDGPU_SOCKET="$CSOCK" MDGPU_TYPE=1g 			MDGPU_TEST_BACKEND=cuda "$PROG" >"$TMP/cuda.out" 2>&1
		rc=$?
		sed 's/^test_driver/test_driver (cuda)/' "$TMP/cuda.out"
		[ "$rc" = 0 ] || FAILS=$((FAILS + 1))
	else
		cat "$TMP/cuda.log"
		echo "FAIL: mdgpud (cuda, fake libcuda) did not create $CSOCK"
		FAILS=$((FAILS + 1))
	fi
	kill "$CPID" 2>/dev/null && wait "$CPID" 2>/dev/null
else
	echo "SKIP: the cuda backend run: no $BUILD/cuda-fake/libcuda.so.1 or $BUILD/mdgpud-worker"
fi

echo "run-driver-tests ($LIBDIR): $FAILS failed"
[ "$FAILS" = 0 ]
