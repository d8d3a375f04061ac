// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: doorbell (SQ_TAIL) and completion (MDGPU_CTL_COMPLETE).
 * Documentation/testing-vm.md describes each test.
 */
#include "vgpu.h"

TEST(doorbell_event_and_complete, FX_VFIO)
{
	struct mdgpu_ctl_event ev;

	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 3);
	ASSERT(ev_wait(f, MDGPU_EV_DOORBELL, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no DOORBELL event");
	EXPECT(ev.doorbell.sq_tail == 3, "sq_tail %u", ev.doorbell.sq_tail);
	EXPECT(uuid_matches(ev.uuid, UUID0), "DOORBELL uuid");
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == 3, "SQ_TAIL");
	EXPECT(rd32(f, MDGPU_REG_ERROR) == 0, "ERROR %u", rd32(f, MDGPU_REG_ERROR));
	ASSERT(complete(f, 2, 2, 4096, 0) == 0);
	EXPECT(rd32(f, MDGPU_REG_SQ_HEAD) == 2, "SQ_HEAD");
	EXPECT(rd32(f, MDGPU_REG_FENCE_LO) == 2 && rd32(f, MDGPU_REG_FENCE_HI) == 0,
	       "FENCE");
	EXPECT(rd32(f, MDGPU_REG_FB_USED_LO) == 4096, "FB_USED");
	ASSERT(complete(f, 3, 3, 1ULL << 32, 0) == 0);
	EXPECT(rd32(f, MDGPU_REG_FB_USED_HI) == 1, "FB_USED_HI");
	EXPECT(stat_value(UUID0, "doorbells") >= 1, "stats doorbells");
	/* Doorbells not yet read coalesce: one event, the newest tail. */
	wr32(f, MDGPU_REG_SQ_TAIL, 4);
	wr32(f, MDGPU_REG_SQ_TAIL, 5);
	ASSERT(ev_wait(f, MDGPU_EV_DOORBELL, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no DOORBELL event");
	EXPECT(ev.doorbell.sq_tail == 5, "coalesced tail %u", ev.doorbell.sq_tail);
	EXPECT(ev_wait(f, MDGPU_EV_DOORBELL, f->vgpu, NULL, NO_EV_MS) == -ETIMEDOUT,
	       "two DOORBELL events for two unread doorbells");
	EXPECT(stat_value(UUID0, "completions") >= 2, "stats completions");
}

TEST(complete_validation, FX_VFIO)
{
	struct mdgpu_ctl_complete c = { .vgpu_id = f->vgpu + 1000 };

	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 2);
	EXPECT(complete(f, 3, 3, 0, 0) == -EINVAL, "head past tail");
	EXPECT(complete(f, (uint32_t)-1, 0, 0, 0) == -EINVAL, "head behind head");
	EXPECT(complete(f, 1, 1, 0, MDGPU_IRQ_ALL + 1) == -EINVAL, "irq bits");
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_COMPLETE, &c), ENOENT);
	EXPECT(rd32(f, MDGPU_REG_SQ_HEAD) == 0, "a rejected COMPLETE moved head");
	EXPECT(complete(f, 2, 2, 0, 0) == 0, "valid COMPLETE");
	/* Another daemon's file does not own this vGPU. */
	{
		int fd = open(MDGPU_CTL_DEVICE, O_RDWR);

		c.vgpu_id = f->vgpu;
		c.sq_head = 2;
		EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_COMPLETE, &c), ENOENT);
		close(fd);
	}
}

TEST(doorbell_needs_enable, FX_VFIO)
{
	wr32(f, MDGPU_REG_SQ_TAIL, 1);
	EXPECT(rd32(f, MDGPU_REG_ERROR) == EPERM, "ERROR %u",
	       rd32(f, MDGPU_REG_ERROR));
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == 0, "tail stored while disabled");
	EXPECT(ev_wait(f, MDGPU_EV_DOORBELL, f->vgpu, NULL, NO_EV_MS) == -ETIMEDOUT,
	       "DOORBELL while disabled");
}

TEST(doorbell_bad_tail, FX_VFIO)
{
	uint32_t n = rd32(f, MDGPU_REG_RING_ENTRIES);

	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, n);		/* exactly full: fine */
	EXPECT(rd32(f, MDGPU_REG_ERROR) == 0, "full ring rejected");
	EXPECT(ev_wait(f, MDGPU_EV_DOORBELL, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
	       "no DOORBELL");
	wr32(f, MDGPU_REG_SQ_TAIL, n + 1);
	EXPECT(rd32(f, MDGPU_REG_ERROR) == EINVAL, "ERROR %u",
	       rd32(f, MDGPU_REG_ERROR));
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_RING_ERROR, "no RING_ERROR");
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) & MDGPU_IRQ_ERROR, "no IRQ_ERROR");
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == n, "bad tail stored");
	EXPECT(ev_wait(f, MDGPU_EV_DOORBELL, f->vgpu, NULL, NO_EV_MS) == -ETIMEDOUT,
	       "DOORBELL for a bad tail");
	wr32(f, MDGPU_REG_SQ_TAIL, (uint32_t)-1);	/* behind head */
	EXPECT(rd32(f, MDGPU_REG_ERROR) == EINVAL, "backwards tail accepted");
}

/*
 * The register mirror in BAR2 (ABI 1.11) equals the registers after each
 * kind of change: enable, doorbell, a refused doorbell, COMPLETE with an
 * interrupt, a context event, the interrupt acknowledged, a reset; a
 * write into the mirror by the VFIO user changes no register and is
 * undone by the next update.  Each BAR0 access counts once in the stats
 * (bar0_reads, bar0_writes), reads of the mirror not at all.
 */
static void mirror_check(struct fx *f, volatile struct mdgpu_ring_mirror *m,
			 const char *when)
{
	uint64_t fence = (uint64_t)rd32(f, MDGPU_REG_FENCE_HI) << 32 |
			 rd32(f, MDGPU_REG_FENCE_LO);

	EXPECT(m->status == rd32(f, MDGPU_REG_STATUS), "%s: status 0x%x, "
	       "register 0x%x", when, m->status, rd32(f, MDGPU_REG_STATUS));
	EXPECT(m->fence == fence, "%s: fence %" PRIu64 ", register %" PRIu64,
	       when, (uint64_t)m->fence, fence);
	EXPECT(m->sq_head == rd32(f, MDGPU_REG_SQ_HEAD), "%s: sq_head %u",
	       when, m->sq_head);
	EXPECT(m->sq_tail == rd32(f, MDGPU_REG_SQ_TAIL), "%s: sq_tail %u",
	       when, m->sq_tail);
	EXPECT(m->error == rd32(f, MDGPU_REG_ERROR), "%s: error %u", when,
	       m->error);
	EXPECT(m->irq_status == rd32(f, MDGPU_REG_IRQ_STATUS),
	       "%s: irq_status 0x%x", when, m->irq_status);
	EXPECT(m->reserved == 0, "%s: reserved %u", when, m->reserved);
}

TEST(register_mirror, FX_VFIO)
{
	uint32_t entries = rd32(f, MDGPU_REG_RING_ENTRIES);
	volatile struct mdgpu_ring_mirror *m;
	long long r0, w0;
	uint8_t *ring;

	ASSERT(rd32(f, MDGPU_REG_VERSION) == MDGPU_ABI_VERSION, "VERSION");
	ASSERT(MDGPU_RING_REGION_BYTES(entries) <= f->rg[MDGPU_BAR_RING].size,
	       "no room for the mirror in BAR2");
	ring = bar_map(f, MDGPU_BAR_RING);
	ASSERT(ring, "mmap BAR2");
	m = (volatile void *)(ring + MDGPU_RING_MIRROR_OFFSET(entries));
	mirror_check(f, m, "open");
	EXPECT(m->status & MDGPU_STATUS_READY, "READY not mirrored");

	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	EXPECT(m->status & MDGPU_STATUS_ENABLED, "ENABLED not mirrored");
	mirror_check(f, m, "enable");
	wr32(f, MDGPU_REG_SQ_TAIL, 3);
	EXPECT(m->sq_tail == 3, "doorbell: sq_tail %u", m->sq_tail);
	mirror_check(f, m, "doorbell");
	ASSERT(complete(f, 2, (1ULL << 32) + 2, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(m->sq_head == 2 && m->fence == (1ULL << 32) + 2 &&
	       (m->irq_status & MDGPU_IRQ_COMPLETION), "COMPLETE: head %u "
	       "fence %" PRIu64 " irq 0x%x", m->sq_head, (uint64_t)m->fence,
	       m->irq_status);
	mirror_check(f, m, "complete");
	wr32(f, MDGPU_REG_SQ_TAIL, 3 + 2 * entries);	/* refused */
	EXPECT(m->error == EINVAL && (m->status & MDGPU_STATUS_RING_ERROR),
	       "refused doorbell: error %u status 0x%x", m->error, m->status);
	mirror_check(f, m, "refused doorbell");
	ASSERT(context_event(f, MDGPU_VGPU_EVENT_LOST) == 0);
	EXPECT(m->status & MDGPU_STATUS_CONTEXT_LOST, "CONTEXT_LOST");
	mirror_check(f, m, "context lost");
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ALL);
	EXPECT(m->irq_status == 0, "acknowledged: irq_status 0x%x",
	       m->irq_status);
	mirror_check(f, m, "acknowledged");

	/* The VFIO user's own writes: no register moves, the next update
	 * puts the device's values back. */
	m->status = 0;
	m->sq_head = 77;
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_READY,
	       "a mirror write reached STATUS");
	wr32(f, MDGPU_REG_SCRATCH, 1);
	mirror_check(f, m, "after the user's writes");

	ASSERT(ioctl(f->dev, VFIO_DEVICE_RESET) == 0, "VFIO_DEVICE_RESET");
	EXPECT(m->sq_head == 0 && m->sq_tail == 0 && m->fence == 0 &&
	       !(m->status & MDGPU_STATUS_ENABLED) &&
	       (m->status & MDGPU_STATUS_READY), "reset: head %u tail %u "
	       "status 0x%x", m->sq_head, m->sq_tail, m->status);
	mirror_check(f, m, "reset");

	/* Counting: this test is the device's only user. */
	r0 = stat_value(UUID0, "bar0_reads");
	w0 = stat_value(UUID0, "bar0_writes");
	for (int i = 0; i < 10; i++)
		(void)m->status;
	for (int i = 0; i < 5; i++)
		(void)rd32(f, MDGPU_REG_STATUS);
	wr32(f, MDGPU_REG_SCRATCH, 2);
	EXPECT(stat_value(UUID0, "bar0_reads") - r0 == 5 &&
	       stat_value(UUID0, "bar0_writes") - w0 == 1,
	       "counted %lld reads, %lld writes for 5 and 1",
	       stat_value(UUID0, "bar0_reads") - r0,
	       stat_value(UUID0, "bar0_writes") - w0);
	munmap(ring, f->rg[MDGPU_BAR_RING].size);
}
