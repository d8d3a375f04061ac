// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Tenant processes.  The parent never touches CUDA or the daemon's client
 * library: every measurement runs in children forked for it, each one
 * tenant, so native tenants are plain processes side by side exactly as
 * mdgpu's vGPUs are.  Children meet at a process-shared barrier after they
 * have opened their tenant (context creation, module JIT, connection), so
 * start-up never lands inside a measurement, and report through the
 * shared area.
 */
#include "bench.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL),
			       .tv_nsec = (long)(ns % 1000000000ULL) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* All tenants meet; the last one to arrive fixes the common start. */
static int shm_barrier(struct bench_shm *sh)
{
	unsigned int gen = atomic_load(&sh->generation);

	if (atomic_fetch_add(&sh->arrived, 1) + 1 == sh->run.ntenants) {
		atomic_store(&sh->arrived, 0);
		sh->t0_ns = bench_now_ns() + 1000000;	/* 1 ms ahead */
		atomic_fetch_add(&sh->generation, 1);
	} else {
		while (atomic_load(&sh->generation) == gen) {
			if (atomic_load(&sh->abort))
				return -ECANCELED;
			sleep_ns(50000);
		}
	}
	while (bench_now_ns() < sh->t0_ns)
		;
	return 0;
}

/* Record one sample; silently drops what does not fit. */
static void put_sample(struct bench_shm *sh, uint32_t i, uint64_t v)
{
	struct bench_tenant_res *r = &sh->res[i];

	if (r->nsamples < sh->run.samples_per_tenant)
		bench_samples(sh, i)[r->nsamples++] = v;
}

/*
 * Launch + wait with the host clock.  Samples: reps round trips (ns), then
 * reps times spent in the launch call alone, then (when the target has a
 * nop) reps round trips of the nop.
 */
static int t_sync_rtt(const struct bench_target_ops *ops,
		      struct bench_tenant *t, struct bench_shm *sh,
		      uint32_t i)
{
	const struct bench_run *run = &sh->run;
	uint64_t *s = bench_samples(sh, i);
	int ret = 0;

	for (uint64_t k = 0; !ret && k < run->warmup; k++) {
		ret = ops->launch_empty(t);
		if (!ret)
			ret = ops->sync(t);
		if (!ret && ops->nop)
			ret = ops->nop(t);
	}
	if (ret || (ret = shm_barrier(sh)))
		return ret;
	if (run->samples_per_tenant < 3 * run->reps)
		return -EINVAL;
	for (uint64_t k = 0; k < run->reps; k++) {
		uint64_t a = bench_now_ns(), b;

		ret = ops->launch_empty(t);
		b = bench_now_ns();
		if (!ret)
			ret = ops->sync(t);
		if (ret)
			return ret;
		s[k] = bench_now_ns() - a;
		s[run->reps + k] = b - a;
	}
	sh->res[i].nsamples = 2 * run->reps;
	if (!ops->nop)
		return 0;
	for (uint64_t k = 0; k < run->reps; k++) {
		uint64_t a = bench_now_ns();

		ret = ops->nop(t);
		if (ret)
			return ret;
		s[2 * run->reps + k] = bench_now_ns() - a;
	}
	sh->res[i].nsamples = 3 * run->reps;
	return 0;
}

/* `inner` launches, one wait: samples are ns for the whole batch. */
static int t_async(const struct bench_target_ops *ops,
		   struct bench_tenant *t, struct bench_shm *sh, uint32_t i)
{
	const struct bench_run *run = &sh->run;
	int ret = 0;

	for (uint64_t k = 0; !ret && k < run->warmup; k++)
		ret = ops->launch_empty(t);
	if (!ret)
		ret = ops->sync(t);
	if (ret || (ret = shm_barrier(sh)))
		return ret;
	for (uint64_t k = 0; k < run->reps; k++) {
		uint64_t a = bench_now_ns();

		for (uint64_t n = 0; !ret && n < run->inner; n++)
			ret = ops->launch_empty(t);
		if (!ret)
			ret = ops->sync(t);
		if (ret)
			return ret;
		put_sample(sh, i, bench_now_ns() - a);
	}
	return 0;
}

/* One copy + wait per sample, ns; every size in turn, largest buffers
 * allocated once. */
static int t_bandwidth(const struct bench_target_ops *ops,
		       struct bench_tenant *t, struct bench_shm *sh,
		       uint32_t i)
{
	const struct bench_run *run = &sh->run;
	uint64_t dev = 0, max = 0;
	void *host;
	int ret;

	for (uint32_t s = 0; s < run->nsizes; s++)
		if (run->size[s] > max)
			max = run->size[s];
	host = ops->host_alloc(t, max, run->pinned);
	if (!host) {
		/* No such host memory of this size on this target. */
		sh->res[i].value[0] = -1;
		return shm_barrier(sh);
	}
	ret = ops->mem_alloc(t, max, &dev);
	if (ret)
		goto out_host;
	if ((ret = shm_barrier(sh)))
		goto out_dev;
	for (uint32_t s = 0; !ret && s < run->nsizes; s++) {
		uint64_t len = run->size[s];

		for (uint64_t k = 0; !ret && k < run->warmup + run->size_reps[s];
		     k++) {
			uint64_t a = bench_now_ns();

			ret = run->h2d ? ops->copy_h2d(t, dev, host, len) :
					 ops->copy_d2h(t, host, dev, len);
			if (!ret)
				ret = ops->sync(t);
			if (!ret && k >= run->warmup)
				put_sample(sh, i, bench_now_ns() - a);
		}
	}
out_dev:
	ops->mem_free(t, dev);
out_host:
	ops->host_free(t, host, max, run->pinned);
	return ret;
}

/*
 * A saturating tenant: keeps `depth` work kernels queued behind the one
 * running, a fence after each, and logs the host time at which each kernel was seen finished.
 * `done` is what had finished at the common deadline; the tenant keeps the
 * GPU busy until every saturating tenant has passed the deadline (or a
 * latency tenant says stop), so no tenant ever runs alone in the window.
 */
static int t_saturate(const struct bench_target_ops *ops,
		      struct bench_tenant *t, struct bench_shm *sh,
		      uint32_t i, uint32_t nsat)
{
	const struct bench_run *run = &sh->run;
	struct bench_tenant_res *r = &sh->res[i];
	uint64_t tok[BENCH_FENCES_MAX], issued = 0, finished = 0, deadline;
	uint32_t depth = run->depth, slots = depth + 1;
	int ret = 0, counted = 0;

	if (depth < 1 || slots > BENCH_FENCES_MAX)
		return -EINVAL;
	/* Warm up: JIT, first launch, clocks. */
	for (int k = 0; !ret && k < 3; k++)
		ret = ops->launch_work(t, &run->work);
	if (!ret)
		ret = ops->sync(t);
	if (ret || (ret = shm_barrier(sh)))
		return ret;
	r->t_start_ns = sh->t0_ns;
	/* Competitors of a latency tenant run until it stops them. */
	deadline = run->kind == BENCH_K_LATENCY ? UINT64_MAX :
		   sh->t0_ns + run->duration_ns;
	while (!atomic_load(&sh->stop) && !atomic_load(&sh->abort)) {
		uint64_t now;

		ret = ops->launch_work(t, &run->work);
		if (!ret)
			ret = ops->fence(t, &tok[issued % slots]);
		if (ret)
			break;
		issued++;
		/* With kernel n submitted, wait for kernel n - depth. */
		if (issued <= depth)
			continue;
		ret = ops->fence_wait(t, tok[finished % slots]);
		if (ret)
			break;
		finished++;
		now = bench_now_ns();
		if (!counted)
			put_sample(sh, i, now - sh->t0_ns);
		if (!counted && now >= deadline) {
			counted = 1;
			r->done = finished;
			r->t_deadline_ns = now;
			if (atomic_fetch_add(&sh->past_deadline, 1) + 1 == nsat)
				atomic_store(&sh->stop, 1);
		}
	}
	/* Drain: a full sync, so `total` has really finished on the GPU. */
	if (!ret)
		ret = ops->sync(t);
	r->t_end_ns = bench_now_ns();
	r->total = issued;
	return ret;
}

/* n small kernels of ns each, each waited for: context, module and (on
 * mdgpu) the vGPU's worker and first slice are behind the tenant. */
static int spin_warmup(const struct bench_target_ops *ops,
		       struct bench_tenant *t, uint64_t n, uint64_t ns)
{
	int ret = 0;

	for (uint64_t k = 0; !ret && k < n; k++) {
		ret = ops->launch_spin(t, ns);
		if (!ret)
			ret = ops->sync(t);
	}
	return ret;
}

/*
 * The latency-sensitive tenant: a small kernel every period, each waited
 * for; samples are launch-to-completion times in ns.  It starts measuring
 * 200 ms after the common start (competitors are saturating by then) and
 * tells them to stop when it is done.
 */
static int t_latency(const struct bench_target_ops *ops,
		     struct bench_tenant *t, struct bench_shm *sh, uint32_t i)
{
	const struct bench_run *run = &sh->run;
	uint64_t next, end;
	int ret = spin_warmup(ops, t, 20, run->small_ns);

	if (ret || (ret = shm_barrier(sh)))
		goto out;
	next = sh->t0_ns + 200000000ULL;
	/* Interactive tenants spread their periods evenly over one period,
	 * as independent programs would be, rather than all waking at once. */
	if (run->kind == BENCH_K_INTERACTIVE)
		next += run->period_ns * i / run->ntenants;
	end = next + run->duration_ns;
	while (next < end && !atomic_load(&sh->abort)) {
		uint64_t a;

		while ((a = bench_now_ns()) < next)
			sleep_ns(next - a > 200000 ? next - a - 100000 : 0);
		ret = ops->launch_spin(t, run->small_ns);
		if (!ret)
			ret = ops->sync(t);
		if (ret)
			break;
		put_sample(sh, i, bench_now_ns() - a);
		next += run->period_ns;
	}
out:
	atomic_store(&sh->stop, 1);
	return ret;
}

/*
 * An idle tenant: run->warmup small kernels, each waited for (so its vGPU
 * has a context, a worker, and has had a slice), then it stays open doing
 * nothing until the stop flag.  Tenant 0 raises the flag at
 * t0 + run->duration_ns; the parent measures the daemon in between.
 */
static int t_idle(const struct bench_target_ops *ops, struct bench_tenant *t,
		  struct bench_shm *sh, uint32_t i)
{
	const struct bench_run *run = &sh->run;
	int ret = spin_warmup(ops, t, run->warmup, run->small_ns);

	if (ret || (ret = shm_barrier(sh)))
		return ret;
	while (!atomic_load(&sh->stop) && !atomic_load(&sh->abort)) {
		uint64_t now = bench_now_ns();

		if (i == 0 && now >= sh->t0_ns + run->duration_ns) {
			atomic_store(&sh->stop, 1);
			break;
		}
		sleep_ns(10000000);	/* 10 ms: the tenants stay quiet too */
	}
	return 0;
}

/*
 * Calibration: time bench_work alone (launch + sync, host clock, median
 * of 5) at run->work.iters; value[0] = ns, value[1] = SMs, value[2] = the
 * round trip of an empty kernel (subtracted).
 */
static int t_calibrate(const struct bench_target_ops *ops,
		       struct bench_tenant *t, struct bench_shm *sh,
		       uint32_t i)
{
	struct bench_target_info info;
	uint64_t best_work = UINT64_MAX, best_empty = UINT64_MAX;
	int ret;

	ret = ops->info(t, &info);
	if (ret)
		return ret;
	sh->res[i].value[1] = info.sm_count;
	for (int k = 0; k < 12; k++) {
		uint64_t a = bench_now_ns(), b, c;

		ret = ops->launch_work(t, &sh->run.work);
		if (!ret)
			ret = ops->sync(t);
		b = bench_now_ns();
		if (!ret)
			ret = ops->launch_empty(t);
		if (!ret)
			ret = ops->sync(t);
		c = bench_now_ns();
		if (ret)
			return ret;
		if (k >= 2) {	/* warm-up */
			put_sample(sh, i, b - a);
			if (b - a < best_work)
				best_work = b - a;
			if (c - b < best_empty)
				best_empty = c - b;
		}
	}
	sh->res[i].value[0] = (double)best_work;
	sh->res[i].value[2] = (double)best_empty;
	return 0;
}

static int tenant_main(const struct bench_target_ops *ops,
		       struct bench_shm *sh, uint32_t i)
{
	const struct bench_run *run = &sh->run;
	struct bench_tenant_cfg cfg = {
		.index = i,
		.weight = run->weight[i] ? run->weight[i] : 1,
		.priority = run->priority[i],
		.latency = run->kind == BENCH_K_SYNC_RTT ||
			   run->kind == BENCH_K_CALIBRATE ||
			   run->kind == BENCH_K_INTERACTIVE ||
			   (run->kind == BENCH_K_LATENCY && i == 0),
	};
	struct bench_tenant *t = NULL;
	int ret;

	/* Only saturating tenants emulate fences with a `depth` ring; the
	 * others (round trip, async launches, copies, the latency tenant)
	 * get the default ring, as deep as a CUDA stream's queue. */
	if (run->kind == BENCH_K_SATURATE ||
	    (run->kind == BENCH_K_LATENCY && i > 0))
		cfg.depth = run->depth;
	if (run->kind == BENCH_K_BANDWIDTH && run->pinned)
		for (uint32_t s = 0; s < run->nsizes; s++)
			if (run->size[s] > cfg.pinned_bytes)
				cfg.pinned_bytes = run->size[s];
	ret = ops->open(&cfg, &t);
	if (ret) {
		fprintf(stderr, "mdgpu-bench: %s tenant %u: open: %s\n",
			ops->name, i, strerror(-ret));
		return ret;
	}
	{
		struct bench_target_info info;

		if (!ops->info(t, &info))
			sh->res[i].value[7] = info.id;	/* stats dumps */
	}
	switch (run->kind) {
	case BENCH_K_CALIBRATE:
		ret = t_calibrate(ops, t, sh, i);
		break;
	case BENCH_K_SYNC_RTT:
		ret = t_sync_rtt(ops, t, sh, i);
		break;
	case BENCH_K_ASYNC:
		ret = t_async(ops, t, sh, i);
		break;
	case BENCH_K_BANDWIDTH:
		ret = t_bandwidth(ops, t, sh, i);
		break;
	case BENCH_K_SATURATE:
		ret = t_saturate(ops, t, sh, i, run->ntenants);
		break;
	case BENCH_K_LATENCY:
		if (i == 0) {
			ret = t_latency(ops, t, sh, i);
		} else {
			/* Competitors: saturate until the latency tenant
			 * stops them (their deadline lies beyond its end). */
			ret = t_saturate(ops, t, sh, i,
					 BENCH_TENANTS_MAX + 1);
		}
		break;
	case BENCH_K_IDLE:
		ret = t_idle(ops, t, sh, i);
		break;
	case BENCH_K_INTERACTIVE:
		ret = t_latency(ops, t, sh, i);
		break;
	default:
		ret = -EINVAL;
	}
	if (ret)
		fprintf(stderr, "mdgpu-bench: %s tenant %u: %s\n", ops->name,
			i, strerror(-ret));
	atomic_fetch_add(&sh->bodies_done, 1);
	if (!ret && run->hold) {
		/* Stay open while the parent looks at the daemon (5 s max). */
		for (int k = 0; k < 5000 && !atomic_load(&sh->parent_ack) &&
				!atomic_load(&sh->abort); k++)
			sleep_ns(1000000);
	}
	ops->close(t);
	return ret;
}

void bench_shm_free(struct bench_shm *sh)
{
	size_t len = sizeof(*sh) + sizeof(uint64_t) * sh->run.ntenants *
		     sh->run.samples_per_tenant;

	munmap(sh, len);
}

struct bench_shm *bench_run_tenants(const struct bench_target_ops *ops,
				    const struct bench_run *run,
				    unsigned int extra_timeout_s,
				    bench_event_fn fn, void *arg)
{
	pid_t pids[BENCH_TENANTS_MAX];
	struct bench_shm *sh;
	uint32_t alive = 0, failed = 0;
	int started = 0, stopped = 0, done = 0;
	uint64_t limit;
	size_t len;

	if (run->ntenants < 1 || run->ntenants > BENCH_TENANTS_MAX)
		return NULL;
	len = sizeof(*sh) + sizeof(uint64_t) * run->ntenants *
	      run->samples_per_tenant;
	sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	if (sh == MAP_FAILED) {
		perror("mdgpu-bench: mmap");
		return NULL;
	}
	sh->run = *run;
	fflush(NULL);
	for (uint32_t i = 0; i < run->ntenants; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("mdgpu-bench: fork");
			atomic_store(&sh->abort, 1);
			failed++;
			break;
		}
		if (pid == 0) {
			int ret = tenant_main(ops, sh, i);

			sh->res[i].status = ret;
			if (ret)
				atomic_store(&sh->abort, 1);
			fflush(NULL);
			_exit(ret ? 1 : 0);
		}
		pids[alive++] = pid;
	}
	limit = bench_now_ns() + run->duration_ns +
		(uint64_t)extra_timeout_s * 1000000000ULL;
	for (uint32_t left = alive; left;) {
		int st;
		pid_t p;

		if (fn && !started && atomic_load(&sh->generation) &&
		    bench_now_ns() >= sh->t0_ns) {
			started = 1;
			fn(BENCH_EV_START, arg);
		}
		if (fn && started && !stopped && atomic_load(&sh->stop)) {
			stopped = 1;
			fn(BENCH_EV_STOP, arg);
		}
		if (!done && atomic_load(&sh->bodies_done) == alive) {
			done = 1;
			if (fn)
				fn(BENCH_EV_DONE, arg);
			atomic_store(&sh->parent_ack, 1);
		}
		/* Only our tenants: the daemon is a child of ours too. */
		for (uint32_t k = 0; k < alive; k++) {
			if (!pids[k])
				continue;
			p = waitpid(pids[k], &st, WNOHANG);
			if (p == pids[k] || (p < 0 && errno == ECHILD)) {
				pids[k] = 0;
				left--;
				if (p < 0 || !WIFEXITED(st) ||
				    WEXITSTATUS(st)) {
					failed++;
					atomic_store(&sh->abort, 1);
				}
			}
		}
		if (bench_now_ns() > limit) {
			fprintf(stderr, "mdgpu-bench: %s: tenants overran their "
				"time limit; killing them\n", ops->name);
			atomic_store(&sh->abort, 1);
			for (uint32_t i = 0; i < alive; i++)
				if (pids[i])
					kill(pids[i], SIGKILL);
			limit = UINT64_MAX;
			failed++;
		}
		sleep_ns(1000000);
	}
	if (failed) {
		bench_shm_free(sh);
		return NULL;
	}
	return sh;
}
