#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# On the GPU machine (Documentation/spatial.md): two tenants of
# tests/gpu/spatial/tenant.cu, each launching 1 ms kernels of BLOCKS x 1024
# threads (66: half of the H100's SMs), for DURATION seconds:
#   1. natively, time-sliced by the GPU;
#   2. on mdgpu as two time-sliced vGPUs (type 1g, spatial = none);
#   3. natively as two MPS clients of 50% of the SMs each (when
#      nvidia-cuda-mps-control is found): MPS's own bound on 4;
#   4. on mdgpu as two spatial vGPUs (type half, 50% SMs, spatial = mps);
# printing each aggregate kernels/s, the ratio 4 / 2 (target >= 1.8) and
# 4 / 3.
# Then, between the two spatial vGPUs: a forged pointer (B reads A's
# buffer address: must fail in B, A's checks untouched) and a fault in B
# (what A sees: under MPS, expected to lose its context too).
#   OUT=dir DURATION=5 BLOCKS=66 tests/gpu/spatial.sh   (after make)
# SPATIAL_OPTS: more -o options for the spatial daemon (sandbox variants);
# SPATIAL_ONLY=1 skips the native and time-sliced pairs.
# Without a GPU it says so and exits 0.
set -u
cd "$(dirname "$0")/../.." || exit 1
DURATION=${DURATION:-5}
BLOCKS=${BLOCKS:-66}
# shellcheck source=tests/gpu/lib-daemon.sh
. tests/gpu/lib-daemon.sh
mdgpu_gpu_setup spatial
status=0
"$NVCC" -arch=sm_90 -O2 -o "$B/spatial-tenant" tests/gpu/spatial/tenant.cu ||
	exit 1

# pair NAME [VAR=value...]: two spin tenants started together; prints
# and returns (in RATE) their aggregate kernels/s.
pair() {
	local name=$1 go=$TMP/go.$1 a b

	shift
	rm -f "$go"
	for t in a b; do
		env "$@" "$B/spatial-tenant" spin "$BLOCKS" "$DURATION" "$go" \
			>"$OUT/$name-$t.out" 2>"$OUT/$name-$t.err" &
		PIDS+=($!)
	done
	for t in a b; do
		for _ in $(seq 600); do
			grep -qx ready "$OUT/$name-$t.out" && break
			sleep 0.05
		done
	done
	touch "$go"
	# Which contexts the GPU holds mid-run: MPS clients show as type M+C.
	(sleep 1; nvidia-smi >"$OUT/$name-nvidia-smi.txt" 2>&1) &
	wait "${PIDS[@]}"
	PIDS=()
	a=$(awk '/^kernels/ {k=$2} /^seconds/ {print k / $2}' "$OUT/$name-a.out")
	b=$(awk '/^kernels/ {k=$2} /^seconds/ {print k / $2}' "$OUT/$name-b.out")
	RATE=$(awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN {print a + b}')
	echo "   $name: $a + $b = $RATE kernels/s"
}

mdenv() {
	echo LD_LIBRARY_PATH="$B/libcuda" MDGPU_SOCKET="$MDGPU_DAEMON_SOCK" \
	     MDGPU_TYPE="$1" MDGPU_HOST_MIB=16
}

native=0 sliced=0
if [ "${SPATIAL_ONLY:-0}" != 1 ]; then
echo "== native: two processes, time-sliced by the GPU"
pair native
native=$RATE

echo "== mdgpu: two time-sliced vGPUs (1g)"
mdgpu_daemon_start "$TMP/ts" -o log_level=info -o host_mib_max=256 \
	-o "worker_sandbox=${MDGPU_SANDBOX:-best-effort}" || exit 1
# shellcheck disable=SC2046
pair sliced $(mdenv 1g)
sliced=$RATE
mdgpu_daemon_stop
fi

# Native MPS: the same two tenants as MPS clients of 50% of the SMs each,
# with no mdgpu: the bound MPS itself sets on the spatial pair.
native_mps=0
MPS_CONTROL=$(command -v nvidia-cuda-mps-control)
if [ -n "$MPS_CONTROL" ]; then
	echo "== native MPS: two processes, MPS clients of 50% of the SMs each"
	mkdir -p "$TMP/nmps/pipe" "$TMP/nmps/log"
	export CUDA_MPS_PIPE_DIRECTORY=$TMP/nmps/pipe
	export CUDA_MPS_LOG_DIRECTORY=$TMP/nmps/log
	if "$MPS_CONTROL" -d; then
		pair native-mps CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
		native_mps=$RATE
		echo quit | "$MPS_CONTROL"
		# The control daemon exits once its server has.
		for _ in $(seq 100); do
			[ -S "$TMP/nmps/pipe/control" ] || break
			sleep 0.05
		done
	else
		echo "   (nvidia-cuda-mps-control -d failed: no native MPS pair)"
	fi
	unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi

echo "== mdgpu: two spatial vGPUs (half, 50% of the SMs, spatial = mps)"
# mps_dir lies in TMP (mktemp's 0700): the spatial workers' uid must be
# able to search it, or mdgpud refuses spatial vGPUs.
chmod 755 "$TMP"
# shellcheck disable=SC2086  # SPATIAL_OPTS: words on purpose
mdgpu_daemon_start "$TMP/sp" -o log_level=info -o host_mib_max=256 \
	-o spatial=mps -o "mps_dir=$TMP/mps" \
	-o "worker_sandbox=${MDGPU_SANDBOX:-best-effort}" \
	${SPATIAL_OPTS:-} || exit 1
# shellcheck disable=SC2046
pair spatial $(mdenv half)
ls -la "$TMP/mps/pipe" >"$OUT/mps-pipe.txt" 2>&1
spatial=$RATE
awk -v n="$native" -v t="$sliced" -v s="$spatial" 'BEGIN {
	printf "   spatial / time-sliced mdgpu %.2fx (target >= 1.8), " \
	       "spatial / native %.2fx\n", t ? s / t : 0, n ? s / n : 0
	exit !(t && s / t >= 1.8) }' || status=1
[ "$native_mps" != 0 ] && awk -v m="$native_mps" -v s="$spatial" 'BEGIN {
	printf "   spatial / native MPS %.2fx\n", s / m }'

echo "== forged pointer between the two spatial vGPUs"
# shellcheck disable=SC2046
env $(mdenv half) "$B/spatial-tenant" hold "$TMP/addr" $((DURATION + 3)) \
	>"$OUT/hold.out" 2>"$OUT/hold.err" &
PIDS+=($!)
for _ in $(seq 200); do [ -s "$TMP/addr" ] && break; sleep 0.05; done
# shellcheck disable=SC2046
env $(mdenv half) "$B/spatial-tenant" peek "$TMP/addr" >"$OUT/peek.out" \
	2>"$OUT/peek.err"
cat "$OUT/peek.out"
grep -q '^peek cudaSuccess' "$OUT/peek.out" &&
	{ echo "FAIL: the forged pointer read the neighbour's memory"; status=1; }

echo "== fault in one spatial vGPU: what the neighbour sees"
# shellcheck disable=SC2046
env $(mdenv half) "$B/spatial-tenant" fault >"$OUT/fault.out" \
	2>"$OUT/fault.err"
cat "$OUT/fault.out"
wait "${PIDS[@]}"
PIDS=()
echo "   neighbour: $(cat "$OUT/hold.out")"
echo "   (under MPS a fault loses every client's context: the neighbour's"
echo "    error is expected, Documentation/spatial.md)"
mdgpu_daemon_stop
# The MPS control and server logs say which clients reached the server.
cp -r "$TMP/mps/log" "$OUT/mps-log" 2>/dev/null
grep -h -E 'NEW CLIENT|Starting new server|Server .* exited|ERROR' \
	"$OUT"/mps-log/*.log 2>/dev/null | head -20
# mdgpud's own check of each spatial worker (the driver's MPS_ENABLED).
grep -h -E 'MPS client' "$OUT/mdgpud.log" 2>/dev/null | head -8
[ "$status" = 0 ] && echo PASS || echo FAIL
exit $status
