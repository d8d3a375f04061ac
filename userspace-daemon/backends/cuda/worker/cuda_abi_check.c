// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Compile-time cross-check of cuda_api.h against the real cuda.h, when the
 * CUDA toolkit is installed where the build looks (MDGPUD_CUDA_H, or
 * /usr/local/cuda/include/cuda.h, or the targets/ path of the GPU
 * machine).  Without a cuda.h this file only provides the run-time query
 * that reports "not checked".
 *
 * What is proven: every function-pointer type equals the prototype cuda.h
 * declares for the name it maps (so argument types, order and the CUresult
 * return match), every constant equals the driver's, and the versioned
 * symbol we dlsym() equals what cuda.h maps the plain name to (checked at
 * run time by tests/test_cuda_api.c through mdgpud_cuda_abi_mapped_name()).
 */
#include "cuda_api.h"

#include <stddef.h>
#include <stdint.h>

#if defined(MDGPUD_CUDA_H)
#define MDGPUD_HAVE_CUDA_H 1
#include MDGPUD_CUDA_H
#elif __has_include("/usr/local/cuda/include/cuda.h")
#define MDGPUD_HAVE_CUDA_H 1
#include "/usr/local/cuda/include/cuda.h"
#elif __has_include("/usr/local/cuda/targets/x86_64-linux/include/cuda.h")
#define MDGPUD_HAVE_CUDA_H 1
#include "/usr/local/cuda/targets/x86_64-linux/include/cuda.h"
#endif

#ifdef MDGPUD_HAVE_CUDA_H

#define MDGPUD_CHECK_EQ(a, b) _Static_assert((a) == (b), #a " != " #b)

_Static_assert(sizeof(CUresult) == sizeof(mdgpud_cu_result), "CUresult");
_Static_assert(__builtin_types_compatible_p(CUdeviceptr, mdgpud_cu_deviceptr),
	       "CUdeviceptr");
_Static_assert(__builtin_types_compatible_p(CUdevice, mdgpud_cu_device),
	       "CUdevice");
_Static_assert(__builtin_types_compatible_p(CUcontext, mdgpud_cu_context),
	       "CUcontext");
_Static_assert(__builtin_types_compatible_p(CUmodule, mdgpud_cu_module),
	       "CUmodule");
_Static_assert(__builtin_types_compatible_p(CUfunction, mdgpud_cu_function),
	       "CUfunction");
_Static_assert(__builtin_types_compatible_p(CUstream, mdgpud_cu_stream),
	       "CUstream");
_Static_assert(__builtin_types_compatible_p(CUevent, mdgpud_cu_event),
	       "CUevent");
_Static_assert(sizeof(CUjit_option) == sizeof(mdgpud_cu_jit_option),
	       "CUjit_option");
_Static_assert(sizeof(CUdevice_attribute) ==
	       sizeof(mdgpud_cu_device_attribute), "CUdevice_attribute");

/* Every function type, as cuda.h declares the name it maps. */
#define MDGPUD_CU_CHECK_FN(member, cuname, sym, params)			\
	_Static_assert(__builtin_types_compatible_p(__typeof__(&cuname),	\
						    mdgpud_cu_pfn_##member), \
		       "prototype of " #cuname);
MDGPUD_CU_FUNCS(MDGPUD_CU_CHECK_FN)
#undef MDGPUD_CU_CHECK_FN

MDGPUD_CHECK_EQ(MDGPUD_CUDA_SUCCESS, CUDA_SUCCESS);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_DEINITIALIZED, CUDA_ERROR_DEINITIALIZED);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_STUB_LIBRARY, CUDA_ERROR_STUB_LIBRARY);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_DEVICE_UNAVAILABLE,
		CUDA_ERROR_DEVICE_UNAVAILABLE);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_IMAGE);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_CONTEXT);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_NO_BINARY_FOR_GPU,
		CUDA_ERROR_NO_BINARY_FOR_GPU);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_ECC_UNCORRECTABLE,
		CUDA_ERROR_ECC_UNCORRECTABLE);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_INVALID_PTX, CUDA_ERROR_INVALID_PTX);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_JIT_COMPILER_NOT_FOUND,
		CUDA_ERROR_JIT_COMPILER_NOT_FOUND);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
		CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_JIT_COMPILATION_DISABLED,
		CUDA_ERROR_JIT_COMPILATION_DISABLED);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_HANDLE);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_NOT_READY, CUDA_ERROR_NOT_READY);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
		CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_LAUNCH_TIMEOUT, CUDA_ERROR_LAUNCH_TIMEOUT);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_CONTEXT_IS_DESTROYED,
		CUDA_ERROR_CONTEXT_IS_DESTROYED);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_ASSERT, CUDA_ERROR_ASSERT);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
		CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
		CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_HARDWARE_STACK_ERROR,
		CUDA_ERROR_HARDWARE_STACK_ERROR);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_ILLEGAL_INSTRUCTION,
		CUDA_ERROR_ILLEGAL_INSTRUCTION);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_MISALIGNED_ADDRESS,
		CUDA_ERROR_MISALIGNED_ADDRESS);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_INVALID_ADDRESS_SPACE,
		CUDA_ERROR_INVALID_ADDRESS_SPACE);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_INVALID_PC, CUDA_ERROR_INVALID_PC);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_FAILED);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
		CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_TENSOR_MEMORY_LEAK,
		CUDA_ERROR_TENSOR_MEMORY_LEAK);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_NOT_PERMITTED, CUDA_ERROR_NOT_PERMITTED);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
		CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
MDGPUD_CHECK_EQ(MDGPUD_CUDA_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN);

MDGPUD_CHECK_EQ(MDGPUD_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
		CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
MDGPUD_CHECK_EQ(MDGPUD_CU_MEMHOSTREGISTER_PORTABLE,
		CU_MEMHOSTREGISTER_PORTABLE);
MDGPUD_CHECK_EQ(MDGPUD_CU_EVENT_DEFAULT, CU_EVENT_DEFAULT);
MDGPUD_CHECK_EQ(MDGPUD_CU_EVENT_BLOCKING_SYNC, CU_EVENT_BLOCKING_SYNC);
MDGPUD_CHECK_EQ(MDGPUD_CU_EVENT_DISABLE_TIMING, CU_EVENT_DISABLE_TIMING);
MDGPUD_CHECK_EQ(MDGPUD_CU_STREAM_NON_BLOCKING, CU_STREAM_NON_BLOCKING);
MDGPUD_CHECK_EQ(MDGPUD_CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER);
MDGPUD_CHECK_EQ(MDGPUD_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
		CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
MDGPUD_CHECK_EQ(MDGPUD_CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER);
MDGPUD_CHECK_EQ(MDGPUD_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
		CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
MDGPUD_CHECK_EQ(MDGPUD_CU_LAUNCH_PARAM_END_AS_INT, CU_LAUNCH_PARAM_END_AS_INT);
MDGPUD_CHECK_EQ(MDGPUD_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT,
		CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT);
MDGPUD_CHECK_EQ(MDGPUD_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT,
		CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT);

MDGPUD_CHECK_EQ(MDGPUD_CU_STREAM_DEFAULT, CU_STREAM_DEFAULT);
MDGPUD_CHECK_EQ(MDGPUD_CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
		CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
MDGPUD_CHECK_EQ(MDGPUD_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
		CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
/* cuLaunchKernelEx's structures, member by member. */
#define MDGPUD_CHECK_MEMBER(t, m, mt, mm)				\
	MDGPUD_CHECK_EQ(offsetof(t, m), offsetof(mt, mm));		\
	MDGPUD_CHECK_EQ(sizeof(((t *)0)->m), sizeof(((mt *)0)->mm))
MDGPUD_CHECK_EQ(sizeof(CUlaunchConfig), sizeof(struct mdgpud_cu_launch_config));
MDGPUD_CHECK_MEMBER(CUlaunchConfig, gridDimX, struct mdgpud_cu_launch_config,
		    grid_x);
MDGPUD_CHECK_MEMBER(CUlaunchConfig, gridDimZ, struct mdgpud_cu_launch_config,
		    grid_z);
MDGPUD_CHECK_MEMBER(CUlaunchConfig, blockDimX, struct mdgpud_cu_launch_config,
		    block_x);
MDGPUD_CHECK_MEMBER(CUlaunchConfig, blockDimZ, struct mdgpud_cu_launch_config,
		    block_z);
MDGPUD_CHECK_MEMBER(CUlaunchConfig, sharedMemBytes,
		    struct mdgpud_cu_launch_config, shared_bytes);
MDGPUD_CHECK_MEMBER(CUlaunchConfig, hStream, struct mdgpud_cu_launch_config,
		    stream);
MDGPUD_CHECK_MEMBER(CUlaunchConfig, attrs, struct mdgpud_cu_launch_config,
		    attrs);
MDGPUD_CHECK_MEMBER(CUlaunchConfig, numAttrs, struct mdgpud_cu_launch_config,
		    num_attrs);
MDGPUD_CHECK_EQ(sizeof(CUlaunchAttribute), sizeof(struct mdgpud_cu_launch_attr));
MDGPUD_CHECK_MEMBER(CUlaunchAttribute, id, struct mdgpud_cu_launch_attr, id);
MDGPUD_CHECK_MEMBER(CUlaunchAttribute, value, struct mdgpud_cu_launch_attr,
		    value);
MDGPUD_CHECK_MEMBER(CUlaunchAttribute, value.cooperative,
		    struct mdgpud_cu_launch_attr, value.cooperative);
MDGPUD_CHECK_MEMBER(CUlaunchAttribute, value.clusterDim.x,
		    struct mdgpud_cu_launch_attr, value.cluster_dim.x);
MDGPUD_CHECK_MEMBER(CUlaunchAttribute, value.clusterDim.z,
		    struct mdgpud_cu_launch_attr, value.cluster_dim.z);

int mdgpud_cuda_abi_stream_legacy(unsigned long *value)
{
	*value = (unsigned long)(uintptr_t)CU_STREAM_LEGACY;
	return 1;
}

#define MDGPUD_STR2(x) #x
#define MDGPUD_STR(x) MDGPUD_STR2(x)
static const char *const mdgpud_cuda_h_mapped[] = {
#define MDGPUD_CU_MAPPED(member, cuname, sym, params) MDGPUD_STR(cuname),
	MDGPUD_CU_FUNCS(MDGPUD_CU_MAPPED)
#undef MDGPUD_CU_MAPPED
};

int mdgpud_cuda_abi_mapped_name(size_t i, const char **mapped_name)
{
	if (i >= sizeof(mdgpud_cuda_h_mapped) / sizeof(mdgpud_cuda_h_mapped[0]))
		return 0;
	*mapped_name = mdgpud_cuda_h_mapped[i];
	return 1;
}

#else /* !MDGPUD_HAVE_CUDA_H */

int mdgpud_cuda_abi_stream_legacy(unsigned long *value)
{
	(void)value;
	return 0;
}

int mdgpud_cuda_abi_mapped_name(size_t i, const char **mapped_name)
{
	(void)i;
	(void)mapped_name;
	return 0;
}

#endif
