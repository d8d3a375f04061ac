/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmtest: a tiny test harness for the in-guest mdgpu suite, in the spirit of
 * tools/testing/selftests/kselftest_harness.h: named tests registered by
 * TEST(), one fixture level per test (set up before, torn down after, by the
 * suite's vt_setup()/vt_teardown()), EXPECT (records a failure, goes on),
 * ASSERT (records a failure, ends the test), SKIP (ends the test with a
 * reason), and a per-test timeout.  One result line per test on stdout:
 *   PASS: name | FAIL: name: first failure | SKIP: name: reason
 * followed, for failures, by one indented line per failed expectation.
 */
#ifndef MDGPU_VMTEST_H
#define MDGPU_VMTEST_H

#include <errno.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct fx;	/* the suite's fixture state */

struct vt_test {
	const char *name;
	int level;			/* fixture level the test needs */
	void (*fn)(struct fx *f);
	struct vt_test *next;
};

void vt_register(struct vt_test *t);
int vt_main(int argc, char **argv, struct fx *f);

/* Provided by the suite. */
void vt_setup(struct fx *f, int level);		/* may ASSERT */
void vt_teardown(struct fx *f, int level);	/* must not ASSERT */

void vt_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
_Noreturn void vt_abort(void);
_Noreturn void vt_skip(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#define TEST(tname, lvl)						\
	static void vt_fn_##tname(struct fx *f);			\
	static struct vt_test vt_t_##tname = {				\
		.name = #tname, .level = (lvl), .fn = vt_fn_##tname };	\
	__attribute__((constructor)) static void vt_reg_##tname(void)	\
	{ vt_register(&vt_t_##tname); }					\
	static void vt_fn_##tname(struct fx *f __attribute__((unused)))

/* EXPECT(cond, "printf format", ...): errno as the condition left it. */
#define EXPECT(cond, ...) do {						\
	int vt_ok_ = !!(cond);						\
	if (!vt_ok_)							\
		vt_fail(__FILE__, __LINE__, "(" #cond ") " __VA_ARGS__); \
} while (0)

#define ASSERT(cond, ...) do {						\
	int vt_ok_ = !!(cond);						\
	if (!vt_ok_) {							\
		vt_fail(__FILE__, __LINE__, "(" #cond ") " __VA_ARGS__); \
		vt_abort();						\
	}								\
} while (0)

/* Expect a call returning -1/errno to fail with exactly err. */
#define EXPECT_ERRNO(call, err) do {					\
	errno = 0;							\
	long vt_r_ = (long)(call);					\
	int vt_e_ = errno;						\
	EXPECT(vt_r_ < 0 && vt_e_ == (err),				\
	       "returned %ld, errno %d (%s), want %s", vt_r_, vt_e_,	\
	       strerror(vt_e_), #err);					\
} while (0)

#define SKIP(...) vt_skip(__VA_ARGS__)

#endif
