/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A table of driver objects (modules, functions, events) behind opaque
 * 64-bit handles, which the worker hands to the supervisor instead of the
 * driver's pointers.
 *
 * A handle is tag << 56 | generation << 32 | slot index.  The tag is the
 * table's own, so that a handle of one table is never valid in another
 * (a module handle passed as a function is rejected); it is never 0, so
 * neither is a handle.  A slot's generation is bumped when its object is
 * removed, so that a stale handle misses in O(1), as does a forged one
 * (index out of range, free slot, wrong tag or generation).  Generations
 * wrap after 2^24 reuses of one slot.
 *
 * Free slots are chained, so insertion is O(1); the slot array grows by
 * doubling up to max_slots.  An insertion that fails leaves the table as
 * it was.
 */
#ifndef MDGPUD_WORKER_HANDLES_H
#define MDGPUD_WORKER_HANDLES_H

#include <stdbool.h>
#include <stdint.h>

/* The index field's width bounds the slots a table may have. */
#define MDGPUD_WORKER_HANDLES_MAX	UINT32_MAX

struct mdgpud_worker_handle_slot {
	void *obj;
	uint64_t parent;	/* the handle this object dies with, or 0 */
	uint32_t gen;		/* bumped on removal */
	uint32_t next_free;	/* index + 1 of the next free one, or 0 */
	bool used;
};

struct mdgpud_worker_handles {
	struct mdgpud_worker_handle_slot *slot;
	uint32_t nr_slots;	/* slots allocated */
	uint32_t max_slots;	/* the most it may grow to */
	uint32_t free_head;	/* index + 1 of the first free one, or 0 */
	uint32_t count;		/* slots in use */
	uint8_t tag;		/* nonzero, distinct per table */
};

void mdgpud_worker_handles_init(struct mdgpud_worker_handles *t, uint8_t tag,
				uint32_t max_slots);
/* Forgets every object (it does not release them) and frees the slots. */
void mdgpud_worker_handles_fini(struct mdgpud_worker_handles *t);

/*
 * Stores obj, which dies with the object of handle `parent` (0: none).
 * Returns 0 and the new handle, or -ENOMEM (no memory, or max_slots in
 * use), the table unchanged.
 */
int mdgpud_worker_handles_insert(struct mdgpud_worker_handles *t, void *obj,
				 uint64_t parent, uint64_t *handle);
/*
 * The handle of obj stored with `parent`: 0, or -ENOENT.  A linear scan,
 * for requests off the hot path.
 */
int mdgpud_worker_handles_find(const struct mdgpud_worker_handles *t,
			       const void *obj, uint64_t parent,
			       uint64_t *handle);
/* 0 and the object of `handle`, or -ENOENT. */
int mdgpud_worker_handles_get(const struct mdgpud_worker_handles *t,
			      uint64_t handle, void **obj);
/* Removes `handle`: 0 and its object (obj may be NULL), or -ENOENT. */
int mdgpud_worker_handles_remove(struct mdgpud_worker_handles *t,
				 uint64_t handle, void **obj);
/* Removes every object whose parent is `parent`. */
void mdgpud_worker_handles_remove_children(struct mdgpud_worker_handles *t,
					   uint64_t parent);
/*
 * Iteration: start with *cursor = 0; each call returns 0 and the next
 * object in use, or -ENOENT at the end.  The table must not change during
 * an iteration.
 */
int mdgpud_worker_handles_next(const struct mdgpud_worker_handles *t,
			       uint32_t *cursor, void **obj);

#endif /* MDGPUD_WORKER_HANDLES_H */
