// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A fake libcuda.so.1 for CI, which has no GPU: the driver-API subset of
 * backends/cuda/worker/cuda_api.h implemented on host memory, so that test_cuda_fake runs
 * the whole cuda backend -- supervisor, worker processes, shared-memory
 * ring, fd passing, staging, crash detection, shutdown -- without a GPU.
 * It proves nothing about the GPU (no isolation, no real kernels); the GPU
 * machine runs test_cuda_backend for that.
 *
 * Exported names are the driver's own (cuInit, cuMemAlloc_v2, ...), the
 * one exception to the mdgpud_ prefix: this file IS a libcuda.
 *
 * "Device memory" is host memory of the worker; device addresses are host
 * pointers.  Modules, their kernels and globals, the named fake kernels
 * that run as C at launch, function attributes, occupancy, context limits
 * and the device attribute table live in modules.c (its header comment
 * lists the kernels).  cuInit fails with NO_DEVICE when
 * MDGPUD_FAKE_CUDA_NODEV is set.
 *
 * A worker gone wrong, for the supervisor's bounds (read by the worker at
 * each cuMemAlloc of 4 KiB or more, which its own start-up never makes, so
 * a test sets it around the creation of the one context it concerns):
 *   MDGPUD_FAKE_CUDA_ALLOC=hang      cuMemAlloc never returns (a driver
 *                                    call that does not come back)
 *   MDGPUD_FAKE_CUDA_ALLOC=scribble  the worker's message in the shared
 *                                    memory is overwritten without a
 *                                    terminator, and the worker exits
 *                                    without answering (a hostile worker)
 *   MDGPUD_FAKE_CUDA_SYSCALL=ptrace  the worker tries PTRACE_ATTACH to its
 *                                    supervisor (driver code gone rogue)
 *   MDGPUD_FAKE_CUDA_SYSCALL=mount   the worker tries to mount a tmpfs
 *   MDGPUD_FAKE_CUDA_SYSCALL=execve  the worker tries to run /bin/true
 *   (under the worker sandbox's seccomp filter the first two kill the
 *   worker, and execve fails EPERM, after which the allocation succeeds;
 *   the result of a call that returns is printed on stderr)
 */
#include "cuda_rpc.h"
#include "fake.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

mdgpud_cu_result fake_sticky;

struct CUctx_st { int dummy; };
struct CUstream_st { int dummy; };
struct CUevent_st { uint64_t ns; int recorded; };

static struct CUctx_st fake_ctx;
static struct CUstream_st fake_stream;

uint64_t fake_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

FAKE_EXPORT mdgpud_cu_result cuInit(unsigned int flags)
{
	(void)flags;
	return getenv("MDGPUD_FAKE_CUDA_NODEV") ? MDGPUD_CUDA_ERROR_NO_DEVICE
						: 0;
}

FAKE_EXPORT mdgpud_cu_result cuDriverGetVersion(int *v)
{
	*v = 13000;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuGetErrorName(mdgpud_cu_result e,
					    const char **s)
{
	switch (e) {
	case MDGPUD_CUDA_ERROR_ILLEGAL_ADDRESS:
		*s = "CUDA_ERROR_ILLEGAL_ADDRESS";
		break;
	case MDGPUD_CUDA_ERROR_INVALID_PTX:
		*s = "CUDA_ERROR_INVALID_PTX";
		break;
	case MDGPUD_CUDA_ERROR_NO_DEVICE:
		*s = "CUDA_ERROR_NO_DEVICE";
		break;
	default:
		*s = "CUDA_ERROR_FAKE";
	}
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuGetErrorString(mdgpud_cu_result e,
					      const char **s)
{
	return cuGetErrorName(e, s);
}

FAKE_EXPORT mdgpud_cu_result cuDeviceGetCount(int *n)
{
	*n = 1;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuDeviceGet(mdgpud_cu_device *d, int ordinal)
{
	if (ordinal != 0)
		return MDGPUD_CUDA_ERROR_INVALID_DEVICE;
	*d = 0;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuDeviceGetName(char *name, int len,
					     mdgpud_cu_device d)
{
	(void)d;
	snprintf(name, (size_t)len, "mdgpu fake CUDA device");
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuDeviceGetAttribute(int *v,
						  mdgpud_cu_device_attribute a,
						  mdgpud_cu_device d)
{
	(void)d;
	return fake_device_attr(a, v) ? MDGPUD_CUDA_ERROR_INVALID_VALUE : 0;
}

FAKE_EXPORT mdgpud_cu_result cuDeviceGetPCIBusId(char *id, int len,
						 mdgpud_cu_device d)
{
	(void)d;
	snprintf(id, (size_t)len, "fake0");
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuDevicePrimaryCtxRetain(mdgpud_cu_context *c,
						      mdgpud_cu_device d)
{
	(void)d;
	*c = &fake_ctx;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuDevicePrimaryCtxRelease_v2(mdgpud_cu_device d)
{
	(void)d;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuCtxSetCurrent(mdgpud_cu_context c)
{
	(void)c;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuCtxSynchronize(void)
{
	return fake_sticky;
}

FAKE_EXPORT mdgpud_cu_result cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
	*free_b = 3ull << 30;
	*total = 4ull << 30;
	return 0;
}

/* The worker's mapping of the shared memfd, found by its name. */
static struct mdgpud_cuda_rpc_shm *fake_find_shm(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	void *addr = NULL;

	if (!f)
		return NULL;
	while (!addr && fgets(line, sizeof(line), f)) {
		unsigned long lo;

		if (strstr(line, "memfd:mdgpud-cuda-rpc") &&
		    sscanf(line, "%lx-", &lo) == 1)
			addr = (void *)lo;
	}
	fclose(f);
	return addr;
}

/* MDGPUD_FAKE_CUDA_ALLOC (see the top of this file). */
static void fake_alloc_misbehave(size_t n)
{
	const char *how = getenv("MDGPUD_FAKE_CUDA_ALLOC");
	struct mdgpud_cuda_rpc_shm *shm;

	const char *sys = getenv("MDGPUD_FAKE_CUDA_SYSCALL");

	if (sys && n >= 4096) {
		long r = -1;

		if (!strcmp(sys, "ptrace"))
			r = syscall(SYS_ptrace, PTRACE_ATTACH, getppid(), 0, 0);
		else if (!strcmp(sys, "mount"))
			r = mount("none", "/tmp", "tmpfs", 0, NULL);
		else if (!strcmp(sys, "execve")) {
			char *const argv[] = { (char *)"true", NULL };

			r = execv("/bin/true", argv);
		}
		fprintf(stderr, "fake libcuda: %s: %ld (%s)\n", sys, r,
			r ? strerror(errno) : "ok");
	}
	if (!how || n < 4096)
		return;
	if (!strcmp(how, "hang")) {
		for (;;)
			pause();
	}
	if (strcmp(how, "scribble"))
		return;
	shm = fake_find_shm();
	if (shm)
		memset(shm->msg, 'A', sizeof(shm->msg));
	_exit(3);
}

FAKE_EXPORT mdgpud_cu_result cuMemAlloc_v2(mdgpud_cu_deviceptr *p, size_t n)
{
	void *m;

	fake_alloc_misbehave(n);
	if (fake_sticky)
		return fake_sticky;
	if (n > (1ull << 30))
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	/* Like the driver within one process: freed memory may come back
	 * with its old contents (malloc reuse), so the worker must scrub. */
	m = aligned_alloc(256, (n + 255) & ~(size_t)255);
	if (!m)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	*p = (uintptr_t)m;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuMemFree_v2(mdgpud_cu_deviceptr p)
{
	free((void *)(uintptr_t)p);
	return fake_sticky;
}

FAKE_EXPORT mdgpud_cu_result cuMemsetD8Async(mdgpud_cu_deviceptr d,
					     unsigned char v, size_t n,
					     mdgpud_cu_stream s)
{
	(void)s;
	if (fake_sticky)
		return fake_sticky;
	memset((void *)(uintptr_t)d, v, n);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuMemcpyHtoDAsync_v2(mdgpud_cu_deviceptr d,
						  const void *h, size_t n,
						  mdgpud_cu_stream s)
{
	(void)s;
	if (fake_sticky)
		return fake_sticky;
	memcpy((void *)(uintptr_t)d, h, n);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuMemcpyDtoHAsync_v2(void *h,
						  mdgpud_cu_deviceptr d,
						  size_t n, mdgpud_cu_stream s)
{
	(void)s;
	if (fake_sticky)
		return fake_sticky;
	memcpy(h, (const void *)(uintptr_t)d, n);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuMemcpyDtoDAsync_v2(mdgpud_cu_deviceptr d,
						  mdgpud_cu_deviceptr s,
						  size_t n,
						  mdgpud_cu_stream st)
{
	(void)st;
	if (fake_sticky)
		return fake_sticky;
	memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuMemHostRegister_v2(void *p, size_t n,
						  unsigned int flags)
{
	(void)p;
	(void)n;
	(void)flags;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuMemHostUnregister(void *p)
{
	(void)p;
	return 0;
}

/* Host memory is "device memory" here: mapped at its own address. */
FAKE_EXPORT mdgpud_cu_result cuMemHostGetDevicePointer_v2(
	mdgpud_cu_deviceptr *d, void *p, unsigned int flags)
{
	if (flags)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	*d = (uintptr_t)p;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuLaunchKernel(mdgpud_cu_function f,
					    unsigned int gx, unsigned int gy,
					    unsigned int gz, unsigned int bx,
					    unsigned int by, unsigned int bz,
					    unsigned int shared,
					    mdgpud_cu_stream s, void **params,
					    void **extra)
{
	(void)s;
	(void)shared;
	if (fake_sticky)
		return fake_sticky;
	if ((uint64_t)bx * by * bz > 1024 || !gx || !gy || !gz || !bx || !by ||
	    !bz)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	return fake_launch(f, gx * gy * gz * bx * by * bz, params, extra);
}

FAKE_EXPORT mdgpud_cu_result cuEventCreate(mdgpud_cu_event *e,
					   unsigned int flags)
{
	(void)flags;
	*e = calloc(1, sizeof(**e));
	return *e ? 0 : MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
}

FAKE_EXPORT mdgpud_cu_result cuEventRecord(mdgpud_cu_event e,
					   mdgpud_cu_stream s)
{
	(void)s;
	e->ns = fake_now_ns();	/* launches run synchronously */
	e->recorded = 1;
	return fake_sticky;
}

FAKE_EXPORT mdgpud_cu_result cuEventSynchronize(mdgpud_cu_event e)
{
	(void)e;
	return fake_sticky;
}

FAKE_EXPORT mdgpud_cu_result cuEventElapsedTime_v2(float *ms,
						   mdgpud_cu_event a,
						   mdgpud_cu_event b)
{
	if (!a->recorded || !b->recorded)
		return MDGPUD_CUDA_ERROR_INVALID_HANDLE;
	*ms = (float)((double)(b->ns - a->ns) / 1e6);
	return fake_sticky;
}

FAKE_EXPORT mdgpud_cu_result cuEventDestroy_v2(mdgpud_cu_event e)
{
	free(e);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuStreamCreate(mdgpud_cu_stream *s,
					    unsigned int flags)
{
	(void)flags;
	*s = &fake_stream;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuStreamDestroy_v2(mdgpud_cu_stream s)
{
	(void)s;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuStreamSynchronize(mdgpud_cu_stream s)
{
	(void)s;
	return fake_sticky;
}

/* Work runs synchronously: the stream is always drained. */
FAKE_EXPORT mdgpud_cu_result cuStreamQuery(mdgpud_cu_stream s)
{
	(void)s;
	return fake_sticky;
}
