// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The driver-API program test-cuda-trace.sh traces: a fixed sequence of
 * calls, linked with -lcuda, with known results on mdgpu's libcuda.so.1
 * over a sim-backend mdgpud (MDGPU_TYPE=1g).  It checks each result itself
 * (exit 1 and a FAIL line on the first surprise); the script checks what
 * the trace says about the same calls.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

/* A 1 TiB allocation: past any vGPU type's quota. */
#define TOO_MUCH ((size_t)1 << 40)

#define CHECK(call, want) do {						\
	CUresult r_ = (call);						\
	if (r_ != (want)) {						\
		fprintf(stderr, "FAIL %s = %d, expected %d\n", #call,	\
			(int)r_, (int)(want));				\
		exit(1);						\
	}								\
} while (0)

/* TOOLS_RUNTIME_CALLBACK_HOOKS: slot 6 is (void **area, size_t *size). */
static const CUuuid hooks_id = { {
	(char)0xa0, (char)0x94, (char)0x79, (char)0x8c, (char)0x2e,
	(char)0x74, (char)0x2e, (char)0x74, (char)0x93, (char)0xf2,
	(char)0x08, (char)0x00, (char)0x20, (char)0x0c, (char)0x0a,
	(char)0x66 } };
static const CUuuid unknown_id = { { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
				     12, 13, 14, 15, 16 } };

int main(void)
{
	CUresult (*mem_free)(CUdeviceptr) = NULL;
	CUdriverProcAddressQueryResult st;
	void (*hook6)(void **, size_t *);
	CUdeviceptr dptr, managed;
	const void *const *table;
	const void *tbl;
	void *area = NULL;
	size_t size = 0;
	CUcontext ctx;
	CUdevice dev;
	int sms = 0;

	CHECK(cuInit(0), CUDA_SUCCESS);
	CHECK(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	CHECK(cuDeviceGetAttribute(&sms,
				   CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
				   dev), CUDA_SUCCESS);
	CHECK(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
	CHECK(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	CHECK(cuMemAlloc(&dptr, 4096), CUDA_SUCCESS);
	CHECK(cuMemAlloc(&managed, TOO_MUCH), CUDA_ERROR_OUT_OF_MEMORY);
	CHECK(cuMemAllocManaged(&managed, 4096, CU_MEM_ATTACH_GLOBAL),
	      CUDA_ERROR_NOT_SUPPORTED);
	CHECK(cuGetProcAddress("cuMemFree", (void **)&mem_free, 12000, 0, &st),
	      CUDA_SUCCESS);
	CHECK(mem_free(dptr), CUDA_SUCCESS);
	CHECK(mem_free(dptr), CUDA_ERROR_INVALID_VALUE);
	CHECK(cuGetExportTable(&tbl, &unknown_id), CUDA_ERROR_NOT_FOUND);
	CHECK(cuGetExportTable(&tbl, &hooks_id), CUDA_SUCCESS);
	table = tbl;
	hook6 = (void (*)(void **, size_t *))(uintptr_t)table[6];
	hook6(&area, &size);
	if (!area || size != 14) {
		fprintf(stderr, "FAIL hooks slot 6: area %p size %zu\n", area,
			size);
		return 1;
	}
	CHECK(cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
	printf("trace-test: %d SMs, all calls as expected\n", sms);
	return 0;
}
