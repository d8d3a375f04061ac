// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_dma.c - the daemon reads and writes guest memory by IOVA.
 *
 * vfio_dma_rw() accesses the VFIO user's (QEMU's) memory through the
 * container's IOVA mappings.  The type1 IOMMU backend only does so from
 * the process that mapped the IOVA or from a kernel thread (it borrows the
 * user's mm with kthread_use_mm()); the daemon is neither, so each chunk
 * runs as a work item on an unbound workqueue while the ioctl waits.
 * Guest memory goes through a kernel bounce buffer of at most
 * MDGPU_DMA_CHUNK bytes.
 */
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vfio.h>
#include <linux/workqueue.h>

#include "mdgpu.h"

#define MDGPU_DMA_CHUNK		SZ_1M

struct mdgpu_dma_work {
	struct work_struct work;
	struct vfio_device *vdev;
	u64 iova;
	void *buf;
	size_t len;
	bool write;
	int ret;
};

static void mdgpu_dma_work_fn(struct work_struct *work)
{
	struct mdgpu_dma_work *w = container_of(work, struct mdgpu_dma_work,
						work);

	w->ret = vfio_dma_rw(w->vdev, w->iova, w->buf, w->len, w->write);
}

/* One chunk of guest memory <-> @buf, in a kernel thread. */
static int mdgpu_dma_chunk(struct mdgpu_vgpu *vgpu, u64 iova, void *buf,
			   size_t len, bool write)
{
	struct mdgpu_dma_work w = {
		.vdev = &vgpu->vdev,
		.iova = iova,
		.buf = buf,
		.len = len,
		.write = write,
	};

	INIT_WORK_ONSTACK(&w.work, mdgpu_dma_work_fn);
	queue_work(system_unbound_wq, &w.work);
	flush_work(&w.work);
	destroy_work_on_stack(&w.work);
	return w.ret;
}

/* The one validator of MDGPU_CTL_DMA input; 0 or a negative errno. */
static int mdgpu_dma_check(const struct mdgpu_ctl_dma *req)
{
	u64 end;

	if (req->write > 1 || !req->len || req->reserved)
		return -EINVAL;
	if (req->len > MDGPU_DMA_MAX)
		return -E2BIG;
	if (check_add_overflow(req->iova, req->len, &end) ||
	    check_add_overflow(req->buf, req->len, &end))
		return -EOVERFLOW;
	return 0;
}

/* Is @gen still @vgpu's generation?  Takes vgpu->lock. */
static bool mdgpu_dma_gen_ok(struct mdgpu_vgpu *vgpu, u32 gen)
{
	bool ok;

	mutex_lock(&vgpu->lock);
	ok = gen == vgpu->gen;
	mutex_unlock(&vgpu->lock);
	return ok;
}

/*
 * mdgpu_dma_rw() - MDGPU_CTL_DMA on a pinned vGPU.
 *
 * The vGPU must be open by a VFIO user (-ENODEV); the open state is held
 * for reading throughout, so close_device waits for the transfer.  Each
 * chunk starts only while req->gen is the vGPU's generation (else
 * -ESTALE: the device was reset or reopened since the work was queued).
 * A reset during a chunk lets that chunk finish; the COMPLETE that ends
 * the reset waits for it (mdgpu_ctl.c).  An IOVA the guest did not map
 * fails with whatever vfio_dma_rw() returns (-EFAULT or -EINVAL); the
 * transfer stops at the first failing chunk.
 */
int mdgpu_dma_rw(struct mdgpu_vgpu *vgpu, const struct mdgpu_ctl_dma *req)
{
	void __user *ubuf = u64_to_user_ptr(req->buf);
	bool write = req->write;
	size_t chunk, done = 0;
	void *bounce;
	int ret;

	ret = mdgpu_dma_check(req);
	if (ret)
		return ret;

	bounce = kvmalloc(min_t(u64, req->len, MDGPU_DMA_CHUNK), GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;

	down_read(&vgpu->open_sem);
	if (!vgpu->open) {
		ret = -ENODEV;
		goto out;
	}
	while (done < req->len) {
		chunk = min_t(u64, req->len - done, MDGPU_DMA_CHUNK);
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (!mdgpu_dma_gen_ok(vgpu, req->gen)) {
			ret = -ESTALE;
			break;
		}
		if (write && copy_from_user(bounce, ubuf + done, chunk)) {
			ret = -EFAULT;
			break;
		}
		ret = mdgpu_dma_chunk(vgpu, req->iova + done, bounce, chunk,
				      write);
		if (ret)
			break;
		if (!write && copy_to_user(ubuf + done, bounce, chunk)) {
			ret = -EFAULT;
			break;
		}
		done += chunk;
	}
	mutex_lock(&vgpu->lock);
	vgpu->stats.dma_bytes += done;
	mutex_unlock(&vgpu->lock);
out:
	up_read(&vgpu->open_sem);
	kvfree(bounce);
	return ret;
}
