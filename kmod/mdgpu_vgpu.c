// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_vgpu.c - a vGPU: the mdev driver and its vfio_device_ops.
 *
 * Life of a vGPU (one mdev):
 *   .probe   vfio_alloc_device() -> .init (memory, id, quota), then
 *            vfio_register_emulated_iommu_dev(), then publish (visible to
 *            the control channel, CREATE event)
 *   .remove  vfio_unregister_group_dev() (waits until the VFIO user closed
 *            the device), unpublish (REMOVE event), vfio_put_device()
 *   .release the last reference is gone: return the quota, free memory
 *
 * The VFIO file offset of region i starts at i << MDGPU_VFIO_OFFSET_SHIFT,
 * as vfio-pci does, so QEMU's vfio-pci drives the device unchanged.
 */
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/mdev.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vfio.h>

#include "mdgpu.h"
#include "mdgpu_compat.h"

#define MDGPU_VFIO_OFFSET_SHIFT		40
#define MDGPU_VFIO_OFFSET_MASK		((1ULL << MDGPU_VFIO_OFFSET_SHIFT) - 1)
/* vGPU ids fit in the 24 bits MDGPU_CTL_MMAP_OFFSET() leaves them. */
#define MDGPU_VGPU_ID_MAX		((1U << (64 - MDGPU_CTL_MMAP_VGPU_SHIFT)) - 1)

/* id -> vGPU; NULL (reserved) from .init until published, after unpublish */
static DEFINE_XARRAY_ALLOC1(mdgpu_vgpus);
static u32 mdgpu_vgpu_next_id;

static struct mdgpu_vgpu *mdgpu_vgpu_of(struct vfio_device *vdev)
{
	return container_of(vdev, struct mdgpu_vgpu, vdev);
}

/*
 * mdgpu_vgpu_get() - pin the published vGPU with control-channel id @id.
 *
 * Returns NULL if there is none.  The vGPU stays usable (not unpublished,
 * not freed) until mdgpu_vgpu_put(); .remove waits for that.
 */
struct mdgpu_vgpu *mdgpu_vgpu_get(u32 id)
{
	struct mdgpu_vgpu *vgpu;

	xa_lock(&mdgpu_vgpus);
	vgpu = xa_load(&mdgpu_vgpus, id);
	if (vgpu && !refcount_inc_not_zero(&vgpu->ctl_refs))
		vgpu = NULL;
	xa_unlock(&mdgpu_vgpus);
	return vgpu;
}

/* Pairs with mdgpu_vgpu_get() and with the reference publish sets. */
void mdgpu_vgpu_put(struct mdgpu_vgpu *vgpu)
{
	if (refcount_dec_and_test(&vgpu->ctl_refs))
		complete(&vgpu->ctl_done);
}

/*
 * The mdev core keeps the UUID as a guid_t (guid_parse(): the first three
 * fields little-endian).  Events carry it in RFC 4122 order, byte i being
 * the i-th byte of the string form, as libuuid's uuid_parse() gives it.
 */
static void mdgpu_vgpu_uuid(struct mdgpu_vgpu *vgpu, u8 out[16])
{
	static const u8 guid_byte[16] = {
		3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15
	};
	unsigned int i;

	for (i = 0; i < 16; i++)
		out[i] = vgpu->mdev->uuid.b[guid_byte[i]];
}

/*
 * mdgpu_vgpu_post() - queue event @type about @vgpu to the owning daemon.
 *
 * Each kind has one slot per vGPU: posting a kind that is still pending
 * replaces its payload and moves it to the tail.  Caller must hold
 * vgpu->lock (the payload reads the vGPU's state).
 */
void mdgpu_vgpu_post(struct mdgpu_vgpu *vgpu, u32 type)
{
	struct mdgpu_ctl_event ev = {};

	lockdep_assert_held(&vgpu->lock);

	ev.type = type;
	ev.parent_id = vgpu->parent->id;
	ev.vgpu_id = vgpu->id;
	ev.type_id = vgpu->type->id;
	mdgpu_vgpu_uuid(vgpu, ev.uuid);
	switch (type) {
	case MDGPU_EV_CREATE:
		ev.create.fb_quota = vgpu->fb_quota;
		ev.create.aperture_size = vgpu->aperture_size;
		ev.create.ring_entries = vgpu->ring_entries;
		ev.create.weight = vgpu->weight;
		ev.create.cap = vgpu->cap;
		ev.create.priority = vgpu->priority;
		break;
	case MDGPU_EV_DOORBELL:
		ev.doorbell.sq_tail = mdgpu_reg_read(vgpu, MDGPU_REG_SQ_TAIL);
		ev.doorbell.gen = vgpu->gen;
		break;
	case MDGPU_EV_RESET:
	case MDGPU_EV_OPEN:
		ev.gen.gen = vgpu->gen;
		break;
	case MDGPU_EV_KNOB:
		ev.knob.weight = vgpu->weight;
		ev.knob.cap = vgpu->cap;
		ev.knob.priority = vgpu->priority;
		break;
	default:
		break;
	}
	mdgpu_event_post(vgpu->parent, &vgpu->ev[type], &ev);
}

/*
 * mdgpu_vgpu_reset() - device reset (VFIO_DEVICE_RESET, CONTROL.RESET,
 * close): a new generation (the daemon's COMPLETE and DMA of the old one
 * are refused from now on), registers to defaults with RESET_PENDING while
 * a daemon serves the vGPU, ring (but its register mirror, which shows the
 * registers' new values) and aperture zeroed, a pending doorbell
 * dropped, RESET queued with the new generation.  The zeroed ring
 * includes the shadow doorbell (ABI 1.13): its tail starts again at 0
 * and daemon_polling 0 makes the VFIO user ring BAR0 until the daemon,
 * polling the new generation, sets it again.  Caller must hold
 * vgpu->lock.
 */
void mdgpu_vgpu_reset(struct mdgpu_vgpu *vgpu)
{
	u64 mirror = MDGPU_RING_MIRROR_OFFSET(vgpu->ring_entries);
	u64 after = mirror + MDGPU_RING_MIRROR_SIZE;

	lockdep_assert_held(&vgpu->lock);

	vgpu->gen++;
	mdgpu_regs_reset(vgpu);
	/*
	 * The ring but the register mirror, which mdgpu_regs_reset() has
	 * just written: a VFIO user polling it never reads a zeroed STATUS
	 * (READY clear would look like a lost daemon).  [after, size)
	 * holds the shadow doorbell.
	 */
	memset(vgpu->ring->vaddr, 0, mirror);
	memset(vgpu->ring->vaddr + after, 0, vgpu->ring->size - after);
	memset(vgpu->aperture->vaddr, 0, vgpu->aperture->size);
	vgpu->stats.resets++;
	mdgpu_event_cancel(&vgpu->ev[MDGPU_EV_DOORBELL]);
	mdgpu_vgpu_post(vgpu, MDGPU_EV_RESET);
}

/*
 * The daemon is gone.  A reset it had not taken up is complete: no work
 * of an older generation can come from a closed file.  Its daemon_polling
 * in the shadow doorbell is cleared: nobody polls the shadow's tail now,
 * so the VFIO user rings BAR0 again, which reports the lost daemon.
 * Caller must hold vgpu->lock.
 */
void mdgpu_vgpu_backend_lost(struct mdgpu_vgpu *vgpu)
{
	lockdep_assert_held(&vgpu->lock);

	WRITE_ONCE(mdgpu_vgpu_shadow(vgpu)->daemon_polling, 0);
	mdgpu_reg_update(vgpu, MDGPU_REG_STATUS,
			 MDGPU_STATUS_READY | MDGPU_STATUS_RESET_PENDING,
			 MDGPU_STATUS_BACKEND_LOST);
	mdgpu_irq_raise(vgpu, MDGPU_IRQ_BACKEND_LOST);
}

/*
 * A daemon (re-)attached: tell it about @vgpu.  It creates the vGPU afresh,
 * with a new GPU context, so a CONTEXT_LOST the previous daemon reported
 * no longer holds.  Caller holds vgpu->lock.
 */
void mdgpu_vgpu_backend_back(struct mdgpu_vgpu *vgpu)
{
	lockdep_assert_held(&vgpu->lock);

	mdgpu_reg_update(vgpu, MDGPU_REG_STATUS,
			 MDGPU_STATUS_BACKEND_LOST | MDGPU_STATUS_CONTEXT_LOST,
			 MDGPU_STATUS_READY);
	mdgpu_vgpu_post(vgpu, MDGPU_EV_CREATE);
	if (vgpu->open)
		mdgpu_vgpu_post(vgpu, MDGPU_EV_OPEN);
}

/*
 * mdgpu_vgpu_context_event() - the daemon reports an event of @vgpu's GPU
 * context (MDGPU_CTL_VGPU_EVENT).  HANG and LOST set STATUS.CONTEXT_LOST,
 * count in the stats and raise IRQ_ERROR; RESTORED clears CONTEXT_LOST.
 * Each event is applied as it comes, also when the bit already has that
 * value.  @event is daemon-supplied: -EINVAL for any other value.  Caller
 * must hold vgpu->lock.
 */
int mdgpu_vgpu_context_event(struct mdgpu_vgpu *vgpu, u32 event)
{
	lockdep_assert_held(&vgpu->lock);

	switch (event) {
	case MDGPU_VGPU_EVENT_HANG:
		vgpu->stats.hangs++;
		break;
	case MDGPU_VGPU_EVENT_LOST:
		vgpu->stats.contexts_lost++;
		break;
	case MDGPU_VGPU_EVENT_RESTORED:
		mdgpu_reg_update(vgpu, MDGPU_REG_STATUS,
				 MDGPU_STATUS_CONTEXT_LOST, 0);
		return 0;
	default:
		return -EINVAL;
	}
	mdgpu_reg_update(vgpu, MDGPU_REG_STATUS, 0, MDGPU_STATUS_CONTEXT_LOST);
	mdgpu_irq_raise(vgpu, MDGPU_IRQ_ERROR);
	return 0;
}

/* ---- vfio_device_ops ---------------------------------------------------- */

static int mdgpu_vfio_init(struct vfio_device *vdev)
{
	struct mdgpu_vgpu *vgpu = mdgpu_vgpu_of(vdev);
	struct mdev_device *mdev = to_mdev_device(vdev->dev);
	struct mdgpu_parent *parent = mdgpu_parent_of_mtype(mdev->type);
	const struct mdgpu_type_info *info =
		container_of(mdev->type, struct mdgpu_type, mtype)->info;
	unsigned int i;
	int ret;

	vgpu->mdev = mdev;
	vgpu->parent = parent;
	vgpu->type = info;
	INIT_LIST_HEAD(&vgpu->node);
	init_rwsem(&vgpu->open_sem);
	mutex_init(&vgpu->lock);
	for (i = 0; i < MDGPU_EV_SLOTS; i++)
		mdgpu_event_init(&vgpu->ev[i]);

	vgpu->ring_entries = MDGPU_RING_ENTRIES_DEFAULT;
	/* Queues, mirror and shadow doorbell, in a power-of-two BAR2. */
	vgpu->ring_size = MDGPU_RING_REGION_BYTES(vgpu->ring_entries);
	vgpu->ring_size = max_t(u32, PAGE_SIZE,
				roundup_pow_of_two(vgpu->ring_size));
	vgpu->aperture_size = info->aperture_mib << 20;
	vgpu->fb_quota = mdgpu_type_fb_quota(info, parent->fb_size);
	vgpu->weight = info->default_weight;
	vgpu->cap = MDGPU_CAP_MAX;
	vgpu->priority = MDGPU_PRIORITY_DEFAULT;

	vgpu->remove_ev = kzalloc(sizeof(*vgpu->remove_ev), GFP_KERNEL);
	if (!vgpu->remove_ev) {
		ret = -ENOMEM;
		goto err_destroy;
	}
	mdgpu_event_init(vgpu->remove_ev);
	vgpu->remove_ev->dynamic = true;

	vgpu->ring = mdgpu_mem_alloc(vgpu->ring_size);
	if (!vgpu->ring) {
		ret = -ENOMEM;
		goto err_free_remove_ev;
	}
	vgpu->aperture = mdgpu_mem_alloc(vgpu->aperture_size);
	if (!vgpu->aperture) {
		ret = -ENOMEM;
		goto err_put_ring;
	}

	/* Reserve an id; the entry stays NULL until the vGPU is published. */
	ret = xa_alloc_cyclic(&mdgpu_vgpus, &vgpu->id, NULL,
			      XA_LIMIT(1, MDGPU_VGPU_ID_MAX),
			      &mdgpu_vgpu_next_id, GFP_KERNEL);
	if (ret < 0)
		goto err_put_aperture;

	mdgpu_cfg_init(vgpu);
	mdgpu_regs_init(vgpu);

	ret = mdgpu_parent_attach_vgpu(parent, vgpu);
	if (ret)
		goto err_erase_id;
	return 0;

err_erase_id:
	xa_erase(&mdgpu_vgpus, vgpu->id);
err_put_aperture:
	mdgpu_mem_put(vgpu->aperture);
err_put_ring:
	mdgpu_mem_put(vgpu->ring);
err_free_remove_ev:
	kfree(vgpu->remove_ev);
err_destroy:
	mutex_destroy(&vgpu->lock);
	return ret;
}

/* Pairs with .init; runs when the last vfio_device reference is put. */
static void mdgpu_vfio_release(struct vfio_device *vdev)
{
	struct mdgpu_vgpu *vgpu = mdgpu_vgpu_of(vdev);
	unsigned int i;

	for (i = 0; i < MDGPU_EV_SLOTS; i++)
		mdgpu_event_cancel(&vgpu->ev[i]);
	/* Pairs with the get in mdgpu_parent_attach_vgpu(). */
	mdgpu_parent_detach_vgpu(vgpu->parent, vgpu);
	xa_erase(&mdgpu_vgpus, vgpu->id);
	mdgpu_mem_put(vgpu->aperture);
	mdgpu_mem_put(vgpu->ring);
	kfree(vgpu->remove_ev);
	mutex_destroy(&vgpu->lock);
	mdgpu_vfio_release_free(vdev);
}

/*
 * A new VFIO user: a new generation, so that work the daemon still does
 * for the previous user (whose close reset the device) can reach neither
 * this user's ring nor its memory.
 */
static int mdgpu_vfio_open_device(struct vfio_device *vdev)
{
	struct mdgpu_vgpu *vgpu = mdgpu_vgpu_of(vdev);

	down_write(&vgpu->open_sem);
	mutex_lock(&vgpu->lock);
	vgpu->open = true;
	vgpu->gen++;
	mdgpu_vgpu_post(vgpu, MDGPU_EV_OPEN);
	mutex_unlock(&vgpu->lock);
	up_write(&vgpu->open_sem);
	return 0;
}

/*
 * Waits for DMA in flight (open_sem), then drops the eventfds, resets the
 * device (RESET event) and restores config space for the next user.
 */
static void mdgpu_vfio_close_device(struct vfio_device *vdev)
{
	struct mdgpu_vgpu *vgpu = mdgpu_vgpu_of(vdev);

	down_write(&vgpu->open_sem);
	mutex_lock(&vgpu->lock);
	vgpu->open = false;
	mdgpu_irq_release(vgpu);
	mdgpu_vgpu_reset(vgpu);
	mdgpu_cfg_init(vgpu);
	mdgpu_vgpu_post(vgpu, MDGPU_EV_CLOSE);
	mutex_unlock(&vgpu->lock);
	up_write(&vgpu->open_sem);
}

static u64 mdgpu_region_size(struct mdgpu_vgpu *vgpu, u32 index)
{
	switch (index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
		return MDGPU_CONFIG_SIZE;
	case VFIO_PCI_BAR0_REGION_INDEX + MDGPU_BAR_REGS:
		return MDGPU_REGS_SIZE;
	case VFIO_PCI_BAR0_REGION_INDEX + MDGPU_BAR_RING:
		return vgpu->ring_size;
	case VFIO_PCI_BAR0_REGION_INDEX + MDGPU_BAR_APERTURE:
		return vgpu->aperture_size;
	default:
		return 0;
	}
}

/*
 * Config space: an access of any length inside the 256 bytes is split into
 * naturally aligned 4, 2 and 1-byte pieces (QEMU reads the whole space in
 * one pread()).  Values are little-endian on the wire.
 */
static ssize_t mdgpu_vfio_cfg_rw(struct mdgpu_vgpu *vgpu, char __user *ubuf,
				 size_t count, u64 off, bool write)
{
	u8 buf[MDGPU_CONFIG_SIZE];
	size_t done, sz, i;
	u32 val;
	int ret = 0;

	if (!count || off >= MDGPU_CONFIG_SIZE ||
	    count > MDGPU_CONFIG_SIZE - off)
		return -EINVAL;
	if (write && copy_from_user(buf, ubuf, count))
		return -EFAULT;

	mutex_lock(&vgpu->lock);
	for (done = 0; done < count && !ret; done += sz) {
		u32 pos = off + done;

		if (count - done >= 4 && !(pos & 3))
			sz = 4;
		else if (count - done >= 2 && !(pos & 1))
			sz = 2;
		else
			sz = 1;
		val = 0;
		for (i = 0; write && i < sz; i++)
			val |= (u32)buf[done + i] << (8 * i);
		ret = mdgpu_cfg_access(vgpu, pos, sz, &val, write);
		for (i = 0; !write && i < sz; i++)
			buf[done + i] = val >> (8 * i);
	}
	mutex_unlock(&vgpu->lock);

	if (ret)
		return ret;
	if (!write && copy_to_user(ubuf, buf, count))
		return -EFAULT;
	return count;
}

static ssize_t mdgpu_vfio_regs_rw(struct mdgpu_vgpu *vgpu, char __user *ubuf,
				  size_t count, u64 off, bool write)
{
	__le32 wire = 0;
	u32 val;
	int ret;

	if (write && count == sizeof(wire) &&
	    copy_from_user(&wire, ubuf, sizeof(wire)))
		return -EFAULT;
	val = le32_to_cpu(wire);

	mutex_lock(&vgpu->lock);
	ret = mdgpu_regs_access(vgpu, off, count, &val, write);
	mutex_unlock(&vgpu->lock);
	if (ret)
		return ret;

	wire = cpu_to_le32(val);
	if (!write && copy_to_user(ubuf, &wire, sizeof(wire)))
		return -EFAULT;
	return count;
}

static ssize_t mdgpu_vfio_rw(struct mdgpu_vgpu *vgpu, char __user *ubuf,
			     size_t count, loff_t *ppos, bool write)
{
	u64 pos = *ppos;
	u32 index = pos >> MDGPU_VFIO_OFFSET_SHIFT;
	u64 off = pos & MDGPU_VFIO_OFFSET_MASK;
	ssize_t ret;

	if (*ppos < 0)
		return -EINVAL;
	switch (index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
		ret = mdgpu_vfio_cfg_rw(vgpu, ubuf, count, off, write);
		break;
	case VFIO_PCI_BAR0_REGION_INDEX + MDGPU_BAR_REGS:
		ret = mdgpu_vfio_regs_rw(vgpu, ubuf, count, off, write);
		break;
	case VFIO_PCI_BAR0_REGION_INDEX + MDGPU_BAR_RING:
		ret = mdgpu_mem_rw(vgpu->ring, ubuf, count, off, write);
		break;
	case VFIO_PCI_BAR0_REGION_INDEX + MDGPU_BAR_APERTURE:
		ret = mdgpu_mem_rw(vgpu->aperture, ubuf, count, off, write);
		break;
	default:
		ret = -EINVAL;
		break;
	}
	if (ret > 0)
		*ppos += ret;
	return ret;
}

static ssize_t mdgpu_vfio_read(struct vfio_device *vdev, char __user *buf,
			       size_t count, loff_t *ppos)
{
	return mdgpu_vfio_rw(mdgpu_vgpu_of(vdev), buf, count, ppos, false);
}

static ssize_t mdgpu_vfio_write(struct vfio_device *vdev,
				const char __user *buf, size_t count,
				loff_t *ppos)
{
	return mdgpu_vfio_rw(mdgpu_vgpu_of(vdev), (char __user *)buf, count,
			     ppos, true);
}

static int mdgpu_vfio_mmap(struct vfio_device *vdev,
			   struct vm_area_struct *vma)
{
	struct mdgpu_vgpu *vgpu = mdgpu_vgpu_of(vdev);
	u64 pos, off;
	u32 index;

	if (vma->vm_pgoff > (U64_MAX >> PAGE_SHIFT))
		return -EINVAL;
	pos = (u64)vma->vm_pgoff << PAGE_SHIFT;
	index = pos >> MDGPU_VFIO_OFFSET_SHIFT;
	off = pos & MDGPU_VFIO_OFFSET_MASK;
	switch (index) {
	case VFIO_PCI_BAR0_REGION_INDEX + MDGPU_BAR_RING:
		return mdgpu_mem_mmap(vgpu->ring, vma, off);
	case VFIO_PCI_BAR0_REGION_INDEX + MDGPU_BAR_APERTURE:
		return mdgpu_mem_mmap(vgpu->aperture, vma, off);
	default:
		return -EINVAL;
	}
}

static long mdgpu_vfio_get_info(struct mdgpu_vgpu *vgpu, void __user *arg)
{
	unsigned long minsz = offsetofend(struct vfio_device_info, num_irqs);
	struct vfio_device_info info;

	if (copy_from_user(&info, arg, minsz))
		return -EFAULT;
	if (info.argsz < minsz)
		return -EINVAL;
	info.flags = VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET;
	info.num_regions = VFIO_PCI_NUM_REGIONS;
	info.num_irqs = VFIO_PCI_NUM_IRQS;
	return copy_to_user(arg, &info, minsz) ? -EFAULT : 0;
}

static long mdgpu_vfio_region_info(struct mdgpu_vgpu *vgpu, void __user *arg)
{
	unsigned long minsz = offsetofend(struct vfio_region_info, offset);
	struct vfio_region_info info;

	if (copy_from_user(&info, arg, minsz))
		return -EFAULT;
	if (info.argsz < minsz || info.index >= VFIO_PCI_NUM_REGIONS)
		return -EINVAL;
	info.offset = (u64)info.index << MDGPU_VFIO_OFFSET_SHIFT;
	info.size = mdgpu_region_size(vgpu, info.index);
	info.flags = 0;
	info.cap_offset = 0;
	if (info.size)
		info.flags = VFIO_REGION_INFO_FLAG_READ |
			     VFIO_REGION_INFO_FLAG_WRITE;
	if (info.index == VFIO_PCI_BAR0_REGION_INDEX + MDGPU_BAR_RING ||
	    info.index == VFIO_PCI_BAR0_REGION_INDEX + MDGPU_BAR_APERTURE)
		info.flags |= VFIO_REGION_INFO_FLAG_MMAP;
	return copy_to_user(arg, &info, minsz) ? -EFAULT : 0;
}

static long mdgpu_vfio_irq_info(struct mdgpu_vgpu *vgpu, void __user *arg)
{
	unsigned long minsz = offsetofend(struct vfio_irq_info, count);
	struct vfio_irq_info info;
	int ret;

	if (copy_from_user(&info, arg, minsz))
		return -EFAULT;
	if (info.argsz < minsz)
		return -EINVAL;
	ret = mdgpu_irq_get_info(vgpu, &info);
	if (ret)
		return ret;
	return copy_to_user(arg, &info, minsz) ? -EFAULT : 0;
}

static long mdgpu_vfio_set_irqs(struct mdgpu_vgpu *vgpu, void __user *arg)
{
	unsigned long minsz = offsetofend(struct vfio_irq_set, count);
	struct vfio_irq_set hdr;

	if (copy_from_user(&hdr, arg, minsz))
		return -EFAULT;
	return mdgpu_irq_set(vgpu, &hdr, arg + minsz);
}

static long mdgpu_vfio_ioctl(struct vfio_device *vdev, unsigned int cmd,
			     unsigned long arg)
{
	struct mdgpu_vgpu *vgpu = mdgpu_vgpu_of(vdev);
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case VFIO_DEVICE_GET_INFO:
		return mdgpu_vfio_get_info(vgpu, uarg);
	case VFIO_DEVICE_GET_REGION_INFO:
		return mdgpu_vfio_region_info(vgpu, uarg);
	case VFIO_DEVICE_GET_IRQ_INFO:
		return mdgpu_vfio_irq_info(vgpu, uarg);
	case VFIO_DEVICE_SET_IRQS:
		return mdgpu_vfio_set_irqs(vgpu, uarg);
	case VFIO_DEVICE_RESET:
		mutex_lock(&vgpu->lock);
		mdgpu_vgpu_reset(vgpu);
		mutex_unlock(&vgpu->lock);
		return 0;
	default:
		return -ENOTTY;
	}
}

/*
 * The mdev is being removed while a VFIO user still has it open: the vfio
 * core calls this every 10 s until the user closes the device.  Signal the
 * REQ eventfd each time, as vfio-pci does.
 */
static void mdgpu_vfio_request(struct vfio_device *vdev, unsigned int count)
{
	bool sent = mdgpu_irq_request(mdgpu_vgpu_of(vdev));

	if (!count)
		dev_notice(vdev->dev,
			   "removal requested: %s; waiting for the VFIO user to close the device\n",
			   sent ? "REQ signalled" : "no REQ eventfd");
}

static const struct vfio_device_ops mdgpu_vfio_ops = {
	.name		= "mdgpu",
	.init		= mdgpu_vfio_init,
	.release	= mdgpu_vfio_release,
	.open_device	= mdgpu_vfio_open_device,
	.close_device	= mdgpu_vfio_close_device,
	.read		= mdgpu_vfio_read,
	.write		= mdgpu_vfio_write,
	.ioctl		= mdgpu_vfio_ioctl,
	.mmap		= mdgpu_vfio_mmap,
	.request	= mdgpu_vfio_request,
	MDGPU_VFIO_IOMMUFD_EMULATED_OPS
};

/* ---- mdev_driver -------------------------------------------------------- */

/* Make @vgpu reachable from the control channel and tell the daemon. */
static int mdgpu_vgpu_publish(struct mdgpu_vgpu *vgpu)
{
	struct mdgpu_parent *parent = vgpu->parent;
	int ret;

	refcount_set(&vgpu->ctl_refs, 1);
	init_completion(&vgpu->ctl_done);
	ret = xa_err(xa_store(&mdgpu_vgpus, vgpu->id, vgpu, GFP_KERNEL));
	if (ret)
		return ret;

	mutex_lock(&parent->lock);
	mutex_lock(&vgpu->lock);
	vgpu->published = true;
	/* Without a daemon the vGPU stays idle (neither READY nor LOST). */
	if (parent->owner)
		mdgpu_vgpu_backend_back(vgpu);
	mutex_unlock(&vgpu->lock);
	mutex_unlock(&parent->lock);
	return 0;
}

/* Undo mdgpu_vgpu_publish(): the daemon gets REMOVE, then nothing more. */
static void mdgpu_vgpu_unpublish(struct mdgpu_vgpu *vgpu)
{
	struct mdgpu_parent *parent = vgpu->parent;
	struct mdgpu_ctl_event ev = {};
	unsigned int i;

	/* Storing NULL keeps the id reserved until .release. */
	xa_store(&mdgpu_vgpus, vgpu->id, NULL, 0);
	/* Drop publish's reference, then wait for control-channel users. */
	mdgpu_vgpu_put(vgpu);
	wait_for_completion(&vgpu->ctl_done);

	mutex_lock(&parent->lock);
	mutex_lock(&vgpu->lock);
	vgpu->published = false;
	for (i = 0; i < MDGPU_EV_SLOTS; i++)
		mdgpu_event_cancel(&vgpu->ev[i]);
	ev.type = MDGPU_EV_REMOVE;
	ev.parent_id = parent->id;
	ev.vgpu_id = vgpu->id;
	ev.type_id = vgpu->type->id;
	mdgpu_vgpu_uuid(vgpu, ev.uuid);
	/* The queue owns the event from now on. */
	mdgpu_event_post(parent, vgpu->remove_ev, &ev);
	vgpu->remove_ev = NULL;
	mutex_unlock(&vgpu->lock);
	mutex_unlock(&parent->lock);
}

static int mdgpu_mdev_probe(struct mdev_device *mdev)
{
	struct mdgpu_vgpu *vgpu;
	int ret;

	vgpu = vfio_alloc_device(mdgpu_vgpu, vdev, &mdev->dev,
				 &mdgpu_vfio_ops);
	if (IS_ERR(vgpu))
		return PTR_ERR(vgpu);

	ret = vfio_register_emulated_iommu_dev(&vgpu->vdev);
	if (ret)
		goto err_put;
	dev_set_drvdata(&mdev->dev, vgpu);

	ret = mdgpu_vgpu_publish(vgpu);
	if (ret)
		goto err_unregister;
	return 0;

err_unregister:
	dev_set_drvdata(&mdev->dev, NULL);
	vfio_unregister_group_dev(&vgpu->vdev);
err_put:
	vfio_put_device(&vgpu->vdev);
	return ret;
}

static void mdgpu_mdev_remove(struct mdev_device *mdev)
{
	struct mdgpu_vgpu *vgpu = dev_get_drvdata(&mdev->dev);

	/* Returns once no VFIO user has the device open. */
	vfio_unregister_group_dev(&vgpu->vdev);
	mdgpu_vgpu_unpublish(vgpu);
	dev_set_drvdata(&mdev->dev, NULL);
	/* Pairs with vfio_alloc_device() in probe; may call .release. */
	vfio_put_device(&vgpu->vdev);
}

struct mdev_driver mdgpu_mdev_driver = {
	.device_api = VFIO_DEVICE_API_PCI_STRING,
	.driver = {
		.name = MDGPU_DRV_NAME,
		.owner = THIS_MODULE,
		.mod_name = KBUILD_MODNAME,
		.dev_groups = mdgpu_vgpu_groups,
	},
	.probe = mdgpu_mdev_probe,
	.remove = mdgpu_mdev_remove,
	.get_available = mdgpu_mdev_get_available,
	.show_description = mdgpu_mdev_show_description,
};
