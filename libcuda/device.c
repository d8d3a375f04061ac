// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: the device.  The vGPU opened at cuInit is device 0, the only
 * one.  Its description comes from the daemon (DEVICE_INFO, read once at
 * cuInit): the physical GPU's attributes as the host driver reports them,
 * with libcuda's own answer where the vGPU differs (mdgpu_cu_attr_own):
 * capabilities whose entry points libcuda does not implement read 0, so
 * that runtimes and frameworks take their fallback paths instead of
 * failing later; the PCI location is the vGPU's, not the host's.  Total
 * memory is the vGPU's quota.  The name says it is an mdgpu vGPU of which
 * GPU; the UUID is the vGPU's own (the daemon's).
 */
#include <stdio.h>
#include <string.h>

#include "common/pci_loc.h"
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

/*
 * A text about device dev into out, cut to len bytes with its NUL as the
 * driver cuts names and bus ids: fill writes it, under the lock.
 */
static CUresult mdgpu_cu_device_text(char *out, int len, CUdevice dev,
				     void (*fill)(char *out, size_t len))
{
	CUresult r;

	if (!out || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_device_check(dev);
	if (!r)
		fill(out, (size_t)len);
	mdgpu_cu_leave();
	return r;
}

static void mdgpu_cu_name(char *out, size_t len)
{
	snprintf(out, len, "mdgpu vGPU%s%s of %s",
		 mdgpu_cu.type[0] ? " " : "", mdgpu_cu.type, mdgpu_cu.dev.name);
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
	return mdgpu_cu_device_text(name, len, dev, mdgpu_cu_name);
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
	if (!r)
		memcpy(uuid->bytes, mdgpu_cu.dev.uuid, sizeof(uuid->bytes));
	mdgpu_cu_leave();
	return r;
}
/* cuDeviceGetUuid (9.2) and _v2 (11.4) differ only for MIG instances,
 * which a vGPU is not. */
MDGPU_CU_ALIAS(cuDeviceGetUuid, cuDeviceGetUuid_v2);

/*
 * The vGPU's PCI location, the one its PCI attributes give: 0000:00:00.0
 * (the host GPU's location is not the tenant's to know).  Written as
 * NVIDIA's driver writes a bus id, "%04x:%02x:%02x.0" in upper case, cut
 * to len bytes with the NUL as cuDeviceGetName cuts a name.
 */
static void mdgpu_cu_bus_id(char *out, size_t len)
{
	snprintf(out, len, "%04X:%02X:%02X.0", 0, 0, 0);
}

CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	return mdgpu_cu_device_text(pciBusId, len, dev, mdgpu_cu_bus_id);
}

/* Device 0 for the vGPU's location in any spelling CUDA takes
 * (common/pci_loc.h), CUDA_ERROR_INVALID_DEVICE for any other location,
 * CUDA_ERROR_INVALID_VALUE for text that is not a location. */
CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
	struct mdgpu_pci_loc l;
	CUresult r;

	if (!dev || !pciBusId)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	mdgpu_cu_leave();
	if (mdgpu_pci_loc_parse(pciBusId, MDGPU_PCI_LOC_DOMAIN_OPTIONAL |
				MDGPU_PCI_LOC_FUNCTION_OPTIONAL, &l))
		return CUDA_ERROR_INVALID_VALUE;
	if (l.dom || l.bus || l.slot || l.fn)
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = 0;
	return CUDA_SUCCESS;
}

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

/*
 * Stream memory operations (memop.c) need a daemon of ABI 1.10; their 64-bit
 * form and the NOR condition also the host GPU's word for them (its
 * CAN_USE_64_BIT_STREAM_MEM_OPS, CAN_USE_STREAM_WAIT_VALUE_NOR).  The
 * deprecated _V1 attributes say the same of the v1 names, which memop.c
 * serves as the _v2 ones.  Remote-write flushes are never offered.
 */
static int mdgpu_cu_attr_memop(CUdevice_attribute host_attr)
{
	if (!mdgpu_cu_memop_offered())
		return 0;
	if (!host_attr)
		return 1;
	return (unsigned)host_attr < mdgpu_cu.dev.nr_attrs &&
	       mdgpu_cu.dev.attr[host_attr] == 1;
}

/*
 * Attributes libcuda answers itself.  Capabilities of entry points it does
 * not implement (managed memory, the virtual memory API, IPC and interop
 * handles, shareable and host memory pools, remote-write flushes,
 * multicast, host NUMA allocation) are 0: the CUDA runtime and the
 * frameworks check these before using them.  Device memory pools
 * (mempool.c) are 1.  The PCI location and NUMA placement of the host's
 * GPU mean nothing to a tenant: 0 and "no NUMA".  Mapped host memory
 * exists only where the daemon maps the aperture into the GPU.
 */
static bool mdgpu_cu_attr_own(CUdevice_attribute a, int *v)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1:
		*v = mdgpu_cu_attr_memop(0);
		return true;
	case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1:
	case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS:
		*v = mdgpu_cu_attr_memop(
			CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS);
		return true;
	case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1:
	case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR:
		*v = mdgpu_cu_attr_memop(
			CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR);
		return true;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
		*v = mdgpu_cu.aperture_devptr != 0;
		return true;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:	/* mempool.c */
		*v = 1;
		return true;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
	case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD:
	case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS:
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
	case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM:
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH:
	case CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES:
	case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES:
	case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST:
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING:
	case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES:
	case CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_NUMA_CONFIG:
	case CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_MPS_ENABLED:
	case CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED:
		*v = 0;
		return true;
	case CU_DEVICE_ATTRIBUTE_NUMA_ID:
	case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID:
		*v = -1;
		return true;
	default:
		return false;
	}
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib,
				      CUdevice dev)
{
	int32_t v;
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
	if (mdgpu_cu_attr_own(attrib, pi))
		goto out;
	if ((unsigned)attrib >= mdgpu_cu.dev.nr_attrs ||
	    (v = mdgpu_cu.dev.attr[attrib]) == MDGPU_ATTR_NONE) {
		/* The host driver has no value for it either. */
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	*pi = v;
out:
	mdgpu_cu_leave();
	return r;
}

/*
 * SM_COUNT, the one affinity type cuda.h defines, needs MPS, which a vGPU
 * cannot ask of the daemon (cuCtxCreate_v3): not supported, 0.
 */
CUresult CUDAAPI cuDeviceGetExecAffinitySupport(int *pi,
						CUexecAffinityType type,
						CUdevice dev)
{
	CUresult r;

	if (!pi || type != CU_EXEC_AFFINITY_TYPE_SM_COUNT)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_device_check(dev);
	if (!r)
		*pi = 0;
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
		/* Each activation is a new context to cuCtxGetId. */
		mdgpu_cu.primary.id = mdgpu_cu_ctx_next_id();
		mdgpu_cu.primary.stream_id = mdgpu_cu_stream_next_id();
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

/* The pre-11.0 names answer as the _v2 ones. */
MDGPU_CU_ALIAS(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2);

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
	if (!r) {
		mdgpu_cu.primary_flags = flags;
		mdgpu_cu_apply_sched(flags);
	}
	mdgpu_cu_leave();
	return r;
}
MDGPU_CU_ALIAS(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2);
MDGPU_CU_ALIAS(cuDevicePrimaryCtxSetFlags, cuDevicePrimaryCtxSetFlags_v2);
