// SPDX-License-Identifier: GPL-2.0
/*
 * t-kmod-corners.c - corner cases of mdgpu.ko that Documentation/kmod.md
 * specifies, written by the module's author on top of the rest of the
 * suite.  Linked last (VM_TEST_SRCS in vm.mk): tests run in link order, so
 * these run after t-lifecycle.c and load the module again where needed.
 */
#include "vgpu.h"

#include <linux/pci_regs.h>
#include <pthread.h>
#include <sys/eventfd.h>

static const char *mdev_status(const char *uuid)
{
	static char b[64];

	if (sysfs_read(mdev_path(uuid, "mdgpu/status"), b, sizeof(b)) < 0)
		return "?";
	return b;
}

/* Read every queued event without blocking: count, or -errno. */
static int ev_read_all(struct fx *f, struct mdgpu_ctl_event *evs, int max)
{
	int n = 0;

	while (n < max) {
		ssize_t r = read(f->ctl, &evs[n], sizeof(evs[n]));

		if (r < 0)
			return errno == EAGAIN ? n : -errno;
		if (r != sizeof(evs[n]))
			return -EIO;
		n++;
	}
	return n;
}

static void ctl_nonblock(struct fx *f)
{
	ASSERT(fcntl(f->ctl, F_SETFL, fcntl(f->ctl, F_GETFL) | O_NONBLOCK) == 0,
	       "O_NONBLOCK");
}

/*
 * A vGPU created while its parent has no daemon is idle: neither READY
 * nor BACKEND_LOST, doorbells refused with ENODEV; the next daemon gets a
 * POLICY event, then CREATE for it, and it becomes ready.
 */
TEST(kmod_idle_until_daemon, FX_PARENT)
{
	struct mdgpu_ctl_event ev;
	uint32_t status;

	close(f->ctl);
	f->ctl = -1;
	ASSERT(mdev_create(f, TYPE_1G, UUID0) == 0, "create without daemon");
	f->mdev = 1;
	EXPECT(!strcmp(mdev_status(UUID0), "idle"), "status %s",
	       mdev_status(UUID0));

	vfio_open(f);
	status = rd32(f, MDGPU_REG_STATUS);
	EXPECT(!(status & (MDGPU_STATUS_READY | MDGPU_STATUS_BACKEND_LOST)),
	       "STATUS 0x%x", status);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 1);
	EXPECT(rd32(f, MDGPU_REG_ERROR) == ENODEV, "ERROR %u",
	       rd32(f, MDGPU_REG_ERROR));
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == 0, "tail stored");
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_RING_ERROR,
	       "no RING_ERROR");

	ASSERT(daemon_register(f) == 0, "re-register");
	EXPECT(f->reg.nr_vgpus == 1, "nr_vgpus %u", f->reg.nr_vgpus);
	ASSERT(ev_wait(f, MDGPU_EV_POLICY, 0, &ev, EV_TIMEOUT_MS) == 0,
	       "no POLICY event");
	EXPECT(ev.policy.timeslice_us == MDGPU_TIMESLICE_US_DEFAULT,
	       "timeslice %u", ev.policy.timeslice_us);
	ASSERT(ev_wait(f, MDGPU_EV_CREATE, ~0U, &ev, EV_TIMEOUT_MS) == 0,
	       "no CREATE event");
	f->vgpu = ev.vgpu_id;
	EXPECT(ev_wait(f, MDGPU_EV_OPEN, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
	       "no OPEN event for the open vGPU");
	EXPECT(!strcmp(mdev_status(UUID0), "ready"), "status %s",
	       mdev_status(UUID0));
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_READY, "not READY");
}

/*
 * Events coalesce per kind and vGPU with move-to-tail, a reset drops a
 * pending doorbell, and a daemon that never reads does not grow the queue.
 */
TEST(kmod_event_coalescing_bounded, FX_VFIO)
{
	struct mdgpu_ctl_event evs[64];
	char v[16];
	int n, i, kinds[MDGPU_EV_POLICY + 1] = { 0 };

	ev_drain(f);
	ctl_nonblock(f);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 1);
	EXPECT(ioctl(f->dev, VFIO_DEVICE_RESET) == 0, "reset");
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 2);
	n = ev_read_all(f, evs, 64);
	ASSERT(n == 2, "%d events, want RESET, DOORBELL", n);
	EXPECT(evs[0].type == MDGPU_EV_RESET, "first %u", evs[0].type);
	EXPECT(evs[1].type == MDGPU_EV_DOORBELL && evs[1].doorbell.sq_tail == 2,
	       "second %u tail %u", evs[1].type, evs[1].doorbell.sq_tail);

	for (i = 0; i < 500; i++) {
		snprintf(v, sizeof(v), "%d", 1 + i % 100);
		EXPECT(sysfs_write(mdev_path(UUID0, "mdgpu/weight"), v) == 0,
		       "weight %s", v);
		EXPECT(ioctl(f->dev, VFIO_DEVICE_RESET) == 0, "reset");
		wr32(f, MDGPU_REG_CONTROL,
		     MDGPU_CONTROL_ENABLE | (i & 1 ? MDGPU_CONTROL_RESET : 0));
		wr32(f, MDGPU_REG_SQ_TAIL, 1);
	}
	n = ev_read_all(f, evs, 64);
	ASSERT(n > 0 && n <= 3, "%d events queued after 500 rounds", n);
	for (i = 0; i < n; i++) {
		EXPECT(evs[i].vgpu_id == f->vgpu, "vgpu %u", evs[i].vgpu_id);
		EXPECT(evs[i].type <= MDGPU_EV_POLICY && !kinds[evs[i].type]++,
		       "kind %u twice", evs[i].type);
	}
	EXPECT(kinds[MDGPU_EV_KNOB] == 1, "no KNOB");
	EXPECT(n >= 2 && evs[n - 2].type == MDGPU_EV_RESET &&
	       evs[n - 1].type == MDGPU_EV_DOORBELL, "order of the last two");
	for (i = 0; i < n; i++)
		if (evs[i].type == MDGPU_EV_KNOB)
			EXPECT(evs[i].knob.weight == 100, "newest weight %u",
			       evs[i].knob.weight);
}

/* INTx is level-like: an unmask with the cause still pending re-signals. */
TEST(kmod_intx_unmask_resignals, FX_VFIO)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ASSERT(efd >= 0, "eventfd");
	EXPECT(set_irq_fd(f, VFIO_PCI_INTX_IRQ_INDEX, efd) == 0, "INTx fd");
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_COMPLETION);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 1);
	EXPECT(complete(f, 1, 1, 0, MDGPU_IRQ_COMPLETION) == 0, "complete");
	EXPECT(fired(efd, EV_TIMEOUT_MS), "no INTx");
	/* Still pending: the unmask (QEMU's EOI) signals again. */
	EXPECT(set_irq_none(f, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_UNMASK, 1) == 0, "unmask");
	EXPECT(fired(efd, EV_TIMEOUT_MS), "no INTx after unmask while pending");
	/* Cleared: the unmask is silent. */
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_COMPLETION);
	EXPECT(set_irq_none(f, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_UNMASK, 1) == 0, "unmask");
	EXPECT(!fired(efd, NO_EV_MS), "INTx with nothing pending");
	/* INTX_DISABLE in the command register holds the line. */
	cfg_wr(f, PCI_COMMAND, 2, cfg_rd(f, PCI_COMMAND, 2) |
	       PCI_COMMAND_INTX_DISABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 2);
	EXPECT(complete(f, 2, 2, 0, MDGPU_IRQ_COMPLETION) == 0, "complete");
	EXPECT(!fired(efd, NO_EV_MS), "INTx while INTX_DISABLE");
	cfg_wr(f, PCI_COMMAND, 2, cfg_rd(f, PCI_COMMAND, 2) &
	       ~PCI_COMMAND_INTX_DISABLE);
	EXPECT(fired(efd, EV_TIMEOUT_MS), "no INTx once INTX_DISABLE cleared");
	close(efd);
}

/* Unmasking a pending cause in IRQ_MASK interrupts at once (MSI). */
TEST(kmod_irq_mask_unmask_pending, FX_VFIO)
{
	int efd = msi_on(f);

	wr32(f, MDGPU_REG_IRQ_MASK, 0);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 1);
	EXPECT(complete(f, 1, 1, 0, MDGPU_IRQ_COMPLETION) == 0, "complete");
	EXPECT(!fired(efd, NO_EV_MS), "MSI while masked");
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_COMPLETION | MDGPU_IRQ_ERROR);
	EXPECT(fired(efd, EV_TIMEOUT_MS), "no MSI on unmask of a pending cause");
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_COMPLETION | MDGPU_IRQ_ERROR);
	EXPECT(!fired(efd, NO_EV_MS), "MSI on a mask write that unmasks nothing");
	close(efd);
}

/* CONTROL with RESET and ENABLE: reset first, then ENABLE applies. */
TEST(kmod_control_reset_and_enable, FX_VFIO)
{
	wr32(f, MDGPU_REG_SCRATCH, 0x1234);
	ev_drain(f);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_RESET | MDGPU_CONTROL_ENABLE);
	EXPECT(rd32(f, MDGPU_REG_CONTROL) == MDGPU_CONTROL_ENABLE, "CONTROL 0x%x",
	       rd32(f, MDGPU_REG_CONTROL));
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_ENABLED, "not ENABLED");
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0, "SCRATCH survived the reset");
	EXPECT(ev_wait(f, MDGPU_EV_RESET, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
	       "no RESET event");
}

/*
 * Close resets the device (RESET then CLOSE), zeroes the memory BARs and
 * gives the next user a fresh config space.
 */
TEST(kmod_close_resets_for_next_user, FX_VFIO)
{
	struct mdgpu_ctl_event evs[16];
	uint8_t buf[64];
	int n, i, zero = 1;

	memset(buf, 0xa5, sizeof(buf));
	EXPECT(rg_rw(f, MDGPU_BAR_APERTURE, 4096, buf, sizeof(buf), 1) ==
	       sizeof(buf), "aperture write");
	wr32(f, MDGPU_REG_SCRATCH, 0xfeed);
	cfg_wr(f, PCI_BASE_ADDRESS_0, 4, 0xfe000000);
	ev_drain(f);
	ctl_nonblock(f);
	vfio_close(f);
	n = ev_read_all(f, evs, 16);
	ASSERT(n == 2, "%d events on close", n);
	EXPECT(evs[0].type == MDGPU_EV_RESET && evs[1].type == MDGPU_EV_CLOSE,
	       "events %u, %u", evs[0].type, evs[1].type);

	vfio_open(f);
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0, "SCRATCH kept");
	EXPECT(cfg_rd(f, PCI_BASE_ADDRESS_0, 4) == 0, "BAR0 address kept");
	EXPECT(rg_rw(f, MDGPU_BAR_APERTURE, 4096, buf, sizeof(buf), 0) ==
	       sizeof(buf), "aperture read");
	for (i = 0; i < (int)sizeof(buf); i++)
		zero &= !buf[i];
	EXPECT(zero, "aperture not zeroed for the next user");
}

/*
 * The daemon's mapping holds the memory: touching it after the mdev was
 * removed is safe (no crash, no kernel warning), and a new mmap of the
 * removed vGPU fails.  (A VFIO user's mapping keeps the device file, and
 * so the device, open: removal waits for it.)
 */
TEST(kmod_ctl_mapping_outlives_vgpu, FX_VFIO)
{
	size_t rsz = f->rg[MDGPU_BAR_RING].size;
	volatile uint8_t *ring;

	ring = mmap(NULL, rsz, PROT_READ | PROT_WRITE, MAP_SHARED, f->ctl,
		    MDGPU_CTL_MMAP_OFFSET(f->vgpu, MDGPU_CTL_MMAP_RING));
	ASSERT(ring != MAP_FAILED, "ctl mmap");
	ring[0] = 1;
	vfio_close(f);
	ASSERT(mdev_remove(UUID0) == 0, "remove");
	f->mdev = 0;
	ring[rsz - 1] = 3;
	EXPECT(ring[0] == 0 && ring[rsz - 1] == 3, "orphaned pages");
	EXPECT(munmap((void *)ring, rsz) == 0, "munmap ring");
	errno = 0;
	EXPECT(mmap(NULL, rsz, PROT_READ, MAP_SHARED, f->ctl,
		    MDGPU_CTL_MMAP_OFFSET(f->vgpu, MDGPU_CTL_MMAP_RING)) ==
	       MAP_FAILED && errno == ENOENT, "mmap of a removed vGPU");
}

/* A private mapping of a shared BAR is refused, through both files. */
TEST(kmod_mmap_private_refused, FX_VFIO)
{
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, f->dev,
		    f->rg[MDGPU_BAR_RING].offset) == MAP_FAILED &&
	       errno == EINVAL, "MAP_PRIVATE on the device");
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, f->ctl,
		    MDGPU_CTL_MMAP_OFFSET(f->vgpu, MDGPU_CTL_MMAP_RING)) ==
	       MAP_FAILED && errno == EINVAL, "MAP_PRIVATE on /dev/mdgpu");
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_SHARED, f->ctl,
		    MDGPU_CTL_MMAP_OFFSET(f->vgpu, 7)) == MAP_FAILED &&
	       errno == EINVAL, "unknown ctl region");
}

/* A transfer of several 1 MiB chunks at an odd offset, both ways. */
TEST(kmod_dma_multi_chunk, FX_MDEV)
{
	struct vfio_iommu_type1_dma_map map = {
		.argsz = sizeof(map),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.iova = 0x10000000ULL, .size = 4 * MIB,
	};
	size_t len = 3 * MIB + 123;
	uint8_t *guest, *in, *out;
	size_t i;
	long long before, after;

	vfio_open(f);
	guest = mmap(NULL, 4 * MIB, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(guest != MAP_FAILED, "guest memory");
	memset(guest, 0, 4 * MIB);
	map.vaddr = (uintptr_t)guest;
	ASSERT(ioctl(f->container, VFIO_IOMMU_MAP_DMA, &map) == 0, "MAP_DMA");
	in = malloc(len);
	out = malloc(len);
	ASSERT(in && out, "malloc");
	for (i = 0; i < len; i++)
		out[i] = (uint8_t)(i * 7 + 3);
	before = stat_value(UUID0, "dma_bytes");
	EXPECT(dma(f, 1, map.iova + 77, out, len) == 0, "DMA to guest");
	EXPECT(!memcmp(guest + 77, out, len), "guest bytes");
	EXPECT(guest[76] == 0 && guest[77 + len] == 0, "bytes outside");
	EXPECT(dma(f, 0, map.iova + 77, in, len) == 0, "DMA from guest");
	EXPECT(!memcmp(in, out, len), "bytes read back");
	after = stat_value(UUID0, "dma_bytes");
	EXPECT(after - before == 2 * (long long)len, "dma_bytes +%lld",
	       after - before);
	/* Running off the end of the mapping fails. */
	EXPECT(dma(f, 0, map.iova + 4 * MIB - 100, in, 200) < 0,
	       "DMA past the mapping");
	free(in);
	free(out);
	munmap(guest, 4 * MIB);
}

/* UNREGISTER: foreign file -EPERM, unknown id -ENOENT, reserved -EINVAL. */
TEST(kmod_unregister_errors, FX_PARENT)
{
	struct mdgpu_ctl_unregister u = { .parent_id = f->reg.parent_id };
	int other = open(MDGPU_CTL_DEVICE, O_RDWR | O_CLOEXEC);

	ASSERT(other >= 0, "second file");
	EXPECT_ERRNO(ioctl(other, MDGPU_CTL_UNREGISTER_GPU, &u), EPERM);
	u.parent_id = 0x7777;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_UNREGISTER_GPU, &u), ENOENT);
	u.parent_id = f->reg.parent_id;
	u.reserved = 1;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_UNREGISTER_GPU, &u), EINVAL);
	close(other);
}

/* ---- concurrency: the locks hold under parallel hostile use --------- */

struct stress {
	struct fx *f;
	volatile int stop;
	long doorbells, completes, dmas, knobs, resets;
	int bad_errno;			/* an error no path may return */
};

static void *stress_guest(void *arg)
{
	struct stress *s = arg;
	uint32_t tail = 0, v = MDGPU_CONTROL_ENABLE, mask = MDGPU_IRQ_ALL;

	while (!s->stop) {
		uint32_t head;

		/* Re-arm after the admin's resets. */
		pwrite(s->f->dev, &v, 4, s->f->rg[0].offset + MDGPU_REG_CONTROL);
		pwrite(s->f->dev, &mask, 4,
		       s->f->rg[0].offset + MDGPU_REG_IRQ_MASK);
		pread(s->f->dev, &head, 4, s->f->rg[0].offset + MDGPU_REG_SQ_HEAD);
		tail = head + 1 + (tail & 7);
		pwrite(s->f->dev, &tail, 4, s->f->rg[0].offset + MDGPU_REG_SQ_TAIL);
		s->doorbells++;
	}
	return NULL;
}

static void *stress_daemon(void *arg)
{
	struct stress *s = arg;
	struct mdgpu_ctl_event ev;
	uint8_t buf[4096];

	while (!s->stop) {
		int r;

		if (read(s->f->ctl, &ev, sizeof(ev)) == sizeof(ev) &&
		    ev.type == MDGPU_EV_DOORBELL) {
			r = complete(s->f, ev.doorbell.sq_tail, ev.doorbell.sq_tail,
				     4096, MDGPU_IRQ_COMPLETION);
			/* A reset may have moved the ring under us: ESTALE
			 * (a new generation since vgpu_gen() read it), or
			 * EINVAL (same generation, the doorbell was of the
			 * ring before). */
			if (r && r != -EINVAL && r != -ESTALE)
				s->bad_errno = -r;
			s->completes++;
		}
		r = dma(s->f, s->dmas & 1, DMA_IOVA + (s->dmas % 64) * 4096,
			buf, sizeof(buf));
		/* A reset between vgpu_gen() and the DMA: ESTALE. */
		if (r && r != -ESTALE)
			s->bad_errno = -r;
		s->dmas++;
	}
	return NULL;
}

static void *stress_admin(void *arg)
{
	struct stress *s = arg;
	char v[16];

	while (!s->stop) {
		snprintf(v, sizeof(v), "%ld", 1 + s->knobs % 100);
		if (sysfs_write(mdev_path(UUID0, "mdgpu/weight"), v))
			s->bad_errno = EIO;
		s->knobs++;
		if (!(s->knobs % 8)) {
			if (ioctl(s->f->dev, VFIO_DEVICE_RESET))
				s->bad_errno = errno;
			s->resets++;
		}
	}
	return NULL;
}

/*
 * Guest doorbells, daemon completions and DMA, admin knobs and resets, all
 * at once on one vGPU; then the daemon dies in the middle of it.  Nothing
 * may crash, hang or return an error outside the spec, and the device must
 * still work afterwards.
 */
TEST(kmod_stress_concurrent, FX_VFIO)
{
	struct stress s = { .f = f };
	pthread_t t[3];
	int efd = msi_on(f);
	uint64_t n;

	ctl_nonblock(f);
	ASSERT(pthread_create(&t[0], NULL, stress_guest, &s) == 0, "thread");
	ASSERT(pthread_create(&t[1], NULL, stress_daemon, &s) == 0, "thread");
	ASSERT(pthread_create(&t[2], NULL, stress_admin, &s) == 0, "thread");
	msleep(2000);
	s.stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("    stress: %ld doorbells, %ld completes, %ld DMAs, %ld knobs, %ld resets\n",
	       s.doorbells, s.completes, s.dmas, s.knobs, s.resets);
	EXPECT(!s.bad_errno, "unexpected errno %d (%s)", s.bad_errno,
	       strerror(s.bad_errno));
	EXPECT(s.doorbells > 0 && s.completes > 0 && s.dmas > 0 && s.resets > 0,
	       "a thread made no progress");
	EXPECT(read(efd, &n, sizeof(n)) == sizeof(n) && n > 0, "no MSI at all");

	/* The daemon dies while the guest keeps ringing. */
	s.stop = 0;
	ASSERT(pthread_create(&t[0], NULL, stress_guest, &s) == 0, "thread");
	msleep(300);
	close(f->ctl);
	f->ctl = -1;
	msleep(300);
	s.stop = 1;
	pthread_join(t[0], NULL);
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_BACKEND_LOST, "not lost");
	EXPECT(!strcmp(mdev_status(UUID0), "backend-lost"), "status %s",
	       mdev_status(UUID0));
	ASSERT(daemon_register(f) == 0, "re-register");
	EXPECT(f->reg.nr_vgpus == 1, "nr_vgpus %u", f->reg.nr_vgpus);
	EXPECT(rd32(f, MDGPU_REG_MAGIC) == MDGPU_MAGIC, "device dead");
	close(efd);
}

static void *dma_loop(void *arg)
{
	struct stress *s = arg;
	static uint8_t buf[1 << 20];

	while (!s->stop) {
		int r = dma(s->f, 0, DMA_IOVA, buf, sizeof(buf));

		/*
		 * vfio_close() unmaps the IOVA first (EINVAL/EFAULT), then
		 * closes (ENODEV); after the removal the id is gone (ENOENT).
		 */
		if (r == -ENODEV || r == -ENOENT)
			break;
		if (r && r != -EINVAL && r != -EFAULT)
			s->bad_errno = -r;
		s->dmas++;
	}
	return NULL;
}

/* Close and remove a vGPU while the daemon is in the middle of DMA. */
TEST(kmod_remove_during_dma, FX_VFIO)
{
	struct stress s = { .f = f };
	pthread_t t;

	ASSERT(pthread_create(&t, NULL, dma_loop, &s) == 0, "thread");
	msleep(200);
	vfio_close(f);
	ASSERT(mdev_remove(UUID0) == 0, "remove");
	f->mdev = 0;
	s.stop = 1;
	pthread_join(t, NULL);
	EXPECT(s.dmas > 0, "no DMA went through");
	EXPECT(!s.bad_errno, "unexpected errno %d (%s)", s.bad_errno,
	       strerror(s.bad_errno));
}

static void *remove_uuid0(void *arg)
{
	__atomic_store_n((int *)arg, mdev_remove(UUID0), __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * Removing an open mdev signals the user's REQ eventfd (QEMU unplugs the
 * device); the removal completes once the user closes the device.
 */
TEST(kmod_req_irq_on_remove, FX_VFIO)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int removed = 1;
	pthread_t t;

	ASSERT(efd >= 0, "eventfd");
	ASSERT(set_irq_fd(f, VFIO_PCI_REQ_IRQ_INDEX, efd) == 0, "REQ eventfd");
	EXPECT(set_irq_none(f, VFIO_PCI_REQ_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 1) == 0, "loopback");
	EXPECT(fired(efd, EV_TIMEOUT_MS), "no loopback REQ");
	EXPECT(set_irq_none(f, VFIO_PCI_REQ_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_UNMASK, 1) == -EINVAL,
	       "UNMASK on REQ accepted");
	ASSERT(pthread_create(&t, NULL, remove_uuid0, &removed) == 0, "thread");
	EXPECT(fired(efd, 5000), "no REQ on removal of an open mdev");
	msleep(NO_EV_MS);
	EXPECT(__atomic_load_n(&removed, __ATOMIC_SEQ_CST) == 1,
	       "remove returned while the device is open");
	vfio_close(f);
	pthread_join(t, NULL);
	EXPECT(removed == 0, "remove: %s", strerror(-removed));
	EXPECT(!path_exists(mdev_path(UUID0, NULL)), "still there");
	f->mdev = 0;
	close(efd);
}
