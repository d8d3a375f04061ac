#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# One-shot run on the GPU machine: build what the benchmark needs, record
# the machine, run mdgpu-bench (native CUDA and mdgpu in the same run) and
# leave everything under $OUT (default build/bench/out):
#   mdgpu-bench.json  results      mdgpu-bench.log  the program's output
#   mdgpud.log        the daemon   machine.txt      GPU, driver, CPU
# usage: [MDGPU_COMMIT=<rev>] bench/run-gpu.sh [mdgpu-bench options...]
# MDGPU_COMMIT: the commit the caller sent.  The device tool copies the
# working tree, and its copy of .git may lag behind: the caller's word
# comes first; `git log` here is recorded as what the copy's .git says.
set -u
cd "$(dirname "$0")/.." || exit 1
# mdgpud-worker links libseccomp statically: its headers and archive, as
# the other GPU scripts find them.
TOP=$(pwd)
# shellcheck source=tests/gpu/seccomp-deps.sh
. "$TOP/tests/gpu/seccomp-deps.sh"
out=${OUT:-build/bench/out}
mkdir -p "$out"
{
	date -u
	uname -a
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,compute_mode --format=csv
	nproc
	grep -m1 'model name' /proc/cpuinfo
	[ -z "${MDGPU_COMMIT:-}" ] || echo "commit $MDGPU_COMMIT (from the caller)"
	git log -1 --format='.git here: commit %H %s' 2>/dev/null
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
# The project's flags (-Werror) first.  That machine's compiler is newer
# than CI's: if it finds new warnings, say so and build again without
# -Werror, so that the measurement still happens (and the warnings are in
# build.log for whoever owns them).
if ! make -j"$(nproc)" bench-build daemon >"$out/build.log" 2>&1; then
	grep -E 'error|warning' "$out/build.log" | grep -v '^[^ ]*gcc ' | head -20
	echo "run-gpu: strict build FAILED (above); building without -Werror"
	if ! make -j"$(nproc)" bench-build daemon CFLAGS_COMMON="-std=c11 \
		-D_GNU_SOURCE -Wall -Wextra -g -O2 -I$PWD/include -I$PWD" \
		>>"$out/build.log" 2>&1; then
		tail -30 "$out/build.log"
		echo "run-gpu: build FAILED"
		[ -x build/mdgpu-bench ] || exit 1
		echo "run-gpu: mdgpu-bench built; the daemon may be missing"
	fi
fi
echo "run-gpu: built; running mdgpu-bench $*"
timeout -k 15 "${BENCH_TIMEOUT:-540}" build/mdgpu-bench \
	--json "$out/mdgpu-bench.json" --daemon-log "$out/mdgpud.log" "$@" \
	>"$out/mdgpu-bench.log" 2>&1
rc=$?
cat "$out/mdgpu-bench.log"
echo "run-gpu: mdgpu-bench exit $rc"
exit $rc
