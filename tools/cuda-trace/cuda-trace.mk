# SPDX-License-Identifier: GPL-2.0 OR MIT
# cuda-trace (tools/cuda-trace/README.md): a libcuda.so.1 that stands in
# front of another one and logs what a program asks of the driver.
#
#   make cuda-trace        build/cuda-trace/libcuda.so.1
#   make check-cuda-trace  a driver-API program traced in front of mdgpu's
#                          libcuda.so.1 on a sim-backend mdgpud
#
# Its wrappers and exported symbols are generated at build time from
# CUDA_INC's cuda.h (tools/cuda-trace/gen-trace.py).  A debugging tool:
# built -O1, not sanitized (it stands in for a library a sanitized
# program would load after the sanitizer's runtime).

CT_DIR := $(TOP)/tools/cuda-trace
CT_OUT := $(BUILD)/cuda-trace
CT_CFLAGS := -std=c11 -D_GNU_SOURCE -D__CUDA_API_VERSION_INTERNAL -Wall \
	-Wextra -Werror -g -O1 -fPIC -fvisibility=hidden -pthread \
	-I$(CT_DIR) -I$(CUDA_INC)

.PHONY: cuda-trace check-cuda-trace
cuda-trace: $(CT_OUT)/libcuda.so.1

$(CT_OUT)/gen.c: $(CT_DIR)/gen-trace.py $(CT_DIR)/trace.h \
		$(TOP)/libcuda/gen-entry-points.py $(CUDA_INC)/cuda.h
	@mkdir -p $(@D)
	python3 $(CT_DIR)/gen-trace.py --include $(CUDA_INC) --cc "$(CC)" \
		--c $@ --s $(CT_OUT)/gen.S
$(CT_OUT)/gen.S: $(CT_OUT)/gen.c
$(CT_OUT)/gen.o: $(CT_OUT)/gen.c $(CT_DIR)/trace.h
	$(CC) $(CT_CFLAGS) -c $< -o $@
$(CT_OUT)/gen-s.o: $(CT_OUT)/gen.S
	$(CC) -c $< -o $@
$(CT_OUT)/trace.o: $(CT_DIR)/trace.c $(CT_DIR)/trace.h
	@mkdir -p $(@D)
	$(CC) $(CT_CFLAGS) -c $< -o $@
$(CT_OUT)/libcuda.so.1: $(CT_OUT)/trace.o $(CT_OUT)/gen.o $(CT_OUT)/gen-s.o
	$(CC) -shared -Wl,-soname,libcuda.so.1 -Wl,-z,defs -pthread $^ -ldl \
		-o $@

$(CT_OUT)/trace-test: $(CT_DIR)/trace-test.c $(C_OUT)/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -I$(CUDA_INC) $< -L$(C_OUT) -lcuda -o $@

check-cuda-trace: $(CT_OUT)/libcuda.so.1 $(CT_OUT)/trace-test \
		$(C_OUT)/libcuda.so.1 $(BUILD)/mdgpud
	BUILD=$(BUILD) $(CT_DIR)/test-cuda-trace.sh

check: check-cuda-trace
