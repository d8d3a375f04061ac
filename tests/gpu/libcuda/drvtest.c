// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A driver-API program as an application author writes it, run on the GPU
 * machine twice by tests/gpu/libcuda-compare.sh: on NVIDIA's libcuda.so.1
 * and on mdgpu's.  Every line it prints is either "info ..." (allowed to
 * differ: names, sizes of the vGPU) or "<test>: <result>", which must be
 * the same in both runs.
 *
 *   drvtest KERNELS.ptx          every test
 *   drvtest KERNELS.ptx fault    an out-of-bounds kernel: the sticky error
 */
#include <cuda.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static CUmodule mod;
static char *ptx;

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ULL;

	while (n--)
		h = (h ^ *b++) * 1099511628211ULL;
	return h;
}

static void t_device(void)
{
	const char *test = "device";
	int v, cc[2];
	CUdevice d;
	char name[256];
	size_t total;
	static const CUdevice_attribute same[] = {
		CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
		CU_DEVICE_ATTRIBUTE_WARP_SIZE,
		CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
		CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
		CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
		CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
		CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
		CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
		CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH,
		CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH,
		CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
	};

	CK(cuDeviceGet(&d, 0));
	CK(cuDeviceGetName(name, sizeof(name), d));
	CK(cuDeviceTotalMem(&total, d));
	printf("info name %s, %zu MiB\n", name, total >> 20);
	CK(cuDeviceGetAttribute(&cc[0],
			CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d));
	CK(cuDeviceGetAttribute(&cc[1],
			CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d));
	printf("%s: cc %d.%d\n", test, cc[0], cc[1]);
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		CK(cuDeviceGetAttribute(&v, same[i], d));
		printf("%s: attr %d = %d\n", test, (int)same[i], v);
	}
}

static void t_memory(void)
{
	const char *test = "memory";
	enum { N = 1 << 20 };
	CUdeviceptr a, b;
	uint32_t *h = malloc(N * 4), *g = malloc(N * 4);
	uint16_t h16[64];
	size_t fr, tot;

	CK(cuMemAlloc(&a, N * 4));
	CK(cuMemAlloc(&b, N * 4));
	for (uint32_t i = 0; i < N; i++)
		h[i] = i * 2654435761u;
	CK(cuMemcpyHtoD(a, h, N * 4));
	CK(cuMemcpyDtoD(b, a, N * 4));
	CK(cuMemsetD32(b + 64, 0xdeadbeef, 16));
	CK(cuMemsetD16(b + 4096, 0xabcd, 33));
	CK(cuMemsetD8(b + 8191, 0x5a, 3));
	CK(cuMemcpyDtoH(g, b, N * 4));
	printf("%s: round trip %016" PRIx64 "\n", test, fnv(g, N * 4));
	CK(cuMemcpyDtoH(h16, b + 4096, sizeof(h16)));
	printf("%s: d16 %016" PRIx64 "\n", test, fnv(h16, sizeof(h16)));
	CK(cuMemGetInfo(&fr, &tot));
	printf("info free %zu MiB of %zu MiB\n", fr >> 20, tot >> 20);
	CK(cuMemFree(a));
	CK(cuMemFree(b));
	free(h);
	free(g);
}

static void t_2d(void)
{
	const char *test = "2d";
	enum { W = 100, H = 37 };
	unsigned char host[H][W], back[H][W];
	CUDA_MEMCPY2D c;
	CUdeviceptr d;
	size_t pitch;

	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			host[y][x] = (unsigned char)(x * 7 + y * 13);
	CK(cuMemAllocPitch(&d, &pitch, W, H, 4));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = host;
	c.srcPitch = W;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = d;
	c.dstPitch = pitch;
	c.WidthInBytes = W;
	c.Height = H;
	CK(cuMemcpy2D(&c));
	CK(cuMemsetD2D8(d + 10, pitch, 0xee, 5, 3));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = d;
	c.srcPitch = pitch;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = back;
	c.dstPitch = W;
	c.WidthInBytes = W;
	c.Height = H;
	CK(cuMemcpy2D(&c));
	printf("%s: %016" PRIx64 "\n", test, fnv(back, sizeof(back)));
	CK(cuMemFree(d));
}

static void t_streams(void)
{
	const char *test = "streams";
	enum { N = 4 << 20 };
	CUstream s1, s2;
	CUevent e0, e1, e2;
	CUdeviceptr d1, d2;
	unsigned char *p1, *p2;
	int lo, hi;
	float ms;

	CK(cuCtxGetStreamPriorityRange(&lo, &hi));
	printf("%s: priorities %d %d\n", test, lo, hi);
	CK(cuStreamCreateWithPriority(&s1, CU_STREAM_NON_BLOCKING, hi));
	CK(cuStreamCreate(&s2, 0));
	CK(cuEventCreate(&e0, 0));
	CK(cuEventCreate(&e1, 0));
	CK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
	CK(cuMemHostAlloc((void **)&p1, N, 0));
	CK(cuMemAllocHost((void **)&p2, N));
	CK(cuMemAlloc(&d1, N));
	CK(cuMemAlloc(&d2, N));
	for (int i = 0; i < N; i++)
		p1[i] = (unsigned char)(i * 31);
	CK(cuEventRecord(e0, s1));
	CK(cuMemcpyHtoDAsync(d1, p1, N, s1));
	CK(cuMemsetD8Async(d1, 7, 1000, s1));
	CK(cuEventRecord(e1, s1));
	CK(cuEventRecord(e2, s1));
	/* s2 copies what s1 wrote, after s1's event. */
	CK(cuStreamWaitEvent(s2, e2, 0));
	CK(cuMemcpyDtoDAsync(d2, d1, N, s2));
	CK(cuMemcpyDtoHAsync(p2, d2, N, s2));
	CK(cuStreamSynchronize(s2));
	printf("%s: chained %016" PRIx64 "\n", test, fnv(p2, N));
	CK(cuEventSynchronize(e1));
	CK(cuEventQuery(e1));
	CK(cuStreamQuery(s1));
	CK(cuEventElapsedTime(&ms, e0, e1));
	printf("%s: elapsed %s\n", test, ms >= 0 && ms < 10000 ? "ok" : "bad");
	printf("%s: no timing %d\n", test, (int)cuEventElapsedTime(&ms, e0, e2));
	CK(cuStreamDestroy(s1));
	CK(cuStreamDestroy(s2));
	CK(cuEventDestroy(e0));
	CK(cuEventDestroy(e1));
	CK(cuEventDestroy(e2));
	CK(cuMemFreeHost(p1));
	CK(cuMemFreeHost(p2));
	CK(cuMemFree(d1));
	CK(cuMemFree(d2));
}

static void t_kernels(void)
{
	const char *test = "kernels";
	enum { N = 100000 };
	CUfunction fv, fs, fm, fb;
	CUdeviceptr a, b, c, out, gc, gt;
	size_t gcs, gts;
	float *h = malloc(N * sizeof(float)), *r = malloc(N * sizeof(float));
	long long res[7];
	float tab[256];
	int n = N, cnt, by = 3, nregs;
	float alpha = 2.5f;
	struct odd { char c; double d; int x; short s[3]; } o = {
		'q', 3.25, -17, { 1, 2, 3 } };
	char ch = 'z';
	long long l = 1LL << 40;
	float f = 0.125f;
	unsigned char buf[64];
	size_t blen = sizeof(buf);

	CK(cuModuleGetFunction(&fv, mod, "vadd"));
	CK(cuModuleGetFunction(&fs, mod, "saxpy"));
	CK(cuModuleGetFunction(&fm, mod, "mixed"));
	CK(cuModuleGetFunction(&fb, mod, "bump"));
	for (int i = 0; i < N; i++)
		h[i] = (float)i * 0.25f;
	CK(cuMemAlloc(&a, N * 4));
	CK(cuMemAlloc(&b, N * 4));
	CK(cuMemAlloc(&c, N * 4));
	CK(cuMemAlloc(&out, sizeof(res)));
	CK(cuMemcpyHtoD(a, h, N * 4));
	CK(cuMemcpyHtoD(b, h, N * 4));
	{
		void *args[] = { &a, &b, &c, &n };

		CK(cuLaunchKernel(fv, (N + 255) / 256, 1, 1, 256, 1, 1, 0,
				  NULL, args, NULL));
	}
	{
		/* saxpy through `extra`: the caller packs the buffer. */
		memset(buf, 0, sizeof(buf));
		memcpy(buf, &alpha, 4);
		memcpy(buf + 8, &a, 8);
		memcpy(buf + 16, &c, 8);
		memcpy(buf + 24, &n, 4);
		blen = 28;
		void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf,
				  CU_LAUNCH_PARAM_BUFFER_SIZE, &blen,
				  CU_LAUNCH_PARAM_END };

		CK(cuLaunchKernel(fs, (N + 255) / 256, 1, 1, 256, 1, 1, 0,
				  NULL, NULL, extra));
	}
	CK(cuMemcpyDtoH(r, c, N * 4));
	printf("%s: vadd+saxpy %016" PRIx64 "\n", test, fnv(r, N * 4));
	{
		void *args[] = { &ch, &o, &l, &f, &out };

		CK(cuLaunchKernel(fm, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	}
	CK(cuMemcpyDtoH(res, out, sizeof(res)));
	printf("%s: mixed %lld %lld %lld %lld %lld %lld %lld\n", test, res[0],
	       res[1], res[2], res[3], res[4], res[5], res[6]);
	CK(cuModuleGetGlobal(&gc, &gcs, mod, "counter"));
	CK(cuModuleGetGlobal(&gt, &gts, mod, "table"));
	CK(cuMemsetD32(gc, 5, 1));
	{
		void *args[] = { &by };

		CK(cuLaunchKernel(fb, 2, 1, 1, 256, 1, 1, 0, NULL, args,
				  NULL));
	}
	CK(cuMemcpyDtoH(&cnt, gc, 4));
	CK(cuMemcpyDtoH(tab, gt, sizeof(tab)));
	printf("%s: globals %zu %zu counter %d table %016" PRIx64 "\n", test,
	       gcs, gts, cnt, fnv(tab, sizeof(tab)));
	CK(cuFuncGetAttribute(&nregs, CU_FUNC_ATTRIBUTE_NUM_REGS, fm));
	printf("%s: mixed regs %d\n", test, nregs);
	CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&cnt, fv, 256, 0));
	printf("%s: occupancy vadd 256 = %d\n", test, cnt);
	CK(cuMemFree(a));
	CK(cuMemFree(b));
	CK(cuMemFree(c));
	CK(cuMemFree(out));
	free(h);
	free(r);
}

static void t_launch_ex(void)
{
	const char *test = "launch_ex";
	CUfunction fc, fg;
	CUdeviceptr out, buf, sum;
	unsigned ranks[16];
	CUlaunchConfig cfg;
	CUlaunchAttribute at[1];
	int s, nsm, per, blocks;

	CK(cuModuleGetFunction(&fc, mod, "cluster_rank"));
	CK(cuMemAlloc(&out, sizeof(ranks)));
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = 16;
	cfg.gridDimY = cfg.gridDimZ = 1;
	cfg.blockDimX = 32;
	cfg.blockDimY = cfg.blockDimZ = 1;
	at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	at[0].value.clusterDim.x = 4;
	at[0].value.clusterDim.y = 1;
	at[0].value.clusterDim.z = 1;
	cfg.attrs = at;
	cfg.numAttrs = 1;
	{
		void *args[] = { &out };

		CK(cuLaunchKernelEx(&cfg, fc, args, NULL));
	}
	CK(cuMemcpyDtoH(ranks, out, sizeof(ranks)));
	printf("%s: cluster %016" PRIx64 "\n", test, fnv(ranks, sizeof(ranks)));

	CK(cuModuleGetFunction(&fg, mod, "coop_sum"));
	CK(cuDeviceGetAttribute(&nsm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
				0));
	CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per, fg, 128, 0));
	blocks = nsm * (per < 2 ? per : 2);
	CK(cuMemAlloc(&buf, (size_t)blocks * 128 * 4));
	CK(cuMemAlloc(&sum, 4));
	{
		void *args[] = { &buf, &sum };

		CK(cuLaunchCooperativeKernel(fg, blocks, 1, 1, 128, 1, 1, 0,
					     NULL, args));
	}
	CK(cuMemcpyDtoH(&s, sum, 4));
	{
		long long n = (long long)blocks * 128;

		printf("%s: coop %s\n", test,
		       s == (int)((n * (n - 1) / 2) % 1000003) ? "ok" : "bad");
	}
	CK(cuMemFree(out));
	CK(cuMemFree(buf));
	CK(cuMemFree(sum));
}

/*
 * Kernel parameters beyond 4 KiB (CUDA 12.1+: 32764 bytes): a 32000-byte
 * struct through kernelParams and the same bytes through `extra`; then
 * what a 32765-byte `extra` buffer gets (the driver's own answer,
 * compared line by line with mdgpu's).
 */
static void t_big_params(void)
{
	const char *test = "big-params";
	struct big { unsigned char v[32000]; unsigned long long tag; };
	struct big *b = malloc(sizeof(*b));
	unsigned char *buf = calloc(1, 32768);
	unsigned long long res[2];
	size_t blen;
	CUfunction f;
	CUdeviceptr out;
	CUresult r;

	CK(cuModuleGetFunction(&f, mod, "big_params"));
	CK(cuMemAlloc(&out, sizeof(res)));
	for (int i = 0; i < 32000; i++)
		b->v[i] = (unsigned char)(i * 7 + 3);
	b->tag = 0x0123456789abcdefULL;
	{
		void *args[] = { b, &out };

		CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	}
	CK(cuMemcpyDtoH(res, out, sizeof(res)));
	printf("%s: kernelParams sum %llu tag %llx\n", test, res[0], res[1]);
	memcpy(buf, b, sizeof(*b));
	memcpy(buf + sizeof(*b), &out, sizeof(out));
	blen = sizeof(*b) + sizeof(out);
	b->tag = 0;
	{
		void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf,
				  CU_LAUNCH_PARAM_BUFFER_SIZE, &blen,
				  CU_LAUNCH_PARAM_END };

		CK(cuMemsetD8(out, 0, sizeof(res)));
		CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
		CK(cuMemcpyDtoH(res, out, sizeof(res)));
		printf("%s: extra %zu bytes sum %llu tag %llx\n", test, blen,
		       res[0], res[1]);
		blen = 32765;
		r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra);
		printf("%s: extra 32765 bytes -> %d\n", test, (int)r);
	}
	CK(cuCtxSynchronize());
	CK(cuMemFree(out));
	free(buf);
	free(b);
}

static void t_fault(void)
{
	const char *test = "fault";
	CUfunction ff;
	CUdeviceptr p;
	CUresult r;

	CK(cuModuleGetFunction(&ff, mod, "fault"));
	CK(cuMemAlloc(&p, 4096));
	{
		void *args[] = { &p };

		CK(cuLaunchKernel(ff, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	}
	r = cuCtxSynchronize();
	printf("%s: sync %d\n", test, (int)r);
	/* The context keeps the error (sticky). */
	printf("%s: later alloc %d\n", test, (int)cuMemAlloc(&p, 4096));
	printf("%s: later sync %d\n", test, (int)cuCtxSynchronize());
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = calloc(1, (size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	return b;
}

int main(int argc, char **argv)
{
	const char *test = "init";
	CUcontext ctx;
	CUdevice d;

	if (argc < 2) {
		fprintf(stderr, "usage: %s KERNELS.ptx [fault]\n", argv[0]);
		return 2;
	}
	ptx = slurp(argv[1]);
	if (!ptx) {
		perror(argv[1]);
		return 2;
	}
	if (cuInit(0) || cuDeviceGet(&d, 0) ||
	    cuDevicePrimaryCtxRetain(&ctx, d) || cuCtxSetCurrent(ctx) ||
	    cuModuleLoadData(&mod, ptx)) {
		printf("%s: failed\n", test);
		return 1;
	}
	if (argc > 2 && !strcmp(argv[2], "fault")) {
		t_fault();
		return 0;
	}
	t_device();
	t_memory();
	t_2d();
	t_streams();
	t_kernels();
	t_launch_ex();
	t_big_params();
	cuModuleUnload(mod);
	cuDevicePrimaryCtxRelease(d);
	printf("info %d failures\n", failures);
	return failures ? 1 : 0;
}
