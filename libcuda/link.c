// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: the JIT linker (cuLink*), done by the host driver's linker in
 * the vGPU's worker (the daemon's MODULE_LINK, ABI 1.7).
 *
 * cuLinkCreate starts a link bundle (uapi struct mdgpu_link_bundle) with
 * the options the host's linker takes by value (target, optimisation
 * level, debug and line info, verbose log, register limit, fallback,
 * cache mode); cuLinkAddData and cuLinkAddFile append inputs of every
 * CUjitInputType the host driver's linker takes (PTX, CUBIN, FATBINARY,
 * OBJECT, LIBRARY); cuLinkComplete sends the bundle in one MODULE_LINK
 * and completes with the linked image the host driver made, which the
 * link state owns until cuLinkDestroy, and writes the linker's error and
 * info logs into the program's CU_JIT_ERROR_LOG_BUFFER /
 * CU_JIT_INFO_LOG_BUFFER (their *_SIZE_BYTES values, which the program
 * keeps valid until cuLinkDestroy as with NVIDIA's driver, then say the
 * bytes written).  Options given to cuLinkAdd* are the PTX compiler's
 * per-input hints: ignored, as cuModuleLoadDataEx ignores them.
 *
 * CU_JIT_INPUT_NVVM (LTO IR) and CU_JIT_LTO are CUDA_ERROR_NOT_SUPPORTED:
 * the link bundle carries no LTO options.  A daemon of ABI < 1.7 has no
 * linker: a link of exactly one PTX input then completes with that PTX
 * text (NUL-terminated, *sizeOut counting the NUL), which the host
 * driver compiles when the image is loaded; anything else is
 * CUDA_ERROR_NOT_SUPPORTED.  An input this linker cannot take fails the
 * link for good (logged).
 *
 * The live link states are mdgpu_cu_links, under mdgpu_cu.lock.
 */
#include <stdlib.h>
#include <string.h>

#include "code.h"
#include "common/link_bundle.h"

struct CUlinkState_st {
	uint8_t *bundle;		/* header, options, inputs so far */
	size_t len, cap;
	uint32_t nr_inputs, nr_options;
	size_t ptx_off, ptx_len;	/* the first input, if PTX (< 1.7) */
	bool first_ptx;
	bool failed;			/* an input this linker cannot take */
	/* The program's log buffers and its option values array, whose
	 * *_SIZE_BYTES entries say the bytes written at completion. */
	char *err_log, *info_log;
	size_t err_size, info_size;
	void **err_size_val, **info_size_val;
	void *answer;			/* the daemon's answer, image inside */
	void *image;
	size_t image_len;
};

static struct mdgpu_cu_set mdgpu_cu_links;

/* Appends n bytes to the bundle (growing it); false: out of memory. */
static bool mdgpu_cu_link_put(CUlinkState s, const void *p, size_t n)
{
	if (s->cap - s->len < n) {
		size_t cap = s->cap ? s->cap : 4096;
		uint8_t *b;

		while (cap - s->len < n)
			cap *= 2;
		b = realloc(s->bundle, cap);
		if (!b)
			return false;
		s->bundle = b;
		s->cap = cap;
	}
	memcpy(s->bundle + s->len, p, n);
	s->len += n;
	return true;
}

/* The bundle's option for a CUjit_option the host linker takes, or 0. */
static uint32_t mdgpu_cu_link_opt(CUjit_option o)
{
	switch (o) {
	case CU_JIT_TARGET:
		return MDGPU_LINK_OPT_TARGET;
	case CU_JIT_OPTIMIZATION_LEVEL:
		return MDGPU_LINK_OPT_OPT_LEVEL;
	case CU_JIT_GENERATE_DEBUG_INFO:
		return MDGPU_LINK_OPT_DEBUG;
	case CU_JIT_GENERATE_LINE_INFO:
		return MDGPU_LINK_OPT_LINEINFO;
	case CU_JIT_LOG_VERBOSE:
		return MDGPU_LINK_OPT_VERBOSE;
	case CU_JIT_MAX_REGISTERS:
		return MDGPU_LINK_OPT_MAX_REGISTERS;
	case CU_JIT_FALLBACK_STRATEGY:
		return MDGPU_LINK_OPT_FALLBACK;
	case CU_JIT_CACHE_MODE:
		return MDGPU_LINK_OPT_CACHE_MODE;
	default:
		return 0;
	}
}

/*
 * cuLinkCreate's options: the log buffers remembered, the host linker's
 * options put into the bundle (each at most once, the last value wins
 * as with NVIDIA's driver), CU_JIT_LTO refused, the rest ignored.
 */
static CUresult mdgpu_cu_link_options(CUlinkState s, unsigned n,
				      CUjit_option *options, void **values)
{
	struct mdgpu_link_option o[MDGPU_LINK_OPT_COUNT] = { { 0 } };

	for (unsigned i = 0; i < n; i++) {
		uint32_t what = mdgpu_cu_link_opt(options[i]);
		uint32_t v = (uint32_t)(uintptr_t)values[i];

		switch (options[i]) {
		case CU_JIT_ERROR_LOG_BUFFER:
			s->err_log = values[i];
			break;
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			s->err_size = (size_t)(uintptr_t)values[i];
			s->err_size_val = &values[i];
			break;
		case CU_JIT_INFO_LOG_BUFFER:
			s->info_log = values[i];
			break;
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
			s->info_size = (size_t)(uintptr_t)values[i];
			s->info_size_val = &values[i];
			break;
		case CU_JIT_LTO:
			if (values[i]) {
				mdgpu_cu_log("cuLinkCreate: link-time "
					     "optimisation is not supported");
				return CUDA_ERROR_NOT_SUPPORTED;
			}
			break;
		default:
			break;
		}
		if (!what)
			continue;
		if ((uintptr_t)values[i] > UINT32_MAX ||
		    !mdgpu_link_opt_ok(what, v))
			return CUDA_ERROR_INVALID_VALUE;
		o[what].what = what;
		o[what].value = v;
	}
	for (uint32_t w = 1; w < MDGPU_LINK_OPT_COUNT; w++) {
		if (!o[w].what)
			continue;
		if (!mdgpu_cu_link_put(s, &o[w], sizeof(o[w])))
			return CUDA_ERROR_OUT_OF_MEMORY;
		s->nr_options++;
	}
	return CUDA_SUCCESS;
}

static void mdgpu_cu_link_free(CUlinkState s)
{
	free(s->bundle);
	free(s->answer);
	free(s);
}

CUresult CUDAAPI cuLinkCreate_v2(unsigned int numOptions,
				 CUjit_option *options, void **optionValues,
				 CUlinkState *stateOut)
{
	struct mdgpu_link_bundle h = { 0 };
	struct CUlinkState_st *s;
	CUresult r;

	if (!stateOut || (numOptions && (!options || !optionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	s = calloc(1, sizeof(*s));
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = mdgpu_cu_link_put(s, &h, sizeof(h)) ? CUDA_SUCCESS :
						  CUDA_ERROR_OUT_OF_MEMORY;
	/* The log sizes are read before the outputs are answered (empty
	 * logs, 0 bytes written until completion). */
	if (!r)
		r = mdgpu_cu_link_options(s, numOptions, options,
					  optionValues);
	if (!r)
		r = mdgpu_cu_jit_options(numOptions, options, optionValues);
	if (!r)
		r = mdgpu_cu_enter();
	if (r) {
		mdgpu_cu_link_free(s);
		return r;
	}
	if (mdgpu_cu_set_add(&mdgpu_cu_links, s)) {
		mdgpu_cu_link_free(s);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		*stateOut = s;
	}
	mdgpu_cu_leave();
	return r;
}
MDGPU_CU_ALIAS(cuLinkCreate, cuLinkCreate_v2);

/* The bundle's kind of a CUjitInputType, 0 for NVVM (not supported). */
static int mdgpu_cu_link_kind(CUjitInputType type, uint32_t *kind)
{
	switch (type) {
	case CU_JIT_INPUT_PTX:
		*kind = MDGPU_LINK_INPUT_PTX;
		return 0;
	case CU_JIT_INPUT_CUBIN:
		*kind = MDGPU_LINK_INPUT_CUBIN;
		return 0;
	case CU_JIT_INPUT_FATBINARY:
		*kind = MDGPU_LINK_INPUT_FATBINARY;
		return 0;
	case CU_JIT_INPUT_OBJECT:
		*kind = MDGPU_LINK_INPUT_OBJECT;
		return 0;
	case CU_JIT_INPUT_LIBRARY:
		*kind = MDGPU_LINK_INPUT_LIBRARY;
		return 0;
	case CU_JIT_INPUT_NVVM:
		*kind = 0;
		return 0;
	default:
		return -1;
	}
}

/* Under the lock: appends `data` (len bytes) as an input of the link. */
static CUresult mdgpu_cu_link_add(CUlinkState s, CUjitInputType type,
				  const void *data, size_t len,
				  const char *name)
{
	struct mdgpu_link_input in = { 0 };
	size_t nlen = name ? strnlen(name, MDGPU_NAME_MAX) : 0;

	if (mdgpu_cu_link_kind(type, &in.kind))
		return CUDA_ERROR_INVALID_VALUE;
	if (s->failed || s->image)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (!in.kind || s->nr_inputs >= MDGPU_LINK_INPUTS_MAX ||
	    len > MDGPU_MODULE_MAX ||
	    s->len + sizeof(in) + nlen + len > MDGPU_MODULE_MAX) {
		mdgpu_cu_log("cuLinkAdd: %s: %s", name ? name : "(unnamed)",
			     !in.kind ? "NVVM (LTO IR) input is not supported" :
			     s->nr_inputs >= MDGPU_LINK_INPUTS_MAX ?
			     "more inputs than a link bundle carries" :
			     "inputs larger than a link bundle carries");
		s->failed = true;
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	in.name_len = (uint32_t)nlen;
	in.len = len;
	if (!s->nr_inputs && in.kind == MDGPU_LINK_INPUT_PTX) {
		s->first_ptx = true;
		s->ptx_off = s->len + sizeof(in) + nlen;
		s->ptx_len = len;
	}
	if (!mdgpu_cu_link_put(s, &in, sizeof(in)) ||
	    !mdgpu_cu_link_put(s, name, nlen) ||
	    !mdgpu_cu_link_put(s, data, len)) {
		s->failed = true;
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	s->nr_inputs++;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkAddData_v2(CUlinkState state, CUjitInputType type,
				  void *data, size_t size, const char *name,
				  unsigned int numOptions,
				  CUjit_option *options, void **optionValues)
{
	CUresult r;

	if (!data || !size || size > MDGPU_MODULE_DEVICE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_jit_options(numOptions, options, optionValues);
	if (r)
		return r;
	r = mdgpu_cu_enter_obj(&mdgpu_cu_links, state, NULL);
	if (r)
		return r;
	r = mdgpu_cu_link_add(state, type, data, size, name);
	mdgpu_cu_leave();
	return r;
}
MDGPU_CU_ALIAS(cuLinkAddData, cuLinkAddData_v2);

CUresult CUDAAPI cuLinkAddFile_v2(CUlinkState state, CUjitInputType type,
				  const char *path, unsigned int numOptions,
				  CUjit_option *options, void **optionValues)
{
	size_t len;
	CUresult r;
	char *buf;

	if (!path)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_jit_options(numOptions, options, optionValues);
	if (r)
		return r;
	r = mdgpu_cu_read_file("cuLinkAddFile", path, &buf, &len);
	if (r)
		return r;
	r = mdgpu_cu_enter_obj(&mdgpu_cu_links, state, NULL);
	if (!r) {
		r = len ? mdgpu_cu_link_add(state, type, buf, len, path) :
			  CUDA_ERROR_INVALID_IMAGE;
		mdgpu_cu_leave();
	}
	free(buf);
	return r;
}
MDGPU_CU_ALIAS(cuLinkAddFile, cuLinkAddFile_v2);

/* One log of the answer into the program's buffer, NUL-terminated, and
 * the bytes written (with the NUL) into its *_SIZE_BYTES value. */
static void mdgpu_cu_link_log(const char *log, size_t n, char *buf,
			      size_t size, void **size_val)
{
	if (!buf || !size)
		return;
	if (n > size - 1)
		n = size - 1;
	memcpy(buf, log, n);
	buf[n] = '\0';
	if (size_val)
		*size_val = (void *)(uintptr_t)(n + 1);
}

/* Under the lock: a daemon of ABI < 1.7 completes a one-PTX link with
 * the PTX text itself. */
static CUresult mdgpu_cu_link_ptx(CUlinkState s)
{
	char *p;

	if (s->nr_inputs != 1 || !s->first_ptx) {
		mdgpu_cu_log("cuLinkComplete: the daemon has no linker (ABI "
			     "< 1.7): only a link of one PTX input is "
			     "supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	p = malloc(s->ptx_len + 1);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(p, s->bundle + s->ptx_off, s->ptx_len);
	p[s->ptx_len] = '\0';
	s->answer = p;
	s->image = p;
	s->image_len = strlen(p) + 1;
	return CUDA_SUCCESS;
}

/* Under the lock: one MODULE_LINK of the bundle; the logs go to the
 * program's buffers whether the link succeeded or was refused. */
static CUresult mdgpu_cu_link_run(CUlinkState s)
{
	struct mdgpu_link_bundle h = {
		.magic = MDGPU_LINK_MAGIC,
		.version = MDGPU_LINK_VERSION,
		.nr_options = (uint16_t)s->nr_options,
		.nr_inputs = s->nr_inputs,
	};
	struct mdgpu_link_answer a;
	const char *p;
	void *ans = NULL;
	size_t size = 0;
	int ret;

	memcpy(s->bundle, &h, sizeof(h));
	ret = mdgpu_module_link(mdgpu_cu.g, s->bundle, s->len, &ans, &size);
	if (ans) {
		memcpy(&a, ans, sizeof(a));
		p = (const char *)ans + sizeof(a) + a.image_len;
		mdgpu_cu_link_log(p, a.error_log_len, s->err_log, s->err_size,
				  s->err_size_val);
		mdgpu_cu_link_log(p + a.error_log_len, a.info_log_len,
				  s->info_log, s->info_size, s->info_size_val);
	}
	if (ret || !ans) {
		mdgpu_cu_log("cuLinkComplete: %s",
			     mdgpu_last_error(mdgpu_cu.g));
		free(ans);
		return ret ? mdgpu_cu_error(ret) : CUDA_ERROR_UNKNOWN;
	}
	s->answer = ans;
	s->image = (uint8_t *)ans + sizeof(a);
	s->image_len = a.image_len;
	return CUDA_SUCCESS;
}

/* The image stays the link's until cuLinkDestroy. */
CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut,
				size_t *sizeOut)
{
	CUresult r;

	if (!cubinOut)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_obj(&mdgpu_cu_links, state, NULL);
	if (r)
		return r;
	if (state->failed) {
		mdgpu_cu_log("cuLinkComplete: an input was not taken");
		r = CUDA_ERROR_NOT_SUPPORTED;
	} else if (!state->nr_inputs) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (!state->image) {
		r = (mdgpu_cu.info.abi_version & 0xffff) < 7 ?
		    mdgpu_cu_link_ptx(state) : mdgpu_cu_link_run(state);
	}
	if (!r) {
		*cubinOut = state->image;
		if (sizeOut)
			*sizeOut = state->image_len;
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state)
{
	CUresult r = mdgpu_cu_enter_obj(&mdgpu_cu_links, state, NULL);

	if (r)
		return r;
	mdgpu_cu_set_del(&mdgpu_cu_links, state);
	mdgpu_cu_link_free(state);
	mdgpu_cu_leave();
	return r;
}
