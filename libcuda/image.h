/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libcuda: what a module image is and how long, and the parameter layout
 * of a PTX kernel.  Pure functions over memory, unit-tested on their own
 * (libcuda/tests/test_image.c).
 */
#ifndef MDGPU_CU_IMAGE_H
#define MDGPU_CU_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/cu_image.h"

/*
 * The fatbin a wrapper (MDGPU_CU_IMAGE_WRAPPER) points to, or NULL for a
 * wrapper of another version.  Version 1 wraps one translation unit's
 * fatbin.  Version 2 is what a program built with -rdc registers
 * (crt/link.stub): its data is the fatbin nvlink produced, already
 * device-linked, and its second pointer lists the translation units'
 * prelinked fatbins, which a driver needs only to JIT-link again when the
 * linked fatbin has no code for the GPU.  The linked fatbin is what is
 * loaded; without code for the GPU the load fails
 * (CUDA_ERROR_NO_BINARY_FOR_GPU from the host driver), never silently.
 */
const void *mdgpu_cu_fatbin_unwrap(const void *wrapper);

struct mdgpu_cu_param {
	uint32_t offset;
	uint32_t size;
};

struct mdgpu_cu_layout {
	uint32_t count;
	uint32_t bytes;			/* offset + size of the last one */
	struct mdgpu_cu_param *params;	/* count entries, malloc'd */
};

/*
 * Parameter layout of `.entry name(...)` in the PTX text ptx[0..len),
 * placed as the PTX ISA places kernel parameters: each at the next
 * multiple of its alignment (.align N, else its element size), its size
 * the element size times the array length.  -ENOENT: no such entry;
 * -EOPNOTSUPP: a parameter this parser does not know (.texref and the
 * like); -EINVAL: malformed list; -E2BIG: more than max_bytes in all;
 * -ENOMEM.  Free with mdgpu_cu_layout_free().
 */
int mdgpu_cu_ptx_layout(const char *ptx, size_t len, const char *name,
			uint32_t max_bytes, struct mdgpu_cu_layout *out);
void mdgpu_cu_layout_free(struct mdgpu_cu_layout *l);

#endif /* MDGPU_CU_IMAGE_H */
