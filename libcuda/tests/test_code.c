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
 * mode, context limits, lazy library loading (the daemon's commands
 * counted through its admin socket, MDGPU_TEST_ADMIN), a thread's
 * per-thread default stream destroyed in the daemon when it exits.
 * MDGPU_TEST_BACKEND=sim (the default): no code loads, and every call
 * that needs it fails cleanly.  With CUDA_MODULE_LOADING=EAGER only the
 * eager-loading tests run.
 * MDGPU_TEST_BACKEND=cuda: a module, a library and a link are loaded and
 * kernels launched through kernelParams, `extra`, cuLaunchKernelEx and
 * a CUkernel, and captured into graphs and replayed, and the numbers
 * checked; on the fake libcuda of CI the kernel is its `scale_add`
 * (p[i] = p[i] * k + i).  A module's and a library's kernels are
 * enumerated (the public calls and TOOLS_MODULE slot 7).  With
 * MDGPU_TEST_CONCURRENCY only the tests that per-thread default streams of
 * different threads run concurrently, and that a synchronize does not
 * hold the other threads' calls, run.
 * Prints "N passed, N failed, N skipped".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cuda.h>

#include "expect.h"

/* scale_add, p[i] = p[i] * k + i: the fake libcuda runs its C function of
 * that name, a GPU this PTX.  What the PTX ISA makes of its list:
 * offsets 0, 8, 16, sizes 8, 8, 4. */
static const char ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry scale_add(.param .u64 p, .param .u64 n, "
	".param .u32 k)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n"
	"\tld.param.u64 %rd1, [p];\n\tld.param.u64 %rd2, [n];\n"
	"\tld.param.u32 %r1, [k];\n\tmov.u32 %r2, %ctaid.x;\n"
	"\tmov.u32 %r3, %ntid.x;\n\tmov.u32 %r4, %tid.x;\n"
	"\tmul.wide.u32 %rd3, %r2, %r3;\n\tcvt.u64.u32 %rd4, %r4;\n"
	"\tadd.u64 %rd3, %rd3, %rd4;\n\tsetp.ge.u64 %p1, %rd3, %rd2;\n"
	"\t@%p1 bra DONE;\n\tcvta.to.global.u64 %rd5, %rd1;\n"
	"\tshl.b64 %rd6, %rd3, 2;\n\tadd.u64 %rd7, %rd5, %rd6;\n"
	"\tld.global.u32 %r5, [%rd7];\n\tcvt.u32.u64 %r6, %rd3;\n"
	"\tmad.lo.u32 %r7, %r5, %r1, %r6;\n\tst.global.u32 [%rd7], %r7;\n"
	"DONE:\n\tret;\n}\n";

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
	/* Fatbin header (version 1, 16 bytes) and 64 bytes of entries: one
	 * entry (an ELF of no bytes), and none (zeroed, refused here). */
	static const uint32_t fatbin[20] = { 0xba55ed50U, 0x00100001U, 64, 0,
					     0x01010002U, 64, 0, 0 };
	static const uint32_t zeroed[20] = { 0xba55ed50U, 0x00100001U, 64 };
	static const uint32_t fatbin_v2[4] = { 0xba55ed50U, 0x00100002U, 0 };
	struct { uint32_t magic, version; const void *data, *f; }
		wrap = { 0x466243b1U, 1, fatbin, NULL },
		wrap_link = { 0x466243b1U, 2, fatbin, fatbin };
	CUmoduleLoadingMode mode = (CUmoduleLoadingMode)0;
	char path[64];
	CUmodule m;

	OK(cuModuleGetLoadingMode(&mode));
	EXPECT(mode == CU_MODULE_LAZY_LOADING);
	EXPECT_RES(cuModuleGetLoadingMode(NULL), CUDA_ERROR_INVALID_VALUE);

	/* Fatbins go to the daemon whole; the sim backend loads no code. */
	if (!on_cuda) {
		EXPECT_RES(cuModuleLoadData(&m, fatbin),
			   CUDA_ERROR_NOT_SUPPORTED);
		EXPECT_RES(cuModuleLoadFatBinary(&m, &wrap),
			   CUDA_ERROR_NOT_SUPPORTED);
		EXPECT_RES(cuModuleLoadData(&m, ptx), CUDA_ERROR_NOT_SUPPORTED);
	}
	/* A version-2 wrapper (-rdc) loads its linked fatbin: the answer of
	 * that fatbin's load. */
	{
		CUresult r1 = cuModuleLoadData(&m, fatbin), r2;

		if (!r1)
			OK(cuModuleUnload(m));
		r2 = cuModuleLoadFatBinary(&m, &wrap_link);
		if (!r2)
			OK(cuModuleUnload(m));
		EXPECT(r2 == r1);
		EXPECT(on_cuda || r2 == CUDA_ERROR_NOT_SUPPORTED);
	}
	EXPECT_RES(cuModuleLoadData(&m, fatbin_v2), CUDA_ERROR_INVALID_IMAGE);
	EXPECT_RES(cuModuleLoadData(&m, zeroed), CUDA_ERROR_INVALID_IMAGE);
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
	unsigned cnt;

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

	/* Enumerations: cuda.h's INVALID_VALUE for a NULL output, then
	 * INVALID_HANDLE for a handle never given. */
	mod = FORGED(CUmodule, x);
	EXPECT_RES(cuModuleGetFunctionCount(&cnt, mod),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuModuleGetFunctionCount(&cnt, NULL),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuModuleGetFunctionCount(NULL, mod),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuModuleEnumerateFunctions(&f2, 1, mod),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuModuleEnumerateFunctions(&f2, 0, NULL),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuModuleEnumerateFunctions(NULL, 1, mod),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLibraryGetKernelCount(&cnt, lib),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLibraryGetKernelCount(&cnt, NULL),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLibraryGetKernelCount(NULL, lib),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLibraryEnumerateKernels(&k2, 1, lib),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLibraryEnumerateKernels(NULL, 1, lib),
		   CUDA_ERROR_INVALID_VALUE);

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
	/* The preserved-binary hint names a buffer: not with a file. */
	EXPECT_RES(cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, &pres,
					 NULL, 1), CUDA_ERROR_INVALID_VALUE);
	/* Lazy: the image is checked, not loaded. */
	OK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, &pres, &val, 1));
	OK(cuLibraryUnload(lib));
	/* The hint without a values array, as cuBLASLt 13 passes it. */
	OK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, &pres, NULL, 1));
	OK(cuLibraryUnload(lib));
}

/*
 * The daemon's counters of this program's vGPU, the only one of its
 * daemon: commands completed and, of those, failed, from the admin
 * socket's `list` (Documentation/mdgpuctl.md).  The daemon counts a
 * command before completing it, so a call that returned is counted.
 * Every libcuda call that reaches the daemon is one or more commands, so
 * a call that counts none did not reach it.
 */
struct counts {
	unsigned long long commands, errors;
};

static bool counting;		/* MDGPU_TEST_ADMIN given */
static struct counts marked;

static void admin_counts(struct counts *c)
{
	const char *path = getenv("MDGPU_TEST_ADMIN");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[16384], *line, *save;
	unsigned vgpus = 0;
	size_t len = 0;
	bool done = false;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, "list\n", 5) != 5) {
		perror(path);
		exit(2);
	}
	while (!done && len < sizeof(buf) - 1) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);

		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		done = !strcmp(buf, "ok\n") ||
		       (len > 4 && !strcmp(buf + len - 4, "\nok\n"));
	}
	close(fd);
	if (!done) {
		fprintf(stderr, "admin list: %s\n", buf);
		exit(2);
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *cm = strstr(line, " commands=");
		const char *er = strstr(line, " errors=");

		if (strncmp(line, "id=", 3))
			continue;
		vgpus++;
		if (!cm || !er ||
		    sscanf(cm, " commands=%llu", &c->commands) != 1 ||
		    sscanf(er, " errors=%llu", &c->errors) != 1) {
			fprintf(stderr, "admin list: %s\n", line);
			exit(2);
		}
	}
	if (vgpus != 1) {
		fprintf(stderr, "admin list: %u vGPUs, expected this "
			"program's one\n", vgpus);
		exit(2);
	}
}

static void mark(void)
{
	if (counting)
		admin_counts(&marked);
}

/* Commands and failed commands since the last mark; marks again. */
static struct counts delta(void)
{
	struct counts c = { 0, 0 }, d = { 0, 0 };

	if (counting) {
		admin_counts(&c);
		d.commands = c.commands - marked.commands;
		d.errors = c.errors - marked.errors;
		marked = c;
	}
	return d;
}

#define EXPECT_COUNTS(cmds, errs) expect_counts(cmds, errs, __LINE__)
static void expect_counts(unsigned long long cmds, unsigned long long errs,
			  int line)
{
	struct counts d = delta();

	if (!counting)
		return;
	if (d.commands == cmds && d.errors == errs) {
		passed++;
	} else {
		failed++;
		fprintf(stderr, "FAIL %s:%d: %llu commands (%llu failed), "
			"expected %llu (%llu failed)\n", __FILE__, line,
			d.commands, d.errors, cmds, errs);
	}
}

/* Text that image.c takes for PTX and no backend loads. */
static const char bad_ptx[] = "this is not ptx\n";

/*
 * What loading costs the daemon, measured on modules (always eager):
 * a load of ptx, a look-up of its function, and the failed load of
 * bad_ptx with its CUresult.  A library's lazy load must cost the same
 * as the module's: one load, never two.
 */
static struct counts cost_load, cost_func, cost_bad;
static CUresult bad_result;

static void measure_costs(void)
{
	CUmodule m;
	CUfunction f;

	mark();
	bad_result = cuModuleLoadData(&m, bad_ptx);
	EXPECT(bad_result != CUDA_SUCCESS);
	cost_bad = delta();
	if (counting)
		EXPECT(cost_bad.errors == 1);
	if (!on_cuda)
		return;
	OK(cuModuleLoadData(&m, ptx));
	cost_load = delta();
	OK(cuModuleGetFunction(&f, m, "scale_add"));
	cost_func = delta();
	OK(cuModuleUnload(m));
	if (counting)
		EXPECT(cost_load.commands >= 1 && cost_func.commands >= 1 &&
		       !cost_load.errors && !cost_func.errors);
}

static void print_costs(void)
{
	if (counting && on_cuda)
		printf("daemon commands: module load %llu, function look-up "
		       "%llu, ", cost_load.commands, cost_func.commands);
	if (counting)
		printf("failed load %llu (%llu failed, CUresult %d)\n",
		       cost_bad.commands, cost_bad.errors, (int)bad_result);
}

/* A library never used: loaded, unloaded, the daemon never asked. */
static void test_lazy_unused(void)
{
	CUlibrary lib, lib2;
	CUkernel k;
	char path[64];

	snprintf(path, sizeof(path), "%s/k.ptx", tmpdir);
	mark();
	OK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	OK(cuLibraryLoadFromFile(&lib2, path, NULL, NULL, 0, NULL, NULL, 0));
	EXPECT(lib != lib2);
	OK(cuLibraryUnload(lib));
	OK(cuLibraryUnload(lib2));
	EXPECT_COUNTS(0, 0);
	EXPECT_RES(cuLibraryUnload(lib), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLibraryGetKernel(&k, lib2, "scale_add"),
		   CUDA_ERROR_INVALID_HANDLE);
	/* The image is still checked at the call. */
	EXPECT_RES(cuLibraryLoadData(&lib, "", NULL, NULL, 0, NULL, NULL, 0),
		   CUDA_ERROR_INVALID_IMAGE);
}

/* A library whose load fails: each use tries once and fails the same
 * way, never a success later. */
static void test_lazy_fail(void)
{
	CUlibrary lib;
	CUkernel k;
	CUmodule m;
	CUdeviceptr d;
	size_t sz;
	unsigned n;

	mark();
	OK(cuLibraryLoadData(&lib, bad_ptx, NULL, NULL, 0, NULL, NULL, 0));
	EXPECT_COUNTS(0, 0);
	for (int i = 0; i < 3; i++) {
		EXPECT_RES(cuLibraryGetKernel(&k, lib, "scale_add"),
			   bad_result);
		EXPECT_COUNTS(cost_bad.commands, cost_bad.errors);
	}
	EXPECT_RES(cuLibraryGetModule(&m, lib), bad_result);
	EXPECT_COUNTS(cost_bad.commands, cost_bad.errors);
	EXPECT_RES(cuLibraryGetGlobal(&d, &sz, lib, "g"), bad_result);
	EXPECT_COUNTS(cost_bad.commands, cost_bad.errors);
	/* Enumerating needs the loaded module too. */
	EXPECT_RES(cuLibraryGetKernelCount(&n, lib), bad_result);
	EXPECT_COUNTS(cost_bad.commands, cost_bad.errors);
	EXPECT_RES(cuLibraryEnumerateKernels(&k, 1, lib), bad_result);
	EXPECT_COUNTS(cost_bad.commands, cost_bad.errors);
	OK(cuLibraryUnload(lib));
	EXPECT_COUNTS(0, 0);
}

/* First uses on a library that loads (cuda backend). */
static void test_lazy_first_use(void)
{
	CUlibrary lib;
	CUkernel k, k2;
	CUfunction f;
	CUmodule lm, lm2;
	const char *name;

	mark();
	OK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	EXPECT_COUNTS(0, 0);
	/* The first look-up loads the library once and finds the name. */
	OK(cuLibraryGetKernel(&k, lib, "scale_add"));
	EXPECT_COUNTS(cost_load.commands + cost_func.commands, 0);
	/* Then nothing loads again. */
	OK(cuLibraryGetKernel(&k2, lib, "scale_add"));
	EXPECT(k2 == k);
	OK(cuLibraryGetModule(&lm, lib));
	OK(cuLibraryGetModule(&lm2, lib));
	EXPECT(lm == lm2);
	OK(cuKernelGetFunction(&f, k));
	OK(cuKernelGetName(&name, k));
	EXPECT(!strcmp(name, "scale_add"));
	EXPECT_COUNTS(0, 0);
	/* A name the image lacks: NOT_FOUND at the look-up, one failed
	 * question, no second load. */
	EXPECT_RES(cuLibraryGetKernel(&k2, lib, "no_such_kernel"),
		   CUDA_ERROR_NOT_FOUND);
	EXPECT_COUNTS(1, 1);
	OK(cuLibraryUnload(lib));
	EXPECT_RES(cuKernelGetName(&name, k), CUDA_ERROR_INVALID_HANDLE);

	/* A missing name as the first use: loads, then NOT_FOUND. */
	OK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	mark();
	EXPECT_RES(cuLibraryGetKernel(&k, lib, "no_such_kernel"),
		   CUDA_ERROR_NOT_FOUND);
	EXPECT_COUNTS(cost_load.commands + 1, 1);
	OK(cuLibraryGetKernel(&k, lib, "scale_add"));
	EXPECT_COUNTS(cost_func.commands, 0);
	/* cuLibraryGetModule as the first use loads too. */
	OK(cuLibraryUnload(lib));
	OK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	mark();
	OK(cuLibraryGetModule(&lm, lib));
	EXPECT_COUNTS(cost_load.commands, 0);
	OK(cuModuleGetFunction(&f, lm, "scale_add"));
	OK(cuLibraryGetKernel(&k, lib, "scale_add"));
	EXPECT((CUfunction)k == f);
	EXPECT_COUNTS(cost_func.commands, 0);
	OK(cuLibraryUnload(lib));
}

enum { lazy_threads = 8 };

struct lazy_thread {
	pthread_t t;
	pthread_barrier_t *go;
	CUcontext ctx;
	CUlibrary lib;
	CUresult r;
	CUkernel k;
	CUmodule m;
	int i;
};

/* Even threads look a kernel up, odd ones ask for the module: all at
 * once, each the library's first use. */
static void *lazy_thread_main(void *arg)
{
	struct lazy_thread *t = arg;

	t->r = cuCtxSetCurrent(t->ctx);
	pthread_barrier_wait(t->go);
	if (t->r)
		return NULL;
	if (t->i % 2)
		t->r = cuLibraryGetModule(&t->m, t->lib);
	else
		t->r = cuLibraryGetKernel(&t->k, t->lib, "scale_add");
	return NULL;
}

static void test_lazy_threads(CUcontext ctx)
{
	struct lazy_thread t[lazy_threads];
	pthread_barrier_t go;
	CUlibrary lib;
	CUkernel k;
	CUmodule m;
	unsigned ok = 0;

	OK(cuLibraryLoadData(&lib, on_cuda ? ptx : bad_ptx, NULL, NULL, 0,
			     NULL, NULL, 0));
	pthread_barrier_init(&go, NULL, lazy_threads);
	mark();
	for (int i = 0; i < lazy_threads; i++) {
		t[i] = (struct lazy_thread){ .go = &go, .ctx = ctx,
					     .lib = lib, .i = i };
		if (pthread_create(&t[i].t, NULL, lazy_thread_main, &t[i])) {
			perror("pthread_create");
			exit(2);
		}
	}
	for (int i = 0; i < lazy_threads; i++)
		pthread_join(t[i].t, NULL);
	pthread_barrier_destroy(&go);
	if (on_cuda) {
		/* One load, one look-up; every thread the same answer. */
		EXPECT_COUNTS(cost_load.commands + cost_func.commands, 0);
		OK(cuLibraryGetKernel(&k, lib, "scale_add"));
		OK(cuLibraryGetModule(&m, lib));
		for (int i = 0; i < lazy_threads; i++)
			ok += !t[i].r && (i % 2 ? t[i].m == m : t[i].k == k);
		EXPECT(ok == lazy_threads);
	} else {
		/* Nothing loads: each thread one failed try, its own error. */
		EXPECT_COUNTS(lazy_threads * cost_bad.commands,
			      lazy_threads * cost_bad.errors);
		for (int i = 0; i < lazy_threads; i++)
			ok += t[i].r == bad_result;
		EXPECT(ok == lazy_threads);
	}
	OK(cuLibraryUnload(lib));
}

static void test_lazy(CUcontext ctx)
{
	counting = getenv("MDGPU_TEST_ADMIN") != NULL;
	if (!counting)
		SKIP("daemon command counts (MDGPU_TEST_ADMIN unset)");
	measure_costs();
	print_costs();
	test_lazy_unused();
	test_lazy_fail();
	if (on_cuda)
		test_lazy_first_use();
	test_lazy_threads(ctx);
}

/* CUDA_MODULE_LOADING=EAGER: libraries load at cuLibraryLoadData. */
static void test_eager(void)
{
	CUmoduleLoadingMode mode = (CUmoduleLoadingMode)0;
	CUlibrary lib;
	CUkernel k;

	counting = getenv("MDGPU_TEST_ADMIN") != NULL;
	if (!counting)
		SKIP("daemon command counts (MDGPU_TEST_ADMIN unset)");
	OK(cuModuleGetLoadingMode(&mode));
	EXPECT(mode == CU_MODULE_EAGER_LOADING);
	measure_costs();
	print_costs();
	mark();
	EXPECT_RES(cuLibraryLoadData(&lib, bad_ptx, NULL, NULL, 0, NULL, NULL,
				     0), bad_result);
	EXPECT_COUNTS(cost_bad.commands, cost_bad.errors);
	if (!on_cuda) {
		EXPECT_RES(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL,
					     NULL, 0), bad_result);
		return;
	}
	OK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
	EXPECT_COUNTS(cost_load.commands, 0);
	EXPECT_RES(cuLibraryGetKernel(&k, lib, "no_such_kernel"),
		   CUDA_ERROR_NOT_FOUND);
	EXPECT_COUNTS(1, 1);
	OK(cuLibraryGetKernel(&k, lib, "scale_add"));
	EXPECT_COUNTS(cost_func.commands, 0);
	OK(cuLibraryUnload(lib));
}

/* The answer the fake's linker gives for these inputs: their text, each
 * ended by a newline, then a NUL. */
static bool fake_linked(const void *img, size_t size, const char *a,
			const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0;
	const char *p = img;

	return size == la + 1 + (b ? lb + 1 : 0) + 1 && !memcmp(p, a, la) &&
	       p[la] == '\n' && (!b || (!memcmp(p + la + 1, b, lb) &&
					p[la + 1 + lb] == '\n')) &&
	       p[size - 1] == '\0';
}

/*
 * Every backend: the refusals of the linker itself (before the daemon is
 * asked), and one link of one PTX input: the daemon's MODULE_LINK on
 * cuda (the fake's linker: its text), CUDA_ERROR_NOT_SUPPORTED on sim,
 * which has no linker.
 */
static void test_link(void)
{
	char log[16] = "junk", path[64];
	CUjit_option opt[2] = { CU_JIT_ERROR_LOG_BUFFER,
				CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[2] = { log, (void *)(uintptr_t)sizeof(log) };
	CUjit_option bad_opt[1] = { CU_JIT_OPTIMIZATION_LEVEL };
	void *bad_val[1] = { (void *)(uintptr_t)9 };
	CUjit_option lto_opt[1] = { CU_JIT_LTO };
	void *lto_val[1] = { (void *)(uintptr_t)1 };
	const size_t big = (16u << 20) + 1;
	CUresult want = on_cuda ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
	CUlinkState s, s2;
	void *img = NULL;
	size_t size = 0;
	char *huge;

	OK(cuLinkCreate(2, opt, val, &s));
	EXPECT(log[0] == '\0' && val[1] == NULL);
	/* Nothing to link. */
	EXPECT_RES(cuLinkComplete(s, &img, &size), CUDA_ERROR_INVALID_VALUE);
	OK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)ptx, sizeof(ptx) - 1,
			 "k.ptx", 0, NULL, NULL));
	EXPECT_RES(cuLinkComplete(s, &img, &size), want);
	if (on_fake)
		EXPECT(img && fake_linked(img, size, ptx, NULL));
	EXPECT_RES(cuLinkComplete(s, NULL, &size), CUDA_ERROR_INVALID_VALUE);
	OK(cuLinkDestroy(s));
	EXPECT_RES(cuLinkDestroy(s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLinkComplete(s, &img, &size), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)ptx,
				 sizeof(ptx), NULL, 0, NULL, NULL),
		   CUDA_ERROR_INVALID_HANDLE);

	/* Bad arguments, input kinds and options. */
	OK(cuLinkCreate(0, NULL, NULL, &s2));
	EXPECT_RES(cuLinkAddData(s2, (CUjitInputType)99, (void *)ptx,
				 sizeof(ptx), "k", 0, NULL, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLinkAddData(s2, CU_JIT_INPUT_PTX, NULL, 4, NULL, 0, NULL,
				 NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLinkAddData(s2, CU_JIT_INPUT_PTX, (void *)ptx, 0, NULL, 0,
				 NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	/* LTO IR: not supported, and the link stays failed. */
	EXPECT_RES(cuLinkAddData(s2, CU_JIT_INPUT_NVVM, (void *)ptx,
				 sizeof(ptx), "k.ltoir", 0, NULL, NULL),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuLinkAddData(s2, CU_JIT_INPUT_PTX, (void *)ptx,
				 sizeof(ptx), "k", 0, NULL, NULL),
		   CUDA_ERROR_NOT_SUPPORTED);
	EXPECT_RES(cuLinkComplete(s2, &img, &size), CUDA_ERROR_NOT_SUPPORTED);
	OK(cuLinkDestroy(s2));
	EXPECT_RES(cuLinkCreate(1, NULL, NULL, &s2), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLinkCreate(0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLinkCreate(1, bad_opt, bad_val, &s2),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLinkCreate(1, lto_opt, lto_val, &s2),
		   CUDA_ERROR_NOT_SUPPORTED);

	/* Inputs past what a link bundle carries (MDGPU_MODULE_MAX). */
	huge = calloc(1, big);
	EXPECT(huge != NULL);
	if (huge) {
		memset(huge, ' ', big);
		OK(cuLinkCreate(0, NULL, NULL, &s2));
		EXPECT_RES(cuLinkAddData(s2, CU_JIT_INPUT_PTX, huge, big,
					 "huge", 0, NULL, NULL),
			   CUDA_ERROR_NOT_SUPPORTED);
		OK(cuLinkDestroy(s2));
		OK(cuLinkCreate(0, NULL, NULL, &s2));
		OK(cuLinkAddData(s2, CU_JIT_INPUT_PTX, huge, big / 2, "half",
				 0, NULL, NULL));
		EXPECT_RES(cuLinkAddData(s2, CU_JIT_INPUT_PTX, huge, big / 2,
					 "half2", 0, NULL, NULL),
			   CUDA_ERROR_NOT_SUPPORTED);
		OK(cuLinkDestroy(s2));
		free(huge);
	}

	/* From a file. */
	snprintf(path, sizeof(path), "%s/k.ptx", tmpdir);
	OK(cuLinkCreate(0, NULL, NULL, &s2));
	EXPECT_RES(cuLinkAddFile(s2, CU_JIT_INPUT_PTX, tmpdir, 0, NULL, NULL),
		   CUDA_ERROR_INVALID_IMAGE);
	OK(cuLinkAddFile(s2, CU_JIT_INPUT_PTX, path, 0, NULL, NULL));
	EXPECT_RES(cuLinkComplete(s2, &img, &size), want);
	if (on_fake)
		EXPECT(fake_linked(img, size, ptx, NULL));
	OK(cuLinkDestroy(s2));
}

/* Two PTX inputs for the fake's linker: scale_add in the first calls
 * `helper`, which the second defines beside fill_u32. */
static const char link_ptx_a[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".extern .func (.param .b32 r) helper(.param .b32 x);\n"
	".visible .entry scale_add(.param .u64 p, .param .u64 n, "
	".param .u32 k)\n{\n\tret;\n}\n";
static const char link_ptx_b[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .func (.param .b32 r) helper(.param .b32 x)\n{\n\tret;\n}\n"
	".visible .entry fill_u32(.param .u64 p, .param .u32 v, "
	".param .u32 n)\n{\n\tret;\n}\n";

/*
 * On the fake (CI): a link of two PTX inputs through the daemon's
 * MODULE_LINK, the image loaded and a kernel of each input launched; a
 * library input; the info log with the options passed on; an undefined
 * function refused with the linker's error log; a PTX syntax error.
 */
static void test_cuda_link(void)
{
	char err[128] = "junk", info[256] = "junk", lib[512];
	CUjit_option opt[5] = { CU_JIT_ERROR_LOG_BUFFER,
				CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
				CU_JIT_INFO_LOG_BUFFER,
				CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
				CU_JIT_OPTIMIZATION_LEVEL };
	void *val[5] = { err, (void *)(uintptr_t)sizeof(err), info,
			 (void *)(uintptr_t)sizeof(info), (void *)3 };
	const unsigned n = 64;
	uint32_t host[64];
	void *params[3];
	CUdeviceptr d;
	CUlinkState s;
	CUmodule m;
	CUfunction f;
	void *img;
	size_t size;
	uint64_t n64 = n;
	uint32_t k = 3, v = 7, n32 = n;

	OK(cuMemAlloc(&d, n * sizeof(uint32_t)));
	OK(cuLinkCreate(5, opt, val, &s));
	OK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)link_ptx_a,
			 sizeof(link_ptx_a) - 1, "a.ptx", 0, NULL, NULL));
	OK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)link_ptx_b,
			 sizeof(link_ptx_b), "b.ptx", 0, NULL, NULL));
	OK(cuLinkComplete(s, &img, &size));
	EXPECT(fake_linked(img, size, link_ptx_a, link_ptx_b));
	EXPECT(!strncmp(info, "fake nvlink: 2 inputs", 21) &&
	       strstr(info, " 7=3") && err[0] == '\0');
	EXPECT((uintptr_t)val[3] == strlen(info) + 1 &&
	       (uintptr_t)val[1] == 1);
	OK(cuModuleLoadData(&m, img));
	OK(cuLinkDestroy(s));
	/* fill_u32 of the second input, then scale_add of the first. */
	OK(cuModuleGetFunction(&f, m, "fill_u32"));
	params[0] = &d;
	params[1] = &v;
	params[2] = &n32;
	OK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, params, NULL));
	OK(cuModuleGetFunction(&f, m, "scale_add"));
	params[1] = &n64;
	params[2] = &k;
	OK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, params, NULL));
	OK(cuMemcpyDtoH(host, d, sizeof(host)));
	EXPECT(host[0] == 21 && host[n - 1] == 21 + n - 1);
	OK(cuModuleUnload(m));

	/* A library input: the fake takes "!<arch>\n" and then text. */
	snprintf(lib, sizeof(lib), "!<arch>\n%s", link_ptx_b);
	OK(cuLinkCreate(0, NULL, NULL, &s));
	OK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)link_ptx_a,
			 sizeof(link_ptx_a), "a.ptx", 0, NULL, NULL));
	OK(cuLinkAddData(s, CU_JIT_INPUT_LIBRARY, lib, strlen(lib),
			 "libb.a", 0, NULL, NULL));
	OK(cuLinkComplete(s, &img, &size));
	EXPECT(fake_linked(img, size, link_ptx_a, link_ptx_b));
	OK(cuLinkDestroy(s));

	/* helper undefined: the linker's refusal and its error log. */
	val[1] = (void *)(uintptr_t)sizeof(err);
	OK(cuLinkCreate(4, opt, val, &s));
	OK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)link_ptx_a,
			 sizeof(link_ptx_a), "a.ptx", 0, NULL, NULL));
	EXPECT_RES(cuLinkComplete(s, &img, &size), CUDA_ERROR_INVALID_IMAGE);
	EXPECT(!strcmp(err, "fake nvlink error: undefined reference to "
			    "'helper'"));
	EXPECT((uintptr_t)val[1] == strlen(err) + 1);
	OK(cuLinkDestroy(s));

	/* Text the PTX compiler refuses: INVALID_PTX and its log. */
	val[1] = (void *)(uintptr_t)sizeof(err);
	OK(cuLinkCreate(4, opt, val, &s));
	OK(cuLinkAddData(s, CU_JIT_INPUT_PTX, "this is not ptx", 15, "bad",
			 0, NULL, NULL));
	EXPECT_RES(cuLinkComplete(s, &img, &size), CUDA_ERROR_INVALID_PTX);
	EXPECT(!strcmp(err, "fake ptxas: syntax error in bad"));
	OK(cuLinkDestroy(s));
	OK(cuMemFree(d));
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

/*
 * Unified addressing: a kernel takes a pointer into cuMemHostAlloc'd
 * memory as the program holds it, and its writes land there.  libcuda
 * maps the aperture where the GPU reaches it (init.c); where this process
 * had that range in use already the two pointers differ, which the test
 * skips with the reason.
 */
static void test_cuda_host_pointer(void)
{
	enum { n = 256 };
	uint32_t *h = NULL, before[n];
	uint64_t count = n;
	uint32_t k = 5;
	CUdeviceptr hd = 0, p;
	void *params[3] = { &p, &count, &k };
	CUmodule m;
	CUfunction f;
	unsigned bad = 0;

	OK(cuMemHostAlloc((void **)&h, n * sizeof(*h),
			  CU_MEMHOSTALLOC_DEVICEMAP));
	if (!h)
		return;
	OK(cuMemHostGetDevicePointer(&hd, h, 0));
	if (hd != (CUdeviceptr)(uintptr_t)h) {
		SKIP("pinned memory's host and device pointers differ here");
		OK(cuMemFreeHost(h));
		return;
	}
	for (unsigned i = 0; i < n; i++)
		h[i] = before[i] = i * 11 + 2;
	p = (CUdeviceptr)(uintptr_t)h;
	OK(cuModuleLoadData(&m, ptx));
	OK(cuModuleGetFunction(&f, m, "scale_add"));
	OK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, params, NULL));
	OK(cuCtxSynchronize());
	for (unsigned i = 0; i < n; i++)
		bad += h[i] != before[i] * k + i;
	if (bad)
		fprintf(stderr, "host pointer: %u of %u words wrong\n", bad, n);
	EXPECT(bad == 0);
	OK(cuModuleUnload(m));
	OK(cuMemFreeHost(h));
}

/*
 * cuMemHostRegister of shared memory (a memfd the program maps): the
 * daemon maps the same pages for the GPU (HOST_REGISTER), so a kernel
 * given the device pointer writes the program's memory, copies from and
 * to it run on the GPU, memsets and device-to-device copies take its
 * device address; unregistered, the device address is gone.  Private
 * memory with DEVICEMAP stays refused (test_driver).  On sim the daemon
 * maps no host memory: DEVICEMAP is refused, a plain registration is a
 * record (copies staged).
 */
static void test_host_register(void)
{
	enum { n = 4096 };
	const size_t bytes = n * sizeof(uint32_t);
	int fd = memfd_create("test-code-register", MFD_CLOEXEC);
	uint32_t *h, back[n];
	uint64_t count = n;
	uint32_t k = 3;
	CUdeviceptr hd = 0, d, p;
	void *params[3] = { &p, &count, &k };
	CUmodule m;
	CUfunction f;
	unsigned bad = 0;

	EXPECT(fd >= 0 && !ftruncate(fd, (off_t)bytes));
	h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EXPECT(h != MAP_FAILED);
	if (fd < 0 || h == MAP_FAILED)
		return;
	for (unsigned i = 0; i < n; i++)
		h[i] = i * 5 + 1;
	if (!on_cuda) {
		EXPECT_RES(cuMemHostRegister(h, bytes,
					     CU_MEMHOSTREGISTER_DEVICEMAP),
			   CUDA_ERROR_NOT_SUPPORTED);
		OK(cuMemHostRegister(h, bytes, 0));
		EXPECT_RES(cuMemHostGetDevicePointer(&hd, h, 0),
			   CUDA_ERROR_NOT_SUPPORTED);
		OK(cuMemAlloc(&d, bytes));
		OK(cuMemcpyHtoD(d, h, bytes));
		OK(cuMemcpyDtoH(back, d, bytes));
		EXPECT(!memcmp(back, h, bytes));
		OK(cuMemFree(d));
		OK(cuMemHostUnregister(h));
		goto out;
	}
	OK(cuMemHostRegister(h, bytes, CU_MEMHOSTREGISTER_DEVICEMAP));
	OK(cuMemHostGetDevicePointer(&hd, h, 0));
	EXPECT(hd != 0);
	if (hd != (CUdeviceptr)(uintptr_t)h)
		fprintf(stderr, "registered memory: device pointer %#llx, "
			"host %p (the worker had that range taken)\n",
			(unsigned long long)hd, (void *)h);
	OK(cuMemHostGetDevicePointer(&p, h + 10, 0));
	EXPECT(p == hd + 40);
	/* A kernel writes the program's pages through the device pointer. */
	p = hd;
	OK(cuModuleLoadData(&m, ptx));
	OK(cuModuleGetFunction(&f, m, "scale_add"));
	OK(cuLaunchKernel(f, n / 256, 1, 1, 256, 1, 1, 0, NULL, params,
			  NULL));
	OK(cuCtxSynchronize());
	for (unsigned i = 0; i < n; i++)
		bad += h[i] != (i * 5 + 1) * k + i;
	EXPECT(bad == 0);
	/* Copies both ways, on the GPU. */
	OK(cuMemAlloc(&d, bytes));
	OK(cuMemcpyHtoD(d, h, bytes));
	memset(back, 0, bytes);
	OK(cuMemcpyDtoH(back, d, bytes));
	EXPECT(!memcmp(back, h, bytes));
	OK(cuMemsetD32(d, 0x01020304, n));
	OK(cuMemcpyDtoH(h + 1, d, bytes - 8));
	EXPECT(h[0] == k && h[1] == 0x01020304 && h[n - 2] == 0x01020304);
	/* Its device address names it like device memory. */
	OK(cuMemsetD32(hd, 0xcafe, 16));
	OK(cuCtxSynchronize());
	EXPECT(h[0] == 0xcafe && h[15] == 0xcafe && h[16] == 0x01020304);
	OK(cuMemcpyDtoD(d, hd + 64, 64));
	OK(cuMemcpyDtoH(back, d, 64));
	EXPECT(back[0] == 0x01020304);
	EXPECT_RES(cuMemsetD32(hd, 0, n + 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemHostRegister(h + 1024, 64, 0),
		   CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	OK(cuMemHostUnregister(h));
	EXPECT_RES(cuMemsetD32(hd, 0, 16), CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuMemHostGetDevicePointer(&p, h, 0),
		   CUDA_ERROR_INVALID_VALUE);
	/* Read-only: the GPU reads it. */
	OK(cuMemHostRegister(h, bytes, CU_MEMHOSTREGISTER_DEVICEMAP |
				       CU_MEMHOSTREGISTER_READ_ONLY));
	OK(cuMemcpyHtoD(d, h, bytes));
	OK(cuMemcpyDtoH(back, d, bytes));
	EXPECT(!memcmp(back, h, bytes));
	OK(cuMemHostUnregister(h));
	OK(cuMemFree(d));
	OK(cuModuleUnload(m));
out:
	munmap(h, bytes);
	close(fd);
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

/* ---- a module's kernels: enumerations and TOOLS_MODULE --------------- */

/*
 * Four kernels, in this order, one of them the fake's scale_add, and a
 * global that is no kernel.  The fake lists them as declared, as the
 * real driver lists a cubin's (measured on driver 580); on a GPU the
 * PTX's JIT decides the order, so only the fake's is checked.
 */
#define MULTI_N 4
static const char multi_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .global .u32 counter;\n"
	".visible .entry ka()\n{\n\tret;\n}\n"
	".visible .entry kb(.param .u64 p)\n{\n\tret;\n}\n"
	".visible .entry _Z2kcPd(.param .u64 p)\n{\n\tret;\n}\n"
	".visible .entry scale_add(.param .u64 p, .param .u64 n, "
	".param .u32 k)\n{\n\tret;\n}\n";
static const char *const multi_names[MULTI_N] = { "ka", "kb", "_Z2kcPd",
						  "scale_add" };

/* A module with no kernel: one global. */
static const char data_only_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .global .u32 only_data;\n";

/* Whether `name` is kernel i of multi_ptx (on a GPU: any of them). */
static bool multi_name(const char *name, unsigned i)
{
	if (on_fake)
		return i < MULTI_N && !strcmp(name, multi_names[i]);
	for (unsigned j = 0; j < MULTI_N; j++)
		if (!strcmp(name, multi_names[j]))
			return true;
	return false;
}

/* TOOLS_MODULE, {6e163fbe-b958-444d-835c-e182aff1991e}. */
typedef void (*tmod_visit)(void *user, CUfunction f, const char *name);
typedef unsigned (*tmod_kernels)(CUcontext ctx, CUmodule mod,
				 tmod_visit visit, void *user);

static const void *const *tools_module(void)
{
	static const CUuuid id = { {
		0x6e, 0x16, 0x3f, (char)0xbe, (char)0xb9, 0x58, 0x44, 0x4d,
		(char)0x83, 0x5c, (char)0xe1, (char)0x82, (char)0xaf,
		(char)0xf1, (char)0x99, 0x1e } };
	const void *const *tbl = NULL;

	OK(cuGetExportTable((const void **)&tbl, &id));
	return tbl;
}

/* What slot 7's visits were given, in order. */
struct visits {
	unsigned n;
	CUfunction f[MULTI_N];
	const char *name[MULTI_N];
};

static void record_visit(void *user, CUfunction f, const char *name)
{
	struct visits *v = user;

	if (v->n < MULTI_N) {
		v->f[v->n] = f;
		v->name[v->n] = name;
	}
	v->n++;
}

/* What cuFFT 12's visit does: keeps the function in *user. */
static void keep_function(void *user, CUfunction f, const char *name)
{
	(void)name;
	*(CUfunction *)user = f;
}

/*
 * The table on every backend: its size, slot 7 with a module that is not
 * loaded or no visit (nothing visited, where the real driver crashes),
 * the other slots NOT_SUPPORTED.
 */
static void test_tools_module(void)
{
	const void *const *tbl = tools_module();
	CUresult (*other)(uintptr_t, uintptr_t, uintptr_t, uintptr_t);
	struct visits v = { 0 };
	tmod_kernels kernels;
	int x = 0;

	EXPECT(tbl && (uintptr_t)tbl[0] == 0x318);	/* 99 slots */
	if (!tbl)
		return;
	kernels = (tmod_kernels)tbl[7];
	EXPECT(kernels(NULL, FORGED(CUmodule, x), record_visit, &v) == 0);
	EXPECT(kernels(NULL, NULL, record_visit, &v) == 0);
	EXPECT(v.n == 0);
	EXPECT(kernels(NULL, FORGED(CUmodule, x), NULL, NULL) == 0);
	for (unsigned i = 1; i < 99; i += 97) {		/* 1 and 98 */
		other = (CUresult (*)(uintptr_t, uintptr_t, uintptr_t,
				      uintptr_t))tbl[i];
		EXPECT_RES(other(0, 0, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
	}
	EXPECT(tbl[6] == tbl[8] && tbl[7] != tbl[6]);
}

/* Slot 7 on m, whose kernels are fs[0 .. MULTI_N): each visited once,
 * in order, with its name; whatever context is passed. */
static void check_tools_module(CUmodule m, const CUfunction *fs,
			       CUcontext ctx)
{
	const void *const *tbl = tools_module();
	tmod_kernels kernels = tbl ? (tmod_kernels)tbl[7] : NULL;
	CUfunction kept = NULL;
	const char *name;

	if (!kernels)
		return;
	for (int pass = 0; pass < 2; pass++) {
		struct visits v = { 0 };

		EXPECT(kernels(pass ? ctx : NULL, m, record_visit, &v) ==
		       MULTI_N);
		EXPECT(v.n == MULTI_N);
		for (unsigned i = 0; i < MULTI_N && i < v.n; i++) {
			EXPECT(v.f[i] == fs[i]);
			OK(cuFuncGetName(&name, fs[i]));
			EXPECT(v.name[i] == name);
		}
	}
	EXPECT(kernels(NULL, m, keep_function, &kept) == MULTI_N);
	EXPECT(kept == fs[MULTI_N - 1]);
}

/* The enumerated scale_add runs (p[i] = p[i] * 3 + i). */
static void launch_scale_add(CUfunction f)
{
	enum { n = 64 };
	uint32_t h[n];
	uint64_t count = n;
	uint32_t k = 3;
	void *params[3] = { NULL, &count, &k };
	CUdeviceptr d;

	for (unsigned i = 0; i < n; i++)
		h[i] = i + 5;
	OK(cuMemAlloc(&d, sizeof(h)));
	OK(cuMemcpyHtoD(d, h, sizeof(h)));
	params[0] = &d;
	OK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, params, NULL));
	check_scaled(d, h, n, k, "enumerated scale_add");
	OK(cuMemFree(d));
}

/*
 * cuModuleGetFunctionCount and cuModuleEnumerateFunctions (cuda.h's
 * contract: at most numFunctions handles, INVALID_VALUE for a NULL
 * output, INVALID_HANDLE for an unknown module, INVALID_CONTEXT without
 * a current context for the enumeration only); the handles are
 * cuModuleGetFunction's; TOOLS_MODULE slot 7 visits the same.
 */
static void test_cuda_enumerate(CUcontext ctx)
{
	CUfunction fs[MULTI_N + 1], few[3], f, g;
	CUfunction none_yet = FORGED(CUfunction, fs);
	CUmodule m, empty, fm;
	const char *name;
	unsigned n = 0, at = MULTI_N;

	OK(cuModuleLoadData(&m, multi_ptx));
	OK(cuModuleGetFunction(&f, m, "kb"));	/* asked by name first */
	mark();
	OK(cuModuleGetFunctionCount(&n, m));
	EXPECT(n == MULTI_N);
	EXPECT_COUNTS(1, 0);			/* one MODULE_FUNCS */
	OK(cuModuleGetFunctionCount(&n, m));
	EXPECT_COUNTS(0, 0);			/* once per module */
	for (unsigned i = 0; i <= MULTI_N; i++)
		fs[i] = none_yet;
	OK(cuModuleEnumerateFunctions(fs, MULTI_N, m));
	EXPECT(fs[MULTI_N] == none_yet);
	for (unsigned i = 0; i < MULTI_N; i++) {
		OK(cuFuncGetName(&name, fs[i]));
		EXPECT(multi_name(name, i));
		OK(cuModuleGetFunction(&g, m, name));
		EXPECT(g == fs[i]);
		OK(cuFuncGetModule(&fm, fs[i]));
		EXPECT(fm == m);
		if (!strcmp(name, "kb"))
			EXPECT(fs[i] == f);
		if (!strcmp(name, "scale_add"))
			at = i;
		for (unsigned j = 0; j < i; j++)
			EXPECT(fs[j] != fs[i]);
	}
	EXPECT(at < MULTI_N);
	if (at < MULTI_N && on_fake)
		launch_scale_add(fs[at]);
	mark();
	OK(cuModuleEnumerateFunctions(fs, MULTI_N, m));
	EXPECT_COUNTS(0, 0);			/* the same handles, known */

	/* Fewer slots than kernels: the first ones; none: nothing. */
	for (unsigned i = 0; i < 3; i++)
		few[i] = none_yet;
	OK(cuModuleEnumerateFunctions(few, 2, m));
	EXPECT(few[0] == fs[0] && few[1] == fs[1] && few[2] == none_yet);
	few[0] = none_yet;
	OK(cuModuleEnumerateFunctions(few, 0, m));
	EXPECT(few[0] == none_yet);
	EXPECT_RES(cuModuleEnumerateFunctions(NULL, MULTI_N, m),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuModuleGetFunctionCount(NULL, m),
		   CUDA_ERROR_INVALID_VALUE);

	/* Without a current context the count still answers. */
	OK(cuCtxSetCurrent(NULL));
	EXPECT_RES(cuModuleEnumerateFunctions(few, 2, m),
		   CUDA_ERROR_INVALID_CONTEXT);
	n = 0;
	OK(cuModuleGetFunctionCount(&n, m));
	EXPECT(n == MULTI_N);
	OK(cuCtxSetCurrent(ctx));

	check_tools_module(m, fs, ctx);

	/* A module without kernels. */
	OK(cuModuleLoadData(&empty, data_only_ptx));
	n = 99;
	OK(cuModuleGetFunctionCount(&n, empty));
	EXPECT(n == 0);
	few[0] = none_yet;
	OK(cuModuleEnumerateFunctions(few, 3, empty));
	EXPECT(few[0] == none_yet);
	OK(cuModuleUnload(empty));

	/* Unloaded: its handles are gone with it. */
	OK(cuModuleUnload(m));
	EXPECT_RES(cuModuleGetFunctionCount(&n, m), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuModuleEnumerateFunctions(few, 2, m),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuFuncGetName(&name, fs[0]), CUDA_ERROR_INVALID_HANDLE);
}

/*
 * cuLibraryGetKernelCount and cuLibraryEnumerateKernels load a lazy
 * library (counted on the daemon) and give cuLibraryGetKernel's kernels;
 * the library's module is listed by TOOLS_MODULE too.
 */
static void test_cuda_enumerate_library(void)
{
	CUkernel ks[MULTI_N + 1], few[3], k;
	CUkernel none_yet = FORGED(CUkernel, ks);
	CUfunction kf[MULTI_N];
	CUlibrary lib, lib2;
	CUmodule lm;
	const char *name;
	unsigned n = 0;

	mark();
	OK(cuLibraryLoadData(&lib, multi_ptx, NULL, NULL, 0, NULL, NULL, 0));
	EXPECT_COUNTS(0, 0);			/* lazy: not loaded yet */
	OK(cuLibraryGetKernelCount(&n, lib));
	EXPECT(n == MULTI_N);
	EXPECT_COUNTS(cost_load.commands + 1, 0);	/* load, list */
	for (unsigned i = 0; i <= MULTI_N; i++)
		ks[i] = none_yet;
	OK(cuLibraryEnumerateKernels(ks, MULTI_N, lib));
	EXPECT_COUNTS(MULTI_N * cost_func.commands, 0);
	EXPECT(ks[MULTI_N] == none_yet);
	for (unsigned i = 0; i < MULTI_N; i++) {
		OK(cuKernelGetName(&name, ks[i]));
		EXPECT(multi_name(name, i));
		OK(cuLibraryGetKernel(&k, lib, name));
		EXPECT(k == ks[i]);
		OK(cuKernelGetLibrary(&lib2, ks[i]));
		EXPECT(lib2 == lib);
	}
	for (unsigned i = 0; i < 3; i++)
		few[i] = none_yet;
	OK(cuLibraryEnumerateKernels(few, 2, lib));
	EXPECT(few[0] == ks[0] && few[1] == ks[1] && few[2] == none_yet);
	EXPECT_RES(cuLibraryEnumerateKernels(NULL, 2, lib),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuLibraryGetKernelCount(NULL, lib),
		   CUDA_ERROR_INVALID_VALUE);
	OK(cuLibraryGetModule(&lm, lib));
	for (unsigned i = 0; i < MULTI_N; i++)
		kf[i] = (CUfunction)ks[i];
	check_tools_module(lm, kf, NULL);
	OK(cuLibraryUnload(lib));
	EXPECT_RES(cuLibraryGetKernelCount(&n, lib),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuKernelGetName(&name, ks[0]), CUDA_ERROR_INVALID_HANDLE);

	/* The enumeration as the first use loads too. */
	OK(cuLibraryLoadData(&lib, multi_ptx, NULL, NULL, 0, NULL, NULL, 0));
	mark();
	OK(cuLibraryEnumerateKernels(ks, MULTI_N, lib));
	EXPECT_COUNTS(cost_load.commands + 1 + MULTI_N * cost_func.commands,
		      0);
	for (unsigned i = 0; i < MULTI_N; i++) {
		OK(cuKernelGetName(&name, ks[i]));
		EXPECT(multi_name(name, i));
	}
	OK(cuLibraryUnload(lib));
}

/*
 * More than the 4 KiB of names libmdgpu asks for first: it asks again
 * with the list's size (two MODULE_FUNCS), and every name comes whole.
 */
/* The fake libcuda's mdgpud_spin_ns (runs as C for ns nanoseconds). */
static const char spin_ptx[] =
	".version 7.0\n.target sm_70\n.address_size 64\n"
	".visible .entry mdgpud_spin_ns(.param .u64 ns)\n{\n\tret;\n}\n";

/* How the calling thread waited over a 200 ms kernel's launch and
 * cuCtxSynchronize under the primary context's scheduling flag `flags`:
 * its CPU time as a share of the wall time, and how often it slept
 * (voluntary context switches: a futex sleep counts, a sched_yield of a
 * spinning wait does not). */
struct wait_profile {
	double cpu_share;
	long sleeps;
};

static struct wait_profile wait_profile(CUfunction f, unsigned int flags)
{
	uint64_t ns = 200000000;
	void *args[] = { &ns };
	struct timespec w0, w1, c0, c1;
	struct rusage u0, u1;
	struct wait_profile p = { 0, 0 };
	double wall, cpu;

	OK(cuDevicePrimaryCtxSetFlags(0, flags));
	getrusage(RUSAGE_THREAD, &u0);
	clock_gettime(CLOCK_MONOTONIC, &w0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	OK(cuCtxSynchronize());
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	clock_gettime(CLOCK_MONOTONIC, &w1);
	getrusage(RUSAGE_THREAD, &u1);
	wall = (double)(w1.tv_sec - w0.tv_sec) +
	       (double)(w1.tv_nsec - w0.tv_nsec) * 1e-9;
	cpu = (double)(c1.tv_sec - c0.tv_sec) +
	      (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
	p.cpu_share = wall > 0 ? cpu / wall : 0;
	p.sleeps = u1.ru_nvcsw - u0.ru_nvcsw;
	return p;
}

/*
 * Waits follow the context's scheduling flag (libcuda/init.c,
 * mdgpu_cu_apply_sched): under CU_CTX_SCHED_SPIN a synchronize spins
 * (no sleep while the kernel runs), under CU_CTX_SCHED_BLOCKING_SYNC it
 * sleeps.  What is asserted is whether the thread slept, which does not
 * depend on the machine's load: the CPU share a spinning wait gets does
 * (measured 0.99 alone, 0.25 beside two QEMU guests, 0.01 when the test
 * ran under `nice` beside them).  Fake libcuda only: its mdgpud_spin_ns
 * takes the time asked for.
 */
static void test_cuda_wait_flags(void)
{
	struct wait_profile spin, block;
	CUmodule m;
	CUfunction f;

	if (!on_fake) {
		SKIP("the wait test needs the fake libcuda's timed kernel");
		return;
	}
	if (getenv("MDGPU_SPIN_US")) {
		SKIP("MDGPU_SPIN_US is set: it overrides the flags");
		return;
	}
	OK(cuModuleLoadData(&m, spin_ptx));
	OK(cuModuleGetFunction(&f, m, "mdgpud_spin_ns"));
	spin = wait_profile(f, CU_CTX_SCHED_SPIN);
	block = wait_profile(f, CU_CTX_SCHED_BLOCKING_SYNC);
	printf("test_code: 200 ms synchronize: CPU %.2f of wall time and %ld "
	       "sleeps under SCHED_SPIN, %.2f and %ld under "
	       "SCHED_BLOCKING_SYNC\n", spin.cpu_share, spin.sleeps,
	       block.cpu_share, block.sleeps);
	EXPECT(spin.sleeps == 0);
	EXPECT(block.sleeps >= 1);
	EXPECT(block.cpu_share <= 0.05);
	OK(cuDevicePrimaryCtxSetFlags(0, 0));
	OK(cuModuleUnload(m));
}

/*
 * A thread's per-thread default stream is one daemon stream, made on its
 * first use and destroyed when the thread exits: one STREAM_CREATE and
 * one STREAM_DESTROY, neither failed (every backend).
 */
static void *ptds_use_main(void *arg)
{
	unsigned long long id = 0;

	if (cuCtxSetCurrent(arg) ||
	    cuStreamGetId(CU_STREAM_PER_THREAD, &id) || !id)
		return arg;
	return NULL;
}

static void test_ptds_exit(CUcontext ctx)
{
	pthread_t t;
	void *bad = NULL;

	mark();
	pthread_create(&t, NULL, ptds_use_main, ctx);
	pthread_join(t, &bad);
	EXPECT(bad == NULL);
	EXPECT_COUNTS(2, 0);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* A thread's short command: a memset on its per-thread stream (or on the
 * legacy stream), an event recorded after it and waited for, and, on the
 * per-thread stream, a synchronize; ms: how long it took. */
struct ptds_short {
	CUcontext ctx;
	CUdeviceptr d;
	bool legacy;
	uint64_t ms;
	CUresult r;
};

static void *ptds_short_main(void *arg)
{
	struct ptds_short *t = arg;
	CUstream s = t->legacy ? NULL : CU_STREAM_PER_THREAD;
	uint64_t t0 = now_ms();
	CUevent ev = NULL;

	t->r = cuCtxSetCurrent(t->ctx);
	if (!t->r)
		t->r = cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING);
	if (!t->r)
		t->r = cuMemsetD32Async(t->d, 7, 16, s);
	if (!t->r)
		t->r = cuEventRecord(ev, s);
	if (!t->r)
		t->r = cuEventSynchronize(ev);
	if (!t->r && !t->legacy)
		t->r = cuStreamSynchronize(s);
	t->ms = now_ms() - t0;
	if (ev)
		cuEventDestroy(ev);
	return NULL;
}

/* In another thread: the short command on its per-thread stream, or on
 * the legacy stream. */
static struct ptds_short ptds_short_run(CUcontext ctx, CUdeviceptr d,
					bool legacy)
{
	struct ptds_short t = { .ctx = ctx, .d = d, .legacy = legacy };
	pthread_t th;

	pthread_create(&th, NULL, ptds_short_main, &t);
	pthread_join(th, NULL);
	return t;
}

/* The fake libcuda's scale_add launched through cuLaunchKernel_ptsz
 * (cuGetProcAddress with the per-thread flag) on NULL: on this thread's
 * per-thread default stream, which it synchronises. */
static void test_cuda_ptds(void)
{
	CUresult (*launch)(CUfunction, unsigned int, unsigned int,
			   unsigned int, unsigned int, unsigned int,
			   unsigned int, unsigned int, CUstream, void **,
			   void **) = NULL;
	CUdriverProcAddressQueryResult st;
	enum { n = 64 };
	uint32_t h[n], k = 5;
	uint64_t count = n;
	void *params[3] = { NULL, &count, &k };
	CUmodule m;
	CUfunction f;
	CUdeviceptr d;

	if (!on_fake) {
		SKIP("scale_add on the per-thread stream needs the fake "
		     "libcuda's kernel");
		return;
	}
	OK(cuGetProcAddress("cuLaunchKernel", (void **)&launch, 13000,
			    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
			    &st));
	EXPECT(launch && (void *)launch == dlsym(RTLD_DEFAULT,
						 "cuLaunchKernel_ptsz"));
	if (!launch)
		return;
	OK(cuModuleLoadData(&m, ptx));
	OK(cuModuleGetFunction(&f, m, "scale_add"));
	for (unsigned i = 0; i < n; i++)
		h[i] = 2 * i + 1;
	OK(cuMemAlloc(&d, sizeof(h)));
	OK(cuMemcpyHtoD(d, h, sizeof(h)));
	params[0] = &d;
	OK(launch(f, 1, 1, 1, n, 1, 1, 0, NULL, params, NULL));
	OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
	check_scaled(d, h, n, k, "scale_add on the per-thread stream");
	OK(cuMemFree(d));
	OK(cuModuleUnload(m));
}

/*
 * Per-thread default streams of different threads run concurrently
 * (MDGPU_TEST_CONCURRENCY: the daemon's only vGPU, whose slice lasts
 * while its streams have work, so that no slice end drains the long
 * kernel before the other thread's command runs; the fake libcuda, whose
 * streams run concurrently).  While this thread's per-thread stream runs
 * a 1 s kernel, another thread's per-thread stream completes a short
 * command without waiting for it; another thread's legacy stream waits
 * for it (it synchronises with blocking streams, per-thread ones too).
 */
static void test_cuda_ptds_concurrent(CUcontext ctx)
{
	uint64_t ns;
	void *args[] = { &ns };
	struct ptds_short b;
	CUmodule m;
	CUfunction spin;
	CUdeviceptr d;
	CUevent e0, e1;
	float ms;

	if (!on_fake) {
		SKIP("the concurrency test needs the fake libcuda's timed "
		     "kernel");
		return;
	}
	OK(cuModuleLoadData(&m, spin_ptx));
	OK(cuModuleGetFunction(&spin, m, "mdgpud_spin_ns"));
	OK(cuMemAlloc(&d, 64));
	OK(cuCtxSynchronize());

	ns = 1000000000;
	OK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
	OK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
	OK(cuEventRecord(e0, CU_STREAM_PER_THREAD));
	OK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_PER_THREAD,
			  args, NULL));
	OK(cuEventRecord(e1, CU_STREAM_PER_THREAD));
	b = ptds_short_run(ctx, d, false);
	OK(b.r);
	/* The kernel still runs: b did not wait for it, and the time
	 * between events around it is not known yet. */
	EXPECT_RES(cuStreamQuery(CU_STREAM_PER_THREAD), CUDA_ERROR_NOT_READY);
	EXPECT_RES(cuEventElapsedTime(&ms, e0, e1), CUDA_ERROR_NOT_READY);
	printf("test_code: another thread's per-thread stream: %llu ms "
	       "beside a 1000 ms kernel\n", (unsigned long long)b.ms);
	OK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
	OK(cuEventElapsedTime(&ms, e0, e1));
	EXPECT(ms >= 900);
	OK(cuEventDestroy(e0));
	OK(cuEventDestroy(e1));

	ns = 300000000;
	OK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_PER_THREAD,
			  args, NULL));
	b = ptds_short_run(ctx, d, true);
	OK(b.r);
	/* The legacy memset ran after the kernel. */
	OK(cuStreamQuery(CU_STREAM_PER_THREAD));
	EXPECT(b.ms >= 200);
	OK(cuMemFree(d));
	OK(cuModuleUnload(m));
}

/*
 * A synchronize does not hold other threads (libcuda's lock is released
 * while it waits, mdgpu_cu_wait()).  While a helper thread waits in
 * cuStreamSynchronize for a 1 s kernel on its stream, this thread's
 * calls that need no answer from the GPU return at once: a lookup, an
 * asynchronous launch, an event record.  Its own synchronize then waits
 * for the kernel too (the ring runs in order), and everything lands.
 */
struct waiter {
	CUcontext ctx;
	CUstream s;
	uint64_t start_ms, end_ms;
	CUresult r;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->r = cuCtxSetCurrent(w->ctx);
	__atomic_store_n(&w->start_ms, now_ms(), __ATOMIC_RELEASE);
	if (!w->r)
		w->r = cuStreamSynchronize(w->s);
	__atomic_store_n(&w->end_ms, now_ms(), __ATOMIC_RELEASE);
	return NULL;
}

static void test_cuda_wait_unlocked(CUcontext ctx)
{
	uint64_t ns = 1000000000, t0, calls_ms;
	void *args[] = { &ns };
	struct waiter w = { .ctx = ctx };
	CUfunction spin, fill;
	CUdevice dev;
	CUmodule m, mf;
	CUevent ev;
	CUdeviceptr d;
	pthread_t th;
	uint32_t h[64], k = 3;
	uint64_t count = 64;
	void *params[3] = { NULL, &count, &k };

	if (!on_fake) {
		SKIP("the unlocked-wait test needs the fake libcuda's timed "
		     "kernel");
		return;
	}
	OK(cuModuleLoadData(&m, spin_ptx));
	OK(cuModuleGetFunction(&spin, m, "mdgpud_spin_ns"));
	OK(cuModuleLoadData(&mf, ptx));
	OK(cuModuleGetFunction(&fill, mf, "scale_add"));
	OK(cuStreamCreate(&w.s, CU_STREAM_NON_BLOCKING));
	OK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	OK(cuMemAlloc(&d, sizeof(h)));
	for (unsigned i = 0; i < 64; i++)
		h[i] = i;
	OK(cuMemcpyHtoD(d, h, sizeof(h)));
	params[0] = &d;
	OK(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, w.s, args, NULL));
	pthread_create(&th, NULL, waiter_main, &w);
	while (!__atomic_load_n(&w.start_ms, __ATOMIC_ACQUIRE))
		sched_yield();
	usleep(100000);		/* the helper is inside its wait */
	t0 = now_ms();
	OK(cuCtxGetDevice(&dev));
	OK(cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
	OK(cuEventRecord(ev, NULL));
	calls_ms = now_ms() - t0;
	/* Returned while the helper still waited for the 1 s kernel. */
	EXPECT(!__atomic_load_n(&w.end_ms, __ATOMIC_ACQUIRE));
	printf("test_code: lookup, launch and record beside another thread's "
	       "synchronize: %llu ms\n", (unsigned long long)calls_ms);
	OK(cuEventSynchronize(ev));
	pthread_join(th, NULL);
	OK(w.r);
	EXPECT(w.end_ms - w.start_ms >= 800);
	check_scaled(d, h, 64, k, "scale_add beside a waiting thread");
	OK(cuMemFree(d));
	OK(cuEventDestroy(ev));
	OK(cuStreamDestroy(w.s));
	OK(cuModuleUnload(mf));
	OK(cuModuleUnload(m));
}

static void test_cuda_many_kernels(void)
{
	enum { N = 40, LONG = 100 };
	static const char head[] =
		".version 8.0\n.target sm_90\n.address_size 64\n";
	char want[LONG + 8], *text, *p;
	CUfunction fs[N];
	const char *name;
	unsigned n = 0;
	CUmodule m;

	text = malloc(sizeof(head) + N * (LONG + 40));
	if (!text) {
		EXPECT(text != NULL);
		return;
	}
	p = text + sprintf(text, "%s", head);
	for (unsigned i = 0; i < N; i++)
		p += sprintf(p, ".visible .entry k%02u_%0*d()\n{\n\tret;\n}\n",
			     i, LONG, 0);
	OK(cuModuleLoadData(&m, text));
	free(text);
	mark();
	OK(cuModuleGetFunctionCount(&n, m));
	EXPECT(n == N);
	EXPECT_COUNTS(2, 0);		/* 40 x 105 bytes: asked twice */
	OK(cuModuleEnumerateFunctions(fs, N, m));
	for (unsigned i = 0; i < N; i++) {
		snprintf(want, sizeof(want), "k%02u_%0*d", i, LONG, 0);
		OK(cuFuncGetName(&name, fs[i]));
		EXPECT(strlen(name) == LONG + 4);
		EXPECT(!on_fake || !strcmp(name, want));
	}
	OK(cuModuleUnload(m));
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

	/* A library's first use loads it (lazy loading), as the runtime's
	 * first cuBLAS call does. */
	OK(cuLibraryLoadData(&lib, big, NULL, NULL, 0, NULL, NULL, 0));
	OK(cuLibraryGetKernel(&kern, lib, "scale_add"));
	OK(cuLaunchKernel((CUfunction)kern, 1, 1, 1, n, 1, 1, 0, NULL, params,
			  NULL));
	for (unsigned i = 0; i < n; i++)
		h[i] = h[i] * k + i;
	check_scaled(d, h, n, k, "large library");
	OK(cuLibraryUnload(lib));

	/* The driver's own answers. */
	EXPECT_RES(cuModuleLoadData(&m, bad_ptx), CUDA_ERROR_INVALID_PTX);
	if (on_fake) {
		EXPECT_RES(cuModuleLoadData(&m, no_sass),
			   CUDA_ERROR_NO_BINARY_FOR_GPU);
		/* A library loads at its first use (lazy loading). */
		OK(cuLibraryLoadData(&lib, no_sass, NULL, NULL, 0, NULL, NULL,
				     0));
		EXPECT_RES(cuLibraryGetKernel(&kern, lib, "k"),
			   CUDA_ERROR_NO_BINARY_FOR_GPU);
		OK(cuLibraryUnload(lib));
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
	int v = -1, w = -1, bs = 0, grid = 0;
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
		/* The value the host driver reports already: answered here. */
		mark();
		OK(cuFuncSetAttribute(f,
			CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024));
		EXPECT_COUNTS(0, 0);
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
		/* Asked before: the kept answer, no command; after the
		 * function's cache config is set, asked again. */
		mark();
		OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&w, f, 128, 0));
		EXPECT(w == v);
		EXPECT_COUNTS(0, 0);
		OK(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1));
		mark();
		OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&w, f, 128, 0));
		EXPECT(w > 0);
		EXPECT_COUNTS(1, 0);
	}
	SKIP("a global written by a kernel (cuModuleGetGlobal + "
	     "cuMemcpyDtoH) and a vector add with the host driver's layout "
	     "need the fake libcuda's named kernels");
	OK(cuModuleUnload(m));
}

/* Capture on any backend: a launch refused at the call (forged function)
 * is not captured and leaves the capture as it was. */
static void test_capture_refusals(void)
{
	int x = 0;
	CUfunction f = FORGED(CUfunction, x);
	CUDA_KERNEL_NODE_PARAMS kp = { .func = f, .gridDimX = 1,
				       .gridDimY = 1, .gridDimZ = 1,
				       .blockDimX = 1, .blockDimY = 1,
				       .blockDimZ = 1 };
	CUstreamCaptureStatus cs;
	CUgraphNode node;
	CUstream s;
	CUgraph g;
	size_t n = 9;

	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT_RES(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL),
		   CUDA_ERROR_INVALID_HANDLE);
	OK(cuStreamIsCapturing(s, &cs));
	EXPECT(cs == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	OK(cuStreamEndCapture(s, &g));
	OK(cuGraphGetNodes(g, NULL, &n));
	EXPECT(n == 0);
	EXPECT_RES(cuGraphAddKernelNode(&node, g, NULL, 0, &kp),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuGraphAddKernelNode(&node, g, NULL, 0, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	OK(cuGraphDestroy(g));
	OK(cuStreamDestroy(s));
}

/* p[i] = p[i] * k + i over n words, in place on the host copy. */
static void scale_host(uint32_t *p, unsigned n, uint32_t k)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = p[i] * k + i;
}

static bool same_words(CUdeviceptr d, const uint32_t *want, unsigned n,
		       const char *how)
{
	uint32_t *back = calloc(n, sizeof(*back));
	unsigned bad = 0;

	if (cuMemcpyDtoH(back, d, n * sizeof(*back)) != CUDA_SUCCESS)
		bad = n;
	for (unsigned i = 0; i < n && !bad; i++)
		bad += back[i] != want[i];
	if (bad)
		fprintf(stderr, "%s: %u of %u words wrong\n", how, bad, n);
	free(back);
	return bad == 0;
}

/*
 * Kernels captured and replayed (the fake's scale_add runs for real):
 * parameters are the ones at capture time, later changes to the
 * caller's variables do not reach the graph; a graph built by hand; a
 * graph whose module is gone is refused at launch.
 */
static void test_cuda_graph(void)
{
	enum { n = 256 };
	uint32_t h[n], cur[n];
	uint64_t count = n;
	uint32_t k = 3, k2 = 2, k3 = 5;
	void *params[3] = { NULL, &count, &k };
	void *params2[3] = { NULL, &count, &k2 };
	void *params3[3] = { NULL, &count, &k3 };
	CUlaunchConfig cfg = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
			       .blockDimX = n, .blockDimY = 1,
			       .blockDimZ = 1 };
	CUDA_KERNEL_NODE_PARAMS kp = { .gridDimX = 1, .gridDimY = 1,
				       .gridDimZ = 1, .blockDimX = n,
				       .blockDimY = 1, .blockDimZ = 1 };
	CUgraphNode *nodes, node;
	CUgraphExec x, x2;
	CUgraphNodeType t;
	CUdeviceptr d;
	CUfunction f;
	CUmodule m;
	CUstream s;
	CUgraph g, g2;
	size_t nn = 0;

	for (unsigned i = 0; i < n; i++)
		h[i] = i * 7 + 1;
	OK(cuMemAlloc(&d, sizeof(h)));
	OK(cuMemcpyHtoD(d, h, sizeof(h)));
	params[0] = params2[0] = params3[0] = &d;
	OK(cuModuleLoadData(&m, ptx));
	OK(cuModuleGetFunction(&f, m, "scale_add"));
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	cfg.hStream = s;

	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, s, params, NULL));
	k = 100;	/* after capture: not what the graph runs */
	OK(cuLaunchKernelEx(&cfg, f, params2, NULL));
	k2 = 100;
	OK(cuStreamEndCapture(s, &g));
	OK(cuGraphGetNodes(g, NULL, &nn));
	EXPECT(nn == 2);
	nodes = calloc(nn + 1, sizeof(*nodes));
	OK(cuGraphGetNodes(g, nodes, &nn));
	for (size_t i = 0; i < nn; i++) {
		OK(cuGraphNodeGetType(nodes[i], &t));
		EXPECT(t == CU_GRAPH_NODE_TYPE_KERNEL);
	}
	free(nodes);
	/* Captured, not run. */
	EXPECT(same_words(d, h, n, "after capture"));

	OK(cuGraphInstantiateWithFlags(&x, g, 0));
	memcpy(cur, h, sizeof(h));
	for (int rep = 0; rep < 3; rep++) {
		OK(cuGraphLaunch(x, s));
		scale_host(cur, n, 3);
		scale_host(cur, n, 2);
	}
	OK(cuStreamSynchronize(s));
	EXPECT(same_words(d, cur, n, "replays"));
	/* On the legacy stream, after the graph is destroyed. */
	OK(cuGraphDestroy(g));
	OK(cuGraphLaunch(x, NULL));
	OK(cuCtxSynchronize());
	scale_host(cur, n, 3);
	scale_host(cur, n, 2);
	EXPECT(same_words(d, cur, n, "replay on the legacy stream"));

	/* By hand: two kernel nodes, the second after the first. */
	OK(cuGraphCreate(&g2, 0));
	kp.func = f;
	kp.kernelParams = params3;
	OK(cuGraphAddKernelNode(&node, g2, NULL, 0, &kp));
	k3 = 1;
	OK(cuGraphAddKernelNode(&node, g2, &node, 1, &kp));
	OK(cuGraphInstantiateWithFlags(&x2, g2, 0));
	OK(cuGraphDestroy(g2));
	OK(cuGraphLaunch(x2, s));
	OK(cuStreamSynchronize(s));
	scale_host(cur, n, 5);
	scale_host(cur, n, 1);
	EXPECT(same_words(d, cur, n, "nodes added by hand"));

	/* The module unloaded: its kernels' graphs are refused. */
	OK(cuModuleUnload(m));
	EXPECT_RES(cuGraphLaunch(x, s), CUDA_ERROR_INVALID_HANDLE);
	EXPECT_RES(cuGraphLaunch(x2, s), CUDA_ERROR_INVALID_HANDLE);
	OK(cuStreamSynchronize(s));
	EXPECT(same_words(d, cur, n, "nothing queued"));
	OK(cuGraphExecDestroy(x));
	OK(cuGraphExecDestroy(x2));
	OK(cuStreamDestroy(s));
	OK(cuMemFree(d));
}

/*
 * Kernel parameters past 4 KiB (CUDA 12.1's 32764 bytes, ABI 1.6).  The
 * fake libcuda's sum_big(u64 out, .b8 p[N]) writes the sum of p's bytes
 * to *out.  Blobs of 8 KiB (kernelParams), 32000 bytes (`extra`) and
 * 32764 (cuLaunchKernelEx, a graph node, and launches back to back,
 * between copies that share the aperture's staging area, so that every
 * staging half and RPC area is reused); 32765 bytes are refused with the
 * driver's CUDA_ERROR_INVALID_VALUE before anything is queued.  The sums
 * are checked on the fake; a GPU runs the PTX's empty body.
 */
#define BIG_PARAMS_MAX 32764

static bool big_module(size_t total, CUmodule *m, CUfunction *f)
{
	char text[256];
	bool ok;

	snprintf(text, sizeof(text),
		 ".version 8.1\n.target sm_90\n.address_size 64\n"
		 ".visible .entry sum_big(.param .u64 out, .param .align 8 "
		 ".b8 p[%zu])\n{\n\tret;\n}\n", total - 8);
	ok = cuModuleLoadData(m, text) == CUDA_SUCCESS &&
	     cuModuleGetFunction(f, *m, "sum_big") == CUDA_SUCCESS;
	EXPECT(ok);
	return ok;
}

/* blob = { out, p[total - 8] } with a pattern of seed; the sum of p. */
static uint64_t big_fill(unsigned char *blob, size_t total, CUdeviceptr out,
			 unsigned seed)
{
	uint64_t sum = 0;

	memcpy(blob, &out, sizeof(out));
	for (size_t i = 8; i < total; i++) {
		blob[i] = (unsigned char)(i * 13 + seed * 101 + total);
		sum += blob[i];
	}
	return sum;
}

static void test_cuda_large_params(void)
{
	enum { RUNS = 12 };
	static const size_t sizes[] = { 8192, 32000, BIG_PARAMS_MAX };
	unsigned char *blob = malloc(BIG_PARAMS_MAX + 1);
	uint64_t got[RUNS], want[RUNS], word = 0x1234;
	CUDA_KERNEL_NODE_PARAMS kp = { .gridDimX = 1, .gridDimY = 1,
				       .gridDimZ = 1, .blockDimX = 1,
				       .blockDimY = 1, .blockDimZ = 1 };
	CUlaunchConfig cfg = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
			       .blockDimX = 1, .blockDimY = 1,
			       .blockDimZ = 1 };
	CUdeviceptr d, scratch;
	CUgraphNode node;
	CUgraphExec x;
	CUfunction f;
	CUmodule m;
	CUstream s;
	CUgraph g;
	bool have_max = false;

	if (!blob) {
		EXPECT(blob != NULL);
		return;
	}
	OK(cuMemAlloc(&d, sizeof(got)));
	OK(cuMemAlloc(&scratch, 4096));
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t total = sizes[i], len = total;
		void *params[2] = { blob, blob + 8 };
		void *extra[5] = { CU_LAUNCH_PARAM_BUFFER_POINTER, blob,
				   CU_LAUNCH_PARAM_BUFFER_SIZE, &len,
				   CU_LAUNCH_PARAM_END };
		uint64_t sum;

		if (!big_module(total, &m, &f))
			continue;
		OK(cuMemsetD8(d, 0, sizeof(got)));
		sum = big_fill(blob, total, d + 8 * i, (unsigned)i);
		if (i == 0)
			OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL,
					  params, NULL));
		else if (i == 1)
			OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL,
					  NULL, extra));
		else
			OK(cuLaunchKernelEx(&cfg, f, params, NULL));
		OK(cuCtxSynchronize());
		OK(cuMemcpyDtoH(got, d, sizeof(got)));
		EXPECT(!on_fake || got[i] == sum);
		if (total == BIG_PARAMS_MAX) {
			/* One byte past CUDA's bound. */
			len = BIG_PARAMS_MAX + 1;
			EXPECT_RES(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL,
						  NULL, extra),
				   CUDA_ERROR_INVALID_VALUE);
			EXPECT_RES(cuLaunchKernelEx(&cfg, f, NULL, extra),
				   CUDA_ERROR_INVALID_VALUE);
			have_max = true;
			break;		/* m and f stay for what follows */
		}
		OK(cuModuleUnload(m));
	}

	if (!have_max)
		goto out;
	/* Back to back on a stream, a small copy through the staging
	 * area after each; then as a graph node. */
	memset(got, 0, sizeof(got));
	OK(cuMemcpyHtoD(d, got, sizeof(got)));
	for (unsigned i = 0; i < RUNS; i++) {
		void *params[2] = { blob, blob + 8 };

		want[i] = big_fill(blob, BIG_PARAMS_MAX, d + 8 * i, i + 7);
		OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
		OK(cuMemcpyHtoD(scratch + 8 * i, &word, sizeof(word)));
	}
	OK(cuStreamSynchronize(s));
	OK(cuMemcpyDtoH(got, d, sizeof(got)));
	for (unsigned i = 0; i < RUNS; i++)
		EXPECT(!on_fake || got[i] == want[i]);

	want[0] = big_fill(blob, BIG_PARAMS_MAX, d, 99);
	{
		void *params[2] = { blob, blob + 8 };

		kp.func = f;
		kp.kernelParams = params;
		OK(cuGraphCreate(&g, 0));
		OK(cuGraphAddKernelNode(&node, g, NULL, 0, &kp));
	}
	memset(blob, 0, BIG_PARAMS_MAX);	/* the node kept a copy */
	OK(cuGraphInstantiateWithFlags(&x, g, 0));
	OK(cuGraphLaunch(x, s));
	OK(cuStreamSynchronize(s));
	OK(cuMemcpyDtoH(got, d, sizeof(got)));
	EXPECT(!on_fake || got[0] == want[0]);
	OK(cuGraphExecDestroy(x));
	OK(cuGraphDestroy(g));
	OK(cuModuleUnload(m));
out:
	OK(cuStreamDestroy(s));
	OK(cuMemFree(scratch));
	OK(cuMemFree(d));
	free(blob);
}

/*
 * The cluster occupancy questions.  Every backend: the refusals of
 * cuOccupancyMaxPotentialClusterSize (arguments and attributes before
 * handles), the launch's own cluster ignored.  On the
 * cuda backend: the host driver's answers for scale_add (on the fake
 * libcuda: 8 blocks, 16 once the function allows non-portable sizes, 0
 * when no block fits; cuOccupancyMaxActiveClusters 16 blocks per SM x
 * 132 SMs / 2).
 */
static void test_occupancy_clusters(void)
{
	CUlaunchAttribute at[2];
	CUlaunchConfig cfg = { .gridDimX = 8, .gridDimY = 1, .gridDimZ = 1,
			       .blockDimX = 128, .blockDimY = 1,
			       .blockDimZ = 1, .attrs = at, .numAttrs = 0 };
	int x = 0, v = -1, w = -1;
	CUfunction f = FORGED(CUfunction, x);
	CUmodule m;
	CUresult r;

	memset(at, 0, sizeof(at));
	EXPECT_RES(cuOccupancyMaxPotentialClusterSize(NULL, f, &cfg),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuOccupancyMaxPotentialClusterSize(&v, f, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	cfg.blockDimX = 0;
	EXPECT_RES(cuOccupancyMaxPotentialClusterSize(&v, f, &cfg),
		   CUDA_ERROR_INVALID_VALUE);
	cfg.blockDimX = 1025;
	EXPECT_RES(cuOccupancyMaxPotentialClusterSize(&v, f, &cfg),
		   CUDA_ERROR_INVALID_VALUE);
	cfg.blockDimX = 128;
	cfg.attrs = NULL;
	cfg.numAttrs = 1;
	EXPECT_RES(cuOccupancyMaxPotentialClusterSize(&v, f, &cfg),
		   CUDA_ERROR_INVALID_VALUE);
	cfg.attrs = at;
	at[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
	EXPECT_RES(cuOccupancyMaxPotentialClusterSize(&v, f, &cfg),
		   CUDA_ERROR_NOT_SUPPORTED);
	/* A cluster shape, even one a launch refuses, is not looked at. */
	at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	at[0].value.clusterDim.x = 2;
	EXPECT_RES(cuLaunchKernelEx(&cfg, f, NULL, NULL),
		   CUDA_ERROR_INVALID_VALUE);
	EXPECT_RES(cuOccupancyMaxPotentialClusterSize(&v, f, &cfg),
		   CUDA_ERROR_INVALID_HANDLE);
	cfg.numAttrs = 0;
	cfg.hStream = FORGED(CUstream, x);
	EXPECT_RES(cuOccupancyMaxPotentialClusterSize(&v, NULL, &cfg),
		   CUDA_ERROR_INVALID_HANDLE);
	cfg.hStream = NULL;
	EXPECT_RES(cuOccupancyMaxPotentialClusterSize(&v, f, &cfg),
		   CUDA_ERROR_INVALID_HANDLE);
	EXPECT(v == -1);
	if (!on_cuda)
		return;

	OK(cuModuleLoadData(&m, ptx));
	OK(cuModuleGetFunction(&f, m, "scale_add"));
	r = cuOccupancyMaxPotentialClusterSize(&v, f, &cfg);
	if (r == CUDA_ERROR_NOT_SUPPORTED) {
		SKIP("the daemon's host driver answers no cluster size");
		goto out;
	}
	EXPECT(r == CUDA_SUCCESS && (on_fake ? v == 8 : v >= 1));
	/* The launch's cluster is ignored; the grid need not divide. */
	cfg.numAttrs = 1;
	cfg.gridDimX = 7;
	OK(cuOccupancyMaxPotentialClusterSize(&w, f, &cfg));
	EXPECT(w == v);
	cfg.numAttrs = 0;
	cfg.gridDimX = 8;
	cfg.sharedMemBytes = 64 * 1024;		/* past the function's 48 KiB */
	r = cuOccupancyMaxPotentialClusterSize(&w, f, &cfg);
	EXPECT(!on_fake || (r == CUDA_SUCCESS && w == 0));
	cfg.sharedMemBytes = 0;
	r = cuFuncSetAttribute(f,
			CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
	if (r == CUDA_ERROR_NOT_SUPPORTED) {
		SKIP("the daemon's host driver sets no function attribute");
	} else {
		EXPECT(r == CUDA_SUCCESS);
		OK(cuOccupancyMaxPotentialClusterSize(&w, f, &cfg));
		EXPECT(on_fake ? w == 16 : w >= v);
	}
	/* The other cluster question, with a cluster of 2. */
	at[0].value.clusterDim.y = 1;
	at[0].value.clusterDim.z = 1;
	cfg.numAttrs = 1;
	OK(cuOccupancyMaxActiveClusters(&w, f, &cfg));
	EXPECT(on_fake ? w == 16 * 132 / 2 : w >= 1);
out:
	OK(cuModuleUnload(m));
}

int main(void)
{
	const char *backend = getenv("MDGPU_TEST_BACKEND");
	const char *loading = getenv("CUDA_MODULE_LOADING");
	bool eager = loading && !strcmp(loading, "EAGER");
	bool concurrency = getenv("MDGPU_TEST_CONCURRENCY") != NULL;
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
	if (eager) {
		test_eager();
		goto out;
	}
	if (concurrency) {
		test_cuda_ptds_concurrent(ctx);
		test_cuda_wait_unlocked(ctx);
		goto out;
	}
	test_images();
	test_forged();
	test_library_load();
	test_link();
	test_launch_refusals();
	test_limits();
	test_image_bounds();
	test_lazy(ctx);
	test_capture_refusals();
	test_tools_module();
	test_ptds_exit(ctx);
	test_host_register();
	if (on_cuda) {
		test_cuda_module();
		test_cuda_host_pointer();
		test_cuda_large_image();
		test_cuda_info();
		test_cuda_graph();
		test_cuda_enumerate(ctx);
		test_cuda_enumerate_library();
		test_cuda_many_kernels();
		test_cuda_wait_flags();
		test_cuda_ptds();
		test_cuda_large_params();
		if (on_fake)
			test_cuda_link();
	}
	test_occupancy_clusters();
out:
	OK(cuDevicePrimaryCtxRelease(0));
	remove_tmp();
	printf("test_code (%s%s%s): %u passed, %u failed, %u skipped\n",
	       on_cuda ? "cuda" : "sim", eager ? ", EAGER" : "",
	       concurrency ? ", concurrency" : "", passed, failed, skipped);
	return failed ? 1 : 0;
}
