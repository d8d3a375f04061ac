// SPDX-License-Identifier: GPL-2.0 OR MIT
// What host functions and host registration cost, natively and through
// mdgpu (tests/gpu/libcuda-compare.sh prints both runs; the figures are
// times, not compared line by line).
//  - cudaLaunchHostFunc queued behind a 50 ms kernel: how long the call
//    takes to return (asynchronous: microseconds), how long until the
//    function ran, and whether a kernel queued after it ran after it;
//  - cudaHostRegister of a /dev/shm file of 64 MiB and 1 GiB (NCCL's
//    shared-memory buffers are of that kind): the time of the call.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cuda_runtime.h>

using clk = std::chrono::steady_clock;

static double ms_since(clk::time_point t0)
{
	return std::chrono::duration<double, std::milli>(clk::now() - t0)
		.count();
}

__global__ void spin_ns(unsigned long long ns)
{
	unsigned long long start, now;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	while (now - start < ns);
}

__global__ void store(unsigned *p, unsigned v)
{
	*p = v;
}

struct seen {
	clk::time_point t0;
	double ran_ms;
	volatile unsigned *word;
	unsigned word_then;
};

static void CUDART_CB host_fn(void *p)
{
	struct seen *s = (struct seen *)p;

	s->ran_ms = ms_since(s->t0);
	s->word_then = *s->word;
}

static void register_cost(size_t mib)
{
	char path[] = "/dev/shm/mdgpu-register-cost-XXXXXX";
	size_t bytes = mib << 20;
	int fd = mkstemp(path);
	void *p;

	if (fd < 0 || ftruncate(fd, (off_t)bytes)) {
		printf("register %zu MiB: no shm file\n", mib);
		return;
	}
	unlink(path);
	p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	memset(p, 1, bytes);
	clk::time_point t0 = clk::now();
	cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterMapped);
	double reg = ms_since(t0);
	t0 = clk::now();
	cudaError_t u = cudaHostUnregister(p);
	printf("register %zu MiB: %s in %.2f ms, unregister %s in %.2f ms\n",
	       mib, cudaGetErrorName(e), reg, cudaGetErrorName(u),
	       ms_since(t0));
	munmap(p, bytes);
	close(fd);
}

int main(void)
{
	unsigned *word, *dev;
	struct seen s = {};
	cudaStream_t st;

	cudaFree(nullptr);
	cudaStreamCreate(&st);
	cudaHostAlloc((void **)&word, sizeof(*word), cudaHostAllocMapped);
	cudaMalloc((void **)&dev, sizeof(*dev));
	*word = 0;
	s.word = word;
	for (int round = 0; round < 3; round++) {
		*word = 0;
		spin_ns<<<1, 1, 0, st>>>(50ull * 1000 * 1000);
		s.t0 = clk::now();
		cudaError_t e = cudaLaunchHostFunc(st, host_fn, &s);
		double ret_ms = ms_since(s.t0);
		store<<<1, 1, 0, st>>>(word, 7);
		cudaStreamSynchronize(st);
		printf("host function behind a 50 ms kernel: %s, the call "
		       "returned after %.3f ms, the function ran at %.1f ms, "
		       "the kernel after it %s\n", cudaGetErrorName(e),
		       ret_ms, s.ran_ms,
		       s.word_then == 0 && *word == 7 ? "ran after it" :
						       "ran BEFORE it");
	}
	register_cost(64);
	register_cost(1024);
	return 0;
}
