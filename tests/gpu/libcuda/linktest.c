// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Device linking through cuLink*, run on the GPU machine by
 * tests/gpu/libcuda-compare.sh on NVIDIA's libcuda.so.1 and on mdgpu's
 * (MODULE_LINK: the host driver's linker in the vGPU's worker).  Every
 * line is "info ..." (may differ) or "<test>: <result>" (must be equal).
 *
 *   linktest [RDC.cubin LIBCUDADEVRT.a]
 *
 * two-ptx: kernel link_add of PTX input 1 calls `.extern .func add_k`,
 * defined in PTX input 2; linked, loaded, launched, checked.
 * undefined: input 1 alone, refused by the linker (its error name and
 * whether its error log says something).
 * rdc: a cubin by nvcc -rdc=true (link_rdc.cu) calling add_k, linked with
 * PTX input 2 and libcudadevrt.a (a LIBRARY input), launched, checked.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N 1000

static int failures;

#define CK(call) do {							\
	CUresult r_ = (call);						\
	if (r_ != CUDA_SUCCESS) {					\
		const char *n_ = NULL;					\
		cuGetErrorName(r_, &n_);				\
		printf("%s: error %d %s at %s\n", test, (int)r_,	\
		       n_ ? n_ : "?", #call);				\
		failures++;						\
		return;							\
	}								\
} while (0)

static const char ptx_a[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	".extern .func (.param .b32 func_retval0) add_k(.param .b32 x);\n"
	".visible .entry link_add(.param .u64 p, .param .u32 n)\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b32 %r<8>;\n"
	"	.reg .b64 %rd<5>;\n"
	"	ld.param.u64 %rd1, [p];\n"
	"	ld.param.u32 %r1, [n];\n"
	"	mov.u32 %r2, %ctaid.x;\n"
	"	mov.u32 %r3, %ntid.x;\n"
	"	mov.u32 %r4, %tid.x;\n"
	"	mad.lo.s32 %r5, %r2, %r3, %r4;\n"
	"	setp.ge.u32 %p1, %r5, %r1;\n"
	"	@%p1 bra DONE;\n"
	"	cvta.to.global.u64 %rd2, %rd1;\n"
	"	mul.wide.u32 %rd3, %r5, 4;\n"
	"	add.s64 %rd4, %rd2, %rd3;\n"
	"	ld.global.u32 %r6, [%rd4];\n"
	"	{\n"
	"	.param .b32 param0;\n"
	"	st.param.b32 [param0], %r6;\n"
	"	.param .b32 retval0;\n"
	"	call.uni (retval0), add_k, (param0);\n"
	"	ld.param.b32 %r7, [retval0];\n"
	"	}\n"
	"	st.global.u32 [%rd4], %r7;\n"
	"DONE:\n"
	"	ret;\n"
	"}\n";

static const char ptx_b[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	".visible .func (.param .b32 func_retval0) add_k(.param .b32 x)\n"
	"{\n"
	"	.reg .b32 %r<3>;\n"
	"	ld.param.b32 %r1, [x];\n"
	"	add.s32 %r2, %r1, 42;\n"
	"	st.param.b32 [func_retval0], %r2;\n"
	"	ret;\n"
	"}\n";

static char err_log[8192], info_log[8192];

/* A log, each of its lines marked "info" (compile times differ between
 * runs: the comparison leaves info lines out). */
static void print_log(const char *test, const char *what, const char *log)
{
	const char *nl;

	do {
		nl = strchr(log, '\n');
		printf("info %s: %s: %.*s\n", test, what,
		       nl ? (int)(nl - log) : (int)strlen(log), log);
		log = nl ? nl + 1 : NULL;
	} while (log && *log);
}
static CUjit_option opts[5] = {
	CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
	CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
	CU_JIT_LOG_VERBOSE,
};
static void *vals[5];

static void reset_opts(void)
{
	err_log[0] = info_log[0] = '\0';
	vals[0] = err_log;
	vals[1] = (void *)(uintptr_t)sizeof(err_log);
	vals[2] = info_log;
	vals[3] = (void *)(uintptr_t)sizeof(info_log);
	vals[4] = (void *)(uintptr_t)1;
}

/* Loads the image, runs `kernel` over N ints i, prints what came out. */
static void run_image(const char *test, const void *img, size_t size,
		      const char *kernel)
{
	int host[N], bad = 0, mul = strcmp(kernel, "rdc_kernel") ? 1 : 2;
	unsigned n = N;
	CUdeviceptr d;
	CUmodule m;
	CUfunction f;
	void *params[2] = { &d, &n };

	printf("%s: elf %s\n", test,
	       size >= 4 && !memcmp(img, "\177ELF", 4) ? "yes" : "no");
	CK(cuModuleLoadData(&m, img));
	CK(cuModuleGetFunction(&f, m, kernel));
	for (int i = 0; i < N; i++)
		host[i] = i;
	CK(cuMemAlloc(&d, sizeof(host)));
	CK(cuMemcpyHtoD(d, host, sizeof(host)));
	CK(cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL,
			  params, NULL));
	CK(cuMemcpyDtoH(host, d, sizeof(host)));
	for (int i = 0; i < N; i++)
		bad += host[i] != (i + 42) * mul;
	printf("%s: %d of %d elements wrong, host[7] %d\n", test, bad, N,
	       host[7]);
	failures += bad != 0;
	CK(cuMemFree(d));
	CK(cuModuleUnload(m));
}

static void two_ptx(void)
{
	const char *test = "two-ptx";
	CUlinkState s;
	void *img;
	size_t size;

	reset_opts();
	CK(cuLinkCreate(5, opts, vals, &s));
	CK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)ptx_a, sizeof(ptx_a),
			 "a.ptx", 0, NULL, NULL));
	CK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)ptx_b, sizeof(ptx_b),
			 "b.ptx", 0, NULL, NULL));
	CK(cuLinkComplete(s, &img, &size));
	printf("info %s: %zu bytes\n", test, size);
	print_log(test, "info log", info_log);
	run_image(test, img, size, "link_add");
	CK(cuLinkDestroy(s));
}

static void undefined(void)
{
	const char *test = "undefined";
	const char *name = NULL;
	CUlinkState s;
	CUresult r;
	void *img;
	size_t size;

	reset_opts();
	CK(cuLinkCreate(4, opts, vals, &s));
	CK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)ptx_a, sizeof(ptx_a),
			 "a.ptx", 0, NULL, NULL));
	r = cuLinkComplete(s, &img, &size);
	cuGetErrorName(r, &name);
	printf("%s: %s, error log %s\n", test, name ? name : "?",
	       err_log[0] ? "written" : "empty");
	print_log(test, "error log", err_log);
	failures += r == CUDA_SUCCESS;
	CK(cuLinkDestroy(s));
}

static void rdc(const char *cubin, const char *devrt)
{
	const char *test = "rdc";
	CUlinkState s;
	void *img;
	size_t size;

	reset_opts();
	CK(cuLinkCreate(4, opts, vals, &s));
	CK(cuLinkAddFile(s, CU_JIT_INPUT_CUBIN, cubin, 0, NULL, NULL));
	CK(cuLinkAddData(s, CU_JIT_INPUT_PTX, (void *)ptx_b, sizeof(ptx_b),
			 "b.ptx", 0, NULL, NULL));
	CK(cuLinkAddFile(s, CU_JIT_INPUT_LIBRARY, devrt, 0, NULL, NULL));
	CK(cuLinkComplete(s, &img, &size));
	run_image(test, img, size, "rdc_kernel");
	CK(cuLinkDestroy(s));
}

int main(int argc, char **argv)
{
	const char *test = "init";
	CUcontext ctx;
	CUdevice dev;

	if (argc != 1 && argc != 3) {
		fprintf(stderr, "usage: %s [RDC.cubin LIBCUDADEVRT.a]\n",
			argv[0]);
		return 2;
	}
	{
		CUresult r = cuInit(0);

		if (r == CUDA_SUCCESS)
			r = cuDeviceGet(&dev, 0);
		if (r == CUDA_SUCCESS)
			r = cuDevicePrimaryCtxRetain(&ctx, dev);
		if (r == CUDA_SUCCESS)
			r = cuCtxSetCurrent(ctx);
		if (r != CUDA_SUCCESS) {
			printf("%s: error %d\n", test, (int)r);
			return 1;
		}
	}
	two_ptx();
	undefined();
	if (argc == 3)
		rdc(argv[1], argv[2]);
	cuDevicePrimaryCtxRelease(dev);
	printf("linktest: %d failures\n", failures);
	return failures ? 1 : 0;
}
