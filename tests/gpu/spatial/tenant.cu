// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A tenant of tests/gpu/spatial.sh, run natively and on mdgpu's
 * libcuda.so.1 unchanged (NVIDIA's runtime reaches the driver through it):
 *
 *   tenant spin BLOCKS SECONDS GOFILE   1 ms kernels of BLOCKS x 1024
 *       threads (66 blocks: half of the H100's 132 SMs, one block each)
 *       for SECONDS once GOFILE exists; prints "kernels N" and "seconds S"
 *   tenant hold FILE SECONDS            allocates a buffer, fills it,
 *       writes its device address to FILE, then checks the buffer every
 *       10 ms for SECONDS; prints "checks N bad M error NAME"
 *   tenant peek FILE                    reads the address in FILE from a
 *       kernel (a forged pointer); prints "peek NAME"
 *   tenant fault                        a kernel writing to 0x1000;
 *       prints "fault NAME"
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>
#include <cuda_runtime.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

__global__ void spin(long long cycles, float *out)
{
	long long t0 = clock64();
	float x = (float)threadIdx.x;

	while (clock64() - t0 < cycles)
		x = x * 0.999f + 1.0f;
	if (x == -1.0f)
		out[0] = x;
}

__global__ void fill(uint32_t *p, size_t n, uint32_t v)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = v ^ (uint32_t)i;
}

__global__ void check(const uint32_t *p, size_t n, uint32_t v,
		      unsigned long long *bad)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		if (p[i] != (v ^ (uint32_t)i))
			atomicAdd(bad, 1ULL);
}

__global__ void peek(const uint32_t *src, uint32_t *dst) { dst[0] = src[0]; }
__global__ void poke(uint32_t *dst) { dst[0] = 0xdeadbeef; }

static int do_spin(int blocks, double secs, const char *go)
{
	float *out;
	int clock_khz = 0;
	long long n = 0;
	double t0, t1;

	cudaMalloc(&out, 4);
	cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
	spin<<<blocks, 1024>>>(1000, out);
	cudaDeviceSynchronize();
	printf("ready\n");
	fflush(stdout);
	while (access(go, F_OK))
		usleep(1000);
	t0 = now();
	for (t1 = t0; t1 - t0 < secs; t1 = now()) {
		for (int i = 0; i < 16; i++)	/* 1 ms each */
			spin<<<blocks, 1024>>>((long long)clock_khz, out);
		if (cudaDeviceSynchronize() != cudaSuccess)
			break;
		n += 16;
	}
	printf("kernels %lld\nseconds %.3f\nerror %s\n", n, t1 - t0,
	       cudaGetErrorName(cudaGetLastError()));
	return 0;
}

static int do_hold(const char *file, double secs)
{
	const size_t n = 1 << 20;
	unsigned long long *bad, hbad = 0;
	long long checks = 0;
	cudaError_t e = cudaSuccess;
	uint32_t *p;
	FILE *f;

	cudaMalloc(&p, n * 4);
	cudaMalloc(&bad, 8);
	fill<<<64, 256>>>(p, n, 0x5a5a5a5a);
	cudaDeviceSynchronize();
	f = fopen(file, "w");
	fprintf(f, "%p\n", (void *)p);
	fclose(f);
	for (double end = now() + secs; now() < end; usleep(10000)) {
		cudaMemset(bad, 0, 8);
		check<<<64, 256>>>(p, n, 0x5a5a5a5a, bad);
		e = cudaMemcpy(&hbad, bad, 8, cudaMemcpyDeviceToHost);
		if (e != cudaSuccess || hbad)
			break;
		checks++;
	}
	printf("checks %lld bad %llu error %s\n", checks, hbad,
	       cudaGetErrorName(e));
	return 0;
}

static int do_peek(const char *file)
{
	void *q = NULL;
	uint32_t *dst, h = 0;
	FILE *f = fopen(file, "r");

	if (!f || fscanf(f, "%p", &q) != 1)
		return 2;
	fclose(f);
	cudaMalloc(&dst, 4);
	peek<<<1, 1>>>((const uint32_t *)q, dst);
	cudaError_t e = cudaDeviceSynchronize();
	cudaMemcpy(&h, dst, 4, cudaMemcpyDeviceToHost);
	printf("peek %s value %#x\n", cudaGetErrorName(e), h);
	return 0;
}

static int do_fault(void)
{
	poke<<<1, 1>>>((uint32_t *)0x1000);
	printf("fault %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "spin"))
		return do_spin(atoi(argv[2]), atof(argv[3]), argv[4]);
	if (argc >= 4 && !strcmp(argv[1], "hold"))
		return do_hold(argv[2], atof(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "peek"))
		return do_peek(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "fault"))
		return do_fault();
	fprintf(stderr, "usage: see tests/gpu/spatial/tenant.cu\n");
	return 2;
}
