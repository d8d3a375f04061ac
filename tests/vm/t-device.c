// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: the VFIO device: info, config space, BAR0 registers,
 * BAR2/BAR4 regions and mmap.
 * Documentation/testing-vm.md describes each test.
 */
#include "vgpu.h"

TEST(device_info, FX_VFIO)
{
	struct vfio_device_info di = { .argsz = sizeof(di) };

	ASSERT(ioctl(f->dev, VFIO_DEVICE_GET_INFO, &di) == 0);
	EXPECT(di.flags & VFIO_DEVICE_FLAGS_PCI, "flags 0x%x", di.flags);
	EXPECT(di.flags & VFIO_DEVICE_FLAGS_RESET, "no RESET flag (QEMU warns)");
	EXPECT(di.num_regions == VFIO_PCI_NUM_REGIONS, "regions %u",
	       di.num_regions);
	EXPECT(di.num_irqs == VFIO_PCI_NUM_IRQS, "irqs %u", di.num_irqs);
}

TEST(region_info, FX_VFIO)
{
	const struct vtype *t = vtype_by_name("1g");
	uint64_t ring = MDGPU_RING_REGION_BYTES(rd32(f, MDGPU_REG_RING_ENTRIES));
	uint64_t p2 = 1;
	const uint32_t rw = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;

	while (p2 < ring)
		p2 <<= 1;
	EXPECT(f->rg[VFIO_PCI_CONFIG_REGION_INDEX].size == 256, "config size");
	EXPECT(f->rg[0].size == MDGPU_REGS_SIZE, "BAR0 size");
	EXPECT((f->rg[0].flags & rw) == rw, "BAR0 flags 0x%x", f->rg[0].flags);
	EXPECT(!(f->rg[0].flags & VFIO_REGION_INFO_FLAG_MMAP), "BAR0 mmap-able");
	EXPECT(f->rg[2].size == p2, "BAR2 size 0x%" PRIx64 " want 0x%" PRIx64,
	       f->rg[2].size, p2);
	EXPECT(f->rg[4].size == t->aperture_mib * MIB, "BAR4 size");
	EXPECT((f->rg[2].flags & (rw | VFIO_REGION_INFO_FLAG_MMAP)) ==
	       (rw | VFIO_REGION_INFO_FLAG_MMAP), "BAR2 flags 0x%x", f->rg[2].flags);
	EXPECT((f->rg[4].flags & (rw | VFIO_REGION_INFO_FLAG_MMAP)) ==
	       (rw | VFIO_REGION_INFO_FLAG_MMAP), "BAR4 flags 0x%x", f->rg[4].flags);
	for (int i = 1; i <= 8; i++)
		if (i != 2 && i != 4 && i != VFIO_PCI_CONFIG_REGION_INDEX)
			EXPECT(f->rg[i].size == 0, "region %d size", i);
}

TEST(irq_info, FX_VFIO)
{
	static const struct { uint32_t index, count, flags; } want[] = {
		{ VFIO_PCI_INTX_IRQ_INDEX, 1, VFIO_IRQ_INFO_EVENTFD |
		  VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED },
		{ VFIO_PCI_MSI_IRQ_INDEX, 1, VFIO_IRQ_INFO_EVENTFD |
		  VFIO_IRQ_INFO_NORESIZE },
		{ VFIO_PCI_MSIX_IRQ_INDEX, 0, 0 },
		{ VFIO_PCI_ERR_IRQ_INDEX, 0, 0 },
		{ VFIO_PCI_REQ_IRQ_INDEX, 1, VFIO_IRQ_INFO_EVENTFD |
		  VFIO_IRQ_INFO_NORESIZE },
	};

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		struct vfio_irq_info ii = { .argsz = sizeof(ii),
					    .index = want[i].index };

		EXPECT(ioctl(f->dev, VFIO_DEVICE_GET_IRQ_INFO, &ii) == 0,
		       "irq %u", want[i].index);
		EXPECT(ii.count == want[i].count, "irq %u count %u",
		       want[i].index, ii.count);
		EXPECT((ii.flags & want[i].flags) == want[i].flags,
		       "irq %u flags 0x%x", want[i].index, ii.flags);
	}
}

TEST(config_ids, FX_VFIO)
{
	EXPECT(cfg_rd(f, 0x00, 2) == MDGPU_PCI_VENDOR_ID, "vendor");
	EXPECT(cfg_rd(f, 0x02, 2) == MDGPU_PCI_DEVICE_ID, "device");
	EXPECT(cfg_rd(f, 0x08, 1) == MDGPU_PCI_REVISION, "revision");
	EXPECT((cfg_rd(f, 0x08, 4) >> 8) == MDGPU_PCI_CLASS, "class 0x%x",
	       cfg_rd(f, 0x08, 4) >> 8);
	EXPECT(cfg_rd(f, 0x0e, 1) == 0, "header type");
	EXPECT(cfg_rd(f, 0x2c, 2) == MDGPU_PCI_SUBSYS_VENDOR_ID, "subsys vendor");
	EXPECT(cfg_rd(f, 0x2e, 2) == MDGPU_PCI_SUBSYS_ID, "subsys id");
	EXPECT(cfg_rd(f, 0x06, 2) & 0x10, "status: no capability list");
	EXPECT(cfg_rd(f, 0x34, 1) == 0x40, "capability pointer 0x%x",
	       cfg_rd(f, 0x34, 1));
	EXPECT(cfg_rd(f, 0x3d, 1) == 1, "interrupt pin");
	/* The same dword read in 1, 2 and 4-byte pieces agrees. */
	EXPECT(cfg_rd(f, 0x00, 4) == (cfg_rd(f, 0x00, 2) | cfg_rd(f, 0x02, 2) << 16),
	       "4-byte vs 2-byte");
	EXPECT(cfg_rd(f, 0x01, 1) == (MDGPU_PCI_VENDOR_ID >> 8), "1-byte");
}

TEST(config_bar_sizing, FX_VFIO)
{
	for (int bar = 0; bar < 6; bar++) {
		uint32_t off = 0x10 + 4 * bar, orig = cfg_rd(f, off, 4), want = 0;

		if (bar == 0 || bar == 2 || bar == 4) {
			want = ~(uint32_t)(f->rg[bar].size - 1) & ~0xfU;
			if (bar == 4)
				want |= 0x8;	/* prefetchable */
			EXPECT((orig & 0xf) == (want & 0xf), "BAR%d type bits 0x%x",
			       bar, orig);
		}
		cfg_wr(f, off, 4, 0xffffffff);
		EXPECT(cfg_rd(f, off, 4) == want, "BAR%d probe 0x%x want 0x%x",
		       bar, cfg_rd(f, off, 4), want);
		cfg_wr(f, off, 4, orig);
	}
	/* A base address sticks (QEMU restores it after sizing). */
	cfg_wr(f, 0x10, 4, 0xfe000000);
	EXPECT(cfg_rd(f, 0x10, 4) == 0xfe000000, "BAR0 = 0x%x", cfg_rd(f, 0x10, 4));
}

TEST(config_command, FX_VFIO)
{
	uint16_t want = 0x2 | 0x4 | 0x400;	/* MEMORY, MASTER, INTX_DISABLE */
	uint32_t v;

	cfg_wr(f, 0x04, 2, 0xffff);
	v = cfg_rd(f, 0x04, 2);
	/* IO (bit 0) is "ignored": either reading back or not is accepted. */
	EXPECT((v & ~1U) == want, "command 0x%x", v);
	cfg_wr(f, 0x04, 2, 0);
	EXPECT((cfg_rd(f, 0x04, 2) & ~1U) == 0, "command not cleared");
	cfg_wr(f, 0x04, 2, 0x6);
	EXPECT(cfg_rd(f, 0x04, 2) == 0x6, "memory+master");
	cfg_wr(f, 0x3c, 1, 0x0b);	/* interrupt line: firmware scratch */
	EXPECT(cfg_rd(f, 0x3c, 1) == 0x0b, "interrupt line 0x%x", cfg_rd(f, 0x3c, 1));
}

TEST(config_msi_capability, FX_VFIO)
{
	uint32_t ctl = cfg_rd(f, 0x42, 2);

	EXPECT(cfg_rd(f, 0x40, 1) == 0x05, "cap id 0x%x", cfg_rd(f, 0x40, 1));
	EXPECT(cfg_rd(f, 0x41, 1) == 0x00, "next 0x%x", cfg_rd(f, 0x41, 1));
	EXPECT(ctl & 0x80, "not 64-bit: 0x%x", ctl);
	EXPECT((ctl & 0x0e) == 0, "more than one vector: 0x%x", ctl);
	EXPECT(!(ctl & 1), "enabled at start");
	cfg_wr(f, 0x42, 2, 0xffff);
	ctl = cfg_rd(f, 0x42, 2);
	EXPECT(ctl & 1, "enable bit not writable");
	EXPECT((ctl & 0x7e) == 0, "read-only MSI control bits changed: 0x%x", ctl);
	cfg_wr(f, 0x42, 2, 0);
	EXPECT(!(cfg_rd(f, 0x42, 2) & 1), "enable bit stuck");
	cfg_wr(f, 0x44, 4, 0xfee00000);
	cfg_wr(f, 0x48, 4, 0x1);
	cfg_wr(f, 0x4c, 2, 0x4021);
	EXPECT(cfg_rd(f, 0x44, 4) == 0xfee00000, "address lo");
	EXPECT(cfg_rd(f, 0x48, 4) == 0x1, "address hi");
	EXPECT(cfg_rd(f, 0x4c, 2) == 0x4021, "data");
}

TEST(config_readonly, FX_VFIO)
{
	uint32_t id = cfg_rd(f, 0x00, 4), cls = cfg_rd(f, 0x08, 4);

	cfg_wr(f, 0x00, 4, 0x12345678);
	cfg_wr(f, 0x08, 4, 0xffffffff);
	cfg_wr(f, 0x0e, 1, 0xff);
	cfg_wr(f, 0x2c, 4, 0);
	cfg_wr(f, 0x34, 1, 0x80);
	cfg_wr(f, 0x3d, 1, 4);
	cfg_wr(f, 0x06, 2, 0);
	EXPECT(cfg_rd(f, 0x00, 4) == id, "IDs changed");
	EXPECT(cfg_rd(f, 0x08, 4) == cls, "class/revision changed");
	EXPECT(cfg_rd(f, 0x0e, 1) == 0, "header type changed");
	EXPECT(cfg_rd(f, 0x2c, 2) == MDGPU_PCI_SUBSYS_VENDOR_ID, "subsys changed");
	EXPECT(cfg_rd(f, 0x34, 1) == 0x40, "cap pointer changed");
	EXPECT(cfg_rd(f, 0x3d, 1) == 1, "interrupt pin changed");
	EXPECT(cfg_rd(f, 0x06, 2) & 0x10, "capability list bit cleared");
}

/*
 * QEMU's vfio-pci reads the whole config space with one pread() at realize
 * and fails the device if it is short, so accesses inside the 256 bytes of
 * any length and alignment must work (split into naturally aligned pieces).
 * Documentation/kmod.md's "anything else -EINVAL" would break QEMU; see
 * Documentation/testing-vm.md, Decisions.
 */
TEST(config_whole_and_unaligned, FX_VFIO)
{
	uint8_t all[256], one;
	uint32_t v = 0;
	const int c = VFIO_PCI_CONFIG_REGION_INDEX;
	int bad = 0;

	ASSERT(rg_rw(f, c, 0, all, sizeof(all), 0) == sizeof(all),
	       "256-byte read (QEMU realize)");
	for (unsigned int i = 0; i < sizeof(all); i++) {
		one = (uint8_t)cfg_rd(f, i, 1);
		bad += one != all[i];
	}
	EXPECT(!bad, "%d bytes differ between the 256-byte and 1-byte reads", bad);
	EXPECT(rg_rw(f, c, 0x01, &v, 2, 0) == 2 &&
	       v == (uint32_t)(all[1] | all[2] << 8), "unaligned 2 at 1: 0x%x", v);
	v = 0;
	EXPECT(rg_rw(f, c, 0x03, &v, 3, 0) == 3 &&
	       v == (uint32_t)(all[3] | all[4] << 8 | all[5] << 16),
	       "3 at 3: 0x%x", v);
	/* An unaligned write of the scratch-free MSI data word lands. */
	v = 0x5aa5;
	EXPECT(rg_rw(f, c, 0x4c, &v, 2, 1) == 2, "MSI data write");
	EXPECT(cfg_rd(f, 0x4c, 2) == 0x5aa5, "MSI data 0x%x", cfg_rd(f, 0x4c, 2));
}

TEST(config_bad_access, FX_VFIO)
{
	static const struct { uint64_t off; size_t size; } bad[] = {
		{ 0x100, 4 }, { 0x100, 1 }, { 0xfc, 8 }, { 0xff, 2 },
		{ 0x00, 257 }, { 0xfff0, 4 },
	};
	const int c = VFIO_PCI_CONFIG_REGION_INDEX;
	uint8_t buf[512] = { 0 };

	for (int w = 0; w < 2; w++)
		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			ssize_t r = rg_rw(f, c, bad[i].off, buf, bad[i].size, w);

			EXPECT(r == -EINVAL, "%s of %zu at 0x%" PRIx64 ": %zd",
			       w ? "write" : "read", bad[i].size, bad[i].off, r);
		}
	EXPECT(cfg_rd(f, 0x00, 2) == MDGPU_PCI_VENDOR_ID, "config damaged");
}

/* ---------------------------------------------------------------- */
/* tests: BAR0 registers                                             */
/* ---------------------------------------------------------------- */

TEST(regs_identity, FX_VFIO)
{
	const struct vtype *t = vtype_by_name("1g");
	uint32_t st = rd32(f, MDGPU_REG_STATUS);

	EXPECT(rd32(f, MDGPU_REG_MAGIC) == MDGPU_MAGIC, "MAGIC");
	EXPECT(rd32(f, MDGPU_REG_VERSION) == MDGPU_ABI_VERSION, "VERSION");
	EXPECT(rd32(f, MDGPU_REG_RING_ENTRIES) == MDGPU_RING_ENTRIES_DEFAULT,
	       "RING_ENTRIES");
	EXPECT(rd32(f, MDGPU_REG_TYPE_ID) == t->id, "TYPE_ID");
	EXPECT(rd32(f, MDGPU_REG_APERTURE_SIZE) == t->aperture_mib * MIB,
	       "APERTURE_SIZE");
	EXPECT((rd32(f, MDGPU_REG_FB_QUOTA_LO) |
		(uint64_t)rd32(f, MDGPU_REG_FB_QUOTA_HI) << 32) == vtype_quota(t),
	       "FB_QUOTA");
	EXPECT(rd32(f, MDGPU_REG_SM_COUNT) == SM_COUNT, "SM_COUNT");
	EXPECT(rd32(f, MDGPU_REG_WEIGHT) == t->default_weight, "WEIGHT");
	EXPECT(st & MDGPU_STATUS_READY, "STATUS 0x%x not READY", st);
	EXPECT(!(st & MDGPU_STATUS_BACKEND_LOST), "STATUS 0x%x", st);
	EXPECT(rd32(f, MDGPU_REG_SQ_HEAD) == 0 && rd32(f, MDGPU_REG_SQ_TAIL) == 0,
	       "ring pointers");
}

TEST(regs_readonly_ignore_writes, FX_VFIO)
{
	static const uint32_t ro[] = {
		MDGPU_REG_MAGIC, MDGPU_REG_VERSION, MDGPU_REG_STATUS,
		MDGPU_REG_RING_ENTRIES, MDGPU_REG_SQ_HEAD, MDGPU_REG_ERROR,
		MDGPU_REG_FENCE_LO, MDGPU_REG_FENCE_HI, MDGPU_REG_FB_QUOTA_LO,
		MDGPU_REG_FB_QUOTA_HI, MDGPU_REG_FB_USED_LO, MDGPU_REG_FB_USED_HI,
		MDGPU_REG_APERTURE_SIZE, MDGPU_REG_TYPE_ID, MDGPU_REG_WEIGHT,
		MDGPU_REG_SM_COUNT,
	};

	for (size_t i = 0; i < ARRAY_SIZE(ro); i++) {
		uint32_t before = rd32(f, ro[i]);

		wr32(f, ro[i], ~before);
		EXPECT(rd32(f, ro[i]) == before, "register 0x%x changed", ro[i]);
	}
}

TEST(regs_scratch_and_mask, FX_VFIO)
{
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0, "SCRATCH not 0 at start");
	wr32(f, MDGPU_REG_SCRATCH, 0xa5a55a5a);
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0xa5a55a5a, "SCRATCH");
	wr32(f, MDGPU_REG_SCRATCH, 0);
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0, "SCRATCH");
	wr32(f, MDGPU_REG_IRQ_MASK, 0xffffffff);
	EXPECT(rd32(f, MDGPU_REG_IRQ_MASK) == MDGPU_IRQ_ALL, "IRQ_MASK 0x%x",
	       rd32(f, MDGPU_REG_IRQ_MASK));
	wr32(f, MDGPU_REG_CONTROL, 0xffffffff & ~MDGPU_CONTROL_RESET);
	EXPECT(rd32(f, MDGPU_REG_CONTROL) == MDGPU_CONTROL_ENABLE, "CONTROL 0x%x",
	       rd32(f, MDGPU_REG_CONTROL));
	EXPECT(rd32(f, MDGPU_REG_STATUS) & MDGPU_STATUS_ENABLED, "not ENABLED");
}

TEST(regs_reserved_read_zero, FX_VFIO)
{
	static const uint32_t res[] = { MDGPU_REG_LAST + 4, 0x100, 0x800, 0xffc };

	for (size_t i = 0; i < ARRAY_SIZE(res); i++) {
		EXPECT(rd32(f, res[i]) == 0, "0x%x", res[i]);
		wr32(f, res[i], 0xffffffff);
		EXPECT(rd32(f, res[i]) == 0, "0x%x after write", res[i]);
	}
}

TEST(regs_irq_status_rw1c, FX_VFIO)
{
	wr32(f, MDGPU_REG_IRQ_STATUS, 0xffffffff);	/* no effect on 0 */
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == 0, "IRQ_STATUS not 0");
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION | MDGPU_IRQ_ERROR) == 0);
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) ==
	       (MDGPU_IRQ_COMPLETION | MDGPU_IRQ_ERROR), "IRQ_STATUS 0x%x",
	       rd32(f, MDGPU_REG_IRQ_STATUS));
	wr32(f, MDGPU_REG_IRQ_STATUS, 0);		/* writing 0 clears nothing */
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) ==
	       (MDGPU_IRQ_COMPLETION | MDGPU_IRQ_ERROR), "0 cleared bits");
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_COMPLETION);
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == MDGPU_IRQ_ERROR,
	       "IRQ_STATUS 0x%x", rd32(f, MDGPU_REG_IRQ_STATUS));
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ERROR);
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) == 0, "not cleared");
}

TEST(bar0_bad_access, FX_VFIO)
{
	uint64_t v = 0;
	long long bad0 = stat_value(UUID0, "bad_accesses");
	int n = 0;

	for (int w = 0; w < 2; w++) {
		static const struct { uint64_t off; size_t size; } bad[] = {
			{ 0x02, 4 }, { 0x01, 4 }, { 0x4c, 1 }, { 0x4c, 2 },
			{ 0x48, 8 }, { 0x1000, 4 }, { 0xffe, 4 }, { 0xffc, 8 },
			{ 0x2000, 4 },
		};

		for (size_t i = 0; i < ARRAY_SIZE(bad); i++, n++)
			EXPECT(rg_rw(f, 0, bad[i].off, &v, bad[i].size, w) == -EINVAL,
			       "%s of %zu at 0x%" PRIx64, w ? "write" : "read",
			       bad[i].size, bad[i].off);
	}
	EXPECT(rd32(f, MDGPU_REG_SCRATCH) == 0, "a rejected write landed");
	EXPECT(rd32(f, MDGPU_REG_MAGIC) == MDGPU_MAGIC, "MAGIC");
	EXPECT(bad0 >= 0, "no bad_accesses in stats");
	EXPECT(stat_value(UUID0, "bad_accesses") >= bad0 + n,
	       "bad_accesses %lld -> %lld, %d rejected",
	       bad0, stat_value(UUID0, "bad_accesses"), n);
}

TEST(ring_aperture_region_rw, FX_VFIO)
{
	for (int bar = 2; bar <= 4; bar += 2) {
		uint64_t sz = f->rg[bar].size;
		uint8_t b[16] = "0123456789abcde", r[16] = { 0 };
		uint32_t w = 0xc0ffee00 + bar, x = 0;

		EXPECT(rg_rw(f, bar, sz - 16, b, 16, 1) == 16, "write end");
		EXPECT(rg_rw(f, bar, sz - 16, r, 16, 0) == 16 && !memcmp(b, r, 16),
		       "read end");
		EXPECT(rg_rw(f, bar, 0x10, &w, 4, 1) == 4, "write 4");
		EXPECT(rg_rw(f, bar, 0x11, &x, 1, 0) == 1 &&
		       x == ((w >> 8) & 0xff), "1-byte read 0x%x", x);
		EXPECT(rg_rw(f, bar, sz - 8, b, 16, 1) == -EINVAL, "straddle end");
		EXPECT(rg_rw(f, bar, sz, b, 1, 0) == -EINVAL, "read past end");
		EXPECT(rg_rw(f, bar, sz, b, 1, 1) == -EINVAL, "write past end");
	}
}

static void mmap_check(struct fx *f, int bar, unsigned int region)
{
	size_t sz = f->rg[bar].size;
	volatile uint32_t *g = bar_map(f, bar), *d;
	uint32_t v = 0;

	ASSERT(g, "mmap BAR%d", bar);
	d = ctl_map(f, region, sz);
	EXPECT(d, "mmap /dev/mdgpu region %u", region);
	g[0] = 0x11223344;
	g[sz / 4 - 1] = 0x55667788;
	EXPECT(rg_rw(f, bar, 0, &v, 4, 0) == 4 && v == 0x11223344,
	       "region read 0x%x", v);
	EXPECT(rg_rw(f, bar, sz - 4, &v, 4, 0) == 4 && v == 0x55667788,
	       "region read end 0x%x", v);
	if (d) {
		EXPECT(d[0] == 0x11223344 && d[sz / 4 - 1] == 0x55667788,
		       "daemon sees 0x%x 0x%x", d[0], d[sz / 4 - 1]);
		d[1] = 0x99aabbcc;
		EXPECT(g[1] == 0x99aabbcc, "guest sees 0x%x", g[1]);
		munmap((void *)d, sz);
	}
	v = 0xfeedf00d;
	EXPECT(rg_rw(f, bar, 8, &v, 4, 1) == 4 && g[2] == 0xfeedf00d,
	       "region write not in the mapping");
	/* Past the region: the mapping must be refused. */
	EXPECT(mmap(NULL, sz * 2, PROT_READ, MAP_SHARED, f->dev,
		    f->rg[bar].offset) == MAP_FAILED, "oversized mmap accepted");
	EXPECT(ctl_map(f, region, sz * 2) == NULL, "oversized ctl mmap accepted");
	munmap((void *)g, sz);
}

TEST(mmap_ring_bar2, FX_VFIO)
{
	mmap_check(f, MDGPU_BAR_RING, MDGPU_CTL_MMAP_RING);
}

TEST(mmap_aperture_bar4, FX_VFIO)
{
	mmap_check(f, MDGPU_BAR_APERTURE, MDGPU_CTL_MMAP_APERTURE);
}

TEST(bar0_not_mmapable, FX_VFIO)
{
	EXPECT(mmap(NULL, MDGPU_REGS_SIZE, PROT_READ, MAP_SHARED, f->dev,
		    f->rg[0].offset) == MAP_FAILED, "BAR0 mmap accepted");
}
