// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: kernel launches (cuLaunchKernel, cuLaunchKernelEx,
 * cuLaunchCooperativeKernel).
 *
 * A launch with `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE) passes the
 * caller's buffer as the parameter blob.  A launch with `kernelParams`
 * packs each parameter at the offset and size of the function's layout
 * (module.c: the host driver's, or a PTX module's own); without a layout
 * it is CUDA_ERROR_NOT_SUPPORTED.  A library's kernel (CUkernel) is a
 * function and launches as one.
 *
 * Launches are queued on their stream (mdgpu_launch_ex: no round trip);
 * their errors show at the next synchronising call.  On a capturing
 * stream a launch becomes a kernel node with a copy of its parameters
 * (graph.c).  The _ptsz variants launch on the per-thread default stream
 * where the stream is NULL (stream.c).
 */
#include <stdlib.h>
#include <string.h>

#include "code.h"
#include "graph.h"

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

/*
 * The largest blob the daemon takes: MDGPU_PARAMS_MAX from ABI 1.6 on,
 * MDGPU_PARAMS_MAX_1_5 before (the bound of CUDA before 12.1 too).
 */
static size_t mdgpu_cu_params_max(void)
{
	return (mdgpu_cu.info.abi_version & 0xffff) >= 6 ?
	       MDGPU_PARAMS_MAX : MDGPU_PARAMS_MAX_1_5;
}

/*
 * The blob of `kernelParams` by the function's layout: into buf
 * (MDGPU_CU_PACKED_BYTES) when it fits, else into *heap, allocated here
 * and freed by the caller.
 */
static CUresult mdgpu_cu_pack(CUfunction f, void **params, unsigned char *buf,
			      unsigned char **heap, size_t *len)
{
	if (!f->layout_known) {
		mdgpu_cu_log("launch of %s: parameter layout unknown",
			     f->name);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (f->layout.count && !params)
		return CUDA_ERROR_INVALID_VALUE;
	if (f->layout.bytes > mdgpu_cu_params_max()) {
		mdgpu_cu_log("launch of %s: %u bytes of parameters, more than "
			     "the %zu the daemon takes", f->name,
			     f->layout.bytes, mdgpu_cu_params_max());
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (f->layout.bytes > MDGPU_CU_PACKED_BYTES) {
		*heap = malloc(f->layout.bytes);
		if (!*heap)
			return CUDA_ERROR_OUT_OF_MEMORY;
		buf = *heap;
	}
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

CUresult mdgpu_cu_kernel_blob(CUfunction f, void **kernelParams,
			      void **extra, unsigned char *packed,
			      unsigned char **heap, const void **blob,
			      size_t *len)
{
	CUresult r = CUDA_SUCCESS;

	*blob = NULL;
	*heap = NULL;
	*len = 0;
	if (extra) {
		r = mdgpu_cu_extra(extra, blob, len);
	} else if (kernelParams || f->layout_known) {
		r = mdgpu_cu_pack(f, kernelParams, packed, heap, len);
		*blob = *heap ? *heap : packed;
	}
	/* Neither, and no layout: the caller says the kernel takes no
	 * parameters; the host driver checks.  More than the daemon takes
	 * is the driver's answer to a blob past its bound. */
	if (!r && *len > mdgpu_cu_params_max()) {
		mdgpu_cu_log("launch of %s: %zu bytes of parameters, more "
			     "than the %zu the daemon takes", f->name, *len,
			     mdgpu_cu_params_max());
		r = CUDA_ERROR_INVALID_VALUE;
	}
	if (r) {
		free(*heap);
		*heap = NULL;
	}
	return r;
}

static CUresult mdgpu_cu_launch(CUfunction f, struct mdgpu_launch_cfg *cfg,
				CUstream hStream, void **kernelParams,
				void **extra)
{
	unsigned char packed[MDGPU_CU_PACKED_BYTES], *heap = NULL;
	struct mdgpu_cu_op op = { .kind = MDGPU_CU_OP_KERNEL };
	const void *blob;
	size_t len;
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
	r = mdgpu_cu_stream_resolve(NULL, &hStream);
	if (!r)
		r = mdgpu_cu_kernel_blob(f, kernelParams, extra, packed, &heap,
					 &blob, &len);
	if (r)
		goto out;
	/* Queued, or captured with a copy of the parameters (graph.c). */
	op.u.kernel.f = f;
	op.u.kernel.func = f->func;
	op.u.kernel.cfg = *cfg;
	op.u.kernel.params = blob;
	op.u.kernel.len = (uint32_t)len;
	r = mdgpu_cu_submit(hStream, &op);
	free(heap);
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX,
				unsigned int gridDimY, unsigned int gridDimZ,
				unsigned int blockDimX, unsigned int blockDimY,
				unsigned int blockDimZ,
				unsigned int sharedMemBytes, CUstream hStream,
				void **kernelParams, void **extra)
{
	struct mdgpu_launch_cfg cfg = {
		.grid = { gridDimX, gridDimY, gridDimZ },
		.block = { blockDimX, blockDimY, blockDimZ },
		.shared_bytes = sharedMemBytes,
	};

	return mdgpu_cu_launch(f, &cfg, hStream, kernelParams, extra);
}
MDGPU_CU_PTSZ(cuLaunchKernel_ptsz, cuLaunchKernel,
	      (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
	       unsigned int bx, unsigned int by, unsigned int bz,
	       unsigned int smem, CUstream s, void **kernelParams,
	       void **extra),
	      cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, MDGPU_CU_PTS(s),
			     kernelParams, extra))

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f,
					   unsigned int gridDimX,
					   unsigned int gridDimY,
					   unsigned int gridDimZ,
					   unsigned int blockDimX,
					   unsigned int blockDimY,
					   unsigned int blockDimZ,
					   unsigned int sharedMemBytes,
					   CUstream hStream,
					   void **kernelParams)
{
	struct mdgpu_launch_cfg cfg = {
		.grid = { gridDimX, gridDimY, gridDimZ },
		.block = { blockDimX, blockDimY, blockDimZ },
		.shared_bytes = sharedMemBytes,
		.flags = MDGPU_LAUNCH_F_COOPERATIVE,
	};

	return mdgpu_cu_launch(f, &cfg, hStream, kernelParams, NULL);
}
MDGPU_CU_PTSZ(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel,
	      (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
	       unsigned int bx, unsigned int by, unsigned int bz,
	       unsigned int smem, CUstream s, void **kernelParams),
	      cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, smem,
					MDGPU_CU_PTS(s), kernelParams))

/*
 * Launch attributes.  COOPERATIVE and CLUSTER_DIMENSION are passed on.
 * Accepted and ignored, because none can change what a correct kernel
 * computes: IGNORE; ACCESS_POLICY_WINDOW, PRIORITY,
 * CLUSTER_SCHEDULING_POLICY_PREFERENCE and
 * PREFERRED_SHARED_MEMORY_CARVEOUT (performance hints);
 * SYNCHRONIZATION_POLICY (how the host waits);
 * PROGRAMMATIC_STREAM_SERIALIZATION (without it the kernel starts after
 * the previous one ends, which its grid-dependency wait also allows);
 * MEM_SYNC_DOMAIN and MEM_SYNC_DOMAIN_MAP (all work in one domain: fences
 * order more, never less).  Every other attribute (programmatic or
 * completion events, preferred cluster shapes, graph-only ones) is
 * CUDA_ERROR_NOT_SUPPORTED.
 */
CUresult mdgpu_cu_launch_attrs(const CUlaunchAttribute *attrs, unsigned n,
			       uint32_t *flags, uint32_t *cluster)
{
	if (n && !attrs)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < n; i++) {
		const CUlaunchAttributeValue *v = &attrs[i].value;

		switch (attrs[i].id) {
		case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
			if (v->cooperative)
				*flags |= MDGPU_LAUNCH_F_COOPERATIVE;
			else
				*flags &= ~MDGPU_LAUNCH_F_COOPERATIVE;
			break;
		case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
			if (!v->clusterDim.x || !v->clusterDim.y ||
			    !v->clusterDim.z ||
			    v->clusterDim.x > MDGPU_CLUSTER_X(~0U) ||
			    v->clusterDim.y > MDGPU_CLUSTER_Y(~0U) ||
			    v->clusterDim.z > MDGPU_CLUSTER_Z(~0U))
				return CUDA_ERROR_INVALID_VALUE;
			*cluster = MDGPU_CLUSTER(v->clusterDim.x,
						 v->clusterDim.y,
						 v->clusterDim.z);
			break;
		case CU_LAUNCH_ATTRIBUTE_IGNORE:
		case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
		case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
		case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
		case CU_LAUNCH_ATTRIBUTE_PRIORITY:
		case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
		case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
			break;
		default:
			mdgpu_cu_log("launch attribute %d is not supported",
				     (int)attrs[i].id);
			return CUDA_ERROR_NOT_SUPPORTED;
		}
	}
	return CUDA_SUCCESS;
}

/* cuLaunchKernelEx; ptsz: a NULL config->hStream is the per-thread
 * default stream. */
static CUresult mdgpu_cu_launch_ex(const CUlaunchConfig *config, bool ptsz,
				   CUfunction f, void **kernelParams,
				   void **extra)
{
	struct mdgpu_launch_cfg cfg = { .flags = 0 };
	CUresult r;

	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_launch_attrs(config->attrs, config->numAttrs, &cfg.flags,
				  &cfg.cluster);
	if (r)
		return r;
	cfg.grid[0] = config->gridDimX;
	cfg.grid[1] = config->gridDimY;
	cfg.grid[2] = config->gridDimZ;
	cfg.block[0] = config->blockDimX;
	cfg.block[1] = config->blockDimY;
	cfg.block[2] = config->blockDimZ;
	cfg.shared_bytes = config->sharedMemBytes;
	return mdgpu_cu_launch(f, &cfg, ptsz ? MDGPU_CU_PTS(config->hStream) :
					      config->hStream,
			       kernelParams, extra);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
				  void **kernelParams, void **extra)
{
	return mdgpu_cu_launch_ex(config, false, f, kernelParams, extra);
}
MDGPU_CU_PTSZ(cuLaunchKernelEx_ptsz, cuLaunchKernelEx,
	      (const CUlaunchConfig *config, CUfunction f, void **kernelParams,
	       void **extra),
	      mdgpu_cu_launch_ex(config, true, f, kernelParams, extra))
