// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The mdgpud the mdgpu target talks to: started by the benchmark with a
 * config file and a socket in a private temp dir, stopped at the end.
 */
#include "bench.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void ms_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int bench_daemon_start(struct bench_daemon *d, const char *mdgpud,
		       const char *backend, uint32_t timeslice_us,
		       const char *log_path)
{
	char conf[192];
	FILE *f;
	pid_t pid;

	memset(d, 0, sizeof(*d));
	snprintf(d->dir, sizeof(d->dir), "%s/mdgpu-bench.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(d->dir)) {
		fprintf(stderr, "mdgpu-bench: mkdtemp %s: %s\n", d->dir,
			strerror(errno));
		return -errno;
	}
	snprintf(bench_mdgpu_env.socket_path,
		 sizeof(bench_mdgpu_env.socket_path), "%s/mdgpud.sock", d->dir);
	snprintf(bench_mdgpu_env.admin_path,
		 sizeof(bench_mdgpu_env.admin_path), "%s/mdgpud-admin.sock",
		 d->dir);
	bench_mdgpu_env.sim = !strcmp(backend, "sim");
	snprintf(conf, sizeof(conf), "%s/mdgpud.conf", d->dir);
	if (log_path)
		snprintf(d->log_path, sizeof(d->log_path), "%s", log_path);
	else
		snprintf(d->log_path, sizeof(d->log_path), "%s/mdgpud.log",
			 d->dir);
	d->own_log = !log_path;
	f = fopen(conf, "w");
	if (!f)
		return -errno;
	fprintf(f, "# written by mdgpu-bench\n"
		"socket_path = %s\n"
		"socket_mode = 0600\n"
		"admin_socket_path = %s\n"
		"admin_socket_mode = 0600\n"
		"backend = %s\n"
		"timeslice_us = %u\n"
		"policy = best-effort\n"
		"log_level = info\n"
		"# the benchmark's tenants (up to 32) are all one uid\n"
		"uid_max_vgpus = 0\n"
		"uid_max_connections = 0\n",
		bench_mdgpu_env.socket_path, bench_mdgpu_env.admin_path,
		backend, timeslice_us);
	/* Extra configuration lines for A/B runs (e.g. worker_sandbox =
	 * off), ';'-separated: MDGPU_BENCH_MDGPUD_CONF. */
	if (getenv("MDGPU_BENCH_MDGPUD_CONF")) {
		for (const char *p = getenv("MDGPU_BENCH_MDGPUD_CONF"); *p; p++)
			fputc(*p == ';' ? '\n' : *p, f);
		fputc('\n', f);
	}
	/* sim: SPIN_NS takes real time, and room for 32 1g vGPUs. */
	if (bench_mdgpu_env.sim)
		fprintf(f, "sim_realtime = 1\nsim_fb_mib = 65536\n");
	fclose(f);

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open(d->log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
		execl(mdgpud, mdgpud, "-c", conf, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", mdgpud, strerror(errno));
		_exit(127);
	}
	d->pid = pid;
	/* Ready when the socket exists; give the cuda backend 60 s. */
	for (int i = 0; i < 6000; i++) {
		struct stat st;
		int status;

		if (!stat(bench_mdgpu_env.socket_path, &st) &&
		    S_ISSOCK(st.st_mode))
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			d->pid = 0;
			fprintf(stderr, "mdgpu-bench: mdgpud exited (status "
				"0x%x) before listening; its log %s:\n", status,
				d->log_path);
			f = fopen(d->log_path, "r");
			if (f) {
				char line[256];

				while (fgets(line, sizeof(line), f))
					fprintf(stderr, "  %s", line);
				fclose(f);
			}
			return -ENODEV;
		}
		ms_sleep(10);
	}
	fprintf(stderr, "mdgpu-bench: mdgpud not listening after 60 s\n");
	bench_daemon_stop(d);
	return -ETIMEDOUT;
}

void bench_daemon_stop(struct bench_daemon *d)
{
	int status;

	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		for (int i = 0; i < 500; i++) {
			if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
				d->pid = 0;
				break;
			}
			ms_sleep(10);
		}
		if (d->pid > 0) {
			fprintf(stderr, "mdgpu-bench: mdgpud ignored SIGTERM "
				"for 5 s; killing it\n");
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &status, 0);
			d->pid = 0;
		}
	}
}

/* utime + stime of /proc/<pid>/stat in seconds; *ppid its parent,
 * *state its state letter (Z: exited, not yet reaped). */
static int proc_cpu(pid_t pid, double *s, pid_t *ppid, char *state)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	int pp;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* comm may hold spaces */
	if (!p)
		return -EINVAL;
	/* fields 3.. : state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime */
	if (sscanf(p + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   state, &pp, &ut, &st) != 4)
		return -EINVAL;
	*s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	*ppid = pp;
	return 0;
}

/* The daemon's children (its workers): their CPU seconds in *cpu_s, and
 * how many are still running (not zombies); negative errno on error. */
static int daemon_children(const struct bench_daemon *d, double *cpu_s)
{
	struct dirent *de;
	int running = 0;
	DIR *dir;

	*cpu_s = 0;
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		double s;
		pid_t pp;
		char state;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (proc_cpu(atoi(de->d_name), &s, &pp, &state) ||
		    pp != d->pid)
			continue;
		*cpu_s += s;
		running += state != 'Z';
	}
	closedir(dir);
	return running;
}

int bench_daemon_cpu(const struct bench_daemon *d, double *sup_s,
		     double *workers_s)
{
	pid_t pp;
	char state;
	int ret;

	*workers_s = 0;
	ret = proc_cpu(d->pid, sup_s, &pp, &state);
	if (ret)
		return ret;
	ret = daemon_children(d, workers_s);
	return ret < 0 ? ret : 0;
}

int bench_daemon_workers(const struct bench_daemon *d)
{
	double s;

	if (d->pid <= 0)
		return 0;
	return daemon_children(d, &s);
}
