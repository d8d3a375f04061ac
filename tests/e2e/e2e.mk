# SPDX-License-Identifier: GPL-2.0 OR MIT
# tests/e2e/e2e.mk: the end-to-end guest (Documentation/e2e.md).
#
#   make check-e2e KVER=6.1|6.12   mdgpu.ko + mdgpud (kernel transport, sim
#                                  backend) + VFIO clients in a TCG guest
#   make check-e2e-all             both kernels (part of `make check`)
#   make demo                      scripts/demo.sh: the demo (6.12 guest)
#   make check-e2e-nested KVER=6.1|6.12
#                                  nested: mdgpud in the outer TCG guest, a
#                                  VM with the vGPU (vfio-pci,sysfsdev=)
#                                  inside it running the client over the
#                                  guest transport (3 to 5 minutes per
#                                  kernel)
#   make check-e2e-nested-all      both kernels (part of `make check`)
#   make check-e2e-nested KVER=... E2E_NESTED_DRIVER=1
#                                  the same boot also runs tests/nested's
#                                  driver suite (check-nested's checks) on
#                                  a second vGPU; check-e2e-nested-all does
#                                  so on NESTED_CI_KVERS (tests/nested/
#                                  nested.mk): `make check` boots the
#                                  6.12 nested guests once for both suites
#
# Static binaries for the guest, built with the common flags (no
# sanitizers: the guest has no ASAN runtime): mdgpud and the client.
# The e2e guest also gets build/mdgpuctl (dynamic, with glibc), which
# qemu-scripts/mdgpu-vgpu runs.
# The e2e guest also runs mdgpud on the cuda backend over CI's fake
# libcuda.so.1 (build/cuda-fake) with build/mdgpud-worker (dynamic).
# The e2e guest also runs libcuda.so.1 with test_driver over the vfio
# transport, the nested suite's inner guest over the guest transport
# with, when nvcc is here, rt_basic (libcuda.mk's; glibc comes along).

E2E_DIR := $(TOP)/tests/e2e
E2E_BUILD := $(BUILD)/e2e
E2E_KVERS ?= 6.1 6.12
E2E_BINS := $(E2E_BUILD)/mdgpud $(E2E_BUILD)/mdgpu-e2e-client

E2E_RT := $(if $(NVCC),$(C_OUT)/tests/rt_basic)
E2E_DRIVER := $(C_OUT)/libcuda.so.1 $(C_OUT)/tests/test_driver
E2E_CUDA := $(E2E_DRIVER) $(E2E_RT)
# The nested outer daemon's backend (run-e2e-nested.sh): cuda over the
# fake libcuda, or sim.  check-e2e-nested-all runs the kernels of
# NESTED_CI_KVERS, whose boot also carries the driver suite, on sim and
# the others on cuda (Documentation/ci.md, "Decisions").
E2E_NESTED_BACKEND ?= cuda
# libvirt starts the inner guest (1) or QEMU directly (0);
# check-e2e-nested-all starts the driver suite's boot directly (two
# libvirt start-ups would cost CI about 45 s each).
E2E_NESTED_LIBVIRT ?= 1

.PHONY: check-e2e check-e2e-all e2e-bins demo check-e2e-nested \
	check-e2e-nested-all
e2e-bins: $(E2E_BINS)

# Static glibc warns that the (weakly linked) cuda backend's dlopen would
# need the shared libraries at run time: the guest uses the sim backend.
$(E2E_BUILD)/mdgpud: $(D_DIR)/main.c $(BUILD)/libmdgpud.a
	@mkdir -p $(@D)
	@rm -f $@
	@rc=0; $(CC) $(D_CFLAGS) -static $< -Wl,--whole-archive \
		$(BUILD)/libmdgpud.a -Wl,--no-whole-archive $(D_LIBS) \
		-o $@ 2>$@.log || rc=$$?; \
	grep -v "statically linked applications requires at runtime\|in function \`" \
		$@.log || true; rm -f $@.log; exit $$rc

$(E2E_BUILD)/mdgpu-e2e-client: $(E2E_DIR)/e2e-client.c $(BUILD)/libmdgpu.a \
		$(TOP)/guest/include/uapi/mdgpu-guest.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) -I$(L_DIR)/include -pthread -static $< \
		$(BUILD)/libmdgpu.a -o $@

check-e2e: e2e-bins $(E2E_DRIVER) $(BUILD)/mdgpuctl $(BUILD)/mdgpud-worker \
		$(CUDA_FAKE)
	@test -n "$(KVER)" || { echo "usage: make check-e2e KVER=6.1|6.12"; exit 2; }
	@rel=$$($(VM_DIR)/kver-release.sh $(KVER)) && \
	{ $(MAKE) --no-print-directory modules KVER=$$rel KMOD_W=1 || \
	  echo "e2e: module build for $$rel failed; booting without it"; } && \
	$(E2E_DIR)/run-e2e.sh $$rel

# Both kernels run even if the first fails; the target fails if either did.
check-e2e-all: e2e-bins $(E2E_DRIVER) $(BUILD)/mdgpuctl \
		$(BUILD)/mdgpud-worker $(CUDA_FAKE)
	@rc=0; for k in $(E2E_KVERS); do \
		$(MAKE) --no-print-directory check-e2e KVER=$$k || rc=1; \
	done; exit $$rc

check: check-e2e-all check-e2e-nested-all

# Nested: also needs mdgpu-guest.ko (guest.mk) for the same release.
# rt_basic (NVIDIA's static runtime in the inner guest) runs on 6.1 only:
# 14-26 s of the inner guest's time per kernel, and the 6.12 run is the
# one that may need its second boot (Documentation/e2e.md).
check-e2e-nested: e2e-bins $(E2E_CUDA) nested-bins $(BUILD)/mdgpud-worker \
		$(CUDA_FAKE)
	@test -n "$(KVER)" || { echo "usage: make check-e2e-nested KVER=6.1|6.12"; exit 2; }
	@rel=$$($(VM_DIR)/kver-release.sh $(KVER)) && \
	{ $(MAKE) --no-print-directory modules KVER=$$rel KMOD_W=1 || \
	  echo "e2e-nested: module build for $$rel failed; booting without it"; } && \
	$(MAKE) --no-print-directory guest-modules KVER=$(KVER) GUEST_W=1 && \
	E2E_NESTED_RT_BASIC=$(if $(filter 6.12,$(KVER)),,$(E2E_RT)) \
	E2E_NESTED_DRIVER=$(E2E_NESTED_DRIVER) \
	E2E_NESTED_BACKEND=$(E2E_NESTED_BACKEND) \
	E2E_NESTED_LIBVIRT=$(E2E_NESTED_LIBVIRT) \
		$(E2E_DIR)/run-e2e-nested.sh $$rel

check-e2e-nested-all: e2e-bins $(E2E_CUDA) nested-bins \
		$(BUILD)/mdgpud-worker $(CUDA_FAKE)
	@rc=0; for k in $(E2E_KVERS); do \
		case " $(NESTED_CI_KVERS) " in \
		*" $$k "*) d=1 b=sim l=0 ;; *) d= b=cuda l=1 ;; esac; \
		$(MAKE) --no-print-directory check-e2e-nested KVER=$$k \
			E2E_NESTED_DRIVER=$$d E2E_NESTED_BACKEND=$$b \
			E2E_NESTED_LIBVIRT=$$l || rc=1; \
	done; exit $$rc

demo: e2e-bins $(BUILD)/mdgpuctl
	@rel=$$($(VM_DIR)/kver-release.sh 6.12) && \
	{ $(MAKE) --no-print-directory modules KVER=$$rel >/dev/null || \
	  echo "demo: module build for $$rel failed"; } && \
	$(TOP)/scripts/demo.sh
