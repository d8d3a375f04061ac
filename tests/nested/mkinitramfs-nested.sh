#!/bin/bash
# mkinitramfs-nested.sh RELEASE KROOT OUTDIR MDGPU_KO GUEST_KO RESPONDER CLIENT \
#                       [FILE=PATH...]
#
# Build the two initramfs images of the nested test in OUTDIR:
#   inner.cpio  busybox, GUEST_KO (mdgpu-guest.ko), CLIENT, inner-init as /init,
#               and each FILE at PATH (absolute, in the inner image) with
#               the shared libraries and dynamic loader ldd names for it
#               (tests/vm/pack-files.sh; tests/e2e/run-e2e-nested.sh adds
#               libcuda.so.1 and driver-API programs this way);
#   outer.cpio  tests/vm/mkinitramfs.sh's image (busybox, vfio,
#               vfio_iommu_type1, mdev and their dependencies, MDGPU_KO,
#               RESPONDER in /bin) followed by a second cpio archive that adds
#               outer-init as /init (replacing tests/vm/init: the kernel
#               unpacks concatenated archives in order, later files win),
#               run-inner (the inner QEMU with its boot watchdog) and
#               outer-responder (the responder's part of outer-init) in /bin,
#               qemu-system-x86_64 with the libraries ldd names, the accel-tcg
#               module, /usr/share/qemu, seabios and ipxe firmware, and the
#               inner kernel and initramfs under /nested.
set -eu
rel=$1 kroot=$2 outdir=$3 ko=$4 gko=$5 responder=$6 client=$7
shift 7
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/vm/pack-files.sh
. "$top/tests/vm/pack-files.sh"
qemu=/usr/bin/qemu-system-x86_64
qemu_mods=/usr/lib/x86_64-linux-gnu/qemu

stage=$(mktemp -d "${TMPDIR:-/tmp}/mdgpu-nested.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkcpio() {	# DIR OUT
	(cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$2.tmp"
	mv "$2.tmp" "$2"
}

# Inner guest.
in=$stage/inner
mkdir -p "$in"/{bin,dev,proc,sys,tmp,lib/modules}
cp /bin/busybox "$in/bin/busybox"
cp "$here/inner-init" "$in/init"
cp "$client" "$in/bin/mdgpu-client"
cp "$gko" "$in/lib/modules/mdgpu-guest.ko"
[ $# -eq 0 ] || pack_files "$in" "$@"
mkcpio "$in" "$outdir/inner.cpio"

# Outer guest: the VM suite's image, then the overlay.
"$top/tests/vm/mkinitramfs.sh" "$rel" "$kroot" "$outdir/outer-base.cpio" \
	"$ko" "$responder"
ov=$stage/outer
mkdir -p "$ov/bin" "$ov/usr/bin" "$ov$qemu_mods" "$ov/usr/share" "$ov/usr/lib/ipxe" \
	"$ov/nested"
cp "$here/outer-init" "$ov/init"
cp "$here/run-inner" "$ov/bin/run-inner"
cp "$here/outer-responder" "$ov/bin/outer-responder"
cp "$qemu" "$ov$qemu"
cp "$qemu_mods/accel-tcg-x86_64.so" "$ov$qemu_mods/"
pack_libs "$ov" "$qemu" "$qemu_mods/accel-tcg-x86_64.so"
cp -rL /usr/share/qemu "$ov/usr/share/qemu"
cp -rL /usr/share/seabios "$ov/usr/share/seabios"
cp -rL /usr/lib/ipxe/qemu "$ov/usr/lib/ipxe/qemu"
cp "$kroot/boot/vmlinuz-$rel" "$ov/nested/vmlinuz"
cp "$outdir/inner.cpio" "$ov/nested/inner.cpio"
mkcpio "$ov" "$outdir/outer-overlay.cpio"
cat "$outdir/outer-base.cpio" "$outdir/outer-overlay.cpio" >"$outdir/outer.cpio.tmp"
mv "$outdir/outer.cpio.tmp" "$outdir/outer.cpio"
