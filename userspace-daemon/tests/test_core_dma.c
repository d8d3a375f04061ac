// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The core's guest-IOVA paths, through a fake transport with a DMA op (as
 * the kernel transport will have): chunked copies through the bounce
 * buffer both ways, module images fetched by DMA, DMA faults and limits.
 * Also checks the transport contract: completions, fence, lost().
 */
#include <errno.h>
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
#include <unistd.h>
#include <cmocka.h>

#include "uapi/mdgpu.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

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
	.lost = f_lost, .dma = f_dma,
};

static void f_doorbell_event(void *data, uint32_t events)
{
	struct fake *f = data;
	uint64_t v;

	(void)events;
	while (read(f->efd, &v, sizeof(v)) == sizeof(v))
		;
}

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
	struct mdgpud_vgpu_params p = { 0 };

	mdgpud_log_set(MDGPUD_LOG_ERR, NULL, NULL);
	snprintf(e->path, sizeof(e->path), "/tmp/mdgpud-dma-%d.sock",
		 (int)getpid());
	mdgpud_config_defaults(&cfg);
	strcpy(cfg.socket_path, e->path);
	cfg.sim_fb_mib = 1024;
	cfg.dma_bounce_kib = 256;	/* 3 MiB copies take 12 chunks */
	assert_int_equal(mdgpud_core_create(&cfg, &e->core), 0);

	e->f.guest = calloc(1, GUEST_SIZE);
	e->f.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	e->aperture = calloc(1, 8 * MIB);
	assert_int_equal(mdgpud_core_watch(e->core, e->f.efd,
					   f_doorbell_event, &e->f), 0);
	p.type_name = "1g";
	p.ring_entries = ENTRIES;
	p.ring = e->f.ring;
	p.aperture = e->aperture;
	p.aperture_size = 8 * MIB;
	p.aperture_fd = -1;
	p.tops = &fake_tops;
	p.tpriv = &e->f;
	assert_int_equal(mdgpud_vgpu_create(e->core, &p, &e->v), 0);
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
	free(e->aperture);
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

static struct mdgpu_cmd copy_cmd(uint64_t src, uint32_t ss, uint64_t dst,
				 uint32_t ds, uint64_t len)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_COPY;
	c.copy.src = src;
	c.copy.src_space = ss;
	c.copy.dst = dst;
	c.copy.dst_space = ds;
	c.copy.len = len;
	return c;
}

static void test_iova_copies(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c;
	struct mdgpu_cpl cpl;
	uint64_t dev, calls;

	for (uint32_t i = 0; i < GUEST_SIZE; i++)
		e->f.guest[i] = (uint8_t)(i * 13 + (i >> 10));
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_MEM_ALLOC;
	c.alloc.size = 3 * MIB;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	dev = cpl.result;

	calls = e->f.dma_calls;
	c = copy_cmd(0x1000, MDGPU_SPACE_IOVA, dev, MDGPU_SPACE_DEVICE,
		     3 * MIB);
	assert_int_equal(call(e, &c).status, 0);
	assert_int_equal(e->f.dma_calls - calls, 12);	/* 256 KiB chunks */

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_BUILTIN;
	c.builtin.kernel = MDGPU_BUILTIN_CHECKSUM;
	c.builtin.arg[0] = dev;
	c.builtin.arg[1] = 3 * MIB / 4;
	cpl = call(e, &c);
	assert_int_equal(cpl.status, 0);
	assert_int_equal(cpl.result,
			 mdgpud_checksum_ref((const uint32_t *)
					     (e->f.guest + 0x1000),
					     3 * MIB / 4));

	/* Device -> guest, then compare in guest memory. */
	c = copy_cmd(dev, MDGPU_SPACE_DEVICE, 4 * MIB, MDGPU_SPACE_IOVA,
		     3 * MIB);
	assert_int_equal(call(e, &c).status, 0);
	assert_memory_equal(e->f.guest + 4 * MIB, e->f.guest + 0x1000,
			    3 * MIB);

	/* An unmapped IOVA faults; an oversized one is refused up front. */
	c = copy_cmd(GUEST_SIZE - 4096, MDGPU_SPACE_IOVA, dev,
		     MDGPU_SPACE_DEVICE, 8192);
	assert_int_equal(call(e, &c).status, -EFAULT);
	c = copy_cmd(0, MDGPU_SPACE_IOVA, dev, MDGPU_SPACE_DEVICE,
		     MDGPU_DMA_MAX + 1);
	assert_int_equal(call(e, &c).status, -E2BIG);
	c = copy_cmd(UINT64_MAX - 10, MDGPU_SPACE_IOVA, dev,
		     MDGPU_SPACE_DEVICE, 100);
	assert_int_equal(call(e, &c).status, -ERANGE);
}

static void test_iova_module(void **state)
{
	struct env *e = *state;
	struct mdgpu_cmd c;
	uint64_t calls = e->f.dma_calls;

	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_MODULE_LOAD;
	c.module_load.space = MDGPU_SPACE_IOVA;
	c.module_load.kind = MDGPU_MODULE_PTX;
	c.module_load.addr = 0;
	c.module_load.len = 4096;
	/* Fetched by DMA, then refused by sim (foreign code). */
	assert_int_equal(call(e, &c).status, -EOPNOTSUPP);
	assert_int_equal(e->f.dma_calls - calls, 1);
	c.module_load.addr = GUEST_SIZE - 100;
	assert_int_equal(call(e, &c).status, -EFAULT);
}

/* The kernel transport's knob and policy events land here. */
static void test_knobs(void **state)
{
	struct env *e = *state;

	/* The dispatcher thread owns the scheduler: stop it first. */
	mdgpud_core_stop(e->core);
	pthread_join(e->thread, NULL);
	assert_int_equal(mdgpud_vgpu_set_knobs(e->v, 4, 50, 7), 0);
	assert_int_equal(mdgpud_vgpu_set_knobs(e->v, 0, 50, 7), -EINVAL);
	assert_int_equal(mdgpud_vgpu_set_knobs(e->v, MDGPU_WEIGHT_MAX + 1, 50,
					       7), -EINVAL);
	assert_int_equal(mdgpud_vgpu_set_knobs(e->v, 1, MDGPU_CAP_MAX + 1, 7),
			 -EINVAL);
	assert_int_equal(mdgpud_vgpu_set_knobs(e->v, 1, 100,
					       MDGPU_PRIORITY_MAX + 1),
			 -EINVAL);
	assert_int_equal(mdgpud_core_set_policy(e->core,
						MDGPU_POLICY_FIXED_SHARE,
						2000), 0);
	assert_int_equal(mdgpud_core_config(e->core)->timeslice_us, 2000);
	assert_int_equal(mdgpud_core_set_policy(e->core, 99, 2000), -EINVAL);
	assert_int_equal(mdgpud_core_set_policy(e->core,
						MDGPU_POLICY_BEST_EFFORT,
						MDGPU_TIMESLICE_US_MIN - 1),
			 -EINVAL);
	assert_int_equal(mdgpud_core_config(e->core)->policy,
			 MDGPU_POLICY_FIXED_SHARE);
	/* Running again under the new policy still serves the ring. */
	assert_int_equal(pthread_create(&e->thread, NULL, run, e), 0);
	{
		struct mdgpu_cmd c;

		memset(&c, 0, sizeof(c));
		c.opcode = MDGPU_OP_SYNC;
		assert_int_equal(call(e, &c).status, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_iova_copies, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_iova_module, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_knobs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
