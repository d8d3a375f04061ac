#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# scripts/demo-host.sh - mdgpu on the host, no VM: build/mdgpud with the sim
# backend in real time (sim_realtime = 1) on a temporary socket, two tenants
# (mdgpu-spin, types 1g and 4g) running the same verified workload at once,
# weights set to 1:3 with mdgpuctl, GPU time shares printed every second
# for ~5 s, then the weights turned to 3:1 live and the shares followed for
# ~5 s.  Under 30 s.  `make demo-host` builds what it needs and runs it.
#
# Exits non-zero if a tenant fails its checks or a phase's average share
# is more than 10 points off the weights.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
CTL=$BUILD/mdgpuctl
for b in mdgpud mdgpuctl mdgpu-spin; do
	if [ ! -x "$BUILD/$b" ]; then
		echo "demo-host: $BUILD/$b missing: run make demo-host" >&2
		exit 1
	fi
done

TMP=$(mktemp -d /tmp/mdgpu-demo.XXXXXX)
SOCK=$TMP/mdgpud.sock
ADMIN=$TMP/mdgpud-admin.sock
DPID=
PIDS=()
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	if [ -n "$DPID" ]; then
		kill "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== mdgpud: sim backend, real time, socket $SOCK"
"$BUILD/mdgpud" -o backend=sim -o sim_realtime=1 -o "socket_path=$SOCK" \
	-o log_level=warn &
DPID=$!
for _ in $(seq 100); do [ -S "$ADMIN" ] && break; sleep 0.05; done
[ -S "$ADMIN" ] || { echo "demo-host: mdgpud did not start" >&2; exit 1; }

echo "== two tenants, same workload: 64 MiB, copies + builtins verified, then 1 ms SPIN_NS kernels"
for t in 1g 4g; do
	"$BUILD/mdgpu-spin" -s "$SOCK" -T "$t" -m 64 -k 1000 -d 25 \
		>"$TMP/spin-$t.out" 2>&1 &
	PIDS+=($!)
done

# vGPU id of each type, from the admin socket.
declare -A ID
for _ in $(seq 200); do
	list=$("$CTL" -s "$ADMIN" list 2>/dev/null)
	ID[1g]=$(sed -n 's/^id=\([0-9]*\) type=1g .*/\1/p' <<<"$list")
	ID[4g]=$(sed -n 's/^id=\([0-9]*\) type=4g .*/\1/p' <<<"$list")
	[ -n "${ID[1g]}" ] && [ -n "${ID[4g]}" ] && break
	sleep 0.05
done
if [ -z "${ID[1g]}" ] || [ -z "${ID[4g]}" ]; then
	echo "demo-host: tenants did not come up:" >&2
	cat "$TMP"/spin-*.out >&2
	exit 1
fi
# both have verified their data and started spinning
for _ in $(seq 200); do
	[ "$(cat "$TMP"/spin-*.out | grep -c verified)" = 2 ] && break
	sleep 0.05
done
cat "$TMP"/spin-*.out

# key=value from a list line
kv() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }

declare -A LAST
SUM1=0
SUM4=0
NS=0
sample_init() {
	local list
	list=$("$CTL" -s "$ADMIN" list)
	for t in 1g 4g; do
		LAST[$t]=$(kv "$(grep "^id=${ID[$t]} " <<<"$list")" gpu_ns)
	done
	SUM1=0 SUM4=0 NS=0
}

# One row per vGPU each second: GPU time in the last second and its share.
sample() {
	local sec=$1 list line d1 d4 tot
	list=$("$CTL" -s "$ADMIN" list) || return 1
	declare -A line now w q u
	for t in 1g 4g; do
		line[$t]=$(grep "^id=${ID[$t]} " <<<"$list")
		now[$t]=$(kv "${line[$t]}" gpu_ns)
		w[$t]=$(kv "${line[$t]}" weight)
		q[$t]=$(( $(kv "${line[$t]}" fb_quota) >> 20 ))
		u[$t]=$(( $(kv "${line[$t]}" fb_used) >> 20 ))
	done
	d1=$(( now[1g] - LAST[1g] ))
	d4=$(( now[4g] - LAST[4g] ))
	tot=$(( d1 + d4 ))
	[ "$tot" -gt 0 ] || tot=1
	for t in 1g 4g; do
		local d=$(( now[$t] - LAST[$t] ))
		printf '  %3ss  vgpu %-3s %-3s weight %-2s quota %5s MiB  used %3s MiB  GPU time %6.2f s  share %5.1f%%\n' \
			"$sec" "${ID[$t]}" "$t" "${w[$t]}" "${q[$t]}" "${u[$t]}" \
			"$(awk -v n="${now[$t]}" 'BEGIN { print n / 1e9 }')" \
			"$(awk -v d="$d" -v t="$tot" 'BEGIN { print 100 * d / t }')"
		LAST[$t]=${now[$t]}
	done
	SUM1=$(( SUM1 + d1 ))
	SUM4=$(( SUM4 + d4 ))
	NS=$(( NS + 1 ))
}

# phase W1 W4 EXPECTED_SHARE_OF_1G_PERCENT
FAIL=0
phase() {
	echo "== mdgpuctl set ${ID[1g]} weight $1; mdgpuctl set ${ID[4g]} weight $2"
	"$CTL" -s "$ADMIN" set "${ID[1g]}" weight "$1" || exit 1
	"$CTL" -s "$ADMIN" set "${ID[4g]}" weight "$2" || exit 1
	sample_init	# the first second shows the change taking hold
	for s in 1 2 3 4 5; do
		sleep 1
		sample "$s" || exit 1
	done
	local avg
	avg=$(awk -v a="$SUM1" -v b="$SUM4" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
	echo "   average over 5 s: 1g ${avg}% / 4g $(awk -v a="$avg" 'BEGIN { printf "%.1f", 100 - a }')% (weights $1:$2 -> $3% / $((100 - $3))%)"
	if awk -v a="$avg" -v e="$3" 'BEGIN { exit !(a < e - 10 || a > e + 10) }'; then
		echo "demo-host: shares off by more than 10 points" >&2
		FAIL=1
	fi
}

phase 1 3 25
phase 3 1 75

echo "== stats"
"$CTL" -s "$ADMIN" stats | tr ' ' '\n' | grep -E '^(backend|vgpus|policy|timeslice_us|gpu_ns|commands|errors)=' | paste -sd' '

for p in "${PIDS[@]}"; do kill -TERM "$p"; done
for i in "${!PIDS[@]}"; do
	if ! wait "${PIDS[$i]}"; then
		echo "demo-host: a tenant failed" >&2
		FAIL=1
	fi
done
PIDS=()
cat "$TMP"/spin-*.out | grep kernels
[ "$FAIL" = 0 ] && echo "== demo-host: OK"
exit "$FAIL"
