/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mdgpu_compat.h - every kernel version difference mdgpu.ko cares about.
 *
 * The module builds against Debian's 6.1 and 6.12 kernels.  Each shim is
 * named after what it provides and cites the upstream change that made it
 * necessary.  No other file of kmod/ tests LINUX_VERSION_CODE.
 */
#ifndef MDGPU_COMPAT_H
#define MDGPU_COMPAT_H

#include <linux/version.h>
#include <linux/device.h>
#include <linux/eventfd.h>
#include <linux/vfio.h>

/*
 * mdgpu_eventfd_signal() - add one to an eventfd counter.
 *
 * v6.8, commit 3652117f8548 ("eventfd: simplify eventfd_signal()"), dropped
 * the count argument; every caller passed 1.
 */
static inline void mdgpu_eventfd_signal(struct eventfd_ctx *ctx)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/*
 * mdgpu_class_create() - create a device class owned by this module.
 *
 * v6.4, commit 1aaba11da9aa ("driver core: class: remove module * from
 * class_create()"), dropped the owner argument.
 */
static inline struct class *mdgpu_class_create(const char *name)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return class_create(name);
#else
	return class_create(THIS_MODULE, name);
#endif
}

/*
 * mdgpu_vfio_release_free() - last statement of vfio_device_ops.release.
 *
 * Up to v6.1 the driver's .release had to free the vfio_device itself with
 * vfio_free_device() (the samples/vfio-mdev drivers of 6.1 do so).  v6.2,
 * commit 913447d06f03 ("vfio: Remove vfio_free_device"), moved the free
 * into the vfio core, after .release returns.
 */
static inline void mdgpu_vfio_release_free(struct vfio_device *vdev)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
	vfio_free_device(vdev);
#endif
}

/*
 * MDGPU_VFIO_IOMMUFD_EMULATED_OPS - vfio_device_ops initialisers that make
 * an emulated-IOMMU (mdev) device usable through iommufd.
 *
 * v6.2 ("vfio-iommufd: Support iommufd for emulated VFIO devices") added
 * bind_iommufd/unbind_iommufd/attach_ioas and v6.6 ("vfio-iommufd: Add
 * detach_ioas support for emulated VFIO devices") added detach_ioas; the
 * vfio core refuses a device without them when CONFIG_IOMMUFD is set.
 * With CONFIG_IOMMUFD off, <linux/vfio.h> defines the helpers as NULL.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define MDGPU_VFIO_IOMMUFD_EMULATED_OPS					\
	.bind_iommufd	= vfio_iommufd_emulated_bind,			\
	.unbind_iommufd	= vfio_iommufd_emulated_unbind,			\
	.attach_ioas	= vfio_iommufd_emulated_attach_ioas,		\
	.detach_ioas	= vfio_iommufd_emulated_detach_ioas,
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define MDGPU_VFIO_IOMMUFD_EMULATED_OPS					\
	.bind_iommufd	= vfio_iommufd_emulated_bind,			\
	.unbind_iommufd	= vfio_iommufd_emulated_unbind,			\
	.attach_ioas	= vfio_iommufd_emulated_attach_ioas,
#else
#define MDGPU_VFIO_IOMMUFD_EMULATED_OPS
#endif

#endif /* MDGPU_COMPAT_H */
