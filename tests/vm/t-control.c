// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: the module, the control device /dev/mdgpu and the mdev types.
 * Documentation/testing-vm.md describes each test.
 */
#include "vgpu.h"

#include <sys/stat.h>

TEST(module_load, FX_NONE)
{
	struct stat st;
	int r;

	ASSERT(path_exists(MODULE_PATH), "mdgpu.ko is not in the initramfs");
	if (!module_loaded()) {
		r = module_load();
		ASSERT(r == 0, "finit_module: %s", strerror(-r));
	}
	ASSERT(stat(MDGPU_CTL_DEVICE, &st) == 0, MDGPU_CTL_DEVICE);
	EXPECT(S_ISCHR(st.st_mode), "not a character device");
	EXPECT((st.st_mode & 0777) == 0600, "mode %o, want 0600",
	       st.st_mode & 0777);
}

TEST(register_validation, FX_MODULE)
{
	struct mdgpu_ctl_register r;
	int fd = open(MDGPU_CTL_DEVICE, O_RDWR);

	ASSERT(fd >= 0);
	reg_init(&r); r.abi_version = MDGPU_ABI_VERSION + (1 << 16);
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EPROTO);
	reg_init(&r); r.flags |= 1u << 31;	/* not a known flag */
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EINVAL);
	reg_init(&r); r.reserved = 1;
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EINVAL);
	reg_init(&r); r.name[0] = 0;
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EINVAL);
	reg_init(&r); memset(r.bus_id, 'x', sizeof(r.bus_id));
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EINVAL);
	reg_init(&r); r.fb_size = GIB - 1;
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EINVAL);
	reg_init(&r); r.sm_count = 0;
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EINVAL);
	reg_init(&r); r.name[3] = '\n';	/* names are printable ASCII */
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EINVAL);
	reg_init(&r); r.bus_id[0] = (char)0xc3;
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EINVAL);
	EXPECT(!path_exists("/sys/class/mdev_bus/mdgpu0") &&
	       !path_exists(type_path(gpu_bus_id(), TYPE_1G, "")),
	       "a rejected registration left a parent");
	close(fd);
}

TEST(register_parent, FX_PARENT)
{
	char b[128], p[300];

	EXPECT(f->reg.nr_vgpus == 0, "nr_vgpus %u", f->reg.nr_vgpus);
	/* The PCI stand-in (edu) is the parent if the guest has one. */
	if (gpu_pci())
		EXPECT(!strcmp(f->parent, gpu_pci()), "parent name '%s'",
		       f->parent);
	else
		EXPECT(!strncmp(f->parent, "mdgpu", 5), "parent name '%s'",
		       f->parent);
	snprintf(p, sizeof(p), "/sys/class/mdev_bus/%s", f->parent);
	EXPECT(path_exists(p), "%s missing", p);
	EXPECT(sysfs_read(parent_knob(f, "gpu_name"), b, sizeof(b)) > 0 &&
	       !strcmp(b, GPU_NAME), "gpu_name '%s'", b);
	EXPECT(sysfs_read(parent_knob(f, "bus_id"), b, sizeof(b)) > 0 &&
	       !strcmp(b, gpu_bus_id()), "bus_id '%s'", b);
	EXPECT(sysfs_num(parent_knob(f, "fb_size")) == (long long)FB_SIZE,
	       "fb_size");
	EXPECT(sysfs_num(parent_knob(f, "sm_count")) == SM_COUNT,
	       "sm_count");
}

TEST(sysfs_readonly_attrs, FX_MDEV)
{
	static const char *const keys[] = { "doorbells", "completions",
		"interrupts", "bad_accesses", "dma_bytes", "resets", "hangs",
		"contexts_lost" };
	static const char *const ro[] = { "gpu_name", "bus_id", "fb_size",
					  "sm_count" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		EXPECT(stat_value(UUID0, keys[i]) == 0, "stats %s: %lld", keys[i],
		       stat_value(UUID0, keys[i]));
	for (size_t i = 0; i < ARRAY_SIZE(ro); i++)
		EXPECT(sysfs_write(parent_knob(f, ro[i]), "1") < 0,
		       "parent %s writable", ro[i]);
	EXPECT(sysfs_write(mdev_path(UUID0, "mdgpu/status"), "ready") < 0,
	       "status writable");
	EXPECT(sysfs_write(mdev_path(UUID0, "mdgpu/vgpu_id"), "9") < 0,
	       "vgpu_id writable");
	EXPECT(sysfs_write(mdev_path(UUID0, "mdgpu/stats"), "0") < 0,
	       "stats writable");
}

TEST(register_busy_and_unregister, FX_PARENT)
{
	struct mdgpu_ctl_register r;
	struct mdgpu_ctl_unregister u = { .parent_id = f->reg.parent_id };
	int fd = open(MDGPU_CTL_DEVICE, O_RDWR);

	ASSERT(fd >= 0);
	reg_init(&r);
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &r), EBUSY);
	/* Only the owning file may unregister. */
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_UNREGISTER_GPU, &u), EPERM);
	u.parent_id = f->reg.parent_id + 1000;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_UNREGISTER_GPU, &u), ENOENT);
	u.parent_id = f->reg.parent_id;
	u.reserved = 1;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_UNREGISTER_GPU, &u), EINVAL);
	u.reserved = 0;
	close(fd);
	ASSERT(mdev_create(f, TYPE_1G, UUID0) == 0);
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_UNREGISTER_GPU, &u), EBUSY);
	ASSERT(mdev_remove(UUID0) == 0);
	EXPECT(ioctl(f->ctl, MDGPU_CTL_UNREGISTER_GPU, &u) == 0, "unregister");
	f->registered = 0;
	EXPECT(!path_exists(parent_knob(f, "")), "parent still there");
}

/* ---------------------------------------------------------------- */
/* tests: types                                                      */
/* ---------------------------------------------------------------- */

TEST(types_listed, FX_PARENT)
{
	char name[64], b[64];

	for (size_t i = 0; i < NR_VTYPES; i++) {
		snprintf(name, sizeof(name), "mdgpu-%s", vtypes[i].name);
		EXPECT(sysfs_read(type_path(f->parent, name, "name"), b,
				  sizeof(b)) > 0 && !strcmp(b, vtypes[i].name),
		       "%s/name '%s'", name, b);
		EXPECT(sysfs_read(type_path(f->parent, name, "device_api"), b,
				  sizeof(b)) > 0 && !strcmp(b, "vfio-pci"),
		       "%s/device_api '%s'", name, b);
	}
}

TEST(type_description, FX_PARENT)
{
	char name[64], b[512], want[512];

	for (size_t i = 0; i < NR_VTYPES; i++) {
		const struct vtype *t = &vtypes[i];

		snprintf(name, sizeof(name), "mdgpu-%s", t->name);
		snprintf(want, sizeof(want),
			 "framebuffer: %llu MiB\nmax_instances: %u\n"
			 "default_weight: %u\nsm_percent: %u\naperture: %u MiB",
			 (unsigned long long)(vtype_quota(t) / MIB),
			 t->max_instances, t->default_weight, t->sm_percent,
			 t->aperture_mib);
		EXPECT(sysfs_read(type_path(f->parent, name, "description"), b,
				  sizeof(b)) > 0 && !strcmp(b, want),
		       "%s/description:\n'%s'\nwant\n'%s'", name, b, want);
	}
}

TEST(available_instances, FX_PARENT)
{
	char name[64];

	for (size_t i = 0; i < NR_VTYPES; i++) {
		const struct vtype *t = &vtypes[i];
		long long want = FB_SIZE / vtype_quota(t);

		if (want > t->max_instances)
			want = t->max_instances;
		snprintf(name, sizeof(name), "mdgpu-%s", t->name);
		EXPECT(avail(f, name) == want, "%s: %lld, want %lld", name,
		       avail(f, name), want);
	}
}

TEST(available_instances_follow_create_remove, FX_PARENT)
{
	long long a1 = avail(f, "mdgpu-1g"), a8 = avail(f, "mdgpu-8g");
	long long full = avail(f, "mdgpu-full");
	int r;

	ASSERT(a1 > 1 && a8 > 0 && full == 1, "1g %lld 8g %lld full %lld",
	       a1, a8, full);
	ASSERT(mdev_create(f, "mdgpu-1g", UUID0) == 0);
	EXPECT(avail(f, "mdgpu-1g") == a1 - 1, "1g after create %lld",
	       avail(f, "mdgpu-1g"));
	/* 15 GiB left: one 8 GiB instance still fits, the whole card not. */
	EXPECT(avail(f, "mdgpu-8g") == (long long)((FB_SIZE - GIB) / (8 * GIB)),
	       "8g after create %lld", avail(f, "mdgpu-8g"));
	EXPECT(avail(f, "mdgpu-full") == 0, "full after create %lld",
	       avail(f, "mdgpu-full"));
	r = mdev_create(f, "mdgpu-full", UUID1);
	EXPECT(r == -ENOSPC, "create past available_instances: %d", r);
	ASSERT(mdev_remove(UUID0) == 0);
	EXPECT(avail(f, "mdgpu-1g") == a1, "1g after remove %lld",
	       avail(f, "mdgpu-1g"));
	EXPECT(avail(f, "mdgpu-full") == 1, "full after remove");
}

/*
 * Event uuid[16] holds the UUID in the byte order of its string form
 * (RFC 4122; what libuuid's uuid_parse() gives the daemon for the name in
 * /sys/bus/mdev/devices), not the kernel's guid_t layout.
 */
TEST(event_uuid_byte_order, FX_MDEV)
{
	struct mdgpu_ctl_event ev;

	EXPECT(sysfs_write(mdev_path(UUID0, "mdgpu/weight"), "3") == 0, "weight");
	ASSERT(ev_wait(f, MDGPU_EV_KNOB, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no KNOB event");
	EXPECT(uuid_is(ev.uuid, UUID0), "uuid not in RFC 4122 byte order");
}

/* Fill the GPU's memory: every type runs out, and comes back. */
TEST(fill_gpu_memory, FX_PARENT)
{
	const struct vtype *t = vtype_by_name("1g");
	char uuid[40], name[64];
	long long n = FB_SIZE / vtype_quota(t), made = 0;
	int r = 0;

	ASSERT(n <= t->max_instances && n < 100, "table changed: %lld", n);
	for (long long i = 0; i < n && !r; i++) {
		snprintf(uuid, sizeof(uuid), "6d677075-0000-4000-8000-1000%08x",
			 (unsigned int)i);
		r = mdev_create(f, "mdgpu-1g", uuid);
		made += !r;
	}
	EXPECT(made == n, "created %lld of %lld 1g vGPUs: %s", made, n,
	       strerror(-r));
	for (size_t i = 0; i < NR_VTYPES; i++) {
		snprintf(name, sizeof(name), "mdgpu-%s", vtypes[i].name);
		EXPECT(avail(f, name) == 0, "%s: %lld left", name, avail(f, name));
	}
	r = mdev_create(f, "mdgpu-quarter", UUID1);
	EXPECT(r == -ENOSPC, "create in a full GPU: %d", r);
	for (long long i = 0; i < made; i++) {
		snprintf(uuid, sizeof(uuid), "6d677075-0000-4000-8000-1000%08x",
			 (unsigned int)i);
		EXPECT(mdev_remove(uuid) == 0, "remove %s", uuid);
	}
	EXPECT(avail(f, "mdgpu-1g") == n, "1g after: %lld", avail(f, "mdgpu-1g"));
	EXPECT(avail(f, "mdgpu-full") == 1, "full after");
}

TEST(create_remove_events, FX_PARENT)
{
	struct mdgpu_ctl_event ev;
	const struct vtype *t = vtype_by_name("1g");
	char b[64];

	ASSERT(t);
	ASSERT(mdev_create(f, "mdgpu-1g", UUID0) == 0);
	f->mdev = 1;
	EXPECT(path_exists(mdev_path(UUID0, NULL)), "no mdev device");
	ASSERT(ev_wait(f, MDGPU_EV_CREATE, ~0U, &ev, EV_TIMEOUT_MS) == 0,
	       "no CREATE event");
	EXPECT(ev.parent_id == f->reg.parent_id, "parent_id %u", ev.parent_id);
	EXPECT(uuid_matches(ev.uuid, UUID0), "CREATE uuid");
	EXPECT(ev.type_id == t->id, "type_id %u", ev.type_id);
	EXPECT(ev.create.fb_quota == vtype_quota(t), "fb_quota");
	EXPECT(ev.create.aperture_size == t->aperture_mib * MIB, "aperture");
	EXPECT(ev.create.weight == t->default_weight, "weight %u",
	       ev.create.weight);
	EXPECT(ev.create.cap == MDGPU_CAP_MAX, "cap %u", ev.create.cap);
	EXPECT(ev.create.priority == MDGPU_PRIORITY_DEFAULT, "priority %u",
	       ev.create.priority);
	EXPECT(ev.create.ring_entries == MDGPU_RING_ENTRIES_DEFAULT, "entries");
	EXPECT(sysfs_num(mdev_path(UUID0, "mdgpu/vgpu_id")) == ev.vgpu_id,
	       "sysfs vgpu_id");
	EXPECT(sysfs_read(mdev_path(UUID0, "mdgpu/status"), b, sizeof(b)) > 0 &&
	       !strcmp(b, "ready"), "status '%s'", b);
	ASSERT(mdev_remove(UUID0) == 0);
	f->mdev = 0;
	EXPECT(!path_exists(mdev_path(UUID0, NULL)), "mdev still there");
	EXPECT(ev_wait(f, MDGPU_EV_REMOVE, ev.vgpu_id, NULL, EV_TIMEOUT_MS) == 0,
	       "no REMOVE event");
}
