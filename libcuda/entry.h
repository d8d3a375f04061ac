/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libcuda: the tables libcuda/gen-entry-points.py generates from cuda.h
 * (build/libcuda/entry_points.c) and what they call.  This header does not
 * include cuda.h: the generated file defines the stubs of the symbols
 * cuda.h declares, with a signature of their own.
 */
#ifndef MDGPU_CU_ENTRY_H
#define MDGPU_CU_ENTRY_H

/* CUDA_VERSION of the cuda.h the library is built against (libcuda.mk). */
#ifndef MDGPU_CU_HEADER_VERSION
#error "MDGPU_CU_HEADER_VERSION must be defined"
#endif

typedef int (*mdgpu_cu_fn)(void);

/* One row of cuGetProcAddress: the variant of `name` that appeared in CUDA
 * `version` (0: in every version), per-thread default stream or legacy. */
struct mdgpu_cu_proc {
	const char *name;
	int version;
	unsigned char ptds;
	unsigned char implemented;
	mdgpu_cu_fn fn;
};

struct mdgpu_cu_result {
	int value;
	const char *name;
	const char *text;
};

/* Sorted by name, then legacy before per-thread, then version. */
extern const struct mdgpu_cu_proc mdgpu_cu_procs[];
extern const unsigned mdgpu_cu_proc_count;
/* In cuda.h's order, which is by value. */
extern const struct mdgpu_cu_result mdgpu_cu_results[];
extern const unsigned mdgpu_cu_result_count;
extern const int mdgpu_cu_not_supported;
extern const char *const mdgpu_cu_stub_names[];
extern const unsigned mdgpu_cu_stub_count;
extern _Atomic unsigned char mdgpu_cu_stub_logged[];	/* one per stub */

/* Body of every stub: logs mdgpu_cu_stub_names[idx] once when
 * MDGPU_CUDA_LOG is set, returns CUDA_ERROR_NOT_SUPPORTED. */
int mdgpu_cu_unsupported(unsigned idx);

#endif /* MDGPU_CU_ENTRY_H */
