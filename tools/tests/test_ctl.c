// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpuctl's pure parts: reading key=value lines, writing them as JSON
 * objects, and judging HTTP requests for serve-metrics (every status it
 * answers, split reads, hostile bytes), plus the responses it builds;
 * the checks of the mdev commands' arguments (ctl_mdev.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl_http.h"
#include "ctl_kv.h"
#include "ctl_mdev.h"

static const char list_line[] =
	"id=3 type=2g type_id=2 weight=5 cap=100 gpu_ns=18446744073709551615"
	" context=ok mdev_uuid=- abi=1.2 odd=007 big=18446744073709551616";

static void test_kv_find(void **state)
{
	uint64_t v;
	char buf[8];

	(void)state;
	assert_int_equal(ctl_kv_u64(list_line, "id", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(ctl_kv_u64(list_line, "type_id", &v), 0);
	assert_int_equal(v, 2);
	/* "type" does not match "type_id" and is not a number */
	assert_int_equal(ctl_kv_u64(list_line, "type", &v), -1);
	assert_int_equal(ctl_kv_u64(list_line, "gpu_ns", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(ctl_kv_u64(list_line, "big", &v), -1);
	assert_int_equal(ctl_kv_u64(list_line, "missing", &v), -1);
	assert_int_equal(ctl_kv_u64(list_line, "", &v), -1);
	ctl_kv_str(list_line, "context", buf, sizeof(buf));
	assert_string_equal(buf, "ok");
	ctl_kv_str(list_line, "nope", buf, sizeof(buf));
	assert_string_equal(buf, "-");
	ctl_kv_str(list_line, "gpu_ns", buf, sizeof(buf));
	assert_string_equal(buf, "1844674");	/* cut to the buffer */
}

static char *json_of(const char *line, int *ret)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	*ret = ctl_json_object(f, line);
	fclose(f);
	return text;
}

static void test_json(void **state)
{
	char *s;
	int ret;

	(void)state;
	s = json_of(list_line, &ret);
	assert_int_equal(ret, 0);
	assert_string_equal(s,
		"{\"id\": 3, \"type\": \"2g\", \"type_id\": 2, \"weight\": 5,"
		" \"cap\": 100, \"gpu_ns\": 18446744073709551615,"
		" \"context\": \"ok\", \"mdev_uuid\": \"-\", \"abi\": \"1.2\","
		" \"odd\": \"007\", \"big\": \"18446744073709551616\"}");
	free(s);
	/* names stay strings even when numeric; quotes, backslashes and
	 * control bytes are escaped */
	s = json_of("type=123 gpu=a\"b\\c x=\x01y", &ret);
	assert_int_equal(ret, 0);
	assert_string_equal(s, "{\"type\": \"123\", \"gpu\": \"a\\\"b\\\\c\","
			       " \"x\": \"\\u0001y\"}");
	free(s);
	/* the GPU's ids (stats) are names too */
	s = json_of("bus_id=0 mdev_parent=7", &ret);
	assert_int_equal(ret, 0);
	assert_string_equal(s, "{\"bus_id\": \"0\", \"mdev_parent\": \"7\"}");
	free(s);
	s = json_of("", &ret);
	assert_int_equal(ret, 0);
	assert_string_equal(s, "{}");
	free(s);
	s = json_of("a=1 =2", &ret);
	assert_int_equal(ret, -1);
	assert_string_equal(s, "");		/* nothing written */
	free(s);
	s = json_of("a=1 plain", &ret);
	assert_int_equal(ret, -1);
	free(s);
	s = json_of("a= b=0", &ret);		/* empty value: a string */
	assert_int_equal(ret, 0);
	assert_string_equal(s, "{\"a\": \"\", \"b\": 0}");
	free(s);
}

static int parse(const char *req, bool *head)
{
	return ctl_http_parse(req, strlen(req), CTL_HTTP_REQ_MAX, head);
}

static void test_http_parse(void **state)
{
	static const struct { const char *req; int status; bool head; } t[] = {
		{ "GET /metrics HTTP/1.0\r\n\r\n", 200, false },
		{ "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
		  200, false },
		{ "GET /metrics HTTP/1.1\n\n", 200, false },
		{ "GET /metrics?name[]=x HTTP/1.1\r\n\r\n", 200, false },
		{ "HEAD /metrics HTTP/1.0\r\n\r\n", 200, true },
		{ "GET / HTTP/1.0\r\n\r\n", 404, false },
		{ "GET /metricsx HTTP/1.0\r\n\r\n", 404, false },
		{ "GET /metrics/ HTTP/1.0\r\n\r\n", 404, false },
		{ "GET /metric HTTP/1.0\r\n\r\n", 404, false },
		{ "POST /metrics HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc",
		  405, false },
		{ "get /metrics HTTP/1.0\r\n\r\n", 405, false },
		{ "GET /metrics HTTP/2.0\r\n\r\n", 505, false },
		{ "GET /metrics HTTP/1.10\r\n\r\n", 505, false },
		{ "GET /metrics FTP/1.0\r\n\r\n", 400, false },
		{ "GET /metrics\r\n\r\n", 400, false },
		{ "GET  /metrics HTTP/1.0\r\n\r\n", 400, false },
		{ "GET /metrics HTTP/1.0 x\r\n\r\n", 400, false },
		{ "GET metrics HTTP/1.0\r\n\r\n", 400, false },
		{ "GET /met\x01rics HTTP/1.0\r\n\r\n", 400, false },
		{ "GET /metrics HTTP/1.0\r\nX: a\x7f\r\n\r\n", 400, false },
		{ "GET /m\xc3\xa9trics HTTP/1.0\r\n\r\n", 400, false },
		{ "\r\n\r\n", 400, false },
		{ "GET /metrics HTTP/1.0\r\n", 0, false },	/* incomplete */
		{ "GET /metr", 0, false },
		{ "", 0, false },
	};
	bool head;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int st = parse(t[i].req, &head);

		if (st != t[i].status || (st == 200 && head != t[i].head))
			fail_msg("request %zu '%s': %d (head %d), expected %d",
				 i, t[i].req, st, head, t[i].status);
	}
}

static void test_http_parse_bounds(void **state)
{
	char *big = malloc(CTL_HTTP_REQ_MAX);
	const char *req = "GET /metrics HTTP/1.0\r\n\r\n";
	bool head;

	(void)state;
	assert_non_null(big);
	/* A NUL byte inside the headers */
	memcpy(big, "GET /metrics HTTP/1.0\r\nA: \0\r\n\r\n", 31);
	assert_int_equal(ctl_http_parse(big, 31, CTL_HTTP_REQ_MAX, &head),
			 400);
	/* Headers that fill the buffer without their end: 431, and not
	 * before it is full. */
	memset(big, 'a', CTL_HTTP_REQ_MAX);
	memcpy(big, "GET /metrics HTTP/1.0\r\nX: ", 26);
	assert_int_equal(ctl_http_parse(big, CTL_HTTP_REQ_MAX - 1,
					CTL_HTTP_REQ_MAX, &head), 0);
	assert_int_equal(ctl_http_parse(big, CTL_HTTP_REQ_MAX,
					CTL_HTTP_REQ_MAX, &head), 431);
	/* Byte by byte, a request is judged only once it is whole. */
	for (size_t n = 0; n < strlen(req); n++)
		assert_int_equal(ctl_http_parse(req, n, CTL_HTTP_REQ_MAX,
						&head), 0);
	assert_int_equal(ctl_http_parse(req, strlen(req), CTL_HTTP_REQ_MAX,
					&head), 200);
	free(big);
}

static void test_http_response(void **state)
{
	static const char ok_answer[] =
		"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n"
		"Content-Length: 4\r\nConnection: close\r\n\r\nabc\n";
	char *out;
	size_t len;

	(void)state;
	assert_int_equal(ctl_http_response(200, "text/plain", "abc\n", 4,
					   false, &out, &len), 0);
	assert_int_equal(len, strlen(ok_answer));
	assert_memory_equal(out, ok_answer, len);
	free(out);
	/* HEAD: the length of the body, no body */
	assert_int_equal(ctl_http_response(200, "text/plain", "abc\n", 4, true,
					   &out, &len), 0);
	assert_memory_equal(out + len - 4, "\r\n\r\n", 4);
	assert_non_null(strstr(out, "Content-Length: 4\r\n"));
	free(out);
	assert_int_equal(ctl_http_response(405, "text/plain", "x", 1, false,
					   &out, &len), 0);
	assert_memory_equal(out, "HTTP/1.0 405 Method Not Allowed\r\n", 33);
	assert_non_null(memmem(out, len, "Allow: GET, HEAD\r\n", 18));
	free(out);
}

static void test_mdev_checks(void **state)
{
	char u[CTL_MDEV_UUID_LEN], out[8], longname[CTL_MDEV_NAME_MAX + 2];

	(void)state;
	assert_int_equal(ctl_mdev_uuid("6D677075-E2E0-4000-8000-00000000000a", u),
			 0);
	assert_string_equal(u, "6d677075-e2e0-4000-8000-00000000000a");
	assert_int_equal(ctl_mdev_uuid("6d677075-e2e0-4000-8000-00000000000", u),
			 -1);
	assert_int_equal(ctl_mdev_uuid("6d677075-e2e0-4000-8000-00000000000aa", u),
			 -1);
	assert_int_equal(ctl_mdev_uuid("6d677075e-2e0-4000-8000-00000000000a", u),
			 -1);
	assert_int_equal(ctl_mdev_uuid("6d677075-e2e0-4000-8000-00000000000g", u),
			 -1);
	assert_int_equal(ctl_mdev_uuid("../../../../../../../../../../x/y", u),
			 -1);
	assert_int_equal(ctl_mdev_uuid("", u), -1);

	assert_true(ctl_mdev_name_ok("0000:41:00.0"));
	assert_true(ctl_mdev_name_ok("mdgpu-1g"));
	assert_true(ctl_mdev_name_ok(".x"));
	assert_false(ctl_mdev_name_ok(""));
	assert_false(ctl_mdev_name_ok("."));
	assert_false(ctl_mdev_name_ok(".."));
	assert_false(ctl_mdev_name_ok("a/b"));
	assert_false(ctl_mdev_name_ok("-p"));
	assert_false(ctl_mdev_name_ok("a b"));
	assert_false(ctl_mdev_name_ok("a\nb"));
	assert_false(ctl_mdev_name_ok("caf\xc3\xa9"));
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_false(ctl_mdev_name_ok(longname));
	longname[CTL_MDEV_NAME_MAX] = '\0';
	assert_true(ctl_mdev_name_ok(longname));

	assert_true(ctl_mdev_value_ok("0"));
	assert_true(ctl_mdev_value_ok("4294967295"));
	assert_false(ctl_mdev_value_ok("12345678901"));
	assert_false(ctl_mdev_value_ok(""));
	assert_false(ctl_mdev_value_ok("+5"));
	assert_false(ctl_mdev_value_ok("5\n"));
	assert_false(ctl_mdev_value_ok("0x10"));

	assert_int_equal(ctl_mdev_knob("weight"), 0);
	assert_int_equal(ctl_mdev_knob("priority"), 2);
	assert_int_equal(ctl_mdev_knob("weigh"), -1);

	ctl_mdev_sanitize("a b=c\n", 6, out, sizeof(out));
	assert_string_equal(out, "a_b_c_");
	ctl_mdev_sanitize("", 0, out, sizeof(out));
	assert_string_equal(out, "-");
	ctl_mdev_sanitize("0000:41:00.0", 12, out, sizeof(out));
	assert_string_equal(out, "0000:41");	/* cut to the buffer */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kv_find),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_http_parse),
		cmocka_unit_test(test_http_parse_bounds),
		cmocka_unit_test(test_http_response),
		cmocka_unit_test(test_mdev_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
