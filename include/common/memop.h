/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * STREAM_MEMOP (uapi/mdgpu.h, ABI 1.10): whether a wait's condition is
 * met, the one reading of CUDA's CU_STREAM_WAIT_VALUE_* shared by the sim
 * backend and CI's fake libcuda (user space, not ABI).
 */
#ifndef MDGPU_COMMON_MEMOP_H
#define MDGPU_COMMON_MEMOP_H

#include <stdbool.h>
#include <stdint.h>

#include "uapi/mdgpu.h"

/*
 * The word w against v under cond (MDGPU_MEMOP_WAIT_*), both taken as
 * 32-bit values when `wide` is false.  GEQ is cyclic, as CUDA defines
 * it: (s32)(w - v) >= 0, the subtraction done unsigned (no overflow).
 * An unknown cond is never met.
 */
static inline bool mdgpu_memop_met(uint32_t cond, bool wide, uint64_t w,
				   uint64_t v)
{
	uint64_t mask = wide ? UINT64_MAX : UINT32_MAX;
	uint64_t sign = wide ? 1ULL << 63 : 1ULL << 31;

	w &= mask;
	v &= mask;
	switch (cond) {
	case MDGPU_MEMOP_WAIT_GEQ:
		return !(((w - v) & mask) & sign);
	case MDGPU_MEMOP_WAIT_EQ:
		return w == v;
	case MDGPU_MEMOP_WAIT_AND:
		return (w & v) != 0;
	case MDGPU_MEMOP_WAIT_NOR:
		return (~(w | v) & mask) != 0;
	default:
		return false;
	}
}

#endif /* MDGPU_COMMON_MEMOP_H */
