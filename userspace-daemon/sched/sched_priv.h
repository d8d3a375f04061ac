/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpud scheduler internals, shared by sched.c (entry points, virtual
 * time), sched_policy.c (the policy ops table) and sched_cap.c (the cap's
 * sliding window).  Not installed; nothing outside the sched/ sources includes it.
 */
#ifndef MDGPUD_SCHED_PRIV_H
#define MDGPUD_SCHED_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "mdgpud/sched.h"

/*
 * Virtual time.  An entity charged ns of GPU time advances its vtime by
 * ns * MDGPUD_SCHED_VTIME_SCALE / weight, so an entity of weight
 * MDGPU_WEIGHT_MAX advances at wall speed and one of weight 1 a hundred
 * times faster.  vtime is compared modulo 2^64 (signed difference, as CFS
 * compares vruntime), and starts 2^36 below the wrap (0.69 s of GPU time
 * at weight 1, 69 s at weight 100) so that the tests cross it
 * (test_overflow checks that it does): a comparison that is not wrap-safe
 * breaks the tests instead of a daemon months later.
 */
#define MDGPUD_SCHED_VTIME_SCALE	100ULL	/* == MDGPU_WEIGHT_MAX */
#define MDGPUD_SCHED_VTIME_START	(UINT64_MAX - (1ULL << 36) + 1)
/*
 * One charge is clamped to this many ns (about 1.46 years) so that its
 * vtime delta, at most 100 times larger, stays below 2^62 and every
 * difference of two vtimes keeps its sign.
 */
#define MDGPUD_SCHED_CHARGE_NS_MAX	((1ULL << 62) / MDGPUD_SCHED_VTIME_SCALE)

/*
 * Cap accounting: a sliding window of cap_window_ns, kept as
 * MDGPUD_SCHED_CAP_BUCKETS buckets of window/BUCKETS ns each plus the
 * bucket now filling, in a ring (sched_cap.c).
 */
#define MDGPUD_SCHED_CAP_BUCKETS	64
#define MDGPUD_SCHED_CAP_SLOTS		(MDGPUD_SCHED_CAP_BUCKETS + 1)

struct mdgpud_sched_cap {
	uint64_t slot_ns[MDGPUD_SCHED_CAP_SLOTS];	/* GPU ns per bucket */
	uint64_t sum_ns;		/* sum of slot_ns[] */
	uint64_t head_start_ns;		/* start of the bucket now filling */
	uint64_t debt_ns;		/* charged, not yet in the window */
	uint32_t head;			/* index of the bucket now filling */
	bool started;			/* head_start_ns is valid */
};

/* Per-entity state behind mdgpud_sched_entity.priv. */
struct mdgpud_sched_estate {
	struct mdgpud_sched_cap cap;
	uint64_t last_pick_ns;		/* when last granted a slice */
	bool woken;			/* placed since its last slice */
	bool throttled;			/* runnable but over its cap */
	bool cap_ok;			/* scratch of pick(): cap allows now */
	/* When it last stopped being runnable (mdgpud_sched_set_runnable
	 * tells a brief absence from it). */
	uint64_t left_ns;
	/* Scratch of peek_next(): e as the next pick would find it. */
	bool peek_skip;			/* the entity left out */
	bool peek_ok;			/* would be runnable, cap allowing */
	bool peek_woken;		/* would count as woken */
	uint64_t peek_vtime;		/* vtime it would compete with */
};

/*
 * An entity that stops being runnable and is runnable again within this
 * many timeslices keeps its vtime, down to this many timeslices at the
 * smallest weight behind min_vtime (Documentation/scheduler.md, "Brief
 * absences"): its queue was empty for a moment, it did not sleep.
 */
#define MDGPUD_SCHED_BACK_SOON_SLICES	2

struct mdgpud_sched;

/*
 * A scheduling policy.  The entry points in sched.c do the bookkeeping
 * common to every policy (validation, cap windows, charging); a policy
 * says which weight drives virtual time, which entities compete for the
 * GPU, how an entity that comes back (wakes or leaves its cap) is placed,
 * and picks.
 */
struct mdgpud_sched_policy_ops {
	/* Weight that divides charged time into vtime: 1..MDGPU_WEIGHT_MAX. */
	uint32_t (*vweight)(const struct mdgpud_sched_entity *e);
	/*
	 * Does e hold a place in the schedule now?  Competing entities define
	 * min_vtime; a work-conserving policy lets only entities that can run
	 * compete, a reserving one lets every entity compete.
	 */
	bool (*competes)(const struct mdgpud_sched_entity *e);
	/*
	 * e became runnable, or its cap let it run again: place it.
	 * back_soon: e became runnable within MDGPUD_SCHED_BACK_SOON_SLICES
	 * timeslices of leaving and its cap allows it now (a brief
	 * absence); false after a longer absence and for a cap release.
	 */
	void (*enqueue)(struct mdgpud_sched *s, struct mdgpud_sched_entity *e,
			bool back_soon);
	/* Fill *d; caps are up to date and min_vtime is current. */
	void (*pick)(struct mdgpud_sched *s, uint64_t now_ns,
		     struct mdgpud_sched_decision *d);
	/*
	 * The entity pick() would choose if every entity's state were its
	 * peek_* scratch (filled by mdgpud_sched_peek_next(), vtimes as they
	 * are now; the policy places the entities that would come back), or
	 * NULL for none.  Changes nothing outside the scratch.
	 */
	struct mdgpud_sched_entity *(*peek)(struct mdgpud_sched *s);
};

struct mdgpud_sched {
	struct mdgpud_sched_cfg cfg;
	const struct mdgpud_sched_policy_ops *ops;	/* ops for cfg.policy */
	struct mdgpud_sched_entity *head;	/* entities, in add() order */
	uint64_t min_vtime;		/* monotonic (mod 2^64) floor, as CFS */
	/*
	 * Fixed-share only: the GPU is being left idle on behalf of this
	 * entity (which cannot run) since phantom_start_ns; the idle time is
	 * charged to its vtime at the next pick.
	 */
	struct mdgpud_sched_entity *phantom;
	uint64_t phantom_start_ns;
};

static inline struct mdgpud_sched_estate *
mdgpud_sched_estate(const struct mdgpud_sched_entity *e)
{
	return e->priv;
}

/* a < b in wrap-safe virtual time. */
static inline bool mdgpud_sched_vt_before(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) < 0;
}

/* sched.c */
uint64_t mdgpud_sched_vtime_delta(uint64_t ns, uint32_t weight);
void mdgpud_sched_update_min_vtime(struct mdgpud_sched *s);
uint64_t mdgpud_sched_placed_vtime(const struct mdgpud_sched *s,
				   const struct mdgpud_sched_entity *e);
void mdgpud_sched_place(struct mdgpud_sched *s, struct mdgpud_sched_entity *e);
struct mdgpud_sched_entity *
mdgpud_sched_select(struct mdgpud_sched *s,
		    bool (*eligible)(const struct mdgpud_sched_entity *e),
		    bool peek);
uint64_t mdgpud_sched_sat_add(uint64_t a, uint64_t b);
uint64_t mdgpud_sched_mul_div(uint64_t a, uint64_t b, uint64_t c);

/* sched_policy.c */
const struct mdgpud_sched_policy_ops *mdgpud_sched_policy_ops(uint32_t policy);

/* sched_cap.c */
uint64_t mdgpud_sched_cap_budget_ns(const struct mdgpud_sched *s,
				    const struct mdgpud_sched_entity *e);
void mdgpud_sched_cap_advance(const struct mdgpud_sched *s,
			      struct mdgpud_sched_entity *e, uint64_t now_ns);
uint64_t mdgpud_sched_cap_slice_ns(const struct mdgpud_sched *s,
				   const struct mdgpud_sched_entity *e);
bool mdgpud_sched_cap_allows(const struct mdgpud_sched *s,
			     const struct mdgpud_sched_entity *e,
			     uint64_t now_ns);
uint64_t mdgpud_sched_cap_next_ns(const struct mdgpud_sched *s,
				  const struct mdgpud_sched_entity *e,
				  uint64_t now_ns);
void mdgpud_sched_cap_record(const struct mdgpud_sched *s,
			     struct mdgpud_sched_entity *e, uint64_t start_ns,
			     uint64_t gpu_ns);
void mdgpud_sched_cap_fold(struct mdgpud_sched_entity *e);

#endif /* MDGPUD_SCHED_PRIV_H */
