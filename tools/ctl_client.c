// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * One admin request over a fresh Unix-socket connection (ctl_client.h).
 * The request is sent and the write side shut, so the daemon closes the
 * connection after its answer; lines are read until the final one.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_client.h"

static int ctl_send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static int ctl_connect(const struct ctl_opts *o)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = o->timeout_s };
	int fd;

	if (strlen(o->path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "mdgpuctl: socket path too long: %s\n",
			o->path);
		return -1;
	}
	strcpy(sa.sun_path, o->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("mdgpuctl: socket");
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		fprintf(stderr, "mdgpuctl: connect %s: %s%s\n", o->path,
			strerror(e),
			e == ENOENT || e == ECONNREFUSED ?
			" (is mdgpud running? -s or MDGPU_ADMIN_SOCKET)" :
			e == EACCES ? " (admin_socket_mode; run as root?)" : "");
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

int ctl_request(const struct ctl_opts *o, const char *req, ctl_line_fn fn,
		void *arg, char *err, size_t errlen)
{
	char line[CTL_LINE_MAX];
	size_t n = strlen(req);
	FILE *in;
	int fd, ret;

	/* The request and its newline in one send: one line, one segment. */
	if (n + 1 >= sizeof(line)) {
		fprintf(stderr, "mdgpuctl: request too long\n");
		return CTL_EXIT_USAGE;
	}
	memcpy(line, req, n);
	line[n++] = '\n';
	fd = ctl_connect(o);
	if (fd < 0)
		return CTL_EXIT_CONNECT;
	if (ctl_send_all(fd, line, n)) {
		fprintf(stderr, "mdgpuctl: send: %s\n", strerror(errno));
		close(fd);
		return CTL_EXIT_PROTO;
	}
	shutdown(fd, SHUT_WR);	/* one request: the daemon closes after */
	in = fdopen(fd, "r");
	if (!in) {
		close(fd);
		return CTL_EXIT_PROTO;
	}
	while (fgets(line, sizeof(line), in)) {
		size_t l = strlen(line);

		if (!l || line[l - 1] != '\n') {
			fprintf(stderr, "mdgpuctl: malformed answer (line without newline or over %zu bytes)\n",
				sizeof(line) - 1);
			fclose(in);
			return CTL_EXIT_PROTO;
		}
		line[l - 1] = '\0';
		if (!strcmp(line, "ok")) {
			fclose(in);
			return CTL_EXIT_OK;
		}
		if (!strncmp(line, "err ", 4)) {
			snprintf(err, errlen, "%s", line + 4);
			fclose(in);
			return !strncmp(line + 4, "EPERM ", 6) ? CTL_EXIT_PERM :
								 CTL_EXIT_REFUSED;
		}
		ret = fn(arg, line);
		if (ret) {
			fclose(in);
			return CTL_EXIT_PROTO;
		}
	}
	fprintf(stderr, "mdgpuctl: %s\n", ferror(in) ?
		(errno == EAGAIN || errno == EWOULDBLOCK ?
		 "no answer in time (-t)" : strerror(errno)) :
		"connection closed before the answer was complete");
	fclose(in);
	return CTL_EXIT_PROTO;
}
