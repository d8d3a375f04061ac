// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The worker's handle table (backends/cuda/worker/handles.c): stale,
 * forged and other tables' handles rejected, a module's functions removed
 * with it, a full table left unchanged by a failed insertion, iteration.
 *
 * Then FUNC_GET repeated 10^5 times against real mdgpud-worker processes
 * on the fake libcuda (build/cuda-fake): through the daemon after the
 * vGPU's handle table is full (-ENOSPC each time, the worker not even
 * asked), and 10^4 straight through the backend (the same handle each
 * time): either way the worker's table and memory stay where they were.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "handles.h"
#include "mdgpud/backend.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"
#include "uapi/mdgpu.h"
#include "../backends/cuda/cuda_backend.h"

static int obj[8];

static void test_stale_forged(void **state)
{
	struct mdgpud_worker_handles t, u;
	uint64_t h, h2, hu;
	void *o;

	(void)state;
	mdgpud_worker_handles_init(&t, 1, MDGPUD_WORKER_HANDLES_MAX);
	mdgpud_worker_handles_init(&u, 2, MDGPUD_WORKER_HANDLES_MAX);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[0], 0, &h), 0);
	assert_int_equal(mdgpud_worker_handles_insert(&u, &obj[0], 0, &hu), 0);
	assert_true(h != 0 && hu != 0 && h != hu);
	assert_int_equal(mdgpud_worker_handles_get(&t, h, &o), 0);
	assert_ptr_equal(o, &obj[0]);
	/* Another table's handle, forged ones. */
	assert_int_equal(mdgpud_worker_handles_get(&t, hu, &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, 0, &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, h + 1, &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, h + (1ull << 32), &o),
			 -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, (uintptr_t)&obj[0],
						   &o), -ENOENT);
	/* Removed: stale, even once its slot holds another object. */
	assert_int_equal(mdgpud_worker_handles_remove(&t, h, &o), 0);
	assert_int_equal(mdgpud_worker_handles_remove(&t, h, &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[1], 0, &h2),
			 0);
	assert_true((uint32_t)h2 == (uint32_t)h && h2 != h);
	assert_int_equal(mdgpud_worker_handles_get(&t, h, &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, h2, &o), 0);
	assert_ptr_equal(o, &obj[1]);
	mdgpud_worker_handles_fini(&t);
	mdgpud_worker_handles_fini(&u);
}

static void test_children_find(void **state)
{
	struct mdgpud_worker_handles t;
	uint64_t f[3], h;
	uint32_t cursor = 0;
	void *o;
	int n = 0;

	(void)state;
	mdgpud_worker_handles_init(&t, 2, MDGPUD_WORKER_HANDLES_MAX);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[0], 11, &f[0]),
			 0);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[1], 12, &f[1]),
			 0);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[2], 11, &f[2]),
			 0);
	assert_int_equal(mdgpud_worker_handles_find(&t, &obj[2], 11, &h), 0);
	assert_true(h == f[2]);
	assert_int_equal(mdgpud_worker_handles_find(&t, &obj[2], 12, &h),
			 -ENOENT);
	mdgpud_worker_handles_remove_children(&t, 11);
	assert_int_equal(mdgpud_worker_handles_get(&t, f[0], &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, f[2], &o), -ENOENT);
	assert_int_equal(mdgpud_worker_handles_get(&t, f[1], &o), 0);
	while (!mdgpud_worker_handles_next(&t, &cursor, &o)) {
		assert_ptr_equal(o, &obj[1]);
		n++;
	}
	assert_int_equal(n, 1);
	assert_int_equal(t.count, 1);
	mdgpud_worker_handles_fini(&t);
}

/* A full table answers -ENOMEM and neither grows nor changes. */
static void test_full(void **state)
{
	struct mdgpud_worker_handles t;
	uint64_t h[5];
	void *o;

	(void)state;
	mdgpud_worker_handles_init(&t, 3, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[i], 0,
							      &h[i]), 0);
	h[4] = 0;
	for (int k = 0; k < 100; k++)
		assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[4], 0,
							      &h[4]), -ENOMEM);
	assert_true(h[4] == 0);
	assert_int_equal(t.nr_slots, 4);
	assert_int_equal(t.count, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(mdgpud_worker_handles_get(&t, h[i], &o), 0);
		assert_ptr_equal(o, &obj[i]);
	}
	/* Room again after a removal. */
	assert_int_equal(mdgpud_worker_handles_remove(&t, h[1], NULL), 0);
	assert_int_equal(mdgpud_worker_handles_insert(&t, &obj[4], 0, &h[4]),
			 0);
	assert_int_equal(t.nr_slots, 4);
	mdgpud_worker_handles_fini(&t);
	assert_int_equal(t.nr_slots, 0);
	assert_int_equal(mdgpud_worker_handles_get(&t, h[0], &o), -ENOENT);
}

/* ---------------------------------------------------------------- */
/* FUNC_GET against workers on the fake libcuda                       */

#define NR_FUNC_GETS	100000
/* Through the worker each FUNC_GET is one synchronous round trip (tens
 * to hundreds of us on a loaded CI machine): fewer of them. */
#define NR_WORKER_FUNC_GETS	10000
/* RSS growth allowed over NR_FUNC_GETS: one handle slot per call would
 * be 300 KiB at 10^4 (32-byte slots); noise stays well under this. */
#define RSS_SLACK_KIB	128

/* One kernel the fake libcuda knows (tests/test_cuda_fake/libcuda.c). */
static const char scale_add_ptx[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	".visible .entry scale_add(.param .u64 p_ptr, .param .u64 p_n,\n"
	"                          .param .u32 p_k)\n"
	"{\n"
	"\tret;\n"
	"}\n";

static char worker_path[PATH_MAX];

/* The built worker and the fake libcuda next to it, for the workers. */
static int fake_setup(void **state)
{
	char self[PATH_MAX], dir[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	(void)state;
	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(worker_path, sizeof(worker_path), "%.*s/../../mdgpud-worker",
		 PATH_MAX - 64, self);
	snprintf(dir, sizeof(dir), "%s/../../cuda-fake", self);
	if (access(worker_path, X_OK) || access(dir, R_OK)) {
		fprintf(stderr, "%s or %s missing\n", worker_path, dir);
		return -1;
	}
	mdgpud_log_set(MDGPUD_LOG_WARN, NULL, NULL);
	return setenv("LD_LIBRARY_PATH", dir, 1);
}

/* The process's own memory (heap, stack): shared memory mapped from the
 * supervisor (ring, aperture) is not the worker growing. */
static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* The one mdgpud-worker child of this process that serves a vGPU. */
static pid_t find_worker(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = -1;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], buf[512], *p;
		int ppid;
		FILE *f;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		if (!p || !strstr(buf, "(mdgpud-worker)"))
			continue;
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 &&
		    ppid == (int)getpid())
			found = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return found;
}

static double secs_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void *core_main(void *arg)
{
	mdgpud_core_run(arg);
	return NULL;
}

/* A socket client spoken raw (uapi section 4), to submit in batches. */
struct raw {
	int fd, fds[MDGPU_SOCK_NR_FDS];
	struct mdgpu_sock_welcome w;
	uint8_t *map, *ap;
	struct mdgpu_sock_ctrl *ctrl;
	struct mdgpu_cmd *sq;
	struct mdgpu_cpl *cq;
	uint32_t tail;
};

static void raw_open(struct raw *r, const char *path, uint32_t entries)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct mdgpu_sock_hello h = {
		.magic = MDGPU_SOCK_MAGIC, .abi_version = MDGPU_ABI_VERSION,
		.type = "1g", .ring_entries = entries,
	};
	union {
		char buf[CMSG_SPACE(sizeof(int) * MDGPU_SOCK_NR_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &r->w, sizeof(r->w) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;

	memset(r, 0, sizeof(*r));
	r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	strcpy(sa.sun_path, path);
	assert_int_equal(connect(r->fd, (struct sockaddr *)&sa, sizeof(sa)),
			 0);
	assert_int_equal(send(r->fd, &h, sizeof(h), MSG_NOSIGNAL), sizeof(h));
	assert_int_equal(recvmsg(r->fd, &msg, MSG_WAITALL), sizeof(r->w));
	assert_int_equal(r->w.status, 0);
	cm = CMSG_FIRSTHDR(&msg);
	assert_non_null(cm);
	memcpy(r->fds, CMSG_DATA(cm), sizeof(r->fds));
	r->map = mmap(NULL, r->w.ring_size, PROT_READ | PROT_WRITE,
		      MAP_SHARED, r->fds[MDGPU_SOCK_FD_RING], 0);
	r->ap = mmap(NULL, r->w.aperture_size, PROT_READ | PROT_WRITE,
		     MAP_SHARED, r->fds[MDGPU_SOCK_FD_APERTURE], 0);
	assert_true(r->map != MAP_FAILED && r->ap != MAP_FAILED);
	r->ctrl = (struct mdgpu_sock_ctrl *)r->map;
	r->sq = (struct mdgpu_cmd *)(r->map + r->w.ring_offset);
	r->cq = (struct mdgpu_cpl *)(r->map + r->w.ring_offset +
				     MDGPU_RING_CQ_OFFSET(r->w.ring_entries));
}

static void raw_close(struct raw *r)
{
	munmap(r->map, r->w.ring_size);
	munmap(r->ap, r->w.aperture_size);
	for (int i = 0; i < MDGPU_SOCK_NR_FDS; i++)
		close(r->fds[i]);
	close(r->fd);
}

/*
 * Submits n copies of c (n <= entries), rings, waits for all of them;
 * returns how many completed with `status`, *result the last result.
 */
static uint32_t raw_batch(struct raw *r, const struct mdgpu_cmd *c,
			  uint32_t n, int status, uint64_t *result)
{
	uint32_t mask = r->w.ring_entries - 1, first = r->tail, hits = 0;
	uint64_t one = 1;

	for (uint32_t i = 0; i < n; i++)
		r->sq[(first + i) & mask] = *c;
	r->tail += n;
	__atomic_store_n(&r->ctrl->sq_tail, r->tail, __ATOMIC_SEQ_CST);
	assert_int_equal(write(r->fds[MDGPU_SOCK_FD_DOORBELL], &one, 8), 8);
	for (int spin = 0; __atomic_load_n(&r->ctrl->sq_head,
					   __ATOMIC_ACQUIRE) != r->tail;
	     spin++) {
		assert_true(spin < 2000000);	/* 20 s at most */
		if (spin > 100)
			usleep(10);
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct mdgpu_cpl *cpl = &r->cq[(first + i) & mask];

		hits += cpl->status == status;
		if (result)
			*result = cpl->result;
	}
	return hits;
}

/*
 * The daemon on the cuda backend (fake) with max_handles = 8: a module
 * and 7 functions fill the vGPU's table; then 10^5 FUNC_GETs (submitted
 * 256 at a time) all fail -ENOSPC in the daemon, before the worker is
 * asked, and the worker's anonymous memory does not grow; after a
 * MODULE_UNLOAD (which frees the 8 handles) FUNC_GET works again.
 */
static void test_func_get_after_enospc(void **state)
{
	struct mdgpud_config cfg;
	struct mdgpud_core *core;
	struct mdgpu_cmd load = { .opcode = MDGPU_OP_MODULE_LOAD };
	struct mdgpu_cmd get = { .opcode = MDGPU_OP_FUNC_GET };
	struct mdgpu_cmd unload = { .opcode = MDGPU_OP_MODULE_UNLOAD };
	struct timespec t0;
	struct raw r;
	pthread_t th;
	char path[96];
	uint64_t mod;
	long rss0, rss1;
	uint32_t enospc = 0;
	pid_t wpid;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/mdgpud-wh-%d.sock", (int)getpid());
	mdgpud_config_defaults(&cfg);
	strcpy(cfg.socket_path, path);
	strcpy(cfg.backend, "cuda");
	assert_true(strlen(worker_path) < sizeof(cfg.cuda_worker));
	memcpy(cfg.cuda_worker, worker_path, strlen(worker_path) + 1);
	cfg.cuda_fb_reserve_mib = 1;
	cfg.ctx_overhead_mib = 0;
	cfg.max_handles = 8;
	cfg.log_level = MDGPUD_LOG_WARN;
	assert_int_equal(mdgpud_core_create(&cfg, &core), 0);
	assert_int_equal(pthread_create(&th, NULL, core_main, core), 0);
	raw_open(&r, path, 256);

	memcpy(r.ap, scale_add_ptx, sizeof(scale_add_ptx) - 1);
	memcpy(r.ap + 4096, "scale_add", 9);
	load.module_load.addr = 0;
	load.module_load.len = sizeof(scale_add_ptx) - 1;
	load.module_load.space = MDGPU_SPACE_APERTURE;
	load.module_load.kind = MDGPU_MODULE_PTX;
	assert_int_equal(raw_batch(&r, &load, 1, 0, &mod), 1);
	get.func_get.name_addr = 4096;
	get.func_get.name_len = 9;
	get.func_get.name_space = MDGPU_SPACE_APERTURE;
	get.func_get.module = (uint32_t)mod;
	assert_int_equal(raw_batch(&r, &get, 7, 0, NULL), 7);
	assert_int_equal(raw_batch(&r, &get, 1, -ENOSPC, NULL), 1);

	wpid = find_worker();
	assert_true(wpid > 0);
	rss0 = rss_kib(wpid);
	assert_true(rss0 > 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t done = 0; done < NR_FUNC_GETS; done += 250)
		enospc += raw_batch(&r, &get, 250, -ENOSPC, NULL);
	rss1 = rss_kib(wpid);
	fprintf(stderr, "%d FUNC_GETs after ENOSPC in %.2f s; worker "
		"RssAnon %ld -> %ld KiB\n", NR_FUNC_GETS, secs_since(&t0),
		rss0, rss1);
	assert_int_equal(enospc, NR_FUNC_GETS);
	assert_true(rss1 - rss0 < RSS_SLACK_KIB);

	/* The table drains with its module; FUNC_GET works again. */
	unload.module_unload.module = (uint32_t)mod;
	assert_int_equal(raw_batch(&r, &unload, 1, 0, NULL), 1);
	assert_int_equal(raw_batch(&r, &load, 1, 0, &mod), 1);
	get.func_get.module = (uint32_t)mod;
	assert_int_equal(raw_batch(&r, &get, 1, 0, NULL), 1);
	raw_close(&r);
	mdgpud_core_stop(core);
	pthread_join(th, NULL);
	mdgpud_core_destroy(core);
}

/*
 * Straight through the backend, as if the daemon's check were not there:
 * 10^4 FUNC_GETs of one name answer the same handle and the worker's RSS
 * does not grow (a function is stored once per module); another name
 * gets another handle.
 */
static void test_func_get_repeat_worker(void **state)
{
	const struct mdgpud_backend_ops *ops = &mdgpud_backend_cuda;
	struct mdgpud_backend_cfg bcfg = { 0 };
	struct mdgpud_backend *be;
	struct mdgpud_gpu_info info;
	struct mdgpud_bctx *ctx;
	struct timespec t0;
	uint64_t mod, fn0, fn;
	long rss0, rss1;
	pid_t wpid;
	int same = 0;

	(void)state;
	bcfg.worker_path = worker_path;
	bcfg.fb_reserve = 1 << 20;
	bcfg.hang_timeout_ms = 5000;
	assert_int_equal(ops->open(&bcfg, &be, &info), 0);
	assert_int_equal(ops->ctx_create(be, 1, &ctx), 0);
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX, scale_add_ptx,
					  sizeof(scale_add_ptx) - 1, &mod), 0);
	assert_int_equal(ops->func_get(ctx, mod, "scale_add", &fn0, NULL), 0);
	wpid = mdgpud_backend_cuda_worker_pid(ctx);
	assert_true(wpid > 0);
	rss0 = rss_kib(wpid);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < NR_WORKER_FUNC_GETS; i++) {
		assert_int_equal(ops->func_get(ctx, mod, "scale_add", &fn,
					       NULL), 0);
		same += fn == fn0;
	}
	rss1 = rss_kib(wpid);
	fprintf(stderr, "%d FUNC_GETs through the worker in %.2f s; worker "
		"RssAnon %ld -> %ld KiB\n", NR_WORKER_FUNC_GETS, secs_since(&t0), rss0,
		rss1);
	assert_int_equal(same, NR_WORKER_FUNC_GETS);
	assert_true(rss1 - rss0 < RSS_SLACK_KIB);
	assert_int_equal(ops->func_get(ctx, mod, "no_such", &fn, NULL),
			 -ENOENT);
	ops->ctx_destroy(ctx);
	ops->close(be);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_forged),
		cmocka_unit_test(test_children_find),
		cmocka_unit_test(test_full),
		cmocka_unit_test_setup(test_func_get_after_enospc, fake_setup),
		cmocka_unit_test_setup(test_func_get_repeat_worker,
				       fake_setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
