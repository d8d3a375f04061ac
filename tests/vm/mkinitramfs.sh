#!/bin/bash
# mkinitramfs.sh RELEASE KROOT OUT MDGPU_KO BIN...
#
# Build the guest's initramfs (newc cpio, uncompressed: the kernel unpacks
# it fastest that way) from:
#   - busybox-static (applets installed as symlinks by /init at boot);
#   - the kernel's own vfio, vfio_iommu_type1, mdev and pci-stub modules plus every
#     module mdgpu.ko depends on (modinfo), closed over KROOT's modules.dep,
#     decompressed (busybox insmod cannot read .ko.xz), listed in load order
#     in /lib/modules/load.list;
#   - MDGPU_KO as /lib/modules/mdgpu.ko (skipped if the file does not exist:
#     the suite then reports the module tests as failed);
#   - each BIN into /bin (static test programs); a BIN written FILE=PATH
#     goes to PATH instead, with the shared libraries and dynamic loader
#     ldd names for it (tests/vm/pack-files.sh: tests/e2e/run-e2e.sh
#     carries mdgpu's libcuda.so.1 and a driver-API program this way);
#   - mdevctl with the shared libraries ldd names and its scripts.d dirs;
#   - tests/vm/init as /init, tests/vm/kmemleak as /bin/mdgpu-kmemleak;
#   - with VM_INNER_KERNEL and VM_INNER_BIN set (check-vm-qemu): QEMU itself
#     (qemu-system-x86_64, its libraries, firmware and TCG accelerator
#     module) plus /inner/vmlinuz and /inner/initramfs.cpio, a second
#     initramfs of busybox, tests/vm/init-inner and VM_INNER_BIN.
set -eu
rel=$1 kroot=$2 out=$3 ko=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
moddir=$kroot/lib/modules/$rel
# shellcheck source=tests/vm/pack-files.sh
. "$here/pack-files.sh"

stage=$(mktemp -d "${TMPDIR:-/tmp}/mdgpu-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,run,etc,lib/modules} \
	"$stage"/etc/mdevctl.d/scripts.d/{callouts,notifiers}
# The archive's "." is the guest's /: mktemp made it 0700, which no
# process but root's could cross (the cuda backend's sandboxed workers
# run as other uids).
chmod 755 "$stage"
chmod 1777 "$stage/tmp"

cp /bin/busybox "$stage/bin/busybox"
cp "$here/init" "$stage/init"
cp "$here/kmemleak" "$stage/bin/mdgpu-kmemleak"
chmod 755 "$stage/init" "$stage/bin/mdgpu-kmemleak"
for b in "$@"; do
	case $b in
	*=*) pack_files "$stage" "$b" ;;
	*) pack_files "$stage" "$b=/bin/${b##*/}" ;;
	esac
done

# Kernel modules, dependencies first.
declare -A done_mod=()
order=()
dep_line() {	# module name -> its modules.dep line
	local n=${1//-/_}
	grep -E "(^|/)(${n//_/[-_]})\.ko(\.xz|\.zst|\.gz)?:" "$moddir/modules.dep" |
		head -n1
}
add_mod() {
	local line path deps d
	line=$(dep_line "$1")
	[ -n "$line" ] || { echo "vm: module $1 not in $rel" >&2; return 1; }
	path=${line%%:*}
	[ -n "${done_mod[$path]:-}" ] && return 0
	done_mod[$path]=1
	deps=${line#*:}
	for d in $deps; do
		d=${d##*/}
		add_mod "${d%%.ko*}"
	done
	order+=("$path")
}
wanted="vfio vfio_iommu_type1 mdev"
if [ -f "$ko" ]; then
	wanted="$wanted $(modinfo -F depends "$ko" | tr ',' ' ')"
	cp "$ko" "$stage/lib/modules/mdgpu.ko"
fi
for m in $wanted; do
	add_mod "$m"
done
# pci-stub: the suite binds the stand-in GPU (edu) to it and unbinds it;
# where it is built in or missing, that test skips.
add_mod pci-stub || true
for p in "${order[@]}"; do
	base=${p##*/}
	case $base in
	*.xz) xz -dc "$moddir/$p" >"$stage/lib/modules/${base%.xz}" ;;
	*.zst) zstd -qdc "$moddir/$p" >"$stage/lib/modules/${base%.zst}" ;;
	*) cp "$moddir/$p" "$stage/lib/modules/$base" ;;
	esac
	echo "${base%.ko*}.ko" >>"$stage/lib/modules/load.list"
done

pack_files "$stage" /usr/bin/mdevctl=/usr/bin/mdevctl
ln -sf /usr/bin/mdevctl "$stage/bin/mdevctl"

if [ -n "${VM_INNER_KERNEL:-}" ]; then
	inner=$(mktemp -d "${TMPDIR:-/tmp}/mdgpu-inner.XXXXXX")
	mkdir -p "$inner"/{bin,dev,proc,sys} "$stage/inner"
	cp /bin/busybox "$VM_INNER_BIN" "$inner/bin/"
	cp "$here/init-inner" "$inner/init"
	(cd "$inner" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) \
		>"$stage/inner/initramfs.cpio"
	rm -rf "$inner"
	cp "$VM_INNER_KERNEL" "$stage/inner/vmlinuz"
	pack_files "$stage" /usr/bin/qemu-system-x86_64=/usr/bin/qemu-system-x86_64
	qmod=/usr/lib/x86_64-linux-gnu/qemu
	mkdir -p "$stage$qmod" "$stage/usr/share"
	cp "$qmod/accel-tcg-x86_64.so" "$stage$qmod/"
	cp -rL /usr/share/qemu /usr/share/seabios "$stage/usr/share/"
fi

(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out.$$"
mv "$out.$$" "$out"
