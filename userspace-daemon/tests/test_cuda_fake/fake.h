/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the files of the fake libcuda.so.1 share: libcuda.c (context,
 * memory, events, streams and their threads), devices.c (the devices:
 * count, bus ids, UUIDs) and modules.c (PTX modules, functions, named
 * fake kernels, globals, function attributes, occupancy, limits).
 */
#ifndef MDGPUD_TEST_CUDA_FAKE_H
#define MDGPUD_TEST_CUDA_FAKE_H

#include "cuda_api.h"

#include <stddef.h>
#include <stdint.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/*
 * A sticky error (a faulted kernel): every later call returns it.  Set
 * by kernels on their stream threads, read by every entry point.
 */
extern _Atomic mdgpud_cu_result fake_sticky;

uint64_t fake_now_ns(void);

/* The device attribute table (H100-like, see modules.c). */
int fake_device_attr(unsigned int attr, int *value);

/* How a kernel was launched, for the launch_info kernel. */
struct fake_launch_info {
	int ex;				/* by cuLaunchKernelEx */
	int cooperative;
	unsigned int cluster[3];	/* 0 without a cluster */
};

/*
 * A launch of f, in three steps, as libcuda.c's stream queue takes it:
 * fake_kernel_prepare() checks that the fake runs f and packs its
 * parameters from kernel_params or extra, exactly as cuLaunchKernel takes
 * them, into *blob (malloc'ed, NULL when f takes none; the caller frees
 * it), and holds f's module until fake_kernel_release();
 * fake_kernel_run() runs f on the calling stream thread for `threads`
 * threads.
 */
mdgpud_cu_result fake_kernel_prepare(mdgpud_cu_function f,
				     void **kernel_params, void **extra,
				     uint8_t **blob);
mdgpud_cu_result fake_kernel_run(mdgpud_cu_function f, const uint8_t *blob,
				 unsigned int threads,
				 const struct fake_launch_info *how);
void fake_kernel_release(mdgpud_cu_function f);

#endif /* MDGPUD_TEST_CUDA_FAKE_H */
