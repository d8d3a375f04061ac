// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpud: the mdgpu daemon.  A thin wrapper around libmdgpud: parse the
 * command line and config, set up logging and signals, run the core.
 *
 *   mdgpud [-c CONFIG] [-o key=value]... | --help | --version
 *
 * SIGTERM/SIGINT: clean shutdown (clients see -ENODEV).  SIGUSR1: status
 * dump to the log.  SIGHUP: reload; the config file and the -o overrides
 * are read again as at start and mdgpud_core_reconfigure() applies them
 * (the keys that change live; the others are logged as needing a restart).
 *
 * Under systemd (Documentation/install.md): READY=1 goes to $NOTIFY_SOCKET
 * once the transport is up (sockets listening, or the GPU registered with
 * mdgpu.ko) and the admin socket listens (Type=notify), RELOADING=1 with
 * MONOTONIC_USEC before a reload and READY=1 with STATUS= (what the
 * reload changed, or why it failed) after it, STOPPING=1 when
 * the loop ends; when stderr is the journal ($JOURNAL_STREAM), each log
 * line starts with its syslog priority, "<3>" to "<7>", for journald.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mdgpu_version.h"
#include "mdgpud/admin.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

static struct mdgpud_core *mdgpud_main_core;

static void mdgpud_main_signal(int sig)
{
	if (!mdgpud_main_core)
		return;
	if (sig == SIGUSR1)
		mdgpud_core_request_dump(mdgpud_main_core);
	else if (sig == SIGHUP)
		mdgpud_core_request_reload(mdgpud_main_core);
	else
		mdgpud_core_stop(mdgpud_main_core);
}

static void mdgpud_main_usage(FILE *f)
{
	fprintf(f, "usage: mdgpud [-c CONFIG] [-o key=value]...\n"
		"  -c CONFIG       config file (default %s; missing is fine)\n"
		"  -o key=value    override one config key (after the file)\n"
		"  -h, --help      this help\n"
		"  -V, --version   print the version and exit\n"
		"See Documentation/daemon.md for the keys.\n",
		MDGPUD_DEFAULT_CONFIG);
}

/* Set when stderr is the journal's stream: log lines carry "<N>". */
static bool mdgpud_main_journal;

/*
 * $JOURNAL_STREAM is "<device>:<inode>" of the stream systemd connected to
 * stdout/stderr; it counts only if stderr is still that stream (a child
 * started from a unit with its stderr redirected inherits the variable).
 */
static bool mdgpud_main_stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char tail;

	if (!js || sscanf(js, "%llu:%llu%c", &dev, &ino, &tail) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st))
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

/* The log sink under journald: "<priority>message", no timestamp (the
 * journal has its own). */
static void mdgpud_main_log_journal(void *data, int level, const char *fmt,
				    va_list ap)
{
	char buf[1024];

	(void)data;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "<%d>%s\n", level >= 0 && level <= 7 ? level : 6, buf);
}

/* A message of main.c itself, before the log sink is set up. */
static void mdgpud_main_fatal(const char *msg)
{
	fprintf(stderr, "%smdgpud: %s\n", mdgpud_main_journal ? "<3>" : "",
		msg);
}

/*
 * sd_notify(3)'s protocol, without libsystemd: one datagram holding
 * `state` to the AF_UNIX socket $NOTIFY_SOCKET names, a path or, with a
 * leading '@', an abstract name.  Without the variable (not started by
 * systemd with Type=notify) it does nothing.
 */
static int mdgpud_main_notify(const char *state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = getenv("NOTIFY_SOCKET");
	size_t len;
	ssize_t n;
	int fd, err;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		   (const struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

/* What the configuration is made of: the file, then each -o over it. */
struct mdgpud_main_args {
	const char *config;
	bool optional;			/* the default file: may be missing */
	char **keys, **values;		/* -o key=value, split at '=' */
	int nover;
};

/* The configuration the command line names, at start and at each reload. */
static int mdgpud_main_config(const struct mdgpud_main_args *a,
			      struct mdgpud_config *cfg, char *err,
			      size_t errlen)
{
	int ret;

	mdgpud_config_defaults(cfg);
	ret = mdgpud_config_load(cfg, a->config, a->optional, err, errlen);
	for (int i = 0; !ret && i < a->nover; i++)
		ret = mdgpud_config_set(cfg, a->keys[i], a->values[i], err,
					errlen);
	return ret;
}

/* Newlines of s as blanks: a STATUS= value is one line of the datagram. */
static void mdgpud_main_one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r')
			*s = ' ';
}

/*
 * The core's reload hook (SIGHUP), in its loop between slices: the
 * configuration built as at start, then applied; an unreadable or
 * invalid one changes nothing.  systemd (sd_notify(3)) hears RELOADING=1
 * with the CLOCK_MONOTONIC time before, and READY=1 after with STATUS=
 * saying what the reload did: "reloaded: <what changed>", or "reload
 * failed: <reason>" when the daemon keeps its running configuration.
 * MONOTONIC_USEC is what Type=notify-reload (systemd 253) requires; the
 * packaged unit is Type=notify, which Debian 12's systemd 252 supports,
 * and there the field is ignored.
 */
static void mdgpud_main_reload(struct mdgpud_core *core, void *data)
{
	const struct mdgpud_main_args *a = data;
	struct mdgpud_config cfg;
	struct timespec ts;
	char err[512], state[640];
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)ts.tv_sec * 1000000ULL +
		 (unsigned long long)ts.tv_nsec / 1000ULL);
	mdgpud_main_notify(state);
	mdgpud_info("reload: reading %s", a->config);
	ret = mdgpud_main_config(a, &cfg, err, sizeof(err));
	if (ret)
		mdgpud_err("reload: %s; the running configuration is unchanged",
			   err);
	else
		ret = mdgpud_core_reconfigure(core, &cfg, err, sizeof(err));
	mdgpud_main_one_line(err);
	snprintf(state, sizeof(state), ret ?
		 "READY=1\nSTATUS=reload failed: %s; running on the previous configuration" :
		 "READY=1\nSTATUS=reloaded: %s", err);
	mdgpud_main_notify(state);
}

static const struct option mdgpud_main_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	struct mdgpud_main_args args = {
		.config = MDGPUD_DEFAULT_CONFIG,
		.optional = true,
	};
	struct mdgpud_config cfg;
	struct mdgpud_admin *admin = NULL;
	struct sigaction sa;
	char err[512];
	char **overrides;
	int opt, ret;

	mdgpud_main_journal = mdgpud_main_stderr_is_journal();
	overrides = calloc((size_t)argc * 2, sizeof(*overrides));
	if (!overrides)
		return 1;
	args.keys = overrides;
	args.values = overrides + argc;
	while ((opt = getopt_long(argc, argv, "c:o:hV", mdgpud_main_opts,
				  NULL)) != -1) {
		switch (opt) {
		case 'c':
			args.config = optarg;
			args.optional = false;
			break;
		case 'o':
			args.keys[args.nover] = optarg;
			args.values[args.nover] = strchr(optarg, '=');
			if (!args.values[args.nover]) {
				snprintf(err, sizeof(err),
					 "-o %s: expected key=value", optarg);
				mdgpud_main_fatal(err);
				free(overrides);
				return 2;
			}
			*args.values[args.nover]++ = '\0';
			args.nover++;
			break;
		case 'h':
			mdgpud_main_usage(stdout);
			free(overrides);
			return 0;
		case 'V':
			printf("mdgpud %s\n", MDGPU_VERSION);
			free(overrides);
			return 0;
		default:
			mdgpud_main_usage(stderr);
			free(overrides);
			return 2;
		}
	}

	ret = mdgpud_main_config(&args, &cfg, err, sizeof(err));
	if (!ret)
		ret = mdgpud_config_check_groups(&cfg, err, sizeof(err));
	if (ret) {
		mdgpud_main_fatal(err);
		free(overrides);
		return 2;
	}
	mdgpud_log_set(cfg.log_level, mdgpud_main_journal ?
		       mdgpud_main_log_journal : NULL, NULL);
	if (cfg.log_syslog)
		mdgpud_log_use_syslog("mdgpud");
	mdgpud_info("mdgpud %s starting", MDGPU_VERSION);

	ret = mdgpud_core_create(&cfg, &mdgpud_main_core);
	if (ret) {
		mdgpud_err("startup failed: %s", strerror(-ret));
		free(overrides);
		return 1;
	}
	/* The admin socket (mdgpuctl), served by the core's event loop. */
	ret = mdgpud_admin_create(mdgpud_main_core, &cfg, &admin);
	if (ret) {
		mdgpud_err("startup failed: admin socket: %s", strerror(-ret));
		mdgpud_core_destroy(mdgpud_main_core);
		free(overrides);
		return 1;
	}
	mdgpud_core_set_reload_hook(mdgpud_main_core, mdgpud_main_reload,
				    &args);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = mdgpud_main_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	ret = mdgpud_main_notify("READY=1");
	if (ret)
		mdgpud_warn("sd_notify READY=1 to $NOTIFY_SOCKET: %s",
			    strerror(-ret));
	ret = mdgpud_core_run(mdgpud_main_core);
	mdgpud_main_notify("STOPPING=1");
	mdgpud_admin_destroy(admin);
	mdgpud_core_destroy(mdgpud_main_core);
	free(overrides);
	mdgpud_info("exited");
	return ret ? 1 : 0;
}
