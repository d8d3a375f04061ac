// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-guest: interrupts.  One vector, MSI if the platform gives it, INTx
 * otherwise.  The handler wakes waiters (under INTx it first acknowledges
 * IRQ_STATUS); what the interrupt means is decided by the waiters, under
 * the device lock, from the registers (see mdgpu_gdev_sync()).
 */
#include <linux/interrupt.h>
#include <linux/moduleparam.h>

#include "compat.h"
#include "mdgpu_guest.h"

static bool disable_msi;
module_param(disable_msi, bool, 0444);
MODULE_PARM_DESC(disable_msi, "use INTx even where MSI is available (tests the fallback)");

/* Wake every waiter: something may have changed. */
void mdgpu_gdev_kick(struct mdgpu_gdev *gd)
{
	atomic_inc(&gd->events);
	wake_up_all(&gd->wq);
}

static irqreturn_t mdgpu_gdev_isr(int irq, void *data)
{
	struct mdgpu_gdev *gd = data;
	u32 pending;

	/*
	 * MSI is never shared and the device sends one for every cause it
	 * raises, pending or not: nothing to tell apart or acknowledge, and
	 * no register access (a VM exit) on the completion path.  The
	 * waiters read what changed.
	 */
	if (gd->irq_mode == MDGPU_GUEST_IRQ_MSI) {
		atomic64_inc(&gd->irq_count);
		mdgpu_gdev_kick(gd);
		return IRQ_HANDLED;
	}
	pending = mdgpu_gdev_read(gd, MDGPU_REG_IRQ_STATUS);
	/* Shared INTx line, or a device that is gone (all-ones). */
	if (!pending || pending == U32_MAX)
		return IRQ_NONE;
	/* Write-1-to-clear only what was seen: later bits stay pending. */
	mdgpu_gdev_write(gd, MDGPU_REG_IRQ_STATUS, pending);
	atomic64_inc(&gd->irq_count);
	mdgpu_gdev_kick(gd);
	return IRQ_HANDLED;
}

int mdgpu_gdev_irq_init(struct mdgpu_gdev *gd)
{
	struct pci_dev *pdev = gd->pdev;
	int ret;

	ret = pci_alloc_irq_vectors(pdev, 1, 1, disable_msi ? PCI_IRQ_INTX :
				    PCI_IRQ_MSI | PCI_IRQ_INTX);
	if (ret < 0) {
		dev_err(&pdev->dev, "no interrupt: %d\n", ret);
		return ret;
	}
	gd->irq_mode = pdev->msi_enabled ? MDGPU_GUEST_IRQ_MSI :
					   MDGPU_GUEST_IRQ_INTX;
	gd->irq = pci_irq_vector(pdev, 0);
	ret = request_irq(gd->irq, mdgpu_gdev_isr,
			  gd->irq_mode == MDGPU_GUEST_IRQ_INTX ? IRQF_SHARED : 0,
			  gd->name, gd);
	if (ret) {
		dev_err(&pdev->dev, "request_irq %d: %d\n", gd->irq, ret);
		goto err_vectors;
	}
	return 0;

err_vectors:
	pci_free_irq_vectors(pdev);
	return ret;
}

void mdgpu_gdev_irq_fini(struct mdgpu_gdev *gd)
{
	free_irq(gd->irq, gd);
	pci_free_irq_vectors(gd->pdev);
}
