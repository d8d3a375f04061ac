#!/bin/bash
# run-nested.sh KVER
#
# The nested end-to-end test: boot Debian's kernel KVER (6.1, 6.12 or a
# full release) in a QEMU TCG "outer" guest that loads mdgpu.ko, runs the
# test responder, creates an mdev and boots an "inner" guest (same kernel)
# with -device vfio-pci,sysfsdev=<mdev>; the inner guest loads
# mdgpu-guest.ko and runs mdgpu-client.  The last line printed is the
# total "N passed, N failed"; the exit status is non-zero if a check
# failed, a guest crashed or the run timed out.  An inner kernel that
# crashed with no mdgpu code in its trace, or failed before its /init,
# gets one more boot (nested_retry_reason, tests/nested/boot-outer.sh);
# the first console is kept as serial.log.attempt1.txt.
#
# Environment: BUILD (default <repo>/build), VM_CACHE (default
# <repo>/.cache/vm), NESTED_TIMEOUT outer seconds (default 600),
# NESTED_INNER_TIMEOUT inner seconds (default 540), NESTED_BOOT_TIMEOUT
# seconds for the inner kernel to reach its /init (default 300,
# tests/nested/boot-outer.sh), NESTED_CPU and
# NESTED_INNER_CPU the -cpu models (default qemu64; inner: qemu64 for 6.1,
# max,-cx16 otherwise: nested_inner_cpu), NESTED_VERBOSE=1 (inner kernel not quiet), MDGPU_KO (default
# $BUILD/kmod-<release>/mdgpu.ko), GUEST_KO (default
# $BUILD/guest-<release>/mdgpu-guest.ko), NESTED_BINS (directory holding
# mdgpu-responder and mdgpu-client, default $BUILD/nested), VM_KROOT and
# VM_APPEND (as tests/vm/run-vm.sh; the inner guest boots the same kernel).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/vm/verdict.sh
. "$top/tests/vm/verdict.sh"
# shellcheck source=tests/nested/boot-outer.sh
. "$here/boot-outer.sh"
kver=${1:?usage: run-nested.sh KVER}
BUILD=${BUILD:-$top/build}
cache=${VM_CACHE:-$top/.cache/vm}
timeout_s=${NESTED_TIMEOUT:-600}
inner_timeout_s=${NESTED_INNER_TIMEOUT:-540}

rel=$("$top/tests/vm/kver-release.sh" "$kver")
inner_cpu=$(nested_inner_cpu "$rel")
ko=${MDGPU_KO:-$BUILD/kmod-$rel/mdgpu.ko}
gko=${GUEST_KO:-$BUILD/guest-$rel/mdgpu-guest.ko}
bins=${NESTED_BINS:-$BUILD/nested}
out=$BUILD/nested/$rel
mkdir -p "$out"

for f in "$gko" "$bins/mdgpu-responder" "$bins/mdgpu-client"; do
	[ -f "$f" ] || { echo "nested: $f not built"; echo "0 passed, 1 failed"; exit 1; }
done
[ -f "$ko" ] || echo "nested: $ko not built; the outer guest will fail" >&2
"$top/tests/vm/fetch-kernel.sh" "$rel" "$cache"
kroot=${VM_KROOT:-$cache/$rel/root}
"$here/mkinitramfs-nested.sh" "$rel" "$kroot" "$out" "$ko" "$gko" \
	"$bins/mdgpu-responder" "$bins/mdgpu-client"

log=$out/serial.log
echo "nested: booting $rel (TCG in TCG, timeout ${timeout_s}s), serial log $log" >&2
nested_boot_outer nested "$rel" "$kroot" "$out/outer.cpio" "$log" "$timeout_s" \
	"$inner_timeout_s" "$inner_cpu"

grep -E '^(inner\| )?(PASS|FAIL): |^(inner\| )?    ' "$log.txt" || true
awk -v t0="$start" -v t1="$end" -v r="$rel" 'BEGIN {
	printf "nested: %s: outer qemu wall %.1f s\n", r, t1 - t0 }'
grep -E '^nested-outer: (inner QEMU|booted)|^inner\| nested-inner: (booted|client)' \
	"$log.txt" || true

vm_verdict nested "$rel" "$log.txt" "$log" "$rc" "$timeout_s" '(inner\| )?'
