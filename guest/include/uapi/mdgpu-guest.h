/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * mdgpu guest driver ABI: the character device /dev/mdgpu-vgpuN that
 * mdgpu-guest.ko creates for each vGPU it binds, as seen by programs inside
 * the virtual machine (libmdgpu's kernel transport, tests).
 *
 * The ring and command layouts are those of include/uapi/mdgpu.h; this
 * header only adds the mmap offsets and the ioctls of the guest device.
 * Documentation/guest-driver.md explains the semantics.
 */
#ifndef _UAPI_MDGPU_GUEST_H
#define _UAPI_MDGPU_GUEST_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define MDGPU_GUEST_DEVICE_FMT		"/dev/mdgpu-vgpu%u"

/*
 * mmap() offsets.  The offset selects the region; an offset inside the
 * region (page aligned) maps from there.  Mappings must be MAP_SHARED and
 * lie inside the region.  The ring is mapped uncached, the aperture
 * write-combined.
 */
#define MDGPU_GUEST_MMAP_RING		0x0ULL
#define MDGPU_GUEST_MMAP_APERTURE	0x100000000ULL

/* struct mdgpu_guest_info.irq_mode */
#define MDGPU_GUEST_IRQ_MSI		1
#define MDGPU_GUEST_IRQ_INTX		2

struct mdgpu_guest_info {
	__u32 abi_version;		/* device's MDGPU_REG_VERSION */
	__u32 ring_entries;		/* SQ and CQ entries, power of two */
	__u64 ring_size;		/* bytes mmap-able at MMAP_RING */
	__u64 aperture_size;		/* bytes mmap-able at MMAP_APERTURE */
	__u64 fb_quota;			/* device memory quota, bytes */
	__u64 fb_used;			/* device memory in use, bytes */
	__u32 status;			/* MDGPU_STATUS_* */
	__u32 irq_mode;			/* MDGPU_GUEST_IRQ_* */
	__u64 irq_count;		/* interrupts handled for this vGPU */
	__u64 completed;		/* fence: commands completed */
	__u64 submitted;		/* fence of the last submitted command */
	__u32 sq_head;			/* device's SQ_HEAD */
	__u32 sq_tail;			/* last tail rung by SUBMIT */
	__u32 sm_count;			/* SMs of the physical GPU */
	__u32 type_id;			/* mdev type of the vGPU */
	__u32 last_error;		/* device's MDGPU_REG_ERROR (errno) */
	__u32 resets;			/* device resets seen by the driver */
};

/*
 * SUBMIT: userspace has written commands sq[old_tail % entries] ..
 * sq[(tail - 1) % entries] through the ring mapping; the driver checks that
 * they fit (at most ring_entries outstanding) and rings the doorbell.
 * fence is set to the fence value of the last command submitted: wait for
 * it with WAIT_FENCE.  Fence values are 64-bit and never go backwards, not
 * even across a device reset.
 */
struct mdgpu_guest_submit {
	__u32 tail;			/* in: new free-running SQ tail */
	__u32 flags;			/* in: 0 */
	__u64 fence;			/* out */
};

/*
 * WAIT_FENCE: sleep until the commands up to fence have completed,
 * interruptibly, at most timeout_ms milliseconds (0: just test).
 * completed is set to the fence reached, whatever the result.
 *
 * With MDGPU_GUEST_WAIT_RESET (fence must be 0): sleep until the device
 * has no reset pending (STATUS.RESET_PENDING clear: the host has dropped
 * all work of before the last reset, so none of it can still write the
 * ring or the aperture).  RESET already waits for this; the flag serves
 * a thread that saw another thread's reset.
 */
#define MDGPU_GUEST_WAIT_RESET		0x1U

struct mdgpu_guest_wait {
	__u64 fence;			/* in */
	__u32 timeout_ms;		/* in */
	__u32 flags;			/* in: 0 or MDGPU_GUEST_WAIT_RESET */
	__u64 completed;		/* out */
};

#define MDGPU_GUEST_IOC_MAGIC		0xd7
#define MDGPU_GUEST_GET_INFO	_IOR(MDGPU_GUEST_IOC_MAGIC, 0x00, struct mdgpu_guest_info)
#define MDGPU_GUEST_SUBMIT	_IOWR(MDGPU_GUEST_IOC_MAGIC, 0x01, struct mdgpu_guest_submit)
#define MDGPU_GUEST_WAIT_FENCE	_IOWR(MDGPU_GUEST_IOC_MAGIC, 0x02, struct mdgpu_guest_wait)
#define MDGPU_GUEST_RESET	_IO(MDGPU_GUEST_IOC_MAGIC, 0x03)

#endif /* _UAPI_MDGPU_GUEST_H */
