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

#endif /* MDGPUD_CUDA_BACKEND_H */
