/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The subset of the CUDA driver API that mdgpud uses, declared here so that
 * the daemon builds without the CUDA toolkit and loads libcuda.so.1 with
 * dlopen() at run time (only the worker process, mdgpud-worker, does).
 *
 * Types carry an mdgpud_cu_ prefix; the opaque handle types point to the
 * driver's own incomplete struct tags (struct CUctx_st, ...) so that
 * cuda_abi_check.c can prove, when the real cuda.h is present at build
 * time, that every function-pointer type below is identical to the
 * prototype of the symbol we resolve, and that every constant has the
 * driver's value.
 *
 * Versioned entry points: cuda.h maps e.g. cuMemAlloc to cuMemAlloc_v2 with
 * a macro; the table resolves the name cuda.h maps to (third column of
 * MDGPUD_CU_FUNCS), and cuda_abi_check.c checks that mapping as well.
 */
#ifndef MDGPUD_CUDA_API_H
#define MDGPUD_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

/* CUresult is an enum with no negative member: unsigned int in the ABI. */
typedef unsigned int mdgpud_cu_result;
typedef int mdgpud_cu_device;
typedef unsigned long long mdgpud_cu_deviceptr;
typedef struct CUctx_st *mdgpud_cu_context;
typedef struct CUmod_st *mdgpud_cu_module;
typedef struct CUfunc_st *mdgpud_cu_function;
typedef struct CUstream_st *mdgpud_cu_stream;
typedef struct CUevent_st *mdgpud_cu_event;
/* cuLaunchKernelEx's config, opaque here: see mdgpud_cu_launch_config. */
struct CUlaunchConfig_st;
/* CUuuid, 16 bytes (cuda_abi_check.c asserts it): callers pass a byte
 * array of that size. */
struct CUuuid_st;
/* CUjit_option and CUdevice_attribute: enums, unsigned int in the ABI. */
typedef unsigned int mdgpud_cu_jit_option;
typedef unsigned int mdgpud_cu_device_attribute;
/* CUlimit, CUfunction_attribute, CUfunc_cache: enums too (values in
 * mdgpud/cuda_values.h). */
typedef unsigned int mdgpud_cu_limit;
typedef unsigned int mdgpud_cu_function_attribute;
typedef unsigned int mdgpud_cu_func_cache;
/* The linker's state, and CUjitInputType (an enum: unsigned int). */
typedef struct CUlinkState_st *mdgpud_cu_link_state;
typedef unsigned int mdgpud_cu_jit_input_type;

/* CUresult values the daemon distinguishes (cuda_errno.c maps them all). */
#define MDGPUD_CUDA_SUCCESS				0
#define MDGPUD_CUDA_ERROR_INVALID_VALUE			1
#define MDGPUD_CUDA_ERROR_OUT_OF_MEMORY			2
#define MDGPUD_CUDA_ERROR_NOT_INITIALIZED		3
#define MDGPUD_CUDA_ERROR_DEINITIALIZED			4
#define MDGPUD_CUDA_ERROR_STUB_LIBRARY			34
#define MDGPUD_CUDA_ERROR_DEVICE_UNAVAILABLE		46
#define MDGPUD_CUDA_ERROR_NO_DEVICE			100
#define MDGPUD_CUDA_ERROR_INVALID_DEVICE		101
#define MDGPUD_CUDA_ERROR_INVALID_IMAGE			200
#define MDGPUD_CUDA_ERROR_INVALID_CONTEXT		201
#define MDGPUD_CUDA_ERROR_NO_BINARY_FOR_GPU		209
#define MDGPUD_CUDA_ERROR_ECC_UNCORRECTABLE		214
#define MDGPUD_CUDA_ERROR_INVALID_PTX			218
#define MDGPUD_CUDA_ERROR_INVALID_SOURCE		300
#define MDGPUD_CUDA_ERROR_UNSUPPORTED_PTX_VERSION	222
#define MDGPUD_CUDA_ERROR_JIT_COMPILER_NOT_FOUND	221
#define MDGPUD_CUDA_ERROR_JIT_COMPILATION_DISABLED	223
#define MDGPUD_CUDA_ERROR_INVALID_HANDLE		400
#define MDGPUD_CUDA_ERROR_NOT_FOUND			500
#define MDGPUD_CUDA_ERROR_NOT_READY			600
#define MDGPUD_CUDA_ERROR_ILLEGAL_ADDRESS		700
#define MDGPUD_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES	701
#define MDGPUD_CUDA_ERROR_LAUNCH_TIMEOUT		702
#define MDGPUD_CUDA_ERROR_CONTEXT_IS_DESTROYED		709
#define MDGPUD_CUDA_ERROR_ASSERT			710
#define MDGPUD_CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED 712
#define MDGPUD_CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED	713
#define MDGPUD_CUDA_ERROR_HARDWARE_STACK_ERROR		714
#define MDGPUD_CUDA_ERROR_ILLEGAL_INSTRUCTION		715
#define MDGPUD_CUDA_ERROR_MISALIGNED_ADDRESS		716
#define MDGPUD_CUDA_ERROR_INVALID_ADDRESS_SPACE		717
#define MDGPUD_CUDA_ERROR_INVALID_PC			718
#define MDGPUD_CUDA_ERROR_LAUNCH_FAILED			719
#define MDGPUD_CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE	720
#define MDGPUD_CUDA_ERROR_TENSOR_MEMORY_LEAK		721
#define MDGPUD_CUDA_ERROR_NOT_PERMITTED			800
#define MDGPUD_CUDA_ERROR_NOT_SUPPORTED			801
#define MDGPUD_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH	803
#define MDGPUD_CUDA_ERROR_UNKNOWN			999

#define MDGPUD_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT	16
#define MDGPUD_CU_MEMHOSTREGISTER_PORTABLE		0x01
#define MDGPUD_CU_MEMHOSTREGISTER_DEVICEMAP		0x02
#define MDGPUD_CU_MEMHOSTREGISTER_READ_ONLY		0x08
#define MDGPUD_CU_EVENT_DEFAULT				0x0
#define MDGPUD_CU_EVENT_BLOCKING_SYNC			0x1
#define MDGPUD_CU_EVENT_DISABLE_TIMING			0x2
#define MDGPUD_CU_STREAM_NON_BLOCKING			0x1
#define MDGPUD_CU_JIT_INFO_LOG_BUFFER			3
#define MDGPUD_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES	4
#define MDGPUD_CU_JIT_ERROR_LOG_BUFFER			5
#define MDGPUD_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES	6
/* JIT options a link passes on (ABI 1.7, worker/link.c). */
#define MDGPUD_CU_JIT_MAX_REGISTERS			0
#define MDGPUD_CU_JIT_OPTIMIZATION_LEVEL		7
#define MDGPUD_CU_JIT_TARGET				9
#define MDGPUD_CU_JIT_FALLBACK_STRATEGY			10
#define MDGPUD_CU_JIT_GENERATE_DEBUG_INFO		11
#define MDGPUD_CU_JIT_LOG_VERBOSE			12
#define MDGPUD_CU_JIT_GENERATE_LINE_INFO		13
#define MDGPUD_CU_JIT_CACHE_MODE			14
#define MDGPUD_CU_JIT_INPUT_CUBIN			0
#define MDGPUD_CU_JIT_INPUT_PTX				1
#define MDGPUD_CU_JIT_INPUT_FATBINARY			2
#define MDGPUD_CU_JIT_INPUT_OBJECT			3
#define MDGPUD_CU_JIT_INPUT_LIBRARY			4
#define MDGPUD_CU_LAUNCH_PARAM_END_AS_INT		0x00
#define MDGPUD_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT	0x01
#define MDGPUD_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT	0x02

/*
 * Streams and launch attributes (ABI 1.2).  CU_STREAM_LEGACY is a pointer
 * constant in cuda.h, which a static assertion cannot compare:
 * tests/test_cuda_api.c checks it against mdgpud_cuda_abi_stream_legacy().
 */
#define MDGPUD_CU_STREAM_DEFAULT			0x0
#define MDGPUD_CU_STREAM_LEGACY				((mdgpud_cu_stream)0x1)
#define MDGPUD_CU_LAUNCH_ATTRIBUTE_COOPERATIVE		2
#define MDGPUD_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION	4

/* CUlaunchAttribute's layout (cuda_abi_check.c proves it equal). */
struct mdgpud_cu_launch_attr {
	unsigned int id;		/* CUlaunchAttributeID */
	char pad[4];
	union {
		char pad[64];
		unsigned long long align;
		int cooperative;
		struct { unsigned int x, y, z; } cluster_dim;
	} value;
};

/* CUlaunchConfig's layout (cuda_abi_check.c proves it equal); passed to
 * cuLaunchKernelEx as the driver's struct CUlaunchConfig_st. */
struct mdgpud_cu_launch_config {
	unsigned int grid_x, grid_y, grid_z;
	unsigned int block_x, block_y, block_z;
	unsigned int shared_bytes;
	mdgpud_cu_stream stream;
	struct mdgpud_cu_launch_attr *attrs;
	unsigned int num_attrs;
};

/*
 * X(member, cuda.h name, symbol resolved, return type, parameter list).
 * Every function returns CUresult.
 */
#define MDGPUD_CU_FUNCS(X)						\
	X(init, cuInit, "cuInit", (unsigned int flags))			\
	X(driver_get_version, cuDriverGetVersion, "cuDriverGetVersion",	\
	  (int *version))							\
	X(get_error_name, cuGetErrorName, "cuGetErrorName",		\
	  (mdgpud_cu_result err, const char **name))			\
	X(get_error_string, cuGetErrorString, "cuGetErrorString",	\
	  (mdgpud_cu_result err, const char **str))			\
	X(device_get_count, cuDeviceGetCount, "cuDeviceGetCount",	\
	  (int *count))							\
	X(device_get, cuDeviceGet, "cuDeviceGet",			\
	  (mdgpud_cu_device *dev, int ordinal))				\
	X(device_get_name, cuDeviceGetName, "cuDeviceGetName",		\
	  (char *name, int len, mdgpud_cu_device dev))			\
	X(device_get_attribute, cuDeviceGetAttribute,			\
	  "cuDeviceGetAttribute",						\
	  (int *value, mdgpud_cu_device_attribute attr,			\
	   mdgpud_cu_device dev))						\
	X(device_get_pci_bus_id, cuDeviceGetPCIBusId,			\
	  "cuDeviceGetPCIBusId", (char *bus_id, int len,		\
				  mdgpud_cu_device dev))		\
	X(device_get_by_pci_bus_id, cuDeviceGetByPCIBusId,		\
	  "cuDeviceGetByPCIBusId", (mdgpud_cu_device *dev,		\
				    const char *bus_id))		\
	X(device_get_uuid, cuDeviceGetUuid, "cuDeviceGetUuid_v2",	\
	  (struct CUuuid_st *uuid, mdgpud_cu_device dev))		\
	X(primary_ctx_retain, cuDevicePrimaryCtxRetain,			\
	  "cuDevicePrimaryCtxRetain",					\
	  (mdgpud_cu_context *ctx, mdgpud_cu_device dev))		\
	X(primary_ctx_release, cuDevicePrimaryCtxRelease,		\
	  "cuDevicePrimaryCtxRelease_v2", (mdgpud_cu_device dev))	\
	X(ctx_set_current, cuCtxSetCurrent, "cuCtxSetCurrent",		\
	  (mdgpud_cu_context ctx))					\
	X(ctx_synchronize, cuCtxSynchronize, "cuCtxSynchronize", (void)) \
	X(mem_get_info, cuMemGetInfo, "cuMemGetInfo_v2",		\
	  (size_t *free_bytes, size_t *total_bytes))			\
	X(mem_alloc, cuMemAlloc, "cuMemAlloc_v2",			\
	  (mdgpud_cu_deviceptr *dptr, size_t bytes))			\
	X(mem_free, cuMemFree, "cuMemFree_v2", (mdgpud_cu_deviceptr dptr)) \
	X(memset_d8_async, cuMemsetD8Async, "cuMemsetD8Async",		\
	  (mdgpud_cu_deviceptr dst, unsigned char value, size_t n,	\
	   mdgpud_cu_stream stream))					\
	X(memcpy_htod_async, cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2",	\
	  (mdgpud_cu_deviceptr dst, const void *src, size_t bytes,	\
	   mdgpud_cu_stream stream))					\
	X(memcpy_dtoh_async, cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2",	\
	  (void *dst, mdgpud_cu_deviceptr src, size_t bytes,		\
	   mdgpud_cu_stream stream))					\
	X(memcpy_dtod_async, cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2",	\
	  (mdgpud_cu_deviceptr dst, mdgpud_cu_deviceptr src, size_t bytes, \
	   mdgpud_cu_stream stream))					\
	X(mem_host_register, cuMemHostRegister, "cuMemHostRegister_v2",	\
	  (void *p, size_t bytes, unsigned int flags))			\
	X(mem_host_unregister, cuMemHostUnregister, "cuMemHostUnregister", \
	  (void *p))							\
	X(module_load_data_ex, cuModuleLoadDataEx, "cuModuleLoadDataEx", \
	  (mdgpud_cu_module *module, const void *image,			\
	   unsigned int num_options, mdgpud_cu_jit_option *options,	\
	   void **option_values))					\
	X(module_unload, cuModuleUnload, "cuModuleUnload",		\
	  (mdgpud_cu_module module))					\
	X(module_get_function, cuModuleGetFunction, "cuModuleGetFunction", \
	  (mdgpud_cu_function *func, mdgpud_cu_module module,		\
	   const char *name))						\
	X(launch_kernel, cuLaunchKernel, "cuLaunchKernel",		\
	  (mdgpud_cu_function f, unsigned int gx, unsigned int gy,	\
	   unsigned int gz, unsigned int bx, unsigned int by,		\
	   unsigned int bz, unsigned int shared_bytes,			\
	   mdgpud_cu_stream stream, void **kernel_params, void **extra)) \
	X(event_create, cuEventCreate, "cuEventCreate",			\
	  (mdgpud_cu_event *event, unsigned int flags))			\
	X(event_record, cuEventRecord, "cuEventRecord",			\
	  (mdgpud_cu_event event, mdgpud_cu_stream stream))		\
	X(event_synchronize, cuEventSynchronize, "cuEventSynchronize",	\
	  (mdgpud_cu_event event))					\
	X(event_elapsed_time, cuEventElapsedTime, "cuEventElapsedTime_v2", \
	  (float *ms, mdgpud_cu_event start, mdgpud_cu_event end))	\
	X(event_destroy, cuEventDestroy, "cuEventDestroy_v2",		\
	  (mdgpud_cu_event event))					\
	X(stream_create, cuStreamCreate, "cuStreamCreate",		\
	  (mdgpud_cu_stream *stream, unsigned int flags))		\
	X(stream_destroy, cuStreamDestroy, "cuStreamDestroy_v2",	\
	  (mdgpud_cu_stream stream))					\
	X(stream_synchronize, cuStreamSynchronize, "cuStreamSynchronize", \
	  (mdgpud_cu_stream stream))					\
	X(stream_query, cuStreamQuery, "cuStreamQuery",			\
	  (mdgpud_cu_stream stream))					\
	MDGPUD_CU_INFO_FUNCS(X)						\
	MDGPUD_CU_FUNCS_STREAMS(X)					\
	MDGPUD_CU_FUNCS_LINK(X)

/* ABI 1.7: the driver's linker (worker/link.c). */
#define MDGPUD_CU_FUNCS_LINK(X)						\
	X(link_create, cuLinkCreate, "cuLinkCreate_v2",			\
	  (unsigned int num_options, mdgpud_cu_jit_option *options,	\
	   void **option_values, mdgpud_cu_link_state *state))		\
	X(link_add_data, cuLinkAddData, "cuLinkAddData_v2",		\
	  (mdgpud_cu_link_state state, mdgpud_cu_jit_input_type type,	\
	   void *data, size_t size, const char *name,			\
	   unsigned int num_options, mdgpud_cu_jit_option *options,	\
	   void **option_values))					\
	X(link_complete, cuLinkComplete, "cuLinkComplete",		\
	  (mdgpud_cu_link_state state, void **cubin, size_t *size))	\
	X(link_destroy, cuLinkDestroy, "cuLinkDestroy",			\
	  (mdgpud_cu_link_state state))

/* ABI 1.2 introspection (worker/info.c). */
#define MDGPUD_CU_INFO_FUNCS(X)						\
	X(func_get_attribute, cuFuncGetAttribute, "cuFuncGetAttribute",	\
	  (int *value, mdgpud_cu_function_attribute attr,		\
	   mdgpud_cu_function func))					\
	X(func_set_attribute, cuFuncSetAttribute, "cuFuncSetAttribute",	\
	  (mdgpud_cu_function func, mdgpud_cu_function_attribute attr,	\
	   int value))							\
	X(func_set_cache_config, cuFuncSetCacheConfig,			\
	  "cuFuncSetCacheConfig",					\
	  (mdgpud_cu_function func, mdgpud_cu_func_cache config))	\
	X(module_get_global, cuModuleGetGlobal, "cuModuleGetGlobal_v2",	\
	  (mdgpud_cu_deviceptr *dptr, size_t *bytes,			\
	   mdgpud_cu_module module, const char *name))			\
	X(ctx_get_limit, cuCtxGetLimit, "cuCtxGetLimit",		\
	  (size_t *value, mdgpud_cu_limit limit))			\
	X(ctx_set_limit, cuCtxSetLimit, "cuCtxSetLimit",		\
	  (mdgpud_cu_limit limit, size_t value))			\
	X(occupancy_active_blocks,					\
	  cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,		\
	  "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",	\
	  (int *blocks, mdgpud_cu_function func, int block_size,	\
	   size_t dyn_smem, unsigned int flags))			\
	X(occupancy_dyn_smem, cuOccupancyAvailableDynamicSMemPerBlock,	\
	  "cuOccupancyAvailableDynamicSMemPerBlock",			\
	  (size_t *dyn_smem, mdgpud_cu_function func, int num_blocks,	\
	   int block_size))						\
	X(mem_host_get_device_pointer, cuMemHostGetDevicePointer,	\
	  "cuMemHostGetDevicePointer_v2",				\
	  (mdgpud_cu_deviceptr *dptr, void *p, unsigned int flags))

/*
 * Entry points a driver may lack (newer than the oldest driver mdgpud
 * runs on): resolved when present, NULL otherwise, and the request that
 * needs one answers -EOPNOTSUPP.  cuFuncGetParamInfo,
 * cuModuleGetFunctionCount and cuModuleEnumerateFunctions came with CUDA
 * 12.4, cuFuncGetName with 12.3; the two cluster occupancy questions
 * (cuOccupancyMaxActiveClusters, cuOccupancyMaxPotentialClusterSize)
 * with 11.7, and so did the _v2 stream memory operations (ABI 1.10,
 * worker/requests.c; cuda.h's cuuint32_t and cuuint64_t are uint32_t
 * and uint64_t).
 */
#define MDGPUD_CU_OPT_FUNCS(X)						\
	X(stream_write_value32, cuStreamWriteValue32,			\
	  "cuStreamWriteValue32_v2",					\
	  (mdgpud_cu_stream stream, mdgpud_cu_deviceptr addr,		\
	   uint32_t value, unsigned int flags))				\
	X(stream_write_value64, cuStreamWriteValue64,			\
	  "cuStreamWriteValue64_v2",					\
	  (mdgpud_cu_stream stream, mdgpud_cu_deviceptr addr,		\
	   uint64_t value, unsigned int flags))				\
	X(stream_wait_value32, cuStreamWaitValue32,			\
	  "cuStreamWaitValue32_v2",					\
	  (mdgpud_cu_stream stream, mdgpud_cu_deviceptr addr,		\
	   uint32_t value, unsigned int flags))				\
	X(stream_wait_value64, cuStreamWaitValue64,			\
	  "cuStreamWaitValue64_v2",					\
	  (mdgpud_cu_stream stream, mdgpud_cu_deviceptr addr,		\
	   uint64_t value, unsigned int flags))				\
	X(func_get_param_info, cuFuncGetParamInfo, "cuFuncGetParamInfo", \
	  (mdgpud_cu_function func, size_t index, size_t *offset,	\
	   size_t *size))						\
	X(occupancy_active_clusters, cuOccupancyMaxActiveClusters,	\
	  "cuOccupancyMaxActiveClusters",				\
	  (int *clusters, mdgpud_cu_function func,			\
	   const struct CUlaunchConfig_st *config))			\
	X(occupancy_cluster_size, cuOccupancyMaxPotentialClusterSize,	\
	  "cuOccupancyMaxPotentialClusterSize",				\
	  (int *size, mdgpud_cu_function func,				\
	   const struct CUlaunchConfig_st *config))			\
	X(module_get_function_count, cuModuleGetFunctionCount,		\
	  "cuModuleGetFunctionCount",					\
	  (unsigned int *count, mdgpud_cu_module module))		\
	X(module_enumerate_functions, cuModuleEnumerateFunctions,	\
	  "cuModuleEnumerateFunctions",					\
	  (mdgpud_cu_function *functions, unsigned int num_functions,	\
	   mdgpud_cu_module module))					\
	X(func_get_name, cuFuncGetName, "cuFuncGetName",		\
	  (const char **name, mdgpud_cu_function func))

/* ABI 1.2: streams, events, 16/32-bit memsets, extended launches. */
#define MDGPUD_CU_FUNCS_STREAMS(X)					\
	X(stream_create_with_priority, cuStreamCreateWithPriority,	\
	  "cuStreamCreateWithPriority",					\
	  (mdgpud_cu_stream *stream, unsigned int flags, int priority))	\
	X(stream_wait_event, cuStreamWaitEvent, "cuStreamWaitEvent",	\
	  (mdgpud_cu_stream stream, mdgpud_cu_event event,		\
	   unsigned int flags))						\
	X(event_query, cuEventQuery, "cuEventQuery",			\
	  (mdgpud_cu_event event))					\
	X(ctx_get_stream_priority_range, cuCtxGetStreamPriorityRange,	\
	  "cuCtxGetStreamPriorityRange", (int *least, int *greatest))	\
	X(memset_d16_async, cuMemsetD16Async, "cuMemsetD16Async",	\
	  (mdgpud_cu_deviceptr dst, unsigned short value, size_t n,	\
	   mdgpud_cu_stream stream))					\
	X(memset_d32_async, cuMemsetD32Async, "cuMemsetD32Async",	\
	  (mdgpud_cu_deviceptr dst, unsigned int value, size_t n,	\
	   mdgpud_cu_stream stream))					\
	X(launch_kernel_ex, cuLaunchKernelEx, "cuLaunchKernelEx",	\
	  (const struct CUlaunchConfig_st *config, mdgpud_cu_function f, \
	   void **kernel_params, void **extra))

#define MDGPUD_CU_PFN_TYPEDEF(member, cuname, sym, params)		\
	typedef mdgpud_cu_result (*mdgpud_cu_pfn_##member) params;
MDGPUD_CU_FUNCS(MDGPUD_CU_PFN_TYPEDEF)
MDGPUD_CU_OPT_FUNCS(MDGPUD_CU_PFN_TYPEDEF)
#undef MDGPUD_CU_PFN_TYPEDEF

/* The resolved driver entry points. */
struct mdgpud_cuda_api {
	void *dl;			/* dlopen() handle */
#define MDGPUD_CU_MEMBER(member, cuname, sym, params)			\
	mdgpud_cu_pfn_##member member;
	MDGPUD_CU_FUNCS(MDGPUD_CU_MEMBER)
	MDGPUD_CU_OPT_FUNCS(MDGPUD_CU_MEMBER)	/* NULL when absent */
#undef MDGPUD_CU_MEMBER
};

/*
 * dlopen(lib, or "libcuda.so.1" when NULL) and resolve every entry point.
 * 0, or -ENOENT (library absent) / -ENOSYS (symbol missing) with a
 * human-readable reason in why[why_len].
 */
int mdgpud_cuda_api_load(struct mdgpud_cuda_api *api, const char *lib,
			 char *why, size_t why_len);
void mdgpud_cuda_api_unload(struct mdgpud_cuda_api *api);

/*
 * The one mapping from CUresult to a negative errno (0 for success).
 * Documentation/cuda-backend.md has the table.
 */
int mdgpud_cuda_errno(mdgpud_cu_result res);

/*
 * True for errors after which the CUDA context is unusable (sticky kernel
 * faults): the worker reports them once, then exits.
 */
int mdgpud_cuda_error_is_sticky(mdgpud_cu_result res);

/* Number of resolved symbols and their names, for tests. */
size_t mdgpud_cuda_api_symbol_count(void);
const char *mdgpud_cuda_api_symbol_name(size_t i);

/*
 * 1 when cuda_abi_check.c was compiled against a real cuda.h, then
 * *mapped_name receives what cuda.h maps the i-th function's name to
 * (e.g. "cuMemAlloc_v2"); 0 when no cuda.h was found at build time.
 */
int mdgpud_cuda_abi_mapped_name(size_t i, const char **mapped_name);
/* 1 and cuda.h's CU_STREAM_LEGACY in *value when checked against a real
 * cuda.h, else 0. */
int mdgpud_cuda_abi_stream_legacy(unsigned long *value);

#endif /* MDGPUD_CUDA_API_H */
