/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Extras of the cuda backend beyond struct mdgpud_backend_ops, for tests
 * and diagnostics.
 */
#ifndef MDGPUD_CUDA_BACKEND_H
#define MDGPUD_CUDA_BACKEND_H

#include <sys/types.h>

struct mdgpud_bctx;

/* The worker process of a cuda context, or -1 once it is gone. */
pid_t mdgpud_backend_cuda_worker_pid(const struct mdgpud_bctx *ctx);

#include <stdint.h>

/*
 * Worker-side timing, collected only when MDGPUD_CUDA_STATS=1 was set at
 * open(): requests executed, ns spent executing them, and ns from one
 * request's start to the next one's while the worker was not waiting for
 * work (busy_ns - exec_ns is the ring's own cost).  -ENODATA when off.
 */
int mdgpud_backend_cuda_worker_stats(const struct mdgpud_bctx *ctx,
				     uint64_t *requests, uint64_t *exec_ns,
				     uint64_t *busy_ns);

/* How many expect_work hints the worker spun in, after sleeping to the
 * window's start (cuda_rpc.h); for tests. */
uint64_t mdgpud_backend_cuda_hint_spins(const struct mdgpud_bctx *ctx);

#endif /* MDGPUD_CUDA_BACKEND_H */
