/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cuda-trace: what trace.c and the code gen-trace.py generates from cuda.h
 * share.  gen-trace.py reads the TRACE_* sizes below from this file, so
 * they are written once.
 */
#ifndef CUDA_TRACE_H
#define CUDA_TRACE_H

#include <stdint.h>

/* Entry points a program can obtain (cuGetProcAddress or linked). */
#define TRACE_SLOTS 4096
/* Private export tables PROXY_LOG_TABLE can name at once. */
#define TRACE_TABLES 2
/* Slots of one logged export table (slot 0 included). */
#define TRACE_TABLE_SLOTS 128
/* Arguments a logging wrapper forwards: the integer registers of the
 * x86-64 System V calling convention. */
#define TRACE_REG_ARGS 6

#define TRACE_HIDDEN __attribute__((visibility("hidden")))

typedef uintptr_t (*trace_fn)(uintptr_t, uintptr_t, uintptr_t, uintptr_t,
			      uintptr_t, uintptr_t);

/* One function cuda.h declares, by exported name (sorted by name). */
struct trace_decl {
	const char *name;
	unsigned char nparams;
	/* Every parameter travels in an integer register (integer, enum or
	 * pointer: no float, no structure by value), so a wrapper that
	 * forwards TRACE_REG_ARGS integers forwards the call unchanged. */
	unsigned char regs_only;
	/* Size of what the first parameter points to, when it is a writable
	 * pointer to an integer, enum or pointer (the value a getter
	 * returns); 0 otherwise. */
	unsigned char out_size;
};

extern TRACE_HIDDEN const struct trace_decl trace_decls[];
extern TRACE_HIDDEN const unsigned trace_decl_count;

/* Counting trampolines (gen-trace.py's assembly): trampoline i adds one
 * to trace_count[i] and jumps to trace_target[i], every register and
 * the stack untouched. */
extern TRACE_HIDDEN void *const trace_tramps[TRACE_SLOTS];
extern TRACE_HIDDEN unsigned long trace_count[TRACE_SLOTS];
extern TRACE_HIDDEN void *trace_target[TRACE_SLOTS];

/* The cu* symbols the library exports (all of cuda.h's but the three
 * trace.c defines): symbol i jumps to trace_direct[i]. */
extern TRACE_HIDDEN const char *const trace_direct_names[];
extern TRACE_HIDDEN const unsigned trace_direct_count;
extern TRACE_HIDDEN void *trace_direct[];

/* Logging wrappers: wrapper i calls trace_call(i, its arguments). */
extern TRACE_HIDDEN const trace_fn trace_wrappers[TRACE_SLOTS];
TRACE_HIDDEN uintptr_t trace_call(unsigned slot, uintptr_t a0, uintptr_t a1,
				  uintptr_t a2, uintptr_t a3, uintptr_t a4,
				  uintptr_t a5);

/* Export-table wrappers: wrapper [t][i] calls trace_table_call(t, i, its
 * return address, its arguments). */
extern TRACE_HIDDEN const trace_fn
	trace_table_wrappers[TRACE_TABLES][TRACE_TABLE_SLOTS];
TRACE_HIDDEN uintptr_t trace_table_call(unsigned table, unsigned slot,
					void *caller, uintptr_t a0,
					uintptr_t a1, uintptr_t a2,
					uintptr_t a3, uintptr_t a4,
					uintptr_t a5);

#endif
