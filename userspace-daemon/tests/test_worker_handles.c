// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The worker's handle table (backends/cuda/worker/handles.c): stale,
 * forged and other tables' handles rejected, a module's functions removed
 * with it, a full table left unchanged by a failed insertion, iteration.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "handles.h"

static int obj[8];

static void test_stale_forged(void **state)
{
	struct mdgpud_worker_handles t, u;
	uint64_t h, h2, hu;
	void *o;

	(void)state;
	mdgpud_worker_handles_init(&t, 1, MDGPUD_WORKER_HANDLES_MAX);
	mdgpud_worker_handles_init(&u, 2, MDGPUD_WORKER_HANDLES_MAX);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[0], 0, &h), 0);
	assert_int_equal(mdgpud_worker_handles_insert(&u, &obj[0], 0, &hu), 0);
	assert_true(h != 0 && hu != 0 && h != hu);
	assert_int_equal(mdgpud_worker_handles_get(&t, h, &o), 0);
	assert_ptr_equal(o, &obj[0]);
	/* Another table's handle, forged ones. */
	assert_int_equal(mdgpud_worker_handles_get(&t, hu, &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, 0, &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, h + 1, &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, h + (1ull << 32), &o),
			 -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, (uintptr_t)&obj[0],
						   &o), -ENOENT);
	/* Removed: stale, even once its slot holds another object. */
	assert_int_equal(mdgpud_worker_handles_remove(&t, h, &o), 0);
	assert_int_equal(mdgpud_worker_handles_remove(&t, h, &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[1], 0, &h2),
			 0);
	assert_true((uint32_t)h2 == (uint32_t)h && h2 != h);
	assert_int_equal(mdgpud_worker_handles_get(&t, h, &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, h2, &o), 0);
	assert_ptr_equal(o, &obj[1]);
	mdgpud_worker_handles_fini(&t);
	mdgpud_worker_handles_fini(&u);
}

static void test_children_find(void **state)
{
	struct mdgpud_worker_handles t;
	uint64_t f[3], h;
	uint32_t cursor = 0;
	void *o;
	int n = 0;

	(void)state;
	mdgpud_worker_handles_init(&t, 2, MDGPUD_WORKER_HANDLES_MAX);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[0], 11, &f[0]),
			 0);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[1], 12, &f[1]),
			 0);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[2], 11, &f[2]),
			 0);
	assert_int_equal(mdgpud_worker_handles_find(&t, &obj[2], 11, &h), 0);
	assert_true(h == f[2]);
	assert_int_equal(mdgpud_worker_handles_find(&t, &obj[2], 12, &h),
			 -ENOENT);
	mdgpud_worker_handles_remove_children(&t, 11);
	assert_int_equal(mdgpud_worker_handles_get(&t, f[0], &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, f[2], &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, f[1], &o), 0);
	while (!mdgpud_worker_handles_next(&t, &cursor, &o)) {
		assert_ptr_equal(o, &obj[1]);
		n++;
	}
	assert_int_equal(n, 1);
	assert_int_equal(t.count, 1);
	mdgpud_worker_handles_fini(&t);
}

/* A full table answers -ENOMEM and neither grows nor changes. */
static void test_full(void **state)
{
	struct mdgpud_worker_handles t;
	uint64_t h[5];
	void *o;

	(void)state;
	mdgpud_worker_handles_init(&t, 3, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[i], 0,
							      &h[i]), 0);
	h[4] = 0;
	for (int k = 0; k < 100; k++)
		assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[4], 0,
							      &h[4]), -ENOMEM);
	assert_true(h[4] == 0);
	assert_int_equal(t.nr_slots, 4);
	assert_int_equal(t.count, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(mdgpud_worker_handles_get(&t, h[i], &o), 0);
		assert_ptr_equal(o, &obj[i]);
	}
	/* Room again after a removal. */
	assert_int_equal(mdgpud_worker_handles_remove(&t, h[1], NULL), 0);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[4], 0, &h[4]),
			 0);
	assert_int_equal(t.nr_slots, 4);
	mdgpud_worker_handles_fini(&t);
	assert_int_equal(t.nr_slots, 0);
	assert_int_equal(mdgpud_worker_handles_get(&t, h[0], &o), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_forged),
		cmocka_unit_test(test_children_find),
		cmocka_unit_test(test_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
