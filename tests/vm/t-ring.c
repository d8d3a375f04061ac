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
