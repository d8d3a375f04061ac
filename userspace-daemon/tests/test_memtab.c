// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Per-vGPU allocation table and hard quota: exact accounting, exhaustion,
 * free/reuse, overlap and overflow. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "mdgpud/memtab.h"

static void test_exact_quota(void **state)
{
	struct mdgpud_memtab *mt;

	(void)state;
	assert_int_equal(mdgpud_memtab_create(1 << 20, 8, &mt), 0);
	assert_int_equal(mdgpud_memtab_precheck(mt, 1 << 20), 0);
	assert_int_equal(mdgpud_memtab_precheck(mt, (1 << 20) + 1), -ENOMEM);
	/* asked 100, backend reserved 4096: both accounted, quota on 4096 */
	assert_int_equal(mdgpud_memtab_insert(mt, 0x1000, 100, 4096), 0);
	assert_int_equal(mdgpud_memtab_used(mt), 4096);
	assert_int_equal(mdgpud_memtab_requested(mt), 100);
	assert_int_equal(mdgpud_memtab_insert(mt, 0x10000, (1 << 20) - 4096,
					      (1 << 20) - 4096), 0);
	assert_int_equal(mdgpud_memtab_used(mt), 1 << 20);
	assert_int_equal(mdgpud_memtab_precheck(mt, 1), -ENOMEM);
	assert_int_equal(mdgpud_memtab_insert(mt, 0x900000, 1, 1), -ENOMEM);
	/* overflow of used + size */
	assert_int_equal(mdgpud_memtab_precheck(mt, UINT64_MAX), -ENOMEM);
	assert_int_equal(mdgpud_memtab_count(mt), 2);
	mdgpud_memtab_destroy(mt);
}

static void test_free_reuse(void **state)
{
	struct mdgpud_memtab *mt;
	struct mdgpud_mem_entry e;

	(void)state;
	assert_int_equal(mdgpud_memtab_create(8192, 8, &mt), 0);
	assert_int_equal(mdgpud_memtab_insert(mt, 0x1000, 4096, 4096), 0);
	assert_int_equal(mdgpud_memtab_insert(mt, 0x3000, 4096, 4096), 0);
	assert_int_equal(mdgpud_memtab_precheck(mt, 1), -ENOMEM);
	assert_int_equal(mdgpud_memtab_remove(mt, 0x1001, &e), -ENOENT);
	assert_int_equal(mdgpud_memtab_remove(mt, 0x1000, &e), 0);
	assert_int_equal(e.addr, 0x1000);
	assert_int_equal(e.size, 4096);
	assert_int_equal(e.reserved, 4096);
	assert_int_equal(mdgpud_memtab_remove(mt, 0x1000, &e), -ENOENT);
	assert_int_equal(mdgpud_memtab_used(mt), 4096);
	assert_int_equal(mdgpud_memtab_insert(mt, 0x1000, 4096, 4096), 0);
	assert_int_equal(mdgpud_memtab_pop(mt, &e), 0);
	assert_int_equal(mdgpud_memtab_pop(mt, &e), 0);
	assert_int_equal(mdgpud_memtab_pop(mt, &e), -ENOENT);
	assert_int_equal(mdgpud_memtab_used(mt), 0);
	assert_int_equal(mdgpud_memtab_requested(mt), 0);
	mdgpud_memtab_destroy(mt);
}

static void test_ranges(void **state)
{
	struct mdgpud_memtab *mt;

	(void)state;
	assert_int_equal(mdgpud_memtab_create(1 << 30, 3, &mt), 0);
	assert_int_equal(mdgpud_memtab_insert(mt, 0x2000, 0x1000, 0x1000), 0);
	assert_int_equal(mdgpud_memtab_insert(mt, 0x3000, 0x1000, 0x1000), 0);
	/* overlaps and overflow rejected */
	assert_int_equal(mdgpud_memtab_insert(mt, 0x2fff, 2, 2), -EEXIST);
	assert_int_equal(mdgpud_memtab_insert(mt, 0x1fff, 2, 2), -EEXIST);
	assert_int_equal(mdgpud_memtab_insert(mt, UINT64_MAX - 1, 4, 4),
			 -EINVAL);
	assert_int_equal(mdgpud_memtab_insert(mt, 0x8000, 0, 0), -EINVAL);
	/* the table limit (max_entries from config) */
	assert_int_equal(mdgpud_memtab_insert(mt, 0x9000, 1, 1), 0);
	assert_int_equal(mdgpud_memtab_insert(mt, 0xa000, 1, 1), -ENOMEM);
	assert_int_equal(mdgpud_memtab_precheck(mt, 1), -ENOMEM);

	assert_int_equal(mdgpud_memtab_check(mt, 0x2000, 0x1000), 0);
	assert_int_equal(mdgpud_memtab_check(mt, 0x2fff, 1), 0);
	assert_int_equal(mdgpud_memtab_check(mt, 0x2fff, 2), -ERANGE);
	assert_int_equal(mdgpud_memtab_check(mt, 0x2000, 0x2000), -ERANGE);
	assert_int_equal(mdgpud_memtab_check(mt, 0x2800, UINT64_MAX), -ERANGE);
	assert_int_equal(mdgpud_memtab_check(mt, 0x1fff, 1), -ENOENT);
	assert_int_equal(mdgpud_memtab_check(mt, 0x4000, 0), -ENOENT);
	assert_int_equal(mdgpud_memtab_check(mt, 0x9000, 1), 0);
	assert_int_equal(mdgpud_memtab_check(mt, 0x9001, 0), -ENOENT);
	assert_int_equal(mdgpud_memtab_check(mt, UINT64_MAX, 1), -ENOENT);
	assert_int_equal(mdgpud_memtab_check(mt, 0, 0), -ENOENT);
	mdgpud_memtab_destroy(mt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_quota),
		cmocka_unit_test(test_free_reuse),
		cmocka_unit_test(test_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
