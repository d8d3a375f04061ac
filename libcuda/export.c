// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: cuGetExportTable, the private tables NVIDIA's runtime (cudart)
 * asks the driver for before it does anything else.  Each table is an
 * array of pointer-sized slots found by a 16-byte UUID; slot 0 of most
 * tables holds the table's size in bytes, the others functions.  What
 * each slot does and how the runtime uses it, with the evidence, is in
 * Documentation/export-tables.md.
 *
 * Rules here: a slot whose contract is established does what the
 * runtime expects of it, on our objects; a slot whose contract is not
 * established logs its call (with MDGPU_CUDA_LOG) and answers
 * CUDA_ERROR_NOT_SUPPORTED; a table we do not serve is
 * CUDA_ERROR_NOT_FOUND.  Every pointer the caller passes is checked for
 * NULL and every handle looked up before use, as in the public calls.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "code.h"
#include "export.h"
#include "md2.h"
#include "priv.h"

typedef void (*mdgpu_cu_xt_fn)(void);

/* One slot of a table: its size in bytes (slot 0) or a function. */
union mdgpu_cu_xt_slot {
	size_t size;
	mdgpu_cu_xt_fn fn;
};
_Static_assert(sizeof(union mdgpu_cu_xt_slot) == sizeof(void *),
	       "a table slot is one pointer wide");

#define XT_SIZE(tbl)	{ .size = sizeof(tbl) }
#define XT_FN(f)	{ .fn = (mdgpu_cu_xt_fn)(f) }

/*
 * A slot whose contract is not established.  It takes the first four
 * integer arguments the caller may have passed (on x86-64 they are
 * registers, read whatever the real signature is) only to log them.
 */
static CUresult mdgpu_cu_xt_unknown(const char *table, unsigned slot,
				    uintptr_t a0, uintptr_t a1, uintptr_t a2,
				    uintptr_t a3)
{
	mdgpu_cu_log("%s[%u](%#lx, %#lx, %#lx, %#lx): not supported", table,
		     slot, (unsigned long)a0, (unsigned long)a1,
		     (unsigned long)a2, (unsigned long)a3);
	return CUDA_ERROR_NOT_SUPPORTED;
}

#define XT_UNKNOWN(tbl, slot)						\
	static CUresult mdgpu_cu_##tbl##_##slot(uintptr_t a0, uintptr_t a1, \
						uintptr_t a2, uintptr_t a3) \
	{								\
		return mdgpu_cu_xt_unknown(#tbl, slot, a0, a1, a2, a3);	\
	}

/*
 * One stub, mdgpu_cu_<tbl>_other, for every unknown slot of a large
 * table; `which` says in the log what it stands for, since the stub
 * cannot tell its own slot.
 */
#define XT_UNKNOWN_OTHER(tbl, which)					\
	static CUresult mdgpu_cu_##tbl##_other(uintptr_t a0, uintptr_t a1, \
					       uintptr_t a2, uintptr_t a3) \
	{								\
		return mdgpu_cu_xt_unknown(which, 0, a0, a1, a2, a3);	\
	}

/* ---- CUDART_INTERFACE ------------------------------------------------ */

/* Slot 2: the device's primary context, neither retained nor activated
 * (the runtime retains it itself through cuDevicePrimaryCtxRetain). */
static CUresult mdgpu_cu_rt_primary_ctx(CUcontext *pctx, CUdevice dev)
{
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (dev != 0)
		r = CUDA_ERROR_INVALID_DEVICE;
	else
		*pctx = &mdgpu_cu.primary;
	mdgpu_cu_leave();
	return r;
}

XT_UNKNOWN(cudart, 1)
XT_UNKNOWN(cudart, 3)
XT_UNKNOWN(cudart, 4)
XT_UNKNOWN(cudart, 5)
XT_UNKNOWN(cudart, 6)
XT_UNKNOWN(cudart, 7)
XT_UNKNOWN(cudart, 8)
XT_UNKNOWN(cudart, 9)

static const union mdgpu_cu_xt_slot mdgpu_cu_xt_cudart[10];
static const union mdgpu_cu_xt_slot mdgpu_cu_xt_cudart[10] = {
	XT_SIZE(mdgpu_cu_xt_cudart),
	XT_FN(mdgpu_cu_cudart_1),
	XT_FN(mdgpu_cu_rt_primary_ctx),
	XT_FN(mdgpu_cu_cudart_3),
	XT_FN(mdgpu_cu_cudart_4),
	XT_FN(mdgpu_cu_cudart_5),
	XT_FN(mdgpu_cu_cudart_6),
	XT_FN(mdgpu_cu_cudart_7),
	XT_FN(mdgpu_cu_cudart_8),
	XT_FN(mdgpu_cu_cudart_9),
};

/* ---- TOOLS_RUNTIME_CALLBACK_HOOKS ------------------------------------ */

/*
 * Slots 2 and 6: (void **buf, size_t *size), no result.  Each hands the
 * runtime a zeroed area of the driver's and a size; the runtime calls
 * both once at initialisation.  Zero there means no tool (profiler,
 * debugger) has asked for callbacks, which is true: this library does
 * not support tools.  The sizes are the real driver's answers (ZLUDA's
 * observation: 1024 and 14); each area is large enough whether the size
 * counts bytes or 32-bit words.
 */
static uint32_t mdgpu_cu_hooks_area2[1024];
static uint32_t mdgpu_cu_hooks_area6[14];

static void mdgpu_cu_hooks_2(void **buf, size_t *size)
{
	if (buf)
		*buf = mdgpu_cu_hooks_area2;
	if (size)
		*size = sizeof(mdgpu_cu_hooks_area2) / sizeof(uint32_t);
}

static void mdgpu_cu_hooks_6(void **buf, size_t *size)
{
	if (buf)
		*buf = mdgpu_cu_hooks_area6;
	if (size)
		*size = sizeof(mdgpu_cu_hooks_area6) / sizeof(uint32_t);
}

XT_UNKNOWN(hooks, 1)
XT_UNKNOWN(hooks, 3)
XT_UNKNOWN(hooks, 4)
XT_UNKNOWN(hooks, 5)

static const union mdgpu_cu_xt_slot mdgpu_cu_xt_hooks[7];
static const union mdgpu_cu_xt_slot mdgpu_cu_xt_hooks[7] = {
	XT_SIZE(mdgpu_cu_xt_hooks),
	XT_FN(mdgpu_cu_hooks_1),
	XT_FN(mdgpu_cu_hooks_2),
	XT_FN(mdgpu_cu_hooks_3),
	XT_FN(mdgpu_cu_hooks_4),
	XT_FN(mdgpu_cu_hooks_5),
	XT_FN(mdgpu_cu_hooks_6),
};

/* ---- TOOLS_TLS ------------------------------------------------------- */

/*
 * Slot 2: (CUcontext *ctx, ...): cuCtxGetCurrent itself; the further
 * arguments callers pass vary and are not read.  Measured on the H100
 * (driver 580): cuBLASLt's runtime calls it with a structure of its own
 * whose first field the driver overwrites with the pointer
 * cuCtxGetCurrent returns (the bytes it points to are the context's),
 * and fails cublasLtMatmulAlgoGetHeuristic with CUBLAS_STATUS_NOT_SUPPORTED
 * when the call fails.
 */
XT_UNKNOWN(tls, 1)
XT_UNKNOWN(tls, 3)

static const union mdgpu_cu_xt_slot mdgpu_cu_xt_tls[4];
static const union mdgpu_cu_xt_slot mdgpu_cu_xt_tls[4] = {
	XT_SIZE(mdgpu_cu_xt_tls),
	XT_FN(mdgpu_cu_tls_1),
	XT_FN(cuCtxGetCurrent),
	XT_FN(mdgpu_cu_tls_3),
};

/* ---- CONTEXT_LOCAL_STORAGE ------------------------------------------- */

typedef void (*mdgpu_cu_cls_dtor)(CUcontext ctx, void *key, void *value);

struct mdgpu_cu_cls {
	CUcontext ctx;
	void *key;
	void *value;
	mdgpu_cu_cls_dtor dtor;
	struct mdgpu_cu_cls *next;	/* on a thread's pending list */
};

/* Under mdgpu_cu.lock: struct mdgpu_cu_cls * of live contexts. */
static struct mdgpu_cu_set mdgpu_cu_cls_set;
/* Entries of released contexts whose destroy callbacks this thread has
 * still to run (mdgpu_cu_export_run_pending). */
static _Thread_local struct mdgpu_cu_cls *mdgpu_cu_cls_pending;

static struct mdgpu_cu_cls *mdgpu_cu_cls_find(CUcontext ctx, void *key)
{
	for (size_t i = 0; i < mdgpu_cu_cls_set.n; i++) {
		struct mdgpu_cu_cls *e = mdgpu_cu_cls_set.v[i];

		if (e->ctx == ctx && e->key == key)
			return e;
	}
	return NULL;
}

/* Under the lock: ctx, or the current context if ctx is NULL, if live. */
static CUresult mdgpu_cu_cls_ctx(CUcontext *ctx)
{
	if (!*ctx)
		*ctx = mdgpu_cu_current();
	return mdgpu_cu_ctx_live(*ctx) ? CUDA_SUCCESS :
		CUDA_ERROR_INVALID_CONTEXT;
}

static CUresult mdgpu_cu_cls_put(CUcontext ctx, void *key, void *value,
				 mdgpu_cu_cls_dtor dtor)
{
	struct mdgpu_cu_cls *e;
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_cls_ctx(&ctx);
	if (r)
		goto out;
	e = mdgpu_cu_cls_find(ctx, key);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || mdgpu_cu_set_add(&mdgpu_cu_cls_set, e)) {
			free(e);
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		e->ctx = ctx;
		e->key = key;
	}
	e->value = value;
	e->dtor = dtor;
out:
	mdgpu_cu_leave();
	return r;
}

static CUresult mdgpu_cu_cls_delete(CUcontext ctx, void *key)
{
	struct mdgpu_cu_cls *e;
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_cls_ctx(&ctx);
	if (r)
		goto out;
	e = mdgpu_cu_cls_find(ctx, key);
	if (!e) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	mdgpu_cu_set_del(&mdgpu_cu_cls_set, e);
	free(e);
out:
	mdgpu_cu_leave();
	return r;
}

static CUresult mdgpu_cu_cls_get(void **value, CUcontext ctx, void *key)
{
	struct mdgpu_cu_cls *e;
	CUresult r;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_cls_ctx(&ctx);
	if (r)
		goto out;
	e = mdgpu_cu_cls_find(ctx, key);
	if (e)
		*value = e->value;
	else
		r = CUDA_ERROR_INVALID_HANDLE;
out:
	mdgpu_cu_leave();
	return r;
}

void mdgpu_cu_cls_release(CUcontext ctx)
{
	struct mdgpu_cu_cls **tail = &mdgpu_cu_cls_pending;

	while (*tail)
		tail = &(*tail)->next;
	for (size_t i = 0; i < mdgpu_cu_cls_set.n;) {
		struct mdgpu_cu_cls *e = mdgpu_cu_cls_set.v[i];

		if (e->ctx != ctx) {
			i++;
			continue;
		}
		mdgpu_cu_set_del(&mdgpu_cu_cls_set, e);
		e->next = NULL;
		*tail = e;
		tail = &e->next;
	}
}

void mdgpu_cu_export_run_pending(void)
{
	while (mdgpu_cu_cls_pending) {
		struct mdgpu_cu_cls *e = mdgpu_cu_cls_pending;

		mdgpu_cu_cls_pending = e->next;
		if (e->dtor)
			e->dtor(e->ctx, e->key, e->value);
		free(e);
	}
}

XT_UNKNOWN(cls, 3)

static const union mdgpu_cu_xt_slot mdgpu_cu_xt_cls[4] = {
	XT_FN(mdgpu_cu_cls_put),
	XT_FN(mdgpu_cu_cls_delete),
	XT_FN(mdgpu_cu_cls_get),
	XT_FN(mdgpu_cu_cls_3),
};

/* ---- CONTEXT_CHECKS -------------------------------------------------- */

/*
 * Slot 2: (CUcontext ctx, unsigned *kind, void **detail).  The runtime
 * asks it about the current context before it uses it; on an error it
 * treats the context as unusable, with *kind == 1 it takes a path that
 * reads *detail, otherwise it looks the context up among the devices'
 * primary contexts.  For an ordinary context (the only kind this library
 * makes) the real driver writes *kind = 0 and leaves *detail as the
 * caller set it (measured on the H100, driver 580, before and after the
 * calls the static runtime inside cuBLAS makes), so this does the same.
 */
static CUresult mdgpu_cu_ctxchk_kind(CUcontext ctx, unsigned *kind,
				     void **detail)
{
	CUresult r;

	if (!kind || !detail)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (!ctx)
		ctx = mdgpu_cu_current();
	if (mdgpu_cu_ctx_live(ctx))
		*kind = 0;
	else
		r = CUDA_ERROR_INVALID_CONTEXT;
	mdgpu_cu_leave();
	return r;
}

/*
 * Slot 3: no arguments.  The runtime calls it once at initialisation and
 * sets a flag of its own if and only if the answer is 1.  What the flag
 * changes is not known; 0 (flag off) is the real driver's answer.
 */
static int mdgpu_cu_ctxchk_flag(void)
{
	return 0;
}

XT_UNKNOWN(ctxchk, 1)

static const union mdgpu_cu_xt_slot mdgpu_cu_xt_ctxchk[4];
static const union mdgpu_cu_xt_slot mdgpu_cu_xt_ctxchk[4] = {
	XT_SIZE(mdgpu_cu_xt_ctxchk),
	XT_FN(mdgpu_cu_ctxchk_1),
	XT_FN(mdgpu_cu_ctxchk_kind),
	XT_FN(mdgpu_cu_ctxchk_flag),
};

/* ---- TOOLS_CONTEXT --------------------------------------------------- */

/*
 * 93 slots on driver 580 (size 0x2e8).  Three are used by the libraries
 * measured on the H100 (cuBLAS and cuBLASLt 13.1, cuFFT 12):
 *
 *   4:  (CUcontext ctx, uint64_t *id): the context's id.  The real driver
 *       stores 1 for the runtime's primary context in a process that made
 *       no other, the number cuCtxGetId answers, so the slot is cuCtxGetId
 *       itself.  Without it cuBLASLt fails its matmul heuristics with
 *       CUBLAS_STATUS_NOT_SUPPORTED.
 *   51: (CUcontext ctx, CUstream stream, void **obj): the driver's object
 *       for a stream of ctx (NULL, CU_STREAM_LEGACY and
 *       CU_STREAM_PER_THREAD included); an opaque pointer to the caller.
 *   39: (CUcontext ctx, void *obj, uint64_t *id): that stream's id, the
 *       number cuStreamGetId answers (measured: 7 for the legacy stream,
 *       13, 14, 15 for the next three created, 8 bytes written).
 *
 * cuBLAS calls 51 then 39 for the stream of each call (CuPy's matmul);
 * without them it fails with CUBLAS_STATUS_INTERNAL_ERROR.  Here the
 * object is the CUstream itself: for CU_STREAM_PER_THREAD the calling
 * thread's per-thread stream of ctx (made if it was not yet, stream.c),
 * for NULL and CU_STREAM_LEGACY the name CU_STREAM_LEGACY, whose id is
 * ctx's.  The other slots share one stub that logs and answers
 * NOT_SUPPORTED (so the log cannot name the slot).
 */
static CUresult mdgpu_cu_tctx_stream(CUcontext ctx, CUstream s, void **obj)
{
	CUresult r;

	if (!obj)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (ctx && !mdgpu_cu_ctx_live(ctx))
		r = CUDA_ERROR_INVALID_CONTEXT;
	if (!r)
		r = mdgpu_cu_stream_resolve(ctx, &s);
	if (!r)
		*obj = mdgpu_cu_stream_handle(s) ? (void *)s :
						   (void *)CU_STREAM_LEGACY;
	mdgpu_cu_leave();
	return r;
}

static CUresult mdgpu_cu_tctx_stream_id(CUcontext ctx, CUstream obj,
					uint64_t *id)
{
	CUresult r;

	if (!id || !obj)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (ctx && !mdgpu_cu_ctx_live(ctx))
		r = CUDA_ERROR_INVALID_CONTEXT;
	if (!r)
		r = mdgpu_cu_stream_resolve(ctx, &obj);
	if (!r)
		r = mdgpu_cu_stream_id(ctx, obj, id);
	mdgpu_cu_leave();
	return r;
}

XT_UNKNOWN_OTHER(tctx, "TOOLS_CONTEXT slot other than 4, 39, 51: "
		       "tools_context")

#define MDGPU_CU_TCTX_SLOTS 93
static const union mdgpu_cu_xt_slot mdgpu_cu_xt_tctx[MDGPU_CU_TCTX_SLOTS] = {
	[0] = { .size = MDGPU_CU_TCTX_SLOTS * sizeof(union mdgpu_cu_xt_slot) },
	[1 ... 3] = XT_FN(mdgpu_cu_tctx_other),
	[4] = XT_FN(cuCtxGetId),
	[5 ... 38] = XT_FN(mdgpu_cu_tctx_other),
	[39] = XT_FN(mdgpu_cu_tctx_stream_id),
	[40 ... 50] = XT_FN(mdgpu_cu_tctx_other),
	[51] = XT_FN(mdgpu_cu_tctx_stream),
	[52 ... MDGPU_CU_TCTX_SLOTS - 1] = XT_FN(mdgpu_cu_tctx_other),
};

/* ---- TOOLS_MODULE ---------------------------------------------------- */

/*
 * 99 slots on driver 580 (size 0x318), of which cuFFT 12 calls slot 7 to
 * learn the kernels of a module it loaded.  Measured on the H100 (driver
 * 580): (CUcontext ctx, CUmodule mod, visit, void *user) calls
 * visit(user, f, name) once per kernel of the module, in the module's
 * order (a cubin declaring ka, kb, kc: ka, kb, _Z2kcPd), f being the
 * handle cuModuleGetFunction gives for that name and name a pointer to
 * the kernel's name; what visit returns is ignored (every kernel is
 * visited); ctx is ignored (NULL or another context: the same); the slot
 * returns the number of kernels visited, not a CUresult.  cuFFT's visit
 * stores f in *user.  A NULL or unknown module crashes the real driver;
 * here it is logged and nothing is visited (0), as is a NULL visit or a
 * list the daemon does not give.  The other slots share one stub that
 * logs and answers NOT_SUPPORTED (so the log cannot name the slot).
 */
typedef void (*mdgpu_cu_tmod_visit)(void *user, CUfunction f,
				    const char *name);

/* What one visit is given, taken under the lock. */
struct mdgpu_cu_tmod_kernel {
	CUfunction f;
	const char *name;
};

/* The module's kernels, or NULL with *n 0 (logged). */
static struct mdgpu_cu_tmod_kernel *mdgpu_cu_tmod_list(CUmodule mod,
						       unsigned *n)
{
	struct mdgpu_cu_tmod_kernel *k = NULL;
	CUfunction *fns = NULL;
	CUresult r;

	*n = 0;
	if (!mdgpu_cu_set_has(&mdgpu_cu.mods, mod)) {
		mdgpu_cu_log("TOOLS_MODULE[7]: module %p is not loaded: no "
			     "kernel visited", (void *)mod);
		return NULL;
	}
	r = mdgpu_cu_module_funcs(mod, NULL, 0, n);
	if (!r && *n) {
		fns = calloc(*n, sizeof(*fns));
		k = calloc(*n, sizeof(*k));
		r = fns && k ? mdgpu_cu_module_funcs(mod, fns, *n, n) :
			       CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (unsigned i = 0; !r && i < *n; i++) {
		k[i].f = fns[i];
		k[i].name = fns[i]->name;
	}
	free(fns);
	if (r) {
		mdgpu_cu_log("TOOLS_MODULE[7]: the kernels of module %p: "
			     "error %d: no kernel visited", (void *)mod,
			     (int)r);
		free(k);
		*n = 0;
		return NULL;
	}
	return k;
}

static unsigned int mdgpu_cu_tmod_kernels(CUcontext ctx, CUmodule mod,
					  mdgpu_cu_tmod_visit visit,
					  void *user)
{
	struct mdgpu_cu_tmod_kernel *k;
	unsigned n;

	(void)ctx;	/* measured: ignored by the real driver */
	if (!visit) {
		mdgpu_cu_log("TOOLS_MODULE[7]: no function to call: no kernel "
			     "visited");
		return 0;
	}
	if (mdgpu_cu_enter()) {
		mdgpu_cu_log("TOOLS_MODULE[7] before cuInit: no kernel "
			     "visited");
		return 0;
	}
	k = mdgpu_cu_tmod_list(mod, &n);
	mdgpu_cu_leave();
	/* Without the lock: a visit may call back into the library. */
	for (unsigned i = 0; i < n; i++)
		visit(user, k[i].f, k[i].name);
	free(k);
	return n;
}

XT_UNKNOWN_OTHER(tmod, "TOOLS_MODULE slot other than 7: tools_module")

#define MDGPU_CU_TMOD_SLOTS 99
static const union mdgpu_cu_xt_slot mdgpu_cu_xt_tmod[MDGPU_CU_TMOD_SLOTS] = {
	[0] = { .size = MDGPU_CU_TMOD_SLOTS * sizeof(union mdgpu_cu_xt_slot) },
	[1 ... 6] = XT_FN(mdgpu_cu_tmod_other),
	[7] = XT_FN(mdgpu_cu_tmod_kernels),
	[8 ... MDGPU_CU_TMOD_SLOTS - 1] = XT_FN(mdgpu_cu_tmod_other),
};
_Static_assert(sizeof(mdgpu_cu_xt_tmod) == 0x318,
	       "TOOLS_MODULE is 0x318 bytes on driver 580");

/* ---- INTEGRITY_CHECK ------------------------------------------------- */

static CUresult mdgpu_cu_integrity(uint32_t version, uint64_t unix_seconds,
				   uint64_t result[2]);

XT_UNKNOWN(integrity, 2)

static const union mdgpu_cu_xt_slot mdgpu_cu_xt_integrity[3];
static const union mdgpu_cu_xt_slot mdgpu_cu_xt_integrity[3] = {
	XT_SIZE(mdgpu_cu_xt_integrity),
	XT_FN(mdgpu_cu_integrity),
	XT_FN(mdgpu_cu_integrity_2),
};

/*
 * Slot 1: (uint32_t version, uint64_t unix_seconds, uint64_t result[2]).
 * The runtime calls it three times at initialisation with version =
 * V + 0, V + 1, V + 2, where V is its own CUDA version (13000 for 13.0)
 * and unix_seconds is time(NULL), and fails every call with "integrity
 * checks failed" unless all three succeed and the third answer equals
 * its own HMAC-MD2 (md2.c) under the key below of this message:
 * the driver version (cuDriverGetVersion), version, getpid(),
 * (uint32_t)pthread_self(), the addresses of the CUDART_INTERFACE table,
 * of this table and of this slot's function, unix_seconds; then per
 * device its UUID and PCI domain, bus and device numbers.  The runtime
 * reads those values through the public entry points, so they are read
 * here the same way.  The answers to V + 0 and V + 1 are fixed (the
 * real driver's, as ZLUDA recorded them); the 13.0 runtime checks only
 * that those calls succeed.
 */
/*
 * Runtimes measured on the H100 (driver 580): 13.0 (nvcc's static one,
 * PyTorch's shared one), 13.1 (the one cuDNN 9.19 links: PyTorch's conv2d
 * works with it accepted and fails CUDNN_STATUS_NOT_INITIALIZED with it
 * refused) and 13.2 (CuPy 14's).
 */
static const uint32_t mdgpu_cu_integrity_runtimes[] = { 13000, 13010, 13020 };

static const uint8_t mdgpu_cu_integrity_key[16] = {
	0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
	0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f,
};

struct mdgpu_cu_integrity_msg {
	uint32_t driver_version;
	uint32_t version;
	uint32_t pid;
	uint32_t thread;
	const void *cudart_table;
	const void *integrity_table;
	const void *integrity_fn;
	uint64_t unix_seconds;
};
_Static_assert(sizeof(struct mdgpu_cu_integrity_msg) == 48,
	       "integrity message layout (x86-64)");

struct mdgpu_cu_integrity_dev {
	CUuuid uuid;
	int32_t pci_domain;
	int32_t pci_bus;
	int32_t pci_device;
};
_Static_assert(sizeof(struct mdgpu_cu_integrity_dev) == 28,
	       "integrity device layout");

static bool mdgpu_cu_integrity_runtime_ok(uint32_t runtime)
{
	for (size_t i = 0; i < sizeof(mdgpu_cu_integrity_runtimes) /
	     sizeof(mdgpu_cu_integrity_runtimes[0]); i++)
		if (mdgpu_cu_integrity_runtimes[i] == runtime)
			return true;
	return false;
}

/* The one device's part of the message, read as the runtime reads it. */
static CUresult mdgpu_cu_integrity_device(struct mdgpu_cu_integrity_dev *d)
{
	CUresult r;

	memset(d, 0, sizeof(*d));
	r = cuDeviceGetUuid_v2(&d->uuid, 0);
	if (!r)
		r = cuDeviceGetAttribute(&d->pci_domain,
					 CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 0);
	if (!r)
		r = cuDeviceGetAttribute(&d->pci_bus,
					 CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0);
	if (!r)
		r = cuDeviceGetAttribute(&d->pci_device,
					 CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0);
	return r;
}

static CUresult mdgpu_cu_integrity(uint32_t version, uint64_t unix_seconds,
				   uint64_t result[2])
{
	unsigned char msg[sizeof(struct mdgpu_cu_integrity_msg) +
			  sizeof(struct mdgpu_cu_integrity_dev)];
	struct mdgpu_cu_integrity_msg m;
	struct mdgpu_cu_integrity_dev d;
	uint8_t out[16];
	int drv = 0, count = 0;
	CUresult r;

	if (!result)
		return CUDA_ERROR_INVALID_VALUE;
	mdgpu_cu_log("INTEGRITY_CHECK[1]: runtime %u.%u, step %u",
		     version / 1000, version % 1000 / 10, version % 10);
	if (!mdgpu_cu_integrity_runtime_ok(version - version % 10)) {
		mdgpu_cu_log("NVIDIA runtime %u.%u is not supported (its "
			     "private tables are known for 13.0 to 13.2); "
			     "failing its integrity check", version / 1000,
			     version % 1000 / 10);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	switch (version % 10) {
	case 0:
		result[0] = 0x3341181c03cb675cULL;
		result[1] = 0x8ed383aa1f4cd1e8ULL;
		return CUDA_SUCCESS;
	case 1:
		result[0] = 0x1841181c03cb675cULL;
		result[1] = 0x8ed383aa1f4cd1e8ULL;
		return CUDA_SUCCESS;
	case 2:
		break;
	default:
		mdgpu_cu_log("INTEGRITY_CHECK[1]: unknown mode %u", version % 10);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	r = cuDriverGetVersion(&drv);
	if (!r)
		r = cuDeviceGetCount(&count);
	if (!r && count != 1)
		r = CUDA_ERROR_NOT_SUPPORTED;	/* one vGPU per process */
	if (!r)
		r = mdgpu_cu_integrity_device(&d);
	if (r) {
		mdgpu_cu_log("INTEGRITY_CHECK[1]: cannot read the device: %d",
			     (int)r);
		return r;
	}
	memset(&m, 0, sizeof(m));
	m.driver_version = (uint32_t)drv;
	m.version = version;
	m.pid = (uint32_t)getpid();
	m.thread = (uint32_t)(uintptr_t)pthread_self();
	m.cudart_table = mdgpu_cu_xt_cudart;
	m.integrity_table = mdgpu_cu_xt_integrity;
	m.integrity_fn = (const void *)mdgpu_cu_xt_integrity[1].fn;
	m.unix_seconds = unix_seconds;
	memcpy(msg, &m, sizeof(m));
	memcpy(msg + sizeof(m), &d, sizeof(d));
	mdgpu_hmac_md2(mdgpu_cu_integrity_key, msg, sizeof(msg), out);
	memcpy(result, out, sizeof(out));
	return CUDA_SUCCESS;
}

/* ---- the table of tables --------------------------------------------- */

struct mdgpu_cu_xt {
	const char *name;
	unsigned char id[16];
	const union mdgpu_cu_xt_slot *slots;
};

static const struct mdgpu_cu_xt mdgpu_cu_xts[] = {
	{ "CUDART_INTERFACE", { 0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
	  0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9 }, mdgpu_cu_xt_cudart },
	{ "TOOLS_RUNTIME_CALLBACK_HOOKS", { 0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74,
	  0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66 },
	  mdgpu_cu_xt_hooks },
	{ "TOOLS_TLS", { 0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47,
	  0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc }, mdgpu_cu_xt_tls },
	{ "CONTEXT_LOCAL_STORAGE", { 0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf,
	  0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93 },
	  mdgpu_cu_xt_cls },
	{ "CONTEXT_CHECKS", { 0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43,
	  0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e }, mdgpu_cu_xt_ctxchk },
	{ "INTEGRITY_CHECK", { 0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
	  0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2 },
	  mdgpu_cu_xt_integrity },
	{ "TOOLS_CONTEXT", { 0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
	  0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2 }, mdgpu_cu_xt_tctx },
	{ "TOOLS_MODULE", { 0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d,
	  0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e }, mdgpu_cu_xt_tmod },
};

CUresult CUDAAPI cuGetExportTable(const void **ppExportTable,
				  const CUuuid *pExportTableId)
{
	const unsigned char *b;

	if (!ppExportTable || !pExportTableId)
		return CUDA_ERROR_INVALID_VALUE;
	b = (const unsigned char *)pExportTableId->bytes;
	for (size_t i = 0; i < sizeof(mdgpu_cu_xts) / sizeof(mdgpu_cu_xts[0]);
	     i++) {
		if (!memcmp(mdgpu_cu_xts[i].id, b, 16)) {
			*ppExportTable = mdgpu_cu_xts[i].slots;
			mdgpu_cu_log("cuGetExportTable(%s) = %p", mdgpu_cu_xts[i].name, (const void *)mdgpu_cu_xts[i].slots);
			return CUDA_SUCCESS;
		}
	}
	*ppExportTable = NULL;
	mdgpu_cu_log("cuGetExportTable(%02x%02x%02x%02x-%02x%02x-%02x%02x-"
		     "%02x%02x-%02x%02x%02x%02x%02x%02x): not found",
		     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8],
		     b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
	return CUDA_ERROR_NOT_FOUND;
}
