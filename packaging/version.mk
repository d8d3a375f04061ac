# SPDX-License-Identifier: GPL-2.0 OR MIT
# packaging/version.mk: mdgpu's one version (scripts/version.sh; VERSION
# plus git, Documentation/install.md, "Versions").  Included by the
# top-level Makefile before every component fragment.
#
#   $(MDGPU_VERSION_H)   build/gen/mdgpu_version.h: #define MDGPU_VERSION,
#                        rewritten only when the version changes
#   $(MDGPU_VERSION)     the string, for install and packages; computed
#                        once per make, so the header, file names and
#                        package versions of one build agree (a sub-make
#                        given MDGPU_VERSION=... on its command line too)
#
# Every user of the header is listed here, so that the header exists
# before the first compile and a new version rebuilds each of them.

MDGPU_VERSION_H := $(BUILD)/gen/mdgpu_version.h
# Computed once, on first use.
MDGPU_VERSION = $(eval MDGPU_VERSION := $$(shell $(TOP)/scripts/version.sh))$(MDGPU_VERSION)

.PHONY: mdgpu-version-force version
$(MDGPU_VERSION_H): mdgpu-version-force
	@$(TOP)/scripts/version.sh --header $@ "$(MDGPU_VERSION)"

version:
	@echo $(MDGPU_VERSION)

# Users: the admin socket's `version` answer (libmdgpud in its plain,
# sanitized and fuzzing builds, and test_admin that checks it), the
# programs' --version, and the two
# kernel modules' MODULE_VERSION (kmod/kmod.mk and guest/guest.mk copy
# the header next to the module sources).
$(BUILD)/daemon/core/admin.o $(BUILD)/daemon-san/core/admin.o \
$(BUILD)/fuzz/daemon/core/admin.o: $(MDGPU_VERSION_H)
$(BUILD)/mdgpud $(BUILD)/mdgpud-worker $(BUILD)/mdgpuctl \
$(BUILD)/mdgpu-spin $(BUILD)/daemon-san/tests/test_admin: $(MDGPU_VERSION_H)
