/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The part of NVML's interface (NVML API version 13, the CUDA 13.0
 * toolkit's nvml.h) that mdgpu's libnvidia-ml.so.1 implements: its types,
 * constants and prototypes, for building where the toolkit's nvml.h is not
 * installed (it ships in a separate toolkit component).  nvml/nvml.mk uses
 * the toolkit's header when it finds one; nvml/tests/abi_dump.c, built
 * against both, shows that every value and layout here is the toolkit's.
 * Declarations only, written for mdgpu; see NVIDIA's nvml.h for the API.
 */
#ifndef MDGPU_NVML_COMPAT_H
#define MDGPU_NVML_COMPAT_H

#ifdef __cplusplus
extern "C" {
#endif

#define NVML_API_VERSION		13
#define NVML_API_VERSION_STR		"13"
#define DECLDIR

/* The versioned symbols programs link under the plain names. */
#ifndef NVML_NO_UNVERSIONED_FUNC_DEFS
#define nvmlInit				nvmlInit_v2
#define nvmlDeviceGetPciInfo			nvmlDeviceGetPciInfo_v3
#define nvmlDeviceGetCount			nvmlDeviceGetCount_v2
#define nvmlDeviceGetHandleByIndex		nvmlDeviceGetHandleByIndex_v2
#define nvmlDeviceGetHandleByPciBusId		nvmlDeviceGetHandleByPciBusId_v2
#define nvmlDeviceGetComputeRunningProcesses	nvmlDeviceGetComputeRunningProcesses_v3
#endif

#define NVML_STRUCT_VERSION(data, ver) \
	(unsigned int)(sizeof(nvml ## data ## _v ## ver ## _t) | ((ver) << 24U))

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef enum nvmlReturn_enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_ALREADY_INITIALIZED = 5,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_INSUFFICIENT_POWER = 8,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_IRQ_ISSUE = 11,
	NVML_ERROR_LIBRARY_NOT_FOUND = 12,
	NVML_ERROR_FUNCTION_NOT_FOUND = 13,
	NVML_ERROR_CORRUPTED_INFOROM = 14,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_RESET_REQUIRED = 16,
	NVML_ERROR_OPERATING_SYSTEM = 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_IN_USE = 19,
	NVML_ERROR_MEMORY = 20,
	NVML_ERROR_NO_DATA = 21,
	NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
	NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
	NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_ERROR_DEPRECATED = 26,
	NVML_ERROR_NOT_READY = 27,
	NVML_ERROR_GPU_NOT_FOUND = 28,
	NVML_ERROR_INVALID_STATE = 29,
	NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
	NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef enum nvmlEnableState_enum {
	NVML_FEATURE_DISABLED = 0,
	NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

typedef enum nvmlBrandType_enum {
	NVML_BRAND_UNKNOWN = 0,
	NVML_BRAND_QUADRO = 1,
	NVML_BRAND_TESLA = 2,
	NVML_BRAND_NVS = 3,
	NVML_BRAND_GRID = 4,
	NVML_BRAND_GEFORCE = 5,
	NVML_BRAND_TITAN = 6,
	NVML_BRAND_NVIDIA_VAPPS = 7,
	NVML_BRAND_NVIDIA_VPC = 8,
	NVML_BRAND_NVIDIA_VCS = 9,
	NVML_BRAND_NVIDIA_VWS = 10,
	NVML_BRAND_NVIDIA_CLOUD_GAMING = 11,
	NVML_BRAND_NVIDIA_VGAMING = NVML_BRAND_NVIDIA_CLOUD_GAMING,
	NVML_BRAND_QUADRO_RTX = 12,
	NVML_BRAND_NVIDIA_RTX = 13,
	NVML_BRAND_NVIDIA = 14,
	NVML_BRAND_GEFORCE_RTX = 15,
	NVML_BRAND_TITAN_RTX = 16,
	NVML_BRAND_COUNT = 18
} nvmlBrandType_t;

typedef enum nvmlTemperatureSensors_enum {
	NVML_TEMPERATURE_GPU = 0,
	NVML_TEMPERATURE_COUNT
} nvmlTemperatureSensors_t;

typedef enum nvmlComputeMode_enum {
	NVML_COMPUTEMODE_DEFAULT = 0,
	NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
	NVML_COMPUTEMODE_PROHIBITED = 2,
	NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
	NVML_COMPUTEMODE_COUNT
} nvmlComputeMode_t;

typedef enum nvmlGpuP2PStatus_enum {
	NVML_P2P_STATUS_OK = 0,
	NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED = 1,
	NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED,
	NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
	NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
	NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
	NVML_P2P_STATUS_NOT_SUPPORTED = 5,
	NVML_P2P_STATUS_UNKNOWN = 6
} nvmlGpuP2PStatus_t;

typedef enum nvmlGpuP2PCapsIndex_enum {
	NVML_P2P_CAPS_INDEX_READ = 0,
	NVML_P2P_CAPS_INDEX_WRITE = 1,
	NVML_P2P_CAPS_INDEX_NVLINK = 2,
	NVML_P2P_CAPS_INDEX_ATOMICS = 3,
	NVML_P2P_CAPS_INDEX_PCI = 4,
	NVML_P2P_CAPS_INDEX_PROP = NVML_P2P_CAPS_INDEX_PCI,
	NVML_P2P_CAPS_INDEX_UNKNOWN = 5
} nvmlGpuP2PCapsIndex_t;

typedef enum nvmlClockType_enum {
	NVML_CLOCK_GRAPHICS = 0,
	NVML_CLOCK_SM = 1,
	NVML_CLOCK_MEM = 2,
	NVML_CLOCK_VIDEO = 3,
	NVML_CLOCK_COUNT
} nvmlClockType_t;

typedef unsigned int nvmlDeviceArchitecture_t;
#define NVML_DEVICE_ARCH_KEPLER		2
#define NVML_DEVICE_ARCH_MAXWELL	3
#define NVML_DEVICE_ARCH_PASCAL		4
#define NVML_DEVICE_ARCH_VOLTA		5
#define NVML_DEVICE_ARCH_TURING		6
#define NVML_DEVICE_ARCH_AMPERE		7
#define NVML_DEVICE_ARCH_ADA		8
#define NVML_DEVICE_ARCH_HOPPER		9
#define NVML_DEVICE_ARCH_BLACKWELL	10
#define NVML_DEVICE_ARCH_UNKNOWN	0xffffffff

#define NVML_INIT_FLAG_NO_GPUS		(1 << 0)
#define NVML_INIT_FLAG_NO_ATTACH	(1 << 1)

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE	32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE	16
#define NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT	"%04X:%02X:%02X.0"
#define NVML_DEVICE_PCI_BUS_ID_FMT		"%08X:%02X:%02X.0"
#define NVML_DEVICE_UUID_BUFFER_SIZE		80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE		96
#define NVML_DEVICE_NAME_BUFFER_SIZE		64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE		96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE	80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE	80
#define NVML_VALUE_NOT_AVAILABLE		(-1)

typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;	/* device id << 16 | vendor id */
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlUtilization_st {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
	unsigned int version;
	unsigned long long total;
	unsigned long long reserved;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)

typedef struct nvmlProcessInfo_v1_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct nvmlProcessInfo_v2_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t, nvmlProcessInfo_t;

nvmlReturn_t DECLDIR nvmlInit_v2(void);
nvmlReturn_t DECLDIR nvmlInitWithFlags(unsigned int flags);
nvmlReturn_t DECLDIR nvmlShutdown(void);
const DECLDIR char *nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t DECLDIR nvmlSystemGetDriverVersion(char *version,
						unsigned int length);
nvmlReturn_t DECLDIR nvmlSystemGetNVMLVersion(char *version,
					      unsigned int length);
nvmlReturn_t DECLDIR nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion);
nvmlReturn_t DECLDIR nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);
nvmlReturn_t DECLDIR nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t DECLDIR nvmlDeviceGetHandleByIndex_v2(unsigned int index,
						   nvmlDevice_t *device);
nvmlReturn_t DECLDIR nvmlDeviceGetHandleByUUID(const char *uuid,
					       nvmlDevice_t *device);
nvmlReturn_t DECLDIR nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId,
						      nvmlDevice_t *device);
nvmlReturn_t DECLDIR nvmlDeviceGetName(nvmlDevice_t device, char *name,
				       unsigned int length);
nvmlReturn_t DECLDIR nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
				       unsigned int length);
nvmlReturn_t DECLDIR nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
					     nvmlMemory_t *memory);
nvmlReturn_t DECLDIR nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
						nvmlMemory_v2_t *memory);
nvmlReturn_t DECLDIR nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
						   nvmlUtilization_t *utilization);
nvmlReturn_t DECLDIR nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
					     nvmlPciInfo_t *pci);
nvmlReturn_t DECLDIR nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device,
							int *major, int *minor);
nvmlReturn_t DECLDIR nvmlDeviceGetComputeMode(nvmlDevice_t device,
					      nvmlComputeMode_t *mode);
nvmlReturn_t DECLDIR nvmlDeviceGetPersistenceMode(nvmlDevice_t device,
						  nvmlEnableState_t *mode);
nvmlReturn_t DECLDIR nvmlDeviceGetP2PStatus(nvmlDevice_t device1,
					    nvmlDevice_t device2,
					    nvmlGpuP2PCapsIndex_t p2pIndex,
					    nvmlGpuP2PStatus_t *p2pStatus);
nvmlReturn_t DECLDIR nvmlDeviceGetIndex(nvmlDevice_t device,
					unsigned int *index);
nvmlReturn_t DECLDIR nvmlDeviceGetMinorNumber(nvmlDevice_t device,
					      unsigned int *minorNumber);
nvmlReturn_t DECLDIR nvmlDeviceGetBrand(nvmlDevice_t device,
					nvmlBrandType_t *type);
nvmlReturn_t DECLDIR nvmlDeviceGetArchitecture(nvmlDevice_t device,
					       nvmlDeviceArchitecture_t *arch);
nvmlReturn_t DECLDIR nvmlDeviceGetTemperature(nvmlDevice_t device,
					      nvmlTemperatureSensors_t sensorType,
					      unsigned int *temp);
nvmlReturn_t DECLDIR nvmlDeviceGetPowerUsage(nvmlDevice_t device,
					     unsigned int *power);
nvmlReturn_t DECLDIR nvmlDeviceGetClockInfo(nvmlDevice_t device,
					    nvmlClockType_t type,
					    unsigned int *clock);
nvmlReturn_t DECLDIR nvmlDeviceGetFanSpeed(nvmlDevice_t device,
					   unsigned int *speed);
nvmlReturn_t DECLDIR nvmlDeviceGetComputeRunningProcesses_v3(
	nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos);

#ifdef NVML_NO_UNVERSIONED_FUNC_DEFS
nvmlReturn_t DECLDIR nvmlInit(void);
nvmlReturn_t DECLDIR nvmlDeviceGetCount(unsigned int *deviceCount);
nvmlReturn_t DECLDIR nvmlDeviceGetHandleByIndex(unsigned int index,
						nvmlDevice_t *device);
nvmlReturn_t DECLDIR nvmlDeviceGetHandleByPciBusId(const char *pciBusId,
						   nvmlDevice_t *device);
nvmlReturn_t DECLDIR nvmlDeviceGetPciInfo(nvmlDevice_t device,
					  nvmlPciInfo_t *pci);
nvmlReturn_t DECLDIR nvmlDeviceGetPciInfo_v2(nvmlDevice_t device,
					     nvmlPciInfo_t *pci);
nvmlReturn_t DECLDIR nvmlDeviceGetComputeRunningProcesses(
	nvmlDevice_t device, unsigned int *infoCount,
	nvmlProcessInfo_v1_t *infos);
nvmlReturn_t DECLDIR nvmlDeviceGetComputeRunningProcesses_v2(
	nvmlDevice_t device, unsigned int *infoCount,
	nvmlProcessInfo_v2_t *infos);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MDGPU_NVML_COMPAT_H */
