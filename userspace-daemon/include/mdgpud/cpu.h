/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* CPU helpers for spin loops. */
#ifndef MDGPUD_CPU_H
#define MDGPUD_CPU_H

/* Busy-wait hint to the CPU (spin loops on shared-memory words). */
static inline void mdgpud_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* MDGPUD_CPU_H */
