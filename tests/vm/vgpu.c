// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu.c: fixtures and helpers of mdgpu-vmtest (see vgpu.h): the VFIO user
 * (what QEMU does), the mini daemon, sysfs, module loading.
 */
#include "vgpu.h"

#include <dirent.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

/* The type table, as data, from the same file the module reads. */
const struct vtype vtypes[] = {
#define MDGPU_TYPE(i, n, fb, div, max, w, sm, ap, desc) \
	{ i, n, fb, div, max, w, sm, ap },
#include "mdev-types/mdgpu-types.def"
#undef MDGPU_TYPE
};
const size_t nr_vtypes = ARRAY_SIZE(vtypes);

struct fx fx = { .ctl = -1, .container = -1, .group = -1, .dev = -1 };

/* ---------------------------------------------------------------- */
/* small helpers                                                     */
/* ---------------------------------------------------------------- */

const struct vtype *vtype_by_name(const char *name)
{
	for (size_t i = 0; i < NR_VTYPES; i++)
		if (!strcmp(vtypes[i].name, name))
			return &vtypes[i];
	return NULL;
}

uint64_t vtype_quota(const struct vtype *t)
{
	return t->fb_mib ? t->fb_mib * MIB : FB_SIZE / t->fb_divisor;
}

/* The 16 bytes of a UUID string, in string order (uuid_t). */
void uuid_bytes(const char *str, uint8_t out[16])
{
	for (int i = 0; i < 16; i++) {
		while (*str == '-')
			str++;
		char hex[3] = { str[0], str[0] ? str[1] : 0, 0 };

		out[i] = (uint8_t)strtoul(hex, NULL, 16);
		str += hex[1] ? 2 : strlen(str);
	}
}

int uuid_is(const uint8_t got[16], const char *str)
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
int uuid_matches(const uint8_t got[16], const char *str)
{
	uint8_t u[16], g[16];

	uuid_bytes(str, u);
	memcpy(g, u, 16);
	for (int i = 0; i < 4; i++)
		g[i] = u[3 - i];
	g[4] = u[5]; g[5] = u[4]; g[6] = u[7]; g[7] = u[6];
	return !memcmp(got, u, 16) || !memcmp(got, g, 16);
}

void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int path_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

/* Write a string to a sysfs file: 0 or -errno. */
int sysfs_write(const char *path, const char *s)
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
int sysfs_read(const char *path, char *buf, size_t len)
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

long long sysfs_num(const char *path)
{
	char b[64];

	if (sysfs_read(path, b, sizeof(b)) <= 0)
		return -1;
	return strtoll(b, NULL, 0);
}

const char *type_path(const char *parent, const char *type, const char *attr)
{
	static char p[256];

	snprintf(p, sizeof(p), "/sys/class/mdev_bus/%s/mdev_supported_types/%s/%s",
		 parent, type, attr);
	return p;
}

const char *mdev_path(const char *uuid, const char *attr)
{
	static char p[256];

	snprintf(p, sizeof(p), "/sys/bus/mdev/devices/%s%s%s", uuid,
		 attr ? "/" : "", attr ? attr : "");
	return p;
}

/* The parent's knobs: its class device, whatever the mdev parent is. */
const char *parent_knob(const struct fx *f, const char *knob)
{
	static char p[256];

	snprintf(p, sizeof(p), "/sys/class/mdgpu/mdgpu%u/mdgpu/%s",
		 f->reg.parent_id, knob);
	return p;
}

/*
 * The PCI address of the edu device that stands in for the GPU, found
 * once by vendor and device id; NULL if the guest has none.
 */
const char *gpu_pci(void)
{
	static char bdf[MDGPU_NAME_LEN];
	static int looked;
	DIR *d;
	struct dirent *e;

	if (looked)
		return bdf[0] ? bdf : NULL;
	looked = 1;
	d = opendir("/sys/bus/pci/devices");
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		char p[300];

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/vendor", e->d_name);
		if (sysfs_num(p) != EDU_VENDOR)
			continue;
		snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/device", e->d_name);
		if (sysfs_num(p) == EDU_DEVICE &&
		    strlen(e->d_name) < sizeof(bdf)) {
			snprintf(bdf, sizeof(bdf), "%s", e->d_name);
			break;
		}
	}
	closedir(d);
	return bdf[0] ? bdf : NULL;
}

/* The bus_id the mini daemon registers: edu's address, else BUS_ID. */
const char *gpu_bus_id(void)
{
	return gpu_pci() ? gpu_pci() : BUS_ID;
}

long long avail(struct fx *f, const char *type)
{
	return sysfs_num(type_path(f->parent, type, "available_instances"));
}

int mdev_create(struct fx *f, const char *type, const char *uuid)
{
	return sysfs_write(type_path(f->parent, type, "create"), uuid);
}

int mdev_remove(const char *uuid)
{
	return sysfs_write(mdev_path(uuid, "remove"), "1");
}

/* Run a shell command, capture up to len bytes of stdout+stderr. */
int run_cmd(const char *cmd, char *out, size_t len)
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
long long stat_value(const char *uuid, const char *key)
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

int module_loaded(void)
{
	return path_exists("/sys/module/mdgpu");
}

int module_load(void)
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

int module_unload(void)
{
	return syscall(SYS_delete_module, "mdgpu", O_NONBLOCK) ? -errno : 0;
}

/* ---------------------------------------------------------------- */
/* the mini daemon                                                   */
/* ---------------------------------------------------------------- */

void reg_init(struct mdgpu_ctl_register *r)
{
	memset(r, 0, sizeof(*r));
	r->abi_version = MDGPU_ABI_VERSION;
	snprintf(r->name, sizeof(r->name), "%s", GPU_NAME);
	/* The suite runs on the PCI parent when the guest has edu. */
	if (gpu_pci())
		r->flags = MDGPU_REGISTER_F_PCI;
	snprintf(r->bus_id, sizeof(r->bus_id), "%s", gpu_bus_id());
	r->fb_size = FB_SIZE;
	r->sm_count = SM_COUNT;
}

int daemon_register(struct fx *f)
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
int ev_wait(struct fx *f, uint32_t type, uint32_t vgpu,
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
int ev_next(struct fx *f, struct mdgpu_ctl_event *ev, int timeout_ms)
{
	struct pollfd p = { .fd = f->ctl, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	return read(f->ctl, ev, sizeof(*ev)) == sizeof(*ev) ? 0 : -errno;
}

void ev_drain(struct fx *f)
{
	while (ev_wait(f, 0, 0, NULL, 0) == 0)
		;
}

/*
 * The fixture vGPU's generation now, from sysfs `stats` (the daemon's
 * helpers use it, as an up-to-date daemon knows it from the events).
 * Thread-safe: its own buffers, not mdev_path()'s.  While the file is
 * gone (the mdev's removal has begun) the last value read stands.
 */
uint32_t vgpu_gen(struct fx *f)
{
	char b[1024], *p;

	if (sysfs_read("/sys/bus/mdev/devices/" UUID0 "/mdgpu/stats", b,
		       sizeof(b)) > 0 && (p = strstr(b, "generation: ")))
		__atomic_store_n(&f->gen, (uint32_t)strtoul(p + 12, NULL, 10),
				 __ATOMIC_RELAXED);
	return __atomic_load_n(&f->gen, __ATOMIC_RELAXED);
}

int complete_gen(struct fx *f, uint32_t gen, uint32_t head, uint64_t fence,
		 uint64_t fb_used, uint32_t irq)
{
	struct mdgpu_ctl_complete c = {
		.vgpu_id = f->vgpu, .sq_head = head, .fence = fence,
		.fb_used = fb_used, .irq = irq, .gen = gen,
	};

	return ioctl(f->ctl, MDGPU_CTL_COMPLETE, &c) ? -errno : 0;
}

/* COMPLETE in the vGPU's current generation, as a daemon that is up to
 * date sends it. */
int complete(struct fx *f, uint32_t head, uint64_t fence, uint64_t fb_used,
	     uint32_t irq)
{
	return complete_gen(f, vgpu_gen(f), head, fence, fb_used, irq);
}

int context_event(struct fx *f, uint32_t event)
{
	struct mdgpu_ctl_vgpu_event e = { .vgpu_id = f->vgpu, .event = event };

	return ioctl(f->ctl, MDGPU_CTL_VGPU_EVENT, &e) ? -errno : 0;
}

int dma_gen(struct fx *f, uint32_t gen, int write, uint64_t iova, void *buf,
	    uint64_t len)
{
	struct mdgpu_ctl_dma d = {
		.vgpu_id = f->vgpu, .write = write, .iova = iova,
		.buf = (uintptr_t)buf, .len = len, .gen = gen,
	};

	return ioctl(f->ctl, MDGPU_CTL_DMA, &d) ? -errno : 0;
}

/* DMA in the vGPU's current generation. */
int dma(struct fx *f, int write, uint64_t iova, void *buf, uint64_t len)
{
	return dma_gen(f, vgpu_gen(f), write, iova, buf, len);
}

/* ---------------------------------------------------------------- */
/* the VFIO user (what QEMU does)                                    */
/* ---------------------------------------------------------------- */

void vfio_close(struct fx *f)
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
void vfio_open(struct fx *f)
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
ssize_t rg_rw(struct fx *f, int idx, uint64_t off, void *buf, size_t len,
	      int write)
{
	ssize_t n = write ? pwrite(f->dev, buf, len, f->rg[idx].offset + off)
			  : pread(f->dev, buf, len, f->rg[idx].offset + off);

	return n < 0 ? -errno : n;
}

uint32_t rd32(struct fx *f, uint32_t off)
{
	uint32_t v = 0xdeadbeef;

	EXPECT(rg_rw(f, MDGPU_BAR_REGS, off, &v, 4, 0) == 4,
	       "BAR0 read at 0x%x", off);
	return v;
}

void wr32(struct fx *f, uint32_t off, uint32_t v)
{
	EXPECT(rg_rw(f, MDGPU_BAR_REGS, off, &v, 4, 1) == 4,
	       "BAR0 write at 0x%x", off);
}

uint32_t cfg_rd(struct fx *f, uint32_t off, size_t size)
{
	uint32_t v = 0;

	EXPECT(rg_rw(f, VFIO_PCI_CONFIG_REGION_INDEX, off, &v, size, 0) ==
	       (ssize_t)size, "config read %zu at 0x%x", size, off);
	return v;
}

void cfg_wr(struct fx *f, uint32_t off, size_t size, uint32_t v)
{
	EXPECT(rg_rw(f, VFIO_PCI_CONFIG_REGION_INDEX, off, &v, size, 1) ==
	       (ssize_t)size, "config write %zu at 0x%x", size, off);
}

int set_irq_fd(struct fx *f, unsigned int index, int efd)
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

/*
 * VFIO_DEVICE_SET_IRQS as a hostile user may issue it: any header,
 * @argsz claimed, and two copies of @efd after the header whatever the
 * flags say (the kernel reads at most what argsz and count allow, and
 * refuses more).  The ioctl's return, errno set.
 */
int set_irqs_raw(struct fx *f, uint32_t index, uint32_t start,
		 uint32_t count, uint32_t flags, uint32_t argsz, int efd)
{
	struct {
		struct vfio_irq_set s;
		int32_t fd[2];
	} a = { .s = { .argsz = argsz, .index = index, .start = start,
		       .count = count, .flags = flags },
		.fd = { efd, efd } };

	return ioctl(f->dev, VFIO_DEVICE_SET_IRQS, &a);
}

int set_irq_none(struct fx *f, unsigned int index, uint32_t action,
		 uint32_t count)
{
	struct vfio_irq_set s = { .argsz = sizeof(s), .index = index,
				  .count = count,
				  .flags = VFIO_IRQ_SET_DATA_NONE | action };

	return ioctl(f->dev, VFIO_DEVICE_SET_IRQS, &s) ? -errno : 0;
}

/* Has the eventfd fired within ms?  Consumes the count. */
int fired(int efd, int ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	uint64_t n;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	return read(efd, &n, sizeof(n)) == sizeof(n) && n > 0;
}

/* Enable MSI the way a guest + QEMU do: eventfd, then the cap's enable. */
int msi_on(struct fx *f)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	EXPECT(set_irq_fd(f, VFIO_PCI_MSI_IRQ_INDEX, efd) == 0, "MSI eventfd");
	cfg_wr(f, 0x42, 2, cfg_rd(f, 0x42, 2) | 1);
	return efd;
}

/* mmap a region through the device fd (the guest's view). */
void *bar_map(struct fx *f, int bar)
{
	void *p = mmap(NULL, f->rg[bar].size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       f->dev, f->rg[bar].offset);

	return p == MAP_FAILED ? NULL : p;
}

/* mmap a region through /dev/mdgpu (the daemon's view). */
void *ctl_map(struct fx *f, unsigned int region, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f->ctl,
		       MDGPU_CTL_MMAP_OFFSET(f->vgpu, region));

	return p == MAP_FAILED ? NULL : p;
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
		struct mdgpu_ctl_event ev;

		vfio_open(f);
		ASSERT(ev_wait(f, MDGPU_EV_OPEN, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
		       "no OPEN event");
		f->gen = ev.gen.gen;
	}
}

void vt_teardown(struct fx *f, int level)
{
	(void)level;
	vfio_close(f);
	f->gen = 0;
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
