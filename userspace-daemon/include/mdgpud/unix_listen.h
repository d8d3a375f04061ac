/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpud Unix-domain listening sockets, shared by the socket transport
 * (transports/socket.c) and the admin socket (core/admin.c).
 */
#ifndef MDGPUD_UNIX_LISTEN_H
#define MDGPUD_UNIX_LISTEN_H

#include <sys/types.h>

struct mdgpud_unix_listen_opts {
	mode_t mode;		/* chmod()ed to after bind() */
	const char *group;	/* chown()ed to it; NULL or "": daemon's */
	int backlog;		/* listen() backlog */
	const char *log_prefix;	/* before every message: "admin: " */
};

/*
 * Bind a SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC Unix socket at path
 * and listen on it; returns its fd or a negative errno.
 *
 * A missing parent directory is created 0755 (a failure is only warned
 * about: bind() then reports it).  A socket at path that accepts a
 * connection belongs to a live daemon: -EADDRINUSE, left alone.  A socket
 * that does not is stale and is unlinked; anything else at path is
 * -EEXIST and never removed.  A path that does not fit sun_path is
 * -ENAMETOOLONG; an unknown group is -ENOENT.  After a failure past
 * bind() the new socket file is unlinked again.
 */
int mdgpud_unix_listen(const char *path,
		       const struct mdgpud_unix_listen_opts *opts);

#endif /* MDGPUD_UNIX_LISTEN_H */
