// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Backend registry and the builtins' reference results.
 *
 * The cuda backend lives in another engineer's file and may be absent from a
 * build: it is referenced weakly, so the library links without it and
 * mdgpud_backend_find("cuda") returns NULL then.  Binaries link the library
 * with --whole-archive (daemon.mk) so that, when the cuda object is in the
 * archive, the weak reference resolves to it.
 */
#include <stddef.h>
#include <string.h>

#include "mdgpud/backend.h"

#pragma weak mdgpud_backend_cuda

const struct mdgpud_backend_ops *mdgpud_backend_find(const char *name)
{
	if (!name)
		return NULL;
	if (!strcmp(name, mdgpud_backend_sim.name))
		return &mdgpud_backend_sim;
	if (!strcmp(name, "cuda") && &mdgpud_backend_cuda != NULL)
		return &mdgpud_backend_cuda;
	return NULL;
}

uint64_t mdgpud_checksum_ref(const uint32_t *words, uint64_t count)
{
	uint64_t sum = 0;

	/* Unsigned arithmetic: wraps modulo 2^64 by definition. */
	for (uint64_t i = 0; i < count; i++)
		sum += (uint64_t)words[i] * (2 * i + 1);
	return sum;
}
