/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpud scheduler: a pure policy module.  No threads, no clocks, no I/O:
 * the caller passes time in and charges measured GPU time back, so the
 * policy is unit-tested with a simulated clock.
 *
 * Model.  Entities (vGPUs) are runnable or idle.  The dispatcher asks
 * mdgpud_sched_pick() which entity owns the next slice, runs that entity's
 * work alone on the GPU for up to the returned slice, measures the GPU time
 * really used (which may exceed the slice: kernels are not preemptible) and
 * reports it with mdgpud_sched_charge().  Overruns are charged in full and
 * so paid back by later slices.
 *
 * Policies (enum mdgpu_policy):
 *   BEST_EFFORT  weighted fair sharing by virtual time (vtime += ns *
 *                SCALE / weight); work-conserving: idle entities' time
 *                goes to runnable ones.
 *   EQUAL_SHARE  the same with every weight taken as 1.
 *   FIXED_SHARE  each entity is reserved weight / sum(weights of all
 *                entities, runnable or not) of the GPU within each period;
 *                time reserved for an idle entity is left idle (not
 *                work-conserving).
 *   cap (any policy): an entity never gets more than cap_pct percent of
 *                GPU time over a sliding window of cap_window_ns.
 *   priority:    among entities whose virtual times are equal (within one
 *                slice), the higher priority runs first.
 *
 * Not thread-safe: the dispatcher serialises calls.
 */
#ifndef MDGPUD_SCHED_H
#define MDGPUD_SCHED_H

#include <stdbool.h>
#include <stdint.h>

struct mdgpud_sched;

struct mdgpud_sched_cfg {
	uint32_t policy;		/* enum mdgpu_policy */
	uint64_t timeslice_ns;		/* length of one slice */
	uint64_t cap_window_ns;		/* window for caps, e.g. 100 ms */
};

/*
 * timeslice_ns must lie in MDGPU_TIMESLICE_US_MIN..MAX (uapi, in us) times
 * 1000.  The uapi has no knob for the cap window; the daemon's range is
 * below.  Documentation/scheduler.md explains the choices.
 */
#define MDGPUD_SCHED_CAP_WINDOW_NS_MIN		1000000ULL	/* 1 ms */
#define MDGPUD_SCHED_CAP_WINDOW_NS_MAX		60000000000ULL	/* 60 s */
#define MDGPUD_SCHED_CAP_WINDOW_NS_DEFAULT	100000000ULL	/* 100 ms */

/* Fill *cfg with the defaults: best-effort, 10 ms slices, 100 ms window. */
void mdgpud_sched_cfg_default(struct mdgpud_sched_cfg *cfg);

/* The name of a policy (MDGPU_POLICY_NAMES), "unknown" out of range. */
const char *mdgpud_sched_policy_name(uint32_t policy);
/* The policy called `name`, -EINVAL when none is. */
int mdgpud_sched_policy_parse(const char *name);

struct mdgpud_sched_entity {
	uint32_t id;
	uint32_t weight;		/* MDGPU_WEIGHT_MIN..MAX */
	uint32_t cap_pct;		/* MDGPU_CAP_MIN..MAX, 100 = none */
	uint32_t priority;		/* MDGPU_PRIORITY_MIN..MAX */
	/* Owned by the scheduler; read-only to callers. */
	bool runnable;
	uint64_t vtime;			/* weighted virtual time */
	uint64_t gpu_ns;		/* total GPU time charged */
	uint64_t slices;		/* slices granted */
	void *priv;			/* policy's per-entity state */
	struct mdgpud_sched_entity *next;	/* scheduler's list */
};

/* Result of a pick. */
struct mdgpud_sched_decision {
	struct mdgpud_sched_entity *entity;	/* NULL: stay idle */
	uint64_t slice_ns;		/* run entity for at most this long */
	uint64_t idle_until_ns;		/* entity == NULL: next event, or
					 * UINT64_MAX when nothing is runnable */
};

int mdgpud_sched_create(const struct mdgpud_sched_cfg *cfg,
			struct mdgpud_sched **out);
void mdgpud_sched_destroy(struct mdgpud_sched *s);
/* Reconfigure live (policy/timeslice knobs); -EINVAL on bad values. */
int mdgpud_sched_configure(struct mdgpud_sched *s,
			   const struct mdgpud_sched_cfg *cfg);

/*
 * Entities are caller-owned memory; add() validates weight/cap/priority
 * (-EINVAL), refuses an entity or id already added (-EEXIST), and starts e
 * idle, at the current min_vtime, with gpu_ns and slices zero.
 */
int mdgpud_sched_add(struct mdgpud_sched *s, struct mdgpud_sched_entity *e,
		     uint64_t now_ns);
/*
 * After remove() the scheduler holds no pointer to e (e may be freed at
 * once) and a charge() of e is ignored.  Removing an entity not added is
 * a no-op.
 */
void mdgpud_sched_remove(struct mdgpud_sched *s,
			 struct mdgpud_sched_entity *e);
/* -EINVAL on a bad value (nothing changed), -ENOENT if e was not added. */
int mdgpud_sched_set_params(struct mdgpud_sched *s,
			    struct mdgpud_sched_entity *e, uint32_t weight,
			    uint32_t cap_pct, uint32_t priority);
void mdgpud_sched_set_runnable(struct mdgpud_sched *s,
			       struct mdgpud_sched_entity *e, bool runnable,
			       uint64_t now_ns);

/*
 * Pick again when idle_until_ns is reached, after a set_runnable(true),
 * and after each charge().  Fixed-share may answer "idle" while entities
 * are runnable: the time is reserved for an entity that cannot use it.
 * A capped entity's slice is min(timeslice, cap budget of one window).
 */
void mdgpud_sched_pick(struct mdgpud_sched *s, uint64_t now_ns,
		       struct mdgpud_sched_decision *d);
/*
 * A hint for a dispatcher that gets the next entity ready while the
 * current slice drains: the entity the next pick() would most likely
 * choose if `exclude` (the entity running now, or NULL) had no work left
 * and every other entity were runnable exactly when ready(e, arg) is true
 * (ready NULL: as set_runnable() left it).  The policy answers: an entity
 * that would become runnable, or that its cap lets run again, is placed
 * as a wake places it; one its cap holds back is not chosen; fixed-share
 * chooses none when the turn is reserved for an entity not ready.  vtimes
 * are taken as they are (exclude's slice not yet charged).  NULL when
 * none would run.  Changes no state: pick() decides as it would have.
 */
typedef bool (*mdgpud_sched_ready_fn)(const struct mdgpud_sched_entity *e,
				      void *arg);
struct mdgpud_sched_entity *
mdgpud_sched_peek_next(struct mdgpud_sched *s, uint64_t now_ns,
		       const struct mdgpud_sched_entity *exclude,
		       mdgpud_sched_ready_fn ready, void *arg);
/*
 * Whether the running entity `e` may keep the GPU past the end of its
 * slice: true when ending the slice would give the GPU to no one, i.e.
 * the policy is work-conserving (not fixed-share), e has no cap, and
 * peek_next(e, ready, arg) answers none.  The caller still charges the
 * whole slice when it ends.  Changes no state.
 */
bool mdgpud_sched_may_extend(struct mdgpud_sched *s,
			     const struct mdgpud_sched_entity *e,
			     uint64_t now_ns, mdgpud_sched_ready_fn ready,
			     void *arg);
/*
 * Whether the running entity `e`, charged `pending_ns` more of GPU time,
 * would still be behind every other competing entity (its vtime before
 * theirs): it is owed GPU time, so a moment with its queue empty need
 * not hand the GPU to them.  False under fixed-share, for a capped
 * entity, and when no other entity competes.  Changes no state.
 */
bool mdgpud_sched_owed(const struct mdgpud_sched *s,
		       const struct mdgpud_sched_entity *e,
		       uint64_t pending_ns);
/* The entity ran from start_ns and really used gpu_ns of GPU time. */
void mdgpud_sched_charge(struct mdgpud_sched *s,
			 struct mdgpud_sched_entity *e, uint64_t start_ns,
			 uint64_t gpu_ns);

#endif /* MDGPUD_SCHED_H */
