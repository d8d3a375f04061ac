// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: daemon loss, reset, open/close, remove, races, mdevctl
 * and module unload (last: the suite ends with rmmod).
 * Documentation/testing-vm.md describes each test.
 */
#include "vgpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/stat.h>

TEST(daemon_loss_and_reregister, FX_VFIO)
{
	struct mdgpu_ctl_event ev;
	char b[64];
	uint32_t st, parent_id = f->reg.parent_id;
	int efd = msi_on(f);

	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	close(f->ctl);			/* the daemon dies */
	f->ctl = -1;
	st = rd32(f, MDGPU_REG_STATUS);
	EXPECT(st & MDGPU_STATUS_BACKEND_LOST, "STATUS 0x%x", st);
	EXPECT(!(st & MDGPU_STATUS_READY), "still READY: 0x%x", st);
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) & MDGPU_IRQ_BACKEND_LOST,
	       "no IRQ_BACKEND_LOST");
	EXPECT(fired(efd, 1000), "no interrupt for BACKEND_LOST");
	EXPECT(sysfs_read(mdev_path(UUID0, "mdgpu/status"), b, sizeof(b)) > 0 &&
	       !strcmp(b, "backend-lost"), "sysfs status '%s'", b);
	EXPECT(path_exists(mdev_path(UUID0, NULL)), "vGPU gone with the daemon");
	wr32(f, MDGPU_REG_SQ_TAIL, 1);
	EXPECT(rd32(f, MDGPU_REG_ERROR) == ENODEV, "doorbell ERROR %u",
	       rd32(f, MDGPU_REG_ERROR));
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_RING_ERROR,
	       "no RING_ERROR");

	ASSERT(daemon_register(f) == 0, "re-register");
	EXPECT(f->reg.nr_vgpus == 1, "nr_vgpus %u", f->reg.nr_vgpus);
	EXPECT(f->reg.parent_id == parent_id, "parent_id changed");
	/* First the parent's policy, then the vGPU's state. */
	EXPECT(ev_next(f, &ev, EV_TIMEOUT_MS) == 0 && ev.type == MDGPU_EV_POLICY &&
	       ev.policy.timeslice_us == MDGPU_TIMESLICE_US_DEFAULT,
	       "first event %u (timeslice %u), want POLICY", ev.type,
	       ev.policy.timeslice_us);
	ASSERT(ev_wait(f, MDGPU_EV_CREATE, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "CREATE not replayed");
	EXPECT(uuid_matches(ev.uuid, UUID0), "replayed CREATE uuid");
	EXPECT(ev_wait(f, MDGPU_EV_OPEN, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
	       "OPEN not replayed");
	st = rd32(f, MDGPU_REG_STATUS);
	EXPECT((st & MDGPU_STATUS_READY) && !(st & MDGPU_STATUS_BACKEND_LOST),
	       "STATUS 0x%x after re-register", st);
	EXPECT(sysfs_read(mdev_path(UUID0, "mdgpu/status"), b, sizeof(b)) > 0 &&
	       !strcmp(b, "ready"), "sysfs status '%s'", b);
	/* A second daemon cannot take a parent whose daemon is live. */
	{
		int fd = open(MDGPU_CTL_DEVICE, O_RDWR);
		struct mdgpu_ctl_register r;

		reg_init(&r);
		EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EBUSY);
		close(fd);
	}
	close(efd);
}

TEST(reattach_mismatch, FX_MDEV)
{
	struct mdgpu_ctl_register r;
	char b[64];

	close(f->ctl);
	f->ctl = open(MDGPU_CTL_DEVICE, O_RDWR);
	ASSERT(f->ctl >= 0);
	reg_init(&r);
	r.fb_size = FB_SIZE * 2;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_REGISTER_GPU, &r), EINVAL);
	reg_init(&r);
	r.sm_count = SM_COUNT + 1;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_REGISTER_GPU, &r), EINVAL);
	/* Another name is fine; the parent keeps its first one. */
	reg_init(&r);
	snprintf(r.name, sizeof(r.name), "renamed");
	EXPECT(ioctl(f->ctl, MDGPU_CTL_REGISTER_GPU, &r) == 0, "re-attach");
	EXPECT(sysfs_read(parent_knob(f, "gpu_name"), b, sizeof(b)) > 0 &&
	       !strcmp(b, GPU_NAME), "gpu_name '%s'", b);
	close(f->ctl);
	f->ctl = -1;		/* teardown re-attaches again */
}

static void dirty_device(struct fx *f, volatile uint32_t *ring)
{
	wr32(f, MDGPU_REG_SCRATCH, 0x1234);
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 2);
	EXPECT(complete(f, 1, 1, 0, MDGPU_IRQ_COMPLETION) == 0, "COMPLETE");
	wr32(f, MDGPU_REG_SQ_TAIL, 9999);	/* ERROR = EINVAL */
	ring[5] = 0xabcdef01;
	ev_drain(f);
}

static void check_reset(struct fx *f, volatile uint32_t *ring)
{
	uint32_t ap = 0xffffffff;

	EXPECT(ev_wait(f, MDGPU_EV_RESET, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
	       "no RESET event");
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0, "SCRATCH");
	EXPECT(rd32(f, MDGPU_REG_IRQ_MASK) == 0, "IRQ_MASK");
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == 0, "IRQ_STATUS");
	EXPECT(rd32(f, MDGPU_REG_SQ_TAIL) == 0, "SQ_TAIL");
	EXPECT(rd32(f, MDGPU_REG_SQ_HEAD) == 0, "SQ_HEAD");
	EXPECT(rd32(f, MDGPU_REG_FENCE_LO) == 0, "FENCE");
	EXPECT(rd32(f, MDGPU_REG_ERROR) == 0, "ERROR");
	EXPECT(!(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_RING_ERROR), "RING_ERROR");
	EXPECT(rd32(f, MDGPU_REG_MAGIC) == MDGPU_MAGIC, "MAGIC");
	EXPECT(ring[5] == 0, "ring not zeroed: 0x%x", ring[5]);
	EXPECT(rg_rw(f, MDGPU_BAR_APERTURE, 0, &ap, 4, 0) == 4 && ap == 0,
	       "aperture not zeroed");
	EXPECT(stat_value(UUID0, "resets") >= 1, "stats resets");
}

TEST(reset_drops_pending_doorbell, FX_VFIO)
{
	struct mdgpu_ctl_event ev;

	ev_drain(f);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	wr32(f, MDGPU_REG_SQ_TAIL, 1);		/* not read by the daemon */
	ASSERT(ioctl(f->dev, VFIO_DEVICE_RESET) == 0);
	EXPECT(ev_next(f, &ev, EV_TIMEOUT_MS) == 0 && ev.type == MDGPU_EV_RESET,
	       "event %u, want RESET", ev.type);
	EXPECT(ev_next(f, &ev, NO_EV_MS) == -ETIMEDOUT,
	       "event %u after RESET (a stale DOORBELL?)", ev.type);
}

TEST(vfio_device_reset, FX_VFIO)
{
	volatile uint32_t *ring = bar_map(f, MDGPU_BAR_RING);
	uint32_t v = 0x77;

	ASSERT(ring, "mmap BAR2");
	EXPECT(rg_rw(f, MDGPU_BAR_APERTURE, 0, &v, 4, 1) == 4, "aperture write");
	dirty_device(f, ring);
	ASSERT(ioctl(f->dev, VFIO_DEVICE_RESET) == 0, "VFIO_DEVICE_RESET");
	check_reset(f, ring);
	munmap((void *)ring, f->rg[MDGPU_BAR_RING].size);
}

TEST(control_reset, FX_VFIO)
{
	volatile uint32_t *ring = bar_map(f, MDGPU_BAR_RING);

	ASSERT(ring, "mmap BAR2");
	dirty_device(f, ring);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_RESET);
	EXPECT(!(rd32(f, MDGPU_REG_CONTROL) & MDGPU_CONTROL_RESET), "RESET stuck");
	check_reset(f, ring);
	/* RESET and ENABLE together: reset first, then ENABLE applies. */
	wr32(f, MDGPU_REG_SCRATCH, 5);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_RESET | MDGPU_CONTROL_ENABLE);
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0, "no reset");
	EXPECT(rd32(f, MDGPU_REG_CONTROL) == MDGPU_CONTROL_ENABLE, "CONTROL 0x%x",
	       rd32(f, MDGPU_REG_CONTROL));
	munmap((void *)ring, f->rg[MDGPU_BAR_RING].size);
}

TEST(close_resets_and_restores_config, FX_VFIO)
{
	struct mdgpu_ctl_event ev;
	uint32_t bar0 = cfg_rd(f, 0x10, 4), cmd = cfg_rd(f, 0x04, 2);

	ASSERT(sysfs_write(mdev_path(UUID0, "mdgpu/weight"), "9") == 0, "weight");
	cfg_wr(f, 0x10, 4, 0xfe000000);
	cfg_wr(f, 0x04, 2, 0x6);
	cfg_wr(f, 0x42, 2, 1);
	wr32(f, MDGPU_REG_SCRATCH, 7);
	ev_drain(f);
	close(f->dev);
	f->dev = -1;
	EXPECT(ev_next(f, &ev, EV_TIMEOUT_MS) == 0 && ev.type == MDGPU_EV_RESET,
	       "first event after close %u, want RESET", ev.type);
	EXPECT(ev_next(f, &ev, EV_TIMEOUT_MS) == 0 && ev.type == MDGPU_EV_CLOSE,
	       "second event after close %u, want CLOSE", ev.type);
	f->dev = ioctl(f->group, VFIO_GROUP_GET_DEVICE_FD, UUID0);
	ASSERT(f->dev >= 0, "reopen");
	EXPECT(cfg_rd(f, 0x10, 4) == bar0, "BAR0 0x%x, want 0x%x",
	       cfg_rd(f, 0x10, 4), bar0);
	EXPECT(cfg_rd(f, 0x04, 2) == cmd, "command 0x%x", cfg_rd(f, 0x04, 2));
	EXPECT(!(cfg_rd(f, 0x42, 2) & 1), "MSI still enabled");
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0, "SCRATCH kept");
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_READY, "READY lost");
	EXPECT(rd32(f, MDGPU_REG_WEIGHT) == 9, "knob lost: WEIGHT %u",
	       rd32(f, MDGPU_REG_WEIGHT));
}

TEST(open_close_events, FX_MDEV)
{
	vfio_open(f);
	EXPECT(ev_wait(f, MDGPU_EV_OPEN, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
	       "no OPEN");
	vfio_close(f);
	EXPECT(ev_wait(f, MDGPU_EV_CLOSE, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
	       "no CLOSE");
	/* A second open works (QEMU restarts). */
	vfio_open(f);
	EXPECT(rd32(f, MDGPU_REG_MAGIC) == MDGPU_MAGIC, "MAGIC after reopen");
}

struct remover {
	int ret;
	atomic_int done;
};

static void *remove_thread(void *arg)
{
	struct remover *r = arg;

	r->ret = mdev_remove(UUID0);
	r->done = 1;
	return NULL;
}

TEST(remove_while_open, FX_VFIO)
{
	struct remover r = { 0 };
	int req = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_t th;
	int i;

	/* QEMU gives a REQ eventfd and unplugs the device when it fires. */
	EXPECT(set_irq_fd(f, VFIO_PCI_REQ_IRQ_INDEX, req) == 0, "REQ eventfd");
	ASSERT(pthread_create(&th, NULL, remove_thread, &r) == 0);
	EXPECT(fired(req, 2000), "REQ not signalled by the remove");
	msleep(NO_EV_MS);
	/* The vfio core holds the remove until the user closes. */
	EXPECT(!r.done, "remove finished while the device was open (ret %d)",
	       r.ret);
	EXPECT(rd32(f, MDGPU_REG_MAGIC) == MDGPU_MAGIC, "device dead while open");
	/* The daemon still serves the device meanwhile. */
	EXPECT(complete(f, 0, 0, 0, 0) == 0, "COMPLETE during the remove");
	vfio_close(f);
	for (i = 0; i < 50 && !r.done; i++)
		msleep(100);
	ASSERT(r.done, "remove still blocked 5 s after close");
	pthread_join(th, NULL);
	EXPECT(r.ret == 0, "remove: %s", strerror(-r.ret));
	EXPECT(!path_exists(mdev_path(UUID0, NULL)), "mdev still there");
	EXPECT(ev_wait(f, MDGPU_EV_REMOVE, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
	       "no REMOVE event");
	f->mdev = 0;
	close(req);
}

TEST(irq_req_trigger, FX_VFIO)
{
	int req = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ASSERT(set_irq_fd(f, VFIO_PCI_REQ_IRQ_INDEX, req) == 0, "REQ eventfd");
	EXPECT(set_irq_none(f, VFIO_PCI_REQ_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 1) == 0, "DATA_NONE");
	EXPECT(fired(req, 1000), "REQ DATA_NONE trigger did not signal");
	EXPECT(!fired(req, NO_EV_MS), "REQ fired on its own");
	EXPECT(set_irq_none(f, VFIO_PCI_REQ_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_MASK, 1) < 0, "REQ maskable");
	close(req);
}

/* A guest hammering the doorbell cannot grow the daemon's queue. */
TEST(event_queue_bounded, FX_VFIO)
{
	struct mdgpu_ctl_event ev[8];
	uint32_t n = rd32(f, MDGPU_REG_RING_ENTRIES);
	int fl = fcntl(f->ctl, F_GETFL), records = 0, doorbells = 0;
	ssize_t r;

	ev_drain(f);
	wr32(f, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	for (uint32_t t = 1; t <= n; t++)
		wr32(f, MDGPU_REG_SQ_TAIL, t);
	for (int i = 0; i < 2000; i++)
		wr32(f, MDGPU_REG_SQ_TAIL, n + 1);	/* refused */
	ASSERT(fcntl(f->ctl, F_SETFL, fl | O_NONBLOCK) == 0);
	while ((r = read(f->ctl, ev, sizeof(ev))) > 0)
		for (int i = 0; i < (int)(r / sizeof(ev[0])); i++, records++)
			if (ev[i].type == MDGPU_EV_DOORBELL) {
				doorbells++;
				EXPECT(ev[i].doorbell.sq_tail == n, "tail %u",
				       ev[i].doorbell.sq_tail);
			}
	fcntl(f->ctl, F_SETFL, fl);
	EXPECT(doorbells == 1, "%d DOORBELL events for %u doorbells", doorbells, n);
	EXPECT(records <= 8, "%d events queued", records);
}

/* A guest's bad accesses must not flood the host's kernel log. */
TEST(bad_accesses_not_logged_each, FX_VFIO)
{
	char before[32], after[32];
	uint64_t v = 0;

	ASSERT(run_cmd("dmesg | wc -l", before, sizeof(before)) == 0);
	for (int i = 0; i < 3000; i++) {
		rg_rw(f, 0, 0x2, &v, 4, i & 1);
		rg_rw(f, VFIO_PCI_CONFIG_REGION_INDEX, 0x400, &v, 4, 0);
	}
	wr32(f, MDGPU_REG_SQ_TAIL, 1);		/* not enabled: refused */
	ASSERT(run_cmd("dmesg | wc -l", after, sizeof(after)) == 0);
	EXPECT(atoi(after) - atoi(before) <= 20,
	       "%d kernel log lines for 6000 bad accesses",
	       atoi(after) - atoi(before));
	EXPECT(stat_value(UUID0, "bad_accesses") >= 3000, "bad_accesses %lld",
	       stat_value(UUID0, "bad_accesses"));
}

struct hammer {
	struct fx *f;
	atomic_int stop;
	long ok, gone, other;
	int other_err;
};

/* The daemon keeps completing and DMAing while the vGPU goes away. */
static void *hammer_thread(void *arg)
{
	struct hammer *h = arg;
	uint8_t buf[256];

	while (!h->stop) {
		int r1 = complete(h->f, 0, 0, 0, 0);
		int r2 = dma(h->f, h->ok & 1, DMA_IOVA, buf, sizeof(buf));

		for (int i = 0; i < 2; i++) {
			int r = i ? r2 : r1;

			/* ESTALE: the close ended the generation between
			 * vgpu_gen() and the call. */
			if (!r)
				h->ok++;
			else if (r == -ENOENT || r == -ENODEV || r == -ESTALE)
				h->gone++;
			else
				h->other++, h->other_err = r;
		}
	}
	return NULL;
}

TEST(race_close_remove_vs_daemon, FX_VFIO)
{
	struct hammer h = { .f = f };
	pthread_t th;

	ASSERT(pthread_create(&th, NULL, hammer_thread, &h) == 0);
	msleep(100);
	vfio_close(f);			/* close waits for DMA in flight */
	msleep(100);
	EXPECT(mdev_remove(UUID0) == 0, "remove under load");
	f->mdev = 0;
	msleep(100);
	h.stop = 1;
	pthread_join(th, NULL);
	printf("    race: %ld ok, %ld ENOENT/ENODEV/ESTALE, %ld other\n", h.ok, h.gone,
	       h.other);
	EXPECT(h.ok > 0 && h.gone > 0, "the race did not happen");
	EXPECT(h.other == 0, "%ld unexpected errors, last %d", h.other,
	       h.other_err);
}

TEST(mdevctl_types_start_stop, FX_PARENT)
{
	char out[8192], cmd[256];
	int rc;

	if (!path_exists("/usr/bin/mdevctl"))
		SKIP("mdevctl is not in the initramfs");
	rc = run_cmd("mdevctl types 2>&1", out, sizeof(out));
	EXPECT(rc == 0, "mdevctl types: rc %d: %s", rc, out);
	EXPECT(strstr(out, f->parent), "parent %s not listed:\n%s", f->parent, out);
	for (size_t i = 0; i < NR_VTYPES; i++) {
		char t[64];

		snprintf(t, sizeof(t), "mdgpu-%s", vtypes[i].name);
		EXPECT(strstr(out, t), "type %s not listed", t);
	}
	snprintf(cmd, sizeof(cmd), "mdevctl start -u %s -p %s -t mdgpu-1g 2>&1",
		 UUID1, f->parent);
	rc = run_cmd(cmd, out, sizeof(out));
	EXPECT(rc == 0, "%s: rc %d: %s", cmd, rc, out);
	EXPECT(path_exists(mdev_path(UUID1, NULL)), "mdevctl start made nothing");
	EXPECT(ev_wait(f, MDGPU_EV_CREATE, ~0U, NULL, EV_TIMEOUT_MS) == 0,
	       "no CREATE event");
	rc = run_cmd("mdevctl list 2>&1", out, sizeof(out));
	EXPECT(rc == 0 && strstr(out, UUID1) && strstr(out, "mdgpu-1g"),
	       "mdevctl list: rc %d: %s", rc, out);
	snprintf(cmd, sizeof(cmd), "mdevctl stop -u %s 2>&1", UUID1);
	rc = run_cmd(cmd, out, sizeof(out));
	EXPECT(rc == 0, "%s: rc %d: %s", cmd, rc, out);
	EXPECT(!path_exists(mdev_path(UUID1, NULL)), "mdevctl stop left it");
}

/* A persistent definition whose attribute sets a knob when started. */
TEST(mdevctl_define_attr_start, FX_PARENT)
{
	char out[8192], cmd[512];
	int rc;

	if (!path_exists("/usr/bin/mdevctl"))
		SKIP("mdevctl is not in the initramfs");
	snprintf(cmd, sizeof(cmd),
		 "mdevctl define -u %s -p %s -t mdgpu-2g 2>&1 && "
		 "mdevctl modify -u %s --addattr=mdgpu/weight --value=7 2>&1 && "
		 "mdevctl list -d 2>&1", UUID2, f->parent, UUID2);
	rc = run_cmd(cmd, out, sizeof(out));
	EXPECT(rc == 0 && strstr(out, UUID2), "define/modify: rc %d: %s", rc, out);
	EXPECT(!path_exists(mdev_path(UUID2, NULL)), "define created a device");
	snprintf(cmd, sizeof(cmd), "mdevctl start -u %s 2>&1", UUID2);
	rc = run_cmd(cmd, out, sizeof(out));
	EXPECT(rc == 0, "%s: rc %d: %s", cmd, rc, out);
	EXPECT(sysfs_num(mdev_path(UUID2, "mdgpu/weight")) == 7,
	       "weight %lld after start with the attribute",
	       sysfs_num(mdev_path(UUID2, "mdgpu/weight")));
	snprintf(cmd, sizeof(cmd),
		 "mdevctl stop -u %s 2>&1 && mdevctl undefine -u %s 2>&1 && "
		 "mdevctl list -d 2>&1", UUID2, UUID2);
	rc = run_cmd(cmd, out, sizeof(out));
	EXPECT(rc == 0 && !strstr(out, UUID2), "stop/undefine: rc %d: %s", rc,
	       out);
	EXPECT(!path_exists(mdev_path(UUID2, NULL)), "stop left the device");
}

TEST(rmmod_busy_then_clean, FX_VFIO)
{
	char p[300];
	int r;

	snprintf(p, sizeof(p), "/sys/class/mdev_bus/%s", f->parent);
	/*
	 * The kernel answers delete_module() for a module in use with
	 * EWOULDBLOCK (rmmod prints "Module is in use"); EBUSY is accepted
	 * too (module not live).
	 */
	r = module_unload();
	EXPECT(r == -EWOULDBLOCK || r == -EBUSY, "rmmod with daemon + VFIO: %d", r);
	close(f->ctl);
	f->ctl = -1;
	r = module_unload();
	EXPECT(r == -EWOULDBLOCK || r == -EBUSY, "rmmod with VFIO open: %d", r);
	vfio_close(f);
	r = module_unload();
	EXPECT(r == 0, "rmmod when unused: %s", strerror(-r));
	if (r == 0) {
		f->mdev = 0;
		f->registered = 0;
		EXPECT(!path_exists(p), "parent survived module exit");
		EXPECT(!path_exists(mdev_path(UUID0, NULL)), "mdev survived");
		EXPECT(!path_exists(MDGPU_CTL_DEVICE), MDGPU_CTL_DEVICE " survived");
		r = module_load();
		EXPECT(r == 0, "reload: %s", strerror(-r));
	}
}

TEST(rmmod_after_everything, FX_MODULE)
{
	/* Last test: the module unloads cleanly after the whole suite. */
	int r = module_unload();

	EXPECT(r == 0, "rmmod: %s", strerror(-r));
	EXPECT(!path_exists("/sys/module/mdgpu"), "still loaded");
}
