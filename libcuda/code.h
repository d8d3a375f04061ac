/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libcuda: what the code files share (module.c, launch.c, library.c,
 * link.c, occupancy.c).  Every function here runs under mdgpu_cu.lock
 * unless it says otherwise; handles passed in are already found live.
 */
#ifndef MDGPU_CU_CODE_H
#define MDGPU_CU_CODE_H

#include "priv.h"

/*
 * A library (cuLibrary*, library.c): an image loaded as one module of the
 * vGPU by its first use (at once with CUDA_MODULE_LOADING=EAGER), owned
 * by no context.  Its kernels (CUkernel) are the functions of that
 * module (struct CUfunc_st).  The mode is read once, at the first call.
 */
CUmoduleLoadingMode mdgpu_cu_loading_mode(void);

/*
 * JIT options of cuModuleLoadDataEx, cuLinkCreate, cuLinkAdd*,
 * cuLibraryLoad*: the host driver's JIT takes none of them from here.
 * Output options are answered as nothing written (empty logs, zero wall
 * time); the others are hints and are ignored.  No lock needed.
 */
CUresult mdgpu_cu_jit_options(unsigned n, CUjit_option *options,
			      void **values);

/* A name the application passes (function, global): 1..MDGPU_NAME_MAX
 * bytes before its NUL.  No lock needed. */
bool mdgpu_cu_name_ok(const char *name);

/*
 * The bytes of an image to load: where they start (a fatbin wrapper
 * points elsewhere), how many and the module kind for the daemon.
 * CUDA_ERROR_INVALID_IMAGE or NOT_SUPPORTED (logged, with `who`).  No
 * lock needed.
 */
CUresult mdgpu_cu_image(const char *who, const void *image,
			const void **start, size_t *size, uint32_t *kind);

/* The whole of a file of at most MDGPU_MODULE_MAX bytes, NUL appended
 * (*len without it); free() it.  No lock needed. */
CUresult mdgpu_cu_read_file(const char *who, const char *path, char **buf,
			    size_t *len);

/* Loads the image at `image` into a new module of ctx (NULL: a library's
 * module). */
CUresult mdgpu_cu_module_new(const char *who, CUcontext ctx,
			     const void *image, CUmodule *out);
/* Waits for the vGPU's work, then unloads m with its functions. */
CUresult mdgpu_cu_module_unload(CUmodule m);
/* The function `name` of m (the same handle for the same name). */
CUresult mdgpu_cu_function(CUmodule m, const char *name, CUfunction *out);
/*
 * The kernels of m in the host driver's order (the daemon's MODULE_FUNCS,
 * asked once per module): *count of them, and the first min(max, *count)
 * into out[] as mdgpu_cu_function gives them (the same handles).  out may
 * be NULL when max is 0.
 */
CUresult mdgpu_cu_module_funcs(CUmodule m, CUfunction *out, unsigned max,
			       unsigned *count);
/* The global `name` of m; dptr, bytes may be NULL.  ctx: the context
 * its range is recorded under. */
CUresult mdgpu_cu_global(CUmodule m, CUcontext ctx, const char *name,
			 CUdeviceptr *dptr, size_t *bytes);

/* Function attributes and parameters from the daemon's FUNC_INFO. */
CUresult mdgpu_cu_func_attr(CUfunction f, int attrib, int *value);
CUresult mdgpu_cu_func_set_attr(CUfunction f, int attrib, int value);
CUresult mdgpu_cu_func_cache(CUfunction f, CUfunc_cache config);
CUresult mdgpu_cu_param_info(CUfunction f, size_t index, size_t *offset,
			     size_t *size);

/*
 * The launch attributes of a CUlaunchConfig: COOPERATIVE and
 * CLUSTER_DIMENSION into *flags and *cluster; those that cannot change
 * what a kernel computes are accepted and ignored (launch.c lists them);
 * any other is CUDA_ERROR_NOT_SUPPORTED (logged).  No lock needed.
 */
CUresult mdgpu_cu_launch_attrs(const CUlaunchAttribute *attrs, unsigned n,
			       uint32_t *flags, uint32_t *cluster);


#endif /* MDGPU_CU_CODE_H */
