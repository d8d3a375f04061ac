// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: memory pools, CUDA's stream-ordered allocator
 * (cuMemAllocAsync, cuMemFreeAsync, cuMemPool*), over the vGPU's ordinary
 * allocations.  NCCL creates a pool at every communicator's init and fails
 * if it cannot; PyTorch's cudaMallocAsync backend and CuPy's
 * MemoryAsyncPool allocate through them.
 *
 * What a pool is here (Documentation/libcuda.md, "Memory pools"):
 * - an allocation is made at the call, on cuMemAlloc's path (the daemon
 *   enforces the quota: CUDA_ERROR_OUT_OF_MEMORY as cuMemAlloc answers),
 *   which is stronger than stream order: the memory exists before any
 *   work of any stream could use it;
 * - a free (cuMemFreeAsync) is cuMemFree's: the vGPU is synchronised,
 *   so work queued before on any stream has finished, then the memory
 *   goes back to the daemon.  Correct, not asynchronous;
 * - nothing is cached, so a pool's reserved bytes are its used bytes:
 *   the sizes of its live allocations, which it lists (each a daemon
 *   allocation, so the list is bounded by the daemon's max_allocs and
 *   quota).  The release threshold and the reuse policies are kept and
 *   answered, and change nothing; trimming has nothing to release;
 * - one device, so device 0's read-write access is the only access
 *   there is; no IPC (export and import stay unsupported) and no host or
 *   managed pools.
 *
 * Pools are objects of the library, not of a context: cuMemPoolCreate
 * and the pool calls need no current context.  An allocation belongs to
 * the context of its stream (the current one for the legacy stream) and
 * goes with it, as cuMemAlloc's do.  A pool handle is used only once
 * found in mdgpu_cu.pools (or as the default pool): a forged or destroyed
 * one is CUDA_ERROR_INVALID_VALUE, the one error cuda.h lists for a pool
 * argument.
 *
 * Capture: a capturing stream would need memory-allocation and free
 * nodes, which graphs here do not have: both calls are refused there
 * (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, the capture invalidated), as
 * host functions are.
 */
#include <stdlib.h>

#include "graph.h"

#define MDGPU_CU_HANDLE_TYPES_KNOWN					\
	(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_WIN32 | \
	 CU_MEM_HANDLE_TYPE_WIN32_KMT | CU_MEM_HANDLE_TYPE_FABRIC)

/* Under the lock: is p the default pool or one cuMemPoolCreate made and
 * cuMemPoolDestroy did not destroy. */
static bool mdgpu_cu_pool_live(CUmemoryPool p)
{
	return p == &mdgpu_cu.pool_default ||
	       mdgpu_cu_set_has(&mdgpu_cu.pools, p);
}

/* mdgpu_cu_enter, then CUDA_ERROR_INVALID_VALUE unless p is live. */
static CUresult mdgpu_cu_pool_enter(CUmemoryPool p)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_pool_live(p)) {
		mdgpu_cu_leave();
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

static void mdgpu_cu_pool_free(CUmemoryPool p)
{
	free(p->allocs.v);
	free(p);
}

/*
 * A memory location: device 0 is the vGPU; another device ordinal
 * CUDA_ERROR_INVALID_DEVICE; host and host NUMA locations, which cuda.h
 * defines but a vGPU's pools cannot be or reach, NOT_SUPPORTED; any other
 * type (HOST_NUMA_CURRENT included, which no pool call takes)
 * INVALID_VALUE.
 */
static CUresult mdgpu_cu_pool_location(const CUmemLocation *l)
{
	switch (l->type) {
	case CU_MEM_LOCATION_TYPE_DEVICE:
		return l->id == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
	case CU_MEM_LOCATION_TYPE_HOST:
	case CU_MEM_LOCATION_TYPE_HOST_NUMA:
		mdgpu_cu_log("memory pools: host locations are not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* A (location, allocation type) of the CUDA 13 pool calls: pinned memory
 * of device 0; managed pools are not supported (no managed memory). */
static CUresult mdgpu_cu_pool_kind(const CUmemLocation *l,
				   CUmemAllocationType type)
{
	if (!l)
		return CUDA_ERROR_INVALID_VALUE;
	if (type == CU_MEM_ALLOCATION_TYPE_MANAGED) {
		mdgpu_cu_log("memory pools: managed pools are not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	return mdgpu_cu_pool_location(l);
}

/* The properties cuMemPoolCreate takes: what the vGPU has, or why not. */
static CUresult mdgpu_cu_pool_props(const CUmemPoolProps *p)
{
	CUresult loc = mdgpu_cu_pool_location(&p->location);
	unsigned handles = (unsigned)p->handleTypes;

	/* cuMemPoolCreate lists no INVALID_DEVICE. */
	if (loc == CUDA_ERROR_INVALID_DEVICE)
		loc = CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(p->reserved); i++)
		if (p->reserved[i])
			return CUDA_ERROR_INVALID_VALUE;
	if (p->win32SecurityAttributes ||
	    (p->allocType != CU_MEM_ALLOCATION_TYPE_PINNED &&
	     p->allocType != CU_MEM_ALLOCATION_TYPE_MANAGED) ||
	    (handles & ~(unsigned)MDGPU_CU_HANDLE_TYPES_KNOWN) ||
	    (p->usage & ~CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS) ||
	    loc == CUDA_ERROR_INVALID_VALUE)
		return CUDA_ERROR_INVALID_VALUE;
	/* A host pool must have no handle types (cuda.h). */
	if (loc && handles)
		return CUDA_ERROR_INVALID_VALUE;
	if (loc)
		return loc;
	if (p->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED) {
		mdgpu_cu_log("cuMemPoolCreate: managed pools are not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (handles) {
		mdgpu_cu_log("cuMemPoolCreate: shareable (IPC) pools are not "
			     "supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (p->usage) {
		mdgpu_cu_log("cuMemPoolCreate: hardware decompression pools "
			     "are not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool,
				 const CUmemPoolProps *poolProps)
{
	CUmemoryPool p;
	CUresult r;

	if (!pool || !poolProps)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_pool_props(poolProps);
	if (r)
		return r;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	p = calloc(1, sizeof(*p));
	if (!p || mdgpu_cu_set_add(&mdgpu_cu.pools, p)) {
		free(p);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		p->max_size = poolProps->maxSize;
		p->reuse_follow = 1;
		p->reuse_opportunistic = 1;
		p->reuse_internal = 1;
		*pool = p;
	}
	mdgpu_cu_leave();
	return r;
}

/*
 * The default pool cannot be destroyed (cuda.h).  A pool with live
 * allocations goes once the last is freed; its handle is refused from
 * now on.  The device's current pool, if it was this one, is the default
 * pool again.
 */
CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.pools, pool)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	mdgpu_cu_set_del(&mdgpu_cu.pools, pool);
	if (mdgpu_cu.pool_current == pool)
		mdgpu_cu.pool_current = &mdgpu_cu.pool_default;
	if (pool->allocs.n)
		pool->destroyed = true;
	else
		mdgpu_cu_pool_free(pool);
out:
	mdgpu_cu_leave();
	return r;
}

void mdgpu_cu_pool_alloc_gone(struct mdgpu_cu_alloc *a)
{
	CUmemoryPool p = a->pool;

	mdgpu_cu_set_del(&p->allocs, a);
	p->used -= a->size;
	a->pool = NULL;
	if (p->destroyed && !p->allocs.n)
		mdgpu_cu_pool_free(p);
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool,
				       CUmemPool_attribute attr, void *value)
{
	CUresult r;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_pool_enter(pool);
	if (r)
		return r;
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		pool->reuse_follow = *(const int *)value != 0;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		pool->reuse_opportunistic = *(const int *)value != 0;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		pool->reuse_internal = *(const int *)value != 0;
		break;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		pool->release_threshold = *(const cuuint64_t *)value;
		break;
	/* A high watermark is only reset, to what is held now. */
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		if (*(const cuuint64_t *)value) {
			r = CUDA_ERROR_INVALID_VALUE;
		} else if (attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) {
			pool->reserved_high = pool->used;
		} else {
			pool->used_high = pool->used;
		}
		break;
	default:	/* the current amounts are read-only */
		r = CUDA_ERROR_INVALID_VALUE;
		break;
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool,
				       CUmemPool_attribute attr, void *value)
{
	CUresult r;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_pool_enter(pool);
	if (r)
		return r;
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		*(int *)value = pool->reuse_follow;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		*(int *)value = pool->reuse_opportunistic;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		*(int *)value = pool->reuse_internal;
		break;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		*(cuuint64_t *)value = pool->release_threshold;
		break;
	/* Nothing is cached: what is reserved is what is used. */
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		*(cuuint64_t *)value = pool->used;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
		*(cuuint64_t *)value = pool->reserved_high;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		*(cuuint64_t *)value = pool->used_high;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
		break;
	}
	mdgpu_cu_leave();
	return r;
}

/* Nothing is cached, so nothing can be released. */
CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	CUresult r = mdgpu_cu_pool_enter(pool);

	(void)minBytesToKeep;
	if (!r)
		mdgpu_cu_leave();
	return r;
}

/*
 * Device 0's read-write access is the only access there is: it is what
 * every descriptor must ask for (each is checked; nothing changes).  Less
 * for device 0 is NOT_SUPPORTED (the vGPU cannot revoke its own access),
 * another device INVALID_DEVICE, the host NOT_SUPPORTED.
 */
CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool pool,
				    const CUmemAccessDesc *map, size_t count)
{
	CUresult r;

	if (count && !map)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_pool_enter(pool);
	if (r)
		return r;
	for (size_t i = 0; i < count && !r; i++) {
		CUmemAccess_flags f = map[i].flags;

		if (f != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		    f != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		    f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			r = mdgpu_cu_pool_location(&map[i].location);
		if (!r && f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
			mdgpu_cu_log("cuMemPoolSetAccess: device 0's access "
				     "to its pool cannot be reduced");
			r = CUDA_ERROR_NOT_SUPPORTED;
		}
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemPoolGetAccess(CUmemAccess_flags *flags,
				    CUmemoryPool memPool,
				    CUmemLocation *location)
{
	CUresult r;

	if (!flags || !location)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_pool_enter(memPool);
	if (r)
		return r;
	r = mdgpu_cu_pool_location(location);
	if (!r)
		*flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	mdgpu_cu_leave();
	return r;
}

/* The device's pools.  cuda.h lists INVALID_DEVICE for the default
 * pool's call only; the current pool's answer INVALID_VALUE. */
CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out,
					   CUdevice dev)
{
	CUresult r;

	if (!pool_out)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (dev != 0)
		r = CUDA_ERROR_INVALID_DEVICE;
	else
		*pool_out = &mdgpu_cu.pool_default;
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	CUresult r;

	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (dev != 0)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*pool = mdgpu_cu.pool_current;
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	CUresult r = mdgpu_cu_pool_enter(pool);

	if (r)
		return r;
	if (dev != 0)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		mdgpu_cu.pool_current = pool;
	mdgpu_cu_leave();
	return r;
}

/* CUDA 13's pools of a location and allocation type: device 0's pinned
 * pools are the device's; the others do not exist here. */
CUresult CUDAAPI cuMemGetDefaultMemPool(CUmemoryPool *pool_out,
					CUmemLocation *location,
					CUmemAllocationType type)
{
	CUresult r;

	if (!pool_out)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_pool_kind(location, type);
	if (r)
		return r;
	return cuDeviceGetDefaultMemPool(pool_out, 0);
}

CUresult CUDAAPI cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location,
				 CUmemAllocationType type)
{
	CUresult r;

	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_pool_kind(location, type);
	if (r)
		return r;
	return cuDeviceGetMemPool(pool, 0);
}

/* Every pool is device 0's pinned one, so the location and type must be
 * those (cuda.h: INVALID_VALUE where they are not the pool's). */
CUresult CUDAAPI cuMemSetMemPool(CUmemLocation *location,
				 CUmemAllocationType type, CUmemoryPool pool)
{
	CUresult r = mdgpu_cu_pool_kind(location, type);

	if (r == CUDA_ERROR_INVALID_DEVICE || r == CUDA_ERROR_NOT_SUPPORTED)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r)
		return r;
	return cuDeviceSetMemPool(0, pool);
}

/*
 * Under the lock: the context that owns an allocation on stream *s,
 * which is resolved: a created stream's own, else the current context
 * (cuda.h: INVALID_CONTEXT for the default stream without one).  A
 * capturing stream refuses the call (`what`, logged), since graphs here
 * have no memory nodes.
 */
static CUresult mdgpu_cu_pool_stream(CUstream *s, const char *what,
				     CUcontext *ctx)
{
	CUresult r = mdgpu_cu_stream_resolve(NULL, s);

	if (r)
		return r;
	*ctx = mdgpu_cu_stream_handle(*s) ? (*s)->ctx : mdgpu_cu_current();
	if (!*ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	return mdgpu_cu_capture_refuse(*s, what);
}

/*
 * cuMemAllocAsync and cuMemAllocFromPoolAsync: pool NULL is the device's
 * current pool.  A size of 0 is INVALID_VALUE, as for cuMemAlloc (cuda.h
 * says nothing else for these); past the pool's maxSize, or the quota,
 * OUT_OF_MEMORY.
 */
static CUresult mdgpu_cu_alloc_async(CUdeviceptr *dptr, size_t bytesize,
				     CUmemoryPool pool, bool current,
				     CUstream s)
{
	struct mdgpu_cu_alloc *a;
	CUcontext ctx;
	CUresult r;

	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (current)
		pool = mdgpu_cu.pool_current;
	else if (!mdgpu_cu_pool_live(pool))
		r = CUDA_ERROR_INVALID_VALUE;
	if (!r)
		r = mdgpu_cu_pool_stream(&s, "cuMemAllocAsync (a memory "
					 "allocation node)", &ctx);
	if (r)
		goto out;
	if (pool->max_size && bytesize > pool->max_size - pool->used) {
		mdgpu_cu_log("cuMemAllocAsync: %zu bytes past the pool's "
			     "maxSize", bytesize);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	r = mdgpu_cu_mem_alloc(ctx, bytesize, &a);
	if (r)
		goto out;
	if (mdgpu_cu_set_add(&pool->allocs, a)) {
		mdgpu_mem_free(mdgpu_cu.g, a->addr);
		mdgpu_cu_alloc_forget(a);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	a->pool = pool;
	pool->used += bytesize;
	if (pool->used > pool->used_high)
		pool->used_high = pool->used;
	if (pool->used > pool->reserved_high)
		pool->reserved_high = pool->used;
	*dptr = (CUdeviceptr)a->addr;
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize,
				 CUstream hStream)
{
	return mdgpu_cu_alloc_async(dptr, bytesize, NULL, true, hStream);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
					 CUmemoryPool pool, CUstream hStream)
{
	return mdgpu_cu_alloc_async(dptr, bytesize, pool, false, hStream);
}

/*
 * Frees as cuMemFree does, a pool's allocation or any other (CUDA takes
 * both): the vGPU is synchronised first, so the stream's earlier work,
 * and every other stream's, has finished.  0 is not an allocation:
 * INVALID_VALUE.
 */
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	CUcontext ctx;
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_pool_stream(&hStream, "cuMemFreeAsync (a memory free "
				 "node)", &ctx);
	if (!r)
		r = mdgpu_cu_mem_free(dptr);
	mdgpu_cu_leave();
	return r;
}

MDGPU_CU_PTSZ(cuMemAllocAsync_ptsz, cuMemAllocAsync,
	      (CUdeviceptr *d, size_t n, CUstream s),
	      cuMemAllocAsync(d, n, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync,
	      (CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s),
	      cuMemAllocFromPoolAsync(d, n, p, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuMemFreeAsync_ptsz, cuMemFreeAsync,
	      (CUdeviceptr d, CUstream s),
	      cuMemFreeAsync(d, MDGPU_CU_PTS(s)))
