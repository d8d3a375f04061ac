#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Everything the cuda backend needs a GPU for, in one go (run from the
# repository root on the GPU machine):
#   1. build (make: libraries, mdgpud-worker, the sanitized cuda tests),
#   2. the cuda tests, their workers sandboxed (Documentation/daemon.md,
#      "Worker sandbox"; tests/gpu/sandbox-on-gpu.sh measures it)
#      (tests/test_cuda_api, tests/test_cuda_backend, the
#      latter holding the forged-pointer isolation test), and the daemon's
#      socket-transport integration tests (tests/test_socket) on the cuda
#      backend (MDGPU_TEST_BACKEND=cuda),
#   3. the micro-benchmark tests/gpu/bench_cuda_backend.c: backend ops
#      next to native driver-API calls in the same process run.
#
# Logs go to $OUT (default /tmp/mdgpu-gpu) as build.log, tests.log,
# bench.log.  cmocka and libseccomp from the system or, without their
# headers, from .deps/*/*.deb (tests/gpu/deb-deps.sh).
set -u
set -o pipefail
cd "$(dirname "$0")/../.." || exit 2
TOP=$PWD
OUT=${OUT:-/tmp/mdgpu-gpu}
mkdir -p "$OUT"
JOBS=$(nproc 2>/dev/null || echo 4)
status=0

# shellcheck source=tests/gpu/deb-deps.sh
. "$TOP/tests/gpu/deb-deps.sh"
mdgpu_deb_deps cmocka cmocka.h 'libcmocka.so*' cmocka run
# shellcheck source=tests/gpu/seccomp-deps.sh
. "$TOP/tests/gpu/seccomp-deps.sh"

echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version \
	--format=csv,noheader 2>/dev/null)" | tee "$OUT/tests.log"

B=$TOP/build
LIBA=$B/libmdgpud.a
make -j"$JOBS" "$B/mdgpud-worker" "$LIBA" \
	"$B/daemon-san/tests/test_cuda_api" \
	"$B/daemon-san/tests/test_cuda_backend" \
	"$B/daemon-san/tests/test_socket" \
	"$B/daemon-san/tests/test_core_hang" \
	"$B/daemon-san/tests/test_limits" >"$OUT/build.log" 2>&1 || {
	tail -30 "$OUT/build.log"; exit 1; }

export MDGPUD_WORKER="$B/mdgpud-worker"
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ -x "$NVCC" ] && "$NVCC" -cubin -arch=sm_90 -o "$B/scale_add.cubin" \
	tests/gpu/scale_add.cu >>"$OUT/build.log" 2>&1; then
	export MDGPUD_TEST_CUBIN="$B/scale_add.cubin"
fi
for t in test_cuda_api test_cuda_backend; do
	echo "== $t" | tee -a "$OUT/tests.log"
	timeout -k 5 240 "$B/daemon-san/tests/$t" 2>&1 | tee -a "$OUT/tests.log" ||
		status=1
done
echo "== test_limits (real driver: a context's device-memory overhead)" |
	tee -a "$OUT/tests.log"
MDGPUD_TEST_REAL_CUDA=1 timeout -k 5 120 "$B/daemon-san/tests/test_limits" \
	2>&1 | tee -a "$OUT/tests.log" || status=1
echo "== test_core_hang (real driver)" | tee -a "$OUT/tests.log"
MDGPUD_TEST_REAL_CUDA=1 timeout -k 5 120 "$B/daemon-san/tests/test_core_hang" \
	2>&1 | tee -a "$OUT/tests.log" || status=1
if [ -x "$B/daemon-san/tests/test_socket" ]; then
	echo "== test_socket (cuda backend)" | tee -a "$OUT/tests.log"
	MDGPU_TEST_BACKEND=cuda timeout -k 5 300 \
		"$B/daemon-san/tests/test_socket" 2>&1 | tee -a "$OUT/tests.log" ||
		status=1
fi

echo "== bench_cuda_backend" | tee "$OUT/bench.log"
if gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -I"$TOP/include" \
	-I"$TOP" -I"$TOP/userspace-daemon/include" \
	tests/gpu/bench_cuda_backend.c \
	userspace-daemon/backends/cuda/worker/cuda_api.c "$LIBA" -ldl -lpthread -lrt \
	-o "$B/bench_cuda_backend" 2>&1 | tee -a "$OUT/bench.log"; then
	timeout -k 5 180 "$B/bench_cuda_backend" "$B/mdgpud-worker" 2>&1 |
		tee -a "$OUT/bench.log" || status=1
else
	status=1
fi
echo "== run-on-gpu.sh: exit $status"
exit $status
