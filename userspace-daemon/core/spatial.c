// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Spatial groups (Documentation/spatial.md): vGPUs with an SM share run
 * side by side on the GPU (MPS clients) and are scheduled together.  A
 * group is one scheduler entity; its knobs are derived from its members':
 *
 *   weight    the sum of the members' weights, at most MDGPU_WEIGHT_MAX:
 *             a group competes against time-sliced vGPUs as its members
 *             together would (each side by side with the others)
 *   cap       the largest of the members' caps: the group runs while its
 *             least limited member may
 *   priority  the highest of the members'
 *
 * Members join the first group whose shares leave room for theirs (first
 * fit, in creation order); a group goes with its last member.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "core_priv.h"
#include "mdgpud/log.h"

uint32_t mdgpud_spatial_share(const struct mdgpud_core *c,
			      const struct mdgpud_vtype *t)
{
	if (c->cfg.spatial == MDGPUD_SPATIAL_NONE || !t->sm_percent ||
	    t->sm_percent >= 100)
		return 0;
	return t->sm_percent;
}

struct mdgpud_sgroup *
mdgpud_spatial_group_of(const struct mdgpud_sched_entity *e)
{
	if (!(e->id & MDGPUD_SGROUP_ID_BIT))
		return NULL;
	return (struct mdgpud_sgroup *)((char *)e -
					offsetof(struct mdgpud_sgroup, entity));
}

/* The group's knobs from its members' (above). */
static void mdgpud_spatial_knobs(const struct mdgpud_sgroup *g,
				 uint32_t *weight, uint32_t *cap,
				 uint32_t *prio)
{
	uint32_t w = 0;

	*cap = MDGPU_CAP_MIN;
	*prio = MDGPU_PRIORITY_MIN;
	for (uint32_t i = 0; i < g->nr_members; i++) {
		const struct mdgpud_sched_entity *m = &g->members[i]->entity;

		w += m->weight;		/* <= 99 x MDGPU_WEIGHT_MAX */
		if (m->cap_pct > *cap)
			*cap = m->cap_pct;
		if (m->priority > *prio)
			*prio = m->priority;
	}
	*weight = w < MDGPU_WEIGHT_MAX ? w : MDGPU_WEIGHT_MAX;
	if (*weight < MDGPU_WEIGHT_MIN)
		*weight = MDGPU_WEIGHT_MIN;
}

static int mdgpud_spatial_refresh(struct mdgpud_core *c,
				  struct mdgpud_sgroup *g)
{
	uint32_t w, cap, prio;

	mdgpud_spatial_knobs(g, &w, &cap, &prio);
	return mdgpud_sched_set_params(c->sched, &g->entity, w, cap, prio);
}

static struct mdgpud_sgroup *mdgpud_spatial_new(struct mdgpud_core *c,
						uint64_t now_ns)
{
	struct mdgpud_sgroup *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->entity.id = MDGPUD_SGROUP_ID_BIT |
		       (++c->next_sgroup_id & ~MDGPUD_SGROUP_ID_BIT);
	/* Placeholders until the first member's knobs are in. */
	g->entity.weight = MDGPU_WEIGHT_MIN;
	g->entity.cap_pct = MDGPU_CAP_MAX;
	g->entity.priority = MDGPU_PRIORITY_DEFAULT;
	if (mdgpud_sched_add(c->sched, &g->entity, now_ns)) {
		free(g);
		return NULL;
	}
	g->next = c->sgroups;
	c->sgroups = g;
	return g;
}

static void mdgpud_spatial_free(struct mdgpud_core *c,
				struct mdgpud_sgroup *g)
{
	for (struct mdgpud_sgroup **p = &c->sgroups; *p; p = &(*p)->next) {
		if (*p == g) {
			*p = g->next;
			break;
		}
	}
	mdgpud_sched_remove(c->sched, &g->entity);
	free(g);
}

int mdgpud_spatial_join(struct mdgpud_vgpu *v, uint64_t now_ns)
{
	struct mdgpud_core *c = v->core;
	struct mdgpud_sgroup *g;
	int ret;

	/* The member's knobs, validated as the scheduler would. */
	if (v->entity.weight < MDGPU_WEIGHT_MIN ||
	    v->entity.weight > MDGPU_WEIGHT_MAX ||
	    v->entity.cap_pct < MDGPU_CAP_MIN ||
	    v->entity.cap_pct > MDGPU_CAP_MAX ||
	    v->entity.priority > MDGPU_PRIORITY_MAX ||
	    !v->sm_share || v->sm_share >= 100)
		return -EINVAL;
	for (g = c->sgroups; g; g = g->next)
		if (g->share_sum + v->sm_share <= 100 &&
		    g->nr_members < MDGPUD_SGROUP_MEMBERS_MAX)
			break;
	if (!g) {
		g = mdgpud_spatial_new(c, now_ns);
		if (!g)
			return -ENOMEM;
	}
	g->members[g->nr_members++] = v;
	g->share_sum += v->sm_share;
	v->group = g;
	ret = mdgpud_spatial_refresh(c, g);
	if (ret) {
		mdgpud_spatial_leave(v);
		return ret;
	}
	mdgpud_info("vgpu %u: spatial, %u%% of the SMs, group %u (%u%% "
		    "taken by %u vGPUs)", v->id, v->sm_share,
		    g->entity.id & ~MDGPUD_SGROUP_ID_BIT, g->share_sum,
		    g->nr_members);
	return 0;
}

void mdgpud_spatial_leave(struct mdgpud_vgpu *v)
{
	struct mdgpud_sgroup *g = v->group;
	struct mdgpud_core *c = v->core;

	if (!g)
		return;
	for (uint32_t i = 0; i < g->nr_members; i++) {
		if (g->members[i] == v) {
			g->members[i] = g->members[--g->nr_members];
			break;
		}
	}
	g->share_sum -= v->sm_share;
	v->group = NULL;
	if (!g->nr_members) {
		mdgpud_spatial_free(c, g);
		return;
	}
	mdgpud_spatial_refresh(c, g);
	/* v's runnable state no longer counts for the group. */
	v->runnable = false;
	mdgpud_spatial_set_runnable(g->members[0], g->members[0]->runnable,
				    mdgpud_now_ns());
}

int mdgpud_spatial_set_knobs(struct mdgpud_vgpu *v, uint32_t weight,
			     uint32_t cap_pct, uint32_t priority)
{
	struct mdgpud_sched_entity old = v->entity;
	int ret;

	if (weight < MDGPU_WEIGHT_MIN || weight > MDGPU_WEIGHT_MAX ||
	    cap_pct < MDGPU_CAP_MIN || cap_pct > MDGPU_CAP_MAX ||
	    priority > MDGPU_PRIORITY_MAX)
		return -EINVAL;
	v->entity.weight = weight;
	v->entity.cap_pct = cap_pct;
	v->entity.priority = priority;
	ret = mdgpud_spatial_refresh(v->core, v->group);
	if (ret) {
		v->entity.weight = old.weight;
		v->entity.cap_pct = old.cap_pct;
		v->entity.priority = old.priority;
	}
	return ret;
}

void mdgpud_spatial_set_runnable(struct mdgpud_vgpu *v, bool runnable,
				 uint64_t now_ns)
{
	struct mdgpud_sgroup *g = v->group;
	bool any = false;

	v->runnable = runnable;
	if (!g) {
		mdgpud_sched_set_runnable(v->core->sched, &v->entity, runnable,
					  now_ns);
		return;
	}
	for (uint32_t i = 0; i < g->nr_members; i++)
		any |= g->members[i]->runnable;
	if (any != g->runnable) {
		mdgpud_sched_set_runnable(v->core->sched, &g->entity, any,
					  now_ns);
		g->runnable = any;
	}
}

/*
 * Measured on the H100 (Documentation/spatial.md, "MPS findings"): a GPU
 * fault in one MPS client loses the context of every client of the
 * server, and new contexts fail until those clients are gone.  So every
 * spatial vGPU is marked lost with the same error at once, instead of
 * each finding out at its next command; each reset gives it a new
 * context, and the server takes new clients once the old ones are gone.
 * Time-sliced vGPUs are not MPS clients and are untouched.
 */
void mdgpud_spatial_lost(struct mdgpud_vgpu *v)
{
	struct mdgpud_core *c = v->core;

	if (!v->sm_share || v->ctx_err != -EIO)
		return;
	for (uint32_t i = 0; i < c->nr_vgpus; i++) {
		struct mdgpud_vgpu *o = c->vgpus[i];

		if (o == v || !o->sm_share || o->ctx_err)
			continue;
		mdgpud_warn("vgpu %u: spatial neighbour vgpu %u faulted: its "
			    "MPS server lost every client's context", o->id,
			    v->id);
		mdgpud_vgpu_mark_lost(o, -EIO, v->ctx_err_code);
	}
}
