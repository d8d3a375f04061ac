# SPDX-License-Identifier: GPL-2.0 OR MIT
# nvml: mdgpu's libnvidia-ml.so.1 (Documentation/nvml.md), a drop-in for
# NVIDIA's management library that answers for the process's vGPU through
# mdgpu's libcuda.so.1 in the same process.
#
#   make nvml          build/nvml/libnvidia-ml.so.1 (+ libnvidia-ml.so link)
#   make check-nvml    NVML programs against build/mdgpud (sim backend) on
#                      the plain and on a sanitized library; the symbol list
#                      and the fallback header against the toolkit's nvml.h
#                      when there is one
#   make nvml-list     rewrite nvml/entry-points.txt from the toolkit's nvml.h
#
# The toolkit's nvml.h (NVML_INC: CUDA_INC or the toolkit's target include
# directory, where the nvml component put it) is used when present.  Where
# it is missing, nvml/compat/nvml.h (the types and prototypes the library
# implements) stands in and the stubs come from nvml/entry-points.txt, the
# list of nvml.h's functions written by `make nvml-list`.

NVML_INC ?= $(firstword $(foreach d,$(CUDA_INC) \
	/usr/local/cuda/targets/x86_64-linux/include,\
	$(if $(wildcard $(d)/nvml.h),$(d))))
N_DIR := $(TOP)/nvml
N_OUT := $(BUILD)/nvml
N_SAN := $(BUILD)/nvml-san
N_HDR := $(if $(NVML_INC),$(NVML_INC),$(N_DIR)/compat)
N_SRCS := $(wildcard $(N_DIR)/*.c)
N_CFLAGS := $(CFLAGS_COMMON) -I$(N_DIR) -I$(N_HDR) -I$(CUDA_INC) \
	-DNVML_NO_UNVERSIONED_FUNC_DEFS -fPIC -pthread -MMD -MP
N_LDFLAGS := -shared -Wl,-soname,libnvidia-ml.so.1 \
	-Wl,--version-script=$(N_DIR)/nvml.map -Wl,-z,defs -pthread
N_GEN := python3 $(N_DIR)/gen-entry-points.py --src $(N_DIR) --cc "$(CC)" \
	$(if $(NVML_INC),--include $(NVML_INC),--list $(N_DIR)/entry-points.txt)

.PHONY: nvml check-nvml nvml-list
all: nvml
nvml: $(N_OUT)/libnvidia-ml.so.1

$(N_OUT)/entry_points.c: $(N_DIR)/gen-entry-points.py $(N_SRCS) \
		$(N_DIR)/entry-points.txt $(wildcard $(N_HDR)/nvml.h)
	@mkdir -p $(@D)
	$(N_GEN) --c $@

$(N_OUT)/%.o: $(N_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(N_CFLAGS) -c $< -o $@
$(N_OUT)/entry_points.o: $(N_OUT)/entry_points.c $(N_DIR)/entry.h
	$(CC) $(N_CFLAGS) -c $< -o $@
$(N_SAN)/%.o: $(N_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(N_CFLAGS) $(SAN_FLAGS) -c $< -o $@
$(N_SAN)/entry_points.o: $(N_OUT)/entry_points.c $(N_DIR)/entry.h
	@mkdir -p $(@D)
	$(CC) $(N_CFLAGS) $(SAN_FLAGS) -c $< -o $@

N_OBJS := $(patsubst $(N_DIR)/%.c,%.o,$(N_SRCS)) entry_points.o
$(N_OUT)/libnvidia-ml.so.1: $(addprefix $(N_OUT)/,$(N_OBJS)) $(N_DIR)/nvml.map
	$(CC) $(N_LDFLAGS) $(filter %.o,$^) -ldl -o $@
	ln -sf libnvidia-ml.so.1 $(N_OUT)/libnvidia-ml.so
$(N_SAN)/libnvidia-ml.so.1: $(addprefix $(N_SAN)/,$(N_OBJS)) $(N_DIR)/nvml.map
	$(CC) $(N_LDFLAGS) $(SAN_FLAGS) $(filter %.o,$^) -ldl -o $@
	ln -sf libnvidia-ml.so.1 $(N_SAN)/libnvidia-ml.so

# test_nvml: a cmocka program as NVML's users write them (nvml.h's default
# names), linked with -lnvidia-ml and -lcuda, compared with libcuda and
# the daemon.  test_nvml_only: the same library in a process that does not
# link libcuda.  abi_dump: values and layouts of the fallback header, and
# of the toolkit's when there is one.
N_TDIR := $(N_DIR)/tests
N_TFLAGS := $(CFLAGS_COMMON) -I$(N_HDR) -I$(CUDA_INC) \
	-Wno-deprecated-declarations -pthread
N_TLIBS_test_nvml := -lcuda
$(N_OUT)/tests/%: $(N_TDIR)/%.c $(N_OUT)/libnvidia-ml.so.1 \
		$(C_OUT)/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) $(N_TFLAGS) $< -L$(N_OUT) -lnvidia-ml -L$(C_OUT) \
		$(N_TLIBS_$*) -lcmocka -ldl -o $@
$(N_SAN)/tests/%: $(N_TDIR)/%.c $(N_SAN)/libnvidia-ml.so.1 \
		$(C_SAN)/libcuda.so.1
	@mkdir -p $(@D)
	$(CC) $(N_TFLAGS) $(SAN_FLAGS) $< -L$(N_SAN) -lnvidia-ml -L$(C_SAN) \
		$(N_TLIBS_$*) -lcmocka -ldl -o $@
$(N_OUT)/abi/compat: $(N_TDIR)/abi_dump.c $(N_DIR)/compat/nvml.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -I$(N_DIR)/compat $< -o $@
$(N_OUT)/abi/toolkit: $(N_TDIR)/abi_dump.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -I$(NVML_INC) $< -o $@

N_TESTS := test_nvml test_nvml_only
check-nvml: $(addprefix $(N_OUT)/tests/,$(N_TESTS)) \
		$(addprefix $(N_SAN)/tests/,$(N_TESTS)) $(BUILD)/mdgpud \
		$(N_OUT)/abi/compat $(if $(NVML_INC),$(N_OUT)/abi/toolkit)
	BUILD=$(BUILD) $(N_TDIR)/run-nvml-tests.sh $(N_OUT) $(C_OUT)
	BUILD=$(BUILD) $(N_TDIR)/run-nvml-tests.sh $(N_SAN) $(C_SAN)
	$(if $(NVML_INC),$(N_OUT)/abi/compat > $(N_OUT)/abi/compat.txt && \
		$(N_OUT)/abi/toolkit > $(N_OUT)/abi/toolkit.txt && \
		diff -u $(N_OUT)/abi/toolkit.txt $(N_OUT)/abi/compat.txt && \
		$(N_GEN) --check-list $(N_DIR)/entry-points.txt && \
		echo "nvml: compat header and symbol list match $(NVML_INC)/nvml.h",\
		@echo "SKIP nvml ABI comparison: no toolkit nvml.h (NVML_INC)")

check: check-nvml

nvml-list:
	$(N_GEN) --write-list $(N_DIR)/entry-points.txt

-include $(wildcard $(N_OUT)/*.d $(N_SAN)/*.d)
