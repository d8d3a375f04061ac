// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpu-bench: native CUDA against mdgpu, same GPU, same run.
 *
 *   mdgpu-bench [--quick] [--json FILE] [--only LIST] [--native-only]
 *               [--mdgpu-only] [--mdgpud PATH] [--daemon-log FILE]
 *               [--timeslice-us N] [--depth N]
 *   mdgpu-bench --sim [--quick] ...   mdgpud on its sim backend (CI)
 *   mdgpu-bench --self-test
 *
 * Without a GPU (and without --sim) it prints "SKIPPED: no GPU" and exits
 * 0.  Documentation/benchmarks.md describes every figure and its target.
 */
#include "bench.h"
#include "stats.h"
#include "uapi/mdgpu.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_MDGPUD_DEFAULT
#define BENCH_MDGPUD_DEFAULT "build/mdgpud"
#endif

#define NT 2			/* targets: 0 native, 1 mdgpu */
#define MS 1000000ULL
#define SEC 1000000000ULL

enum goal_kind {
	G_NONE = 0,
	G_RATIO_LE,		/* mdgpu / native <= goal */
	G_RATIO_GE,		/* mdgpu / native >= goal */
	G_MDGPU_LE,		/* mdgpu value <= goal */
	G_MDGPU_GE,		/* mdgpu value >= goal */
};

struct result {
	char id[64];
	char unit[16];
	double v[NT];		/* NAN: not measured */
	int goal_kind;
	double goal;
	char note[200];
};

#define RESULTS_MAX 256
static struct result results[RESULTS_MAX];
static unsigned int nresults;
static int harness_errors;

static struct {
	int sim, quick, native_only, mdgpu_only;
	const char *json, *only, *mdgpud, *daemon_log;
	uint32_t timeslice_us;
	uint32_t depth;
} opt = { .timeslice_us = 10000, .depth = 4 };

static const struct bench_target_ops *targets[NT] = {
	&bench_target_native, &bench_target_mdgpu,
};
static int target_on[NT];
static char target_why[NT][320];	/* why a target is off */
static struct bench_target_info gpu;
static struct bench_daemon daemon_;
static struct bench_work work;
static double work_ns;			/* bench_work alone, GPU time */
static double empty_rtt_ns;

static struct result *res_add(const char *id, const char *unit, int goal_kind,
			      double goal)
{
	struct result *r;

	if (nresults == RESULTS_MAX) {
		fprintf(stderr, "mdgpu-bench: too many results\n");
		exit(2);
	}
	r = &results[nresults++];
	memset(r, 0, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "%s", id);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	r->v[0] = r->v[1] = NAN;
	r->goal_kind = goal_kind;
	r->goal = goal;
	return r;
}

static void res_note(struct result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void res_note(struct result *r, const char *fmt, ...)
{
	size_t used = strlen(r->note);
	va_list ap;

	if (used && used + 2 < sizeof(r->note)) {
		strcat(r->note, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(r->note + used, sizeof(r->note) - used, fmt, ap);
	va_end(ap);
}

static double res_ratio(const struct result *r)
{
	if (isnan(r->v[0]) || isnan(r->v[1]) || r->v[0] == 0)
		return NAN;
	return r->v[1] / r->v[0];
}

/* 1 met, 0 missed, -1 no goal or not measurable. */
static int res_met(const struct result *r)
{
	double x;

	switch (r->goal_kind) {
	case G_RATIO_LE:
	case G_RATIO_GE:
		x = res_ratio(r);
		if (isnan(x))
			return -1;
		return r->goal_kind == G_RATIO_LE ? x <= r->goal :
						    x >= r->goal;
	case G_MDGPU_LE:
	case G_MDGPU_GE:
		x = r->v[1];
		if (isnan(x))
			return -1;
		return r->goal_kind == G_MDGPU_LE ? x <= r->goal :
						    x >= r->goal;
	default:
		return -1;
	}
}

static const char *goal_text(const struct result *r, char *buf, size_t len)
{
	switch (r->goal_kind) {
	case G_RATIO_LE:
		snprintf(buf, len, "ratio<=%.2f", r->goal);
		break;
	case G_RATIO_GE:
		snprintf(buf, len, "ratio>=%.2f", r->goal);
		break;
	case G_MDGPU_LE:
		snprintf(buf, len, "mdgpu<=%.4g", r->goal);
		break;
	case G_MDGPU_GE:
		snprintf(buf, len, "mdgpu>=%.4g", r->goal);
		break;
	default:
		snprintf(buf, len, "-");
	}
	return buf;
}

static int selected(const char *name)
{
	const char *p;
	size_t n = strlen(name);

	if (!opt.only)
		return 1;
	for (p = opt.only; (p = strstr(p, name)); p += n)
		if ((p == opt.only || p[-1] == ',') &&
		    (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

static struct bench_run run_base(int kind, uint32_t ntenants)
{
	struct bench_run r = { 0 };

	r.kind = kind;
	r.ntenants = ntenants;
	for (uint32_t i = 0; i < ntenants; i++)
		r.weight[i] = 1;
	r.work = work;
	r.depth = opt.depth;
	r.samples_per_tenant = 16;
	return r;
}

/* Parent-side observation of an mdgpu run: the daemon's CPU time between
 * the common start and the stop flag, and a stats dump (SIGUSR1) into its
 * log while the tenants' vGPUs still exist. */
struct dump_vgpu {
	uint32_t id, type;
	uint64_t gpu_ns, wait_p50, wait_p99;
};

struct observe {
	const char *what;
	uint64_t settle_ns;	/* in: the CPU window opens this long after
				 * the common start */
	int workers;		/* daemon's children alive when it opens */
	uint64_t t_start, t_stop;
	double sup0, wk0, sup1, wk1;
	int have0, have1;
	struct dump_vgpu dump[BENCH_TENANTS_MAX];
	uint32_t ndump;
};

/* The vGPU lines of the daemon's latest status dump (core.c's format). */
static void read_dump(struct observe *o)
{
	FILE *f = fopen(daemon_.log_path, "r");
	char line[512];

	if (!f)
		return;
	o->ndump = 0;
	while (fgets(line, sizeof(line), f)) {
		struct dump_vgpu d = { 0 };
		char *p;

		if (strstr(line, "info: status: ")) {
			o->ndump = 0;
			continue;
		}
		p = strstr(line, "info: vgpu ");
		if (!p || !strstr(p, " wait p50 <= "))
			continue;
		if (sscanf(p, "info: vgpu %u type %u: gpu %" SCNu64 " ns",
			   &d.id, &d.type, &d.gpu_ns) != 3)
			continue;
		p = strstr(p, " wait p50 <= ");
		if (sscanf(p, " wait p50 <= %" SCNu64 " ns p99 <= %" SCNu64,
			   &d.wait_p50, &d.wait_p99) != 2)
			continue;
		if (o->ndump < BENCH_TENANTS_MAX)
			o->dump[o->ndump++] = d;
	}
	fclose(f);
}

static void observe_fn(int ev, void *arg)
{
	struct observe *o = arg;
	struct timespec rt;

	switch (ev) {
	case BENCH_EV_START:
		if (o->settle_ns) {
			struct timespec ts = {
				.tv_sec = (time_t)(o->settle_ns / SEC),
				.tv_nsec = (long)(o->settle_ns % SEC),
			};

			nanosleep(&ts, NULL);
		}
		o->workers = bench_daemon_workers(&daemon_);
		o->t_start = bench_now_ns();
		o->have0 = !bench_daemon_cpu(&daemon_, &o->sup0, &o->wk0);
		break;
	case BENCH_EV_STOP:
		o->t_stop = bench_now_ns();
		o->have1 = !bench_daemon_cpu(&daemon_, &o->sup1, &o->wk1);
		break;
	case BENCH_EV_DONE:
		if (daemon_.pid <= 0)
			break;
		clock_gettime(CLOCK_REALTIME, &rt);
		fprintf(stderr, "mdgpu-bench: [%lld.%06ld] daemon stats dump "
			"(SIGUSR1) after: %s\n", (long long)rt.tv_sec,
			rt.tv_nsec / 1000, o->what);
		kill(daemon_.pid, SIGUSR1);
		{
			struct timespec ts = { 0, 200000000 };

			nanosleep(&ts, NULL);	/* let it log, vGPUs alive */
		}
		read_dump(o);
		break;
	}
}

static struct bench_shm *run_obs(int tg, const struct bench_run *run,
				 const char *what, struct observe *obs)
{
	struct bench_shm *sh;
	struct bench_run r = *run;

	if (!target_on[tg])
		return NULL;
	fprintf(stderr, "mdgpu-bench: %-28s %s\n", what, targets[tg]->name);
	if (obs) {
		obs->what = what;
		r.hold = tg == 1;
	}
	sh = bench_run_tenants(targets[tg], &r, 60 + run->ntenants * 2,
			       tg == 1 && obs ? observe_fn : NULL, obs);
	if (!sh) {
		fprintf(stderr, "mdgpu-bench: %s on %s FAILED\n", what,
			targets[tg]->name);
		harness_errors++;
	}
	return sh;
}

/* The daemon's CPU use in the observed window, in cores: 0, or -EIO when
 * the window was not seen (the /proc reads failed or it is empty). */
static int obs_cpu(const struct observe *o, double *sup, double *workers)
{
	double wall;

	if (!o->have0 || !o->have1 || o->t_stop <= o->t_start)
		return -EIO;
	wall = (double)(o->t_stop - o->t_start) / 1e9;
	*sup = (o->sup1 - o->sup0) / wall;
	*workers = (o->wk1 - o->wk0) / wall;
	return 0;
}

static struct bench_shm *run_on(int tg, const struct bench_run *run,
				const char *what)
{
	/* No observation (bandwidth runs are many and short). */
	return run_obs(tg, run, what, NULL);
}

/* Samples of tenant i as doubles (caller frees). */
static double *samples_d(struct bench_shm *sh, uint32_t i, size_t *n)
{
	uint64_t *s = bench_samples(sh, i);
	double *d;

	*n = sh->res[i].nsamples;
	d = calloc(*n ? *n : 1, sizeof(*d));
	if (!d)
		exit(2);
	for (size_t k = 0; k < *n; k++)
		d[k] = (double)s[k];
	return d;
}

/* ---- interleaved one-tenant figures ------------------------------------ */

#define ROUNDS_MAX 8

/*
 * A one-tenant figure measured in rounds that alternate the targets, so
 * that the machine's drift while the figure runs lands on both sides
 * alike rather than between a native block and an mdgpu block.  Each
 * round runs a fresh tenant on each target in turn, native first in even
 * rounds and mdgpu first in odd ones (ABBA: a steady drift cancels over
 * two rounds); every tenant has its own discarded warm-up, then
 * run->reps timed repeats.  Before each tenant the daemon's workers of
 * the previous mdgpu tenant must have exited (2 s at most), so no context
 * teardown overlaps a measurement.
 *
 * A tenant's samples come in `nsec` sections of run->reps each (e.g.
 * round trips, then launch-call times).  d[tg] holds them section by
 * section, every round of a section together (rounds_sec()).  A target
 * whose tenant fails in any round is not run again and has no samples.
 */
struct rounds {
	uint32_t nrounds, nsec;
	uint64_t reps;			/* per tenant and round */
	double *d[NT];			/* NULL: target off or failed */
	uint32_t secs[NT];		/* sections every round filled */
	struct observe obs[ROUNDS_MAX];	/* per round (mdgpu side) */
};

/* Rounds a figure runs in: an even count, for ABBA. */
static uint32_t rounds_count(void)
{
	return opt.quick ? 2 : 6;
}

static void settle_daemon(void)
{
	for (int k = 0; k < 200 && bench_daemon_workers(&daemon_) > 0; k++) {
		struct timespec ts = { 0, 10000000 };

		nanosleep(&ts, NULL);
	}
	if (bench_daemon_workers(&daemon_) > 0)
		fprintf(stderr, "mdgpu-bench: mdgpud still has a worker "
			"running after 2 s; measuring anyway\n");
}

static void run_rounds(const struct bench_run *run, uint32_t nrounds,
		       uint32_t nsec, const char *what, struct rounds *o)
{
	size_t per = (size_t)nrounds * run->reps;

	memset(o, 0, sizeof(*o));
	if (nrounds > ROUNDS_MAX ||
	    run->samples_per_tenant < nsec * run->reps) {
		fprintf(stderr, "mdgpu-bench: %s: bad round counts\n", what);
		exit(2);
	}
	o->nrounds = nrounds;
	o->nsec = nsec;
	o->reps = run->reps;
	for (int tg = 0; tg < NT; tg++) {
		if (!target_on[tg])
			continue;
		o->d[tg] = calloc(nsec * per + 1, sizeof(double));
		if (!o->d[tg])
			exit(2);
		o->secs[tg] = nsec;
	}
	for (uint32_t r = 0; r < nrounds; r++)
	for (int j = 0; j < NT; j++) {
		int tg = (int)((j + r) % NT);
		struct bench_shm *sh;
		uint64_t *raw;
		char w[64];
		uint32_t secs;

		if (!o->d[tg])
			continue;
		snprintf(w, sizeof(w), "%s %u/%u", what, r + 1, nrounds);
		settle_daemon();
		sh = run_obs(tg, run, w, &o->obs[r]);
		if (!sh) {
			free(o->d[tg]);
			o->d[tg] = NULL;
			o->secs[tg] = 0;
			continue;
		}
		raw = bench_samples(sh, 0);
		secs = (uint32_t)(sh->res[0].nsamples / run->reps);
		if (secs < o->secs[tg])
			o->secs[tg] = secs;
		for (uint32_t sec = 0; sec < o->secs[tg]; sec++)
			for (uint64_t k = 0; k < run->reps; k++)
				o->d[tg][sec * per + r * run->reps + k] =
					(double)raw[sec * run->reps + k];
		bench_shm_free(sh);
	}
}

/* Section `sec` of target tg over all rounds (n samples), or NULL. */
static double *rounds_sec(struct rounds *o, int tg, uint32_t sec, size_t *n)
{
	*n = (size_t)o->nrounds * o->reps;
	if (!o->d[tg] || sec >= o->secs[tg])
		return NULL;
	return o->d[tg] + sec * *n;
}

static void rounds_free(struct rounds *o)
{
	for (int tg = 0; tg < NT; tg++)
		free(o->d[tg]);
}

/* ---- calibration ------------------------------------------------------ */

static int calibrate(void)
{
	int tg = target_on[0] ? 0 : 1;
	struct bench_run run;
	struct bench_shm *sh;
	double ns;

	work.block = 256;
	work.iters = 4096;
	work.ns_hint = MS;
	work.grid = 132 * 8;
	for (int pass = 0; pass < 2; pass++) {
		run = run_base(BENCH_K_CALIBRATE, 1);
		run.work = work;
		run.samples_per_tenant = 16;
		sh = run_on(tg, &run, "calibrate bench_work");
		if (!sh)
			return -EIO;
		gpu.sm_count = (uint32_t)sh->res[0].value[1];
		empty_rtt_ns = sh->res[0].value[2];
		ns = sh->res[0].value[0] - empty_rtt_ns;
		bench_shm_free(sh);
		if (gpu.sm_count)
			work.grid = gpu.sm_count * 8;
		if (ns < 1000)
			ns = 1000;
		if (pass == 0 && !(tg == 1 && bench_mdgpu_env.sim)) {
			double it = (double)work.iters * (double)MS / ns;

			work.iters = it > 1e8 ? 100000000u :
				     it < 16 ? 16u : (uint32_t)it;
		}
	}
	work_ns = ns;
	work.ns_hint = (uint64_t)ns;
	fprintf(stderr, "mdgpu-bench: bench_work: grid %u x %u threads, %u "
		"iterations: %.1f us alone on %s\n", work.grid, work.block,
		work.iters, ns / 1e3, targets[tg]->name);
	return 0;
}

/* ---- 1. synchronous round trip ---------------------------------------- */

static void bench_sync_rtt(void)
{
	struct result *med = res_add("sync_rtt.p50", "us", G_RATIO_LE, 1.3);
	struct result *p99 = res_add("sync_rtt.p99", "us", G_NONE, 0);
	struct result *sub = res_add("sync_rtt.launch_call.p50", "us", G_NONE,
				     0);
	struct result *nop = res_add("sync_rtt.daemon_only_rtt.p50", "us",
				     G_NONE, 0);
	struct result *qw = res_add("sync_rtt.daemon_queue_wait.p50_bound",
				    "us", G_NONE, 0);
	struct result *const sec_p50[3] = { med, sub, nop };
	struct bench_run run = run_base(BENCH_K_SYNC_RTT, 1);
	uint32_t nr = rounds_count();
	struct rounds o;

	run.warmup = opt.quick ? 50 : 500;
	run.reps = opt.quick ? 100 : 1000;
	run.samples_per_tenant = 3 * run.reps;
	run_rounds(&run, nr, 3, "sync round trip", &o);
	for (int tg = 0; tg < NT; tg++) {
		for (uint32_t sec = 0; sec < 3; sec++) {
			size_t n;
			double *d = rounds_sec(&o, tg, sec, &n);

			if (!d)
				continue;
			if (sec == 0)
				p99->v[tg] = bench_quantile(d, n, 0.99) / 1e3;
			sec_p50[sec]->v[tg] = bench_median(d, n) / 1e3;
		}
	}
	/* Each round's vGPU has its own histogram: the largest p50 bound
	 * of the rounds bounds the p50 of all of them. */
	for (uint32_t r = 0; o.d[1] && r < nr; r++) {
		double bound = (double)(o.obs[r].dump[0].wait_p50 + 1) / 1e3;

		if (o.obs[r].ndump == 1 && (isnan(qw->v[1]) || bound > qw->v[1]))
			qw->v[1] = bound;
	}
	rounds_free(&o);
	res_note(med, "empty kernel, launch + wait, median of %llu: %u rounds "
		 "x %llu, sides alternating", (unsigned long long)(nr *
		 run.reps), nr, (unsigned long long)run.reps);
	res_note(sub, "time inside the launch call (submission)");
	res_note(nop, "mdgpu: QUERY round trip client -> mdgpud -> client, "
		 "no worker, no GPU");
	res_note(qw, "mdgpud's own histogram: doorbell seen -> command "
		 "starts, p50 upper bucket bound (largest of the rounds)");
}

/* ---- 2. async launch throughput --------------------------------------- */

static void bench_async(void)
{
	struct result *r = res_add("async_launch.per_launch", "us", G_RATIO_LE,
				   1.0 / 0.9);
	struct result *t = res_add("async_launch.rate", "launch/s", G_RATIO_GE,
				   0.9);
	struct bench_run run = run_base(BENCH_K_ASYNC, 1);
	uint32_t nr = rounds_count();
	struct rounds o;

	run.warmup = 1000;
	run.inner = opt.quick ? 1000 : 10000;
	run.reps = opt.quick ? 2 : 3;
	run.samples_per_tenant = run.reps;
	run_rounds(&run, nr, 1, "async launches", &o);
	for (int tg = 0; tg < NT; tg++) {
		size_t n;
		double *d = rounds_sec(&o, tg, 0, &n), m;

		if (!d)
			continue;
		m = bench_median(d, n) / (double)run.inner;
		r->v[tg] = m / 1e3;
		t->v[tg] = 1e9 / m;
	}
	rounds_free(&o);
	res_note(t, "%llu empty launches then one wait, median of %llu: %u "
		 "rounds x %llu, sides alternating; mdgpu: the daemon's "
		 "default ring", (unsigned long long)run.inner,
		 (unsigned long long)(nr * run.reps), nr,
		 (unsigned long long)run.reps);
}

/* ---- 3. bandwidth ------------------------------------------------------ */

static void bench_bandwidth(void)
{
	static const uint64_t full[] = { 4096, 65536, 1 << 20, 16 << 20,
					 64 << 20, 256 << 20 };
	static const uint64_t quick[] = { 4096, 1 << 20, 16 << 20 };
	const uint64_t *sizes = opt.quick ? quick : full;
	uint32_t nsizes = opt.quick ? 3 : 6;

	for (int pinned = 1; pinned >= 0; pinned--)
	for (int h2d = 1; h2d >= 0; h2d--) {
		struct result *r[8];
		struct bench_run run = run_base(BENCH_K_BANDWIDTH, 1);
		char what[48];

		run.pinned = pinned;
		run.h2d = h2d;
		run.warmup = 2;
		run.nsizes = nsizes;
		run.samples_per_tenant = 0;
		for (uint32_t s = 0; s < nsizes; s++) {
			uint64_t reps = (512ULL << 20) / sizes[s];
			int gk = G_NONE;
			double goal = 0;
			char id[64];

			if (reps > (opt.quick ? 20 : 200))
				reps = opt.quick ? 20 : 200;
			if (reps < (opt.quick ? 3 : 7))
				reps = opt.quick ? 3 : 7;
			run.size[s] = sizes[s];
			run.size_reps[s] = reps;
			run.samples_per_tenant += reps;
			if (pinned && sizes[s] >= (64 << 20)) {
				gk = G_RATIO_GE;
				goal = 0.9;
			} else if (!pinned) {
				gk = G_RATIO_GE;
				goal = 1.0;
			}
			snprintf(id, sizeof(id), "bw.%s.%s.%lluKiB",
				 h2d ? "h2d" : "d2h",
				 pinned ? "pinned" : "pageable",
				 (unsigned long long)(sizes[s] >> 10));
			r[s] = res_add(id, "GB/s", gk, goal);
		}
		snprintf(what, sizeof(what), "bandwidth %s %s",
			 h2d ? "h2d" : "d2h", pinned ? "pinned" : "pageable");
		for (int tg = 0; tg < NT; tg++) {
			struct bench_shm *sh = run_on(tg, &run, what);
			size_t off = 0;

			if (!sh)
				continue;
			if (sh->res[0].value[0] < 0) {
				for (uint32_t s = 0; s < nsizes; s++)
					res_note(r[s], "%s: no %s host memory",
						 targets[tg]->name, pinned ?
						 "pinned/aperture" : "pageable");
				bench_shm_free(sh);
				continue;
			}
			for (uint32_t s = 0; s < nsizes; s++) {
				double *d = calloc(run.size_reps[s],
						   sizeof(*d));
				uint64_t *raw = bench_samples(sh, 0) + off;
				size_t n = run.size_reps[s];

				if (!d)
					exit(2);
				if (off + n > sh->res[0].nsamples)
					n = sh->res[0].nsamples > off ?
					    sh->res[0].nsamples - off : 0;
				for (size_t k = 0; k < n; k++)
					d[k] = (double)raw[k];
				if (n)
					r[s]->v[tg] = (double)sizes[s] /
						      bench_median(d, n);
				off += run.size_reps[s];
				free(d);
			}
			bench_shm_free(sh);
		}
	}
}

/* ---- saturating tenants ----------------------------------------------- */

struct sat_out {
	double agg;		/* kernels/s of all tenants in the window */
	double drained;		/* one tenant: all kernels / time to the end
				 * of the final sync */
	double agg_windows;	/* median over windows */
	double count[BENCH_TENANTS_MAX];
	uint32_t n;
	double cpu_sup, cpu_workers;	/* daemon cores (mdgpu) */
	double gpu_ns_by_tenant[BENCH_TENANTS_MAX]; /* mdgpud's accounting */
	uint32_t ndump;
	/* In (kept across saturate()'s reset): when tl_bucket_ns is set,
	 * tl[b * n + i] receives the kernels tenant i was seen finishing in
	 * [b, b + 1) * tl_bucket_ns after the common start, b < tl_n. */
	uint64_t tl_bucket_ns;
	uint32_t tl_n;
	double *tl;
};

/*
 * The fairness run's timeline (JSON "fairness"): kernels each tenant was
 * seen finishing per bucket, for each target.  Every kernel is the same
 * bench_work, so a tenant's share of the kernels finished in a bucket is
 * its share of the work done (and, to the extent kernels take equal GPU
 * time, of the GPU time) in that bucket.
 */
#define FTL_BUCKETS_MAX 128
static struct {
	uint64_t bucket_ns, duration_ns;
	uint32_t nb;
	uint32_t w[3];
	int have[NT];
	double k[NT][FTL_BUCKETS_MAX * 3];
} ftl;

static uint64_t sat_samples(uint64_t duration_ns)
{
	return duration_ns / (work_ns > 1000 ? (uint64_t)work_ns : 1000) * 2 +
	       256;
}

static int saturate(int tg, uint32_t n, const uint32_t *weights,
		    uint64_t duration_ns, const char *what, struct sat_out *o)
{
	struct bench_run run = run_base(BENCH_K_SATURATE, n);
	uint64_t window = opt.quick ? 100 * MS : SEC;
	uint32_t nwin = (uint32_t)(duration_ns / window);
	struct observe obs = { 0 };
	struct bench_shm *sh;
	double *wins, *tl = o->tl;
	uint64_t tl_bucket = o->tl_bucket_ns;
	uint32_t tl_n = o->tl_n;

	memset(o, 0, sizeof(*o));
	o->tl = tl;
	o->tl_bucket_ns = tl_bucket;
	o->tl_n = tl_n;
	if (tl && tl_bucket)
		memset(tl, 0, sizeof(*tl) * tl_n * n);
	o->n = n;
	o->cpu_sup = o->cpu_workers = NAN;
	run.duration_ns = duration_ns;
	run.samples_per_tenant = sat_samples(duration_ns);
	for (uint32_t i = 0; i < n; i++)
		run.weight[i] = weights ? weights[i] : 1;
	sh = run_obs(tg, &run, what, &obs);
	if (!sh)
		return -EIO;
	o->ndump = obs.ndump;
	/* Dump lines are in vGPU creation order, tenants may connect in any:
	 * match them through the vGPU id each tenant reported. */
	for (uint32_t i = 0; i < obs.ndump; i++)
		for (uint32_t k = 0; k < n; k++)
			if (sh->res[k].value[7] == obs.dump[i].id)
				o->gpu_ns_by_tenant[k] =
					(double)obs.dump[i].gpu_ns;
	/* CPU time from the common start to the stop flag. */
	if (tg == 1)
		obs_cpu(&obs, &o->cpu_sup, &o->cpu_workers);
	wins = calloc(nwin ? nwin : 1, sizeof(*wins));
	if (!wins)
		exit(2);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t *s = bench_samples(sh, i);

		for (uint64_t k = 0; k < sh->res[i].nsamples; k++) {
			if (s[k] > duration_ns)
				break;
			o->count[i] += 1;
			if (nwin && s[k] / window < nwin)
				wins[s[k] / window] += 1;
			if (tl && tl_bucket && s[k] / tl_bucket < tl_n)
				tl[s[k] / tl_bucket * n + i] += 1;
		}
		o->agg += o->count[i];
	}
	o->agg /= (double)duration_ns / 1e9;
	o->drained = NAN;
	if (n == 1 && sh->res[0].t_end_ns > sh->res[0].t_start_ns)
		o->drained = (double)sh->res[0].total /
			     ((double)(sh->res[0].t_end_ns -
				       sh->res[0].t_start_ns) / 1e9);
	for (uint32_t w = 0; w < nwin; w++)
		wins[w] /= (double)window / 1e9;
	o->agg_windows = bench_median(wins, nwin);
	free(wins);
	bench_shm_free(sh);
	return 0;
}

static double alone[NT] = { NAN, NAN };

/* ---- 4. compute-bound throughput ---------------------------------------- */

static void bench_compute(void)
{
	uint64_t d = opt.quick ? SEC : 10 * SEC;
	struct result *r = res_add("compute.throughput", "kernel/s",
				   G_RATIO_GE, 0.99);
	struct result *c = res_add("compute.throughput_at_deadline",
				   "kernel/s", G_NONE, 0);
	struct result *w = res_add("compute.throughput_window_median",
				   "kernel/s", G_NONE, 0);

	for (int tg = 0; tg < NT; tg++) {
		struct sat_out o = { 0 };

		if (saturate(tg, 1, NULL, d, "compute, one tenant", &o))
			continue;
		r->v[tg] = o.drained;
		c->v[tg] = o.agg;
		w->v[tg] = o.agg_windows;
		alone[tg] = o.agg;
	}
	res_note(r, "bench_work %.0f us each, %s, %u queued; all kernels / "
		 "time to the end of the final sync", work_ns / 1e3,
		 opt.quick ? "1 s" : "10 s", opt.depth);
	res_note(c, "kernels seen finished by the deadline / duration (the "
		 "basis of the sharing figures)");
	res_note(w, "median over %s windows", opt.quick ? "100 ms" : "1 s");
}

/* ---- 5. sharing efficiency ---------------------------------------------- */

static void bench_sharing(void)
{
	static const uint32_t ns[] = { 2, 4 };
	uint64_t d = opt.quick ? SEC : 5 * SEC;

	if (isnan(alone[0]) && isnan(alone[1]))
		bench_compute();
	for (size_t k = 0; k < 2; k++) {
		char id[64];
		struct result *r;

		snprintf(id, sizeof(id), "sharing.%u_tenants.efficiency",
			 ns[k]);
		r = res_add(id, "x alone", G_MDGPU_GE, 0.97);
		for (int tg = 0; tg < NT; tg++) {
			struct sat_out o = { 0 };
			char what[48];

			snprintf(what, sizeof(what), "sharing, %u tenants",
				 ns[k]);
			if (saturate(tg, ns[k], NULL, d, what, &o))
				continue;
			r->v[tg] = o.agg / alone[tg];
		}
		res_note(r, "aggregate throughput / one tenant alone; native = "
			 "plain processes time-sliced by the GPU");
	}
}

/* ---- 6. fairness ------------------------------------------------------- */

static void bench_fairness(void)
{
	static const uint32_t w[3] = { 1, 2, 4 };
	uint64_t d = opt.quick ? SEC : 10 * SEC;
	struct result *rs[3], *re[3], *rd[3], *rj, *rmax;


	for (int i = 0; i < 3; i++) {
		char id[64];

		snprintf(id, sizeof(id), "fairness.share_w%u", w[i]);
		rs[i] = res_add(id, "fraction", G_NONE, 0);
		res_note(rs[i], "target %.4f", w[i] / 7.0);
		snprintf(id, sizeof(id), "fairness.rel_err_w%u", w[i]);
		re[i] = res_add(id, "fraction", G_MDGPU_LE, 0.03);
	}
	for (int i = 0; i < 3; i++) {
		char id[64];

		snprintf(id, sizeof(id), "fairness.daemon_gpu_share_w%u",
			 w[i]);
		rd[i] = res_add(id, "fraction", G_NONE, 0);
	}
	res_note(rd[0], "mdgpud's own GPU-time accounting (device events) "
		 "per vGPU over its life, from its stats dump");
	rmax = res_add("fairness.max_rel_err", "fraction", G_MDGPU_LE, 0.03);
	rj = res_add("fairness.jain_weighted", "index", G_MDGPU_GE, 0.99);
	/* Timeline: 250 ms buckets (100 ms with --quick). */
	ftl.bucket_ns = opt.quick ? 100 * MS : 250 * MS;
	ftl.duration_ns = d;
	ftl.nb = (uint32_t)(d / ftl.bucket_ns);
	if (ftl.nb > FTL_BUCKETS_MAX)
		ftl.nb = FTL_BUCKETS_MAX;
	memcpy(ftl.w, w, sizeof(ftl.w));
	for (int tg = 0; tg < NT; tg++) {
		struct sat_out o = { .tl_bucket_ns = ftl.bucket_ns,
				     .tl_n = ftl.nb, .tl = ftl.k[tg] };
		double x[3], sum = 0, worst = 0;

		ftl.have[tg] = 0;
		if (saturate(tg, 3, w, d, "fairness 1:2:4", &o))
			continue;
		ftl.have[tg] = 1;
		for (int i = 0; i < 3; i++)
			sum += o.count[i];
		if (sum <= 0)
			continue;
		for (int i = 0; i < 3; i++) {
			double share = o.count[i] / sum;
			double err = fabs(share / (w[i] / 7.0) - 1);

			rs[i]->v[tg] = share;
			re[i]->v[tg] = err;
			if (err > worst)
				worst = err;
			x[i] = share / w[i];
		}
		rmax->v[tg] = worst;
		rj->v[tg] = bench_jain(x, 3);
		if (tg == 1 && o.ndump == 3) {
			double tot = 0;

			for (int i = 0; i < 3; i++)
				tot += o.gpu_ns_by_tenant[i];
			for (int i = 0; tot > 0 && i < 3; i++)
				rd[i]->v[tg] = o.gpu_ns_by_tenant[i] / tot;
		}
	}
	res_note(rj, "Jain over share/weight; native has no weights (the GPU "
		 "time-slices contexts equally): its figure is the reference");
	res_note(rmax, "|share / (w/7) - 1|; mdgpu weights set through "
		 "mdgpud's admin socket on three 1g vGPUs");
}

/* ---- 7. latency-sensitive tenant ------------------------------------------ */

#define LATENCY_TAIL_SHOWN	10

/*
 * The log gets the largest samples with their place in the run (sample
 * index, 10 ms apart): whether a tail is the run's start, periodic, or
 * scattered tells where it comes from.
 */
static void latency_tail(const double *d, size_t n, int tg, const char *what)
{
	size_t top[LATENCY_TAIL_SHOWN];
	size_t k, nt = n < LATENCY_TAIL_SHOWN ? n : LATENCY_TAIL_SHOWN;

	for (k = 0; k < nt; k++) {
		size_t best = SIZE_MAX;

		for (size_t j = 0; j < n; j++) {
			bool taken = false;

			for (size_t q = 0; q < k; q++)
				taken |= top[q] == j;
			if (!taken && (best == SIZE_MAX || d[j] > d[best]))
				best = j;
		}
		top[k] = best;
	}
	fprintf(stderr, "mdgpu-bench: %s, %s: largest of %zu samples "
		"(us@index):", what, tg ? "mdgpu" : "native", n);
	for (k = 0; k < nt; k++)
		fprintf(stderr, " %.0f@%zu", d[top[k]] / 1e3, top[k]);
	fputc('\n', stderr);
}

static void bench_latency(void)
{
	uint64_t d = opt.quick ? SEC : 5 * SEC;
	double slice_us = opt.timeslice_us;
	struct result *r[6];
	static const char *const ids[6] = {
		"latency.alone.p50", "latency.alone.p99",
		"latency.shared.p50", "latency.shared.p99",
		"latency.class.p50", "latency.class.p99" };
	static const char *const what[3] = {
		"latency alone", "latency beside saturating",
		"latency class beside saturating" };

	for (int k = 0; k < 6; k++)
		r[k] = res_add(ids[k], "us", k < 2 ? G_RATIO_LE : G_NONE,
			       k < 2 ? 1.5 : 0);
	r[3]->goal_kind = G_MDGPU_LE;
	r[3]->goal = slice_us + work_ns / 1e3;
	res_note(r[3], "goal = timeslice %.0f us + longest competing kernel "
		 "%.0f us; native: GPU time-slicing", slice_us, work_ns / 1e3);
	r[5]->goal_kind = G_RATIO_LE;
	r[5]->goal = 1.0;
	res_note(r[4], "the same, the latency tenant's vGPU at priority %u "
		 "(the latency class: the saturating tenant keeps at most "
		 "latency_queue_us queued); native: GPU time-slicing, the "
		 "same run as latency.shared", MDGPU_PRIORITY_MAX);
	res_note(r[5], "goal: at most native's p99 (GPU time-slicing)");
	for (int with = 0; with < 3; with++)
	for (int tg = 0; tg < NT; tg++) {
		struct bench_run run = run_base(BENCH_K_LATENCY, with ? 2 : 1);
		struct observe obs = { 0 };
		struct bench_shm *sh;
		double *dd;
		size_t n;

		/* Native has no latency class: its figure is the shared
		 * run's, measured once. */
		if (with == 2 && tg == 0) {
			r[4]->v[0] = r[2]->v[0];
			r[5]->v[0] = r[3]->v[0];
			continue;
		}
		run.duration_ns = d;
		run.period_ns = 10 * MS;
		run.small_ns = 10000;
		run.samples_per_tenant = sat_samples(d + 60 * SEC);
		if (with == 2)
			run.priority[0] = MDGPU_PRIORITY_MAX;
		sh = run_obs(tg, &run, what[with], &obs);
		if (!sh)
			continue;
		dd = samples_d(sh, 0, &n);
		latency_tail(dd, n, tg, what[with]);
		r[with * 2]->v[tg] = bench_median(dd, n) / 1e3;
		r[with * 2 + 1]->v[tg] = bench_quantile(dd, n, 0.99) / 1e3;
		free(dd);
		bench_shm_free(sh);
	}
	res_note(r[0], "10 us spin kernel every 10 ms, launch to completion");
	res_note(r[0], "goal: mdgpu / native in the same run");
}

/* ---- 8. idle and interactive vGPUs: the daemon's CPU cost ---------------- */

#define IDLE_SETTLE_NS	(200 * MS)	/* past the 20 ms polling windows */
#define IDLE_WINDOW_NS	SEC
#define IDLE_CPU_MAX	0.05		/* cores: an idle daemon polls nothing */

static const uint32_t idle_full[] = { 1, 8, 32 }, idle_quick[] = { 1, 8 };

/* n tenants warm up, then stay open and idle; mdgpud's CPU over 1 s from
 * 200 ms after the common start. */
static void idle_one(uint32_t n)
{
	struct bench_run run = run_base(BENCH_K_IDLE, n);
	struct observe obs = { .settle_ns = IDLE_SETTLE_NS };
	struct result *rd, *rw;
	struct bench_shm *sh;
	char id[64], what[48];
	double sup, wk;

	snprintf(id, sizeof(id), "idle.%u.daemon_cpu", n);
	rd = res_add(id, "cores", G_MDGPU_LE, IDLE_CPU_MAX);
	snprintf(id, sizeof(id), "idle.%u.worker_cpu", n);
	rw = res_add(id, "cores", G_MDGPU_LE, IDLE_CPU_MAX);
	run.warmup = 5;
	run.small_ns = 10000;
	run.duration_ns = IDLE_SETTLE_NS + IDLE_WINDOW_NS;
	snprintf(what, sizeof(what), "idle, %u tenants", n);
	settle_daemon();
	sh = run_obs(1, &run, what, &obs);
	if (!sh)
		return;
	bench_shm_free(sh);
	if (obs_cpu(&obs, &sup, &wk)) {
		fprintf(stderr, "mdgpu-bench: %s: no CPU reading\n", what);
		harness_errors++;
		return;
	}
	rd->v[1] = sup;
	rw->v[1] = wk;
	res_note(rd, "%u vGPUs open, each ran 5 x (10 us kernel + wait), "
		 "then idle: mdgpud supervisor CPU time / wall time over "
		 "%.1f s from %.0f ms after (from /proc)", n,
		 (double)(obs.t_stop - obs.t_start) / 1e9,
		 IDLE_SETTLE_NS / 1e6);
	res_note(rw, "all mdgpud-worker processes together, same window "
		 "(%d alive when it opened)", obs.workers);
}

/*
 * n interactive tenants, each a 10 us kernel + wait every 10 ms (phases
 * spread over the period) for `d`; mdgpud's CPU (supervisor + workers)
 * over the last second; latency pooled over all tenants.
 */
static void interactive_one(uint32_t n, uint64_t d)
{
	struct result *rc, *r50, *r99;
	char id[64], what[48];

	snprintf(id, sizeof(id), "interactive.%u.cpu", n);
	/* No goal: the polling is bounded (1 + worker_pollers cores), the
	 * workers' own launches grow with n; recorded, not judged. */
	rc = res_add(id, "cores", G_NONE, 0);
	snprintf(id, sizeof(id), "interactive.%u.p50", n);
	r50 = res_add(id, "us", G_NONE, 0);
	snprintf(id, sizeof(id), "interactive.%u.p99", n);
	r99 = res_add(id, "us", G_NONE, 0);
	snprintf(what, sizeof(what), "interactive, %u tenants", n);
	for (int tg = 0; tg < NT; tg++) {
		struct bench_run run = run_base(BENCH_K_INTERACTIVE, n);
		struct observe obs = {
			.settle_ns = IDLE_SETTLE_NS + d - IDLE_WINDOW_NS,
		};
		struct bench_shm *sh;
		double *all, sup, wk;
		size_t cnt = 0;

		run.duration_ns = d;
		run.period_ns = 10 * MS;
		run.small_ns = 10000;
		run.samples_per_tenant = d / run.period_ns + 16;
		if (tg == 1)
			settle_daemon();
		sh = run_obs(tg, &run, what, &obs);
		if (!sh)
			continue;
		all = calloc((size_t)n * run.samples_per_tenant + 1,
			     sizeof(*all));
		if (!all)
			exit(2);
		for (uint32_t i = 0; i < n; i++) {
			size_t m;
			double *di = samples_d(sh, i, &m);

			memcpy(all + cnt, di, m * sizeof(*di));
			cnt += m;
			free(di);
		}
		r50->v[tg] = bench_median(all, cnt) / 1e3;
		r99->v[tg] = bench_quantile(all, cnt, 0.99) / 1e3;
		free(all);
		bench_shm_free(sh);
		if (tg == 1 && !obs_cpu(&obs, &sup, &wk))
			rc->v[tg] = sup + wk;
	}
	res_note(rc, "%u tenants, each a 10 us kernel + wait every 10 ms, "
		 "phases spread over the period, for %.1f s: mdgpud "
		 "supervisor + all workers, CPU time / wall time over the "
		 "last 1 s (from /proc)", n, d / 1e9);
	res_note(r50, "launch to completion, all %u tenants' samples pooled",
		 n);
}

static void bench_idle(void)
{
	const uint32_t *ns = opt.quick ? idle_quick : idle_full;
	size_t cnt = opt.quick ? 2 : 3;
	/* The CPU window is the last 1 s; --quick runs 0.2 s before it. */
	uint64_t d = opt.quick ? IDLE_WINDOW_NS + 200 * MS : 2 * SEC;

	for (size_t k = 0; k < cnt; k++)
		idle_one(ns[k]);
	for (size_t k = 0; k < cnt; k++)
		interactive_one(ns[k], d);
}

/* ---- 9. scale ------------------------------------------------------------ */

static void bench_scale(void)
{
	static const uint32_t full[] = { 1, 8, 32 }, quick[] = { 1, 8 };
	const uint32_t *ns = opt.quick ? quick : full;
	size_t cnt = opt.quick ? 2 : 3;
	uint64_t d = opt.quick ? SEC : 5 * SEC;

	for (size_t k = 0; k < cnt; k++) {
		char id[64], what[48];
		struct result *rt, *rc, *rw;

		snprintf(id, sizeof(id), "scale.%u.throughput", ns[k]);
		rt = res_add(id, "kernel/s", G_NONE, 0);
		snprintf(id, sizeof(id), "scale.%u.daemon_cpu", ns[k]);
		rc = res_add(id, "cores", ns[k] == 32 ? G_MDGPU_LE : G_NONE,
			     1.0);
		snprintf(id, sizeof(id), "scale.%u.worker_cpu", ns[k]);
		rw = res_add(id, "cores", G_NONE, 0);
		snprintf(what, sizeof(what), "scale, %u tenants", ns[k]);
		for (int tg = 0; tg < NT; tg++) {
			struct sat_out o = { 0 };

			if (saturate(tg, ns[k], NULL, d, what, &o))
				continue;
			rt->v[tg] = o.agg;
			if (tg == 1) {
				rc->v[tg] = o.cpu_sup;
				rw->v[tg] = o.cpu_workers;
			}
		}
		res_note(rc, "mdgpud supervisor process, CPU time / wall time "
			 "while all tenants saturate (from /proc)");
		res_note(rw, "all mdgpud-worker processes together");
	}
}

/* ---- output ------------------------------------------------------------- */

static void print_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fprintf(f, "null");
	else
		fprintf(f, "%.6g", v);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/*
 * "fairness": {"weights", "target_share", "bucket_ms", "duration_ms",
 * "timeline": {TARGET: [{"t_ms", "kernels": [..], "share": [..]}, ..]}};
 * t_ms is the bucket's start after the common start; share is null in a
 * bucket where no kernel finished.  Only when the fairness benchmark ran;
 * a target whose run failed has no timeline.
 */
static void write_json_fairness(FILE *f)
{
	int first = 1;

	if (!ftl.nb)
		return;
	fprintf(f, ",\n  \"fairness\": {\"weights\": [%u, %u, %u], "
		"\"target_share\": [", ftl.w[0], ftl.w[1], ftl.w[2]);
	for (int i = 0; i < 3; i++) {
		fputs(i ? ", " : "", f);
		print_num(f, ftl.w[i] / (double)(ftl.w[0] + ftl.w[1] + ftl.w[2]));
	}
	fprintf(f, "], \"bucket_ms\": %.6g, \"duration_ms\": %.6g, "
		"\"measure\": \"bench_work kernels each tenant was seen "
		"finishing in the bucket, and their share\",\n"
		"    \"timeline\": {", ftl.bucket_ns / 1e6,
		ftl.duration_ns / 1e6);
	for (int tg = 0; tg < NT; tg++) {
		if (!ftl.have[tg])
			continue;
		fprintf(f, "%s\n      \"%s\": [", first ? "" : ",",
			targets[tg]->name);
		first = 0;
		for (uint32_t b = 0; b < ftl.nb; b++) {
			const double *k = &ftl.k[tg][b * 3];
			double sum = k[0] + k[1] + k[2];

			fprintf(f, "%s\n        {\"t_ms\": %.6g, \"kernels\": "
				"[%.0f, %.0f, %.0f], \"share\": ",
				b ? "," : "", b * (ftl.bucket_ns / 1e6), k[0],
				k[1], k[2]);
			if (sum > 0) {
				fprintf(f, "[");
				for (int i = 0; i < 3; i++) {
					fputs(i ? ", " : "", f);
					print_num(f, k[i] / sum);
				}
				fprintf(f, "]}");
			} else {
				fprintf(f, "null}");
			}
		}
		fprintf(f, "\n      ]");
	}
	fprintf(f, "%s}}", first ? "" : "\n    ");
}

static int write_json(const char *path, const char *cmdline)
{
	FILE *f = fopen(path, "w");
	char goal[32], date[64];
	struct utsname u;
	time_t now = time(NULL);

	if (!f) {
		fprintf(stderr, "mdgpu-bench: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fprintf(f, "{\n  \"tool\": \"mdgpu-bench\",\n  \"format\": 1,\n");
	fprintf(f, "  \"date\": \"%s\",\n  \"host\": ", date);
	json_str(f, u.nodename);
	fprintf(f, ",\n  \"command\": ");
	json_str(f, cmdline);
	fprintf(f, ",\n  \"mode\": \"%s\",\n  \"quick\": %s,\n",
		opt.sim ? "sim" : "gpu", opt.quick ? "true" : "false");
	fprintf(f, "  \"gpu\": ");
	json_str(f, gpu.gpu);
	fprintf(f, ",\n  \"sm_count\": %u,\n", gpu.sm_count);
	fprintf(f, "  \"timeslice_us\": %u,\n", opt.timeslice_us);
	fprintf(f, "  \"depth\": %u,\n", opt.depth);
	fprintf(f, "  \"work_kernel\": {\"grid\": %u, \"block\": %u, "
		"\"iters\": %u, \"alone_us\": ", work.grid, work.block,
		work.iters);
	print_num(f, work_ns / 1e3);
	fprintf(f, "},\n  \"targets\": {");
	for (int tg = 0; tg < NT; tg++) {
		fprintf(f, "%s\"%s\": {\"on\": %s, \"why_off\": ", tg ? ", " : "",
			targets[tg]->name, target_on[tg] ? "true" : "false");
		json_str(f, target_why[tg]);
		fprintf(f, "}");
	}
	fprintf(f, "},\n  \"harness_errors\": %d,\n  \"results\": [\n",
		harness_errors);
	for (unsigned int i = 0; i < nresults; i++) {
		const struct result *r = &results[i];
		int met = res_met(r);

		fprintf(f, "    {\"id\": ");
		json_str(f, r->id);
		fprintf(f, ", \"unit\": ");
		json_str(f, r->unit);
		fprintf(f, ", \"native\": ");
		print_num(f, r->v[0]);
		fprintf(f, ", \"mdgpu\": ");
		print_num(f, r->v[1]);
		fprintf(f, ", \"ratio\": ");
		print_num(f, res_ratio(r));
		fprintf(f, ", \"goal\": ");
		json_str(f, goal_text(r, goal, sizeof(goal)));
		fprintf(f, ", \"met\": %s, \"note\": ",
			met < 0 ? "null" : met ? "true" : "false");
		json_str(f, r->note);
		fprintf(f, "}%s\n", i + 1 < nresults ? "," : "");
	}
	fprintf(f, "  ]");
	write_json_fairness(f);
	fprintf(f, "\n}\n");
	if (fclose(f))
		return -EIO;
	return 0;
}

static void print_table(void)
{
	char goal[32];

	printf("\n%-36s %-9s %12s %12s %8s  %-14s %s\n", "benchmark", "unit",
	       "native", "mdgpu", "ratio", "goal", "met");
	for (unsigned int i = 0; i < nresults; i++) {
		const struct result *r = &results[i];
		int met = res_met(r);
		char a[24], b[24], c[24];

		snprintf(a, sizeof(a), isnan(r->v[0]) ? "n/a" : "%.4g",
			 r->v[0]);
		snprintf(b, sizeof(b), isnan(r->v[1]) ? "n/a" : "%.4g",
			 r->v[1]);
		snprintf(c, sizeof(c), isnan(res_ratio(r)) ? "-" : "%.3f",
			 res_ratio(r));
		printf("%-36s %-9s %12s %12s %8s  %-14s %s\n", r->id, r->unit,
		       a, b, c, goal_text(r, goal, sizeof(goal)),
		       met < 0 ? "-" : met ? "yes" : "NO");
	}
	for (unsigned int i = 0; i < nresults; i++)
		if (results[i].note[0])
			printf("  %s: %s\n", results[i].id, results[i].note);
	{
		unsigned int met = 0, missed = 0, unmeasured = 0;

		for (unsigned int i = 0; i < nresults; i++) {
			int m = res_met(&results[i]);

			if (results[i].goal_kind == G_NONE)
				continue;
			if (m < 0)
				unmeasured++;
			else if (m)
				met++;
			else
				missed++;
		}
		printf("targets: %u met, %u missed, %u not measured\n", met,
		       missed, unmeasured);
		for (unsigned int i = 0; i < nresults; i++)
			if (results[i].goal_kind != G_NONE &&
			    res_met(&results[i]) == 0)
				printf("  missed: %s\n", results[i].id);
	}
}

/* ---- main --------------------------------------------------------------- */

static const struct {
	const char *name;
	void (*fn)(void);
} benches[] = {
	{ "sync", bench_sync_rtt },
	{ "async", bench_async },
	{ "bw", bench_bandwidth },
	{ "compute", bench_compute },
	{ "sharing", bench_sharing },
	{ "fairness", bench_fairness },
	{ "latency", bench_latency },
	{ "idle", bench_idle },
	{ "scale", bench_scale },
};

/* In a child: the parent itself must never initialise CUDA (it forks). */
static int probe_gpu(char *why, size_t len)
{
	struct {
		int ret;
		struct bench_target_info info;
		char why[256];
	} msg = { 0 };
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(fds[0]);
		msg.ret = bench_native_probe(&msg.info, msg.why,
					     sizeof(msg.why));
		n = write(fds[1], &msg, sizeof(msg));
		_exit(n == (ssize_t)sizeof(msg) ? 0 : 1);
	}
	close(fds[1]);
	n = read(fds[0], &msg, sizeof(msg));
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (n != (ssize_t)sizeof(msg)) {
		snprintf(why, len, "GPU probe process died (status 0x%x)",
			 status);
		return -ENODEV;
	}
	if (msg.ret) {
		snprintf(why, len, "%s", msg.why);
		return msg.ret;
	}
	gpu = msg.info;
	return 0;
}

/* The arithmetic the verdicts rest on, checked on known inputs. */
static int self_test(void)
{
	double odd[] = { 5, 1, 4, 2, 3 }, even[] = { 4, 1, 3, 2 };
	double hundred[100], eq[3] = { 2, 2, 2 }, one[3] = { 1, 0, 0 };
	struct result r = { .v = { 10, 12 }, .goal_kind = G_RATIO_LE,
			    .goal = 1.3 };
	int bad = 0;

	for (int i = 0; i < 100; i++)
		hundred[i] = 100 - i;	/* 100 .. 1 */
#define T(cond) do { if (!(cond)) { fprintf(stderr, "self-test: %s\n", \
					    #cond); bad++; } } while (0)
	T(bench_median(odd, 5) == 3);
	T(bench_median(even, 4) == 2.5);
	T(bench_quantile(hundred, 100, 0.99) == 99);
	T(bench_quantile(hundred, 100, 0.5) == 50.5);
	T(bench_quantile(hundred, 100, 0) == 1);
	T(isnan(bench_median(odd, 0)));
	T(fabs(bench_jain(eq, 3) - 1) < 1e-12);
	T(fabs(bench_jain(one, 3) - 1.0 / 3) < 1e-12);
	T(fabs(res_ratio(&r) - 1.2) < 1e-12 && res_met(&r) == 1);
	r.v[1] = 14;
	T(res_met(&r) == 0);
	r.v[0] = NAN;
	T(res_met(&r) == -1);
	r.goal_kind = G_MDGPU_GE;
	r.goal = 0.97;
	r.v[1] = 0.98;
	T(res_met(&r) == 1);
#undef T
	printf("self-test: %s\n", bad ? "FAILED" : "ok");
	return bad ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: mdgpu-bench [--sim] [--quick] [--json FILE] [--only LIST]\n"
"                   [--native-only | --mdgpu-only] [--mdgpud PATH]\n"
"                   [--daemon-log FILE] [--timeslice-us N] [--depth N]\n"
"  --sim           mdgpud runs its sim backend (no GPU needed); the\n"
"                  native side runs only if a GPU is found\n"
"  --quick         short runs (CI): 1 s instead of 5-10 s, fewer sizes\n"
"  --json FILE     machine-readable results (default mdgpu-bench.json)\n"
"  --only LIST     comma list of: sync,async,bw,compute,sharing,\n"
"                  fairness,latency,idle,scale\n"
"  --mdgpud PATH   daemon binary (default %s)\n"
"  --daemon-log F  the daemon's log goes to F (kept)\n"
"  --timeslice-us  daemon's timeslice_us (default 10000)\n"
"  --self-test     check the statistics and verdict arithmetic\n"
"  --depth N       kernels each saturating tenant keeps queued (both\n"
"                  sides; mdgpu: its ring size), 2..32, power of 2, default 4\n",
		BENCH_MDGPUD_DEFAULT);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "sim", no_argument, NULL, 's' },
		{ "quick", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, 'j' },
		{ "only", required_argument, NULL, 'o' },
		{ "native-only", no_argument, NULL, 'N' },
		{ "mdgpu-only", no_argument, NULL, 'M' },
		{ "mdgpud", required_argument, NULL, 'd' },
		{ "daemon-log", required_argument, NULL, 'l' },
		{ "timeslice-us", required_argument, NULL, 't' },
		{ "self-test", no_argument, NULL, 'T' },
		{ "depth", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char cmdline[1024] = "", why[256];
	int c, have_gpu, ret;

	for (int i = 0; i < argc; i++) {
		size_t used = strlen(cmdline);

		snprintf(cmdline + used, sizeof(cmdline) - used, "%s%s",
			 i ? " " : "", argv[i]);
	}
	opt.json = "mdgpu-bench.json";
	opt.mdgpud = BENCH_MDGPUD_DEFAULT;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 's': opt.sim = 1; break;
		case 'q': opt.quick = 1; break;
		case 'j': opt.json = optarg; break;
		case 'o': opt.only = optarg; break;
		case 'N': opt.native_only = 1; break;
		case 'M': opt.mdgpu_only = 1; break;
		case 'd': opt.mdgpud = optarg; break;
		case 'l': opt.daemon_log = optarg; break;
		case 't':
			opt.timeslice_us = (uint32_t)strtoul(optarg, NULL, 0);
			if (opt.timeslice_us < 500 ||
			    opt.timeslice_us > 1000000) {
				fprintf(stderr, "mdgpu-bench: --timeslice-us "
					"must be 500..1000000\n");
				return 2;
			}
			break;
		case 'T': return self_test();
		case 'D':
			opt.depth = (uint32_t)strtoul(optarg, NULL, 0);
			if (opt.depth < 2 || opt.depth > 32 ||
			    (opt.depth & (opt.depth - 1))) {
				fprintf(stderr, "mdgpu-bench: --depth must be "
					"a power of two, 2..32\n");
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || (opt.native_only && opt.mdgpu_only)) {
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Targets. */
	have_gpu = 0;
	if (probe_gpu(why, sizeof(why))) {
		if (!opt.sim) {
			printf("SKIPPED: no GPU (%s)\n", why);
			return 0;
		}
		snprintf(target_why[0], sizeof(target_why[0]), "no GPU (%s)",
			 why);
	} else {
		have_gpu = 1;
		target_on[0] = !opt.mdgpu_only;
		if (opt.mdgpu_only)
			snprintf(target_why[0], sizeof(target_why[0]),
				 "--mdgpu-only");
	}
	if (opt.native_only) {
		snprintf(target_why[1], sizeof(target_why[1]),
			 "--native-only");
	} else {
		ret = bench_daemon_start(&daemon_, opt.mdgpud,
					 opt.sim ? "sim" : "cuda",
					 opt.timeslice_us, opt.daemon_log);
		if (ret) {
			snprintf(target_why[1], sizeof(target_why[1]),
				 "mdgpud (%s) did not start: %s", opt.mdgpud,
				 strerror(-ret));
			harness_errors++;
		} else {
			target_on[1] = 1;
		}
	}
	printf("mdgpu-bench: %s; native %s; mdgpu %s\n",
	       have_gpu ? gpu.gpu : "no GPU (sim)",
	       target_on[0] ? "on" : target_why[0],
	       target_on[1] ? (opt.sim ? "on (sim backend)" :
					  "on (cuda backend)") :
			      target_why[1]);
	if (!target_on[0] && !target_on[1])
		goto out;

	if (calibrate()) {
		fprintf(stderr, "mdgpu-bench: calibration failed\n");
		harness_errors++;
		goto out;
	}
	if (!have_gpu)
		snprintf(gpu.gpu, sizeof(gpu.gpu), "mdgpu sim backend");
	/* The JSON file is rewritten after each benchmark, so a run that is
	 * cut short still leaves what it measured. */
	for (size_t b = 0; b < sizeof(benches) / sizeof(benches[0]); b++) {
		if (!selected(benches[b].name))
			continue;
		benches[b].fn();
		write_json(opt.json, cmdline);
	}
	print_table();
out:
	if (target_on[1] || daemon_.pid)
		bench_daemon_stop(&daemon_);
	if (daemon_.dir[0]) {
		char p[256];

		snprintf(p, sizeof(p), "%s/mdgpud.conf", daemon_.dir);
		unlink(p);
		if (daemon_.own_log)
			unlink(daemon_.log_path);
		unlink(bench_mdgpu_env.socket_path);
		rmdir(daemon_.dir);
	}
	if (write_json(opt.json, cmdline))
		harness_errors++;
	printf("mdgpu-bench: results in %s; %d harness error(s)\n", opt.json,
	       harness_errors);
	return harness_errors ? 1 : 0;
}
