// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmdgpu: copies between pageable user memory and the aperture's staging
 * halves (Documentation/libmdgpu.md, "Pageable copies").
 *
 * One core's memcpy into or out of the aperture is slower than the DMA
 * behind it, so a staging chunk is split over a per-handle pool of helper
 * threads: the caller copies share 0, helper i share i.  A job is handed
 * out by bumping a generation counter; each helper acknowledges every
 * generation.  Both sides spin for MDGPU_PCOPY_HELPER_SPIN_US (or the
 * handle's spin_us if longer), then sleep on a futex, so an idle handle's
 * helpers sleep.  Copies out of the aperture
 * can use non-temporal stores (x86-64), which avoid reading the cold
 * destination lines in first.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "copy.h"
#include "priv.h"

struct mdgpu_helper {
	struct mdgpu_pool *p;
	unsigned int idx;	/* share number, 1..nhelpers */
	pthread_t tid;
};

/* The counters the two sides poll live on their own cache lines. */
struct mdgpu_pool {
	_Alignas(64) uint32_t gen;	/* futex: bumped per job and at stop */
	uint32_t gen_waiters;
	_Alignas(64) uint32_t acks;	/* futex: helpers done, running count */
	uint32_t ack_waiters;
	/* The current job: written by the caller before gen is bumped,
	 * read by the helpers until they acknowledge it. */
	_Alignas(64) uint8_t *dst;
	const uint8_t *src;
	size_t len;
	unsigned int parts;
	bool nt;
	bool stop;
	uint32_t acks_want;	/* the caller's: acks once this job is done */
	uint64_t spin_ns;
	pid_t pid;		/* a fork()ed child has no helpers */
	unsigned int nhelpers;
	struct mdgpu_helper h[];
};

/* ---------------------------------------------------------------- */
/* Non-temporal copy                                                */

#if defined(__x86_64__)
__attribute__((target("avx2")))
static void mdgpu_stream_avx2(uint8_t *d, const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i += 64) {
		__m256i a = _mm256_loadu_si256((const __m256i_u *)(s + i));
		__m256i b = _mm256_loadu_si256((const __m256i_u *)(s + i + 32));

		_mm256_stream_si256((__m256i *)(d + i), a);
		_mm256_stream_si256((__m256i *)(d + i + 32), b);
	}
}

static void mdgpu_stream_sse2(uint8_t *d, const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i += 64) {
		for (size_t j = 0; j < 64; j += 16) {
			__m128i v = _mm_loadu_si128((const __m128i_u *)
						    (s + i + j));

			_mm_stream_si128((__m128i *)(d + i + j), v);
		}
	}
}
#endif

void mdgpu_copy_nt(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t head = (size_t)(-(uintptr_t)d & 63), body;

	if (n < head + 64) {
		memcpy(d, s, n);
		return;
	}
	memcpy(d, s, head);
	d += head;
	s += head;
	n -= head;
	body = n & ~(size_t)63;
	if (__builtin_cpu_supports("avx2"))
		mdgpu_stream_avx2(d, s, body);
	else
		mdgpu_stream_sse2(d, s, body);
	_mm_sfence();
	memcpy(d + body, s + body, n - body);
#else
	memcpy(dst, src, n);
#endif
}

static void mdgpu_copy_piece(void *dst, const void *src, size_t n, bool nt)
{
	if (nt)
		mdgpu_copy_nt(dst, src, n);
	else
		memcpy(dst, src, n);
}

/* ---------------------------------------------------------------- */
/* Futex-backed counters                                            */

/* Wait until *w != old: spin for spin_ns, then sleep.  The new value. */
static uint32_t mdgpu_pool_wait(uint32_t *w, uint32_t *waiters, uint32_t old,
				uint64_t spin_ns)
{
	uint64_t until = mdgpu_now_ns() + spin_ns;
	unsigned int iter = 0;
	uint32_t v;

	while ((v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) == old &&
	       ((++iter & 63) || mdgpu_now_ns() < until))
		mdgpu_cpu_relax();
	while (v == old) {
		/* The poster bumps *w, then reads *waiters: either it sees
		 * us and wakes, or the kernel sees the new *w. */
		__atomic_add_fetch(waiters, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, old, NULL, NULL, 0);
		__atomic_sub_fetch(waiters, 1, __ATOMIC_RELAXED);
		v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
	}
	return v;
}

static void mdgpu_pool_post(uint32_t *w, uint32_t *waiters)
{
	__atomic_add_fetch(w, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(waiters, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL,
			0);
}

/* ---------------------------------------------------------------- */
/* The pool                                                         */

/* Offset of share i of parts: the destination's 4 KiB boundary at or
 * below i / parts of the way (shares are >= MDGPU_PCOPY_SHARE, so every
 * share is non-empty). */
static size_t mdgpu_share_start(const struct mdgpu_pool *p, unsigned int i)
{
	uintptr_t d = (uintptr_t)p->dst;
	size_t off;

	if (i == 0 || i >= p->parts)
		return i ? p->len : 0;
	off = p->len / p->parts * i;
	return (size_t)(((d + off) & ~(MDGPU_PCOPY_ALIGN - 1)) - d);
}

static void mdgpu_pool_share(const struct mdgpu_pool *p, unsigned int i)
{
	size_t s, e;

	if (i >= p->parts)
		return;
	s = mdgpu_share_start(p, i);
	e = mdgpu_share_start(p, i + 1);
	mdgpu_copy_piece(p->dst + s, p->src + s, e - s, p->nt);
}

static void *mdgpu_pool_helper(void *arg)
{
	struct mdgpu_helper *h = arg;
	struct mdgpu_pool *p = h->p;
	uint32_t seen = 0;

	for (;;) {
		seen = mdgpu_pool_wait(&p->gen, &p->gen_waiters, seen,
				       p->spin_ns);
		if (p->stop)
			return NULL;
		mdgpu_pool_share(p, h->idx);
		mdgpu_pool_post(&p->acks, &p->ack_waiters);
	}
}

/* Hand out the current job, copy share 0, wait for every helper. */
static void mdgpu_pool_run(struct mdgpu_pool *p)
{
	uint32_t v;

	p->acks_want += p->nhelpers;
	mdgpu_pool_post(&p->gen, &p->gen_waiters);
	mdgpu_pool_share(p, 0);
	v = __atomic_load_n(&p->acks, __ATOMIC_ACQUIRE);
	while (v != p->acks_want)
		v = mdgpu_pool_wait(&p->acks, &p->ack_waiters, v, p->spin_ns);
}

/* Helper threads take no signals: the application's threads do. */
static void mdgpu_pool_start(struct mdgpu_pool *p, unsigned int helpers)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned int i = 0; i < helpers; i++) {
		struct mdgpu_helper *h = &p->h[p->nhelpers];

		h->p = p;
		h->idx = p->nhelpers + 1;
		if (pthread_create(&h->tid, NULL, mdgpu_pool_helper, h))
			break;
		pthread_setname_np(h->tid, "mdgpu-copy");
		p->nhelpers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

struct mdgpu_pool *mdgpu_pool_create(unsigned int helpers, uint32_t spin_us)
{
	struct mdgpu_pool *p;
	size_t size;

	if (helpers > MDGPU_PCOPY_THREADS_MAX - 1)
		helpers = MDGPU_PCOPY_THREADS_MAX - 1;
	if (!helpers)
		return NULL;
	size = sizeof(*p) + helpers * sizeof(p->h[0]);
	size = (size + 63) & ~(size_t)63;
	p = aligned_alloc(64, size);
	if (!p)
		return NULL;
	memset(p, 0, size);
	p->spin_ns = (spin_us > MDGPU_PCOPY_HELPER_SPIN_US ?
		      spin_us : MDGPU_PCOPY_HELPER_SPIN_US) * 1000ULL;
	p->pid = getpid();
	mdgpu_pool_start(p, helpers);
	if (!p->nhelpers) {
		free(p);
		return NULL;
	}
	return p;
}

void mdgpu_pool_destroy(struct mdgpu_pool *p)
{
	if (!p)
		return;
	if (p->pid == getpid()) {
		p->stop = true;
		mdgpu_pool_post(&p->gen, &p->gen_waiters);
		for (unsigned int i = 0; i < p->nhelpers; i++)
			pthread_join(p->h[i].tid, NULL);
	}
	free(p);
}

unsigned int mdgpu_pool_threads(const struct mdgpu_pool *p)
{
	return p ? p->nhelpers + 1 : 1;
}

void mdgpu_pool_copy(struct mdgpu_pool *p, void *dst, const void *src,
		     size_t n, bool nt)
{
	size_t parts = n / MDGPU_PCOPY_SHARE;

	if (!p || n < MDGPU_PCOPY_MIN || p->pid != getpid()) {
		mdgpu_copy_piece(dst, src, n, nt);
		return;
	}
	p->dst = dst;
	p->src = src;
	p->len = n;
	p->nt = nt;
	p->parts = parts < p->nhelpers + 1 ? (unsigned int)parts :
					     p->nhelpers + 1;
	mdgpu_pool_run(p);
}

/* ---------------------------------------------------------------- */
/* The handle's side                                                */

unsigned long mdgpu_env_ulong(const char *name)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (!v || !*v)
		return 0;
	errno = 0;
	x = strtoul(v, &end, 10);
	return errno || *end ? 0 : x;
}

/* Half the CPUs this thread may run on, 1..4. */
static uint32_t mdgpu_copy_threads_default(void)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (!sched_getaffinity(0, sizeof(set), &set))
		n = CPU_COUNT(&set);
	n /= 2;
	return n < 1 ? 1 : n > 4 ? 4 : (uint32_t)n;
}

void mdgpu_copy_init(struct mdgpu *g, const struct mdgpu_open_opts *o)
{
	const char *nt = getenv("MDGPU_COPY_NT");
	uint32_t n = o->copy_threads;

	if (!n)
		n = (uint32_t)mdgpu_env_ulong("MDGPU_COPY_THREADS");
	if (!n)
		n = mdgpu_copy_threads_default();
	g->copy_threads = n < MDGPU_PCOPY_THREADS_MAX ? n :
						     MDGPU_PCOPY_THREADS_MAX;
	g->copy_nt = MDGPU_NT_OUT;
	if (nt && *nt >= '0' && *nt <= '3' && !nt[1])
		g->copy_nt = (uint32_t)(*nt - '0');
}

void mdgpu_copy_fini(struct mdgpu *g)
{
	mdgpu_pool_destroy(g->pool);
	g->pool = NULL;
}

bool mdgpu_stage_nt(const struct mdgpu *g, uint32_t dir, uint64_t total)
{
	return (g->copy_nt & dir) && total >= MDGPU_NT_MIN;
}

void mdgpu_stage_copy(struct mdgpu *g, void *dst, const void *src,
		      uint64_t n, bool nt)
{
	/* The helpers start with the first chunk that they would share. */
	if (!g->pool_tried && n >= MDGPU_PCOPY_MIN && g->copy_threads > 1) {
		g->pool_tried = true;
		g->pool = mdgpu_pool_create(g->copy_threads - 1, g->spin_us);
	}
	mdgpu_pool_copy(g->pool, dst, src, (size_t)n, nt);
}
