#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# On the GPU machine: faults injected into a loaded mdgpud (cuda backend,
# socket transport) and what the tenants see.  Every tenant is the same
# unmodified driver-API program (tests/gpu/libcuda/spin_tenant.c, ~1 ms
# kernels, 32 in flight) on mdgpu's libcuda.so.1, printing its kernel
# count every PROGRESS_MS.
#
# 1. A worker killed with SIGKILL mid-run: three tenants A, B, C; after
#    KILL_AT s A's worker (mdgpud-worker serve ... <A's vGPU> <daemon>)
#    gets SIGKILL.  PASS if A fails with an error within ERROR_WITHIN_MS,
#    the admin socket counts the lost context (`stats`: contexts_lost=1,
#    after A's vGPU went with A), B and C finish cleanly and their kernels per second over the 2 s after
#    the kill are at least MIN_KEEP of those over the 2 s before it (they
#    lose nothing; they gain A's share), and a new tenant then runs to
#    completion on the same daemon.
# 2. The supervisor killed with SIGKILL under load: N_TENANTS tenants;
#    after KILL_AT s mdgpud gets SIGKILL.  PASS if every tenant fails with
#    an error within ERROR_WITHIN_MS, every worker exits by itself (its
#    supervisor gone: it drains, scrubs and frees its memory) within
#    WORKERS_GONE_MS, the GPU's used memory is back to what it was before
#    the daemon started (within MEM_SLACK_MIB; nvidia-smi), and a daemon
#    restarted on the same socket paths (the dead one's sockets are stale)
#    serves N_TENANTS new tenants whose total kernels per second are at
#    least MIN_KEEP of the first daemon's before the kill.
#
#   OUT=dir tests/gpu/faults.sh          (after make; about 40 s)
#
# Without a GPU it says so and exits 0.  MDGPU_FAKE_CUDA=DIR (CI's fake
# libcuda.so.1, build/cuda-fake) runs it without a GPU on the fake: a
# check of the script, the daemon's and the workers' side of the faults;
# the memory check is then skipped (said so) and the throughput floors
# are not applied (the fake's kernels take no time).
set -u
cd "$(dirname "$0")/../.." || exit 1
FAKE=${MDGPU_FAKE_CUDA:-}
TYPE=${MDGPU_TYPE:-1g}
N_TENANTS=${N_TENANTS:-8}
DURATION=8		# each tenant's timed loop, s (phase 1)
KILL_AT=3		# s after the start
PROGRESS_MS=100
ERROR_WITHIN_MS=3000
WORKERS_GONE_MS=10000
MEM_SLACK_MIB=64
MIN_KEEP=0.9

# shellcheck source=tests/gpu/lib-daemon.sh
. tests/gpu/lib-daemon.sh
mdgpu_gpu_setup ${FAKE:+-n} faults mdgpuctl
status=0
mdgpu_spin_build "$FAKE" || exit 1

fail() {
	echo "FAIL: $*"
	status=1
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# gpu_mem_used: MiB in use on GPU 0 (nvidia-smi), empty on the fake.
gpu_mem_used() {
	[ -z "$FAKE" ] || return 0
	nvidia-smi -i 0 --query-gpu=memory.used --format=csv,noheader,nounits |
		tr -d ' '
}

start_daemon() {
	if [ -n "$FAKE" ]; then
		LD_LIBRARY_PATH=$FAKE MDGPUD_FAKE_CUDA_MEM_MIB=16384 \
			mdgpu_daemon_start "$TMP" \
			-o log_level=info -o host_mib_max=1024 \
			-o cuda_fb_reserve_mib=1 -o ctx_overhead_mib=1 \
			-o "worker_sandbox=${MDGPU_SANDBOX:-best-effort}"
	else
		mdgpu_daemon_start "$TMP" -o log_level=info \
			-o host_mib_max=1024 \
			-o "worker_sandbox=${MDGPU_SANDBOX:-best-effort}"
	fi
}

# tenant NAME SECONDS: spin_tenant on the daemon, in the background; its
# stdout in $OUT/NAME.out, stderr (libcuda's log) in $OUT/NAME.err, its
# pid appended to PIDS and recorded as PID_<NAME>.
tenant() {
	local name=$1 secs=$2

	env LD_LIBRARY_PATH="$B/libcuda" MDGPU_SOCKET="$MDGPU_DAEMON_SOCK" \
		MDGPU_TYPE="$TYPE" MDGPU_HOST_MIB=16 MDGPU_CUDA_LOG=1 \
		SPIN_PROGRESS_MS=$PROGRESS_MS \
		"$B/spin_tenant" "$B/spin.ptx" "$secs" "$GO" \
		>"$OUT/$name.out" 2>"$OUT/$name.err" &
	PIDS+=($!)
	printf -v "PID_$name" %s $!
}

# wait_ready NAME...: until each has printed "ready".
wait_ready() {
	local name pid

	for name in "$@"; do
		pid=PID_$name
		mdgpu_wait_ready "$name" "${!pid}" || return 1
	done
}

# wait_exit NAME MS: waits up to MS for the tenant to exit; sets RC to
# its exit status, or to "running" (then kills it).  Not in a command
# substitution: only this shell can wait for its children.
wait_exit() {
	local pid=PID_$1 deadline=$(($(now_ms) + $2))

	while kill -0 "${!pid}" 2>/dev/null && [ "$(now_ms)" -lt "$deadline" ]
	do
		sleep 0.02
	done
	if kill -0 "${!pid}" 2>/dev/null; then
		kill -9 "${!pid}"
		wait "${!pid}" 2>/dev/null
		RC=running
		return
	fi
	wait "${!pid}"
	RC=$?
}

# vgpu_of NAME: the tenant's vGPU id, from libcuda's log of cuInit.
vgpu_of() {
	sed -n 's/.*cuInit: vGPU \([0-9]*\) over .*/\1/p' "$OUT/$1.err"
}

# rate NAME FROM_MS TO_MS: the tenant's kernels per second between its
# progress lines nearest after FROM_MS and nearest before TO_MS.
rate() {
	awk -v a="$2" -v b="$3" '
		$1 == "at" && $2 >= a && t0 == "" { t0 = $2; k0 = $4 }
		$1 == "at" && $2 <= b { t1 = $2; k1 = $4 }
		END { if (t0 == "" || t1 <= t0) print 0
		      else printf "%.1f\n", (k1 - k0) * 1000 / (t1 - t0) }' \
		"$OUT/$1.out"
}

# error_ms NAME: the time of the tenant's error line ("error ... at MS").
error_ms() {
	sed -n 's/^error .* at \([0-9]*\)$/\1/p' "$OUT/$1.out" | head -1
}

# at_least X Y: X >= MIN_KEEP * Y (always true on the fake).
at_least() {
	[ -n "$FAKE" ] && return 0
	awk -v x="$1" -v y="$2" -v k="$MIN_KEEP" 'BEGIN { exit !(x >= k * y) }'
}

daemon_workers() {
	pgrep -f "^mdgpud-worker serve [^ ]+ [0-9]+ $1( |\$)"
}

mem_before=$(gpu_mem_used)

echo "== 1. a worker killed with SIGKILL mid-run (3 tenants)"
start_daemon || exit 1
GO=$TMP/go.1
tenant a "$DURATION" && tenant b "$DURATION" && tenant c "$DURATION" &&
	wait_ready a b c || exit 1
id_a=$(vgpu_of a)
wpid=$(daemon_workers "$MDGPU_DAEMON_PID" | while read -r p; do
	tr '\0' ' ' <"/proc/$p/cmdline" | grep -q "^mdgpud-worker serve [^ ]* $id_a " &&
		echo "$p"; done)
if [ -z "$id_a" ] || [ -z "$wpid" ]; then
	echo "FAIL: no vGPU or worker for tenant a (vGPU '$id_a', worker '$wpid')"
	exit 1
fi
touch "$GO"
t_go=$(now_ms)
sleep "$KILL_AT"
kill -9 "$wpid"
t_kill=$(($(now_ms) - t_go))
wait_exit a "$ERROR_WITHIN_MS"
rc_a=$RC
# shellcheck disable=SC2034  # rc_b and rc_c are read as ${!rc} below
{
	wait_exit b $(((DURATION + 10) * 1000))
	rc_b=$RC
	wait_exit c $(((DURATION + 10) * 1000))
	rc_c=$RC
}
err_a=$(error_ms a)
echo "   worker $wpid of vGPU $id_a killed at $t_kill ms"
echo "   a: exit $rc_a, $(grep '^error' "$OUT/a.out" | head -1)"
if [ "$rc_a" != 1 ] || [ -z "$err_a" ] ||
   [ $((err_a - t_kill)) -gt "$ERROR_WITHIN_MS" ]; then
	fail "tenant a did not fail with an error within $ERROR_WITHIN_MS ms"
else
	echo "   a's error $((err_a - t_kill)) ms after the kill"
fi
lost=$("$B/mdgpuctl" -s "$MDGPU_DAEMON_ADMIN" stats |
	sed -n 's/.* contexts_lost=\([0-9]*\).*/\1/p')
echo "   admin socket: contexts_lost=$lost (the daemon's lifetime count)"
[ "$lost" = 1 ] || fail "mdgpuctl stats: contexts_lost=$lost, not 1"
for t in b c; do
	rc=rc_$t
	before=$(rate "$t" $((t_kill - 2000)) "$t_kill")
	after=$(rate "$t" "$t_kill" $((t_kill + 2000)))
	echo "   $t: exit ${!rc}, kernels/s $before before the kill, $after after"
	[ "${!rc}" = 0 ] || fail "tenant $t did not finish cleanly"
	at_least "$after" "$before" ||
		fail "tenant $t lost throughput over the kill ($after < $MIN_KEEP x $before)"
done
GO=$TMP/go.1b
tenant d 1 && wait_ready d && touch "$GO" || exit 1
wait_exit d 30000
rc_d=$RC
echo "   a new tenant afterwards: exit $rc_d, $(grep '^kernels' "$OUT/d.out")"
[ "$rc_d" = 0 ] || fail "a new tenant after the kill did not run"
cp "$OUT/mdgpud.log" "$OUT/mdgpud.1.log"

echo "== 2. the supervisor killed with SIGKILL under load ($N_TENANTS tenants)"
names=()
for i in $(seq "$N_TENANTS"); do
	names+=("s$i")
done
GO=$TMP/go.2
for n in "${names[@]}"; do
	tenant "$n" 60 || exit 1
done
wait_ready "${names[@]}" || exit 1
dpid=$MDGPU_DAEMON_PID
nworkers=$(daemon_workers "$dpid" | wc -l)
touch "$GO"
t_go=$(now_ms)
sleep "$KILL_AT"
{ kill -9 "$dpid"; wait "$dpid"; } 2>/dev/null
MDGPU_DAEMON_PID=
t_kill=$(($(now_ms) - t_go))
sum_before=0
worst=0
for n in "${names[@]}"; do
	wait_exit "$n" "$ERROR_WITHIN_MS"
	rc=$RC
	e=$(error_ms "$n")
	r=$(rate "$n" $((t_kill - 2000)) "$t_kill")
	sum_before=$(awk -v a="$sum_before" -v b="$r" 'BEGIN { print a + b }')
	if [ "$rc" != 1 ] || [ -z "$e" ]; then
		fail "tenant $n: exit $rc, no error line within $ERROR_WITHIN_MS ms: $(tail -1 "$OUT/$n.out")"
	elif [ $((e - t_kill)) -gt "$worst" ]; then
		worst=$((e - t_kill))
	fi
done
echo "   mdgpud $dpid killed at $t_kill ms with $nworkers workers; every tenant's error within $worst ms: $(grep -h '^error' "$OUT/s1.out")"
gone=
t0=$(now_ms)
while [ $(($(now_ms) - t0)) -lt "$WORKERS_GONE_MS" ]; do
	if [ -z "$(daemon_workers "$dpid")" ]; then
		gone=$(($(now_ms) - t0))
		break
	fi
	sleep 0.05
done
if [ -n "$gone" ]; then
	echo "   its $nworkers workers exited by themselves within $gone ms"
else
	fail "workers of the dead daemon still running after $WORKERS_GONE_MS ms: $(daemon_workers "$dpid" | tr '\n' ' ')"
	daemon_workers "$dpid" | xargs -r kill -9
fi
if [ -n "$FAKE" ]; then
	echo "   GPU memory: not checked (fake libcuda)"
else
	mem_after=
	for _ in $(seq 50); do
		mem_after=$(gpu_mem_used)
		[ "$mem_after" -le $((mem_before + MEM_SLACK_MIB)) ] && break
		sleep 0.1
	done
	echo "   GPU memory used: $mem_before MiB before the daemon, $mem_after MiB after"
	[ "$mem_after" -le $((mem_before + MEM_SLACK_MIB)) ] ||
		fail "GPU memory not returned ($mem_after MiB > $mem_before + $MEM_SLACK_MIB)"
fi
cp "$OUT/mdgpud.log" "$OUT/mdgpud.2.log"

echo "== 2b. a daemon restarted on the same sockets, $N_TENANTS new tenants"
start_daemon || exit 1
GO=$TMP/go.3
names=()
for i in $(seq "$N_TENANTS"); do
	names+=("r$i")
	tenant "r$i" "$((KILL_AT + 1))" || exit 1
done
wait_ready "${names[@]}" || exit 1
touch "$GO"
t_go=$(now_ms)
sum_after=0
for n in "${names[@]}"; do
	wait_exit "$n" 60000
	rc=$RC
	[ "$rc" = 0 ] || fail "tenant $n on the restarted daemon: exit $rc: $(tail -1 "$OUT/$n.out")"
	r=$(rate "$n" $((KILL_AT * 1000 - 2000)) $((KILL_AT * 1000)))
	sum_after=$(awk -v a="$sum_after" -v b="$r" 'BEGIN { print a + b }')
done
echo "   kernels/s of all tenants: $sum_before before the kill, $sum_after after the restart"
at_least "$sum_after" "$sum_before" ||
	fail "the restarted daemon is slower ($sum_after < $MIN_KEEP x $sum_before)"
mdgpu_daemon_stop

if [ "$status" = 0 ]; then
	echo "PASS faults: worker SIGKILL, supervisor SIGKILL with $N_TENANTS tenants, restart"
else
	echo "FAIL faults (logs in $OUT)"
fi
exit $status
