// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_core_dma.c on the cuda backend over the fake libcuda (CI has no
 * GPU), the vGPU's aperture shared the kernel transport's way: the daemon
 * maps it from one file and the worker from another file of the same pages
 * (MDGPU_CTL_APERTURE_FD on the kernel transport).  The guest-IOVA paths
 * (bounce buffer, module images and launch parameters by DMA) run through
 * the worker, and test_cuda_aperture checks the zero-copy aperture.
 */
#define FAKE_TRANSPORT_CUDA 1
#include "test_core_dma.c"
