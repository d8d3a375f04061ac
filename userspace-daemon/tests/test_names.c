// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * include/common/names.h: the check of a MODULE_FUNCS list that the cuda
 * backend applies to what a worker wrote and libmdgpu to the daemon's
 * answer.  Each case is its own heap buffer of exactly len bytes, so that
 * ASAN catches a read outside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/names.h"

/* mdgpu_names_check over a copy of p[0, len) in a buffer of len bytes. */
static bool check(const char *p, size_t len, uint64_t *count)
{
	char *b = NULL;
	bool ok;

	if (len) {
		b = malloc(len);
		assert_non_null(b);
		memcpy(b, p, len);
	}
	ok = mdgpu_names_check(b, len, count);
	free(b);
	return ok;
}

static void test_names(void **state)
{
	static const struct {
		const char *buf;
		size_t len;
		bool ok;
		uint64_t count;
	} cases[] = {
		{ "", 0, true, 0 },			/* no name */
		{ "a", 2, true, 1 },
		{ "ka\0kb\0_Z2kcPd", 14, true, 3 },
		{ "ka\0kb\0_Z2kcPd", 13, false, 0 },	/* last one cut */
		{ "ka", 2, false, 0 },			/* no NUL at all */
		{ "", 1, false, 0 },			/* one empty name */
		{ "ka\0\0kb", 7, false, 0 },		/* one empty within */
		{ "\0ka", 4, false, 0 },		/* an empty one first */
		{ "ka\0", 4, false, 0 },		/* an empty one last */
	};
	uint64_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = 99;
		assert_int_equal(check(cases[i].buf, cases[i].len, &n),
				 cases[i].ok);
		assert_int_equal(n, cases[i].count);
	}
	/* NULL with no bytes is an empty list. */
	n = 99;
	assert_true(mdgpu_names_check(NULL, 0, &n));
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
