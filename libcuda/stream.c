// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: streams and events.
 *
 * The vGPU has one in-order queue: every stream, the default ones
 * included, is a name for it.  Work is never reordered across streams,
 * which is stricter than CUDA requires and never wrong.  Synchronising a
 * stream or querying it waits for the whole queue (a query that answered
 * CUDA_ERROR_NOT_READY could not be told apart from one that never
 * finishes: libmdgpu has no non-blocking completion check).  Priorities
 * are accepted and have no effect.
 *
 * An event record completes when everything queued before it has (libmdgpu
 * waits for it), so a recorded event is always complete.
 */
#include <stdlib.h>

#include "priv.h"

CUresult mdgpu_cu_stream_check(CUstream s)
{
	if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return CUDA_SUCCESS;
	if (!mdgpu_cu_set_has(&mdgpu_cu.streams, s) ||
	    !mdgpu_cu_ctx_live(s->ctx))
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}

uint32_t mdgpu_cu_stream_handle(CUstream s)
{
	if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return 0;
	return s->handle;
}

void mdgpu_cu_stream_release(CUcontext ctx)
{
	for (size_t i = mdgpu_cu.streams.n; i-- > 0;) {
		CUstream s = mdgpu_cu.streams.v[i];

		if (s->ctx == ctx) {
			mdgpu_cu_set_del(&mdgpu_cu.streams, s);
			free(s);
		}
	}
	for (size_t i = mdgpu_cu.events.n; i-- > 0;) {
		CUevent e = mdgpu_cu.events.v[i];

		if (e->ctx == ctx) {
			mdgpu_event_destroy(mdgpu_cu.g, e->event);
			mdgpu_cu_set_del(&mdgpu_cu.events, e);
			free(e);
		}
	}
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	CUcontext ctx;
	CUstream s;
	CUresult r;

	if (!phStream || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s || mdgpu_cu_set_add(&mdgpu_cu.streams, s)) {
		free(s);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		s->ctx = ctx;
		s->flags = Flags;
		*phStream = s;
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream,
					    unsigned int flags, int priority)
{
	(void)priority;
	return cuStreamCreate(phStream, flags);
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.streams, hStream)) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else {
		mdgpu_cu_set_del(&mdgpu_cu.streams, hStream);
		free(hStream);
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_stream_check(hStream);
	if (!r && !mdgpu_cu_current() && !hStream)
		r = CUDA_ERROR_INVALID_CONTEXT;
	if (!r)
		r = mdgpu_cu_result(mdgpu_synchronize(mdgpu_cu.g));
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
	return cuStreamSynchronize(hStream);
}

CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
	CUresult r;

	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_stream_check(hStream);
	if (!r)
		*flags = hStream && hStream != CU_STREAM_LEGACY &&
			 hStream != CU_STREAM_PER_THREAD ? hStream->flags : 0;
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream,
				     CUstreamCaptureStatus *captureStatus)
{
	CUresult r;

	if (!captureStatus)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_stream_check(hStream);
	if (!r)
		*captureStatus = CU_STREAM_CAPTURE_STATUS_NONE;
	mdgpu_cu_leave();
	return r;
}

MDGPU_CU_ALIAS(cuStreamSynchronize_ptsz, cuStreamSynchronize);
MDGPU_CU_ALIAS(cuStreamQuery_ptsz, cuStreamQuery);
MDGPU_CU_ALIAS(cuStreamGetFlags_ptsz, cuStreamGetFlags);
MDGPU_CU_ALIAS(cuStreamIsCapturing_ptsz, cuStreamIsCapturing);

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	const unsigned known = CU_EVENT_BLOCKING_SYNC |
			       CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
	CUcontext ctx;
	CUevent e;
	CUresult r;

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
	r = mdgpu_cu_result(mdgpu_event_create(mdgpu_cu.g, &e->event));
	if (r) {
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

static CUresult mdgpu_cu_event_check(CUevent e)
{
	if (!mdgpu_cu_set_has(&mdgpu_cu.events, e) ||
	    !mdgpu_cu_ctx_live(e->ctx))
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_event_check(hEvent);
	if (!r)
		r = mdgpu_cu_stream_check(hStream);
	if (!r)
		r = mdgpu_cu_result(mdgpu_event_record(mdgpu_cu.g,
						       hEvent->event));
	if (!r)
		hEvent->recorded = true;
	mdgpu_cu_leave();
	return r;
}

/* A recorded event is complete (see above); one never recorded is too. */
CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_event_check(hEvent);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
	return cuEventSynchronize(hEvent);
}

CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart,
				       CUevent hEnd)
{
	uint64_t ns = 0;
	CUresult r;

	if (!pMilliseconds)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_event_check(hStart);
	if (!r)
		r = mdgpu_cu_event_check(hEnd);
	if (r)
		goto out;
	if ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	if (!hStart->recorded || !hEnd->recorded) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	r = mdgpu_cu_result(mdgpu_event_elapsed_ns(mdgpu_cu.g, hStart->event,
						   hEnd->event, &ns));
	if (!r)
		*pMilliseconds = (float)((double)ns / 1e6);
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_event_check(hEvent);
	if (!r) {
		mdgpu_event_destroy(mdgpu_cu.g, hEvent->event);
		mdgpu_cu_set_del(&mdgpu_cu.events, hEvent);
		free(hEvent);
	}
	mdgpu_cu_leave();
	return r;
}

MDGPU_CU_ALIAS(cuEventRecord_ptsz, cuEventRecord);
