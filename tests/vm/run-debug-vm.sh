#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/vm/run-debug-vm.sh KVER
#
# The check-vm guest run with the allocator debugging Debian's stock
# kernels carry switched on at boot: slub_debug=FZPU (red zones, poisoning,
# consistency checks, alloc/free tracking), page_poison=1 and, where built
# in (6.12), KFENCE sampling every allocation interval of 1 ms; and two
# vCPUs, so the concurrency tests really run in parallel.  Use-after-free,
# double free or overflow in mdgpu.ko shows up as a "BUG ..." kernel
# message, which fails the suite's dmesg-clean check.  Expects `make
# check-vm KVER=...` (the module and the test binary) first.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
kver=${1:?usage: run-debug-vm.sh KVER}
BUILD=${BUILD:-$top/build}
rel=$("$top/tests/vm/kver-release.sh" "$kver")
kroot=${VM_CACHE:-$top/.cache/vm}/$rel/root
out=$BUILD/vm-debug/$rel
mkdir -p "$out"

"$top/tests/vm/fetch-kernel.sh" "$rel" "${VM_CACHE:-$top/.cache/vm}"
"$top/tests/vm/mkinitramfs.sh" "$rel" "$kroot" "$out/initramfs.cpio" \
	"$BUILD/kmod-$rel/mdgpu.ko" "$BUILD/vm/mdgpu-vmtest" >/dev/null
rc=0
timeout -k 5 "${VM_TIMEOUT:-300}" qemu-system-x86_64 -accel tcg -m 1G -smp 2 \
	-nographic -no-reboot -net none -device edu \
	-kernel "$kroot/boot/vmlinuz-$rel" -initrd "$out/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 quiet loglevel=4 slub_debug=FZPU page_poison=1 kfence.sample_interval=1" \
	</dev/null >"$out/serial.log" 2>&1 || rc=$?
tr -d '\r' <"$out/serial.log" >"$out/serial.txt"
grep -E '^(FAIL|SKIP): |^    ' "$out/serial.txt" || true
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/serial.txt" | tail -n1 || true)
echo "debug-vm: $rel: ${summary:-no summary (crash or timeout, rc $rc): see $out/serial.txt}"
case $summary in
*" 0 failed") [ "$rc" -eq 0 ] ;;
*) exit 1 ;;
esac
