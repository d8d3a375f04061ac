// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The dispatcher's linger (core/dispatch.c) with two vGPUs on fake rings
 * (the kernel transport's shape, tests/fake_transport.h) and the sim
 * backend:
 *
 * - busy: tenant A, after a few set-up commands, keeps one 5 ms kernel
 *   queued and rings again a moment after the daemon takes it (the
 *   pattern of a tenant with a few kernels queued); tenant B always has
 *   work.  While A's kernels should still
 *   keep the GPU busy, A's slice stays open for its next command, so its
 *   slices carry many commands instead of one switch per command.
 * - idle: A's commands take no GPU time; with B waiting, A's slice ends as
 *   soon as its queue is empty (the GPU would idle while we wait).
 * - idle neighbour: A as in "busy" with B present but idle: A's slices
 *   are not extended (only the daemon's only vGPU's are: test_socket's
 *   test_lone_slice_extends), so they stay bounded as in "busy".
 *
 * Timing-robust: linger_us and the slice are far longer than the moment
 * the tenant takes to ring again, and the sim clock, not wall time, gives
 * the GPU time (so A's 5 ms kernels cost no wall time).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <cmocka.h>

#include "uapi/mdgpu.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

#define FAKE_TRANSPORT_OPS_ONLY
#include "fake_transport.h"

#define A_COMMANDS	60	/* kernels */
#define SETUP_COMMANDS	12	/* NOPs before them (ENTRIES - 4) */
#define KERNEL_NS	5000000ULL	/* sim GPU time of A's and B's kernels */

struct tenant {
	struct fake f;
	struct mdgpud_vgpu *v;
	uint8_t *aperture;
	uint64_t spin_ns;	/* SPIN_NS argument of its kernels */
};

struct linger_env {
	struct mdgpud_core *core;
	pthread_t thread;
	struct tenant a, b;
	char path[96];
	int stop_b;
	int b_idle;		/* B submits nothing */
	int halted;
};

static void *run(void *arg)
{
	mdgpud_core_run(((struct linger_env *)arg)->core);
	return NULL;
}

static void tenant_init(struct linger_env *e, struct tenant *t,
			uint64_t spin_ns)
{
	t->spin_ns = spin_ns;
	t->v = fake_attach(e->core, &t->f, &t->aperture);
}

/* B's scheduler priority (MDGPU_PRIORITY_MAX: the latency class). */
static struct linger_env *env_start_prio(uint64_t a_spin_ns,
					 uint32_t b_priority);

static struct linger_env *env_start(uint64_t a_spin_ns)
{
	return env_start_prio(a_spin_ns, MDGPU_PRIORITY_DEFAULT);
}

static struct linger_env *env_start_prio(uint64_t a_spin_ns,
					 uint32_t b_priority)
{
	static int seq;
	struct linger_env *e = calloc(1, sizeof(*e));
	struct mdgpud_config cfg;

	assert_non_null(e);
	mdgpud_log_set(MDGPUD_LOG_ERR, NULL, NULL);
	/* One socket per test: a failed test leaves its core behind. */
	snprintf(e->path, sizeof(e->path), "/tmp/mdgpud-linger-%d-%d.sock",
		 (int)getpid(), seq++);
	mdgpud_config_defaults(&cfg);
	strcpy(cfg.socket_path, e->path);
	cfg.sim_fb_mib = 4096;		/* two 1 GiB vGPUs */
	cfg.timeslice_us = 100000;	/* 100 ms: budget 20 kernels of 5 ms */
	cfg.linger_us = 500000;
	assert_int_equal(mdgpud_core_create(&cfg, &e->core), 0);
	tenant_init(e, &e->a, a_spin_ns);
	tenant_init(e, &e->b, KERNEL_NS);
	assert_int_equal(mdgpud_vgpu_set_knobs(e->b.v, 1, 100, b_priority),
			 0);
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
	return e;
}

/* Stop the dispatcher (its last slice counted), keep the vGPUs. */
static void env_halt(struct linger_env *e)
{
	if (e->halted)
		return;
	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	e->halted = 1;
}

static void env_stop(struct linger_env *e)
{
	env_halt(e);
	mdgpud_core_destroy(e->core);
	close(e->a.f.efd);
	close(e->b.f.efd);
	free(e->a.aperture);
	free(e->b.aperture);
	free(e);
}

/* Queue one command and ring (eventfd only if the daemon sleeps). */
static void submit_cmd(struct tenant *t, const struct mdgpu_cmd *c)
{
	fake_submit(&t->f, c);
}

/* Queue one SPIN_NS kernel of the tenant's length. */
static void submit(struct tenant *t)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_BUILTIN;
	c.builtin.kernel = MDGPU_BUILTIN_SPIN_NS;
	c.builtin.arg[0] = t->spin_ns;
	submit_cmd(t, &c);
}

static uint32_t head_of(struct tenant *t)
{
	return __atomic_load_n(&t->f.head, __ATOMIC_ACQUIRE);
}

/* B: always two commands queued, until told to stop. */
static void *tenant_b(void *arg)
{
	struct linger_env *e = arg;

	while (!__atomic_load_n(&e->stop_b, __ATOMIC_ACQUIRE)) {
		while (!e->b_idle && e->b.f.tail - head_of(&e->b) < 2)
			submit(&e->b);
		usleep(20);
	}
	return NULL;
}

static void stats_of(struct linger_env *e, struct tenant *t,
		     struct mdgpud_vgpu_stats *out)
{
	struct mdgpud_vgpu_stats s[4];
	size_t n = mdgpud_core_stats(e->core, s, 4);

	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++)
		if (s[i].vgpu_id == mdgpud_vgpu_id(t->v)) {
			*out = s[i];
			return;
		}
	fail_msg("vgpu not in the stats");
}

/*
 * A: one command at a time; the next is queued refill_us after the daemon
 * took the previous one (and completed it: sim runs it at once).
 */
static void run_a(struct linger_env *e, unsigned int refill_us,
		  struct mdgpud_vgpu_stats *a, struct mdgpud_vgpu_stats *b)
{
	struct mdgpu_cmd nop;
	pthread_t tb;

	/*
	 * Set-up first, as a real tenant does (allocations, module loads):
	 * commands without GPU work, in A's first slice with its first
	 * kernel.  Counted as work, they would make A's GPU time per command
	 * ~1/(SETUP + 1) of a kernel's and its next slices overrun.
	 */
	memset(&nop, 0, sizeof(nop));
	nop.opcode = MDGPU_OP_NOP;
	for (int i = 0; i < SETUP_COMMANDS; i++)
		submit_cmd(&e->a, &nop);
	submit(&e->a);
	assert_int_equal(pthread_create(&tb, NULL, tenant_b, e), 0);
	for (int i = 1; i < A_COMMANDS; i++) {
		for (int k = 0; head_of(&e->a) != e->a.f.tail; k++) {
			assert_true(k < 1000000);	/* 20 s */
			usleep(20);
		}
		usleep(refill_us);
		submit(&e->a);
	}
	for (int k = 0; head_of(&e->a) != e->a.f.tail; k++) {
		assert_true(k < 1000000);
		usleep(20);
	}
	__atomic_store_n(&e->stop_b, 1, __ATOMIC_RELEASE);
	pthread_join(tb, NULL);
	/* A slice is counted after its commands complete: let it end. */
	env_halt(e);
	stats_of(e, &e->a, a);
	stats_of(e, &e->b, b);
	assert_int_equal(a->commands, SETUP_COMMANDS + A_COMMANDS);
	assert_int_equal(a->errors, 0);
	if (e->b_idle)
		assert_int_equal(b->commands, 0);
	else
		assert_true(b->commands > 0);
}

static void print_stats(const char *what, const struct mdgpud_vgpu_stats *a,
			const struct mdgpud_vgpu_stats *b)
{
	print_message("%s: A %llu commands in %llu slices, B %llu in %llu\n",
		      what, (unsigned long long)a->commands,
		      (unsigned long long)a->slices,
		      (unsigned long long)b->commands,
		      (unsigned long long)b->slices);
}

static void test_linger_while_gpu_busy(void **state)
{
	struct linger_env *e = env_start(KERNEL_NS);
	struct mdgpud_vgpu_stats a, b;

	(void)state;
	/* A quick tenant: it rings again well within the GPU time of one
	 * kernel, even as a wrong estimate of it (below) would have it. */
	run_a(e, 20, &a, &b);
	print_stats("busy", &a, &b);
	/*
	 * One probe slice (set-up and the first kernel; its GPU time per
	 * kernel unknown, so it ends at once), then up to 20 kernels
	 * (100 ms / 5 ms) a slice.  Ending on every empty queue would give
	 * 60 slices; counting the set-up NOPs as work would allow 260
	 * kernels a slice (5 ms / 13 commands) and run the other 59 in one.
	 */
	assert_true(a.slices * 4 <= A_COMMANDS);
	assert_true(a.slices >= 1 + (A_COMMANDS - 1 + 19) / 20);
	env_stop(e);
}

static void test_no_linger_when_gpu_idle(void **state)
{
	struct linger_env *e = env_start(0);
	struct mdgpud_vgpu_stats a, b;

	(void)state;
	run_a(e, 200, &a, &b);
	print_stats("idle", &a, &b);
	/*
	 * B always waits and A's work is done at once: a slice per command,
	 * although the tenant rings again 200 us later, well within
	 * linger_us.  (A dispatcher preempted for 200 us between a command
	 * and its linger may see the next one: allow a few.)
	 */
	assert_true(a.slices * 10 >= A_COMMANDS * 8);
	env_stop(e);
}

static void test_idle_neighbour_bounds_slice(void **state)
{
	struct linger_env *e = env_start(KERNEL_NS);
	struct mdgpud_vgpu_stats a, b;

	(void)state;
	e->b_idle = 1;
	run_a(e, 20, &a, &b);
	print_stats("idle neighbour", &a, &b);
	/*
	 * As in the busy case: the slice of a vGPU that is not the daemon's
	 * only one is not extended (a neighbour that rang during an extended
	 * slice would wait for all the work it queued).
	 */
	assert_true(a.slices >= 1 + (A_COMMANDS - 1 + 19) / 20);
	env_stop(e);
}

/* Waits until t's head reaches n (20 s at most). */
static void wait_head(struct tenant *t, uint32_t n)
{
	for (int k = 0; head_of(t) != n; k++) {
		assert_true(k < 1000000);
		usleep(20);
	}
}

/*
 * The latency class (core/dispatch.c, Documentation/scheduler.md): with
 * B at the highest priority and active (it had work within 100 ms), A's
 * slice is paced to latency_queue_us of estimated GPU work queued (A's
 * 5 ms kernels: one every ~4.5 ms of wall time here, the sim backend
 * running them at once) and ends as soon as B rings; B's command then
 * runs with most of A's queue still waiting.  A's ring holds
 * ENTRIES - 1 kernels, its budget 20: unpaced, all of them would run
 * before B.
 */
static void test_latency_class_cuts_slice(void **state)
{
	struct linger_env *e = env_start_prio(KERNEL_NS, MDGPU_PRIORITY_MAX);
	struct mdgpu_cmd nop;
	uint32_t a_done, queued = ENTRIES - 1;

	(void)state;
	memset(&nop, 0, sizeof(nop));
	nop.opcode = MDGPU_OP_NOP;
	/* A's first kernel teaches the dispatcher its GPU time per kernel;
	 * B's NOP makes the latency class active. */
	submit(&e->a);
	wait_head(&e->a, 1);
	submit_cmd(&e->b, &nop);
	wait_head(&e->b, 1);
	for (uint32_t i = 0; i < queued; i++)
		submit(&e->a);
	usleep(10000);
	submit_cmd(&e->b, &nop);
	wait_head(&e->b, 2);
	a_done = head_of(&e->a) - 1;
	print_message("latency class: B's command ran after %u of A's %u "
		      "queued kernels\n", a_done, queued);
	assert_true(a_done < queued - 4);
	wait_head(&e->a, 1 + queued);
	env_stop(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linger_while_gpu_busy),
		cmocka_unit_test(test_no_linger_when_gpu_idle),
		cmocka_unit_test(test_latency_class_cuts_slice),
		cmocka_unit_test(test_idle_neighbour_bounds_slice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
