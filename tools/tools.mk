# SPDX-License-Identifier: GPL-2.0 OR MIT
# Administrator tools (Documentation/mdgpuctl.md).
#
#   make tools        build/mdgpuctl (admin socket client) and
#                     build/mdgpu-spin (a demo tenant over libmdgpu)
#   make check-tools  mdgpuctl against a real build/mdgpud (sim backend)
#   make demo-host    two tenants, weights 1:3 then 3:1 live (< 30 s)

T_DIR := $(TOP)/tools
T_CFLAGS := $(CFLAGS_COMMON) -I$(TOP)/userspace-daemon/include \
	-I$(TOP)/libmdgpu/include -pthread

.PHONY: tools check-tools demo-host
all: tools
tools: $(BUILD)/mdgpuctl $(BUILD)/mdgpu-spin

# mdgpuctl needs only the protocol constants of mdgpud/admin.h.
$(BUILD)/mdgpuctl: $(T_DIR)/mdgpuctl.c \
		$(TOP)/userspace-daemon/include/mdgpud/admin.h
	@mkdir -p $(@D)
	$(CC) $(T_CFLAGS) $< -o $@

$(BUILD)/mdgpu-spin: $(T_DIR)/mdgpu-spin.c $(BUILD)/libmdgpu.a
	@mkdir -p $(@D)
	$(CC) $(T_CFLAGS) $< $(BUILD)/libmdgpu.a -pthread -lrt -o $@

check-tools: $(BUILD)/mdgpuctl $(BUILD)/mdgpu-spin $(BUILD)/mdgpud
	BUILD=$(BUILD) $(T_DIR)/test-mdgpuctl.sh

check: check-tools

demo-host: $(BUILD)/mdgpuctl $(BUILD)/mdgpu-spin $(BUILD)/mdgpud
	BUILD=$(BUILD) $(TOP)/scripts/demo-host.sh
