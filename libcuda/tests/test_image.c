// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cmocka tests of libcuda/image.c: image kinds and sizes (PTX, an ELF64
 * built here byte by byte, truncated and overflowing headers, fatbins) and
 * PTX kernel parameter layouts, including the layout measured from the
 * real driver's cuFuncGetParamInfo (../shared/cuda-surface.md).
 */
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "image.h"

static void test_ptx_size(void **state)
{
	static const char ptx[] = ".version 8.0\n.target sm_90\n";
	enum mdgpu_cu_image_kind kind;
	size_t size = 0;

	(void)state;
	assert_int_equal(mdgpu_cu_image_size(ptx, 1 << 20, &kind, &size), 0);
	assert_int_equal(kind, MDGPU_CU_IMAGE_PTX);
	assert_int_equal(size, sizeof(ptx));
	/* No NUL within max. */
	assert_int_equal(mdgpu_cu_image_size(ptx, 8, &kind, &size), -E2BIG);
	assert_int_equal(mdgpu_cu_image_size("", 16, &kind, &size), -EINVAL);
	assert_int_equal(mdgpu_cu_image_size(NULL, 16, &kind, &size),
			 -EINVAL);
}

/* An ELF64 of: header, two sections' data, section header table (null,
 * .text of 100 bytes at 64, .bss NOBITS of 1 MiB), a trailing section
 * data past the table (.note of 40 bytes). */
struct elf_img {
	unsigned char b[1024];
	size_t size;
};

static void build_elf(struct elf_img *e)
{
	Elf64_Ehdr eh = { 0 };
	Elf64_Shdr sh[4] = { { 0 } };
	const uint64_t shoff = 256;

	memset(e, 0, sizeof(*e));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ehsize = sizeof(eh);
	eh.e_shoff = shoff;
	eh.e_shnum = 4;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_offset = 64;
	sh[1].sh_size = 100;
	sh[2].sh_type = SHT_NOBITS;
	sh[2].sh_offset = 164;
	sh[2].sh_size = 1 << 20;
	sh[3].sh_type = SHT_NOTE;
	sh[3].sh_offset = shoff + sizeof(sh);
	sh[3].sh_size = 40;
	memcpy(e->b, &eh, sizeof(eh));
	memcpy(e->b + shoff, sh, sizeof(sh));
	e->size = shoff + sizeof(sh) + 40;
}

static void test_elf_size(void **state)
{
	enum mdgpu_cu_image_kind kind;
	struct elf_img e;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	size_t size = 0;

	(void)state;
	build_elf(&e);
	assert_int_equal(mdgpu_cu_image_size(e.b, sizeof(e.b), &kind, &size),
			 0);
	assert_int_equal(kind, MDGPU_CU_IMAGE_ELF);
	assert_int_equal(size, e.size);	/* NOBITS adds nothing */
	/* The image is larger than max. */
	assert_int_equal(mdgpu_cu_image_size(e.b, e.size - 1, &kind, &size),
			 -E2BIG);
	assert_int_equal(mdgpu_cu_image_size(e.b, 200, &kind, &size),
			 -E2BIG);
	/* A section past the table extends the image. */
	sh = (Elf64_Shdr *)(e.b + 256);
	sh[1].sh_offset = 900;
	assert_int_equal(mdgpu_cu_image_size(e.b, sizeof(e.b), &kind, &size),
			 0);
	assert_int_equal(size, 1000);
	/* Overflowing offset + size. */
	sh[1].sh_offset = UINT64_MAX - 10;
	assert_int_equal(mdgpu_cu_image_size(e.b, sizeof(e.b), &kind, &size),
			 -EINVAL);
	build_elf(&e);
	eh = (Elf64_Ehdr *)e.b;
	eh->e_shoff = UINT64_MAX - 100;
	assert_int_equal(mdgpu_cu_image_size(e.b, sizeof(e.b), &kind, &size),
			 -EINVAL);
	build_elf(&e);
	eh->e_shentsize = 40;
	assert_int_equal(mdgpu_cu_image_size(e.b, sizeof(e.b), &kind, &size),
			 -EINVAL);
	build_elf(&e);
	eh->e_ident[EI_CLASS] = ELFCLASS32;
	assert_int_equal(mdgpu_cu_image_size(e.b, sizeof(e.b), &kind, &size),
			 -EINVAL);
	/* Shorter than an ELF header. */
	build_elf(&e);
	assert_int_equal(mdgpu_cu_image_size(e.b, 32, &kind, &size), -EINVAL);
}

static void test_fatbin(void **state)
{
	/* Header: magic, version 1, header 16 bytes, 64 entry bytes: one
	 * entry (kind 2, ELF; version 0x101) of a 64-byte header and no
	 * payload. */
	static const uint32_t fb[20] = { 0xba55ed50U, 0x00100001U, 64, 0,
					 0x01010002U, 64, 0, 0 };
	/* Entries that do not tile the 64 bytes: none (zeroed, which kept
	 * NVIDIA's loader busy for more than 60 s), a header under 16
	 * bytes, a payload past the end, a payload size that overflows,
	 * 32 of 64 bytes covered, no entry bytes at all. */
	static const uint32_t zeroed[20] = { 0xba55ed50U, 0x00100001U, 64, 0 };
	static const uint32_t small_ent[20] = { 0xba55ed50U, 0x00100001U, 64,
						0, 0x01010002U, 8, 0, 0 };
	static const uint32_t past[20] = { 0xba55ed50U, 0x00100001U, 64, 0,
					   0x01010002U, 32, 40, 0 };
	static const uint32_t ovf[20] = { 0xba55ed50U, 0x00100001U, 64, 0,
					  0x01010002U, 32, 0xffffffffU,
					  0xffffffffU };
	static const uint32_t part[20] = { 0xba55ed50U, 0x00100001U, 64, 0,
					   0x01010002U, 32, 0, 0 };
	static const uint32_t empty[4] = { 0xba55ed50U, 0x00100001U, 0, 0 };
	/* Two entries tiling the 64 bytes: 16 + 16 of payload, then 32. */
	static const uint32_t two[20] = { 0xba55ed50U, 0x00100001U, 64, 0,
					  0x01010001U, 16, 16, 0,
					  [12] = 0x01010002U, 32, 0, 0 };
	static const uint32_t v2[4] = { 0xba55ed50U, 0x00100002U, 64, 0 };
	static const uint32_t short_hdr[4] = { 0xba55ed50U, 0x00080001U, 0, 0 };
	static const uint32_t huge[4] = { 0xba55ed50U, 0x00100001U,
					  0xfffffff8U, 0xffffffffU };
	struct { uint32_t magic, version; const void *data, *f; } wrap =
		{ 0x466243b1U, 1, fb, NULL }, wrap2 = { 0x466243b1U, 2, fb, fb },
		wrap3 = { 0x466243b1U, 3, fb, fb };
	enum mdgpu_cu_image_kind kind = 0;
	size_t size = 0;

	(void)state;
	assert_int_equal(mdgpu_cu_image_size(fb, sizeof(fb), &kind, &size), 0);
	assert_int_equal(kind, MDGPU_CU_IMAGE_FATBIN);
	assert_int_equal(size, 80);
	assert_int_equal(mdgpu_cu_image_size(two, sizeof(two), &kind, &size),
			 0);
	assert_int_equal(size, 80);
	assert_int_equal(mdgpu_cu_image_size(zeroed, sizeof(zeroed), &kind,
					     &size), -EINVAL);
	assert_int_equal(mdgpu_cu_image_size(small_ent, sizeof(small_ent),
					     &kind, &size), -EINVAL);
	assert_int_equal(mdgpu_cu_image_size(past, sizeof(past), &kind, &size),
			 -EINVAL);
	assert_int_equal(mdgpu_cu_image_size(ovf, sizeof(ovf), &kind, &size),
			 -EINVAL);
	assert_int_equal(mdgpu_cu_image_size(part, sizeof(part), &kind, &size),
			 -EINVAL);
	assert_int_equal(mdgpu_cu_image_size(empty, sizeof(empty), &kind,
					     &size), -EINVAL);
	/* The header's count past max, other versions, short headers, a
	 * count that overflows. */
	assert_int_equal(mdgpu_cu_image_size(fb, 79, &kind, &size), -E2BIG);
	assert_int_equal(mdgpu_cu_image_size(fb, 12, &kind, &size), -EINVAL);
	assert_int_equal(mdgpu_cu_image_size(v2, sizeof(v2), &kind, &size),
			 -EINVAL);
	assert_int_equal(mdgpu_cu_image_size(short_hdr, sizeof(short_hdr),
					     &kind, &size), -EINVAL);
	assert_int_equal(mdgpu_cu_image_size(huge, sizeof(huge), &kind, &size),
			 -EINVAL);
	/* The wrapper: versions 1 and 2 (device-linked) point to the fatbin,
	 * others are refused. */
	assert_int_equal(mdgpu_cu_image_size(&wrap, sizeof(wrap), &kind, &size),
			 -EOPNOTSUPP);
	assert_int_equal(kind, MDGPU_CU_IMAGE_WRAPPER);
	assert_ptr_equal(mdgpu_cu_fatbin_unwrap(&wrap), fb);
	assert_ptr_equal(mdgpu_cu_fatbin_unwrap(&wrap2), fb);
	assert_null(mdgpu_cu_fatbin_unwrap(&wrap3));
}

/* A cubin or fatbin nvcc built from a .cu (when the toolkit is here), as
 * the driver receives it: its kind is `want`, its size the file's. */
static void expect_nvcc_image(const char *var, enum mdgpu_cu_image_kind want)
{
	const char *path = getenv(var);
	enum mdgpu_cu_image_kind kind;
	unsigned char *buf;
	size_t n, size = 0;
	FILE *f;

	if (!path || !*path)
		skip();
	f = fopen(path, "rb");
	assert_non_null(f);
	buf = malloc(64 << 20);
	assert_non_null(buf);
	n = fread(buf, 1, 64 << 20, f);
	fclose(f);
	assert_int_equal(mdgpu_cu_image_size(buf, n, &kind, &size), 0);
	assert_int_equal(kind, want);
	assert_int_equal(size, n);
	free(buf);
}

static void test_nvcc_cubin(void **state)
{
	(void)state;
	expect_nvcc_image("MDGPU_TEST_CUBIN", MDGPU_CU_IMAGE_ELF);
}

static void test_nvcc_fatbin(void **state)
{
	(void)state;
	expect_nvcc_image("MDGPU_TEST_FATBIN", MDGPU_CU_IMAGE_FATBIN);
}

static void expect_layout(const char *ptx, const char *name,
			  const uint32_t *off, const uint32_t *size,
			  uint32_t count)
{
	struct mdgpu_cu_layout l;

	assert_int_equal(mdgpu_cu_ptx_layout(ptx, strlen(ptx), name, 4096,
					     &l), 0);
	assert_int_equal(l.count, count);
	for (uint32_t i = 0; i < count; i++) {
		assert_int_equal(l.params[i].offset, off[i]);
		assert_int_equal(l.params[i].size, size[i]);
	}
	mdgpu_cu_layout_free(&l);
}

static void test_ptx_layout(void **state)
{
	/* Measured on driver 580 with cuFuncGetParamInfo. */
	static const char measured[] =
		".visible .entry k(.param .u64 a, .param .u32 b, "
		".param .align 16 .b8 c[24], .param .f64 d)\n{ ret; }\n";
	static const uint32_t m_off[] = { 0, 8, 16, 40 };
	static const uint32_t m_size[] = { 8, 4, 24, 8 };
	/* As nvcc writes it: comments, .ptr attributes (the .align there is
	 * the pointee's), several entries, a .func with the same name. */
	static const char nvcc[] =
		"// Generated\n.version 8.0\n.target sm_90\n"
		".func (.param .b32 r) other(.param .b64 x)\n{ ret; }\n"
		"/* before */ .visible .entry _Z3fooPfic(\n"
		"\t.param .u64 .ptr .global .align 16 _Z3fooPfic_param_0,\n"
		"\t.param .u32 _Z3fooPfic_param_1, // n\n"
		"\t.param .u8 _Z3fooPfic_param_2\n)\n{\n\tret;\n}\n"
		".visible .entry other()\n{ ret; }\n"
		".entry bare\n{ ret; }\n"
		".entry halves(.param .f16 h, .param .b16 s, .param .b128 q)\n"
		"{ ret; }\n";
	static const uint32_t n_off[] = { 0, 8, 12 };
	static const uint32_t n_size[] = { 8, 4, 1 };
	static const uint32_t h_off[] = { 0, 2, 16 };
	static const uint32_t h_size[] = { 2, 2, 16 };
	struct mdgpu_cu_layout l;

	(void)state;
	expect_layout(measured, "k", m_off, m_size, 4);
	expect_layout(nvcc, "_Z3fooPfic", n_off, n_size, 3);
	expect_layout(nvcc, "other", NULL, NULL, 0);
	expect_layout(nvcc, "bare", NULL, NULL, 0);
	expect_layout(nvcc, "halves", h_off, h_size, 3);
	assert_int_equal(mdgpu_cu_ptx_layout(nvcc, strlen(nvcc), "missing",
					     4096, &l), -ENOENT);
	assert_int_equal(mdgpu_cu_ptx_layout(nvcc, strlen(nvcc), "_Z3foo",
					     4096, &l), -ENOENT);
}

static void test_ptx_layout_refused(void **state)
{
	struct mdgpu_cu_layout l;
	const char *bad[] = {
		".entry t(.param .texref tex)\n{}",		/* -EOPNOTSUPP */
		".entry t(.param .u32 a .param .u32 b)\n{}",	/* -EINVAL */
		".entry t(.param .align 3 .b8 a[4])\n{}",	/* -EINVAL */
		".entry t(.param .b8 a[0])\n{}",		/* -EINVAL */
		".entry t(.param .u32)\n{}",			/* -EINVAL */
		".entry t(.param .u32 a",			/* -EINVAL */
		".entry t(.param .b8 a[4097])\n{}",		/* -E2BIG */
		".entry t(.param .b8 a[4294967295], .param .b8 b[9])",
		".entry t(.param .b64 a[4294967295])\n{}",	/* -E2BIG */
	};
	const int want[] = { -EOPNOTSUPP, -EINVAL, -EINVAL, -EINVAL, -EINVAL,
			     -EINVAL, -E2BIG, -E2BIG, -E2BIG };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = mdgpu_cu_ptx_layout(bad[i], strlen(bad[i]), "t",
					      4096, &l);

		if (ret != want[i])
			fail_msg("'%s': %d, expected %d", bad[i], ret,
				 want[i]);
		assert_null(l.params);
	}
	/* 4096 bytes exactly is allowed. */
	assert_int_equal(mdgpu_cu_ptx_layout(".entry t(.param .b8 a[4096])",
					     29, "t", 4096, &l), 0);
	assert_int_equal(l.bytes, 4096);
	mdgpu_cu_layout_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ptx_size),
		cmocka_unit_test(test_elf_size),
		cmocka_unit_test(test_fatbin),
		cmocka_unit_test(test_nvcc_cubin),
		cmocka_unit_test(test_nvcc_fatbin),
		cmocka_unit_test(test_ptx_layout),
		cmocka_unit_test(test_ptx_layout_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
