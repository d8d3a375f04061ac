#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# mdgpu-bench JSON -> a Markdown table (for Documentation/benchmarks.md).
# usage: bench/json2md.sh RESULTS.json
set -eu
jq -r '
def f: if . == null then "n/a" elif (. | fabs) >= 1000 then (. * 10 | round / 10 | tostring)
       elif (. | fabs) >= 1 then (. * 1000 | round / 1000 | tostring)
       else (. * 100000 | round / 100000 | tostring) end;
"GPU: \(.gpu) (\(.sm_count) SMs); mode \(.mode)\(if .quick then ", quick" else "" end); \(.date); timeslice \(.timeslice_us) us; bench_work \(.work_kernel.alone_us | f) us alone (\(.work_kernel.grid) x \(.work_kernel.block), \(.work_kernel.iters) iterations)",
"",
"| benchmark | unit | native | mdgpu | mdgpu/native | goal | met |",
"| --- | --- | ---: | ---: | ---: | --- | --- |",
(.results[] | "| `\(.id)` | \(.unit) | \(.native | f) | \(.mdgpu | f) | \(if .ratio == null then "-" else (.ratio * 1000 | round / 1000 | tostring) end) | \(.goal) | \(if .met == null then "-" elif .met then "yes" else "**no**" end) |")
' "$1"
