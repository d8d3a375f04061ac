// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The core's guest-IOVA paths, through a fake transport with a DMA op (the
 * kernel transport's shape): chunked copies through the bounce buffer both
 * ways, module images fetched by DMA, DMA faults and limits.  Also checks
 * the transport contract: completions, fence, lost().  Runs on the sim
 * backend; test_core_dma_cuda.c runs the same on the cuda backend over the
 * fake libcuda, with the aperture shared the kernel transport's way, and
 * adds the zero-copy aperture checks (test_cuda_aperture).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <cmocka.h>

#include "uapi/mdgpu.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

#define FAKE_TRANSPORT_NAME "dma"
#include "fake_transport.h"

static struct mdgpu_cmd copy_cmd(uint64_t src, uint32_t ss, uint64_t dst,
				 uint32_t ds, uint64_t len)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_COPY;
	c.copy.src = src;
	c.copy.src_space = ss;
	c.copy.dst = dst;
	c.copy.dst_space = ds;
	c.copy.len = len;
	return c;
}

static void test_iova_copies(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c;
	struct mdgpu_cpl cpl;
	uint64_t dev, calls;

	for (uint32_t i = 0; i < GUEST_SIZE; i++)
		e->f.guest[i] = (uint8_t)(i * 13 + (i >> 10));
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_MEM_ALLOC;
	c.alloc.size = 3 * MIB;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	dev = cpl.result;

	calls = e->f.dma_calls;
	c = copy_cmd(0x1000, MDGPU_SPACE_IOVA, dev, MDGPU_SPACE_DEVICE,
		     3 * MIB);
	assert_int_equal(call(e, &c).status, 0);
	assert_int_equal(e->f.dma_calls - calls, 12);	/* 256 KiB chunks */

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_BUILTIN;
	c.builtin.kernel = MDGPU_BUILTIN_CHECKSUM;
	c.builtin.arg[0] = dev;
	c.builtin.arg[1] = 3 * MIB / 4;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	assert_int_equal(cpl.result,
			 mdgpud_checksum_ref((const uint32_t *)
					     (e->f.guest + 0x1000),
					     3 * MIB / 4));

	/* Device -> guest, then compare in guest memory. */
	c = copy_cmd(dev, MDGPU_SPACE_DEVICE, 4 * MIB, MDGPU_SPACE_IOVA,
		     3 * MIB);
	assert_int_equal(call(e, &c).status, 0);
	assert_memory_equal(e->f.guest + 4 * MIB, e->f.guest + 0x1000,
			    3 * MIB);

	/* An unmapped IOVA faults; an oversized one is refused up front. */
	c = copy_cmd(GUEST_SIZE - 4096, MDGPU_SPACE_IOVA, dev,
		     MDGPU_SPACE_DEVICE, 8192);
	assert_int_equal(call(e, &c).status, -EFAULT);
	c = copy_cmd(0, MDGPU_SPACE_IOVA, dev, MDGPU_SPACE_DEVICE,
		     MDGPU_DMA_MAX + 1);
	assert_int_equal(call(e, &c).status, -E2BIG);
	c = copy_cmd(UINT64_MAX - 10, MDGPU_SPACE_IOVA, dev,
		     MDGPU_SPACE_DEVICE, 100);
	assert_int_equal(call(e, &c).status, -ERANGE);
}

static void test_iova_module(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c;
	uint64_t calls = e->f.dma_calls;

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_MODULE_LOAD;
	c.module_load.space = MDGPU_SPACE_IOVA;
	c.module_load.kind = MDGPU_MODULE_PTX;
	c.module_load.addr = 0;
	c.module_load.len = 4096;
#ifdef FAKE_TRANSPORT_CUDA
	/* Fetched by DMA, then refused by the driver (not PTX). */
	memcpy(e->f.guest, "this is not ptx", 15);
	assert_int_equal(call(e, &c).status, -EINVAL);
#else
	/* Fetched by DMA, then refused by sim (foreign code). */
	assert_int_equal(call(e, &c).status, -EOPNOTSUPP);
#endif
	assert_int_equal(e->f.dma_calls - calls, 1);
	c.module_load.addr = GUEST_SIZE - 100;
	assert_int_equal(call(e, &c).status, -EFAULT);
}

#ifdef FAKE_TRANSPORT_CUDA
/* The fake libcuda's scale_add: p[i] = p[i] * k + i over n u32. */
static const char scale_add_entry[] =
	".visible .entry scale_add(.param .u64 p_ptr, .param .u64 p_n,\n"
	"                          .param .u32 p_k)\n{\n\tret;\n}\n";

/*
 * The aperture reaches the worker as a region mapped from the second
 * file (the kernel's APERTURE_FD), registered with the driver: QUERY
 * APERTURE_DEVPTR answers the whole aperture; copies between it and
 * device memory, asynchronous ones too, land in the daemon's mapping; a
 * kernel whose module image, name and parameters came by IOVA writes the
 * aperture through its device pointer, and the daemon's mapping (the
 * guest's BAR4 on the kernel transport) sees the result: the worker and
 * the GPU use the very pages the guest maps, no copy in between.
 */
static void test_cuda_aperture(void **state)
{
	struct env *e = *state;
	const uint64_t n = 1024, off = 2 * MIB;
	uint32_t *ap = (uint32_t *)(e->aperture + off);
	uint64_t devptr, dev, mod, fn;
	struct mdgpu_cmd c;
	struct mdgpu_cpl cpl;
	uint8_t blob[20];
	uint32_t k = 3;

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_QUERY;
	c.query.what = MDGPU_QUERY_APERTURE_DEVPTR;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	assert_true(cpl.result != 0);
	assert_int_equal(cpl.result2, 8 * MIB);
	devptr = cpl.result;

	/* Aperture -> device (asynchronous), device -> aperture. */
	for (uint32_t i = 0; i < MIB / 4; i++)
		((uint32_t *)e->aperture)[i] = i * 2654435761u;
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_MEM_ALLOC;
	c.alloc.size = MIB;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	dev = cpl.result;
	c = copy_cmd(0, MDGPU_SPACE_APERTURE, dev, MDGPU_SPACE_DEVICE, MIB);
	c.flags = MDGPU_CMD_F_ASYNC;
	assert_int_equal(call(e, &c).status, 0);
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_SYNC;
	assert_int_equal(call(e, &c).status, 0);
	c = copy_cmd(dev, MDGPU_SPACE_DEVICE, 4 * MIB, MDGPU_SPACE_APERTURE,
		     MIB);
	assert_int_equal(call(e, &c).status, 0);
	assert_memory_equal(e->aperture + 4 * MIB, e->aperture, MIB);

	/* A kernel loaded, named and launched by IOVA writes the aperture. */
	memcpy(e->f.guest, scale_add_entry, sizeof(scale_add_entry) - 1);
	memcpy(e->f.guest + 8192, "scale_add", 9);
	devptr += off;
	memcpy(blob, &devptr, 8);
	memcpy(blob + 8, &n, 8);
	memcpy(blob + 16, &k, 4);
	memcpy(e->f.guest + 12288, blob, sizeof(blob));
	for (uint32_t i = 0; i < n; i++)
		ap[i] = i + 7;

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_MODULE_LOAD;
	c.module_load.space = MDGPU_SPACE_IOVA;
	c.module_load.kind = MDGPU_MODULE_PTX;
	c.module_load.len = sizeof(scale_add_entry) - 1;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	mod = cpl.result;
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_FUNC_GET;
	c.func_get.name_addr = 8192;
	c.func_get.name_len = 9;
	c.func_get.name_space = MDGPU_SPACE_IOVA;
	c.func_get.module = (uint32_t)mod;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	fn = cpl.result;
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_LAUNCH;
	c.launch.func = (uint32_t)fn;
	c.launch.grid[0] = (uint32_t)(n / 256);
	c.launch.block[0] = 256;
	c.launch.grid[1] = c.launch.grid[2] = 1;
	c.launch.block[1] = c.launch.block[2] = 1;
	c.launch.params_addr = 12288;
	c.launch.params_len = sizeof(blob);
	c.launch.params_space = MDGPU_SPACE_IOVA;
	assert_int_equal(call(e, &c).status, 0);
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_SYNC;
	assert_int_equal(call(e, &c).status, 0);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(ap[i], (i + 7) * k + i);
	assert_int_equal(ap[n], 0);	/* nothing past the kernel's n */
}
#endif

/* The kernel transport's knob and policy events land here. */
static void test_knobs(void **state)
{
	struct env *e = *state;

	/* The dispatcher thread owns the scheduler: stop it first. */
	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	assert_int_equal(mdgpud_vgpu_set_knobs(e->v, 4, 50, 7), 0);
	assert_int_equal(mdgpud_vgpu_set_knobs(e->v, 0, 50, 7), -EINVAL);
	assert_int_equal(mdgpud_vgpu_set_knobs(e->v, MDGPU_WEIGHT_MAX + 1, 50,
					       7), -EINVAL);
	assert_int_equal(mdgpud_vgpu_set_knobs(e->v, 1, MDGPU_CAP_MAX + 1, 7),
			 -EINVAL);
	assert_int_equal(mdgpud_vgpu_set_knobs(e->v, 1, 100,
					       MDGPU_PRIORITY_MAX + 1),
			 -EINVAL);
	assert_int_equal(mdgpud_core_set_policy(e->core,
						MDGPU_POLICY_FIXED_SHARE,
						2000), 0);
	assert_int_equal(mdgpud_core_config(e->core)->timeslice_us, 2000);
	assert_int_equal(mdgpud_core_set_policy(e->core, 99, 2000), -EINVAL);
	assert_int_equal(mdgpud_core_set_policy(e->core,
						MDGPU_POLICY_BEST_EFFORT,
						MDGPU_TIMESLICE_US_MIN - 1),
			 -EINVAL);
	assert_int_equal(mdgpud_core_config(e->core)->policy,
			 MDGPU_POLICY_FIXED_SHARE);
	/* Running again under the new policy still serves the ring. */
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
	{
		struct mdgpu_cmd c;

		memset(&c, 0, sizeof(c));
		c.opcode = MDGPU_OP_SYNC;
		assert_int_equal(call(e, &c).status, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_iova_copies, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_iova_module, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_knobs, setup, teardown),
#ifdef FAKE_TRANSPORT_CUDA
		cmocka_unit_test_setup_teardown(test_cuda_aperture, setup,
						teardown),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
