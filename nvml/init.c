// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpu's libnvidia-ml.so.1: initialisation, the binding to mdgpu's
 * libcuda.so.1, error codes and texts, the system-wide queries.
 *
 * nvmlInit finds libcuda.so.1 (the one already in the process, else the
 * one beside this library, else the loader's), requires mdgpu's
 * (mdgpu_shared_query exported) and runs its cuInit: the vGPU is the one
 * libcuda opens from the environment (MDGPU_SOCKET/MDGPU_TYPE,
 * MDGPU_DEVICE, MDGPU_VFIO; Documentation/libcuda.md), shared by both
 * libraries.  Init calls are counted; the last nvmlShutdown makes every
 * call answer NVML_ERROR_UNINITIALIZED again, while libcuda's connection
 * stays (libcuda owns it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/gpu_select.h"
#include "uapi/mdgpu.h"
#include "entry.h"
#include "priv.h"

struct mdgpu_nvml_state mdgpu_nvml = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

struct nvmlDevice_st mdgpu_nvml_device;

/* Logging (MDGPU_NVML_LOG). */
bool mdgpu_nvml_log_on(void)
{
	const char *v = getenv("MDGPU_NVML_LOG");

	return v && *v && strcmp(v, "0");
}

void mdgpu_nvml_log(const char *fmt, ...)
{
	va_list ap;

	if (!mdgpu_nvml_log_on())
		return;
	va_start(ap, fmt);
	fputs("libnvidia-ml(mdgpu): ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int mdgpu_nvml_unsupported(unsigned idx)
{
	if (idx < mdgpu_nvml_stub_count &&
	    !atomic_exchange(&mdgpu_nvml_stub_logged[idx], 1))
		mdgpu_nvml_log("%s: not supported", mdgpu_nvml_stub_names[idx]);
	return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t mdgpu_nvml_result(int err)
{
	switch (err) {
	case 0:
		return NVML_SUCCESS;
	case -ENOMEM:
		return NVML_ERROR_MEMORY;
	case -EOPNOTSUPP:
		return NVML_ERROR_NOT_SUPPORTED;
	case -EIO:		/* the vGPU's context is lost */
	case -ETIMEDOUT:	/* its work hung and was killed */
	case -ENODEV:
	case -EPIPE:
	case -ECONNRESET:
	case -ENOTCONN:
		return NVML_ERROR_GPU_IS_LOST;
	default:
		return NVML_ERROR_UNKNOWN;
	}
}

nvmlReturn_t mdgpu_nvml_copy_str(char *buf, unsigned int len, const char *s)
{
	size_t n = strlen(s);

	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (n >= len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, n + 1);
	return NVML_SUCCESS;
}

nvmlReturn_t mdgpu_nvml_check_init(void)
{
	unsigned int refs;

	pthread_mutex_lock(&mdgpu_nvml.lock);
	refs = mdgpu_nvml.refs;
	pthread_mutex_unlock(&mdgpu_nvml.lock);
	return refs ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

nvmlReturn_t mdgpu_nvml_check(nvmlDevice_t dev)
{
	bool vgpu;
	unsigned int refs;

	pthread_mutex_lock(&mdgpu_nvml.lock);
	refs = mdgpu_nvml.refs;
	vgpu = mdgpu_nvml.have_vgpu;
	pthread_mutex_unlock(&mdgpu_nvml.lock);
	if (!refs)
		return NVML_ERROR_UNINITIALIZED;
	if (!vgpu || dev != &mdgpu_nvml_device)
		return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_SUCCESS;
}

int mdgpu_nvml_query(uint32_t what, uint64_t *result, uint64_t *result2)
{
	/* cu is written once, under the lock, before refs first rises. */
	return mdgpu_nvml.cu.query(what, result, result2);
}

/* ---- the binding to libcuda ------------------------------------------ */

/* libcuda.so.1 in this library's own directory, or NULL. */
static void *mdgpu_nvml_open_beside(void)
{
	char path[PATH_MAX];
	Dl_info info;
	const char *slash;

	if (!dladdr((void *)&mdgpu_nvml_device, &info) || !info.dli_fname)
		return NULL;
	slash = strrchr(info.dli_fname, '/');
	if (!slash)
		return NULL;
	if (snprintf(path, sizeof(path), "%.*s/libcuda.so.1",
		     (int)(slash - info.dli_fname), info.dli_fname) >=
	    (int)sizeof(path))
		return NULL;
	return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

#define MDGPU_NVML_SYM(h, field, name)					\
	(*(void **)&mdgpu_nvml.cu.field = dlsym((h), (name)))

/* Resolves mdgpu_nvml.cu; the handle is never closed (libcuda's state,
 * the connection included, lives as long as the process). */
static nvmlReturn_t mdgpu_nvml_bind(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (!h)
		h = mdgpu_nvml_open_beside();
	if (!h)
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		mdgpu_nvml_log("nvmlInit: libcuda.so.1: %s", dlerror());
		return NVML_ERROR_LIBRARY_NOT_FOUND;
	}
	if (!MDGPU_NVML_SYM(h, query, "mdgpu_shared_query")) {
		mdgpu_nvml_log("nvmlInit: the libcuda.so.1 found is not "
			       "mdgpu's (no mdgpu_shared_query)");
		return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
	}
	if (!MDGPU_NVML_SYM(h, init, "cuInit") ||
	    !MDGPU_NVML_SYM(h, driver_version, "cuDriverGetVersion") ||
	    !MDGPU_NVML_SYM(h, get_name, "cuDeviceGetName") ||
	    !MDGPU_NVML_SYM(h, get_uuid, "cuDeviceGetUuid_v2") ||
	    !MDGPU_NVML_SYM(h, total_mem, "cuDeviceTotalMem_v2") ||
	    !MDGPU_NVML_SYM(h, get_attribute, "cuDeviceGetAttribute")) {
		mdgpu_nvml_log("nvmlInit: libcuda.so.1 lacks an entry point");
		return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
	}
	return NVML_SUCCESS;
}

static nvmlReturn_t mdgpu_nvml_cu_result(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS:
		return NVML_SUCCESS;
	case CUDA_ERROR_NO_DEVICE:		/* no daemon, no device */
		return NVML_ERROR_DRIVER_NOT_LOADED;
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:	/* daemon's ABI too old */
		return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
	case CUDA_ERROR_OUT_OF_MEMORY:		/* no quota left for a vGPU */
		return NVML_ERROR_INSUFFICIENT_RESOURCES;
	case CUDA_ERROR_DEVICE_UNAVAILABLE:
		return NVML_ERROR_GPU_IS_LOST;
	default:
		return NVML_ERROR_UNKNOWN;
	}
}

/* Opens (or finds open) libcuda's vGPU and reads what does not change. */
static nvmlReturn_t mdgpu_nvml_describe(void)
{
	struct mdgpu_nvml_cu *cu = &mdgpu_nvml.cu;
	CUuuid uuid;
	size_t total;
	CUresult r;

	r = cu->init(0);
	if (r) {
		mdgpu_nvml_log("nvmlInit: cuInit: %d", (int)r);
		return mdgpu_nvml_cu_result(r);
	}
	r = cu->get_name(mdgpu_nvml.name, (int)sizeof(mdgpu_nvml.name), 0);
	if (!r)
		r = cu->get_uuid(&uuid, 0);
	if (!r)
		r = cu->total_mem(&total, 0);
	if (!r)
		r = cu->get_attribute(&mdgpu_nvml.cc_major,
			CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0);
	if (!r)
		r = cu->get_attribute(&mdgpu_nvml.cc_minor,
			CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0);
	if (!r)
		r = cu->driver_version(&mdgpu_nvml.cuda_version);
	if (r) {
		mdgpu_nvml_log("nvmlInit: describing the vGPU: %d", (int)r);
		return mdgpu_nvml_cu_result(r);
	}
	mdgpu_gpu_uuid_format((const uint8_t *)uuid.bytes, mdgpu_nvml.uuid);
	mdgpu_nvml.total = total;
	return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlInitWithFlags(unsigned int flags)
{
	const unsigned int known = NVML_INIT_FLAG_NO_GPUS |
				   NVML_INIT_FLAG_NO_ATTACH;
	nvmlReturn_t r = NVML_SUCCESS;

	if (flags & ~known)
		return NVML_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&mdgpu_nvml.lock);
	if (!mdgpu_nvml.bound) {
		r = mdgpu_nvml_bind();
		mdgpu_nvml.bound = r == NVML_SUCCESS;
	}
	/* libcuda's vGPU is the process's for good: described once, after
	 * which the description is only read (without the lock). */
	if (!r && !mdgpu_nvml.have_vgpu) {
		r = mdgpu_nvml_describe();
		mdgpu_nvml.have_vgpu = r == NVML_SUCCESS;
	}
	/* NO_GPUS: initialised with no device rather than failing. */
	if (r && (flags & NVML_INIT_FLAG_NO_GPUS) &&
	    r != NVML_ERROR_LIBRARY_NOT_FOUND &&
	    r != NVML_ERROR_LIB_RM_VERSION_MISMATCH)
		r = NVML_SUCCESS;
	if (!r)
		mdgpu_nvml.refs++;
	pthread_mutex_unlock(&mdgpu_nvml.lock);
	return r;
}

nvmlReturn_t DECLDIR nvmlInit_v2(void)
{
	return nvmlInitWithFlags(0);
}
/* The 1.0 name: the same, on this library. */
MDGPU_NVML_ALIAS(nvmlInit, nvmlInit_v2);

nvmlReturn_t DECLDIR nvmlShutdown(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&mdgpu_nvml.lock);
	if (mdgpu_nvml.refs)
		mdgpu_nvml.refs--;
	else
		r = NVML_ERROR_UNINITIALIZED;
	pthread_mutex_unlock(&mdgpu_nvml.lock);
	return r;
}

/* ---- error texts -------------------------------------------------------- */

static const struct {
	nvmlReturn_t value;
	const char *text;
} mdgpu_nvml_texts[] = {
	{ NVML_SUCCESS, "Success" },
	{ NVML_ERROR_UNINITIALIZED, "Uninitialized" },
	{ NVML_ERROR_INVALID_ARGUMENT, "Invalid Argument" },
	{ NVML_ERROR_NOT_SUPPORTED, "Not Supported" },
	{ NVML_ERROR_NO_PERMISSION, "Insufficient Permissions" },
	{ NVML_ERROR_ALREADY_INITIALIZED, "Already Initialized" },
	{ NVML_ERROR_NOT_FOUND, "Not Found" },
	{ NVML_ERROR_INSUFFICIENT_SIZE, "Insufficient Size" },
	{ NVML_ERROR_INSUFFICIENT_POWER, "Insufficient External Power" },
	{ NVML_ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded" },
	{ NVML_ERROR_TIMEOUT, "Timeout" },
	{ NVML_ERROR_IRQ_ISSUE, "Interrupt Request Issue" },
	{ NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found" },
	{ NVML_ERROR_FUNCTION_NOT_FOUND, "Function Not Found" },
	{ NVML_ERROR_CORRUPTED_INFOROM, "Corrupted infoROM" },
	{ NVML_ERROR_GPU_IS_LOST, "GPU is lost" },
	{ NVML_ERROR_RESET_REQUIRED, "GPU requires reset" },
	{ NVML_ERROR_OPERATING_SYSTEM, "GPU access blocked by the operating "
				       "system" },
	{ NVML_ERROR_LIB_RM_VERSION_MISMATCH, "Driver/library version "
					      "mismatch" },
	{ NVML_ERROR_IN_USE, "In use by another client" },
	{ NVML_ERROR_MEMORY, "Insufficient Memory" },
	{ NVML_ERROR_NO_DATA, "No data" },
	{ NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, "vGPU operation not supported "
					     "with ECC enabled" },
	{ NVML_ERROR_INSUFFICIENT_RESOURCES, "Insufficient resources" },
	{ NVML_ERROR_FREQ_NOT_SUPPORTED, "Frequency not supported" },
	{ NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "Argument version mismatch" },
	{ NVML_ERROR_DEPRECATED, "Deprecated" },
	{ NVML_ERROR_NOT_READY, "Not ready" },
	{ NVML_ERROR_GPU_NOT_FOUND, "GPU not found" },
	{ NVML_ERROR_INVALID_STATE, "Invalid state" },
	{ NVML_ERROR_RESET_TYPE_NOT_SUPPORTED, "Reset type not supported" },
	{ NVML_ERROR_UNKNOWN, "Unknown Error" },
};

const DECLDIR char *nvmlErrorString(nvmlReturn_t result)
{
	for (size_t i = 0; i < sizeof(mdgpu_nvml_texts) /
	     sizeof(mdgpu_nvml_texts[0]); i++)
		if (mdgpu_nvml_texts[i].value == result)
			return mdgpu_nvml_texts[i].text;
	return "Unknown Error";
}

/* ---- the system ----------------------------------------------------- */

/*
 * There is no NVIDIA kernel driver in a tenant's view, so no such version
 * to give; the string names mdgpu and the ABI this library speaks, in a
 * form no parser takes for an NVIDIA driver version.
 */
nvmlReturn_t DECLDIR nvmlSystemGetDriverVersion(char *version,
						unsigned int length)
{
	char s[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	nvmlReturn_t r = mdgpu_nvml_check_init();

	if (r)
		return r;
	snprintf(s, sizeof(s), "mdgpu-%u.%u", MDGPU_ABI_MAJOR,
		 MDGPU_ABI_MINOR);
	return mdgpu_nvml_copy_str(version, length, s);
}

/* NVML_API_VERSION of the nvml.h the library is built against, marked as
 * mdgpu's. */
nvmlReturn_t DECLDIR nvmlSystemGetNVMLVersion(char *version,
					      unsigned int length)
{
	nvmlReturn_t r = mdgpu_nvml_check_init();

	if (r)
		return r;
	return mdgpu_nvml_copy_str(version, length,
				   NVML_API_VERSION_STR ".mdgpu");
}

/* libcuda's cuDriverGetVersion, the version the process's CUDA sees. */
nvmlReturn_t DECLDIR nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
	nvmlReturn_t r = mdgpu_nvml_check_init();

	if (r)
		return r;
	if (!cudaDriverVersion)
		return NVML_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&mdgpu_nvml.lock);
	r = mdgpu_nvml.have_vgpu ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
	if (!r)
		*cudaDriverVersion = mdgpu_nvml.cuda_version;
	pthread_mutex_unlock(&mdgpu_nvml.lock);
	return r;
}
MDGPU_NVML_ALIAS(nvmlSystemGetCudaDriverVersion_v2,
		 nvmlSystemGetCudaDriverVersion);
