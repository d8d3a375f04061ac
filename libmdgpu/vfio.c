// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmdgpu vfio transport: a host process opens an mdgpu mdev exactly as
 * QEMU's vfio-pci does and speaks the ring through the vGPU's BARs
 * (uapi sections 1 and 2, Documentation/kmod.md):
 *
 *   container (/dev/vfio/vfio, VFIO_TYPE1v2_IOMMU) + group (the mdev's
 *   iommu_group) + device fd (VFIO_GROUP_GET_DEVICE_FD with the UUID);
 *   BAR2 (ring) and BAR4 (aperture) mmap()ed; BAR0 registers by pread/
 *   pwrite on the region (trapped by mdgpu.ko);
 *   open: CONTROL = RESET | ENABLE, IRQ_MASK = all, MSI on an eventfd
 *   (VFIO_DEVICE_SET_IRQS, then the MSI capability's enable bit, as a
 *   guest + QEMU do), INTx if MSI cannot be set; then, as after every
 *   reset, wait for STATUS.RESET_PENDING to clear (mdgpud took it up);
 *   doorbell: the new commands get MDGPU_CMD_F_IRQ, then SQ_TAIL is
 *   written;
 *   wait: SQ_HEAD is polled for spin_us, then the thread sleeps on the
 *   interrupt eventfd (20 ms at most between looks at STATUS).
 * A device of ABI 1.11 mirrors STATUS, SQ_HEAD and ERROR in BAR2 (struct
 * mdgpu_ring_mirror): those are read there, a load instead of a pread.
 * A device of ABI 1.13 has a shadow doorbell in BAR2 (struct
 * mdgpu_ring_shadow): the doorbell stores the tail there, then a full
 * fence, and writes SQ_TAIL only when daemon_polling reads 0 (mdgpud
 * would not look at the shadow before it sleeps).
 *
 * STATUS decides the errors: BACKEND_LOST -> -ENODEV (mdgpud is gone),
 * ENABLED cleared -> -ECANCELED (someone reset the device: queued work
 * was dropped), RING_ERROR -> the ERROR register's errno.
 *
 * Host buffers go through the aperture (two staging halves, client.c), as
 * on the socket transport; with opts.host_bytes, memory mapped for DMA
 * (VFIO_IOMMU_MAP_DMA) is the zero-copy area: copies from/to it are
 * MDGPU_SPACE_IOVA commands that mdgpud serves with MDGPU_CTL_DMA.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/vfio.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "priv.h"

#define MDGPU_VFIO_SYSFS	"/sys/bus/mdev/devices"
#define MDGPU_VFIO_MSI_CTRL	0x42	/* MSI capability at 0x40 (kmod.md) */

/* How long one eventfd sleep lasts before STATUS is looked at again. */
static const int mdgpu_vfio_recheck_ms = 20;
/*
 * The longest wait for mdgpud to take up a reset.  It does so between
 * slices, so a slice that overruns (a long kernel, up to the daemon's
 * hang bound, 5 s by default) delays it.
 */
static const uint64_t mdgpu_vfio_reset_ms = 30000;

struct mdgpu_vfio {
	int container, group, dev, efd;
	bool msi;			/* else INTx (automasked) */
	uint64_t regs_off, cfg_off;
	uint8_t *ring;
	size_t ring_size;
	const struct mdgpu_ring_mirror *mirror;	/* in ring, or NULL */
	struct mdgpu_ring_shadow *shadow;	/* in ring, or NULL */
	uint8_t *ap;
	size_t ap_size;
	uint32_t flagged;		/* commands up to here have F_IRQ */
	uint8_t *dma_buf;		/* zero-copy host area, IOVA-mapped */
	size_t dma_size;
	uint64_t dma_iova;
	char uuid[40];
};

static int mdgpu_vfio_rd(struct mdgpu_vfio *s, uint32_t reg, uint32_t *v)
{
	ssize_t n = pread(s->dev, v, 4, (off_t)(s->regs_off + reg));

	return n == 4 ? 0 : n < 0 ? -errno : -EIO;
}

static int mdgpu_vfio_wr(struct mdgpu_vfio *s, uint32_t reg, uint32_t v)
{
	ssize_t n = pwrite(s->dev, &v, 4, (off_t)(s->regs_off + reg));

	return n == 4 ? 0 : n < 0 ? -errno : -EIO;
}

/*
 * A register that waits poll: from the ring's mirror where the device
 * keeps one (a load, no system call), else from BAR0.  STATUS and
 * SQ_HEAD are loaded with acquire ordering: what is read after them (the
 * completions up to the head, ERROR after STATUS) is at least as new.
 */
static int mdgpu_vfio_polled(struct mdgpu_vfio *s, uint32_t reg, uint32_t *v)
{
	const struct mdgpu_ring_mirror *m = s->mirror;

	if (m && reg == MDGPU_REG_STATUS)
		*v = __atomic_load_n(&m->status, __ATOMIC_ACQUIRE);
	else if (m && reg == MDGPU_REG_SQ_HEAD)
		*v = __atomic_load_n(&m->sq_head, __ATOMIC_ACQUIRE);
	else if (m && reg == MDGPU_REG_ERROR)
		*v = __atomic_load_n(&m->error, __ATOMIC_RELAXED);
	else
		return mdgpu_vfio_rd(s, reg, v);
	return 0;
}

static int mdgpu_vfio_set_irq(struct mdgpu_vfio *s, uint32_t index, int fd)
{
	struct {
		struct vfio_irq_set set;
		int32_t fd;
	} a = {
		.set = { .argsz = sizeof(a), .index = index, .start = 0,
			 .count = 1, .flags = VFIO_IRQ_SET_DATA_EVENTFD |
					      VFIO_IRQ_SET_ACTION_TRIGGER },
		.fd = fd,
	};

	return ioctl(s->dev, VFIO_DEVICE_SET_IRQS, &a) ? -errno : 0;
}

static void mdgpu_vfio_intx_unmask(struct mdgpu_vfio *s)
{
	struct vfio_irq_set u = {
		.argsz = sizeof(u), .index = VFIO_PCI_INTX_IRQ_INDEX,
		.count = 1, .flags = VFIO_IRQ_SET_DATA_NONE |
				     VFIO_IRQ_SET_ACTION_UNMASK,
	};

	ioctl(s->dev, VFIO_DEVICE_SET_IRQS, &u);
}

/* MSI as a guest driver + QEMU set it up; INTx if that fails. */
static int mdgpu_vfio_irq_setup(struct mdgpu_vfio *s)
{
	uint16_t ctrl = 0;

	s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->efd < 0)
		return -errno;
	if (!mdgpu_vfio_set_irq(s, VFIO_PCI_MSI_IRQ_INDEX, s->efd) &&
	    pread(s->dev, &ctrl, 2, (off_t)(s->cfg_off + MDGPU_VFIO_MSI_CTRL))
	    == 2) {
		ctrl |= 1;
		if (pwrite(s->dev, &ctrl, 2,
			   (off_t)(s->cfg_off + MDGPU_VFIO_MSI_CTRL)) == 2) {
			s->msi = true;
			return 0;
		}
	}
	return mdgpu_vfio_set_irq(s, VFIO_PCI_INTX_IRQ_INDEX, s->efd);
}

static void mdgpu_vfio_close(struct mdgpu *g)
{
	struct mdgpu_vfio *s = g->tpriv;

	if (!s)
		return;
	if (s->dma_buf) {
		struct vfio_iommu_type1_dma_unmap um = {
			.argsz = sizeof(um), .iova = s->dma_iova,
			.size = s->dma_size,
		};

		if (s->container >= 0)
			ioctl(s->container, VFIO_IOMMU_UNMAP_DMA, &um);
		munmap(s->dma_buf, s->dma_size);
	}
	if (s->ring)
		munmap(s->ring, s->ring_size);
	if (s->ap)
		munmap(s->ap, s->ap_size);
	if (s->dev >= 0)
		close(s->dev);	/* the module resets the device: memory
				 * freed and scrubbed by mdgpud */
	if (s->efd >= 0)
		close(s->efd);
	if (s->group >= 0)
		close(s->group);
	if (s->container >= 0)
		close(s->container);
	free(s);
	g->tpriv = NULL;
}

/* "UUID" or ".../UUID" (a sysfs path) -> the UUID. */
static int mdgpu_vfio_uuid(struct mdgpu *g, const char *path, char *out,
			   size_t len)
{
	const char *b;
	size_t n;

	if (!path)
		path = getenv("MDGPU_VFIO_DEVICE");
	if (!path)
		return mdgpu_set_error(g, -EINVAL, "vfio transport needs "
				       "opts.path (mdev UUID or sysfs path)");
	n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	b = path + n;
	while (b > path && b[-1] != '/')
		b--;
	if ((size_t)(path + n - b) != 36 || (size_t)(path + n - b) >= len)
		return mdgpu_set_error(g, -EINVAL, "'%s' names no mdev UUID",
				       path);
	memcpy(out, b, 36);
	out[36] = '\0';
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		char c = out[i];

		if (dash ? c != '-' : !((c >= '0' && c <= '9') ||
					(c >= 'a' && c <= 'f') ||
					(c >= 'A' && c <= 'F')))
			return mdgpu_set_error(g, -EINVAL, "'%s' names no "
					       "mdev UUID", path);
	}
	return 0;
}

static int mdgpu_vfio_region(struct mdgpu *g, struct mdgpu_vfio *s,
			     uint32_t index, struct vfio_region_info *ri)
{
	*ri = (struct vfio_region_info){ .argsz = sizeof(*ri), .index = index };
	if (ioctl(s->dev, VFIO_DEVICE_GET_REGION_INFO, ri))
		return mdgpu_set_error(g, -errno, "region %u info", index);
	return 0;
}

static int mdgpu_vfio_map(struct mdgpu *g, struct mdgpu_vfio *s,
			  const struct vfio_region_info *ri, uint8_t **out)
{
	void *p;

	if (!(ri->flags & VFIO_REGION_INFO_FLAG_MMAP) || !ri->size)
		return mdgpu_set_error(g, -EPROTO, "BAR%u is not mmap-able",
				       ri->index);
	p = mmap(NULL, ri->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->dev,
		 (off_t)ri->offset);
	if (p == MAP_FAILED)
		return mdgpu_set_error(g, -errno, "mmap BAR%u", ri->index);
	*out = p;
	return 0;
}

/* Open the container, group and device the way QEMU does. */
static int mdgpu_vfio_attach(struct mdgpu *g, struct mdgpu_vfio *s)
{
	struct vfio_group_status gs = { .argsz = sizeof(gs) };
	char link[256], path[PATH_MAX];
	const char *num;
	ssize_t n;

	s->container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (s->container < 0)
		return mdgpu_set_error(g, -errno, "open /dev/vfio/vfio");
	if (ioctl(s->container, VFIO_GET_API_VERSION) != VFIO_API_VERSION ||
	    ioctl(s->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) != 1)
		return mdgpu_set_error(g, -EOPNOTSUPP, "no VFIO type1v2 IOMMU");
	snprintf(path, sizeof(path), MDGPU_VFIO_SYSFS "/%s/iommu_group",
		 s->uuid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return mdgpu_set_error(g, n < 0 ? -errno : -ENOENT,
				       "no mdev %s (%s)", s->uuid, path);
	link[n] = '\0';
	num = strrchr(link, '/');
	snprintf(path, sizeof(path), "/dev/vfio/%s", num ? num + 1 : link);
	s->group = open(path, O_RDWR | O_CLOEXEC);
	if (s->group < 0)
		return mdgpu_set_error(g, -errno, "open %s%s", path,
				       errno == EBUSY ? " (in use)" : "");
	if (ioctl(s->group, VFIO_GROUP_GET_STATUS, &gs))
		return mdgpu_set_error(g, -errno, "group status");
	if (!(gs.flags & VFIO_GROUP_FLAGS_VIABLE))
		return mdgpu_set_error(g, -EPERM, "group %s not viable", path);
	if (ioctl(s->group, VFIO_GROUP_SET_CONTAINER, &s->container))
		return mdgpu_set_error(g, -errno, "VFIO_GROUP_SET_CONTAINER");
	if (ioctl(s->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		return mdgpu_set_error(g, -errno, "VFIO_SET_IOMMU");
	s->dev = ioctl(s->group, VFIO_GROUP_GET_DEVICE_FD, s->uuid);
	if (s->dev < 0)
		return mdgpu_set_error(g, -errno, "VFIO_GROUP_GET_DEVICE_FD %s",
				       s->uuid);
	return 0;
}

static int mdgpu_vfio_sysfs_u32(const char *uuid, const char *attr,
				uint32_t *v)
{
	char path[PATH_MAX], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), MDGPU_VFIO_SYSFS "/%s/mdgpu/%s", uuid,
		 attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	*v = (uint32_t)strtoul(buf, NULL, 10);
	return 0;
}

/*
 * Zero-copy host memory (opts.host_bytes): anonymous memory mapped into
 * the device's IOMMU domain with VFIO_IOMMU_MAP_DMA, as QEMU maps guest
 * RAM.  Its IOVAs are [aperture size, + size): client.c's host allocator
 * hands out pieces, and a copy from/to one is a single COPY command in
 * MDGPU_SPACE_IOVA, which mdgpud serves with MDGPU_CTL_DMA.
 */
static int mdgpu_vfio_dma_area(struct mdgpu *g, struct mdgpu_vfio *s,
			       uint64_t bytes)
{
	struct vfio_iommu_type1_dma_map map = {
		.argsz = sizeof(map),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
	};
	size_t size = (size_t)((bytes + 4095) & ~4095ULL);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return mdgpu_set_error(g, -errno, "host_bytes: mmap");
	map.vaddr = (uintptr_t)p;
	map.iova = s->ap_size;
	map.size = size;
	if (ioctl(s->container, VFIO_IOMMU_MAP_DMA, &map)) {
		int ret = -errno;

		munmap(p, size);
		return mdgpu_set_error(g, ret, "VFIO_IOMMU_MAP_DMA of %zu "
				       "bytes", size);
	}
	s->dma_buf = p;
	s->dma_size = size;
	s->dma_iova = map.iova;
	g->host_space = MDGPU_SPACE_IOVA;
	g->host_mem = p;
	g->host_end = g->host_off + size;	/* host_off = aperture size */
	return 0;
}

/*
 * Wait until the device has no reset pending (STATUS.RESET_PENDING clear):
 * mdgpud has dropped the work of before the reset, so nothing of it can
 * still write the ring's completions or the aperture, and new commands
 * cannot be taken for old ones (the kernel refuses mdgpud's COMPLETEs of
 * an older generation).  The clearing raises IRQ_COMPLETION, which wakes
 * the eventfd.  0, -ENODEV (no daemon: nothing to wait for, and nothing
 * will run), or -ETIMEDOUT after mdgpu_vfio_reset_ms.
 */
static int mdgpu_vfio_reset_done(struct mdgpu_vfio *s)
{
	uint64_t end = mdgpu_now_ns() + mdgpu_vfio_reset_ms * 1000000ULL;
	uint32_t st;
	int ret;

	for (;;) {
		struct pollfd p = { .fd = s->efd, .events = POLLIN };
		uint64_t cnt;

		ret = mdgpu_vfio_polled(s, MDGPU_REG_STATUS, &st);
		if (ret)
			return ret == -EIO ? -ENODEV : ret;
		if (!(st & MDGPU_STATUS_READY))
			return -ENODEV;
		if (!(st & MDGPU_STATUS_RESET_PENDING))
			return 0;
		if (mdgpu_now_ns() >= end)
			return -ETIMEDOUT;
		if (s->efd < 0) {
			sched_yield();
			continue;
		}
		if (poll(&p, 1, mdgpu_vfio_recheck_ms) > 0 &&
		    read(s->efd, &cnt, sizeof(cnt)) == sizeof(cnt) && !s->msi)
			mdgpu_vfio_intx_unmask(s);
	}
}

static int mdgpu_vfio_open(struct mdgpu *g, const struct mdgpu_open_opts *o)
{
	struct vfio_region_info r0, r2, r4, rc;
	uint32_t magic, ver, st, entries, apsz, type_id, sm, qlo, qhi;
	struct mdgpu_vfio *s;
	int ret;

	if (o->host_bytes > MDGPU_DMA_MAX)
		return mdgpu_set_error(g, -E2BIG, "host_bytes above %llu (one "
				       "command's DMA limit)",
				       (unsigned long long)MDGPU_DMA_MAX);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->container = s->group = s->dev = s->efd = -1;
	g->tpriv = s;
	ret = mdgpu_vfio_uuid(g, o->path, s->uuid, sizeof(s->uuid));
	if (!ret)
		ret = mdgpu_vfio_attach(g, s);
	if (!ret)
		ret = mdgpu_vfio_region(g, s, VFIO_PCI_CONFIG_REGION_INDEX, &rc);
	if (!ret)
		ret = mdgpu_vfio_region(g, s, MDGPU_BAR_REGS, &r0);
	if (!ret)
		ret = mdgpu_vfio_region(g, s, MDGPU_BAR_RING, &r2);
	if (!ret)
		ret = mdgpu_vfio_region(g, s, MDGPU_BAR_APERTURE, &r4);
	if (ret)
		goto err;
	s->regs_off = r0.offset;
	s->cfg_off = rc.offset;
	if (mdgpu_vfio_rd(s, MDGPU_REG_MAGIC, &magic) ||
	    mdgpu_vfio_rd(s, MDGPU_REG_VERSION, &ver) || magic != MDGPU_MAGIC ||
	    (ver >> 16) != MDGPU_ABI_MAJOR) {
		ret = mdgpu_set_error(g, -EPROTO, "%s is not an mdgpu vGPU of "
				      "ABI %u", s->uuid, MDGPU_ABI_MAJOR);
		goto err;
	}
	ret = mdgpu_vfio_rd(s, MDGPU_REG_STATUS, &st);
	if (ret)
		goto err;
	if (!(st & MDGPU_STATUS_READY)) {
		ret = mdgpu_set_error(g, -ENODEV, "vGPU %s: no mdgpud serves "
				      "it (%s)", s->uuid,
				      (st & MDGPU_STATUS_BACKEND_LOST) ?
				      "backend lost" : "idle");
		goto err;
	}
	ret = mdgpu_vfio_rd(s, MDGPU_REG_RING_ENTRIES, &entries);
	if (!ret)
		ret = mdgpu_vfio_rd(s, MDGPU_REG_APERTURE_SIZE, &apsz);
	if (!ret)
		ret = mdgpu_vfio_rd(s, MDGPU_REG_TYPE_ID, &type_id);
	if (!ret)
		ret = mdgpu_vfio_rd(s, MDGPU_REG_SM_COUNT, &sm);
	if (!ret)
		ret = mdgpu_vfio_rd(s, MDGPU_REG_FB_QUOTA_LO, &qlo);
	if (!ret)
		ret = mdgpu_vfio_rd(s, MDGPU_REG_FB_QUOTA_HI, &qhi);
	if (ret) {
		mdgpu_set_error(g, ret, "BAR0 read");
		goto err;
	}
	if (entries < 2 || (entries & (entries - 1)) ||
	    MDGPU_RING_BYTES(entries) > r2.size || apsz != r4.size) {
		ret = mdgpu_set_error(g, -EPROTO, "ring %u entries in a %llu "
				      "byte BAR2, aperture %u in %llu bytes",
				      entries, (unsigned long long)r2.size,
				      apsz, (unsigned long long)r4.size);
		goto err;
	}
	ret = mdgpu_vfio_map(g, s, &r2, &s->ring);
	if (ret)
		goto err;
	s->ring_size = r2.size;
	if ((ver & 0xffff) >= 11 && MDGPU_RING_MIRROR_OFFSET(entries) +
	    MDGPU_RING_MIRROR_SIZE <= s->ring_size)
		s->mirror = (const void *)(s->ring +
					   MDGPU_RING_MIRROR_OFFSET(entries));
	if ((ver & 0xffff) >= 13 &&
	    MDGPU_RING_REGION_BYTES(entries) <= s->ring_size)
		s->shadow = (void *)(s->ring +
				     MDGPU_RING_SHADOW_OFFSET(entries));
	ret = mdgpu_vfio_map(g, s, &r4, &s->ap);
	if (ret)
		goto err;
	s->ap_size = r4.size;

	/* A fresh device: what a guest driver does at probe. */
	ret = mdgpu_vfio_wr(s, MDGPU_REG_CONTROL,
			    MDGPU_CONTROL_RESET | MDGPU_CONTROL_ENABLE);
	if (!ret)
		ret = mdgpu_vfio_wr(s, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	if (!ret)
		ret = mdgpu_vfio_irq_setup(s);
	if (ret) {
		mdgpu_set_error(g, ret, "enable/interrupt setup");
		goto err;
	}
	ret = mdgpu_vfio_reset_done(s);
	if (ret) {
		mdgpu_set_error(g, ret, "vGPU %s: the reset at open did not "
				"complete", s->uuid);
		goto err;
	}

	g->entries = entries;
	g->sq = s->ring + MDGPU_RING_SQ_OFFSET;
	g->cq = s->ring + MDGPU_RING_CQ_OFFSET(entries);
	g->aperture = s->ap;
	g->aperture_size = s->ap_size;
	g->host_off = s->ap_size;	/* no zero-copy area */
	g->tail = g->reaped = 0;
	s->flagged = 0;
	g->info = (struct mdgpu_info){
		.type_id = type_id,
		.fb_quota = (uint64_t)qhi << 32 | qlo,
		.aperture_size = s->ap_size, .ring_entries = entries,
		.sm_count = sm, .abi_version = ver,
	};
	mdgpu_vfio_sysfs_u32(s->uuid, "vgpu_id", &g->info.vgpu_id);
	if (o->host_bytes) {
		ret = mdgpu_vfio_dma_area(g, s, o->host_bytes);
		if (ret)
			goto err;
	}
	return 0;
err:
	mdgpu_vfio_close(g);
	return ret;
}

static void mdgpu_vfio_doorbell(struct mdgpu *g, uint32_t tail)
{
	struct mdgpu_vfio *s = g->tpriv;

	/* Every command interrupts on completion: a waiter that stopped
	 * spinning sleeps on the eventfd (an idle one costs only a
	 * signal of an eventfd nobody polls). */
	mdgpu_ring_flag_irq(g, &s->flagged, tail);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* The shadow doorbell: the tail there, then (Dekker against the
	 * daemon's store of daemon_polling = 0 before its last look) a
	 * full fence, then ring BAR0 only if the daemon may not look. */
	if (s->shadow) {
		__atomic_store_n(&s->shadow->sq_tail, tail, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&s->shadow->daemon_polling,
				    __ATOMIC_RELAXED))
			return;
	}
	mdgpu_vfio_wr(s, MDGPU_REG_SQ_TAIL, tail);	/* refusals: STATUS */
}

static uint32_t mdgpu_vfio_head(struct mdgpu *g)
{
	struct mdgpu_vfio *s = g->tpriv;
	uint32_t h;

	if (mdgpu_vfio_polled(s, MDGPU_REG_SQ_HEAD, &h))
		return g->reaped;	/* nothing newer known */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return h;
}

/* 0 while the vGPU is served, else the error the caller reports. */
static int mdgpu_vfio_health(struct mdgpu_vfio *s)
{
	uint32_t st, err = 0;
	int ret = mdgpu_vfio_polled(s, MDGPU_REG_STATUS, &st);

	if (ret)
		return ret == -EIO ? -ENODEV : ret;
	if (st & MDGPU_STATUS_BACKEND_LOST)
		return -ENODEV;
	if (!(st & MDGPU_STATUS_ENABLED))
		return -ECANCELED;
	if (st & MDGPU_STATUS_RING_ERROR) {
		mdgpu_vfio_polled(s, MDGPU_REG_ERROR, &err);
		return err && err < 4096 ? -(int)err : -EPROTO;
	}
	return 0;
}

static int mdgpu_vfio_wait(struct mdgpu *g, uint32_t target)
{
	struct mdgpu_vfio *s = g->tpriv;
	uint64_t spin_until = mdgpu_now_ns() + g->spin_us * 1000ULL;
	int ret;

	for (;;) {
		struct pollfd p = { .fd = s->efd, .events = POLLIN };
		uint64_t cnt;

		if ((int32_t)(mdgpu_vfio_head(g) - target) >= 0)
			return 0;
		ret = mdgpu_vfio_health(s);
		if (ret)
			break;
		if (mdgpu_now_ns() < spin_until) {
			sched_yield();
			continue;
		}
		/* The interrupt of a completion after the head read above
		 * leaves the eventfd readable: no lost wake-up. */
		if (poll(&p, 1, mdgpu_vfio_recheck_ms) > 0 &&
		    read(s->efd, &cnt, sizeof(cnt)) == sizeof(cnt) && !s->msi)
			mdgpu_vfio_intx_unmask(s);
	}
	/* Work completed before the failure stays valid. */
	if ((int32_t)(mdgpu_vfio_head(g) - target) >= 0)
		return 0;
	return ret;
}

static int mdgpu_vfio_reset(struct mdgpu *g)
{
	struct mdgpu_vfio *s = g->tpriv;

	return ioctl(s->dev, VFIO_DEVICE_RESET) ? -errno : 0;
}

/*
 * After a reset: enable again, ring from command 0, once the reset is
 * complete (mdgpu_vfio_reset_done()).
 */
static int mdgpu_vfio_rearm(struct mdgpu *g)
{
	struct mdgpu_vfio *s = g->tpriv;
	int ret;

	ret = mdgpu_vfio_wr(s, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	if (!ret)
		ret = mdgpu_vfio_wr(s, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	s->flagged = 0;
	return ret ? ret : mdgpu_vfio_reset_done(s);
}

/* A reset clears ENABLED (before it zeroes the ring and the aperture,
 * under the module's lock); only the handle's re-arm sets it again. */
static int mdgpu_vfio_reset_since(struct mdgpu *g)
{
	uint32_t st;

	if (mdgpu_vfio_polled(g->tpriv, MDGPU_REG_STATUS, &st))
		return 0;	/* the next wait reports it */
	return st & MDGPU_STATUS_ENABLED ? 0 : -ECANCELED;
}

static uint32_t mdgpu_vfio_status(struct mdgpu *g)
{
	uint32_t st;

	return mdgpu_vfio_polled(g->tpriv, MDGPU_REG_STATUS, &st) ? 0 : st;
}

const struct mdgpu_tops mdgpu_tops_vfio = {
	.name = "vfio",
	.open = mdgpu_vfio_open,
	.close = mdgpu_vfio_close,
	.doorbell = mdgpu_vfio_doorbell,
	.head = mdgpu_vfio_head,
	.wait = mdgpu_vfio_wait,
	.reset = mdgpu_vfio_reset,
	.rearm = mdgpu_vfio_rearm,
	.reset_since = mdgpu_vfio_reset_since,
	.status = mdgpu_vfio_status,
};
