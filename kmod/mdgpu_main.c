// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu_main.c - module init and exit.
 *
 * mdgpu.ko turns each GPU that the mdgpud daemon registers on /dev/mdgpu
 * into an mdev parent whose vGPUs are VFIO PCI devices (see
 * Documentation/kmod.md).  The module can be unloaded only when no daemon
 * file and no VFIO user is open (both hold module references); exit
 * removes the remaining parents and, through the mdev core, their vGPUs.
 */
#include <linux/err.h>
#include <linux/module.h>

#include "mdgpu.h"
#include "mdgpu_compat.h"

struct class *mdgpu_class;

static int __init mdgpu_init(void)
{
	int ret;

	ret = mdgpu_types_check();
	if (ret)
		return ret;

	mdgpu_class = mdgpu_class_create(MDGPU_DRV_NAME);
	if (IS_ERR(mdgpu_class))
		return PTR_ERR(mdgpu_class);

	ret = mdev_register_driver(&mdgpu_mdev_driver);
	if (ret)
		goto err_class;

	ret = mdgpu_ctl_init();
	if (ret)
		goto err_driver;

	pr_info("mdgpu: ABI %u.%u, %u vGPU types\n", MDGPU_ABI_MAJOR,
		MDGPU_ABI_MINOR, MDGPU_NR_TYPES);
	return 0;

err_driver:
	mdev_unregister_driver(&mdgpu_mdev_driver);
err_class:
	class_destroy(mdgpu_class);
	return ret;
}

static void __exit mdgpu_exit(void)
{
	mdgpu_ctl_exit();
	mdgpu_parents_destroy();
	mdev_unregister_driver(&mdgpu_mdev_driver);
	class_destroy(mdgpu_class);
}

module_init(mdgpu_init);
module_exit(mdgpu_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("mdgpu: mediated GPU partitions for virtual machines");
MODULE_AUTHOR("The mdgpu authors");
