#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# run-vm.sh: start a QEMU VM with an mdgpu vGPU attached through vfio-pci.
#
#   run-vm.sh UUID DISK_OR_KERNEL [extra qemu arguments...]
#
# DISK_OR_KERNEL is a disk image (virtio) or, for test guests, a kernel
# image used with -kernel (then pass -initrd/-append as extra arguments).
# QEMU_ACCEL (default kvm:tcg), QEMU_MEM (default 2G) and QEMU_BIN override
# the defaults.  The vGPU appears in the guest as PCI 1234:6d67.
set -eu
[ $# -ge 2 ] || { echo "usage: run-vm.sh UUID DISK_OR_KERNEL [qemu args]" >&2; exit 1; }
uuid=$1 img=$2
shift 2
dev=/sys/bus/mdev/devices/$uuid
[ -d "$dev" ] || { echo "run-vm.sh: no mdev $uuid" >&2; exit 1; }
case $img in
*vmlinuz*|*bzImage*) boot="-kernel $img" ;;
*) boot="-drive file=$img,if=virtio" ;;
esac
# shellcheck disable=SC2086
exec "${QEMU_BIN:-qemu-system-x86_64}" \
	-machine "q35,accel=${QEMU_ACCEL:-kvm:tcg}" -m "${QEMU_MEM:-2G}" -nographic \
	$boot -device "vfio-pci,sysfsdev=$dev" "$@"
