/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Lists of names as MODULE_FUNCS answers them (uapi section 2, ABI 1.5):
 * each name NUL-terminated, one after the other.  Shared by mdgpud, which
 * checks what a cuda worker wrote, and libmdgpu, which checks the
 * daemon's answer (user space, not ABI: nothing under include/uapi
 * includes it).
 */
#ifndef MDGPU_COMMON_NAMES_H
#define MDGPU_COMMON_NAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/*
 * Whether buf[0, len) is whole names, none of them empty (len 0: no
 * name); *count is how many.  Reads nothing outside buf[0, len).
 */
static inline bool mdgpu_names_check(const char *buf, size_t len,
				     uint64_t *count)
{
	const char *p, *end;
	uint64_t n = 0;

	*count = 0;
	if (!len)
		return true;	/* buf may be NULL: no arithmetic on it */
	if (buf[len - 1])
		return false;	/* the last name is cut */
	for (p = buf, end = buf + len; p < end;) {
		/* Found: the last byte is a NUL. */
		const char *nul = memchr(p, '\0', (size_t)(end - p));

		if (nul == p)
			return false;	/* an empty name */
		n++;
		p = nul + 1;
	}
	*count = n;
	return true;
}

#endif /* MDGPU_COMMON_NAMES_H */
