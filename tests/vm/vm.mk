# tests/vm/vm.mk: the QEMU TCG guest suite for mdgpu.ko (included by the
# top-level Makefile).  Documentation/testing-vm.md describes it.
#
#   make check-vm KVER=6.1|6.12 [VM_TEST=name]   one kernel (or one test)
#   make check-vm-all                            both kernels
#   tests/vm/run-debug-vm.sh 6.1|6.12            the suite with slub_debug,
#        page poisoning and KFENCE (after `make check-vm KVER=...`)
#   make check-vm-qemu KVER=6.1|6.12             QEMU's vfio-pci on an mdev,
#        nested in the TCG guest (about 5 minutes; not part of `check`)
#   make check-vm-debug [DEBUG_SUITES="vm e2e nested"]
#        the VM and e2e suites (default) on a 6.12 debug kernel built from
#        linux-source-6.12 with KASAN, lockdep, atomic-sleep checks,
#        kmemleak and list debugging (scripts/build-debug-kernel.sh,
#        tests/vm/run-debug-kernel.sh); fails on any report.  Not part of
#        `check`: the first build alone takes longer than CI's budget.
#
# The module is built with kmod.mk's `make modules KVER=<full release>`.  A
# module that fails to build does not stop the run: the guest boots without
# it and reports the module tests as failed.

VM_DIR := $(TOP)/tests/vm
VM_BUILD := $(BUILD)/vm
VM_KVERS ?= 6.1 6.12
VM_TEST ?=
VM_CFLAGS := $(CFLAGS_COMMON) -static
# Tests run in link order: t-lifecycle.c ends with the module unloads;
# t-kmod-corners.c (the module author's corner cases) comes after it.
VM_TEST_SRCS := $(addprefix $(VM_DIR)/,vmtest.c vgpu.c main.c t-control.c \
	t-device.c t-irq.c t-ring.c t-daemon.c t-gen.c t-knobs.c t-pci.c \
	t-aperture-fd.c t-hostile.c \
	t-lifecycle.c \
	t-kmod-corners.c)
VM_TEST_HDRS := $(VM_DIR)/vmtest.h $(VM_DIR)/vgpu.h \
	$(TOP)/include/uapi/mdgpu.h $(TOP)/mdev-types/mdgpu-types.def

.PHONY: check-vm check-vm-all check-vm-qemu check-vm-debug check-vm-debug-lint \
	vm-test-bin
DEBUG_SUITES ?= vm e2e

vm-test-bin: $(VM_BUILD)/mdgpu-vmtest $(VM_BUILD)/mdgpu-pcitest

$(VM_BUILD)/mdgpu-pcitest: $(VM_DIR)/mdgpu-pcitest.c $(TOP)/include/uapi/mdgpu.h
	@mkdir -p $(dir $@)
	$(CC) $(VM_CFLAGS) -o $@ $<

$(VM_BUILD)/mdgpu-vmtest: $(VM_TEST_SRCS) $(VM_TEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(VM_CFLAGS) -o $@ $(VM_TEST_SRCS)

check-vm: vm-test-bin
	@test -n "$(KVER)" || { echo "usage: make check-vm KVER=6.1|6.12"; exit 2; }
	@rel=$$($(VM_DIR)/kver-release.sh $(KVER)) && \
	{ $(MAKE) --no-print-directory modules KVER=$$rel KMOD_W=1 || \
	  echo "vm: module build for $$rel failed; booting without it"; } && \
	$(VM_DIR)/run-vm.sh $$rel $(VM_TEST)

check-vm-qemu: vm-test-bin
	@test -n "$(KVER)" || { echo "usage: make check-vm-qemu KVER=6.1|6.12"; exit 2; }
	@rel=$$($(VM_DIR)/kver-release.sh $(KVER)) && \
	{ $(MAKE) --no-print-directory modules KVER=$$rel KMOD_W=1 || \
	  echo "vm: module build for $$rel failed; booting without it"; } && \
	VM_MODE=qemu $(VM_DIR)/run-vm.sh $$rel

# e2e-bins: tests/e2e/e2e.mk.
check-vm-debug: vm-test-bin e2e-bins
	@$(VM_DIR)/run-debug-kernel.sh $(DEBUG_SUITES)

# The debug kernel's scripts stay checked in CI, which does not run them.
check-vm-debug-lint:
	shellcheck -s sh $(VM_DIR)/kmemleak
	cd $(TOP) && shellcheck -x scripts/build-debug-kernel.sh \
		tests/vm/run-debug-kernel.sh tests/vm/kernel-reports.sh

check: check-vm-debug-lint

# Both kernels run even if the first fails; the target fails if either did.
check-vm-all: vm-test-bin
	@rc=0; for k in $(VM_KVERS); do \
		$(MAKE) --no-print-directory check-vm KVER=$$k || rc=1; \
	done; exit $$rc

check: check-vm-all
