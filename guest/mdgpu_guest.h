/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mdgpu-guest: driver for the mdgpu vGPU PCI device inside a virtual machine.
 *
 * Trust: the device is emulated by the host (mdgpu.ko and mdgpud), which may
 * be buggy or hostile.  Every value read from a BAR is untrusted.  The driver
 * never dereferences the ring itself (userspace reads and writes it through
 * its mapping), so device values are only ever compared, never used as
 * indices or sizes, except the ring and aperture sizes, which are checked
 * against the BAR lengths at probe.
 */
#ifndef MDGPU_GUEST_H
#define MDGPU_GUEST_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/wait.h>

#include "mdgpu.h"
#include "mdgpu-guest.h"

#define MDGPU_GUEST_NAME		"mdgpu-guest"
/* Largest ring the driver accepts from RING_ENTRIES (2^16 commands). */
#define MDGPU_GUEST_RING_ENTRIES_MAX	BIT(16)

/* struct mdgpu_gdev.flags bits */
enum mdgpu_gdev_flag {
	MDGPU_GDEV_REMOVED,		/* PCI device gone: BARs unmapped */
};

/*
 * One vGPU (one PCI function).
 *
 * Lifetime: allocated at probe with one reference, dropped at remove; the
 * open file holds another (taken in open under misc_mtx, which
 * misc_deregister() also takes, so open cannot race with remove).
 *
 * Locking:
 *  - @lock (mutex) serialises every BAR0 access made outside the interrupt
 *    handler and protects the submission state (@sq_tail, @submitted,
 *    @fence_base, @dev_fence, @canceled_upto, @resets), @filp and the
 *    REMOVED transition.  Whoever holds it and sees REMOVED clear may touch
 *    the BARs: remove sets REMOVED under @lock before freeing the IRQ and
 *    unmapping.
 *  - the interrupt handler takes no lock: under INTx it reads and clears
 *    IRQ_STATUS (write-1-to-clear, so it cannot lose bits set by the
 *    device concurrently), under MSI it touches no register; it updates
 *    atomics and flag bits, and wakes @wq.
 *    Waiters recheck the device under @lock.
 */
struct mdgpu_gdev {
	struct kref ref;
	struct pci_dev *pdev;
	void __iomem *regs;		/* BAR0 */
	void __iomem *mirror;		/* BAR2's register mirror, or NULL */
	void __iomem *shadow;		/* BAR2's shadow doorbell, or NULL */
	atomic64_t bar0_reads;		/* trapped accesses made */
	atomic64_t bar0_writes;
	atomic64_t doorbells_shadow;	/* submissions the daemon polled */
	atomic64_t doorbells_bar0;	/* submissions rung in SQ_TAIL */
	resource_size_t ring_phys;	/* BAR2 */
	resource_size_t ring_size;
	resource_size_t aper_phys;	/* BAR4 */
	resource_size_t aper_size;
	u32 abi_version;
	u32 ring_entries;
	int index;			/* N of /dev/mdgpu-vgpuN */
	char name[32];
	struct miscdevice misc;
	int irq;
	u32 irq_mode;			/* MDGPU_GUEST_IRQ_* */

	unsigned long flags;		/* enum mdgpu_gdev_flag bits */
	atomic64_t irq_count;
	atomic_t events;		/* bumped on every wake-worthy event */
	wait_queue_head_t wq;

	struct mutex lock;		/* see the locking rules above */
	struct file *filp;		/* the one open file, or NULL */
	/*
	 * Fences: command number n (1-based, counted since probe) has fence
	 * n.  The device counts completions from 0 at each reset (an epoch);
	 * fence = @epoch_base + device FENCE.  At a reset the commands in
	 * (@canceled_from, @epoch_base] were lost.
	 */
	u32 sq_tail;			/* last tail written to SQ_TAIL */
	u64 submitted;			/* fence of the last submitted command */
	u64 epoch_base;			/* @submitted at the last reset */
	u64 canceled_from;		/* fence retired at the last reset */
	u64 dev_fence;			/* device FENCE last read this epoch */
	u32 resets;
};

/* main.c */
extern unsigned int mdgpu_gdev_reset_timeout_ms;
u32 mdgpu_gdev_read(struct mdgpu_gdev *gd, u32 reg);
void mdgpu_gdev_write(struct mdgpu_gdev *gd, u32 reg, u32 val);
void mdgpu_gdev_put(struct mdgpu_gdev *gd);
int mdgpu_gdev_start(struct mdgpu_gdev *gd);
int mdgpu_gdev_reset(struct mdgpu_gdev *gd);
int mdgpu_gdev_sync(struct mdgpu_gdev *gd, u64 *retired, u32 *status);

/* irq.c */
int mdgpu_gdev_irq_init(struct mdgpu_gdev *gd);
void mdgpu_gdev_irq_fini(struct mdgpu_gdev *gd);
void mdgpu_gdev_kick(struct mdgpu_gdev *gd);

/* chardev.c */
extern const struct file_operations mdgpu_gdev_fops;
void mdgpu_gdev_revoke(struct mdgpu_gdev *gd);

#endif /* MDGPU_GUEST_H */
