# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Sourced by the GPU scripts (tests/gpu/frameworks.sh,
# tests/gpu/libcuda-compare.sh, bench/frameworks.sh) and by
# tools/cuda-trace/test-cuda-trace.sh: building what they run and one
# mdgpud on a socket, started and stopped the same way everywhere.
# The caller sets B (the build directory) and OUT (where logs go) and runs
# from the repository root (make's working directory).
#
#   mdgpu_gpu_build TARGET...
#       make -j$(nproc) TARGET... into $OUT/build.log; on failure its last
#       20 lines and status 1.
#   mdgpu_daemon_start DIR [-o key=value ...]
#       $B/mdgpud on the cuda backend, socket transport, its sockets
#       DIR/mdgpud.sock and DIR/admin.sock, stderr to $OUT/mdgpud.log, the
#       options given appended (a later -o overrides an earlier one:
#       -o backend=sim runs it without a GPU).  Waits up to 15 s for the
#       socket, less if the daemon exits; on failure prints
#       "FAIL: no daemon" and the log, status 1.
#       Sets MDGPU_DAEMON_PID, MDGPU_DAEMON_SOCK and MDGPU_DAEMON_ADMIN.
#   mdgpu_daemon_stop
#       SIGTERM to the daemon and wait for it; nothing when none runs.

# How many 50 ms steps mdgpu_daemon_start waits for the socket (15 s).
MDGPU_DAEMON_WAIT_STEPS=300
MDGPU_DAEMON_PID=

mdgpu_gpu_build() {
	make -j"$(nproc)" "$@" >"$OUT/build.log" 2>&1 || {
		tail -20 "$OUT/build.log"
		return 1
	}
}

mdgpu_daemon_start() {
	local dir=$1
	shift
	MDGPU_DAEMON_SOCK=$dir/mdgpud.sock
	MDGPU_DAEMON_ADMIN=$dir/admin.sock
	"$B/mdgpud" -o backend=cuda -o transport=socket \
		-o "socket_path=$MDGPU_DAEMON_SOCK" \
		-o "admin_socket_path=$MDGPU_DAEMON_ADMIN" "$@" \
		2>"$OUT/mdgpud.log" &
	MDGPU_DAEMON_PID=$!
	for _ in $(seq "$MDGPU_DAEMON_WAIT_STEPS"); do
		[ -S "$MDGPU_DAEMON_SOCK" ] && return 0
		kill -0 "$MDGPU_DAEMON_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "FAIL: no daemon"
	cat "$OUT/mdgpud.log"
	return 1
}

mdgpu_daemon_stop() {
	[ -n "$MDGPU_DAEMON_PID" ] || return 0
	kill "$MDGPU_DAEMON_PID" 2>/dev/null && wait "$MDGPU_DAEMON_PID" 2>/dev/null
	MDGPU_DAEMON_PID=
}
