#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Plots of one mdgpu-bench run, from its JSON alone (Documentation/
# benchmarks.md shows them):
#   PREFIX-bandwidth.png  copy bandwidth vs size, log-log, h2d and d2h:
#                         native vs mdgpu, pinned (mdgpu: its zero-copy
#                         aperture) and pageable
#   PREFIX-fairness.png   share vs time of the fairness run (weights 1:2:4):
#                         each tenant's share of the kernels finished per
#                         bucket (JSON "fairness.timeline"), native and
#                         mdgpu, with the targets w/sum(w) as dashed lines
# PREFIX defaults to OUTDIR/<the JSON's name without .json>; OUTDIR to
# Documentation/img.  A plot whose data the JSON lacks (--only, a side
# off) is skipped with a message; exits non-zero only on real errors.
# Needs jq and gnuplot (Debian: gnuplot-nox; scripts/debian-packages.txt).
# usage: bench/plot.sh RESULTS.json [OUTDIR]
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: bench/plot.sh RESULTS.json [OUTDIR]" >&2
	exit 2
fi
json=$1
top=$(cd "$(dirname "$0")/.." && pwd)
outdir=${2:-$top/Documentation/img}
for c in jq gnuplot; do
	command -v "$c" >/dev/null || {
		echo "plot.sh: $c missing (scripts/install-deps.sh)" >&2
		exit 1
	}
done
jq -e '.tool == "mdgpu-bench"' "$json" >/dev/null || {
	echo "plot.sh: $json: not mdgpu-bench JSON" >&2
	exit 1
}
mkdir -p "$outdir"
prefix=$outdir/$(basename "$json" .json)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# A title line naming the run: GPU, date, mode.
title=$(jq -r '"\(.gpu), \(.date), \(.mode)\(if .quick then " --quick" else "" end)"' "$json")

# ---- bandwidth vs size --------------------------------------------------
# One file per direction and kind: KiB native mdgpu (NaN: not measured).
nbw=0
for dir in h2d d2h; do
	for kind in pinned pageable; do
		jq -r --arg p "bw.$dir.$kind." '
			[.results[] | select(.id | startswith($p)) |
			 {kib: (.id | ltrimstr($p) | rtrimstr("KiB") |
				tonumber), native, mdgpu}] | sort_by(.kib)[] |
			"\(.kib) \(.native // "NaN") \(.mdgpu // "NaN")"' \
			"$json" >"$tmp/bw-$dir-$kind.dat"
		n=$(wc -l <"$tmp/bw-$dir-$kind.dat")
		nbw=$((nbw + n))
	done
done
if [ "$nbw" -gt 0 ]; then
	cat >"$tmp/bw.gp" <<EOF
set terminal pngcairo size 1400,600 font "DejaVu Sans,11"
set output "$prefix-bandwidth.png"
set multiplot layout 1,2 title "Copy bandwidth vs size, one copy + wait, median ($title)"
set logscale xy
set xlabel "copy size"
set ylabel "GB/s"
set xtics ("4 KiB" 4, "64 KiB" 64, "1 MiB" 1024, "16 MiB" 16384, "64 MiB" 65536, "256 MiB" 262144)
set xrange [3:350000]
set yrange [0.05:100]
set grid xtics ytics mytics
set key top left
set style line 1 lc rgb "#1f77b4" lw 2 pt 7 ps 1.2
set style line 2 lc rgb "#d62728" lw 2 pt 5 ps 1.2
set style line 3 lc rgb "#1f77b4" lw 2 dt 2 pt 6 ps 1.2
set style line 4 lc rgb "#d62728" lw 2 dt 2 pt 4 ps 1.2
do for [d in "h2d d2h"] {
	set title sprintf("%s (%s)", d, d eq "h2d" ? "host to device" : "device to host")
	plot "$tmp/bw-".d."-pinned.dat" using 1:2 with linespoints ls 1 title "native pinned (cuMemHostAlloc)", \\
	     "$tmp/bw-".d."-pinned.dat" using 1:3 with linespoints ls 2 title "mdgpu pinned (aperture)", \\
	     "$tmp/bw-".d."-pageable.dat" using 1:2 with linespoints ls 3 title "native pageable (malloc)", \\
	     "$tmp/bw-".d."-pageable.dat" using 1:3 with linespoints ls 4 title "mdgpu pageable (malloc)"
}
unset multiplot
EOF
	gnuplot "$tmp/bw.gp"
	echo "plot.sh: $prefix-bandwidth.png"
else
	echo "plot.sh: $json has no bandwidth results; no bandwidth plot"
fi

# ---- share vs time --------------------------------------------------------
# One file per side: bucket middle (s), then each tenant's share (NaN where
# no kernel finished in the bucket).
sides=$(jq -r '.fairness.timeline // {} | keys_unsorted[]' "$json")
if [ -n "$sides" ]; then
	for s in $sides; do
		jq -r --arg s "$s" '.fairness.bucket_ms as $b |
			.fairness.timeline[$s][] |
			"\((.t_ms + $b / 2) / 1000) \(if .share == null
			  then "NaN NaN NaN" else (.share | map(tostring) |
			  join(" ")) end)"' "$json" >"$tmp/tl-$s.dat"
	done
	f() { jq -r ".fairness | $1" "$json"; }
	w0=$(f '.weights[0]') w1=$(f '.weights[1]') w2=$(f '.weights[2]')
	t0=$(f '.target_share[0]') t1=$(f '.target_share[1]')
	t2=$(f '.target_share[2]')
	bucket=$(f '.bucket_ms') dur=$(f '.duration_ms / 1000')
	nsides=$(echo "$sides" | wc -w)
	list=$(echo "$sides" | tr '\n' ' ')
	cat >"$tmp/tl.gp" <<EOF
set terminal pngcairo size $((700 * nsides)),600 font "DejaVu Sans,11"
set output "$prefix-fairness.png"
set multiplot layout 1,$nsides title "Fairness, 3 saturating tenants, weights $w0:$w1:$w2: share of the kernels finished per $bucket ms ($title)"
set xlabel "time since the common start (s)"
set ylabel "share of the kernels finished in the bucket"
set xrange [0:$dur]
set yrange [0:0.75]
set ytics 0.1
set grid
set key top right maxrows 3 width -2
set style line 1 lc rgb "#2ca02c" lw 2 pt 7 ps 0.8
set style line 2 lc rgb "#ff7f0e" lw 2 pt 5 ps 0.8
set style line 3 lc rgb "#9467bd" lw 2 pt 9 ps 0.8
do for [s in "$list"] {
	set title s
	plot "$tmp/tl-".s.".dat" using 1:2 with linespoints ls 1 title "tenant w=$w0", \\
	     "$tmp/tl-".s.".dat" using 1:3 with linespoints ls 2 title "tenant w=$w1", \\
	     "$tmp/tl-".s.".dat" using 1:4 with linespoints ls 3 title "tenant w=$w2", \\
	     $t0 with lines lc rgb "#2ca02c" lw 1.5 dt 2 title sprintf("target %.3f", $t0), \\
	     $t1 with lines lc rgb "#ff7f0e" lw 1.5 dt 2 title sprintf("target %.3f", $t1), \\
	     $t2 with lines lc rgb "#9467bd" lw 1.5 dt 2 title sprintf("target %.3f", $t2)
}
unset multiplot
EOF
	gnuplot "$tmp/tl.gp"
	echo "plot.sh: $prefix-fairness.png"
else
	echo "plot.sh: $json has no fairness timeline; no share-vs-time plot"
fi
