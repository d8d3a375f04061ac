// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Per-uid accounting and limits of socket clients (include/mdgpud/limits.h,
 * Documentation/daemon.md "Per-uid limits").
 *
 * One record per uid in a table of fixed capacity (max_vgpus + 64): a uid
 * that holds anything holds at least one connection, and the socket
 * transport keeps at most max_vgpus + 32 connections (live, handshaking,
 * refused), so records with usage always fit.  A record whose usage is
 * back to zero is kept for limit_log_interval_s after its last refusal or
 * timeout, so that the log stays rate limited for a client that
 * reconnects in a loop; after that, or when its slot is needed, it goes.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core_priv.h"
#include "mdgpud/limits.h"
#include "mdgpud/log.h"

/* Records beyond max_vgpus (room for handshakes and refused uids). */
#define MDGPUD_LIMITS_SPARE	64

struct mdgpud_uid_rec {
	bool in_use;
	bool exempt;
	uint32_t uid;
	uint64_t used[MDGPUD_LIMIT_COUNT];
	uint64_t refused[MDGPUD_LIMIT_COUNT];
	uint64_t timeouts;
	uint64_t last_log_ns;		/* 0: never logged */
	uint64_t last_event_ns;		/* last refusal or timeout */
	uint64_t unlogged;		/* events since the last message */
};

struct mdgpud_limits {
	pthread_mutex_t lock;		/* everything below */
	uint64_t limit[MDGPUD_LIMIT_COUNT];	/* 0 = unlimited */
	uint64_t log_interval_ns;
	uint32_t exempt[MDGPUD_UID_EXEMPT_MAX];
	uint32_t nr_exempt;
	struct mdgpud_uid_rec *rec;
	size_t nr_rec;			/* capacity */
};

static const struct {
	const char *name;		/* in log messages */
	int err;			/* the refusal */
} mdgpud_limit_info[MDGPUD_LIMIT_COUNT] = {
	[MDGPUD_LIMIT_CONNECTIONS] = { "connections", EUSERS },
	[MDGPUD_LIMIT_VGPUS] = { "vGPUs", EDQUOT },
	[MDGPUD_LIMIT_PINNED] = { "pinned host bytes", ENOMEM },
};

int mdgpud_limits_create(const struct mdgpud_config *cfg,
			 struct mdgpud_limits **out)
{
	struct mdgpud_limits *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->nr_rec = (size_t)cfg->max_vgpus + MDGPUD_LIMITS_SPARE;
	l->rec = calloc(l->nr_rec, sizeof(*l->rec));
	if (!l->rec) {
		free(l);
		return -ENOMEM;
	}
	pthread_mutex_init(&l->lock, NULL);
	l->limit[MDGPUD_LIMIT_CONNECTIONS] = cfg->uid_max_connections;
	l->limit[MDGPUD_LIMIT_VGPUS] = cfg->uid_max_vgpus;
	/* uid_max_pinned_mib <= 2^32 (config.c): no overflow. */
	l->limit[MDGPUD_LIMIT_PINNED] = cfg->uid_max_pinned_mib << 20;
	l->log_interval_ns = (uint64_t)cfg->limit_log_interval_s * 1000000000;
	l->nr_exempt = cfg->nr_uid_limits_exempt;
	memcpy(l->exempt, cfg->uid_limits_exempt, sizeof(l->exempt));
	*out = l;
	return 0;
}

void mdgpud_limits_destroy(struct mdgpud_limits *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l->rec);
	free(l);
}

struct mdgpud_limits *mdgpud_core_limits(struct mdgpud_core *c)
{
	return c->limits;
}

static bool mdgpud_rec_idle(const struct mdgpud_uid_rec *r)
{
	for (int i = 0; i < MDGPUD_LIMIT_COUNT; i++)
		if (r->used[i])
			return false;
	return true;
}

/* Idle and its last event older than the log interval: may go. */
static bool mdgpud_rec_stale(const struct mdgpud_limits *l,
			     const struct mdgpud_uid_rec *r, uint64_t now)
{
	return mdgpud_rec_idle(r) &&
	       (!r->last_event_ns ||
		now - r->last_event_ns >= l->log_interval_ns);
}

/*
 * uid's record; with `create`, a new one when it has none (in a free
 * slot, else in place of the idle record whose last event is oldest).
 * NULL when there is none (or no room).  Caller holds l->lock.
 */
static struct mdgpud_uid_rec *mdgpud_rec_get(struct mdgpud_limits *l,
					     uint32_t uid, bool create)
{
	struct mdgpud_uid_rec *free_slot = NULL, *victim = NULL;

	for (size_t i = 0; i < l->nr_rec; i++) {
		struct mdgpud_uid_rec *r = &l->rec[i];

		if (!r->in_use) {
			if (!free_slot)
				free_slot = r;
			continue;
		}
		if (r->uid == uid)
			return r;
		if (mdgpud_rec_idle(r) &&
		    (!victim || r->last_event_ns < victim->last_event_ns))
			victim = r;
	}
	if (!create)
		return NULL;
	if (!free_slot)
		free_slot = victim;
	if (!free_slot)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->in_use = true;
	free_slot->uid = uid;
	for (uint32_t i = 0; i < l->nr_exempt; i++)
		if (l->exempt[i] == uid)
			free_slot->exempt = true;
	return free_slot;
}

/* Drops r if nothing keeps it.  Caller holds l->lock. */
static void mdgpud_rec_put(struct mdgpud_limits *l, struct mdgpud_uid_rec *r,
			   uint64_t now)
{
	if (mdgpud_rec_stale(l, r, now))
		r->in_use = false;
}

/*
 * Counts an event of r (a refusal or a timeout) and says whether to log
 * it: the first one of each interval is logged, the others only counted.
 * *unlogged is the number not logged before this message.
 */
static bool mdgpud_rec_event(struct mdgpud_limits *l, struct mdgpud_uid_rec *r,
			     uint64_t now, uint64_t *unlogged)
{
	r->last_event_ns = now;
	if (r->last_log_ns && now - r->last_log_ns < l->log_interval_ns) {
		r->unlogged++;
		return false;
	}
	*unlogged = r->unlogged;
	r->unlogged = 0;
	r->last_log_ns = now;
	return true;
}

int mdgpud_limits_charge(struct mdgpud_limits *l, uint32_t uid,
			 enum mdgpud_limit what, uint64_t amount)
{
	uint64_t now = mdgpud_now_ns(), sum, unlogged = 0, used, lim;
	struct mdgpud_uid_rec *r;
	bool over, log;

	if ((unsigned int)what >= MDGPUD_LIMIT_COUNT)
		return -EINVAL;
	pthread_mutex_lock(&l->lock);
	r = mdgpud_rec_get(l, uid, true);
	if (!r) {
		pthread_mutex_unlock(&l->lock);
		mdgpud_warn("uid %u: no room to account for it: refused",
			    (unsigned int)uid);
		return -ENOMEM;
	}
	used = r->used[what];
	lim = l->limit[what];
	over = __builtin_add_overflow(used, amount, &sum) ||
	       (lim && !r->exempt && sum > lim);
	if (!over) {
		r->used[what] = sum;
		pthread_mutex_unlock(&l->lock);
		return 0;
	}
	r->refused[what]++;
	log = mdgpud_rec_event(l, r, now, &unlogged);
	mdgpud_rec_put(l, r, now);
	pthread_mutex_unlock(&l->lock);
	if (log)
		mdgpud_warn("uid %u: %s limit reached (%" PRIu64 " held + %"
			    PRIu64 " asked > %" PRIu64 "): refused with %s; %"
			    PRIu64 " refusals not logged before this one "
			    "(at most one message per uid every %" PRIu64 " s)",
			    (unsigned int)uid, mdgpud_limit_info[what].name,
			    used, amount, lim,
			    strerror(mdgpud_limit_info[what].err), unlogged,
			    l->log_interval_ns / 1000000000);
	return -mdgpud_limit_info[what].err;
}

void mdgpud_limits_uncharge(struct mdgpud_limits *l, uint32_t uid,
			    enum mdgpud_limit what, uint64_t amount)
{
	uint64_t now = mdgpud_now_ns();
	struct mdgpud_uid_rec *r;

	if ((unsigned int)what >= MDGPUD_LIMIT_COUNT)
		return;
	pthread_mutex_lock(&l->lock);
	r = mdgpud_rec_get(l, uid, false);
	if (!r || r->used[what] < amount) {
		pthread_mutex_unlock(&l->lock);
		mdgpud_err("uid %u: uncharge of %" PRIu64 " %s it does not "
			   "hold (a bug)", (unsigned int)uid, amount,
			   mdgpud_limit_info[(unsigned int)what].name);
		return;
	}
	r->used[what] -= amount;
	mdgpud_rec_put(l, r, now);
	pthread_mutex_unlock(&l->lock);
}

void mdgpud_limits_note_timeout(struct mdgpud_limits *l, uint32_t uid,
				uint32_t timeout_ms)
{
	uint64_t now = mdgpud_now_ns(), unlogged = 0;
	struct mdgpud_uid_rec *r;
	bool log = true;

	pthread_mutex_lock(&l->lock);
	r = mdgpud_rec_get(l, uid, true);
	if (r) {
		r->timeouts++;
		log = mdgpud_rec_event(l, r, now, &unlogged);
		mdgpud_rec_put(l, r, now);
	}
	pthread_mutex_unlock(&l->lock);
	if (log)
		mdgpud_warn("uid %u: a client sent no complete hello within "
			    "%u ms: dropped; %" PRIu64 " such drops and "
			    "refusals not logged before this one",
			    (unsigned int)uid, timeout_ms, unlogged);
}

static int mdgpud_usage_cmp(const void *a, const void *b)
{
	const struct mdgpud_uid_usage *x = a, *y = b;

	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

size_t mdgpud_limits_usage(struct mdgpud_limits *l,
			   struct mdgpud_uid_usage *out, size_t max)
{
	uint64_t now = mdgpud_now_ns();
	size_t n = 0;

	pthread_mutex_lock(&l->lock);
	for (size_t i = 0; i < l->nr_rec; i++) {
		struct mdgpud_uid_rec *r = &l->rec[i];

		if (!r->in_use)
			continue;
		mdgpud_rec_put(l, r, now);
		if (!r->in_use)
			continue;
		if (n < max) {
			struct mdgpud_uid_usage *u = &out[n];

			memset(u, 0, sizeof(*u));
			u->uid = r->uid;
			u->exempt = r->exempt;
			memcpy(u->used, r->used, sizeof(u->used));
			memcpy(u->limit, l->limit, sizeof(u->limit));
			memcpy(u->refused, r->refused, sizeof(u->refused));
			u->handshake_timeouts = r->timeouts;
		}
		n++;
	}
	pthread_mutex_unlock(&l->lock);
	if (out && max)
		qsort(out, n < max ? n : max, sizeof(*out), mdgpud_usage_cmp);
	return n;
}
