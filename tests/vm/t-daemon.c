// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: DMA and the control channel as the daemon sees it.
 * Documentation/testing-vm.md describes each test.
 */
#include "vgpu.h"

TEST(dma_to_and_from_guest, FX_VFIO)
{
	uint8_t *g = f->dma, buf[8192];
	size_t i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	ASSERT(dma(f, 1, DMA_IOVA + 4096 + 3, buf, sizeof(buf)) == 0,
	       "DMA write: %s", strerror(errno));
	EXPECT(!memcmp(g + 4096 + 3, buf, sizeof(buf)), "guest memory differs");
	EXPECT(g[4096 + 2] == 0 && g[4096 + 3 + sizeof(buf)] == 0,
	       "DMA wrote outside its range");
	for (i = 0; i < DMA_SIZE; i++)
		g[i] = (uint8_t)(i ^ (i >> 8));
	{
		uint8_t *big = malloc(DMA_SIZE);

		ASSERT(big);
		memset(big, 0, DMA_SIZE);
		/* The whole mapping comes back intact in one ioctl. */
		EXPECT(dma(f, 0, DMA_IOVA, big, DMA_SIZE) == 0, "DMA read");
		EXPECT(!memcmp(big, g, DMA_SIZE), "DMA read data differs");
		/* Across the 1 MiB chunk boundaries, from an odd offset. */
		for (i = 0; i < DMA_SIZE; i++)
			big[i] = (uint8_t)(i * 13 + 5);
		EXPECT(dma(f, 1, DMA_IOVA + 7, big, DMA_SIZE - 8) == 0,
		       "DMA write of %llu bytes", (unsigned long long)DMA_SIZE - 8);
		EXPECT(!memcmp(g + 7, big, DMA_SIZE - 8), "DMA write data differs");
		EXPECT(g[DMA_SIZE - 1] == (uint8_t)((DMA_SIZE - 1) ^ ((DMA_SIZE - 1) >> 8)),
		       "DMA wrote past its end");
		free(big);
	}
	EXPECT(stat_value(UUID0, "dma_bytes") >= (long long)(sizeof(buf) + DMA_SIZE),
	       "stats dma_bytes %lld", stat_value(UUID0, "dma_bytes"));
}

TEST(dma_invalid, FX_VFIO)
{
	uint8_t buf[4096] = { 0 };
	int r;

	r = dma(f, 0, UNMAPPED_IOVA, buf, sizeof(buf));
	/*
	 * What vfio_dma_rw() says is passed up (Documentation/kmod.md):
	 * type1 gives -EINVAL for an IOVA with no mapping, -EFAULT for a
	 * mapping whose pages cannot be accessed.
	 */
	EXPECT(r == -EFAULT || r == -EINVAL, "unmapped read: %d", r);
	r = dma(f, 1, UNMAPPED_IOVA, buf, sizeof(buf));
	EXPECT(r == -EFAULT || r == -EINVAL, "unmapped write: %d", r);
	r = dma(f, 0, DMA_IOVA + DMA_SIZE - 16, buf, 64);
	EXPECT(r < 0, "read straddling the mapping's end succeeded");
	EXPECT(dma(f, 0, DMA_IOVA, buf, 0) == -EINVAL, "len 0");
	EXPECT(dma(f, 0, DMA_IOVA, buf, MDGPU_DMA_MAX + 1) == -E2BIG, "len max+1");
	EXPECT(dma(f, 0, ~0ULL - 100, buf, 4096) == -EOVERFLOW, "overflow");
	EXPECT(dma(f, 0, DMA_IOVA, NULL, 16) == -EFAULT, "bad daemon buffer");
	EXPECT(dma(f, 2, DMA_IOVA, buf, 16) == -EINVAL, "write = 2");
	EXPECT(dma(f, 0, DMA_IOVA, (void *)(uintptr_t)(~0ULL - 8), 16) ==
	       -EOVERFLOW, "buf + len overflows");
	EXPECT(dma(f, 0, DMA_IOVA, buf, 16) == 0, "DMA broken after errors");
}

TEST(dma_needs_open_device, FX_MDEV)
{
	uint8_t buf[64];

	EXPECT(dma(f, 0, DMA_IOVA, buf, sizeof(buf)) == -ENODEV, "not open");
}

TEST(dma_after_unmap, FX_VFIO)
{
	struct vfio_iommu_type1_dma_unmap um = {
		.argsz = sizeof(um), .iova = DMA_IOVA, .size = DMA_SIZE,
	};
	uint8_t buf[64] = { 0 };
	int r;

	ASSERT(dma(f, 0, DMA_IOVA, buf, sizeof(buf)) == 0, "DMA while mapped");
	/* The guest (QEMU) drops the mapping: the IOVA is dead at once. */
	ASSERT(ioctl(f->container, VFIO_IOMMU_UNMAP_DMA, &um) == 0, "UNMAP_DMA");
	EXPECT(um.size == DMA_SIZE, "unmapped %llu bytes", (unsigned long long)um.size);
	r = dma(f, 1, DMA_IOVA, buf, sizeof(buf));
	EXPECT(r == -EFAULT || r == -EINVAL, "DMA after unmap: %d", r);
	munmap(f->dma, DMA_SIZE);
	f->dma = NULL;
}

TEST(two_vgpus_isolated, FX_VFIO)
{
	struct mdgpu_ctl_event ev;
	struct mdgpu_ctl_complete c = { .irq = MDGPU_IRQ_ALL };
	uint8_t buf[16];

	ASSERT(mdev_create(f, "mdgpu-2g", UUID1) == 0, "second vGPU");
	ASSERT(ev_wait(f, MDGPU_EV_CREATE, ~0U, &ev, EV_TIMEOUT_MS) == 0,
	       "no CREATE for the second vGPU");
	EXPECT(ev.vgpu_id != f->vgpu, "both vGPUs have id %u", f->vgpu);
	EXPECT(uuid_matches(ev.uuid, UUID1), "second uuid");
	EXPECT(ev.type_id == vtype_by_name("2g")->id, "type %u", ev.type_id);
	EXPECT(sysfs_num(mdev_path(UUID1, "mdgpu/vgpu_id")) == ev.vgpu_id,
	       "sysfs vgpu_id");
	/* Work reported for B never shows in A's registers. */
	c.vgpu_id = ev.vgpu_id;
	EXPECT(ioctl(f->ctl, MDGPU_CTL_COMPLETE, &c) == 0, "COMPLETE on B");
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == 0, "A got B's interrupt");
	EXPECT(sysfs_write(mdev_path(UUID1, "mdgpu/weight"), "77") == 0, "B weight");
	EXPECT(rd32(f, MDGPU_REG_WEIGHT) == vtype_by_name("1g")->default_weight,
	       "A's WEIGHT changed with B's");
	{
		struct mdgpu_ctl_dma d = { .vgpu_id = ev.vgpu_id, .iova = DMA_IOVA,
					   .buf = (uintptr_t)buf, .len = 16 };

		/* B is not open: A's guest memory is not B's to read. */
		EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_DMA, &d), ENODEV);
	}
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_SHARED, f->ctl,
		    MDGPU_CTL_MMAP_OFFSET(ev.vgpu_id + 1000, MDGPU_CTL_MMAP_RING)) ==
	       MAP_FAILED && errno == ENOENT, "mmap of an unknown vGPU");
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_SHARED, f->ctl,
		    MDGPU_CTL_MMAP_OFFSET(f->vgpu, 7)) == MAP_FAILED,
	       "mmap of an unknown region");
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, f->ctl,
		    MDGPU_CTL_MMAP_OFFSET(f->vgpu, MDGPU_CTL_MMAP_RING)) ==
	       MAP_FAILED && errno == EINVAL, "MAP_PRIVATE accepted");
	{
		/* Another daemon's file does not own these vGPUs. */
		int fd = open(MDGPU_CTL_DEVICE, O_RDWR);

		EXPECT(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
			    MDGPU_CTL_MMAP_OFFSET(f->vgpu, MDGPU_CTL_MMAP_RING)) ==
		       MAP_FAILED && errno == ENOENT, "foreign file mapped the ring");
		close(fd);
	}
}

/* The daemon's mapping holds the memory: a removed vGPU cannot pull it. */
TEST(ctl_mapping_outlives_vgpu, FX_MDEV)
{
	size_t len = MDGPU_RING_BYTES(MDGPU_RING_ENTRIES_DEFAULT);
	volatile uint32_t *ring = ctl_map(f, MDGPU_CTL_MMAP_RING, len);

	ASSERT(ring, "mmap ring");
	ring[0] = 0x1234abcd;
	ASSERT(mdev_remove(UUID0) == 0, "remove");
	f->mdev = 0;
	EXPECT(ev_wait(f, MDGPU_EV_REMOVE, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
	       "no REMOVE");
	EXPECT(ring[0] == 0x1234abcd, "mapping changed under the daemon");
	ring[len / 4 - 1] = 1;		/* still writable, no fault */
	EXPECT(munmap((void *)ring, len) == 0, "munmap");
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_SHARED, f->ctl,
		    MDGPU_CTL_MMAP_OFFSET(f->vgpu, MDGPU_CTL_MMAP_RING)) ==
	       MAP_FAILED, "mapped a removed vGPU");
}

/* A vGPU created while its parent has no daemon is idle until one comes. */
TEST(idle_vgpu_without_daemon, FX_PARENT)
{
	char b[64];

	close(f->ctl);
	f->ctl = -1;
	ASSERT(mdev_create(f, "mdgpu-1g", UUID0) == 0, "create without daemon");
	f->mdev = 1;
	EXPECT(sysfs_read(mdev_path(UUID0, "mdgpu/status"), b, sizeof(b)) > 0 &&
	       !strcmp(b, "idle"), "status '%s'", b);
	vfio_open(f);
	EXPECT(!(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_READY), "READY");
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 1);
	EXPECT(rd32(f, MDGPU_REG_ERROR) == ENODEV, "doorbell ERROR %u",
	       rd32(f, MDGPU_REG_ERROR));
	ASSERT(daemon_register(f) == 0, "register");
	EXPECT(f->reg.nr_vgpus == 1, "nr_vgpus %u", f->reg.nr_vgpus);
	EXPECT(sysfs_read(mdev_path(UUID0, "mdgpu/status"), b, sizeof(b)) > 0 &&
	       !strcmp(b, "ready"), "status '%s' after register", b);
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_READY, "not READY");
}

TEST(ctl_read_semantics, FX_MDEV)
{
	struct mdgpu_ctl_event ev[4];
	struct pollfd p = { .fd = f->ctl, .events = POLLIN };
	int fl = fcntl(f->ctl, F_GETFL);

	ev_drain(f);
	ASSERT(fcntl(f->ctl, F_SETFL, fl | O_NONBLOCK) == 0);
	EXPECT_ERRNO(read(f->ctl, ev, sizeof(ev)), EAGAIN);
	EXPECT(poll(&p, 1, 0) == 0, "POLLIN with an empty queue");
	/* Three weight changes coalesce into one KNOB event. */
	EXPECT(sysfs_write(mdev_path(UUID0, "mdgpu/weight"), "10") == 0, "w");
	EXPECT(sysfs_write(mdev_path(UUID0, "mdgpu/weight"), "11") == 0, "w");
	EXPECT(sysfs_write(mdev_path(UUID0, "mdgpu/weight"), "12") == 0, "w");
	EXPECT(poll(&p, 1, EV_TIMEOUT_MS) == 1 && (p.revents & POLLIN), "no POLLIN");
	EXPECT_ERRNO(read(f->ctl, ev, sizeof(ev[0]) - 1), EINVAL);
	EXPECT(read(f->ctl, ev, sizeof(ev)) == sizeof(ev[0]),
	       "coalesced KNOB events: not exactly one record");
	EXPECT(ev[0].type == MDGPU_EV_KNOB && ev[0].knob.weight == 12,
	       "type %u weight %u", ev[0].type, ev[0].knob.weight);
	EXPECT(ev[0].vgpu_id == f->vgpu && ev[0].parent_id == f->reg.parent_id,
	       "ids");
	EXPECT_ERRNO(read(f->ctl, ev, sizeof(ev)), EAGAIN);
	fcntl(f->ctl, F_SETFL, fl);
}

static const char *vgpu_status(const char *uuid)
{
	static char b[64];

	if (sysfs_read(mdev_path(uuid, "mdgpu/status"), b, sizeof(b)) < 0)
		return "?";
	return b;
}

/*
 * MDGPU_CTL_VGPU_EVENT: HANG and LOST set STATUS.CONTEXT_LOST, raise
 * IRQ_ERROR and count; RESTORED clears the bit, raises nothing.
 */
TEST(context_events, FX_VFIO)
{
	int efd = msi_on(f);
	uint32_t st;

	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	EXPECT(!(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_CONTEXT_LOST),
	       "CONTEXT_LOST before any event");
	EXPECT(!strcmp(vgpu_status(UUID0), "ready"), "status '%s'",
	       vgpu_status(UUID0));

	ASSERT(context_event(f, MDGPU_VGPU_EVENT_HANG) == 0, "HANG: %s",
	       strerror(errno));
	st = rd32(f, MDGPU_REG_STATUS);
	EXPECT((st & MDGPU_STATUS_CONTEXT_LOST) && (st & MDGPU_STATUS_READY),
	       "STATUS 0x%x after HANG", st);
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == MDGPU_IRQ_ERROR,
	       "IRQ_STATUS 0x%x after HANG", rd32(f, MDGPU_REG_IRQ_STATUS));
	EXPECT(fired(efd, 1000), "no MSI for HANG");
	EXPECT(!strcmp(vgpu_status(UUID0), "context-lost"), "status '%s'",
	       vgpu_status(UUID0));
	EXPECT(stat_value(UUID0, "hangs") == 1, "hangs %lld",
	       stat_value(UUID0, "hangs"));
	EXPECT(stat_value(UUID0, "contexts_lost") == 0, "contexts_lost %lld",
	       stat_value(UUID0, "contexts_lost"));
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ALL);

	ASSERT(context_event(f, MDGPU_VGPU_EVENT_RESTORED) == 0, "RESTORED");
	st = rd32(f, MDGPU_REG_STATUS);
	EXPECT(!(st & MDGPU_STATUS_CONTEXT_LOST) && (st & MDGPU_STATUS_READY),
	       "STATUS 0x%x after RESTORED", st);
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == 0, "IRQ_STATUS 0x%x after "
	       "RESTORED", rd32(f, MDGPU_REG_IRQ_STATUS));
	EXPECT(!fired(efd, NO_EV_MS), "MSI for RESTORED");
	EXPECT(!strcmp(vgpu_status(UUID0), "ready"), "status '%s'",
	       vgpu_status(UUID0));
	/* RESTORED with the bit clear is accepted and changes nothing. */
	EXPECT(context_event(f, MDGPU_VGPU_EVENT_RESTORED) == 0, "RESTORED");

	ASSERT(context_event(f, MDGPU_VGPU_EVENT_LOST) == 0, "LOST");
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_CONTEXT_LOST,
	       "no CONTEXT_LOST after LOST");
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == MDGPU_IRQ_ERROR,
	       "IRQ_STATUS 0x%x after LOST", rd32(f, MDGPU_REG_IRQ_STATUS));
	EXPECT(fired(efd, 1000), "no MSI for LOST");
	EXPECT(!strcmp(vgpu_status(UUID0), "context-lost"), "status '%s'",
	       vgpu_status(UUID0));
	EXPECT(stat_value(UUID0, "contexts_lost") == 1, "contexts_lost %lld",
	       stat_value(UUID0, "contexts_lost"));
	EXPECT(stat_value(UUID0, "hangs") == 1, "hangs %lld",
	       stat_value(UUID0, "hangs"));
	/* A second event while lost counts and interrupts again. */
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ALL);
	ASSERT(context_event(f, MDGPU_VGPU_EVENT_HANG) == 0, "HANG");
	EXPECT(fired(efd, 1000), "no MSI for a second event");
	EXPECT(stat_value(UUID0, "hangs") == 2, "hangs %lld",
	       stat_value(UUID0, "hangs"));
	close(efd);
}

/*
 * A device reset (CONTROL.RESET, VFIO_DEVICE_RESET) keeps CONTEXT_LOST:
 * only the daemon's RESTORED clears it.  The counters survive resets.
 */
TEST(context_lost_survives_reset, FX_VFIO)
{
	ASSERT(context_event(f, MDGPU_VGPU_EVENT_LOST) == 0, "LOST");
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_RESET);
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_CONTEXT_LOST,
	       "CONTROL.RESET cleared CONTEXT_LOST");
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == 0, "IRQ_STATUS 0x%x after reset",
	       rd32(f, MDGPU_REG_IRQ_STATUS));
	EXPECT(ev_wait(f, MDGPU_EV_RESET, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
	       "no RESET event");
	EXPECT(ioctl(f->dev, VFIO_DEVICE_RESET) == 0, "VFIO_DEVICE_RESET");
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_CONTEXT_LOST,
	       "VFIO_DEVICE_RESET cleared CONTEXT_LOST");
	EXPECT(!strcmp(vgpu_status(UUID0), "context-lost"), "status '%s'",
	       vgpu_status(UUID0));
	ASSERT(context_event(f, MDGPU_VGPU_EVENT_RESTORED) == 0, "RESTORED");
	EXPECT(!(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_CONTEXT_LOST),
	       "RESTORED after the reset left CONTEXT_LOST");
	EXPECT(stat_value(UUID0, "contexts_lost") == 1, "contexts_lost %lld",
	       stat_value(UUID0, "contexts_lost"));
	EXPECT(stat_value(UUID0, "resets") >= 2, "resets %lld",
	       stat_value(UUID0, "resets"));
}

/* Every malformed MDGPU_CTL_VGPU_EVENT is refused and changes nothing. */
TEST(context_event_rejects, FX_VFIO)
{
	struct mdgpu_ctl_vgpu_event e;
	static const uint32_t bad_events[] = {
		0, MDGPU_VGPU_EVENT_RESTORED + 1, 0x80000000U, ~0U,
	};
	int other;

	memset(&e, 0, sizeof(e));
	e.event = MDGPU_VGPU_EVENT_HANG;
	e.vgpu_id = f->vgpu + 1000;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_VGPU_EVENT, &e), ENOENT);
	e.vgpu_id = 0;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_VGPU_EVENT, &e), ENOENT);
	e.vgpu_id = ~0U;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_VGPU_EVENT, &e), ENOENT);
	e.vgpu_id = f->vgpu;
	for (size_t i = 0; i < ARRAY_SIZE(bad_events); i++) {
		e.event = bad_events[i];
		EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_VGPU_EVENT, &e), EINVAL);
	}
	e.event = MDGPU_VGPU_EVENT_HANG;
	e.reserved[0] = 1;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_VGPU_EVENT, &e), EINVAL);
	e.reserved[0] = 0;
	e.reserved[1] = 0x80000000U;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_VGPU_EVENT, &e), EINVAL);
	e.reserved[1] = 0;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_VGPU_EVENT, NULL), EFAULT);
	/* A file that does not own the parent cannot report for its vGPU. */
	other = open(MDGPU_CTL_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT(other >= 0);
	EXPECT_ERRNO(ioctl(other, MDGPU_CTL_VGPU_EVENT, &e), ENOENT);
	close(other);

	EXPECT(!(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_CONTEXT_LOST),
	       "a refused event set CONTEXT_LOST");
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == 0, "a refused event raised 0x%x",
	       rd32(f, MDGPU_REG_IRQ_STATUS));
	EXPECT(stat_value(UUID0, "hangs") == 0 &&
	       stat_value(UUID0, "contexts_lost") == 0, "a refused event counted");
	EXPECT(!strcmp(vgpu_status(UUID0), "ready"), "status '%s'",
	       vgpu_status(UUID0));
}

/*
 * backend-lost takes precedence over context-lost in sysfs; a daemon that
 * re-attaches creates the vGPU with a new context, so CONTEXT_LOST clears.
 */
TEST(context_lost_daemon_restart, FX_VFIO)
{
	uint32_t st;

	ASSERT(context_event(f, MDGPU_VGPU_EVENT_HANG) == 0, "HANG");
	close(f->ctl);			/* the daemon dies */
	f->ctl = -1;
	st = rd32(f, MDGPU_REG_STATUS);
	EXPECT((st & MDGPU_STATUS_BACKEND_LOST) &&
	       (st & MDGPU_STATUS_CONTEXT_LOST), "STATUS 0x%x", st);
	EXPECT(!strcmp(vgpu_status(UUID0), "backend-lost"), "status '%s'",
	       vgpu_status(UUID0));
	ASSERT(daemon_register(f) == 0, "re-register");
	st = rd32(f, MDGPU_REG_STATUS);
	EXPECT((st & MDGPU_STATUS_READY) &&
	       !(st & (MDGPU_STATUS_BACKEND_LOST | MDGPU_STATUS_CONTEXT_LOST)),
	       "STATUS 0x%x after re-register", st);
	EXPECT(!strcmp(vgpu_status(UUID0), "ready"), "status '%s'",
	       vgpu_status(UUID0));
	EXPECT(stat_value(UUID0, "hangs") == 1, "hangs %lld",
	       stat_value(UUID0, "hangs"));
}
