// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A fake libcuda.so.1 for CI (make check-bench): the entry points
 * mdgpu-bench's native target resolves, with a one-stream timing model
 * (a launch or copy finishes a fixed time after the previous one), so the
 * native code paths and the output run end to end on a machine without a
 * GPU.  Its figures are meaningless and it never reaches a real GPU: only
 * check-bench.sh puts it on LD_LIBRARY_PATH.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef unsigned int fake_result;

#define FAKE_INVALID_VALUE	1
#define FAKE_INVALID_IMAGE	200
#define FAKE_NOT_FOUND		500
#define FAKE_NOT_READY		600
#define FAKE_SUBMIT_NS		2000	/* CPU cost of a launch */
#define FAKE_EMPTY_NS		1500	/* an empty kernel */
#define FAKE_WORK_NS_PER_ITER	250	/* bench_work */
#define FAKE_BYTES_PER_US	20000	/* copies: 20 GB/s */

struct fake_func {
	int kind;		/* 0 empty, 1 work, 2 spin */
};
struct fake_event {
	uint64_t t;
};

static uint64_t fake_busy_until;	/* the stream's last completion */
static struct fake_func fake_empty = { 0 }, fake_work = { 1 },
			fake_spin = { 2 };

static uint64_t fake_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void fake_wait_until(uint64_t t)
{
	uint64_t n;

	while ((n = fake_now()) < t) {
		struct timespec ts = { 0, (long)(t - n) };

		nanosleep(&ts, NULL);
	}
}

static void fake_queue(uint64_t ns)
{
	uint64_t start = fake_now() + FAKE_SUBMIT_NS;

	if (fake_busy_until < start)
		fake_busy_until = start;
	fake_busy_until += ns;
}

fake_result cuInit(unsigned int flags)
{
	(void)flags;
	return 0;
}

fake_result cuGetErrorName(fake_result err, const char **name)
{
	(void)err;
	*name = "FAKE_ERROR";
	return 0;
}

fake_result cuDeviceGetCount(int *count)
{
	*count = 1;
	return 0;
}

fake_result cuDeviceGet(int *dev, int ordinal)
{
	*dev = ordinal;
	return ordinal ? FAKE_INVALID_VALUE : 0;
}

fake_result cuDeviceGetName(char *name, int len, int dev)
{
	(void)dev;
	snprintf(name, (size_t)len, "fake GPU (bench/tests/fake_libcuda.c)");
	return 0;
}

fake_result cuDeviceGetAttribute(int *value, unsigned int attr, int dev)
{
	(void)attr;
	(void)dev;
	*value = 132;
	return 0;
}

fake_result cuDevicePrimaryCtxSetFlags_v2(int dev, unsigned int flags)
{
	(void)dev;
	(void)flags;
	return 0;
}

fake_result cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
	(void)dev;
	*ctx = &fake_busy_until;
	return 0;
}

fake_result cuDevicePrimaryCtxRelease_v2(int dev)
{
	(void)dev;
	return 0;
}

fake_result cuCtxSetCurrent(void *ctx)
{
	(void)ctx;
	return 0;
}

fake_result cuStreamCreate(void **stream, unsigned int flags)
{
	(void)flags;
	*stream = &fake_busy_until;
	return 0;
}

fake_result cuStreamDestroy_v2(void *stream)
{
	(void)stream;
	return 0;
}

fake_result cuStreamSynchronize(void *stream)
{
	(void)stream;
	fake_wait_until(fake_busy_until);
	return 0;
}

fake_result cuModuleLoadDataEx(void **module, const void *image,
			       unsigned int n, void *options, void **values)
{
	(void)n;
	(void)options;
	(void)values;
	if (!strstr(image, ".entry bench_work"))
		return FAKE_INVALID_IMAGE;
	*module = &fake_busy_until;
	return 0;
}

fake_result cuModuleGetFunction(struct fake_func **f, void *module,
				const char *name)
{
	(void)module;
	if (!strcmp(name, "bench_empty"))
		*f = &fake_empty;
	else if (!strcmp(name, "bench_work"))
		*f = &fake_work;
	else if (!strcmp(name, "bench_spin_ns"))
		*f = &fake_spin;
	else
		return FAKE_NOT_FOUND;
	return 0;
}

fake_result cuModuleUnload(void *module)
{
	(void)module;
	return 0;
}

fake_result cuLaunchKernel(struct fake_func *f, unsigned int gx,
			   unsigned int gy, unsigned int gz, unsigned int bx,
			   unsigned int by, unsigned int bz, unsigned int shm,
			   void *stream, void **params, void **extra)
{
	(void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz;
	(void)shm; (void)stream; (void)extra;
	fake_wait_until(fake_now() + FAKE_SUBMIT_NS);
	switch (f->kind) {
	case 0:
		fake_queue(FAKE_EMPTY_NS);
		break;
	case 1:
		fake_queue((uint64_t)*(unsigned int *)params[0] *
			   FAKE_WORK_NS_PER_ITER);
		break;
	default:
		fake_queue(*(unsigned long long *)params[0]);
	}
	return 0;
}

fake_result cuMemAlloc_v2(unsigned long long *p, size_t n)
{
	*p = (unsigned long long)(uintptr_t)malloc(n);
	return 0;
}

fake_result cuMemFree_v2(unsigned long long p)
{
	free((void *)(uintptr_t)p);
	return 0;
}

fake_result cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
	(void)flags;
	*p = malloc(n);
	return *p ? 0 : 2;
}

fake_result cuMemFreeHost(void *p)
{
	free(p);
	return 0;
}

fake_result cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src,
				 size_t n, void *stream)
{
	(void)dst;
	(void)src;
	(void)stream;
	fake_queue(n * 1000 / FAKE_BYTES_PER_US);
	return 0;
}

fake_result cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src,
				 size_t n, void *stream)
{
	(void)dst;
	(void)src;
	(void)stream;
	fake_queue(n * 1000 / FAKE_BYTES_PER_US);
	return 0;
}

fake_result cuEventCreate(struct fake_event **e, unsigned int flags)
{
	(void)flags;
	*e = calloc(1, sizeof(**e));
	return *e ? 0 : 2;
}

fake_result cuEventRecord(struct fake_event *e, void *stream)
{
	(void)stream;
	e->t = fake_busy_until;
	return 0;
}

fake_result cuEventSynchronize(struct fake_event *e)
{
	fake_wait_until(e->t);
	return 0;
}

fake_result cuEventQuery(struct fake_event *e)
{
	return fake_now() >= e->t ? 0 : FAKE_NOT_READY;
}

fake_result cuEventElapsedTime_v2(float *ms, struct fake_event *a,
				  struct fake_event *b)
{
	*ms = (float)((double)(b->t - a->t) / 1e6);
	return 0;
}

fake_result cuEventDestroy_v2(struct fake_event *e)
{
	free(e);
	return 0;
}
