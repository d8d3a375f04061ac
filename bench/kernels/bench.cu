// SPDX-License-Identifier: GPL-2.0 OR MIT
//
// Kernels of the mdgpu benchmark suite (bench/).  Compiled to PTX for
// compute_90 (bench.ptx, checked in: `make bench-ptx` regenerates it where
// nvcc exists) and loaded with cuModuleLoadDataEx by the native target and
// with MDGPU_OP_MODULE_LOAD by the mdgpu target, so both run the very same
// code.

typedef unsigned int u32;
typedef unsigned long long u64;

// Launch overhead: does nothing.
extern "C" __global__ void bench_empty(void)
{
}

// Fixed amount of arithmetic per thread: `iters` dependent FMAs on four
// independent chains.  The result is stored only when it equals a value it
// never takes, so nothing is written, yet the compiler cannot drop the loop.
// Unlike a %globaltimer spin, the work does not shrink when the GPU
// time-slices the kernel away, so completed kernels measure GPU time fairly.
extern "C" __global__ void bench_work(u32 iters, float *sink)
{
	float a = threadIdx.x * 1e-7f, b = blockIdx.x * 1e-7f;
	float c = a + 0.5f, d = b + 0.25f;

	for (u32 i = 0; i < iters; i++) {
		a = fmaf(a, 0.999999f, 1e-7f);
		b = fmaf(b, 0.999998f, 2e-7f);
		c = fmaf(c, 0.999997f, 3e-7f);
		d = fmaf(d, 0.999996f, 4e-7f);
	}
	if (a + b + c + d == -1.0f)
		sink[threadIdx.x] = a;
}

// Occupies one thread for `ns` nanoseconds of the GPU's global timer.
extern "C" __global__ void bench_spin_ns(u64 ns)
{
	u64 start, now;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	} while (now - start < ns);
}
