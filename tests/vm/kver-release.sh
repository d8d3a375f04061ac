#!/bin/sh
# kver-release.sh KVER: print the full Debian release (e.g. 6.1.0-56-amd64)
# of the installed linux-headers-KVER.*-amd64 matching KVER (6.1, 6.12), or
# KVER itself when it already names an installed header dir or, with
# VM_KROOT set (tests/vm/fetch-kernel.sh), a release VM_KROOT holds.
set -eu
k=${1:?usage: kver-release.sh 6.1|6.12|RELEASE}
if [ -d "/usr/src/linux-headers-$k" ] ||
	{ [ -n "${VM_KROOT:-}" ] && [ -d "$VM_KROOT/lib/modules/$k" ]; }; then
	echo "$k"
	exit 0
fi
set -- /usr/src/linux-headers-"$k".[0-9]*-amd64
[ -d "$1" ] || { echo "no /usr/src/linux-headers-$k.*-amd64" >&2; exit 1; }
[ $# -eq 1 ] || { echo "several headers match $k: $*" >&2; exit 1; }
echo "${1#/usr/src/linux-headers-}"
