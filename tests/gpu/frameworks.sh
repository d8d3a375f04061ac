#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# On the GPU machine: PyTorch and CuPy, unmodified, on NVIDIA's
# libcuda.so.1 and on mdgpu's (mdgpud, cuda backend, socket transport).
# mdgpu's libnvidia-ml.so.1 stands in for NVIDIA's too.  Each probe
# (tests/gpu/frameworks/*_probe.py) prints one "ok"/"FAIL"
# line per step with its result checked against the CPU; the steps are
# listed side by side.  libcuda's log (MDGPU_CUDA_LOG=1: every entry
# point or private table slot it does not implement) is kept per probe.
#   OUT=dir tests/gpu/frameworks.sh [torch] [cupy]     (after make)
# Without a GPU, or without the framework, it says so and skips.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/gpu/lib-daemon.sh
. tests/gpu/lib-daemon.sh
mdgpu_gpu_setup frameworks nvml/libnvidia-ml.so.1
probes=${*:-torch cupy}
TYPE=${MDGPU_TYPE:-4g}
QUOTA=$(( $(sed -n "s/^MDGPU_TYPE([0-9]*, *\"$TYPE\", *\([0-9]*\),.*/\1/p" \
	mdev-types/mdgpu-types.def) << 20 ))
status=0
mdgpu_daemon_start "$TMP" -o host_mib_max=4096 -o log_level=info \
	-o "worker_sandbox=${MDGPU_SANDBOX:-best-effort}" || exit 1

for p in $probes; do
	py=tests/gpu/frameworks/${p}_probe.py
	if ! python3 -c "import $p" 2>/dev/null; then
		echo "SKIPPED $p: python3 cannot import $p"
		continue
	fi
	timeout 600 python3 "$py" 0 >"$OUT/$p.native" 2>"$OUT/$p.native.err"
	rn=$?
	timeout 600 env LD_LIBRARY_PATH="$B/libcuda:$B/nvml" \
		MDGPU_SOCKET="$MDGPU_DAEMON_SOCK" MDGPU_TYPE="$TYPE" \
		MDGPU_HOST_MIB="${MDGPU_HOST_MIB:-1024}" MDGPU_CUDA_LOG=1 \
		python3 "$py" "$QUOTA" >"$OUT/$p.mdgpu" 2>"$OUT/$p.mdgpu.err"
	rm=$?
	echo "== $p (type $TYPE, quota $((QUOTA >> 20)) MiB): exit native $rn, mdgpu $rm"
	paste -d'|' <(cut -c1-70 "$OUT/$p.native") <(cut -c1-110 "$OUT/$p.mdgpu") |
		sed 's/|/  ||  /'
	echo "-- $p: libcuda log (unique lines, first 40)"
	grep -a 'mdgpu\|libcuda' "$OUT/$p.mdgpu.err" | sort | uniq -c |
		sort -rn | head -40
	[ "$rm" = 0 ] || status=1
done
echo "== frameworks.sh: exit $status"
exit $status
