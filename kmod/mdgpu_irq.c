// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_irq.c - guest interrupts: INTx and MSI through VFIO eventfds.
 *
 * The VFIO user (QEMU) hands us one eventfd per interrupt type with
 * VFIO_DEVICE_SET_IRQS; raising an interrupt is signalling it.  MSI is used
 * when the user configured it, INTx otherwise.  INTx is level-triggered and
 * automasked: after each signal it stays masked until the user unmasks it,
 * and an unmask with a cause still pending signals again.  The REQ
 * eventfd is how the module asks the user to release the device (QEMU
 * then unplugs it from the guest) when the mdev is being removed.
 */
#include <linux/eventfd.h>
#include <linux/pci_regs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vfio.h>

#include "mdgpu.h"
#include "mdgpu_compat.h"

static bool mdgpu_irq_intx_disabled(struct mdgpu_vgpu *vgpu)
{
	return vgpu->config[PCI_COMMAND + 1] & (PCI_COMMAND_INTX_DISABLE >> 8);
}

/* Deliver one interrupt to the guest.  Caller must hold vgpu->lock. */
static void mdgpu_irq_signal(struct mdgpu_vgpu *vgpu)
{
	lockdep_assert_held(&vgpu->lock);

	if (vgpu->msi_trigger) {
		mdgpu_eventfd_signal(vgpu->msi_trigger);
		vgpu->stats.interrupts++;
		return;
	}
	if (vgpu->intx_trigger && !vgpu->intx_masked &&
	    !mdgpu_irq_intx_disabled(vgpu)) {
		mdgpu_eventfd_signal(vgpu->intx_trigger);
		vgpu->intx_masked = true;
		vgpu->stats.interrupts++;
	}
}

/*
 * mdgpu_irq_raise() - set @bits in IRQ_STATUS and interrupt the guest for
 * those of them that IRQ_MASK enables.  Caller must hold vgpu->lock.
 */
void mdgpu_irq_raise(struct mdgpu_vgpu *vgpu, u32 bits)
{
	lockdep_assert_held(&vgpu->lock);

	mdgpu_reg_update(vgpu, MDGPU_REG_IRQ_STATUS, 0, bits);
	if (bits & mdgpu_reg_read(vgpu, MDGPU_REG_IRQ_MASK))
		mdgpu_irq_signal(vgpu);
}

/*
 * mdgpu_irq_update() - re-evaluate the INTx level after something that may
 * have unblocked it (unmask, INTx-disable cleared).  Caller must hold
 * vgpu->lock.
 */
void mdgpu_irq_update(struct mdgpu_vgpu *vgpu)
{
	lockdep_assert_held(&vgpu->lock);

	if (!vgpu->msi_trigger &&
	    (mdgpu_reg_read(vgpu, MDGPU_REG_IRQ_STATUS) &
	     mdgpu_reg_read(vgpu, MDGPU_REG_IRQ_MASK)))
		mdgpu_irq_signal(vgpu);
}

static u32 mdgpu_irq_count(u32 index)
{
	switch (index) {
	case VFIO_PCI_INTX_IRQ_INDEX:
	case VFIO_PCI_MSI_IRQ_INDEX:
	case VFIO_PCI_REQ_IRQ_INDEX:
		return 1;
	default:
		return 0;
	}
}

int mdgpu_irq_get_info(struct mdgpu_vgpu *vgpu, struct vfio_irq_info *info)
{
	if (info->index >= VFIO_PCI_NUM_IRQS)
		return -EINVAL;

	info->count = mdgpu_irq_count(info->index);
	switch (info->index) {
	case VFIO_PCI_INTX_IRQ_INDEX:
		info->flags = VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_MASKABLE |
			      VFIO_IRQ_INFO_AUTOMASKED;
		break;
	case VFIO_PCI_MSI_IRQ_INDEX:
	case VFIO_PCI_REQ_IRQ_INDEX:
		info->flags = VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_NORESIZE;
		break;
	default:
		info->flags = 0;
		break;
	}
	return 0;
}

/* The trigger eventfd of an index mdgpu_irq_count() says exists. */
static struct eventfd_ctx **mdgpu_irq_slot(struct mdgpu_vgpu *vgpu, u32 index)
{
	switch (index) {
	case VFIO_PCI_MSI_IRQ_INDEX:
		return &vgpu->msi_trigger;
	case VFIO_PCI_REQ_IRQ_INDEX:
		return &vgpu->req_trigger;
	default:
		return &vgpu->intx_trigger;
	}
}

/*
 * Install (fd >= 0) or remove (fd == -1) the trigger eventfd of @index.
 * Caller must hold vgpu->lock.
 */
static int mdgpu_irq_set_eventfd(struct mdgpu_vgpu *vgpu, u32 index, s32 fd)
{
	struct eventfd_ctx **slot = mdgpu_irq_slot(vgpu, index);
	struct eventfd_ctx *ctx = NULL;

	lockdep_assert_held(&vgpu->lock);

	if (fd < -1)
		return -EINVAL;
	if (fd >= 0) {
		ctx = eventfd_ctx_fdget(fd);
		if (IS_ERR(ctx))
			return PTR_ERR(ctx);
	}
	if (*slot)
		eventfd_ctx_put(*slot);
	*slot = ctx;
	if (index == VFIO_PCI_INTX_IRQ_INDEX)
		vgpu->intx_masked = false;
	return 0;
}

static int mdgpu_irq_trigger(struct mdgpu_vgpu *vgpu, struct vfio_irq_set *hdr,
			     const u8 *data)
{
	struct eventfd_ctx *ctx;
	u32 type = hdr->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;

	if (!hdr->count) {
		/* DATA_NONE with count 0 disables the interrupt type. */
		if (type == VFIO_IRQ_SET_DATA_NONE)
			return mdgpu_irq_set_eventfd(vgpu, hdr->index, -1);
		return 0;
	}
	if (type == VFIO_IRQ_SET_DATA_EVENTFD)
		return mdgpu_irq_set_eventfd(vgpu, hdr->index,
					     *(const s32 *)data);
	if (type == VFIO_IRQ_SET_DATA_BOOL && !data[0])
		return 0;
	/* Loopback trigger, for tests: signal the eventfd as is. */
	ctx = *mdgpu_irq_slot(vgpu, hdr->index);
	if (!ctx)
		return 0;
	if (hdr->index == VFIO_PCI_INTX_IRQ_INDEX) {
		if (vgpu->intx_masked)
			return 0;
		vgpu->intx_masked = true;
	}
	mdgpu_eventfd_signal(ctx);
	vgpu->stats.interrupts++;
	return 0;
}

static int mdgpu_irq_mask(struct mdgpu_vgpu *vgpu, struct vfio_irq_set *hdr,
			  const u8 *data, bool mask)
{
	u32 type = hdr->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;

	if (hdr->index != VFIO_PCI_INTX_IRQ_INDEX ||
	    type == VFIO_IRQ_SET_DATA_EVENTFD)
		return -EINVAL;
	if (!hdr->count || (type == VFIO_IRQ_SET_DATA_BOOL && !data[0]))
		return 0;
	vgpu->intx_masked = mask;
	if (!mask)
		mdgpu_irq_update(vgpu);
	return 0;
}

/*
 * mdgpu_irq_set() - VFIO_DEVICE_SET_IRQS.
 *
 * @hdr has been copied from the user; @udata points at its payload.  The
 * vfio core's validator checks flags, index, start and count against our
 * counts (an index with count 0 is refused there), and sizes the payload.
 */
int mdgpu_irq_set(struct mdgpu_vgpu *vgpu, struct vfio_irq_set *hdr,
		  void __user *udata)
{
	u32 action = hdr->flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;
	size_t data_size = 0;
	u8 *data = NULL;
	int ret;

	if (hdr->index >= VFIO_PCI_NUM_IRQS)
		return -EINVAL;
	ret = vfio_set_irqs_validate_and_prepare(hdr,
						 mdgpu_irq_count(hdr->index),
						 VFIO_PCI_NUM_IRQS, &data_size);
	if (ret)
		return ret;
	if (action != VFIO_IRQ_SET_ACTION_MASK &&
	    action != VFIO_IRQ_SET_ACTION_UNMASK &&
	    action != VFIO_IRQ_SET_ACTION_TRIGGER)
		return -EINVAL;
	if (data_size) {
		data = memdup_user(udata, data_size);
		if (IS_ERR(data))
			return PTR_ERR(data);
	}

	mutex_lock(&vgpu->lock);
	switch (action) {
	case VFIO_IRQ_SET_ACTION_MASK:
		ret = mdgpu_irq_mask(vgpu, hdr, data, true);
		break;
	case VFIO_IRQ_SET_ACTION_UNMASK:
		ret = mdgpu_irq_mask(vgpu, hdr, data, false);
		break;
	default:
		ret = mdgpu_irq_trigger(vgpu, hdr, data);
		break;
	}
	mutex_unlock(&vgpu->lock);

	kfree(data);
	return ret;
}

/* Drop both eventfds (close_device).  Caller must hold vgpu->lock. */
void mdgpu_irq_release(struct mdgpu_vgpu *vgpu)
{
	lockdep_assert_held(&vgpu->lock);

	mdgpu_irq_set_eventfd(vgpu, VFIO_PCI_INTX_IRQ_INDEX, -1);
	mdgpu_irq_set_eventfd(vgpu, VFIO_PCI_MSI_IRQ_INDEX, -1);
	mdgpu_irq_set_eventfd(vgpu, VFIO_PCI_REQ_IRQ_INDEX, -1);
}

/*
 * mdgpu_irq_request() - ask the VFIO user to release the device (REQ).
 * Returns false if the user did not give a REQ eventfd.
 */
bool mdgpu_irq_request(struct mdgpu_vgpu *vgpu)
{
	bool sent = false;

	mutex_lock(&vgpu->lock);
	if (vgpu->req_trigger) {
		mdgpu_eventfd_signal(vgpu->req_trigger);
		sent = true;
	}
	mutex_unlock(&vgpu->lock);
	return sent;
}
