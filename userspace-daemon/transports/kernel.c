// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The kernel transport: mdgpud serves the mdev vGPUs of mdgpu.ko through
 * /dev/mdgpu (uapi section 3, Documentation/kmod.md "Control device").
 *
 *   REGISTER_GPU with the backend's GPU (bus_id, name, fb_size, sm_count):
 *   the GPU becomes an mdev parent, or a parent whose daemon died is
 *   re-attached (the kernel then replays POLICY and CREATE/OPEN events).
 *   With a PCI address (config parent_pci: the cuda backend's bus id by
 *   default, or an address given) the GPU's PCI device is the mdev parent
 *   (MDGPU_REGISTER_F_PCI) and that address is the bus_id; without one
 *   the parent is the virtual mdgpu<id>.
 *   the control fd is watched in the core's event loop; events:
 *
 *   CREATE   mmap the vGPU's ring and aperture (MDGPU_CTL_MMAP_OFFSET),
 *            get the aperture's mmap-only fd for the backend's worker
 *            (MDGPU_CTL_APERTURE_FD, ABI 1.8), mdgpud_vgpu_create() with
 *            the event's type and knobs
 *   REMOVE   mdgpud_vgpu_destroy() (memory scrubbed), unmap
 *   OPEN/CLOSE  bookkeeping (DMA needs an open device); OPEN starts a
 *            generation
 *   DOORBELL cache the new SQ tail; sq_tail() returns it.  sq_tail()
 *            also reads the control fd itself, at most every
 *            mdgpud_kern_peek_ns, so that a doorbell rung while the
 *            dispatcher runs a slice (its commands, its linger) is seen
 *            then, not only between slices (mdgpud_kern_peek())
 *
 * The shadow doorbell (ABI 1.13, struct mdgpu_ring_shadow in the ring's
 * mapping): arm() sets daemon_polling while the dispatcher is awake and
 * the ring is served, and sq_tail() reads shadow.sq_tail, so a VFIO user
 * that saw daemon_polling set needs no BAR0 doorbell (no VM exit).  A
 * shadow tail is taken only when it moves forward by at most entries
 * past the head the kernel has; publish() is then COMPLETE_TAIL, which
 * hands the kernel that tail with the head (mdgpud_kern_arm() has the
 * ordering argument).
 *   KNOB     mdgpud_vgpu_set_knobs() (sysfs weight/cap/priority, live)
 *   POLICY   mdgpud_core_set_policy()
 *   RESET    mdgpud_vgpu_reset(): queued work dropped, memory scrubbed,
 *            ring back at 0; then the new generation's first COMPLETE,
 *            which tells the kernel (and the VFIO user) the reset is done
 *
 * Generations (uapi section 3, ABI 1.4): RESET and OPEN carry the vGPU's
 * new generation; every COMPLETE and DMA carries the generation the work
 * belongs to, and the kernel refuses an older one with -ESTALE.  Work the
 * dispatcher still runs after a reset it has not read yet therefore
 * cannot complete into the new ring or reach guest memory; at the first
 * -ESTALE the vGPU is `desync`: nothing more is read from or published
 * to its ring until the RESET or OPEN event that is queued behind it.
 *
 * publish() is MDGPU_CTL_COMPLETE_TAIL (head, fence, fb_used,
 * IRQ_COMPLETION when the command carried MDGPU_CMD_F_IRQ, and the tail
 * served), dma() is MDGPU_CTL_DMA, context_event() is
 * MDGPU_CTL_VGPU_EVENT (STATUS.CONTEXT_LOST, IRQ_ERROR), arm() sets or
 * clears the shadow's daemon_polling: the control fd is always watched,
 * a BAR0 doorbell is an event that wakes the dispatcher's epoll.
 *
 * Event payloads come from the kernel, but their numbers describe what a
 * guest or an administrator chose: they are checked here before use (ring
 * size, aperture size, knob ranges through the scheduler's own checks).
 *
 * Every callback runs in the dispatcher thread (core_priv.h), between
 * slices: a vGPU is never reset or destroyed while one of its commands
 * runs.  Only a doorbell is taken in the middle of a slice: the peek
 * holds back every other event, and every event after it, for the
 * between-slices handler, so events are still handled in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/gpu_select.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"
#include "mdgpud/transport.h"

/* One vGPU of the parent, as the kernel announced it. */
struct mdgpud_kvgpu {
	struct mdgpud_transport *t;
	struct mdgpud_kvgpu *next;
	uint32_t kid;			/* the kernel's vgpu_id */
	uint8_t uuid[16];
	char uuid_str[MDGPU_UUID_STR_LEN];
	uint32_t type_id;
	uint32_t entries;
	uint8_t *ring;			/* SQ at 0, CQ, mirror, shadow */
	size_t ring_len;
	/* The shadow doorbell in the ring (ABI 1.13): sq_tail is the
	 * VFIO user's, daemon_polling ours. */
	struct mdgpu_ring_shadow *shadow;
	const struct mdgpu_ring_mirror *mirror;	/* its STATUS */
	uint8_t *ap;
	size_t ap_len;
	struct mdgpud_vgpu *v;		/* NULL if the core refused it */
	uint32_t tail;			/* last doorbell, BAR0 or shadow */
	uint64_t shadow_taken;		/* tails taken from the shadow */
	uint64_t shadow_ignored;	/* shadow tails refused as invalid */
	uint32_t head;			/* last head published */
	uint32_t core_head;		/* the dispatcher's head (publish arg) */
	bool open;
	uint32_t gen;			/* generation of the work we run */
	/* Replayed open across a daemon restart: the kernel's SQ_HEAD is
	 * unknown, so the ring is not served until the user resets it. */
	bool unsynced;
	/* The kernel refused a COMPLETE or DMA as stale (-ESTALE): the
	 * device was reset or reopened and the event saying so is not read
	 * yet.  Until it is, nothing more is read from or published to the
	 * ring. */
	bool desync;
	uint64_t complete_errors;
};

struct mdgpud_transport {
	struct mdgpud_core *core;
	int fd;
	uint32_t parent_id;
	char parent_name[MDGPU_NAME_LEN];
	struct mdgpud_kvgpu *vgpus;
	bool replaying;			/* draining the events REGISTER queued */
	/* Events read by a peek that only the between-slices handler may
	 * handle: held[held_next, held_n), in the kernel's order.  While
	 * any is held a peek reads nothing.  wake_efd, watched by the core,
	 * is signalled when some are held, since the control fd may have
	 * nothing left to wake the loop with. */
	struct mdgpu_ctl_event held[16];
	uint32_t held_next, held_n;
	bool draining;			/* in mdgpud_kern_drain(): no peek */
	int wake_efd;
	uint64_t peek_ns;		/* when sq_tail() last read the fd */
	/* The dispatcher's last arm(): awake.  Kept for the transport, not
	 * per vGPU, so that a vGPU created or reset while the dispatcher
	 * polls is polled at once (see mdgpud_kern_shadow_set()). */
	bool awake;
};

/*
 * How often sq_tail() reads the control fd while the dispatcher polls a
 * ring (mdgpud_kern_peek()): a non-blocking read() that finds nothing
 * costs about a microsecond; the dispatcher's linger polls far more
 * often than that.
 */
static const uint64_t mdgpud_kern_peek_interval_ns = 20000;

static uint64_t mdgpud_kern_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void mdgpud_kern_peek(struct mdgpud_transport *t,
			     const struct mdgpud_kvgpu *polled);

/* ---------------------------------------------------------------- */
/* Hot path: per-vGPU ops                                           */

/*
 * A tail that the ring may take: at most entries past the head the kernel
 * has (k->head, the last one published), and not behind k->tail (mod
 * 2^32).  Both sources of tails are checked so: a DOORBELL event's (the
 * kernel checked it against its own SQ_HEAD, but the shadow may have
 * taken the ring past it since) and the shadow's (written by the VFIO
 * user: any value at all).  The same check the kernel makes of the tail
 * COMPLETE_TAIL hands it, so a tail taken here is never refused there.
 */
static bool mdgpud_kern_tail_ok(const struct mdgpud_kvgpu *k, uint32_t t)
{
	return t - k->head <= k->entries && t - k->head >= k->tail - k->head;
}

/* The ring is served: what the kernel's DOORBELL events of the vGPU's
 * generation are taken for.  Only then is the shadow read, or polled
 * (a vGPU the core refused is never armed, so never polled). */
static bool mdgpud_kern_served(const struct mdgpud_kvgpu *k)
{
	return k->shadow && k->open && !k->unsynced && !k->desync;
}

/*
 * daemon_polling as it should be: nonzero while the dispatcher is awake
 * (the last arm() said so) and the ring is served.  The store is
 * sequentially consistent; the dispatcher's fence after arm(true) orders
 * it before its last scan (see mdgpud_kern_arm()).  Called on every
 * change of either.  Setting it from an event handler (OPEN, RESET) is
 * safe even while the dispatcher sleeps: handlers run in its poll, and
 * after every poll it arms itself awake and scans every ring again
 * before it can sleep, which it does only after arm(true).
 */
static void mdgpud_kern_shadow_set(struct mdgpud_kvgpu *k)
{
	bool polling = k->t->awake && mdgpud_kern_served(k);

	if (!k->shadow)
		return;
	__atomic_store_n(&k->shadow->daemon_polling, polling ? 1u : 0u,
			 __ATOMIC_SEQ_CST);
}

/*
 * The shadow's tail, taken when it is a valid forward move: the VFIO
 * user's store before its barrier is seen here (acquire, so its commands,
 * written before it, are too).  Anything else is ignored: the user can
 * still ring BAR0, and nothing it writes here makes the daemon stop
 * serving it or anyone else.  A tail behind ours is what a user that
 * rings BAR0 only leaves there (an older driver, shadow_doorbell=0): not
 * worth a word.  One ahead of ours by more than the ring allows is
 * counted, and logged once per vGPU.
 */
static void mdgpud_kern_shadow_read(struct mdgpud_kvgpu *k)
{
	uint32_t s, st;

	if (!mdgpud_kern_served(k))
		return;
	/* As the BAR0 doorbell, only while the device is enabled and not
	 * waiting for a reset to complete: a tail stored after a reset by
	 * a thread that has not seen it yet is not the ring's.  Enabling
	 * sets shadow.sq_tail back to SQ_TAIL before the mirror shows
	 * ENABLED (acquire: the tail read below is at least that new). */
	st = __atomic_load_n(&k->mirror->status, __ATOMIC_ACQUIRE);
	if ((st & (MDGPU_STATUS_ENABLED | MDGPU_STATUS_RESET_PENDING)) !=
	    MDGPU_STATUS_ENABLED)
		return;
	s = __atomic_load_n(&k->shadow->sq_tail, __ATOMIC_ACQUIRE);
	if (s == k->tail)
		return;
	if (!mdgpud_kern_tail_ok(k, s)) {
		if (s - k->tail < 0x80000000u && !k->shadow_ignored++)
			mdgpud_warn("vgpu %s: shadow doorbell tail %u (head %u, "
				    "tail %u, %u entries) ignored", k->uuid_str,
				    s, k->head, k->tail, k->entries);
		return;
	}
	k->tail = s;
	k->shadow_taken++;
}

static uint32_t mdgpud_kern_sq_tail(void *priv)
{
	struct mdgpud_kvgpu *k = priv;

	mdgpud_kern_peek(k->t, k);
	if (k->desync)
		return k->core_head;	/* nothing pending */
	if (k->unsynced)
		return k->head;
	mdgpud_kern_shadow_read(k);
	return k->tail;
}

/* What a desynchronised ring executes: nothing of the user's. */
static const struct mdgpu_cmd mdgpud_kern_nop = { .opcode = MDGPU_OP_NOP };

static const struct mdgpu_cmd *mdgpud_kern_sq_entry(void *priv, uint32_t idx)
{
	struct mdgpud_kvgpu *k = priv;

	if (k->desync)
		return &mdgpud_kern_nop;
	return (const struct mdgpu_cmd *)(k->ring + MDGPU_RING_SQ_OFFSET +
					  (size_t)idx * MDGPU_CMD_SIZE);
}

static void mdgpud_kern_cq_write(void *priv, uint32_t idx,
				 const struct mdgpu_cpl *cpl)
{
	struct mdgpud_kvgpu *k = priv;

	if (k->desync)
		return;
	memcpy(k->ring + MDGPU_RING_CQ_OFFSET(k->entries) +
	       (size_t)idx * MDGPU_CPL_SIZE, cpl, sizeof(*cpl));
}

/*
 * The completion (cq_write) is in the shared ring already; the ioctl
 * moves SQ_HEAD/FENCE and raises the interrupt.  With a shadow doorbell
 * it is COMPLETE_TAIL with k->tail, the tail served: the kernel takes it
 * as SQ_TAIL when the shadow moved it past the last BAR0 doorbell (so the
 * head may pass that doorbell), and leaves SQ_TAIL as it is otherwise.
 * It fails -ESTALE for work of a generation the user ended meanwhile
 * (the RESET or OPEN event is not read yet): that work is being
 * cancelled anyway.  -EINVAL: a head outside the kernel's ring would be
 * our bug; a shadow tail refused because the user disabled the device
 * (CONTROL.ENABLE clear) meanwhile is the user's.  Either way the ring is
 * not served until the user resets it.
 */
static void mdgpud_kern_publish(void *priv, uint32_t head, uint64_t fence,
				uint32_t irq, uint64_t fb_used)
{
	struct mdgpud_kvgpu *k = priv;
	struct mdgpu_ctl_complete_tail ct = {
		.c = { .vgpu_id = k->kid, .sq_head = head, .fence = fence,
		       .fb_used = fb_used, .irq = irq },
	};
	int ret;

	k->core_head = head;
	if (k->desync)
		return;
	k->head = head;
	ct.c.gen = k->gen;
	ct.sq_tail = k->tail;
	if (k->shadow)
		ret = ioctl(k->t->fd, MDGPU_CTL_COMPLETE_TAIL, &ct);
	else
		ret = ioctl(k->t->fd, MDGPU_CTL_COMPLETE, &ct.c);
	if (ret) {
		if (errno == ESTALE || errno == EINVAL) {
			k->desync = true;
			mdgpud_kern_shadow_set(k);
		}
		if (errno != ESTALE && !k->complete_errors++)
			mdgpud_warn("vgpu %u (%s): COMPLETE head %u tail %u: %s",
				    k->v ? mdgpud_vgpu_id(k->v) : 0,
				    k->uuid_str, head, k->tail,
				    strerror(errno));
	}
}

/*
 * The generation k->gen starts here: the old work is dropped.  Its first
 * COMPLETE (head 0, nothing completed, no memory in use) ends the kernel's
 * RESET_PENDING, which a VFIO user waits for before it uses the ring and
 * the aperture again.  -ESTALE: the user has reset again already; that
 * RESET is queued and acknowledged in its turn.
 */
static void mdgpud_kern_ack(struct mdgpud_kvgpu *k)
{
	struct mdgpu_ctl_complete c = { .vgpu_id = k->kid, .gen = k->gen };

	k->desync = false;
	k->complete_errors = 0;
	if (ioctl(k->t->fd, MDGPU_CTL_COMPLETE, &c) && errno != ESTALE)
		mdgpud_warn("vgpu %s: COMPLETE of generation %u: %s",
			    k->uuid_str, k->gen, strerror(errno));
	/* The reset zeroed daemon_polling: set it again if we poll. */
	mdgpud_kern_shadow_set(k);
}

/*
 * The dispatcher goes to sleep (true) or woke up (false).  A doorbell in
 * BAR0 is an event on the watched control fd, which wakes it either way;
 * arm() only tells the VFIO user, through the shadow doorbell's
 * daemon_polling, whether it must ring BAR0 at all.
 *
 * Ordering (Dekker, as the socket transport's ctrl.daemon_sleeping):
 * the user stores shadow.sq_tail, a full barrier, loads daemon_polling;
 * arm(true) stores daemon_polling = 0 (seq_cst), the dispatcher then
 * issues a seq_cst fence and scans every ring once more, sq_tail()
 * loading shadow.sq_tail, before it sleeps.  Of the two stores at least
 * one is seen by the other side's load: either the user reads 0 and
 * rings BAR0 (an event wakes the dispatcher), or the last scan reads the
 * new tail and serves it.  A user that read 1 earlier, while the
 * dispatcher was awake, is seen by a scan after its store: each scan
 * reads the shadow, and the one after arm(true) is the last before the
 * sleep.
 */
static void mdgpud_kern_arm(void *priv, bool sleeping)
{
	struct mdgpud_kvgpu *k = priv;

	k->t->awake = !sleeping;
	mdgpud_kern_shadow_set(k);
}

static void mdgpud_kern_ring_error(void *priv, int err)
{
	struct mdgpud_kvgpu *k = priv;

	/* The kernel refuses bad doorbells itself (ERROR, RING_ERROR,
	 * IRQ_ERROR); a tail it accepted cannot be bad unless the daemon's
	 * view is stale: say so, serve again once it is sane. */
	mdgpud_warn("vgpu %s: doorbell tail %u out of range: %s", k->uuid_str,
		    k->tail, strerror(-err));
}

static void mdgpud_kern_lost(void *priv)
{
	(void)priv;	/* closing /dev/mdgpu makes every vGPU BACKEND_LOST */
}

/*
 * MDGPU_CTL_VGPU_EVENT: the module sets or clears STATUS.CONTEXT_LOST,
 * counts the event and raises IRQ_ERROR for HANG/LOST.  It refuses an
 * unknown event (-EINVAL) and a vGPU removed meanwhile (-ENOENT); either
 * only loses the report, so it is logged and not retried.
 */
static void mdgpud_kern_context_event(void *priv, uint32_t event)
{
	struct mdgpud_kvgpu *k = priv;
	struct mdgpu_ctl_vgpu_event e = { .vgpu_id = k->kid, .event = event };

	if (ioctl(k->t->fd, MDGPU_CTL_VGPU_EVENT, &e))
		mdgpud_warn("vgpu %s: VGPU_EVENT %u: %s", k->uuid_str, event,
			    strerror(errno));
}

static int mdgpud_kern_dma(void *priv, uint64_t iova, void *buf, uint64_t len,
			   bool write)
{
	struct mdgpud_kvgpu *k = priv;
	struct mdgpu_ctl_dma d = {
		.vgpu_id = k->kid, .write = write ? 1 : 0, .iova = iova,
		.buf = (uintptr_t)buf, .len = len, .gen = k->gen,
	};

	if (k->desync)
		return -ESTALE;
	if (!ioctl(k->t->fd, MDGPU_CTL_DMA, &d))
		return 0;
	/* Work of an ended generation: refused, nothing transferred. */
	if (errno == ESTALE) {
		k->desync = true;
		mdgpud_kern_shadow_set(k);
		return -ESTALE;
	}
	/* Our own arguments are valid (buffer, length): EINVAL is type1's
	 * answer for an IOVA the user never mapped, which the ABI reports
	 * as -EFAULT. */
	return errno == EINVAL ? -EFAULT : -errno;
}

static const struct mdgpud_vgpu_tops mdgpud_kern_tops = {
	.sq_tail = mdgpud_kern_sq_tail,
	.sq_entry = mdgpud_kern_sq_entry,
	.cq_write = mdgpud_kern_cq_write,
	.publish = mdgpud_kern_publish,
	.arm = mdgpud_kern_arm,
	.ring_error = mdgpud_kern_ring_error,
	.lost = mdgpud_kern_lost,
	.context_event = mdgpud_kern_context_event,
	.dma = mdgpud_kern_dma,
	.knobs_owner = "sysfs",
};

/* ---------------------------------------------------------------- */
/* Events                                                           */

static struct mdgpud_kvgpu *mdgpud_kern_find(struct mdgpud_transport *t,
					     uint32_t kid)
{
	for (struct mdgpud_kvgpu *k = t->vgpus; k; k = k->next)
		if (k->kid == kid)
			return k;
	return NULL;
}

static void mdgpud_kern_free(struct mdgpud_kvgpu *k)
{
	struct mdgpud_transport *t = k->t;

	for (struct mdgpud_kvgpu **pp = &t->vgpus; *pp; pp = &(*pp)->next) {
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	}
	if (k->v)
		mdgpud_vgpu_destroy(k->v);	/* frees + scrubs memory */
	if (k->ring)
		munmap(k->ring, k->ring_len);
	if (k->ap)
		munmap(k->ap, k->ap_len);
	free(k);
}

static void *mdgpud_kern_map(struct mdgpud_transport *t, uint32_t kid,
			     unsigned int region, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd,
		       (off_t)MDGPU_CTL_MMAP_OFFSET(kid, region));

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The aperture for a backend that executes in another process (the cuda
 * worker, through map_shared): an mmap-only file of the same pages
 * (MDGPU_CTL_APERTURE_FD), never /dev/mdgpu itself, whose control ioctls a
 * sandboxed worker must not get.  The core keeps a duplicate; the sim
 * backend ignores it.  Returns the fd or -1 (logged).
 */
static int mdgpud_kern_aperture_fd(struct mdgpud_kvgpu *k)
{
	struct mdgpu_ctl_aperture_fd a = { .vgpu_id = k->kid };

	if (ioctl(k->t->fd, MDGPU_CTL_APERTURE_FD, &a)) {
		mdgpud_err("vgpu %s: APERTURE_FD: %s", k->uuid_str,
			   strerror(errno));
		return -1;
	}
	if (a.fd < 0 || a.size != k->ap_len) {
		mdgpud_err("vgpu %s: APERTURE_FD gave fd %d for %" PRIu64
			   " bytes, CREATE said %zu", k->uuid_str, a.fd,
			   (uint64_t)a.size, k->ap_len);
		if (a.fd >= 0)
			close(a.fd);
		return -1;
	}
	return a.fd;
}

static void mdgpud_kern_create(struct mdgpud_transport *t,
			       const struct mdgpu_ctl_event *ev)
{
	const struct mdgpud_config *cfg = mdgpud_core_config(t->core);
	uint32_t entries = ev->create.ring_entries;
	uint64_t ap = ev->create.aperture_size;
	struct mdgpud_vgpu_params p = { 0 };
	struct mdgpud_kvgpu *k;
	int ret;

	k = mdgpud_kern_find(t, ev->vgpu_id);
	if (k) {	/* cannot happen with one daemon per parent */
		mdgpud_warn("vgpu %s: second CREATE for kernel id %u: "
			    "re-creating", k->uuid_str, ev->vgpu_id);
		mdgpud_kern_free(k);
	}
	k = calloc(1, sizeof(*k));
	if (!k)
		return;
	k->t = t;
	k->kid = ev->vgpu_id;
	k->type_id = ev->type_id;
	memcpy(k->uuid, ev->uuid, sizeof(k->uuid));
	mdgpu_uuid_format(k->uuid, k->uuid_str);
	k->next = t->vgpus;
	t->vgpus = k;

	/* Sizes before they size mappings: a power-of-two ring the core
	 * accepts, an aperture of at most 1 GiB (the type table's limit). */
	if (entries < 2 || (entries & (entries - 1)) ||
	    entries > cfg->ring_entries_max || !ap || ap > (1ULL << 30) ||
	    (ap & 4095)) {
		mdgpud_err("vgpu %s: CREATE with ring_entries %u aperture %"
			   PRIu64 ": refused", k->uuid_str, entries, ap);
		return;
	}
	k->entries = entries;
	/* The ring with its mirror and shadow doorbell: the kernel's is
	 * of our ABI (REGISTER_GPU asked for it exactly). */
	k->ring_len = (size_t)MDGPU_RING_REGION_BYTES(entries);
	k->ap_len = (size_t)ap;
	k->ring = mdgpud_kern_map(t, k->kid, MDGPU_CTL_MMAP_RING, k->ring_len);
	if (!k->ring) {
		mdgpud_err("vgpu %s: mmap ring: %s", k->uuid_str,
			   strerror(errno));
		return;
	}
	k->shadow = (struct mdgpu_ring_shadow *)(k->ring +
				MDGPU_RING_SHADOW_OFFSET(entries));
	k->mirror = (const struct mdgpu_ring_mirror *)(k->ring +
				MDGPU_RING_MIRROR_OFFSET(entries));
	k->ap = mdgpud_kern_map(t, k->kid, MDGPU_CTL_MMAP_APERTURE, k->ap_len);
	if (!k->ap) {
		mdgpud_err("vgpu %s: mmap aperture: %s", k->uuid_str,
			   strerror(errno));
		return;
	}

	p.type_id = ev->type_id;
	p.ring_entries = entries;
	p.ring = k->ring;
	p.aperture = k->ap;
	p.aperture_size = ap;
	p.aperture_fd = mdgpud_kern_aperture_fd(k);
	if (p.aperture_fd < 0)
		return;
	p.tops = &mdgpud_kern_tops;
	p.tpriv = k;
	/* Knobs in the sysfs ranges (the kernel checks them; so do we):
	 * otherwise the type's defaults, and the KNOB path reports it. */
	if (ev->create.weight >= MDGPU_WEIGHT_MIN &&
	    ev->create.weight <= MDGPU_WEIGHT_MAX &&
	    ev->create.cap >= MDGPU_CAP_MIN && ev->create.cap <= MDGPU_CAP_MAX &&
	    ev->create.priority <= MDGPU_PRIORITY_MAX) {
		p.weight = ev->create.weight;
		p.cap_pct = ev->create.cap;
		p.priority = ev->create.priority;
	} else {
		mdgpud_warn("vgpu %s: CREATE knobs weight %u cap %u priority "
			    "%u out of range: type defaults", k->uuid_str,
			    ev->create.weight, ev->create.cap,
			    ev->create.priority);
	}
	p.uuid = k->uuid;
	ret = mdgpud_vgpu_create(t->core, &p, &k->v);
	close(p.aperture_fd);	/* the core holds its own duplicate */
	if (ret) {
		k->v = NULL;
		mdgpud_err("vgpu %s: type %u refused by the daemon: %s",
			   k->uuid_str, ev->type_id, strerror(-ret));
		return;
	}
	/* params treat 0 as "default"; sysfs priority 0 is a real value. */
	if (p.weight)
		mdgpud_vgpu_set_knobs(k->v, ev->create.weight, ev->create.cap,
				      ev->create.priority);
	mdgpud_info("vgpu %u: mdev %s (kernel id %u, type %u), weight %u "
		    "cap %u priority %u%s", mdgpud_vgpu_id(k->v), k->uuid_str,
		    k->kid, k->type_id, ev->create.weight, ev->create.cap,
		    ev->create.priority, t->replaying ? ", re-attached" : "");
}

/* A doorbell: the tail sq_tail() returns.  Events come in order, so a
 * doorbell follows the RESET or OPEN of its generation; another is not
 * ours to serve. */
static void mdgpud_kern_doorbell(struct mdgpud_kvgpu *k,
				 const struct mdgpu_ctl_event *ev)
{
	if (ev->doorbell.gen != k->gen) {
		mdgpud_warn("vgpu %s: doorbell of generation %u, serving %u: "
			    "ignored", k->uuid_str, ev->doorbell.gen, k->gen);
		return;
	}
	/* Rung before a tail the shadow gave us since: nothing new.  A
	 * ring not served (unsynced) takes it as before. */
	if (!mdgpud_kern_served(k) ||
	    mdgpud_kern_tail_ok(k, ev->doorbell.sq_tail))
		k->tail = ev->doorbell.sq_tail;
}

static void mdgpud_kern_event(struct mdgpud_transport *t,
			      const struct mdgpu_ctl_event *ev)
{
	struct mdgpud_kvgpu *k;

	if (ev->type == MDGPU_EV_POLICY) {
		if (!mdgpud_core_set_policy(t->core, ev->policy.policy,
					    ev->policy.timeslice_us))
			mdgpud_info("policy %u, timeslice %u us",
				    ev->policy.policy,
				    ev->policy.timeslice_us);
		return;
	}
	if (ev->type == MDGPU_EV_CREATE) {
		mdgpud_kern_create(t, ev);
		return;
	}
	k = mdgpud_kern_find(t, ev->vgpu_id);
	if (!k) {
		mdgpud_warn("event %u for unknown vgpu %u: ignored", ev->type,
			    ev->vgpu_id);
		return;
	}
	switch (ev->type) {
	case MDGPU_EV_REMOVE:
		mdgpud_info("vgpu %u: mdev %s removed",
			    k->v ? mdgpud_vgpu_id(k->v) : 0, k->uuid_str);
		mdgpud_kern_free(k);
		break;
	case MDGPU_EV_OPEN:
		k->open = true;
		k->gen = ev->gen.gen;
		if (t->replaying) {
			/* Open across a daemon restart: SQ_HEAD is not in
			 * CREATE, so wait for the user's reset. */
			k->unsynced = true;
			mdgpud_kern_shadow_set(k);
			mdgpud_info("vgpu %s: open across a daemon restart: "
				    "served again after the user resets it",
				    k->uuid_str);
			break;
		}
		/* The close before it reset the ring (its RESET came
		 * first): a new user, a new generation, nothing pending. */
		mdgpud_kern_ack(k);
		break;
	case MDGPU_EV_CLOSE:
		k->open = false;
		mdgpud_kern_shadow_set(k);
		break;
	case MDGPU_EV_DOORBELL:
		mdgpud_kern_doorbell(k, ev);
		break;
	case MDGPU_EV_KNOB:
		if (k->v && !mdgpud_vgpu_set_knobs(k->v, ev->knob.weight,
						   ev->knob.cap,
						   ev->knob.priority))
			mdgpud_info("vgpu %u: weight %u cap %u priority %u",
				    mdgpud_vgpu_id(k->v), ev->knob.weight,
				    ev->knob.cap, ev->knob.priority);
		break;
	case MDGPU_EV_RESET:
		if (k->v)
			mdgpud_vgpu_reset(k->v);
		k->gen = ev->gen.gen;
		k->tail = k->head = k->core_head = 0;
		k->unsynced = false;
		mdgpud_kern_ack(k);
		break;
	default:
		mdgpud_warn("vgpu %s: unknown event %u: ignored", k->uuid_str,
			    ev->type);
		break;
	}
}

static void mdgpud_kern_handle(struct mdgpud_transport *t,
			       const struct mdgpu_ctl_event *ev)
{
	if (ev->parent_id == t->parent_id)	/* else: cannot happen */
		mdgpud_kern_event(t, ev);
}

static bool mdgpud_kern_drain_events(struct mdgpud_transport *t)
{
	struct mdgpu_ctl_event evs[16];

	/* First the events a peek held back, in the order read. */
	while (t->held_next < t->held_n)
		mdgpud_kern_handle(t, &t->held[t->held_next++]);
	t->held_next = t->held_n = 0;
	for (;;) {
		ssize_t n = read(t->fd, evs, sizeof(evs));

		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		if (n == 0 || n % (ssize_t)sizeof(evs[0]))
			return false;
		for (ssize_t i = 0; i < n / (ssize_t)sizeof(evs[0]); i++)
			mdgpud_kern_handle(t, &evs[i]);
	}
}

/* Read and handle every queued event, those a peek held first; false
 * when the fd is unusable. */
static bool mdgpud_kern_drain(struct mdgpud_transport *t)
{
	bool ok;

	/* A handler that polls a ring (sq_tail()) must not peek: what it
	 * held would be handled after the events read below. */
	t->draining = true;
	ok = mdgpud_kern_drain_events(t);
	t->draining = false;
	return ok;
}

static void mdgpud_kern_ctl_event(void *data, uint32_t events)
{
	struct mdgpud_transport *t = data;

	(void)events;
	if (!mdgpud_kern_drain(t))
		mdgpud_err("%s: reading events: %s", MDGPU_CTL_DEVICE,
			   strerror(errno));
}

/* wake_efd: a peek held events (mdgpud_kern_peek()). */
static void mdgpud_kern_wake_event(void *data, uint32_t events)
{
	struct mdgpud_transport *t = data;
	uint64_t n;

	while (read(t->wake_efd, &n, sizeof(n)) == sizeof(n))
		;
	mdgpud_kern_ctl_event(data, events);
}

/*
 * Doorbells in the middle of a slice.  Without this the dispatcher learns
 * of a doorbell only when it handles events between slices, so a tenant
 * that rings again while its slice lingers (its kernels still running)
 * loses the slice and its pipeline.  Read what the kernel queued: while
 * the events are doorbells of the generation being served, take them
 * (they only move a cached tail); hold the first other event, and all
 * that follow it, for mdgpud_kern_drain(), which the core calls between
 * slices (wake_efd makes sure it is called).  Never while the kernel's
 * replay is read, nor more often than mdgpud_kern_peek_interval_ns.
 *
 * polled is the vGPU whose sq_tail() peeks.  A doorbell taken for
 * another vGPU signals wake_efd too: the caller may be the dispatcher's
 * last scan before it sleeps (dispatch.c), which may have read that
 * vGPU's tail already; the doorbell has left the control fd, so without
 * the signal nothing would wake the loop, and the tenant, which rings
 * once, would wait forever.
 */
static void mdgpud_kern_peek(struct mdgpud_transport *t,
			     const struct mdgpud_kvgpu *polled)
{
	struct mdgpu_ctl_event evs[16];
	uint64_t now, one = 1;
	bool wake = false;
	ssize_t n;

	if (t->replaying || t->draining || t->held_n || t->wake_efd < 0)
		return;
	now = mdgpud_kern_now_ns();
	if (now - t->peek_ns < mdgpud_kern_peek_interval_ns)
		return;
	t->peek_ns = now;
	n = read(t->fd, evs, sizeof(evs));
	if (n <= 0 || n % (ssize_t)sizeof(evs[0]))
		return;		/* nothing, or an error the handler reports */
	for (ssize_t i = 0; i < n / (ssize_t)sizeof(evs[0]); i++) {
		const struct mdgpu_ctl_event *ev = &evs[i];
		struct mdgpud_kvgpu *k = NULL;

		if (!t->held_n && ev->parent_id == t->parent_id &&
		    ev->type == MDGPU_EV_DOORBELL)
			k = mdgpud_kern_find(t, ev->vgpu_id);
		if (k && ev->doorbell.gen == k->gen) {
			mdgpud_kern_doorbell(k, ev);
			wake |= k != polled;
			continue;
		}
		t->held[t->held_n++] = *ev;
	}
	if ((wake || t->held_n) &&
	    write(t->wake_efd, &one, sizeof(one)) != sizeof(one))
		mdgpud_warn("%s: waking the event loop: %s", MDGPU_CTL_DEVICE,
			    strerror(errno));
}

/* ---------------------------------------------------------------- */
/* Transport lifetime                                               */

static void mdgpud_kern_destroy(struct mdgpud_transport *t)
{
	if (!t)
		return;
	while (t->vgpus)
		mdgpud_kern_free(t->vgpus);
	/* The parent stays registered: VMs keep their devices, which report
	 * BACKEND_LOST until a daemon registers the same bus_id again. */
	if (t->wake_efd >= 0) {
		mdgpud_core_unwatch(t->core, t->wake_efd);
		close(t->wake_efd);
	}
	if (t->fd >= 0) {
		mdgpud_core_unwatch(t->core, t->fd);
		close(t->fd);
	}
	free(t);
}

static int mdgpud_kern_create_transport(struct mdgpud_core *core,
					const struct mdgpud_config *cfg,
					struct mdgpud_transport **out)
{
	const struct mdgpud_gpu_info *gpu = mdgpud_core_gpu(core);
	struct mdgpu_ctl_register reg = {
		.abi_version = MDGPU_ABI_VERSION,
		.fb_size = gpu->fb_size,
		.sm_count = gpu->sm_count,
	};
	char pci[MDGPUD_PCI_ADDR_LEN];
	struct mdgpud_transport *t;
	int ret;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->core = core;
	t->wake_efd = -1;
	t->fd = open(MDGPU_CTL_DEVICE, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (t->fd < 0) {
		ret = -errno;
		mdgpud_err("open %s: %s (is mdgpu.ko loaded?)",
			   MDGPU_CTL_DEVICE, strerror(errno));
		goto err;
	}
	/* Both NUL-terminated; a longer model name is cut (printable). */
	memcpy(reg.name, gpu->name, strnlen(gpu->name, sizeof(reg.name) - 1));
	if (mdgpud_config_parent_pci(cfg, gpu->bus_id, pci)) {
		reg.flags = MDGPU_REGISTER_F_PCI;
		memcpy(reg.bus_id, pci, strnlen(pci, sizeof(reg.bus_id) - 1));
	} else {
		memcpy(reg.bus_id, gpu->bus_id,
		       strnlen(gpu->bus_id, sizeof(reg.bus_id) - 1));
	}
	if (ioctl(t->fd, MDGPU_CTL_REGISTER_GPU, &reg)) {
		ret = -errno;
		mdgpud_err("REGISTER_GPU %s%s (%s, %" PRIu64 " MiB, %u SMs): %s%s",
			   reg.flags ? "PCI device " : "", reg.bus_id, reg.name,
			   (uint64_t)reg.fb_size >> 20, reg.sm_count,
			   strerror(errno),
			   errno == EBUSY ? " (another daemon or driver serves "
					    "it)" :
			   errno == ENODEV ? " (no such PCI device; see "
					     "parent_pci)" :
			   errno == EINVAL ? " (re-attach needs the same "
					     "fb_size, sm_count and parent_pci "
					     "kind)" : "");
		goto err;
	}
	t->parent_id = reg.parent_id;
	memcpy(t->parent_name, reg.parent_name, sizeof(t->parent_name));
	t->parent_name[sizeof(t->parent_name) - 1] = '\0';
	mdgpud_info("registered %s (%s) as mdev parent %s (id %u), %u vGPUs "
		    "exist", reg.bus_id, reg.name, t->parent_name,
		    t->parent_id, reg.nr_vgpus);
	/* REGISTER queued the replay (POLICY, CREATE, OPEN) already. */
	t->replaying = true;
	if (!mdgpud_kern_drain(t)) {
		ret = -EIO;
		goto err;
	}
	t->replaying = false;
	ret = mdgpud_core_watch(core, t->fd, mdgpud_kern_ctl_event, t);
	if (ret)
		goto err;
	t->wake_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (t->wake_efd < 0) {
		ret = -errno;
		mdgpud_err("eventfd: %s", strerror(errno));
		goto err;
	}
	ret = mdgpud_core_watch(core, t->wake_efd, mdgpud_kern_wake_event, t);
	if (ret) {
		close(t->wake_efd);
		t->wake_efd = -1;
		goto err;
	}
	*out = t;
	return 0;
err:
	mdgpud_kern_destroy(t);
	return ret;
}

static const char *mdgpud_kern_mdev_parent(const struct mdgpud_transport *t)
{
	return t->parent_name;
}

const struct mdgpud_transport_ops mdgpud_transport_kernel = {
	.name = "kernel",
	.create = mdgpud_kern_create_transport,
	.destroy = mdgpud_kern_destroy,
	.mdev_parent = mdgpud_kern_mdev_parent,
};
