// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: interrupts: MSI, INTx, VFIO_DEVICE_SET_IRQS.
 * Documentation/testing-vm.md describes each test.
 */
#include "vgpu.h"

#include <sys/eventfd.h>

TEST(irq_msi_delivery, FX_VFIO)
{
	int efd = msi_on(f);

	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(fired(efd, 1000), "no MSI after COMPLETE");
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) & MDGPU_IRQ_COMPLETION, "status");
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ALL);
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(fired(efd, 1000), "no second MSI");
	/* Loopback trigger for tests: DATA_NONE, count 1. */
	EXPECT(set_irq_none(f, VFIO_PCI_MSI_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_TRIGGER, 1) == 0, "DATA_NONE");
	EXPECT(fired(efd, 1000), "DATA_NONE trigger did not signal");
	/* fd -1 disables. */
	EXPECT(set_irq_fd(f, VFIO_PCI_MSI_IRQ_INDEX, -1) == 0, "disable");
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(!fired(efd, NO_EV_MS), "signalled after disable");
	close(efd);
}

TEST(irq_masked_no_signal, FX_VFIO)
{
	int efd = msi_on(f);

	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ERROR);
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(!fired(efd, NO_EV_MS), "masked COMPLETION signalled");
	EXPECT(rd32(f, MDGPU_REG_IRQ_STATUS) & MDGPU_IRQ_COMPLETION,
	       "status not latched while masked");
	close(efd);
}

TEST(irq_intx_delivery, FX_VFIO)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	cfg_wr(f, 0x42, 2, 0);		/* MSI off: INTx is used */
	ASSERT(set_irq_fd(f, VFIO_PCI_INTX_IRQ_INDEX, efd) == 0, "INTx eventfd");
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(fired(efd, 1000), "no INTx after COMPLETE");
	/* Automasked: the guest acks, QEMU unmasks, the next one fires. */
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ALL);
	EXPECT(set_irq_none(f, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_UNMASK, 1) == 0, "unmask");
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(fired(efd, 1000), "no INTx after unmask");
	wr32(f, MDGPU_REG_IRQ_STATUS, MDGPU_IRQ_ALL);
	EXPECT(set_irq_none(f, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_UNMASK, 1) == 0, "unmask");
	/* Masked through VFIO: no signal. */
	EXPECT(set_irq_none(f, VFIO_PCI_INTX_IRQ_INDEX,
			    VFIO_IRQ_SET_ACTION_MASK, 1) == 0, "mask");
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(!fired(efd, NO_EV_MS), "INTx fired while masked");
	close(efd);
}

TEST(irq_unmask_pending_fires, FX_VFIO)
{
	int efd = msi_on(f);

	wr32(f, MDGPU_REG_IRQ_MASK, 0);
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(!fired(efd, NO_EV_MS), "masked cause signalled");
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_COMPLETION);
	EXPECT(fired(efd, 1000), "unmasking a pending cause did not interrupt");
	close(efd);
}

TEST(irq_intx_disable_gates, FX_VFIO)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	cfg_wr(f, 0x42, 2, 0);
	ASSERT(set_irq_fd(f, VFIO_PCI_INTX_IRQ_INDEX, efd) == 0, "INTx eventfd");
	wr32(f, MDGPU_REG_IRQ_MASK, MDGPU_IRQ_ALL);
	cfg_wr(f, 0x04, 2, 0x6 | 0x400);	/* INTX_DISABLE */
	ASSERT(complete(f, 0, 0, 0, MDGPU_IRQ_COMPLETION) == 0);
	EXPECT(!fired(efd, NO_EV_MS), "INTx with INTX_DISABLE set");
	cfg_wr(f, 0x04, 2, 0x6);
	EXPECT(fired(efd, 1000), "pending INTx not signalled when re-enabled");
	close(efd);
}

TEST(set_irqs_invalid, FX_VFIO)
{
	int efd = eventfd(0, EFD_CLOEXEC);
	const uint32_t ev = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;

#define SET(idx, st, cnt, fl) set_irqs_raw(f, idx, st, cnt, fl, \
		sizeof(struct vfio_irq_set) + 2 * sizeof(int32_t), efd)
	EXPECT_ERRNO(SET(VFIO_PCI_NUM_IRQS, 0, 1, ev), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_MSI_IRQ_INDEX, 1, 1, ev), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_MSI_IRQ_INDEX, 0, 2, ev), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_MSIX_IRQ_INDEX, 0, 1, ev), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_MSI_IRQ_INDEX, 0, 1, ev |
			 VFIO_IRQ_SET_DATA_BOOL), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_MSI_IRQ_INDEX, 0, 1,
			 VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER |
			 VFIO_IRQ_SET_ACTION_MASK), EINVAL);
	/* MASK/UNMASK: INTx only, and no irqfd resampler (DATA_EVENTFD). */
	EXPECT_ERRNO(SET(VFIO_PCI_MSI_IRQ_INDEX, 0, 1, VFIO_IRQ_SET_DATA_NONE |
			 VFIO_IRQ_SET_ACTION_MASK), EINVAL);
	EXPECT_ERRNO(SET(VFIO_PCI_INTX_IRQ_INDEX, 0, 1, VFIO_IRQ_SET_DATA_EVENTFD |
			 VFIO_IRQ_SET_ACTION_UNMASK), EINVAL);
	/* DATA_NONE, count 0, TRIGGER: disables (valid). */
	EXPECT(SET(VFIO_PCI_MSI_IRQ_INDEX, 0, 0, VFIO_IRQ_SET_DATA_NONE |
		   VFIO_IRQ_SET_ACTION_TRIGGER) == 0, "disable by count 0");
#undef SET
	close(efd);
}
