# SPDX-License-Identifier: GPL-2.0 OR MIT
# libFuzzer harnesses (Documentation/fuzzing.md): clang with
# -fsanitize=fuzzer,address,undefined over the parsers that take untrusted
# input.  One binary per harness, fuzz/fuzz_<name>.c, seeds committed in
# fuzz/corpus/<name>/.
#
#   make fuzz                   build and run each harness FUZZ_SECONDS (60)
#   make fuzz FUZZ_SECONDS=N    one line per harness:
#                               "fuzz <name>: <execs> execs, <crashes> crashes"
#   make check-fuzz             the same for 5 s each (part of make check)
#   FUZZ_ARGS=-runs=N make fuzz  more libFuzzer options (here: N execs each)
#   make fuzz-bins              build only
#   make fuzz-seeds             rewrite the binary seeds (validate/, hello/, link/)
#                               from fuzz/mkseeds.c, after an ABI change
#
# New inputs found go to build/fuzz/corpus/<name>/, crash inputs to
# build/fuzz/crashes/<name>/ (never into the tree).  Without clang or its
# libFuzzer runtime (Debian: clang-14, libclang-rt-14-dev) the runs are
# skipped with a message, not failed.

# clang, or Debian's clang-14 alone (without the `clang` package).
FUZZ_CC ?= $(firstword $(shell command -v clang clang-14 2>/dev/null) clang)
FUZZ_SECONDS ?= 60
FUZZ_CHECK_SECONDS ?= 5
F_DIR := $(TOP)/fuzz
F_OUT := $(BUILD)/fuzz
F_HARNESSES := validate admin adminconn hello config image link
F_BINS := $(addprefix $(F_OUT)/fuzz_,$(F_HARNESSES))
F_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
F_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 \
	-I$(TOP)/include -I$(TOP) -I$(BUILD)/gen $(F_SAN) \
	-fsanitize=fuzzer-no-link
# The daemon's library, built again with clang and coverage.
F_D_OBJS := $(patsubst $(D_DIR)/%.c,$(F_OUT)/daemon/%.o,$(D_SRCS))
F_D_CFLAGS := $(F_CFLAGS) -I$(D_DIR)/include -I$(TOP)/libmdgpu/include \
	-pthread -MMD -MP

.PHONY: fuzz fuzz-bins fuzz-seeds check-fuzz
fuzz-bins: $(F_BINS)

$(F_OUT)/daemon/%.o: $(D_DIR)/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(F_D_CFLAGS) -c $< -o $@
$(F_OUT)/libmdgpud.a: $(F_D_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(F_OUT)/fuzz_%: $(F_DIR)/fuzz_%.c $(F_DIR)/fuzz.h $(F_OUT)/libmdgpud.a
	@mkdir -p $(@D)
	$(FUZZ_CC) $(F_D_CFLAGS) -fsanitize=fuzzer $< $(F_OUT)/libmdgpud.a \
		$(D_LIBS) -o $@
# libcuda's image parsers alone.
$(F_OUT)/fuzz_image: $(F_DIR)/fuzz_image.c $(F_DIR)/fuzz.h $(C_DIR)/image.c \
		$(C_DIR)/image.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(F_CFLAGS) -fsanitize=fuzzer -I$(C_DIR) $< $(C_DIR)/image.c \
		-o $@

# MODULE_LINK's formats: a header alone.
$(F_OUT)/fuzz_link: $(F_DIR)/fuzz_link.c $(F_DIR)/fuzz.h \
		$(TOP)/include/common/link_bundle.h $(TOP)/include/uapi/mdgpu.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(F_CFLAGS) -fsanitize=fuzzer $< -o $@

# The seeds of the binary formats, written by a program that includes the
# uapi header, so they follow the ABI's layout.
$(F_OUT)/mkseeds: $(F_DIR)/mkseeds.c $(TOP)/include/uapi/mdgpu.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $< -o $@
fuzz-seeds: $(F_OUT)/mkseeds
	$(F_OUT)/mkseeds $(F_DIR)/corpus

# The toolchain check runs first, so a machine without libFuzzer skips
# instead of failing to build.
fuzz:
	@$(F_DIR)/have-libfuzzer.sh "$(FUZZ_CC)" || exit 0; \
	$(MAKE) --no-print-directory -s fuzz-bins && \
	$(F_DIR)/run-fuzz.sh $(FUZZ_SECONDS) $(F_OUT) $(F_DIR) \
		$(F_HARNESSES)

check-fuzz:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_CHECK_SECONDS)

check: check-fuzz

-include $(F_D_OBJS:.o=.d) $(wildcard $(F_BINS:=.d))
