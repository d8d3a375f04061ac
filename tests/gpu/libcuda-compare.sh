#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# On the GPU machine: unmodified driver-API programs on NVIDIA's
# libcuda.so.1 and on mdgpu's (mdgpud, cuda backend, socket transport),
# outputs compared line by line ("info" lines may differ), then
# bench/libcuda/libcuda-bench.c native next to mdgpu in the same run.
#   OUT=dir tests/gpu/libcuda-compare.sh      (after make)
# Without a GPU it says so and exits 0.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/gpu/lib-daemon.sh
. tests/gpu/lib-daemon.sh
mdgpu_gpu_setup libcuda
status=0
"$NVCC" -ptx -arch=sm_90 -o "$B/drvtest.ptx" tests/gpu/libcuda/kernels.cu ||
	exit 1
# Device linking (linktest.c): a cubin made by nvcc -rdc=true and the
# toolkit's libcudadevrt.a as inputs of cuLink*.
"$NVCC" -arch=sm_90 -rdc=true -cubin -o "$B/link_rdc.cubin" \
	tests/gpu/libcuda/link_rdc.cu || exit 1
DEVRT=$(dirname "$(dirname "$NVCC")")/lib64/libcudadevrt.a
[ -f "$DEVRT" ] || DEVRT=/usr/local/cuda/targets/x86_64-linux/lib/libcudadevrt.a
"$NVCC" -ptx -arch=sm_90 -o "$B/spin.ptx" tests/gpu/libcuda/spin.cu || exit 1
# A runtime program (static cudart) whose kernels take pinned host
# pointers as the program holds them.
"$NVCC" -arch=sm_90 -o "$B/uva_host" tests/gpu/libcuda/uva_host.cu || exit 1
# Registered shared memory (NCCL's shm transport's calls) and private.
"$NVCC" -arch=sm_90 -o "$B/host_register" tests/gpu/libcuda/host_register.cu ||
	exit 1
"$NVCC" -arch=sm_90 -o "$B/host_fn_cost" tests/gpu/libcuda/host_fn_cost.cu ||
	exit 1
for p in drvtest linktest ptdstest; do
	gcc -std=c11 -O2 -Wall -Wextra -Werror -I"$CUDA_INC" \
		tests/gpu/libcuda/$p.c -o "$B/$p" -lcuda -pthread || exit 1
done
gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I"$CUDA_INC" \
	bench/libcuda/libcuda-bench.c -o "$B/libcuda-bench" -lcuda -lm || exit 1

mdgpu_daemon_start "$TMP" -o host_mib_max=1024 -o log_level=warn \
	-o "worker_sandbox=${MDGPU_SANDBOX:-best-effort}" || exit 1

mdgpu() {
	env LD_LIBRARY_PATH="$B/libcuda" MDGPU_SOCKET="$MDGPU_DAEMON_SOCK" \
		MDGPU_TYPE="${MDGPU_TYPE:-8g}" MDGPU_HOST_MIB="${MDGPU_HOST_MIB:-256}" \
		MDGPU_CUDA_LOG=1 "$@"
}

compare() {
	local name=$1; shift
	"$@" >"$OUT/$name.native" 2>&1
	local rn=$?
	mdgpu "$@" >"$OUT/$name.mdgpu" 2>"$OUT/$name.mdgpu.log"
	local rm=$?
	if diff <(grep -v '^info ' "$OUT/$name.native") \
		<(grep -v '^info ' "$OUT/$name.mdgpu") >"$OUT/$name.diff" &&
	   [ "$rn" = "$rm" ]; then
		echo "PASS $name ($(grep -vc '^info ' "$OUT/$name.native") lines" \
			"equal, exit $rn)"
	else
		echo "FAIL $name (exit native $rn, mdgpu $rm):"
		head -40 "$OUT/$name.diff"
		tail -5 "$OUT/$name.mdgpu.log"
		status=1
	fi
}

compare drvtest "$B/drvtest" "$B/drvtest.ptx"
compare drvtest-fault "$B/drvtest" "$B/drvtest.ptx" fault
compare linktest "$B/linktest" "$B/link_rdc.cubin" "$DEVRT"
# The per-thread default stream (nvcc --default-stream per-thread).
compare ptdstest "$B/ptdstest" "$B/spin.ptx"
# Unified addressing of pinned memory: kernels given host pointers.
compare uva_host "$B/uva_host"
# cudaHostRegister of shared memory: kernels, copies and memsets reach it.
compare host_register "$B/host_register"
# What host functions and registration cost: times, printed side by side.
echo "== host_fn_cost: native"
"$B/host_fn_cost"
echo "== host_fn_cost: mdgpu"
mdgpu "$B/host_fn_cost" 2>"$OUT/host_fn_cost.mdgpu.log"
# Two tenants: one faults, the other's results are unaffected.
( mdgpu "$B/drvtest" "$B/drvtest.ptx" >"$OUT/neighbour.mdgpu" \
	2>"$OUT/neighbour.mdgpu.log" ) &
npid=$!
mdgpu "$B/drvtest" "$B/drvtest.ptx" fault >/dev/null 2>&1
wait $npid
if diff <(grep -v '^info ' "$OUT/drvtest.native") \
	<(grep -v '^info ' "$OUT/neighbour.mdgpu") >/dev/null; then
	echo "PASS fault-isolation (the neighbour's results equal native)"
else
	echo "FAIL fault-isolation"; status=1
fi

echo "== libcuda-bench (native, mdgpu, native, mdgpu)"
for _ in 1 2; do
	"$B/libcuda-bench" "$B/drvtest.ptx" native >>"$OUT/bench.native" || status=1
	mdgpu "$B/libcuda-bench" "$B/drvtest.ptx" mdgpu >>"$OUT/bench.mdgpu" \
		2>>"$OUT/bench.mdgpu.log" || status=1
done
awk -f - "$OUT/bench.native" "$OUT/bench.mdgpu" <<'AWK' | tee "$OUT/bench.txt"
# Lines "<side> <figure> <value> <unit> <better>"; medians per side.
{ v[$1 "," $2] = v[$1 "," $2] " " $3; unit[$2] = $4; better[$2] = $5; fig[$2] = 1 }
function med(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	for (f in fig) {
		n = med(v["native," f]); m = med(v["mdgpu," f])
		r = better[f] == "lower" ? (m > 0 ? m / n : 0) : (n > 0 ? m / n : 0)
		printf "%-14s native %10.3f %s  mdgpu %10.3f %s  ratio %.3f (%s is better)\n",
			f, n, unit[f], m, unit[f], r, better[f]
	}
}
AWK
echo "== libcuda-compare.sh: exit $status"
exit $status
