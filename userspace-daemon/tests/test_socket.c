// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Integration: mdgpud (sim backend; the cuda backend on a GPU machine with
 * MDGPU_TEST_BACKEND=cuda and MDGPUD_WORKER=<mdgpud-worker>) over the
 * socket transport, driven by
 * libmdgpu.  The daemon runs in a thread of this process; tenants are
 * handles in this process or forked children.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "mdgpu/mdgpu.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

#define MIB (1ULL << 20)

struct daemon {
	struct mdgpud_core *core;
	pthread_t thread;
	char dir[64];
	char path[96];
};

static void *daemon_main(void *arg)
{
	struct daemon *d = arg;

	mdgpud_core_run(d->core);
	return NULL;
}

/* The backend under test: sim unless MDGPU_TEST_BACKEND=cuda. */
static bool on_cuda(void)
{
	const char *be = getenv("MDGPU_TEST_BACKEND");

	return be && !strcmp(be, "cuda");
}

static void daemon_start_cfg(struct daemon *d, int realtime)
{
	struct mdgpud_config cfg;

	mdgpud_config_defaults(&cfg);
	if (on_cuda())
		strcpy(cfg.backend, "cuda");
	cfg.sim_realtime = realtime;
	strcpy(cfg.socket_path, d->path);
	cfg.sim_fb_mib = 8192;
	cfg.log_level = MDGPUD_LOG_WARN;
	cfg.socket_mode = 0600;
	assert_int_equal(mdgpud_core_create(&cfg, &d->core), 0);
	assert_int_equal(pthread_create(&d->thread, NULL, daemon_main, d), 0);
}

static void daemon_start(struct daemon *d)
{
	daemon_start_cfg(d, 0);
}

static void daemon_stop(struct daemon *d)
{
	mdgpud_core_stop(d->core);
	pthread_join(d->thread, NULL);
	mdgpud_core_destroy(d->core);
	d->core = NULL;
}

static int setup(void **state)
{
	struct daemon *d = calloc(1, sizeof(*d));

	mdgpud_log_set(MDGPUD_LOG_WARN, NULL, NULL);
	snprintf(d->dir, sizeof(d->dir), "/tmp/mdgpud-test-%d", (int)getpid());
	snprintf(d->path, sizeof(d->path), "%s/sock", d->dir);
	daemon_start(d);
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct daemon *d = *state;

	if (d->core)
		daemon_stop(d);
	rmdir(d->dir);
	free(d);
	return 0;
}

static struct mdgpu *open_vgpu(struct daemon *d, const char *type)
{
	struct mdgpu_open_opts o = { .path = d->path, .type = type };
	struct mdgpu *g = NULL;
	int ret = mdgpu_open(&o, &g);

	if (ret)
		fprintf(stderr, "mdgpu_open: %d\n", ret);
	assert_int_equal(ret, 0);
	return g;
}

static uint64_t ref_checksum(const uint32_t *w, uint64_t n)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += (uint64_t)w[i] * (2 * i + 1);
	return s;
}

static void test_basic(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *g = open_vgpu(d, "1g");
	const uint64_t n = 4096;
	uint32_t *a = malloc(n * 4), *b = malloc(n * 4);
	struct mdgpu_info info;
	mdgpu_devptr x, y, z;
	uint64_t sum, v;
	uint32_t ev0, ev1, mod;

	assert_int_equal(mdgpu_get_info(g, &info), 0);
	assert_int_equal(info.fb_quota, 1024 * MIB);
	assert_int_equal(info.backend,
			 on_cuda() ? MDGPU_BACKEND_CUDA : MDGPU_BACKEND_SIM);
	assert_int_equal(mdgpu_query(g, MDGPU_QUERY_ABI_VERSION, &v), 0);
	assert_int_equal(v, MDGPU_ABI_VERSION);

	for (uint64_t i = 0; i < n; i++)
		a[i] = (uint32_t)(i * 2654435761U);
	assert_int_equal(mdgpu_mem_alloc(g, n * 4, &x), 0);
	assert_int_equal(mdgpu_mem_alloc(g, n * 4, &y), 0);
	assert_int_equal(mdgpu_mem_alloc(g, n * 4, &z), 0);
	assert_int_equal(mdgpu_copy_htod(g, x, a, n * 4), 0);
	assert_int_equal(mdgpu_checksum(g, x, n, &sum), 0);
	assert_int_equal(sum, ref_checksum(a, n));

	/* y = fill(7); z = x + y; read back z. */
	assert_int_equal(mdgpu_fill_u32(g, y, n, 7), 0);
	assert_int_equal(mdgpu_add_u32(g, z, x, y, n), 0);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(mdgpu_copy_dtoh(g, b, z, n * 4), 0);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(b[i], a[i] + 7);

	assert_int_equal(mdgpu_copy_dtod(g, y, x, n * 4), 0);
	assert_int_equal(mdgpu_checksum(g, y, n, &sum), 0);
	assert_int_equal(sum, ref_checksum(a, n));
	assert_int_equal(mdgpu_memset(g, y, 0x01, n * 4), 0);
	assert_int_equal(mdgpu_checksum(g, y, 1, &sum), 0);
	assert_int_equal(sum, 0x01010101);

	/* Simulated time: a 2 ms spin between two events. */
	assert_int_equal(mdgpu_event_create(g, &ev0), 0);
	assert_int_equal(mdgpu_event_create(g, &ev1), 0);
	assert_int_equal(mdgpu_event_record(g, ev0), 0);
	assert_int_equal(mdgpu_spin_ns(g, 2000000), 0);
	assert_int_equal(mdgpu_event_record(g, ev1), 0);
	assert_int_equal(mdgpu_event_elapsed_ns(g, ev0, ev1, &v), 0);
	assert_true(v >= 2000000 && v < 2100000);
	assert_int_equal(mdgpu_event_destroy(g, ev0), 0);
	assert_int_equal(mdgpu_event_destroy(g, ev0), -ENOENT);

	/* Errors complete the command, with a message; nothing changes. */
	/* sim loads no foreign code; the GPU's JIT rejects this PTX. */
	assert_int_equal(mdgpu_module_load(g, MDGPU_MODULE_PTX, ".version 8.0",
					   12, &mod),
			 on_cuda() ? -EINVAL : -EOPNOTSUPP);
	assert_non_null(strstr(mdgpu_last_error(g), "module_load"));
	assert_int_equal(mdgpu_copy_htod(g, x + n * 4 - 4, a, 8), -ERANGE);
	assert_int_equal(mdgpu_mem_free(g, x + 4), -ENOENT);
	assert_int_equal(mdgpu_fill_u32(g, 0xdead0000, 1, 0), 0);
	assert_int_equal(mdgpu_synchronize(g), -ENOENT);	/* async error */
	assert_int_equal(mdgpu_synchronize(g), 0);		/* reported once */
	assert_int_equal(mdgpu_checksum(g, x, n, &sum), 0);
	assert_int_equal(sum, ref_checksum(a, n));

	assert_int_equal(mdgpu_mem_free(g, x), 0);
	assert_int_equal(mdgpu_mem_free(g, x), -ENOENT);
	assert_int_equal(mdgpu_mem_free(g, y), 0);
	assert_int_equal(mdgpu_mem_free(g, z), 0);
	assert_int_equal(mdgpu_query(g, MDGPU_QUERY_FB_USED, &v), 0);
	assert_int_equal(v, 0);
	mdgpu_close(g);
	free(a);
	free(b);
}

/* Host buffers larger than the aperture are copied in chunks. */
static void test_large_copy(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *g = open_vgpu(d, "1g");
	const uint64_t bytes = 21 * MIB + 12;	/* 8 MiB aperture */
	uint8_t *a = malloc(bytes), *b = malloc(bytes);
	mdgpu_devptr x;
	uint64_t sum;

	for (uint64_t i = 0; i < bytes; i++)
		a[i] = (uint8_t)(i * 7 + (i >> 12));
	assert_int_equal(mdgpu_mem_alloc(g, bytes, &x), 0);
	assert_int_equal(mdgpu_copy_htod(g, x, a, bytes), 0);
	assert_int_equal(mdgpu_checksum(g, x, bytes / 4, &sum), 0);
	assert_int_equal(sum, ref_checksum((const uint32_t *)a, bytes / 4));
	memset(b, 0, bytes);
	assert_int_equal(mdgpu_copy_dtoh(g, b, x, bytes), 0);
	assert_memory_equal(a, b, bytes);
	mdgpu_close(g);
	free(a);
	free(b);
}

/*
 * A module image larger than the aperture's staging area (8 MiB here)
 * goes through a device buffer (ABI 1.3), charged to the quota while it
 * is loaded and freed after, whatever the load answered: sim loads no
 * code (-EOPNOTSUPP), cuda's JIT takes this padded PTX.  Over the ABI's
 * bound, or without room in the quota, it fails before any load.
 */
static void test_large_module(void **state)
{
	static const char head[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .entry k()\n{\n\tret;\n}\n";
	struct daemon *d = *state;
	struct mdgpu *g = open_vgpu(d, "1g");
	const size_t len = 20 * MIB;
	char *ptx = malloc(len);
	uint32_t mod = 0, fn;
	mdgpu_devptr fill;
	uint64_t used;
	int ret;

	assert_non_null(ptx);
	memset(ptx, ' ', len);
	memcpy(ptx, head, sizeof(head) - 1);
	for (size_t i = sizeof(head); i + 1 < len; i += 64)
		memcpy(ptx + i - 1, "\n//", 3);
	ptx[len - 1] = '\0';

	ret = mdgpu_module_load(g, MDGPU_MODULE_PTX, ptx, len, &mod);
	if (on_cuda()) {
		assert_int_equal(ret, 0);
		assert_int_equal(mdgpu_func_get(g, mod, "k", &fn), 0);
		assert_int_equal(mdgpu_module_unload(g, mod), 0);
	} else {
		assert_int_equal(ret, -EOPNOTSUPP);
		assert_non_null(strstr(mdgpu_last_error(g), "module_load"));
	}
	assert_int_equal(mdgpu_query(g, MDGPU_QUERY_FB_USED, &used), 0);
	assert_int_equal(used, 0);

	/* Above the bound: refused before anything is read or allocated. */
	assert_int_equal(mdgpu_module_load(g, MDGPU_MODULE_PTX, ptx,
					   (size_t)MDGPU_MODULE_DEVICE_MAX + 1,
					   &mod), -E2BIG);
	assert_non_null(strstr(mdgpu_last_error(g), "bound"));
	assert_int_equal(mdgpu_last_code(g), 0);

	/* The buffer is an allocation like any other: inside the quota. */
	assert_int_equal(mdgpu_mem_alloc(g, 1024 * MIB - len + 4096, &fill),
			 0);
	assert_int_equal(mdgpu_module_load(g, MDGPU_MODULE_PTX, ptx, len,
					   &mod), -ENOMEM);
	assert_non_null(strstr(mdgpu_last_error(g), "device buffer"));
	assert_int_equal(mdgpu_mem_free(g, fill), 0);
	assert_int_equal(mdgpu_query(g, MDGPU_QUERY_FB_USED, &used), 0);
	assert_int_equal(used, 0);
	mdgpu_close(g);
	free(ptx);
}

/* Zero-copy host memory in the aperture: copies without staging. */
static void test_host_memory(void **state)
{
	struct daemon *d = *state;
	struct mdgpu_open_opts o = { .path = d->path, .type = "1g",
				     .host_bytes = 32 * MIB };
	const uint64_t bytes = 16 * MIB;
	uint32_t *a, *b, *c;
	struct mdgpu *g;
	mdgpu_devptr x;
	uint64_t sum, before, after;
	struct mdgpud_vgpu_stats st;

	assert_int_equal(mdgpu_open(&o, &g), 0);
	assert_int_equal(mdgpu_host_alloc(g, bytes, (void **)&a), 0);
	assert_int_equal(mdgpu_host_alloc(g, bytes, (void **)&b), 0);
	assert_int_equal(mdgpu_host_alloc(g, 1, (void **)&c), -ENOMEM);
	assert_non_null(strstr(mdgpu_last_error(g), "zero-copy"));
	for (uint64_t i = 0; i < bytes / 4; i++)
		a[i] = (uint32_t)(i * 40503U);
	assert_int_equal(mdgpu_mem_alloc(g, bytes, &x), 0);
	assert_int_equal(mdgpud_core_stats(d->core, &st, 1), 1);
	before = st.commands;
	assert_int_equal(mdgpu_copy_htod(g, x, a, bytes), 0);
	assert_int_equal(mdgpu_copy_dtoh(g, b, x, bytes), 0);
	assert_int_equal(mdgpud_core_stats(d->core, &st, 1), 1);
	after = st.commands;
	assert_int_equal(after - before, 2);	/* one command each way */
	assert_memory_equal(a, b, bytes);
	assert_int_equal(mdgpu_checksum(g, x, bytes / 4, &sum), 0);
	assert_int_equal(sum, ref_checksum(a, bytes / 4));
	/* Part of a buffer, and frees making room again. */
	assert_int_equal(mdgpu_copy_dtoh(g, b + 1, x, 4096), 0);
	assert_int_equal(b[1], a[0]);
	assert_int_equal(mdgpu_host_free(g, a), 0);
	assert_int_equal(mdgpu_host_free(g, a), -ENOENT);
	assert_int_equal(mdgpu_host_alloc(g, 4096, (void **)&c), 0);
	assert_ptr_equal(c, a);
	mdgpu_close(g);

	o.host_bytes = 2048 * MIB;	/* above host_mib_max */
	assert_int_equal(mdgpu_open(&o, &g), -E2BIG);
}

/*
 * mdgpu_aperture_place(): the aperture mapped again at a chosen address,
 * its contents the same memory (zero-copy buffers carved there, copies
 * through them); refused where this process has a mapping (which stays
 * untouched, as does the aperture), at an unaligned address, and once
 * zero-copy memory was handed out.
 */
static void test_aperture_place(void **state)
{
	struct daemon *d = *state;
	struct mdgpu_open_opts o = { .path = d->path, .type = "1g",
				     .host_bytes = 8 * MIB };
	const size_t span = 64 * MIB;
	uint32_t *a, *b;
	uint8_t *free_at, *taken;
	struct mdgpu *g;
	mdgpu_devptr x;

	assert_int_equal(mdgpu_open(&o, &g), 0);
	/* An address range known to be free: reserved, then given back. */
	free_at = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	assert_true(free_at != MAP_FAILED);
	assert_int_equal(munmap(free_at, span), 0);
	taken = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(taken != MAP_FAILED);
	taken[0] = 0x5a;
	assert_int_equal(mdgpu_aperture_place(g, (uintptr_t)taken), -EEXIST);
	assert_int_equal(taken[0], 0x5a);
	assert_int_equal(mdgpu_aperture_place(g, (uintptr_t)free_at + 1),
			 -EINVAL);
	assert_int_equal(mdgpu_aperture_place(g, (uintptr_t)free_at), 0);
	/* Placed twice at the same address: nothing to do. */
	assert_int_equal(mdgpu_aperture_place(g, (uintptr_t)free_at), 0);
	assert_int_equal(mdgpu_host_alloc(g, 4 * MIB, (void **)&a), 0);
	assert_int_equal(mdgpu_host_alloc(g, 4 * MIB, (void **)&b), 0);
	assert_true((uint8_t *)a >= free_at && (uint8_t *)a < free_at + span);
	for (uint32_t i = 0; i < MIB; i++)
		a[i] = i * 2654435761U;
	assert_int_equal(mdgpu_mem_alloc(g, 4 * MIB, &x), 0);
	assert_int_equal(mdgpu_copy_htod(g, x, a, 4 * MIB), 0);
	assert_int_equal(mdgpu_copy_dtoh(g, b, x, 4 * MIB), 0);
	assert_memory_equal(a, b, 4 * MIB);
	assert_int_equal(mdgpu_aperture_place(g, (uintptr_t)free_at + span),
			 -EBUSY);
	mdgpu_close(g);
	munmap(taken, 4096);
}

/*
 * HOST_REGISTER (ABI 1.12): a memfd this process maps, registered for the
 * GPU.  On the cuda backend the worker maps it at the same address (free
 * there), so the device address is the client's pointer; copies and
 * memsets through it reach the client's pages both ways.  Refused: a
 * descriptor that is not shared memory, a range past the file, unaligned
 * values, more than register_mib_max; MEM_FREE of a registration, an
 * unregistration of an address that is none.  On sim: -EOPNOTSUPP.
 */
static void test_host_register(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *g = open_vgpu(d, "1g");
	const size_t len = 2 * MIB;
	int fd = memfd_create("test-host-register", MFD_CLOEXEC);
	int big = memfd_create("test-host-register-big", MFD_CLOEXEC);
	int efd = eventfd(0, EFD_CLOEXEC);
	uint32_t *p, *back;
	mdgpu_devptr dev, dev2, x;

	assert_true(fd >= 0 && big >= 0 && efd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(2 * len)), 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)len);
	assert_true(p != MAP_FAILED);
	back = malloc(len);
	assert_non_null(back);
	for (uint32_t i = 0; i < len / 4; i++)
		p[i] = i * 2654435761U;
	if (!on_cuda()) {
		assert_int_equal(mdgpu_host_register(g, fd, len, len,
						     (uintptr_t)p, 0, &dev),
				 -EOPNOTSUPP);
		goto out;
	}
	assert_int_equal(mdgpu_host_register(g, fd, len, len, (uintptr_t)p, 0,
					     &dev), 0);
	assert_int_equal(dev, (uintptr_t)p);
	/* Device to device through the registration: the client's words. */
	assert_int_equal(mdgpu_mem_alloc(g, len, &x), 0);
	assert_int_equal(mdgpu_copy_dtod(g, x, dev, len), 0);
	assert_int_equal(mdgpu_copy_dtoh(g, back, x, len), 0);
	assert_memory_equal(back, p, len);
	/* And back into the client's pages. */
	assert_int_equal(mdgpu_memset(g, dev + 4096, 0xab, 4096), 0);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(p[1024], 0xababababU);
	assert_int_equal(p[2048], 2048 * 2654435761U);
	/* The range is checked like an allocation's. */
	assert_int_equal(mdgpu_memset(g, dev + len - 4096, 0, 8192),
			 -ERANGE);
	/* The same pages again: another mapping (the address is taken in
	 * the worker now), another device address. */
	assert_int_equal(mdgpu_host_register(g, fd, len, len, (uintptr_t)p,
					     MDGPU_HOST_REG_F_READ_ONLY,
					     &dev2), 0);
	assert_true(dev2 != dev);
	assert_int_equal(mdgpu_copy_dtod(g, x, dev2, 8192), 0);
	assert_int_equal(mdgpu_copy_dtoh(g, back, x, 8192), 0);
	assert_memory_equal(back, p, 8192);
	/* Refusals. */
	assert_int_equal(mdgpu_mem_free(g, dev), -EINVAL);
	assert_int_equal(mdgpu_host_unregister(g, dev + 4096), -ENOENT);
	assert_int_equal(mdgpu_host_unregister(g, x), -ENOENT);
	assert_int_equal(mdgpu_host_register(g, efd, 0, 4096, 0, 0, &x),
			 -EINVAL);
	assert_int_equal(mdgpu_host_register(g, fd, len, 2 * len, 0, 0, &x),
			 -ERANGE);
	assert_int_equal(mdgpu_host_register(g, fd, 100, 4096, 0, 0, &x),
			 -EINVAL);
	assert_int_equal(mdgpu_host_register(g, fd, 0, 4096, 0, 2, &x),
			 -EINVAL);
	assert_int_equal(ftruncate(big, (off_t)(1025 * MIB)), 0);
	assert_int_equal(mdgpu_host_register(g, big, 0, 1025 * MIB, 0, 0,
					     &x), -ENOMEM);
	/* Unregistered: the range is no device memory any more. */
	assert_int_equal(mdgpu_host_unregister(g, dev), 0);
	assert_int_equal(mdgpu_host_unregister(g, dev), -ENOENT);
	assert_int_equal(mdgpu_memset(g, dev, 0, 4096), -ENOENT);
	/* The vGPU's end unregisters what is left (dev2). */
out:
	mdgpu_close(g);
	munmap(p, len);
	free(back);
	close(fd);
	close(big);
	close(efd);
}

struct held_call {
	struct mdgpu *g;
	mdgpu_devptr x;
	int ret;
	_Atomic int done;
};

static void *held_call_main(void *arg)
{
	struct held_call *h = arg;

	h->ret = mdgpu_memset(h->g, h->x, 0x11, 4096);
	atomic_store(&h->done, 1);
	return NULL;
}

/*
 * HOST_FUNC (ABI 1.12): it completes once the earlier work is done, then
 * the vGPU runs no other command until the client says the function
 * returned; another vGPU is served meanwhile; a vGPU closed while held
 * goes away as any other.
 */
static void test_host_func(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *g = open_vgpu(d, "1g"), *other = open_vgpu(d, "1g");
	struct held_call h = { .g = g };
	struct mdgpu_wait w;
	mdgpu_devptr y;
	pthread_t t;

	assert_int_equal(mdgpu_mem_alloc(g, 4096, &h.x), 0);
	assert_int_equal(mdgpu_fill_u32(g, h.x, 1024, 7), 0);
	assert_int_equal(mdgpu_wait_begin_host_fn(g, &w), 0);
	mdgpu_wait_run(g, &w);
	assert_int_equal(w.state, MDGPU_WAIT_DONE);
	assert_int_equal(w.ret, 0);
	assert_int_equal(w.cpl.status, 0);
	/* Held: a command queued now waits for the function. */
	assert_int_equal(pthread_create(&t, NULL, held_call_main, &h), 0);
	usleep(200 * 1000);
	assert_int_equal(atomic_load(&h.done), 0);
	/* The other vGPU is not held. */
	assert_int_equal(mdgpu_mem_alloc(other, 4096, &y), 0);
	assert_int_equal(mdgpu_mem_free(other, y), 0);
	mdgpu_host_fn_done(g, &w);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(atomic_load(&h.done), 1);
	assert_int_equal(h.ret, 0);
	/* Held at close: the vGPU goes away, the daemon serves on. */
	assert_int_equal(mdgpu_wait_begin_host_fn(g, &w), 0);
	mdgpu_wait_run(g, &w);
	assert_int_equal(w.cpl.status, 0);
	mdgpu_close(g);
	assert_int_equal(mdgpu_mem_alloc(other, 4096, &y), 0);
	mdgpu_close(other);
}

static void test_quota(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *g = open_vgpu(d, "1g");
	mdgpu_devptr p[3], q;
	uint64_t used;

	/* Exact: two halves fill the 1 GiB quota; one more page fails. */
	assert_int_equal(mdgpu_mem_alloc(g, 512 * MIB, &p[0]), 0);
	assert_int_equal(mdgpu_mem_alloc(g, 512 * MIB, &p[1]), 0);
	assert_int_equal(mdgpu_query(g, MDGPU_QUERY_FB_USED, &used), 0);
	assert_int_equal(used, 1024 * MIB);
	assert_int_equal(mdgpu_mem_alloc(g, 1, &p[2]), -ENOMEM);
	assert_non_null(strstr(mdgpu_last_error(g), "quota"));
	assert_int_equal(mdgpu_mem_alloc(g, UINT64_MAX, &p[2]), -ENOMEM);
	/* Free and reuse. */
	assert_int_equal(mdgpu_mem_free(g, p[1]), 0);
	assert_int_equal(mdgpu_mem_alloc(g, 256 * MIB, &p[1]), 0);
	assert_int_equal(mdgpu_mem_alloc(g, 256 * MIB, &p[2]), 0);
	assert_int_equal(mdgpu_mem_alloc(g, 4096, &q), -ENOMEM);
	/* Reserved bytes count: 1 byte costs a page on sim, the smallest
	 * block (512 B, Documentation/cuda-backend.md) on cuda. */
	assert_int_equal(mdgpu_mem_free(g, p[2]), 0);
	assert_int_equal(mdgpu_mem_alloc(g, 1, &q), 0);
	assert_int_equal(mdgpu_query(g, MDGPU_QUERY_FB_USED, &used), 0);
	assert_int_equal(used, 768 * MIB + (on_cuda() ? 512 : 4096));
	/* The daemon's own accounting agrees. */
	assert_int_equal(mdgpud_core_fb_used(d->core), used);
	mdgpu_close(g);
}

static void test_scrub(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *a = open_vgpu(d, "1g"), *b = open_vgpu(d, "2g");
	mdgpu_devptr x, y;
	uint64_t sum;

	assert_int_equal(mdgpu_mem_alloc(a, MIB, &x), 0);
	assert_int_equal(mdgpu_fill_u32(a, x, MIB / 4, 0xdeadbeef), 0);
	assert_int_equal(mdgpu_checksum(a, x, MIB / 4, &sum), 0);
	assert_true(sum != 0);
	assert_int_equal(mdgpu_mem_free(a, x), 0);
	/* Another tenant gets the same backing memory: it reads zero. */
	assert_int_equal(mdgpu_mem_alloc(b, MIB, &y), 0);
	assert_int_equal(mdgpu_checksum(b, y, MIB / 4, &sum), 0);
	assert_int_equal(sum, 0);
	/* a cannot reach b's memory, even at a guessed address. */
	assert_int_equal(mdgpu_checksum(a, y, 1, &sum), -ENOENT);
	assert_int_equal(mdgpu_mem_free(a, y), -ENOENT);
	mdgpu_close(a);
	mdgpu_close(b);
}

struct tenant_arg {
	struct daemon *d;
	uint32_t seed;
	int ok;
};

static void *tenant_main(void *p)
{
	struct tenant_arg *t = p;
	struct mdgpu_open_opts o = { .path = t->d->path, .type = "1g" };
	const uint64_t n = 64 * 1024;
	uint32_t *buf = malloc(n * 4);
	struct mdgpu *g;
	mdgpu_devptr x;
	uint64_t sum;
	int bad = 0;

	if (mdgpu_open(&o, &g))
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		buf[i] = t->seed * 31 + (uint32_t)i;
	bad |= mdgpu_mem_alloc(g, n * 4, &x);
	for (int round = 0; round < 50 && !bad; round++) {
		bad |= mdgpu_copy_htod(g, x, buf, n * 4);
		bad |= mdgpu_spin_ns(g, 100000);
		bad |= mdgpu_checksum(g, x, n, &sum);
		bad |= sum != ref_checksum(buf, n);
		buf[round] ^= t->seed;
	}
	bad |= mdgpu_synchronize(g);
	mdgpu_close(g);
	free(buf);
	t->ok = !bad;
	return NULL;
}

static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(dir);
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

static void test_tenants(void **state)
{
	struct daemon *d = *state;
	struct tenant_arg args[4];
	pthread_t th[4];
	struct mdgpud_vgpu_stats st[8];
	int fds = count_fds();

	for (int i = 0; i < 4; i++) {
		args[i] = (struct tenant_arg){ d, (uint32_t)i + 1, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, tenant_main,
						&args[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_true(args[i].ok);
	}
	/* Hang-ups are processed asynchronously by the dispatcher. */
	for (int i = 0; i < 1000 && mdgpud_core_nr_vgpus(d->core); i++)
		usleep(1000);
	assert_int_equal(mdgpud_core_stats(d->core, st, 8), 0);
	assert_int_equal(mdgpud_core_fb_used(d->core), 0);
	/* Neither side (both in this process) leaked a descriptor; the
	 * daemon closes a client's last ones just after its vGPU is gone. */
	for (int i = 0; i < 1000 && count_fds() != fds; i++)
		usleep(1000);
	assert_int_equal(count_fds(), fds);
}

/* A tenant killed mid-run: its memory is released and scrubbed. */
static void test_kill_tenant(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *other = open_vgpu(d, "1g");
	mdgpu_devptr keep, y;
	uint64_t sum, before;
	int pfd[2];
	pid_t pid;
	char c;

	assert_int_equal(mdgpu_mem_alloc(other, MIB, &keep), 0);
	assert_int_equal(mdgpu_fill_u32(other, keep, MIB / 4, 42), 0);
	assert_int_equal(mdgpu_checksum(other, keep, MIB / 4, &before), 0);
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct mdgpu_open_opts o = { .path = d->path, .type = "2g" };
		struct mdgpu *g;
		mdgpu_devptr x;

		close(pfd[0]);
		if (mdgpu_open(&o, &g) || mdgpu_mem_alloc(g, 64 * MIB, &x) ||
		    mdgpu_fill_u32(g, x, 16 * MIB, 0x5eed5eed) ||
		    mdgpu_synchronize(g))
			_exit(1);
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		/* Keep the vGPU busy until killed. */
		for (;;)
			mdgpu_spin_ns(g, 1000000);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	assert_true(mdgpud_core_fb_used(d->core) >= 64 * MIB + MIB);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (int i = 0; i < 500 && mdgpud_core_nr_vgpus(d->core) > 1; i++)
		usleep(2000);
	assert_int_equal(mdgpud_core_nr_vgpus(d->core), 1);
	assert_int_equal(mdgpud_core_fb_used(d->core), MIB);
	/* Its memory comes back scrubbed. */
	assert_int_equal(mdgpu_mem_alloc(other, 64 * MIB, &y), 0);
	assert_int_equal(mdgpu_checksum(other, y, 16 * MIB, &sum), 0);
	assert_int_equal(sum, 0);
	/* The other tenant is unaffected. */
	assert_int_equal(mdgpu_checksum(other, keep, MIB / 4, &sum), 0);
	assert_int_equal(sum, before);
	mdgpu_close(other);
}

static void test_restart(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *g = open_vgpu(d, "1g"), *g2;
	mdgpu_devptr x;
	uint64_t v;

	assert_int_equal(mdgpu_mem_alloc(g, 4096, &x), 0);
	daemon_stop(d);
	assert_int_equal(mdgpu_query(g, MDGPU_QUERY_FB_USED, &v), -ENODEV);
	assert_non_null(strstr(mdgpu_last_error(g), "gone"));
	/* No daemon: a clear error, not a hang. */
	{
		struct mdgpu_open_opts o = { .path = d->path };

		assert_int_equal(mdgpu_open(&o, &g2), -ENOENT);
		assert_non_null(strstr(mdgpu_last_error(NULL), "connect"));
	}
	daemon_start(d);
	g2 = open_vgpu(d, "1g");
	assert_int_equal(mdgpu_mem_alloc(g2, 4096, &x), 0);
	assert_int_equal(mdgpu_mem_free(g2, x), 0);
	/* The old handle stays dead. */
	assert_int_equal(mdgpu_query(g, MDGPU_QUERY_FB_USED, &v), -ENODEV);
	mdgpu_close(g);
	mdgpu_close(g2);
}

static void test_handshake_errors(void **state)
{
	struct daemon *d = *state;
	struct mdgpu_open_opts o = { .path = d->path, .type = "nosuch" };
	struct mdgpu *g = NULL, *full[2];

	assert_int_equal(mdgpu_open(&o, &g), -ENOENT);
	assert_non_null(strstr(mdgpu_last_error(NULL),
			       "refused a vGPU of type 'nosuch'"));
	o.type = "1g";
	o.ring_entries = 3;
	assert_int_equal(mdgpu_open(&o, &g), -EINVAL);
	o.ring_entries = 0;
	o.transport = "guest";	/* a socket is no vGPU device node */
	assert_int_equal(mdgpu_open(&o, &g), -ENXIO);
	o.transport = "vfio";	/* a socket path names no mdev */
	assert_int_equal(mdgpu_open(&o, &g), -EINVAL);
	assert_non_null(strstr(mdgpu_last_error(NULL), "names no mdev UUID"));
	o.transport = "carrier-pigeon";
	assert_int_equal(mdgpu_open(&o, &g), -EINVAL);
	/* "half" has max 2 instances; the 8 GiB sim fits only one. */
	full[0] = open_vgpu(d, "half");
	full[1] = open_vgpu(d, "half");
	o.transport = NULL;
	o.type = "1g";	/* no memory left to promise */
	assert_int_equal(mdgpu_open(&o, &g), -ENOSPC);
	mdgpu_close(full[0]);
	mdgpu_close(full[1]);
}

struct hog_arg {
	struct daemon *d;
	const char *type;
	volatile int *stop;
	uint32_t vgpu_id;
	int ok;
};

static void *hog_main(void *p)
{
	struct hog_arg *h = p;
	struct mdgpu_open_opts o = { .path = h->d->path, .type = h->type,
				     .ring_entries = 8 };
	struct mdgpu_info info;
	struct mdgpu *g;
	int bad = 0;

	if (mdgpu_open(&o, &g))
		return NULL;
	mdgpu_get_info(g, &info);
	h->vgpu_id = info.vgpu_id;
	while (!*h->stop && !bad)
		bad |= mdgpu_spin_ns(g, 1000000);	/* 1 ms kernels */
	bad |= mdgpu_synchronize(g);
	h->ok = !bad;
	/* Stats are read before the vGPUs go away. */
	while (*h->stop < 2)
		usleep(1000);
	mdgpu_close(g);
	return NULL;
}

/* The dispatcher follows the scheduler: weights 1 (1g) and 4 (4g), both
 * saturating with real-time 1 ms kernels, share GPU time about 1:4. */
static void test_weighted_dispatch(void **state)
{
	struct daemon *d = *state;
	struct mdgpud_vgpu_stats st[4];
	volatile int stop = 0;
	struct hog_arg a = { d, "1g", &stop, 0, 0 }, b = { d, "4g", &stop, 0, 0 };
	pthread_t ta, tb;
	uint64_t ga = 0, gb = 0;
	size_t n;

	daemon_stop(d);
	daemon_start_cfg(d, 1);
	assert_int_equal(pthread_create(&ta, NULL, hog_main, &a), 0);
	assert_int_equal(pthread_create(&tb, NULL, hog_main, &b), 0);
	usleep(1500000);
	stop = 1;
	while (mdgpud_core_nr_vgpus(d->core) == 2) {
		n = mdgpud_core_stats(d->core, st, 4);
		/* both synchronized: nothing queued any more */
		if (n == 2 && a.ok + b.ok == 2)
			break;
		usleep(1000);
	}
	n = mdgpud_core_stats(d->core, st, 4);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		if (st[i].vgpu_id == a.vgpu_id)
			ga = st[i].gpu_ns;
		if (st[i].vgpu_id == b.vgpu_id)
			gb = st[i].gpu_ns;
		assert_true(st[i].commands > 10);
		assert_true(st[i].wait_p99_ns >= st[i].wait_p50_ns);
	}
	stop = 2;
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_true(a.ok && b.ok);
	print_message("weighted dispatch: 1g %.1f ms, 4g %.1f ms GPU time "
		      "(ratio %.2f, weights 1:4)\n", ga / 1e6, gb / 1e6,
		      (double)gb / (double)(ga ? ga : 1));
	assert_true(ga > 0 && gb > 0);
	assert_true(gb > 2 * ga && gb < 8 * ga);
}

/* Socket permissions decide who may connect. */
static void test_socket_perms(void **state)
{
	struct daemon *d = *state;
	struct mdgpud_config cfg;
	struct mdgpud_core *core;
	struct stat st;
	int status;
	pid_t pid;

	assert_int_equal(stat(d->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	if (geteuid() != 0) {
		skip();	/* needs root to become another user */
		return;
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct mdgpu_open_opts o = { .path = d->path };
		struct mdgpu *g;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		_exit(mdgpu_open(&o, &g) == -EACCES ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);	/* refused: EACCES */

	/* A file that is not a socket is never removed to make room. */
	mdgpud_config_defaults(&cfg);
	snprintf(cfg.socket_path, sizeof(cfg.socket_path), "%s/file",
		 d->dir);
	{
		FILE *f = fopen(cfg.socket_path, "w");

		assert_non_null(f);
		fclose(f);
	}
	assert_int_equal(mdgpud_core_create(&cfg, &core), -EEXIST);
	assert_int_equal(access(cfg.socket_path, F_OK), 0);
	unlink(cfg.socket_path);

	/* An unknown socket group is a startup error, not a silent default. */
	mdgpud_config_defaults(&cfg);
	snprintf(cfg.socket_path, sizeof(cfg.socket_path), "%s/other",
		 d->dir);
	strcpy(cfg.socket_group, "no-such-group-mdgpu");
	assert_int_equal(mdgpud_core_create(&cfg, &core), -ENOENT);
	assert_int_equal(access(cfg.socket_path, F_OK), -1);
}

static uint64_t vgpu_commands(struct daemon *d)
{
	struct mdgpud_vgpu_stats st;

	assert_int_equal(mdgpud_core_stats(d->core, &st, 1), 1);
	return st.commands;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * mdgpu_synchronize() sends a SYNC only while the vGPU may be busy: not
 * after a SYNC or a copy to or from host memory completed without error
 * with nothing submitted since (include/uapi/mdgpu.h: such commands
 * complete once all work before them is done).  Counted in the daemon's
 * commands; on the cuda backend a 50 ms kernel before a 4-byte copy shows
 * that the copy did wait for it.
 */
static void test_sync_elided(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *g = open_vgpu(d, "1g");
	const uint64_t n = 1024;
	uint32_t *a = malloc(n * 4), *b = malloc(n * 4);
	mdgpu_devptr x, y;
	uint64_t c0, t0, sum;

	for (uint64_t i = 0; i < n; i++)
		a[i] = (uint32_t)(i * 3 + 1);
	assert_int_equal(mdgpu_mem_alloc(g, n * 4, &x), 0);
	assert_int_equal(mdgpu_mem_alloc(g, n * 4, &y), 0);

	/* After an allocation the vGPU may be busy for all the client
	 * knows: one SYNC; right after it, none. */
	c0 = vgpu_commands(d);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(vgpu_commands(d), c0 + 1);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(vgpu_commands(d), c0 + 1);

	/* Copies with host memory drain: no SYNC after them. */
	assert_int_equal(mdgpu_copy_htod(g, x, a, n * 4), 0);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(vgpu_commands(d), c0 + 2);
	assert_int_equal(mdgpu_copy_dtoh(g, b, x, n * 4), 0);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(vgpu_commands(d), c0 + 3);
	assert_memory_equal(a, b, n * 4);

	/* Device to device, memset and kernels do not. */
	assert_int_equal(mdgpu_copy_dtod(g, y, x, n * 4), 0);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(vgpu_commands(d), c0 + 5);
	assert_int_equal(mdgpu_memset(g, y, 0, 4), 0);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(vgpu_commands(d), c0 + 7);

	/* A kernel, then a host copy: the copy completes after the kernel,
	 * and the synchronize after it needs no round trip. */
	t0 = mono_ns();
	assert_int_equal(mdgpu_spin_ns(g, 50000000), 0);
	assert_int_equal(mdgpu_fill_u32(g, y, n, 9), 0);
	assert_int_equal(mdgpu_copy_htod(g, x, a, 4), 0);
	if (on_cuda())
		assert_true(mono_ns() - t0 >= 50000000ULL);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(vgpu_commands(d), c0 + 10);
	assert_int_equal(mdgpu_checksum(g, y, 1, &sum), 0);
	assert_int_equal(sum, 9);

	/* A copy that failed drained nothing: SYNC again, and an async
	 * error before a host copy is still reported by the synchronize. */
	assert_int_equal(mdgpu_synchronize(g), 0);
	c0 = vgpu_commands(d);
	assert_int_equal(mdgpu_copy_htod(g, x + n * 4 - 4, a, 8), -ERANGE);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(vgpu_commands(d), c0 + 2);
	assert_int_equal(mdgpu_fill_u32(g, 0xdead0000, 1, 0), 0);
	assert_int_equal(mdgpu_copy_htod(g, x, a, 4), 0);
	assert_int_equal(mdgpu_synchronize(g), -ENOENT);
	assert_int_equal(mdgpu_synchronize(g), 0);
	assert_int_equal(vgpu_commands(d), c0 + 4);

	assert_int_equal(mdgpu_mem_free(g, x), 0);
	assert_int_equal(mdgpu_mem_free(g, y), 0);
	mdgpu_close(g);
	free(a);
	free(b);
}

#define SPIN_TENANTS_MAX	2

/*
 * n tenants (type 1g, 64-entry rings) each queue two rounds of 64
 * simulated 1 ms kernels (the first round teaches the daemon the cost per
 * command); returns their statistics once each has been charged its
 * 128 ms.  GPU time is charged when a slice ends, after the completions
 * (the slice lingers for more work): hence the wait.
 */
static void spin_rounds(struct daemon *d, size_t n,
			struct mdgpud_vgpu_stats *st)
{
	struct mdgpu_open_opts o = { .path = d->path, .type = "1g",
				     .ring_entries = 64 };
	struct mdgpu *g[SPIN_TENANTS_MAX];
	bool charged = false;

	assert_true(n >= 1 && n <= SPIN_TENANTS_MAX);
	for (size_t k = 0; k < n; k++)
		assert_int_equal(mdgpu_open(&o, &g[k]), 0);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 64; i++)
			for (size_t k = 0; k < n; k++)
				assert_int_equal(mdgpu_spin_ns(g[k], 1000000),
						 0);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(mdgpu_synchronize(g[k]), 0);
	}
	for (int i = 0; i < 1000 && !charged; i++) {
		assert_int_equal(mdgpud_core_stats(d->core, st, n), n);
		charged = true;
		for (size_t k = 0; k < n; k++)
			charged = charged && st[k].gpu_ns >= 128000000ULL;
		if (!charged)
			usleep(1000);
	}
	for (size_t k = 0; k < n; k++)
		assert_true(st[k].gpu_ns >= 128000000ULL);
	for (size_t k = n; k-- > 0;)
		mdgpu_close(g[k]);
}

/*
 * Slices are bounded by GPU time, not only wall time: a slice ends once
 * its work would fill it (the budget), also when launches are queued far
 * faster than they run (simulated kernels take no wall time).  Two
 * tenants saturate: the daemon's only vGPU keeps its slice (below), so
 * the bound shows only with a neighbour.
 */
static void test_slice_bound(void **state)
{
	struct mdgpud_vgpu_stats st[2];

	spin_rounds(*state, 2, st);
	print_message("2 x 128 x 1 ms kernels ran in %" PRIu64 " + %" PRIu64
		      " slices\n", st[0].slices, st[1].slices);
	/* the second round alone needs >= 6 slices of 10 ms each */
	assert_true(st[0].slices >= 7);
	assert_true(st[1].slices >= 7);
}

/*
 * The daemon's only vGPU keeps its slice past the slice length instead of
 * draining the GPU for nobody (core/dispatch.c, mdgpud_dispatch_extend),
 * up to 100 ms of added slice lengths: 128 ms of 1 ms kernels (sim GPU
 * time) in at most 4 slices, where test_slice_bound's tenants, each with
 * a neighbour, need 13.
 */
/*
 * Waits outside the caller's lock (mdgpu_wait_*): a thread waiting for
 * its stream lets another thread of the same handle queue and finish
 * work meanwhile (the handle's calls serialised by the test's mutex, as
 * libcuda serialises them), and a wait whose completion slot the ring
 * reused before it was read asks again and still succeeds.
 */
struct waiter {
	struct mdgpu *g;
	pthread_mutex_t *lock;
	uint32_t stream;
	int ret;
	bool waiting;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;
	struct mdgpu_wait wt;
	int ret;

	pthread_mutex_lock(w->lock);
	ret = mdgpu_wait_begin_sync(w->g, w->stream, &wt);
	__atomic_store_n(&w->waiting, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(w->lock);
	if (!ret)
		mdgpu_wait_run(w->g, &wt);
	pthread_mutex_lock(w->lock);
	w->ret = ret ? ret : mdgpu_wait_end(w->g, &wt);
	pthread_mutex_unlock(w->lock);
	return NULL;
}

static void test_wait_outside_lock(void **state)
{
	struct daemon *d = *state;
	struct mdgpu *g = open_vgpu(d, "1g");
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct waiter w = { .g = g, .lock = &lock };
	struct mdgpu_info in;
	const uint64_t n = 4096;
	uint32_t *b = malloc(n * 4);
	struct mdgpu_wait wt;
	mdgpu_devptr x;
	pthread_t t;
	uint32_t s1;

	assert_non_null(b);
	assert_true(mdgpu_wait_concurrent(g));
	assert_int_equal(mdgpu_get_info(g, &in), 0);
	assert_int_equal(mdgpu_mem_alloc(g, n * 4, &x), 0);
	assert_int_equal(mdgpu_stream_create(g, 0, 0, &s1), 0);

	/* Thread A waits for all of the vGPU's work while this thread
	 * queues more, fills and copies back, under the same mutex. */
	assert_int_equal(mdgpu_spin_ns(g, 50 * 1000 * 1000), 0);
	assert_int_equal(pthread_create(&t, NULL, waiter_main, &w), 0);
	while (!__atomic_load_n(&w.waiting, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int round = 0; round < 8; round++) {
		pthread_mutex_lock(&lock);
		assert_int_equal(mdgpu_fill_u32(g, x, n, 0x1000u + round), 0);
		assert_int_equal(mdgpu_copy_dtoh(g, b, x, n * 4), 0);
		pthread_mutex_unlock(&lock);
		for (uint64_t i = 0; i < n; i++)
			assert_int_equal(b[i], 0x1000u + round);
	}
	pthread_join(t, NULL);
	assert_int_equal(w.ret, 0);

	/* A wait on stream s1 whose slot is reused before it is read: more
	 * commands than the ring holds are queued between its begin and its
	 * run (in one thread here, so the order is certain). */
	assert_int_equal(mdgpu_wait_begin_sync(g, s1, &wt), 0);
	for (uint32_t i = 0; i <= in.ring_entries; i++)
		assert_int_equal(mdgpu_fill_u32(g, x, n, i), 0);
	mdgpu_wait_run(g, &wt);
	assert_int_equal(wt.state, MDGPU_WAIT_SLOT_REUSED);
	assert_int_equal(mdgpu_wait_end(g, &wt), 0);
	assert_int_equal(mdgpu_copy_dtoh(g, b, x, n * 4), 0);
	assert_int_equal(b[0], in.ring_entries);
	assert_int_equal(b[n - 1], in.ring_entries);

	/* An event's wait, the same way; an unknown event's error comes
	 * from the end, as from mdgpu_event_synchronize. */
	assert_int_equal(mdgpu_wait_begin_event(g, 0xfffff, &wt), 0);
	mdgpu_wait_run(g, &wt);
	assert_int_equal(mdgpu_wait_end(g, &wt),
			 mdgpu_event_synchronize(g, 0xfffff));
	assert_int_not_equal(mdgpu_event_synchronize(g, 0xfffff), 0);

	assert_int_equal(mdgpu_stream_destroy(g, s1), 0);
	assert_int_equal(mdgpu_mem_free(g, x), 0);
	mdgpu_close(g);
	free(b);
}

static void test_lone_slice_extends(void **state)
{
	struct mdgpud_vgpu_stats st;

	spin_rounds(*state, 1, &st);
	print_message("128 x 1 ms kernels of the only vGPU ran in %" PRIu64
		      " slices\n", st.slices);
	assert_true(st.slices <= 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_basic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_copy, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_quota, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_module, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_host_memory, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_aperture_place, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_host_register, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_host_func, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_scrub, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenants, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_tenant, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handshake_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_weighted_dispatch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sync_elided, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_wait_outside_lock, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_lone_slice_extends, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_slice_bound, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_socket_perms, setup,
						teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
