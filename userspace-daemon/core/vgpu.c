// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vGPU lifecycle: admission (type instances, quota sum), creation of its
 * tables and backend context, device reset and destruction, which both
 * free and so scrub everything it holds, and its scheduling knobs.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core_priv.h"
#include "mdgpud/log.h"

static uint32_t mdgpud_vgpu_count_type(struct mdgpud_core *c, uint32_t id)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nr_vgpus; i++)
		n += c->vgpus[i]->type->id == id;
	return n;
}

/* Quota of live vGPUs together: the GPU is never overcommitted. */
static uint64_t mdgpud_vgpu_quota_sum(struct mdgpud_core *c)
{
	uint64_t s = 0;

	for (uint32_t i = 0; i < c->nr_vgpus; i++)
		s += mdgpud_memtab_quota(c->vgpus[i]->mem);
	return s;
}

int mdgpud_vgpu_create(struct mdgpud_core *c,
		       const struct mdgpud_vgpu_params *p,
		       struct mdgpud_vgpu **out)
{
	const struct mdgpud_vtype *t;
	struct mdgpud_vgpu *v;
	uint64_t quota, ap, sum;
	int ret;

	t = p->type_name ? mdgpud_vtype_by_name(p->type_name) :
			   mdgpud_vtype_by_id(p->type_id);
	if (!t)
		return -ENOENT;
	quota = mdgpud_vtype_fb_quota(t, c->gpu.fb_size);
	ap = t->aperture_mib << 20;
	if (!p->ring_entries || (p->ring_entries & (p->ring_entries - 1)) ||
	    p->ring_entries > c->cfg.ring_entries_max)
		return -EINVAL;
	/* The type's aperture plus, on transports that have it, a zero-copy
	 * host area of at most host_mib_max. */
	if (p->aperture_size < ap ||
	    p->aperture_size - ap > ((uint64_t)c->cfg.host_mib_max << 20))
		return -EINVAL;

	pthread_mutex_lock(&c->lock);
	ret = 0;
	if (c->nr_vgpus >= c->cfg.max_vgpus ||
	    mdgpud_vgpu_count_type(c, t->id) >= t->max_instances)
		ret = -EBUSY;
	else if (__builtin_add_overflow(mdgpud_vgpu_quota_sum(c), quota,
					&sum) || sum > c->gpu.fb_size)
		ret = -ENOSPC;
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return ret;

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->core = c;
	v->type = t;
	v->entries = p->ring_entries;
	v->ring = p->ring;
	v->tops = p->tops;
	v->tpriv = p->tpriv;
	v->seen_ns = calloc(v->entries, sizeof(*v->seen_ns));
	if (!v->seen_ns) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = mdgpud_memtab_create(quota, c->cfg.max_allocs, &v->mem);
	if (ret)
		goto err_free;
	ret = mdgpud_handles_create(c->cfg.max_handles, &v->handles);
	if (ret)
		goto err_mem;

	pthread_mutex_lock(&c->lock);
	v->id = ++c->next_id;
	pthread_mutex_unlock(&c->lock);
	ret = c->bops->ctx_create(c->be, v->id, &v->bctx);
	if (ret)
		goto err_handles;
	if (p->aperture_fd >= 0) {
		ret = c->bops->map_shared(v->bctx, p->aperture_fd, 0,
					  p->aperture, p->aperture_size);
		if (ret)
			goto err_ctx;
	}
	if (p->tops->dma) {
		v->bounce_size = (size_t)c->cfg.dma_bounce_kib << 10;
		v->bounce = c->bops->host_alloc(v->bctx, v->bounce_size);
		if (!v->bounce) {
			ret = -ENOMEM;
			goto err_ctx;
		}
	}
	v->vctx = (struct mdgpud_vctx){
		.mem = v->mem, .handles = v->handles,
		.aperture = p->aperture, .aperture_size = p->aperture_size,
		.iova_ok = p->tops->dma != NULL,
		.shared_bytes_max = c->cfg.shared_bytes_max,
	};
	v->entity.id = v->id;
	v->entity.weight = p->weight ? p->weight : t->default_weight;
	v->entity.cap_pct = p->cap_pct ? p->cap_pct : MDGPU_CAP_MAX;
	v->entity.priority = p->priority ? p->priority :
					   MDGPU_PRIORITY_DEFAULT;
	ret = mdgpud_sched_add(c->sched, &v->entity, mdgpud_now_ns());
	if (ret)
		goto err_bounce;

	pthread_mutex_lock(&c->lock);
	c->vgpus[c->nr_vgpus++] = v;
	pthread_mutex_unlock(&c->lock);
	mdgpud_info("vgpu %u: created, type %s, quota %" PRIu64
		    " MiB, ring %u, aperture %" PRIu64 " MiB", v->id, t->name,
		    quota >> 20, v->entries, ap >> 20);
	*out = v;
	return 0;

err_bounce:
	if (v->bounce)
		c->bops->host_free(v->bctx, v->bounce, v->bounce_size);
err_ctx:
	c->bops->ctx_destroy(v->bctx);
err_handles:
	mdgpud_handles_destroy(v->handles);
err_mem:
	mdgpud_memtab_destroy(v->mem);
err_free:
	free(v->seen_ns);
	free(v);
	return ret;
}

/* Release everything the vGPU holds on the backend; memory is scrubbed. */
static void mdgpud_vgpu_release_all(struct mdgpud_vgpu *v)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	struct mdgpud_mem_entry e;
	uint32_t cur = 0, h;
	uint64_t val;

	while (!mdgpud_handles_next(v->handles, MDGPUD_H_EVENT, &cur, &h, &val))
		b->event_destroy(v->bctx, val);
	cur = 0;
	while (!mdgpud_handles_next(v->handles, MDGPUD_H_MODULE, &cur, &h,
				    &val))
		b->module_unload(v->bctx, val);
	/* Finish whatever is still running before memory goes away. */
	b->sync(v->bctx);
	for (;;) {
		pthread_mutex_lock(&v->core->lock);
		int r = mdgpud_memtab_pop(v->mem, &e);
		pthread_mutex_unlock(&v->core->lock);

		if (r)
			break;
		r = b->mem_free(v->bctx, e.addr, e.size);
		if (r)
			mdgpud_warn("vgpu %u: free of %#" PRIx64 " failed: %s "
				    "(context teardown scrubs it)", v->id,
				    e.addr, strerror(-r));
	}
}

void mdgpud_vgpu_destroy(struct mdgpud_vgpu *v)
{
	struct mdgpud_core *c;

	if (!v)
		return;
	c = v->core;
	mdgpud_sched_remove(c->sched, &v->entity);
	mdgpud_vgpu_release_all(v);
	pthread_mutex_lock(&c->lock);
	for (uint32_t i = 0; i < c->nr_vgpus; i++) {
		if (c->vgpus[i] == v) {
			c->vgpus[i] = c->vgpus[--c->nr_vgpus];
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (v->bounce)
		c->bops->host_free(v->bctx, v->bounce, v->bounce_size);
	c->bops->ctx_destroy(v->bctx);
	mdgpud_info("vgpu %u: destroyed after %" PRIu64 " commands, %" PRIu64
		    " ns GPU time", v->id, v->commands, v->gpu_ns);
	mdgpud_handles_destroy(v->handles);
	mdgpud_memtab_destroy(v->mem);
	free(v->seen_ns);
	free(v);
}

/*
 * The device was reset (VFIO_DEVICE_RESET, CONTROL.RESET, close): the
 * kernel zeroed the ring and set SQ_HEAD = SQ_TAIL = FENCE = 0.  Commands
 * queued but not started are dropped (the client sees -ECANCELED), every
 * event, module and allocation is released through the backend (memory is
 * scrubbed), and the ring restarts at command 0.  Statistics are kept.
 * Called between slices, from the dispatcher thread (a transport's fd
 * callback), like every vGPU lifecycle call.
 */
void mdgpud_vgpu_reset(struct mdgpud_vgpu *v)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	struct mdgpud_core *c = v->core;
	struct mdgpud_mem_entry e;
	uint32_t cur = 0, h;
	uint64_t val, freed = 0;

	while (!mdgpud_handles_next(v->handles, MDGPUD_H_EVENT, &cur, &h,
				    &val)) {
		b->event_destroy(v->bctx, val);
		mdgpud_handles_del(v->handles, h, MDGPUD_H_EVENT);
	}
	cur = 0;
	while (!mdgpud_handles_next(v->handles, MDGPUD_H_MODULE, &cur, &h,
				    &val)) {
		b->module_unload(v->bctx, val);
		mdgpud_handles_del_children(v->handles, h);
		mdgpud_handles_del(v->handles, h, MDGPUD_H_MODULE);
	}
	b->sync(v->bctx);
	for (;;) {
		int r;

		pthread_mutex_lock(&c->lock);
		r = mdgpud_memtab_pop(v->mem, &e);
		pthread_mutex_unlock(&c->lock);
		if (r)
			break;
		freed += e.size;
		r = b->mem_free(v->bctx, e.addr, e.size);
		if (r)
			mdgpud_warn("vgpu %u: reset: free of %#" PRIx64
				    " failed: %s", v->id, e.addr,
				    strerror(-r));
	}
	if (v->runnable) {
		mdgpud_sched_set_runnable(c->sched, &v->entity, false,
					  mdgpud_now_ns());
		v->runnable = false;
	}
	mdgpud_info("vgpu %u: reset: %u queued commands cancelled, %" PRIu64
		    " bytes freed and scrubbed", v->id,
		    v->observed_tail - v->head, freed);
	v->head = v->observed_tail = 0;
	v->fence = 0;
	v->ring_broken = false;
}

int mdgpud_vgpu_set_knobs(struct mdgpud_vgpu *v, uint32_t weight,
			  uint32_t cap_pct, uint32_t priority)
{
	int ret;

	/* The lock: stats readers look at the entity's knobs. */
	pthread_mutex_lock(&v->core->lock);
	ret = mdgpud_sched_set_params(v->core->sched, &v->entity, weight,
				      cap_pct, priority);
	pthread_mutex_unlock(&v->core->lock);
	if (ret)
		mdgpud_warn("vgpu %u: knobs weight %u cap %u priority %u "
			    "refused: %s", v->id, weight, cap_pct, priority,
			    strerror(-ret));
	return ret;
}

uint32_t mdgpud_vgpu_id(const struct mdgpud_vgpu *v)
{
	return v->id;
}

uint64_t mdgpud_vgpu_fb_quota(const struct mdgpud_vgpu *v)
{
	return mdgpud_memtab_quota(v->mem);
}
