# SPDX-License-Identifier: GPL-2.0
# kmod/kmod.mk - build and check mdgpu.ko (included by the top-level Makefile).
#
#   make modules [KVER=6.1|6.12|<full release>] [KDIR=<kernel build dir>]
#       Builds mdgpu.ko for KVER (a full release, or a prefix that globs
#       /usr/src/linux-headers-<KVER>*-amd64), else for the running kernel
#       if /lib/modules/$(uname -r)/build exists, else for Debian's 6.1
#       headers.  KDIR overrides the header directory.
#       Output: build/kmod-<release>/mdgpu.ko, release being the full
#       kernel release (e.g. build/kmod-6.1.0-56-amd64/mdgpu.ko).  The VM
#       harness (tests/vm) loads the module from that path.
#   make check-kmod
#       Builds with W=1 against every /usr/src/linux-headers-6.1.*-amd64 and
#       /usr/src/linux-headers-6.12.*-amd64, each in its own
#       build/kmod-<release>/, and fails on any compiler warning; then runs
#       scripts/checkpatch.sh (--strict) on kmod/ and fails on any finding.
#       Each release is also built the plain Kbuild way (make -C <headers>
#       M=<copy of the tree> W=1, no version header given: Kbuild makes it).
#   The module is tested in QEMU TCG guests by tests/vm (make check-vm).
#
# Sources are copied (Kbuild, kmod/, include/, mdev-types/) into the
# per-release directory and built there with M=, so no build output ever
# lands in the source tree.  Not part of `all`: the host may lack headers.

KMOD_SRCS := $(TOP)/Kbuild $(wildcard $(TOP)/kmod/*.[ch]) \
	$(wildcard $(TOP)/include/uapi/*.h) $(wildcard $(TOP)/mdev-types/*.def)
KMOD_HDR_GLOB := /usr/src/linux-headers-6.1.*-amd64 \
	/usr/src/linux-headers-6.12.*-amd64

# Header directory -> full release: /usr/src/linux-headers-<release> or
# /lib/modules/<release>/build, else include/config/kernel.release.
kmod_release = $(strip $(if $(filter /usr/src/linux-headers-%,$(1)),\
	$(patsubst /usr/src/linux-headers-%,%,$(1)),\
	$(if $(filter /lib/modules/%/build,$(1)),\
	$(patsubst /lib/modules/%/build,%,$(1)),\
	$(shell cat $(1)/include/config/kernel.release 2>/dev/null))))

ifeq ($(origin KDIR),undefined)
ifneq ($(KVER),)
KDIR := $(firstword $(wildcard /usr/src/linux-headers-$(KVER) \
	/usr/src/linux-headers-$(KVER)-amd64 \
	/usr/src/linux-headers-$(KVER).*-amd64 \
	/usr/src/linux-headers-$(KVER)*-amd64 /lib/modules/$(KVER)/build))
else
KDIR := $(firstword $(wildcard /lib/modules/$(shell uname -r)/build \
	/usr/src/linux-headers-6.1.*-amd64))
endif
endif
KMOD_RELEASE := $(call kmod_release,$(KDIR))

# $(1): header dir, $(2): release, $(3): extra make arguments.
define kmod_build
	@test -d "$(1)" || { echo "kmod: no kernel headers at '$(1)'" >&2; exit 1; }
	@mkdir -p $(BUILD)/kmod-$(2)
	@cp -r --preserve=timestamps $(TOP)/Kbuild $(TOP)/kmod $(TOP)/include \
		$(TOP)/mdev-types $(BUILD)/kmod-$(2)/
	@cp --preserve=timestamps $(MDGPU_VERSION_H) $(BUILD)/kmod-$(2)/kmod/
	$(MAKE) -C $(1) M=$(BUILD)/kmod-$(2) $(3) modules
endef

.PHONY: modules check-kmod checkpatch
modules: $(KMOD_SRCS) $(MDGPU_VERSION_H)
	@test -n "$(KDIR)" || { echo "kmod: no kernel headers found (KVER='$(KVER)'); set KDIR" >&2; exit 1; }
	$(call kmod_build,$(KDIR),$(KMOD_RELEASE),$(if $(KMOD_W),W=1))
	@echo "kmod: built $(BUILD)/kmod-$(KMOD_RELEASE)/mdgpu.ko"

check-kmod:
	+@set -e; dirs="$(wildcard $(KMOD_HDR_GLOB))"; \
	test -n "$$dirs" || { echo "check-kmod: no 6.1/6.12 headers in /usr/src" >&2; exit 1; }; \
	for d in $$dirs; do \
		rel=$${d#/usr/src/linux-headers-}; \
		log=$(BUILD)/kmod-$$rel.log; mkdir -p $(BUILD); \
		echo "== check-kmod: W=1 build against $$rel"; \
		$(MAKE) --no-print-directory KDIR=$$d modules KMOD_W=1 >$$log 2>&1 || \
			{ cat $$log; echo "check-kmod: build FAILED for $$rel" >&2; exit 1; }; \
		if grep -E 'warning:|error:|^WARNING' $$log | grep -v '^make\['; then \
			echo "check-kmod: warnings for $$rel (see $$log)" >&2; exit 1; fi; \
		test -f $(BUILD)/kmod-$$rel/mdgpu.ko; \
		echo "   ok: $(BUILD)/kmod-$$rel/mdgpu.ko"; \
		plain=$(BUILD)/kmod-plain-$$rel; rm -rf $$plain; \
		mkdir -p $$plain/scripts; \
		cp -r $(TOP)/Kbuild $(TOP)/VERSION $(TOP)/kmod $(TOP)/include \
			$(TOP)/mdev-types $$plain/; \
		cp $(TOP)/scripts/version.sh $$plain/scripts/; \
		rm -f $$plain/kmod/mdgpu_version.h; \
		$(MAKE) --no-print-directory -C $$d M=$$plain W=1 modules \
			>$$plain.log 2>&1 || { cat $$plain.log; \
			echo "check-kmod: plain Kbuild build FAILED for $$rel" >&2; exit 1; }; \
		if grep -E 'warning:|error:|^WARNING' $$plain.log | grep -v '^make\['; then \
			echo "check-kmod: warnings for $$rel (see $$plain.log)" >&2; exit 1; fi; \
		echo "   ok: plain make -C <headers> M=<tree>, version header made by Kbuild"; \
	done
	@$(TOP)/scripts/checkpatch.sh

checkpatch:
	@$(TOP)/scripts/checkpatch.sh

check: check-kmod
