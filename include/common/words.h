/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A word as its index in a list of words: how mdgpud's configuration and
 * the cuda worker's --sandbox argument read an enumeration's values
 * (user space, not ABI: nothing under include/uapi includes it).
 */
#ifndef MDGPU_COMMON_WORDS_H
#define MDGPU_COMMON_WORDS_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* `word` as its index in words[0, n) into *out, or -EINVAL. */
static inline int mdgpu_word_index(const char *word,
				   const char *const *words, size_t n,
				   int *out)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(word, words[i])) {
			*out = (int)i;
			return 0;
		}
	}
	return -EINVAL;
}

#endif /* MDGPU_COMMON_WORDS_H */
