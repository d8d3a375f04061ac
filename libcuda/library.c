// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: libraries and kernels (cuLibrary*, cuKernel*), which the CUDA
 * 12+ runtime uses for every program's code.
 *
 * In CUDA a library is context-independent: it is loaded into each
 * context that uses it, and a CUkernel resolves to one CUfunction per
 * context.  Here every context is over the one GPU context of the vGPU,
 * so:
 *  - a library is at most one module of the vGPU, owned by no context:
 *    destroying or resetting a context leaves it; only cuLibraryUnload
 *    unloads it;
 *  - a CUkernel is that module's function, and cuKernelGetFunction gives
 *    the same handle in every context; a CUkernel launches as a
 *    CUfunction (cuLaunchKernel and friends take either);
 *  - cuLibraryGetModule gives the library's module in every context; it
 *    cannot be unloaded with cuModuleUnload;
 *  - library options: CU_LIBRARY_BINARY_IS_PRESERVED is a hint (the image
 *    is copied anyway); CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE
 *    is only used by cuLibraryGetUnifiedFunction and managed variables,
 *    which are not supported, so it is accepted and ignored.
 *
 * Lazy loading (CU_MODULE_LAZY_LOADING, the default, as in CUDA since
 * 12.2): cuLibraryLoad* checks the image (kind and size, image.c) and
 * keeps a private copy; the daemon sees nothing.  The copy is loaded as
 * the library's module by the first call that needs loaded code:
 * cuLibraryGetKernel, cuLibraryGetModule, cuLibraryGetGlobal,
 * cuLibraryGetKernelCount, cuLibraryEnumerateKernels.  Every other call
 * on a kernel (cuKernel*, launches, cuFunc*, cuOccupancy*) has a
 * CUkernel, which only cuLibraryGetKernel and cuLibraryEnumerateKernels
 * give, so its library is loaded.  cuLibraryGetKernel loads rather than
 * hand out an unresolved kernel because its answer must be true: a name
 * the image lacks is CUDA_ERROR_NOT_FOUND there, as NVIDIA's driver
 * answers (programs probe for kernels that way).  It costs no laziness
 * with NVIDIA's runtime: told the mode is lazy, the runtime itself calls
 * cuLibraryLoadData for a fatbin only when one of its kernels or
 * variables is first used, and cuLibraryGetKernel only for that kernel,
 * just before its launch (measured, Documentation/libcuda.md).
 *
 * Loads run under mdgpu_cu.lock like every call, so concurrent first uses
 * load once.  A failed load keeps nothing: the library stays unloaded and
 * every later use tries again and answers its own result (a transient
 * failure, out of memory, must not become permanent; an image the host
 * driver refuses fails the same way each time).  The copy is freed once
 * loaded; a library never used is freed by cuLibraryUnload without the
 * daemon.
 *
 * CUDA_MODULE_LOADING=EAGER (read once, at the first call that needs the
 * mode): cuLibraryLoad* loads at once and fails if the load does.
 * Modules (cuModuleLoad*) are always loaded at once, which lazy loading
 * allows.
 *
 * Enumerating a library's kernels (cuLibraryGetKernelCount,
 * cuLibraryEnumerateKernels) needs the list of its module's kernels,
 * which the daemon reports (MODULE_FUNCS, ABI 1.5) for a loaded module:
 * both calls load the library, like cuLibraryGetKernel, and the kernels
 * are the ones cuLibraryGetKernel gives for their names.
 *
 * The live libraries are mdgpu_cu_libs, under mdgpu_cu.lock.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "code.h"

struct CUlib_st {
	CUmodule mod;			/* NULL until loaded */
	void *image;			/* the copy to load, NULL once loaded */
	size_t size;
};

static struct mdgpu_cu_set mdgpu_cu_libs;

/* 0 until read; then a CUmoduleLoadingMode. */
static CUmoduleLoadingMode mdgpu_cu_mode;

CUmoduleLoadingMode mdgpu_cu_loading_mode(void)
{
	const char *v;

	if (!mdgpu_cu_mode) {
		v = getenv("CUDA_MODULE_LOADING");
		mdgpu_cu_mode = v && !strcmp(v, "EAGER") ?
				CU_MODULE_EAGER_LOADING :
				CU_MODULE_LAZY_LOADING;
	}
	return mdgpu_cu_mode;
}

/*
 * Both options are hints whose values mdgpu does not read (the image is
 * always copied), so values may be NULL: cuBLASLt 13 loads its cubins with
 * one option, CU_LIBRARY_BINARY_IS_PRESERVED, and no values array, which
 * the real driver accepts (measured on driver 580).  That option names the
 * caller's buffer, so with a file (no buffer) it is invalid, as cuda.h
 * says.
 */
static CUresult mdgpu_cu_lib_options(CUlibraryOption *options, unsigned n,
				     bool from_file)
{
	if (n && !options)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < n; i++) {
		switch (options[i]) {
		case CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE:
			break;
		case CU_LIBRARY_BINARY_IS_PRESERVED:
			if (from_file)
				return CUDA_ERROR_INVALID_VALUE;
			break;
		default:
			mdgpu_cu_log("library option %d is not known",
				     (int)options[i]);
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return CUDA_SUCCESS;
}

/* The library's module, its image loaded by the first call that needs it
 * (`who`, in the log). */
static CUresult mdgpu_cu_lib_module(CUlibrary lib, const char *who)
{
	CUresult r;

	if (lib->mod)
		return CUDA_SUCCESS;
	mdgpu_cu_log("%s: loading library %p (%zu bytes)", who, (void *)lib,
		     lib->size);
	r = mdgpu_cu_module_new(who, NULL, lib->image, &lib->mod);
	if (r)
		return r;
	lib->mod->lib = lib;
	free(lib->image);
	lib->image = NULL;
	return CUDA_SUCCESS;
}

static void mdgpu_cu_lib_free(CUlibrary lib)
{
	mdgpu_cu_set_del(&mdgpu_cu_libs, lib);
	free(lib->image);
	free(lib);
}

static CUresult mdgpu_cu_lib_load(const char *who, CUlibrary *library,
				  const void *code, CUjit_option *jitOptions,
				  void **jitOptionsValues,
				  unsigned numJitOptions)
{
	struct CUlib_st *lib;
	const void *start;
	uint32_t kind;
	size_t size;
	CUresult r;

	if (!library || !code)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_jit_options(numJitOptions, jitOptions, jitOptionsValues);
	if (r)
		return r;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_image(who, code, &start, &size, &kind);
	if (r)
		goto out;
	lib = calloc(1, sizeof(*lib));
	if (lib)
		lib->image = malloc(size);
	if (!lib || !lib->image || mdgpu_cu_set_add(&mdgpu_cu_libs, lib)) {
		if (lib)
			free(lib->image);
		free(lib);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	memcpy(lib->image, start, size);
	lib->size = size;
	if (mdgpu_cu_loading_mode() == CU_MODULE_EAGER_LOADING) {
		r = mdgpu_cu_lib_module(lib, who);
		if (r) {
			mdgpu_cu_lib_free(lib);
			goto out;
		}
	}
	*library = lib;
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code,
				   CUjit_option *jitOptions,
				   void **jitOptionsValues,
				   unsigned int numJitOptions,
				   CUlibraryOption *libraryOptions,
				   void **libraryOptionValues,
				   unsigned int numLibraryOptions)
{
	CUresult r;

	(void)libraryOptionValues;	/* no option mdgpu reads has a value */
	r = mdgpu_cu_lib_options(libraryOptions, numLibraryOptions, false);
	if (r)
		return r;
	return mdgpu_cu_lib_load("cuLibraryLoadData", library, code,
				 jitOptions, jitOptionsValues, numJitOptions);
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library,
				       const char *fileName,
				       CUjit_option *jitOptions,
				       void **jitOptionsValues,
				       unsigned int numJitOptions,
				       CUlibraryOption *libraryOptions,
				       void **libraryOptionValues,
				       unsigned int numLibraryOptions)
{
	const void *start;
	uint32_t kind;
	size_t len, size;
	CUresult r;
	char *buf;

	(void)libraryOptionValues;	/* no option mdgpu reads has a value */
	if (!library || !fileName)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_lib_options(libraryOptions, numLibraryOptions, true);
	if (r)
		return r;
	r = mdgpu_cu_read_file("cuLibraryLoadFromFile", fileName, &buf, &len);
	if (r)
		return r;
	r = mdgpu_cu_image("cuLibraryLoadFromFile", buf, &start, &size,
			   &kind);
	if (!r && (start != buf || size > len + (kind == MDGPU_MODULE_PTX)))
		r = CUDA_ERROR_INVALID_IMAGE;
	if (!r)
		r = mdgpu_cu_lib_load("cuLibraryLoadFromFile", library, buf,
				      jitOptions, jitOptionsValues,
				      numJitOptions);
	free(buf);
	return r;
}

/* Entry of the calls on a library: the lock held and lib live. */
static CUresult mdgpu_cu_enter_lib(CUlibrary lib)
{
	return mdgpu_cu_enter_obj(&mdgpu_cu_libs, lib, NULL);
}

/* A library never loaded goes without the daemon. */
CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
	CUresult r = mdgpu_cu_enter_lib(library);

	if (r)
		return r;
	if (library->mod)
		r = mdgpu_cu_module_unload(library->mod);
	mdgpu_cu_lib_free(library);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library,
				    const char *name)
{
	CUfunction f;
	CUresult r;

	if (!pKernel || !mdgpu_cu_name_ok(name))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_lib(library);
	if (r)
		return r;
	r = mdgpu_cu_lib_module(library, "cuLibraryGetKernel");
	if (!r)
		r = mdgpu_cu_function(library->mod, name, &f);
	if (!r)
		*pKernel = (CUkernel)f;
	mdgpu_cu_leave();
	return r;
}

/*
 * cuda.h (CUDA 13.0) documents for both: count/kernels NULL is
 * CUDA_ERROR_INVALID_VALUE, an unknown library CUDA_ERROR_INVALID_HANDLE,
 * and "a maximum number of numKernels kernel handles" (fewer slots than
 * kernels: the first numKernels are written); neither needs a context.
 */
CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
	CUresult r;

	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_lib(lib);
	if (r)
		return r;
	r = mdgpu_cu_lib_module(lib, "cuLibraryGetKernelCount");
	if (!r)
		r = mdgpu_cu_module_funcs(lib->mod, NULL, 0, count);
	mdgpu_cu_leave();
	return r;
}

/* A CUkernel is its module's CUfunction (above), converted one by one:
 * the caller's array holds CUkernels. */
CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel *kernels,
					   unsigned int numKernels,
					   CUlibrary lib)
{
	CUfunction *fns = NULL;
	unsigned count = 0, n;
	CUresult r;

	if (!kernels)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_lib(lib);
	if (r)
		return r;
	r = mdgpu_cu_lib_module(lib, "cuLibraryEnumerateKernels");
	if (!r)
		r = mdgpu_cu_module_funcs(lib->mod, NULL, 0, &count);
	n = count < numKernels ? count : numKernels;
	if (!r && n) {
		fns = calloc(n, sizeof(*fns));
		r = fns ? mdgpu_cu_module_funcs(lib->mod, fns, n, &count) :
			  CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (unsigned i = 0; !r && i < n; i++)
		kernels[i] = (CUkernel)fns[i];
	free(fns);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
	CUresult r;

	if (!pMod)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_lib(library);
	if (r)
		return r;
	if (!mdgpu_cu_current())
		r = CUDA_ERROR_INVALID_CONTEXT;
	else
		r = mdgpu_cu_lib_module(library, "cuLibraryGetModule");
	if (!r)
		*pMod = library->mod;
	mdgpu_cu_leave();
	return r;
}

/* The range is recorded under the current context, if any. */
CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes,
				    CUlibrary library, const char *name)
{
	CUresult r;

	if (!mdgpu_cu_name_ok(name))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_lib(library);
	if (r)
		return r;
	r = mdgpu_cu_lib_module(library, "cuLibraryGetGlobal");
	if (!r)
		r = mdgpu_cu_global(library->mod, mdgpu_cu_current(), name,
				    dptr, bytes);
	mdgpu_cu_leave();
	return r;
}

static bool mdgpu_cu_kernel_live(CUkernel k)
{
	CUfunction f = (CUfunction)k;

	return mdgpu_cu_set_has(&mdgpu_cu.funcs, f) && f->mod->lib;
}

/* Entry of the calls on a kernel: the lock held and k live. */
static CUresult mdgpu_cu_enter_kernel(CUkernel k)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_kernel_live(k)) {
		mdgpu_cu_leave();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	CUresult r;

	if (!pFunc)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_kernel(kernel);
	if (r)
		return r;
	if (!mdgpu_cu_current())
		r = CUDA_ERROR_INVALID_CONTEXT;
	else
		*pFunc = (CUfunction)kernel;
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
	CUresult r;

	if (!pLib)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_kernel(kernel);
	if (r)
		return r;
	*pLib = ((CUfunction)kernel)->mod->lib;
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc)
{
	CUresult r;

	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_kernel(hfunc);
	if (r)
		return r;
	*name = ((CUfunction)hfunc)->name;
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

/* dev: the device whose context the attribute is of; there is one. */
CUresult CUDAAPI cuKernelGetAttribute(int *pi, CUfunction_attribute attrib,
				      CUkernel kernel, CUdevice dev)
{
	CUresult r;

	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_kernel(kernel);
	if (r)
		return r;
	r = dev != 0 ? CUDA_ERROR_INVALID_DEVICE :
	    mdgpu_cu_func_attr((CUfunction)kernel, (int)attrib, pi);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val,
				      CUkernel kernel, CUdevice dev)
{
	CUresult r = mdgpu_cu_enter_kernel(kernel);

	if (r)
		return r;
	r = dev != 0 ? CUDA_ERROR_INVALID_DEVICE :
	    mdgpu_cu_func_set_attr((CUfunction)kernel, (int)attrib, val);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config,
					CUdevice dev)
{
	CUresult r = mdgpu_cu_enter_kernel(kernel);

	if (r)
		return r;
	r = dev != 0 ? CUDA_ERROR_INVALID_DEVICE :
	    mdgpu_cu_func_cache((CUfunction)kernel, config);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex,
				      size_t *paramOffset, size_t *paramSize)
{
	CUresult r = mdgpu_cu_enter_kernel(kernel);

	if (r)
		return r;
	r = mdgpu_cu_param_info((CUfunction)kernel, paramIndex, paramOffset,
				paramSize);
	mdgpu_cu_leave();
	return r;
}
