// SPDX-License-Identifier: GPL-2.0 OR MIT
#include "stats.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_quantile(double *v, size_t n, double q)
{
	size_t rank;

	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	if (q <= 0)
		return v[0];
	if (q >= 1)
		return v[n - 1];
	/* Nearest rank: the smallest value with at least q of the data at
	 * or below it. */
	rank = (size_t)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	if (n % 2 == 0 && q == 0.5)	/* conventional median of an even set */
		return (v[n / 2 - 1] + v[n / 2]) / 2;
	return v[rank - 1];
}

double bench_jain(const double *x, size_t n)
{
	double s = 0, s2 = 0;

	for (size_t i = 0; i < n; i++) {
		s += x[i];
		s2 += x[i] * x[i];
	}
	if (n == 0 || s2 == 0)
		return NAN;
	return s * s / ((double)n * s2);
}
