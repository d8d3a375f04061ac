// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Embeds the builtin kernels' PTX (builtin.ptx, generated from builtin.cu
 * and checked in) into mdgpud-worker as read-only data, NUL-terminated as
 * cuModuleLoadDataEx wants PTX text.  The make rule passes the file's path
 * in MDGPUD_BUILTIN_PTX_PATH.
 */
#include <stddef.h>

#ifndef MDGPUD_BUILTIN_PTX_PATH
#error "MDGPUD_BUILTIN_PTX_PATH must name builtin.ptx"
#endif

__asm__(".section .rodata\n"
	".balign 16\n"
	".global mdgpud_builtin_ptx\n"
	".type mdgpud_builtin_ptx, @object\n"
	"mdgpud_builtin_ptx:\n"
	".incbin \"" MDGPUD_BUILTIN_PTX_PATH "\"\n"
	".byte 0\n"
	".global mdgpud_builtin_ptx_end\n"
	"mdgpud_builtin_ptx_end:\n"
	".previous\n");
