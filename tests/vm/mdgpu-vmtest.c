// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: the in-guest test suite for mdgpu.ko.  It plays both sides
 * of the module: QEMU (raw VFIO ioctls on an mdev: container, type1 IOMMU,
 * group, device fd, regions, mmap, interrupts) and a minimal daemon on
 * /dev/mdgpu (REGISTER_GPU, events, COMPLETE, DMA, mmap).  Expected values
 * come from include/uapi/mdgpu.h, mdev-types/mdgpu-types.def and
 * Documentation/kmod.md, never from the module's code.
 * Documentation/testing-vm.md lists the tests.
 */
#include "vmtest.h"
#include "include/uapi/mdgpu.h"

#include <fcntl.h>
#include <inttypes.h>
#include <linux/vfio.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MODULE_PATH	"/lib/modules/mdgpu.ko"
#define GIB		(1ULL << 30)
#define MIB		(1ULL << 20)
#define FB_SIZE		(16 * GIB)	/* what the mini daemon registers */
#define SM_COUNT	132
#define BUS_ID		"0000:65:00.0"
#define GPU_NAME	"mdgpu-vmtest GPU"
#define UUID0		"6d677075-0000-4000-8000-000000000001"
#define UUID1		"6d677075-0000-4000-8000-000000000002"
#define UUID2		"6d677075-0000-4000-8000-000000000003"
#define TYPE_1G		"mdgpu-1g"
#define DMA_IOVA	0x100000ULL	/* guest buffer mapped by the fixture */
#define DMA_SIZE	(1 * MIB)
#define UNMAPPED_IOVA	0x40000000ULL
#define EV_TIMEOUT_MS	2000
#define NO_EV_MS	300	/* how long "no event / no interrupt" waits */

/* The type table, as data, from the same file the module reads. */
struct vtype {
	unsigned int id;
	const char *name;
	unsigned long long fb_mib, fb_divisor;
	unsigned int max_instances, default_weight, sm_percent, aperture_mib;
};
static const struct vtype vtypes[] = {
#define MDGPU_TYPE(i, n, fb, div, max, w, sm, ap, desc) \
	{ i, n, fb, div, max, w, sm, ap },
#include "mdev-types/mdgpu-types.def"
#undef MDGPU_TYPE
};
#define NR_VTYPES (sizeof(vtypes) / sizeof(vtypes[0]))

enum level { FX_NONE, FX_MODULE, FX_PARENT, FX_MDEV, FX_VFIO };

struct region {
	uint64_t offset, size;
	uint32_t flags;
};

struct fx {
	int ctl;			/* /dev/mdgpu, the mini daemon */
	struct mdgpu_ctl_register reg;
	int registered;
	char parent[MDGPU_NAME_LEN];
	int mdev;			/* UUID0 exists */
	uint32_t vgpu;
	int container, group, dev;
	void *dma;			/* guest memory at DMA_IOVA */
	struct region rg[VFIO_PCI_NUM_REGIONS];
};

static struct fx fx = { .ctl = -1, .container = -1, .group = -1, .dev = -1 };

/* ---------------------------------------------------------------- */
/* small helpers                                                     */
/* ---------------------------------------------------------------- */

static const struct vtype *vtype_by_name(const char *name)
{
	for (size_t i = 0; i < NR_VTYPES; i++)
		if (!strcmp(vtypes[i].name, name))
			return &vtypes[i];
	return NULL;
}

static uint64_t vtype_quota(const struct vtype *t)
{
	return t->fb_mib ? t->fb_mib * MIB : FB_SIZE / t->fb_divisor;
}

/* The 16 bytes of a UUID string, in string order (uuid_t). */
static void uuid_bytes(const char *str, uint8_t out[16])
{
	for (int i = 0; i < 16; i++) {
		while (*str == '-')
			str++;
		sscanf(str, "%2hhx", &out[i]);
		str += 2;
	}
}

static int uuid_is(const uint8_t got[16], const char *str)
{
	uint8_t want[16];

	uuid_bytes(str, want);
	if (!memcmp(got, want, 16))
		return 1;
	printf("    uuid: got ");
	for (int i = 0; i < 16; i++)
		printf("%02x", got[i]);
	printf(", want %s\n", str);
	return 0;
}

/*
 * The same UUID in either byte order: string order, or the kernel guid_t
 * layout (first three fields little-endian).  Tests that only need the
 * event to name the right vGPU use this; event_uuid_byte_order pins the
 * order down.
 */
static int uuid_matches(const uint8_t got[16], const char *str)
{
	uint8_t u[16], g[16];

	uuid_bytes(str, u);
	memcpy(g, u, 16);
	for (int i = 0; i < 4; i++)
		g[i] = u[3 - i];
	g[4] = u[5]; g[5] = u[4]; g[6] = u[7]; g[7] = u[6];
	return !memcmp(got, u, 16) || !memcmp(got, g, 16);
}

static void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int path_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

/* Write a string to a sysfs file: 0 or -errno. */
static int sysfs_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;
	int e;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* Read a sysfs file, trailing newline stripped: length or -errno. */
static int sysfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;
	int e;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	return (int)n;
}

static long long sysfs_num(const char *path)
{
	char b[64];

	if (sysfs_read(path, b, sizeof(b)) <= 0)
		return -1;
	return strtoll(b, NULL, 0);
}

static const char *type_path(const char *parent, const char *type,
			     const char *attr)
{
	static char p[256];

	snprintf(p, sizeof(p), "/sys/class/mdev_bus/%s/mdev_supported_types/%s/%s",
		 parent, type, attr);
	return p;
}

static const char *mdev_path(const char *uuid, const char *attr)
{
	static char p[256];

	snprintf(p, sizeof(p), "/sys/bus/mdev/devices/%s%s%s", uuid,
		 attr ? "/" : "", attr ? attr : "");
	return p;
}

static const char *parent_knob(const char *parent, const char *knob)
{
	static char p[256];

	snprintf(p, sizeof(p), "/sys/class/mdev_bus/%s/mdgpu/%s", parent, knob);
	return p;
}

static long long avail(struct fx *f, const char *type)
{
	return sysfs_num(type_path(f->parent, type, "available_instances"));
}

static int mdev_create(struct fx *f, const char *type, const char *uuid)
{
	return sysfs_write(type_path(f->parent, type, "create"), uuid);
}

static int mdev_remove(const char *uuid)
{
	return sysfs_write(mdev_path(uuid, "remove"), "1");
}

/* Run a shell command, capture up to len bytes of stdout+stderr. */
static int run_cmd(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	int st;

	if (!p)
		return -1;
	while (n + 1 < len) {
		size_t r = fread(out + n, 1, len - 1 - n, p);

		if (!r)
			break;
		n += r;
	}
	out[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* One "key: value" line of a vGPU's stats file, or -1. */
static long long stat_value(const char *uuid, const char *key)
{
	char b[1024], *p;
	size_t kl = strlen(key);

	if (sysfs_read(mdev_path(uuid, "mdgpu/stats"), b, sizeof(b)) <= 0)
		return -1;
	for (p = b; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, key, kl) && p[kl] == ':')
			return strtoll(p + kl + 1, NULL, 10);
	}
	return -1;
}

/* ---------------------------------------------------------------- */
/* module                                                            */
/* ---------------------------------------------------------------- */

static int module_loaded(void)
{
	return path_exists("/sys/module/mdgpu");
}

static int module_load(void)
{
	int fd = open(MODULE_PATH, O_RDONLY | O_CLOEXEC);
	int r, e;

	if (fd < 0)
		return -errno;
	r = (int)syscall(SYS_finit_module, fd, "", 0);
	e = errno;
	close(fd);
	return r ? -e : 0;
}

static int module_unload(void)
{
	return syscall(SYS_delete_module, "mdgpu", O_NONBLOCK) ? -errno : 0;
}

/* ---------------------------------------------------------------- */
/* the mini daemon                                                   */
/* ---------------------------------------------------------------- */

static void reg_init(struct mdgpu_ctl_register *r)
{
	memset(r, 0, sizeof(*r));
	r->abi_version = MDGPU_ABI_VERSION;
	snprintf(r->name, sizeof(r->name), "%s", GPU_NAME);
	snprintf(r->bus_id, sizeof(r->bus_id), "%s", BUS_ID);
	r->fb_size = FB_SIZE;
	r->sm_count = SM_COUNT;
}

static int daemon_register(struct fx *f)
{
	f->ctl = open(MDGPU_CTL_DEVICE, O_RDWR | O_CLOEXEC);
	if (f->ctl < 0)
		return -errno;
	reg_init(&f->reg);
	if (ioctl(f->ctl, MDGPU_CTL_REGISTER_GPU, &f->reg))
		return -errno;
	f->registered = 1;
	snprintf(f->parent, sizeof(f->parent), "%s", f->reg.parent_name);
	return 0;
}

/*
 * Wait for an event of `type` (for vgpu, or any vGPU if vgpu is ~0),
 * discarding others: 0, or -ETIMEDOUT / -errno.
 */
static int ev_wait(struct fx *f, uint32_t type, uint32_t vgpu,
		   struct mdgpu_ctl_event *out, int timeout_ms)
{
	struct mdgpu_ctl_event ev;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = f->ctl, .events = POLLIN };
		int left;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = timeout_ms - (int)((t.tv_sec - t0.tv_sec) * 1000 +
					  (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left < 0)
			left = 0;
		if (poll(&p, 1, left) <= 0)
			return -ETIMEDOUT;
		if (read(f->ctl, &ev, sizeof(ev)) != sizeof(ev))
			return -errno;
		if (ev.type == type && (vgpu == ~0U || ev.vgpu_id == vgpu)) {
			if (out)
				*out = ev;
			return 0;
		}
	}
}

/* The next event, whatever it is: 0 or -ETIMEDOUT / -errno. */
static int ev_next(struct fx *f, struct mdgpu_ctl_event *ev, int timeout_ms)
{
	struct pollfd p = { .fd = f->ctl, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	return read(f->ctl, ev, sizeof(*ev)) == sizeof(*ev) ? 0 : -errno;
}

static void ev_drain(struct fx *f)
{
	while (ev_wait(f, 0, 0, NULL, 0) == 0)
		;
}

static int complete(struct fx *f, uint32_t head, uint64_t fence,
		    uint64_t fb_used, uint32_t irq)
{
	struct mdgpu_ctl_complete c = {
		.vgpu_id = f->vgpu, .sq_head = head, .fence = fence,
		.fb_used = fb_used, .irq = irq,
	};

	return ioctl(f->ctl, MDGPU_CTL_COMPLETE, &c) ? -errno : 0;
}

static int dma(struct fx *f, int write, uint64_t iova, void *buf, uint64_t len)
{
	struct mdgpu_ctl_dma d = {
		.vgpu_id = f->vgpu, .write = write, .iova = iova,
		.buf = (uintptr_t)buf, .len = len,
	};

	return ioctl(f->ctl, MDGPU_CTL_DMA, &d) ? -errno : 0;
}

/* ---------------------------------------------------------------- */
/* the VFIO user (what QEMU does)                                    */
/* ---------------------------------------------------------------- */

static void vfio_close(struct fx *f)
{
	if (f->dev >= 0)
		close(f->dev);
	f->dev = -1;
	if (f->container >= 0 && f->dma) {
		struct vfio_iommu_type1_dma_unmap um = {
			.argsz = sizeof(um), .iova = DMA_IOVA, .size = DMA_SIZE,
		};
		ioctl(f->container, VFIO_IOMMU_UNMAP_DMA, &um);
	}
	if (f->group >= 0)
		close(f->group);
	if (f->container >= 0)
		close(f->container);
	f->group = f->container = -1;
	if (f->dma)
		munmap(f->dma, DMA_SIZE);
	f->dma = NULL;
}

/* Open UUID0 the way QEMU does; ASSERTs on failure. */
static void vfio_open(struct fx *f)
{
	char link[256], grp[300];
	ssize_t n;
	const char *g;
	struct vfio_group_status gs = { .argsz = sizeof(gs) };
	struct vfio_iommu_type1_dma_map map = {
		.argsz = sizeof(map),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.iova = DMA_IOVA, .size = DMA_SIZE,
	};

	f->container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	ASSERT(f->container >= 0, "open /dev/vfio/vfio");
	ASSERT(ioctl(f->container, VFIO_GET_API_VERSION) == VFIO_API_VERSION);
	ASSERT(ioctl(f->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) == 1,
	       "no TYPE1v2");
	n = readlink(mdev_path(UUID0, "iommu_group"), link, sizeof(link) - 1);
	ASSERT(n > 0, "iommu_group link");
	link[n] = 0;
	g = strrchr(link, '/');
	snprintf(grp, sizeof(grp), "/dev/vfio/%s", g ? g + 1 : link);
	f->group = open(grp, O_RDWR | O_CLOEXEC);
	ASSERT(f->group >= 0, "open %s", grp);
	ASSERT(ioctl(f->group, VFIO_GROUP_GET_STATUS, &gs) == 0);
	ASSERT(gs.flags & VFIO_GROUP_FLAGS_VIABLE, "group not viable");
	ASSERT(ioctl(f->group, VFIO_GROUP_SET_CONTAINER, &f->container) == 0);
	ASSERT(ioctl(f->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU) == 0);
	f->dma = mmap(NULL, DMA_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(f->dma != MAP_FAILED, "mmap guest memory");
	memset(f->dma, 0, DMA_SIZE);
	map.vaddr = (uintptr_t)f->dma;
	ASSERT(ioctl(f->container, VFIO_IOMMU_MAP_DMA, &map) == 0, "MAP_DMA");
	f->dev = ioctl(f->group, VFIO_GROUP_GET_DEVICE_FD, UUID0);
	ASSERT(f->dev >= 0, "GET_DEVICE_FD");
	for (unsigned int i = 0; i < VFIO_PCI_NUM_REGIONS; i++) {
		struct vfio_region_info ri = { .argsz = sizeof(ri), .index = i };

		ASSERT(ioctl(f->dev, VFIO_DEVICE_GET_REGION_INFO, &ri) == 0,
		       "region %u info", i);
		f->rg[i] = (struct region){ ri.offset, ri.size, ri.flags };
	}
}

/* Region access: bytes transferred or -errno. */
static ssize_t rg_rw(struct fx *f, int idx, uint64_t off, void *buf,
		     size_t len, int write)
{
	ssize_t n = write ? pwrite(f->dev, buf, len, f->rg[idx].offset + off)
			  : pread(f->dev, buf, len, f->rg[idx].offset + off);

	return n < 0 ? -errno : n;
}

static uint32_t rd32(struct fx *f, uint32_t off)
{
	uint32_t v = 0xdeadbeef;

	EXPECT(rg_rw(f, MDGPU_BAR_REGS, off, &v, 4, 0) == 4,
	       "BAR0 read at 0x%x", off);
	return v;
}

static void wr32(struct fx *f, uint32_t off, uint32_t v)
{
	EXPECT(rg_rw(f, MDGPU_BAR_REGS, off, &v, 4, 1) == 4,
	       "BAR0 write at 0x%x", off);
}

static uint32_t cfg_rd(struct fx *f, uint32_t off, size_t size)
{
	uint32_t v = 0;

	EXPECT(rg_rw(f, VFIO_PCI_CONFIG_REGION_INDEX, off, &v, size, 0) ==
	       (ssize_t)size, "config read %zu at 0x%x", size, off);
	return v;
}

static void cfg_wr(struct fx *f, uint32_t off, size_t size, uint32_t v)
{
	EXPECT(rg_rw(f, VFIO_PCI_CONFIG_REGION_INDEX, off, &v, size, 1) ==
	       (ssize_t)size, "config write %zu at 0x%x", size, off);
}

static int set_irq_fd(struct fx *f, unsigned int index, int efd)
{
	struct {
		struct vfio_irq_set s;
		int32_t fd;
	} a = { .s = { .argsz = sizeof(a), .index = index, .start = 0,
		       .count = 1, .flags = VFIO_IRQ_SET_DATA_EVENTFD |
					    VFIO_IRQ_SET_ACTION_TRIGGER },
		.fd = efd };

	return ioctl(f->dev, VFIO_DEVICE_SET_IRQS, &a) ? -errno : 0;
}

static int set_irq_none(struct fx *f, unsigned int index, uint32_t action,
			uint32_t count)
{
	struct vfio_irq_set s = { .argsz = sizeof(s), .index = index,
				  .count = count,
				  .flags = VFIO_IRQ_SET_DATA_NONE | action };

	return ioctl(f->dev, VFIO_DEVICE_SET_IRQS, &s) ? -errno : 0;
}

/* Has the eventfd fired within ms?  Consumes the count. */
static int fired(int efd, int ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	uint64_t n;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	return read(efd, &n, sizeof(n)) == sizeof(n) && n > 0;
}

/* Enable MSI the way a guest + QEMU do: eventfd, then the cap's enable. */
static int msi_on(struct fx *f)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	EXPECT(set_irq_fd(f, VFIO_PCI_MSI_IRQ_INDEX, efd) == 0, "MSI eventfd");
	cfg_wr(f, 0x42, 2, cfg_rd(f, 0x42, 2) | 1);
	return efd;
}

/* ---------------------------------------------------------------- */
/* fixtures                                                          */
/* ---------------------------------------------------------------- */

void vt_setup(struct fx *f, int level)
{
	int r;

	if (level >= FX_MODULE && !module_loaded()) {
		ASSERT(path_exists(MODULE_PATH), "mdgpu.ko is not in the initramfs");
		r = module_load();
		ASSERT(r == 0, "load mdgpu.ko: %s", strerror(-r));
	}
	if (level >= FX_MODULE)
		ASSERT(path_exists(MDGPU_CTL_DEVICE), "no " MDGPU_CTL_DEVICE);
	if (level >= FX_PARENT) {
		r = daemon_register(f);
		ASSERT(r == 0, "REGISTER_GPU: %s", strerror(-r));
	}
	if (level >= FX_MDEV) {
		struct mdgpu_ctl_event ev;

		r = mdev_create(f, TYPE_1G, UUID0);
		ASSERT(r == 0, "create " UUID0 ": %s", strerror(-r));
		f->mdev = 1;
		ASSERT(ev_wait(f, MDGPU_EV_CREATE, ~0U, &ev, EV_TIMEOUT_MS) == 0,
		       "no CREATE event");
		f->vgpu = ev.vgpu_id;
	}
	if (level >= FX_VFIO) {
		vfio_open(f);
		ASSERT(ev_wait(f, MDGPU_EV_OPEN, f->vgpu, NULL, EV_TIMEOUT_MS) == 0,
		       "no OPEN event");
	}
}

void vt_teardown(struct fx *f, int level)
{
	(void)level;
	vfio_close(f);
	if (f->mdev || path_exists(mdev_path(UUID0, NULL)))
		mdev_remove(UUID0);
	f->mdev = 0;
	if (path_exists(mdev_path(UUID1, NULL)))
		mdev_remove(UUID1);
	if (path_exists(mdev_path(UUID2, NULL)))
		mdev_remove(UUID2);
	/* A parent whose daemon left stays: re-attach to unregister it. */
	if (f->registered && f->ctl < 0 && module_loaded())
		daemon_register(f);
	if (f->ctl >= 0 && f->registered) {
		struct mdgpu_ctl_unregister u = { .parent_id = f->reg.parent_id };

		if (ioctl(f->ctl, MDGPU_CTL_UNREGISTER_GPU, &u))
			printf("    teardown: UNREGISTER_GPU: %s\n", strerror(errno));
	}
	if (f->ctl >= 0)
		close(f->ctl);
	f->ctl = -1;
	f->registered = 0;
}

/* ---------------------------------------------------------------- */
/* tests: module and control device                                  */
/* ---------------------------------------------------------------- */

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
	reg_init(&r); r.flags = 1;
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
	EXPECT(!path_exists("/sys/class/mdev_bus/mdgpu0"),
	       "a rejected registration left a parent");
	close(fd);
}

TEST(register_parent, FX_PARENT)
{
	char b[128], p[300];

	EXPECT(f->reg.nr_vgpus == 0, "nr_vgpus %u", f->reg.nr_vgpus);
	EXPECT(!strncmp(f->parent, "mdgpu", 5), "parent name '%s'", f->parent);
	snprintf(p, sizeof(p), "/sys/class/mdev_bus/%s", f->parent);
	EXPECT(path_exists(p), "%s missing", p);
	EXPECT(sysfs_read(parent_knob(f->parent, "gpu_name"), b, sizeof(b)) > 0 &&
	       !strcmp(b, GPU_NAME), "gpu_name '%s'", b);
	EXPECT(sysfs_read(parent_knob(f->parent, "bus_id"), b, sizeof(b)) > 0 &&
	       !strcmp(b, BUS_ID), "bus_id '%s'", b);
	EXPECT(sysfs_num(parent_knob(f->parent, "fb_size")) == (long long)FB_SIZE,
	       "fb_size");
	EXPECT(sysfs_num(parent_knob(f->parent, "sm_count")) == SM_COUNT,
	       "sm_count");
}

TEST(sysfs_readonly_attrs, FX_MDEV)
{
	static const char *const keys[] = { "doorbells", "completions",
		"interrupts", "bad_accesses", "dma_bytes", "resets" };
	static const char *const ro[] = { "gpu_name", "bus_id", "fb_size",
					  "sm_count" };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		EXPECT(stat_value(UUID0, keys[i]) == 0, "stats %s: %lld", keys[i],
		       stat_value(UUID0, keys[i]));
	for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
		EXPECT(sysfs_write(parent_knob(f->parent, ro[i]), "1") < 0,
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
	EXPECT(!path_exists(parent_knob(f->parent, "")), "parent still there");
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

/* ---------------------------------------------------------------- */
/* tests: VFIO device, config space                                  */
/* ---------------------------------------------------------------- */

TEST(device_info, FX_VFIO)
{
	struct vfio_device_info di = { .argsz = sizeof(di) };

	ASSERT(ioctl(f->dev, VFIO_DEVICE_GET_INFO, &di) == 0);
	EXPECT(di.flags & VFIO_DEVICE_FLAGS_PCI, "flags 0x%x", di.flags);
	EXPECT(di.flags & VFIO_DEVICE_FLAGS_RESET, "no RESET flag (QEMU warns)");
	EXPECT(di.num_regions == VFIO_PCI_NUM_REGIONS, "regions %u",
	       di.num_regions);
	EXPECT(di.num_irqs == VFIO_PCI_NUM_IRQS, "irqs %u", di.num_irqs);
}

TEST(region_info, FX_VFIO)
{
	const struct vtype *t = vtype_by_name("1g");
	uint64_t ring = MDGPU_RING_BYTES(rd32(f, MDGPU_REG_RING_ENTRIES)), p2 = 1;
	const uint32_t rw = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;

	while (p2 < ring)
		p2 <<= 1;
	EXPECT(f->rg[VFIO_PCI_CONFIG_REGION_INDEX].size == 256, "config size");
	EXPECT(f->rg[0].size == MDGPU_REGS_SIZE, "BAR0 size");
	EXPECT((f->rg[0].flags & rw) == rw, "BAR0 flags 0x%x", f->rg[0].flags);
	EXPECT(!(f->rg[0].flags & VFIO_REGION_INFO_FLAG_MMAP), "BAR0 mmap-able");
	EXPECT(f->rg[2].size == p2, "BAR2 size 0x%" PRIx64 " want 0x%" PRIx64,
	       f->rg[2].size, p2);
	EXPECT(f->rg[4].size == t->aperture_mib * MIB, "BAR4 size");
	EXPECT((f->rg[2].flags & (rw | VFIO_REGION_INFO_FLAG_MMAP)) ==
	       (rw | VFIO_REGION_INFO_FLAG_MMAP), "BAR2 flags 0x%x", f->rg[2].flags);
	EXPECT((f->rg[4].flags & (rw | VFIO_REGION_INFO_FLAG_MMAP)) ==
	       (rw | VFIO_REGION_INFO_FLAG_MMAP), "BAR4 flags 0x%x", f->rg[4].flags);
	for (int i = 1; i <= 8; i++)
		if (i != 2 && i != 4 && i != VFIO_PCI_CONFIG_REGION_INDEX)
			EXPECT(f->rg[i].size == 0, "region %d size", i);
}

TEST(irq_info, FX_VFIO)
{
	static const struct { uint32_t index, count, flags; } want[] = {
		{ VFIO_PCI_INTX_IRQ_INDEX, 1, VFIO_IRQ_INFO_EVENTFD |
		  VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED },
		{ VFIO_PCI_MSI_IRQ_INDEX, 1, VFIO_IRQ_INFO_EVENTFD |
		  VFIO_IRQ_INFO_NORESIZE },
		{ VFIO_PCI_MSIX_IRQ_INDEX, 0, 0 },
		{ VFIO_PCI_ERR_IRQ_INDEX, 0, 0 },
		{ VFIO_PCI_REQ_IRQ_INDEX, 1, VFIO_IRQ_INFO_EVENTFD |
		  VFIO_IRQ_INFO_NORESIZE },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct vfio_irq_info ii = { .argsz = sizeof(ii),
					    .index = want[i].index };

		EXPECT(ioctl(f->dev, VFIO_DEVICE_GET_IRQ_INFO, &ii) == 0,
		       "irq %u", want[i].index);
		EXPECT(ii.count == want[i].count, "irq %u count %u",
		       want[i].index, ii.count);
		EXPECT((ii.flags & want[i].flags) == want[i].flags,
		       "irq %u flags 0x%x", want[i].index, ii.flags);
	}
}

TEST(config_ids, FX_VFIO)
{
	EXPECT(cfg_rd(f, 0x00, 2) == MDGPU_PCI_VENDOR_ID, "vendor");
	EXPECT(cfg_rd(f, 0x02, 2) == MDGPU_PCI_DEVICE_ID, "device");
	EXPECT(cfg_rd(f, 0x08, 1) == MDGPU_PCI_REVISION, "revision");
	EXPECT((cfg_rd(f, 0x08, 4) >> 8) == MDGPU_PCI_CLASS, "class 0x%x",
	       cfg_rd(f, 0x08, 4) >> 8);
	EXPECT(cfg_rd(f, 0x0e, 1) == 0, "header type");
	EXPECT(cfg_rd(f, 0x2c, 2) == MDGPU_PCI_SUBSYS_VENDOR_ID, "subsys vendor");
	EXPECT(cfg_rd(f, 0x2e, 2) == MDGPU_PCI_SUBSYS_ID, "subsys id");
	EXPECT(cfg_rd(f, 0x06, 2) & 0x10, "status: no capability list");
	EXPECT(cfg_rd(f, 0x34, 1) == 0x40, "capability pointer 0x%x",
	       cfg_rd(f, 0x34, 1));
	EXPECT(cfg_rd(f, 0x3d, 1) == 1, "interrupt pin");
	/* The same dword read in 1, 2 and 4-byte pieces agrees. */
	EXPECT(cfg_rd(f, 0x00, 4) == (cfg_rd(f, 0x00, 2) | cfg_rd(f, 0x02, 2) << 16),
	       "4-byte vs 2-byte");
	EXPECT(cfg_rd(f, 0x01, 1) == (MDGPU_PCI_VENDOR_ID >> 8), "1-byte");
}

TEST(config_bar_sizing, FX_VFIO)
{
	for (int bar = 0; bar < 6; bar++) {
		uint32_t off = 0x10 + 4 * bar, orig = cfg_rd(f, off, 4), want = 0;

		if (bar == 0 || bar == 2 || bar == 4) {
			want = ~(uint32_t)(f->rg[bar].size - 1) & ~0xfU;
			if (bar == 4)
				want |= 0x8;	/* prefetchable */
			EXPECT((orig & 0xf) == (want & 0xf), "BAR%d type bits 0x%x",
			       bar, orig);
		}
		cfg_wr(f, off, 4, 0xffffffff);
		EXPECT(cfg_rd(f, off, 4) == want, "BAR%d probe 0x%x want 0x%x",
		       bar, cfg_rd(f, off, 4), want);
		cfg_wr(f, off, 4, orig);
	}
	/* A base address sticks (QEMU restores it after sizing). */
	cfg_wr(f, 0x10, 4, 0xfe000000);
	EXPECT(cfg_rd(f, 0x10, 4) == 0xfe000000, "BAR0 = 0x%x", cfg_rd(f, 0x10, 4));
}

TEST(config_command, FX_VFIO)
{
	uint16_t want = 0x2 | 0x4 | 0x400;	/* MEMORY, MASTER, INTX_DISABLE */
	uint32_t v;

	cfg_wr(f, 0x04, 2, 0xffff);
	v = cfg_rd(f, 0x04, 2);
	/* IO (bit 0) is "ignored": either reading back or not is accepted. */
	EXPECT((v & ~1U) == want, "command 0x%x", v);
	cfg_wr(f, 0x04, 2, 0);
	EXPECT((cfg_rd(f, 0x04, 2) & ~1U) == 0, "command not cleared");
	cfg_wr(f, 0x04, 2, 0x6);
	EXPECT(cfg_rd(f, 0x04, 2) == 0x6, "memory+master");
	cfg_wr(f, 0x3c, 1, 0x0b);	/* interrupt line: firmware scratch */
	EXPECT(cfg_rd(f, 0x3c, 1) == 0x0b, "interrupt line 0x%x", cfg_rd(f, 0x3c, 1));
}

TEST(config_msi_capability, FX_VFIO)
{
	uint32_t ctl = cfg_rd(f, 0x42, 2);

	EXPECT(cfg_rd(f, 0x40, 1) == 0x05, "cap id 0x%x", cfg_rd(f, 0x40, 1));
	EXPECT(cfg_rd(f, 0x41, 1) == 0x00, "next 0x%x", cfg_rd(f, 0x41, 1));
	EXPECT(ctl & 0x80, "not 64-bit: 0x%x", ctl);
	EXPECT((ctl & 0x0e) == 0, "more than one vector: 0x%x", ctl);
	EXPECT(!(ctl & 1), "enabled at start");
	cfg_wr(f, 0x42, 2, 0xffff);
	ctl = cfg_rd(f, 0x42, 2);
	EXPECT(ctl & 1, "enable bit not writable");
	EXPECT((ctl & 0x7e) == 0, "read-only MSI control bits changed: 0x%x", ctl);
	cfg_wr(f, 0x42, 2, 0);
	EXPECT(!(cfg_rd(f, 0x42, 2) & 1), "enable bit stuck");
	cfg_wr(f, 0x44, 4, 0xfee00000);
	cfg_wr(f, 0x48, 4, 0x1);
	cfg_wr(f, 0x4c, 2, 0x4021);
	EXPECT(cfg_rd(f, 0x44, 4) == 0xfee00000, "address lo");
	EXPECT(cfg_rd(f, 0x48, 4) == 0x1, "address hi");
	EXPECT(cfg_rd(f, 0x4c, 2) == 0x4021, "data");
}

TEST(config_readonly, FX_VFIO)
{
	uint32_t id = cfg_rd(f, 0x00, 4), cls = cfg_rd(f, 0x08, 4);

	cfg_wr(f, 0x00, 4, 0x12345678);
	cfg_wr(f, 0x08, 4, 0xffffffff);
	cfg_wr(f, 0x0e, 1, 0xff);
	cfg_wr(f, 0x2c, 4, 0);
	cfg_wr(f, 0x34, 1, 0x80);
	cfg_wr(f, 0x3d, 1, 4);
	cfg_wr(f, 0x06, 2, 0);
	EXPECT(cfg_rd(f, 0x00, 4) == id, "IDs changed");
	EXPECT(cfg_rd(f, 0x08, 4) == cls, "class/revision changed");
	EXPECT(cfg_rd(f, 0x0e, 1) == 0, "header type changed");
	EXPECT(cfg_rd(f, 0x2c, 2) == MDGPU_PCI_SUBSYS_VENDOR_ID, "subsys changed");
	EXPECT(cfg_rd(f, 0x34, 1) == 0x40, "cap pointer changed");
	EXPECT(cfg_rd(f, 0x3d, 1) == 1, "interrupt pin changed");
	EXPECT(cfg_rd(f, 0x06, 2) & 0x10, "capability list bit cleared");
}

/*
 * QEMU's vfio-pci reads the whole config space with one pread() at realize
 * and fails the device if it is short, so accesses inside the 256 bytes of
 * any length and alignment must work (split into naturally aligned pieces).
 * Documentation/kmod.md's "anything else -EINVAL" would break QEMU; see
 * Documentation/testing-vm.md, Decisions.
 */
TEST(config_whole_and_unaligned, FX_VFIO)
{
	uint8_t all[256], one;
	uint32_t v = 0;
	const int c = VFIO_PCI_CONFIG_REGION_INDEX;
	int bad = 0;

	ASSERT(rg_rw(f, c, 0, all, sizeof(all), 0) == sizeof(all),
	       "256-byte read (QEMU realize)");
	for (unsigned int i = 0; i < sizeof(all); i++) {
		one = (uint8_t)cfg_rd(f, i, 1);
		bad += one != all[i];
	}
	EXPECT(!bad, "%d bytes differ between the 256-byte and 1-byte reads", bad);
	EXPECT(rg_rw(f, c, 0x01, &v, 2, 0) == 2 &&
	       v == (uint32_t)(all[1] | all[2] << 8), "unaligned 2 at 1: 0x%x", v);
	v = 0;
	EXPECT(rg_rw(f, c, 0x03, &v, 3, 0) == 3 &&
	       v == (uint32_t)(all[3] | all[4] << 8 | all[5] << 16),
	       "3 at 3: 0x%x", v);
	/* An unaligned write of the scratch-free MSI data word lands. */
	v = 0x5aa5;
	EXPECT(rg_rw(f, c, 0x4c, &v, 2, 1) == 2, "MSI data write");
	EXPECT(cfg_rd(f, 0x4c, 2) == 0x5aa5, "MSI data 0x%x", cfg_rd(f, 0x4c, 2));
}

TEST(config_bad_access, FX_VFIO)
{
	static const struct { uint64_t off; size_t size; } bad[] = {
		{ 0x100, 4 }, { 0x100, 1 }, { 0xfc, 8 }, { 0xff, 2 },
		{ 0x00, 257 }, { 0xfff0, 4 },
	};
	const int c = VFIO_PCI_CONFIG_REGION_INDEX;
	uint8_t buf[512] = { 0 };

	for (int w = 0; w < 2; w++)
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			ssize_t r = rg_rw(f, c, bad[i].off, buf, bad[i].size, w);

			EXPECT(r == -EINVAL, "%s of %zu at 0x%" PRIx64 ": %zd",
			       w ? "write" : "read", bad[i].size, bad[i].off, r);
		}
	EXPECT(cfg_rd(f, 0x00, 2) == MDGPU_PCI_VENDOR_ID, "config damaged");
}

/* ---------------------------------------------------------------- */
/* tests: BAR0 registers                                             */
/* ---------------------------------------------------------------- */

TEST(regs_identity, FX_VFIO)
{
	const struct vtype *t = vtype_by_name("1g");
	uint32_t st = rd32(f, MDGPU_REG_STATUS);

	EXPECT(rd32(f, MDGPU_REG_MAGIC) == MDGPU_MAGIC, "MAGIC");
	EXPECT(rd32(f, MDGPU_REG_VERSION) == MDGPU_ABI_VERSION, "VERSION");
	EXPECT(rd32(f, MDGPU_REG_RING_ENTRIES) == MDGPU_RING_ENTRIES_DEFAULT,
	       "RING_ENTRIES");
	EXPECT(rd32(f, MDGPU_REG_TYPE_ID) == t->id, "TYPE_ID");
	EXPECT(rd32(f, MDGPU_REG_APERTURE_SIZE) == t->aperture_mib * MIB,
	       "APERTURE_SIZE");
	EXPECT((rd32(f, MDGPU_REG_FB_QUOTA_LO) |
		(uint64_t)rd32(f, MDGPU_REG_FB_QUOTA_HI) << 32) == vtype_quota(t),
	       "FB_QUOTA");
	EXPECT(rd32(f, MDGPU_REG_SM_COUNT) == SM_COUNT, "SM_COUNT");
	EXPECT(rd32(f, MDGPU_REG_WEIGHT) == t->default_weight, "WEIGHT");
	EXPECT(st & MDGPU_STATUS_READY, "STATUS 0x%x not READY", st);
	EXPECT(!(st & MDGPU_STATUS_BACKEND_LOST), "STATUS 0x%x", st);
	EXPECT(rd32(f, MDGPU_REG_SQ_HEAD) == 0 && rd32(f, MDGPU_REG_SQ_TAIL) == 0,
	       "ring pointers");
}

TEST(regs_readonly_ignore_writes, FX_VFIO)
{
	static const uint32_t ro[] = {
		MDGPU_REG_MAGIC, MDGPU_REG_VERSION, MDGPU_REG_STATUS,
		MDGPU_REG_RING_ENTRIES, MDGPU_REG_SQ_HEAD, MDGPU_REG_ERROR,
		MDGPU_REG_FENCE_LO, MDGPU_REG_FENCE_HI, MDGPU_REG_FB_QUOTA_LO,
		MDGPU_REG_FB_QUOTA_HI, MDGPU_REG_FB_USED_LO, MDGPU_REG_FB_USED_HI,
		MDGPU_REG_APERTURE_SIZE, MDGPU_REG_TYPE_ID, MDGPU_REG_WEIGHT,
		MDGPU_REG_SM_COUNT,
	};

	for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
		uint32_t before = rd32(f, ro[i]);

		wr32(f, ro[i], ~before);
		EXPECT(rd32(f, ro[i]) == before, "register 0x%x changed", ro[i]);
	}
}

TEST(regs_scratch_and_mask, FX_VFIO)
{
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0, "SCRATCH not 0 at start");
	wr32(f, MDGPU_REG_SCRATCH, 0xa5a55a5a);
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0xa5a55a5a, "SCRATCH");
	wr32(f, MDGPU_REG_SCRATCH, 0);
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0, "SCRATCH");
	wr32(f, MDGPU_REG_IRQ_MASK, 0xffffffff);
	EXPECT(rd32(f, MDGPU_REG_IRQ_MASK) == MDGPU_IRQ_ALL, "IRQ_MASK 0x%x",
	       rd32(f, MDGPU_REG_IRQ_MASK));
	wr32(f, MDGPU_REG_CONTROL, 0xffffffff & ~MDGPU_CONTROL_RESET);
	EXPECT(rd32(f, MDGPU_REG_CONTROL) == MDGPU_CONTROL_ENABLE, "CONTROL 0x%x",
	       rd32(f, MDGPU_REG_CONTROL));
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_ENABLED, "not ENABLED");
}

TEST(regs_reserved_read_zero, FX_VFIO)
{
	static const uint32_t res[] = { MDGPU_REG_LAST + 4, 0x100, 0x800, 0xffc };

	for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
		EXPECT(rd32(f, res[i]) == 0, "0x%x", res[i]);
		wr32(f, res[i], 0xffffffff);
		EXPECT(rd32(f, res[i]) == 0, "0x%x after write", res[i]);
	}
}

TEST(regs_irq_status_rw1c, FX_VFIO)
{
	wr32(f, MDGPU_REG_IRQ_STATUS, 0xffffffff);	/* no effect on 0 */
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == 0, "IRQ_STATUS not 0");
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION | MDGPU_IRQ_ERROR) == 0);
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) ==
	       (MDGPU_IRQ_COMPLETION | MDGPU_IRQ_ERROR), "IRQ_STATUS 0x%x",
	       rd32(f, MDGPU_REG_IRQ_STATUS));
	wr32(f, MDGPU_REG_IRQ_STATUS, 0);		/* writing 0 clears nothing */
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) ==
	       (MDGPU_IRQ_COMPLETION | MDGPU_IRQ_ERROR), "0 cleared bits");
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_COMPLETION);
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == MDGPU_IRQ_ERROR,
	       "IRQ_STATUS 0x%x", rd32(f, MDGPU_REG_IRQ_STATUS));
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ERROR);
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == 0, "not cleared");
}

TEST(bar0_bad_access, FX_VFIO)
{
	uint64_t v = 0;
	long long bad0 = stat_value(UUID0, "bad_accesses");
	int n = 0;

	for (int w = 0; w < 2; w++) {
		static const struct { uint64_t off; size_t size; } bad[] = {
			{ 0x02, 4 }, { 0x01, 4 }, { 0x4c, 1 }, { 0x4c, 2 },
			{ 0x48, 8 }, { 0x1000, 4 }, { 0xffe, 4 }, { 0xffc, 8 },
			{ 0x2000, 4 },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++, n++)
			EXPECT(rg_rw(f, 0, bad[i].off, &v, bad[i].size, w) == -EINVAL,
			       "%s of %zu at 0x%" PRIx64, w ? "write" : "read",
			       bad[i].size, bad[i].off);
	}
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0, "a rejected write landed");
	EXPECT(rd32(f, MDGPU_REG_MAGIC) == MDGPU_MAGIC, "MAGIC");
	EXPECT(bad0 >= 0, "no bad_accesses in stats");
	EXPECT(stat_value(UUID0, "bad_accesses") >= bad0 + n,
	       "bad_accesses %lld -> %lld, %d rejected",
	       bad0, stat_value(UUID0, "bad_accesses"), n);
}

TEST(ring_aperture_region_rw, FX_VFIO)
{
	for (int bar = 2; bar <= 4; bar += 2) {
		uint64_t sz = f->rg[bar].size;
		uint8_t b[16] = "0123456789abcde", r[16] = { 0 };
		uint32_t w = 0xc0ffee00 + bar, x = 0;

		EXPECT(rg_rw(f, bar, sz - 16, b, 16, 1) == 16, "write end");
		EXPECT(rg_rw(f, bar, sz - 16, r, 16, 0) == 16 && !memcmp(b, r, 16),
		       "read end");
		EXPECT(rg_rw(f, bar, 0x10, &w, 4, 1) == 4, "write 4");
		EXPECT(rg_rw(f, bar, 0x11, &x, 1, 0) == 1 &&
		       x == ((w >> 8) & 0xff), "1-byte read 0x%x", x);
		EXPECT(rg_rw(f, bar, sz - 8, b, 16, 1) == -EINVAL, "straddle end");
		EXPECT(rg_rw(f, bar, sz, b, 1, 0) == -EINVAL, "read past end");
		EXPECT(rg_rw(f, bar, sz, b, 1, 1) == -EINVAL, "write past end");
	}
}

/* mmap a region through the device fd (the guest's view). */
static void *bar_map(struct fx *f, int bar)
{
	void *p = mmap(NULL, f->rg[bar].size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       f->dev, f->rg[bar].offset);

	return p == MAP_FAILED ? NULL : p;
}

/* mmap a region through /dev/mdgpu (the daemon's view). */
static void *ctl_map(struct fx *f, unsigned int region, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f->ctl,
		       MDGPU_CTL_MMAP_OFFSET(f->vgpu, region));

	return p == MAP_FAILED ? NULL : p;
}

static void mmap_check(struct fx *f, int bar, unsigned int region)
{
	size_t sz = f->rg[bar].size;
	volatile uint32_t *g = bar_map(f, bar), *d;
	uint32_t v = 0;

	ASSERT(g, "mmap BAR%d", bar);
	d = ctl_map(f, region, sz);
	EXPECT(d, "mmap /dev/mdgpu region %u", region);
	g[0] = 0x11223344;
	g[sz / 4 - 1] = 0x55667788;
	EXPECT(rg_rw(f, bar, 0, &v, 4, 0) == 4 && v == 0x11223344,
	       "region read 0x%x", v);
	EXPECT(rg_rw(f, bar, sz - 4, &v, 4, 0) == 4 && v == 0x55667788,
	       "region read end 0x%x", v);
	if (d) {
		EXPECT(d[0] == 0x11223344 && d[sz / 4 - 1] == 0x55667788,
		       "daemon sees 0x%x 0x%x", d[0], d[sz / 4 - 1]);
		d[1] = 0x99aabbcc;
		EXPECT(g[1] == 0x99aabbcc, "guest sees 0x%x", g[1]);
		munmap((void *)d, sz);
	}
	v = 0xfeedf00d;
	EXPECT(rg_rw(f, bar, 8, &v, 4, 1) == 4 && g[2] == 0xfeedf00d,
	       "region write not in the mapping");
	/* Past the region: the mapping must be refused. */
	EXPECT(mmap(NULL, sz * 2, PROT_READ, MAP_SHARED, f->dev,
		    f->rg[bar].offset) == MAP_FAILED, "oversized mmap accepted");
	EXPECT(ctl_map(f, region, sz * 2) == NULL, "oversized ctl mmap accepted");
	munmap((void *)g, sz);
}

TEST(mmap_ring_bar2, FX_VFIO)
{
	mmap_check(f, MDGPU_BAR_RING, MDGPU_CTL_MMAP_RING);
}

TEST(mmap_aperture_bar4, FX_VFIO)
{
	mmap_check(f, MDGPU_BAR_APERTURE, MDGPU_CTL_MMAP_APERTURE);
}

TEST(bar0_not_mmapable, FX_VFIO)
{
	EXPECT(mmap(NULL, MDGPU_REGS_SIZE, PROT_READ, MAP_SHARED, f->dev,
		    f->rg[0].offset) == MAP_FAILED, "BAR0 mmap accepted");
}

/* ---------------------------------------------------------------- */
/* tests: interrupts                                                 */
/* ---------------------------------------------------------------- */

TEST(irq_msi_delivery, FX_VFIO)
{
	int efd = msi_on(f);

	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(fired(efd, 1000), "no MSI after COMPLETE");
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) & MDGPU_IRQ_COMPLETION, "status");
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ALL);
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(fired(efd, 1000), "no second MSI");
	/* Loopback trigger for tests: DATA_NONE, count 1. */
	EXPECT(set_irq_none(f, VFIO_PCI_MSI_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 1) == 0, "DATA_NONE");
	EXPECT(fired(efd, 1000), "DATA_NONE trigger did not signal");
	/* fd -1 disables. */
	EXPECT(set_irq_fd(f, VFIO_PCI_MSI_IRQ_INDEX, -1) == 0, "disable");
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(!fired(efd, NO_EV_MS), "signalled after disable");
	close(efd);
}

TEST(irq_masked_no_signal, FX_VFIO)
{
	int efd = msi_on(f);

	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ERROR);
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(!fired(efd, NO_EV_MS), "masked COMPLETION signalled");
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) & MDGPU_IRQ_COMPLETION,
	       "status not latched while masked");
	close(efd);
}

TEST(irq_intx_delivery, FX_VFIO)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	cfg_wr(f, 0x42, 2, 0);		/* MSI off: INTx is used */
	ASSERT(set_irq_fd(f, VFIO_PCI_INTX_IRQ_INDEX, efd) == 0, "INTx eventfd");
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(fired(efd, 1000), "no INTx after COMPLETE");
	/* Automasked: the guest acks, QEMU unmasks, the next one fires. */
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ALL);
	EXPECT(set_irq_none(f, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_UNMASK, 1) == 0, "unmask");
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(fired(efd, 1000), "no INTx after unmask");
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ALL);
	EXPECT(set_irq_none(f, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_UNMASK, 1) == 0, "unmask");
	/* Masked through VFIO: no signal. */
	EXPECT(set_irq_none(f, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_MASK, 1) == 0, "mask");
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(!fired(efd, NO_EV_MS), "INTx fired while masked");
	close(efd);
}

TEST(irq_unmask_pending_fires, FX_VFIO)
{
	int efd = msi_on(f);

	wr32(f, MDGPU_REG_IRQ_MASK, 0);
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(!fired(efd, NO_EV_MS), "masked cause signalled");
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_COMPLETION);
	EXPECT(fired(efd, 1000), "unmasking a pending cause did not interrupt");
	close(efd);
}

TEST(irq_intx_disable_gates, FX_VFIO)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	cfg_wr(f, 0x42, 2, 0);
	ASSERT(set_irq_fd(f, VFIO_PCI_INTX_IRQ_INDEX, efd) == 0, "INTx eventfd");
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	cfg_wr(f, 0x04, 2, 0x6 | 0x400);	/* INTX_DISABLE */
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(!fired(efd, NO_EV_MS), "INTx with INTX_DISABLE set");
	cfg_wr(f, 0x04, 2, 0x6);
	EXPECT(fired(efd, 1000), "pending INTx not signalled when re-enabled");
	close(efd);
}

/* SET_IRQS with two eventfds of data whatever the flags: ioctl's return. */
static int set_irqs_raw(struct fx *f, uint32_t index, uint32_t start,
			uint32_t count, uint32_t flags, int efd)
{
	struct {
		struct vfio_irq_set s;
		int32_t fd[2];
	} a = { .s = { .argsz = sizeof(a), .index = index, .start = start,
		       .count = count, .flags = flags },
		.fd = { efd, efd } };

	return ioctl(f->dev, VFIO_DEVICE_SET_IRQS, &a);
}

TEST(set_irqs_invalid, FX_VFIO)
{
	int efd = eventfd(0, EFD_CLOEXEC);
	const uint32_t ev = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;

#define SET(idx, st, cnt, fl) set_irqs_raw(f, idx, st, cnt, fl, efd)
	EXPECT_ERRNO(SET(VFIO_PCI_NUM_IRQS, 0, 1, ev), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_MSI_IRQ_INDEX, 1, 1, ev), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_MSI_IRQ_INDEX, 0, 2, ev), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_MSIX_IRQ_INDEX, 0, 1, ev), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_MSI_IRQ_INDEX, 0, 1, ev |
			 VFIO_IRQ_SET_DATA_BOOL), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_MSI_IRQ_INDEX, 0, 1,
			 VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER |
			 VFIO_IRQ_SET_ACTION_MASK), EINVAL);
	/* MASK/UNMASK: INTx only, and no irqfd resampler (DATA_EVENTFD). */
	EXPECT_ERRNO(SET(VFIO_PCI_MSI_IRQ_INDEX, 0, 1, VFIO_IRQ_SET_DATA_NONE |
			 VFIO_IRQ_SET_ACTION_MASK), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_INTX_IRQ_INDEX, 0, 1, VFIO_IRQ_SET_DATA_EVENTFD |
			 VFIO_IRQ_SET_ACTION_UNMASK), EINVAL);
	/* DATA_NONE, count 0, TRIGGER: disables (valid). */
	EXPECT(SET(VFIO_PCI_MSI_IRQ_INDEX, 0, 0, VFIO_IRQ_SET_DATA_NONE |
		   VFIO_IRQ_SET_ACTION_TRIGGER) == 0, "disable by count 0");
#undef SET
	close(efd);
}

/* ---------------------------------------------------------------- */
/* tests: doorbell, completion                                       */
/* ---------------------------------------------------------------- */

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

/* ---------------------------------------------------------------- */
/* tests: DMA                                                        */
/* ---------------------------------------------------------------- */

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
		/* The whole buffer: more than one 1 MiB chunk is not needed,
		 * but the full mapping must come back intact. */
		EXPECT(dma(f, 0, DMA_IOVA, big, DMA_SIZE) == 0, "DMA read");
		EXPECT(!memcmp(big, g, DMA_SIZE), "DMA read data differs");
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
	/* Documentation/kmod.md: -EFAULT; type1's vfio_dma_rw() says -EINVAL
	 * for an IOVA with no mapping and the spec passes that up. */
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

/* ---------------------------------------------------------------- */
/* tests: knobs                                                      */
/* ---------------------------------------------------------------- */

static void knob_check(struct fx *f, const char *knob, int min, int max,
		       int good)
{
	const char *p = mdev_path(UUID0, NULL);
	char path[300], v[32];
	static const char *const junk[] = { "abc", "5x", "", " ", "1 2", "0x",
					    "99999999999999999999" };
	struct mdgpu_ctl_event ev;
	long long now;

	snprintf(path, sizeof(path), "%.200s/mdgpu/%s", p, knob);
	snprintf(v, sizeof(v), "%d\n", good);
	ASSERT(sysfs_write(path, v) == 0, "%s = %d", knob, good);
	EXPECT(sysfs_num(path) == good, "%s reads %lld", knob, sysfs_num(path));
	ASSERT(ev_wait(f, MDGPU_EV_KNOB, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no KNOB event");
	now = !strcmp(knob, "weight") ? ev.knob.weight :
	      !strcmp(knob, "cap") ? ev.knob.cap : ev.knob.priority;
	EXPECT(now == good, "KNOB event %s %lld", knob, now);
	snprintf(v, sizeof(v), "%d", min - 1);
	EXPECT(sysfs_write(path, v) == -EINVAL, "%s = %s", knob, v);
	snprintf(v, sizeof(v), "%d", max + 1);
	EXPECT(sysfs_write(path, v) == -EINVAL, "%s = %s", knob, v);
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		if (junk[i][0])	/* an empty write never reaches the store */
			EXPECT(sysfs_write(path, junk[i]) == -EINVAL, "%s = '%s'",
			       knob, junk[i]);
	EXPECT(sysfs_num(path) == good, "%s changed by a bad write", knob);
	EXPECT(ev_wait(f, MDGPU_EV_KNOB, f->vgpu, NULL, NO_EV_MS) == -ETIMEDOUT,
	       "KNOB event for a rejected write");
	snprintf(v, sizeof(v), "%d", min);
	EXPECT(sysfs_write(path, v) == 0 && sysfs_num(path) == min, "%s min", knob);
	snprintf(v, sizeof(v), "%d", max);
	EXPECT(sysfs_write(path, v) == 0 && sysfs_num(path) == max, "%s max", knob);
}

TEST(knob_weight, FX_VFIO)
{
	EXPECT(sysfs_num(mdev_path(UUID0, "mdgpu/weight")) ==
	       vtype_by_name("1g")->default_weight, "default weight");
	knob_check(f, "weight", MDGPU_WEIGHT_MIN, MDGPU_WEIGHT_MAX, 50);
	EXPECT(rd32(f, MDGPU_REG_WEIGHT) == MDGPU_WEIGHT_MAX,
	       "WEIGHT register %u does not mirror sysfs", rd32(f, MDGPU_REG_WEIGHT));
}

TEST(knob_same_value_and_sign, FX_MDEV)
{
	const char *p = mdev_path(UUID0, "mdgpu/priority");
	char path[300];
	struct mdgpu_ctl_event ev;

	snprintf(path, sizeof(path), "%s", p);
	ASSERT(sysfs_write(path, "5") == 0);
	EXPECT(ev_wait(f, MDGPU_EV_KNOB, f->vgpu, NULL, EV_TIMEOUT_MS) == 0, "KNOB");
	/* An accepted write emits KNOB even when nothing changes. */
	ASSERT(sysfs_write(path, "5") == 0);
	EXPECT(ev_wait(f, MDGPU_EV_KNOB, f->vgpu, &ev, EV_TIMEOUT_MS) == 0 &&
	       ev.knob.priority == 5, "no KNOB for an unchanged value");
	/* kstrtou32 takes one leading '+', nothing else. */
	EXPECT(sysfs_write(path, "+6") == 0 && sysfs_num(path) == 6, "+6");
	EXPECT(sysfs_write(path, "++6") == -EINVAL, "++6");
	EXPECT(sysfs_write(path, "6\n\n") == -EINVAL, "two newlines");
}

TEST(knob_cap, FX_MDEV)
{
	EXPECT(sysfs_num(mdev_path(UUID0, "mdgpu/cap")) == MDGPU_CAP_MAX, "default");
	knob_check(f, "cap", MDGPU_CAP_MIN, MDGPU_CAP_MAX, 30);
}

TEST(knob_priority, FX_MDEV)
{
	EXPECT(sysfs_num(mdev_path(UUID0, "mdgpu/priority")) ==
	       MDGPU_PRIORITY_DEFAULT, "default");
	knob_check(f, "priority", MDGPU_PRIORITY_MIN, MDGPU_PRIORITY_MAX, 6);
}

TEST(knob_policy, FX_PARENT)
{
	const char *p = parent_knob(f->parent, "policy");
	char b[64];
	struct mdgpu_ctl_event ev;
	static const char *const names[] = { "best-effort", "equal-share",
					     "fixed-share" };

	EXPECT(sysfs_read(p, b, sizeof(b)) > 0 && !strcmp(b, "best-effort"),
	       "default policy '%s'", b);
	for (int i = 2; i >= 0; i--) {
		ASSERT(sysfs_write(parent_knob(f->parent, "policy"), names[i]) == 0,
		       "policy %s", names[i]);
		EXPECT(sysfs_read(parent_knob(f->parent, "policy"), b, sizeof(b)) > 0 &&
		       !strcmp(b, names[i]), "policy reads '%s'", b);
		EXPECT(ev_wait(f, MDGPU_EV_POLICY, ~0U, &ev, EV_TIMEOUT_MS) == 0 &&
		       ev.policy.policy == (uint32_t)i, "POLICY event %u",
		       ev.policy.policy);
	}
	p = parent_knob(f->parent, "policy");
	EXPECT(sysfs_write(p, "fastest") == -EINVAL, "bad policy");
	EXPECT(sysfs_write(p, "best-effortx") == -EINVAL, "bad policy");
	EXPECT(sysfs_write(p, "equal-share\n") == 0, "newline accepted");
	EXPECT(sysfs_read(p, b, sizeof(b)) > 0 && !strcmp(b, "equal-share"),
	       "policy '%s'", b);
}

TEST(knob_timeslice, FX_PARENT)
{
	char p[256];
	struct mdgpu_ctl_event ev;

	snprintf(p, sizeof(p), "%s", parent_knob(f->parent, "timeslice_us"));
	EXPECT(sysfs_num(p) == MDGPU_TIMESLICE_US_DEFAULT, "default");
	EXPECT(sysfs_write(p, "500") == 0 && sysfs_num(p) == 500, "min");
	EXPECT(ev_wait(f, MDGPU_EV_POLICY, ~0U, &ev, EV_TIMEOUT_MS) == 0 &&
	       ev.policy.timeslice_us == 500, "POLICY event %u",
	       ev.policy.timeslice_us);
	EXPECT(sysfs_write(p, "1000000\n") == 0 && sysfs_num(p) == 1000000, "max");
	EXPECT(sysfs_write(p, "499") == -EINVAL, "below min");
	EXPECT(sysfs_write(p, "1000001") == -EINVAL, "above max");
	EXPECT(sysfs_write(p, "-1") == -EINVAL, "negative");
	EXPECT(sysfs_write(p, "2000us") == -EINVAL, "garbage");
	EXPECT(sysfs_num(p) == 1000000, "changed by a bad write");
}

/* ---------------------------------------------------------------- */
/* tests: daemon loss, reset, lifecycle                              */
/* ---------------------------------------------------------------- */

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
	EXPECT(sysfs_read(parent_knob(f->parent, "gpu_name"), b, sizeof(b)) > 0 &&
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
	volatile int done;
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
	EXPECT(atoi(after) - atoi(before) <= 20, "%d kernel log lines for 6000 "
	       "bad accesses", atoi(after) - atoi(before));
	EXPECT(stat_value(UUID0, "bad_accesses") >= 3000, "bad_accesses %lld",
	       stat_value(UUID0, "bad_accesses"));
}

struct hammer {
	struct fx *f;
	volatile int stop;
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

			if (!r)
				h->ok++;
			else if (r == -ENOENT || r == -ENODEV)
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
	printf("    race: %ld ok, %ld ENOENT/ENODEV, %ld other\n", h.ok, h.gone,
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

/* ---------------------------------------------------------------- */
/* --hold: the outer guest's daemon for the nested QEMU test           */
/* ---------------------------------------------------------------- */

static volatile sig_atomic_t hold_stop;

static void hold_signal(int sig)
{
	(void)sig;
	hold_stop = 1;
}

/* Execute (NOP only) and complete the commands from head to tail. */
static int hold_doorbell(struct fx *f, volatile uint8_t *ring, uint32_t entries,
			 uint32_t *head, uint64_t *fence, uint32_t tail)
{
	uint32_t irq = 0;
	int bad = 0;

	for (; *head != tail; (*head)++, (*fence)++) {
		volatile struct mdgpu_cmd *c = (volatile void *)(ring +
			(uint64_t)(*head % entries) * MDGPU_CMD_SIZE);
		volatile struct mdgpu_cpl *q = (volatile void *)(ring +
			MDGPU_RING_CQ_OFFSET(entries) +
			(uint64_t)(*head % entries) * MDGPU_CPL_SIZE);
		int ok = c->opcode == MDGPU_OP_NOP && !c->reserved &&
			 !(c->flags & ~MDGPU_CMD_F_MASK);

		q->seq = *head;
		q->opcode = c->opcode;
		q->result = q->result2 = 0;
		q->status = ok ? 0 : -EINVAL;
		bad += !ok;
		if (c->flags & MDGPU_CMD_F_IRQ)
			irq = MDGPU_IRQ_COMPLETION;
	}
	return complete(f, *head, *fence, 0, irq) ? -1 : bad;
}

static int hold(struct fx *f)
{
	struct sigaction sa = { .sa_handler = hold_signal };
	struct mdgpu_ctl_event ev;
	volatile uint8_t *ring = NULL;
	uint32_t entries = 0, head = 0, doorbells = 0, bad = 0;
	uint64_t fence = 0;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa, NULL);
	if (!module_loaded() && (r = module_load())) {
		printf("FAIL: qemu-daemon: load mdgpu.ko: %s\n", strerror(-r));
		return 1;
	}
	if ((r = daemon_register(f)) || (r = mdev_create(f, TYPE_1G, UUID0)) ||
	    (r = ev_wait(f, MDGPU_EV_CREATE, ~0U, &ev, EV_TIMEOUT_MS))) {
		printf("FAIL: qemu-daemon: setup: %s\n", strerror(-r));
		return 1;
	}
	f->vgpu = ev.vgpu_id;
	entries = ev.create.ring_entries;
	ring = ctl_map(f, MDGPU_CTL_MMAP_RING, MDGPU_RING_BYTES(entries));
	printf("hold: ready %s vgpu %u ring %s\n", UUID0, f->vgpu,
	       ring ? "mapped" : "NOT mapped");
	while (!hold_stop) {
		struct pollfd p = { .fd = f->ctl, .events = POLLIN };

		if (poll(&p, 1, 500) <= 0)
			continue;
		if (read(f->ctl, &ev, sizeof(ev)) != sizeof(ev))
			continue;
		printf("hold: event %u vgpu %u\n", ev.type, ev.vgpu_id);
		if (ev.type == MDGPU_EV_RESET)
			head = 0, fence = 0;
		if (ev.type != MDGPU_EV_DOORBELL || ev.vgpu_id != f->vgpu || !ring)
			continue;
		doorbells++;
		r = hold_doorbell(f, ring, entries, &head, &fence,
				  ev.doorbell.sq_tail);
		bad += r != 0;
		printf("hold: doorbell tail %u, completed to %u (%d)\n",
		       ev.doorbell.sq_tail, head, r);
	}
	if (doorbells && !bad)
		printf("PASS: qemu-daemon-doorbell\n");
	else
		printf("FAIL: qemu-daemon-doorbell: %u doorbells, %u bad\n",
		       doorbells, bad);
	vt_teardown(f, FX_MDEV);
	return doorbells && !bad ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--hold"))
		return hold(&fx);
	return vt_main(argc, argv, &fx);
}
