#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# CI check of mdgpu-bench itself (make check-bench):
#   1. --self-test: the statistics and verdict arithmetic;
#   2. with no GPU, a plain run must print "SKIPPED: no GPU" and exit 0;
#   3. a --sim --quick run must complete every benchmark on both sides
#      (mdgpu: mdgpud's sim backend; native: the fake libcuda.so.1 of
#      bench/tests, which exercises the native code without a GPU) and
#      write well-formed JSON with a figure on each side for every
#      benchmark (the daemon's CPU figures: mdgpu only), and the
#      fairness timeline (share vs time) on both
#      sides, consistent with the fairness shares.  The figures
#      themselves mean nothing here;
#   4. bench/plot.sh makes both PNGs from that JSON.
# usage: check-bench.sh MDGPU_BENCH MDGPUD OUTDIR FAKE_LIBCUDA_DIR
set -eu
bench=$1 mdgpud=$2 out=$3 fake=$4
mkdir -p "$out"
fail() { echo "check-bench: FAIL: $*" >&2; exit 1; }

# 1. Arithmetic.
"$bench" --self-test || fail "self-test"

# 2. The no-GPU path (only where there is no GPU: a GPU host runs for real).
if "$bench" --only sync --quick --mdgpud "$mdgpud" \
	--json "$out/check-nogpu.json" >"$out/check-nogpu.out" 2>&1; then
	if grep -q '^SKIPPED: no GPU' "$out/check-nogpu.out"; then
		echo "check-bench: no GPU: skipped cleanly"
	else
		echo "check-bench: a GPU is present: ran the sync benchmark"
	fi
else
	cat "$out/check-nogpu.out" >&2
	fail "plain run exited non-zero"
fi

# 3. The harness, both sides.
json=$out/check-sim.json
rm -f "$json"
if ! LD_LIBRARY_PATH=$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	"$bench" --sim --quick --mdgpud "$mdgpud" --json "$json" \
	--daemon-log "$out/check-sim-mdgpud.log" >"$out/check-sim.out" 2>&1; then
	cat "$out/check-sim.out" >&2
	fail "--sim --quick run failed"
fi
cat "$out/check-sim.out"
command -v jq >/dev/null || fail "jq missing (scripts/debian-packages.txt)"
jq -e . "$json" >/dev/null || fail "$json is not JSON"
jq -e '.tool == "mdgpu-bench" and .format == 1 and .mode == "sim" and
	.harness_errors == 0 and .targets.mdgpu.on == true and
	.targets.native.on == true and (.results | length) > 30' "$json" \
	>/dev/null || fail "$json: header wrong or results missing"
# Every result is well-formed.
jq -e 'all(.results[]; (.id | type) == "string" and
	(.unit | type) == "string" and (.goal | type) == "string" and
	(.native == null or (.native | type) == "number") and
	(.mdgpu == null or (.mdgpu | type) == "number") and
	(.ratio == null or (.ratio | type) == "number") and
	(.met == null or (.met | type) == "boolean"))' "$json" >/dev/null ||
	fail "$json: malformed result"
# Every benchmark produced a figure on both sides.
for id in sync_rtt.p50 sync_rtt.launch_call.p50 async_launch.rate \
	bw.h2d.pinned.1024KiB bw.d2h.pinned.1024KiB \
	bw.h2d.pageable.1024KiB bw.d2h.pageable.1024KiB compute.throughput \
	sharing.2_tenants.efficiency sharing.4_tenants.efficiency \
	fairness.share_w1 fairness.share_w4 fairness.jain_weighted \
	latency.alone.p99 latency.shared.p99 latency.class.p99 \
	interactive.8.p99 \
	scale.8.throughput; do
	jq -e --arg id "$id" \
		'[.results[] | select(.id == $id and
		  (.mdgpu | type) == "number" and .mdgpu >= 0 and
		  (.native | type) == "number" and .native >= 0)] | length == 1' \
		"$json" >/dev/null || fail "$json: no figure on both sides for $id"
done
# mdgpu-only figures.
for id in sync_rtt.daemon_only_rtt.p50 scale.8.daemon_cpu \
	idle.1.daemon_cpu idle.8.daemon_cpu idle.8.worker_cpu \
	interactive.8.cpu; do
	jq -e --arg id "$id" \
		'[.results[] | select(.id == $id and (.mdgpu | type) == "number"
		  and .mdgpu >= 0)] | length == 1' "$json" >/dev/null ||
		fail "$json: no mdgpu figure for $id"
done
# The daemon's CPU figures have no native side (no daemon there).
jq -e '[.results[] | select(.id | test("^(idle\\.[0-9]+\\.(daemon|worker)_cpu|interactive\\.[0-9]+\\.cpu)$"))] |
	length == 6 and all(.[]; .native == null)' "$json" >/dev/null ||
	fail "$json: idle/interactive CPU figures missing or with a native side"
# A verdict is given wherever both sides were measured against a goal.
jq -e 'all(.results[] | select(.goal | startswith("ratio"));
	(.ratio == null) == (.met == null))' "$json" >/dev/null ||
	fail "$json: verdicts inconsistent with ratios"
# The fairness timeline (share vs time): both sides, every bucket in
# order, kernel counts that sum to the fairness figures' own counts.
jq -e '.fairness as $f |
	($f.weights == [1, 2, 4]) and
	($f.target_share | length == 3) and
	($f.bucket_ms > 0) and ($f.duration_ms >= $f.bucket_ms) and
	(($f.timeline | keys) == ["mdgpu", "native"]) and
	all($f.timeline[]; length == ($f.duration_ms / $f.bucket_ms | floor)
	  and ([.[].t_ms] == [range(0; length) | . * $f.bucket_ms]) and
	  all(.[]; (.kernels | length == 3) and
	    all(.kernels[]; type == "number" and . >= 0) and
	    (if (.kernels | add) == 0 then .share == null else
	     (.share | length == 3) and
	     ((.share | add) - 1 | fabs) < 0.001 end)) and
	  ([.[].kernels | add] | add) > 0)' "$json" >/dev/null ||
	fail "$json: fairness.timeline missing or malformed"
for side in native mdgpu; do
	jq -e --arg s "$side" '
		[range(3) as $i | [.fairness.timeline[$s][].kernels[$i]] | add]
		as $k | ($k | add) as $sum |
		[.results[] | select(.id | test("^fairness.share_w[124]$"))
		 | .[$s]] as $share |
		all(range(3); (($k[.] / $sum) - $share[.] | fabs) < 0.001)' \
		"$json" >/dev/null ||
		fail "$json: $side timeline does not add up to fairness.share_w*"
done
# The plots (bench/plot.sh) from that JSON: both PNGs written.
command -v gnuplot >/dev/null ||
	fail "gnuplot missing (scripts/debian-packages.txt: gnuplot-nox)"
rm -f "$out/plots/check-sim-bandwidth.png" "$out/plots/check-sim-fairness.png"
"$(dirname "$0")/plot.sh" "$json" "$out/plots" >/dev/null || fail "plot.sh"
for p in bandwidth fairness; do
	head -c 8 "$out/plots/check-sim-$p.png" 2>/dev/null | od -An -tx1 |
		grep -q '89 50 4e 47 0d 0a 1a 0a' ||
		fail "plot.sh wrote no PNG $out/plots/check-sim-$p.png"
done
echo "check-bench: self-test, no-GPU skip, --sim --quick results and plots ok ($json)"
