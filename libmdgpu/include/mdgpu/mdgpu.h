/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libmdgpu: the client library of an mdgpu vGPU.
 *
 * A handle (struct mdgpu) is one open vGPU reached through a transport:
 * "socket" (mdgpud's Unix-domain socket) or "vfio" (an mdev through VFIO
 * from a host process, as QEMU opens it: libmdgpu/vfio.c); "guest" (the
 * PCI device inside a VM) is a reserved name that returns -EOPNOTSUPP.
 *
 * Every function returns 0 or a negative errno.  The handle keeps a
 * human-readable message about the last failure (mdgpu_last_error()).
 * The library never prints.  A handle is not thread-safe: use one per
 * thread or serialise calls.
 *
 * Device addresses (mdgpu_devptr) are the daemon's values; they are
 * meaningful only to this vGPU.  Host buffers of any size are copied in
 * aperture-sized chunks; a large chunk is copied by several threads
 * (opts.copy_threads), out of the aperture with non-temporal stores on
 * x86-64 ($MDGPU_COPY_NT: 0 never, 1 dtoh (default), 2 htod, 3 both).
 */
#ifndef MDGPU_MDGPU_H
#define MDGPU_MDGPU_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/mdgpu.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mdgpu;
typedef uint64_t mdgpu_devptr;

struct mdgpu_open_opts {
	const char *transport;	/* "socket" (NULL = "socket"), "vfio" or
				 * "guest" (inside a VM, mdgpu-guest.ko) */
	const char *path;	/* socket: path, NULL = MDGPU_SOCKET or default;
				 * vfio: mdev UUID or its sysfs path,
				 * NULL = $MDGPU_VFIO_DEVICE;
				 * guest: /dev/mdgpu-vgpuN, NULL =
				 * $MDGPU_GUEST_DEVICE or /dev/mdgpu-vgpu0 */
	const char *type;	/* vGPU type name, e.g. "1g"; NULL = "1g" */
	uint32_t ring_entries;	/* 0 = default; power of two */
	uint32_t spin_us;	/* busy-wait before sleeping, 0 = default */
	uint64_t host_bytes;	/* zero-copy host memory for mdgpu_host_alloc,
				 * 0 = none (socket: the daemon bounds it;
				 * vfio: VFIO_IOMMU_MAP_DMA'd memory,
				 * copies by IOVA, at most MDGPU_DMA_MAX) */
	uint32_t copy_threads;	/* threads that copy a pageable buffer
				 * to/from the aperture, the caller
				 * included: 1 = the caller alone; 0 =
				 * $MDGPU_COPY_THREADS, else half the CPUs
				 * this thread may use, at least 1, at most
				 * 4.  Helpers start at the first staged
				 * chunk of >= 1 MiB and are joined by
				 * mdgpu_close (Documentation/libmdgpu.md,
				 * "Pageable copies") */
};

#define MDGPU_DEFAULT_SOCKET	"/run/mdgpud/mdgpud.sock"

struct mdgpu_info {
	uint32_t vgpu_id;
	uint32_t type_id;
	uint64_t fb_quota;
	uint64_t aperture_size;
	uint32_t ring_entries;
	uint32_t backend;	/* enum mdgpu_backend_kind */
	uint32_t sm_count;
	uint32_t abi_version;
};

int mdgpu_open(const struct mdgpu_open_opts *opts, struct mdgpu **out);
void mdgpu_close(struct mdgpu *g);
int mdgpu_get_info(struct mdgpu *g, struct mdgpu_info *info);
/*
 * How long a wait of this handle busy-waits (yielding the CPU between
 * checks past 20 us) before it sleeps: 0 sleeps at once; at most
 * 1000000 (-EINVAL beyond).  The open option spin_us set it first.
 */
int mdgpu_set_spin_us(struct mdgpu *g, uint32_t spin_us);
/* Message about the last failure on this handle ("" if none); with NULL,
 * why the calling thread's last mdgpu_open() failed. */
const char *mdgpu_last_error(const struct mdgpu *g);
/* Text of a negative errno as the mdgpu ABI uses it. */
const char *mdgpu_strerror(int err);

/* Memory. */
int mdgpu_mem_alloc(struct mdgpu *g, uint64_t size, mdgpu_devptr *addr);
int mdgpu_mem_free(struct mdgpu *g, mdgpu_devptr addr);
int mdgpu_memset(struct mdgpu *g, mdgpu_devptr addr, uint8_t value,
		 uint64_t len);
int mdgpu_copy_htod(struct mdgpu *g, mdgpu_devptr dst, const void *src,
		    uint64_t len);
int mdgpu_copy_dtoh(struct mdgpu *g, void *dst, mdgpu_devptr src,
		    uint64_t len);
int mdgpu_copy_dtod(struct mdgpu *g, mdgpu_devptr dst, mdgpu_devptr src,
		    uint64_t len);
/*
 * Zero-copy host memory: carved from the part of the aperture the handle
 * was opened with (opts.host_bytes).  Copies whose host side lies entirely
 * in such a buffer go to/from the device in one command, without staging
 * (the "pinned" path).  -ENOMEM when the area is exhausted.
 */
int mdgpu_host_alloc(struct mdgpu *g, size_t size, void **ptr);
int mdgpu_host_free(struct mdgpu *g, void *ptr);
/* The aperture offset of zero-copy memory at p, -ENOENT if p is not in
 * the handle's zero-copy area or that area is not in the aperture. */
int mdgpu_host_aperture_offset(struct mdgpu *g, const void *p,
			       uint64_t *off);

/*
 * Maps the aperture again at exactly `addr` in this process (page
 * aligned) and drops the old mapping, so that zero-copy memory lies at
 * the address the GPU reaches it by (QUERY APERTURE_DEVPTR): a host
 * pointer is then its own device pointer, as unified addressing promises
 * of pinned memory.  Only before the first mdgpu_host_alloc() and while
 * no command is in flight (pointers into the old mapping die with it).
 * -EEXIST: something of this process already lies there (the mapping
 * stays where it was); -EOPNOTSUPP: the transport maps no aperture of
 * its own (socket only); -EBUSY: zero-copy memory was handed out.
 */
int mdgpu_aperture_place(struct mdgpu *g, uint64_t addr);

/*
 * Registers [offset, offset + len) of fd for the vGPU's GPU (ABI 1.12
 * HOST_REGISTER): shared memory (a memfd, a tmpfs or hugetlbfs file)
 * opened for reading and writing (for reading only with
 * MDGPU_HOST_REG_F_READ_ONLY), offset and len page-aligned.  addr: where
 * this process maps that range (page-aligned), or 0; the daemon's side
 * maps it at the same address where it can, and *devptr is then addr.
 * *devptr is the device address kernels, memsets and copies
 * (MDGPU_SPACE_DEVICE) reach the memory by until mdgpu_host_unregister,
 * which needs the work that uses it done.  fd stays the caller's.
 * -EOPNOTSUPP: the transport carries no descriptors (socket only) or the
 * backend cannot map host memory (sim); the other errors are the
 * command's (uapi, HOST_REGISTER).
 */
int mdgpu_host_register(struct mdgpu *g, int fd, uint64_t offset,
			uint64_t len, uint64_t addr, uint32_t flags,
			mdgpu_devptr *devptr);
int mdgpu_host_unregister(struct mdgpu *g, mdgpu_devptr devptr);

/* Query MDGPU_QUERY_* (uapi); query2 also returns result2. */
int mdgpu_query(struct mdgpu *g, uint32_t what, uint64_t *value);
int mdgpu_query2(struct mdgpu *g, uint32_t what, uint64_t *value,
		 uint64_t *value2);

/*
 * Code.  mdgpu_module_load: an image (enum mdgpu_module_kind; PTX
 * NUL-terminated, len counting the NUL) of at most MDGPU_MODULE_DEVICE_MAX
 * bytes.  One that fits the aperture's staging area goes through it; a
 * larger one through a device buffer of its size, allocated inside the
 * vGPU's quota for the call and freed before it returns (-ENOMEM without
 * room; -EOPNOTSUPP from a daemon older than ABI 1.3).  A load the host
 * driver refuses fails with its errno and mdgpu_last_code() the driver's
 * CUresult (e.g. 218, CUDA_ERROR_INVALID_PTX).
 */
int mdgpu_module_load(struct mdgpu *g, uint32_t kind, const void *image,
		      size_t len, uint32_t *module);
int mdgpu_module_unload(struct mdgpu *g, uint32_t module);
int mdgpu_func_get(struct mdgpu *g, uint32_t module, const char *name,
		   uint32_t *func);
int mdgpu_launch(struct mdgpu *g, uint32_t func, const uint32_t grid[3],
		 const uint32_t block[3], uint32_t shared_bytes,
		 const void *params, uint32_t params_len);

/* Builtin kernels (enum mdgpu_builtin). */
int mdgpu_fill_u32(struct mdgpu *g, mdgpu_devptr dst, uint64_t count,
		   uint32_t value);
int mdgpu_add_u32(struct mdgpu *g, mdgpu_devptr dst, mdgpu_devptr a,
		  mdgpu_devptr b, uint64_t count);
int mdgpu_checksum(struct mdgpu *g, mdgpu_devptr src, uint64_t count,
		   uint64_t *sum);
int mdgpu_spin_ns(struct mdgpu *g, uint64_t ns);

/* Events. */
int mdgpu_event_create(struct mdgpu *g, uint32_t *event);
int mdgpu_event_record(struct mdgpu *g, uint32_t event);
int mdgpu_event_elapsed_ns(struct mdgpu *g, uint32_t start, uint32_t end,
			   uint64_t *ns);
int mdgpu_event_destroy(struct mdgpu *g, uint32_t event);

/*
 * Device reset (vfio transport: VFIO_DEVICE_RESET; guest transport:
 * MDGPU_GUEST_RESET; -EOPNOTSUPP on the socket transport).
 * Safe to call from another thread than the one using the handle: the
 * call waiting on the vGPU (or the next one) fails -ECANCELED, queued
 * work is dropped, every allocation, module and event of the vGPU is
 * freed (memory scrubbed); later calls work on the fresh device.
 */
int mdgpu_reset(struct mdgpu *g);

/* Wait until all submitted work is complete; returns the first error of
 * any asynchronous command since the last synchronize. */
int mdgpu_synchronize(struct mdgpu *g);

/*
 * Waits outside the caller's lock.  A handle is not thread-safe, so a
 * multi-threaded caller serialises its calls; but a thread that holds
 * that lock while it waits for a stream or an event holds every other
 * thread's launches too.  These split such a wait in three:
 *
 *   mdgpu_wait_begin_sync(g, stream, &w)   under the caller's lock: queue
 *   mdgpu_wait_begin_event(g, event, &w)   the SYNC (stream 0: all work)
 *                                          or the EVENT_SYNC;
 *   mdgpu_wait_run(g, &w)                  without it: wait for that one
 *                                          command, while other threads
 *                                          use the handle;
 *   mdgpu_wait_end(g, &w)                  under the lock again: the
 *                                          result, as mdgpu_synchronize,
 *                                          mdgpu_stream_synchronize or
 *                                          mdgpu_event_synchronize gives.
 *
 * Only where mdgpu_wait_concurrent() is true (the socket transport); on
 * the others run all three under the lock.  A wait whose completion slot
 * the ring reused before mdgpu_wait_run() read it (more commands than
 * the ring holds were queued meanwhile) asks again in mdgpu_wait_end():
 * these commands are idempotent.  The fields are libmdgpu's; state is
 * one of MDGPU_WAIT_*.
 */
enum {
	MDGPU_WAIT_IDLE = 1,	/* nothing to wait for */
	MDGPU_WAIT_QUEUED,	/* submitted, not waited for yet */
	MDGPU_WAIT_DONE,	/* waited: ret, and cpl if it was read */
	MDGPU_WAIT_SLOT_REUSED,	/* waited, but the ring reused the slot */
};
struct mdgpu_wait {
	struct mdgpu_cmd cmd;
	struct mdgpu_cpl cpl;
	uint32_t seq;
	int32_t ret;
	uint32_t state;
};
int mdgpu_wait_concurrent(const struct mdgpu *g);
int mdgpu_wait_begin_sync(struct mdgpu *g, uint32_t stream,
			  struct mdgpu_wait *w);
int mdgpu_wait_begin_event(struct mdgpu *g, uint32_t event,
			   struct mdgpu_wait *w);
void mdgpu_wait_run(struct mdgpu *g, struct mdgpu_wait *w);
int mdgpu_wait_end(struct mdgpu *g, struct mdgpu_wait *w);

/*
 * Host functions (ABI 1.12 HOST_FUNC, socket transport: -EOPNOTSUPP
 * elsewhere).  mdgpu_wait_begin_host_fn(), under the caller's lock,
 * queues a HOST_FUNC; the daemon completes it once the vGPU's earlier
 * work (every stream) is done, then runs no other command of the vGPU
 * until mdgpu_host_fn_done(g, w).  Another thread waits for it with
 * mdgpu_wait_run(g, w) (w->cpl.status: 0, or the error that lost the
 * context, when the daemon does not hold the vGPU), runs the function
 * and calls mdgpu_host_fn_done(); neither takes the caller's lock, and
 * they must not wait for it: a thread that holds it may be waiting for
 * the ring, which moves again only after mdgpu_host_fn_done().
 */
int mdgpu_wait_begin_host_fn(struct mdgpu *g, struct mdgpu_wait *w);
void mdgpu_host_fn_done(struct mdgpu *g, const struct mdgpu_wait *w);

/*
 * Asynchronous launches: mdgpu_launch and mdgpu_fill_u32/add_u32/spin_ns
 * are queued and return once submitted; their errors surface at the next
 * synchronous call (mdgpu_synchronize or any call that returns a value).
 * Everything else waits for its completion.
 */

/* ------------------------------------------------------------------ */
/* ABI 1.2: streams, asynchronous copies, device and function info.     */
/* ------------------------------------------------------------------ */

/*
 * Streams (include/uapi/mdgpu.h, "Streams"): 0 is the vGPU's default
 * stream; others come from mdgpu_stream_create (MDGPU_STREAM_F_*).  A
 * destroyed stream's queued work still runs.  query: *pending 0 when all
 * its work is done, 1 otherwise.  synchronize of stream 0 is
 * mdgpu_synchronize.
 */
int mdgpu_stream_create(struct mdgpu *g, uint32_t flags, int32_t priority,
			uint32_t *stream);
int mdgpu_stream_destroy(struct mdgpu *g, uint32_t stream);
int mdgpu_stream_wait_event(struct mdgpu *g, uint32_t stream, uint32_t event);
int mdgpu_stream_query(struct mdgpu *g, uint32_t stream, int *pending);
int mdgpu_stream_synchronize(struct mdgpu *g, uint32_t stream);
int mdgpu_stream_priorities(struct mdgpu *g, int32_t *least,
			    int32_t *greatest);

/* Events with MDGPU_EVENT_F_* flags; record on a stream (queued, not
 * waited for); query (*pending as above); synchronize. */
int mdgpu_event_create_flags(struct mdgpu *g, uint32_t flags,
			     uint32_t *event);
int mdgpu_event_record_on(struct mdgpu *g, uint32_t event, uint32_t stream);
int mdgpu_event_query(struct mdgpu *g, uint32_t event, int *pending);
int mdgpu_event_synchronize(struct mdgpu *g, uint32_t event);

/* Memset of `len` bytes with a 1-, 2- or 4-byte value, queued on stream. */
int mdgpu_memset_on(struct mdgpu *g, uint32_t stream, mdgpu_devptr addr,
		    uint32_t value, uint32_t width, uint64_t len);

/*
 * Copies on a stream.  MDGPU_COPY_ASYNC: when the host side is zero-copy
 * memory (mdgpu_host_alloc), the copy is only queued; the caller leaves
 * that memory alone until the stream's later work is known done.  Other
 * host memory is staged and the call returns once the copy is done.
 * Device-to-device copies are always queued.
 */
#define MDGPU_COPY_ASYNC	(1U << 0)
int mdgpu_copy_htod_on(struct mdgpu *g, uint32_t stream, uint32_t flags,
		       mdgpu_devptr dst, const void *src, uint64_t len);
int mdgpu_copy_dtoh_on(struct mdgpu *g, uint32_t stream, uint32_t flags,
		       void *dst, mdgpu_devptr src, uint64_t len);
int mdgpu_copy_dtod_on(struct mdgpu *g, uint32_t stream, mdgpu_devptr dst,
		       mdgpu_devptr src, uint64_t len);

/* A launch with every LAUNCH field (flags MDGPU_LAUNCH_F_*, cluster
 * MDGPU_CLUSTER() or 0); queued. */
struct mdgpu_launch_cfg {
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shared_bytes;
	uint32_t stream;
	uint32_t flags;
	uint32_t cluster;
};
int mdgpu_launch_ex(struct mdgpu *g, uint32_t func,
		    const struct mdgpu_launch_cfg *cfg, const void *params,
		    uint32_t params_len);

/* The GPU's description as the daemon gives it (struct in the uapi). */
int mdgpu_device_info(struct mdgpu *g, struct mdgpu_device_info *info);
/* A function's attributes and parameter layout; *info is malloc()ed,
 * the caller frees it. */
int mdgpu_func_info(struct mdgpu *g, uint32_t func,
		    struct mdgpu_func_info **info);
int mdgpu_func_set_attr(struct mdgpu *g, uint32_t func, uint32_t attr,
			int32_t value);
/* A module's global variable: its device address and size. */
int mdgpu_module_global(struct mdgpu *g, uint32_t module, const char *name,
			mdgpu_devptr *addr, uint64_t *bytes);
/* CUlimit `limit`: set it to value first when `set`; *out its value. */
int mdgpu_ctx_limit(struct mdgpu *g, uint32_t limit, int set, uint64_t value,
		    uint64_t *out);
/* An occupancy question (struct mdgpu_cmd_occupancy of the uapi);
 * CLUSTER_SIZE only of a 1.9 daemon (-EOPNOTSUPP before). */
int mdgpu_occupancy(struct mdgpu *g, const struct mdgpu_cmd_occupancy *q,
		    uint64_t *result);
/* The backend's own error code of the last failed command (result2 of
 * its completion, e.g. a CUresult), 0 if it gave none or the last
 * failure was not a command's (a check of the library, the transport). */
uint64_t mdgpu_last_code(const struct mdgpu *g);

/* ------------------------------------------------------------------ */
/* ABI 1.5: a module's kernels.                                         */
/* ------------------------------------------------------------------ */

/*
 * The names of a module's kernels in the host driver's order, each
 * NUL-terminated, one after the other: *count names, *size bytes in all,
 * in *names, which the caller frees (NULL, 0 and 0 for a module without
 * kernels).  A daemon of an older minor cannot list them: -EOPNOTSUPP,
 * with a message.
 */
int mdgpu_module_funcs(struct mdgpu *g, uint32_t module, char **names,
		       size_t *size, uint32_t *count);

/* ------------------------------------------------------------------ */
/* ABI 1.7: device linking.                                             */
/* ------------------------------------------------------------------ */

/*
 * Links a bundle (struct mdgpu_link_bundle, uapi; at most the staging
 * area's size) with the host driver's linker.  *answer (the caller frees
 * it) is the checked answer, *size bytes: struct mdgpu_link_answer, the
 * image, the error log, the info log.  A link the driver refused fails
 * (-EINVAL, mdgpu_last_code() its CUresult) with *answer holding the
 * logs (no image); any other failure leaves *answer NULL.  A daemon of
 * an older minor cannot link: -EOPNOTSUPP, with a message.
 */
int mdgpu_module_link(struct mdgpu *g, const void *bundle, size_t len,
		      void **answer, size_t *size);

/* ------------------------------------------------------------------ */
/* ABI 1.10: stream memory operations.                                  */
/* ------------------------------------------------------------------ */

/*
 * A write (MDGPU_MEMOP_WRITE32/64) or a wait (MDGPU_MEMOP_WAIT32/64, flags
 * its condition MDGPU_MEMOP_WAIT_*) on `stream` (struct mdgpu_cmd_memop
 * of the uapi).  Returns once the daemon queued it (a wait does not wait
 * here), with the daemon's refusal if any: -EINVAL, -ENOENT, -ERANGE as
 * the validator checks it, -EOPNOTSUPP from the sim backend for a wait
 * not met when it runs.  A daemon of an older minor: -EOPNOTSUPP, with a
 * message.
 */
int mdgpu_stream_memop(struct mdgpu *g, uint32_t stream, uint32_t op,
		       mdgpu_devptr addr, uint64_t value, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* MDGPU_MDGPU_H */
