// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmdgpu's pageable copies (libmdgpu/copy.c): the non-temporal copy and
 * the helper pool on plain buffers, then mdgpu_copy_htod/dtoh round trips
 * through mdgpud (sim backend, in a thread of this process) over the
 * socket transport with 1, 2 and 4 copy threads, and large launch
 * parameters sharing the staging area with them.  Byte-exact checks only,
 * nothing depends on timing.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "libmdgpu/copy.h"
#include "libmdgpu/priv.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

#define KIB (1ULL << 10)
#define MIB (1ULL << 20)
#define GUARD 4096		/* bytes checked on each side of a copy */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(uint8_t *p, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v = rnd();

		memcpy(p + i, &v, 8);
	}
	for (; i < n; i++)
		p[i] = (uint8_t)rnd();
}

/* A buffer with GUARD bytes of 0xA5 on either side of `n` bytes at `off`
 * from a page boundary. */
struct gbuf {
	uint8_t *base;
	uint8_t *p;
	size_t n;
};

static void gbuf_init(struct gbuf *b, size_t n, size_t off)
{
	b->base = aligned_alloc(4096, (GUARD + off + n + GUARD + 4095) &
				~(size_t)4095);
	assert_non_null(b->base);
	b->p = b->base + GUARD + off;
	b->n = n;
	memset(b->p - GUARD, 0xA5, GUARD + n + GUARD);
}

static void gbuf_check_guards(const struct gbuf *b)
{
	for (size_t i = 0; i < GUARD; i++) {
		assert_int_equal(b->p[-(ptrdiff_t)GUARD + (ptrdiff_t)i], 0xA5);
		assert_int_equal(b->p[b->n + i], 0xA5);
	}
}

/* Copy n bytes from src+soff to dst+doff with the pool (or NT copy) and
 * check every byte and the guards. */
static void check_copy(struct mdgpu_pool *p, size_t n, size_t soff,
		       size_t doff, int how)
{
	struct gbuf s, d;

	gbuf_init(&s, n, soff);
	gbuf_init(&d, n, doff);
	fill_random(s.p, n);
	if (how == 2)
		mdgpu_copy_nt(d.p, s.p, n);
	else
		mdgpu_pool_copy(p, d.p, s.p, n, how == 1);
	if (n)
		assert_memory_equal(d.p, s.p, n);
	gbuf_check_guards(&d);
	free(s.base);
	free(d.base);
}

/* Every small size and every destination misalignment of a cache line. */
static void test_copy_nt_small(void **state)
{
	(void)state;
	for (size_t n = 0; n <= 300; n++)
		for (size_t doff = 0; doff < 64; doff++)
			check_copy(NULL, n, (n + doff) % 17, doff, 2);
}

static void test_copy_nt_large(void **state)
{
	static const size_t sizes[] = { 4096, 4097, 65536 + 13, MIB + 7,
					3 * MIB };

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t doff = 0; doff < 130; doff += 13)
			check_copy(NULL, sizes[i], doff / 2, doff, 2);
}

/* The pool on plain buffers: sizes around the thresholds, misaligned
 * ends, plain and non-temporal stores, 0 (no pool), 1 and 3 helpers. */
static void test_pool_copy(void **state)
{
	static const size_t sizes[] = {
		0, 1, 4095, 64 * KIB + 3, MDGPU_PCOPY_MIN - 1,
		MDGPU_PCOPY_MIN, MDGPU_PCOPY_MIN + 1, MDGPU_PCOPY_MIN + 4097,
		3 * MIB + 17, 4 * MIB - 32 * KIB, 9 * MIB + 123,
	};
	static const size_t offs[] = { 0, 1, 63, 64, 4095, 4096 + 7 };
	static const unsigned int helpers[] = { 0, 1, 3 };

	(void)state;
	for (size_t h = 0; h < 3; h++) {
		struct mdgpu_pool *p = mdgpu_pool_create(helpers[h], 50);

		assert_int_equal(mdgpu_pool_threads(p), helpers[h] + 1);
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			for (size_t o = 0; o < 6; o++)
				check_copy(p, sizes[i], offs[(o + i) % 6],
					   offs[o], (int)((o + i + h) & 1));
		mdgpu_pool_destroy(p);
	}
	mdgpu_pool_destroy(NULL);
}

/* Many jobs in a row, helpers asleep in between (spin 0). */
static void test_pool_many_jobs(void **state)
{
	struct mdgpu_pool *p = mdgpu_pool_create(2, 0);
	const size_t n = 2 * MIB + 333;
	uint8_t *s = malloc(n), *d = malloc(n);

	(void)state;
	fill_random(s, n);
	for (int i = 0; i < 200; i++) {
		size_t len = n - (size_t)(rnd() % (MIB + 1));

		memset(d, 0, n);
		mdgpu_pool_copy(p, d, s, len, i & 1);
		assert_memory_equal(d, s, len);
		for (size_t k = len; k < n; k++)
			assert_int_equal(d[k], 0);
	}
	mdgpu_pool_destroy(p);
	free(s);
	free(d);
}

/* A fork()ed child has no helpers: it copies alone and frees the pool. */
static void test_pool_fork(void **state)
{
	struct mdgpu_pool *p = mdgpu_pool_create(3, 50);
	const size_t n = 4 * MIB + 5;
	uint8_t *s = malloc(n), *d = malloc(n);
	int st = 0;
	pid_t pid;

	(void)state;
	fill_random(s, n);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		mdgpu_pool_copy(p, d, s, n, true);
		mdgpu_pool_destroy(p);
		_exit(memcmp(d, s, n) ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	mdgpu_pool_copy(p, d, s, n, false);
	assert_memory_equal(d, s, n);
	mdgpu_pool_destroy(p);
	free(s);
	free(d);
}

/* ---------------------------------------------------------------- */
/* Through mdgpud                                                   */

#include "sim_daemon.h"

static int setup(void **state)
{
	mdgpud_log_set(MDGPUD_LOG_WARN, NULL, NULL);
	return sim_daemon_setup(state, "copy", 1024, 0600);
}

static int teardown(void **state)
{
	return sim_daemon_teardown(state);
}

static struct mdgpu *open_threads(struct daemon *d, uint32_t threads)
{
	struct mdgpu_open_opts o = { .path = d->path, .type = "1g",
				     .copy_threads = threads };
	struct mdgpu *g = NULL;

	assert_int_equal(mdgpu_open(&o, &g), 0);
	if (threads)
		assert_int_equal(g->copy_threads, threads);
	return g;
}

static uint64_t ref_checksum(const uint8_t *p, uint64_t words)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < words; i++) {
		uint32_t w;

		memcpy(&w, p + i * 4, 4);
		s += (uint64_t)w * (2 * i + 1);
	}
	return s;
}

#define DEV_BYTES (40 * MIB)

/*
 * htod `n` bytes from a buffer at host offset hoff to x + doff, check the
 * device's copy by checksum when it is word-aligned, dtoh it back into a
 * guarded buffer at another offset and compare every byte.
 */
static void roundtrip(struct mdgpu *g, mdgpu_devptr x, size_t n, size_t hoff,
		      size_t doff, size_t roff)
{
	struct gbuf s, r;
	uint64_t sum;

	gbuf_init(&s, n, hoff);
	gbuf_init(&r, n, roff);
	fill_random(s.p, n);
	assert_int_equal(mdgpu_copy_htod(g, x + doff, s.p, n), 0);
	if (!(doff % 4) && n >= 4 && n <= 8 * MIB) {
		assert_int_equal(mdgpu_checksum(g, x + doff, n / 4, &sum), 0);
		assert_int_equal(sum, ref_checksum(s.p, n / 4));
	}
	assert_int_equal(mdgpu_copy_dtoh(g, r.p, x + doff, n), 0);
	if (n)
		assert_memory_equal(r.p, s.p, n);
	gbuf_check_guards(&r);
	gbuf_check_guards(&s);
	free(s.base);
	free(r.base);
}

static void roundtrips(struct daemon *d, uint32_t threads)
{
	struct mdgpu *g = open_threads(d, threads);
	const size_t stage = (size_t)g->stage_size;
	const size_t fixed[] = {
		0, 1, 3, 4096, 64 * KIB + 3, MDGPU_PCOPY_MIN - 1,
		MDGPU_PCOPY_MIN, stage - 1, stage, stage + 1, 2 * stage + 5,
		MDGPU_NT_MIN - 1, MDGPU_NT_MIN, 17 * MIB + 13,
	};
	mdgpu_devptr x;

	assert_int_equal(mdgpu_mem_alloc(g, DEV_BYTES, &x), 0);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		roundtrip(g, x, fixed[i], i % 3 ? i * 7 : 0, i * 4, i * 13);
	for (int i = 0; i < 12; i++) {
		size_t n = (size_t)(rnd() % (3 * stage));

		roundtrip(g, x, n, (size_t)(rnd() % 4096),
			  (size_t)(rnd() % (DEV_BYTES - n + 1)),
			  (size_t)(rnd() % 4096));
	}
	/* Helpers started with the first large chunk, when asked for. */
	assert_int_equal(mdgpu_pool_threads(g->pool), threads);
	assert_int_equal(mdgpu_mem_free(g, x), 0);
	mdgpu_close(g);
}

static void test_roundtrip_1(void **state)
{
	roundtrips(*state, 1);
}

static void test_roundtrip_2(void **state)
{
	roundtrips(*state, 2);
}

static void test_roundtrip_4(void **state)
{
	roundtrips(*state, 4);
}

/* Non-temporal stores in both directions, and in neither. */
static void test_roundtrip_nt(void **state)
{
	setenv("MDGPU_COPY_NT", "3", 1);
	roundtrips(*state, 4);
	setenv("MDGPU_COPY_NT", "0", 1);
	roundtrips(*state, 2);
	unsetenv("MDGPU_COPY_NT");
}

/* Thread count: option, else the environment, else a default in 1..4;
 * small copies start no helpers. */
static void test_threads_option(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *g;
	mdgpu_devptr x;
	uint8_t *buf = calloc(1, 2 * MIB);

	setenv("MDGPU_COPY_THREADS", "3", 1);
	g = open_threads(d, 0);
	assert_int_equal(g->copy_threads, 3);
	mdgpu_close(g);
	g = open_threads(d, 2);		/* the option wins */
	mdgpu_close(g);
	setenv("MDGPU_COPY_THREADS", "junk", 1);
	g = open_threads(d, 0);
	assert_in_range(g->copy_threads, 1, 4);
	mdgpu_close(g);
	unsetenv("MDGPU_COPY_THREADS");

	g = open_threads(d, 4);
	assert_int_equal(mdgpu_mem_alloc(g, 2 * MIB, &x), 0);
	assert_int_equal(mdgpu_copy_htod(g, x, buf, MDGPU_PCOPY_MIN - 1), 0);
	assert_int_equal(mdgpu_copy_dtoh(g, buf, x, 64 * KIB), 0);
	assert_null(g->pool);
	assert_int_equal(mdgpu_copy_dtoh(g, buf, x, 2 * MIB), 0);
	assert_int_equal(mdgpu_pool_threads(g->pool), 4);
	mdgpu_close(g);		/* joins the helpers */
	free(buf);
}

/* A chunk the daemon refuses: the copy fails, the staging halves are
 * drained, the handle keeps working. */
static void test_copy_errors(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *g = open_threads(d, 4);
	const size_t n = 12 * MIB + 5;
	uint8_t *buf = calloc(1, n);
	mdgpu_devptr x;

	assert_int_equal(mdgpu_mem_alloc(g, 16 * MIB, &x), 0);
	/* The first chunks fit, a later one runs past the allocation. */
	assert_int_equal(mdgpu_copy_htod(g, x + 8 * MIB, buf, n), -ERANGE);
	assert_int_equal(mdgpu_copy_dtoh(g, buf, x + 8 * MIB, n), -ERANGE);
	assert_int_equal(mdgpu_copy_htod(g, 0xdead0000, buf, n), -ENOENT);
	assert_int_equal(mdgpu_copy_dtoh(g, buf, 0xdead0000, n), -ENOENT);
	roundtrip(g, x, 16 * MIB, 5, 0, 9);
	roundtrip(g, x, 5 * MIB + 1, 0, 3, 0);
	mdgpu_close(g);
	free(buf);
}

/*
 * Launch parameters past a 4 KiB slot (ABI 1.6) take a copy staging half:
 * refused before anything is queued above MDGPU_PARAMS_MAX, or above
 * 4096 bytes when the daemon states an older minor (as a 1.5 daemon's
 * welcome would); queued large launches hold their half only until the
 * daemon took them, so copies through staging stay byte-exact.  The sim
 * has no functions: each launch fails -ENOENT, kept for the next sync.
 */
static void test_launch_params_large(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *g = open_threads(d, 1);
	struct mdgpu_launch_cfg cfg = { .grid = { 1, 1, 1 },
					.block = { 1, 1, 1 } };
	uint8_t *blob = calloc(1, MDGPU_PARAMS_MAX + 1);
	uint32_t abi = g->info.abi_version, tail = g->tail;
	mdgpu_devptr x;

	assert_non_null(blob);
	assert_int_equal(abi & 0xffff, MDGPU_ABI_MINOR);
	assert_int_equal(mdgpu_launch_ex(g, 1, &cfg, blob,
					 MDGPU_PARAMS_MAX + 1), -E2BIG);
	assert_int_equal(g->tail, tail);		/* nothing queued */

	g->info.abi_version = MDGPU_ABI_MAJOR << 16 | 5;
	assert_int_equal(mdgpu_launch_ex(g, 1, &cfg, blob,
					 MDGPU_PARAMS_MAX_1_5 + 1), -E2BIG);
	assert_non_null(strstr(mdgpu_last_error(g), "ABI 1.5"));
	assert_int_equal(g->tail, tail);
	assert_int_equal(mdgpu_launch_ex(g, 1, &cfg, blob,
					 MDGPU_PARAMS_MAX_1_5), 0);
	assert_int_equal(g->tail, tail + 1);		/* a slot, as before */
	assert_int_equal(mdgpu_synchronize(g), -ENOENT);
	g->info.abi_version = abi;

	assert_int_equal(mdgpu_mem_alloc(g, DEV_BYTES, &x), 0);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(mdgpu_launch_ex(g, 1, &cfg, blob,
						 MDGPU_PARAMS_MAX), 0);
		assert_true(g->stage_busy[i & 1] && g->stage_launch[i & 1]);
		if (i % 2)
			roundtrip(g, x, (size_t)g->stage_size + 7, 3, 0, 5);
	}
	assert_int_equal(mdgpu_synchronize(g), -ENOENT);
	roundtrip(g, x, 3 * 4096 + 1, 0, 8, 0);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(mdgpu_mem_free(g, x), 0);
	mdgpu_close(g);
	free(blob);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_nt_small),
		cmocka_unit_test(test_copy_nt_large),
		cmocka_unit_test(test_pool_copy),
		cmocka_unit_test(test_pool_many_jobs),
		cmocka_unit_test(test_pool_fork),
		cmocka_unit_test_setup_teardown(test_roundtrip_1, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_2, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_4, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_nt, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_threads_option, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_launch_params_large,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy_errors, setup,
						teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
