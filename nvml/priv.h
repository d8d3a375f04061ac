/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpu's libnvidia-ml.so.1: state shared by its sources.
 *
 * The library answers for one device, the vGPU of the process, reached
 * through mdgpu's libcuda.so.1 in the same process (Documentation/nvml.md,
 * "One vGPU per process"): nvmlInit runs cuInit, names, UUID and totals
 * come from libcuda's entry points, the daemon's live values (memory used,
 * GPU time) from libcuda's mdgpu_shared_query.  Built with
 * NVML_NO_UNVERSIONED_FUNC_DEFS so that every exported name is written as
 * it is exported.
 */
#ifndef MDGPU_NVML_PRIV_H
#define MDGPU_NVML_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>
#include <nvml.h>

#include "common/gpu_select.h"

/* The vGPU's UUID as NVML prints it: "GPU-" and 36 characters
 * (common/gpu_select.h formats it). */
#define MDGPU_NVML_UUID_LEN	MDGPU_GPU_UUID_STR_LEN

/* What the library uses of mdgpu's libcuda.so.1. */
struct mdgpu_nvml_cu {
	CUresult (*init)(unsigned int flags);
	CUresult (*driver_version)(int *version);
	CUresult (*get_name)(char *name, int len, CUdevice dev);
	CUresult (*get_uuid)(CUuuid *uuid, CUdevice dev);
	CUresult (*total_mem)(size_t *bytes, CUdevice dev);
	CUresult (*get_attribute)(int *v, CUdevice_attribute a, CUdevice dev);
	int (*query)(uint32_t what, uint64_t *result, uint64_t *result2);
};

struct mdgpu_nvml_state {
	pthread_mutex_t lock;		/* the fields below; the
					 * description is written once,
					 * before have_vgpu, and only read
					 * after it */
	unsigned int refs;		/* nvmlInit calls not yet shut down */
	bool bound;			/* cu is resolved (kept for good) */
	bool have_vgpu;			/* described (then for good); false
					 * after NO_GPUS without a vGPU */
	struct mdgpu_nvml_cu cu;
	/* The description, read at the first nvmlInit that finds it. */
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	char uuid[MDGPU_NVML_UUID_LEN];
	uint64_t total;
	int cc_major, cc_minor;
	int cuda_version;
};

extern struct mdgpu_nvml_state mdgpu_nvml;

/* The one device's handle. */
struct nvmlDevice_st {
	int unused;
};
extern struct nvmlDevice_st mdgpu_nvml_device;

/* NVML_SUCCESS if initialised with a vGPU and `dev` is its handle:
 * UNINITIALIZED, else INVALID_ARGUMENT. */
nvmlReturn_t mdgpu_nvml_check(nvmlDevice_t dev);
/* NVML_SUCCESS if initialised (with or without a vGPU). */
nvmlReturn_t mdgpu_nvml_check_init(void);
/* QUERY `what` on the vGPU, through libcuda; negative errno. */
int mdgpu_nvml_query(uint32_t what, uint64_t *result, uint64_t *result2);
/* The NVML code for a negative errno of the daemon or libcuda. */
nvmlReturn_t mdgpu_nvml_result(int err);
/* Copies s into buf of len bytes: INSUFFICIENT_SIZE if it does not fit
 * with its NUL, INVALID_ARGUMENT for a NULL buf. */
nvmlReturn_t mdgpu_nvml_copy_str(char *buf, unsigned int len, const char *s);

bool mdgpu_nvml_log_on(void);
void mdgpu_nvml_log(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Exports `name` as another name of the implemented `impl`. */
#define MDGPU_NVML_ALIAS(name, impl) \
	extern __typeof__(impl) name __attribute__((alias(#impl)))

#endif /* MDGPU_NVML_PRIV_H */
