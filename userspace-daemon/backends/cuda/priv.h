/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The cuda backend's supervisor side, shared by its three files:
 *
 *   spawn.c  worker processes: finding, spawning, probing the GPU
 *            (open), one worker per context (ctx_create/ctx_destroy),
 *            reaping
 *   rpc.c    the request ring (cuda_rpc.h): slots, posting, bounded waits
 *            for answers, the death and the hang of a worker
 *   ops.c    the backend operations on top of the ring, host memory
 *            shared with the worker, and the ops table
 *
 * The supervisor never loads libcuda.  Everything here runs in the
 * daemon's dispatcher thread; a context is never used from two threads.
 * Not an interface: include only from backends/cuda/.
 */
#ifndef MDGPUD_CUDA_PRIV_H
#define MDGPUD_CUDA_PRIV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <mdgpud/backend.h>

#include "cuda_rpc.h"
#include "sandbox.h"

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
/*
 * The bound of a context's start (worker_start_timeout_ms when it is 0):
 * the worker's cuInit, context creation, builtin PTX and staging area,
 * until it reports READY.  0.3-1 s on an H100, more under MPS; nobody
 * waits for a start (ctx_start, spawn.c), so the bound only catches a
 * start that never ends, and is generous.
 */
#define MDGPUD_CUDA_START_TIMEOUT_MS_DEFAULT	30000u
/*
 * The bound on every wait for a worker (struct mdgpud_backend_cfg's
 * hang_timeout_ms when it is 0): a request not answered this long after
 * it was due (after its expected drain or transfer time) means work that
 * does not drain, and the worker is killed (rpc.c, mdgpud_cuda_hung).
 */
#define MDGPUD_CUDA_HANG_TIMEOUT_MS_DEFAULT	5000u
/*
 * The bound of a module load (module_load_timeout_ms when it is 0): the
 * driver's JIT of a large PTX takes seconds, and nobody waits for it
 * (rpc.c, mdgpud_cuda_pend), so the bound only catches a load that never
 * ends; generous, so that no real JIT is killed.
 */
#define MDGPUD_CUDA_LOAD_TIMEOUT_MS_DEFAULT	60000u
/* ctx_destroy: how long a worker told to exit or killed may take to be
 * gone before a background thread reaps it (spawn.c). */
#define MDGPUD_CUDA_REAP_WAIT_MS		1000
/*
 * Transfer-time allowance of a copy before its bound starts: 1 ns per
 * byte (1 GB/s, far below any PCIe link), so that only a stalled copy
 * reaches the bound.
 */
#define MDGPUD_CUDA_COPY_ALLOW_NS_PER_BYTE	1u

/* A worker's poll grant (ops.c, mdgpud_cuda_poll_grant); worker_pollers
 * beyond the table's size are clamped to it. */
#define MDGPUD_CUDA_POLLERS_MAX		64u
/* One grant. */
struct mdgpud_cuda_poller {
	struct mdgpud_bctx *ctx;	/* NULL: free */
	uint64_t until_ns;
};

/*
 * MPS (mps.c, config spatial = mps): the control binary's name, and the
 * bound of each of its runs (start, quit) and of the wait for its
 * control socket.
 */
#define MDGPUD_CUDA_MPS_CONTROL		"nvidia-cuda-mps-control"
#define MDGPUD_CUDA_MPS_TIMEOUT_MS	10000u

/* The backend's own MPS control daemon. */
struct mdgpud_cuda_mps {
	bool running;			/* started, not yet told to quit */
	char control[PATH_MAX];		/* nvidia-cuda-mps-control */
	char pipe_dir[PATH_MAX];	/* <mps_dir>/pipe */
	char log_dir[PATH_MAX];		/* <mps_dir>/log */
	/* The one uid every spatial worker runs as: MPS runs one server
	 * per user and serialises the servers of different users, so
	 * tenants side by side must be one user.  Taken from the
	 * workers' pool (no worker of its own gets it) or worker_user's. */
	struct mdgpud_cuda_cred cred;
	bool cred_held;
};

struct mdgpud_backend {
	int device_ordinal;
	char worker_path[PATH_MAX];
	uint32_t sup_spin_ns;
	uint32_t worker_spin_ns;
	uint64_t hang_timeout_ns;	/* bound of a wait for an answer */
	uint64_t load_timeout_ns;	/* bound of a module load */
	uint64_t start_timeout_ns;	/* bound of a context's start */
	uint64_t shutdown_timeout_ns;	/* ctx_destroy: scrub, free, exit */
	uint32_t stats_enabled;
	uint64_t poll_ns;		/* worker_poll_us */
	uint32_t nr_pollers;		/* worker_pollers: grants at once */
	struct mdgpud_cuda_poller pollers[MDGPUD_CUDA_POLLERS_MAX];
	int32_t prio_least, prio_greatest;	/* stream priorities */
	struct mdgpud_gpu_info info;
	struct mdgpud_cuda_sandbox sandbox;	/* sandbox.c */
	int spatial;			/* enum mdgpud_spatial */
	struct mdgpud_cuda_mps mps;	/* spatial = mps */
};

/*
 * Host memory mapped into the worker: the supervisor's own (ptr: its
 * address here) or a client's registration (ptr NULL: the supervisor
 * does not map it; devptr: where the GPU reaches it).
 */
struct mdgpud_cuda_region {
	uint8_t *ptr;
	size_t size;
	uint32_t id;
	int owned;		/* host_alloc'd: munmap on free */
	uint64_t devptr;	/* a client's registration: its address */
};

struct mdgpud_bctx {
	struct mdgpud_backend *be;
	uint32_t vgpu_id;
	uint32_t sm_percent;	/* spatial: its SM share; 0 = time-sliced */
	struct mdgpud_cuda_rpc_shm *shm;
	int sock;		/* fd passing to the worker */
	pid_t pid;		/* -1 once reaped */
	int pidfd;
	uint32_t tail;		/* requests posted */
	uint32_t done_seen;	/* last value of shm->done read */
	int dead;		/* worker gone: every request -ENODEV */
	/* Its worker has not reported READY yet (spawn.c,
	 * mdgpud_cuda_ctx_start_poll), due by start_deadline_ns. */
	bool starting;
	uint64_t start_deadline_ns;
	int hung;		/* killed for not answering in time */
	uint32_t last_cu;	/* CUresult of the last failed answer since
				 * err_clear, or 0 */
	uint32_t lost_cu;	/* CUresult that lost the context, or 0 */
	/*
	 * The request posted without waiting (a module load or a host
	 * registration, rpc.c's mdgpud_cuda_pend), or NULL: its slot, the
	 * value of `done` that answers it, its deadline, its bound and what
	 * the log calls it and its bound.  While set, nothing else is
	 * posted.  pend_reg: the region, when the request is a MAP (ops.c):
	 * a client's registration (HOST_REGISTER; ptr NULL) or a mapping of
	 * the supervisor's at ptr (map_shared_start: the aperture).
	 */
	struct mdgpud_cuda_rpc_slot *pend_slot;
	uint32_t pend_target;
	uint64_t pend_deadline_ns;
	uint64_t pend_bound_ns;
	const char *pend_what;
	const char *pend_knob;
	struct {
		bool active;
		uint32_t id;
		uint64_t len;
		void *ptr;
	} pend_reg;
	/*
	 * A request posted whose answer is waited for later, once other
	 * contexts' requests are posted too (a spatial group's slice_end,
	 * rpc.c's mdgpud_cuda_post_expect), or NULL: its slot, when it was
	 * posted and the answer's expected time.  While set, nothing else
	 * is posted.
	 */
	struct mdgpud_cuda_rpc_slot *posted_slot;
	uint64_t posted_ns;
	uint64_t posted_expect_ns;
	/* Big parameter areas (cuda_rpc.h): the next to take, and for each
	 * the value of `done` that frees it (0: free). */
	uint32_t big_next;
	uint32_t big_done[MDGPUD_CUDA_RPC_BIG_SLOTS];
	uint8_t big_busy[MDGPUD_CUDA_RPC_BIG_SLOTS];
	struct mdgpud_cuda_region *regions;
	size_t nr_regions, cap_regions;
	uint32_t sandbox_active;	/* MDGPUD_SANDBOX_* the worker has */
	struct mdgpud_cuda_cred cred;	/* its ids; a pool's uid is given
					 * back once it is reaped */
};

/*
 * spawn.c.  reap_wait(): waits at most wait_ms for child pid (pidfd, or
 * -1) to exit and reaps it (0, *status), else -ETIMEDOUT, not reaped;
 * reap_later(): a detached thread reaps it (and closes pidfd, gives the
 * uid of cred back): every wait of the daemon on a child stays bounded.
 */
int mdgpud_cuda_pid_exited(int pidfd);
int mdgpud_cuda_reap_wait(pid_t pid, int pidfd, uint32_t wait_ms, int *status);
bool mdgpud_cuda_reap_later(pid_t pid, int pidfd,
			    struct mdgpud_cuda_cred *cred, const char *what);
int mdgpud_cuda_open(const struct mdgpud_backend_cfg *cfg,
		     struct mdgpud_backend **out, struct mdgpud_gpu_info *info);
void mdgpud_cuda_close(struct mdgpud_backend *be);
int mdgpud_cuda_ctx_create(struct mdgpud_backend *be, uint32_t vgpu_id,
			   struct mdgpud_bctx **out);
int mdgpud_cuda_ctx_create_spatial(struct mdgpud_backend *be,
				   uint32_t vgpu_id, uint32_t sm_percent,
				   struct mdgpud_bctx **out);
void mdgpud_cuda_ctx_destroy(struct mdgpud_bctx *ctx);
int mdgpud_cuda_ctx_start(struct mdgpud_backend *be, uint32_t vgpu_id,
			  uint32_t sm_percent, struct mdgpud_bctx **out);
int mdgpud_cuda_ctx_start_poll(struct mdgpud_bctx *ctx);

/*
 * mps.c.  find(): the control binary, cfg_path or searched ($PATH,
 * /usr/local/nvidia/bin, /usr/bin).  start(): the backend's control
 * daemon under cfg->mps_dir, 0 once its control socket answers; stop():
 * tells it to quit.  env(): a copy of base without any CUDA_MPS_*
 * variable, plus, for sm_percent > 0, the pipe directory and
 * CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; NULL without memory; env_free()
 * frees it.
 */
int mdgpud_cuda_mps_find(const char *cfg_path, char *out, size_t len);
int mdgpud_cuda_mps_start(struct mdgpud_cuda_mps *m,
			  const struct mdgpud_backend_cfg *cfg);
void mdgpud_cuda_mps_stop(struct mdgpud_cuda_mps *m);
char **mdgpud_cuda_mps_env(const struct mdgpud_cuda_mps *m,
			   char *const *base, uint32_t sm_percent);
void mdgpud_cuda_mps_env_free(char **env);

/* ops.c */
void mdgpud_cuda_poll_grant(struct mdgpud_bctx *ctx, uint64_t until_ns);
void mdgpud_cuda_poll_drop(struct mdgpud_bctx *ctx);

/* streams.c */
void mdgpud_cuda_prio_range(struct mdgpud_backend *be, int32_t least,
			    int32_t greatest);
int mdgpud_cuda_stream_create(struct mdgpud_bctx *ctx, uint32_t flags,
			      int32_t priority, uint64_t *stream);
int mdgpud_cuda_stream_destroy(struct mdgpud_bctx *ctx, uint64_t stream);
int mdgpud_cuda_stream_wait_event(struct mdgpud_bctx *ctx, uint64_t stream,
				  uint64_t event);
int mdgpud_cuda_stream_memop(struct mdgpud_bctx *ctx, uint64_t stream,
			     uint32_t op, uint64_t addr, uint64_t value,
			     uint32_t flags);
int mdgpud_cuda_stream_query(struct mdgpud_bctx *ctx, uint64_t stream,
			     uint32_t *pending);
int mdgpud_cuda_event_query(struct mdgpud_bctx *ctx, uint64_t event,
			    uint32_t *pending);
int mdgpud_cuda_event_sync(struct mdgpud_bctx *ctx, uint64_t event);
int mdgpud_cuda_busy(struct mdgpud_bctx *ctx, uint32_t *busy);
void mdgpud_cuda_stream_priorities(struct mdgpud_backend *be,
				   int32_t *least, int32_t *greatest);
uint64_t mdgpud_cuda_err_code(const struct mdgpud_bctx *ctx);
void mdgpud_cuda_err_clear(struct mdgpud_bctx *ctx);

/*
 * Result word i of an answered slot, loaded once: the worker may be
 * hostile and rewrite it at any time, so a value is read into a local
 * once, and only that local is checked and used (never the slot again).
 */
static inline uint64_t mdgpud_cuda_result(const struct mdgpud_cuda_rpc_slot *s,
					  unsigned int i)
{
	return *(const volatile uint64_t *)&s->result[i];
}

/* rpc.c */
void mdgpud_cuda_worker_msg(const struct mdgpud_cuda_rpc_shm *shm, char *buf,
			    size_t len);
void mdgpud_cuda_mark_dead(struct mdgpud_bctx *ctx);
int mdgpud_cuda_wait_until(struct mdgpud_bctx *ctx, uint32_t target,
			   uint64_t spin_ns, uint64_t deadline_ns);
struct mdgpud_cuda_rpc_slot *mdgpud_cuda_slot(struct mdgpud_bctx *ctx,
					      uint32_t op, int *err);
void mdgpud_cuda_post(struct mdgpud_bctx *ctx);
/* Waits, bounded by the hang bound, until request `target - 1` is done. */
int mdgpud_cuda_wait_done(struct mdgpud_bctx *ctx, uint32_t target);
int mdgpud_cuda_call(struct mdgpud_bctx *ctx, struct mdgpud_cuda_rpc_slot *s);
int mdgpud_cuda_call_copy(struct mdgpud_bctx *ctx,
			  struct mdgpud_cuda_rpc_slot *s, uint64_t len);
int mdgpud_cuda_call_expect(struct mdgpud_bctx *ctx,
			    struct mdgpud_cuda_rpc_slot *s, uint64_t expect_ns);
/*
 * call_expect() in two halves: post_expect() posts s and returns;
 * wait_posted() waits for its answer as call_expect() would, its
 * deadline counted from the post (*s: the slot, to read results from).
 */
void mdgpud_cuda_post_expect(struct mdgpud_bctx *ctx,
			     struct mdgpud_cuda_rpc_slot *s, uint64_t expect_ns);
int mdgpud_cuda_wait_posted(struct mdgpud_bctx *ctx,
			    struct mdgpud_cuda_rpc_slot **s);
void mdgpud_cuda_pend(struct mdgpud_bctx *ctx, struct mdgpud_cuda_rpc_slot *s,
		      uint64_t allow_ns);
void mdgpud_cuda_pend_as(struct mdgpud_bctx *ctx,
			 struct mdgpud_cuda_rpc_slot *s, uint64_t allow_ns,
			 uint64_t bound_ns, const char *what, const char *knob);
int mdgpud_cuda_pend_poll(struct mdgpud_bctx *ctx,
			  struct mdgpud_cuda_rpc_slot **s);
int mdgpud_cuda_pend_wait(struct mdgpud_bctx *ctx,
			  struct mdgpud_cuda_rpc_slot **s);
void mdgpud_cuda_pend_abort(struct mdgpud_bctx *ctx);

/* link.c: MODULE_LINK (ABI 1.7). */
int mdgpud_cuda_module_link(struct mdgpud_bctx *ctx, const void *bundle,
			    uint32_t len, void *out, uint32_t cap,
			    uint32_t *written, uint64_t *size);

/* info.c: ABI 1.2 introspection ops and ABI 1.5's module_funcs, and
 * DEVICE_INFO from the probe. */
void mdgpud_cuda_info_from_probe(struct mdgpu_device_info *d,
				 const struct mdgpud_cuda_rpc_info *probe);
int mdgpud_cuda_func_info(struct mdgpud_bctx *ctx, uint64_t func,
			  struct mdgpu_func_info *out, uint32_t max_params);
int mdgpud_cuda_func_set_attr(struct mdgpud_bctx *ctx, uint64_t func,
			      uint32_t attr, int32_t value);
int mdgpud_cuda_module_global(struct mdgpud_bctx *ctx, uint64_t module,
			      const char *name, uint64_t *addr,
			      uint64_t *bytes);
int mdgpud_cuda_module_funcs(struct mdgpud_bctx *ctx, uint64_t module,
			     char *buf, uint32_t len, uint32_t *written,
			     uint64_t *size, uint64_t *count);
int mdgpud_cuda_ctx_limit(struct mdgpud_bctx *ctx, uint32_t limit, int set,
			  uint64_t value, uint64_t *result);
int mdgpud_cuda_occupancy(struct mdgpud_bctx *ctx, uint64_t func,
			  const struct mdgpud_occupancy *q, uint64_t *result);
int mdgpud_cuda_host_devptr(struct mdgpud_bctx *ctx, const void *ptr,
			    size_t size, uint64_t *devptr, uint64_t *bytes);
/* ops.c: the region holding [p, p + len), or NULL. */
const struct mdgpud_cuda_region *
mdgpud_cuda_region_find(struct mdgpud_bctx *ctx, const void *p, uint64_t len);

#endif /* MDGPUD_CUDA_PRIV_H */
