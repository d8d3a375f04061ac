// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A driver-API program in plain C against cuda.h, linked with -lcuda, for
 * libcuda's code surface: modules, fatbins, functions, launches
 * (cuLaunchKernel, cuLaunchKernelEx, cooperative), libraries and
 * kernels, links, occupancy, context limits.  run-driver-tests.sh runs it
 * against an mdgpud.
 *
 * Every backend: each refusal path (forged handles, NULL pointers, bad
 * sizes, unsupported attributes, inputs and options), links, loading
 * mode, context limits.  MDGPU_TEST_BACKEND=sim (the default): no code
 * loads, and every call that needs it fails cleanly.
 * MDGPU_TEST_BACKEND=cuda: a module, a library and a link are loaded and
 * kernels launched through kernelParams, `extra`, cuLaunchKernelEx and
 * a CUkernel, and the numbers checked; on the fake libcuda of CI the
 * kernel is its `scale_add` (p[i] = p[i] * k + i).
 * Prints "N passed, N failed, N skipped".
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cuda.h>

static unsigned passed, failed, skipped;

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
#define SKIP(why) do {							\
	skipped++;							\
	fprintf(stderr, "SKIP %s:%d: %s\n", __FILE__, __LINE__, why);	\
} while (0)

/* The fake libcuda's scale_add, and what the PTX ISA makes of its list:
 * offsets 0, 8, 16, sizes 8, 8, 4. */
static const char ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry scale_add(.param .u64 p, .param .u64 n, "
	".param .u32 k)\n{\n\tret;\n}\n";

static bool on_cuda;
/* The cuda backend over the fake libcuda of CI (its device's name). */
static bool on_fake;
static char tmpdir[] = "/tmp/mdgpu-test-code.XXXXXX";

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, n, f) != n) {
		perror(path);
		exit(2);
	}
	fclose(f);
}

static void remove_tmp(void)
{
	static const char *const names[] = { "short.fatbin", "k.ptx",
					     "huge.ptx" };
	char path[64];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
		unlink(path);
	}
	rmdir(tmpdir);
}

/* A handle no call ever returned: the address of a local. */
#define FORGED(type, var) ((type)(void *)&(var))

static void test_images(void)
{
	/* Fatbin header (version 1, 16 bytes) and 64 bytes of entries. */
	static const uint32_t fatbin[20] = { 0xba55ed50U, 0x00100001U, 64 };
	static const uint32_t fatbin_v2[4] = { 0xba55ed50U, 0x00100002U, 0 };
	struct { uint32_t magic, version; const void *data, *f; }
		wrap = { 0x466243b1U, 1, fatbin, NULL },
		wrap_link = { 0x466243b1U, 2, fatbin, fatbin };
	CUmoduleLoadingMode mode = (CUmoduleLoadingMode)0;
	char path[64];
	CUmodule m;

	OK(cuModuleGetLoadingMode(&mode));
	EXPECT(mode == CU_MODULE_EAGER_LOADING);
	EXPECT_RES(cuModuleGetLoadingMode(NULL), CUDA_ERROR_INVALID_VALUE);

	/* Fatbins go to the daemon whole; the sim backend loads no code. */
	if (!on_cuda) {
		EXPECT_RES(cuModuleLoadData(&m, fatbin),
			   CUDA_ERROR_NOT_SUPPORTED);
		EXPECT_RES(cuModuleLoadFatBinary(&m, &wrap),
			   CUDA_ERROR_NOT_SUPPORTED);
		EXPECT_RES(cuModuleLoadData(&m, ptx), CUDA_ERROR_NOT_SUPPORTED);
		EXPECT_RES(cuModuleLoadFatBinary(&m, &wrap_link),
			   CUDA_ERROR_NOT_SUPPORTED);
	} else {
		/* A version-2 wrapper's fatbin goes to the daemon too; the
		 * host driver finds no code in its empty entries and says
		 * so with its own CUresult. */
		CUresult r = cuModuleLoadFatBinary(&m, &wrap_link);

		EXPECT(r == CUDA_ERROR_INVALID_IMAGE ||
		       r == CUDA_ERROR_NO_BINARY_FOR_GPU);
	}
	EXPECT_RES(cuModuleLoadData(&m, fatbin_v2), CUDA_ERROR_INVALID_IMAGE);
	EXPECT_RES(cuModuleLoadFatBinary(NULL, fatbin),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuModuleLoadFatBinary(&m, NULL), CUDA_ERROR_INVALID_VALUE);

	/* Files: missing, a directory, PTX, a truncated fatbin. */
	snprintf(path, sizeof(path), "%s/none.ptx", tmpdir);
	EXPECT_RES(cuModuleLoad(&m, path), CUDA_ERROR_FILE_NOT_FOUND);
	EXPECT_RES(cuModuleLoad(&m, tmpdir), CUDA_ERROR_INVALID_IMAGE);
	EXPECT_RES(cuModuleLoad(&m, NULL), CUDA_ERROR_INVALID_VALUE);
	snprintf(path, sizeof(path), "%s/short.fatbin", tmpdir);
	write_file(path, fatbin, 40);
	EXPECT_RES(cuModuleLoad(&m, path), CUDA_ERROR_INVALID_IMAGE);
	snprintf(path, sizeof(path), "%s/k.ptx", tmpdir);
	write_file(path, ptx, sizeof(ptx) - 1);	/* no NUL in the file */
	if (!on_cuda)
		EXPECT_RES(cuModuleLoad(&m, path), CUDA_ERROR_NOT_SUPPORTED);

	EXPECT_RES(cuModuleGetGlobal(NULL, NULL, FORGED(CUmodule, m), "g"),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuModuleGetGlobal(NULL, NULL, FORGED(CUmodule, m), ""),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuModuleGetGlobal(NULL, NULL, FORGED(CUmodule, m), NULL),
		   CUDA_ERROR_INVALID_VALUE);
}

/* Images past the aperture's 8 MiB staging area, and past the 16 MiB
 * that the ABI allows in host memory: loaded from device memory. */
#define BIG_IMAGE	(20u << 20)
/* MDGPU_MODULE_DEVICE_MAX of the ABI: the largest image mdgpu loads. */
#define IMAGE_MAX	(1u << 30)

/* `text`, then lines of a PTX comment up to `len` bytes, the last a
 * NUL (malloc'ed). */
static char *padded(const char *text, size_t len)
{
	size_t n = strlen(text);
	char *p = malloc(len);

	if (!p || len < n + 2) {
		perror("padded");
		exit(2);
	}
	memcpy(p, text, n);
	memset(p + n, ' ', len - n);
	for (size_t i = n; i < len - 1; i += 80) {
		p[i] = '/';
		if (i + 1 < len - 1)
			p[i + 1] = '/';
		p[i + 79 < len - 1 ? i + 79 : len - 2] = '\n';
	}
	p[len - 1] = '\0';
	return p;
}

/*
 * Every backend: images above the largest mdgpu loads are refused before
 * anything is read or sent; a large one passes libcuda and reaches the
 * daemon through device memory, whose buffer is freed afterwards (sim
 * loads no code: CUDA_ERROR_NOT_SUPPORTED).
 */
static void test_image_bounds(void)
{
	static const uint32_t huge_fatbin[4] = { 0xba55ed50U, 0x00100001U,
						 IMAGE_MAX, 0 };
	char path[64], *big;
	size_t free0 = 0, free1 = 0, total;
	CUlinkState ls;
	CUlibrary lib;
	CUmodule m;
	int fd;

	EXPECT_RES(cuModuleLoadData(&m, huge_fatbin), CUDA_ERROR_INVALID_IMAGE);
	EXPECT_RES(cuLibraryLoadData(&lib, huge_fatbin, NULL, NULL, 0, NULL,
				     NULL, 0), CUDA_ERROR_INVALID_IMAGE);
	OK(cuLinkCreate(0, NULL, NULL, &ls));
	EXPECT_RES(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)ptx,
				 (size_t)IMAGE_MAX + 1, "k", 0, NULL, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	OK(cuLinkDestroy(ls));
	/* A sparse file: its size is refused, nothing is read. */
	snprintf(path, sizeof(path), "%s/huge.ptx", tmpdir);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	EXPECT(fd >= 0 && !ftruncate(fd, (off_t)IMAGE_MAX + 1));
	if (fd >= 0)
		close(fd);
	EXPECT_RES(cuModuleLoad(&m, path), CUDA_ERROR_INVALID_IMAGE);

	if (on_cuda)
		return;	/* test_cuda_large_image loads it */
	big = padded(ptx, BIG_IMAGE);
	OK(cuMemGetInfo(&free0, &total));
	EXPECT_RES(cuModuleLoadData(&m, big), CUDA_ERROR_NOT_SUPPORTED);
	OK(cuMemGetInfo(&free1, &total));
	EXPECT(free1 == free0);
	free(big);
}

/* Every call on a function, kernel or library refuses a forged handle. */
static void test_forged(void)
{
	int x = 0, v;
	CUfunction f = FORGED(CUfunction, x), f2;
	CUkernel k = FORGED(CUkernel, x), k2;
	CUlibrary lib = FORGED(CUlibrary, x), lib2;
	CUmodule mod;
	CUfunctionLoadingState st;
	CUlaunchConfig cfg = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
			       .blockDimX = 32, .blockDimY = 1,
			       .blockDimZ = 1 };
	size_t off, sz;
	const char *name;
	CUdeviceptr d;

	EXPECT_RES(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuFuncGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, f),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuFuncSetAttribute(f,
			CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuFuncGetParamInfo(f, 0, &off, &sz),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuFuncGetName(&name, f), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuFuncGetName(NULL, f), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuFuncGetModule(&mod, f), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuFuncIsLoaded(&st, f), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuFuncLoad(f), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLaunchCooperativeKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL,
					     NULL), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLaunchKernelEx(&cfg, f, NULL, NULL),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, f, 128, 0),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuOccupancyAvailableDynamicSMemPerBlock(&sz, f, 1, 128),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuOccupancyMaxActiveClusters(&v, f, &cfg),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT(cuOccupancyMaxPotentialBlockSize(&v, &x, f, NULL, 0, 0) !=
	       CUDA_SUCCESS);

	EXPECT_RES(cuLibraryUnload(lib), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLibraryGetKernel(&k2, lib, "k"),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLibraryGetKernel(&k2, lib, ""), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLibraryGetModule(&mod, lib), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLibraryGetGlobal(&d, &sz, lib, "g"),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuKernelGetFunction(&f2, k), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuKernelGetFunction(NULL, k), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuKernelGetLibrary(&lib2, k), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuKernelGetName(&name, k), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuKernelSetAttribute(
			CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0, k,
			0), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1, 0),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuKernelGetParamInfo(k, 0, &off, &sz),
		   CUDA_ERROR_INVALID_HANDLE);
}

static void test_library_load(void)
{
	CUlibraryOption bad = (CUlibraryOption)7;
	CUlibraryOption pres = CU_LIBRARY_BINARY_IS_PRESERVED;
	void *val = NULL;
	char path[64];
	CUlibrary lib;

	EXPECT_RES(cuLibraryLoadData(NULL, ptx, NULL, NULL, 0, NULL, NULL, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLibraryLoadData(&lib, NULL, NULL, NULL, 0, NULL, NULL, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, &bad, &val, 1),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLibraryLoadData(&lib, ptx, NULL, NULL, 2, NULL, NULL, 0),
		   CUDA_ERROR_INVALID_VALUE);
	snprintf(path, sizeof(path), "%s/none.ptx", tmpdir);
	EXPECT_RES(cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, NULL,
					 NULL, 0), CUDA_ERROR_FILE_NOT_FOUND);
	if (!on_cuda)
		EXPECT_RES(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, &pres,
					     &val, 1),
			   CUDA_ERROR_NOT_SUPPORTED);
}

static void test_link(void)
{
	static const unsigned char elf[64] = { 0x7f, 'E', 'L', 'F', 2, 1 };
	char log[16] = "junk", path[64];
	CUjit_option opt[2] = { CU_JIT_ERROR_LOG_BUFFER,
				CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[2] = { log, (void *)(uintptr_t)sizeof(log) };
	CUlinkState s, s2;
	void *img = NULL;
	size_t size = 0;

	OK(cuLinkCreate(2, opt, val, &s));
	EXPECT(log[0] == '\0' && val[1] == NULL);
	EXPECT_RES(cuLinkComplete(s, &img, &size), CUDA_ERROR_NOT_SUPPORTED);
	OK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)ptx, sizeof(ptx) - 1,
			 "k.ptx", 0, NULL, NULL));
	OK(cuLinkComplete(s, &img, &size));
	EXPECT(img && size == sizeof(ptx) && !memcmp(img, ptx, sizeof(ptx)));
	EXPECT_RES(cuLinkComplete(s, NULL, &size), CUDA_ERROR_INVALID_VALUE);
	/* A second input makes the link one this linker cannot make. */
	EXPECT_RES(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)ptx,
				 sizeof(ptx), "again", 0, NULL, NULL),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuLinkComplete(s, &img, &size), CUDA_ERROR_NOT_SUPPORTED);
	OK(cuLinkDestroy(s));
	EXPECT_RES(cuLinkDestroy(s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLinkComplete(s, &img, &size), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)ptx,
				 sizeof(ptx), NULL, 0, NULL, NULL),
		   CUDA_ERROR_INVALID_HANDLE);

	/* Other input kinds; bad arguments. */
	OK(cuLinkCreate(0, NULL, NULL, &s2));
	EXPECT_RES(cuLinkAddData(s2, CU_JIT_INPUT_CUBIN, (void *)elf,
				 sizeof(elf), "k.cubin", 0, NULL, NULL),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuLinkAddData(s2, CU_JIT_INPUT_PTX, NULL, 4, NULL, 0, NULL,
				 NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLinkAddData(s2, CU_JIT_INPUT_PTX, (void *)ptx, 0, NULL, 0,
				 NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	OK(cuLinkDestroy(s2));
	EXPECT_RES(cuLinkCreate(1, NULL, NULL, &s2), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLinkCreate(0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);

	/* From a file. */
	snprintf(path, sizeof(path), "%s/k.ptx", tmpdir);
	OK(cuLinkCreate(0, NULL, NULL, &s2));
	EXPECT_RES(cuLinkAddFile(s2, CU_JIT_INPUT_PTX, tmpdir, 0, NULL, NULL),
		   CUDA_ERROR_INVALID_IMAGE);
	OK(cuLinkAddFile(s2, CU_JIT_INPUT_PTX, path, 0, NULL, NULL));
	OK(cuLinkComplete(s2, &img, &size));
	EXPECT(size == sizeof(ptx) && !memcmp(img, ptx, sizeof(ptx)));
	OK(cuLinkDestroy(s2));
}

static void test_launch_refusals(void)
{
	CUlaunchAttribute at[2];
	CUlaunchConfig cfg = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
			       .blockDimX = 32, .blockDimY = 1,
			       .blockDimZ = 1, .attrs = at, .numAttrs = 1 };
	int x = 0, v;
	CUfunction f = FORGED(CUfunction, x);

	EXPECT_RES(cuLaunchKernelEx(NULL, f, NULL, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	/* Attributes are judged before the function. */
	memset(at, 0, sizeof(at));
	at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
	EXPECT_RES(cuLaunchKernelEx(&cfg, f, NULL, NULL),
		   CUDA_ERROR_NOT_SUPPORTED);
	at[0].id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
	EXPECT_RES(cuLaunchKernelEx(&cfg, f, NULL, NULL),
		   CUDA_ERROR_NOT_SUPPORTED);
	at[0].id = CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION;
	EXPECT_RES(cuLaunchKernelEx(&cfg, f, NULL, NULL),
		   CUDA_ERROR_NOT_SUPPORTED);
	at[0].id = (CUlaunchAttributeID)999;
	EXPECT_RES(cuOccupancyMaxActiveClusters(&v, f, &cfg),
		   CUDA_ERROR_NOT_SUPPORTED);
	at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	at[0].value.clusterDim.x = 2;
	at[0].value.clusterDim.y = 0;
	at[0].value.clusterDim.z = 1;
	EXPECT_RES(cuLaunchKernelEx(&cfg, f, NULL, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	at[0].value.clusterDim.y = 1024;
	EXPECT_RES(cuLaunchKernelEx(&cfg, f, NULL, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	/* Accepted ones reach the handle check. */
	at[0].value.clusterDim.y = 1;
	at[1].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	cfg.numAttrs = 2;
	EXPECT_RES(cuLaunchKernelEx(&cfg, f, NULL, NULL),
		   CUDA_ERROR_INVALID_HANDLE);
	cfg.attrs = NULL;
	EXPECT_RES(cuLaunchKernelEx(&cfg, f, NULL, NULL),
		   CUDA_ERROR_INVALID_VALUE);

	/* Bad sizes and flags before any handle. */
	EXPECT_RES(cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, f, 0, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, f, 2048, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
			&v, f, 32, 0, 4), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuOccupancyMaxActiveBlocksPerMultiprocessor(NULL, f, 32, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuOccupancyAvailableDynamicSMemPerBlock(NULL, f, 1, 32),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuOccupancyAvailableDynamicSMemPerBlock((size_t *)&x, f,
							   0, 32),
		   CUDA_ERROR_INVALID_VALUE);
	cfg.numAttrs = 0;
	cfg.blockDimY = 64;
	EXPECT_RES(cuOccupancyMaxActiveClusters(&v, f, &cfg),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuOccupancyMaxActiveClusters(&v, f, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuOccupancyMaxPotentialBlockSize(NULL, &v, f, NULL, 0, 0),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuOccupancyMaxPotentialBlockSizeWithFlags(&v, &x, f, NULL,
							     0, 0, 2),
		   CUDA_ERROR_INVALID_VALUE);
}

static void test_limits(void)
{
	size_t v = 0, stack = 0;

	OK(cuCtxGetLimit(&stack, CU_LIMIT_STACK_SIZE));
	EXPECT(stack > 0);
	OK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, stack * 2));
	OK(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
	EXPECT(v >= stack * 2);
	/* A stack for every resident thread past the 1 GiB quota. */
	EXPECT_RES(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, (size_t)1 << 30),
		   CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, stack));
	OK(cuCtxGetLimit(&v, CU_LIMIT_PRINTF_FIFO_SIZE));
	EXPECT_RES(cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 1 << 20),
		   CUDA_ERROR_NOT_PERMITTED);
	EXPECT_RES(cuCtxGetLimit(NULL, CU_LIMIT_STACK_SIZE),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuCtxGetLimit(&v, CU_LIMIT_MAX),
		   CUDA_ERROR_UNSUPPORTED_LIMIT);
	EXPECT_RES(cuCtxSetLimit((CUlimit)0x1234, 1),
		   CUDA_ERROR_UNSUPPORTED_LIMIT);
}

/* scale_add over n words by k: p[i] = p[i] * k + i. */
static void check_scaled(CUdeviceptr d, const uint32_t *before, unsigned n,
			 uint32_t k, const char *how)
{
	uint32_t *back = calloc(n, sizeof(*back));
	unsigned bad = 0;

	OK(cuCtxSynchronize());
	OK(cuMemcpyDtoH(back, d, n * sizeof(*back)));
	for (unsigned i = 0; i < n; i++)
		bad += back[i] != before[i] * k + i;
	if (bad)
		fprintf(stderr, "%s: %u of %u words wrong\n", how, bad, n);
	EXPECT(bad == 0);
	free(back);
}

static void test_cuda_module(void)
{
	enum { n = 256 };
	uint32_t h[n], cur[n];
	uint64_t count = n;
	uint32_t k = 3;
	CUdeviceptr d;
	CUmodule m, m2;
	CUfunction f, f2;
	CUstream s;
	size_t off = 1, sz = 1;
	const char *name;
	unsigned char blob[20];
	size_t blob_len = sizeof(blob);
	void *params[3], *extra[5];
	CUlaunchAttribute at = { .id = CU_LAUNCH_ATTRIBUTE_PRIORITY };
	CUlaunchConfig cfg = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
			       .blockDimX = n, .blockDimY = 1,
			       .blockDimZ = 1, .attrs = &at, .numAttrs = 1 };

	for (unsigned i = 0; i < n; i++)
		h[i] = i * 7 + 1;
	OK(cuMemAlloc(&d, sizeof(h)));
	OK(cuMemcpyHtoD(d, h, sizeof(h)));
	OK(cuModuleLoadData(&m, ptx));
	OK(cuModuleGetFunction(&f, m, "scale_add"));
	OK(cuModuleGetFunction(&f2, m, "scale_add"));
	EXPECT(f == f2);
	EXPECT_RES(cuModuleGetFunction(&f2, m, "no_such_kernel"),
		   CUDA_ERROR_NOT_FOUND);
	OK(cuFuncGetName(&name, f));
	EXPECT(name && !strcmp(name, "scale_add"));
	OK(cuFuncGetModule(&m2, f));
	EXPECT(m2 == m);
	/* The layout: the host driver's, or the PTX's where it has none. */
	OK(cuFuncGetParamInfo(f, 1, &off, &sz));
	EXPECT(off == 8 && sz == 8);
	OK(cuFuncGetParamInfo(f, 2, &off, NULL));
	EXPECT(off == 16);
	EXPECT_RES(cuFuncGetParamInfo(f, 3, &off, &sz),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuFuncGetParamInfo(f, 0, NULL, &sz),
		   CUDA_ERROR_INVALID_VALUE);

	/* kernelParams with the layout. */
	params[0] = &d;
	params[1] = &count;
	params[2] = &k;
	OK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, params, NULL));
	check_scaled(d, h, n, k, "kernelParams");
	memcpy(cur, h, sizeof(h));
	for (unsigned i = 0; i < n; i++)
		cur[i] = cur[i] * k + i;
	EXPECT_RES(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, params,
				  extra), CUDA_ERROR_INVALID_VALUE);
	params[1] = NULL;
	EXPECT_RES(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, params, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	params[1] = &count;

	/* extra: the caller's blob. */
	memcpy(blob, &d, 8);
	memcpy(blob + 8, &count, 8);
	k = 5;
	memcpy(blob + 16, &k, 4);
	extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	extra[1] = blob;
	extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	extra[3] = &blob_len;
	extra[4] = CU_LAUNCH_PARAM_END;
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, s, NULL, extra));
	OK(cuStreamSynchronize(s));
	check_scaled(d, cur, n, k, "extra");
	for (unsigned i = 0; i < n; i++)
		cur[i] = cur[i] * k + i;

	/* cuLaunchKernelEx with an ignored attribute, on a stream. */
	k = 2;
	cfg.hStream = s;
	OK(cuLaunchKernelEx(&cfg, f, params, NULL));
	check_scaled(d, cur, n, k, "cuLaunchKernelEx");
	for (unsigned i = 0; i < n; i++)
		cur[i] = cur[i] * k + i;
	OK(cuStreamDestroy(s));
	EXPECT_RES(cuLaunchKernelEx(&cfg, f, params, NULL),
		   CUDA_ERROR_INVALID_HANDLE);

	OK(cuModuleUnload(m));
	EXPECT_RES(cuFuncGetName(&name, f), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, params, NULL),
		   CUDA_ERROR_INVALID_HANDLE);

	/* The library path of the CUDA 12+ runtime: a CUkernel launched as
	 * a function; the library outlives a context. */
	{
		CUlibrary lib, lib2;
		CUkernel kern, kern2;
		CUfunction kf;
		CUmodule lm;
		CUcontext c;
		int iv;

		OK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
		OK(cuLibraryGetKernel(&kern, lib, "scale_add"));
		OK(cuLibraryGetKernel(&kern2, lib, "scale_add"));
		EXPECT(kern == kern2);
		OK(cuKernelGetName(&name, kern));
		EXPECT(!strcmp(name, "scale_add"));
		OK(cuKernelGetLibrary(&lib2, kern));
		EXPECT(lib2 == lib);
		OK(cuKernelGetParamInfo(kern, 2, &off, &sz));
		EXPECT(off == 16 && sz == 4);
		k = 7;
		OK(cuLaunchKernel((CUfunction)kern, 1, 1, 1, n, 1, 1, 0, NULL,
				  params, NULL));
		check_scaled(d, cur, n, k, "CUkernel");
		for (unsigned i = 0; i < n; i++)
			cur[i] = cur[i] * k + i;
		OK(cuKernelGetFunction(&kf, kern));
		OK(cuLibraryGetModule(&lm, lib));
		OK(cuFuncGetModule(&m2, kf));
		EXPECT(m2 == lm);
		EXPECT_RES(cuModuleUnload(lm), CUDA_ERROR_INVALID_HANDLE);
		EXPECT_RES(cuKernelGetAttribute(&iv,
			   CU_FUNC_ATTRIBUTE_NUM_REGS, kern, 1),
			   CUDA_ERROR_INVALID_DEVICE);
		/* A context created and destroyed leaves the library. */
		OK(cuCtxCreate(&c, NULL, 0, 0));
		OK(cuCtxDestroy(c));
		OK(cuKernelGetName(&name, kern));
		OK(cuLibraryUnload(lib));
		EXPECT_RES(cuKernelGetName(&name, kern),
			   CUDA_ERROR_INVALID_HANDLE);
		EXPECT_RES(cuLibraryUnload(lib), CUDA_ERROR_INVALID_HANDLE);
	}

	/* A link of one PTX input, loaded. */
	{
		CUlinkState ls;
		void *img;
		size_t size;

		OK(cuLinkCreate(0, NULL, NULL, &ls));
		OK(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)ptx,
				 sizeof(ptx), "k", 0, NULL, NULL));
		OK(cuLinkComplete(ls, &img, &size));
		OK(cuModuleLoadData(&m, img));
		OK(cuLinkDestroy(ls));
		OK(cuModuleGetFunction(&f, m, "scale_add"));
		k = 1;
		OK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, params, NULL));
		check_scaled(d, cur, n, k, "linked");
		OK(cuModuleUnload(m));
	}
	OK(cuMemFree(d));
}

/*
 * A module image larger than the staging area (NVIDIA's runtime loads
 * cuBLAS's and cuFFT's fatbins so): loaded through device memory, its
 * kernel launched, as a module and as a library; the buffer is freed.
 * Images the host driver refuses give the program its CUresult.
 */
static void test_cuda_large_image(void)
{
	enum { n = 256 };
	static const char bad_ptx[] = ".version 8.0\n.target sm_90\n"
				      ".address_size 64\nthis is not ptx\n";
	static const char no_sass[] = ".version 8.0\n.target sm_90\n"
				      "// no binary for this gpu\n";
	char *big = padded(ptx, BIG_IMAGE), *big_bad;
	uint32_t h[n], k = 4;
	uint64_t count = n;
	size_t free0 = 0, free1 = 0, total;
	void *params[3] = { NULL, &count, &k };
	CUdeviceptr d, d2;
	CUfunction f;
	CUlibrary lib;
	CUkernel kern;
	CUmodule m;

	for (unsigned i = 0; i < n; i++)
		h[i] = i * 3 + 2;
	OK(cuMemGetInfo(&free0, &total));
	OK(cuMemAlloc(&d, sizeof(h)));
	OK(cuMemcpyHtoD(d, h, sizeof(h)));
	params[0] = &d;
	OK(cuModuleLoadData(&m, big));
	OK(cuModuleGetFunction(&f, m, "scale_add"));
	OK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, params, NULL));
	check_scaled(d, h, n, k, "large module");
	OK(cuModuleUnload(m));

	OK(cuLibraryLoadData(&lib, big, NULL, NULL, 0, NULL, NULL, 0));
	OK(cuLibraryGetKernel(&kern, lib, "scale_add"));
	OK(cuLibraryUnload(lib));

	/* The driver's own answers. */
	EXPECT_RES(cuModuleLoadData(&m, bad_ptx), CUDA_ERROR_INVALID_PTX);
	if (on_fake) {
		EXPECT_RES(cuModuleLoadData(&m, no_sass),
			   CUDA_ERROR_NO_BINARY_FOR_GPU);
		EXPECT_RES(cuLibraryLoadData(&lib, no_sass, NULL, NULL, 0,
					     NULL, NULL, 0),
			   CUDA_ERROR_NO_BINARY_FOR_GPU);
	} else {
		SKIP("CUDA_ERROR_NO_BINARY_FOR_GPU needs the fake libcuda's "
		     "marker (a fatbin of other GPUs' code on a real one)");
	}
	big_bad = padded(bad_ptx, BIG_IMAGE);
	EXPECT_RES(cuModuleLoadData(&m, big_bad), CUDA_ERROR_INVALID_PTX);
	/* The daemon's own refusal next carries no driver code. */
	EXPECT_RES(cuMemAlloc(&d2, (size_t)1 << 40), CUDA_ERROR_OUT_OF_MEMORY);
	OK(cuMemFree(d));
	/* Every staging buffer in device memory was freed. */
	OK(cuMemGetInfo(&free1, &total));
	EXPECT(free1 == free0);
	free(big_bad);
	free(big);
}

/*
 * What needs the daemon's FUNC_INFO and the fake's named kernels:
 * attributes, occupancy, a global written by a kernel.  Each part runs
 * when the daemon answers, and is skipped with the reason otherwise.
 */
static void test_cuda_info(void)
{
	CUmodule m;
	CUfunction f;
	int v = -1, bs = 0, grid = 0;
	CUresult r;

	OK(cuModuleLoadData(&m, ptx));
	OK(cuModuleGetFunction(&f, m, "scale_add"));
	r = cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
	if (r == CUDA_ERROR_NOT_SUPPORTED) {
		SKIP("the daemon's host driver reports no function info "
		     "(FUNC_INFO: the fake libcuda lacks cuFuncGetParamInfo)");
	} else {
		EXPECT(r == CUDA_SUCCESS && v > 0);
		EXPECT_RES(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, f),
			   CUDA_ERROR_INVALID_VALUE);
		OK(cuFuncSetAttribute(f,
			CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
		OK(cuFuncGetAttribute(&v,
			CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
		EXPECT(v == 1024);
		OK(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_SHARED));
		EXPECT_RES(cuFuncSetCacheConfig(f, (CUfunc_cache)9),
			   CUDA_ERROR_INVALID_VALUE);
	}
	r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, f, 128, 0);
	if (r == CUDA_ERROR_NOT_SUPPORTED) {
		SKIP("the daemon's host driver answers no occupancy");
	} else {
		EXPECT(r == CUDA_SUCCESS && v > 0);
		OK(cuOccupancyMaxPotentialBlockSize(&grid, &bs, f, NULL, 0,
						    0));
		EXPECT(bs > 0 && bs % 32 == 0 && grid > 0);
		OK(cuOccupancyMaxPotentialBlockSize(&grid, &bs, f, NULL, 0,
						    100));
		EXPECT(bs > 0 && bs <= 100);
	}
	SKIP("a global written by a kernel (cuModuleGetGlobal + "
	     "cuMemcpyDtoH) and a vector add with the host driver's layout "
	     "need the fake libcuda's named kernels");
	OK(cuModuleUnload(m));
}

int main(void)
{
	const char *backend = getenv("MDGPU_TEST_BACKEND");
	CUcontext ctx;

	on_cuda = backend && !strcmp(backend, "cuda");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	OK(cuInit(0));
	if (on_cuda) {
		char name[96] = "";

		OK(cuDeviceGetName(name, sizeof(name), 0));
		on_fake = strstr(name, "fake") != NULL;
	}
	OK(cuDevicePrimaryCtxRetain(&ctx, 0));
	OK(cuCtxSetCurrent(ctx));
	test_images();
	test_forged();
	test_library_load();
	test_link();
	test_launch_refusals();
	test_limits();
	test_image_bounds();
	if (on_cuda) {
		test_cuda_module();
		test_cuda_large_image();
		test_cuda_info();
	}
	OK(cuDevicePrimaryCtxRelease(0));
	remove_tmp();
	printf("test_code (%s): %u passed, %u failed, %u skipped\n",
	       on_cuda ? "cuda" : "sim", passed, failed, skipped);
	return failed ? 1 : 0;
}
