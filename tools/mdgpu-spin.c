// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpu-spin: a small tenant for demos (scripts/demo-host.sh) and smoke
 * tests.  Over libmdgpu it opens a vGPU, allocates device memory, copies a
 * pattern in, runs the builtin kernels (fill, add, checksum), copies the
 * result back and verifies it and the checksum against a C reference;
 * then it keeps the vGPU busy with SPIN_NS kernels until the time is up
 * or SIGTERM/SIGINT.
 *
 *   mdgpu-spin [-s SOCKET] [-T TYPE] [-m MIB] [-k SPIN_US] [-d SECONDS]
 *   mdgpu-spin --help | --version
 *
 * Exit status: 0 verified and ran (or help, version); 1 a check failed or
 * a call failed (message on stderr); 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mdgpu/mdgpu.h"
#include "mdgpu_version.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static uint64_t ref_checksum(const uint32_t *w, uint64_t n)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += (uint64_t)w[i] * (2 * i + 1);
	return s;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: mdgpu-spin [-s SOCKET] [-T TYPE] [-m MIB] [-k SPIN_US] [-d SECONDS]\n"
		"  -s SOCKET    mdgpud's socket (default $MDGPU_SOCKET or libmdgpu's)\n"
		"  -T TYPE      vGPU type (1g)\n"
		"  -m MIB       device memory to verify with (64)\n"
		"  -k SPIN_US   length of each busy kernel (1000)\n"
		"  -d SECONDS   keep the vGPU busy this long (10)\n"
		"  -h, --help   this help;  -V, --version  the version\n");
}

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

#define CHECK(call)							\
	do {								\
		int _r = (call);					\
		if (_r) {						\
			fprintf(stderr, "mdgpu-spin: %s: %s (%s)\n",	\
				#call, mdgpu_strerror(_r),		\
				mdgpu_last_error(g));			\
			goto out;					\
		}							\
	} while (0)

int main(int argc, char **argv)
{
	struct mdgpu_open_opts o = { 0 };
	uint64_t mib = 64, spin_us = 1000, secs = 10, n, sum, kernels = 0;
	uint32_t *a = NULL, *b = NULL;
	struct mdgpu *g = NULL;
	struct mdgpu_info info;
	mdgpu_devptr x = 0, y = 0, z = 0;
	struct sigaction sa;
	double t0, end;
	int opt, ret = 1;

	o.type = "1g";
	while ((opt = getopt_long(argc, argv, "s:T:m:k:d:hV", long_opts,
				  NULL)) != -1) {
		switch (opt) {
		case 's':
			o.path = optarg;
			break;
		case 'T':
			o.type = optarg;
			break;
		case 'm':
			if (parse_u64(optarg, 1, 1 << 20, &mib))
				goto usage;
			break;
		case 'k':
			if (parse_u64(optarg, 1, 1000000, &spin_us))
				goto usage;
			break;
		case 'd':
			if (parse_u64(optarg, 0, 86400, &secs))
				goto usage;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("mdgpu-spin %s\n", MDGPU_VERSION);
			return 0;
		default:
			goto usage;
		}
	}
	if (optind != argc)
		goto usage;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	ret = mdgpu_open(&o, &g);
	if (ret) {
		fprintf(stderr, "mdgpu-spin: open %s vGPU: %s (%s)\n", o.type,
			mdgpu_strerror(ret), mdgpu_last_error(NULL));
		return 1;
	}
	ret = 1;
	CHECK(mdgpu_get_info(g, &info));
	n = (mib << 20) / 4 / 3;	/* three buffers of n words */
	a = malloc(n * 4);
	b = malloc(n * 4);
	if (!a || !b) {
		fprintf(stderr, "mdgpu-spin: out of host memory\n");
		goto out;
	}
	for (uint64_t i = 0; i < n; i++)
		a[i] = (uint32_t)(i * 2654435761U) ^ info.vgpu_id;
	CHECK(mdgpu_mem_alloc(g, n * 4, &x));
	CHECK(mdgpu_mem_alloc(g, n * 4, &y));
	CHECK(mdgpu_mem_alloc(g, n * 4, &z));
	CHECK(mdgpu_copy_htod(g, x, a, n * 4));
	CHECK(mdgpu_checksum(g, x, n, &sum));
	if (sum != ref_checksum(a, n)) {
		fprintf(stderr, "mdgpu-spin: checksum %#" PRIx64 " != %#" PRIx64
			"\n", sum, ref_checksum(a, n));
		goto out;
	}
	/* z = x + fill(y, 7), read back, compare word by word. */
	CHECK(mdgpu_fill_u32(g, y, n, 7));
	CHECK(mdgpu_add_u32(g, z, x, y, n));
	CHECK(mdgpu_copy_dtoh(g, b, z, n * 4));
	for (uint64_t i = 0; i < n; i++) {
		if (b[i] != a[i] + 7) {
			fprintf(stderr, "mdgpu-spin: word %" PRIu64 ": %#x != %#x\n",
				i, b[i], a[i] + 7);
			goto out;
		}
		b[i] = a[i] + 7;
	}
	CHECK(mdgpu_checksum(g, z, n, &sum));
	if (sum != ref_checksum(b, n)) {
		fprintf(stderr, "mdgpu-spin: checksum of the sum differs\n");
		goto out;
	}
	printf("mdgpu-spin: vgpu %u (%s): %" PRIu64 " MiB allocated, copies and builtins verified (checksum %#" PRIx64 ")\n",
	       info.vgpu_id, o.type, mib, sum);
	fflush(stdout);

	/* Keep it busy: asynchronous spins keep the ring full (a submit
	 * waits while it is), so the vGPU is always backlogged; errors
	 * surface at the final synchronize. */
	t0 = now_s();
	end = t0 + (double)secs;
	while (!stop && now_s() < end) {
		CHECK(mdgpu_spin_ns(g, spin_us * 1000));
		kernels++;
	}
	CHECK(mdgpu_synchronize(g));
	printf("mdgpu-spin: vgpu %u (%s): %" PRIu64 " kernels of %" PRIu64
	       " us in %.1f s\n", info.vgpu_id, o.type, kernels, spin_us,
	       now_s() - t0);
	ret = 0;
out:
	free(a);
	free(b);
	mdgpu_close(g);	/* frees x, y, z with the vGPU */
	return ret;
usage:
	usage(stderr);
	return 2;
}
