// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vGPU lifecycle: admission (type instances, quota sum), creation of its
 * tables and backend context, device reset and destruction, which both
 * free and so scrub everything it holds, and its scheduling knobs.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/*
 * What ctx_overhead_mib = auto means per backend.  cuda: measured on the
 * H100 (driver 580.159, 2026-11-24, test_limits' test_measure_ctx_overhead):
 * 525.6 MiB of device memory per worker context, rounded up.  sim: its
 * contexts cost no simulated device memory.
 */
#define MDGPUD_CTX_OVERHEAD_CUDA_MIB	526

uint64_t mdgpud_vgpu_ctx_overhead(const struct mdgpud_core *c)
{
	uint64_t mib = c->cfg.ctx_overhead_mib;

	if (mib == MDGPUD_CTX_OVERHEAD_AUTO)
		mib = c->gpu.kind == MDGPU_BACKEND_CUDA ?
		      MDGPUD_CTX_OVERHEAD_CUDA_MIB : 0;
	return mib << 20;	/* config.c: at most 2^20 MiB */
}

/*
 * The quota of a vGPU of type t.  A fixed type (fb_mib) gets what it
 * names, its context's overhead comes on top; a share of the GPU
 * (fb_divisor) gets its share minus the overhead, so that max_instances
 * of it, contexts included, still fit ("full" stays admissible).
 * -ENOSPC when the share does not even cover the overhead.
 */
int mdgpud_vgpu_type_quota(const struct mdgpud_core *c,
			   const struct mdgpud_vtype *t, uint64_t *quota)
{
	uint64_t q = mdgpud_vtype_fb_quota(t, c->gpu.fb_size);
	uint64_t ovh = mdgpud_vgpu_ctx_overhead(c);

	if (t->fb_divisor) {
		if (q <= ovh)
			return -ENOSPC;
		q -= ovh;
	}
	*quota = q;
	return 0;
}

/*
 * Admission by device memory: every live vGPU's quota and context
 * overhead plus the new one's must fit in what the daemon partitions
 * (gpu.fb_size).  Caller holds c->lock.
 */
static bool mdgpud_vgpu_fits(struct mdgpud_core *c, uint64_t quota)
{
	uint64_t ovh = mdgpud_vgpu_ctx_overhead(c), ovh_all, sum;

	return !__builtin_mul_overflow(ovh, (uint64_t)c->nr_vgpus + 1,
				       &ovh_all) &&
	       !__builtin_add_overflow(mdgpud_vgpu_quota_sum(c), quota, &sum) &&
	       !__builtin_add_overflow(sum, ovh_all, &sum) &&
	       sum <= c->gpu.fb_size;
}

/* On IOVA transports, ctx's DMA bounce buffer (*bounce_out, or NULL). */
static int mdgpud_vgpu_ctx_bounce(struct mdgpud_vgpu *v,
				  struct mdgpud_bctx *ctx, void **bounce_out)
{
	*bounce_out = NULL;
	if (v->bounce_size) {
		*bounce_out = v->core->bops->host_alloc(ctx, v->bounce_size);
		if (!*bounce_out)
			return -ENOMEM;
	}
	return 0;
}

/*
 * What v's new backend context ctx needs before its first command: the
 * transport's aperture mapped into it (zero-copy) and, on IOVA
 * transports, the DMA bounce buffer (*bounce_out, or NULL).
 * v->vctx.aperture, aperture_size and v->aperture_fd say what to map.
 */
static int mdgpud_vgpu_ctx_attach(struct mdgpud_vgpu *v,
				  struct mdgpud_bctx *ctx, void **bounce_out)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	int ret;

	*bounce_out = NULL;
	if (v->aperture_fd >= 0) {
		ret = b->map_shared(ctx, v->aperture_fd, 0, v->vctx.aperture,
				    v->vctx.aperture_size);
		if (ret)
			return ret;
	}
	return mdgpud_vgpu_ctx_bounce(v, ctx, bounce_out);
}

/*
 * A started context is usable: its aperture's mapping is started and not
 * waited for where the backend can (map_shared_start: the worker pins up
 * to host_mib_max of it), so v->attaching; else v is attached here.
 */
static int mdgpud_vgpu_ctx_attach_start(struct mdgpud_vgpu *v)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	int ret;

	if (v->aperture_fd < 0 || !b->map_shared_start || !b->map_shared_poll)
		return mdgpud_vgpu_ctx_attach(v, v->bctx, &v->bounce);
	ret = b->map_shared_start(v->bctx, v->aperture_fd, 0,
				  v->vctx.aperture, v->vctx.aperture_size);
	if (!ret)
		v->attaching = true;
	return ret;
}

/* Logs why a spatial vGPU got no context (ret from the backend). */
static void mdgpud_vgpu_spatial_refused(struct mdgpud_vgpu *v, int ret)
{
	mdgpud_err("vgpu %u: type %s is spatial (%u%% of the SMs) and the "
		   "backend cannot run it side by side: %s", v->id,
		   v->type->name, v->sm_share,
		   ret == -ENXIO ? "MPS is not running" : strerror(-ret));
}

/*
 * A backend context for v, waited for (a backend without ctx_start),
 * with what it needs from the start (mdgpud_vgpu_ctx_attach).
 */
static int mdgpud_vgpu_ctx_open(struct mdgpud_vgpu *v,
				struct mdgpud_bctx **ctx_out, void **bounce_out)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	struct mdgpud_bctx *ctx;
	int ret;

	if (v->sm_share) {
		/* Spatial: an MPS client, or refused; never time-sliced in
		 * its place. */
		ret = b->ctx_create_spatial ?
		      b->ctx_create_spatial(v->core->be, v->id, v->sm_share,
					    &ctx) : -EOPNOTSUPP;
		if (ret)
			mdgpud_vgpu_spatial_refused(v, ret);
	} else {
		ret = b->ctx_create(v->core->be, v->id, &ctx);
	}
	if (ret)
		return ret;
	ret = mdgpud_vgpu_ctx_attach(v, ctx, bounce_out);
	if (ret) {
		b->ctx_destroy(ctx);
		return ret;
	}
	*ctx_out = ctx;
	return 0;
}

static void mdgpud_vgpu_event(struct mdgpud_vgpu *v, uint32_t event);

/* v's context starts (true) or no longer does; the dispatcher polls
 * while any does. */
static void mdgpud_vgpu_set_starting(struct mdgpud_vgpu *v, bool starting)
{
	struct mdgpud_core *c = v->core;

	if (v->starting == starting)
		return;
	if (starting)
		c->nr_starting++;
	else
		c->nr_starting--;
	pthread_mutex_lock(&c->lock);
	v->starting = starting;
	pthread_mutex_unlock(&c->lock);
}

/*
 * A new backend context for v, in *ctx_out: started and not waited for
 * when the backend has ctx_start (*started true; mdgpud_vgpu_start_poll
 * completes it), else created and attached here (*bounce_out).  Fails
 * only with what the backend could tell at once; v is not changed.
 */
static int mdgpud_vgpu_ctx_begin(struct mdgpud_vgpu *v,
				 struct mdgpud_bctx **ctx_out,
				 void **bounce_out, bool *started)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	int ret;

	*started = false;
	*bounce_out = NULL;
	if (!b->ctx_start || !b->ctx_start_poll)
		return mdgpud_vgpu_ctx_open(v, ctx_out, bounce_out);
	ret = b->ctx_start(v->core->be, v->id, v->sm_share, ctx_out);
	if (ret && v->sm_share)
		mdgpud_vgpu_spatial_refused(v, ret);
	*started = !ret;
	return ret;
}

/* A reset's new context is in place: the loss is over. */
static void mdgpud_vgpu_restored(struct mdgpud_vgpu *v)
{
	pthread_mutex_lock(&v->core->lock);
	v->ctx_err = 0;
	v->ctx_err_code = 0;
	pthread_mutex_unlock(&v->core->lock);
	mdgpud_info("vgpu %u: reset: new GPU context", v->id);
	mdgpud_vgpu_event(v, MDGPU_VGPU_EVENT_RESTORED);
}

/*
 * v's context was starting (v->starting): once the backend's start is
 * done, its aperture is mapped (v->attaching while the worker pins it,
 * polled here too); done, it is attached and v may run (after a reset:
 * the loss is over, RESTORED); failed, v's context is lost (-ENODEV:
 * counted, LOST) until a reset starts another, or, for a reset's, stays
 * lost.  Called by every scan of the dispatcher.
 */
void mdgpud_vgpu_start_poll(struct mdgpud_vgpu *v)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	bool restores = v->start_restores, attached = v->attaching;
	int ret;

	if (v->attaching) {
		ret = b->map_shared_poll(v->bctx);
		if (ret == -EINPROGRESS)
			return;
		v->attaching = false;
		if (!ret)
			ret = mdgpud_vgpu_ctx_bounce(v, v->bctx, &v->bounce);
	} else {
		ret = b->ctx_start_poll(v->bctx);
		if (ret == -EINPROGRESS)
			return;
		if (!ret) {
			ret = mdgpud_vgpu_ctx_attach_start(v);
			if (!ret && v->attaching)
				return;
			attached = true;
		}
	}
	mdgpud_vgpu_set_starting(v, false);
	v->start_restores = false;
	if (ret) {
		mdgpud_err("vgpu %u: %s: %s%s", v->id, restores ?
			   "reset: no new GPU context" :
			   "its GPU context did not start",
			   attached ? "attaching its host memory: " : "",
			   ret == -ETIMEDOUT && !attached ? "not ready within "
			   "worker_start_timeout_ms" : strerror(-ret));
		/* The context the reset replaced was counted lost. */
		if (!restores)
			mdgpud_vgpu_mark_lost(v, -ENODEV, 0);
		return;
	}
	if (!restores) {
		mdgpud_dbg("vgpu %u: GPU context ready", v->id);
		return;
	}
	mdgpud_vgpu_restored(v);
}

int mdgpud_vgpu_create(struct mdgpud_core *c,
		       const struct mdgpud_vgpu_params *p,
		       struct mdgpud_vgpu **out)
{
	const struct mdgpud_vtype *t;
	struct mdgpud_vgpu *v;
	uint64_t quota, ap;
	bool started;
	int ret;

	t = p->type_name ? mdgpud_vtype_by_name(p->type_name) :
			   mdgpud_vtype_by_id(p->type_id);
	if (!t)
		return -ENOENT;
	ret = mdgpud_vgpu_type_quota(c, t, &quota);
	if (ret)
		return ret;
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
	else if (!mdgpud_vgpu_fits(c, quota))
		ret = -ENOSPC;
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return ret;

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->core = c;
	v->type = t;
	mdgpud_info_uuid_init(v, p->uuid);
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
	v->vctx = (struct mdgpud_vctx){
		.mem = v->mem, .handles = v->handles,
		.aperture = p->aperture, .aperture_size = p->aperture_size,
		.iova_ok = p->tops->dma != NULL,
		.shared_bytes_max = c->cfg.shared_bytes_max,
	};
	v->aperture_fd = -1;
	if (p->aperture_fd >= 0) {
		/* Kept: a reset after a lost context maps it again. */
		v->aperture_fd = fcntl(p->aperture_fd, F_DUPFD_CLOEXEC, 0);
		if (v->aperture_fd < 0) {
			ret = -errno;
			goto err_handles;
		}
	}
	if (p->tops->dma)
		v->bounce_size = (size_t)c->cfg.dma_bounce_kib << 10;
	v->sm_share = mdgpud_spatial_share(c, t);
	ret = mdgpud_vgpu_ctx_begin(v, &v->bctx, &v->bounce, &started);
	if (ret)
		goto err_fd;
	mdgpud_vgpu_set_starting(v, started);
	v->entity.id = v->id;
	v->entity.weight = p->weight ? p->weight : t->default_weight;
	v->entity.cap_pct = p->cap_pct ? p->cap_pct : MDGPU_CAP_MAX;
	v->entity.priority = p->priority ? p->priority :
					   MDGPU_PRIORITY_DEFAULT;
	ret = v->sm_share ? mdgpud_spatial_join(v, mdgpud_now_ns()) :
	      mdgpud_sched_add(c->sched, &v->entity, mdgpud_now_ns());
	if (ret)
		goto err_bounce;

	pthread_mutex_lock(&c->lock);
	c->vgpus[c->nr_vgpus++] = v;
	c->totals.vgpus_created++;
	pthread_mutex_unlock(&c->lock);
	mdgpud_info("vgpu %u: created, type %s, quota %" PRIu64
		    " MiB, ring %u, aperture %" PRIu64 " MiB", v->id, t->name,
		    quota >> 20, v->entries, ap >> 20);
	*out = v;
	return 0;

err_bounce:
	mdgpud_vgpu_set_starting(v, false);
	if (v->bounce)
		c->bops->host_free(v->bctx, v->bounce, v->bounce_size);
	c->bops->ctx_destroy(v->bctx);
err_fd:
	if (v->aperture_fd >= 0)
		close(v->aperture_fd);
err_handles:
	mdgpud_handles_destroy(v->handles);
err_mem:
	mdgpud_memtab_destroy(v->mem);
err_free:
	free(v->seen_ns);
	free(v);
	return ret;
}

/*
 * Releases everything v holds: streams (their queued work still runs),
 * events, modules and their functions, then, once the GPU finished what
 * still runs, context limits it raised (their charges) and memory
 * (scrubbed by the backend).  With the context lost only the bookkeeping
 * goes: the backend has nothing left (the driver freed the memory with
 * the context and hands it to the next process zeroed).  Returns the
 * bytes freed.
 */
static uint64_t mdgpud_vgpu_release(struct mdgpud_vgpu *v)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	struct mdgpud_mem_entry e;
	uint32_t cur = 0, h;
	uint64_t val, freed = 0;
	bool live;

	/*
	 * A module load or host registration under way cannot be
	 * interrupted in the driver, and
	 * waiting for it would hold every tenant: it is given up, which
	 * loses the context (a reset then opens a new one).  Its command is
	 * not completed: a reset drops the ring, a destroy the vGPU.
	 */
	if (v->pending.active) {
		mdgpud_exec_abort(v);
		v->pending.active = false;
		v->core->nr_pending--;
	}
	/* A context that is still starting holds nothing yet. */
	live = !v->starting && !v->ctx_err &&
	       (!b->ctx_status || !b->ctx_status(v->bctx));

	mdgpud_vgpu_release_streams(v, live);
	while (!mdgpud_handles_next(v->handles, MDGPUD_H_EVENT, &cur, &h,
				    &val)) {
		if (live)
			b->event_destroy(v->bctx, val);
		mdgpud_handles_del(v->handles, h, MDGPUD_H_EVENT);
	}
	cur = 0;
	while (!mdgpud_handles_next(v->handles, MDGPUD_H_MODULE, &cur, &h,
				    &val)) {
		if (live)
			b->module_unload(v->bctx, val);
		mdgpud_handles_del_children(v->handles, h);
		mdgpud_handles_del(v->handles, h, MDGPUD_H_MODULE);
	}
	if (live)
		b->sync(v->bctx, 0);
	mdgpud_info_release(v, live);
	for (;;) {
		int r;

		pthread_mutex_lock(&v->core->lock);
		r = mdgpud_memtab_pop(v->mem, &e);
		pthread_mutex_unlock(&v->core->lock);
		if (r)
			break;
		if (e.module)	/* a module global: went with its module */
			continue;
		if (e.host) {	/* the client's memory: unpinned, not freed */
			pthread_mutex_lock(&v->core->lock);
			v->host_reg_bytes -= e.size;
			pthread_mutex_unlock(&v->core->lock);
			if (live)
				b->host_unregister(v->bctx, e.addr);
			continue;
		}
		freed += e.size;
		if (!live)
			continue;
		r = b->mem_free(v->bctx, e.addr, e.size);
		if (r)
			mdgpud_warn("vgpu %u: free of %#" PRIx64 " failed: %s "
				    "(context teardown scrubs it)", v->id,
				    e.addr, strerror(-r));
	}
	return freed;
}

void mdgpud_vgpu_destroy(struct mdgpud_vgpu *v)
{
	struct mdgpud_core *c;

	if (!v)
		return;
	c = v->core;
	if (v->group)
		mdgpud_spatial_leave(v);
	else
		mdgpud_sched_remove(c->sched, &v->entity);
	mdgpud_vgpu_release(v);
	pthread_mutex_lock(&c->lock);
	for (uint32_t i = 0; i < c->nr_vgpus; i++) {
		if (c->vgpus[i] == v) {
			c->vgpus[i] = c->vgpus[--c->nr_vgpus];
			c->totals.vgpus_destroyed++;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	/* A start under way is given up by ctx_destroy. */
	mdgpud_vgpu_set_starting(v, false);
	if (v->bounce)
		c->bops->host_free(v->bctx, v->bounce, v->bounce_size);
	c->bops->ctx_destroy(v->bctx);
	if (v->aperture_fd >= 0)
		close(v->aperture_fd);
	mdgpud_info("vgpu %u: destroyed after %" PRIu64 " commands, %" PRIu64
		    " ns GPU time", v->id, v->commands, v->gpu_ns);
	mdgpud_handles_destroy(v->handles);
	mdgpud_memtab_destroy(v->mem);
	free(v->seen_ns);
	free(v);
}

/* Tells v's transport, when it has a way to tell. */
static void mdgpud_vgpu_event(struct mdgpud_vgpu *v, uint32_t event)
{
	if (v->tops->context_event)
		v->tops->context_event(v->tpriv, event);
}

/*
 * After a backend error of v: if its context is lost (a hang or a death,
 * bops->ctx_status), every later command fails with that error without
 * reaching the backend, the loss is counted, and the transport told.
 * Dispatcher thread.
 */
void mdgpud_vgpu_check_ctx(struct mdgpud_vgpu *v)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	int st;

	if (v->ctx_err || v->starting || !b->ctx_status)
		return;
	st = b->ctx_status(v->bctx);
	if (!st)
		return;
	mdgpud_vgpu_mark_lost(v, st, st == -EIO && b->err_code ?
				     b->err_code(v->bctx) : 0);
	mdgpud_spatial_lost(v);
}

void mdgpud_vgpu_mark_lost(struct mdgpud_vgpu *v, int st, uint64_t code)
{
	pthread_mutex_lock(&v->core->lock);
	v->ctx_err = st;
	v->ctx_err_code = code;
	if (st == -ETIMEDOUT) {
		v->hangs++;
		v->core->totals.hangs++;
	} else {
		v->ctx_losses++;
		v->core->totals.ctx_losses++;
	}
	pthread_mutex_unlock(&v->core->lock);
	mdgpud_warn("vgpu %u: GPU context %s: commands fail (%s) until a "
		    "reset", v->id, st == -ETIMEDOUT ? "hung and destroyed" :
		    st == -EIO ? "faulted" : "lost", strerror(-st));
	mdgpud_vgpu_event(v, st == -ETIMEDOUT ? MDGPU_VGPU_EVENT_HANG :
						MDGPU_VGPU_EVENT_LOST);
}

/*
 * Reset of a vGPU whose context was lost: a new context takes its place
 * (the old one is destroyed, within the backend's bounds).  Where the
 * backend starts contexts without waiting (ctx_start), the new one is
 * started here and the vGPU waits for it outside the scheduler
 * (mdgpud_vgpu_start_poll: RESTORED once it is usable), so that no other
 * tenant waits for a worker's start.  If the new one cannot be had, the
 * vGPU stays lost and a later reset tries again.
 */
static void mdgpud_vgpu_ctx_restore(struct mdgpud_vgpu *v)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	struct mdgpud_bctx *ctx;
	bool started;
	void *bounce;
	int ret;

	ret = mdgpud_vgpu_ctx_begin(v, &ctx, &bounce, &started);
	if (ret) {
		mdgpud_err("vgpu %u: reset: no new GPU context: %s", v->id,
			   strerror(-ret));
		return;
	}
	b->ctx_destroy(v->bctx);
	v->bctx = ctx;
	v->bounce = bounce;
	v->attaching = false;	/* the old context's, given up */
	if (started) {
		v->start_restores = true;
		mdgpud_vgpu_set_starting(v, true);
		return;
	}
	mdgpud_vgpu_restored(v);
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
	struct mdgpud_core *c = v->core;
	uint64_t freed = mdgpud_vgpu_release(v);

	/* The release itself may find the context hung (its sync).  A new
	 * context already starting is not started again. */
	mdgpud_vgpu_check_ctx(v);
	if (v->ctx_err && !v->starting)
		mdgpud_vgpu_ctx_restore(v);
	if (v->runnable)
		mdgpud_spatial_set_runnable(v, false, mdgpud_now_ns());
	mdgpud_info("vgpu %u: reset: %u queued commands cancelled, %" PRIu64
		    " bytes freed and scrubbed", v->id,
		    v->observed_tail - v->head, freed);
	v->head = v->observed_tail = 0;
	v->fence = 0;
	v->ring_broken = false;
	v->host_wait = false;	/* its HOST_FUNC was cancelled with the ring */
	pthread_mutex_lock(&c->lock);
	v->resets++;
	pthread_mutex_unlock(&c->lock);
}

int mdgpud_vgpu_set_knobs(struct mdgpud_vgpu *v, uint32_t weight,
			  uint32_t cap_pct, uint32_t priority)
{
	int ret;

	/* The lock: stats readers look at the entity's knobs. */
	pthread_mutex_lock(&v->core->lock);
	ret = v->group ? mdgpud_spatial_set_knobs(v, weight, cap_pct,
						  priority) :
	      mdgpud_sched_set_params(v->core->sched, &v->entity, weight,
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
