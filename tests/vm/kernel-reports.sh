#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tests/vm/kernel-reports.sh TAG LOG_TXT
#
# Scan a guest's console log (the .txt copy a runner writes: no CRs, no
# escape sequences) for the reports of the debug kernel's detectors and
# print each one; exit status 1 if there is any.  Run by
# tests/vm/run-debug-kernel.sh on the console of every guest it boots.
#
# Reports: KASAN ("BUG: KASAN: ..."), lockdep ("WARNING: possible circular
# locking ...", "possible recursive locking", "inconsistent lock state",
# "suspicious RCU usage", ...), kmemleak ("unreferenced object ...", from
# /sys/kernel/debug/kmemleak, which tests/vm/kmemleak prints),
# DEBUG_ATOMIC_SLEEP ("BUG: sleeping function called from invalid
# context"), DEBUG_LIST ("list_add corruption", ...), and any other kernel
# WARNING, BUG, Oops, general protection fault or panic.
#
# Only the console's own kernel lines (with their "[ seconds]" stamp; the
# debug kernel has PRINTK_TIME) and kmemleak's "unreferenced object" lines
# start a report: the copies a guest's /init echoes of its kernel log
# ("dmesg: ...", indented) would count each report twice.  A report is printed from its first line
# to its end marker (KASAN's closing "=====", "---[ end trace", "</TASK>")
# or at most 80 lines; the whole output stops at 600 lines.
set -eu
tag=${1:?usage: kernel-reports.sh TAG LOG_TXT}
log=${2:?usage: kernel-reports.sh TAG LOG_TXT}
[ -f "$log" ] || { echo "$tag: no console log $log" >&2; exit 1; }

awk -v tag="$tag" -v log_name="$log" '
function starts(l) {
	# Relayed inner-guest lines are the inner kernel console: keep them.
	sub(/^inner\| /, "", l)
	if (l ~ /^unreferenced object 0x/) return 1
	if (l !~ /^\[ *[0-9]+\.[0-9]+\] /) return 0
	return l ~ /BUG: KASAN|KASAN: |[Pp]ossible .*(deadlock|locking|lock inversion)|inconsistent lock state|suspicious RCU usage|sleeping function called from invalid context|list_(add|del) corruption|[] ](WARNING|BUG)[: ]|kernel BUG at|Oops|general protection fault|Kernel panic|cut here/
}
function ends(l) {
	return l ~ /---\[ end trace|<\/TASK>|^(inner\| )?(\[ *[0-9.]+\] )?=+$/
}
{
	# A kmemleak report (its indented lines) ends at the first other line.
	if (in_report && kml && $0 !~ /^(inner\| )?( |\t|unreferenced object)/)
		in_report = 0
	if (in_report) {
		if (printed < 600) print "    " $0
		printed++; len++
		if ((ends($0) && len >= 2) || len >= 80) in_report = 0
		next
	}
	if (starts($0)) {
		n++
		if (printed < 600) {
			print tag ": report " n " (" log_name " line " NR "):"
			print "    " $0
		}
		printed++; in_report = 1; len = 1
		kml = $0 ~ /unreferenced object/
	}
}
END {
	if (n) {
		if (printed >= 600) print tag ": (output cut at 600 lines)"
		print tag ": " n " kernel report(s) in " log_name
		exit 1
	}
}' "$log"
