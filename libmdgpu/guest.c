// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmdgpu guest transport: a program inside a virtual machine that was
 * given an mdgpu vGPU (-device vfio-pci,sysfsdev=...) reaches it through
 * the guest driver mdgpu-guest.ko (Documentation/guest-driver.md,
 * guest/include/uapi/mdgpu-guest.h):
 *
 *   open: /dev/mdgpu-vgpuN (opts.path, else $MDGPU_GUEST_DEVICE, else
 *   /dev/mdgpu-vgpu0), MDGPU_GUEST_GET_INFO, mmap of the ring (SQ + CQ)
 *   and of the aperture, MDGPU_GUEST_RESET (a fresh ring at tail 0, as the
 *   vfio transport resets at open);
 *   doorbell: the new descriptors (already written into the SQ by
 *   client.c) get MDGPU_CMD_F_IRQ, then MDGPU_GUEST_SUBMIT with the new
 *   tail; the driver returns the fence of the last command;
 *   head / wait: MDGPU_GUEST_WAIT_FENCE (timeout 0 to read the completed
 *   fence, else sleeping on the completion interrupt);
 *   close: MDGPU_GUEST_RESET (the vGPU's allocations go with the handle).
 *
 * Command numbers (client.c's 32-bit seq, restarting at 0 after a reset)
 * map to the driver's 64-bit fences: the command with seq s has fence
 * last_fence - (stail - 1 - s), where stail is the tail last submitted and
 * last_fence the fence SUBMIT returned for it.
 *
 * Errors as the driver reports them: -ENODEV when the backend is lost
 * (mdgpud gone) or the device removed, -ECANCELED when a device reset
 * dropped the waited-for command, -EIO on a ring error.  Completions read
 * from the ring are untrusted as everywhere in libmdgpu (client.c checks
 * seq and opcode); the completed fence comes from the driver, which clamps
 * it to what was submitted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "priv.h"
#include "guest/include/uapi/mdgpu-guest.h"

#define MDGPU_GUEST_DEFAULT_DEV	"/dev/mdgpu-vgpu0"

/* One WAIT_FENCE sleep; the loop goes round until done or an error. */
static const uint32_t mdgpu_guest_wait_ms = 1000;
/* The longest wait for the host to take up a reset (the driver's own
 * RESET bound is its reset_timeout_ms parameter). */
static const uint32_t mdgpu_guest_reset_ms = 30000;

struct mdgpu_guest {
	int fd;
	uint8_t *ring;
	size_t ring_size;
	uint8_t *ap;
	size_t ap_size;
	uint32_t flagged;	/* commands up to here have F_IRQ */
	uint32_t stail;		/* tail last accepted by SUBMIT */
	uint64_t last_fence;	/* fence of command stail - 1 */
	int sub_err;		/* last SUBMIT's error, 0 if it worked */
	/* Driver reset counts: known at the last (re)arm, and the latest
	 * seen (mdgpu_reset() from any thread raises it). */
	uint32_t resets_base;
	uint32_t resets_seen;
	/* The handle's thread saw a reset the count may not show (a
	 * canceled wait, a fence that skipped): resync before going on. */
	bool stale;
	bool armed;		/* open() completed: close() resets */
};

static void mdgpu_guest_resets_seen(struct mdgpu_guest *s, uint32_t n)
{
	uint32_t cur = __atomic_load_n(&s->resets_seen, __ATOMIC_ACQUIRE);

	while ((int32_t)(n - cur) > 0 &&
	       !__atomic_compare_exchange_n(&s->resets_seen, &cur, n, false,
					    __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE))
		;
}

static bool mdgpu_guest_was_reset(struct mdgpu_guest *s)
{
	return s->stale || __atomic_load_n(&s->resets_seen, __ATOMIC_ACQUIRE)
			   != s->resets_base;
}

static int mdgpu_guest_info(struct mdgpu_guest *s, struct mdgpu_guest_info *in)
{
	memset(in, 0, sizeof(*in));
	return ioctl(s->fd, MDGPU_GUEST_GET_INFO, in) ? -errno : 0;
}

static void mdgpu_guest_close(struct mdgpu *g)
{
	struct mdgpu_guest *s = g->tpriv;

	if (!s)
		return;
	if (s->ring)
		munmap(s->ring, s->ring_size);
	if (s->ap)
		munmap(s->ap, s->ap_size);
	/* The driver keeps the ring and the vGPU's allocations across
	 * close; a handle owns them, so they go with it (as a vfio close
	 * resets the device and a socket close frees): RESET, and mdgpud
	 * frees and scrubs.  Only for a handle that was opened. */
	if (s->armed)
		ioctl(s->fd, MDGPU_GUEST_RESET);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
	g->tpriv = NULL;
}

/*
 * Wait until the device has no reset pending: the host has dropped all
 * work of before the reset, so none of it can still write the ring or the
 * aperture, and its completions are refused (mdgpu.ko's generations).
 * RESET itself waits; this is for a reset another thread asked for.
 */
static int mdgpu_guest_reset_done(struct mdgpu_guest *s)
{
	struct mdgpu_guest_wait w = {
		.timeout_ms = mdgpu_guest_reset_ms,
		.flags = MDGPU_GUEST_WAIT_RESET,
	};

	while (ioctl(s->fd, MDGPU_GUEST_WAIT_FENCE, &w))
		if (errno != EINTR)
			return -errno;
	return 0;
}

/*
 * A fresh ring: tail 0, fences counted from what the driver says was
 * submitted, once no reset is pending.
 */
static int mdgpu_guest_arm(struct mdgpu *g, struct mdgpu_guest_info *in)
{
	struct mdgpu_guest *s = g->tpriv;
	int ret;

	ret = mdgpu_guest_reset_done(s);
	if (!ret)
		ret = mdgpu_guest_info(s, in);
	if (!ret && in->sq_tail != 0) {
		/* The driver's ring is not at 0 (a reset we did not ask
		 * for was noticed late, or none happened): make it so. */
		if (ioctl(s->fd, MDGPU_GUEST_RESET))
			return -errno;
		ret = mdgpu_guest_info(s, in);
	}
	if (ret)
		return ret;
	if (in->sq_tail != 0)
		return -EPROTO;
	s->stail = s->flagged = 0;
	s->last_fence = in->submitted;
	s->sub_err = 0;
	s->stale = false;
	s->resets_base = in->resets;
	mdgpu_guest_resets_seen(s, in->resets);
	/* A reset raced with the GET_INFO above: the next wait reports it. */
	return 0;
}

static int mdgpu_guest_open(struct mdgpu *g, const struct mdgpu_open_opts *o)
{
	const char *path = o->path;
	struct mdgpu_guest_info in;
	struct mdgpu_guest *s;
	uint64_t params = (uint64_t)MDGPU_PARAM_SLOTS *
			  MDGPU_PARAM_SLOT_BYTES;
	uint32_t entries;
	void *p;
	int ret;

	if (!path)
		path = getenv("MDGPU_GUEST_DEVICE");
	if (!path)
		path = MDGPU_GUEST_DEFAULT_DEV;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	g->tpriv = s;
	s->fd = open(path, O_RDWR | O_CLOEXEC);
	if (s->fd < 0) {
		ret = mdgpu_set_error(g, -errno, "open %s%s", path,
				      errno == EBUSY ? " (in use)" : "");
		goto err;
	}
	ret = mdgpu_guest_info(s, &in);
	if (ret) {
		mdgpu_set_error(g, ret, "%s: GET_INFO", path);
		goto err;
	}
	entries = in.ring_entries;
	/* The driver checked these against the BARs at probe; check them
	 * again against what this library needs. */
	if ((in.abi_version >> 16) != MDGPU_ABI_MAJOR || entries < 2 ||
	    (entries & (entries - 1)) ||
	    MDGPU_RING_BYTES(entries) > in.ring_size ||
	    in.ring_size > SIZE_MAX || in.aperture_size > SIZE_MAX ||
	    in.aperture_size < params + 2 * 4096) {
		ret = mdgpu_set_error(g, -EPROTO, "%s: ABI %#x, ring %u entries "
				      "in %llu bytes, aperture %llu bytes", path,
				      in.abi_version, entries,
				      (unsigned long long)in.ring_size,
				      (unsigned long long)in.aperture_size);
		goto err;
	}
	if (!(in.status & MDGPU_STATUS_READY) ||
	    (in.status & MDGPU_STATUS_BACKEND_LOST)) {
		ret = mdgpu_set_error(g, -ENODEV, "%s: no mdgpud serves the "
				      "vGPU (status %#x)", path, in.status);
		goto err;
	}
	p = mmap(NULL, (size_t)in.ring_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED, s->fd, (off_t)MDGPU_GUEST_MMAP_RING);
	if (p == MAP_FAILED) {
		ret = mdgpu_set_error(g, -errno, "%s: mmap ring", path);
		goto err;
	}
	s->ring = p;
	s->ring_size = (size_t)in.ring_size;
	p = mmap(NULL, (size_t)in.aperture_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED, s->fd, (off_t)MDGPU_GUEST_MMAP_APERTURE);
	if (p == MAP_FAILED) {
		ret = mdgpu_set_error(g, -errno, "%s: mmap aperture", path);
		goto err;
	}
	s->ap = p;
	s->ap_size = (size_t)in.aperture_size;

	if (ioctl(s->fd, MDGPU_GUEST_RESET)) {
		ret = mdgpu_set_error(g, -errno, "%s: RESET", path);
		goto err;
	}
	ret = mdgpu_guest_arm(g, &in);
	if (ret) {
		mdgpu_set_error(g, ret, "%s: ring restart", path);
		goto err;
	}

	g->entries = entries;
	g->sq = s->ring + MDGPU_RING_SQ_OFFSET;
	g->cq = s->ring + MDGPU_RING_CQ_OFFSET(entries);
	g->aperture = s->ap;
	g->aperture_size = s->ap_size;
	g->host_off = s->ap_size;	/* no zero-copy area by default */
	if (o->host_bytes) {
		/* Zero-copy area: the aperture's tail (as on the socket
		 * transport); copies address it in MDGPU_SPACE_APERTURE. */
		uint64_t want = (o->host_bytes + 4095) & ~4095ULL;

		if (want > s->ap_size || s->ap_size - want < params + 2 * 4096) {
			ret = mdgpu_set_error(g, -E2BIG, "host_bytes %llu: the "
					      "aperture has %zu bytes",
					      (unsigned long long)o->host_bytes,
					      s->ap_size);
			goto err;
		}
		g->host_off = s->ap_size - want;
	}
	g->tail = g->reaped = 0;
	s->armed = true;
	g->info = (struct mdgpu_info){
		.type_id = in.type_id, .fb_quota = in.fb_quota,
		.aperture_size = s->ap_size, .ring_entries = entries,
		.sm_count = in.sm_count, .abi_version = in.abi_version,
	};
	return 0;
err:
	mdgpu_guest_close(g);
	return ret;
}

static void mdgpu_guest_doorbell(struct mdgpu *g, uint32_t tail)
{
	struct mdgpu_guest *s = g->tpriv;
	struct mdgpu_guest_submit sub = { .tail = tail };

	/* After a reset the ring restarts at 0: client.c's tail is stale
	 * until it resyncs (the next wait reports -ECANCELED). */
	if (mdgpu_guest_was_reset(s))
		return;
	/* Every command interrupts on completion: WAIT_FENCE sleeps on
	 * the interrupt. */
	mdgpu_ring_flag_irq(g, &s->flagged, tail);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (ioctl(s->fd, MDGPU_GUEST_SUBMIT, &sub)) {
		s->sub_err = -errno;	/* reported by the next wait */
		return;
	}
	s->sub_err = 0;
	/* The driver counts every command it rang; any other fence means
	 * it restarted the ring on its own (a reset it noticed, e.g. from
	 * the host): what we think is queued is not. */
	if (sub.fence != s->last_fence + (uint32_t)(tail - s->stail))
		s->stale = true;
	s->stail = tail;
	s->last_fence = sub.fence;
}

/* WAIT_FENCE on the fence of command seq - 1 (the head reaching seq). */
static int mdgpu_guest_wait_fence(struct mdgpu_guest *s, uint32_t target,
				  uint32_t ms, uint64_t *completed)
{
	struct mdgpu_guest_wait w = {
		.fence = s->last_fence - (uint32_t)(s->stail - target),
		.timeout_ms = ms,
	};
	int ret = ioctl(s->fd, MDGPU_GUEST_WAIT_FENCE, &w) ? -errno : 0;

	*completed = w.completed;
	return ret;
}

static uint32_t mdgpu_guest_head(struct mdgpu *g)
{
	struct mdgpu_guest *s = g->tpriv;
	uint64_t done = 0, behind;
	int ret = mdgpu_guest_wait_fence(s, s->stail, 0, &done);

	if ((ret && ret != -ETIMEDOUT) || done > s->last_fence)
		return g->reaped;	/* nothing newer known */
	behind = s->last_fence - done;
	if (behind > s->stail)		/* completed before this ring */
		return 0;
	return s->stail - (uint32_t)behind;
}

static int mdgpu_guest_wait(struct mdgpu *g, uint32_t target)
{
	struct mdgpu_guest *s = g->tpriv;
	uint64_t done;
	int ret;

	for (;;) {
		if (mdgpu_guest_was_reset(s))
			return -ECANCELED;
		if ((int32_t)(target - s->stail) > 0)	/* never rung */
			return s->sub_err ? s->sub_err : -EPROTO;
		ret = mdgpu_guest_wait_fence(s, target, mdgpu_guest_wait_ms,
					     &done);
		if (ret == -ETIMEDOUT || ret == -EINTR)
			continue;
		if (ret == -ECANCELED)
			s->stale = true;
		return ret;
	}
}

/* MDGPU_GUEST_RESET, from any thread: the handle's wait (or the next
 * one) fails -ECANCELED and client.c resyncs through rearm. */
static int mdgpu_guest_reset(struct mdgpu *g)
{
	struct mdgpu_guest *s = g->tpriv;
	struct mdgpu_guest_info in;
	int ret;

	if (ioctl(s->fd, MDGPU_GUEST_RESET))
		return -errno;
	ret = mdgpu_guest_info(s, &in);
	if (ret)	/* the reset happened: make sure it is noticed */
		in.resets = s->resets_base + 1;
	mdgpu_guest_resets_seen(s, in.resets);
	return 0;
}

/* A reset through this handle (any thread) since the last re-arm. */
static int mdgpu_guest_reset_since(struct mdgpu *g)
{
	return mdgpu_guest_was_reset(g->tpriv) ? -ECANCELED : 0;
}

static int mdgpu_guest_rearm(struct mdgpu *g)
{
	struct mdgpu_guest_info in;

	return mdgpu_guest_arm(g, &in);
}

const struct mdgpu_tops mdgpu_tops_guest = {
	.name = "guest",
	.open = mdgpu_guest_open,
	.close = mdgpu_guest_close,
	.doorbell = mdgpu_guest_doorbell,
	.head = mdgpu_guest_head,
	.wait = mdgpu_guest_wait,
	.reset = mdgpu_guest_reset,
	.rearm = mdgpu_guest_rearm,
	.reset_since = mdgpu_guest_reset_since,
};
