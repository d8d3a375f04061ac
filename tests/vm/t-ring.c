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

/* MDGPU_CTL_COMPLETE_TAIL as the daemon sends it; -errno or 0. */
static int complete_tail(struct fx *f, uint32_t gen, uint32_t tail,
			 uint32_t head, uint32_t irq, uint32_t flags)
{
	struct mdgpu_ctl_complete_tail ct = {
		.c = { .vgpu_id = f->vgpu, .sq_head = head, .fence = head,
		       .irq = irq, .gen = gen },
		.sq_tail = tail, .flags = flags,
	};

	return ioctl(f->ctl, MDGPU_CTL_COMPLETE_TAIL, &ct) ? -errno : 0;
}

/*
 * The shadow doorbell (ABI 1.13): the VFIO user's BAR2 and the daemon's
 * ring mapping share it; a tail written there while the daemon polls
 * takes no BAR0 access and queues no DOORBELL event, and the daemon's
 * COMPLETE_TAIL makes it SQ_TAIL (a shadow doorbell in the stats, the
 * mirror updated) where COMPLETE alone is refused.  COMPLETE_TAIL checks
 * the tail as the BAR0 doorbell does (backwards, more than entries past
 * SQ_HEAD, flags, a disabled device: EINVAL with nothing changed, head
 * and tail both or neither; another generation ESTALE), and keeps a
 * BAR0 doorbell that went past it.  Whatever the user writes into the
 * shadow, the BAR0 doorbell still works.  A reset zeroes the shadow.
 */
TEST(shadow_doorbell, FX_VFIO)
{
	uint32_t n = rd32(f, MDGPU_REG_RING_ENTRIES), gen = vgpu_gen(f);
	size_t len = f->rg[MDGPU_BAR_RING].size;
	volatile struct mdgpu_ring_shadow *ush, *dsh;
	volatile struct mdgpu_ring_mirror *m;
	struct mdgpu_ctl_event ev;
	long long db0, w0;
	uint8_t *ring, *dring;

	ASSERT(MDGPU_RING_REGION_BYTES(n) <= len, "no room for the shadow");
	ring = bar_map(f, MDGPU_BAR_RING);
	dring = ctl_map(f, MDGPU_CTL_MMAP_RING, len);
	ASSERT(ring && dring, "mmap BAR2 / the daemon's ring");
	ush = (volatile void *)(ring + MDGPU_RING_SHADOW_OFFSET(n));
	dsh = (volatile void *)(dring + MDGPU_RING_SHADOW_OFFSET(n));
	m = (volatile void *)(ring + MDGPU_RING_MIRROR_OFFSET(n));
	EXPECT(ush->sq_tail == 0 && ush->daemon_polling == 0,
	       "shadow after open: tail %u polling %u", ush->sq_tail,
	       ush->daemon_polling);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	ev_drain(f);

	/* The daemon polls; the user's submission is a store, no access. */
	db0 = stat_value(UUID0, "doorbells");
	w0 = stat_value(UUID0, "bar0_writes");
	dsh->daemon_polling = 1;
	ush->sq_tail = 3;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	EXPECT(ush->daemon_polling == 1, "polling not shared");
	EXPECT(dsh->sq_tail == 3, "the daemon reads tail %u", dsh->sq_tail);
	EXPECT(ev_wait(f, MDGPU_EV_DOORBELL, f->vgpu, NULL, NO_EV_MS) ==
	       -ETIMEDOUT, "DOORBELL event without a BAR0 doorbell");
	EXPECT(stat_value(UUID0, "bar0_writes") == w0, "BAR0 written");
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == 0, "SQ_TAIL moved");
	/* COMPLETE knows only SQ_TAIL: head 2 is past it. */
	EXPECT(complete(f, 2, 2, 0, 0) == -EINVAL, "COMPLETE past SQ_TAIL");
	EXPECT(complete_tail(f, gen, 3, 2, MDGPU_IRQ_COMPLETION, 0) == 0,
	       "COMPLETE_TAIL of the shadow's tail");
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == 3 &&
	       rd32(f, MDGPU_REG_SQ_HEAD) == 2, "tail %u head %u",
	       rd32(f, MDGPU_REG_SQ_TAIL), rd32(f, MDGPU_REG_SQ_HEAD));
	EXPECT(m->sq_tail == 3 && m->sq_head == 2 &&
	       (m->irq_status & MDGPU_IRQ_COMPLETION), "mirror: tail %u "
	       "head %u irq 0x%x", m->sq_tail, m->sq_head, m->irq_status);
	EXPECT(stat_value(UUID0, "shadow_doorbells") == 1, "shadow_doorbells "
	       "%lld", stat_value(UUID0, "shadow_doorbells"));
	EXPECT(stat_value(UUID0, "doorbells") == db0, "BAR0 doorbells %lld",
	       stat_value(UUID0, "doorbells") - db0);
	/* The same tail again is no new doorbell. */
	EXPECT(complete_tail(f, gen, 3, 3, 0, 0) == 0, "same tail");
	EXPECT(stat_value(UUID0, "shadow_doorbells") == 1, "counted twice");

	/* Whatever the user writes into the shadow, BAR0 still works. */
	ush->sq_tail = 0xdeadbeef;
	ush->reserved0 = 7;
	wr32(f, MDGPU_REG_SQ_TAIL, 5);
	ASSERT(ev_wait(f, MDGPU_EV_DOORBELL, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no DOORBELL event");
	EXPECT(ev.doorbell.sq_tail == 5 && rd32(f, MDGPU_REG_ERROR) == 0,
	       "doorbell tail %u error %u", ev.doorbell.sq_tail,
	       rd32(f, MDGPU_REG_ERROR));
	/* A shadow tail the BAR0 doorbell passed since: SQ_TAIL stays. */
	EXPECT(complete_tail(f, gen, 4, 4, 0, 0) == 0, "tail behind SQ_TAIL");
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == 5, "SQ_TAIL went back to %u",
	       rd32(f, MDGPU_REG_SQ_TAIL));

	/* Refused, nothing changed: head 4, tail 5. */
	EXPECT(complete_tail(f, gen, 4 + n + 1, 4, 0, 0) == -EINVAL,
	       "tail more than entries past the head");
	EXPECT(complete_tail(f, gen, 3, 4, 0, 0) == -EINVAL, "tail behind "
	       "the head");
	EXPECT(complete_tail(f, gen, 0x80000004u, 4, 0, 0) == -EINVAL,
	       "tail 2^31 ahead");
	EXPECT(complete_tail(f, gen, 6, 4, 0, 1) == -EINVAL, "flags");
	EXPECT(complete_tail(f, gen, 6, 7, 0, 0) == -EINVAL, "head past the "
	       "new tail");
	EXPECT(complete_tail(f, gen, 6, 5, MDGPU_IRQ_ALL + 1, 0) == -EINVAL,
	       "irq bits");
	EXPECT(complete_tail(f, gen - 1, 6, 5, 0, 0) == -ESTALE, "old gen");
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == 5 &&
	       rd32(f, MDGPU_REG_SQ_HEAD) == 4, "a refused COMPLETE_TAIL "
	       "changed tail %u head %u", rd32(f, MDGPU_REG_SQ_TAIL),
	       rd32(f, MDGPU_REG_SQ_HEAD));
	/* Exactly full is fine, as for the BAR0 doorbell. */
	EXPECT(complete_tail(f, gen, 4 + n, 4, 0, 0) == 0, "full ring");
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == 4 + n, "SQ_TAIL %u",
	       rd32(f, MDGPU_REG_SQ_TAIL));
	EXPECT(complete_tail(f, gen, 4 + n, 5, 0, 0) == 0, "head 5");
	/* Disabled: no tail moves forward; completing without a move is
	 * still COMPLETE. */
	wr32(f, MDGPU_REG_CONTROL, 0);
	EXPECT(complete_tail(f, gen, 5 + n, 5, 0, 0) == -EINVAL,
	       "tail taken while disabled");
	EXPECT(complete_tail(f, gen, 4 + n, 6, 0, 0) == 0, "complete while "
	       "disabled");
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == 4 + n &&
	       rd32(f, MDGPU_REG_SQ_HEAD) == 6, "tail %u head %u",
	       rd32(f, MDGPU_REG_SQ_TAIL), rd32(f, MDGPU_REG_SQ_HEAD));
	/* A tail stored while disabled is not the ring's: enabling sets
	 * the shadow's tail back to SQ_TAIL (before the mirror says so). */
	ush->sq_tail = 4 + n + 2;
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	EXPECT(ush->sq_tail == 4 + n && (m->status & MDGPU_STATUS_ENABLED),
	       "shadow tail %u after enable, SQ_TAIL %u", ush->sq_tail, 4 + n);
	/* Enabling an enabled device leaves it: the daemon may not have
	 * taken it yet. */
	ush->sq_tail = 4 + n + 1;
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	EXPECT(ush->sq_tail == 4 + n + 1, "shadow tail %u after a second "
	       "enable", ush->sq_tail);

	/* A reset zeroes the shadow, the daemon's field too. */
	dsh->daemon_polling = 1;
	ush->sq_tail = 9;
	ASSERT(ioctl(f->dev, VFIO_DEVICE_RESET) == 0, "VFIO_DEVICE_RESET");
	EXPECT(ush->sq_tail == 0 && ush->daemon_polling == 0 &&
	       ush->reserved0 == 0, "shadow after reset: tail %u polling %u",
	       ush->sq_tail, ush->daemon_polling);
	EXPECT(m->status & MDGPU_STATUS_READY, "mirror zeroed by the reset");
	munmap(dring, len);
	munmap(ring, len);
}
