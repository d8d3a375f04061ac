#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# One-shot run on the GPU machine: build what the benchmark needs, record
# the machine, run mdgpu-bench (native CUDA and mdgpu in the same run) and
# leave everything under $OUT (default build/bench/out):
#   mdgpu-bench.json  results      mdgpu-bench.log  the program's output
#   mdgpud.log        the daemon   machine.txt      GPU, driver, CPU
# usage: bench/run-gpu.sh [mdgpu-bench options...]
set -u
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-build/bench/out}
mkdir -p "$out"
{
	date -u
	uname -a
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,compute_mode --format=csv
	nproc
	grep -m1 'model name' /proc/cpuinfo
	git log -1 --format='commit %H %s' 2>/dev/null
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"
if ! make -j"$(nproc)" bench-build daemon >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log"
	echo "run-gpu: build FAILED"
	exit 1
fi
echo "run-gpu: built; running mdgpu-bench $*"
timeout -k 15 "${BENCH_TIMEOUT:-540}" build/mdgpu-bench \
	--json "$out/mdgpu-bench.json" --daemon-log "$out/mdgpud.log" "$@" \
	>"$out/mdgpu-bench.log" 2>&1
rc=$?
cat "$out/mdgpu-bench.log"
echo "run-gpu: mdgpu-bench exit $rc"
exit $rc
