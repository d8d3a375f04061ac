/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The CUDA driver-API entry points the native target of mdgpu-bench uses,
 * resolved with dlopen("libcuda.so.1") at run time: the benchmark never
 * links libcuda, so it builds and runs (to "SKIPPED: no GPU") anywhere.
 *
 * X(member, symbol, parameters): `symbol` is the name cuda.h maps the API
 * name to (cuMemAlloc -> cuMemAlloc_v2).  When cuda.h is present at build
 * time, cuda_dl.c checks every parameter list against its prototype.
 */
#ifndef BENCH_CUDA_DL_H
#define BENCH_CUDA_DL_H

#include <stddef.h>

typedef unsigned int bench_cu_result;		/* CUresult */
typedef int bench_cu_device;			/* CUdevice */
typedef unsigned long long bench_cu_deviceptr;	/* CUdeviceptr */
typedef struct CUctx_st *bench_cu_context;
typedef struct CUmod_st *bench_cu_module;
typedef struct CUfunc_st *bench_cu_function;
typedef struct CUstream_st *bench_cu_stream;
typedef struct CUevent_st *bench_cu_event;

#define BENCH_CUDA_SUCCESS			0
#define BENCH_CUDA_ERROR_NOT_READY		600
#define BENCH_CU_ATTR_MULTIPROCESSOR_COUNT	16
#define BENCH_CU_CTX_SCHED_SPIN			0x01
#define BENCH_CU_CTX_SCHED_BLOCKING_SYNC	0x04
#define BENCH_CU_STREAM_NON_BLOCKING		0x01
#define BENCH_CU_EVENT_DEFAULT			0x00
#define BENCH_CU_EVENT_BLOCKING_SYNC		0x01
#define BENCH_CU_EVENT_DISABLE_TIMING		0x02

#define BENCH_CU_FUNCS(X)						\
	X(init, cuInit, (unsigned int flags))				\
	X(get_error_name, cuGetErrorName,				\
	  (bench_cu_result err, const char **name))			\
	X(device_get_count, cuDeviceGetCount, (int *count))		\
	X(device_get, cuDeviceGet, (bench_cu_device *dev, int ordinal))	\
	X(device_get_name, cuDeviceGetName,				\
	  (char *name, int len, bench_cu_device dev))			\
	X(device_get_attribute, cuDeviceGetAttribute,			\
	  (int *value, unsigned int attr, bench_cu_device dev))		\
	X(primary_ctx_set_flags, cuDevicePrimaryCtxSetFlags_v2,		\
	  (bench_cu_device dev, unsigned int flags))			\
	X(primary_ctx_retain, cuDevicePrimaryCtxRetain,			\
	  (bench_cu_context *ctx, bench_cu_device dev))			\
	X(primary_ctx_release, cuDevicePrimaryCtxRelease_v2,		\
	  (bench_cu_device dev))					\
	X(ctx_set_current, cuCtxSetCurrent, (bench_cu_context ctx))	\
	X(stream_create, cuStreamCreate,				\
	  (bench_cu_stream *stream, unsigned int flags))		\
	X(stream_destroy, cuStreamDestroy_v2, (bench_cu_stream stream))	\
	X(stream_synchronize, cuStreamSynchronize,			\
	  (bench_cu_stream stream))					\
	X(module_load_data_ex, cuModuleLoadDataEx,			\
	  (bench_cu_module *module, const void *image,			\
	   unsigned int num_options, unsigned int *options,		\
	   void **option_values))					\
	X(module_get_function, cuModuleGetFunction,			\
	  (bench_cu_function *func, bench_cu_module module,		\
	   const char *name))						\
	X(module_unload, cuModuleUnload, (bench_cu_module module))	\
	X(launch_kernel, cuLaunchKernel,				\
	  (bench_cu_function f, unsigned int gx, unsigned int gy,	\
	   unsigned int gz, unsigned int bx, unsigned int by,		\
	   unsigned int bz, unsigned int shared_bytes,			\
	   bench_cu_stream stream, void **kernel_params, void **extra))	\
	X(mem_alloc, cuMemAlloc_v2, (bench_cu_deviceptr *dptr, size_t n))	\
	X(mem_free, cuMemFree_v2, (bench_cu_deviceptr dptr))		\
	X(mem_host_alloc, cuMemHostAlloc,				\
	  (void **p, size_t n, unsigned int flags))			\
	X(mem_free_host, cuMemFreeHost, (void *p))			\
	X(memcpy_htod_async, cuMemcpyHtoDAsync_v2,			\
	  (bench_cu_deviceptr dst, const void *src, size_t n,		\
	   bench_cu_stream stream))					\
	X(memcpy_dtoh_async, cuMemcpyDtoHAsync_v2,			\
	  (void *dst, bench_cu_deviceptr src, size_t n,			\
	   bench_cu_stream stream))					\
	X(event_create, cuEventCreate,					\
	  (bench_cu_event *event, unsigned int flags))			\
	X(event_record, cuEventRecord,					\
	  (bench_cu_event event, bench_cu_stream stream))		\
	X(event_synchronize, cuEventSynchronize, (bench_cu_event event))	\
	X(event_query, cuEventQuery, (bench_cu_event event))		\
	X(event_elapsed_time, cuEventElapsedTime_v2,			\
	  (float *ms, bench_cu_event start, bench_cu_event end))	\
	X(event_destroy, cuEventDestroy_v2, (bench_cu_event event))

#define BENCH_CU_PFN(member, sym, params)				\
	typedef bench_cu_result (*bench_cu_pfn_##member) params;
BENCH_CU_FUNCS(BENCH_CU_PFN)
#undef BENCH_CU_PFN

struct bench_cuda {
	void *dl;
#define BENCH_CU_MEMBER(member, sym, params) bench_cu_pfn_##member member;
	BENCH_CU_FUNCS(BENCH_CU_MEMBER)
#undef BENCH_CU_MEMBER
};

/*
 * dlopen libcuda.so.1 and resolve every entry point: 0, -ENOENT (no
 * library) or -ENOSYS (a symbol missing), with the reason in why.
 */
int bench_cuda_load(struct bench_cuda *cu, char *why, size_t why_len);
void bench_cuda_unload(struct bench_cuda *cu);
/* CUresult -> negative errno (0 for success), logging the driver's name. */
int bench_cuda_err(const struct bench_cuda *cu, bench_cu_result r,
		   const char *what);

#endif /* BENCH_CUDA_DL_H */
