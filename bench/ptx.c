// SPDX-License-Identifier: GPL-2.0 OR MIT
/* kernels/bench.ptx embedded as a NUL-terminated string. */
#include "target.h"

#ifndef BENCH_PTX_FILE
#error "BENCH_PTX_FILE must name kernels/bench.ptx"
#endif

__asm__(".section .rodata\n"
	".global bench_ptx\n"
	".type bench_ptx, @object\n"
	"bench_ptx:\n"
	".incbin \"" BENCH_PTX_FILE "\"\n"
	".byte 0\n"
	".size bench_ptx, . - bench_ptx\n"
	".previous\n");
