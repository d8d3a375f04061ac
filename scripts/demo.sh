#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# scripts/demo.sh (make demo): two vGPUs of different types (1g, 4g) with
# weights 1 and 3 run the same workload at once; a table per second shows
# per vGPU type, weight, quota, memory used, GPU time and GPU-time shares,
# then a weight is changed live in sysfs and the shares move.  The body is
# tests/e2e/demo-run.sh; this script picks where it runs:
#
#   host: a CUDA GPU (nvidia-smi) AND a host kernel that loads modules (with
#         its headers): mdgpu.ko is built and loaded on the host, mdgpud runs
#         the cuda backend; each vGPU's worker maps the aperture the guest
#         sees through an mmap-only file of the module's pages (zero-copy,
#         Documentation/e2e.md "The cuda backend on the kernel transport").
#         NOT run yet: no machine here both loads modules and has a GPU.
#   vm:   otherwise: a QEMU TCG guest booting Debian's 6.12 kernel
#         (tests/e2e/run-e2e.sh RELEASE demo), sim backend with real-time
#         kernels.  Under a minute here.
#
# MDGPU_DEMO_PATH=vm|host forces a path.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
rel=$(uname -r)

why=()
gpu=no
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	gpu=yes
else
	why+=("no CUDA GPU (nvidia-smi)")
fi
mods=no
if [ -r /proc/modules ] && [ "$(cat /proc/sys/kernel/modules_disabled 2>/dev/null || echo 1)" = 0 ] &&
   [ -d "/lib/modules/$rel/build" ] && [ "$(id -u)" = 0 ]; then
	mods=yes
else
	why+=("host kernel $rel cannot load modules (or no headers, or not root)")
fi
path=${MDGPU_DEMO_PATH:-}
if [ -z "$path" ]; then
	if [ $gpu = yes ] && [ $mods = yes ]; then path=host; else path=vm; fi
fi

if [ "$path" = vm ]; then
	echo "demo: path: QEMU TCG guest with Debian's 6.12 kernel, sim backend"
	[ ${#why[@]} -eq 0 ] || echo "demo: (host path not taken: $(IFS=';'; echo "${why[*]}"))"
	grel=$("$top/tests/vm/kver-release.sh" 6.12)
	exec env E2E_TIMEOUT="${E2E_TIMEOUT:-170}" "$top/tests/e2e/run-e2e.sh" "$grel" demo
fi

echo "demo: path: this host ($rel), CUDA GPU, mdgpu.ko loaded here, cuda backend"
make -C "$top" --no-print-directory modules KVER="$rel" daemon e2e-bins
for m in vfio vfio_iommu_type1 mdev; do modprobe "$m"; done
insmod "$BUILD/kmod-$rel/mdgpu.ko"
log=$(mktemp /tmp/mdgpud-demo.XXXXXX.log)
"$BUILD/mdgpud" -o backend=cuda -o transport=kernel -o log_level=info \
	>"$log" 2>&1 &
dpid=$!
cleanup() {
	kill -TERM "$dpid" 2>/dev/null || true
	wait "$dpid" 2>/dev/null || true
	sleep 0.5
	rmmod mdgpu 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 100); do
	grep -q 'dispatcher running' "$log" && break
	kill -0 "$dpid" 2>/dev/null || { cat "$log"; exit 1; }
	sleep 0.1
done
parent=$(sed -n 's/.* as mdev parent \([^ ]*\) .*/\1/p' "$log" | tail -n1)
MDGPU_DEMO_PATH="CUDA GPU on this host ($(nvidia-smi -L | head -n1))" \
	"$top/tests/e2e/demo-run.sh" "$parent" "$log" "$dpid" \
	"$BUILD/e2e/mdgpu-e2e-client"
