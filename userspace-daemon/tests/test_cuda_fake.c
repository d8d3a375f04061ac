// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cuda backend tests of test_cuda_backend.c, run on CI (no GPU)
 * against the fake libcuda.so.1 in tests/test_cuda_fake/libcuda.c: every
 * supervisor and worker path (spawn, shared-memory ring, futex wake-ups,
 * fd passing and zero-copy regions, staging, async errors, sticky faults,
 * crash detection, bounded shutdown, concurrent contexts) runs for real;
 * only the "GPU" is host memory and C.  What it cannot show (address-space
 * isolation, real kernels, speed) test_cuda_backend shows on the GPU.
 */
#define MDGPUD_TEST_CUDA_FAKE 1
#include "test_cuda_backend.c"
