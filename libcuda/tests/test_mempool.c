// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A driver-API program in plain C against cuda.h, linked with -lcuda, for
 * libcuda's memory pools (libcuda/mempool.c, the stream-ordered
 * allocator).  run-code-tests.sh runs it against an mdgpud on the sim
 * backend and on the cuda backend over CI's fake libcuda
 * (MDGPU_TEST_BACKEND=cuda); the same checks hold on both.
 *
 * Checked: the device attributes; pool creation with every property
 * refused (NOT_SUPPORTED or INVALID_VALUE as cuda.h says) and
 * destruction; the attributes (reuse flags and release threshold kept,
 * used and reserved bytes moving by exactly each allocation's size and
 * back, high watermarks and their reset); allocations on a stream used
 * by a memset and copies on that stream and read back, freed on the
 * stream; the default and current pools (the CUDA 13 location calls
 * too); a pool destroyed with a live allocation, which stays usable and
 * goes with it; maxSize and the vGPU's quota through a pool; access;
 * forged pools and streams, NULL pointers, sizes; the capture refusal;
 * CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE; the per-thread-stream names; a
 * context's destruction freeing its pool allocations.
 * Prints "N passed, N failed, N skipped".
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "expect.h"

static const size_t mib = 1024 * 1024;

static CUmemPoolProps dev0_props(void)
{
	CUmemPoolProps p;

	memset(&p, 0, sizeof(p));
	p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	p.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
	p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p.location.id = 0;
	return p;
}

static cuuint64_t attr64(CUmemoryPool p, CUmemPool_attribute a)
{
	cuuint64_t v = 0xdeadbeef;

	OK(cuMemPoolGetAttribute(p, a, &v));
	return v;
}

/* Used and reserved are equal (nothing cached): both are `used`. */
static bool pool_holds(CUmemoryPool p, cuuint64_t used)
{
	return attr64(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == used &&
	       attr64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == used;
}

static CUmemoryPool pool_of(CUdeviceptr d)
{
	CUmemoryPool p = (CUmemoryPool)(uintptr_t)1;

	OK(cuPointerGetAttribute(&p, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, d));
	return p;
}

static void test_device_attributes(void)
{
	int v = -1;

	OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
				0));
	EXPECT(v == 1);
	v = -1;
	OK(cuDeviceGetAttribute(&v,
				CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES,
				0));
	EXPECT(v == 0);
}

/* Every property a vGPU's pool cannot have, each alone. */
static void test_create(void)
{
	CUmemoryPool p = NULL, q;
	CUmemPoolProps pr = dev0_props();

	OK(cuMemPoolCreate(&p, &pr));
	EXPECT(p != NULL);
	OK(cuMemPoolDestroy(p));
	EXPECT_RES(cuMemPoolDestroy(p), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolCreate(NULL, &pr), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolCreate(&q, NULL), CUDA_ERROR_INVALID_VALUE);

	pr.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_NOT_SUPPORTED);
	pr.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);
	pr.allocType = (CUmemAllocationType)7;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);

	pr = dev0_props();
	pr.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_NOT_SUPPORTED);
	pr.handleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_NOT_SUPPORTED);
	pr.handleTypes = (CUmemAllocationHandleType)0x100;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);

	pr = dev0_props();
	pr.location.id = 1;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);
	pr.location.id = -1;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);
	pr.location.id = 0;
	pr.location.type = CU_MEM_LOCATION_TYPE_HOST;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_NOT_SUPPORTED);
	pr.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_NOT_SUPPORTED);
	/* A host pool with handle types: cuda.h's INVALID_VALUE. */
	pr.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);
	pr.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
	pr.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);
	pr.location.type = CU_MEM_LOCATION_TYPE_INVALID;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);
	pr.location.type = (CUmemLocationType)99;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);

	pr = dev0_props();
	pr.reserved[sizeof(pr.reserved) - 1] = 1;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);
	pr = dev0_props();
	pr.win32SecurityAttributes = &pr;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);
	pr = dev0_props();
	pr.usage = CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_NOT_SUPPORTED);
	pr.usage = 0x1;
	EXPECT_RES(cuMemPoolCreate(&q, &pr), CUDA_ERROR_INVALID_VALUE);

	/* Destroy: NULL, forged, the default pool. */
	EXPECT_RES(cuMemPoolDestroy(NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolDestroy((CUmemoryPool)&pr),
		   CUDA_ERROR_INVALID_VALUE);
	OK(cuDeviceGetDefaultMemPool(&q, 0));
	EXPECT_RES(cuMemPoolDestroy(q), CUDA_ERROR_INVALID_VALUE);
}

static void test_attributes(CUstream s)
{
	const size_t a = 4096, b = 12345;
	CUmemPoolProps pr = dev0_props();
	CUmemoryPool p;
	CUdeviceptr da, db;
	cuuint64_t v;
	int iv;

	OK(cuMemPoolCreate(&p, &pr));
	/* cuda.h's defaults. */
	iv = -1;
	OK(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
				 &iv));
	EXPECT(iv == 1);
	iv = -1;
	OK(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
				 &iv));
	EXPECT(iv == 1);
	iv = -1;
	OK(cuMemPoolGetAttribute(p,
				 CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
				 &iv));
	EXPECT(iv == 1);
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 0);
	EXPECT(pool_holds(p, 0));
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 0);
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 0);

	/* Kept and answered (NCCL sets the threshold to ~0). */
	v = ~(cuuint64_t)0;
	OK(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == v);
	iv = 0;
	OK(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
				 &iv));
	iv = -1;
	OK(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
				 &iv));
	EXPECT(iv == 0);
	iv = 5;
	OK(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
				 &iv));
	iv = -1;
	OK(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
				 &iv));
	EXPECT(iv == 1);
	iv = 0;
	OK(cuMemPoolSetAttribute(p,
				 CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
				 &iv));
	iv = -1;
	OK(cuMemPoolGetAttribute(p,
				 CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
				 &iv));
	EXPECT(iv == 0);

	/* Used and reserved move by exactly each allocation's size. */
	OK(cuMemAllocFromPoolAsync(&da, a, p, s));
	EXPECT(pool_holds(p, a));
	OK(cuMemAllocFromPoolAsync(&db, b, p, s));
	EXPECT(pool_holds(p, a + b));
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == a + b);
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == a + b);
	OK(cuMemFreeAsync(db, s));
	EXPECT(pool_holds(p, a));
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == a + b);
	/* A high watermark resets (0 only) to what is held now. */
	v = 1;
	EXPECT_RES(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == a + b);
	v = 0;
	OK(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == a);
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == a + b);
	OK(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &v));
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == a);
	OK(cuMemFreeAsync(da, s));
	EXPECT(pool_holds(p, 0));
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == a);
	OK(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &v));
	EXPECT(attr64(p, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 0);

	/* Read-only, unknown, NULL. */
	EXPECT_RES(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
					 &v), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolSetAttribute(p,
					 CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
					 &v), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolSetAttribute(p, (CUmemPool_attribute)99, &v),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolGetAttribute(p, (CUmemPool_attribute)0, &v),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolSetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
					 NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
					 NULL), CUDA_ERROR_INVALID_VALUE);
	/* Nothing cached, nothing to trim. */
	OK(cuMemPoolTrimTo(p, 0));
	OK(cuMemPoolTrimTo(p, SIZE_MAX));
	OK(cuMemPoolDestroy(p));
}

/* An allocation on a stream, used on that stream, read back. */
static void test_stream_use(CUstream s)
{
	const size_t n = 1 << 16;
	CUmemPoolProps pr = dev0_props();
	CUmemoryPool p;
	CUdeviceptr d, e;
	uint32_t *h = malloc(n), *g = malloc(n);
	bool same = true;

	if (!h || !g) {
		EXPECT(h && g);
		free(h);
		free(g);
		return;
	}
	OK(cuMemPoolCreate(&p, &pr));
	OK(cuMemAllocFromPoolAsync(&d, n, p, s));
	OK(cuMemAllocAsync(&e, n, s));
	OK(cuMemsetD32Async(d, 0x5a5a1234, n / 4, s));
	OK(cuMemcpyDtoDAsync(e, d, n / 2, s));
	for (size_t i = 0; i < n / 8; i++)
		h[i] = (uint32_t)(i * 2654435761u);
	OK(cuMemcpyHtoDAsync(e + n / 2, h, n / 2, s));
	OK(cuStreamSynchronize(s));
	OK(cuMemcpyDtoH(g, e, n));
	for (size_t i = 0; i < n / 8; i++)
		same = same && g[i] == 0x5a5a1234 &&
		       g[n / 8 + i] == (uint32_t)(i * 2654435761u);
	EXPECT(same);
	OK(cuMemFreeAsync(d, s));
	OK(cuMemFreeAsync(e, s));
	/* Freed: refused as any freed address. */
	EXPECT_RES(cuMemFreeAsync(d, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD8(d, 0, 1), CUDA_ERROR_INVALID_VALUE);
	/* cuMemFree takes a pool's allocation; cuMemFreeAsync any. */
	OK(cuMemAllocFromPoolAsync(&d, 4096, p, s));
	EXPECT(pool_holds(p, 4096));
	OK(cuMemFree(d));
	EXPECT(pool_holds(p, 0));
	OK(cuMemAlloc(&d, 4096));
	OK(cuMemFreeAsync(d, s));
	/* The legacy stream. */
	OK(cuMemAllocFromPoolAsync(&d, 64, p, NULL));
	OK(cuMemsetD8Async(d, 7, 64, NULL));
	OK(cuMemFreeAsync(d, CU_STREAM_LEGACY));
	OK(cuMemPoolDestroy(p));
	free(h);
	free(g);
}

/* The device's default and current pools. */
static void test_device_pools(CUstream s)
{
	CUmemPoolProps pr = dev0_props();
	CUmemoryPool dflt = NULL, cur = NULL, p, q;
	CUmemLocation loc = { CU_MEM_LOCATION_TYPE_DEVICE, 0 };
	CUdeviceptr d;
	cuuint64_t before;

	OK(cuDeviceGetDefaultMemPool(&dflt, 0));
	EXPECT(dflt != NULL);
	OK(cuDeviceGetMemPool(&cur, 0));
	EXPECT(cur == dflt);
	before = attr64(dflt, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
	OK(cuMemAllocAsync(&d, 8192, s));
	EXPECT(pool_of(d) == dflt);
	EXPECT(pool_holds(dflt, before + 8192));
	OK(cuMemFreeAsync(d, s));
	EXPECT(pool_holds(dflt, before));

	/* Another pool made current, then destroyed: the default again. */
	OK(cuMemPoolCreate(&p, &pr));
	OK(cuDeviceSetMemPool(0, p));
	OK(cuDeviceGetMemPool(&cur, 0));
	EXPECT(cur == p);
	OK(cuMemAllocAsync(&d, 100, s));
	EXPECT(pool_of(d) == p);
	EXPECT(pool_holds(p, 100));
	EXPECT(pool_holds(dflt, before));
	OK(cuMemFreeAsync(d, s));
	OK(cuMemPoolDestroy(p));
	OK(cuDeviceGetMemPool(&cur, 0));
	EXPECT(cur == dflt);
	OK(cuDeviceSetMemPool(0, dflt));

	/* Refusals. */
	EXPECT_RES(cuDeviceGetDefaultMemPool(NULL, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceGetDefaultMemPool(&q, 1), CUDA_ERROR_INVALID_DEVICE);
	EXPECT_RES(cuDeviceGetMemPool(NULL, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceGetMemPool(&q, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceSetMemPool(0, p), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceSetMemPool(0, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceSetMemPool(1, dflt), CUDA_ERROR_INVALID_VALUE);

	/* CUDA 13's calls by location and type. */
	q = NULL;
	OK(cuMemGetDefaultMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
	EXPECT(q == dflt);
	OK(cuMemPoolCreate(&p, &pr));
	OK(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, p));
	q = NULL;
	OK(cuMemGetMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
	EXPECT(q == p);
	OK(cuDeviceGetMemPool(&cur, 0));
	EXPECT(cur == p);
	EXPECT_RES(cuMemGetDefaultMemPool(&q, &loc,
					  CU_MEM_ALLOCATION_TYPE_MANAGED),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuMemGetMemPool(&q, NULL, CU_MEM_ALLOCATION_TYPE_PINNED),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemGetMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_INVALID),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_MANAGED, p),
		   CUDA_ERROR_INVALID_VALUE);
	loc.id = 1;
	EXPECT_RES(cuMemGetDefaultMemPool(&q, &loc,
					  CU_MEM_ALLOCATION_TYPE_PINNED),
		   CUDA_ERROR_INVALID_DEVICE);
	EXPECT_RES(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, p),
		   CUDA_ERROR_INVALID_VALUE);
	loc.type = CU_MEM_LOCATION_TYPE_HOST;
	loc.id = 0;
	EXPECT_RES(cuMemGetMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
		   CUDA_ERROR_NOT_SUPPORTED);
	loc.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
	EXPECT_RES(cuMemGetMemPool(&q, &loc, CU_MEM_ALLOCATION_TYPE_PINNED),
		   CUDA_ERROR_INVALID_VALUE);
	OK(cuMemPoolDestroy(p));
	OK(cuDeviceGetMemPool(&cur, 0));
	EXPECT(cur == dflt);
}

/*
 * cuMemPoolDestroy with a live allocation: the handle goes at once, the
 * allocation stays usable, and the pool is freed with it (the sanitized
 * build's leak check sees a pool that is not).
 */
static void test_deferred_destroy(CUstream s)
{
	CUmemPoolProps pr = dev0_props();
	CUmemoryPool p;
	CUdeviceptr d, e;
	uint32_t v = 0;
	cuuint64_t x;

	OK(cuMemPoolCreate(&p, &pr));
	OK(cuMemAllocFromPoolAsync(&d, 4096, p, s));
	OK(cuMemAllocFromPoolAsync(&e, 4096, p, s));
	OK(cuMemPoolDestroy(p));
	EXPECT_RES(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
					 &x), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemAllocFromPoolAsync(&d, 64, p, s),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolDestroy(p), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemsetD32Async(d, 0xabcdef01, 1024, s));
	OK(cuStreamSynchronize(s));
	OK(cuMemcpyDtoH(&v, d + 4092, sizeof(v)));
	EXPECT(v == 0xabcdef01);
	OK(cuMemFreeAsync(e, s));
	OK(cuMemFree(d));
}

/* maxSize caps a pool; the quota caps every pool, as cuMemAlloc. */
static void test_limits(CUstream s)
{
	CUmemPoolProps pr = dev0_props();
	CUmemoryPool p, dflt;
	CUdeviceptr d, e;
	size_t fr = 0, tot = 0;
	cuuint64_t before;

	pr.maxSize = mib;
	OK(cuMemPoolCreate(&p, &pr));
	OK(cuMemAllocFromPoolAsync(&d, mib / 2, p, s));
	EXPECT_RES(cuMemAllocFromPoolAsync(&e, mib / 2 + 1, p, s),
		   CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT_RES(cuMemAllocFromPoolAsync(&e, SIZE_MAX, p, s),
		   CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemAllocFromPoolAsync(&e, mib / 2, p, s));
	EXPECT(pool_holds(p, mib));
	EXPECT_RES(cuMemAllocFromPoolAsync(&e, 1, p, s),
		   CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(pool_holds(p, mib));
	OK(cuMemFreeAsync(d, s));
	OK(cuMemAllocFromPoolAsync(&d, 1, p, s));
	EXPECT(pool_holds(p, mib / 2 + 1));
	OK(cuMemFreeAsync(d, s));
	OK(cuMemFreeAsync(e, s));
	OK(cuMemPoolDestroy(p));

	OK(cuDeviceGetDefaultMemPool(&dflt, 0));
	before = attr64(dflt, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
	OK(cuMemGetInfo(&fr, &tot));
	EXPECT(fr > 4096);
	EXPECT_RES(cuMemAllocAsync(&d, fr + 4096, s), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT_RES(cuMemAllocAsync(&d, SIZE_MAX, s), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(pool_holds(dflt, before));
	/* The whole free quota in one piece, then not a page more. */
	OK(cuMemAllocAsync(&d, fr, s));
	EXPECT_RES(cuMemAllocAsync(&e, 4096, s), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(pool_holds(dflt, before + fr));
	OK(cuMemFreeAsync(d, s));
	EXPECT(pool_holds(dflt, before));
}

static void test_access(void)
{
	CUmemPoolProps pr = dev0_props();
	CUmemoryPool p, dflt;
	CUmemLocation loc = { CU_MEM_LOCATION_TYPE_DEVICE, 0 };
	CUmemAccessDesc ad;
	CUmemAccess_flags f = CU_MEM_ACCESS_FLAGS_PROT_NONE;

	OK(cuMemPoolCreate(&p, &pr));
	OK(cuDeviceGetDefaultMemPool(&dflt, 0));
	OK(cuMemPoolGetAccess(&f, p, &loc));
	EXPECT(f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	f = CU_MEM_ACCESS_FLAGS_PROT_NONE;
	OK(cuMemPoolGetAccess(&f, dflt, &loc));
	EXPECT(f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	EXPECT_RES(cuMemPoolGetAccess(NULL, p, &loc), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolGetAccess(&f, p, NULL), CUDA_ERROR_INVALID_VALUE);
	loc.id = 1;
	EXPECT_RES(cuMemPoolGetAccess(&f, p, &loc), CUDA_ERROR_INVALID_DEVICE);
	loc.type = CU_MEM_LOCATION_TYPE_HOST;
	loc.id = 0;
	EXPECT_RES(cuMemPoolGetAccess(&f, p, &loc), CUDA_ERROR_NOT_SUPPORTED);

	memset(&ad, 0, sizeof(ad));
	ad.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	ad.location.id = 0;
	ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	OK(cuMemPoolSetAccess(p, &ad, 1));
	OK(cuMemPoolSetAccess(dflt, &ad, 1));
	OK(cuMemPoolSetAccess(p, NULL, 0));
	EXPECT_RES(cuMemPoolSetAccess(p, NULL, 1), CUDA_ERROR_INVALID_VALUE);
	ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
	EXPECT_RES(cuMemPoolSetAccess(p, &ad, 1), CUDA_ERROR_NOT_SUPPORTED);
	ad.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
	EXPECT_RES(cuMemPoolSetAccess(p, &ad, 1), CUDA_ERROR_NOT_SUPPORTED);
	ad.flags = (CUmemAccess_flags)2;
	EXPECT_RES(cuMemPoolSetAccess(p, &ad, 1), CUDA_ERROR_INVALID_VALUE);
	ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	ad.location.id = 1;
	EXPECT_RES(cuMemPoolSetAccess(p, &ad, 1), CUDA_ERROR_INVALID_DEVICE);
	ad.location.id = 0;
	ad.location.type = CU_MEM_LOCATION_TYPE_HOST;
	EXPECT_RES(cuMemPoolSetAccess(p, &ad, 1), CUDA_ERROR_NOT_SUPPORTED);
	ad.location.type = CU_MEM_LOCATION_TYPE_INVALID;
	EXPECT_RES(cuMemPoolSetAccess(p, &ad, 1), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemPoolDestroy(p));
}

/* Forged and stale handles, NULL pointers, sizes, no context. */
static void test_refusals(CUcontext ctx, CUstream s)
{
	CUmemPoolProps pr = dev0_props();
	CUmemoryPool forged = (CUmemoryPool)&pr, p;
	CUmemLocation loc = { CU_MEM_LOCATION_TYPE_DEVICE, 0 };
	CUmemAccessDesc ad = { loc, CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemAccess_flags f;
	CUdeviceptr d = 0;
	CUcontext popped = NULL;
	cuuint64_t v = 0;

	EXPECT_RES(cuMemPoolSetAttribute(forged,
					 CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolGetAttribute(forged,
					 CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolGetAttribute(NULL,
					 CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolTrimTo(forged, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolSetAccess(forged, &ad, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolGetAccess(&f, forged, &loc),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemPoolDestroy(forged), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceSetMemPool(0, forged), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemAllocFromPoolAsync(&d, 64, forged, s),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemAllocFromPoolAsync(&d, 64, NULL, s),
		   CUDA_ERROR_INVALID_VALUE);

	OK(cuMemPoolCreate(&p, &pr));
	/* NULL pointers, size 0 (as cuMemAlloc), a forged stream. */
	EXPECT_RES(cuMemAllocAsync(NULL, 64, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemAllocAsync(&d, 0, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemAllocFromPoolAsync(NULL, 64, p, s),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemAllocFromPoolAsync(&d, 0, p, s),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemAllocAsync(&d, 64, (CUstream)&pr),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuMemAllocFromPoolAsync(&d, 64, p, (CUstream)&pr),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT(pool_holds(p, 0));
	OK(cuMemAllocFromPoolAsync(&d, 64, p, s));
	EXPECT_RES(cuMemFreeAsync(d, (CUstream)&pr), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(pool_holds(p, 64));
	/* Not an allocation's start, 0, never allocated. */
	EXPECT_RES(cuMemFreeAsync(d + 8, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemFreeAsync(0, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemFreeAsync(0xdead0000, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT(pool_holds(p, 64));

	/* Without a current context: pools work, the legacy stream does
	 * not (INVALID_CONTEXT), a created stream does. */
	OK(cuCtxPopCurrent(&popped));
	EXPECT(popped == ctx);
	EXPECT_RES(cuMemAllocFromPoolAsync(&d, 64, p, NULL),
		   CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RES(cuMemAllocAsync(&d, 64, CU_STREAM_PER_THREAD),
		   CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RES(cuMemFreeAsync(d, NULL), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuMemPoolGetAttribute(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
	EXPECT(v == 64);
	OK(cuMemFreeAsync(d, s));
	EXPECT(pool_holds(p, 0));
	OK(cuMemPoolDestroy(p));
	OK(cuMemPoolCreate(&p, &pr));
	OK(cuMemPoolDestroy(p));
	OK(cuCtxPushCurrent(ctx));
}

/*
 * A capturing stream refuses both calls and its capture is invalidated
 * (no memory nodes); another stream's capture does not make them unsafe
 * calls (cudaMallocAsync is what capture-safe code uses).
 */
static void test_capture(CUstream s)
{
	CUmemPoolProps pr = dev0_props();
	CUmemoryPool p;
	CUstream c;
	CUgraph g = NULL;
	CUdeviceptr d = 0, e = 0;

	OK(cuMemPoolCreate(&p, &pr));
	OK(cuStreamCreate(&c, CU_STREAM_NON_BLOCKING));
	OK(cuStreamBeginCapture(c, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_RES(cuMemAllocAsync(&d, 64, c),
		   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT(d == 0);
	EXPECT_RES(cuMemAllocFromPoolAsync(&d, 64, p, c),
		   CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT(pool_holds(p, 0));
	EXPECT_RES(cuStreamEndCapture(c, &g),
		   CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT(g == NULL);

	OK(cuMemAllocFromPoolAsync(&e, 64, p, s));
	OK(cuStreamBeginCapture(c, CU_STREAM_CAPTURE_MODE_GLOBAL));
	/* Outside the capture, on another stream: allowed. */
	OK(cuMemAllocFromPoolAsync(&d, 64, p, s));
	OK(cuMemFreeAsync(d, s));
	EXPECT_RES(cuMemFreeAsync(e, c), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RES(cuStreamEndCapture(c, &g),
		   CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT(g == NULL);
	/* The refused free freed nothing. */
	EXPECT(pool_holds(p, 64));
	OK(cuMemsetD8(e, 1, 64));
	OK(cuMemFreeAsync(e, c));
	EXPECT(pool_holds(p, 0));
	OK(cuStreamDestroy(c));
	OK(cuMemPoolDestroy(p));
}

static void test_pointer_attribute(CUstream s)
{
	CUmemPoolProps pr = dev0_props();
	CUmemoryPool p, got[2] = { NULL, NULL };
	CUpointer_attribute at[2] = { CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
				      CU_POINTER_ATTRIBUTE_RANGE_SIZE };
	size_t size = 0;
	void *data[2] = { &got[0], &size };
	CUdeviceptr d, m;
	void *h = NULL;

	OK(cuMemPoolCreate(&p, &pr));
	OK(cuMemAllocFromPoolAsync(&d, 256, p, s));
	OK(cuMemAlloc(&m, 256));
	EXPECT(pool_of(d) == p);
	EXPECT(pool_of(d + 255) == p);
	EXPECT(pool_of(m) == NULL);
	OK(cuPointerGetAttributes(2, at, data, d + 16));
	EXPECT(got[0] == p && size == 256);
	got[0] = p;
	OK(cuPointerGetAttributes(2, at, data, m));
	EXPECT(got[0] == NULL);
	if (cuMemHostAlloc(&h, 4096, 0) == CUDA_SUCCESS) {
		EXPECT(pool_of((CUdeviceptr)(uintptr_t)h) == NULL);
		OK(cuMemFreeHost(h));
	} else {
		SKIP("no zero-copy host memory on this vGPU");
	}
	EXPECT_RES(cuPointerGetAttribute(&got[1],
					 CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
					 0xdead0000),
		   CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFreeAsync(d, s));
	OK(cuMemFree(m));
	OK(cuMemPoolDestroy(p));
}

/* The _ptsz names: NULL is the thread's per-thread stream. */
static void test_ptsz(void)
{
	typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t, CUstream);
	typedef CUresult (*pool_fn)(CUdeviceptr *, size_t, CUmemoryPool,
				    CUstream);
	typedef CUresult (*free_fn)(CUdeviceptr, CUstream);
	alloc_fn al = (alloc_fn)dlsym(RTLD_DEFAULT, "cuMemAllocAsync_ptsz");
	pool_fn ap = (pool_fn)dlsym(RTLD_DEFAULT,
				    "cuMemAllocFromPoolAsync_ptsz");
	free_fn fr = (free_fn)dlsym(RTLD_DEFAULT, "cuMemFreeAsync_ptsz");
	CUmemPoolProps pr = dev0_props();
	CUmemoryPool p;
	CUdeviceptr d, e;
	uint32_t v = 0;

	EXPECT(al && ap && fr);
	if (!al || !ap || !fr)
		return;
	OK(cuMemPoolCreate(&p, &pr));
	OK(al(&d, 64, NULL));
	OK(ap(&e, 64, p, NULL));
	EXPECT(pool_holds(p, 64));
	OK(cuMemsetD32Async(e, 0x600d, 16, CU_STREAM_PER_THREAD));
	OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
	OK(cuMemcpyDtoH(&v, e + 60, sizeof(v)));
	EXPECT(v == 0x600d);
	EXPECT_RES(al(&d, 64, (CUstream)&pr), CUDA_ERROR_INVALID_HANDLE);
	OK(fr(e, NULL));
	OK(fr(d, NULL));
	EXPECT(pool_holds(p, 0));
	OK(cuMemPoolDestroy(p));
}

/* A context's destruction frees its pool allocations, and the pool's
 * accounting follows. */
static void test_context_gone(void)
{
	CUmemPoolProps pr = dev0_props();
	CUmemoryPool p;
	CUcontext c, prev = NULL;
	CUstream s;
	CUdeviceptr d, e;

	OK(cuCtxGetCurrent(&prev));
	OK(cuMemPoolCreate(&p, &pr));
	OK(cuCtxCreate(&c, NULL, 0, 0));
	OK(cuStreamCreate(&s, 0));
	OK(cuMemAllocFromPoolAsync(&d, 1000, p, s));
	OK(cuMemAllocFromPoolAsync(&e, 24, p, NULL));
	EXPECT(pool_holds(p, 1024));
	OK(cuCtxDestroy(c));
	EXPECT(pool_holds(p, 0));
	OK(cuCtxSetCurrent(prev));
	EXPECT_RES(cuMemFreeAsync(d, NULL), CUDA_ERROR_INVALID_VALUE);
	/* A destroyed pool whose allocations go with their context. */
	OK(cuCtxCreate(&c, NULL, 0, 0));
	OK(cuMemAllocFromPoolAsync(&d, 64, p, NULL));
	OK(cuMemPoolDestroy(p));
	OK(cuCtxDestroy(c));
	OK(cuCtxSetCurrent(prev));
}

int main(void)
{
	const char *backend = getenv("MDGPU_TEST_BACKEND");
	bool on_cuda = backend && !strcmp(backend, "cuda");
	CUcontext ctx;
	CUstream s;

	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&ctx, 0));
	OK(cuCtxSetCurrent(ctx));
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	test_device_attributes();
	test_create();
	test_attributes(s);
	test_stream_use(s);
	test_device_pools(s);
	test_deferred_destroy(s);
	test_limits(s);
	test_access();
	test_refusals(ctx, s);
	test_capture(s);
	test_pointer_attribute(s);
	test_ptsz();
	test_context_gone();
	OK(cuStreamDestroy(s));
	OK(cuDevicePrimaryCtxRelease(0));
	printf("test_mempool (%s): %u passed, %u failed, %u skipped\n",
	       on_cuda ? "cuda" : "sim", passed, failed, skipped);
	return failed ? 1 : 0;
}
