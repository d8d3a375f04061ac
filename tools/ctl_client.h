/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpuctl's side of the admin protocol (Documentation/mdgpuctl.md): one
 * request on a fresh connection, its data lines handed to a callback.
 */
#ifndef MDGPUCTL_CLIENT_H
#define MDGPUCTL_CLIENT_H

#include <stddef.h>

/* mdgpuctl's exit statuses (Documentation/mdgpuctl.md, "mdgpuctl"). */
enum {
	CTL_EXIT_OK = 0,
	CTL_EXIT_REFUSED = 1,	/* the daemon answered err */
	CTL_EXIT_USAGE = 2,
	CTL_EXIT_CONNECT = 3,
	CTL_EXIT_PROTO = 4,	/* I/O, timeout, malformed answer */
	CTL_EXIT_PERM = 5,	/* the daemon answered err EPERM */
};

/* Longest answer line mdgpuctl accepts, newline included. */
#define CTL_LINE_MAX	4096

struct ctl_opts {
	const char *path;	/* admin socket */
	int timeout_s;		/* per receive and send */
};

/* A data line without its newline; nonzero stops reading (PROTO). */
typedef int (*ctl_line_fn)(void *arg, const char *line);

/*
 * Send req (one line, without newline; the caller made sure it is one
 * request) and read the answer.  Connection and I/O problems are printed
 * to stderr ("mdgpuctl: ...").  Returns a CTL_EXIT_* status; on
 * CTL_EXIT_REFUSED and CTL_EXIT_PERM err holds the daemon's line after
 * "err " (without newline).
 */
int ctl_request(const struct ctl_opts *o, const char *req, ctl_line_fn fn,
		void *arg, char *err, size_t errlen);

#endif /* MDGPUCTL_CLIENT_H */
