// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: the JIT linker (cuLink*), for its common use: one PTX input,
 * linked into an image that cuModuleLoadData then loads.
 *
 * There is no device linker here: a link of exactly one PTX input
 * completes with that PTX text as its image (NUL-terminated, *sizeOut
 * counting the NUL), which the host driver compiles when the image is
 * loaded.  A program that reads the completed image as a cubin (ELF)
 * would see PTX; one that loads it sees what a linked cubin would give.
 * Any other input kind, a second input, or no input is
 * CUDA_ERROR_NOT_SUPPORTED (logged): a link that failed so stays failed.
 * JIT options are answered as cuModuleLoadDataEx answers them.
 *
 * The live link states are mdgpu_cu_links, under mdgpu_cu.lock.
 */
#include <stdlib.h>
#include <string.h>

#include "code.h"

struct CUlinkState_st {
	char *ptx;			/* the one PTX input, NUL-terminated */
	size_t len;			/* its length without the NUL */
	bool failed;			/* an input this linker cannot take */
};

static struct mdgpu_cu_set mdgpu_cu_links;

CUresult CUDAAPI cuLinkCreate_v2(unsigned int numOptions,
				 CUjit_option *options, void **optionValues,
				 CUlinkState *stateOut)
{
	struct CUlinkState_st *s;
	CUresult r;

	if (!stateOut)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_jit_options(numOptions, options, optionValues);
	if (r)
		return r;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s || mdgpu_cu_set_add(&mdgpu_cu_links, s)) {
		free(s);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		*stateOut = s;
	}
	mdgpu_cu_leave();
	return r;
}
MDGPU_CU_ALIAS(cuLinkCreate, cuLinkCreate_v2);

/* Under the lock: takes `data` (len bytes, copied) as the link's input. */
static CUresult mdgpu_cu_link_add(CUlinkState s, CUjitInputType type,
				  const void *data, size_t len,
				  const char *what)
{
	if (type != CU_JIT_INPUT_PTX || s->ptx || s->failed) {
		mdgpu_cu_log("cuLinkAdd: %s: only a link of one PTX input is "
			     "supported (input type %d%s)", what, (int)type,
			     s->ptx || s->failed ? ", not the first" : "");
		s->failed = true;
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	s->ptx = malloc(len + 1);
	if (!s->ptx)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(s->ptx, data, len);
	s->ptx[len] = '\0';
	s->len = strlen(s->ptx);
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
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu_links, state))
		r = CUDA_ERROR_INVALID_HANDLE;
	else
		r = mdgpu_cu_link_add(state, type, data, size,
				      name ? name : "(unnamed)");
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
	r = mdgpu_cu_enter();
	if (!r) {
		if (!mdgpu_cu_set_has(&mdgpu_cu_links, state))
			r = CUDA_ERROR_INVALID_HANDLE;
		else if (!len)
			r = CUDA_ERROR_INVALID_IMAGE;
		else
			r = mdgpu_cu_link_add(state, type, buf, len, path);
		mdgpu_cu_leave();
	}
	free(buf);
	return r;
}
MDGPU_CU_ALIAS(cuLinkAddFile, cuLinkAddFile_v2);

/* The image stays the link's until cuLinkDestroy. */
CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut,
				size_t *sizeOut)
{
	CUresult r;

	if (!cubinOut)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu_links, state)) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else if (state->failed || !state->ptx) {
		mdgpu_cu_log("cuLinkComplete: only a link of one PTX input is "
			     "supported");
		r = CUDA_ERROR_NOT_SUPPORTED;
	} else {
		*cubinOut = state->ptx;
		if (sizeOut)
			*sizeOut = state->len + 1;
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu_links, state)) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else {
		mdgpu_cu_set_del(&mdgpu_cu_links, state);
		free(state->ptx);
		free(state);
	}
	mdgpu_cu_leave();
	return r;
}
