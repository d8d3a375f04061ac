// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Per-vGPU allocation table: a sorted array of disjoint ranges, binary
 * searched.  All arithmetic on tenant-supplied values is overflow-checked.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mdgpud/memtab.h"

struct mdgpud_memtab {
	uint64_t quota;
	uint64_t used;		/* sum of reserved, plus charges */
	uint64_t requested;	/* sum of size */
	uint32_t count;		/* entries, globals included */
	uint32_t globals;	/* entries that are module globals */
	uint32_t hosts;		/* entries that are host registrations */
	uint32_t max_entries;
	uint64_t charge[MDGPUD_MEMTAB_CHARGES];
	struct mdgpud_mem_entry *e;	/* sorted by addr, disjoint */
};

int mdgpud_memtab_create(uint64_t quota, uint32_t max_entries,
			 struct mdgpud_memtab **out)
{
	struct mdgpud_memtab *mt;

	if (!max_entries)
		return -EINVAL;
	mt = calloc(1, sizeof(*mt));
	if (!mt)
		return -ENOMEM;
	mt->e = calloc(max_entries, sizeof(*mt->e));
	if (!mt->e) {
		free(mt);
		return -ENOMEM;
	}
	mt->quota = quota;
	mt->max_entries = max_entries;
	*out = mt;
	return 0;
}

void mdgpud_memtab_destroy(struct mdgpud_memtab *mt)
{
	if (!mt)
		return;
	free(mt->e);
	free(mt);
}

/* Index of the last entry with e.addr <= addr, or -1. */
static long mdgpud_memtab_floor(const struct mdgpud_memtab *mt, uint64_t addr)
{
	long lo = 0, hi = (long)mt->count - 1, ans = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (mt->e[mid].addr <= addr) {
			ans = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return ans;
}

int mdgpud_memtab_precheck(const struct mdgpud_memtab *mt, uint64_t size)
{
	uint64_t total;

	if (mt->count >= mt->max_entries)
		return -ENOMEM;
	if (__builtin_add_overflow(mt->used, size, &total) || total > mt->quota)
		return -ENOMEM;
	return 0;
}

int mdgpud_memtab_insert(struct mdgpud_memtab *mt, uint64_t addr,
			 uint64_t size, uint64_t reserved)
{
	uint64_t end, total, req;
	long i;

	if (!size || __builtin_add_overflow(addr, size, &end))
		return -EINVAL;
	if (mt->count >= mt->max_entries)
		return -ENOMEM;
	if (__builtin_add_overflow(mt->used, reserved, &total) ||
	    total > mt->quota)
		return -ENOMEM;
	if (__builtin_add_overflow(mt->requested, size, &req))
		return -ENOMEM;
	i = mdgpud_memtab_floor(mt, addr);
	if (i >= 0 && mt->e[i].addr + mt->e[i].size > addr)
		return -EEXIST;
	if ((uint32_t)(i + 1) < mt->count && mt->e[i + 1].addr < end)
		return -EEXIST;
	memmove(&mt->e[i + 2], &mt->e[i + 1],
		(mt->count - (uint32_t)(i + 1)) * sizeof(*mt->e));
	mt->e[i + 1] = (struct mdgpud_mem_entry){ addr, size, reserved, 0,
						  false };
	mt->count++;
	mt->used = total;
	mt->requested = req;
	return 0;
}

static void mdgpud_memtab_delete(struct mdgpud_memtab *mt, uint32_t i,
				 struct mdgpud_mem_entry *removed)
{
	if (removed)
		*removed = mt->e[i];
	if (mt->e[i].module) {
		mt->globals--;
	} else if (mt->e[i].host) {
		mt->hosts--;
	} else {
		mt->used -= mt->e[i].reserved;
		mt->requested -= mt->e[i].size;
	}
	memmove(&mt->e[i], &mt->e[i + 1], (mt->count - i - 1) * sizeof(*mt->e));
	mt->count--;
}

int mdgpud_memtab_remove(struct mdgpud_memtab *mt, uint64_t addr,
			 struct mdgpud_mem_entry *removed)
{
	long i = mdgpud_memtab_floor(mt, addr);

	if (i < 0 || mt->e[i].addr != addr)
		return -ENOENT;
	if (mt->e[i].module || mt->e[i].host)
		return -EINVAL;
	mdgpud_memtab_delete(mt, (uint32_t)i, removed);
	return 0;
}

int mdgpud_memtab_pop(struct mdgpud_memtab *mt, struct mdgpud_mem_entry *e)
{
	if (!mt->count)
		return -ENOENT;
	mdgpud_memtab_delete(mt, mt->count - 1, e);
	return 0;
}

int mdgpud_memtab_check(const struct mdgpud_memtab *mt, uint64_t addr,
			uint64_t len)
{
	long i = mdgpud_memtab_floor(mt, addr);
	uint64_t off, end;

	if (i < 0)
		return -ENOENT;
	off = addr - mt->e[i].addr;	/* addr >= e.addr: no underflow */
	if (off >= mt->e[i].size)
		return -ENOENT;
	if (__builtin_add_overflow(off, len, &end) || end > mt->e[i].size)
		return -ERANGE;
	return 0;
}

uint64_t mdgpud_memtab_quota(const struct mdgpud_memtab *mt)
{
	return mt->quota;
}

uint64_t mdgpud_memtab_used(const struct mdgpud_memtab *mt)
{
	return mt->used;
}

uint64_t mdgpud_memtab_requested(const struct mdgpud_memtab *mt)
{
	return mt->requested;
}

uint32_t mdgpud_memtab_count(const struct mdgpud_memtab *mt)
{
	return mt->count - mt->globals - mt->hosts;
}

/*
 * Inserts e, an entry not charged to the quota, at its place: -EEXIST if
 * it overlaps another, -ENOSPC with the table full.
 */
static int mdgpud_memtab_place(struct mdgpud_memtab *mt,
			       const struct mdgpud_mem_entry *e)
{
	uint64_t end;
	long i;

	if (!e->size || __builtin_add_overflow(e->addr, e->size, &end))
		return -EINVAL;
	i = mdgpud_memtab_floor(mt, e->addr);
	if (i >= 0 && mt->e[i].addr + mt->e[i].size > e->addr)
		return -EEXIST;
	if ((uint32_t)(i + 1) < mt->count && mt->e[i + 1].addr < end)
		return -EEXIST;
	if (mt->count >= mt->max_entries)
		return -ENOSPC;
	memmove(&mt->e[i + 2], &mt->e[i + 1],
		(mt->count - (uint32_t)(i + 1)) * sizeof(*mt->e));
	mt->e[i + 1] = *e;
	mt->count++;
	return 0;
}

int mdgpud_memtab_insert_global(struct mdgpud_memtab *mt, uint64_t addr,
				uint64_t size, uint32_t module)
{
	struct mdgpud_mem_entry e = { addr, size, 0, module, false };
	long i;
	int ret;

	if (!module)
		return -EINVAL;
	i = mdgpud_memtab_floor(mt, addr);
	if (i >= 0 && mt->e[i].addr == addr && mt->e[i].size == size &&
	    mt->e[i].module == module)
		return 0;	/* asked for before */
	ret = mdgpud_memtab_place(mt, &e);
	if (!ret)
		mt->globals++;
	return ret;
}

int mdgpud_memtab_insert_host(struct mdgpud_memtab *mt, uint64_t addr,
			      uint64_t size)
{
	struct mdgpud_mem_entry e = { addr, size, 0, 0, true };
	int ret = mdgpud_memtab_place(mt, &e);

	if (!ret)
		mt->hosts++;
	return ret;
}

int mdgpud_memtab_remove_host(struct mdgpud_memtab *mt, uint64_t addr,
			      struct mdgpud_mem_entry *removed)
{
	long i = mdgpud_memtab_floor(mt, addr);

	if (i < 0 || mt->e[i].addr != addr || !mt->e[i].host)
		return -ENOENT;
	mdgpud_memtab_delete(mt, (uint32_t)i, removed);
	return 0;
}

void mdgpud_memtab_remove_module(struct mdgpud_memtab *mt, uint32_t module)
{
	for (uint32_t i = 0; i < mt->count;) {
		if (mt->e[i].module == module)
			mdgpud_memtab_delete(mt, i, NULL);
		else
			i++;
	}
}

/* used with slot's charge replaced by bytes, or -ENOMEM past the quota. */
static int mdgpud_memtab_charge_total(const struct mdgpud_memtab *mt,
				      uint32_t slot, uint64_t bytes,
				      uint64_t *total)
{
	if (slot >= MDGPUD_MEMTAB_CHARGES)
		return -EINVAL;
	/* used includes the slot's current charge: no underflow. */
	if (__builtin_add_overflow(mt->used - mt->charge[slot], bytes, total) ||
	    *total > mt->quota)
		return -ENOMEM;
	return 0;
}

int mdgpud_memtab_charge_check(const struct mdgpud_memtab *mt, uint32_t slot,
			       uint64_t bytes)
{
	uint64_t total;

	return mdgpud_memtab_charge_total(mt, slot, bytes, &total);
}

int mdgpud_memtab_charge_set(struct mdgpud_memtab *mt, uint32_t slot,
			     uint64_t bytes)
{
	uint64_t total;
	int ret = mdgpud_memtab_charge_total(mt, slot, bytes, &total);

	if (ret)
		return ret;
	mt->used = total;
	mt->charge[slot] = bytes;
	return 0;
}

uint64_t mdgpud_memtab_charge(const struct mdgpud_memtab *mt, uint32_t slot)
{
	return slot < MDGPUD_MEMTAB_CHARGES ? mt->charge[slot] : 0;
}
