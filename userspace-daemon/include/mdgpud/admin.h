/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpud admin interface: a Unix stream socket with a line-based
 * request/response protocol (Documentation/mdgpuctl.md is normative),
 * served from the core's event loop.  Administrators (mdgpuctl) list the
 * vGPUs with their statistics, change a vGPU's weight, cap or priority,
 * the GPU's policy and timeslice, and read daemon totals.
 *
 * Requests are one line each (at most MDGPUD_ADMIN_LINE_MAX bytes with the
 * newline).  Every request gets zero or more data lines, then exactly one
 * final line: "ok", or "err <ERRNO-NAME> <message>".  Data lines are
 * space-separated key=value pairs and never start with "ok" or "err".
 *
 * Who may do what: the socket's mode (admin_socket_mode, 0600 by default)
 * decides who can connect; in addition only peers whose SO_PEERCRED uid is
 * 0 or the daemon's own effective uid may change anything (set, policy,
 * timeslice_us); others get "err EPERM".
 */
#ifndef MDGPUD_ADMIN_H
#define MDGPUD_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Protocol version, answered by the "version" request.  Bumped when a
 * request or a key changes meaning; new keys and requests do not bump. */
#define MDGPUD_ADMIN_PROTOCOL		1
/* Longest request line, newline included. */
#define MDGPUD_ADMIN_LINE_MAX		256
/* Connections served at once.  When all are taken, a new connection
 * replaces the one that has made no progress (no byte read or written)
 * for the longest time, if that is at least MDGPUD_ADMIN_EVICT_IDLE_MS;
 * otherwise it is answered "err EBUSY" and closed. */
#define MDGPUD_ADMIN_CONN_MAX		16
#define MDGPUD_ADMIN_EVICT_IDLE_MS	10000
/* Where mdgpuctl looks when neither -s nor MDGPU_ADMIN_SOCKET is given:
 * the path the daemon derives from its default socket_path. */
#define MDGPUD_ADMIN_DEFAULT_SOCKET	"/run/mdgpud/mdgpud-admin.sock"

struct mdgpud_core;
struct mdgpud_config;
struct mdgpud_admin;

/*
 * The admin socket path of a config: admin_socket_path when set, else
 * derived from socket_path ("X.sock" -> "X-admin.sock", any other name
 * gets "-admin" appended).  Returns 0, 1 when the admin socket is off
 * (admin_socket_path = none), -ENAMETOOLONG when it does not fit.
 */
int mdgpud_admin_socket_path(const struct mdgpud_config *cfg, char *buf,
			     size_t len);

/*
 * Bind and listen on the admin socket and watch it in c's event loop.  The
 * requests then run in the dispatcher thread (mdgpud_core_run()).  *out is
 * NULL (and 0 returned) when the admin socket is off.  A live socket at
 * the path is -EADDRINUSE, a non-socket there -EEXIST (never removed).
 */
int mdgpud_admin_create(struct mdgpud_core *c, const struct mdgpud_config *cfg,
			struct mdgpud_admin **out);
/* Closes every connection and removes the socket; NULL is fine.  Call
 * while the dispatcher is not running, before mdgpud_core_destroy(). */
void mdgpud_admin_destroy(struct mdgpud_admin *a);
const char *mdgpud_admin_path(const struct mdgpud_admin *a);
/* Change the eviction idle time (tests); while the dispatcher is stopped. */
void mdgpud_admin_set_evict_idle_ms(struct mdgpud_admin *a, uint32_t ms);

/*
 * Execute one request line (without its newline) as a peer that may
 * (may_write) or may not change settings; the whole response, final line
 * included, is appended to *buf (malloc'ed, grown, *len bytes).  Returns
 * 0 for "ok", the negative errno of "err", or -ENOMEM when the response
 * could not be built (*buf then holds what could be).  Dispatcher thread
 * only (or while it is not running).
 */
int mdgpud_admin_exec(struct mdgpud_core *c, const char *line, bool may_write,
		      char **buf, size_t *len, size_t *cap);

#endif /* MDGPUD_ADMIN_H */
