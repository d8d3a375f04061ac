#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# What one run of test_driver (libcuda/tests/test_driver.c) on a vGPU that
# already exists must print, turned into a guest suite's PASS/FAIL lines.
# Run by the e2e guest (tests/e2e/init, vfio transport) and the nested
# e2e's inner guest (tests/e2e/nested-inner-init, guest transport) under
# busybox: one awk pass, because every process costs up to a third of a
# second there.
#
#   driver-check.sh PREFIX TRANSPORT QUOTA GROUPS RC OUT ERR RESULTS
#
# OUT and ERR are the program's stdout and stderr (run with
# MDGPU_CUDA_LOG=1), RC its exit status.  Prints, and appends to RESULTS:
#   PREFIX-<group>               one per "test_driver: GROUP: N passed,
#                                N failed (T ms)" line: no failure and at
#                                least one check (its time printed after)
#   PREFIX-test_driver-GROUPS-groups-exit-0
#                                GROUPS groups reported, the total line,
#                                exit status 0
#   PREFIX-cuinit-TRANSPORT-transport
#                                the log has "cuInit: vGPU N over the
#                                TRANSPORT transport, quota QUOTA bytes"
#   PREFIX-not-supported-logged-once
#                                "cuMemAllocManaged: not supported" logged
#                                exactly once
# then the total line and the program's FAIL lines (when it exited
# non-zero, its whole log less the refused lookups).  Exits 0 when every
# check passed, else 1.
set -u
[ $# -eq 8 ] || {
	echo "usage: driver-check.sh PREFIX TRANSPORT QUOTA GROUPS RC OUT ERR RESULTS" >&2
	exit 2
}
awk -v pfx="$1" -v transport="$2" -v quota="$3" -v ngroups="$4" -v rc="$5" \
	-v res="$8" '
function out(l) { print l; print l >>res }
function check(ok, name, why) {
	out(ok ? "PASS: " pfx "-" name : "FAIL: " pfx "-" name ": " why)
	if (!ok)
		bad++
}
FILENAME == ARGV[1] && /^test_driver: [a-z_]+: [0-9]+ passed, [0-9]+ failed \([0-9]+ ms\)$/ {
	g = substr($2, 1, length($2) - 1)
	check($5 == 0 && $3 > 0, g, $3 " passed, " $5 " failed")
	print "    (" g ": " substr($7, 2) " ms)"
	groups++
}
FILENAME == ARGV[1] && /^test_driver: [0-9]+ passed, [0-9]+ failed$/ { total = $0 }
FILENAME == ARGV[2] {
	if ($0 ~ "^libcuda\\(mdgpu\\): cuInit: vGPU [0-9]+ over the " transport \
	    " transport, quota " quota " bytes$")
		init = 1
	if ($0 == "libcuda(mdgpu): cuMemAllocManaged: not supported")
		managed++
	if (/^FAIL /)
		fails = fails "    " $0 "\n"
	if ($0 !~ /cuGetProcAddress\(.*\): no such symbol/)
		log_ = log_ "    " $0 "\n"
}
END {
	check(rc == 0 && groups == ngroups && total != "",
	      "test_driver-" ngroups "-groups-exit-0",
	      "exit " rc ", " groups + 0 " groups, total \"" total "\"")
	check(init, "cuinit-" transport "-transport", "no such log line")
	check(managed == 1, "not-supported-logged-once",
	      "cuMemAllocManaged logged " managed + 0 " times")
	print "    " total
	printf "%s", rc == 0 ? fails : log_
	exit bad ? 1 : 0
}' "$6" "$7"
