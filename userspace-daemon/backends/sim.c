// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The sim backend: a CPU reference device, the test double for the GPU.
 *
 * Same semantics as a GPU backend for everything except foreign code:
 * module_load fails with -EOPNOTSUPP (no PTX/cubin on a CPU), so func_get
 * and launch can never be reached with a valid handle.  Device memory is
 * host RAM (private anonymous mappings, one per allocation) with the same
 * quota rules: reserved = size rounded up to the page size; the backend
 * refuses allocations past the simulated fb_size.  mem_free scrubs with
 * madvise(MADV_DONTNEED), which makes the kernel hand back zero pages, and
 * keeps the scrubbed block in a cache from which later allocations of the
 * same reserved size (any context) are served, so the scrub is observable:
 * re-allocated memory reads zero.
 *
 * Time: each context has a simulated GPU clock.  SPIN_NS advances it by its
 * argument; other work by a fixed cost model (below).  slice_end() and
 * events report simulated time, so scheduling tests are deterministic.
 * With sim_realtime, SPIN_NS also sleeps for real.
 *
 * Streams (ABI 1.2): accepted and run in submission order on the one
 * queue the context has: work runs synchronously, so every stream and
 * event is always idle (queries answer 0) and waits are no-ops.  A
 * stream memory operation (ABI 1.10) runs when submitted too: a write
 * stores its value; a wait whose condition holds goes on, and one whose
 * condition does not hold fails with -EOPNOTSUPP, since nothing could
 * release it (the one queue would wait for itself).  Stream
 * values are numbers (no resources); the priority range is 0 (least) to
 * -5 (greatest), the H100's, so that clients see a real range.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uapi/mdgpu.h"
#include "mdgpud/backend.h"
#include "mdgpud/cuda_values.h"
#include "common/cpu.h"
#include "common/memop.h"

/* Cost model of the simulated clock. */
static const uint64_t mdgpud_sim_op_ns = 2000;		/* any command */
static const uint64_t mdgpud_sim_bytes_per_us = 20000;	/* 20 GB/s */
/* Device addresses start here (nonzero, GPU-looking), 2 MiB granular. */
static const uint64_t mdgpud_sim_addr_base = 0x7f0000000000ULL;
static const uint64_t mdgpud_sim_addr_align = 2ULL << 20;
/* Stream priorities the sim backend reports (the H100's range). */
static const int32_t mdgpud_sim_prio_least = 0;
static const int32_t mdgpud_sim_prio_greatest = -5;
/* At most this many scrubbed bytes are cached for reuse. */
static const uint64_t mdgpud_sim_cache_max = 1ULL << 30;

struct mdgpud_sim_block {
	void *host;
	uint64_t reserved;
	struct mdgpud_sim_block *next;	/* free cache */
};

struct mdgpud_backend {
	pthread_mutex_t lock;	/* protects everything below */
	uint64_t fb_size;
	uint64_t fb_used;	/* reserved bytes of live allocations */
	uint64_t next_addr;
	uint64_t cache_bytes;
	struct mdgpud_sim_block *cache;
	bool realtime;
	size_t page;
};

struct mdgpud_sim_alloc {
	uint64_t addr;
	uint64_t size;
	struct mdgpud_sim_block *blk;
};

struct mdgpud_sim_event {
	uint64_t ns;
	bool recorded;
	bool no_timing;		/* MDGPU_EVENT_F_DISABLE_TIMING */
	struct mdgpud_sim_event *next;
	struct mdgpud_sim_event *prev;
};

struct mdgpud_bctx {
	struct mdgpud_backend *be;
	uint32_t vgpu_id;
	uint64_t clock_ns;	/* simulated GPU time */
	uint64_t slice_start_ns;
	struct mdgpud_sim_alloc *a;	/* sorted by addr */
	size_t na, cap;
	struct mdgpud_sim_event events;	/* list head */
	uint64_t limit[MDGPUD_CU_LIMIT_MAX];	/* CTX_LIMIT values */
	uint64_t next_stream;	/* stream values handed out */
};

static void mdgpud_sim_device_info(struct mdgpu_device_info *d,
				   uint32_t sm_count, uint64_t fb_size);
static void mdgpud_sim_limits_init(struct mdgpud_bctx *c);

static int mdgpud_sim_open(const struct mdgpud_backend_cfg *cfg,
			   struct mdgpud_backend **out,
			   struct mdgpud_gpu_info *info)
{
	struct mdgpud_backend *be;

	if (!cfg->fb_size || !cfg->sm_count)
		return -EINVAL;
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	pthread_mutex_init(&be->lock, NULL);
	be->fb_size = cfg->fb_size;
	be->next_addr = mdgpud_sim_addr_base;
	be->realtime = cfg->sim_realtime;
	be->page = (size_t)sysconf(_SC_PAGESIZE);
	memset(info, 0, sizeof(*info));
	strcpy(info->name, "mdgpu sim");
	strcpy(info->bus_id, "sim0");
	info->fb_size = cfg->fb_size;
	info->ctx_pinned = cfg->sim_ctx_pinned;
	info->sm_count = cfg->sm_count;
	info->kind = MDGPU_BACKEND_SIM;
	mdgpud_sim_device_info(&info->dev, cfg->sm_count, cfg->fb_size);
	*out = be;
	return 0;
}

static void mdgpud_sim_close(struct mdgpud_backend *be)
{
	struct mdgpud_sim_block *b, *n;

	if (!be)
		return;
	for (b = be->cache; b; b = n) {
		n = b->next;
		munmap(b->host, b->reserved);
		free(b);
	}
	pthread_mutex_destroy(&be->lock);
	free(be);
}

static int mdgpud_sim_ctx_create(struct mdgpud_backend *be, uint32_t vgpu_id,
				 struct mdgpud_bctx **out)
{
	struct mdgpud_bctx *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->be = be;
	c->vgpu_id = vgpu_id;
	c->events.next = c->events.prev = &c->events;
	mdgpud_sim_limits_init(c);
	*out = c;
	return 0;
}

/* Scrub a block and cache it, or unmap it when the cache is full. */
static void mdgpud_sim_block_release(struct mdgpud_backend *be,
				     struct mdgpud_sim_block *b)
{
	/* Private anonymous memory: DONTNEED drops the pages, later reads
	 * see zero.  Fall back to memset if the kernel refuses. */
	if (madvise(b->host, b->reserved, MADV_DONTNEED))
		memset(b->host, 0, b->reserved);
	pthread_mutex_lock(&be->lock);
	be->fb_used -= b->reserved;
	if (be->cache_bytes + b->reserved <= mdgpud_sim_cache_max) {
		be->cache_bytes += b->reserved;
		b->next = be->cache;
		be->cache = b;
		b = NULL;
	}
	pthread_mutex_unlock(&be->lock);
	if (b) {
		munmap(b->host, b->reserved);
		free(b);
	}
}

static void mdgpud_sim_ctx_destroy(struct mdgpud_bctx *c)
{
	struct mdgpud_sim_event *e, *n;

	if (!c)
		return;
	for (size_t i = 0; i < c->na; i++)
		mdgpud_sim_block_release(c->be, c->a[i].blk);
	free(c->a);
	for (e = c->events.next; e != &c->events; e = n) {
		n = e->next;
		free(e);
	}
	free(c);
}

static void *mdgpud_sim_host_alloc(struct mdgpud_bctx *c, size_t size)
{
	void *p;

	(void)c;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void mdgpud_sim_host_free(struct mdgpud_bctx *c, void *p, size_t size)
{
	(void)c;
	if (p)
		munmap(p, size);
}

static int mdgpud_sim_map_shared(struct mdgpud_bctx *c, int fd,
				 uint64_t offset, void *ptr, size_t size)
{
	/* Same process: the daemon's mapping is already usable. */
	(void)c; (void)fd; (void)offset; (void)ptr; (void)size;
	return 0;
}

static void mdgpud_sim_tick(struct mdgpud_bctx *c, uint64_t bytes)
{
	c->clock_ns += mdgpud_sim_op_ns + bytes * 1000 / mdgpud_sim_bytes_per_us;
}

static int mdgpud_sim_mem_alloc(struct mdgpud_bctx *c, uint64_t size,
				uint64_t *addr, uint64_t *reserved)
{
	struct mdgpud_backend *be = c->be;
	struct mdgpud_sim_block *b = NULL, **pp;
	uint64_t rsv, span, naddr;
	int ret = 0;

	if (!size || __builtin_add_overflow(size, be->page - 1, &rsv))
		return -ENOMEM;
	rsv &= ~((uint64_t)be->page - 1);
	if (__builtin_add_overflow(rsv, mdgpud_sim_addr_align - 1, &span))
		return -ENOMEM;
	span &= ~(mdgpud_sim_addr_align - 1);
	if (c->na == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		void *na = realloc(c->a, ncap * sizeof(*c->a));

		if (!na)
			return -ENOMEM;
		c->a = na;
		c->cap = ncap;
	}

	pthread_mutex_lock(&be->lock);
	if (rsv > be->fb_size - be->fb_used ||
	    __builtin_add_overflow(be->next_addr, span, &naddr)) {
		ret = -ENOMEM;
		goto out;
	}
	for (pp = &be->cache; *pp; pp = &(*pp)->next) {
		if ((*pp)->reserved == rsv) {
			b = *pp;
			*pp = b->next;
			be->cache_bytes -= rsv;
			break;
		}
	}
	be->fb_used += rsv;
	*addr = be->next_addr;
	be->next_addr = naddr;
out:
	pthread_mutex_unlock(&be->lock);
	if (ret)
		return ret;

	if (!b) {
		void *host = mmap(NULL, rsv, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				  -1, 0);

		b = host == MAP_FAILED ? NULL : calloc(1, sizeof(*b));
		if (!b) {
			if (host != MAP_FAILED)
				munmap(host, rsv);
			pthread_mutex_lock(&be->lock);
			be->fb_used -= rsv;
			pthread_mutex_unlock(&be->lock);
			return -ENOMEM;
		}
		b->host = host;
		b->reserved = rsv;
	}
	b->next = NULL;
	/* Addresses only grow, so appending keeps the array sorted. */
	c->a[c->na++] = (struct mdgpud_sim_alloc){ *addr, size, b };
	*reserved = rsv;
	mdgpud_sim_tick(c, 0);
	return 0;
}

static long mdgpud_sim_find(const struct mdgpud_bctx *c, uint64_t addr)
{
	long lo = 0, hi = (long)c->na - 1, ans = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (c->a[mid].addr <= addr) {
			ans = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return ans;
}

/* Host pointer of device range [addr, addr + len), or NULL. */
static uint8_t *mdgpud_sim_ptr(const struct mdgpud_bctx *c, uint64_t addr,
			       uint64_t len)
{
	long i = mdgpud_sim_find(c, addr);
	uint64_t off, end;

	if (i < 0)
		return NULL;
	off = addr - c->a[i].addr;
	if (off >= c->a[i].size && !(off == 0 && len == 0))
		return NULL;
	if (__builtin_add_overflow(off, len, &end) || end > c->a[i].size)
		return NULL;
	return (uint8_t *)c->a[i].blk->host + off;
}

static int mdgpud_sim_mem_free(struct mdgpud_bctx *c, uint64_t addr,
			       uint64_t size)
{
	long i = mdgpud_sim_find(c, addr);
	struct mdgpud_sim_block *b;

	if (i < 0 || c->a[i].addr != addr || c->a[i].size != size)
		return -ENOENT;
	b = c->a[i].blk;
	memmove(&c->a[i], &c->a[i + 1],
		(c->na - (size_t)i - 1) * sizeof(*c->a));
	c->na--;
	mdgpud_sim_block_release(c->be, b);
	mdgpud_sim_tick(c, 0);
	return 0;
}

static int mdgpud_sim_mem_set(struct mdgpud_bctx *c, uint64_t stream,
			      uint64_t addr, uint32_t value, uint32_t width,
			      uint64_t len)
{
	uint8_t *p = mdgpud_sim_ptr(c, addr, len);
	uint16_t v16 = (uint16_t)value;

	(void)stream;
	if (!p)
		return -EFAULT;
	if ((width != 1 && width != 2 && width != 4) || len % width)
		return -EINVAL;
	if (width == 1)
		memset(p, (uint8_t)value, len);
	for (uint64_t i = 0; width == 2 && i < len; i += 2)
		memcpy(p + i, &v16, 2);
	for (uint64_t i = 0; width == 4 && i < len; i += 4)
		memcpy(p + i, &value, 4);
	mdgpud_sim_tick(c, len);
	return 0;
}

/* Host copies are synchronous whether or not `async` asks otherwise. */
static int mdgpud_sim_copy_h2d(struct mdgpud_bctx *c, uint64_t stream,
			       uint64_t dst, const void *src, uint64_t len,
			       int async)
{
	uint8_t *p = mdgpud_sim_ptr(c, dst, len);

	(void)stream;
	(void)async;
	if (!p)
		return -EFAULT;
	memcpy(p, src, len);
	mdgpud_sim_tick(c, len);
	return 0;
}

static int mdgpud_sim_copy_d2h(struct mdgpud_bctx *c, uint64_t stream,
			       void *dst, uint64_t src, uint64_t len, int async)
{
	uint8_t *p = mdgpud_sim_ptr(c, src, len);

	(void)stream;
	(void)async;
	if (!p)
		return -EFAULT;
	memcpy(dst, p, len);
	mdgpud_sim_tick(c, len);
	return 0;
}

static int mdgpud_sim_copy_d2d(struct mdgpud_bctx *c, uint64_t stream,
			       uint64_t dst, uint64_t src, uint64_t len)
{
	uint8_t *d = mdgpud_sim_ptr(c, dst, len);
	uint8_t *s = mdgpud_sim_ptr(c, src, len);

	(void)stream;
	if (!d || !s)
		return -EFAULT;
	memmove(d, s, len);
	mdgpud_sim_tick(c, 2 * len);
	return 0;
}

static int mdgpud_sim_module_load(struct mdgpud_bctx *c, uint32_t kind,
				  const void *image, size_t len,
				  uint64_t *module)
{
	(void)c; (void)kind; (void)image; (void)len; (void)module;
	return -EOPNOTSUPP;	/* a CPU cannot run foreign PTX/cubin */
}

static int mdgpud_sim_module_unload(struct mdgpud_bctx *c, uint64_t module)
{
	(void)c; (void)module;
	return -ENOENT;
}

static int mdgpud_sim_func_get(struct mdgpud_bctx *c, uint64_t module,
			       const char *name, uint64_t *func,
			       uint64_t *local_bytes)
{
	(void)c; (void)module; (void)name; (void)func; (void)local_bytes;
	return -ENOENT;
}

static int mdgpud_sim_launch(struct mdgpud_bctx *c, uint64_t stream,
			     const struct mdgpud_launch *l)
{
	(void)c; (void)stream; (void)l;
	return -EOPNOTSUPP;
}

static uint64_t mdgpud_sim_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Real-time wait for sim_realtime.  nanosleep() overshoots by the timer
 * slack (50 us by default) plus a wake-up, which would dwarf short
 * kernels, so sleep only for the part above mdgpud_sim_spin_ns and spin
 * the rest, as a GPU kernel occupies its engine.
 */
static const uint64_t mdgpud_sim_spin_ns = 200000;

static void mdgpud_sim_sleep_ns(uint64_t ns)
{
	uint64_t end = mdgpud_sim_mono_ns() + ns;

	if (ns > mdgpud_sim_spin_ns) {
		uint64_t nap = ns - mdgpud_sim_spin_ns;
		struct timespec ts = { (time_t)(nap / 1000000000ULL),
				       (long)(nap % 1000000000ULL) };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	while (mdgpud_sim_mono_ns() < end)
		mdgpu_cpu_relax();
}

static int mdgpud_sim_builtin(struct mdgpud_bctx *c, uint64_t stream,
			      uint32_t kernel, const uint64_t arg[5],
			      uint64_t *result)
{
	uint32_t *d, *a, *b;
	uint64_t n, bytes;

	(void)stream;
	*result = 0;
	switch (kernel) {
	case MDGPU_BUILTIN_FILL_U32:
		n = arg[1];
		if (__builtin_mul_overflow(n, (uint64_t)4, &bytes))
			return -ERANGE;
		d = (uint32_t *)mdgpud_sim_ptr(c, arg[0], bytes);
		if (!d)
			return -EFAULT;
		for (uint64_t i = 0; i < n; i++)
			d[i] = (uint32_t)arg[2];
		mdgpud_sim_tick(c, bytes);
		return 0;
	case MDGPU_BUILTIN_ADD_U32:
		n = arg[3];
		if (__builtin_mul_overflow(n, (uint64_t)4, &bytes))
			return -ERANGE;
		d = (uint32_t *)mdgpud_sim_ptr(c, arg[0], bytes);
		a = (uint32_t *)mdgpud_sim_ptr(c, arg[1], bytes);
		b = (uint32_t *)mdgpud_sim_ptr(c, arg[2], bytes);
		if (!d || !a || !b)
			return -EFAULT;
		for (uint64_t i = 0; i < n; i++)
			d[i] = a[i] + b[i];
		mdgpud_sim_tick(c, 3 * bytes);
		return 0;
	case MDGPU_BUILTIN_CHECKSUM:
		n = arg[1];
		if (__builtin_mul_overflow(n, (uint64_t)4, &bytes))
			return -ERANGE;
		a = (uint32_t *)mdgpud_sim_ptr(c, arg[0], bytes);
		if (!a)
			return -EFAULT;
		*result = mdgpud_checksum_ref(a, n);
		mdgpud_sim_tick(c, bytes);
		return 0;
	case MDGPU_BUILTIN_SPIN_NS:
		if (arg[0] > MDGPU_SPIN_NS_MAX)
			return -E2BIG;
		c->clock_ns += arg[0];
		if (c->be->realtime && arg[0])
			mdgpud_sim_sleep_ns(arg[0]);
		return 0;
	default:
		return -EINVAL;
	}
}

static int mdgpud_sim_event_create(struct mdgpud_bctx *c, uint32_t flags,
				   uint64_t *event)
{
	struct mdgpud_sim_event *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->no_timing = flags & MDGPU_EVENT_F_DISABLE_TIMING;
	e->next = c->events.next;
	e->prev = &c->events;
	c->events.next->prev = e;
	c->events.next = e;
	*event = (uint64_t)(uintptr_t)e;
	return 0;
}

static int mdgpud_sim_event_record(struct mdgpud_bctx *c, uint64_t stream,
				   uint64_t event)
{
	struct mdgpud_sim_event *e = (void *)(uintptr_t)event;

	(void)stream;
	e->ns = c->clock_ns;
	e->recorded = true;
	return 0;
}

static int mdgpud_sim_event_elapsed(struct mdgpud_bctx *c, uint64_t start,
				    uint64_t end, uint64_t *ns)
{
	struct mdgpud_sim_event *s = (void *)(uintptr_t)start;
	struct mdgpud_sim_event *e = (void *)(uintptr_t)end;

	(void)c;
	if (!s->recorded || !e->recorded)
		return -EINVAL;	/* as cuEventElapsedTime on unrecorded */
	if (s->no_timing || e->no_timing)
		return -EINVAL;	/* as cuEventElapsedTime: INVALID_HANDLE */
	*ns = e->ns >= s->ns ? e->ns - s->ns : 0;
	return 0;
}

static int mdgpud_sim_event_destroy(struct mdgpud_bctx *c, uint64_t event)
{
	struct mdgpud_sim_event *e = (void *)(uintptr_t)event;

	(void)c;
	e->prev->next = e->next;
	e->next->prev = e->prev;
	free(e);
	return 0;
}

static int mdgpud_sim_sync(struct mdgpud_bctx *c, uint64_t stream)
{
	(void)c;	/* everything ran synchronously */
	(void)stream;
	return 0;
}

static int mdgpud_sim_stream_create(struct mdgpud_bctx *c, uint32_t flags,
				    int32_t priority, uint64_t *stream)
{
	(void)flags;	/* one queue: nothing to synchronise */
	(void)priority;
	*stream = ++c->next_stream;
	return 0;
}

static int mdgpud_sim_stream_destroy(struct mdgpud_bctx *c, uint64_t stream)
{
	(void)c;
	(void)stream;
	return 0;
}

static int mdgpud_sim_stream_wait_event(struct mdgpud_bctx *c,
					uint64_t stream, uint64_t event)
{
	(void)c;	/* the event's work is done already */
	(void)stream;
	(void)event;
	return 0;
}

static int mdgpud_sim_stream_memop(struct mdgpud_bctx *c, uint64_t stream,
				   uint32_t op, uint64_t addr, uint64_t value,
				   uint32_t flags)
{
	bool wide = op == MDGPU_MEMOP_WRITE64 || op == MDGPU_MEMOP_WAIT64;
	uint8_t *p = mdgpud_sim_ptr(c, addr, wide ? 8 : 4);
	uint32_t w32, v32 = (uint32_t)value;
	uint64_t w64;

	(void)stream;	/* one queue */
	if (!p)
		return -EFAULT;
	switch (op) {
	case MDGPU_MEMOP_WRITE32:
		memcpy(p, &v32, sizeof(v32));
		break;
	case MDGPU_MEMOP_WRITE64:
		memcpy(p, &value, sizeof(value));
		break;
	case MDGPU_MEMOP_WAIT32:
		memcpy(&w32, p, sizeof(w32));
		if (!mdgpu_memop_met(flags, false, w32, value))
			return -EOPNOTSUPP;
		break;
	case MDGPU_MEMOP_WAIT64:
		memcpy(&w64, p, sizeof(w64));
		if (!mdgpu_memop_met(flags, true, w64, value))
			return -EOPNOTSUPP;
		break;
	default:
		return -EINVAL;
	}
	mdgpud_sim_tick(c, 0);
	return 0;
}

static int mdgpud_sim_stream_query(struct mdgpud_bctx *c, uint64_t stream,
				   uint32_t *pending)
{
	(void)c;
	(void)stream;
	*pending = 0;
	return 0;
}

static int mdgpud_sim_event_query(struct mdgpud_bctx *c, uint64_t event,
				  uint32_t *pending)
{
	(void)c;
	(void)event;
	*pending = 0;
	return 0;
}

static int mdgpud_sim_event_sync(struct mdgpud_bctx *c, uint64_t event)
{
	(void)c;
	(void)event;
	return 0;
}

static void mdgpud_sim_stream_priorities(struct mdgpud_backend *be,
					 int32_t *least, int32_t *greatest)
{
	(void)be;
	*least = mdgpud_sim_prio_least;
	*greatest = mdgpud_sim_prio_greatest;
}

static int mdgpud_sim_slice_begin(struct mdgpud_bctx *c)
{
	c->slice_start_ns = c->clock_ns;
	return 0;
}

static int mdgpud_sim_slice_end(struct mdgpud_bctx *c, uint64_t expect_ns,
				uint64_t *gpu_ns)
{
	(void)expect_ns;	/* nothing to wait for: work ran synchronously */
	*gpu_ns = c->clock_ns - c->slice_start_ns;
	c->slice_start_ns = c->clock_ns;
	return 0;
}

/*
 * ---- DEVICE_INFO and CTX_LIMIT of the simulated device ----------------
 *
 * The sim claims a small compute-capability 9.0 device with the SM count
 * of its configuration (sim_sm_count): the table below, every other
 * attribute MDGPU_ATTR_NONE.  Documentation/abi.md lists it.
 *
 * NVIDIA's runtime (cudart 13.0) reads about 110 attributes at its first
 * call to fill cudaDeviceProp and fails that call ("initialization
 * error") if any read fails, so the table answers every attribute it
 * reads (Documentation/export-tables.md): texture and surface limits are
 * compute capability 9.0's (CUDA Programming Guide, technical
 * specifications); what describes the hardware says what the sim is (not
 * integrated, no ECC, no PCI ids, work runs synchronously: no copy
 * engines beside compute, no preemption, no L2 persistence).
 */
static const struct {
	uint16_t attr;
	int32_t value;
} mdgpud_sim_attrs[] = {
	{ MDGPUD_CU_DEV_ATTR_MAX_THREADS_PER_BLOCK, MDGPU_BLOCK_THREADS_MAX },
	{ 2, 1024 }, { 3, 1024 }, { 4, 64 },		/* max block dims */
	{ 5, 0x7fffffff }, { 6, 65535 }, { 7, 65535 },	/* max grid dims */
	{ 8, 49152 },			/* shared memory per block */
	{ 9, 65536 },			/* constant memory */
	{ MDGPUD_CU_DEV_ATTR_WARP_SIZE, 32 },
	{ 12, 65536 },			/* registers per block */
	{ 13, 1000000 },		/* clock rate, kHz */
	{ 14, 512 },			/* texture alignment */
	{ 19, 1 },			/* can map host memory */
	{ 20, 0 },			/* compute mode default */
	{ 31, 1 },			/* concurrent kernels */
	{ 38, 4 << 20 },		/* L2 bytes */
	{ MDGPUD_CU_DEV_ATTR_MAX_THREADS_PER_MULTIPROCESSOR, 2048 },
	{ 41, 1 },			/* unified addressing */
	{ MDGPUD_CU_DEV_ATTR_COMPUTE_CAPABILITY_MAJOR, 9 },
	{ MDGPUD_CU_DEV_ATTR_COMPUTE_CAPABILITY_MINOR, 0 },
	{ 81, 233472 },			/* shared memory per SM */
	{ 82, 65536 },			/* registers per SM */
	{ 97, 232448 },			/* shared memory per block, opt-in */
	{ 106, 32 },			/* blocks per SM */
	{ 11, 0x7fffffff },		/* max pitch */
	{ 18, 0 },			/* integrated */
	{ 21, 131072 },			/* texture 1D width */
	{ 22, 131072 }, { 23, 65536 },	/* texture 2D */
	{ 24, 16384 }, { 25, 16384 }, { 26, 16384 },	/* texture 3D */
	{ 27, 32768 }, { 28, 32768 }, { 29, 2048 },	/* 2D layered */
	{ 30, 512 },			/* surface alignment */
	{ 32, 0 },			/* ECC enabled */
	{ 35, 0 },			/* TCC driver */
	{ 37, 5120 },			/* memory bus width, bits */
	{ 40, 0 },			/* async (copy) engines */
	{ 42, 32768 }, { 43, 2048 },	/* texture 1D layered */
	{ 45, 32768 }, { 46, 32768 },	/* texture 2D gather */
	{ 47, 8192 }, { 48, 8192 }, { 49, 32768 },	/* 3D alternate */
	{ 51, 32 },			/* texture pitch alignment */
	{ 52, 32768 },			/* cubemap */
	{ 53, 32768 }, { 54, 2046 },	/* cubemap layered */
	{ 55, 32768 },			/* surface 1D */
	{ 56, 131072 }, { 57, 65536 },	/* surface 2D */
	{ 58, 16384 }, { 59, 16384 }, { 60, 16384 },	/* surface 3D */
	{ 61, 32768 }, { 62, 2048 },	/* surface 1D layered */
	{ 63, 32768 }, { 64, 32768 }, { 65, 2048 },	/* surface 2D layered */
	{ 66, 32768 },			/* surface cubemap */
	{ 67, 32768 }, { 68, 2046 },	/* surface cubemap layered */
	{ 70, 131072 }, { 71, 65000 }, { 72, 2097120 },	/* 2D linear */
	{ 73, 32768 }, { 74, 32768 },	/* texture 2D mipmapped */
	{ 77, 32768 },			/* texture 1D mipmapped */
	{ 78, 1 },			/* stream priorities */
	{ 79, 1 }, { 80, 1 },		/* global, local L1 caching */
	{ 85, 0 },			/* multi-GPU board group */
	{ 90, 0 },			/* compute preemption */
	{ 95, 1 },			/* cooperative launch */
	{ 108, 0 },			/* max persisting L2 bytes */
	{ 109, 0 },			/* max access policy window */
	{ 111, 1024 },			/* reserved shared memory/block */
	{ 120, 1 },			/* cluster launch */
	{ 122, 1 }, { 123, 1 },		/* 64-bit stream memory ops, NOR
					 * waits (one not met is refused) */
	{ 129, 0 },			/* unified function pointers */
	{ 139, 0 }, { 140, 0 },		/* PCI device, subsystem ids */
};

static void mdgpud_sim_device_info(struct mdgpu_device_info *d,
				   uint32_t sm_count, uint64_t fb_size)
{
	uint32_t n = 0;

	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	strcpy(d->name, "mdgpu sim");
	d->gpu_mem_total = fb_size;
	d->driver_version = 13000;	/* the CUDA semantics it follows */
	for (uint32_t i = 0; i < MDGPU_DEV_ATTR_MAX; i++)
		d->attr[i] = MDGPU_ATTR_NONE;
	for (size_t i = 0; i < sizeof(mdgpud_sim_attrs) /
			       sizeof(mdgpud_sim_attrs[0]); i++) {
		d->attr[mdgpud_sim_attrs[i].attr] = mdgpud_sim_attrs[i].value;
		if (mdgpud_sim_attrs[i].attr >= n)
			n = mdgpud_sim_attrs[i].attr + 1U;
	}
	d->attr[MDGPUD_CU_DEV_ATTR_MULTIPROCESSOR_COUNT] = (int32_t)sm_count;
	d->nr_attrs = n > MDGPUD_CU_DEV_ATTR_MULTIPROCESSOR_COUNT ? n :
		      MDGPUD_CU_DEV_ATTR_MULTIPROCESSOR_COUNT + 1U;
}

/* A context's limits start at the H100's defaults (driver 580). */
static void mdgpud_sim_limits_init(struct mdgpud_bctx *c)
{
	c->limit[MDGPUD_CU_LIMIT_STACK_SIZE] = 1024;
	c->limit[MDGPUD_CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20;
	c->limit[MDGPUD_CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20;
	c->limit[MDGPUD_CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2;
	c->limit[MDGPUD_CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048;
	c->limit[MDGPUD_CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64;
	c->limit[MDGPUD_CU_LIMIT_SHMEM_SIZE] = 232448;
	c->limit[MDGPUD_CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED] = 1;
}

/* Only a bookkeeping device: values are kept, nothing is reserved. */
static int mdgpud_sim_ctx_limit(struct mdgpud_bctx *c, uint32_t limit,
				int set, uint64_t value, uint64_t *result)
{
	if (limit >= MDGPUD_CU_LIMIT_MAX)
		return -EINVAL;
	if (set) {
		if (limit == MDGPUD_CU_LIMIT_MAX_L2_FETCH_GRANULARITY &&
		    value > 128)
			return -EINVAL;
		c->limit[limit] = value;
	}
	*result = c->limit[limit];
	return 0;
}

const struct mdgpud_backend_ops mdgpud_backend_sim = {
	.name = "sim",
	.open = mdgpud_sim_open,
	.close = mdgpud_sim_close,
	.ctx_create = mdgpud_sim_ctx_create,
	.ctx_destroy = mdgpud_sim_ctx_destroy,
	.host_alloc = mdgpud_sim_host_alloc,
	.host_free = mdgpud_sim_host_free,
	.map_shared = mdgpud_sim_map_shared,
	.mem_alloc = mdgpud_sim_mem_alloc,
	.mem_free = mdgpud_sim_mem_free,
	.mem_set = mdgpud_sim_mem_set,
	.copy_h2d = mdgpud_sim_copy_h2d,
	.copy_d2h = mdgpud_sim_copy_d2h,
	.copy_d2d = mdgpud_sim_copy_d2d,
	.module_load = mdgpud_sim_module_load,
	.module_unload = mdgpud_sim_module_unload,
	.func_get = mdgpud_sim_func_get,
	.launch = mdgpud_sim_launch,
	.builtin = mdgpud_sim_builtin,
	.event_create = mdgpud_sim_event_create,
	.event_record = mdgpud_sim_event_record,
	.event_elapsed = mdgpud_sim_event_elapsed,
	.event_destroy = mdgpud_sim_event_destroy,
	.sync = mdgpud_sim_sync,
	.slice_begin = mdgpud_sim_slice_begin,
	.slice_end = mdgpud_sim_slice_end,
	/* No foreign code: FUNC_INFO, FUNC_SET_ATTR, MODULE_GLOBAL,
	 * OCCUPANCY and MODULE_FUNCS have no function or module to name
	 * (the validator answers -ENOENT); the aperture is not
	 * device-mapped (QUERY APERTURE_DEVPTR answers 0). */
	.ctx_limit = mdgpud_sim_ctx_limit,
	.stream_create = mdgpud_sim_stream_create,
	.stream_destroy = mdgpud_sim_stream_destroy,
	.stream_wait_event = mdgpud_sim_stream_wait_event,
	.stream_query = mdgpud_sim_stream_query,
	.stream_memop = mdgpud_sim_stream_memop,
	.event_query = mdgpud_sim_event_query,
	.event_sync = mdgpud_sim_event_sync,
	.stream_priorities = mdgpud_sim_stream_priorities,
};
