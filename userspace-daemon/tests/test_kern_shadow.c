// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The kernel transport's shadow doorbell (ABI 1.13, transports/kernel.c),
 * without mdgpu.ko: the vGPU's ring is a buffer of this test, whose
 * struct mdgpu_ring_shadow the test writes as the VFIO user would; the
 * control fd is a pipe for events, and the transport's ioctl() is this
 * test's, which records what publish() asked the kernel.
 *
 *   arm() sets daemon_polling while awake and only while the ring is
 *   served (open, synced, not desynchronised); a reset leaves it set
 *   again once acknowledged;
 *   sq_tail() takes a shadow tail that moves forward by at most entries
 *   past the published head, across the 2^32 wrap, and ignores (keeping
 *   the last good tail) a tail that is backwards or too far;
 *   no tail is taken while the mirror's STATUS shows the device disabled
 *   or a reset pending;
 *   a DOORBELL event behind a tail the shadow gave is not taken;
 *   publish() is COMPLETE_TAIL with the tail served.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <cmocka.h>

#include "uapi/mdgpu.h"

/* The transport's ioctl() calls: recorded, answered with test_ioctl_ret. */
static unsigned long test_ioctl_req;
static struct mdgpu_ctl_complete_tail test_ioctl_ct;
static int test_ioctl_calls;
static int test_ioctl_ret;

static int test_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	(void)fd;
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	test_ioctl_calls++;
	test_ioctl_req = req;
	memset(&test_ioctl_ct, 0, sizeof(test_ioctl_ct));
	if (req == MDGPU_CTL_COMPLETE_TAIL)
		memcpy(&test_ioctl_ct, arg, sizeof(test_ioctl_ct));
	else if (req == MDGPU_CTL_COMPLETE)
		memcpy(&test_ioctl_ct.c, arg, sizeof(test_ioctl_ct.c));
	if (test_ioctl_ret) {
		errno = test_ioctl_ret;
		return -1;
	}
	return 0;
}

#define ioctl test_ioctl
/* The transport's static functions are what is tested. */
#include "../transports/kernel.c"
#undef ioctl

#define PARENT	7
#define KID	3
#define ENTRIES	64u

struct env {
	struct mdgpud_transport t;
	struct mdgpud_kvgpu *k;
	int wr;				/* the "kernel's" end of the pipe */
	uint8_t *ring;
	volatile struct mdgpu_ring_shadow *sh;
	volatile struct mdgpu_ring_mirror *m;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	int p[2];

	assert_non_null(e);
	mdgpud_log_set(MDGPUD_LOG_ERR, NULL, NULL);
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	e->t.fd = p[0];
	e->wr = p[1];
	e->t.parent_id = PARENT;
	e->t.wake_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(e->t.wake_efd >= 0);
	e->ring = calloc(1, MDGPU_RING_REGION_BYTES(ENTRIES));
	assert_non_null(e->ring);
	e->k = calloc(1, sizeof(*e->k));
	assert_non_null(e->k);
	e->k->t = &e->t;
	e->k->kid = KID;
	e->k->gen = 1;
	e->k->entries = ENTRIES;
	e->k->open = true;
	e->k->ring = e->ring;
	e->k->shadow = (struct mdgpu_ring_shadow *)(e->ring +
				MDGPU_RING_SHADOW_OFFSET(ENTRIES));
	strcpy(e->k->uuid_str, "test");
	e->t.vgpus = e->k;
	e->sh = e->k->shadow;
	e->k->mirror = (struct mdgpu_ring_mirror *)(e->ring +
				MDGPU_RING_MIRROR_OFFSET(ENTRIES));
	e->m = (struct mdgpu_ring_mirror *)e->k->mirror;
	e->m->status = MDGPU_STATUS_READY | MDGPU_STATUS_ENABLED;
	test_ioctl_calls = 0;
	test_ioctl_ret = 0;
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	close(e->t.fd);
	close(e->wr);
	close(e->t.wake_efd);
	free(e->k);
	free(e->ring);
	free(e);
	return 0;
}

static void put(struct env *e, uint32_t type, uint32_t a, uint32_t b)
{
	struct mdgpu_ctl_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.parent_id = PARENT;
	ev.vgpu_id = KID;
	if (type == MDGPU_EV_DOORBELL) {
		ev.doorbell.sq_tail = a;
		ev.doorbell.gen = b;
	} else if (type == MDGPU_EV_RESET || type == MDGPU_EV_OPEN) {
		ev.gen.gen = a;
	}
	assert_int_equal(write(e->wr, &ev, sizeof(ev)), (ssize_t)sizeof(ev));
}

/* sq_tail() as the dispatcher calls it, past the peek's interval. */
static uint32_t tail_now(struct env *e)
{
	e->t.peek_ns = 0;
	return mdgpud_kern_sq_tail(e->k);
}

/* arm(): daemon_polling follows the dispatcher, 0 while it sleeps. */
static void test_arm_sets_polling(void **state)
{
	struct env *e = *state;

	assert_int_equal(e->sh->daemon_polling, 0);
	mdgpud_kern_arm(e->k, false);
	assert_int_equal(e->sh->daemon_polling, 1);
	mdgpud_kern_arm(e->k, true);
	assert_int_equal(e->sh->daemon_polling, 0);
	mdgpud_kern_arm(e->k, false);
	assert_int_equal(e->sh->daemon_polling, 1);
	/* A closed device is not served: BAR0 (which refuses) for it. */
	put(e, MDGPU_EV_CLOSE, 0, 0);
	mdgpud_kern_wake_event(&e->t, 0);
	assert_false(e->k->open);
	assert_int_equal(e->sh->daemon_polling, 0);
	mdgpud_kern_arm(e->k, false);
	assert_int_equal(e->sh->daemon_polling, 0);
}

/* Not served: unsynced (open across a restart) and desynchronised rings
 * are not polled and their shadow is not read. */
static void test_not_served(void **state)
{
	struct env *e = *state;

	e->k->unsynced = true;
	mdgpud_kern_arm(e->k, false);
	assert_int_equal(e->sh->daemon_polling, 0);
	e->sh->sq_tail = 4;
	assert_int_equal(tail_now(e), 0);
	e->k->unsynced = false;
	mdgpud_kern_arm(e->k, false);
	assert_int_equal(e->sh->daemon_polling, 1);
	assert_int_equal(tail_now(e), 4);

	/* A COMPLETE refused as stale: desync, polling off, nothing read. */
	test_ioctl_ret = ESTALE;
	mdgpud_kern_publish(e->k, 2, 2, 0, 0);
	assert_true(e->k->desync);
	assert_int_equal(e->sh->daemon_polling, 0);
	e->sh->sq_tail = 9;
	assert_int_equal(tail_now(e), 2);	/* the dispatcher's head */
	/* The RESET behind it: polled again, from tail 0. */
	test_ioctl_ret = 0;
	memset((void *)e->sh, 0, sizeof(*e->sh));	/* the kernel's reset */
	put(e, MDGPU_EV_RESET, 2, 0);
	mdgpud_kern_wake_event(&e->t, 0);
	assert_false(e->k->desync);
	assert_int_equal(e->k->gen, 2);
	assert_int_equal(e->sh->daemon_polling, 1);
	assert_int_equal(tail_now(e), 0);
	e->sh->sq_tail = 3;
	assert_int_equal(tail_now(e), 3);
}

/* Valid forward moves are taken, up to exactly entries past the head,
 * across the 2^32 wrap too. */
static void test_shadow_forward(void **state)
{
	struct env *e = *state;

	mdgpud_kern_arm(e->k, false);
	e->sh->sq_tail = 5;
	assert_int_equal(tail_now(e), 5);
	e->sh->sq_tail = ENTRIES;
	assert_int_equal(tail_now(e), ENTRIES);
	assert_int_equal(e->k->shadow_taken, 2);
	assert_int_equal(e->k->shadow_ignored, 0);

	/* Near the wrap: head and tail at 2^32 - 3. */
	e->k->head = e->k->core_head = e->k->tail = UINT32_MAX - 2;
	e->sh->sq_tail = 10;			/* 13 ahead, wrapped */
	assert_int_equal(tail_now(e), 10);
	e->sh->sq_tail = UINT32_MAX - 2 + ENTRIES;	/* exactly full */
	assert_int_equal(tail_now(e), UINT32_MAX - 2 + ENTRIES);
}

/* Hostile values: ignored, the last good tail kept, counted. */
static void test_shadow_hostile(void **state)
{
	struct env *e = *state;
	static const uint32_t bad[] = {
		ENTRIES + 1 + 5, 4, 0, UINT32_MAX, 0x80000000u, 5 + 2 * ENTRIES,
	};

	mdgpud_kern_arm(e->k, false);
	e->k->head = e->k->core_head = 5;
	e->k->tail = 5;
	e->sh->sq_tail = 20;
	assert_int_equal(tail_now(e), 20);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e->sh->sq_tail = bad[i];
		assert_int_equal(tail_now(e), 20);
	}
	/* Backwards of the tail taken, though ahead of the head. */
	e->sh->sq_tail = 10;
	assert_int_equal(tail_now(e), 20);
	/* Counted: those ahead of the tail by too much (70, 2^31, 133);
	 * those behind it are what a user of BAR0 alone leaves there. */
	assert_int_equal(e->k->shadow_ignored, 3);
	assert_false(e->k->desync);
	assert_int_equal(e->sh->daemon_polling, 1);
	/* A BAR0 doorbell still serves the ring. */
	put(e, MDGPU_EV_DOORBELL, 30, 1);
	assert_int_equal(tail_now(e), 30);
}

/* A DOORBELL event rung before the shadow tail that was taken is no
 * move; one past it is. */
static void test_doorbell_behind_shadow(void **state)
{
	struct env *e = *state;

	mdgpud_kern_arm(e->k, false);
	e->sh->sq_tail = 12;
	assert_int_equal(tail_now(e), 12);
	put(e, MDGPU_EV_DOORBELL, 8, 1);
	assert_int_equal(tail_now(e), 12);
	/* Completed past the old doorbell, which comes only now. */
	mdgpud_kern_publish(e->k, 12, 12, 0, 0);
	put(e, MDGPU_EV_DOORBELL, 9, 1);
	assert_int_equal(tail_now(e), 12);
	put(e, MDGPU_EV_DOORBELL, 14, 1);
	assert_int_equal(tail_now(e), 14);
}

/* As the BAR0 doorbell: no tail taken while the device is disabled or a
 * reset is pending (the mirror's STATUS); the same tail is taken once it
 * is enabled and the reset complete. */
static void test_shadow_needs_enabled(void **state)
{
	struct env *e = *state;

	mdgpud_kern_arm(e->k, false);
	e->m->status = MDGPU_STATUS_READY;
	e->sh->sq_tail = 6;
	assert_int_equal(tail_now(e), 0);
	e->m->status = MDGPU_STATUS_READY | MDGPU_STATUS_ENABLED |
		       MDGPU_STATUS_RESET_PENDING;
	assert_int_equal(tail_now(e), 0);
	assert_int_equal(e->k->shadow_ignored, 0);
	e->m->status = MDGPU_STATUS_READY | MDGPU_STATUS_ENABLED;
	assert_int_equal(tail_now(e), 6);
}

/* publish(): COMPLETE_TAIL with the head, generation and tail served. */
static void test_publish_complete_tail(void **state)
{
	struct env *e = *state;

	mdgpud_kern_arm(e->k, false);
	e->sh->sq_tail = 7;
	assert_int_equal(tail_now(e), 7);
	mdgpud_kern_publish(e->k, 3, 3, MDGPU_IRQ_COMPLETION, 4096);
	assert_int_equal(test_ioctl_calls, 1);
	assert_true(test_ioctl_req == MDGPU_CTL_COMPLETE_TAIL);
	assert_int_equal(test_ioctl_ct.c.vgpu_id, KID);
	assert_int_equal(test_ioctl_ct.c.sq_head, 3);
	assert_int_equal(test_ioctl_ct.c.gen, 1);
	assert_int_equal(test_ioctl_ct.c.irq, MDGPU_IRQ_COMPLETION);
	assert_int_equal(test_ioctl_ct.sq_tail, 7);
	assert_int_equal(test_ioctl_ct.flags, 0);
	assert_int_equal(e->k->head, 3);
	/* Refused as invalid (the user disabled the device meanwhile):
	 * the ring is not served until a reset, polling off. */
	test_ioctl_ret = EINVAL;
	mdgpud_kern_publish(e->k, 7, 7, 0, 0);
	assert_true(e->k->desync);
	assert_int_equal(e->sh->daemon_polling, 0);
	/* Without a shadow (no ABI 1.13 ring): plain COMPLETE. */
	test_ioctl_ret = 0;
	e->k->desync = false;
	e->k->shadow = NULL;
	mdgpud_kern_publish(e->k, 7, 7, 0, 0);
	assert_true(test_ioctl_req == MDGPU_CTL_COMPLETE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_arm_sets_polling, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_not_served, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_shadow_forward, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_shadow_hostile, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_doorbell_behind_shadow,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_shadow_needs_enabled,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_publish_complete_tail,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
