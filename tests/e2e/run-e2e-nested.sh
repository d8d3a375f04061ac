#!/bin/bash
# run-e2e-nested.sh RELEASE
#
# The nested end-to-end test (Documentation/e2e.md): an outer QEMU TCG
# guest loads mdgpu.ko and runs mdgpud (kernel transport; the cuda
# backend over CI's fake libcuda.so.1, its workers sandboxed, or with
# E2E_NESTED_BACKEND=sim the sim backend),
# creates a vGPU and runs an inner QEMU with
# -device vfio-pci,sysfsdev=/sys/bus/mdev/devices/$UUID; the inner guest
# loads mdgpu-guest.ko and runs mdgpu-e2e-client over libmdgpu's "guest"
# transport.  The last line printed is "N passed, N failed"; the exit
# status is non-zero if a check failed, a guest crashed or the run timed
# out.
#
# Packing is tests/nested/mkinitramfs-nested.sh's, called as it is, with
# mdgpud in the place of its test responder and mdgpu-e2e-client in the
# place of its client (installed as /bin/mdgpud and /bin/mdgpu-client),
# and for the inner image mdgpu's libcuda.so.1 (where the mdgpu-libcuda
# package puts it), libcuda/tests/rt-check.sh and driver-check.sh,
# test_driver and, when it was built (nvcc present), rt_basic with glibc
# and the dynamic loader.
# Two cpio archives are then appended, later entries replacing earlier
# ones: to the inner image, tests/e2e/nested-inner-init as /init; to the
# outer image, tests/e2e/nested-outer-init as /init and the new inner
# image as /nested/inner.cpio.
#
# E2E_NESTED_DRIVER=1: the driver suite of tests/nested (run-nested.sh's
# checks against its test responder) shares this boot instead of booting
# its own pair of guests: the outer image also carries
# mdgpu-responder, the inner image the suite's client as
# /bin/mdgpu-nested-client and tests/nested/inner-init as
# /bin/nested-driver-suite (NESTED_BINS, default $BUILD/nested, holds the
# two programs).  Before the total it prints each suite's own
# "N passed, N failed".
#
# E2E_NESTED_LIBVIRT=1 (default): the outer image also carries Debian's
# libvirtd with its QEMU driver, and the outer /init starts the inner
# guest as a libvirt domain whose mdev <hostdev> is the one of
# qemu-scripts/libvirt/mdgpu-domain.xml; 0: QEMU directly.
#
# E2E_NESTED_BACKEND=cuda (default): the outer image also carries
# mdgpud-worker as /bin/mdgpud-worker and the fake libcuda.so.1 in
# /usr/lib/x86_64-linux-gnu/mdgpu-fake with their libraries, and the
# outer /init starts mdgpud on the cuda backend when it finds them.
#
# Environment: BUILD, VM_CACHE, MDGPU_KO, GUEST_KO, E2E_NESTED_RT_BASIC
# (rt_basic to run, default $BUILD/libcuda/tests/rt_basic if built; empty:
# none), E2E_NESTED_TIMEOUT
# outer seconds (default 600), E2E_NESTED_INNER_TIMEOUT (default 540),
# NESTED_BOOT_TIMEOUT (tests/nested/boot-outer.sh, default 300),
# NESTED_CPU, NESTED_INNER_CPU (as tests/nested/run-nested.sh: inner
# qemu64 for 6.1, max,-cx16 otherwise, nested_inner_cpu), NESTED_VERBOSE=1, VM_KROOT and VM_APPEND
# (as tests/vm/run-vm.sh; the inner guest boots the same kernel).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/vm/verdict.sh
. "$top/tests/vm/verdict.sh"
# shellcheck source=tests/nested/boot-outer.sh
. "$top/tests/nested/boot-outer.sh"
# shellcheck source=tests/vm/pack-files.sh
. "$top/tests/vm/pack-files.sh"
BUILD=${BUILD:-$top/build}
cache=${VM_CACHE:-$top/.cache/vm}
timeout_s=${E2E_NESTED_TIMEOUT:-600}
inner_timeout_s=${E2E_NESTED_INNER_TIMEOUT:-540}

rel=$("$top/tests/vm/kver-release.sh" "${1:?usage: run-e2e-nested.sh RELEASE}")
inner_cpu=$(nested_inner_cpu "$rel")
ko=${MDGPU_KO:-$BUILD/kmod-$rel/mdgpu.ko}
gko=${GUEST_KO:-$BUILD/guest-$rel/mdgpu-guest.ko}
daemon=$BUILD/e2e/mdgpud
client=$BUILD/e2e/mdgpu-e2e-client
libcuda=$BUILD/libcuda/libcuda.so.1
test_driver=$BUILD/libcuda/tests/test_driver
rt_basic=${E2E_NESTED_RT_BASIC-$BUILD/libcuda/tests/rt_basic}
[ -z "$rt_basic" ] || [ -f "$rt_basic" ] || rt_basic=
driver=${E2E_NESTED_DRIVER:-}
backend=${E2E_NESTED_BACKEND:-cuda}
worker=$BUILD/mdgpud-worker
fake=$BUILD/cuda-fake/libcuda.so.1
case $backend in
cuda) need=("$worker" "$fake") ;;
sim) need=() ;;
*) echo "e2e-nested: E2E_NESTED_BACKEND=$backend: cuda or sim"; echo "0 passed, 1 failed"; exit 1 ;;
esac
bins=${NESTED_BINS:-$BUILD/nested}
driver_inner=()
if [ -n "$driver" ]; then
	for f in "$bins/mdgpu-responder" "$bins/mdgpu-client"; do
		[ -f "$f" ] || { echo "e2e-nested: $f not built"; echo "0 passed, 1 failed"; exit 1; }
	done
	driver_inner=("$bins/mdgpu-client=/bin/mdgpu-nested-client"
		"$top/tests/nested/inner-init=/bin/nested-driver-suite")
fi
out=$BUILD/e2e-nested/$rel
mkdir -p "$out"
for f in "$gko" "$daemon" "$client" "$libcuda" "$test_driver" ${need[@]+"${need[@]}"}; do
	[ -f "$f" ] || { echo "e2e-nested: $f not built"; echo "0 passed, 1 failed"; exit 1; }
done
[ -f "$ko" ] || echo "e2e-nested: $ko not built; the outer guest will fail" >&2
"$top/tests/vm/fetch-kernel.sh" "$rel" "$cache"
kroot=${VM_KROOT:-$cache/$rel/root}

# Files of this run carry its PID (several runs may share build/).
work=$out/pack.$$
stage=$(mktemp -d "${TMPDIR:-/tmp}/mdgpu-e2e-nested.XXXXXX")
log=$out/serial.$$.log
keep() {
	rm -rf "$work" "$stage"
	[ ! -f "$log" ] || mv -f "$log" "$out/serial.log"
	[ ! -f "$log.txt" ] || mv -f "$log.txt" "$out/serial.log.txt"
	# A first console of an earlier run would be taken for this one's.
	if [ -f "$log.attempt1.txt" ]; then
		mv -f "$log.attempt1.txt" "$out/serial.log.attempt1.txt"
	else
		rm -f "$out/serial.log.attempt1.txt"
	fi
}
trap keep EXIT
mkdir -p "$work"
"$top/tests/nested/mkinitramfs-nested.sh" "$rel" "$kroot" "$work" "$ko" \
	"$gko" "$daemon" "$client" \
	"$libcuda=/usr/lib/x86_64-linux-gnu/mdgpu/libcuda.so.1" \
	"$test_driver=/bin/test_driver" \
	"$top/libcuda/tests/rt-check.sh=/bin/rt-check.sh" \
	"$top/libcuda/tests/driver-check.sh=/bin/driver-check.sh" \
	${rt_basic:+"$rt_basic=/bin/rt_basic"} ${driver_inner[@]+"${driver_inner[@]}"}
mkdir -p "$stage/inner" "$stage/outer/nested" "$stage/outer/bin"
cp "$here/nested-inner-init" "$stage/inner/init"
chmod 755 "$stage/inner/init"
cp "$work/inner.cpio" "$stage/outer/nested/inner.cpio"
(cd "$stage/inner" && echo init | cpio -o -H newc --quiet) \
	>>"$stage/outer/nested/inner.cpio"
cp "$here/nested-outer-init" "$stage/outer/init"
cp "$here/guest-daemon.sh" "$stage/outer/bin/mdgpu-guest-daemon.sh"
chmod 755 "$stage/outer/init"
# E2E_NESTED_LIBVIRT=1 (default): Debian 12's libvirtd with its QEMU
# driver (and libvirt's CPU models); the outer guest starts the inner one
# as a libvirt domain with the vGPU as an mdev <hostdev>
# (RUN_INNER_LIBVIRT in tests/nested/run-inner).  Its own archive, kept
# between runs, placed before the image.
if [ "${E2E_NESTED_LIBVIRT:-1}" = 1 ]; then
	lvcpio=$BUILD/e2e-nested/libvirt-qemu.cpio
	# shellcheck disable=SC2046  # packed paths hold no blanks
	pack_libvirt_cpio "$lvcpio" \
		/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so \
		$(find /usr/share/libvirt/cpu_map -type f | LC_ALL=C sort)
	cat "$lvcpio" "$work/outer.cpio" >"$work/outer-e2e.cpio"
else
	cp "$work/outer.cpio" "$work/outer-e2e.cpio"
fi
pack_files "$stage/outer" \
	"$top/qemu-scripts/libvirt/mdgpu-domain.xml=/usr/share/mdgpu/libvirt/mdgpu-domain.xml"
[ -z "$driver" ] ||
	cp "$bins/mdgpu-responder" "$stage/outer/bin/mdgpu-responder"
[ "$backend" != cuda ] ||
	pack_files "$stage/outer" "$worker=/bin/mdgpud-worker" \
		"$fake=/usr/lib/x86_64-linux-gnu/mdgpu-fake/libcuda.so.1"
# Everything staged but the root directory, whose mode stays the image's.
(cd "$stage/outer" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc --quiet) >>"$work/outer-e2e.cpio"

echo "e2e-nested: booting $rel (TCG in TCG, inner -cpu $inner_cpu, timeout ${timeout_s}s), serial log $out/serial.log" >&2
nested_boot_outer e2e-nested "$rel" "$kroot" "$work/outer-e2e.cpio" "$log" \
	"$timeout_s" "$inner_timeout_s" "$inner_cpu"

grep -E '^(inner\| )?(PASS|FAIL|SKIP): |^(inner\| )?    ' "$log.txt" |
	grep -vE '^(inner\| )?    (dmesg|mdgpud): ' || true
awk -v t0="$start" -v t1="$end" -v r="$rel" 'BEGIN {
	printf "e2e-nested: %s: outer qemu wall %.1f s\n", r, t1 - t0 }'
grep -E '^nested-outer: (inner QEMU|booted)|^inner\| nested-inner: (booted|client|libcuda)' \
	"$log.txt" || true

if [ -n "$driver" ]; then
	echo "nested (driver suite, in this boot): $rel:" \
		"$(sed -n 's/^nested-driver: //p' "$log.txt" | tail -n1)"
	echo "e2e-nested: $rel:" \
		"$(sed -n 's/^e2e-nested: \([0-9]* passed\)/\1/p' "$log.txt" | tail -n1)"
fi
vm_verdict e2e-nested "$rel" "$log.txt" "$out/serial.log" "$rc" "$timeout_s" '(inner\| )?'
