# shellcheck shell=sh
# SPDX-License-Identifier: GPL-2.0
# tests/vm/verdict.sh: sourced by the QEMU guest runners (tests/vm,
# tests/nested, tests/e2e).
#
# vm_verdict TAG REL LOG_TXT SERIAL RC TIMEOUT_S [LINE_PREFIX_RE]
#   Prints the guest's closing "N passed, N failed" line.  When the guest
#   died before printing one, says why (timeout, or the last 30 lines of the
#   log) and prints a summary counted from the PASS:/FAIL: lines plus one
#   failure for the crash.  Returns 0 only if nothing failed and QEMU exited
#   cleanly (RC 0).  LINE_PREFIX_RE matches what a relaying guest puts before
#   result lines (e.g. "(inner\| )?").  The FAIL: lines are repeated just
#   before the summary, so that a log cut to its head and tail still names
#   what failed.
vm_verdict() {
	vv_tag=$1 vv_rel=$2 vv_txt=$3 vv_serial=$4 vv_rc=$5 vv_timeout=$6
	vv_pfx=${7:-}
	vv_sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$vv_txt" | tail -n1 ||
		true)
	if [ "$vv_rc" -eq 124 ] || [ "$vv_rc" -eq 137 ]; then
		echo "$vv_tag: $vv_rel: guest timed out after ${vv_timeout}s (see $vv_serial)" >&2
	elif [ -z "$vv_sum" ]; then
		echo "$vv_tag: $vv_rel: guest crashed before the summary (see $vv_serial):" >&2
		tail -n 30 "$vv_txt" >&2
	fi
	if [ -z "$vv_sum" ]; then
		vv_pass=$(grep -cE "^${vv_pfx}PASS: " "$vv_txt" || true)
		vv_fail=$(( $(grep -cE "^${vv_pfx}FAIL: " "$vv_txt" || true) + 1 ))
		vv_sum="$vv_pass passed, $vv_fail failed"
	fi
	grep -E "^${vv_pfx}FAIL: " "$vv_txt" | sed "s/^/$vv_tag: $vv_rel: /" ||
		true
	echo "$vv_sum"
	case $vv_sum in
	*" 0 failed") [ "$vv_rc" -eq 0 ] ;;
	*) return 1 ;;
	esac
}

