/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libmdgpu internals: the copy between user memory and a staging half of
 * the aperture, split over a pool of helper threads (copy.c).  Independent
 * of the handle, so that tests and tools can drive it on plain buffers.
 */
#ifndef LIBMDGPU_COPY_H
#define LIBMDGPU_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Pieces below this stay one copy on the caller's thread. */
#define MDGPU_PCOPY_MIN		(1UL << 20)
/* Smallest share of one thread; shares start on 4 KiB boundaries of the
 * destination. */
#define MDGPU_PCOPY_SHARE	(256UL << 10)
#define MDGPU_PCOPY_ALIGN	4096UL
/* Most threads (the caller included) one pool runs. */
#define MDGPU_PCOPY_THREADS_MAX	64U
/*
 * How long idle helpers spin before sleeping: longer than the wait between
 * two chunks of one copy (the other half's DMA and a daemon round trip,
 * ~100 us for 4 MiB at 50 GB/s), so a large copy pays no futex wake-up per
 * chunk.  Measured on the H100 machine (4 bw-only runs): 16 MiB h2d
 * 25.5/17.4 GB/s with a 50 us spin, 27.7/26.8 with 1 ms.
 */
#define MDGPU_PCOPY_HELPER_SPIN_US	1000U

struct mdgpu_pool;

/*
 * `helpers` threads besides the caller; spin_us: how long an idle helper
 * (or the caller waiting for the helpers) polls before sleeping on a
 * futex.  NULL when no helper could be started (then copy alone).
 */
struct mdgpu_pool *mdgpu_pool_create(unsigned int helpers, uint32_t spin_us);
/* Stops and joins the helpers.  NULL is fine. */
void mdgpu_pool_destroy(struct mdgpu_pool *p);
/* Threads the pool runs, the caller included (1 for NULL). */
unsigned int mdgpu_pool_threads(const struct mdgpu_pool *p);

/*
 * memcpy(dst, src, n), in shares of the pool's threads when n >=
 * MDGPU_PCOPY_MIN (the caller copies one share itself; returns when all
 * are done).  nt: non-temporal stores into dst (x86-64; elsewhere a
 * memcpy).  p may be NULL: the caller copies alone.  Not reentrant: one
 * caller per pool.
 */
void mdgpu_pool_copy(struct mdgpu_pool *p, void *dst, const void *src,
		     size_t n, bool nt);

/* memcpy with non-temporal stores for the 64-byte aligned body of dst
 * (x86-64; elsewhere a memcpy).  Stores are fenced before it returns. */
void mdgpu_copy_nt(void *dst, const void *src, size_t n);

#endif /* LIBMDGPU_COPY_H */
