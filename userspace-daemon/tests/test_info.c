// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The ABI 1.2 introspection commands executed by a running core, through
 * fake rings (tests/fake_transport.h), on the sim backend and on the cuda
 * backend over the CI fake libcuda (tests/test_cuda_fake/): DEVICE_INFO
 * (contents, short buffers, IOVA, a UUID per vGPU), CTX_LIMIT (charges,
 * -ENOMEM, -EPERM, reset), QUERY APERTURE_DEVPTR, and on cuda FUNC_INFO of
 * a PTX kernel, a launch packed from FUNC_INFO, MODULE_GLOBAL, FUNC_SET_ATTR,
 * OCCUPANCY, a faulting kernel and the charge of a kernel's local memory;
 * ABI 1.3's MODULE_LOAD from device memory with the driver's CUresult in
 * result2 of a refused load; and ABI 1.5's MODULE_FUNCS (on sim: no
 * module to name).
 */
#include <errno.h>
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
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "uapi/mdgpu.h"
#include "mdgpud/admin.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

#define FAKE_TRANSPORT_OPS_ONLY
#include "fake_transport.h"

#define AP_SIZE		(8 * MIB)
/* A stack size whose charge fits a 1g quota on both backends' SM counts. */
#define STACK		4096
#define NR_VGPUS	2

struct env {
	struct mdgpud_core *core;
	pthread_t thread;
	bool cuda;
	struct fake f[NR_VGPUS];
	uint8_t *ap[NR_VGPUS];
	int ap_fd[NR_VGPUS];
	struct mdgpud_vgpu *v[NR_VGPUS];
	char path[96];
};

static void *run(void *arg)
{
	mdgpud_core_run(((struct env *)arg)->core);
	return NULL;
}

/* The worker and the fake libcuda, next to this test in the build tree. */
static int cuda_paths(struct mdgpud_config *cfg)
{
	char self[PATH_MAX], dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(cfg->cuda_worker, sizeof(cfg->cuda_worker),
		 "%.200s/../../mdgpud-worker", self);
	snprintf(dir, sizeof(dir), "%.200s/../../cuda-fake", self);
	if (access(cfg->cuda_worker, X_OK) || access(dir, R_OK))
		return -1;
	return setenv("LD_LIBRARY_PATH", dir, 1);
}

/* vGPU i: a fake ring and a shared (memfd) aperture, so that the cuda
 * backend maps it into the worker. */
static void attach(struct env *e, int i)
{
	struct mdgpud_vgpu_params p = { 0 };
	struct fake *f = &e->f[i];

	f->guest = calloc(1, GUEST_SIZE);
	f->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	e->ap_fd[i] = memfd_create("test-info-aperture", MFD_CLOEXEC);
	assert_true(e->ap_fd[i] >= 0);
	assert_int_equal(ftruncate(e->ap_fd[i], AP_SIZE), 0);
	e->ap[i] = mmap(NULL, AP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			e->ap_fd[i], 0);
	assert_true(e->ap[i] != MAP_FAILED);
	assert_int_equal(mdgpud_core_watch(e->core, f->efd, f_doorbell_event,
					   f), 0);
	p.type_name = "1g";
	p.ring_entries = ENTRIES;
	p.ring = f->ring;
	p.aperture = e->ap[i];
	p.aperture_size = AP_SIZE;
	p.aperture_fd = e->ap_fd[i];
	p.tops = &fake_tops;
	p.tpriv = f;
	assert_int_equal(mdgpud_vgpu_create(e->core, &p, &e->v[i]), 0);
}

static int setup_backend(void **state, bool cuda)
{
	struct env *e = calloc(1, sizeof(*e));
	struct mdgpud_config cfg;

	mdgpud_log_set(MDGPUD_LOG_ERR, NULL, NULL);
	snprintf(e->path, sizeof(e->path), "/tmp/mdgpud-info-%d.sock",
		 (int)getpid());
	mdgpud_config_defaults(&cfg);
	strcpy(cfg.socket_path, e->path);
	cfg.sim_fb_mib = 4096;
	cfg.sim_sm_count = 8;
	cfg.dma_bounce_kib = 256;
	e->cuda = cuda;
	if (cuda) {
		strcpy(cfg.backend, "cuda");
		cfg.cuda_fb_reserve_mib = 1;	/* 0 is the default */
		/* Two 1g vGPUs in the fake's 3 GiB: its contexts cost
		 * nothing (as test_core_hang). */
		cfg.ctx_overhead_mib = 0;
		if (cuda_paths(&cfg)) {
			fprintf(stderr, "mdgpud-worker or cuda-fake missing\n");
			return -1;
		}
	}
	assert_int_equal(mdgpud_core_create(&cfg, &e->core), 0);
	for (int i = 0; i < NR_VGPUS; i++)
		attach(e, i);
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
	*state = e;
	return 0;
}

static int setup_sim(void **state)
{
	return setup_backend(state, false);
}

static int setup_cuda(void **state)
{
	return setup_backend(state, true);
}

static int teardown(void **state)
{
	struct env *e = *state;

	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	mdgpud_core_destroy(e->core);
	for (int i = 0; i < NR_VGPUS; i++) {
		close(e->f[i].efd);
		free(e->f[i].guest);
		munmap(e->ap[i], AP_SIZE);
		close(e->ap_fd[i]);
	}
	free(e);
	return 0;
}

/* Submits c on vGPU i and waits for its completion. */
static struct mdgpu_cpl call(struct env *e, int i, const struct mdgpu_cmd *c)
{
	struct fake *f = &e->f[i];
	uint32_t n = f->tail;
	uint64_t one = 1;
	struct mdgpu_cpl cpl;

	memcpy(f->ring + (n % ENTRIES) * MDGPU_CMD_SIZE, c, sizeof(*c));
	__atomic_store_n(&f->tail, n + 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&f->sleeping, __ATOMIC_SEQ_CST))
		assert_int_equal(write(f->efd, &one, sizeof(one)), 8);
	for (int k = 0; k < 500000 &&
	     __atomic_load_n(&f->head, __ATOMIC_ACQUIRE) != n + 1; k++)
		usleep(10);
	assert_int_equal(f->head, n + 1);
	memcpy(&cpl, f->ring + MDGPU_RING_CQ_OFFSET(ENTRIES) +
	       (n % ENTRIES) * MDGPU_CPL_SIZE, sizeof(cpl));
	assert_int_equal(cpl.seq, n);
	return cpl;
}

static struct mdgpu_cmd cmd(uint16_t op)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = op;
	return c;
}

/* A command that must succeed; its result. */
static uint64_t ok(struct env *e, int i, const struct mdgpu_cmd *c)
{
	struct mdgpu_cpl cpl = call(e, i, c);

	if (cpl.status)
		fail_msg("opcode %u: status %d", c->opcode, cpl.status);
	return cpl.result;
}

static uint64_t fb_used(struct env *e, int i)
{
	struct mdgpu_cmd c = cmd(MDGPU_OP_QUERY);

	c.query.what = MDGPU_QUERY_FB_USED;
	return ok(e, i, &c);
}

/* vGPU 0's STACK_SIZE limit as its context has it now. */
static uint64_t stack_limit(struct env *e)
{
	struct mdgpu_cmd c = cmd(MDGPU_OP_CTX_LIMIT);

	c.limit.limit = 0;
	return ok(e, 0, &c);
}

/* Resets vGPU 0, the dispatcher stopped meanwhile; its ring starts over. */
static void reset_vgpu0(struct env *e)
{
	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	mdgpud_vgpu_reset(e->v[0]);
	e->f[0].tail = e->f[0].head = 0;
	e->f[0].fence = 0;
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
}

static void test_device_info(void **state)
{
	struct env *e = *state;
	const struct mdgpud_gpu_info *gpu = mdgpud_core_gpu(e->core);
	struct mdgpu_cmd c = cmd(MDGPU_OP_DEVICE_INFO);
	struct mdgpu_device_info d[2], g;

	c.info.addr = 4096;
	c.info.len = sizeof(d[0]);
	c.info.space = MDGPU_SPACE_APERTURE;
	for (int i = 0; i < NR_VGPUS; i++) {
		assert_int_equal(ok(e, i, &c), sizeof(d[0]));
		memcpy(&d[i], e->ap[i] + 4096, sizeof(d[i]));
		assert_int_equal(d[i].size, sizeof(d[i]));
		assert_true(d[i].nr_attrs > 76 &&
			    d[i].nr_attrs <= MDGPU_DEV_ATTR_MAX);
		assert_int_equal(d[i].attr[16], (int32_t)gpu->sm_count);
		assert_int_equal(d[i].attr[10], 32);	/* warp */
		assert_int_equal(d[i].attr[1], 1024);	/* threads/block */
		assert_int_equal(d[i].attr[75], 9);	/* compute 9.0 */
		assert_int_equal(d[i].attr[76], 0);
		assert_int_equal(d[i].driver_version, 13000);
		assert_int_equal(d[i].uuid[6] >> 4, 4);	/* version 4 */
		assert_int_equal(d[i].uuid[8] & 0xc0, 0x80);
		assert_non_null(memchr(d[i].name, 0, sizeof(d[i].name)));
	}
	if (e->cuda) {
		assert_string_equal(d[0].name, "mdgpu fake CUDA device");
		assert_int_equal(d[0].gpu_mem_total, 4ULL << 30);
		assert_int_equal(d[0].attr[200], MDGPU_ATTR_NONE);
	} else {
		assert_string_equal(d[0].name, "mdgpu sim");
		assert_int_equal(d[0].gpu_mem_total, 4096ULL << 20);
		assert_int_equal(d[0].attr[200], MDGPU_ATTR_NONE);
	}
	/* One UUID per vGPU; the rest is the physical GPU's. */
	assert_memory_not_equal(d[0].uuid, d[1].uuid, 16);
	assert_memory_equal(d[0].name, d[1].name, sizeof(d[0].name));
	assert_memory_equal(d[0].attr, d[1].attr, sizeof(d[0].attr));

	/* A short buffer: len bytes written, the full size answered. */
	memset(e->ap[0] + 8192, 0xa5, 64);
	c.info.addr = 8192;
	c.info.len = 10;
	assert_int_equal(ok(e, 0, &c), sizeof(d[0]));
	assert_memory_equal(e->ap[0] + 8192, &d[0], 10);
	assert_int_equal(e->ap[0][8192 + 10], 0xa5);

	/* Guest memory by IOVA, the same answer. */
	c.info.addr = 0x10000;
	c.info.len = MDGPU_INFO_MAX;
	c.info.space = MDGPU_SPACE_IOVA;
	assert_int_equal(ok(e, 0, &c), sizeof(d[0]));
	memcpy(&g, e->f[0].guest + 0x10000, sizeof(g));
	assert_memory_equal(&g, &d[0], sizeof(g));
	c.info.addr = GUEST_SIZE - 8;		/* not mapped by the guest */
	c.info.len = 16;
	assert_int_equal(call(e, 0, &c).status, -EFAULT);
}

/*
 * Stops the dispatcher and creates a third vGPU with the given UUID on
 * transport ops tops, its ring and "guest memory" in f, its aperture vGPU
 * 1's; the caller destroys it and starts the dispatcher again.
 */
static struct mdgpud_vgpu *add_uuid_vgpu(struct env *e, struct fake *f,
					 const struct mdgpud_vgpu_tops *tops,
					 const uint8_t *uuid)
{
	struct mdgpud_vgpu_params p = { 0 };
	struct mdgpud_vgpu *v;

	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	p.type_name = "1g";
	p.ring_entries = ENTRIES;
	p.ring = f->ring;
	p.aperture = e->ap[1];
	p.aperture_size = AP_SIZE;
	p.aperture_fd = -1;
	p.tops = tops;
	p.tpriv = f;
	p.uuid = uuid;
	assert_int_equal(mdgpud_vgpu_create(e->core, &p, &v), 0);
	return v;
}

/* The weight in force of vGPU id, as the core's statistics say. */
static uint32_t vgpu_weight(struct env *e, uint32_t id)
{
	struct mdgpud_vgpu_stats st[NR_VGPUS + 1];
	size_t n = mdgpud_core_stats(e->core, st, NR_VGPUS + 1);

	for (size_t i = 0; i < n; i++)
		if (st[i].vgpu_id == id)
			return st[i].weight;
	fail_msg("vgpu %u is not in the statistics", id);
	return 0;
}

/* The kernel transport's UUID is the mdev's, given at creation. */
static void test_given_uuid(void **state)
{
	struct env *e = *state;
	static const uint8_t uuid[16] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc,
					  0xde, 0xf0, 0x0f, 0xed, 0xcb, 0xa9,
					  0x87, 0x65, 0x43, 0x21 };
	struct mdgpu_cmd c = cmd(MDGPU_OP_DEVICE_INFO);
	struct fake f = { 0 };
	struct mdgpud_vgpu *v = add_uuid_vgpu(e, &f, &fake_tops, uuid);
	struct mdgpu_device_info d;

	f.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	f.guest = calloc(1, GUEST_SIZE);
	assert_int_equal(mdgpud_core_watch(e->core, f.efd, f_doorbell_event,
					   &f), 0);
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
	c.info.addr = 0;
	c.info.len = sizeof(d);
	c.info.space = MDGPU_SPACE_IOVA;
	memcpy(f.ring, &c, sizeof(c));
	__atomic_store_n(&f.tail, 1, __ATOMIC_SEQ_CST);
	{
		uint64_t one = 1;

		assert_int_equal(write(f.efd, &one, sizeof(one)), 8);
	}
	for (int k = 0; k < 500000 &&
	     __atomic_load_n(&f.head, __ATOMIC_ACQUIRE) != 1; k++)
		usleep(10);
	assert_int_equal(f.head, 1);
	memcpy(&d, f.guest, sizeof(d));
	assert_memory_equal(d.uuid, uuid, 16);
	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	mdgpud_core_unwatch(e->core, f.efd);
	mdgpud_vgpu_destroy(v);
	close(f.efd);
	free(f.guest);
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
}

/*
 * A vGPU whose transport says its knobs are set elsewhere (the kernel
 * transport: the mdev's sysfs files) refuses the admin socket's `set`,
 * naming the mdev and where to set it; the knobs stay as they were.
 * Another transport's vGPU beside it still takes `set`.
 */
static void test_knobs_owner(void **state)
{
	struct env *e = *state;
	static const uint8_t uuid[16] = { 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6,
					  0x07, 0x18, 0x29, 0x3a, 0x4b, 0x5c,
					  0x6d, 0x7e, 0x8f, 0x90 };
	struct mdgpud_vgpu_tops sysfs_tops = fake_tops;
	struct mdgpud_vgpu *v;
	struct fake f = { 0 };
	char line[64], *out = NULL;
	size_t len = 0, cap = 0;
	uint32_t w0;

	sysfs_tops.knobs_owner = "sysfs";
	v = add_uuid_vgpu(e, &f, &sysfs_tops, uuid);
	w0 = vgpu_weight(e, mdgpud_vgpu_id(v));
	assert_true(w0 >= MDGPU_WEIGHT_MIN && w0 != 7);

	snprintf(line, sizeof(line), "set %u weight 7", mdgpud_vgpu_id(v));
	assert_int_equal(mdgpud_admin_exec(e->core, line, true, &out, &len,
					   &cap), -EOPNOTSUPP);
	assert_non_null(strstr(out, "err EOPNOTSUPP "));
	assert_non_null(strstr(out, "mdev a1b2c3d4-e5f6-0718-293a-4b5c6d7e8f90"
				    ": its knobs are set in sysfs (mdgpuctl set"
				    " a1b2c3d4-e5f6-0718-293a-4b5c6d7e8f90"
				    " weight 7)"));
	assert_int_equal(vgpu_weight(e, mdgpud_vgpu_id(v)), w0);

	/* The fake transport's own vGPU keeps the admin socket's set. */
	free(out);
	out = NULL;
	len = cap = 0;
	snprintf(line, sizeof(line), "set %u weight 7",
		 mdgpud_vgpu_id(e->v[0]));
	assert_int_equal(mdgpud_admin_exec(e->core, line, true, &out, &len,
					   &cap), 0);
	assert_int_equal(vgpu_weight(e, mdgpud_vgpu_id(e->v[0])), 7);
	free(out);

	mdgpud_vgpu_destroy(v);
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
}

static void test_limits(void **state)
{
	struct env *e = *state;
	const struct mdgpud_gpu_info *gpu = mdgpud_core_gpu(e->core);
	uint64_t per_byte = (uint64_t)gpu->dev.attr[16] * gpu->dev.attr[39];
	struct mdgpu_cmd c = cmd(MDGPU_OP_CTX_LIMIT);
	uint64_t used0 = fb_used(e, 0), used1 = fb_used(e, 1);

	c.limit.limit = 0;			/* STACK_SIZE */
	assert_int_equal(ok(e, 0, &c), 1024);
	c.limit.set = 1;
	c.limit.value = STACK;
	assert_int_equal(ok(e, 0, &c), STACK);
	assert_int_equal(fb_used(e, 0) - used0, ((STACK) - 1024) * per_byte);
	assert_int_equal(fb_used(e, 1), used1);	/* the neighbour's own */
	c.limit.set = 0;
	c.limit.value = 0;
	assert_int_equal(ok(e, 0, &c), STACK);
	/* Past the quota: refused, nothing changed. */
	c.limit.set = 1;
	c.limit.value = 1ULL << 40;
	assert_int_equal(call(e, 0, &c).status, -ENOMEM);
	c.limit.value = UINT64_MAX;		/* its charge overflows */
	assert_int_equal(call(e, 0, &c).status, -ENOMEM);
	assert_int_equal(fb_used(e, 0) - used0, ((STACK) - 1024) * per_byte);
	c.limit.set = 0;
	c.limit.value = 0;
	assert_int_equal(ok(e, 0, &c), STACK);
	/* The heap: charged its growth, replaced by each set. */
	c.limit.limit = 2;
	c.limit.set = 1;
	c.limit.value = 72 << 20;
	assert_int_equal(ok(e, 0, &c), 72 << 20);
	assert_int_equal(fb_used(e, 0) - used0,
			 ((STACK) - 1024) * per_byte + (64 << 20));
	c.limit.value = 16 << 20;
	ok(e, 0, &c);
	assert_int_equal(fb_used(e, 0) - used0,
			 ((STACK) - 1024) * per_byte + (8 << 20));
	c.limit.limit = 6;			/* persisting L2 */
	assert_int_equal(call(e, 0, &c).status, -EPERM);
	c.limit.limit = 4;			/* device runtime */
	assert_int_equal(call(e, 0, &c).status, -EOPNOTSUPP);
	c.limit.limit = 42;
	assert_int_equal(call(e, 0, &c).status, -EINVAL);

	/* A reset puts the defaults back and frees the charges. */
	reset_vgpu0(e);
	assert_int_equal(fb_used(e, 0), used0);
	c.limit.limit = 0;
	c.limit.set = 0;
	c.limit.value = 0;
	assert_int_equal(ok(e, 0, &c), 1024);
	c.limit.limit = 2;
	assert_int_equal(ok(e, 0, &c), 8 << 20);
}

static void test_aperture_devptr(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_QUERY);
	struct mdgpu_cpl cpl;

	c.query.what = MDGPU_QUERY_APERTURE_DEVPTR;
	cpl = call(e, 0, &c);
	assert_int_equal(cpl.status, 0);
	if (e->cuda) {
		/* The fake maps host memory at its own (worker) address. */
		assert_true(cpl.result != 0);
		assert_int_equal(cpl.result2, AP_SIZE);
	} else {
		assert_int_equal(cpl.result, 0);
		assert_int_equal(cpl.result2, 0);
	}
}

static void test_sim_has_no_functions(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_MODULE_LOAD);

	strcpy((char *)e->ap[0], ".entry k() { ret; }");
	c.module_load.len = strlen((char *)e->ap[0]) + 1;
	c.module_load.space = MDGPU_SPACE_APERTURE;
	c.module_load.kind = MDGPU_MODULE_PTX;
	assert_int_equal(call(e, 0, &c).status, -EOPNOTSUPP);
	c = cmd(MDGPU_OP_FUNC_INFO);
	c.info.len = 136;
	c.info.space = MDGPU_SPACE_APERTURE;
	c.info.handle = 1;
	assert_int_equal(call(e, 0, &c).status, -ENOENT);
	c = cmd(MDGPU_OP_MODULE_FUNCS);		/* no module to name */
	c.info.len = 64;
	c.info.space = MDGPU_SPACE_APERTURE;
	c.info.handle = 1;
	assert_int_equal(call(e, 0, &c).status, -ENOENT);
}

/* ---- cuda backend over the fake libcuda --------------------------------- */

static const char test_ptx[] =
	"// the uapi's example layout, and the fake's named kernels\n"
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .global .align 4 .b8 gdata[64];\n"
	".visible .global .u32 counter = 7;\n"
	".visible .entry k(.param .u64 a, .param .u32 b,\n"
	"	.param .align 16 .b8 c[24], .param .f64 d)\n{\n\tret;\n}\n"
	".visible .entry vadd_f32(.param .u64 .ptr .global .align 4 x,\n"
	"	.param .u64 .ptr .global .align 4 y,\n"
	"	.param .u64 .ptr .global .align 4 z, .param .u32 n)\n"
	"{\n\tret;\n}\n"
	".visible .entry write_global(.param .u32 v)\n{\n\tret;\n}\n"
	".visible .entry illegal_address()\n{\n\tret;\n}\n";

static uint32_t load_module(struct env *e)
{
	struct mdgpu_cmd c = cmd(MDGPU_OP_MODULE_LOAD);

	memcpy(e->ap[0], test_ptx, sizeof(test_ptx));
	c.module_load.len = sizeof(test_ptx);
	c.module_load.space = MDGPU_SPACE_APERTURE;
	c.module_load.kind = MDGPU_MODULE_PTX;
	return (uint32_t)ok(e, 0, &c);
}

/* A name in the aperture at 1 MiB, for FUNC_GET and MODULE_GLOBAL. */
static uint32_t named(struct env *e, uint16_t op, uint32_t module,
		      const char *name, struct mdgpu_cpl *out)
{
	struct mdgpu_cmd c = cmd(op);
	struct mdgpu_cpl cpl;

	memcpy(e->ap[0] + MIB, name, strlen(name));
	c.func_get.name_addr = MIB;
	c.func_get.name_len = (uint32_t)strlen(name);
	c.func_get.name_space = MDGPU_SPACE_APERTURE;
	c.func_get.module = module;
	cpl = call(e, 0, &c);
	assert_int_equal(cpl.status, 0);
	if (out)
		*out = cpl;
	return (uint32_t)cpl.result;
}

static struct mdgpu_func_info *func_info(struct env *e, uint32_t func)
{
	struct mdgpu_cmd c = cmd(MDGPU_OP_FUNC_INFO);
	uint64_t size;

	c.info.addr = 2 * MIB;
	c.info.len = MDGPU_INFO_MAX;
	c.info.space = MDGPU_SPACE_APERTURE;
	c.info.handle = func;
	size = ok(e, 0, &c);
	assert_true(size >= sizeof(struct mdgpu_func_info));
	return (struct mdgpu_func_info *)(e->ap[0] + 2 * MIB);
}

static void test_func_info_launch(void **state)
{
	struct env *e = *state;
	static const uint32_t layout[4][2] = { {0, 8}, {8, 4}, {16, 24},
					       {40, 8} };
	uint32_t mod = load_module(e), k, vadd;
	struct mdgpu_func_info *fi;
	struct mdgpu_cmd c;
	uint64_t a, b, z, addr[3];
	float *h;
	uint8_t *pb;
	uint32_t n = 1000;

	k = named(e, MDGPU_OP_FUNC_GET, mod, "k", NULL);
	fi = func_info(e, k);
	assert_int_equal(fi->size, sizeof(*fi) + 4 * sizeof(fi->param[0]));
	assert_int_equal(fi->nr_params, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(fi->param[i].offset, layout[i][0]);
		assert_int_equal(fi->param[i].size, layout[i][1]);
	}
	assert_int_equal(fi->attr[0], 1024);	/* MAX_THREADS_PER_BLOCK */
	assert_int_equal(fi->attr[5], 80);	/* PTX_VERSION */
	assert_int_equal(fi->attr[16], MDGPU_ATTR_NONE);

	/* A short buffer holds the head; result says how much there is. */
	c = cmd(MDGPU_OP_FUNC_INFO);
	c.info.addr = 3 * MIB;
	c.info.len = 8;
	c.info.space = MDGPU_SPACE_APERTURE;
	c.info.handle = k;
	assert_int_equal(ok(e, 0, &c), sizeof(*fi) + 32);
	assert_int_equal(((uint32_t *)(e->ap[0] + 3 * MIB))[1], 4);

	/* vadd_f32 through the ring, its parameters packed from FUNC_INFO. */
	vadd = named(e, MDGPU_OP_FUNC_GET, mod, "vadd_f32", NULL);
	fi = func_info(e, vadd);
	assert_int_equal(fi->nr_params, 4);
	for (int i = 0; i < 3; i++) {
		c = cmd(MDGPU_OP_MEM_ALLOC);
		c.alloc.size = n * sizeof(float);
		addr[i] = ok(e, 0, &c);
	}
	a = addr[0];
	b = addr[1];
	z = addr[2];
	h = (float *)(e->ap[0] + 4 * MIB);
	for (uint32_t i = 0; i < 2 * n; i++)
		h[i] = (float)i * 0.5f;
	for (int i = 0; i < 2; i++) {
		c = cmd(MDGPU_OP_COPY);
		c.copy.src = 4 * MIB + (uint64_t)i * n * sizeof(float);
		c.copy.src_space = MDGPU_SPACE_APERTURE;
		c.copy.dst = addr[i];
		c.copy.dst_space = MDGPU_SPACE_DEVICE;
		c.copy.len = n * sizeof(float);
		ok(e, 0, &c);
	}
	pb = e->ap[0] + 5 * MIB;
	memset(pb, 0, 64);
	memcpy(pb + fi->param[0].offset, &a, fi->param[0].size);
	memcpy(pb + fi->param[1].offset, &b, fi->param[1].size);
	memcpy(pb + fi->param[2].offset, &z, fi->param[2].size);
	memcpy(pb + fi->param[3].offset, &n, fi->param[3].size);
	c = cmd(MDGPU_OP_LAUNCH);
	c.launch.func = vadd;
	c.launch.grid[0] = (n + 255) / 256;
	c.launch.grid[1] = c.launch.grid[2] = 1;
	c.launch.block[0] = 256;
	c.launch.block[1] = c.launch.block[2] = 1;
	c.launch.params_addr = 5 * MIB;
	c.launch.params_len = fi->param[3].offset + fi->param[3].size;
	c.launch.params_space = MDGPU_SPACE_APERTURE;
	ok(e, 0, &c);
	ok(e, 0, &(struct mdgpu_cmd){ .opcode = MDGPU_OP_SYNC });
	c = cmd(MDGPU_OP_COPY);
	c.copy.src = z;
	c.copy.src_space = MDGPU_SPACE_DEVICE;
	c.copy.dst = 6 * MIB;
	c.copy.dst_space = MDGPU_SPACE_APERTURE;
	c.copy.len = n * sizeof(float);
	ok(e, 0, &c);
	h = (float *)(e->ap[0] + 6 * MIB);
	for (uint32_t i = 0; i < n; i++)
		assert_true(h[i] == (float)i * 0.5f + (float)(n + i) * 0.5f);
}

/* A module of vGPU 0 from PTX text (in its aperture at 0): its handle. */
static uint32_t load_ptx(struct env *e, const char *ptx)
{
	struct mdgpu_cmd c = cmd(MDGPU_OP_MODULE_LOAD);

	memcpy(e->ap[0], ptx, strlen(ptx) + 1);
	c.module_load.len = strlen(ptx) + 1;
	c.module_load.space = MDGPU_SPACE_APERTURE;
	c.module_load.kind = MDGPU_MODULE_PTX;
	return (uint32_t)ok(e, 0, &c);
}

/* MODULE_FUNCS c on vGPU 0 into dst, whose first 256 bytes are filled
 * with 0xa5 first: it answers the whole list's size and count. */
static void list_funcs(struct env *e, const struct mdgpu_cmd *c,
		       uint8_t *dst, uint64_t size, uint64_t count)
{
	struct mdgpu_cpl cpl;

	memset(dst, 0xa5, 256);
	cpl = call(e, 0, c);
	assert_int_equal(cpl.status, 0);
	assert_int_equal(cpl.result, size);
	assert_int_equal(cpl.result2, count);
}

/*
 * MODULE_FUNCS (ABI 1.5) through the ring: test_ptx's kernels in the
 * order the fake lists them (declaration order), into the aperture and by
 * IOVA, whole names only; the full size and count whatever the buffer.
 */
static void test_module_funcs(void **state)
{
	static const char list[] =
		"k\0vadd_f32\0write_global\0illegal_address";
	struct env *e = *state;
	uint32_t mod = load_module(e), none, gone;
	struct mdgpu_cmd c = cmd(MDGPU_OP_MODULE_FUNCS);
	uint8_t *out = e->ap[0] + 2 * MIB, *g = e->f[0].guest + 0x20000;
	uint64_t dmas;

	c.info.addr = 2 * MIB;
	c.info.len = 256;
	c.info.space = MDGPU_SPACE_APERTURE;
	c.info.handle = mod;
	list_funcs(e, &c, out, sizeof(list), 4);
	assert_memory_equal(out, list, sizeof(list));
	assert_int_equal(out[sizeof(list)], 0xa5);

	/* Room for two names and part of the third: two. */
	c.info.len = 20;
	list_funcs(e, &c, out, sizeof(list), 4);
	assert_memory_equal(out, list, 11);	/* "k", "vadd_f32" */
	assert_int_equal(out[11], 0xa5);
	assert_int_equal(out[19], 0xa5);
	/* No room for the first: nothing written. */
	c.info.len = 1;
	list_funcs(e, &c, out, sizeof(list), 4);
	assert_int_equal(out[0], 0xa5);

	/* Guest memory by IOVA, with a buffer larger than DEVICE_INFO's
	 * bound; none of it is touched when nothing fits. */
	c.info.addr = 0x20000;
	c.info.len = 4 * MDGPU_INFO_MAX;
	c.info.space = MDGPU_SPACE_IOVA;
	list_funcs(e, &c, g, sizeof(list), 4);
	assert_memory_equal(g, list, sizeof(list));
	assert_int_equal(g[sizeof(list)], 0xa5);
	c.info.len = 1;
	dmas = e->f[0].dma_calls;
	list_funcs(e, &c, g, sizeof(list), 4);
	assert_int_equal(e->f[0].dma_calls, dmas);
	assert_int_equal(g[0], 0xa5);
	c.info.addr = GUEST_SIZE - 8;		/* not mapped by the guest */
	c.info.len = 64;
	assert_int_equal(call(e, 0, &c).status, -EFAULT);

	/* Another vGPU's module, the wrong kind of handle. */
	c.info.addr = 2 * MIB;
	c.info.space = MDGPU_SPACE_APERTURE;
	assert_int_equal(call(e, 1, &c).status, -ENOENT);
	c.info.handle = named(e, MDGPU_OP_FUNC_GET, mod, "k", NULL);
	assert_int_equal(call(e, 0, &c).status, -ENOENT);

	/* A module without kernels (a global only): an empty list. */
	none = load_ptx(e, ".version 8.0\n.target sm_90\n"
			".address_size 64\n.visible .global .u32 g;\n");
	c.info.handle = none;
	c.info.len = 64;
	list_funcs(e, &c, out, 0, 0);
	assert_int_equal(out[0], 0xa5);

	/* An unloaded module is gone. */
	gone = load_module(e);
	c = cmd(MDGPU_OP_MODULE_UNLOAD);
	c.module_unload.module = gone;
	ok(e, 0, &c);
	c = cmd(MDGPU_OP_MODULE_FUNCS);
	c.info.addr = 2 * MIB;
	c.info.len = 64;
	c.info.space = MDGPU_SPACE_APERTURE;
	c.info.handle = gone;
	assert_int_equal(call(e, 0, &c).status, -ENOENT);
	c.info.handle = mod;
	assert_int_equal(ok(e, 0, &c), sizeof(list));
}

static void test_module_global(void **state)
{
	struct env *e = *state;
	uint32_t mod = load_module(e), wg;
	uint64_t used = fb_used(e, 0), g;
	struct mdgpu_cpl cpl, again;
	struct mdgpu_cmd c;
	uint32_t *h = (uint32_t *)(e->ap[0] + 4 * MIB);

	named(e, MDGPU_OP_MODULE_GLOBAL, mod, "gdata", &cpl);
	g = cpl.result;
	assert_true(g != 0);
	assert_int_equal(cpl.result2, 64);
	named(e, MDGPU_OP_MODULE_GLOBAL, mod, "gdata", &again);
	assert_int_equal(again.result, g);	/* once in the table */
	named(e, MDGPU_OP_MODULE_GLOBAL, mod, "counter", &cpl);
	assert_int_equal(cpl.result2, 4);
	assert_int_equal(fb_used(e, 0), used);	/* not charged */

	/* Copy in, copy out. */
	for (uint32_t i = 0; i < 16; i++)
		h[i] = 0x1000 + i;
	c = cmd(MDGPU_OP_COPY);
	c.copy.src = 4 * MIB;
	c.copy.src_space = MDGPU_SPACE_APERTURE;
	c.copy.dst = g;
	c.copy.dst_space = MDGPU_SPACE_DEVICE;
	c.copy.len = 64;
	ok(e, 0, &c);
	c.copy.len = 65;			/* past the global */
	assert_int_equal(call(e, 0, &c).status, -ERANGE);
	c = cmd(MDGPU_OP_COPY);
	c.copy.src = g;
	c.copy.src_space = MDGPU_SPACE_DEVICE;
	c.copy.dst = 5 * MIB;
	c.copy.dst_space = MDGPU_SPACE_APERTURE;
	c.copy.len = 64;
	ok(e, 0, &c);
	assert_memory_equal(e->ap[0] + 5 * MIB, h, 64);

	/* A kernel writes it. */
	wg = named(e, MDGPU_OP_FUNC_GET, mod, "write_global", NULL);
	*(uint32_t *)(e->ap[0] + 3 * MIB) = 500;
	c = cmd(MDGPU_OP_LAUNCH);
	c.launch.func = wg;
	c.launch.grid[0] = c.launch.grid[1] = c.launch.grid[2] = 1;
	c.launch.block[0] = 32;
	c.launch.block[1] = c.launch.block[2] = 1;
	c.launch.params_addr = 3 * MIB;
	c.launch.params_len = 4;
	c.launch.params_space = MDGPU_SPACE_APERTURE;
	ok(e, 0, &c);
	c = cmd(MDGPU_OP_COPY);
	c.copy.src = g;
	c.copy.src_space = MDGPU_SPACE_DEVICE;
	c.copy.dst = 5 * MIB;
	c.copy.dst_space = MDGPU_SPACE_APERTURE;
	c.copy.len = 64;
	ok(e, 0, &c);
	for (uint32_t i = 0; i < 16; i++)
		assert_int_equal(((uint32_t *)(e->ap[0] + 5 * MIB))[i],
				 500 + i);

	/* MEM_FREE refuses it; MEMSET names it. */
	c = cmd(MDGPU_OP_MEM_FREE);
	c.free.addr = g;
	assert_int_equal(call(e, 0, &c).status, -EINVAL);
	c = cmd(MDGPU_OP_MEMSET);
	c.memset.addr = g;
	c.memset.len = 64;
	ok(e, 0, &c);

	/* Gone with its module. */
	c = cmd(MDGPU_OP_MODULE_UNLOAD);
	c.module_unload.module = mod;
	ok(e, 0, &c);
	c = cmd(MDGPU_OP_MEMSET);
	c.memset.addr = g;
	c.memset.len = 4;
	assert_int_equal(call(e, 0, &c).status, -ENOENT);
}

static void test_attr_occupancy(void **state)
{
	struct env *e = *state;
	uint32_t mod = load_module(e), vadd;
	struct mdgpu_cmd c;

	vadd = named(e, MDGPU_OP_FUNC_GET, mod, "vadd_f32", NULL);
	c = cmd(MDGPU_OP_OCCUPANCY);
	c.occupancy.func = vadd;
	c.occupancy.what = MDGPU_OCC_ACTIVE_BLOCKS;
	c.occupancy.block_threads = 256;
	assert_int_equal(ok(e, 0, &c), 8);	/* 64 warps / 8 */
	c.occupancy.block_threads = 32;
	assert_int_equal(ok(e, 0, &c), 32);	/* 32 blocks per SM */
	c.occupancy.block_threads = 256;
	c.occupancy.what = MDGPU_OCC_DYN_SMEM;
	c.occupancy.num_blocks = 4;
	assert_int_equal(ok(e, 0, &c), 49152);	/* the function's limit */

	c = cmd(MDGPU_OP_FUNC_SET_ATTR);
	c.func_attr.func = vadd;
	c.func_attr.attr = 8;			/* MAX_DYNAMIC_SHARED */
	c.func_attr.value = 100000;
	ok(e, 0, &c);
	assert_int_equal(func_info(e, vadd)->attr[8], 100000);
	c.func_attr.value = 300000;		/* the driver refuses it */
	assert_int_equal(call(e, 0, &c).status, -EINVAL);
	c.func_attr.attr = MDGPU_FUNC_ATTR_CACHE_CONFIG;
	c.func_attr.value = 2;
	ok(e, 0, &c);
	c.func_attr.attr = 4;			/* NUM_REGS: read-only */
	assert_int_equal(call(e, 0, &c).status, -EINVAL);

	c = cmd(MDGPU_OP_OCCUPANCY);
	c.occupancy.func = vadd;
	c.occupancy.what = MDGPU_OCC_DYN_SMEM;
	c.occupancy.block_threads = 256;
	c.occupancy.num_blocks = 4;
	assert_int_equal(ok(e, 0, &c), 233472 / 4 - 1024);
	c.occupancy.num_blocks = 0;
	c.occupancy.what = MDGPU_OCC_ACTIVE_CLUSTERS;
	c.occupancy.grid[0] = 8;
	c.occupancy.grid[1] = c.occupancy.grid[2] = 1;
	c.occupancy.cluster = MDGPU_CLUSTER(2, 1, 1);
	assert_int_equal(ok(e, 0, &c), 8 * 132 / 2);
	c.occupancy.grid[0] = 7;		/* not a multiple: the driver */
	assert_int_equal(call(e, 0, &c).status, -EINVAL);

	/* The largest cluster (ABI 1.9): the fake's portable 8, 16 once
	 * the function allows non-portable sizes, 0 when no block fits. */
	c.occupancy.what = MDGPU_OCC_CLUSTER_SIZE;
	c.occupancy.cluster = 0;
	c.occupancy.grid[0] = 7;		/* any grid */
	assert_int_equal(ok(e, 0, &c), 8);
	c.occupancy.dyn_smem = 100001;		/* past the function's */
	assert_int_equal(ok(e, 0, &c), 0);
	c.occupancy.dyn_smem = 0;
	c = cmd(MDGPU_OP_FUNC_SET_ATTR);
	c.func_attr.func = vadd;
	c.func_attr.attr = 14;			/* NON_PORTABLE_CLUSTER_SIZE */
	c.func_attr.value = 1;
	ok(e, 0, &c);
	c = cmd(MDGPU_OP_OCCUPANCY);
	c.occupancy.func = vadd;
	c.occupancy.what = MDGPU_OCC_CLUSTER_SIZE;
	c.occupancy.block_threads = 128;
	c.occupancy.grid[0] = c.occupancy.grid[1] = c.occupancy.grid[2] = 1;
	assert_int_equal(ok(e, 0, &c), 16);
	c.occupancy.cluster = MDGPU_CLUSTER(2, 1, 1);	/* not a question */
	assert_int_equal(call(e, 0, &c).status, -EINVAL);
}

/* A kernel that faults: the context is lost at the next SYNC (-EIO). */
static void test_fault(void **state)
{
	struct env *e = *state;
	uint32_t mod = load_module(e), bad;
	struct mdgpu_cmd c;

	bad = named(e, MDGPU_OP_FUNC_GET, mod, "illegal_address", NULL);
	c = cmd(MDGPU_OP_LAUNCH);
	c.launch.func = bad;
	c.launch.grid[0] = c.launch.grid[1] = c.launch.grid[2] = 1;
	c.launch.block[0] = c.launch.block[1] = c.launch.block[2] = 1;
	ok(e, 0, &c);
	assert_int_equal(call(e, 0, &(struct mdgpu_cmd){
				.opcode = MDGPU_OP_SYNC }).status, -EIO);
	/* The neighbour is untouched. */
	c = cmd(MDGPU_OP_DEVICE_INFO);
	c.info.len = 16;
	c.info.space = MDGPU_SPACE_APERTURE;
	assert_int_equal(ok(e, 1, &c), sizeof(struct mdgpu_device_info));
}

/*
 * Local memory: two kernels the fake runs, with frames (.local) of
 * LMEM_SMALL bytes, whose charge fits a 1g quota, and of 64 KiB, whose
 * charge, 17 GiB, does not.
 */
#define LMEM_SMALL	2048
#define STR_(x)		#x
#define STR(x)		STR_(x)
static const char lmem_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry fill_u32(.param .u64 p, .param .u32 v,\n"
	"	.param .u32 n)\n"
	"{\n\t.local .align 8 .b8 frame[" STR(LMEM_SMALL) "];\n\tret;\n}\n"
	".visible .entry vadd_f32(.param .u64 a, .param .u64 b,\n"
	"	.param .u64 c, .param .u32 n)\n"
	"{\n\t.local .align 8 .b8 frame[65536];\n\tret;\n}\n";

/* A launch of func on vGPU 0, one thread, params_len zero bytes (for
 * fill_u32: p 0, n 0, it writes nothing). */
static struct mdgpu_cpl launch(struct env *e, uint32_t func,
			       uint32_t params_len)
{
	struct mdgpu_cmd c = cmd(MDGPU_OP_LAUNCH);

	memset(e->ap[0] + 3 * MIB, 0, params_len);
	c.launch.func = func;
	c.launch.grid[0] = c.launch.grid[1] = c.launch.grid[2] = 1;
	c.launch.block[0] = c.launch.block[1] = c.launch.block[2] = 1;
	c.launch.params_addr = 3 * MIB;
	c.launch.params_len = params_len;
	c.launch.params_space = MDGPU_SPACE_APERTURE;
	return call(e, 0, &c);
}

/*
 * The local memory a launch makes the driver reserve (core/info.c,
 * mdgpud_info_launch), charged in STACK_SIZE's slot: (local size -
 * default stack) x SMs x threads per SM at a function's first launch,
 * nothing at FUNC_GET or again; a launch whose charge does not fit is
 * -ENOMEM and never reaches the driver (the fake grows its stack at a
 * launch, as the driver does), the vGPU's other charges and its
 * neighbour untouched.  CTX_LIMIT charges max(set, launched); the
 * default is the one read before the launch grew the stack.  A reset
 * restores the stack and frees the charge; launches are charged anew.
 */
static void test_local_memory(void **state)
{
	struct env *e = *state;
	const struct mdgpud_gpu_info *gpu = mdgpud_core_gpu(e->core);
	uint64_t per_byte = (uint64_t)gpu->dev.attr[16] * gpu->dev.attr[39];
	uint64_t small_charge = (LMEM_SMALL - 1024) * per_byte;
	uint64_t base = fb_used(e, 0), used0, used1, buf;
	uint32_t mod, small, big;
	struct mdgpu_cmd c;

	/* The vGPU's other users of its quota: an allocation, the heap. */
	c = cmd(MDGPU_OP_MEM_ALLOC);
	c.alloc.size = 64 * MIB;
	buf = ok(e, 0, &c);
	c = cmd(MDGPU_OP_CTX_LIMIT);
	c.limit.limit = 2;			/* MALLOC_HEAP_SIZE */
	c.limit.set = 1;
	c.limit.value = 16 << 20;
	ok(e, 0, &c);
	used0 = fb_used(e, 0);
	used1 = fb_used(e, 1);

	mod = load_ptx(e, lmem_ptx);
	small = named(e, MDGPU_OP_FUNC_GET, mod, "fill_u32", NULL);
	big = named(e, MDGPU_OP_FUNC_GET, mod, "vadd_f32", NULL);
	assert_int_equal(func_info(e, small)->attr[3], LMEM_SMALL);
	assert_int_equal(func_info(e, big)->attr[3], 65536);
	assert_int_equal(fb_used(e, 0), used0);

	/* Past the quota: refused before the driver grew anything. */
	assert_int_equal(launch(e, big, 28).status, -ENOMEM);
	assert_int_equal(fb_used(e, 0), used0);
	assert_int_equal(fb_used(e, 1), used1);
	assert_int_equal(stack_limit(e), 1024);

	/* Within it: charged the formula once. */
	ok(e, 0, &(struct mdgpu_cmd){ .opcode = MDGPU_OP_SYNC });
	assert_int_equal(launch(e, small, 16).status, 0);
	ok(e, 0, &(struct mdgpu_cmd){ .opcode = MDGPU_OP_SYNC });
	assert_int_equal(stack_limit(e), LMEM_SMALL);
	assert_int_equal(fb_used(e, 0) - used0, small_charge);
	assert_int_equal(launch(e, small, 16).status, 0);
	assert_int_equal(fb_used(e, 0) - used0, small_charge);
	assert_int_equal(fb_used(e, 1), used1);

	/* CTX_LIMIT: below the launched level the charge stays; above it
	 * the set's, counted from the default read before the launch
	 * (1024), not from the stack the launch grew. */
	c = cmd(MDGPU_OP_CTX_LIMIT);
	c.limit.limit = 0;
	c.limit.set = 1;
	c.limit.value = 1536;
	assert_int_equal(ok(e, 0, &c), 1536);
	assert_int_equal(fb_used(e, 0) - used0, small_charge);
	c.limit.value = 3072;
	ok(e, 0, &c);
	assert_int_equal(fb_used(e, 0) - used0, (3072 - 1024) * per_byte);
	assert_int_equal(launch(e, small, 16).status, 0);
	assert_int_equal(fb_used(e, 0) - used0, (3072 - 1024) * per_byte);
	c.limit.value = 1024;
	ok(e, 0, &c);
	assert_int_equal(fb_used(e, 0) - used0, small_charge);
	assert_int_equal(launch(e, big, 28).status, -ENOMEM);
	assert_int_equal(fb_used(e, 0) - used0, small_charge);
	c = cmd(MDGPU_OP_MEMSET);		/* the allocation still works */
	c.memset.addr = buf;
	c.memset.len = 4096;
	ok(e, 0, &c);

	/* A reset: the stack back to its default, the charges gone; the
	 * first launch after it is charged again. */
	reset_vgpu0(e);
	assert_int_equal(fb_used(e, 0), base);
	assert_int_equal(stack_limit(e), 1024);
	mod = load_ptx(e, lmem_ptx);
	small = named(e, MDGPU_OP_FUNC_GET, mod, "fill_u32", NULL);
	assert_int_equal(launch(e, small, 16).status, 0);
	assert_int_equal(fb_used(e, 0) - base, small_charge);
	assert_int_equal(fb_used(e, 1), used1);
}

/*
 * MODULE_LOAD from device memory (ABI 1.3) through the core: an image the
 * vGPU copied into its own allocation loads and its functions are found;
 * one the driver refuses fails with the CUresult in result2 (218, invalid
 * PTX), and the next command the daemon refuses itself carries 0; a range
 * outside the vGPU's memory never reaches the backend.  On sim: refused
 * like every module load, the allocation untouched.
 */
static void test_module_from_device(void **state)
{
	static const char bad_ptx[] = ".version 8.0\n.target sm_90\n"
				      "this is not ptx\n";
	struct env *e = *state;
	struct mdgpu_cmd c = cmd(MDGPU_OP_MEM_ALLOC);
	struct mdgpu_cpl cpl;
	uint64_t buf, other;

	c.alloc.size = 64 * 1024;
	buf = ok(e, 0, &c);
	other = ok(e, 1, &c);
	memcpy(e->ap[0], test_ptx, sizeof(test_ptx));
	c = cmd(MDGPU_OP_COPY);
	c.copy.src_space = MDGPU_SPACE_APERTURE;
	c.copy.dst = buf;
	c.copy.dst_space = MDGPU_SPACE_DEVICE;
	c.copy.len = sizeof(test_ptx);
	ok(e, 0, &c);
	memset(e->ap[0], 0, sizeof(test_ptx));	/* read from the device */

	c = cmd(MDGPU_OP_MODULE_LOAD);
	c.module_load.addr = buf;
	c.module_load.len = sizeof(test_ptx) - 1;	/* NUL added */
	c.module_load.space = MDGPU_SPACE_DEVICE;
	c.module_load.kind = MDGPU_MODULE_PTX;
	cpl = call(e, 0, &c);
	if (!e->cuda) {
		assert_int_equal(cpl.status, -EOPNOTSUPP);
		assert_int_equal(cpl.result2, 0);
	} else {
		assert_int_equal(cpl.status, 0);
		assert_true(named(e, MDGPU_OP_FUNC_GET, (uint32_t)cpl.result,
				  "vadd_f32", NULL) != 0);
	}

	/* Outside this vGPU's memory: refused before the backend. */
	c.module_load.addr = other;
	cpl = call(e, 0, &c);
	assert_int_equal(cpl.status, -ENOENT);
	assert_int_equal(cpl.result2, 0);
	c.module_load.addr = buf + 64 * 1024 - 8;
	c.module_load.len = 16;
	assert_int_equal(call(e, 0, &c).status, -ERANGE);
	if (!e->cuda)
		return;

	/* The driver's refusal carries its CUresult, in both spaces. */
	memcpy(e->ap[0], bad_ptx, sizeof(bad_ptx));
	c = cmd(MDGPU_OP_COPY);
	c.copy.src_space = MDGPU_SPACE_APERTURE;
	c.copy.dst = buf;
	c.copy.dst_space = MDGPU_SPACE_DEVICE;
	c.copy.len = sizeof(bad_ptx);
	ok(e, 0, &c);
	c = cmd(MDGPU_OP_MODULE_LOAD);
	c.module_load.addr = buf;
	c.module_load.len = sizeof(bad_ptx);
	c.module_load.space = MDGPU_SPACE_DEVICE;
	c.module_load.kind = MDGPU_MODULE_PTX;
	cpl = call(e, 0, &c);
	assert_int_equal(cpl.status, -EINVAL);
	assert_int_equal(cpl.result2, 218);
	c.module_load.addr = 0;
	c.module_load.space = MDGPU_SPACE_APERTURE;
	cpl = call(e, 0, &c);
	assert_int_equal(cpl.status, -EINVAL);
	assert_int_equal(cpl.result2, 218);
	/* Refused by the daemon: no code, not the previous command's. */
	c = cmd(MDGPU_OP_MEM_FREE);
	c.free.addr = buf + 4;
	cpl = call(e, 0, &c);
	assert_int_equal(cpl.status, -ENOENT);
	assert_int_equal(cpl.result2, 0);
	/* A context that refused an image is still usable. */
	c.free.addr = buf;
	ok(e, 0, &c);
	assert_true(load_module(e) != 0);
}

int main(void)
{
	(void)fake_attach;	/* the header's; attach() shares the aperture */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_device_info, setup_sim,
						teardown),
		cmocka_unit_test_setup_teardown(test_given_uuid, setup_sim,
						teardown),
		cmocka_unit_test_setup_teardown(test_knobs_owner, setup_sim,
						teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup_sim,
						teardown),
		cmocka_unit_test_setup_teardown(test_aperture_devptr,
						setup_sim, teardown),
		cmocka_unit_test_setup_teardown(test_sim_has_no_functions,
						setup_sim, teardown),
		cmocka_unit_test_setup_teardown(test_module_from_device,
						setup_sim, teardown),
		cmocka_unit_test_setup_teardown(test_device_info, setup_cuda,
						teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup_cuda,
						teardown),
		cmocka_unit_test_setup_teardown(test_aperture_devptr,
						setup_cuda, teardown),
		cmocka_unit_test_setup_teardown(test_func_info_launch,
						setup_cuda, teardown),
		cmocka_unit_test_setup_teardown(test_module_global,
						setup_cuda, teardown),
		cmocka_unit_test_setup_teardown(test_module_funcs,
						setup_cuda, teardown),
		cmocka_unit_test_setup_teardown(test_attr_occupancy,
						setup_cuda, teardown),
		cmocka_unit_test_setup_teardown(test_fault, setup_cuda,
						teardown),
		cmocka_unit_test_setup_teardown(test_local_memory, setup_cuda,
						teardown),
		cmocka_unit_test_setup_teardown(test_module_from_device,
						setup_cuda, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
