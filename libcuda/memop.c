// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: stream memory operations (cuStreamWriteValue32/64,
 * cuStreamWaitValue32/64, cuStreamBatchMemOp), each one STREAM_MEMOP
 * command of the daemon (ABI 1.10) on the call's stream.
 *
 * What is offered: writes of a 32- or 64-bit value, and waits until the
 * word meets one of CUDA's four conditions (GEQ, EQ, AND, NOR), on device
 * memory the application allocated (or a module global).  What is
 * refused, CUDA_ERROR_NOT_SUPPORTED (logged with MDGPU_CUDA_LOG), never
 * done approximately:
 *  - a write's CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER and a wait's
 *    CU_STREAM_WAIT_VALUE_FLUSH, the batch operations
 *    CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES and CU_STREAM_MEM_OP_BARRIER,
 *    and any flag or operation this file does not know;
 *  - mapped host memory (cuMemHostGetDevicePointer): the word the host
 *    writes would have to reach the daemon's GPU mapping, and a wait the
 *    host releases would hold the vGPU's slice for as long as the host
 *    takes;
 *  - a daemon older than ABI 1.10.
 * A capturing stream refuses them (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
 * the capture invalidated): graphs have no memory-operation node here.
 * A zero, misaligned or unrecorded address is CUDA_ERROR_INVALID_VALUE,
 * at the call: every operation is checked against the recorded ranges
 * before it is sent.
 *
 * Each command is waited for (the daemon completes it once queued), so
 * that the daemon's refusal is the call's answer.  On the sim backend a
 * wait whose condition does not hold when it runs is refused
 * (CUDA_ERROR_NOT_SUPPORTED): work runs synchronously there, and nothing
 * could release it.  A batch is checked whole before its first operation
 * is sent; a refusal by the daemon part-way leaves the operations before
 * it queued, as the driver's own batch would have queued them.
 */
#include "graph.h"

/* CUDA's bound on one batch (cuda.h, cuStreamBatchMemOp). */
#define MDGPU_CU_BATCH_MAX	256

/* Flag bits of each kind that CUDA defines. */
#define MDGPU_CU_WAIT_COND_MASK	0x3u

struct mdgpu_cu_memop {
	uint32_t op;			/* MDGPU_MEMOP_* */
	CUdeviceptr addr;
	uint64_t value;
	uint32_t flags;			/* MDGPU_MEMOP_WAIT_* or 0 */
};

/* Under the lock: is [addr, addr + len) in mapped host memory. */
static bool mdgpu_cu_memop_in_host(CUdeviceptr addr, uint64_t len)
{
	uint64_t base = mdgpu_cu.aperture_devptr;

	return base && addr >= base && addr - base < mdgpu_cu.aperture_mapped &&
	       len <= mdgpu_cu.aperture_mapped - (addr - base);
}

/*
 * Under the lock: one operation in CUDA's terms (a CUstreamBatchMemOpType,
 * its address, value and flags) checked and turned into the daemon's.
 */
static CUresult mdgpu_cu_memop_make(unsigned type, CUdeviceptr addr,
				    uint64_t value, unsigned flags,
				    struct mdgpu_cu_memop *out)
{
	uint64_t width;
	bool wait;

	switch (type) {
	case CU_STREAM_MEM_OP_WRITE_VALUE_32:
		out->op = MDGPU_MEMOP_WRITE32;
		break;
	case CU_STREAM_MEM_OP_WRITE_VALUE_64:
		out->op = MDGPU_MEMOP_WRITE64;
		break;
	case CU_STREAM_MEM_OP_WAIT_VALUE_32:
		out->op = MDGPU_MEMOP_WAIT32;
		break;
	case CU_STREAM_MEM_OP_WAIT_VALUE_64:
		out->op = MDGPU_MEMOP_WAIT64;
		break;
	case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
		mdgpu_cu_log("stream memory operations: remote-write flushes "
			     "are not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	case CU_STREAM_MEM_OP_BARRIER:
		mdgpu_cu_log("stream memory operations: barriers are not "
			     "supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	default:
		mdgpu_cu_log("stream memory operations: operation %u is not "
			     "supported", type);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	wait = out->op == MDGPU_MEMOP_WAIT32 || out->op == MDGPU_MEMOP_WAIT64;
	width = out->op == MDGPU_MEMOP_WRITE64 ||
		out->op == MDGPU_MEMOP_WAIT64 ? 8 : 4;
	if (wait && (flags & ~MDGPU_CU_WAIT_COND_MASK)) {
		mdgpu_cu_log("stream memory operations: wait flags %#x (only "
			     "the four conditions, no flush) are not "
			     "supported", flags);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (!wait && flags) {
		mdgpu_cu_log("stream memory operations: write flags %#x (no "
			     "NO_MEMORY_BARRIER) are not supported", flags);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (!addr || addr % width)
		return CUDA_ERROR_INVALID_VALUE;
	if (mdgpu_cu_memop_in_host(addr, width)) {
		mdgpu_cu_log("stream memory operations: %#llx is mapped host "
			     "memory, which is not supported",
			     (unsigned long long)addr);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (!mdgpu_cu_dev_range(addr, width))
		return CUDA_ERROR_INVALID_VALUE;
	out->addr = addr;
	out->value = width == 4 ? (uint32_t)value : value;
	out->flags = wait ? flags : 0;
	return CUDA_SUCCESS;
}

/* The first ABI minor with STREAM_MEMOP. */
#define MDGPU_CU_MEMOP_MINOR	10

bool mdgpu_cu_memop_offered(void)
{
	return (mdgpu_cu.info.abi_version & 0xffff) >= MDGPU_CU_MEMOP_MINOR;
}

/*
 * Under the lock: the stream argument resolved, its capture refused, the
 * daemon's minor checked.  *stream becomes the resolved stream.
 */
static CUresult mdgpu_cu_memop_stream(CUstream *stream)
{
	CUresult r = mdgpu_cu_stream_resolve(NULL, stream);

	if (r)
		return r;
	r = mdgpu_cu_capture_refuse(*stream, "a stream memory operation");
	if (r)
		return r;
	if (!mdgpu_cu_memop_offered()) {
		mdgpu_cu_log("stream memory operations: the daemon speaks ABI "
			     "1.%u (they need 1.%u)",
			     mdgpu_cu.info.abi_version & 0xffff,
			     MDGPU_CU_MEMOP_MINOR);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	return CUDA_SUCCESS;
}

/* Under the lock: sends n checked operations, in order, on stream. */
static CUresult mdgpu_cu_memop_send(CUstream stream,
				    const struct mdgpu_cu_memop *m, size_t n)
{
	uint32_t h = mdgpu_cu_stream_handle(stream);

	for (size_t i = 0; i < n; i++) {
		int ret = mdgpu_stream_memop(mdgpu_cu.g, h, m[i].op, m[i].addr,
					     m[i].value, m[i].flags);

		if (ret)
			return mdgpu_cu_error(ret);
	}
	return CUDA_SUCCESS;
}

/* One operation of the single-operation calls. */
static CUresult mdgpu_cu_memop_one(CUstream stream, unsigned type,
				   CUdeviceptr addr, uint64_t value,
				   unsigned flags)
{
	struct mdgpu_cu_memop m;
	CUcontext ctx;
	CUresult r = mdgpu_cu_enter_ctx(&ctx);

	if (r)
		return r;
	r = mdgpu_cu_memop_stream(&stream);
	if (!r)
		r = mdgpu_cu_memop_make(type, addr, value, flags, &m);
	if (!r)
		r = mdgpu_cu_memop_send(stream, &m, 1);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr,
					 cuuint32_t value, unsigned int flags)
{
	return mdgpu_cu_memop_one(stream, CU_STREAM_MEM_OP_WRITE_VALUE_32,
				  addr, value, flags);
}

CUresult CUDAAPI cuStreamWriteValue64_v2(CUstream stream, CUdeviceptr addr,
					 cuuint64_t value, unsigned int flags)
{
	return mdgpu_cu_memop_one(stream, CU_STREAM_MEM_OP_WRITE_VALUE_64,
				  addr, value, flags);
}

CUresult CUDAAPI cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr,
					cuuint32_t value, unsigned int flags)
{
	return mdgpu_cu_memop_one(stream, CU_STREAM_MEM_OP_WAIT_VALUE_32,
				  addr, value, flags);
}

CUresult CUDAAPI cuStreamWaitValue64_v2(CUstream stream, CUdeviceptr addr,
					cuuint64_t value, unsigned int flags)
{
	return mdgpu_cu_memop_one(stream, CU_STREAM_MEM_OP_WAIT_VALUE_64,
				  addr, value, flags);
}

/*
 * A batch: flags 0, 1..MDGPU_CU_BATCH_MAX operations (count 0 does
 * nothing), every one checked before the first is sent.
 */
CUresult CUDAAPI cuStreamBatchMemOp_v2(CUstream stream, unsigned int count,
				       CUstreamBatchMemOpParams *paramArray,
				       unsigned int flags)
{
	struct mdgpu_cu_memop m[MDGPU_CU_BATCH_MAX];
	CUcontext ctx;
	CUresult r;

	if (flags || count > MDGPU_CU_BATCH_MAX || (count && !paramArray))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	r = mdgpu_cu_memop_stream(&stream);
	for (unsigned int i = 0; !r && i < count; i++) {
		const CUstreamBatchMemOpParams *p = &paramArray[i];

		switch (p->operation) {
		case CU_STREAM_MEM_OP_WAIT_VALUE_32:
		case CU_STREAM_MEM_OP_WAIT_VALUE_64:
			r = mdgpu_cu_memop_make(p->operation,
						p->waitValue.address,
						p->waitValue.value64,
						p->waitValue.flags, &m[i]);
			break;
		case CU_STREAM_MEM_OP_WRITE_VALUE_32:
		case CU_STREAM_MEM_OP_WRITE_VALUE_64:
			r = mdgpu_cu_memop_make(p->operation,
						p->writeValue.address,
						p->writeValue.value64,
						p->writeValue.flags, &m[i]);
			break;
		default:
			r = mdgpu_cu_memop_make(p->operation, 0, 0, 0, &m[i]);
		}
	}
	if (!r)
		r = mdgpu_cu_memop_send(stream, m, count);
	mdgpu_cu_leave();
	return r;
}

/* The names of before CUDA 11.7 take the same arguments. */
MDGPU_CU_ALIAS(cuStreamWriteValue32, cuStreamWriteValue32_v2);
MDGPU_CU_ALIAS(cuStreamWriteValue64, cuStreamWriteValue64_v2);
MDGPU_CU_ALIAS(cuStreamWaitValue32, cuStreamWaitValue32_v2);
MDGPU_CU_ALIAS(cuStreamWaitValue64, cuStreamWaitValue64_v2);
MDGPU_CU_ALIAS(cuStreamBatchMemOp, cuStreamBatchMemOp_v2);

MDGPU_CU_PTSZ(cuStreamWriteValue32_v2_ptsz, cuStreamWriteValue32_v2,
	      (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int f),
	      cuStreamWriteValue32_v2(MDGPU_CU_PTS(s), a, v, f))
MDGPU_CU_PTSZ(cuStreamWriteValue32_ptsz, cuStreamWriteValue32_v2,
	      (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int f),
	      cuStreamWriteValue32_v2(MDGPU_CU_PTS(s), a, v, f))
MDGPU_CU_PTSZ(cuStreamWriteValue64_v2_ptsz, cuStreamWriteValue64_v2,
	      (CUstream s, CUdeviceptr a, cuuint64_t v, unsigned int f),
	      cuStreamWriteValue64_v2(MDGPU_CU_PTS(s), a, v, f))
MDGPU_CU_PTSZ(cuStreamWriteValue64_ptsz, cuStreamWriteValue64_v2,
	      (CUstream s, CUdeviceptr a, cuuint64_t v, unsigned int f),
	      cuStreamWriteValue64_v2(MDGPU_CU_PTS(s), a, v, f))
MDGPU_CU_PTSZ(cuStreamWaitValue32_v2_ptsz, cuStreamWaitValue32_v2,
	      (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int f),
	      cuStreamWaitValue32_v2(MDGPU_CU_PTS(s), a, v, f))
MDGPU_CU_PTSZ(cuStreamWaitValue32_ptsz, cuStreamWaitValue32_v2,
	      (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int f),
	      cuStreamWaitValue32_v2(MDGPU_CU_PTS(s), a, v, f))
MDGPU_CU_PTSZ(cuStreamWaitValue64_v2_ptsz, cuStreamWaitValue64_v2,
	      (CUstream s, CUdeviceptr a, cuuint64_t v, unsigned int f),
	      cuStreamWaitValue64_v2(MDGPU_CU_PTS(s), a, v, f))
MDGPU_CU_PTSZ(cuStreamWaitValue64_ptsz, cuStreamWaitValue64_v2,
	      (CUstream s, CUdeviceptr a, cuuint64_t v, unsigned int f),
	      cuStreamWaitValue64_v2(MDGPU_CU_PTS(s), a, v, f))
MDGPU_CU_PTSZ(cuStreamBatchMemOp_v2_ptsz, cuStreamBatchMemOp_v2,
	      (CUstream s, unsigned int n, CUstreamBatchMemOpParams *p,
	       unsigned int f),
	      cuStreamBatchMemOp_v2(MDGPU_CU_PTS(s), n, p, f))
MDGPU_CU_PTSZ(cuStreamBatchMemOp_ptsz, cuStreamBatchMemOp_v2,
	      (CUstream s, unsigned int n, CUstreamBatchMemOpParams *p,
	       unsigned int f),
	      cuStreamBatchMemOp_v2(MDGPU_CU_PTS(s), n, p, f))
