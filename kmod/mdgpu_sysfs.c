// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_sysfs.c - scheduling knobs and status in sysfs.
 *
 *   /sys/bus/mdev/devices/<uuid>/mdgpu/     weight cap priority (rw),
 *                                           status stats vgpu_id (ro)
 *   /sys/class/mdgpu/mdgpu<N>/mdgpu/        policy timeslice_us (rw),
 *                                           gpu_name bus_id fb_size
 *                                           sm_count (ro)
 *
 * A write is a decimal number (or a policy name) with at most one trailing
 * newline; anything else, or a value out of range, is -EINVAL and leaves
 * the old value.  Each accepted write queues a KNOB or POLICY event.
 */
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "mdgpu.h"

/* The vGPU behind an mdev device's attribute; set between probe/remove. */
static struct mdgpu_vgpu *mdgpu_sysfs_vgpu(struct device *dev)
{
	return dev_get_drvdata(dev);
}

/* Parse an unsigned decimal in [min, max]; 0 or -EINVAL. */
static int mdgpu_sysfs_parse(const char *buf, u32 min, u32 max, u32 *out)
{
	u32 val;

	if (kstrtou32(buf, 10, &val) || val < min || val > max)
		return -EINVAL;
	*out = val;
	return 0;
}

enum mdgpu_knob { MDGPU_KNOB_WEIGHT, MDGPU_KNOB_CAP, MDGPU_KNOB_PRIORITY };

static const struct {
	u32 min, max;
} mdgpu_knob_range[] = {
	[MDGPU_KNOB_WEIGHT] = { MDGPU_WEIGHT_MIN, MDGPU_WEIGHT_MAX },
	[MDGPU_KNOB_CAP] = { MDGPU_CAP_MIN, MDGPU_CAP_MAX },
	[MDGPU_KNOB_PRIORITY] = { MDGPU_PRIORITY_MIN, MDGPU_PRIORITY_MAX },
};

static u32 *mdgpu_knob_field(struct mdgpu_vgpu *vgpu, enum mdgpu_knob knob)
{
	switch (knob) {
	case MDGPU_KNOB_WEIGHT:
		return &vgpu->weight;
	case MDGPU_KNOB_CAP:
		return &vgpu->cap;
	default:
		return &vgpu->priority;
	}
}

/* A knob attribute: a device_attribute that knows which knob it is. */
struct mdgpu_knob_attr {
	struct device_attribute dattr;
	enum mdgpu_knob knob;
};

static enum mdgpu_knob mdgpu_knob_of(struct device_attribute *attr)
{
	return container_of(attr, struct mdgpu_knob_attr, dattr)->knob;
}

static ssize_t mdgpu_knob_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct mdgpu_vgpu *vgpu = mdgpu_sysfs_vgpu(dev);
	u32 val;

	mutex_lock(&vgpu->lock);
	val = *mdgpu_knob_field(vgpu, mdgpu_knob_of(attr));
	mutex_unlock(&vgpu->lock);
	return sysfs_emit(buf, "%u\n", val);
}

static ssize_t mdgpu_knob_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t count)
{
	struct mdgpu_vgpu *vgpu = mdgpu_sysfs_vgpu(dev);
	enum mdgpu_knob knob = mdgpu_knob_of(attr);
	u32 val;

	if (mdgpu_sysfs_parse(buf, mdgpu_knob_range[knob].min,
			      mdgpu_knob_range[knob].max, &val))
		return -EINVAL;
	mutex_lock(&vgpu->lock);
	*mdgpu_knob_field(vgpu, knob) = val;
	if (knob == MDGPU_KNOB_WEIGHT)
		mdgpu_reg_write(vgpu, MDGPU_REG_WEIGHT, val);
	mdgpu_vgpu_post(vgpu, MDGPU_EV_KNOB);
	mutex_unlock(&vgpu->lock);
	return count;
}

static struct mdgpu_knob_attr mdgpu_attr_weight = {
	__ATTR(weight, 0644, mdgpu_knob_show, mdgpu_knob_store),
	MDGPU_KNOB_WEIGHT,
};

static struct mdgpu_knob_attr mdgpu_attr_cap = {
	__ATTR(cap, 0644, mdgpu_knob_show, mdgpu_knob_store),
	MDGPU_KNOB_CAP,
};

static struct mdgpu_knob_attr mdgpu_attr_priority = {
	__ATTR(priority, 0644, mdgpu_knob_show, mdgpu_knob_store),
	MDGPU_KNOB_PRIORITY,
};

static ssize_t status_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct mdgpu_vgpu *vgpu = mdgpu_sysfs_vgpu(dev);
	u32 status;

	mutex_lock(&vgpu->lock);
	status = mdgpu_reg_read(vgpu, MDGPU_REG_STATUS);
	mutex_unlock(&vgpu->lock);
	if (status & MDGPU_STATUS_BACKEND_LOST)
		return sysfs_emit(buf, "backend-lost\n");
	if (status & MDGPU_STATUS_CONTEXT_LOST)
		return sysfs_emit(buf, "context-lost\n");
	if (status & MDGPU_STATUS_READY)
		return sysfs_emit(buf, "ready\n");
	return sysfs_emit(buf, "idle\n");
}
static DEVICE_ATTR_RO(status);

static ssize_t stats_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct mdgpu_vgpu *vgpu = mdgpu_sysfs_vgpu(dev);
	struct mdgpu_vgpu_stats s;
	u32 gen;

	mutex_lock(&vgpu->lock);
	s = vgpu->stats;
	gen = vgpu->gen;
	mutex_unlock(&vgpu->lock);
	return sysfs_emit(buf,
			  "doorbells: %llu\ncompletions: %llu\ninterrupts: %llu\nbad_accesses: %llu\ndma_bytes: %llu\nresets: %llu\nhangs: %llu\ncontexts_lost: %llu\ngeneration: %u\nbar0_reads: %llu\nbar0_writes: %llu\nshadow_doorbells: %llu\n",
			  s.doorbells, s.completions, s.interrupts,
			  s.bad_accesses, s.dma_bytes, s.resets, s.hangs,
			  s.contexts_lost, gen, s.bar0_reads, s.bar0_writes,
			  s.shadow_doorbells);
}
static DEVICE_ATTR_RO(stats);

static ssize_t vgpu_id_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", mdgpu_sysfs_vgpu(dev)->id);
}
static DEVICE_ATTR_RO(vgpu_id);

static struct attribute *mdgpu_vgpu_attrs[] = {
	&mdgpu_attr_weight.dattr.attr,
	&mdgpu_attr_cap.dattr.attr,
	&mdgpu_attr_priority.dattr.attr,
	&dev_attr_status.attr,
	&dev_attr_stats.attr,
	&dev_attr_vgpu_id.attr,
	NULL,
};

static const struct attribute_group mdgpu_vgpu_group = {
	.name = "mdgpu",
	.attrs = mdgpu_vgpu_attrs,
};

const struct attribute_group *mdgpu_vgpu_groups[] = {
	&mdgpu_vgpu_group,
	NULL,
};

/* ---- parent ------------------------------------------------------------- */

static const char * const mdgpu_policy_names[] = MDGPU_POLICY_NAMES;

static struct mdgpu_parent *mdgpu_sysfs_parent(struct device *dev)
{
	return container_of(dev, struct mdgpu_parent, dev);
}

static ssize_t policy_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct mdgpu_parent *parent = mdgpu_sysfs_parent(dev);
	u32 policy;

	mutex_lock(&parent->lock);
	policy = parent->policy;
	mutex_unlock(&parent->lock);
	return sysfs_emit(buf, "%s\n", mdgpu_policy_names[policy]);
}

static ssize_t policy_store(struct device *dev, struct device_attribute *attr,
			    const char *buf, size_t count)
{
	struct mdgpu_parent *parent = mdgpu_sysfs_parent(dev);
	int policy = sysfs_match_string(mdgpu_policy_names, buf);

	if (policy < 0)
		return -EINVAL;
	mutex_lock(&parent->lock);
	parent->policy = policy;
	mdgpu_parent_post_policy(parent);
	mutex_unlock(&parent->lock);
	return count;
}
static DEVICE_ATTR_RW(policy);

static ssize_t timeslice_us_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct mdgpu_parent *parent = mdgpu_sysfs_parent(dev);
	u32 val;

	mutex_lock(&parent->lock);
	val = parent->timeslice_us;
	mutex_unlock(&parent->lock);
	return sysfs_emit(buf, "%u\n", val);
}

static ssize_t timeslice_us_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	struct mdgpu_parent *parent = mdgpu_sysfs_parent(dev);
	u32 val;

	if (mdgpu_sysfs_parse(buf, MDGPU_TIMESLICE_US_MIN,
			      MDGPU_TIMESLICE_US_MAX, &val))
		return -EINVAL;
	mutex_lock(&parent->lock);
	parent->timeslice_us = val;
	mdgpu_parent_post_policy(parent);
	mutex_unlock(&parent->lock);
	return count;
}
static DEVICE_ATTR_RW(timeslice_us);

/* Read-only facts fixed at registration: no lock needed. */
static ssize_t gpu_name_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", mdgpu_sysfs_parent(dev)->gpu_name);
}
static DEVICE_ATTR_RO(gpu_name);

static ssize_t bus_id_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", mdgpu_sysfs_parent(dev)->bus_id);
}
static DEVICE_ATTR_RO(bus_id);

static ssize_t fb_size_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%llu\n", mdgpu_sysfs_parent(dev)->fb_size);
}
static DEVICE_ATTR_RO(fb_size);

static ssize_t sm_count_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", mdgpu_sysfs_parent(dev)->sm_count);
}
static DEVICE_ATTR_RO(sm_count);

static struct attribute *mdgpu_parent_attrs[] = {
	&dev_attr_policy.attr,
	&dev_attr_timeslice_us.attr,
	&dev_attr_gpu_name.attr,
	&dev_attr_bus_id.attr,
	&dev_attr_fb_size.attr,
	&dev_attr_sm_count.attr,
	NULL,
};

static const struct attribute_group mdgpu_parent_group = {
	.name = "mdgpu",
	.attrs = mdgpu_parent_attrs,
};

const struct attribute_group *mdgpu_parent_groups[] = {
	&mdgpu_parent_group,
	NULL,
};
