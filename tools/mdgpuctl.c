// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpuctl: command-line client of mdgpud's admin socket
 * (Documentation/mdgpuctl.md).  A thin layer over the line protocol: one
 * request per invocation, the daemon validates every value; data lines are
 * printed to stdout as the daemon sends them (key=value, stable), the
 * daemon's error message to stderr.
 *
 *   mdgpuctl [-s SOCKET] [-t SECONDS] list | uids
 *   mdgpuctl [-s SOCKET] [-t SECONDS] set VGPU_ID weight|cap|priority VALUE
 *   mdgpuctl [-s SOCKET] [-t SECONDS] policy best-effort|equal-share|fixed-share
 *   mdgpuctl [-s SOCKET] [-t SECONDS] timeslice MICROSECONDS
 *   mdgpuctl [-s SOCKET] [-t SECONDS] stats | version
 *   mdgpuctl --help | --version       (this program; no daemon needed)
 *
 * Exit status: 0 done; 1 the daemon refused the request (bad value,
 * unknown vGPU...); 2 usage error; 3 cannot connect (daemon not running,
 * wrong path, no permission on the socket); 4 protocol or I/O error
 * (connection lost, timeout, malformed answer); 5 the daemon refused for
 * lack of privilege (EPERM: only uid 0 or the daemon's uid may change
 * settings).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "mdgpu_version.h"
#include "mdgpud/admin.h"

enum {
	EXIT_OK = 0,
	EXIT_REFUSED = 1,
	EXIT_USAGE = 2,
	EXIT_CONNECT = 3,
	EXIT_PROTO = 4,
	EXIT_PERM = 5,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mdgpuctl [-s SOCKET] [-t SECONDS] COMMAND\n"
		"commands:\n"
		"  list                                 one line per vGPU\n"
		"  uids                                 per-uid usage and limits\n"
		"  set VGPU_ID weight|cap|priority N    change a knob\n"
		"  policy best-effort|equal-share|fixed-share\n"
		"  timeslice MICROSECONDS               scheduler time slice\n"
		"  stats                                daemon totals\n"
		"  version                              the daemon's protocol, ABI\n"
		"                                       and version\n"
		"  help                                 the daemon's list of requests\n"
		"options:\n"
		"  -s SOCKET   admin socket (default $MDGPU_ADMIN_SOCKET or %s)\n"
		"  -t SECONDS  give up after this long without an answer (10)\n"
		"  -h, --help  this help;  -V, --version  mdgpuctl's version\n"
		"exit: 0 ok, 1 refused, 2 usage, 3 cannot connect, 4 I/O or\n"
		"      protocol error, 5 not permitted (see mdgpuctl.md)\n",
		MDGPUD_ADMIN_DEFAULT_SOCKET);
}

/* A word of the request: printable ASCII without spaces, so that no
 * argument can smuggle a second request or an extra word. */
static int check_word(const char *w)
{
	if (!*w)
		return -1;
	for (; *w; w++)
		if ((unsigned char)*w <= 0x20 || (unsigned char)*w >= 0x7f)
			return -1;
	return 0;
}

static int send_all(int fd, const char *s, size_t n)
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

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	const char *path = getenv("MDGPU_ADMIN_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char req[MDGPUD_ADMIN_LINE_MAX + 1], line[4096];
	struct timeval tv = { .tv_sec = 10 };
	size_t reqlen = 0, n = 0;
	int opt, fd, nargs;
	const char *cmd;
	FILE *in;

	if (!path || !*path)
		path = MDGPUD_ADMIN_DEFAULT_SOCKET;
	while ((opt = getopt_long(argc, argv, "+s:t:hV", long_opts,
				  NULL)) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case 't': {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 ||
			    v > 3600) {
				fprintf(stderr, "mdgpuctl: -t wants 1..3600 seconds\n");
				return EXIT_USAGE;
			}
			tv.tv_sec = v;
			break;
		}
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("mdgpuctl %s\n", MDGPU_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind];
	nargs = argc - optind - 1;
	if (!strcmp(cmd, "list") || !strcmp(cmd, "stats") ||
	    !strcmp(cmd, "version") || !strcmp(cmd, "help") ||
	    !strcmp(cmd, "uids")) {
		if (nargs != 0)
			goto bad_args;
	} else if (!strcmp(cmd, "set")) {
		if (nargs != 3)
			goto bad_args;
	} else if (!strcmp(cmd, "policy")) {
		if (nargs != 1)
			goto bad_args;
	} else if (!strcmp(cmd, "timeslice") || !strcmp(cmd, "timeslice_us")) {
		if (nargs != 1)
			goto bad_args;
		cmd = "timeslice_us";	/* the protocol's name */
	} else {
		fprintf(stderr, "mdgpuctl: unknown command '%s'\n", cmd);
		usage(stderr);
		return EXIT_USAGE;
	}
	/* Build "cmd arg..." */
	n = (size_t)snprintf(req, sizeof(req), "%s", cmd);
	for (int i = optind + 1; i < argc; i++) {
		if (check_word(argv[i])) {
			fprintf(stderr, "mdgpuctl: argument '%s' is empty or has spaces or control characters\n",
				argv[i]);
			return EXIT_USAGE;
		}
		if (n + 1 + strlen(argv[i]) + 1 >= MDGPUD_ADMIN_LINE_MAX) {
			fprintf(stderr, "mdgpuctl: request too long\n");
			return EXIT_USAGE;
		}
		n += (size_t)snprintf(req + n, sizeof(req) - n, " %s", argv[i]);
	}
	req[n++] = '\n';
	reqlen = n;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "mdgpuctl: socket path too long: %s\n", path);
		return EXIT_USAGE;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("mdgpuctl: socket");
		return EXIT_CONNECT;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		fprintf(stderr, "mdgpuctl: connect %s: %s%s\n", path,
			strerror(e),
			e == ENOENT || e == ECONNREFUSED ?
			" (is mdgpud running? -s or MDGPU_ADMIN_SOCKET)" :
			e == EACCES ? " (admin_socket_mode; run as root?)" : "");
		close(fd);
		return EXIT_CONNECT;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (send_all(fd, req, reqlen)) {
		fprintf(stderr, "mdgpuctl: send: %s\n", strerror(errno));
		close(fd);
		return EXIT_PROTO;
	}
	shutdown(fd, SHUT_WR);	/* one request: the daemon closes after */
	in = fdopen(fd, "r");
	if (!in) {
		close(fd);
		return EXIT_PROTO;
	}
	while (fgets(line, sizeof(line), in)) {
		size_t l = strlen(line);

		if (!l || line[l - 1] != '\n') {
			fprintf(stderr, "mdgpuctl: malformed answer (line without newline or over %zu bytes)\n",
				sizeof(line) - 1);
			fclose(in);
			return EXIT_PROTO;
		}
		if (!strcmp(line, "ok\n")) {
			fclose(in);
			return EXIT_OK;
		}
		if (!strncmp(line, "err ", 4)) {
			fprintf(stderr, "mdgpuctl: %s: %s", cmd, line + 4);
			fclose(in);
			return !strncmp(line + 4, "EPERM ", 6) ? EXIT_PERM :
								 EXIT_REFUSED;
		}
		fputs(line, stdout);
	}
	fprintf(stderr, "mdgpuctl: %s\n", ferror(in) ?
		(errno == EAGAIN || errno == EWOULDBLOCK ?
		 "no answer in time (-t)" : strerror(errno)) :
		"connection closed before the answer was complete");
	fclose(in);
	return EXIT_PROTO;
bad_args:
	fprintf(stderr, "mdgpuctl: wrong number of arguments for '%s'\n", cmd);
	usage(stderr);
	return EXIT_USAGE;
}
