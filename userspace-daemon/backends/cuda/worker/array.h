/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* The worker's one growable-array helper. */
#ifndef MDGPUD_WORKER_ARRAY_H
#define MDGPUD_WORKER_ARRAY_H

#include <stddef.h>

/*
 * Makes room for at least `want` elements of `elem_size` bytes in *base,
 * which has room for *cap: the new capacity is the largest of `want`,
 * twice *cap and `first`, clamped to `max` (at least `want`).  New
 * elements are zeroed.  Returns 0, or -ENOMEM (want > max, overflow, no
 * memory) with *base and *cap unchanged.
 */
int mdgpud_worker_array_grow(void **base, size_t *cap, size_t want,
			     size_t elem_size, size_t first, size_t max);

#endif /* MDGPUD_WORKER_ARRAY_H */
