// SPDX-License-Identifier: GPL-2.0 OR MIT
//
// mdgpud builtin kernels (enum mdgpu_builtin in include/uapi/mdgpu.h).
//
// Compiled to PTX for compute_90 (builtin.ptx, checked in) and embedded in
// mdgpud-worker, which JIT-loads it with cuModuleLoadDataEx in every vGPU
// context.  Every kernel uses a grid-stride loop with 64-bit indices, so the
// worker may pick any grid size.  Regenerate with `make -C ... kernels`
// (rule in userspace-daemon/daemon.mk) when nvcc exists.

typedef unsigned int u32;
typedef unsigned long long u64;

extern "C" __global__ void mdgpud_fill_u32(u32 *dst, u64 count, u32 value)
{
	u64 stride = (u64)gridDim.x * blockDim.x;

	for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count;
	     i += stride)
		dst[i] = value;
}

extern "C" __global__ void mdgpud_add_u32(u32 *dst, const u32 *a,
					  const u32 *b, u64 count)
{
	u64 stride = (u64)gridDim.x * blockDim.x;

	for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count;
	     i += stride)
		dst[i] = a[i] + b[i];
}

// sum over i of (u64)w[i] * (2*i + 1), modulo 2^64, added into *out (which
// the caller zeroes first).  Addition modulo 2^64 is associative and
// commutative, so the order of the reduction does not change the result.
extern "C" __global__ void mdgpud_checksum_u32(const u32 *w, u64 count,
					       u64 *out)
{
	__shared__ u64 warp_sum[32];
	u64 stride = (u64)gridDim.x * blockDim.x;
	u64 acc = 0;

	for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count;
	     i += stride)
		acc += (u64)w[i] * (2 * i + 1);

	for (int off = 16; off > 0; off >>= 1)
		acc += __shfl_down_sync(0xffffffffu, acc, off);
	if ((threadIdx.x & 31) == 0)
		warp_sum[threadIdx.x >> 5] = acc;
	__syncthreads();
	if (threadIdx.x < 32) {
		u32 nwarps = (blockDim.x + 31) >> 5;

		acc = threadIdx.x < nwarps ? warp_sum[threadIdx.x] : 0;
		for (int off = 16; off > 0; off >>= 1)
			acc += __shfl_down_sync(0xffffffffu, acc, off);
		if (threadIdx.x == 0)
			atomicAdd(out, acc);
	}
}

static __device__ __forceinline__ u64 mdgpud_globaltimer_ns(void)
{
	u64 t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// Occupies one thread for `ns` nanoseconds of wall time on the GPU's global
// timer (launched as one block of one thread).
extern "C" __global__ void mdgpud_spin_ns(u64 ns)
{
	u64 start = mdgpud_globaltimer_ns();

	while (mdgpud_globaltimer_ns() - start < ns)
		;
}
