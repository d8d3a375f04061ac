// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-client: the inner guest's test program.  Drives /dev/mdgpu-vgpu0
 * (mdgpu-guest.ko) the way libmdgpu's kernel transport will: commands are
 * written through the ring mapping, SUBMIT rings the doorbell, WAIT_FENCE
 * sleeps until the completion interrupt.  The other end is
 * tests/nested/responder.c in the outer guest; its test conventions
 * (builtins address the aperture, HOLD and LOSE hooks) are described there.
 *
 * Prints "PASS: name" / "FAIL: name: why" per check and, last,
 * "N passed, N failed".  Exit status 0 only if nothing failed.
 *
 * Usage: mdgpu-client [DEVICE]
 *        mdgpu-client --intx [DEVICE]
 *        mdgpu-client --unbind PCI-BDF [DEVICE]
 * --intx: a short run (NOPs, QUERY, interrupts) expecting the INTx
 * fallback (mdgpu-guest.ko loaded with disable_msi=1); check names start
 * with "intx-".
 * The second form tests removal under an open file: it opens and maps the
 * device, unbinds the driver through sysfs, and checks that the open file
 * gets -ENODEV and that the old mapping faults (SIGBUS) instead of
 * reaching a device that is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uapi/mdgpu.h"
#include "mdgpu-guest.h"

#define WAIT_MS		10000		/* generous: nested TCG is slow */

static int passed, failed;
static const char *name_prefix = "";

static void check(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS: %s%s\n", name_prefix, name);
		passed++;
		return;
	}
	printf("FAIL: %s%s: ", name_prefix, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	failed++;
}

struct dev {
	int fd;
	struct mdgpu_guest_info info;
	volatile struct mdgpu_cmd *sq;
	volatile struct mdgpu_cpl *cq;
	void *ring;
	volatile uint32_t *aper;
	uint32_t tail;			/* next free slot, free-running */
	uint64_t seq;			/* command number since reset */
};

static int get_info(struct dev *d)
{
	return ioctl(d->fd, MDGPU_GUEST_GET_INFO, &d->info) ? -errno : 0;
}

/* Write one command at the tail (not yet submitted). */
static void put_cmd(struct dev *d, const struct mdgpu_cmd *c)
{
	uint32_t slot = d->tail & (d->info.ring_entries - 1);
	const uint64_t *src = (const uint64_t *)c;
	volatile uint64_t *dst = (volatile uint64_t *)&d->sq[slot];

	/* 8-byte stores into the uncached BAR. */
	for (size_t i = 0; i < sizeof(*c) / 8; i++)
		dst[i] = src[i];
	d->tail++;
}

static int submit(struct dev *d, uint64_t *fence)
{
	struct mdgpu_guest_submit s = { .tail = d->tail };

	if (ioctl(d->fd, MDGPU_GUEST_SUBMIT, &s))
		return -errno;
	*fence = s.fence;
	return 0;
}

static int wait_fence(struct dev *d, uint64_t fence, uint32_t ms,
		      uint64_t *completed)
{
	struct mdgpu_guest_wait w = { .fence = fence, .timeout_ms = ms };
	int ret = ioctl(d->fd, MDGPU_GUEST_WAIT_FENCE, &w) ? -errno : 0;

	if (completed)
		*completed = w.completed;
	return ret;
}

static struct mdgpu_cpl get_cpl(struct dev *d, uint32_t n)
{
	struct mdgpu_cpl c;
	volatile struct mdgpu_cpl *s = &d->cq[n & (d->info.ring_entries - 1)];

	c.seq = s->seq;
	c.status = s->status;
	c.opcode = s->opcode;
	c.result = s->result;
	c.result2 = s->result2;
	return c;
}

/* Submit the commands written since @first and wait for them. */
static int run(struct dev *d, const char *what)
{
	uint64_t fence = 0, done = 0;
	int ret;

	ret = submit(d, &fence);
	if (ret) {
		printf("    %s: SUBMIT: %s\n", what, strerror(-ret));
		return ret;
	}
	ret = wait_fence(d, fence, WAIT_MS, &done);
	if (ret)
		printf("    %s: WAIT_FENCE %llu: %s (completed %llu)\n", what,
		       (unsigned long long)fence, strerror(-ret),
		       (unsigned long long)done);
	return ret;
}

static struct mdgpu_cmd nop(uint16_t flags)
{
	struct mdgpu_cmd c = { .opcode = MDGPU_OP_NOP, .flags = flags };
	return c;
}

static struct mdgpu_cmd builtin(uint32_t kernel, uint64_t a0, uint64_t a1,
				uint64_t a2)
{
	struct mdgpu_cmd c = {
		.opcode = MDGPU_OP_BUILTIN, .flags = MDGPU_CMD_F_IRQ,
		.builtin = { .kernel = kernel, .arg = { a0, a1, a2 } },
	};
	return c;
}

/* Run one command; returns its completion (status -9999 if none). */
static struct mdgpu_cpl run_one(struct dev *d, const struct mdgpu_cmd *c,
				const char *what)
{
	uint32_t n = d->tail;
	struct mdgpu_cpl cpl = { .status = -9999 };

	put_cmd(d, c);
	if (run(d, what))
		return cpl;
	cpl = get_cpl(d, n);
	if (cpl.seq != d->seq)
		printf("    %s: seq %llu, expected %llu\n", what,
		       (unsigned long long)cpl.seq, (unsigned long long)d->seq);
	d->seq++;
	return cpl;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_nops(struct dev *d)
{
	uint32_t first = d->tail, bad = 0;
	uint64_t seq0 = d->seq;
	struct mdgpu_cmd c;
	int ret;

	for (int i = 0; i < 8; i++) {
		c = nop(i == 7 ? MDGPU_CMD_F_IRQ : 0);
		put_cmd(d, &c);
	}
	ret = run(d, "nop batch");
	for (uint32_t i = 0; !ret && i < 8; i++) {
		struct mdgpu_cpl cpl = get_cpl(d, first + i);

		if (cpl.seq != seq0 + i || cpl.status || cpl.opcode != MDGPU_OP_NOP)
			bad++;
	}
	d->seq += 8;
	check(!ret && !bad, "nop-batch-8", "ret %d, %u bad completions", ret,
	      bad);
}

static void test_query(struct dev *d)
{
	struct mdgpu_cmd c = {
		.opcode = MDGPU_OP_QUERY, .flags = MDGPU_CMD_F_IRQ,
		.query = { .what = MDGPU_QUERY_ABI_VERSION },
	};
	struct mdgpu_cpl cpl = run_one(d, &c, "query");

	check(cpl.status == 0 && cpl.opcode == MDGPU_OP_QUERY &&
	      cpl.result == MDGPU_ABI_VERSION, "query-abi-version",
	      "status %d opcode %u result %#llx", cpl.status, cpl.opcode,
	      (unsigned long long)cpl.result);
}

static void test_aperture(struct dev *d)
{
	const uint64_t count = 1024, off = 4096;
	uint64_t sum = 0;
	struct mdgpu_cmd c;
	struct mdgpu_cpl cpl;
	uint32_t bad = 0;

	if (d->info.aperture_size < off + 2 * count * 4) {
		check(0, "aperture-size", "aperture %llu too small",
		      (unsigned long long)d->info.aperture_size);
		return;
	}
	/* Guest writes, device reads: CHECKSUM over a pattern. */
	for (uint64_t i = 0; i < count; i++) {
		uint32_t w = (uint32_t)(i * 2654435761u);

		d->aper[i] = w;
		sum += (uint64_t)w * (2 * i + 1);
	}
	c = builtin(MDGPU_BUILTIN_CHECKSUM, 0, count, 0);
	cpl = run_one(d, &c, "checksum");
	check(cpl.status == 0 && cpl.result == sum, "aperture-checksum",
	      "status %d result %#llx expected %#llx", cpl.status,
	      (unsigned long long)cpl.result, (unsigned long long)sum);

	/* Device writes, guest reads: FILL. */
	c = builtin(MDGPU_BUILTIN_FILL_U32, off, count, 0xdeadbeef);
	cpl = run_one(d, &c, "fill");
	for (uint64_t i = 0; i < count; i++)
		bad += d->aper[off / 4 + i] != 0xdeadbeef;
	bad += d->aper[off / 4 + count] != 0;	/* nothing past the end */
	check(cpl.status == 0 && !bad, "aperture-fill", "status %d, %u bad words",
	      cpl.status, bad);

	/* Out of range: the responder must refuse, not scribble. */
	c = builtin(MDGPU_BUILTIN_FILL_U32, d->info.aperture_size - 4, 2, 1);
	cpl = run_one(d, &c, "fill out of range");
	check(cpl.status == -ERANGE, "aperture-fill-out-of-range",
	      "status %d, expected %d", cpl.status, -ERANGE);
}

static void test_bad_opcode(struct dev *d)
{
	struct mdgpu_cmd c = { .opcode = 200, .flags = MDGPU_CMD_F_IRQ };
	struct mdgpu_cpl cpl = run_one(d, &c, "bad opcode");

	check(cpl.status == -EINVAL, "bad-opcode-einval", "status %d",
	      cpl.status);
}

/* Three times round the ring in half-ring batches. */
static void test_wrap(struct dev *d)
{
	uint32_t batch = d->info.ring_entries / 2, bad = 0, batches = 6;
	struct mdgpu_cmd c;
	int ret = 0;

	for (uint32_t b = 0; b < batches && !ret; b++) {
		uint32_t first = d->tail;

		for (uint32_t i = 0; i < batch; i++) {
			c = nop(i == batch - 1 ? MDGPU_CMD_F_IRQ : 0);
			put_cmd(d, &c);
		}
		ret = run(d, "wrap");
		for (uint32_t i = 0; !ret && i < batch; i++)
			bad += get_cpl(d, first + i).seq != d->seq + i;
		d->seq += batch;
	}
	check(!ret && !bad, "ring-wrap-3x", "ret %d, %u bad seq", ret, bad);
}

static void test_bad_submits(struct dev *d)
{
	struct mdgpu_guest_submit s = { .tail = d->tail + d->info.ring_entries + 1 };
	struct mdgpu_guest_wait w = { .fence = d->info.submitted + 1000 };
	int r1, r2, r3;

	r1 = ioctl(d->fd, MDGPU_GUEST_SUBMIT, &s) ? errno : 0;
	get_info(d);
	w.fence = d->info.submitted + 1;
	r2 = ioctl(d->fd, MDGPU_GUEST_WAIT_FENCE, &w) ? errno : 0;
	s.tail = d->tail;
	s.flags = 1;
	r3 = ioctl(d->fd, MDGPU_GUEST_SUBMIT, &s) ? errno : 0;
	check(r1 == EINVAL && r2 == EINVAL && r3 == EINVAL,
	      "bad-submit-and-wait-einval",
	      "tail beyond ring %d, unsubmitted fence %d, flags %d", r1, r2, r3);
}

static void test_reset(struct dev *d)
{
	struct mdgpu_cmd c = nop(MDGPU_CMD_F_IRQ);
	uint64_t fence = 0, done = 0;
	double t0;
	int ret;

	memcpy(c.raw, "HOLD", 5);
	put_cmd(d, &c);
	ret = submit(d, &fence);
	t0 = now_s();
	ret = ret ? ret : wait_fence(d, fence, 300, &done);
	check(ret == -ETIMEDOUT && now_s() - t0 >= 0.25, "wait-timeout",
	      "ret %d after %.3f s", ret, now_s() - t0);

	ret = ioctl(d->fd, MDGPU_GUEST_RESET) ? -errno : 0;
	check(!ret, "reset-ioctl", "%s", strerror(-ret));
	ret = wait_fence(d, fence, 1000, &done);
	check(ret == -ECANCELED, "reset-cancels-pending", "ret %d (%s)", ret,
	      strerror(-ret));
	get_info(d);
	check(d->info.resets == 1 && d->info.sq_tail == 0 &&
	      d->info.submitted == fence && d->info.completed == fence,
	      "reset-state", "resets %u sq_tail %u submitted %llu completed %llu",
	      d->info.resets, d->info.sq_tail,
	      (unsigned long long)d->info.submitted,
	      (unsigned long long)d->info.completed);

	/* The ring restarts at 0, fences keep counting. */
	d->tail = 0;
	d->seq = 0;
	c = nop(MDGPU_CMD_F_IRQ);
	put_cmd(d, &c);
	ret = submit(d, &done);
	ret = ret ? ret : wait_fence(d, done, WAIT_MS, NULL);
	check(!ret && done == fence + 1 && get_cpl(d, 0).seq == 0 &&
	      get_cpl(d, 0).status == 0, "submit-after-reset",
	      "ret %d fence %llu (want %llu)", ret, (unsigned long long)done,
	      (unsigned long long)fence + 1);
	d->seq = 1;
}

static void test_backend_lost(struct dev *d)
{
	struct mdgpu_cmd c = nop(MDGPU_CMD_F_IRQ);
	uint64_t fence = 0, done = 0;
	double t0, dt;
	int ret;

	memcpy(c.raw, "LOSE", 5);
	put_cmd(d, &c);
	ret = submit(d, &fence);
	t0 = now_s();
	ret = ret ? ret : wait_fence(d, fence, 60000, &done);
	dt = now_s() - t0;
	check(ret == -ENODEV && dt < 50, "backend-lost-wait-enodev",
	      "ret %d (%s) after %.2f s", ret, strerror(-ret), dt);
	c = nop(MDGPU_CMD_F_IRQ);
	put_cmd(d, &c);
	ret = submit(d, &fence);
	check(ret == -ENODEV, "backend-lost-submit-enodev", "ret %d (%s)", ret,
	      strerror(-ret));
	ret = get_info(d);
	check(!ret && (d->info.status & MDGPU_STATUS_BACKEND_LOST),
	      "backend-lost-status", "ret %d status %#x", ret, d->info.status);
}

static sigjmp_buf fault_jmp;

static void on_fault(int sig)
{
	siglongjmp(fault_jmp, sig);
}

static int unbind_test(const char *bdf, const char *path)
{
	struct mdgpu_guest_wait w = { .fence = 0 };
	struct mdgpu_guest_submit s = { .tail = 0 };
	struct mdgpu_guest_info info;
	volatile uint32_t *ring;
	volatile uint32_t word;
	int fd, ufd, r1, r2, r3, sig;
	void *m;

	fd = open(path, O_RDWR | O_CLOEXEC);
	check(fd >= 0, "unbind-open", "%s: %s", path, strerror(errno));
	if (fd < 0 || ioctl(fd, MDGPU_GUEST_GET_INFO, &info))
		return 1;
	ring = mmap(NULL, info.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, MDGPU_GUEST_MMAP_RING);
	check(ring != MAP_FAILED, "unbind-mmap", "%s", strerror(errno));
	if (ring == MAP_FAILED)
		return 1;
	word = ring[0];

	ufd = open("/sys/bus/pci/drivers/mdgpu-guest/unbind", O_WRONLY);
	r1 = ufd >= 0 && write(ufd, bdf, strlen(bdf)) == (ssize_t)strlen(bdf);
	if (ufd >= 0)
		close(ufd);
	check(r1 && access(path, F_OK), "unbind-with-open-file",
	      "unbind %s: %s", bdf, strerror(errno));

	r1 = ioctl(fd, MDGPU_GUEST_GET_INFO, &info) ? errno : 0;
	r2 = ioctl(fd, MDGPU_GUEST_WAIT_FENCE, &w) ? errno : 0;
	r3 = ioctl(fd, MDGPU_GUEST_SUBMIT, &s) ? errno : 0;
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, MDGPU_GUEST_MMAP_RING);
	check(r1 == ENODEV && r2 == ENODEV && r3 == ENODEV && m == MAP_FAILED &&
	      errno == ENODEV, "removed-device-enodev",
	      "GET_INFO %d WAIT %d SUBMIT %d mmap %p", r1, r2, r3, m);

	signal(SIGBUS, on_fault);
	signal(SIGSEGV, on_fault);
	sig = sigsetjmp(fault_jmp, 1);
	if (!sig)
		word = ring[0];
	check(sig == SIGBUS, "removed-mapping-sigbus", "signal %d", sig);
	(void)word;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/dev/mdgpu-vgpu0";
	struct dev d = { 0 };
	uint64_t irqs0;
	int fd2, ret, smoke = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 2 && !strcmp(argv[1], "--unbind")) {
		unbind_test(argv[2], argc > 3 ? argv[3] : "/dev/mdgpu-vgpu0");
		printf("%d passed, %d failed\n", passed, failed);
		return failed ? 1 : 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--intx")) {
		smoke = 1;
		name_prefix = "intx-";
		path = argc > 2 ? argv[2] : "/dev/mdgpu-vgpu0";
	}
	d.fd = open(path, O_RDWR | O_CLOEXEC);
	check(d.fd >= 0, "open", "%s: %s", path, strerror(errno));
	if (d.fd < 0)
		goto out;
	fd2 = open(path, O_RDWR | O_CLOEXEC);
	check(fd2 < 0 && errno == EBUSY, "second-open-ebusy", "fd %d errno %d",
	      fd2, errno);
	if (fd2 >= 0)
		close(fd2);

	ret = get_info(&d);
	check(!ret && d.info.abi_version >> 16 == MDGPU_ABI_MAJOR &&
	      d.info.ring_entries >= 2 &&
	      !(d.info.ring_entries & (d.info.ring_entries - 1)) &&
	      d.info.ring_size >= MDGPU_RING_BYTES(d.info.ring_entries) &&
	      d.info.aperture_size > 0 &&
	      (d.info.status & (MDGPU_STATUS_READY | MDGPU_STATUS_ENABLED)) ==
	      (MDGPU_STATUS_READY | MDGPU_STATUS_ENABLED),
	      "get-info", "ret %d abi %#x entries %u ring %llu aperture %llu status %#x",
	      ret, d.info.abi_version, d.info.ring_entries,
	      (unsigned long long)d.info.ring_size,
	      (unsigned long long)d.info.aperture_size, d.info.status);
	if (ret)
		goto out;
	printf("    info: abi %u.%u, %u entries, ring %llu B, aperture %llu B, quota %llu MiB, irq %s, status %#x\n",
	       d.info.abi_version >> 16, d.info.abi_version & 0xffff,
	       d.info.ring_entries, (unsigned long long)d.info.ring_size,
	       (unsigned long long)d.info.aperture_size,
	       (unsigned long long)d.info.fb_quota >> 20,
	       d.info.irq_mode == MDGPU_GUEST_IRQ_MSI ? "MSI" : "INTx",
	       d.info.status);
	if (smoke)
		check(d.info.irq_mode == MDGPU_GUEST_IRQ_INTX, "irq-mode",
		      "irq mode %u, expected INTx", d.info.irq_mode);
	else
		check(d.info.irq_mode == MDGPU_GUEST_IRQ_MSI, "irq-mode-msi",
		      "irq mode %u", d.info.irq_mode);

	d.ring = mmap(NULL, d.info.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      d.fd, MDGPU_GUEST_MMAP_RING);
	d.aper = mmap(NULL, d.info.aperture_size, PROT_READ | PROT_WRITE,
		      MAP_SHARED, d.fd, MDGPU_GUEST_MMAP_APERTURE);
	check(d.ring != MAP_FAILED && d.aper != MAP_FAILED, "mmap-ring-aperture",
	      "%s", strerror(errno));
	if (d.ring == MAP_FAILED || d.aper == MAP_FAILED)
		goto out;
	check(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, d.fd, 0) == MAP_FAILED &&
	      mmap(NULL, d.info.ring_size + 4096, PROT_READ, MAP_SHARED, d.fd,
		   0) == MAP_FAILED,
	      "mmap-private-or-oversized-refused", "mapping succeeded");
	d.sq = (volatile struct mdgpu_cmd *)d.ring;
	d.cq = (volatile struct mdgpu_cpl *)((char *)d.ring +
		MDGPU_RING_CQ_OFFSET(d.info.ring_entries));
	d.tail = d.info.sq_tail;
	d.seq = d.info.sq_tail;
	irqs0 = d.info.irq_count;

	test_nops(&d);
	test_query(&d);
	if (smoke)
		goto irqs;
	test_aperture(&d);
	test_bad_opcode(&d);
	test_wrap(&d);
	test_bad_submits(&d);
irqs:
	get_info(&d);
	check(d.info.irq_count > irqs0 && d.info.completed == d.info.submitted,
	      "interrupts-arrived", "irq_count %llu -> %llu, completed %llu of %llu",
	      (unsigned long long)irqs0, (unsigned long long)d.info.irq_count,
	      (unsigned long long)d.info.completed,
	      (unsigned long long)d.info.submitted);
	printf("    irqs: %llu for %llu commands\n",
	       (unsigned long long)(d.info.irq_count - irqs0),
	       (unsigned long long)d.info.submitted);
	if (smoke)
		goto out;
	test_reset(&d);
	test_backend_lost(&d);
out:
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
