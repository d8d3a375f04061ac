/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers shared by the libFuzzer harnesses (fuzz/fuzz_*.c): the entry
 * points libFuzzer calls, and a log sink for the daemon's library that
 * formats every message (so a bad format argument is caught by the
 * sanitizers) and then drops it.
 */
#ifndef MDGPU_FUZZ_H
#define MDGPU_FUZZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A broken invariant: report it and abort, which libFuzzer counts as a
 * crash and saves the input. */
#define FUZZ_CHECK(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: invariant failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

static inline void fuzz_log_sink(void *data, int level, const char *fmt,
				 va_list ap)
{
	char buf[1024];

	(void)data;
	(void)level;
	vsnprintf(buf, sizeof(buf), fmt, ap);
}

#endif /* MDGPU_FUZZ_H */
