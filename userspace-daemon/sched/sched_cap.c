// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The per-vGPU cap: an entity may use at most cap_pct percent of the GPU
 * over any sliding window of cfg.cap_window_ns.
 *
 * Usage is kept per bucket of width w = window / MDGPUD_SCHED_CAP_BUCKETS,
 * aligned on multiples of w, in a ring of BUCKETS + 1 slots: the bucket now
 * filling and the BUCKETS before it.  A charge [start, start + gpu_ns) is
 * spread over the buckets it overlaps.  The usage over the window
 * (now - window, now] is the sum of the slots, with the oldest slot counted
 * only for the fraction of it still inside the window (its usage assumed
 * spread evenly over the bucket).
 *
 * Overruns.  Kernels are not preemptible, so a slice can end past the
 * budget.  The excess is not left in the window (it would leave the window
 * unpaid once it slid out): it is moved to debt_ns, and each time a bucket
 * slides out the freed room first pays debt back into the new bucket.  So
 * every charged ns is counted against the cap once, in some window, and the
 * long-run share stays at most the cap however long the kernels are.
 */
#include <stddef.h>

#include "uapi/mdgpu.h"
#include "sched_priv.h"

static uint64_t mdgpud_sched_cap_width_ns(const struct mdgpud_sched *s)
{
	return s->cfg.cap_window_ns / MDGPUD_SCHED_CAP_BUCKETS;
}

static bool mdgpud_sched_capped(const struct mdgpud_sched_entity *e)
{
	return e->cap_pct < MDGPU_CAP_MAX;
}

uint64_t mdgpud_sched_cap_budget_ns(const struct mdgpud_sched *s,
				    const struct mdgpud_sched_entity *e)
{
	/* window <= 60 s, cap <= 100: the product fits easily. */
	return s->cfg.cap_window_ns * e->cap_pct / 100;
}

/* Slide the ring forward by one bucket, paying debt into the new one. */
static void mdgpud_sched_cap_step(struct mdgpud_sched_cap *c, uint64_t w,
				  uint64_t budget)
{
	c->head = (c->head + 1) % MDGPUD_SCHED_CAP_SLOTS;
	c->sum_ns -= c->slot_ns[c->head];
	c->slot_ns[c->head] = 0;
	c->head_start_ns += w;
	if (c->debt_ns && c->sum_ns < budget) {
		uint64_t pay = budget - c->sum_ns;

		if (pay > c->debt_ns)
			pay = c->debt_ns;
		c->slot_ns[c->head] = pay;
		c->sum_ns += pay;
		c->debt_ns -= pay;
	}
}

void mdgpud_sched_cap_advance(const struct mdgpud_sched *s,
			      struct mdgpud_sched_entity *e, uint64_t now_ns)
{
	struct mdgpud_sched_cap *c = &mdgpud_sched_estate(e)->cap;
	uint64_t w = mdgpud_sched_cap_width_ns(s);
	uint64_t budget = mdgpud_sched_cap_budget_ns(s, e);
	uint64_t steps;

	if (!c->started) {
		c->head_start_ns = now_ns - now_ns % w;
		c->started = true;
		return;
	}
	if (now_ns < c->head_start_ns || now_ns - c->head_start_ns < w)
		return;
	steps = (now_ns - c->head_start_ns) / w;

	if (steps > MDGPUD_SCHED_CAP_SLOTS) {
		/*
		 * Idle for more than a whole ring: everything in it slid out.
		 * Each further full ring turn would pay one budget of debt
		 * (one slot takes the budget and holds it for a turn); skip
		 * those turns arithmetically so a long gap costs O(1).
		 */
		uint64_t turns = (steps - 1) / MDGPUD_SCHED_CAP_SLOTS;
		uint64_t paid = turns > c->debt_ns / (budget ? budget : 1) ?
				c->debt_ns : turns * budget;

		for (size_t i = 0; i < MDGPUD_SCHED_CAP_SLOTS; i++)
			c->slot_ns[i] = 0;
		c->sum_ns = 0;
		c->debt_ns -= paid;
		c->head_start_ns += turns * MDGPUD_SCHED_CAP_SLOTS * w;
		steps -= turns * MDGPUD_SCHED_CAP_SLOTS;
	}
	while (steps--)
		mdgpud_sched_cap_step(c, w, budget);
}

/* GPU ns used in (now - window, now]; the cap must be advanced to now. */
static uint64_t mdgpud_sched_cap_usage_ns(const struct mdgpud_sched *s,
					  const struct mdgpud_sched_cap *c,
					  uint64_t now_ns)
{
	uint64_t w = mdgpud_sched_cap_width_ns(s);
	uint64_t oldest = c->slot_ns[(c->head + 1) % MDGPUD_SCHED_CAP_SLOTS];
	uint64_t left;		/* ns of the oldest bucket still in the window */

	if (now_ns < c->head_start_ns)
		left = w;
	else if (now_ns - c->head_start_ns >= w)
		left = 0;
	else
		left = c->head_start_ns + w - now_ns;
	return c->sum_ns - oldest + mdgpud_sched_mul_div(oldest, left, w);
}

/*
 * A capped entity is granted slices of need = min(timeslice, budget): a
 * whole slice, or its whole budget when that is shorter.  (Slivers of room
 * would buy slivers of slices, each paying the ~130 us switch.)
 */
uint64_t mdgpud_sched_cap_slice_ns(const struct mdgpud_sched *s,
				   const struct mdgpud_sched_entity *e)
{
	uint64_t budget = mdgpud_sched_cap_budget_ns(s, e);

	if (!mdgpud_sched_capped(e) || s->cfg.timeslice_ns < budget)
		return s->cfg.timeslice_ns;
	return budget;
}

/*
 * Earliest t >= from_ns at which usage(t) + debt + need <= budget, if e
 * does not run meanwhile.  Within one bucket the usage falls linearly as
 * the oldest bucket slides out; at each boundary a bucket leaves and debt
 * is paid into the new one.  So the ring is stepped forward on a copy,
 * bucket by bucket, and the linear equation solved in each: exact, and
 * O(SLOTS) per turn of the ring.  After MDGPUD_SCHED_CAP_LOOKAHEAD turns
 * (only a debt of several budgets lasts that long) the time reached is
 * returned: a lower bound, and the caller asks again then.
 */
#define MDGPUD_SCHED_CAP_LOOKAHEAD	4

static uint64_t mdgpud_sched_cap_solve(const struct mdgpud_sched *s,
				       const struct mdgpud_sched_entity *e,
				       uint64_t from_ns)
{
	struct mdgpud_sched_cap c = mdgpud_sched_estate(e)->cap;
	uint64_t w = mdgpud_sched_cap_width_ns(s);
	uint64_t budget = mdgpud_sched_cap_budget_ns(s, e);
	uint64_t need = mdgpud_sched_cap_slice_ns(s, e);
	uint64_t t0 = from_ns;

	for (uint32_t i = 0;
	     i < MDGPUD_SCHED_CAP_LOOKAHEAD * MDGPUD_SCHED_CAP_SLOTS; i++) {
		uint64_t boundary = c.head_start_ns + w;
		uint64_t oldest = c.slot_ns[(c.head + 1) %
					    MDGPUD_SCHED_CAP_SLOTS];
		uint64_t inner = c.sum_ns - oldest;
		uint64_t owed = mdgpud_sched_sat_add(c.debt_ns, need);

		if (t0 < boundary) {
			uint64_t target, t;

			if (owed > budget || inner > budget - owed)
				goto next;
			/* inner + oldest * (boundary - t) / w <= target */
			target = budget - owed;
			if (oldest == 0)
				return t0;
			t = boundary - mdgpud_sched_mul_div(target - inner,
							    w, oldest);
			if (t < boundary)
				return t > t0 ? t : t0;
		}
next:
		mdgpud_sched_cap_step(&c, w, budget);
		if (boundary > t0)
			t0 = boundary;
	}
	return t0;
}

/*
 * Starting a slice of need ns at now is allowed when the window that ends
 * with the slice, (now + need - window, now + need], holds at most
 * budget: its usage so far (projected, as nothing runs in the future) plus
 * debt plus the slice itself.  So a tenant capped at 20% of 100 ms with
 * 10 ms slices runs [0,10) [10,20) [100,110) [110,120) ..., exactly 20%.
 */
bool mdgpud_sched_cap_allows(const struct mdgpud_sched *s,
			     const struct mdgpud_sched_entity *e,
			     uint64_t now_ns)
{
	uint64_t end;

	if (!mdgpud_sched_capped(e))
		return true;
	end = mdgpud_sched_sat_add(now_ns, mdgpud_sched_cap_slice_ns(s, e));
	return mdgpud_sched_cap_solve(s, e, end) == end;
}

/* Earliest time >= now at which the cap allows e, if e does not run. */
uint64_t mdgpud_sched_cap_next_ns(const struct mdgpud_sched *s,
				  const struct mdgpud_sched_entity *e,
				  uint64_t now_ns)
{
	uint64_t need = mdgpud_sched_cap_slice_ns(s, e);

	if (!mdgpud_sched_capped(e))
		return now_ns;
	return mdgpud_sched_cap_solve(s, e, mdgpud_sched_sat_add(now_ns,
								  need)) -
	       need;
}

void mdgpud_sched_cap_record(const struct mdgpud_sched *s,
			     struct mdgpud_sched_entity *e, uint64_t start_ns,
			     uint64_t gpu_ns)
{
	struct mdgpud_sched_cap *c = &mdgpud_sched_estate(e)->cap;
	uint64_t w = mdgpud_sched_cap_width_ns(s);
	uint64_t end_ns = mdgpud_sched_sat_add(start_ns, gpu_ns);
	uint64_t placed = 0;
	uint64_t budget, used;

	/*
	 * The scheduler has no clock of its own: the end of the charge,
	 * start + gpu_ns, is taken as now.
	 */
	mdgpud_sched_cap_advance(s, e, end_ns);
	for (uint32_t k = 0; k < MDGPUD_SCHED_CAP_SLOTS; k++) {
		uint32_t i = (c->head + MDGPUD_SCHED_CAP_SLOTS - k) %
			     MDGPUD_SCHED_CAP_SLOTS;
		uint64_t lo, hi, ss;

		if ((uint64_t)k * w > c->head_start_ns)
			break;		/* slots before time 0 */
		ss = c->head_start_ns - (uint64_t)k * w;
		lo = start_ns > ss ? start_ns : ss;
		hi = end_ns < ss + w ? end_ns : ss + w;
		if (hi > lo) {
			c->slot_ns[i] += hi - lo;
			c->sum_ns += hi - lo;
			placed += hi - lo;
		}
	}
	if (!mdgpud_sched_capped(e))
		return;
	/*
	 * Usage older than the window (a kernel longer than the window) is
	 * owed too, less what the cap allowed over that stretch of time: the
	 * tenant ran at 100% where it was entitled to cap_pct.
	 */
	if (gpu_ns > placed) {
		uint64_t old = gpu_ns - placed;
		uint64_t allowed = mdgpud_sched_mul_div(old, e->cap_pct, 100);

		c->debt_ns = mdgpud_sched_sat_add(c->debt_ns, old - allowed);
	}

	budget = mdgpud_sched_cap_budget_ns(s, e);
	used = mdgpud_sched_cap_usage_ns(s, c, end_ns);
	if (used > budget) {
		/* Move the overrun out of the window into debt, newest first. */
		uint64_t excess = used - budget;

		for (uint32_t k = 0; excess && k < MDGPUD_SCHED_CAP_SLOTS;
		     k++) {
			uint32_t i = (c->head + MDGPUD_SCHED_CAP_SLOTS - k) %
				     MDGPUD_SCHED_CAP_SLOTS;
			uint64_t take = c->slot_ns[i] < excess ?
					c->slot_ns[i] : excess;

			c->slot_ns[i] -= take;
			c->sum_ns -= take;
			c->debt_ns = mdgpud_sched_sat_add(c->debt_ns, take);
			excess -= take;
		}
	}
}

/*
 * The window length changed: bucket boundaries move, so the history cannot
 * be kept in place.  It is folded into debt, which the new window takes
 * back as room frees: a window change never forgives usage.
 */
void mdgpud_sched_cap_fold(struct mdgpud_sched_entity *e)
{
	struct mdgpud_sched_cap *c = &mdgpud_sched_estate(e)->cap;

	if (mdgpud_sched_capped(e))
		c->debt_ns = mdgpud_sched_sat_add(c->debt_ns, c->sum_ns);
	for (size_t i = 0; i < MDGPUD_SCHED_CAP_SLOTS; i++)
		c->slot_ns[i] = 0;
	c->sum_ns = 0;
	c->head = 0;
	c->started = false;
}
