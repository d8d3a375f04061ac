// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpud_vgpu_reset() (the kernel transport's RESET event), through the
 * same fake transport as test_core_dma.c (the kernel transport's shape):
 * queued commands are dropped unexecuted, every allocation and handle is
 * released (memory scrubbed: a new allocation reads zero), the ring
 * restarts at command 0, statistics are kept.  The reset runs while the
 * dispatcher is stopped, as it runs between slices in the daemon.
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

#define FAKE_TRANSPORT_NAME "reset"
#include "fake_transport.h"

static struct mdgpu_cmd cmd(uint16_t op)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = op;
	return c;
}

static uint64_t commands_of(struct env *e)
{
	struct mdgpud_vgpu_stats s[4];

	assert_int_equal(mdgpud_core_stats(e->core, s, 4), 1);
	return s[0].commands;
}

static uint64_t resets_of(struct env *e)
{
	struct mdgpud_vgpu_stats s[4];

	assert_int_equal(mdgpud_core_stats(e->core, s, 4), 1);
	return s[0].resets;
}

static void test_reset(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c;
	struct mdgpu_cpl cpl;
	uint64_t dev, n_before;
	uint32_t ev;

	c = cmd(MDGPU_OP_MEM_ALLOC);
	c.alloc.size = MIB;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	dev = cpl.result;
	c = cmd(MDGPU_OP_BUILTIN);
	c.builtin.kernel = MDGPU_BUILTIN_FILL_U32;
	c.builtin.arg[0] = dev;
	c.builtin.arg[1] = MIB / 4;
	c.builtin.arg[2] = 0xdeadbeef;
	assert_int_equal(call(e, &c).status, 0);
	cpl = call(e, &(struct mdgpu_cmd){ .opcode = MDGPU_OP_EVENT_CREATE });
	assert_int_equal(cpl.status, 0);
	ev = (uint32_t)cpl.result;

	/* Stop the dispatcher, queue three commands it never runs. */
	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	n_before = commands_of(e);
	for (uint32_t i = 0; i < 3; i++) {
		c = cmd(MDGPU_OP_BUILTIN);
		c.builtin.kernel = MDGPU_BUILTIN_SPIN_NS;
		c.builtin.arg[0] = 1000;
		memcpy(e->f.ring + ((e->f.tail + i) % ENTRIES) * MDGPU_CMD_SIZE,
		       &c, sizeof(c));
	}
	e->f.tail += 3;

	/* What the kernel does (ring zeroed, SQ_* = FENCE = 0), then the
	 * daemon's reset. */
	memset(e->f.ring, 0, sizeof(e->f.ring));
	e->f.tail = e->f.head = 0;
	e->f.fence = 0;
	mdgpud_vgpu_reset(e->v);
	assert_int_equal(commands_of(e), n_before);	/* none ran */
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);

	/* The ring restarts at 0 (call() checks seq 0, fence 1). */
	c = cmd(MDGPU_OP_QUERY);
	c.query.what = MDGPU_QUERY_FB_USED;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	assert_int_equal(cpl.result, 0);
	assert_int_equal(commands_of(e), n_before + 1);

	/* Old allocation and event are gone. */
	c = cmd(MDGPU_OP_BUILTIN);
	c.builtin.kernel = MDGPU_BUILTIN_CHECKSUM;
	c.builtin.arg[0] = dev;
	c.builtin.arg[1] = 1;
	assert_int_equal(call(e, &c).status, -ENOENT);
	c = cmd(MDGPU_OP_EVENT_DESTROY);
	c.event.event = ev;
	assert_int_equal(call(e, &c).status, -ENOENT);

	/* New memory of the same size reads zero (scrubbed), and works. */
	c = cmd(MDGPU_OP_MEM_ALLOC);
	c.alloc.size = MIB;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	dev = cpl.result;
	c = cmd(MDGPU_OP_BUILTIN);
	c.builtin.kernel = MDGPU_BUILTIN_CHECKSUM;
	c.builtin.arg[0] = dev;
	c.builtin.arg[1] = MIB / 4;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	assert_int_equal(cpl.result, 0);
}

/* A reset with nothing queued and nothing allocated is harmless, twice. */
static void test_reset_idle(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_SYNC);

	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	assert_int_equal(resets_of(e), 0);
	mdgpud_vgpu_reset(e->v);
	mdgpud_vgpu_reset(e->v);
	assert_int_equal(resets_of(e), 2);	/* counted (metrics, list) */
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
	assert_int_equal(call(e, &c).status, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_idle, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
