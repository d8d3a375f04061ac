# SPDX-License-Identifier: GPL-2.0 OR MIT
# libmdgpu: the client library (every libmdgpu/*.c), public header in
# libmdgpu/include/mdgpu/.  Static and sanitized builds; mdgpu-copy-bench.

L_DIR := $(TOP)/libmdgpu
L_OUT := $(BUILD)/libmdgpu
L_SAN := $(BUILD)/libmdgpu-san
L_SRCS := $(wildcard $(L_DIR)/*.c)
L_CFLAGS := $(CFLAGS_COMMON) -I$(L_DIR)/include -fPIC -pthread -MMD -MP

.PHONY: libmdgpu
all: libmdgpu
libmdgpu: $(BUILD)/libmdgpu.a

$(L_OUT)/%.o: $(L_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(L_CFLAGS) -c $< -o $@
$(L_SAN)/%.o: $(L_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(L_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(BUILD)/libmdgpu.a: $(patsubst $(L_DIR)/%.c,$(L_OUT)/%.o,$(L_SRCS))
	@rm -f $@
	$(AR) rcs $@ $^
$(L_SAN)/libmdgpu.a: $(patsubst $(L_DIR)/%.c,$(L_SAN)/%.o,$(L_SRCS))
	@rm -f $@
	$(AR) rcs $@ $^

# The staging copy alone, on the CPU (Documentation/libmdgpu.md).
libmdgpu: $(BUILD)/mdgpu-copy-bench
$(BUILD)/mdgpu-copy-bench: $(L_DIR)/bench/mdgpu-copy-bench.c \
		$(BUILD)/libmdgpu.a
	$(CC) $(CFLAGS_COMMON) $< $(BUILD)/libmdgpu.a -pthread -o $@

-include $(wildcard $(L_OUT)/*.d $(L_SAN)/*.d)
