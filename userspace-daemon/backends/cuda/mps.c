// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Spatial sharing through NVIDIA MPS (config spatial = mps): the backend
 * starts its own MPS control daemon at open() and stops it at close(),
 * and gives the workers of spatial contexts the environment that makes
 * their CUDA context a client of it, with their SM share.
 *
 * The control daemon is `nvidia-cuda-mps-control -d` with its pipe and log
 * directories under mps_dir (<mps_dir>/pipe, <mps_dir>/log), so that it
 * is this daemon's own and not a system-wide one in /tmp/nvidia-mps.  It
 * detaches itself; open() waits for the starting process to exit and for
 * the control socket (<pipe>/control) to appear, both bounded.  close()
 * writes "quit" to `nvidia-cuda-mps-control` with the same directories.
 *
 * Documentation/spatial.md describes the design and what MPS contains
 * (address spaces) and what it does not (faults).
 */
#include "priv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mdgpud/log.h>

/* Where the control binary is looked for when mps_control is unset,
 * after $PATH. */
static const char *const mdgpud_mps_dirs[] = {
	"/usr/local/nvidia/bin", "/usr/bin",
};

int mdgpud_cuda_mps_find(const char *cfg_path, char *out, size_t len)
{
	char buf[4096], *save = NULL;
	const char *path = getenv("PATH");

	if (cfg_path && *cfg_path) {
		if (access(cfg_path, X_OK))
			return -errno;
		return snprintf(out, len, "%s", cfg_path) < (int)len ? 0 :
		       -ENAMETOOLONG;
	}
	if (path && strlen(path) < sizeof(buf)) {
		strcpy(buf, path);
		for (char *d = strtok_r(buf, ":", &save); d;
		     d = strtok_r(NULL, ":", &save))
			if (*d && snprintf(out, len, "%s/%s", d,
					   MDGPUD_CUDA_MPS_CONTROL) < (int)len &&
			    !access(out, X_OK))
				return 0;
	}
	for (size_t i = 0; i < sizeof(mdgpud_mps_dirs) /
			       sizeof(mdgpud_mps_dirs[0]); i++)
		if (snprintf(out, len, "%s/%s", mdgpud_mps_dirs[i],
			     MDGPUD_CUDA_MPS_CONTROL) < (int)len &&
		    !access(out, X_OK))
			return 0;
	return -ENOENT;
}

/* mkdir that accepts an existing directory, then the mode set as asked
 * (umask aside): the workers' uids must reach the pipe directory. */
static int mdgpud_mps_mkdir(const char *path, mode_t mode)
{
	if (mkdir(path, mode) && errno != EEXIST)
		return -errno;
	return chmod(path, mode) ? -errno : 0;
}

/*
 * Whether uid (primary group gid) may search every directory from / down
 * to dir, by the permission bits alone (an ACL or an LSM may still
 * refuse): 0, or -EACCES with the first directory it may not search in
 * *bad, or the negative errno of a stat.  An MPS client that cannot
 * reach the pipe directory runs without MPS, silently, as an ordinary
 * time-sliced context: the check turns that into a refusal at start.
 */
static int mdgpud_mps_searchable(const char *dir, uid_t uid, gid_t gid,
				 char *bad, size_t len)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);

	if (dir[0] != '/' || n >= sizeof(path))
		return -EINVAL;
	for (size_t i = 1; i <= n; i++) {
		struct stat st;
		mode_t need;

		if (i < n && dir[i] != '/')
			continue;
		memcpy(path, dir, i);
		path[i] = '\0';
		if (stat(path, &st))
			return -errno;
		need = st.st_uid == uid ? S_IXUSR :
		       st.st_gid == gid ? S_IXGRP : S_IXOTH;
		if (uid && !(st.st_mode & need)) {
			snprintf(bad, len, "%s", path);
			return -EACCES;
		}
	}
	return 0;
}

/*
 * Runs the control binary with the MPS directories in its environment,
 * `arg` (or none) as its argument and `input` (or nothing) on its stdin;
 * waits for it at most MDGPUD_CUDA_MPS_TIMEOUT_MS (then kills it).
 * Returns its exit status, or a negative errno.
 */
static int mdgpud_mps_run(const struct mdgpud_cuda_mps *m, const char *arg,
			  const char *input)
{
	char pipe_env[PATH_MAX + 32], log_env[PATH_MAX + 32];
	char *argv[3] = { (char *)m->control, (char *)arg, NULL };
	char *envp[4] = { pipe_env, log_env, (char *)"PATH=/usr/bin:/bin",
			  NULL };
	int in[2], status = 0, n, pidfd;
	pid_t pid;

	snprintf(pipe_env, sizeof(pipe_env), "CUDA_MPS_PIPE_DIRECTORY=%s",
		 m->pipe_dir);
	snprintf(log_env, sizeof(log_env), "CUDA_MPS_LOG_DIRECTORY=%s",
		 m->log_dir);
	if (pipe2(in, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		n = -errno;
		close(in[0]);
		close(in[1]);
		return n;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(in[0], 0) < 0 || devnull < 0 || dup2(devnull, 1) < 0)
			_exit(126);
		close_range(3, ~0u, 0);
		execve(m->control, argv, envp);
		_exit(127);
	}
	close(in[0]);
	if (input && write(in[1], input, strlen(input)) < 0)
		mdgpud_warn("cuda: mps: writing to %s: %s", m->control,
			    strerror(errno));
	close(in[1]);
	/*
	 * Bounded (mdgpud_cuda_reap_wait: the pidfd, or waitpid polled
	 * without one): a control program that does not finish is killed,
	 * and one still not gone after the reap bound is reaped by a
	 * thread, so that neither open() nor close() waits on it.
	 */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (!mdgpud_cuda_reap_wait(pid, pidfd, MDGPUD_CUDA_MPS_TIMEOUT_MS,
				   &status)) {
		if (pidfd >= 0)
			close(pidfd);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	}
	mdgpud_err("cuda: mps: %s %s did not finish in %u ms, killed",
		   m->control, arg ? arg : "", MDGPUD_CUDA_MPS_TIMEOUT_MS);
	kill(pid, SIGKILL);
	if (mdgpud_cuda_reap_wait(pid, pidfd, MDGPUD_CUDA_REAP_WAIT_MS, NULL))
		mdgpud_cuda_reap_later(pid, pidfd, NULL,
				       "nvidia-cuda-mps-control");
	else if (pidfd >= 0)
		close(pidfd);
	return -ETIMEDOUT;
}

/* Whether the control socket exists (the daemon answers there). */
static bool mdgpud_mps_up(const struct mdgpud_cuda_mps *m)
{
	char path[PATH_MAX + 16];
	struct stat st;

	snprintf(path, sizeof(path), "%s/control", m->pipe_dir);
	return !stat(path, &st);
}

static int mdgpud_mps_wait_up(const struct mdgpud_cuda_mps *m)
{
	struct timespec nap = { 0, 10000000 };	/* 10 ms */

	for (uint32_t t = 0; t < MDGPUD_CUDA_MPS_TIMEOUT_MS; t += 10) {
		if (mdgpud_mps_up(m))
			return 0;
		nanosleep(&nap, NULL);
	}
	return -ETIMEDOUT;
}

int mdgpud_cuda_mps_start(struct mdgpud_cuda_mps *m,
			  const struct mdgpud_backend_cfg *cfg)
{
	char bad[PATH_MAX];
	int ret;

	m->running = false;
	if (!cfg->mps_dir || !*cfg->mps_dir ||
	    strlen(cfg->mps_dir) > PATH_MAX - 8) {
		mdgpud_err("cuda: spatial = mps: mps_dir is empty or too long");
		return -EINVAL;
	}
	ret = mdgpud_cuda_mps_find(cfg->mps_control, m->control,
				   sizeof(m->control));
	if (ret) {
		if (cfg->mps_control && *cfg->mps_control)
			mdgpud_err("cuda: spatial = mps: mps_control %s: %s: "
				   "spatial vGPUs will be refused",
				   cfg->mps_control, strerror(-ret));
		else
			mdgpud_err("cuda: spatial = mps: %s not found in "
				   "$PATH, /usr/local/nvidia/bin or /usr/bin: "
				   "spatial vGPUs will be refused",
				   MDGPUD_CUDA_MPS_CONTROL);
		return ret;
	}
	snprintf(m->pipe_dir, sizeof(m->pipe_dir), "%s/pipe", cfg->mps_dir);
	snprintf(m->log_dir, sizeof(m->log_dir), "%s/log", cfg->mps_dir);
	/*
	 * The pipe and log directories belong to the spatial workers' uid
	 * (m->cred), mode 0700: no time-sliced worker reaches the server,
	 * and the server the control daemon starts as that uid writes its
	 * log; root (the daemon, the control daemon) reaches them whatever
	 * their owner.
	 */
	ret = mdgpud_mps_mkdir(cfg->mps_dir, 0755);
	if (!ret)
		ret = mdgpud_mps_mkdir(m->pipe_dir, 0700);
	if (!ret)
		ret = mdgpud_mps_mkdir(m->log_dir, 0700);
	if (!ret && (chown(m->pipe_dir, m->cred.uid, m->cred.gid) ||
		     chown(m->log_dir, m->cred.uid, m->cred.gid)))
		ret = -errno;
	if (ret) {
		mdgpud_err("cuda: spatial = mps: mps_dir %s: %s", cfg->mps_dir,
			   strerror(-ret));
		return ret;
	}
	/*
	 * A client that cannot reach the pipe directory runs without MPS
	 * and says nothing (measured on the H100: a pipe directory below a
	 * root-owned 0700 directory, the workers' contexts type C instead
	 * of M+C, no NEW CLIENT in control.log, two half vGPUs at 1.19x
	 * the time-sliced pair instead of 1.76x): refused here instead.
	 */
	ret = mdgpud_mps_searchable(m->pipe_dir, m->cred.uid, m->cred.gid,
				    bad, sizeof(bad));
	if (ret) {
		mdgpud_err("cuda: spatial = mps: uid %u (the spatial workers') "
			   "cannot reach %s: %s%s%s: spatial vGPUs will be "
			   "refused", (unsigned)m->cred.uid, m->pipe_dir,
			   ret == -EACCES ? "no search permission on " : "",
			   ret == -EACCES ? bad : strerror(-ret),
			   ret == -EACCES ? " (mps_dir must lie below "
			   "directories that uid may search)" : "");
		return ret;
	}
	/* A control daemon left by an earlier mdgpud of this directory
	 * would make -d fail: it is told to quit first. */
	if (mdgpud_mps_up(m)) {
		mdgpud_warn("cuda: mps: a control daemon already answers in "
			    "%s: telling it to quit", m->pipe_dir);
		mdgpud_mps_run(m, NULL, "quit\n");
	}
	ret = mdgpud_mps_run(m, "-d", NULL);
	if (ret > 0 || (!ret && mdgpud_mps_wait_up(m))) {
		mdgpud_err("cuda: mps: %s -d failed (%s): spatial vGPUs will "
			   "be refused; see %s/control.log", m->control,
			   ret > 0 ? "exit status" : "no control socket",
			   m->log_dir);
		if (!ret)
			mdgpud_mps_run(m, NULL, "quit\n");
		return -EIO;
	}
	if (ret < 0)
		return ret;
	m->running = true;
	mdgpud_info("cuda: mps: control daemon %s running, pipe directory %s",
		    m->control, m->pipe_dir);
	return 0;
}

void mdgpud_cuda_mps_stop(struct mdgpud_cuda_mps *m)
{
	int ret;

	if (!m->running)
		return;
	ret = mdgpud_mps_run(m, NULL, "quit\n");
	if (ret)
		mdgpud_warn("cuda: mps: quit: %s", ret < 0 ? strerror(-ret) :
			    "non-zero exit status");
	else
		mdgpud_info("cuda: mps: control daemon stopped");
	m->running = false;
}

/* Whether an environment entry is one of MPS's (CUDA_MPS_*). */
static bool mdgpud_mps_var(const char *e)
{
	return !strncmp(e, "CUDA_MPS_", 9);
}

char **mdgpud_cuda_mps_env(const struct mdgpud_cuda_mps *m,
			   char *const *base, uint32_t sm_percent)
{
	size_t n = 0, k = 0;
	char **env;

	while (base && base[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (mdgpud_mps_var(base[i]))
			continue;
		env[k] = strdup(base[i]);
		if (!env[k++])
			goto err;
	}
	if (sm_percent) {
		if (asprintf(&env[k++], "CUDA_MPS_PIPE_DIRECTORY=%s",
			     m->pipe_dir) < 0) {
			env[--k] = NULL;
			goto err;
		}
		if (asprintf(&env[k++], "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%u",
			     sm_percent) < 0) {
			env[--k] = NULL;
			goto err;
		}
	}
	return env;
err:
	mdgpud_cuda_mps_env_free(env);
	return NULL;
}

void mdgpud_cuda_mps_env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}
