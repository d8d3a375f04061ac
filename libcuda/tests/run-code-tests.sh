#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Runs test_code on mdgpu's libcuda.so.1 against a real build/mdgpud on a
# temporary socket: once on the sim backend, and once on the cuda backend
# over the fake libcuda of CI (build/cuda-fake, worker build/mdgpud-worker)
# when both are built (make check-daemon builds them), else that run is
# skipped with the reason.  On each backend it runs twice: with lazy
# library loading (the default) and with CUDA_MODULE_LOADING=EAGER.  It
# reads the daemon's command counts from the admin socket
# (MDGPU_TEST_ADMIN).  On the cuda backend it runs once more, alone, the
# tests that streams of different threads run concurrently and that a
# synchronize does not hold other threads (MDGPU_TEST_CONCURRENCY), on the
# same daemon with its default slices: the daemon's only vGPU keeps its
# slice while its streams have work (core/dispatch.c), so a 1 s kernel on
# one stream does not hold up another thread's commands.  With
# MDGPU_CODE_TESTS_GPU=1 the cuda backend runs on the machine's GPU.
#   run-code-tests.sh LIBDIR PROGRAM   (BUILD: the build directory)
set -u

LIBDIR=$1
PROG=$2
BUILD=${BUILD:?}
TMP=$(mktemp -d /tmp/mdgpu-code-test.XXXXXX)
DPID=
FAILS=0

stop() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	DPID=
}
cleanup() {
	stop
	rm -rf "$TMP"
}
trap cleanup EXIT

# start BACKEND [env...]: an mdgpud on $TMP/BACKEND.sock.
start() {
	local backend=$1 sock=$TMP/$1.sock
	shift
	env "$@" "$BUILD/mdgpud" -o "backend=$backend" -o sim_realtime=0 \
		-o "cuda_worker=$BUILD/mdgpud-worker" -o "socket_path=$sock" \
		-o "admin_socket_path=$TMP/$backend-admin.sock" \
		-o cuda_fb_reserve_mib=1 -o log_level=info \
		2>"$TMP/$backend.log" &
	DPID=$!
	for _ in $(seq 200); do
		[ -S "$sock" ] && return 0
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.05
	done
	DPID=
	# The fake libcuda behind the worker's needs: a skip, with the reason.
	if grep -q "no usable GPU" "$TMP/$backend.log"; then
		echo "SKIP: $backend backend run: $(grep -m1 'no usable GPU' "$TMP/$backend.log")"
		return 2
	fi
	cat "$TMP/$backend.log"
	echo "FAIL: mdgpud ($backend) did not create $sock"
	return 1
}

run() {
	local backend=$1
	shift
	env -u MDGPU_DEVICE -u MDGPU_VFIO -u CUDA_MODULE_LOADING \
		LD_LIBRARY_PATH="$LIBDIR" \
		MDGPU_SOCKET="$TMP/$backend.sock" MDGPU_TYPE=1g \
		MDGPU_TEST_ADMIN="$TMP/$backend-admin.sock" \
		MDGPU_TEST_BACKEND="$backend" "$@"
}

# failed BACKEND: one more failed run; the daemon's warnings and errors
# so far tell what it saw (a killed worker, a refused command).
failed() {
	FAILS=$((FAILS + 1))
	echo "-- mdgpud ($1): its warnings and errors so far (last 30)"
	grep -a -E '] (warn|err): ' "$TMP/$1.log" | tail -30
}

# Each backend: lazy library loading (the default), then eager.
if start sim; then
	run sim "$PROG" || failed sim
	run sim env CUDA_MODULE_LOADING=EAGER "$PROG" || failed sim
else
	FAILS=$((FAILS + 1))
fi
stop

# MDGPU_CODE_TESTS_GPU=1 (the GPU machine): the cuda backend's workers
# load the system's libcuda.so.1, the GPU, instead of the fake.
if [ "${MDGPU_CODE_TESTS_GPU:-0}" = 1 ]; then
	CUDA_LIB=
	HAVE_CUDA_LIB=true
else
	CUDA_LIB=$BUILD/cuda-fake
	HAVE_CUDA_LIB=false
	[ -f "$CUDA_LIB/libcuda.so.1" ] && HAVE_CUDA_LIB=true
fi
if [ -x "$BUILD/mdgpud-worker" ] && $HAVE_CUDA_LIB; then
	start cuda ${CUDA_LIB:+LD_LIBRARY_PATH="$CUDA_LIB"}
	case $? in
	0) run cuda "$PROG" || failed cuda
	   run cuda env CUDA_MODULE_LOADING=EAGER "$PROG" || failed cuda
	   run cuda env MDGPU_TEST_CONCURRENCY=1 "$PROG" || failed cuda ;;
	1) FAILS=$((FAILS + 1)) ;;
	esac
	stop
else
	echo "SKIP: cuda backend run: build/mdgpud-worker and build/cuda-fake not built (make check-daemon)"
fi

echo "run-code-tests ($LIBDIR): $FAILS failed"
[ "$FAILS" = 0 ]
