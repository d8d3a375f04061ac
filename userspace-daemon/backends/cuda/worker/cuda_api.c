// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * CUDA driver API loader (dlopen) and the CUresult -> errno mapping.
 *
 * Only mdgpud-worker calls mdgpud_cuda_api_load(): the supervisor never
 * loads libcuda, so it may fork workers at any time and its sanitized test
 * builds never see the driver.
 */
#include "cuda_api.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const mdgpud_cuda_symbols[] = {
#define MDGPUD_CU_SYMNAME(member, cuname, sym, params) sym,
	MDGPUD_CU_FUNCS(MDGPUD_CU_SYMNAME)
#undef MDGPUD_CU_SYMNAME
};

size_t mdgpud_cuda_api_symbol_count(void)
{
	return sizeof(mdgpud_cuda_symbols) / sizeof(mdgpud_cuda_symbols[0]);
}

const char *mdgpud_cuda_api_symbol_name(size_t i)
{
	return i < mdgpud_cuda_api_symbol_count() ? mdgpud_cuda_symbols[i]
						  : NULL;
}

int mdgpud_cuda_api_load(struct mdgpud_cuda_api *api, const char *lib,
			 char *why, size_t why_len)
{
	const char *name = lib ? lib : "libcuda.so.1";
	void *sym;

	memset(api, 0, sizeof(*api));
	api->dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!api->dl) {
		const char *err = dlerror();

		snprintf(why, why_len, "dlopen(%s): %s", name,
			 err ? err : "failed");
		return -ENOENT;
	}

	/*
	 * POSIX lets a void * from dlsym() be converted to a function
	 * pointer; memcpy keeps -Wpedantic-style checkers quiet about it.
	 */
#define MDGPUD_CU_RESOLVE(member, cuname, symname, params)		\
	sym = dlsym(api->dl, symname);					\
	if (!sym) {							\
		snprintf(why, why_len, "%s: symbol %s missing", name,	\
			 symname);					\
		mdgpud_cuda_api_unload(api);				\
		return -ENOSYS;						\
	}								\
	memcpy(&api->member, &sym, sizeof(api->member));
	MDGPUD_CU_FUNCS(MDGPUD_CU_RESOLVE)
#undef MDGPUD_CU_RESOLVE
#define MDGPUD_CU_RESOLVE_OPT(member, cuname, symname, params)		\
	sym = dlsym(api->dl, symname);					\
	memcpy(&api->member, &sym, sizeof(api->member));
	MDGPUD_CU_OPT_FUNCS(MDGPUD_CU_RESOLVE_OPT)
#undef MDGPUD_CU_RESOLVE_OPT
	return 0;
}

void mdgpud_cuda_api_unload(struct mdgpud_cuda_api *api)
{
	if (api->dl)
		dlclose(api->dl);
	memset(api, 0, sizeof(*api));
}

int mdgpud_cuda_errno(mdgpud_cu_result res)
{
	switch (res) {
	case MDGPUD_CUDA_SUCCESS:
		return 0;
	/* The request itself is wrong: bad image, bad launch shape. */
	case MDGPUD_CUDA_ERROR_INVALID_VALUE:
	case MDGPUD_CUDA_ERROR_INVALID_IMAGE:
	case MDGPUD_CUDA_ERROR_INVALID_PTX:
	case MDGPUD_CUDA_ERROR_INVALID_SOURCE:
	case MDGPUD_CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
	case MDGPUD_CUDA_ERROR_NO_BINARY_FOR_GPU:
	case MDGPUD_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
	case MDGPUD_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
	case MDGPUD_CUDA_ERROR_INVALID_HANDLE:
		return -EINVAL;
	case MDGPUD_CUDA_ERROR_NOT_FOUND:
	case MDGPUD_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
		return -ENOENT;
	case MDGPUD_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
		return -EEXIST;
	case MDGPUD_CUDA_ERROR_OUT_OF_MEMORY:
		return -ENOMEM;
	case MDGPUD_CUDA_ERROR_NOT_READY:
		return -EAGAIN;
	case MDGPUD_CUDA_ERROR_NOT_PERMITTED:
		return -EPERM;
	case MDGPUD_CUDA_ERROR_NOT_SUPPORTED:
	case MDGPUD_CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
	case MDGPUD_CUDA_ERROR_JIT_COMPILATION_DISABLED:
		return -EOPNOTSUPP;
	/* No usable driver or device, or the context is gone. */
	case MDGPUD_CUDA_ERROR_NOT_INITIALIZED:
	case MDGPUD_CUDA_ERROR_DEINITIALIZED:
	case MDGPUD_CUDA_ERROR_STUB_LIBRARY:
	case MDGPUD_CUDA_ERROR_DEVICE_UNAVAILABLE:
	case MDGPUD_CUDA_ERROR_NO_DEVICE:
	case MDGPUD_CUDA_ERROR_INVALID_DEVICE:
	case MDGPUD_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
	case MDGPUD_CUDA_ERROR_CONTEXT_IS_DESTROYED:
	case MDGPUD_CUDA_ERROR_INVALID_CONTEXT:
		return -ENODEV;
	/* The GPU failed executing the work (kernel faults and the like). */
	default:
		return -EIO;
	}
}

int mdgpud_cuda_error_is_sticky(mdgpud_cu_result res)
{
	switch (res) {
	case MDGPUD_CUDA_ERROR_ILLEGAL_ADDRESS:
	case MDGPUD_CUDA_ERROR_LAUNCH_TIMEOUT:
	case MDGPUD_CUDA_ERROR_HARDWARE_STACK_ERROR:
	case MDGPUD_CUDA_ERROR_ILLEGAL_INSTRUCTION:
	case MDGPUD_CUDA_ERROR_MISALIGNED_ADDRESS:
	case MDGPUD_CUDA_ERROR_INVALID_ADDRESS_SPACE:
	case MDGPUD_CUDA_ERROR_INVALID_PC:
	case MDGPUD_CUDA_ERROR_LAUNCH_FAILED:
	case MDGPUD_CUDA_ERROR_ASSERT:
	case MDGPUD_CUDA_ERROR_ECC_UNCORRECTABLE:
	case MDGPUD_CUDA_ERROR_TENSOR_MEMORY_LEAK:
	case MDGPUD_CUDA_ERROR_CONTEXT_IS_DESTROYED:
		return 1;
	default:
		return 0;
	}
}
