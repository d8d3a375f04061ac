# SPDX-License-Identifier: GPL-2.0 OR MIT
# libcuda: mdgpu's libcuda.so.1 (Documentation/libcuda.md), a drop-in for
# NVIDIA's driver library that reaches a vGPU through libmdgpu (linked in
# statically; every symbol but the cu* entry points is local).
#
#   make libcuda         build/libcuda/libcuda.so.1 (+ libcuda.so link)
#   make check-libcuda   unit tests of the image parsers, then driver-API
#                        programs against build/mdgpud (sim backend), once
#                        on the plain library and once on a sanitized one
#   make libcuda-doc     regenerate the entry-point table of
#                        Documentation/libcuda.md
#   make check-faults    tests/gpu/faults.sh on the fake libcuda: a worker
#                        and then mdgpud killed under load (about 25 s)
#
# The entry-point table (build/libcuda/entry_points.c) is generated at
# build time by libcuda/gen-entry-points.py from CUDA_INC's cuda.h and
# cudaTypedefs.h, so it always matches the header the library is compiled
# against and the set of functions libcuda/*.c implements.

CUDA_INC ?= /usr/local/cuda/include
C_DIR := $(TOP)/libcuda
C_OUT := $(BUILD)/libcuda
C_SAN := $(BUILD)/libcuda-san
C_SRCS := $(wildcard $(C_DIR)/*.c)
C_CUDA_VERSION := $(shell sed -n 's/^\#define CUDA_VERSION \([0-9]*\).*/\1/p' \
	$(CUDA_INC)/cuda.h 2>/dev/null)
C_CFLAGS := $(CFLAGS_COMMON) -I$(C_DIR) -I$(CUDA_INC) \
	-I$(TOP)/libmdgpu/include -DMDGPU_CU_HEADER_VERSION=$(C_CUDA_VERSION) \
	-fPIC -pthread -MMD -MP
C_LDFLAGS := -shared -Wl,-soname,libcuda.so.1 \
	-Wl,--version-script=$(C_DIR)/libcuda.map -Wl,-z,defs -pthread
C_GEN := python3 $(C_DIR)/gen-entry-points.py --include $(CUDA_INC) \
	--src $(C_DIR) --cc "$(CC)"

.PHONY: libcuda check-libcuda libcuda-doc check-faults
all: libcuda
libcuda: $(C_OUT)/libcuda.so.1

$(C_OUT)/entry_points.c: $(C_DIR)/gen-entry-points.py $(C_SRCS) \
		$(CUDA_INC)/cuda.h $(CUDA_INC)/cudaTypedefs.h
	@mkdir -p $(@D)
	$(C_GEN) --c $@

$(C_OUT)/%.o: $(C_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(C_CFLAGS) -c $< -o $@
$(C_OUT)/entry_points.o: $(C_OUT)/entry_points.c $(C_DIR)/entry.h
	$(CC) $(C_CFLAGS) -c $< -o $@
$(C_SAN)/%.o: $(C_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(C_CFLAGS) $(SAN_FLAGS) -c $< -o $@
$(C_SAN)/entry_points.o: $(C_OUT)/entry_points.c $(C_DIR)/entry.h
	@mkdir -p $(@D)
	$(CC) $(C_CFLAGS) $(SAN_FLAGS) -c $< -o $@

C_OBJS := $(patsubst $(C_DIR)/%.c,%.o,$(C_SRCS)) entry_points.o
$(C_OUT)/libcuda.so.1: $(addprefix $(C_OUT)/,$(C_OBJS)) $(BUILD)/libmdgpu.a \
		$(C_DIR)/libcuda.map
	$(CC) $(C_LDFLAGS) $(filter %.o,$^) $(BUILD)/libmdgpu.a -lrt -o $@
	ln -sf libcuda.so.1 $(C_OUT)/libcuda.so
$(C_SAN)/libcuda.so.1: $(addprefix $(C_SAN)/,$(C_OBJS)) $(L_SAN)/libmdgpu.a \
		$(C_DIR)/libcuda.map
	$(CC) $(C_LDFLAGS) $(SAN_FLAGS) $(filter %.o,$^) $(L_SAN)/libmdgpu.a \
		-lrt -o $@
	ln -sf libcuda.so.1 $(C_SAN)/libcuda.so

# Tests.  test_image: cmocka, the parsers alone (sanitized).  test_driver:
# a driver-API program in plain C against cuda.h, linked with -lcuda.
C_TDIR := $(C_DIR)/tests
$(C_SAN)/tests/test_image: $(C_TDIR)/test_image.c $(C_DIR)/image.c \
		$(C_DIR)/image.h
	@mkdir -p $(@D)
	$(CC) $(C_CFLAGS) $(SAN_FLAGS) $< $(C_DIR)/image.c -lcmocka -o $@
$(C_OUT)/tests/test_driver: $(C_TDIR)/test_driver.c $(C_TDIR)/expect.h \
		$(C_OUT)/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -I$(CUDA_INC) $< -L$(C_OUT) -lcuda -pthread -o $@
$(C_SAN)/tests/test_driver: $(C_TDIR)/test_driver.c $(C_TDIR)/expect.h \
		$(C_SAN)/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -I$(CUDA_INC) $< -L$(C_SAN) \
		-lcuda -pthread -o $@

# test_code: the code surface (modules, launches, libraries, links,
# occupancy, limits), a driver-API program like test_driver.
$(C_OUT)/tests/test_code: $(C_TDIR)/test_code.c $(C_TDIR)/expect.h \
		$(C_OUT)/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -I$(CUDA_INC) $< -L$(C_OUT) -lcuda -pthread -o $@
$(C_SAN)/tests/test_code: $(C_TDIR)/test_code.c $(C_TDIR)/expect.h \
		$(C_SAN)/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -I$(CUDA_INC) $< -L$(C_SAN) \
		-lcuda -pthread -o $@

# test_memop: stream memory operations (memop.c), a driver-API program
# like test_driver, run by run-code-tests.sh on sim and the fake.
$(C_OUT)/tests/test_memop: $(C_TDIR)/test_memop.c $(C_TDIR)/expect.h \
		$(C_OUT)/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -I$(CUDA_INC) $< -L$(C_OUT) -lcuda -pthread -o $@
$(C_SAN)/tests/test_memop: $(C_TDIR)/test_memop.c $(C_TDIR)/expect.h \
		$(C_SAN)/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -I$(CUDA_INC) $< -L$(C_SAN) \
		-lcuda -pthread -o $@

# test_mempool: memory pools (mempool.c), a driver-API program like
# test_driver, run by run-code-tests.sh on sim and the fake.
$(C_OUT)/tests/test_mempool: $(C_TDIR)/test_mempool.c $(C_TDIR)/expect.h \
		$(C_OUT)/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -I$(CUDA_INC) $< -L$(C_OUT) -lcuda -pthread -o $@
$(C_SAN)/tests/test_mempool: $(C_TDIR)/test_mempool.c $(C_TDIR)/expect.h \
		$(C_SAN)/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(SAN_FLAGS) -I$(CUDA_INC) $< -L$(C_SAN) \
		-lcuda -pthread -o $@

# A real cubin for test_image when nvcc is here (else that test skips).
NVCC ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc))
C_CUBIN := $(if $(NVCC),$(C_SAN)/tests/kernel.cubin)
$(C_SAN)/tests/kernel.cubin: $(C_TDIR)/cubin_kernel.cu
	@mkdir -p $(@D)
	$(NVCC) -cubin -arch=sm_90 $< -o $@
# and a fatbin of SASS for two GPUs and PTX, as nvcc lays its entries out.
C_FATBIN := $(if $(NVCC),$(C_SAN)/tests/kernel.fatbin)
$(C_SAN)/tests/kernel.fatbin: $(C_TDIR)/cubin_kernel.cu
	@mkdir -p $(@D)
	$(NVCC) -fatbin -gencode arch=compute_80,code=sm_80 \
		-gencode arch=compute_90,code=[sm_90,compute_90] $< -o $@

# MD2 of the integrity check (export.c), against RFC 1319's vectors.
$(C_SAN)/tests/test_md2: $(C_TDIR)/test_md2.c $(C_DIR)/md2.c $(C_DIR)/md2.h
	@mkdir -p $(@D)
	$(CC) $(C_CFLAGS) $(SAN_FLAGS) $< $(C_DIR)/md2.c -lcmocka -o $@

# rt_basic: NVIDIA's runtime unmodified, static (nvcc's default) and
# shared, when nvcc is here (else skipped with a message).
C_RT := $(if $(NVCC),$(C_OUT)/tests/rt_basic $(C_OUT)/tests/rt_basic_shared)
$(C_OUT)/tests/rt_basic: $(C_TDIR)/rt_basic.cu
	@mkdir -p $(@D)
	$(NVCC) $< -o $@
$(C_OUT)/tests/rt_basic_shared: $(C_TDIR)/rt_basic.cu
	@mkdir -p $(@D)
	$(NVCC) -cudart shared $< -o $@

check-libcuda: $(C_SAN)/tests/test_image $(C_OUT)/tests/test_driver \
		$(C_SAN)/tests/test_driver $(C_OUT)/tests/test_code \
		$(C_SAN)/tests/test_code $(C_OUT)/tests/test_memop \
		$(C_SAN)/tests/test_memop $(C_OUT)/tests/test_mempool \
		$(C_SAN)/tests/test_mempool $(BUILD)/mdgpud $(C_CUBIN) $(C_FATBIN) \
		$(C_SAN)/tests/test_md2 $(C_RT) $(CUDA_FAKE) $(BUILD)/mdgpud-worker
	MDGPU_TEST_CUBIN=$(C_CUBIN) MDGPU_TEST_FATBIN=$(C_FATBIN) \
		$(C_SAN)/tests/test_image
	$(C_SAN)/tests/test_md2
	BUILD=$(BUILD) $(C_TDIR)/run-driver-tests.sh $(C_OUT) \
		$(C_OUT)/tests/test_driver
	BUILD=$(BUILD) $(C_TDIR)/run-driver-tests.sh $(C_SAN) \
		$(C_SAN)/tests/test_driver
	BUILD=$(BUILD) $(C_TDIR)/run-code-tests.sh $(C_OUT) \
		$(C_OUT)/tests/test_code
	BUILD=$(BUILD) $(C_TDIR)/run-code-tests.sh $(C_SAN) \
		$(C_SAN)/tests/test_code
	BUILD=$(BUILD) $(C_TDIR)/run-code-tests.sh $(C_OUT) \
		$(C_OUT)/tests/test_memop
	BUILD=$(BUILD) $(C_TDIR)/run-code-tests.sh $(C_SAN) \
		$(C_SAN)/tests/test_memop
	BUILD=$(BUILD) $(C_TDIR)/run-code-tests.sh $(C_OUT) \
		$(C_OUT)/tests/test_mempool
	BUILD=$(BUILD) $(C_TDIR)/run-code-tests.sh $(C_SAN) \
		$(C_SAN)/tests/test_mempool
	$(if $(C_RT),BUILD=$(BUILD) $(C_TDIR)/run-rt-tests.sh $(C_OUT) $(C_RT),\
		@echo "SKIP rt_basic: nvcc not found")
	$(C_GEN) --doc $(C_OUT)/entry-points.md
	$(C_DIR)/update-doc.sh --check $(C_OUT)/entry-points.md \
		$(TOP)/Documentation/libcuda.md

check: check-libcuda

# The fault-injection script of the GPU machine, run on CI's fake
# libcuda: the daemon's and the workers' side of a worker's and the
# supervisor's SIGKILL (tests/gpu/faults.sh says what the fake leaves out).
check-faults: $(BUILD)/mdgpud $(BUILD)/mdgpud-worker $(C_OUT)/libcuda.so.1 		$(BUILD)/mdgpuctl $(CUDA_FAKE)
	shellcheck -x $(TOP)/tests/gpu/faults.sh
	OUT=$(BUILD)/faults MDGPU_FAKE_CUDA=$(dir $(CUDA_FAKE)) \
		$(TOP)/tests/gpu/faults.sh

check: check-faults

libcuda-doc:
	$(C_GEN) --doc $(C_OUT)/entry-points.md
	$(C_DIR)/update-doc.sh --write $(C_OUT)/entry-points.md \
		$(TOP)/Documentation/libcuda.md

-include $(wildcard $(C_OUT)/*.d $(C_SAN)/*.d)
