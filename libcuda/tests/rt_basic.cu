// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A CUDA runtime program, built by nvcc unmodified (static runtime, and
 * with -cudart shared), run on mdgpu's libcuda against mdgpud's sim
 * backend by run-rt-tests.sh.  Each step prints "rt_basic: ok STEP";
 * the first failure prints "rt_basic: FAIL STEP: ..." and exits 1.
 *
 * Argument: the vGPU's quota in bytes (cudaMemGetInfo's total must be
 * it).  With --no-code the backend cannot run kernels: the launch must
 * report an error, at the launch or at the next synchronisation, never
 * a success; it prints "rt_basic: launch error CODE (TEXT)" and checks
 * that the kernel's buffer is unchanged.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

static const char *step = "start";

#define CHECK(call)							\
	do {								\
		cudaError_t e_ = (call);				\
		if (e_ != cudaSuccess) {				\
			printf("rt_basic: FAIL %s: %s = %d (%s)\n", step,	\
			       #call, (int)e_, cudaGetErrorString(e_));	\
			exit(1);					\
		}							\
	} while (0)

#define EXPECT(cond)							\
	do {								\
		if (!(cond)) {						\
			printf("rt_basic: FAIL %s: %s\n", step, #cond);	\
			exit(1);					\
		}							\
	} while (0)

static void ok(void)
{
	printf("rt_basic: ok %s\n", step);
	fflush(stdout);
}

/* What the host functions saw: calls, and whether the copy before each
 * had landed in pinned memory. */
struct host_seen {
	const unsigned char *pinned, *want;
	size_t n;
	int calls, right;
	cudaError_t status;
};

static void CUDART_CB host_fn(void *p)
{
	struct host_seen *h = (struct host_seen *)p;

	h->calls++;
	h->right += !memcmp(h->pinned, h->want, h->n);
}

static void CUDART_CB host_cb(cudaStream_t s, cudaError_t st, void *p)
{
	(void)s;
	((struct host_seen *)p)->status = st;
	host_fn(p);
}

__global__ void fill(unsigned *p, unsigned v)
{
	p[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

int main(int argc, char **argv)
{
	const size_t n = 1 << 16;
	unsigned long long quota = argc > 1 ? strtoull(argv[1], NULL, 0) : 0;
	bool no_code = argc > 2 && !strcmp(argv[2], "--no-code");
	unsigned char *h = (unsigned char *)malloc(n), *g = (unsigned char *)malloc(n);
	cudaDeviceProp prop;
	unsigned char *d, *d2;
	size_t freeb, total;
	cudaEvent_t e0, e1;
	cudaStream_t s;
	float ms = -1;
	int count = -1;

	EXPECT(h && g);
	step = "cudaGetDeviceCount";
	CHECK(cudaGetDeviceCount(&count));
	EXPECT(count == 1);
	ok();

	step = "cudaGetDeviceProperties";
	memset(&prop, 0, sizeof(prop));
	CHECK(cudaGetDeviceProperties(&prop, 0));
	EXPECT(prop.totalGlobalMem == quota);
	EXPECT(prop.multiProcessorCount > 0);
	ok();

	step = "cudaMalloc";
	CHECK(cudaMalloc((void **)&d, n));
	CHECK(cudaMalloc((void **)&d2, n));
	ok();

	step = "cudaMemGetInfo";
	CHECK(cudaMemGetInfo(&freeb, &total));
	EXPECT(total == quota);
	EXPECT(freeb <= total - 2 * n);
	ok();

	step = "cudaMemcpy";
	for (size_t i = 0; i < n; i++)
		h[i] = (unsigned char)(i * 7 + 3);
	CHECK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(d2, d, n, cudaMemcpyDeviceToDevice));
	memset(g, 0, n);
	CHECK(cudaMemcpy(g, d2, n, cudaMemcpyDeviceToHost));
	EXPECT(!memcmp(g, h, n));
	ok();

	step = "cudaMemset";
	CHECK(cudaMemset(d + 100, 0xa5, 1000));
	CHECK(cudaMemcpy(g, d, n, cudaMemcpyDeviceToHost));
	memset(h + 100, 0xa5, 1000);
	EXPECT(!memcmp(g, h, n));
	ok();

	step = "events";
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	CHECK(cudaEventRecord(e0, 0));
	CHECK(cudaMemset(d2, 0, n));
	CHECK(cudaEventRecord(e1, 0));
	CHECK(cudaEventSynchronize(e1));
	CHECK(cudaEventElapsedTime(&ms, e0, e1));
	EXPECT(ms >= 0);
	ok();

	step = "streams";
	CHECK(cudaStreamCreate(&s));
	CHECK(cudaMemcpyAsync(d2, h, n, cudaMemcpyHostToDevice, s));
	CHECK(cudaStreamSynchronize(s));
	memset(g, 0, n);
	CHECK(cudaMemcpyAsync(g, d2, n, cudaMemcpyDeviceToHost, s));
	CHECK(cudaStreamSynchronize(s));
	EXPECT(!memcmp(g, h, n));
	CHECK(cudaStreamDestroy(s));
	ok();

	/* Host functions run after the stream's copy into pinned memory,
	 * once each (asynchronously over the socket transport). */
	step = "host_functions";
	{
		struct host_seen hs = { nullptr, h, n, 0, 0, cudaErrorUnknown };
		unsigned char *pin;

		CHECK(cudaMallocHost((void **)&pin, n));
		memset(pin, 0, n);
		hs.pinned = pin;
		CHECK(cudaStreamCreate(&s));
		CHECK(cudaMemcpyAsync(pin, d2, n, cudaMemcpyDeviceToHost, s));
		CHECK(cudaLaunchHostFunc(s, host_fn, &hs));
		CHECK(cudaStreamAddCallback(s, host_cb, &hs, 0));
		CHECK(cudaStreamSynchronize(s));
		EXPECT(hs.calls == 2 && hs.right == 2);
		EXPECT(hs.status == cudaSuccess);
		CHECK(cudaStreamDestroy(s));
		CHECK(cudaFreeHost(pin));
	}
	ok();

	step = "cudaGetLastError";
	CHECK(cudaGetLastError());
	ok();

	step = "launch";
	fill<<<n / 4 / 256, 256>>>((unsigned *)d, 0x01020304u);
	{
		cudaError_t el = cudaGetLastError();
		cudaError_t es = el == cudaSuccess ? cudaDeviceSynchronize() : el;

		if (no_code) {
			/* No code can run: an error, never a success, and
			 * the buffer as the memset step left it. */
			EXPECT(es != cudaSuccess);
			printf("rt_basic: launch error %d (%s)\n", (int)es,
			       cudaGetErrorString(es));
			CHECK(cudaGetLastError());
			memset(g, 0, n);
			CHECK(cudaMemcpy(g, d, n, cudaMemcpyDeviceToHost));
			EXPECT(!memcmp(g, h, n));
		} else {
			CHECK(es);
			CHECK(cudaMemcpy(g, d, n, cudaMemcpyDeviceToHost));
			for (size_t i = 0; i < n / 4; i++)
				EXPECT(((unsigned *)g)[i] == 0x01020304u);
		}
	}
	ok();
	printf("rt_basic: all passed\n");
	return 0;
}
