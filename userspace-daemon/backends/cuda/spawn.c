// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cuda backend's worker processes: each vGPU context is one
 * mdgpud-worker process with its own CUDA context (its own GPU address
 * space).  This file finds the worker binary, probes the GPU in a
 * throw-away worker (open), spawns a worker per context (fork+exec, a
 * shared memfd for the ring of cuda_rpc.h, a unix socket for fds),
 * watches it through a pidfd, and shuts it down and reaps it without
 * ever waiting on it beyond a bound.
 *
 * Documentation/cuda-backend.md describes the design and its decisions.
 */
#include "priv.h"
#include "cuda_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mdgpud/cuda_values.h>
#include <mdgpud/log.h>
#include <uapi/mdgpu.h>

#include "common/gpu_select.h"

static int mdgpud_cuda_find_worker(const char *cfg_path, char *out,
				   size_t out_len)
{
	char self[PATH_MAX];
	const char *env;
	ssize_t n;

	if (cfg_path) {
		if (access(cfg_path, X_OK))
			return -errno;
		snprintf(out, out_len, "%s", cfg_path);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			slash[1] = 0;
			if ((size_t)snprintf(out, out_len, "%s%s", self,
					     MDGPUD_CUDA_WORKER_NAME) < out_len &&
			    !access(out, X_OK))
				return 0;
		}
	}
	env = getenv("MDGPUD_WORKER");
	if (env && *env && !access(env, X_OK)) {
		snprintf(out, out_len, "%s", env);
		return 0;
	}
	return -ENOENT;
}

/*
 * fork+exec the worker with shm_fd as fd 3 and sock (or nothing) as fd 4;
 * every other descriptor but stderr is closed, stdin/stdout are /dev/null.
 * The child only makes async-signal-safe calls before execve().
 */
static int mdgpud_cuda_spawn(struct mdgpud_backend *be, char *const argv[],
			     struct mdgpud_cuda_rpc_shm *shm, int shm_fd,
			     int sock, uint32_t sm_percent, pid_t *pid_out,
			     int *pidfd_out)
{
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	char **env;
	pid_t pid;
	int pidfd;

	if (devnull < 0)
		return -errno;
	/*
	 * Built before fork (the child may not allocate): MPS's variables
	 * for a spatial worker, and none for any other, whatever the
	 * daemon's own environment holds.
	 */
	env = mdgpud_cuda_mps_env(&be->mps, mdgpud_cuda_sandbox_env(&be->sandbox),
				  sm_percent);
	if (!env) {
		close(devnull);
		return -ENOMEM;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(devnull);
		mdgpud_cuda_mps_env_free(env);
		return err;
	}
	if (pid == 0) {
		int a = fcntl(shm_fd, F_DUPFD, 10);
		int b = sock >= 0 ? fcntl(sock, F_DUPFD, 10) : -1;
		sigset_t none;

		/*
		 * Own process group: a terminal's ^C reaches the daemon, which
		 * tears its contexts down, not the workers directly (a worker
		 * whose supervisor died scrubs its memory and exits).  Signal
		 * mask cleared: the daemon may block signals it reads through
		 * signalfd, and exec would pass that mask on.
		 */
		setpgid(0, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);

		if (a < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 ||
		    dup2(a, MDGPUD_CUDA_WORKER_SHM_FD) < 0)
			_exit(126);
		if (b >= 0 && dup2(b, MDGPUD_CUDA_WORKER_SOCK_FD) < 0)
			_exit(126);
		close_range(b >= 0 ? MDGPUD_CUDA_WORKER_SOCK_FD + 1
				   : MDGPUD_CUDA_WORKER_SHM_FD + 1, ~0u, 0);
		execve(be->worker_path, argv, env);
		{
			/* Tell the supervisor why (plain stores: safe here). */
			static const char why[] = "exec of the worker failed: ";
			size_t n = 0;

			for (size_t i = 0; why[i] && n < sizeof(shm->msg) - 1;)
				shm->msg[n++] = why[i++];
			for (size_t i = 0; be->worker_path[i] &&
			     n < sizeof(shm->msg) - 1;)
				shm->msg[n++] = be->worker_path[i++];
			shm->msg[n] = 0;
		}
		_exit(127);
	}
	close(devnull);
	mdgpud_cuda_mps_env_free(env);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		int err = -errno;

		/* Not started: killed, and reaped within the usual bound
		 * (no pidfd: waitpid is polled). */
		kill(pid, SIGKILL);
		if (mdgpud_cuda_reap_wait(pid, -1, MDGPUD_CUDA_REAP_WAIT_MS,
					  NULL))
			mdgpud_cuda_reap_later(pid, -1, NULL,
					       "worker without a pidfd");
		return err;
	}
	*pid_out = pid;
	*pidfd_out = pidfd;
	return 0;
}

int mdgpud_cuda_pid_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

static struct mdgpud_cuda_rpc_shm *mdgpud_cuda_shm_new(struct mdgpud_backend *be,
						       int *fd_out)
{
	struct mdgpud_cuda_rpc_shm *shm;
	int fd = memfd_create("mdgpud-cuda-rpc", MFD_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (ftruncate(fd, sizeof(*shm))) {
		close(fd);
		return NULL;
	}
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	if (shm == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	shm->magic = MDGPUD_CUDA_RPC_MAGIC;
	shm->version = MDGPUD_CUDA_RPC_VERSION;
	shm->worker_spin_ns = be->worker_spin_ns;
	shm->stats_enabled = be->stats_enabled;
	*fd_out = fd;
	return shm;
}

static uint32_t mdgpud_cuda_env_u32(const char *name, uint32_t def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return def;
	return (uint32_t)v;
}



/*
 * spatial = mps: the control daemon, and the one uid of the spatial
 * workers (priv.h, struct mdgpud_cuda_mps).  A failure is logged and
 * leaves mps.running false: spatial contexts are then refused, the
 * time-sliced ones work as without spatial sharing.
 */
static void mdgpud_cuda_spatial_open(struct mdgpud_backend *be,
				     const struct mdgpud_backend_cfg *cfg)
{
	if (mdgpud_cuda_sandbox_cred_get(&be->sandbox, 0, &be->mps.cred)) {
		mdgpud_err("cuda: spatial = mps: no worker uid for the MPS "
			   "clients: spatial vGPUs will be refused");
		return;
	}
	if (mdgpud_cuda_mps_start(&be->mps, cfg)) {
		mdgpud_cuda_sandbox_cred_put(&be->mps.cred);
		return;
	}
	be->mps.cred_held = true;
	mdgpud_info("cuda: spatial workers run as uid %u (the MPS server's "
		    "user)", (unsigned)be->mps.cred.uid);
}

/*
 * Probes the GPU `device` names in a throw-away worker, which finds it
 * (worker/device.c) and fills *probe: its ordinal, ids, memory and
 * attributes.  0, or a negative errno: -ENODEV, logged with the worker's
 * reason, when it found no usable GPU.  cuInit never runs here.  The probe is sandboxed like every worker, so that a
 * sandbox the machine cannot give (worker_sandbox = required) stops the
 * daemon here, with the worker's reason, and not at the first tenant.
 */
static int mdgpud_cuda_probe(struct mdgpud_backend *be, const char *device,
			     struct mdgpud_cuda_rpc_info *probe)
{
	char sandbox_arg[MDGPUD_SANDBOX_ARG_MAX], msg[MDGPUD_CUDA_RPC_MSG_MAX];
	struct mdgpud_cuda_rpc_shm *shm;
	struct mdgpud_cuda_cred cred;
	char *argv[5];
	pid_t pid;
	int fd, pidfd, ret;

	shm = mdgpud_cuda_shm_new(be, &fd);
	if (!shm)
		return errno ? -errno : -ENOMEM;
	ret = mdgpud_cuda_sandbox_cred_get(&be->sandbox, 0, &cred);
	if (ret) {
		close(fd);
		goto out;
	}
	mdgpud_cuda_sandbox_arg(&be->sandbox, &cred, sandbox_arg,
				sizeof(sandbox_arg));
	argv[0] = (char *)MDGPUD_CUDA_WORKER_NAME;
	argv[1] = (char *)"probe";
	argv[2] = (char *)device;
	argv[3] = be->sandbox.mode ? sandbox_arg : NULL;
	argv[4] = NULL;
	ret = mdgpud_cuda_spawn(be, argv, shm, fd, -1, 0, &pid, &pidfd);
	close(fd);
	if (ret) {
		mdgpud_cuda_sandbox_cred_put(&cred);
		goto out;
	}
	/*
	 * Wait on the pidfd, not waitpid(): a SIGCHLD handler elsewhere in the
	 * daemon may reap the child first.  A probe that hangs is killed, and
	 * if it is still not gone after the reap bound (the driver tearing
	 * down), a thread reaps it: open() fails without waiting for it.
	 */
	if (mdgpud_cuda_reap_wait(pid, pidfd, MDGPUD_CUDA_PROBE_TIMEOUT_MS,
				  NULL)) {
		snprintf(shm->msg, sizeof(shm->msg),
			 "probe did not finish in %u ms",
			 MDGPUD_CUDA_PROBE_TIMEOUT_MS);
		kill(pid, SIGKILL);
		if (mdgpud_cuda_reap_wait(pid, pidfd, MDGPUD_CUDA_REAP_WAIT_MS,
					  NULL)) {
			/* Reaped in the background: uid and pidfd go there. */
			mdgpud_cuda_reap_later(pid, pidfd, &cred,
					       "probe worker");
			pidfd = -1;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	mdgpud_cuda_sandbox_cred_put(&cred);	/* reaped, or the reaper's */
	if (atomic_load(&shm->state) != MDGPUD_CUDA_WORKER_PROBED) {
		mdgpud_cuda_worker_msg(shm, msg, sizeof(msg));
		mdgpud_err("cuda: no usable GPU (cuda_device = %s): %s", device,
			   msg[0] ? msg : "worker failed to start");
		ret = -ENODEV;
		goto out;
	}
	/*
	 * The probe's answer, copied once out of memory the worker could
	 * write (a child it forked may still hold the memfd): every value
	 * is checked and used from the copy only.
	 */
	memcpy(probe, (const void *)&shm->info, sizeof(*probe));
	probe->name[sizeof(probe->name) - 1] = '\0';
	probe->bus_id[sizeof(probe->bus_id) - 1] = '\0';
	if (probe->ordinal < 0 || probe->ordinal > MDGPU_GPU_ORDINAL_MAX) {
		mdgpud_err("cuda: the probe answered ordinal %d, not one of "
			   "0..%d", (int)probe->ordinal, MDGPU_GPU_ORDINAL_MAX);
		ret = -ENODEV;
	}
out:
	munmap(shm, sizeof(*shm));
	return ret;
}

/*
 * What derives from the GPU the probe found (cfg->derive) into *local,
 * with mps_dir's text in mps_dir[PATH_MAX]: worker_uid_base and mps_dir
 * stay cfg's without a derive().
 */
static int mdgpud_cuda_derive(const struct mdgpud_backend_cfg *cfg,
			      const struct mdgpud_cuda_rpc_info *probe,
			      struct mdgpud_backend_cfg *local,
			      char mps_dir[PATH_MAX])
{
	char bus_id[sizeof(probe->bus_id) + 1];
	int ret;

	if (!cfg->derive)
		return 0;
	memcpy(bus_id, probe->bus_id, sizeof(probe->bus_id));
	bus_id[sizeof(probe->bus_id)] = '\0';
	ret = cfg->derive(cfg->derive_arg, (int)probe->ordinal, bus_id,
			  &local->worker_uid_base, mps_dir, PATH_MAX);
	if (!ret)
		local->mps_dir = mps_dir;
	return ret;
}

/* The backend's GPU from the probe's answer; logged. */
static void mdgpud_cuda_gpu_info(struct mdgpud_backend *be,
				 const struct mdgpud_backend_cfg *cfg,
				 const char *device,
				 const struct mdgpud_cuda_rpc_info *probe)
{
	uint64_t reserve = cfg->fb_reserve ? cfg->fb_reserve
					   : MDGPUD_CUDA_FB_RESERVE_DEFAULT;

	memset(&be->info, 0, sizeof(be->info));
	memcpy(be->info.name, probe->name, sizeof(be->info.name) - 1);
	memcpy(be->info.bus_id, probe->bus_id, sizeof(be->info.bus_id) - 1);
	mdgpu_gpu_uuid_format(probe->uuid, be->info.uuid);
	be->info.ordinal = probe->ordinal;
	be->info.sm_count = probe->sm_count;
	be->info.kind = MDGPU_BACKEND_CUDA;
	/* The staging area, which each worker registers with the driver
	 * (cuMemHostRegister: pinned) for its whole life. */
	be->info.ctx_pinned = (MDGPUD_CUDA_RPC_STAGING_BYTES + 4095u) &
			      ~(uint64_t)4095u;
	mdgpud_cuda_info_from_probe(&be->info.dev, probe);
	mdgpud_cuda_prio_range(be, probe->prio_least, probe->prio_greatest);
	if (cfg->fb_size)
		be->info.fb_size = cfg->fb_size;
	else
		be->info.fb_size = probe->mem_free_bytes > reserve ?
				   probe->mem_free_bytes - reserve : 0;
	if (be->info.fb_size > probe->mem_total_bytes)
		be->info.fb_size = probe->mem_total_bytes;
	mdgpud_info("cuda: cuda_device = %s: GPU %d, bus id %s, %s, %s",
		    device, be->info.ordinal, be->info.bus_id, be->info.uuid,
		    be->info.name);
	mdgpud_info("cuda: %u SMs, driver %d, %" PRIu64 " MiB free of %" PRIu64
		    " MiB, partitioning %" PRIu64 " MiB", be->info.sm_count,
		    probe->driver_version, probe->mem_free_bytes >> 20,
		    probe->mem_total_bytes >> 20, be->info.fb_size >> 20);
}

int mdgpud_cuda_open(const struct mdgpud_backend_cfg *cfg,
			    struct mdgpud_backend **out,
			    struct mdgpud_gpu_info *info)
{
	const char *device = cfg->device ? cfg->device : "0";
	struct mdgpud_backend *be = calloc(1, sizeof(*be));
	struct mdgpud_backend_cfg local = *cfg;
	struct mdgpud_cuda_rpc_info probe;
	char mps_dir[PATH_MAX];
	int ordinal, ret;

	if (!be)
		return -ENOMEM;
	be->sup_spin_ns = mdgpud_cuda_env_u32("MDGPUD_CUDA_SPIN_NS",
					      MDGPUD_CUDA_SUP_SPIN_NS_DEFAULT);
	be->worker_spin_ns = mdgpud_cuda_env_u32(
		"MDGPUD_CUDA_WORKER_SPIN_NS", MDGPUD_CUDA_WORKER_SPIN_NS_DEFAULT);
	be->stats_enabled = mdgpud_cuda_env_u32("MDGPUD_CUDA_STATS", 0) != 0;
	be->poll_ns = (uint64_t)cfg->worker_poll_us * 1000;
	be->nr_pollers = cfg->worker_pollers < MDGPUD_CUDA_POLLERS_MAX ?
			 cfg->worker_pollers : MDGPUD_CUDA_POLLERS_MAX;
	be->hang_timeout_ns = (uint64_t)(cfg->hang_timeout_ms ?
		cfg->hang_timeout_ms : MDGPUD_CUDA_HANG_TIMEOUT_MS_DEFAULT) *
		1000000ull;
	be->load_timeout_ns = (uint64_t)(cfg->module_load_timeout_ms ?
		cfg->module_load_timeout_ms :
		MDGPUD_CUDA_LOAD_TIMEOUT_MS_DEFAULT) * 1000000ull;
	be->start_timeout_ns = (uint64_t)(cfg->worker_start_timeout_ms ?
		cfg->worker_start_timeout_ms :
		MDGPUD_CUDA_START_TIMEOUT_MS_DEFAULT) * 1000000ull;
	/* A worker's shutdown (scrub, free, exit) has the same bound. */
	be->shutdown_timeout_ns = (uint64_t)mdgpud_cuda_env_u32(
		"MDGPUD_CUDA_SHUTDOWN_MS",
		(uint32_t)(be->hang_timeout_ns / 1000000)) * 1000000ull;
	ret = mdgpud_cuda_find_worker(cfg->worker_path, be->worker_path,
				      sizeof(be->worker_path));
	if (ret) {
		mdgpud_warn("cuda: %s not found (cfg worker_path, next to the "
			    "executable, $MDGPUD_WORKER)",
			    MDGPUD_CUDA_WORKER_NAME);
		free(be);
		return ret;
	}
	/*
	 * What derives from the GPU (the workers' uids from its PCI bus id,
	 * mps_dir from its ordinal) is known once the probe found it: until
	 * then, where the uid range follows the GPU (worker_uid_base 0), the
	 * probe runs as cfg->probe_uid (sandbox.c).
	 */
	if (mdgpu_gpu_select_ordinal(device, &ordinal))
		ordinal = -1;
	ret = mdgpud_cuda_sandbox_init(&be->sandbox, &local);
	if (ret)
		goto err_free;
	ret = mdgpud_cuda_probe(be, device, &probe);
	if (ret)
		goto err_sandbox;
	if (ordinal >= 0 && probe.ordinal != ordinal) {
		mdgpud_err("cuda: the probe of ordinal %d answered %d", ordinal,
			   (int)probe.ordinal);
		ret = -ENODEV;
		goto err_sandbox;
	}
	ret = mdgpud_cuda_derive(cfg, &probe, &local, mps_dir);
	if (!ret)
		ret = mdgpud_cuda_sandbox_ids_open(&be->sandbox,
						   local.worker_uid_base,
						   local.worker_uid_count);
	if (ret)
		goto err_sandbox;
	be->device_ordinal = probe.ordinal;
	mdgpud_cuda_gpu_info(be, cfg, device, &probe);
	be->spatial = cfg->spatial;
	if (be->spatial == MDGPUD_SPATIAL_MPS)
		mdgpud_cuda_spatial_open(be, &local);
	if (info)
		*info = be->info;
	*out = be;
	return 0;

err_sandbox:
	mdgpud_cuda_sandbox_fini(&be->sandbox);
err_free:
	free(be);
	return ret;
}

void mdgpud_cuda_close(struct mdgpud_backend *be)
{
	mdgpud_cuda_mps_stop(&be->mps);
	if (be->mps.cred_held)
		mdgpud_cuda_sandbox_cred_put(&be->mps.cred);
	mdgpud_cuda_sandbox_fini(&be->sandbox);
	free(be);
}



struct mdgpud_cuda_zombie {
	pid_t pid;
	int pidfd;			/* or -1 */
	struct mdgpud_cuda_cred cred;	/* its pool held by the thread */
};

static void *mdgpud_cuda_reaper(void *arg)
{
	struct mdgpud_cuda_zombie *z = arg;
	struct mdgpud_cuda_ids *pool = z->cred.pool;

	while (waitpid(z->pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (z->pidfd >= 0)
		close(z->pidfd);
	/* Reaped: its uid may go to another worker. */
	mdgpud_cuda_sandbox_cred_put(&z->cred);
	mdgpud_cuda_ids_close(pool);
	free(z);
	return NULL;
}

/*
 * Waits at most wait_ms for child pid to exit and reaps it: 0 (its wait
 * status in *status when not NULL), or -ETIMEDOUT while it still runs
 * (not reaped).  The wait is on the pidfd, not a blocking waitpid(), so
 * that it is bounded; without a pidfd (-1: pidfd_open failed) waitpid()
 * is polled with WNOHANG every 10 ms.  A child some other waiter reaped
 * first (ECHILD) counts as reaped, status 0.
 */
int mdgpud_cuda_reap_wait(pid_t pid, int pidfd, uint32_t wait_ms, int *status)
{
	const struct timespec nap = { 0, 10000000 };	/* 10 ms */
	int st = 0, n;

	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		do
			n = poll(&p, 1, (int)wait_ms);
		while (n < 0 && errno == EINTR);
		/* Not gone, or the pidfd cannot tell: a waitpid() now could
		 * block without a bound. */
		if (n <= 0)
			return -ETIMEDOUT;
		while ((n = (int)waitpid(pid, &st, 0)) < 0 && errno == EINTR)
			;
	} else {
		uint64_t end = mdgpud_cuda_now_ns() + wait_ms * 1000000ull;

		while ((n = (int)waitpid(pid, &st, WNOHANG)) == 0 ||
		       (n < 0 && errno == EINTR)) {
			if (mdgpud_cuda_now_ns() >= end)
				return -ETIMEDOUT;
			nanosleep(&nap, NULL);
		}
	}
	if (status)
		*status = n > 0 ? st : 0;
	return 0;
}

/*
 * A child that was killed or told to exit and is still not gone
 * (mdgpud_cuda_reap_wait timed out): a detached thread reaps it, then
 * closes its pidfd (-1: none) and gives its uid back (cred, or NULL).
 * Returns true if the thread took it over.  Without a thread the child
 * is left unreaped and its uid stays taken: a zombie the kernel keeps
 * until the daemon exits beats a dispatcher blocked on the driver.
 * `what` names it in the log.  The caller no longer owns pidfd and cred
 * either way.
 */
bool mdgpud_cuda_reap_later(pid_t pid, int pidfd,
			    struct mdgpud_cuda_cred *cred, const char *what)
{
	struct mdgpud_cuda_zombie *z = malloc(sizeof(*z));
	pthread_attr_t attr;
	pthread_t t;
	int n;

	if (z && !pthread_attr_init(&attr)) {
		z->pid = pid;
		z->pidfd = pidfd;
		z->cred = cred ? *cred : (struct mdgpud_cuda_cred){ 0 };
		if (z->cred.pool)	/* the backend may close first */
			mdgpud_cuda_ids_hold(z->cred.pool);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		n = pthread_create(&t, &attr, mdgpud_cuda_reaper, z);
		pthread_attr_destroy(&attr);
		if (!n) {
			mdgpud_info("cuda: %s %d still exiting, reaped in the "
				    "background", what, (int)pid);
			if (cred)
				cred->pool = NULL;
			return true;
		}
		mdgpud_cuda_ids_close(z->cred.pool);
	}
	free(z);
	mdgpud_warn("cuda: %s %d still exiting, left unreaped%s", what,
		    (int)pid, cred && cred->pool ?
		    " (its uid is not given out again)" : "");
	if (cred)
		cred->pool = NULL;
	if (pidfd >= 0)
		close(pidfd);
	return false;
}

/*
 * Reaps a worker that was told to exit or killed.  A killed worker may
 * take a while to go: the driver tears its context down first, a context
 * with a running kernel included.  The supervisor waits
 * MDGPUD_CUDA_REAP_WAIT_MS for that and then leaves the zombie to a
 * detached thread, so that destroy, reset and shutdown never wait on a
 * context the driver is still tearing down.  The worker's uid goes back
 * to the pool once it is reaped, never before: a worker left unreaped
 * keeps it.
 */
static void mdgpud_cuda_reap(struct mdgpud_bctx *ctx)
{
	char what[48];

	if (ctx->pid <= 0)
		goto out;
	if (!mdgpud_cuda_reap_wait(ctx->pid, ctx->pidfd,
				   MDGPUD_CUDA_REAP_WAIT_MS, NULL)) {
		mdgpud_cuda_sandbox_cred_put(&ctx->cred);
		goto out;
	}
	snprintf(what, sizeof(what), "vgpu %u: worker", ctx->vgpu_id);
	mdgpud_cuda_reap_later(ctx->pid, ctx->pidfd, &ctx->cred, what);
	ctx->pidfd = -1;	/* the reaper's now, or closed */
out:
	ctx->pid = -1;
	if (ctx->pidfd >= 0) {
		close(ctx->pidfd);
		ctx->pidfd = -1;
	}
}

/*
 * A context of vgpu_id, spatial with sm_percent > 0 (its worker an MPS
 * client running as the MPS user): its worker spawned, not waited for.
 * The context is starting (ctx->starting) until
 * mdgpud_cuda_ctx_start_poll() sees the worker READY, by
 * be->start_timeout_ns from now.
 */
static int mdgpud_cuda_ctx_spawn(struct mdgpud_backend *be, uint32_t vgpu_id,
				 uint32_t sm_percent, struct mdgpud_bctx **out)
{
	struct mdgpud_bctx *ctx = calloc(1, sizeof(*ctx));
	char ordinal[16], vgpu[16], ppid[16];
	char sandbox_arg[MDGPUD_SANDBOX_ARG_MAX];
	char *argv[7];
	int sv[2], fd, ret;

	if (!ctx)
		return -ENOMEM;
	ctx->be = be;
	ctx->vgpu_id = vgpu_id;
	ctx->sm_percent = sm_percent;
	ctx->pid = -1;
	ctx->pidfd = -1;
	ctx->sock = -1;
	ctx->shm = mdgpud_cuda_shm_new(be, &fd);
	if (!ctx->shm) {
		free(ctx);
		return -ENOMEM;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ret = -errno;
		goto err_shm;
	}
	if (sm_percent) {
		ctx->cred = be->mps.cred;
		ctx->cred.pool = NULL;	/* the backend's, given back at close */
		ret = 0;
	} else {
		ret = mdgpud_cuda_sandbox_cred_get(&be->sandbox, vgpu_id,
						   &ctx->cred);
	}
	if (ret) {
		close(sv[0]);
		close(sv[1]);
		goto err_shm;
	}
	mdgpud_cuda_sandbox_arg(&be->sandbox, &ctx->cred, sandbox_arg,
				sizeof(sandbox_arg));
	snprintf(ordinal, sizeof(ordinal), "%d", be->device_ordinal);
	snprintf(vgpu, sizeof(vgpu), "%u", vgpu_id);
	snprintf(ppid, sizeof(ppid), "%d", (int)getpid());
	argv[0] = (char *)MDGPUD_CUDA_WORKER_NAME;
	argv[1] = (char *)"serve";
	argv[2] = ordinal;
	argv[3] = vgpu;
	argv[4] = ppid;
	argv[5] = be->sandbox.mode ? sandbox_arg : NULL;
	argv[6] = NULL;
	ret = mdgpud_cuda_spawn(be, argv, ctx->shm, fd, sv[1], sm_percent,
				&ctx->pid, &ctx->pidfd);
	close(sv[1]);
	close(fd);
	fd = -1;
	ctx->sock = sv[0];
	if (ret) {
		mdgpud_cuda_sandbox_cred_put(&ctx->cred);	/* no worker */
		goto err_sock;
	}
	ctx->starting = true;
	ctx->start_deadline_ns = mdgpud_cuda_now_ns() + be->start_timeout_ns;
	*out = ctx;
	return 0;

err_sock:
	close(ctx->sock);
err_shm:
	if (fd >= 0)
		close(fd);
	munmap(ctx->shm, sizeof(*ctx->shm));
	free(ctx);
	return ret;
}

/*
 * A start that failed (why: what for the log): the worker is killed
 * (ctx_destroy reaps it) and the context lost, every op -ENODEV from now
 * on.  Returns err.
 */
static int mdgpud_cuda_start_failed(struct mdgpud_bctx *ctx, int err,
				    const char *why)
{
	char msg[MDGPUD_CUDA_RPC_MSG_MAX];

	mdgpud_cuda_worker_msg(ctx->shm, msg, sizeof(msg));
	if (why)
		mdgpud_err("cuda: vgpu %u: worker %d failed to start: %s%s%s",
			   ctx->vgpu_id, (int)ctx->pid, why,
			   msg[0] ? "; its last message: " : "", msg);
	else
		mdgpud_err("cuda: vgpu %u: worker %d failed to start: %s",
			   ctx->vgpu_id, (int)ctx->pid,
			   msg[0] ? msg : "no reason given");
	if (ctx->pid > 0)
		kill(ctx->pid, SIGKILL);
	ctx->starting = false;
	ctx->dead = 1;
	return err;
}

/*
 * A spatial context's worker must be a client of the MPS server for its
 * SM share to mean anything: the driver tells the worker so in
 * CU_DEVICE_ATTRIBUTE_MPS_ENABLED, read with the other attributes at its
 * start (1 for every spatial worker on the H100 under MPS, driver 580;
 * spatial.md).  One that is not (the server gone or unreachable for the
 * spatial uid, its pipe directory another's) would run in a context of
 * its own that the GPU time-slices with the others: the share the type
 * promises would not be kept, so the context is refused (-ENODEV), with
 * the reason logged.  A driver that has no such attribute leaves it
 * unknown: a warning, and the context runs.
 */
static int mdgpud_cuda_spatial_mps_check(struct mdgpud_bctx *ctx)
{
	const struct mdgpud_cuda_rpc_info *in = &ctx->shm->info;
	int32_t v = MDGPU_ATTR_NONE;

	if (in->nr_attrs > MDGPUD_CU_DEV_ATTR_MPS_ENABLED)
		v = in->attr[MDGPUD_CU_DEV_ATTR_MPS_ENABLED];
	if (v == MDGPU_ATTR_NONE) {
		mdgpud_warn("cuda: vgpu %u: spatial (%u%% of the SMs): the "
			    "driver does not say whether worker %d is an MPS "
			    "client", ctx->vgpu_id, ctx->sm_percent,
			    (int)ctx->pid);
		return 0;
	}
	if (!v) {
		mdgpud_err("cuda: vgpu %u: spatial (%u%% of the SMs) refused: "
			   "its worker %d is not an MPS client (the driver's "
			   "MPS_ENABLED is 0), so its work would be "
			   "time-sliced, not beside the other vGPUs; check that "
			   "the MPS server of %s runs and that uid %u can reach "
			   "it (Documentation/spatial.md)", ctx->vgpu_id,
			   ctx->sm_percent, (int)ctx->pid,
			   ctx->be->mps.pipe_dir, (unsigned)ctx->cred.uid);
		return -ENODEV;
	}
	mdgpud_info("cuda: vgpu %u: worker %d is an MPS client, %u%% of the "
		    "SMs", ctx->vgpu_id, (int)ctx->pid, ctx->sm_percent);
	return 0;
}

/*
 * Whether ctx's worker has started, without waiting: -EINPROGRESS while
 * it starts within its bound; 0 once it reported READY and the sandbox
 * it got was checked (from /proc, not from the worker); -ETIMEDOUT past
 * the bound and -ENODEV when it failed, exited or lacks its sandbox (the
 * context lost, mdgpud_cuda_start_failed).  0 or -ENODEV, as the context
 * stands, once the start is over.
 */
int mdgpud_cuda_ctx_start_poll(struct mdgpud_bctx *ctx)
{
	char why[160], bus_id[sizeof(ctx->shm->info.bus_id)];
	uint32_t st;

	if (!ctx->starting)
		return ctx->dead ? -ENODEV : 0;
	st = atomic_load(&ctx->shm->state);
	if (st == MDGPUD_CUDA_WORKER_STARTING) {
		if (!mdgpud_cuda_pid_exited(ctx->pidfd)) {
			if (mdgpud_cuda_now_ns() < ctx->start_deadline_ns)
				return -EINPROGRESS;
			snprintf(why, sizeof(why), "did not start within %llu "
				 "ms (worker_start_timeout_ms)",
				 (unsigned long long)(ctx->be->start_timeout_ns /
						      1000000));
			return mdgpud_cuda_start_failed(ctx, -ETIMEDOUT, why);
		}
		/* It may have reported just before it exited. */
		st = atomic_load(&ctx->shm->state);
	}
	if (st != MDGPUD_CUDA_WORKER_READY)
		return mdgpud_cuda_start_failed(ctx, -ENODEV, NULL);
	/*
	 * The worker was given the ordinal the probe found; should the
	 * driver number the GPUs otherwise now (a GPU bound to another
	 * driver or added since), that ordinal is another GPU, perhaps
	 * another daemon's: the context is refused, not run there.
	 */
	memcpy(bus_id, (const void *)ctx->shm->info.bus_id, sizeof(bus_id) - 1);
	bus_id[sizeof(bus_id) - 1] = '\0';
	if (strcmp(bus_id, ctx->be->info.bus_id)) {
		snprintf(why, sizeof(why), "ordinal %d is GPU %.32s now, not "
			 "%.32s: restart the daemon to find it again",
			 ctx->be->device_ordinal, bus_id,
			 ctx->be->info.bus_id);
		return mdgpud_cuda_start_failed(ctx, -ENODEV, why);
	}
	if (mdgpud_cuda_sandbox_check(&ctx->be->sandbox, &ctx->cred,
				      ctx->vgpu_id, ctx->pid,
				      &ctx->sandbox_active))
		return mdgpud_cuda_start_failed(ctx, -ENODEV,
						"sandbox not as configured");
	if (ctx->sm_percent && mdgpud_cuda_spatial_mps_check(ctx))
		return mdgpud_cuda_start_failed(ctx, -ENODEV,
						"spatial, not an MPS client");
	ctx->starting = false;
	mdgpud_dbg("cuda: vgpu %u: worker %d ready", ctx->vgpu_id,
		   (int)ctx->pid);
	return 0;
}

/* spatial: the checks of a spatial context before its worker starts. */
static int mdgpud_cuda_spatial_ok(struct mdgpud_backend *be, uint32_t vgpu_id,
				  uint32_t sm_percent)
{
	if (sm_percent >= 100)
		return -EINVAL;
	if (be->spatial != MDGPUD_SPATIAL_MPS)
		return -EOPNOTSUPP;
	if (!be->mps.running) {
		mdgpud_err("cuda: vgpu %u: spatial (%u%% of the SMs) refused: "
			   "the MPS control daemon is not running (see the "
			   "log at start-up)", vgpu_id, sm_percent);
		return -ENXIO;
	}
	return 0;
}

int mdgpud_cuda_ctx_start(struct mdgpud_backend *be, uint32_t vgpu_id,
			  uint32_t sm_percent, struct mdgpud_bctx **out)
{
	int ret = sm_percent ? mdgpud_cuda_spatial_ok(be, vgpu_id, sm_percent)
			     : 0;

	return ret ? ret : mdgpud_cuda_ctx_spawn(be, vgpu_id, sm_percent, out);
}

/*
 * ctx_start() and a wait for its end (asleep on the state word, polling
 * the worker's liveness), bounded like the start: the synchronous
 * ctx_create of library users and tests.  Any failure is -ENODEV.
 */
static int mdgpud_cuda_ctx_new(struct mdgpud_backend *be, uint32_t vgpu_id,
			       uint32_t sm_percent, struct mdgpud_bctx **out)
{
	struct timespec poll_ts = { 0, MDGPUD_CUDA_LIVENESS_POLL_NS };
	struct mdgpud_bctx *ctx;
	int ret;

	ret = mdgpud_cuda_ctx_spawn(be, vgpu_id, sm_percent, &ctx);
	if (ret)
		return ret;
	while ((ret = mdgpud_cuda_ctx_start_poll(ctx)) == -EINPROGRESS)
		mdgpud_cuda_futex_wait(&ctx->shm->state,
				       MDGPUD_CUDA_WORKER_STARTING, &poll_ts);
	if (ret) {
		mdgpud_cuda_ctx_destroy(ctx);
		return -ENODEV;
	}
	*out = ctx;
	return 0;
}

int mdgpud_cuda_ctx_create(struct mdgpud_backend *be, uint32_t vgpu_id,
			   struct mdgpud_bctx **out)
{
	return mdgpud_cuda_ctx_new(be, vgpu_id, 0, out);
}

int mdgpud_cuda_ctx_create_spatial(struct mdgpud_backend *be,
				   uint32_t vgpu_id, uint32_t sm_percent,
				   struct mdgpud_bctx **out)
{
	int ret;

	if (!sm_percent)
		return -EINVAL;
	ret = mdgpud_cuda_spatial_ok(be, vgpu_id, sm_percent);
	return ret ? ret : mdgpud_cuda_ctx_new(be, vgpu_id, sm_percent, out);
}

void mdgpud_cuda_ctx_destroy(struct mdgpud_bctx *ctx)
{
	struct mdgpud_cuda_rpc_slot *s;
	int err;

	if (!ctx)
		return;
	mdgpud_cuda_poll_drop(ctx);
	/* A start under way is given up: a worker without its context has
	 * nothing to scrub. */
	if (ctx->starting) {
		mdgpud_info("cuda: vgpu %u: worker %d's start given up",
			    ctx->vgpu_id, (int)ctx->pid);
		if (ctx->pid > 0)
			kill(ctx->pid, SIGKILL);
		ctx->starting = false;
		ctx->dead = 1;
	}
	/* A module load under way: SHUTDOWN would wait for the JIT. */
	mdgpud_cuda_pend_abort(ctx);
	/*
	 * The worker scrubs and frees everything, then exits.  A tenant's
	 * kernel may never end (an endless loop): after shutdown_timeout_ns
	 * (or at once if the ring is full or the worker is already dead or
	 * hung) the worker is killed, and the driver reclaims its memory
	 * (test_crash_leaves_no_data checks that a killed tenant's data does
	 * not reach the next one).  Reaping is bounded too.
	 */
	s = NULL;
	err = -EBUSY;
	if (ctx->tail - atomic_load(&ctx->shm->done) < MDGPUD_CUDA_RPC_SLOTS)
		s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_SHUTDOWN, &err);
	if (s) {
		mdgpud_cuda_post(ctx);
		err = mdgpud_cuda_wait_until(ctx, ctx->tail,
					     ctx->be->sup_spin_ns,
					     mdgpud_cuda_now_ns() +
					     ctx->be->shutdown_timeout_ns);
		if (err)
			mdgpud_warn("cuda: vgpu %u: worker %d did not shut down "
				    "(%d), killing it", ctx->vgpu_id,
				    (int)ctx->pid, err);
	}
	if ((!s || err) && ctx->pid > 0)
		kill(ctx->pid, SIGKILL);
	mdgpud_cuda_reap(ctx);
	for (size_t i = 0; i < ctx->nr_regions; i++)
		if (ctx->regions[i].owned)
			munmap(ctx->regions[i].ptr, ctx->regions[i].size);
	free(ctx->regions);
	close(ctx->sock);
	munmap(ctx->shm, sizeof(*ctx->shm));
	free(ctx);
}

pid_t mdgpud_backend_cuda_worker_pid(const struct mdgpud_bctx *ctx)
{
	return ctx->dead ? -1 : ctx->pid;
}

uint64_t mdgpud_backend_cuda_hint_spins(const struct mdgpud_bctx *ctx)
{
	return atomic_load(&ctx->shm->stat_hint_spins);
}

int mdgpud_backend_cuda_worker_stats(const struct mdgpud_bctx *ctx,
				     uint64_t *requests, uint64_t *exec_ns,
				     uint64_t *busy_ns)
{
	if (!ctx->shm->stats_enabled)
		return -ENODATA;
	/* Racy snapshot of counters the worker updates: diagnostics only. */
	*requests = ctx->shm->stat_requests;
	*exec_ns = ctx->shm->stat_exec_ns;
	*busy_ns = ctx->shm->stat_busy_ns;
	return 0;
}
