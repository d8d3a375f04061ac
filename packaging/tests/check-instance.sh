#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# check-instance.sh MDGPUD_INSTANCE: the installed mdgpud-instance against
# a fake sysfs (MDGPU_SYSFS) and a stand-in mdgpud (MDGPUD_BIN) that
# prints its arguments and CUDA's environment.  A PCI address is passed
# on as cuda_device in canonical form (mdgpud finds the GPU by it); bad
# ones are refused with why.
set -euo pipefail
inst=${1:?}
t="${PACKAGING_TEST_DIR:?}/instance"
rm -rf "$t"
mkdir -p "$t/sys/bus/pci/drivers/nvidia" "$t/sys/bus/pci/drivers/vfio-pci" \
	"$t/conf" "$t/run"
fail() { echo "check-packaging: FAIL: mdgpud-instance: $*" >&2; exit 1; }
dev() { # address vendor driver
	mkdir -p "$t/sys/devices/pci/$1"
	echo "$2" >"$t/sys/devices/pci/$1/vendor"
	mkdir -p "$t/sys/bus/pci/devices"
	ln -s "../../../devices/pci/$1" "$t/sys/bus/pci/devices/$1"
	[ -z "$3" ] || ln -s "../../../../devices/pci/$1" \
		"$t/sys/bus/pci/drivers/$3/$1"
}
dev 0000:01:00.0 0x10de nvidia
dev 0000:21:00.0 0x10de vfio-pci
dev 0000:41:00.0 0x10de nvidia
dev 0000:c1:00.0 0x10de nvidia
dev 0000:e1:00.0 0x8086 ""
# shellcheck disable=SC2016 # expanded by the stand-in, not here
printf '#!/bin/sh\necho "CUDA_DEVICE_ORDER=$CUDA_DEVICE_ORDER CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset} $*"\n' \
	>"$t/fake-mdgpud"
chmod +x "$t/fake-mdgpud"
: >"$t/conf/mdgpud.conf"
: >"$t/conf/mdgpud@0000:c1:00.0.conf"
run() {
	MDGPU_SYSFS="$t/sys" MDGPUD_BIN="$t/fake-mdgpud" MDGPU_CONFDIR="$t/conf" \
	RUNTIME_DIRECTORY="$t/run/$2" CUDA_VISIBLE_DEVICES=3 "$inst" "$1" 2>&1
}
n=0
expect() { # instance runtime-dir-name expected-output
	out=$(run "$1" "$2") || true
	[ "$out" = "$3" ] || fail "$1: got '$out', expected '$3'"
	n=$((n + 1))
}
c="$t/conf"
expect 0000:01:00.0 a "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=unset -c $c/mdgpud.conf -o backend=cuda -o cuda_device=0000:01:00.0 -o socket_path=$t/run/a/mdgpud.sock"
expect 0000:41:00.0 b "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=unset -c $c/mdgpud.conf -o backend=cuda -o cuda_device=0000:41:00.0 -o socket_path=$t/run/b/mdgpud.sock"
expect 41:00.0 b "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=unset -c $c/mdgpud.conf -o backend=cuda -o cuda_device=0000:41:00.0 -o socket_path=$t/run/b/mdgpud.sock"
expect 0000:C1:00.0 c "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=unset -c $c/mdgpud@0000:c1:00.0.conf -o backend=cuda -o cuda_device=0000:c1:00.0 -o socket_path=$t/run/c/mdgpud.sock"
expect 0000:21:00.0 d "mdgpud-instance: 0000:21:00.0 is not bound to the nvidia driver (CUDA cannot see it)"
expect 0000:e1:00.0 d "mdgpud-instance: 0000:e1:00.0 is not an NVIDIA device"
expect 0000:99:00.0 d "mdgpud-instance: no PCI device 0000:99:00.0"
expect 'gpu0' d "mdgpud-instance: 'gpu0' is not a PCI address like 0000:41:00.0"
expect '0000:41:00.0;x' d "mdgpud-instance: '0000:41:00.0;x' is not a PCI address like 0000:41:00.0"
# shellcheck disable=SC2016 # the script's text
grep -q '^mdgpud=${MDGPUD_BIN:-/usr/libexec/mdgpu/mdgpud}$' "$inst" ||
	fail "installed script does not exec /usr/libexec/mdgpu/mdgpud"
echo "   ok: mdgpud-instance: $n cases on a fake sysfs (cuda_device the canonical address, 41:00.0 and upper case included, per-GPU config, 5 refusals), exec path /usr/libexec/mdgpu/mdgpud"
