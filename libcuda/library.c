// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: libraries and kernels (cuLibrary*, cuKernel*), which the CUDA
 * 12+ runtime uses for every program's code.
 *
 * In CUDA a library is context-independent: it is loaded into each
 * context that uses it, and a CUkernel resolves to one CUfunction per
 * context.  Here every context is over the one GPU context of the vGPU,
 * so:
 *  - a library is one module of the vGPU, loaded (eagerly) by
 *    cuLibraryLoad*, owned by no context: destroying or resetting a
 *    context leaves it; only cuLibraryUnload unloads it;
 *  - a CUkernel is that module's function, and cuKernelGetFunction gives
 *    the same handle in every context; a CUkernel launches as a
 *    CUfunction (cuLaunchKernel and friends take either);
 *  - cuLibraryGetModule gives the library's module in every context; it
 *    cannot be unloaded with cuModuleUnload;
 *  - library options: CU_LIBRARY_BINARY_IS_PRESERVED is a hint (the image
 *    is copied at load anyway); CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_
 *    DATA_TABLE is only used by cuLibraryGetUnifiedFunction and managed
 *    variables, which are not supported, so it is accepted and ignored.
 * Enumerating a library's kernels (cuLibraryGetKernelCount,
 * cuLibraryEnumerateKernels) needs the list of an image's kernels, which
 * the daemon does not report: not supported.
 *
 * The live libraries are mdgpu_cu_libs, under mdgpu_cu.lock.
 */
#include <stdlib.h>

#include "code.h"

static struct mdgpu_cu_set mdgpu_cu_libs;

static CUresult mdgpu_cu_lib_options(CUlibraryOption *options, void **values,
				     unsigned n)
{
	if (n && (!options || !values))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < n; i++) {
		switch (options[i]) {
		case CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE:
		case CU_LIBRARY_BINARY_IS_PRESERVED:
			break;
		default:
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return CUDA_SUCCESS;
}

static CUresult mdgpu_cu_lib_load(const char *who, CUlibrary *library,
				  const void *code, CUjit_option *jitOptions,
				  void **jitOptionsValues,
				  unsigned numJitOptions,
				  CUlibraryOption *libraryOptions,
				  void **libraryOptionValues,
				  unsigned numLibraryOptions)
{
	struct CUlib_st *lib;
	CUresult r;

	if (!library || !code)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_jit_options(numJitOptions, jitOptions, jitOptionsValues);
	if (!r)
		r = mdgpu_cu_lib_options(libraryOptions, libraryOptionValues,
					 numLibraryOptions);
	if (r)
		return r;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	lib = calloc(1, sizeof(*lib));
	if (!lib || mdgpu_cu_set_add(&mdgpu_cu_libs, lib)) {
		free(lib);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	r = mdgpu_cu_module_new(who, NULL, code, &lib->mod);
	if (r) {
		mdgpu_cu_set_del(&mdgpu_cu_libs, lib);
		free(lib);
		goto out;
	}
	lib->mod->lib = lib;
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
	return mdgpu_cu_lib_load("cuLibraryLoadData", library, code,
				 jitOptions, jitOptionsValues, numJitOptions,
				 libraryOptions, libraryOptionValues,
				 numLibraryOptions);
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

	if (!library || !fileName)
		return CUDA_ERROR_INVALID_VALUE;
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
				      numJitOptions, libraryOptions,
				      libraryOptionValues, numLibraryOptions);
	free(buf);
	return r;
}

/* Entry of the calls on a library: the lock held and lib live. */
static CUresult mdgpu_cu_enter_lib(CUlibrary lib)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu_libs, lib)) {
		mdgpu_cu_leave();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
	CUresult r = mdgpu_cu_enter_lib(library);

	if (r)
		return r;
	r = mdgpu_cu_module_unload(library->mod);
	mdgpu_cu_set_del(&mdgpu_cu_libs, library);
	free(library);
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
	r = mdgpu_cu_function(library->mod, name, &f);
	if (!r)
		*pKernel = (CUkernel)f;
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
	r = mdgpu_cu_global(library->mod, mdgpu_cu_current(), name, dptr,
			    bytes);
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
