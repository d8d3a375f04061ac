// SPDX-License-Identifier: GPL-2.0 OR MIT
// cudaHostRegister of shared memory, as NCCL's shared-memory transport
// does it (a file in /dev/shm kept open, cudaHostRegisterPortable |
// cudaHostRegisterMapped, cudaHostGetDevicePointer) and of a memfd: a
// kernel writes through the device pointer, copies run both ways, a
// memset takes the device pointer; then a private (malloc) buffer
// registered with cudaHostRegisterDefault and copied.  Prints one line
// per step with the error names and the words wrong, and whether the
// device pointer is the host pointer (libcuda-compare.sh compares the
// lines of NVIDIA's libcuda.so.1 and mdgpu's).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void scale_add(unsigned *p, unsigned long long n, unsigned k)
{
	unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x +
			       threadIdx.x;

	if (i < n)
		p[i] = p[i] * k + (unsigned)i;
}

static const size_t n = 1 << 20;

static size_t wrong(const unsigned *h, unsigned (*want)(size_t))
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		bad += h[i] != want(i);
	return bad;
}

static unsigned filled(size_t i) { return (unsigned)(i * 13 + 5); }
static unsigned scaled(size_t i) { return filled(i) * 3 + (unsigned)i; }
static unsigned memset_v(size_t i) { (void)i; return 0x5a5a5a5a; }

static int shared(const char *what, int fd)
{
	const size_t bytes = n * sizeof(unsigned);
	unsigned *h, *d = nullptr, *back;
	void *dp = nullptr;
	cudaError_t e;
	int fails = 0;

	if (ftruncate(fd, (off_t)bytes)) {
		printf("%s: ftruncate failed\n", what);
		return 1;
	}
	h = (unsigned *)mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
			     MAP_SHARED, fd, 0);
	back = (unsigned *)malloc(bytes);
	if (h == MAP_FAILED || !back)
		return 1;
	for (size_t i = 0; i < n; i++)
		h[i] = filled(i);
	e = cudaHostRegister(h, bytes, cudaHostRegisterPortable |
				       cudaHostRegisterMapped);
	printf("%s: register %s\n", what, cudaGetErrorName(e));
	if (e != cudaSuccess)
		return 1;
	e = cudaHostGetDevicePointer(&dp, h, 0);
	printf("%s: device pointer %s (%s)\n", what, cudaGetErrorName(e),
	       dp == (void *)h ? "the host pointer" : "another address");
	scale_add<<<(unsigned)(n / 256), 256>>>((unsigned *)dp, n, 3);
	e = cudaGetLastError();
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	printf("%s: kernel %s, %zu words wrong\n", what, cudaGetErrorName(e),
	       wrong(h, scaled));
	fails += e != cudaSuccess;
	cudaMalloc(&d, bytes);
	e = cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
	if (e == cudaSuccess)
		e = cudaMemcpy(back, d, bytes, cudaMemcpyDeviceToHost);
	printf("%s: copies to and from the device %s, %zu words wrong\n",
	       what, cudaGetErrorName(e), wrong(back, scaled));
	fails += e != cudaSuccess;
	e = cudaMemset(dp, 0x5a, bytes);
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	printf("%s: memset through the device pointer %s, %zu words wrong\n",
	       what, cudaGetErrorName(e), wrong(h, memset_v));
	fails += e != cudaSuccess;
	e = cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
	printf("%s: copy into it %s, %zu words wrong\n", what,
	       cudaGetErrorName(e), wrong(h, scaled));
	fails += e != cudaSuccess;
	e = cudaHostUnregister(h);
	printf("%s: unregister %s\n", what, cudaGetErrorName(e));
	cudaFree(d);
	munmap(h, bytes);
	free(back);
	return fails + (e != cudaSuccess);
}

int main(void)
{
	const size_t bytes = n * sizeof(unsigned);
	char path[] = "/dev/shm/mdgpu-host-register-XXXXXX";
	unsigned *p, *d = nullptr;
	int fd, fails = 0;
	cudaError_t e;

	cudaFree(nullptr);
	fd = mkstemp(path);
	if (fd >= 0) {
		fails += shared("/dev/shm file", fd);
		unlink(path);
		close(fd);
	} else {
		printf("/dev/shm file: mkstemp failed\n");
		fails++;
	}
	fd = memfd_create("host-register", MFD_CLOEXEC);
	fails += fd < 0 || shared("memfd", fd);
	close(fd);
	/* Private memory: registered and copied; the device reads it. */
	p = (unsigned *)malloc(bytes);
	for (size_t i = 0; i < n; i++)
		p[i] = filled(i);
	e = cudaHostRegister(p, bytes, cudaHostRegisterDefault);
	printf("malloc: register %s\n", cudaGetErrorName(e));
	cudaMalloc(&d, bytes);
	if (e == cudaSuccess)
		e = cudaMemcpy(d, p, bytes, cudaMemcpyHostToDevice);
	if (e == cudaSuccess)
		scale_add<<<(unsigned)(n / 256), 256>>>(d, n, 3);
	if (e == cudaSuccess)
		e = cudaMemcpy(p, d, bytes, cudaMemcpyDeviceToHost);
	printf("malloc: copies %s, %zu words wrong\n", cudaGetErrorName(e),
	       wrong(p, scaled));
	fails += e != cudaSuccess;
	cudaHostUnregister(p);
	cudaFree(d);
	free(p);
	printf("%s\n", fails ? "FAILED" : "ok");
	return fails != 0;
}
