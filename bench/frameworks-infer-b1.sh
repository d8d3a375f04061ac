#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# On the GPU machine: ResNet-50 batch-1 inference natively and on mdgpu,
# alternately twice (bench/frameworks/infer_b1.py), then the two sides'
# logits compared (same computation: small differences from cuDNN's
# per-process algorithm choices, the same arg-max).  Explains the
# resnet50_infer_b1 figure of bench/frameworks.sh (Documentation/
# benchmarks.md).  Without a GPU or PyTorch it says so and exits 0.
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/gpu/lib-daemon.sh
. tests/gpu/lib-daemon.sh
mdgpu_gpu_setup -p 'import torch, torchvision' 'torch and torchvision' \
	frameworks-infer-b1
mdgpu_daemon_start "$TMP" -o host_mib_max=4096 || exit 1
for i in 1 2; do
	python3 bench/frameworks/infer_b1.py "$TMP/native.pt" native
	LD_LIBRARY_PATH="$B/libcuda" MDGPU_SOCKET="$MDGPU_DAEMON_SOCK" \
		MDGPU_TYPE=8g MDGPU_HOST_MIB=1024 \
		python3 bench/frameworks/infer_b1.py "$TMP/mdgpu.pt" mdgpu
done 2>&1 | grep -v 'Warning\|CUPTI\|cupti'
python3 - "$TMP/native.pt" "$TMP/mdgpu.pt" <<'PY'
import sys
import torch
a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])
same = a.argmax().item() == b.argmax().item()
print(f"logits: max abs difference {(a - b).abs().max().item():.4g} "
      f"of values up to {a.abs().max().item():.4g}; arg-max "
      f"{'equal' if same else 'DIFFERS'}")
sys.exit(0 if same else 1)
PY
