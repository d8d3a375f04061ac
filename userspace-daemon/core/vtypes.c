// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The vGPU type table, built from the shared .def file. */
#include <stddef.h>
#include <string.h>

#include "mdgpud/vtypes.h"

static const struct mdgpud_vtype mdgpud_vtypes[] = {
#define MDGPU_TYPE(id_, name_, fb_mib_, div_, max_, w_, sm_, ap_, desc_) \
	{ .id = (id_), .name = (name_), .fb_mib = (fb_mib_),		  \
	  .fb_divisor = (div_), .max_instances = (max_),		  \
	  .default_weight = (w_), .sm_percent = (sm_),			  \
	  .aperture_mib = (ap_), .description = (desc_) },
#include "mdev-types/mdgpu-types.def"
#undef MDGPU_TYPE
};

#define MDGPUD_NVTYPES (sizeof(mdgpud_vtypes) / sizeof(mdgpud_vtypes[0]))

const struct mdgpud_vtype *mdgpud_vtype_by_name(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < MDGPUD_NVTYPES; i++)
		if (!strcmp(mdgpud_vtypes[i].name, name))
			return &mdgpud_vtypes[i];
	return NULL;
}

const struct mdgpud_vtype *mdgpud_vtype_by_id(uint32_t id)
{
	for (size_t i = 0; i < MDGPUD_NVTYPES; i++)
		if (mdgpud_vtypes[i].id == id)
			return &mdgpud_vtypes[i];
	return NULL;
}

uint64_t mdgpud_vtype_fb_quota(const struct mdgpud_vtype *t, uint64_t fb_size)
{
	if (t->fb_divisor)
		return fb_size / t->fb_divisor;
	return t->fb_mib << 20;
}
