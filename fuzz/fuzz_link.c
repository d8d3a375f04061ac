// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer harness: MODULE_LINK's two formats (include/common/
 * link_bundle.h, uapi section 2): the bundle a client sends, which the
 * cuda worker parses (mdgpu_link_bundle_parse()), and the answer the
 * worker writes, which mdgpud and libmdgpu check before they trust its
 * lengths (mdgpu_link_answer_check()).
 *
 * Input: a mode byte, then the bytes, copied into a heap buffer of
 * exactly their size so that a read past them is an ASan error.  Mode
 * bit 0 clear: a bundle.  Checked beyond the sanitizers: the errors are
 * the three the uapi header names; an accepted bundle's counts are in
 * bounds, its options valid and each at most once, its inputs' names and
 * data inside the buffer, in order and without gaps, and encoding what
 * was parsed again gives back exactly the input.  Mode bit 0 set: an
 * answer of `size` bytes (bit 1 set: the buffer's length; clear: the
 * header's own size field) of which the buffer's bytes were written; an
 * accepted one is whole or its header alone, and its parts sum to size.
 */
#include <errno.h>
#include <string.h>

#include "common/link_bundle.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static void put(uint8_t *out, size_t *off, const void *p, size_t n)
{
	memcpy(out + *off, p, n);
	*off += n;
}

static void check_bundle(const uint8_t *buf, size_t len)
{
	static struct mdgpu_link_option opts[MDGPU_LINK_OPTIONS_MAX];
	static struct mdgpu_link_item items[MDGPU_LINK_INPUTS_MAX];
	struct mdgpu_link_bundle h = { 0 };
	uint32_t nr_opts = 99, nr_items = 99, seen = 0;
	const uint8_t *next;
	uint8_t *again;
	size_t off = 0;
	int ret;

	ret = mdgpu_link_bundle_parse(buf, len, opts, &nr_opts, items,
				      &nr_items);
	if (ret) {
		FUZZ_CHECK(ret == -EINVAL || ret == -E2BIG || ret == -ERANGE);
		FUZZ_CHECK(!nr_opts && !nr_items);
		return;
	}
	FUZZ_CHECK(nr_opts <= MDGPU_LINK_OPTIONS_MAX);
	FUZZ_CHECK(nr_items >= 1 && nr_items <= MDGPU_LINK_INPUTS_MAX);
	for (uint32_t i = 0; i < nr_opts; i++) {
		FUZZ_CHECK(opts[i].what >= MDGPU_LINK_OPT_TARGET &&
			   opts[i].what < MDGPU_LINK_OPT_COUNT);
		FUZZ_CHECK(!(seen & (1U << opts[i].what)));
		FUZZ_CHECK(mdgpu_link_opt_ok(opts[i].what, opts[i].value));
		seen |= 1U << opts[i].what;
	}
	next = buf + sizeof(h) + (size_t)nr_opts * sizeof(opts[0]);
	for (uint32_t i = 0; i < nr_items; i++) {
		const struct mdgpu_link_item *it = &items[i];

		FUZZ_CHECK(it->kind >= MDGPU_LINK_INPUT_PTX &&
			   it->kind <= MDGPU_LINK_INPUT_LIBRARY);
		FUZZ_CHECK(it->name_len <= MDGPU_NAME_MAX && it->len);
		FUZZ_CHECK((const uint8_t *)it->name ==
			   next + sizeof(struct mdgpu_link_input));
		FUZZ_CHECK(it->data == (const uint8_t *)it->name + it->name_len);
		FUZZ_CHECK(it->len <= (uint64_t)(buf + len - it->data));
		next = it->data + it->len;
	}
	FUZZ_CHECK(next == buf + len);

	/* What was parsed, encoded again: the input, byte for byte. */
	again = malloc(len);
	FUZZ_CHECK(again);
	h.magic = MDGPU_LINK_MAGIC;
	h.version = MDGPU_LINK_VERSION;
	h.nr_options = (uint16_t)nr_opts;
	h.nr_inputs = nr_items;
	put(again, &off, &h, sizeof(h));
	put(again, &off, opts, (size_t)nr_opts * sizeof(opts[0]));
	for (uint32_t i = 0; i < nr_items; i++) {
		struct mdgpu_link_input in = {
			.kind = items[i].kind,
			.name_len = items[i].name_len,
			.len = items[i].len,
		};

		put(again, &off, &in, sizeof(in));
		put(again, &off, items[i].name, items[i].name_len);
		put(again, &off, items[i].data, items[i].len);
	}
	FUZZ_CHECK(off == len && !memcmp(again, buf, len));
	free(again);
}

static void check_answer(const uint8_t *buf, size_t len, bool size_is_len)
{
	struct mdgpu_link_answer a, hdr;
	uint64_t size;

	if (size_is_len) {
		size = len;
	} else {
		if (len < sizeof(hdr))
			return;
		memcpy(&hdr, buf, sizeof(hdr));
		size = hdr.size;
	}
	if (!mdgpu_link_answer_check(buf, len, size, &a))
		return;
	FUZZ_CHECK(size <= MDGPU_LINK_OUT_MAX && a.size == size);
	FUZZ_CHECK(len == size || len == sizeof(a));
	FUZZ_CHECK(a.image_len <= MDGPU_MODULE_MAX &&
		   a.error_log_len <= MDGPU_LINK_LOG_MAX &&
		   a.info_log_len <= MDGPU_LINK_LOG_MAX);
	FUZZ_CHECK((uint64_t)sizeof(a) + a.image_len + a.error_log_len +
		   a.info_log_len == size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t mode, *buf;

	if (!size)
		return 0;
	mode = data[0];
	buf = malloc(size - 1 ? size - 1 : 1);
	FUZZ_CHECK(buf);
	memcpy(buf, data + 1, size - 1);
	if (mode & 1)
		check_answer(buf, size - 1, mode & 2);
	else
		check_bundle(buf, size - 1);
	free(buf);
	return 0;
}
