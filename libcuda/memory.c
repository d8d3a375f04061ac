// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: device memory, memsets, copies and host memory.
 *
 * Every device range the application may name is recorded (address,
 * size, owning context): allocations, and module globals that module.c
 * adds.  Frees, cuMemGetAddressRange, cuPointerGetAttribute and the
 * direction of a unified-address cuMemcpy are answered from the record,
 * and memsets and device-to-device copies are checked against it before
 * they are queued, so that a bad range fails at the call (as CUDA's does)
 * rather than at a later synchronisation.  The daemon checks every
 * address again and enforces the quota (OUT_OF_MEMORY past it).
 *
 * Streams: a memset or a device-to-device copy is queued on its stream
 * and the call returns.  A copy to or from host memory returns once done,
 * except an *Async one whose host side is zero-copy memory
 * (cuMemHostAlloc): that one is queued too, and the application leaves
 * the buffer alone until it has synchronised, as CUDA requires.  The
 * per-thread-default-stream variants (_ptds, _ptsz) are the same calls
 * on the calling thread's per-thread default stream where the plain ones
 * use the legacy stream (stream.c).
 *
 * Memory pools (mempool.c) allocate and free through the same paths
 * (mdgpu_cu_mem_alloc, mdgpu_cu_mem_free); their allocations carry
 * their pool, which the pool's accounting follows whichever call frees
 * them (cuMemFreeAsync, cuMemFree, their context's destruction).
 *
 * Capture: memsets and copies are handed to mdgpu_cu_submit() (graph.c),
 * which queues them, or makes them nodes of a capturing stream's graph.
 * Allocating, freeing and registering memory are potentially unsafe
 * calls during a capture (mdgpu_cu_capture_unsafe()).
 *
 * Unified addressing: device addresses are the worker's, host addresses
 * this process's, so a number could name both.  cuMemcpy and
 * cuPointerGetAttribute treat a pointer inside a recorded device range as
 * device memory only when no host page is mapped at that address; if one
 * is, the call fails with CUDA_ERROR_NOT_SUPPORTED (logged) rather than
 * guess.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "graph.h"

/* Pitch alignment of cuMemAllocPitch: any pitch >= the width is valid
 * for cuMemcpy2D; 512 keeps rows aligned for every access width. */
static const uint64_t mdgpu_cu_pitch_align = 512;

static uint64_t mdgpu_cu_next_id = 1;

struct mdgpu_cu_alloc *mdgpu_cu_alloc_add(CUcontext ctx, mdgpu_devptr addr,
					  uint64_t size, bool global)
{
	struct mdgpu_cu_alloc *a = calloc(1, sizeof(*a));

	if (!a || mdgpu_cu_set_add(&mdgpu_cu.allocs, a)) {
		free(a);
		return NULL;
	}
	a->ctx = ctx;
	a->addr = addr;
	a->size = size;
	a->id = mdgpu_cu_next_id++;
	a->global = global;
	return a;
}

void mdgpu_cu_alloc_forget(struct mdgpu_cu_alloc *a)
{
	mdgpu_cu_set_del(&mdgpu_cu.allocs, a);
	free(a);
}

static struct mdgpu_cu_alloc *mdgpu_cu_alloc_find(mdgpu_devptr addr,
						  bool exact)
{
	for (size_t i = 0; i < mdgpu_cu.allocs.n; i++) {
		struct mdgpu_cu_alloc *a = mdgpu_cu.allocs.v[i];

		if (exact ? a->addr == addr :
		    addr >= a->addr && addr - a->addr < a->size)
			return a;
	}
	return NULL;
}

struct mdgpu_cu_alloc *mdgpu_cu_alloc_range(mdgpu_devptr addr, uint64_t len)
{
	struct mdgpu_cu_alloc *a = mdgpu_cu_alloc_find(addr, false);

	return a && len && len <= a->size - (addr - a->addr) ? a : NULL;
}

/*
 * Under the lock: is [addr, addr + len) device memory the program may
 * name: in an allocation (or module global), or in registered shared
 * host memory by its device address (hostreg.c), which the daemon
 * records as well.
 */
bool mdgpu_cu_dev_range(mdgpu_devptr addr, uint64_t len)
{
	if (mdgpu_cu_alloc_range(addr, len))
		return true;
	for (size_t i = 0; len && i < mdgpu_cu.hosts.n; i++) {
		const struct mdgpu_cu_host *h = mdgpu_cu.hosts.v[i];
		uint64_t dev = h->zc_dev + ((uintptr_t)h->ptr - h->zc_base);

		if (h->zc_dev && addr >= dev && addr - dev < h->size &&
		    len <= h->size - (addr - dev))
			return true;
	}
	return false;
}

static void mdgpu_cu_alloc_drop(struct mdgpu_cu_alloc *a)
{
	mdgpu_mem_free(mdgpu_cu.g, a->addr);
	if (a->pool)
		mdgpu_cu_pool_alloc_gone(a);
	mdgpu_cu_alloc_forget(a);
}

static void mdgpu_cu_host_drop(struct mdgpu_cu_host *h)
{
	if (!h->registered)
		mdgpu_host_free(mdgpu_cu.g, h->ptr);
	else if (h->zc_dev)
		mdgpu_host_unregister(mdgpu_cu.g, h->zc_dev);
	mdgpu_cu_set_del(&mdgpu_cu.hosts, h);
	free(h);
}

void mdgpu_cu_mem_release(CUcontext ctx)
{
	for (size_t i = mdgpu_cu.allocs.n; i-- > 0;) {
		struct mdgpu_cu_alloc *a = mdgpu_cu.allocs.v[i];

		if (a->ctx == ctx && !a->global)
			mdgpu_cu_alloc_drop(a);
	}
	for (size_t i = mdgpu_cu.hosts.n; i-- > 0;) {
		struct mdgpu_cu_host *h = mdgpu_cu.hosts.v[i];

		if (h->ctx == ctx)
			mdgpu_cu_host_drop(h);
	}
}

CUresult mdgpu_cu_mem_alloc(CUcontext ctx, uint64_t size,
			    struct mdgpu_cu_alloc **out)
{
	struct mdgpu_cu_alloc *a;
	mdgpu_devptr addr;
	int ret;

	ret = mdgpu_mem_alloc(mdgpu_cu.g, size, &addr);
	if (ret)
		return mdgpu_cu_error(ret);
	a = mdgpu_cu_alloc_add(ctx, addr, size, false);
	if (!a) {
		mdgpu_mem_free(mdgpu_cu.g, addr);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = a;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct mdgpu_cu_alloc *a;
	CUcontext ctx;
	CUresult r;

	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	r = mdgpu_cu_capture_unsafe("cuMemAlloc");
	if (!r)
		r = mdgpu_cu_mem_alloc(ctx, bytesize, &a);
	if (!r)
		*dptr = (CUdeviceptr)a->addr;
	mdgpu_cu_leave();
	return r;
}

/*
 * Rows of `width` bytes, `pitch` apart.  Elements of 4, 8 or 16 bytes as
 * CUDA allows; rows are allocated whole.
 */
CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch,
				    size_t WidthInBytes, size_t Height,
				    unsigned int ElementSizeBytes)
{
	uint64_t pitch, bytes;
	CUresult r;

	if (!dptr || !pPitch || !WidthInBytes || !Height ||
	    (ElementSizeBytes != 4 && ElementSizeBytes != 8 &&
	     ElementSizeBytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	if (WidthInBytes > UINT64_MAX - mdgpu_cu_pitch_align)
		return CUDA_ERROR_INVALID_VALUE;
	pitch = (WidthInBytes + mdgpu_cu_pitch_align - 1) &
		~(mdgpu_cu_pitch_align - 1);
	if (__builtin_mul_overflow(pitch, (uint64_t)Height, &bytes) ||
	    bytes > SIZE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuMemAlloc_v2(dptr, (size_t)bytes);
	if (!r)
		*pPitch = (size_t)pitch;
	return r;
}

CUresult mdgpu_cu_mem_free(mdgpu_devptr addr)
{
	struct mdgpu_cu_alloc *a = mdgpu_cu_alloc_find(addr, true);
	int ret;

	if (!a || a->global)
		return CUDA_ERROR_INVALID_VALUE;
	/* Queued work of any stream may still use it. */
	ret = mdgpu_synchronize(mdgpu_cu.g);
	mdgpu_cu_alloc_drop(a);
	return ret ? mdgpu_cu_error(ret) : CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	struct mdgpu_cu_alloc *a;
	CUcontext ctx;
	CUresult r;

	/*
	 * Freeing 0 does nothing and succeeds once the driver is
	 * initialised, with or without a current context, as with the real
	 * driver (measured on the H100, driver 580): the CUDA runtime's
	 * cudaFree(NULL), with which cuBLAS and cuFFT make sure a context
	 * exists, reaches here and fails their initialisation if refused.
	 */
	if (!dptr) {
		r = mdgpu_cu_enter();
		if (!r)
			mdgpu_cu_leave();
		return r;
	}
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	a = mdgpu_cu_alloc_find(dptr, true);
	if (!a || a->global)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		r = mdgpu_cu_capture_unsafe("cuMemFree");
	if (!r)
		r = mdgpu_cu_mem_free(dptr);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	uint64_t used = 0, quota = mdgpu_cu.info.fb_quota;
	CUcontext ctx;
	CUresult r;
	int ret;

	if (!free_bytes || !total)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	ret = mdgpu_query(mdgpu_cu.g, MDGPU_QUERY_FB_USED, &used);
	if (ret) {
		r = mdgpu_cu_error(ret);
	} else {
		*total = (size_t)quota;
		*free_bytes = used < quota ? (size_t)(quota - used) : 0;
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
					 CUdeviceptr dptr)
{
	struct mdgpu_cu_alloc *a;
	CUcontext ctx;
	CUresult r = mdgpu_cu_enter_ctx(&ctx);

	if (r)
		return r;
	a = mdgpu_cu_alloc_find(dptr, false);
	if (!a) {
		r = CUDA_ERROR_NOT_FOUND;
	} else {
		if (pbase)
			*pbase = a->addr;
		if (psize)
			*psize = (size_t)a->size;
	}
	mdgpu_cu_leave();
	return r;
}

/* ---------------------------------------------------------------- */
/* Memsets.                                                         */

/*
 * `rows` rows of n elements of `width` bytes of `value`, `pitch` bytes
 * apart (rows 1: pitch unused), queued on stream.  The whole area is
 * checked first, so a refused memset writes nothing.
 */
static CUresult mdgpu_cu_memset(CUdeviceptr dst, size_t pitch, uint32_t value,
				unsigned width, size_t n, size_t rows,
				CUstream stream)
{
	struct mdgpu_cu_op op = { .kind = MDGPU_CU_OP_MEMSET };
	uint64_t bytes, span = 0;
	CUcontext ctx;
	CUresult r;

	if (dst % width || (rows > 1 && pitch % width))
		return CUDA_ERROR_INVALID_VALUE;
	if (__builtin_mul_overflow((uint64_t)n, (uint64_t)width, &bytes) ||
	    (rows > 1 && pitch < bytes))
		return CUDA_ERROR_INVALID_VALUE;
	if (rows && (__builtin_mul_overflow((uint64_t)(rows - 1),
					    (uint64_t)pitch, &span) ||
		     __builtin_add_overflow(span, bytes, &span)))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	r = mdgpu_cu_stream_resolve(NULL, &stream);
	if (r || !bytes || !rows)
		goto out;
	if (!mdgpu_cu_dev_range(dst, span)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	op.u.memset.dst = dst;
	op.u.memset.pitch = pitch;
	op.u.memset.bytes = bytes;
	op.u.memset.rows = rows;
	op.u.memset.value = value;
	op.u.memset.width = width;
	r = mdgpu_cu_submit(stream, &op);
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc,
			       size_t N)
{
	return mdgpu_cu_memset(dstDevice, 0, uc, 1, N, 1, NULL);
}

CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us,
				size_t N)
{
	return mdgpu_cu_memset(dstDevice, 0, us, 2, N, 1, NULL);
}

CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui,
				size_t N)
{
	return mdgpu_cu_memset(dstDevice, 0, ui, 4, N, 1, NULL);
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc,
				 size_t N, CUstream hStream)
{
	return mdgpu_cu_memset(dstDevice, 0, uc, 1, N, 1, hStream);
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us,
				  size_t N, CUstream hStream)
{
	return mdgpu_cu_memset(dstDevice, 0, us, 2, N, 1, hStream);
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui,
				  size_t N, CUstream hStream)
{
	return mdgpu_cu_memset(dstDevice, 0, ui, 4, N, 1, hStream);
}

CUresult CUDAAPI cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch,
				 unsigned char uc, size_t Width, size_t Height)
{
	return mdgpu_cu_memset(dstDevice, dstPitch, uc, 1, Width, Height,
			       NULL);
}

CUresult CUDAAPI cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch,
				  unsigned short us, size_t Width,
				  size_t Height)
{
	return mdgpu_cu_memset(dstDevice, dstPitch, us, 2, Width, Height,
			       NULL);
}

CUresult CUDAAPI cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch,
				  unsigned int ui, size_t Width, size_t Height)
{
	return mdgpu_cu_memset(dstDevice, dstPitch, ui, 4, Width, Height,
			       NULL);
}

CUresult CUDAAPI cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch,
				   unsigned char uc, size_t Width,
				   size_t Height, CUstream hStream)
{
	return mdgpu_cu_memset(dstDevice, dstPitch, uc, 1, Width, Height,
			       hStream);
}

CUresult CUDAAPI cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch,
				    unsigned short us, size_t Width,
				    size_t Height, CUstream hStream)
{
	return mdgpu_cu_memset(dstDevice, dstPitch, us, 2, Width, Height,
			       hStream);
}

CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch,
				    unsigned int ui, size_t Width,
				    size_t Height, CUstream hStream)
{
	return mdgpu_cu_memset(dstDevice, dstPitch, ui, 4, Width, Height,
			       hStream);
}

/* ---------------------------------------------------------------- */
/* Copies.                                                          */

/* One copy of rows rows of width > 0 bytes on a stream (graph.h): queued,
 * or captured.  The caller holds the lock and resolved the stream. */
static CUresult mdgpu_cu_copy_op(enum mdgpu_cu_dir dir, uintptr_t dst,
				 uintptr_t src, uint64_t dpitch,
				 uint64_t spitch, uint64_t width,
				 uint64_t rows, CUstream stream, bool async)
{
	struct mdgpu_cu_op op = { .kind = MDGPU_CU_OP_COPY };

	op.u.copy.dir = dir;
	op.u.copy.dst = dst;
	op.u.copy.src = src;
	op.u.copy.dpitch = dpitch;
	op.u.copy.spitch = spitch;
	op.u.copy.width = width;
	op.u.copy.rows = rows;
	op.u.copy.async = async;
	return mdgpu_cu_submit(stream, &op);
}

/* Device sides are checked against the record first: a bad range fails
 * here, not at a later synchronisation. */
static CUresult mdgpu_cu_copy_check(enum mdgpu_cu_dir dir, CUdeviceptr ddst,
				    CUdeviceptr dsrc, size_t n)
{
	if (dir != MDGPU_CU_DTOH && !mdgpu_cu_dev_range(ddst, n))
		return CUDA_ERROR_INVALID_VALUE;
	if (dir != MDGPU_CU_HTOD && !mdgpu_cu_dev_range(dsrc, n))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static CUresult mdgpu_cu_copy(enum mdgpu_cu_dir dir, CUdeviceptr ddst,
			      void *hdst, CUdeviceptr dsrc, const void *hsrc,
			      size_t n, CUstream stream, bool async)
{
	CUcontext ctx;
	CUresult r;

	if (n && ((dir == MDGPU_CU_HTOD && !hsrc) ||
		  (dir == MDGPU_CU_DTOH && !hdst)))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	r = mdgpu_cu_stream_resolve(NULL, &stream);
	if (r || !n)
		goto out;
	r = mdgpu_cu_copy_check(dir, ddst, dsrc, n);
	if (r)
		goto out;
	r = mdgpu_cu_copy_op(dir, dir == MDGPU_CU_DTOH ? (uintptr_t)hdst : ddst,
			     dir == MDGPU_CU_HTOD ? (uintptr_t)hsrc : dsrc,
			     n, n, n, 1, stream, async);
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost,
				 size_t ByteCount)
{
	return mdgpu_cu_copy(MDGPU_CU_HTOD, dstDevice, NULL, 0, srcHost,
			     ByteCount, NULL, false);
}

CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice,
				 size_t ByteCount)
{
	return mdgpu_cu_copy(MDGPU_CU_DTOH, 0, dstHost, srcDevice, NULL,
			     ByteCount, NULL, false);
}

CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
				 size_t ByteCount)
{
	return mdgpu_cu_copy(MDGPU_CU_DTOD, dstDevice, NULL, srcDevice, NULL,
			     ByteCount, NULL, false);
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice,
				      const void *srcHost, size_t ByteCount,
				      CUstream hStream)
{
	return mdgpu_cu_copy(MDGPU_CU_HTOD, dstDevice, NULL, 0, srcHost,
			     ByteCount, hStream, true);
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice,
				      size_t ByteCount, CUstream hStream)
{
	return mdgpu_cu_copy(MDGPU_CU_DTOH, 0, dstHost, srcDevice, NULL,
			     ByteCount, hStream, true);
}

CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice,
				      CUdeviceptr srcDevice, size_t ByteCount,
				      CUstream hStream)
{
	return mdgpu_cu_copy(MDGPU_CU_DTOD, dstDevice, NULL, srcDevice, NULL,
			     ByteCount, hStream, true);
}

/* Is a page of this process mapped at p. */
static bool mdgpu_cu_host_mapped(uintptr_t p)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t page = p & ~((uintptr_t)pg - 1);

	return msync((void *)page, 1, MS_ASYNC) == 0 || errno != ENOMEM;
}

/*
 * Under the lock: is p device memory (1), host memory (0), or both
 * possible (-1, see the head of this file).
 */
static int mdgpu_cu_classify(CUdeviceptr p)
{
	if (!mdgpu_cu_alloc_find(p, false))
		return 0;
	if (mdgpu_cu_host_mapped((uintptr_t)p)) {
		mdgpu_cu_log("pointer %#llx is both a device address and a "
			     "mapped host address: refused",
			     (unsigned long long)p);
		return -1;
	}
	return 1;
}

/* Host to host, in stream order: after the stream's earlier work. */
static CUresult mdgpu_cu_copy_host(void *dst, const void *src, size_t n,
				   CUstream stream)
{
	CUcontext ctx;
	CUresult r;
	int ret;

	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	r = mdgpu_cu_stream_resolve(NULL, &stream);
	/* No host work in a graph: on a capturing stream it is refused. */
	if (!r)
		r = mdgpu_cu_capture_refuse(stream, "a host-to-host copy");
	if (!r) {
		ret = mdgpu_stream_synchronize(mdgpu_cu.g,
					       mdgpu_cu_stream_handle(stream));
		if (ret)
			r = mdgpu_cu_error(ret);
	}
	mdgpu_cu_leave();
	if (!r && n)
		memmove(dst, src, n);
	return r;
}

static CUresult mdgpu_cu_copy_unified(CUdeviceptr dst, CUdeviceptr src,
				      size_t n, CUstream stream, bool async)
{
	enum mdgpu_cu_dir dir;
	int d, s;
	CUresult r;

	if (n && (!dst || !src))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	d = mdgpu_cu_classify(dst);
	s = mdgpu_cu_classify(src);
	mdgpu_cu_leave();
	if (d < 0 || s < 0)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (d && s)
		dir = MDGPU_CU_DTOD;
	else if (d)
		dir = MDGPU_CU_HTOD;
	else if (s)
		dir = MDGPU_CU_DTOH;
	else	/* host to host: CUDA copies it; so does this library */
		return mdgpu_cu_copy_host((void *)(uintptr_t)dst,
					  (const void *)(uintptr_t)src, n,
					  stream);
	return mdgpu_cu_copy(dir, dst, (void *)(uintptr_t)dst, src,
			     (const void *)(uintptr_t)src, n, stream, async);
}

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return mdgpu_cu_copy_unified(dst, src, ByteCount, NULL, false);
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src,
			       size_t ByteCount, CUstream hStream)
{
	return mdgpu_cu_copy_unified(dst, src, ByteCount, hStream, true);
}

/*
 * 2D copies: host and device sides (UNIFIED resolved as cuMemcpy does),
 * arrays not supported.  Contiguous rows are one copy; otherwise one copy
 * per row, each bounds-checked first.
 */
static CUresult mdgpu_cu_side(CUmemorytype t, const void *host,
			      CUdeviceptr dev, uint64_t off, bool *is_dev,
			      uintptr_t *base)
{
	int c;

	switch (t) {
	case CU_MEMORYTYPE_HOST:
		if (!host)
			return CUDA_ERROR_INVALID_VALUE;
		*is_dev = false;
		*base = (uintptr_t)host;
		break;
	case CU_MEMORYTYPE_DEVICE:
		*is_dev = true;
		*base = (uintptr_t)dev;
		break;
	case CU_MEMORYTYPE_UNIFIED:
		c = mdgpu_cu_classify(dev);
		if (c < 0)
			return CUDA_ERROR_NOT_SUPPORTED;
		*is_dev = c;
		*base = (uintptr_t)dev;
		break;
	case CU_MEMORYTYPE_ARRAY:
		mdgpu_cu_log("cuMemcpy2D: CUDA arrays are not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (*base > UINTPTR_MAX - off)
		return CUDA_ERROR_INVALID_VALUE;
	*base += (uintptr_t)off;
	return CUDA_SUCCESS;
}

/* x + y * pitch, and the last byte of `rows` rows of `width` from it. */
static bool mdgpu_cu_2d_span(size_t x, size_t y, size_t pitch, size_t width,
			     size_t rows, uint64_t *off, uint64_t *span)
{
	uint64_t last;

	if (rows > 1 && pitch < width)
		return false;
	if (__builtin_mul_overflow((uint64_t)y, (uint64_t)pitch, off) ||
	    __builtin_add_overflow(*off, (uint64_t)x, off))
		return false;
	if (__builtin_mul_overflow((uint64_t)(rows - 1), (uint64_t)pitch,
				   &last) ||
	    __builtin_add_overflow(last, (uint64_t)width, span))
		return false;
	return true;
}

static CUresult mdgpu_cu_copy2d(const CUDA_MEMCPY2D *p, CUstream stream,
				bool async)
{
	uint64_t soff, doff, sspan, dspan;
	uintptr_t sbase, dbase;
	enum mdgpu_cu_dir dir;
	bool sdev, ddev;
	size_t rows, w;
	CUcontext ctx;
	CUresult r;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	w = p->WidthInBytes;
	rows = p->Height;
	if (!w || !rows)
		return CUDA_SUCCESS;
	if (!mdgpu_cu_2d_span(p->srcXInBytes, p->srcY, p->srcPitch, w, rows,
			      &soff, &sspan) ||
	    !mdgpu_cu_2d_span(p->dstXInBytes, p->dstY, p->dstPitch, w, rows,
			      &doff, &dspan))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	r = mdgpu_cu_stream_resolve(NULL, &stream);
	if (!r)
		r = mdgpu_cu_side(p->srcMemoryType, p->srcHost, p->srcDevice,
				  soff, &sdev, &sbase);
	if (!r)
		r = mdgpu_cu_side(p->dstMemoryType, p->dstHost, p->dstDevice,
				  doff, &ddev, &dbase);
	if (r)
		goto out;
	if (!sdev && !ddev) {
		r = CUDA_ERROR_NOT_SUPPORTED;	/* host to host 2D */
		mdgpu_cu_log("cuMemcpy2D: host to host is not supported");
		goto out;
	}
	dir = sdev && ddev ? MDGPU_CU_DTOD : ddev ? MDGPU_CU_HTOD :
						    MDGPU_CU_DTOH;
	if ((sdev && !mdgpu_cu_alloc_range(sbase, sspan)) ||
	    (ddev && !mdgpu_cu_alloc_range(dbase, dspan))) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	r = mdgpu_cu_copy_op(dir, dbase, sbase, p->dstPitch, p->srcPitch, w,
			     rows, stream, async);
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy)
{
	return mdgpu_cu_copy2d(pCopy, NULL, false);
}

CUresult CUDAAPI cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
	return mdgpu_cu_copy2d(pCopy, NULL, false);
}

CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy,
				    CUstream hStream)
{
	return mdgpu_cu_copy2d(pCopy, hStream, true);
}

/* The per-thread variants.  The synchronous ones (_ptds) run as the plain
 * ones do, on the per-thread default stream. */
MDGPU_CU_PTSZ(cuMemsetD8_v2_ptds, cuMemsetD8_v2,
	      (CUdeviceptr d, unsigned char uc, size_t N),
	      mdgpu_cu_memset(d, 0, uc, 1, N, 1, CU_STREAM_PER_THREAD))
MDGPU_CU_PTSZ(cuMemsetD16_v2_ptds, cuMemsetD16_v2,
	      (CUdeviceptr d, unsigned short us, size_t N),
	      mdgpu_cu_memset(d, 0, us, 2, N, 1, CU_STREAM_PER_THREAD))
MDGPU_CU_PTSZ(cuMemsetD32_v2_ptds, cuMemsetD32_v2,
	      (CUdeviceptr d, unsigned int ui, size_t N),
	      mdgpu_cu_memset(d, 0, ui, 4, N, 1, CU_STREAM_PER_THREAD))
MDGPU_CU_PTSZ(cuMemsetD2D8_v2_ptds, cuMemsetD2D8_v2,
	      (CUdeviceptr d, size_t pitch, unsigned char uc, size_t w,
	       size_t h),
	      mdgpu_cu_memset(d, pitch, uc, 1, w, h, CU_STREAM_PER_THREAD))
MDGPU_CU_PTSZ(cuMemsetD2D16_v2_ptds, cuMemsetD2D16_v2,
	      (CUdeviceptr d, size_t pitch, unsigned short us, size_t w,
	       size_t h),
	      mdgpu_cu_memset(d, pitch, us, 2, w, h, CU_STREAM_PER_THREAD))
MDGPU_CU_PTSZ(cuMemsetD2D32_v2_ptds, cuMemsetD2D32_v2,
	      (CUdeviceptr d, size_t pitch, unsigned int ui, size_t w,
	       size_t h),
	      mdgpu_cu_memset(d, pitch, ui, 4, w, h, CU_STREAM_PER_THREAD))
MDGPU_CU_PTSZ(cuMemsetD8Async_ptsz, cuMemsetD8Async,
	      (CUdeviceptr d, unsigned char uc, size_t N, CUstream s),
	      cuMemsetD8Async(d, uc, N, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemsetD16Async_ptsz, cuMemsetD16Async,
	      (CUdeviceptr d, unsigned short us, size_t N, CUstream s),
	      cuMemsetD16Async(d, us, N, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemsetD32Async_ptsz, cuMemsetD32Async,
	      (CUdeviceptr d, unsigned int ui, size_t N, CUstream s),
	      cuMemsetD32Async(d, ui, N, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemsetD2D8Async_ptsz, cuMemsetD2D8Async,
	      (CUdeviceptr d, size_t pitch, unsigned char uc, size_t w,
	       size_t h, CUstream s),
	      cuMemsetD2D8Async(d, pitch, uc, w, h, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemsetD2D16Async_ptsz, cuMemsetD2D16Async,
	      (CUdeviceptr d, size_t pitch, unsigned short us, size_t w,
	       size_t h, CUstream s),
	      cuMemsetD2D16Async(d, pitch, us, w, h, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemsetD2D32Async_ptsz, cuMemsetD2D32Async,
	      (CUdeviceptr d, size_t pitch, unsigned int ui, size_t w,
	       size_t h, CUstream s),
	      cuMemsetD2D32Async(d, pitch, ui, w, h, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2,
	      (CUdeviceptr dst, const void *src, size_t n),
	      mdgpu_cu_copy(MDGPU_CU_HTOD, dst, NULL, 0, src, n,
			    CU_STREAM_PER_THREAD, false))
MDGPU_CU_PTSZ(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2,
	      (void *dst, CUdeviceptr src, size_t n),
	      mdgpu_cu_copy(MDGPU_CU_DTOH, 0, dst, src, NULL, n,
			    CU_STREAM_PER_THREAD, false))
MDGPU_CU_PTSZ(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2,
	      (CUdeviceptr dst, CUdeviceptr src, size_t n),
	      mdgpu_cu_copy(MDGPU_CU_DTOD, dst, NULL, src, NULL, n,
			    CU_STREAM_PER_THREAD, false))
MDGPU_CU_PTSZ(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2,
	      (CUdeviceptr dst, const void *src, size_t n, CUstream s),
	      cuMemcpyHtoDAsync_v2(dst, src, n, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2,
	      (void *dst, CUdeviceptr src, size_t n, CUstream s),
	      cuMemcpyDtoHAsync_v2(dst, src, n, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2,
	      (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s),
	      cuMemcpyDtoDAsync_v2(dst, src, n, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemcpy_ptds, cuMemcpy,
	      (CUdeviceptr dst, CUdeviceptr src, size_t n),
	      mdgpu_cu_copy_unified(dst, src, n, CU_STREAM_PER_THREAD, false))
MDGPU_CU_PTSZ(cuMemcpyAsync_ptsz, cuMemcpyAsync,
	      (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s),
	      cuMemcpyAsync(dst, src, n, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemcpy2D_v2_ptds, cuMemcpy2D_v2, (const CUDA_MEMCPY2D *p),
	      mdgpu_cu_copy2d(p, CU_STREAM_PER_THREAD, false))
MDGPU_CU_PTSZ(cuMemcpy2DUnaligned_v2_ptds, cuMemcpy2DUnaligned_v2,
	      (const CUDA_MEMCPY2D *p),
	      mdgpu_cu_copy2d(p, CU_STREAM_PER_THREAD, false))
MDGPU_CU_PTSZ(cuMemcpy2DAsync_v2_ptsz, cuMemcpy2DAsync_v2,
	      (const CUDA_MEMCPY2D *p, CUstream s),
	      cuMemcpy2DAsync_v2(p, MDGPU_CU_PTS(s)))

/* ---------------------------------------------------------------- */
/* Host memory.                                                     */

/*
 * Zero-copy host memory: carved from the area opened at cuInit
 * (MDGPU_HOST_MIB).  Copies with their host side in it take one command
 * and no staging, and the *Async ones are queued.  Kernels reach it
 * (DEVICEMAP, cuMemHostGetDevicePointer) where the daemon maps the
 * aperture into the GPU (QUERY APERTURE_DEVPTR).
 */
CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize,
				unsigned int Flags)
{
	const unsigned known = CU_MEMHOSTALLOC_PORTABLE |
			       CU_MEMHOSTALLOC_DEVICEMAP |
			       CU_MEMHOSTALLOC_WRITECOMBINED;
	struct mdgpu_cu_host *h;
	CUcontext ctx;
	CUresult r;
	int ret;

	if (!pp || !bytesize || (Flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	r = mdgpu_cu_capture_unsafe("cuMemHostAlloc");
	if (r)
		goto out;
	h = calloc(1, sizeof(*h));
	if (!h || mdgpu_cu_set_add(&mdgpu_cu.hosts, h)) {
		free(h);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	ret = mdgpu_host_alloc(mdgpu_cu.g, bytesize, &h->ptr);
	/* Size is not 0: libmdgpu's -EINVAL is "larger than the area". */
	r = ret == -EINVAL ? CUDA_ERROR_OUT_OF_MEMORY : mdgpu_cu_result(ret);
	if (r) {
		mdgpu_cu_set_del(&mdgpu_cu.hosts, h);
		free(h);
		goto out;
	}
	h->ctx = ctx;
	h->size = bytesize;
	h->flags = Flags;
	*pp = h->ptr;
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

/* Under the lock: the host record holding p, if any. */
static struct mdgpu_cu_host *mdgpu_cu_host_find(const void *p, bool exact)
{
	uintptr_t a = (uintptr_t)p;

	for (size_t i = 0; p && i < mdgpu_cu.hosts.n; i++) {
		struct mdgpu_cu_host *h = mdgpu_cu.hosts.v[i];
		uintptr_t b = (uintptr_t)h->ptr;

		if (exact ? a == b : a >= b && a - b < h->size)
			return h;
	}
	return NULL;
}

bool mdgpu_cu_host_zero_copy(uintptr_t p, uint64_t len)
{
	struct mdgpu_cu_host *h = mdgpu_cu_host_find((const void *)p, false);

	return h && (!h->registered || h->zc_dev) && len &&
	       len <= h->size - (p - (uintptr_t)h->ptr);
}

/*
 * Under the lock: the device address of [p, p + len) where it lies in
 * registered memory the GPU reaches itself (hostreg.c), else 0: copies
 * run as device-to-device copies there.
 */
uint64_t mdgpu_cu_host_reg_dev(uintptr_t p, uint64_t len)
{
	struct mdgpu_cu_host *h = mdgpu_cu_host_find((const void *)p, false);

	if (!h || !h->zc_dev || !len ||
	    len > h->size - (p - (uintptr_t)h->ptr))
		return 0;
	return h->zc_dev + (p - h->zc_base);
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
	struct mdgpu_cu_host *h;
	CUcontext ctx;
	CUresult r;
	int ret;

	/* NULL: nothing to do, success (the real driver's answer). */
	if (!p) {
		r = mdgpu_cu_enter();
		if (!r)
			mdgpu_cu_leave();
		return r;
	}
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	h = mdgpu_cu_host_find(p, true);
	if (!h || h->registered) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (!(r = mdgpu_cu_capture_unsafe("cuMemFreeHost"))) {
		/* Queued copies may still use it. */
		ret = mdgpu_synchronize(mdgpu_cu.g);
		r = ret ? mdgpu_cu_error(ret) : CUDA_SUCCESS;
		mdgpu_cu_host_drop(h);
	}
	mdgpu_cu_leave();
	return r;
}

/*
 * Registered host memory that is shared memory (a memfd, /dev/shm, a
 * hugetlbfs file) is registered with the daemon (hostreg.c): kernels
 * reach it, copies from and to it run on the GPU.  Other memory
 * (private: malloc, anonymous mappings) cannot be shared with the
 * daemon's worker: it is recorded, copies are staged through the
 * aperture (correct, not zero-copy), and DEVICEMAP or IOMEMORY is
 * refused (NOT_SUPPORTED, logged), since kernels could not reach it.
 */
CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize,
				      unsigned int Flags)
{
	const unsigned known = CU_MEMHOSTREGISTER_PORTABLE |
			       CU_MEMHOSTREGISTER_DEVICEMAP |
			       CU_MEMHOSTREGISTER_IOMEMORY |
			       CU_MEMHOSTREGISTER_READ_ONLY;
	struct mdgpu_cu_host *h;
	CUcontext ctx;
	CUresult r;
	int ret;

	if (!p || !bytesize || (Flags & ~known) ||
	    (uintptr_t)p > UINTPTR_MAX - bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (Flags & CU_MEMHOSTREGISTER_IOMEMORY) {
		mdgpu_cu_log("cuMemHostRegister: I/O memory registration is "
			     "not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	r = mdgpu_cu_capture_unsafe("cuMemHostRegister");
	if (r)
		goto out;
	for (size_t i = 0; i < mdgpu_cu.hosts.n; i++) {
		struct mdgpu_cu_host *o = mdgpu_cu.hosts.v[i];
		uintptr_t a = (uintptr_t)p, b = (uintptr_t)o->ptr;

		if (a < b + o->size && b < a + bytesize) {
			r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
			goto out;
		}
	}
	h = calloc(1, sizeof(*h));
	if (!h || mdgpu_cu_set_add(&mdgpu_cu.hosts, h)) {
		free(h);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	ret = mdgpu_cu_host_share(p, bytesize,
				  Flags & CU_MEMHOSTREGISTER_READ_ONLY,
				  &h->zc_base, &h->zc_dev);
	if (ret && (Flags & CU_MEMHOSTREGISTER_DEVICEMAP)) {
		mdgpu_cu_log("cuMemHostRegister: %p (%zu bytes) cannot be "
			     "mapped for the GPU: %s", p, bytesize,
			     ret == -EINVAL ? "not shared memory" :
					      strerror(-ret));
		mdgpu_cu_set_del(&mdgpu_cu.hosts, h);
		free(h);
		r = ret == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY :
				     CUDA_ERROR_NOT_SUPPORTED;
		goto out;
	}
	if (ret)
		h->zc_dev = 0;
	h->ctx = ctx;
	h->ptr = p;
	h->size = bytesize;
	h->flags = Flags;
	h->registered = true;
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemHostUnregister(void *p)
{
	struct mdgpu_cu_host *h;
	CUcontext ctx;
	CUresult r = mdgpu_cu_enter_ctx(&ctx);

	if (r)
		return r;
	h = mdgpu_cu_host_find(p, true);
	if (!h || !h->registered) {
		r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
	} else if (!(r = mdgpu_cu_capture_unsafe("cuMemHostUnregister"))) {
		/* Queued work may still reach shared pages. */
		if (h->zc_dev) {
			int ret = mdgpu_synchronize(mdgpu_cu.g);

			r = ret ? mdgpu_cu_error(ret) : CUDA_SUCCESS;
		}
		mdgpu_cu_host_drop(h);
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
	struct mdgpu_cu_host *h;
	CUcontext ctx;
	CUresult r;

	if (!pFlags)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	h = mdgpu_cu_host_find(p, false);
	if (!h || h->registered)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*pFlags = h->flags;
	mdgpu_cu_leave();
	return r;
}

/* Under the lock: the device address of zero-copy host memory at p. */
static CUresult mdgpu_cu_host_devptr(const struct mdgpu_cu_host *h,
				     const void *p, CUdeviceptr *out)
{
	uint64_t off;

	if (h->registered && h->zc_dev) {
		*out = (CUdeviceptr)(h->zc_dev + ((uintptr_t)p - h->zc_base));
		return CUDA_SUCCESS;
	}
	if (h->registered || !mdgpu_cu.aperture_devptr)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (mdgpu_host_aperture_offset(mdgpu_cu.g, p, &off) ||
	    off >= mdgpu_cu.aperture_mapped)
		return CUDA_ERROR_NOT_SUPPORTED;
	*out = (CUdeviceptr)(mdgpu_cu.aperture_devptr + off);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p,
					      unsigned int Flags)
{
	struct mdgpu_cu_host *h;
	CUcontext ctx;
	CUresult r;

	if (!pdptr || Flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	h = mdgpu_cu_host_find(p, false);
	if (!h)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		r = mdgpu_cu_host_devptr(h, p, pdptr);
	if (r == CUDA_ERROR_NOT_SUPPORTED)
		mdgpu_cu_log("cuMemHostGetDevicePointer: kernels cannot reach "
			     "this host memory on this vGPU");
	mdgpu_cu_leave();
	return r;
}

/* ---------------------------------------------------------------- */
/* Pointer attributes.                                              */

/* Under the lock: one attribute of ptr into data (the size CUDA gives
 * each attribute). */
static CUresult mdgpu_cu_ptr_attr(void *data, CUpointer_attribute attr,
				  CUdeviceptr ptr)
{
	struct mdgpu_cu_host *h = NULL;
	struct mdgpu_cu_alloc *a = NULL;
	CUdeviceptr dp;
	int c = mdgpu_cu_classify(ptr);

	if (c < 0)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (c)
		a = mdgpu_cu_alloc_find(ptr, false);
	else
		h = mdgpu_cu_host_find((const void *)(uintptr_t)ptr, false);
	if (!a && !h)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = a ? a->ctx : h->ctx;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(CUmemorytype *)data = a ? CU_MEMORYTYPE_DEVICE :
					    CU_MEMORYTYPE_HOST;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		if (a) {
			*(CUdeviceptr *)data = ptr;
			return CUDA_SUCCESS;
		}
		if (mdgpu_cu_host_devptr(h, (const void *)(uintptr_t)ptr, &dp))
			return CUDA_ERROR_INVALID_VALUE;
		*(CUdeviceptr *)data = dp;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (a)
			return CUDA_ERROR_INVALID_VALUE;
		*(void **)data = (void *)(uintptr_t)ptr;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = a ? a->id : (uintptr_t)h->ptr;
		return CUDA_SUCCESS;
	/*
	 * The "boolean" attributes are written as an unsigned int, as
	 * NVIDIA's driver writes them (measured on the H100, driver 580:
	 * four bytes of a preset 64-bit word change): callers pass an int
	 * (NCCL does, and NVIDIA's runtime reads more than one byte of
	 * IS_MANAGED: with one byte written, cudaPointerGetAttributes saw
	 * managed memory).  IS_LEGACY_CUDA_IPC_CAPABLE is 0: no memory of a
	 * vGPU can be shared by cudaIpcGetMemHandle (IPC is not supported).
	 */
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		*(unsigned int *)data = 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = 0;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = a ? a->addr : (uintptr_t)h->ptr;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = a ? (size_t)a->size : h->size;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPED:	/* an unsigned int (above) */
		*(unsigned int *)data = 1;
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:	/* NULL: no pool's */
		*(CUmemoryPool *)data = a ? a->pool : NULL;
		return CUDA_SUCCESS;
	default:
		mdgpu_cu_log("cuPointerGetAttribute(%d): not supported",
			     (int)attr);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
}

/* The zero answer of an attribute, in its own size. */
static void mdgpu_cu_ptr_zero(void *data, CUpointer_attribute attr)
{
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(unsigned int *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = attr == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL ?
			       -2 : 0;
		break;
	default:
		*(uint64_t *)data = 0;
		break;
	}
}

CUresult CUDAAPI cuPointerGetAttribute(void *data,
				       CUpointer_attribute attribute,
				       CUdeviceptr ptr)
{
	CUresult r;

	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_ptr_attr(data, attribute, ptr);
	mdgpu_cu_leave();
	return r;
}

/*
 * All at once; as CUDA does, an attribute that does not apply to the
 * pointer (memory CUDA does not know) leaves its slot zeroed and is not
 * an error, except for unsupported attributes.
 */
CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes,
					CUpointer_attribute *attributes,
					void **data, CUdeviceptr ptr)
{
	CUresult r;

	if (!attributes || !data)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	for (unsigned i = 0; i < numAttributes && !r; i++) {
		CUresult one;

		if (!data[i]) {
			r = CUDA_ERROR_INVALID_VALUE;
			break;
		}
		one = mdgpu_cu_ptr_attr(data[i], attributes[i], ptr);
		if (one == CUDA_ERROR_INVALID_VALUE)
			mdgpu_cu_ptr_zero(data[i], attributes[i]);
		else
			r = one;
	}
	mdgpu_cu_leave();
	return r;
}
