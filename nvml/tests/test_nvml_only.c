// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpu's libnvidia-ml.so.1 in a process that does not link libcuda (a
 * monitoring tool): nvmlInit loads mdgpu's libcuda.so.1 and opens the vGPU
 * through it, once; libcuda, asked afterwards in the same process, sees
 * the same vGPU.  Run by run-nvml-tests.sh (MDGPU_TYPE=1g, sim backend).
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda.h>
#include <nvml.h>

static void test_alone(void **state)
{
	CUresult (*get_uuid)(CUuuid *, CUdevice);
	char uuid[96], want[64];
	nvmlProcessInfo_t p;
	unsigned int n = 0;
	nvmlDevice_t dev;
	nvmlMemory_t m;
	const unsigned char *b;
	CUuuid cu;
	void *h;

	(void)state;
	assert_null(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD));
	assert_int_equal(nvmlInit(), NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetCount(&n), NVML_SUCCESS);
	assert_int_equal(n, 1);
	assert_int_equal(nvmlDeviceGetHandleByIndex(0, &dev), NVML_SUCCESS);
	assert_int_equal(nvmlDeviceGetMemoryInfo(dev, &m), NVML_SUCCESS);
	assert_int_equal(m.total, 1ULL << 30);	/* the 1g type's quota */
	assert_int_equal(m.used, 0);		/* a fresh vGPU */
	assert_int_equal(m.free, m.total);
	n = 1;
	assert_int_equal(nvmlDeviceGetComputeRunningProcesses(dev, &n, &p),
			 NVML_SUCCESS);
	assert_int_equal(p.pid, getpid());
	assert_int_equal(p.usedGpuMemory, 0);

	/* libcuda is now in the process, on the same vGPU. */
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	*(void **)&get_uuid = dlsym(h, "cuDeviceGetUuid_v2");
	assert_non_null(get_uuid);
	assert_int_equal(get_uuid(&cu, 0), CUDA_SUCCESS);
	b = (const unsigned char *)cu.bytes;
	snprintf(want, sizeof(want), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
		 b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
	assert_int_equal(nvmlDeviceGetUUID(dev, uuid, sizeof(uuid)),
			 NVML_SUCCESS);
	assert_string_equal(uuid, want);
	dlclose(h);
	assert_int_equal(nvmlShutdown(), NVML_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
