/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The checks of libcuda's driver-API test programs (test_driver.c,
 * test_code.c, test_memop.c): each one counts into the program's passed
 * and failed (SKIP into skipped) and prints a failure with its line and
 * expression on stderr.  Included once, by the program's one file.
 */
#ifndef MDGPU_CU_TEST_EXPECT_H
#define MDGPU_CU_TEST_EXPECT_H

#include <stdio.h>

#include <cuda.h>

static unsigned passed, failed;
static unsigned skipped __attribute__((unused));

#define EXPECT(cond) do {						\
	if (cond) {							\
		passed++;						\
	} else {							\
		failed++;						\
		fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__,	\
			#cond);						\
	}								\
} while (0)
#define EXPECT_RES(call, want) do {					\
	CUresult r_ = (call);						\
	if (r_ == (want)) {						\
		passed++;						\
	} else {							\
		failed++;						\
		fprintf(stderr, "FAIL %s:%d: %s = %d, expected %s\n",	\
			__FILE__, __LINE__, #call, (int)r_, #want);	\
	}								\
} while (0)
#define OK(call) EXPECT_RES(call, CUDA_SUCCESS)
#define SKIP(why) do {							\
	skipped++;							\
	fprintf(stderr, "SKIP %s:%d: %s\n", __FILE__, __LINE__, why);	\
} while (0)

#endif /* MDGPU_CU_TEST_EXPECT_H */
