/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Link bundles and link answers as MODULE_LINK carries them (uapi section
 * 2, ABI 1.7).  Shared by the cuda worker, which parses a client's bundle
 * (every byte hostile), mdgpud and libmdgpu, which check the answer that
 * the worker or the daemon wrote, and libcuda, which builds the bundle
 * (user space, not ABI: nothing under include/uapi includes it).
 */
#ifndef MDGPU_COMMON_LINK_BUNDLE_H
#define MDGPU_COMMON_LINK_BUNDLE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "uapi/mdgpu.h"

/* One input of a parsed bundle: pointers into the bundle itself. */
struct mdgpu_link_item {
	uint32_t kind;			/* enum mdgpu_link_input_kind */
	uint32_t name_len;
	const char *name;		/* not NUL-terminated */
	uint64_t len;
	const uint8_t *data;
};

/* Whether `value` is one that option `what` may take (uapi's table). */
static inline bool mdgpu_link_opt_ok(uint32_t what, uint32_t value)
{
	switch (what) {
	case MDGPU_LINK_OPT_TARGET:
		return value < 0x40000;
	case MDGPU_LINK_OPT_OPT_LEVEL:
		return value <= 4;
	case MDGPU_LINK_OPT_DEBUG:
	case MDGPU_LINK_OPT_LINEINFO:
	case MDGPU_LINK_OPT_VERBOSE:
	case MDGPU_LINK_OPT_FALLBACK:
		return value <= 1;
	case MDGPU_LINK_OPT_MAX_REGISTERS:
		return value >= 1 && value <= 255;
	case MDGPU_LINK_OPT_CACHE_MODE:
		return value <= 2;
	default:
		return false;
	}
}

/*
 * Checks the bundle buf[0, len) whole (uapi: struct mdgpu_link_bundle)
 * and copies its options to opts[MDGPU_LINK_OPTIONS_MAX] (*nr_opts of
 * them) and its inputs to items[MDGPU_LINK_INPUTS_MAX] (*nr_items).
 * Reads nothing outside buf[0, len); every sum is overflow-checked.
 * 0, or -EINVAL / -E2BIG / -ERANGE as the uapi header says.
 */
static inline int mdgpu_link_bundle_parse(const void *buf, uint64_t len,
					  struct mdgpu_link_option *opts,
					  uint32_t *nr_opts,
					  struct mdgpu_link_item *items,
					  uint32_t *nr_items)
{
	const uint8_t *p = buf;
	struct mdgpu_link_bundle h;
	uint32_t seen = 0;
	uint64_t off;

	*nr_opts = 0;
	*nr_items = 0;
	if (len < sizeof(h))
		return -EINVAL;
	if (len > MDGPU_MODULE_MAX)
		return -E2BIG;
	memcpy(&h, p, sizeof(h));
	if (h.magic != MDGPU_LINK_MAGIC || h.version != MDGPU_LINK_VERSION ||
	    h.pad)
		return -EINVAL;
	if (!h.nr_inputs)
		return -EINVAL;
	if (h.nr_options > MDGPU_LINK_OPTIONS_MAX ||
	    h.nr_inputs > MDGPU_LINK_INPUTS_MAX)
		return -E2BIG;
	off = sizeof(h);
	/* Both counts are small: this cannot overflow. */
	if ((uint64_t)h.nr_options * sizeof(*opts) > len - off)
		return -ERANGE;
	for (uint32_t i = 0; i < h.nr_options; i++) {
		memcpy(&opts[i], p + off, sizeof(*opts));
		off += sizeof(*opts);
		if (opts[i].what >= 32 || (seen & (1U << opts[i].what)) ||
		    !mdgpu_link_opt_ok(opts[i].what, opts[i].value))
			return -EINVAL;
		seen |= 1U << opts[i].what;
	}
	for (uint32_t i = 0; i < h.nr_inputs; i++) {
		struct mdgpu_link_input in;
		struct mdgpu_link_item *it = &items[i];

		if (len - off < sizeof(in))
			return -ERANGE;
		memcpy(&in, p + off, sizeof(in));
		off += sizeof(in);
		if (in.kind < MDGPU_LINK_INPUT_PTX ||
		    in.kind > MDGPU_LINK_INPUT_LIBRARY || !in.len)
			return -EINVAL;
		if (in.name_len > MDGPU_NAME_MAX)
			return -E2BIG;
		/* off <= len, so len - off cannot wrap. */
		if (in.name_len > len - off || in.len > len - off - in.name_len)
			return -ERANGE;
		it->kind = in.kind;
		it->name_len = in.name_len;
		it->name = (const char *)p + off;
		off += in.name_len;
		it->len = in.len;
		it->data = p + off;
		off += in.len;
	}
	if (off != len)
		return -ERANGE;		/* bytes after the last input */
	*nr_opts = h.nr_options;
	*nr_items = h.nr_inputs;
	return 0;
}

/*
 * Whether the answer buf[0, written) of a `size`-byte link answer is
 * consistent: at least its header, the header's size equal to `size`,
 * its parts summing to it within their bounds, and either written whole
 * or only the header.
 */
static inline bool mdgpu_link_answer_check(const void *buf, uint64_t written,
					   uint64_t size,
					   struct mdgpu_link_answer *a)
{
	if (written < sizeof(*a) || written > size ||
	    size > MDGPU_LINK_OUT_MAX)
		return false;
	memcpy(a, buf, sizeof(*a));
	if (a->size != size || a->image_len > MDGPU_MODULE_MAX ||
	    a->error_log_len > MDGPU_LINK_LOG_MAX ||
	    a->info_log_len > MDGPU_LINK_LOG_MAX)
		return false;
	if ((uint64_t)sizeof(*a) + a->image_len + a->error_log_len +
	    a->info_log_len != size)
		return false;
	return written == size || written == sizeof(*a);
}

#endif /* MDGPU_COMMON_LINK_BUNDLE_H */
