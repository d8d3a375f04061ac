/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The worker sandbox (Documentation/daemon.md, "Worker sandbox"), shared
 * by the supervisor (backends/cuda/sandbox.c: resolves the configuration,
 * passes it to each worker, checks from /proc what a worker really got)
 * and mdgpud-worker (backends/cuda/worker/sandbox.c: applies it before it
 * loads libcuda).
 *
 * The supervisor passes the sandbox as the worker's last argument,
 *
 *   --sandbox=<mode>,<uid>,<gid>,<group>,<seccomp>,<dev>,<net>,<tmp>[,<extra>]
 *
 * mode: "required" or "best-effort" (off: no argument at all); uid, gid:
 * the ids the worker runs as (its own, from the pool below, or the one
 * worker_user every worker shares); group: its one supplementary group
 * (worker_group with a uid per worker, for device nodes of that group)
 * or "-" for none; seccomp:
 * "enforce", "learn" or "audit"; dev (config worker_dev): "none" (no
 * mount namespace unless tmp is "private"), "host" (a namespace with the
 * host's /dev) or "private" (a namespace with a /dev of the nvidia nodes
 * only); net (config worker_net): "private" (a network namespace of its
 * own) or "host"; tmp (config worker_tmp, with dev "none"): "private" (a
 * mount namespace holding only a /tmp of its own) or "shared" (the
 * host's /tmp, the driver's JIT cache turned off);
 * extra: syscall names joined by ':' that the allowlist also allows
 * (config worker_seccomp_allow).
 */
#ifndef MDGPUD_CUDA_SANDBOX_H
#define MDGPUD_CUDA_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MDGPUD_SANDBOX_ARG		"--sandbox="
#define MDGPUD_SANDBOX_ARG_MAX		512

/* The protections, as bits of a mask (what is asked, what is active). */
#define MDGPUD_SANDBOX_IDS		(1u << 0) /* uid, gid, groups set */
#define MDGPUD_SANDBOX_NNP		(1u << 1) /* PR_SET_NO_NEW_PRIVS */
#define MDGPUD_SANDBOX_SECCOMP		(1u << 2) /* the allowlist filter */
#define MDGPUD_SANDBOX_MOUNTNS		(1u << 3) /* private /tmp, and ro /
							   * and /dev as configured */
#define MDGPUD_SANDBOX_NETNS		(1u << 4) /* a network namespace */
#define MDGPUD_SANDBOX_ALL		(MDGPUD_SANDBOX_IDS | MDGPUD_SANDBOX_NNP | \
					 MDGPUD_SANDBOX_SECCOMP | \
					 MDGPUD_SANDBOX_MOUNTNS | \
					 MDGPUD_SANDBOX_NETNS)

/* No supplementary group (struct mdgpud_cuda_cred.group). */
#define MDGPUD_SANDBOX_NO_GROUP		((gid_t)-1)

/*
 * The workers' ids, one per live worker (backends/cuda/ids.c): a pool of
 * the range [base, base + count), count at most MDGPUD_CUDA_IDS_MAX.
 * open() shares the pool of an open backend with the same range and
 * refuses (-EBUSY, logged) one that overlaps another; -EINVAL for a
 * range with root or (uid_t)-1 in it.  get() takes a free id, -EBUSY
 * when all are held; put() gives one back, to be called only once the
 * worker that held it has been reaped.  hold() adds a reference (a
 * background reaper's), close() drops one.  Thread-safe.
 */
#define MDGPUD_CUDA_IDS_MAX		65536u
struct mdgpud_cuda_ids;
int mdgpud_cuda_ids_check_range(uint32_t base, uint32_t count);
int mdgpud_cuda_ids_open(uint32_t base, uint32_t count,
			 struct mdgpud_cuda_ids **out);
void mdgpud_cuda_ids_hold(struct mdgpud_cuda_ids *ids);
void mdgpud_cuda_ids_close(struct mdgpud_cuda_ids *ids);
int mdgpud_cuda_ids_get(struct mdgpud_cuda_ids *ids, uint32_t *id);
void mdgpud_cuda_ids_put(struct mdgpud_cuda_ids *ids, uint32_t id);
uint32_t mdgpud_cuda_ids_in_use(struct mdgpud_cuda_ids *ids);

/* The ids one worker runs as. */
struct mdgpud_cuda_cred {
	uid_t uid;
	gid_t gid;
	gid_t group;			/* supplementary, or NO_GROUP */
	struct mdgpud_cuda_ids *pool;	/* uid taken from it, or NULL */
};

/*
 * Supervisor side (backends/cuda/sandbox.c).  The backend keeps one of
 * these; mode 0 (MDGPUD_SANDBOX_OFF) means no sandbox.
 */
struct mdgpud_cuda_sandbox {
	int mode;			/* enum mdgpud_worker_sandbox */
	int learn;			/* seccomp: report, do not kill */
	uid_t uid;			/* worker_user, without a pool */
	gid_t gid;			/* its group, without a pool */
	gid_t group;			/* supplementary, with a pool */
	struct mdgpud_cuda_ids *ids;	/* a uid per worker, or NULL */
	bool ids_later;			/* the pool opens once the probe found
					 * the GPU (sandbox_ids_open); until
					 * then uid and gid are the probe's */
	uint32_t want;			/* MDGPUD_SANDBOX_* asked for */
	/* The worker's argument after its ids:
	 * ",<seccomp>,<dev>,<net>,<tmp>[,...]". */
	char arg_tail[MDGPUD_SANDBOX_ARG_MAX];
	/*
	 * The worker's environment where it is not the supervisor's (NULL:
	 * environ): with worker_dev = none and worker_tmp = shared, the
	 * supervisor's at init plus CUDA_CACHE_DISABLE=1.  Given to execve(), so that the driver sees
	 * it from the first instruction and /proc/PID/environ shows it.
	 */
	char **env;
};

struct mdgpud_backend_cfg;

/*
 * The environment to exec a worker with (sb->env or environ).
 */
char *const *mdgpud_cuda_sandbox_env(const struct mdgpud_cuda_sandbox *sb);

/*
 * Resolves cfg's worker ids (the pool of worker_uid_base/_count, or
 * worker_user/worker_group; with worker_uid_base 0 the probe's uid,
 * cfg->probe_uid, until sandbox_ids_open()), builds the worker argument's
 * tail and makes the supervisor non-dumpable.  -EINVAL (logged) for a user or group that
 * does not resolve, a bad range, or a range holding a user or group of
 * the system; -EBUSY (logged) for a range overlapping another backend's.
 * sandbox_fini() lets the pool go.
 */
int mdgpud_cuda_sandbox_init(struct mdgpud_cuda_sandbox *sb,
			     const struct mdgpud_backend_cfg *cfg);
/*
 * The pool of [base, base + count) when sandbox_init() was given no base
 * (ids_later: the range follows the GPU, which the probe
 * found), checked as sandbox_init() checks one; 0 at once otherwise.
 */
int mdgpud_cuda_sandbox_ids_open(struct mdgpud_cuda_sandbox *sb,
				 uint32_t base, uint32_t count);
void mdgpud_cuda_sandbox_fini(struct mdgpud_cuda_sandbox *sb);
/*
 * The ids of the next worker: its own uid from the pool (-EBUSY, logged
 * for vgpu_id, when all are held by live workers) or the shared ones.
 * cred_put() gives a pool's uid back: only once the worker is reaped.
 * sandbox_arg() writes the worker's --sandbox argument for them.
 */
int mdgpud_cuda_sandbox_cred_get(const struct mdgpud_cuda_sandbox *sb,
				 uint32_t vgpu_id,
				 struct mdgpud_cuda_cred *cred);
void mdgpud_cuda_sandbox_cred_put(struct mdgpud_cuda_cred *cred);
void mdgpud_cuda_sandbox_arg(const struct mdgpud_cuda_sandbox *sb,
			     const struct mdgpud_cuda_cred *cred, char *buf,
			     size_t len);
/*
 * What worker `pid` (alive, past its start-up, started with `cred`)
 * really runs with, read from /proc: a mask of MDGPUD_SANDBOX_* bits.
 * Logs it, and returns -EPERM if the mode is required and a protection
 * is missing.
 */
int mdgpud_cuda_sandbox_check(const struct mdgpud_cuda_sandbox *sb,
			      const struct mdgpud_cuda_cred *cred,
			      uint32_t vgpu_id, pid_t pid, uint32_t *active);
/*
 * Why a dead worker died, if it was a signal: "killed by signal N" plus,
 * for SIGSYS, that it made a syscall outside the allowlist.  Empty when
 * it exited or is not dead yet.  Never reaps.
 */
void mdgpud_cuda_sandbox_death(pid_t pid, char *buf, size_t len);
/* "ids,nnp,seccomp,mountns,netns" for a mask; "none" for 0. */
void mdgpud_cuda_sandbox_names(uint32_t mask, char *buf, size_t len);

#endif /* MDGPUD_CUDA_SANDBOX_H */
