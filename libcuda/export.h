/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libcuda: what other files of the library call of export.c, the private
 * tables cuGetExportTable serves to NVIDIA's runtime
 * (Documentation/export-tables.md).
 */
#ifndef MDGPU_CU_EXPORT_H
#define MDGPU_CU_EXPORT_H

#include <cuda.h>

/*
 * Under mdgpu_cu.lock, from mdgpu_cu_ctx_release_objects: detaches the
 * context-local storage of a context that is going away.  Its destroy
 * callbacks run from mdgpu_cu_export_run_pending once the lock is
 * dropped, because a callback may call back into the library.
 */
void mdgpu_cu_cls_release(CUcontext ctx);

/* Without the lock held: runs the destroy callbacks this thread
 * detached, in the order their entries were stored. */
void mdgpu_cu_export_run_pending(void);

#endif /* MDGPU_CU_EXPORT_H */
