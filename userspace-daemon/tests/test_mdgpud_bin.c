// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The mdgpud binary: command line, SIGUSR1 status dump to the log, clean
 * SIGTERM shutdown (clients see -ENODEV, the socket is removed), a second
 * daemon refused on a live socket.  Needs MDGPUD_BIN (make check-daemon
 * sets it); skipped with a reason otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "uapi/mdgpu.h"
#include "mdgpu/mdgpu.h"

struct bin {
	char dir[64], sock[96], log[96], opt_sock[128];
	pid_t pid;
};

static pid_t spawn(struct bin *b, const char *log)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		execl(getenv("MDGPUD_BIN"), "mdgpud", "-c", "/dev/null", "-o",
		      b->opt_sock, "-o", "log_level=info", "-o",
		      "sim_fb_mib=2048", (char *)NULL);
		_exit(127);
	}
	return pid;
}

static bool wait_socket(const char *path)
{
	struct stat st;

	for (int i = 0; i < 500; i++) {
		if (!stat(path, &st) && S_ISSOCK(st.st_mode))
			return true;
		usleep(10000);
	}
	return false;
}

static bool log_has(const char *log, const char *what)
{
	char buf[8192];
	FILE *f = fopen(log, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, what) != NULL;
}

static void test_signals(void **state)
{
	struct bin b;
	struct mdgpu_open_opts o = { .type = "1g" };
	struct mdgpu *g;
	mdgpu_devptr x;
	uint64_t v;
	char log2[128];
	int status;
	pid_t second;

	(void)state;
	if (!getenv("MDGPUD_BIN")) {
		skip();	/* needs the binary: run through make check-daemon */
		return;
	}
	snprintf(b.dir, sizeof(b.dir), "/tmp/mdgpud-bin-%d", (int)getpid());
	mkdir(b.dir, 0700);
	snprintf(b.sock, sizeof(b.sock), "%s/s", b.dir);
	snprintf(b.log, sizeof(b.log), "%s/log", b.dir);
	snprintf(b.opt_sock, sizeof(b.opt_sock), "socket_path=%s", b.sock);
	b.pid = spawn(&b, b.log);
	assert_true(wait_socket(b.sock));

	o.path = b.sock;
	assert_int_equal(mdgpu_open(&o, &g), 0);
	assert_int_equal(mdgpu_mem_alloc(g, 1 << 20, &x), 0);

	/* A second daemon must not steal a live socket. */
	snprintf(log2, sizeof(log2), "%s/log2", b.dir);
	second = spawn(&b, log2);
	assert_int_equal(waitpid(second, &status, 0), second);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	assert_true(log_has(log2, "another mdgpud is listening"));
	assert_int_equal(mdgpu_query(g, MDGPU_QUERY_FB_USED, &v), 0);
	assert_int_equal(v, 1 << 20);

	kill(b.pid, SIGUSR1);
	for (int i = 0; i < 200 && !log_has(b.log, "status:"); i++)
		usleep(10000);
	assert_true(log_has(b.log, "status: mdgpu sim (sim), 1 vGPUs"));
	assert_true(log_has(b.log, "fb 1048576/1073741824 bytes in 1 "
			    "allocations, weight 1 cap 100% priority 4"));

	kill(b.pid, SIGTERM);
	assert_int_equal(waitpid(b.pid, &status, 0), b.pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(mdgpu_query(g, MDGPU_QUERY_FB_USED, &v), -ENODEV);
	assert_int_equal(access(b.sock, F_OK), -1);	/* socket removed */
	assert_true(log_has(b.log, "destroyed"));
	mdgpu_close(g);
	unlink(b.log);
	unlink(log2);
	rmdir(b.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signals),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
