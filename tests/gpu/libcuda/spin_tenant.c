// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A tenant of tests/gpu/weights-drvapi.sh: a plain driver-API program that
 * keeps the GPU busy with ~1 ms kernels for a fixed wall time and counts
 * how many completed in that time.  Run natively and on mdgpu's
 * libcuda.so.1, unchanged.
 *
 *   spin_tenant SPIN.ptx SECONDS GOFILE [SPIN_US]
 *
 * It sets up (context, module, stream, events), prints "ready", waits
 * until GOFILE exists (so that two tenants start their timed loops
 * together, after the script has set their weights), then launches
 * mdgpud_spin_ns(SPIN_US microseconds) asynchronously in batches of
 * SPIN_BATCH, an event after each batch, at most SPIN_DEPTH batches in
 * flight, for SECONDS.  A batch counts if its event completed before the
 * deadline; those still queued then are drained and not counted.  Prints
 * "kernels N", "seconds S" (the timed loop's wall time) and exits 0, or
 * prints "error ..." and exits 1.
 *
 * With SPIN_PROGRESS_MS=N in the environment (1..60000) it also prints
 * "at MS kernels N" whenever N ms have passed since the last such line:
 * the kernels counted so far, MS the milliseconds since GOFILE was seen
 * (tests/gpu/faults.sh reads the throughput around an injected fault
 * from them).  An error line then ends in "at MS" as well.
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Kernels per event, and batches in flight: 4 x 8 x 1 ms of queued work
 * keeps a tenant backlogged through a 10 ms time slice of mdgpud while
 * its client waits for the oldest batch. */
#define SPIN_BATCH	8
#define SPIN_DEPTH	4
#define SPIN_PTX_MAX	(1u << 20)
#define SECONDS_MAX	600ul
#define SPIN_US_MAX	1000000ul
/* How long to wait for GOFILE, in 1 ms polls. */
#define GO_WAIT_POLLS	120000
#define PROGRESS_MS_MAX	60000ul

/* When GOFILE was seen (0 before), and SPIN_PROGRESS_MS in ns (0: off). */
static uint64_t go_ns;
static uint64_t progress_ns;

#define CK(call) do {							\
	CUresult r_ = (call);						\
	if (r_ != CUDA_SUCCESS) {					\
		const char *n_ = NULL;					\
		cuGetErrorName(r_, &n_);				\
		printf("error %d %s at %s", (int)r_, n_ ? n_ : "?",	\
		       #call);						\
		error_time();						\
		return 1;						\
	}								\
} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Ends an error line: " at MS" (since GOFILE) when progress is on. */
static void error_time(void)
{
	if (progress_ns && go_ns)
		printf(" at %" PRIu64, (now_ns() - go_ns) / 1000000u);
	printf("\n");
	fflush(stdout);
}

/* A decimal number in [1, max], else 0. */
static unsigned long parse_ul(const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < 1 || v > max)
		return 0;
	return v;
}

/* The PTX text, NUL-terminated, or NULL. */
static char *read_ptx(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = malloc(SPIN_PTX_MAX + 1);
	if (!buf) {
		fclose(f);
		return NULL;
	}
	n = fread(buf, 1, SPIN_PTX_MAX + 1, f);
	fclose(f);
	if (n == 0 || n > SPIN_PTX_MAX) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

static bool wait_go(const char *path)
{
	const struct timespec ms = { 0, 1000000 };

	for (long i = 0; i < GO_WAIT_POLLS; i++) {
		if (!access(path, F_OK))
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

/* The timed loop; *kernels gets the count, *wall_ns the loop's time. */
static int spin(CUfunction fn, CUstream st, CUevent *ev, uint64_t spin_ns,
		uint64_t duration_ns, uint64_t *kernels, uint64_t *wall_ns)
{
	unsigned long long ns = spin_ns;
	void *params[] = { &ns };
	uint64_t issued = 0, done = 0, count = 0;
	uint64_t start = now_ns(), deadline = start + duration_ns;
	uint64_t shown = start;

	for (;;) {
		bool late = now_ns() >= deadline;

		if (!late) {
			for (int k = 0; k < SPIN_BATCH; k++)
				CK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, st,
						  params, NULL));
			CK(cuEventRecord(ev[issued % SPIN_DEPTH], st));
			issued++;
		}
		if (issued == done)
			break;
		if (late || issued - done == SPIN_DEPTH) {
			CK(cuEventSynchronize(ev[done % SPIN_DEPTH]));
			if (now_ns() <= deadline)
				count += SPIN_BATCH;
			done++;
			if (progress_ns && now_ns() - shown >= progress_ns) {
				shown = now_ns();
				printf("at %" PRIu64 " kernels %" PRIu64 "\n",
				       (shown - go_ns) / 1000000u, count);
				fflush(stdout);
			}
		}
	}
	*kernels = count;
	*wall_ns = now_ns() - start;
	return 0;
}

int main(int argc, char **argv)
{
	const char *progress = getenv("SPIN_PROGRESS_MS");
	unsigned long seconds, spin_us = 1000;
	uint64_t kernels = 0, wall_ns = 0;
	CUevent ev[SPIN_DEPTH];
	CUfunction fn;
	CUmodule mod;
	CUstream st;
	CUdevice dev;
	CUcontext ctx;
	char *ptx;
	int ret;

	if (argc < 4 || argc > 5) {
		fprintf(stderr,
			"usage: %s SPIN.ptx SECONDS GOFILE [SPIN_US]\n",
			argv[0]);
		return 2;
	}
	seconds = parse_ul(argv[2], SECONDS_MAX);
	if (argc == 5)
		spin_us = parse_ul(argv[4], SPIN_US_MAX);
	if (progress)
		progress_ns = parse_ul(progress, PROGRESS_MS_MAX) * 1000000ull;
	if (!seconds || !spin_us || (progress && !progress_ns)) {
		fprintf(stderr, "SECONDS: 1..%lu, SPIN_US: 1..%lu, "
			"SPIN_PROGRESS_MS: 1..%lu\n", SECONDS_MAX,
			SPIN_US_MAX, PROGRESS_MS_MAX);
		return 2;
	}
	ptx = read_ptx(argv[1]);
	if (!ptx) {
		printf("error: cannot read %s (at most %u bytes)\n", argv[1],
		       SPIN_PTX_MAX);
		return 1;
	}
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, ptx));
	free(ptx);
	CK(cuModuleGetFunction(&fn, mod, "mdgpud_spin_ns"));
	CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < SPIN_DEPTH; i++)
		CK(cuEventCreate(&ev[i], CU_EVENT_DISABLE_TIMING));
	printf("ready\n");
	fflush(stdout);
	if (!wait_go(argv[3])) {
		printf("error: %s did not appear within %d s\n", argv[3],
		       GO_WAIT_POLLS / 1000);
		return 1;
	}
	go_ns = now_ns();
	ret = spin(fn, st, ev, (uint64_t)spin_us * 1000,
		   (uint64_t)seconds * 1000000000ull, &kernels, &wall_ns);
	if (ret)
		return ret;
	printf("kernels %" PRIu64 "\n", kernels);
	printf("seconds %.3f\n", (double)wall_ns / 1e9);
	for (int i = 0; i < SPIN_DEPTH; i++)
		CK(cuEventDestroy(ev[i]));
	CK(cuStreamDestroy(st));
	CK(cuModuleUnload(mod));
	CK(cuDevicePrimaryCtxRelease(dev));
	return 0;
}
