// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_cfg.c - the vGPU's emulated PCI configuration space.
 *
 * 256 bytes of type-0 header plus an MSI capability at 0x40.  Writes go
 * through a per-byte write mask: bits outside it keep their value, which is
 * how read-only fields ignore writes and how BARs report their size (the
 * address bits below the size are not writable, so writing all-ones reads
 * back ~(size - 1) with the type bits).
 */
#include <linux/bits.h>
#include <linux/pci_regs.h>
#include <linux/string.h>

#include "mdgpu.h"

#define MDGPU_CFG_MSI_CAP	0x40

/* Store @size bytes of @val little-endian at @off. */
static void mdgpu_cfg_put(u8 *cfg, unsigned int off, u32 val,
			  unsigned int size)
{
	unsigned int i;

	for (i = 0; i < size; i++)
		cfg[off + i] = val >> (8 * i);
}

static void mdgpu_cfg_bar(struct mdgpu_vgpu *vgpu, unsigned int bar,
			  u32 size, u32 type_bits)
{
	unsigned int off = PCI_BASE_ADDRESS_0 + 4 * bar;

	mdgpu_cfg_put(vgpu->config, off, type_bits, 4);
	mdgpu_cfg_put(vgpu->config_wmask, off, ~(size - 1), 4);
}

/* Build the reset-state config space of @vgpu; called once, from .init. */
void mdgpu_cfg_init(struct mdgpu_vgpu *vgpu)
{
	u8 *cfg = vgpu->config, *wm = vgpu->config_wmask;
	unsigned int msi = MDGPU_CFG_MSI_CAP;

	memset(cfg, 0, MDGPU_CONFIG_SIZE);
	memset(wm, 0, MDGPU_CONFIG_SIZE);

	mdgpu_cfg_put(cfg, PCI_VENDOR_ID, MDGPU_PCI_VENDOR_ID, 2);
	mdgpu_cfg_put(cfg, PCI_DEVICE_ID, MDGPU_PCI_DEVICE_ID, 2);
	mdgpu_cfg_put(cfg, PCI_STATUS, PCI_STATUS_CAP_LIST, 2);
	mdgpu_cfg_put(cfg, PCI_CLASS_REVISION,
		      MDGPU_PCI_CLASS << 8 | MDGPU_PCI_REVISION, 4);
	mdgpu_cfg_put(cfg, PCI_HEADER_TYPE, PCI_HEADER_TYPE_NORMAL, 1);
	mdgpu_cfg_put(cfg, PCI_SUBSYSTEM_VENDOR_ID,
		      MDGPU_PCI_SUBSYS_VENDOR_ID, 2);
	mdgpu_cfg_put(cfg, PCI_SUBSYSTEM_ID, MDGPU_PCI_SUBSYS_ID, 2);
	mdgpu_cfg_put(cfg, PCI_CAPABILITY_LIST, msi, 1);
	mdgpu_cfg_put(cfg, PCI_INTERRUPT_PIN, 1, 1);	/* INTA# */

	mdgpu_cfg_put(wm, PCI_COMMAND, PCI_COMMAND_IO | PCI_COMMAND_MEMORY |
		      PCI_COMMAND_MASTER | PCI_COMMAND_INTX_DISABLE, 2);
	mdgpu_cfg_put(wm, PCI_INTERRUPT_LINE, 0xff, 1);

	mdgpu_cfg_bar(vgpu, MDGPU_BAR_REGS, MDGPU_REGS_SIZE,
		      PCI_BASE_ADDRESS_SPACE_MEMORY |
		      PCI_BASE_ADDRESS_MEM_TYPE_32);
	mdgpu_cfg_bar(vgpu, MDGPU_BAR_RING, vgpu->ring_size,
		      PCI_BASE_ADDRESS_SPACE_MEMORY |
		      PCI_BASE_ADDRESS_MEM_TYPE_32);
	mdgpu_cfg_bar(vgpu, MDGPU_BAR_APERTURE, vgpu->aperture_size,
		      PCI_BASE_ADDRESS_SPACE_MEMORY |
		      PCI_BASE_ADDRESS_MEM_TYPE_32 |
		      PCI_BASE_ADDRESS_MEM_PREFETCH);

	/* MSI: 64-bit address, one vector; only the enable bit is writable. */
	mdgpu_cfg_put(cfg, msi + PCI_CAP_LIST_ID, PCI_CAP_ID_MSI, 1);
	mdgpu_cfg_put(cfg, msi + PCI_CAP_LIST_NEXT, 0, 1);
	mdgpu_cfg_put(cfg, msi + PCI_MSI_FLAGS, PCI_MSI_FLAGS_64BIT, 2);
	mdgpu_cfg_put(wm, msi + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE, 2);
	mdgpu_cfg_put(wm, msi + PCI_MSI_ADDRESS_LO, 0xfffffffc, 4);
	mdgpu_cfg_put(wm, msi + PCI_MSI_ADDRESS_HI, 0xffffffff, 4);
	mdgpu_cfg_put(wm, msi + PCI_MSI_DATA_64, 0xffff, 2);
}

/*
 * mdgpu_cfg_access() - one naturally aligned 1, 2 or 4-byte access.
 *
 * Returns 0, or -EINVAL for a bad size, alignment or offset.  The caller
 * splits larger accesses.  Caller must hold vgpu->lock.
 */
int mdgpu_cfg_access(struct mdgpu_vgpu *vgpu, u32 off, u32 size, u32 *val,
		     bool write)
{
	u32 i, v = 0;

	lockdep_assert_held(&vgpu->lock);

	if ((size != 1 && size != 2 && size != 4) || (off & (size - 1)) ||
	    off >= MDGPU_CONFIG_SIZE || size > MDGPU_CONFIG_SIZE - off)
		return -EINVAL;

	if (!write) {
		for (i = 0; i < size; i++)
			v |= (u32)vgpu->config[off + i] << (8 * i);
		*val = v;
		return 0;
	}

	for (i = 0; i < size; i++) {
		u8 wm = vgpu->config_wmask[off + i];
		u8 b = *val >> (8 * i);
		u8 *cur = &vgpu->config[off + i];

		*cur = (*cur & ~wm) | (b & wm);
	}
	if (off < PCI_COMMAND + 2 && off + size > PCI_COMMAND)
		mdgpu_irq_update(vgpu);
	return 0;
}
