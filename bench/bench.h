/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpu-bench internals shared by the driver (bench.c), the tenant runner
 * (tenants.c) and the daemon launcher (daemon.c).
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "target.h"

#define BENCH_TENANTS_MAX	32

/* What one tenant process reports back. */
struct bench_tenant_res {
	int status;			/* 0 or negative errno */
	uint64_t done;			/* units finished by the deadline */
	uint64_t total;			/* units finished in all */
	uint64_t t_start_ns;		/* common start */
	uint64_t t_deadline_ns;		/* when `done` was read */
	uint64_t t_end_ns;		/* when `total` had finished */
	uint64_t nsamples;		/* samples[] entries written */
	double value[8];		/* benchmark-specific figures */
};

/* Parameters of one benchmark run, the same for every tenant. */
struct bench_run {
	int kind;			/* enum bench_kind */
	uint32_t ntenants;
	uint32_t weight[BENCH_TENANTS_MAX];
	uint32_t priority[BENCH_TENANTS_MAX];	/* mdgpu, 0: the default */
	struct bench_work work;
	uint32_t depth;			/* kernels in flight per tenant */
	uint64_t duration_ns;
	uint64_t reps, warmup, inner;	/* repeat counts */
	uint64_t size[8];		/* bandwidth: bytes per size, */
	uint64_t size_reps[8];		/* timed copies per size, */
	uint32_t nsizes;		/* sizes (samples in this order) */
	int pinned, h2d;		/* bandwidth flavour */
	uint64_t period_ns;		/* latency tenant's period */
	uint64_t small_ns;		/* latency tenant's kernel */
	uint64_t samples_per_tenant;
	int hold;			/* tenants wait for the parent's ack
					 * (BENCH_EV_DONE) before closing */
};

/* Process-shared state of one run: MAP_SHARED before the fork. */
struct bench_shm {
	atomic_int abort;
	atomic_uint arrived;
	atomic_uint generation;
	atomic_uint past_deadline;
	atomic_int stop;
	atomic_uint bodies_done;	/* tenants done measuring */
	atomic_int parent_ack;		/* parent saw bodies_done */
	uint64_t t0_ns;
	struct bench_run run;
	struct bench_tenant_res res[BENCH_TENANTS_MAX];
	uint64_t samples[];		/* ntenants * samples_per_tenant */
};

enum bench_kind {
	BENCH_K_CALIBRATE = 1,
	BENCH_K_SYNC_RTT,
	BENCH_K_ASYNC,
	BENCH_K_BANDWIDTH,
	BENCH_K_SATURATE,
	BENCH_K_LATENCY,
	BENCH_K_IDLE,		/* warm up, then stay open and idle */
	BENCH_K_INTERACTIVE,	/* every tenant a latency tenant */
};

uint64_t bench_now_ns(void);

/* Events of a run, seen by the parent while the tenants run. */
enum bench_event {
	BENCH_EV_START = 1,	/* the common start t0 has passed */
	BENCH_EV_STOP,		/* the stop flag was raised */
	BENCH_EV_DONE,		/* every tenant finished measuring; with
				 * run->hold they are still open */
};
typedef void (*bench_event_fn)(int event, void *arg);

/*
 * Run `run` with run->ntenants tenant processes of `ops`; tenant i gets
 * weight run->weight[i] and, for BENCH_K_LATENCY, tenant 0 is the
 * latency-sensitive one.  Returns the shared area (results, samples), to
 * be released with bench_shm_free(), or NULL after printing why.
 * extra_timeout_s bounds the whole run beyond its duration.  fn, if not
 * NULL, is called in the parent at each enum bench_event.
 */
struct bench_shm *bench_run_tenants(const struct bench_target_ops *ops,
				    const struct bench_run *run,
				    unsigned int extra_timeout_s,
				    bench_event_fn fn, void *arg);
void bench_shm_free(struct bench_shm *sh);
static inline uint64_t *bench_samples(struct bench_shm *sh, uint32_t i)
{
	return sh->samples + (uint64_t)i * sh->run.samples_per_tenant;
}

/* The daemon the mdgpu target talks to. */
struct bench_daemon {
	pid_t pid;
	char dir[128];			/* temp dir: socket, config, log */
	char log_path[256];
	int own_log;			/* log_path lies in dir */
};
/* Start mdgpud (backend "cuda" or "sim") with a socket in a temp dir and
 * fill bench_mdgpu_env; its output goes to log_path (NULL: a file in the
 * temp dir, removed at the end).  0 or negative errno, reason printed. */
int bench_daemon_start(struct bench_daemon *d, const char *mdgpud,
		       const char *backend, uint32_t timeslice_us,
		       const char *log_path);
void bench_daemon_stop(struct bench_daemon *d);
/* CPU seconds used so far by the daemon (supervisor) and by its children
 * (workers), from /proc. */
int bench_daemon_cpu(const struct bench_daemon *d, double *sup_s,
		     double *workers_s);
/* How many of the daemon's children (workers, one per open vGPU on the
 * cuda backend) are still running; negative errno on error. */
int bench_daemon_workers(const struct bench_daemon *d);

#endif /* BENCH_BENCH_H */
