// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: contexts.  A context is an object of this library over the one
 * vGPU connection: it owns the allocations, modules, streams and events
 * made while it was current and frees them when destroyed.  Each thread
 * has a stack of current contexts (cuCtxPush/Pop); its top is the current
 * context.  The stack holds handles, checked against the live list on use.
 *
 * Beside its stack a thread keeps its per-thread default streams
 * (stream.c), one per context it used one in, and drops them when it
 * exits.
 */
#include <errno.h>
#include <stdlib.h>

#include "export.h"
#include "graph.h"

/*
 * A thread's per-thread default stream of one context.  The context is
 * named by its id, unique in the process and renewed when the primary
 * context is retained again, so an entry never matches a later context
 * at the same address.  The stream is valid while it is live with the id
 * it had (ids are never reused): a context's release drops its streams
 * and leaves entries that fail this check, to be reused.
 */
struct mdgpu_cu_ptds {
	uint64_t ctx_id;
	CUstream s;
	uint64_t stream_id;
};

struct mdgpu_cu_stack {
	CUcontext *v;
	size_t n, cap;
	struct mdgpu_cu_ptds *ptds;
	size_t nr_ptds, cap_ptds;
};

static pthread_key_t mdgpu_cu_stack_key;
static pthread_once_t mdgpu_cu_stack_once = PTHREAD_ONCE_INIT;

/* Under the lock: is e's stream still live. */
static bool mdgpu_cu_ptds_live(const struct mdgpu_cu_ptds *e)
{
	return mdgpu_cu_set_has(&mdgpu_cu.streams, e->s) &&
	       e->s->id == e->stream_id;
}

/*
 * The thread's per-thread streams go with it, as a destroyed stream goes:
 * their queued work still runs and nothing waits for it.  Streams exist
 * only once cuInit succeeded (mdgpu_cu_enter fails before).
 */
static void mdgpu_cu_ptds_exit(struct mdgpu_cu_stack *s)
{
	if (!s->nr_ptds || mdgpu_cu_enter())
		return;
	for (size_t i = 0; i < s->nr_ptds; i++)
		if (mdgpu_cu_ptds_live(&s->ptds[i]))
			mdgpu_cu_stream_drop(s->ptds[i].s);
	mdgpu_cu_leave();
}

/* The key's destructor: the thread is exiting. */
static void mdgpu_cu_stack_free(void *p)
{
	struct mdgpu_cu_stack *s = p;

	mdgpu_cu_ptds_exit(s);
	free(s->ptds);
	free(s->v);
	free(s);
}

static void mdgpu_cu_stack_key_init(void)
{
	/* Without a key no context can be made current: every call that
	 * needs one then fails INVALID_CONTEXT, pushes OUT_OF_MEMORY. */
	if (pthread_key_create(&mdgpu_cu_stack_key, mdgpu_cu_stack_free))
		mdgpu_cu_stack_key = (pthread_key_t)-1;
}

/* The calling thread's stack; created if `create`.  NULL if none. */
static struct mdgpu_cu_stack *mdgpu_cu_stack(bool create)
{
	struct mdgpu_cu_stack *s;

	pthread_once(&mdgpu_cu_stack_once, mdgpu_cu_stack_key_init);
	if (mdgpu_cu_stack_key == (pthread_key_t)-1)
		return NULL;
	s = pthread_getspecific(mdgpu_cu_stack_key);
	if (!s && create) {
		s = calloc(1, sizeof(*s));
		if (s && pthread_setspecific(mdgpu_cu_stack_key, s)) {
			free(s);
			s = NULL;
		}
	}
	return s;
}

static int mdgpu_cu_push(CUcontext ctx)
{
	struct mdgpu_cu_stack *s = mdgpu_cu_stack(true);

	if (!s)
		return -ENOMEM;
	if (s->n == s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 4;
		CUcontext *v = realloc(s->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = ncap;
	}
	s->v[s->n++] = ctx;
	return 0;
}

static CUcontext mdgpu_cu_top(void)
{
	struct mdgpu_cu_stack *s = mdgpu_cu_stack(false);

	return s && s->n ? s->v[s->n - 1] : NULL;
}

CUstream mdgpu_cu_ptds_get(CUcontext ctx)
{
	struct mdgpu_cu_stack *s = mdgpu_cu_stack(false);

	for (size_t i = 0; s && i < s->nr_ptds; i++)
		if (s->ptds[i].ctx_id == ctx->id &&
		    mdgpu_cu_ptds_live(&s->ptds[i]))
			return s->ptds[i].s;
	return NULL;
}

int mdgpu_cu_ptds_set(CUcontext ctx, CUstream stream)
{
	struct mdgpu_cu_stack *s = mdgpu_cu_stack(true);
	struct mdgpu_cu_ptds *e = NULL;

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; !e && i < s->nr_ptds; i++)
		if (!mdgpu_cu_ptds_live(&s->ptds[i]))
			e = &s->ptds[i];
	if (!e && s->nr_ptds == s->cap_ptds) {
		size_t ncap = s->cap_ptds ? 2 * s->cap_ptds : 2;
		struct mdgpu_cu_ptds *v = realloc(s->ptds, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->ptds = v;
		s->cap_ptds = ncap;
	}
	if (!e)
		e = &s->ptds[s->nr_ptds++];
	e->ctx_id = ctx->id;
	e->s = stream;
	e->stream_id = stream->id;
	return 0;
}

uint64_t mdgpu_cu_ctx_next_id(void)
{
	return ++mdgpu_cu.next_ctx_id;
}

/*
 * cuCtxGetId: NULL asks about the current context.  The ids count from 1
 * in creation order, as the real driver's do (measured on the H100: the
 * runtime's primary context is 1 in a process that made no other).
 */
CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
	CUresult r;

	if (!ctxId)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (!ctx)
		ctx = mdgpu_cu_current();
	if (ctx && mdgpu_cu_ctx_live(ctx))
		*ctxId = ctx->id;
	else
		r = CUDA_ERROR_INVALID_CONTEXT;
	mdgpu_cu_leave();
	return r;
}

bool mdgpu_cu_ctx_live(CUcontext ctx)
{
	return mdgpu_cu_set_has(&mdgpu_cu.ctxs, ctx);
}

CUcontext mdgpu_cu_current(void)
{
	CUcontext ctx = mdgpu_cu_top();

	return mdgpu_cu_ctx_live(ctx) ? ctx : NULL;
}

void mdgpu_cu_ctx_release_objects(CUcontext ctx)
{
	mdgpu_cu_module_release(ctx);
	mdgpu_cu_stream_release(ctx);
	mdgpu_cu_mem_release(ctx);
	mdgpu_cu_cls_release(ctx);
}

static CUresult mdgpu_cu_ctx_new(CUcontext *pctx, unsigned flags,
				 CUdevice dev)
{
	const unsigned known = CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST |
			       CU_CTX_LMEM_RESIZE_TO_MAX;
	CUcontext ctx;
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (flags & ~known)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (dev != 0) {
		r = CUDA_ERROR_INVALID_DEVICE;
		goto out;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx || mdgpu_cu_set_add(&mdgpu_cu.ctxs, ctx)) {
		free(ctx);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	ctx->flags = flags;
	mdgpu_cu_apply_sched(flags);
	ctx->id = mdgpu_cu_ctx_next_id();
	ctx->stream_id = mdgpu_cu_stream_next_id();
	if (mdgpu_cu_push(ctx)) {
		mdgpu_cu_set_del(&mdgpu_cu.ctxs, ctx);
		free(ctx);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	*pctx = ctx;
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags,
				CUdevice dev)
{
	return mdgpu_cu_ctx_new(pctx, flags, dev);
}

/*
 * CUDA 11.4's, with execution affinity.  No parameters (numParams 0) is
 * cuCtxCreate_v2.  The one affinity type cuda.h defines, SM_COUNT, limits
 * the SMs the context may use, which only MPS provides and which a vGPU
 * cannot ask of the daemon (a vGPU's SM share is the host's
 * configuration, Documentation/spatial.md): CUDA_ERROR_UNSUPPORTED_EXEC_
 * AFFINITY, cuda.h's error for a type the device does not support and
 * what the driver answers outside MPS.  A negative count, a NULL array
 * with a count, or a type cuda.h does not define is INVALID_VALUE.
 */
static CUresult mdgpu_cu_affinity_check(const CUexecAffinityParam *params,
					int n)
{
	if (n < 0 || (n && !params))
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < n; i++)
		if (params[i].type != CU_EXEC_AFFINITY_TYPE_SM_COUNT)
			return CUDA_ERROR_INVALID_VALUE;
	return n ? CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY : CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx,
				CUexecAffinityParam *paramsArray,
				int numParams, unsigned int flags,
				CUdevice dev)
{
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_affinity_check(paramsArray, numParams);
	if (r)
		return r;
	return mdgpu_cu_ctx_new(pctx, flags, dev);
}

/*
 * CUDA 12.5's: execution affinity as cuCtxCreate_v3 answers it; a CIG
 * (CUDA in graphics) context shares a graphics client's context, which a
 * vGPU has none of: NOT_SUPPORTED.
 */
CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx,
				CUctxCreateParams *ctxCreateParams,
				unsigned int flags, CUdevice dev)
{
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (ctxCreateParams) {
		if (ctxCreateParams->cigParams)
			return CUDA_ERROR_NOT_SUPPORTED;
		r = mdgpu_cu_affinity_check(
			ctxCreateParams->execAffinityParams,
			ctxCreateParams->numExecAffinityParams);
		if (r)
			return r;
	}
	return mdgpu_cu_ctx_new(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
	struct mdgpu_cu_stack *s;
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_ctx_live(ctx) || ctx->primary) {
		r = CUDA_ERROR_INVALID_CONTEXT;
		goto out;
	}
	/* Work still queued may use its memory. */
	r = mdgpu_cu_result(mdgpu_synchronize(mdgpu_cu.g));
	mdgpu_cu_ctx_release_objects(ctx);
	mdgpu_cu_set_del(&mdgpu_cu.ctxs, ctx);
	/* Current to this thread: popped.  Other threads' stacks keep a
	 * handle that is no longer live. */
	s = mdgpu_cu_stack(false);
	if (s && s->n && s->v[s->n - 1] == ctx)
		s->n--;
	free(ctx);
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_ctx_live(ctx))
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (mdgpu_cu_push(ctx))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
	struct mdgpu_cu_stack *s;
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	s = mdgpu_cu_stack(false);
	if (!s || !s->n) {
		r = CUDA_ERROR_INVALID_CONTEXT;
	} else {
		s->n--;
		if (pctx)
			*pctx = s->v[s->n];
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	struct mdgpu_cu_stack *s;
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	s = mdgpu_cu_stack(ctx != NULL);
	if (!ctx) {
		if (s && s->n)
			s->n--;
	} else if (!mdgpu_cu_ctx_live(ctx) && ctx != &mdgpu_cu.primary) {
		/* The primary context may be made current before it is
		 * retained (NVIDIA's runtime does so); calls fail with
		 * INVALID_CONTEXT until it is. */
		r = CUDA_ERROR_INVALID_CONTEXT;
	} else if (s && s->n) {
		s->v[s->n - 1] = ctx;
	} else if (mdgpu_cu_push(ctx)) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	/* The top of the stack even if destroyed since: the real driver
	 * also answers with the handle and fails the calls that use it. */
	*pctx = mdgpu_cu_top();
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
	CUcontext ctx;
	CUresult r;

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	*device = 0;
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

/* ctx NULL: the current context. */
static CUresult mdgpu_cu_ctx_or_current(CUcontext *ctx)
{
	if (!*ctx)
		*ctx = mdgpu_cu_current();
	return *ctx && mdgpu_cu_ctx_live(*ctx) ? CUDA_SUCCESS :
						 CUDA_ERROR_INVALID_CONTEXT;
}

CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	CUresult r;

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_ctx_or_current(&ctx);
	if (!r)
		*device = 0;
	mdgpu_cu_leave();
	return r;
}

/*
 * Every context has the capabilities of the CUDA 3.2 context API (the
 * _v2 entry points), the newest value cuda.h documents for this call.
 */
CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	CUresult r;

	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_ctx_or_current(&ctx);
	if (!r)
		*version = 3020;
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags)
{
	CUcontext ctx;
	CUresult r;

	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	*flags = ctx->flags;
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
	struct mdgpu_wait w;
	CUcontext ctx;
	CUresult r = mdgpu_cu_enter_ctx(&ctx);
	int ret;

	if (r)
		return r;
	r = mdgpu_cu_capture_unsafe("cuCtxSynchronize");
	if (!r) {
		ret = mdgpu_cu_wait(&w, mdgpu_wait_begin_sync(mdgpu_cu.g, 0,
							     &w));
		r = ret ? mdgpu_cu_error(ret) : CUDA_SUCCESS;
	}
	mdgpu_cu_leave();
	return r;
}

/* CUDA 13: a given context (NULL: the current one).  All contexts of
 * the process share the vGPU, so this waits for all of its work. */
CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
	struct mdgpu_wait w;
	CUresult r = mdgpu_cu_enter();
	int ret;

	if (r)
		return r;
	r = mdgpu_cu_ctx_or_current(&ctx);
	if (!r)
		r = mdgpu_cu_capture_unsafe("cuCtxSynchronize");
	if (!r) {
		ret = mdgpu_cu_wait(&w, mdgpu_wait_begin_sync(mdgpu_cu.g, 0,
							     &w));
		r = ret ? mdgpu_cu_error(ret) : CUDA_SUCCESS;
	}
	mdgpu_cu_leave();
	return r;
}

/* The range the daemon's streams take (the host driver's). */
CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority,
					     int *greatestPriority)
{
	int least = 0, greatest = 0;
	CUcontext ctx;
	CUresult r = mdgpu_cu_enter_ctx(&ctx);

	if (r)
		return r;
	r = mdgpu_cu_priorities(&least, &greatest);
	if (!r && leastPriority)
		*leastPriority = least;
	if (!r && greatestPriority)
		*greatestPriority = greatest;
	mdgpu_cu_leave();
	return r;
}
