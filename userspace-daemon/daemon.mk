# SPDX-License-Identifier: GPL-2.0 OR MIT
# mdgpud: libmdgpud.a (every userspace-daemon/lib/*.c), the mdgpud binary
# (main.c), and cmocka tests (userspace-daemon/tests/test_*.c, one binary
# each, linked against an ASAN+UBSAN build of the library and libmdgpu).
#
# A new library source file needs no edit here: drop it in lib/.

D_DIR := $(TOP)/userspace-daemon
D_OUT := $(BUILD)/daemon
D_SAN := $(BUILD)/daemon-san
D_SRCS := $(wildcard $(D_DIR)/lib/*.c)
D_OBJS := $(patsubst $(D_DIR)/lib/%.c,$(D_OUT)/%.o,$(D_SRCS))
D_SAN_OBJS := $(patsubst $(D_DIR)/lib/%.c,$(D_SAN)/%.o,$(D_SRCS))
D_CFLAGS := $(CFLAGS_COMMON) -I$(D_DIR)/include -I$(TOP)/libmdgpu/include \
	-pthread -MMD -MP
D_LIBS := -pthread -ldl -lrt
D_TESTS := $(patsubst $(D_DIR)/tests/%.c,$(D_SAN)/tests/%,\
	$(wildcard $(D_DIR)/tests/test_*.c))

.PHONY: daemon check-daemon
all: daemon
daemon: $(BUILD)/mdgpud

$(D_OUT)/%.o: $(D_DIR)/lib/%.c
	@mkdir -p $(@D)
	$(CC) $(D_CFLAGS) -c $< -o $@
$(D_SAN)/%.o: $(D_DIR)/lib/%.c
	@mkdir -p $(@D)
	$(CC) $(D_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(BUILD)/libmdgpud.a: $(D_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
$(D_SAN)/libmdgpud.a: $(D_SAN_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# --whole-archive: backends (cuda) are referenced weakly by backend.c and
# must be linked in when their object is in the archive.
$(BUILD)/mdgpud: $(D_DIR)/main.c $(BUILD)/libmdgpud.a
	$(CC) $(D_CFLAGS) $< -Wl,--whole-archive $(BUILD)/libmdgpud.a \
		-Wl,--no-whole-archive $(D_LIBS) -o $@

# -u mdgpud_backend_cuda: the weakly referenced cuda backend is linked into
# every test, so a test can run on it (MDGPU_TEST_BACKEND=cuda).
$(D_SAN)/tests/%: $(D_DIR)/tests/%.c $(D_SAN)/libmdgpud.a $(L_SAN)/libmdgpu.a
	@mkdir -p $(@D)
	$(CC) $(D_CFLAGS) $(SAN_FLAGS) -DMDGPUD_SRCDIR='"$(TOP)"' \
		$< -Wl,-u,mdgpud_backend_cuda $(D_SAN)/libmdgpud.a \
		$(L_SAN)/libmdgpu.a -lcmocka $(D_LIBS) -o $@

# Each test binary runs on its own; cmocka prints its own summary.
check-daemon: $(D_TESTS) $(BUILD)/mdgpud
	@set -e; for t in $(D_TESTS); do echo "== $$t"; \
		MDGPUD_BIN=$(BUILD)/mdgpud $$t; done

check: check-daemon

-include $(D_OBJS:.o=.d) $(D_SAN_OBJS:.o=.d)

# --- cuda backend: mdgpud-worker (appended by the cuda backend) ----------
# One worker process per vGPU (lib/backend_cuda.c spawns it).  Built
# unsanitized: it is the only process that loads libcuda.  The builtin
# kernels' PTX (kernels/builtin.ptx) is checked in and embedded with
# .incbin; it is regenerated from kernels/builtin.cu when nvcc exists.
W_SRCS := $(D_DIR)/worker.c $(D_DIR)/lib/cuda_api.c \
	$(D_DIR)/kernels/builtin_embed.c
W_DEPS := $(W_SRCS) $(D_DIR)/lib/cuda_api.h $(D_DIR)/lib/cuda_rpc.h \
	$(TOP)/include/common/cpu.h \
	$(D_DIR)/kernels/builtin.ptx $(TOP)/include/uapi/mdgpu.h
NVCC ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) \
	$(shell command -v nvcc 2>/dev/null))

.PHONY: kernels
all: $(BUILD)/mdgpud-worker
daemon: $(BUILD)/mdgpud-worker
check-daemon: $(BUILD)/mdgpud-worker

$(BUILD)/mdgpud-worker: $(W_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -I$(D_DIR)/include -I$(D_DIR)/lib \
		-DMDGPUD_BUILTIN_PTX_PATH='"$(D_DIR)/kernels/builtin.ptx"' \
		$(W_SRCS) -ldl -o $@

ifneq ($(NVCC),)
kernels: $(D_DIR)/kernels/builtin.ptx
$(D_DIR)/kernels/builtin.ptx: $(D_DIR)/kernels/builtin.cu
	$(NVCC) -ptx -arch=compute_90 -o $@ $<
else
kernels:
	@echo "nvcc not found: using the checked-in kernels/builtin.ptx"
endif

# --- cuda backend: fake libcuda.so.1 for CI (appended by the cuda backend) --
# test_cuda_fake runs the cuda backend's tests with workers that load this
# host-memory imitation of the driver API (tests/test_cuda_fake/libcuda.c).
CUDA_FAKE := $(BUILD)/cuda-fake/libcuda.so.1
$(CUDA_FAKE): $(D_DIR)/tests/test_cuda_fake/libcuda.c $(D_DIR)/lib/cuda_api.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -I$(D_DIR)/lib -fPIC -shared -fvisibility=hidden \
		-Wl,-soname,libcuda.so.1 $< -o $@
$(D_SAN)/tests/test_cuda_fake: $(CUDA_FAKE) $(BUILD)/mdgpud-worker \
	$(D_DIR)/tests/test_cuda_backend.c
check-daemon: $(CUDA_FAKE)
