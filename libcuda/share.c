// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: the vGPU connection offered to mdgpu's libnvidia-ml.so.1 in the
 * same process (Documentation/nvml.md), so that both libraries describe
 * one vGPU through one connection: NVML opening a vGPU of its own would
 * charge a second quota on the socket transport and find the device busy
 * on the guest transport.  NVML reads names, UUID and totals through the
 * cu* entry points and asks the daemon's QUERY values through this one.
 */
#include <errno.h>

#include "priv.h"

/* Exported (libcuda.map).  QUERY `what` on the vGPU cuInit opened, under
 * libcuda's lock; negative errno, -ENODEV before a successful cuInit. */
int mdgpu_shared_query(uint32_t what, uint64_t *result, uint64_t *result2);

int mdgpu_shared_query(uint32_t what, uint64_t *result, uint64_t *result2)
{
	int ret;

	if (!result || !result2)
		return -EINVAL;
	if (mdgpu_cu_enter())
		return -ENODEV;
	ret = mdgpu_query2(mdgpu_cu.g, what, result, result2);
	mdgpu_cu_leave();
	return ret;
}
