// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-guest: PCI driver for the mdgpu vGPU inside a virtual machine.
 * This file: probe/remove, register access, device start, reset and the
 * fence bookkeeping.  irq.c handles interrupts, chardev.c the user ABI.
 */
#include <linux/idr.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "mdgpu_guest.h"
#include "mdgpu_version.h"

static DEFINE_IDA(mdgpu_gdev_ida);

/*
 * How long RESET waits for the host to take a reset up.  mdgpud does so
 * between time slices; a slice that overruns (a long kernel, up to the
 * daemon's hang bound) delays it.
 */
unsigned int mdgpu_gdev_reset_timeout_ms = 30000;
module_param_named(reset_timeout_ms, mdgpu_gdev_reset_timeout_ms, uint,
		   0644);
MODULE_PARM_DESC(reset_timeout_ms,
		 "longest wait of RESET for the host to complete a reset (ms)");

/*
 * Where the device mirrors register @reg in BAR2 (struct
 * mdgpu_ring_mirror, ABI 1.11; the fence is a little-endian u64, its
 * high half 4 bytes in), or -1 for a register read in BAR0 only.
 */
static int mdgpu_gdev_mirror_off(u32 reg)
{
	switch (reg) {
	case MDGPU_REG_FENCE_LO:
		return offsetof(struct mdgpu_ring_mirror, fence);
	case MDGPU_REG_FENCE_HI:
		return offsetof(struct mdgpu_ring_mirror, fence) + 4;
	case MDGPU_REG_SQ_HEAD:
		return offsetof(struct mdgpu_ring_mirror, sq_head);
	case MDGPU_REG_SQ_TAIL:
		return offsetof(struct mdgpu_ring_mirror, sq_tail);
	case MDGPU_REG_ERROR:
		return offsetof(struct mdgpu_ring_mirror, error);
	case MDGPU_REG_IRQ_STATUS:
		return offsetof(struct mdgpu_ring_mirror, irq_status);
	case MDGPU_REG_STATUS:
		return offsetof(struct mdgpu_ring_mirror, status);
	default:
		return -1;
	}
}

/*
 * A register: from the mirror where the device keeps one (a memory read,
 * no trap to the host), else from BAR0 (a trapped access, a VM exit).
 * Every BAR0 access is counted (sysfs bar0_reads, bar0_writes).
 */
u32 mdgpu_gdev_read(struct mdgpu_gdev *gd, u32 reg)
{
	int off = gd->mirror ? mdgpu_gdev_mirror_off(reg) : -1;

	if (off >= 0)
		return readl(gd->mirror + off);
	atomic64_inc(&gd->bar0_reads);
	return readl(gd->regs + reg);
}

void mdgpu_gdev_write(struct mdgpu_gdev *gd, u32 reg, u32 val)
{
	atomic64_inc(&gd->bar0_writes);
	writel(val, gd->regs + reg);
}

/* FENCE is two registers: reread HI so a carry between the reads is seen. */
static u64 mdgpu_gdev_read_fence(struct mdgpu_gdev *gd)
{
	u32 hi, lo, hi2;

	hi = mdgpu_gdev_read(gd, MDGPU_REG_FENCE_HI);
	lo = mdgpu_gdev_read(gd, MDGPU_REG_FENCE_LO);
	hi2 = mdgpu_gdev_read(gd, MDGPU_REG_FENCE_HI);
	if (hi2 != hi)
		lo = mdgpu_gdev_read(gd, MDGPU_REG_FENCE_LO);
	return (u64)hi2 << 32 | lo;
}

static void mdgpu_gdev_release(struct kref *ref)
{
	struct mdgpu_gdev *gd = container_of(ref, struct mdgpu_gdev, ref);

	mutex_destroy(&gd->lock);
	kfree(gd);
}

void mdgpu_gdev_put(struct mdgpu_gdev *gd)
{
	kref_put(&gd->ref, mdgpu_gdev_release);
}

/*
 * Clear stale interrupts, unmask them all and accept doorbells.  Used at
 * probe and after every reset (a reset returns the registers to their
 * defaults: everything masked, doorbells refused).  Caller holds @lock.
 */
int mdgpu_gdev_start(struct mdgpu_gdev *gd)
{
	u32 status;

	lockdep_assert_held(&gd->lock);
	mdgpu_gdev_write(gd, MDGPU_REG_IRQ_MASK, 0);
	mdgpu_gdev_write(gd, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ALL);
	mdgpu_gdev_write(gd, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	mdgpu_gdev_write(gd, MDGPU_REG_CONTROL, MDGPU_CONTROL_ENABLE);
	status = mdgpu_gdev_read(gd, MDGPU_REG_STATUS);
	if (status == U32_MAX || !(status & MDGPU_STATUS_ENABLED)) {
		dev_err(&gd->pdev->dev, "device did not enable (status %#x)\n",
			status);
		return -EIO;
	}
	return 0;
}

/* Start a new fence epoch after a reset: unfinished commands are lost. */
static void mdgpu_gdev_new_epoch(struct mdgpu_gdev *gd, u64 retired)
{
	lockdep_assert_held(&gd->lock);
	gd->canceled_from = retired;
	gd->epoch_base = gd->submitted;
	gd->dev_fence = 0;
	gd->sq_tail = 0;
	gd->resets++;
}

/*
 * Read the device state: *status gets STATUS, *retired the fence up to
 * which every command has finished (completed, or canceled by a reset).
 * A reset done behind the driver's back (STATUS.ENABLED clear, or FENCE
 * going backwards) starts a new epoch and restarts the device.  A FENCE
 * beyond what was submitted is a device bug: it is clamped.
 * Returns -ENODEV once the device is removed or reads as all-ones.
 * Caller holds @lock.
 */
int mdgpu_gdev_sync(struct mdgpu_gdev *gd, u64 *retired, u32 *status)
{
	u64 fence, max;
	int ret;

	lockdep_assert_held(&gd->lock);
	*retired = gd->epoch_base + gd->dev_fence;
	if (test_bit(MDGPU_GDEV_REMOVED, &gd->flags))
		return -ENODEV;
	*status = mdgpu_gdev_read(gd, MDGPU_REG_STATUS);
	if (*status == U32_MAX)
		return -ENODEV;

	fence = mdgpu_gdev_read_fence(gd);
	if (!(*status & MDGPU_STATUS_ENABLED) || fence < gd->dev_fence) {
		dev_warn_ratelimited(&gd->pdev->dev,
				     "device was reset (status %#x): unfinished commands canceled\n",
				     *status);
		mdgpu_gdev_new_epoch(gd, *retired);
		ret = mdgpu_gdev_start(gd);
		mdgpu_gdev_kick(gd);
		if (ret)
			return ret;
		*status = mdgpu_gdev_read(gd, MDGPU_REG_STATUS);
		fence = 0;
	}
	max = gd->submitted - gd->epoch_base;
	if (fence > max) {
		dev_warn_ratelimited(&gd->pdev->dev,
				     "device fence %llu beyond %llu submitted: ignored\n",
				     fence, max);
		fence = max;
	}
	gd->dev_fence = fence;
	*retired = gd->epoch_base + fence;
	return 0;
}

/*
 * Device reset on the user's request: everything submitted and not yet
 * completed is canceled, waiters are woken (they return -ECANCELED), the
 * ring restarts at tail 0.  Caller holds @lock.
 */
int mdgpu_gdev_reset(struct mdgpu_gdev *gd)
{
	u64 retired;
	u32 status;
	int ret;

	lockdep_assert_held(&gd->lock);
	ret = mdgpu_gdev_sync(gd, &retired, &status);
	if (ret)
		return ret;
	mdgpu_gdev_write(gd, MDGPU_REG_CONTROL, MDGPU_CONTROL_RESET);
	mdgpu_gdev_new_epoch(gd, retired);
	ret = mdgpu_gdev_start(gd);
	mdgpu_gdev_kick(gd);
	return ret;
}

/* Check the BARs and the registers that size them; nothing is trusted. */
static int mdgpu_gdev_check(struct mdgpu_gdev *gd)
{
	struct pci_dev *pdev = gd->pdev;
	u32 magic, entries, aper;

	magic = mdgpu_gdev_read(gd, MDGPU_REG_MAGIC);
	if (magic != MDGPU_MAGIC) {
		dev_err(&pdev->dev, "bad magic %#x\n", magic);
		return -ENODEV;
	}
	gd->abi_version = mdgpu_gdev_read(gd, MDGPU_REG_VERSION);
	if (gd->abi_version >> 16 != MDGPU_ABI_MAJOR) {
		dev_err(&pdev->dev, "unsupported ABI %u.%u (driver speaks %u.x)\n",
			gd->abi_version >> 16, gd->abi_version & 0xffff,
			MDGPU_ABI_MAJOR);
		return -ENODEV;
	}

	entries = mdgpu_gdev_read(gd, MDGPU_REG_RING_ENTRIES);
	if (!is_power_of_2(entries) ||
	    entries > MDGPU_GUEST_RING_ENTRIES_MAX ||
	    MDGPU_RING_BYTES(entries) > gd->ring_size) {
		dev_err(&pdev->dev, "bad ring: %u entries in a %llu-byte BAR\n",
			entries, (u64)gd->ring_size);
		return -EINVAL;
	}
	gd->ring_entries = entries;

	aper = mdgpu_gdev_read(gd, MDGPU_REG_APERTURE_SIZE);
	if (aper > gd->aper_size) {
		dev_err(&pdev->dev, "aperture %u bytes larger than BAR%d (%llu)\n",
			aper, MDGPU_BAR_APERTURE, (u64)gd->aper_size);
		return -EINVAL;
	}
	gd->aper_size = round_down(aper, PAGE_SIZE);
	return 0;
}

static bool mdgpu_gdev_use_mirror = true;
module_param_named(register_mirror, mdgpu_gdev_use_mirror, bool, 0444);
MODULE_PARM_DESC(register_mirror,
		 "read polled registers from the device's mirror in BAR2 (ABI 1.11); 0: in BAR0, a VM exit each, as for an older device");

/*
 * The register mirror of a device of ABI 1.11 or later whose BAR2 holds
 * it; without one (an older device, or register_mirror=0) every register
 * is read in BAR0.
 */
static int mdgpu_gdev_map_mirror(struct mdgpu_gdev *gd)
{
	u64 off = MDGPU_RING_MIRROR_OFFSET(gd->ring_entries);

	if (!mdgpu_gdev_use_mirror || (gd->abi_version & 0xffff) < 11 ||
	    off + MDGPU_RING_MIRROR_SIZE > gd->ring_size)
		return 0;
	gd->mirror = pci_iomap_range(gd->pdev, MDGPU_BAR_RING, off,
				     MDGPU_RING_MIRROR_SIZE);
	return gd->mirror ? 0 : -ENOMEM;
}

static bool mdgpu_gdev_use_shadow = true;
module_param_named(shadow_doorbell, mdgpu_gdev_use_shadow, bool, 0444);
MODULE_PARM_DESC(shadow_doorbell,
		 "write the submission tail to the device's shadow doorbell in BAR2 and skip the BAR0 doorbell while the daemon polls (ABI 1.13); 0: every submission writes SQ_TAIL in BAR0, a VM exit each");

/*
 * The shadow doorbell of a device of ABI 1.13 or later whose BAR2 holds
 * it (struct mdgpu_ring_shadow); without one (an older device, or
 * shadow_doorbell=0) every submission writes SQ_TAIL in BAR0.  Its tail
 * starts at 0, as the device's reset left it.
 */
static int mdgpu_gdev_map_shadow(struct mdgpu_gdev *gd)
{
	u64 off = MDGPU_RING_SHADOW_OFFSET(gd->ring_entries);

	if (!mdgpu_gdev_use_shadow || (gd->abi_version & 0xffff) < 13 ||
	    MDGPU_RING_REGION_BYTES(gd->ring_entries) > gd->ring_size)
		return 0;
	gd->shadow = pci_iomap_range(gd->pdev, MDGPU_BAR_RING, off,
				     MDGPU_RING_SHADOW_SIZE);
	return gd->shadow ? 0 : -ENOMEM;
}

/* BAR0 registers, BAR2 ring, BAR4 aperture: memory BARs, page aligned. */
static int mdgpu_gdev_bars(struct mdgpu_gdev *gd)
{
	static const int bars[] = {
		MDGPU_BAR_REGS, MDGPU_BAR_RING, MDGPU_BAR_APERTURE
	};
	struct pci_dev *pdev = gd->pdev;
	int i;

	for (i = 0; i < ARRAY_SIZE(bars); i++) {
		if (!(pci_resource_flags(pdev, bars[i]) & IORESOURCE_MEM) ||
		    !PAGE_ALIGNED(pci_resource_start(pdev, bars[i])) ||
		    !PAGE_ALIGNED(pci_resource_len(pdev, bars[i]))) {
			dev_err(&pdev->dev, "BAR%d missing or not page aligned\n",
				bars[i]);
			return -ENODEV;
		}
	}
	if (pci_resource_len(pdev, MDGPU_BAR_REGS) < MDGPU_REGS_SIZE) {
		dev_err(&pdev->dev, "BAR%d smaller than %u bytes\n",
			MDGPU_BAR_REGS, MDGPU_REGS_SIZE);
		return -ENODEV;
	}
	gd->ring_phys = pci_resource_start(pdev, MDGPU_BAR_RING);
	gd->ring_size = pci_resource_len(pdev, MDGPU_BAR_RING);
	gd->aper_phys = pci_resource_start(pdev, MDGPU_BAR_APERTURE);
	gd->aper_size = pci_resource_len(pdev, MDGPU_BAR_APERTURE);
	return 0;
}

static int mdgpu_gdev_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct mdgpu_gdev *gd;
	int ret;

	gd = kzalloc(sizeof(*gd), GFP_KERNEL);
	if (!gd)
		return -ENOMEM;
	kref_init(&gd->ref);
	mutex_init(&gd->lock);
	init_waitqueue_head(&gd->wq);
	gd->pdev = pdev;

	ret = pci_enable_device_mem(pdev);
	if (ret)
		goto err_put;
	ret = pci_request_regions(pdev, MDGPU_GUEST_NAME);
	if (ret)
		goto err_disable;
	ret = mdgpu_gdev_bars(gd);
	if (ret)
		goto err_release;
	gd->regs = pci_iomap(pdev, MDGPU_BAR_REGS, MDGPU_REGS_SIZE);
	if (!gd->regs) {
		ret = -ENOMEM;
		goto err_release;
	}
	ret = mdgpu_gdev_check(gd);
	if (ret)
		goto err_unmap;
	ret = mdgpu_gdev_map_mirror(gd);
	if (ret)
		goto err_unmap;
	ret = mdgpu_gdev_map_shadow(gd);
	if (ret)
		goto err_unmap;
	pci_set_master(pdev);

	ret = ida_alloc(&mdgpu_gdev_ida, GFP_KERNEL);
	if (ret < 0)
		goto err_unmap;
	gd->index = ret;
	snprintf(gd->name, sizeof(gd->name), "mdgpu-vgpu%d", gd->index);

	ret = mdgpu_gdev_irq_init(gd);
	if (ret)
		goto err_ida;
	/*
	 * Reset first: a previous driver instance may have left the ring
	 * mid-way (SQ_TAIL, FENCE); this one starts from tail 0, fence 0.
	 */
	mutex_lock(&gd->lock);
	mdgpu_gdev_write(gd, MDGPU_REG_CONTROL, MDGPU_CONTROL_RESET);
	ret = mdgpu_gdev_start(gd);
	mutex_unlock(&gd->lock);
	if (ret)
		goto err_irq;

	gd->misc.minor = MISC_DYNAMIC_MINOR;
	gd->misc.name = gd->name;
	gd->misc.fops = &mdgpu_gdev_fops;
	gd->misc.parent = &pdev->dev;
	gd->misc.mode = 0600;
	ret = misc_register(&gd->misc);
	if (ret)
		goto err_stop;
	pci_set_drvdata(pdev, gd);

	dev_info(&pdev->dev,
		 "%s: ABI %u.%u, %u ring entries, aperture %llu KiB, %s, registers %s, doorbell %s\n",
		 gd->name, gd->abi_version >> 16, gd->abi_version & 0xffff,
		 gd->ring_entries, (u64)gd->aper_size >> 10,
		 gd->irq_mode == MDGPU_GUEST_IRQ_MSI ? "MSI" : "INTx",
		 gd->mirror ? "mirrored" : "in BAR0 only",
		 gd->shadow ? "shadowed" : "in BAR0 only");
	return 0;

err_stop:
	mdgpu_gdev_write(gd, MDGPU_REG_IRQ_MASK, 0);
	mdgpu_gdev_write(gd, MDGPU_REG_CONTROL, 0);
err_irq:
	mdgpu_gdev_irq_fini(gd);
err_ida:
	ida_free(&mdgpu_gdev_ida, gd->index);
err_unmap:
	pci_clear_master(pdev);
	if (gd->shadow)
		pci_iounmap(pdev, gd->shadow);
	if (gd->mirror)
		pci_iounmap(pdev, gd->mirror);
	pci_iounmap(pdev, gd->regs);
err_release:
	pci_release_regions(pdev);
err_disable:
	pci_disable_device(pdev);
err_put:
	mdgpu_gdev_put(gd);
	return ret;
}

/*
 * Remove (unbind, hot-unplug, module unload).  The open file, if any,
 * outlives this: it sees REMOVED and gets -ENODEV, its mappings are zapped
 * (later accesses get SIGBUS), and it drops the last reference on close.
 */
static void mdgpu_gdev_remove(struct pci_dev *pdev)
{
	struct mdgpu_gdev *gd = pci_get_drvdata(pdev);

	misc_deregister(&gd->misc);
	mutex_lock(&gd->lock);
	mdgpu_gdev_write(gd, MDGPU_REG_IRQ_MASK, 0);
	mdgpu_gdev_write(gd, MDGPU_REG_CONTROL, 0);
	set_bit(MDGPU_GDEV_REMOVED, &gd->flags);
	mdgpu_gdev_revoke(gd);
	mutex_unlock(&gd->lock);
	mdgpu_gdev_irq_fini(gd);
	mdgpu_gdev_kick(gd);
	ida_free(&mdgpu_gdev_ida, gd->index);
	pci_clear_master(pdev);
	if (gd->shadow)
		pci_iounmap(pdev, gd->shadow);
	if (gd->mirror)
		pci_iounmap(pdev, gd->mirror);
	pci_iounmap(pdev, gd->regs);
	pci_release_regions(pdev);
	pci_disable_device(pdev);
	mdgpu_gdev_put(gd);
}

/*
 * sysfs, on the PCI device: the trapped register accesses the driver made
 * (each a VM exit to the VMM), whether it reads the mirror and uses the
 * shadow doorbell, and how its submissions rang.
 */
static ssize_t bar0_reads_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct mdgpu_gdev *gd = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld\n", atomic64_read(&gd->bar0_reads));
}
static DEVICE_ATTR_RO(bar0_reads);

static ssize_t bar0_writes_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct mdgpu_gdev *gd = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld\n", atomic64_read(&gd->bar0_writes));
}
static DEVICE_ATTR_RO(bar0_writes);

static ssize_t register_mirror_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct mdgpu_gdev *gd = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%d\n", gd->mirror ? 1 : 0);
}
static DEVICE_ATTR_RO(register_mirror);

static ssize_t shadow_doorbell_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct mdgpu_gdev *gd = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%d\n", gd->shadow ? 1 : 0);
}
static DEVICE_ATTR_RO(shadow_doorbell);

/* Submissions the daemon took from the shadow doorbell: no VM exit. */
static ssize_t doorbells_shadow_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct mdgpu_gdev *gd = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&gd->doorbells_shadow));
}
static DEVICE_ATTR_RO(doorbells_shadow);

/* Submissions rung in BAR0's SQ_TAIL: a VM exit each. */
static ssize_t doorbells_bar0_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct mdgpu_gdev *gd = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld\n", atomic64_read(&gd->doorbells_bar0));
}
static DEVICE_ATTR_RO(doorbells_bar0);

static ssize_t irq_mode_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	struct mdgpu_gdev *gd = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n",
			  gd->irq_mode == MDGPU_GUEST_IRQ_MSI ? "msi" : "intx");
}
static DEVICE_ATTR_RO(irq_mode);

static struct attribute *mdgpu_gdev_attrs[] = {
	&dev_attr_bar0_reads.attr,
	&dev_attr_bar0_writes.attr,
	&dev_attr_register_mirror.attr,
	&dev_attr_shadow_doorbell.attr,
	&dev_attr_doorbells_shadow.attr,
	&dev_attr_doorbells_bar0.attr,
	&dev_attr_irq_mode.attr,
	NULL,
};
ATTRIBUTE_GROUPS(mdgpu_gdev);

static const struct pci_device_id mdgpu_gdev_ids[] = {
	{ PCI_DEVICE(MDGPU_PCI_VENDOR_ID, MDGPU_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, mdgpu_gdev_ids);

static struct pci_driver mdgpu_gdev_driver = {
	.name = MDGPU_GUEST_NAME,
	.id_table = mdgpu_gdev_ids,
	.probe = mdgpu_gdev_probe,
	.remove = mdgpu_gdev_remove,
	.dev_groups = mdgpu_gdev_groups,
};
module_pci_driver(mdgpu_gdev_driver);

MODULE_DESCRIPTION("mdgpu vGPU guest driver");
MODULE_LICENSE("GPL");
/* mdgpu_version.h is generated by scripts/version.sh (guest/guest.mk). */
MODULE_VERSION(MDGPU_VERSION);
