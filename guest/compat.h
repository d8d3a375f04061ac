/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mdgpu-guest: every kernel-version shim of the guest driver, in one place.
 * Each shim tests for the feature (not for a version number) and names the
 * kernel that changed the API.
 */
#ifndef MDGPU_GUEST_COMPAT_H
#define MDGPU_GUEST_COMPAT_H

#include <linux/pci.h>

/*
 * PCI_IRQ_INTX: added in 6.8 as the new name of PCI_IRQ_LEGACY, which was
 * removed in 6.10.  Debian's 6.1 has only the old name, 6.12 only the new.
 */
#ifndef PCI_IRQ_INTX
#define PCI_IRQ_INTX	PCI_IRQ_LEGACY
#endif

#endif /* MDGPU_GUEST_COMPAT_H */
