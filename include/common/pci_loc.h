/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A PCI location as text: "domain:bus:device.function" in hexadecimal,
 * any case, as the kernel, CUDA and NVML write it.  Shared by the
 * daemon's configuration (parent_pci, cuda_device, worker uids),
 * libcuda's cuDeviceGetByPCIBusId and NVML's GetHandleByPciBusId, so
 * that the three accept the same spellings (user space, not ABI).
 */
#ifndef MDGPU_COMMON_PCI_LOC_H
#define MDGPU_COMMON_PCI_LOC_H

#include <errno.h>
#include <stdint.h>

struct mdgpu_pci_loc {
	uint32_t dom, bus, slot, fn;
};

/* The domain may be left out ("bus:device.function", domain 0). */
#define MDGPU_PCI_LOC_DOMAIN_OPTIONAL	(1u << 0)
/* The function may be left out after a domain ("domain:bus:device",
 * function 0), as cuDeviceGetByPCIBusId allows. */
#define MDGPU_PCI_LOC_FUNCTION_OPTIONAL	(1u << 1)

/*
 * One field: 1 to max_digits hexadecimal digits, then the character end
 * (or, where end_optional, the end of the string); *s moves past both.
 */
static inline int mdgpu_pci_loc_field(const char **s, int max_digits,
				      char end, int end_optional,
				      uint32_t *out)
{
	uint32_t v = 0;
	int n = 0;

	for (;; (*s)++, n++) {
		char c = **s;
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		if (n == max_digits)
			return -EINVAL;
		v = v << 4 | (uint32_t)d;
	}
	if (!n || (**s != end && !(end_optional && !**s)))
		return -EINVAL;
	if (**s)
		(*s)++;
	*out = v;
	return 0;
}

/*
 * s as a location into *loc: domain up to 8 digits (at most INT32_MAX,
 * as CUDA's int attribute holds it), bus 2, device 2 (at most 0x1f),
 * function 1 (at most 7), and nothing after; 0, or -EINVAL.  flags:
 * MDGPU_PCI_LOC_*.  Reads no further than the first byte that does not
 * fit.
 */
static inline int mdgpu_pci_loc_parse(const char *s, unsigned int flags,
				      struct mdgpu_pci_loc *loc)
{
	int colons = 0, dot = 0;

	for (const char *p = s; *p && colons < 3; p++) {
		colons += *p == ':';
		dot |= *p == '.';
	}
	loc->dom = 0;
	loc->fn = 0;
	if (colons == 2 || !(flags & MDGPU_PCI_LOC_DOMAIN_OPTIONAL)) {
		if (mdgpu_pci_loc_field(&s, 8, ':', 0, &loc->dom))
			return -EINVAL;
	}
	if (mdgpu_pci_loc_field(&s, 2, ':', 0, &loc->bus))
		return -EINVAL;
	if (!dot && colons == 2 && (flags & MDGPU_PCI_LOC_FUNCTION_OPTIONAL)) {
		if (mdgpu_pci_loc_field(&s, 2, '\0', 1, &loc->slot))
			return -EINVAL;
	} else if (mdgpu_pci_loc_field(&s, 2, '.', 0, &loc->slot) ||
		   mdgpu_pci_loc_field(&s, 1, '\0', 1, &loc->fn)) {
		return -EINVAL;
	}
	if (*s || loc->dom > INT32_MAX || loc->slot > 0x1f || loc->fn > 7)
		return -EINVAL;
	return 0;
}

#endif /* MDGPU_COMMON_PCI_LOC_H */
