// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The vGPU's streams in the worker.
 *
 * Stream 0, the vGPU's default stream, is the driver's legacy default
 * stream (CU_STREAM_LEGACY) of the worker's context: the driver gives it
 * the legacy semantics the ABI asks for (it waits for earlier work of
 * every blocking stream, their later work waits for it; non-blocking
 * streams do not synchronise with it).  The other streams are real
 * CUstreams, created blocking or CU_STREAM_NON_BLOCKING with the
 * client's clamped priority, named by handles of w->streams.  The
 * worker's own stream (w->stream, non-blocking) is none of them.
 *
 * Waiting for all of the vGPU's work (SYNC 0, SLICE_END, a scrub) joins
 * every stream into the worker's own stream: join_ev is recorded on each
 * and the worker's stream made to wait for it (cuStreamWaitEvent takes
 * the event's state at the call, so one event serves every stream), then
 * the worker's stream is drained.  A stream being destroyed is joined the
 * same way first, so that its queued work, which still runs, is still
 * waited for and accounted.
 *
 * Errors of asynchronous requests are latched per stream (serve.c calls
 * mdgpud_worker_stream_latch with the stream the request named, which it
 * finds in w->req_stream) and reported by the next SYNC or STREAM_QUERY
 * of that stream, or by SYNC 0 for every stream.
 */
#include "worker.h"

#include <errno.h>
#include <stdlib.h>

#include <uapi/mdgpu.h>

/* The stream of `handle` (0: the default stream), or -ENOENT. */
int mdgpud_worker_stream_get(struct mdgpud_worker *w, uint64_t handle,
			     struct mdgpud_worker_stream **out)
{
	void *obj;

	if (!handle) {
		*out = &w->stream0;
		return 0;
	}
	if (mdgpud_worker_handles_get(&w->streams, handle, &obj))
		return -ENOENT;
	*out = obj;
	return 0;
}

int mdgpud_worker_stream_create(struct mdgpud_worker *w, uint32_t flags,
				int32_t priority, uint64_t *handle)
{
	struct mdgpud_worker_stream *st = calloc(1, sizeof(*st));
	unsigned int cu_flags = (flags & MDGPU_STREAM_F_NON_BLOCKING) ?
				MDGPUD_CU_STREAM_NON_BLOCKING :
				MDGPUD_CU_STREAM_DEFAULT;
	mdgpud_cu_result res;
	int ret;

	if (!st)
		return -ENOMEM;
	res = w->cu.stream_create_with_priority(&st->cu, cu_flags, priority);
	if (res) {
		free(st);
		return mdgpud_worker_err(w, res, "cuStreamCreateWithPriority");
	}
	ret = mdgpud_worker_handles_insert(&w->streams, st, 0, handle);
	if (ret) {
		w->cu.stream_destroy(st->cu);
		free(st);
	}
	return ret;
}

/* The worker's stream waits for the work queued on `st` so far. */
static mdgpud_cu_result mdgpud_worker_stream_join_one(
	struct mdgpud_worker *w, const struct mdgpud_worker_stream *st)
{
	mdgpud_cu_result res = w->cu.event_record(w->join_ev, st->cu);

	if (!res)
		res = w->cu.stream_wait_event(w->stream, w->join_ev, 0);
	return res;
}

/* Keeps the first error of a stream that goes away for SYNC 0. */
static void mdgpud_worker_stream_orphan_err(struct mdgpud_worker *w,
					    struct mdgpud_worker_stream *st)
{
	if (st->err && !w->pending_err) {
		w->pending_err = st->err;
		w->pending_cu = st->err_cu;
	}
}

/*
 * Its queued work still runs (cuStreamDestroy returns at once and the
 * driver releases the stream when the work is done); the join keeps it
 * in the next drain of the whole vGPU.
 */
int mdgpud_worker_stream_destroy(struct mdgpud_worker *w, uint64_t handle)
{
	mdgpud_cu_result res;
	void *obj;
	struct mdgpud_worker_stream *st;

	if (mdgpud_worker_handles_remove(&w->streams, handle, &obj))
		return -ENOENT;
	st = obj;
	res = mdgpud_worker_stream_join_one(w, st);
	mdgpud_worker_stream_orphan_err(w, st);
	if (!res)
		res = w->cu.stream_destroy(st->cu);
	else
		w->cu.stream_destroy(st->cu);
	free(st);
	return mdgpud_worker_err(w, res, "cuStreamDestroy");
}

/* Teardown: the context is drained (or lost) already. */
void mdgpud_worker_stream_destroy_all(struct mdgpud_worker *w)
{
	uint32_t cursor = 0;
	void *obj;

	while (!mdgpud_worker_handles_next(&w->streams, &cursor, &obj)) {
		struct mdgpud_worker_stream *st = obj;

		w->cu.stream_destroy(st->cu);
		free(st);
	}
	mdgpud_worker_handles_fini(&w->streams);
}

/*
 * Before a request queues work on st: the first time in a slice, st waits
 * for the slice's begin event (recorded on the worker's own stream), so
 * that the begin precedes all of the slice's work on every stream,
 * whichever stream the GPU takes first; the streams are drained at a
 * slice's begin, so the wait costs the GPU nothing.  Only streams that
 * get work wait: an idle stream with a wait on an event the GPU has not
 * passed yet would read NOT_READY to STREAM_QUERY, work the client never
 * queued (seen on the H200 as a neighbour's cuStreamQuery of an idle
 * stream answering 600).  A failed wait is left to the request itself,
 * which meets the same broken context.
 */
void mdgpud_worker_stream_enter_slice(struct mdgpud_worker *w,
				      struct mdgpud_worker_stream *st)
{
	if (!w->slice_open || st->slice_seq == w->slice_seq)
		return;
	if (!w->cu.stream_wait_event(st->cu, w->slice_ev[0], 0))
		st->slice_seq = w->slice_seq;
}

/* The worker's stream waits for every stream's work queued so far. */
mdgpud_cu_result mdgpud_worker_stream_join(struct mdgpud_worker *w)
{
	mdgpud_cu_result res = mdgpud_worker_stream_join_one(w, &w->stream0);
	uint32_t cursor = 0;
	void *obj;

	while (!res &&
	       !mdgpud_worker_handles_next(&w->streams, &cursor, &obj))
		res = mdgpud_worker_stream_join_one(w, obj);
	return res;
}

/* An asynchronous request failed with err: latched on its stream. */
void mdgpud_worker_stream_latch(struct mdgpud_worker *w, int err)
{
	struct mdgpud_worker_stream *st = w->req_stream;

	if (!err)
		return;
	if (st && !st->err) {
		st->err = err;
		st->err_cu = w->last_cu;
	} else if (!st && !w->pending_err) {
		w->pending_err = err;
		w->pending_cu = w->last_cu;
	}
}

/* Reports, then clears, a latched error (its CUresult in w->last_cu). */
static int mdgpud_worker_stream_take(struct mdgpud_worker *w, int *err,
				     uint32_t *err_cu)
{
	int ret = *err;

	if (ret)
		w->last_cu = *err_cu;
	*err = 0;
	*err_cu = 0;
	return ret;
}

/*
 * SYNC: stream 0 waits for every stream and reports the first latched
 * error of any; another stream waits for its own work and error.  A drain
 * that lost the context (-EIO) is reported before any latched error.
 */
int mdgpud_worker_stream_sync(struct mdgpud_worker *w, uint64_t handle)
{
	struct mdgpud_worker_stream *st;
	uint32_t cursor = 0;
	void *obj;
	int ret, lat;

	if (mdgpud_worker_stream_get(w, handle, &st))
		return -ENOENT;
	if (handle) {
		ret = mdgpud_worker_err(w, mdgpud_worker_context_drain(
				w, st->cu, 0, w->shm->worker_spin_ns),
				"stream synchronize");
		if (ret == -EIO)
			return ret;
		lat = mdgpud_worker_stream_take(w, &st->err, &st->err_cu);
		return lat ? lat : ret;
	}
	ret = mdgpud_worker_err(w, mdgpud_worker_context_drain_all(w, 0),
				"synchronize");
	if (ret == -EIO)
		return ret;
	lat = mdgpud_worker_stream_take(w, &w->pending_err, &w->pending_cu);
	if (!lat)
		lat = mdgpud_worker_stream_take(w, &w->stream0.err,
						&w->stream0.err_cu);
	while (!mdgpud_worker_handles_next(&w->streams, &cursor, &obj)) {
		struct mdgpud_worker_stream *o = obj;

		if (!lat) {
			lat = mdgpud_worker_stream_take(w, &o->err,
							&o->err_cu);
		} else {
			o->err = 0;
			o->err_cu = 0;
		}
	}
	return lat ? lat : ret;
}

/*
 * BUSY: *busy 1 while any stream of the vGPU, or the worker's own, has
 * work queued.  Only a look: nothing is waited for, and an error a query
 * returns is left for the SYNC or drain that will report it.
 */
int mdgpud_worker_busy(struct mdgpud_worker *w, uint64_t *busy)
{
	uint32_t cursor = 0;
	void *obj;

	*busy = w->cu.stream_query(w->stream0.cu) ==
		MDGPUD_CUDA_ERROR_NOT_READY ||
		w->cu.stream_query(w->stream) == MDGPUD_CUDA_ERROR_NOT_READY;
	while (!*busy && !mdgpud_worker_handles_next(&w->streams, &cursor,
						     &obj)) {
		struct mdgpud_worker_stream *st = obj;

		*busy = w->cu.stream_query(st->cu) ==
			MDGPUD_CUDA_ERROR_NOT_READY;
	}
	return 0;
}

/* STREAM_QUERY: *pending 1 while work is queued; a latched error first. */
int mdgpud_worker_stream_query(struct mdgpud_worker *w, uint64_t handle,
			       uint64_t *pending)
{
	struct mdgpud_worker_stream *st;
	mdgpud_cu_result res;
	int lat;

	if (mdgpud_worker_stream_get(w, handle, &st))
		return -ENOENT;
	lat = mdgpud_worker_stream_take(w, &st->err, &st->err_cu);
	if (lat)
		return lat;
	res = w->cu.stream_query(st->cu);
	*pending = res == MDGPUD_CUDA_ERROR_NOT_READY;
	if (*pending)
		return 0;
	return mdgpud_worker_err(w, res, "cuStreamQuery");
}
