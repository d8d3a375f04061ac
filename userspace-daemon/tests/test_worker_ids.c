// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The pool of the cuda workers' uids (backends/cuda/ids.c): each live
 * worker holds an id of its own, an id comes back only when put back
 * (after its worker was reaped), a full range answers -EBUSY, freed ids
 * come back as late as possible, one process has one pool per range and
 * refuses overlapping ones, and reapers may give ids back from threads.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <mdgpud/log.h>

#include "../backends/cuda/sandbox.h"

#define BASE	1879500000u

static char last_log[512];

static void capture_log(void *data, int level, const char *fmt, va_list ap)
{
	(void)data;
	(void)level;
	vsnprintf(last_log, sizeof(last_log), fmt, ap);
}

static int group_setup(void **state)
{
	(void)state;
	mdgpud_log_set(MDGPUD_LOG_DEBUG, capture_log, NULL);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	mdgpud_log_set(MDGPUD_LOG_WARN, NULL, NULL);
	return 0;
}

/* Every id of a range once, then -EBUSY; no id twice while held. */
static void test_exhaustion(void **state)
{
	struct mdgpud_cuda_ids *p;
	bool seen[4] = { false };
	uint32_t id;

	(void)state;
	assert_int_equal(mdgpud_cuda_ids_open(BASE, 4, &p), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(mdgpud_cuda_ids_get(p, &id), 0);
		assert_true(id >= BASE && id < BASE + 4);
		assert_false(seen[id - BASE]);
		seen[id - BASE] = true;
	}
	assert_int_equal(mdgpud_cuda_ids_in_use(p), 4);
	id = 0;
	assert_int_equal(mdgpud_cuda_ids_get(p, &id), -EBUSY);
	assert_int_equal(id, 0);	/* untouched on failure */
	assert_int_equal(mdgpud_cuda_ids_get(p, &id), -EBUSY);
	assert_int_equal(mdgpud_cuda_ids_in_use(p), 4);
	for (uint32_t i = 0; i < 4; i++)
		mdgpud_cuda_ids_put(p, BASE + i);
	assert_int_equal(mdgpud_cuda_ids_in_use(p), 0);
	mdgpud_cuda_ids_close(p);
}

/*
 * An id comes back only once it is put back (its worker reaped), and a
 * freed id is the last to come back: the search goes on after the id
 * handed out last.
 */
static void test_reuse_after_put(void **state)
{
	struct mdgpud_cuda_ids *p;
	uint32_t a, b, c, id;

	(void)state;
	assert_int_equal(mdgpud_cuda_ids_open(BASE, 3, &p), 0);
	assert_int_equal(mdgpud_cuda_ids_get(p, &a), 0);
	assert_int_equal(mdgpud_cuda_ids_get(p, &b), 0);
	assert_int_equal(a, BASE);
	assert_int_equal(b, BASE + 1);
	/* a's worker is reaped: its id is free, but BASE + 2 comes first. */
	mdgpud_cuda_ids_put(p, a);
	assert_int_equal(mdgpud_cuda_ids_get(p, &c), 0);
	assert_int_equal(c, BASE + 2);
	/* Now a's is the only free one. */
	assert_int_equal(mdgpud_cuda_ids_get(p, &id), 0);
	assert_int_equal(id, a);
	assert_int_equal(mdgpud_cuda_ids_get(p, &id), -EBUSY);
	/* b's given back: b's, not a held one, comes next. */
	mdgpud_cuda_ids_put(p, b);
	assert_int_equal(mdgpud_cuda_ids_get(p, &id), 0);
	assert_int_equal(id, b);
	/* A put of an id not held (a bug) changes nothing and says so. */
	last_log[0] = 0;
	mdgpud_cuda_ids_put(p, BASE + 7);
	assert_non_null(strstr(last_log, "not held"));
	mdgpud_cuda_ids_put(p, b);
	last_log[0] = 0;
	mdgpud_cuda_ids_put(p, b);
	assert_non_null(strstr(last_log, "not held"));
	assert_int_equal(mdgpud_cuda_ids_in_use(p), 2);
	mdgpud_cuda_ids_put(p, a);
	mdgpud_cuda_ids_put(p, c);
	assert_int_equal(mdgpud_cuda_ids_in_use(p), 0);
	mdgpud_cuda_ids_close(p);
}

/* Ranges: no root, no (uid_t)-1, 1..65536 ids. */
static void test_ranges(void **state)
{
	struct mdgpud_cuda_ids *p;
	uint32_t id;

	(void)state;
	assert_int_equal(mdgpud_cuda_ids_open(0, 10, &p), -EINVAL);
	assert_int_equal(mdgpud_cuda_ids_open(BASE, 0, &p), -EINVAL);
	assert_int_equal(mdgpud_cuda_ids_open(BASE, MDGPUD_CUDA_IDS_MAX + 1,
					      &p), -EINVAL);
	assert_int_equal(mdgpud_cuda_ids_open(UINT32_MAX, 1, &p), -EINVAL);
	assert_int_equal(mdgpud_cuda_ids_open(UINT32_MAX - 2, 3, &p),
			 -EINVAL);
	/* The last id may be 2^32 - 2. */
	assert_int_equal(mdgpud_cuda_ids_open(UINT32_MAX - 2, 2, &p), 0);
	assert_int_equal(mdgpud_cuda_ids_get(p, &id), 0);
	assert_int_equal(mdgpud_cuda_ids_get(p, &id), 0);
	assert_int_equal(id, UINT32_MAX - 1);
	assert_int_equal(mdgpud_cuda_ids_get(p, &id), -EBUSY);
	mdgpud_cuda_ids_put(p, UINT32_MAX - 2);
	mdgpud_cuda_ids_put(p, UINT32_MAX - 1);
	mdgpud_cuda_ids_close(p);
	/* A whole range of 65536: bitmap words to the last bit. */
	assert_int_equal(mdgpud_cuda_ids_open(BASE, MDGPUD_CUDA_IDS_MAX, &p),
			 0);
	for (uint32_t i = 0; i < MDGPUD_CUDA_IDS_MAX; i++) {
		assert_int_equal(mdgpud_cuda_ids_get(p, &id), 0);
		assert_int_equal(id, BASE + i);
	}
	assert_int_equal(mdgpud_cuda_ids_get(p, &id), -EBUSY);
	mdgpud_cuda_ids_put(p, BASE + MDGPUD_CUDA_IDS_MAX - 1);
	assert_int_equal(mdgpud_cuda_ids_get(p, &id), 0);
	assert_int_equal(id, BASE + MDGPUD_CUDA_IDS_MAX - 1);
	for (uint32_t i = 0; i < MDGPUD_CUDA_IDS_MAX; i++)
		mdgpud_cuda_ids_put(p, BASE + i);
	mdgpud_cuda_ids_close(p);
}

/*
 * One pool per range in a process: the same range is shared (an id held
 * through one backend is not handed out through the other), an
 * overlapping one refused, a disjoint one separate; the pool lives until
 * its last reference (a background reaper's) is dropped.
 */
static void test_shared_pools(void **state)
{
	struct mdgpud_cuda_ids *p, *q, *r;
	uint32_t a, b;

	(void)state;
	assert_int_equal(mdgpud_cuda_ids_open(BASE, 2, &p), 0);
	assert_int_equal(mdgpud_cuda_ids_open(BASE, 2, &q), 0);
	assert_ptr_equal(p, q);
	assert_int_equal(mdgpud_cuda_ids_get(p, &a), 0);
	assert_int_equal(mdgpud_cuda_ids_get(q, &b), 0);
	assert_int_not_equal(a, b);
	last_log[0] = 0;
	assert_int_equal(mdgpud_cuda_ids_open(BASE + 1, 5, &r), -EBUSY);
	assert_non_null(strstr(last_log, "overlap"));
	assert_int_equal(mdgpud_cuda_ids_open(BASE - 3, 4, &r), -EBUSY);
	assert_int_equal(mdgpud_cuda_ids_open(BASE + 2, 5, &r), 0);
	assert_ptr_not_equal(r, p);
	mdgpud_cuda_ids_close(r);
	/* A reaper holds the pool past both backends. */
	mdgpud_cuda_ids_hold(p);
	mdgpud_cuda_ids_close(p);
	mdgpud_cuda_ids_close(q);
	mdgpud_cuda_ids_put(p, a);
	mdgpud_cuda_ids_put(p, b);
	assert_int_equal(mdgpud_cuda_ids_in_use(p), 0);
	mdgpud_cuda_ids_close(p);	/* freed: ASAN would see a leak */
	/* Gone: the range may be opened anew, with other bounds. */
	assert_int_equal(mdgpud_cuda_ids_open(BASE + 1, 5, &r), 0);
	mdgpud_cuda_ids_close(r);
}

/* Who holds each id of test_threads' range: 0 or a thread's tag. */
static int owner[12];

struct churn {
	struct mdgpud_cuda_ids *p;
	int tag;
	uint32_t held[8];
	unsigned int rounds, dup;
};

/*
 * Takes up to 8 ids and gives them back, in a loop; counts an id handed
 * out while the other thread held it.
 */
static void *churn_main(void *arg)
{
	struct churn *c = arg;

	for (unsigned int r = 0; r < c->rounds; r++) {
		uint32_t n = 0;

		while (n < 8 && !mdgpud_cuda_ids_get(c->p, &c->held[n])) {
			int none = 0;

			if (!__atomic_compare_exchange_n(
				    &owner[c->held[n] - BASE], &none, c->tag,
				    false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
				c->dup++;
			n++;
		}
		while (n) {
			n--;
			__atomic_store_n(&owner[c->held[n] - BASE], 0,
					 __ATOMIC_SEQ_CST);
			mdgpud_cuda_ids_put(c->p, c->held[n]);
		}
	}
	return NULL;
}

/* Two threads (a dispatcher and a reaper, say) never get one id both. */
static void test_threads(void **state)
{
	struct mdgpud_cuda_ids *p;
	struct churn c[2];
	pthread_t t[2];
	bool both[16];

	(void)state;
	assert_int_equal(mdgpud_cuda_ids_open(BASE, 12, &p), 0);
	for (int i = 0; i < 2; i++) {
		c[i] = (struct churn){ .p = p, .tag = i + 1, .rounds = 20000 };
		assert_int_equal(pthread_create(&t[i], NULL, churn_main,
						&c[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(c[0].dup + c[1].dup, 0);
	assert_int_equal(mdgpud_cuda_ids_in_use(p), 0);
	/* And all 12 are free again. */
	memset(both, 0, sizeof(both));
	for (int i = 0; i < 12; i++) {
		uint32_t id;

		assert_int_equal(mdgpud_cuda_ids_get(p, &id), 0);
		assert_false(both[id - BASE]);
		both[id - BASE] = true;
	}
	for (uint32_t i = 0; i < 12; i++)
		mdgpud_cuda_ids_put(p, BASE + i);
	mdgpud_cuda_ids_close(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_reuse_after_put),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_shared_pools),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests_name("worker_ids", tests, group_setup,
					   group_teardown);
}
