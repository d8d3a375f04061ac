// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_types.c - the vGPU type table and the mdev type sysfs callbacks.
 *
 * The table is mdev-types/mdgpu-types.def expanded through an X-macro, so
 * the kernel module and the daemon read the very same rows.
 */
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/sysfs.h>

#include "mdgpu.h"

const struct mdgpu_type_info mdgpu_type_table[MDGPU_NR_TYPES] = {
#define MDGPU_TYPE(_id, _name, _fb_mib, _fb_div, _max, _weight, _sm,	\
		   _ap_mib, _desc)					\
	[MDGPU_TYPE_INDEX_##_id] = {					\
		.id = (_id),						\
		.name = (_name),					\
		.fb_mib = (_fb_mib),					\
		.fb_divisor = (_fb_div),				\
		.max_instances = (_max),				\
		.default_weight = (_weight),				\
		.sm_percent = (_sm),					\
		.aperture_mib = (_ap_mib),				\
		.description = (_desc),					\
	},
#include "mdev-types/mdgpu-types.def"
#undef MDGPU_TYPE
};

static bool mdgpu_type_row_ok(unsigned int i)
{
	const struct mdgpu_type_info *t = &mdgpu_type_table[i];
	unsigned int j;

	if (!t->fb_mib == !t->fb_divisor || !t->max_instances ||
	    !t->aperture_mib || !is_power_of_2(t->aperture_mib) ||
	    t->aperture_mib > 1024 ||
	    t->default_weight < MDGPU_WEIGHT_MIN ||
	    t->default_weight > MDGPU_WEIGHT_MAX || t->sm_percent > 100)
		return false;
	for (j = 0; j < i; j++)
		if (mdgpu_type_table[j].id == t->id)
			return false;
	return true;
}

/*
 * mdgpu_types_check() - refuse to load with a malformed table row.
 *
 * The table is data edited by hand: check once at module load what the
 * rest of the module relies on (exactly one of fb_mib/fb_divisor, a
 * power-of-two aperture of at most 1 GiB, a weight in range, unique ids).
 */
int mdgpu_types_check(void)
{
	unsigned int i;

	for (i = 0; i < MDGPU_NR_TYPES; i++) {
		if (!mdgpu_type_row_ok(i)) {
			pr_err("mdgpu: type table row %u (%s) is malformed\n",
			       mdgpu_type_table[i].id, mdgpu_type_table[i].name);
			return -EINVAL;
		}
	}
	return 0;
}

/* The framebuffer quota of one instance of @info on a GPU of @fb_size. */
u64 mdgpu_type_fb_quota(const struct mdgpu_type_info *info, u64 fb_size)
{
	if (info->fb_divisor)
		return div_u64(fb_size, info->fb_divisor);
	return (u64)info->fb_mib << 20;
}

/*
 * mdgpu_type_available() - instances of @info that can still be created.
 *
 * min(max_instances - instances of this type, unreserved memory / quota),
 * where unreserved memory is fb_size minus the quota of every vGPU of the
 * parent.  Caller must hold parent->lock.
 */
unsigned int mdgpu_type_available(struct mdgpu_parent *parent,
				  const struct mdgpu_type_info *info)
{
	u64 quota = mdgpu_type_fb_quota(info, parent->fb_size);
	u64 reserved = 0, free_bytes;
	unsigned int same = 0;
	struct mdgpu_vgpu *vgpu;

	lockdep_assert_held(&parent->lock);

	if (parent->dying || !quota)
		return 0;
	list_for_each_entry(vgpu, &parent->vgpus, node) {
		reserved += vgpu->fb_quota;
		if (vgpu->type == info)
			same++;
	}
	if (same >= info->max_instances || reserved >= parent->fb_size)
		return 0;
	free_bytes = parent->fb_size - reserved;
	return min_t(u64, info->max_instances - same,
		     div64_u64(free_bytes, quota));
}

static const struct mdgpu_type_info *mdgpu_info_of(struct mdev_type *mtype)
{
	return container_of(mtype, struct mdgpu_type, mtype)->info;
}

unsigned int mdgpu_mdev_get_available(struct mdev_type *mtype)
{
	struct mdgpu_parent *parent = mdgpu_parent_of_mtype(mtype);
	unsigned int n;

	mutex_lock(&parent->lock);
	n = mdgpu_type_available(parent, mdgpu_info_of(mtype));
	mutex_unlock(&parent->lock);
	return n;
}

ssize_t mdgpu_mdev_show_description(struct mdev_type *mtype, char *buf)
{
	struct mdgpu_parent *parent = mdgpu_parent_of_mtype(mtype);
	const struct mdgpu_type_info *info = mdgpu_info_of(mtype);

	return sysfs_emit(buf,
			  "framebuffer: %llu MiB\nmax_instances: %u\ndefault_weight: %u\nsm_percent: %u\naperture: %u MiB\n",
			  mdgpu_type_fb_quota(info, parent->fb_size) >> 20,
			  info->max_instances, info->default_weight,
			  info->sm_percent, info->aperture_mib);
}
