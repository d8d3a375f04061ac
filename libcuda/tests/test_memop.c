// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A driver-API program in plain C against cuda.h, linked with -lcuda, for
 * libcuda's stream memory operations (libcuda/memop.c, STREAM_MEMOP of
 * ABI 1.10).  run-code-tests.sh runs it against an mdgpud on the sim
 * backend and on the cuda backend over CI's fake libcuda
 * (MDGPU_TEST_BACKEND=cuda).
 *
 * Every backend: 32- and 64-bit writes read back, waits already met
 * under each condition (GEQ cyclically), a write then a wait on one
 * stream, a batch, the v1 and per-thread-stream names, the device
 * attributes, and every refusal: flags and operations not offered
 * (NOT_SUPPORTED, a refused batch writing nothing), bad pointers and
 * arguments (INVALID_VALUE), forged streams, mapped host memory, a
 * capturing stream.
 * sim: a wait not met is refused (NOT_SUPPORTED) and the context goes on.
 * cuda: a wait not met holds its stream (and the work queued after it)
 * until a write on another stream releases it, 32- and 64-bit.
 * Prints "N passed, N failed, N skipped".
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "expect.h"

static bool on_cuda;

static uint32_t get32(CUdeviceptr p)
{
	uint32_t v = 0xdeadbeef;

	OK(cuMemcpyDtoH(&v, p, sizeof(v)));
	return v;
}

static uint64_t get64(CUdeviceptr p)
{
	uint64_t v = 0xdeadbeefdeadbeefULL;

	OK(cuMemcpyDtoH(&v, p, sizeof(v)));
	return v;
}

static void put32(CUdeviceptr p, uint32_t v)
{
	OK(cuMemcpyHtoD(p, &v, sizeof(v)));
}

/* Writes of both widths on the legacy stream and a created one. */
static void test_write(CUdeviceptr d)
{
	CUstream s;

	OK(cuStreamWriteValue32(NULL, d, 0x12345678, 0));
	EXPECT(get32(d) == 0x12345678);
	OK(cuStreamWriteValue64(NULL, d + 8, 0x0123456789abcdefULL, 0));
	EXPECT(get64(d + 8) == 0x0123456789abcdefULL);
	/* A 32-bit write leaves the next word alone. */
	OK(cuStreamWriteValue64(NULL, d + 16, ~0ULL, 0));
	OK(cuStreamWriteValue32(NULL, d + 16, 0, 0));
	EXPECT(get64(d + 16) == 0xffffffff00000000ULL);
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuStreamWriteValue32(s, d + 24, 7, 0));
	OK(cuStreamWriteValue64(s, d + 32, 1ULL << 40, 0));
	OK(cuStreamSynchronize(s));
	EXPECT(get32(d + 24) == 7);
	EXPECT(get64(d + 32) == 1ULL << 40);
	/* Stream order: a write after a memset of the same word wins. */
	OK(cuMemsetD32Async(d + 40, 0xaaaaaaaa, 4, s));
	OK(cuStreamWriteValue32(s, d + 44, 3, 0));
	OK(cuStreamSynchronize(s));
	EXPECT(get32(d + 40) == 0xaaaaaaaa && get32(d + 44) == 3);
	OK(cuStreamDestroy(s));
}

/* Waits whose condition already holds go on, each condition, both widths. */
static void test_wait_met(CUdeviceptr d)
{
	CUstream s;

	put32(d, 5);
	OK(cuStreamWaitValue32(NULL, d, 5, CU_STREAM_WAIT_VALUE_EQ));
	OK(cuStreamWaitValue32(NULL, d, 4, CU_STREAM_WAIT_VALUE_GEQ));
	OK(cuStreamWaitValue32(NULL, d, 5, CU_STREAM_WAIT_VALUE_GEQ));
	OK(cuStreamWaitValue32(NULL, d, 4, CU_STREAM_WAIT_VALUE_AND));
	/* ~(5 | 2) has bits set. */
	OK(cuStreamWaitValue32(NULL, d, 2, CU_STREAM_WAIT_VALUE_NOR));
	OK(cuCtxSynchronize());
	/* GEQ is cyclic: 1 is "after" 0xffffffff. */
	put32(d, 1);
	OK(cuStreamWaitValue32(NULL, d, 0xffffffffu, CU_STREAM_WAIT_VALUE_GEQ));
	OK(cuCtxSynchronize());
	OK(cuStreamWriteValue64(NULL, d + 8, 0x100000000ULL, 0));
	OK(cuStreamWaitValue64(NULL, d + 8, 0x100000000ULL,
			       CU_STREAM_WAIT_VALUE_EQ));
	OK(cuStreamWaitValue64(NULL, d + 8, 0xffffffffULL,
			       CU_STREAM_WAIT_VALUE_GEQ));
	OK(cuStreamWaitValue64(NULL, d + 8, 0x100000000ULL,
			       CU_STREAM_WAIT_VALUE_AND));
	OK(cuCtxSynchronize());
	/* A write, then a wait for it, on one stream. */
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuStreamWriteValue32(s, d + 4, 9, 0));
	OK(cuStreamWaitValue32(s, d + 4, 9, CU_STREAM_WAIT_VALUE_EQ));
	OK(cuStreamWriteValue32(s, d + 4, 10, 0));
	OK(cuStreamSynchronize(s));
	EXPECT(get32(d + 4) == 10);
	OK(cuStreamDestroy(s));
}

static void memop(CUstreamBatchMemOpParams *p, CUstreamBatchMemOpType t,
		  CUdeviceptr a, uint64_t v, unsigned flags)
{
	memset(p, 0, sizeof(*p));
	p->operation = t;
	if (t == CU_STREAM_MEM_OP_WAIT_VALUE_32 ||
	    t == CU_STREAM_MEM_OP_WAIT_VALUE_64) {
		p->waitValue.address = a;
		p->waitValue.value64 = v;
		p->waitValue.flags = flags;
	} else {
		p->writeValue.address = a;
		p->writeValue.value64 = v;
		p->writeValue.flags = flags;
	}
}

static void test_batch(CUdeviceptr d)
{
	CUstreamBatchMemOpParams p[4];

	memop(&p[0], CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 21, 0);
	memop(&p[1], CU_STREAM_MEM_OP_WAIT_VALUE_32, d, 21,
	      CU_STREAM_WAIT_VALUE_EQ);
	memop(&p[2], CU_STREAM_MEM_OP_WRITE_VALUE_64, d + 8, 1ULL << 63, 0);
	memop(&p[3], CU_STREAM_MEM_OP_WAIT_VALUE_64, d + 8, 1ULL << 63,
	      CU_STREAM_WAIT_VALUE_AND);
	OK(cuStreamBatchMemOp(NULL, 4, p, 0));
	OK(cuCtxSynchronize());
	EXPECT(get32(d) == 21);
	EXPECT(get64(d + 8) == 1ULL << 63);
	OK(cuStreamBatchMemOp(NULL, 0, NULL, 0));
	/* The v1 name takes the same parameters. */
	memop(&p[0], CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 22, 0);
	{
		CUresult (*v1)(CUstream, unsigned, CUstreamBatchMemOpParams *,
			       unsigned) =
			(CUresult (*)(CUstream, unsigned,
				      CUstreamBatchMemOpParams *, unsigned))
			dlsym(RTLD_DEFAULT, "cuStreamBatchMemOp");

		EXPECT(v1 != NULL);
		if (v1)
			OK(v1(NULL, 1, p, 0));
	}
	EXPECT(get32(d) == 22);
}

typedef CUresult (*memop32_fn)(CUstream, CUdeviceptr, cuuint32_t,
			       unsigned int);

typedef CUresult (*memop64_fn)(CUstream, CUdeviceptr, cuuint64_t,
			       unsigned int);
typedef CUresult (*batch_fn)(CUstream, unsigned int,
			     CUstreamBatchMemOpParams *, unsigned int);

/* Every exported name of the memop calls besides the _v2 ones that
 * cuda.h maps to: the v1 names and the per-thread-default-stream
 * variants, each called once and its effect checked. */
static void test_names(CUdeviceptr d)
{
	static const char *const w32[] = {
		"cuStreamWriteValue32", "cuStreamWriteValue32_ptsz",
		"cuStreamWriteValue32_v2_ptsz",
	};
	static const char *const w64[] = {
		"cuStreamWriteValue64", "cuStreamWriteValue64_ptsz",
		"cuStreamWriteValue64_v2_ptsz",
	};
	static const char *const wait32[] = {
		"cuStreamWaitValue32", "cuStreamWaitValue32_ptsz",
		"cuStreamWaitValue32_v2_ptsz",
	};
	static const char *const wait64[] = {
		"cuStreamWaitValue64", "cuStreamWaitValue64_ptsz",
		"cuStreamWaitValue64_v2_ptsz",
	};
	static const char *const batch[] = {
		"cuStreamBatchMemOp_ptsz", "cuStreamBatchMemOp_v2_ptsz",
	};

	for (size_t i = 0; i < sizeof(w32) / sizeof(w32[0]); i++) {
		memop32_fn w = (memop32_fn)dlsym(RTLD_DEFAULT, w32[i]);
		memop32_fn t = (memop32_fn)dlsym(RTLD_DEFAULT, wait32[i]);

		EXPECT(w != NULL && t != NULL);
		if (!w || !t)
			continue;
		OK(w(NULL, d, 100 + (uint32_t)i, 0));
		OK(t(NULL, d, 100 + (uint32_t)i, CU_STREAM_WAIT_VALUE_EQ));
		OK(cuCtxSynchronize());
		EXPECT(get32(d) == 100 + i);
	}
	for (size_t i = 0; i < sizeof(w64) / sizeof(w64[0]); i++) {
		memop64_fn w = (memop64_fn)dlsym(RTLD_DEFAULT, w64[i]);
		memop64_fn t = (memop64_fn)dlsym(RTLD_DEFAULT, wait64[i]);

		EXPECT(w != NULL && t != NULL);
		if (!w || !t)
			continue;
		OK(w(NULL, d + 8, (1ULL << 40) + i, 0));
		OK(t(NULL, d + 8, (1ULL << 40) + i, CU_STREAM_WAIT_VALUE_GEQ));
		OK(cuCtxSynchronize());
		EXPECT(get64(d + 8) == (1ULL << 40) + i);
	}
	for (size_t i = 0; i < sizeof(batch) / sizeof(batch[0]); i++) {
		batch_fn fn = (batch_fn)dlsym(RTLD_DEFAULT, batch[i]);
		CUstreamBatchMemOpParams p;

		EXPECT(fn != NULL);
		if (!fn)
			continue;
		memop(&p, CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 200 + (uint32_t)i,
		      0);
		OK(fn(NULL, 1, &p, 0));
		OK(cuCtxSynchronize());
		EXPECT(get32(d) == 200 + i);
	}
}

static void test_refusals(CUdeviceptr d)
{
	CUstreamBatchMemOpParams p[2];
	CUdeviceptr gone;

	put32(d, 1);
	/* Flags and operations mdgpu does not offer. */
	EXPECT_RES(cuStreamWriteValue32(NULL, d, 2,
			CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuStreamWriteValue64(NULL, d, 2,
			CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuStreamWriteValue32(NULL, d, 2, 0x4),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuStreamWaitValue32(NULL, d, 1, CU_STREAM_WAIT_VALUE_EQ |
				       CU_STREAM_WAIT_VALUE_FLUSH),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuStreamWaitValue64(NULL, d, 1, CU_STREAM_WAIT_VALUE_FLUSH),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuStreamWaitValue32(NULL, d, 1, 0x10),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT(get32(d) == 1);
	/* A batch is checked whole: nothing of a refused one is done. */
	memop(&p[0], CU_STREAM_MEM_OP_WRITE_VALUE_32, d, 77, 0);
	memset(&p[1], 0, sizeof(p[1]));
	p[1].operation = CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
	EXPECT_RES(cuStreamBatchMemOp(NULL, 2, p, 0), CUDA_ERROR_NOT_SUPPORTED);
	p[1].operation = CU_STREAM_MEM_OP_BARRIER;
	EXPECT_RES(cuStreamBatchMemOp(NULL, 2, p, 0), CUDA_ERROR_NOT_SUPPORTED);
	p[1].operation = (CUstreamBatchMemOpType)99;
	EXPECT_RES(cuStreamBatchMemOp(NULL, 2, p, 0), CUDA_ERROR_NOT_SUPPORTED);
	memop(&p[1], CU_STREAM_MEM_OP_WRITE_VALUE_32, d + 2, 1, 0);
	EXPECT_RES(cuStreamBatchMemOp(NULL, 2, p, 0), CUDA_ERROR_INVALID_VALUE);
	OK(cuCtxSynchronize());
	EXPECT(get32(d) == 1);
	EXPECT_RES(cuStreamBatchMemOp(NULL, 1, p, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamBatchMemOp(NULL, 1, NULL, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamBatchMemOp(NULL, 257, p, 0),
		   CUDA_ERROR_INVALID_VALUE);

	/* Bad pointers: none, misaligned, past the allocation, never
	 * allocated, freed. */
	EXPECT_RES(cuStreamWriteValue32(NULL, 0, 1, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamWaitValue32(NULL, 0, 1, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamWriteValue32(NULL, d + 2, 1, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamWriteValue64(NULL, d + 4, 1, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamWaitValue64(NULL, d + 4, 1, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamWriteValue32(NULL, d + 4096, 1, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamWriteValue64(NULL, d + 4096 - 4, 1, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamWriteValue64(NULL, ~(CUdeviceptr)7, 1, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuStreamWaitValue32(NULL, 0xdead0000, 1, 0),
		   CUDA_ERROR_INVALID_VALUE);
	OK(cuMemAlloc(&gone, 64));
	OK(cuMemFree(gone));
	EXPECT_RES(cuStreamWriteValue32(NULL, gone, 1, 0),
		   CUDA_ERROR_INVALID_VALUE);
	/* A forged stream. */
	EXPECT_RES(cuStreamWriteValue32((CUstream)&gone, d, 1, 0),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT(get32(d) == 1);
}

/* Mapped host memory and a capturing stream: refused, said so. */
static void test_host_and_capture(CUdeviceptr d)
{
	CUstream s;
	CUgraph g = NULL;
	void *h = NULL;
	CUdeviceptr hd;

	if (cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_DEVICEMAP) ==
	    CUDA_SUCCESS &&
	    cuMemHostGetDevicePointer(&hd, h, 0) == CUDA_SUCCESS) {
		EXPECT_RES(cuStreamWriteValue32(NULL, hd, 1, 0),
			   CUDA_ERROR_NOT_SUPPORTED);
		EXPECT_RES(cuStreamWaitValue32(NULL, hd, 0, 0),
			   CUDA_ERROR_NOT_SUPPORTED);
	} else {
		SKIP("no mapped host memory on this backend");
	}
	if (h)
		OK(cuMemFreeHost(h));

	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_RES(cuStreamWriteValue32(s, d, 5, 0),
		   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	EXPECT_RES(cuStreamEndCapture(s, &g),
		   CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	if (g)
		cuGraphDestroy(g);
	OK(cuStreamDestroy(s));
}

/* What the memop attributes read: what memop.c offers. */
static void test_attributes(void)
{
	static const struct {
		CUdevice_attribute attr;
		int want;
	} attrs[] = {
		{ CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, 1 },
		{ CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, 1 },
		{ CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1, 1 },
		{ CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, 1 },
		{ CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1, 1 },
		{ CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES, 0 },
	};

	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		int v = -1;

		OK(cuDeviceGetAttribute(&v, attrs[i].attr, 0));
		EXPECT(v == attrs[i].want);
	}
}

/* sim: nothing could release a wait not met when it runs: refused. */
static void test_sim_unmet(CUdeviceptr d)
{
	put32(d, 0);
	EXPECT_RES(cuStreamWaitValue32(NULL, d, 1, CU_STREAM_WAIT_VALUE_EQ),
		   CUDA_ERROR_NOT_SUPPORTED);
	OK(cuStreamWriteValue64(NULL, d + 8, 0, 0));
	EXPECT_RES(cuStreamWaitValue64(NULL, d + 8, 1,
				       CU_STREAM_WAIT_VALUE_GEQ),
		   CUDA_ERROR_NOT_SUPPORTED);
	/* The context goes on. */
	OK(cuStreamWriteValue32(NULL, d, 3, 0));
	OK(cuCtxSynchronize());
	EXPECT(get32(d) == 3);
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * cuda: a wait not met holds its stream, and the write queued after it,
 * until a write on another stream releases it.  The release must reach
 * the daemon within the slice the wait runs in: the daemon's only vGPU
 * keeps its slice at most 100 ms while its streams are busy, and ending
 * a slice drains every stream, which a held wait never lets happen (the
 * hang bound then destroys the context; Documentation/libcuda.md).  So
 * the sequence starts after a pause that lets the idle vGPU's slice end,
 * and takes a few ms.
 */
static void test_cuda_released(CUdeviceptr d, bool wide)
{
	CUstream s1, s2;
	uint32_t seen = 0xffffffff;

	OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	OK(cuMemsetD8(d, 0, 64));
	OK(cuCtxSynchronize());
	nap_ms(20);
	if (wide)
		OK(cuStreamWaitValue64(s1, d, 1ULL << 33,
				       CU_STREAM_WAIT_VALUE_GEQ));
	else
		OK(cuStreamWaitValue32(s1, d, 1, CU_STREAM_WAIT_VALUE_EQ));
	OK(cuStreamWriteValue32(s1, d + 16, 42, 0));
	nap_ms(5);
	EXPECT_RES(cuStreamQuery(s1), CUDA_ERROR_NOT_READY);
	/* s2 runs on meanwhile: the word after the wait is not written. */
	OK(cuMemcpyDtoHAsync(&seen, d + 16, sizeof(seen), s2));
	OK(cuStreamSynchronize(s2));
	EXPECT(seen == 0);
	if (wide)
		OK(cuStreamWriteValue64(s2, d, 1ULL << 33, 0));
	else
		OK(cuStreamWriteValue32(s2, d, 1, 0));
	OK(cuStreamSynchronize(s1));
	EXPECT(get32(d + 16) == 42);
	OK(cuStreamDestroy(s1));
	OK(cuStreamDestroy(s2));
}

int main(void)
{
	const char *backend = getenv("MDGPU_TEST_BACKEND");
	CUcontext ctx;
	CUdeviceptr d;

	on_cuda = backend && !strcmp(backend, "cuda");
	OK(cuInit(0));
	OK(cuDevicePrimaryCtxRetain(&ctx, 0));
	OK(cuCtxSetCurrent(ctx));
	OK(cuMemAlloc(&d, 4096));
	test_attributes();
	test_write(d);
	test_wait_met(d);
	test_batch(d);
	test_names(d);
	test_refusals(d);
	test_host_and_capture(d);
	if (on_cuda) {
		test_cuda_released(d, false);
		test_cuda_released(d, true);
	} else {
		test_sim_unmet(d);
	}
	OK(cuMemFree(d));
	OK(cuDevicePrimaryCtxRelease(0));
	printf("test_memop (%s): %u passed, %u failed, %u skipped\n",
	       on_cuda ? "cuda" : "sim", passed, failed, skipped);
	return failed ? 1 : 0;
}
