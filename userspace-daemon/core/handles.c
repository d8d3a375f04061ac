// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Per-vGPU guest handle -> backend value tables. */
#include <errno.h>
#include <stdlib.h>

#include "mdgpud/handles.h"

#define MDGPUD_H_INDEX_BITS	20
#define MDGPUD_H_INDEX_MASK	((1U << MDGPUD_H_INDEX_BITS) - 1)
#define MDGPUD_H_GEN_MASK	0xfffU

struct mdgpud_handle_slot {
	uint64_t value;
	uint64_t extra;		/* kept for the core (handles.h) */
	uint32_t kind;		/* 0: free */
	uint32_t gen;
	uint32_t parent;
	uint32_t next_free;	/* index + 1 of next free slot, 0 = none */
};

struct mdgpud_handles {
	uint32_t capacity;
	uint32_t count;
	uint32_t free_head;	/* index + 1 */
	struct mdgpud_handle_slot *s;
};

int mdgpud_handles_create(uint32_t capacity, struct mdgpud_handles **out)
{
	struct mdgpud_handles *h;

	if (!capacity || capacity > MDGPUD_HANDLES_MAX)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->s = calloc(capacity, sizeof(*h->s));
	if (!h->s) {
		free(h);
		return -ENOMEM;
	}
	h->capacity = capacity;
	for (uint32_t i = 0; i < capacity; i++)
		h->s[i].next_free = i + 2 <= capacity ? i + 2 : 0;
	h->free_head = 1;
	*out = h;
	return 0;
}

void mdgpud_handles_destroy(struct mdgpud_handles *h)
{
	if (!h)
		return;
	free(h->s);
	free(h);
}

static struct mdgpud_handle_slot *
mdgpud_handles_slot(const struct mdgpud_handles *h, uint32_t handle,
		    uint32_t kind)
{
	uint32_t idx = handle & MDGPUD_H_INDEX_MASK;
	uint32_t gen = handle >> MDGPUD_H_INDEX_BITS;
	struct mdgpud_handle_slot *s;

	if (!idx || idx > h->capacity)
		return NULL;
	s = &h->s[idx - 1];
	if (!s->kind || s->kind != kind || s->gen != gen)
		return NULL;
	return s;
}

int mdgpud_handles_add(struct mdgpud_handles *h, uint32_t kind,
		       uint64_t value, uint32_t parent, uint32_t *handle)
{
	return mdgpud_handles_add_extra(h, kind, value, parent, 0, handle);
}

int mdgpud_handles_add_extra(struct mdgpud_handles *h, uint32_t kind,
			     uint64_t value, uint32_t parent, uint64_t extra,
			     uint32_t *handle)
{
	struct mdgpud_handle_slot *s;
	uint32_t idx;

	if (kind < MDGPUD_H_MODULE || kind > MDGPUD_H_STREAM)
		return -EINVAL;
	if (!h->free_head)
		return -ENOSPC;
	idx = h->free_head;
	s = &h->s[idx - 1];
	h->free_head = s->next_free;
	s->kind = kind;
	s->value = value;
	s->extra = extra;
	s->parent = parent;
	s->next_free = 0;
	h->count++;
	*handle = (s->gen << MDGPUD_H_INDEX_BITS) | idx;
	return 0;
}

int mdgpud_handles_get(const struct mdgpud_handles *h, uint32_t handle,
		       uint32_t kind, uint64_t *value)
{
	return mdgpud_handles_get_extra(h, handle, kind, value, NULL);
}

int mdgpud_handles_get_extra(const struct mdgpud_handles *h, uint32_t handle,
			     uint32_t kind, uint64_t *value, uint64_t *extra)
{
	struct mdgpud_handle_slot *s = mdgpud_handles_slot(h, handle, kind);

	if (!s)
		return -ENOENT;
	if (value)
		*value = s->value;
	if (extra)
		*extra = s->extra;
	return 0;
}

static void mdgpud_handles_release(struct mdgpud_handles *h, uint32_t idx)
{
	struct mdgpud_handle_slot *s = &h->s[idx - 1];

	s->kind = 0;
	s->value = 0;
	s->extra = 0;
	s->parent = 0;
	s->gen = (s->gen + 1) & MDGPUD_H_GEN_MASK;
	s->next_free = h->free_head;
	h->free_head = idx;
	h->count--;
}

int mdgpud_handles_del(struct mdgpud_handles *h, uint32_t handle,
		       uint32_t kind)
{
	if (!mdgpud_handles_slot(h, handle, kind))
		return -ENOENT;
	mdgpud_handles_release(h, handle & MDGPUD_H_INDEX_MASK);
	return 0;
}

void mdgpud_handles_del_children(struct mdgpud_handles *h, uint32_t module)
{
	for (uint32_t i = 0; i < h->capacity; i++)
		if (h->s[i].kind == MDGPUD_H_FUNC && h->s[i].parent == module)
			mdgpud_handles_release(h, i + 1);
}

int mdgpud_handles_next(const struct mdgpud_handles *h, uint32_t kind,
			uint32_t *cursor, uint32_t *handle, uint64_t *value)
{
	for (uint32_t i = *cursor; i < h->capacity; i++) {
		if (h->s[i].kind != kind)
			continue;
		*handle = (h->s[i].gen << MDGPUD_H_INDEX_BITS) | (i + 1);
		*value = h->s[i].value;
		*cursor = i + 1;
		return 0;
	}
	*cursor = h->capacity;
	return -ENOENT;
}

uint32_t mdgpud_handles_count(const struct mdgpud_handles *h)
{
	return h->count;
}
