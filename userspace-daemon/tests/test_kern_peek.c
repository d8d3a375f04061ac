// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The kernel transport's doorbells in the middle of a slice
 * (transports/kernel.c, mdgpud_kern_peek()), without mdgpu.ko: the
 * transport's control fd is a pipe this test writes events into, as the
 * module queues them on /dev/mdgpu.  sq_tail() takes doorbells of the
 * generation being served at once; any other event, and every event
 * after it, is held for the between-slices handler, which handles them in
 * the order they came and is woken through the transport's eventfd; a
 * doorbell of another vGPU than the one polled, taken, wakes it too.
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

/* The transport's static functions are what is tested. */
#include "../transports/kernel.c"

#define PARENT	7
#define KID	3

struct env {
	struct mdgpud_transport t;
	struct mdgpud_kvgpu *k;
	int wr;				/* the "kernel's" end of the pipe */
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
	e->k = calloc(1, sizeof(*e->k));
	assert_non_null(e->k);
	e->k->t = &e->t;
	e->k->kid = KID;
	e->k->gen = 1;
	e->k->entries = 64;
	e->k->open = true;
	strcpy(e->k->uuid_str, "test");
	e->t.vgpus = e->k;
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
	free(e);
	return 0;
}

/* An event of the kernel's vGPU kid. */
static void put_to(struct env *e, uint32_t kid, uint32_t type,
		   uint32_t parent, uint32_t a, uint32_t b)
{
	struct mdgpu_ctl_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.parent_id = parent;
	ev.vgpu_id = kid;
	if (type == MDGPU_EV_DOORBELL) {
		ev.doorbell.sq_tail = a;
		ev.doorbell.gen = b;
	} else if (type == MDGPU_EV_RESET || type == MDGPU_EV_OPEN) {
		ev.gen.gen = a;
	} else if (type == MDGPU_EV_KNOB) {
		ev.knob.weight = a;
		ev.knob.cap = 100;
		ev.knob.priority = b;
	}
	assert_int_equal(write(e->wr, &ev, sizeof(ev)), (ssize_t)sizeof(ev));
}

static void put(struct env *e, uint32_t type, uint32_t parent,
		uint32_t a, uint32_t b)
{
	put_to(e, KID, type, parent, a, b);
}

/* sq_tail() as the dispatcher calls it, past the peek's interval. */
static uint32_t tail_now(struct env *e)
{
	e->t.peek_ns = 0;
	return mdgpud_kern_sq_tail(e->k);
}

static uint64_t woken(struct env *e)
{
	uint64_t n = 0;

	if (read(e->t.wake_efd, &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

/* Doorbells of the served generation: taken by the peek, in order, the
 * loop not woken. */
static void test_doorbells_taken(void **state)
{
	struct env *e = *state;

	put(e, MDGPU_EV_DOORBELL, PARENT, 5, 1);
	assert_int_equal(tail_now(e), 5);
	put(e, MDGPU_EV_DOORBELL, PARENT, 6, 1);
	put(e, MDGPU_EV_DOORBELL, PARENT, 9, 1);
	assert_int_equal(tail_now(e), 9);
	assert_int_equal(e->t.held_n, 0);
	assert_int_equal(woken(e), 0);
	/* Within the interval the fd is not read again. */
	put(e, MDGPU_EV_DOORBELL, PARENT, 11, 1);
	e->t.peek_ns = mdgpud_kern_now_ns();
	assert_int_equal(mdgpud_kern_sq_tail(e->k), 9);
	assert_int_equal(tail_now(e), 11);
}

/* Another event holds itself and what follows it, doorbells included,
 * until the handler runs; the handler handles them in order. */
static void test_other_event_held(void **state)
{
	struct env *e = *state;

	put(e, MDGPU_EV_DOORBELL, PARENT, 2, 1);
	put(e, MDGPU_EV_KNOB, PARENT, 3, 4);
	put(e, MDGPU_EV_DOORBELL, PARENT, 4, 1);
	assert_int_equal(tail_now(e), 2);
	assert_int_equal(e->t.held_n, 2);
	assert_int_equal(woken(e), 1);
	/* Held: the fd is not read, not even for a doorbell. */
	put(e, MDGPU_EV_DOORBELL, PARENT, 7, 1);
	assert_int_equal(tail_now(e), 2);
	mdgpud_kern_wake_event(&e->t, 0);
	assert_int_equal(e->t.held_n, 0);
	assert_int_equal(e->t.held_next, 0);
	assert_int_equal(mdgpud_kern_sq_tail(e->k), 7);
}

/* A reset between two doorbells: the doorbell of the new generation is
 * never served before the reset is handled, then it is. */
static void test_reset_orders_doorbells(void **state)
{
	struct env *e = *state;

	put(e, MDGPU_EV_DOORBELL, PARENT, 30, 1);
	put(e, MDGPU_EV_RESET, PARENT, 2, 0);
	put(e, MDGPU_EV_DOORBELL, PARENT, 3, 2);
	assert_int_equal(tail_now(e), 30);
	assert_int_equal(e->k->gen, 1);
	assert_int_equal(e->t.held_n, 2);
	mdgpud_kern_wake_event(&e->t, 0);
	assert_int_equal(e->k->gen, 2);
	assert_int_equal(tail_now(e), 3);
}

/* A doorbell of another generation, or of another parent, is never
 * taken by the peek: the handler decides (and ignores both). */
static void test_foreign_not_taken(void **state)
{
	struct env *e = *state;

	put(e, MDGPU_EV_DOORBELL, PARENT, 8, 5);
	assert_int_equal(tail_now(e), 0);
	assert_int_equal(e->t.held_n, 1);
	mdgpud_kern_wake_event(&e->t, 0);
	assert_int_equal(tail_now(e), 0);
	put(e, MDGPU_EV_DOORBELL, PARENT + 1, 8, 1);
	assert_int_equal(tail_now(e), 0);
	assert_int_equal(e->t.held_n, 1);
	mdgpud_kern_wake_event(&e->t, 0);
	assert_int_equal(tail_now(e), 0);
}

/*
 * A doorbell of another vGPU, taken while this one's tail is read: its
 * tail moves, and the loop is woken, since the dispatcher's last scan
 * before it sleeps may have read that tail already (the doorbell is no
 * longer on the fd to wake it).  The polled vGPU's own doorbell does not
 * wake it: the caller reads that tail after the peek.
 */
static void test_other_vgpu_wakes(void **state)
{
	struct env *e = *state;
	struct mdgpud_kvgpu *o = calloc(1, sizeof(*o));

	assert_non_null(o);
	*o = *e->k;
	o->kid = KID + 1;
	e->k->next = o;
	put_to(e, KID + 1, MDGPU_EV_DOORBELL, PARENT, 4, 1);
	assert_int_equal(tail_now(e), 0);
	assert_int_equal(o->tail, 4);
	assert_int_equal(e->t.held_n, 0);
	assert_int_equal(woken(e), 1);
	put(e, MDGPU_EV_DOORBELL, PARENT, 6, 1);
	assert_int_equal(tail_now(e), 6);
	assert_int_equal(woken(e), 0);
	/* Seen from the other vGPU: the first one's doorbell wakes. */
	put(e, MDGPU_EV_DOORBELL, PARENT, 8, 1);
	o->t->peek_ns = 0;
	assert_int_equal(mdgpud_kern_sq_tail(o), 4);
	assert_int_equal(e->k->tail, 8);
	assert_int_equal(woken(e), 1);
	e->k->next = NULL;
	free(o);
}

/* No peek while the handler drains (its own events come first) nor
 * while the kernel's replay is read. */
static void test_no_peek_while_draining(void **state)
{
	struct env *e = *state;

	put(e, MDGPU_EV_DOORBELL, PARENT, 12, 1);
	e->t.draining = true;
	assert_int_equal(tail_now(e), 0);
	e->t.draining = false;
	e->t.replaying = true;
	assert_int_equal(tail_now(e), 0);
	e->t.replaying = false;
	assert_int_equal(tail_now(e), 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_doorbells_taken, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_other_event_held, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reset_orders_doorbells,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_not_taken, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_other_vgpu_wakes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_peek_while_draining,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
