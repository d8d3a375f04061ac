// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpu's libnvidia-ml.so.1 in a process that also uses mdgpu's libcuda:
 * every answer checked against libcuda's and the daemon's (sim backend,
 * run by run-nvml-tests.sh with MDGPU_TYPE=1g): calls before init, the
 * device's identity, memory moved by cuMemAlloc/cuMemFree, utilisation
 * idle and after work timed by the daemon's events, the process list,
 * refusals (forged handles, NULL pointers, short buffers), every stub's
 * NOT_SUPPORTED, init counting.  The tests run in order, in one process.
 * With --no-daemon: nvmlInit without a daemon, and NO_GPUS.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda.h>
#include <nvml.h>

#include "uapi/mdgpu.h"

#define MIB		(1ULL << 20)
#define QUOTA_1G	(1024 * MIB)	/* mdev-types/mdgpu-types.def */

static nvmlDevice_t dev;

static void test_before_init(void **state)
{
	unsigned int n = 7;
	nvmlMemory_t m;
	char s[80];

	(void)state;
	assert_int_equal(nvmlDeviceGetCount(&n), NVML_ERROR_UNINITIALIZED);
	assert_int_equal(n, 7);
	assert_int_equal(nvmlDeviceGetHandleByIndex(0, &dev),
			 NVML_ERROR_UNINITIALIZED);
	assert_int_equal(nvmlDeviceGetMemoryInfo(dev, &m),
			 NVML_ERROR_UNINITIALIZED);
	assert_int_equal(nvmlSystemGetDriverVersion(s, sizeof(s)),
			 NVML_ERROR_UNINITIALIZED);
	assert_int_equal(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	assert_string_equal(nvmlErrorString(NVML_ERROR_NOT_SUPPORTED),
			    "Not Supported");
	assert_string_equal(nvmlErrorString((nvmlReturn_t)12345),
			    "Unknown Error");
}

static void test_init(void **state)
{
	unsigned int n = 0;
	nvmlDevice_t d;

	(void)state;
	assert_int_equal(nvmlInitWithFlags(1U << 30),
			 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nvmlInit(), NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetCount(&n), NVML_SUCCESS);
	assert_int_equal(n, 1);
	assert_int_equal(nvmlDeviceGetCount(NULL),
			 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nvmlDeviceGetHandleByIndex(1, &d),
			 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nvmlDeviceGetHandleByIndex(0, NULL),
			 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nvmlDeviceGetHandleByIndex(0, &dev), NVML_SUCCESS);
	assert_non_null(dev);

	/* libcuda: the same vGPU, through its primary context. */
	CUcontext ctx;

	assert_int_equal(cuInit(0), CUDA_SUCCESS);
	assert_int_equal(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	assert_int_equal(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
}

static void format_uuid(char *out, const unsigned char *b)
{
	sprintf(out, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		"%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5],
		b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
		b[15]);
}

static void test_identity(void **state)
{
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], cu_name[256];
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], want[64], upper[64];
	nvmlPciInfo_t pci;
	nvmlDevice_t d;
	CUuuid cu_uuid;

	(void)state;
	assert_int_equal(nvmlDeviceGetName(dev, name, sizeof(name)),
			 NVML_SUCCESS);
	assert_int_equal(cuDeviceGetName(cu_name, sizeof(cu_name), 0),
			 CUDA_SUCCESS);
	assert_string_equal(name, cu_name);
	assert_string_equal(name, "mdgpu vGPU 1g of mdgpu sim");
	assert_int_equal(nvmlDeviceGetName(dev, name, 5),
			 NVML_ERROR_INSUFFICIENT_SIZE);
	assert_int_equal(nvmlDeviceGetName(dev, NULL, 64),
			 NVML_ERROR_INVALID_ARGUMENT);

	assert_int_equal(nvmlDeviceGetUUID(dev, uuid, sizeof(uuid)),
			 NVML_SUCCESS);
	assert_int_equal(cuDeviceGetUuid(&cu_uuid, 0), CUDA_SUCCESS);
	format_uuid(want, (const unsigned char *)cu_uuid.bytes);
	assert_string_equal(uuid, want);
	assert_int_equal(strlen(uuid), 40);
	assert_int_equal(nvmlDeviceGetUUID(dev, uuid, 40),
			 NVML_ERROR_INSUFFICIENT_SIZE);

	assert_int_equal(nvmlDeviceGetHandleByUUID(want, &d), NVML_SUCCESS);
	assert_ptr_equal(d, dev);
	for (size_t i = 0; i <= strlen(want); i++)
		upper[i] = (char)(want[i] >= 'a' && want[i] <= 'f' ?
				  want[i] - 32 : want[i]);
	assert_int_equal(nvmlDeviceGetHandleByUUID(upper, &d), NVML_SUCCESS);
	want[10] = want[10] == '0' ? '1' : '0';
	assert_int_equal(nvmlDeviceGetHandleByUUID(want, &d),
			 NVML_ERROR_NOT_FOUND);
	assert_int_equal(nvmlDeviceGetHandleByUUID(NULL, &d),
			 NVML_ERROR_INVALID_ARGUMENT);

	/* The vGPU's PCI identity at 0000:00:00.0, as libcuda's attributes
	 * say. */
	assert_int_equal(nvmlDeviceGetPciInfo(dev, &pci), NVML_SUCCESS);
	assert_string_equal(pci.busId, "00000000:00:00.0");
	assert_string_equal(pci.busIdLegacy, "0000:00:00.0");
	assert_int_equal(pci.pciDeviceId, 0x6d671234);
	assert_int_equal(pci.pciSubSystemId, 0x00011234);
	assert_int_equal(pci.domain | pci.bus | pci.device, 0);
	int v = -1;

	assert_int_equal(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
					      0), CUDA_SUCCESS);
	assert_int_equal(v, (int)pci.bus);
	for (const char *const *id = (const char *const[]){ "00000000:00:00.0",
	     "0000:00:00.0", "00:00.0", NULL }; *id; id++) {
		d = NULL;
		assert_int_equal(nvmlDeviceGetHandleByPciBusId(*id, &d),
				 NVML_SUCCESS);
		assert_ptr_equal(d, dev);
	}
	assert_int_equal(nvmlDeviceGetHandleByPciBusId("0000:01:00.0", &d),
			 NVML_ERROR_NOT_FOUND);
	assert_int_equal(nvmlDeviceGetHandleByPciBusId("00:00", &d),
			 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nvmlDeviceGetHandleByPciBusId("zz:00.0", &d),
			 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nvmlDeviceGetHandleByPciBusId("00:00.0x", &d),
			 NVML_ERROR_INVALID_ARGUMENT);
}

static void check_memory(unsigned long long used_want)
{
	nvmlMemory_t m;
	nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
	size_t cu_free, cu_total;

	assert_int_equal(nvmlDeviceGetMemoryInfo(dev, &m), NVML_SUCCESS);
	assert_int_equal(m.total, QUOTA_1G);
	assert_int_equal(m.used, used_want);
	assert_int_equal(m.free, m.total - m.used);
	assert_int_equal(cuMemGetInfo(&cu_free, &cu_total), CUDA_SUCCESS);
	assert_int_equal(cu_total, m.total);
	assert_int_equal(cu_free, m.free);
	assert_int_equal(nvmlDeviceGetMemoryInfo_v2(dev, &m2), NVML_SUCCESS);
	assert_int_equal(m2.total, QUOTA_1G);
	assert_int_equal(m2.reserved, 0);
	assert_int_equal(m2.used, used_want);
	assert_int_equal(m2.free, m.free);
}

static void test_memory(void **state)
{
	nvmlMemory_v2_t m2 = { .version = 1 };
	nvmlMemory_t m;
	unsigned long long used0;
	CUdeviceptr a, b;
	size_t cu_total;

	(void)state;
	assert_int_equal(cuDeviceTotalMem(&cu_total, 0), CUDA_SUCCESS);
	assert_int_equal(cu_total, QUOTA_1G);
	assert_int_equal(nvmlDeviceGetMemoryInfo(dev, &m), NVML_SUCCESS);
	used0 = m.used;
	check_memory(used0);

	assert_int_equal(cuMemAlloc(&a, 16 * MIB), CUDA_SUCCESS);
	check_memory(used0 + 16 * MIB);
	assert_int_equal(cuMemAlloc(&b, 4 * MIB), CUDA_SUCCESS);
	check_memory(used0 + 20 * MIB);
	assert_int_equal(cuMemFree(a), CUDA_SUCCESS);
	check_memory(used0 + 4 * MIB);
	assert_int_equal(cuMemFree(b), CUDA_SUCCESS);
	check_memory(used0);

	assert_int_equal(nvmlDeviceGetMemoryInfo_v2(dev, &m2),
			 NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	assert_int_equal(nvmlDeviceGetMemoryInfo(dev, NULL),
			 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nvmlDeviceGetMemoryInfo_v2(dev, NULL),
			 NVML_ERROR_INVALID_ARGUMENT);
}

/* The daemon's clock (sim: simulated GPU time) for n memsets of `bytes`,
 * timed by events around them; ms. */
static float timed_work(CUdeviceptr p, size_t bytes, int n)
{
	CUevent e0, e1;
	float ms = 0;

	assert_int_equal(cuEventCreate(&e0, 0), CUDA_SUCCESS);
	assert_int_equal(cuEventCreate(&e1, 0), CUDA_SUCCESS);
	assert_int_equal(cuEventRecord(e0, NULL), CUDA_SUCCESS);
	for (int i = 0; i < n; i++)
		assert_int_equal(cuMemsetD32(p, (unsigned int)i, bytes / 4),
				 CUDA_SUCCESS);
	assert_int_equal(cuEventRecord(e1, NULL), CUDA_SUCCESS);
	assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
	assert_int_equal(cuEventElapsedTime(&ms, e0, e1), CUDA_SUCCESS);
	assert_int_equal(cuEventDestroy(e0), CUDA_SUCCESS);
	assert_int_equal(cuEventDestroy(e1), CUDA_SUCCESS);
	return ms;
}

static void test_utilization(void **state)
{
	nvmlUtilization_t u = { 77, 77 };
	CUdeviceptr p;
	float ms;
	int want;

	(void)state;
	/* Idle for longer than the daemon's one-second window. */
	usleep(1200 * 1000);
	assert_int_equal(nvmlDeviceGetUtilizationRates(dev, &u), NVML_SUCCESS);
	assert_int_equal(u.gpu, 0);
	assert_int_equal(u.memory, 0);

	/* About 100 ms of the sim's GPU time (64 MiB memsets at its 20 GB/s)
	 * done in much less than the window: the window holds all of it and
	 * the events' time, give or take the commands around them. */
	assert_int_equal(cuMemAlloc(&p, 64 * MIB), CUDA_SUCCESS);
	ms = timed_work(p, 64 * MIB, 30);
	assert_int_equal(nvmlDeviceGetUtilizationRates(dev, &u), NVML_SUCCESS);
	want = (int)(ms / 10.0f + 0.5f);	/* percent of 1000 ms */
	fprintf(stderr, "utilization: %u %% after %.3f ms of GPU time\n",
		u.gpu, (double)ms);
	assert_true(ms > 90.0f);
	assert_in_range(u.gpu, want - 1, want + 1);
	assert_int_equal(u.memory, 0);
	assert_int_equal(cuMemFree(p), CUDA_SUCCESS);

	usleep(1200 * 1000);
	assert_int_equal(nvmlDeviceGetUtilizationRates(dev, &u), NVML_SUCCESS);
	assert_int_equal(u.gpu, 0);
	assert_int_equal(nvmlDeviceGetUtilizationRates(dev, NULL),
			 NVML_ERROR_INVALID_ARGUMENT);
}

static void test_processes(void **state)
{
	nvmlProcessInfo_t p[2];
	unsigned int n = 0;
	nvmlMemory_t m;
	CUdeviceptr a;

	(void)state;
	assert_int_equal(nvmlDeviceGetComputeRunningProcesses(dev, &n, NULL),
			 NVML_ERROR_INSUFFICIENT_SIZE);
	assert_int_equal(n, 1);
	assert_int_equal(cuMemAlloc(&a, 8 * MIB), CUDA_SUCCESS);
	assert_int_equal(nvmlDeviceGetMemoryInfo(dev, &m), NVML_SUCCESS);
	n = 2;
	assert_int_equal(nvmlDeviceGetComputeRunningProcesses(dev, &n, p),
			 NVML_SUCCESS);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].pid, getpid());
	assert_int_equal(p[0].usedGpuMemory, m.used);
	assert_true(p[0].usedGpuMemory >= 8 * MIB);
	assert_int_equal(p[0].gpuInstanceId, 0xffffffffu);
	assert_int_equal(p[0].computeInstanceId, 0xffffffffu);
	assert_int_equal(cuMemFree(a), CUDA_SUCCESS);
	assert_int_equal(nvmlDeviceGetComputeRunningProcesses(dev, NULL, p),
			 NVML_ERROR_INVALID_ARGUMENT);
}

static void test_properties(void **state)
{
	int major = 0, minor = 0, cu_major, cu_minor, v = 0, cu_v;
	nvmlDeviceArchitecture_t arch = 0;
	nvmlComputeMode_t mode = NVML_COMPUTEMODE_PROHIBITED;
	nvmlEnableState_t pm = NVML_FEATURE_ENABLED;
	nvmlBrandType_t brand = NVML_BRAND_NVIDIA;
	unsigned int idx = 9, minor_nr = 9;
	char s[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];

	(void)state;
	assert_int_equal(nvmlDeviceGetCudaComputeCapability(dev, &major, &minor),
			 NVML_SUCCESS);
	assert_int_equal(cuDeviceGetAttribute(&cu_major,
			 CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0), 0);
	assert_int_equal(cuDeviceGetAttribute(&cu_minor,
			 CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0), 0);
	assert_int_equal(major, cu_major);
	assert_int_equal(minor, cu_minor);
	assert_int_equal(nvmlDeviceGetArchitecture(dev, &arch), NVML_SUCCESS);
	assert_int_equal(major, 9);	/* the sim: compute capability 9.0 */
	assert_int_equal(arch, NVML_DEVICE_ARCH_HOPPER);
	assert_int_equal(nvmlDeviceGetComputeMode(dev, &mode), NVML_SUCCESS);
	assert_int_equal(mode, NVML_COMPUTEMODE_DEFAULT);
	assert_int_equal(nvmlDeviceGetPersistenceMode(dev, &pm), NVML_SUCCESS);
	assert_int_equal(pm, NVML_FEATURE_DISABLED);
	assert_int_equal(nvmlDeviceGetIndex(dev, &idx), NVML_SUCCESS);
	assert_int_equal(idx, 0);
	assert_int_equal(nvmlDeviceGetMinorNumber(dev, &minor_nr),
			 NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(minor_nr, 9);
	assert_int_equal(nvmlDeviceGetBrand(dev, &brand), NVML_SUCCESS);
	assert_int_equal(brand, NVML_BRAND_UNKNOWN);
	/* P2P: the vGPU with itself, the one pair, has none of it. */
	for (int i = 0; i < (int)NVML_P2P_CAPS_INDEX_UNKNOWN; i++) {
		nvmlGpuP2PStatus_t p2p = NVML_P2P_STATUS_OK;

		assert_int_equal(nvmlDeviceGetP2PStatus(dev, dev,
				 (nvmlGpuP2PCapsIndex_t)i, &p2p), NVML_SUCCESS);
		assert_int_equal(p2p, NVML_P2P_STATUS_NOT_SUPPORTED);
	}
	assert_int_equal(nvmlDeviceGetP2PStatus(dev, dev,
			 NVML_P2P_CAPS_INDEX_UNKNOWN, &(nvmlGpuP2PStatus_t){ 0 }),
			 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nvmlDeviceGetP2PStatus(dev, dev,
			 NVML_P2P_CAPS_INDEX_READ, NULL),
			 NVML_ERROR_INVALID_ARGUMENT);

	assert_int_equal(nvmlSystemGetDriverVersion(s, sizeof(s)),
			 NVML_SUCCESS);
	{
		char want[32];

		/* The ABI the library was built against (uapi/mdgpu.h). */
		snprintf(want, sizeof(want), "mdgpu-%u.%u", MDGPU_ABI_MAJOR,
			 MDGPU_ABI_MINOR);
		assert_string_equal(s, want);
	}
	assert_int_equal(nvmlSystemGetDriverVersion(s, 4),
			 NVML_ERROR_INSUFFICIENT_SIZE);
	assert_int_equal(nvmlSystemGetNVMLVersion(s, sizeof(s)), NVML_SUCCESS);
	assert_string_equal(s, NVML_API_VERSION_STR ".mdgpu");
	assert_int_equal(nvmlSystemGetCudaDriverVersion(&v), NVML_SUCCESS);
	assert_int_equal(cuDriverGetVersion(&cu_v), CUDA_SUCCESS);
	assert_int_equal(v, cu_v);
	v = 0;
	assert_int_equal(nvmlSystemGetCudaDriverVersion_v2(&v), NVML_SUCCESS);
	assert_int_equal(v, cu_v);
	assert_int_equal(nvmlSystemGetCudaDriverVersion(NULL),
			 NVML_ERROR_INVALID_ARGUMENT);
}

/* Another tenant's data: not answered, whatever the arguments. */
static void test_sensors(void **state)
{
	unsigned int x = 5;

	(void)state;
	assert_int_equal(nvmlDeviceGetTemperature(dev, NVML_TEMPERATURE_GPU,
						  &x), NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(nvmlDeviceGetPowerUsage(dev, &x),
			 NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(nvmlDeviceGetClockInfo(dev, NVML_CLOCK_SM, &x),
			 NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(nvmlDeviceGetFanSpeed(dev, &x),
			 NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(x, 5);
	assert_int_equal(nvmlDeviceGetPowerUsage(dev, NULL),
			 NVML_ERROR_INVALID_ARGUMENT);
}

/* A handle that is not the library's: refused by every device call. */
static void test_bad_handles(void **state)
{
	struct { int x; } other;
	nvmlDevice_t bad[] = { (nvmlDevice_t)&other, NULL,
			       (nvmlDevice_t)((char *)dev + 1) };
	nvmlMemory_t m;
	nvmlMemory_v2_t m2 = { .version = nvmlMemory_v2 };
	nvmlUtilization_t u;
	nvmlPciInfo_t pci;
	unsigned int x, n = 1;
	nvmlProcessInfo_t p;
	char s[96];
	int a, b;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		nvmlDevice_t d = bad[i];

		assert_int_equal(nvmlDeviceGetMemoryInfo(d, &m),
				 NVML_ERROR_INVALID_ARGUMENT);
		assert_int_equal(nvmlDeviceGetMemoryInfo_v2(d, &m2),
				 NVML_ERROR_INVALID_ARGUMENT);
		assert_int_equal(nvmlDeviceGetName(d, s, sizeof(s)),
				 NVML_ERROR_INVALID_ARGUMENT);
		assert_int_equal(nvmlDeviceGetUUID(d, s, sizeof(s)),
				 NVML_ERROR_INVALID_ARGUMENT);
		assert_int_equal(nvmlDeviceGetUtilizationRates(d, &u),
				 NVML_ERROR_INVALID_ARGUMENT);
		assert_int_equal(nvmlDeviceGetPciInfo(d, &pci),
				 NVML_ERROR_INVALID_ARGUMENT);
		assert_int_equal(nvmlDeviceGetCudaComputeCapability(d, &a, &b),
				 NVML_ERROR_INVALID_ARGUMENT);
		assert_int_equal(nvmlDeviceGetIndex(d, &x),
				 NVML_ERROR_INVALID_ARGUMENT);
		assert_int_equal(nvmlDeviceGetP2PStatus(d, dev,
				 NVML_P2P_CAPS_INDEX_READ,
				 &(nvmlGpuP2PStatus_t){ 0 }),
				 NVML_ERROR_INVALID_ARGUMENT);
		assert_int_equal(nvmlDeviceGetP2PStatus(dev, d,
				 NVML_P2P_CAPS_INDEX_WRITE,
				 &(nvmlGpuP2PStatus_t){ 0 }),
				 NVML_ERROR_INVALID_ARGUMENT);
		assert_int_equal(nvmlDeviceGetTemperature(d,
				 NVML_TEMPERATURE_GPU, &x),
				 NVML_ERROR_INVALID_ARGUMENT);
		assert_int_equal(nvmlDeviceGetComputeRunningProcesses(d, &n,
				 &p), NVML_ERROR_INVALID_ARGUMENT);
	}
}

/*
 * Every symbol of nvml/entry-points.txt (MDGPU_NVML_LIST) is exported, and
 * every one the library does not implement answers NOT_SUPPORTED.  A stub
 * takes no arguments, so it is called without any.
 */
static const char *const implemented[] = {
	"nvmlInit", "nvmlInit_v2", "nvmlInitWithFlags", "nvmlShutdown",
	"nvmlSystemGetDriverVersion", "nvmlSystemGetNVMLVersion",
	"nvmlSystemGetCudaDriverVersion", "nvmlSystemGetCudaDriverVersion_v2",
	"nvmlDeviceGetCount", "nvmlDeviceGetCount_v2",
	"nvmlDeviceGetHandleByIndex", "nvmlDeviceGetHandleByIndex_v2",
	"nvmlDeviceGetHandleByUUID", "nvmlDeviceGetHandleByPciBusId",
	"nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetName",
	"nvmlDeviceGetUUID", "nvmlDeviceGetMemoryInfo",
	"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetUtilizationRates",
	"nvmlDeviceGetPciInfo", "nvmlDeviceGetPciInfo_v2",
	"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetCudaComputeCapability",
	"nvmlDeviceGetComputeMode", "nvmlDeviceGetPersistenceMode",
	"nvmlDeviceGetP2PStatus",
	"nvmlDeviceGetIndex", "nvmlDeviceGetMinorNumber", "nvmlDeviceGetBrand",
	"nvmlDeviceGetArchitecture", "nvmlDeviceGetTemperature",
	"nvmlDeviceGetPowerUsage", "nvmlDeviceGetClockInfo",
	"nvmlDeviceGetFanSpeed", "nvmlDeviceGetComputeRunningProcesses",
	"nvmlDeviceGetComputeRunningProcesses_v2",
	"nvmlDeviceGetComputeRunningProcesses_v3",
};

static bool is_implemented(const char *name)
{
	for (size_t i = 0; i < sizeof(implemented) / sizeof(implemented[0]);
	     i++)
		if (!strcmp(implemented[i], name))
			return true;
	return false;
}

static void test_stubs(void **state)
{
	const char *list = getenv("MDGPU_NVML_LIST");
	unsigned int stubs = 0, impl = 0;
	char line[256];
	FILE *f;

	(void)state;
	assert_non_null(list);
	f = fopen(list, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int (*fn)(void);

		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		*(void **)&fn = dlsym(RTLD_DEFAULT, line);
		if (!fn)
			fail_msg("%s is not exported", line);
		if (is_implemented(line)) {
			impl++;
			continue;
		}
		if (fn() != NVML_ERROR_NOT_SUPPORTED)
			fail_msg("%s does not answer NOT_SUPPORTED", line);
		stubs++;
	}
	fclose(f);
	fprintf(stderr, "stubs: %u answer NOT_SUPPORTED, %u implemented\n",
		stubs, impl);
	assert_int_equal(impl, sizeof(implemented) / sizeof(implemented[0]));
	assert_true(stubs > 300);
	/* The library exports nothing of its own besides. */
	assert_null(dlsym(RTLD_DEFAULT, "mdgpu_nvml_check"));
	assert_null(dlsym(RTLD_DEFAULT, "mdgpu_nvml"));
}

static void test_shutdown(void **state)
{
	char u1[96], u2[96];
	unsigned int n;
	nvmlMemory_t m1, m2;

	(void)state;
	assert_int_equal(nvmlDeviceGetUUID(dev, u1, sizeof(u1)), NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetMemoryInfo(dev, &m1), NVML_SUCCESS);
	/* Counted: two inits need two shutdowns. */
	assert_int_equal(nvmlInit_v2(), NVML_SUCCESS);
	assert_int_equal(nvmlShutdown(), NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetCount(&n), NVML_SUCCESS);
	assert_int_equal(nvmlShutdown(), NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetCount(&n), NVML_ERROR_UNINITIALIZED);
	assert_int_equal(nvmlDeviceGetMemoryInfo(dev, &m2),
			 NVML_ERROR_UNINITIALIZED);
	assert_int_equal(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	/* Again: the same vGPU (libcuda's), nothing charged twice. */
	assert_int_equal(nvmlInitWithFlags(NVML_INIT_FLAG_NO_ATTACH),
			 NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetUUID(dev, u2, sizeof(u2)), NVML_SUCCESS);
	assert_string_equal(u1, u2);
	assert_int_equal(nvmlDeviceGetMemoryInfo(dev, &m2), NVML_SUCCESS);
	assert_int_equal(m1.used, m2.used);
	assert_int_equal(m1.total, m2.total);
	assert_int_equal(nvmlShutdown(), NVML_SUCCESS);
}

/* No daemon: libcuda's cuInit fails, so does nvmlInit; NO_GPUS gives an
 * initialised library without devices. */
static void test_no_daemon(void **state)
{
	unsigned int n = 5;
	nvmlDevice_t d;
	int v;

	(void)state;
	assert_int_equal(nvmlInit(), NVML_ERROR_DRIVER_NOT_LOADED);
	assert_int_equal(nvmlDeviceGetCount(&n), NVML_ERROR_UNINITIALIZED);
	assert_int_equal(nvmlInitWithFlags(NVML_INIT_FLAG_NO_GPUS),
			 NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetCount(&n), NVML_SUCCESS);
	assert_int_equal(n, 0);
	assert_int_equal(nvmlDeviceGetHandleByIndex(0, &d),
			 NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-"
						   "0000-000000000000", &d),
			 NVML_ERROR_NOT_FOUND);
	assert_int_equal(nvmlSystemGetCudaDriverVersion(&v),
			 NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(nvmlShutdown(), NVML_SUCCESS);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_before_init),
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_utilization),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_properties),
		cmocka_unit_test(test_sensors),
		cmocka_unit_test(test_bad_handles),
		cmocka_unit_test(test_stubs),
		cmocka_unit_test(test_shutdown),
	};
	const struct CMUnitTest no_daemon[] = {
		cmocka_unit_test(test_no_daemon),
	};

	if (argc > 1 && !strcmp(argv[1], "--no-daemon"))
		return cmocka_run_group_tests(no_daemon, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
