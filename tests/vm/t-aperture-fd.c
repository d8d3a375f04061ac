// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: MDGPU_CTL_APERTURE_FD, the mmap-only file of a vGPU's
 * aperture that the daemon hands to the vGPU's worker (ABI 1.8).
 * Documentation/testing-vm.md describes each test.
 */
#include "vgpu.h"

#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <sys/uio.h>

/* APERTURE_FD for vGPU @id: the fd, or -errno (answer in @out if given). */
static int ap_fd(struct fx *f, uint32_t id, uint32_t flags,
		 struct mdgpu_ctl_aperture_fd *out)
{
	struct mdgpu_ctl_aperture_fd a = { .vgpu_id = id, .flags = flags };

	if (ioctl(f->ctl, MDGPU_CTL_APERTURE_FD, &a))
		return -errno;
	if (out)
		*out = a;
	return a.fd;
}

/* The lowest free fd number: what the next open would get. */
static int next_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd;
}

TEST(aperture_fd_refusals, FX_VFIO)
{
	struct mdgpu_ctl_aperture_fd a = { .vgpu_id = f->vgpu };
	int before = next_fd(), other;

	EXPECT(ap_fd(f, f->vgpu + 1000, 0, NULL) == -ENOENT, "unknown vGPU");
	EXPECT(ap_fd(f, 0, 0, NULL) == -ENOENT, "vGPU id 0");
	EXPECT(ap_fd(f, ~0u, 0, NULL) == -ENOENT, "vGPU id ~0");
	EXPECT(ap_fd(f, f->vgpu, 1, NULL) == -EINVAL, "flags 1");
	EXPECT(ap_fd(f, f->vgpu, 0x80000000u, NULL) == -EINVAL,
	       "flags 0x80000000");
	a.reserved = 1;
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_APERTURE_FD, &a), EINVAL);
	EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_APERTURE_FD, NULL), EFAULT);
	{
		/*
		 * A read-only page: the request is read, the answer cannot
		 * be copied out, so no fd may be left behind.
		 */
		void *ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ASSERT(ro != MAP_FAILED, "mmap");
		memset(ro, 0, 4096);
		((struct mdgpu_ctl_aperture_fd *)ro)->vgpu_id = f->vgpu;
		mprotect(ro, 4096, PROT_READ);
		EXPECT_ERRNO(ioctl(f->ctl, MDGPU_CTL_APERTURE_FD, ro), EFAULT);
		munmap(ro, 4096);
	}
	EXPECT(next_fd() == before, "an fd leaked: next %d, was %d",
	       next_fd(), before);
	/* A file that does not own the parent gets nothing. */
	other = open(MDGPU_CTL_DEVICE, O_RDWR);
	ASSERT(other >= 0, "second open");
	a.reserved = 0;
	EXPECT_ERRNO(ioctl(other, MDGPU_CTL_APERTURE_FD, &a), ENOENT);
	close(other);
}

/*
 * The fd maps the aperture: the worker's mapping, the daemon's
 * /dev/mdgpu mapping, the guest's BAR4 mapping and BAR4 region reads and
 * writes all see the same bytes.  Bounds as for the other two mmaps.
 */
TEST(aperture_fd_mmap_same_pages, FX_VFIO)
{
	struct mdgpu_ctl_aperture_fd a = { 0 };
	size_t sz = f->rg[MDGPU_BAR_APERTURE].size;
	volatile uint32_t *w, *d, *g, *w2;
	uint32_t v = 0;
	int fd, fl;

	fd = ap_fd(f, f->vgpu, 0, &a);
	ASSERT(fd >= 0, "APERTURE_FD: %s", strerror(-fd));
	EXPECT(a.size == sz, "size %llu, BAR4 %zu", (unsigned long long)a.size,
	       sz);
	fl = fcntl(fd, F_GETFD);
	EXPECT(fl >= 0 && (fl & FD_CLOEXEC), "not close-on-exec");
	fl = fcntl(fd, F_GETFL);
	EXPECT(fl >= 0 && (fl & O_ACCMODE) == O_RDWR, "flags 0x%x", fl);

	w = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT(w != MAP_FAILED, "mmap of the fd: %s", strerror(errno));
	d = ctl_map(f, MDGPU_CTL_MMAP_APERTURE, sz);
	g = bar_map(f, MDGPU_BAR_APERTURE);
	ASSERT(d && g, "daemon or guest mapping");

	w[0] = 0xa1a2a3a4;
	w[sz / 4 - 1] = 0xb1b2b3b4;
	EXPECT(d[0] == 0xa1a2a3a4 && d[sz / 4 - 1] == 0xb1b2b3b4,
	       "daemon sees 0x%x 0x%x", d[0], d[sz / 4 - 1]);
	EXPECT(g[0] == 0xa1a2a3a4 && g[sz / 4 - 1] == 0xb1b2b3b4,
	       "guest sees 0x%x 0x%x", g[0], g[sz / 4 - 1]);
	EXPECT(rg_rw(f, MDGPU_BAR_APERTURE, sz - 4, &v, 4, 0) == 4 &&
	       v == 0xb1b2b3b4, "region read 0x%x", v);
	g[5] = 0xc1c2c3c4;
	d[6] = 0xd1d2d3d4;
	v = 0xe1e2e3e4;
	EXPECT(rg_rw(f, MDGPU_BAR_APERTURE, 28, &v, 4, 1) == 4, "region write");
	EXPECT(w[5] == 0xc1c2c3c4 && w[6] == 0xd1d2d3d4 && w[7] == 0xe1e2e3e4,
	       "worker sees 0x%x 0x%x 0x%x", w[5], w[6], w[7]);

	/* A later page, mapped alone at its offset. */
	w2 = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  (off_t)(sz - 4096));
	ASSERT(w2 != MAP_FAILED, "mmap of the last page: %s", strerror(errno));
	EXPECT(w2[1023] == 0xb1b2b3b4, "last page 0x%x", w2[1023]);
	w2[0] = 0x5a5a5a5a;
	EXPECT(g[(sz - 4096) / 4] == 0x5a5a5a5a, "guest sees the page write");
	munmap((void *)w2, 4096);

	/* Bounds: past the end, from the end, huge offsets, private. */
	EXPECT(mmap(NULL, sz + 4096, PROT_READ, MAP_SHARED, fd, 0) ==
	       MAP_FAILED && errno == EINVAL, "oversized mmap");
	EXPECT(mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd,
		    (off_t)(sz - 4096)) == MAP_FAILED && errno == EINVAL,
	       "mmap straddling the end");
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)sz) ==
	       MAP_FAILED && errno == EINVAL, "mmap at the end");
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
		    (off_t)1 << 46) == MAP_FAILED, "mmap at 2^46");
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
		    (off_t)0x7ffffffffffff000LL) == MAP_FAILED,
	       "mmap at a huge offset");
	EXPECT(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED &&
	       errno == EINVAL, "MAP_PRIVATE");

	munmap((void *)g, sz);
	munmap((void *)d, sz);
	munmap((void *)w, sz);
	close(fd);
}

/* mmap is the file's only operation. */
TEST(aperture_fd_mmap_only, FX_VFIO)
{
	struct mdgpu_ctl_aperture_fd a = { .vgpu_id = f->vgpu };
	struct mdgpu_ctl_complete c = { .vgpu_id = f->vgpu, .gen = f->gen };
	char b[16] = { 0 };
	int fd = ap_fd(f, f->vgpu, 0, NULL);

	ASSERT(fd >= 0, "APERTURE_FD: %s", strerror(-fd));
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_APERTURE_FD, &a), ENOTTY);
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_COMPLETE, &c), ENOTTY);
	EXPECT_ERRNO(ioctl(fd, MDGPU_CTL_REGISTER_GPU, &f->reg), ENOTTY);
	EXPECT_ERRNO(ioctl(fd, VFIO_DEVICE_GET_INFO, b), ENOTTY);
	EXPECT_ERRNO(read(fd, b, sizeof(b)), EINVAL);
	EXPECT_ERRNO(write(fd, b, sizeof(b)), EINVAL);
	close(fd);
}

/*
 * The fd and its mapping outlive the vGPU: after the mdev is removed the
 * worker's mapping still reads and writes the same (orphaned) pages, the
 * fd still maps them, and closing everything leaves no kernel warning
 * (dmesg-clean), whether a mapping or an unmapped fd goes last.  A new
 * APERTURE_FD for the removed vGPU is refused.
 */
TEST(aperture_fd_outlives_vgpu, FX_VFIO)
{
	size_t sz = f->rg[MDGPU_BAR_APERTURE].size;
	volatile uint8_t *w, *w2;
	uint32_t id = f->vgpu;
	int fd = ap_fd(f, id, 0, NULL), fd2 = ap_fd(f, id, 0, NULL);

	ASSERT(fd >= 0 && fd2 >= 0, "APERTURE_FD: %s",
	       strerror(fd < 0 ? -fd : -fd2));
	w = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT(w != MAP_FAILED, "mmap");
	w[0] = 7;
	vfio_close(f);
	ASSERT(mdev_remove(UUID0) == 0, "remove");
	f->mdev = 0;
	EXPECT(ev_wait(f, MDGPU_EV_REMOVE, id, NULL, EV_TIMEOUT_MS) == 0,
	       "no REMOVE");
	/* The close reset the device, which zeroed the aperture. */
	EXPECT(w[0] == 0, "byte 0 is %u after the close's reset", w[0]);
	w[1] = 9;
	w[sz - 1] = 11;
	EXPECT(w[1] == 9 && w[sz - 1] == 11, "orphaned pages not writable");
	w2 = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	EXPECT(w2 != MAP_FAILED && w2[1] == 9 && w2[sz - 1] == 11,
	       "a new mapping of the fd after remove");
	EXPECT(ap_fd(f, id, 0, NULL) == -ENOENT, "fd of a removed vGPU");
	EXPECT(munmap((void *)w, sz) == 0, "munmap");
	EXPECT(close(fd) == 0, "close");
	/* The last mapping alone now holds the pages. */
	if (w2 != MAP_FAILED) {
		EXPECT(w2[1] == 9, "pages gone under the last mapping");
		EXPECT(munmap((void *)w2, sz) == 0, "munmap");
	}
	/* The unmapped second fd is the last holder: closing frees. */
	EXPECT(close(fd2) == 0, "close the last fd");
}

/*
 * Registers [addr, addr + len) as an io_uring fixed buffer and drops it
 * again: 0, or -errno of IORING_REGISTER_BUFFERS.  The registration pins
 * the range with pin_user_pages(FOLL_WRITE | FOLL_LONGTERM), the call
 * and flags NVIDIA's driver uses to pin host memory for
 * cuMemHostRegister (os_lock_user_pages(), x86).
 */
static int uring_pin(int ring, void *addr, size_t len)
{
	struct iovec iov = { .iov_base = addr, .iov_len = len };

	if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS,
		    &iov, 1))
		return -errno;
	syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL,
		0);
	return 0;
}

/*
 * Whether uring_pin()'s answer means the pin succeeded.  6.1's
 * io_pin_pages() (io_uring/rsrc.c) pins first and then refuses a
 * file-backed, non-shmem VMA with -EOPNOTSUPP (the pages are unpinned
 * again), a failed pin being -EFAULT (VM_IO/VM_PFNMAP) or GUP's error;
 * later kernels leave that policy to GUP's own FOLL_LONGTERM checks and
 * answer 0.
 */
static int pinned(int r)
{
	return r == 0 || r == -EOPNOTSUPP;
}

/*
 * The aperture is pinnable the way the GPU driver pins host memory: the
 * worker's mapping (the fd), the daemon's (/dev/mdgpu) and QEMU's (BAR4)
 * are struct-page mappings (remap_vmalloc_range) that
 * pin_user_pages(FOLL_WRITE | FOLL_LONGTERM) takes whole.  The control:
 * the edu device's MMIO BAR mapped through sysfs (VM_IO | VM_PFNMAP,
 * which the driver could not pin either) is refused with -EFAULT, so the
 * check can fail.
 */
TEST(aperture_fd_pinnable, FX_VFIO)
{
	struct io_uring_params p = { 0 };
	size_t sz = f->rg[MDGPU_BAR_APERTURE].size;
	const char *bdf = gpu_pci();
	void *w, *d, *g, *mmio;
	char res[384];
	int ring, fd, rfd, r;

	ring = (int)syscall(__NR_io_uring_setup, 4, &p);
	ASSERT(ring >= 0, "io_uring_setup: %s", strerror(errno));
	fd = ap_fd(f, f->vgpu, 0, NULL);
	ASSERT(fd >= 0, "APERTURE_FD: %s", strerror(-fd));
	w = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT(w != MAP_FAILED, "mmap of the fd: %s", strerror(errno));
	d = ctl_map(f, MDGPU_CTL_MMAP_APERTURE, sz);
	g = bar_map(f, MDGPU_BAR_APERTURE);
	ASSERT(d && g, "daemon or guest mapping");

	r = uring_pin(ring, w, sz);
	EXPECT(pinned(r), "worker's mapping, %zu bytes: %s", sz, strerror(-r));
	printf("    pin: %zu bytes, IORING_REGISTER_BUFFERS %s\n", sz,
	       r ? "pinned, then refused as file-backed (EOPNOTSUPP)" :
	       "registered");
	r = uring_pin(ring, d, sz);
	EXPECT(pinned(r), "daemon's mapping: %s", strerror(-r));
	r = uring_pin(ring, g, sz);
	EXPECT(pinned(r), "BAR4 mapping: %s", strerror(-r));
	r = uring_pin(ring, (char *)w + sz - 4096, 4096);
	EXPECT(pinned(r), "the last page alone: %s", strerror(-r));

	ASSERT(bdf, "no edu PCI device in the guest (run-vm.sh adds -device edu)");
	snprintf(res, sizeof(res), "/sys/bus/pci/devices/%.63s/resource0", bdf);
	rfd = open(res, O_RDWR | O_CLOEXEC);
	ASSERT(rfd >= 0, "open %s: %s", res, strerror(errno));
	mmio = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	ASSERT(mmio != MAP_FAILED, "mmap %s: %s", res, strerror(errno));
	r = uring_pin(ring, mmio, 4096);
	EXPECT(r == -EFAULT, "edu's MMIO BAR (VM_PFNMAP): %s", r ?
	       strerror(-r) : "pinned");

	munmap(mmio, 4096);
	close(rfd);
	munmap(g, sz);
	munmap(d, sz);
	munmap(w, sz);
	close(fd);
	close(ring);
}
