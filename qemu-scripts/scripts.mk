# SPDX-License-Identifier: GPL-2.0 OR MIT
# qemu-scripts: static checks (shellcheck, libvirt schema validation).
# The scripts run for real inside the VM suites.
QS_DIR := $(TOP)/qemu-scripts
.PHONY: check-scripts
check-scripts:
	shellcheck $(QS_DIR)/mdgpu-vgpu $(QS_DIR)/run-vm.sh
	virt-xml-validate $(QS_DIR)/libvirt/mdgpu-domain.xml domain
	virt-xml-validate $(QS_DIR)/libvirt/mdgpu-nodedev.xml nodedev
check: check-scripts
