// SPDX-License-Identifier: GPL-2.0 OR MIT
// The cubin test's kernel (test_cuda_backend.c, test_cubin): the same
// function as the test's hand-written PTX, p[i] = p[i] * k + i.
extern "C" __global__ void scale_add(unsigned int *p, unsigned long long n,
				     unsigned int k)
{
	unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x +
			       threadIdx.x;

	if (i < n)
		p[i] = p[i] * k + (unsigned int)i;
}
