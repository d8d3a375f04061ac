# SPDX-License-Identifier: GPL-2.0
# mdgpu top-level build.  Kernel module through Kbuild (./Kbuild), userspace
# with plain make.  Each component adds its rules in its own fragment.
#
#   make                 module for the running (or KVER's) kernel + userspace
#   make check           everything CI runs (unit, module builds, VM suites)
#   make check-vm KVER=6.1|6.12   the QEMU guest suite for one kernel
#   make demo            the main demo (README)
#   make fuzz [FUZZ_SECONDS=N]   the libFuzzer harnesses (fuzz/fuzz.mk)
#   make install [PREFIX=/usr/local] [DESTDIR=], make deb, make version
#                        packaging/packaging.mk, Documentation/install.md
#   make man             the manual pages (Documentation/man/man.mk)

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(TOP)/build
CC ?= cc
CFLAGS_COMMON := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O2 \
	-I$(TOP)/include -I$(TOP) -I$(BUILD)/gen
# Sanitized builds for tests.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer

.PHONY: all check clean demo
all:

include packaging/version.mk
include kmod/kmod.mk
include libmdgpu/lib.mk
include userspace-daemon/daemon.mk
include libcuda/libcuda.mk
include nvml/nvml.mk
include tests/vm/vm.mk
include qemu-scripts/scripts.mk
include guest/guest.mk
include tests/nested/nested.mk
include bench/bench.mk
include tests/e2e/e2e.mk
include tools/tools.mk
include tools/cuda-trace/cuda-trace.mk
include fuzz/fuzz.mk
include Documentation/man/man.mk
include packaging/packaging.mk

check:
	@echo "== make check: all suites passed"

clean:
	rm -rf $(BUILD)
