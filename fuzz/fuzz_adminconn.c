// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer harness: the admin socket's connection handling (core/admin.c:
 * accept, reading, splitting into lines, overlong lines, NUL bytes, "\r\n",
 * pipelined requests, pending responses, end of input) around the request
 * handler, through a real admin socket of a daemon core (sim backend)
 * whose event loop this thread turns by hand (mdgpud_core_poll()).
 *
 * Input: the bytes an administrator sends (the first MAX_INPUT of them);
 * then it shuts its write side and reads until the daemon closes.
 * Checked beyond the sanitizers: the daemon closes within a bounded
 * number of loop turns, and answers each '\n'-terminated line with
 * exactly one final line: "err EMSGSIZE ..." for a line that does not fit
 * MDGPUD_ADMIN_LINE_MAX with its newline, "ok" or another "err" for the
 * others; an unterminated tail gets no answer unless it is overlong.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fuzz.h"
#include "mdgpud/admin.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"
#include "userspace-daemon/core/core_priv.h"	/* mdgpud_core_poll() */

#define MAX_INPUT 1024
#define MAX_TURNS 20000		/* event loop turns before "stuck" */
#define MAX_FINALS (MAX_INPUT + 1)

static struct mdgpud_core *core;
static struct mdgpud_admin *admin;
static struct sockaddr_un addr = { .sun_family = AF_UNIX };
static char dir[64];
static char resp[1 << 20];

static void cleanup(void)
{
	mdgpud_admin_destroy(admin);
	mdgpud_core_destroy(core);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct mdgpud_config cfg;

	(void)argc;
	(void)argv;
	mdgpud_log_set(MDGPUD_LOG_DEBUG, fuzz_log_sink, NULL);
	snprintf(dir, sizeof(dir), "/tmp/mdgpud-fuzz-adminconn-XXXXXX");
	FUZZ_CHECK(mkdtemp(dir));
	mdgpud_config_defaults(&cfg);
	snprintf(cfg.socket_path, sizeof(cfg.socket_path), "%s/mdgpud.sock",
		 dir);
	cfg.sim_fb_mib = 8192;
	cfg.sim_realtime = 0;
	FUZZ_CHECK(!mdgpud_core_create(&cfg, &core));
	FUZZ_CHECK(!mdgpud_admin_create(core, &cfg, &admin) && admin);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s",
		 mdgpud_admin_path(admin));
	atexit(cleanup);
	return 0;
}

/* What the daemon must answer, in order: true for "err EMSGSIZE". */
static size_t expected(const uint8_t *d, size_t n, bool *emsg)
{
	size_t pos = 0, k = 0;

	for (;;) {
		const uint8_t *nl = memchr(d + pos, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - d) - pos : n - pos;

		if (!nl) {
			if (len >= MDGPUD_ADMIN_LINE_MAX)
				emsg[k++] = true;
			return k;
		}
		emsg[k++] = len >= MDGPUD_ADMIN_LINE_MAX;
		pos += len + 1;
	}
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void check_answers(const uint8_t *data, size_t size, size_t rlen)
{
	static bool emsg[MAX_FINALS];
	size_t want = expected(data, size, emsg), got = 0;
	char *line = resp;

	FUZZ_CHECK(!rlen || resp[rlen - 1] == '\n');
	resp[rlen] = '\0';
	while (line < resp + rlen) {
		char *nl = strchr(line, '\n');

		FUZZ_CHECK(nl);
		*nl = '\0';
		if (starts(line, "ok") || starts(line, "err")) {
			FUZZ_CHECK(got < want);
			if (emsg[got])
				FUZZ_CHECK(starts(line, "err EMSGSIZE "));
			else
				FUZZ_CHECK(!strcmp(line, "ok") ||
					   (starts(line, "err E") &&
					    !starts(line, "err EMSGSIZE")));
			got++;
		}
		line = nl + 1;
	}
	FUZZ_CHECK(got == want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t rlen = 0, sent = 0;
	int turns;

	if (size > MAX_INPUT)
		size = MAX_INPUT;
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(!connect(fd, (struct sockaddr *)&addr, sizeof(addr)));
	mdgpud_core_poll(core, 0);	/* accept */
	for (turns = 0; turns < MAX_TURNS; turns++) {
		ssize_t n;

		if (sent < size) {
			n = send(fd, data + sent, size - sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
			FUZZ_CHECK(n > 0 || errno == EAGAIN);
			if (n > 0)
				sent += (size_t)n;
			if (sent == size)
				FUZZ_CHECK(!shutdown(fd, SHUT_WR));
		} else if (!size && !turns) {
			FUZZ_CHECK(!shutdown(fd, SHUT_WR));
		}
		mdgpud_core_poll(core, 0);
		n = recv(fd, resp + rlen, sizeof(resp) - 1 - rlen,
			 MSG_DONTWAIT);
		if (n == 0)
			break;		/* the daemon closed: all answered */
		FUZZ_CHECK(n > 0 || errno == EAGAIN);
		if (n > 0)
			rlen += (size_t)n;
	}
	FUZZ_CHECK(turns < MAX_TURNS);
	close(fd);
	check_answers(data, size, rlen);
	FUZZ_CHECK(!mdgpud_core_set_policy(core, MDGPU_POLICY_BEST_EFFORT,
					   MDGPU_TIMESLICE_US_DEFAULT));
	return 0;
}
