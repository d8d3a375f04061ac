#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# On the GPU machine: cuda-python's driver bindings (cuda.bindings.driver),
# unmodified, on NVIDIA's libcuda.so.1 and on mdgpu's (mdgpud, cuda
# backend, socket transport).  tests/gpu/frameworks/cuda_python_probe.py
# loads tests/gpu/libcuda/cuda_python.cu's PTX, launches its kernels with
# kernelParams as the cuda-python examples build them and checks every
# element against NumPy; it prints one PASS/FAIL line per step.  Each side
# runs twice: cuda-python's default, and with
# CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1, which makes cuda-python
# resolve the per-thread-stream variants through cuGetProcAddress.  The
# steps are listed side by side; libcuda's log (MDGPU_CUDA_LOG=1: the
# lookups cuda-python made that mdgpu's libcuda does not answer, and
# entry points it does not implement) is summarised per run.
#   OUT=dir tests/gpu/cuda-python.sh      (after make)
# Without a GPU, or without cuda-python, it says so and exits 0.
set -u
cd "$(dirname "$0")/../.." || exit 1
PROBE=tests/gpu/frameworks/cuda_python_probe.py
# shellcheck source=tests/gpu/lib-daemon.sh
. tests/gpu/lib-daemon.sh
mdgpu_gpu_setup -p 'import numpy
try:
    from cuda.bindings import driver
except ImportError:
    from cuda import cuda' 'cuda-python (cuda.bindings) and numpy' cuda-python
status=0
"$NVCC" -ptx -arch=sm_90 -o "$B/cuda_python.ptx" \
	tests/gpu/libcuda/cuda_python.cu || exit 1
echo "== cuda-python $(python3 -c 'import importlib.metadata as m
for p in ("cuda-bindings", "cuda-python"):
    try:
        print(p, m.version(p)); break
    except m.PackageNotFoundError:
        pass' 2>/dev/null), numpy $(python3 -c 'import numpy
print(numpy.__version__)')"

# probe NAME [VAR=value...]: the probe with that environment, its stdout in
# $OUT/NAME, stderr in $OUT/NAME.err; its exit status.
probe() {
	local name=$1

	shift
	timeout 120 env "$@" python3 "$PROBE" "$B/cuda_python.ptx" \
		>"$OUT/$name" 2>"$OUT/$name.err"
}

for mode in default ptds; do
	menv=()
	[ "$mode" = ptds ] &&
		menv=(CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1)
	probe "native.$mode" "${menv[@]}"
	echo "native.$mode $?" >>"$TMP/exits"
done

mdgpu_daemon_start "$TMP" -o host_mib_max=1024 -o log_level=warn \
	-o "worker_sandbox=${MDGPU_SANDBOX:-best-effort}" || exit 1
for mode in default ptds; do
	menv=(LD_LIBRARY_PATH="$B/libcuda" MDGPU_SOCKET="$MDGPU_DAEMON_SOCK"
	      MDGPU_TYPE="${MDGPU_TYPE:-4g}" MDGPU_HOST_MIB=64 MDGPU_CUDA_LOG=1)
	[ "$mode" = ptds ] &&
		menv+=(CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1)
	probe "mdgpu.$mode" "${menv[@]}"
	echo "mdgpu.$mode $?" >>"$TMP/exits"
done

for mode in default ptds; do
	rn=$(sed -n "s/^native.$mode //p" "$TMP/exits")
	rm=$(sed -n "s/^mdgpu.$mode //p" "$TMP/exits")
	echo "== $mode streams: exit native $rn, mdgpu $rm"
	paste -d'|' <(cut -c1-70 "$OUT/native.$mode") \
		<(cut -c1-100 "$OUT/mdgpu.$mode") | sed 's/|/  ||  /'
	# Every run must pass every step: natively too, or the probe (or the
	# machine) is wrong and mdgpu's result means nothing.
	[ "$rn" = 0 ] || { echo "FAIL native.$mode"; status=1; }
	[ "$rm" = 0 ] || { echo "FAIL mdgpu.$mode"; status=1; }
	echo "-- mdgpu.$mode: libcuda's log: $(grep -c 'cuGetProcAddress(' \
		"$OUT/mdgpu.$mode.err") lookups unanswered (in $OUT/mdgpu.$mode.err);" \
		"other lines (unique, first 20):"
	grep -a 'libcuda' "$OUT/mdgpu.$mode.err" | grep -v 'cuGetProcAddress(' |
		sort | uniq -c | sort -rn | head -20
done
echo "== cuda-python.sh: exit $status"
exit $status
