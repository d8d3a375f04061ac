// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The per-thread default stream as a program built with
 * `nvcc --default-stream per-thread` sees it: compiled with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, so that cuda.h turns every
 * stream-ordered call into its _ptsz/_ptds entry point and a NULL stream
 * means the calling thread's own stream.  Run by
 * tests/gpu/libcuda-compare.sh on NVIDIA's libcuda.so.1 and on mdgpu's;
 * lines other than "info ..." must be equal.
 *
 *   ptdstest SPIN.ptx        (tests/gpu/libcuda/spin.cu compiled to PTX)
 *
 * What CUDA documents, checked with a long kernel (LONG_MS) on one thread
 * and a short one on another:
 *   - two threads' per-thread streams do not wait for each other;
 *   - the legacy stream waits for every blocking stream, so for another
 *     thread's per-thread stream;
 *   - a non-blocking stream waits for nothing;
 *   - each thread has a stream of its own (distinct ids), NULL under
 *     _ptsz is CU_STREAM_PER_THREAD, and the legacy stream is another;
 *   - copies and memsets on the per-thread stream land.
 */
#define _POSIX_C_SOURCE 200809L
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <cuda.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LONG_MS		400
/* A short kernel's wait that did not overlap the long kernel is at most
 * this; one that waited for it is at least LONG_MS minus the time the
 * long one ran before the short one was issued (a few ms). */
#define SHORT_MAX_MS	(LONG_MS / 2)
#define PTX_MAX		(1u << 20)

static CUcontext ctx;
static CUfunction spin;
static int failures;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int check(const char *what, CUresult r)
{
	const char *n = NULL;

	if (r == CUDA_SUCCESS)
		return 0;
	cuGetErrorName(r, &n);
	printf("%s: error %d %s\n", what, (int)r, n ? n : "?");
	failures++;
	return -1;
}

static CUresult launch_spin(CUstream st, uint64_t ms)
{
	unsigned long long ns = ms * 1000000ull;
	void *params[] = { &ns };

	return cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, st, params, NULL);
}

/* The long kernel's thread: queue LONG_MS on its per-thread stream,
 * let the other thread go, and wait until it is done before waiting for
 * its own stream (so that no wait of this thread is in the way of the
 * other's calls). */
struct pair {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int launched, done;
	CUstream other;		/* where the short kernel goes */
	CUresult long_r, long_sync_r;
	uint64_t short_ms;
	CUresult short_r;
};

static void pair_set(struct pair *p, int *field)
{
	pthread_mutex_lock(&p->mu);
	*field = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static void pair_wait(struct pair *p, const int *field)
{
	pthread_mutex_lock(&p->mu);
	while (!*field)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

static void *long_thread(void *arg)
{
	struct pair *p = arg;

	cuCtxSetCurrent(ctx);
	p->long_r = launch_spin(NULL, LONG_MS);
	pair_set(p, &p->launched);
	pair_wait(p, &p->done);
	p->long_sync_r = cuStreamSynchronize(NULL);
	return NULL;
}

static void *short_thread(void *arg)
{
	struct pair *p = arg;
	uint64_t t0;
	CUresult r;

	cuCtxSetCurrent(ctx);
	pair_wait(p, &p->launched);
	t0 = now_ns();
	r = launch_spin(p->other, 1);
	if (!r)
		r = cuStreamSynchronize(p->other);
	p->short_r = r;
	p->short_ms = (now_ns() - t0) / 1000000ull;
	pair_set(p, &p->done);
	return NULL;
}

/* One long kernel on a thread's per-thread stream, one short kernel on
 * `other` from a second thread; the short kernel's wait in ms. */
static int overlap(const char *test, CUstream other, uint64_t *short_ms)
{
	struct pair p = { .other = other };
	pthread_t a, b;

	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	pthread_create(&a, NULL, long_thread, &p);
	pthread_create(&b, NULL, short_thread, &p);
	pthread_join(b, NULL);
	pthread_join(a, NULL);
	pthread_mutex_destroy(&p.mu);
	pthread_cond_destroy(&p.cv);
	if (check(test, p.long_r) || check(test, p.short_r) ||
	    check(test, p.long_sync_r))
		return -1;
	*short_ms = p.short_ms;
	printf("info %s: short kernel waited %" PRIu64 " ms (long %d ms)\n",
	       test, p.short_ms, LONG_MS);
	return 0;
}

static void t_overlap(void)
{
	CUstream nb;
	uint64_t ms;

	/* NULL in the short thread is its own per-thread stream. */
	if (!overlap("ptds-vs-ptds", NULL, &ms))
		printf("ptds-vs-ptds: overlapped %s\n",
		       ms < SHORT_MAX_MS ? "yes" : "no");
	if (!overlap("legacy-vs-ptds", CU_STREAM_LEGACY, &ms))
		printf("legacy-vs-ptds: waited %s\n",
		       ms >= SHORT_MAX_MS ? "yes" : "no");
	if (check("nonblocking-vs-ptds",
		  cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING)))
		return;
	if (!overlap("nonblocking-vs-ptds", nb, &ms))
		printf("nonblocking-vs-ptds: overlapped %s\n",
		       ms < SHORT_MAX_MS ? "yes" : "no");
	check("nonblocking-vs-ptds", cuStreamDestroy(nb));
}

struct ids {
	unsigned long long null_id, ptds_id, legacy_id;
	CUresult r;
};

static void *ids_thread(void *arg)
{
	struct ids *d = arg;

	cuCtxSetCurrent(ctx);
	d->r = cuStreamGetId(NULL, &d->null_id);
	if (!d->r)
		d->r = cuStreamGetId(CU_STREAM_PER_THREAD, &d->ptds_id);
	if (!d->r)
		d->r = cuStreamGetId(CU_STREAM_LEGACY, &d->legacy_id);
	return NULL;
}

static void t_ids(void)
{
	const char *test = "ids";
	struct ids a = { 0 }, b = { 0 };
	pthread_t ta, tb;

	pthread_create(&ta, NULL, ids_thread, &a);
	pthread_join(ta, NULL);
	pthread_create(&tb, NULL, ids_thread, &b);
	pthread_join(tb, NULL);
	if (check(test, a.r) || check(test, b.r))
		return;
	printf("%s: NULL is the per-thread stream %s\n", test,
	       a.null_id == a.ptds_id && b.null_id == b.ptds_id ? "yes" : "no");
	printf("%s: threads' streams distinct %s\n", test,
	       a.ptds_id != b.ptds_id ? "yes" : "no");
	printf("%s: legacy is another stream %s, the same in both threads %s\n",
	       test, a.legacy_id != a.ptds_id ? "yes" : "no",
	       a.legacy_id == b.legacy_id ? "yes" : "no");
}

/* Memset, copies both ways and a device-to-device copy, all on the
 * per-thread stream, the result read back. */
static void t_data(void)
{
	const char *test = "data";
	enum { N = 1 << 20 };
	unsigned *h = malloc(N * sizeof(*h)), bad = 0;
	CUdeviceptr a, b;

	if (!h || check(test, cuMemAlloc(&a, N * sizeof(*h))) ||
	    check(test, cuMemAlloc(&b, N * sizeof(*h)))) {
		free(h);
		return;
	}
	for (unsigned i = 0; i < N; i++)
		h[i] = i * 2654435761u;
	if (check(test, cuMemsetD32Async(b, 0xdeadbeef, N, NULL)) ||
	    check(test, cuMemcpyHtoD(a, h, N * sizeof(*h))) ||
	    check(test, cuMemcpyDtoDAsync(b, a, N / 2 * sizeof(*h), NULL)) ||
	    check(test, cuStreamSynchronize(NULL)))
		goto out;
	memset(h, 0, N * sizeof(*h));
	if (check(test, cuMemcpyDtoH(h, b, N * sizeof(*h))))
		goto out;
	for (unsigned i = 0; i < N; i++)
		bad += h[i] != (i < N / 2 ? i * 2654435761u : 0xdeadbeef);
	printf("%s: %u of %u words wrong\n", test, bad, (unsigned)N);
out:
	cuMemFree(a);
	cuMemFree(b);
	free(h);
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = malloc(PTX_MAX + 1);
	n = buf ? fread(buf, 1, PTX_MAX + 1, f) : 0;
	fclose(f);
	if (n == 0 || n > PTX_MAX) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

int main(int argc, char **argv)
{
	CUmodule mod;
	CUdevice d;
	char *ptx;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SPIN.ptx\n", argv[0]);
		return 2;
	}
	ptx = read_text(argv[1]);
	if (!ptx) {
		fprintf(stderr, "%s: cannot read PTX\n", argv[1]);
		return 2;
	}
	if (check("init", cuInit(0)) || check("init", cuDeviceGet(&d, 0)) ||
	    check("init", cuDevicePrimaryCtxRetain(&ctx, d)) ||
	    check("init", cuCtxSetCurrent(ctx)) ||
	    check("init", cuModuleLoadData(&mod, ptx)) ||
	    check("init", cuModuleGetFunction(&spin, mod, "mdgpud_spin_ns")))
		return 1;
	free(ptx);
	t_ids();
	t_data();
	t_overlap();
	cuModuleUnload(mod);
	cuDevicePrimaryCtxRelease(d);
	printf("ptdstest: %d failures\n", failures);
	return failures ? 1 : 0;
}
