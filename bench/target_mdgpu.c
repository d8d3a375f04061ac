// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpu target: one vGPU per tenant, reached through libmdgpu's socket
 * transport to the mdgpud that the benchmark started.
 *
 * Kernels: the benchmark's own PTX (kernels/bench.ptx), loaded with
 * mdgpu_module_load, so native and mdgpu run the same code.  A backend
 * that cannot run PTX (sim: -EOPNOTSUPP) gets the builtin SPIN_NS instead,
 * for as long as the kernel took natively (bench_work.ns_hint).
 *
 * Weights: every tenant opens a vGPU of type 1g (default weight 1); a
 * tenant of another weight sets it through mdgpud's admin socket
 * ("set <vgpu_id> weight <w>", Documentation/mdgpuctl.md), the knob an
 * administrator uses for socket tenants, before it starts measuring.
 *
 * Fences: libmdgpu has no asynchronous fence (mdgpu_synchronize waits
 * for everything).  A saturating tenant opens its vGPU with a ring of
 * as many entries as it queues kernels (cfg->depth, --depth, default 4)
 * instead (every other tenant keeps the daemon's default ring, so that
 * async launches queue as deep as on a CUDA stream): a submit returns
 * only once tail - head <= entries, so after submitting command n, the
 * daemon has consumed command n - entries.  fence() returns the command count;
 * fence_wait() of a token that old returns at once, anything newer is a
 * full mdgpu_synchronize().  The saturating loop waits exactly that far
 * back.  Caveat, from mdgpud's dispatcher (core.c): a LAUNCH's completion
 * is published once the launch is handed to the worker, not when the
 * kernel ends; the dispatcher waits for the GPU at each slice end
 * (slice_end).  So a timestamp may lead the kernel's real end by at most
 * the work queued in the current slice (one timeslice).  The benchmark
 * therefore takes one-tenant throughput from the drained total (exact)
 * and counts at a common deadline only where tenants share the GPU,
 * where that lead is at most one slice of one tenant out of the whole
 * window (documented in Documentation/benchmarks.md).
 *
 * Pinned copies: mdgpu_host_alloc() hands out zero-copy host memory
 * carved from the aperture (the vGPU is opened with opts.host_bytes =
 * what the tenant will ask for); a copy whose host side lies in it is one
 * command without staging.  Pageable copies are plain malloc() memory,
 * which libmdgpu stages through the aperture in chunks.
 */
#include "target.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* libcuda's CU_CTX_SCHED_AUTO (libcuda/priv.h MDGPU_CU_SPIN_*). */
#define BENCH_MDGPU_AUTO_SPIN_CPUS	8
#define BENCH_MDGPU_AUTO_SPIN_US	1000000u

#include "mdgpu/mdgpu.h"
#include "uapi/mdgpu.h"

#define BENCH_MDGPU_HOST_SLACK	(2U << 20)

struct bench_mdgpu_env bench_mdgpu_env;

struct bench_tenant {
	struct mdgpu *g;
	struct mdgpu_info info;
	int have_ptx;			/* 0: builtins only (sim) */
	uint32_t module, f_empty, f_work, f_spin;
	mdgpu_devptr sink;
	uint64_t submitted;		/* commands that may occupy the ring */
	uint32_t ring;			/* entries */
	char type[8];
};

/* One admin request; 0 when answered "ok", else -EIO (answer printed). */
static int md_admin(const char *req)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[1024];
	size_t used = 0;
	int fd, ret = -EIO;

	if (strlen(bench_mdgpu_env.admin_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, bench_mdgpu_env.admin_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		ret = -errno;
		fprintf(stderr, "mdgpu-bench: admin socket %s: %s\n",
			sa.sun_path, strerror(errno));
		close(fd);
		return ret;
	}
	/* Data lines, then exactly one final line: "ok" or "err ...". */
	for (;;) {
		char *line, *nl;
		ssize_t n;

		if (used >= sizeof(buf) - 1)
			used = 0;	/* a data line too long: drop it */
		n = read(fd, buf + used, sizeof(buf) - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
		buf[used] = '\0';
		for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			if (!strcmp(line, "ok")) {
				ret = 0;
				goto out;
			}
			if (!strncmp(line, "err ", 4)) {
				fprintf(stderr, "mdgpu-bench: admin: %s-> %s\n",
					req, line);
				goto out;
			}
		}
		used = strlen(line);
		memmove(buf, line, used);
	}
out:
	close(fd);
	return ret;
}

static int mdgpu_err(struct bench_tenant *t, int ret, const char *what)
{
	if (ret)
		fprintf(stderr, "mdgpu-bench: mdgpu: %s: %s (%s)\n", what,
			mdgpu_strerror(ret), t->g ? mdgpu_last_error(t->g) : "");
	return ret;
}

static void md_close(struct bench_tenant *t)
{
	if (!t)
		return;
	if (t->g) {
		mdgpu_synchronize(t->g);
		if (t->sink)
			mdgpu_mem_free(t->g, t->sink);
		if (t->module)
			mdgpu_module_unload(t->g, t->module);
		mdgpu_close(t->g);
	}
	free(t);
}

/* Sets one of the tenant's vGPU knobs through the admin socket. */
static int md_admin_knob(struct bench_tenant *t, const char *knob,
			 uint32_t value)
{
	char req[64];

	snprintf(req, sizeof(req), "set %u %s %u\n", t->info.vgpu_id, knob,
		 value);
	return md_admin(req);
}

/*
 * A latency-sensitive tenant waits as the native one does under the
 * driver's default scheduling flag (CU_CTX_SCHED_AUTO): as a CUDA
 * program through mdgpu's libcuda.so.1 would (libcuda/init.c,
 * mdgpu_cu_apply_sched): spinning up to 1 s on a machine of 8 or more
 * CPUs, else libmdgpu's default.  Otherwise a wait longer than
 * libmdgpu's default 1 ms spin (a tenant queued behind another's
 * kernels) sleeps, and the wake-up's tail (milliseconds on a VM) is
 * measured instead of the scheduler.  Saturating tenants keep
 * libmdgpu's default (spin 1 ms, then sleep).  MDGPU_SPIN_US, when set,
 * wins, as in libmdgpu and libcuda.
 */
static int md_wait_policy(struct bench_tenant *t,
			  const struct bench_tenant_cfg *cfg)
{
	if (!cfg->latency || getenv("MDGPU_SPIN_US") ||
	    sysconf(_SC_NPROCESSORS_ONLN) < BENCH_MDGPU_AUTO_SPIN_CPUS)
		return 0;
	return mdgpu_err(t, mdgpu_set_spin_us(t->g, BENCH_MDGPU_AUTO_SPIN_US),
			 "set_spin_us");
}

static int md_open(const struct bench_tenant_cfg *cfg,
		   struct bench_tenant **out)
{
	struct mdgpu_open_opts opts = { 0 };
	struct bench_tenant *t;
	int ret;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	snprintf(t->type, sizeof(t->type), "1g");
	opts.transport = "socket";
	opts.path = bench_mdgpu_env.socket_path;
	opts.type = t->type;
	/* Saturating tenants: a `depth` ring (fences, above); any other
	 * tenant: 0, the daemon's default (ring_entries, 256). */
	opts.ring_entries = cfg->depth;
	/* Room for the buffer plus the library's alignment. */
	opts.host_bytes = cfg->pinned_bytes ?
			  cfg->pinned_bytes + BENCH_MDGPU_HOST_SLACK : 0;
	ret = mdgpu_open(&opts, &t->g);
	if (ret) {
		fprintf(stderr, "mdgpu-bench: mdgpu: open %s (type %s): %s\n",
			opts.path, t->type, mdgpu_strerror(ret));
		t->g = NULL;
		md_close(t);
		return ret;
	}
	ret = mdgpu_err(t, mdgpu_get_info(t->g, &t->info), "get_info");
	if (ret)
		goto fail;
	t->ring = t->info.ring_entries;
	ret = md_wait_policy(t, cfg);
	if (ret)
		goto fail;
	if (cfg->weight != 1)
		ret = md_admin_knob(t, "weight", cfg->weight);
	if (!ret && cfg->priority)
		ret = md_admin_knob(t, "priority", cfg->priority);
	if (ret)
		goto fail;
	ret = mdgpu_err(t, mdgpu_mem_alloc(t->g, 4096 * sizeof(float),
					   &t->sink), "mem_alloc(sink)");
	if (ret)
		goto fail;
	ret = mdgpu_module_load(t->g, MDGPU_MODULE_PTX, bench_ptx,
				strlen(bench_ptx) + 1, &t->module);
	if (ret == -EOPNOTSUPP) {
		t->module = 0;
		*out = t;
		return 0;
	}
	ret = mdgpu_err(t, ret, "module_load(bench.ptx)");
	if (!ret)
		ret = mdgpu_err(t, mdgpu_func_get(t->g, t->module, BENCH_K_EMPTY,
						  &t->f_empty), BENCH_K_EMPTY);
	if (!ret)
		ret = mdgpu_err(t, mdgpu_func_get(t->g, t->module, BENCH_K_WORK,
						  &t->f_work), BENCH_K_WORK);
	if (!ret)
		ret = mdgpu_err(t, mdgpu_func_get(t->g, t->module, BENCH_K_SPIN,
						  &t->f_spin), BENCH_K_SPIN);
	if (ret)
		goto fail;
	t->have_ptx = 1;
	*out = t;
	return 0;
fail:
	md_close(t);
	return ret;
}

static int md_info(struct bench_tenant *t, struct bench_target_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->gpu, sizeof(info->gpu), "mdgpu %s vGPU (%s backend)",
		 t->type, t->info.backend == MDGPU_BACKEND_SIM ? "sim" : "cuda");
	info->sm_count = t->info.sm_count;
	info->id = t->info.vgpu_id;
	return 0;
}

static int md_mem_alloc(struct bench_tenant *t, uint64_t size, uint64_t *addr)
{
	return mdgpu_err(t, mdgpu_mem_alloc(t->g, size, addr), "mem_alloc");
}

static int md_mem_free(struct bench_tenant *t, uint64_t addr)
{
	return mdgpu_err(t, mdgpu_mem_free(t->g, addr), "mem_free");
}

static void *md_host_alloc(struct bench_tenant *t, size_t size, int pinned)
{
	void *p = NULL;

	if (pinned) {
		if (mdgpu_err(t, mdgpu_host_alloc(t->g, size, &p),
			      "host_alloc"))
			return NULL;
	} else {
		p = malloc(size);
	}
	if (p)
		memset(p, 0x5a, size);
	return p;
}

static void md_host_free(struct bench_tenant *t, void *p, size_t size,
			 int pinned)
{
	(void)size;
	if (pinned)
		mdgpu_host_free(t->g, p);
	else
		free(p);
}

/* libmdgpu's copies are synchronous (they wait for their completion). */
static int md_copy_h2d(struct bench_tenant *t, uint64_t dst, const void *src,
		       size_t len)
{
	return mdgpu_err(t, mdgpu_copy_htod(t->g, dst, src, len), "copy_htod");
}

static int md_copy_d2h(struct bench_tenant *t, void *dst, uint64_t src,
		       size_t len)
{
	return mdgpu_err(t, mdgpu_copy_dtoh(t->g, dst, src, len), "copy_dtoh");
}

static int md_launch(struct bench_tenant *t, uint32_t func,
		     const uint32_t grid[3], const uint32_t block[3],
		     const void *params, uint32_t len)
{
	int ret = mdgpu_launch(t->g, func, grid, block, 0, params, len);

	if (!ret)
		t->submitted++;
	return mdgpu_err(t, ret, "launch");
}

static int md_spin(struct bench_tenant *t, uint64_t ns)
{
	int ret = mdgpu_spin_ns(t->g, ns);

	if (!ret)
		t->submitted++;
	return mdgpu_err(t, ret, "spin_ns");
}

static int md_launch_empty(struct bench_tenant *t)
{
	static const uint32_t one[3] = { 1, 1, 1 };

	if (!t->have_ptx)
		return md_spin(t, 0);
	return md_launch(t, t->f_empty, one, one, NULL, 0);
}

static int md_launch_work(struct bench_tenant *t, const struct bench_work *w)
{
	uint32_t grid[3] = { w->grid, 1, 1 }, block[3] = { w->block, 1, 1 };
	/* bench_work(u32 iters, float *sink): natural alignment, 16 bytes. */
	uint8_t params[16] = { 0 };

	if (!t->have_ptx)
		return md_spin(t, w->ns_hint);
	memcpy(params, &w->iters, sizeof(w->iters));
	memcpy(params + 8, &t->sink, sizeof(t->sink));
	return md_launch(t, t->f_work, grid, block, params, sizeof(params));
}

static int md_launch_spin(struct bench_tenant *t, uint64_t ns)
{
	static const uint32_t one[3] = { 1, 1, 1 };

	if (!t->have_ptx)
		return md_spin(t, ns);
	return md_launch(t, t->f_spin, one, one, &ns, sizeof(ns));
}

static int md_fence(struct bench_tenant *t, uint64_t *token)
{
	*token = t->submitted;
	return 0;
}

static int md_fence_wait(struct bench_tenant *t, uint64_t token)
{
	if (token + t->ring <= t->submitted)
		return 0;	/* the ring's back-pressure: consumed */
	return mdgpu_err(t, mdgpu_synchronize(t->g), "synchronize");
}

static int md_sync(struct bench_tenant *t)
{
	return mdgpu_err(t, mdgpu_synchronize(t->g), "synchronize");
}

static int md_nop(struct bench_tenant *t)
{
	uint64_t v;

	return mdgpu_err(t, mdgpu_query(t->g, MDGPU_QUERY_ABI_VERSION, &v),
			 "query");
}

const struct bench_target_ops bench_target_mdgpu = {
	.name = "mdgpu",
	.open = md_open,
	.close = md_close,
	.info = md_info,
	.mem_alloc = md_mem_alloc,
	.mem_free = md_mem_free,
	.host_alloc = md_host_alloc,
	.host_free = md_host_free,
	.copy_h2d = md_copy_h2d,
	.copy_d2h = md_copy_d2h,
	.launch_empty = md_launch_empty,
	.launch_work = md_launch_work,
	.launch_spin = md_launch_spin,
	.fence = md_fence,
	.fence_wait = md_fence_wait,
	.sync = md_sync,
	.nop = md_nop,
};
