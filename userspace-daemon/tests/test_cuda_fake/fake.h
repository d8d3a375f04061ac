/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the files of the fake libcuda.so.1 share: libcuda.c (context,
 * memory, events, streams) and modules.c (PTX modules, functions, named
 * fake kernels, globals, function attributes, occupancy, limits).
 */
#ifndef MDGPUD_TEST_CUDA_FAKE_H
#define MDGPUD_TEST_CUDA_FAKE_H

#include "cuda_api.h"

#include <stdint.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* A sticky error (a faulted kernel): every later call returns it. */
extern mdgpud_cu_result fake_sticky;

uint64_t fake_now_ns(void);

/* The device attribute table (H100-like, see modules.c). */
int fake_device_attr(unsigned int attr, int *value);

/*
 * Runs function f (its module's named fake kernel) for `threads` threads
 * with its parameters from kernel_params or extra, exactly as
 * cuLaunchKernel takes them.
 */
mdgpud_cu_result fake_launch(mdgpud_cu_function f, unsigned int threads,
			     void **kernel_params, void **extra);

#endif /* MDGPUD_TEST_CUDA_FAKE_H */
