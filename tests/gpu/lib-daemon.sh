# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Sourced by the GPU scripts (tests/gpu/cuda-python.sh,
# tests/gpu/weights-drvapi.sh, tests/gpu/faults.sh,
# tests/gpu/libcuda-compare.sh,
# tests/gpu/frameworks.sh, bench/frameworks.sh) and by
# tools/cuda-trace/test-cuda-trace.sh: the GPU scripts' common start,
# building what they run and one mdgpud on a socket, done the same way
# everywhere.  The caller runs from the repository root (make's working
# directory); mdgpu_gpu_setup sets B (the build directory) and OUT (where
# logs go), a caller that does not use it sets them itself.
#
#   mdgpu_gpu_setup [-n] [-p PYTHON WHAT] [-c CHECK] NAME [TARGET...]
#       Sets TOP (the working directory), B ($TOP/build), OUT (default
#       /tmp/mdgpu-NAME, made), NVCC (the toolkit's nvcc) and CUDA_INC
#       (the directory of its cuda.h).  Without a GPU (nvidia-smi -L
#       fails) prints "SKIPPED: no GPU (nvidia-smi -L failed)" and exits
#       the script with 0; -n: no GPU is needed (the caller runs on a fake
#       libcuda).  -p: if python3 -c PYTHON fails (the imports the script
#       needs), prints "SKIPPED: python3 cannot import WHAT" and exits 0.
#       -c: CHECK (a function of the caller: validating its settings)
#       runs next; it exits the script itself when it must not go on.
#       Then libseccomp is found (tests/gpu/seccomp-deps.sh), TMP made
#       (/tmp/mdgpu-NAME.XXXXXX), PIDS set empty and an EXIT trap set
#       that kills the PIDS the caller adds, stops the daemon and removes
#       TMP; mdgpud, mdgpud-worker, libcuda.so.1 and each TARGET (a path
#       under $B) are built with mdgpu_gpu_build, the script exiting 1 if
#       that fails.  Skips come before anything is built or extracted.
#   mdgpu_gpu_build TARGET...
#       make -j$(nproc) TARGET... into $OUT/build.log; on failure its last
#       20 lines and status 1.
#   mdgpu_daemon_start DIR [-o key=value ...]
#       $B/mdgpud on the cuda backend, socket transport, its sockets
#       DIR/mdgpud.sock and DIR/admin.sock, stderr to $OUT/mdgpud.log, the
#       options given appended (a later -o overrides an earlier one:
#       -o backend=sim runs it without a GPU).  Waits up to 15 s for its
#       "dispatcher running" or, with a log level that hides it, for its
#       socket (one left by an earlier daemon is removed before the
#       start), less if the daemon exits; on failure prints
#       "FAIL: no daemon" and the log, status 1.
#       Sets MDGPU_DAEMON_PID, MDGPU_DAEMON_SOCK and MDGPU_DAEMON_ADMIN.
#   mdgpu_daemon_stop
#       SIGTERM to the daemon and wait for it; nothing when none runs.
#   mdgpu_wait_ready NAME PID
#       Waits until $OUT/NAME.out has a line "ready" (spin_tenant's, 30 s
#       at most, less if PID exits); otherwise prints "FAIL: tenant NAME
#       did not get ready:", its output and the end of $OUT/NAME.err, and
#       returns 1.
#   mdgpu_spin_build [FAKE]
#       $B/spin.ptx (tests/gpu/libcuda/spin.cu) and $B/spin_tenant, the
#       tenant program of weights-drvapi.sh and faults.sh, linked against
#       the system's libcuda, or with FAKE non-empty against the
#       toolkit's stub (mdgpu's libcuda.so.1 runs it either way).

# How many 50 ms steps mdgpu_daemon_start waits for the daemon (15 s).
MDGPU_DAEMON_WAIT_STEPS=300
MDGPU_DAEMON_PID=

mdgpu_gpu_setup() {
	local opt need_gpu=1 py='' py_what='' check='' name t
	local targets=()

	OPTIND=1
	while getopts np:c: opt; do
		case $opt in
		n) need_gpu= ;;
		p) py=$OPTARG
		   py_what=${!OPTIND:?-p PYTHON WHAT}
		   OPTIND=$((OPTIND + 1)) ;;
		c) check=$OPTARG ;;
		*) echo "mdgpu_gpu_setup: bad option" >&2; exit 2 ;;
		esac
	done
	shift $((OPTIND - 1))
	name=$1
	shift
	TOP=$PWD
	B=$TOP/build
	OUT=${OUT:-/tmp/mdgpu-$name}
	mkdir -p "$OUT"
	# shellcheck disable=SC2034  # the callers' nvcc
	NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
	CUDA_INC=/usr/local/cuda/include
	[ -f "$CUDA_INC/cuda.h" ] ||
		CUDA_INC=/usr/local/cuda/targets/x86_64-linux/include
	if [ -n "$need_gpu" ] && ! nvidia-smi -L >/dev/null 2>&1; then
		echo "SKIPPED: no GPU (nvidia-smi -L failed)"
		exit 0
	fi
	if [ -n "$py" ] && ! python3 -c "$py" 2>/dev/null; then
		echo "SKIPPED: python3 cannot import $py_what"
		exit 0
	fi
	[ -z "$check" ] || "$check"
	# shellcheck source=tests/gpu/seccomp-deps.sh
	. "$TOP/tests/gpu/seccomp-deps.sh"
	TMP=$(mktemp -d "/tmp/mdgpu-$name.XXXXXX")
	PIDS=()
	trap mdgpu_gpu_cleanup EXIT
	for t in "$@"; do
		targets+=("$B/$t")
	done
	mdgpu_gpu_build "$B/mdgpud" "$B/mdgpud-worker" \
		"$B/libcuda/libcuda.so.1" "${targets[@]}" || exit 1
}

# The EXIT trap mdgpu_gpu_setup sets.
mdgpu_gpu_cleanup() {
	local p

	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	mdgpu_daemon_stop
	rm -rf "$TMP"
}

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
	mkdir -p "$dir"
	# A socket left by an earlier daemon would pass for this one's: it
	# goes first.  (Comparing times cannot tell them apart: file times
	# move in clock ticks, and a daemon can bind within the tick in
	# which it was started.)
	rm -f "$MDGPU_DAEMON_SOCK"
	"$B/mdgpud" -o backend=cuda -o transport=socket \
		-o "socket_path=$MDGPU_DAEMON_SOCK" \
		-o "admin_socket_path=$MDGPU_DAEMON_ADMIN" "$@" \
		2>"$OUT/mdgpud.log" &
	MDGPU_DAEMON_PID=$!
	for _ in $(seq "$MDGPU_DAEMON_WAIT_STEPS"); do
		grep -q 'dispatcher running' "$OUT/mdgpud.log" && return 0
		[ -S "$MDGPU_DAEMON_SOCK" ] && return 0
		kill -0 "$MDGPU_DAEMON_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "FAIL: no daemon"
	cat "$OUT/mdgpud.log"
	return 1
}

mdgpu_wait_ready() {
	for _ in $(seq 600); do
		grep -qx ready "$OUT/$1.out" && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	echo "FAIL: tenant $1 did not get ready:"
	cat "$OUT/$1.out"
	tail -5 "$OUT/$1.err"
	return 1
}

mdgpu_spin_build() {
	local link=(-lcuda)

	[ -z "${1:-}" ] || link=(-L/usr/local/cuda/lib64/stubs -lcuda)
	"$NVCC" -ptx -arch=sm_90 -o "$B/spin.ptx" tests/gpu/libcuda/spin.cu &&
		gcc -std=c11 -O2 -Wall -Wextra -Werror -I"$CUDA_INC" \
			tests/gpu/libcuda/spin_tenant.c -o "$B/spin_tenant" \
			"${link[@]}"
}

mdgpu_daemon_stop() {
	[ -n "$MDGPU_DAEMON_PID" ] || return 0
	kill "$MDGPU_DAEMON_PID" 2>/dev/null && wait "$MDGPU_DAEMON_PID" 2>/dev/null
	MDGPU_DAEMON_PID=
}
