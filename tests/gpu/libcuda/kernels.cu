// SPDX-License-Identifier: GPL-2.0 OR MIT
// Kernels of tests/gpu/libcuda/drvtest.c, compiled to PTX for sm_90 by
// tests/gpu/libcuda-compare.sh (nvcc -ptx) and loaded with
// cuModuleLoadData: the same image natively and through mdgpu.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

extern "C" __global__ void vadd(const float *a, const float *b, float *c,
				int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = a * x[i] + y[i];
}

struct odd {
	char c;
	double d;
	int x;
	short s[3];
};

// Parameters of mixed sizes and alignments, a struct among them.
extern "C" __global__ void mixed(char c, struct odd o, long long l, float f,
				 long long *out)
{
	out[0] = c;
	out[1] = o.c;
	out[2] = (long long)(o.d * 1000.0);
	out[3] = o.x;
	out[4] = o.s[0] + 10 * o.s[1] + 100 * o.s[2];
	out[5] = l;
	out[6] = (long long)(f * 1000.0f);
}

__device__ int counter;
__device__ float table[256];

extern "C" __global__ void bump(int by)
{
	atomicAdd(&counter, by);
	table[threadIdx.x] = (float)threadIdx.x * 0.5f;
}

// Each block writes its rank in its cluster.
extern "C" __global__ void cluster_rank(unsigned *out)
{
	cg::cluster_group cl = cg::this_cluster();

	if (threadIdx.x == 0)
		out[blockIdx.x] = cl.block_rank() + 100 * cl.num_blocks();
}

// A grid-wide barrier: only correct in a cooperative launch.
extern "C" __global__ void coop_sum(int *buf, int *out)
{
	cg::grid_group g = cg::this_grid();
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	buf[i] = i;
	g.sync();
	if (i == 0) {
		long long s = 0;

		for (unsigned k = 0; k < g.size(); k++)
			s += buf[k];
		*out = (int)(s % 1000003);
	}
}

extern "C" __global__ void fault(int *p)
{
	p[(1ULL << 40) / sizeof(int)] = 1;
}

extern "C" __global__ void empty(void)
{
}

// Fixed work: iters dependent FMAs per thread.
extern "C" __global__ void fma_loop(float *out, int iters)
{
	float x = threadIdx.x * 1e-3f, y = 1.0001f;

	for (int i = 0; i < iters; i++)
		x = fmaf(x, y, 1e-7f);
	out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

// Parameters beyond the classic 4 KiB limit (CUDA 12.1 and later: up to
// 32764 bytes): a 32000-byte struct and a pointer, summed by one thread.
struct big {
	unsigned char v[32000];
	unsigned long long tag;
};

extern "C" __global__ void big_params(struct big b, unsigned long long *out)
{
	unsigned long long sum = 0;

	for (int i = 0; i < 32000; i++)
		sum += (unsigned long long)b.v[i] * (unsigned long long)(i + 1);
	out[0] = sum;
	out[1] = b.tag;
}
