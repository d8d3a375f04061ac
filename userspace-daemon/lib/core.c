// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpud core: event loop, vGPU lifecycle, command execution and the
 * dispatcher.
 *
 * Threading: everything here runs in ONE thread, the one that calls
 * mdgpud_core_run() (the dispatcher).  Transports' fd callbacks run in it
 * too, so vGPUs are created and destroyed between slices, never during one.
 * core->lock only makes the statistics and the vGPU list readable from other
 * threads (mdgpud_core_stats(), tests); the dispatcher takes it around every
 * change of those.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "mdgpud/daemon.h"
#include "mdgpud/handles.h"
#include "mdgpud/log.h"
#include "mdgpud/memtab.h"
#include "mdgpud/sched.h"
#include "mdgpud/validate.h"
#include "mdgpud/vtypes.h"

#define MDGPUD_HIST_BUCKETS	64	/* log2(ns) buckets */

struct mdgpud_watch {
	int fd;
	bool dead;
	mdgpud_watch_fn fn;
	void *data;
	struct mdgpud_watch *next;
};

struct mdgpud_vgpu {
	struct mdgpud_core *core;
	uint32_t id;
	const struct mdgpud_vtype *type;
	uint32_t entries;
	uint8_t *ring;
	const struct mdgpud_vgpu_tops *tops;
	void *tpriv;

	struct mdgpud_bctx *bctx;
	struct mdgpud_memtab *mem;
	struct mdgpud_handles *handles;
	struct mdgpud_vctx vctx;
	struct mdgpud_sched_entity entity;
	bool runnable;
	bool ring_broken;

	uint32_t head;			/* next command to execute */
	uint32_t observed_tail;
	uint64_t fence;			/* commands completed */
	uint64_t *seen_ns;		/* per slot: when the doorbell was seen */

	void *bounce;			/* IOVA transports */
	size_t bounce_size;

	/* Statistics (written under core->lock). */
	uint64_t gpu_ns, commands, errors, bytes_copied;
	uint64_t hist[MDGPUD_HIST_BUCKETS];
};

struct mdgpud_core {
	struct mdgpud_config cfg;
	const struct mdgpud_backend_ops *bops;
	struct mdgpud_backend *be;
	struct mdgpud_gpu_info gpu;
	struct mdgpud_sched *sched;
	const struct mdgpud_transport_ops *tops;
	struct mdgpud_transport *t;

	int epfd;
	int ctl_efd;			/* stop / dump requests */
	volatile sig_atomic_t stop_req;
	volatile sig_atomic_t dump_req;
	struct mdgpud_watch *watches;

	pthread_mutex_t lock;		/* vgpus[], nr_vgpus, vGPU stats */
	struct mdgpud_vgpu **vgpus;
	uint32_t nr_vgpus;
	uint32_t next_id;

	uint64_t linger_ns;		/* cfg.linger_us */
	struct mdgpud_vcmd vcmd;	/* scratch of the dispatcher */
};

static uint64_t mdgpud_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- */
/* Event loop                                                       */

int mdgpud_core_watch(struct mdgpud_core *c, int fd, mdgpud_watch_fn fn,
		      void *data)
{
	struct mdgpud_watch *w = calloc(1, sizeof(*w));
	struct epoll_event ev = { .events = EPOLLIN };

	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->fn = fn;
	w->data = data;
	ev.data.ptr = w;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		int ret = -errno;

		free(w);
		return ret;
	}
	w->next = c->watches;
	c->watches = w;
	return 0;
}

/* The watch is freed after the current batch of events (it may be in it). */
void mdgpud_core_unwatch(struct mdgpud_core *c, int fd)
{
	for (struct mdgpud_watch *w = c->watches; w; w = w->next) {
		if (w->fd == fd && !w->dead) {
			epoll_ctl(c->epfd, EPOLL_CTL_DEL, fd, NULL);
			w->dead = true;
			return;
		}
	}
}

static void mdgpud_core_reap_watches(struct mdgpud_core *c)
{
	struct mdgpud_watch **pp = &c->watches, *w;

	while ((w = *pp)) {
		if (w->dead) {
			*pp = w->next;
			free(w);
		} else {
			pp = &w->next;
		}
	}
}

static void mdgpud_core_ctl_event(void *data, uint32_t events)
{
	struct mdgpud_core *c = data;
	uint64_t v;

	(void)events;
	while (read(c->ctl_efd, &v, sizeof(v)) == sizeof(v))
		;
}

/* Wait up to timeout_ms (-1: forever) for fd events and run callbacks. */
static void mdgpud_core_poll(struct mdgpud_core *c, int timeout_ms)
{
	struct epoll_event evs[16];
	int n = epoll_wait(c->epfd, evs, 16, timeout_ms);

	for (int i = 0; i < n; i++) {
		struct mdgpud_watch *w = evs[i].data.ptr;

		if (!w->dead)
			w->fn(w->data, evs[i].events);
	}
	mdgpud_core_reap_watches(c);
}

void mdgpud_core_stop(struct mdgpud_core *c)
{
	uint64_t one = 1;
	ssize_t r;

	c->stop_req = 1;
	r = write(c->ctl_efd, &one, sizeof(one));
	(void)r;
}

void mdgpud_core_request_dump(struct mdgpud_core *c)
{
	uint64_t one = 1;
	ssize_t r;

	c->dump_req = 1;
	r = write(c->ctl_efd, &one, sizeof(one));
	(void)r;
}

/* ---------------------------------------------------------------- */
/* vGPUs                                                            */

int mdgpud_core_type_lookup(const struct mdgpud_core *c, const char *name,
			    uint32_t *type_id, uint64_t *fb_quota,
			    uint64_t *aperture_size)
{
	const struct mdgpud_vtype *t = mdgpud_vtype_by_name(name);

	if (!t)
		return -ENOENT;
	*type_id = t->id;
	*fb_quota = mdgpud_vtype_fb_quota(t, c->gpu.fb_size);
	*aperture_size = t->aperture_mib << 20;
	return 0;
}

static uint32_t mdgpud_core_count_type(struct mdgpud_core *c, uint32_t id)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nr_vgpus; i++)
		n += c->vgpus[i]->type->id == id;
	return n;
}

/* Quota of live vGPUs together: the GPU is never overcommitted. */
static uint64_t mdgpud_core_quota_sum(struct mdgpud_core *c)
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
	    mdgpud_core_count_type(c, t->id) >= t->max_instances)
		ret = -EBUSY;
	else if (__builtin_add_overflow(mdgpud_core_quota_sum(c), quota,
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
	v->entity.weight = t->default_weight;
	v->entity.cap_pct = MDGPU_CAP_MAX;
	v->entity.priority = MDGPU_PRIORITY_DEFAULT;
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

uint32_t mdgpud_vgpu_id(const struct mdgpud_vgpu *v)
{
	return v->id;
}

uint64_t mdgpud_vgpu_fb_quota(const struct mdgpud_vgpu *v)
{
	return mdgpud_memtab_quota(v->mem);
}

/* ---------------------------------------------------------------- */
/* Execution of validated commands                                  */

/* Copy between device memory and guest IOVA through the bounce buffer. */
static int mdgpud_exec_iova_copy(struct mdgpud_vgpu *v,
				 const struct mdgpud_vcmd *vc)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint64_t done = 0, len = vc->copy.len;
	int ret = 0;

	while (done < len && !ret) {
		uint64_t n = len - done < v->bounce_size ? len - done :
							  v->bounce_size;
		if (vc->copy.dir == MDGPUD_COPY_H2D) {
			ret = v->tops->dma(v->tpriv, vc->copy.host.addr + done,
					   v->bounce, n, false);
			if (!ret)
				ret = b->copy_h2d(v->bctx,
						  vc->copy.dev_dst + done,
						  v->bounce, n);
		} else {
			ret = b->copy_d2h(v->bctx, v->bounce,
					  vc->copy.dev_src + done, n);
			if (!ret)
				ret = v->tops->dma(v->tpriv,
						   vc->copy.host.addr + done,
						   v->bounce, n, true);
		}
		done += n;
	}
	return ret;
}

static int mdgpud_exec_alloc(struct mdgpud_vgpu *v, uint64_t size,
			     uint64_t *addr)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint64_t reserved;
	int ret;

	ret = mdgpud_memtab_precheck(v->mem, size);
	if (ret)
		return ret;
	ret = b->mem_alloc(v->bctx, size, addr, &reserved);
	if (ret)
		return ret;
	pthread_mutex_lock(&v->core->lock);
	ret = mdgpud_memtab_insert(v->mem, *addr, size, reserved);
	pthread_mutex_unlock(&v->core->lock);
	if (ret) {
		b->mem_free(v->bctx, *addr, size);
		return ret == -EEXIST ? -EIO : ret;	/* backend bug */
	}
	return 0;
}

static int mdgpud_exec_module_load(struct mdgpud_vgpu *v,
				   const struct mdgpud_vcmd *vc,
				   uint64_t *result)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint64_t module;
	uint32_t h;
	uint8_t *img;
	int ret;

	/* Copy once: the guest may rewrite the aperture while we compile. */
	img = malloc(vc->module_load.len + 1);
	if (!img)
		return -ENOMEM;
	if (vc->module_load.image.ptr) {
		memcpy(img, vc->module_load.image.ptr, vc->module_load.len);
	} else {
		ret = v->tops->dma(v->tpriv, vc->module_load.image.addr, img,
				   vc->module_load.len, false);
		if (ret) {
			free(img);
			return ret;
		}
	}
	img[vc->module_load.len] = '\0';	/* PTX is text */
	ret = b->module_load(v->bctx, vc->module_load.kind, img,
			     vc->module_load.len, &module);
	free(img);
	if (ret)
		return ret;
	ret = mdgpud_handles_add(v->handles, MDGPUD_H_MODULE, module, 0, &h);
	if (ret) {
		b->module_unload(v->bctx, module);
		return ret;
	}
	*result = h;
	return 0;
}

static int mdgpud_exec(struct mdgpud_vgpu *v, struct mdgpud_vcmd *vc,
		       uint64_t *result, uint64_t *result2)
{
	struct mdgpud_core *c = v->core;
	const struct mdgpud_backend_ops *b = c->bops;
	struct mdgpud_mem_entry e;
	uint64_t val;
	uint32_t h;
	int ret;

	switch (vc->opcode) {
	case MDGPU_OP_NOP:
		return 0;
	case MDGPU_OP_MEM_ALLOC:
		return mdgpud_exec_alloc(v, vc->alloc.size, result);
	case MDGPU_OP_MEM_FREE:
		pthread_mutex_lock(&c->lock);
		ret = mdgpud_memtab_remove(v->mem, vc->free.addr, &e);
		pthread_mutex_unlock(&c->lock);
		if (ret)
			return ret;
		return b->mem_free(v->bctx, e.addr, e.size);
	case MDGPU_OP_MEMSET:
		return b->memset8(v->bctx, vc->memset.addr, vc->memset.value,
				  vc->memset.len);
	case MDGPU_OP_COPY:
		if (!vc->copy.len)
			return 0;
		if (vc->copy.dir == MDGPUD_COPY_D2D)
			ret = b->copy_d2d(v->bctx, vc->copy.dev_dst,
					  vc->copy.dev_src, vc->copy.len);
		else if (!vc->copy.host.ptr)
			ret = mdgpud_exec_iova_copy(v, vc);
		else if (vc->copy.dir == MDGPUD_COPY_H2D)
			ret = b->copy_h2d(v->bctx, vc->copy.dev_dst,
					  vc->copy.host.ptr, vc->copy.len);
		else
			ret = b->copy_d2h(v->bctx, vc->copy.host.ptr,
					  vc->copy.dev_src, vc->copy.len);
		if (!ret) {
			pthread_mutex_lock(&c->lock);
			v->bytes_copied += vc->copy.len;
			pthread_mutex_unlock(&c->lock);
		}
		return ret;
	case MDGPU_OP_MODULE_LOAD:
		return mdgpud_exec_module_load(v, vc, result);
	case MDGPU_OP_MODULE_UNLOAD:
		ret = b->module_unload(v->bctx, vc->module_unload.module);
		if (ret)
			return ret;
		mdgpud_handles_del_children(v->handles,
					    vc->module_unload.handle);
		return mdgpud_handles_del(v->handles, vc->module_unload.handle,
					  MDGPUD_H_MODULE);
	case MDGPU_OP_FUNC_GET:
		if (!vc->func_get.name_src.ptr) {
			ret = v->tops->dma(v->tpriv, vc->func_get.name_src.addr,
					   vc->func_get.name,
					   vc->func_get.name_len, false);
			if (!ret)
				ret = mdgpud_check_name(vc->func_get.name,
							vc->func_get.name_len);
			if (ret)
				return ret;
		}
		ret = b->func_get(v->bctx, vc->func_get.module,
				  vc->func_get.name, &val);
		if (ret)
			return ret;
		ret = mdgpud_handles_add(v->handles, MDGPUD_H_FUNC, val,
					 vc->func_get.module_handle, &h);
		*result = h;
		return ret;
	case MDGPU_OP_LAUNCH:
		if (vc->launch.params_len && !vc->launch.params_src.ptr) {
			ret = v->tops->dma(v->tpriv, vc->launch.params_src.addr,
					   vc->launch.params,
					   vc->launch.params_len, false);
			if (ret)
				return ret;
		}
		return b->launch(v->bctx, vc->launch.func, vc->launch.grid,
				 vc->launch.block, vc->launch.shared_bytes,
				 vc->launch.params, vc->launch.params_len);
	case MDGPU_OP_BUILTIN:
		return b->builtin(v->bctx, vc->builtin.kernel, vc->builtin.arg,
				  result);
	case MDGPU_OP_EVENT_CREATE:
		ret = b->event_create(v->bctx, &val);
		if (ret)
			return ret;
		ret = mdgpud_handles_add(v->handles, MDGPUD_H_EVENT, val, 0,
					 &h);
		if (ret) {
			b->event_destroy(v->bctx, val);
			return ret;
		}
		*result = h;
		return 0;
	case MDGPU_OP_EVENT_RECORD:
		return b->event_record(v->bctx, vc->event.event);
	case MDGPU_OP_EVENT_ELAPSED:
		return b->event_elapsed(v->bctx, vc->event.event,
					vc->event.end, result);
	case MDGPU_OP_EVENT_DESTROY:
		ret = b->event_destroy(v->bctx, vc->event.event);
		if (ret)
			return ret;
		return mdgpud_handles_del(v->handles, vc->event.handle,
					  MDGPUD_H_EVENT);
	case MDGPU_OP_SYNC:
		return b->sync(v->bctx);
	case MDGPU_OP_QUERY:
		switch (vc->query.what) {
		case MDGPU_QUERY_FB_QUOTA:
			*result = mdgpud_memtab_quota(v->mem);
			*result2 = mdgpud_memtab_requested(v->mem);
			return 0;
		case MDGPU_QUERY_FB_USED:
			*result = mdgpud_memtab_used(v->mem);
			*result2 = mdgpud_memtab_requested(v->mem);
			return 0;
		case MDGPU_QUERY_SM_COUNT:
			*result = c->gpu.sm_count;
			return 0;
		case MDGPU_QUERY_ABI_VERSION:
			*result = MDGPU_ABI_VERSION;
			return 0;
		case MDGPU_QUERY_BACKEND:
			*result = c->gpu.kind;
			return 0;
		}
		return -EINVAL;
	}
	return -EINVAL;
}

/* ---------------------------------------------------------------- */
/* Dispatcher                                                       */

static unsigned int mdgpud_log2(uint64_t v)
{
	return v ? 63 - (unsigned int)__builtin_clzll(v) : 0;
}

/*
 * Record a new tail (already checked: tail - head <= entries) and stamp
 * the commands seen for the first time.  A tenant may also move its tail
 * back (withdrawing commands not yet started): then nothing is stamped.
 * Both distances are <= entries, so the loop is bounded by the ring size.
 */
static void mdgpud_vgpu_observe(struct mdgpud_vgpu *v, uint32_t tail,
				uint64_t now)
{
	if (tail - v->head > v->observed_tail - v->head)
		for (uint32_t n = v->observed_tail; n != tail; n++)
			v->seen_ns[n & (v->entries - 1)] = now;
	v->observed_tail = tail;
}

/* Refresh every vGPU's doorbell; returns true if any has work. */
static bool mdgpud_core_scan(struct mdgpud_core *c, uint64_t now)
{
	bool any = false;

	for (uint32_t i = 0; i < c->nr_vgpus; i++) {
		struct mdgpud_vgpu *v = c->vgpus[i];
		uint32_t tail = v->tops->sq_tail(v->tpriv);
		uint32_t pending = tail - v->head;
		bool runnable;

		if (pending > v->entries) {
			if (!v->ring_broken) {
				mdgpud_warn("vgpu %u: bad doorbell: tail %u head %u entries %u",
					    v->id, tail, v->head, v->entries);
				v->tops->ring_error(v->tpriv, -EINVAL);
				v->ring_broken = true;
			}
			pending = 0;
		} else {
			v->ring_broken = false;
			mdgpud_vgpu_observe(v, tail, now);
		}
		runnable = pending > 0;
		if (runnable != v->runnable) {
			mdgpud_sched_set_runnable(c->sched, &v->entity,
						  runnable, now);
			v->runnable = runnable;
		}
		any |= runnable;
	}
	return any;
}

static void mdgpud_core_arm(struct mdgpud_core *c, bool sleeping)
{
	for (uint32_t i = 0; i < c->nr_vgpus; i++)
		c->vgpus[i]->tops->arm(c->vgpus[i]->tpriv, sleeping);
}

static bool mdgpud_core_others_pending(struct mdgpud_core *c,
				       const struct mdgpud_vgpu *self)
{
	for (uint32_t i = 0; i < c->nr_vgpus; i++) {
		struct mdgpud_vgpu *o = c->vgpus[i];

		if (o != self && o->tops->sq_tail(o->tpriv) != o->head)
			return true;
	}
	return false;
}

/*
 * The running vGPU's queue is empty.  Ending the slice now would make the
 * backend wait for the GPU (slice_end), which turns a stream of
 * asynchronous launches into synchronous ones.  So, unless another vGPU
 * has work, keep the slice open for up to linger_us (and never past the
 * slice) in case the tenant rings again.  Returns the tail to run up to.
 */
static uint32_t mdgpud_core_linger(struct mdgpud_core *c,
				   struct mdgpud_vgpu *v, uint64_t t0,
				   uint64_t slice_ns, uint64_t *now)
{
	uint64_t end = t0 + slice_ns, linger = *now + c->linger_ns;
	uint32_t t;

	if (linger < end)
		end = linger;
	for (;;) {
		t = v->tops->sq_tail(v->tpriv);
		if (t != v->head || *now >= end || c->stop_req ||
		    mdgpud_core_others_pending(c, v))
			break;
		__builtin_ia32_pause();
		*now = mdgpud_now_ns();
	}
	if (t - v->head > v->entries)
		return v->head;	/* bad doorbell: the scan reports it */
	mdgpud_vgpu_observe(v, t, *now);
	return t;
}

static void mdgpud_core_run_slice(struct mdgpud_core *c,
				  struct mdgpud_vgpu *v, uint64_t slice_ns)
{
	const struct mdgpud_backend_ops *b = c->bops;
	uint64_t t0 = mdgpud_now_ns(), now = t0, gpu_ns = 0;
	uint32_t tail = v->observed_tail;
	int ret;

	ret = b->slice_begin(v->bctx);
	if (ret)
		mdgpud_warn("vgpu %u: slice_begin: %s", v->id, strerror(-ret));
	while (v->head != tail && now - t0 < slice_ns) {
		uint32_t idx = v->head & (v->entries - 1);
		struct mdgpu_cpl cpl = { .seq = v->fence };
		uint64_t result = 0, result2 = 0, wait;
		unsigned int bucket;

		wait = now > v->seen_ns[idx] ? now - v->seen_ns[idx] : 0;
		ret = mdgpud_validate(&v->vctx, v->tops->sq_entry(v->tpriv, idx),
				      &c->vcmd);
		if (!ret)
			ret = mdgpud_exec(v, &c->vcmd, &result, &result2);
		cpl.status = ret;
		cpl.opcode = c->vcmd.opcode;
		cpl.result = ret ? 0 : result;
		cpl.result2 = ret ? 0 : result2;
		/* Statistics first: a client that saw its completion sees
		 * the command counted. */
		bucket = mdgpud_log2(wait);
		pthread_mutex_lock(&c->lock);
		v->commands++;
		v->errors += ret != 0;
		v->hist[bucket]++;
		pthread_mutex_unlock(&c->lock);

		v->tops->cq_write(v->tpriv, idx, &cpl);
		v->head++;
		v->fence++;
		v->tops->publish(v->tpriv, v->head, v->fence,
				 (c->vcmd.flags & MDGPU_CMD_F_IRQ) ?
				 MDGPU_IRQ_COMPLETION : 0,
				 mdgpud_memtab_used(v->mem));
		if (ret)
			mdgpud_dbg("vgpu %u: command %" PRIu64 " opcode %u: %s",
				   v->id, (uint64_t)cpl.seq, cpl.opcode,
				   strerror(-ret));

		now = mdgpud_now_ns();
		if (v->head == tail)	/* pick up newly rung work */
			tail = mdgpud_core_linger(c, v, t0, slice_ns, &now);
	}
	ret = b->slice_end(v->bctx, &gpu_ns);
	if (ret)
		mdgpud_warn("vgpu %u: slice_end: %s", v->id, strerror(-ret));
	mdgpud_sched_charge(c->sched, &v->entity, t0, gpu_ns);
	pthread_mutex_lock(&c->lock);
	v->gpu_ns += gpu_ns;
	pthread_mutex_unlock(&c->lock);
}

static int mdgpud_ns_to_ms(uint64_t ns)
{
	uint64_t ms = (ns + 999999) / 1000000;

	return ms > 1000 ? 1000 : (int)ms;
}

int mdgpud_core_run(struct mdgpud_core *c)
{
	uint64_t spin_ns = (uint64_t)c->cfg.spin_us * 1000;
	uint64_t busy_since = mdgpud_now_ns(), last_poll = busy_since;
	/* While busy, fd events (connects, hang-ups) are looked at every
	 * poll_ns or every 64 rounds, whichever comes first. */
	const uint64_t poll_ns = 1000000;
	unsigned int iter = 0;

	mdgpud_info("dispatcher running: backend %s (%s), transport %s",
		    c->bops->name, c->gpu.name, c->tops->name);
	while (!c->stop_req) {
		struct mdgpud_sched_decision d;
		uint64_t now;
		bool any;

		if (c->dump_req) {
			c->dump_req = 0;
			mdgpud_core_dump(c);
		}
		now = mdgpud_now_ns();
		if ((++iter & 63) == 0 || now - last_poll >= poll_ns) {
			mdgpud_core_poll(c, 0);
			last_poll = now = mdgpud_now_ns();
		}
		any = mdgpud_core_scan(c, now);
		if (any) {
			mdgpud_sched_pick(c->sched, now, &d);
			if (d.entity) {
				struct mdgpud_vgpu *v = (struct mdgpud_vgpu *)
					((char *)d.entity -
					 offsetof(struct mdgpud_vgpu, entity));

				mdgpud_core_run_slice(c, v, d.slice_ns);
				busy_since = mdgpud_now_ns();
				continue;
			}
			/* Runnable but held back (cap, fixed share): sleep
			 * until the scheduler's next event or a doorbell. */
			mdgpud_core_arm(c, true);
			atomic_thread_fence(memory_order_seq_cst);
			mdgpud_core_poll(c, d.idle_until_ns == UINT64_MAX ?
					 1000 :
					 mdgpud_ns_to_ms(d.idle_until_ns > now ?
							 d.idle_until_ns - now :
							 0));
			mdgpud_core_arm(c, false);
			last_poll = mdgpud_now_ns();
			continue;
		}
		if (now - busy_since < spin_ns) {
			__builtin_ia32_pause();
			continue;
		}
		/* Sleep: arm the doorbells, then re-check (no lost wake-up). */
		mdgpud_core_arm(c, true);
		atomic_thread_fence(memory_order_seq_cst);
		if (!mdgpud_core_scan(c, mdgpud_now_ns()) && !c->stop_req &&
		    !c->dump_req)
			mdgpud_core_poll(c, -1);
		mdgpud_core_arm(c, false);
		busy_since = last_poll = mdgpud_now_ns();
	}
	mdgpud_info("dispatcher stopping");
	return 0;
}

/* ---------------------------------------------------------------- */
/* Statistics                                                        */

static uint64_t mdgpud_hist_pct(const uint64_t *h, uint64_t total,
				unsigned int pct)
{
	uint64_t want = (total * pct + 99) / 100, acc = 0;

	for (unsigned int i = 0; i < MDGPUD_HIST_BUCKETS; i++) {
		acc += h[i];
		if (acc >= want && want)
			return i >= 63 ? UINT64_MAX : (2ULL << i) - 1;
	}
	return 0;
}

static void mdgpud_vgpu_stats_locked(const struct mdgpud_vgpu *v,
				     struct mdgpud_vgpu_stats *s)
{
	uint64_t total = 0;

	for (unsigned int i = 0; i < MDGPUD_HIST_BUCKETS; i++)
		total += v->hist[i];
	*s = (struct mdgpud_vgpu_stats){
		.vgpu_id = v->id, .type_id = v->type->id,
		.gpu_ns = v->gpu_ns, .commands = v->commands,
		.errors = v->errors, .bytes_copied = v->bytes_copied,
		.wait_p50_ns = mdgpud_hist_pct(v->hist, total, 50),
		.wait_p99_ns = mdgpud_hist_pct(v->hist, total, 99),
		.fb_quota = mdgpud_memtab_quota(v->mem),
		.fb_used = mdgpud_memtab_used(v->mem),
		.fb_requested = mdgpud_memtab_requested(v->mem),
		.allocations = mdgpud_memtab_count(v->mem),
	};
}

size_t mdgpud_core_stats(struct mdgpud_core *c, struct mdgpud_vgpu_stats *out,
			 size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	for (uint32_t i = 0; i < c->nr_vgpus && n < max; i++)
		mdgpud_vgpu_stats_locked(c->vgpus[i], &out[n++]);
	pthread_mutex_unlock(&c->lock);
	return n;
}

uint64_t mdgpud_core_fb_used(struct mdgpud_core *c)
{
	uint64_t s = 0;

	pthread_mutex_lock(&c->lock);
	for (uint32_t i = 0; i < c->nr_vgpus; i++)
		s += mdgpud_memtab_used(c->vgpus[i]->mem);
	pthread_mutex_unlock(&c->lock);
	return s;
}

uint32_t mdgpud_core_nr_vgpus(struct mdgpud_core *c)
{
	uint32_t n;

	pthread_mutex_lock(&c->lock);
	n = c->nr_vgpus;
	pthread_mutex_unlock(&c->lock);
	return n;
}

void mdgpud_core_dump(struct mdgpud_core *c)
{
	struct mdgpud_vgpu_stats s;

	pthread_mutex_lock(&c->lock);
	mdgpud_log(MDGPUD_LOG_INFO, "status: %s (%s), %u vGPUs, fb %" PRIu64
		   " MiB", c->gpu.name, c->bops->name, c->nr_vgpus,
		   c->gpu.fb_size >> 20);
	for (uint32_t i = 0; i < c->nr_vgpus; i++) {
		mdgpud_vgpu_stats_locked(c->vgpus[i], &s);
		mdgpud_log(MDGPUD_LOG_INFO,
			   "vgpu %u type %u: gpu %" PRIu64 " ns, %" PRIu64
			   " cmds (%" PRIu64 " failed), %" PRIu64
			   " bytes copied, wait p50 <= %" PRIu64
			   " ns p99 <= %" PRIu64 " ns, fb %" PRIu64 "/%" PRIu64
			   " bytes in %u allocations", s.vgpu_id, s.type_id,
			   s.gpu_ns, s.commands, s.errors, s.bytes_copied,
			   s.wait_p50_ns, s.wait_p99_ns, s.fb_used, s.fb_quota,
			   s.allocations);
	}
	pthread_mutex_unlock(&c->lock);
}

const struct mdgpud_gpu_info *mdgpud_core_gpu(const struct mdgpud_core *c)
{
	return &c->gpu;
}

const struct mdgpud_config *mdgpud_core_config(const struct mdgpud_core *c)
{
	return &c->cfg;
}

/* ---------------------------------------------------------------- */
/* Lifetime                                                         */

int mdgpud_core_create(const struct mdgpud_config *cfg,
		       struct mdgpud_core **out)
{
	struct mdgpud_backend_cfg bcfg = { 0 };
	struct mdgpud_sched_cfg scfg;
	struct mdgpud_core *c;
	char err[256];
	int ret;

	ret = mdgpud_config_validate(cfg, err, sizeof(err));
	if (ret) {
		mdgpud_err("config: %s", err);
		return ret;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->linger_ns = (uint64_t)cfg->linger_us * 1000;
	c->epfd = c->ctl_efd = -1;
	pthread_mutex_init(&c->lock, NULL);
	c->vgpus = calloc(cfg->max_vgpus, sizeof(*c->vgpus));
	if (!c->vgpus) {
		ret = -ENOMEM;
		goto err;
	}

	c->bops = mdgpud_backend_find(cfg->backend);
	if (!c->bops) {
		mdgpud_err("backend '%s' is not available in this build",
			   cfg->backend);
		ret = -ENOENT;
		goto err;
	}
	bcfg.device_ordinal = cfg->cuda_device;
	bcfg.fb_size = !strcmp(cfg->backend, "sim") ? cfg->sim_fb_mib << 20 : 0;
	bcfg.fb_reserve = cfg->cuda_fb_reserve_mib << 20;
	bcfg.sm_count = cfg->sim_sm_count;
	bcfg.sim_realtime = cfg->sim_realtime;
	bcfg.worker_path = cfg->cuda_worker[0] ? cfg->cuda_worker : NULL;
	ret = c->bops->open(&bcfg, &c->be, &c->gpu);
	if (ret) {
		mdgpud_err("backend %s: open: %s", cfg->backend,
			   strerror(-ret));
		goto err;
	}

	scfg = (struct mdgpud_sched_cfg){
		.policy = cfg->policy,
		.timeslice_ns = (uint64_t)cfg->timeslice_us * 1000,
		.cap_window_ns = cfg->cap_window_us * 1000,
	};
	ret = mdgpud_sched_create(&scfg, &c->sched);
	if (ret) {
		mdgpud_err("scheduler: %s (policy %u, timeslice_us %u, cap_window_us %" PRIu64 ")",
			   strerror(-ret), cfg->policy, cfg->timeslice_us,
			   cfg->cap_window_us);
		goto err;
	}

	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->ctl_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->epfd < 0 || c->ctl_efd < 0) {
		ret = -errno;
		goto err;
	}
	ret = mdgpud_core_watch(c, c->ctl_efd, mdgpud_core_ctl_event, c);
	if (ret)
		goto err;

	c->tops = mdgpud_transport_find(cfg->transport);
	if (!c->tops) {
		mdgpud_err("transport '%s' is not available", cfg->transport);
		ret = -ENOENT;
		goto err;
	}
	ret = c->tops->create(c, cfg, &c->t);
	if (ret)
		goto err;
	*out = c;
	return 0;
err:
	c->tops = NULL;
	mdgpud_core_destroy(c);
	return ret;
}

void mdgpud_core_destroy(struct mdgpud_core *c)
{
	if (!c)
		return;
	/* Tell every client first, then tear the transport (and with it
	 * every vGPU, whose memory is scrubbed) down. */
	for (uint32_t i = 0; i < c->nr_vgpus; i++)
		c->vgpus[i]->tops->lost(c->vgpus[i]->tpriv);
	if (c->tops && c->t)
		c->tops->destroy(c->t);
	while (c->nr_vgpus)	/* a transport that left some behind */
		mdgpud_vgpu_destroy(c->vgpus[0]);
	if (c->sched)
		mdgpud_sched_destroy(c->sched);
	if (c->be)
		c->bops->close(c->be);
	for (struct mdgpud_watch *w = c->watches; w; w = w->next)
		w->dead = true;
	mdgpud_core_reap_watches(c);
	if (c->ctl_efd >= 0)
		close(c->ctl_efd);
	if (c->epfd >= 0)
		close(c->epfd);
	free(c->vgpus);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
