# SPDX-License-Identifier: GPL-2.0 OR MIT
# mdgpud: libmdgpud.a, the mdgpud binary (main.c), mdgpud-worker, and the
# cmocka tests (userspace-daemon/tests/test_*.c, one binary each, linked
# against an ASAN+UBSAN build of the library and libmdgpu).
#
# The tree, by concern (Documentation/daemon.md, "Source layout"):
#   core/         event loop, vGPU lifecycle, validator, dispatcher, admin
#   sched/        weighted fair scheduler, policies, caps
#   transports/   registry, socket and kernel (/dev/mdgpu) transports
#   backends/     registry, sim backend, cuda/ (supervisor side)
#   backends/cuda/worker/   mdgpud-worker, the only program that loads libcuda
#
# A new library source in one of the library folders needs no edit here.

D_DIR := $(TOP)/userspace-daemon
D_OUT := $(BUILD)/daemon
D_SAN := $(BUILD)/daemon-san
D_LIB_DIRS := core sched transports backends backends/cuda
D_SRCS := $(foreach d,$(D_LIB_DIRS),$(wildcard $(D_DIR)/$(d)/*.c))
D_OBJS := $(patsubst $(D_DIR)/%.c,$(D_OUT)/%.o,$(D_SRCS))
D_SAN_OBJS := $(patsubst $(D_DIR)/%.c,$(D_SAN)/%.o,$(D_SRCS))
D_CFLAGS := $(CFLAGS_COMMON) -I$(D_DIR)/include -I$(TOP)/libmdgpu/include \
	-pthread -MMD -MP
D_LIBS := -pthread -ldl -lrt
D_TESTS := $(patsubst $(D_DIR)/tests/%.c,$(D_SAN)/tests/%,\
	$(wildcard $(D_DIR)/tests/test_*.c))

# The worker: its own sources, the driver-API loader and the builtin
# kernels' PTX (backends/cuda/kernels/builtin.ptx, checked in and embedded
# with .incbin; regenerated from builtin.cu when nvcc exists).  Built
# unsanitized: it is the only process that loads libcuda.
W_DIR := $(D_DIR)/backends/cuda/worker
W_API_SRCS := $(W_DIR)/cuda_api.c $(W_DIR)/cuda_abi_check.c
W_SRCS := $(filter-out $(W_API_SRCS),$(wildcard $(W_DIR)/*.c)) \
	$(W_API_SRCS) $(D_DIR)/backends/cuda/kernels/builtin_embed.c
W_CFLAGS := $(CFLAGS_COMMON) -I$(D_DIR)/include -I$(W_DIR) \
	-I$(D_DIR)/backends/cuda
# libseccomp (libseccomp-dev) linked statically: the worker's sandbox
# (worker/sandbox.c) then needs nothing at run time on the GPU machine.
W_LIBS := -l:libseccomp.a -ldl
W_DEPS := $(W_SRCS) $(wildcard $(W_DIR)/*.h) \
	$(D_DIR)/backends/cuda/cuda_rpc.h $(D_DIR)/backends/cuda/sandbox.h \
	$(TOP)/include/common/cpu.h $(TOP)/include/common/words.h \
	$(TOP)/include/common/link_bundle.h \
	$(D_DIR)/backends/cuda/kernels/builtin.ptx $(TOP)/include/uapi/mdgpu.h

.PHONY: daemon check-daemon kernels
all: daemon
daemon: $(BUILD)/mdgpud $(BUILD)/mdgpud-worker

$(D_OUT)/%.o: $(D_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(D_CFLAGS) -c $< -o $@
$(D_SAN)/%.o: $(D_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(D_CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(BUILD)/libmdgpud.a: $(D_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
$(D_SAN)/libmdgpud.a: $(D_SAN_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# --whole-archive: the cuda backend is referenced weakly by
# backends/backend.c and must be linked in from the archive.
$(BUILD)/mdgpud: $(D_DIR)/main.c $(BUILD)/libmdgpud.a
	$(CC) $(D_CFLAGS) $< -Wl,--whole-archive $(BUILD)/libmdgpud.a \
		-Wl,--no-whole-archive $(D_LIBS) -o $@

# -u mdgpud_backend_cuda: the weakly referenced cuda backend is linked into
# every test, so a test can run on it (MDGPU_TEST_BACKEND=cuda).
$(D_SAN)/tests/%: $(D_DIR)/tests/%.c $(D_SAN)/libmdgpud.a $(L_SAN)/libmdgpu.a
	@mkdir -p $(@D)
	$(CC) $(D_CFLAGS) $(SAN_FLAGS) -DMDGPUD_SRCDIR='"$(TOP)"' \
		$(D_TEST_EXTRA_$*) $< -Wl,-u,mdgpud_backend_cuda \
		$(D_SAN)/libmdgpud.a $(L_SAN)/libmdgpu.a -lcmocka $(D_LIBS) -o $@

# test_cuda_api checks the worker's driver-API loader, which is not part
# of libmdgpud.a (the supervisor never loads libcuda).
D_TEST_EXTRA_test_cuda_api := -I$(W_DIR) $(W_API_SRCS)
$(D_SAN)/tests/test_cuda_api: $(W_API_SRCS) $(W_DIR)/cuda_api.h
# test_worker_handles checks the worker's handle table the same way.
W_HANDLES_SRCS := $(W_DIR)/handles.c $(W_DIR)/array.c
D_TEST_EXTRA_test_worker_handles := -I$(W_DIR) $(W_HANDLES_SRCS)
$(D_SAN)/tests/test_worker_handles: $(W_HANDLES_SRCS) $(W_DIR)/handles.h \
	$(W_DIR)/array.h

# Each test binary runs on its own; cmocka prints its own summary.  Then
# the real mdgpud's SIGHUP reload and what it tells systemd
# (tools/test-reload.sh: it drives the daemon with mdgpuctl and a
# mdgpu-spin tenant).
check-daemon: $(D_TESTS) $(BUILD)/mdgpud $(BUILD)/mdgpud-worker \
		$(BUILD)/mdgpuctl $(BUILD)/mdgpu-spin
	@set -e; for t in $(D_TESTS); do echo "== $$t"; \
		MDGPUD_BIN=$(BUILD)/mdgpud $$t; done
	BUILD=$(BUILD) $(TOP)/tools/test-reload.sh

check: check-daemon

-include $(D_OBJS:.o=.d) $(D_SAN_OBJS:.o=.d)

$(BUILD)/mdgpud-worker: $(W_DEPS)
	@mkdir -p $(@D)
	$(CC) $(W_CFLAGS) \
		-DMDGPUD_BUILTIN_PTX_PATH='"$(D_DIR)/backends/cuda/kernels/builtin.ptx"' \
		$(W_SRCS) $(W_LIBS) -o $@

NVCC ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) \
	$(shell command -v nvcc 2>/dev/null))
ifneq ($(NVCC),)
kernels: $(D_DIR)/backends/cuda/kernels/builtin.ptx
$(D_DIR)/backends/cuda/kernels/builtin.ptx: $(D_DIR)/backends/cuda/kernels/builtin.cu
	$(NVCC) -ptx -arch=compute_90 -o $@ $<
else
kernels:
	@echo "nvcc not found: using the checked-in kernels/builtin.ptx"
endif

# test_cuda_fake runs the cuda backend's tests with workers that load a
# host-memory imitation of the driver API (tests/test_cuda_fake/libcuda.c).
CUDA_FAKE := $(BUILD)/cuda-fake/libcuda.so.1
CUDA_FAKE_SRCS := $(wildcard $(D_DIR)/tests/test_cuda_fake/*.c)
$(CUDA_FAKE): $(CUDA_FAKE_SRCS) $(wildcard $(D_DIR)/tests/test_cuda_fake/*.h) \
	$(W_DIR)/cuda_api.h $(D_DIR)/backends/cuda/cuda_rpc.h \
	$(D_DIR)/include/mdgpud/cuda_values.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -I$(W_DIR) -I$(D_DIR)/backends/cuda \
		-I$(D_DIR)/include -fPIC -shared -fvisibility=hidden \
		-Wl,-soname,libcuda.so.1 $(CUDA_FAKE_SRCS) -o $@
$(D_SAN)/tests/test_core_hang: $(CUDA_FAKE) $(BUILD)/mdgpud-worker
$(D_SAN)/tests/test_worker_handles: $(CUDA_FAKE) $(BUILD)/mdgpud-worker
$(D_SAN)/tests/test_info: $(CUDA_FAKE) $(BUILD)/mdgpud-worker
$(D_SAN)/tests/test_core_dma_cuda: $(CUDA_FAKE) $(BUILD)/mdgpud-worker \
	$(D_DIR)/tests/test_core_dma.c $(D_DIR)/tests/fake_transport.h
$(D_SAN)/tests/test_spatial: $(CUDA_FAKE) $(BUILD)/mdgpud-worker \
	$(D_DIR)/tests/fake_transport.h
$(D_SAN)/tests/test_cuda_fake: $(CUDA_FAKE) $(BUILD)/mdgpud-worker \
	$(D_DIR)/tests/test_cuda_backend.c
check-daemon: $(CUDA_FAKE)
