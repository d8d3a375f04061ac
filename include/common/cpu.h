/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * CPU helpers for spin loops, shared by libmdgpu and mdgpud (user space,
 * not ABI: nothing under include/uapi includes it).
 */
#ifndef MDGPU_COMMON_CPU_H
#define MDGPU_COMMON_CPU_H

/* Busy-wait hint to the CPU (spin loops on shared-memory words). */
static inline void mdgpu_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* MDGPU_COMMON_CPU_H */
