// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The requests of the ring (cuda_rpc.h), one function each, dispatched
 * through mdgpud_worker_ops[], indexed by enum mdgpud_cuda_rpc_op.  Each
 * returns 0 or a negative errno and writes its results into the slot;
 * serve.c stores the status of a synchronous request and latches the
 * first error of an asynchronous one.  Modules, functions, events and
 * streams are named by handles of the worker's tables (handles.h), never
 * by the driver's pointers, so that only objects of this context can be
 * used; a request naming a stream the worker does not have fails -ENOENT.
 * A request on a stream sets w->req_stream (serve.c latches its error
 * there).
 */
#include "worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <common/cu_image.h>
#include <mdgpud/cuda_values.h>
#include <uapi/mdgpu.h>

struct mdgpud_worker_op {
	int (*run)(struct mdgpud_worker *w, struct mdgpud_cuda_rpc_slot *s);
	/* Posted, not waited for: no answer, the first error latched. */
	bool async;
	/* For an op whose kind depends on its arguments: decides instead. */
	bool (*async_if)(const struct mdgpud_cuda_rpc_slot *s);
};

/* A CUDA event's milliseconds as nanoseconds, rounded; 0 if negative. */
static uint64_t mdgpud_worker_requests_ns(float ms)
{
	return ms > 0 ? (uint64_t)((double)ms * 1e6 + 0.5) : 0;
}

static int mdgpud_worker_op_nop(struct mdgpud_worker *w,
				struct mdgpud_cuda_rpc_slot *s)
{
	(void)w;
	(void)s;
	return 0;
}

static int mdgpud_worker_op_map(struct mdgpud_worker *w,
				struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_mem_map(w, s->arg[0], s->arg[1], s->arg[2],
				     s->arg[3], s->arg[4]);
}

static int mdgpud_worker_op_unmap(struct mdgpud_worker *w,
				  struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_mem_unmap(w, s->arg[0]);
}

static int mdgpud_worker_op_mem_alloc(struct mdgpud_worker *w,
				      struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_deviceptr p;
	uint64_t reserved;
	int ret;

	ret = mdgpud_worker_mem_alloc(w, s->arg[0], &p, &reserved);
	if (ret)
		return ret;
	s->result[0] = p;
	s->result[1] = reserved;
	return 0;
}

static int mdgpud_worker_op_mem_free(struct mdgpud_worker *w,
				     struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_mem_free(w, s->arg[0]);
}

/* The stream of handle h for this request, or NULL (-ENOENT). */
static mdgpud_cu_stream *mdgpud_worker_req_stream(struct mdgpud_worker *w,
						  uint64_t h)
{
	struct mdgpud_worker_stream *st;

	if (mdgpud_worker_stream_get(w, h, &st))
		return NULL;
	w->req_stream = st;
	mdgpud_worker_stream_enter_slice(w, st);
	return &st->cu;
}

/* a0 addr, a1 value, a2 bytes, a3 width (1, 2, 4), a4 stream. */
static int mdgpud_worker_op_memset(struct mdgpud_worker *w,
				   struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_stream *st = mdgpud_worker_req_stream(w, s->arg[4]);
	uint64_t width = s->arg[3], n;

	if (!st)
		return -ENOENT;
	if ((width != 1 && width != 2 && width != 4) || s->arg[2] % width)
		return -EINVAL;
	n = s->arg[2] / width;
	if (width == 1)
		return mdgpud_worker_err(w, w->cu.memset_d8_async(
					 s->arg[0], (unsigned char)s->arg[1],
					 n, *st), "cuMemsetD8Async");
	if (width == 2)
		return mdgpud_worker_err(w, w->cu.memset_d16_async(
					 s->arg[0], (unsigned short)s->arg[1],
					 n, *st), "cuMemsetD16Async");
	return mdgpud_worker_err(w, w->cu.memset_d32_async(
				 s->arg[0], (unsigned int)s->arg[1], n, *st),
				 "cuMemsetD32Async");
}

/*
 * Host <-> device copies: a0 device address, a1 region, a2 offset, a3 len,
 * a4 stream, a5 1 when posted (then queued only: the supervisor does not
 * wait, serve.c latches an error).  Otherwise they wait for the stream,
 * spinning for about their transfer time.
 */
static int mdgpud_worker_op_copy_host(struct mdgpud_worker *w,
				      struct mdgpud_cuda_rpc_slot *s, int h2d)
{
	uint8_t *h = mdgpud_worker_mem_host(w, s->arg[1], s->arg[2], s->arg[3]);
	mdgpud_cu_stream *st = mdgpud_worker_req_stream(w, s->arg[4]);
	mdgpud_cu_result res;

	if (!h)
		return -ERANGE;
	if (!st)
		return -ENOENT;
	if (h2d)
		res = w->cu.memcpy_htod_async(s->arg[0], h, s->arg[3], *st);
	else
		res = w->cu.memcpy_dtoh_async(h, s->arg[0], s->arg[3], *st);
	if (!res && s->arg[5] != 1)
		res = mdgpud_worker_context_drain(w, *st, 0,
						  mdgpud_cuda_copy_spin(
						  s->arg[3],
						  w->shm->worker_spin_ns));
	return mdgpud_worker_err(w, res, h2d ? "copy h2d" : "copy d2h");
}

static int mdgpud_worker_op_copy_h2d(struct mdgpud_worker *w,
				     struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_op_copy_host(w, s, 1);
}

static int mdgpud_worker_op_copy_d2h(struct mdgpud_worker *w,
				     struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_op_copy_host(w, s, 0);
}

/* Posted only when a5 says so. */
static bool mdgpud_worker_op_copy_async(const struct mdgpud_cuda_rpc_slot *s)
{
	return s->arg[5] == 1;
}

/* a0 dst, a1 src, a2 len, a3 stream. */
static int mdgpud_worker_op_copy_d2d(struct mdgpud_worker *w,
				     struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_stream *st = mdgpud_worker_req_stream(w, s->arg[3]);

	if (!st)
		return -ENOENT;
	return mdgpud_worker_err(w, w->cu.memcpy_dtod_async(
				 s->arg[0], s->arg[1], s->arg[2], *st),
				 "copy d2d");
}

/*
 * Loads the image img[0..len), NUL-terminated at img[len], into the
 * context and answers its module handle.  The host driver takes an image
 * without its length and trusts its headers, so it gets only an image
 * whole within len by its own headers (common/cu_image.h), never a
 * fatbin wrapper (host pointers of the tenant's choosing): anything else
 * is -EINVAL with CUDA_ERROR_INVALID_IMAGE, as the driver answers a
 * malformed image, and the driver never sees it.  A refused image
 * answers -EINVAL (-EIO for an error that lost the context), the
 * driver's CUresult (serve.c puts w->last_cu into the answer) and its
 * JIT log as inline data, at most MDGPUD_WORKER_JIT_LOG_BYTES - 1 bytes.
 */
static int mdgpud_worker_module_image(struct mdgpud_worker *w,
				      struct mdgpud_cuda_rpc_slot *s,
				      const void *img, size_t len)
{
	char log[MDGPUD_WORKER_JIT_LOG_BYTES] = "";
	mdgpud_cu_jit_option opt[2] = {
		MDGPUD_CU_JIT_ERROR_LOG_BUFFER,
		MDGPUD_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
	};
	void *val[2] = { log, (void *)(uintptr_t)sizeof(log) };
	mdgpud_cu_module mod;
	mdgpud_cu_result res;
	int ret;

	enum mdgpu_cu_image_kind kind;
	size_t size;

	_Static_assert(MDGPUD_WORKER_JIT_LOG_BYTES <= MDGPUD_CUDA_RPC_INLINE_MAX,
		       "the JIT log fits the inline area");
	/* len + 1: PTX's size counts its NUL. */
	if (mdgpu_cu_image_size(img, len + 1, &kind, &size) ||
	    (kind != MDGPU_CU_IMAGE_PTX && size > len)) {
		mdgpud_worker_err_msg(w, "module image of %zu bytes refused: "
				      "not whole by its own headers", len);
		w->last_cu = MDGPUD_CUDA_ERROR_INVALID_IMAGE;
		return -EINVAL;
	}
	res = w->cu.module_load_data_ex(&mod, img, 2, opt, val);
	if (res) {
		size_t n = strnlen(log, sizeof(log) - 1);

		ret = mdgpud_worker_err(w, res, "cuModuleLoadDataEx");
		memcpy(s->inline_data, log, n);
		s->inline_len = (uint32_t)n;
		return ret == -EIO ? -EIO : -EINVAL;
	}
	ret = mdgpud_worker_handles_insert(&w->modules, mod, 0, &s->result[0]);
	if (ret)
		w->cu.module_unload(mod);
	return ret;
}

/* a0 kind, a1 length of the image in the staging area. */
static int mdgpud_worker_op_module_load(struct mdgpud_worker *w,
					struct mdgpud_cuda_rpc_slot *s)
{
	uint64_t len = s->arg[1];

	if (len == 0 || len >= sizeof(w->shm->staging))
		return -EINVAL;
	/* The supervisor NUL-terminated it; make sure of it for PTX. */
	w->shm->staging[len] = 0;
	return mdgpud_worker_module_image(w, s, w->shm->staging, len);
}

/*
 * a0 kind, a1 length, a2 device address of the image: inside one of the
 * vGPU's allocations, as the supervisor checked; an address outside this
 * context's memory is the driver's error.  The image is copied, after
 * the work queued before on the default stream, into a buffer of the
 * worker's own, NUL-terminated (PTX is text), loaded from there and
 * freed: the driver never parses memory a kernel may be writing.
 */
static int mdgpud_worker_op_module_load_dev(struct mdgpud_worker *w,
					    struct mdgpud_cuda_rpc_slot *s)
{
	uint64_t len = s->arg[1];
	mdgpud_cu_result res;
	uint8_t *img;
	int ret;

	if (len == 0 || len > MDGPU_MODULE_DEVICE_MAX)
		return -EINVAL;
	img = malloc(len + 1);
	if (!img)
		return -ENOMEM;
	res = w->cu.memcpy_dtoh_async(img, s->arg[2], len, w->stream0.cu);
	if (!res)
		res = mdgpud_worker_context_drain(w, w->stream0.cu, 0,
						  mdgpud_cuda_copy_spin(
						  len, w->shm->worker_spin_ns));
	ret = mdgpud_worker_err(w, res, "module image d2h");
	if (!ret) {
		img[len] = 0;
		ret = mdgpud_worker_module_image(w, s, img, len);
	}
	free(img);
	return ret;
}

/* Its functions die with it. */
static int mdgpud_worker_op_module_unload(struct mdgpud_worker *w,
					  struct mdgpud_cuda_rpc_slot *s)
{
	void *mod;

	if (mdgpud_worker_handles_remove(&w->modules, s->arg[0], &mod))
		return -ENOENT;
	mdgpud_worker_handles_remove_children(&w->funcs, s->arg[0]);
	return mdgpud_worker_err(w, w->cu.module_unload(mod),
				 "cuModuleUnload");
}

/*
 * a0 module, inline data the function's name; r1 its local memory per
 * thread (the supervisor charges what a launch makes the driver reserve).
 * The driver answers the same function for the same name, and the worker
 * the same handle: a function is stored once per module, so that
 * FUNC_GETs repeated (the core's handle table full, say: it drops the
 * answer) never grow the table.  A function that cannot be stored needs
 * no release.
 */
static int mdgpud_worker_op_func_get(struct mdgpud_worker *w,
				     struct mdgpud_cuda_rpc_slot *s)
{
	char name[MDGPU_NAME_MAX + 1];
	mdgpud_cu_function f;
	mdgpud_cu_result res;
	int local = 0;
	void *mod;

	if (mdgpud_worker_handles_get(&w->modules, s->arg[0], &mod))
		return -ENOENT;
	if (s->inline_len == 0 || s->inline_len > MDGPU_NAME_MAX)
		return -EINVAL;
	memcpy(name, s->inline_data, s->inline_len);
	name[s->inline_len] = 0;
	res = w->cu.module_get_function(&f, mod, name);
	if (res)
		return mdgpud_worker_err(w, res, "cuModuleGetFunction");
	res = w->cu.func_get_attribute(&local,
				       MDGPUD_CU_FUNC_ATTR_LOCAL_SIZE_BYTES, f);
	if (res)
		return mdgpud_worker_err(w, res, "cuFuncGetAttribute");
	if (local < 0)
		return -EIO;
	s->result[1] = (uint64_t)local;
	if (!mdgpud_worker_handles_find(&w->funcs, f, s->arg[0],
					&s->result[0]))
		return 0;
	return mdgpud_worker_handles_insert(&w->funcs, f, s->arg[0],
					    &s->result[0]);
}

/*
 * A cooperative or clustered launch: cuLaunchKernelEx with the launch
 * attributes (cluster packed as MDGPU_CLUSTER, validated by the core).
 */
static mdgpud_cu_result mdgpud_worker_launch_ex(struct mdgpud_worker *w,
						void *f, mdgpud_cu_stream st,
						const uint64_t *a,
						void **extra)
{
	uint32_t flags = (uint32_t)a[6], cluster = (uint32_t)(a[6] >> 32);
	struct mdgpud_cu_launch_attr attr[2];
	struct mdgpud_cu_launch_config cfg = {
		.grid_x = (uint32_t)a[1], .grid_y = (uint32_t)(a[1] >> 32),
		.grid_z = (uint32_t)a[2], .block_x = (uint32_t)(a[2] >> 32),
		.block_y = (uint32_t)a[3], .block_z = (uint32_t)(a[3] >> 32),
		.shared_bytes = (uint32_t)a[4], .stream = st, .attrs = attr,
	};

	memset(attr, 0, sizeof(attr));
	if (flags & MDGPU_LAUNCH_F_COOPERATIVE) {
		attr[cfg.num_attrs].id = MDGPUD_CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		attr[cfg.num_attrs++].value.cooperative = 1;
	}
	if (cluster) {
		struct mdgpud_cu_launch_attr *c = &attr[cfg.num_attrs++];

		c->id = MDGPUD_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		c->value.cluster_dim.x = MDGPU_CLUSTER_X(cluster);
		c->value.cluster_dim.y = MDGPU_CLUSTER_Y(cluster);
		c->value.cluster_dim.z = MDGPU_CLUSTER_Z(cluster);
	}
	return w->cu.launch_kernel_ex(
		(const struct CUlaunchConfig_st *)(const void *)&cfg, f, NULL,
		extra);
}

/*
 * a0 function, a1 grid x | y << 32, a2 grid z | block x << 32, a3 block
 * y | z << 32, a4 shared bytes | big area + 1 << 32, a5 stream, a6
 * MDGPU_LAUNCH_F_* | cluster << 32; the parameter blob is the inline
 * data, or (area nonzero) the start of that big area.  cuLaunchKernel,
 * or cuLaunchKernelEx when a flag or a cluster asks for attributes.
 */
static int mdgpud_worker_op_launch(struct mdgpud_worker *w,
				   struct mdgpud_cuda_rpc_slot *s)
{
	size_t len = s->inline_len;
	uint64_t big = s->arg[4] >> 32;
	void *extra[] = {
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT,
		big && big <= MDGPUD_CUDA_RPC_BIG_SLOTS ?
			(void *)w->shm->big[big - 1] : (void *)s->inline_data,
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT,
		&len,
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_END_AS_INT,
	};
	mdgpud_cu_stream *st = mdgpud_worker_req_stream(w, s->arg[5]);
	mdgpud_cu_result res;
	void *f;

	if (mdgpud_worker_handles_get(&w->funcs, s->arg[0], &f) || !st)
		return -ENOENT;
	if (big > MDGPUD_CUDA_RPC_BIG_SLOTS)
		return -EINVAL;
	if (len > (big ? MDGPUD_CUDA_RPC_BIG_BYTES :
			 MDGPUD_CUDA_RPC_INLINE_MAX))
		return -E2BIG;
	if (s->arg[6] & ~(uint64_t)MDGPU_LAUNCH_F_COOPERATIVE &
	    ~((uint64_t)MDGPU_CLUSTER_MASK << 32))
		return -EINVAL;
	if (s->arg[6])
		return mdgpud_worker_err(w, mdgpud_worker_launch_ex(
				w, f, *st, s->arg, len ? extra : NULL),
				"cuLaunchKernelEx");
	res = w->cu.launch_kernel(f,
		(uint32_t)s->arg[1], (uint32_t)(s->arg[1] >> 32),
		(uint32_t)s->arg[2], (uint32_t)(s->arg[2] >> 32),
		(uint32_t)s->arg[3], (uint32_t)(s->arg[3] >> 32),
		(uint32_t)s->arg[4], *st, NULL, len ? extra : NULL);
	return mdgpud_worker_err(w, res, "cuLaunchKernel");
}

static int mdgpud_worker_op_builtin(struct mdgpud_worker *w,
				    struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_builtins_run(w, s);
}

/* Only the checksum answers; the other builtins are posted. */
static bool mdgpud_worker_op_builtin_async(const struct mdgpud_cuda_rpc_slot *s)
{
	return s->arg[0] != MDGPU_BUILTIN_CHECKSUM;
}

static int mdgpud_worker_op_event_create(struct mdgpud_worker *w,
					 struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_result res;
	mdgpud_cu_event e;
	int ret;

	/* Blocking sync: EVENT_SYNC and ELAPSED wait without spinning. */
	res = w->cu.event_create(&e, MDGPUD_CU_EVENT_BLOCKING_SYNC |
				 ((s->arg[0] & MDGPU_EVENT_F_DISABLE_TIMING) ?
				  MDGPUD_CU_EVENT_DISABLE_TIMING : 0));
	if (res)
		return mdgpud_worker_err(w, res, "cuEventCreate");
	ret = mdgpud_worker_handles_insert(&w->events, e, 0, &s->result[0]);
	if (ret)
		w->cu.event_destroy(e);
	return ret;
}

static int mdgpud_worker_op_event_record(struct mdgpud_worker *w,
					 struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_stream *st = mdgpud_worker_req_stream(w, s->arg[1]);
	void *e;

	if (mdgpud_worker_handles_get(&w->events, s->arg[0], &e) || !st)
		return -ENOENT;
	return mdgpud_worker_err(w, w->cu.event_record(e, *st),
				 "cuEventRecord");
}

/* a0 start, a1 end: waits for the end, answers the time between. */
static int mdgpud_worker_op_event_elapsed(struct mdgpud_worker *w,
					  struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_result res;
	void *a, *b;
	float ms = 0;

	if (mdgpud_worker_handles_get(&w->events, s->arg[0], &a) ||
	    mdgpud_worker_handles_get(&w->events, s->arg[1], &b))
		return -ENOENT;
	res = w->cu.event_synchronize(b);
	if (!res)
		res = w->cu.event_elapsed_time(&ms, a, b);
	if (res)
		return mdgpud_worker_err(w, res, "cuEventElapsedTime");
	s->result[0] = mdgpud_worker_requests_ns(ms);
	return 0;
}

static int mdgpud_worker_op_event_destroy(struct mdgpud_worker *w,
					  struct mdgpud_cuda_rpc_slot *s)
{
	void *e;

	if (mdgpud_worker_handles_remove(&w->events, s->arg[0], &e))
		return -ENOENT;
	return mdgpud_worker_err(w, w->cu.event_destroy(e), "cuEventDestroy");
}

/* a0 stream; 0: every stream of the vGPU. */
static int mdgpud_worker_op_sync(struct mdgpud_worker *w,
				 struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_stream_sync(w, s->arg[0]);
}

static int mdgpud_worker_op_slice_begin(struct mdgpud_worker *w,
					struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_result res;

	(void)s;
	w->slice_open = 1;
	w->slice_seq++;		/* streams wait for it at their first work */
	res = w->cu.event_record(w->slice_ev[0], w->stream);
	return mdgpud_worker_err(w, res, "slice begin");
}

/*
 * a0 expected drain ns: drains every stream, answers the slice's GPU
 * time, from the begin event to the end of the last stream's work (all
 * of them joined into the worker's stream before the end event).  The
 * streams' latched errors stay for the client's SYNC.
 */
static int mdgpud_worker_op_slice_end(struct mdgpud_worker *w,
				      struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_result res;
	float ms = 0;
	int ret;

	if (!w->slice_open)
		return -EINVAL;
	w->slice_open = 0;
	res = mdgpud_worker_stream_join(w);
	if (!res)
		res = w->cu.event_record(w->slice_ev[1], w->stream);
	if (res)
		return mdgpud_worker_err(w, res, "slice end");
	ret = mdgpud_worker_err(w, mdgpud_worker_context_drain(
					w, w->stream, s->arg[0],
					w->shm->worker_spin_ns),
				"slice drain");
	if (ret)
		return ret;
	res = w->cu.event_elapsed_time(&ms, w->slice_ev[0], w->slice_ev[1]);
	if (res)
		return mdgpud_worker_err(w, res, "slice elapsed");
	s->result[0] = mdgpud_worker_requests_ns(ms);
	return 0;
}

/* serve.c exits after answering it. */
static int mdgpud_worker_op_shutdown(struct mdgpud_worker *w,
				     struct mdgpud_cuda_rpc_slot *s)
{
	(void)s;
	mdgpud_worker_context_teardown(w);
	return 0;
}

/* a0 MDGPU_STREAM_F_*, a1 priority (s32, clamped by the core). */
static int mdgpud_worker_op_stream_create(struct mdgpud_worker *w,
					  struct mdgpud_cuda_rpc_slot *s)
{
	if (s->arg[0] & ~(uint64_t)MDGPU_STREAM_F_NON_BLOCKING)
		return -EINVAL;
	return mdgpud_worker_stream_create(w, (uint32_t)s->arg[0],
					   (int32_t)(uint32_t)s->arg[1],
					   &s->result[0]);
}

static int mdgpud_worker_op_stream_destroy(struct mdgpud_worker *w,
					   struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_stream_destroy(w, s->arg[0]);
}

/* a0 stream, a1 event: later work of the stream waits for the event. */
static int mdgpud_worker_op_stream_wait_event(struct mdgpud_worker *w,
					      struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_stream *st = mdgpud_worker_req_stream(w, s->arg[0]);
	void *e;

	if (mdgpud_worker_handles_get(&w->events, s->arg[1], &e) || !st)
		return -ENOENT;
	return mdgpud_worker_err(w, w->cu.stream_wait_event(*st, e, 0),
				 "cuStreamWaitEvent");
}

/*
 * a0 stream, a1 MDGPU_MEMOP_*, a2 addr, a3 value, a4 wait condition (its
 * values are CUDA's, cuda_abi_check.c): queued on the stream.  A write
 * keeps the driver's default memory barrier (flags 0).  A driver without
 * the _v2 entry points answers -EOPNOTSUPP.
 */
static int mdgpud_worker_op_stream_memop(struct mdgpud_worker *w,
					 struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_stream *st = mdgpud_worker_req_stream(w, s->arg[0]);
	const struct mdgpud_cuda_api *cu = &w->cu;
	mdgpud_cu_deviceptr addr = s->arg[2];
	unsigned int cond = (unsigned int)s->arg[4];

	if (!st)
		return -ENOENT;
	if (cond > MDGPU_MEMOP_WAIT_NOR)
		return -EINVAL;
	switch (s->arg[1]) {
	case MDGPU_MEMOP_WRITE32:
		if (!cu->stream_write_value32)
			return -EOPNOTSUPP;
		return mdgpud_worker_err(w, cu->stream_write_value32(*st,
					 addr, (uint32_t)s->arg[3], 0),
					 "cuStreamWriteValue32_v2");
	case MDGPU_MEMOP_WRITE64:
		if (!cu->stream_write_value64)
			return -EOPNOTSUPP;
		return mdgpud_worker_err(w, cu->stream_write_value64(*st,
					 addr, s->arg[3], 0),
					 "cuStreamWriteValue64_v2");
	case MDGPU_MEMOP_WAIT32:
		if (!cu->stream_wait_value32)
			return -EOPNOTSUPP;
		return mdgpud_worker_err(w, cu->stream_wait_value32(*st,
					 addr, (uint32_t)s->arg[3], cond),
					 "cuStreamWaitValue32_v2");
	case MDGPU_MEMOP_WAIT64:
		if (!cu->stream_wait_value64)
			return -EOPNOTSUPP;
		return mdgpud_worker_err(w, cu->stream_wait_value64(*st,
					 addr, s->arg[3], cond),
					 "cuStreamWaitValue64_v2");
	default:
		return -EINVAL;
	}
}

static int mdgpud_worker_op_busy(struct mdgpud_worker *w,
				 struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_busy(w, &s->result[0]);
}

static int mdgpud_worker_op_stream_query(struct mdgpud_worker *w,
					 struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_stream_query(w, s->arg[0], &s->result[0]);
}

/* a0 event: r0 1 while its last record is pending. */
static int mdgpud_worker_op_event_query(struct mdgpud_worker *w,
					struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_result res;
	void *e;

	if (mdgpud_worker_handles_get(&w->events, s->arg[0], &e))
		return -ENOENT;
	res = w->cu.event_query(e);
	s->result[0] = res == MDGPUD_CUDA_ERROR_NOT_READY;
	if (s->result[0])
		return 0;
	return mdgpud_worker_err(w, res, "cuEventQuery");
}

/*
 * a0 event: waits for its last record, polling for the spin budget, then
 * blocking (client events are CU_EVENT_BLOCKING_SYNC).  The supervisor
 * bounds the wait.
 */
static int mdgpud_worker_op_event_sync(struct mdgpud_worker *w,
				       struct mdgpud_cuda_rpc_slot *s)
{
	uint64_t until = mdgpud_cuda_now_ns() + w->shm->worker_spin_ns;
	mdgpud_cu_result res;
	void *e;

	if (mdgpud_worker_handles_get(&w->events, s->arg[0], &e))
		return -ENOENT;
	for (unsigned int n = 0;; n++) {
		res = w->cu.event_query(e);
		if (res != MDGPUD_CUDA_ERROR_NOT_READY)
			return mdgpud_worker_err(w, res, "cuEventQuery");
		if ((n & 15) == 15 && mdgpud_cuda_now_ns() >= until)
			break;
		mdgpu_cpu_relax();
	}
	return mdgpud_worker_err(w, w->cu.event_synchronize(e),
				 "cuEventSynchronize");
}

static const struct mdgpud_worker_op mdgpud_worker_ops[] = {
	[MDGPUD_CUDA_RPC_NOP] = { mdgpud_worker_op_nop },
	[MDGPUD_CUDA_RPC_MAP] = { mdgpud_worker_op_map },
	[MDGPUD_CUDA_RPC_UNMAP] = { mdgpud_worker_op_unmap },
	[MDGPUD_CUDA_RPC_MEM_ALLOC] = { mdgpud_worker_op_mem_alloc },
	[MDGPUD_CUDA_RPC_MEM_FREE] = { mdgpud_worker_op_mem_free },
	[MDGPUD_CUDA_RPC_MEMSET] = { mdgpud_worker_op_memset,
					.async = true },
	[MDGPUD_CUDA_RPC_COPY_H2D] = { mdgpud_worker_op_copy_h2d,
				.async_if = mdgpud_worker_op_copy_async },
	[MDGPUD_CUDA_RPC_COPY_D2H] = { mdgpud_worker_op_copy_d2h,
				.async_if = mdgpud_worker_op_copy_async },
	[MDGPUD_CUDA_RPC_COPY_D2D] = { mdgpud_worker_op_copy_d2d,
					.async = true },
	[MDGPUD_CUDA_RPC_MODULE_LOAD] = { mdgpud_worker_op_module_load },
	[MDGPUD_CUDA_RPC_MODULE_UNLOAD] = { mdgpud_worker_op_module_unload },
	[MDGPUD_CUDA_RPC_FUNC_GET] = { mdgpud_worker_op_func_get },
	[MDGPUD_CUDA_RPC_LAUNCH] = { mdgpud_worker_op_launch,
					.async = true },
	[MDGPUD_CUDA_RPC_BUILTIN] = { mdgpud_worker_op_builtin,
				  .async_if = mdgpud_worker_op_builtin_async },
	[MDGPUD_CUDA_RPC_EVENT_CREATE] = { mdgpud_worker_op_event_create },
	[MDGPUD_CUDA_RPC_EVENT_RECORD] = { mdgpud_worker_op_event_record,
					.async = true },
	[MDGPUD_CUDA_RPC_EVENT_ELAPSED] = { mdgpud_worker_op_event_elapsed },
	[MDGPUD_CUDA_RPC_EVENT_DESTROY] = { mdgpud_worker_op_event_destroy },
	[MDGPUD_CUDA_RPC_SYNC] = { mdgpud_worker_op_sync },
	[MDGPUD_CUDA_RPC_SLICE_BEGIN] = { mdgpud_worker_op_slice_begin,
					.async = true },
	[MDGPUD_CUDA_RPC_SLICE_END] = { mdgpud_worker_op_slice_end },
	[MDGPUD_CUDA_RPC_SHUTDOWN] = { mdgpud_worker_op_shutdown },
	/* ABI 1.2 introspection: info.c */
	[MDGPUD_CUDA_RPC_FUNC_INFO] = { mdgpud_worker_op_func_info },
	[MDGPUD_CUDA_RPC_FUNC_SET_ATTR] = { mdgpud_worker_op_func_set_attr },
	[MDGPUD_CUDA_RPC_MODULE_GLOBAL] = { mdgpud_worker_op_module_global },
	[MDGPUD_CUDA_RPC_CTX_LIMIT] = { mdgpud_worker_op_ctx_limit },
	[MDGPUD_CUDA_RPC_OCCUPANCY] = { mdgpud_worker_op_occupancy },
	[MDGPUD_CUDA_RPC_HOST_DEVPTR] = { mdgpud_worker_op_host_devptr },
	/* ABI 1.2 streams and events: stream.c */
	[MDGPUD_CUDA_RPC_STREAM_CREATE] = { mdgpud_worker_op_stream_create },
	[MDGPUD_CUDA_RPC_STREAM_DESTROY] = { mdgpud_worker_op_stream_destroy },
	[MDGPUD_CUDA_RPC_STREAM_WAIT_EVENT] = {
		mdgpud_worker_op_stream_wait_event, .async = true },
	[MDGPUD_CUDA_RPC_STREAM_QUERY] = { mdgpud_worker_op_stream_query },
	[MDGPUD_CUDA_RPC_EVENT_QUERY] = { mdgpud_worker_op_event_query },
	[MDGPUD_CUDA_RPC_EVENT_SYNC] = { mdgpud_worker_op_event_sync },
	/* ABI 1.3 */
	[MDGPUD_CUDA_RPC_MODULE_LOAD_DEV] = {
		mdgpud_worker_op_module_load_dev },
	/* ABI 1.5: info.c */
	[MDGPUD_CUDA_RPC_MODULE_FUNCS] = { mdgpud_worker_op_module_funcs },
	/* ABI 1.7: link.c */
	[MDGPUD_CUDA_RPC_MODULE_LINK] = { mdgpud_worker_op_module_link },
	[MDGPUD_CUDA_RPC_BUSY] = { mdgpud_worker_op_busy },
	/* ABI 1.10 */
	[MDGPUD_CUDA_RPC_STREAM_MEMOP] = { mdgpud_worker_op_stream_memop,
					.async = true },
};

_Static_assert(sizeof(mdgpud_worker_ops) / sizeof(mdgpud_worker_ops[0]) ==
	       MDGPUD_CUDA_RPC_OP_COUNT, "a table row for every op");

/* The op's row, or NULL for an op the worker does not know. */
static const struct mdgpud_worker_op *mdgpud_worker_requests_op(uint32_t op)
{
	if (op >= MDGPUD_CUDA_RPC_OP_COUNT || !mdgpud_worker_ops[op].run)
		return NULL;
	return &mdgpud_worker_ops[op];
}

/* Whether op is posted (no answer); an unknown op is answered. */
bool mdgpud_worker_requests_async(uint32_t op,
				  const struct mdgpud_cuda_rpc_slot *s)
{
	const struct mdgpud_worker_op *o = mdgpud_worker_requests_op(op);

	if (!o)
		return false;
	return o->async_if ? o->async_if(s) : o->async;
}

/* Runs request s, whose op the caller read once: 0 or a negative errno. */
int mdgpud_worker_requests_exec(struct mdgpud_worker *w, uint32_t op,
				struct mdgpud_cuda_rpc_slot *s)
{
	const struct mdgpud_worker_op *o = mdgpud_worker_requests_op(op);

	return o ? o->run(w, s) : -EINVAL;
}
