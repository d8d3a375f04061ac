// SPDX-License-Identifier: GPL-2.0
/* vmtest harness: registry, runner, expectations (see vmtest.h). */
#include "vmtest.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define VT_TIMEOUT_S 20

static struct vt_test *vt_head, **vt_tail = &vt_head;
static sigjmp_buf vt_jmp;
static int vt_failed;		/* failed expectations in the current test */
static char vt_first[256];	/* the first one, for the result line */
static char vt_skip_reason[256];
static const char *vt_current;

void vt_register(struct vt_test *t)
{
	*vt_tail = t;
	vt_tail = &t->next;
}

void vt_fail(const char *file, int line, const char *fmt, ...)
{
	char msg[512];
	int e = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	(void)file;
	printf("    %s: line %d: %s [errno %d %s]\n", vt_current, line, msg, e,
	       strerror(e));
	if (!vt_failed++)
		snprintf(vt_first, sizeof(vt_first), "line %d: %.200s", line, msg);
	fflush(stdout);
	errno = e;
}

_Noreturn void vt_abort(void)
{
	siglongjmp(vt_jmp, 1);
}

_Noreturn void vt_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vt_skip_reason, sizeof(vt_skip_reason), fmt, ap);
	va_end(ap);
	siglongjmp(vt_jmp, 2);
}

static void vt_alarm(int sig)
{
	(void)sig;
	vt_fail(__FILE__, 0, "timed out after %d s", VT_TIMEOUT_S);
	siglongjmp(vt_jmp, 1);
}

/* Run one test with its fixture: 0 pass, 1 fail, 2 skip. */
static int vt_run(struct vt_test *t, struct fx *f)
{
	volatile int stage = 0;	/* 0 setup, 1 test, 2 done */
	int r;

	vt_current = t->name;
	vt_failed = 0;
	vt_skip_reason[0] = 0;
	alarm(VT_TIMEOUT_S);
	r = sigsetjmp(vt_jmp, 1);
	if (r == 0) {
		vt_setup(f, t->level);
		stage = 1;
		t->fn(f);
		stage = 2;
	}
	alarm(0);
	vt_teardown(f, t->level);
	if (r == 2 && !vt_failed) {
		printf("SKIP: %s: %s\n", t->name, vt_skip_reason);
		return 2;
	}
	if (vt_failed) {
		printf("FAIL: %s: %s%s\n", t->name,
		       stage == 0 ? "fixture: " : "", vt_first);
		return 1;
	}
	printf("PASS: %s\n", t->name);
	return 0;
}

int vt_main(int argc, char **argv, struct fx *f)
{
	struct sigaction sa = { .sa_handler = vt_alarm };
	int n[3] = { 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGALRM, &sa, NULL);
	for (struct vt_test *t = vt_head; t; t = t->next)
		if (argc < 2 || !strcmp(argv[1], t->name))
			n[vt_run(t, f)]++;
	printf("mdgpu-vmtest: %d passed, %d failed, %d skipped\n", n[0], n[1],
	       n[2]);
	return n[1] ? 1 : 0;
}
