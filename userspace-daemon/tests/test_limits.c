// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Per-uid limits of socket clients (core/limits.c), the handshake timeout
 * of the socket transport, and admission with ctx_overhead_mib, through
 * the socket spoken raw (uapi section 4) to an in-process daemon (sim).
 *
 * Clients of other uids: the test runs as root and connects from its own
 * thread after setresuid(2) called as a raw syscall, which changes the
 * credentials of the calling thread only (glibc's wrapper would change
 * every thread's); SO_PEERCRED records the connecting thread's effective
 * uid.  Without root these tests are skipped.
 *
 * The last test is for the GPU machine (MDGPUD_TEST_REAL_CUDA=1): it
 * measures what a worker's CUDA context costs in device memory, the
 * figure ctx_overhead_mib = auto should be.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "uapi/mdgpu.h"
#include "mdgpud/admin.h"
#include "mdgpud/backend.h"
#include "mdgpud/daemon.h"
#include "mdgpud/limits.h"
#include "mdgpud/log.h"

#define UID_A	4242u
#define UID_B	4243u
#define UID_X	4244u		/* exempt in test_exempt */
#define MIB	(1ULL << 20)

struct daemon {
	struct mdgpud_core *core;
	pthread_t thread;
	char dir[64], path[96];
};

/* ---------------------------------------------------------------- */
/* Log capture: messages that name a uid, counted per kind            */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_match[64];	/* count messages holding this */
static int log_hits;

static void capture_log(void *data, int level, const char *fmt, va_list ap)
{
	char msg[512];

	(void)data;
	(void)level;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	pthread_mutex_lock(&log_lock);
	if (log_match[0] && strstr(msg, log_match))
		log_hits++;
	pthread_mutex_unlock(&log_lock);
	if (getenv("TEST_LIMITS_VERBOSE"))
		fprintf(stderr, "log: %s\n", msg);
}

static void log_expect(const char *s)
{
	pthread_mutex_lock(&log_lock);
	snprintf(log_match, sizeof(log_match), "%s", s);
	log_hits = 0;
	pthread_mutex_unlock(&log_lock);
}

static int log_count(void)
{
	int n;

	pthread_mutex_lock(&log_lock);
	n = log_hits;
	pthread_mutex_unlock(&log_lock);
	return n;
}

/* ---------------------------------------------------------------- */
/* The daemon                                                       */

static void *daemon_main(void *arg)
{
	mdgpud_core_run(((struct daemon *)arg)->core);
	return NULL;
}

/* A daemon (sim, fb_mib of memory) with cfg changed by `keys`, "k=v;..." */
static struct daemon *daemon_start(uint64_t fb_mib, const char *keys)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct mdgpud_config cfg;
	char buf[512], err[256], *kv, *save = NULL;

	assert_non_null(d);
	snprintf(d->dir, sizeof(d->dir), "/tmp/mdgpud-limits-%d",
		 (int)getpid());
	snprintf(d->path, sizeof(d->path), "%s/sock", d->dir);
	mdgpud_config_defaults(&cfg);
	strcpy(cfg.socket_path, d->path);
	cfg.sim_fb_mib = fb_mib;
	cfg.socket_mode = 0666;		/* other uids connect */
	snprintf(buf, sizeof(buf), "%s", keys);
	for (kv = strtok_r(buf, ";", &save); kv;
	     kv = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(kv, '=');

		assert_non_null(eq);
		*eq = '\0';
		if (mdgpud_config_set(&cfg, kv, eq + 1, err, sizeof(err)))
			fail_msg("config %s: %s", kv, err);
	}
	assert_int_equal(mdgpud_core_create(&cfg, &d->core), 0);
	assert_int_equal(pthread_create(&d->thread, NULL, daemon_main, d), 0);
	return d;
}

static void daemon_stop(struct daemon *d)
{
	mdgpud_core_stop(d->core);
	pthread_join(d->thread, NULL);
	mdgpud_core_destroy(d->core);
	rmdir(d->dir);
	free(d);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* uid's usage, or all zero when the daemon has no record of it. */
static struct mdgpud_uid_usage usage_of(struct daemon *d, uint32_t uid)
{
	struct mdgpud_uid_usage u[128], none = { .uid = uid };
	size_t n = mdgpud_limits_usage(mdgpud_core_limits(d->core), u, 128);

	for (size_t i = 0; i < n && i < 128; i++)
		if (u[i].uid == uid)
			return u[i];
	return none;
}

/* Waits (5 s at most) until uid holds `conns` connections. */
static void wait_conns(struct daemon *d, uint32_t uid, uint64_t conns)
{
	for (int i = 0; i < 5000; i++) {
		if (usage_of(d, uid).used[MDGPUD_LIMIT_CONNECTIONS] == conns)
			return;
		usleep(1000);
	}
	fail_msg("uid %u still holds %" PRIu64 " connections, not %" PRIu64,
		 uid, usage_of(d, uid).used[MDGPUD_LIMIT_CONNECTIONS], conns);
}

/* ---------------------------------------------------------------- */
/* Raw clients                                                      */

#define SKIP_UNLESS_ROOT()						\
	do {								\
		if (geteuid() != 0) {					\
			fprintf(stderr, "needs root (other uids)\n");	\
			skip();						\
		}							\
	} while (0)

/* This thread's effective uid only (the raw syscall, not glibc's). */
static void thread_euid(uint32_t uid)
{
	assert_int_equal(syscall(SYS_setresuid, -1, (long)uid, -1), 0);
}

/* A connection whose SO_PEERCRED uid is `uid`. */
static int connect_as(struct daemon *d, uint32_t uid)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), ret;

	assert_true(fd >= 0);
	strcpy(sa.sun_path, d->path);
	thread_euid(uid);
	ret = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	thread_euid(0);
	assert_int_equal(ret, 0);
	return fd;
}

static struct mdgpu_sock_hello hello(const char *type, uint64_t host_bytes)
{
	struct mdgpu_sock_hello h;

	memset(&h, 0, sizeof(h));
	h.magic = MDGPU_SOCK_MAGIC;
	h.abi_version = MDGPU_ABI_VERSION;
	snprintf(h.type, sizeof(h.type), "%s", type);
	h.ring_entries = 16;
	h.host_bytes = host_bytes;
	return h;
}

/* Readable (or hung up) within ms? */
static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/*
 * Sends the hello, receives the welcome (5 s at most) and closes the fds
 * it carried (the vGPU lives as long as the connection).  Returns the
 * welcome's status; *w gets the welcome when w is not NULL.
 */
static int handshake(int fd, const char *type, uint64_t host_bytes,
		     struct mdgpu_sock_welcome *w)
{
	struct mdgpu_sock_hello h = hello(type, host_bytes);
	struct mdgpu_sock_welcome ww;
	union {
		char buf[CMSG_SPACE(sizeof(int) * MDGPU_SOCK_NR_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &ww, sizeof(ww) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };

	assert_int_equal(send(fd, &h, sizeof(h), MSG_NOSIGNAL), sizeof(h));
	assert_true(readable(fd, 5000));
	assert_int_equal(recvmsg(fd, &msg, MSG_WAITALL | MSG_CMSG_CLOEXEC),
			 sizeof(ww));
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm;
	     cm = CMSG_NXTHDR(&msg, cm)) {
		int n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		int fds[MDGPU_SOCK_NR_FDS];

		memcpy(fds, CMSG_DATA(cm), (size_t)n * sizeof(int));
		for (int i = 0; i < n; i++)
			close(fds[i]);
	}
	assert_int_equal(ww.magic, MDGPU_SOCK_MAGIC);
	if (w)
		*w = ww;
	return ww.status;
}

/* A refused client is hung up on after its welcome. */
static void expect_hangup(int fd)
{
	char c;

	assert_true(readable(fd, 5000));
	assert_int_equal(read(fd, &c, 1), 0);
}

/* A vGPU of uid, connection kept open: the fd. */
static int open_vgpu_as(struct daemon *d, uint32_t uid, const char *type,
			uint64_t host_bytes)
{
	int fd = connect_as(d, uid);

	assert_int_equal(handshake(fd, type, host_bytes, NULL), 0);
	return fd;
}

/* ---------------------------------------------------------------- */
/* Per-uid limits                                                   */

/*
 * uid A at its connection limit (one vGPU, one connection still in its
 * handshake) is refused -EUSERS, logged once however often it retries,
 * while uid B connects; root is limited like anyone; a connection given
 * back is available again; the admin listing shows it all.
 */
static void test_connections(void **state)
{
	struct daemon *d;
	int a1, a2, b, r[3], a3;
	char *out = NULL;
	size_t len = 0, cap = 0;
	struct mdgpud_uid_usage u;

	(void)state;
	SKIP_UNLESS_ROOT();
	d = daemon_start(4096, "uid_max_connections=2;uid_max_vgpus=0;"
			 "handshake_timeout_ms=20000");
	log_expect("uid 4242: connections limit");
	a1 = open_vgpu_as(d, UID_A, "1g", 0);
	a2 = connect_as(d, UID_A);		/* silent: in its handshake */
	wait_conns(d, UID_A, 2);
	for (int i = 0; i < 10; i++) {
		int fd = connect_as(d, UID_A);

		assert_int_equal(handshake(fd, "1g", 0, NULL), -EUSERS);
		expect_hangup(fd);
		close(fd);
	}
	assert_int_equal(log_count(), 1);	/* not one per attempt */

	/* Another uid is not affected. */
	b = open_vgpu_as(d, UID_B, "1g", 0);
	u = usage_of(d, UID_A);
	assert_int_equal(u.used[MDGPUD_LIMIT_CONNECTIONS], 2);
	assert_int_equal(u.used[MDGPUD_LIMIT_VGPUS], 1);
	assert_int_equal(u.refused[MDGPUD_LIMIT_CONNECTIONS], 10);
	assert_int_equal(u.limit[MDGPUD_LIMIT_CONNECTIONS], 2);
	assert_int_equal(usage_of(d, UID_B).used[MDGPUD_LIMIT_VGPUS], 1);

	/* The admin listing. */
	assert_int_equal(mdgpud_admin_exec(d->core, "uids", false, &out, &len,
					   &cap), 0);
	assert_non_null(strstr(out, "uid=4242 exempt=0 connections=2 vgpus=1 "
				    "pinned_bytes=8388608 max_connections=2 "
				    "max_vgpus=0 max_pinned_bytes=4294967296 "
				    "refused_connections=10 refused_vgpus=0 "
				    "refused_pinned=0 handshake_timeouts=0\n"));
	assert_non_null(strstr(out, "uid=4243 exempt=0 connections=1 vgpus=1 "));
	assert_true(strstr(out, "uid=4242") < strstr(out, "uid=4243"));
	assert_non_null(strstr(out, "ok\n"));
	free(out);

	/* Root is not exempt unless configured. */
	for (int i = 0; i < 2; i++)
		r[i] = open_vgpu_as(d, 0, "1g", 0);
	r[2] = connect_as(d, 0);
	assert_int_equal(handshake(r[2], "1g", 0, NULL), -EUSERS);
	for (int i = 0; i < 3; i++)
		close(r[i]);

	/* A connection given back is there again. */
	close(a2);
	wait_conns(d, UID_A, 1);
	a3 = open_vgpu_as(d, UID_A, "1g", 0);
	close(a3);
	close(a1);
	close(b);
	wait_conns(d, UID_A, 0);
	wait_conns(d, UID_B, 0);
	daemon_stop(d);
}

/* A uid listed in uid_limits_exempt is counted, never refused. */
static void test_exempt(void **state)
{
	struct daemon *d;
	int fd[3];

	(void)state;
	SKIP_UNLESS_ROOT();
	d = daemon_start(4096, "uid_max_connections=1;uid_max_vgpus=1;"
			 "uid_max_pinned_mib=1;uid_limits_exempt=7, 4244");
	for (int i = 0; i < 3; i++)
		fd[i] = open_vgpu_as(d, UID_X, "1g", 0);
	assert_int_equal(usage_of(d, UID_X).exempt, 1);
	assert_int_equal(usage_of(d, UID_X).used[MDGPUD_LIMIT_VGPUS], 3);
	for (int i = 0; i < 3; i++)
		close(fd[i]);
	wait_conns(d, UID_X, 0);
	daemon_stop(d);
}

static void test_exempt_list_syntax(void **state)
{
	struct mdgpud_config c;
	char err[128];

	(void)state;
	mdgpud_config_defaults(&c);
	assert_int_equal(mdgpud_config_set(&c, "uid_limits_exempt",
					   "0, 1000,65534", err, sizeof(err)),
			 0);
	assert_int_equal(c.nr_uid_limits_exempt, 3);
	assert_int_equal(c.uid_limits_exempt[1], 1000);
	assert_int_equal(mdgpud_config_set(&c, "uid_limits_exempt", "",
					   err, sizeof(err)), 0);
	assert_int_equal(c.nr_uid_limits_exempt, 0);
	assert_int_equal(mdgpud_config_set(&c, "uid_limits_exempt",
					   "1,-2", err, sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "uid_limits_exempt",
					   "4294967295", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "uid_limits_exempt",
					   "1,2,3,4,5,6,7,8,9,10,11,12,13,14,"
					   "15,16,17", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "ctx_overhead_mib", "auto",
					   err, sizeof(err)), 0);
	assert_true(c.ctx_overhead_mib == MDGPUD_CTX_OVERHEAD_AUTO);
	assert_int_equal(mdgpud_config_set(&c, "ctx_overhead_mib", "300",
					   err, sizeof(err)), 0);
	assert_int_equal(c.ctx_overhead_mib, 300);
	assert_int_equal(mdgpud_config_set(&c, "handshake_timeout_ms", "50",
					   err, sizeof(err)), -EINVAL);
}

/* uid_max_vgpus: -EDQUOT past it; a vGPU given back is there again. */
static void test_vgpus(void **state)
{
	struct daemon *d;
	int a, a2, b, fd;

	(void)state;
	SKIP_UNLESS_ROOT();
	d = daemon_start(4096, "uid_max_vgpus=1");
	log_expect("uid 4242: vGPUs limit");
	a = open_vgpu_as(d, UID_A, "1g", 0);
	for (int i = 0; i < 5; i++) {
		fd = connect_as(d, UID_A);
		assert_int_equal(handshake(fd, "1g", 0, NULL), -EDQUOT);
		expect_hangup(fd);
		close(fd);
	}
	assert_int_equal(log_count(), 1);
	b = open_vgpu_as(d, UID_B, "1g", 0);
	assert_int_equal(usage_of(d, UID_A).refused[MDGPUD_LIMIT_VGPUS], 5);
	assert_int_equal(usage_of(d, UID_A).used[MDGPUD_LIMIT_VGPUS], 1);
	/* Refused handshakes hold nothing: no pinned bytes left behind. */
	assert_int_equal(usage_of(d, UID_A).used[MDGPUD_LIMIT_PINNED], 8 * MIB);
	close(a);
	wait_conns(d, UID_A, 0);
	a2 = open_vgpu_as(d, UID_A, "1g", 0);
	close(a2);
	close(b);
	wait_conns(d, UID_A, 0);
	wait_conns(d, UID_B, 0);
	daemon_stop(d);
}

/*
 * uid_max_pinned_mib: the type's aperture (1g: 8 MiB) plus host_bytes
 * (whole pages) are charged; past the limit -ENOMEM; a hello asking for
 * 2^64-1 host bytes is -E2BIG (host_mib_max) and charges nothing.
 */
static void test_pinned(void **state)
{
	struct mdgpu_sock_welcome w;
	struct daemon *d;
	int a, a2, fd;

	(void)state;
	SKIP_UNLESS_ROOT();
	d = daemon_start(4096, "uid_max_pinned_mib=40");
	log_expect("uid 4242: pinned host bytes limit");
	a = open_vgpu_as(d, UID_A, "1g", 16 * MIB);		/* 24 MiB */
	assert_int_equal(usage_of(d, UID_A).used[MDGPUD_LIMIT_PINNED],
			 24 * MIB);
	fd = connect_as(d, UID_A);
	assert_int_equal(handshake(fd, "1g", 16 * MIB, NULL), -ENOMEM);
	expect_hangup(fd);
	close(fd);
	fd = connect_as(d, UID_A);
	assert_int_equal(handshake(fd, "1g", UINT64_MAX, NULL), -E2BIG);
	close(fd);
	assert_int_equal(log_count(), 1);
	/* 8 MiB + one page still fits: 32 MiB + 4 KiB <= 40 MiB. */
	fd = connect_as(d, UID_A);
	assert_int_equal(handshake(fd, "1g", 1, &w), 0);
	assert_int_equal(w.aperture_size, 8 * MIB + 4096);
	assert_int_equal(usage_of(d, UID_A).used[MDGPUD_LIMIT_PINNED],
			 32 * MIB + 4096);
	assert_int_equal(usage_of(d, UID_A).refused[MDGPUD_LIMIT_PINNED], 1);
	close(fd);
	close(a);
	wait_conns(d, UID_A, 0);
	assert_int_equal(usage_of(d, UID_A).used[MDGPUD_LIMIT_PINNED], 0);
	a2 = open_vgpu_as(d, UID_A, "1g", 32 * MIB);		/* 40 MiB */
	close(a2);
	wait_conns(d, UID_A, 0);
	daemon_stop(d);
}

/*
 * What the backend pins for each context (the cuda backend's 16 MiB
 * staging area; the sim imitates it with sim_ctx_pinned_kib) is charged
 * with the aperture: with 16 MiB per context and a 40 MiB limit, one 1g
 * vGPU with 16 MiB of host area (8 + 16 + 16 = 40 MiB) fits, a second
 * one with no host area (8 + 16 = 24 MiB) does not; all of it goes back
 * with the connection.
 */
static void test_pinned_ctx(void **state)
{
	struct daemon *d;
	int a, fd;

	(void)state;
	SKIP_UNLESS_ROOT();
	d = daemon_start(4096, "uid_max_pinned_mib=40;sim_ctx_pinned_kib=16384");
	assert_int_equal(mdgpud_core_gpu(d->core)->ctx_pinned, 16 * MIB);
	log_expect("uid 4242: pinned host bytes limit");
	a = open_vgpu_as(d, UID_A, "1g", 16 * MIB);
	assert_int_equal(usage_of(d, UID_A).used[MDGPUD_LIMIT_PINNED],
			 40 * MIB);
	fd = connect_as(d, UID_A);
	assert_int_equal(handshake(fd, "1g", 0, NULL), -ENOMEM);
	expect_hangup(fd);
	close(fd);
	assert_int_equal(usage_of(d, UID_A).refused[MDGPUD_LIMIT_PINNED], 1);
	close(a);
	wait_conns(d, UID_A, 0);
	assert_int_equal(usage_of(d, UID_A).used[MDGPUD_LIMIT_PINNED], 0);
	daemon_stop(d);
}

/* ---------------------------------------------------------------- */
/* Handshake timeout                                                */

/*
 * With handshake_timeout_ms = 400: a client that sends nothing, one that
 * sends half a hello and stops, and one that sends a byte every 50 ms
 * (slow loris: the bound counts from the accept, not from the last byte)
 * are all dropped after the bound, not before; meanwhile another client's
 * handshake completes at once.
 */
static void test_handshake_timeout(void **state)
{
	struct mdgpu_sock_hello h = hello("1g", 0);
	struct daemon *d;
	uint64_t t0, t_ok, dropped[3] = { 0, 0, 0 };
	int fd[3], ok;
	size_t sent = 0;

	(void)state;
	SKIP_UNLESS_ROOT();
	d = daemon_start(4096, "handshake_timeout_ms=400");
	log_expect("uid 4242: a client sent no complete hello");
	t0 = now_ms();
	for (int i = 0; i < 3; i++)
		fd[i] = connect_as(d, UID_A);
	assert_int_equal(send(fd[1], &h, sizeof(h) / 2, MSG_NOSIGNAL),
			 sizeof(h) / 2);
	/* Another client, while those three hang in their handshakes. */
	ok = connect_as(d, UID_B);
	assert_int_equal(handshake(ok, "1g", 0, NULL), 0);
	t_ok = now_ms() - t0;
	fprintf(stderr, "handshake beside 3 stalled ones: %" PRIu64 " ms\n",
		t_ok);
	assert_true(t_ok < 300);

	while (now_ms() - t0 < 5000 && (!dropped[0] || !dropped[1] ||
					!dropped[2])) {
		if (sent < sizeof(h) - 1 && !dropped[2]) {
			ssize_t n = send(fd[2], (char *)&h + sent, 1,
					 MSG_NOSIGNAL);

			if (n == 1)
				sent++;
		}
		for (int i = 0; i < 3; i++) {
			char c;

			if (!dropped[i] && readable(fd[i], 0)) {
				assert_int_equal(read(fd[i], &c, 1), 0);
				dropped[i] = now_ms() - t0;
			}
		}
		usleep(50000);
	}
	fprintf(stderr, "dropped after %" PRIu64 ", %" PRIu64 ", %" PRIu64
		" ms (bound 400 ms); the slow one had sent %zu bytes\n",
		dropped[0], dropped[1], dropped[2], sent);
	for (int i = 0; i < 3; i++) {
		assert_true(dropped[i] >= 400);
		assert_true(dropped[i] < 2500);	/* bound + slack under load */
		close(fd[i]);
	}
	assert_true(sent < sizeof(h));
	wait_conns(d, UID_A, 0);
	assert_int_equal(usage_of(d, UID_A).handshake_timeouts, 3);
	assert_int_equal(log_count(), 1);
	/* The connected client was not dropped. */
	assert_false(readable(ok, 0));
	assert_int_equal(mdgpud_core_nr_vgpus(d->core), 1);
	close(ok);
	daemon_stop(d);
}

/* ---------------------------------------------------------------- */
/* Admission with ctx_overhead_mib                                  */

static int open_type(struct daemon *d, const char *type, int *fd,
		     struct mdgpu_sock_welcome *w)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int ret;

	*fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	strcpy(sa.sun_path, d->path);
	assert_int_equal(connect(*fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ret = handshake(*fd, type, 0, w);
	if (ret) {
		close(*fd);
		*fd = -1;
	}
	return ret;
}

static void close_all(struct daemon *d, int *fd, int n)
{
	for (int i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	for (int i = 0; i < 5000 && mdgpud_core_nr_vgpus(d->core); i++)
		usleep(1000);
	assert_int_equal(mdgpud_core_nr_vgpus(d->core), 0);
}

/*
 * 4 GiB partitioned, 512 MiB per context: 1g vGPUs cost 1.5 GiB, so two
 * fit and the third is -ENOSPC (four fit without the overhead); shares of
 * the GPU get their share minus the overhead ("half": 1.5 GiB quota),
 * so max_instances of them still fit exactly; a share smaller than the
 * overhead is -ENOSPC.
 */
static void test_ctx_overhead(void **state)
{
	struct mdgpu_sock_welcome w;
	struct daemon *d;
	int fd[4];

	(void)state;
	d = daemon_start(4096, "ctx_overhead_mib=512");
	assert_int_equal(open_type(d, "1g", &fd[0], &w), 0);
	assert_int_equal(w.fb_quota, 1024 * MIB);
	assert_int_equal(open_type(d, "1g", &fd[1], &w), 0);
	assert_int_equal(open_type(d, "1g", &fd[2], &w), -ENOSPC);
	close_all(d, fd, 3);

	assert_int_equal(open_type(d, "half", &fd[0], &w), 0);
	assert_int_equal(w.fb_quota, 1536 * MIB);
	assert_int_equal(open_type(d, "half", &fd[1], &w), 0);
	assert_int_equal(open_type(d, "1g", &fd[2], &w), -ENOSPC);
	close_all(d, fd, 3);
	assert_int_equal(open_type(d, "full", &fd[0], &w), 0);
	assert_int_equal(w.fb_quota, 3584 * MIB);
	close_all(d, fd, 1);
	daemon_stop(d);

	/* The same GPU without the overhead: four 1g. */
	d = daemon_start(4096, "ctx_overhead_mib=0");
	for (int i = 0; i < 4; i++)
		assert_int_equal(open_type(d, "1g", &fd[i], &w), 0);
	close_all(d, fd, 4);
	daemon_stop(d);

	/* A quarter (1 GiB) does not even cover a 1 GiB overhead. */
	d = daemon_start(4096, "ctx_overhead_mib=1024");
	assert_int_equal(open_type(d, "quarter", &fd[0], &w), -ENOSPC);
	assert_int_equal(open_type(d, "2g", &fd[0], &w), 0);	/* 3 GiB */
	assert_int_equal(open_type(d, "1g", &fd[1], &w), -ENOSPC);
	close_all(d, fd, 1);
	daemon_stop(d);
	/* On sim, auto means none. */
	d = daemon_start(4096, "ctx_overhead_mib=auto");
	for (int i = 0; i < 4; i++)
		assert_int_equal(open_type(d, "1g", &fd[i], &w), 0);
	close_all(d, fd, 4);
	daemon_stop(d);
}

/* ---------------------------------------------------------------- */
/* GPU only: what a worker's context costs                          */

static int test_memfd(size_t size, void **map)
{
	int fd = memfd_create("test-aperture", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(*map != MAP_FAILED);
	return fd;
}

/*
 * MDGPUD_TEST_REAL_CUDA=1 on the GPU machine: free device memory (the
 * backend's probe, a fresh worker's cuMemGetInfo) before and after
 * NCTX contexts opened the way a vGPU's is (worker, context, builtin
 * module, a 16 MiB aperture mapped), divided by NCTX: the device memory
 * one vGPU's context costs besides its allocations.  Prints it; set
 * MDGPUD_CTX_OVERHEAD_CUDA_MIB (core/vgpu.c) from it.
 */
static void test_measure_ctx_overhead(void **state)
{
	enum { NCTX = 4 };
	const struct mdgpud_backend_ops *ops = &mdgpud_backend_cuda;
	struct mdgpud_backend_cfg cfg = { 0 };
	struct mdgpud_backend *be0, *be1;
	struct mdgpud_gpu_info g0, g1;
	struct mdgpud_bctx *ctx[NCTX];
	void *ap[NCTX];
	int apfd[NCTX];
	char self[PATH_MAX], worker[PATH_MAX + 32], *slash;
	ssize_t n;
	double per;

	(void)state;
	if (!getenv("MDGPUD_TEST_REAL_CUDA")) {
		fprintf(stderr, "GPU only: set MDGPUD_TEST_REAL_CUDA=1\n");
		skip();
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = 0;
	slash = strrchr(self, '/');
	assert_non_null(slash);
	*slash = 0;
	snprintf(worker, sizeof(worker), "%s/../../mdgpud-worker", self);
	cfg.worker_path = getenv("MDGPUD_WORKER") ? getenv("MDGPUD_WORKER") :
						    worker;
	cfg.fb_reserve = 1;	/* fb_size = free bytes - 1 */
	cfg.hang_timeout_ms = 5000;
	assert_int_equal(ops->open(&cfg, &be0, &g0), 0);
	for (int i = 0; i < NCTX; i++) {
		assert_int_equal(ops->ctx_create(be0, (uint32_t)i + 1, &ctx[i]),
				 0);
		apfd[i] = test_memfd(16 * MIB, &ap[i]);
		assert_int_equal(ops->map_shared(ctx[i], apfd[i], 0, ap[i],
						 16 * MIB), 0);
	}
	/* A second backend's probe sees the GPU with NCTX more contexts. */
	assert_int_equal(ops->open(&cfg, &be1, &g1), 0);
	ops->close(be1);
	per = ((double)g0.fb_size - (double)g1.fb_size) / NCTX / (double)MIB;
	fprintf(stderr, "ctx overhead: %.1f MiB per vGPU context (%d "
		"contexts; free before %" PRIu64 " MiB, after %" PRIu64
		" MiB, GPU %s)\n", per, NCTX, (uint64_t)g0.fb_size >> 20,
		(uint64_t)g1.fb_size >> 20, g0.name);
	for (int i = 0; i < NCTX; i++) {
		ops->ctx_destroy(ctx[i]);
		munmap(ap[i], 16 * MIB);
		close(apfd[i]);
	}
	ops->close(be0);
	assert_true(per > 0 && per < 8192);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connections),
		cmocka_unit_test(test_exempt),
		cmocka_unit_test(test_exempt_list_syntax),
		cmocka_unit_test(test_vgpus),
		cmocka_unit_test(test_pinned),
		cmocka_unit_test(test_pinned_ctx),
		cmocka_unit_test(test_handshake_timeout),
		cmocka_unit_test(test_ctx_overhead),
		cmocka_unit_test(test_measure_ctx_overhead),
	};

	mdgpud_log_set(MDGPUD_LOG_DEBUG, capture_log, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
