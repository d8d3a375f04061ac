// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpud scheduler: entry points, validation and virtual time.  The policy
 * (who runs next) is behind struct mdgpud_sched_policy_ops in
 * sched_policy.c; the cap's window is in sched_cap.c.
 * Documentation/scheduler.md describes the algorithm and its tests.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "uapi/mdgpu.h"
#include "sched_priv.h"

uint64_t mdgpud_sched_sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/*
 * a * b / c in 64 bits: exact while a * b fits, otherwise split as
 * (a / c) * b + (a % c) * b / c, saturating at UINT64_MAX.
 */
uint64_t mdgpud_sched_mul_div(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t p, hi, lo;

	if (c == 0)
		return UINT64_MAX;
	if (!__builtin_mul_overflow(a, b, &p))
		return p / c;
	if (__builtin_mul_overflow(a / c, b, &hi) ||
	    __builtin_mul_overflow(a % c, b, &lo))
		return UINT64_MAX;
	return mdgpud_sched_sat_add(hi, lo / c);
}

uint64_t mdgpud_sched_vtime_delta(uint64_t ns, uint32_t weight)
{
	if (ns > MDGPUD_SCHED_CHARGE_NS_MAX)
		ns = MDGPUD_SCHED_CHARGE_NS_MAX;
	return ns * MDGPUD_SCHED_VTIME_SCALE / weight;
}

void mdgpud_sched_cfg_default(struct mdgpud_sched_cfg *cfg)
{
	cfg->policy = MDGPU_POLICY_BEST_EFFORT;
	cfg->timeslice_ns = MDGPU_TIMESLICE_US_DEFAULT * 1000ULL;
	cfg->cap_window_ns = MDGPUD_SCHED_CAP_WINDOW_NS_DEFAULT;
}

static int mdgpud_sched_check_cfg(const struct mdgpud_sched_cfg *cfg)
{
	if (!cfg || !mdgpud_sched_policy_ops(cfg->policy))
		return -EINVAL;
	if (cfg->timeslice_ns < MDGPU_TIMESLICE_US_MIN * 1000ULL ||
	    cfg->timeslice_ns > MDGPU_TIMESLICE_US_MAX * 1000ULL)
		return -EINVAL;
	if (cfg->cap_window_ns < MDGPUD_SCHED_CAP_WINDOW_NS_MIN ||
	    cfg->cap_window_ns > MDGPUD_SCHED_CAP_WINDOW_NS_MAX)
		return -EINVAL;
	return 0;
}

static int mdgpud_sched_check_params(uint32_t weight, uint32_t cap_pct,
				     uint32_t priority)
{
	if (weight < MDGPU_WEIGHT_MIN || weight > MDGPU_WEIGHT_MAX)
		return -EINVAL;
	if (cap_pct < MDGPU_CAP_MIN || cap_pct > MDGPU_CAP_MAX)
		return -EINVAL;
	/* MDGPU_PRIORITY_MIN is 0: an unsigned value cannot be below it. */
	if (priority > MDGPU_PRIORITY_MAX)
		return -EINVAL;
	return 0;
}

static bool mdgpud_sched_has(const struct mdgpud_sched *s,
			     const struct mdgpud_sched_entity *e)
{
	for (const struct mdgpud_sched_entity *it = s->head; it; it = it->next)
		if (it == e)
			return true;
	return false;
}

/*
 * min_vtime: the smallest vtime among competing entities, never moving
 * backwards (mod 2^64), as CFS's min_vruntime.  Entities that come back
 * are placed at it, so nobody banks credit while not competing.
 */
void mdgpud_sched_update_min_vtime(struct mdgpud_sched *s)
{
	const struct mdgpud_sched_entity *e;
	bool found = false;
	uint64_t m = 0;

	for (e = s->head; e; e = e->next) {
		if (!s->ops->competes(e))
			continue;
		if (!found || mdgpud_sched_vt_before(e->vtime, m))
			m = e->vtime;
		found = true;
	}
	if (found && mdgpud_sched_vt_before(s->min_vtime, m))
		s->min_vtime = m;
}

/* An entity coming back keeps any debt but no credit. */
uint64_t mdgpud_sched_placed_vtime(const struct mdgpud_sched *s,
				   const struct mdgpud_sched_entity *e)
{
	if (mdgpud_sched_vt_before(e->vtime, s->min_vtime))
		return s->min_vtime;
	return e->vtime;
}

void mdgpud_sched_place(struct mdgpud_sched *s, struct mdgpud_sched_entity *e)
{
	e->vtime = mdgpud_sched_placed_vtime(s, e);
}

/*
 * vtime and woken as select() compares them: the entity's own, or for
 * peek_next() its peek_* scratch.
 */
static uint64_t mdgpud_sched_key_vtime(const struct mdgpud_sched_entity *e,
				       bool peek)
{
	return peek ? mdgpud_sched_estate(e)->peek_vtime : e->vtime;
}

static bool mdgpud_sched_key_woken(const struct mdgpud_sched_entity *e,
				   bool peek)
{
	const struct mdgpud_sched_estate *st = mdgpud_sched_estate(e);

	return peek ? st->peek_woken : st->woken;
}

/*
 * Among eligible entities, the one with the smallest vtime runs, except
 * that an entity whose vtime is within one of its own slices of that
 * smallest one counts as equal and priority decides.  An entity can so run
 * ahead of its fair place by at most one slice: priority buys latency, not
 * share.  Between equal priorities the smaller vtime wins.
 *
 * Exactly equal vtimes are common: a waker is placed exactly at
 * min_vtime, level with the entity holding it, and saturating tenants with
 * equal slices run in lockstep.  An entity woken (or let run by its cap)
 * and not granted a slice since wins such a tie: it holds no credit (it
 * was clamped), so going first costs the others no share, and without
 * this a tenant that wakes next to N saturating tenants in lockstep would
 * wait N slices instead of one.  Then the entity granted a slice longest
 * ago, then add() order.
 */
static bool mdgpud_sched_better(const struct mdgpud_sched_entity *a,
				const struct mdgpud_sched_entity *b, bool peek)
{
	uint64_t va = mdgpud_sched_key_vtime(a, peek);
	uint64_t vb = mdgpud_sched_key_vtime(b, peek);
	bool wa = mdgpud_sched_key_woken(a, peek);

	if (a->priority != b->priority)
		return a->priority > b->priority;
	if (va != vb)
		return mdgpud_sched_vt_before(va, vb);
	if (wa != mdgpud_sched_key_woken(b, peek))
		return wa;
	return mdgpud_sched_estate(a)->last_pick_ns <
	       mdgpud_sched_estate(b)->last_pick_ns;
}

/* peek: compare the entities' peek_* scratch instead of their state. */
struct mdgpud_sched_entity *
mdgpud_sched_select(struct mdgpud_sched *s,
		    bool (*eligible)(const struct mdgpud_sched_entity *e),
		    bool peek)
{
	struct mdgpud_sched_entity *e, *best = NULL;
	uint64_t v0 = 0;
	bool found = false;

	for (e = s->head; e; e = e->next) {
		uint64_t v = mdgpud_sched_key_vtime(e, peek);

		if (!eligible(e))
			continue;
		if (!found || mdgpud_sched_vt_before(v, v0))
			v0 = v;
		found = true;
	}
	if (!found)
		return NULL;
	for (e = s->head; e; e = e->next) {
		uint64_t window;

		if (!eligible(e))
			continue;
		window = mdgpud_sched_vtime_delta(s->cfg.timeslice_ns,
						  s->ops->vweight(e));
		/* vtime >= v0 here */
		if (mdgpud_sched_key_vtime(e, peek) - v0 >= window)
			continue;
		if (!best || mdgpud_sched_better(e, best, peek))
			best = e;
	}
	return best;
}

int mdgpud_sched_create(const struct mdgpud_sched_cfg *cfg,
			struct mdgpud_sched **out)
{
	struct mdgpud_sched *s;
	int ret;

	if (!out)
		return -EINVAL;
	ret = mdgpud_sched_check_cfg(cfg);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->ops = mdgpud_sched_policy_ops(cfg->policy);
	s->min_vtime = MDGPUD_SCHED_VTIME_START;
	*out = s;
	return 0;
}

/* Entities are the caller's: destroy only drops the scheduler's state. */
void mdgpud_sched_destroy(struct mdgpud_sched *s)
{
	struct mdgpud_sched_entity *e, *next;

	if (!s)
		return;
	for (e = s->head; e; e = next) {
		next = e->next;
		free(e->priv);
		e->priv = NULL;
		e->next = NULL;
	}
	free(s);
}

/*
 * Re-express e's lag behind or ahead of min_vtime, from weight old_w to
 * new_w, so that the GPU time it is owed or owes is the same before and
 * after (Linux's reweight_entity() scales vlag so since EEVDF, 6.6).
 */
static void mdgpud_sched_reweight(struct mdgpud_sched *s,
				  struct mdgpud_sched_entity *e,
				  uint32_t old_w, uint32_t new_w)
{
	int64_t lag = (int64_t)(e->vtime - s->min_vtime);
	uint64_t mag;

	if (old_w == new_w)
		return;
	mag = lag < 0 ? -(uint64_t)lag : (uint64_t)lag;
	mag = mdgpud_sched_mul_div(mag, old_w, new_w);
	if (mag > (1ULL << 62))
		mag = 1ULL << 62;
	e->vtime = lag < 0 ? s->min_vtime - mag : s->min_vtime + mag;
}

int mdgpud_sched_configure(struct mdgpud_sched *s,
			   const struct mdgpud_sched_cfg *cfg)
{
	const struct mdgpud_sched_policy_ops *old_ops;
	struct mdgpud_sched_entity *e;
	bool new_window;
	int ret;

	if (!s)
		return -EINVAL;
	ret = mdgpud_sched_check_cfg(cfg);
	if (ret)
		return ret;

	old_ops = s->ops;
	new_window = cfg->cap_window_ns != s->cfg.cap_window_ns;
	mdgpud_sched_update_min_vtime(s);
	s->cfg = *cfg;
	s->ops = mdgpud_sched_policy_ops(cfg->policy);
	if (s->ops != old_ops) {
		/*
		 * A new policy starts from the present: idle time the old
		 * policy was holding for an entity is dropped, every entity
		 * keeps the GPU time it owes (rescaled to the new weights) and
		 * none keeps credit from before (it is placed as a waker).
		 */
		s->phantom = NULL;
		for (e = s->head; e; e = e->next) {
			mdgpud_sched_reweight(s, e, old_ops->vweight(e),
					      s->ops->vweight(e));
			mdgpud_sched_place(s, e);
		}
	}
	if (new_window)
		for (e = s->head; e; e = e->next)
			mdgpud_sched_cap_fold(e);
	mdgpud_sched_update_min_vtime(s);
	return 0;
}

int mdgpud_sched_add(struct mdgpud_sched *s, struct mdgpud_sched_entity *e,
		     uint64_t now_ns)
{
	struct mdgpud_sched_entity **pp;
	struct mdgpud_sched_estate *st;
	int ret;

	if (!s || !e)
		return -EINVAL;
	ret = mdgpud_sched_check_params(e->weight, e->cap_pct, e->priority);
	if (ret)
		return ret;
	for (pp = &s->head; *pp; pp = &(*pp)->next)
		if (*pp == e || (*pp)->id == e->id)
			return -EEXIST;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;

	mdgpud_sched_update_min_vtime(s);
	e->priv = st;
	e->runnable = false;
	e->vtime = s->min_vtime;
	e->gpu_ns = 0;
	e->slices = 0;
	e->next = NULL;
	st->last_pick_ns = now_ns;
	mdgpud_sched_cap_advance(s, e, now_ns);
	*pp = e;
	return 0;
}

void mdgpud_sched_remove(struct mdgpud_sched *s, struct mdgpud_sched_entity *e)
{
	struct mdgpud_sched_entity **pp;

	if (!s || !e)
		return;
	for (pp = &s->head; *pp; pp = &(*pp)->next) {
		if (*pp != e)
			continue;
		*pp = e->next;
		if (s->phantom == e)
			s->phantom = NULL;
		free(e->priv);
		e->priv = NULL;
		e->next = NULL;
		e->runnable = false;
		return;
	}
}

int mdgpud_sched_set_params(struct mdgpud_sched *s,
			    struct mdgpud_sched_entity *e, uint32_t weight,
			    uint32_t cap_pct, uint32_t priority)
{
	uint32_t old_vw;
	int ret;

	if (!s || !e)
		return -EINVAL;
	ret = mdgpud_sched_check_params(weight, cap_pct, priority);
	if (ret)
		return ret;
	if (!mdgpud_sched_has(s, e))
		return -ENOENT;

	mdgpud_sched_update_min_vtime(s);
	old_vw = s->ops->vweight(e);
	if (cap_pct == MDGPU_CAP_MAX)	/* uncapped: nothing left to owe */
		mdgpud_sched_estate(e)->cap.debt_ns = 0;
	e->weight = weight;
	e->cap_pct = cap_pct;
	e->priority = priority;
	mdgpud_sched_reweight(s, e, old_vw, s->ops->vweight(e));
	return 0;
}

/* Fixed-share: charge the idle time held for the phantom entity. */
static void mdgpud_sched_end_phantom(struct mdgpud_sched *s, uint64_t now_ns)
{
	struct mdgpud_sched_entity *p = s->phantom;
	uint64_t idle_ns;

	if (!p)
		return;
	s->phantom = NULL;
	if (now_ns <= s->phantom_start_ns)
		return;
	idle_ns = now_ns - s->phantom_start_ns;
	p->vtime += mdgpud_sched_vtime_delta(idle_ns, s->ops->vweight(p));
}

void mdgpud_sched_set_runnable(struct mdgpud_sched *s,
			       struct mdgpud_sched_entity *e, bool runnable,
			       uint64_t now_ns)
{
	if (!s || !e || !e->priv || e->runnable == runnable)
		return;
	if (s->phantom == e)
		mdgpud_sched_end_phantom(s, now_ns);
	if (runnable) {
		struct mdgpud_sched_estate *st = mdgpud_sched_estate(e);

		mdgpud_sched_update_min_vtime(s);
		mdgpud_sched_cap_advance(s, e, now_ns);
		e->runnable = true;
		st->woken = true;
		st->throttled = !mdgpud_sched_cap_allows(s, e, now_ns);
		if (!st->throttled)
			s->ops->enqueue(s, e, st->left_ns &&
					now_ns - st->left_ns <=
					MDGPUD_SCHED_BACK_SOON_SLICES *
					s->cfg.timeslice_ns);
	} else {
		mdgpud_sched_estate(e)->left_ns = now_ns;
		e->runnable = false;
		mdgpud_sched_update_min_vtime(s);
	}
}

void mdgpud_sched_pick(struct mdgpud_sched *s, uint64_t now_ns,
		       struct mdgpud_sched_decision *d)
{
	struct mdgpud_sched_entity *e;

	d->entity = NULL;
	d->slice_ns = 0;
	d->idle_until_ns = UINT64_MAX;
	if (!s)
		return;
	mdgpud_sched_end_phantom(s, now_ns);

	/*
	 * Caps: an entity over its cap stops competing (its vtime would
	 * otherwise hold min_vtime back) and, once allowed again, is placed
	 * like a waker.  min_vtime is taken before the returning entities
	 * count.
	 */
	for (e = s->head; e; e = e->next) {
		struct mdgpud_sched_estate *st = mdgpud_sched_estate(e);

		mdgpud_sched_cap_advance(s, e, now_ns);
		st->cap_ok = !e->runnable ||
			     mdgpud_sched_cap_allows(s, e, now_ns);
		if (!st->cap_ok)
			st->throttled = true;
	}
	mdgpud_sched_update_min_vtime(s);
	for (e = s->head; e; e = e->next) {
		struct mdgpud_sched_estate *st = mdgpud_sched_estate(e);

		if (st->throttled && st->cap_ok) {
			st->throttled = false;
			if (e->runnable) {
				st->woken = true;
				s->ops->enqueue(s, e, false);
			}
		}
	}
	mdgpud_sched_update_min_vtime(s);

	s->ops->pick(s, now_ns, d);
	if (d->entity) {
		d->entity->slices++;
		mdgpud_sched_estate(d->entity)->last_pick_ns = now_ns;
		mdgpud_sched_estate(d->entity)->woken = false;
	}
}

struct mdgpud_sched_entity *
mdgpud_sched_peek_next(struct mdgpud_sched *s, uint64_t now_ns,
		       const struct mdgpud_sched_entity *exclude,
		       mdgpud_sched_ready_fn ready, void *arg)
{
	struct mdgpud_sched_entity *e;

	if (!s)
		return NULL;
	for (e = s->head; e; e = e->next) {
		struct mdgpud_sched_estate *st = mdgpud_sched_estate(e);
		bool runs = ready ? ready(e, arg) : e->runnable;

		st->peek_skip = e == exclude;
		st->peek_ok = !st->peek_skip && runs &&
			      mdgpud_sched_cap_allows(s, e, now_ns);
		st->peek_vtime = e->vtime;
		/* Waking, or let run by its cap: pick() would mark it woken. */
		st->peek_woken = st->woken ||
				 (st->peek_ok &&
				  (!e->runnable || st->throttled));
	}
	return s->ops->peek(s);
}

bool mdgpud_sched_may_extend(struct mdgpud_sched *s,
			     const struct mdgpud_sched_entity *e,
			     uint64_t now_ns, mdgpud_sched_ready_fn ready,
			     void *arg)
{
	if (!s || !e || !e->priv || s->cfg.policy == MDGPU_POLICY_FIXED_SHARE ||
	    e->cap_pct < 100)
		return false;
	return !mdgpud_sched_peek_next(s, now_ns, e, ready, arg);
}

bool mdgpud_sched_owed(const struct mdgpud_sched *s,
		       const struct mdgpud_sched_entity *e,
		       uint64_t pending_ns)
{
	const struct mdgpud_sched_entity *o;
	uint64_t v;
	bool any = false;

	if (!s || !e || !e->priv || s->cfg.policy == MDGPU_POLICY_FIXED_SHARE ||
	    e->cap_pct < 100)
		return false;
	v = e->vtime + mdgpud_sched_vtime_delta(pending_ns,
						s->ops->vweight(e));
	for (o = s->head; o; o = o->next) {
		if (o == e || !s->ops->competes(o))
			continue;
		if (!mdgpud_sched_vt_before(v, o->vtime))
			return false;
		any = true;
	}
	return any;
}

void mdgpud_sched_charge(struct mdgpud_sched *s,
			 struct mdgpud_sched_entity *e, uint64_t start_ns,
			 uint64_t gpu_ns)
{
	if (!s || !e || !e->priv)
		return;		/* removed: nothing to charge */
	e->gpu_ns = mdgpud_sched_sat_add(e->gpu_ns, gpu_ns);
	e->vtime += mdgpud_sched_vtime_delta(gpu_ns, s->ops->vweight(e));
	mdgpud_sched_cap_record(s, e, start_ns, gpu_ns);
	mdgpud_sched_update_min_vtime(s);
}
