// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cuda backend, supervisor side.  Every vGPU context is one
 * mdgpud-worker process with its own CUDA context (its own GPU address
 * space); this file never loads libcuda.  It spawns workers (fork+exec),
 * shares a memfd with each (backends/cuda/cuda_rpc.h), posts requests into its ring
 * and waits for the answers, and notices a worker's death through a pidfd.
 *
 * Documentation/cuda-backend.md describes the design and its decisions.
 */
#include "cuda_backend.h"
#include "cuda_rpc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mdgpud/backend.h>
#include "common/cpu.h"
#include <mdgpud/log.h>
#include <uapi/mdgpu.h>

#define MDGPUD_CUDA_FB_RESERVE_DEFAULT	(2ull << 30)
/* Spin budgets before sleeping on the futex (see docs: latency). */
#define MDGPUD_CUDA_SUP_SPIN_NS_DEFAULT		200000u
#define MDGPUD_CUDA_WORKER_SPIN_NS_DEFAULT	200000u
/* Nap between polls while the ring is full (half a ring stays queued). */
#define MDGPUD_CUDA_RING_NAP_NS		20000L
/*
 * Waiting for an answer expected in a while (slice_end after a slice of
 * kernels): sleep until MDGPUD_CUDA_EXPECT_MARGIN_NS (cuda_rpc.h) before
 * the expected time, then spin.  Hints beyond EXPECT_MAX are not trusted.
 */
#define MDGPUD_CUDA_EXPECT_MAX_NS	100000000u	/* 100 ms */
/* expect_work: the furthest ahead a worker is told to expect work. */
#define MDGPUD_CUDA_HINT_AHEAD_MAX_NS	20000000u	/* 20 ms */
/* How often a sleeping waiter checks that the worker still lives. */
#define MDGPUD_CUDA_LIVENESS_POLL_NS	10000000L
#define MDGPUD_CUDA_WORKER_NAME		"mdgpud-worker"
/* open(): how long cuInit and the device queries may take. */
#define MDGPUD_CUDA_PROBE_TIMEOUT_MS	120000u
/* ctx_destroy: how long the worker may take to scrub, free and exit. */
#define MDGPUD_CUDA_SHUTDOWN_MS_DEFAULT	10000u

struct mdgpud_backend {
	int device_ordinal;
	char worker_path[PATH_MAX];
	uint32_t sup_spin_ns;
	uint32_t worker_spin_ns;
	uint64_t shutdown_timeout_ns;
	uint32_t stats_enabled;
	struct mdgpud_gpu_info info;
};

struct mdgpud_cuda_region {
	uint8_t *ptr;
	size_t size;
	uint32_t id;
	int owned;		/* host_alloc'd: munmap on free */
};

struct mdgpud_bctx {
	struct mdgpud_backend *be;
	uint32_t vgpu_id;
	struct mdgpud_cuda_rpc_shm *shm;
	int sock;		/* fd passing to the worker */
	pid_t pid;		/* -1 once reaped */
	int pidfd;
	uint32_t tail;		/* requests posted */
	uint32_t done_seen;	/* last value of shm->done read */
	int dead;
	struct mdgpud_cuda_region *regions;
	size_t nr_regions, cap_regions;
	uint32_t next_region;
};

/* ------------------------------------------------------------------ */
/* Spawning workers                                                     */
/* ------------------------------------------------------------------ */

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
 * The child only makes async-signal-safe calls before execv().
 */
static int mdgpud_cuda_spawn(struct mdgpud_backend *be, char *const argv[],
			     struct mdgpud_cuda_rpc_shm *shm, int shm_fd,
			     int sock, pid_t *pid_out, int *pidfd_out)
{
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	pid_t pid;
	int pidfd;

	if (devnull < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(devnull);
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
		execv(be->worker_path, argv);
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
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		int err = -errno;

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return err;
	}
	*pid_out = pid;
	*pidfd_out = pidfd;
	return 0;
}

static int mdgpud_cuda_pid_exited(int pidfd)
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

/* Waits until the worker leaves STARTING or exits.  Returns the state. */
static uint32_t mdgpud_cuda_wait_started(struct mdgpud_cuda_rpc_shm *shm,
					 int pidfd)
{
	struct timespec poll_ts = { 0, MDGPUD_CUDA_LIVENESS_POLL_NS };
	uint32_t st;

	while ((st = atomic_load(&shm->state)) == MDGPUD_CUDA_WORKER_STARTING) {
		if (mdgpud_cuda_pid_exited(pidfd)) {
			st = atomic_load(&shm->state);
			return st == MDGPUD_CUDA_WORKER_STARTING ?
			       MDGPUD_CUDA_WORKER_FAILED : st;
		}
		mdgpud_cuda_futex_wait(&shm->state, st, &poll_ts);
	}
	return st;
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

/* ------------------------------------------------------------------ */
/* Backend lifetime                                                     */
/* ------------------------------------------------------------------ */

static int mdgpud_cuda_open(const struct mdgpud_backend_cfg *cfg,
			    struct mdgpud_backend **out,
			    struct mdgpud_gpu_info *info)
{
	struct mdgpud_backend *be = calloc(1, sizeof(*be));
	struct mdgpud_cuda_rpc_shm *shm;
	char ordinal[16];
	char *argv[4];
	uint64_t reserve;
	pid_t pid;
	int fd, pidfd, ret;
	uint32_t st;

	if (!be)
		return -ENOMEM;
	be->device_ordinal = cfg->device_ordinal;
	be->sup_spin_ns = mdgpud_cuda_env_u32("MDGPUD_CUDA_SPIN_NS",
					      MDGPUD_CUDA_SUP_SPIN_NS_DEFAULT);
	be->worker_spin_ns = mdgpud_cuda_env_u32(
		"MDGPUD_CUDA_WORKER_SPIN_NS", MDGPUD_CUDA_WORKER_SPIN_NS_DEFAULT);
	be->stats_enabled = mdgpud_cuda_env_u32("MDGPUD_CUDA_STATS", 0) != 0;
	be->shutdown_timeout_ns = (uint64_t)mdgpud_cuda_env_u32(
		"MDGPUD_CUDA_SHUTDOWN_MS", MDGPUD_CUDA_SHUTDOWN_MS_DEFAULT) *
		1000000ull;
	ret = mdgpud_cuda_find_worker(cfg->worker_path, be->worker_path,
				      sizeof(be->worker_path));
	if (ret) {
		mdgpud_warn("cuda: %s not found (cfg worker_path, next to the "
			    "executable, $MDGPUD_WORKER)",
			    MDGPUD_CUDA_WORKER_NAME);
		free(be);
		return ret;
	}

	/* Probe the device in a throw-away worker: cuInit never runs here. */
	shm = mdgpud_cuda_shm_new(be, &fd);
	if (!shm) {
		ret = -errno;
		free(be);
		return ret ? ret : -ENOMEM;
	}
	snprintf(ordinal, sizeof(ordinal), "%d", cfg->device_ordinal);
	argv[0] = (char *)MDGPUD_CUDA_WORKER_NAME;
	argv[1] = (char *)"probe";
	argv[2] = ordinal;
	argv[3] = NULL;
	ret = mdgpud_cuda_spawn(be, argv, shm, fd, -1, &pid, &pidfd);
	close(fd);
	if (ret) {
		munmap(shm, sizeof(*shm));
		free(be);
		return ret;
	}
	/*
	 * Wait on the pidfd, not waitpid(): a SIGCHLD handler elsewhere in the
	 * daemon may reap the child first.  A probe that hangs is killed.
	 */
	{
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		int n;

		do
			n = poll(&p, 1, MDGPUD_CUDA_PROBE_TIMEOUT_MS);
		while (n < 0 && errno == EINTR);
		if (n == 0) {
			snprintf(shm->msg, sizeof(shm->msg),
				 "probe did not finish in %u ms",
				 MDGPUD_CUDA_PROBE_TIMEOUT_MS);
			kill(pid, SIGKILL);
		}
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(pidfd);
	st = atomic_load(&shm->state);
	if (st != MDGPUD_CUDA_WORKER_PROBED) {
		shm->msg[sizeof(shm->msg) - 1] = 0;
		mdgpud_info("cuda: no usable GPU: %s",
			    shm->msg[0] ? shm->msg : "worker failed to start");
		munmap(shm, sizeof(*shm));
		free(be);
		return -ENODEV;
	}

	memset(&be->info, 0, sizeof(be->info));
	memcpy(be->info.name, shm->info.name, sizeof(be->info.name) - 1);
	memcpy(be->info.bus_id, shm->info.bus_id, sizeof(be->info.bus_id) - 1);
	be->info.sm_count = shm->info.sm_count;
	be->info.kind = MDGPU_BACKEND_CUDA;
	reserve = cfg->fb_reserve ? cfg->fb_reserve
				  : MDGPUD_CUDA_FB_RESERVE_DEFAULT;
	if (cfg->fb_size)
		be->info.fb_size = cfg->fb_size;
	else
		be->info.fb_size = shm->info.mem_free_bytes > reserve ?
				   shm->info.mem_free_bytes - reserve : 0;
	if (be->info.fb_size > shm->info.mem_total_bytes)
		be->info.fb_size = shm->info.mem_total_bytes;
	mdgpud_info("cuda: %s (%s), %u SMs, driver %d, %" PRIu64
		    " MiB free of %" PRIu64 " MiB, partitioning %" PRIu64
		    " MiB", be->info.name, be->info.bus_id, be->info.sm_count,
		    shm->info.driver_version, shm->info.mem_free_bytes >> 20,
		    shm->info.mem_total_bytes >> 20, be->info.fb_size >> 20);
	munmap(shm, sizeof(*shm));
	if (info)
		*info = be->info;
	*out = be;
	return 0;
}

static void mdgpud_cuda_close(struct mdgpud_backend *be)
{
	free(be);
}

/* ------------------------------------------------------------------ */
/* The request ring                                                     */
/* ------------------------------------------------------------------ */

static void mdgpud_cuda_mark_dead(struct mdgpud_bctx *ctx)
{
	if (!ctx->dead) {
		ctx->shm->msg[sizeof(ctx->shm->msg) - 1] = 0;
		mdgpud_warn("cuda: vgpu %u: worker %d lost%s%s", ctx->vgpu_id,
			    (int)ctx->pid, ctx->shm->msg[0] ? ": " : "",
			    ctx->shm->msg);
	}
	ctx->dead = 1;
}

/* True once `done` has reached `target` (free-running counters). */
static int mdgpud_cuda_reached(struct mdgpud_bctx *ctx, uint32_t target)
{
	uint32_t done = atomic_load_explicit(&ctx->shm->done,
					     memory_order_acquire);

	return (int32_t)(done - target) >= 0;
}

/*
 * After a wait: 0 if request `target - 1` completed, -ENODEV if the worker
 * died without answering it (the context is marked dead), 1 to go on
 * waiting.
 */
static int mdgpud_cuda_answered(struct mdgpud_bctx *ctx, uint32_t target)
{
	if (mdgpud_cuda_reached(ctx, target))
		return 0;
	if (mdgpud_cuda_pid_exited(ctx->pidfd)) {
		/* It may have answered just before exiting. */
		if (mdgpud_cuda_reached(ctx, target))
			return 0;
		mdgpud_cuda_mark_dead(ctx);
		return -ENODEV;
	}
	return 1;
}

/*
 * Sleeps on the futex until request `target - 1` completed (0), the worker
 * died (-ENODEV) or until_ns passed (1).  The worker wakes a sleeping
 * supervisor when it publishes `done`; the sleep is cut into liveness
 * polls so that a worker that died without answering is noticed.
 */
static int mdgpud_cuda_sleep(struct mdgpud_bctx *ctx, uint32_t target,
			     uint64_t until_ns)
{
	struct mdgpud_cuda_rpc_shm *shm = ctx->shm;
	int ret;

	for (;;) {
		uint64_t now = mdgpud_cuda_now_ns(), left;
		struct timespec ts;
		uint32_t done;

		if (now >= until_ns)
			return 1;
		left = until_ns - now;
		if (left > MDGPUD_CUDA_LIVENESS_POLL_NS)
			left = MDGPUD_CUDA_LIVENESS_POLL_NS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left;
		atomic_store(&shm->sup_sleeping, 1);
		done = atomic_load(&shm->done);
		if ((int32_t)(done - target) < 0)
			mdgpud_cuda_futex_wait(&shm->done, done, &ts);
		atomic_store(&shm->sup_sleeping, 0);
		ret = mdgpud_cuda_answered(ctx, target);
		if (ret <= 0)
			return ret;
	}
}

/*
 * Waits until request `target - 1` completed; -ENODEV if the worker died,
 * -ETIMEDOUT past deadline_ns (0: none).  Spins for spin_ns first (an
 * answer is due within microseconds), then sleeps on the futex.
 */
static int mdgpud_cuda_wait_until(struct mdgpud_bctx *ctx, uint32_t target,
				  uint64_t spin_ns, uint64_t deadline_ns)
{
	uint64_t start = 0;
	int ret;

	for (unsigned int n = 0; spin_ns; n++) {
		if (mdgpud_cuda_reached(ctx, target))
			return 0;
		mdgpu_cpu_relax();
		if ((n & 63) == 63) {
			uint64_t now = mdgpud_cuda_now_ns();

			if (!start)
				start = now;
			else if (now - start > spin_ns)
				break;
		}
	}
	ret = mdgpud_cuda_sleep(ctx, target,
				deadline_ns ? deadline_ns : UINT64_MAX);
	return ret > 0 ? -ETIMEDOUT : ret;
}

static int mdgpud_cuda_wait(struct mdgpud_bctx *ctx, uint32_t target,
			    uint64_t spin_ns)
{
	return mdgpud_cuda_wait_until(ctx, target, spin_ns, 0);
}

/*
 * Waits for ring space: until request `target - 1` completed.  Half a ring
 * of requests is queued, so the supervisor naps in short sleeps and polls
 * instead of sleeping on the futex: the worker then never has to pay a
 * FUTEX_WAKE (several microseconds in a VM) in the middle of a stream of
 * asynchronous requests, and nothing spins on its cache lines.
 */
static int mdgpud_cuda_wait_space(struct mdgpud_bctx *ctx, uint32_t target)
{
	const struct timespec nap = { 0, MDGPUD_CUDA_RING_NAP_NS };

	for (;;) {
		int ret = mdgpud_cuda_answered(ctx, target);

		if (ret <= 0)
			return ret;
		nanosleep(&nap, NULL);
	}
}

/* A free slot for the next request, or NULL with *err set. */
static struct mdgpud_cuda_rpc_slot *mdgpud_cuda_slot(struct mdgpud_bctx *ctx,
						     uint32_t op, int *err)
{
	struct mdgpud_cuda_rpc_slot *s;

	if (ctx->dead || atomic_load(&ctx->shm->state) != MDGPUD_CUDA_WORKER_READY) {
		if (!ctx->dead)
			mdgpud_cuda_mark_dead(ctx);
		*err = -ENODEV;
		return NULL;
	}
	/*
	 * Room in the ring.  `done` is re-read only when the cached value
	 * says the ring is full, and then the wait lasts until half the ring
	 * is free, so that producer and worker do not bounce the cache lines
	 * of every slot between them.
	 */
	if (ctx->tail - ctx->done_seen >= MDGPUD_CUDA_RPC_SLOTS) {
		ctx->done_seen = atomic_load_explicit(&ctx->shm->done,
						      memory_order_acquire);
		if (ctx->tail - ctx->done_seen >= MDGPUD_CUDA_RPC_SLOTS) {
			*err = mdgpud_cuda_wait_space(ctx, ctx->tail -
						      MDGPUD_CUDA_RPC_SLOTS / 2);
			if (*err)
				return NULL;
			ctx->done_seen = atomic_load(&ctx->shm->done);
		}
	}
	s = &ctx->shm->slot[ctx->tail % MDGPUD_CUDA_RPC_SLOTS];
	s->op = op;
	s->inline_len = 0;
	memset(s->arg, 0, sizeof(s->arg));
	return s;
}

static void mdgpud_cuda_post(struct mdgpud_bctx *ctx)
{
	struct mdgpud_cuda_rpc_shm *shm = ctx->shm;

	ctx->tail++;
	atomic_store_explicit(&shm->req_tail, ctx->tail, memory_order_seq_cst);
	if (atomic_load(&shm->worker_sleeping))
		mdgpud_cuda_futex_wake(&shm->req_tail);
}

/* Waits for the answer to the request just posted from `s`. */
static int mdgpud_cuda_answer(struct mdgpud_bctx *ctx,
			      struct mdgpud_cuda_rpc_slot *s, uint64_t spin_ns)
{
	int ret = mdgpud_cuda_wait(ctx, ctx->tail, spin_ns);

	if (ret)
		return ret;
	ctx->done_seen = ctx->tail;
	ret = s->status;
	if (ret && atomic_load(&ctx->shm->state) == MDGPUD_CUDA_WORKER_LOST) {
		/* The context faulted: this answer is its last. */
		mdgpud_cuda_mark_dead(ctx);
	}
	return ret;
}

/* Posts the request in `s` and waits for its answer. */
static int mdgpud_cuda_call_spin(struct mdgpud_bctx *ctx,
				 struct mdgpud_cuda_rpc_slot *s,
				 uint64_t spin_ns)
{
	mdgpud_cuda_post(ctx);
	return mdgpud_cuda_answer(ctx, s, spin_ns);
}

static int mdgpud_cuda_call(struct mdgpud_bctx *ctx,
			    struct mdgpud_cuda_rpc_slot *s)
{
	return mdgpud_cuda_call_spin(ctx, s, ctx->be->sup_spin_ns);
}

/*
 * Posts the request in `s`, whose answer the caller expects in about
 * expect_ns (the GPU work queued before it), and waits for it: asleep on
 * the futex until MDGPUD_CUDA_EXPECT_MARGIN_NS before the expected time
 * (an early answer still wakes us), then spinning across it, so that the
 * usual answer does not pay a futex wake-up (45-70 us on the GPU machine)
 * and a long wait does not burn a CPU.
 */
static int mdgpud_cuda_call_expect(struct mdgpud_bctx *ctx,
				   struct mdgpud_cuda_rpc_slot *s,
				   uint64_t expect_ns)
{
	uint64_t spin_ns = ctx->be->sup_spin_ns;

	if (expect_ns > MDGPUD_CUDA_EXPECT_MAX_NS)
		expect_ns = MDGPUD_CUDA_EXPECT_MAX_NS;
	mdgpud_cuda_post(ctx);
	if (expect_ns > MDGPUD_CUDA_EXPECT_MARGIN_NS) {
		int ret = mdgpud_cuda_sleep(ctx, ctx->tail,
					    mdgpud_cuda_now_ns() + expect_ns -
					    MDGPUD_CUDA_EXPECT_MARGIN_NS);

		if (ret < 0)
			return ret;
		spin_ns += 2 * MDGPUD_CUDA_EXPECT_MARGIN_NS;
	}
	return mdgpud_cuda_answer(ctx, s, spin_ns);
}

/* Spin budget for a copy of `len` bytes (mdgpud_cuda_copy_spin, cuda_rpc.h). */
static uint64_t mdgpud_cuda_copy_spin_ns(struct mdgpud_bctx *ctx, uint64_t len)
{
	return mdgpud_cuda_copy_spin(len, ctx->be->sup_spin_ns);
}

/* ------------------------------------------------------------------ */
/* Contexts                                                             */
/* ------------------------------------------------------------------ */

static void mdgpud_cuda_reap(struct mdgpud_bctx *ctx)
{
	if (ctx->pid > 0) {
		while (waitpid(ctx->pid, NULL, 0) < 0 && errno == EINTR)
			;
		ctx->pid = -1;
	}
	if (ctx->pidfd >= 0) {
		close(ctx->pidfd);
		ctx->pidfd = -1;
	}
}

static int mdgpud_cuda_ctx_create(struct mdgpud_backend *be, uint32_t vgpu_id,
				  struct mdgpud_bctx **out)
{
	struct mdgpud_bctx *ctx = calloc(1, sizeof(*ctx));
	char ordinal[16], vgpu[16], ppid[16];
	char *argv[6];
	int sv[2], fd, ret;
	uint32_t st;

	if (!ctx)
		return -ENOMEM;
	ctx->be = be;
	ctx->vgpu_id = vgpu_id;
	ctx->pid = -1;
	ctx->pidfd = -1;
	ctx->sock = -1;
	ctx->next_region = MDGPUD_CUDA_RPC_REGION_STAGING + 1;
	ctx->shm = mdgpud_cuda_shm_new(be, &fd);
	if (!ctx->shm) {
		free(ctx);
		return -ENOMEM;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ret = -errno;
		goto err_shm;
	}
	snprintf(ordinal, sizeof(ordinal), "%d", be->device_ordinal);
	snprintf(vgpu, sizeof(vgpu), "%u", vgpu_id);
	snprintf(ppid, sizeof(ppid), "%d", (int)getpid());
	argv[0] = (char *)MDGPUD_CUDA_WORKER_NAME;
	argv[1] = (char *)"serve";
	argv[2] = ordinal;
	argv[3] = vgpu;
	argv[4] = ppid;
	argv[5] = NULL;
	ret = mdgpud_cuda_spawn(be, argv, ctx->shm, fd, sv[1], &ctx->pid,
				&ctx->pidfd);
	close(sv[1]);
	close(fd);
	fd = -1;
	ctx->sock = sv[0];
	if (ret)
		goto err_sock;
	st = mdgpud_cuda_wait_started(ctx->shm, ctx->pidfd);
	if (st != MDGPUD_CUDA_WORKER_READY) {
		ctx->shm->msg[sizeof(ctx->shm->msg) - 1] = 0;
		mdgpud_err("cuda: vgpu %u: worker failed to start: %s", vgpu_id,
			   ctx->shm->msg[0] ? ctx->shm->msg : "no reason given");
		if (ctx->pid > 0)
			kill(ctx->pid, SIGKILL);
		ret = -ENODEV;
		goto err_reap;
	}
	mdgpud_dbg("cuda: vgpu %u: worker %d ready", vgpu_id, (int)ctx->pid);
	*out = ctx;
	return 0;

err_reap:
	mdgpud_cuda_reap(ctx);
err_sock:
	close(ctx->sock);
err_shm:
	if (fd >= 0)
		close(fd);
	munmap(ctx->shm, sizeof(*ctx->shm));
	free(ctx);
	return ret;
}

static void mdgpud_cuda_ctx_destroy(struct mdgpud_bctx *ctx)
{
	struct mdgpud_cuda_rpc_slot *s;
	int err;

	if (!ctx)
		return;
	/*
	 * The worker scrubs and frees everything, then exits.  A tenant's
	 * kernel may never end (an endless loop): after shutdown_timeout_ns
	 * (or at once if the ring is full) the worker is killed, and the
	 * driver reclaims its memory (test_crash_leaves_no_data checks that a
	 * killed tenant's data does not reach the next one).
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

/* ------------------------------------------------------------------ */
/* Host memory shared with the worker                                   */
/* ------------------------------------------------------------------ */

static int mdgpud_cuda_send_fd(struct mdgpud_bctx *ctx, int fd, uint32_t tag)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &tag, .iov_len = sizeof(tag) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	if (sendmsg(ctx->sock, &mh, MSG_NOSIGNAL) != sizeof(tag))
		return errno == EPIPE ? -ENODEV : -errno;
	return 0;
}

/* Maps [fd offset, +size) into the worker as a new region at `ptr`. */
static int mdgpud_cuda_region_add(struct mdgpud_bctx *ctx, int fd,
				  uint64_t offset, void *ptr, size_t size,
				  int owned)
{
	struct mdgpud_cuda_rpc_slot *s;
	uint32_t id;
	int ret;

	if (ctx->nr_regions == ctx->cap_regions) {
		size_t ncap = ctx->cap_regions ? ctx->cap_regions * 2 : 8;
		struct mdgpud_cuda_region *n =
			realloc(ctx->regions, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ctx->regions = n;
		ctx->cap_regions = ncap;
	}
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_MAP, &ret);
	if (!s)
		return ret;
	id = ctx->next_region;
	ret = mdgpud_cuda_send_fd(ctx, fd, id);
	if (ret)
		return ret;
	s->arg[0] = id;
	s->arg[1] = offset;
	s->arg[2] = size;
	ret = mdgpud_cuda_call(ctx, s);
	if (ret)
		return ret;
	ctx->next_region++;
	ctx->regions[ctx->nr_regions++] = (struct mdgpud_cuda_region){
		.ptr = ptr, .size = size, .id = id, .owned = owned };
	return 0;
}

static void *mdgpud_cuda_host_alloc(struct mdgpud_bctx *ctx, size_t size)
{
	int fd, ret;
	void *p;

	if (size == 0 || ctx->dead)
		return NULL;
	fd = memfd_create("mdgpud-host", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	/*
	 * Huge pages, where shmem allows them (shmem_enabled "advise"): fewer,
	 * larger pages for the GPU's DMA.  Advisory; failure changes nothing.
	 */
	madvise(p, size, MADV_HUGEPAGE);
	ret = mdgpud_cuda_region_add(ctx, fd, 0, p, size, 1);
	close(fd);
	if (ret) {
		munmap(p, size);
		errno = -ret;
		return NULL;
	}
	return p;
}

static void mdgpud_cuda_host_free(struct mdgpud_bctx *ctx, void *ptr,
				  size_t size)
{
	(void)size;
	for (size_t i = 0; i < ctx->nr_regions; i++) {
		struct mdgpud_cuda_region r = ctx->regions[i];
		struct mdgpud_cuda_rpc_slot *s;
		int err;

		if (r.ptr != ptr)
			continue;
		s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_UNMAP, &err);
		if (s) {
			s->arg[0] = r.id;
			mdgpud_cuda_call(ctx, s);
		}
		if (r.owned)
			munmap(r.ptr, r.size);
		ctx->regions[i] = ctx->regions[--ctx->nr_regions];
		return;
	}
}

static int mdgpud_cuda_map_shared(struct mdgpud_bctx *ctx, int fd,
				  uint64_t offset, void *ptr, size_t size)
{
	if (!ptr || size == 0 || (offset & ((uint64_t)getpagesize() - 1)))
		return -EINVAL;
	return mdgpud_cuda_region_add(ctx, fd, offset, ptr, size, 0);
}

/* The region holding [p, p + len), or NULL (then the copy is staged). */
static const struct mdgpud_cuda_region *
mdgpud_cuda_region_find(struct mdgpud_bctx *ctx, const void *p, uint64_t len)
{
	uintptr_t a = (uintptr_t)p;

	for (size_t i = 0; i < ctx->nr_regions; i++) {
		const struct mdgpud_cuda_region *r = &ctx->regions[i];
		uintptr_t b = (uintptr_t)r->ptr;

		if (a >= b && a - b <= r->size && len <= r->size - (a - b))
			return r;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Operations                                                           */
/* ------------------------------------------------------------------ */

static int mdgpud_cuda_mem_alloc(struct mdgpud_bctx *ctx, uint64_t size,
				 uint64_t *addr, uint64_t *reserved)
{
	int ret;
	struct mdgpud_cuda_rpc_slot *s = mdgpud_cuda_slot(
		ctx, MDGPUD_CUDA_RPC_MEM_ALLOC, &ret);

	if (!s)
		return ret;
	s->arg[0] = size;
	ret = mdgpud_cuda_call(ctx, s);
	if (ret)
		return ret;
	*addr = s->result[0];
	if (reserved)
		*reserved = s->result[1];
	return 0;
}

static int mdgpud_cuda_mem_free(struct mdgpud_bctx *ctx, uint64_t addr,
				uint64_t size)
{
	int ret;
	struct mdgpud_cuda_rpc_slot *s = mdgpud_cuda_slot(
		ctx, MDGPUD_CUDA_RPC_MEM_FREE, &ret);

	if (!s)
		return ret;
	s->arg[0] = addr;
	s->arg[1] = size;
	return mdgpud_cuda_call(ctx, s);
}

/* Queue an asynchronous request (no answer awaited): errors surface at the
 * next sync or slice_end. */
static int mdgpud_cuda_post_simple(struct mdgpud_bctx *ctx, uint32_t op,
				   uint64_t a0, uint64_t a1, uint64_t a2)
{
	int ret;
	struct mdgpud_cuda_rpc_slot *s = mdgpud_cuda_slot(ctx, op, &ret);

	if (!s)
		return ret;
	s->arg[0] = a0;
	s->arg[1] = a1;
	s->arg[2] = a2;
	mdgpud_cuda_post(ctx);
	return 0;
}

static int mdgpud_cuda_memset8(struct mdgpud_bctx *ctx, uint64_t addr,
			       uint8_t value, uint64_t len)
{
	return mdgpud_cuda_post_simple(ctx, MDGPUD_CUDA_RPC_MEMSET8, addr, value,
				       len);
}

/* One host<->device copy, zero-copy from a region or staged in chunks. */
static int mdgpud_cuda_copy_host(struct mdgpud_bctx *ctx, uint32_t op,
				 uint64_t dev, uint8_t *host, uint64_t len)
{
	const struct mdgpud_cuda_region *r = mdgpud_cuda_region_find(ctx, host,
								     len);
	struct mdgpud_cuda_rpc_slot *s;
	const uint64_t chunk = MDGPUD_CUDA_RPC_STAGING_BYTES - 4096;
	int ret;

	if (len == 0)
		return ctx->dead ? -ENODEV : 0;
	if (r) {
		s = mdgpud_cuda_slot(ctx, op, &ret);
		if (!s)
			return ret;
		s->arg[0] = dev;
		s->arg[1] = r->id;
		s->arg[2] = (uint64_t)(host - r->ptr);
		s->arg[3] = len;
		return mdgpud_cuda_call_spin(ctx, s,
					     mdgpud_cuda_copy_spin_ns(ctx, len));
	}
	for (uint64_t done = 0; done < len; done += chunk) {
		uint64_t n = len - done < chunk ? len - done : chunk;

		s = mdgpud_cuda_slot(ctx, op, &ret);
		if (!s)
			return ret;
		/* Earlier requests never touch staging once answered. */
		if (op == MDGPUD_CUDA_RPC_COPY_H2D)
			memcpy(ctx->shm->staging, host + done, n);
		s->arg[0] = dev + done;
		s->arg[1] = MDGPUD_CUDA_RPC_REGION_STAGING;
		s->arg[2] = 0;
		s->arg[3] = n;
		ret = mdgpud_cuda_call_spin(ctx, s,
					    mdgpud_cuda_copy_spin_ns(ctx, n));
		if (ret)
			return ret;
		if (op == MDGPUD_CUDA_RPC_COPY_D2H)
			memcpy(host + done, ctx->shm->staging, n);
	}
	return 0;
}

static int mdgpud_cuda_copy_h2d(struct mdgpud_bctx *ctx, uint64_t dst,
				const void *src, uint64_t len)
{
	return mdgpud_cuda_copy_host(ctx, MDGPUD_CUDA_RPC_COPY_H2D, dst,
				     (uint8_t *)(uintptr_t)src, len);
}

static int mdgpud_cuda_copy_d2h(struct mdgpud_bctx *ctx, void *dst,
				uint64_t src, uint64_t len)
{
	return mdgpud_cuda_copy_host(ctx, MDGPUD_CUDA_RPC_COPY_D2H, src, dst,
				     len);
}

static int mdgpud_cuda_copy_d2d(struct mdgpud_bctx *ctx, uint64_t dst,
				uint64_t src, uint64_t len)
{
	return mdgpud_cuda_post_simple(ctx, MDGPUD_CUDA_RPC_COPY_D2D, dst, src,
				       len);
}

static int mdgpud_cuda_module_load(struct mdgpud_bctx *ctx, uint32_t kind,
				   const void *image, size_t len,
				   uint64_t *module)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	if (kind != MDGPU_MODULE_PTX && kind != MDGPU_MODULE_CUBIN)
		return -EINVAL;
	if (len == 0)
		return -EINVAL;
	if (len > MDGPU_MODULE_MAX || len >= MDGPUD_CUDA_RPC_STAGING_BYTES)
		return -E2BIG;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_MODULE_LOAD, &ret);
	if (!s)
		return ret;
	memcpy(ctx->shm->staging, image, len);
	ctx->shm->staging[len] = 0;	/* PTX is text */
	s->arg[0] = kind;
	s->arg[1] = len;
	ret = mdgpud_cuda_call(ctx, s);
	if (ret) {
		if (s->inline_len && s->inline_len <= MDGPUD_CUDA_RPC_INLINE_MAX)
			mdgpud_dbg("cuda: vgpu %u: module load failed (%d): %.*s",
				   ctx->vgpu_id, ret, (int)s->inline_len,
				   (const char *)s->inline_data);
		return ret;
	}
	*module = s->result[0];
	return 0;
}

/* A synchronous request of two arguments and one result, answered in
 * about expect_ns (0: at once, mdgpud_cuda_call_expect). */
static int mdgpud_cuda_simple_expect(struct mdgpud_bctx *ctx, uint32_t op,
				     uint64_t a0, uint64_t a1,
				     uint64_t expect_ns, uint64_t *result)
{
	int ret;
	struct mdgpud_cuda_rpc_slot *s = mdgpud_cuda_slot(ctx, op, &ret);

	if (!s)
		return ret;
	s->arg[0] = a0;
	s->arg[1] = a1;
	ret = mdgpud_cuda_call_expect(ctx, s, expect_ns);
	if (!ret && result)
		*result = s->result[0];
	return ret;
}

static int mdgpud_cuda_simple(struct mdgpud_bctx *ctx, uint32_t op,
			      uint64_t a0, uint64_t a1, uint64_t *result)
{
	return mdgpud_cuda_simple_expect(ctx, op, a0, a1, 0, result);
}

static int mdgpud_cuda_module_unload(struct mdgpud_bctx *ctx, uint64_t module)
{
	return mdgpud_cuda_simple(ctx, MDGPUD_CUDA_RPC_MODULE_UNLOAD, module, 0,
				  NULL);
}

static int mdgpud_cuda_func_get(struct mdgpud_bctx *ctx, uint64_t module,
				const char *name, uint64_t *func)
{
	size_t n = strnlen(name, MDGPU_NAME_MAX + 1);
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	if (n == 0)
		return -EINVAL;
	if (n > MDGPU_NAME_MAX)
		return -E2BIG;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_FUNC_GET, &ret);
	if (!s)
		return ret;
	s->arg[0] = module;
	memcpy(s->inline_data, name, n);
	s->inline_len = (uint32_t)n;
	ret = mdgpud_cuda_call(ctx, s);
	if (!ret)
		*func = s->result[0];
	return ret;
}

static int mdgpud_cuda_launch(struct mdgpud_bctx *ctx, uint64_t func,
			      struct mdgpud_dim3 grid, struct mdgpud_dim3 block,
			      uint32_t shared_bytes, const void *params,
			      uint32_t params_len)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	if (params_len > MDGPU_PARAMS_MAX ||
	    params_len > MDGPUD_CUDA_RPC_INLINE_MAX)
		return -E2BIG;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_LAUNCH, &ret);
	if (!s)
		return ret;
	s->arg[0] = func;
	s->arg[1] = grid.x | (uint64_t)grid.y << 32;
	s->arg[2] = grid.z | (uint64_t)block.x << 32;
	s->arg[3] = block.y | (uint64_t)block.z << 32;
	s->arg[4] = shared_bytes;
	if (params_len)
		memcpy(s->inline_data, params, params_len);
	s->inline_len = params_len;
	mdgpud_cuda_post(ctx);
	return 0;
}

static int mdgpud_cuda_builtin(struct mdgpud_bctx *ctx, uint32_t kernel,
			       const uint64_t arg[5], uint64_t *result)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	switch (kernel) {
	case MDGPU_BUILTIN_FILL_U32:
	case MDGPU_BUILTIN_ADD_U32:
	case MDGPU_BUILTIN_CHECKSUM:
		break;
	case MDGPU_BUILTIN_SPIN_NS:
		if (arg[0] > MDGPU_SPIN_NS_MAX)
			return -E2BIG;
		break;
	default:
		return -EINVAL;
	}
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_BUILTIN, &ret);
	if (!s)
		return ret;
	s->arg[0] = kernel;
	memcpy(&s->arg[1], arg, 5 * sizeof(arg[0]));
	if (kernel != MDGPU_BUILTIN_CHECKSUM) {
		mdgpud_cuda_post(ctx);
		if (result)
			*result = 0;
		return 0;
	}
	ret = mdgpud_cuda_call(ctx, s);
	if (!ret && result)
		*result = s->result[0];
	return ret;
}

static int mdgpud_cuda_event_create(struct mdgpud_bctx *ctx, uint64_t *event)
{
	return mdgpud_cuda_simple(ctx, MDGPUD_CUDA_RPC_EVENT_CREATE, 0, 0,
				  event);
}

static int mdgpud_cuda_event_record(struct mdgpud_bctx *ctx, uint64_t event)
{
	return mdgpud_cuda_post_simple(ctx, MDGPUD_CUDA_RPC_EVENT_RECORD,
				       event, 0, 0);
}

static int mdgpud_cuda_event_elapsed(struct mdgpud_bctx *ctx, uint64_t start,
				     uint64_t end, uint64_t *ns)
{
	return mdgpud_cuda_simple(ctx, MDGPUD_CUDA_RPC_EVENT_ELAPSED, start,
				  end, ns);
}

static int mdgpud_cuda_event_destroy(struct mdgpud_bctx *ctx, uint64_t event)
{
	return mdgpud_cuda_simple(ctx, MDGPUD_CUDA_RPC_EVENT_DESTROY, event, 0,
				  NULL);
}

static int mdgpud_cuda_sync(struct mdgpud_bctx *ctx)
{
	return mdgpud_cuda_simple(ctx, MDGPUD_CUDA_RPC_SYNC, 0, 0, NULL);
}

static int mdgpud_cuda_slice_begin(struct mdgpud_bctx *ctx)
{
	return mdgpud_cuda_post_simple(ctx, MDGPUD_CUDA_RPC_SLICE_BEGIN, 0, 0, 0);
}

static int mdgpud_cuda_slice_end(struct mdgpud_bctx *ctx, uint64_t expect_ns,
				 uint64_t *gpu_ns)
{
	return mdgpud_cuda_simple_expect(ctx, MDGPUD_CUDA_RPC_SLICE_END,
					 expect_ns, 0, expect_ns, gpu_ns);
}

/*
 * Work for this context is expected within about within_ns (the running
 * slice's drain): ask its worker to spin until shortly after, waking it if
 * it sleeps, so that the next slice's first request is taken at once.  A
 * hint only: a lost wake-up or a wrong guess costs latency, not
 * correctness; the worker spins only across the expected time (cuda_rpc.h),
 * and the hint reaches at most MDGPUD_CUDA_HINT_AHEAD_MAX_NS ahead.
 */
static void mdgpud_cuda_expect_work(struct mdgpud_bctx *ctx,
				    uint64_t within_ns)
{
	struct mdgpud_cuda_rpc_shm *shm = ctx->shm;

	if (ctx->dead)
		return;
	within_ns += MDGPUD_CUDA_EXPECT_MARGIN_NS;
	if (within_ns > MDGPUD_CUDA_HINT_AHEAD_MAX_NS)
		within_ns = MDGPUD_CUDA_HINT_AHEAD_MAX_NS;
	atomic_store(&shm->spin_until_ns, mdgpud_cuda_now_ns() + within_ns);
	if (atomic_load(&shm->worker_sleeping))
		mdgpud_cuda_futex_wake(&shm->req_tail);
}

const struct mdgpud_backend_ops mdgpud_backend_cuda = {
	.name = "cuda",
	.open = mdgpud_cuda_open,
	.close = mdgpud_cuda_close,
	.ctx_create = mdgpud_cuda_ctx_create,
	.ctx_destroy = mdgpud_cuda_ctx_destroy,
	.host_alloc = mdgpud_cuda_host_alloc,
	.host_free = mdgpud_cuda_host_free,
	.map_shared = mdgpud_cuda_map_shared,
	.mem_alloc = mdgpud_cuda_mem_alloc,
	.mem_free = mdgpud_cuda_mem_free,
	.memset8 = mdgpud_cuda_memset8,
	.copy_h2d = mdgpud_cuda_copy_h2d,
	.copy_d2h = mdgpud_cuda_copy_d2h,
	.copy_d2d = mdgpud_cuda_copy_d2d,
	.module_load = mdgpud_cuda_module_load,
	.module_unload = mdgpud_cuda_module_unload,
	.func_get = mdgpud_cuda_func_get,
	.launch = mdgpud_cuda_launch,
	.builtin = mdgpud_cuda_builtin,
	.event_create = mdgpud_cuda_event_create,
	.event_record = mdgpud_cuda_event_record,
	.event_elapsed = mdgpud_cuda_event_elapsed,
	.event_destroy = mdgpud_cuda_event_destroy,
	.sync = mdgpud_cuda_sync,
	.slice_begin = mdgpud_cuda_slice_begin,
	.slice_end = mdgpud_cuda_slice_end,
	.expect_work = mdgpud_cuda_expect_work,
};
