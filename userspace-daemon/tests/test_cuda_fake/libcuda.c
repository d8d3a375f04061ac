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
 * pointers.  Modules are recognised by the ".entry NAME" lines of their
 * PTX text; functions run synchronously in C at launch:
 *   mdgpud_fill_u32, mdgpud_add_u32, mdgpud_checksum_u32, mdgpud_spin_ns
 *     (the builtins, same parameter layouts as kernels/builtin.cu)
 *   scale_add (u64 p, u64 n, u32 k): p[i] = p[i] * k + i
 *   poke: simulates a GPU fault: ILLEGAL_ADDRESS, sticky, at the next sync
 *   forever: blocks the launching thread forever (a kernel that never ends)
 * A PTX text containing "this is not ptx" fails to JIT (INVALID_PTX with a
 * log).  cuInit fails with NO_DEVICE when MDGPUD_FAKE_CUDA_NODEV is set.
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
#include "cuda_api.h"
#include "cuda_rpc.h"

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

#define FAKE_EXPORT __attribute__((visibility("default")))

static mdgpud_cu_result fake_sticky;

struct CUctx_st { int dummy; };
struct CUstream_st { int dummy; };
struct CUevent_st { uint64_t ns; int recorded; };

typedef mdgpud_cu_result (*fake_fn)(const uint8_t *blob, size_t len,
				    unsigned int threads);

struct CUfunc_st {
	const char *name;
	size_t params;		/* bytes of parameters the kernel takes */
	fake_fn fn;
};

#define FAKE_MAX_FUNCS 8
struct CUmod_st {
	struct CUfunc_st funcs[FAKE_MAX_FUNCS];
	int nr;
};

static struct CUctx_st fake_ctx;
static struct CUstream_st fake_stream;

static uint64_t fake_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static mdgpud_cu_result k_fill(const uint8_t *b, size_t len, unsigned int t)
{
	uint32_t *dst = (uint32_t *)(uintptr_t)get_u64(b);
	uint64_t n = get_u64(b + 8);
	uint32_t v = get_u32(b + 16);

	(void)len;
	(void)t;
	for (uint64_t i = 0; i < n; i++)
		dst[i] = v;
	return 0;
}

static mdgpud_cu_result k_add(const uint8_t *b, size_t len, unsigned int t)
{
	uint32_t *dst = (uint32_t *)(uintptr_t)get_u64(b);
	const uint32_t *x = (const uint32_t *)(uintptr_t)get_u64(b + 8);
	const uint32_t *y = (const uint32_t *)(uintptr_t)get_u64(b + 16);
	uint64_t n = get_u64(b + 24);

	(void)len;
	(void)t;
	for (uint64_t i = 0; i < n; i++)
		dst[i] = x[i] + y[i];
	return 0;
}

static mdgpud_cu_result k_checksum(const uint8_t *b, size_t len,
				   unsigned int t)
{
	const uint32_t *w = (const uint32_t *)(uintptr_t)get_u64(b);
	uint64_t n = get_u64(b + 8);
	uint64_t *out = (uint64_t *)(uintptr_t)get_u64(b + 16);
	uint64_t sum = 0;

	(void)len;
	(void)t;
	for (uint64_t i = 0; i < n; i++)
		sum += (uint64_t)w[i] * (2 * i + 1);
	*out += sum;
	return 0;
}

static mdgpud_cu_result k_spin(const uint8_t *b, size_t len, unsigned int t)
{
	uint64_t ns = get_u64(b), start = fake_now_ns();

	(void)len;
	(void)t;
	while (fake_now_ns() - start < ns)
		;
	return 0;
}

static mdgpud_cu_result k_scale_add(const uint8_t *b, size_t len,
				    unsigned int threads)
{
	uint32_t *p = (uint32_t *)(uintptr_t)get_u64(b);
	uint64_t n = get_u64(b + 8);
	uint32_t k = get_u32(b + 16);

	(void)len;
	for (uint64_t i = 0; i < n && i < threads; i++)
		p[i] = p[i] * k + (uint32_t)i;
	return 0;
}

static mdgpud_cu_result k_poke(const uint8_t *b, size_t len, unsigned int t)
{
	(void)b;
	(void)len;
	(void)t;
	fake_sticky = MDGPUD_CUDA_ERROR_ILLEGAL_ADDRESS;
	return 0;
}

static mdgpud_cu_result k_forever(const uint8_t *b, size_t len,
				  unsigned int t)
{
	(void)b;
	(void)len;
	(void)t;
	for (;;)
		pause();
	return 0;
}

static const struct CUfunc_st fake_kernels[] = {
	{ "mdgpud_fill_u32", 20, k_fill },
	{ "mdgpud_add_u32", 32, k_add },
	{ "mdgpud_checksum_u32", 24, k_checksum },
	{ "mdgpud_spin_ns", 8, k_spin },
	{ "scale_add", 20, k_scale_add },
	{ "poke", 12, k_poke },
	{ "forever", 0, k_forever },
};

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
	*v = a == MDGPUD_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 4 : 0;
	return 0;
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

FAKE_EXPORT mdgpud_cu_result cuModuleLoadDataEx(mdgpud_cu_module *mod,
						const void *image,
						unsigned int nopt,
						mdgpud_cu_jit_option *opt,
						void **val)
{
	const char *text = image;
	struct CUmod_st *m;

	if (strstr(text, "this is not ptx")) {
		for (unsigned int i = 0; i + 1 < nopt; i++)
			if (opt[i] == MDGPUD_CU_JIT_ERROR_LOG_BUFFER &&
			    opt[i + 1] ==
				    MDGPUD_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
				snprintf(val[i], (size_t)(uintptr_t)val[i + 1],
					 "fake ptxas: syntax error");
		return MDGPUD_CUDA_ERROR_INVALID_PTX;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < sizeof(fake_kernels) / sizeof(fake_kernels[0]);
	     i++) {
		char entry[64];

		snprintf(entry, sizeof(entry), ".entry %s(",
			 fake_kernels[i].name);
		if (strstr(text, entry) && m->nr < FAKE_MAX_FUNCS)
			m->funcs[m->nr++] = fake_kernels[i];
	}
	if (!m->nr) {
		free(m);
		return MDGPUD_CUDA_ERROR_INVALID_IMAGE;
	}
	*mod = m;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuModuleUnload(mdgpud_cu_module m)
{
	free(m);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuModuleGetFunction(mdgpud_cu_function *f,
						 mdgpud_cu_module m,
						 const char *name)
{
	for (int i = 0; i < m->nr; i++)
		if (!strcmp(m->funcs[i].name, name)) {
			*f = &m->funcs[i];
			return 0;
		}
	return MDGPUD_CUDA_ERROR_NOT_FOUND;
}

FAKE_EXPORT mdgpud_cu_result cuLaunchKernel(mdgpud_cu_function f,
					    unsigned int gx, unsigned int gy,
					    unsigned int gz, unsigned int bx,
					    unsigned int by, unsigned int bz,
					    unsigned int shared,
					    mdgpud_cu_stream s, void **params,
					    void **extra)
{
	const uint8_t *blob = NULL;
	size_t len = 0;

	(void)s;
	(void)shared;
	if (fake_sticky)
		return fake_sticky;
	if (params || (uint64_t)bx * by * bz > 1024 || !gx || !gy || !gz ||
	    !bx || !by || !bz)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; extra && extra[i] !=
	     (void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_END_AS_INT; i += 2) {
		if (extra[i] == (void *)(uintptr_t)
				MDGPUD_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT)
			blob = extra[i + 1];
		else if (extra[i] == (void *)(uintptr_t)
				     MDGPUD_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT)
			len = *(size_t *)extra[i + 1];
		else
			return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	}
	if (len != f->params || (len && !blob))
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	return f->fn(blob, len, gx * gy * gz * bx * by * bz);
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
