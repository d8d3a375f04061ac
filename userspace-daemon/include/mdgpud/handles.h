/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Per-vGPU handle table: guest-visible u32 handles mapped to backend u64
 * values.  A handle names one slot of one kind (module, function, event,
 * stream) in
 * the submitting vGPU's own table, so a handle of another vGPU, a stale
 * handle or a handle of the wrong kind never resolves.
 *
 * Encoding: bits 0..19 slot index + 1, bits 20..31 generation (bumped each
 * time the slot is freed), so 0 is never a valid handle.
 */
#ifndef MDGPUD_HANDLES_H
#define MDGPUD_HANDLES_H

#include <stdint.h>

enum mdgpud_handle_kind {
	MDGPUD_H_MODULE = 1,
	MDGPUD_H_FUNC = 2,
	MDGPUD_H_EVENT = 3,
	MDGPUD_H_STREAM = 4,		/* ABI 1.2 */
};

#define MDGPUD_HANDLES_MAX	((1U << 20) - 1)

struct mdgpud_handles;

/* capacity: 1..MDGPUD_HANDLES_MAX live handles (config). */
int mdgpud_handles_create(uint32_t capacity, struct mdgpud_handles **out);
void mdgpud_handles_destroy(struct mdgpud_handles *h);

/* parent: for FUNC the guest handle of its module, else 0. */
int mdgpud_handles_add(struct mdgpud_handles *h, uint32_t kind,
		       uint64_t value, uint32_t parent, uint32_t *handle);
/*
 * The same, with a word the core keeps beside the backend value (0 with
 * mdgpud_handles_add): for FUNC the function's per-thread local memory
 * in bytes, which a LAUNCH of it charges (core/info.c).
 */
int mdgpud_handles_add_extra(struct mdgpud_handles *h, uint32_t kind,
			     uint64_t value, uint32_t parent, uint64_t extra,
			     uint32_t *handle);
/* -ENOENT unless `handle` is live and of `kind`. */
int mdgpud_handles_get(const struct mdgpud_handles *h, uint32_t handle,
		       uint32_t kind, uint64_t *value);
/* The same, and the handle's extra word (value, extra may be NULL). */
int mdgpud_handles_get_extra(const struct mdgpud_handles *h, uint32_t handle,
			     uint32_t kind, uint64_t *value, uint64_t *extra);
int mdgpud_handles_del(struct mdgpud_handles *h, uint32_t handle,
		       uint32_t kind);
/* Delete every FUNC whose parent is `module`. */
void mdgpud_handles_del_children(struct mdgpud_handles *h, uint32_t module);
/* Iterate live handles of `kind`: *cursor starts at 0; -ENOENT at end. */
int mdgpud_handles_next(const struct mdgpud_handles *h, uint32_t kind,
			uint32_t *cursor, uint32_t *handle, uint64_t *value);
uint32_t mdgpud_handles_count(const struct mdgpud_handles *h);

#endif /* MDGPUD_HANDLES_H */
