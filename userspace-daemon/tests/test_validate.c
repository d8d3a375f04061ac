// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The validator: every field out of range, overflows, foreign handles,
 * reserved bits, each space. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mdgpud/validate.h"

#define APERTURE_SIZE 4096
#define BASE 0x100000ULL

struct fixture {
	struct mdgpud_memtab *mem, *other_mem;
	struct mdgpud_handles *h, *other_h;
	uint8_t aperture[APERTURE_SIZE];
	struct mdgpud_vctx vc;
	uint32_t module, func, event, other_func, other_event, other_module;
	struct mdgpud_vcmd out;
};

static int setup(void **state)
{
	struct fixture *f = test_calloc(1, sizeof(*f));

	assert_int_equal(mdgpud_memtab_create(1 << 20, 16, &f->mem), 0);
	assert_int_equal(mdgpud_memtab_create(1 << 20, 16, &f->other_mem), 0);
	/* Two allocations back to back: [BASE, +4096) and [BASE+4096, +4096). */
	assert_int_equal(mdgpud_memtab_insert(f->mem, BASE, 4096, 4096), 0);
	assert_int_equal(mdgpud_memtab_insert(f->mem, BASE + 4096, 4096,
					      4096), 0);
	assert_int_equal(mdgpud_memtab_insert(f->other_mem, 0x900000, 4096,
					      4096), 0);
	assert_int_equal(mdgpud_handles_create(8, &f->h), 0);
	assert_int_equal(mdgpud_handles_create(8, &f->other_h), 0);
	assert_int_equal(mdgpud_handles_add(f->h, MDGPUD_H_MODULE, 11, 0,
					    &f->module), 0);
	/* A function whose threads use 4 KiB of local memory each. */
	assert_int_equal(mdgpud_handles_add_extra(f->h, MDGPUD_H_FUNC, 22,
						  f->module, 4096, &f->func),
			 0);
	assert_int_equal(mdgpud_handles_add(f->h, MDGPUD_H_EVENT, 33, 0,
					    &f->event), 0);
	/* The other vGPU's handles: different slots, so they never alias
	 * ours by accident in this test. */
	uint32_t pad;
	for (int i = 0; i < 4; i++)
		assert_int_equal(mdgpud_handles_add(f->other_h, MDGPUD_H_EVENT,
						    99, 0, &pad), 0);
	assert_int_equal(mdgpud_handles_add(f->other_h, MDGPUD_H_FUNC, 44, 0,
					    &f->other_func), 0);
	assert_int_equal(mdgpud_handles_add(f->other_h, MDGPUD_H_EVENT, 55, 0,
					    &f->other_event), 0);
	assert_int_equal(mdgpud_handles_add(f->other_h, MDGPUD_H_MODULE, 66, 0,
					    &f->other_module), 0);
	f->vc = (struct mdgpud_vctx){
		.mem = f->mem, .handles = f->h, .aperture = f->aperture,
		.aperture_size = APERTURE_SIZE, .iova_ok = false,
		.shared_bytes_max = 48 * 1024,
	};
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	mdgpud_memtab_destroy(f->mem);
	mdgpud_memtab_destroy(f->other_mem);
	mdgpud_handles_destroy(f->h);
	mdgpud_handles_destroy(f->other_h);
	test_free(f);
	return 0;
}

static int v(struct fixture *f, const struct mdgpu_cmd *c)
{
	return mdgpud_validate(&f->vc, c, &f->out);
}

static struct mdgpu_cmd cmd(uint16_t op)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = op;
	return c;
}

static void test_header(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_NOP);

	assert_int_equal(v(f, &c), 0);
	c.opcode = MDGPU_OP_COUNT;
	assert_int_equal(v(f, &c), -EINVAL);
	c.opcode = 0xffff;
	assert_int_equal(v(f, &c), -EINVAL);
	c = cmd(MDGPU_OP_NOP);
	c.flags = MDGPU_CMD_F_IRQ;
	assert_int_equal(v(f, &c), 0);
	for (int bit = 1; bit < 16; bit++) {
		c.flags = (uint16_t)(1U << bit);
		assert_int_equal(v(f, &c), -EINVAL);
	}
	c = cmd(MDGPU_OP_NOP);
	c.stream = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	/* Unused operand bytes are reserved: each byte of NOP/SYNC. */
	for (size_t i = 0; i < sizeof(c.raw); i++) {
		c = cmd(i & 1 ? MDGPU_OP_SYNC : MDGPU_OP_NOP);
		c.raw[i] = 0x80;
		assert_int_equal(v(f, &c), -EINVAL);
	}
	/* Bytes beyond an op's operands: alloc uses 16 of 56. */
	c = cmd(MDGPU_OP_MEM_ALLOC);
	c.alloc.size = 64;
	c.raw[16] = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c.raw[16] = 0;
	c.raw[55] = 1;
	assert_int_equal(v(f, &c), -EINVAL);
}

static void test_alloc_free_memset(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_MEM_ALLOC);

	assert_int_equal(v(f, &c), -EINVAL);		/* size 0 */
	c.alloc.size = UINT64_MAX;
	assert_int_equal(v(f, &c), 0);	/* quota is the executor's job */
	assert_int_equal(f->out.alloc.size, UINT64_MAX);
	c.alloc.flags = 1;
	assert_int_equal(v(f, &c), -EINVAL);

	c = cmd(MDGPU_OP_MEM_FREE);
	c.free.addr = BASE;
	assert_int_equal(v(f, &c), 0);
	c.free.addr = 0x900000;				/* other vGPU's */
	assert_int_equal(v(f, &c), -ENOENT);
	c.free.addr = 0;
	assert_int_equal(v(f, &c), -ENOENT);

	c = cmd(MDGPU_OP_MEMSET);
	c.memset.addr = BASE + 10;
	c.memset.len = 4086;
	c.memset.value = 0xab;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.memset.value, 0xab);
	c.memset.len = 4087;	/* runs into the next allocation */
	assert_int_equal(v(f, &c), -ERANGE);
	c.memset.len = UINT64_MAX;			/* overflow */
	assert_int_equal(v(f, &c), -ERANGE);
	c.memset.len = 1;
	c.memset.value = 0x1ab;				/* reserved bits */
	assert_int_equal(v(f, &c), -EINVAL);
	c.memset.value = 1;
	c.memset.width = 3;				/* not 1, 2 or 4 */
	assert_int_equal(v(f, &c), -EINVAL);
	c.memset.width = 0;
	c.memset.addr = BASE + 2 * 4096;		/* past both */
	assert_int_equal(v(f, &c), -ENOENT);
	c.memset.addr = BASE - 1;
	assert_int_equal(v(f, &c), -ENOENT);
	c.memset.addr = 0x900000;
	assert_int_equal(v(f, &c), -ENOENT);
}

static void test_copy(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_COPY);

	/* host -> device through the aperture */
	c.copy.src_space = MDGPU_SPACE_APERTURE;
	c.copy.dst_space = MDGPU_SPACE_DEVICE;
	c.copy.src = 96;
	c.copy.dst = BASE;
	c.copy.len = 4000;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.copy.dir, MDGPUD_COPY_H2D);
	assert_ptr_equal(f->out.copy.host.ptr, f->aperture + 96);
	c.copy.len = 4001;				/* aperture end */
	assert_int_equal(v(f, &c), -ERANGE);
	c.copy.src = UINT64_MAX - 10;			/* overflow */
	c.copy.len = 100;
	assert_int_equal(v(f, &c), -ERANGE);
	c.copy.src = 0;
	c.copy.len = 4096;
	c.copy.dst = BASE + 1;				/* device end */
	assert_int_equal(v(f, &c), -ERANGE);
	c.copy.dst = 0x900000;				/* foreign */
	assert_int_equal(v(f, &c), -ENOENT);

	/* device -> host */
	c = cmd(MDGPU_OP_COPY);
	c.copy.src_space = MDGPU_SPACE_DEVICE;
	c.copy.dst_space = MDGPU_SPACE_APERTURE;
	c.copy.src = BASE + 4096;
	c.copy.dst = 0;
	c.copy.len = 4096;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.copy.dir, MDGPUD_COPY_D2H);
	c.copy.dst = 1;
	assert_int_equal(v(f, &c), -ERANGE);

	/* device -> device: both ends inside one allocation each */
	c = cmd(MDGPU_OP_COPY);
	c.copy.src_space = c.copy.dst_space = MDGPU_SPACE_DEVICE;
	c.copy.src = BASE;
	c.copy.dst = BASE + 4096;
	c.copy.len = 4096;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.copy.dir, MDGPUD_COPY_D2D);
	c.copy.src = BASE + 1;	/* spans two allocations: not allowed */
	assert_int_equal(v(f, &c), -ERANGE);

	/* spaces: host to host, 0, unknown, IOVA on a transport without */
	c = cmd(MDGPU_OP_COPY);
	c.copy.len = 1;
	c.copy.src_space = c.copy.dst_space = MDGPU_SPACE_APERTURE;
	assert_int_equal(v(f, &c), -EINVAL);
	c.copy.src_space = 0;
	c.copy.dst_space = MDGPU_SPACE_DEVICE;
	c.copy.dst = BASE;
	assert_int_equal(v(f, &c), -EINVAL);
	c.copy.src_space = 77;
	assert_int_equal(v(f, &c), -EINVAL);
	c.copy.src_space = MDGPU_SPACE_IOVA;
	assert_int_equal(v(f, &c), -EINVAL);
	f->vc.iova_ok = true;
	c.copy.src = 0x1000;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.copy.host.space, MDGPU_SPACE_IOVA);
	c.copy.src = UINT64_MAX;
	assert_int_equal(v(f, &c), -ERANGE);
	f->vc.iova_ok = false;
}

static void test_module_func(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_MODULE_LOAD);

	c.module_load.space = MDGPU_SPACE_APERTURE;
	c.module_load.kind = MDGPU_MODULE_PTX;
	c.module_load.len = 100;
	assert_int_equal(v(f, &c), 0);
	c.module_load.kind = 3;
	assert_int_equal(v(f, &c), -EINVAL);
	c.module_load.kind = MDGPU_MODULE_CUBIN;
	c.module_load.len = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.module_load.len = MDGPU_MODULE_MAX + 1ULL;
	assert_int_equal(v(f, &c), -E2BIG);
	c.module_load.len = APERTURE_SIZE + 1;
	assert_int_equal(v(f, &c), -ERANGE);
	c.module_load.len = 10;
	c.module_load.space = 4;			/* no such space */
	assert_int_equal(v(f, &c), -EINVAL);
	c.module_load.space = MDGPU_SPACE_APERTURE;
	assert_int_equal(v(f, &c), 0);
	assert_false(f->out.module_load.from_dev);
	assert_ptr_equal(f->out.module_load.image.ptr, f->aperture);

	/* ABI 1.3: inside one allocation of this vGPU, up to its bound. */
	c.module_load.space = MDGPU_SPACE_DEVICE;
	c.module_load.addr = BASE + 16;
	c.module_load.len = 4096 - 16;
	assert_int_equal(v(f, &c), 0);
	assert_true(f->out.module_load.from_dev);
	assert_int_equal(f->out.module_load.dev, BASE + 16);
	assert_int_equal(f->out.module_load.len, 4096 - 16);
	assert_int_equal(f->out.module_load.kind, MDGPU_MODULE_CUBIN);
	c.module_load.len = 4096 - 15;		/* into the next allocation */
	assert_int_equal(v(f, &c), -ERANGE);
	c.module_load.addr = BASE + 4096 - 1;
	c.module_load.len = 2;
	assert_int_equal(v(f, &c), -ERANGE);
	c.module_load.addr = 0x900000;			/* the other vGPU's */
	c.module_load.len = 16;
	assert_int_equal(v(f, &c), -ENOENT);
	c.module_load.addr = BASE + 8192;		/* past our memory */
	assert_int_equal(v(f, &c), -ENOENT);
	c.module_load.addr = UINT64_MAX - 7;		/* wraps around */
	assert_int_equal(v(f, &c), -ENOENT);
	c.module_load.addr = BASE;
	c.module_load.len = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	/* The host bound does not apply; the range check does. */
	c.module_load.len = MDGPU_MODULE_MAX + 1ULL;
	assert_int_equal(v(f, &c), -ERANGE);
	c.module_load.len = MDGPU_MODULE_DEVICE_MAX + 1ULL;
	assert_int_equal(v(f, &c), -E2BIG);
	c.module_load.len = UINT64_MAX;
	assert_int_equal(v(f, &c), -E2BIG);

	c = cmd(MDGPU_OP_MODULE_UNLOAD);
	c.module_unload.module = f->module;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.module_unload.module, 11);
	c.module_unload.module = f->func;		/* wrong kind */
	assert_int_equal(v(f, &c), -ENOENT);
	c.module_unload.module = 0;
	assert_int_equal(v(f, &c), -ENOENT);
	c.module_unload.module = f->module;
	c.module_unload.pad = 1;
	assert_int_equal(v(f, &c), -EINVAL);

	memcpy(f->aperture + 100, "kern", 4);
	c = cmd(MDGPU_OP_FUNC_GET);
	c.func_get.module = f->module;
	c.func_get.name_addr = 100;
	c.func_get.name_len = 4;
	c.func_get.name_space = MDGPU_SPACE_APERTURE;
	assert_int_equal(v(f, &c), 0);
	assert_string_equal(f->out.func_get.name, "kern");
	c.func_get.name_len = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.func_get.name_len = MDGPU_NAME_MAX + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c.func_get.name_len = 4;
	c.func_get.name_addr = APERTURE_SIZE - 3;
	assert_int_equal(v(f, &c), -ERANGE);
	c.func_get.name_addr = 100;
	f->aperture[101] = 0;				/* embedded NUL */
	assert_int_equal(v(f, &c), -EINVAL);
	f->aperture[101] = 'e';
	c.func_get.module = 12345;
	assert_int_equal(v(f, &c), -ENOENT);
}

static void test_launch(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_LAUNCH), good;

	c.launch.func = f->func;
	c.launch.grid[0] = c.launch.grid[1] = c.launch.grid[2] = 1;
	c.launch.block[0] = 256;
	c.launch.block[1] = c.launch.block[2] = 1;
	c.launch.params_len = 16;
	c.launch.params_space = MDGPU_SPACE_APERTURE;
	c.launch.params_addr = 8;
	memset(f->aperture + 8, 0x5a, 16);
	good = c;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.launch.func, 22);
	assert_int_equal(f->out.launch.local_bytes, 4096); /* the handle's */
	assert_int_equal(f->out.launch.params[15], 0x5a);

	c.launch.func = f->other_func;		/* another vGPU's handle */
	assert_int_equal(v(f, &c), -ENOENT);
	c.launch.func = f->event;		/* wrong kind */
	assert_int_equal(v(f, &c), -ENOENT);
	for (int i = 0; i < 3; i++) {
		c = good;
		c.launch.grid[i] = 0;
		assert_int_equal(v(f, &c), -EINVAL);
		c.launch.grid[i] = 0x80000000U;
		assert_int_equal(v(f, &c), -EINVAL);
		c = good;
		c.launch.block[i] = 0;
		assert_int_equal(v(f, &c), -EINVAL);
	}
	c = good;
	c.launch.block[0] = 1024;
	c.launch.block[1] = 2;			/* 2048 threads */
	assert_int_equal(v(f, &c), -EINVAL);
	c = good;
	c.launch.shared_bytes = 48 * 1024 + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c = good;
	c.launch.params_len = MDGPU_PARAMS_MAX + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c = good;
	c.launch.params_addr = APERTURE_SIZE - 8;
	assert_int_equal(v(f, &c), -ERANGE);
	c.launch.params_space = MDGPU_SPACE_DEVICE;
	assert_int_equal(v(f, &c), -EINVAL);
	c.launch.params_len = 0;		/* space ignored when empty */
	assert_int_equal(v(f, &c), 0);
}

/*
 * Parameters past 4 KiB (ABI 1.6): up to MDGPU_PARAMS_MAX = 32764, copied
 * whole at validation; one byte more, a length that would wrap, or a
 * blob that runs past the aperture is refused before anything is read.
 */
static void test_launch_large(void **state)
{
	struct fixture *f = *state;
	const uint64_t ap_size = 64 * 1024;
	uint8_t *ap = test_malloc(ap_size);
	struct mdgpu_cmd c = cmd(MDGPU_OP_LAUNCH), good;

	for (uint64_t i = 0; i < ap_size; i++)
		ap[i] = (uint8_t)(i * 7 + 1);
	f->vc.aperture = ap;
	f->vc.aperture_size = ap_size;
	c.launch.func = f->func;
	c.launch.grid[0] = c.launch.grid[1] = c.launch.grid[2] = 1;
	c.launch.block[0] = c.launch.block[1] = c.launch.block[2] = 1;
	c.launch.params_space = MDGPU_SPACE_APERTURE;
	c.launch.params_addr = 100;
	c.launch.params_len = MDGPU_PARAMS_MAX;
	good = c;
	assert_int_equal(MDGPU_PARAMS_MAX, 32764);
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.launch.params_len, MDGPU_PARAMS_MAX);
	assert_memory_equal(f->out.launch.params, ap + 100, MDGPU_PARAMS_MAX);

	c.launch.params_len = MDGPU_PARAMS_MAX_1_5 + 1;	/* past 1.5's */
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.launch.params[MDGPU_PARAMS_MAX_1_5],
			 ap[100 + MDGPU_PARAMS_MAX_1_5]);
	c.launch.params_len = MDGPU_PARAMS_MAX + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c.launch.params_len = UINT32_MAX;
	assert_int_equal(v(f, &c), -E2BIG);
	c = good;					/* ends at the end */
	c.launch.params_addr = ap_size - MDGPU_PARAMS_MAX;
	assert_int_equal(v(f, &c), 0);
	c.launch.params_addr++;				/* one byte past */
	assert_int_equal(v(f, &c), -ERANGE);
	c.launch.params_addr = UINT64_MAX - 16;		/* addr + len wraps */
	assert_int_equal(v(f, &c), -ERANGE);
	f->vc.aperture = f->aperture;
	f->vc.aperture_size = APERTURE_SIZE;
	test_free(ap);
}

static void test_builtin(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_BUILTIN), good;

	c.builtin.kernel = MDGPU_BUILTIN_FILL_U32;
	c.builtin.arg[0] = BASE;
	c.builtin.arg[1] = 1024;
	c.builtin.arg[2] = 0xffffffff;
	good = c;
	assert_int_equal(v(f, &c), 0);
	c.builtin.arg[1] = 1025;
	assert_int_equal(v(f, &c), -ERANGE);
	c.builtin.arg[1] = 1ULL << 62;			/* count*4 overflows */
	assert_int_equal(v(f, &c), -ERANGE);
	c = good;
	c.builtin.arg[2] = 1ULL << 32;
	assert_int_equal(v(f, &c), -EINVAL);
	c = good;
	c.builtin.arg[0] = BASE + 2;			/* misaligned */
	assert_int_equal(v(f, &c), -EINVAL);
	c = good;
	c.builtin.arg[4] = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c = good;
	c.builtin.pad = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c = good;
	c.builtin.kernel = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.builtin.kernel = 5;
	assert_int_equal(v(f, &c), -EINVAL);

	c = cmd(MDGPU_OP_BUILTIN);
	c.builtin.kernel = MDGPU_BUILTIN_ADD_U32;
	c.builtin.arg[0] = BASE;
	c.builtin.arg[1] = BASE + 4096;
	c.builtin.arg[2] = BASE;
	c.builtin.arg[3] = 1024;
	assert_int_equal(v(f, &c), 0);
	c.builtin.arg[2] = 0x900000;			/* foreign source */
	assert_int_equal(v(f, &c), -ENOENT);

	c = cmd(MDGPU_OP_BUILTIN);
	c.builtin.kernel = MDGPU_BUILTIN_CHECKSUM;
	c.builtin.arg[0] = BASE + 4096;
	c.builtin.arg[1] = 1024;
	assert_int_equal(v(f, &c), 0);
	c.builtin.arg[1] = 1025;
	assert_int_equal(v(f, &c), -ERANGE);

	c = cmd(MDGPU_OP_BUILTIN);
	c.builtin.kernel = MDGPU_BUILTIN_SPIN_NS;
	c.builtin.arg[0] = MDGPU_SPIN_NS_MAX;
	assert_int_equal(v(f, &c), 0);
	c.builtin.arg[0] = MDGPU_SPIN_NS_MAX + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c.builtin.arg[0] = 1;
	c.builtin.arg[1] = 1;
	assert_int_equal(v(f, &c), -EINVAL);
}

static void test_events_query(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_EVENT_CREATE);

	assert_int_equal(v(f, &c), 0);
	c.event.event = 1;				/* reserved */
	assert_int_equal(v(f, &c), -EINVAL);

	c = cmd(MDGPU_OP_EVENT_RECORD);
	c.event.event = f->event;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.event.event, 33);
	c.event.end = f->event;
	assert_int_equal(v(f, &c), -EINVAL);
	c.event.end = 0;
	c.event.event = f->other_event;
	assert_int_equal(v(f, &c), -ENOENT);

	c = cmd(MDGPU_OP_EVENT_ELAPSED);
	c.event.event = f->event;
	c.event.end = f->event;
	assert_int_equal(v(f, &c), 0);
	c.event.end = f->module;
	assert_int_equal(v(f, &c), -ENOENT);

	c = cmd(MDGPU_OP_EVENT_DESTROY);
	c.event.event = f->event ^ (1U << 20);		/* stale generation */
	assert_int_equal(v(f, &c), -ENOENT);

	c = cmd(MDGPU_OP_QUERY);
	for (uint32_t w = MDGPU_QUERY_FB_QUOTA; w <= MDGPU_QUERY_APERTURE_DEVPTR;
	     w++) {
		c.query.what = w;
		assert_int_equal(v(f, &c), 0);
	}
	c.query.what = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.query.what = 1000;
	assert_int_equal(v(f, &c), -EINVAL);
}

/* ABI 1.2: the header's stream, F_ASYNC, the stream opcodes. */
static void test_streams(void **state)
{
	static const uint16_t takes[] = {
		MDGPU_OP_MEMSET, MDGPU_OP_COPY, MDGPU_OP_LAUNCH,
		MDGPU_OP_BUILTIN, MDGPU_OP_EVENT_RECORD, MDGPU_OP_SYNC,
		MDGPU_OP_STREAM_WAIT_EVENT, MDGPU_OP_STREAM_QUERY,
		MDGPU_OP_STREAM_MEMOP,
	};
	enum { NR_TAKES = sizeof(takes) / sizeof(takes[0]) };
	struct fixture *f = *state;
	struct mdgpu_cmd c, good[NR_TAKES];
	uint32_t st, other_st;

	assert_int_equal(mdgpud_handles_add(f->h, MDGPUD_H_STREAM, 77, 0, &st),
			 0);
	assert_int_equal(mdgpud_handles_add(f->other_h, MDGPUD_H_STREAM, 88, 0,
					    &other_st), 0);
	/* One valid command of each opcode that takes a stream. */
	for (size_t i = 0; i < NR_TAKES; i++)
		good[i] = cmd(takes[i]);
	good[0].memset.addr = BASE;
	good[0].memset.len = 16;
	good[1].copy.src = BASE;
	good[1].copy.dst = BASE + 4096;
	good[1].copy.len = 64;
	good[1].copy.src_space = good[1].copy.dst_space = MDGPU_SPACE_DEVICE;
	good[2].launch.func = f->func;
	good[2].launch.grid[0] = good[2].launch.grid[1] = 1;
	good[2].launch.grid[2] = 1;
	good[2].launch.block[0] = good[2].launch.block[1] = 1;
	good[2].launch.block[2] = 1;
	good[3].builtin.kernel = MDGPU_BUILTIN_SPIN_NS;
	good[4].event.event = f->event;
	good[6].event.event = f->event;
	good[8].memop.op = MDGPU_MEMOP_WRITE32;
	good[8].memop.addr = BASE;
	for (size_t i = 0; i < NR_TAKES; i++) {
		c = good[i];
		assert_int_equal(v(f, &c), 0);
		assert_int_equal(f->out.stream, 0);
		c.stream = st;
		assert_int_equal(v(f, &c), 0);
		assert_int_equal(f->out.stream, 77);
		assert_int_equal(f->out.stream_handle, st);
		c.stream = other_st;		/* another vGPU's stream */
		assert_int_equal(v(f, &c), -ENOENT);
		c.stream = f->event;		/* a handle of another kind */
		assert_int_equal(v(f, &c), -ENOENT);
		c.stream = st ^ (1U << 20);	/* stale generation */
		assert_int_equal(v(f, &c), -ENOENT);
		c.stream = UINT32_MAX;
		assert_int_equal(v(f, &c), -ENOENT);
	}
	/* Every other opcode requires stream 0. */
	for (uint16_t op = 0; op < MDGPU_OP_COUNT; op++) {
		bool t = false;

		for (size_t i = 0; i < NR_TAKES; i++)
			t |= takes[i] == op;
		if (t)
			continue;
		c = cmd(op);
		c.stream = st;
		assert_int_equal(v(f, &c), -EINVAL);
	}

	/* F_ASYNC: COPY only. */
	c = good[1];
	c.flags = MDGPU_CMD_F_ASYNC | MDGPU_CMD_F_IRQ;
	assert_int_equal(v(f, &c), 0);
	c.copy.dst = 0;
	c.copy.dst_space = MDGPU_SPACE_APERTURE;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.flags & MDGPU_CMD_F_ASYNC, MDGPU_CMD_F_ASYNC);
	for (size_t i = 0; i < NR_TAKES; i++) {
		if (takes[i] == MDGPU_OP_COPY)
			continue;
		c = good[i];
		c.flags = MDGPU_CMD_F_ASYNC;
		assert_int_equal(v(f, &c), -EINVAL);
	}

	/* STREAM_CREATE. */
	c = cmd(MDGPU_OP_STREAM_CREATE);
	assert_int_equal(v(f, &c), 0);
	c.stream_op.flags = MDGPU_STREAM_F_NON_BLOCKING;
	c.stream_op.priority = INT32_MIN;	/* clamped by the executor */
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.stream_op.priority, INT32_MIN);
	assert_int_equal(f->out.stream_op.flags, MDGPU_STREAM_F_NON_BLOCKING);
	c.stream_op.flags = 2;
	assert_int_equal(v(f, &c), -EINVAL);
	c.stream_op.flags = 0;
	c.stream_op.stream = st;		/* CREATE names no stream */
	assert_int_equal(v(f, &c), -EINVAL);
	c.stream_op.stream = 0;
	c.stream_op.pad = 1;
	assert_int_equal(v(f, &c), -EINVAL);

	/* STREAM_DESTROY. */
	c = cmd(MDGPU_OP_STREAM_DESTROY);
	c.stream_op.stream = st;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.stream_op.stream, 77);
	c.stream_op.flags = 1;			/* reserved for DESTROY */
	assert_int_equal(v(f, &c), -EINVAL);
	c.stream_op.flags = 0;
	c.stream_op.stream = 0;			/* the default stream */
	assert_int_equal(v(f, &c), -ENOENT);
	c.stream_op.stream = other_st;
	assert_int_equal(v(f, &c), -ENOENT);
	c.stream_op.stream = f->event;
	assert_int_equal(v(f, &c), -ENOENT);

	/* Event waits and queries. */
	for (uint16_t op = MDGPU_OP_STREAM_WAIT_EVENT;
	     op <= MDGPU_OP_EVENT_SYNC; op++) {
		if (op == MDGPU_OP_STREAM_QUERY)
			continue;
		c = cmd(op);
		c.event.event = f->event;
		assert_int_equal(v(f, &c), 0);
		assert_int_equal(f->out.event.event, 33);
		c.event.end = f->event;		/* reserved here */
		assert_int_equal(v(f, &c), -EINVAL);
		c.event.end = 0;
		c.event.flags = 1;
		assert_int_equal(v(f, &c), -EINVAL);
		c.event.flags = 0;
		c.event.event = st;		/* a stream is no event */
		assert_int_equal(v(f, &c), -ENOENT);
		c.event.event = f->other_event;
		assert_int_equal(v(f, &c), -ENOENT);
		c.event.event = 0;
		assert_int_equal(v(f, &c), -ENOENT);
	}
	c = cmd(MDGPU_OP_STREAM_QUERY);
	c.raw[0] = 1;
	assert_int_equal(v(f, &c), -EINVAL);

	/* EVENT_CREATE flags. */
	c = cmd(MDGPU_OP_EVENT_CREATE);
	c.event.flags = MDGPU_EVENT_F_DISABLE_TIMING;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.event.flags, MDGPU_EVENT_F_DISABLE_TIMING);
	c.event.flags = 2;
	assert_int_equal(v(f, &c), -EINVAL);
	c.event.flags = 0;
	c.event.pad = 1;
	assert_int_equal(v(f, &c), -EINVAL);

	/* QUERY STREAM_PRIORITIES, GPU_TIME. */
	c = cmd(MDGPU_OP_QUERY);
	c.query.what = MDGPU_QUERY_STREAM_PRIORITIES;
	assert_int_equal(v(f, &c), 0);
	c.query.what = MDGPU_QUERY_GPU_TIME;
	assert_int_equal(v(f, &c), 0);
	c.query.what = MDGPU_QUERY_GPU_TIME + 1;	/* the last one's next */
	assert_int_equal(v(f, &c), -EINVAL);
}

/* MEMSET widths 1, 2, 4; LAUNCH flags and clusters (ABI 1.2). */
static void test_memset_width_launch_ext(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_MEMSET), l;

	c.memset.addr = BASE;
	c.memset.len = 4096;
	c.memset.width = 2;
	c.memset.value = 0xffff;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.memset.width, 2);
	assert_int_equal(f->out.memset.value, 0xffff);
	c.memset.value = 0x10000;		/* does not fit 16 bits */
	assert_int_equal(v(f, &c), -EINVAL);
	c.memset.value = 1;
	c.memset.addr = BASE + 1;		/* misaligned */
	c.memset.len = 4094;
	assert_int_equal(v(f, &c), -EINVAL);
	c.memset.addr = BASE;
	c.memset.len = 4095;			/* not a multiple */
	assert_int_equal(v(f, &c), -EINVAL);
	c.memset.width = 4;
	c.memset.len = 4096;
	c.memset.value = 0xffffffff;
	assert_int_equal(v(f, &c), 0);
	c.memset.addr = BASE + 2;
	c.memset.len = 4092;
	assert_int_equal(v(f, &c), -EINVAL);
	c.memset.addr = BASE + 4;
	assert_int_equal(v(f, &c), 0);
	c.memset.len = 4096;			/* one word past the alloc */
	assert_int_equal(v(f, &c), -ERANGE);
	c.memset.len = UINT64_MAX - 3;		/* aligned, overflows */
	assert_int_equal(v(f, &c), -ERANGE);
	c.memset.len = 4;
	for (uint32_t w = 3; w < 64; w++) {
		if (w == 4)
			continue;
		c.memset.width = w;
		assert_int_equal(v(f, &c), -EINVAL);
	}
	c.memset.width = 0;			/* means 1 */
	c.memset.value = 0x100;
	assert_int_equal(v(f, &c), -EINVAL);
	c.memset.value = 0xab;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.memset.width, 1);

	l = cmd(MDGPU_OP_LAUNCH);
	l.launch.func = f->func;
	l.launch.grid[0] = 4;
	l.launch.grid[1] = 6;
	l.launch.grid[2] = 1;
	l.launch.block[0] = 32;
	l.launch.block[1] = l.launch.block[2] = 1;
	l.launch.flags = MDGPU_LAUNCH_F_COOPERATIVE;
	assert_int_equal(v(f, &l), 0);
	assert_int_equal(f->out.launch.flags, MDGPU_LAUNCH_F_COOPERATIVE);
	l.launch.flags = 2;
	assert_int_equal(v(f, &l), -EINVAL);
	l.launch.flags = 0;
	l.launch.cluster = MDGPU_CLUSTER(2, 3, 1);
	assert_int_equal(v(f, &l), 0);
	assert_int_equal(f->out.launch.cluster, MDGPU_CLUSTER(2, 3, 1));
	l.launch.cluster = MDGPU_CLUSTER(4, 6, 1);
	assert_int_equal(v(f, &l), 0);
	l.launch.cluster = MDGPU_CLUSTER(3, 1, 1);	/* 4 % 3 */
	assert_int_equal(v(f, &l), -EINVAL);
	l.launch.cluster = MDGPU_CLUSTER(8, 1, 1);	/* larger than grid */
	assert_int_equal(v(f, &l), -EINVAL);
	l.launch.cluster = MDGPU_CLUSTER(2, 0, 1);	/* zero inside */
	assert_int_equal(v(f, &l), -EINVAL);
	l.launch.cluster = MDGPU_CLUSTER(0, 0, 1);
	assert_int_equal(v(f, &l), -EINVAL);
	l.launch.cluster = MDGPU_CLUSTER(2, 1, 1) | 1U << 30;
	assert_int_equal(v(f, &l), -EINVAL);
	l.launch.cluster = MDGPU_CLUSTER(2, 1, 1) | 1U << 31;
	assert_int_equal(v(f, &l), -EINVAL);
}

static void test_handles_lifecycle(void **state)
{
	struct fixture *f = *state;
	uint32_t fn2, again;
	uint64_t val, extra;

	assert_int_equal(mdgpud_handles_add(f->h, MDGPUD_H_FUNC, 23, f->module,
					    &fn2), 0);
	mdgpud_handles_del_children(f->h, f->module);
	assert_int_equal(mdgpud_handles_get(f->h, f->func, MDGPUD_H_FUNC,
					    &val), -ENOENT);
	assert_int_equal(mdgpud_handles_get(f->h, fn2, MDGPUD_H_FUNC, &val),
			 -ENOENT);
	/* The slot is reused, but the old handle stays dead, and so does
	 * its extra word. */
	assert_int_equal(mdgpud_handles_add(f->h, MDGPUD_H_FUNC, 24, 0,
					    &again), 0);
	assert_int_not_equal(again, f->func);
	assert_int_not_equal(again, fn2);
	assert_int_equal(mdgpud_handles_get_extra(f->h, again, MDGPUD_H_FUNC,
						  &val, &extra), 0);
	assert_int_equal(val, 24);
	assert_int_equal(extra, 0);
	assert_int_equal(mdgpud_handles_get_extra(f->h, f->func, MDGPUD_H_FUNC,
						  NULL, &extra), -ENOENT);
	/* Capacity from config: 8 slots. */
	uint32_t hh;
	while (mdgpud_handles_count(f->h) < 8)
		assert_int_equal(mdgpud_handles_add(f->h, MDGPUD_H_EVENT, 1, 0,
						    &hh), 0);
	assert_int_equal(mdgpud_handles_add(f->h, MDGPUD_H_EVENT, 1, 0, &hh),
			 -ENOSPC);
}

/* ---- ABI 1.2 introspection opcodes ------------------------------------ */

static void test_info(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_DEVICE_INFO);

	c.info.addr = 8;
	c.info.len = 1160;
	c.info.space = MDGPU_SPACE_APERTURE;
	assert_int_equal(v(f, &c), 0);
	assert_ptr_equal(f->out.info.dst.ptr, f->aperture + 8);
	assert_int_equal(f->out.info.len, 1160);
	c.info.handle = f->func;		/* DEVICE_INFO names nothing */
	assert_int_equal(v(f, &c), -EINVAL);
	c.info.handle = 0;
	c.info.pad = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c.info.pad = 0;
	c.info.len = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.info.len = MDGPU_INFO_MAX + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c.info.len = APERTURE_SIZE - 7;		/* one past the aperture */
	assert_int_equal(v(f, &c), -ERANGE);
	c.info.len = 16;
	c.info.addr = UINT64_MAX - 7;		/* addr + len overflows */
	assert_int_equal(v(f, &c), -ERANGE);
	c.info.addr = 0;
	c.info.space = MDGPU_SPACE_IOVA;	/* no DMA on this transport */
	assert_int_equal(v(f, &c), -EINVAL);
	f->vc.iova_ok = true;
	c.info.addr = 0x1000;
	assert_int_equal(v(f, &c), 0);
	assert_null(f->out.info.dst.ptr);
	assert_int_equal(f->out.info.dst.addr, 0x1000);
	c.info.addr = UINT64_MAX - 8;
	assert_int_equal(v(f, &c), -ERANGE);
	c.info.space = MDGPU_SPACE_DEVICE;
	assert_int_equal(v(f, &c), -EINVAL);
	c.info.space = MDGPU_SPACE_APERTURE;
	c.info.addr = 0;
	c.stream = 1;				/* takes no stream */
	assert_int_equal(v(f, &c), -EINVAL);

	c = cmd(MDGPU_OP_FUNC_INFO);
	c.info.len = 136;
	c.info.space = MDGPU_SPACE_APERTURE;
	c.info.handle = f->func;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.info.func, 22);
	c.info.handle = 0;
	assert_int_equal(v(f, &c), -ENOENT);
	c.info.handle = f->other_func;
	assert_int_equal(v(f, &c), -ENOENT);
	c.info.handle = f->module;		/* the wrong kind */
	assert_int_equal(v(f, &c), -ENOENT);
	c.info.handle = f->func;
	c.info.len = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.info.len = MDGPU_INFO_MAX + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c.info.len = 8;
	c.raw[24] = 1;				/* past the operands */
	assert_int_equal(v(f, &c), -EINVAL);
}

/* MODULE_LINK (ABI 1.7): a bundle of its header up to MDGPU_MODULE_MAX
 * and an answer buffer of its header up to MDGPU_LINK_OUT_MAX, both in
 * host memory of this vGPU; the bundle's contents are the worker's. */
static void test_module_link(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_MODULE_LINK);
	struct mdgpu_cmd_module_link ok;

	c.module_link.addr = 64;
	c.module_link.len = 1024;
	c.module_link.space = MDGPU_SPACE_APERTURE;
	c.module_link.out_addr = 0;		/* overlapping: allowed */
	c.module_link.out_len = APERTURE_SIZE;
	c.module_link.out_space = MDGPU_SPACE_APERTURE;
	ok = c.module_link;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.module_link.len, 1024);
	assert_ptr_equal(f->out.module_link.src.ptr, f->aperture + 64);
	assert_int_equal(f->out.module_link.out_len, APERTURE_SIZE);
	assert_ptr_equal(f->out.module_link.dst.ptr, f->aperture);

	/* The bundle: at least its header, at most MDGPU_MODULE_MAX. */
	c.module_link.len = sizeof(struct mdgpu_link_bundle) - 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c.module_link.len = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.module_link.len = MDGPU_MODULE_MAX + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c.module_link.len = UINT32_MAX;
	assert_int_equal(v(f, &c), -E2BIG);
	c.module_link.len = APERTURE_SIZE - 63;	/* one past the end */
	assert_int_equal(v(f, &c), -ERANGE);
	c.module_link.len = 16;
	c.module_link.addr = UINT64_MAX - 15;	/* addr + len wraps */
	assert_int_equal(v(f, &c), -ERANGE);
	c.module_link = ok;
	c.module_link.space = MDGPU_SPACE_DEVICE;
	assert_int_equal(v(f, &c), -EINVAL);
	c.module_link.space = MDGPU_SPACE_IOVA;	/* no DMA here */
	assert_int_equal(v(f, &c), -EINVAL);
	c.module_link.space = 0;
	assert_int_equal(v(f, &c), -EINVAL);

	/* The answer buffer: its header up to MDGPU_LINK_OUT_MAX. */
	c.module_link = ok;
	c.module_link.out_len = sizeof(struct mdgpu_link_answer) - 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c.module_link.out_len = (uint32_t)MDGPU_LINK_OUT_MAX + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c.module_link.out_len = APERTURE_SIZE + 1;
	assert_int_equal(v(f, &c), -ERANGE);
	c.module_link.out_len = 16;
	c.module_link.out_addr = UINT64_MAX - 7;
	assert_int_equal(v(f, &c), -ERANGE);
	c.module_link.out_addr = 0;
	c.module_link.out_space = MDGPU_SPACE_DEVICE;
	assert_int_equal(v(f, &c), -EINVAL);

	/* Bytes past the operands are reserved. */
	c.module_link = ok;
	c.raw[sizeof(struct mdgpu_cmd_module_link)] = 1;
	assert_int_equal(v(f, &c), -EINVAL);
}

/* MODULE_FUNCS (ABI 1.5): a module of this vGPU, a buffer of up to
 * MDGPU_FUNCS_MAX bytes checked like the other answer buffers. */
static void test_module_funcs(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_MODULE_FUNCS);

	c.info.addr = 16;
	c.info.len = APERTURE_SIZE - 16;	/* up to the aperture's end */
	c.info.space = MDGPU_SPACE_APERTURE;
	c.info.handle = f->module;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.info.module, 11);
	assert_int_equal(f->out.info.handle, f->module);
	assert_int_equal(f->out.info.len, APERTURE_SIZE - 16);
	assert_ptr_equal(f->out.info.dst.ptr, f->aperture + 16);

	/* Only a module of this vGPU. */
	c.info.handle = 0;
	assert_int_equal(v(f, &c), -ENOENT);
	c.info.handle = f->func;		/* the wrong kind */
	assert_int_equal(v(f, &c), -ENOENT);
	c.info.handle = f->event;
	assert_int_equal(v(f, &c), -ENOENT);
	c.info.handle = f->other_module;	/* another vGPU's */
	assert_int_equal(v(f, &c), -ENOENT);
	c.info.handle = UINT32_MAX;
	assert_int_equal(v(f, &c), -ENOENT);
	c.info.handle = f->module;

	/* The buffer. */
	c.info.len = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.info.len = APERTURE_SIZE - 15;	/* one past the aperture */
	assert_int_equal(v(f, &c), -ERANGE);
	c.info.len = 16;
	c.info.addr = UINT64_MAX - 15;		/* addr + len wraps to 0 */
	assert_int_equal(v(f, &c), -ERANGE);
	c.info.addr = APERTURE_SIZE;		/* starts past the end */
	assert_int_equal(v(f, &c), -ERANGE);
	c.info.addr = 0;
	c.info.len = MDGPU_FUNCS_MAX + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c.info.len = UINT32_MAX;
	assert_int_equal(v(f, &c), -E2BIG);
	c.info.len = 16;
	c.info.space = MDGPU_SPACE_IOVA;	/* no DMA on this transport */
	assert_int_equal(v(f, &c), -EINVAL);
	c.info.space = MDGPU_SPACE_DEVICE;
	assert_int_equal(v(f, &c), -EINVAL);
	c.info.space = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	/* Larger than other answers may be: up to MDGPU_FUNCS_MAX. */
	f->vc.iova_ok = true;
	c.info.space = MDGPU_SPACE_IOVA;
	c.info.addr = 0x10000;
	c.info.len = MDGPU_FUNCS_MAX;
	assert_int_equal(v(f, &c), 0);
	assert_null(f->out.info.dst.ptr);
	assert_int_equal(f->out.info.dst.addr, 0x10000);
	assert_int_equal(f->out.info.len, MDGPU_FUNCS_MAX);
	c.info.addr = UINT64_MAX - MDGPU_FUNCS_MAX + 1;
	assert_int_equal(v(f, &c), -ERANGE);
	c.info.addr = 0x10000;

	/* Reserved bytes, and no stream. */
	c.info.pad = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c.info.pad = 0;
	c.raw[24] = 1;				/* past the operands */
	assert_int_equal(v(f, &c), -EINVAL);
	c.raw[24] = 0;
	c.stream = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c.stream = 0;
	c.flags = MDGPU_CMD_F_ASYNC;
	assert_int_equal(v(f, &c), -EINVAL);
	c.flags = MDGPU_CMD_F_IRQ;
	assert_int_equal(v(f, &c), 0);
}

static void test_func_attr(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_FUNC_SET_ATTR);
	static const struct {
		uint32_t attr;
		int32_t value;
		int ret;
	} cases[] = {
		{ 8, 100000, 0 }, { 8, -1, -EINVAL },
		{ 9, -1, 0 }, { 9, 100, 0 }, { 9, 101, -EINVAL },
		{ 11, 2, 0 }, { 12, 0, 0 }, { 13, -3, -EINVAL },
		{ 14, 1, 0 }, { 14, 2, -EINVAL },
		{ 15, 2, 0 }, { 15, 3, -EINVAL },
		{ MDGPU_FUNC_ATTR_CACHE_CONFIG, 3, 0 },
		{ MDGPU_FUNC_ATTR_CACHE_CONFIG, 4, -EINVAL },
		{ 0, 1024, -EINVAL },		/* read-only */
		{ 4, 1, -EINVAL },
		{ 10, 1, -EINVAL },
		{ 16, 0, -EINVAL },		/* unknown */
		{ 0x7fffffff, 0, -EINVAL },
	};

	c.func_attr.func = f->func;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c.func_attr.attr = cases[i].attr;
		c.func_attr.value = cases[i].value;
		assert_int_equal(v(f, &c), cases[i].ret);
	}
	c.func_attr.attr = 8;
	c.func_attr.value = 1;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.func_attr.func, 22);
	assert_int_equal(f->out.func_attr.value, 1);
	c.func_attr.pad = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c.func_attr.pad = 0;
	c.func_attr.func = f->other_func;
	assert_int_equal(v(f, &c), -ENOENT);
	c.func_attr.func = f->event;
	assert_int_equal(v(f, &c), -ENOENT);
}

static void test_module_global(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_MODULE_GLOBAL);

	memcpy(f->aperture + 100, "counter", 7);
	c.module_global.name_addr = 100;
	c.module_global.name_len = 7;
	c.module_global.name_space = MDGPU_SPACE_APERTURE;
	c.module_global.module = f->module;
	assert_int_equal(v(f, &c), 0);
	assert_string_equal(f->out.module_global.name, "counter");
	assert_int_equal(f->out.module_global.module, 11);
	assert_int_equal(f->out.module_global.module_handle, f->module);
	c.module_global.name_len = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.module_global.name_len = MDGPU_NAME_MAX + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c.module_global.name_len = 8;
	f->aperture[107] = 0;			/* embedded NUL */
	f->aperture[106] = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.module_global.name_len = 7;
	c.module_global.name_addr = APERTURE_SIZE - 6;
	assert_int_equal(v(f, &c), -ERANGE);
	c.module_global.name_addr = 100;
	c.module_global.module = f->func;	/* not a module */
	assert_int_equal(v(f, &c), -ENOENT);
	c.module_global.module = f->module;
	c.module_global.pad = 1;
	assert_int_equal(v(f, &c), -EINVAL);
}

/* A module global in the table: COPY and MEMSET name it, MEM_FREE not. */
static void test_global_range(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_MEMSET);
	uint64_t used = mdgpud_memtab_used(f->mem);
	uint32_t count = mdgpud_memtab_count(f->mem);
	struct mdgpud_mem_entry e;

	assert_int_equal(mdgpud_memtab_insert_global(f->mem, 0x800000, 96,
						     f->module), 0);
	assert_int_equal(mdgpud_memtab_insert_global(f->mem, 0x800000, 96,
						     f->module), 0);
	assert_int_equal(mdgpud_memtab_insert_global(f->mem, 0x800010, 8,
						     f->module), -EEXIST);
	assert_int_equal(mdgpud_memtab_insert_global(f->mem, BASE + 8, 8,
						     f->module), -EEXIST);
	assert_int_equal(mdgpud_memtab_used(f->mem), used);	/* uncharged */
	assert_int_equal(mdgpud_memtab_count(f->mem), count);
	c.memset.addr = 0x800000;
	c.memset.len = 96;
	assert_int_equal(v(f, &c), 0);
	c.memset.len = 97;
	assert_int_equal(v(f, &c), -ERANGE);
	c = cmd(MDGPU_OP_COPY);
	c.copy.src = 0;
	c.copy.src_space = MDGPU_SPACE_APERTURE;
	c.copy.dst = 0x800020;
	c.copy.dst_space = MDGPU_SPACE_DEVICE;
	c.copy.len = 64;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(mdgpud_memtab_remove(f->mem, 0x800000, &e), -EINVAL);
	mdgpud_memtab_remove_module(f->mem, f->module);
	assert_int_equal(v(f, &c), -ENOENT);
	assert_int_equal(mdgpud_memtab_count(f->mem), count);
}

static void test_limit(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_CTX_LIMIT);

	for (uint32_t l = 0; l < 10; l++) {
		c.limit.limit = l;
		assert_int_equal(v(f, &c), 0);		/* every get */
	}
	c.limit.limit = 10;
	assert_int_equal(v(f, &c), -EINVAL);
	c.limit.limit = 0;
	c.limit.value = 5;			/* a get carries no value */
	assert_int_equal(v(f, &c), -EINVAL);
	c.limit.set = 2;
	assert_int_equal(v(f, &c), -EINVAL);
	c.limit.set = 1;
	c.limit.value = 65536;
	for (uint32_t l = 0; l < 3; l++) {
		c.limit.limit = l;
		assert_int_equal(v(f, &c), 0);
		assert_int_equal(f->out.limit.value, 65536);
	}
	c.limit.limit = 5;
	assert_int_equal(v(f, &c), 0);
	c.limit.limit = 6;			/* the whole GPU's L2 */
	assert_int_equal(v(f, &c), -EPERM);
	c.limit.limit = 3;
	assert_int_equal(v(f, &c), -EOPNOTSUPP);
	c.limit.limit = 8;
	assert_int_equal(v(f, &c), -EOPNOTSUPP);
	c.limit.limit = 0xffffffff;
	assert_int_equal(v(f, &c), -EINVAL);
}

static void test_occupancy(void **state)
{
	struct fixture *f = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_OCCUPANCY);

	c.occupancy.func = f->func;
	c.occupancy.what = MDGPU_OCC_ACTIVE_BLOCKS;
	c.occupancy.block_threads = 256;
	c.occupancy.dyn_smem = 1024;
	c.occupancy.flags = 1;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.occupancy.q.block_threads, 256);
	assert_int_equal(f->out.occupancy.q.flags, 1);
	c.occupancy.flags = 2;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.flags = 0;
	c.occupancy.block_threads = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.block_threads = 1025;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.block_threads = 256;
	c.occupancy.dyn_smem = 48 * 1024 + 1;	/* shared_bytes_max */
	assert_int_equal(v(f, &c), -E2BIG);
	c.occupancy.dyn_smem = 0;
	c.occupancy.num_blocks = 1;		/* not ACTIVE_BLOCKS' */
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.num_blocks = 0;
	c.occupancy.func = f->other_func;
	assert_int_equal(v(f, &c), -ENOENT);
	c.occupancy.func = f->func;
	c.occupancy.pad = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.pad = 0;

	c.occupancy.what = MDGPU_OCC_DYN_SMEM;
	assert_int_equal(v(f, &c), -EINVAL);	/* num_blocks 0 */
	c.occupancy.num_blocks = 4;
	assert_int_equal(v(f, &c), 0);
	c.occupancy.num_blocks = 0x80000000U;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.num_blocks = 4;
	c.occupancy.dyn_smem = 16;		/* it is the answer */
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.dyn_smem = 0;

	c.occupancy.what = MDGPU_OCC_ACTIVE_CLUSTERS;
	assert_int_equal(v(f, &c), -EINVAL);	/* num_blocks */
	c.occupancy.num_blocks = 0;
	c.occupancy.grid[0] = 8;
	c.occupancy.grid[1] = 1;
	c.occupancy.grid[2] = 1;
	c.occupancy.cluster = MDGPU_CLUSTER(2, 1, 1);
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.occupancy.q.cluster[0], 2);
	assert_int_equal(f->out.occupancy.q.grid[0], 8);
	c.occupancy.cluster = 0;		/* a cluster is the question */
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.cluster = MDGPU_CLUSTER(2, 0, 1);
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.cluster = MDGPU_CLUSTER(2, 1, 1) | 0x40000000U;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.cluster = MDGPU_CLUSTER(2, 1, 1);
	c.occupancy.grid[2] = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.grid[2] = 1;

	/* CLUSTER_SIZE (ABI 1.9): ACTIVE_CLUSTERS' launch without the
	 * cluster, which is the answer. */
	c.occupancy.what = MDGPU_OCC_CLUSTER_SIZE;
	assert_int_equal(v(f, &c), -EINVAL);	/* a cluster */
	c.occupancy.cluster = 0;
	c.occupancy.dyn_smem = 2048;
	memset(&f->out, 0xff, sizeof(f->out));
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.occupancy.q.what, MDGPU_OCC_CLUSTER_SIZE);
	assert_int_equal(f->out.occupancy.q.grid[0], 8);
	assert_int_equal(f->out.occupancy.q.grid[2], 1);
	assert_int_equal(f->out.occupancy.q.block_threads, 256);
	assert_int_equal(f->out.occupancy.q.dyn_smem, 2048);
	c.occupancy.dyn_smem = 48 * 1024 + 1;
	assert_int_equal(v(f, &c), -E2BIG);
	c.occupancy.dyn_smem = 0;
	c.occupancy.flags = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.flags = 0;
	c.occupancy.num_blocks = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.num_blocks = 0;
	c.occupancy.grid[1] = 0;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.grid[1] = 0x80000000U;	/* past MDGPU_GRID_DIM_MAX */
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.grid[1] = 1;
	c.occupancy.block_threads = 1025;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.block_threads = 256;
	c.occupancy.pad = 1;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.pad = 0;
	c.occupancy.func = f->other_func;
	assert_int_equal(v(f, &c), -ENOENT);
	c.occupancy.func = f->func;
	assert_int_equal(v(f, &c), 0);

	c.occupancy.what = 5;
	assert_int_equal(v(f, &c), -EINVAL);
	c.occupancy.what = 0;
	assert_int_equal(v(f, &c), -EINVAL);
}

/* STREAM_MEMOP (ABI 1.10): each operation, condition, alignment, range,
 * reserved bits, and the header's stream. */
static void test_memop(void **state)
{
	static const uint32_t ops[] = {
		MDGPU_MEMOP_WRITE32, MDGPU_MEMOP_WRITE64, MDGPU_MEMOP_WAIT32,
		MDGPU_MEMOP_WAIT64,
	};
	struct fixture *f = *state;
	struct mdgpu_cmd c;
	uint32_t st;

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		uint32_t op = ops[i];
		bool wide = op == MDGPU_MEMOP_WRITE64 ||
			    op == MDGPU_MEMOP_WAIT64;
		bool wait = op == MDGPU_MEMOP_WAIT32 ||
			    op == MDGPU_MEMOP_WAIT64;
		uint64_t w = wide ? 8 : 4;

		c = cmd(MDGPU_OP_STREAM_MEMOP);
		c.memop.op = op;
		c.memop.addr = BASE + 8;
		c.memop.value = wide ? 0x123456789abcdef0ULL : 0x9abcdef0;
		assert_int_equal(v(f, &c), 0);
		assert_int_equal(f->out.memop.op, op);
		assert_int_equal(f->out.memop.addr, BASE + 8);
		assert_int_equal(f->out.memop.value, c.memop.value);
		assert_int_equal(f->out.memop.flags, 0);
		/* The high half of a 32-bit value is reserved. */
		c.memop.value = 1ULL << 32;
		assert_int_equal(v(f, &c), wide ? 0 : -EINVAL);
		c.memop.value = 1;
		/* Conditions: a wait's four, CUDA's FLUSH bit and every other
		 * bit refused; a write's flags are 0 (no NO_MEMORY_BARRIER). */
		for (uint32_t fl = 1; fl < 8; fl++) {
			c.memop.flags = fl;
			assert_int_equal(v(f, &c),
					 wait && fl <= MDGPU_MEMOP_WAIT_NOR ?
					 0 : -EINVAL);
		}
		c.memop.flags = 1U << 30;	/* CUDA's WAIT_VALUE_FLUSH */
		assert_int_equal(v(f, &c), -EINVAL);
		c.memop.flags = UINT32_MAX;
		assert_int_equal(v(f, &c), -EINVAL);
		c.memop.flags = wait ? MDGPU_MEMOP_WAIT_NOR : 0;
		assert_int_equal(v(f, &c), 0);
		assert_int_equal(f->out.memop.flags, c.memop.flags);
		/* Alignment to the width. */
		for (uint64_t off = 1; off < 8; off++) {
			c.memop.addr = BASE + off;
			assert_int_equal(v(f, &c), off % w ? -EINVAL : 0);
		}
		/* The word inside one allocation: the last word of the first
		 * one, none straddling into the second (back to back), the
		 * last of the second, past its end, another vGPU's. */
		c.memop.addr = BASE + 4096 - w;
		assert_int_equal(v(f, &c), 0);
		c.memop.addr = BASE + 8192 - w;
		assert_int_equal(v(f, &c), 0);
		c.memop.addr = BASE + 8192;
		assert_int_equal(v(f, &c), -ENOENT);
		c.memop.addr = BASE - w;
		assert_int_equal(v(f, &c), -ENOENT);
		c.memop.addr = 0;
		assert_int_equal(v(f, &c), -ENOENT);
		c.memop.addr = 0x900000;
		assert_int_equal(v(f, &c), -ENOENT);
		c.memop.addr = UINT64_MAX - (w - 1);	/* aligned, wraps */
		assert_int_equal(v(f, &c), -ENOENT);
		c.memop.addr = BASE;
		/* Operand bytes past the 24 of the operation are reserved. */
		c.raw[sizeof(struct mdgpu_cmd_memop)] = 1;
		assert_int_equal(v(f, &c), -EINVAL);
		c.raw[sizeof(struct mdgpu_cmd_memop)] = 0;
		c.raw[55] = 0x80;
		assert_int_equal(v(f, &c), -EINVAL);
		c.raw[55] = 0;
		assert_int_equal(v(f, &c), 0);
	}
	/* Operations 0, 5 and beyond are unknown. */
	c = cmd(MDGPU_OP_STREAM_MEMOP);
	c.memop.addr = BASE;
	for (uint32_t op = 0; op < 16; op++) {
		c.memop.op = op;
		assert_int_equal(v(f, &c), op >= MDGPU_MEMOP_WRITE32 &&
				 op <= MDGPU_MEMOP_WAIT64 ? 0 : -EINVAL);
	}
	c.memop.op = UINT32_MAX;
	assert_int_equal(v(f, &c), -EINVAL);
	/* The header's stream: ours, another vGPU's, a handle of another
	 * kind; F_ASYNC is COPY's only. */
	assert_int_equal(mdgpud_handles_add(f->h, MDGPUD_H_STREAM, 77, 0, &st),
			 0);
	c.memop.op = MDGPU_MEMOP_WAIT64;
	c.stream = st;
	assert_int_equal(v(f, &c), 0);
	assert_int_equal(f->out.stream, 77);
	c.stream = f->event;
	assert_int_equal(v(f, &c), -ENOENT);
	c.stream = st;
	c.flags = MDGPU_CMD_F_ASYNC;
	assert_int_equal(v(f, &c), -EINVAL);
	c.flags = MDGPU_CMD_F_IRQ;
	assert_int_equal(v(f, &c), 0);
	/* A module global's range is named like an allocation. */
	assert_int_equal(mdgpud_memtab_insert_global(f->mem, 0x700000, 64,
						  f->module), 0);
	c.memop.addr = 0x700000 + 56;
	assert_int_equal(v(f, &c), 0);
	c.memop.addr = 0x700000 + 64;
	assert_int_equal(v(f, &c), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_free_memset, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_module_func, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_launch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_launch_large, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_builtin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_events_query, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_info, setup, teardown),
		cmocka_unit_test_setup_teardown(test_module_funcs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_module_link, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_func_attr, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_module_global, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_global_range, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_occupancy, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memset_width_launch_ext,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_handles_lifecycle, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_memop, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
