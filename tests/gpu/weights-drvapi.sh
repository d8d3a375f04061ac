#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# On the GPU machine: two tenants running the same unmodified driver-API
# program (tests/gpu/libcuda/spin_tenant.c: ~1 ms kernels, launched
# asynchronously for a fixed wall time) side by side, first natively
# (NVIDIA's libcuda.so.1: the GPU time-slices the two contexts itself,
# about 1:1), then on mdgpu's libcuda.so.1 as two vGPUs of one mdgpud
# (cuda backend, socket transport) whose weights are set to 1 and 3
# through the admin socket (build/mdgpuctl).  PASS if the GPU time the
# daemon charged each vGPU (mdgpuctl list, gpu_ns, over the middle of the
# run) and the kernels each tenant completed are both 3:1, within 15 %.
#   OUT=dir DURATION=10 tests/gpu/weights-drvapi.sh     (after make)
# Without a GPU it says so and exits 0.  MDGPU_FAKE_CUDA=DIR (a directory
# holding CI's fake libcuda.so.1, build/cuda-fake) runs the mdgpu half
# without a GPU, mdgpud's workers on the fake: a check of the script and
# the program, not of the GPU's scheduling.
set -u
cd "$(dirname "$0")/../.." || exit 1
DURATION=${DURATION:-10}
TYPE=${MDGPU_TYPE:-1g}
FAKE=${MDGPU_FAKE_CUDA:-}
# The weights and how far the measured ratio may be from theirs.
W_A=1
W_B=3
TOLERANCE=0.15

# shellcheck disable=SC2317  # called by mdgpu_gpu_setup
check_duration() {
	case $DURATION in
	''|*[!0-9]*) echo "DURATION: whole seconds, at least 4"; exit 2 ;;
	esac
	[ "$DURATION" -ge 4 ] || { echo "DURATION: at least 4 s"; exit 2; }
}

# shellcheck source=tests/gpu/lib-daemon.sh
. tests/gpu/lib-daemon.sh
mdgpu_gpu_setup ${FAKE:+-n} -c check_duration weights mdgpuctl
status=0
mdgpu_spin_build "$FAKE" || exit 1

# tenant NAME GOFILE [VAR=value...]: spin_tenant in the background with
# that environment, its stdout in $OUT/NAME.out, stderr in $OUT/NAME.err.
tenant() {
	local name=$1 go=$2

	shift 2
	env "$@" "$B/spin_tenant" "$B/spin.ptx" "$DURATION" "$go" \
		>"$OUT/$name.out" 2>"$OUT/$name.err" &
	PIDS+=($!)
}

# wait_ready NAME: until the tenant started last has printed "ready".
wait_ready() {
	mdgpu_wait_ready "$1" "${PIDS[-1]}"
}

# finish NAME...: wait for the tenants; each must exit 0 having printed
# "kernels N".
finish() {
	local ok=0 p name

	for p in "${PIDS[@]}"; do
		wait "$p" || ok=1
	done
	PIDS=()
	for name in "$@"; do
		grep -q '^kernels [0-9]' "$OUT/$name.out" || ok=1
	done
	if [ "$ok" != 0 ]; then
		echo "FAIL: a tenant failed:"
		for name in "$@"; do
			sed "s/^/  $name: /" "$OUT/$name.out"
			tail -3 "$OUT/$name.err" | sed "s/^/  $name: /"
		done
	fi
	return $ok
}

kernels() {
	sed -n 's/^kernels //p' "$OUT/$1.out"
}

# gpu_ns ID: the vGPU's gpu_ns in the daemon's list now.
gpu_ns() {
	"$B/mdgpuctl" -s "$MDGPU_DAEMON_ADMIN" list |
		awk -v id="$1" '{
			delete kv
			for (i = 1; i <= NF; i++) {
				split($i, p, "=")
				kv[p[1]] = p[2]
			}
			if (kv["id"] == id) print kv["gpu_ns"]
		}'
}

if [ -z "$FAKE" ]; then
	echo "== native: two tenants side by side, ${DURATION} s"
	go=$TMP/go.native
	tenant native-a "$go" && wait_ready native-a &&
	tenant native-b "$go" && wait_ready native-b || exit 1
	touch "$go"
	if finish native-a native-b; then
		ka=$(kernels native-a)
		kb=$(kernels native-b)
		awk -v a="$ka" -v b="$kb" 'BEGIN {
			printf "   kernels %d / %d, shares %.1f%% / %.1f%%, " \
			       "ratio b/a %.3f (no weights: the GPU " \
			       "time-slices them itself)\n", a, b,
			       100 * a / (a + b), 100 * b / (a + b),
			       a ? b / a : 0 }'
	else
		status=1
	fi
fi

echo "== mdgpu: two vGPUs (type $TYPE), weights $W_A:$W_B, ${DURATION} s"
if [ -n "$FAKE" ]; then
	# The fake's 3 GiB hold two 1 GiB vGPUs only without the H100's
	# reserve for the driver and context overhead.
	LD_LIBRARY_PATH=$FAKE mdgpu_daemon_start "$TMP" -o log_level=info \
		-o host_mib_max=256 -o cuda_fb_reserve_mib=1 \
		-o ctx_overhead_mib=1 \
		-o "worker_sandbox=${MDGPU_SANDBOX:-best-effort}" || exit 1
else
	mdgpu_daemon_start "$TMP" -o log_level=info -o host_mib_max=256 \
		-o "worker_sandbox=${MDGPU_SANDBOX:-best-effort}" || exit 1
fi
go=$TMP/go.mdgpu
mdenv=(LD_LIBRARY_PATH="$B/libcuda" MDGPU_SOCKET="$MDGPU_DAEMON_SOCK"
       MDGPU_TYPE="$TYPE" MDGPU_HOST_MIB=16 MDGPU_CUDA_LOG=1)
tenant mdgpu-a "$go" "${mdenv[@]}" && wait_ready mdgpu-a &&
tenant mdgpu-b "$go" "${mdenv[@]}" && wait_ready mdgpu-b || exit 1
# Each tenant's vGPU, from libcuda's log of what cuInit opened.
id_a=$(sed -n 's/.*cuInit: vGPU \([0-9]*\) over .*/\1/p' "$OUT/mdgpu-a.err")
id_b=$(sed -n 's/.*cuInit: vGPU \([0-9]*\) over .*/\1/p' "$OUT/mdgpu-b.err")
if [ -z "$id_a" ] || [ -z "$id_b" ] || [ "$id_a" = "$id_b" ]; then
	echo "FAIL: no vGPU ids in libcuda's logs (a '$id_a', b '$id_b')"
	exit 1
fi
if ! "$B/mdgpuctl" -s "$MDGPU_DAEMON_ADMIN" set "$id_a" weight "$W_A" ||
   ! "$B/mdgpuctl" -s "$MDGPU_DAEMON_ADMIN" set "$id_b" weight "$W_B"; then
	echo "FAIL: mdgpuctl set weight"
	exit 1
fi
touch "$go"
# GPU time over the middle of the run, both tenants backlogged throughout:
# from 1 s after the start to 1 s before the end.
sleep 1
a0=$(gpu_ns "$id_a")
b0=$(gpu_ns "$id_b")
sleep $((DURATION - 2))
a1=$(gpu_ns "$id_a")
b1=$(gpu_ns "$id_b")
"$B/mdgpuctl" -s "$MDGPU_DAEMON_ADMIN" list >"$OUT/mdgpu.list"
if ! finish mdgpu-a mdgpu-b; then
	status=1
elif [ -z "$a0" ] || [ -z "$a1" ] || [ -z "$b0" ] || [ -z "$b1" ]; then
	echo "FAIL: gpu_ns of vGPU $id_a or $id_b missing from mdgpuctl list"
	status=1
else
	ka=$(kernels mdgpu-a)
	kb=$(kernels mdgpu-b)
	awk -v ga=$((a1 - a0)) -v gb=$((b1 - b0)) -v ka="$ka" -v kb="$kb" \
	    -v wa="$W_A" -v wb="$W_B" -v tol="$TOLERANCE" -v ia="$id_a" \
	    -v ib="$id_b" -v win=$((DURATION - 2)) 'BEGIN {
		want = wb / wa
		rg = ga > 0 ? gb / ga : 0
		rk = ka > 0 ? kb / ka : 0
		printf "   vGPU %d weight %d: GPU time %.3f s (%.1f%%), " \
		       "kernels %d (%.1f%%)\n", ia, wa, ga / 1e9,
		       100 * ga / (ga + gb), ka, 100 * ka / (ka + kb)
		printf "   vGPU %d weight %d: GPU time %.3f s (%.1f%%), " \
		       "kernels %d (%.1f%%)\n", ib, wb, gb / 1e9,
		       100 * gb / (ga + gb), kb, 100 * kb / (ka + kb)
		printf "   (GPU time over %d s of the run; kernels over all " \
		       "of it)\n", win
		ok = 1
		if (rg < want * (1 - tol) || rg > want * (1 + tol)) ok = 0
		if (rk < want * (1 - tol) || rk > want * (1 + tol)) ok = 0
		printf "%s weights %d:%d: GPU time ratio %.3f, kernels " \
		       "ratio %.3f (want %.2f +- %d%%)\n", ok ? "PASS" : "FAIL",
		       wa, wb, rg, rk, want, tol * 100
		exit !ok }' || status=1
fi
echo "== weights-drvapi.sh: exit $status"
exit $status
