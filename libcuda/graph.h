/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libcuda: stream capture and graphs (graph.c), and what the files that
 * queue stream work (launch.c, memory.c, stream.c) ask of them.  Every
 * function here runs under mdgpu_cu.lock; handles passed in are already
 * found live.
 *
 * Stream-ordered work is described once, as an operation (struct
 * mdgpu_cu_op), and handed to mdgpu_cu_submit(): on a stream that is not
 * capturing it is queued at once; on a capturing stream it becomes a node
 * of the capture's graph, and a launch of the instantiated graph queues
 * the same operation again (Documentation/libcuda.md, "Graphs").
 */
#ifndef MDGPU_CU_GRAPH_H
#define MDGPU_CU_GRAPH_H

#include "priv.h"

enum mdgpu_cu_op_kind {
	MDGPU_CU_OP_EMPTY,
	MDGPU_CU_OP_KERNEL,
	MDGPU_CU_OP_MEMSET,
	MDGPU_CU_OP_COPY,
	MDGPU_CU_OP_EVENT_RECORD,
	MDGPU_CU_OP_EVENT_WAIT,
};

enum mdgpu_cu_dir { MDGPU_CU_HTOD, MDGPU_CU_DTOH, MDGPU_CU_DTOD };

/*
 * One piece of stream work.  Sizes are checked and device ranges found
 * in the record before an operation is built; a capture keeps its own
 * copy of the kernel parameters.
 */
struct mdgpu_cu_op {
	enum mdgpu_cu_op_kind kind;
	union {
		struct {
			CUfunction f;
			uint32_t func;		/* f->func when built */
			struct mdgpu_launch_cfg cfg;	/* .stream unused */
			const void *params;
			uint32_t len;
		} kernel;
		/* rows rows of `bytes` bytes (a multiple of width) of
		 * value, pitch bytes apart (rows 1: pitch unused). */
		struct {
			CUdeviceptr dst;
			uint64_t pitch, bytes, rows;
			uint32_t value;
			unsigned width;
		} memset;
		/* rows rows of `width` bytes; a host side is a pointer of
		 * this process.  async: MDGPU_COPY_ASYNC. */
		struct {
			enum mdgpu_cu_dir dir;
			uintptr_t dst, src;
			uint64_t dpitch, spitch, width, rows;
			bool async;
		} copy;
		struct {
			CUevent e;
			uint32_t event;		/* e->event when built */
		} event;
	} u;
};

/*
 * The operation on stream s: queued when s is not capturing, else a node
 * of s's capture.  Refused: s's capture was invalidated
 * (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED); s is the legacy stream while a
 * blocking stream of its context captures (STREAM_CAPTURE_IMPLICIT, that
 * capture invalidated); a copy whose host side is not zero-copy memory
 * on a capturing stream (STREAM_CAPTURE_UNSUPPORTED, capture
 * invalidated).  Queuing failures: the daemon's error.
 */
CUresult mdgpu_cu_submit(CUstream s, const struct mdgpu_cu_op *op);

/*
 * A potentially unsafe call (cuMemAlloc, cuMemFree, host allocation and
 * registration, context synchronisation) under the calling thread's
 * capture mode (cuThreadExchangeStreamCaptureMode): where the mode
 * prohibits it, the captures that prohibit it are invalidated and the
 * answer is CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED.  `who` is logged.
 */
CUresult mdgpu_cu_capture_unsafe(const char *who);

/*
 * Synchronising with or querying stream s: refused while s captures
 * (STREAM_CAPTURE_UNSUPPORTED, capture invalidated) or, for the legacy
 * stream, while a blocking stream of its context does
 * (STREAM_CAPTURE_IMPLICIT, capture invalidated).
 */
CUresult mdgpu_cu_capture_sync(CUstream s);

/* Stream-ordered work that cannot be captured (`what`, logged): refused
 * on a capturing stream (STREAM_CAPTURE_UNSUPPORTED, capture
 * invalidated) and, like other work, on the legacy stream while a
 * blocking stream captures (STREAM_CAPTURE_IMPLICIT). */
CUresult mdgpu_cu_capture_refuse(CUstream s, const char *what);

/* cuEventRecord(WithFlags) on s: *done set when the record was captured
 * (no work to queue), else the caller queues it. */
CUresult mdgpu_cu_capture_record(CUevent e, CUstream s, unsigned flags,
				 bool *done);
/* cuStreamWaitEvent: *done set when the wait was captured or joined s
 * to a capture, else the caller queues it. */
CUresult mdgpu_cu_capture_wait(CUstream s, CUevent e, unsigned flags,
			       bool *done);
/* Querying, synchronising or timing e: CUDA_ERROR_CAPTURED_EVENT while
 * its last record was a capture's. */
CUresult mdgpu_cu_capture_event_use(CUevent e);
/* e recorded for real (outside capture): it leaves its capture. */
void mdgpu_cu_capture_event_recorded(CUevent e);

/* Before a stream or an event is freed. */
void mdgpu_cu_capture_stream_gone(CUstream s);
void mdgpu_cu_capture_event_gone(CUevent e);
/* Executable graphs of ctx, freed with it. */
void mdgpu_cu_graph_release(CUcontext ctx);

/* memory.c: is [p, p + len) inside zero-copy host memory
 * (cuMemHostAlloc), which the daemon reaches when a graph runs. */
bool mdgpu_cu_host_zero_copy(uintptr_t p, uint64_t len);
uint64_t mdgpu_cu_host_reg_dev(uintptr_t p, uint64_t len);

/*
 * launch.c: the parameter blob of a launch of f from kernelParams or
 * `extra` (at most one non-NULL) into *blob and *len: `extra`'s buffer,
 * or kernelParams packed by f's layout into `packed`
 * (MDGPU_CU_PACKED_BYTES, on the caller's stack) or, for a layout larger
 * than that, into *heap, which the caller frees once the blob was
 * submitted (NULL otherwise).  A blob larger than the daemon takes
 * (MDGPU_PARAMS_MAX, MDGPU_PARAMS_MAX_1_5 before ABI 1.6) is
 * CUDA_ERROR_INVALID_VALUE.
 */
#define MDGPU_CU_PACKED_BYTES	MDGPU_PARAMS_MAX_1_5
CUresult mdgpu_cu_kernel_blob(CUfunction f, void **kernelParams,
			      void **extra, unsigned char *packed,
			      unsigned char **heap, const void **blob,
			      size_t *len);

#endif /* MDGPU_CU_GRAPH_H */
