#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Usage: run-fuzz.sh SECONDS OUT FUZZ_DIR NAME...
# Runs OUT/fuzz_NAME for SECONDS each, one after the other, on a working
# corpus OUT/corpus/NAME (new inputs land there) plus the committed seeds
# FUZZ_DIR/corpus/NAME (read only), with the dictionary
# FUZZ_DIR/dict/NAME.dict when there is one.  Prints one line per harness,
#   fuzz NAME: EXECS execs, CRASHES crashes
# and where the crash inputs and the log are when there are any.  Exits 1
# if any harness crashed (a crash, leak, timeout or out-of-memory input).
# FUZZ_ARGS adds libFuzzer options (e.g. -runs=N, -jobs is not supported).
set -u
secs=$1 out=$2 fdir=$3
shift 3
failed=0
count() { find "$1" -type f | wc -l; }
for name in "$@"; do
	work="$out/corpus/$name" crashes="$out/crashes/$name"
	log="$out/log/$name.log"
	mkdir -p "$work" "$crashes" "$(dirname "$log")"
	before=$(count "$crashes")
	dict=
	[ -f "$fdir/dict/$name.dict" ] && dict="-dict=$fdir/dict/$name.dict"
	# shellcheck disable=SC2086
	"$out/fuzz_$name" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$crashes/" $dict ${FUZZ_ARGS:-} \
		"$work" "$fdir/corpus/$name" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	crashed=$(( $(count "$crashes") - before ))
	where="crash inputs in $crashes/, log $log"
	if [ "$rc" -ne 0 ] && [ "$crashed" -eq 0 ]; then
		crashed=1	# died without writing an input (e.g. in init)
		where="exit status $rc but no crash input, log $log"
	fi
	echo "fuzz $name: ${execs:-0} execs, $crashed crashes"
	if [ "$crashed" -ne 0 ]; then
		failed=1
		echo "  $where"
		grep -m 3 -E 'ERROR|runtime error|invariant failed' "$log" |
			sed 's/^/  /'
	fi
done
exit $failed
