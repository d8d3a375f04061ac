// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: context limits (cuCtxGetLimit, cuCtxSetLimit).  Every context
 * of the process is over the vGPU's one GPU context, so a limit is the
 * vGPU's and a set shows in every context.  The daemon asks the host
 * driver (CTX_LIMIT): the memory a larger stack, printf FIFO or malloc
 * heap reserves is charged to the vGPU's quota (CUDA_ERROR_OUT_OF_MEMORY
 * past it), and CU_LIMIT_PERSISTING_L2_CACHE_SIZE, a resource of the
 * whole GPU, cannot be set (CUDA_ERROR_NOT_PERMITTED).
 */
#include "code.h"

static CUresult mdgpu_cu_limit(CUlimit limit, int set, size_t value,
			       size_t *out)
{
	uint64_t v = 0;
	CUcontext ctx;
	CUresult r;
	int ret;

	if ((unsigned)limit >= CU_LIMIT_MAX)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	ret = mdgpu_ctx_limit(mdgpu_cu.g, (uint32_t)limit, set, value, &v);
	if (ret)
		r = mdgpu_cu_error(ret);
	else if (v > SIZE_MAX)
		r = CUDA_ERROR_UNKNOWN;
	else if (out)
		*out = (size_t)v;
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
	if (!pvalue)
		return CUDA_ERROR_INVALID_VALUE;
	return mdgpu_cu_limit(limit, 0, 0, pvalue);
}

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value)
{
	return mdgpu_cu_limit(limit, 1, value, NULL);
}
