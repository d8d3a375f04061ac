// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The make-bench figures measured through a libcuda.so.1, as a driver-API
 * program sees them: run once on NVIDIA's and once on mdgpu's
 * (tests/gpu/libcuda-compare.sh), which prints the ratios.
 *
 *   libcuda-bench KERNELS.ptx SIDE
 *
 * Prints "SIDE figure value unit better" lines:
 *   sync_us        launch of an empty kernel + cuStreamSynchronize
 *   async_us       back-to-back empty launches, per launch
 *   h2d_gbs/d2h_gbs  64 MiB copies between cuMemHostAlloc memory and the
 *                  device, on a stream
 *   compute_ms     a fixed compute-bound kernel (~160 ms on an H100),
 *                  launch to completion
 * Each figure is the median of several batches.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { CUresult r_ = (x); if (r_) { \
	fprintf(stderr, "%s: %d\n", #x, (int)r_); exit(1); } } while (0)

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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

enum { BATCHES = 7 };

int main(int argc, char **argv)
{
	const size_t copy = 64u << 20;
	double v[BATCHES], t;
	CUfunction fe, ff;
	CUdeviceptr d, out;
	CUcontext ctx;
	CUmodule mod;
	CUstream s;
	void *host;
	const char *side;
	char *ptx;
	/* About 160 ms of FMAs on an H100: launch costs do not count. */
	int iters = 1 << 23;

	if (argc < 3)
		return 2;
	side = argv[2];
	ptx = slurp(argv[1]);
	if (!ptx)
		return 2;
	CK(cuInit(0));
	CK(cuDevicePrimaryCtxRetain(&ctx, 0));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&fe, mod, "empty"));
	CK(cuModuleGetFunction(&ff, mod, "fma_loop"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

	/* warm up */
	for (int i = 0; i < 1000; i++)
		CK(cuLaunchKernel(fe, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
	CK(cuStreamSynchronize(s));

	for (int b = 0; b < BATCHES; b++) {
		t = now_s();
		for (int i = 0; i < 2000; i++) {
			CK(cuLaunchKernel(fe, 1, 1, 1, 32, 1, 1, 0, s, NULL,
					  NULL));
			CK(cuStreamSynchronize(s));
		}
		v[b] = (now_s() - t) / 2000 * 1e6;
	}
	printf("%s sync_us %.3f us lower\n", side, median(v, BATCHES));

	for (int b = 0; b < BATCHES; b++) {
		t = now_s();
		for (int i = 0; i < 20000; i++)
			CK(cuLaunchKernel(fe, 1, 1, 1, 32, 1, 1, 0, s, NULL,
					  NULL));
		CK(cuStreamSynchronize(s));
		v[b] = (now_s() - t) / 20000 * 1e6;
	}
	printf("%s async_us %.3f us lower\n", side, median(v, BATCHES));

	CK(cuMemHostAlloc(&host, copy, 0));
	memset(host, 0x3c, copy);
	CK(cuMemAlloc(&d, copy));
	for (int dir = 0; dir < 2; dir++) {
		for (int b = 0; b < BATCHES; b++) {
			t = now_s();
			for (int i = 0; i < 8; i++) {
				if (dir == 0)
					CK(cuMemcpyHtoDAsync(d, host, copy, s));
				else
					CK(cuMemcpyDtoHAsync(host, d, copy, s));
			}
			CK(cuStreamSynchronize(s));
			v[b] = 8.0 * (double)copy / (now_s() - t) / 1e9;
		}
		printf("%s %s %.3f GB/s higher\n", side,
		       dir ? "d2h_gbs" : "h2d_gbs", median(v, BATCHES));
	}

	CK(cuMemAlloc(&out, 132 * 4 * 1024 * 4));
	for (int b = 0; b < BATCHES; b++) {
		void *args[] = { &out, &iters };

		t = now_s();
		CK(cuLaunchKernel(ff, 132 * 4, 1, 1, 1024, 1, 1, 0, s, args,
				  NULL));
		CK(cuStreamSynchronize(s));
		v[b] = (now_s() - t) * 1e3;
	}
	printf("%s compute_ms %.3f ms lower\n", side, median(v, BATCHES));

	CK(cuMemFree(d));
	CK(cuMemFree(out));
	CK(cuMemFreeHost(host));
	CK(cuStreamDestroy(s));
	CK(cuModuleUnload(mod));
	CK(cuDevicePrimaryCtxRelease(0));
	free(ptx);
	return 0;
}
