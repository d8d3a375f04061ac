#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Puts the generated entry-point table (gen-entry-points.py --doc) between
# the "BEGIN/END generated entry points" markers of Documentation/libcuda.md
# (--write), or fails if what is there differs from it (--check).
#   update-doc.sh --write|--check TABLE DOC
set -eu
mode=$1 table=$2 doc=$3
begin='<!-- BEGIN generated entry points -->'
end='<!-- END generated entry points -->'
new=$(mktemp)
trap 'rm -f "$new"' EXIT
awk -v b="$begin" -v e="$end" -v t="$table" '
	$0 == b { print; while ((getline l < t) > 0) print l; skip = 1; next }
	$0 == e { skip = 0 }
	!skip { print }' "$doc" >"$new"
grep -qxF "$begin" "$doc" || { echo "$doc: no '$begin' line" >&2; exit 1; }
case $mode in
--write) cat "$new" >"$doc" ;;
--check)
	if ! cmp -s "$new" "$doc"; then
		echo "FAIL: $doc: entry-point table out of date (make libcuda-doc)" >&2
		exit 1
	fi
	echo "Documentation/libcuda.md: entry-point table up to date" ;;
*) echo "usage: $0 --write|--check TABLE DOC" >&2; exit 2 ;;
esac
