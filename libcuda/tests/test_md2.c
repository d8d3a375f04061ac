// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * MD2 against RFC 1319's test suite (A.5), and HMAC-MD2 against a value
 * computed independently (Python, RFC 2104 with a 16-byte block).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "md2.h"

static void hex(const uint8_t d[16], char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void md2_str(const char *msg, char out[33])
{
	struct mdgpu_md2 h;
	uint8_t d[16];

	mdgpu_md2_init(&h);
	mdgpu_md2_update(&h, msg, strlen(msg));
	mdgpu_md2_final(&h, d);
	hex(d, out);
}

static void test_rfc1319(void **state)
{
	static const char *const v[][2] = {
		{ "", "8350e5a3e24c153df2275c9f80692773" },
		{ "a", "32ec01ec4a6dac72c0ab96fb34c0b5d1" },
		{ "abc", "da853b0d3f88d99b30283a69e6ded6bb" },
		{ "message digest", "ab4f496bfb2a530b219ff33031fe06b0" },
		{ "abcdefghijklmnopqrstuvwxyz",
		  "4e8ddff3650292ab5a4108c3aa47940b" },
		{ "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		  "0123456789", "da33def2a42df13975352846c30338cd" },
		{ "1234567890123456789012345678901234567890123456789012345678"
		  "9012345678901234567890", "d5976f79d83d3a0dc9806c3c66f3efd8" },
	};
	char out[33];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		md2_str(v[i][0], out);
		assert_string_equal(out, v[i][1]);
	}
}

/* Split updates give the digest of the whole. */
static void test_split(void **state)
{
	const char *msg = "12345678901234567890123456789012345678901234567";
	struct mdgpu_md2 h;
	uint8_t d[16];
	char a[33], b[33];

	(void)state;
	md2_str(msg, a);
	mdgpu_md2_init(&h);
	for (size_t i = 0; msg[i]; i++)
		mdgpu_md2_update(&h, msg + i, 1);
	mdgpu_md2_final(&h, d);
	hex(d, b);
	assert_string_equal(a, b);
}

static void test_hmac(void **state)
{
	uint8_t key[16], d[16];
	char out[33];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	mdgpu_hmac_md2(key, "what do ya want for nothing?", 28, d);
	hex(d, out);
	assert_string_equal(out, "022f90a619e88463118324aa4749d100");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc1319),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_hmac),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
