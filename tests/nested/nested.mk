# SPDX-License-Identifier: GPL-2.0
# tests/nested/nested.mk: the nested QEMU end-to-end test (included by the
# top-level Makefile).  Documentation/guest-driver.md describes it.
#
#   make check-nested KVER=6.1|6.12   one kernel
#   make check-nested-all             both kernels
#   make check-nested-ci              NESTED_CI_KVERS (6.12) in boots of
#        their own.  `make check` runs this suite's checks on
#        NESTED_CI_KVERS inside the nested e2e's boot instead
#        (check-e2e-nested-all, E2E_NESTED_DRIVER=1 in tests/e2e/e2e.mk):
#        the same kernels and the same checks, one pair of nested guests
#        booted instead of two (about 2 minutes less on 2 cores;
#        Documentation/testing-vm.md, "CI layout and timings").
#   make check-nested-lint            shellcheck of the scripts
#   make check-nested-retry           the runners' decision to boot once
#        more, on saved consoles (tests/nested/test-boot-outer.sh; no
#        guest is booted)
#
# Needs mdgpu.ko (kmod.mk's `make modules KVER=<release>`), mdgpu-guest.ko
# (guest.mk's `make guest-modules KVER=...`) and the two static programs.

NESTED_DIR := $(TOP)/tests/nested
NESTED_BUILD := $(BUILD)/nested
NESTED_KVERS ?= 6.1 6.12
NESTED_CI_KVERS ?= 6.12
NESTED_CFLAGS := $(CFLAGS_COMMON) -I$(TOP)/guest/include/uapi -static

.PHONY: check-nested check-nested-all check-nested-ci check-nested-lint \
	check-nested-retry nested-bins

nested-bins: $(NESTED_BUILD)/mdgpu-responder $(NESTED_BUILD)/mdgpu-client

$(NESTED_BUILD)/mdgpu-responder: $(NESTED_DIR)/responder.c \
		$(TOP)/include/uapi/mdgpu.h
	@mkdir -p $(dir $@)
	$(CC) $(NESTED_CFLAGS) -o $@ $<

$(NESTED_BUILD)/mdgpu-client: $(NESTED_DIR)/client.c \
		$(TOP)/include/uapi/mdgpu.h $(TOP)/guest/include/uapi/mdgpu-guest.h
	@mkdir -p $(dir $@)
	$(CC) $(NESTED_CFLAGS) -o $@ $<

check-nested: nested-bins
	@test -n "$(KVER)" || { echo "usage: make check-nested KVER=6.1|6.12"; exit 2; }
	@rel=$$($(TOP)/tests/vm/kver-release.sh $(KVER)) && \
	{ $(MAKE) --no-print-directory modules KVER=$$rel KMOD_W=1 || \
	  echo "nested: mdgpu.ko build for $$rel failed; booting without it"; } && \
	$(MAKE) --no-print-directory guest-modules KVER=$(KVER) GUEST_W=1 && \
	$(NESTED_DIR)/run-nested.sh $$rel

# Both kernels run even if the first fails; the target fails if either did.
check-nested-all: nested-bins
	@rc=0; for k in $(NESTED_KVERS); do \
		$(MAKE) --no-print-directory check-nested KVER=$$k || rc=1; \
	done; exit $$rc

check-nested-lint:
	shellcheck -s sh $(NESTED_DIR)/inner-init $(NESTED_DIR)/outer-init \
		$(NESTED_DIR)/run-inner $(NESTED_DIR)/outer-responder \
		$(TOP)/tests/e2e/nested-outer-init $(TOP)/tests/e2e/nested-inner-init \
		$(TOP)/tests/e2e/guest-daemon.sh
	cd $(TOP) && shellcheck -x $(NESTED_DIR)/run-nested.sh \
		$(NESTED_DIR)/mkinitramfs-nested.sh $(NESTED_DIR)/boot-outer.sh \
		$(NESTED_DIR)/test-boot-outer.sh tests/e2e/run-e2e-nested.sh

check-nested-retry:
	@$(NESTED_DIR)/test-boot-outer.sh

check-nested-ci:
	@$(MAKE) --no-print-directory check-nested-all \
		NESTED_KVERS="$(NESTED_CI_KVERS)"

check: check-nested-lint check-nested-retry
