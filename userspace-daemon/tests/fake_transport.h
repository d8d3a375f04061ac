/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A fake transport for core tests: one vGPU whose ring lives in test memory
 * and whose "guest memory" is a buffer addressed by IOVA, driven through the
 * same per-vGPU ops table (mdgpud_vgpu_tops) the socket and kernel
 * transports implement.  setup()/teardown() start and stop a core (sim
 * backend; with FAKE_TRANSPORT_CUDA defined, the cuda backend on the fake
 * libcuda, the aperture shared through a second file as the kernel
 * transport shares it) with that vGPU; call() submits one command and
 * waits for its completion, checking the ring contract (head, fence,
 * seq).
 *
 * Define FAKE_TRANSPORT_NAME (a short string used in the socket path)
 * before including this file.  Included by test_core_dma.c and
 * test_core_reset.c; test_core_linger.c defines FAKE_TRANSPORT_OPS_ONLY
 * to take only the ring and its ops (it builds a core of its own).
 */
#ifndef MDGPUD_TEST_FAKE_TRANSPORT_H
#define MDGPUD_TEST_FAKE_TRANSPORT_H

#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>

#define ENTRIES 16
#define GUEST_SIZE (8U << 20)
#define MIB (1U << 20)

struct fake {
	uint8_t ring[MDGPU_RING_BYTES(ENTRIES)];
	uint32_t tail, head;
	uint64_t fence;
	uint32_t sleeping, lost;
	int efd;
	uint8_t *guest;		/* "guest memory", by IOVA */
	uint64_t dma_calls;
	uint32_t events[4];	/* context_event() calls, by event */
};

static uint32_t f_tail(void *p)
{
	return __atomic_load_n(&((struct fake *)p)->tail, __ATOMIC_ACQUIRE);
}

static const struct mdgpu_cmd *f_entry(void *p, uint32_t idx)
{
	return (const struct mdgpu_cmd *)(((struct fake *)p)->ring +
					  idx * MDGPU_CMD_SIZE);
}

static void f_cq_write(void *p, uint32_t idx, const struct mdgpu_cpl *cpl)
{
	memcpy(((struct fake *)p)->ring + MDGPU_RING_CQ_OFFSET(ENTRIES) +
	       idx * MDGPU_CPL_SIZE, cpl, sizeof(*cpl));
}

static void f_publish(void *p, uint32_t head, uint64_t fence, uint32_t irq,
		      uint64_t fb_used)
{
	struct fake *f = p;

	(void)irq;
	(void)fb_used;
	__atomic_store_n(&f->fence, fence, __ATOMIC_RELAXED);
	__atomic_store_n(&f->head, head, __ATOMIC_RELEASE);
}

static void f_arm(void *p, bool sleeping)
{
	__atomic_store_n(&((struct fake *)p)->sleeping, sleeping,
			 __ATOMIC_SEQ_CST);
}

static void f_ring_error(void *p, int err)
{
	(void)p;
	(void)err;
}

static void f_lost(void *p)
{
	((struct fake *)p)->lost = 1;
}

static void f_context_event(void *p, uint32_t event)
{
	struct fake *f = p;

	if (event < sizeof(f->events) / sizeof(f->events[0]))
		__atomic_add_fetch(&f->events[event], 1, __ATOMIC_SEQ_CST);
}

static int f_dma(void *p, uint64_t iova, void *buf, uint64_t len, bool write)
{
	struct fake *f = p;
	uint64_t end;

	f->dma_calls++;
	if (__builtin_add_overflow(iova, len, &end) || end > GUEST_SIZE)
		return -EFAULT;
	if (write)
		memcpy(f->guest + iova, buf, len);
	else
		memcpy(buf, f->guest + iova, len);
	return 0;
}

static const struct mdgpud_vgpu_tops fake_tops = {
	.sq_tail = f_tail, .sq_entry = f_entry, .cq_write = f_cq_write,
	.publish = f_publish, .arm = f_arm, .ring_error = f_ring_error,
	.lost = f_lost, .dma = f_dma, .context_event = f_context_event,
};

static void f_doorbell_event(void *data, uint32_t events)
{
	struct fake *f = data;
	uint64_t v;

	(void)events;
	while (read(f->efd, &v, sizeof(v)) == sizeof(v))
		;
}

/*
 * Attaches fake ring f to a core (not running yet) as a vGPU of type 1g:
 * an eventfd doorbell, watched by the core, and the 8 MiB aperture at
 * `aperture`; `aperture_fd` (or -1) is the file a backend running in
 * another process maps it from.
 */
/* fake_attach_fd() of a vGPU of type `type` with an aperture of
 * aperture_size bytes: mdgpud_vgpu_create()'s result, the vGPU in *out. */
static int fake_attach_type(struct mdgpud_core *core, struct fake *f,
			    const char *type, uint8_t *aperture,
			    uint64_t aperture_size, int aperture_fd,
			    struct mdgpud_vgpu **out)
{
	struct mdgpud_vgpu_params p = { 0 };

	f->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_int_equal(mdgpud_core_watch(core, f->efd, f_doorbell_event, f),
			 0);
	p.type_name = type;
	p.ring_entries = ENTRIES;
	p.ring = f->ring;
	p.aperture = aperture;
	p.aperture_size = aperture_size;
	p.aperture_fd = aperture_fd;
	p.tops = &fake_tops;
	p.tpriv = f;
	return mdgpud_vgpu_create(core, &p, out);
}

static struct mdgpud_vgpu *fake_attach_fd(struct mdgpud_core *core,
					  struct fake *f, uint8_t *aperture,
					  int aperture_fd)
{
	struct mdgpud_vgpu *v = NULL;

	assert_int_equal(fake_attach_type(core, f, "1g", aperture, 8 * MIB,
					  aperture_fd, &v), 0);
	return v;
}

/* fake_attach_fd() with a private aperture, returned in *aperture for
 * the caller to free(). */
__attribute__((unused))
static struct mdgpud_vgpu *fake_attach(struct mdgpud_core *core,
				       struct fake *f, uint8_t **aperture)
{
	*aperture = calloc(1, 8 * MIB);
	assert_non_null(*aperture);
	return fake_attach_fd(core, f, *aperture, -1);
}

/*
 * The aperture as the kernel transport has it: shared pages the daemon
 * maps (a memfd here, /dev/mdgpu there) and a second file of the same
 * pages for the backend's worker (the memfd reopened through /proc, as
 * MDGPU_CTL_APERTURE_FD gives another file of the module's pages).
 * Returns the daemon's mapping; *fd is the caller's to close.
 */
__attribute__((unused))
static uint8_t *fake_aperture_shared(size_t size, int *fd)
{
	char path[64];
	uint8_t *p;
	int mfd = memfd_create("fake-aperture", MFD_CLOEXEC);

	assert_true(mfd >= 0);
	assert_int_equal(ftruncate(mfd, (off_t)size), 0);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	assert_true(p != MAP_FAILED);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
	*fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(*fd >= 0);
	close(mfd);
	return p;
}

/* Queue one command on f's ring and ring (the eventfd only if the daemon
 * sleeps). */
__attribute__((unused))
static void fake_submit(struct fake *f, const struct mdgpu_cmd *c)
{
	uint32_t n = f->tail;
	uint64_t one = 1;

	memcpy(f->ring + (n % ENTRIES) * MDGPU_CMD_SIZE, c, sizeof(*c));
	__atomic_store_n(&f->tail, n + 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&f->sleeping, __ATOMIC_SEQ_CST))
		assert_int_equal(write(f->efd, &one, sizeof(one)), 8);
}

/* The worker and the fake libcuda sit next to the test's build dir. */
__attribute__((unused))
static void fake_use_built_worker(struct mdgpud_config *cfg)
{
	char self[PATH_MAX], dir[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	assert_true(n > 0);
	self[n] = 0;
	slash = strrchr(self, '/');
	assert_non_null(slash);
	*slash = 0;
	assert_true((size_t)snprintf(cfg->cuda_worker,
				     sizeof(cfg->cuda_worker),
				     "%s/../../mdgpud-worker", self) <
		    sizeof(cfg->cuda_worker));
	if (getenv("MDGPUD_TEST_REAL_CUDA"))
		return;
	snprintf(dir, sizeof(dir), "%s/../../cuda-fake", self);
	assert_int_equal(setenv("LD_LIBRARY_PATH", dir, 1), 0);
}

#ifndef FAKE_TRANSPORT_OPS_ONLY
struct env {
	struct mdgpud_core *core;
	pthread_t thread;
	struct fake f;
	uint8_t *aperture;
	struct mdgpud_vgpu *v;
	char path[96];
};

static void *run(void *arg)
{
	mdgpud_core_run(((struct env *)arg)->core);
	return NULL;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	struct mdgpud_config cfg;

	mdgpud_log_set(MDGPUD_LOG_ERR, NULL, NULL);
	snprintf(e->path, sizeof(e->path), "/tmp/mdgpud-%s-%d.sock",
		 FAKE_TRANSPORT_NAME, (int)getpid());
	mdgpud_config_defaults(&cfg);
	strcpy(cfg.socket_path, e->path);
	cfg.sim_fb_mib = 1024;
	cfg.dma_bounce_kib = 256;	/* 3 MiB copies take 12 chunks */
#ifdef FAKE_TRANSPORT_CUDA
	strcpy(cfg.backend, "cuda");
	cfg.cuda_fb_reserve_mib = 1;
	cfg.ctx_overhead_mib = 0;
	fake_use_built_worker(&cfg);
#endif
	assert_int_equal(mdgpud_core_create(&cfg, &e->core), 0);

	e->f.guest = calloc(1, GUEST_SIZE);
#ifdef FAKE_TRANSPORT_CUDA
	{
		int fd;

		e->aperture = fake_aperture_shared(8 * MIB, &fd);
		e->v = fake_attach_fd(e->core, &e->f, e->aperture, fd);
		close(fd);	/* the core keeps its own, as kernel.c does */
	}
#else
	e->v = fake_attach(e->core, &e->f, &e->aperture);
#endif
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	mdgpud_core_destroy(e->core);	/* destroys our vGPU, calls lost() */
	assert_int_equal(e->f.lost, 1);
	close(e->f.efd);
	free(e->f.guest);
#ifdef FAKE_TRANSPORT_CUDA
	munmap(e->aperture, 8 * MIB);
#else
	free(e->aperture);
#endif
	free(e);
	return 0;
}

static struct mdgpu_cpl call(struct env *e, const struct mdgpu_cmd *c)
{
	struct fake *f = &e->f;
	uint32_t n = f->tail;
	uint64_t one = 1;
	struct mdgpu_cpl cpl;

	memcpy(f->ring + (n % ENTRIES) * MDGPU_CMD_SIZE, c, sizeof(*c));
	__atomic_store_n(&f->tail, n + 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&f->sleeping, __ATOMIC_SEQ_CST))
		assert_int_equal(write(f->efd, &one, sizeof(one)), 8);
	for (int i = 0; i < 100000 &&
	     __atomic_load_n(&f->head, __ATOMIC_ACQUIRE) != n + 1; i++)
		usleep(10);
	assert_int_equal(f->head, n + 1);
	assert_int_equal(f->fence, n + 1);
	memcpy(&cpl, f->ring + MDGPU_RING_CQ_OFFSET(ENTRIES) +
	       (n % ENTRIES) * MDGPU_CPL_SIZE, sizeof(cpl));
	assert_int_equal(cpl.seq, n);
	return cpl;
}

#endif /* !FAKE_TRANSPORT_OPS_ONLY */

#endif /* MDGPUD_TEST_FAKE_TRANSPORT_H */
