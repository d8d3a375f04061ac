// SPDX-License-Identifier: GPL-2.0 OR MIT
// Pinned host memory that a kernel reaches through the pointer the
// program holds (unified addressing), as runtime programs commonly pass
// cudaHostAlloc'd and cudaMallocHost'd buffers straight to kernels.
// Prints, per allocation kind, what the runtime reports of the pointer
// and how many words the kernel got wrong (libcuda-compare.sh runs it on
// NVIDIA's libcuda.so.1 and on mdgpu's and compares the lines).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void scale_add(unsigned *p, unsigned long long n, unsigned k)
{
	unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x +
			       threadIdx.x;

	if (i < n)
		p[i] = p[i] * k + (unsigned)i;
}

static int run(const char *what, unsigned *h, size_t n)
{
	cudaPointerAttributes a;
	cudaError_t e;
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		h[i] = (unsigned)(i * 13 + 5);
	/* What the runtime leaves unfilled reads as 0x5a5a5a5a. */
	memset(&a, 0x5a, sizeof(a));
	e = cudaPointerGetAttributes(&a, h);
	printf("%s: attributes %s, type %d, device pointer %s\n", what,
	       cudaGetErrorName(e), (int)a.type,
	       a.devicePointer == h ? "is the host pointer" : "differs");
	scale_add<<<(unsigned)((n + 255) / 256), 256>>>(h, n, 3);
	e = cudaGetLastError();
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	for (size_t i = 0; i < n; i++)
		bad += h[i] != (unsigned)(i * 13 + 5) * 3 + (unsigned)i;
	printf("%s: kernel %s, %zu of %zu words wrong\n", what,
	       cudaGetErrorName(e), bad, n);
	return e != cudaSuccess || bad;
}

int main(void)
{
	const size_t n = 1 << 20;
	unsigned *h;
	int uva = 0, fails = 0;

	cudaDeviceGetAttribute(&uva, cudaDevAttrUnifiedAddressing, 0);
	printf("unified addressing %d\n", uva);
	if (cudaHostAlloc(&h, n * sizeof(*h), cudaHostAllocMapped) ==
	    cudaSuccess) {
		fails += run("cudaHostAlloc mapped", h, n);
		cudaFreeHost(h);
	}
	if (cudaHostAlloc(&h, n * sizeof(*h), cudaHostAllocDefault) ==
	    cudaSuccess) {
		fails += run("cudaHostAlloc default", h, n);
		cudaFreeHost(h);
	}
	if (cudaMallocHost(&h, n * sizeof(*h)) == cudaSuccess) {
		fails += run("cudaMallocHost", h, n);
		cudaFreeHost(h);
	}
	printf("%d failed\n", fails);
	return fails != 0;
}
