// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_parent.c - mdev parents: one per GPU a daemon registers.
 *
 * Each parent has a struct device "mdgpu<id>" of class mdgpu that carries
 * the parent-level knobs.  The mdev parent (mdev_register_parent(), listed
 * under /sys/class/mdev_bus) is the GPU's own PCI device when the daemon
 * registers with MDGPU_REGISTER_F_PCI (mdgpu_pci.c; mdgpu<id> is then a
 * child of the PCI device), else mdgpu<id> itself.  A parent outlives the
 * daemon file that registered it: the file closing only marks its vGPUs
 * BACKEND_LOST, and a daemon registering the same bus_id takes the parent
 * over again.  The struct device's reference count keeps the memory alive;
 * each vGPU holds one reference.
 */
#include <linux/ctype.h>
#include <linux/idr.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "mdgpu.h"

/* Protects mdgpu_parents, parent ids and parent ownership changes. */
DEFINE_MUTEX(mdgpu_lock);
LIST_HEAD(mdgpu_parents);		/* struct mdgpu_parent, mdgpu_lock */
static DEFINE_IDA(mdgpu_parent_ida);	/* parent ids, lowest free first */

static void mdgpu_parent_dev_release(struct device *dev)
{
	struct mdgpu_parent *parent = container_of(dev, struct mdgpu_parent,
						   dev);

	/* Pairs with mdgpu_pci_get() in mdgpu_parent_create(). */
	pci_dev_put(parent->pdev);
	ida_free(&mdgpu_parent_ida, parent->id);
	mutex_destroy(&parent->lock);
	kfree(parent);
}

/* The device the mdev core knows as the parent. */
static struct device *mdgpu_parent_mdev_dev(struct mdgpu_parent *parent)
{
	return parent->pdev ? &parent->pdev->dev : &parent->dev;
}

static struct mdgpu_parent *mdgpu_parent_find_bus_id(const char *bus_id)
{
	struct mdgpu_parent *parent;

	lockdep_assert_held(&mdgpu_lock);

	list_for_each_entry(parent, &mdgpu_parents, node)
		if (!strcmp(parent->bus_id, bus_id))
			return parent;
	return NULL;
}

/* The parent on PCI device @pdev.  Caller must hold mdgpu_lock. */
struct mdgpu_parent *mdgpu_parent_find_pci(struct pci_dev *pdev)
{
	struct mdgpu_parent *parent;

	lockdep_assert_held(&mdgpu_lock);

	list_for_each_entry(parent, &mdgpu_parents, node)
		if (parent->pdev == pdev)
			return parent;
	return NULL;
}

static struct mdgpu_parent *mdgpu_parent_find_id(u32 id)
{
	struct mdgpu_parent *parent;

	lockdep_assert_held(&mdgpu_lock);

	list_for_each_entry(parent, &mdgpu_parents, node)
		if (parent->id == id)
			return parent;
	return NULL;
}

/*
 * A NUL-terminated, non-empty, printable ASCII string inside its array
 * (the kernel's isprint() also accepts Latin-1).
 */
static bool mdgpu_name_ok(const char *s, size_t size)
{
	size_t len = strnlen(s, size), i;

	if (!len || len == size)
		return false;
	for (i = 0; i < len; i++)
		if (!isascii(s[i]) || !isprint(s[i]))
			return false;
	return true;
}

/*
 * The one validator of MDGPU_CTL_REGISTER_GPU input.  A PCI address is
 * rewritten in its canonical form.
 */
static int mdgpu_register_check(struct mdgpu_ctl_register *req)
{
	if (req->abi_version != MDGPU_ABI_VERSION)
		return -EPROTO;
	if ((req->flags & ~MDGPU_REGISTER_F_PCI) || req->reserved ||
	    !mdgpu_name_ok(req->name, sizeof(req->name)) ||
	    !mdgpu_name_ok(req->bus_id, sizeof(req->bus_id)) ||
	    req->fb_size < SZ_1G || !req->sm_count)
		return -EINVAL;
	if (req->flags & MDGPU_REGISTER_F_PCI)
		return mdgpu_pci_canonical(req->bus_id, sizeof(req->bus_id));
	return 0;
}

/* Queue the parent's scheduling knobs.  Caller must hold parent->lock. */
void mdgpu_parent_post_policy(struct mdgpu_parent *parent)
{
	struct mdgpu_ctl_event ev = {};

	lockdep_assert_held(&parent->lock);

	ev.type = MDGPU_EV_POLICY;
	ev.parent_id = parent->id;
	ev.policy.policy = parent->policy;
	ev.policy.timeslice_us = parent->timeslice_us;
	mdgpu_event_post(parent, &parent->policy_ev, &ev);
}

static void mdgpu_parent_set_owner(struct mdgpu_parent *parent,
				   struct mdgpu_ctl_file *file)
{
	lockdep_assert_held(&parent->lock);

	spin_lock(&mdgpu_ev_lock);
	parent->owner = file;
	spin_unlock(&mdgpu_ev_lock);
}

/* A daemon takes over a parent whose daemon is gone. */
static int mdgpu_parent_reattach(struct mdgpu_parent *parent,
				 struct mdgpu_ctl_file *file,
				 struct mdgpu_ctl_register *req)
{
	struct mdgpu_vgpu *vgpu;
	u32 n = 0;
	int ret = 0;

	lockdep_assert_held(&mdgpu_lock);

	mutex_lock(&parent->lock);
	if (parent->owner) {
		ret = -EBUSY;
		goto out;
	}
	if (parent->fb_size != req->fb_size ||
	    parent->sm_count != req->sm_count ||
	    !parent->pdev != !(req->flags & MDGPU_REGISTER_F_PCI)) {
		ret = -EINVAL;
		goto out;
	}
	mdgpu_parent_set_owner(parent, file);
	mdgpu_parent_post_policy(parent);
	list_for_each_entry(vgpu, &parent->vgpus, node) {
		mutex_lock(&vgpu->lock);
		if (vgpu->published) {
			mdgpu_vgpu_backend_back(vgpu);
			n++;
		}
		mutex_unlock(&vgpu->lock);
	}
	req->nr_vgpus = n;
out:
	mutex_unlock(&parent->lock);
	return ret;
}

/*
 * A parent with its id and fields set and no device visible yet; it takes
 * over @pdev's reference.  NULL if out of ids or memory.
 */
static struct mdgpu_parent *
mdgpu_parent_alloc(const struct mdgpu_ctl_register *req, struct pci_dev *pdev)
{
	struct mdgpu_parent *parent;
	unsigned int i;
	int id;

	id = ida_alloc(&mdgpu_parent_ida, GFP_KERNEL);
	if (id < 0)
		return NULL;
	parent = kzalloc(sizeof(*parent), GFP_KERNEL);
	if (!parent) {
		ida_free(&mdgpu_parent_ida, id);
		return NULL;
	}

	parent->id = id;
	parent->pdev = pdev;
	strscpy(parent->gpu_name, req->name, sizeof(parent->gpu_name));
	strscpy(parent->bus_id, req->bus_id, sizeof(parent->bus_id));
	parent->fb_size = req->fb_size;
	parent->sm_count = req->sm_count;
	mutex_init(&parent->lock);
	INIT_LIST_HEAD(&parent->vgpus);
	parent->policy = MDGPU_POLICY_BEST_EFFORT;
	parent->timeslice_us = MDGPU_TIMESLICE_US_DEFAULT;
	mdgpu_event_init(&parent->policy_ev);
	for (i = 0; i < MDGPU_NR_TYPES; i++) {
		parent->types[i].info = &mdgpu_type_table[i];
		parent->types[i].mtype.sysfs_name = mdgpu_type_table[i].name;
		parent->types[i].mtype.pretty_name = mdgpu_type_table[i].name;
		parent->type_ptrs[i] = &parent->types[i].mtype;
	}
	return parent;
}

/*
 * A new parent for @req: mdgpu<id>, and the mdev parent on the PCI device
 * @req names (MDGPU_REGISTER_F_PCI) or on mdgpu<id>.
 */
static int mdgpu_parent_create(struct mdgpu_ctl_file *file,
			       const struct mdgpu_ctl_register *req,
			       struct mdgpu_parent **out)
{
	struct mdgpu_parent *parent;
	struct pci_dev *pdev = NULL;
	int ret;

	lockdep_assert_held(&mdgpu_lock);

	if (req->flags & MDGPU_REGISTER_F_PCI) {
		ret = mdgpu_pci_get(req->bus_id, &pdev);
		if (ret)
			return ret;
	}
	parent = mdgpu_parent_alloc(req, pdev);
	if (!parent) {
		pci_dev_put(pdev);
		return -ENOMEM;
	}
	/* Not visible yet: no lock needed to set the first owner. */
	parent->owner = file;

	/* From here on the release callback frees parent, id and pdev. */
	device_initialize(&parent->dev);
	parent->dev.class = mdgpu_class;
	parent->dev.parent = pdev ? &pdev->dev : NULL;
	parent->dev.release = mdgpu_parent_dev_release;
	parent->dev.groups = mdgpu_parent_groups;
	ret = dev_set_name(&parent->dev, "mdgpu%u", parent->id);
	if (ret)
		goto err_put;
	ret = device_add(&parent->dev);
	if (ret)
		goto err_put;
	ret = mdev_register_parent(&parent->mparent,
				   mdgpu_parent_mdev_dev(parent),
				   &mdgpu_mdev_driver, parent->type_ptrs,
				   MDGPU_NR_TYPES);
	if (ret)
		goto err_del;
	if (pdev) {
		ret = mdgpu_pci_name_types(parent);
		if (ret)
			goto err_unregister;
	}

	list_add_tail(&parent->node, &mdgpu_parents);
	*out = parent;
	return 0;

err_unregister:
	mdev_unregister_parent(&parent->mparent);
err_del:
	device_del(&parent->dev);
err_put:
	put_device(&parent->dev);
	return ret;
}

/*
 * mdgpu_parent_destroy() - remove a parent and, through the mdev core, any
 * vGPU it still has (only through mdgpu_parent_kill(): unregister refuses
 * while vGPUs exist).
 */
static void mdgpu_parent_destroy(struct mdgpu_parent *parent)
{
	lockdep_assert_held(&mdgpu_lock);

	mdev_unregister_parent(&parent->mparent);
	list_del(&parent->node);
	mutex_lock(&parent->lock);
	mdgpu_parent_set_owner(parent, NULL);
	mdgpu_event_cancel(&parent->policy_ev);
	mutex_unlock(&parent->lock);
	device_del(&parent->dev);
	/* Pairs with device_initialize() in mdgpu_parent_create(). */
	put_device(&parent->dev);
}

int mdgpu_parent_register(struct mdgpu_ctl_file *file,
			  struct mdgpu_ctl_register *req)
{
	struct mdgpu_parent *parent;
	int ret;

	ret = mdgpu_register_check(req);
	if (ret)
		return ret;

	mutex_lock(&mdgpu_lock);
	req->nr_vgpus = 0;
	parent = mdgpu_parent_find_bus_id(req->bus_id);
	if (parent)
		ret = mdgpu_parent_reattach(parent, file, req);
	else
		ret = mdgpu_parent_create(file, req, &parent);
	if (!ret) {
		req->parent_id = parent->id;
		strscpy(req->parent_name,
			dev_name(mdgpu_parent_mdev_dev(parent)),
			sizeof(req->parent_name));
	}
	mutex_unlock(&mdgpu_lock);
	return ret;
}

int mdgpu_parent_unregister(struct mdgpu_ctl_file *file, u32 parent_id)
{
	struct mdgpu_parent *parent;
	int ret = 0;

	mutex_lock(&mdgpu_lock);
	parent = mdgpu_parent_find_id(parent_id);
	if (!parent) {
		ret = -ENOENT;
		goto out;
	}
	mutex_lock(&parent->lock);
	if (parent->owner != file)
		ret = -EPERM;
	else if (!list_empty(&parent->vgpus))
		ret = -EBUSY;
	else
		parent->dying = true;	/* no vGPU can be created any more */
	mutex_unlock(&parent->lock);
	if (!ret)
		mdgpu_parent_destroy(parent);
out:
	mutex_unlock(&mdgpu_lock);
	return ret;
}

/* The daemon file @file is being released: its parents lose their owner. */
void mdgpu_parent_owner_lost(struct mdgpu_ctl_file *file)
{
	struct mdgpu_parent *parent;
	struct mdgpu_vgpu *vgpu;

	mutex_lock(&mdgpu_lock);
	list_for_each_entry(parent, &mdgpu_parents, node) {
		mutex_lock(&parent->lock);
		if (parent->owner == file) {
			mdgpu_parent_set_owner(parent, NULL);
			list_for_each_entry(vgpu, &parent->vgpus, node) {
				mutex_lock(&vgpu->lock);
				if (vgpu->published)
					mdgpu_vgpu_backend_lost(vgpu);
				mutex_unlock(&vgpu->lock);
			}
		}
		mutex_unlock(&parent->lock);
	}
	mutex_unlock(&mdgpu_lock);
}

/*
 * mdgpu_parent_kill() - remove @parent whatever its owner and vGPUs: its
 * GPU is gone (mdgpu_pci.c) or the module exits.  The mdev core removes
 * each vGPU, which waits for its VFIO user to close it (the request IRQ
 * asks).  Caller must hold mdgpu_lock; @parent may be freed on return.
 */
void mdgpu_parent_kill(struct mdgpu_parent *parent)
{
	lockdep_assert_held(&mdgpu_lock);

	mutex_lock(&parent->lock);
	parent->dying = true;
	mutex_unlock(&parent->lock);
	mdgpu_parent_destroy(parent);
}

/* Module exit: no daemon file and no VFIO user is left. */
void mdgpu_parents_destroy(void)
{
	struct mdgpu_parent *parent, *tmp;

	mutex_lock(&mdgpu_lock);
	list_for_each_entry_safe(parent, tmp, &mdgpu_parents, node)
		mdgpu_parent_kill(parent);
	mutex_unlock(&mdgpu_lock);
}

/*
 * mdgpu_parent_attach_vgpu() - reserve @vgpu's quota on @parent (.init).
 *
 * Returns -ENOSPC when the type has no available instance left.  On
 * success the vGPU holds a reference on the parent's device.
 */
int mdgpu_parent_attach_vgpu(struct mdgpu_parent *parent,
			     struct mdgpu_vgpu *vgpu)
{
	int ret = 0;

	mutex_lock(&parent->lock);
	if (!mdgpu_type_available(parent, vgpu->type)) {
		ret = -ENOSPC;
	} else {
		list_add_tail(&vgpu->node, &parent->vgpus);
		get_device(&parent->dev);
	}
	mutex_unlock(&parent->lock);
	return ret;
}

/* Pairs with mdgpu_parent_attach_vgpu() (.release). */
void mdgpu_parent_detach_vgpu(struct mdgpu_parent *parent,
			      struct mdgpu_vgpu *vgpu)
{
	mutex_lock(&parent->lock);
	list_del_init(&vgpu->node);
	mutex_unlock(&parent->lock);
	put_device(&parent->dev);
}
