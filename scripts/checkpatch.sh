#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# scripts/checkpatch.sh - run the kernel's checkpatch.pl --strict on kmod/
# (default) or the files given (the guest driver uses it too).
#
# checkpatch.pl, spelling.txt and const_structs.checkpatch come from Debian's
# /usr/src/linux-source-6.1.tar.xz (package linux-source-6.1); they are
# extracted once into .cache/checkpatch/.  Exits non-zero on any warning,
# check or error.  Usage: scripts/checkpatch.sh [files...] (default:
# kmod/*.[ch]).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache="$top/.cache/checkpatch"
tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}

if [ ! -x "$cache/checkpatch.pl" ]; then
	if [ ! -f "$tarball" ]; then
		echo "checkpatch.sh: $tarball missing (apt-get install linux-source-6.1)" >&2
		exit 1
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	echo "checkpatch.sh: extracting checkpatch.pl from $tarball (once)"
	tar -xJf "$tarball" -C "$tmp" --wildcards --strip-components=2 \
		'linux-source-*/scripts/checkpatch.pl' \
		'linux-source-*/scripts/spelling.txt' \
		'linux-source-*/scripts/const_structs.checkpatch'
	mkdir -p "$cache"
	cp "$tmp/checkpatch.pl" "$tmp/spelling.txt" \
		"$tmp/const_structs.checkpatch" "$cache/"
	chmod +x "$cache/checkpatch.pl"
fi

cd "$top"
if [ $# -eq 0 ]; then
	set -- kmod/*.[ch]
fi

# --no-tree: checkpatch finds spelling.txt and const_structs.checkpatch next
# to itself.  --terse gives one line per finding; any line is a failure.
# kmod/mdgpu_compat.h is the one file whose job is to test
# LINUX_VERSION_CODE: only there are LINUX_VERSION_CODE and
# CONSTANT_COMPARISON (which fires on "LINUX_VERSION_CODE >= ...") ignored.
run() {
	"$cache/checkpatch.pl" --strict --no-tree --terse --show-types "$@" 2>&1 || true
}
out=""
for f in "$@"; do
	case "$f" in
	*/mdgpu_compat.h)
		o=$(run --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f "$f") ;;
	*)
		o=$(run -f "$f") ;;
	esac
	# checkpatch ends each file with a "total:" line; keep only findings.
	o=$(printf '%s\n' "$o" | grep -v '^total: 0 errors, 0 warnings, 0 checks' || true)
	[ -n "$o" ] && out="$out$o
"
done
if [ -n "$out" ]; then
	printf '%s' "$out"
	echo "checkpatch.sh: FAILED" >&2
	exit 1
fi
echo "checkpatch.sh: clean ($# files, --strict)"
