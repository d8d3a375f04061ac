// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * QUERY GPU_TIME: the window of a vGPU's GPU time (core/usage.c) with
 * made-up clocks, then answered by a running core (sim backend, fake ring):
 * 0 for a vGPU that ran nothing, the GPU time of work submitted before it
 * (in the same slice or not) equal to the core's own statistics, 0 again
 * once the window has passed, and the validator's refusals.
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
#include "mdgpud/usage.h"

#define FAKE_TRANSPORT_NAME "usage"
#include "fake_transport.h"

#define MS	1000000ULL
#define W	MDGPUD_USAGE_WIDTH_NS

/* ---- the window alone ---------------------------------------------- */

static void test_window_charges(void **state)
{
	struct mdgpud_usage u = { 0 };
	uint64_t t = 1000 * W;			/* a bucket's start */

	(void)state;
	assert_int_equal(mdgpud_usage_window(&u, t), 0);
	/* 250 ms ending now: 50 ms in the bucket [t - 300, t - 200) and
	 * 100 ms in each of the two after it. */
	mdgpud_usage_charge(&u, t, 250 * MS);
	assert_int_equal(mdgpud_usage_window(&u, t), 250 * MS);
	/* 700 ms later the window starts at t - 300 ms: all of it. */
	assert_int_equal(mdgpud_usage_window(&u, t + 700 * MS), 250 * MS);
	/* 750 ms later half of the oldest bucket is inside: its 50 ms count
	 * as spread over it, 25 ms. */
	assert_int_equal(mdgpud_usage_window(&u, t + 750 * MS), 225 * MS);
	/* 800 ms later that bucket has left. */
	assert_int_equal(mdgpud_usage_window(&u, t + 800 * MS), 200 * MS);
	/* A later charge adds to what is left: 60 ms, 100 ms of the bucket
	 * before t and 40 of the 100 ms of the oldest (40 % inside). */
	mdgpud_usage_charge(&u, t + 860 * MS, 60 * MS);
	assert_int_equal(mdgpud_usage_window(&u, t + 860 * MS), 200 * MS);
	/* A second and a bit after the first: only the second charge. */
	assert_int_equal(mdgpud_usage_window(&u, t + 1300 * MS), 60 * MS);
	assert_int_equal(mdgpud_usage_window(&u, t + 2000 * MS), 0);
}

static void test_window_limits(void **state)
{
	struct mdgpud_usage u = { 0 };
	uint64_t t = 5000 * W;

	(void)state;
	/* More GPU time than the ring spans (a simulated clock): only the
	 * ring's span is kept; the window reads its full length. */
	mdgpud_usage_charge(&u, t, 5000 * MS);
	assert_int_equal(mdgpud_usage_window(&u, t), MDGPUD_USAGE_WINDOW_NS);
	/* Overlapping charges add up past the window: readers clamp. */
	mdgpud_usage_charge(&u, t, 500 * MS);
	assert_int_equal(mdgpud_usage_window(&u, t),
			 MDGPUD_USAGE_WINDOW_NS + 500 * MS);
	/* A jump far ahead forgets everything; charges go on from there. */
	assert_int_equal(mdgpud_usage_window(&u, t + 3600000 * MS), 0);
	mdgpud_usage_charge(&u, t + 3600000 * MS, 10 * MS);
	assert_int_equal(mdgpud_usage_window(&u, t + 3600000 * MS), 10 * MS);
	/* A charge longer than the clock itself starts at 0. */
	memset(&u, 0, sizeof(u));
	mdgpud_usage_charge(&u, 50 * MS, 80 * MS);
	assert_int_equal(mdgpud_usage_window(&u, 50 * MS), 50 * MS);
}

/* ---- answered by a running core -------------------------------------- */

static struct mdgpu_cmd cmd_query(uint32_t what)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_QUERY;
	c.query.what = what;
	return c;
}

static struct mdgpu_cmd cmd_spin(uint64_t ns)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_BUILTIN;
	c.builtin.kernel = MDGPU_BUILTIN_SPIN_NS;
	c.builtin.arg[0] = ns;
	return c;
}

static uint64_t stats_gpu_ns(struct env *e)
{
	struct mdgpud_vgpu_stats st;

	assert_int_equal(mdgpud_core_stats(e->core, &st, 1), 1);
	return st.gpu_ns;
}

/* Submits n commands with one doorbell; waits for all; the last's
 * completion. */
static struct mdgpu_cpl submit(struct env *e, const struct mdgpu_cmd *c,
			       uint32_t n)
{
	struct fake *f = &e->f;
	uint32_t t = f->tail;
	uint64_t one = 1;
	struct mdgpu_cpl cpl;

	for (uint32_t i = 0; i < n; i++)
		memcpy(f->ring + ((t + i) % ENTRIES) * MDGPU_CMD_SIZE, &c[i],
		       sizeof(c[i]));
	__atomic_store_n(&f->tail, t + n, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&f->sleeping, __ATOMIC_SEQ_CST))
		assert_int_equal(write(f->efd, &one, sizeof(one)), 8);
	for (int i = 0; i < 100000 &&
	     __atomic_load_n(&f->head, __ATOMIC_ACQUIRE) != t + n; i++)
		usleep(10);
	assert_int_equal(f->head, t + n);
	memcpy(&cpl, f->ring + MDGPU_RING_CQ_OFFSET(ENTRIES) +
	       ((t + n - 1) % ENTRIES) * MDGPU_CPL_SIZE, sizeof(cpl));
	return cpl;
}

static void test_query_gpu_time(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c[2] = { cmd_spin(300 * MS),
				  cmd_query(MDGPU_QUERY_GPU_TIME) };
	struct mdgpu_cpl cpl;

	/* Nothing ran yet. */
	cpl = call(e, &c[1]);
	assert_int_equal(cpl.status, 0);
	assert_int_equal(cpl.result, 0);
	assert_int_equal(cpl.result2, MDGPUD_USAGE_WINDOW_NS);

	/* The spin and the query in one doorbell: the query waits for the
	 * next slice, so the spin's (simulated) 300 ms are in its answer,
	 * exactly what the core charged. */
	cpl = submit(e, c, 2);
	assert_int_equal(cpl.status, 0);
	assert_true(cpl.result >= 300 * MS);
	assert_int_equal(cpl.result, stats_gpu_ns(e));

	/* Apart: the same. */
	cpl = call(e, &c[0]);
	assert_int_equal(cpl.status, 0);
	cpl = call(e, &c[1]);
	assert_int_equal(cpl.status, 0);
	assert_true(cpl.result >= 600 * MS);
	assert_int_equal(cpl.result, stats_gpu_ns(e));

	/* Idle for longer than the window: nothing left in it. */
	usleep((MDGPUD_USAGE_WINDOW_NS + 150 * MS) / 1000);
	cpl = call(e, &c[1]);
	assert_int_equal(cpl.status, 0);
	assert_int_equal(cpl.result, 0);
}

static void test_query_refused(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c = cmd_query(MDGPU_QUERY_GPU_TIME);

	c.query.pad = 1;
	assert_int_equal(call(e, &c).status, -EINVAL);
	c = cmd_query(MDGPU_QUERY_GPU_TIME + 1);
	assert_int_equal(call(e, &c).status, -EINVAL);
	c = cmd_query(MDGPU_QUERY_GPU_TIME);
	c.stream = 1;
	assert_int_equal(call(e, &c).status, -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_charges),
		cmocka_unit_test(test_window_limits),
		cmocka_unit_test_setup_teardown(test_query_gpu_time, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_query_refused, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
