/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Per-vGPU device memory table and hard quota.
 *
 * Every allocation a vGPU owns is one entry: [addr, addr + size) as the
 * tenant asked, and `reserved` bytes the backend really set aside.  Both are
 * accounted; the quota is enforced on reserved bytes (what the tenant costs
 * the GPU), checked once before the backend is asked (with the requested
 * size) and once after (with what it reserved).
 */
#ifndef MDGPUD_MEMTAB_H
#define MDGPUD_MEMTAB_H

#include <stdint.h>

struct mdgpud_memtab;

struct mdgpud_mem_entry {
	uint64_t addr;
	uint64_t size;		/* bytes requested */
	uint64_t reserved;	/* bytes the backend set aside */
};

/* max_entries: limit of live allocations (config), quota in bytes. */
int mdgpud_memtab_create(uint64_t quota, uint32_t max_entries,
			 struct mdgpud_memtab **out);
void mdgpud_memtab_destroy(struct mdgpud_memtab *mt);

/* -ENOMEM if `size` more bytes do not fit the quota or the table. */
int mdgpud_memtab_precheck(const struct mdgpud_memtab *mt, uint64_t size);
/* Record an allocation; -ENOMEM past quota, -EEXIST on overlap. */
int mdgpud_memtab_insert(struct mdgpud_memtab *mt, uint64_t addr,
			 uint64_t size, uint64_t reserved);
/* Remove the allocation that starts exactly at addr; -ENOENT otherwise. */
int mdgpud_memtab_remove(struct mdgpud_memtab *mt, uint64_t addr,
			 struct mdgpud_mem_entry *removed);
/*
 * 0 if [addr, addr + len) lies inside one allocation of this table (len 0
 * is allowed only at an address inside an allocation); -ENOENT if addr is
 * in no allocation; -ERANGE if it starts inside one and runs past its end
 * (or the sum overflows).
 */
int mdgpud_memtab_check(const struct mdgpud_memtab *mt, uint64_t addr,
			uint64_t len);
/* Pop any entry (for teardown); 0 when one was removed, -ENOENT if empty. */
int mdgpud_memtab_pop(struct mdgpud_memtab *mt, struct mdgpud_mem_entry *e);

uint64_t mdgpud_memtab_quota(const struct mdgpud_memtab *mt);
uint64_t mdgpud_memtab_used(const struct mdgpud_memtab *mt);	/* reserved */
uint64_t mdgpud_memtab_requested(const struct mdgpud_memtab *mt);
uint32_t mdgpud_memtab_count(const struct mdgpud_memtab *mt);

#endif /* MDGPUD_MEMTAB_H */
