// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Driver objects behind index + generation handles (see handles.h). */
#include "handles.h"

#include "array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MDGPUD_WORKER_HANDLES_FIRST	16u
#define MDGPUD_WORKER_HANDLES_TAG_SHIFT	56
#define MDGPUD_WORKER_HANDLES_GEN_SHIFT	32
#define MDGPUD_WORKER_HANDLES_GEN_MASK	0xffffffu

void mdgpud_worker_handles_init(struct mdgpud_worker_handles *t, uint8_t tag,
				uint32_t max_slots)
{
	memset(t, 0, sizeof(*t));
	t->tag = tag;
	t->max_slots = max_slots;
}

void mdgpud_worker_handles_fini(struct mdgpud_worker_handles *t)
{
	free(t->slot);
	mdgpud_worker_handles_init(t, t->tag, t->max_slots);
}

static uint64_t mdgpud_worker_handles_encode(
	const struct mdgpud_worker_handles *t, uint32_t idx)
{
	return (uint64_t)t->tag << MDGPUD_WORKER_HANDLES_TAG_SHIFT |
	       (uint64_t)t->slot[idx].gen << MDGPUD_WORKER_HANDLES_GEN_SHIFT |
	       idx;
}

/* The slot `handle` names, or NULL: free, stale or forged. */
static struct mdgpud_worker_handle_slot *
mdgpud_worker_handles_slot(const struct mdgpud_worker_handles *t,
			   uint64_t handle)
{
	uint32_t idx = (uint32_t)handle;

	if (idx >= t->nr_slots || !t->slot[idx].used ||
	    mdgpud_worker_handles_encode(t, idx) != handle)
		return NULL;
	return &t->slot[idx];
}

/* Chains slots [from, nr_slots) onto the free list, lowest first. */
static void mdgpud_worker_handles_chain(struct mdgpud_worker_handles *t,
					uint32_t from)
{
	for (uint32_t i = t->nr_slots; i-- > from;) {
		t->slot[i].next_free = t->free_head;
		t->free_head = i + 1;
	}
}

int mdgpud_worker_handles_insert(struct mdgpud_worker_handles *t, void *obj,
				 uint64_t parent, uint64_t *handle)
{
	struct mdgpud_worker_handle_slot *s;
	uint32_t idx;

	if (!t->free_head) {
		size_t cap = t->nr_slots;
		void *base = t->slot;
		uint32_t old = t->nr_slots;
		int ret;

		ret = mdgpud_worker_array_grow(&base, &cap, (size_t)old + 1,
					       sizeof(*t->slot),
					       MDGPUD_WORKER_HANDLES_FIRST,
					       t->max_slots);
		if (ret)
			return ret;
		t->slot = base;
		t->nr_slots = (uint32_t)cap;
		mdgpud_worker_handles_chain(t, old);
	}
	idx = t->free_head - 1;
	s = &t->slot[idx];
	t->free_head = s->next_free;
	s->next_free = 0;
	s->obj = obj;
	s->parent = parent;
	s->used = true;
	t->count++;
	*handle = mdgpud_worker_handles_encode(t, idx);
	return 0;
}

int mdgpud_worker_handles_find(const struct mdgpud_worker_handles *t,
			       const void *obj, uint64_t parent,
			       uint64_t *handle)
{
	for (uint32_t i = 0; i < t->nr_slots; i++) {
		const struct mdgpud_worker_handle_slot *s = &t->slot[i];

		if (s->used && s->obj == obj && s->parent == parent) {
			*handle = mdgpud_worker_handles_encode(t, i);
			return 0;
		}
	}
	return -ENOENT;
}

int mdgpud_worker_handles_get(const struct mdgpud_worker_handles *t,
			      uint64_t handle, void **obj)
{
	struct mdgpud_worker_handle_slot *s =
		mdgpud_worker_handles_slot(t, handle);

	if (!s)
		return -ENOENT;
	*obj = s->obj;
	return 0;
}

static void mdgpud_worker_handles_release(struct mdgpud_worker_handles *t,
					  uint32_t idx)
{
	struct mdgpud_worker_handle_slot *s = &t->slot[idx];

	s->obj = NULL;
	s->parent = 0;
	s->used = false;
	s->gen = (s->gen + 1) & MDGPUD_WORKER_HANDLES_GEN_MASK;
	s->next_free = t->free_head;
	t->free_head = idx + 1;
	t->count--;
}

int mdgpud_worker_handles_remove(struct mdgpud_worker_handles *t,
				 uint64_t handle, void **obj)
{
	struct mdgpud_worker_handle_slot *s =
		mdgpud_worker_handles_slot(t, handle);

	if (!s)
		return -ENOENT;
	if (obj)
		*obj = s->obj;
	mdgpud_worker_handles_release(t, (uint32_t)handle);
	return 0;
}

void mdgpud_worker_handles_remove_children(struct mdgpud_worker_handles *t,
					   uint64_t parent)
{
	for (uint32_t i = 0; i < t->nr_slots; i++)
		if (t->slot[i].used && t->slot[i].parent == parent)
			mdgpud_worker_handles_release(t, i);
}

int mdgpud_worker_handles_next(const struct mdgpud_worker_handles *t,
			       uint32_t *cursor, void **obj)
{
	for (uint32_t i = *cursor; i < t->nr_slots; i++) {
		if (!t->slot[i].used)
			continue;
		*obj = t->slot[i].obj;
		*cursor = i + 1;
		return 0;
	}
	*cursor = t->nr_slots;
	return -ENOENT;
}
