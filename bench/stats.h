/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Order statistics and fairness figures of mdgpu-bench. */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stddef.h>

/* Sorts v in place; q in [0, 1], nearest-rank.  NaN when n is 0. */
double bench_quantile(double *v, size_t n, double q);
static inline double bench_median(double *v, size_t n)
{
	return bench_quantile(v, n, 0.5);
}
/* Jain's index (sum x)^2 / (n * sum x^2): 1 when all x are equal. */
double bench_jain(const double *x, size_t n);

#endif /* BENCH_STATS_H */
