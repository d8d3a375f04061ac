// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests of the scheduler policy (userspace-daemon/sched/) against a simulated
 * GPU: a simulated clock, tenants with queues of kernels of given
 * durations, and the dispatcher loop of the daemon reduced to its
 * essentials (pick, run whole kernels until the slice is used, the last
 * one possibly overrunning, charge, advance the clock).  Every test prints
 * the numbers it asserts on; Documentation/scheduler.md quotes them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "uapi/mdgpu.h"
#include "mdgpud/sched.h"

#define MS		1000000ULL
#define US		1000ULL
#define SEC		1000000000ULL
#define SLICE_NS	(MDGPU_TIMESLICE_US_DEFAULT * US)
#define WINDOW_NS	MDGPUD_SCHED_CAP_WINDOW_NS_DEFAULT
/* Measured on the H100: switching tenants costs ~130 us
 * (Documentation/scheduler.md). */
#define SWITCH_NS	(130 * US)

#define SIM_MAX_TENANTS	4
#define SIM_MAX_ON	4
#define SIM_BIN_NS	MS		/* usage histogram resolution */
#define SIM_MAX_NS	(20 * SEC)
#define SIM_BINS	(SIM_MAX_NS / SIM_BIN_NS)
#define SIM_QUEUE	1024
#define SIM_LAT_MAX	4096

/*
 * A tenant.  Saturating tenants always have a kernel queued while inside
 * one of their `on` intervals; periodic tenants (period_ns != 0) submit
 * one kernel per period on average, at pseudo-random times, and record how
 * long each waited from submission to the start of its execution.
 */
struct sim_tenant {
	struct mdgpud_sched_entity e;
	const char *name;
	uint64_t kernel_ns;
	uint64_t on_from_ns[SIM_MAX_ON];
	uint64_t on_until_ns[SIM_MAX_ON];
	/*
	 * A program that synchronizes (refill_kernels != 0): it keeps
	 * refill_kernels queued; when they have all run, its queue is empty
	 * until refill_ns later (its client answering the completion), then
	 * holds refill_kernels again.  left: kernels still queued.
	 */
	uint32_t refill_kernels, left;
	uint64_t refill_ns, refill_at_ns;
	unsigned int nr_on;
	uint64_t period_ns;
	uint64_t next_arrival_ns;
	uint64_t queue[SIM_QUEUE];	/* arrival times, FIFO */
	unsigned int q_head, q_tail;
	/* Statistics. */
	uint64_t *bins;			/* GPU ns per SIM_BIN_NS of wall */
	uint64_t lat_ns[SIM_LAT_MAX];
	unsigned int nr_lat;
	uint64_t max_streak_ns;		/* longest back-to-back run */
	uint64_t ready_since_ns;	/* waiting since, if runnable */
	uint64_t max_wait_ns;		/* longest wait while runnable */
};

struct sim {
	struct mdgpud_sched *s;
	struct sim_tenant *t[SIM_MAX_TENANTS];
	unsigned int n;
	uint64_t now_ns;
	uint64_t switch_ns;
	uint64_t stats_from_ns;		/* streaks and waits count after */
	struct sim_tenant *last;
	uint64_t streak_start_ns;
	uint32_t rng;
};

static uint32_t sim_rand(struct sim *sim)
{
	/* Numerical Recipes LCG: deterministic runs. */
	sim->rng = sim->rng * 1664525u + 1013904223u;
	return sim->rng >> 8;
}

static void sim_init(struct sim *sim, uint32_t policy)
{
	struct mdgpud_sched_cfg cfg;

	memset(sim, 0, sizeof(*sim));
	mdgpud_sched_cfg_default(&cfg);
	cfg.policy = policy;
	assert_int_equal(mdgpud_sched_create(&cfg, &sim->s), 0);
	sim->switch_ns = SWITCH_NS;
	sim->rng = 12345;
}

/* A tenant at the default priority (test_priority varies priorities). */
static struct sim_tenant *sim_add(struct sim *sim, const char *name,
				  uint32_t weight, uint32_t cap_pct,
				  uint64_t kernel_ns)
{
	struct sim_tenant *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	assert_true(sim->n < SIM_MAX_TENANTS);
	t->bins = calloc(SIM_BINS, sizeof(*t->bins));
	assert_non_null(t->bins);
	t->name = name;
	t->kernel_ns = kernel_ns;
	t->e.id = sim->n + 1;
	t->e.weight = weight;
	t->e.cap_pct = cap_pct;
	t->e.priority = MDGPU_PRIORITY_DEFAULT;
	assert_int_equal(mdgpud_sched_add(sim->s, &t->e, sim->now_ns), 0);
	sim->t[sim->n++] = t;
	return t;
}

/* Saturating from from_ns until until_ns (UINT64_MAX: forever). */
static void sim_on(struct sim_tenant *t, uint64_t from_ns, uint64_t until_ns)
{
	assert_true(t->nr_on < SIM_MAX_ON);
	t->on_from_ns[t->nr_on] = from_ns;
	t->on_until_ns[t->nr_on] = until_ns;
	t->nr_on++;
}

/* A tenant as sim_pair() adds it. */
struct sim_spec {
	const char *name;
	uint32_t weight;
	uint32_t cap_pct;
	uint64_t kernel_ns;
};

/*
 * The set-up most simulations share: the scheduler under policy and two
 * tenants, *a then *b (add() order), both saturating from 0 on.
 */
static void sim_pair(struct sim *sim, uint32_t policy, struct sim_tenant **a,
		     struct sim_tenant **b, struct sim_spec sa,
		     struct sim_spec sb)
{
	sim_init(sim, policy);
	*a = sim_add(sim, sa.name, sa.weight, sa.cap_pct, sa.kernel_ns);
	*b = sim_add(sim, sb.name, sb.weight, sb.cap_pct, sb.kernel_ns);
	sim_on(*a, 0, UINT64_MAX);
	sim_on(*b, 0, UINT64_MAX);
}

static void sim_periodic(struct sim *sim, struct sim_tenant *t,
			 uint64_t period_ns)
{
	t->period_ns = period_ns;
	t->next_arrival_ns = sim->now_ns + sim_rand(sim) % period_ns;
}

/* cmocka fixtures: the teardown frees the simulation even after a failure. */
static int sim_setup(void **state)
{
	*state = calloc(1, sizeof(struct sim));
	return *state ? 0 : -1;
}

static int sim_teardown(void **state)
{
	struct sim *sim = *state;

	for (unsigned int i = 0; i < sim->n; i++)
		mdgpud_sched_remove(sim->s, &sim->t[i]->e);
	mdgpud_sched_destroy(sim->s);
	for (unsigned int i = 0; i < sim->n; i++) {
		free(sim->t[i]->bins);
		free(sim->t[i]);
	}
	free(sim);
	return 0;
}

static struct sim_tenant *sim_of(struct mdgpud_sched_entity *e)
{
	return (struct sim_tenant *)((char *)e -
				     offsetof(struct sim_tenant, e));
}

/* Deliver the periodic tenant's submissions up to now. */
static void sim_arrivals(struct sim *sim, struct sim_tenant *t,
			 uint64_t now_ns)
{
	if (t->refill_kernels && !t->left && now_ns >= t->refill_at_ns)
		t->left = t->refill_kernels;
	if (!t->period_ns)
		return;
	while (t->next_arrival_ns <= now_ns) {
		assert_true(t->q_tail - t->q_head < SIM_QUEUE);
		t->queue[t->q_tail++ % SIM_QUEUE] = t->next_arrival_ns;
		t->next_arrival_ns += t->period_ns / 2 +
				      sim_rand(sim) % t->period_ns;
	}
}

static bool sim_has_work(const struct sim_tenant *t, uint64_t now_ns)
{
	if (t->period_ns)
		return t->q_head != t->q_tail;
	if (t->refill_kernels && !t->left && now_ns < t->refill_at_ns)
		return false;
	for (unsigned int i = 0; i < t->nr_on; i++)
		if (now_ns >= t->on_from_ns[i] && now_ns < t->on_until_ns[i])
			return true;
	return false;
}

/* The next time after now at which t's work may appear or vanish. */
static uint64_t sim_next_event(const struct sim_tenant *t, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;

	if (t->period_ns)
		return t->next_arrival_ns;
	if (t->refill_kernels && !t->left && t->refill_at_ns > now_ns)
		next = t->refill_at_ns;
	for (unsigned int i = 0; i < t->nr_on; i++) {
		if (t->on_from_ns[i] > now_ns && t->on_from_ns[i] < next)
			next = t->on_from_ns[i];
		if (t->on_until_ns[i] > now_ns && t->on_until_ns[i] < next)
			next = t->on_until_ns[i];
	}
	return next;
}

static void sim_sync(struct sim *sim)
{
	for (unsigned int i = 0; i < sim->n; i++) {
		struct sim_tenant *t = sim->t[i];
		bool work;

		sim_arrivals(sim, t, sim->now_ns);
		work = sim_has_work(t, sim->now_ns);
		if (work != t->e.runnable) {
			mdgpud_sched_set_runnable(sim->s, &t->e, work,
						  sim->now_ns);
			t->ready_since_ns = sim->now_ns;
		}
	}
}

static void sim_account(struct sim_tenant *t, uint64_t start_ns, uint64_t ns)
{
	uint64_t end = start_ns + ns;

	for (uint64_t at = start_ns; at < end;) {
		uint64_t bin = at / SIM_BIN_NS;
		uint64_t bin_end = (bin + 1) * SIM_BIN_NS;
		uint64_t part = (end < bin_end ? end : bin_end) - at;

		assert_true(bin < SIM_BINS);
		t->bins[bin] += part;
		at += part;
	}
}

/*
 * Doorbells while t's slice runs: as the daemon's event loop would, tell
 * the scheduler at the time work arrived, before t's slice is charged.
 */
static void sim_wake_during(struct sim *sim, const struct sim_tenant *t,
			    uint64_t start_ns, uint64_t end_ns)
{
	for (unsigned int i = 0; i < sim->n; i++) {
		struct sim_tenant *o = sim->t[i];
		uint64_t at = UINT64_MAX;

		if (o == t || o->e.runnable)
			continue;
		sim_arrivals(sim, o, end_ns);
		if (!sim_has_work(o, end_ns))
			continue;
		if (o->period_ns) {
			at = o->queue[o->q_head % SIM_QUEUE];
		} else {
			for (unsigned int k = 0; k < o->nr_on; k++)
				if (o->on_from_ns[k] > start_ns &&
				    o->on_from_ns[k] <= end_ns &&
				    o->on_from_ns[k] < at)
					at = o->on_from_ns[k];
			if (o->refill_kernels && o->refill_at_ns > start_ns &&
			    o->refill_at_ns <= end_ns && o->refill_at_ns < at)
				at = o->refill_at_ns;
		}
		if (at == UINT64_MAX)
			continue;
		mdgpud_sched_set_runnable(sim->s, &o->e, true, at);
		o->ready_since_ns = at;
	}
}

/* Run one slice of t, starting at sim->now_ns. */
static void sim_run_slice(struct sim *sim, struct sim_tenant *t,
			  uint64_t slice_ns)
{
	uint64_t start = sim->now_ns;
	uint64_t used = 0;

	if (start >= sim->stats_from_ns) {
		uint64_t wait = start - t->ready_since_ns;

		if (t->ready_since_ns >= sim->stats_from_ns &&
		    wait > t->max_wait_ns)
			t->max_wait_ns = wait;
	}
	/* Whole kernels until the slice is used: the last may overrun. */
	while (used < slice_ns) {
		sim_arrivals(sim, t, start + used);
		if (!sim_has_work(t, start + used))
			break;
		if (t->period_ns) {
			uint64_t wait = start + used -
					t->queue[t->q_head++ % SIM_QUEUE];

			if (start >= sim->stats_from_ns &&
			    t->nr_lat < SIM_LAT_MAX)
				t->lat_ns[t->nr_lat++] = wait;
		}
		used += t->kernel_ns;
		if (t->refill_kernels && !--t->left)
			t->refill_at_ns = start + used + t->refill_ns;
	}
	assert_true(used > 0);	/* the scheduler picked a tenant with work */
	sim_wake_during(sim, t, start, start + used);
	sim_account(t, start, used);
	mdgpud_sched_charge(sim->s, &t->e, start, used);
	sim->now_ns = start + used;
	t->ready_since_ns = sim->now_ns;

	if (sim->last != t)
		sim->streak_start_ns = start;
	if (start >= sim->stats_from_ns &&
	    sim->now_ns - sim->streak_start_ns > t->max_streak_ns)
		t->max_streak_ns = sim->now_ns - sim->streak_start_ns;
	sim->last = t;
}

static void sim_run(struct sim *sim, uint64_t until_ns)
{
	struct mdgpud_sched_decision d;

	assert_true(until_ns <= SIM_MAX_NS);
	while (sim->now_ns < until_ns) {
		sim_sync(sim);
		mdgpud_sched_pick(sim->s, sim->now_ns, &d);
		if (!d.entity) {
			uint64_t next = d.idle_until_ns;

			for (unsigned int i = 0; i < sim->n; i++) {
				uint64_t ev = sim_next_event(sim->t[i],
							     sim->now_ns);
				if (ev < next)
					next = ev;
			}
			if (next > until_ns)
				next = until_ns;
			if (next <= sim->now_ns)
				next = sim->now_ns + 1;
			sim->now_ns = next;
			sim->last = NULL;
			continue;
		}
		assert_true(d.slice_ns > 0);
		if (sim->last != sim_of(d.entity)) {
			sim->now_ns += sim->switch_ns;
			sim->last = NULL;
		}
		sim_run_slice(sim, sim_of(d.entity), d.slice_ns);
	}
	sim_sync(sim);
}

/* GPU ns t used in wall interval [from, until) (bin resolution). */
static uint64_t sim_used(const struct sim_tenant *t, uint64_t from_ns,
			 uint64_t until_ns)
{
	uint64_t sum = 0;

	for (uint64_t b = from_ns / SIM_BIN_NS; b < until_ns / SIM_BIN_NS; b++)
		sum += t->bins[b];
	return sum;
}

/* t's share of all GPU time used in [from, until), in percent. */
static double sim_share_pct(const struct sim *sim, const struct sim_tenant *t,
			    uint64_t from_ns, uint64_t until_ns)
{
	uint64_t all = 0;

	for (unsigned int i = 0; i < sim->n; i++)
		all += sim_used(sim->t[i], from_ns, until_ns);
	return all ? 100.0 * (double)sim_used(t, from_ns, until_ns) /
		     (double)all : 0.0;
}

/* t's GPU time as a percentage of wall time in [from, until). */
static double sim_wall_pct(const struct sim_tenant *t, uint64_t from_ns,
			   uint64_t until_ns)
{
	return 100.0 * (double)sim_used(t, from_ns, until_ns) /
	       (double)(until_ns - from_ns);
}

/* Largest use of t in any window_ns long window inside [from, until). */
static uint64_t sim_max_window(const struct sim_tenant *t, uint64_t from_ns,
			       uint64_t until_ns, uint64_t window_ns)
{
	uint64_t best = 0;

	for (uint64_t a = from_ns; a + window_ns <= until_ns; a += SIM_BIN_NS) {
		uint64_t u = sim_used(t, a, a + window_ns);

		if (u > best)
			best = u;
	}
	return best;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t percentile(uint64_t *v, unsigned int n, unsigned int pct)
{
	unsigned int i;

	assert_true(n > 0);
	qsort(v, n, sizeof(*v), cmp_u64);
	i = (unsigned int)(((uint64_t)n * pct + 99) / 100);
	return v[i ? i - 1 : 0];
}

static void assert_near(double got, double want, double tol,
			const char *what)
{
	printf("    %-34s %7.3f%% (want %7.3f%% +-%.3f)\n", what, got, want,
	       tol);
	assert_true(got >= want - tol && got <= want + tol);
}

static void assert_range(double got, double lo, double hi, const char *what)
{
	printf("    %-34s %7.3f%% (want %.1f..%.1f%%)\n", what, got, lo, hi);
	assert_true(got >= lo && got <= hi);
}

/* ------------------------------------------------------------------ */

/*
 * Weights 1:2:4 converge to 1/7, 2/7, 4/7 within +-2% over 10 s, read
 * strictly: 2% of the expected share (14.286 +- 0.286), not 2 points.
 */
static void test_weights_converge(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *t[3];
	const uint32_t w[3] = { 1, 2, 4 };
	/* Kernel sizes differ on purpose: shares follow time, not count. */
	const uint64_t k[3] = { 1 * MS, 3 * MS, 700 * US };

	sim_init(sim, MDGPU_POLICY_BEST_EFFORT);
	for (int i = 0; i < 3; i++) {
		t[i] = sim_add(sim, "w", w[i], 100, k[i]);
		sim_on(t[i], 0, UINT64_MAX);
	}
	sim_run(sim, 10 * SEC);
	for (int i = 0; i < 3; i++) {
		char what[64];
		double want = 100.0 * w[i] / 7, worst = 0;

		snprintf(what, sizeof(what), "weight %u share", w[i]);
		assert_near(sim_share_pct(sim, t[i], 0, 10 * SEC), want,
			    0.02 * want, what);
		/*
		 * Converged, not just averaged: a tenant's lag behind or
		 * ahead of its ideal share is bounded at any moment by about
		 * one slice plus the longest kernel (13 ms), so its share of
		 * any second is off by at most twice that: 2.6 points.
		 */
		for (uint64_t a = 0; a < 10 * SEC; a += SEC) {
			double got = sim_share_pct(sim, t[i], a, a + SEC);

			if (got - want > worst || want - got > worst)
				worst = got > want ? got - want : want - got;
		}
		printf("    weight %u: worst 1 s window off by %.3f points (bound 2.6)\n",
		       w[i], worst);
		assert_true(worst <= 200.0 * (double)(SLICE_NS + k[1]) / SEC);
	}
}

/* Equal-share ignores weights: 1:2:4 gets 1/3 each (+-2% of 1/3). */
static void test_equal_share(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *t[3];
	const uint32_t w[3] = { 1, 2, 4 };

	sim_init(sim, MDGPU_POLICY_EQUAL_SHARE);
	for (int i = 0; i < 3; i++) {
		t[i] = sim_add(sim, "w", w[i], 100, 2 * MS);
		sim_on(t[i], 0, UINT64_MAX);
	}
	sim_run(sim, 10 * SEC);
	for (int i = 0; i < 3; i++) {
		char what[64];

		snprintf(what, sizeof(what), "weight %u share", w[i]);
		assert_near(sim_share_pct(sim, t[i], 0, 10 * SEC),
			    100.0 / 3, 0.02 * 100.0 / 3, what);
	}
}

/*
 * A cap holds (<= cap + 1% of wall time, and over every 100 ms window at
 * most cap + one kernel) while best-effort gives the rest to the others.
 */
static void test_cap_best_effort(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b, *c;
	uint64_t worst;
	double busy;

	sim_pair(sim, MDGPU_POLICY_BEST_EFFORT, &a, &b,
		 (struct sim_spec){ "capped", 4, 20, 1 * MS },
		 (struct sim_spec){ "b", 1, 100, 1 * MS });
	c = sim_add(sim, "c", 1, 100, 2 * MS);
	sim_on(c, 0, UINT64_MAX);
	sim_run(sim, 10 * SEC);

	assert_true(sim_wall_pct(a, 0, 10 * SEC) <= 21.0);
	assert_near(sim_wall_pct(a, 0, 10 * SEC), 20.0, 1.0,
		    "capped (cap 20%, weight 4) wall");
	worst = sim_max_window(a, 0, 10 * SEC, WINDOW_NS);
	printf("    worst 100 ms window of capped      %7.3f ms\n",
	       (double)worst / MS);
	assert_true(worst <= WINDOW_NS * 20 / 100 + 1 * MS);
	busy = sim_wall_pct(a, 0, 10 * SEC) + sim_wall_pct(b, 0, 10 * SEC) +
	       sim_wall_pct(c, 0, 10 * SEC);
	/* Work-conserving: only the switch cost is lost. */
	printf("    GPU busy                           %7.3f%%\n", busy);
	assert_true(busy >= 97.0);
	assert_near(sim_share_pct(sim, b, 0, 10 * SEC),
		    sim_share_pct(sim, c, 0, 10 * SEC), 2.0,
		    "b share (== c share)");
}

/* A capped tenant whose kernels overrun every slice still stays capped. */
static void test_cap_overrun(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b;
	uint64_t worst;

	sim_pair(sim, MDGPU_POLICY_BEST_EFFORT, &a, &b,
		 (struct sim_spec){ "capped", 1, 20, 30 * MS },
		 (struct sim_spec){ "b", 1, 100, 1 * MS });
	sim_run(sim, 10 * SEC);
	assert_true(sim_wall_pct(a, 0, 10 * SEC) <= 21.0);
	assert_near(sim_wall_pct(a, 0, 10 * SEC), 20.0, 1.0,
		    "capped, 30 ms kernels, wall");
	/* A window can exceed the budget only by what one kernel overran. */
	worst = sim_max_window(a, 0, 10 * SEC, WINDOW_NS);
	printf("    worst 100 ms window of capped      %7.3f ms (budget 20 ms + one 30 ms kernel)\n",
	       (double)worst / MS);
	assert_true(worst <= WINDOW_NS * 20 / 100 + 30 * MS);
}

/*
 * Fixed-share: C (weight 2 of 4) idles for 5 s; its half of the GPU stays
 * idle and A and B (1/4 each) do not exceed their reservations.  Once C
 * has work it gets its half.
 */
static void test_fixed_share(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b, *c;

	sim_pair(sim, MDGPU_POLICY_FIXED_SHARE, &a, &b,
		 (struct sim_spec){ "a", 1, 100, 1 * MS },
		 (struct sim_spec){ "b", 1, 100, 3 * MS });
	c = sim_add(sim, "c", 2, 100, 1 * MS);
	sim_on(c, 5 * SEC, UINT64_MAX);
	sim_run(sim, 10 * SEC);

	assert_true(sim_wall_pct(a, 0, 5 * SEC) <= 25.0 + 1.0);
	assert_true(sim_wall_pct(b, 0, 5 * SEC) <= 25.0 + 1.0);
	assert_near(sim_wall_pct(a, 0, 5 * SEC), 25.0, 1.0,
		    "a wall, c idle (reserved 25%)");
	assert_near(sim_wall_pct(b, 0, 5 * SEC), 25.0, 1.0,
		    "b wall, c idle (reserved 25%)");
	assert_near(sim_share_pct(sim, c, 5 * SEC + 100 * MS, 10 * SEC),
		    50.0, 2.0, "c share once busy");
	assert_near(sim_share_pct(sim, a, 5 * SEC + 100 * MS, 10 * SEC),
		    25.0, 2.0, "a share once c busy");
}

/* 30 ms kernels against 1 ms kernels at equal weight: 50/50 +-3% (of 50). */
static void test_overrun_payback(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b;

	sim_pair(sim, MDGPU_POLICY_BEST_EFFORT, &a, &b,
		 (struct sim_spec){ "30ms", 1, 100, 30 * MS },
		 (struct sim_spec){ "1ms", 1, 100, 1 * MS });
	sim_run(sim, 10 * SEC);
	assert_near(sim_share_pct(sim, a, 0, 10 * SEC), 50.0, 1.5,
		    "30 ms kernels share");
	assert_near(sim_share_pct(sim, b, 0, 10 * SEC), 50.0, 1.5,
		    "1 ms kernels share");
}

/*
 * A sleeper banks no credit: B runs 1 s, sleeps 4 s while A runs alone,
 * wakes at 5 s.  B then runs at most about one slice beyond its fair
 * share, and A is never kept waiting longer than a slice and a kernel.
 */
static void test_sleeper(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b;
	uint64_t b_first, b_second;

	sim_init(sim, MDGPU_POLICY_BEST_EFFORT);
	a = sim_add(sim, "a", 1, 100, 1 * MS);
	b = sim_add(sim, "sleeper", 1, 100, 1 * MS);
	sim_on(a, 0, UINT64_MAX);
	sim_on(b, 0, 1 * SEC);
	sim_on(b, 5 * SEC, UINT64_MAX);
	sim->stats_from_ns = 5 * SEC;
	sim_run(sim, 10 * SEC);

	b_first = sim_used(b, 5 * SEC, 5 * SEC + 100 * MS);
	b_second = sim_used(b, 5 * SEC, 6 * SEC);
	printf("    sleeper: first 100 ms after wake %7.3f ms, first 1 s %7.3f ms\n",
	       (double)b_first / MS, (double)b_second / MS);
	printf("    sleeper longest run %7.3f ms, a longest wait %7.3f ms\n",
	       (double)b->max_streak_ns / MS, (double)a->max_wait_ns / MS);
	/* Fair share of the first 100 ms is 50 ms: at most a slice more. */
	assert_true(b_first <= 50 * MS + SLICE_NS + 1 * MS);
	assert_true(b_second <= 500 * MS + SLICE_NS + 1 * MS);
	assert_true(b->max_streak_ns <= 2 * SLICE_NS + 1 * MS);
	assert_true(a->max_wait_ns <= 2 * SLICE_NS + 1 * MS + SWITCH_NS);
	assert_near(sim_share_pct(sim, b, 5 * SEC, 10 * SEC), 50.0, 2.0,
		    "sleeper share after wake");
}

/*
 * Weights hold for a program whose queue empties for a moment at each
 * synchronize (tests/gpu/weights-drvapi.sh on the H100: batches of 1 ms
 * kernels, an event synchronize with 32 in flight): B, weight 3, has 32
 * kernels queued, and when they have run its queue is empty for 50 us
 * (its client answering the completion), next to A, weight 1,
 * saturating.  Its slice ends with its queue empty, A gets the GPU, and
 * B rings during A's slice: it comes back within two timeslices of
 * leaving and keeps the lead over A it left with, so it still gets 3/4 of
 * the GPU.  Placed at min_vtime it lost that lead each time (the daemon
 * measured 2.4 : 1 on the H100).
 */
static void test_weights_brief_idle(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b;

	sim_pair(sim, MDGPU_POLICY_BEST_EFFORT, &a, &b,
		 (struct sim_spec){ "a", 1, 100, 1 * MS },
		 (struct sim_spec){ "b", 3, 100, 1 * MS });
	b->refill_kernels = b->left = 32;
	b->refill_ns = 50 * US;
	sim_run(sim, 10 * SEC);
	printf("    weight 3, queue empty for 50 us after every 32 kernels: "
	       "%.2f%% of the GPU (want 75)\n",
	       sim_share_pct(sim, b, SEC, 10 * SEC));
	assert_near(sim_share_pct(sim, b, SEC, 10 * SEC), 75.0, 1.5,
		    "weight 3 share with brief idles");
}

/*
 * A latency-sensitive tenant (100 small kernels per second) next to
 * saturating ones: p99 of its wait, from submission to the start of its
 * kernel (the 130 us switch included), is at most one slice + the longest
 * competing kernel.
 */
static void run_latency(struct sim *sim, unsigned int nr_hogs,
			uint64_t hog_kernel_ns)
{
	struct sim_tenant *l, *h;
	uint64_t p50, p99, max = 0;

	sim_init(sim, MDGPU_POLICY_BEST_EFFORT);
	/* Hogs added first: add() order cannot favour the latency tenant. */
	for (unsigned int i = 0; i < nr_hogs; i++) {
		h = sim_add(sim, "hog", 1, 100, hog_kernel_ns);
		sim_on(h, 0, UINT64_MAX);
	}
	l = sim_add(sim, "latency", 1, 100, 100 * US);
	sim_periodic(sim, l, 10 * MS);
	sim_run(sim, 10 * SEC);
	for (unsigned int i = 0; i < l->nr_lat; i++)
		if (l->lat_ns[i] > max)
			max = l->lat_ns[i];
	p50 = percentile(l->lat_ns, l->nr_lat, 50);
	p99 = percentile(l->lat_ns, l->nr_lat, 99);
	printf("    %u hog(s) of %.1f ms kernels: %u kernels waited p50 %.3f ms p99 %.3f ms max %.3f ms (bound %.3f ms)\n",
	       nr_hogs, (double)hog_kernel_ns / MS, l->nr_lat,
	       (double)p50 / MS, (double)p99 / MS, (double)max / MS,
	       (double)(SLICE_NS + hog_kernel_ns) / MS);
	printf("    latency tenant used %.3f%% of the GPU\n",
	       sim_wall_pct(l, 0, 10 * SEC));
	assert_true(l->nr_lat >= 900);
	assert_true(p99 <= SLICE_NS + hog_kernel_ns);
}

static void test_latency(void **state)
{
	run_latency(*state, 1, 2 * MS);
}

static void test_latency_two_hogs(void **state)
{
	run_latency(*state, 2, 5 * MS);
}

/*
 * Fixed-share with a cap: A (reserved 50%) capped at 30%, B reserved 50%.
 * A gets its cap, B its reservation, the remaining 20% stays idle.
 */
static void test_fixed_share_cap(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b;

	sim_pair(sim, MDGPU_POLICY_FIXED_SHARE, &a, &b,
		 (struct sim_spec){ "a", 2, 30, 1 * MS },
		 (struct sim_spec){ "b", 2, 100, 1 * MS });
	sim_run(sim, 10 * SEC);
	assert_true(sim_wall_pct(a, 0, 10 * SEC) <= 31.0);
	assert_true(sim_wall_pct(b, 0, 10 * SEC) <= 51.0);
	assert_near(sim_wall_pct(a, 0, 10 * SEC), 30.0, 1.0,
		    "a wall (reserved 50%, cap 30%)");
	assert_near(sim_wall_pct(b, 0, 10 * SEC), 50.0, 1.0,
		    "b wall (reserved 50%)");
}

/*
 * The cap window and slice changed live (100 ms / 10 ms -> 20 ms / 2 ms):
 * the cap keeps holding, now over 20 ms windows.
 */
static void test_cap_window_live(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b;
	struct mdgpud_sched_cfg cfg;
	uint64_t worst;

	sim_pair(sim, MDGPU_POLICY_BEST_EFFORT, &a, &b,
		 (struct sim_spec){ "capped", 1, 30, 500 * US },
		 (struct sim_spec){ "b", 1, 100, 500 * US });
	sim_run(sim, 3 * SEC);
	assert_near(sim_wall_pct(a, 0, 3 * SEC), 30.0, 1.0,
		    "capped 30%, 100 ms window");
	mdgpud_sched_cfg_default(&cfg);
	cfg.cap_window_ns = 20 * MS;
	cfg.timeslice_ns = 2 * MS;
	assert_int_equal(mdgpud_sched_configure(sim->s, &cfg), 0);
	sim_run(sim, 6 * SEC);
	/*
	 * <= cap + 1%.  Below the cap: each time the cap lets A run again,
	 * it starts after the 130 us switch and after b's last kernel
	 * (b's slice is cut at A's release, at a kernel boundary); with
	 * 2 ms slices that is 150 times a second, about 2% of the GPU
	 * (29.0% with a free switch).  Shown here, not hidden.
	 */
	assert_range(sim_wall_pct(a, 3 * SEC, 6 * SEC), 27.5, 31.0,
		     "capped 30%, 20 ms window");
	worst = sim_max_window(a, 3 * SEC + 100 * MS, 6 * SEC, 20 * MS);
	printf("    worst 20 ms window after the change %.3f ms\n",
	       (double)worst / MS);
	assert_true(worst <= 20 * MS * 30 / 100 + 500 * US);
}

/*
 * A tenant held back by its cap does not hold min_vtime back: C, waking
 * next to a capped A (whose vtime lags, as it gets 10% instead of its fair
 * half) and a saturating B, is placed level with B, not with A, and so
 * gets no burst.
 */
static void test_cap_no_credit(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b, *c;
	uint64_t c_first;

	sim_pair(sim, MDGPU_POLICY_BEST_EFFORT, &a, &b,
		 (struct sim_spec){ "capped", 1, 10, 1 * MS },
		 (struct sim_spec){ "b", 1, 100, 1 * MS });
	c = sim_add(sim, "sleeper", 1, 100, 1 * MS);
	sim_on(c, 3 * SEC, UINT64_MAX);
	sim->stats_from_ns = 3 * SEC;
	sim_run(sim, 5 * SEC);
	c_first = sim_used(c, 3 * SEC, 3 * SEC + 200 * MS);
	printf("    sleeper next to a capped tenant: %.3f ms of the first 200 ms, longest run %.3f ms\n",
	       (double)c_first / MS, (double)c->max_streak_ns / MS);
	/* b and c share the 90% a cannot use: 90 ms each of 200 ms. */
	assert_true(c_first <= 90 * MS + SLICE_NS + 1 * MS);
	assert_true(c->max_streak_ns <= 2 * SLICE_NS + 1 * MS);
	assert_near(sim_wall_pct(a, 3 * SEC, 5 * SEC), 10.0, 1.0,
		    "capped wall");
	assert_near(sim_share_pct(sim, b, 3 * SEC, 5 * SEC),
		    sim_share_pct(sim, c, 3 * SEC, 5 * SEC), 2.0,
		    "b share (== sleeper share)");
}

/*
 * The set-up of the tests that drive the scheduler by hand: a best-effort
 * scheduler with a, then b (NULL: a alone), added and runnable at time 0.
 */
static struct mdgpud_sched *sched_pair(struct mdgpud_sched_entity *a,
				       struct mdgpud_sched_entity *b)
{
	struct mdgpud_sched_cfg cfg;
	struct mdgpud_sched *s;

	mdgpud_sched_cfg_default(&cfg);
	assert_int_equal(mdgpud_sched_create(&cfg, &s), 0);
	assert_int_equal(mdgpud_sched_add(s, a, 0), 0);
	if (b)
		assert_int_equal(mdgpud_sched_add(s, b, 0), 0);
	mdgpud_sched_set_runnable(s, a, true, 0);
	if (b)
		mdgpud_sched_set_runnable(s, b, true, 0);
	return s;
}

/*
 * set_params keeps the GPU time an entity owes: its lag behind or ahead of
 * min_vtime, in vtime units, scales by old weight / new weight (so lag *
 * weight, the owed GPU ns, is unchanged), as Linux's EEVDF reweight does.
 */
static void test_reweight_keeps_debt(void **state)
{
	struct mdgpud_sched *s;
	struct mdgpud_sched_entity a = { .id = 1, .weight = 2, .cap_pct = 100,
					 .priority = 4 };
	struct mdgpud_sched_entity b = { .id = 2, .weight = 2, .cap_pct = 100,
					 .priority = 4 };
	struct mdgpud_sched_decision d;
	uint64_t lag_before, lag_after;

	(void)state;
	s = sched_pair(&a, &b);
	mdgpud_sched_pick(s, 0, &d);
	assert_ptr_equal(d.entity, &a);
	mdgpud_sched_charge(s, &a, 0, 50 * MS);	/* a 40 ms overrun */
	lag_before = a.vtime - b.vtime;		/* b holds min_vtime */
	assert_int_equal(lag_before, 50 * MS * 100 / 2);
	assert_int_equal(mdgpud_sched_set_params(s, &a, 10, 100, 4), 0);
	lag_after = a.vtime - b.vtime;
	printf("    lag of a in vtime: %llu at weight 2, %llu at weight 10\n",
	       (unsigned long long)lag_before, (unsigned long long)lag_after);
	assert_int_equal(lag_after * 10, lag_before * 2);
	/* Weight changed back: the lag is exactly what it was. */
	assert_int_equal(mdgpud_sched_set_params(s, &a, 2, 100, 4), 0);
	assert_int_equal(a.vtime - b.vtime, lag_before);
	mdgpud_sched_destroy(s);
}

/*
 * A tenant removed live: the others share its time; a removed entity is
 * forgotten (charges to it are ignored; fixed-share drops the idle time it
 * held for it, and its memory may be freed at once).
 */
static void test_remove_live(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b, *c;
	uint64_t removed;

	sim_pair(sim, MDGPU_POLICY_BEST_EFFORT, &a, &b,
		 (struct sim_spec){ "a", 1, 100, 1 * MS },
		 (struct sim_spec){ "b", 1, 100, 1 * MS });
	c = sim_add(sim, "c", 2, 100, 1 * MS);
	sim_on(c, 0, UINT64_MAX);
	sim_run(sim, 2 * SEC);
	assert_near(sim_share_pct(sim, c, 0, 2 * SEC), 50.0, 2.0,
		    "c (weight 2 of 4)");
	removed = sim->now_ns;
	mdgpud_sched_remove(sim->s, &c->e);
	assert_null(c->e.priv);
	mdgpud_sched_charge(sim->s, &c->e, sim->now_ns, 5 * SEC); /* ignored */
	sim_run(sim, 4 * SEC);
	assert_int_equal(sim_used(c, removed + SIM_BIN_NS, 4 * SEC), 0);
	assert_near(sim_share_pct(sim, a, removed + SIM_BIN_NS, 4 * SEC),
		    50.0, 2.0, "a after c removed");
}

static void test_remove_phantom(void **state)
{
	struct mdgpud_sched_cfg cfg;
	struct mdgpud_sched *s;
	struct mdgpud_sched_entity a = { .id = 1, .weight = 1, .cap_pct = 100,
					 .priority = 4 };
	struct mdgpud_sched_entity *b = calloc(1, sizeof(*b));
	struct mdgpud_sched_decision d;
	uint64_t now = 0;
	int idle = 0;

	(void)state;
	assert_non_null(b);
	b->id = 2;
	b->weight = 1;
	b->cap_pct = 100;
	b->priority = 4;
	mdgpud_sched_cfg_default(&cfg);
	cfg.policy = MDGPU_POLICY_FIXED_SHARE;
	assert_int_equal(mdgpud_sched_create(&cfg, &s), 0);
	assert_int_equal(mdgpud_sched_add(s, &a, 0), 0);
	assert_int_equal(mdgpud_sched_add(s, b, 0), 0);
	mdgpud_sched_set_runnable(s, &a, true, 0);
	/* a and idle b alternate: a runs, then the GPU idles for b. */
	for (int i = 0; i < 4; i++) {
		mdgpud_sched_pick(s, now, &d);
		if (d.entity) {
			assert_ptr_equal(d.entity, &a);
			mdgpud_sched_charge(s, &a, now, d.slice_ns);
			now += d.slice_ns;
		} else {
			assert_int_equal(d.idle_until_ns, now + 10 * MS);
			idle++;
			if (idle == 2)
				break;
			now = d.idle_until_ns;
		}
	}
	assert_int_equal(idle, 2);
	/* Idle on b's behalf right now: remove and free b (ASAN checks). */
	mdgpud_sched_remove(s, b);
	free(b);
	now += 3 * MS;
	mdgpud_sched_pick(s, now, &d);
	assert_ptr_equal(d.entity, &a);	/* alone now: no reservation left */
	mdgpud_sched_destroy(s);
}

/* Bad values return -EINVAL and change nothing. */
static void test_bad_values(void **state)
{
	struct mdgpud_sched_cfg cfg, bad;
	/* A failed create() must leave *out alone: watch a marker value. */
	struct mdgpud_sched *const marker = (struct mdgpud_sched *)&cfg;
	struct mdgpud_sched *s = NULL, *s2 = marker;
	struct mdgpud_sched_entity a = { .id = 1, .weight = 3, .cap_pct = 100,
					 .priority = 4 };
	struct mdgpud_sched_entity x = { .id = 2, .weight = 1, .cap_pct = 100,
					 .priority = 4 };
	struct mdgpud_sched_entity dup = a;
	struct mdgpud_sched_decision d;
	const struct { uint32_t w, c, p; } params[] = {
		{ 0, 100, 4 }, { 101, 100, 4 }, { 1, 0, 4 }, { 1, 101, 4 },
		{ 1, 100, 8 }, { UINT32_MAX, 100, 4 },
	};
	uint64_t vt;

	(void)state;
	mdgpud_sched_cfg_default(&cfg);
	assert_int_equal(cfg.timeslice_ns, 10 * MS);

	/* create */
	bad = cfg;
	bad.policy = 3;
	assert_int_equal(mdgpud_sched_create(&bad, &s2), -EINVAL);
	bad = cfg;
	bad.timeslice_ns = MDGPU_TIMESLICE_US_MIN * US - 1;
	assert_int_equal(mdgpud_sched_create(&bad, &s2), -EINVAL);
	bad = cfg;
	bad.timeslice_ns = MDGPU_TIMESLICE_US_MAX * US + 1;
	assert_int_equal(mdgpud_sched_create(&bad, &s2), -EINVAL);
	bad = cfg;
	bad.cap_window_ns = 0;
	assert_int_equal(mdgpud_sched_create(&bad, &s2), -EINVAL);
	assert_int_equal(mdgpud_sched_create(NULL, &s2), -EINVAL);
	assert_int_equal(mdgpud_sched_create(&cfg, NULL), -EINVAL);
	assert_ptr_equal(s2, marker);
	bad = cfg;
	bad.timeslice_ns = MDGPU_TIMESLICE_US_MIN * US;
	assert_int_equal(mdgpud_sched_create(&bad, &s), 0);	/* edges ok */
	mdgpud_sched_destroy(s);
	assert_int_equal(mdgpud_sched_create(&cfg, &s), 0);

	/* add */
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		x.weight = params[i].w;
		x.cap_pct = params[i].c;
		x.priority = params[i].p;
		assert_int_equal(mdgpud_sched_add(s, &x, 0), -EINVAL);
		assert_null(x.priv);
	}
	assert_int_equal(mdgpud_sched_add(s, &a, 0), 0);
	assert_int_equal(mdgpud_sched_add(s, &a, 0), -EEXIST);
	assert_int_equal(mdgpud_sched_add(s, &dup, 0), -EEXIST); /* same id */
	/* x was never added: the scheduler ignores it. */
	mdgpud_sched_set_runnable(s, &x, true, 0);
	mdgpud_sched_pick(s, 0, &d);
	assert_null(d.entity);
	assert_int_equal(d.idle_until_ns, UINT64_MAX);

	/* set_params */
	mdgpud_sched_set_runnable(s, &a, true, 0);
	mdgpud_sched_pick(s, 0, &d);
	assert_ptr_equal(d.entity, &a);
	mdgpud_sched_charge(s, &a, 0, 7 * MS);
	vt = a.vtime;
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		assert_int_equal(mdgpud_sched_set_params(s, &a, params[i].w,
							 params[i].c,
							 params[i].p),
				 -EINVAL);
		assert_int_equal(a.weight, 3);
		assert_int_equal(a.cap_pct, 100);
		assert_int_equal(a.priority, 4);
		assert_int_equal(a.vtime, vt);
	}
	x.weight = 1;
	x.cap_pct = 100;
	x.priority = 4;
	assert_int_equal(mdgpud_sched_set_params(s, &x, 2, 100, 4), -ENOENT);

	/* configure: bad values leave policy and timeslice as they were */
	bad = cfg;
	bad.policy = MDGPU_POLICY_FIXED_SHARE;
	bad.timeslice_ns = 1;
	assert_int_equal(mdgpud_sched_configure(s, &bad), -EINVAL);
	bad = cfg;
	bad.policy = 7;
	bad.timeslice_ns = 2 * MS;
	assert_int_equal(mdgpud_sched_configure(s, &bad), -EINVAL);
	bad = cfg;
	bad.cap_window_ns = MDGPUD_SCHED_CAP_WINDOW_NS_MAX + 1;
	bad.timeslice_ns = 2 * MS;
	assert_int_equal(mdgpud_sched_configure(s, &bad), -EINVAL);
	assert_int_equal(mdgpud_sched_configure(s, NULL), -EINVAL);
	mdgpud_sched_pick(s, 7 * MS, &d);
	assert_ptr_equal(d.entity, &a);
	assert_int_equal(d.slice_ns, 10 * MS);
	/*
	 * Still best-effort, not fixed-share: a second, idle entity gets no
	 * idle time reserved (fixed-share would hold the GPU for it).
	 */
	x.weight = 100;
	assert_int_equal(mdgpud_sched_add(s, &x, 7 * MS), 0);
	for (int i = 0; i < 5; i++) {
		mdgpud_sched_pick(s, 7 * MS, &d);
		assert_ptr_equal(d.entity, &a);
		mdgpud_sched_charge(s, &a, 7 * MS, 10 * MS);
	}

	mdgpud_sched_remove(s, &x);
	assert_null(x.priv);
	mdgpud_sched_remove(s, &x);	/* twice: harmless */
	mdgpud_sched_destroy(s);	/* frees a's state: ASAN checks */
	assert_null(a.priv);
}

/* A weight changed live changes the shares within one second. */
static void test_weight_live(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b;

	sim_pair(sim, MDGPU_POLICY_BEST_EFFORT, &a, &b,
		 (struct sim_spec){ "a", 1, 100, 1 * MS },
		 (struct sim_spec){ "b", 1, 100, 1 * MS });
	sim_run(sim, 5 * SEC);
	assert_near(sim_share_pct(sim, a, 0, 5 * SEC), 50.0, 2.0,
		    "a share, weight 1:1");
	assert_int_equal(mdgpud_sched_set_params(sim->s, &a->e, 3, 100,
						 MDGPU_PRIORITY_DEFAULT), 0);
	sim_run(sim, 10 * SEC);
	assert_near(sim_share_pct(sim, a, 5 * SEC, 6 * SEC), 75.0, 2.0,
		    "a share in the 1st s after 3:1");
	assert_near(sim_share_pct(sim, a, 6 * SEC, 10 * SEC), 75.0, 2.0,
		    "a share, 6..10 s");
}

/* The policy switched live: best-effort -> equal -> fixed -> best-effort. */
static void test_policy_live(void **state)
{
	struct sim *sim = *state;
	struct sim_tenant *a, *b, *c;
	struct mdgpud_sched_cfg cfg;

	mdgpud_sched_cfg_default(&cfg);
	sim_pair(sim, MDGPU_POLICY_BEST_EFFORT, &a, &b,
		 (struct sim_spec){ "a", 1, 100, 1 * MS },
		 (struct sim_spec){ "b", 3, 100, 2 * MS });
	c = sim_add(sim, "c", 4, 100, 1 * MS);
	/* c idles throughout */
	sim_run(sim, 3 * SEC);
	assert_near(sim_share_pct(sim, a, 0, 3 * SEC), 25.0, 2.0,
		    "best-effort 1:3, a");

	cfg.policy = MDGPU_POLICY_EQUAL_SHARE;
	assert_int_equal(mdgpud_sched_configure(sim->s, &cfg), 0);
	sim_run(sim, 6 * SEC);
	assert_near(sim_share_pct(sim, a, 3 * SEC, 4 * SEC), 50.0, 2.0,
		    "equal-share, a, 1st s");
	assert_near(sim_share_pct(sim, a, 3 * SEC, 6 * SEC), 50.0, 2.0,
		    "equal-share, a");

	cfg.policy = MDGPU_POLICY_FIXED_SHARE;
	cfg.timeslice_ns = 5 * MS;
	assert_int_equal(mdgpud_sched_configure(sim->s, &cfg), 0);
	sim_run(sim, 9 * SEC);
	/* a 1/8, b 3/8 of the wall; c's half left idle */
	assert_near(sim_wall_pct(a, 6 * SEC, 9 * SEC), 12.5, 1.0,
		    "fixed-share, a wall");
	assert_near(sim_wall_pct(b, 6 * SEC, 9 * SEC), 37.5, 1.0,
		    "fixed-share, b wall");
	assert_int_equal(sim_used(c, 0, 9 * SEC), 0);

	cfg.policy = MDGPU_POLICY_BEST_EFFORT;
	assert_int_equal(mdgpud_sched_configure(sim->s, &cfg), 0);
	sim_run(sim, 12 * SEC);
	assert_near(sim_share_pct(sim, a, 9 * SEC, 12 * SEC), 25.0, 2.0,
		    "best-effort again, a");
	assert_true(sim_wall_pct(a, 9 * SEC, 12 * SEC) +
		    sim_wall_pct(b, 9 * SEC, 12 * SEC) >= 97.0);
}

/* Priority breaks ties (who goes first) but does not buy share. */
static void test_priority(void **state)
{
	struct mdgpud_sched *s;
	struct mdgpud_sched_entity lo = { .id = 1, .weight = 1, .cap_pct = 100,
					  .priority = 0 };
	struct mdgpud_sched_entity hi = { .id = 2, .weight = 1, .cap_pct = 100,
					  .priority = 7 };
	struct mdgpud_sched_decision d;
	uint64_t hi_ns = 0, lo_ns = 0, now = 0;

	(void)state;
	s = sched_pair(&lo, &hi);
	/* Equal vtimes: the higher priority goes first, though added last. */
	mdgpud_sched_pick(s, 0, &d);
	assert_ptr_equal(d.entity, &hi);
	for (int i = 0; i < 1000; i++) {
		uint64_t ns = 3 * MS + (uint64_t)(i % 7) * MS;

		mdgpud_sched_pick(s, now, &d);
		assert_non_null(d.entity);
		mdgpud_sched_charge(s, d.entity, now, ns);
		*(d.entity == &hi ? &hi_ns : &lo_ns) += ns;
		now += ns;
	}
	printf("    priority 7 vs 0, equal weight: %.3f%% / %.3f%%\n",
	       100.0 * (double)hi_ns / (double)now,
	       100.0 * (double)lo_ns / (double)now);
	assert_near(100.0 * (double)hi_ns / (double)now, 50.0, 2.0,
		    "priority 7 share");
	mdgpud_sched_destroy(s);
}

/*
 * 64-bit arithmetic with hours of GPU time and extreme weights: weight 1
 * charged 3 hours owes weight 100 three hundred hours.  vtime starts near
 * the 2^64 wrap, so this also crosses it.
 */
static void test_overflow(void **state)
{
	struct mdgpud_sched *s;
	struct mdgpud_sched_entity light = { .id = 1, .weight = 1,
					     .cap_pct = 100, .priority = 4 };
	struct mdgpud_sched_entity heavy = { .id = 2, .weight = 100,
					     .cap_pct = 100, .priority = 4 };
	struct mdgpud_sched_decision d;
	const uint64_t hour = 3600 * SEC;
	uint64_t now = 0;

	(void)state;
	s = sched_pair(&light, &heavy);
	mdgpud_sched_pick(s, now, &d);
	assert_ptr_equal(d.entity, &light);
	assert_true(light.vtime > UINT64_MAX - (1ULL << 40)); /* near wrap */
	mdgpud_sched_charge(s, &light, now, 3 * hour);
	assert_true(light.vtime < (1ULL << 60));		/* wrapped */
	now += 3 * hour;
	mdgpud_sched_pick(s, now, &d);
	assert_ptr_equal(d.entity, &heavy);
	mdgpud_sched_charge(s, &heavy, now, 299 * hour);
	now += 299 * hour;
	mdgpud_sched_pick(s, now, &d);
	assert_ptr_equal(d.entity, &heavy);	/* still owed an hour */
	mdgpud_sched_charge(s, &heavy, now, hour + 11 * MS);
	now += hour + 11 * MS;
	mdgpud_sched_pick(s, now, &d);
	assert_ptr_equal(d.entity, &light);
	assert_int_equal(heavy.gpu_ns, 300 * hour + 11 * MS);

	/* A charge of 2^64 - 1 ns saturates instead of wrapping. */
	mdgpud_sched_charge(s, &light, now, UINT64_MAX);
	assert_int_equal(light.gpu_ns, UINT64_MAX);
	mdgpud_sched_pick(s, now, &d);
	assert_ptr_equal(d.entity, &heavy);
	mdgpud_sched_destroy(s);
}

/* Idle decisions: nothing runnable, and everything runnable capped. */
static void test_idle_decisions(void **state)
{
	struct mdgpud_sched_cfg cfg;
	struct mdgpud_sched *s;
	struct mdgpud_sched_entity a = { .id = 1, .weight = 1, .cap_pct = 10,
					 .priority = 4 };
	struct mdgpud_sched_decision d;
	uint64_t now = 0;

	(void)state;
	mdgpud_sched_cfg_default(&cfg);
	assert_int_equal(mdgpud_sched_create(&cfg, &s), 0);
	mdgpud_sched_pick(s, now, &d);
	assert_null(d.entity);
	assert_int_equal(d.idle_until_ns, UINT64_MAX);
	assert_int_equal(mdgpud_sched_add(s, &a, now), 0);
	mdgpud_sched_set_runnable(s, &a, true, now);
	/* cap 10% of 100 ms: one 10 ms slice, then idle until it slides. */
	mdgpud_sched_pick(s, now, &d);
	assert_ptr_equal(d.entity, &a);
	assert_int_equal(d.slice_ns, 10 * MS);
	mdgpud_sched_charge(s, &a, now, 10 * MS);
	now += 10 * MS;
	mdgpud_sched_pick(s, now, &d);
	assert_null(d.entity);
	printf("    capped alone: idle until %.3f ms\n",
	       (double)d.idle_until_ns / MS);
	assert_true(d.idle_until_ns > now);
	assert_true(d.idle_until_ns <= 100 * MS + 10 * MS + WINDOW_NS / 16);
	/* At that time it runs again. */
	while (!d.entity) {
		assert_true(d.idle_until_ns != UINT64_MAX);
		now = d.idle_until_ns;
		mdgpud_sched_pick(s, now, &d);
	}
	printf("    capped alone: runs again at %.3f ms\n", (double)now / MS);
	assert_true(now >= 100 * MS);
	mdgpud_sched_destroy(s);
}

/*
 * One 10 s kernel by a tenant capped at 10%: the overrun is paid back in
 * full (about 100 s without a slice), through the O(1) fast-forward of
 * the cap window over long idle gaps.
 */
static void test_cap_long_overrun(void **state)
{
	struct mdgpud_sched *s;
	struct mdgpud_sched_entity a = { .id = 1, .weight = 1, .cap_pct = 10,
					 .priority = 4 };
	struct mdgpud_sched_decision d;
	uint64_t now = 0;
	unsigned int idles = 0;

	(void)state;
	s = sched_pair(&a, NULL);
	mdgpud_sched_pick(s, now, &d);
	assert_ptr_equal(d.entity, &a);
	mdgpud_sched_charge(s, &a, now, 10 * SEC);
	now += 10 * SEC;
	mdgpud_sched_pick(s, 50 * SEC, &d);
	assert_null(d.entity);
	now = 50 * SEC;
	while (!d.entity) {
		assert_true(d.idle_until_ns > now);
		assert_true(d.idle_until_ns != UINT64_MAX);
		now = d.idle_until_ns;
		idles++;
		mdgpud_sched_pick(s, now, &d);
	}
	printf("    10 s kernel at cap 10%%: runs again at %.3f s (%u idle decisions from 50 s)\n",
	       (double)now / SEC, idles);
	assert_true(now >= 100 * SEC);
	assert_true(now <= 105 * SEC);
	mdgpud_sched_destroy(s);
}

/*
 * mdgpud_sched_peek_next(), the dispatcher's hint of who runs after the
 * entity now running.  Each case drives two schedulers with the same
 * calls and peeks only at the first: both must go on deciding alike
 * (peeking changes nothing).  Entities 0, 1, 2 of equal weight.
 */
#define TWIN_N		3

struct twin {
	struct mdgpud_sched *s[2];
	struct mdgpud_sched_entity e[2][TWIN_N];
};

static void twin_init(struct twin *t, uint32_t policy,
		      const uint32_t cap_pct[TWIN_N])
{
	struct mdgpud_sched_cfg cfg;

	mdgpud_sched_cfg_default(&cfg);
	cfg.policy = policy;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(mdgpud_sched_create(&cfg, &t->s[k]), 0);
		for (int i = 0; i < TWIN_N; i++) {
			t->e[k][i] = (struct mdgpud_sched_entity){
				.id = i + 1, .weight = 50,
				.cap_pct = cap_pct[i],
				.priority = MDGPU_PRIORITY_DEFAULT,
			};
			assert_int_equal(mdgpud_sched_add(t->s[k], &t->e[k][i],
							  0), 0);
		}
	}
}

static void twin_runnable(struct twin *t, int i, bool runnable,
			  uint64_t now)
{
	for (int k = 0; k < 2; k++)
		mdgpud_sched_set_runnable(t->s[k], &t->e[k][i], runnable, now);
}

/* The index both pick (asserted equal), -1 when both stay idle. */
static int twin_pick(struct twin *t, uint64_t now)
{
	struct mdgpud_sched_decision d;
	int got[2];

	for (int k = 0; k < 2; k++) {
		mdgpud_sched_pick(t->s[k], now, &d);
		got[k] = d.entity ? (int)(d.entity - t->e[k]) : -1;
	}
	assert_int_equal(got[0], got[1]);
	return got[0];
}

static void twin_charge(struct twin *t, int i, uint64_t start_ns,
			uint64_t ns)
{
	for (int k = 0; k < 2; k++)
		mdgpud_sched_charge(t->s[k], &t->e[k][i], start_ns, ns);
}

/* Bit i of *arg: entity i has work. */
static bool peek_ready(const struct mdgpud_sched_entity *e, void *arg)
{
	return *(const unsigned int *)arg & (1u << (e->id - 1));
}

/*
 * Peek at the first scheduler: exclude -1 for none, ready -1 for the
 * entities' runnable flags, else a mask for peek_ready.  Returns the
 * index peeked, -1 for none.
 */
static int twin_peek(struct twin *t, uint64_t now, int exclude, int ready)
{
	unsigned int mask = (unsigned int)ready;
	struct mdgpud_sched_entity *e;

	e = mdgpud_sched_peek_next(t->s[0], now,
				   exclude < 0 ? NULL : &t->e[0][exclude],
				   ready < 0 ? NULL : peek_ready, &mask);
	return e ? (int)(e - t->e[0]) : -1;
}

/* Every entity saturating for a while: same picks, same vtimes. */
static void twin_finish(struct twin *t, uint64_t now)
{
	for (int i = 0; i < TWIN_N; i++)
		twin_runnable(t, i, true, now);
	for (int n = 0; n < 30; n++) {
		int i = twin_pick(t, now);

		if (i >= 0)
			twin_charge(t, i, now, SLICE_NS);
		now += SLICE_NS;
	}
	for (int i = 0; i < TWIN_N; i++) {
		assert_int_equal(t->e[0][i].vtime, t->e[1][i].vtime);
		assert_int_equal(t->e[0][i].gpu_ns, t->e[1][i].gpu_ns);
		assert_int_equal(t->e[0][i].slices, t->e[1][i].slices);
	}
	for (int k = 0; k < 2; k++)
		mdgpud_sched_destroy(t->s[k]);
}

/* Entity 0 alone runnable and picked at time 0; returns that time. */
static uint64_t twin_start_0(struct twin *t, uint32_t policy,
			     const uint32_t cap_pct[TWIN_N])
{
	twin_init(t, policy, cap_pct);
	twin_runnable(t, 0, true, 0);
	assert_int_equal(twin_pick(t, 0), 0);
	return 0;
}

/*
 * Best-effort, 1 capped at 10% (one 10 ms slice per 100 ms), 0 and 1
 * runnable: 0's slice, 1's slice, then 0 picked again.  Returns the time
 * of that pick (20 ms).
 */
static uint64_t twin_start_b_capped(struct twin *t)
{
	const uint32_t b_capped[TWIN_N] = { 100, 10, 100 };
	uint64_t now = 0;

	twin_init(t, MDGPU_POLICY_BEST_EFFORT, b_capped);
	twin_runnable(t, 0, true, now);
	twin_runnable(t, 1, true, now);
	assert_int_equal(twin_pick(t, now), 0);
	twin_charge(t, 0, now, SLICE_NS);
	now += SLICE_NS;
	assert_int_equal(twin_pick(t, now), 1);
	twin_charge(t, 1, now, SLICE_NS);
	now += SLICE_NS;
	assert_int_equal(twin_pick(t, now), 0);
	return now;
}

/*
 * mdgpud_sched_may_extend(): the running entity keeps the GPU past its
 * slice only while ending the slice would give the GPU to no one.
 */
static bool twin_extend(struct twin *t, uint64_t now, int i, int ready)
{
	unsigned int mask = (unsigned int)ready;

	return mdgpud_sched_may_extend(t->s[0], &t->e[0][i], now, peek_ready,
				       &mask);
}

/*
 * mdgpud_sched_owed (the dispatcher's linger for a tenant owed GPU time):
 * B at weight 3 next to A at weight 1, A charged one 10 ms slice: B is
 * owed until it has been charged 30 ms (10 ms x 3/1), A is not; nobody
 * is owed with no other competing entity, under fixed-share, or capped.
 */
static void test_owed(void **state)
{
	struct mdgpud_sched_cfg cfg;
	struct mdgpud_sched *s;
	struct mdgpud_sched_entity a = { .id = 1, .weight = 1, .cap_pct = 100,
					 .priority = MDGPU_PRIORITY_DEFAULT };
	struct mdgpud_sched_entity b = { .id = 2, .weight = 3, .cap_pct = 100,
					 .priority = MDGPU_PRIORITY_DEFAULT };

	(void)state;
	s = sched_pair(&a, &b);
	mdgpud_sched_charge(s, &a, 0, 10 * MS);
	assert_true(mdgpud_sched_owed(s, &b, 0));
	assert_true(mdgpud_sched_owed(s, &b, 29 * MS));
	assert_false(mdgpud_sched_owed(s, &b, 31 * MS));
	assert_false(mdgpud_sched_owed(s, &a, 0));
	/* No one else competing: nothing is owed. */
	mdgpud_sched_set_runnable(s, &a, false, 10 * MS);
	assert_false(mdgpud_sched_owed(s, &b, 0));
	mdgpud_sched_set_runnable(s, &a, true, 10 * MS);
	assert_true(mdgpud_sched_owed(s, &b, 0));
	/* A capped entity: its cap, not the linger, decides. */
	assert_int_equal(mdgpud_sched_set_params(s, &b, 3, 50,
						 MDGPU_PRIORITY_DEFAULT), 0);
	assert_false(mdgpud_sched_owed(s, &b, 0));
	assert_int_equal(mdgpud_sched_set_params(s, &b, 3, 100,
						 MDGPU_PRIORITY_DEFAULT), 0);
	mdgpud_sched_cfg_default(&cfg);
	cfg.policy = MDGPU_POLICY_FIXED_SHARE;
	assert_int_equal(mdgpud_sched_configure(s, &cfg), 0);
	assert_false(mdgpud_sched_owed(s, &b, 0));
	assert_false(mdgpud_sched_owed(NULL, &b, 0));
	mdgpud_sched_remove(s, &a);
	mdgpud_sched_remove(s, &b);
	mdgpud_sched_destroy(s);
}

static void test_may_extend(void **state)
{
	const uint32_t uncapped[TWIN_N] = { 100, 100, 100 };
	const uint32_t a_capped[TWIN_N] = { 50, 100, 100 };
	struct twin t;
	uint64_t now;

	(void)state;
	assert_false(mdgpud_sched_may_extend(NULL, NULL, 0, NULL, NULL));

	/* Best-effort: alone, yes; once 1 or 2 has work, no. */
	now = twin_start_0(&t, MDGPU_POLICY_BEST_EFFORT, uncapped);
	assert_true(twin_extend(&t, now, 0, 0x1));
	assert_false(twin_extend(&t, now, 0, 0x3));
	assert_false(twin_extend(&t, now, 0, 0x5));
	twin_charge(&t, 0, now, SLICE_NS);
	now += SLICE_NS;
	twin_finish(&t, now);

	/* Equal-share behaves alike. */
	now = twin_start_0(&t, MDGPU_POLICY_EQUAL_SHARE, uncapped);
	assert_true(twin_extend(&t, now, 0, 0x1));
	assert_false(twin_extend(&t, now, 0, 0x7));
	twin_finish(&t, now);

	/* A capped entity never: its cap counts the slices it gets. */
	now = twin_start_0(&t, MDGPU_POLICY_BEST_EFFORT, a_capped);
	assert_false(twin_extend(&t, now, 0, 0x1));
	twin_finish(&t, now);

	/*
	 * Another entity with work that its cap holds back does not stop the
	 * extension: ending the slice would not let it run.
	 */
	now = twin_start_b_capped(&t);
	assert_true(twin_extend(&t, now, 0, 0x3));
	assert_false(twin_extend(&t, 115 * MS, 0, 0x3));
	twin_finish(&t, now);

	/* Fixed-share never: an idle entity's reserved time stays idle. */
	now = twin_start_0(&t, MDGPU_POLICY_FIXED_SHARE, uncapped);
	assert_false(twin_extend(&t, now, 0, 0x1));
	twin_finish(&t, now);
}

static void test_peek_next(void **state)
{
	const uint32_t uncapped[TWIN_N] = { 100, 100, 100 };
	struct twin t;
	uint64_t now = 0;

	(void)state;
	assert_null(mdgpud_sched_peek_next(NULL, 0, NULL, NULL, NULL));

	/*
	 * Best-effort: 0 and 1 saturate, 2 is idle (its vtime left behind).
	 * Peeking while 0 runs: 1 of the runnable ones; 2 once it has work,
	 * placed at min_vtime level with 1 and first as a waker; none when
	 * nobody else has work.
	 */
	twin_init(&t, MDGPU_POLICY_BEST_EFFORT, uncapped);
	twin_runnable(&t, 0, true, now);
	twin_runnable(&t, 1, true, now);
	assert_int_equal(twin_pick(&t, now), 0);
	assert_int_equal(twin_peek(&t, now, 0, -1), 1);
	twin_charge(&t, 0, now, SLICE_NS);
	now += SLICE_NS;
	assert_int_equal(twin_pick(&t, now), 1);
	twin_charge(&t, 1, now, SLICE_NS);
	now += SLICE_NS;
	assert_int_equal(twin_pick(&t, now), 0);
	assert_int_equal(twin_peek(&t, now, 0, -1), 1);
	assert_int_equal(twin_peek(&t, now, 0, 0x6), 2);
	assert_int_equal(twin_peek(&t, now, 0, 0x4), 2);
	assert_int_equal(twin_peek(&t, now, 0, 0x2), 1);
	assert_int_equal(twin_peek(&t, now, 0, 0x1), -1);
	assert_int_equal(twin_peek(&t, now, 0, 0x0), -1);
	/* Without exclusion: 1, granted a slice longer ago than 0. */
	assert_int_equal(twin_peek(&t, now, -1, -1), 1);
	twin_charge(&t, 0, now, SLICE_NS);
	now += SLICE_NS;
	twin_finish(&t, now);

	/*
	 * Best-effort, 1 capped at 10% (one 10 ms slice per 100 ms): after
	 * its slice it is not the next one, though runnable, until its
	 * window lets it run again: a slice from just after 110 ms (its
	 * usage, [10, 20) ms, out of the window when that slice ends).
	 */
	now = twin_start_b_capped(&t);
	assert_int_equal(twin_peek(&t, now, 0, -1), -1);
	assert_int_equal(twin_peek(&t, now, 0, 0x6), 2);
	assert_int_equal(twin_peek(&t, 105 * MS, 0, -1), -1);
	assert_int_equal(twin_peek(&t, 115 * MS, 0, -1), 1);
	twin_charge(&t, 0, now, SLICE_NS);
	now += SLICE_NS;
	twin_finish(&t, now);

	/*
	 * Fixed-share: 2 is idle and its share reserved.  While 1 runs, 0
	 * has work but the next turn is 2's: none runs next unless 2 has
	 * work.
	 */
	now = 0;
	twin_init(&t, MDGPU_POLICY_FIXED_SHARE, uncapped);
	twin_runnable(&t, 0, true, now);
	twin_runnable(&t, 1, true, now);
	assert_int_equal(twin_pick(&t, now), 0);
	assert_int_equal(twin_peek(&t, now, 0, -1), 1);
	twin_charge(&t, 0, now, SLICE_NS);
	now += SLICE_NS;
	assert_int_equal(twin_pick(&t, now), 1);
	assert_int_equal(twin_peek(&t, now, 1, -1), -1);
	assert_int_equal(twin_peek(&t, now, 1, 0x5), 2);
	twin_charge(&t, 1, now, SLICE_NS);
	now += SLICE_NS;
	assert_int_equal(twin_pick(&t, now), -1);	/* held for 2 */
	now += SLICE_NS;
	twin_finish(&t, now);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_idle_decisions),
		cmocka_unit_test(test_peek_next),
		cmocka_unit_test(test_may_extend),
		cmocka_unit_test(test_owed),
		cmocka_unit_test(test_cap_long_overrun),
		cmocka_unit_test(test_priority),
		cmocka_unit_test_setup_teardown(test_weights_converge, sim_setup,
						sim_teardown),
		cmocka_unit_test_setup_teardown(test_equal_share, sim_setup,
						sim_teardown),
		cmocka_unit_test_setup_teardown(test_cap_best_effort, sim_setup,
						sim_teardown),
		cmocka_unit_test_setup_teardown(test_cap_overrun, sim_setup,
						sim_teardown),
		cmocka_unit_test_setup_teardown(test_fixed_share, sim_setup,
						sim_teardown),
		cmocka_unit_test_setup_teardown(test_overrun_payback, sim_setup,
						sim_teardown),
		cmocka_unit_test_setup_teardown(test_weights_brief_idle,
						sim_setup, sim_teardown),
		cmocka_unit_test_setup_teardown(test_sleeper, sim_setup,
						sim_teardown),
		cmocka_unit_test_setup_teardown(test_latency, sim_setup,
						sim_teardown),
		cmocka_unit_test_setup_teardown(test_latency_two_hogs,
						sim_setup, sim_teardown),
		cmocka_unit_test_setup_teardown(test_fixed_share_cap,
						sim_setup, sim_teardown),
		cmocka_unit_test_setup_teardown(test_cap_window_live,
						sim_setup, sim_teardown),
		cmocka_unit_test_setup_teardown(test_remove_live, sim_setup,
						sim_teardown),
		cmocka_unit_test(test_remove_phantom),
		cmocka_unit_test_setup_teardown(test_cap_no_credit, sim_setup,
						sim_teardown),
		cmocka_unit_test(test_reweight_keeps_debt),
		cmocka_unit_test_setup_teardown(test_weight_live, sim_setup,
						sim_teardown),
		cmocka_unit_test_setup_teardown(test_policy_live, sim_setup,
						sim_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
