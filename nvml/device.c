// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpu's libnvidia-ml.so.1: the one device, the process's vGPU.
 *
 * Answers come from libcuda's description of the vGPU (name, UUID, quota,
 * compute capability; read at nvmlInit) and from the daemon at each call
 * (QUERY FB_USED, QUERY GPU_TIME).  What only the physical GPU could
 * answer (temperature, power, clocks, fans) is NVML_ERROR_NOT_SUPPORTED:
 * it is shared with other tenants and would tell one tenant about the
 * others' work (Documentation/nvml.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uapi/mdgpu.h"
#include "common/pci_loc.h"
#include "priv.h"

/* The vGPU's PCI identity, as libcuda reports it: its own vendor and
 * device ids, location 0000:00:00.0 (libcuda's PCI attributes are 0; the
 * host GPU's location means nothing to a tenant). */
#define MDGPU_NVML_PCI_DEVICE_ID \
	((unsigned int)MDGPU_PCI_DEVICE_ID << 16 | MDGPU_PCI_VENDOR_ID)
#define MDGPU_NVML_PCI_SUBSYS_ID \
	((unsigned int)MDGPU_PCI_SUBSYS_ID << 16 | MDGPU_PCI_SUBSYS_VENDOR_ID)

nvmlReturn_t DECLDIR nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	nvmlReturn_t r = mdgpu_nvml_check_init();

	if (r)
		return r;
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&mdgpu_nvml.lock);
	*deviceCount = mdgpu_nvml.have_vgpu ? 1 : 0;
	pthread_mutex_unlock(&mdgpu_nvml.lock);
	return NVML_SUCCESS;
}
MDGPU_NVML_ALIAS(nvmlDeviceGetCount, nvmlDeviceGetCount_v2);

nvmlReturn_t DECLDIR nvmlDeviceGetHandleByIndex_v2(unsigned int index,
						   nvmlDevice_t *device)
{
	nvmlReturn_t r = mdgpu_nvml_check_init();

	if (r)
		return r;
	if (!device || index != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = mdgpu_nvml_check(&mdgpu_nvml_device);
	if (!r)
		*device = &mdgpu_nvml_device;
	return r;
}
MDGPU_NVML_ALIAS(nvmlDeviceGetHandleByIndex, nvmlDeviceGetHandleByIndex_v2);

nvmlReturn_t DECLDIR nvmlDeviceGetHandleByUUID(const char *uuid,
					       nvmlDevice_t *device)
{
	nvmlReturn_t r = mdgpu_nvml_check_init();

	if (r)
		return r;
	if (!uuid || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (mdgpu_nvml_check(&mdgpu_nvml_device) ||
	    strcasecmp(uuid, mdgpu_nvml.uuid))
		return NVML_ERROR_NOT_FOUND;
	*device = &mdgpu_nvml_device;
	return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId,
						      nvmlDevice_t *device)
{
	nvmlReturn_t r = mdgpu_nvml_check_init();
	struct mdgpu_pci_loc l;

	if (r)
		return r;
	if (!pciBusId || !device ||
	    mdgpu_pci_loc_parse(pciBusId, MDGPU_PCI_LOC_DOMAIN_OPTIONAL, &l))
		return NVML_ERROR_INVALID_ARGUMENT;
	if (mdgpu_nvml_check(&mdgpu_nvml_device) || l.dom || l.bus ||
	    l.slot || l.fn)
		return NVML_ERROR_NOT_FOUND;
	*device = &mdgpu_nvml_device;
	return NVML_SUCCESS;
}
MDGPU_NVML_ALIAS(nvmlDeviceGetHandleByPciBusId,
		 nvmlDeviceGetHandleByPciBusId_v2);

/* libcuda's cuDeviceGetName: "mdgpu vGPU <type> of <GPU>". */
nvmlReturn_t DECLDIR nvmlDeviceGetName(nvmlDevice_t device, char *name,
				       unsigned int length)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	return r ? r : mdgpu_nvml_copy_str(name, length, mdgpu_nvml.name);
}

/* libcuda's cuDeviceGetUuid: the vGPU's own UUID. */
nvmlReturn_t DECLDIR nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
				       unsigned int length)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	return r ? r : mdgpu_nvml_copy_str(uuid, length, mdgpu_nvml.uuid);
}

/* The quota and what the daemon counts as allocated in it. */
static nvmlReturn_t mdgpu_nvml_memory(nvmlDevice_t device, uint64_t *total,
				      uint64_t *used)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);
	uint64_t requested;
	int ret;

	if (r)
		return r;
	ret = mdgpu_nvml_query(MDGPU_QUERY_FB_USED, used, &requested);
	if (ret) {
		mdgpu_nvml_log("memory: QUERY FB_USED: %d", ret);
		return mdgpu_nvml_result(ret);
	}
	*total = mdgpu_nvml.total;
	return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
					     nvmlMemory_t *memory)
{
	uint64_t total = 0, used = 0;
	nvmlReturn_t r;

	r = mdgpu_nvml_check(device);
	if (r)
		return r;
	if (!memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = mdgpu_nvml_memory(device, &total, &used);
	if (r)
		return r;
	memory->total = total;
	memory->used = used;
	memory->free = used < total ? total - used : 0;
	return NVML_SUCCESS;
}

/* No memory is set aside for the system inside a vGPU's quota (its
 * context's memory is outside it): reserved is 0. */
nvmlReturn_t DECLDIR nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
						nvmlMemory_v2_t *memory)
{
	uint64_t total = 0, used = 0;
	nvmlReturn_t r;

	r = mdgpu_nvml_check(device);
	if (r)
		return r;
	if (!memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (memory->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	r = mdgpu_nvml_memory(device, &total, &used);
	if (r)
		return r;
	memory->total = total;
	memory->reserved = 0;
	memory->used = used;
	memory->free = used < total ? total - used : 0;
	return NVML_SUCCESS;
}

/*
 * gpu: the vGPU's GPU time over the daemon's window (QUERY GPU_TIME, the
 * last second) as a percentage of the window, rounded, at most 100.
 * memory: 0.  The daemon measures no memory-controller activity per
 * tenant, and the physical GPU's figure is every tenant's together.
 */
nvmlReturn_t DECLDIR nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
						   nvmlUtilization_t *utilization)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);
	uint64_t busy, window, pct;
	int ret;

	if (r)
		return r;
	if (!utilization)
		return NVML_ERROR_INVALID_ARGUMENT;
	ret = mdgpu_nvml_query(MDGPU_QUERY_GPU_TIME, &busy, &window);
	if (ret == -EINVAL) {
		/* A daemon without the query. */
		mdgpu_nvml_log("utilization: the daemon has no QUERY GPU_TIME");
		return NVML_ERROR_NOT_SUPPORTED;
	}
	if (ret)
		return mdgpu_nvml_result(ret);
	if (!window)
		return NVML_ERROR_UNKNOWN;
	pct = busy >= window ? 100 : (busy * 100 + window / 2) / window;
	utilization->gpu = (unsigned int)pct;
	utilization->memory = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
					     nvmlPciInfo_t *pci)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	if (r)
		return r;
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof(*pci));
	pci->pciDeviceId = MDGPU_NVML_PCI_DEVICE_ID;
	pci->pciSubSystemId = MDGPU_NVML_PCI_SUBSYS_ID;
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy),
		 NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT, 0u, 0u, 0u);
	snprintf(pci->busId, sizeof(pci->busId), NVML_DEVICE_PCI_BUS_ID_FMT,
		 0u, 0u, 0u);
	return NVML_SUCCESS;
}
MDGPU_NVML_ALIAS(nvmlDeviceGetPciInfo, nvmlDeviceGetPciInfo_v3);
MDGPU_NVML_ALIAS(nvmlDeviceGetPciInfo_v2, nvmlDeviceGetPciInfo_v3);

/* The physical GPU's, as libcuda reports them. */
nvmlReturn_t DECLDIR nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device,
							int *major, int *minor)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	if (r)
		return r;
	if (!major || !minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	*major = mdgpu_nvml.cc_major;
	*minor = mdgpu_nvml.cc_minor;
	return NVML_SUCCESS;
}

/* A vGPU takes any number of contexts of its process (libcuda). */
nvmlReturn_t DECLDIR nvmlDeviceGetComputeMode(nvmlDevice_t device,
					      nvmlComputeMode_t *mode)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	if (r)
		return r;
	if (!mode)
		return NVML_ERROR_INVALID_ARGUMENT;
	*mode = NVML_COMPUTEMODE_DEFAULT;
	return NVML_SUCCESS;
}

/*
 * Peer-to-peer between two devices: a process sees one vGPU and no peer
 * (libcuda's cuDeviceCanAccessPeer has none to name), so the only pair
 * there is, the vGPU with itself, answers NOT_SUPPORTED for every
 * capability.  The call succeeds, as on a single-GPU host: NCCL asks it
 * of every pair of devices, the device with itself included, at its first
 * NVML use and fails its initialisation on an error.
 */
nvmlReturn_t DECLDIR nvmlDeviceGetP2PStatus(nvmlDevice_t device1,
					    nvmlDevice_t device2,
					    nvmlGpuP2PCapsIndex_t p2pIndex,
					    nvmlGpuP2PStatus_t *p2pStatus)
{
	nvmlReturn_t r = mdgpu_nvml_check(device1);

	if (!r)
		r = mdgpu_nvml_check(device2);
	if (r)
		return r;
	if (!p2pStatus || (unsigned int)p2pIndex >=
	    (unsigned int)NVML_P2P_CAPS_INDEX_UNKNOWN)
		return NVML_ERROR_INVALID_ARGUMENT;
	*p2pStatus = NVML_P2P_STATUS_NOT_SUPPORTED;
	return NVML_SUCCESS;
}

/* Nothing of the vGPU outlives its user: a socket vGPU goes with its
 * connection, a VM's is the daemon's and the module's to keep. */
nvmlReturn_t DECLDIR nvmlDeviceGetPersistenceMode(nvmlDevice_t device,
						  nvmlEnableState_t *mode)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	if (r)
		return r;
	if (!mode)
		return NVML_ERROR_INVALID_ARGUMENT;
	*mode = NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetIndex(nvmlDevice_t device,
					unsigned int *index)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	if (r)
		return r;
	if (!index)
		return NVML_ERROR_INVALID_ARGUMENT;
	*index = 0;
	return NVML_SUCCESS;
}

/* The minor number names /dev/nvidiaN; a vGPU has no such node, and a
 * made-up number would send a device plugin to another tenant's GPU. */
nvmlReturn_t DECLDIR nvmlDeviceGetMinorNumber(nvmlDevice_t device,
					      unsigned int *minorNumber)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	if (r)
		return r;
	if (!minorNumber)
		return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_ERROR_NOT_SUPPORTED;
}

/* The daemon does not report the host GPU's brand, and a vGPU of mdgpu
 * is none of NVIDIA's products. */
nvmlReturn_t DECLDIR nvmlDeviceGetBrand(nvmlDevice_t device,
					nvmlBrandType_t *type)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	if (r)
		return r;
	if (!type)
		return NVML_ERROR_INVALID_ARGUMENT;
	*type = NVML_BRAND_UNKNOWN;
	return NVML_SUCCESS;
}

/* From the compute capability, NVIDIA's mapping of the two. */
nvmlReturn_t DECLDIR nvmlDeviceGetArchitecture(nvmlDevice_t device,
					       nvmlDeviceArchitecture_t *arch)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);
	int cc;

	if (r)
		return r;
	if (!arch)
		return NVML_ERROR_INVALID_ARGUMENT;
	cc = mdgpu_nvml.cc_major * 10 + mdgpu_nvml.cc_minor;
	if (cc >= 100 && cc < 130)
		*arch = NVML_DEVICE_ARCH_BLACKWELL;
	else if (cc >= 90 && cc < 100)
		*arch = NVML_DEVICE_ARCH_HOPPER;
	else if (cc == 89)
		*arch = NVML_DEVICE_ARCH_ADA;
	else if (cc >= 80 && cc < 89)
		*arch = NVML_DEVICE_ARCH_AMPERE;
	else if (cc == 75)
		*arch = NVML_DEVICE_ARCH_TURING;
	else if (cc >= 70 && cc < 75)
		*arch = NVML_DEVICE_ARCH_VOLTA;
	else if (cc >= 60 && cc < 70)
		*arch = NVML_DEVICE_ARCH_PASCAL;
	else if (cc >= 50 && cc < 60)
		*arch = NVML_DEVICE_ARCH_MAXWELL;
	else if (cc >= 30 && cc < 40)
		*arch = NVML_DEVICE_ARCH_KEPLER;
	else
		*arch = NVML_DEVICE_ARCH_UNKNOWN;
	return NVML_SUCCESS;
}

/*
 * Sensors of the physical GPU: its temperature, power draw, clocks and
 * fans follow every tenant's work, so they would tell this tenant about
 * the others'.  The handle and arguments are still checked.
 */
nvmlReturn_t DECLDIR nvmlDeviceGetTemperature(nvmlDevice_t device,
					      nvmlTemperatureSensors_t sensorType,
					      unsigned int *temp)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	(void)sensorType;
	if (r)
		return r;
	return temp ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t DECLDIR nvmlDeviceGetPowerUsage(nvmlDevice_t device,
					     unsigned int *power)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	if (r)
		return r;
	return power ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t DECLDIR nvmlDeviceGetClockInfo(nvmlDevice_t device,
					    nvmlClockType_t type,
					    unsigned int *clock)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	(void)type;
	if (r)
		return r;
	return clock ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t DECLDIR nvmlDeviceGetFanSpeed(nvmlDevice_t device,
					   unsigned int *speed)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);

	if (r)
		return r;
	return speed ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
}

/*
 * The processes on the vGPU: the caller's only.  A vGPU belongs to the one
 * process that opened it (a socket connection, the guest device's single
 * opener), and no tenant learns of another's processes.  Its memory is
 * all the vGPU's allocated memory.  *count in: room in infos; out: 1.
 */
static nvmlReturn_t mdgpu_nvml_process(nvmlDevice_t device,
				       unsigned int *count, bool room,
				       unsigned int *pid, uint64_t *used)
{
	nvmlReturn_t r = mdgpu_nvml_check(device);
	uint64_t total;

	if (r)
		return r;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (*count < 1 || !room) {
		*count = 1;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	r = mdgpu_nvml_memory(device, &total, used);
	if (r)
		return r;
	*count = 1;
	*pid = (unsigned int)getpid();
	return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetComputeRunningProcesses_v3(
	nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos)
{
	unsigned int pid = 0;
	uint64_t used = 0;
	nvmlReturn_t r;

	r = mdgpu_nvml_process(device, infoCount, infos != NULL, &pid, &used);
	if (r)
		return r;
	infos[0] = (nvmlProcessInfo_t){
		.pid = pid, .usedGpuMemory = used,
		/* Not a MIG instance. */
		.gpuInstanceId = 0xffffffffu, .computeInstanceId = 0xffffffffu,
	};
	return NVML_SUCCESS;
}
/* The 11.x entry point fills the same structure. */
MDGPU_NVML_ALIAS(nvmlDeviceGetComputeRunningProcesses_v2,
		 nvmlDeviceGetComputeRunningProcesses_v3);

nvmlReturn_t DECLDIR nvmlDeviceGetComputeRunningProcesses(
	nvmlDevice_t device, unsigned int *infoCount,
	nvmlProcessInfo_v1_t *infos)
{
	unsigned int pid = 0;
	uint64_t used = 0;
	nvmlReturn_t r;

	r = mdgpu_nvml_process(device, infoCount, infos != NULL, &pid, &used);
	if (r)
		return r;
	infos[0] = (nvmlProcessInfo_v1_t){ .pid = pid, .usedGpuMemory = used };
	return NVML_SUCCESS;
}
