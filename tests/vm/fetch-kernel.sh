#!/bin/sh
# fetch-kernel.sh RELEASE CACHEDIR
# Download Debian's linux-image-RELEASE with `apt-get download` (no
# update-initramfs), unpack it with `dpkg -x` into CACHEDIR/RELEASE/root and
# generate modules.dep there (the package does not ship it: depmod normally
# runs at install time).  Idempotent: a complete unpack is marked by a stamp.
# With VM_KROOT set (a kernel laid out the same way, e.g. the debug kernel
# of scripts/build-debug-kernel.sh), only checks that VM_KROOT holds
# RELEASE: the runners then boot VM_KROOT instead (kroot=${VM_KROOT:-...}).
set -eu
rel=$1
cache=$2
if [ -n "${VM_KROOT:-}" ]; then
	for f in "$VM_KROOT/boot/vmlinuz-$rel" "$VM_KROOT/lib/modules/$rel/modules.dep"; do
		[ -f "$f" ] || { echo "vm: VM_KROOT: no $f" >&2; exit 1; }
	done
	exit 0
fi
dir=$cache/$rel
[ -f "$dir/.stamp" ] && exit 0

mkdir -p "$cache/debs"
# Several checkouts' runs may share the cache: one unpacks, others wait.
exec 9>"$cache/.lock"
flock 9
[ -f "$dir/.stamp" ] && exit 0
debs() { set -- "$cache"/debs/linux-image-"$rel"_*.deb; [ -f "$1" ] && echo "$1"; }
deb=$(debs || true)
if [ -z "$deb" ]; then
	echo "vm: apt-get download linux-image-$rel" >&2
	(cd "$cache/debs" && apt-get download -q "linux-image-$rel") >&2
	deb=$(debs)
fi
rm -rf "$dir"
mkdir -p "$dir"
dpkg -x "$deb" "$dir/root"
depmod -b "$dir/root" "$rel"
touch "$dir/.stamp"
