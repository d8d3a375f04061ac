/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpud backends: where validated vGPU work executes.
 *
 * The supervisor (core) validates every command against the vGPU's own
 * state BEFORE it reaches a backend: by the time an op below is called,
 * device ranges lie inside allocations the vGPU owns, host buffers lie
 * inside the vGPU's aperture or a bounce buffer, handles are the backend's
 * own values that this vGPU created, and lengths are within ABI limits.
 * Backends still return errors (negative errno) for what only the device can
 * know: out of device memory, a PTX that fails to JIT, a faulting kernel.
 *
 * Threading: one backend context (bctx) is used by one thread at a time.
 * Different contexts may be used from different threads concurrently.
 *
 * Host memory: `host` pointers passed to copy ops point into memory the
 * core obtained from mdgpud_backend_ops.host_alloc() of the same context
 * (aperture mirror, bounce buffers) or into a region registered with
 * map_shared().  A backend that runs the vGPU in another process (cuda)
 * translates such a pointer to its own mapping, so copies stay zero-copy.
 */
#ifndef MDGPUD_BACKEND_H
#define MDGPUD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/gpu_select.h"
#include "uapi/mdgpu.h"

struct mdgpud_backend;		/* one opened backend (one physical GPU) */
struct mdgpud_bctx;		/* one vGPU's context on it */

struct mdgpud_gpu_info {
	char name[64];		/* "NVIDIA H100 80GB HBM3", "mdgpu sim" */
	char bus_id[32];	/* "0000:65:00.0", "sim0" */
	char uuid[MDGPU_GPU_UUID_STR_LEN]; /* "GPU-...", "" without one (sim) */
	int ordinal;		/* cuda: the CUDA ordinal it was found at;
				 * sim: 0 */
	uint64_t fb_size;	/* bytes the daemon may partition */
	uint64_t ctx_pinned;	/* host bytes the backend pins for each
				 * context of its own (cuda: the worker's
				 * staging area): charged to a socket
				 * client's uid with its aperture */
	uint32_t sm_count;
	uint32_t kind;		/* enum mdgpu_backend_kind */
	/*
	 * DEVICE_INFO's answer as open() found the GPU (its uuid left zero:
	 * each vGPU answers its own).  size, nr_attrs <= MDGPU_DEV_ATTR_MAX,
	 * name NUL-terminated.
	 */
	struct mdgpu_device_info dev;
};

/* An OCCUPANCY question, validated (struct mdgpu_cmd_occupancy). */
struct mdgpud_occupancy {
	uint32_t what;		/* enum mdgpu_occupancy */
	uint32_t block_threads;
	uint32_t flags;		/* ACTIVE_BLOCKS: CU_OCCUPANCY_* */
	uint32_t num_blocks;	/* DYN_SMEM */
	uint64_t dyn_smem;
	uint32_t cluster[3];	/* ACTIVE_CLUSTERS */
	uint32_t grid[3];	/* ACTIVE_CLUSTERS, CLUSTER_SIZE */
};

struct mdgpud_backend_cfg {
	/*
	 * cuda: the GPU as config cuda_device names it, in canonical form
	 * (common/gpu_select.h): a CUDA ordinal, a PCI bus id or a GPU
	 * UUID; NULL: ordinal 0.  open()'s probe worker finds it, and every
	 * later worker is given the ordinal it was found at (Documentation/
	 * cuda-backend.md, "Finding the GPU").
	 */
	const char *device;
	uint64_t fb_size;	/* sim: simulated GPU memory; cuda: 0 = all
				 * free memory minus fb_reserve */
	uint64_t fb_reserve;	/* cuda: bytes kept back for contexts */
	uint32_t sm_count;	/* sim: simulated SMs */
	uint64_t sim_ctx_pinned;	/* sim: gpu_info.ctx_pinned to report */
	int sim_realtime;	/* sim: SPIN_NS also sleeps in real time */
	const char *worker_path; /* cuda: mdgpud-worker binary, NULL = auto */
	uint32_t hang_timeout_ms; /* cuda: bound of every wait for a worker
				   * beyond the work's expected time; past
				   * it the context is lost (0: 5000) */
	uint32_t module_load_timeout_ms; /* cuda: bound of a module load
					  * (the driver's JIT), which has
					  * its own: past it the context is
					  * lost (0: 60000) */
	uint32_t worker_start_timeout_ms; /* cuda: bound of a context's
					   * start (its worker's READY):
					   * past it the start fails
					   * (0: 30000) */
	/*
	 * cuda: the workers' sandbox (Documentation/daemon.md, "Worker
	 * sandbox").  0 (MDGPUD_SANDBOX_OFF) leaves workers as the daemon
	 * is; the daemon's config defaults to MDGPUD_SANDBOX_REQUIRED.
	 */
	int sandbox;		/* enum mdgpud_worker_sandbox */
	/*
	 * cuda: a uid of its own for each worker, the gid of the same
	 * number: [worker_uid_base, + worker_uid_count), count at most
	 * 65536.  Count 0: every worker runs as worker_user.
	 */
	uint32_t worker_uid_base;
	uint32_t worker_uid_count;
	/*
	 * cuda: what derives from the GPU the probe found.  When set, open()
	 * calls derive(derive_arg, ordinal, bus_id, ...) after the probe,
	 * with the GPU's CUDA ordinal and PCI bus id, and uses the
	 * worker_uid_base and mps_dir it wrote in place of cfg's; a negative
	 * errno fails open().  worker_uid_base 0 (with a worker_uid_count)
	 * says the range is not known before the probe, which then runs as
	 * probe_uid (with worker_group), a uid no other worker gets.
	 */
	int (*derive)(const void *arg, int ordinal, const char *bus_id,
		      uint32_t *worker_uid_base, char *mps_dir,
		      size_t mps_dir_len);
	const void *derive_arg;
	uint32_t probe_uid;
	const char *worker_user;  /* name or uid, NULL = "65534"; only
				   * with worker_uid_count 0 */
	const char *worker_group; /* name or gid; with worker_uid_count 0
				   * the workers' group (NULL = the user's),
				   * else their supplementary group (NULL =
				   * none) */
	int seccomp_learn;	/* 0: enforce; 1: syscalls outside the
				 * allowlist are reported, not refused;
				 * 2: every syscall is reported */
	const char *seccomp_allow; /* extra syscall names, ',' separated */
	int dev;		/* enum mdgpud_worker_dev (worker_dev) */
	int net;		/* enum mdgpud_worker_net (worker_net) */
	int tmp;		/* enum mdgpud_worker_tmp (worker_tmp) */
	/*
	 * cuda: idle polling (Documentation/daemon.md, "Waking from idle"):
	 * after a context's slice its worker polls its ring worker_poll_us,
	 * at most worker_pollers workers at once (0: none polls).
	 */
	uint32_t worker_poll_us;
	uint32_t worker_pollers;
	/*
	 * cuda: spatial sharing (Documentation/spatial.md).  With
	 * MDGPUD_SPATIAL_MPS open() starts an MPS control daemon of its own
	 * (mps_control, NULL or "" = searched; pipe and log directories
	 * under mps_dir) and close() stops it; ctx_create_spatial() then
	 * makes MPS clients.  MPS failing to start does not fail open():
	 * time-sliced contexts still work, spatial ones are refused.
	 */
	int spatial;		/* enum mdgpud_spatial */
	const char *mps_control;
	const char *mps_dir;
};

/* Spatial sharing (config spatial). */
enum mdgpud_spatial {
	MDGPUD_SPATIAL_NONE = 0,	/* every vGPU time-sliced */
	MDGPUD_SPATIAL_MPS,		/* SM shares through NVIDIA MPS */
};

/* The workers' mount namespace and /dev (config worker_dev). */
enum mdgpud_worker_dev {
	MDGPUD_WORKER_DEV_NONE = 0,	/* no mount namespace */
	MDGPUD_WORKER_DEV_HOST,		/* namespace, the host's /dev, ro / */
	MDGPUD_WORKER_DEV_PRIVATE,	/* namespace, nvidia nodes only, ro / */
};

/* The workers' network namespace (config worker_net); 0, the default: a
 * new empty one each. */
enum mdgpud_worker_net {
	MDGPUD_WORKER_NET_PRIVATE = 0,	/* unshare(CLONE_NEWNET) */
	MDGPUD_WORKER_NET_HOST,		/* the daemon's */
};

/* The workers' /tmp with worker_dev = none (config worker_tmp; the other
 * worker_dev values always give a private one); 0, the default: a mount
 * namespace with only a tmpfs /tmp of its own. */
enum mdgpud_worker_tmp {
	MDGPUD_WORKER_TMP_PRIVATE = 0,
	MDGPUD_WORKER_TMP_SHARED,	/* the host's; JIT cache off */
};

enum mdgpud_worker_sandbox {
	MDGPUD_SANDBOX_OFF = 0,
	MDGPUD_SANDBOX_BEST_EFFORT,	/* run with what works, logged */
	MDGPUD_SANDBOX_REQUIRED,	/* a worker without it all fails */
};

struct mdgpud_dim3 {
	uint32_t x, y, z;
};

/* One kernel launch, validated. */
struct mdgpud_launch {
	uint64_t func;
	struct mdgpud_dim3 grid, block;
	uint32_t shared_bytes;
	uint32_t flags;			/* MDGPU_LAUNCH_F_* */
	uint32_t cluster;		/* MDGPU_CLUSTER() or 0 */
	uint32_t params_len;
	const void *params;
};

struct mdgpud_backend_ops {
	const char *name;	/* "sim", "cuda" */

	/* Backend lifetime.  open() fills *info. */
	int (*open)(const struct mdgpud_backend_cfg *cfg,
		    struct mdgpud_backend **out, struct mdgpud_gpu_info *info);
	void (*close)(struct mdgpud_backend *be);

	/*
	 * vGPU context.  ctx_destroy() frees everything the context still
	 * holds, scrubbing device memory first, and never fails, nor waits
	 * longer than the hang bound.  A context whose worker died returns
	 * -ENODEV from every op afterwards; the op that found its work hung
	 * (not drained within the bound) returns -ETIMEDOUT.
	 */
	int (*ctx_create)(struct mdgpud_backend *be, uint32_t vgpu_id,
			  struct mdgpud_bctx **out);
	void (*ctx_destroy)(struct mdgpud_bctx *ctx);
	/*
	 * Optional (NULL: -EOPNOTSUPP).  A context that runs side by side
	 * with the backend's other spatial contexts, on sm_percent (1..99)
	 * of the SMs, in a GPU address space of its own; destroyed by
	 * ctx_destroy().  -EOPNOTSUPP when the backend was opened without
	 * spatial sharing, -ENXIO when its mechanism (MPS) is not running:
	 * never a time-sliced context in its place.
	 */
	int (*ctx_create_spatial)(struct mdgpud_backend *be, uint32_t vgpu_id,
				  uint32_t sm_percent,
				  struct mdgpud_bctx **out);
	/*
	 * Optional (NULL: the core waits in ctx_create/ctx_create_spatial).
	 * A context's start, which the caller does not wait for: a cuda
	 * worker's cuInit and context creation take a second or more, which
	 * the dispatcher spends on the other vGPUs.  ctx_start() takes what
	 * ctx_create() takes (sm_percent 0) or ctx_create_spatial() takes
	 * (1..99), fails at once as those would where it can tell at once
	 * (no uid, no MPS), and otherwise returns 0 with *out starting.
	 * ctx_start_poll() never waits: -EINPROGRESS while the context
	 * starts, then 0 once it is usable, or -ETIMEDOUT when it did not
	 * start within the backend's bound (worker_start_timeout_ms) and
	 * -ENODEV when it failed otherwise; a failed context stays lost
	 * (ctx_status -ENODEV) until ctx_destroy().  While it starts the
	 * context takes no op but ctx_start_poll(), ctx_status() (0) and
	 * ctx_destroy(), which gives the start up at once.
	 */
	int (*ctx_start)(struct mdgpud_backend *be, uint32_t vgpu_id,
			 uint32_t sm_percent, struct mdgpud_bctx **out);
	int (*ctx_start_poll)(struct mdgpud_bctx *ctx);
	/*
	 * 0 while the context is usable; -ETIMEDOUT once it was destroyed
	 * for work that did not drain within the hang bound; -EIO once a
	 * GPU fault made it unusable (err_code() says which); -ENODEV once
	 * it died otherwise (its worker gone).  A lost context
	 * stays lost: a new one takes its place (ctx_create).  NULL: the
	 * backend's contexts cannot be lost.
	 */
	int (*ctx_status)(const struct mdgpud_bctx *ctx);

	/*
	 * Shared host memory visible to the context: `size` bytes, page
	 * aligned, zero-filled.  The cuda backend shares it with the worker
	 * process (and pins it with cuMemHostRegister for DMA speed).
	 */
	void *(*host_alloc)(struct mdgpud_bctx *ctx, size_t size);
	void (*host_free)(struct mdgpud_bctx *ctx, void *ptr, size_t size);
	/* Make an existing shared mapping (fd, offset) usable as host memory. */
	int (*map_shared)(struct mdgpud_bctx *ctx, int fd, uint64_t offset,
			  void *ptr, size_t size);
	/*
	 * Optional (NULL: the core waits in map_shared).  The same, not
	 * waited for: a socket client's aperture may be up to host_mib_max
	 * (1 GiB), which the driver pins page by page (about 75 ms per GiB
	 * through a worker on the H100), so the core maps a new context's
	 * aperture this way and serves the other vGPUs meanwhile.
	 * map_shared_start() returns 0 once the mapping is under way (the
	 * caller may close fd) or fails as map_shared() would, with nothing
	 * under way; meanwhile the context takes what it takes during a
	 * pending module load.  map_shared_poll() never waits:
	 * -EINPROGRESS, then once the result, as map_shared() would.  Its
	 * bound is the hang bound (-ETIMEDOUT past it, the context lost);
	 * pend_abort() or ctx_destroy() gives it up.
	 */
	int (*map_shared_start)(struct mdgpud_bctx *ctx, int fd,
				uint64_t offset, void *ptr, size_t size);
	int (*map_shared_poll)(struct mdgpud_bctx *ctx);

	/* Device memory.  *reserved: bytes the device really set aside. */
	int (*mem_alloc)(struct mdgpud_bctx *ctx, uint64_t size,
			 uint64_t *addr, uint64_t *reserved);
	/* Scrubs [addr, addr + size) to zero, then frees it; waits for the
	 * work of every stream first (the memory may still be in use). */
	int (*mem_free)(struct mdgpud_bctx *ctx, uint64_t addr, uint64_t size);

	/*
	 * Streams.  `stream` is 0 for the context's default stream (CUDA's
	 * legacy default stream: it waits for earlier work of blocking
	 * streams, and their later work for it) or a value stream_create()
	 * returned.  Work on one stream runs in submission order.
	 */

	/* Fills len bytes (a multiple of width) with the low `width` (1, 2
	 * or 4) bytes of value; asynchronous. */
	int (*mem_set)(struct mdgpud_bctx *ctx, uint64_t stream, uint64_t addr,
		       uint32_t value, uint32_t width, uint64_t len);

	/*
	 * Copies, ordered after earlier work of their stream.  A host copy
	 * returns once it is done (copy_d2h: the data is in host memory),
	 * unless `async` is set and the backend can queue it without a
	 * staging copy (host memory it shares with the device, such as
	 * map_shared() regions): then it returns once queued, and the
	 * caller keeps the host bytes as they are until later work shows
	 * the copy done.  copy_d2d is always asynchronous.
	 */
	int (*copy_h2d)(struct mdgpud_bctx *ctx, uint64_t stream, uint64_t dst,
			const void *src, uint64_t len, int async);
	int (*copy_d2h)(struct mdgpud_bctx *ctx, uint64_t stream, void *dst,
			uint64_t src, uint64_t len, int async);
	int (*copy_d2d)(struct mdgpud_bctx *ctx, uint64_t stream, uint64_t dst,
			uint64_t src, uint64_t len);

	/* Code.  Handles are backend values; the core maps guest handles. */
	int (*module_load)(struct mdgpud_bctx *ctx, uint32_t kind,
			   const void *image, size_t len, uint64_t *module);
	/*
	 * Optional (NULL: -EOPNOTSUPP).  The same with the image in the
	 * context's device memory, [addr, addr + len) inside one of the
	 * vGPU's allocations (validated), len <= MDGPU_MODULE_DEVICE_MAX:
	 * the backend reads it there itself, after the work queued before.
	 */
	int (*module_load_dev)(struct mdgpud_bctx *ctx, uint32_t kind,
			       uint64_t addr, uint64_t len, uint64_t *module);
	/*
	 * Optional (NULL: the core waits in module_load/module_load_dev).
	 * A module load the caller does not wait for: the driver's JIT of
	 * a PTX may take seconds, which the dispatcher spends on the other
	 * vGPUs.  module_load_start() and module_load_dev_start() take what
	 * module_load() and module_load_dev() take and return 0 once the
	 * load is under way (the image copied: the caller may reuse it),
	 * or fail as those would, with nothing under way.  While a load is
	 * under way the context takes no op but module_load_poll(),
	 * pend_abort(), ctx_status(), err_code() and ctx_destroy()
	 * (others fail -EBUSY).  module_load_poll() never waits: it answers
	 * -EINPROGRESS while the load runs, then once its result, as
	 * module_load() would (*module on success).  A load not done within
	 * the backend's own bound (module_load_timeout_ms, not the hang
	 * bound) fails -ETIMEDOUT and loses the context as a hang does.
	 * pend_abort() gives the request under way up at once (a load
	 * here, or a registration: host_register_start()) because the vGPU
	 * is reset or destroyed: the context is lost (-ENODEV).
	 */
	int (*module_load_start)(struct mdgpud_bctx *ctx, uint32_t kind,
				 const void *image, size_t len);
	int (*module_load_dev_start)(struct mdgpud_bctx *ctx, uint32_t kind,
				     uint64_t addr, uint64_t len);
	int (*module_load_poll)(struct mdgpud_bctx *ctx, uint64_t *module);
	void (*pend_abort)(struct mdgpud_bctx *ctx);
	int (*module_unload)(struct mdgpud_bctx *ctx, uint64_t module);
	/*
	 * *func, and where local_bytes is not NULL the function's local
	 * memory per thread (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES): the driver
	 * reserves that much for every thread the GPU holds resident when
	 * the function is launched (core/info.c charges it).
	 */
	int (*func_get)(struct mdgpud_bctx *ctx, uint64_t module,
			const char *name, uint64_t *func,
			uint64_t *local_bytes);
	/* Asynchronous: errors of the running kernel surface at sync(). */
	int (*launch)(struct mdgpud_bctx *ctx, uint64_t stream,
		      const struct mdgpud_launch *l);
	/* enum mdgpu_builtin; arguments already validated.  CHECKSUM is
	 * synchronous and returns its value in *result. */
	int (*builtin)(struct mdgpud_bctx *ctx, uint64_t stream,
		       uint32_t kernel, const uint64_t arg[5],
		       uint64_t *result);

	/* Events.  flags: MDGPU_EVENT_F_*. */
	int (*event_create)(struct mdgpud_bctx *ctx, uint32_t flags,
			    uint64_t *event);
	/* Asynchronous: the event completes when the stream's earlier work
	 * has. */
	int (*event_record)(struct mdgpud_bctx *ctx, uint64_t stream,
			    uint64_t event);
	int (*event_elapsed)(struct mdgpud_bctx *ctx, uint64_t start,
			     uint64_t end, uint64_t *ns);
	int (*event_destroy)(struct mdgpud_bctx *ctx, uint64_t event);

	/* Wait until the work of `stream` has finished; stream 0: all
	 * submitted work of the context, every stream. */
	int (*sync)(struct mdgpud_bctx *ctx, uint64_t stream);

	/*
	 * Accounting for the scheduler: slice_begin() marks the start of a
	 * batch, slice_end() waits for the batch to finish and returns the
	 * GPU time it really used (device events on cuda, the simulated
	 * clock on sim).  expect_ns is the caller's estimate of how long
	 * the batch still runs on the GPU (0: unknown or nothing queued),
	 * a hint for how to wait (sleep most of it, spin at its end).
	 */
	int (*slice_begin)(struct mdgpud_bctx *ctx);
	int (*slice_end)(struct mdgpud_bctx *ctx, uint64_t expect_ns,
			 uint64_t *gpu_ns);
	/*
	 * Optional (NULL: the core calls slice_end() on each in turn).
	 * slice_end() in two halves, for the members of a spatial group,
	 * whose work ran side by side: slice_end_post() posts the end of
	 * ctx's slice (expect_ns as slice_end's) and returns at once, and
	 * no op of ctx but slice_end_wait() may follow; slice_end_wait()
	 * waits for that end as slice_end() would, its bound counted from
	 * the post, not from the call.  The core posts every member's end
	 * before it waits for any: the members drain at once, and members
	 * whose work does not drain cost the group's end one hang bound
	 * together, not one each.
	 */
	int (*slice_end_post)(struct mdgpud_bctx *ctx, uint64_t expect_ns);
	int (*slice_end_wait)(struct mdgpud_bctx *ctx, uint64_t *gpu_ns);
	/*
	 * Optional (NULL: no-op).  A hint that work for this context is
	 * likely to arrive within about within_ns (it is next in line behind
	 * a slice that is draining): a backend may get ready for it.
	 */
	void (*expect_work)(struct mdgpud_bctx *ctx, uint64_t within_ns);

	/*
	 * ABI 1.2 introspection (Documentation/abi.md).  A NULL op answers
	 * -EOPNOTSUPP.
	 *
	 * func_info: the function's attributes (MDGPU_ATTR_NONE where the
	 * driver has none) and parameter layout into *out, whose param[]
	 * has room for max_params entries; -E2BIG if the function has more,
	 * -EOPNOTSUPP if the driver cannot tell parameter layouts.
	 */
	int (*func_info)(struct mdgpud_bctx *ctx, uint64_t func,
			 struct mdgpu_func_info *out, uint32_t max_params);
	/* A validated attribute (or MDGPU_FUNC_ATTR_CACHE_CONFIG); the
	 * driver's refusal is -EINVAL. */
	int (*func_set_attr)(struct mdgpud_bctx *ctx, uint64_t func,
			     uint32_t attr, int32_t value);
	/* A module's global variable: its device address and size. */
	int (*module_global)(struct mdgpud_bctx *ctx, uint64_t module,
			     const char *name, uint64_t *addr,
			     uint64_t *bytes);
	/*
	 * ABI 1.5 (NULL: -EOPNOTSUPP).  The names of the module's kernels in
	 * the driver's order, each NUL-terminated, one after the other: as
	 * many whole names as fit buf[len] (*written bytes of it, never part
	 * of a name), the bytes of the whole list (*size) and the number of
	 * kernels (*count).  -EOPNOTSUPP if the driver cannot list them.
	 */
	int (*module_funcs)(struct mdgpud_bctx *ctx, uint64_t module,
			    char *buf, uint32_t len, uint32_t *written,
			    uint64_t *size, uint64_t *count);
	/*
	 * MODULE_LINK (ABI 1.7), optional (NULL: -EOPNOTSUPP): links the
	 * bundle[0, len) (not yet parsed: the backend checks it) and writes
	 * the answer (struct mdgpu_link_answer, uapi) into out: whole if it
	 * fits cap bytes, else its header alone; *written the bytes
	 * written, *size the whole answer's.  A link the driver refused
	 * fails (-EINVAL) with its answer written all the same (the logs);
	 * any other failure writes nothing (*written 0).
	 */
	int (*module_link)(struct mdgpud_bctx *ctx, const void *bundle,
			   uint32_t len, void *out, uint32_t cap,
			   uint32_t *written, uint64_t *size);
	/* Get (set 0) or set a CUlimit; *result: the value in force after. */
	int (*ctx_limit)(struct mdgpud_bctx *ctx, uint32_t limit, int set,
			 uint64_t value, uint64_t *result);
	int (*occupancy)(struct mdgpud_bctx *ctx, uint64_t func,
			 const struct mdgpud_occupancy *q, uint64_t *result);
	/*
	 * The device address at which kernels reach host memory [ptr, ptr +
	 * size) of this context (memory of map_shared/host_alloc), and the
	 * bytes mapped there; *devptr 0 when the backend does not map it.
	 */
	int (*host_devptr)(struct mdgpud_bctx *ctx, const void *ptr,
			   size_t size, uint64_t *devptr, uint64_t *bytes);
	/*
	 * A client's shared memory for its GPU (HOST_REGISTER, ABI 1.12):
	 * [offset, offset + len) of fd, a checked shared-memory file, mapped
	 * and pinned for the context, at `addr` of the backend's address
	 * space when that is free (else anywhere); *devptr: where kernels
	 * and copies reach it.  The caller keeps fd.  host_unregister(devptr)
	 * unpins and unmaps it; work still queued that uses it must be done
	 * (the client synchronises first).  NULL: not supported.
	 */
	int (*host_register)(struct mdgpud_bctx *ctx, int fd, uint64_t offset,
			     uint64_t len, uint64_t addr, bool read_only,
			     uint64_t *devptr);
	/*
	 * Optional (NULL: the core waits in host_register).  A registration
	 * the caller does not wait for: the driver pins every page, about
	 * 33 ms per GiB natively and 75 ms through a worker on the H100,
	 * which the dispatcher spends on the other vGPUs.
	 * host_register_start() takes what host_register() takes and
	 * returns 0 once the registration is under way (the caller may
	 * close fd), or fails as host_register() would, with nothing under
	 * way.  Meanwhile the context takes what it takes during a pending
	 * module load.  host_register_poll() never waits: -EINPROGRESS
	 * while the driver pins, then once the result, as host_register()
	 * would (*devptr on success).  Its bound is the hang bound: past it
	 * -ETIMEDOUT, the context lost as after a hang; pend_abort() gives
	 * it up.
	 */
	int (*host_register_start)(struct mdgpud_bctx *ctx, int fd,
				   uint64_t offset, uint64_t len, uint64_t addr,
				   bool read_only);
	int (*host_register_poll)(struct mdgpud_bctx *ctx, uint64_t *devptr);
	int (*host_unregister)(struct mdgpud_bctx *ctx, uint64_t devptr);
	/*
	 * Streams and event queries (ABI 1.2).  stream_create: flags
	 * MDGPU_STREAM_F_*, priority already clamped to stream_priorities().
	 * stream_destroy returns at once; work queued on the stream still
	 * runs, and sync(0) and slice_end() still wait for it.
	 * stream_wait_event: later work of `stream` waits for the event's
	 * last record (no record: no wait).  The queries answer *pending 1
	 * while work is outstanding, 0 once done; event_sync waits for the
	 * event's last record, within the hang bound like sync().
	 */
	int (*stream_create)(struct mdgpud_bctx *ctx, uint32_t flags,
			     int32_t priority, uint64_t *stream);
	int (*stream_destroy)(struct mdgpud_bctx *ctx, uint64_t stream);
	int (*stream_wait_event)(struct mdgpud_bctx *ctx, uint64_t stream,
				 uint64_t event);
	int (*stream_query)(struct mdgpud_bctx *ctx, uint64_t stream,
			    uint32_t *pending);
	int (*event_query)(struct mdgpud_bctx *ctx, uint64_t event,
			   uint32_t *pending);
	int (*event_sync)(struct mdgpud_bctx *ctx, uint64_t event);
	/*
	 * Optional (NULL: -EOPNOTSUPP), ABI 1.10: a stream memory operation
	 * on `stream`, op MDGPU_MEMOP_*, addr a validated word of the
	 * vGPU's memory aligned to its width (4 or 8), flags the wait's
	 * condition MDGPU_MEMOP_WAIT_* (a write: 0).  Queued after the
	 * stream's earlier work; returns once queued.  A backend that runs
	 * work synchronously and cannot hold a stream (sim) fails a wait
	 * whose condition is not met when it runs with -EOPNOTSUPP.
	 */
	int (*stream_memop)(struct mdgpud_bctx *ctx, uint64_t stream,
			    uint32_t op, uint64_t addr, uint64_t value,
			    uint32_t flags);
	/*
	 * Optional: *busy 1 while any of the vGPU's streams still has work
	 * queued on the GPU, 0 once all is done; nothing is waited for.
	 * The dispatcher's only vGPU keeps its slice while it is 1
	 * (core/dispatch.c, mdgpud_dispatch_linger).  NULL: a backend whose
	 * work is done when its call returns (sim).
	 */
	int (*busy)(struct mdgpud_bctx *ctx, uint32_t *busy);
	/* The device's priority range: numerically least (lowest priority)
	 * and greatest (highest; CUDA's are <= least). */
	void (*stream_priorities)(struct mdgpud_backend *be, int32_t *least,
				  int32_t *greatest);
	/*
	 * Optional (NULL: none).  The backend's own code (a CUresult on
	 * cuda) of the last op since err_clear() that the device or its
	 * driver failed, or, once ctx_status() reports the context lost, of
	 * the error that lost it; 0 if none.  The core clears it before
	 * each command, so that a failed command carries the code of its
	 * own ops only (result2 of its completion), never an older one.
	 */
	uint64_t (*err_code)(const struct mdgpud_bctx *ctx);
	void (*err_clear)(struct mdgpud_bctx *ctx);
};

extern const struct mdgpud_backend_ops mdgpud_backend_sim;
extern const struct mdgpud_backend_ops mdgpud_backend_cuda;

/* Look a backend up by name ("sim", "cuda"); NULL if unknown. */
const struct mdgpud_backend_ops *mdgpud_backend_find(const char *name);

/* Reference results of the builtins, shared by sim and the tests. */
uint64_t mdgpud_checksum_ref(const uint32_t *words, uint64_t count);

#endif /* MDGPUD_BACKEND_H */
