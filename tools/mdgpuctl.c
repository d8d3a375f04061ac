// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpuctl: command-line client of mdgpud's admin socket, and the host's
 * one tool for mdgpu vGPUs (Documentation/mdgpuctl.md).  For the daemon
 * it is a thin layer over the line protocol: the daemon validates every
 * value; data lines are printed to stdout as the daemon sends them
 * (key=value, stable) or as JSON (--json), the daemon's error message to
 * stderr.  The mdev commands (types, create, remove, show, and set of an
 * mdev vGPU) work on sysfs or mdevctl without the daemon (ctl_mdev.c).
 *
 *   mdgpuctl [-s SOCKET] [-t SECONDS] list | uids | stats | version [--json]
 *   mdgpuctl [-s SOCKET] [-t SECONDS] set VGPU_ID|UUID weight|cap|priority VALUE
 *   mdgpuctl [-s SOCKET] [-t SECONDS] policy best-effort|equal-share|fixed-share
 *   mdgpuctl [-s SOCKET] [-t SECONDS] timeslice MICROSECONDS
 *   mdgpuctl [-s SOCKET] [-t SECONDS] metrics
 *   mdgpuctl [-s SOCKET] [-t SECONDS] top [-d SECONDS] [-n FRAMES]
 *   mdgpuctl [-s SOCKET] [-t SECONDS] serve-metrics [--listen ADDR:PORT]
 *   mdgpuctl types [PARENT] [--json]
 *   mdgpuctl create PARENT TYPE [--uuid U] [--weight W] [--cap C]
 *                   [--priority P] [--mdevctl]
 *   mdgpuctl remove UUID [--mdevctl]
 *   mdgpuctl show UUID [--json]
 *   mdgpuctl --help | --version       (this program; no daemon needed)
 *
 * set: a knob of an mdev vGPU has one owner, its sysfs file (the module
 * forwards each write to the daemon and mirrors weight in the guest's
 * register): a UUID, or the id of a vGPU whose list line names an mdev,
 * is written there; the ids of socket-transport vGPUs go to the daemon.
 *
 * Exit status: 0 done; 1 the daemon or the kernel refused the request
 * (bad value, unknown vGPU, parent or type...); 2 usage error; 3 cannot
 * connect (daemon not running, wrong path, no permission on the socket);
 * 4 protocol or I/O error (connection lost, timeout, malformed answer,
 * EIO from sysfs); 5 refused for lack of privilege (the daemon's EPERM:
 * only uid 0 or the daemon's uid may change settings; EACCES or EPERM
 * from sysfs).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_client.h"
#include "ctl_http.h"
#include "ctl_kv.h"
#include "ctl_mdev.h"
#include "ctl_top.h"
#include "mdgpu_version.h"
#include "mdgpud/admin.h"

/* Most bytes of metrics serve-metrics keeps for one answer. */
#define CTL_METRICS_MAX	(64u << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mdgpuctl [-s SOCKET] [-t SECONDS] COMMAND\n"
		"commands:\n"
		"  list [--json]                        one line per vGPU\n"
		"  uids [--json]                        per-uid usage and limits\n"
		"  stats [--json]                       daemon totals\n"
		"  version [--json]                     the daemon's protocol, ABI\n"
		"                                       and version\n"
		"  set VGPU_ID|UUID weight|cap|priority N\n"
		"                                       change a knob (of an mdev\n"
		"                                       vGPU: in sysfs)\n"
		"  policy best-effort|equal-share|fixed-share\n"
		"  timeslice MICROSECONDS               scheduler time slice\n"
		"  metrics                              Prometheus text exposition\n"
		"  top [-d SECONDS] [-n FRAMES]         per-vGPU table every SECONDS (1)\n"
		"  serve-metrics [--listen ADDR:PORT]   HTTP GET /metrics (%s)\n"
		"  help                                 the daemon's list of requests\n"
		"  types [PARENT] [--json]              mdgpu mdev types (sysfs)\n"
		"  create PARENT TYPE [--uuid U] [--weight W] [--cap C]\n"
		"         [--priority P] [--mdevctl]    a vGPU (mdev); its UUID\n"
		"  remove UUID [--mdevctl]              remove a vGPU (mdev)\n"
		"  show UUID [--json]                   a vGPU's knobs, status, stats\n"
		"options:\n"
		"  -s SOCKET   admin socket (default $MDGPU_ADMIN_SOCKET or %s)\n"
		"  -t SECONDS  give up after this long without an answer (10)\n"
		"  -j, --json  JSON output of list, uids, stats, version, types, show\n"
		"  -h, --help  this help;  -V, --version  mdgpuctl's version\n"
		"environment: MDGPU_SYSFS_MDEV_BUS (/sys/class/mdev_bus),\n"
		"  MDGPU_SYSFS_MDEV_DEVICES (/sys/bus/mdev/devices)\n"
		"exit: 0 ok, 1 refused, 2 usage, 3 cannot connect, 4 I/O or\n"
		"      protocol error, 5 not permitted (see mdgpuctl.md)\n",
		CTL_HTTP_DEFAULT_LISTEN, MDGPUD_ADMIN_DEFAULT_SOCKET);
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

static int print_line(void *arg, const char *line)
{
	(void)arg;
	printf("%s\n", line);
	return 0;
}

/* --json: the lines of list/uids as an array, of stats/version as the
 * one object they are. */
struct json_out {
	bool array;
	size_t n;
};

static int json_line(void *arg, const char *line)
{
	struct json_out *j = arg;

	if (!j->array && j->n)
		return -1;		/* a second line where one is due */
	if (j->array)
		fputs(j->n ? ",\n  " : "[\n  ", stdout);
	if (ctl_json_object(stdout, line)) {
		fprintf(stderr, "mdgpuctl: not key=value: %s\n", line);
		return -1;
	}
	j->n++;
	return 0;
}

static int json_end(const struct json_out *j)
{
	if (j->array)
		fputs(j->n ? "\n]\n" : "[]\n", stdout);
	else if (j->n == 1)
		fputc('\n', stdout);
	else
		return -1;
	return 0;
}

/* serve-metrics: the daemon's metrics lines, as the exposition text. */
struct metrics_buf {
	char *buf;
	size_t len, cap;
};

static int metrics_line(void *arg, const char *line)
{
	struct metrics_buf *m = arg;
	size_t l = strlen(line);

	if (m->len + l + 1 > CTL_METRICS_MAX)
		return -1;
	if (m->len + l + 1 > m->cap) {
		size_t ncap = m->cap ? m->cap : 65536;
		char *nb;

		while (ncap < m->len + l + 1)
			ncap *= 2;
		nb = realloc(m->buf, ncap);
		if (!nb)
			return -1;
		m->buf = nb;
		m->cap = ncap;
	}
	memcpy(m->buf + m->len, line, l);
	m->buf[m->len + l] = '\n';
	m->len += l + 1;
	return 0;
}

static int metrics_body(void *arg, char **body, size_t *len)
{
	const struct ctl_opts *o = arg;
	struct metrics_buf m = { 0 };
	char err[512];
	int ret = ctl_request(o, "metrics", metrics_line, &m, err,
			      sizeof(err));

	if (ret) {
		char msg[600];

		free(m.buf);
		snprintf(msg, sizeof(msg), "mdgpud's metrics: %s\n",
			 ret == CTL_EXIT_CONNECT ? "cannot connect to the admin socket" :
			 ret == CTL_EXIT_REFUSED || ret == CTL_EXIT_PERM ? err :
			 "protocol or I/O error");
		*body = strdup(msg);
		return -1;
	}
	*body = m.buf ? m.buf : strdup("");
	*len = m.len;
	return *body ? 0 : -1;
}

static int serve_metrics(const struct ctl_opts *o, int argc, char **argv)
{
	const char *listen_at = CTL_HTTP_DEFAULT_LISTEN;
	int fd, ret;

	if (argc == 2 && !strcmp(argv[0], "--listen"))
		listen_at = argv[1];
	else if (argc == 1 && !strncmp(argv[0], "--listen=", 9))
		listen_at = argv[0] + 9;
	else if (argc)
		return -1;
	fd = ctl_http_listen(listen_at);
	if (fd == -2)
		return CTL_EXIT_USAGE;
	if (fd < 0)
		return CTL_EXIT_CONNECT;
	fprintf(stderr, "mdgpuctl: serving http://%s/metrics from %s\n",
		listen_at, o->path);
	ret = ctl_http_serve(fd, metrics_body, (void *)o);
	fprintf(stderr, "mdgpuctl: serve-metrics: poll: %s\n", strerror(-ret));
	return CTL_EXIT_PROTO;
}

/* A decimal number in [min, max] (an option's value); -1 otherwise. */
static int parse_num(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (!*s || strspn(s, "0123456789.") != strlen(s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int top(const struct ctl_opts *o, int argc, char **argv)
{
	double interval = 1, frames = 0;

	for (int i = 0; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "-d")) {
			if (parse_num(argv[++i], 0.1, 3600, &interval))
				return -1;
		} else if (i + 1 < argc && !strcmp(argv[i], "-n")) {
			if (parse_num(argv[++i], 1, 1000000, &frames) ||
			    frames != (long)frames)
				return -1;
		} else {
			return -1;
		}
	}
	return ctl_top(o, interval, (long)frames);
}

/* The mdev commands (ctl_mdev.c): an exit status, or -1 for another
 * command. */
static int mdev_command(const char *cmd, int argc, char **argv, bool json)
{
	if (!strcmp(cmd, "types"))
		return ctl_mdev_types(argc, argv, json);
	if (!strcmp(cmd, "show"))
		return ctl_mdev_show(argc, argv, json);
	if (strcmp(cmd, "create") && strcmp(cmd, "remove"))
		return -1;
	if (json) {
		fprintf(stderr, "mdgpuctl: --json is for list, uids, stats, version, types and show\n");
		return CTL_EXIT_USAGE;
	}
	return !strcmp(cmd, "create") ? ctl_mdev_create(argc, argv) :
					ctl_mdev_remove(argc, argv);
}

/* set's target, found in the daemon's list: the vGPU's mdev, if any. */
struct set_target {
	uint64_t id;
	bool found;
	char uuid[CTL_MDEV_UUID_LEN];	/* "" for a socket-transport vGPU */
};

static int set_target_line(void *arg, const char *line)
{
	struct set_target *t = arg;
	char u[CTL_MDEV_UUID_LEN + 1];
	uint64_t id;

	if (t->found || ctl_kv_u64(line, "id", &id) || id != t->id)
		return 0;
	t->found = true;
	ctl_kv_str(line, "mdev_uuid", u, sizeof(u));
	if (ctl_mdev_uuid(u, t->uuid))
		t->uuid[0] = '\0';	/* "-" */
	return 0;
}

/*
 * set TARGET KNOB VALUE for the one owner of an mdev vGPU's knobs, its
 * sysfs file: TARGET a UUID, or the id of a vGPU whose list line has an
 * mdev_uuid.  An exit status, or -1 when the daemon's set is the owner
 * (a socket-transport vGPU, an id the daemon does not know: it answers).
 */
static int set_mdev(const struct ctl_opts *o, char **argv)
{
	struct set_target t = { .found = false };
	char uuid[CTL_MDEV_UUID_LEN], err[CTL_LINE_MAX];
	size_t n = strlen(argv[0]);
	int ret;

	if (!ctl_mdev_uuid(argv[0], uuid))
		return ctl_mdev_set(uuid, argv[1], argv[2]);
	if (n > 19 || strspn(argv[0], "0123456789") != n)
		return -1;	/* no id the daemon has: it refuses */
	t.id = strtoull(argv[0], NULL, 10);
	ret = ctl_request(o, "list", set_target_line, &t, err, sizeof(err));
	if (ret == CTL_EXIT_REFUSED || ret == CTL_EXIT_PERM)
		fprintf(stderr, "mdgpuctl: list: %s\n", err);
	if (ret)
		return ret;
	return t.found && t.uuid[0] ? ctl_mdev_set(t.uuid, argv[1], argv[2]) :
				      -1;
}

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct ctl_opts o = {
		.path = getenv("MDGPU_ADMIN_SOCKET"),
		.timeout_s = 10,
	};
	char req[MDGPUD_ADMIN_LINE_MAX + 1], err[CTL_LINE_MAX];
	struct json_out j = { 0 };
	bool json = false;
	int opt, nargs, ret;
	size_t n = 0;
	const char *cmd;

	if (!o.path || !*o.path)
		o.path = MDGPUD_ADMIN_DEFAULT_SOCKET;
	while ((opt = getopt_long(argc, argv, "+s:t:jhV", long_opts,
				  NULL)) != -1) {
		switch (opt) {
		case 's':
			o.path = optarg;
			break;
		case 't': {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 ||
			    v > 3600) {
				fprintf(stderr, "mdgpuctl: -t wants 1..3600 seconds\n");
				return CTL_EXIT_USAGE;
			}
			o.timeout_s = (int)v;
			break;
		}
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return CTL_EXIT_OK;
		case 'V':
			printf("mdgpuctl %s\n", MDGPU_VERSION);
			return CTL_EXIT_OK;
		default:
			usage(stderr);
			return CTL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return CTL_EXIT_USAGE;
	}
	cmd = argv[optind];
	nargs = argc - optind - 1;
	ret = mdev_command(cmd, nargs, argv + optind + 1, json);
	if (ret >= 0)
		return ret;
	if (!strcmp(cmd, "list") || !strcmp(cmd, "stats") ||
	    !strcmp(cmd, "version") || !strcmp(cmd, "uids")) {
		if (nargs == 1 && !strcmp(argv[optind + 1], "--json")) {
			json = true;
			nargs = 0;
			argc--;
		}
		if (nargs != 0)
			goto bad_args;
		j.array = !strcmp(cmd, "list") || !strcmp(cmd, "uids");
	} else if (!strcmp(cmd, "help") || !strcmp(cmd, "metrics")) {
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
	} else if (!strcmp(cmd, "top")) {
		ret = top(&o, nargs, argv + optind + 1);
		if (ret < 0) {
			fprintf(stderr, "mdgpuctl: top [-d 0.1..3600] [-n FRAMES]\n");
			return CTL_EXIT_USAGE;
		}
		return ret;
	} else if (!strcmp(cmd, "serve-metrics")) {
		ret = serve_metrics(&o, nargs, argv + optind + 1);
		if (ret < 0) {
			fprintf(stderr, "mdgpuctl: serve-metrics [--listen ADDR:PORT]\n");
			return CTL_EXIT_USAGE;
		}
		return ret;
	} else {
		fprintf(stderr, "mdgpuctl: unknown command '%s'\n", cmd);
		usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (json && (!strcmp(cmd, "set") || !strcmp(cmd, "policy") ||
		     !strcmp(cmd, "timeslice_us") || !strcmp(cmd, "metrics") ||
		     !strcmp(cmd, "help"))) {
		fprintf(stderr, "mdgpuctl: --json is for list, uids, stats, version, types and show\n");
		return CTL_EXIT_USAGE;
	}
	/* Build "cmd arg..." */
	n = (size_t)snprintf(req, sizeof(req), "%s", cmd);
	for (int i = optind + 1; i < argc; i++) {
		if (check_word(argv[i])) {
			fprintf(stderr, "mdgpuctl: argument '%s' is empty or has spaces or control characters\n",
				argv[i]);
			return CTL_EXIT_USAGE;
		}
		if (n + 1 + strlen(argv[i]) + 1 >= MDGPUD_ADMIN_LINE_MAX) {
			fprintf(stderr, "mdgpuctl: request too long\n");
			return CTL_EXIT_USAGE;
		}
		n += (size_t)snprintf(req + n, sizeof(req) - n, " %s", argv[i]);
	}
	if (!strcmp(cmd, "set")) {
		ret = set_mdev(&o, argv + optind + 1);
		if (ret >= 0)
			return ret;
	}
	ret = ctl_request(&o, req, json ? json_line : print_line, &j, err,
			  sizeof(err));
	if (ret == CTL_EXIT_REFUSED || ret == CTL_EXIT_PERM)
		fprintf(stderr, "mdgpuctl: %s: %s\n", cmd, err);
	if (!ret && json && json_end(&j)) {
		fprintf(stderr, "mdgpuctl: %s: expected one line\n", cmd);
		return CTL_EXIT_PROTO;
	}
	return ret;
bad_args:
	fprintf(stderr, "mdgpuctl: wrong number of arguments for '%s'\n", cmd);
	usage(stderr);
	return CTL_EXIT_USAGE;
}
