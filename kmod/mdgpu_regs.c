// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_regs.c - BAR0: the trapped register file of a vGPU.
 *
 * One table row per register says how the guest may access it (RO, RW or
 * RW1C), which bits a write keeps, and which handler gives a write its side
 * effect.  mdgpu_regs_access() is the single entry point and the single
 * place where a guest-supplied offset and size are validated.
 */
#include <linux/device.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/string.h>

#include "mdgpu.h"

enum mdgpu_reg_access {
	MDGPU_REG_RO,		/* writes are ignored and counted */
	MDGPU_REG_RW,		/* value & wmask is stored, then .write */
	MDGPU_REG_RW1C,		/* bits written as 1 are cleared, then .write */
};

struct mdgpu_reg_desc {
	const char *name;
	enum mdgpu_reg_access access;
	u32 wmask;
	/* Side effect, called with vgpu->lock held after the store. */
	void (*write)(struct mdgpu_vgpu *vgpu, u32 old, u32 val);
};

static void mdgpu_reg_control(struct mdgpu_vgpu *vgpu, u32 old, u32 val);
static void mdgpu_reg_irq_mask(struct mdgpu_vgpu *vgpu, u32 old, u32 val);
static void mdgpu_reg_sq_tail(struct mdgpu_vgpu *vgpu, u32 old, u32 val);

static const struct mdgpu_reg_desc mdgpu_reg_table[MDGPU_NR_REGS] = {
	[MDGPU_REG(MDGPU_REG_MAGIC)] = { "MAGIC", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_VERSION)] = { "VERSION", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_STATUS)] = { "STATUS", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_CONTROL)] = {
		"CONTROL", MDGPU_REG_RW, MDGPU_CONTROL_ENABLE,
		mdgpu_reg_control,
	},
	[MDGPU_REG(MDGPU_REG_RING_ENTRIES)] = { "RING_ENTRIES", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_IRQ_STATUS)] = {
		"IRQ_STATUS", MDGPU_REG_RW1C, MDGPU_IRQ_ALL, NULL,
	},
	[MDGPU_REG(MDGPU_REG_IRQ_MASK)] = {
		"IRQ_MASK", MDGPU_REG_RW, MDGPU_IRQ_ALL, mdgpu_reg_irq_mask,
	},
	/* The doorbell stores SQ_TAIL itself, after checking it. */
	[MDGPU_REG(MDGPU_REG_SQ_TAIL)] = {
		"SQ_TAIL", MDGPU_REG_RW, 0, mdgpu_reg_sq_tail,
	},
	[MDGPU_REG(MDGPU_REG_SQ_HEAD)] = { "SQ_HEAD", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_ERROR)] = { "ERROR", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_FENCE_LO)] = { "FENCE_LO", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_FENCE_HI)] = { "FENCE_HI", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_FB_QUOTA_LO)] = { "FB_QUOTA_LO", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_FB_QUOTA_HI)] = { "FB_QUOTA_HI", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_FB_USED_LO)] = { "FB_USED_LO", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_FB_USED_HI)] = { "FB_USED_HI", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_APERTURE_SIZE)] = { "APERTURE_SIZE", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_TYPE_ID)] = { "TYPE_ID", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_WEIGHT)] = { "WEIGHT", MDGPU_REG_RO },
	[MDGPU_REG(MDGPU_REG_SCRATCH)] = {
		"SCRATCH", MDGPU_REG_RW, 0xffffffff, NULL,
	},
	[MDGPU_REG(MDGPU_REG_SM_COUNT)] = { "SM_COUNT", MDGPU_REG_RO },
};

static inline u32 *mdgpu_reg(struct mdgpu_vgpu *vgpu, u32 off)
{
	return &vgpu->regs[MDGPU_REG(off)];
}

/*
 * __mdgpu_regs_mirror() - copy the polled registers into the ring's
 * mirror (struct mdgpu_ring_mirror, ABI 1.11), status last: a reader
 * that reads status and then the rest sees the rest at least as new.
 * Called at the end of every change of the registers, before the lock
 * that covered it is dropped; mdgpu_regs_init() calls it before the vGPU
 * is published.
 */
static void __mdgpu_regs_mirror(struct mdgpu_vgpu *vgpu)
{
	struct mdgpu_ring_mirror *m = vgpu->ring->vaddr +
		MDGPU_RING_MIRROR_OFFSET(vgpu->ring_entries);

	WRITE_ONCE(m->fence, (u64)*mdgpu_reg(vgpu, MDGPU_REG_FENCE_HI) << 32 |
		   *mdgpu_reg(vgpu, MDGPU_REG_FENCE_LO));
	WRITE_ONCE(m->sq_head, *mdgpu_reg(vgpu, MDGPU_REG_SQ_HEAD));
	WRITE_ONCE(m->sq_tail, *mdgpu_reg(vgpu, MDGPU_REG_SQ_TAIL));
	WRITE_ONCE(m->error, *mdgpu_reg(vgpu, MDGPU_REG_ERROR));
	WRITE_ONCE(m->irq_status, *mdgpu_reg(vgpu, MDGPU_REG_IRQ_STATUS));
	WRITE_ONCE(m->reserved, 0);
	/* Pairs with the reader's read barrier between status and the rest. */
	smp_wmb();
	WRITE_ONCE(m->status, *mdgpu_reg(vgpu, MDGPU_REG_STATUS));
}

/* The mirror after a change of the registers.  Caller must hold vgpu->lock. */
void mdgpu_regs_mirror(struct mdgpu_vgpu *vgpu)
{
	lockdep_assert_held(&vgpu->lock);

	__mdgpu_regs_mirror(vgpu);
}

static void mdgpu_reg_set64(struct mdgpu_vgpu *vgpu, u32 lo, u64 val)
{
	*mdgpu_reg(vgpu, lo) = lower_32_bits(val);
	*mdgpu_reg(vgpu, lo + 4) = upper_32_bits(val);
}

/* Registers that never change after creation. */
void mdgpu_regs_init(struct mdgpu_vgpu *vgpu)
{
	memset(vgpu->regs, 0, sizeof(vgpu->regs));
	*mdgpu_reg(vgpu, MDGPU_REG_MAGIC) = MDGPU_MAGIC;
	*mdgpu_reg(vgpu, MDGPU_REG_VERSION) = MDGPU_ABI_VERSION;
	*mdgpu_reg(vgpu, MDGPU_REG_RING_ENTRIES) = vgpu->ring_entries;
	mdgpu_reg_set64(vgpu, MDGPU_REG_FB_QUOTA_LO, vgpu->fb_quota);
	*mdgpu_reg(vgpu, MDGPU_REG_APERTURE_SIZE) = vgpu->aperture_size;
	*mdgpu_reg(vgpu, MDGPU_REG_TYPE_ID) = vgpu->type->id;
	*mdgpu_reg(vgpu, MDGPU_REG_WEIGHT) = vgpu->weight;
	*mdgpu_reg(vgpu, MDGPU_REG_SM_COUNT) = vgpu->parent->sm_count;
	__mdgpu_regs_mirror(vgpu);
}

/*
 * mdgpu_regs_reset() - the device-reset state of the guest-writable and
 * progress registers.  STATUS keeps READY and BACKEND_LOST, which describe
 * the daemon, not the device, and CONTEXT_LOST: only the daemon knows when
 * the reset has given the vGPU a new GPU context, and says so with
 * MDGPU_VGPU_EVENT_RESTORED.  While a daemon serves the vGPU (READY) it
 * gains RESET_PENDING, until the daemon's first COMPLETE of the new
 * generation.  Caller must hold vgpu->lock.
 */
void mdgpu_regs_reset(struct mdgpu_vgpu *vgpu)
{
	u32 *status = mdgpu_reg(vgpu, MDGPU_REG_STATUS);

	lockdep_assert_held(&vgpu->lock);

	*status &= MDGPU_STATUS_READY | MDGPU_STATUS_BACKEND_LOST |
		   MDGPU_STATUS_CONTEXT_LOST;
	if (*status & MDGPU_STATUS_READY)
		*status |= MDGPU_STATUS_RESET_PENDING;
	*mdgpu_reg(vgpu, MDGPU_REG_CONTROL) = 0;
	*mdgpu_reg(vgpu, MDGPU_REG_IRQ_STATUS) = 0;
	*mdgpu_reg(vgpu, MDGPU_REG_IRQ_MASK) = 0;
	*mdgpu_reg(vgpu, MDGPU_REG_SQ_TAIL) = 0;
	*mdgpu_reg(vgpu, MDGPU_REG_SQ_HEAD) = 0;
	*mdgpu_reg(vgpu, MDGPU_REG_ERROR) = 0;
	mdgpu_reg_set64(vgpu, MDGPU_REG_FENCE_LO, 0);
	mdgpu_reg_set64(vgpu, MDGPU_REG_FB_USED_LO, 0);
	*mdgpu_reg(vgpu, MDGPU_REG_SCRATCH) = 0;
	mdgpu_regs_mirror(vgpu);
}

/*
 * The shadow doorbell's tail (ABI 1.13) back to SQ_TAIL, when the device
 * is enabled: a tail stored while it was disabled (by a thread of the
 * VFIO user that had not seen a reset yet) must not be served once it is
 * enabled again, as a BAR0 doorbell rung then was refused (EPERM).  The
 * daemon takes the shadow only while the mirror shows ENABLED, which the
 * caller's mirror update writes after this store.  Caller must hold
 * vgpu->lock.
 */
static void mdgpu_regs_shadow_enable(struct mdgpu_vgpu *vgpu)
{
	lockdep_assert_held(&vgpu->lock);

	WRITE_ONCE(mdgpu_vgpu_shadow(vgpu)->sq_tail,
		   *mdgpu_reg(vgpu, MDGPU_REG_SQ_TAIL));
}

static void mdgpu_reg_control(struct mdgpu_vgpu *vgpu, u32 old, u32 val)
{
	u32 *status = mdgpu_reg(vgpu, MDGPU_REG_STATUS);
	bool was_enabled = old & MDGPU_CONTROL_ENABLE;

	if (val & MDGPU_CONTROL_RESET) {
		mdgpu_vgpu_reset(vgpu);
		/* ENABLE written together with RESET applies after it. */
		*mdgpu_reg(vgpu, MDGPU_REG_CONTROL) =
			val & MDGPU_CONTROL_ENABLE;
		was_enabled = false;
	}
	if (val & MDGPU_CONTROL_ENABLE) {
		if (!was_enabled)
			mdgpu_regs_shadow_enable(vgpu);
		*status |= MDGPU_STATUS_ENABLED;
	} else {
		*status &= ~MDGPU_STATUS_ENABLED;
	}
}

static void mdgpu_reg_irq_mask(struct mdgpu_vgpu *vgpu, u32 old, u32 val)
{
	u32 pending = *mdgpu_reg(vgpu, MDGPU_REG_IRQ_STATUS);

	/* Unmasking a pending cause interrupts, as on real hardware. */
	if (pending & val & ~old)
		mdgpu_irq_raise(vgpu, pending & val & ~old);
}

/* A doorbell error: ERROR = @err, RING_ERROR status, optional IRQ_ERROR. */
static void mdgpu_reg_ring_error(struct mdgpu_vgpu *vgpu, u32 err, bool irq)
{
	*mdgpu_reg(vgpu, MDGPU_REG_ERROR) = err;
	*mdgpu_reg(vgpu, MDGPU_REG_STATUS) |= MDGPU_STATUS_RING_ERROR;
	vgpu->stats.bad_accesses++;
	if (irq)
		mdgpu_irq_raise(vgpu, MDGPU_IRQ_ERROR);
}

/*
 * The doorbell.  @val is the guest's new free-running tail; it may move
 * forward only, and by at most ring_entries past SQ_HEAD (mod 2^32).
 */
static void mdgpu_reg_sq_tail(struct mdgpu_vgpu *vgpu, u32 old, u32 val)
{
	u32 head = *mdgpu_reg(vgpu, MDGPU_REG_SQ_HEAD);
	u32 tail = *mdgpu_reg(vgpu, MDGPU_REG_SQ_TAIL);
	u32 status = *mdgpu_reg(vgpu, MDGPU_REG_STATUS);

	if (!(*mdgpu_reg(vgpu, MDGPU_REG_CONTROL) & MDGPU_CONTROL_ENABLE)) {
		*mdgpu_reg(vgpu, MDGPU_REG_ERROR) = EPERM;
		vgpu->stats.bad_accesses++;
		return;
	}
	/* Lost, or idle: no daemon has served this vGPU yet. */
	if (!(status & MDGPU_STATUS_READY)) {
		mdgpu_reg_ring_error(vgpu, ENODEV, false);
		return;
	}
	if (val - head > vgpu->ring_entries || val - head < tail - head) {
		mdgpu_reg_ring_error(vgpu, EINVAL, true);
		return;
	}
	*mdgpu_reg(vgpu, MDGPU_REG_SQ_TAIL) = val;
	vgpu->stats.doorbells++;
	mdgpu_vgpu_post(vgpu, MDGPU_EV_DOORBELL);
}

/*
 * mdgpu_regs_access() - one guest access to BAR0.
 *
 * Only aligned 4-byte accesses inside the 4 KiB BAR (else -EINVAL).
 * Offsets past MDGPU_REG_LAST read 0 and ignore writes.  Every rejected or
 * ignored access is counted in stats.bad_accesses.  Caller must hold
 * vgpu->lock.
 */
int mdgpu_regs_access(struct mdgpu_vgpu *vgpu, u64 off, size_t size,
		      u32 *val, bool write)
{
	const struct mdgpu_reg_desc *desc;
	u32 *reg, old;

	lockdep_assert_held(&vgpu->lock);

	if (write)
		vgpu->stats.bar0_writes++;
	else
		vgpu->stats.bar0_reads++;
	if (size != 4 || (off & 3) || off >= MDGPU_REGS_SIZE ||
	    size > MDGPU_REGS_SIZE - off) {
		vgpu->stats.bad_accesses++;
		return -EINVAL;
	}
	if (off > MDGPU_REG_LAST) {
		if (write)
			vgpu->stats.bad_accesses++;
		else
			*val = 0;
		return 0;
	}

	desc = &mdgpu_reg_table[MDGPU_REG(off)];
	reg = mdgpu_reg(vgpu, off);
	if (!write) {
		*val = *reg;
		return 0;
	}

	old = *reg;
	switch (desc->access) {
	case MDGPU_REG_RO:
		vgpu->stats.bad_accesses++;
		dev_dbg_ratelimited(vgpu->vdev.dev,
				    "guest wrote read-only register %s\n",
				    desc->name);
		return 0;
	case MDGPU_REG_RW:
		*reg = (old & ~desc->wmask) | (*val & desc->wmask);
		break;
	case MDGPU_REG_RW1C:
		*reg = old & ~(*val & desc->wmask);
		break;
	}
	if (desc->write)
		desc->write(vgpu, old, *val);
	mdgpu_regs_mirror(vgpu);
	return 0;
}

/* A reset the daemon has not taken up yet.  Caller must hold vgpu->lock. */
bool mdgpu_regs_reset_pending(struct mdgpu_vgpu *vgpu)
{
	lockdep_assert_held(&vgpu->lock);

	return *mdgpu_reg(vgpu, MDGPU_REG_STATUS) & MDGPU_STATUS_RESET_PENDING;
}

/*
 * __mdgpu_regs_complete() - apply a COMPLETE whose SQ_TAIL is @tail: the
 * register's value, or (COMPLETE_TAIL) the shadow tail the daemon took,
 * already checked by mdgpu_regs_shadow_tail().  @c is daemon-supplied:
 * gen must be the vGPU's generation (else -ESTALE: work of a ring that
 * was reset since, whose head means nothing in the new ring); sq_head
 * must lie in [SQ_HEAD, @tail] (mod 2^32) and irq within MDGPU_IRQ_ALL
 * (else -EINVAL).  A refused COMPLETE changes nothing.  An accepted one
 * stores @tail (a shadow doorbell when it moved), ends a pending reset
 * if @dma_idle (the caller holds open_sem for writing: no DMA is in
 * flight) and then raises IRQ_COMPLETION too, for a VFIO user waiting
 * for the reset to complete.  Caller must hold vgpu->lock.
 */
static int __mdgpu_regs_complete(struct mdgpu_vgpu *vgpu,
				 const struct mdgpu_ctl_complete *c, u32 tail,
				 bool dma_idle)
{
	u32 *sq_tail = mdgpu_reg(vgpu, MDGPU_REG_SQ_TAIL);
	u32 head = *mdgpu_reg(vgpu, MDGPU_REG_SQ_HEAD);
	u32 irq = c->irq;

	lockdep_assert_held(&vgpu->lock);

	if ((c->irq & ~MDGPU_IRQ_ALL) || c->sq_head - head > tail - head)
		return -EINVAL;

	if (tail != *sq_tail) {
		*sq_tail = tail;
		vgpu->stats.shadow_doorbells++;
	}
	*mdgpu_reg(vgpu, MDGPU_REG_SQ_HEAD) = c->sq_head;
	mdgpu_reg_set64(vgpu, MDGPU_REG_FENCE_LO, c->fence);
	mdgpu_reg_set64(vgpu, MDGPU_REG_FB_USED_LO, c->fb_used);
	vgpu->stats.completions++;
	if (dma_idle && mdgpu_regs_reset_pending(vgpu)) {
		*mdgpu_reg(vgpu, MDGPU_REG_STATUS) &=
			~MDGPU_STATUS_RESET_PENDING;
		irq |= MDGPU_IRQ_COMPLETION;
	}
	if (irq)
		mdgpu_irq_raise(vgpu, irq);
	mdgpu_regs_mirror(vgpu);
	return 0;
}

/*
 * mdgpu_regs_complete() - the daemon reports progress (MDGPU_CTL_COMPLETE)
 * on the commands up to SQ_TAIL, the last doorbell rung in BAR0.  See
 * __mdgpu_regs_complete().  Caller must hold vgpu->lock.
 */
int mdgpu_regs_complete(struct mdgpu_vgpu *vgpu,
			const struct mdgpu_ctl_complete *c, bool dma_idle)
{
	lockdep_assert_held(&vgpu->lock);

	if (c->gen != vgpu->gen)
		return -ESTALE;
	return __mdgpu_regs_complete(vgpu, c,
				     *mdgpu_reg(vgpu, MDGPU_REG_SQ_TAIL),
				     dma_idle);
}

/*
 * mdgpu_regs_shadow_tail() - the SQ_TAIL that COMPLETE_TAIL's @val, a
 * tail the daemon read from the shadow doorbell (ABI 1.13), makes, in
 * *@out.  The VFIO user wrote @val, so it is checked as the BAR0
 * doorbell checks a tail (mdgpu_reg_sq_tail()): at most ring_entries past
 * SQ_HEAD (mod 2^32), and, to move SQ_TAIL forward, CONTROL.ENABLE and
 * STATUS.READY set.  A tail in [SQ_HEAD, SQ_TAIL] keeps SQ_TAIL: a
 * doorbell rung in BAR0 after the daemon read the shadow has moved it on
 * already, and refusing would fail a daemon that did nothing wrong.
 * -EINVAL for anything else.  Caller must hold vgpu->lock.
 */
static int mdgpu_regs_shadow_tail(struct mdgpu_vgpu *vgpu, u32 val, u32 *out)
{
	u32 head = *mdgpu_reg(vgpu, MDGPU_REG_SQ_HEAD);
	u32 tail = *mdgpu_reg(vgpu, MDGPU_REG_SQ_TAIL);
	u32 status = *mdgpu_reg(vgpu, MDGPU_REG_STATUS);

	lockdep_assert_held(&vgpu->lock);

	if (val - head > vgpu->ring_entries)
		return -EINVAL;
	if (val - head <= tail - head) {
		*out = tail;
		return 0;
	}
	if (!(*mdgpu_reg(vgpu, MDGPU_REG_CONTROL) & MDGPU_CONTROL_ENABLE) ||
	    !(status & MDGPU_STATUS_READY))
		return -EINVAL;
	*out = val;
	return 0;
}

/*
 * mdgpu_regs_complete_tail() - MDGPU_CTL_COMPLETE_TAIL (ABI 1.13): the
 * daemon took commands up to @ct->sq_tail from the shadow doorbell, which
 * becomes SQ_TAIL if it is valid and ahead (mdgpu_regs_shadow_tail()),
 * then @ct->c is applied as a COMPLETE against that tail; either both or
 * nothing.  -ESTALE for another generation, -EINVAL for flags, a refused
 * tail or a refused COMPLETE.  Caller must hold vgpu->lock.
 */
int mdgpu_regs_complete_tail(struct mdgpu_vgpu *vgpu,
			     const struct mdgpu_ctl_complete_tail *ct,
			     bool dma_idle)
{
	u32 tail;
	int ret;

	lockdep_assert_held(&vgpu->lock);

	if (ct->c.gen != vgpu->gen)
		return -ESTALE;
	if (ct->flags)
		return -EINVAL;
	ret = mdgpu_regs_shadow_tail(vgpu, ct->sq_tail, &tail);
	if (ret)
		return ret;
	return __mdgpu_regs_complete(vgpu, &ct->c, tail, dma_idle);
}
