// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Micro-benchmark: the cuda backend's ops (supervisor -> worker process
 * over shared memory) next to native CUDA driver-API calls, in the same
 * process run, on the same GPU:
 *
 *   1. launch + synchronize round trip of an empty kernel
 *   2. back-to-back asynchronous launches of an empty kernel (per launch)
 *   3. host->device and device->host bandwidth, 64 MiB, pinned
 *   4. launch + synchronize after 10 ms of idleness (median)
 *
 * Each figure is the median of REPS runs of ITERS operations (after a
 * warm-up).  Ratios: latency backend/native (target <= 1.3), throughput
 * and bandwidth native-time/backend-time (target >= 0.9).
 *
 * The backend's workers are forked before this process calls cuInit
 * (never fork after cuInit); the native side uses the same dlopen'd table
 * (backends/cuda/worker/cuda_api.h).
 *
 * usage: bench_cuda_backend [worker-path]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <mdgpud/backend.h>
#include <mdgpud/log.h>
#include <uapi/mdgpu.h>

#include "userspace-daemon/backends/cuda/worker/cuda_api.h"
#include "userspace-daemon/backends/cuda/cuda_backend.h"

/* A plain launch (no flags, no cluster) through the ops table. */
static int test_launch(const struct mdgpud_backend_ops *o,
		       struct mdgpud_bctx *c, uint64_t stream, uint64_t fn,
		       struct mdgpud_dim3 grid, struct mdgpud_dim3 block,
		       uint32_t shared_bytes, const void *params,
		       uint32_t params_len)
{
	struct mdgpud_launch l = {
		.func = fn, .grid = grid, .block = block,
		.shared_bytes = shared_bytes, .params = params,
		.params_len = params_len,
	};

	return o->launch(c, stream, &l);
}

#define REPS		11
#define RT_ITERS	2000
#define ASYNC_ITERS	5000
#define BW_BYTES	(64ull << 20)
#define BW_ITERS	10

static const char empty_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry empty()\n{\n\tret;\n}\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static double lo[4][2], hi[4][2];

/* Medians into res[k], and the range of each side for the report. */
static void spread(int k, double *vn, double *vb, double res[][2])
{
	res[k][0] = median(vn, REPS);
	res[k][1] = median(vb, REPS);
	lo[k][0] = vn[0];
	hi[k][0] = vn[REPS - 1];
	lo[k][1] = vb[0];
	hi[k][1] = vb[REPS - 1];
}

#define CK(call)							\
	do {								\
		mdgpud_cu_result r_ = (call);				\
		if (r_) {						\
			fprintf(stderr, "%s:%d: %s failed: %u\n",	\
				__FILE__, __LINE__, #call, r_);		\
			exit(1);					\
		}							\
	} while (0)

#define OK(call)							\
	do {								\
		int e_ = (call);					\
		if (e_) {						\
			fprintf(stderr, "%s:%d: %s failed: %s\n",	\
				__FILE__, __LINE__, #call,		\
				strerror(-e_));				\
			exit(1);					\
		}							\
	} while (0)

struct native {
	struct mdgpud_cuda_api cu;
	mdgpud_cu_context ctx;
	mdgpud_cu_stream stream;
	mdgpud_cu_function empty;
	mdgpud_cu_deviceptr dbuf;
	void *hbuf;
};

struct bk {
	const struct mdgpud_backend_ops *ops;
	struct mdgpud_bctx *ctx;
	uint64_t empty;
	uint64_t dbuf;
	void *hbuf;
};

static double native_rt(struct native *n, int iters)
{
	double t0 = now_s();

	for (int i = 0; i < iters; i++) {
		CK(n->cu.launch_kernel(n->empty, 1, 1, 1, 1, 1, 1, 0, n->stream,
				       NULL, NULL));
		CK(n->cu.stream_synchronize(n->stream));
	}
	return (now_s() - t0) / iters;
}

static double backend_rt(struct bk *b, int iters)
{
	struct mdgpud_dim3 one = { 1, 1, 1 };
	double t0 = now_s();

	for (int i = 0; i < iters; i++) {
		OK(test_launch(b->ops, b->ctx, 0, b->empty, one, one, 0, NULL, 0));
		OK(b->ops->sync(b->ctx, 0));
	}
	return (now_s() - t0) / iters;
}

/*
 * Round trip after 10 ms of idleness, as a latency-sensitive tenant sees
 * it: both the worker and the driver may have gone to sleep.  Median.
 */
#define IDLE_ITERS	100
#define IDLE_GAP_US	10000

static double native_idle_rt(struct native *n)
{
	double v[IDLE_ITERS];

	for (int i = 0; i < IDLE_ITERS; i++) {
		double t0;

		usleep(IDLE_GAP_US);
		t0 = now_s();
		CK(n->cu.launch_kernel(n->empty, 1, 1, 1, 1, 1, 1, 0, n->stream,
				       NULL, NULL));
		CK(n->cu.stream_synchronize(n->stream));
		v[i] = now_s() - t0;
	}
	return median(v, IDLE_ITERS);
}

static double backend_idle_rt(struct bk *b)
{
	struct mdgpud_dim3 one = { 1, 1, 1 };
	double v[IDLE_ITERS];

	for (int i = 0; i < IDLE_ITERS; i++) {
		double t0;

		usleep(IDLE_GAP_US);
		t0 = now_s();
		OK(test_launch(b->ops, b->ctx, 0, b->empty, one, one, 0, NULL, 0));
		OK(b->ops->sync(b->ctx, 0));
		v[i] = now_s() - t0;
	}
	return median(v, IDLE_ITERS);
}

static double native_async(struct native *n, int iters)
{
	double t0 = now_s();

	for (int i = 0; i < iters; i++)
		CK(n->cu.launch_kernel(n->empty, 1, 1, 1, 1, 1, 1, 0, n->stream,
				       NULL, NULL));
	CK(n->cu.stream_synchronize(n->stream));
	return (now_s() - t0) / iters;
}

static double backend_async(struct bk *b, int iters)
{
	struct mdgpud_dim3 one = { 1, 1, 1 };
	double t0 = now_s();

	for (int i = 0; i < iters; i++)
		OK(test_launch(b->ops, b->ctx, 0, b->empty, one, one, 0, NULL, 0));
	OK(b->ops->sync(b->ctx, 0));
	return (now_s() - t0) / iters;
}

/* Seconds per 64 MiB copy; dir 0: h2d, 1: d2h. */
static double native_bw(struct native *n, int dir, int iters)
{
	double t0 = now_s();

	for (int i = 0; i < iters; i++) {
		if (dir == 0)
			CK(n->cu.memcpy_htod_async(n->dbuf, n->hbuf, BW_BYTES,
						   n->stream));
		else
			CK(n->cu.memcpy_dtoh_async(n->hbuf, n->dbuf, BW_BYTES,
						   n->stream));
		CK(n->cu.stream_synchronize(n->stream));
	}
	return (now_s() - t0) / iters;
}

static double backend_bw(struct bk *b, int dir, int iters)
{
	double t0 = now_s();

	for (int i = 0; i < iters; i++) {
		if (dir == 0)
			OK(b->ops->copy_h2d(b->ctx, 0, b->dbuf, b->hbuf, BW_BYTES, 0));
		else
			OK(b->ops->copy_d2h(b->ctx, 0, b->hbuf, b->dbuf, BW_BYTES, 0));
	}
	return (now_s() - t0) / iters;
}

int main(int argc, char **argv)
{
	struct mdgpud_backend_cfg cfg = { 0 };
	struct mdgpud_gpu_info info;
	struct mdgpud_backend *be;
	struct native n = { 0 };
	struct bk b = { .ops = &mdgpud_backend_cuda };
	mdgpud_cu_device dev;
	mdgpud_cu_module mod;
	char why[256];
	double vn[REPS], vb[REPS], nat, bak, res[4][2];
	uint64_t reserved, module;
	int ret;

	mdgpud_log_set(MDGPUD_LOG_INFO, NULL, NULL);
	cfg.worker_path = argc > 1 ? argv[1] : NULL;
	/* 1. Backend first: its workers are forked before our cuInit. */
	ret = b.ops->open(&cfg, &be, &info);
	if (ret) {
		printf("SKIPPED: cuda backend unavailable (%s)\n",
		       strerror(-ret));
		return 0;
	}
	OK(b.ops->ctx_create(be, 1, &b.ctx));
	OK(b.ops->module_load(b.ctx, MDGPU_MODULE_PTX, empty_ptx,
			      sizeof(empty_ptx), &module));
	OK(b.ops->func_get(b.ctx, module, "empty", &b.empty, NULL));
	OK(b.ops->mem_alloc(b.ctx, BW_BYTES, &b.dbuf, &reserved));
	b.hbuf = b.ops->host_alloc(b.ctx, BW_BYTES);
	if (!b.hbuf) {
		fprintf(stderr, "host_alloc failed\n");
		return 1;
	}
	memset(b.hbuf, 0x5a, BW_BYTES);

	/* 2. Native, in this process. */
	if (mdgpud_cuda_api_load(&n.cu, NULL, why, sizeof(why))) {
		fprintf(stderr, "%s\n", why);
		return 1;
	}
	CK(n.cu.init(0));
	CK(n.cu.device_get(&dev, 0));
	CK(n.cu.primary_ctx_retain(&n.ctx, dev));
	CK(n.cu.ctx_set_current(n.ctx));
	CK(n.cu.stream_create(&n.stream, MDGPUD_CU_STREAM_NON_BLOCKING));
	CK(n.cu.module_load_data_ex(&mod, empty_ptx, 0, NULL, NULL));
	CK(n.cu.module_get_function(&n.empty, mod, "empty"));
	CK(n.cu.mem_alloc(&n.dbuf, BW_BYTES));
	n.hbuf = aligned_alloc(4096, BW_BYTES);
	memset(n.hbuf, 0x5a, BW_BYTES);
	CK(n.cu.mem_host_register(n.hbuf, BW_BYTES,
				  MDGPUD_CU_MEMHOSTREGISTER_PORTABLE));

	printf("GPU: %s (%s), %u SMs; median of %d runs\n", info.name,
	       info.bus_id, info.sm_count, REPS);

	/*
	 * Warm-up both, then alternate native and backend runs so that drift
	 * (clocks, placement of threads on cores) hits both alike.
	 */
	native_rt(&n, 200);
	backend_rt(&b, 200);
	for (int r = 0; r < REPS; r++) {
		vn[r] = native_rt(&n, RT_ITERS);
		vb[r] = backend_rt(&b, RT_ITERS);
	}
	spread(0, vn, vb, res);

	native_async(&n, 500);
	backend_async(&b, 500);
	for (int r = 0; r < REPS; r++) {
		vn[r] = native_async(&n, ASYNC_ITERS);
		vb[r] = backend_async(&b, ASYNC_ITERS);
	}
	spread(1, vn, vb, res);

	for (int dir = 0; dir < 2; dir++) {
		native_bw(&n, dir, 2);
		backend_bw(&b, dir, 2);
		for (int r = 0; r < REPS; r++) {
			vn[r] = native_bw(&n, dir, BW_ITERS);
			vb[r] = backend_bw(&b, dir, BW_ITERS);
		}
		spread(2 + dir, vn, vb, res);
	}

	/*
	 * Where the backend's async time goes (MDGPUD_CUDA_STATS=1): time
	 * inside the worker's requests (the driver call) against the time from
	 * one request to the next.
	 */
	{
		uint64_t r0, e0, b0, r1, e1, b1;

		if (!mdgpud_backend_cuda_worker_stats(b.ctx, &r0, &e0, &b0)) {
			backend_async(&b, ASYNC_ITERS);
			mdgpud_backend_cuda_worker_stats(b.ctx, &r1, &e1, &b1);
			printf("worker, async launches: %.2f us in the driver "
			       "call, %.2f us request to request\n",
			       (double)(e1 - e0) / (double)(r1 - r0) / 1e3,
			       (double)(b1 - b0) / (double)(r1 - r0) / 1e3);
		}
	}

	nat = res[0][0];
	bak = res[0][1];
	printf("%-34s native %8.2f us  backend %8.2f us  ratio %.2f "
	       "(target <= 1.30)\n", "launch+sync round trip (empty)",
	       nat * 1e6, bak * 1e6, bak / nat);
	printf("%-34s native %.2f..%.2f us, backend %.2f..%.2f us\n",
	       "  (range of runs)", lo[0][0] * 1e6, hi[0][0] * 1e6,
	       lo[0][1] * 1e6, hi[0][1] * 1e6);
	nat = res[1][0];
	bak = res[1][1];
	printf("%-34s native %8.2f us  backend %8.2f us  throughput ratio "
	       "%.2f (target >= 0.90)\n", "async launch, per launch",
	       nat * 1e6, bak * 1e6, nat / bak);
	printf("%-34s native %.2f..%.2f us, backend %.2f..%.2f us\n",
	       "  (range of runs)", lo[1][0] * 1e6, hi[1][0] * 1e6,
	       lo[1][1] * 1e6, hi[1][1] * 1e6);
	for (int dir = 0; dir < 2; dir++) {
		nat = (double)BW_BYTES / res[2 + dir][0] / 1e9;
		bak = (double)BW_BYTES / res[2 + dir][1] / 1e9;
		printf("%-34s native %8.2f GB/s backend %8.2f GB/s ratio %.2f\n",
		       dir ? "D2H 64 MiB pinned" : "H2D 64 MiB pinned", nat,
		       bak, bak / nat);
	}

	/*
	 * Native copies from a MAP_SHARED memfd mapping (what host_alloc
	 * gives the worker), registered the same way: separates the cost of
	 * the memory type from the cost of the backend.
	 */
	{
		int fd = memfd_create("bench-memfd", MFD_CLOEXEC);
		void *m;
		double t[2];

		if (fd < 0 || ftruncate(fd, BW_BYTES))
			return 1;
		m = mmap(NULL, BW_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		close(fd);
		if (m == MAP_FAILED)
			return 1;
		memset(m, 0x5a, BW_BYTES);
		CK(n.cu.mem_host_register(m, BW_BYTES,
					  MDGPUD_CU_MEMHOSTREGISTER_PORTABLE));
		for (int dir = 0; dir < 2; dir++) {
			void *keep = n.hbuf;

			n.hbuf = m;
			native_bw(&n, dir, 2);
			for (int r = 0; r < REPS; r++)
				vn[r] = native_bw(&n, dir, BW_ITERS);
			t[dir] = median(vn, REPS);
			n.hbuf = keep;
		}
		printf("%-34s H2D %.2f GB/s, D2H %.2f GB/s\n",
		       "native, pinned memfd MAP_SHARED",
		       (double)BW_BYTES / t[0] / 1e9,
		       (double)BW_BYTES / t[1] / 1e9);
		CK(n.cu.mem_host_unregister(m));
		munmap(m, BW_BYTES);
	}

	nat = native_idle_rt(&n);
	bak = backend_idle_rt(&b);
	printf("%-34s native %8.2f us  backend %8.2f us  ratio %.2f\n",
	       "round trip after 10 ms idle (p50)", nat * 1e6, bak * 1e6,
	       bak / nat);

	/*
	 * What cuMemAlloc really sets aside, from cuMemGetInfo deltas over 16
	 * allocations of each size (informs `reserved`, see the docs).
	 */
	{
		static const uint64_t sizes[] = { 256, 4096, 65536, 1u << 20,
						  (2u << 20) + 1, 64u << 20 };
		mdgpud_cu_deviceptr p[16];
		size_t f0, f1, total;

		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			CK(n.cu.mem_get_info(&f0, &total));
			for (int j = 0; j < 16; j++)
				CK(n.cu.mem_alloc(&p[j], sizes[i]));
			CK(n.cu.mem_get_info(&f1, &total));
			printf("cuMemAlloc(%9" PRIu64 " B) x16: free memory "
			       "down %8.1f KiB per allocation\n", sizes[i],
			       (double)(f0 - f1) / 16 / 1024);
			for (int j = 0; j < 16; j++)
				CK(n.cu.mem_free(p[j]));
		}
	}

	CK(n.cu.mem_host_unregister(n.hbuf));
	free(n.hbuf);
	CK(n.cu.mem_free(n.dbuf));
	b.ops->host_free(b.ctx, b.hbuf, BW_BYTES);
	OK(b.ops->mem_free(b.ctx, b.dbuf, BW_BYTES));
	b.ops->ctx_destroy(b.ctx);
	b.ops->close(be);
	return 0;
}
