// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: streams and events, each one of the daemon's (ABI 1.2).
 *
 * A CUstream is a stream of the vGPU: its work runs in order, concurrently
 * with other streams' work, on a real stream of the worker's context.  The
 * NULL stream and CU_STREAM_LEGACY are the vGPU's stream 0, which the
 * daemon gives CUDA's legacy default-stream semantics.
 *
 * The per-thread default stream.  CU_STREAM_PER_THREAD, and NULL passed
 * to a _ptsz/_ptds entry point (MDGPU_CU_PTSZ wrappers, priv.h), name
 * the calling thread's own stream of the current context: a daemon
 * stream made on the thread's first use of it in that context, blocking
 * (flags 0) and of priority 0 as CUDA makes it, so it synchronises with
 * the legacy stream but not with other threads' per-thread streams nor
 * with non-blocking streams.  mdgpu_cu_stream_resolve() maps the name to
 * the stream at every entry point, so the rest of the library sees an
 * ordinary created stream (`ptds` set).  It cannot be destroyed
 * (cuStreamDestroy: INVALID_HANDLE, as for the other default streams);
 * it goes when its thread exits (context.c) or with its context.  Each
 * (thread, context) pair that uses one holds one of the vGPU's daemon
 * handles (max_handles) while both live.
 *
 * Stream ids (cuStreamGetId, and the private table cuBLAS reads them
 * through, export.c) are unique in the process and never reused, as in
 * CUDA: each created stream takes one, each per-thread stream one, and
 * each context one for its legacy stream.
 *
 * Event records and stream waits are queued without a round trip; queries
 * ask the daemon (CUDA_ERROR_NOT_READY while work is pending);
 * synchronisation waits in the daemon, bounded by its hang bound.  An
 * event never recorded is complete, as in CUDA.
 *
 * Capture (graph.c): records and waits on a capturing stream become
 * graph dependencies; synchronising with or querying a capturing stream,
 * or an event a capture recorded, is refused as CUDA refuses it.
 */
#include <stdlib.h>

#include "graph.h"

CUresult mdgpu_cu_stream_check(CUstream s)
{
	if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return CUDA_SUCCESS;
	if (!mdgpu_cu_set_has(&mdgpu_cu.streams, s) ||
	    !mdgpu_cu_ctx_live(s->ctx))
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}

uint64_t mdgpu_cu_stream_next_id(void)
{
	return ++mdgpu_cu.next_stream_id;
}

CUresult mdgpu_cu_stream_id(CUcontext ctx, CUstream s, uint64_t *id)
{
	if (mdgpu_cu_stream_handle(s)) {
		*id = s->id;
		return CUDA_SUCCESS;
	}
	if (!ctx)
		ctx = mdgpu_cu_current();
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!mdgpu_cu_ctx_live(ctx))
		return CUDA_ERROR_INVALID_HANDLE;
	*id = ctx->stream_id;
	return CUDA_SUCCESS;
}

uint32_t mdgpu_cu_stream_handle(CUstream s)
{
	if (!s || s == CU_STREAM_LEGACY)
		return 0;
	return s->handle;
}

void mdgpu_cu_stream_drop(CUstream s)
{
	mdgpu_cu_capture_stream_gone(s);
	mdgpu_stream_destroy(mdgpu_cu.g, s->handle);
	mdgpu_cu_set_del(&mdgpu_cu.streams, s);
	free(s);
}

static void mdgpu_cu_event_drop(CUevent e)
{
	mdgpu_cu_capture_event_gone(e);
	mdgpu_event_destroy(mdgpu_cu.g, e->event);
	mdgpu_cu_set_del(&mdgpu_cu.events, e);
	free(e);
}

void mdgpu_cu_stream_release(CUcontext ctx)
{
	mdgpu_cu_graph_release(ctx);
	for (size_t i = mdgpu_cu.streams.n; i-- > 0;) {
		CUstream s = mdgpu_cu.streams.v[i];

		if (s->ctx == ctx)
			mdgpu_cu_stream_drop(s);
	}
	for (size_t i = mdgpu_cu.events.n; i-- > 0;) {
		CUevent e = mdgpu_cu.events.v[i];

		if (e->ctx == ctx)
			mdgpu_cu_event_drop(e);
	}
}

/* The daemon's priority range, CUDA's convention: greatest <= least. */
CUresult mdgpu_cu_priorities(int *least, int *greatest)
{
	int32_t lo = 0, hi = 0;
	int ret = mdgpu_stream_priorities(mdgpu_cu.g, &lo, &hi);

	if (ret)
		return mdgpu_cu_error(ret);
	*least = lo;
	*greatest = hi;
	return CUDA_SUCCESS;
}

/* Under the lock: a new stream of ctx on a new daemon stream. */
static CUresult mdgpu_cu_stream_new(CUcontext ctx, unsigned flags,
				    int priority, CUstream *out)
{
	CUstream s = calloc(1, sizeof(*s));
	int ret;

	if (!s || mdgpu_cu_set_add(&mdgpu_cu.streams, s)) {
		free(s);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	ret = mdgpu_stream_create(mdgpu_cu.g,
				  flags & CU_STREAM_NON_BLOCKING ?
				  MDGPU_STREAM_F_NON_BLOCKING : 0,
				  priority, &s->handle);
	if (ret) {
		mdgpu_cu_set_del(&mdgpu_cu.streams, s);
		free(s);
		return mdgpu_cu_error(ret);
	}
	s->ctx = ctx;
	s->flags = flags;
	s->priority = priority;
	s->id = mdgpu_cu_stream_next_id();
	*out = s;
	return CUDA_SUCCESS;
}

CUresult mdgpu_cu_stream_resolve(CUcontext ctx, CUstream *ps)
{
	CUstream s = *ps;
	CUresult r;

	if (s != CU_STREAM_PER_THREAD)
		return mdgpu_cu_stream_check(s);
	if (!ctx)
		ctx = mdgpu_cu_current();
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	s = mdgpu_cu_ptds_get(ctx);
	if (!s) {
		/* As CUDA makes it: blocking, priority 0. */
		r = mdgpu_cu_stream_new(ctx, 0, 0, &s);
		if (r)
			return r;
		s->ptds = true;
		if (mdgpu_cu_ptds_set(ctx, s)) {
			mdgpu_cu_stream_drop(s);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	*ps = s;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream,
					    unsigned int flags, int priority)
{
	CUcontext ctx;
	CUresult r;

	if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	r = mdgpu_cu_stream_new(ctx, flags, priority, phStream);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	return cuStreamCreateWithPriority(phStream, Flags, 0);
}

/*
 * Queued work of a destroyed stream still runs (daemon and CUDA).  The
 * default streams are not destroyed (CUDA: invalid): the names, and a
 * per-thread stream's own handle (TOOLS_CONTEXT slot 51 gives it out),
 * are refused.
 */
CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.streams, hStream) || hStream->ptds)
		r = CUDA_ERROR_INVALID_HANDLE;
	else
		mdgpu_cu_stream_drop(hStream);
	mdgpu_cu_leave();
	return r;
}

/* Resolves *s; the legacy stream needs a current context, a created one
 * its own. */
static CUresult mdgpu_cu_stream_enter(CUstream *s)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_stream_resolve(NULL, s);
	if (!r && !mdgpu_cu_stream_handle(*s) && !mdgpu_cu_current())
		r = CUDA_ERROR_INVALID_CONTEXT;
	if (r)
		mdgpu_cu_leave();
	return r;
}

/*
 * Waits for stream s's work, after check (the capture rule of the
 * caller: mdgpu_cu_capture_sync or _refuse) lets it.  Enters and leaves
 * the library.
 */
static CUresult mdgpu_cu_stream_wait_all(CUstream *s,
					 CUresult (*check)(CUstream))
{
	struct mdgpu_wait w;
	CUresult r = mdgpu_cu_stream_enter(s);
	int ret;

	if (r)
		return r;
	r = check(*s);
	if (!r) {
		ret = mdgpu_cu_wait(&w, mdgpu_wait_begin_sync(mdgpu_cu.g,
				mdgpu_cu_stream_handle(*s), &w));
		r = ret ? mdgpu_cu_error(ret) : CUDA_SUCCESS;
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	return mdgpu_cu_stream_wait_all(&hStream, mdgpu_cu_capture_sync);
}

/* A host function is not captured (no host node is built): refused on a
 * capturing stream, the capture invalidated. */
static CUresult mdgpu_cu_capture_host_fn(CUstream s)
{
	return mdgpu_cu_capture_refuse(s, "host function");
}

/*
 * Host functions (cuLaunchHostFunc, cuStreamAddCallback).
 *
 * Asynchronous where the transport lets the daemon hold the vGPU (the
 * socket transport, daemon ABI 1.12): the call queues a HOST_FUNC and
 * returns; the daemon completes it once every stream's earlier work is
 * done and then runs no other command of the vGPU until the function
 * returned.  The function runs on libcuda's host-function thread (one
 * per process, started at the first use), in the order the calls were
 * made, and that thread then tells the daemon (mdgpu_host_fn_done).  So
 * work queued on the stream later runs after it, as CUDA orders it; so
 * does the work queued on every other stream later (stronger than CUDA:
 * correct, with less overlap).  That thread never takes the library's
 * lock: a thread holding it may be waiting for the ring, which moves
 * only once the function returned.  A CUDA call from the function (CUDA
 * forbids them) fails CUDA_ERROR_NOT_PERMITTED (mdgpu_cu_enter) rather
 * than wait forever for the vGPU the function holds.
 *
 * Elsewhere (guest, vfio, an older daemon) the function runs in the
 * calling thread once the stream's earlier work is done, and the call
 * returns after it.  As in CUDA, cuLaunchHostFunc does not call fn when
 * the work before it failed (a lost context; synchronously: the error
 * is returned), while cuStreamAddCallback calls it with that error as
 * its status.  Documentation/libcuda.md, "Host functions".
 */
struct mdgpu_cu_hostfn {
	struct mdgpu_cu_hostfn *next;
	struct mdgpu_wait w;
	CUhostFn fn;			/* cuLaunchHostFunc, or */
	CUstreamCallback cb;		/* cuStreamAddCallback */
	CUstream stream;		/* as the caller passed it */
	void *data;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct mdgpu_cu_hostfn *head, **tail;
	bool started;
} mdgpu_cu_hostfns = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.more = PTHREAD_COND_INITIALIZER,
	.tail = &mdgpu_cu_hostfns.head,
};

_Thread_local bool mdgpu_cu_in_host_fn;

static void *mdgpu_cu_hostfn_thread(void *arg)
{
	(void)arg;
	mdgpu_cu_in_host_fn = true;
	for (;;) {
		struct mdgpu_cu_hostfn *it;
		int st;

		pthread_mutex_lock(&mdgpu_cu_hostfns.lock);
		while (!mdgpu_cu_hostfns.head)
			pthread_cond_wait(&mdgpu_cu_hostfns.more,
					  &mdgpu_cu_hostfns.lock);
		it = mdgpu_cu_hostfns.head;
		mdgpu_cu_hostfns.head = it->next;
		if (!it->next)
			mdgpu_cu_hostfns.tail = &mdgpu_cu_hostfns.head;
		pthread_mutex_unlock(&mdgpu_cu_hostfns.lock);

		mdgpu_wait_run(mdgpu_cu.g, &it->w);
		/* The daemon holds the vGPU after a HOST_FUNC that succeeded,
		 * so its slot cannot be reused before the answer is read; a
		 * failed one is not held (the context is lost). */
		if (it->w.state != MDGPU_WAIT_DONE)
			st = -EIO;
		else
			st = it->w.ret ? it->w.ret : it->w.cpl.status;
		if (it->fn && !st)
			it->fn(it->data);
		else if (it->cb)
			it->cb(it->stream, mdgpu_cu_result(st), it->data);
		mdgpu_host_fn_done(mdgpu_cu.g, &it->w);
		free(it);
	}
	return NULL;
}

/*
 * Under the lock, stream resolved and checked: queues the host function
 * (fn or cb); -EOPNOTSUPP where it cannot run asynchronously (the
 * caller runs it itself), else 0 or the error of the queueing.
 */
static int mdgpu_cu_hostfn_queue(CUhostFn fn, CUstreamCallback cb,
				 CUstream stream, void *data)
{
	struct mdgpu_cu_hostfn *it;
	pthread_attr_t attr;
	pthread_t t;
	int ret;

	if (!mdgpu_wait_concurrent(mdgpu_cu.g))
		return -EOPNOTSUPP;
	if (!mdgpu_cu_hostfns.started) {
		if (pthread_attr_init(&attr))
			return -EOPNOTSUPP;
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		ret = pthread_create(&t, &attr, mdgpu_cu_hostfn_thread, NULL);
		pthread_attr_destroy(&attr);
		if (ret) {
			mdgpu_cu_log("host functions: no thread (%s): they run "
				     "in the caller", strerror(ret));
			return -EOPNOTSUPP;
		}
		mdgpu_cu_hostfns.started = true;
	}
	it = calloc(1, sizeof(*it));
	if (!it)
		return -ENOMEM;
	ret = mdgpu_wait_begin_host_fn(mdgpu_cu.g, &it->w);
	if (ret) {
		free(it);
		return ret;
	}
	it->fn = fn;
	it->cb = cb;
	it->stream = stream;
	it->data = data;
	pthread_mutex_lock(&mdgpu_cu_hostfns.lock);
	*mdgpu_cu_hostfns.tail = it;
	mdgpu_cu_hostfns.tail = &it->next;
	pthread_cond_signal(&mdgpu_cu_hostfns.more);
	pthread_mutex_unlock(&mdgpu_cu_hostfns.lock);
	return 0;
}

/*
 * Queues the host function if it can run asynchronously: CUDA_SUCCESS
 * with *queued, or the error of the stream or the queueing; !*queued
 * with success: the caller runs it synchronously.
 */
static CUresult mdgpu_cu_hostfn_async(CUstream *s, CUhostFn fn,
				      CUstreamCallback cb, CUstream as_passed,
				      void *data, bool *queued)
{
	CUresult r = mdgpu_cu_stream_enter(s);
	int ret;

	*queued = false;
	if (r)
		return r;
	r = mdgpu_cu_capture_host_fn(*s);
	if (!r) {
		ret = mdgpu_cu_hostfn_queue(fn, cb, as_passed, data);
		if (!ret)
			*queued = true;
		else if (ret != -EOPNOTSUPP)
			r = mdgpu_cu_error(ret);
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn,
				  void *userData)
{
	CUstream s = hStream;
	bool queued;
	CUresult r;

	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_hostfn_async(&s, fn, NULL, hStream, userData, &queued);
	if (r || queued)
		return r;
	r = mdgpu_cu_stream_wait_all(&hStream, mdgpu_cu_capture_host_fn);
	if (r)
		return r;
	fn(userData);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamAddCallback(CUstream hStream,
				     CUstreamCallback callback,
				     void *userData, unsigned int flags)
{
	CUstream s = hStream;	/* resolved; the callback gets hStream */
	bool queued;
	CUresult r;

	if (!callback || flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_hostfn_async(&s, NULL, callback, hStream, userData,
				  &queued);
	if (r || queued)
		return r;
	s = hStream;
	r = mdgpu_cu_stream_wait_all(&s, mdgpu_cu_capture_host_fn);
	switch (r) {
	case CUDA_SUCCESS:
		break;
	case CUDA_ERROR_INVALID_HANDLE:
	case CUDA_ERROR_INVALID_CONTEXT:
	case CUDA_ERROR_NOT_INITIALIZED:
	case CUDA_ERROR_DEINITIALIZED:
	case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
	case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
	case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
		return r;	/* nothing was queued */
	default:
		callback(hStream, r, userData);
		return r;
	}
	callback(hStream, CUDA_SUCCESS, userData);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
	CUresult r = mdgpu_cu_stream_enter(&hStream);
	int pending = 0, ret;

	if (r)
		return r;
	r = mdgpu_cu_capture_sync(hStream);
	if (r)
		goto out;
	ret = mdgpu_stream_query(mdgpu_cu.g, mdgpu_cu_stream_handle(hStream),
				 &pending);
	if (ret)
		r = mdgpu_cu_error(ret);
	else if (pending)
		r = CUDA_ERROR_NOT_READY;
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
	CUresult r;

	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_stream_resolve(NULL, &hStream);
	if (!r)
		*flags = mdgpu_cu_stream_handle(hStream) ? hStream->flags : 0;
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority)
{
	CUresult r;

	if (!priority)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_stream_resolve(NULL, &hStream);
	if (!r)
		*priority = mdgpu_cu_stream_handle(hStream) ?
			    hStream->priority : 0;
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_stream_enter(&hStream);
	if (r)
		return r;
	*pctx = mdgpu_cu_stream_handle(hStream) ? hStream->ctx :
						  mdgpu_cu_current();
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

/*
 * CUDA 12.5's: the stream's context and its green context.  mdgpu has no
 * green contexts (cuGreenCtx* are not supported), so every stream belongs
 * to a regular context and *pGreenCtx is NULL, as cuda.h documents for
 * that case; the context is cuStreamGetCtx's answer, with its refusals.
 */
CUresult CUDAAPI cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx,
				   CUgreenCtx *pGreenCtx)
{
	CUresult r;

	if (!pCtx || !pGreenCtx)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuStreamGetCtx(hStream, pCtx);
	if (!r)
		*pGreenCtx = NULL;
	return r;
}

MDGPU_CU_PTSZ(cuStreamGetCtx_v2_ptsz, cuStreamGetCtx_v2,
	      (CUstream s, CUcontext *pctx, CUgreenCtx *pgreen),
	      cuStreamGetCtx_v2(MDGPU_CU_PTS(s), pctx, pgreen))

CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
	uint64_t id = 0;
	CUresult r;

	if (!streamId)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_stream_enter(&hStream);
	if (r)
		return r;
	r = mdgpu_cu_stream_id(NULL, hStream, &id);
	mdgpu_cu_leave();
	if (!r)
		*streamId = id;
	return r;
}

static CUresult mdgpu_cu_event_check(CUevent e)
{
	if (!mdgpu_cu_set_has(&mdgpu_cu.events, e) ||
	    !mdgpu_cu_ctx_live(e->ctx))
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent,
				   unsigned int Flags)
{
	bool captured = false;
	CUresult r;
	int ret;

	if (Flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_stream_enter(&hStream);
	if (r)
		return r;
	r = mdgpu_cu_event_check(hEvent);
	if (!r)
		r = mdgpu_cu_capture_wait(hStream, hEvent, Flags, &captured);
	/* Waiting for an event never recorded is a no-op, as in CUDA. */
	if (!r && !captured && hEvent->recorded) {
		ret = mdgpu_stream_wait_event(mdgpu_cu.g,
					      mdgpu_cu_stream_handle(hStream),
					      hEvent->event);
		if (ret)
			r = mdgpu_cu_error(ret);
	}
	mdgpu_cu_leave();
	return r;
}

MDGPU_CU_PTSZ(cuStreamSynchronize_ptsz, cuStreamSynchronize, (CUstream s),
	      cuStreamSynchronize(MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuStreamQuery_ptsz, cuStreamQuery, (CUstream s),
	      cuStreamQuery(MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuLaunchHostFunc_ptsz, cuLaunchHostFunc,
	      (CUstream s, CUhostFn fn, void *data),
	      cuLaunchHostFunc(MDGPU_CU_PTS(s), fn, data))
MDGPU_CU_PTSZ(cuStreamAddCallback_ptsz, cuStreamAddCallback,
	      (CUstream s, CUstreamCallback cb, void *data, unsigned int fl),
	      cuStreamAddCallback(MDGPU_CU_PTS(s), cb, data, fl))
MDGPU_CU_PTSZ(cuStreamGetFlags_ptsz, cuStreamGetFlags,
	      (CUstream s, unsigned int *flags),
	      cuStreamGetFlags(MDGPU_CU_PTS(s), flags))
MDGPU_CU_PTSZ(cuStreamGetPriority_ptsz, cuStreamGetPriority,
	      (CUstream s, int *priority),
	      cuStreamGetPriority(MDGPU_CU_PTS(s), priority))
MDGPU_CU_PTSZ(cuStreamGetCtx_ptsz, cuStreamGetCtx,
	      (CUstream s, CUcontext *pctx),
	      cuStreamGetCtx(MDGPU_CU_PTS(s), pctx))
MDGPU_CU_PTSZ(cuStreamGetId_ptsz, cuStreamGetId,
	      (CUstream s, unsigned long long *id),
	      cuStreamGetId(MDGPU_CU_PTS(s), id))
MDGPU_CU_PTSZ(cuStreamWaitEvent_ptsz, cuStreamWaitEvent,
	      (CUstream s, CUevent e, unsigned int flags),
	      cuStreamWaitEvent(MDGPU_CU_PTS(s), e, flags))

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	const unsigned known = CU_EVENT_BLOCKING_SYNC |
			       CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
	CUcontext ctx;
	CUevent e;
	CUresult r;
	int ret;

	if (!phEvent || (Flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	/* Interprocess events need cuIpcGetEventHandle: not supported. */
	if (Flags & CU_EVENT_INTERPROCESS)
		return CUDA_ERROR_NOT_SUPPORTED;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	e = calloc(1, sizeof(*e));
	if (!e || mdgpu_cu_set_add(&mdgpu_cu.events, e)) {
		free(e);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	/* BLOCKING_SYNC is how a host thread waits: the daemon waits for
	 * the client either way. */
	ret = mdgpu_event_create_flags(mdgpu_cu.g,
				       Flags & CU_EVENT_DISABLE_TIMING ?
				       MDGPU_EVENT_F_DISABLE_TIMING : 0,
				       &e->event);
	if (ret) {
		r = mdgpu_cu_error(ret);
		mdgpu_cu_set_del(&mdgpu_cu.events, e);
		free(e);
		goto out;
	}
	e->ctx = ctx;
	e->flags = Flags;
	*phEvent = e;
out:
	mdgpu_cu_leave();
	return r;
}

static CUresult mdgpu_cu_record(CUevent hEvent, CUstream hStream,
				unsigned flags)
{
	CUresult r = mdgpu_cu_enter();
	bool captured = false;
	int ret;

	if (r)
		return r;
	r = mdgpu_cu_event_check(hEvent);
	if (!r)
		r = mdgpu_cu_stream_resolve(NULL, &hStream);
	if (!r)
		r = mdgpu_cu_capture_record(hEvent, hStream, flags, &captured);
	if (!r && !captured) {
		ret = mdgpu_event_record_on(mdgpu_cu.g, hEvent->event,
					    mdgpu_cu_stream_handle(hStream));
		if (ret) {
			r = mdgpu_cu_error(ret);
		} else {
			hEvent->recorded = true;
			mdgpu_cu_capture_event_recorded(hEvent);
		}
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
	return mdgpu_cu_record(hEvent, hStream, 0);
}

/* CU_EVENT_RECORD_EXTERNAL: a node of a capture; invalid outside one. */
CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream,
					unsigned int flags)
{
	if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	return mdgpu_cu_record(hEvent, hStream, flags);
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	struct mdgpu_wait w;
	CUresult r = mdgpu_cu_enter();
	int ret;

	if (r)
		return r;
	r = mdgpu_cu_event_check(hEvent);
	if (!r)
		r = mdgpu_cu_capture_event_use(hEvent);
	if (!r && hEvent->recorded) {
		ret = mdgpu_cu_wait(&w, mdgpu_wait_begin_event(mdgpu_cu.g,
							hEvent->event, &w));
		if (ret)
			r = mdgpu_cu_error(ret);
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
	CUresult r = mdgpu_cu_enter();
	int pending = 0, ret;

	if (r)
		return r;
	r = mdgpu_cu_event_check(hEvent);
	if (!r)
		r = mdgpu_cu_capture_event_use(hEvent);
	if (!r && hEvent->recorded) {
		ret = mdgpu_event_query(mdgpu_cu.g, hEvent->event, &pending);
		if (ret)
			r = mdgpu_cu_error(ret);
		else if (pending)
			r = CUDA_ERROR_NOT_READY;
	}
	mdgpu_cu_leave();
	return r;
}

/*
 * Either event not complete yet: CUDA_ERROR_NOT_READY, as the host driver
 * answers (a query of each, the end first); then the daemon's answer,
 * which waits for the end event (complete by then, so at once).
 */
CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart,
				       CUevent hEnd)
{
	uint64_t ns = 0;
	int pending = 0, ret;
	CUresult r;

	if (!pMilliseconds)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_event_check(hStart);
	if (!r)
		r = mdgpu_cu_event_check(hEnd);
	if (!r)
		r = mdgpu_cu_capture_event_use(hStart);
	if (!r)
		r = mdgpu_cu_capture_event_use(hEnd);
	if (r)
		goto out;
	if ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING ||
	    !hStart->recorded || !hEnd->recorded) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	ret = mdgpu_event_query(mdgpu_cu.g, hEnd->event, &pending);
	if (!ret && !pending)
		ret = mdgpu_event_query(mdgpu_cu.g, hStart->event, &pending);
	if (!ret && pending) {
		r = CUDA_ERROR_NOT_READY;
		goto out;
	}
	if (!ret)
		ret = mdgpu_event_elapsed_ns(mdgpu_cu.g, hStart->event,
					     hEnd->event, &ns);
	if (ret)
		r = mdgpu_cu_error(ret);
	else
		*pMilliseconds = (float)((double)ns / 1e6);
out:
	mdgpu_cu_leave();
	return r;
}

/* CUDA 2.0's name.  cuda.h declares it with the parameters of the 12.8
 * variant and documents one contract for both, so it is the same
 * function; cuGetProcAddress gives it for versions before 12080. */
MDGPU_CU_ALIAS(cuEventElapsedTime, cuEventElapsedTime_v2);

CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_event_check(hEvent);
	if (!r)
		mdgpu_cu_event_drop(hEvent);
	mdgpu_cu_leave();
	return r;
}

MDGPU_CU_PTSZ(cuEventRecord_ptsz, cuEventRecord, (CUevent e, CUstream s),
	      cuEventRecord(e, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuEventRecordWithFlags_ptsz, cuEventRecordWithFlags,
	      (CUevent e, CUstream s, unsigned int flags),
	      cuEventRecordWithFlags(e, MDGPU_CU_PTS(s), flags))
