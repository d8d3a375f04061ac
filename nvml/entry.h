/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpu's libnvidia-ml.so.1: the stubs nvml/gen-entry-points.py generates
 * (build/nvml/entry_points.c), one for every symbol of nvml.h that the
 * library does not implement.  This header does not include nvml.h: the
 * generated file defines the stubs with a signature of their own.
 */
#ifndef MDGPU_NVML_ENTRY_H
#define MDGPU_NVML_ENTRY_H

extern const char *const mdgpu_nvml_stub_names[];
extern const unsigned mdgpu_nvml_stub_count;
extern _Atomic unsigned char mdgpu_nvml_stub_logged[];	/* one per stub */

/* Body of every stub: logs mdgpu_nvml_stub_names[idx] once when
 * MDGPU_NVML_LOG is set, returns NVML_ERROR_NOT_SUPPORTED. */
int mdgpu_nvml_unsupported(unsigned idx);

#endif /* MDGPU_NVML_ENTRY_H */
