// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: modules, functions and launches.
 *
 * An image's kind and size come from the image (image.c).  PTX and ELF
 * cubins are loaded by the daemon; fatbins are not supported yet.
 *
 * A launch with `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE) passes the
 * caller's buffer as the parameter blob.  A launch with `kernelParams`
 * needs each parameter's offset and size: for a PTX module they are
 * parsed from the function's .entry line; for a cubin the daemon does
 * not report them yet, and such a launch is CUDA_ERROR_NOT_SUPPORTED.
 * Launches are queued (asynchronous); their errors show at the next
 * synchronising call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "priv.h"

static void mdgpu_cu_func_drop(CUfunction f)
{
	mdgpu_cu_set_del(&mdgpu_cu.funcs, f);
	mdgpu_cu_layout_free(&f->layout);
	free(f->name);
	free(f);
}

static void mdgpu_cu_mod_drop(CUmodule m)
{
	for (size_t i = mdgpu_cu.funcs.n; i-- > 0;) {
		CUfunction f = mdgpu_cu.funcs.v[i];

		if (f->mod == m)
			mdgpu_cu_func_drop(f);
	}
	mdgpu_module_unload(mdgpu_cu.g, m->module);
	mdgpu_cu_set_del(&mdgpu_cu.mods, m);
	free(m->ptx);
	free(m);
}

void mdgpu_cu_module_release(CUcontext ctx)
{
	for (size_t i = mdgpu_cu.mods.n; i-- > 0;) {
		CUmodule m = mdgpu_cu.mods.v[i];

		if (m->ctx == ctx)
			mdgpu_cu_mod_drop(m);
	}
}

static CUresult mdgpu_cu_load(CUmodule *module, const void *image)
{
	enum mdgpu_cu_image_kind kind = 0;
	size_t size = 0;
	CUcontext ctx;
	CUmodule m;
	CUresult r;
	int ret;

	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	ret = mdgpu_cu_image_size(image, MDGPU_MODULE_MAX, &kind, &size);
	if (ret == -EOPNOTSUPP) {
		mdgpu_cu_log("cuModuleLoadData: fatbin images are not "
			     "supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (ret)
		return CUDA_ERROR_INVALID_IMAGE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	m = calloc(1, sizeof(*m));
	if (!m || mdgpu_cu_set_add(&mdgpu_cu.mods, m)) {
		free(m);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	m->ctx = ctx;
	if (kind == MDGPU_CU_IMAGE_PTX) {
		/* Kept for the parameter layouts of its functions. */
		m->ptx = malloc(size);
		if (!m->ptx) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto fail;
		}
		memcpy(m->ptx, image, size);
		m->ptx_len = size - 1;
	}
	ret = mdgpu_module_load(mdgpu_cu.g, kind == MDGPU_CU_IMAGE_PTX ?
				MDGPU_MODULE_PTX : MDGPU_MODULE_CUBIN,
				image, size, &m->module);
	if (ret) {
		mdgpu_cu_log("cuModuleLoadData: %s",
			     mdgpu_last_error(mdgpu_cu.g));
		r = ret == -EINVAL ? CUDA_ERROR_INVALID_IMAGE :
		    mdgpu_cu_result(ret);
		goto fail;
	}
	*module = m;
	goto out;
fail:
	mdgpu_cu_set_del(&mdgpu_cu.mods, m);
	free(m->ptx);
	free(m);
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
	return mdgpu_cu_load(module, image);
}

/*
 * JIT options: the JIT runs in the daemon's worker, which takes none of
 * them from here.  Output options are answered as "nothing written"
 * (empty logs, zero wall time); the others are hints and are ignored.
 */
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
				    unsigned int numOptions,
				    CUjit_option *options,
				    void **optionValues)
{
	if (numOptions && (!options || !optionValues))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < numOptions; i++) {
		switch (options[i]) {
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			optionValues[i] = NULL;	/* bytes written: 0 */
			break;
		case CU_JIT_INFO_LOG_BUFFER:
		case CU_JIT_ERROR_LOG_BUFFER:
			/* An empty string if the buffer has room for one. */
			for (unsigned j = 0; j < numOptions; j++) {
				CUjit_option sz = options[i] ==
					CU_JIT_INFO_LOG_BUFFER ?
					CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES :
					CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;

				if (options[j] == sz && optionValues[j] &&
				    optionValues[i])
					*(char *)optionValues[i] = '\0';
			}
			break;
		case CU_JIT_WALL_TIME:
			memset(&optionValues[i], 0, sizeof(float));
			break;
		default:
			break;
		}
	}
	return mdgpu_cu_load(module, image);
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
	CUcontext ctx;
	CUresult r = mdgpu_cu_enter_ctx(&ctx);

	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.mods, hmod)) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else {
		r = mdgpu_cu_result(mdgpu_synchronize(mdgpu_cu.g));
		mdgpu_cu_mod_drop(hmod);
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
				     const char *name)
{
	CUfunction f;
	CUcontext ctx;
	CUresult r;
	size_t len;
	int ret;

	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	len = strnlen(name, MDGPU_NAME_MAX + 1);
	if (!len || len > MDGPU_NAME_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.mods, hmod)) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	/* The same name gives the same handle, as with the real driver. */
	for (size_t i = 0; i < mdgpu_cu.funcs.n; i++) {
		f = mdgpu_cu.funcs.v[i];
		if (f->mod == hmod && !strcmp(f->name, name)) {
			*hfunc = f;
			goto out;
		}
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->name = strdup(name)) ||
	    mdgpu_cu_set_add(&mdgpu_cu.funcs, f)) {
		if (f)
			free(f->name);
		free(f);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	f->mod = hmod;
	ret = mdgpu_func_get(mdgpu_cu.g, hmod->module, name, &f->func);
	if (!ret && hmod->ptx) {
		int lr = mdgpu_cu_ptx_layout(hmod->ptx, hmod->ptx_len, name,
					     MDGPU_PARAMS_MAX, &f->layout);

		f->layout_known = lr == 0;
		if (lr)
			mdgpu_cu_log("%s: parameter layout unknown (%d): "
				     "kernelParams launches not supported",
				     name, lr);
	}
	if (ret) {
		mdgpu_cu_func_drop(f);
		r = mdgpu_cu_result(ret);
		goto out;
	}
	*hfunc = f;
out:
	mdgpu_cu_leave();
	return r;
}

/* The parameter blob of `extra`: BUFFER_POINTER and BUFFER_SIZE, END. */
static CUresult mdgpu_cu_extra(void **extra, const void **buf, size_t *len)
{
	bool have_buf = false, have_len = false;

	for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
			*buf = extra[i + 1];
			have_buf = true;
		} else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
			if (!extra[i + 1])
				return CUDA_ERROR_INVALID_VALUE;
			*len = *(const size_t *)extra[i + 1];
			have_len = true;
		} else {
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	if (have_buf != have_len || (have_len && *len && !*buf))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* The blob of `kernelParams` by the function's layout, into buf. */
static CUresult mdgpu_cu_pack(CUfunction f, void **params, unsigned char *buf,
			      size_t *len)
{
	if (!f->layout_known)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (f->layout.count && !params)
		return CUDA_ERROR_INVALID_VALUE;
	memset(buf, 0, f->layout.bytes);
	for (uint32_t i = 0; i < f->layout.count; i++) {
		const struct mdgpu_cu_param *p = &f->layout.params[i];

		if (!params[i])
			return CUDA_ERROR_INVALID_VALUE;
		memcpy(buf + p->offset, params[i], p->size);
	}
	*len = f->layout.bytes;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX,
				unsigned int gridDimY, unsigned int gridDimZ,
				unsigned int blockDimX, unsigned int blockDimY,
				unsigned int blockDimZ,
				unsigned int sharedMemBytes, CUstream hStream,
				void **kernelParams, void **extra)
{
	const uint32_t grid[3] = { gridDimX, gridDimY, gridDimZ };
	const uint32_t block[3] = { blockDimX, blockDimY, blockDimZ };
	unsigned char packed[MDGPU_PARAMS_MAX];
	const void *blob = NULL;
	size_t len = 0;
	CUcontext ctx;
	CUresult r;

	if (kernelParams && extra)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.funcs, f)) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	r = mdgpu_cu_stream_check(hStream);
	if (r)
		goto out;
	if (extra) {
		r = mdgpu_cu_extra(extra, &blob, &len);
	} else if (kernelParams || !f->layout_known) {
		/* No kernelParams and no layout: the caller says the kernel
		 * takes no parameters; the daemon checks. */
		if (kernelParams) {
			r = mdgpu_cu_pack(f, kernelParams, packed, &len);
			blob = packed;
		}
	} else {
		r = mdgpu_cu_pack(f, NULL, packed, &len);
		blob = packed;
	}
	if (r)
		goto out;
	if (len > MDGPU_PARAMS_MAX) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	r = mdgpu_cu_result(mdgpu_launch(mdgpu_cu.g, f->func, grid, block,
					 sharedMemBytes, blob,
					 (uint32_t)len));
out:
	mdgpu_cu_leave();
	return r;
}
MDGPU_CU_ALIAS(cuLaunchKernel_ptsz, cuLaunchKernel);
