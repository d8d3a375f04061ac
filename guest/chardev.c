// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-guest: /dev/mdgpu-vgpuN, the user ABI of guest/include/uapi/
 * mdgpu-guest.h.  One open file per vGPU at a time: the ring has a single
 * producer, and the process that owns it owns the device.
 */
#include <linux/build_bug.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "mdgpu_guest.h"

/* The user ABI has no implicit padding: same layout for 32-bit callers. */
static_assert(sizeof(struct mdgpu_guest_info) == 96);
static_assert(sizeof(struct mdgpu_guest_submit) == 16);
static_assert(sizeof(struct mdgpu_guest_wait) == 24);

/*
 * Zap the user mappings of the BARs before they go away; a later access
 * faults with SIGBUS.  Caller holds @lock.
 */
void mdgpu_gdev_revoke(struct mdgpu_gdev *gd)
{
	lockdep_assert_held(&gd->lock);
	if (gd->filp)
		unmap_mapping_range(gd->filp->f_mapping, 0, 0, 1);
}

static int mdgpu_gdev_open(struct inode *inode, struct file *filp)
{
	struct miscdevice *misc = filp->private_data;
	struct mdgpu_gdev *gd = container_of(misc, struct mdgpu_gdev, misc);
	int ret = 0;

	/* misc_open() holds misc_mtx: remove cannot free @gd under us. */
	mutex_lock(&gd->lock);
	if (test_bit(MDGPU_GDEV_REMOVED, &gd->flags)) {
		ret = -ENODEV;
	} else if (gd->filp) {
		ret = -EBUSY;
	} else {
		gd->filp = filp;
		kref_get(&gd->ref);	/* pairs with the put in release */
	}
	mutex_unlock(&gd->lock);
	if (ret)
		return ret;
	filp->private_data = gd;
	return stream_open(inode, filp);
}

static int mdgpu_gdev_release_file(struct inode *inode, struct file *filp)
{
	struct mdgpu_gdev *gd = filp->private_data;

	mutex_lock(&gd->lock);
	gd->filp = NULL;
	mutex_unlock(&gd->lock);
	mdgpu_gdev_put(gd);
	return 0;
}

static int mdgpu_gdev_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct mdgpu_gdev *gd = filp->private_data;
	unsigned long size = vma->vm_end - vma->vm_start;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	resource_size_t base, len;
	pgprot_t prot;
	int ret;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (off >= MDGPU_GUEST_MMAP_APERTURE) {
		off -= MDGPU_GUEST_MMAP_APERTURE;
		base = gd->aper_phys;
		len = gd->aper_size;
		prot = pgprot_writecombine(vma->vm_page_prot);
	} else {
		base = gd->ring_phys;
		len = gd->ring_size;
		prot = pgprot_noncached(vma->vm_page_prot);
	}
	if (off > len || size > len - off)
		return -EINVAL;

	mutex_lock(&gd->lock);
	if (test_bit(MDGPU_GDEV_REMOVED, &gd->flags))
		ret = -ENODEV;
	else
		ret = io_remap_pfn_range(vma, vma->vm_start,
					 (base + off) >> PAGE_SHIFT, size, prot);
	mutex_unlock(&gd->lock);
	return ret;
}

static long mdgpu_gdev_get_info(struct mdgpu_gdev *gd, void __user *arg)
{
	struct mdgpu_guest_info info = {};
	u64 retired;
	u32 status;
	int ret;

	mutex_lock(&gd->lock);
	ret = mdgpu_gdev_sync(gd, &retired, &status);
	if (ret)
		goto out_unlock;
	info.abi_version = gd->abi_version;
	info.ring_entries = gd->ring_entries;
	info.ring_size = gd->ring_size;
	info.aperture_size = gd->aper_size;
	info.fb_quota = mdgpu_gdev_read(gd, MDGPU_REG_FB_QUOTA_LO) |
			(u64)mdgpu_gdev_read(gd, MDGPU_REG_FB_QUOTA_HI) << 32;
	info.fb_used = mdgpu_gdev_read(gd, MDGPU_REG_FB_USED_LO) |
		       (u64)mdgpu_gdev_read(gd, MDGPU_REG_FB_USED_HI) << 32;
	info.status = status;
	info.irq_mode = gd->irq_mode;
	info.irq_count = atomic64_read(&gd->irq_count);
	info.completed = retired;
	info.submitted = gd->submitted;
	info.sq_head = mdgpu_gdev_read(gd, MDGPU_REG_SQ_HEAD);
	info.sq_tail = gd->sq_tail;
	info.sm_count = mdgpu_gdev_read(gd, MDGPU_REG_SM_COUNT);
	info.type_id = mdgpu_gdev_read(gd, MDGPU_REG_TYPE_ID);
	info.last_error = mdgpu_gdev_read(gd, MDGPU_REG_ERROR);
	info.resets = gd->resets;
out_unlock:
	mutex_unlock(&gd->lock);
	if (ret)
		return ret;
	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

/*
 * The shadow doorbell (ABI 1.13, struct mdgpu_ring_shadow): publish @tail
 * there, then a full barrier, then look whether the daemon polls it.  True
 * when it does: it reads the new tail by itself, no BAR0 write (no VM
 * exit) is needed.  False (no shadow, or the daemon may be asleep): ring
 * SQ_TAIL.  The daemon clears daemon_polling, then a full barrier, then
 * reads sq_tail before it sleeps, so either it sees this tail or this
 * sees 0.  Caller holds @lock.
 */
static bool mdgpu_gdev_shadow_doorbell(struct mdgpu_gdev *gd, u32 tail)
{
	lockdep_assert_held(&gd->lock);
	if (!gd->shadow)
		return false;
	writel(tail, gd->shadow + offsetof(struct mdgpu_ring_shadow, sq_tail));
	/* Store-load order against the daemon's, see above. */
	mb();
	return readl(gd->shadow +
		     offsetof(struct mdgpu_ring_shadow, daemon_polling)) != 0;
}

/*
 * Ring the doorbell for the commands in [sq_tail, tail).  The device checks
 * the tail too; this check gives the user a clear error instead of a
 * RING_ERROR that only a reset clears.  Caller holds @lock.
 */
static int mdgpu_gdev_submit_locked(struct mdgpu_gdev *gd, u32 tail)
{
	u32 delta, status, err;
	u64 retired;
	int ret;

	lockdep_assert_held(&gd->lock);
	ret = mdgpu_gdev_sync(gd, &retired, &status);
	if (ret)
		return ret;
	if (status & MDGPU_STATUS_BACKEND_LOST)
		return -ENODEV;
	if (status & MDGPU_STATUS_RING_ERROR)
		return -EIO;
	/* After the sync: a reset it found has moved sq_tail back to 0. */
	delta = tail - gd->sq_tail;
	if (!delta)
		return 0;
	if (delta > gd->ring_entries)
		return -EINVAL;
	if (gd->submitted + delta - retired > gd->ring_entries)
		return -ENOSPC;

	if (mdgpu_gdev_shadow_doorbell(gd, tail)) {
		atomic64_inc(&gd->doorbells_shadow);
	} else {
		mdgpu_gdev_write(gd, MDGPU_REG_SQ_TAIL, tail);
		if (mdgpu_gdev_read(gd, MDGPU_REG_SQ_TAIL) != tail) {
			err = mdgpu_gdev_read(gd, MDGPU_REG_ERROR);
			return err && err < MAX_ERRNO ? -(int)err : -EIO;
		}
		atomic64_inc(&gd->doorbells_bar0);
	}
	gd->sq_tail = tail;
	gd->submitted += delta;
	return 0;
}

static long mdgpu_gdev_submit(struct mdgpu_gdev *gd, void __user *arg)
{
	struct mdgpu_guest_submit sub;
	int ret;

	if (copy_from_user(&sub, arg, sizeof(sub)))
		return -EFAULT;
	if (sub.flags)
		return -EINVAL;
	mutex_lock(&gd->lock);
	ret = mdgpu_gdev_submit_locked(gd, sub.tail);
	sub.fence = gd->submitted;
	mutex_unlock(&gd->lock);
	if (ret)
		return ret;
	return copy_to_user(arg, &sub, sizeof(sub)) ? -EFAULT : 0;
}

/*
 * 0 when @fence completed; -ECANCELED when a reset dropped it; -ENODEV,
 * -EIO when it never will; -EAGAIN to keep waiting.  Caller holds @lock.
 */
static int mdgpu_gdev_fence_state(struct mdgpu_gdev *gd, u64 fence,
				  u64 *retired)
{
	u32 status;
	int ret;

	lockdep_assert_held(&gd->lock);
	ret = mdgpu_gdev_sync(gd, retired, &status);
	if (ret)
		return ret;
	if (fence <= *retired)
		return fence > gd->canceled_from && fence <= gd->epoch_base ?
		       -ECANCELED : 0;
	if (status & MDGPU_STATUS_BACKEND_LOST)
		return -ENODEV;
	if (status & MDGPU_STATUS_RING_ERROR)
		return -EIO;
	return -EAGAIN;
}

/* WAIT_FENCE's state: a fence never submitted is -EINVAL. */
static int mdgpu_gdev_wait_state(struct mdgpu_gdev *gd, u64 fence,
				 u64 *retired)
{
	lockdep_assert_held(&gd->lock);
	if (fence > gd->submitted)
		return -EINVAL;
	return mdgpu_gdev_fence_state(gd, fence, retired);
}

/*
 * 0 once the device has no reset pending (the host dropped the work of
 * before it, and answered with an interrupt), -EAGAIN while it has;
 * -ENODEV when it is gone.  @fence is unused.  Caller holds @lock.
 */
static int mdgpu_gdev_reset_state(struct mdgpu_gdev *gd, u64 fence,
				  u64 *retired)
{
	u32 status;
	int ret;

	lockdep_assert_held(&gd->lock);
	ret = mdgpu_gdev_sync(gd, retired, &status);
	if (ret)
		return ret;
	return status & MDGPU_STATUS_RESET_PENDING ? -EAGAIN : 0;
}

/*
 * Sleep until @state (called with @lock held) stops answering -EAGAIN, at
 * most @timeout jiffies (0: just test; then -ETIMEDOUT), interruptibly
 * (-EINTR).  Returns what @state answered last; *retired as it left it.
 */
static int mdgpu_gdev_sleep(struct mdgpu_gdev *gd,
			    int (*state)(struct mdgpu_gdev *, u64, u64 *),
			    u64 fence, u64 *retired, long timeout)
{
	long left;
	int events, ret;

	for (;;) {
		/* Sample before checking so no wake-up can be missed. */
		events = atomic_read(&gd->events);
		mutex_lock(&gd->lock);
		ret = state(gd, fence, retired);
		mutex_unlock(&gd->lock);
		if (ret != -EAGAIN)
			return ret;
		if (!timeout)
			return -ETIMEDOUT;
		left = wait_event_interruptible_timeout(gd->wq,
							atomic_read(&gd->events) != events,
							timeout);
		if (left < 0)
			return -EINTR;
		timeout = left;
	}
}

static long mdgpu_gdev_wait_fence(struct mdgpu_gdev *gd, void __user *arg)
{
	struct mdgpu_guest_wait wait;
	u64 retired = 0;
	long timeout;
	int ret;

	if (copy_from_user(&wait, arg, sizeof(wait)))
		return -EFAULT;
	if (wait.flags & ~MDGPU_GUEST_WAIT_RESET)
		return -EINVAL;
	timeout = msecs_to_jiffies(wait.timeout_ms);
	if (wait.flags & MDGPU_GUEST_WAIT_RESET) {
		if (wait.fence)
			return -EINVAL;
		ret = mdgpu_gdev_sleep(gd, mdgpu_gdev_reset_state, 0, &retired,
				       timeout);
	} else {
		ret = mdgpu_gdev_sleep(gd, mdgpu_gdev_wait_state, wait.fence,
				       &retired, timeout);
	}

	wait.completed = retired;
	if (copy_to_user(arg, &wait, sizeof(wait)))
		return -EFAULT;
	return ret;
}

/*
 * RESET: the device reset (under @lock), then, without the lock, the wait
 * until the host has taken it up (at most reset_timeout_ms).  The user
 * writes the ring and the aperture only after this returns 0.
 */
static long mdgpu_gdev_reset_ioctl(struct mdgpu_gdev *gd)
{
	u64 retired;
	int ret;

	mutex_lock(&gd->lock);
	ret = mdgpu_gdev_reset(gd);
	mutex_unlock(&gd->lock);
	if (ret)
		return ret;
	return mdgpu_gdev_sleep(gd, mdgpu_gdev_reset_state, 0, &retired,
				msecs_to_jiffies(mdgpu_gdev_reset_timeout_ms));
}

static long mdgpu_gdev_ioctl(struct file *filp, unsigned int cmd,
			     unsigned long arg)
{
	struct mdgpu_gdev *gd = filp->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case MDGPU_GUEST_GET_INFO:
		return mdgpu_gdev_get_info(gd, uarg);
	case MDGPU_GUEST_SUBMIT:
		return mdgpu_gdev_submit(gd, uarg);
	case MDGPU_GUEST_WAIT_FENCE:
		return mdgpu_gdev_wait_fence(gd, uarg);
	case MDGPU_GUEST_RESET:
		return mdgpu_gdev_reset_ioctl(gd);
	default:
		return -ENOTTY;
	}
}

const struct file_operations mdgpu_gdev_fops = {
	.owner = THIS_MODULE,
	.open = mdgpu_gdev_open,
	.release = mdgpu_gdev_release_file,
	.mmap = mdgpu_gdev_mmap,
	.unlocked_ioctl = mdgpu_gdev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};
