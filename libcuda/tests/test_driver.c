// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A driver-API program in plain C against cuda.h, linked with -lcuda: run
 * by run-driver-tests.sh on mdgpu's libcuda.so.1 against an mdgpud on the
 * sim backend (MDGPU_SOCKET, MDGPU_TYPE=1g: a 1 GiB quota, 132 SMs).  The
 * sim backend runs builtin kernels only, so no user kernel is launched:
 * devices, contexts, memory, copies, memsets, streams, events, lookups,
 * error strings and every refusal path are.  Prints one line per group,
 * "test_driver: GROUP: N passed, N failed (T ms)", and the total last.
 *
 *   test_driver              the socket transport (run-driver-tests.sh)
 *   test_driver --no-daemon  no daemon to reach: cuInit's refusal
 *   test_driver --guest      a vGPU that already exists, reached over
 *                            whatever cuInit picks (the guest transport in
 *                            the nested e2e's inner VM, whose vGPU is the
 *                            outer guest's mdgpu-1g on sim): every group
 *                            runs; the one difference is the device name,
 *                            which carries no type (only a socket client
 *                            asks for one by name, MDGPU_TYPE).
 *   test_driver --vfio       an mdgpu-1g mdev on sim opened over the vfio
 *                            transport (MDGPU_VFIO=<UUID>, the e2e guest),
 *                            with libcuda's default zero-copy area
 *                            (MDGPU_HOST_MIB unset): every group runs, as
 *                            --guest, and two expectations are the vfio
 *                            transport's: the device's UUID is the mdev's
 *                            (where the others check a version-4 UUID),
 *                            and the zero-copy area is IOVA-mapped memory
 *                            of its own, not the aperture's tail
 *                            (vfio_host_area()).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "expect.h"

/* The type in the device name: what MDGPU_TYPE asked for on the socket
 * transport, none on a vGPU opened by path (--guest, --vfio). */
static const char *name_type = " 1g";
/* --vfio: the mdev UUID cuInit opened (MDGPU_VFIO), else NULL. */
static const char *vfio_uuid;
/* The daemon's backend, as MDGPU_TEST_BACKEND says: sim (the default)
 * loads no code and has its own device name and attribute table; cuda
 * (the fake libcuda of CI, or a GPU) loads modules. */
static bool on_sim = true;

static const size_t mib = 1 << 20;

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Runs one group of checks and prints its own counts and wall time,
 * which the nested e2e's inner guest turns into one PASS or FAIL line
 * each. */
static void group(const char *name, void (*fn)(void))
{
	unsigned p0 = passed, f0 = failed;
	uint64_t t0 = now_ms();

	fn();
	printf("test_driver: %s: %u passed, %u failed (%llu ms)\n", name,
	       passed - p0, failed - f0,
	       (unsigned long long)(now_ms() - t0));
	fflush(stdout);
}
#define GROUP(fn) group(#fn, fn)

static void test_before_init(void)
{
	const char *s;
	int v = 0, n;

	EXPECT_RES(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
	OK(cuDriverGetVersion(&v));
	EXPECT(v == CUDA_VERSION);
	OK(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s));
	EXPECT(s && !strcmp(s, "CUDA_ERROR_OUT_OF_MEMORY"));
	OK(cuGetErrorString(CUDA_ERROR_NOT_SUPPORTED, &s));
	EXPECT(s && strstr(s, "not supported"));
	OK(cuGetErrorName(CUDA_ERROR_UNKNOWN, &s));
	EXPECT(s && !strcmp(s, "CUDA_ERROR_UNKNOWN"));
	EXPECT_RES(cuGetErrorName((CUresult)12345, &s),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT(s == NULL);
	EXPECT_RES(cuGetErrorString(CUDA_SUCCESS, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuInit(1), CUDA_ERROR_INVALID_VALUE);
	OK(cuInit(0));
	OK(cuInit(0));
}

/* u is the UUID the string s (8-4-4-4-12 hex digits) spells. */
static bool uuid_is(const CUuuid *u, const char *s)
{
	char t[37];

	snprintf(t, sizeof(t), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 (unsigned char)u->bytes[0], (unsigned char)u->bytes[1],
		 (unsigned char)u->bytes[2], (unsigned char)u->bytes[3],
		 (unsigned char)u->bytes[4], (unsigned char)u->bytes[5],
		 (unsigned char)u->bytes[6], (unsigned char)u->bytes[7],
		 (unsigned char)u->bytes[8], (unsigned char)u->bytes[9],
		 (unsigned char)u->bytes[10], (unsigned char)u->bytes[11],
		 (unsigned char)u->bytes[12], (unsigned char)u->bytes[13],
		 (unsigned char)u->bytes[14], (unsigned char)u->bytes[15]);
	return !strcasecmp(t, s);
}

/*
 * The vGPU's PCI location: the bus id agrees with the PCI attributes (all
 * 0), cut like a name; every spelling CUDA takes finds device 0, another
 * location is INVALID_DEVICE, text that is not one INVALID_VALUE.
 */
static void test_device_pci(void)
{
	static const char *const same[] = {
		"0000:00:00.0", "00000000:00:00.0", "00:00.0", "0:0:0",
		"0000:00:00", "0:0.0",
	};
	static const char *const other[] = {
		"0000:00:01.0", "0001:00:00.0", "00:00.1", "0000:3b:00.0",
		"7fffffff:ff:1f.7",
	};
	static const char *const bad[] = {
		"", ":", "0000:00:00.", "0000:00:20.0", "0000:00:00.8",
		"000000000:00:00.0", "0000:000:00.0", "0000:00:00.0 ",
		"80000000:00:00.0", "0000:00:00:00.0", "00.0", "0000:0g:00.0",
		"0000:00", "0000:00:00.00",
	};
	char id[32];
	CUdevice d;
	int x;

	OK(cuDeviceGetPCIBusId(id, sizeof(id), 0));
	EXPECT(!strcmp(id, "0000:00:00.0"));
	OK(cuDeviceGetPCIBusId(id, 5, 0));
	EXPECT(!strcmp(id, "0000"));
	EXPECT_RES(cuDeviceGetPCIBusId(id, sizeof(id), 1),
		   CUDA_ERROR_INVALID_DEVICE);
	EXPECT_RES(cuDeviceGetPCIBusId(id, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceGetPCIBusId(NULL, 13, 0), CUDA_ERROR_INVALID_VALUE);
	OK(cuDeviceGetAttribute(&x, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0));
	EXPECT(x == 0);
	OK(cuDeviceGetAttribute(&x, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0));
	EXPECT(x == 0);
	OK(cuDeviceGetAttribute(&x, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 0));
	EXPECT(x == 0);
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		d = -1;
		OK(cuDeviceGetByPCIBusId(&d, same[i]));
		EXPECT(d == 0);
	}
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		EXPECT_RES(cuDeviceGetByPCIBusId(&d, other[i]),
			   CUDA_ERROR_INVALID_DEVICE);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_RES(cuDeviceGetByPCIBusId(&d, bad[i]),
			   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceGetByPCIBusId(NULL, "0000:00:00.0"),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceGetByPCIBusId(&d, NULL), CUDA_ERROR_INVALID_VALUE);
}

static void test_device(void)
{
	CUdevice d = -1;
	char name[128], want[64];
	size_t total = 0;
	CUuuid u;
	int n = 0, sm = 0, x;

	OK(cuDeviceGetCount(&n));
	EXPECT(n == 1);
	OK(cuDeviceGet(&d, 0));
	EXPECT(d == 0);
	EXPECT_RES(cuDeviceGet(&d, 1), CUDA_ERROR_INVALID_DEVICE);
	EXPECT_RES(cuDeviceGet(NULL, 0), CUDA_ERROR_INVALID_VALUE);
	OK(cuDeviceGetName(name, sizeof(name), 0));
	if (on_sim) {
		snprintf(want, sizeof(want), "mdgpu vGPU%s of mdgpu sim",
			 name_type);
		EXPECT(!strcmp(name, want));
	} else {
		snprintf(want, sizeof(want), "mdgpu vGPU%s of ", name_type);
		EXPECT(!strncmp(name, want, strlen(want)) &&
		       !strstr(name, "mdgpu sim"));
	}
	EXPECT_RES(cuDeviceGetName(name, sizeof(name), 1),
		   CUDA_ERROR_INVALID_DEVICE);
	EXPECT_RES(cuDeviceGetName(name, 0, 0), CUDA_ERROR_INVALID_VALUE);
	OK(cuDeviceTotalMem(&total, 0));
	EXPECT(total == 1024 * mib);
	/* The daemon's random version-4 UUID of a socket vGPU; an mdev's
	 * own UUID over the vfio transport. */
	OK(cuDeviceGetUuid(&u, 0));
	if (vfio_uuid)
		EXPECT(uuid_is(&u, vfio_uuid));
	else
		EXPECT(((unsigned char)u.bytes[6] >> 4) == 4 &&
		       ((unsigned char)u.bytes[8] >> 6) == 2);
	OK(cuDeviceGetAttribute(&sm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
				0));
	EXPECT(sm == 132);
	/* The sim backend's table: warp 32; libcuda's own answers for what
	 * it does not implement (managed memory 0) and for unified
	 * addressing; an attribute the table lacks is INVALID_VALUE. */
	OK(cuDeviceGetAttribute(&x, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
	EXPECT(x == 32);
	OK(cuDeviceGetAttribute(&x, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0));
	EXPECT(x == 0);
	OK(cuDeviceGetAttribute(&x, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING,
				0));
	EXPECT(x == 1);
	/* The GPU's table has the memory clock; the sim's has not. */
	if (on_sim)
		EXPECT_RES(cuDeviceGetAttribute(&x,
				CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 0),
			   CUDA_ERROR_INVALID_VALUE);
	else
		OK(cuDeviceGetAttribute(&x,
				CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 0));
	EXPECT_RES(cuDeviceGetAttribute(&x, (CUdevice_attribute)0, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceGetAttribute(&x, CU_DEVICE_ATTRIBUTE_MAX, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceGetAttribute(&x,
			CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 3),
		   CUDA_ERROR_INVALID_DEVICE);
	test_device_pci();
}

static void *thread_no_ctx(void *arg)
{
	CUdeviceptr p;
	CUcontext c = (CUcontext)1;

	(void)arg;
	/* A new thread starts with no current context. */
	EXPECT_RES(cuMemAlloc(&p, 4096), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuCtxGetCurrent(&c));
	EXPECT(c == NULL);
	return NULL;
}

static void *thread_use_ctx(void *arg)
{
	EXPECT_RES(cuCtxSetCurrent((CUcontext)arg), CUDA_ERROR_INVALID_CONTEXT);
	return NULL;
}

static void test_memory(void)
{
	unsigned char *h = malloc(mib), *back = malloc(mib);
	CUdeviceptr a = 0, b = 0, base = 0, big;
	size_t fr = 0, tot = 0, fr2 = 0, sz = 0;
	uint16_t h16[9];
	uint32_t h32[5];
	CUstream s;

	for (size_t i = 0; i < mib; i++)
		h[i] = (unsigned char)(i * 7 + 3);
	OK(cuMemAlloc(&a, mib));
	OK(cuMemAlloc(&b, mib));
	EXPECT(a && b && a != b);
	OK(cuMemGetInfo(&fr, &tot));
	EXPECT(tot == 1024 * mib && fr <= tot - 2 * mib);
	OK(cuMemcpyHtoD(a, h, mib));
	OK(cuMemcpyDtoD(b, a, mib));
	memset(back, 0, mib);
	OK(cuMemcpyDtoH(back, b, mib));
	EXPECT(!memcmp(h, back, mib));
	OK(cuMemcpyHtoD(a, h, 0));	/* zero bytes: nothing to do */
	EXPECT_RES(cuMemcpyHtoD(a, NULL, 16), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemcpyDtoH(back, a + mib - 8, 16) != CUDA_SUCCESS);

	/* Memsets: bytes, 16-bit (unaligned head, odd tail), 32-bit. */
	OK(cuMemsetD8(a, 0xab, 100));
	OK(cuMemcpyDtoH(back, a, 101));
	EXPECT(back[0] == 0xab && back[99] == 0xab && back[100] == h[100]);
	OK(cuMemsetD8(a, 0, mib));
	OK(cuMemsetD16(a + 2, 0x1234, 7));
	OK(cuMemcpyDtoH(h16, a, sizeof(h16)));
	EXPECT(h16[0] == 0 && h16[1] == 0x1234 && h16[7] == 0x1234 &&
	       h16[8] == 0);
	OK(cuMemsetD16(a, 0x5555, 2));
	OK(cuMemcpyDtoH(h16, a, 6));
	EXPECT(h16[0] == 0x5555 && h16[1] == 0x5555 && h16[2] == 0x1234);
	OK(cuMemsetD32(a, 0xdeadbeef, 4));
	OK(cuMemcpyDtoH(h32, a, sizeof(h32)));
	EXPECT(h32[0] == 0xdeadbeef && h32[3] == 0xdeadbeef && h32[4] == 0);
	OK(cuMemsetD32(a, 0, 0));
	EXPECT_RES(cuMemsetD32(a + 2, 1, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD16(a + 1, 1, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD32(a, 1, mib / 4 + 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD16(a, 1, SIZE_MAX / 2 + 1),
		   CUDA_ERROR_INVALID_VALUE);

	/* Async variants on a stream run to completion before returning. */
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuMemsetD8Async(a, 0x11, 64, s));
	OK(cuMemcpyDtoHAsync(back, a, 64, s));
	EXPECT(back[0] == 0x11 && back[63] == 0x11);
	OK(cuMemcpyHtoDAsync(a, h, 64, CU_STREAM_PER_THREAD));
	OK(cuMemcpyDtoDAsync(b, a, 64, NULL));
	OK(cuStreamSynchronize(s));
	OK(cuMemcpyDtoH(back, b, 64));
	EXPECT(!memcmp(back, h, 64));
	EXPECT_RES(cuMemcpyHtoDAsync(a, h, 64, (CUstream)back),
		   CUDA_ERROR_INVALID_HANDLE);
	OK(cuStreamDestroy(s));

	/* Address ranges. */
	OK(cuMemGetAddressRange(&base, &sz, a + 12345));
	EXPECT(base == a && sz == mib);
	EXPECT_RES(cuMemGetAddressRange(&base, &sz, a + mib + (1 << 22)),
		   CUDA_ERROR_NOT_FOUND);

	/* Refusals: size 0, past the quota, double and bogus frees. */
	EXPECT_RES(cuMemAlloc(&big, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemAlloc(NULL, 16), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemAlloc(&big, 2048 * mib), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT_RES(cuMemAlloc(&big, SIZE_MAX), CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemFree(b));
	EXPECT_RES(cuMemFree(b), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemFree(a + 16), CUDA_ERROR_INVALID_VALUE);
	/* 0 is no operation, as the runtime's cudaFree(NULL) needs. */
	OK(cuMemFree(0));
	OK(cuMemGetInfo(&fr2, &tot));
	EXPECT(fr2 >= fr + mib);
	OK(cuMemFree(a));
	free(h);
	free(back);
}

/* The vGPU's whole free quota in one allocation is granted; a page more
 * is refused; the free gives all of it back. */
static void test_quota(void)
{
	CUdeviceptr all = 0, more;
	size_t fr = 0, fr2 = 1, tot = 0;

	OK(cuMemGetInfo(&fr, &tot));
	EXPECT(fr > 0 && fr <= tot && tot == 1024 * mib);
	OK(cuMemAlloc(&all, fr));
	OK(cuMemGetInfo(&fr2, &tot));
	EXPECT(fr2 == 0);
	EXPECT_RES(cuMemAlloc(&more, 4096), CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemsetD8(all + fr - 4096, 0x5a, 4096));
	OK(cuMemFree(all));
	OK(cuMemGetInfo(&fr2, &tot));
	EXPECT(fr2 == fr);
}

/*
 * --vfio: libcuda's default zero-copy area (64 MiB) is anonymous memory
 * the transport maps for DMA (VFIO_IOMMU_MAP_DMA), not the aperture's
 * tail as on the guest and socket transports, so all of it is granted
 * in one piece though the vGPU's aperture is smaller (8 MiB on
 * mdgpu-1g), and a page more is refused.  Copies from and to it are
 * single commands by IOVA that mdgpud serves through MDGPU_CTL_DMA: a
 * pattern taken from the area's last 16 MiB to the device comes back
 * into its first 16 MiB, synchronously and on a stream.  Kernels cannot
 * reach the area (no device pointer, NOT_SUPPORTED, on every backend).
 */
static void vfio_host_area(void)
{
	const size_t area = 64 * mib, n = 16 * mib;
	unsigned char *a = NULL, *hi;
	CUdeviceptr d = 0, dp;
	CUstream s;
	void *x;
	size_t i;

	OK(cuMemHostAlloc((void **)&a, area, 0));
	if (!a)
		return;
	EXPECT_RES(cuMemAllocHost(&x, 4096), CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT_RES(cuMemHostGetDevicePointer(&dp, a, 0),
		   CUDA_ERROR_NOT_SUPPORTED);
	hi = a + area - n;
	for (i = 0; i < n; i += 4096)
		memset(hi + i, (int)(i / 4096 * 13 + 1), 4096);
	memset(a, 0, n);
	OK(cuMemAlloc(&d, n));
	OK(cuMemcpyHtoD(d, hi, n));
	OK(cuMemcpyDtoH(a, d, n));
	EXPECT(!memcmp(a, hi, n));
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuMemsetD8Async(d + 4096, 0xc3, 8192, s));
	OK(cuMemcpyDtoHAsync(a + n, d, 4 * 4096, s));
	OK(cuStreamSynchronize(s));
	EXPECT(!memcmp(a + n, hi, 4096) && a[n + 4096] == 0xc3 &&
	       a[n + 3 * 4096 - 1] == 0xc3 &&
	       !memcmp(a + n + 3 * 4096, hi + 3 * 4096, 4096));
	OK(cuStreamDestroy(s));
	OK(cuMemFree(d));
	OK(cuMemFreeHost(a));
	/* All of it again once freed. */
	OK(cuMemHostAlloc((void **)&a, area, CU_MEMHOSTALLOC_PORTABLE));
	OK(cuMemFreeHost(a));
}

static void test_host_memory(void)
{
	unsigned char *p = NULL, *q = NULL, back[256];
	CUdeviceptr d;
	void *x;

	OK(cuMemHostAlloc((void **)&p, mib, CU_MEMHOSTALLOC_PORTABLE));
	OK(cuMemAllocHost((void **)&q, 4096));
	EXPECT(p && q);
	for (int i = 0; i < 256; i++)
		p[i] = (unsigned char)(255 - i);
	OK(cuMemAlloc(&d, 4096));
	OK(cuMemcpyHtoD(d, p, 256));
	OK(cuMemcpyDtoH(q, d, 256));
	memcpy(back, q, 256);
	EXPECT(!memcmp(back, p, 256));
	EXPECT_RES(cuMemHostAlloc(&x, 16, 0x80), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemHostAlloc(&x, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemHostAlloc(&x, (size_t)1 << 40, 0),
		   CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemFreeHost(p));
	EXPECT_RES(cuMemFreeHost(p), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemFreeHost(back), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemFreeHost(NULL));
	OK(cuMemFreeHost(q));
	OK(cuMemFree(d));
	if (vfio_uuid)
		vfio_host_area();
}

/* ABI 1.2 memory paths: async copies on streams, unified cuMemcpy, 2D
 * copies and memsets, pitched allocations, registered memory, pointer
 * attributes. */
static void test_memory_streams(void)
{
	enum { W = 100, H = 9 };
	unsigned char img[H][W], back[H][W], reg[4096], out[4096];
	unsigned char *pin = NULL;
	CUdeviceptr d, d2, pd, dp;
	CUDA_MEMCPY2D c;
	CUmemorytype mt = 0;
	CUcontext pc = NULL;
	CUstream s;
	CUevent ev;
	size_t pitch = 0, rsize = 0;
	void *data[2];
	CUpointer_attribute attrs[2] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					 CU_POINTER_ATTRIBUTE_RANGE_SIZE };
	unsigned int flags = 0;
	int prio = 1, pending;

	OK(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -5));
	OK(cuStreamGetPriority(s, &prio));
	EXPECT(prio == -5);
	OK(cuStreamGetFlags(s, &flags));
	EXPECT(flags == CU_STREAM_NON_BLOCKING);
	OK(cuEventCreate(&ev, 0));
	OK(cuMemAlloc(&d, 4096));
	OK(cuMemAlloc(&d2, 4096));
	OK(cuMemHostAlloc((void **)&pin, 4096, 0));
	for (int i = 0; i < 4096; i++)
		pin[i] = (unsigned char)(i * 7);
	/* Zero-copy: queued on s; the event and the stream say when. */
	OK(cuMemcpyHtoDAsync(d, pin, 4096, s));
	OK(cuMemsetD32Async(d + 64, 0xa5a5a5a5, 4, s));
	OK(cuMemcpyDtoDAsync(d2, d, 4096, s));
	OK(cuEventRecordWithFlags(ev, s, 0));
	OK(cuStreamWaitEvent(NULL, ev, 0));
	EXPECT_RES(cuStreamWaitEvent(NULL, ev, 1), CUDA_ERROR_INVALID_VALUE);
	OK(cuEventSynchronize(ev));
	pending = cuEventQuery(ev);
	EXPECT(pending == CUDA_SUCCESS);
	OK(cuStreamSynchronize(s));
	OK(cuStreamQuery(s));
	memset(out, 0, sizeof(out));
	OK(cuMemcpyDtoHAsync(out, d2, 4096, s));	/* pageable: waits */
	EXPECT(out[0] == 0 && out[1] == 7 && out[64] == 0xa5 &&
	       out[79] == 0xa5 && out[80] == (unsigned char)(80 * 7));
	/* Unified: the direction comes from the pointers. */
	memset(out, 0, sizeof(out));
	OK(cuMemcpy((CUdeviceptr)(uintptr_t)out, d2, 128));
	EXPECT(out[1] == 7 && out[64] == 0xa5);
	OK(cuMemcpy(d, (CUdeviceptr)(uintptr_t)reg, 0));
	memset(reg, 0x3c, sizeof(reg));
	OK(cuMemcpyAsync(d, (CUdeviceptr)(uintptr_t)reg, 16, s));
	OK(cuMemcpyAsync(d2, d, 16, s));
	OK(cuStreamSynchronize(s));
	OK(cuMemcpyDtoH(out, d2, 16));
	EXPECT(out[0] == 0x3c && out[15] == 0x3c);
	EXPECT_RES(cuMemcpy(0, d, 16), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemcpyDtoDAsync(d2, d + 4000, 200, s),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD32Async(d + 2, 1, 4, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD16(d, 1, 4096), CUDA_ERROR_INVALID_VALUE);

	/* 2D: a pitched image in and out, a 2D memset inside it. */
	OK(cuMemAllocPitch(&pd, &pitch, W, H, 4));
	EXPECT(pitch >= W && pitch % 512 == 0);
	EXPECT_RES(cuMemAllocPitch(&pd, &pitch, W, H, 3),
		   CUDA_ERROR_INVALID_VALUE);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			img[y][x] = (unsigned char)(x + 3 * y);
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = img;
	c.srcPitch = W;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = pd;
	c.dstPitch = pitch;
	c.WidthInBytes = W;
	c.Height = H;
	OK(cuMemcpy2D(&c));
	OK(cuMemsetD2D8(pd + 10, pitch, 0xee, 5, 3));
	/* s (non-blocking) does not wait for the legacy stream's memset. */
	OK(cuCtxSynchronize());
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
	c.srcDevice = pd;
	c.srcPitch = pitch;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = back;
	c.dstPitch = W;
	c.WidthInBytes = W;
	c.Height = H;
	OK(cuMemcpy2DAsync(&c, s));
	OK(cuStreamSynchronize(s));
	EXPECT(back[0][0] == 0 && back[8][99] == (unsigned char)(99 + 24) &&
	       back[0][10] == 0xee && back[2][14] == 0xee &&
	       back[3][10] == (unsigned char)(10 + 9) && back[0][9] == 9);
	c.Height = H + 1000000;			/* past the allocation */
	EXPECT_RES(cuMemcpy2D(&c), CUDA_ERROR_INVALID_VALUE);
	c.Height = H;
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	EXPECT_RES(cuMemcpy2D(&c), CUDA_ERROR_NOT_SUPPORTED);

	/* Registered private memory: copies are staged, kernels cannot
	 * reach it (shared memory: test_code test_cuda_host_register). */
	OK(cuMemHostRegister(reg, sizeof(reg), CU_MEMHOSTREGISTER_PORTABLE));
	EXPECT_RES(cuMemHostRegister(reg + 16, 16, 0),
		   CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	EXPECT_RES(cuMemHostRegister(out, 16, CU_MEMHOSTREGISTER_DEVICEMAP),
		   CUDA_ERROR_NOT_SUPPORTED);
	OK(cuMemcpyHtoD(d, reg, sizeof(reg)));
	EXPECT_RES(cuMemHostGetDevicePointer(&dp, reg, 0),
		   CUDA_ERROR_NOT_SUPPORTED);
	OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				 (CUdeviceptr)(uintptr_t)(reg + 100)));
	EXPECT(mt == CU_MEMORYTYPE_HOST);
	OK(cuMemHostUnregister(reg));
	EXPECT_RES(cuMemHostUnregister(reg),
		   CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);

	/* Pointer attributes: device, zero-copy host, unknown. */
	OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				 d + 100));
	EXPECT(mt == CU_MEMORYTYPE_DEVICE);
	OK(cuPointerGetAttribute(&pc, CU_POINTER_ATTRIBUTE_CONTEXT, d));
	EXPECT(pc != NULL);
	/* The boolean attributes fill an unsigned int, as NVIDIA's driver
	 * does (measured: four bytes of a preset 64-bit word change). */
	{
		uint64_t word = ~0ULL;

		OK(cuPointerGetAttribute(&word, CU_POINTER_ATTRIBUTE_IS_MANAGED,
					 d));
		EXPECT(word == 0xffffffff00000000ULL);
		word = ~0ULL;
		OK(cuPointerGetAttribute(&word, CU_POINTER_ATTRIBUTE_MAPPED,
					 (CUdeviceptr)(uintptr_t)pin));
		EXPECT(word == 0xffffffff00000001ULL);
		word = ~0ULL;
		OK(cuPointerGetAttribute(&word,
			CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, d));
		EXPECT(word == 0xffffffff00000000ULL);
	}
	OK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				 (CUdeviceptr)(uintptr_t)pin));
	EXPECT(mt == CU_MEMORYTYPE_HOST);
	OK(cuMemHostGetFlags(&flags, pin));
	EXPECT(flags == 0);
	EXPECT_RES(cuPointerGetAttribute(&mt,
					 CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					 (CUdeviceptr)(uintptr_t)out),
		   CUDA_ERROR_INVALID_VALUE);
	data[0] = &mt;
	data[1] = &rsize;
	OK(cuPointerGetAttributes(2, attrs, data, d + 8));
	EXPECT(mt == CU_MEMORYTYPE_DEVICE && rsize == 4096);
	mt = CU_MEMORYTYPE_DEVICE;
	OK(cuPointerGetAttributes(2, attrs, data,
				  (CUdeviceptr)(uintptr_t)out));
	EXPECT(mt == 0 && rsize == 0);

	OK(cuMemFreeHost(pin));
	OK(cuMemFree(pd));
	OK(cuMemFree(d));
	OK(cuMemFree(d2));
	OK(cuEventDestroy(ev));
	OK(cuStreamDestroy(s));
}

/* The retained primary context, set by test_primary. */
static CUcontext primary_ctx;

static void test_contexts(void)
{
	CUcontext primary = primary_ctx;
	CUcontext c = NULL, cur = NULL, popped = NULL;
	size_t fr0 = 0, fr1 = 0, tot;
	CUdeviceptr p;
	pthread_t t;
	unsigned flags;

	OK(cuMemGetInfo(&fr0, &tot));
	OK(cuCtxCreate(&c, NULL, 0, 0));
	OK(cuCtxGetCurrent(&cur));
	EXPECT(cur == c && c != primary);
	OK(cuCtxGetFlags(&flags));
	EXPECT(flags == 0);
	OK(cuMemAlloc(&p, 8 * mib));
	OK(cuCtxPopCurrent(&popped));
	EXPECT(popped == c);
	OK(cuCtxGetCurrent(&cur));
	EXPECT(cur == primary);
	OK(cuCtxPushCurrent(c));
	OK(cuCtxSynchronize());
	/* Destroying frees what the context owns and pops it. */
	OK(cuCtxDestroy(c));
	OK(cuCtxGetCurrent(&cur));
	EXPECT(cur == primary);
	OK(cuMemGetInfo(&fr1, &tot));
	EXPECT(fr1 == fr0);
	EXPECT_RES(cuCtxDestroy(c), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RES(cuCtxPushCurrent(c), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RES(cuCtxSetCurrent(c), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RES(cuCtxDestroy(primary), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RES(cuCtxCreate(&c, NULL, 0, 1), CUDA_ERROR_INVALID_DEVICE);
	EXPECT_RES(cuCtxCreate(&c, NULL, 0x10000, 0),
		   CUDA_ERROR_INVALID_VALUE);

	/* Another thread: no current context until it sets one; a destroyed
	 * one is refused. */
	pthread_create(&t, NULL, thread_no_ctx, NULL);
	pthread_join(t, NULL);
	pthread_create(&t, NULL, thread_use_ctx, c);
	pthread_join(t, NULL);

	/* The stack: pop to empty, then nothing to pop. */
	OK(cuCtxPopCurrent(&popped));
	EXPECT(popped == primary);
	EXPECT_RES(cuCtxPopCurrent(&popped), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RES(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RES(cuCtxGetDevice(&(CUdevice){ 0 }),
		   CUDA_ERROR_INVALID_CONTEXT);
	OK(cuCtxSetCurrent(primary));
}

/* What a host function saw: the words the stream copied before it. */
struct host_fn_seen {
	const uint32_t *words;
	CUstream stream;
	int calls, right, status;
};

static void CUDA_CB host_fn(void *p)
{
	struct host_fn_seen *h = p;

	h->calls++;
	h->right = h->words[0] == 0x5eed5eedU && h->words[1023] == 0x5eed5eedU;
}

static void CUDA_CB host_cb(CUstream s, CUresult st, void *p)
{
	struct host_fn_seen *h = p;

	h->calls++;
	h->status = st;
	h->right = s == h->stream && h->words[0] == 0x5eed5eedU;
}

/*
 * An asynchronous host function: waits (up to 5 s) for the caller to say
 * that cuLaunchHostFunc returned, tries a CUDA call (refused: the
 * function holds the vGPU), then writes the pinned word that a copy
 * queued after it takes to the device.
 */
struct host_fn_async {
	volatile int returned;
	int saw_return, cuda_call;
	uint32_t *word;
};

static void CUDA_CB host_fn_async(void *p)
{
	struct host_fn_async *a = p;
	CUdevice dev;

	for (int i = 0; i < 5000 && !a->returned; i++)
		usleep(1000);
	a->saw_return = a->returned;
	a->cuda_call = cuCtxGetDevice(&dev);
	*a->word = 0xf00dfaceU;
}

/*
 * cuLaunchHostFunc / cuStreamAddCallback: the function runs after the
 * stream's earlier work (an async copy into pinned memory it reads),
 * once; bad arguments and a capturing stream are refused and call
 * nothing.  Over the socket transport they are asynchronous: the call
 * returns before the function ran, work queued after it runs after it
 * (a copy of what it wrote), and a CUDA call from it is refused with
 * CUDA_ERROR_NOT_PERMITTED; elsewhere they run in the caller.
 */
static void test_host_functions(CUstream s)
{
	struct host_fn_seen h = { 0 };
	struct host_fn_async a = { 0 };
	bool async = getenv("MDGPU_SOCKET") && !getenv("MDGPU_VFIO") &&
		     !getenv("MDGPU_DEVICE");
	CUdeviceptr d;
	uint32_t *pinned, back = 0;
	CUgraph g;

	OK(cuMemAlloc(&d, 4096));
	OK(cuMemAllocHost((void **)&pinned, 4096));
	memset(pinned, 0, 4096);
	h.words = pinned;
	h.stream = s;
	OK(cuMemsetD32Async(d, 0x5eed5eedU, 1024, s));
	OK(cuMemcpyDtoHAsync(pinned, d, 4096, s));
	OK(cuLaunchHostFunc(s, host_fn, &h));
	OK(cuStreamSynchronize(s));
	EXPECT(h.calls == 1 && h.right);
	memset(pinned, 0, 4096);
	h.calls = h.right = 0;
	h.status = -1;
	OK(cuMemcpyDtoHAsync(pinned, d, 4096, s));
	OK(cuStreamAddCallback(s, host_cb, &h, 0));
	OK(cuStreamSynchronize(s));
	EXPECT(h.calls == 1 && h.right && h.status == CUDA_SUCCESS);
	OK(cuLaunchHostFunc(CU_STREAM_PER_THREAD, host_fn, &h));
	OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
	EXPECT(h.calls == 2);

	/* Asynchrony and order (synchronously the function would wait its
	 * 5 s for a return that comes after it). */
	if (async) {
		a.word = pinned + 1;
		OK(cuLaunchHostFunc(s, host_fn_async, &a));
		a.returned = 1;
		OK(cuMemcpyHtoDAsync(d + 4, pinned + 1, 4, s));
		OK(cuMemcpyDtoH(&back, d + 4, 4));
		EXPECT(a.saw_return == 1);
		EXPECT(a.cuda_call == CUDA_ERROR_NOT_PERMITTED);
		EXPECT(back == 0xf00dfaceU);
		OK(cuMemsetD32(d, 0x5eed5eedU, 1024));
	}
	/* The per-thread-default-stream exports (nvcc --default-stream
	 * per-thread): the legacy stream handle means this thread's. */
	{
		CUresult (*fn_ptsz)(CUstream, CUhostFn, void *) =
			(CUresult (*)(CUstream, CUhostFn, void *))
			dlsym(RTLD_DEFAULT, "cuLaunchHostFunc_ptsz");
		CUresult (*cb_ptsz)(CUstream, CUstreamCallback, void *,
				    unsigned int) =
			(CUresult (*)(CUstream, CUstreamCallback, void *,
				      unsigned int))
			dlsym(RTLD_DEFAULT, "cuStreamAddCallback_ptsz");

		EXPECT(fn_ptsz && cb_ptsz);
		if (fn_ptsz && cb_ptsz) {
			OK(fn_ptsz(NULL, host_fn, &h));
			OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
			EXPECT(h.calls == 3);
			h.stream = CU_STREAM_PER_THREAD;
			h.status = -1;
			OK(cuMemcpyDtoHAsync(pinned, d, 4096,
					     CU_STREAM_PER_THREAD));
			OK(cb_ptsz(NULL, host_cb, &h, 0));
			OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
			EXPECT(h.calls == 4 && h.right &&
			       h.status == CUDA_SUCCESS);
			h.stream = s;
		}
	}

	/* The callback gets the stream as the caller passed it. */
	h.stream = NULL;
	h.calls = 0;
	OK(cuMemcpyDtoHAsync(pinned, d, 4096, NULL));
	OK(cuStreamAddCallback(NULL, host_cb, &h, 0));
	OK(cuCtxSynchronize());
	EXPECT(h.calls == 1 && h.right && h.status == CUDA_SUCCESS);
	h.stream = s;

	h.calls = 0;
	EXPECT_RES(cuLaunchHostFunc(s, NULL, &h), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamAddCallback(s, NULL, &h, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamAddCallback(s, host_cb, &h, 1),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLaunchHostFunc((CUstream)&h, host_fn, &h),
		   CUDA_ERROR_INVALID_HANDLE);
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
	EXPECT_RES(cuLaunchHostFunc(s, host_fn, &h),
		   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RES(cuStreamEndCapture(s, &g),
		   CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT(h.calls == 0);
	OK(cuMemFreeHost(pinned));
	OK(cuMemFree(d));
}

static void test_streams_events(void)
{
	CUevent e0, e1, nt;
	CUstream s;
	float ms = -1;
	int lo = 1, hi = 1;
	CUstreamCaptureStatus cs;

	OK(cuStreamCreate(&s, 0));
	OK(cuStreamQuery(s));
	OK(cuStreamSynchronize(s));
	OK(cuStreamSynchronize(NULL));
	OK(cuStreamIsCapturing(s, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_NONE);
	/* The backend's range (the sim answers the H100's, 0 .. -5). */
	OK(cuCtxGetStreamPriorityRange(&lo, &hi));
	EXPECT(lo == 0 && hi == -5);
	EXPECT_RES(cuStreamCreate(&s, 0x8), CUDA_ERROR_INVALID_VALUE);
	test_host_functions(s);

	OK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
	OK(cuEventCreate(&e1, CU_EVENT_BLOCKING_SYNC));
	OK(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
	EXPECT_RES(cuEventElapsedTime(&ms, e0, e1), CUDA_ERROR_INVALID_HANDLE);
	OK(cuEventRecord(e0, s));
	OK(cuEventRecord(nt, s));
	OK(cuEventRecord(e1, NULL));
	OK(cuEventSynchronize(e1));
	OK(cuEventQuery(e1));
	OK(cuEventElapsedTime(&ms, e0, e1));
	EXPECT(ms >= 0);
	EXPECT_RES(cuEventElapsedTime(&ms, e0, nt), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuEventRecord((CUevent)&ms, s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuEventCreate(&e0, 0x100), CUDA_ERROR_INVALID_VALUE);
	OK(cuEventDestroy(e0));
	OK(cuEventDestroy(e1));
	OK(cuEventDestroy(nt));
	EXPECT_RES(cuEventDestroy(e1), CUDA_ERROR_INVALID_HANDLE);

	OK(cuStreamDestroy(s));
	EXPECT_RES(cuStreamDestroy(s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
}

static const char ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 a, .param .u32 b)\n{\n\tret;\n}\n";

static void test_modules(void)
{
	static const uint32_t fatbin[20] = { 0xba55ed50U, 0x00100001U, 64, 0 };
	static const unsigned char badelf[64] = { 0x7f, 'E', 'L', 'F', 1 };
	CUmodule m;
	CUfunction f;
	CUjit_option opt = CU_JIT_MAX_REGISTERS;
	void *val = (void *)(uintptr_t)32;

	/* The sim backend loads no code; the cuda backend loads the PTX and
	 * finds its kernel.  The fatbin, of zeroed entries, is not whole by
	 * its own headers: refused on every backend before it is sent. */
	if (on_sim) {
		EXPECT_RES(cuModuleLoadData(&m, ptx), CUDA_ERROR_NOT_SUPPORTED);
		EXPECT_RES(cuModuleLoadDataEx(&m, ptx, 1, &opt, &val),
			   CUDA_ERROR_NOT_SUPPORTED);
	} else {
		OK(cuModuleLoadDataEx(&m, ptx, 1, &opt, &val));
		OK(cuModuleGetFunction(&f, m, "k"));
		OK(cuModuleUnload(m));
	}
	EXPECT_RES(cuModuleLoadData(&m, fatbin), CUDA_ERROR_INVALID_IMAGE);
	EXPECT_RES(cuModuleLoadDataEx(&m, ptx, 1, NULL, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuModuleLoadData(&m, badelf), CUDA_ERROR_INVALID_IMAGE);
	EXPECT_RES(cuModuleLoadData(&m, ""), CUDA_ERROR_INVALID_IMAGE);
	EXPECT_RES(cuModuleLoadData(NULL, ptx), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuModuleGetFunction(&f, (CUmodule)&m, "k"),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuModuleUnload((CUmodule)&m), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLaunchKernel((CUfunction)&m, 1, 1, 1, 1, 1, 1, 0, NULL,
				  NULL, NULL), CUDA_ERROR_INVALID_HANDLE);
}

typedef CUresult (*pfn_alloc)(CUdeviceptr *, size_t);

static void *lookup(const char *name, int version, cuuint64_t flags,
		    CUdriverProcAddressQueryResult *st, CUresult *res)
{
	void *p = (void *)1;

	*res = cuGetProcAddress(name, &p, version, flags, st);
	return p;
}

static void test_proc_address(void)
{
	const cuuint64_t ptds = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	const cuuint64_t legacy = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
	CUdriverProcAddressQueryResult st;
	CUdeviceptr d = 0;
	CUresult r;
	void *p;

	p = lookup("cuMemAlloc", 13000, 0, &st, &r);
	EXPECT(r == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS);
	EXPECT(p == dlsym(RTLD_DEFAULT, "cuMemAlloc_v2"));
	if (p) {
		OK(((pfn_alloc)p)(&d, 4096));
		OK(cuMemFree(d));
	}
	p = lookup("cuMemAlloc", 3020, legacy, &st, &r);
	EXPECT(p == dlsym(RTLD_DEFAULT, "cuMemAlloc_v2"));
	p = lookup("cuMemAlloc", 2000, 0, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuMemAlloc"));
	p = lookup("cuMemAlloc", 1000, 0, &st, &r);
	EXPECT(r == CUDA_SUCCESS && !p &&
	       st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	p = lookup("cuNoSuchFunction", 13000, 0, &st, &r);
	EXPECT(r == CUDA_SUCCESS && !p &&
	       st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	p = lookup("cuMemAlloc_v2", 13000, 0, &st, &r);
	EXPECT(!p && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	lookup("cuMemAlloc", 13010, 0, &st, &r);
	EXPECT(r == CUDA_ERROR_INVALID_VALUE);
	lookup("cuMemAlloc", 13000, 4, &st, &r);
	EXPECT(r == CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuGetProcAddress(NULL, &p, 13000, 0, NULL),
		   CUDA_ERROR_INVALID_VALUE);

	/* Versions select _vN, the flag selects _ptds/_ptsz. */
	p = lookup("cuCtxCreate", 13000, 0, &st, &r);
	EXPECT(p == dlsym(RTLD_DEFAULT, "cuCtxCreate_v4"));
	p = lookup("cuCtxCreate", 12000, 0, &st, &r);
	EXPECT(p == dlsym(RTLD_DEFAULT, "cuCtxCreate_v3"));
	p = lookup("cuMemcpyHtoD", 13000, ptds, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuMemcpyHtoD_v2_ptds"));
	p = lookup("cuMemcpyHtoD", 13000, legacy, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuMemcpyHtoD_v2"));
	/* _ptds appeared in 7.0: before, the legacy variant. */
	p = lookup("cuMemcpyHtoD", 6050, ptds, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuMemcpyHtoD_v2"));
	p = lookup("cuLaunchKernel", 13000, ptds, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuLaunchKernel_ptsz"));
	p = lookup("cuStreamGetCaptureInfo", 12030, ptds, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuStreamGetCaptureInfo_v3_ptsz"));
	p = lookup("cuGetProcAddress", 12000, 0, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2"));
	p = lookup("cuDriverGetVersion", 13000, 0, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuDriverGetVersion"));

	/* Unimplemented: found, and refuses when called. */
	p = lookup("cuGraphClone", 13000, 0, &st, &r);
	EXPECT(p && st == CU_GET_PROC_ADDRESS_SUCCESS);
	if (p)
		EXPECT(((CUresult (*)(CUgraph *, CUgraph))p)(NULL, NULL) ==
		       CUDA_ERROR_NOT_SUPPORTED);
	/* Graph entry points by version. */
	p = lookup("cuStreamBeginCapture", 13000, 0, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuStreamBeginCapture_v2"));
	p = lookup("cuStreamBeginCapture", 13000, ptds, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuStreamBeginCapture_v2_ptsz"));
	p = lookup("cuStreamGetCaptureInfo", 13000, 0, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuStreamGetCaptureInfo_v3"));
	p = lookup("cuGraphInstantiate", 13000, 0, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, "cuGraphInstantiate_v2"));
}

static void test_unsupported(void)
{
	CUdeviceptr d;
	const void *tbl = (const void *)1;
	CUuuid id = { { 0 } };
	int x;

	EXPECT_RES(cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuDeviceGetLuid((char *)&d, (unsigned *)&x, 0),
		   CUDA_ERROR_NOT_SUPPORTED);
	/* A table not served (NVIDIA's runtime's first request is one). */
	EXPECT_RES(cuGetExportTable(&tbl, &id), CUDA_ERROR_NOT_FOUND);
	EXPECT(tbl == NULL);
}

/* TOOLS_TLS slot 2 stores the current context (cuBLASLt needs it). */
static void test_tools_tls(void)
{
	static const CUuuid tls_id = { {
		(char)0x42, (char)0xd8, 0x5a, (char)0x81, 0x23, (char)0xf6,
		(char)0xcb, 0x47, (char)0x82, (char)0x98, (char)0xf6,
		(char)0xe7, (char)0x8a, 0x3a, (char)0xec, (char)0xdc } };
	CUresult (*get)(CUcontext *, uintptr_t, uintptr_t);
	const void *const *tbl = NULL;
	CUcontext pctx, cur, got = (CUcontext)1, saved;

	OK(cuGetExportTable((const void **)&tbl, &tls_id));
	EXPECT(tbl && (uintptr_t)tbl[0] >= 3 * sizeof(void *));
	if (!tbl)
		return;
	get = (CUresult (*)(CUcontext *, uintptr_t, uintptr_t))tbl[2];
	OK(cuDevicePrimaryCtxRetain(&pctx, 0));
	OK(cuCtxPushCurrent(pctx));
	OK(get(&got, 0x37, 1));
	EXPECT(got == pctx);
	EXPECT_RES(get(NULL, 0, 0), CUDA_ERROR_INVALID_VALUE);
	OK(cuCtxPopCurrent(&saved));
	EXPECT(saved == pctx);
	/* No current context: NULL, as cuCtxGetCurrent answers; and
	 * cuMemFree(0) needs no context either. */
	OK(cuCtxGetCurrent(&cur));
	if (cur == NULL) {
		got = (CUcontext)1;
		OK(get(&got, 0, 0));
		EXPECT(got == NULL);
		OK(cuMemFree(0));
	}
	OK(cuDevicePrimaryCtxRelease(0));
}

/* cuCtxGetId and TOOLS_CONTEXT slot 4 (cuBLASLt asks the latter). */
static void test_ctx_id(void)
{
	static const CUuuid tctx_id = { {
		0x21, 0x31, (char)0x8c, 0x60, (char)0x97, 0x14, 0x32, 0x48,
		(char)0x8c, (char)0xa6, 0x41, (char)0xff, 0x73, 0x24,
		(char)0xc8, (char)0xf2 } };
	CUresult (*get)(CUcontext, unsigned long long *);
	const void *const *tbl = NULL;
	unsigned long long a = 0, b = 0, c = 0;
	CUcontext pctx, ctx, saved;

	OK(cuDevicePrimaryCtxRetain(&pctx, 0));
	OK(cuCtxGetId(pctx, &a));
	EXPECT(a >= 1);
	OK(cuCtxCreate(&ctx, NULL, 0, 0));
	OK(cuCtxGetId(NULL, &b));		/* the current: the new one */
	EXPECT(b > a);
	OK(cuGetExportTable((const void **)&tbl, &tctx_id));
	EXPECT(tbl && (uintptr_t)tbl[0] == 93 * sizeof(void *));
	if (tbl) {
		get = (CUresult (*)(CUcontext, unsigned long long *))tbl[4];
		OK(get(pctx, &c));
		EXPECT(c == a);
	}
	EXPECT_RES(cuCtxGetId(pctx, NULL), CUDA_ERROR_INVALID_VALUE);
	OK(cuCtxPopCurrent(&saved));
	EXPECT(saved == ctx);
	OK(cuCtxDestroy(ctx));
	EXPECT_RES(cuCtxGetId(ctx, &c), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuDevicePrimaryCtxRelease(0));
}

/*
 * cuStreamGetId, and TOOLS_CONTEXT slots 51 (a stream's object) and 39
 * (its id) as cuBLAS calls them: ids unique in the process, never reused,
 * the default streams one stream with its context's id.
 */
static void test_stream_id(void)
{
	static const CUuuid tctx_id = { {
		0x21, 0x31, (char)0x8c, 0x60, (char)0x97, 0x14, 0x32, 0x48,
		(char)0x8c, (char)0xa6, 0x41, (char)0xff, 0x73, 0x24,
		(char)0xc8, (char)0xf2 } };
	CUresult (*obj_of)(CUcontext, CUstream, void **);
	CUresult (*id_of)(CUcontext, void *, unsigned long long *);
	unsigned long long d = 0, p = 0, l = 0, s1 = 0, s2 = 0, s3 = 0, o = 0;
	unsigned long long other = 0, v = 0;
	const void *const *tbl = NULL;
	CUcontext pctx, ctx, saved;
	CUstream a, b, c;
	void *obj = NULL;

	OK(cuGetExportTable((const void **)&tbl, &tctx_id));
	EXPECT(tbl != NULL);
	if (!tbl)
		return;
	obj_of = (CUresult (*)(CUcontext, CUstream, void **))tbl[51];
	id_of = (CUresult (*)(CUcontext, void *, unsigned long long *))tbl[39];

	OK(cuDevicePrimaryCtxRetain(&pctx, 0));
	OK(cuCtxPushCurrent(pctx));
	OK(cuStreamGetId(NULL, &d));
	OK(cuStreamGetId(CU_STREAM_LEGACY, &l));
	OK(cuStreamGetId(CU_STREAM_PER_THREAD, &p));
	EXPECT(d >= 1 && l == d && p != d);	/* a stream of its own */
	OK(cuStreamCreate(&a, 0));
	OK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
	OK(cuStreamGetId(a, &s1));
	OK(cuStreamGetId(b, &s2));
	EXPECT(s1 > d && s2 > s1);
	OK(cuStreamDestroy(b));
	EXPECT_RES(cuStreamGetId(b, &v), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(obj_of(pctx, b, &obj), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(id_of(pctx, (void *)b, &o), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuStreamGetId(a, NULL), CUDA_ERROR_INVALID_VALUE);
	/* c may reuse b's address: b is not named after this. */
	OK(cuStreamCreate(&c, 0));
	OK(cuStreamGetId(c, &s3));
	EXPECT(s3 > s2);			/* never reused */

	/* Another context: its own default stream id. */
	OK(cuCtxCreate(&ctx, NULL, 0, 0));
	OK(cuStreamGetId(NULL, &other));
	EXPECT(other != d && other > s3);
	OK(cuStreamGetId(a, &v));		/* a created stream: its own */
	EXPECT(v == s1);

	OK(obj_of(pctx, NULL, &obj));
	EXPECT(obj != NULL);
	OK(id_of(pctx, obj, &o));
	EXPECT(o == d);				/* pctx's, not the current's */
	OK(obj_of(ctx, CU_STREAM_LEGACY, &obj));
	OK(id_of(ctx, obj, &o));
	EXPECT(o == other);
	OK(obj_of(pctx, a, &obj));
	OK(id_of(pctx, obj, &o));
	EXPECT(o == s1);
	EXPECT_RES(obj_of(pctx, a, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(id_of(pctx, NULL, &o), CUDA_ERROR_INVALID_VALUE);

	OK(cuCtxPopCurrent(&saved));
	EXPECT(saved == ctx);
	OK(cuCtxDestroy(ctx));
	OK(cuStreamDestroy(a));
	OK(cuStreamDestroy(c));
	OK(cuCtxPopCurrent(&saved));
	OK(cuDevicePrimaryCtxRelease(0));
}

/* ---------------------------------------------------------------- */
/* The per-thread default stream (CU_STREAM_PER_THREAD, _ptsz, _ptds).  */

static CUresult (*ptds_obj_of)(CUcontext, CUstream, void **);

/* What a thread sees of its per-thread stream of ctx. */
struct ptds_thread {
	CUcontext ctx;
	pthread_barrier_t *together;	/* waited on before exiting, if set */
	CUdeviceptr d;			/* 64 bytes set to 0x5a there, if set */
	unsigned long long id;
	void *obj;			/* TOOLS_CONTEXT slot 51's object */
	CUresult r;			/* the first failure */
};

static void *ptds_thread_main(void *arg)
{
	struct ptds_thread *t = arg;

	t->r = cuCtxSetCurrent(t->ctx);
	if (!t->r)
		t->r = cuStreamGetId(CU_STREAM_PER_THREAD, &t->id);
	if (!t->r && t->d)
		t->r = cuMemsetD8Async(t->d, 0x5a, 64, CU_STREAM_PER_THREAD);
	if (!t->r && t->d)
		t->r = cuStreamSynchronize(CU_STREAM_PER_THREAD);
	if (!t->r)
		t->r = ptds_obj_of(t->ctx, CU_STREAM_PER_THREAD, &t->obj);
	if (t->together)
		pthread_barrier_wait(t->together);
	return NULL;
}

/* The per-thread variant of `name` that cuGetProcAddress gives with the
 * per-thread flag: the export `sym`, not the legacy variant. */
static void *ptds_fn(const char *name, const char *sym)
{
	CUdriverProcAddressQueryResult st;
	CUresult r;
	void *p, *legacy;

	p = lookup(name, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
		   &st, &r);
	legacy = lookup(name, 13000, 0, &st, &r);
	EXPECT(p && p == dlsym(RTLD_DEFAULT, sym) && p != legacy);
	return p == dlsym(RTLD_DEFAULT, sym) ? p : NULL;
}

/* Each thread's own blocking stream per context, made on first use and
 * gone with its thread or its context; the legacy stream stays NULL's. */
static void test_ptds(void)
{
	static const CUuuid tctx_id = { {
		0x21, 0x31, (char)0x8c, 0x60, (char)0x97, 0x14, 0x32, 0x48,
		(char)0x8c, (char)0xa6, 0x41, (char)0xff, 0x73, 0x24,
		(char)0xc8, (char)0xf2 } };
	CUresult (*id_of)(CUcontext, void *, unsigned long long *);
	CUresult (*get_id)(CUstream, unsigned long long *);
	CUresult (*memset32)(CUdeviceptr, unsigned int, size_t, CUstream);
	CUresult (*dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*htod)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*sync)(CUstream);
	CUresult (*begin)(CUstream, CUstreamCaptureMode);
	CUresult (*capturing)(CUstream, CUstreamCaptureStatus *);
	CUresult (*end)(CUstream, CUgraph *);
	CUresult (*launch)(CUgraphExec, CUstream);
	unsigned long long legacy = 0, mine = 0, v = 0;
	const void *const *tbl = NULL;
	struct ptds_thread a, b;
	CUstreamCaptureStatus cs;
	pthread_barrier_t together;
	pthread_t ta, tb;
	uint32_t in[1024], out[1024];
	unsigned int flags = 1;
	CUcontext ctx, got, c2;
	CUgraphExec x;
	CUdeviceptr d;
	CUgraph g;
	void *obj, *obj2;
	int prio = 1;
	size_t n = 0;

	OK(cuGetExportTable((const void **)&tbl, &tctx_id));
	get_id = ptds_fn("cuStreamGetId", "cuStreamGetId_ptsz");
	memset32 = ptds_fn("cuMemsetD32Async", "cuMemsetD32Async_ptsz");
	dtoh = ptds_fn("cuMemcpyDtoH", "cuMemcpyDtoH_v2_ptds");
	begin = ptds_fn("cuStreamBeginCapture", "cuStreamBeginCapture_v2_ptsz");
	capturing = ptds_fn("cuStreamIsCapturing", "cuStreamIsCapturing_ptsz");
	end = ptds_fn("cuStreamEndCapture", "cuStreamEndCapture_ptsz");
	launch = ptds_fn("cuGraphLaunch", "cuGraphLaunch_ptsz");
	htod = dlsym(RTLD_DEFAULT, "cuMemcpyHtoDAsync_v2_ptsz");
	sync = dlsym(RTLD_DEFAULT, "cuStreamSynchronize_ptsz");
	if (!tbl || !get_id || !memset32 || !dtoh || !begin || !capturing ||
	    !end || !launch || !htod || !sync) {
		EXPECT(!"per-thread entry points or TOOLS_CONTEXT missing");
		return;
	}
	ptds_obj_of = (CUresult (*)(CUcontext, CUstream, void **))tbl[51];
	id_of = (CUresult (*)(CUcontext, void *, unsigned long long *))tbl[39];
	OK(cuCtxGetCurrent(&ctx));

	/* Plain NULL is the legacy stream; CU_STREAM_PER_THREAD, and NULL
	 * through a _ptsz entry point, this thread's own. */
	OK(cuStreamGetId(NULL, &legacy));
	OK(cuStreamGetId(CU_STREAM_PER_THREAD, &mine));
	EXPECT(mine != legacy);
	OK(get_id(NULL, &v));
	EXPECT(v == mine);
	OK(get_id(CU_STREAM_LEGACY, &v));
	EXPECT(v == legacy);
	OK(cuStreamGetFlags(CU_STREAM_PER_THREAD, &flags));
	EXPECT(flags == 0);			/* blocking */
	OK(cuStreamGetPriority(CU_STREAM_PER_THREAD, &prio));
	EXPECT(prio == 0);
	OK(cuStreamGetCtx(CU_STREAM_PER_THREAD, &got));
	EXPECT(got == ctx);
	OK(ptds_obj_of(ctx, CU_STREAM_PER_THREAD, &obj));
	EXPECT(obj != CU_STREAM_LEGACY && obj != CU_STREAM_PER_THREAD);
	OK(id_of(ctx, obj, &v));
	EXPECT(v == mine);
	/* Not destroyed, by name or by object. */
	EXPECT_RES(cuStreamDestroy(CU_STREAM_PER_THREAD),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuStreamDestroy((CUstream)obj), CUDA_ERROR_INVALID_HANDLE);
	OK(cuStreamGetId(CU_STREAM_PER_THREAD, &v));
	EXPECT(v == mine);

	/* Work through the per-thread symbols lands. */
	OK(cuMemAlloc(&d, sizeof(in)));
	OK(memset32(d, 0x01020304, 1024, NULL));
	memset(out, 0, sizeof(out));
	OK(dtoh(out, d, sizeof(out)));
	EXPECT(out[0] == 0x01020304 && out[1023] == 0x01020304);
	for (unsigned i = 0; i < 1024; i++)
		in[i] = i * 3;
	OK(htod(d, in, sizeof(in), NULL));
	OK(sync(NULL));
	OK(cuMemcpyDtoH(out, d, sizeof(out)));
	EXPECT(!memcmp(in, out, sizeof(in)));

	/* Two threads alive at once: each a stream of its own, which goes
	 * when the thread exits. */
	pthread_barrier_init(&together, NULL, 2);
	a = (struct ptds_thread){ .ctx = ctx, .together = &together, .d = d };
	b = (struct ptds_thread){ .ctx = ctx, .together = &together,
				  .d = d + 64 };
	pthread_create(&ta, NULL, ptds_thread_main, &a);
	pthread_create(&tb, NULL, ptds_thread_main, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_barrier_destroy(&together);
	OK(a.r);
	OK(b.r);
	EXPECT(a.id != b.id && a.id != mine && b.id != mine &&
	       a.id != legacy && b.id != legacy);
	EXPECT(a.obj && b.obj && a.obj != b.obj && a.obj != obj);
	EXPECT_RES(cuStreamQuery((CUstream)a.obj), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuStreamQuery((CUstream)b.obj), CUDA_ERROR_INVALID_HANDLE);
	OK(cuMemcpyDtoH(out, d, 128));
	EXPECT(out[0] == 0x5a5a5a5a && out[31] == 0x5a5a5a5a);
	/* Without a current context there is none. */
	a = (struct ptds_thread){ .ctx = NULL };
	pthread_create(&ta, NULL, ptds_thread_main, &a);
	pthread_join(ta, NULL);
	EXPECT(a.r == CUDA_ERROR_INVALID_CONTEXT);

	/* Capture on the per-thread stream, through the _ptsz symbols; the
	 * legacy stream is beside a blocking stream's capture, another
	 * thread's per-thread stream is not. */
	OK(begin(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(capturing(NULL, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	EXPECT_RES(cuStreamIsCapturing(NULL, &cs),
		   CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
	OK(memset32(d, 0xdeadbeef, 1024, NULL));	/* a node */
	a = (struct ptds_thread){ .ctx = ctx, .d = d + 256 };
	pthread_create(&ta, NULL, ptds_thread_main, &a);
	pthread_join(ta, NULL);
	OK(a.r);
	OK(end(NULL, &g));
	OK(cuGraphGetNodes(g, NULL, &n));
	EXPECT(n == 1);
	OK(cuMemcpyDtoH(out, d, 512));
	EXPECT(out[0] == 0x5a5a5a5a && out[64] == 0x5a5a5a5a &&
	       out[100] == 300);			/* not run yet */
	OK(cuGraphInstantiate(&x, g, 0));
	OK(launch(x, NULL));
	OK(sync(NULL));
	OK(cuMemcpyDtoH(out, d, sizeof(out)));
	EXPECT(out[0] == 0xdeadbeef && out[1023] == 0xdeadbeef);
	OK(cuGraphExecDestroy(x));
	OK(cuGraphDestroy(g));

	/* Another context: another stream, gone with its context. */
	OK(cuCtxCreate(&c2, NULL, 0, 0));
	OK(cuStreamGetId(CU_STREAM_PER_THREAD, &v));
	EXPECT(v != mine && v != legacy);
	OK(ptds_obj_of(c2, CU_STREAM_PER_THREAD, &obj2));
	EXPECT(obj2 != obj);
	OK(cuCtxDestroy(c2));
	EXPECT_RES(cuStreamQuery((CUstream)obj2), CUDA_ERROR_INVALID_HANDLE);
	OK(cuStreamGetId(CU_STREAM_PER_THREAD, &v));
	EXPECT(v == mine);
	OK(cuMemFree(d));
}

/* ---------------------------------------------------------------- */
/* Stream capture and graphs (the sim backend runs memsets and copies). */

/* The nodes of g in creation order (free() them), *n of them. */
static CUgraphNode *graph_nodes(CUgraph g, size_t *n)
{
	CUgraphNode *v;

	*n = 0;
	if (cuGraphGetNodes(g, NULL, n) != CUDA_SUCCESS)
		return NULL;
	v = calloc(*n + 1, sizeof(*v));
	if (v && cuGraphGetNodes(g, v, n) != CUDA_SUCCESS) {
		free(v);
		return NULL;
	}
	return v;
}

static CUgraphNodeType node_type(CUgraphNode n)
{
	CUgraphNodeType t = (CUgraphNodeType)-1;

	cuGraphNodeGetType(n, &t);
	return t;
}

/* What the graph of test_capture_replay computes from `in`. */
static void replay_expect(unsigned char *want, const unsigned char *in)
{
	memcpy(want, in, 4096);
	memset(want + 64, 0xa5, 16);
	for (int row = 0; row < 3; row++)
		memset(want + 1024 + row * 64, 0xee, 8);
}

/* Memsets and copies captured on one stream, replayed with new inputs
 * on several streams; the graph outlives nothing it needs. */
static void test_capture_replay(void)
{
	unsigned char *in = NULL, *out = NULL, want[4096], back[4096];
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
	const CUgraphNode *deps = NULL;
	const CUgraphEdgeData *edges = NULL;
	CUgraphNode *nodes, roots[2], dep[2];
	CUgraph g = NULL, cg = NULL;
	CUgraphExec x = NULL;
	CUdeviceptr d1, d2;
	cuuint64_t id = 0, id2 = 0, xflags = 0;
	size_t n = 0, nd = 9;
	CUstream s, s2;
	static const CUgraphNodeType types[5] = {
		CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_MEMSET,
		CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_MEMSET,
		CU_GRAPH_NODE_TYPE_MEMCPY };

	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	OK(cuMemAlloc(&d1, 4096));
	OK(cuMemAlloc(&d2, 4096));
	OK(cuMemHostAlloc((void **)&in, 4096, 0));
	OK(cuMemHostAlloc((void **)&out, 4096, 0));
	OK(cuMemsetD8(d1, 0x11, 4096));
	OK(cuCtxSynchronize());		/* s, s2 do not wait for it */
	memset(out, 0x77, 4096);

	/* Not capturing: status NONE and success, everywhere. */
	OK(cuStreamIsCapturing(s, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_NONE);
	cs = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	OK(cuStreamGetCaptureInfo(s, &cs, &id, &cg, &deps, &edges, &nd));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_NONE);
	OK(cuStreamIsCapturing(NULL, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_NONE);
	EXPECT_RES(cuStreamIsCapturing(s, NULL), CUDA_ERROR_INVALID_VALUE);

	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuStreamIsCapturing(s, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	OK(cuStreamGetCaptureInfo(s, &cs, &id, &cg, &deps, &edges, &nd));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && cg &&
	       nd == 0);
	EXPECT_RES(cuStreamGetCaptureInfo(s, &cs, NULL, NULL, NULL, &edges,
					  NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuGraphDestroy(cg), CUDA_ERROR_ILLEGAL_STATE);
	EXPECT_RES(cuGraphInstantiateWithFlags(&x, cg, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL),
		   CUDA_ERROR_ILLEGAL_STATE);
	OK(cuMemcpyHtoDAsync(d1, in, 4096, s));
	OK(cuStreamGetCaptureInfo(s, &cs, &id2, NULL, &deps, &edges, &nd));
	EXPECT(id2 == id && nd == 1 && deps && edges &&
	       node_type(deps[0]) == CU_GRAPH_NODE_TYPE_MEMCPY &&
	       edges[0].type == 0 && edges[0].from_port == 0);
	OK(cuMemsetD32Async(d1 + 64, 0xa5a5a5a5, 4, s));
	OK(cuMemcpyDtoDAsync(d2, d1, 4096, s));
	OK(cuMemsetD2D8Async(d2 + 1024, 64, 0xee, 8, 3, s));
	OK(cuMemcpyDtoHAsync(out, d2, 4096, s));
	OK(cuStreamEndCapture(s, &g));
	EXPECT(g == cg);
	OK(cuStreamIsCapturing(s, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_NONE);

	/* Nothing ran. */
	OK(cuMemcpyDtoH(back, d1, 16));
	EXPECT(back[0] == 0x11 && back[15] == 0x11 && out[0] == 0x77);

	/* Five nodes in a chain, in capture order. */
	nodes = graph_nodes(g, &n);
	EXPECT(nodes && n == 5);
	for (size_t i = 0; nodes && i < n && i < 5; i++) {
		EXPECT(node_type(nodes[i]) == types[i]);
		nd = 2;
		OK(cuGraphNodeGetDependencies(nodes[i], dep, NULL, &nd));
		EXPECT(i ? nd == 1 && dep[0] == nodes[i - 1] && !dep[1] :
			   nd == 0 && !dep[0] && !dep[1]);
	}
	nd = 2;
	OK(cuGraphGetRootNodes(g, roots, &nd));
	EXPECT(nd == 1 && nodes && roots[0] == nodes[0] && roots[1] == NULL);
	nd = 0;
	OK(cuGraphGetEdges(g, NULL, NULL, NULL, &nd));
	EXPECT(nd == 4);
	if (nodes && n == 5) {
		nd = 1;
		OK(cuGraphNodeGetDependentNodes(nodes[3], dep, NULL, &nd));
		EXPECT(nd == 1 && dep[0] == nodes[4]);
	}
	free(nodes);

	OK(cuGraphInstantiateWithFlags(&x, g,
			CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
	OK(cuGraphExecGetFlags(x, &xflags));
	EXPECT(xflags == CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
	OK(cuGraphUpload(x, s));
	/* Replays read the input as it is at launch time. */
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 4096; i++)
			in[i] = (unsigned char)(i * (k + 3) + k);
		memset(out, 0, 4096);
		OK(cuGraphLaunch(x, s));
		OK(cuStreamSynchronize(s));
		replay_expect(want, in);
		EXPECT(!memcmp(out, want, 4096));
	}
	/* On another stream and on the legacy one; then with the graph
	 * destroyed (an executable graph is a copy). */
	memset(in, 0x42, 4096);
	OK(cuGraphLaunch(x, s2));
	OK(cuStreamSynchronize(s2));
	replay_expect(want, in);
	EXPECT(!memcmp(out, want, 4096));
	OK(cuGraphDestroy(g));
	EXPECT_RES(cuGraphDestroy(g), CUDA_ERROR_INVALID_VALUE);
	memset(in, 0x24, 4096);
	OK(cuGraphLaunch(x, NULL));
	OK(cuGraphLaunch(x, s));	/* ordered after the one on NULL */
	OK(cuStreamSynchronize(s));
	replay_expect(want, in);
	EXPECT(!memcmp(out, want, 4096));

	/* A range a node names, freed: the launch queues nothing. */
	OK(cuMemFree(d2));
	EXPECT_RES(cuGraphLaunch(x, s), CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphExecDestroy(x));
	EXPECT_RES(cuGraphExecDestroy(x), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuGraphLaunch(x, s), CUDA_ERROR_INVALID_VALUE);

	OK(cuMemFree(d1));
	OK(cuMemFreeHost(in));
	OK(cuMemFreeHost(out));
	OK(cuStreamDestroy(s));
	OK(cuStreamDestroy(s2));
}

/* Fork and join through events, unjoined and isolated captures, event
 * nodes. */
static void test_capture_events(void)
{
	unsigned char back[4096];
	CUstreamCaptureStatus cs;
	CUevent fork, join, outside, ext;
	CUgraphNode *nodes, dep[3];
	CUdeviceptr d1, d2;
	CUgraph g = NULL;
	CUgraphExec x;
	cuuint64_t id0 = 0, id1 = 1;
	size_t n = 0, nd;
	CUstream s0, s1;
	int ok;

	OK(cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING));
	OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	OK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
	OK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
	OK(cuEventCreate(&outside, 0));
	OK(cuEventCreate(&ext, 0));
	OK(cuMemAlloc(&d1, 4096));
	OK(cuMemAlloc(&d2, 4096));
	OK(cuMemsetD8(d1, 0, 4096));
	OK(cuCtxSynchronize());		/* s0's replay does not wait for it */

	OK(cuStreamBeginCapture(s0, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuMemsetD8Async(d1, 0x01, 4096, s0));
	OK(cuEventRecord(fork, s0));
	EXPECT_RES(cuEventQuery(fork), CUDA_ERROR_CAPTURED_EVENT);
	EXPECT_RES(cuEventSynchronize(fork), CUDA_ERROR_CAPTURED_EVENT);
	OK(cuStreamWaitEvent(s1, fork, 0));	/* s1 joins the capture */
	OK(cuStreamGetCaptureInfo(s1, &cs, &id1, NULL, NULL, NULL, NULL));
	OK(cuStreamGetCaptureInfo(s0, &cs, &id0, NULL, NULL, NULL, NULL));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE && id0 == id1);
	EXPECT_RES(cuStreamEndCapture(s1, &g),
		   CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
	OK(cuMemsetD8Async(d2, 0x02, 4096, s1));
	OK(cuMemsetD8Async(d1 + 2048, 0x03, 2048, s0));
	OK(cuEventRecord(join, s1));
	OK(cuStreamWaitEvent(s0, join, 0));
	OK(cuMemcpyDtoDAsync(d1, d2, 1024, s0));
	OK(cuStreamEndCapture(s0, &g));
	OK(cuStreamIsCapturing(s1, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_NONE);
	/* The record of a capture that is over stands for no work. */
	EXPECT_RES(cuEventQuery(join), CUDA_ERROR_CAPTURED_EVENT);

	/* memset d1 -> {memset d2 (s1), memset d1+2048 (s0)} -> copy. */
	nodes = graph_nodes(g, &n);
	EXPECT(nodes && n == 4);
	if (nodes && n == 4) {
		nd = 3;
		OK(cuGraphNodeGetDependencies(nodes[3], dep, NULL, &nd));
		EXPECT(nd == 2 && ((dep[0] == nodes[1] && dep[1] == nodes[2]) ||
				   (dep[0] == nodes[2] && dep[1] == nodes[1])));
		nd = 3;
		OK(cuGraphNodeGetDependencies(nodes[1], dep, NULL, &nd));
		EXPECT(nd == 1 && dep[0] == nodes[0]);
		nd = 3;
		OK(cuGraphGetRootNodes(g, dep, &nd));
		EXPECT(nd == 1 && dep[0] == nodes[0]);
	}
	free(nodes);
	OK(cuGraphInstantiateWithFlags(&x, g, 0));
	OK(cuGraphLaunch(x, s0));
	OK(cuStreamSynchronize(s0));
	OK(cuMemcpyDtoH(back, d1, 4096));
	ok = 1;
	for (int i = 0; i < 4096; i++)
		ok &= back[i] == (i < 1024 ? 0x02 : i < 2048 ? 0x01 : 0x03);
	EXPECT(ok);
	OK(cuGraphExecDestroy(x));
	OK(cuGraphDestroy(g));

	/* A fork never joined back. */
	OK(cuStreamBeginCapture(s0, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuEventRecord(fork, s0));
	OK(cuStreamWaitEvent(s1, fork, 0));
	OK(cuMemsetD8Async(d2, 0x05, 16, s1));
	g = (CUgraph)&n;
	EXPECT_RES(cuStreamEndCapture(s0, &g),
		   CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
	EXPECT(g == NULL);
	OK(cuStreamIsCapturing(s1, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_NONE);
	OK(cuMemcpyDtoH(back, d2, 16));
	EXPECT(back[0] == 0x02);		/* never ran */

	/* A wait on an event recorded outside the capture: isolation. */
	OK(cuEventRecord(outside, s1));
	OK(cuEventRecord(fork, s1));		/* recorded for real again */
	OK(cuEventSynchronize(fork));		/* s1's memset may run */
	OK(cuEventQuery(fork));
	OK(cuStreamBeginCapture(s0, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_RES(cuStreamWaitEvent(s0, outside, 0),
		   CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
	OK(cuStreamIsCapturing(s0, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	EXPECT_RES(cuMemsetD8Async(d1, 0x09, 16, s0),
		   CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_RES(cuStreamEndCapture(s0, &g),
		   CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT(g == NULL);

	/* External event nodes: recorded and waited on when the graph
	 * runs; the flags are refused outside capture. */
	EXPECT_RES(cuEventRecordWithFlags(ext, s0, CU_EVENT_RECORD_EXTERNAL),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamWaitEvent(s0, outside, CU_EVENT_WAIT_EXTERNAL),
		   CUDA_ERROR_INVALID_VALUE);
	OK(cuStreamBeginCapture(s0, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuStreamWaitEvent(s0, outside, CU_EVENT_WAIT_EXTERNAL));
	OK(cuMemsetD8Async(d1, 0x0a, 16, s0));
	OK(cuEventRecordWithFlags(ext, s0, CU_EVENT_RECORD_EXTERNAL));
	OK(cuStreamEndCapture(s0, &g));
	nodes = graph_nodes(g, &n);
	EXPECT(nodes && n == 3 &&
	       node_type(nodes[0]) == CU_GRAPH_NODE_TYPE_WAIT_EVENT &&
	       node_type(nodes[1]) == CU_GRAPH_NODE_TYPE_MEMSET &&
	       node_type(nodes[2]) == CU_GRAPH_NODE_TYPE_EVENT_RECORD);
	free(nodes);
	OK(cuGraphInstantiateWithFlags(&x, g, 0));
	OK(cuGraphDestroy(g));
	OK(cuGraphLaunch(x, s0));
	OK(cuEventSynchronize(ext));	/* recorded by the launch */
	OK(cuMemcpyDtoH(back, d1, 16));
	EXPECT(back[0] == 0x0a && back[15] == 0x0a);
	/* An event a node names, destroyed: the launch is refused. */
	OK(cuEventDestroy(ext));
	EXPECT_RES(cuGraphLaunch(x, s0), CUDA_ERROR_INVALID_HANDLE);
	OK(cuGraphExecDestroy(x));

	OK(cuEventDestroy(fork));
	OK(cuEventDestroy(join));
	OK(cuEventDestroy(outside));
	OK(cuMemFree(d1));
	OK(cuMemFree(d2));
	OK(cuStreamDestroy(s0));
	OK(cuStreamDestroy(s1));
}

struct capture_thread {
	CUcontext ctx;
	CUstreamCaptureMode mode;	/* this thread's */
	CUstream end;			/* cuStreamEndCapture on it */
	CUresult alloc, end_r;
};

static void *capture_thread(void *arg)
{
	struct capture_thread *t = arg;
	CUstreamCaptureMode m = t->mode;
	CUdeviceptr d = 0;
	CUgraph g;

	cuCtxSetCurrent(t->ctx);
	cuThreadExchangeStreamCaptureMode(&m);
	t->alloc = cuMemAlloc(&d, 256);
	if (t->alloc == CUDA_SUCCESS)
		cuMemFree(d);
	if (t->end) {
		t->end_r = cuStreamEndCapture(t->end, &g);
		if (t->end_r == CUDA_SUCCESS)
			cuGraphDestroy(g);
	}
	return NULL;
}

/* In another thread of mode `mode`: cuMemAlloc's answer. */
static CUresult alloc_in_thread(CUstreamCaptureMode mode, CUstream end,
				CUresult *end_r)
{
	struct capture_thread t = { .mode = mode, .end = end };
	pthread_t th;

	cuCtxGetCurrent(&t.ctx);
	pthread_create(&th, NULL, capture_thread, &t);
	pthread_join(th, NULL);
	if (end_r)
		*end_r = t.end_r;
	return t.alloc;
}

/* cuStreamEndCapture's answer on s; a graph it gives is destroyed. */
static CUresult end_capture(CUstream s)
{
	CUgraph g = NULL;
	CUresult r = cuStreamEndCapture(s, &g);

	if (g)
		cuGraphDestroy(g);
	return r;
}

/* Capture modes, prohibited calls, the legacy stream, refusals. */
static void test_capture_modes(void)
{
	CUstreamCaptureMode m;
	CUstreamCaptureStatus cs;
	CUdeviceptr d, d2;
	CUresult er;
	CUstream s, sb;
	unsigned char host[64];
	CUgraph g;
	size_t n;

	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuStreamCreate(&sb, 0));		/* blocking */
	OK(cuMemAlloc(&d, 4096));

	/* Where capture cannot begin. */
	EXPECT_RES(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
		   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RES(cuStreamBeginCapture(CU_STREAM_LEGACY,
					CU_STREAM_CAPTURE_MODE_GLOBAL),
		   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	OK(cuStreamBeginCapture(CU_STREAM_PER_THREAD,
				CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(end_capture(CU_STREAM_PER_THREAD));	/* an empty graph */
	EXPECT_RES(cuStreamBeginCapture(s, (CUstreamCaptureMode)3),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamBeginCapture((CUstream)&m,
					CU_STREAM_CAPTURE_MODE_GLOBAL),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuStreamEndCapture(s, &g), CUDA_ERROR_ILLEGAL_STATE);
	EXPECT_RES(cuStreamEndCapture(s, NULL), CUDA_ERROR_INVALID_VALUE);
	m = (CUstreamCaptureMode)7;
	EXPECT_RES(cuThreadExchangeStreamCaptureMode(&m),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuThreadExchangeStreamCaptureMode(NULL),
		   CUDA_ERROR_INVALID_VALUE);

	/* GLOBAL: cuMemAlloc in the capturing thread is prohibited and
	 * invalidates the capture. */
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_RES(cuMemAlloc(&d2, 256), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	OK(cuStreamIsCapturing(s, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	EXPECT_RES(cuMemsetD8Async(d, 1, 16, s),
		   CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	EXPECT_RES(end_capture(s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	OK(cuMemAlloc(&d2, 256));		/* no capture: allowed */
	OK(cuMemFree(d2));

	/* The thread's mode relaxed (as PyTorch's allocator does). */
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	m = CU_STREAM_CAPTURE_MODE_RELAXED;
	OK(cuThreadExchangeStreamCaptureMode(&m));
	EXPECT(m == CU_STREAM_CAPTURE_MODE_GLOBAL);
	OK(cuMemAlloc(&d2, 256));
	OK(cuMemFree(d2));
	OK(cuThreadExchangeStreamCaptureMode(&m));
	EXPECT(m == CU_STREAM_CAPTURE_MODE_RELAXED);
	OK(cuStreamGetCaptureInfo(s, &cs, NULL, NULL, NULL, NULL, NULL));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	OK(cuStreamEndCapture(s, &g));
	n = 5;
	OK(cuGraphGetNodes(g, NULL, &n));
	EXPECT(n == 0);
	OK(cuGraphDestroy(g));

	/* Other threads: a GLOBAL capture prohibits their unsafe calls
	 * unless they are THREAD_LOCAL or RELAXED; a THREAD_LOCAL one does
	 * not; a capture not RELAXED must end in its own thread. */
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	OK(alloc_in_thread(CU_STREAM_CAPTURE_MODE_GLOBAL, s, &er));
	EXPECT(er == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
	EXPECT_RES(cuMemAlloc(&d2, 256), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RES(end_capture(s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(alloc_in_thread(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, NULL, NULL));
	OK(alloc_in_thread(CU_STREAM_CAPTURE_MODE_RELAXED, NULL, NULL));
	OK(cuStreamIsCapturing(s, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	EXPECT_RES(alloc_in_thread(CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL),
		   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RES(end_capture(s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	/* RELAXED: nothing prohibited, and it may end in another thread. */
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
	OK(cuMemAlloc(&d2, 256));
	OK(cuMemFree(d2));
	OK(cuCtxSynchronize());
	OK(alloc_in_thread(CU_STREAM_CAPTURE_MODE_GLOBAL, s, &er));
	EXPECT(er == CUDA_SUCCESS);
	OK(cuStreamIsCapturing(s, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_NONE);

	/* Synchronising with or querying a capturing stream. */
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_RES(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RES(end_capture(s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_RES(cuStreamQuery(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RES(end_capture(s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_RES(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RES(end_capture(s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	/* Host memory a graph cannot reach: pageable copies. */
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_RES(cuMemcpyHtoDAsync(d, host, sizeof(host), s),
		   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RES(end_capture(s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_RES(cuMemcpyAsync((CUdeviceptr)(uintptr_t)host,
				 (CUdeviceptr)(uintptr_t)(host + 32), 16, s),
		   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RES(end_capture(s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	/* The legacy stream while a blocking stream captures: queries say
	 * so without harm, work invalidates the capture.  A non-blocking
	 * stream's capture does not mind. */
	OK(cuStreamBeginCapture(sb, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_RES(cuStreamIsCapturing(NULL, &cs),
		   CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
	OK(cuStreamIsCapturing(sb, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	EXPECT_RES(cuMemsetD8Async(d, 1, 16, NULL),
		   CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
	OK(cuStreamIsCapturing(sb, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	EXPECT_RES(end_capture(sb), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuMemsetD8Async(d, 1, 16, NULL));
	OK(cuStreamSynchronize(NULL));
	EXPECT_RES(end_capture(s), CUDA_SUCCESS);

	/* Dependencies set by hand: the next node is a root. */
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuMemsetD8Async(d, 1, 16, s));
	OK(cuStreamUpdateCaptureDependencies(s, NULL, NULL, 0,
					     CU_STREAM_SET_CAPTURE_DEPENDENCIES));
	OK(cuMemsetD8Async(d, 2, 16, s));
	OK(cuStreamEndCapture(s, &g));
	n = 4;
	{
		CUgraphNode roots[4];

		OK(cuGraphGetRootNodes(g, roots, &n));
		EXPECT(n == 2);
	}
	OK(cuGraphDestroy(g));
	EXPECT_RES(cuStreamUpdateCaptureDependencies(s, NULL, NULL, 0, 0),
		   CUDA_ERROR_ILLEGAL_STATE);

	/* A capturing stream destroyed: its capture and graph go too. */
	OK(cuStreamBeginCapture(sb, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuMemsetD8Async(d, 1, 16, sb));
	OK(cuStreamDestroy(sb));
	OK(cuMemAlloc(&d2, 256));		/* no capture left */
	OK(cuMemFree(d2));

	OK(cuMemFree(d));
	OK(cuStreamDestroy(s));
}

/* Graphs built by hand: empty and memset nodes, instantiation with
 * parameters and upload, the old instantiate. */
static void test_graph_api(void)
{
	typedef CUresult (*inst_v2)(CUgraphExec *, CUgraph, CUgraphNode *,
				    char *, size_t);
	CUDA_GRAPH_INSTANTIATE_PARAMS ip = { 0 };
	CUDA_MEMSET_NODE_PARAMS mp = { 0 };
	CUDA_KERNEL_NODE_PARAMS kp = { 0 };
	CUdriverProcAddressQueryResult st;
	CUgraphNode e, ms, ms2, from[3], to[3], err = (CUgraphNode)&e;
	uint32_t back[64], want[64];
	CUgraphExec x, x2;
	char log[8] = "junk";
	CUdeviceptr d;
	CUgraph g, g2;
	CUstream s;
	size_t n;
	void *p = NULL;
	int x0;

	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuMemAlloc(&d, sizeof(back)));
	OK(cuMemsetD32(d, 0, 64));
	OK(cuCtxSynchronize());		/* s does not wait for it */
	EXPECT_RES(cuGraphCreate(&g, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuGraphCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphCreate(&g, 0));
	OK(cuGraphAddEmptyNode(&e, g, NULL, 0));
	mp.dst = d;
	mp.elementSize = 4;
	mp.value = 0x01020304;
	mp.width = 8;
	mp.height = 4;
	mp.pitch = 64;
	OK(cuGraphAddMemsetNode(&ms, g, &e, 1, &mp, NULL));
	mp.dst = d + 32;
	mp.elementSize = 2;
	mp.value = 0xabcdffff;		/* only the low 16 bits count */
	mp.width = 2;
	mp.height = 1;
	OK(cuGraphAddMemsetNode(&ms2, g, &ms, 1, &mp, NULL));
	mp.height = 100;		/* past the allocation */
	EXPECT_RES(cuGraphAddMemsetNode(&ms2, g, &ms, 1, &mp, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	mp.height = 1;
	mp.elementSize = 3;
	EXPECT_RES(cuGraphAddMemsetNode(&ms2, g, &ms, 1, &mp, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuGraphAddEmptyNode(&e, g, (CUgraphNode *)&g, 1),
		   CUDA_ERROR_INVALID_VALUE);
	kp.func = (CUfunction)&kp;
	EXPECT_RES(cuGraphAddKernelNode(&e, g, NULL, 0, &kp),
		   CUDA_ERROR_INVALID_HANDLE);
	n = 3;
	OK(cuGraphGetEdges(g, from, to, NULL, &n));
	EXPECT(n == 2 && from[0] == e && to[0] == ms && from[1] == ms &&
	       to[1] == ms2 && from[2] == NULL);
	EXPECT(node_type(e) == CU_GRAPH_NODE_TYPE_EMPTY &&
	       node_type(ms2) == CU_GRAPH_NODE_TYPE_MEMSET);

	ip.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
	ip.hUploadStream = s;
	OK(cuGraphInstantiateWithParams(&x, g, &ip));
	EXPECT(ip.result_out == CUDA_GRAPH_INSTANTIATE_SUCCESS &&
	       ip.hErrNode_out == NULL);
	EXPECT_RES(cuGraphInstantiateWithFlags(&x2, g,
				CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuGraphInstantiateWithFlags(&x2, g,
				CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH),
		   CUDA_ERROR_NOT_SUPPORTED);
	OK(cuGraphLaunch(x, s));
	OK(cuStreamSynchronize(s));
	OK(cuMemcpyDtoH(back, d, sizeof(back)));
	/* Four rows of 8 words 64 bytes apart, then 2 half-words at 32. */
	for (int i = 0; i < 64; i++)
		want[i] = i % 16 < 8 ? 0x01020304 : 0;
	want[8] = 0xffffffff;
	EXPECT(!memcmp(back, want, sizeof(back)));
	OK(cuGraphExecDestroy(x));

	/* The 11.0 instantiate: error node cleared, log empty. */
	p = NULL;
	OK(cuGetProcAddress("cuGraphInstantiate", &p, 11000, 0, &st));
	EXPECT(p != NULL);
	if (p) {
		OK(((inst_v2)p)(&x, g, &err, log, sizeof(log)));
		EXPECT(err == NULL && log[0] == '\0');
		OK(cuGraphExecDestroy(x));
	}
	/* A graph is any graph: one made by cuGraphCreate captures too. */
	OK(cuGraphCreate(&g2, 0));
	n = 1;
	OK(cuGraphGetRootNodes(g2, &e, &n));
	EXPECT(n == 0 && e == NULL);
	OK(cuGraphDestroy(g2));
	x0 = cuGraphNodeGetType((CUgraphNode)&n, &(CUgraphNodeType){ 0 });
	EXPECT(x0 == CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphDestroy(g));
	OK(cuMemFree(d));
	OK(cuStreamDestroy(s));
}

/* The primary context retained twice and made current: every group
 * between test_primary_retain and test_primary_release runs in it. */
static void test_primary_retain(void)
{
	unsigned flags = 1;
	int active = -1;
	CUcontext p1;
	CUdeviceptr d;

	OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT(active == 0 && flags == 0);
	EXPECT_RES(cuMemAlloc(&d, 16), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuDevicePrimaryCtxRetain(&primary_ctx, 0));
	OK(cuDevicePrimaryCtxRetain(&p1, 0));
	EXPECT(primary_ctx == p1);
	OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT(active == 1);
	OK(cuCtxSetCurrent(primary_ctx));
	OK(cuCtxGetDevice(&(CUdevice){ 5 }));
}

/* The two retains released: the context and what it owned go. */
static void test_primary_release(void)
{
	unsigned flags = 1;
	int active = -1;
	CUcontext p1;
	CUdeviceptr d;

	OK(cuMemAlloc(&d, mib));
	OK(cuDevicePrimaryCtxRelease(0));
	OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT(active == 1);
	OK(cuDevicePrimaryCtxRelease(0));
	OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT(active == 0);
	/* Inactive: the allocation went with it, the handle is refused. */
	EXPECT_RES(cuMemFree(d), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RES(cuDevicePrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuDevicePrimaryCtxRetain(&p1, 0));
	EXPECT_RES(cuMemFree(d), CUDA_ERROR_INVALID_VALUE);
	OK(cuDevicePrimaryCtxReset(0));
	OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT(active == 0);
	EXPECT_RES(cuDevicePrimaryCtxRetain(&p1, 1), CUDA_ERROR_INVALID_DEVICE);
}

/* With no daemon to reach: cuInit fails, and keeps failing the same way. */
static void test_no_daemon(void)
{
	CUresult r = cuInit(0);
	int n;

	EXPECT(r == CUDA_ERROR_NO_DEVICE);
	EXPECT(cuInit(0) == r);
	EXPECT_RES(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
}

/* ---------------------------------------------------------------- */
/*
 * Entry points no other group calls: the older and newer variants of
 * calls the other groups make (cuEventElapsedTime of CUDA 2.0,
 * cuStreamGetCtx_v2, cuCtxCreate_v3), the context's API version, the
 * unaligned 2D copy, the 16- and 32-bit memsets on streams and in 2D.
 * Contents are read back; each refusal is the exact CUresult.
 */
typedef CUresult (*pfn_elapsed)(float *, CUevent, CUevent);
typedef CUresult (*pfn_ctx_create_v3)(CUcontext *, CUexecAffinityParam *,
				      int, unsigned int, CUdevice);
typedef CUresult (*pfn_stream_ctx_v2)(CUstream, CUcontext *, CUgreenCtx *);

/* Another thread, no context current: the default streams have none. */
static void *thread_stream_ctx(void *arg)
{
	CUcontext c = (CUcontext)1;
	CUgreenCtx g = (CUgreenCtx)1;

	(void)arg;
	EXPECT_RES(cuStreamGetCtx(NULL, &c), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RES(cuStreamGetCtx(CU_STREAM_PER_THREAD, &c),
		   CUDA_ERROR_INVALID_CONTEXT);
	EXPECT_RES(cuStreamGetCtx_v2(CU_STREAM_LEGACY, &c, &g),
		   CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(c == (CUcontext)1 && g == (CUgreenCtx)1);
	return NULL;
}

/* cuStreamGetCtx and _v2 (+ _v2_ptsz through cuGetProcAddress). */
static void more_stream_ctx(CUcontext pctx)
{
	const cuuint64_t ptds = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	CUdriverProcAddressQueryResult st;
	pfn_stream_ctx_v2 v2_ptsz;
	CUcontext c = NULL, got = NULL, saved;
	CUgreenCtx g = (CUgreenCtx)1;
	CUstream s, sc;
	pthread_t t;
	CUresult r;
	int x = 0;

	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	/* A second context, current over pctx, with a stream of its own. */
	OK(cuCtxCreate(&c, NULL, 0, 0));
	OK(cuStreamCreate(&sc, 0));
	OK(cuStreamGetCtx(s, &got));
	EXPECT(got == pctx);			/* its own, not the current */
	OK(cuStreamGetCtx(sc, &got));
	EXPECT(got == c);
	OK(cuStreamGetCtx(NULL, &got));		/* default streams: current */
	EXPECT(got == c);
	OK(cuStreamGetCtx(CU_STREAM_LEGACY, &got));
	EXPECT(got == c);
	OK(cuStreamGetCtx(CU_STREAM_PER_THREAD, &got));
	EXPECT(got == c);
	got = NULL;
	OK(cuStreamGetCtx_v2(s, &got, &g));
	EXPECT(got == pctx && g == NULL);	/* no green contexts */
	g = (CUgreenCtx)1;
	OK(cuStreamGetCtx_v2(NULL, &got, &g));
	EXPECT(got == c && g == NULL);
	v2_ptsz = (pfn_stream_ctx_v2)lookup("cuStreamGetCtx", 12050, ptds,
					    &st, &r);
	EXPECT(v2_ptsz && v2_ptsz == (pfn_stream_ctx_v2)dlsym(
			RTLD_DEFAULT, "cuStreamGetCtx_v2_ptsz"));
	if (v2_ptsz) {
		g = (CUgreenCtx)1;
		OK(v2_ptsz(NULL, &got, &g));
		EXPECT(got == c && g == NULL);
		OK(v2_ptsz(s, &got, &g));
		EXPECT(got == pctx && g == NULL);
	}
	EXPECT(lookup("cuStreamGetCtx", 12040, ptds, &st, &r) ==
	       dlsym(RTLD_DEFAULT, "cuStreamGetCtx_ptsz"));
	EXPECT(lookup("cuStreamGetCtx", 13000, 0, &st, &r) ==
	       dlsym(RTLD_DEFAULT, "cuStreamGetCtx_v2"));

	/* Refusals: NULL outputs, forged and destroyed streams. */
	EXPECT_RES(cuStreamGetCtx(s, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamGetCtx_v2(s, NULL, &g), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamGetCtx_v2(s, &got, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamGetCtx((CUstream)(void *)&x, &got),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuStreamGetCtx_v2((CUstream)(void *)&x, &got, &g),
		   CUDA_ERROR_INVALID_HANDLE);
	pthread_create(&t, NULL, thread_stream_ctx, NULL);
	pthread_join(t, NULL);
	/* Destroying c takes its stream with it. */
	OK(cuCtxPopCurrent(&saved));
	EXPECT(saved == c);
	OK(cuCtxDestroy(c));
	EXPECT_RES(cuStreamGetCtx(sc, &got), CUDA_ERROR_INVALID_HANDLE);
	OK(cuStreamDestroy(s));
	EXPECT_RES(cuStreamGetCtx(s, &got), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuStreamGetCtx_v2(s, &got, &g), CUDA_ERROR_INVALID_HANDLE);
}

/* cuCtxCreate_v3 (through cuGetProcAddress: cuda.h declares it only for
 * the driver's own build) and cuCtxGetApiVersion. */
static void more_contexts(CUcontext pctx)
{
	CUexecAffinityParam aff[2];
	CUctxCreateParams p4 = { 0 };
	CUctxCigParam cig = { 0 };
	CUdriverProcAddressQueryResult st;
	pfn_ctx_create_v3 v3;
	CUcontext c = NULL, cur = NULL, saved;
	unsigned int ver = 0;
	CUresult r;
	int x = 0;

	OK(cuCtxGetApiVersion(NULL, &ver));	/* the current */
	EXPECT(ver == 3020);
	ver = 0;
	OK(cuCtxGetApiVersion(pctx, &ver));
	EXPECT(ver == 3020);
	EXPECT_RES(cuCtxGetApiVersion(pctx, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuCtxGetApiVersion((CUcontext)(void *)&x, &ver),
		   CUDA_ERROR_INVALID_CONTEXT);

	v3 = (pfn_ctx_create_v3)lookup("cuCtxCreate", 11040, 0, &st, &r);
	EXPECT(v3 && v3 == (pfn_ctx_create_v3)dlsym(RTLD_DEFAULT,
						    "cuCtxCreate_v3"));
	if (!v3)
		return;
	/* No affinity: an ordinary context, current, with its version. */
	OK(v3(&c, NULL, 0, CU_CTX_MAP_HOST, 0));
	OK(cuCtxGetCurrent(&cur));
	EXPECT(c && cur == c && c != pctx);
	ver = 0;
	OK(cuCtxGetApiVersion(c, &ver));
	EXPECT(ver == 3020);
	OK(cuCtxGetFlags(&ver));
	EXPECT(ver == CU_CTX_MAP_HOST);
	OK(cuCtxPopCurrent(&saved));
	EXPECT(saved == c);
	OK(cuCtxDestroy(c));
	EXPECT_RES(cuCtxGetApiVersion(c, &ver), CUDA_ERROR_INVALID_CONTEXT);
	/* A count of 0 reads no array. */
	OK(v3(&c, aff, 0, 0, 0));
	OK(cuCtxPopCurrent(&saved));
	EXPECT(saved == c);
	OK(cuCtxDestroy(c));

	/* An SM limit needs MPS: refused, and no context made. */
	memset(aff, 0, sizeof(aff));
	aff[0].type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
	aff[0].param.smCount.val = 8;
	c = NULL;
	EXPECT_RES(v3(&c, aff, 1, 0, 0), CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);
	EXPECT(c == NULL);
	OK(cuCtxGetCurrent(&cur));
	EXPECT(cur == pctx);
	aff[1].type = (CUexecAffinityType)99;
	EXPECT_RES(v3(&c, aff, 2, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(v3(&c, NULL, 1, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(v3(&c, aff, -1, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(v3(NULL, NULL, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(v3(&c, NULL, 0, 0x10000, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(v3(&c, NULL, 0, 0, 1), CUDA_ERROR_INVALID_DEVICE);
	OK(cuCtxGetCurrent(&cur));
	EXPECT(cur == pctx);

	/* cuCtxCreate_v4 (cuda.h's cuCtxCreate) answers affinity as v3. */
	p4.execAffinityParams = aff;
	p4.numExecAffinityParams = 1;
	EXPECT_RES(cuCtxCreate_v4(&c, &p4, 0, 0),
		   CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);
	p4.numExecAffinityParams = 2;
	EXPECT_RES(cuCtxCreate_v4(&c, &p4, 0, 0), CUDA_ERROR_INVALID_VALUE);
	p4.numExecAffinityParams = -1;
	EXPECT_RES(cuCtxCreate_v4(&c, &p4, 0, 0), CUDA_ERROR_INVALID_VALUE);
	p4.numExecAffinityParams = 0;
	p4.cigParams = &cig;
	EXPECT_RES(cuCtxCreate_v4(&c, &p4, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuCtxCreate_v4(NULL, NULL, 0, 0), CUDA_ERROR_INVALID_VALUE);
	OK(cuCtxGetCurrent(&cur));
	EXPECT(cur == pctx);
	p4.cigParams = NULL;
	p4.execAffinityParams = NULL;
	OK(cuCtxCreate_v4(&c, &p4, 0, 0));
	OK(cuCtxPopCurrent(&saved));
	EXPECT(saved == c);
	OK(cuCtxDestroy(c));

	/* Support: 0 for SM_COUNT; the usual refusals. */
	x = -1;
	OK(cuDeviceGetExecAffinitySupport(&x, CU_EXEC_AFFINITY_TYPE_SM_COUNT,
					  0));
	EXPECT(x == 0);
	EXPECT_RES(cuDeviceGetExecAffinitySupport(
			   &x, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 1),
		   CUDA_ERROR_INVALID_DEVICE);
	EXPECT_RES(cuDeviceGetExecAffinitySupport(
			   &x, (CUexecAffinityType)99, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceGetExecAffinitySupport(
			   NULL, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0),
		   CUDA_ERROR_INVALID_VALUE);
}

/* cuEventElapsedTime of CUDA 2.0: the 12.8 variant's contract. */
static void more_elapsed(void)
{
	CUdriverProcAddressQueryResult st;
	CUevent e0, e1, nt, never;
	pfn_elapsed v1;
	float ms = -1, ms2 = -1;
	CUresult r;
	int x = 0;

	v1 = (pfn_elapsed)dlsym(RTLD_DEFAULT, "cuEventElapsedTime");
	EXPECT(v1 != NULL);
	/* Versions before 12080 get it, later ones the _v2. */
	EXPECT(lookup("cuEventElapsedTime", 12070, 0, &st, &r) == (void *)v1 &&
	       st == CU_GET_PROC_ADDRESS_SUCCESS);
	EXPECT(lookup("cuEventElapsedTime", 2000, 0, &st, &r) == (void *)v1);
	EXPECT(lookup("cuEventElapsedTime", 12080, 0, &st, &r) ==
	       dlsym(RTLD_DEFAULT, "cuEventElapsedTime_v2"));
	EXPECT(!lookup("cuEventElapsedTime", 1000, 0, &st, &r) &&
	       st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
	if (!v1)
		return;
	OK(cuEventCreate(&e0, 0));
	OK(cuEventCreate(&e1, 0));
	OK(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
	OK(cuEventCreate(&never, 0));
	OK(cuEventRecord(e0, NULL));
	OK(cuEventRecord(e1, NULL));
	OK(cuEventRecord(nt, NULL));
	OK(cuEventSynchronize(e1));
	OK(v1(&ms, e0, e1));
	OK(cuEventElapsedTime(&ms2, e0, e1));
	EXPECT(ms >= 0 && ms == ms2);
	EXPECT_RES(v1(NULL, e0, e1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(v1(&ms, e0, never), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(v1(&ms, nt, e1), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(v1(&ms, e0, (CUevent)(void *)&x),
		   CUDA_ERROR_INVALID_HANDLE);
	OK(cuEventDestroy(never));
	EXPECT_RES(v1(&ms, e0, never), CUDA_ERROR_INVALID_HANDLE);
	OK(cuEventDestroy(e0));
	OK(cuEventDestroy(e1));
	OK(cuEventDestroy(nt));
}

/* `bytes` of device memory at d, read back into out (pre-filled with
 * 0x77, so a copy that did not happen shows). */
static void read_rows(void *out, CUdeviceptr d, size_t bytes)
{
	memset(out, 0x77, bytes);
	OK(cuMemcpyDtoH(out, d, bytes));
}

/* cuMemsetD16Async and the 2D memsets, 16- and 32-bit, sync and async. */
static void more_memsets(CUstream s)
{
	enum { P = 64, ROWS = 4 };
	uint8_t area[ROWS * P], zero[ROWS * P];
	uint16_t h16[8];
	CUdeviceptr d;
	int x = 0, ok;

	OK(cuMemAlloc(&d, ROWS * P));
	memset(zero, 0, sizeof(zero));

	/* 1D, 16-bit, on a stream: 5 elements from d + 2.  s does not wait
	 * for the legacy stream (CU_STREAM_NON_BLOCKING), and cuMemsetD8 of
	 * device memory does not wait for its completion: the context is
	 * synchronized in between. */
	OK(cuMemsetD8(d, 0, ROWS * P));
	OK(cuCtxSynchronize());
	OK(cuMemsetD16Async(d + 2, 0xbeef, 5, s));
	OK(cuStreamSynchronize(s));
	read_rows(h16, d, sizeof(h16));
	EXPECT(h16[0] == 0 && h16[1] == 0xbeef && h16[5] == 0xbeef &&
	       h16[6] == 0 && h16[7] == 0);
	OK(cuMemsetD16Async(d, 1, 0, s));	/* no elements: nothing */
	EXPECT_RES(cuMemsetD16Async(d + 1, 1, 1, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD16Async(d, 1, ROWS * P / 2 + 1, s),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD16Async(d, 1, 1, (CUstream)(void *)&x),
		   CUDA_ERROR_INVALID_HANDLE);

	/* 2D, 16-bit: 3 elements at byte 4 of rows 0..3, 64 bytes apart;
	 * the rest of each row untouched. */
	OK(cuMemsetD8(d, 0, ROWS * P));
	OK(cuMemsetD2D16(d + 4, P, 0x1234, 3, ROWS));
	read_rows(area, d, sizeof(area));
	ok = 1;
	for (int y = 0; y < ROWS; y++)
		for (int b = 0; b < P; b += 2) {
			uint16_t v;

			memcpy(&v, area + y * P + b, 2);
			ok = ok && v == (b >= 4 && b < 10 ? 0x1234 : 0);
		}
	EXPECT(ok);
	/* The async one on s, over rows 1..2 only. */
	OK(cuMemsetD2D16Async(d + P + 4, P, 0xabcd, 2, 2, s));
	OK(cuStreamSynchronize(s));
	read_rows(area, d, sizeof(area));
	EXPECT(area[P + 4] == 0xcd && area[P + 5] == 0xab &&
	       area[P + 7] == 0xab && area[P + 8] == 0x34 &&
	       area[2 * P + 4] == 0xcd && area[3 * P + 4] == 0x34);

	/* 2D, 32-bit: 2 elements at byte 8 of each row. */
	OK(cuMemsetD8(d, 0, ROWS * P));
	OK(cuMemsetD2D32(d + 8, P, 0xdeadbeef, 2, ROWS));
	read_rows(area, d, sizeof(area));
	ok = 1;
	for (int y = 0; y < ROWS; y++)
		for (int b = 0; b < P; b += 4) {
			uint32_t v;

			memcpy(&v, area + y * P + b, 4);
			ok = ok && v == (b == 8 || b == 12 ? 0xdeadbeefU : 0);
		}
	EXPECT(ok);
	OK(cuMemsetD2D32Async(d + 3 * P, P, 0x01020304, 16, 1, s));
	OK(cuStreamSynchronize(s));
	read_rows(area, d, sizeof(area));
	EXPECT(area[3 * P] == 0x04 && area[3 * P + 3] == 0x01 &&
	       area[3 * P + 63] == 0x01 && area[2 * P + 8] == 0xef);
	/* One row: the pitch is not used, so any pitch goes. */
	OK(cuMemsetD2D32(d, 1, 0, 1, 1));
	/* Nothing to set: no error, nothing written. */
	OK(cuMemsetD8(d, 0, ROWS * P));
	OK(cuMemsetD2D16(d, P, 0xffff, 0, ROWS));
	OK(cuMemsetD2D32Async(d, P, 0xffffffff, 4, 0, s));
	OK(cuStreamSynchronize(s));
	read_rows(area, d, sizeof(area));
	EXPECT(!memcmp(area, zero, sizeof(area)));

	/* Refusals, before anything is written. */
	EXPECT_RES(cuMemsetD2D16(d + 1, P, 1, 2, 2), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD2D16(d, P - 1, 1, 2, 2), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD2D16(d, 4, 1, 3, 2), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD2D16(d, P, 1, 2, ROWS + 1),
		   CUDA_ERROR_INVALID_VALUE);		/* past the end */
	EXPECT_RES(cuMemsetD2D16(d, P, 1, SIZE_MAX / 2 + 1, 1),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD2D32(d + 2, P, 1, 2, 2), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD2D32(d, P - 2, 1, 2, 2), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD2D32(d, 4, 1, 2, 2), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD2D32(d, SIZE_MAX - 3, 1, 1, 3),
		   CUDA_ERROR_INVALID_VALUE);		/* overflows */
	EXPECT_RES(cuMemsetD2D32((CUdeviceptr)(uintptr_t)area, P, 1, 1, 1),
		   CUDA_ERROR_INVALID_VALUE);		/* not device memory */
	EXPECT_RES(cuMemsetD2D16Async(d, P, 1, 2, 2, (CUstream)(void *)&x),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuMemsetD2D32Async(d, P, 1, 2, 2, (CUstream)(void *)&x),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuMemsetD2D16Async(d, P - 1, 1, 2, 2, s),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemsetD2D32Async(d, P, 1, 2, ROWS + 1, s),
		   CUDA_ERROR_INVALID_VALUE);
	read_rows(area, d, sizeof(area));
	EXPECT(!memcmp(area, zero, sizeof(area)));
	OK(cuMemFree(d));
	EXPECT_RES(cuMemsetD2D16(d, P, 1, 2, 2), CUDA_ERROR_INVALID_VALUE);
}

/* cuMemcpy2DUnaligned: host to device, device to device and back, at
 * offsets; the refusals cuMemcpy2D makes. */
static void more_copy2d(void)
{
	enum { W = 37, H = 5, P = 48 };
	unsigned char img[H][W], back[H][W], flat[H * P];
	CUdeviceptr a, b;
	CUDA_MEMCPY2D c;
	int ok = 1;

	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			img[y][x] = (unsigned char)(11 * x + 7 * y + 1);
	OK(cuMemAlloc(&a, H * P + 64));
	OK(cuMemAlloc(&b, H * P + 64));
	OK(cuMemsetD8(a, 0, H * P + 64));
	OK(cuMemsetD8(b, 0, H * P + 64));
	/* In at x 3, y 1 of a P-pitched area. */
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = img;
	c.srcPitch = W;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = a;
	c.dstXInBytes = 3;
	c.dstY = 1;
	c.dstPitch = P;
	c.WidthInBytes = W;
	c.Height = H - 1;
	OK(cuMemcpy2DUnaligned(&c));
	read_rows(flat, a, sizeof(flat));
	for (int y = 0; y < H; y++)
		for (int x = 0; x < P; x++)
			ok = ok && flat[y * P + x] ==
			     (y >= 1 && x >= 3 && x < 3 + W ?
			      img[y - 1][x - 3] : 0);
	EXPECT(ok);
	/* Device to device, to another pitch (UNIFIED resolved). */
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
	c.srcDevice = a;
	c.srcXInBytes = 3;
	c.srcY = 1;
	c.srcPitch = P;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = b;
	c.dstPitch = W + 1;
	c.WidthInBytes = W;
	c.Height = H - 1;
	OK(cuMemcpy2DUnaligned(&c));
	/* And back to the host, tight. */
	memset(back, 0, sizeof(back));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = b;
	c.srcPitch = W + 1;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = back;
	c.dstPitch = W;
	c.WidthInBytes = W;
	c.Height = H - 1;
	OK(cuMemcpy2DUnaligned(&c));
	EXPECT(!memcmp(back, img, (H - 1) * W));

	/* Refusals. */
	EXPECT_RES(cuMemcpy2DUnaligned(NULL), CUDA_ERROR_INVALID_VALUE);
	c.dstPitch = W - 1;				/* pitch < width */
	EXPECT_RES(cuMemcpy2DUnaligned(&c), CUDA_ERROR_INVALID_VALUE);
	c.dstPitch = W;
	c.srcY = H;			/* rows past the end of b */
	EXPECT_RES(cuMemcpy2DUnaligned(&c), CUDA_ERROR_INVALID_VALUE);
	c.srcY = 0;
	c.dstHost = NULL;
	EXPECT_RES(cuMemcpy2DUnaligned(&c), CUDA_ERROR_INVALID_VALUE);
	c.dstHost = back;
	c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
	EXPECT_RES(cuMemcpy2DUnaligned(&c), CUDA_ERROR_NOT_SUPPORTED);
	c.dstMemoryType = (CUmemorytype)99;
	EXPECT_RES(cuMemcpy2DUnaligned(&c), CUDA_ERROR_INVALID_VALUE);
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.srcMemoryType = CU_MEMORYTYPE_HOST;		/* host to host */
	c.srcHost = img;
	EXPECT_RES(cuMemcpy2DUnaligned(&c), CUDA_ERROR_NOT_SUPPORTED);
	c.WidthInBytes = 0;				/* nothing to copy */
	OK(cuMemcpy2DUnaligned(&c));
	OK(cuMemFree(a));
	OK(cuMemFree(b));
}

static void test_more_entry_points(void)
{
	CUcontext pctx, saved;
	CUstream s;

	OK(cuDevicePrimaryCtxRetain(&pctx, 0));
	OK(cuCtxPushCurrent(pctx));
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	more_stream_ctx(pctx);
	more_contexts(pctx);
	more_elapsed();
	more_memsets(s);
	more_copy2d();
	OK(cuStreamDestroy(s));
	OK(cuCtxPopCurrent(&saved));
	EXPECT(saved == pctx);
	OK(cuDevicePrimaryCtxRelease(0));
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--no-daemon")) {
		test_no_daemon();
		printf("test_driver --no-daemon: %u passed, %u failed\n",
		       passed, failed);
		return failed ? 1 : 0;
	}
	if (getenv("MDGPU_TEST_BACKEND"))
		on_sim = strcmp(getenv("MDGPU_TEST_BACKEND"), "cuda") != 0;
	if (argc > 1 && !strcmp(argv[1], "--guest")) {
		name_type = "";
	} else if (argc > 1 && !strcmp(argv[1], "--vfio") &&
		   getenv("MDGPU_VFIO") && !getenv("MDGPU_HOST_MIB")) {
		name_type = "";
		/* A UUID, or a sysfs path that ends in one. */
		vfio_uuid = strrchr(getenv("MDGPU_VFIO"), '/');
		vfio_uuid = vfio_uuid ? vfio_uuid + 1 : getenv("MDGPU_VFIO");
	} else if (argc > 1) {
		fprintf(stderr, "usage: test_driver [--no-daemon|--guest]\n"
			"       MDGPU_VFIO=<mdev UUID> test_driver --vfio "
			"(MDGPU_HOST_MIB unset)\n");
		return 2;
	}
	GROUP(test_before_init);
	GROUP(test_device);
	GROUP(test_primary_retain);
	GROUP(test_memory);
	GROUP(test_quota);
	GROUP(test_host_memory);
	GROUP(test_memory_streams);
	GROUP(test_contexts);
	GROUP(test_streams_events);
	GROUP(test_ptds);
	GROUP(test_capture_replay);
	GROUP(test_capture_events);
	GROUP(test_capture_modes);
	GROUP(test_graph_api);
	GROUP(test_modules);
	GROUP(test_proc_address);
	GROUP(test_primary_release);
	GROUP(test_unsupported);
	GROUP(test_tools_tls);
	GROUP(test_ctx_id);
	GROUP(test_stream_id);
	GROUP(test_more_entry_points);
	printf("test_driver: %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
