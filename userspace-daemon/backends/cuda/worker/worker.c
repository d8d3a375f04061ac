// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpud-worker: executes one vGPU's work in its own process, holding its
 * own CUDA context and so its own GPU address space (see DESIGN.md,
 * "Isolation between tenants").  Started by backend_cuda.c with fork+exec:
 *
 *   mdgpud-worker probe <device-ordinal>
 *       fd 3: the shared memfd.  Fills shm->info, state PROBED, exits.
 *   mdgpud-worker serve <device-ordinal> <vgpu-id> <supervisor-pid>
 *       fd 3: the shared memfd, fd 4: unix socket for fd passing.
 *       Serves requests from the ring (backends/cuda/cuda_rpc.h) until SHUTDOWN,
 *       until the supervisor disappears, or until a sticky GPU error makes
 *       the context unusable.
 *
 * The worker is built without sanitizers: it is the only process that
 * loads libcuda.
 */
#include "cuda_api.h"
#include "cuda_rpc.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <uapi/mdgpu.h>

extern const char mdgpud_builtin_ptx[];

#define MDGPUD_WORKER_JIT_LOG_BYTES	4096
#define MDGPUD_WORKER_BLOCK_THREADS	256
#define MDGPUD_WORKER_BLOCKS_PER_SM	8
#define MDGPUD_WORKER_IDLE_CHECK_MS	200
/* cuMemAlloc's page: larger allocations take whole pages (measured). */
#define MDGPUD_WORKER_GPU_PAGE		(2ull << 20)
#define MDGPUD_WORKER_SUBALLOC_MIN	512ull

struct mdgpud_worker_region {
	uint8_t *ptr;
	uint64_t size;
	int registered;
};

struct mdgpud_worker_alloc {
	mdgpud_cu_deviceptr addr;
	uint64_t size;
};

struct mdgpud_worker {
	struct mdgpud_cuda_api cu;
	struct mdgpud_cuda_rpc_shm *shm;
	int sock;
	pid_t sup_pid;
	uint32_t vgpu_id;
	mdgpud_cu_device dev;
	mdgpud_cu_context ctx;
	mdgpud_cu_stream stream;
	mdgpud_cu_module builtin_mod;
	mdgpud_cu_function fn_fill, fn_add, fn_checksum, fn_spin;
	mdgpud_cu_deviceptr scratch;	/* 8 bytes: checksum result */
	mdgpud_cu_event slice_ev[2];
	mdgpud_cu_event drain_ev;	/* CU_EVENT_BLOCKING_SYNC, no timing */
	int slice_open;
	uint32_t sm_count;
	int pending_err;		/* first error of an async request */

	struct mdgpud_worker_region *regions;
	size_t nr_regions;
	struct mdgpud_worker_alloc *allocs;
	size_t nr_allocs, cap_allocs;
	/* Handles the context created, to reject foreign ones. */
	uintptr_t *modules, *funcs, *events;
	size_t nr_modules, nr_funcs, nr_events;
	size_t cap_modules, cap_funcs, cap_events;
};

static void mdgpud_worker_msg(struct mdgpud_worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void mdgpud_worker_msg(struct mdgpud_worker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->shm->msg, sizeof(w->shm->msg), fmt, ap);
	va_end(ap);
}

/* Sticky errors make the context unusable: tell the supervisor, exit. */
static void mdgpud_worker_lost(struct mdgpud_worker *w,
			       mdgpud_cu_result res, const char *what)
{
	const char *name = NULL;

	if (w->cu.get_error_name)
		w->cu.get_error_name(res, &name);
	mdgpud_worker_msg(w, "%s: %s (%u): context lost", what,
			  name ? name : "?", res);
	atomic_store(&w->shm->state, MDGPUD_CUDA_WORKER_LOST);
}

/* Maps a CUresult, noting a sticky error.  Returns a negative errno. */
static int mdgpud_worker_err(struct mdgpud_worker *w, mdgpud_cu_result res,
			     const char *what)
{
	if (res == MDGPUD_CUDA_SUCCESS)
		return 0;
	if (mdgpud_cuda_error_is_sticky(res)) {
		mdgpud_worker_lost(w, res, what);
		return -EIO;
	}
	{
		const char *name = NULL;

		w->cu.get_error_name(res, &name);
		mdgpud_worker_msg(w, "%s: %s (%u)", what, name ? name : "?",
				  res);
	}
	return mdgpud_cuda_errno(res);
}

static int mdgpud_worker_push(uintptr_t **arr, size_t *nr, size_t *cap,
			      uintptr_t v)
{
	if (*nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		uintptr_t *n = realloc(*arr, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		*arr = n;
		*cap = ncap;
	}
	(*arr)[(*nr)++] = v;
	return 0;
}

static ssize_t mdgpud_worker_find(const uintptr_t *arr, size_t nr,
				  uintptr_t v)
{
	for (size_t i = 0; i < nr; i++)
		if (arr[i] == v)
			return (ssize_t)i;
	return -1;
}

static void mdgpud_worker_drop(uintptr_t *arr, size_t *nr, size_t i)
{
	arr[i] = arr[--*nr];
}

static int mdgpud_worker_init_cuda(struct mdgpud_worker *w, int ordinal)
{
	char why[256];
	mdgpud_cu_result res;
	int count = 0, sm = 0, ret;
	size_t free_b = 0, total_b = 0;

	ret = mdgpud_cuda_api_load(&w->cu, NULL, why, sizeof(why));
	if (ret) {
		mdgpud_worker_msg(w, "%s", why);
		return ret;
	}
	res = w->cu.init(0);
	if (res) {
		const char *name = NULL;

		w->cu.get_error_name(res, &name);
		mdgpud_worker_msg(w, "cuInit: %s (%u)", name ? name : "?", res);
		return mdgpud_cuda_errno(res);
	}
	res = w->cu.device_get_count(&count);
	if (res || count <= ordinal || ordinal < 0) {
		mdgpud_worker_msg(w, "no CUDA device %d (%d present)", ordinal,
				  count);
		return -ENODEV;
	}
	if ((res = w->cu.device_get(&w->dev, ordinal)) ||
	    (res = w->cu.primary_ctx_retain(&w->ctx, w->dev)) ||
	    (res = w->cu.ctx_set_current(w->ctx)))
		return mdgpud_worker_err(w, res, "context");
	w->cu.device_get_attribute(&sm,
				   MDGPUD_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
				   w->dev);
	w->sm_count = sm > 0 ? (uint32_t)sm : 1;
	w->shm->info.sm_count = w->sm_count;
	w->cu.device_get_name(w->shm->info.name, sizeof(w->shm->info.name),
			      w->dev);
	w->cu.device_get_pci_bus_id(w->shm->info.bus_id,
				    sizeof(w->shm->info.bus_id), w->dev);
	w->cu.driver_get_version(&w->shm->info.driver_version);
	res = w->cu.mem_get_info(&free_b, &total_b);
	if (res)
		return mdgpud_worker_err(w, res, "cuMemGetInfo");
	w->shm->info.mem_free_bytes = free_b;
	w->shm->info.mem_total_bytes = total_b;
	return 0;
}

static int mdgpud_worker_init_serve(struct mdgpud_worker *w)
{
	char log[MDGPUD_WORKER_JIT_LOG_BYTES] = "";
	mdgpud_cu_jit_option opt[2] = {
		MDGPUD_CU_JIT_ERROR_LOG_BUFFER,
		MDGPUD_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
	};
	void *val[2] = { log, (void *)(uintptr_t)sizeof(log) };
	mdgpud_cu_result res;

	if ((res = w->cu.stream_create(&w->stream,
				       MDGPUD_CU_STREAM_NON_BLOCKING)))
		return mdgpud_worker_err(w, res, "cuStreamCreate");
	res = w->cu.module_load_data_ex(&w->builtin_mod, mdgpud_builtin_ptx, 2,
					opt, val);
	if (res) {
		mdgpud_worker_err(w, res, "builtin PTX");
		mdgpud_worker_msg(w, "builtin PTX failed to load: %.400s", log);
		return -EIO;
	}
	if ((res = w->cu.module_get_function(&w->fn_fill, w->builtin_mod,
					     "mdgpud_fill_u32")) ||
	    (res = w->cu.module_get_function(&w->fn_add, w->builtin_mod,
					     "mdgpud_add_u32")) ||
	    (res = w->cu.module_get_function(&w->fn_checksum, w->builtin_mod,
					     "mdgpud_checksum_u32")) ||
	    (res = w->cu.module_get_function(&w->fn_spin, w->builtin_mod,
					     "mdgpud_spin_ns")))
		return mdgpud_worker_err(w, res, "builtin function");
	if ((res = w->cu.mem_alloc(&w->scratch, sizeof(uint64_t))))
		return mdgpud_worker_err(w, res, "scratch alloc");
	if ((res = w->cu.event_create(&w->slice_ev[0], MDGPUD_CU_EVENT_DEFAULT)) ||
	    (res = w->cu.event_create(&w->slice_ev[1], MDGPUD_CU_EVENT_DEFAULT)) ||
	    (res = w->cu.event_create(&w->drain_ev,
				      MDGPUD_CU_EVENT_BLOCKING_SYNC |
				      MDGPUD_CU_EVENT_DISABLE_TIMING)))
		return mdgpud_worker_err(w, res, "cuEventCreate");
	/* The staging area is region 0; pin it for DMA-speed bounces. */
	w->regions = calloc(1, sizeof(*w->regions));
	if (!w->regions)
		return -ENOMEM;
	w->nr_regions = 1;
	w->regions[0].ptr = w->shm->staging;
	w->regions[0].size = sizeof(w->shm->staging);
	if (!w->cu.mem_host_register(w->shm->staging, sizeof(w->shm->staging),
				     MDGPUD_CU_MEMHOSTREGISTER_PORTABLE))
		w->regions[0].registered = 1;
	return 0;
}

static uint8_t *mdgpud_worker_host(struct mdgpud_worker *w, uint64_t region,
				   uint64_t off, uint64_t len)
{
	struct mdgpud_worker_region *r;

	if (region >= w->nr_regions)
		return NULL;
	r = &w->regions[region];
	if (!r->ptr || off > r->size || len > r->size - off)
		return NULL;
	return r->ptr + off;
}

/*
 * Bytes a cuMemAlloc of `size` really sets aside, as measured on the H100
 * (cuMemGetInfo deltas, tests/gpu/bench_cuda_backend.c): above 1 MiB whole
 * 2 MiB pages (2 MiB + 1 B took 4 MiB); up to 1 MiB the driver packs
 * allocations into shared pages (two of 1 MiB per page, sixteen of 64 KiB
 * or less in one), charged here as the next power of two, at least 512 B.
 */
static uint64_t mdgpud_worker_reserved(uint64_t size)
{
	uint64_t r = MDGPUD_WORKER_SUBALLOC_MIN;

	if (size > MDGPUD_WORKER_GPU_PAGE / 2)
		return (size + MDGPUD_WORKER_GPU_PAGE - 1) &
		       ~(MDGPUD_WORKER_GPU_PAGE - 1);
	while (r < size)
		r <<= 1;
	return r;
}

static ssize_t mdgpud_worker_alloc_find(struct mdgpud_worker *w,
					mdgpud_cu_deviceptr addr)
{
	for (size_t i = 0; i < w->nr_allocs; i++)
		if (w->allocs[i].addr == addr)
			return (ssize_t)i;
	return -1;
}

/*
 * Polls between nanosleeps while a drain is far from its expected end: a
 * drain that ends before the estimate is seen this late at most.  The
 * worker runs with a 1 us timer slack (main), so a 25 us nanosleep lasts
 * about that, not the default slack's 50 us more; about 4 us of CPU a poll.
 */
#define MDGPUD_WORKER_DRAIN_POLL_NS	25000L
#define MDGPUD_WORKER_TIMER_SLACK_NS	1000UL

/*
 * Waits until the stream has drained; the driver's result (a sticky error
 * of earlier work included).  The context keeps the driver's default
 * scheduling (spinning cuStreamSynchronize), so the worker never calls
 * that on a long wait:
 *  - expect_ns (SLICE_END: the work the supervisor queued in the slice)
 *    beyond the margin: nanosleep in MDGPUD_WORKER_DRAIN_POLL_NS steps,
 *    polling the stream, until MDGPUD_CUDA_EXPECT_MARGIN_NS before the
 *    expected end;
 *  - then poll it without sleeping for spin_ns (worker_spin_ns, or a
 *    copy's expected transfer time, mdgpud_cuda_copy_spin; plus two
 *    margins around an expected end): a short wait (launch + sync of a
 *    small kernel, a copy) ends here, as quickly as a spinning
 *    synchronize;
 *  - then block on drain_ev (CU_EVENT_BLOCKING_SYNC: the driver wakes the
 *    thread by interrupt), so that a long kernel costs no CPU.
 */
static mdgpud_cu_result mdgpud_worker_drain(struct mdgpud_worker *w,
					    uint64_t expect_ns, uint64_t spin_ns)
{
	uint64_t now = mdgpud_cuda_now_ns(), until;
	mdgpud_cu_result res;

	if (expect_ns > MDGPUD_CUDA_EXPECT_MARGIN_NS) {
		uint64_t from = now + expect_ns - MDGPUD_CUDA_EXPECT_MARGIN_NS;

		while (now < from) {
			struct timespec ts = { 0, MDGPUD_WORKER_DRAIN_POLL_NS };

			res = w->cu.stream_query(w->stream);
			if (res != MDGPUD_CUDA_ERROR_NOT_READY)
				return res;
			if (from - now < (uint64_t)ts.tv_nsec)
				ts.tv_nsec = (long)(from - now);
			nanosleep(&ts, NULL);
			now = mdgpud_cuda_now_ns();
		}
		spin_ns += 2 * MDGPUD_CUDA_EXPECT_MARGIN_NS;
	}
	until = now + spin_ns;
	for (unsigned int n = 0;; n++) {
		res = w->cu.stream_query(w->stream);
		if (res != MDGPUD_CUDA_ERROR_NOT_READY)
			return res;
		if ((n & 15) == 15 && mdgpud_cuda_now_ns() >= until)
			break;
		mdgpu_cpu_relax();
	}
	res = w->cu.event_record(w->drain_ev, w->stream);
	if (!res)
		res = w->cu.event_synchronize(w->drain_ev);
	return res;
}

/* Scrub to zero, wait for it, free.  Used by MEM_FREE and shutdown. */
static int mdgpud_worker_scrub_free(struct mdgpud_worker *w, size_t i)
{
	struct mdgpud_worker_alloc a = w->allocs[i];
	mdgpud_cu_result res;

	w->allocs[i] = w->allocs[--w->nr_allocs];
	res = w->cu.memset_d8_async(a.addr, 0, a.size, w->stream);
	if (!res)
		res = mdgpud_worker_drain(w, 0, w->shm->worker_spin_ns);
	if (res)
		/* Not freed: a memory we could not scrub stays ours. */
		return mdgpud_worker_err(w, res, "scrub");
	return mdgpud_worker_err(w, w->cu.mem_free(a.addr), "cuMemFree");
}

static int mdgpud_worker_map(struct mdgpud_worker *w,
			     struct mdgpud_cuda_rpc_slot *s)
{
	uint64_t region = s->arg[0], off = s->arg[1], size = s->arg[2];
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = { 0 };
	struct cmsghdr *cm;
	struct iovec iov;
	uint32_t tag;
	int fd = -1;
	void *p;

	iov.iov_base = &tag;
	iov.iov_len = sizeof(tag);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	if (recvmsg(w->sock, &mh, MSG_CMSG_CLOEXEC) != sizeof(tag))
		return -EPROTO;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	if (fd < 0)
		return -EPROTO;
	if (tag != (uint32_t)region || region == 0 || region > 1u << 20 ||
	    size == 0) {
		close(fd);
		return -EINVAL;
	}
	if (region >= w->nr_regions) {
		struct mdgpud_worker_region *n =
			realloc(w->regions, (region + 1) * sizeof(*n));

		if (!n) {
			close(fd);
			return -ENOMEM;
		}
		memset(n + w->nr_regions, 0,
		       (region + 1 - w->nr_regions) * sizeof(*n));
		w->regions = n;
		w->nr_regions = region + 1;
	}
	if (w->regions[region].ptr) {
		close(fd);
		return -EEXIST;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)off);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	madvise(p, size, MADV_HUGEPAGE);	/* advisory, as in host_alloc */
	w->regions[region].ptr = p;
	w->regions[region].size = size;
	/*
	 * Pin it so copies run at DMA speed straight from the shared pages.
	 * If pinning fails (memlock limit), copies still work, pageable.
	 */
	w->regions[region].registered =
		!w->cu.mem_host_register(p, size,
					 MDGPUD_CU_MEMHOSTREGISTER_PORTABLE);
	return 0;
}

static void mdgpud_worker_unmap_one(struct mdgpud_worker *w, size_t region)
{
	struct mdgpud_worker_region *r = &w->regions[region];

	if (!r->ptr)
		return;
	if (r->registered)
		w->cu.mem_host_unregister(r->ptr);
	if (region != MDGPUD_CUDA_RPC_REGION_STAGING)
		munmap(r->ptr, r->size);
	memset(r, 0, sizeof(*r));
}

static unsigned int mdgpud_worker_grid(struct mdgpud_worker *w, uint64_t n)
{
	uint64_t blocks = (n + MDGPUD_WORKER_BLOCK_THREADS - 1) /
			  MDGPUD_WORKER_BLOCK_THREADS;
	uint64_t max = (uint64_t)w->sm_count * MDGPUD_WORKER_BLOCKS_PER_SM;

	if (blocks > max)
		blocks = max;
	return blocks ? (unsigned int)blocks : 1;
}

static int mdgpud_worker_launch_blob(struct mdgpud_worker *w,
				     mdgpud_cu_function f, unsigned int grid,
				     unsigned int block, void *blob,
				     size_t len)
{
	void *extra[] = {
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT,
		blob,
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT,
		&len,
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_END_AS_INT,
	};

	return mdgpud_worker_err(w, w->cu.launch_kernel(f, grid, 1, 1, block,
							  1, 1, 0, w->stream,
							  NULL, extra),
				 "builtin launch");
}

static int mdgpud_worker_builtin(struct mdgpud_worker *w,
				 struct mdgpud_cuda_rpc_slot *s)
{
	const uint64_t *a = &s->arg[1];
	mdgpud_cu_result res;
	int ret;

	switch (s->arg[0]) {
	case MDGPU_BUILTIN_FILL_U32: {
		/* Packed exactly as the kernel's parameters: 8 + 8 + 4. */
		uint8_t p[20];
		uint32_t value = (uint32_t)a[2];

		if (!a[1])
			return 0;
		memcpy(p, &a[0], 8);
		memcpy(p + 8, &a[1], 8);
		memcpy(p + 16, &value, 4);
		return mdgpud_worker_launch_blob(w, w->fn_fill,
						 mdgpud_worker_grid(w, a[1]),
						 MDGPUD_WORKER_BLOCK_THREADS,
						 p, sizeof(p));
	}
	case MDGPU_BUILTIN_ADD_U32: {
		struct { uint64_t dst, a, b, count; } p = {
			a[0], a[1], a[2], a[3] };

		if (!a[3])
			return 0;
		return mdgpud_worker_launch_blob(w, w->fn_add,
						 mdgpud_worker_grid(w, a[3]),
						 MDGPUD_WORKER_BLOCK_THREADS,
						 &p, sizeof(p));
	}
	case MDGPU_BUILTIN_CHECKSUM: {
		struct { uint64_t src, count, out; } p = {
			a[0], a[1], w->scratch };
		uint64_t sum = 0;

		res = w->cu.memset_d8_async(w->scratch, 0, sizeof(sum),
					    w->stream);
		if (res)
			return mdgpud_worker_err(w, res, "checksum");
		if (a[1]) {
			ret = mdgpud_worker_launch_blob(
				w, w->fn_checksum, mdgpud_worker_grid(w, a[1]),
				MDGPUD_WORKER_BLOCK_THREADS, &p, sizeof(p));
			if (ret)
				return ret;
		}
		res = w->cu.memcpy_dtoh_async(&sum, w->scratch, sizeof(sum),
					      w->stream);
		if (!res)
			res = mdgpud_worker_drain(w, 0,
						  w->shm->worker_spin_ns);
		if (res)
			return mdgpud_worker_err(w, res, "checksum");
		s->result[0] = sum;
		return 0;
	}
	case MDGPU_BUILTIN_SPIN_NS: {
		uint64_t ns = a[0];

		return mdgpud_worker_launch_blob(w, w->fn_spin, 1, 1, &ns,
						 sizeof(ns));
	}
	default:
		return -EINVAL;
	}
}

static int mdgpud_worker_module_load(struct mdgpud_worker *w,
				     struct mdgpud_cuda_rpc_slot *s)
{
	char log[MDGPUD_WORKER_JIT_LOG_BYTES] = "";
	mdgpud_cu_jit_option opt[2] = {
		MDGPUD_CU_JIT_ERROR_LOG_BUFFER,
		MDGPUD_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
	};
	void *val[2] = { log, (void *)(uintptr_t)sizeof(log) };
	uint64_t len = s->arg[1];
	mdgpud_cu_module mod;
	mdgpud_cu_result res;
	int ret;

	if (len == 0 || len >= sizeof(w->shm->staging))
		return -EINVAL;
	/* The supervisor NUL-terminated it; make sure of it for PTX. */
	w->shm->staging[len] = 0;
	res = w->cu.module_load_data_ex(&mod, w->shm->staging, 2, opt, val);
	if (res) {
		size_t n = strnlen(log, sizeof(log) - 1);

		ret = mdgpud_worker_err(w, res, "cuModuleLoadDataEx");
		memcpy(s->inline_data, log, n);
		s->inline_len = (uint32_t)n;
		return ret == -EIO ? -EIO : -EINVAL;
	}
	ret = mdgpud_worker_push(&w->modules, &w->nr_modules, &w->cap_modules,
				 (uintptr_t)mod);
	if (ret) {
		w->cu.module_unload(mod);
		return ret;
	}
	s->result[0] = (uintptr_t)mod;
	return 0;
}

static int mdgpud_worker_sync(struct mdgpud_worker *w, uint64_t expect_ns)
{
	int ret = mdgpud_worker_err(w, mdgpud_worker_drain(
					w, expect_ns, w->shm->worker_spin_ns),
				    "synchronize");

	if (w->pending_err && ret != -EIO)
		ret = w->pending_err;
	w->pending_err = 0;
	return ret;
}

static int mdgpud_worker_exec(struct mdgpud_worker *w,
			      struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_result res;
	ssize_t i;
	int ret;

	switch (s->op) {
	case MDGPUD_CUDA_RPC_NOP:
		return 0;
	case MDGPUD_CUDA_RPC_MAP:
		return mdgpud_worker_map(w, s);
	case MDGPUD_CUDA_RPC_UNMAP:
		if (s->arg[0] == 0 || s->arg[0] >= w->nr_regions)
			return -ENOENT;
		mdgpud_worker_unmap_one(w, s->arg[0]);
		return 0;
	case MDGPUD_CUDA_RPC_MEM_ALLOC: {
		uint64_t size = s->arg[0];
		mdgpud_cu_deviceptr p;

		if (size == 0)
			return -EINVAL;
		if (w->nr_allocs == w->cap_allocs) {
			size_t ncap = w->cap_allocs ? w->cap_allocs * 2 : 64;
			struct mdgpud_worker_alloc *n =
				realloc(w->allocs, ncap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			w->allocs = n;
			w->cap_allocs = ncap;
		}
		res = w->cu.mem_alloc(&p, size);
		if (res)
			return mdgpud_worker_err(w, res, "cuMemAlloc");
		w->allocs[w->nr_allocs].addr = p;
		w->allocs[w->nr_allocs].size = size;
		w->nr_allocs++;
		s->result[0] = p;
		s->result[1] = mdgpud_worker_reserved(size);
		return 0;
	}
	case MDGPUD_CUDA_RPC_MEM_FREE:
		i = mdgpud_worker_alloc_find(w, s->arg[0]);
		if (i < 0)
			return -ENOENT;
		return mdgpud_worker_scrub_free(w, (size_t)i);
	case MDGPUD_CUDA_RPC_MEMSET8:
		return mdgpud_worker_err(w, w->cu.memset_d8_async(
					 s->arg[0], (unsigned char)s->arg[1],
					 s->arg[2], w->stream), "cuMemsetD8");
	case MDGPUD_CUDA_RPC_COPY_H2D: {
		uint8_t *h = mdgpud_worker_host(w, s->arg[1], s->arg[2],
						s->arg[3]);

		if (!h)
			return -ERANGE;
		res = w->cu.memcpy_htod_async(s->arg[0], h, s->arg[3],
					      w->stream);
		if (!res)
			res = mdgpud_worker_drain(w, 0, mdgpud_cuda_copy_spin(
					s->arg[3], w->shm->worker_spin_ns));
		return mdgpud_worker_err(w, res, "copy h2d");
	}
	case MDGPUD_CUDA_RPC_COPY_D2H: {
		uint8_t *h = mdgpud_worker_host(w, s->arg[1], s->arg[2],
						s->arg[3]);

		if (!h)
			return -ERANGE;
		res = w->cu.memcpy_dtoh_async(h, s->arg[0], s->arg[3],
					      w->stream);
		if (!res)
			res = mdgpud_worker_drain(w, 0, mdgpud_cuda_copy_spin(
					s->arg[3], w->shm->worker_spin_ns));
		return mdgpud_worker_err(w, res, "copy d2h");
	}
	case MDGPUD_CUDA_RPC_COPY_D2D:
		return mdgpud_worker_err(w, w->cu.memcpy_dtod_async(
					 s->arg[0], s->arg[1], s->arg[2],
					 w->stream), "copy d2d");
	case MDGPUD_CUDA_RPC_MODULE_LOAD:
		return mdgpud_worker_module_load(w, s);
	case MDGPUD_CUDA_RPC_MODULE_UNLOAD:
		i = mdgpud_worker_find(w->modules, w->nr_modules, s->arg[0]);
		if (i < 0)
			return -ENOENT;
		mdgpud_worker_drop(w->modules, &w->nr_modules, (size_t)i);
		/* Functions of the module die with it. */
		for (size_t j = 0; j < w->nr_funcs;) {
			if (w->funcs[j + 1] == s->arg[0]) {
				w->funcs[j] = w->funcs[w->nr_funcs - 2];
				w->funcs[j + 1] = w->funcs[w->nr_funcs - 1];
				w->nr_funcs -= 2;
			} else {
				j += 2;
			}
		}
		return mdgpud_worker_err(w, w->cu.module_unload(
			(mdgpud_cu_module)(uintptr_t)s->arg[0]),
			"cuModuleUnload");
	case MDGPUD_CUDA_RPC_FUNC_GET: {
		char name[MDGPU_NAME_MAX + 1];
		mdgpud_cu_function f;

		if (mdgpud_worker_find(w->modules, w->nr_modules,
				       s->arg[0]) < 0)
			return -ENOENT;
		if (s->inline_len == 0 || s->inline_len > MDGPU_NAME_MAX)
			return -EINVAL;
		memcpy(name, s->inline_data, s->inline_len);
		name[s->inline_len] = 0;
		res = w->cu.module_get_function(
			&f, (mdgpud_cu_module)(uintptr_t)s->arg[0], name);
		if (res)
			return mdgpud_worker_err(w, res, "cuModuleGetFunction");
		/* funcs holds (function, module) pairs. */
		ret = mdgpud_worker_push(&w->funcs, &w->nr_funcs,
					 &w->cap_funcs, (uintptr_t)f);
		if (!ret)
			ret = mdgpud_worker_push(&w->funcs, &w->nr_funcs,
						 &w->cap_funcs, s->arg[0]);
		if (ret)
			return ret;
		s->result[0] = (uintptr_t)f;
		return 0;
	}
	case MDGPUD_CUDA_RPC_LAUNCH: {
		size_t len = s->inline_len;
		void *extra[] = {
			(void *)(uintptr_t)
				MDGPUD_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT,
			s->inline_data,
			(void *)(uintptr_t)
				MDGPUD_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT,
			&len,
			(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_END_AS_INT,
		};
		ssize_t fi = -1;

		for (size_t j = 0; j < w->nr_funcs; j += 2)
			if (w->funcs[j] == s->arg[0]) {
				fi = (ssize_t)j;
				break;
			}
		if (fi < 0)
			return -ENOENT;
		if (len > MDGPUD_CUDA_RPC_INLINE_MAX)
			return -E2BIG;
		res = w->cu.launch_kernel(
			(mdgpud_cu_function)(uintptr_t)s->arg[0],
			(uint32_t)s->arg[1], (uint32_t)(s->arg[1] >> 32),
			(uint32_t)s->arg[2], (uint32_t)(s->arg[2] >> 32),
			(uint32_t)s->arg[3], (uint32_t)(s->arg[3] >> 32),
			(uint32_t)s->arg[4], w->stream, NULL,
			len ? extra : NULL);
		return mdgpud_worker_err(w, res, "cuLaunchKernel");
	}
	case MDGPUD_CUDA_RPC_BUILTIN:
		return mdgpud_worker_builtin(w, s);
	case MDGPUD_CUDA_RPC_EVENT_CREATE: {
		mdgpud_cu_event e;

		res = w->cu.event_create(&e, MDGPUD_CU_EVENT_DEFAULT);
		if (res)
			return mdgpud_worker_err(w, res, "cuEventCreate");
		ret = mdgpud_worker_push(&w->events, &w->nr_events,
					 &w->cap_events, (uintptr_t)e);
		if (ret) {
			w->cu.event_destroy(e);
			return ret;
		}
		s->result[0] = (uintptr_t)e;
		return 0;
	}
	case MDGPUD_CUDA_RPC_EVENT_RECORD:
		if (mdgpud_worker_find(w->events, w->nr_events, s->arg[0]) < 0)
			return -ENOENT;
		return mdgpud_worker_err(w, w->cu.event_record(
			(mdgpud_cu_event)(uintptr_t)s->arg[0], w->stream),
			"cuEventRecord");
	case MDGPUD_CUDA_RPC_EVENT_ELAPSED: {
		mdgpud_cu_event a = (mdgpud_cu_event)(uintptr_t)s->arg[0];
		mdgpud_cu_event b = (mdgpud_cu_event)(uintptr_t)s->arg[1];
		float ms = 0;

		if (mdgpud_worker_find(w->events, w->nr_events, s->arg[0]) < 0 ||
		    mdgpud_worker_find(w->events, w->nr_events, s->arg[1]) < 0)
			return -ENOENT;
		res = w->cu.event_synchronize(b);
		if (!res)
			res = w->cu.event_elapsed_time(&ms, a, b);
		if (res)
			return mdgpud_worker_err(w, res, "cuEventElapsedTime");
		s->result[0] = ms > 0 ? (uint64_t)((double)ms * 1e6 + 0.5) : 0;
		return 0;
	}
	case MDGPUD_CUDA_RPC_EVENT_DESTROY:
		i = mdgpud_worker_find(w->events, w->nr_events, s->arg[0]);
		if (i < 0)
			return -ENOENT;
		mdgpud_worker_drop(w->events, &w->nr_events, (size_t)i);
		return mdgpud_worker_err(w, w->cu.event_destroy(
			(mdgpud_cu_event)(uintptr_t)s->arg[0]),
			"cuEventDestroy");
	case MDGPUD_CUDA_RPC_SYNC:
		return mdgpud_worker_sync(w, 0);
	case MDGPUD_CUDA_RPC_SLICE_BEGIN:
		w->slice_open = 1;
		return mdgpud_worker_err(w, w->cu.event_record(w->slice_ev[0],
							       w->stream),
					 "slice begin");
	case MDGPUD_CUDA_RPC_SLICE_END: {
		float ms = 0;

		if (!w->slice_open)
			return -EINVAL;
		w->slice_open = 0;
		res = w->cu.event_record(w->slice_ev[1], w->stream);
		if (res)
			return mdgpud_worker_err(w, res, "slice end");
		ret = mdgpud_worker_sync(w, s->arg[0]);
		if (ret)
			return ret;
		res = w->cu.event_elapsed_time(&ms, w->slice_ev[0],
					       w->slice_ev[1]);
		if (res)
			return mdgpud_worker_err(w, res, "slice elapsed");
		s->result[0] = ms > 0 ? (uint64_t)((double)ms * 1e6 + 0.5) : 0;
		return 0;
	}
	default:
		return -EINVAL;
	}
}

/* Scrub and free everything the context still holds. */
static void mdgpud_worker_teardown(struct mdgpud_worker *w)
{
	w->cu.stream_synchronize(w->stream);
	while (w->nr_allocs)
		mdgpud_worker_scrub_free(w, w->nr_allocs - 1);
	for (size_t i = 0; i < w->nr_events; i++)
		w->cu.event_destroy((mdgpud_cu_event)w->events[i]);
	for (size_t i = 0; i < w->nr_modules; i++)
		w->cu.module_unload((mdgpud_cu_module)w->modules[i]);
	for (size_t i = 0; i < w->nr_regions; i++)
		mdgpud_worker_unmap_one(w, i);
	w->nr_events = w->nr_modules = w->nr_funcs = 0;
}

static int mdgpud_worker_async_op(uint32_t op, const struct mdgpud_cuda_rpc_slot *s)
{
	switch (op) {
	case MDGPUD_CUDA_RPC_LAUNCH:
	case MDGPUD_CUDA_RPC_MEMSET8:
	case MDGPUD_CUDA_RPC_COPY_D2D:
	case MDGPUD_CUDA_RPC_EVENT_RECORD:
	case MDGPUD_CUDA_RPC_SLICE_BEGIN:
		return 1;
	case MDGPUD_CUDA_RPC_BUILTIN:
		return s->arg[0] != MDGPU_BUILTIN_CHECKSUM;
	default:
		return 0;
	}
}

/*
 * Waits for req_tail != head and returns the new tail in *tail, or -1 when
 * the supervisor is gone.  Spins for worker_spin_ns, then sleeps on the
 * futex.  The supervisor's hint spin_until_ns (work expected: the next
 * slice is ours, at about the hint minus one margin) makes it sleep until
 * two margins before the hint and spin from there until the hint; a hint
 * that arrives while it sleeps wakes it (a request posted earlier wakes
 * it as any request does).
 */
static int mdgpud_worker_wait(struct mdgpud_worker *w, uint32_t head,
			      uint32_t *tail)
{
	struct mdgpud_cuda_rpc_shm *shm = w->shm;
	uint64_t until = mdgpud_cuda_now_ns() + shm->worker_spin_ns;
	uint64_t slept_to = 0;	/* the hint whose window it sleeps for */

	for (;;) {
		uint64_t hint = atomic_load_explicit(&shm->spin_until_ns,
						     memory_order_relaxed);
		uint64_t now = mdgpud_cuda_now_ns(), wake = 0;
		struct timespec nap = {
			0, MDGPUD_WORKER_IDLE_CHECK_MS * 1000000L };

		if (slept_to && hint == slept_to) {
			/* The window of the hint we slept for is open. */
			atomic_fetch_add(&shm->stat_hint_spins, 1);
			slept_to = 0;
		}

		if (hint > until) {
			uint64_t from = hint > 2 * MDGPUD_CUDA_EXPECT_MARGIN_NS ?
					hint - 2 * MDGPUD_CUDA_EXPECT_MARGIN_NS : 0;

			if (from > now && from > until) {
				/* Sleep until the spin window opens. */
				wake = from;
				slept_to = hint;
			}
			until = hint;
		}
		if (!wake) {
			for (unsigned int n = 0;; n++) {
				*tail = atomic_load_explicit(&shm->req_tail,
							     memory_order_acquire);
				if (*tail != head)
					return 0;
				mdgpu_cpu_relax();
				if ((n & 63) == 63 &&
				    mdgpud_cuda_now_ns() >= until)
					break;
			}
		} else if (wake - now < (uint64_t)nap.tv_nsec) {
			nap.tv_nsec = (long)(wake - now);
		}
		atomic_store(&shm->worker_sleeping, 1);
		if (atomic_load(&shm->req_tail) == head &&
		    atomic_load(&shm->spin_until_ns) <= hint)
			mdgpud_cuda_futex_wait(&shm->req_tail, head, &nap);
		atomic_store(&shm->worker_sleeping, 0);
		*tail = atomic_load_explicit(&shm->req_tail,
					     memory_order_acquire);
		if (*tail != head)
			return 0;
		if (getppid() != w->sup_pid)
			return -1;
	}
}

/*
 * The request loop.  Latency and throughput: the tail is re-read only once
 * the requests known to be posted are done; `done` is published, followed
 * by a full fence and the check for a sleeping supervisor (Dekker-style,
 * needed before FUTEX_WAKE), only after a synchronous request, when the
 * ring is drained, or every 16 requests, so that a stream of asynchronous
 * launches does not bounce the `done` cache line to the supervisor on every
 * request.  The supervisor waits for synchronous requests (always
 * published) or for ring space (published at least every 16 requests).
 */
static int mdgpud_worker_serve(struct mdgpud_worker *w)
{
	struct mdgpud_cuda_rpc_shm *shm = w->shm;
	uint32_t head = atomic_load(&shm->done);
	uint32_t tail = head;
	uint64_t t_prev = 0, t_start = 0;

	for (;;) {
		struct mdgpud_cuda_rpc_slot *s;
		int ret, shutdown, async, lost;

		if (head == tail) {
			/* Waiting is not busy time. */
			t_prev = 0;
			if (mdgpud_worker_wait(w, head, &tail)) {
				mdgpud_worker_teardown(w);
				return 0;
			}
		}
		s = &shm->slot[head % MDGPUD_CUDA_RPC_SLOTS];
		/*
		 * The supervisor wrote the next requests from another CPU:
		 * start pulling their cache lines now, so that the misses
		 * overlap with this request's driver call.
		 */
		for (uint32_t k = 1; k <= 2 && head + k != tail; k++) {
			const struct mdgpud_cuda_rpc_slot *nx =
				&shm->slot[(head + k) % MDGPUD_CUDA_RPC_SLOTS];

			__builtin_prefetch(nx, 0, 3);
			__builtin_prefetch(nx->inline_data, 0, 3);
		}
		shutdown = s->op == MDGPUD_CUDA_RPC_SHUTDOWN;
		async = mdgpud_worker_async_op(s->op, s);
		if (shm->stats_enabled) {
			uint64_t now = mdgpud_cuda_now_ns();

			if (t_prev)
				shm->stat_busy_ns += now - t_prev;
			t_start = now;
		}
		if (shutdown) {
			mdgpud_worker_teardown(w);
			ret = 0;
		} else {
			ret = mdgpud_worker_exec(w, s);
		}
		if (shm->stats_enabled) {
			shm->stat_exec_ns += mdgpud_cuda_now_ns() - t_start;
			shm->stat_requests++;
			t_prev = t_start;
		}
		if (async) {
			if (ret && !w->pending_err)
				w->pending_err = ret;
		} else {
			s->status = ret;
		}
		lost = atomic_load(&shm->state) == MDGPUD_CUDA_WORKER_LOST;
		head++;
		if (!async || lost || head == tail || (head & 15) == 0) {
			atomic_store_explicit(&shm->done, head,
					      memory_order_release);
			atomic_thread_fence(memory_order_seq_cst);
			if (atomic_load_explicit(&shm->sup_sleeping,
						 memory_order_relaxed))
				mdgpud_cuda_futex_wake(&shm->done);
		}
		if (shutdown)
			return 0;
		if (lost) {
			/* The context is unusable: nothing can be scrubbed or
			 * freed through it; process exit releases it. */
			return 2;
		}
	}
}

int main(int argc, char **argv)
{
	struct mdgpud_worker w = { 0 };
	int probe, ordinal, ret;
	void *p;

	if (argc < 3 || (strcmp(argv[1], "probe") && strcmp(argv[1], "serve")) ||
	    (!strcmp(argv[1], "serve") && argc < 5)) {
		fprintf(stderr, "usage: mdgpud-worker probe <ordinal> | serve "
			"<ordinal> <vgpu-id> <supervisor-pid>\n"
			"(started by mdgpud, fds 3 and 4 set up)\n");
		return 64;
	}
	/* Timed waits (drain polls, the hint's futex timeout) end on time. */
	prctl(PR_SET_TIMERSLACK, MDGPUD_WORKER_TIMER_SLACK_NS, 0, 0, 0);
	probe = !strcmp(argv[1], "probe");
	ordinal = atoi(argv[2]);
	signal(SIGPIPE, SIG_IGN);
	p = mmap(NULL, sizeof(*w.shm), PROT_READ | PROT_WRITE, MAP_SHARED,
		 MDGPUD_CUDA_WORKER_SHM_FD, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "mdgpud-worker: mmap fd 3: %s\n",
			strerror(errno));
		return 65;
	}
	w.shm = p;
	close(MDGPUD_CUDA_WORKER_SHM_FD);
	if (w.shm->magic != MDGPUD_CUDA_RPC_MAGIC ||
	    w.shm->version != MDGPUD_CUDA_RPC_VERSION) {
		fprintf(stderr, "mdgpud-worker: bad shared area\n");
		return 65;
	}
	if (!probe) {
		w.vgpu_id = (uint32_t)strtoul(argv[3], NULL, 0);
		w.sup_pid = (pid_t)strtol(argv[4], NULL, 0);
		w.sock = MDGPUD_CUDA_WORKER_SOCK_FD;
		if (getppid() != w.sup_pid)
			return 66;
	}

	ret = mdgpud_worker_init_cuda(&w, ordinal);
	if (!ret && !probe)
		ret = mdgpud_worker_init_serve(&w);
	if (ret) {
		atomic_store(&w.shm->state, MDGPUD_CUDA_WORKER_FAILED);
		mdgpud_cuda_futex_wake(&w.shm->state);
		return 1;
	}
	atomic_store(&w.shm->state, probe ? MDGPUD_CUDA_WORKER_PROBED
					  : MDGPUD_CUDA_WORKER_READY);
	mdgpud_cuda_futex_wake(&w.shm->state);
	if (probe)
		return 0;
	return mdgpud_worker_serve(&w);
}
