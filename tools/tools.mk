# SPDX-License-Identifier: GPL-2.0 OR MIT
# Administrator tools (Documentation/mdgpuctl.md).
#
#   make tools        build/mdgpuctl (admin socket client) and
#                     build/mdgpu-spin (a demo tenant over libmdgpu)
#   make check-tools  mdgpuctl against a real build/mdgpud (sim backend);
#                     its mdev commands on a fake sysfs tree
#                     (test-mdev.sh), plain and with ASAN+UBSAN.
#                     test-reload.sh, mdgpud's SIGHUP reload, runs in
#                     make check-daemon
#   make demo-host    two tenants, weights 1:3 then 3:1 live (< 30 s)

T_DIR := $(TOP)/tools
T_CFLAGS := $(CFLAGS_COMMON) -I$(TOP)/userspace-daemon/include \
	-I$(TOP)/libmdgpu/include -pthread

.PHONY: tools check-tools demo-host
all: tools
tools: $(BUILD)/mdgpuctl $(BUILD)/mdgpu-spin

# mdgpuctl needs only the protocol constants of mdgpud/admin.h and the
# knob ranges of uapi/mdgpu.h (for messages).
T_CTL_SRCS := $(T_DIR)/ctl_client.c $(T_DIR)/ctl_http.c $(T_DIR)/ctl_kv.c \
	$(T_DIR)/ctl_mdev.c $(T_DIR)/ctl_top.c
T_CTL_HDRS := $(T_CTL_SRCS:.c=.h) \
	$(TOP)/userspace-daemon/include/mdgpud/admin.h \
	$(TOP)/include/uapi/mdgpu.h
$(BUILD)/mdgpuctl: $(T_DIR)/mdgpuctl.c $(T_CTL_SRCS) $(T_CTL_HDRS)
	@mkdir -p $(@D)
	$(CC) $(T_CFLAGS) $(T_DIR)/mdgpuctl.c $(T_CTL_SRCS) -o $@

# mdgpuctl with ASAN+UBSAN, for test-mdev.sh's hostile arguments.
$(BUILD)/tools-san/mdgpuctl: $(T_DIR)/mdgpuctl.c $(T_CTL_SRCS) $(T_CTL_HDRS)
	@mkdir -p $(@D)
	$(CC) $(T_CFLAGS) $(SAN_FLAGS) $(T_DIR)/mdgpuctl.c $(T_CTL_SRCS) -o $@

# cmocka: the JSON writer, the key=value reader, the HTTP request parser
# and the mdev argument checks, built with ASAN+UBSAN.
$(BUILD)/tools-san/test_ctl: $(T_DIR)/tests/test_ctl.c $(T_CTL_SRCS) \
		$(T_CTL_HDRS)
	@mkdir -p $(@D)
	$(CC) $(T_CFLAGS) $(SAN_FLAGS) -I$(T_DIR) $< $(T_CTL_SRCS) -lcmocka \
		-o $@

$(BUILD)/mdgpu-spin: $(T_DIR)/mdgpu-spin.c $(BUILD)/libmdgpu.a
	@mkdir -p $(@D)
	$(CC) $(T_CFLAGS) $< $(BUILD)/libmdgpu.a -pthread -lrt -o $@

check-tools: $(BUILD)/mdgpuctl $(BUILD)/mdgpu-spin $(BUILD)/mdgpud \
		$(BUILD)/tools-san/test_ctl $(BUILD)/tools-san/mdgpuctl
	$(BUILD)/tools-san/test_ctl
	BUILD=$(BUILD) $(T_DIR)/test-mdev.sh
	CTL=$(BUILD)/tools-san/mdgpuctl $(T_DIR)/test-mdev.sh
	BUILD=$(BUILD) $(T_DIR)/test-mdgpuctl.sh

check: check-tools

demo-host: $(BUILD)/mdgpuctl $(BUILD)/mdgpu-spin $(BUILD)/mdgpud
	BUILD=$(BUILD) $(TOP)/scripts/demo-host.sh
