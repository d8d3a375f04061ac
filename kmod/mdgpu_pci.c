// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_pci.c - the GPU's own PCI device as the mdev parent.
 *
 * A daemon that registers with MDGPU_REGISTER_F_PCI names its GPU by PCI
 * address.  The parent then holds a reference on that pci_dev, the mdev
 * core puts mdev_supported_types/ and the vGPUs under the PCI device, and
 * the class device mdgpu<id> (the parent-level knobs) becomes a child of
 * the PCI device.  None of them may outlive the PCI device in sysfs, so a
 * notifier on the PCI bus unregisters the parent, vGPUs included, when
 * the device is deleted (BUS_NOTIFY_DEL_DEVICE, sent by device_del()
 * before the device's sysfs directory goes) or its driver unbinds
 * (BUS_NOTIFY_UNBIND_DRIVER: the daemon's backend lost the GPU).
 *
 * Lock order: the driver core calls the notifier with the PCI device's
 * device_lock held (unbind) and the notifier takes mdgpu_lock, so nothing
 * may take a PCI device's device_lock under mdgpu_lock.
 */
#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/kernfs.h>
#include <linux/notifier.h>
#include <linux/pci.h>

#include "mdgpu.h"

struct mdgpu_pci_addr {
	u32 domain;
	u32 bus;
	u32 slot;
	u32 fn;
};

/*
 * One hexadecimal field of 1 to @max_digits digits, followed by @end
 * (which is consumed unless it is the terminating NUL).
 */
static int mdgpu_pci_hex(const char **s, unsigned int max_digits, char end,
			 u32 *out)
{
	unsigned int n = 0;
	u32 v = 0;

	while (isxdigit(**s)) {
		if (++n > max_digits)
			return -EINVAL;
		v = v * 16 + hex_to_bin(**s);
		(*s)++;
	}
	if (!n || **s != end)
		return -EINVAL;
	if (end)
		(*s)++;
	*out = v;
	return 0;
}

/* "domain:bus:slot.function", hexadecimal: what pci_name() prints. */
static int mdgpu_pci_parse(const char *s, struct mdgpu_pci_addr *a)
{
	if (mdgpu_pci_hex(&s, 8, ':', &a->domain) ||
	    mdgpu_pci_hex(&s, 2, ':', &a->bus) ||
	    mdgpu_pci_hex(&s, 2, '.', &a->slot) ||
	    mdgpu_pci_hex(&s, 1, '\0', &a->fn))
		return -EINVAL;
	if (a->domain > INT_MAX || a->slot >= 32 || a->fn >= 8)
		return -EINVAL;
	return 0;
}

/*
 * mdgpu_pci_canonical() - rewrite the PCI address @bus_id (a NUL-terminated
 * string in an array of @size bytes) in pci_name()'s form, so that one
 * device has one bus_id however the daemon spelled it.  -EINVAL if it is
 * not a PCI address.
 */
int mdgpu_pci_canonical(char *bus_id, size_t size)
{
	struct mdgpu_pci_addr a;
	int len;

	if (mdgpu_pci_parse(bus_id, &a))
		return -EINVAL;
	len = snprintf(bus_id, size, "%04x:%02x:%02x.%u", a.domain, a.bus,
		       a.slot, a.fn);
	return len < size ? 0 : -EINVAL;
}

/*
 * mdgpu_pci_get() - the PCI device at the canonical address @bus_id, with a
 * reference (pci_dev_put() when done).  -ENODEV if there is none, -EBUSY
 * if it already has mdev types (another driver's mdev parent: the mdev
 * core would collide with its sysfs directory).  Caller must hold
 * mdgpu_lock, which also orders this check against mdgpu's own parents.
 */
int mdgpu_pci_get(const char *bus_id, struct pci_dev **out)
{
	struct kernfs_node *kn;
	struct mdgpu_pci_addr a;
	struct pci_dev *pdev;

	lockdep_assert_held(&mdgpu_lock);

	if (mdgpu_pci_parse(bus_id, &a))
		return -EINVAL;
	pdev = pci_get_domain_bus_and_slot(a.domain, a.bus,
					   PCI_DEVFN(a.slot, a.fn));
	if (!pdev)
		return -ENODEV;
	kn = kernfs_find_and_get(pdev->dev.kobj.sd, "mdev_supported_types");
	if (kn) {
		kernfs_put(kn);
		pci_dev_put(pdev);
		return -EBUSY;
	}
	*out = pdev;
	return 0;
}

/*
 * mdgpu_pci_name_types() - give @parent's mdev types their mdgpu names.
 *
 * The mdev core names each type directory "<driver>-<sysfs_name>" after
 * dev_driver_string() of the parent device: "mdgpu-1g" on mdgpu<id>, but
 * on a PCI device the name of whatever driver it has ("nvidia-1g",
 * "pci-1g" with none), which would change with the GPU's driver.  The
 * types are renamed to "mdgpu-<sysfs_name>" right after registration, so
 * mdevctl, libvirt and Nova see one set of type names on every parent.
 * The mdev core announced the parent (a change uevent, MDEV_STATE=
 * registered) before the renames; it is announced again after them, so
 * that libvirt's node-device driver, which rereads mdev_supported_types
 * on that event, sees the final names.  Caller must hold mdgpu_lock.
 */
int mdgpu_pci_name_types(struct mdgpu_parent *parent)
{
	char name[MDGPU_NAME_LEN + sizeof(MDGPU_DRV_NAME)];
	char *env = "MDEV_STATE=registered";
	char *envp[2] = { env, NULL };
	bool renamed = false;
	struct kobject *kobj;
	unsigned int i;
	int ret;

	lockdep_assert_held(&mdgpu_lock);

	for (i = 0; i < MDGPU_NR_TYPES; i++) {
		kobj = &parent->types[i].mtype.kobj;
		snprintf(name, sizeof(name), "%s-%s", MDGPU_DRV_NAME,
			 parent->types[i].mtype.sysfs_name);
		if (!strcmp(kobject_name(kobj), name))
			continue;
		ret = kobject_rename(kobj, name);
		if (ret)
			return ret;
		renamed = true;
	}
	if (renamed)
		kobject_uevent_env(&parent->pdev->dev.kobj, KOBJ_CHANGE, envp);
	return 0;
}

static int mdgpu_pci_notify(struct notifier_block *nb, unsigned long action,
			    void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);
	struct mdgpu_parent *parent;
	int ret = NOTIFY_DONE;

	if (action != BUS_NOTIFY_DEL_DEVICE &&
	    action != BUS_NOTIFY_UNBIND_DRIVER)
		return NOTIFY_DONE;

	mutex_lock(&mdgpu_lock);
	parent = mdgpu_parent_find_pci(pdev);
	if (parent) {
		dev_info(&pdev->dev, "mdgpu: %s: unregistering mdev parent %s\n",
			 action == BUS_NOTIFY_DEL_DEVICE ? "device removed" :
			 "driver unbinding", dev_name(&parent->dev));
		mdgpu_parent_kill(parent);
		ret = NOTIFY_OK;
	}
	mutex_unlock(&mdgpu_lock);
	return ret;
}

static struct notifier_block mdgpu_pci_nb = {
	.notifier_call = mdgpu_pci_notify,
};

int mdgpu_pci_init(void)
{
	return bus_register_notifier(&pci_bus_type, &mdgpu_pci_nb);
}

/*
 * After mdgpu_parents_destroy(): a device removed meanwhile finds no
 * parent.  Unregistering waits for a notifier call in progress.
 */
void mdgpu_pci_exit(void)
{
	bus_unregister_notifier(&pci_bus_type, &mdgpu_pci_nb);
}
