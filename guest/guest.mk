# SPDX-License-Identifier: GPL-2.0
# guest/guest.mk: the guest driver mdgpu-guest.ko (included from Makefile).
#
#   make guest-modules KVER=6.1|6.12   build/guest-<release>/mdgpu-guest.ko
#   make guest-modules GUEST_KDIR=<kernel build dir>
#                                     the same against that tree (the debug
#                                     kernel of make check-vm-debug)
#   make check-guest                  W=1 builds against both header sets
#                                     (any warning fails) + checkpatch
#
# The module is built out of tree in a copy of guest/ (build/guest-<release>/)
# so that neither the source tree nor another release's objects are touched.

GUEST_KVERS := 6.1 6.12
GUEST_KVER_REL = $(shell $(TOP)/tests/vm/kver-release.sh $(1))
GUEST_SRCS := $(wildcard $(TOP)/guest/*.c $(TOP)/guest/*.h) $(TOP)/guest/Kbuild
GUEST_UAPI := $(TOP)/include/uapi/mdgpu.h \
	$(TOP)/guest/include/uapi/mdgpu-guest.h

.PHONY: guest-modules check-guest check-guest-build check-guest-checkpatch

# $(call guest_build,KVER,EXTRA-MAKE-ARGS): copy and build for one release.
define guest_build
	set -e; if [ -n "$(GUEST_KDIR)" ]; then kdir=$(GUEST_KDIR); \
		rel=$$(cat $$kdir/include/config/kernel.release); \
	else rel=$$($(TOP)/tests/vm/kver-release.sh $(1)); \
		kdir=/usr/src/linux-headers-$$rel; fi; \
	out=$(BUILD)/guest-$$rel; mkdir -p $$out/include/uapi; \
	cp --preserve=timestamps $(GUEST_SRCS) $(MDGPU_VERSION_H) $$out/; \
	cp --preserve=timestamps $(GUEST_UAPI) $$out/include/uapi/; \
	$(MAKE) -C $$kdir M=$$out $(2) modules
endef

guest-modules: $(MDGPU_VERSION_H)
	@$(call guest_build,$(or $(KVER),6.1),$(if $(GUEST_W),W=1))

# W=1 from clean objects (a stale object would hide its warnings).
check-guest-build:
	@set -e; for k in $(GUEST_KVERS); do \
		rel=$$($(TOP)/tests/vm/kver-release.sh $$k); \
		rm -rf $(BUILD)/guest-$$rel; \
		log=$(BUILD)/guest-$$rel.w1.log; mkdir -p $(BUILD); \
		$(MAKE) --no-print-directory -f $(TOP)/Makefile \
			guest-modules KVER=$$k GUEST_W=1 >$$log 2>&1 || \
			{ cat $$log; echo "check-guest: $$rel build failed"; exit 1; }; \
		if grep -iE 'warning|error' $$log; then \
			echo "check-guest: $$rel: warnings (see $$log)"; exit 1; fi; \
		echo "check-guest: $$rel: W=1 build clean"; \
	done

# The same checkpatch (Debian's linux-source-6.1) and rules as the host module.
check-guest-checkpatch:
	@$(TOP)/scripts/checkpatch.sh $(TOP)/guest/*.[ch] \
		$(TOP)/guest/include/uapi/*.h

check-guest: check-guest-build check-guest-checkpatch

check: check-guest
