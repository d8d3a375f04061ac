// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpud admin socket: a line protocol for administrators (mdgpuctl),
 * served from the core's event loop, in the dispatcher thread.
 * Documentation/mdgpuctl.md is the protocol's reference.
 *
 * A client must never be able to hold the dispatcher up:
 *   - every socket is non-blocking; a callback reads at most one buffer
 *     (MDGPUD_ADMIN_LINE_MAX bytes) and runs only complete lines;
 *   - a line longer than MDGPUD_ADMIN_LINE_MAX is answered with
 *     "err EMSGSIZE" and its bytes are dropped up to the next newline;
 *   - a response that does not fit in the socket buffer is kept (one
 *     response per connection at most: no further request is read until
 *     it is written) and sent when the socket is writable (EPOLLOUT);
 *   - at most MDGPUD_ADMIN_CONN_MAX connections.  When all are taken, a
 *     new one replaces the connection that has made no progress (no byte
 *     read or written) for the longest time, if that is at least the
 *     eviction idle time (10 s); otherwise the new one gets "err EBUSY".
 * Work per request is bounded by the number of vGPUs (list).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/gpu_select.h"
#include "core_priv.h"
#include "mdgpu_version.h"
#include "mdgpud/admin.h"
#include "mdgpud/limits.h"
#include "mdgpud/log.h"
#include "mdgpud/metrics.h"
#include "mdgpud/sched.h"
#include "mdgpud/unix_listen.h"

/* A response larger than this is a bug (list of 4096 vGPUs is ~1.5 MiB). */
#define MDGPUD_ADMIN_OUT_MAX	(8u << 20)

struct mdgpud_admin_conn {
	struct mdgpud_admin *a;
	int fd;
	uid_t uid;
	pid_t pid;
	bool may_write;
	bool discarding;		/* dropping an overlong line */
	bool eof;			/* peer shut its write side */
	uint64_t last_ns;		/* accept, or last byte read/written */
	char in[MDGPUD_ADMIN_LINE_MAX];
	size_t in_len;
	char *out;
	size_t out_len, out_off, out_cap;
	struct mdgpud_admin_conn *next;
};

struct mdgpud_admin {
	struct mdgpud_core *core;
	int listen_fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	unsigned int nr_conns;
	struct mdgpud_admin_conn *conns;
	uint64_t evict_idle_ns;
};

/* ---------------------------------------------------------------- */
/* Responses                                                        */

static int mdgpud_admin_vappend(char **buf, size_t *len, size_t *cap,
				const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt,
		      ap2);
	va_end(ap2);
	if (n < 0)
		return -EINVAL;
	if (!*buf || *len + (size_t)n + 1 > *cap) {
		size_t ncap = *cap ? *cap : 512;
		char *nb;

		while (ncap < *len + (size_t)n + 1)
			ncap *= 2;
		if (ncap > MDGPUD_ADMIN_OUT_MAX)
			return -ENOMEM;
		nb = realloc(*buf, ncap);
		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = ncap;
		vsnprintf(*buf + *len, *cap - *len, fmt, ap);
	}
	*len += (size_t)n;
	return 0;
}

static int mdgpud_admin_append(char **buf, size_t *len, size_t *cap,
			       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int mdgpud_admin_append(char **buf, size_t *len, size_t *cap,
			       const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = mdgpud_admin_vappend(buf, len, cap, fmt, ap);
	va_end(ap);
	return ret;
}

static const char *mdgpud_admin_errname(int err)
{
	static const struct { int e; const char *n; } names[] = {
		{ EINVAL, "EINVAL" }, { ERANGE, "ERANGE" },
		{ ENOENT, "ENOENT" }, { EPERM, "EPERM" },
		{ EMSGSIZE, "EMSGSIZE" }, { EBUSY, "EBUSY" },
		{ ENOMEM, "ENOMEM" }, { EOPNOTSUPP, "EOPNOTSUPP" },
		{ ENOSYS, "ENOSYS" }, { EIO, "EIO" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err)
			return names[i].n;
	return "EIO";
}

/* Appends the final "err" line; returns -err. */
static int mdgpud_admin_fail(char **buf, size_t *len, size_t *cap, int err,
			     const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int mdgpud_admin_fail(char **buf, size_t *len, size_t *cap, int err,
			     const char *fmt, ...)
{
	char msg[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (mdgpud_admin_append(buf, len, cap, "err %s %s\n",
				mdgpud_admin_errname(err), msg))
		return -ENOMEM;
	return -err;
}

/* ---------------------------------------------------------------- */
/* Parsing                                                          */

#define MDGPUD_ADMIN_MAX_TOKENS	8

/* Split on spaces/tabs; more than max tokens is an error (-E2BIG). */
static int mdgpud_admin_split(char *s, char **tok, int max)
{
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return n;
		if (n == max)
			return -E2BIG;
		tok[n++] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		if (*s)
			*s++ = '\0';
	}
}

/*
 * Strict decimal: digits only (no sign, no space, no "0x", no trailing
 * bytes), at most UINT64_MAX.  -EINVAL not a number, -ERANGE overflow.
 */
static int mdgpud_admin_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v)) {
			/* keep checking that the rest are digits */
			for (s++; *s; s++)
				if (*s < '0' || *s > '9')
					return -EINVAL;
			return -ERANGE;
		}
	}
	*out = v;
	return 0;
}

/* A number in [min, max], with the error line written on failure. */
static int mdgpud_admin_number(const char *what, const char *s, uint64_t min,
			       uint64_t max, uint64_t *out, char **buf,
			       size_t *len, size_t *cap)
{
	int ret = mdgpud_admin_parse_u64(s, out);

	if (ret == -EINVAL)
		return mdgpud_admin_fail(buf, len, cap, EINVAL,
					 "%s: '%.32s' is not a decimal number",
					 what, s);
	if (ret == -ERANGE || *out < min || *out > max)
		return mdgpud_admin_fail(buf, len, cap, ERANGE,
					 "%s: %.32s is out of range %" PRIu64
					 "..%" PRIu64, what, s, min, max);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Requests                                                         */

static struct mdgpud_vgpu *mdgpud_admin_find(struct mdgpud_core *c,
					     uint64_t id)
{
	for (uint32_t i = 0; i < c->nr_vgpus; i++)
		if (c->vgpus[i]->id == id)
			return c->vgpus[i];
	return NULL;
}

static int mdgpud_admin_list(struct mdgpud_core *c, char **buf, size_t *len,
			     size_t *cap)
{
	/* Only the kernel transport's vGPUs are mdevs with a UUID. */
	bool mdev = c->tops && !strcmp(c->tops->name, "kernel");
	struct mdgpud_vgpu_stats *st;
	char uuid[MDGPU_UUID_STR_LEN];
	size_t n;
	int ret = 0;

	st = calloc(c->cfg.max_vgpus, sizeof(*st));
	if (!st)
		return mdgpud_admin_fail(buf, len, cap, ENOMEM, "out of memory");
	n = mdgpud_core_stats(c, st, c->cfg.max_vgpus);
	for (size_t i = 0; i < n && !ret; i++) {
		const struct mdgpud_vtype *t = mdgpud_vtype_by_id(st[i].type_id);

		ret = mdgpud_admin_append(buf, len, cap,
			"id=%u type=%s type_id=%u weight=%u cap=%u priority=%u"
			" gpu_ns=%" PRIu64 " slices=%" PRIu64
			" commands=%" PRIu64 " errors=%" PRIu64
			" bytes_copied=%" PRIu64 " fb_quota=%" PRIu64
			" fb_used=%" PRIu64 " fb_requested=%" PRIu64
			" allocations=%u wait_p50_ns=%" PRIu64
			" wait_p99_ns=%" PRIu64 " context=%s hangs=%" PRIu64
			" contexts_lost=%" PRIu64 " resets=%" PRIu64
			" mdev_uuid=%s\n",
			st[i].vgpu_id, t ? t->name : "unknown", st[i].type_id,
			st[i].weight, st[i].cap_pct, st[i].priority,
			st[i].gpu_ns, st[i].slices, st[i].commands,
			st[i].errors, st[i].bytes_copied, st[i].fb_quota,
			st[i].fb_used, st[i].fb_requested, st[i].allocations,
			st[i].wait_p50_ns, st[i].wait_p99_ns,
			st[i].ctx_starting ? "starting" :
			st[i].ctx_lost ? "lost" : "ok", st[i].hangs,
			st[i].ctx_losses, st[i].resets,
			mdev ? mdgpu_uuid_format(st[i].uuid, uuid) : "-");
	}
	free(st);
	if (ret)
		return mdgpud_admin_fail(buf, len, cap, ENOMEM,
					 "response too large");
	return 0;
}

/*
 * One line per uid that holds something through the socket transport or
 * was refused or timed out lately (core/limits.c), by uid; limits of 0 are
 * unlimited.  At most max_vgpus + 64 uids (the table's capacity).
 */
static int mdgpud_admin_uids(struct mdgpud_core *c, char **buf, size_t *len,
			     size_t *cap)
{
	size_t max = (size_t)c->cfg.max_vgpus + 64, n;
	struct mdgpud_uid_usage *u = calloc(max, sizeof(*u));
	int ret = 0;

	if (!u)
		return mdgpud_admin_fail(buf, len, cap, ENOMEM, "out of memory");
	n = mdgpud_limits_usage(mdgpud_core_limits(c), u, max);
	if (n > max)
		n = max;
	for (size_t i = 0; i < n && !ret; i++)
		ret = mdgpud_admin_append(buf, len, cap,
			"uid=%u exempt=%u connections=%" PRIu64
			" vgpus=%" PRIu64 " pinned_bytes=%" PRIu64
			" max_connections=%" PRIu64 " max_vgpus=%" PRIu64
			" max_pinned_bytes=%" PRIu64
			" refused_connections=%" PRIu64
			" refused_vgpus=%" PRIu64 " refused_pinned=%" PRIu64
			" handshake_timeouts=%" PRIu64 "\n",
			u[i].uid, u[i].exempt,
			u[i].used[MDGPUD_LIMIT_CONNECTIONS],
			u[i].used[MDGPUD_LIMIT_VGPUS],
			u[i].used[MDGPUD_LIMIT_PINNED],
			u[i].limit[MDGPUD_LIMIT_CONNECTIONS],
			u[i].limit[MDGPUD_LIMIT_VGPUS],
			u[i].limit[MDGPUD_LIMIT_PINNED],
			u[i].refused[MDGPUD_LIMIT_CONNECTIONS],
			u[i].refused[MDGPUD_LIMIT_VGPUS],
			u[i].refused[MDGPUD_LIMIT_PINNED],
			u[i].handshake_timeouts);
	free(u);
	if (ret)
		return mdgpud_admin_fail(buf, len, cap, ENOMEM,
					 "response too large");
	return 0;
}

/*
 * s as one token of a data line into out[n]: anything but
 * [A-Za-z0-9._:-] -> '_', "-" for none (NULL or "").
 */
static const char *mdgpud_admin_token(const char *s, char *out, size_t n)
{
	size_t i;

	for (i = 0; s && i < n - 1 && s[i]; i++) {
		char ch = s[i];

		out[i] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
			  ch == '_' || ch == ':') ? ch : '_';
	}
	out[i] = '\0';
	return i ? out : "-";
}

static int mdgpud_admin_stats(struct mdgpud_core *c, char **buf, size_t *len,
			      size_t *cap)
{
	uint64_t gpu_ns = 0, cmds = 0, errs = 0, bytes = 0, fb_used = 0,
		 fb_quota = 0;
	struct mdgpud_core_totals t;
	char name[64], bus_id[sizeof(c->gpu.bus_id)], parent[MDGPU_NAME_LEN];
	const char *mdev_parent = c->tops && c->t && c->tops->mdev_parent ?
				  c->tops->mdev_parent(c->t) : NULL;

	pthread_mutex_lock(&c->lock);
	for (uint32_t k = 0; k < c->nr_vgpus; k++) {
		struct mdgpud_vgpu *v = c->vgpus[k];

		gpu_ns += v->gpu_ns;
		cmds += v->commands;
		errs += v->errors;
		bytes += v->bytes_copied;
		fb_used += mdgpud_memtab_used(v->mem);
		fb_quota += mdgpud_memtab_quota(v->mem);
	}
	t = c->totals;
	pthread_mutex_unlock(&c->lock);
	if (mdgpud_admin_append(buf, len, cap,
		"protocol=%d backend=%s gpu=%s bus_id=%s transport=%s"
		" mdev_parent=%s sm_count=%u"
		" fb_size=%" PRIu64 " vgpus=%u max_vgpus=%u"
		" fb_quota_sum=%" PRIu64 " fb_used=%" PRIu64
		" policy=%s timeslice_us=%u cap_window_us=%" PRIu64
		" gpu_ns=%" PRIu64 " commands=%" PRIu64 " errors=%" PRIu64
		" bytes_copied=%" PRIu64 " vgpus_created=%" PRIu64
		" vgpus_destroyed=%" PRIu64 " hangs=%" PRIu64
		" contexts_lost=%" PRIu64 "\n",
		MDGPUD_ADMIN_PROTOCOL, c->bops->name,
		mdgpud_admin_token(c->gpu.name, name, sizeof(name)),
		mdgpud_admin_token(c->gpu.bus_id, bus_id, sizeof(bus_id)),
		c->tops ? c->tops->name : "-",
		mdgpud_admin_token(mdev_parent, parent, sizeof(parent)),
		c->gpu.sm_count,
		(uint64_t)c->gpu.fb_size, c->nr_vgpus, c->cfg.max_vgpus,
		fb_quota, fb_used, mdgpud_sched_policy_name(c->cfg.policy),
		c->cfg.timeslice_us, c->cfg.cap_window_us, gpu_ns, cmds, errs,
		bytes, t.vgpus_created, t.vgpus_destroyed, t.hangs,
		t.ctx_losses))
		return mdgpud_admin_fail(buf, len, cap, ENOMEM, "out of memory");
	return 0;
}

/*
 * The Prometheus exposition (mdgpud/metrics.h): each of its lines is one
 * data line, so the protocol's framing holds (no line is "ok" or starts
 * with "err ": every one starts with "# " or "mdgpu_").
 */
static int mdgpud_admin_metrics(struct mdgpud_core *c, char **buf,
				size_t *len, size_t *cap)
{
	const char *tname = c->tops ? c->tops->name : "-";
	struct mdgpud_metrics_gpu g = {
		.ordinal = c->gpu.ordinal,
		.bus_id = c->gpu.bus_id,
		.name = c->gpu.name,
		.backend = c->bops->name,
		.transport = tname,
		.policy = mdgpud_sched_policy_name(c->cfg.policy),
		.version = MDGPU_VERSION,
		.mdev = !strcmp(tname, "kernel"),
		.fb_size = c->gpu.fb_size,
		.sm_count = c->gpu.sm_count,
		.max_vgpus = c->cfg.max_vgpus,
		.timeslice_us = c->cfg.timeslice_us,
		.cap_window_us = c->cfg.cap_window_us,
	};
	struct mdgpud_vgpu_stats *st;
	char *text = NULL;
	size_t text_len = 0, n;
	FILE *f;
	int ret;

	st = calloc(c->cfg.max_vgpus, sizeof(*st));
	if (!st)
		return mdgpud_admin_fail(buf, len, cap, ENOMEM, "out of memory");
	mdgpud_core_totals(c, &g.totals);
	n = mdgpud_core_stats(c, st, c->cfg.max_vgpus);
	f = open_memstream(&text, &text_len);
	if (!f) {
		free(st);
		return mdgpud_admin_fail(buf, len, cap, ENOMEM, "out of memory");
	}
	ret = mdgpud_metrics_write(f, &g, st, n);
	free(st);
	if (fclose(f) || ret || !text || text_len >= MDGPUD_ADMIN_OUT_MAX)
		ret = -ENOMEM;
	else
		ret = mdgpud_admin_append(buf, len, cap, "%s", text);
	free(text);
	if (ret)
		return mdgpud_admin_fail(buf, len, cap, ENOMEM,
					 "response too large");
	return 0;
}

static int mdgpud_admin_set(struct mdgpud_core *c, char **tok, int n,
			    char **buf, size_t *len, size_t *cap)
{
	struct mdgpud_vgpu *v;
	uint64_t id, val;
	uint32_t w, cp, pr;
	int ret;

	if (n != 4)
		return mdgpud_admin_fail(buf, len, cap, EINVAL,
					 "usage: set <vgpu_id> weight|cap|priority <value>");
	ret = mdgpud_admin_number("vgpu id", tok[1], 0, UINT32_MAX, &id, buf,
				  len, cap);
	if (ret)
		return ret;
	v = mdgpud_admin_find(c, id);
	if (!v)
		return mdgpud_admin_fail(buf, len, cap, ENOENT,
					 "no vgpu %" PRIu64, id);
	if (v->tops->knobs_owner) {
		char uuid[MDGPU_UUID_STR_LEN];

		return mdgpud_admin_fail(buf, len, cap, EOPNOTSUPP,
					 "vgpu %u is mdev %s: its knobs are set in %s (mdgpuctl set %s %.16s %.16s)",
					 v->id, mdgpu_uuid_format(v->uuid, uuid),
					 v->tops->knobs_owner, uuid, tok[2],
					 tok[3]);
	}
	w = v->entity.weight;
	cp = v->entity.cap_pct;
	pr = v->entity.priority;
	if (!strcmp(tok[2], "weight")) {
		ret = mdgpud_admin_number("weight", tok[3], MDGPU_WEIGHT_MIN,
					  MDGPU_WEIGHT_MAX, &val, buf, len,
					  cap);
		w = (uint32_t)val;
	} else if (!strcmp(tok[2], "cap")) {
		ret = mdgpud_admin_number("cap", tok[3], MDGPU_CAP_MIN,
					  MDGPU_CAP_MAX, &val, buf, len, cap);
		cp = (uint32_t)val;
	} else if (!strcmp(tok[2], "priority")) {
		ret = mdgpud_admin_number("priority", tok[3],
					  MDGPU_PRIORITY_MIN,
					  MDGPU_PRIORITY_MAX, &val, buf, len,
					  cap);
		pr = (uint32_t)val;
	} else {
		return mdgpud_admin_fail(buf, len, cap, EINVAL,
					 "unknown knob '%.32s' (weight, cap, priority)",
					 tok[2]);
	}
	if (ret)
		return ret;
	ret = mdgpud_vgpu_set_knobs(v, w, cp, pr);
	if (ret)
		return mdgpud_admin_fail(buf, len, cap, -ret,
					 "vgpu %u: %s refused: %s", v->id,
					 tok[2], strerror(-ret));
	mdgpud_info("admin: vgpu %u %s = %s (weight %u cap %u priority %u)",
		    v->id, tok[2], tok[3], w, cp, pr);
	return 0;
}

static int mdgpud_admin_policy(struct mdgpud_core *c, char **tok, int n,
			       char **buf, size_t *len, size_t *cap)
{
	int p, ret;

	if (n != 2)
		return mdgpud_admin_fail(buf, len, cap, EINVAL,
					 "usage: policy best-effort|equal-share|fixed-share");
	p = mdgpud_sched_policy_parse(tok[1]);
	if (p < 0)
		return mdgpud_admin_fail(buf, len, cap, EINVAL,
					 "unknown policy '%.32s' (best-effort, equal-share, fixed-share)",
					 tok[1]);
	ret = mdgpud_core_set_policy(c, (uint32_t)p, c->cfg.timeslice_us);
	if (ret)
		return mdgpud_admin_fail(buf, len, cap, -ret,
					 "policy %s refused: %s", tok[1],
					 strerror(-ret));
	mdgpud_info("admin: policy = %s", tok[1]);
	return 0;
}

static int mdgpud_admin_timeslice(struct mdgpud_core *c, char **tok, int n,
				  char **buf, size_t *len, size_t *cap)
{
	uint64_t us;
	int ret;

	if (n != 2)
		return mdgpud_admin_fail(buf, len, cap, EINVAL,
					 "usage: timeslice_us <%u..%u>",
					 MDGPU_TIMESLICE_US_MIN,
					 MDGPU_TIMESLICE_US_MAX);
	ret = mdgpud_admin_number("timeslice_us", tok[1],
				  MDGPU_TIMESLICE_US_MIN,
				  MDGPU_TIMESLICE_US_MAX, &us, buf, len, cap);
	if (ret)
		return ret;
	ret = mdgpud_core_set_policy(c, c->cfg.policy, (uint32_t)us);
	if (ret)
		return mdgpud_admin_fail(buf, len, cap, -ret,
					 "timeslice_us %" PRIu64 " refused: %s",
					 us, strerror(-ret));
	mdgpud_info("admin: timeslice_us = %" PRIu64, us);
	return 0;
}

static bool mdgpud_admin_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			if (*s != '\t')
				return false;
	return true;
}

int mdgpud_admin_exec(struct mdgpud_core *c, const char *line, bool may_write,
		      char **buf, size_t *len, size_t *cap)
{
	char copy[MDGPUD_ADMIN_LINE_MAX];
	char *tok[MDGPUD_ADMIN_MAX_TOKENS];
	int n, ret;

	if (strlen(line) >= sizeof(copy))
		return mdgpud_admin_fail(buf, len, cap, EMSGSIZE,
					 "request longer than %d bytes",
					 MDGPUD_ADMIN_LINE_MAX - 1);
	if (!mdgpud_admin_printable(line))
		return mdgpud_admin_fail(buf, len, cap, EINVAL,
					 "request has control or non-ASCII bytes");
	strcpy(copy, line);
	n = mdgpud_admin_split(copy, tok, MDGPUD_ADMIN_MAX_TOKENS);
	if (n < 0)
		return mdgpud_admin_fail(buf, len, cap, EINVAL,
					 "too many words");
	if (n == 0)
		return mdgpud_admin_fail(buf, len, cap, EINVAL,
					 "empty request (try help)");

	if (!strcmp(tok[0], "list") || !strcmp(tok[0], "stats") ||
	    !strcmp(tok[0], "version") || !strcmp(tok[0], "help") ||
	    !strcmp(tok[0], "uids") || !strcmp(tok[0], "metrics")) {
		if (n != 1)
			return mdgpud_admin_fail(buf, len, cap, EINVAL,
						 "%s takes no arguments",
						 tok[0]);
		if (!strcmp(tok[0], "list"))
			ret = mdgpud_admin_list(c, buf, len, cap);
		else if (!strcmp(tok[0], "uids"))
			ret = mdgpud_admin_uids(c, buf, len, cap);
		else if (!strcmp(tok[0], "stats"))
			ret = mdgpud_admin_stats(c, buf, len, cap);
		else if (!strcmp(tok[0], "metrics"))
			ret = mdgpud_admin_metrics(c, buf, len, cap);
		else if (!strcmp(tok[0], "version"))
			ret = mdgpud_admin_append(buf, len, cap,
						  "protocol=%d abi=%u.%u"
						  " daemon_version=%s\n",
						  MDGPUD_ADMIN_PROTOCOL,
						  MDGPU_ABI_MAJOR,
						  MDGPU_ABI_MINOR,
						  MDGPU_VERSION) ? -ENOMEM : 0;
		else
			ret = mdgpud_admin_append(buf, len, cap,
				"requests: list | uids | stats | metrics |"
				" version |"
				" help |"
				" set <vgpu_id> weight|cap|priority <n> |"
				" policy best-effort|equal-share|fixed-share |"
				" timeslice_us <n>\n") ? -ENOMEM : 0;
		if (ret)
			return ret;
	} else if (!strcmp(tok[0], "set") || !strcmp(tok[0], "policy") ||
		   !strcmp(tok[0], "timeslice_us")) {
		if (!may_write)
			return mdgpud_admin_fail(buf, len, cap, EPERM,
						 "%s needs uid 0 or the daemon's uid",
						 tok[0]);
		if (!strcmp(tok[0], "set"))
			ret = mdgpud_admin_set(c, tok, n, buf, len, cap);
		else if (!strcmp(tok[0], "policy"))
			ret = mdgpud_admin_policy(c, tok, n, buf, len, cap);
		else
			ret = mdgpud_admin_timeslice(c, tok, n, buf, len, cap);
		if (ret)
			return ret;
	} else {
		return mdgpud_admin_fail(buf, len, cap, EINVAL,
					 "unknown request '%.32s' (try help)",
					 tok[0]);
	}
	return mdgpud_admin_append(buf, len, cap, "ok\n") ? -ENOMEM : 0;
}

/* ---------------------------------------------------------------- */
/* Connections                                                      */

static void mdgpud_admin_close(struct mdgpud_admin_conn *cn)
{
	struct mdgpud_admin *a = cn->a;
	struct mdgpud_admin_conn **pp;

	for (pp = &a->conns; *pp; pp = &(*pp)->next) {
		if (*pp == cn) {
			*pp = cn->next;
			break;
		}
	}
	a->nr_conns--;
	mdgpud_core_unwatch(a->core, cn->fd);
	close(cn->fd);
	free(cn->out);
	free(cn);
}

/* Write what is pending; 0 all written, 1 more to write, <0 broken. */
static int mdgpud_admin_flush(struct mdgpud_admin_conn *cn)
{
	while (cn->out_off < cn->out_len) {
		ssize_t w = send(cn->fd, cn->out + cn->out_off,
				 cn->out_len - cn->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 1;
			return -errno;
		}
		cn->out_off += (size_t)w;
		cn->last_ns = mdgpud_now_ns();
	}
	cn->out_off = cn->out_len = 0;
	return 0;
}

/*
 * Run the complete lines in the input buffer, one at a time, stopping
 * while a response is still pending.  Returns <0 when the connection must
 * be closed.
 */
static int mdgpud_admin_run_lines(struct mdgpud_admin_conn *cn)
{
	for (;;) {
		char *nl;
		size_t used;
		bool nul;
		int ret;

		if (cn->out_len)
			return 0;
		nl = memchr(cn->in, '\n', cn->in_len);
		if (!nl) {
			if (cn->in_len == sizeof(cn->in)) {
				/* Overlong: answer once, drop to newline. */
				cn->in_len = 0;
				cn->discarding = true;
				ret = mdgpud_admin_fail(&cn->out, &cn->out_len,
							&cn->out_cap, EMSGSIZE,
							"request longer than %d bytes",
							MDGPUD_ADMIN_LINE_MAX - 1);
				if (ret == -ENOMEM)
					return ret;
				ret = mdgpud_admin_flush(cn);
				if (ret < 0)
					return ret;
				continue;
			}
			return 0;
		}
		used = (size_t)(nl - cn->in) + 1;
		/* exec() would see only the part before a NUL byte */
		nul = memchr(cn->in, '\0', used - 1) != NULL;
		*nl = '\0';
		if (nl > cn->in && nl[-1] == '\r')	/* "\r\n" is fine */
			nl[-1] = '\0';
		if (nul)
			ret = mdgpud_admin_fail(&cn->out, &cn->out_len,
						&cn->out_cap, EINVAL,
						"request has a NUL byte");
		else
			ret = mdgpud_admin_exec(cn->a->core, cn->in,
						cn->may_write, &cn->out,
						&cn->out_len, &cn->out_cap);
		if (ret == -ENOMEM && !cn->out_len)
			return ret;
		memmove(cn->in, cn->in + used, cn->in_len - used);
		cn->in_len -= used;
		ret = mdgpud_admin_flush(cn);
		if (ret < 0)
			return ret;
	}
}

static void mdgpud_admin_conn_event(void *data, uint32_t events)
{
	struct mdgpud_admin_conn *cn = data;
	int ret;

	if (events & EPOLLERR)
		goto close;
	if (cn->out_len) {
		ret = mdgpud_admin_flush(cn);
		if (ret < 0)
			goto close;
	}
	/* Read only while nothing is pending and a line may still come. */
	if (!cn->out_len && !cn->eof && (events & (EPOLLIN | EPOLLHUP))) {
		ssize_t r;

		r = read(cn->fd, cn->in + cn->in_len,
			 sizeof(cn->in) - cn->in_len);
		if (r == 0) {
			cn->eof = true;
		} else if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				goto close;
		} else {
			cn->last_ns = mdgpud_now_ns();
			if (cn->discarding) {
				char *nl = memchr(cn->in, '\n', (size_t)r);

				if (nl) {
					size_t keep = (size_t)r -
						(size_t)(nl + 1 - cn->in);

					memmove(cn->in, nl + 1, keep);
					cn->in_len = keep;
					cn->discarding = false;
				}	/* else: all of it dropped */
			} else {
				cn->in_len += (size_t)r;
			}
		}
	}
	if (mdgpud_admin_run_lines(cn) < 0)
		goto close;
	if (cn->out_len) {
		if (mdgpud_core_watch_events(cn->a->core, cn->fd, EPOLLOUT))
			goto close;
		return;
	}
	if (cn->eof)		/* answered everything it sent */
		goto close;
	if (mdgpud_core_watch_events(cn->a->core, cn->fd, EPOLLIN))
		goto close;
	return;
close:
	mdgpud_admin_close(cn);
}

/* All slots taken: close the connection stalled longest, if long enough. */
static void mdgpud_admin_evict(struct mdgpud_admin *a)
{
	struct mdgpud_admin_conn *old = NULL;
	uint64_t now = mdgpud_now_ns();

	for (struct mdgpud_admin_conn *cn = a->conns; cn; cn = cn->next)
		if (!old || cn->last_ns < old->last_ns)
			old = cn;
	if (!old || now - old->last_ns < a->evict_idle_ns)
		return;
	mdgpud_warn("admin: closing the connection of pid %d uid %u, "
		    "stalled for %" PRIu64 " ms, to make room", (int)old->pid,
		    (unsigned int)old->uid, (now - old->last_ns) / 1000000);
	mdgpud_admin_close(old);
}

static void mdgpud_admin_accept(void *data, uint32_t events)
{
	struct mdgpud_admin *a = data;

	(void)events;
	/* A few per event: a connect storm cannot hold the dispatcher. */
	for (int i = 0; i < 8; i++) {
		struct mdgpud_admin_conn *cn;
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		int fd = accept4(a->listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				mdgpud_warn("admin: accept: %s",
					    strerror(errno));
			return;
		}
		if (a->nr_conns >= MDGPUD_ADMIN_CONN_MAX)
			mdgpud_admin_evict(a);
		if (a->nr_conns >= MDGPUD_ADMIN_CONN_MAX) {
			static const char busy[] =
				"err EBUSY too many admin connections\n";
			ssize_t w = send(fd, busy, sizeof(busy) - 1,
					 MSG_NOSIGNAL | MSG_DONTWAIT);

			(void)w;
			close(fd);
			continue;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
			mdgpud_warn("admin: SO_PEERCRED: %s", strerror(errno));
			close(fd);
			continue;
		}
		cn = calloc(1, sizeof(*cn));
		if (!cn) {
			close(fd);
			continue;
		}
		cn->a = a;
		cn->fd = fd;
		cn->uid = cred.uid;
		cn->pid = cred.pid;
		cn->may_write = cred.uid == 0 || cred.uid == geteuid();
		cn->last_ns = mdgpud_now_ns();
		if (mdgpud_core_watch(a->core, fd, mdgpud_admin_conn_event,
				      cn)) {
			close(fd);
			free(cn);
			continue;
		}
		cn->next = a->conns;
		a->conns = cn;
		a->nr_conns++;
		mdgpud_dbg("admin: connection from pid %d uid %u (%s)",
			   (int)cn->pid, (unsigned int)cn->uid,
			   cn->may_write ? "read-write" : "read-only");
	}
}

/* ---------------------------------------------------------------- */
/* Lifetime                                                         */

int mdgpud_admin_socket_path(const struct mdgpud_config *cfg, char *buf,
			     size_t len)
{
	const char *s = cfg->socket_path;
	size_t n = strlen(s);
	int w;

	if (!strcmp(cfg->admin_socket_path, "none"))
		return 1;
	if (cfg->admin_socket_path[0])
		w = snprintf(buf, len, "%s", cfg->admin_socket_path);
	else if (n > 5 && !strcmp(s + n - 5, ".sock"))
		w = snprintf(buf, len, "%.*s-admin.sock", (int)(n - 5), s);
	else
		w = snprintf(buf, len, "%s-admin", s);
	if (w < 0 || (size_t)w >= len || (size_t)w >= sizeof(cfg->socket_path))
		return -ENAMETOOLONG;
	if (!strcmp(buf, cfg->socket_path))
		return -EINVAL;	/* would steal the client socket */
	return 0;
}

int mdgpud_admin_create(struct mdgpud_core *c, const struct mdgpud_config *cfg,
			struct mdgpud_admin **out)
{
	const struct mdgpud_unix_listen_opts opts = {
		.mode = cfg->admin_socket_mode,
		.group = cfg->admin_socket_group,
		.backlog = MDGPUD_ADMIN_CONN_MAX,
		.log_prefix = "admin: ",
	};
	struct mdgpud_admin *a;
	int ret;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->core = c;
	a->listen_fd = -1;
	a->evict_idle_ns = (uint64_t)MDGPUD_ADMIN_EVICT_IDLE_MS * 1000000;
	ret = mdgpud_admin_socket_path(cfg, a->path, sizeof(a->path));
	if (ret == 1) {
		free(a);
		mdgpud_info("admin socket off (admin_socket_path = none)");
		return 0;
	}
	if (ret) {
		mdgpud_err("admin_socket_path: %s (socket_path %s)",
			   ret == -EINVAL ? "same as socket_path" :
			   "too long, set admin_socket_path", cfg->socket_path);
		free(a);
		return ret;
	}
	ret = mdgpud_unix_listen(a->path, &opts);
	if (ret < 0) {
		free(a);
		return ret;
	}
	a->listen_fd = ret;
	ret = mdgpud_core_watch(c, a->listen_fd, mdgpud_admin_accept, a);
	if (ret) {
		unlink(a->path);
		close(a->listen_fd);
		free(a);
		return ret;
	}
	mdgpud_info("admin socket %s (mode %04o)", a->path,
		    cfg->admin_socket_mode);
	*out = a;
	return 0;
}

void mdgpud_admin_destroy(struct mdgpud_admin *a)
{
	if (!a)
		return;
	while (a->conns)
		mdgpud_admin_close(a->conns);
	mdgpud_core_unwatch(a->core, a->listen_fd);
	close(a->listen_fd);
	unlink(a->path);
	free(a);
}

void mdgpud_admin_set_evict_idle_ms(struct mdgpud_admin *a, uint32_t ms)
{
	if (a)
		a->evict_idle_ns = (uint64_t)ms * 1000000;
}

const char *mdgpud_admin_path(const struct mdgpud_admin *a)
{
	return a ? a->path : NULL;
}
