// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The requests of the ring (cuda_rpc.h), one function each, dispatched
 * through mdgpud_worker_ops[], indexed by enum mdgpud_cuda_rpc_op.  Each
 * returns 0 or a negative errno and writes its results into the slot;
 * serve.c stores the status of a synchronous request and latches the
 * first error of an asynchronous one.  Modules, functions and events are
 * named by handles of the worker's tables (handles.h), never by the
 * driver's pointers, so that only objects of this context can be used.
 */
#include "worker.h"

#include <errno.h>
#include <string.h>

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
	return mdgpud_worker_mem_map(w, s->arg[0], s->arg[1], s->arg[2]);
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

static int mdgpud_worker_op_memset8(struct mdgpud_worker *w,
				    struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_err(w, w->cu.memset_d8_async(
				 s->arg[0], (unsigned char)s->arg[1],
				 s->arg[2], w->stream), "cuMemsetD8");
}

/* Host <-> device copies wait for the GPU, spinning for about their time. */
static int mdgpud_worker_op_copy_h2d(struct mdgpud_worker *w,
				     struct mdgpud_cuda_rpc_slot *s)
{
	uint8_t *h = mdgpud_worker_mem_host(w, s->arg[1], s->arg[2], s->arg[3]);
	mdgpud_cu_result res;

	if (!h)
		return -ERANGE;
	res = w->cu.memcpy_htod_async(s->arg[0], h, s->arg[3], w->stream);
	if (!res)
		res = mdgpud_worker_context_drain(w, 0, mdgpud_cuda_copy_spin(
				s->arg[3], w->shm->worker_spin_ns));
	return mdgpud_worker_err(w, res, "copy h2d");
}

static int mdgpud_worker_op_copy_d2h(struct mdgpud_worker *w,
				     struct mdgpud_cuda_rpc_slot *s)
{
	uint8_t *h = mdgpud_worker_mem_host(w, s->arg[1], s->arg[2], s->arg[3]);
	mdgpud_cu_result res;

	if (!h)
		return -ERANGE;
	res = w->cu.memcpy_dtoh_async(h, s->arg[0], s->arg[3], w->stream);
	if (!res)
		res = mdgpud_worker_context_drain(w, 0, mdgpud_cuda_copy_spin(
				s->arg[3], w->shm->worker_spin_ns));
	return mdgpud_worker_err(w, res, "copy d2h");
}

static int mdgpud_worker_op_copy_d2d(struct mdgpud_worker *w,
				     struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_worker_err(w, w->cu.memcpy_dtod_async(
				 s->arg[0], s->arg[1], s->arg[2], w->stream),
				 "copy d2d");
}

/*
 * a0 kind, a1 length of the image in the staging area.  A JIT failure
 * answers -EINVAL with the compiler's log as inline data.
 */
static int mdgpud_worker_op_module_load(struct mdgpud_worker *w,
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
	ret = mdgpud_worker_handles_insert(&w->modules, mod, 0, &s->result[0]);
	if (ret)
		w->cu.module_unload(mod);
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
 * a0 module, inline data the function's name.  The driver answers the
 * same function for the same name, and the worker the same handle: a
 * function is stored once per module, so that FUNC_GETs repeated (the
 * core's handle table full, say: it drops the answer) never grow the
 * table.  A function that cannot be stored needs no release.
 */
static int mdgpud_worker_op_func_get(struct mdgpud_worker *w,
				     struct mdgpud_cuda_rpc_slot *s)
{
	char name[MDGPU_NAME_MAX + 1];
	mdgpud_cu_function f;
	mdgpud_cu_result res;
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
	if (!mdgpud_worker_handles_find(&w->funcs, f, s->arg[0],
					&s->result[0]))
		return 0;
	return mdgpud_worker_handles_insert(&w->funcs, f, s->arg[0],
					    &s->result[0]);
}

/*
 * a0 function, a1 grid x | y << 32, a2 grid z | block x << 32, a3 block
 * y | z << 32, a4 shared bytes; inline data the parameter blob.
 */
static int mdgpud_worker_op_launch(struct mdgpud_worker *w,
				   struct mdgpud_cuda_rpc_slot *s)
{
	size_t len = s->inline_len;
	void *extra[] = {
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT,
		s->inline_data,
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT,
		&len,
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_END_AS_INT,
	};
	mdgpud_cu_result res;
	void *f;

	if (mdgpud_worker_handles_get(&w->funcs, s->arg[0], &f))
		return -ENOENT;
	if (len > MDGPUD_CUDA_RPC_INLINE_MAX)
		return -E2BIG;
	res = w->cu.launch_kernel(f,
		(uint32_t)s->arg[1], (uint32_t)(s->arg[1] >> 32),
		(uint32_t)s->arg[2], (uint32_t)(s->arg[2] >> 32),
		(uint32_t)s->arg[3], (uint32_t)(s->arg[3] >> 32),
		(uint32_t)s->arg[4], w->stream, NULL, len ? extra : NULL);
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

	res = w->cu.event_create(&e, MDGPUD_CU_EVENT_DEFAULT);
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
	void *e;

	if (mdgpud_worker_handles_get(&w->events, s->arg[0], &e))
		return -ENOENT;
	return mdgpud_worker_err(w, w->cu.event_record(e, w->stream),
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

static int mdgpud_worker_op_sync(struct mdgpud_worker *w,
				 struct mdgpud_cuda_rpc_slot *s)
{
	(void)s;
	return mdgpud_worker_context_sync(w, 0);
}

static int mdgpud_worker_op_slice_begin(struct mdgpud_worker *w,
					struct mdgpud_cuda_rpc_slot *s)
{
	(void)s;
	w->slice_open = 1;
	return mdgpud_worker_err(w, w->cu.event_record(w->slice_ev[0],
						       w->stream),
				 "slice begin");
}

/* a0 expected drain ns: drains, answers the slice's GPU time. */
static int mdgpud_worker_op_slice_end(struct mdgpud_worker *w,
				      struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_result res;
	float ms = 0;
	int ret;

	if (!w->slice_open)
		return -EINVAL;
	w->slice_open = 0;
	res = w->cu.event_record(w->slice_ev[1], w->stream);
	if (res)
		return mdgpud_worker_err(w, res, "slice end");
	ret = mdgpud_worker_context_sync(w, s->arg[0]);
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

static const struct mdgpud_worker_op mdgpud_worker_ops[] = {
	[MDGPUD_CUDA_RPC_NOP] = { mdgpud_worker_op_nop },
	[MDGPUD_CUDA_RPC_MAP] = { mdgpud_worker_op_map },
	[MDGPUD_CUDA_RPC_UNMAP] = { mdgpud_worker_op_unmap },
	[MDGPUD_CUDA_RPC_MEM_ALLOC] = { mdgpud_worker_op_mem_alloc },
	[MDGPUD_CUDA_RPC_MEM_FREE] = { mdgpud_worker_op_mem_free },
	[MDGPUD_CUDA_RPC_MEMSET8] = { mdgpud_worker_op_memset8,
					.async = true },
	[MDGPUD_CUDA_RPC_COPY_H2D] = { mdgpud_worker_op_copy_h2d },
	[MDGPUD_CUDA_RPC_COPY_D2H] = { mdgpud_worker_op_copy_d2h },
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
