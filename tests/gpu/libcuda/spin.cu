// SPDX-License-Identifier: GPL-2.0 OR MIT
// The kernel of tests/gpu/libcuda/spin_tenant.c, compiled to PTX for sm_90
// by tests/gpu/weights-drvapi.sh (nvcc -ptx) and loaded with
// cuModuleLoadData: the same image natively and through mdgpu.
//
// Its name and parameter layout (one u64) are those of the daemon's
// builtin spin kernel, so that CI's fake libcuda, which runs kernels it
// knows by name and layout as C, runs this one too (as a busy wait); it is
// a kernel of the program's own module all the same, not the builtin.

// Occupies one thread for `ns` nanoseconds of the GPU's global timer
// (launched as one block of one thread).
extern "C" __global__ void mdgpud_spin_ns(unsigned long long ns)
{
	unsigned long long start, now;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	while (now - start < ns);
}
