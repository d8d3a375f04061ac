// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The workers' ids (config worker_uid_base, worker_uid_count;
 * Documentation/daemon.md, "Worker sandbox"): each worker runs as a uid
 * of its own, with the gid of the same number, taken from a range, so
 * that a tenant who takes over its worker (the driver parses tenant code)
 * cannot signal, ptrace or read another tenant's worker: the kernel lets
 * a process do so only to processes of its own uid.
 *
 * An id is taken before its worker is started and given back only once
 * that worker has been reaped (spawn.c), so no two live workers ever hold
 * the same one; a worker that could not be reaped keeps its id.  The
 * search starts after the id handed out last (next fit): a freed id comes
 * back only after every other free one of the range was used, as late as
 * possible, since files a worker left owned by its uid outlive it.
 *
 * One pool per range in a process: backends opened with the same range
 * share it (a test opens several backends at once), and a range that
 * overlaps another open one is refused, so that one process never hands
 * one id to two workers.  A single mutex guards the list of pools and
 * their bitmaps: ids are given back by background reaper threads too.
 */
#include "sandbox.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <mdgpud/log.h>

struct mdgpud_cuda_ids {
	uint32_t base, count;
	uint32_t next;		/* where the next search starts (index) */
	uint32_t in_use;
	unsigned int refs;	/* backends and background reapers */
	struct mdgpud_cuda_ids *list_next;
	uint64_t bits[];	/* bit i: base + i is held */
};

static pthread_mutex_t mdgpud_cuda_ids_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mdgpud_cuda_ids *mdgpud_cuda_ids_list;

/* The range must be real ids: not root, not (uid_t)-1 ("unchanged" to
 * setresuid), at most MDGPUD_CUDA_IDS_MAX of them. */
int mdgpud_cuda_ids_check_range(uint32_t base, uint32_t count)
{
	if (!base || base == UINT32_MAX || !count ||
	    count > MDGPUD_CUDA_IDS_MAX || count - 1 > UINT32_MAX - 1 - base)
		return -EINVAL;
	return 0;
}

int mdgpud_cuda_ids_open(uint32_t base, uint32_t count,
			 struct mdgpud_cuda_ids **out)
{
	struct mdgpud_cuda_ids *p;
	size_t words;
	int ret = 0;

	if (mdgpud_cuda_ids_check_range(base, count))
		return -EINVAL;
	pthread_mutex_lock(&mdgpud_cuda_ids_lock);
	for (p = mdgpud_cuda_ids_list; p; p = p->list_next) {
		if (p->base == base && p->count == count)
			break;
		/* [base, base + count) against [p->base, p->base + count):
		 * both end at most at UINT32_MAX (checked above). */
		if (base < p->base + p->count && p->base < base + count) {
			mdgpud_err("cuda: worker uids %u..%u overlap %u..%u of "
				   "another open cuda backend", base,
				   base + count - 1, p->base,
				   p->base + p->count - 1);
			ret = -EBUSY;
			goto out;
		}
	}
	if (p) {
		p->refs++;
		*out = p;
		goto out;
	}
	words = (count + 63) / 64;
	p = calloc(1, sizeof(*p) + words * sizeof(p->bits[0]));
	if (!p) {
		ret = -ENOMEM;
		goto out;
	}
	p->base = base;
	p->count = count;
	p->refs = 1;
	p->list_next = mdgpud_cuda_ids_list;
	mdgpud_cuda_ids_list = p;
	*out = p;
out:
	pthread_mutex_unlock(&mdgpud_cuda_ids_lock);
	return ret;
}

void mdgpud_cuda_ids_hold(struct mdgpud_cuda_ids *ids)
{
	pthread_mutex_lock(&mdgpud_cuda_ids_lock);
	ids->refs++;
	pthread_mutex_unlock(&mdgpud_cuda_ids_lock);
}

void mdgpud_cuda_ids_close(struct mdgpud_cuda_ids *ids)
{
	struct mdgpud_cuda_ids **pp;

	if (!ids)
		return;
	pthread_mutex_lock(&mdgpud_cuda_ids_lock);
	if (--ids->refs) {
		pthread_mutex_unlock(&mdgpud_cuda_ids_lock);
		return;
	}
	for (pp = &mdgpud_cuda_ids_list; *pp != ids; pp = &(*pp)->list_next)
		;
	*pp = ids->list_next;
	pthread_mutex_unlock(&mdgpud_cuda_ids_lock);
	free(ids);
}

static bool mdgpud_cuda_ids_held(const struct mdgpud_cuda_ids *p, uint32_t i)
{
	return p->bits[i / 64] >> (i % 64) & 1;
}

int mdgpud_cuda_ids_get(struct mdgpud_cuda_ids *ids, uint32_t *id)
{
	int ret = -EBUSY;

	pthread_mutex_lock(&mdgpud_cuda_ids_lock);
	for (uint32_t n = 0; n < ids->count && ids->in_use < ids->count; n++) {
		uint32_t i = (ids->next + n) % ids->count;

		if (mdgpud_cuda_ids_held(ids, i))
			continue;
		ids->bits[i / 64] |= 1ull << (i % 64);
		ids->in_use++;
		ids->next = (i + 1) % ids->count;
		*id = ids->base + i;
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&mdgpud_cuda_ids_lock);
	return ret;
}

void mdgpud_cuda_ids_put(struct mdgpud_cuda_ids *ids, uint32_t id)
{
	uint32_t i = id - ids->base;
	bool held;

	pthread_mutex_lock(&mdgpud_cuda_ids_lock);
	held = id >= ids->base && i < ids->count &&
	       mdgpud_cuda_ids_held(ids, i);
	if (held) {
		ids->bits[i / 64] &= ~(1ull << (i % 64));
		ids->in_use--;
	}
	pthread_mutex_unlock(&mdgpud_cuda_ids_lock);
	if (!held)	/* a bug of the caller: nothing to undo */
		mdgpud_warn("cuda: worker uid %u given back but not held", id);
}

uint32_t mdgpud_cuda_ids_in_use(struct mdgpud_cuda_ids *ids)
{
	uint32_t n;

	pthread_mutex_lock(&mdgpud_cuda_ids_lock);
	n = ids->in_use;
	pthread_mutex_unlock(&mdgpud_cuda_ids_lock);
	return n;
}
