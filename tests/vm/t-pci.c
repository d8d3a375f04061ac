// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: the GPU's own PCI device as the mdev parent, with QEMU's
 * edu device standing in for the GPU (run-vm.sh adds it; the fixture
 * registers it with MDGPU_REGISTER_F_PCI, so every other test runs on the
 * PCI parent too).  Here: the sysfs layout, mdevctl by PCI address, bad
 * and duplicate registrations, the virtual parent of a registration
 * without a PCI address, unregister, and the driver unbinding or the
 * device going away while registered.  Documentation/testing-vm.md.
 */
#include "vgpu.h"

#include <limits.h>

static const char *need_pci(void)
{
	const char *bdf = gpu_pci();

	if (!bdf)
		SKIP("no edu PCI device in the guest (run-vm.sh adds -device edu)");
	return bdf;
}

/* /sys/bus/pci/devices/<edu>[/attr] */
static const char *pci_path(const char *attr)
{
	static char p[384];

	snprintf(p, sizeof(p), "/sys/bus/pci/devices/%.63s%s%.255s", gpu_pci(),
		 attr ? "/" : "", attr ? attr : "");
	return p;
}

/* Both paths resolve to the same sysfs directory. */
static int same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

/* @child resolves to a directory below @dir. */
static int below(const char *child, const char *dir)
{
	char rc[PATH_MAX], rd[PATH_MAX];
	size_t n;

	if (!realpath(child, rc) || !realpath(dir, rd))
		return 0;
	n = strlen(rd);
	return !strncmp(rc, rd, n) && rc[n] == '/';
}

/* Nothing of parent @id is left in sysfs, under edu or elsewhere. */
static void expect_no_parent(uint32_t id)
{
	char p[300];

	EXPECT(!path_exists(pci_path("mdev_supported_types")),
	       "%s left", pci_path("mdev_supported_types"));
	EXPECT(!path_exists(pci_path("mdgpu")), "%s left", pci_path("mdgpu"));
	snprintf(p, sizeof(p), "/sys/class/mdev_bus/%s", gpu_pci());
	EXPECT(!path_exists(p), "%s left", p);
	snprintf(p, sizeof(p), "/sys/class/mdgpu/mdgpu%u", id);
	EXPECT(!path_exists(p), "%s left", p);
}

TEST(pci_parent_sysfs, FX_PARENT)
{
	const char *bdf = need_pci();
	char p[300], q[300];

	EXPECT(f->reg.flags == MDGPU_REGISTER_F_PCI, "flags 0x%x", f->reg.flags);
	EXPECT(!strcmp(f->reg.bus_id, bdf), "bus_id '%s'", f->reg.bus_id);
	EXPECT(!strcmp(f->parent, bdf), "parent_name '%s'", f->parent);
	for (size_t i = 0; i < NR_VTYPES; i++) {
		snprintf(p, sizeof(p), "mdev_supported_types/mdgpu-%s/available_instances",
			 vtypes[i].name);
		EXPECT(sysfs_num(pci_path(p)) >= 0, "%s: %lld", pci_path(p),
		       sysfs_num(pci_path(p)));
	}
	snprintf(p, sizeof(p), "/sys/class/mdev_bus/%s", bdf);
	EXPECT(same_dir(p, pci_path(NULL)), "%s is not the PCI device", p);
	/* mdgpu<id> keeps the knobs, below the PCI device and linked back. */
	snprintf(p, sizeof(p), "/sys/class/mdgpu/mdgpu%u/device", f->reg.parent_id);
	EXPECT(same_dir(p, pci_path(NULL)), "%s is not the PCI device", p);
	snprintf(q, sizeof(q), "mdgpu/mdgpu%u", f->reg.parent_id);
	EXPECT(path_exists(pci_path(q)), "%s missing", pci_path(q));
	EXPECT(sysfs_read(parent_knob(f, "policy"), p, sizeof(p)) > 0 &&
	       !strcmp(p, "best-effort"), "policy '%s'", p);
	snprintf(p, sizeof(p), "/sys/class/mdev_bus/mdgpu%u", f->reg.parent_id);
	EXPECT(!path_exists(p), "%s: mdgpu<id> is an mdev parent too", p);
}

/* mdevctl by PCI address; the vGPU lives under the PCI device and works. */
TEST(pci_parent_mdevctl, FX_PARENT)
{
	const char *bdf = need_pci();
	struct mdgpu_ctl_event ev;
	char out[8192], cmd[256];
	int rc;

	if (!path_exists("/usr/bin/mdevctl"))
		SKIP("mdevctl is not in the initramfs");
	snprintf(cmd, sizeof(cmd), "mdevctl start -p %s -t %s --uuid %s 2>&1",
		 bdf, TYPE_1G, UUID0);
	rc = run_cmd(cmd, out, sizeof(out));
	ASSERT(rc == 0, "%s: rc %d: %s", cmd, rc, out);
	f->mdev = 1;
	ASSERT(ev_wait(f, MDGPU_EV_CREATE, ~0U, &ev, EV_TIMEOUT_MS) == 0,
	       "no CREATE event");
	f->vgpu = ev.vgpu_id;
	EXPECT(below(mdev_path(UUID0, NULL), pci_path(NULL)),
	       "%s is not below %s", mdev_path(UUID0, NULL), pci_path(NULL));
	rc = run_cmd("mdevctl list 2>&1", out, sizeof(out));
	EXPECT(rc == 0 && strstr(out, UUID0) && strstr(out, bdf) &&
	       strstr(out, TYPE_1G), "mdevctl list: rc %d: %s", rc, out);
	vfio_open(f);
	ASSERT(ev_wait(f, MDGPU_EV_OPEN, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no OPEN event");
	EXPECT(rd32(f, MDGPU_REG_VERSION) == MDGPU_ABI_VERSION, "VERSION 0x%x",
	       rd32(f, MDGPU_REG_VERSION));
	wr32(f, MDGPU_REG_SCRATCH, 0x5a5a1234);
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0x5a5a1234, "SCRATCH 0x%x",
	       rd32(f, MDGPU_REG_SCRATCH));
	vfio_close(f);
	snprintf(cmd, sizeof(cmd), "mdevctl stop -u %s 2>&1", UUID0);
	rc = run_cmd(cmd, out, sizeof(out));
	EXPECT(rc == 0, "%s: rc %d: %s", cmd, rc, out);
	EXPECT(!path_exists(mdev_path(UUID0, NULL)), "mdevctl stop left it");
	f->mdev = 0;
}

TEST(pci_parent_bad_and_duplicate, FX_PARENT)
{
	static const char *const malformed[] = {
		"", "0000:00:03", "0000:00:03.", "0000:00:03.8", "0000:00:20.0",
		"0000:100:03.0", "000000000:00:03.0", "0x00:00:03.0",
		"0000:00:03.0 ", " 0000:00:03.0", "0000:00:03.0x", "0000-00-03.0",
		"sim0",
	};
	const char *bdf = need_pci();
	struct mdgpu_ctl_register r;
	unsigned int dom, bus, slot, fn;
	int n, fd = open(MDGPU_CTL_DEVICE, O_RDWR);

	ASSERT(fd >= 0);
	for (size_t i = 0; i < ARRAY_SIZE(malformed); i++) {
		reg_init(&r);
		snprintf(r.bus_id, sizeof(r.bus_id), "%s", malformed[i]);
		errno = 0;
		EXPECT(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r) < 0 &&
		       errno == EINVAL, "'%s': errno %d", malformed[i], errno);
	}
	/* Well-formed, but no such device. */
	reg_init(&r);
	snprintf(r.bus_id, sizeof(r.bus_id), "0000:00:1f.7");
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), ENODEV);
	reg_init(&r);
	snprintf(r.bus_id, sizeof(r.bus_id), "ffff:00:00.0");
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), ENODEV);
	/* The same device spelled otherwise: one device, one parent. */
	n = sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &slot, &fn);
	ASSERT(n == 4, "edu address '%s'", bdf);
	reg_init(&r);
	snprintf(r.bus_id, sizeof(r.bus_id), "%X:%X:%X.%X", dom, bus, slot, fn);
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EBUSY);
	reg_init(&r);
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EBUSY);
	close(fd);
	/* A re-attach must ask for the same kind of parent. */
	close(f->ctl);
	f->ctl = open(MDGPU_CTL_DEVICE, O_RDWR);
	ASSERT(f->ctl >= 0);
	reg_init(&r);
	r.flags = 0;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_REGISTER_GPU, &r), EINVAL);
	reg_init(&r);
	EXPECT(ioctl(f->ctl, MDGPU_CTL_REGISTER_GPU, &r) == 0 &&
	       r.parent_id == f->reg.parent_id, "re-attach: %s",
	       strerror(errno));
}

/* Without a PCI address the parent is mdgpu<id>, as before. */
TEST(pci_parent_virtual_beside, FX_PARENT)
{
	struct mdgpu_ctl_register r;
	struct mdgpu_ctl_unregister u = {};
	char p[300];
	int fd = open(MDGPU_CTL_DEVICE, O_RDWR);

	ASSERT(fd >= 0);
	reg_init(&r);
	r.flags = 0;
	snprintf(r.bus_id, sizeof(r.bus_id), "sim0");
	ASSERT(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r) == 0, "register sim0: %s",
	       strerror(errno));
	snprintf(p, sizeof(p), "mdgpu%u", r.parent_id);
	EXPECT(!strcmp(r.parent_name, p), "parent_name '%s'", r.parent_name);
	snprintf(p, sizeof(p), "/sys/class/mdev_bus/%s/mdev_supported_types/%s/available_instances",
		 r.parent_name, TYPE_1G);
	EXPECT(sysfs_num(p) > 0, "%s: %lld", p, sysfs_num(p));
	snprintf(p, sizeof(p), "/sys/class/mdgpu/mdgpu%u/device", r.parent_id);
	EXPECT(!path_exists(p), "%s: a virtual parent has no device", p);
	u.parent_id = r.parent_id;
	EXPECT(ioctl(fd, MDGPU_CTL_UNREGISTER_GPU, &u) == 0, "unregister: %s",
	       strerror(errno));
	snprintf(p, sizeof(p), "/sys/class/mdev_bus/%s", r.parent_name);
	EXPECT(!path_exists(p), "%s left", p);
	close(fd);
}

TEST(pci_parent_unregister_clean, FX_PARENT)
{
	struct mdgpu_ctl_unregister u = { .parent_id = f->reg.parent_id };
	int r;

	need_pci();
	ASSERT(mdev_create(f, TYPE_1G, UUID0) == 0);
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_UNREGISTER_GPU, &u), EBUSY);
	ASSERT(mdev_remove(UUID0) == 0);
	ASSERT(ioctl(f->ctl, MDGPU_CTL_UNREGISTER_GPU, &u) == 0, "unregister: %s",
	       strerror(errno));
	f->registered = 0;
	expect_no_parent(u.parent_id);
	/* The device is free again: a new registration gets it. */
	close(f->ctl);
	r = daemon_register(f);
	ASSERT(r == 0, "register again: %s", strerror(-r));
	EXPECT(path_exists(pci_path("mdev_supported_types")), "no types");
}

/* The parent's vGPUs went with it: the daemon hears REMOVE. */
static void expect_gone(struct fx *f, uint32_t id)
{
	EXPECT(ev_wait(f, MDGPU_EV_REMOVE, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
	       "no REMOVE event");
	EXPECT(!path_exists(mdev_path(UUID0, NULL)), "vGPU left");
	expect_no_parent(id);
	/* The daemon's parent id is stale now. */
	{
		struct mdgpu_ctl_unregister u = { .parent_id = id };

		EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_UNREGISTER_GPU, &u), ENOENT);
	}
	f->registered = 0;
	f->mdev = 0;
}

/*
 * Debian's kernels have no driver for edu: pci-stub (in the initramfs)
 * binds it through driver_override, then unbinds it while registered.
 */
TEST(pci_parent_driver_unbind, FX_MDEV)
{
	uint32_t id = f->reg.parent_id;
	char drv[400];

	need_pci();
	if (!path_exists("/sys/bus/pci/drivers/pci-stub"))
		SKIP("pci-stub is not loaded");
	ASSERT(sysfs_write(pci_path("driver_override"), "pci-stub") == 0);
	ASSERT(sysfs_write("/sys/bus/pci/drivers_probe", gpu_pci()) == 0);
	snprintf(drv, sizeof(drv), "%s", pci_path("driver"));
	EXPECT(same_dir(drv, "/sys/bus/pci/drivers/pci-stub"), "not bound");
	/* Binding a driver leaves the parent alone. */
	EXPECT(path_exists(mdev_path(UUID0, NULL)), "vGPU gone at bind");
	EXPECT(sysfs_write(pci_path("driver/unbind"), gpu_pci()) == 0, "unbind");
	expect_gone(f, id);
	sysfs_write(pci_path("driver_override"), "\n");
}

/* The device goes away while registered; a rescan brings it back. */
TEST(pci_parent_device_removed, FX_MDEV)
{
	uint32_t id = f->reg.parent_id;
	int r;

	need_pci();
	ASSERT(sysfs_write(pci_path("remove"), "1") == 0, "remove");
	EXPECT(!path_exists(pci_path(NULL)), "device still there");
	expect_gone(f, id);
	ASSERT(sysfs_write("/sys/bus/pci/rescan", "1") == 0, "rescan");
	EXPECT(path_exists(pci_path(NULL)), "edu not back after rescan");
	/* Back at the same address, it can be registered again. */
	close(f->ctl);
	r = daemon_register(f);
	ASSERT(r == 0, "register after rescan: %s", strerror(-r));
	EXPECT(path_exists(pci_path("mdev_supported_types")), "no types");
}
