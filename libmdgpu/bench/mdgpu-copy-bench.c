// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpu-copy-bench: the staging copy of libmdgpu's pageable copies alone,
 * on the CPU (no daemon, no GPU).  Chunks cycle through a malloc'd buffer
 * and two halves of a MAP_SHARED memfd mapping (as the aperture is), with
 * 1..N threads (libmdgpu/copy.c's pool) and plain or non-temporal stores.
 *
 *   mdgpu-copy-bench [--mib 256] [--chunk-kib 4064] [--threads 1,2,4]
 *                    [--passes 3]
 *
 * One line per direction, thread count and store kind: GB/s of each pass
 * after a warm-up pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libmdgpu/copy.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct bench {
	uint8_t *host, *ap;
	size_t bytes, chunk;
	int passes;
};

/* One pass over the host buffer; out: aperture -> host. */
static double bench_pass(const struct bench *b, struct mdgpu_pool *p,
			 int out, int nt)
{
	double t0 = now_s();
	size_t k = 0;

	for (size_t off = 0; off + b->chunk <= b->bytes; off += b->chunk) {
		uint8_t *half = b->ap + (k++ & 1) * b->chunk;

		if (out)
			mdgpu_pool_copy(p, b->host + off, half, b->chunk, nt);
		else
			mdgpu_pool_copy(p, half, b->host + off, b->chunk, nt);
	}
	return (double)(b->bytes / b->chunk * b->chunk) /
	       (now_s() - t0) / 1e9;
}

static void bench_run(const struct bench *b, unsigned int threads)
{
	struct mdgpu_pool *p = mdgpu_pool_create(threads - 1, 50);

	for (int out = 0; out < 2; out++) {
		for (int nt = 0; nt < 2; nt++) {
			printf("%s threads=%u nt=%d GB/s:",
			       out ? "aperture->malloc" : "malloc->aperture",
			       mdgpu_pool_threads(p), nt);
			bench_pass(b, p, out, nt);
			for (int i = 0; i < b->passes; i++)
				printf(" %.1f", bench_pass(b, p, out, nt));
			printf("\n");
			fflush(stdout);
		}
	}
	mdgpu_pool_destroy(p);
}

int main(int argc, char **argv)
{
	struct bench b = { .bytes = 256UL << 20, .chunk = 4064UL << 10,
			   .passes = 3 };
	const char *threads = "1,2,4";
	int fd;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--mib"))
			b.bytes = strtoul(argv[i + 1], NULL, 0) << 20;
		else if (!strcmp(argv[i], "--chunk-kib"))
			b.chunk = strtoul(argv[i + 1], NULL, 0) << 10;
		else if (!strcmp(argv[i], "--threads"))
			threads = argv[i + 1];
		else if (!strcmp(argv[i], "--passes"))
			b.passes = atoi(argv[i + 1]);
		else
			break;
	}
	if (!b.chunk || b.bytes < b.chunk) {
		fprintf(stderr, "usage: see the comment in %s\n", __FILE__);
		return 2;
	}
	fd = memfd_create("mdgpu-copy-bench", 0);
	b.host = malloc(b.bytes);
	if (fd < 0 || !b.host || ftruncate(fd, (off_t)(2 * b.chunk))) {
		perror("mdgpu-copy-bench");
		return 1;
	}
	b.ap = mmap(NULL, 2 * b.chunk, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, 0);
	if (b.ap == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(b.host, 1, b.bytes);
	memset(b.ap, 2, 2 * b.chunk);
	for (const char *t = threads; *t; ) {
		char *end;
		unsigned long n = strtoul(t, &end, 10);

		if (n >= 1 && n <= MDGPU_PCOPY_THREADS_MAX)
			bench_run(&b, (unsigned int)n);
		t = *end ? end + 1 : end;
	}
	return 0;
}
