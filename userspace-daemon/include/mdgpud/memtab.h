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

#include <stdbool.h>
#include <stdint.h>

struct mdgpud_memtab;

struct mdgpud_mem_entry {
	uint64_t addr;
	uint64_t size;		/* bytes requested */
	uint64_t reserved;	/* bytes the backend set aside */
	uint32_t module;	/* 0: an allocation; else the guest handle of
				 * the module whose global this range is */
	bool host;		/* host memory the client registered
				 * (HOST_REGISTER), not an allocation */
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
/* Remove the allocation that starts exactly at addr; -ENOENT otherwise,
 * -EINVAL for a module global's range. */
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

/*
 * Module globals (MODULE_GLOBAL): ranges COPY and MEMSET may name like an
 * allocation (mdgpud_memtab_check), not charged to the quota, refused by
 * mdgpud_memtab_remove (-EINVAL), gone with their module.  Inserting the
 * same range of the same module again changes nothing (0); a range that
 * overlaps another is -EEXIST; a full table -ENOSPC.
 */
int mdgpud_memtab_insert_global(struct mdgpud_memtab *mt, uint64_t addr,
				uint64_t size, uint32_t module);
/* Forget every global of `module`. */
void mdgpud_memtab_remove_module(struct mdgpud_memtab *mt, uint32_t module);

/*
 * Registered host memory (HOST_REGISTER): a range COPY, MEMSET and
 * STREAM_MEMOP may name like an allocation, not charged to the quota
 * (the client's own memory), refused by mdgpud_memtab_remove (-EINVAL).
 * Insert: -EEXIST on overlap, -ENOSPC with the table full.  Remove: the
 * registration that starts exactly at addr, -ENOENT if there is none.
 */
int mdgpud_memtab_insert_host(struct mdgpud_memtab *mt, uint64_t addr,
			      uint64_t size);
int mdgpud_memtab_remove_host(struct mdgpud_memtab *mt, uint64_t addr,
			      struct mdgpud_mem_entry *removed);

/*
 * Device memory a context reserves for something other than an
 * allocation (CTX_LIMIT: stack, printf FIFO, malloc heap), by slot
 * 0..MDGPUD_MEMTAB_CHARGES-1: charged to the quota like reserved bytes.
 * mdgpud_memtab_charge_check: would replacing the slot's charge with
 * `bytes` fit (0) or not (-ENOMEM); _set replaces it (checked again).
 */
#define MDGPUD_MEMTAB_CHARGES	3
int mdgpud_memtab_charge_check(const struct mdgpud_memtab *mt, uint32_t slot,
			       uint64_t bytes);
int mdgpud_memtab_charge_set(struct mdgpud_memtab *mt, uint32_t slot,
			     uint64_t bytes);
uint64_t mdgpud_memtab_charge(const struct mdgpud_memtab *mt, uint32_t slot);

uint64_t mdgpud_memtab_quota(const struct mdgpud_memtab *mt);
uint64_t mdgpud_memtab_used(const struct mdgpud_memtab *mt);	/* reserved */
uint64_t mdgpud_memtab_requested(const struct mdgpud_memtab *mt);
/* Allocations (module globals not counted). */
uint32_t mdgpud_memtab_count(const struct mdgpud_memtab *mt);

#endif /* MDGPUD_MEMTAB_H */
