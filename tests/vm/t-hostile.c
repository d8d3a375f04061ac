// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: a hostile VFIO user.  SET_IRQS headers whose numbers wrap
 * or whose payload is missing or unreadable; mmap of the regions at every
 * offset a user can name; a mapping split, moved and inherited by a child
 * that keeps writing while the vGPU is removed and another vGPU is made.  Documentation/testing-vm.md describes each test.
 */
#include "vgpu.h"

#include <pthread.h>
#include <signal.h>
#include <grp.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

/* SET_IRQS of a header and one eventfd, claiming argsz (vgpu.c). */
#define irqs(f, index, start, count, flags, argsz, efd) \
	set_irqs_raw(f, index, start, count, flags, argsz, efd)

TEST(hostile_set_irqs_edges, FX_VFIO)
{
	const uint32_t ev = VFIO_IRQ_SET_DATA_EVENTFD |
			    VFIO_IRQ_SET_ACTION_TRIGGER;
	const uint32_t none = VFIO_IRQ_SET_DATA_NONE |
			      VFIO_IRQ_SET_ACTION_TRIGGER;
	const uint32_t hdr = sizeof(struct vfio_irq_set);
	const uint32_t one = hdr + sizeof(int32_t);
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct vfio_irq_set *s;
	uint8_t *pages;

	ASSERT(efd >= 0, "eventfd");
	/* start + count past 2^32, or all of it. */
	EXPECT_ERRNO(irqs(f, VFIO_PCI_MSI_IRQ_INDEX, 1, UINT32_MAX, ev, one,
			  efd), EINVAL);
	EXPECT_ERRNO(irqs(f, VFIO_PCI_MSI_IRQ_INDEX, 0, UINT32_MAX, ev, one,
			  efd), EINVAL);
	EXPECT_ERRNO(irqs(f, VFIO_PCI_INTX_IRQ_INDEX, UINT32_MAX, 1, ev, one,
			  efd), EINVAL);
	EXPECT_ERRNO(irqs(f, VFIO_PCI_MSI_IRQ_INDEX, 0x80000000u, 0x80000000u,
			  ev, one, efd), EINVAL);
	/* argsz: shorter than the header; the payload not counted. */
	EXPECT_ERRNO(irqs(f, VFIO_PCI_MSI_IRQ_INDEX, 0, 1, ev, 8, efd),
		     EINVAL);
	EXPECT_ERRNO(irqs(f, VFIO_PCI_MSI_IRQ_INDEX, 0, 1, ev, hdr, efd),
		     EINVAL);
	/* ERR and MSI-X have no vectors: refused even with count 0. */
	EXPECT_ERRNO(irqs(f, VFIO_PCI_ERR_IRQ_INDEX, 0, 0, none, hdr, -1),
		     EINVAL);
	EXPECT_ERRNO(irqs(f, VFIO_PCI_MSIX_IRQ_INDEX, 0, 0, none, hdr, -1),
		     EINVAL);
	EXPECT_ERRNO(irqs(f, VFIO_PCI_ERR_IRQ_INDEX, 0, 1, ev, one, efd),
		     EINVAL);
	/* count 0 with an eventfd or a bool: nothing to read, no change. */
	EXPECT(irqs(f, VFIO_PCI_MSI_IRQ_INDEX, 0, 0, ev, hdr, efd) == 0,
	       "EVENTFD count 0: %s", strerror(errno));
	EXPECT(irqs(f, VFIO_PCI_INTX_IRQ_INDEX, 0, 0, VFIO_IRQ_SET_DATA_BOOL |
		    VFIO_IRQ_SET_ACTION_TRIGGER, hdr, -1) == 0,
	       "BOOL count 0: %s", strerror(errno));

	/*
	 * A payload the header promises but that lies on an unmapped page:
	 * the header is read, the eventfd is not.
	 */
	pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(pages != MAP_FAILED, "mmap");
	ASSERT(munmap(pages + 4096, 4096) == 0, "munmap");
	s = (struct vfio_irq_set *)(pages + 4096 - hdr);
	*s = (struct vfio_irq_set){ .argsz = one, .flags = ev, .count = 1,
				    .index = VFIO_PCI_MSI_IRQ_INDEX };
	EXPECT_ERRNO(ioctl(f->dev, VFIO_DEVICE_SET_IRQS, s), EFAULT);
	/* The header itself cut by the hole. */
	s = (struct vfio_irq_set *)(pages + 4096 - 8);
	EXPECT_ERRNO(ioctl(f->dev, VFIO_DEVICE_SET_IRQS, s), EFAULT);
	munmap(pages, 4096);

	close(efd);

	/* After all of it MSI still works. */
	efd = msi_on(f);
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0, "COMPLETE");
	EXPECT(fired(efd, 1000), "no MSI after the refused calls");
	EXPECT(set_irq_fd(f, VFIO_PCI_MSI_IRQ_INDEX, -1) == 0, "disable");
	close(efd);
}

/* mmap of @len bytes at VFIO file offset @off: 0 or -errno (unmapped). */
static int map_at(struct fx *f, uint64_t off, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f->dev,
		       (off_t)off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

TEST(hostile_region_mmap_edges, FX_VFIO)
{
	const struct region *ap = &f->rg[MDGPU_BAR_APERTURE];
	const struct region *ring = &f->rg[MDGPU_BAR_RING];
	volatile uint32_t *g, *p;
	int r;

	ASSERT(ap->size >= 3 * 4096 && ring->size >= 4096, "region sizes");
	/* Inside: a page at a nonzero offset is that page of the BAR. */
	g = bar_map(f, MDGPU_BAR_APERTURE);
	ASSERT(g, "BAR4 mmap");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f->dev,
		 (off_t)(ap->offset + 8192));
	ASSERT(p != MAP_FAILED, "mmap at page 2: %s", strerror(errno));
	p[3] = 0x13572468;
	EXPECT(g[8192 / 4 + 3] == 0x13572468, "page 2 of BAR4 reads 0x%x",
	       g[8192 / 4 + 3]);
	munmap((void *)p, 4096);
	munmap((void *)g, ap->size);
	/* Odd lengths round up to pages inside the region. */
	EXPECT(map_at(f, ap->offset, 1) == 0, "1 byte");
	EXPECT(map_at(f, ap->offset, 4097) == 0, "4097 bytes");
	EXPECT(map_at(f, ap->offset + ap->size - 4096, 4095) == 0,
	       "the last page, 4095 bytes");
	/* Past the end, from the end, across the next region's offset. */
	EXPECT(map_at(f, ap->offset, ap->size + 1) == -EINVAL,
	       "one byte past the end");
	EXPECT(map_at(f, ap->offset + ap->size, 4096) == -EINVAL,
	       "at the end");
	EXPECT(map_at(f, ap->offset + ap->size - 4096, 8192) == -EINVAL,
	       "straddling the end");
	EXPECT(map_at(f, ring->offset + ring->size, 4096) == -EINVAL,
	       "past BAR2");
	/* Regions that are not mmap-able, indexes past the last. */
	for (unsigned int i = 0; i < VFIO_PCI_NUM_REGIONS; i++) {
		if (i == MDGPU_BAR_APERTURE || i == MDGPU_BAR_RING)
			continue;
		r = map_at(f, f->rg[i].offset, 4096);
		EXPECT(r == -EINVAL, "region %u: %s", i, r ? strerror(-r) :
		       "mapped");
	}
	r = map_at(f, (uint64_t)VFIO_PCI_NUM_REGIONS << 40, 4096);
	EXPECT(r == -EINVAL, "region index %u", VFIO_PCI_NUM_REGIONS);
	r = map_at(f, (uint64_t)0xffffff << 40, 4096);
	EXPECT(r == -EINVAL, "region index 0xffffff");
	/* Huge page offsets: refused by the module or by mmap itself. */
	r = map_at(f, 0x7ffffffffffff000ULL, 4096);
	EXPECT(r == -EINVAL || r == -EOVERFLOW, "offset 2^63 - 4096: %s",
	       r ? strerror(-r) : "mapped");
	r = map_at(f, ap->offset | (1ULL << 39), 4096);
	EXPECT(r == -EINVAL, "BAR4 + 2^39: %s", r ? strerror(-r) : "mapped");
}

/*
 * The child of hostile_mmap_split_fork_remove: drops every file it
 * inherited and writes to its two pieces of the old BAR4 until killed (or
 * for 10 s, or when its parent goes).
 */
static _Noreturn void writer(struct fx *f, volatile uint8_t *lo,
			     volatile uint8_t *hi, size_t hi_len)
{
	time_t end = time(NULL) + 10;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close(f->dev);
	close(f->group);
	close(f->container);
	close(f->ctl);
	while (time(NULL) < end) {
		lo[0]++;
		for (size_t i = 0; i < hi_len; i += 4096)
			hi[i] = 0xee;
		usleep(500);
	}
	_exit(0);
}

struct remover {
	int done;			/* atomic: mdev_remove() returned */
	int ret;
};

static void *remove_uuid0(void *arg)
{
	struct remover *r = arg;

	r->ret = mdev_remove(UUID0);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A mapping split (a page unmapped inside it), its upper half moved by
 * mremap (growing it is refused: VM_DONTEXPAND), every piece still the
 * same pages; then inherited by a child that closes every file and keeps
 * writing after the parent unmapped and closed everything.  The child's
 * mappings hold the device file, so the remove waits for them (as it
 * waits for QEMU's) instead of freeing pages under them; meanwhile a new
 * vGPU reads zero in its whole aperture, the child does not fault, and
 * once the child is gone the remove completes.
 */
TEST(hostile_mmap_split_fork_remove, FX_VFIO)
{
	size_t sz = f->rg[MDGPU_BAR_APERTURE].size, half = sz / 2, dirty = 0;
	volatile uint8_t *g, *d, *m, *n;
	struct remover rm = { 0 };
	struct mdgpu_ctl_event ev;
	uint32_t old = f->vgpu;
	pthread_t th;
	void *hole;
	pid_t pid;
	int st;

	ASSERT(sz >= 4 * 4096, "BAR4 of %zu bytes", sz);
	g = bar_map(f, MDGPU_BAR_APERTURE);
	d = ctl_map(f, MDGPU_CTL_MMAP_APERTURE, sz);
	ASSERT(g && d, "guest or daemon mapping");
	EXPECT(munmap((void *)(g + 4096), 4096) == 0, "unmap page 1 (split)");
	hole = mmap(NULL, half, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(hole != MAP_FAILED, "reserve");
	m = mremap((void *)(g + half), half, half, MREMAP_MAYMOVE |
		   MREMAP_FIXED, hole);
	ASSERT(m != MAP_FAILED, "mremap the upper half: %s", strerror(errno));
	EXPECT(mremap((void *)m, half, half + 4096, 0) == MAP_FAILED,
	       "the moved half grew");
	EXPECT(mremap((void *)m, half, half + 4096, MREMAP_MAYMOVE) ==
	       MAP_FAILED, "the moved half grew by moving");
	g[0] = 0x6b;
	g[2 * 4096] = 0x7c;
	m[0] = 0x5a;
	m[half - 1] = 0x4d;
	EXPECT(d[0] == 0x6b && d[2 * 4096] == 0x7c && d[half] == 0x5a &&
	       d[sz - 1] == 0x4d, "the pieces are not the same pages: %x %x %x %x",
	       d[0], d[2 * 4096], d[half], d[sz - 1]);
	munmap((void *)d, sz);

	pid = fork();
	ASSERT(pid >= 0, "fork");
	if (!pid)
		writer(f, g, m, half);
	/* The parent lets go of its mappings and of the device. */
	munmap((void *)g, half);
	munmap((void *)m, half);
	vfio_close(f);
	ASSERT(pthread_create(&th, NULL, remove_uuid0, &rm) == 0, "thread");
	msleep(300);
	EXPECT(!__atomic_load_n(&rm.done, __ATOMIC_ACQUIRE),
	       "the remove returned %d while the child's mappings live", rm.ret);

	/* Another tenant meanwhile: its aperture is zero, not the old pages. */
	ASSERT(mdev_create(f, TYPE_1G, UUID1) == 0, "a second vGPU");
	ASSERT(ev_wait(f, MDGPU_EV_CREATE, ~0U, &ev, EV_TIMEOUT_MS) == 0,
	       "no CREATE");
	n = mmap(NULL, sz, PROT_READ, MAP_SHARED, f->ctl,
		 MDGPU_CTL_MMAP_OFFSET(ev.vgpu_id, MDGPU_CTL_MMAP_APERTURE));
	ASSERT(n != MAP_FAILED, "the new vGPU's aperture: %s", strerror(errno));
	for (int k = 0; k < 20; k++) {
		for (size_t i = 0; i < sz; i++)
			dirty += n[i] != 0;
		msleep(10);
	}
	EXPECT(dirty == 0, "%zu nonzero bytes in the new vGPU's aperture",
	       dirty);
	munmap((void *)n, sz);

	EXPECT(waitpid(pid, &st, WNOHANG) == 0,
	       "the writer ended while writing (status 0x%x)", st);
	kill(pid, SIGKILL);
	EXPECT(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
	       WTERMSIG(st) == SIGKILL, "the writer's end: status 0x%x", st);
	for (int k = 0; k < 500 && !__atomic_load_n(&rm.done, __ATOMIC_ACQUIRE);
	     k++)
		msleep(10);
	ASSERT(__atomic_load_n(&rm.done, __ATOMIC_ACQUIRE),
	       "the remove still waits 5 s after the child's end");
	pthread_join(th, NULL);
	EXPECT(rm.ret == 0, "remove: %s", strerror(-rm.ret));
	f->mdev = 0;
	EXPECT(ev_wait(f, MDGPU_EV_REMOVE, old, NULL, EV_TIMEOUT_MS) == 0,
	       "no REMOVE");
	EXPECT(mdev_remove(UUID1) == 0, "remove the second vGPU");
}

/*
 * An unprivileged user (uid and gid 65534, no supplementary groups, no
 * capabilities) can open neither /dev/mdgpu nor the vGPU's VFIO group,
 * nor create or remove an mdev through sysfs.  The child reports each
 * refusal as a bit of its exit status.
 */
TEST(hostile_unprivileged_opens, FX_MDEV)
{
	char link[256], grp[300], create[400];
	const char *g;
	ssize_t len;
	pid_t pid;
	int st;

	len = readlink(mdev_path(UUID0, "iommu_group"), link, sizeof(link) - 1);
	ASSERT(len > 0, "iommu_group link");
	link[len] = 0;
	g = strrchr(link, '/');
	snprintf(grp, sizeof(grp), "/dev/vfio/%s", g ? g + 1 : link);
	snprintf(create, sizeof(create), "%s",
		 type_path(f->parent, TYPE_1G, "create"));
	pid = fork();
	ASSERT(pid >= 0, "fork");
	if (!pid) {
		int bits = 0, fd;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		fd = open("/dev/mdgpu", O_RDWR | O_CLOEXEC);
		bits |= (fd < 0 && errno == EACCES) << 0;
		fd = open(grp, O_RDWR | O_CLOEXEC);
		bits |= (fd < 0 && errno == EACCES) << 1;
		fd = open(create, O_WRONLY | O_CLOEXEC);
		bits |= (fd < 0 && errno == EACCES) << 2;
		fd = open(mdev_path(UUID0, "remove"), O_WRONLY | O_CLOEXEC);
		bits |= (fd < 0 && errno == EACCES) << 3;
		_exit(bits);
	}
	ASSERT(waitpid(pid, &st, 0) == pid && WIFEXITED(st), "child");
	ASSERT(WEXITSTATUS(st) != 100, "could not drop to uid 65534");
	EXPECT(WEXITSTATUS(st) & 1, "/dev/mdgpu opened by uid 65534");
	EXPECT(WEXITSTATUS(st) & 2, "%s opened by uid 65534", grp);
	EXPECT(WEXITSTATUS(st) & 4, "%s opened by uid 65534", create);
	EXPECT(WEXITSTATUS(st) & 8, "the mdev's remove opened by uid 65534");
	EXPECT(path_exists(mdev_path(UUID0, NULL)), "the mdev went away");
}

/*
 * A read-only open yields no writable shared mapping: /dev/mdgpu opened
 * O_RDONLY, and the worker's aperture file reopened O_RDONLY through
 * /proc/self/fd (refused outright, or its mapping read-only: neither a
 * PROT_WRITE mapping nor an mprotect to it).
 */
TEST(hostile_rdonly_no_shared_write, FX_VFIO)
{
	struct mdgpu_ctl_aperture_fd a = { .vgpu_id = f->vgpu };
	char path[64];
	void *p;
	int ro, ap;

	ro = open("/dev/mdgpu", O_RDONLY | O_CLOEXEC);
	ASSERT(ro >= 0, "open /dev/mdgpu O_RDONLY: %s", strerror(errno));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ro,
		 MDGPU_CTL_MMAP_OFFSET(f->vgpu, MDGPU_CTL_MMAP_RING));
	EXPECT(p == MAP_FAILED && errno == EACCES,
	       "writable ring mapping from an O_RDONLY /dev/mdgpu: %s",
	       p == MAP_FAILED ? strerror(errno) : "mapped");
	close(ro);

	ASSERT(ioctl(f->ctl, MDGPU_CTL_APERTURE_FD, &a) == 0, "APERTURE_FD: %s",
	       strerror(errno));
	ap = a.fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", ap);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro >= 0) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0);
		EXPECT(p == MAP_FAILED && errno == EACCES,
		       "writable aperture mapping from a read-only reopen: %s",
		       p == MAP_FAILED ? strerror(errno) : "mapped");
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ro, 0);
		if (p != MAP_FAILED) {
			EXPECT(mprotect(p, 4096, PROT_READ | PROT_WRITE) &&
			       errno == EACCES, "mprotect to writable: %s",
			       strerror(errno));
			munmap(p, 4096);
		}
		close(ro);
	}
	printf("    read-only reopen of the aperture file: %s\n",
	       ro >= 0 ? "opened, read-only mappings only" : strerror(errno));
	close(ap);
}
