// SPDX-License-Identifier: GPL-2.0 OR MIT
/* dlopen'd CUDA driver API for the native target (see cuda_dl.h). */
#include "cuda_dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#if defined(BENCH_HAVE_CUDA_H)
/*
 * Prove that each entry point's type is the prototype cuda.h gives that
 * symbol: a mismatch is a build error, not a crash on the GPU machine.
 */
#include <cuda.h>
#define BENCH_CU_CHECK(member, sym, params)				\
	_Static_assert(sizeof(bench_cu_pfn_##member) ==			\
		       sizeof(__typeof__(&sym)) &&			\
		       __builtin_types_compatible_p(			\
			       bench_cu_pfn_##member, __typeof__(&sym)),	\
		       #sym " prototype");
BENCH_CU_FUNCS(BENCH_CU_CHECK)
#undef BENCH_CU_CHECK
#endif

int bench_cuda_load(struct bench_cuda *cu, char *why, size_t why_len)
{
	memset(cu, 0, sizeof(*cu));
	cu->dl = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cu->dl) {
		snprintf(why, why_len, "dlopen libcuda.so.1: %s", dlerror());
		return -ENOENT;
	}
#define BENCH_CU_RESOLVE(member, sym, params)				\
	cu->member = (bench_cu_pfn_##member)dlsym(cu->dl, #sym);	\
	if (!cu->member) {						\
		snprintf(why, why_len, "libcuda lacks %s", #sym);	\
		bench_cuda_unload(cu);					\
		return -ENOSYS;						\
	}
	BENCH_CU_FUNCS(BENCH_CU_RESOLVE)
#undef BENCH_CU_RESOLVE
	return 0;
}

void bench_cuda_unload(struct bench_cuda *cu)
{
	if (cu->dl)
		dlclose(cu->dl);
	memset(cu, 0, sizeof(*cu));
}

int bench_cuda_err(const struct bench_cuda *cu, bench_cu_result r,
		   const char *what)
{
	const char *name = NULL;

	if (r == BENCH_CUDA_SUCCESS)
		return 0;
	if (cu->get_error_name)
		cu->get_error_name(r, &name);
	fprintf(stderr, "mdgpu-bench: %s: CUDA error %u (%s)\n", what, r,
		name ? name : "?");
	switch (r) {
	case 2:		/* CUDA_ERROR_OUT_OF_MEMORY */
		return -ENOMEM;
	case 1:		/* CUDA_ERROR_INVALID_VALUE */
		return -EINVAL;
	case 100:	/* CUDA_ERROR_NO_DEVICE */
	case 34:	/* CUDA_ERROR_STUB_LIBRARY */
		return -ENODEV;
	case BENCH_CUDA_ERROR_NOT_READY:
		return -EAGAIN;
	default:
		return -EIO;
	}
}
