/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libcuda internals.  One process opens one vGPU (one libmdgpu handle) at
 * cuInit; it is device 0, the only device.  Contexts, streams, events,
 * modules and functions are objects of this library over that handle:
 * the daemon sees one ring whose commands complete in order.
 *
 * Locking: mdgpu_cu.lock serialises every call that touches the handle
 * or the object lists (a libmdgpu handle is not thread-safe).  The
 * current-context stack, and beside it the thread's per-thread default
 * streams (context.c), are per thread and need no lock; a context or a
 * stream taken from them is checked against its live list under the
 * lock before use.
 *
 * Handles the application passes in are never dereferenced before they
 * are found in the list of their kind, so a stale or forged handle is
 * refused (CUDA_ERROR_INVALID_HANDLE / INVALID_CONTEXT) instead of read.
 */
#ifndef MDGPU_CU_PRIV_H
#define MDGPU_CU_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <mdgpu/mdgpu.h>
#include "uapi/mdgpu.h"

#include "image.h"

/* Exports `new` as another name of the implemented `impl`
 * (gen-entry-points.py reads these lines).  `new` is used only through #
 * and ##, so a cuda.h macro of that name does not expand. */
#define MDGPU_CU_ALIAS(new, impl)					  \
	extern __typeof__(impl) mdgpu_cu_alias_##new __asm__(#new)	  \
		__attribute__((alias(#impl)))

/*
 * Defines `ptsz`, the per-thread-default-stream variant (_ptsz, _ptds) of
 * the implemented `impl`, as returning `call` (gen-entry-points.py reads
 * these lines).  params: its parameter list, which the compiler checks
 * against impl's type.  call: impl itself with its stream argument s
 * written MDGPU_CU_PTS(s) (a NULL stream is CU_STREAM_PER_THREAD), or,
 * for a synchronous call without a stream argument, impl's implementation
 * on CU_STREAM_PER_THREAD.  `ptsz` is used only through # and ##.
 */
#define MDGPU_CU_PTS(s)		((s) ? (s) : CU_STREAM_PER_THREAD)
#define MDGPU_CU_PTSZ(ptsz, impl, params, call)				  \
	extern __typeof__(impl) mdgpu_cu_ptsz_##ptsz __asm__(#ptsz);	  \
	CUresult CUDAAPI mdgpu_cu_ptsz_##ptsz params			  \
	{								  \
		return call;						  \
	}

/* A growable array of object pointers: the live objects of one kind. */
struct mdgpu_cu_set {
	void **v;
	size_t n, cap;
};

int mdgpu_cu_set_add(struct mdgpu_cu_set *s, void *p);
bool mdgpu_cu_set_has(const struct mdgpu_cu_set *s, const void *p);
void mdgpu_cu_set_del(struct mdgpu_cu_set *s, const void *p);

struct CUctx_st {
	bool primary;
	unsigned flags;
	uint64_t id;		/* cuCtxGetId: unique in the process, from 1 */
	uint64_t stream_id;	/* cuStreamGetId of its default stream */
};

/*
 * A range of device memory the application may name: an allocation, or
 * (global set) a module's global variable, which cuMemFree refuses and
 * which goes with its module.  `id` is CU_POINTER_ATTRIBUTE_BUFFER_ID.
 */
struct mdgpu_cu_alloc {
	CUcontext ctx;
	mdgpu_devptr addr;
	uint64_t size;
	uint64_t id;
	bool global;
	struct CUmemPoolHandle_st *pool;	/* a pool's (mempool.c), or NULL */
};

/*
 * A memory pool (mempool.c): the stream-ordered allocator's accounting
 * over ordinary allocations.  Nothing is cached, so the reserved bytes
 * are the used bytes: the sizes of the live allocations in `allocs`, each
 * a daemon allocation (bounded by the daemon's max_allocs and quota).  A
 * pool destroyed with live allocations leaves mdgpu_cu.pools (its handle
 * is then refused) and is freed with its last allocation (`destroyed`).
 */
struct CUmemPoolHandle_st {
	bool dflt;			/* the device's default pool */
	bool destroyed;
	uint64_t max_size;		/* CUmemPoolProps.maxSize, 0: none */
	uint64_t used, used_high, reserved_high;
	uint64_t release_threshold;
	int reuse_follow, reuse_opportunistic, reuse_internal;
	struct mdgpu_cu_set allocs;	/* struct mdgpu_cu_alloc * */
};

/*
 * Host memory: zero-copy (cuMemHostAlloc), or registered: shared with the
 * GPU where the pages are shared memory (hostreg.c; zc_dev the device
 * address of the page at zc_base), else a record whose copies are staged
 * (Documentation/libcuda.md).
 */
struct mdgpu_cu_host {
	CUcontext ctx;
	void *ptr;
	size_t size;
	unsigned flags;			/* CU_MEMHOSTALLOC_* / _REGISTER_* */
	bool registered;
	uintptr_t zc_base;		/* registered and shared: */
	uint64_t zc_dev;		/* 0 where not shared */
};

/* hostreg.c: registers [p, p + size) with the daemon if the pages are
 * shared memory; negative errno otherwise (-EINVAL: private memory). */
int mdgpu_cu_host_share(const void *p, size_t size, bool ro,
			uintptr_t *base, uint64_t *dev);

/*
 * A module of the vGPU.  ctx is the context that loaded it, NULL for a
 * library's module (lib set), which no context owns (code.h).  Its
 * kernels' names are asked of the daemon once, when first needed
 * (listed): nr_kernels names in `kernels`, each NUL-terminated.
 */
struct CUmod_st {
	CUcontext ctx;
	struct CUlib_st *lib;
	uint32_t module;		/* libmdgpu module handle */
	char *ptx;			/* PTX text, NULL for a cubin */
	size_t ptx_len;
	struct mdgpu_cu_set globals;	/* struct mdgpu_cu_alloc * */
	bool listed;
	char *kernels;			/* NULL when there is none */
	uint32_t nr_kernels;
};

/*
 * A function of a module; a library's kernel (CUkernel) is the function
 * of the library's module, the same object.  info is the daemon's
 * FUNC_INFO answer (NULL from a daemon without it); layout comes from
 * info, else from the module's PTX.
 */
/*
 * Answers to OCCUPANCY questions about one function (occupancy.c).  An
 * answer depends on the question, the GPU and the function's attributes
 * only, so it is kept until an attribute of the function is set: a
 * framework asks the same few questions before many launches, and each
 * would otherwise be a round trip queued behind the vGPU's work.
 */
#define MDGPU_CU_OCC_CACHED	8

/* Waits under the scheduling flags (init.c, mdgpu_cu_apply_sched): the
 * long spin of SPIN, YIELD and AUTO, AUTO's on small machines (libmdgpu's
 * default), and the CPUs from which AUTO spins long. */
#define MDGPU_CU_SPIN_US_LONG		1000000u
#define MDGPU_CU_SPIN_US_SHORT		1000u
#define MDGPU_CU_SPIN_AUTO_CPUS		8
struct mdgpu_cu_occ_answer {
	struct mdgpu_cmd_occupancy q;
	uint64_t v;
};

struct CUfunc_st {
	struct CUmod_st *mod;
	uint32_t func;			/* libmdgpu function handle */
	char *name;
	struct mdgpu_func_info *info;
	bool layout_known;
	struct mdgpu_cu_layout layout;
	struct mdgpu_cu_occ_answer occ[MDGPU_CU_OCC_CACHED];
	unsigned int occ_n, occ_next;	/* answers kept, next to replace */
};

/*
 * A stream of the daemon (ABI 1.2): `handle` names it in commands.  The
 * NULL stream and CU_STREAM_LEGACY are the vGPU's stream 0
 * (mdgpu_cu_stream_handle()).  CU_STREAM_PER_THREAD names the calling
 * thread's per-thread default stream of the current context, a stream of
 * this kind with `ptds` set (mdgpu_cu_stream_resolve()).
 */
struct CUstream_st {
	CUcontext ctx;
	unsigned flags;
	int priority;
	uint32_t handle;
	uint64_t id;			/* cuStreamGetId */
	bool ptds;			/* a thread's per-thread stream */
	struct mdgpu_cu_member *cap;	/* its part in a capture (graph.c) */
};

/* recorded: for real, on the daemon; cap: last recorded by a capture
 * (graph.c), which then takes the place of the real record. */
struct CUevent_st {
	CUcontext ctx;
	unsigned flags;
	uint32_t event;			/* libmdgpu event handle */
	bool recorded;
	struct mdgpu_cu_evcap *cap;
};

struct mdgpu_cu_state {
	pthread_mutex_t lock;
	bool init_done;
	CUresult init_result;
	struct mdgpu *g;
	struct mdgpu_info info;
	/* The GPU as the daemon describes it (DEVICE_INFO, ABI 1.2). */
	struct mdgpu_device_info dev;
	/* Device address at which kernels reach aperture byte 0, 0 when
	 * the daemon does not map it (QUERY APERTURE_DEVPTR). */
	uint64_t aperture_devptr;
	uint64_t aperture_mapped;
	char type[64];			/* vGPU type asked for */
	char transport[16];
	struct CUctx_st primary;
	unsigned primary_refs;
	uint64_t next_ctx_id;	/* the next context's id, 0 until the first */
	uint64_t next_stream_id; /* the same for streams (stream.c) */
	unsigned primary_flags;
	bool spin_env;		/* MDGPU_SPIN_US given: sched flags ignored */
	struct mdgpu_cu_set ctxs;	/* CUcontext; primary while refs > 0 */
	struct mdgpu_cu_set allocs;	/* struct mdgpu_cu_alloc * */
	struct mdgpu_cu_set hosts;	/* struct mdgpu_cu_host * */
	struct mdgpu_cu_set mods;	/* CUmodule */
	struct mdgpu_cu_set funcs;	/* CUfunction */
	struct mdgpu_cu_set streams;	/* CUstream */
	struct mdgpu_cu_set events;	/* CUevent */
	struct mdgpu_cu_set captures;	/* struct mdgpu_cu_capture * */
	struct mdgpu_cu_set graphs;	/* CUgraph */
	struct mdgpu_cu_set execs;	/* CUgraphExec */
	struct mdgpu_cu_set pools;	/* CUmemoryPool made by cuMemPoolCreate */
	struct CUmemPoolHandle_st pool_default;	/* device 0's, never freed */
	CUmemoryPool pool_current;	/* cuDeviceSetMemPool's, or the default */
};

extern struct mdgpu_cu_state mdgpu_cu;

/* Under the lock: waits follow the scheduling flags of a context being
 * made or of the primary context (init.c). */
void mdgpu_cu_apply_sched(unsigned flags);

/* Negative errno of libmdgpu to CUresult (the one mapping). */
CUresult mdgpu_cu_result(int err);
/*
 * Under the lock, after a failed libmdgpu call: its CUresult, where a
 * command that failed with the backend's own code (a CUresult on the
 * cuda backend, mdgpu_last_code()) gives that code.
 */
CUresult mdgpu_cu_error(int err);

/*
 * Entry of every implemented call but the few that work before cuInit:
 * takes mdgpu_cu.lock and checks initialisation; on CUDA_SUCCESS the
 * caller holds the lock and must mdgpu_cu_leave().
 */
CUresult mdgpu_cu_enter(void);
/* stream.c: set on the host-function thread, whose CUDA calls
 * mdgpu_cu_enter refuses (CUDA_ERROR_NOT_PERMITTED). */
extern _Thread_local bool mdgpu_cu_in_host_fn;
void mdgpu_cu_leave(void);
/*
 * Called with the lock held: finishes the wait w that `begun` (the
 * result of an mdgpu_wait_begin_*()) started, releasing the lock while
 * it waits where the transport lets several threads wait at once, so
 * that other threads' calls go on meanwhile.  Returns with the lock held
 * again: 0 or the wait's negative errno (mdgpu_cu_error() maps it).
 */
int mdgpu_cu_wait(struct mdgpu_wait *w, int begun);
/* mdgpu_cu_enter, then the calling thread's current context (live). */
CUresult mdgpu_cu_enter_ctx(CUcontext *ctx);
/*
 * Entry of a call on an object of the set s: mdgpu_cu_enter, or
 * mdgpu_cu_enter_ctx when ctx is not NULL (the call needs a current
 * context: INVALID_CONTEXT comes first), then CUDA_ERROR_INVALID_HANDLE
 * unless p is in s.  On CUDA_SUCCESS the caller holds the lock.
 */
CUresult mdgpu_cu_enter_obj(const struct mdgpu_cu_set *s, const void *p,
			    CUcontext *ctx);
/* Under the lock: is ctx a live context. */
bool mdgpu_cu_ctx_live(CUcontext ctx);
/* Under the lock: the calling thread's current context if live. */
CUcontext mdgpu_cu_current(void);
/* Under the lock: the id of a context being made (cuCtxGetId). */
uint64_t mdgpu_cu_ctx_next_id(void);
/* Under the lock: a new stream id (a context's default stream takes one). */
uint64_t mdgpu_cu_stream_next_id(void);
/*
 * Under the lock: cuStreamGetId of s, a resolved stream of ctx's (the
 * legacy stream: ctx's own; ctx NULL: the current context).
 */
CUresult mdgpu_cu_stream_id(CUcontext ctx, CUstream s, uint64_t *id);
/* Under the lock: a stream argument (NULL, CU_STREAM_LEGACY,
 * CU_STREAM_PER_THREAD or a live stream of a live context), checked only,
 * for a call that does not use the stream. */
CUresult mdgpu_cu_stream_check(CUstream s);
/*
 * Under the lock: checks the stream argument *s as mdgpu_cu_stream_check
 * does and replaces CU_STREAM_PER_THREAD by the calling thread's
 * per-thread default stream of ctx (a live context; NULL: the current
 * one, INVALID_CONTEXT without one), made on first use.  Every call that
 * uses a stream resolves it first, so the rest of the library knows two
 * kinds of stream: the legacy one (handle 0) and created ones.
 */
CUresult mdgpu_cu_stream_resolve(CUcontext ctx, CUstream *s);
/* Under the lock, of a resolved stream: the daemon's stream handle (0 for
 * the legacy stream). */
uint32_t mdgpu_cu_stream_handle(CUstream s);
/* Under the lock: frees s and its daemon stream, whose queued work still
 * runs. */
void mdgpu_cu_stream_drop(CUstream s);
/* Whether the daemon serves stream memory operations (memop.c): ABI
 * 1.10 or later. */
bool mdgpu_cu_memop_offered(void);
/*
 * Under the lock: the calling thread's per-thread default stream of ctx
 * if it still lives, else NULL; remember s as that stream (-ENOMEM).
 * The thread's streams are dropped when it exits (context.c).
 */
CUstream mdgpu_cu_ptds_get(CUcontext ctx);
int mdgpu_cu_ptds_set(CUcontext ctx, CUstream s);
/* Under the lock: the daemon's stream priority range. */
CUresult mdgpu_cu_priorities(int *least, int *greatest);

/* Under the lock: free everything ctx owns (destroy, primary reset). */
void mdgpu_cu_ctx_release_objects(CUcontext ctx);
void mdgpu_cu_mem_release(CUcontext ctx);
/* Under the lock: record a device range (cuMemAlloc, a module global). */
struct mdgpu_cu_alloc *mdgpu_cu_alloc_add(CUcontext ctx, mdgpu_devptr addr,
					  uint64_t size, bool global);
/* Under the lock: forget a recorded range without freeing it. */
void mdgpu_cu_alloc_forget(struct mdgpu_cu_alloc *a);
/*
 * Under the lock: a new device allocation of size > 0 bytes owned by ctx,
 * recorded (cuMemAlloc's path: the daemon enforces the quota), or the
 * CUresult cuMemAlloc answers.
 */
CUresult mdgpu_cu_mem_alloc(CUcontext ctx, uint64_t size,
			    struct mdgpu_cu_alloc **out);
/*
 * Under the lock: frees the allocation starting at addr as cuMemFree
 * does (the vGPU synchronised first, since queued work of any stream may
 * still use it): CUDA_ERROR_INVALID_VALUE when addr starts no allocation
 * (or a module global), else the synchronisation's result.
 */
CUresult mdgpu_cu_mem_free(mdgpu_devptr addr);
/* Under the lock (mempool.c): allocation a of a pool is being freed. */
void mdgpu_cu_pool_alloc_gone(struct mdgpu_cu_alloc *a);
/* Under the lock: the recorded range holding [addr, addr + len), len > 0,
 * or NULL. */
struct mdgpu_cu_alloc *mdgpu_cu_alloc_range(mdgpu_devptr addr, uint64_t len);
/* Under the lock: that, or [addr, addr + len) of registered shared host
 * memory by its device address (memory.c). */
bool mdgpu_cu_dev_range(mdgpu_devptr addr, uint64_t len);
void mdgpu_cu_module_release(CUcontext ctx);
void mdgpu_cu_stream_release(CUcontext ctx);

/* Logging to stderr when MDGPU_CUDA_LOG is set. */
bool mdgpu_cu_log_on(void);
void mdgpu_cu_log(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif /* MDGPU_CU_PRIV_H */
