/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* vGPU types from mdev-types/mdgpu-types.def, by name or id. */
#ifndef MDGPUD_VTYPES_H
#define MDGPUD_VTYPES_H

#include <stdint.h>

struct mdgpud_vtype {
	uint32_t id;
	const char *name;
	uint64_t fb_mib;
	uint32_t fb_divisor;
	uint32_t max_instances;
	uint32_t default_weight;
	uint32_t sm_percent;
	uint64_t aperture_mib;
	const char *description;
};

const struct mdgpud_vtype *mdgpud_vtype_by_name(const char *name);
const struct mdgpud_vtype *mdgpud_vtype_by_id(uint32_t id);
/* Quota in bytes of a type on a GPU of fb_size bytes. */
uint64_t mdgpud_vtype_fb_quota(const struct mdgpud_vtype *t, uint64_t fb_size);

#endif /* MDGPUD_VTYPES_H */
