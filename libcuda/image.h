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

enum mdgpu_cu_image_kind {
	MDGPU_CU_IMAGE_PTX = 1,		/* NUL-terminated text */
	MDGPU_CU_IMAGE_ELF = 2,		/* ELF64 cubin */
	MDGPU_CU_IMAGE_FATBIN = 3,	/* fatbin: header and entries */
	MDGPU_CU_IMAGE_WRAPPER = 4,	/* nvcc's wrapper of a fatbin */
};

/*
 * Kind and size in bytes of the image at `image`, reading no more than
 * `max` bytes: PTX up to and including its NUL; an ELF64 cubin up to the
 * end of the furthest of its header, program header table, section header
 * table and section contents; a fatbin its 16-byte header (version 1)
 * plus the entry bytes the header counts.  -EINVAL: not an image (an ELF
 * of another class or with bad header sizes, a fatbin header of another
 * version, text without a NUL within max); -E2BIG: larger than max;
 * -EOPNOTSUPP: a fatbin wrapper (*kind is set; mdgpu_cu_fatbin_unwrap).
 */
int mdgpu_cu_image_size(const void *image, size_t max,
			enum mdgpu_cu_image_kind *kind, size_t *size);

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
