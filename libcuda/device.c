// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: the device.  The vGPU opened at cuInit is device 0, the only
 * one.  What the daemon reports of it (mdgpu_get_info) is all that is
 * answered: total memory is the vGPU's quota and the SM count the real
 * GPU's; every other attribute is CUDA_ERROR_NOT_SUPPORTED rather than a
 * guessed value.  The daemon does not report the physical GPU's name or
 * UUID: the name says which vGPU type and backend it is, and the UUID
 * identifies the vGPU (vgpu_id, type_id), not the GPU.
 */
#include <stdio.h>
#include <string.h>

#include "priv.h"

static CUresult mdgpu_cu_device_check(CUdevice dev)
{
	return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	CUresult r;

	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	*count = 1;
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult r;

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	mdgpu_cu_leave();
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = 0;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
	const char *backend;
	CUresult r;

	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_device_check(dev);
	if (!r) {
		backend = mdgpu_cu.info.backend == 1 ? "sim" :
			  mdgpu_cu.info.backend == 2 ? "cuda" : "unknown";
		snprintf(name, (size_t)len, "mdgpu vGPU%s%s (%s backend)",
			 mdgpu_cu.type[0] ? " " : "", mdgpu_cu.type, backend);
	}
	mdgpu_cu_leave();
	return r;
}

static void mdgpu_cu_put_be32(char *p, uint32_t v)
{
	p[0] = (char)(v >> 24);
	p[1] = (char)(v >> 16);
	p[2] = (char)(v >> 8);
	p[3] = (char)v;
}

CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	CUresult r;

	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_device_check(dev);
	if (!r) {
		/* "mdgpu", a zero, backend, zero, vgpu_id, type_id. */
		memset(uuid->bytes, 0, sizeof(uuid->bytes));
		memcpy(uuid->bytes, "mdgpu", 5);
		uuid->bytes[6] = (char)mdgpu_cu.info.backend;
		mdgpu_cu_put_be32(uuid->bytes + 8, mdgpu_cu.info.vgpu_id);
		mdgpu_cu_put_be32(uuid->bytes + 12, mdgpu_cu.info.type_id);
	}
	mdgpu_cu_leave();
	return r;
}
/* cuDeviceGetUuid (9.2) and _v2 (11.4) differ only for MIG instances,
 * which a vGPU is not. */
MDGPU_CU_ALIAS(cuDeviceGetUuid, cuDeviceGetUuid_v2);

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CUresult r;

	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_device_check(dev);
	if (!r)
		*bytes = (size_t)mdgpu_cu.info.fb_quota;
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib,
				      CUdevice dev)
{
	CUresult r;

	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_device_check(dev);
	if (r)
		goto out;
	if (attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		if (mdgpu_cu.info.sm_count > (uint32_t)__INT_MAX__) {
			r = CUDA_ERROR_NOT_SUPPORTED;
			break;
		}
		*pi = (int)mdgpu_cu.info.sm_count;
		break;
	default:
		r = CUDA_ERROR_NOT_SUPPORTED;
		mdgpu_cu_log("cuDeviceGetAttribute(%d): not reported by the "
			     "daemon", (int)attrib);
		break;
	}
out:
	mdgpu_cu_leave();
	return r;
}

/*
 * The primary context: one per device, reference-counted.  Objects made
 * in it live until the last release (or a reset), as with the real
 * driver; it is in mdgpu_cu.ctxs while referenced.
 */
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_device_check(dev);
	if (r)
		goto out;
	if (!mdgpu_cu.primary_refs) {
		if (mdgpu_cu_set_add(&mdgpu_cu.ctxs, &mdgpu_cu.primary)) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		mdgpu_cu.primary.flags = mdgpu_cu.primary_flags;
	}
	if (mdgpu_cu.primary_refs == UINT32_MAX) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	mdgpu_cu.primary_refs++;
	*pctx = &mdgpu_cu.primary;
out:
	mdgpu_cu_leave();
	return r;
}

static void mdgpu_cu_primary_drop(void)
{
	mdgpu_cu_ctx_release_objects(&mdgpu_cu.primary);
	mdgpu_cu_set_del(&mdgpu_cu.ctxs, &mdgpu_cu.primary);
	mdgpu_cu.primary_refs = 0;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_device_check(dev);
	if (!r && !mdgpu_cu.primary_refs)
		r = CUDA_ERROR_INVALID_CONTEXT;
	if (!r && --mdgpu_cu.primary_refs == 0)
		mdgpu_cu_primary_drop();
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_device_check(dev);
	if (!r && mdgpu_cu.primary_refs)
		mdgpu_cu_primary_drop();
	if (!r)
		mdgpu_cu.primary_flags = 0;
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
					    int *active)
{
	CUresult r;

	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_device_check(dev);
	if (!r) {
		*flags = mdgpu_cu.primary_flags;
		*active = mdgpu_cu.primary_refs > 0;
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev,
					       unsigned int flags)
{
	const unsigned known = CU_CTX_SCHED_MASK | CU_CTX_LMEM_RESIZE_TO_MAX;
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_device_check(dev);
	if (!r && (flags & ~known))
		r = CUDA_ERROR_INVALID_VALUE;
	if (!r)
		mdgpu_cu.primary_flags = flags;
	mdgpu_cu_leave();
	return r;
}
