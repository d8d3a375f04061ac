/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What a module image is and how long: shared by libcuda, which finds
 * the length of an image cuModuleLoadData is given without one, and by
 * mdgpud-worker, which checks every image a tenant sends before the host
 * driver parses it (user space, not ABI).
 *
 * PTX is text up to its NUL; a cubin is an ELF64 file whose extent its
 * headers give; a fatbin is its header and the entries the header
 * counts, each entry its own header and payload, the entries tiling
 * those bytes exactly.  Everything is read within the bound given:
 * NVIDIA's loader takes an image without its length and trusts its
 * headers (a fatbin of zeroed entries kept cuModuleLoadData busy for
 * more than 60 s on the H100, driver 580), so what reaches it must be
 * whole by its own headers.
 */
#ifndef MDGPU_COMMON_CU_IMAGE_H
#define MDGPU_COMMON_CU_IMAGE_H

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum mdgpu_cu_image_kind {
	MDGPU_CU_IMAGE_PTX = 1,		/* NUL-terminated text */
	MDGPU_CU_IMAGE_ELF = 2,		/* ELF64 cubin */
	MDGPU_CU_IMAGE_FATBIN = 3,	/* fatbin: header and entries */
	MDGPU_CU_IMAGE_WRAPPER = 4,	/* nvcc's wrapper of a fatbin */
};

/* First word of a fatbin (its header) and of the wrapper nvcc emits in
 * .nvFatBinSegment; little-endian in the image, as on the hosts built
 * for. */
#define MDGPU_CU_FATBIN_MAGIC		0xba55ed50U
#define MDGPU_CU_FATBIN_WRAPPER_MAGIC	0x466243b1U

/* The fatbin header (fatbinary_section.h's layout): entries follow it. */
struct mdgpu_cu_fatbin_header {
	uint32_t magic;
	uint16_t version;		/* 1 */
	uint16_t header_size;		/* bytes, >= sizeof(this) */
	uint64_t fat_size;		/* bytes of entries after the header */
};

/* nvcc's wrapper (__fatBinC_Wrapper_t) in .nvFatBinSegment. */
struct mdgpu_cu_fatbin_wrapper {
	uint32_t magic;
	uint32_t version;		/* 1: data is the fatbin; 2: data is
					 * nvlink's device-linked fatbin */
	const void *data;
	const void *filename_or_fatbins;
};

/* end = max(end, off + n * entsize), overflow-checked; false on overflow. */
static inline bool mdgpu_cu_extent(uint64_t *end, uint64_t off,
				   uint64_t n, uint64_t entsize)
{
	uint64_t bytes, e;

	if (__builtin_mul_overflow(n, entsize, &bytes) ||
	    __builtin_add_overflow(off, bytes, &e))
		return false;
	if (e > *end)
		*end = e;
	return true;
}

static inline int mdgpu_cu_elf_size(const unsigned char *p, size_t max,
				    size_t *size)
{
	Elf64_Ehdr eh;
	uint64_t end = sizeof(eh);

	if (max < sizeof(eh))
		return -EINVAL;
	memcpy(&eh, p, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_ehsize != sizeof(Elf64_Ehdr) ||
	    (eh.e_phnum && eh.e_phentsize != sizeof(Elf64_Phdr)) ||
	    (eh.e_shnum && eh.e_shentsize != sizeof(Elf64_Shdr)))
		return -EINVAL;
	if (!mdgpu_cu_extent(&end, eh.e_phoff, eh.e_phnum,
			     sizeof(Elf64_Phdr)) ||
	    !mdgpu_cu_extent(&end, eh.e_shoff, eh.e_shnum,
			     sizeof(Elf64_Shdr)))
		return -EINVAL;
	if (end > max)
		return -E2BIG;
	/* Section headers are inside max now: their contents extend it. */
	for (uint16_t i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;

		memcpy(&sh, p + eh.e_shoff + (uint64_t)i * sizeof(sh),
		       sizeof(sh));
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (!mdgpu_cu_extent(&end, sh.sh_offset, 1, sh.sh_size))
			return -EINVAL;
	}
	for (uint16_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, p + eh.e_phoff + (uint64_t)i * sizeof(ph),
		       sizeof(ph));
		if (!mdgpu_cu_extent(&end, ph.p_offset, 1, ph.p_filesz))
			return -EINVAL;
	}
	if (end > max)
		return -E2BIG;
	*size = end;
	return 0;
}

/*
 * The header of one fatbin entry (the fields every version has): a
 * payload of `size` bytes follows its header_size bytes of header.
 */
struct mdgpu_cu_fatbin_entry {
	uint16_t kind;			/* 1 PTX, 2 ELF, others */
	uint16_t version;
	uint32_t header_size;		/* bytes, >= sizeof(this) */
	uint64_t size;			/* payload bytes after the header */
};

static inline int mdgpu_cu_fatbin_size(const unsigned char *p, size_t max,
				       size_t *size)
{
	struct mdgpu_cu_fatbin_header h;
	uint64_t end, off;

	if (max < sizeof(h))
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	if (h.version != 1 || h.header_size < sizeof(h) || !h.fat_size)
		return -EINVAL;
	if (__builtin_add_overflow(h.fat_size, (uint64_t)h.header_size, &end))
		return -EINVAL;
	if (end > max)
		return -E2BIG;
	/* Each entry's header is at least 16 bytes: the walk advances. */
	for (off = h.header_size; off < end;) {
		struct mdgpu_cu_fatbin_entry e;
		uint64_t next;

		if (end - off < sizeof(e))
			return -EINVAL;
		memcpy(&e, p + off, sizeof(e));
		if (e.header_size < sizeof(e) ||
		    __builtin_add_overflow(off, (uint64_t)e.header_size,
					   &next) ||
		    __builtin_add_overflow(next, e.size, &next) || next > end)
			return -EINVAL;
		off = next;
	}
	*size = end;
	return 0;
}

/*
 * Does the image start with the n bytes of magic.  Byte by byte, stopping
 * at the first difference: a short PTX text ends in a NUL, which no magic
 * contains, so nothing past its end is read.
 */
static inline bool mdgpu_cu_starts(const unsigned char *p,
				   const unsigned char *magic, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != magic[i])
			return false;
	return true;
}

/*
 * Kind and size in bytes of the image at `image`, reading no more than
 * `max` bytes: PTX up to and including its NUL; an ELF64 cubin up to the
 * end of the furthest of its header, program header table, section header
 * table and section contents; a fatbin its 16-byte header (version 1)
 * plus the entry bytes the header counts, which whole entries must fill.
 * -EINVAL: not an image (an ELF of another class or with bad header
 * sizes, a fatbin header of another version, no entry, or an entry
 * reaching past the others' end, text without a NUL within max...);
 * -E2BIG: larger than max; -EOPNOTSUPP: a fatbin wrapper (*kind is set;
 * its pointers are the caller's to follow, libcuda's
 * mdgpu_cu_fatbin_unwrap).
 */
static inline int mdgpu_cu_image_size(const void *image, size_t max,
				      enum mdgpu_cu_image_kind *kind,
				      size_t *size)
{
	const unsigned char *p = image;
	const uint32_t fb_magic = MDGPU_CU_FATBIN_MAGIC;
	const uint32_t wrap_magic = MDGPU_CU_FATBIN_WRAPPER_MAGIC;
	unsigned char fb[4], wrap[4];
	size_t n;

	if (!image || max < sizeof(fb))
		return -EINVAL;
	memcpy(fb, &fb_magic, sizeof(fb));
	memcpy(wrap, &wrap_magic, sizeof(wrap));
	if (mdgpu_cu_starts(p, fb, sizeof(fb))) {
		*kind = MDGPU_CU_IMAGE_FATBIN;
		return mdgpu_cu_fatbin_size(p, max, size);
	}
	if (mdgpu_cu_starts(p, wrap, sizeof(wrap))) {
		*kind = MDGPU_CU_IMAGE_WRAPPER;
		return -EOPNOTSUPP;
	}
	if (mdgpu_cu_starts(p, (const unsigned char *)ELFMAG, SELFMAG)) {
		*kind = MDGPU_CU_IMAGE_ELF;
		return mdgpu_cu_elf_size(p, max, size);
	}
	*kind = MDGPU_CU_IMAGE_PTX;
	n = strnlen(image, max);
	if (n == max)
		return -E2BIG;
	if (n == 0)
		return -EINVAL;
	*size = n + 1;
	return 0;
}

#endif /* MDGPU_COMMON_CU_IMAGE_H */
