// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: device memory, memsets, copies and zero-copy host memory.
 *
 * Every allocation is recorded (address, size, owning context): frees
 * and cuMemGetAddressRange are answered from the record, memsets that
 * take several commands are checked against it before the first one, and
 * a destroyed context frees what it owns.  The daemon checks every
 * address again and enforces the quota (OUT_OF_MEMORY past it).
 *
 * Copies and memsets complete before they return, the *Async ones
 * included: the vGPU has one in-order queue (Documentation/libcuda.md,
 * "Streams"), so a completed copy is also ordered after all earlier work
 * of every stream.  The per-thread-default-stream variants (_ptds, _ptsz)
 * are the same functions for the same reason.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "priv.h"

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

/* Is [addr, addr + len) inside one allocation; len > 0. */
static bool mdgpu_cu_range_ok(mdgpu_devptr addr, uint64_t len)
{
	struct mdgpu_cu_alloc *a = mdgpu_cu_alloc_find(addr, false);

	return a && len <= a->size - (addr - a->addr);
}

static void mdgpu_cu_alloc_drop(struct mdgpu_cu_alloc *a)
{
	mdgpu_mem_free(mdgpu_cu.g, a->addr);
	mdgpu_cu_set_del(&mdgpu_cu.allocs, a);
	free(a);
}

void mdgpu_cu_mem_release(CUcontext ctx)
{
	for (size_t i = mdgpu_cu.allocs.n; i-- > 0;) {
		struct mdgpu_cu_alloc *a = mdgpu_cu.allocs.v[i];

		if (a->ctx == ctx)
			mdgpu_cu_alloc_drop(a);
	}
	for (size_t i = mdgpu_cu.hosts.n; i-- > 0;) {
		struct mdgpu_cu_host *h = mdgpu_cu.hosts.v[i];

		if (h->ctx == ctx) {
			mdgpu_host_free(mdgpu_cu.g, h->ptr);
			mdgpu_cu_set_del(&mdgpu_cu.hosts, h);
			free(h);
		}
	}
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct mdgpu_cu_alloc *a;
	mdgpu_devptr addr;
	CUcontext ctx;
	CUresult r;

	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	a = calloc(1, sizeof(*a));
	if (!a || mdgpu_cu_set_add(&mdgpu_cu.allocs, a)) {
		free(a);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	r = mdgpu_cu_result(mdgpu_mem_alloc(mdgpu_cu.g, bytesize, &addr));
	if (r) {
		mdgpu_cu_set_del(&mdgpu_cu.allocs, a);
		free(a);
		goto out;
	}
	a->ctx = ctx;
	a->addr = addr;
	a->size = bytesize;
	*dptr = (CUdeviceptr)addr;
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
	struct mdgpu_cu_alloc *a;
	CUcontext ctx;
	CUresult r = mdgpu_cu_enter_ctx(&ctx);

	if (r)
		return r;
	a = mdgpu_cu_alloc_find(dptr, true);
	if (!a) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else {
		/* Queued launches may still use it. */
		r = mdgpu_cu_result(mdgpu_synchronize(mdgpu_cu.g));
		mdgpu_cu_alloc_drop(a);
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	uint64_t used = 0, quota = mdgpu_cu.info.fb_quota;
	CUcontext ctx;
	CUresult r;

	if (!free_bytes || !total)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	r = mdgpu_cu_result(mdgpu_query(mdgpu_cu.g, MDGPU_QUERY_FB_USED,
					&used));
	if (!r) {
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

/* Memsets. */
static CUresult mdgpu_cu_memset_d8(CUdeviceptr dst, unsigned char v,
				   size_t n)
{
	CUcontext ctx;
	CUresult r = mdgpu_cu_enter_ctx(&ctx);

	if (r)
		return r;
	if (n)
		r = mdgpu_cu_result(mdgpu_memset(mdgpu_cu.g, dst, v, n));
	mdgpu_cu_leave();
	return r;
}

/*
 * n elements of `width` (2 or 4) bytes of `value` at dst.  A value whose
 * bytes are all equal is one byte memset; otherwise 4-byte words through
 * the fill builtin, and for 16-bit elements a 2-byte head (dst not 4-byte
 * aligned) and tail (odd count left) copied from the host.  The whole
 * range is checked first, so a refused memset writes nothing.
 */
static CUresult mdgpu_cu_memset_wide(CUdeviceptr dst, uint32_t value,
				     size_t n, unsigned width)
{
	uint32_t word = width == 2 ? (value & 0xffff) * 0x10001U : value;
	uint64_t bytes, words;
	uint16_t half = (uint16_t)value;
	CUcontext ctx;
	CUresult r;
	int ret = 0;

	if (dst % width)
		return CUDA_ERROR_INVALID_VALUE;
	if (__builtin_mul_overflow((uint64_t)n, (uint64_t)width, &bytes))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r || !n)
		goto out;
	if (!mdgpu_cu_range_ok(dst, bytes)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (word == (word & 0xff) * 0x01010101U) {
		r = mdgpu_cu_result(mdgpu_memset(mdgpu_cu.g, dst,
						 (uint8_t)word, bytes));
		goto out;
	}
	if (dst % 4) {			/* width 2: one element first */
		ret = mdgpu_copy_htod(mdgpu_cu.g, dst, &half, 2);
		dst += 2;
		bytes -= 2;
	}
	words = bytes / 4;
	if (!ret && words)
		ret = mdgpu_fill_u32(mdgpu_cu.g, dst, words, word);
	if (!ret && bytes % 4)
		ret = mdgpu_copy_htod(mdgpu_cu.g, dst + words * 4, &half, 2);
	/* The fill is queued: its error shows at the synchronize. */
	if (!ret)
		ret = mdgpu_synchronize(mdgpu_cu.g);
	r = mdgpu_cu_result(ret);
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc,
			       size_t N)
{
	return mdgpu_cu_memset_d8(dstDevice, uc, N);
}

CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us,
				size_t N)
{
	return mdgpu_cu_memset_wide(dstDevice, us, N, 2);
}

CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui,
				size_t N)
{
	return mdgpu_cu_memset_wide(dstDevice, ui, N, 4);
}

static CUresult mdgpu_cu_stream_ok(CUstream s)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_stream_check(s);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc,
				 size_t N, CUstream hStream)
{
	CUresult r = mdgpu_cu_stream_ok(hStream);

	return r ? r : mdgpu_cu_memset_d8(dstDevice, uc, N);
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us,
				  size_t N, CUstream hStream)
{
	CUresult r = mdgpu_cu_stream_ok(hStream);

	return r ? r : mdgpu_cu_memset_wide(dstDevice, us, N, 2);
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui,
				  size_t N, CUstream hStream)
{
	CUresult r = mdgpu_cu_stream_ok(hStream);

	return r ? r : mdgpu_cu_memset_wide(dstDevice, ui, N, 4);
}

/* Copies. */
enum mdgpu_cu_dir { MDGPU_CU_HTOD, MDGPU_CU_DTOH, MDGPU_CU_DTOD };

static CUresult mdgpu_cu_copy(enum mdgpu_cu_dir dir, CUdeviceptr ddst,
			      void *hdst, CUdeviceptr dsrc, const void *hsrc,
			      size_t n)
{
	CUcontext ctx;
	CUresult r;
	int ret;

	if (n && ((dir == MDGPU_CU_HTOD && !hsrc) ||
		  (dir == MDGPU_CU_DTOH && !hdst)))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r || !n)
		goto out;
	switch (dir) {
	case MDGPU_CU_HTOD:
		ret = mdgpu_copy_htod(mdgpu_cu.g, ddst, hsrc, n);
		break;
	case MDGPU_CU_DTOH:
		ret = mdgpu_copy_dtoh(mdgpu_cu.g, hdst, dsrc, n);
		break;
	default:
		ret = mdgpu_copy_dtod(mdgpu_cu.g, ddst, dsrc, n);
		break;
	}
	r = mdgpu_cu_result(ret);
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost,
				 size_t ByteCount)
{
	return mdgpu_cu_copy(MDGPU_CU_HTOD, dstDevice, NULL, 0, srcHost,
			     ByteCount);
}

CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice,
				 size_t ByteCount)
{
	return mdgpu_cu_copy(MDGPU_CU_DTOH, 0, dstHost, srcDevice, NULL,
			     ByteCount);
}

CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
				 size_t ByteCount)
{
	return mdgpu_cu_copy(MDGPU_CU_DTOD, dstDevice, NULL, srcDevice, NULL,
			     ByteCount);
}

CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice,
				      const void *srcHost, size_t ByteCount,
				      CUstream hStream)
{
	CUresult r = mdgpu_cu_stream_ok(hStream);

	return r ? r : cuMemcpyHtoD_v2(dstDevice, srcHost, ByteCount);
}

CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice,
				      size_t ByteCount, CUstream hStream)
{
	CUresult r = mdgpu_cu_stream_ok(hStream);

	return r ? r : cuMemcpyDtoH_v2(dstHost, srcDevice, ByteCount);
}

CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice,
				      CUdeviceptr srcDevice, size_t ByteCount,
				      CUstream hStream)
{
	CUresult r = mdgpu_cu_stream_ok(hStream);

	return r ? r : cuMemcpyDtoD_v2(dstDevice, srcDevice, ByteCount);
}

MDGPU_CU_ALIAS(cuMemsetD8_v2_ptds, cuMemsetD8_v2);
MDGPU_CU_ALIAS(cuMemsetD16_v2_ptds, cuMemsetD16_v2);
MDGPU_CU_ALIAS(cuMemsetD32_v2_ptds, cuMemsetD32_v2);
MDGPU_CU_ALIAS(cuMemsetD8Async_ptsz, cuMemsetD8Async);
MDGPU_CU_ALIAS(cuMemsetD16Async_ptsz, cuMemsetD16Async);
MDGPU_CU_ALIAS(cuMemsetD32Async_ptsz, cuMemsetD32Async);
MDGPU_CU_ALIAS(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2);
MDGPU_CU_ALIAS(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2);
MDGPU_CU_ALIAS(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2);
MDGPU_CU_ALIAS(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2);
MDGPU_CU_ALIAS(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2);
MDGPU_CU_ALIAS(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2);

/*
 * Zero-copy host memory: carved from the area opened at cuInit
 * (MDGPU_HOST_MIB).  Copies with their host side in it take one command
 * and no staging.  A device pointer to it (DEVICEMAP,
 * cuMemHostGetDevicePointer) is not supported.
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
	*pp = h->ptr;
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
	CUcontext ctx;
	CUresult r = mdgpu_cu_enter_ctx(&ctx);

	if (r)
		return r;
	r = CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; p && i < mdgpu_cu.hosts.n; i++) {
		struct mdgpu_cu_host *h = mdgpu_cu.hosts.v[i];

		if (h->ptr != p)
			continue;
		r = mdgpu_cu_result(mdgpu_synchronize(mdgpu_cu.g));
		mdgpu_host_free(mdgpu_cu.g, h->ptr);
		mdgpu_cu_set_del(&mdgpu_cu.hosts, h);
		free(h);
		break;
	}
	mdgpu_cu_leave();
	return r;
}
