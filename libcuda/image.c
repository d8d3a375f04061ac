// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: module image kinds and sizes, PTX kernel parameter layouts.
 *
 * cuModuleLoadData takes an image without its length; the length is found
 * from the image, as the real driver does (common/cu_image.h).
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

const void *mdgpu_cu_fatbin_unwrap(const void *wrapper)
{
	struct mdgpu_cu_fatbin_wrapper w;

	memcpy(&w, wrapper, sizeof(w));
	if (w.magic != MDGPU_CU_FATBIN_WRAPPER_MAGIC ||
	    (w.version != 1 && w.version != 2))
		return NULL;
	return w.data;
}

/* PTX tokens: directives and identifiers, numbers, single punctuation. */
struct mdgpu_cu_lex {
	const char *p, *end;
	const char *tok;
	size_t len;
};

static bool mdgpu_cu_ident_char(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	    c == '$' || c == '%' || c == '.')
		return true;
	return !first && c >= '0' && c <= '9';
}

/* Next token into l->tok/len; false at the end of the text. */
static bool mdgpu_cu_next(struct mdgpu_cu_lex *l)
{
	const char *p = l->p, *e = l->end;

	for (;;) {
		while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' ||
				 *p == '\r'))
			p++;
		if (e - p >= 2 && p[0] == '/' && p[1] == '/') {
			while (p < e && *p != '\n')
				p++;
			continue;
		}
		if (e - p >= 2 && p[0] == '/' && p[1] == '*') {
			p += 2;
			while (e - p >= 2 && !(p[0] == '*' && p[1] == '/'))
				p++;
			p = e - p >= 2 ? p + 2 : e;
			continue;
		}
		break;
	}
	if (p >= e || !*p) {
		l->p = e;
		return false;
	}
	l->tok = p;
	if (mdgpu_cu_ident_char(*p, true) || (*p >= '0' && *p <= '9')) {
		while (p < e && mdgpu_cu_ident_char(*p, false))
			p++;
	} else {
		p++;
	}
	l->len = (size_t)(p - l->tok);
	l->p = p;
	return true;
}

static bool mdgpu_cu_is(const struct mdgpu_cu_lex *l, const char *s)
{
	return l->len == strlen(s) && !memcmp(l->tok, s, l->len);
}

/* Decimal number token, at most `limit`; false if not one. */
static bool mdgpu_cu_number(const struct mdgpu_cu_lex *l, uint32_t limit,
			    uint32_t *v)
{
	uint64_t n = 0;

	if (!l->len || l->len > 10)
		return false;
	for (size_t i = 0; i < l->len; i++) {
		if (l->tok[i] < '0' || l->tok[i] > '9')
			return false;
		n = n * 10 + (uint64_t)(l->tok[i] - '0');
	}
	if (n > limit)
		return false;
	*v = (uint32_t)n;
	return true;
}

/* Size in bytes of a PTX fundamental type directive, 0 if not one. */
static uint32_t mdgpu_cu_type_size(const struct mdgpu_cu_lex *l)
{
	static const struct {
		const char *name;
		uint32_t size;
	} types[] = {
		{ ".b8", 1 }, { ".u8", 1 }, { ".s8", 1 },
		{ ".b16", 2 }, { ".u16", 2 }, { ".s16", 2 }, { ".f16", 2 },
		{ ".bf16", 2 },
		{ ".b32", 4 }, { ".u32", 4 }, { ".s32", 4 }, { ".f32", 4 },
		{ ".f16x2", 4 }, { ".bf16x2", 4 },
		{ ".b64", 8 }, { ".u64", 8 }, { ".s64", 8 }, { ".f64", 8 },
		{ ".b128", 16 },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (mdgpu_cu_is(l, types[i].name))
			return types[i].size;
	return 0;
}

/* One `.param ...` up to its name and optional [count]; l is on .param. */
static int mdgpu_cu_param(struct mdgpu_cu_lex *l, uint32_t *size,
			  uint32_t *align)
{
	uint32_t elem = 0, al = 0, count = 1;
	bool ptr = false;

	for (;;) {
		if (!mdgpu_cu_next(l))
			return -EINVAL;
		if (mdgpu_cu_is(l, ".align")) {
			uint32_t a;

			if (!mdgpu_cu_next(l) || !mdgpu_cu_number(l, 1U << 16,
								  &a) ||
			    !a || (a & (a - 1)))
				return -EINVAL;
			/* After .ptr, .align is the pointee's alignment. */
			if (!ptr)
				al = a;
		} else if (mdgpu_cu_is(l, ".ptr")) {
			ptr = true;
		} else if (ptr && (mdgpu_cu_is(l, ".global") ||
				   mdgpu_cu_is(l, ".const") ||
				   mdgpu_cu_is(l, ".local") ||
				   mdgpu_cu_is(l, ".shared"))) {
			continue;
		} else if (l->tok[0] == '.') {
			uint32_t s = mdgpu_cu_type_size(l);

			if (!s || elem)
				return -EOPNOTSUPP;
			elem = s;
		} else {
			break;		/* the name */
		}
	}
	if (!elem || !mdgpu_cu_ident_char(l->tok[0], true))
		return -EINVAL;
	/* Optional [count], then ',' or ')' (left for the caller). */
	{
		struct mdgpu_cu_lex save = *l;

		if (mdgpu_cu_next(l) && mdgpu_cu_is(l, "[")) {
			if (!mdgpu_cu_next(l) ||
			    !mdgpu_cu_number(l, UINT32_MAX, &count) ||
			    !count || !mdgpu_cu_next(l) || !mdgpu_cu_is(l, "]"))
				return -EINVAL;
		} else {
			*l = save;
		}
	}
	if (__builtin_mul_overflow(elem, count, size))
		return -E2BIG;
	*align = al ? al : elem;
	return 0;
}

static int mdgpu_cu_param_list(struct mdgpu_cu_lex *l, uint32_t max_bytes,
			       struct mdgpu_cu_layout *out)
{
	uint32_t off = 0;
	size_t cap = 0;

	if (!mdgpu_cu_next(l))
		return -EINVAL;
	if (!mdgpu_cu_is(l, "("))
		return 0;		/* no list: no parameters */
	if (!mdgpu_cu_next(l))
		return -EINVAL;
	if (mdgpu_cu_is(l, ")"))
		return 0;
	for (;;) {
		uint32_t size, align, start, end;
		int ret;

		if (!mdgpu_cu_is(l, ".param"))
			return -EOPNOTSUPP;
		ret = mdgpu_cu_param(l, &size, &align);
		if (ret)
			return ret;
		if (__builtin_add_overflow(off, align - 1, &start))
			return -E2BIG;
		start &= ~(align - 1);
		if (__builtin_add_overflow(start, size, &end) ||
		    end > max_bytes)
			return -E2BIG;
		if (out->count == cap) {
			size_t ncap = cap ? 2 * cap : 8;
			void *n = realloc(out->params,
					  ncap * sizeof(*out->params));

			if (!n)
				return -ENOMEM;
			out->params = n;
			cap = ncap;
		}
		out->params[out->count].offset = start;
		out->params[out->count].size = size;
		out->count++;
		off = end;
		out->bytes = end;
		if (!mdgpu_cu_next(l))
			return -EINVAL;
		if (mdgpu_cu_is(l, ")"))
			return 0;
		if (!mdgpu_cu_is(l, ",") || !mdgpu_cu_next(l))
			return -EINVAL;
	}
}

int mdgpu_cu_ptx_layout(const char *ptx, size_t len, const char *name,
			uint32_t max_bytes, struct mdgpu_cu_layout *out)
{
	struct mdgpu_cu_lex l = { .p = ptx, .end = ptx + len };
	int ret;

	memset(out, 0, sizeof(*out));
	while (mdgpu_cu_next(&l)) {
		if (!mdgpu_cu_is(&l, ".entry"))
			continue;
		if (!mdgpu_cu_next(&l))
			break;
		if (!mdgpu_cu_is(&l, name))
			continue;
		ret = mdgpu_cu_param_list(&l, max_bytes, out);
		if (ret)
			mdgpu_cu_layout_free(out);
		return ret;
	}
	return -ENOENT;
}

void mdgpu_cu_layout_free(struct mdgpu_cu_layout *l)
{
	free(l->params);
	memset(l, 0, sizeof(*l));
}
