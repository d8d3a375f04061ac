// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A driver-API program in plain C against cuda.h, linked with -lcuda: run
 * by run-driver-tests.sh on mdgpu's libcuda.so.1 against an mdgpud on the
 * sim backend (MDGPU_SOCKET, MDGPU_TYPE=1g: a 1 GiB quota, 132 SMs).  The
 * sim backend runs builtin kernels only, so no user kernel is launched:
 * devices, contexts, memory, copies, memsets, streams, events, lookups,
 * error strings and every refusal path are.  Prints "N passed, N failed".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

static unsigned passed, failed;

#define EXPECT(cond) do {						\
	if (cond) {							\
		passed++;						\
	} else {							\
		failed++;						\
		fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__,	\
			#cond);						\
	}								\
} while (0)
#define EXPECT_RES(call, want) do {					\
	CUresult r_ = (call);						\
	if (r_ == (want)) {						\
		passed++;						\
	} else {							\
		failed++;						\
		fprintf(stderr, "FAIL %s:%d: %s = %d, expected %s\n",	\
			__FILE__, __LINE__, #call, (int)r_, #want);	\
	}								\
} while (0)
#define OK(call) EXPECT_RES(call, CUDA_SUCCESS)

static const size_t mib = 1 << 20;

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

static void test_device(void)
{
	CUdevice d = -1;
	char name[128];
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
	EXPECT(!strcmp(name, "mdgpu vGPU 1g of mdgpu sim"));
	EXPECT_RES(cuDeviceGetName(name, sizeof(name), 1),
		   CUDA_ERROR_INVALID_DEVICE);
	EXPECT_RES(cuDeviceGetName(name, 0, 0), CUDA_ERROR_INVALID_VALUE);
	OK(cuDeviceTotalMem(&total, 0));
	EXPECT(total == 1024 * mib);
	/* The daemon's random version-4 UUID of this vGPU. */
	OK(cuDeviceGetUuid(&u, 0));
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
	EXPECT_RES(cuDeviceGetAttribute(&x,
			CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceGetAttribute(&x, (CUdevice_attribute)0, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceGetAttribute(&x, CU_DEVICE_ATTRIBUTE_MAX, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuDeviceGetAttribute(&x,
			CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 3),
		   CUDA_ERROR_INVALID_DEVICE);
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
	EXPECT_RES(cuMemFree(0), CUDA_ERROR_INVALID_VALUE);
	OK(cuMemGetInfo(&fr2, &tot));
	EXPECT(fr2 >= fr + mib);
	OK(cuMemFree(a));
	free(h);
	free(back);
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
	OK(cuMemFreeHost(q));
	OK(cuMemFree(d));
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

	/* Registered memory: copies are staged, kernels cannot reach it. */
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

static void test_contexts(CUcontext primary)
{
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

	/* The sim backend loads no code. */
	EXPECT_RES(cuModuleLoadData(&m, ptx), CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuModuleLoadDataEx(&m, ptx, 1, &opt, &val),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuModuleLoadDataEx(&m, ptx, 1, NULL, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuModuleLoadData(&m, fatbin), CUDA_ERROR_NOT_SUPPORTED);
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
	p = lookup("cuGraphCreate", 13000, 0, &st, &r);
	EXPECT(p && st == CU_GET_PROC_ADDRESS_SUCCESS);
	if (p)
		EXPECT(((CUresult (*)(CUgraph *, unsigned))p)(NULL, 0) ==
		       CUDA_ERROR_NOT_SUPPORTED);
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

static void test_primary(void)
{
	unsigned flags = 1;
	int active = -1;
	CUcontext p0, p1;
	CUdeviceptr d;

	OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT(active == 0 && flags == 0);
	EXPECT_RES(cuMemAlloc(&d, 16), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuDevicePrimaryCtxRetain(&p0, 0));
	OK(cuDevicePrimaryCtxRetain(&p1, 0));
	EXPECT(p0 == p1);
	OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT(active == 1);
	OK(cuCtxSetCurrent(p0));
	OK(cuCtxGetDevice(&(CUdevice){ 5 }));

	test_memory();
	test_host_memory();
	test_memory_streams();
	test_contexts(p0);
	test_streams_events();
	test_modules();
	test_proc_address();

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

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--no-daemon")) {
		test_no_daemon();
		printf("test_driver --no-daemon: %u passed, %u failed\n",
		       passed, failed);
		return failed ? 1 : 0;
	}
	test_before_init();
	test_device();
	test_primary();
	test_unsupported();
	printf("test_driver: %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
