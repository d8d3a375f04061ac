/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Per-uid accounting of what socket clients hold (core/limits.c): their
 * connections (handshakes included), vGPUs and pinned host bytes (the
 * aperture memfd the daemon allocates for them, their zero-copy host area
 * included), each against a config limit (uid_max_connections,
 * uid_max_vgpus, uid_max_pinned_mib; 0 = unlimited).  Uids listed in
 * uid_limits_exempt are counted but never refused; root is not exempt
 * unless listed.
 *
 * A refusal is logged at most once per uid per limit_log_interval_s (the
 * message counts the refusals that were not logged), so a client retrying
 * in a loop cannot flood the log.  The core owns the table; transports
 * charge and uncharge from the dispatcher thread; readers (the admin
 * socket's "uids", tests) may take a snapshot from any thread.
 */
#ifndef MDGPUD_LIMITS_H
#define MDGPUD_LIMITS_H

#include <stddef.h>
#include <stdint.h>

struct mdgpud_config;
struct mdgpud_core;
struct mdgpud_limits;

enum mdgpud_limit {
	MDGPUD_LIMIT_CONNECTIONS,	/* refused with -EUSERS */
	MDGPUD_LIMIT_VGPUS,		/* refused with -EDQUOT */
	MDGPUD_LIMIT_PINNED,		/* bytes; refused with -ENOMEM */
	MDGPUD_LIMIT_COUNT,
};

/* One uid's usage, a snapshot. */
struct mdgpud_uid_usage {
	uint32_t uid;
	uint32_t exempt;		/* 1: in uid_limits_exempt */
	uint64_t used[MDGPUD_LIMIT_COUNT];
	uint64_t limit[MDGPUD_LIMIT_COUNT];	/* 0 = unlimited */
	uint64_t refused[MDGPUD_LIMIT_COUNT];
	uint64_t handshake_timeouts;	/* dropped by handshake_timeout_ms */
};

int mdgpud_limits_create(const struct mdgpud_config *cfg,
			 struct mdgpud_limits **out);
void mdgpud_limits_destroy(struct mdgpud_limits *l);
/* The core's table. */
struct mdgpud_limits *mdgpud_core_limits(struct mdgpud_core *c);

/*
 * Charges `amount` of `what` to uid: 0, or the limit's negative errno
 * (above) with nothing charged and the refusal counted and logged (rate
 * limited).  -ENOMEM also when the uid's record cannot be allocated.
 * Overflow-safe: an amount whose sum with the usage wraps is refused.
 */
int mdgpud_limits_charge(struct mdgpud_limits *l, uint32_t uid,
			 enum mdgpud_limit what, uint64_t amount);
/* Gives back what a successful charge took. */
void mdgpud_limits_uncharge(struct mdgpud_limits *l, uint32_t uid,
			    enum mdgpud_limit what, uint64_t amount);
/*
 * A client of uid dropped for not finishing its handshake in time:
 * counted, and logged like a refusal (at most once per interval).
 */
void mdgpud_limits_note_timeout(struct mdgpud_limits *l, uint32_t uid,
				uint32_t timeout_ms);
/*
 * Usage of every uid that holds something or was refused or timed out
 * within the last limit_log_interval_s, sorted by uid; returns the number
 * of uids (which may exceed max: only max are written).
 */
size_t mdgpud_limits_usage(struct mdgpud_limits *l,
			   struct mdgpud_uid_usage *out, size_t max);

#endif /* MDGPUD_LIMITS_H */
