// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * include/common/link_bundle.h: the parser of a MODULE_LINK bundle, which
 * the cuda worker runs on a tenant's bytes, and the check of a link
 * answer.  Each bundle is parsed from its own heap buffer of exactly its
 * length, so that ASAN catches a read outside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/link_bundle.h"

struct bundle {
	uint8_t b[1024];
	size_t len;
};

static void put(struct bundle *b, const void *p, size_t n)
{
	assert_true(b->len + n <= sizeof(b->b));
	memcpy(b->b + b->len, p, n);
	b->len += n;
}

/* A bundle of nopt options (OPT_LEVEL 3, DEBUG 1) and two inputs. */
static void good(struct bundle *b, uint16_t nopt)
{
	struct mdgpu_link_bundle h = {
		.magic = MDGPU_LINK_MAGIC, .version = MDGPU_LINK_VERSION,
		.nr_options = nopt, .nr_inputs = 2,
	};
	struct mdgpu_link_option o[2] = {
		{ MDGPU_LINK_OPT_OPT_LEVEL, 3 }, { MDGPU_LINK_OPT_DEBUG, 1 },
	};
	struct mdgpu_link_input a = { MDGPU_LINK_INPUT_PTX, 5, 3 };
	struct mdgpu_link_input l = { MDGPU_LINK_INPUT_LIBRARY, 0, 4 };

	b->len = 0;
	put(b, &h, sizeof(h));
	put(b, o, nopt * sizeof(o[0]));
	put(b, &a, sizeof(a));
	put(b, "a.ptx", 5);
	put(b, "abc", 3);
	put(b, &l, sizeof(l));
	put(b, "!ar\n", 4);
}

/* Parses a copy of b[0, len) in a buffer of exactly len bytes. */
static int parse(const struct bundle *b, size_t len, uint32_t *nopt,
		 uint32_t *nin, struct mdgpu_link_item *items)
{
	struct mdgpu_link_option opts[MDGPU_LINK_OPTIONS_MAX];
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	assert_non_null(copy);
	memcpy(copy, b->b, len);
	ret = mdgpu_link_bundle_parse(copy, len, opts, nopt, items, nin);
	if (!ret && *nin)
		assert_memory_equal(items[0].data, "abc", 3);
	free(copy);
	return ret;
}

static void set32(struct bundle *b, size_t off, uint32_t v)
{
	memcpy(b->b + off, &v, sizeof(v));
}

static void set64(struct bundle *b, size_t off, uint64_t v)
{
	memcpy(b->b + off, &v, sizeof(v));
}

static void test_parse(void **state)
{
	struct mdgpu_link_item items[MDGPU_LINK_INPUTS_MAX];
	const size_t in0 = sizeof(struct mdgpu_link_bundle) +
			   2 * sizeof(struct mdgpu_link_option);
	uint32_t nopt, nin;
	struct bundle b;

	(void)state;
	good(&b, 2);
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), 0);
	assert_int_equal(nopt, 2);
	assert_int_equal(nin, 2);
	assert_int_equal(items[0].kind, MDGPU_LINK_INPUT_PTX);
	assert_int_equal(items[0].name_len, 5);
	assert_int_equal(items[1].kind, MDGPU_LINK_INPUT_LIBRARY);
	assert_int_equal(items[1].len, 4);
	good(&b, 0);
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), 0);
	assert_int_equal(nopt, 0);

	/* Every cut of the bundle: too short, never a read past it. */
	good(&b, 2);
	for (size_t n = 0; n < b.len; n++)
		assert_int_not_equal(parse(&b, n, &nopt, &nin, items), 0);
	/* A byte after the last input. */
	b.b[b.len] = 0;
	assert_int_equal(parse(&b, b.len + 1, &nopt, &nin, items), -ERANGE);

	/* The header. */
	good(&b, 2);
	set32(&b, 0, 0x12345678);			/* magic */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);
	good(&b, 2);
	b.b[4] = 2;					/* version */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);
	good(&b, 2);
	set32(&b, 12, 1);				/* pad */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);
	good(&b, 2);
	set32(&b, 8, 0);				/* no input */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);
	set32(&b, 8, MDGPU_LINK_INPUTS_MAX + 1);
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -E2BIG);
	set32(&b, 8, UINT32_MAX);
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -E2BIG);
	good(&b, 2);
	b.b[6] = MDGPU_LINK_OPTIONS_MAX + 1;		/* nr_options */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -E2BIG);
	b.b[6] = 40;	/* within the bound's type, past the bundle */
	b.b[7] = 0;
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -E2BIG);

	/* Options: known, in range, each once. */
	good(&b, 2);
	set32(&b, 16, 0);				/* what 0 */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);
	set32(&b, 16, MDGPU_LINK_OPT_COUNT);
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);
	set32(&b, 16, 1000);
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);
	set32(&b, 16, MDGPU_LINK_OPT_DEBUG);		/* twice */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);
	good(&b, 2);
	set32(&b, 20, 5);				/* opt level 5 */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);

	/* Inputs: kind, lengths that overflow or run past the end. */
	good(&b, 2);
	set32(&b, in0, 0);
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);
	set32(&b, in0, MDGPU_LINK_INPUT_LIBRARY + 1);
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);
	good(&b, 2);
	set64(&b, in0 + 8, 0);				/* empty data */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -EINVAL);
	set64(&b, in0 + 8, UINT64_MAX);
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -ERANGE);
	set64(&b, in0 + 8, UINT64_MAX - 4);		/* + name wraps */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -ERANGE);
	good(&b, 2);
	set32(&b, in0 + 4, MDGPU_NAME_MAX + 1);		/* name_len */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -E2BIG);
	set32(&b, in0 + 4, 200);			/* past the end */
	assert_int_equal(parse(&b, b.len, &nopt, &nin, items), -ERANGE);

	/* A bundle above MDGPU_MODULE_MAX. */
	{
		struct mdgpu_link_option opts[MDGPU_LINK_OPTIONS_MAX];
		uint8_t *big = calloc(1, MDGPU_MODULE_MAX + 1);

		assert_non_null(big);
		good(&b, 0);
		memcpy(big, b.b, b.len);
		assert_int_equal(mdgpu_link_bundle_parse(big,
							 MDGPU_MODULE_MAX + 1,
							 opts, &nopt, items,
							 &nin), -E2BIG);
		free(big);
	}
}

static void test_answer(void **state)
{
	struct mdgpu_link_answer a = { 16 + 3 + 2 + 1, 3, 2, 1 }, got;
	uint8_t buf[64] = { 0 };

	(void)state;
	memcpy(buf, &a, sizeof(a));
	assert_true(mdgpu_link_answer_check(buf, 22, 22, &got));
	assert_int_equal(got.image_len, 3);
	assert_true(mdgpu_link_answer_check(buf, 16, 22, &got)); /* header */
	assert_false(mdgpu_link_answer_check(buf, 17, 22, &got)); /* part */
	assert_false(mdgpu_link_answer_check(buf, 15, 22, &got));
	assert_false(mdgpu_link_answer_check(buf, 22, 23, &got)); /* size */
	assert_false(mdgpu_link_answer_check(buf, 23, 22, &got));
	a.error_log_len = MDGPU_LINK_LOG_MAX + 1;
	memcpy(buf, &a, sizeof(a));
	assert_false(mdgpu_link_answer_check(buf, 16, 22, &got));
	a.error_log_len = 2;
	a.image_len = UINT32_MAX;	/* parts that wrap a u32 sum */
	a.info_log_len = 1 + 16 + 3;
	memcpy(buf, &a, sizeof(a));
	assert_false(mdgpu_link_answer_check(buf, 16, 22, &got));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_answer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
