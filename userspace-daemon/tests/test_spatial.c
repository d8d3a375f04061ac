// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Spatial sharing (Documentation/spatial.md) on the cuda backend over the
 * fake libcuda, whose kernels run as C in each worker process, so that two
 * workers really run at once (CI has no GPU, and no MPS: a fake
 * nvidia-cuda-mps-control script written here logs its start and quit):
 *
 * - mps: spatial = mps starts the control daemon (pipe and log
 *   directories under mps_dir) at create and tells it to quit at destroy.
 * - env: the workers of spatial vGPUs carry CUDA_MPS_PIPE_DIRECTORY and
 *   CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = their type's SM share; a
 *   time-sliced vGPU's worker carries no CUDA_MPS_* variable, although
 *   the daemon's own environment has one.
 * - refused: MPS that cannot start makes spatial vGPUs fail at create
 *   (-ENXIO); time-sliced ones still work.
 * - MPS client: each spatial worker's MPS_ENABLED is checked; one that is
 *   no client of the server (its control socket gone) is refused, the
 *   reason logged, while a time-sliced neighbour works.
 * - side by side: two spatial vGPUs each running SPINS x 20 ms kernels
 *   finish in less than 1.5 times one alone; two time-sliced ones take
 *   at least 1.6 times.  Each member's statistics carry its own GPU time.
 * - fault domain: a spatial vGPU's context lost to a GPU fault marks its
 *   spatial neighbour lost (-EIO) too; a time-sliced vGPU runs on.
 * - hung together: two spatial vGPUs whose kernels never end (the fake's
 *   "forever") in one group slice: the group's end finds both hung within
 *   about one hang bound (HANG_MS), not one bound per member.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "uapi/mdgpu.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

#define FAKE_TRANSPORT_OPS_ONLY
#include "fake_transport.h"

#define SPINS		5
#define SPIN_NS		20000000ULL	/* 20 ms */
/* hang_timeout_ms of test_hung_together, and the slack of its bound on
 * a loaded 2-core CI machine: two bounds one after the other (4 s) fail. */
#define HANG_MS		2000
#define HANG_SLACK_S	1.5

struct tenant {
	struct fake f;
	struct mdgpud_vgpu *v;
	uint8_t *aperture;
};

struct senv {
	struct mdgpud_core *core;
	pthread_t thread;
	bool running;
	char dir[64], sock[96], script[96], mps[96], log[128];
};

static const char fake_mps_control[] =
	"#!/bin/sh\n"
	"# A stand-in for nvidia-cuda-mps-control (test_spatial.c).\n"
	"log=\"$CUDA_MPS_LOG_DIRECTORY/fake.log\"\n"
	"if [ \"$1\" = -d ]; then\n"
	"\techo \"start $CUDA_MPS_PIPE_DIRECTORY\" >> \"$log\"\n"
	"\t: > \"$CUDA_MPS_PIPE_DIRECTORY/control\"\n"
	"\texit 0\n"
	"fi\n"
	"read cmd\n"
	"echo \"$cmd\" >> \"$log\"\n"
	"[ \"$cmd\" = quit ] && rm -f \"$CUDA_MPS_PIPE_DIRECTORY/control\"\n"
	"exit 0\n";

/* The mode of each test's directory, above mps_dir. */
static mode_t senv_dir_mode = 0755;

static void *run(void *arg)
{
	mdgpud_core_run(((struct senv *)arg)->core);
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A core on the fake driver, spatial = mps with the fake control script
 * (or `control` when not NULL), hang_timeout_ms hang_ms (0: the
 * default), cuda_device `device` with the default mps_dir (NULL: the
 * default GPU, mps_dir e->mps); not running yet. */
static struct senv *senv_new_on(const char *control, uint32_t hang_ms,
				const char *device)
{
	static int seq;
	struct senv *e = calloc(1, sizeof(*e));
	struct mdgpud_config cfg;
	FILE *f;

	assert_non_null(e);
	mdgpud_log_set(MDGPUD_LOG_ERR, NULL, NULL);
	snprintf(e->dir, sizeof(e->dir), "/tmp/mdgpud-spatial-%d-%d",
		 (int)getpid(), seq++);
	assert_int_equal(mkdir(e->dir, 0700), 0);
	assert_int_equal(chmod(e->dir, senv_dir_mode), 0);
	snprintf(e->sock, sizeof(e->sock), "%s/sock", e->dir);
	snprintf(e->script, sizeof(e->script), "%s/mps-control", e->dir);
	snprintf(e->mps, sizeof(e->mps), "%s/mps", e->dir);
	snprintf(e->log, sizeof(e->log), "%s/log/fake.log", e->mps);
	f = fopen(e->script, "w");
	assert_non_null(f);
	assert_int_equal(fputs(fake_mps_control, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(e->script, 0755), 0);

	mdgpud_config_defaults(&cfg);
	strcpy(cfg.socket_path, e->sock);
	strcpy(cfg.backend, "cuda");
	cfg.cuda_fb_reserve_mib = 1;
	cfg.ctx_overhead_mib = 0;
	fake_use_built_worker(&cfg);
	cfg.spatial = MDGPUD_SPATIAL_MPS;
	strcpy(cfg.mps_control, control ? control : e->script);
	if (device)
		assert_int_equal(mdgpud_config_set(&cfg, "cuda_device", device,
						   NULL, 0), 0);
	else
		strcpy(cfg.mps_dir, e->mps);
	if (hang_ms)
		cfg.hang_timeout_ms = hang_ms;
	assert_int_equal(mdgpud_core_create(&cfg, &e->core), 0);
	if (device) {
		/* mps_dir's default: <socket_path's directory>/mps<N>. */
		snprintf(e->mps, sizeof(e->mps), "%s/mps%d", e->dir,
			 mdgpud_core_gpu(e->core)->ordinal);
		snprintf(e->log, sizeof(e->log), "%s/log/fake.log", e->mps);
	}
	return e;
}

static struct senv *senv_new_hang(const char *control, uint32_t hang_ms)
{
	return senv_new_on(control, hang_ms, NULL);
}

static struct senv *senv_new(const char *control)
{
	return senv_new_hang(control, 0);
}

static void senv_start(struct senv *e)
{
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
	e->running = true;
}

static void senv_halt(struct senv *e)
{
	if (!e->running)
		return;
	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	e->running = false;
}

static void senv_free(struct senv *e, struct tenant *t, int n)
{
	char cmd[160];

	senv_halt(e);
	mdgpud_core_destroy(e->core);
	for (int i = 0; i < n; i++) {
		close(t[i].f.efd);
		free(t[i].aperture);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
	assert_int_equal(system(cmd), 0);
	free(e);
}

static int attach(struct senv *e, struct tenant *t, const char *type)
{
	memset(t, 0, sizeof(*t));
	/* The largest aperture of the types used here (mdgpu-types.def). */
	t->aperture = calloc(1, 16 * MIB);
	assert_non_null(t->aperture);
	return fake_attach_type(e->core, &t->f, type, t->aperture, 16 * MIB,
				-1, &t->v);
}

/* The fake script's log, whole, into buf. */
static void read_log(const struct senv *e, char *buf, size_t len)
{
	FILE *f = fopen(e->log, "r");
	size_t n = 0;

	buf[0] = 0;
	if (!f)
		return;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

static void submit_cmd(struct tenant *t, const struct mdgpu_cmd *c)
{
	fake_submit(&t->f, c);
}

static void submit_spin(struct tenant *t)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_BUILTIN;
	c.builtin.kernel = MDGPU_BUILTIN_SPIN_NS;
	c.builtin.arg[0] = SPIN_NS;
	submit_cmd(t, &c);
}

/* A SYNC, which completes once the tenant's kernels are done. */
static void submit_sync(struct tenant *t)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_SYNC;
	submit_cmd(t, &c);
}

static void wait_done(struct tenant *t)
{
	for (int k = 0; __atomic_load_n(&t->f.head, __ATOMIC_ACQUIRE) !=
			t->f.tail; k++) {
		assert_true(k < 1000000);	/* 20 s */
		usleep(20);
	}
}

/* Status of the tenant's last completed command. */
static int32_t last_status(const struct tenant *t)
{
	const struct mdgpu_cpl *cpl = (const struct mdgpu_cpl *)(t->f.ring +
		MDGPU_RING_CQ_OFFSET(ENTRIES) +
		((t->f.head - 1) % ENTRIES) * MDGPU_CPL_SIZE);

	return cpl->status;
}

/* Wall time of SPINS kernels and a SYNC on each of t[0..n), submitted
 * together. */
static uint64_t run_spins(struct tenant *t, int n)
{
	uint64_t t0 = now_ns();

	for (int i = 0; i < n; i++) {
		for (int k = 0; k < SPINS; k++)
			submit_spin(&t[i]);
		submit_sync(&t[i]);
	}
	for (int i = 0; i < n; i++) {
		wait_done(&t[i]);
		assert_int_equal(last_status(&t[i]), 0);
	}
	return now_ns() - t0;
}

/* /proc/PID/<file> of the worker serving vGPU `id` (a child of this
 * process running "mdgpud-worker serve <ordinal> <id> ..."), if one runs. */
static bool worker_file_once(uint32_t id, const char *file, char *buf,
			     size_t len, size_t *n)
{
	char path[64], cmd[512], want[16];
	bool found = false;

	snprintf(want, sizeof(want), "%u", id);
	for (int pid = 2; pid < 4194304 && !found; pid++) {
		FILE *f;
		size_t m;
		char *a;

		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		m = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		cmd[m] = 0;
		if (strcmp(cmd, "mdgpud-worker"))
			continue;
		a = cmd + strlen(cmd) + 1;		/* serve */
		if (a >= cmd + m || strcmp(a, "serve"))
			continue;
		a += strlen(a) + 1;			/* ordinal */
		if (a >= cmd + m)
			continue;
		a += strlen(a) + 1;			/* vGPU id */
		if (a >= cmd + m || strcmp(a, want))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
		f = fopen(path, "r");
		if (!f)
			continue;
		*n = fread(buf, 1, len - 1, f);
		buf[*n] = 0;
		fclose(f);
		found = true;
	}
	return found;
}

/* The same, waiting (5 s at most) for the worker: a context's start is
 * not waited for, so its worker may not have exec'd yet. */
static bool worker_file(uint32_t id, const char *file, char *buf, size_t len,
			size_t *n)
{
	for (int i = 0; i < 50; i++) {
		if (worker_file_once(id, file, buf, len, n))
			return true;
		usleep(100000);
	}
	return false;
}

static bool worker_environ(uint32_t id, char *buf, size_t len, size_t *n)
{
	return worker_file(id, "environ", buf, len, n);
}

/* The value of `name` in a NUL-separated environment, or NULL. */
static const char *env_get(const char *env, size_t n, const char *name)
{
	size_t l = strlen(name);

	for (const char *p = env; p < env + n; p += strlen(p) + 1)
		if (!strncmp(p, name, l) && p[l] == '=')
			return p + l + 1;
	return NULL;
}

static bool env_has_mps(const char *env, size_t n)
{
	for (const char *p = env; p < env + n; p += strlen(p) + 1)
		if (!strncmp(p, "CUDA_MPS_", 9))
			return true;
	return false;
}

static void test_mps_start_quit(void **state)
{
	struct senv *e = senv_new(NULL);
	char log[512], want[160];

	(void)state;
	read_log(e, log, sizeof(log));
	snprintf(want, sizeof(want), "start %s/pipe\n", e->mps);
	assert_string_equal(log, want);
	mdgpud_core_destroy(e->core);
	read_log(e, log, sizeof(log));
	snprintf(want, sizeof(want), "start %s/pipe\nquit\n", e->mps);
	assert_string_equal(log, want);
	e->core = NULL;
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
		assert_int_equal(system(cmd), 0);
	}
	free(e);
}

static void test_worker_env(void **state)
{
	struct tenant t[3];
	struct senv *e;
	char env[16384], pipe_dir[160];
	const char *v;
	size_t n;

	(void)state;
	/* The daemon's own: must not reach a time-sliced worker. */
	assert_int_equal(setenv("CUDA_MPS_PIPE_DIRECTORY", "/nowhere", 1), 0);
	e = senv_new(NULL);
	assert_int_equal(attach(e, &t[0], "quarter"), 0);
	assert_int_equal(attach(e, &t[1], "quarter"), 0);
	assert_int_equal(attach(e, &t[2], "1g"), 0);
	snprintf(pipe_dir, sizeof(pipe_dir), "%s/pipe", e->mps);

	assert_true(worker_environ(mdgpud_vgpu_id(t[0].v), env, sizeof(env),
				   &n));
	v = env_get(env, n, "CUDA_MPS_PIPE_DIRECTORY");
	assert_non_null(v);
	assert_string_equal(v, pipe_dir);
	v = env_get(env, n, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
	assert_non_null(v);
	assert_string_equal(v, "25");

	assert_true(worker_environ(mdgpud_vgpu_id(t[1].v), env, sizeof(env),
				   &n));
	v = env_get(env, n, "CUDA_MPS_PIPE_DIRECTORY");
	assert_non_null(v);
	assert_string_equal(v, pipe_dir);

	assert_true(worker_environ(mdgpud_vgpu_id(t[2].v), env, sizeof(env),
				   &n));
	assert_false(env_has_mps(env, n));
	assert_int_equal(unsetenv("CUDA_MPS_PIPE_DIRECTORY"), 0);

	/* The spatial workers run work as any other. */
	senv_start(e);
	run_spins(t, 3);
	senv_free(e, t, 3);
}

static void test_refused_without_mps(void **state)
{
	struct tenant t[2];
	struct senv *e;

	(void)state;
	e = senv_new("/nonexistent/nvidia-cuda-mps-control");
	assert_int_equal(attach(e, &t[0], "half"), -ENXIO);
	close(t[0].f.efd);
	free(t[0].aperture);
	assert_int_equal(mdgpud_core_nr_vgpus(e->core), 0);
	assert_int_equal(attach(e, &t[0], "1g"), 0);
	senv_start(e);
	run_spins(t, 1);
	senv_free(e, t, 1);
	(void)t[1];
}

/*
 * mps_dir below a directory the spatial workers' uid (one of the
 * sandbox's, not root) may not search: an MPS client there would run
 * without MPS and say nothing, so the daemon refuses spatial vGPUs (the
 * control daemon never starts) while time-sliced ones work.
 */
static void test_mps_dir_unreachable(void **state)
{
	struct tenant t[1];
	char log[64];
	struct senv *e;

	(void)state;
	senv_dir_mode = 0700;
	e = senv_new(NULL);
	senv_dir_mode = 0755;
	assert_int_equal(attach(e, &t[0], "half"), -ENXIO);
	close(t[0].f.efd);
	free(t[0].aperture);
	read_log(e, log, sizeof(log));
	assert_string_equal(log, "");
	assert_int_equal(attach(e, &t[0], "1g"), 0);
	senv_start(e);
	run_spins(t, 1);
	senv_free(e, t, 1);
}

static uint64_t gpu_ns_of(struct senv *e, const struct tenant *t)
{
	struct mdgpud_vgpu_stats s[8];
	size_t n = mdgpud_core_stats(e->core, s, 8);

	for (size_t i = 0; i < n; i++)
		if (s[i].vgpu_id == mdgpud_vgpu_id(t->v))
			return s[i].gpu_ns;
	fail_msg("vgpu not in the stats");
	return 0;
}

/* The daemon's messages of level INFO and worse, one per line. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[16384];

static void keep_log(void *data, int level, const char *fmt, va_list ap)
{
	size_t n;

	(void)data;
	if (level > MDGPUD_LOG_INFO)
		return;
	pthread_mutex_lock(&log_lock);
	n = strlen(log_text);
	if (n + 2 < sizeof(log_text)) {
		vsnprintf(log_text + n, sizeof(log_text) - n - 1, fmt, ap);
		strcat(log_text, "\n");
	}
	pthread_mutex_unlock(&log_lock);
}

static bool log_has(const char *a, const char *b)
{
	bool found = false;

	pthread_mutex_lock(&log_lock);
	for (const char *l = log_text; *l && !found;
	     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "") {
		size_t len = strcspn(l, "\n");
		const char *pa = memmem(l, len, a, strlen(a));

		found = pa && memmem(pa, len - (size_t)(pa - l), b, strlen(b));
	}
	pthread_mutex_unlock(&log_lock);
	return found;
}

/*
 * Each spatial worker is checked to be a client of the MPS server (the
 * driver's MPS_ENABLED; the fake answers 1 while the control socket of
 * its pipe directory exists): one that is not is refused, its commands
 * fail and the reason is logged; a time-sliced worker is not checked.
 */
static void test_mps_client_check(void **state)
{
	struct tenant t[2];
	char control[160], id[32];
	struct senv *e;

	(void)state;
	/* senv_new() sets the sink to stderr: the log is kept after it. */
	log_text[0] = 0;
	e = senv_new(NULL);
	mdgpud_log_set(MDGPUD_LOG_INFO, keep_log, NULL);
	assert_int_equal(attach(e, &t[0], "quarter"), 0);
	assert_int_equal(attach(e, &t[1], "1g"), 0);
	senv_start(e);
	run_spins(t, 2);
	snprintf(id, sizeof(id), "vgpu %u:", mdgpud_vgpu_id(t[0].v));
	assert_true(log_has(id, "is an MPS client, 25% of the SMs"));
	snprintf(id, sizeof(id), "vgpu %u:", mdgpud_vgpu_id(t[1].v));
	assert_false(log_has(id, "MPS client"));
	senv_free(e, t, 2);

	/* The server's control socket gone before the worker starts: the
	 * spatial worker is no client, so its context is refused (its
	 * commands fail) while a time-sliced neighbour works. */
	log_text[0] = 0;
	e = senv_new(NULL);
	mdgpud_log_set(MDGPUD_LOG_INFO, keep_log, NULL);
	snprintf(control, sizeof(control), "%s/pipe/control", e->mps);
	assert_int_equal(unlink(control), 0);
	assert_int_equal(attach(e, &t[0], "quarter"), 0);
	assert_int_equal(attach(e, &t[1], "1g"), 0);
	senv_start(e);
	submit_spin(&t[0]);
	submit_sync(&t[0]);
	wait_done(&t[0]);
	assert_int_not_equal(last_status(&t[0]), 0);
	run_spins(&t[1], 1);
	snprintf(id, sizeof(id), "vgpu %u:", mdgpud_vgpu_id(t[0].v));
	assert_true(log_has(id, "refused: its worker"));
	assert_true(log_has(id, "is not an MPS client"));
	senv_free(e, t, 2);
	mdgpud_log_set(MDGPUD_LOG_ERR, NULL, NULL);
}

static void test_side_by_side(void **state)
{
	struct tenant t[2];
	uint64_t alone, both, sliced;
	struct senv *e;

	(void)state;
	e = senv_new(NULL);
	assert_int_equal(attach(e, &t[0], "quarter"), 0);
	assert_int_equal(attach(e, &t[1], "quarter"), 0);
	senv_start(e);
	run_spins(t, 1);	/* warm-up: both learn their GPU time */
	run_spins(&t[1], 1);
	alone = run_spins(t, 1);
	both = run_spins(t, 2);
	senv_halt(e);
	/* Each member's own GPU time: t[0] ran 3 rounds of SPINS x 20 ms,
	 * t[1] 2 (the group was charged the longer of each slice's). */
	assert_true(gpu_ns_of(e, &t[0]) >= 3 * SPINS * SPIN_NS * 9 / 10);
	assert_true(gpu_ns_of(e, &t[1]) >= 2 * SPINS * SPIN_NS * 9 / 10);
	senv_free(e, t, 2);

	e = senv_new(NULL);
	assert_int_equal(attach(e, &t[0], "1g"), 0);
	assert_int_equal(attach(e, &t[1], "1g"), 0);
	senv_start(e);
	run_spins(t, 2);
	sliced = run_spins(t, 2);
	senv_free(e, t, 2);
	print_message("alone %.1f ms, two spatial %.1f ms (%.2fx), two "
		      "time-sliced %.1f ms (%.2fx)\n", alone / 1e6, both / 1e6,
		      (double)both / (double)alone, sliced / 1e6,
		      (double)sliced / (double)alone);
	assert_true(both * 2 < alone * 3);	/* < 1.5x */
	assert_true(sliced * 10 >= alone * 16);	/* >= 1.6x */
}

/* The completion of t's last command, once it is done (20 s at most). */
static struct mdgpu_cpl tcall(struct tenant *t, const struct mdgpu_cmd *c)
{
	struct mdgpu_cpl cpl;

	submit_cmd(t, c);
	wait_done(t);
	memcpy(&cpl, t->f.ring + MDGPU_RING_CQ_OFFSET(ENTRIES) +
	       ((t->f.head - 1) % ENTRIES) * MDGPU_CPL_SIZE, sizeof(cpl));
	return cpl;
}

/* The fake's kernel that never ends, loaded on t: its function handle. */
static uint32_t load_forever(struct tenant *t)
{
	static const char ptx[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .entry forever()\n{\nLOOP:\n\tbra LOOP;\n}\n";
	struct mdgpu_cmd c;
	struct mdgpu_cpl cpl;

	memcpy(t->aperture, ptx, sizeof(ptx));
	memcpy(t->aperture + 4096, "forever", 7);
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_MODULE_LOAD;
	c.module_load.len = sizeof(ptx);
	c.module_load.space = MDGPU_SPACE_APERTURE;
	c.module_load.kind = MDGPU_MODULE_PTX;
	cpl = tcall(t, &c);
	assert_int_equal(cpl.status, 0);
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_FUNC_GET;
	c.func_get.module = (uint32_t)cpl.result;
	c.func_get.name_addr = 4096;
	c.func_get.name_len = 7;
	c.func_get.name_space = MDGPU_SPACE_APERTURE;
	cpl = tcall(t, &c);
	assert_int_equal(cpl.status, 0);
	return (uint32_t)cpl.result;
}

static uint64_t hangs_of(struct senv *e, const struct tenant *t)
{
	struct mdgpud_vgpu_stats s[8];
	size_t n = mdgpud_core_stats(e->core, s, 8);

	for (size_t i = 0; i < n; i++)
		if (s[i].vgpu_id == mdgpud_vgpu_id(t->v))
			return s[i].hangs;
	fail_msg("vgpu not in the stats");
	return 0;
}

/*
 * Two spatial members launch an endless kernel each and synchronize, all
 * in one group slice (queued while the dispatcher is stopped): the
 * group's end drains both at once, their bounds run together, and both
 * SYNCs fail -ETIMEDOUT about one bound after the start, not two.
 */
static void test_hung_together(void **state)
{
	struct tenant t[2];
	struct mdgpu_cmd c;
	struct senv *e;
	uint64_t t0;
	uint32_t fn[2];
	double secs;

	(void)state;
	e = senv_new_hang(NULL, HANG_MS);
	assert_int_equal(attach(e, &t[0], "quarter"), 0);
	assert_int_equal(attach(e, &t[1], "quarter"), 0);
	senv_start(e);
	for (int i = 0; i < 2; i++)
		fn[i] = load_forever(&t[i]);
	senv_halt(e);
	for (int i = 0; i < 2; i++) {
		memset(&c, 0, sizeof(c));
		c.opcode = MDGPU_OP_LAUNCH;
		c.launch.func = fn[i];
		for (int k = 0; k < 3; k++)
			c.launch.grid[k] = c.launch.block[k] = 1;
		submit_cmd(&t[i], &c);
		submit_sync(&t[i]);
	}
	t0 = now_ns();
	senv_start(e);
	for (int i = 0; i < 2; i++)
		wait_done(&t[i]);
	secs = (double)(now_ns() - t0) * 1e-9;
	print_message("two spatial members hung: both SYNCs %d %d after "
		      "%.3f s (hang bound %u ms)\n", last_status(&t[0]),
		      last_status(&t[1]), secs, HANG_MS);
	assert_int_equal(last_status(&t[0]), -ETIMEDOUT);
	assert_int_equal(last_status(&t[1]), -ETIMEDOUT);
	assert_int_equal(hangs_of(e, &t[0]), 1);
	assert_int_equal(hangs_of(e, &t[1]), 1);
	assert_true(secs >= HANG_MS * 1e-3);
	assert_true(secs < HANG_MS * 1e-3 + HANG_SLACK_S);
	senv_free(e, t, 2);
}

/*
 * cuda_device by PCI bus id, on three fake GPUs: what derives from the
 * GPU follows the one the probe found (ordinal 1, 0000:41:00.0), not the
 * config's text: mps_dir's default <socket dir>/mps1 is where the control
 * daemon runs, every worker, spatial or not, is given ordinal 1 and runs
 * as a uid of the block of PCI bus 0x41 (worker_uid_base = auto).
 */
static void test_selected_gpu(void **state)
{
	const uint32_t base = MDGPUD_WORKER_UID_AUTO_BASE +
			      0x41 * 32 * MDGPUD_WORKER_UID_AUTO_STEP;
	const struct mdgpud_gpu_info *gpu;
	char log[512], want[160], buf[4096];
	struct tenant t[2];
	struct senv *e;
	unsigned int uid;
	size_t n;

	(void)state;
	if (getenv("MDGPUD_TEST_REAL_CUDA"))
		skip();
	assert_int_equal(setenv("MDGPUD_FAKE_CUDA_DEVICES",
				"0000:01:00.0,0000:41:00.0,0000:c1:00.0", 1),
			 0);
	e = senv_new_on(NULL, 0, "41:00.0");
	gpu = mdgpud_core_gpu(e->core);
	assert_int_equal(gpu->ordinal, 1);
	assert_string_equal(gpu->bus_id, "0000:41:00.0");
	assert_string_equal(gpu->uuid,
			    "GPU-facecda0-0000-4000-8000-000000000001");
	read_log(e, log, sizeof(log));
	snprintf(want, sizeof(want), "start %s/mps1/pipe\n", e->dir);
	assert_string_equal(log, want);
	assert_int_equal(attach(e, &t[0], "quarter"), 0);
	assert_int_equal(attach(e, &t[1], "1g"), 0);
	for (int i = 0; i < 2; i++) {
		uint32_t id = mdgpud_vgpu_id(t[i].v);
		const char *a;

		/* "mdgpud-worker\0serve\0<ordinal>\0..." */
		assert_true(worker_file(id, "cmdline", buf, sizeof(buf), &n));
		a = buf + strlen(buf) + 1;
		a += strlen(a) + 1;
		assert_string_equal(a, "1");
		assert_true(worker_file(id, "status", buf, sizeof(buf), &n));
		assert_non_null(strstr(buf, "\nUid:\t"));
		assert_int_equal(sscanf(strstr(buf, "\nUid:\t") + 6, "%u",
					&uid), 1);
		assert_in_range(uid, base,
				base + MDGPUD_WORKER_UID_AUTO_STEP - 1);
	}
	senv_start(e);
	run_spins(t, 2);
	senv_free(e, t, 2);
	unsetenv("MDGPUD_FAKE_CUDA_DEVICES");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mps_start_quit),
		cmocka_unit_test(test_worker_env),
		cmocka_unit_test(test_refused_without_mps),
		cmocka_unit_test(test_mps_dir_unreachable),
		cmocka_unit_test(test_mps_client_check),
		cmocka_unit_test(test_side_by_side),
		cmocka_unit_test(test_hung_together),
		cmocka_unit_test(test_selected_gpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
