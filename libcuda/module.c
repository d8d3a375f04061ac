// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: modules, functions, globals and function attributes.
 *
 * An image's kind and size come from the image (image.c).  PTX, ELF
 * cubins and fatbins are passed whole to the daemon, whose host driver
 * loads them (a fatbin as MDGPU_MODULE_CUBIN: the worker hands every
 * image to cuModuleLoadDataEx, which picks the fatbin's entry for the
 * GPU).  Loading is eager: a module's code is on the vGPU once the load
 * returns.
 *
 * A function's attributes and parameter layout are the host driver's
 * (FUNC_INFO, asked once at cuModuleGetFunction and again after a
 * cuFuncSetAttribute).  From a daemon without FUNC_INFO (it answers
 * -EOPNOTSUPP or -EINVAL) the layout of a PTX module's function is parsed
 * from its .entry line and its attributes are CUDA_ERROR_NOT_SUPPORTED.
 *
 * A module's kernels are listed by the daemon (MODULE_FUNCS, ABI 1.5,
 * once per module) and each is then looked up by name as
 * cuModuleGetFunction does, so an enumeration gives the same handles.
 * A daemon of an older minor cannot list them: CUDA_ERROR_NOT_SUPPORTED.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "code.h"

bool mdgpu_cu_name_ok(const char *name)
{
	size_t len;

	if (!name)
		return false;
	len = strnlen(name, MDGPU_NAME_MAX + 1);
	if (len > MDGPU_NAME_MAX)
		mdgpu_cu_log("name '%.64s...' longer than %u bytes",
			     name, MDGPU_NAME_MAX);
	return len && len <= MDGPU_NAME_MAX;
}

CUresult mdgpu_cu_jit_options(unsigned n, CUjit_option *options,
			      void **values)
{
	if (n && (!options || !values))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < n; i++) {
		switch (options[i]) {
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			values[i] = NULL;	/* bytes written: 0 */
			break;
		case CU_JIT_INFO_LOG_BUFFER:
		case CU_JIT_ERROR_LOG_BUFFER:
			/* An empty string if the buffer has room for one. */
			for (unsigned j = 0; j < n; j++) {
				CUjit_option sz = options[i] ==
					CU_JIT_INFO_LOG_BUFFER ?
					CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES :
					CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;

				if (options[j] == sz && values[j] && values[i])
					*(char *)values[i] = '\0';
			}
			break;
		case CU_JIT_WALL_TIME:
			memset(&values[i], 0, sizeof(float));
			break;
		default:
			break;
		}
	}
	return CUDA_SUCCESS;
}

CUresult mdgpu_cu_image(const char *who, const void *image,
			const void **start, size_t *size, uint32_t *kind)
{
	enum mdgpu_cu_image_kind k = 0;
	int ret;

	if (!image)
		return CUDA_ERROR_INVALID_VALUE;
	ret = mdgpu_cu_image_size(image, MDGPU_MODULE_DEVICE_MAX, &k, size);
	if (ret == -EOPNOTSUPP && k == MDGPU_CU_IMAGE_WRAPPER) {
		image = mdgpu_cu_fatbin_unwrap(image);
		if (!image) {
			mdgpu_cu_log("%s: a fatbin wrapper of an unknown "
				     "version", who);
			return CUDA_ERROR_NOT_SUPPORTED;
		}
		ret = mdgpu_cu_image_size(image, MDGPU_MODULE_DEVICE_MAX, &k,
					  size);
		if (!ret && k != MDGPU_CU_IMAGE_FATBIN)
			ret = -EINVAL;
	}
	if (ret == -E2BIG)
		mdgpu_cu_log("%s: image larger than %u bytes", who,
			     MDGPU_MODULE_DEVICE_MAX);
	if (ret)
		return CUDA_ERROR_INVALID_IMAGE;
	*start = image;
	*kind = k == MDGPU_CU_IMAGE_PTX ? MDGPU_MODULE_PTX : MDGPU_MODULE_CUBIN;
	return CUDA_SUCCESS;
}

CUresult mdgpu_cu_read_file(const char *who, const char *path, char **buf,
			    size_t *len)
{
	struct stat st;
	size_t done = 0;
	char *b;
	int fd;

	if (!path)
		return CUDA_ERROR_INVALID_VALUE;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_FILE_NOT_FOUND;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)MDGPU_MODULE_DEVICE_MAX) {
		mdgpu_cu_log("%s: %s: not a regular file of at most %u bytes",
			     who, path, MDGPU_MODULE_DEVICE_MAX);
		close(fd);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, b + done, (size_t)st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	if (done != (size_t)st.st_size) {
		free(b);
		return CUDA_ERROR_FILE_NOT_FOUND;
	}
	b[done] = '\0';
	*buf = b;
	*len = done;
	return CUDA_SUCCESS;
}

static void mdgpu_cu_func_drop(CUfunction f)
{
	mdgpu_cu_set_del(&mdgpu_cu.funcs, f);
	mdgpu_cu_layout_free(&f->layout);
	free(f->info);
	free(f->name);
	free(f);
}

static void mdgpu_cu_mod_drop(CUmodule m)
{
	for (size_t i = mdgpu_cu.funcs.n; i-- > 0;) {
		CUfunction f = mdgpu_cu.funcs.v[i];

		if (f->mod == m)
			mdgpu_cu_func_drop(f);
	}
	/* Its globals' ranges are the daemon's to free, with the module. */
	for (size_t i = 0; i < m->globals.n; i++)
		mdgpu_cu_alloc_forget(m->globals.v[i]);
	free(m->globals.v);
	mdgpu_module_unload(mdgpu_cu.g, m->module);
	mdgpu_cu_set_del(&mdgpu_cu.mods, m);
	free(m->kernels);
	free(m->ptx);
	free(m);
}

void mdgpu_cu_module_release(CUcontext ctx)
{
	for (size_t i = mdgpu_cu.mods.n; i-- > 0;) {
		CUmodule m = mdgpu_cu.mods.v[i];

		if (m->ctx == ctx && !m->lib)
			mdgpu_cu_mod_drop(m);
	}
}

CUresult mdgpu_cu_module_new(const char *who, CUcontext ctx,
			     const void *image, CUmodule *out)
{
	const void *start;
	uint32_t kind;
	size_t size;
	CUmodule m;
	CUresult r;
	int ret;

	r = mdgpu_cu_image(who, image, &start, &size, &kind);
	if (r)
		return r;
	m = calloc(1, sizeof(*m));
	if (!m || mdgpu_cu_set_add(&mdgpu_cu.mods, m)) {
		free(m);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	m->ctx = ctx;
	if (kind == MDGPU_MODULE_PTX) {
		/* Kept for the parameter layouts of its functions. */
		m->ptx = malloc(size);
		if (!m->ptx) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto fail;
		}
		memcpy(m->ptx, start, size);
		m->ptx_len = size - 1;
	}
	ret = mdgpu_module_load(mdgpu_cu.g, kind, start, size, &m->module);
	if (ret) {
		uint64_t code = mdgpu_last_code(mdgpu_cu.g);
		const char *name = NULL;

		/* What was sent, and the host driver's code if it refused
		 * it: a refused library is then told from a broken one. */
		if (code && code <= INT32_MAX)
			cuGetErrorName((CUresult)code, &name);
		if (name)
			mdgpu_cu_log("%s: the host driver refused the %s image "
				     "of %zu bytes: %s (%llu)", who,
				     kind == MDGPU_MODULE_PTX ? "PTX" :
				     "ELF or fatbin", size, name,
				     (unsigned long long)code);
		else
			mdgpu_cu_log("%s: %s; the image was %s, %zu bytes; "
				     "the host driver's code %llu", who,
				     mdgpu_last_error(mdgpu_cu.g),
				     kind == MDGPU_MODULE_PTX ? "PTX" :
				     "ELF or fatbin", size,
				     (unsigned long long)code);
		/* The host driver's own CUresult when it refused the
		 * image (mdgpu_cu_error), else a refused image. */
		r = ret == -EINVAL && !mdgpu_last_code(mdgpu_cu.g) ?
		    CUDA_ERROR_INVALID_IMAGE : mdgpu_cu_error(ret);
		goto fail;
	}
	*out = m;
	return CUDA_SUCCESS;
fail:
	mdgpu_cu_set_del(&mdgpu_cu.mods, m);
	free(m->ptx);
	free(m);
	return r;
}

CUresult mdgpu_cu_module_unload(CUmodule m)
{
	/* Queued launches may still use its code. */
	CUresult r = mdgpu_cu_error(mdgpu_synchronize(mdgpu_cu.g));

	mdgpu_cu_mod_drop(m);
	return r;
}

static CUresult mdgpu_cu_load(const char *who, CUmodule *module,
			      const void *image)
{
	CUcontext ctx;
	CUresult r;

	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	r = mdgpu_cu_module_new(who, ctx, image, module);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
	return mdgpu_cu_load("cuModuleLoadData", module, image);
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	return mdgpu_cu_load("cuModuleLoadFatBinary", module, fatCubin);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
				    unsigned int numOptions,
				    CUjit_option *options,
				    void **optionValues)
{
	CUresult r = mdgpu_cu_jit_options(numOptions, options, optionValues);

	if (r)
		return r;
	return mdgpu_cu_load("cuModuleLoadDataEx", module, image);
}

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
	const void *start;
	uint32_t kind;
	size_t len, size;
	CUresult r;
	char *buf;

	if (!module || !fname)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_read_file("cuModuleLoad", fname, &buf, &len);
	if (r)
		return r;
	/* The image must lie within the file (PTX: with the NUL appended). */
	r = mdgpu_cu_image("cuModuleLoad", buf, &start, &size, &kind);
	if (!r && (start != buf || size > len + (kind == MDGPU_MODULE_PTX)))
		r = CUDA_ERROR_INVALID_IMAGE;
	if (!r)
		r = mdgpu_cu_load("cuModuleLoad", module, buf);
	free(buf);
	return r;
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
	CUcontext ctx;
	CUresult r = mdgpu_cu_enter_ctx(&ctx);

	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.mods, hmod)) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else if (hmod->lib) {
		mdgpu_cu_log("cuModuleUnload: a library's module goes with "
			     "cuLibraryUnload");
		r = CUDA_ERROR_INVALID_HANDLE;
	} else {
		r = mdgpu_cu_module_unload(hmod);
	}
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
	CUresult r;

	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	*mode = mdgpu_cu_loading_mode();
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

/*
 * The layout from FUNC_INFO: each parameter must lie inside the largest
 * parameter buffer of a launch; bytes is the end of the furthest.
 */
static int mdgpu_cu_info_layout(const struct mdgpu_func_info *fi,
				struct mdgpu_cu_layout *l)
{
	memset(l, 0, sizeof(*l));
	if (fi->nr_params > MDGPU_PARAMS_MAX)
		return -E2BIG;
	if (fi->nr_params) {
		l->params = calloc(fi->nr_params, sizeof(*l->params));
		if (!l->params)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < fi->nr_params; i++) {
		const struct mdgpu_func_param *p = &fi->param[i];

		if (p->offset > MDGPU_PARAMS_MAX ||
		    p->size > MDGPU_PARAMS_MAX - p->offset) {
			mdgpu_cu_layout_free(l);
			return -E2BIG;
		}
		l->params[i].offset = p->offset;
		l->params[i].size = p->size;
		if (p->offset + p->size > l->bytes)
			l->bytes = p->offset + p->size;
	}
	l->count = fi->nr_params;
	return 0;
}

/* The function's info and parameter layout, at its first lookup. */
static CUresult mdgpu_cu_func_describe(CUfunction f)
{
	CUmodule m = f->mod;
	int ret = mdgpu_func_info(mdgpu_cu.g, f->func, &f->info);
	int lr;

	if (!ret) {
		lr = mdgpu_cu_info_layout(f->info, &f->layout);
		if (lr == -ENOMEM)
			return CUDA_ERROR_OUT_OF_MEMORY;
		f->layout_known = lr == 0;
		if (lr)
			mdgpu_cu_log("%s: parameters past %u bytes: "
				     "kernelParams launches not supported",
				     f->name, MDGPU_PARAMS_MAX);
		return CUDA_SUCCESS;
	}
	if (ret != -EOPNOTSUPP && ret != -EINVAL)
		return mdgpu_cu_error(ret);
	/* A daemon without FUNC_INFO: the PTX tells the layout. */
	f->info = NULL;
	if (!m->ptx) {
		mdgpu_cu_log("%s: the daemon reports no parameter layout: "
			     "kernelParams launches not supported", f->name);
		return CUDA_SUCCESS;
	}
	lr = mdgpu_cu_ptx_layout(m->ptx, m->ptx_len, f->name, MDGPU_PARAMS_MAX,
				 &f->layout);
	if (lr == -ENOMEM)
		return CUDA_ERROR_OUT_OF_MEMORY;
	f->layout_known = lr == 0;
	if (lr)
		mdgpu_cu_log("%s: parameter layout unknown (%d): kernelParams "
			     "launches not supported", f->name, lr);
	return CUDA_SUCCESS;
}

CUresult mdgpu_cu_function(CUmodule m, const char *name, CUfunction *out)
{
	CUfunction f;
	CUresult r;
	int ret;

	/* The same name gives the same handle, as with the real driver. */
	for (size_t i = 0; i < mdgpu_cu.funcs.n; i++) {
		f = mdgpu_cu.funcs.v[i];
		if (f->mod == m && !strcmp(f->name, name)) {
			*out = f;
			return CUDA_SUCCESS;
		}
	}
	f = calloc(1, sizeof(*f));
	if (!f || !(f->name = strdup(name)) ||
	    mdgpu_cu_set_add(&mdgpu_cu.funcs, f)) {
		if (f)
			free(f->name);
		free(f);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	f->mod = m;
	ret = mdgpu_func_get(mdgpu_cu.g, m->module, name, &f->func);
	r = ret ? mdgpu_cu_error(ret) : mdgpu_cu_func_describe(f);
	if (r) {
		mdgpu_cu_func_drop(f);
		return r;
	}
	*out = f;
	return CUDA_SUCCESS;
}

/* The names of m's kernels, asked of the daemon at the first need. */
static CUresult mdgpu_cu_module_list(CUmodule m)
{
	size_t size;
	int ret;

	if (m->listed)
		return CUDA_SUCCESS;
	ret = mdgpu_module_funcs(mdgpu_cu.g, m->module, &m->kernels, &size,
				 &m->nr_kernels);
	if (ret) {
		mdgpu_cu_log("listing the kernels of module %p: %s", (void *)m,
			     mdgpu_last_error(mdgpu_cu.g));
		return mdgpu_cu_error(ret);
	}
	m->listed = true;
	return CUDA_SUCCESS;
}

CUresult mdgpu_cu_module_funcs(CUmodule m, CUfunction *out, unsigned max,
			       unsigned *count)
{
	const char *name;
	CUresult r = mdgpu_cu_module_list(m);

	if (r)
		return r;
	*count = m->nr_kernels;
	name = m->kernels;
	/* libmdgpu checked the list: nr_kernels whole names. */
	for (unsigned i = 0; i < max && i < m->nr_kernels; i++) {
		r = mdgpu_cu_function(m, name, &out[i]);
		if (r)
			return r;
		name += strlen(name) + 1;
	}
	return CUDA_SUCCESS;
}

/* Entry of the calls on a module: the lock held and m live (ctx: as
 * mdgpu_cu_enter_obj's). */
static CUresult mdgpu_cu_enter_mod(CUmodule m, CUcontext *ctx)
{
	return mdgpu_cu_enter_obj(&mdgpu_cu.mods, m, ctx);
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
				     const char *name)
{
	CUcontext ctx;
	CUresult r;

	if (!hfunc || !mdgpu_cu_name_ok(name))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_mod(hmod, &ctx);
	if (r)
		return r;
	r = mdgpu_cu_function(hmod, name, hfunc);
	mdgpu_cu_leave();
	return r;
}

/*
 * cuda.h (CUDA 13.0) documents both: count/functions NULL is
 * CUDA_ERROR_INVALID_VALUE, an unknown module CUDA_ERROR_INVALID_HANDLE;
 * cuModuleEnumerateFunctions returns "a maximum number of numFunctions
 * function handles" (fewer slots than kernels is not an error: the first
 * numFunctions are written) and lists CUDA_ERROR_INVALID_CONTEXT, which
 * cuModuleGetFunctionCount does not: only the enumeration needs a current
 * context.  The handles are cuModuleGetFunction's, loaded (loading is
 * eager here).
 */
CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
	CUresult r;

	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_mod(mod, NULL);
	if (r)
		return r;
	r = mdgpu_cu_module_funcs(mod, NULL, 0, count);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuModuleEnumerateFunctions(CUfunction *functions,
					    unsigned int numFunctions,
					    CUmodule mod)
{
	CUcontext ctx;
	unsigned count;
	CUresult r;

	if (!functions)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_mod(mod, &ctx);
	if (r)
		return r;
	r = mdgpu_cu_module_funcs(mod, functions, numFunctions, &count);
	mdgpu_cu_leave();
	return r;
}

CUresult mdgpu_cu_global(CUmodule m, CUcontext ctx, const char *name,
			 CUdeviceptr *dptr, size_t *bytes)
{
	struct mdgpu_cu_alloc *a;
	mdgpu_devptr addr = 0;
	uint64_t size = 0;
	int ret;

	ret = mdgpu_module_global(mdgpu_cu.g, m->module, name, &addr, &size);
	if (ret)
		return mdgpu_cu_error(ret);
	if (size > SIZE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	/* Recorded once, so that copies and memsets may name it. */
	if (size && !mdgpu_cu_alloc_range(addr, size)) {
		a = mdgpu_cu_alloc_add(ctx, addr, size, true);
		if (!a)
			return CUDA_ERROR_OUT_OF_MEMORY;
		if (mdgpu_cu_set_add(&m->globals, a)) {
			mdgpu_cu_alloc_forget(a);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	if (dptr)
		*dptr = (CUdeviceptr)addr;
	if (bytes)
		*bytes = (size_t)size;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes,
				      CUmodule hmod, const char *name)
{
	CUcontext ctx;
	CUresult r;

	if (!mdgpu_cu_name_ok(name))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_mod(hmod, &ctx);
	if (r)
		return r;
	r = mdgpu_cu_global(hmod, ctx, name, dptr, bytes);
	mdgpu_cu_leave();
	return r;
}

CUresult mdgpu_cu_func_attr(CUfunction f, int attrib, int *value)
{
	int32_t v;

	if (attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX ||
	    attrib >= MDGPU_FUNC_ATTR_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if (!f->info) {
		mdgpu_cu_log("cuFuncGetAttribute: the daemon reports no "
			     "function attributes");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	v = f->info->attr[attrib];
	if (v == MDGPU_ATTR_NONE)
		return CUDA_ERROR_INVALID_VALUE;
	*value = v;
	return CUDA_SUCCESS;
}

/* After a change the host driver's values are asked again (it may round
 * or clamp what was set); if that fails the value set is kept. */
static void mdgpu_cu_func_refresh(CUfunction f, int attrib, int value)
{
	struct mdgpu_func_info *fi;

	if (!mdgpu_func_info(mdgpu_cu.g, f->func, &fi)) {
		free(f->info);
		f->info = fi;
	} else if (f->info && attrib >= 0 && attrib < MDGPU_FUNC_ATTR_MAX) {
		f->info->attr[attrib] = value;
	}
}

/*
 * Whether setting attrib to value would change nothing: the attribute is
 * one the host driver lets programs set, and the host driver's value (read
 * after the last change) is already value.  Setting it again is then
 * answered here: the host driver would accept it and change nothing,
 * while a round trip would wait behind the vGPU's queued work (cuDNN and
 * cuBLAS set the same attribute before many launches).  Read-only
 * attributes always go to the host driver, which refuses them.
 */
static bool mdgpu_cu_func_attr_unchanged(CUfunction f, int attrib, int value)
{
	switch (attrib) {
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		return f->info && f->info->attr[attrib] != MDGPU_ATTR_NONE &&
		       f->info->attr[attrib] == value;
	default:
		return false;
	}
}

CUresult mdgpu_cu_func_set_attr(CUfunction f, int attrib, int value)
{
	int ret;

	if (attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX ||
	    attrib >= MDGPU_FUNC_ATTR_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	if (mdgpu_cu_func_attr_unchanged(f, attrib, value))
		return CUDA_SUCCESS;
	ret = mdgpu_func_set_attr(mdgpu_cu.g, f->func, (uint32_t)attrib,
				  value);
	if (ret)
		return mdgpu_cu_error(ret);
	f->occ_n = 0;		/* occupancy depends on the attributes */
	mdgpu_cu_func_refresh(f, attrib, value);
	return CUDA_SUCCESS;
}

CUresult mdgpu_cu_func_cache(CUfunction f, CUfunc_cache config)
{
	switch (config) {
	case CU_FUNC_CACHE_PREFER_NONE:
	case CU_FUNC_CACHE_PREFER_SHARED:
	case CU_FUNC_CACHE_PREFER_L1:
	case CU_FUNC_CACHE_PREFER_EQUAL:
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	f->occ_n = 0;		/* occupancy depends on the cache config */
	return mdgpu_cu_error(mdgpu_func_set_attr(mdgpu_cu.g, f->func,
						  MDGPU_FUNC_ATTR_CACHE_CONFIG,
						  (int32_t)config));
}

CUresult mdgpu_cu_param_info(CUfunction f, size_t index, size_t *offset,
			     size_t *size)
{
	if (!offset)		/* size is optional */
		return CUDA_ERROR_INVALID_VALUE;
	if (!f->layout_known) {
		mdgpu_cu_log("cuFuncGetParamInfo: %s: parameter layout "
			     "unknown", f->name);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (index >= f->layout.count)
		return CUDA_ERROR_INVALID_VALUE;
	*offset = f->layout.params[index].offset;
	if (size)
		*size = f->layout.params[index].size;
	return CUDA_SUCCESS;
}

/* Entry of the cuFunc* calls: the lock held and f live, or an error. */
static CUresult mdgpu_cu_enter_func(CUfunction f)
{
	return mdgpu_cu_enter_obj(&mdgpu_cu.funcs, f, NULL);
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib,
				    CUfunction hfunc)
{
	CUresult r;

	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_func(hfunc);
	if (r)
		return r;
	r = mdgpu_cu_func_attr(hfunc, (int)attrib, pi);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc,
				    CUfunction_attribute attrib, int value)
{
	CUresult r = mdgpu_cu_enter_func(hfunc);

	if (r)
		return r;
	r = mdgpu_cu_func_set_attr(hfunc, (int)attrib, value);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
	CUresult r = mdgpu_cu_enter_func(hfunc);

	if (r)
		return r;
	r = mdgpu_cu_func_cache(hfunc, config);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
				    size_t *paramOffset, size_t *paramSize)
{
	CUresult r = mdgpu_cu_enter_func(func);

	if (r)
		return r;
	r = mdgpu_cu_param_info(func, paramIndex, paramOffset, paramSize);
	mdgpu_cu_leave();
	return r;
}

/* The name lives as long as the function (its module or library). */
CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
	CUresult r;

	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_func(hfunc);
	if (r)
		return r;
	*name = hfunc->name;
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
	CUresult r;

	if (!hmod)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_func(hfunc);
	if (r)
		return r;
	*hmod = hfunc->mod;
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

/* Loading is eager: every function is loaded once it is found. */
CUresult CUDAAPI cuFuncIsLoaded(CUfunctionLoadingState *state,
				CUfunction function)
{
	CUresult r;

	if (!state)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_func(function);
	if (r)
		return r;
	*state = CU_FUNCTION_LOADING_STATE_LOADED;
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncLoad(CUfunction function)
{
	CUresult r = mdgpu_cu_enter_func(function);

	if (r)
		return r;
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}
