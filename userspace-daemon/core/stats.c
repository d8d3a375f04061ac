// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Per-vGPU statistics: snapshots for other threads and the SIGUSR1 dump.
 */
#include <inttypes.h>
#include <pthread.h>
#include <string.h>

#include "core_priv.h"
#include "mdgpud/log.h"

void mdgpud_stats_wait_add(uint64_t hist[MDGPUD_WAIT_HIST_BUCKETS],
			   uint64_t *sum_ns, uint64_t wait_ns)
{
	unsigned int bucket = wait_ns ?
		63 - (unsigned int)__builtin_clzll(wait_ns) : 0;

	hist[bucket]++;
	if (__builtin_add_overflow(*sum_ns, wait_ns, sum_ns))
		*sum_ns = UINT64_MAX;
}

static uint64_t mdgpud_stats_hist_pct(const uint64_t *h, uint64_t total,
				      unsigned int pct)
{
	uint64_t want = (total * pct + 99) / 100, acc = 0;

	for (unsigned int i = 0; i < MDGPUD_HIST_BUCKETS; i++) {
		acc += h[i];
		if (acc >= want && want)
			return i >= 63 ? UINT64_MAX : (2ULL << i) - 1;
	}
	return 0;
}

/* Under core->lock: the usage window moves forward as it is read. */
static void mdgpud_stats_fill_locked(struct mdgpud_vgpu *v,
				     struct mdgpud_vgpu_stats *s)
{
	uint64_t total = 0;

	for (unsigned int i = 0; i < MDGPUD_HIST_BUCKETS; i++)
		total += v->hist[i];
	*s = (struct mdgpud_vgpu_stats){
		.vgpu_id = v->id, .type_id = v->type->id,
		.gpu_ns = v->gpu_ns, .slices = v->slices,
		.commands = v->commands,
		.errors = v->errors, .bytes_copied = v->bytes_copied,
		.hangs = v->hangs, .ctx_losses = v->ctx_losses,
		.ctx_lost = v->ctx_err != 0,
		.ctx_starting = v->starting,
		.wait_p50_ns = mdgpud_stats_hist_pct(v->hist, total, 50),
		.wait_p99_ns = mdgpud_stats_hist_pct(v->hist, total, 99),
		.fb_quota = mdgpud_memtab_quota(v->mem),
		.fb_used = mdgpud_memtab_used(v->mem),
		.fb_requested = mdgpud_memtab_requested(v->mem),
		.allocations = mdgpud_memtab_count(v->mem),
		.weight = v->entity.weight,
		.cap_pct = v->entity.cap_pct,
		.priority = v->entity.priority,
		.resets = v->resets,
		.gpu_ns_window = mdgpud_usage_window(&v->usage,
						     mdgpud_now_ns()),
	};
	memcpy(s->uuid, v->uuid, sizeof(s->uuid));
	memcpy(s->wait_hist, v->hist, sizeof(s->wait_hist));
	s->wait_sum_ns = v->wait_sum_ns;
}

size_t mdgpud_core_stats(struct mdgpud_core *c, struct mdgpud_vgpu_stats *out,
			 size_t max)
{
	size_t n = 0;

	pthread_mutex_lock(&c->lock);
	for (uint32_t i = 0; i < c->nr_vgpus && n < max; i++)
		mdgpud_stats_fill_locked(c->vgpus[i], &out[n++]);
	pthread_mutex_unlock(&c->lock);
	return n;
}

uint64_t mdgpud_core_fb_used(struct mdgpud_core *c)
{
	uint64_t s = 0;

	pthread_mutex_lock(&c->lock);
	for (uint32_t i = 0; i < c->nr_vgpus; i++)
		s += mdgpud_memtab_used(c->vgpus[i]->mem);
	pthread_mutex_unlock(&c->lock);
	return s;
}

void mdgpud_core_totals(struct mdgpud_core *c, struct mdgpud_core_totals *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->totals;
	pthread_mutex_unlock(&c->lock);
}

uint32_t mdgpud_core_nr_vgpus(struct mdgpud_core *c)
{
	uint32_t n;

	pthread_mutex_lock(&c->lock);
	n = c->nr_vgpus;
	pthread_mutex_unlock(&c->lock);
	return n;
}

void mdgpud_core_dump(struct mdgpud_core *c)
{
	struct mdgpud_vgpu_stats s;

	pthread_mutex_lock(&c->lock);
	mdgpud_log(MDGPUD_LOG_INFO, "status: %s (%s), %u vGPUs, fb %" PRIu64
		   " MiB", c->gpu.name, c->bops->name, c->nr_vgpus,
		   c->gpu.fb_size >> 20);
	for (uint32_t i = 0; i < c->nr_vgpus; i++) {
		mdgpud_stats_fill_locked(c->vgpus[i], &s);
		mdgpud_log(MDGPUD_LOG_INFO,
			   "vgpu %u type %u: gpu %" PRIu64 " ns in %" PRIu64
			   " slices, %" PRIu64
			   " cmds (%" PRIu64 " failed), %" PRIu64
			   " bytes copied, wait p50 <= %" PRIu64
			   " ns p99 <= %" PRIu64 " ns, fb %" PRIu64 "/%" PRIu64
			   " bytes in %u allocations, weight %u cap %u%% priority %u",
			   s.vgpu_id, s.type_id,
			   s.gpu_ns, s.slices, s.commands, s.errors, s.bytes_copied,
			   s.wait_p50_ns, s.wait_p99_ns, s.fb_used, s.fb_quota,
			   s.allocations, s.weight, s.cap_pct, s.priority);
	}
	pthread_mutex_unlock(&c->lock);
}
