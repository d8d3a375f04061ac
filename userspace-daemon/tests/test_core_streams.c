// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ABI 1.2 streams through the whole daemon (ring, validator, executor) on
 * the sim backend, through the fake transport of test_core_reset.c: stream
 * handles, work in order on the named stream, queries answering idle,
 * priorities clamped to the sim range, memset widths, F_ASYNC copies,
 * the per-vGPU handle limit, and a reset that destroys every stream.
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
#include "mdgpud/handles.h"
#include "mdgpud/log.h"

#define FAKE_TRANSPORT_NAME "streams"
#include "fake_transport.h"

static struct mdgpu_cmd cmd(uint16_t op)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = op;
	return c;
}

static uint32_t new_stream(struct env *e, uint32_t flags, int32_t prio)
{
	struct mdgpu_cmd c = cmd(MDGPU_OP_STREAM_CREATE);
	struct mdgpu_cpl cpl;

	c.stream_op.flags = flags;
	c.stream_op.priority = prio;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	assert_int_not_equal(cpl.result, 0);
	return (uint32_t)cpl.result;
}

static void test_streams_sim(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c;
	struct mdgpu_cpl cpl;
	uint32_t s1, s2, ev;
	uint64_t dev;
	uint16_t *a16 = (uint16_t *)e->aperture;

	c = cmd(MDGPU_OP_QUERY);
	c.query.what = MDGPU_QUERY_STREAM_PRIORITIES;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	assert_int_equal((int32_t)(uint32_t)cpl.result, 0);
	assert_int_equal((int32_t)(uint32_t)cpl.result2, -5);

	s1 = new_stream(e, 0, -100);		/* clamped to -5 */
	s2 = new_stream(e, MDGPU_STREAM_F_NON_BLOCKING, 100);
	assert_int_not_equal(s1, s2);
	c = cmd(MDGPU_OP_MEM_ALLOC);
	c.alloc.size = MIB;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	dev = cpl.result;
	cpl = call(e, &(struct mdgpu_cmd){ .opcode = MDGPU_OP_EVENT_CREATE });
	assert_int_equal(cpl.status, 0);
	ev = (uint32_t)cpl.result;

	/* Fill 1 then a 16-bit memset on s1, record, s2 waits, copy. */
	c = cmd(MDGPU_OP_BUILTIN);
	c.stream = s1;
	c.builtin.kernel = MDGPU_BUILTIN_FILL_U32;
	c.builtin.arg[0] = dev;
	c.builtin.arg[1] = 1024;
	c.builtin.arg[2] = 1;
	assert_int_equal(call(e, &c).status, 0);
	c = cmd(MDGPU_OP_MEMSET);
	c.stream = s1;
	c.memset.addr = dev;
	c.memset.len = 64;
	c.memset.value = 0xbeef;
	c.memset.width = 2;
	assert_int_equal(call(e, &c).status, 0);
	c = cmd(MDGPU_OP_EVENT_RECORD);
	c.stream = s1;
	c.event.event = ev;
	assert_int_equal(call(e, &c).status, 0);
	c = cmd(MDGPU_OP_STREAM_WAIT_EVENT);
	c.stream = s2;
	c.event.event = ev;
	assert_int_equal(call(e, &c).status, 0);
	for (uint16_t op = MDGPU_OP_STREAM_QUERY; op <= MDGPU_OP_EVENT_QUERY;
	     op++) {
		c = cmd(op);
		if (op == MDGPU_OP_STREAM_QUERY)
			c.stream = s1;
		else
			c.event.event = ev;
		cpl = call(e, &c);
		assert_int_equal(cpl.status, 0);
		assert_int_equal(cpl.result, 0);	/* sim: idle */
	}
	c = cmd(MDGPU_OP_EVENT_SYNC);
	c.event.event = ev;
	assert_int_equal(call(e, &c).status, 0);
	c = cmd(MDGPU_OP_COPY);
	c.stream = s2;
	c.flags = MDGPU_CMD_F_ASYNC;
	c.copy.src = dev;
	c.copy.src_space = MDGPU_SPACE_DEVICE;
	c.copy.dst = 0;
	c.copy.dst_space = MDGPU_SPACE_APERTURE;
	c.copy.len = 128;
	assert_int_equal(call(e, &c).status, 0);
	c = cmd(MDGPU_OP_SYNC);
	c.stream = s2;
	assert_int_equal(call(e, &c).status, 0);
	for (int i = 0; i < 32; i++)
		assert_int_equal(a16[i], 0xbeef);
	assert_int_equal(a16[32], 1);
	assert_int_equal(a16[33], 0);

	/* ELAPSED on a timing-disabled event: -EINVAL. */
	c = cmd(MDGPU_OP_EVENT_CREATE);
	c.event.flags = MDGPU_EVENT_F_DISABLE_TIMING;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	c = cmd(MDGPU_OP_EVENT_RECORD);
	c.event.event = (uint32_t)cpl.result;
	assert_int_equal(call(e, &c).status, 0);
	c = cmd(MDGPU_OP_EVENT_ELAPSED);
	c.event.event = ev;
	c.event.end = (uint32_t)cpl.result;
	assert_int_equal(call(e, &c).status, -EINVAL);

	/* Destroyed: its handle is gone; a stream on NOP is refused. */
	c = cmd(MDGPU_OP_STREAM_DESTROY);
	c.stream_op.stream = s2;
	assert_int_equal(call(e, &c).status, 0);
	assert_int_equal(call(e, &c).status, -ENOENT);
	c = cmd(MDGPU_OP_SYNC);
	c.stream = s2;
	assert_int_equal(call(e, &c).status, -ENOENT);
	c = cmd(MDGPU_OP_NOP);
	c.stream = s1;
	assert_int_equal(call(e, &c).status, -EINVAL);

	/* A reset destroys every stream. */
	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	memset(e->f.ring, 0, sizeof(e->f.ring));
	e->f.tail = e->f.head = 0;
	e->f.fence = 0;
	mdgpud_vgpu_reset(e->v);
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
	c = cmd(MDGPU_OP_STREAM_QUERY);
	c.stream = s1;
	assert_int_equal(call(e, &c).status, -ENOENT);
	c = cmd(MDGPU_OP_SYNC);
	assert_int_equal(call(e, &c).status, 0);
}

/* Streams count against the per-vGPU handle limit (cfg.max_handles). */
static void test_stream_handle_limit(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_STREAM_CREATE);
	struct mdgpu_cpl cpl;
	uint32_t n = 0;

	for (;;) {
		cpl = call(e, &c);
		if (cpl.status)
			break;
		n++;
		assert_true(n <= MDGPUD_HANDLES_MAX);
	}
	assert_int_equal(cpl.status, -ENOSPC);
	assert_true(n > 0);
	cpl = call(e, &(struct mdgpu_cmd){ .opcode = MDGPU_OP_EVENT_CREATE });
	assert_int_equal(cpl.status, -ENOSPC);
	fprintf(stderr, "streams before the handle limit: %u\n", n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_streams_sim, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_stream_handle_limit, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
