// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unix-domain listening sockets (mdgpud/unix_listen.h): bind, mode and
 * group, without ever stealing a live daemon's socket or removing a file
 * that is not a socket.
 */
#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "mdgpud/log.h"
#include "mdgpud/unix_listen.h"

/* Create path's parent directory (0755) when it is missing. */
static void mdgpud_unix_listen_mkdir(const char *path, const char *pfx)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0755) && errno != EEXIST)
		mdgpud_warn("%smkdir %s: %s", pfx, dir, strerror(errno));
}

/*
 * Make room at sa's path: -EADDRINUSE when a daemon answers there, -EEXIST
 * when a non-socket is there; a stale socket is unlinked.
 */
static int mdgpud_unix_listen_clear(const struct sockaddr_un *sa,
				    const char *pfx)
{
	struct stat st;
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		close(fd);
		mdgpud_err("%s%s: another mdgpud is listening", pfx,
			   sa->sun_path);
		return -EADDRINUSE;
	}
	close(fd);
	if (!lstat(sa->sun_path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			mdgpud_err("%s%s exists and is not a socket", pfx,
				   sa->sun_path);
			return -EEXIST;
		}
		unlink(sa->sun_path);
	}
	return 0;
}

/* The gid of the group called name into *gid; logged when there is none. */
static int mdgpud_unix_listen_gid(const char *path, const char *name,
				  gid_t *gid, const char *pfx)
{
	struct group *gr = getgrnam(name);

	if (!gr) {
		mdgpud_err("%s%s: group '%s': no such group", pfx, path, name);
		return -ENOENT;
	}
	*gid = gr->gr_gid;
	return 0;
}

int mdgpud_unix_listen(const char *path,
		       const struct mdgpud_unix_listen_opts *opts)
{
	const char *pfx = opts->log_prefix ? opts->log_prefix : "";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bool chgrp = opts->group && opts->group[0];
	gid_t gid = (gid_t)-1;
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	/* An unknown group fails before anything is created or removed. */
	if (chgrp) {
		ret = mdgpud_unix_listen_gid(path, opts->group, &gid, pfx);
		if (ret)
			return ret;
	}
	mdgpud_unix_listen_mkdir(path, pfx);
	ret = mdgpud_unix_listen_clear(&sa, pfx);
	if (ret)
		return ret;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		mdgpud_err("%sbind %s: %s", pfx, path, strerror(errno));
		goto err_close;
	}
	/*
	 * Group, then mode, both before listen(): until listen() every
	 * connect() is refused (ECONNREFUSED) whatever the socket file's
	 * mode, so the umask-derived mode bind() gave it is never usable, and
	 * the group bits of the final mode never apply to the daemon's own
	 * group first.
	 */
	if (chgrp && chown(path, (uid_t)-1, gid)) {
		ret = -errno;
		mdgpud_err("%schown %s: %s", pfx, path, strerror(errno));
		goto err_unlink;
	}
	if (chmod(path, opts->mode)) {
		ret = -errno;
		mdgpud_err("%schmod %s: %s", pfx, path, strerror(errno));
		goto err_unlink;
	}
	if (listen(fd, opts->backlog)) {
		ret = -errno;
		mdgpud_err("%slisten %s: %s", pfx, path, strerror(errno));
		goto err_unlink;
	}
	return fd;
err_unlink:
	unlink(path);
err_close:
	close(fd);
	return ret;
}
