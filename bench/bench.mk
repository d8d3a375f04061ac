# SPDX-License-Identifier: GPL-2.0 OR MIT
# mdgpu-bench: native CUDA against mdgpu on the same GPU, same run
# (Documentation/benchmarks.md).
#
#   make bench          build and run everything (SKIPPED without a GPU)
#   make check-bench    CI: a short --sim --quick pass, output checked
#   make bench-ptx      regenerate bench/kernels/bench.ptx (needs nvcc)
#
# libcuda is dlopen'd, never linked.  When cuda.h exists the entry-point
# prototypes are checked against it at compile time.

B_DIR := $(TOP)/bench
B_OUT := $(BUILD)/bench
B_SRCS := $(wildcard $(B_DIR)/*.c)
B_OBJS := $(patsubst $(B_DIR)/%.c,$(B_OUT)/%.o,$(B_SRCS))
B_PTX := $(B_DIR)/kernels/bench.ptx
B_CUDA_INC ?= /usr/local/cuda/include
B_CFLAGS := $(CFLAGS_COMMON) -I$(TOP)/libmdgpu/include -pthread -MMD -MP \
	-DBENCH_MDGPUD_DEFAULT='"$(BUILD)/mdgpud"' \
	-DBENCH_PTX_FILE='"$(B_PTX)"'
B_LIBS := -pthread -ldl -lrt -lm
B_JSON ?= $(B_OUT)/mdgpu-bench.json
BENCH_ARGS ?=
NVCC ?= $(firstword $(wildcard /usr/local/cuda/bin/nvcc) nvcc)

.PHONY: bench bench-build check-bench bench-ptx
bench-build: $(BUILD)/mdgpu-bench
all: bench-build

$(B_OUT)/%.o: $(B_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(B_CFLAGS) -c $< -o $@

# The ptx.o object embeds the PTX with .incbin.
$(B_OUT)/ptx.o: $(B_PTX)

$(B_OUT)/cuda_dl.o: $(B_DIR)/cuda_dl.c
	@mkdir -p $(@D)
	$(CC) $(B_CFLAGS) $(if $(wildcard $(B_CUDA_INC)/cuda.h),\
		-DBENCH_HAVE_CUDA_H -isystem $(B_CUDA_INC)) -c $< -o $@

$(BUILD)/mdgpu-bench: $(B_OBJS) $(BUILD)/libmdgpu.a
	$(CC) $(B_CFLAGS) $(B_OBJS) $(BUILD)/libmdgpu.a $(B_LIBS) -o $@

bench: $(BUILD)/mdgpu-bench daemon
	@mkdir -p $(B_OUT)
	$(BUILD)/mdgpu-bench --json $(B_JSON) $(BENCH_ARGS)

bench-ptx:
	$(NVCC) -ptx -arch=compute_90 -o $(B_PTX) $(B_DIR)/kernels/bench.cu

# The harness itself, on a machine with no GPU: its arithmetic, the no-GPU
# path (must skip cleanly), and a --sim --quick run of every benchmark
# whose results must be well-formed.
# A fake libcuda.so.1 (bench/tests/fake_libcuda.c) lets the native side
# run there too; it is only ever put on LD_LIBRARY_PATH by check-bench.sh.
$(B_OUT)/fake/libcuda.so.1: $(B_DIR)/tests/fake_libcuda.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -Wall -Wextra -Werror -O2 -shared -fPIC $< -o $@

check-bench: $(BUILD)/mdgpu-bench daemon $(B_OUT)/fake/libcuda.so.1
	@mkdir -p $(B_OUT)
	$(TOP)/bench/check-bench.sh $(BUILD)/mdgpu-bench $(BUILD)/mdgpud \
		$(B_OUT) $(B_OUT)/fake

check: check-bench

-include $(B_OBJS:.o=.d)
