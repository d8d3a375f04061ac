// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The worker's one growable-array helper. */
#include "array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int mdgpud_worker_array_grow(void **base, size_t *cap, size_t want,
			     size_t elem_size, size_t first, size_t max)
{
	size_t ncap = *cap;
	void *n;

	if (want <= *cap)
		return 0;
	if (!elem_size || want > max || want > SIZE_MAX / elem_size)
		return -ENOMEM;
	ncap = ncap > SIZE_MAX / 2 ? SIZE_MAX : ncap * 2;
	if (ncap < first)
		ncap = first;
	if (ncap > max)
		ncap = max;
	if (ncap > SIZE_MAX / elem_size)
		ncap = SIZE_MAX / elem_size;
	if (ncap < want)
		ncap = want;
	n = realloc(*base, ncap * elem_size);
	if (!n)
		return -ENOMEM;
	memset((char *)n + *cap * elem_size, 0, (ncap - *cap) * elem_size);
	*base = n;
	*cap = ncap;
	return 0;
}
