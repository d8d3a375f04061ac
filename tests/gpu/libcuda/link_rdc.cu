// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A relocatable kernel for tests/gpu/libcuda/linktest.c: nvcc -rdc=true
 * -cubin makes a cubin whose add_k is left to the device linker (the
 * PTX input that defines it), linked with libcudadevrt.a as nvcc -dlink
 * links device code.
 */
extern "C" __device__ int add_k(int x);
extern "C" __global__ void rdc_kernel(int *p, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = add_k(p[i]) * 2;
}
