// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_ctl.c - /dev/mdgpu, the control channel to the daemon.
 *
 * ioctl: register/unregister GPUs, report completions (with a tail taken
 * from the shadow doorbell, COMPLETE_TAIL), DMA, report a
 * vGPU's GPU context lost or restored, hand out a vGPU's aperture as an
 * mmap-only file for its worker.  read/poll:
 * events.  mmap: a vGPU's ring or aperture.  Every number the daemon passes
 * is checked here or in the one function this file hands it to.
 *
 * Events: each parent has an owner file; events about the parent and its
 * vGPUs go to that file's queue.  Events of one kind about one vGPU share
 * a slot embedded in the vGPU (only REMOVE is allocated, before the vGPU
 * goes away), so a daemon that stops reading cannot make the kernel queue
 * more than (kinds x vGPUs) events.
 */
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "mdgpu.h"

DEFINE_SPINLOCK(mdgpu_ev_lock);

void mdgpu_event_init(struct mdgpu_event *e)
{
	INIT_LIST_HEAD(&e->node);
	e->dynamic = false;
}

/*
 * mdgpu_event_post() - queue @e, with payload @ev, to @parent's owner.
 *
 * An event already queued gets the new payload and moves to the tail.
 * With no owner the event is dropped (a dynamic one freed): the daemon
 * that registers next learns the state from CREATE events.
 */
void mdgpu_event_post(struct mdgpu_parent *parent, struct mdgpu_event *e,
		      const struct mdgpu_ctl_event *ev)
{
	struct mdgpu_ctl_file *file;

	spin_lock(&mdgpu_ev_lock);
	file = parent->owner;
	if (!file) {
		spin_unlock(&mdgpu_ev_lock);
		if (e->dynamic)
			kfree(e);
		return;
	}
	e->ev = *ev;
	list_move_tail(&e->node, &file->events);
	/* Under the lock: release clears owner under it before freeing. */
	wake_up_interruptible(&file->wait);
	spin_unlock(&mdgpu_ev_lock);
}

/* Take an embedded event off whatever queue it is on. */
void mdgpu_event_cancel(struct mdgpu_event *e)
{
	spin_lock(&mdgpu_ev_lock);
	list_del_init(&e->node);
	spin_unlock(&mdgpu_ev_lock);
}

bool mdgpu_parent_owned_by(struct mdgpu_parent *parent,
			   struct mdgpu_ctl_file *file)
{
	bool owned;

	spin_lock(&mdgpu_ev_lock);
	owned = parent->owner == file;
	spin_unlock(&mdgpu_ev_lock);
	return owned;
}

/* Pop the oldest event of @file into @out; false if there is none. */
static bool mdgpu_ctl_pop(struct mdgpu_ctl_file *file,
			  struct mdgpu_ctl_event *out)
{
	struct mdgpu_event *e;
	bool dynamic;

	spin_lock(&mdgpu_ev_lock);
	e = list_first_entry_or_null(&file->events, struct mdgpu_event, node);
	if (!e) {
		spin_unlock(&mdgpu_ev_lock);
		return false;
	}
	*out = e->ev;
	list_del_init(&e->node);
	dynamic = e->dynamic;
	spin_unlock(&mdgpu_ev_lock);
	if (dynamic)
		kfree(e);
	return true;
}

static bool mdgpu_ctl_has_events(struct mdgpu_ctl_file *file)
{
	bool ret;

	spin_lock(&mdgpu_ev_lock);
	ret = !list_empty(&file->events);
	spin_unlock(&mdgpu_ev_lock);
	return ret;
}

/*
 * The control channel reaches every vGPU's guest memory (DMA) and rings:
 * opening it takes CAP_SYS_ADMIN, whatever the file mode says.
 */
static int mdgpu_ctl_open(struct inode *inode, struct file *filp)
{
	struct mdgpu_ctl_file *file;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	file = kzalloc(sizeof(*file), GFP_KERNEL);
	if (!file)
		return -ENOMEM;
	INIT_LIST_HEAD(&file->events);
	init_waitqueue_head(&file->wait);
	filp->private_data = file;
	return stream_open(inode, filp);
}

static int mdgpu_ctl_release(struct inode *inode, struct file *filp)
{
	struct mdgpu_ctl_file *file = filp->private_data;
	struct mdgpu_event *e, *tmp;

	/* After this no event can be queued to @file any more. */
	mdgpu_parent_owner_lost(file);

	spin_lock(&mdgpu_ev_lock);
	list_for_each_entry_safe(e, tmp, &file->events, node) {
		list_del_init(&e->node);
		if (e->dynamic)
			kfree(e);
	}
	spin_unlock(&mdgpu_ev_lock);
	kfree(file);
	return 0;
}

static ssize_t mdgpu_ctl_read(struct file *filp, char __user *buf,
			      size_t count, loff_t *ppos)
{
	struct mdgpu_ctl_file *file = filp->private_data;
	struct mdgpu_ctl_event ev;
	size_t done = 0;
	int ret;

	if (count < sizeof(ev))
		return -EINVAL;

	while (count - done >= sizeof(ev)) {
		if (!mdgpu_ctl_pop(file, &ev)) {
			if (done)
				break;
			if (filp->f_flags & O_NONBLOCK)
				return -EAGAIN;
			ret = wait_event_interruptible(file->wait,
						       mdgpu_ctl_has_events(file));
			if (ret)
				return ret;
			continue;
		}
		/* A popped event that cannot be delivered is lost. */
		if (copy_to_user(buf + done, &ev, sizeof(ev)))
			return done ? done : -EFAULT;
		done += sizeof(ev);
	}
	return done;
}

static __poll_t mdgpu_ctl_poll(struct file *filp, poll_table *wait)
{
	struct mdgpu_ctl_file *file = filp->private_data;

	poll_wait(filp, &file->wait, wait);
	return mdgpu_ctl_has_events(file) ? EPOLLIN | EPOLLRDNORM : 0;
}

/* Pin vGPU @id if its parent is owned by @file; NULL (-ENOENT) if not. */
static struct mdgpu_vgpu *mdgpu_ctl_vgpu_get(struct mdgpu_ctl_file *file,
					     u32 id)
{
	struct mdgpu_vgpu *vgpu = mdgpu_vgpu_get(id);

	if (vgpu && !mdgpu_parent_owned_by(vgpu->parent, file)) {
		mdgpu_vgpu_put(vgpu);
		return NULL;
	}
	return vgpu;
}

static long mdgpu_ctl_register(struct mdgpu_ctl_file *file, void __user *arg)
{
	struct mdgpu_ctl_register req;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = mdgpu_parent_register(file, &req);
	if (ret)
		return ret;
	/*
	 * The parent exists now whatever happens to the copy; a daemon that
	 * passed a bad buffer can still find it through sysfs.
	 */
	return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : 0;
}

static long mdgpu_ctl_unregister(struct mdgpu_ctl_file *file,
				 void __user *arg)
{
	struct mdgpu_ctl_unregister req;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;
	return mdgpu_parent_unregister(file, req.parent_id);
}

/*
 * COMPLETE and (ABI 1.13) COMPLETE_TAIL, @ct->c alone for COMPLETE
 * (@with_tail false).  The one that ends a reset (RESET_PENDING) first
 * waits, holding open_sem for writing, for DMA still in flight: once the
 * reset is complete, no transfer the daemon started for an older
 * generation can land in guest memory.
 */
static long mdgpu_ctl_do_complete(struct mdgpu_ctl_file *file,
				  const struct mdgpu_ctl_complete_tail *ct,
				  bool with_tail)
{
	struct mdgpu_vgpu *vgpu;
	bool dma_idle = false;
	int ret;

	vgpu = mdgpu_ctl_vgpu_get(file, ct->c.vgpu_id);
	if (!vgpu)
		return -ENOENT;
	mutex_lock(&vgpu->lock);
	if (mdgpu_regs_reset_pending(vgpu) && ct->c.gen == vgpu->gen) {
		mutex_unlock(&vgpu->lock);
		down_write(&vgpu->open_sem);
		mutex_lock(&vgpu->lock);
		dma_idle = true;
	}
	if (with_tail)
		ret = mdgpu_regs_complete_tail(vgpu, ct, dma_idle);
	else
		ret = mdgpu_regs_complete(vgpu, &ct->c, dma_idle);
	mutex_unlock(&vgpu->lock);
	if (dma_idle)
		up_write(&vgpu->open_sem);
	mdgpu_vgpu_put(vgpu);
	return ret;
}

static long mdgpu_ctl_complete(struct mdgpu_ctl_file *file, void __user *arg)
{
	struct mdgpu_ctl_complete_tail ct = {};

	if (copy_from_user(&ct.c, arg, sizeof(ct.c)))
		return -EFAULT;
	return mdgpu_ctl_do_complete(file, &ct, false);
}

/*
 * COMPLETE_TAIL: a COMPLETE for work the daemon took from the shadow
 * doorbell, whose tail the kernel checks and takes as SQ_TAIL first
 * (mdgpu_regs_complete_tail()).
 */
static long mdgpu_ctl_complete_tail(struct mdgpu_ctl_file *file,
				    void __user *arg)
{
	struct mdgpu_ctl_complete_tail ct;

	if (copy_from_user(&ct, arg, sizeof(ct)))
		return -EFAULT;
	return mdgpu_ctl_do_complete(file, &ct, true);
}

static long mdgpu_ctl_dma(struct mdgpu_ctl_file *file, void __user *arg)
{
	struct mdgpu_ctl_dma req;
	struct mdgpu_vgpu *vgpu;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	vgpu = mdgpu_ctl_vgpu_get(file, req.vgpu_id);
	if (!vgpu)
		return -ENOENT;
	ret = mdgpu_dma_rw(vgpu, &req);
	mdgpu_vgpu_put(vgpu);
	return ret;
}

static long mdgpu_ctl_vgpu_event(struct mdgpu_ctl_file *file,
				 void __user *arg)
{
	struct mdgpu_ctl_vgpu_event req;
	struct mdgpu_vgpu *vgpu;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.reserved[0] || req.reserved[1])
		return -EINVAL;
	vgpu = mdgpu_ctl_vgpu_get(file, req.vgpu_id);
	if (!vgpu)
		return -ENOENT;
	mutex_lock(&vgpu->lock);
	ret = mdgpu_vgpu_context_event(vgpu, req.event);
	mutex_unlock(&vgpu->lock);
	mdgpu_vgpu_put(vgpu);
	return ret;
}

/*
 * APERTURE_FD: an mmap-only file of the vGPU's aperture for its worker
 * (mdgpu_mem_file()).  The fd is reserved and the file made before the
 * answer is copied out, and installed only after that copy succeeded, so
 * a bad buffer leaves no fd behind.  The ctl reference on the vGPU keeps
 * vgpu->aperture alive for the call; the file takes its own reference.
 */
static long mdgpu_ctl_aperture_fd(struct mdgpu_ctl_file *file,
				  void __user *arg)
{
	struct mdgpu_ctl_aperture_fd req;
	struct mdgpu_vgpu *vgpu;
	struct file *mfile;
	int fd, ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.reserved)
		return -EINVAL;
	vgpu = mdgpu_ctl_vgpu_get(file, req.vgpu_id);
	if (!vgpu)
		return -ENOENT;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_put_vgpu;
	}
	mfile = mdgpu_mem_file(vgpu->aperture, "[mdgpu-aperture]");
	if (IS_ERR(mfile)) {
		ret = PTR_ERR(mfile);
		goto err_put_fd;
	}
	req.fd = fd;
	req.size = vgpu->aperture->size;
	if (copy_to_user(arg, &req, sizeof(req))) {
		ret = -EFAULT;
		goto err_put_file;
	}
	fd_install(fd, mfile);
	mdgpu_vgpu_put(vgpu);
	return 0;

err_put_file:
	fput(mfile);
err_put_fd:
	put_unused_fd(fd);
err_put_vgpu:
	mdgpu_vgpu_put(vgpu);
	return ret;
}

static long mdgpu_ctl_ioctl(struct file *filp, unsigned int cmd,
			    unsigned long arg)
{
	struct mdgpu_ctl_file *file = filp->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case MDGPU_CTL_REGISTER_GPU:
		return mdgpu_ctl_register(file, uarg);
	case MDGPU_CTL_UNREGISTER_GPU:
		return mdgpu_ctl_unregister(file, uarg);
	case MDGPU_CTL_COMPLETE:
		return mdgpu_ctl_complete(file, uarg);
	case MDGPU_CTL_DMA:
		return mdgpu_ctl_dma(file, uarg);
	case MDGPU_CTL_VGPU_EVENT:
		return mdgpu_ctl_vgpu_event(file, uarg);
	case MDGPU_CTL_APERTURE_FD:
		return mdgpu_ctl_aperture_fd(file, uarg);
	case MDGPU_CTL_COMPLETE_TAIL:
		return mdgpu_ctl_complete_tail(file, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * mmap at MDGPU_CTL_MMAP_OFFSET(vgpu_id, region) + page offset: the same
 * pages the guest sees in BAR2 (ring) or BAR4 (aperture).
 */
static int mdgpu_ctl_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct mdgpu_ctl_file *file = filp->private_data;
	struct mdgpu_vgpu *vgpu;
	struct mdgpu_mem *mem;
	u64 pos, off;
	u32 region;
	int ret;

	if (vma->vm_pgoff > (U64_MAX >> PAGE_SHIFT))
		return -EINVAL;
	pos = (u64)vma->vm_pgoff << PAGE_SHIFT;
	region = MDGPU_CTL_MMAP_REGION(pos);
	off = MDGPU_CTL_MMAP_POS(pos);
	if (region != MDGPU_CTL_MMAP_RING && region != MDGPU_CTL_MMAP_APERTURE)
		return -EINVAL;

	vgpu = mdgpu_ctl_vgpu_get(file, MDGPU_CTL_MMAP_VGPU(pos));
	if (!vgpu)
		return -ENOENT;
	mem = region == MDGPU_CTL_MMAP_RING ? vgpu->ring : vgpu->aperture;
	ret = mdgpu_mem_mmap(mem, vma, off);
	mdgpu_vgpu_put(vgpu);
	return ret;
}

static const struct file_operations mdgpu_ctl_fops = {
	.owner = THIS_MODULE,
	.open = mdgpu_ctl_open,
	.release = mdgpu_ctl_release,
	.read = mdgpu_ctl_read,
	.poll = mdgpu_ctl_poll,
	.unlocked_ioctl = mdgpu_ctl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = mdgpu_ctl_mmap,
};

static struct miscdevice mdgpu_ctl_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "mdgpu",
	.fops = &mdgpu_ctl_fops,
	.mode = 0600,
};

int mdgpu_ctl_init(void)
{
	return misc_register(&mdgpu_ctl_misc);
}

void mdgpu_ctl_exit(void)
{
	misc_deregister(&mdgpu_ctl_misc);
}
