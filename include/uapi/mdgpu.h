/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * mdgpu ABI: the one source of truth shared by the kernel module (mdgpu.ko),
 * the daemon (mdgpud), the guest driver and the client library.
 *
 *   1. the vGPU as a PCI device: IDs, BAR layout, BAR0 register map;
 *   2. the ring protocol: command descriptors, completions, error codes;
 *   3. the control channel /dev/mdgpu between mdgpu.ko and mdgpud;
 *   4. the socket transport between mdgpud and host processes.
 *
 * Every structure has fixed-width members, explicit padding and a size
 * checked at compile time.  All multi-byte values are little-endian.
 * Documentation/abi.md explains the semantics; this file is normative for
 * layout.
 */
#ifndef _UAPI_MDGPU_H
#define _UAPI_MDGPU_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/build_bug.h>
#define MDGPU_STATIC_ASSERT(expr, msg) static_assert(expr, msg)
#else
#include <linux/types.h>
#include <linux/ioctl.h>
#include <assert.h>
#ifdef __cplusplus
#define MDGPU_STATIC_ASSERT(expr, msg) static_assert(expr, msg)
#else
#define MDGPU_STATIC_ASSERT(expr, msg) _Static_assert(expr, msg)
#endif
#endif

/* ABI version: major bumps break compatibility, minor bumps only add. */
#define MDGPU_ABI_MAJOR			1
#define MDGPU_ABI_MINOR			13
#define MDGPU_ABI_VERSION		((MDGPU_ABI_MAJOR << 16) | MDGPU_ABI_MINOR)

/* ------------------------------------------------------------------ */
/* 1. The vGPU as a PCI device                                          */
/* ------------------------------------------------------------------ */

/*
 * Provisional IDs: mdgpu has no PCI-SIG vendor ID of its own yet.  0x1234 is
 * the ID QEMU's emulated devices use; 0x6d67 ("mg") is not used by any of
 * them.  Documentation/abi.md records this decision.
 */
#define MDGPU_PCI_VENDOR_ID		0x1234
#define MDGPU_PCI_DEVICE_ID		0x6d67
#define MDGPU_PCI_SUBSYS_VENDOR_ID	0x1234
#define MDGPU_PCI_SUBSYS_ID		0x0001
#define MDGPU_PCI_REVISION		0x01
#define MDGPU_PCI_CLASS			0x030200	/* display, 3D controller */

/* BARs: 32-bit memory BARs, power-of-two sizes. */
#define MDGPU_BAR_REGS			0	/* BAR0: registers, trapped */
#define MDGPU_BAR_RING			2	/* BAR2: SQ + CQ, mmap-able */
#define MDGPU_BAR_APERTURE		4	/* BAR4: aperture, mmap-able */
#define MDGPU_REGS_SIZE			0x1000

/* BAR0 registers: 32 bits wide, accessed only as aligned 4-byte words. */
#define MDGPU_REG_MAGIC			0x000	/* RO: MDGPU_MAGIC */
#define MDGPU_REG_VERSION		0x004	/* RO: MDGPU_ABI_VERSION */
#define MDGPU_REG_STATUS		0x008	/* RO: MDGPU_STATUS_* */
#define MDGPU_REG_CONTROL		0x00c	/* RW: MDGPU_CONTROL_* */
#define MDGPU_REG_RING_ENTRIES		0x010	/* RO: SQ/CQ entries, power of 2 */
#define MDGPU_REG_IRQ_STATUS		0x014	/* RW1C: MDGPU_IRQ_* pending */
#define MDGPU_REG_IRQ_MASK		0x018	/* RW: MDGPU_IRQ_* enabled */
#define MDGPU_REG_SQ_TAIL		0x01c	/* RW: doorbell, free-running */
#define MDGPU_REG_SQ_HEAD		0x020	/* RO: completed, free-running */
#define MDGPU_REG_ERROR			0x024	/* RO: last doorbell error, errno */
#define MDGPU_REG_FENCE_LO		0x028	/* RO: commands completed */
#define MDGPU_REG_FENCE_HI		0x02c
#define MDGPU_REG_FB_QUOTA_LO		0x030	/* RO: device memory quota */
#define MDGPU_REG_FB_QUOTA_HI		0x034
#define MDGPU_REG_FB_USED_LO		0x038	/* RO: device memory in use */
#define MDGPU_REG_FB_USED_HI		0x03c
#define MDGPU_REG_APERTURE_SIZE		0x040	/* RO: bytes, BAR4 size */
#define MDGPU_REG_TYPE_ID		0x044	/* RO: mdev type id */
#define MDGPU_REG_WEIGHT		0x048	/* RO: mirror of sysfs weight */
#define MDGPU_REG_SCRATCH		0x04c	/* RW: no side effect */
#define MDGPU_REG_SM_COUNT		0x050	/* RO: SMs of the physical GPU */
#define MDGPU_REG_LAST			MDGPU_REG_SM_COUNT
/* Offsets above MDGPU_REG_LAST read as zero; writes are ignored. */

#define MDGPU_MAGIC			0x5047444dU	/* "MDGP" */

#define MDGPU_STATUS_READY		(1U << 0)	/* daemon serves this vGPU */
#define MDGPU_STATUS_ENABLED		(1U << 1)	/* CONTROL.ENABLE set */
#define MDGPU_STATUS_BACKEND_LOST	(1U << 2)	/* daemon gone */
#define MDGPU_STATUS_RING_ERROR		(1U << 3)	/* bad doorbell seen */
#define MDGPU_STATUS_CONTEXT_LOST	(1U << 4)	/* GPU context gone, reset
							 * restores it */
#define MDGPU_STATUS_RESET_PENDING	(1U << 5)	/* reset not yet taken up
							 * by the daemon (1.4) */

#define MDGPU_CONTROL_ENABLE		(1U << 0)	/* accept doorbells */
#define MDGPU_CONTROL_RESET		(1U << 1)	/* write 1: device reset */
#define MDGPU_CONTROL_MASK		(MDGPU_CONTROL_ENABLE | MDGPU_CONTROL_RESET)

#define MDGPU_IRQ_COMPLETION		(1U << 0)
#define MDGPU_IRQ_BACKEND_LOST		(1U << 1)
#define MDGPU_IRQ_ERROR			(1U << 2)
/*
 * Events of a vGPU's GPU context, reported by the daemon (the kernel
 * transport's MDGPU_CTL_VGPU_EVENT, the socket's ctrl status): HANG, its
 * work did not drain within the daemon's hang bound and the context was
 * destroyed; LOST, the context died otherwise (a fault, its worker gone);
 * RESTORED, a reset gave the vGPU a fresh context.  HANG and LOST set
 * MDGPU_STATUS_CONTEXT_LOST and raise MDGPU_IRQ_ERROR; RESTORED clears it.
 * A device reset leaves the bit as it is: only RESTORED, which the daemon
 * sends once the reset gave the vGPU its new context, clears it.
 */
#define MDGPU_VGPU_EVENT_HANG		1
#define MDGPU_VGPU_EVENT_LOST		2
#define MDGPU_VGPU_EVENT_RESTORED	3

#define MDGPU_IRQ_ALL			(MDGPU_IRQ_COMPLETION | \
					 MDGPU_IRQ_BACKEND_LOST | \
					 MDGPU_IRQ_ERROR)

/* ------------------------------------------------------------------ */
/* 2. Ring protocol                                                     */
/* ------------------------------------------------------------------ */

/*
 * The ring region (BAR2, or the shared-memory ring of the socket transport)
 * holds the submission queue at offset 0 and the completion queue right
 * after it.  SQ_TAIL and SQ_HEAD are free-running 32-bit counters: command
 * number n lives in sq[n % entries] and its completion in cq[n % entries].
 * A producer may have at most `entries` commands outstanding
 * (tail - head <= entries, modulo 2^32).  Commands complete in order.
 *
 * Streams (ABI 1.2).  The command header's `stream` names the queue the
 * command's GPU work goes to: 0 is the vGPU's default stream, any other
 * value a handle from STREAM_CREATE.  Work on one stream runs in
 * submission order; work on different streams may run concurrently.
 * Stream 0 behaves as CUDA's legacy default stream: its work waits for
 * all earlier work of blocking streams, and their later work waits for
 * it; a stream created with MDGPU_STREAM_F_NON_BLOCKING does not
 * synchronise with stream 0.  Only MEMSET, COPY, LAUNCH, BUILTIN,
 * EVENT_RECORD, SYNC, STREAM_WAIT_EVENT, STREAM_QUERY and (ABI 1.10)
 * STREAM_MEMOP take a stream; every other opcode requires 0.
 *
 * Completions are posted in submission order.  LAUNCH, MEMSET,
 * device-to-device COPY, BUILTIN kernels, EVENT_RECORD, STREAM_WAIT_EVENT,
 * STREAM_MEMOP and a COPY with MDGPU_CMD_F_ASYNC complete once queued:
 * their GPU work may still be running (errors surface later, at the next
 * SYNC of their stream, EVENT_SYNC or STREAM_QUERY, or as a lost
 * context).  SYNC on
 * stream 0 completes once all work of the vGPU, every stream, is done;
 * SYNC on stream s once the work queued on s before it is done.  A COPY
 * that reads or writes host memory (APERTURE, IOVA) without F_ASYNC
 * completes only once it is done, hence once the work queued before it on
 * its stream is done.  A client that saw a SYNC on stream 0 complete with
 * status 0, and submitted nothing since, knows the vGPU is idle; the same
 * holds for a synchronous host COPY on stream 0 if no command since the
 * last SYNC on stream 0 named another stream or had F_ASYNC (libmdgpu
 * then answers mdgpu_synchronize() without a SYNC round trip).
 */
#define MDGPU_RING_ENTRIES_DEFAULT	256
#define MDGPU_CMD_SIZE			64
#define MDGPU_CPL_SIZE			32
#define MDGPU_RING_SQ_OFFSET		0
#define MDGPU_RING_CQ_OFFSET(entries)	((__u64)(entries) * MDGPU_CMD_SIZE)
#define MDGPU_RING_BYTES(entries)	((__u64)(entries) * \
					 (MDGPU_CMD_SIZE + MDGPU_CPL_SIZE))

/*
 * The register mirror (ABI 1.11).  Right after the completion queue, at
 * MDGPU_RING_MIRROR_OFFSET(entries) of the ring region (BAR2), the device
 * keeps a copy of the registers a driver polls, so that polling reads
 * memory: in a VM each BAR0 access is a VM exit handed to the VMM, which
 * reads or writes the VFIO device; BAR2 is mapped into the guest and
 * reading it traps nowhere.  The mirror is updated, under the same lock,
 * whenever one of its registers changes, before the BAR0 access, reset or
 * daemon call that changed it returns: after a write to SQ_TAIL or
 * CONTROL, the mirror already shows its effect.  Each field is one
 * aligned store (fence one 64-bit store), fence, heads and the rest
 * first and status last, with a write barrier between: a reader that
 * reads status, then (after a read barrier) the other fields, sees them
 * at least as new as that status.  The device never reads the mirror: a
 * VFIO user that writes it only misleads itself, until the next update.
 * BAR0 keeps every register; a driver of a device older than 1.11 reads
 * them there.
 */
struct mdgpu_ring_mirror {
	__u64 fence;			/* FENCE_HI:FENCE_LO */
	__u32 sq_head;			/* SQ_HEAD */
	__u32 sq_tail;			/* SQ_TAIL: the last doorbell taken */
	__u32 error;			/* ERROR */
	__u32 irq_status;		/* IRQ_STATUS */
	__u32 status;			/* STATUS */
	__u32 reserved;			/* 0 */
};

#define MDGPU_RING_MIRROR_OFFSET(entries)	MDGPU_RING_BYTES(entries)
#define MDGPU_RING_MIRROR_SIZE		32

/*
 * The shadow doorbell (ABI 1.13).  64 bytes after the mirror's start, at
 * MDGPU_RING_SHADOW_OFFSET(entries) (a cache line of its own for every
 * ring of 2 or more entries), a VFIO user and the daemon share:
 *
 *   sq_tail         written by the VFIO user: its free-running tail, the
 *                   same value it would write to SQ_TAIL;
 *   daemon_polling  written by the daemon: nonzero while its dispatcher
 *                   is awake and reads sq_tail by itself.
 *
 * A submission stores sq_tail, then a full barrier, then loads
 * daemon_polling, and writes SQ_TAIL in BAR0 (the trapped doorbell) only
 * if that read 0.  The daemon, before it sleeps, stores daemon_polling =
 * 0, a full barrier, and reads sq_tail once more (Dekker: one of the two
 * sees the other's store).  0 is "ring BAR0", the safe default: a reset
 * zeroes the whole structure, a daemon going away clears daemon_polling,
 * and a device or daemon that does not know it never sets it.  As the
 * BAR0 doorbell, the shadow counts only while the device is enabled:
 * enabling it sets sq_tail to SQ_TAIL, and the daemon reads sq_tail only
 * while the mirror's status shows ENABLED and not RESET_PENDING.  Every
 * value the VFIO user writes here is untrusted: the daemon takes a
 * sq_tail only when it moves forward by at most entries past the head
 * (Documentation/abi.md, "The shadow doorbell (ABI 1.13)").
 */
struct mdgpu_ring_shadow {
	__u32 sq_tail;			/* VFIO user: its free-running tail */
	__u32 reserved0;		/* 0 */
	__u32 daemon_polling;		/* daemon: nonzero while it polls */
	__u32 reserved1[13];		/* 0: a 64-byte cache line */
};

#define MDGPU_RING_SHADOW_OFFSET(entries) \
	(MDGPU_RING_MIRROR_OFFSET(entries) + 64)
#define MDGPU_RING_SHADOW_SIZE		64
/*
 * Bytes of the ring region of a vGPU of @entries: queues, mirror and
 * shadow doorbell (a device of ABI 1.11 or 1.12 has the first two only,
 * MDGPU_RING_MIRROR_OFFSET() + MDGPU_RING_MIRROR_SIZE bytes).
 */
#define MDGPU_RING_REGION_BYTES(entries) \
	(MDGPU_RING_SHADOW_OFFSET(entries) + MDGPU_RING_SHADOW_SIZE)

enum mdgpu_opcode {
	MDGPU_OP_NOP = 0,
	MDGPU_OP_MEM_ALLOC = 1,		/* result: device address */
	MDGPU_OP_MEM_FREE = 2,
	MDGPU_OP_MEMSET = 3,
	MDGPU_OP_COPY = 4,		/* any direction, see spaces */
	MDGPU_OP_MODULE_LOAD = 5,	/* result: module handle */
	MDGPU_OP_MODULE_UNLOAD = 6,
	MDGPU_OP_FUNC_GET = 7,		/* result: function handle */
	MDGPU_OP_LAUNCH = 8,
	MDGPU_OP_BUILTIN = 9,		/* result: checksum for CHECKSUM */
	MDGPU_OP_EVENT_CREATE = 10,	/* result: event handle */
	MDGPU_OP_EVENT_RECORD = 11,
	MDGPU_OP_EVENT_ELAPSED = 12,	/* result: nanoseconds */
	MDGPU_OP_EVENT_DESTROY = 13,
	MDGPU_OP_SYNC = 14,		/* completes when prior work is done */
	MDGPU_OP_QUERY = 15,		/* result: value of MDGPU_QUERY_* */
	/* ABI 1.2 */
	MDGPU_OP_STREAM_CREATE = 16,	/* result: stream handle */
	MDGPU_OP_STREAM_DESTROY = 17,	/* its queued work still runs */
	MDGPU_OP_STREAM_WAIT_EVENT = 18, /* header stream waits for event */
	MDGPU_OP_STREAM_QUERY = 19,	/* result: 0 idle, 1 work pending */
	MDGPU_OP_EVENT_QUERY = 20,	/* result: 0 complete, 1 pending */
	MDGPU_OP_EVENT_SYNC = 21,	/* completes once the event has */
	MDGPU_OP_DEVICE_INFO = 22,	/* writes struct mdgpu_device_info */
	MDGPU_OP_FUNC_INFO = 23,	/* writes struct mdgpu_func_info */
	MDGPU_OP_FUNC_SET_ATTR = 24,
	MDGPU_OP_MODULE_GLOBAL = 25,	/* result: address, result2: bytes */
	MDGPU_OP_CTX_LIMIT = 26,	/* result: the limit's value */
	MDGPU_OP_OCCUPANCY = 27,	/* result: see enum mdgpu_occupancy */
	/*
	 * ABI 1.5.  MODULE_FUNCS writes the names of a module's kernels;
	 * result: bytes of the whole list, result2: number of kernels.
	 */
	MDGPU_OP_MODULE_FUNCS = 28,
	/*
	 * ABI 1.7.  MODULE_LINK links a bundle of inputs (struct
	 * mdgpu_link_bundle) into one image with the host driver's linker;
	 * result: bytes of the whole answer (struct mdgpu_link_answer).
	 */
	MDGPU_OP_MODULE_LINK = 29,
	/*
	 * ABI 1.10.  STREAM_MEMOP writes a 32- or 64-bit value to device
	 * memory, or makes the header's stream wait until a value there
	 * meets a condition (struct mdgpu_cmd_memop); completes once queued.
	 */
	MDGPU_OP_STREAM_MEMOP = 30,
	/*
	 * ABI 1.12.  HOST_REGISTER maps host memory the client shares with
	 * the daemon (struct mdgpu_cmd_host_register) for the GPU; result:
	 * its device address.  HOST_UNREGISTER (struct mdgpu_cmd_free: that
	 * address) ends it.  Socket transport only.
	 */
	MDGPU_OP_HOST_REGISTER = 31,
	MDGPU_OP_HOST_UNREGISTER = 32,
	/*
	 * ABI 1.12.  HOST_FUNC (no operands, stream 0): completes once all
	 * earlier work of every stream is done; the vGPU then takes no other
	 * command until the client stores this command's ring position + 1
	 * in ctrl.host_done (the host function it stands for returned).
	 * Socket transport only.
	 */
	MDGPU_OP_HOST_FUNC = 33,
	MDGPU_OP_COUNT
};

/* Command flags. */
#define MDGPU_CMD_F_IRQ			(1U << 0)	/* interrupt on completion */
/*
 * COPY only (ABI 1.2): complete once queued.  With an APERTURE side the
 * client keeps those aperture bytes unchanged (host to device) or does not
 * read them (device to host) until later work shows the copy done (SYNC,
 * an event recorded after it, STREAM_QUERY answering idle).  A copy with
 * an IOVA side still completes when done: the daemon stages guest memory
 * in its own buffer.
 */
#define MDGPU_CMD_F_ASYNC		(1U << 1)
#define MDGPU_CMD_F_MASK		(MDGPU_CMD_F_IRQ | MDGPU_CMD_F_ASYNC)

/* Address spaces of a host-side buffer named by a command.  0 is invalid. */
enum mdgpu_space {
	MDGPU_SPACE_DEVICE = 1,		/* device address from MEM_ALLOC */
	MDGPU_SPACE_APERTURE = 2,	/* byte offset into the aperture */
	MDGPU_SPACE_IOVA = 3,		/* guest IOVA, DMA through VFIO */
};

enum mdgpu_module_kind {
	MDGPU_MODULE_PTX = 1,		/* NUL-terminated PTX text */
	MDGPU_MODULE_CUBIN = 2,		/* ELF cubin or fatbin image */
};

/* Builtin kernels every backend implements, the sim one included. */
enum mdgpu_builtin {
	MDGPU_BUILTIN_FILL_U32 = 1,	/* a0 dst, a1 count, a2 value */
	MDGPU_BUILTIN_ADD_U32 = 2,	/* a0 dst, a1 src_a, a2 src_b, a3 count */
	MDGPU_BUILTIN_CHECKSUM = 3,	/* a0 src, a1 count: see below */
	MDGPU_BUILTIN_SPIN_NS = 4,	/* a0 nanoseconds, at most 1 s */
};
/*
 * CHECKSUM of count 32-bit words w[i]: sum over i of (u64)w[i] * (2*i + 1),
 * modulo 2^64.  Order-independent, so a GPU reduction and the C reference
 * agree exactly.
 */

enum mdgpu_query {
	MDGPU_QUERY_FB_QUOTA = 1,
	MDGPU_QUERY_FB_USED = 2,
	MDGPU_QUERY_SM_COUNT = 3,
	MDGPU_QUERY_ABI_VERSION = 4,
	MDGPU_QUERY_BACKEND = 5,	/* MDGPU_BACKEND_* */
	/* ABI 1.2 */
	MDGPU_QUERY_APERTURE_DEVPTR = 6, /* device address at which kernels
					  * reach aperture byte 0, 0 if the
					  * backend does not map it; result2:
					  * bytes mapped */
	MDGPU_QUERY_STREAM_PRIORITIES = 7, /* result: least priority,
					    * result2: greatest (each an
					    * __s32 in the low 32 bits) */
	MDGPU_QUERY_GPU_TIME = 8,	/* result: GPU ns charged to this
					 * vGPU over the last window,
					 * result2: the window, ns */
};

/* STREAM_CREATE flags. */
#define MDGPU_STREAM_F_NON_BLOCKING	(1U << 0)	/* no sync with stream 0 */
/* EVENT_CREATE flags. */
#define MDGPU_EVENT_F_DISABLE_TIMING	(1U << 0)	/* ELAPSED refused */
/* LAUNCH flags. */
#define MDGPU_LAUNCH_F_COOPERATIVE	(1U << 0)	/* grid-wide sync allowed */
/*
 * LAUNCH and OCCUPANCY cluster dimensions, packed x | y << 10 | z << 20,
 * each 1..1023, or 0 for no cluster.
 */
#define MDGPU_CLUSTER(x, y, z)		((__u32)(x) | (__u32)(y) << 10 | \
					 (__u32)(z) << 20)
#define MDGPU_CLUSTER_X(c)		((c) & 0x3ffU)
#define MDGPU_CLUSTER_Y(c)		(((c) >> 10) & 0x3ffU)
#define MDGPU_CLUSTER_Z(c)		(((c) >> 20) & 0x3ffU)
#define MDGPU_CLUSTER_MASK		0x3fffffffU

/*
 * An attribute the host driver does not report (device or function
 * attribute): the client answers CUDA_ERROR_INVALID_VALUE for it.
 */
#define MDGPU_ATTR_NONE			((__s32)0x80000000)

/*
 * DEVICE_INFO output.  attr[i] is CUdevice_attribute i of the physical GPU
 * as the host driver reports it (MDGPU_ATTR_NONE where it has none),
 * i < nr_attrs.  The name is the physical GPU's; the UUID is this vGPU's
 * own (the mdev UUID on the kernel transport, one the daemon made for a
 * socket vGPU), never the physical GPU's.  Memory figures of the vGPU are
 * in QUERY FB_QUOTA/FB_USED.
 */
#define MDGPU_DEV_ATTR_MAX		256
#define MDGPU_DEV_NAME_LEN		96

struct mdgpu_device_info {
	__u32 size;			/* sizeof(struct mdgpu_device_info) */
	__u32 nr_attrs;			/* <= MDGPU_DEV_ATTR_MAX */
	char name[MDGPU_DEV_NAME_LEN];	/* NUL-terminated */
	__u8 uuid[16];
	__u64 gpu_mem_total;		/* the physical GPU's memory */
	__s32 driver_version;		/* host driver, e.g. 13000 */
	__u32 pad;
	__s32 attr[MDGPU_DEV_ATTR_MAX];
};

/*
 * FUNC_INFO output: the function's attributes (attr[i] is
 * CUfunction_attribute i, MDGPU_ATTR_NONE where the host driver has none)
 * and its parameter layout as the host driver reports it
 * (cuFuncGetParamInfo): param i at byte `offset` of the LAUNCH parameter
 * buffer, `size` bytes.  A client packs kernelParams with it.
 */
#define MDGPU_FUNC_ATTR_MAX		32

struct mdgpu_func_param {
	__u32 offset;
	__u32 size;
};

struct mdgpu_func_info {
	__u32 size;			/* bytes of the whole answer */
	__u32 nr_params;
	__s32 attr[MDGPU_FUNC_ATTR_MAX];
	struct mdgpu_func_param param[];	/* nr_params entries */
};

/* OCCUPANCY questions (the cuOccupancy* calls of the host driver). */
enum mdgpu_occupancy {
	MDGPU_OCC_ACTIVE_BLOCKS = 1,	/* per SM: block_threads, dyn_smem,
					 * flags (CU_OCCUPANCY_*) */
	MDGPU_OCC_DYN_SMEM = 2,		/* bytes per block: num_blocks,
					 * block_threads */
	MDGPU_OCC_ACTIVE_CLUSTERS = 3,	/* grid, block_threads (x only),
					 * dyn_smem, cluster */
	MDGPU_OCC_CLUSTER_SIZE = 4,	/* ABI 1.9: the largest cluster, in
					 * blocks: grid, block_threads (x
					 * only), dyn_smem; cluster 0 */
};

enum mdgpu_backend_kind {
	MDGPU_BACKEND_SIM = 1,
	MDGPU_BACKEND_CUDA = 2,
};

/* Limits a command may not exceed, whatever the vGPU type. */
/*
 * Launch parameter blob: CUDA's own bound since 12.1 (Volta and later).
 * A daemon of before ABI 1.6 refuses more than MDGPU_PARAMS_MAX_1_5
 * with -E2BIG: a client reads the daemon's minor before it sends more.
 */
#define MDGPU_PARAMS_MAX		32764
#define MDGPU_PARAMS_MAX_1_5		4096
#define MDGPU_MODULE_MAX		(16U << 20)	/* image in host memory */
/*
 * A module image in device memory (MODULE_LOAD space DEVICE, ABI 1.3):
 * how an image larger than a client's staging area is loaded.  It also
 * needs an allocation of its size inside the vGPU's quota.
 */
#define MDGPU_MODULE_DEVICE_MAX		(1U << 30)
#define MDGPU_NAME_MAX			4096		/* function name */
#define MDGPU_SPIN_NS_MAX		1000000000ULL
#define MDGPU_GRID_DIM_MAX		0x7fffffffU
#define MDGPU_BLOCK_THREADS_MAX		1024

struct mdgpu_cmd_alloc {
	__u64 size;			/* bytes, > 0 */
	__u64 flags;			/* 0 */
};

struct mdgpu_cmd_free {
	__u64 addr;			/* exactly as MEM_ALLOC returned */
};

struct mdgpu_cmd_memset {
	__u64 addr;			/* device address, aligned to width */
	__u64 len;			/* bytes, a multiple of width */
	__u32 value;			/* the low `width` bytes are the value */
	__u32 width;			/* 1, 2 or 4 (ABI 1.2); 0 means 1 */
};

struct mdgpu_cmd_copy {
	__u64 src;
	__u64 dst;
	__u64 len;
	__u32 src_space;		/* enum mdgpu_space */
	__u32 dst_space;		/* at least one side is DEVICE */
};

/*
 * The image is len bytes at addr in `space`: APERTURE or IOVA, at most
 * MDGPU_MODULE_MAX; or (ABI 1.3) DEVICE, inside one allocation of the
 * vGPU, at most MDGPU_MODULE_DEVICE_MAX.  The daemon reads it once, when
 * the command runs; the client may reuse the memory after completion.
 */
struct mdgpu_cmd_module_load {
	__u64 addr;
	__u64 len;
	__u32 space;			/* APERTURE, IOVA or DEVICE */
	__u32 kind;			/* enum mdgpu_module_kind */
};

struct mdgpu_cmd_module_unload {
	__u32 module;
	__u32 pad;
};

struct mdgpu_cmd_func_get {
	__u64 name_addr;		/* name, not NUL-terminated */
	__u32 name_len;			/* 1..MDGPU_NAME_MAX */
	__u32 name_space;		/* APERTURE or IOVA */
	__u32 module;
	__u32 pad;
};

struct mdgpu_cmd_launch {
	__u32 func;
	__u32 grid[3];
	__u32 block[3];
	__u32 shared_bytes;
	__u64 params_addr;		/* packed parameter buffer */
	__u32 params_len;		/* 0..MDGPU_PARAMS_MAX (ABI 1.6) */
	__u32 params_space;		/* APERTURE or IOVA; ignored if len 0 */
	__u32 flags;			/* MDGPU_LAUNCH_F_* (ABI 1.2) */
	__u32 cluster;			/* MDGPU_CLUSTER() or 0 (ABI 1.2) */
};

struct mdgpu_cmd_builtin {
	__u32 kernel;			/* enum mdgpu_builtin */
	__u32 pad;
	__u64 arg[5];
};

struct mdgpu_cmd_event {
	__u32 event;			/* RECORD, DESTROY, QUERY, SYNC,
					 * STREAM_WAIT_EVENT; ELAPSED: start */
	__u32 end;			/* ELAPSED: end event */
	__u32 flags;			/* CREATE: MDGPU_EVENT_F_* (ABI 1.2) */
	__u32 pad;
};

struct mdgpu_cmd_query {
	__u32 what;			/* enum mdgpu_query */
	__u32 pad;
};

/* STREAM_CREATE, STREAM_DESTROY (ABI 1.2). */
struct mdgpu_cmd_stream {
	__u32 stream;			/* DESTROY: the handle */
	__u32 flags;			/* CREATE: MDGPU_STREAM_F_* */
	__s32 priority;			/* CREATE: clamped to the range of
					 * QUERY STREAM_PRIORITIES */
	__u32 pad;
};

/*
 * DEVICE_INFO, FUNC_INFO (ABI 1.2), MODULE_FUNCS (ABI 1.5): the answer is
 * written to a host buffer, at most len bytes of it; result is the
 * answer's full size, so a client whose buffer was short can tell and ask
 * again with a larger one.
 *
 * FUNC_INFO's handle is a function, MODULE_FUNCS' a module (DEVICE_INFO:
 * 0).  MODULE_FUNCS' len may be up to MDGPU_FUNCS_MAX, and its answer is
 * the names of the module's kernels (entry functions) in the host
 * driver's order, each NUL-terminated, one after the other: as many
 * whole names as fit in len bytes, never part of one (the bytes after
 * the last whole name are left as they were); result2 is the number of
 * kernels in the whole list.
 */
struct mdgpu_cmd_info {
	__u64 addr;
	__u32 len;			/* 1..MDGPU_INFO_MAX, or more: above */
	__u32 space;			/* APERTURE or IOVA */
	__u32 handle;			/* FUNC_INFO, MODULE_FUNCS; else 0 */
	__u32 pad;
};

#define MDGPU_INFO_MAX			(64U << 10)
/*
 * A MODULE_FUNCS buffer: a module's names can outgrow MDGPU_INFO_MAX (a
 * library of templated kernels has hundreds, each of hundreds of bytes);
 * the bound of an image in host memory (MDGPU_MODULE_MAX) is far above
 * any real module's list.
 */
#define MDGPU_FUNCS_MAX			(16U << 20)

/*
 * MODULE_LINK (ABI 1.7): the host driver's linker (cuLinkCreate,
 * cuLinkAddData per input, cuLinkComplete) over a link bundle of len
 * bytes at addr (APERTURE or IOVA, 1..MDGPU_MODULE_MAX), answered into
 * out_len bytes at out_addr (APERTURE or IOVA, from the answer's header
 * up to MDGPU_LINK_OUT_MAX).  The daemon reads the bundle whole before
 * it writes the answer: the two buffers may overlap.
 */
struct mdgpu_cmd_module_link {
	__u64 addr;			/* the bundle */
	__u32 len;
	__u32 space;			/* APERTURE or IOVA */
	__u64 out_addr;			/* the answer */
	__u32 out_len;
	__u32 out_space;		/* APERTURE or IOVA */
};

/*
 * A link bundle: this header, nr_options options, then nr_inputs inputs,
 * each a struct mdgpu_link_input followed by its name (name_len bytes,
 * no NUL, may be 0) and its data (len bytes, > 0), packed without
 * padding (a reader copies each header out: they need not be aligned).
 * The bundle ends exactly after the last input.  An option appears at
 * most once; every byte of the bundle is checked by the one that parses
 * it (the daemon's worker): -EINVAL for a bad magic, version, kind,
 * option, value or pad, -E2BIG above a count's bound, -ERANGE for a
 * length that runs past the bundle's end or leaves bytes after it.
 */
#define MDGPU_LINK_MAGIC		0x4b4c444dU	/* "MDLK" */
#define MDGPU_LINK_VERSION		1
#define MDGPU_LINK_INPUTS_MAX		256
#define MDGPU_LINK_OPTIONS_MAX		16

struct mdgpu_link_bundle {
	__u32 magic;			/* MDGPU_LINK_MAGIC */
	__u16 version;			/* MDGPU_LINK_VERSION */
	__u16 nr_options;		/* 0..MDGPU_LINK_OPTIONS_MAX */
	__u32 nr_inputs;		/* 1..MDGPU_LINK_INPUTS_MAX */
	__u32 pad;			/* 0 */
};

/* Inputs: CUjitInputType's kinds that the host driver's linker takes. */
enum mdgpu_link_input_kind {
	MDGPU_LINK_INPUT_PTX = 1,	/* PTX text (need not end in NUL) */
	MDGPU_LINK_INPUT_CUBIN = 2,
	MDGPU_LINK_INPUT_FATBINARY = 3,
	MDGPU_LINK_INPUT_OBJECT = 4,	/* host object with embedded code */
	MDGPU_LINK_INPUT_LIBRARY = 5,	/* archive of those, e.g.
					 * libcudadevrt.a */
};

struct mdgpu_link_input {
	__u32 kind;			/* enum mdgpu_link_input_kind */
	__u32 name_len;			/* 0..MDGPU_NAME_MAX */
	__u64 len;			/* data bytes, > 0 */
};

/*
 * Options a link passes on to the host driver (CUjit_option, by value;
 * log buffers are not options: the logs come back in the answer).
 */
enum mdgpu_link_opt {
	MDGPU_LINK_OPT_TARGET = 1,	/* CUjit_target, < 0x40000 */
	MDGPU_LINK_OPT_OPT_LEVEL = 2,	/* 0..4 */
	MDGPU_LINK_OPT_DEBUG = 3,	/* 0 or 1: GENERATE_DEBUG_INFO */
	MDGPU_LINK_OPT_LINEINFO = 4,	/* 0 or 1: GENERATE_LINE_INFO */
	MDGPU_LINK_OPT_VERBOSE = 5,	/* 0 or 1: LOG_VERBOSE */
	MDGPU_LINK_OPT_MAX_REGISTERS = 6, /* 1..255 */
	MDGPU_LINK_OPT_FALLBACK = 7,	/* 0 or 1: CUjit_fallback */
	MDGPU_LINK_OPT_CACHE_MODE = 8,	/* 0..2: CUjit_cacheMode */
	MDGPU_LINK_OPT_COUNT
};

struct mdgpu_link_option {
	__u32 what;			/* enum mdgpu_link_opt */
	__u32 value;
};

/*
 * The answer: this header, then the linked image (image_len bytes), the
 * linker's error log and its info log (each at most MDGPU_LINK_LOG_MAX
 * bytes, no NUL, cut there).  It is written whole if it fits out_len
 * bytes, else its header alone, so a client whose buffer was short asks
 * again with `size` bytes (the link runs again).  A link the driver
 * refused fails (-EINVAL, result2 its CUresult) and still writes its
 * answer, image_len 0, for the logs.  An image above MDGPU_MODULE_MAX
 * fails with -E2BIG.
 */
#define MDGPU_LINK_LOG_MAX		2048

struct mdgpu_link_answer {
	__u32 size;			/* bytes of the whole answer */
	__u32 image_len;
	__u32 error_log_len;
	__u32 info_log_len;
};

#define MDGPU_LINK_OUT_MAX		(sizeof(struct mdgpu_link_answer) + \
					 MDGPU_MODULE_MAX + \
					 2 * MDGPU_LINK_LOG_MAX)

/*
 * STREAM_MEMOP (ABI 1.10): CUDA's stream memory operations
 * (cuStreamWriteValue32/64, cuStreamWaitValue32/64) on the header's
 * stream.  addr is a device address inside one allocation of the vGPU
 * (or a module global), aligned to the operation's width, the whole word
 * inside it.  A write stores `value` there once the stream's earlier
 * work is done; a wait holds the stream's later work until the word
 * meets `flags`' condition.  32-bit operations take the low half of
 * `value` and need its high half 0.  A wait that is never met keeps its
 * stream busy: the vGPU's work does not drain, and the daemon's hang
 * bound destroys the vGPU's context (MDGPU_VGPU_EVENT_HANG), as for a
 * kernel that never ends.  A backend that cannot hold a stream (sim)
 * refuses a wait not met when it runs with -EOPNOTSUPP.
 */
enum mdgpu_memop {
	MDGPU_MEMOP_WRITE32 = 1,
	MDGPU_MEMOP_WRITE64 = 2,
	MDGPU_MEMOP_WAIT32 = 3,
	MDGPU_MEMOP_WAIT64 = 4,
};

/*
 * A wait's condition, CUDA's CU_STREAM_WAIT_VALUE_* values (w the word
 * in memory, v the value): GEQ (s32 or s64)(w - v) >= 0, a cyclic
 * comparison; EQ w == v; AND (w & v) != 0; NOR ~(w | v) != 0.  Every
 * other bit of `flags` (CUDA's CU_STREAM_WAIT_VALUE_FLUSH included) must
 * be 0, and a write's flags are 0 (CUDA's NO_MEMORY_BARRIER is not
 * offered: every write is ordered after the stream's earlier writes).
 */
#define MDGPU_MEMOP_WAIT_GEQ		0
#define MDGPU_MEMOP_WAIT_EQ		1
#define MDGPU_MEMOP_WAIT_AND		2
#define MDGPU_MEMOP_WAIT_NOR		3

struct mdgpu_cmd_memop {
	__u64 addr;			/* device address, width-aligned */
	__u64 value;			/* 32-bit ops: high half 0 */
	__u32 op;			/* enum mdgpu_memop */
	__u32 flags;			/* MDGPU_MEMOP_WAIT_* or 0 */
};

/*
 * HOST_REGISTER (ABI 1.12): [offset, offset + len) of the file the client
 * sent with `token` (struct mdgpu_sock_fd_msg, section 4) is mapped for
 * the vGPU's GPU; completion result: the device address kernels, copies
 * and memsets reach it by, until HOST_UNREGISTER of that address.  The
 * file must be shared memory (tmpfs, a memfd, hugetlbfs) the client
 * opened for reading and, without MDGPU_HOST_REG_F_READ_ONLY, writing;
 * offset and len page-aligned, len at least a page, the range inside the
 * file.  addr is where the client maps that range (page-aligned, 0: no
 * wish): the daemon maps it at the same address when that is free, so
 * that the device address equals the client's pointer; otherwise
 * elsewhere.  Errors: -ENOENT no descriptor was sent with `token`
 * (each descriptor serves one HOST_REGISTER, which consumes it, and a
 * refused one too); -EINVAL not shared memory, bad alignment or flags;
 * -ERANGE the range is not inside the file; -ENOMEM over the daemon's
 * register_mib_max for the vGPU or the GPU driver could not pin it;
 * -ENOSPC the vGPU's memory table is full; -EOPNOTSUPP the transport
 * carries no descriptors (kernel transport) or the backend has no host
 * mapping (sim).  The registration is not charged to the quota (it is
 * the client's memory); the daemon's register_mib_max bounds it.
 */
#define MDGPU_HOST_REG_F_READ_ONLY	(1U << 0)	/* the GPU only reads */

struct mdgpu_cmd_host_register {
	__u32 token;			/* of the descriptor sent */
	__u32 flags;			/* MDGPU_HOST_REG_F_* */
	__u64 offset;			/* in the file */
	__u64 len;
	__u64 addr;			/* the client's mapping, or 0 */
};

/* FUNC_SET_ATTR (ABI 1.2). */
struct mdgpu_cmd_func_attr {
	__u32 func;
	__u32 attr;			/* a settable CUfunction_attribute,
					 * or MDGPU_FUNC_ATTR_CACHE_CONFIG */
	__s32 value;
	__u32 pad;
};

/* FUNC_SET_ATTR's attr for cuFuncSetCacheConfig (value: CUfunc_cache). */
#define MDGPU_FUNC_ATTR_CACHE_CONFIG	0x1000

/*
 * MODULE_GLOBAL (ABI 1.2): a module's global variable by name.  Its device
 * range may then be named by COPY and MEMSET like an allocation until the
 * module is unloaded; MEM_FREE refuses it.  Module memory is not charged
 * to the quota.
 */
struct mdgpu_cmd_module_global {
	__u64 name_addr;		/* name, not NUL-terminated */
	__u32 name_len;			/* 1..MDGPU_NAME_MAX */
	__u32 name_space;		/* APERTURE or IOVA */
	__u32 module;
	__u32 pad;
};

/*
 * CTX_LIMIT (ABI 1.2): get or set a CUlimit of the vGPU's context.
 * Setting STACK_SIZE, MALLOC_HEAP_SIZE or PRINTF_FIFO_SIZE makes the
 * driver reserve device memory; the daemon charges it to the quota
 * (-ENOMEM past it).  PERSISTING_L2_CACHE_SIZE is a resource of the whole
 * GPU: setting it is refused (-EPERM).
 */
struct mdgpu_cmd_limit {
	__u32 limit;			/* CUlimit */
	__u32 set;			/* 0 get, 1 set */
	__u64 value;			/* set: the new value */
};

/* OCCUPANCY (ABI 1.2). */
struct mdgpu_cmd_occupancy {
	__u32 func;
	__u32 what;			/* enum mdgpu_occupancy */
	__u32 block_threads;		/* 1..MDGPU_BLOCK_THREADS_MAX */
	__u32 flags;			/* ACTIVE_BLOCKS: CU_OCCUPANCY_* */
	__u64 dyn_smem;			/* bytes */
	__u32 num_blocks;		/* DYN_SMEM */
	__u32 cluster;			/* ACTIVE_CLUSTERS: MDGPU_CLUSTER() */
	__u32 grid[3];			/* ACTIVE_CLUSTERS, CLUSTER_SIZE */
	__u32 pad;
};

/* A submission: 8 bytes of header, 56 of operands. */
struct mdgpu_cmd {
	__u16 opcode;			/* enum mdgpu_opcode */
	__u16 flags;			/* MDGPU_CMD_F_* */
	__u32 stream;			/* 0 or a stream handle (ABI 1.2) */
	union {
		struct mdgpu_cmd_alloc alloc;
		struct mdgpu_cmd_free free;
		struct mdgpu_cmd_memset memset;
		struct mdgpu_cmd_copy copy;
		struct mdgpu_cmd_module_load module_load;
		struct mdgpu_cmd_module_unload module_unload;
		struct mdgpu_cmd_func_get func_get;
		struct mdgpu_cmd_launch launch;
		struct mdgpu_cmd_builtin builtin;
		struct mdgpu_cmd_event event;
		struct mdgpu_cmd_query query;
		struct mdgpu_cmd_stream stream_op;
		struct mdgpu_cmd_info info;
		struct mdgpu_cmd_func_attr func_attr;
		struct mdgpu_cmd_module_global module_global;
		struct mdgpu_cmd_limit limit;
		struct mdgpu_cmd_occupancy occupancy;
		struct mdgpu_cmd_module_link module_link;
		struct mdgpu_cmd_memop memop;
		struct mdgpu_cmd_host_register host_register;
		__u8 raw[56];
	};
};

/*
 * A completion.  status is 0 or a negative errno value (Linux numbering,
 * the same on every host and guest):
 *   -EINVAL  malformed command (opcode, flags, reserved bits, space, kind)
 *   -ERANGE  offset or length outside the buffer it names
 *   -ENOENT  handle or device address not owned by this vGPU
 *   -ENOMEM  device memory quota exhausted
 *   -EDQUOT  (not used: quota is reported as -ENOMEM, as cuMemAlloc does)
 *   -EFAULT  IOVA not mapped by the guest
 *   -E2BIG   length above an ABI limit
 *   -EOPNOTSUPP not supported by this backend (e.g. PTX on sim)
 *   -EIO     the GPU reported an error executing the command
 *   -ECANCELED the vGPU was reset before the command ran
 *   -ENODEV  the backend is lost
 *   -ETIMEDOUT the vGPU's work did not drain within the daemon's hang bound
 *   -ENOSPC  a per-vGPU handle table is full
 *   -EPERM   the command would touch a resource of the whole GPU
 * A command that fails with -EIO carries in result2 the backend's own
 * error code when it has one (a CUresult on the cuda backend, e.g. 700
 * for an illegal address), else 0.  From ABI 1.3 every command that the
 * backend failed carries it the same way (e.g. a MODULE_LOAD the driver
 * refused: -EINVAL, result2 218 for invalid PTX); a command refused by
 * the daemon itself carries 0.  Once the vGPU's GPU context is lost
 * (STATUS.CONTEXT_LOST), every command fails with the error that lost it,
 * and the same result2, until a reset.
 */
struct mdgpu_cpl {
	__u64 seq;			/* command number */
	__s32 status;
	__u32 opcode;			/* echo of the command's opcode */
	__u64 result;
	__u64 result2;
};

MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_cmd) == MDGPU_CMD_SIZE,
		    "mdgpu_cmd size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_ring_mirror) == MDGPU_RING_MIRROR_SIZE,
		    "mdgpu_ring_mirror size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_ring_shadow) == MDGPU_RING_SHADOW_SIZE,
		    "mdgpu_ring_shadow size");
MDGPU_STATIC_ASSERT(MDGPU_RING_MIRROR_SIZE <= 64,
		    "the shadow doorbell follows the mirror's 64 bytes");
MDGPU_STATIC_ASSERT(MDGPU_RING_SHADOW_OFFSET(MDGPU_RING_ENTRIES_DEFAULT) % 64 == 0,
		    "the shadow doorbell is a cache line of its own");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_cpl) == MDGPU_CPL_SIZE,
		    "mdgpu_cpl size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_cmd_launch) <= 56, "launch size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_cmd_builtin) == 48, "builtin size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_cmd_occupancy) == 48,
		    "occupancy size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_cmd_module_link) == 32,
		    "module_link size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_cmd_memop) == 24, "memop size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_link_bundle) == 16,
		    "mdgpu_link_bundle size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_link_input) == 16,
		    "mdgpu_link_input size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_link_option) == 8,
		    "mdgpu_link_option size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_link_answer) == 16,
		    "mdgpu_link_answer size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_device_info) == 1160,
		    "mdgpu_device_info size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_func_info) == 136,
		    "mdgpu_func_info size");

/* ------------------------------------------------------------------ */
/* 3. Control channel /dev/mdgpu (mdgpu.ko <-> mdgpud)                   */
/* ------------------------------------------------------------------ */

#define MDGPU_CTL_DEVICE		"/dev/mdgpu"
#define MDGPU_NAME_LEN			32

/*
 * REGISTER_GPU makes the GPU an mdev parent, or re-attaches a daemon to the
 * parent it registered before (same bus_id).  On re-attach the kernel queues
 * a CREATE (and an OPEN, if open) event for every existing vGPU.  A parent
 * outlives the file that registered it: when that file is closed, each of its
 * vGPUs reports MDGPU_STATUS_BACKEND_LOST until a daemon registers again.
 *
 * With MDGPU_REGISTER_F_PCI, bus_id is the PCI address of the GPU
 * ("domain:bus:slot.function", hexadecimal, e.g. "0000:65:00.0"; the
 * kernel writes it back in its canonical form) and that PCI device becomes
 * the mdev parent: /sys/bus/pci/devices/<bus_id>/mdev_supported_types/.
 * Errors: -EINVAL for a malformed address, -ENODEV when no such device
 * exists, -EBUSY when the device already is an mdev parent (of another
 * daemon, or of another driver).  Removing the PCI device or unbinding its
 * driver unregisters the parent and removes its vGPUs.  Without the flag
 * the parent is the class device mdgpu<parent_id> itself.  Either way the
 * parent's knobs are /sys/class/mdgpu/mdgpu<parent_id>/mdgpu/.
 */
#define MDGPU_REGISTER_F_PCI		(1u << 0)

struct mdgpu_ctl_register {
	__u32 abi_version;		/* in: MDGPU_ABI_VERSION */
	__u32 flags;			/* in: MDGPU_REGISTER_F_* */
	char name[MDGPU_NAME_LEN];	/* in: GPU model, NUL-terminated */
	char bus_id[MDGPU_NAME_LEN];	/* in: stable id, e.g. "0000:65:00.0" */
	__u64 fb_size;			/* in: bytes the daemon partitions */
	__u32 sm_count;			/* in: > 0 */
	__u32 parent_id;		/* out */
	char parent_name[MDGPU_NAME_LEN]; /* out: /sys/class/mdev_bus/<this>:
					   * the PCI address or mdgpu<id> */
	__u32 nr_vgpus;			/* out: vGPUs that already exist */
	__u32 reserved;			/* 0 */
};

struct mdgpu_ctl_unregister {
	__u32 parent_id;		/* fails with -EBUSY while vGPUs exist */
	__u32 reserved;
};

/*
 * Generations (ABI 1.4).  Each vGPU has a 32-bit generation that the
 * kernel bumps at every device reset (CONTROL.RESET, VFIO_DEVICE_RESET,
 * close) and at every open of the VFIO device.  The RESET and OPEN events
 * carry the new value, DOORBELL the current one.  COMPLETE and DMA carry
 * the generation the daemon's work belongs to: one that is not the
 * vGPU's current generation is refused with -ESTALE and changes nothing,
 * so work of a ring that was reset, or of a VFIO user that is gone, can
 * neither complete into the new ring nor reach the new user's memory.
 *
 * A reset sets MDGPU_STATUS_RESET_PENDING while a daemon serves the vGPU;
 * the daemon's first COMPLETE of the new generation (it sends one, head
 * 0, as soon as it has dropped the old work) clears it, once DMA still in
 * flight has finished, and raises MDGPU_IRQ_COMPLETION.  Until then old
 * work may still write the ring's CQ and the aperture: a VFIO user waits
 * for the bit to clear before it uses either.
 */

/* Daemon reports progress on a vGPU's ring. */
struct mdgpu_ctl_complete {
	__u32 vgpu_id;
	__u32 sq_head;			/* consumed and completed up to here */
	__u64 fence;			/* commands completed since reset */
	__u64 fb_used;			/* bytes of device memory in use */
	__u32 irq;			/* MDGPU_IRQ_* to raise */
	__u32 gen;			/* generation of this work (1.4) */
};

/*
 * COMPLETE_TAIL (ABI 1.13): COMPLETE for work the daemon took from the
 * shadow doorbell (struct mdgpu_ring_shadow), whose tail the kernel has
 * not seen in SQ_TAIL.  The kernel first takes @sq_tail as the BAR0
 * doorbell takes a VFIO user's: CONTROL.ENABLE and STATUS.READY set, and
 * @sq_tail - SQ_HEAD <= ring entries (mod 2^32); a tail in [SQ_HEAD,
 * SQ_TAIL] (a doorbell rang past it meanwhile) leaves SQ_TAIL as it is,
 * one past it becomes SQ_TAIL and counts as a shadow doorbell.  Then
 * @c is applied as COMPLETE applies it, the head checked against the new
 * SQ_TAIL.  -ESTALE (generation) as COMPLETE; -EINVAL, with nothing
 * changed, for a tail refused, a head outside [SQ_HEAD, SQ_TAIL], irq
 * bits or flags outside the defined ones.
 */
struct mdgpu_ctl_complete_tail {
	struct mdgpu_ctl_complete c;
	__u32 sq_tail;			/* the tail the daemon took */
	__u32 flags;			/* 0 */
};

/* Daemon reads or writes guest memory by IOVA through VFIO. */
struct mdgpu_ctl_dma {
	__u32 vgpu_id;
	__u32 write;			/* 0: guest -> buf, 1: buf -> guest */
	__u64 iova;
	__u64 buf;			/* daemon's own virtual address */
	__u64 len;			/* 1..MDGPU_DMA_MAX */
	__u32 gen;			/* generation of this work (1.4) */
	__u32 reserved;			/* 0 */
};

#define MDGPU_DMA_MAX			(64ULL << 20)

/* Daemon reports an event of a vGPU's GPU context (ABI 1.1). */
struct mdgpu_ctl_vgpu_event {
	__u32 vgpu_id;
	__u32 event;			/* MDGPU_VGPU_EVENT_* */
	__u32 reserved[2];		/* 0 */
};

/*
 * A vGPU's aperture for the process that executes its commands (ABI 1.8).
 * The daemon's supervisor hands the returned fd to the vGPU's worker, which
 * maps the aperture with it and registers the pages with the GPU driver
 * (the pages are struct-page backed, so they can be pinned).  The fd is
 * O_CLOEXEC and allows mmap() only (MAP_SHARED, page-aligned offset, the
 * mapping inside the aperture): no ioctl, read or write, so a worker gets
 * no control over any vGPU.  It holds the aperture's memory, not the
 * vGPU: after the vGPU is removed it still maps the same, orphaned pages.
 */
struct mdgpu_ctl_aperture_fd {
	__u32 vgpu_id;			/* in */
	__u32 flags;			/* in: 0 */
	__s32 fd;			/* out */
	__u32 reserved;			/* in: 0 */
	__u64 size;			/* out: the aperture's bytes */
};

#define MDGPU_IOC_MAGIC			0xd6
#define MDGPU_CTL_REGISTER_GPU	_IOWR(MDGPU_IOC_MAGIC, 0x00, struct mdgpu_ctl_register)
#define MDGPU_CTL_UNREGISTER_GPU _IOW(MDGPU_IOC_MAGIC, 0x01, struct mdgpu_ctl_unregister)
#define MDGPU_CTL_COMPLETE	_IOW(MDGPU_IOC_MAGIC, 0x02, struct mdgpu_ctl_complete)
#define MDGPU_CTL_DMA		_IOW(MDGPU_IOC_MAGIC, 0x03, struct mdgpu_ctl_dma)
#define MDGPU_CTL_VGPU_EVENT	_IOW(MDGPU_IOC_MAGIC, 0x04, \
				     struct mdgpu_ctl_vgpu_event)
#define MDGPU_CTL_APERTURE_FD	_IOWR(MDGPU_IOC_MAGIC, 0x05, \
				      struct mdgpu_ctl_aperture_fd)
#define MDGPU_CTL_COMPLETE_TAIL	_IOW(MDGPU_IOC_MAGIC, 0x06, \
				     struct mdgpu_ctl_complete_tail)

/*
 * mmap() of /dev/mdgpu maps one vGPU's ring or aperture into the daemon.
 * The offset names the vGPU (bits 63..40) and the region (bits 39..36);
 * bits 35..0 are the byte offset inside the region.  The length is at most
 * the region's size.  MDGPU_CTL_MMAP_OFFSET() builds an offset, the
 * MDGPU_CTL_MMAP_*() accessors below it take one apart.
 */
#define MDGPU_CTL_MMAP_RING		0
#define MDGPU_CTL_MMAP_APERTURE		1
#define MDGPU_CTL_MMAP_VGPU_SHIFT	40
#define MDGPU_CTL_MMAP_REGION_SHIFT	36
#define MDGPU_CTL_MMAP_REGION_MASK	0xfULL
#define MDGPU_CTL_MMAP_OFFSET(vgpu_id, region) \
	(((__u64)(vgpu_id) << MDGPU_CTL_MMAP_VGPU_SHIFT) | \
	 ((__u64)(region) << MDGPU_CTL_MMAP_REGION_SHIFT))
#define MDGPU_CTL_MMAP_VGPU(off) \
	((__u32)((__u64)(off) >> MDGPU_CTL_MMAP_VGPU_SHIFT))
#define MDGPU_CTL_MMAP_REGION(off) \
	((__u32)(((__u64)(off) >> MDGPU_CTL_MMAP_REGION_SHIFT) & \
		 MDGPU_CTL_MMAP_REGION_MASK))
#define MDGPU_CTL_MMAP_POS(off) \
	((__u64)(off) & ((1ULL << MDGPU_CTL_MMAP_REGION_SHIFT) - 1))

/* Events, read() in whole records of struct mdgpu_ctl_event. */
enum mdgpu_ctl_event_type {
	MDGPU_EV_CREATE = 1,		/* a vGPU exists: create payload */
	MDGPU_EV_REMOVE = 2,		/* the vGPU is gone; drop its state */
	MDGPU_EV_OPEN = 3,		/* a VFIO user opened the device */
	MDGPU_EV_CLOSE = 4,		/* the VFIO user closed it */
	MDGPU_EV_DOORBELL = 5,		/* SQ_TAIL written: doorbell payload */
	MDGPU_EV_KNOB = 6,		/* weight/cap/priority changed */
	MDGPU_EV_RESET = 7,		/* device reset: fail in-flight work */
	MDGPU_EV_POLICY = 8,		/* parent policy/timeslice changed */
};

/* Scheduling policies, the parent's sysfs `policy`. */
enum mdgpu_policy {
	MDGPU_POLICY_BEST_EFFORT = 0,	/* weighted, work-conserving */
	MDGPU_POLICY_EQUAL_SHARE = 1,	/* weights ignored */
	MDGPU_POLICY_FIXED_SHARE = 2,	/* reserved, not work-conserving */
};

/*
 * Their names, the one spelling of sysfs `policy`, mdgpud.conf's `policy`
 * and the admin protocol: an initializer for an array of strings indexed
 * by enum mdgpu_policy.
 */
#define MDGPU_POLICY_NAMES {					\
	[MDGPU_POLICY_BEST_EFFORT] = "best-effort",		\
	[MDGPU_POLICY_EQUAL_SHARE] = "equal-share",		\
	[MDGPU_POLICY_FIXED_SHARE] = "fixed-share",		\
}

/* sysfs knob ranges (Documentation/sysfs.md). */
#define MDGPU_WEIGHT_MIN		1
#define MDGPU_WEIGHT_MAX		100
#define MDGPU_CAP_MIN			1	/* percent of the GPU */
#define MDGPU_CAP_MAX			100	/* 100: no cap */
#define MDGPU_PRIORITY_MIN		0
#define MDGPU_PRIORITY_MAX		7
#define MDGPU_PRIORITY_DEFAULT		4
#define MDGPU_TIMESLICE_US_MIN		500
#define MDGPU_TIMESLICE_US_MAX		1000000
#define MDGPU_TIMESLICE_US_DEFAULT	10000

struct mdgpu_ctl_event {
	__u32 type;			/* enum mdgpu_ctl_event_type */
	__u32 parent_id;
	__u32 vgpu_id;			/* 0 for POLICY */
	__u32 type_id;			/* mdev type of the vGPU */
	__u8 uuid[16];
	union {
		struct {			/* CREATE */
			__u64 fb_quota;
			__u64 aperture_size;
			__u32 ring_entries;
			__u32 weight;
			__u32 cap;
			__u32 priority;
		} create;
		struct {			/* DOORBELL */
			__u32 sq_tail;
			__u32 gen;		/* current generation (1.4) */
		} doorbell;
		struct {			/* KNOB */
			__u32 weight;
			__u32 cap;
			__u32 priority;
			__u32 pad;
		} knob;
		struct {			/* POLICY */
			__u32 policy;		/* enum mdgpu_policy */
			__u32 timeslice_us;
		} policy;
		struct {			/* RESET, OPEN (1.4) */
			__u32 gen;		/* the new generation */
			__u32 pad;
		} gen;
		__u8 raw[32];
	};
};

MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_ctl_register) == 128,
		    "mdgpu_ctl_register size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_ctl_complete) == 32,
		    "mdgpu_ctl_complete size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_ctl_complete_tail) == 40,
		    "mdgpu_ctl_complete_tail size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_ctl_dma) == 40,
		    "mdgpu_ctl_dma size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_ctl_vgpu_event) == 16,
		    "mdgpu_ctl_vgpu_event size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_ctl_aperture_fd) == 24,
		    "mdgpu_ctl_aperture_fd size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_ctl_event) == 64,
		    "mdgpu_ctl_event size");

/* ------------------------------------------------------------------ */
/* 4. Socket transport (mdgpud <-> host processes, libmdgpu)            */
/* ------------------------------------------------------------------ */

/*
 * A client connects to mdgpud's Unix-domain stream socket (path, mode and
 * group from the daemon's config decide who may connect) and sends one
 * struct mdgpu_sock_hello.  The daemon answers with one struct
 * mdgpu_sock_welcome; if its status is 0 the same message carries, as
 * SCM_RIGHTS, MDGPU_SOCK_NR_FDS file descriptors in MDGPU_SOCK_FD_* order.
 * The connection then stays open: its end (close, exit, kill) destroys
 * the vGPU, freeing and scrubbing all its memory.  The only message a
 * client sends on it afterwards (ABI 1.12) is a struct mdgpu_sock_fd_msg
 * carrying exactly one file descriptor as SCM_RIGHTS, for a later
 * HOST_REGISTER with the same token; the daemon holds at most
 * MDGPU_SOCK_FDS_MAX of them not yet consumed (more: the one past the
 * limit is closed, and its HOST_REGISTER fails -ENOENT).  Anything else
 * on the connection ends it.
 *
 * The ring memfd holds a struct mdgpu_sock_ctrl at offset 0 and the
 * section-2 ring (SQ, then CQ) at welcome.ring_offset; the aperture memfd
 * is the vGPU's aperture (MDGPU_SPACE_APERTURE offsets): the type's
 * aperture, then hello.host_bytes (rounded up to pages) at
 * welcome.host_offset that the client may use as zero-copy host memory.
 *
 * Doorbell: the client writes sq[tail % entries], then stores ctrl.sq_tail
 * (release), then a full barrier; if ctrl.daemon_sleeping is set it writes
 * 1 to the doorbell eventfd.  Completion: the daemon writes cq[n % entries],
 * then ctrl.fence and ctrl.sq_head (release), then a full barrier; if
 * ctrl.client_waiting is not 0 it wakes FUTEX_WAKE (shared, all waiters)
 * on ctrl.sq_head.  A waiting client thread spins briefly, then adds 1 to
 * client_waiting, re-checks and sleeps with FUTEX_WAIT on sq_head (with a
 * timeout, so it also notices a daemon that died), and takes its 1 back
 * when done: several threads of a client may sleep at once.  No socket
 * message is exchanged per command.  After a HOST_FUNC completes (ABI
 * 1.12) the client stores its ring position + 1 in ctrl.host_done
 * (release), then a full barrier, and kicks the doorbell eventfd if
 * ctrl.daemon_sleeping is set, as for a doorbell.
 *
 * ctrl.status carries MDGPU_STATUS_*: READY while served,
 * BACKEND_LOST once the daemon shuts down (every later wait fails
 * -ENODEV), RING_ERROR with ctrl.error when a doorbell was invalid
 * (tail - head > entries), CONTEXT_LOST from a HANG or LOST event of the
 * vGPU's GPU context until RESTORED.  A change of CONTEXT_LOST also wakes
 * a client sleeping on ctrl.sq_head.
 */
#define MDGPU_SOCK_MAGIC		0x4b53474dU	/* "MGSK" */
#define MDGPU_SOCK_FD_RING		0
#define MDGPU_SOCK_FD_APERTURE		1
#define MDGPU_SOCK_FD_DOORBELL		2
#define MDGPU_SOCK_NR_FDS		3
#define MDGPU_SOCK_CTRL_SIZE		4096	/* ring_offset is at least this */
#define MDGPU_SOCK_FD_MAGIC		0x4446474dU	/* "MGFD" */
#define MDGPU_SOCK_FDS_MAX		8

struct mdgpu_sock_hello {
	__u32 magic;			/* MDGPU_SOCK_MAGIC */
	__u32 abi_version;		/* MDGPU_ABI_VERSION of the client */
	char type[MDGPU_NAME_LEN];	/* vGPU type name, e.g. "1g", NUL-term. */
	__u32 ring_entries;		/* 0: daemon default; else power of 2 */
	__u32 flags;			/* 0 */
	__u64 host_bytes;		/* extra aperture for zero-copy host
					 * buffers, 0..daemon's host_mib_max */
	__u64 reserved;			/* 0 */
};

struct mdgpu_sock_welcome {
	__u32 magic;			/* MDGPU_SOCK_MAGIC */
	__u32 abi_version;		/* MDGPU_ABI_VERSION of the daemon */
	__s32 status;			/* 0 or negative errno: no fds then */
	__u32 vgpu_id;
	__u32 type_id;
	__u32 ring_entries;
	__u64 ring_size;		/* bytes of the ring memfd */
	__u64 ring_offset;		/* SQ offset in the ring memfd */
	__u64 aperture_size;		/* bytes of the aperture memfd */
	__u64 fb_quota;
	__u32 sm_count;
	__u32 backend;			/* enum mdgpu_backend_kind */
	__u64 host_offset;		/* aperture offset of the host_bytes
					 * (the type's aperture comes first) */
	__u64 reserved;
};

/* A descriptor for HOST_REGISTER (ABI 1.12), sent after the welcome. */
struct mdgpu_sock_fd_msg {
	__u32 magic;			/* MDGPU_SOCK_FD_MAGIC */
	__u32 token;			/* any value; HOST_REGISTER names it */
};

/* Shared control page; each side writes only its own cache line. */
struct mdgpu_sock_ctrl {
	/* written by the client */
	__u32 sq_tail;			/* doorbell, free-running */
	__u32 client_waiting;		/* client threads asleep on sq_head */
	__u32 host_done;		/* HOST_FUNC at n returned: n + 1 */
	__u8 pad0[52];
	/* written by the daemon */
	__u32 sq_head;			/* completed, free-running; futex */
	__u32 status;			/* MDGPU_STATUS_* */
	__u64 fence;			/* commands completed */
	__u32 daemon_sleeping;		/* client must kick the eventfd */
	__s32 error;			/* last ring error, negative errno */
	__u8 pad1[40];
};

MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_sock_hello) == 64,
		    "mdgpu_sock_hello size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_sock_welcome) == 80,
		    "mdgpu_sock_welcome size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_sock_fd_msg) == 8,
		    "mdgpu_sock_fd_msg size");
MDGPU_STATIC_ASSERT(sizeof(struct mdgpu_sock_ctrl) == 128,
		    "mdgpu_sock_ctrl size");

#endif /* _UAPI_MDGPU_H */
