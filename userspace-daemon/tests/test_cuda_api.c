// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The driver-API table and the CUresult -> errno map.  Needs no GPU: it
 * checks the mapping, that every symbol we resolve is the name cuda.h maps
 * to (when a cuda.h was found at build time), and the loader's failures.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cuda_api.h"

static void test_errno_map(void **state)
{
	static const struct { mdgpud_cu_result res; int err; } map[] = {
		{ MDGPUD_CUDA_SUCCESS, 0 },
		{ MDGPUD_CUDA_ERROR_INVALID_VALUE, -EINVAL },
		{ MDGPUD_CUDA_ERROR_INVALID_PTX, -EINVAL },
		{ MDGPUD_CUDA_ERROR_INVALID_IMAGE, -EINVAL },
		{ MDGPUD_CUDA_ERROR_NO_BINARY_FOR_GPU, -EINVAL },
		{ MDGPUD_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, -EINVAL },
		{ MDGPUD_CUDA_ERROR_OUT_OF_MEMORY, -ENOMEM },
		{ MDGPUD_CUDA_ERROR_NOT_FOUND, -ENOENT },
		{ MDGPUD_CUDA_ERROR_NOT_READY, -EAGAIN },
		{ MDGPUD_CUDA_ERROR_NOT_SUPPORTED, -EOPNOTSUPP },
		{ MDGPUD_CUDA_ERROR_NOT_PERMITTED, -EPERM },
		{ MDGPUD_CUDA_ERROR_NO_DEVICE, -ENODEV },
		{ MDGPUD_CUDA_ERROR_STUB_LIBRARY, -ENODEV },
		{ MDGPUD_CUDA_ERROR_NOT_INITIALIZED, -ENODEV },
		{ MDGPUD_CUDA_ERROR_ILLEGAL_ADDRESS, -EIO },
		{ MDGPUD_CUDA_ERROR_LAUNCH_FAILED, -EIO },
		{ MDGPUD_CUDA_ERROR_UNKNOWN, -EIO },
		{ 123456, -EIO },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		assert_int_equal(mdgpud_cuda_errno(map[i].res), map[i].err);
}

static void test_sticky(void **state)
{
	(void)state;
	assert_true(mdgpud_cuda_error_is_sticky(MDGPUD_CUDA_ERROR_ILLEGAL_ADDRESS));
	assert_true(mdgpud_cuda_error_is_sticky(MDGPUD_CUDA_ERROR_LAUNCH_FAILED));
	assert_true(mdgpud_cuda_error_is_sticky(MDGPUD_CUDA_ERROR_ASSERT));
	assert_false(mdgpud_cuda_error_is_sticky(MDGPUD_CUDA_ERROR_INVALID_VALUE));
	assert_false(mdgpud_cuda_error_is_sticky(MDGPUD_CUDA_ERROR_OUT_OF_MEMORY));
	assert_false(mdgpud_cuda_error_is_sticky(MDGPUD_CUDA_SUCCESS));
}

static void test_symbols_match_cuda_h(void **state)
{
	size_t n = mdgpud_cuda_api_symbol_count();
	const char *mapped;

	(void)state;
	assert_true(n > 20);
	if (!mdgpud_cuda_abi_mapped_name(0, &mapped)) {
		printf("SKIPPED: no cuda.h at build time, nothing to compare\n");
		skip();
	}
	for (size_t i = 0; i < n; i++) {
		assert_true(mdgpud_cuda_abi_mapped_name(i, &mapped));
		assert_string_equal(mdgpud_cuda_api_symbol_name(i), mapped);
	}
	assert_null(mdgpud_cuda_api_symbol_name(n));
}

/* CU_STREAM_LEGACY is a pointer constant: compared here, not statically. */
static void test_stream_legacy_matches_cuda_h(void **state)
{
	unsigned long v = 0;

	(void)state;
	if (!mdgpud_cuda_abi_stream_legacy(&v)) {
		printf("SKIPPED: no cuda.h at build time, nothing to compare\n");
		skip();
	}
	assert_int_equal(v, (unsigned long)(uintptr_t)MDGPUD_CU_STREAM_LEGACY);
}

static void test_load_failures(void **state)
{
	struct mdgpud_cuda_api api;
	char why[256] = "";

	(void)state;
	assert_int_equal(mdgpud_cuda_api_load(&api, "libmdgpud-no-such.so.9",
					      why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "libmdgpud-no-such.so.9"));
	assert_null(api.dl);
	/* A library without the driver's symbols. */
	assert_int_equal(mdgpud_cuda_api_load(&api, "libm.so.6", why,
					      sizeof(why)), -ENOSYS);
	assert_non_null(strstr(why, "cuInit"));
	assert_null(api.dl);
	assert_null(api.init);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errno_map),
		cmocka_unit_test(test_sticky),
		cmocka_unit_test(test_symbols_match_cuda_h),
		cmocka_unit_test(test_stream_legacy_matches_cuda_h),
		cmocka_unit_test(test_load_failures),
	};

	return cmocka_run_group_tests_name("cuda_api", tests, NULL, NULL);
}
