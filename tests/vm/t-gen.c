// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: generations (ABI 1.4).  Every reset and every open of the
 * VFIO device starts a generation; the daemon's COMPLETE and DMA of any
 * other generation are refused with -ESTALE and change nothing; a reset
 * is pending (STATUS.RESET_PENDING) until the daemon's first COMPLETE of
 * the new generation.  And who may open /dev/mdgpu.
 * Documentation/testing-vm.md describes each test.
 */
#include "vgpu.h"

#include <linux/capability.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static uint32_t status(struct fx *f)
{
	return rd32(f, MDGPU_REG_STATUS);
}

/* RESET and OPEN carry the new generation, DOORBELL the current one. */
TEST(gen_bumps_on_reset_and_open, FX_VFIO)
{
	struct mdgpu_ctl_event ev;
	uint32_t g = vgpu_gen(f);

	/* Created at 0; the fixture's open started generation 1. */
	EXPECT(g == 1, "generation %u after the first open", g);
	ev_drain(f);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 1);
	ASSERT(ev_wait(f, MDGPU_EV_DOORBELL, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no DOORBELL");
	EXPECT(ev.doorbell.gen == g, "DOORBELL generation %u, want %u",
	       ev.doorbell.gen, g);

	ASSERT(ioctl(f->dev, VFIO_DEVICE_RESET) == 0, "VFIO_DEVICE_RESET");
	ASSERT(ev_wait(f, MDGPU_EV_RESET, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no RESET");
	EXPECT(ev.gen.gen == g + 1 && vgpu_gen(f) == g + 1,
	       "after VFIO_DEVICE_RESET: event %u, sysfs %u, want %u",
	       ev.gen.gen, vgpu_gen(f), g + 1);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_RESET);
	ASSERT(ev_wait(f, MDGPU_EV_RESET, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no RESET");
	EXPECT(ev.gen.gen == g + 2, "after CONTROL.RESET: %u, want %u",
	       ev.gen.gen, g + 2);

	/* Close resets (one), the next open starts another. */
	close(f->dev);
	f->dev = -1;
	ASSERT(ev_wait(f, MDGPU_EV_RESET, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no RESET at close");
	EXPECT(ev.gen.gen == g + 3, "close: %u, want %u", ev.gen.gen, g + 3);
	f->dev = ioctl(f->group, VFIO_GROUP_GET_DEVICE_FD, UUID0);
	ASSERT(f->dev >= 0, "reopen");
	ASSERT(ev_wait(f, MDGPU_EV_OPEN, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no OPEN");
	EXPECT(ev.gen.gen == g + 4 && vgpu_gen(f) == g + 4,
	       "open: event %u, sysfs %u, want %u", ev.gen.gen, vgpu_gen(f),
	       g + 4);
	EXPECT(stat_value(UUID0, "resets") == 3, "resets %lld",
	       stat_value(UUID0, "resets"));
}

/*
 * The two failures of the VM path before generations, at the module's
 * level: a daemon that has not read the RESET yet completes old work
 * whose head lies inside the new ring (it was taken for progress of the
 * new commands), then, once it has, its heads of the new ring were
 * refused as out of range (the new work never completed).  Now the old
 * COMPLETEs are -ESTALE and change nothing, and the new ones are taken.
 */
TEST(gen_stale_complete_refused, FX_VFIO)
{
	int efd = msi_on(f);
	uint32_t g = vgpu_gen(f), st;

	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 5);
	ASSERT(complete_gen(f, g, 2, 2, 0, 0) == 0, "COMPLETE of generation %u",
	       g);
	EXPECT(!(status(f) & MDGPU_STATUS_RESET_PENDING), "RESET_PENDING "
	       "without a reset");

	/* The user resets, re-arms and rings three new commands. */
	ASSERT(ioctl(f->dev, VFIO_DEVICE_RESET) == 0, "VFIO_DEVICE_RESET");
	st = status(f);
	EXPECT((st & MDGPU_STATUS_RESET_PENDING) && (st & MDGPU_STATUS_READY),
	       "STATUS 0x%x after the reset", st);
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 3);
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == 3, "doorbell while the reset is "
	       "pending refused (ERROR %u)", rd32(f, MDGPU_REG_ERROR));
	while (fired(efd, 0))
		;
	EXPECT(complete_gen(f, g, 3, 3, 0, MDGPU_IRQ_COMPLETION) == -ESTALE,
	       "old work's head 3, inside the new ring, accepted");
	EXPECT(complete_gen(f, g, 4, 4, 0, 0) == -ESTALE, "old head 4");
	EXPECT(complete_gen(f, g, 0, 0, 0, 0) == -ESTALE, "old head 0");
	EXPECT(complete_gen(f, g + 2, 0, 0, 0, 0) == -ESTALE,
	       "a generation that has not begun");
	EXPECT(complete_gen(f, ~0U, 0, 0, 0, 0) == -ESTALE, "generation ~0");
	EXPECT(rd32(f, MDGPU_REG_SQ_HEAD) == 0 && rd32(f, MDGPU_REG_FENCE_LO) == 0,
	       "a refused COMPLETE moved SQ_HEAD %u FENCE %u",
	       rd32(f, MDGPU_REG_SQ_HEAD), rd32(f, MDGPU_REG_FENCE_LO));
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == 0, "IRQ_STATUS 0x%x",
	       rd32(f, MDGPU_REG_IRQ_STATUS));
	EXPECT(!fired(efd, NO_EV_MS), "MSI for a refused COMPLETE");
	EXPECT(status(f) & MDGPU_STATUS_RESET_PENDING,
	       "a refused COMPLETE ended the reset");

	/* The daemon takes the reset up: its first COMPLETE of g + 1. */
	ASSERT(complete_gen(f, g + 1, 0, 0, 0, 0) == 0, "COMPLETE of %u",
	       g + 1);
	st = status(f);
	EXPECT(!(st & MDGPU_STATUS_RESET_PENDING) && (st & MDGPU_STATUS_READY),
	       "STATUS 0x%x after the acknowledgement", st);
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == MDGPU_IRQ_COMPLETION,
	       "IRQ_STATUS 0x%x: the completed reset must interrupt",
	       rd32(f, MDGPU_REG_IRQ_STATUS));
	EXPECT(fired(efd, EV_TIMEOUT_MS), "no MSI when the reset completed");
	/* The new commands complete, in the new generation only. */
	ASSERT(complete_gen(f, g + 1, 3, 3, 0, 0) == 0, "new work's COMPLETE");
	EXPECT(rd32(f, MDGPU_REG_SQ_HEAD) == 3 && rd32(f, MDGPU_REG_FENCE_LO) == 3,
	       "SQ_HEAD %u FENCE %u", rd32(f, MDGPU_REG_SQ_HEAD),
	       rd32(f, MDGPU_REG_FENCE_LO));
	EXPECT(complete_gen(f, g + 1, 3, 3, 0, 0) == 0, "repeated COMPLETE");
	EXPECT(complete_gen(f, g + 1, 4, 4, 0, 0) == -EINVAL,
	       "head past the tail, current generation");
	close(efd);
}

/*
 * A reset is pending only while a daemon serves the vGPU: a daemon that
 * goes away ends it (no old work can come from a closed file), a reset
 * without a daemon is complete at once, and a re-attached daemon learns
 * the generation from the replayed OPEN.
 */
TEST(gen_reset_pending_needs_daemon, FX_VFIO)
{
	struct mdgpu_ctl_event ev;
	uint32_t st;

	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_RESET);
	EXPECT(status(f) & MDGPU_STATUS_RESET_PENDING, "no RESET_PENDING");
	close(f->ctl);			/* the daemon dies */
	f->ctl = -1;
	st = status(f);
	EXPECT((st & MDGPU_STATUS_BACKEND_LOST) &&
	       !(st & MDGPU_STATUS_RESET_PENDING), "STATUS 0x%x, daemon gone",
	       st);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_RESET);
	EXPECT(!(status(f) & MDGPU_STATUS_RESET_PENDING),
	       "a reset without a daemon is pending");
	ASSERT(daemon_register(f) == 0, "re-register");
	st = status(f);
	EXPECT((st & MDGPU_STATUS_READY) && !(st & MDGPU_STATUS_RESET_PENDING),
	       "STATUS 0x%x after re-register", st);
	ASSERT(ev_wait(f, MDGPU_EV_OPEN, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no replayed OPEN");
	EXPECT(ev.gen.gen == vgpu_gen(f), "replayed OPEN generation %u, "
	       "want %u", ev.gen.gen, vgpu_gen(f));
}

/* A DMA of an older or a later generation is refused and moves nothing. */
TEST(gen_stale_dma_refused, FX_VFIO)
{
	struct mdgpu_ctl_dma d = { .len = 16 };
	uint8_t *mem = f->dma, buf[4096], back[4096] = { 0 };
	uint32_t g = vgpu_gen(f);
	size_t i, landed = 0;

	memset(buf, 0xa5, sizeof(buf));
	ASSERT(dma_gen(f, g, 1, DMA_IOVA, buf, sizeof(buf)) == 0,
	       "DMA of generation %u", g);
	EXPECT(mem[0] == 0xa5 && mem[4095] == 0xa5, "DMA did not land");
	ASSERT(ioctl(f->dev, VFIO_DEVICE_RESET) == 0, "VFIO_DEVICE_RESET");
	memset(mem, 0, 2 * sizeof(buf));
	memset(buf, 0x5a, sizeof(buf));
	EXPECT(dma_gen(f, g, 1, DMA_IOVA, buf, sizeof(buf)) == -ESTALE,
	       "device-to-IOVA copy of the old generation");
	EXPECT(dma_gen(f, g, 1, DMA_IOVA + 4096, buf, sizeof(buf)) == -ESTALE,
	       "at another address");
	for (i = 0; i < 2 * sizeof(buf); i++)
		landed += mem[i] != 0;
	EXPECT(!landed, "%zu bytes of a refused DMA landed", landed);
	mem[0] = 0x11;
	EXPECT(dma_gen(f, g, 0, DMA_IOVA, back, sizeof(back)) == -ESTALE,
	       "IOVA-to-device copy of the old generation");
	EXPECT(back[0] == 0, "a refused read copied 0x%x", back[0]);
	EXPECT(dma_gen(f, g + 2, 1, DMA_IOVA, buf, sizeof(buf)) == -ESTALE,
	       "a generation that has not begun");
	EXPECT(dma_gen(f, g + 1, 1, DMA_IOVA, buf, sizeof(buf)) == 0 &&
	       mem[0] == 0x5a, "DMA of the new generation");
	/* The reserved word must be 0. */
	d.vgpu_id = f->vgpu;
	d.iova = DMA_IOVA;
	d.buf = (uintptr_t)buf;
	d.gen = g + 1;
	d.reserved = 1;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_DMA, &d), EINVAL);
}

/*
 * The VM whose QEMU exited and the next VM on the same mdev, with its
 * RAM at the same guest address: a device-to-IOVA copy the daemon still
 * does for the first lands nowhere in the second.
 */
TEST(gen_dma_of_closed_user_refused, FX_VFIO)
{
	uint32_t g_a = vgpu_gen(f), g_b;
	uint8_t buf[4096];
	size_t i, landed = 0;

	memset(buf, 0xee, sizeof(buf));
	vfio_close(f);			/* QEMU of VM A exits */
	vfio_open(f);			/* VM B: new RAM at DMA_IOVA */
	g_b = vgpu_gen(f);
	EXPECT(g_b == g_a + 2, "generation %u after close and open, want %u",
	       g_b, g_a + 2);
	EXPECT(dma_gen(f, g_a, 1, DMA_IOVA, buf, sizeof(buf)) == -ESTALE,
	       "A's copy reached B");
	EXPECT(dma_gen(f, g_a + 1, 1, DMA_IOVA, buf, sizeof(buf)) == -ESTALE,
	       "the close's generation");
	for (i = 0; i < sizeof(buf); i++)
		landed += ((uint8_t *)f->dma)[i] != 0;
	EXPECT(!landed, "%zu bytes of A's copy in B's memory", landed);
	EXPECT(dma_gen(f, g_b, 1, DMA_IOVA, buf, sizeof(buf)) == 0 &&
	       ((uint8_t *)f->dma)[0] == 0xee, "B's own DMA");
}

struct dma_writer {
	struct fx *f;
	uint32_t gen;
	uint8_t *buf;
	long done, stale;
	int bad;
};

/* DMA writes of one generation until the kernel refuses them. */
static void *dma_writer(void *arg)
{
	struct dma_writer *w = arg;

	for (;;) {
		int r = dma_gen(w->f, w->gen, 1, DMA_IOVA, w->buf, DMA_SIZE);

		if (r == -ESTALE) {
			w->stale++;
			return NULL;
		}
		if (r) {
			w->bad = -r;
			return NULL;
		}
		w->done++;
	}
}

/*
 * The COMPLETE that ends a reset waits for DMA in flight: once it has
 * returned, no chunk of a DMA of the old generation lands, even one that
 * had started before the reset.
 */
TEST(gen_reset_completes_after_dma, FX_VFIO)
{
	struct dma_writer w = { .f = f, .gen = vgpu_gen(f) };
	uint8_t *mem = f->dma;
	pthread_t th;
	size_t i, landed = 0;

	w.buf = malloc(DMA_SIZE);
	ASSERT(w.buf, "malloc");
	memset(w.buf, 0xc3, DMA_SIZE);
	ASSERT(pthread_create(&th, NULL, dma_writer, &w) == 0, "thread");
	while (!w.done && !w.bad)
		msleep(5);
	ASSERT(ioctl(f->dev, VFIO_DEVICE_RESET) == 0, "VFIO_DEVICE_RESET");
	ASSERT(complete_gen(f, w.gen + 1, 0, 0, 0, 0) == 0, "acknowledgement");
	memset(mem, 0, DMA_SIZE);
	pthread_join(th, NULL);
	msleep(100);
	for (i = 0; i < DMA_SIZE; i++)
		landed += mem[i] != 0;
	EXPECT(!w.bad, "DMA failed with %d (%s)", w.bad, strerror(w.bad));
	EXPECT(w.stale == 1, "the writer was not refused");
	EXPECT(!landed, "%zu bytes of the old generation landed after the "
	       "reset completed (%ld transfers before it)", landed, w.done);
	free(w.buf);
}

/*
 * /dev/mdgpu opens need CAP_SYS_ADMIN, not only the file mode: root with
 * the capability dropped (capset) is refused.
 */
TEST(ctl_open_needs_cap_sys_admin, FX_MODULE)
{
	struct stat st;
	int fd, wst = 0;
	pid_t pid;

	ASSERT(stat(MDGPU_CTL_DEVICE, &st) == 0, "stat");
	EXPECT((st.st_mode & 07777) == 0600 && st.st_uid == 0, "mode %o uid %u",
	       st.st_mode & 07777, st.st_uid);
	pid = fork();
	ASSERT(pid >= 0, "fork");
	if (!pid) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
		unsigned int i = CAP_TO_INDEX(CAP_SYS_ADMIN);

		if (syscall(SYS_capget, &h, d))
			_exit(10);
		d[i].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
		d[i].permitted &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
		d[i].inheritable &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
		if (syscall(SYS_capset, &h, d))
			_exit(11);
		if (getuid() != 0)
			_exit(12);
		fd = open(MDGPU_CTL_DEVICE, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			_exit(1);
		_exit(errno == EPERM ? 0 : 2);
	}
	ASSERT(waitpid(pid, &wst, 0) == pid, "waitpid");
	EXPECT(WIFEXITED(wst) && WEXITSTATUS(wst) == 0,
	       "root without CAP_SYS_ADMIN: child status %d (1: opened, "
	       "2: not EPERM, 10/11: capget/capset failed)",
	       WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
	fd = open(MDGPU_CTL_DEVICE, O_RDWR | O_CLOEXEC);
	EXPECT(fd >= 0, "root with CAP_SYS_ADMIN: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
}
