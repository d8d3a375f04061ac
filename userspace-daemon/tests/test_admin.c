// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The admin socket (core/admin.c): mdgpud (sim backend) runs in a thread of
 * this process with its admin socket; tenants are libmdgpu handles over
 * the socket transport.  Covers the protocol (list, set, policy,
 * timeslice_us, stats, version), that every bad request is refused with
 * "err" and changes nothing, that weights set through it steer GPU time,
 * and that slow, stuck or too many admin clients cannot hold the daemon.
 */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "mdgpu/mdgpu.h"
#include "mdgpu_version.h"
#include "mdgpud/admin.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

#define MIB (1ULL << 20)

struct daemon {
	struct mdgpud_core *core;
	struct mdgpud_admin *admin;
	pthread_t thread;
	bool running;
	char dir[64];
	char path[96];
	char apath[108];
	uint32_t admin_mode;
};

static void *daemon_main(void *arg)
{
	struct daemon *d = arg;

	mdgpud_core_run(d->core);
	return NULL;
}

static void dispatcher_start(struct daemon *d)
{
	assert_false(d->running);
	assert_int_equal(pthread_create(&d->thread, NULL, daemon_main, d), 0);
	d->running = true;
}

static void dispatcher_stop(struct daemon *d)
{
	assert_true(d->running);
	mdgpud_core_stop(d->core);
	pthread_join(d->thread, NULL);
	d->running = false;
}

static void daemon_start(struct daemon *d)
{
	struct mdgpud_config cfg;

	mdgpud_config_defaults(&cfg);
	cfg.sim_realtime = 0;	/* simulated GPU clock: fast, exact */
	strcpy(cfg.socket_path, d->path);
	cfg.sim_fb_mib = 8192;
	cfg.log_level = MDGPUD_LOG_WARN;
	cfg.socket_mode = 0600;
	cfg.admin_socket_mode = d->admin_mode;
	assert_int_equal(mdgpud_core_create(&cfg, &d->core), 0);
	assert_int_equal(mdgpud_admin_create(d->core, &cfg, &d->admin), 0);
	assert_non_null(d->admin);
	snprintf(d->apath, sizeof(d->apath), "%s",
		 mdgpud_admin_path(d->admin));
	dispatcher_start(d);
}

static void daemon_stop(struct daemon *d)
{
	if (d->running)
		dispatcher_stop(d);
	mdgpud_admin_destroy(d->admin);
	mdgpud_core_destroy(d->core);
	d->core = NULL;
	d->admin = NULL;
}

static int setup(void **state)
{
	struct daemon *d = calloc(1, sizeof(*d));

	mdgpud_log_set(MDGPUD_LOG_WARN, NULL, NULL);
	snprintf(d->dir, sizeof(d->dir), "/tmp/mdgpud-admin-test-%d",
		 (int)getpid());
	snprintf(d->path, sizeof(d->path), "%s/mdgpud.sock", d->dir);
	d->admin_mode = 0600;
	daemon_start(d);
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct daemon *d = *state;

	if (d->core)
		daemon_stop(d);
	/* Both sockets are gone: rmdir succeeds only on an empty dir. */
	assert_int_equal(rmdir(d->dir), 0);
	free(d);
	return 0;
}

static struct mdgpu *open_vgpu(struct daemon *d, const char *type,
			       uint32_t entries)
{
	struct mdgpu_open_opts o = { .path = d->path, .type = type,
				     .ring_entries = entries };
	struct mdgpu *g = NULL;

	assert_int_equal(mdgpu_open(&o, &g), 0);
	return g;
}

static uint32_t vgpu_id(struct mdgpu *g)
{
	struct mdgpu_info info;

	assert_int_equal(mdgpu_get_info(g, &info), 0);
	return info.vgpu_id;
}

/* ---------------------------------------------------------------- */
/* An admin client                                                  */

static int admin_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 10 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -errno;
	}
	/* A test must fail, not hang, if the daemon never answers. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static void send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		assert_true(w > 0);
		s += w;
		n -= (size_t)w;
	}
}

/*
 * Read one response (data lines + final line) into resp; returns 0 for
 * "ok", 1 for "err" (resp holds everything, final line included), -1 on
 * EOF/timeout.  Reads byte by byte: a test needs no speed.
 */
static int read_response(int fd, char *resp, size_t len)
{
	size_t n = 0, line = 0;

	resp[0] = '\0';
	for (;;) {
		char ch;
		ssize_t r = read(fd, &ch, 1);

		if (r != 1)
			return -1;
		assert_true(n + 1 < len);
		resp[n++] = ch;
		resp[n] = '\0';
		if (ch != '\n')
			continue;
		if (!strcmp(resp + line, "ok\n"))
			return 0;
		if (!strncmp(resp + line, "err ", 4))
			return 1;
		line = n;
	}
}

/* One request on a fresh connection. */
static int admin_req(struct daemon *d, const char *req, char *resp,
		     size_t len)
{
	int fd = admin_connect(d->apath), ret;

	assert_true(fd >= 0);
	send_all(fd, req, strlen(req));
	send_all(fd, "\n", 1);
	ret = read_response(fd, resp, len);
	close(fd);
	return ret;
}

static void admin_ok(struct daemon *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void admin_ok(struct daemon *d, const char *fmt, ...)
{
	char req[256], resp[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(req, sizeof(req), fmt, ap);
	va_end(ap);
	if (admin_req(d, req, resp, sizeof(resp)) != 0)
		fail_msg("'%s' answered '%s'", req, resp);
}

/* The value of key in a "k=v k=v" line, as a number; -1 when missing. */
static int64_t kv(const char *line, const char *key)
{
	size_t kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=')
			return strtoll(p + kl + 1, NULL, 10);
		p += kl;
	}
	return -1;
}

static const char *kv_str(const char *line, const char *key, char *out,
			  size_t len)
{
	size_t kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, " \n");

			snprintf(out, len, "%.*s", (int)n, p + kl + 1);
			return out;
		}
		p += kl;
	}
	out[0] = '\0';
	return out;
}

/* The list line of vGPU id, copied to out; false when absent. */
static bool list_line(const char *resp, uint32_t id, char *out, size_t len)
{
	const char *p = resp;

	while (*p) {
		size_t n = strcspn(p, "\n");

		if (kv(p, "id") == id && !strncmp(p, "id=", 3)) {
			snprintf(out, len, "%.*s", (int)n, p);
			return true;
		}
		p += n + (p[n] == '\n');
	}
	return false;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(dir);
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

/* ---------------------------------------------------------------- */
/* Tests                                                            */

static void test_path(void **state)
{
	struct mdgpud_config cfg;
	char buf[108];

	(void)state;
	mdgpud_config_defaults(&cfg);
	assert_int_equal(mdgpud_admin_socket_path(&cfg, buf, sizeof(buf)), 0);
	assert_string_equal(buf, MDGPUD_ADMIN_DEFAULT_SOCKET);
	strcpy(cfg.socket_path, "/tmp/x/s");
	assert_int_equal(mdgpud_admin_socket_path(&cfg, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/tmp/x/s-admin");
	strcpy(cfg.admin_socket_path, "/tmp/a.sock");
	assert_int_equal(mdgpud_admin_socket_path(&cfg, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/tmp/a.sock");
	strcpy(cfg.admin_socket_path, "/tmp/x/s");	/* the client socket */
	assert_int_equal(mdgpud_admin_socket_path(&cfg, buf, sizeof(buf)),
			 -EINVAL);
	strcpy(cfg.admin_socket_path, "none");
	assert_int_equal(mdgpud_admin_socket_path(&cfg, buf, sizeof(buf)), 1);
	cfg.admin_socket_path[0] = '\0';
	memset(cfg.socket_path, 'a', 104);
	cfg.socket_path[104] = '\0';			/* fits, +admin not */
	assert_int_equal(mdgpud_admin_socket_path(&cfg, buf, sizeof(buf)),
			 -ENAMETOOLONG);

	/* Config keys. */
	mdgpud_config_defaults(&cfg);
	assert_int_equal(cfg.admin_socket_mode, 0600);
	assert_int_equal(mdgpud_config_set(&cfg, "admin_socket_mode", "0640",
					   NULL, 0), 0);
	assert_int_equal(cfg.admin_socket_mode, 0640);
	assert_int_equal(mdgpud_config_set(&cfg, "admin_socket_mode", "0800",
					   NULL, 0), -EINVAL);
	assert_int_equal(mdgpud_config_set(&cfg, "admin_socket_mode", "01000",
					   NULL, 0), -EINVAL);
	assert_int_equal(mdgpud_config_set(&cfg, "admin_socket_path",
					   "/run/x/admin.sock", NULL, 0), 0);
	assert_string_equal(cfg.admin_socket_path, "/run/x/admin.sock");
	assert_string_equal(cfg.admin_socket_group, "");
	assert_int_equal(mdgpud_config_set(&cfg, "admin_socket_group",
					   "mdgpu", NULL, 0), 0);
	assert_string_equal(cfg.admin_socket_group, "mdgpu");
}

/*
 * admin_socket_group: the socket is chowned to the group (Debian's
 * "daemon" group, gid 1, stands in for an exporter's) with the mode
 * asked; an unknown group is a startup error that leaves no socket.
 */
static void test_socket_group(void **state)
{
	struct daemon *d = *state;
	const struct group *gr = getgrnam("daemon");
	struct mdgpud_config cfg;
	struct mdgpud_admin *a = NULL;
	struct mdgpud_core *core;
	struct stat st;
	char path[128];

	if (!gr)
		skip();
	mdgpud_config_defaults(&cfg);
	cfg.sim_realtime = 0;
	snprintf(cfg.socket_path, sizeof(cfg.socket_path), "%s.g", d->path);
	snprintf(path, sizeof(path), "%s.admin", d->path);
	strcpy(cfg.admin_socket_path, path);
	strcpy(cfg.admin_socket_group, "daemon");
	cfg.admin_socket_mode = 0660;
	cfg.log_level = MDGPUD_LOG_ERR;
	assert_int_equal(mdgpud_core_create(&cfg, &core), 0);
	assert_int_equal(mdgpud_admin_create(core, &cfg, &a), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_gid, gr->gr_gid);
	assert_int_equal(st.st_mode & 0777, 0660);
	mdgpud_admin_destroy(a);

	strcpy(cfg.admin_socket_group, "no-such-group-mdgpu");
	a = (struct mdgpud_admin *)1;
	assert_int_equal(mdgpud_admin_create(core, &cfg, &a), -ENOENT);
	assert_null(a);
	assert_int_equal(access(path, F_OK), -1);
	mdgpud_core_destroy(core);
}

static void test_list(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *a = open_vgpu(d, "1g", 0), *b = open_vgpu(d, "4g", 0);
	uint32_t ia = vgpu_id(a), ib = vgpu_id(b);
	char resp[4096], la[1024], lb[1024], s[32], ver[128];
	struct stat st;
	mdgpu_devptr x;

	/* The socket is private by default. */
	assert_int_equal(stat(d->apath, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);

	assert_int_equal(mdgpu_mem_alloc(a, 3 * MIB, &x), 0);
	assert_int_equal(mdgpu_fill_u32(a, x, 1024, 7), 0);
	assert_int_equal(mdgpu_synchronize(a), 0);

	assert_int_equal(admin_req(d, "list", resp, sizeof(resp)), 0);
	assert_int_equal(count_lines(resp), 3);		/* 2 vGPUs + ok */
	assert_true(list_line(resp, ia, la, sizeof(la)));
	assert_true(list_line(resp, ib, lb, sizeof(lb)));
	assert_string_equal(kv_str(la, "type", s, sizeof(s)), "1g");
	assert_string_equal(kv_str(lb, "type", s, sizeof(s)), "4g");
	assert_int_equal(kv(la, "fb_quota"), 1024 * MIB);
	assert_int_equal(kv(lb, "fb_quota"), 4096 * MIB);
	assert_int_equal(kv(la, "fb_used"), 3 * MIB);
	assert_int_equal(kv(lb, "fb_used"), 0);
	assert_int_equal(kv(la, "allocations"), 1);
	assert_true(kv(la, "commands") >= 3);
	assert_true(kv(la, "gpu_ns") > 0);	/* the fill took sim time */
	assert_int_equal(kv(la, "cap"), 100);
	assert_int_equal(kv(la, "priority"), MDGPU_PRIORITY_DEFAULT);
	assert_true(kv(la, "weight") >= MDGPU_WEIGHT_MIN);
	assert_true(kv(la, "wait_p99_ns") >= kv(la, "wait_p50_ns"));
	/* Every key documented in mdgpuctl.md is there. */
	{
		static const char *const keys[] = {
			"id", "type", "type_id", "weight", "cap", "priority",
			"gpu_ns", "slices", "commands", "errors",
			"bytes_copied", "fb_quota", "fb_used", "fb_requested",
			"allocations", "wait_p50_ns", "wait_p99_ns",
			"context", "hangs", "contexts_lost", "resets",
			"mdev_uuid",
		};

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			assert_true(kv_str(lb, keys[i], s, sizeof(s))[0]);
	}

	assert_int_equal(admin_req(d, "stats", resp, sizeof(resp)), 0);
	assert_int_equal(count_lines(resp), 2);
	assert_int_equal(kv(resp, "vgpus"), 2);
	assert_int_equal(kv(resp, "protocol"), MDGPUD_ADMIN_PROTOCOL);
	assert_int_equal(kv(resp, "fb_used"), 3 * MIB);
	assert_int_equal(kv(resp, "fb_quota_sum"), 5120 * MIB);
	assert_string_equal(kv_str(resp, "backend", s, sizeof(s)), "sim");
	assert_string_equal(kv_str(resp, "gpu", s, sizeof(s)), "mdgpu_sim");
	/* The GPU's bus id; no mdev parent on the socket transport. */
	assert_string_equal(kv_str(resp, "bus_id", s, sizeof(s)), "sim0");
	assert_string_equal(kv_str(resp, "transport", s, sizeof(s)),
			    "socket");
	assert_string_equal(kv_str(resp, "mdev_parent", s, sizeof(s)), "-");
	assert_string_equal(kv_str(resp, "policy", s, sizeof(s)),
			    "best-effort");
	assert_int_equal(kv(resp, "timeslice_us"), MDGPU_TIMESLICE_US_DEFAULT);
	assert_int_equal(kv(resp, "vgpus_created"), 2);
	assert_int_equal(kv(resp, "vgpus_destroyed"), 0);
	assert_int_equal(kv(resp, "hangs"), 0);
	assert_int_equal(kv(resp, "contexts_lost"), 0);

	assert_int_equal(admin_req(d, "version", resp, sizeof(resp)), 0);
	assert_int_equal(kv(resp, "protocol"), MDGPUD_ADMIN_PROTOCOL);
	assert_string_equal(kv_str(resp, "daemon_version", ver, sizeof(ver)),
			    MDGPU_VERSION);

	/* A closed tenant leaves the list. */
	mdgpu_close(a);
	for (int i = 0; i < 1000 && mdgpud_core_nr_vgpus(d->core) != 1; i++)
		usleep(1000);
	assert_int_equal(admin_req(d, "list", resp, sizeof(resp)), 0);
	assert_false(list_line(resp, ia, la, sizeof(la)));
	assert_true(list_line(resp, ib, lb, sizeof(lb)));
	/* ... and stays counted in the daemon's lifetime totals. */
	assert_int_equal(admin_req(d, "stats", resp, sizeof(resp)), 0);
	assert_int_equal(kv(resp, "vgpus"), 1);
	assert_int_equal(kv(resp, "vgpus_created"), 2);
	assert_int_equal(kv(resp, "vgpus_destroyed"), 1);
	mdgpu_close(b);
}

struct snapshot {
	struct mdgpud_vgpu_stats st[4];
	size_t n;
	uint32_t policy, timeslice_us;
};

static void snap(struct daemon *d, struct snapshot *s)
{
	s->n = mdgpud_core_stats(d->core, s->st, 4);
	s->policy = mdgpud_core_config(d->core)->policy;
	s->timeslice_us = mdgpud_core_config(d->core)->timeslice_us;
}

static void assert_same_knobs(const struct snapshot *a,
			      const struct snapshot *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_int_equal(a->st[i].vgpu_id, b->st[i].vgpu_id);
		assert_int_equal(a->st[i].weight, b->st[i].weight);
		assert_int_equal(a->st[i].cap_pct, b->st[i].cap_pct);
		assert_int_equal(a->st[i].priority, b->st[i].priority);
	}
	assert_int_equal(a->policy, b->policy);
	assert_int_equal(a->timeslice_us, b->timeslice_us);
}

static void test_bad_requests(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *a = open_vgpu(d, "1g", 0);
	uint32_t ia = vgpu_id(a);
	struct snapshot before, after;
	char resp[4096], req[512], errname[32];
	const struct {
		const char *fmt;	/* %u: a's id */
		const char *err;
	} bad[] = {
		{ "set 999 weight 3", "ENOENT" },
		{ "set 4294967295 weight 3", "ENOENT" },
		{ "set 4294967296 weight 3", "ERANGE" },
		{ "set 99999999999999999999999 weight 3", "ERANGE" },
		{ "set %u weight 0", "ERANGE" },
		{ "set %u weight 101", "ERANGE" },
		{ "set %u weight 18446744073709551615", "ERANGE" },
		{ "set %u weight 18446744073709551616", "ERANGE" },
		{ "set %u weight 184467440737095516160x", "EINVAL" },
		{ "set %u cap 0", "ERANGE" },
		{ "set %u cap 101", "ERANGE" },
		{ "set %u priority 8", "ERANGE" },
		{ "set %u weight -1", "EINVAL" },
		{ "set %u weight +3", "EINVAL" },
		{ "set %u weight 3x", "EINVAL" },
		{ "set %u weight 0x3", "EINVAL" },
		{ "set %u weight 3.0", "EINVAL" },
		{ "set %u weight", "EINVAL" },
		{ "set %u weight 3 4", "EINVAL" },
		{ "set %u speed 3", "EINVAL" },
		{ "set x%u weight 3", "EINVAL" },
		{ "set", "EINVAL" },
		{ "policy", "EINVAL" },
		{ "policy fastest", "EINVAL" },
		{ "policy best-effort extra", "EINVAL" },
		{ "policy BEST-EFFORT", "EINVAL" },
		{ "timeslice_us 499", "ERANGE" },
		{ "timeslice_us 1000001", "ERANGE" },
		{ "timeslice_us 0", "ERANGE" },
		{ "timeslice_us ten", "EINVAL" },
		{ "timeslice_us", "EINVAL" },
		{ "timeslice_us 1000 1000", "EINVAL" },
		{ "list all", "EINVAL" },
		{ "stats now", "EINVAL" },
		{ "reboot", "EINVAL" },
		{ "", "EINVAL" },
		{ "   ", "EINVAL" },
		{ "a b c d e f g h i", "EINVAL" },
		{ "set %u weight 3\x01", "EINVAL" },
		{ "set %u weight \xff", "EINVAL" },
	};

	admin_ok(d, "set %u weight 7", ia);
	snap(d, &before);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(req, sizeof(req), bad[i].fmt, ia);
		if (admin_req(d, req, resp, sizeof(resp)) != 1)
			fail_msg("'%s' answered '%s'", req, resp);
		assert_int_equal(count_lines(resp), 1);
		assert_int_equal(sscanf(resp, "err %31s", errname), 1);
		if (strcmp(errname, bad[i].err))
			fail_msg("'%s': %s, expected %s", req, resp,
				 bad[i].err);
		assert_true(strlen(resp) > strlen(errname) + 6); /* a message */
		snap(d, &after);
		assert_same_knobs(&before, &after);
	}

	/* An overlong line: one err, the rest of it dropped, and the
	 * connection keeps working. */
	{
		int fd = admin_connect(d->apath);
		char big[3000];

		memset(big, 'x', sizeof(big));
		memcpy(big, "set 1 weight 3 ", 15);	/* no partial run */
		send_all(fd, big, sizeof(big));
		send_all(fd, "\nversion\n", 9);
		assert_int_equal(read_response(fd, resp, sizeof(resp)), 1);
		assert_non_null(strstr(resp, "err EMSGSIZE"));
		assert_int_equal(read_response(fd, resp, sizeof(resp)), 0);
		assert_int_equal(kv(resp, "protocol"), MDGPUD_ADMIN_PROTOCOL);
		/* Exactly the longest allowed line is fine. */
		memset(big, ' ', MDGPUD_ADMIN_LINE_MAX - 1);
		memcpy(big, "version", 7);
		big[MDGPUD_ADMIN_LINE_MAX - 1] = '\n';
		send_all(fd, big, MDGPUD_ADMIN_LINE_MAX);
		assert_int_equal(read_response(fd, resp, sizeof(resp)), 0);
		/* One more byte is not. */
		memset(big, ' ', MDGPUD_ADMIN_LINE_MAX);
		memcpy(big, "version", 7);
		big[MDGPUD_ADMIN_LINE_MAX] = '\n';
		send_all(fd, big, MDGPUD_ADMIN_LINE_MAX + 1);
		assert_int_equal(read_response(fd, resp, sizeof(resp)), 1);
		assert_non_null(strstr(resp, "err EMSGSIZE"));
		/* A NUL byte must not hide trailing garbage. */
		send_all(fd, "policy equal-share\0x\n", 21);
		assert_int_equal(read_response(fd, resp, sizeof(resp)), 1);
		assert_non_null(strstr(resp, "err EINVAL"));
		/* Pipelined requests are answered in order; \r\n is fine. */
		send_all(fd, "version\r\nbogus\nstats\n", 21);
		assert_int_equal(read_response(fd, resp, sizeof(resp)), 0);
		assert_int_equal(read_response(fd, resp, sizeof(resp)), 1);
		assert_int_equal(read_response(fd, resp, sizeof(resp)), 0);
		assert_int_equal(kv(resp, "vgpus"), 1);
		close(fd);
	}
	snap(d, &after);
	assert_same_knobs(&before, &after);
	assert_int_equal(before.st[0].weight, 7);
	mdgpu_close(a);
}

/*
 * GPU-time shares of two saturating tenants over a window in which both
 * are backlogged the whole time.  With sim_realtime = 0 a SPIN_NS costs
 * the dispatcher no wall time, so a client thread could not keep its ring
 * full; instead the rings are filled while the dispatcher is stopped, the
 * dispatcher runs until `cmds` commands are done, and is stopped again.
 * Returns false (the window is void) if a ring ran dry in it.
 */
#define FILL 4000

static bool measure(struct daemon *d, struct mdgpu *a, struct mdgpu *b,
		    uint64_t cmds, double *share_a)
{
	struct mdgpud_vgpu_stats s0[4], s1[4];
	uint64_t ga = 0, gb = 0, ca = 0, cb = 0;
	uint32_t ia = vgpu_id(a), ib = vgpu_id(b);
	size_t n0, n1;
	bool valid;

	dispatcher_stop(d);
	for (int i = 0; i < FILL; i++) {
		assert_int_equal(mdgpu_spin_ns(a, 1000000), 0);
		assert_int_equal(mdgpu_spin_ns(b, 1000000), 0);
	}
	n0 = mdgpud_core_stats(d->core, s0, 4);
	dispatcher_start(d);
	for (;;) {
		uint64_t done = 0;

		n1 = mdgpud_core_stats(d->core, s1, 4);
		for (size_t i = 0; i < n1; i++)
			done += s1[i].commands - s0[i].commands;
		if (done >= cmds)
			break;
		usleep(100);
	}
	dispatcher_stop(d);
	n1 = mdgpud_core_stats(d->core, s1, 4);
	assert_int_equal(n0, 2);
	assert_int_equal(n1, 2);
	for (size_t i = 0; i < 2; i++) {
		uint64_t g = s1[i].gpu_ns - s0[i].gpu_ns;
		uint64_t c = s1[i].commands - s0[i].commands;

		assert_int_equal(s0[i].vgpu_id, s1[i].vgpu_id);
		if (s1[i].vgpu_id == ia) {
			ga = g;
			ca = c;
		} else {
			assert_int_equal(s1[i].vgpu_id, ib);
			gb = g;
			cb = c;
		}
	}
	valid = ca < FILL && cb < FILL;
	*share_a = (double)ga / (double)(ga + gb);
	print_message("window: %" PRIu64 " + %" PRIu64 " commands, GPU time %.3f s : %.3f s, share of the first %.3f%s\n",
		      ca, cb, ga / 1e9, gb / 1e9, *share_a,
		      valid ? "" : " (void: a ring ran dry)");
	/* Drain the rest, dispatcher running. */
	dispatcher_start(d);
	assert_int_equal(mdgpu_synchronize(a), 0);
	assert_int_equal(mdgpu_synchronize(b), 0);
	return valid && ga > 0 && gb > 0;
}

static double shares(struct daemon *d, struct mdgpu *a, struct mdgpu *b)
{
	double share = 0;

	/* A loaded machine may preempt this thread for long enough to let
	 * a ring run dry before the stop; such a window proves nothing and
	 * is measured again. */
	for (int attempt = 0; attempt < 5; attempt++)
		if (measure(d, a, b, 1200, &share))
			return share;
	fail_msg("no valid measurement window in 5 attempts");
	return 0;
}

static void test_weights_steer(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *a = open_vgpu(d, "1g", FILL < 4096 ? 4096 : FILL);
	struct mdgpu *b = open_vgpu(d, "1g", 4096);
	uint32_t ia = vgpu_id(a), ib = vgpu_id(b);
	char resp[4096], line[1024];
	double s;

	admin_ok(d, "set %u weight 1", ia);
	admin_ok(d, "set %u weight 3", ib);
	assert_int_equal(admin_req(d, "list", resp, sizeof(resp)), 0);
	assert_true(list_line(resp, ia, line, sizeof(line)));
	assert_int_equal(kv(line, "weight"), 1);
	assert_true(list_line(resp, ib, line, sizeof(line)));
	assert_int_equal(kv(line, "weight"), 3);

	s = shares(d, a, b);
	print_message("weights 1:3 -> shares %.3f : %.3f\n", s, 1 - s);
	assert_true(s >= 0.25 - 0.05 && s <= 0.25 + 0.05);

	/* Reversed live. */
	admin_ok(d, "set %u weight 3", ia);
	admin_ok(d, "set %u weight 1", ib);
	s = shares(d, a, b);
	print_message("weights 3:1 -> shares %.3f : %.3f\n", s, 1 - s);
	assert_true(s >= 0.75 - 0.05 && s <= 0.75 + 0.05);

	/* equal-share ignores weights: the policy change is applied. */
	admin_ok(d, "policy equal-share");
	assert_int_equal(mdgpud_core_config(d->core)->policy,
			 MDGPU_POLICY_EQUAL_SHARE);
	s = shares(d, a, b);
	print_message("equal-share, weights 3:1 -> shares %.3f : %.3f\n", s,
		      1 - s);
	assert_true(s >= 0.5 - 0.05 && s <= 0.5 + 0.05);

	/* cap and priority reach the scheduler entity (the cap's effect
	 * is over wall-clock windows: test_sched covers it). */
	admin_ok(d, "set %u cap 10", ia);
	admin_ok(d, "set %u priority 0", ib);
	assert_int_equal(admin_req(d, "list", resp, sizeof(resp)), 0);
	assert_true(list_line(resp, ia, line, sizeof(line)));
	assert_int_equal(kv(line, "cap"), 10);
	assert_int_equal(kv(line, "weight"), 3);
	assert_int_equal(kv(line, "priority"), MDGPU_PRIORITY_DEFAULT);
	assert_true(list_line(resp, ib, line, sizeof(line)));
	assert_int_equal(kv(line, "cap"), 100);
	assert_int_equal(kv(line, "weight"), 1);
	assert_int_equal(kv(line, "priority"), 0);
	admin_ok(d, "set %u cap 100", ia);
	mdgpu_close(a);
	mdgpu_close(b);
}

static void test_policy_timeslice(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *a = open_vgpu(d, "1g", 64), *b;
	struct mdgpud_vgpu_stats st[2];
	char resp[4096], s[32];
	uint64_t slices0, slices;

	admin_ok(d, "timeslice_us 2000");
	assert_int_equal(mdgpud_core_config(d->core)->timeslice_us, 2000);
	assert_int_equal(admin_req(d, "stats", resp, sizeof(resp)), 0);
	assert_int_equal(kv(resp, "timeslice_us"), 2000);
	admin_ok(d, "policy fixed-share");
	assert_int_equal(admin_req(d, "stats", resp, sizeof(resp)), 0);
	assert_string_equal(kv_str(resp, "policy", s, sizeof(s)),
			    "fixed-share");
	assert_int_equal(kv(resp, "timeslice_us"), 2000);
	admin_ok(d, "policy best-effort");
	admin_ok(d, "timeslice_us %u", MDGPU_TIMESLICE_US_MIN);
	admin_ok(d, "timeslice_us %u", MDGPU_TIMESLICE_US_MAX);

	/*
	 * The timeslice is what the dispatcher uses: with two tenants
	 * saturating (a vGPU alone keeps its slice: nobody else wants the
	 * GPU), 2 ms slices cut 2 x 64 ms of 1 ms kernels into >= 64 slices
	 * (10 ms slices would need 14; the first, probing slices run more
	 * commands: 51 here); >= 40 leaves room.
	 */
	admin_ok(d, "timeslice_us 2000");
	b = open_vgpu(d, "1g", 64);
	assert_int_equal(mdgpud_core_stats(d->core, st, 2), 2);
	slices0 = st[0].slices + st[1].slices;
	for (int i = 0; i < 64; i++) {
		assert_int_equal(mdgpu_spin_ns(a, 1000000), 0);
		assert_int_equal(mdgpu_spin_ns(b, 1000000), 0);
	}
	assert_int_equal(mdgpu_synchronize(a), 0);
	assert_int_equal(mdgpu_synchronize(b), 0);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(mdgpud_core_stats(d->core, st, 2), 2);
		if (st[0].commands >= 64 && st[1].commands >= 64 &&
		    st[0].gpu_ns + st[1].gpu_ns >= 128000000ull)
			break;
		usleep(1000);
	}
	slices = st[0].slices + st[1].slices - slices0;
	print_message("2 x 64 x 1 ms kernels at timeslice 2 ms: %" PRIu64
		      " slices\n", slices);
	assert_true(slices >= 40);
	mdgpu_close(b);
	mdgpu_close(a);
}

/* Only uid 0 or the daemon's uid may change anything; others may look. */
static void test_eperm(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *a;
	uint32_t ia;
	struct snapshot before, after;
	int status;
	pid_t pid;

	if (geteuid() != 0) {
		skip();	/* needs root to become another user */
		return;
	}
	daemon_stop(d);
	d->admin_mode = 0666;
	daemon_start(d);
	a = open_vgpu(d, "1g", 0);
	ia = vgpu_id(a);
	snap(d, &before);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char resp[4096];
		int r = 0;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		r |= admin_req(d, "list", resp, sizeof(resp)) != 0;
		r |= admin_req(d, "stats", resp, sizeof(resp)) != 0;
		r |= admin_req(d, "set 1 weight 5", resp, sizeof(resp)) != 1 ||
		     !strstr(resp, "err EPERM");
		r |= admin_req(d, "policy equal-share", resp, sizeof(resp)) != 1 ||
		     !strstr(resp, "err EPERM");
		r |= admin_req(d, "timeslice_us 5000", resp, sizeof(resp)) != 1 ||
		     !strstr(resp, "err EPERM");
		_exit(r);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	snap(d, &after);
	assert_same_knobs(&before, &after);
	admin_ok(d, "set %u weight 5", ia);	/* root may */
	mdgpu_close(a);
}

/*
 * A client that pipelines requests and never reads, one that sends half a
 * line and stalls, and more connections than allowed: none of them stops
 * the dispatcher or the other admin clients.
 */
static void test_hostile_clients(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *a = open_vgpu(d, "1g", 0);
	int fds0 = count_fds(), hog, stall, idle[MDGPUD_ADMIN_CONN_MAX];
	char resp[4096], flood[5 * 4000];
	mdgpu_devptr x;
	uint64_t sum;
	int nidle = 0;

	/* The hog: 4000 pipelined "list", never read. */
	hog = admin_connect(d->apath);
	assert_true(hog >= 0);
	for (size_t i = 0; i < sizeof(flood); i += 5)
		memcpy(flood + i, "list\n", 5);
	{
		size_t off = 0;

		/* Non-blocking: send what the socket takes. */
		while (off < sizeof(flood)) {
			ssize_t w = send(hog, flood + off, sizeof(flood) - off,
					 MSG_DONTWAIT | MSG_NOSIGNAL);

			if (w <= 0)
				break;
			off += (size_t)w;
		}
	}
	stall = admin_connect(d->apath);
	assert_true(stall >= 0);
	send_all(stall, "vers", 4);

	/* Tenants and other admin clients are served meanwhile. */
	assert_int_equal(mdgpu_mem_alloc(a, MIB, &x), 0);
	assert_int_equal(mdgpu_fill_u32(a, x, MIB / 4, 1), 0);
	assert_int_equal(mdgpu_checksum(a, x, 1, &sum), 0);
	assert_int_equal(sum, 1);
	assert_int_equal(admin_req(d, "stats", resp, sizeof(resp)), 0);

	/* Connection limit: hog + stall + the idle ones fill it... */
	for (int i = 0; i < MDGPUD_ADMIN_CONN_MAX - 2; i++) {
		idle[nidle] = admin_connect(d->apath);
		assert_true(idle[nidle] >= 0);
		send_all(idle[nidle], "version\n", 8);
		assert_int_equal(read_response(idle[nidle], resp,
					       sizeof(resp)), 0);
		nidle++;
	}
	/* ...and one more is told so and closed. */
	{
		int fd = admin_connect(d->apath);

		assert_true(fd >= 0);
		assert_int_equal(read_response(fd, resp, sizeof(resp)), 1);
		assert_non_null(strstr(resp, "err EBUSY"));
		assert_int_equal(read_response(fd, resp, sizeof(resp)), -1);
		close(fd);
	}
	/* Tenants still fine with every admin slot taken. */
	assert_int_equal(mdgpu_checksum(a, x, 1, &sum), 0);
	/* Closing one frees a slot. */
	close(idle[--nidle]);
	{
		int ok = -1;

		for (int i = 0; i < 100 && ok; i++) {
			int fd = admin_connect(d->apath);

			assert_true(fd >= 0);
			send_all(fd, "version\n", 8);
			ok = read_response(fd, resp, sizeof(resp));
			close(fd);
			if (ok)
				usleep(10000);	/* close not seen yet */
		}
		assert_int_equal(ok, 0);
	}
	/* The staller completes its line late: answered normally. */
	send_all(stall, "ion\n", 4);
	assert_int_equal(read_response(stall, resp, sizeof(resp)), 0);
	assert_int_equal(kv(resp, "protocol"), MDGPUD_ADMIN_PROTOCOL);

	/* All slots taken again... */
	idle[nidle] = admin_connect(d->apath);
	assert_true(idle[nidle] >= 0);
	send_all(idle[nidle], "version\n", 8);
	assert_int_equal(read_response(idle[nidle], resp, sizeof(resp)), 0);
	nidle++;
	{
		int fd = admin_connect(d->apath);

		assert_int_equal(read_response(fd, resp, sizeof(resp)), 1);
		assert_non_null(strstr(resp, "err EBUSY"));
		close(fd);
	}
	/* ...with a 200 ms eviction time, the connection stalled longest
	 * makes room: the hog, once the others have just been used. */
	dispatcher_stop(d);
	mdgpud_admin_set_evict_idle_ms(d->admin, 200);
	dispatcher_start(d);
	usleep(300000);
	send_all(stall, "version\n", 8);
	assert_int_equal(read_response(stall, resp, sizeof(resp)), 0);
	for (int i = 0; i < nidle; i++) {
		send_all(idle[i], "version\n", 8);
		assert_int_equal(read_response(idle[i], resp, sizeof(resp)),
				 0);
	}
	{
		int fd = admin_connect(d->apath);
		char buf[65536];
		ssize_t r;

		send_all(fd, "version\n", 8);
		assert_int_equal(read_response(fd, resp, sizeof(resp)), 0);
		close(fd);
		/* The hog was closed (its unread requests make that a
		 * reset rather than a plain end of file). */
		while ((r = read(hog, buf, sizeof(buf))) > 0)
			;
		assert_true(r == 0 || errno == ECONNRESET);
	}

	/* The hog hangs up with megabytes unread: the daemon drops it and
	 * every descriptor comes back. */
	close(hog);
	close(stall);
	while (nidle)
		close(idle[--nidle]);
	for (int i = 0; i < 2000 && count_fds() != fds0; i++)
		usleep(1000);
	assert_int_equal(count_fds(), fds0);
	assert_int_equal(admin_req(d, "list", resp, sizeof(resp)), 0);
	mdgpu_close(a);
}

/* A second daemon cannot take a live admin socket; a stale one is reused;
 * a non-socket at the path is never removed. */
static void test_socket_path(void **state)
{
	struct daemon *d = *state;
	struct mdgpud_config cfg;
	struct mdgpud_admin *adm;
	char p[108];
	FILE *f;

	mdgpud_config_defaults(&cfg);
	strcpy(cfg.socket_path, "/nonexistent/other.sock");
	strcpy(cfg.admin_socket_path, d->apath);
	assert_int_equal(mdgpud_admin_create(d->core, &cfg, &adm),
			 -EADDRINUSE);
	/* The original still answers. */
	admin_ok(d, "version");

	snprintf(p, sizeof(p), "%s/file", d->dir);
	f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	strcpy(cfg.admin_socket_path, p);
	assert_int_equal(mdgpud_admin_create(d->core, &cfg, &adm), -EEXIST);
	assert_int_equal(access(p, F_OK), 0);
	unlink(p);

	/* A missing parent directory is created (like the client one's).
	 * The dispatcher is stopped: watches change only in its thread. */
	dispatcher_stop(d);
	snprintf(p, sizeof(p), "%s/sub/admin.sock", d->dir);
	strcpy(cfg.admin_socket_path, p);
	assert_int_equal(mdgpud_admin_create(d->core, &cfg, &adm), 0);
	assert_non_null(adm);
	assert_string_equal(mdgpud_admin_path(adm), p);
	mdgpud_admin_destroy(adm);
	assert_int_equal(access(p, F_OK), -1);	/* removed */
	snprintf(p, sizeof(p), "%s/sub", d->dir);
	assert_int_equal(rmdir(p), 0);
	dispatcher_start(d);
	admin_ok(d, "version");

	strcpy(cfg.admin_socket_path, "none");
	assert_int_equal(mdgpud_admin_create(d->core, &cfg, &adm), 0);
	assert_null(adm);
	mdgpud_admin_destroy(adm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path),
		cmocka_unit_test_setup_teardown(test_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_requests, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_weights_steer, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_policy_timeslice, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_eperm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_clients, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_socket_path, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_socket_group, setup,
						teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
