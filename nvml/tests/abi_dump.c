// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Prints the values and layouts of nvml.h that mdgpu's libnvidia-ml.so.1
 * uses.  Built against nvml/compat/nvml.h and against the toolkit's
 * nvml.h; check-nvml requires the two outputs to be equal.
 */
#include <stddef.h>
#include <stdio.h>

#include <nvml.h>

#define V(x)		printf("%s %lld\n", #x, (long long)(x))
#define S(x)		printf("%s %s\n", #x, x)
#define T(t)		printf("sizeof %s %zu\n", #t, sizeof(t))
#define O(t, m)		printf("offsetof %s %s %zu %zu\n", #t, #m, \
			       offsetof(t, m), sizeof(((t *)0)->m))

int main(void)
{
	V(NVML_API_VERSION); S(NVML_API_VERSION_STR);
	V(NVML_SUCCESS); V(NVML_ERROR_UNINITIALIZED);
	V(NVML_ERROR_INVALID_ARGUMENT); V(NVML_ERROR_NOT_SUPPORTED);
	V(NVML_ERROR_NO_PERMISSION); V(NVML_ERROR_ALREADY_INITIALIZED);
	V(NVML_ERROR_NOT_FOUND); V(NVML_ERROR_INSUFFICIENT_SIZE);
	V(NVML_ERROR_INSUFFICIENT_POWER); V(NVML_ERROR_DRIVER_NOT_LOADED);
	V(NVML_ERROR_TIMEOUT); V(NVML_ERROR_IRQ_ISSUE);
	V(NVML_ERROR_LIBRARY_NOT_FOUND); V(NVML_ERROR_FUNCTION_NOT_FOUND);
	V(NVML_ERROR_CORRUPTED_INFOROM); V(NVML_ERROR_GPU_IS_LOST);
	V(NVML_ERROR_RESET_REQUIRED); V(NVML_ERROR_OPERATING_SYSTEM);
	V(NVML_ERROR_LIB_RM_VERSION_MISMATCH); V(NVML_ERROR_IN_USE);
	V(NVML_ERROR_MEMORY); V(NVML_ERROR_NO_DATA);
	V(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED);
	V(NVML_ERROR_INSUFFICIENT_RESOURCES); V(NVML_ERROR_FREQ_NOT_SUPPORTED);
	V(NVML_ERROR_ARGUMENT_VERSION_MISMATCH); V(NVML_ERROR_DEPRECATED);
	V(NVML_ERROR_NOT_READY); V(NVML_ERROR_GPU_NOT_FOUND);
	V(NVML_ERROR_INVALID_STATE); V(NVML_ERROR_RESET_TYPE_NOT_SUPPORTED);
	V(NVML_ERROR_UNKNOWN);
	V(NVML_FEATURE_DISABLED); V(NVML_FEATURE_ENABLED);
	V(NVML_BRAND_UNKNOWN); V(NVML_BRAND_NVIDIA); V(NVML_BRAND_COUNT);
	V(NVML_TEMPERATURE_GPU); V(NVML_COMPUTEMODE_DEFAULT);
	V(NVML_COMPUTEMODE_EXCLUSIVE_PROCESS); V(NVML_CLOCK_GRAPHICS);
	V(NVML_P2P_STATUS_NOT_SUPPORTED); V(NVML_P2P_CAPS_INDEX_READ);
	V(NVML_P2P_CAPS_INDEX_WRITE); V(NVML_P2P_CAPS_INDEX_PCI);
	V(NVML_P2P_CAPS_INDEX_UNKNOWN);
	V(NVML_CLOCK_SM); V(NVML_CLOCK_MEM); V(NVML_CLOCK_VIDEO);
	V(NVML_DEVICE_ARCH_KEPLER); V(NVML_DEVICE_ARCH_MAXWELL);
	V(NVML_DEVICE_ARCH_PASCAL); V(NVML_DEVICE_ARCH_VOLTA);
	V(NVML_DEVICE_ARCH_TURING); V(NVML_DEVICE_ARCH_AMPERE);
	V(NVML_DEVICE_ARCH_ADA); V(NVML_DEVICE_ARCH_HOPPER);
	V(NVML_DEVICE_ARCH_BLACKWELL); V(NVML_DEVICE_ARCH_UNKNOWN);
	V(NVML_INIT_FLAG_NO_GPUS); V(NVML_INIT_FLAG_NO_ATTACH);
	V(NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE);
	V(NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE);
	S(NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT); S(NVML_DEVICE_PCI_BUS_ID_FMT);
	V(NVML_DEVICE_UUID_BUFFER_SIZE); V(NVML_DEVICE_UUID_V2_BUFFER_SIZE);
	V(NVML_DEVICE_NAME_BUFFER_SIZE); V(NVML_DEVICE_NAME_V2_BUFFER_SIZE);
	V(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
	V(NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE); V(NVML_VALUE_NOT_AVAILABLE);
	V(nvmlMemory_v2);
	T(nvmlReturn_t); T(nvmlDeviceArchitecture_t);
	T(nvmlPciInfo_t); O(nvmlPciInfo_t, busIdLegacy);
	O(nvmlPciInfo_t, domain); O(nvmlPciInfo_t, bus);
	O(nvmlPciInfo_t, device); O(nvmlPciInfo_t, pciDeviceId);
	O(nvmlPciInfo_t, pciSubSystemId); O(nvmlPciInfo_t, busId);
	T(nvmlUtilization_t); O(nvmlUtilization_t, gpu);
	O(nvmlUtilization_t, memory);
	T(nvmlMemory_t); O(nvmlMemory_t, total); O(nvmlMemory_t, free);
	O(nvmlMemory_t, used);
	T(nvmlMemory_v2_t); O(nvmlMemory_v2_t, version);
	O(nvmlMemory_v2_t, total); O(nvmlMemory_v2_t, reserved);
	O(nvmlMemory_v2_t, free); O(nvmlMemory_v2_t, used);
	T(nvmlProcessInfo_v1_t); O(nvmlProcessInfo_v1_t, pid);
	O(nvmlProcessInfo_v1_t, usedGpuMemory);
	T(nvmlProcessInfo_t); O(nvmlProcessInfo_t, pid);
	O(nvmlProcessInfo_t, usedGpuMemory); O(nvmlProcessInfo_t, gpuInstanceId);
	O(nvmlProcessInfo_t, computeInstanceId);
	return 0;
}
