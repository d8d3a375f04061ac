#!/bin/bash
# run-e2e.sh RELEASE [test|demo]
#
# The end-to-end guest (Documentation/e2e.md): boot Debian's kernel RELEASE
# in QEMU TCG with the tests/vm initramfs (tests/vm/mkinitramfs.sh: busybox,
# the vfio stack, mdgpu.ko, mdevctl) plus the static mdgpud, the VFIO
# client mdgpu-e2e-client, mdgpuctl (dynamic: glibc comes along) and
# qemu-scripts/mdgpu-vgpu, its wrapper, mdgpu's
# libcuda.so.1 (where the mdgpu-libcuda package puts it) with the
# driver-API program test_driver, glibc and the dynamic loader, and
# libcuda/tests/driver-check.sh and qemu-scripts/libvirt/mdgpu-nodedev.xml,
# before it (test mode) an archive of Debian's libvirtd with its nodedev
# driver, virsh and udevadm (systemd-udevd) with their shared libraries
# (build/e2e/libvirt.cpio, kept), with tests/e2e/init as /init and
# tests/e2e/demo-run.sh as /bin/mdgpu-e2e-demo (appended cpio: a later
# entry replaces /init).
#
# test (default): prints the guest's PASS/FAIL lines and, last,
# "N passed, N failed"; exit status non-zero if a check failed, the guest
# crashed or timed out.  demo: prints the demo's tables.
#
# Environment: BUILD, VM_CACHE, MDGPU_KO, E2E_TIMEOUT (default 300 s),
# VM_SMP (default 2), VM_KROOT and VM_APPEND (as tests/vm/run-vm.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/vm/verdict.sh
. "$top/tests/vm/verdict.sh"
rel=${1:?usage: run-e2e.sh RELEASE [test|demo]}
mode=${2:-test}
BUILD=${BUILD:-$top/build}
cache=${VM_CACHE:-$top/.cache/vm}
timeout_s=${E2E_TIMEOUT:-300}
vm=$top/tests/vm

rel=$("$vm/kver-release.sh" "$rel")
ko=${MDGPU_KO:-$BUILD/kmod-$rel/mdgpu.ko}
out=$BUILD/e2e/$rel
mkdir -p "$out"
for b in "$BUILD/e2e/mdgpud" "$BUILD/e2e/mdgpu-e2e-client" "$BUILD/mdgpuctl"; do
	[ -x "$b" ] || { echo "e2e: $b not built (make e2e-bins tools)" >&2; exit 1; }
done

"$vm/fetch-kernel.sh" "$rel" "$cache"
kroot=${VM_KROOT:-$cache/$rel/root}
[ -f "$ko" ] || echo "e2e: $ko not built; every check will fail" >&2

# Files of this run carry its PID (several runs may share build/).
initrd=$out/initramfs.$$.cpio
log=$out/serial-$mode.$$.log
stage=$(mktemp -d "${TMPDIR:-/tmp}/mdgpu-e2e.XXXXXX")
keep() {
	rm -rf "$initrd" "$initrd.lv" "$stage"
	[ ! -f "$log" ] || mv -f "$log" "$out/serial-$mode.log"
	[ ! -f "$log.txt" ] || mv -f "$log.txt" "$out/serial-$mode.log.txt"
}
trap keep EXIT
"$vm/mkinitramfs.sh" "$rel" "$kroot" "$initrd" "$ko" \
	"$BUILD/e2e/mdgpud" "$BUILD/e2e/mdgpu-e2e-client" "$BUILD/mdgpuctl" \
	"$top/qemu-scripts/mdgpu-vgpu" \
	"$BUILD/libcuda/libcuda.so.1=/usr/lib/x86_64-linux-gnu/mdgpu/libcuda.so.1" \
	"$BUILD/libcuda/tests/test_driver=/bin/test_driver" \
	"$top/libcuda/tests/driver-check.sh=/bin/driver-check.sh" \
	"$BUILD/mdgpud-worker" \
	"$BUILD/cuda-fake/libcuda.so.1=/usr/lib/x86_64-linux-gnu/mdgpu-fake/libcuda.so.1" \
	"$top/qemu-scripts/libvirt/mdgpu-nodedev.xml=/usr/share/mdgpu/libvirt/mdgpu-nodedev.xml"
# Debian 12's libvirtd (libvirt-daemon) with its nodedev driver only,
# virsh, and udevadm run as systemd-udevd, which relays the kernel's
# uevents to libvirt, with their libraries (69 MB; packing takes about 3 s
# on this machine): an archive of their own, built once per build
# directory and again whenever dpkg's database changes (a package
# installed or upgraded), placed before the image so that the image's own
# copies of shared libraries are the ones unpacked last.  Not for the demo.
if [ "$mode" != demo ]; then
	lvcpio=$BUILD/e2e/libvirt.cpio
	# shellcheck source=tests/vm/pack-files.sh
	. "$vm/pack-files.sh"
	pack_libvirt_cpio "$lvcpio" /usr/bin/udevadm \
		/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_nodedev.so
	cat "$lvcpio" "$initrd" >"$initrd.lv"
	mv -f "$initrd.lv" "$initrd"
fi
mkdir -p "$stage/bin"
cp "$here/init" "$stage/init"
cp "$here/demo-run.sh" "$stage/bin/mdgpu-e2e-demo"
cp "$here/guest-daemon.sh" "$stage/bin/mdgpu-guest-daemon.sh"
chmod 755 "$stage/init" "$stage/bin/mdgpu-e2e-demo"
# /bin exists in the first archive: only the files are appended.
(cd "$stage" && printf 'init\nbin/mdgpu-e2e-demo\nbin/mdgpu-guest-daemon.sh\n' |
	cpio -o -H newc --quiet) >>"$initrd"

echo "e2e: booting $rel ($mode, TCG, timeout ${timeout_s}s), serial log $out/serial-$mode.log" >&2
start=$(date +%s.%N)
rc=0
timeout -k 5 "$timeout_s" qemu-system-x86_64 -accel tcg -cpu qemu64 -m 2G \
	-smp "${VM_SMP:-2}" -nographic -no-reboot -net none -device edu \
	-kernel "$kroot/boot/vmlinuz-$rel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 quiet loglevel=4 mdgpu.e2e=$mode ${VM_APPEND:-}" \
	</dev/null >"$log" 2>&1 || rc=$?
end=$(date +%s.%N)
sed 's/\r//g; s/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' "$log" >"$log.txt"

if [ "$mode" = demo ]; then
	sed -n 's/^| \{0,1\}//p' "$log.txt"
	awk -v t0="$start" -v t1="$end" 'BEGIN {
		printf "demo: qemu wall %.1f s\n", t1 - t0 }'
	grep -q '^| demo done' "$log.txt" || {
		echo "demo: the guest did not finish (see $out/serial-$mode.log)" >&2
		tail -n 30 "$log.txt" >&2
		exit 1
	}
	exit 0
fi

grep -E '^(PASS|FAIL|SKIP): |^    ' "$log.txt" || true
awk -v t0="$start" -v t1="$end" -v r="$rel" 'BEGIN {
	printf "e2e: %s: qemu wall %.1f s\n", r, t1 - t0 }'
vm_verdict e2e "$rel" "$log.txt" "$out/serial-$mode.log" "$rc" "$timeout_s"
