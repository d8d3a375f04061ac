#!/bin/bash
# run-vm.sh KVER [TEST]
#
# Boot Debian's own kernel KVER (6.1, 6.12, or a full release) in QEMU TCG
# with the mdgpu test initramfs and report the guest's results.  The last
# line printed is "N passed, N failed"; the exit status is non-zero if a
# check failed, the guest crashed or it timed out.
#
# Environment: BUILD (default <repo>/build), VM_CACHE (default
# <repo>/.cache/vm), VM_TIMEOUT seconds (default 120), MDGPU_KO (default
# $BUILD/kmod-<release>/mdgpu.ko), VM_BINS (static test programs, default
# $BUILD/vm/mdgpu-vmtest), VM_SMP vCPUs (default 2: the race tests need
# two to race for real; MTTCG runs them on two host threads at no extra
# wall time here).  TEST runs only that test of mdgpu-vmtest.
# The guest has QEMU's `edu` PCI device (-device edu), which stands in for
# the GPU: the suite registers it as the mdev parent.
# VM_SHELL=1: boot to a shell on this terminal instead (debugging).
# VM_MODE=qemu: the nested test instead (check-vm-qemu): the guest runs
# QEMU with -device vfio-pci,sysfsdev= on an mdev; VM_INNER_BIN (default
# $BUILD/vm/mdgpu-pcitest) runs in the inner guest.
# VM_KROOT: boot that kernel tree instead of Debian's (fetch-kernel.sh);
# VM_APPEND: more kernel command-line arguments (last ones win).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/vm/verdict.sh
. "$here/verdict.sh"
kver=${1:?usage: run-vm.sh KVER [TEST]}
only=${2:-}
BUILD=${BUILD:-$top/build}
cache=${VM_CACHE:-$top/.cache/vm}
mode=${VM_MODE:-}
timeout_s=${VM_TIMEOUT:-120}
mem=1G
cpu=qemu64

rel=$("$here/kver-release.sh" "$kver")
ko=${MDGPU_KO:-$BUILD/kmod-$rel/mdgpu.ko}
bins=${VM_BINS:-$BUILD/vm/mdgpu-vmtest}
out=$BUILD/vm/$rel
mkdir -p "$out"

"$here/fetch-kernel.sh" "$rel" "$cache"
kroot=${VM_KROOT:-$cache/$rel/root}
[ -f "$ko" ] || echo "vm: $ko not built; the module tests will fail" >&2
if [ "$mode" = qemu ]; then
	export VM_INNER_KERNEL=$kroot/boot/vmlinuz-$rel
	export VM_INNER_BIN=${VM_INNER_BIN:-$BUILD/vm/mdgpu-pcitest}
	timeout_s=${VM_TIMEOUT:-590}
	mem=2G	# the inner guest's 256M and QEMU come out of this
	# With the outer CPU at qemu64 the inner 6.12 kernel double-faulted
	# early in boot (SLUB, cmpxchg16b) under nested TCG; -cpu max boots
	# it, slower.  Cause not investigated.
	cpu=max
fi
# Several runs may share this build directory at once: every file
# of this run carries its PID and is renamed to its stable name at the end.
initrd=$out/initramfs.$$.cpio
log=$out/serial.$$.log
keep() {
	rm -f "$initrd"
	[ ! -f "$log" ] || mv -f "$log" "$out/serial.log"
	[ ! -f "$log.txt" ] || mv -f "$log.txt" "$out/serial.log.txt"
}
trap keep EXIT
# shellcheck disable=SC2086
"$here/mkinitramfs.sh" "$rel" "$kroot" "$initrd" "$ko" $bins

if [ -n "${VM_SHELL:-}" ]; then
	# Debugging: a shell on this terminal instead of the suite.
	qemu-system-x86_64 -accel tcg -m "$mem" -smp "${VM_SMP:-2}" \
		-nographic -no-reboot -net none -device edu \
		-kernel "$kroot/boot/vmlinuz-$rel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet mdgpu.shell"
	exit
fi
echo "vm: booting $rel (TCG, timeout ${timeout_s}s), serial log $out/serial.log" >&2
start=$(date +%s.%N)
rc=0
timeout -k 5 "$timeout_s" qemu-system-x86_64 -accel tcg -cpu "$cpu" -m "$mem" -smp "${VM_SMP:-2}" \
	-nographic -no-reboot -net none -device edu \
	-kernel "$kroot/boot/vmlinuz-$rel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 quiet loglevel=4 ${only:+mdgpu.only=$only} ${mode:+mdgpu.mode=$mode} ${VM_APPEND:-}" \
	</dev/null >"$log" 2>&1 || rc=$?
end=$(date +%s.%N)
# Console text without CRs and terminal escapes (SeaBIOS and the kernel
# clear the screen).
sed 's/\r//g; s/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' "$log" >"$log.txt"

grep -E '^(PASS|FAIL|SKIP): |^    ' "$log.txt" || true
up() { sed -n "s/.*mdgpu-vm: $1.*uptime \([0-9.]*\).*/\1/p" "$log.txt" | tail -n1; }
boot=$(up booted) s0=$(up 'suite start') s1=$(up 'suite end')
awk -v t0="$start" -v t1="$end" -v b="${boot:-?}" -v s0="${s0:-0}" \
	-v s1="${s1:-0}" -v r="$rel" 'BEGIN {
	printf "vm: %s: qemu wall %.1f s, guest uptime at init %s s, suite %.1f s\n",
		r, t1 - t0, b, s1 - s0 }'

vm_verdict vm "$rel" "$log.txt" "$out/serial.log" "$rc" "$timeout_s"
