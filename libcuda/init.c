// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: initialisation (the one vGPU), the entry-point lookup, error
 * names and texts, and the helpers every call uses.
 *
 * cuInit opens the vGPU through libmdgpu; the transport is chosen from the
 * environment (Documentation/libcuda.md, "Choosing the vGPU"), the first
 * of these that applies, so a variable the user set always beats what
 * the machine happens to have:
 *   MDGPU_VFIO=<mdev UUID or sysfs path>   vfio transport
 *   MDGPU_DEVICE=/dev/mdgpu-vgpuN          guest transport (in a VM)
 *   MDGPU_SOCKET=<path>                    socket transport (libmdgpu
 *                                          reads the path), MDGPU_TYPE
 *   the first /dev/mdgpu-vgpuN             guest transport
 *   otherwise                              socket transport on the
 *                                          daemon's default socket
 * MDGPU_HOST_MIB sizes the zero-copy area cuMemHostAlloc carves from
 * (default mdgpu_cu_host_mib_default).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "entry.h"
#include "export.h"
#include "priv.h"

/* The driver API version this library answers: the cuda.h its table is
 * generated from, never newer. */
#define MDGPU_CU_DRIVER_VERSION	MDGPU_CU_HEADER_VERSION
_Static_assert(MDGPU_CU_DRIVER_VERSION == CUDA_VERSION,
	       "libcuda.mk and cuda.h disagree on the CUDA version");

static const uint64_t mdgpu_cu_host_mib_default = 64;
/* /dev/mdgpu-vgpuN tried when none of MDGPU_VFIO, MDGPU_DEVICE and
 * MDGPU_SOCKET is set: the guest driver numbers its devices from 0. */
static const unsigned mdgpu_cu_guest_probe = 16;

struct mdgpu_cu_state mdgpu_cu = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.primary = { .primary = true },
	/* cuda.h's defaults: the three reuse policies on. */
	.pool_default = { .dflt = true, .reuse_follow = 1,
			  .reuse_opportunistic = 1, .reuse_internal = 1 },
	.pool_current = &mdgpu_cu.pool_default,
};

/* Sets of live objects. */
int mdgpu_cu_set_add(struct mdgpu_cu_set *s, void *p)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 16;
		void **v = realloc(s->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = ncap;
	}
	s->v[s->n++] = p;
	return 0;
}

bool mdgpu_cu_set_has(const struct mdgpu_cu_set *s, const void *p)
{
	if (!p)
		return false;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == p)
			return true;
	return false;
}

void mdgpu_cu_set_del(struct mdgpu_cu_set *s, const void *p)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i] == p) {
			s->v[i] = s->v[--s->n];
			return;
		}
	}
}

/* Logging. */
bool mdgpu_cu_log_on(void)
{
	const char *v = getenv("MDGPU_CUDA_LOG");

	return v && *v && strcmp(v, "0");
}

void mdgpu_cu_log(const char *fmt, ...)
{
	va_list ap;

	if (!mdgpu_cu_log_on())
		return;
	va_start(ap, fmt);
	fputs("libcuda(mdgpu): ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int mdgpu_cu_unsupported(unsigned idx)
{
	/* One flag per stub: logged once however often it is called. */
	if (idx < mdgpu_cu_stub_count &&
	    !atomic_exchange(&mdgpu_cu_stub_logged[idx], 1))
		mdgpu_cu_log("%s: not supported", mdgpu_cu_stub_names[idx]);
	return mdgpu_cu_not_supported;
}

CUresult mdgpu_cu_result(int err)
{
	switch (err) {
	case 0:
		return CUDA_SUCCESS;
	case -EINVAL:
	case -E2BIG:
	case -ERANGE:
	case -EOVERFLOW:
		return CUDA_ERROR_INVALID_VALUE;
	case -ENOMEM:
	case -ENOSPC:
		return CUDA_ERROR_OUT_OF_MEMORY;
	case -ENOENT:
		return CUDA_ERROR_NOT_FOUND;
	case -EAGAIN:
		return CUDA_ERROR_NOT_READY;
	case -EPERM:
	case -EACCES:
		return CUDA_ERROR_NOT_PERMITTED;
	case -EOPNOTSUPP:
		return CUDA_ERROR_NOT_SUPPORTED;
	case -EFAULT:
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	case -ETIMEDOUT:
		return CUDA_ERROR_LAUNCH_TIMEOUT;
	case -EIO:
		/* The GPU failed the work; the worker's exact code does not
		 * cross the ring. */
		return CUDA_ERROR_LAUNCH_FAILED;
	case -ECANCELED:
		/* The vGPU was reset under the call. */
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	case -ENODEV:
	case -EPIPE:
	case -ECONNRESET:
	case -ECONNREFUSED:
	case -ENOTCONN:
		return CUDA_ERROR_DEVICE_UNAVAILABLE;
	default:
		return CUDA_ERROR_UNKNOWN;
	}
}

CUresult mdgpu_cu_error(int err)
{
	uint64_t code = mdgpu_cu.g ? mdgpu_last_code(mdgpu_cu.g) : 0;

	/* The backend's own code is a CUresult on the cuda backend: a
	 * command the host driver failed (a GPU fault, a refused image)
	 * gives the program the driver's own answer.  The daemon's own
	 * refusals carry none. */
	if (err && code > 0 && code < CUDA_ERROR_UNKNOWN)
		return (CUresult)code;
	return mdgpu_cu_result(err);
}

/*
 * A context's scheduling flag decides how the process's waits (a
 * synchronize, a synchronous copy) wait for the daemon's answer, as it
 * decides how NVIDIA's driver waits for the GPU:
 *  - CU_CTX_SCHED_BLOCKING_SYNC: sleep at once;
 *  - SPIN, YIELD and AUTO (the default): spin, yielding the CPU between
 *    checks, up to MDGPU_SPIN_US_MAX (1 s), then sleep.  NVIDIA's AUTO
 *    spins while the process has no more contexts than CPUs; here the
 *    daemon and the vGPU's worker need CPUs too, so AUTO spins that long
 *    only on machines with MDGPU_CU_SPIN_AUTO_CPUS or more CPUs and keeps
 *    libmdgpu's default (1 ms) below.  A wake-up from the sleep costs
 *    45 us at the median and milliseconds at the tail on a VM
 *    (Documentation/daemon.md, "Waking from idle").
 * MDGPU_SPIN_US, when set, wins over every flag.  One vGPU handle serves
 * every context, so the flags of the context made (or the primary
 * context's, when set) last apply.
 */
void mdgpu_cu_apply_sched(unsigned flags)
{
	uint32_t us = MDGPU_CU_SPIN_US_LONG;

	if (mdgpu_cu.spin_env || !mdgpu_cu.g)
		return;
	switch (flags & CU_CTX_SCHED_MASK) {
	case CU_CTX_SCHED_BLOCKING_SYNC:
		us = 0;
		break;
	case CU_CTX_SCHED_AUTO:
		if (sysconf(_SC_NPROCESSORS_ONLN) < MDGPU_CU_SPIN_AUTO_CPUS)
			us = MDGPU_CU_SPIN_US_SHORT;
		break;
	default:	/* SPIN, YIELD */
		break;
	}
	mdgpu_set_spin_us(mdgpu_cu.g, us);
}

CUresult mdgpu_cu_enter(void)
{
	/* The host-function thread holds the vGPU (stream.c). */
	if (mdgpu_cu_in_host_fn)
		return CUDA_ERROR_NOT_PERMITTED;
	pthread_mutex_lock(&mdgpu_cu.lock);
	if (!mdgpu_cu.init_done || mdgpu_cu.init_result != CUDA_SUCCESS) {
		pthread_mutex_unlock(&mdgpu_cu.lock);
		return CUDA_ERROR_NOT_INITIALIZED;
	}
	return CUDA_SUCCESS;
}

void mdgpu_cu_leave(void)
{
	pthread_mutex_unlock(&mdgpu_cu.lock);
	mdgpu_cu_export_run_pending();
}

/*
 * A synchronize waits for the GPU, possibly for seconds: holding the lock
 * meanwhile would stop every other thread of the program at its next
 * call, asynchronous launches and calls answered without the daemon
 * included.  Nothing libcuda owns is touched while the lock is out; what
 * the wait needs is in w and the handle, whose other users only queue
 * behind the SYNC in the ring (so their commands still run after it, in
 * the ring's order).
 */
int mdgpu_cu_wait(struct mdgpu_wait *w, int begun)
{
	if (begun)
		return begun;
	if (mdgpu_wait_concurrent(mdgpu_cu.g)) {
		pthread_mutex_unlock(&mdgpu_cu.lock);
		mdgpu_wait_run(mdgpu_cu.g, w);
		pthread_mutex_lock(&mdgpu_cu.lock);
	}
	return mdgpu_wait_end(mdgpu_cu.g, w);
}

CUresult mdgpu_cu_enter_ctx(CUcontext *ctx)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	*ctx = mdgpu_cu_current();
	if (!*ctx) {
		mdgpu_cu_leave();
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	return CUDA_SUCCESS;
}

CUresult mdgpu_cu_enter_obj(const struct mdgpu_cu_set *s, const void *p,
			    CUcontext *ctx)
{
	CUresult r = ctx ? mdgpu_cu_enter_ctx(ctx) : mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_set_has(s, p)) {
		mdgpu_cu_leave();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	return CUDA_SUCCESS;
}

/* The first /dev/mdgpu-vgpuN that exists, or false. */
static bool mdgpu_cu_guest_device(char *buf, size_t len)
{
	for (unsigned i = 0; i < mdgpu_cu_guest_probe; i++) {
		snprintf(buf, len, "/dev/mdgpu-vgpu%u", i);
		if (!access(buf, F_OK))
			return true;
	}
	return false;
}

/* MDGPU_HOST_MIB in bytes; false if malformed or too large. */
static bool mdgpu_cu_host_bytes(uint64_t *bytes, bool *explicit)
{
	const char *v = getenv("MDGPU_HOST_MIB");
	unsigned long long mib = mdgpu_cu_host_mib_default;
	char *end;

	*explicit = v && *v;
	if (*explicit) {
		errno = 0;
		mib = strtoull(v, &end, 10);
		if (errno || *end || v[0] == '-' || mib > (UINT64_MAX >> 20))
			return false;
	}
	*bytes = (uint64_t)mib << 20;
	return true;
}

/*
 * Unified addressing: pinned memory (cuMemHostAlloc, the zero-copy area
 * of the aperture) is reached by kernels at the address the program
 * holds.  The GPU reaches the aperture at APERTURE_DEVPTR, the address
 * the worker mapped and registered it at, so the aperture is mapped
 * there in this process too, before any of it is handed out.  Where
 * this process already uses that range (or the transport maps no
 * aperture of its own: vfio, guest), the host pointer and the device
 * pointer differ: cuMemHostGetDevicePointer gives the one kernels take.
 */
static void mdgpu_cu_place_aperture(void)
{
	int ret;

	if (!mdgpu_cu.aperture_devptr)
		return;
	ret = mdgpu_aperture_place(mdgpu_cu.g, mdgpu_cu.aperture_devptr);
	/* -EOPNOTSUPP: a transport without an aperture of its own to move
	 * (documented, not news for each program). */
	if (ret && ret != -EOPNOTSUPP)
		mdgpu_cu_log("cuInit: pinned memory's host and device "
			     "pointers differ: %s",
			     mdgpu_last_error(mdgpu_cu.g));
}

/*
 * What the daemon tells of the GPU: DEVICE_INFO (ABI 1.2, so an older
 * daemon is refused here with a message rather than half working) and
 * where kernels see the aperture.
 */
static CUresult mdgpu_cu_describe(void)
{
	const uint32_t need = (1U << 16) | 2;
	uint64_t mapped = 0;
	int ret;

	if ((mdgpu_cu.info.abi_version >> 16) != (need >> 16) ||
	    (mdgpu_cu.info.abi_version & 0xffff) < (need & 0xffff)) {
		mdgpu_cu_log("cuInit: the vGPU speaks ABI %u.%u; libcuda "
			     "needs %u.%u or later",
			     mdgpu_cu.info.abi_version >> 16,
			     mdgpu_cu.info.abi_version & 0xffff, need >> 16,
			     need & 0xffff);
		return CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
	}
	ret = mdgpu_device_info(mdgpu_cu.g, &mdgpu_cu.dev);
	if (ret) {
		mdgpu_cu_log("cuInit: device info: %s",
			     mdgpu_last_error(mdgpu_cu.g));
		return mdgpu_cu_result(ret);
	}
	ret = mdgpu_query2(mdgpu_cu.g, MDGPU_QUERY_APERTURE_DEVPTR,
			   &mdgpu_cu.aperture_devptr, &mapped);
	if (ret) {
		mdgpu_cu_log("cuInit: aperture query: %s",
			     mdgpu_last_error(mdgpu_cu.g));
		return mdgpu_cu_result(ret);
	}
	mdgpu_cu.aperture_mapped = mapped;
	mdgpu_cu_place_aperture();
	return CUDA_SUCCESS;
}

static CUresult mdgpu_cu_open(void)
{
	struct mdgpu_open_opts o = { 0 };
	char dev[64];
	bool explicit;
	CUresult r;
	int ret;

	if (getenv("MDGPU_VFIO")) {
		o.transport = "vfio";
		o.path = getenv("MDGPU_VFIO");
	} else if (getenv("MDGPU_DEVICE")) {
		o.transport = "guest";
		o.path = getenv("MDGPU_DEVICE");
	} else if (!getenv("MDGPU_SOCKET") &&
		   mdgpu_cu_guest_device(dev, sizeof(dev))) {
		/* Probed only when no socket was named: an explicit
		 * MDGPU_SOCKET reaches the daemon even in a guest. */
		o.transport = "guest";
		o.path = dev;
	} else {
		o.transport = "socket";
		o.type = getenv("MDGPU_TYPE");
	}
	if (!mdgpu_cu_host_bytes(&o.host_bytes, &explicit)) {
		mdgpu_cu_log("cuInit: MDGPU_HOST_MIB is not a size in MiB");
		return CUDA_ERROR_INVALID_VALUE;
	}
	snprintf(mdgpu_cu.transport, sizeof(mdgpu_cu.transport), "%s",
		 o.transport);
	snprintf(mdgpu_cu.type, sizeof(mdgpu_cu.type), "%s",
		 o.type ? o.type : "");
	ret = mdgpu_open(&o, &mdgpu_cu.g);
	/* The default zero-copy area may not fit this vGPU's aperture:
	 * open without one (cuMemHostAlloc then fails OUT_OF_MEMORY). */
	if (ret && !explicit && (ret == -E2BIG || ret == -EINVAL)) {
		o.host_bytes = 0;
		ret = mdgpu_open(&o, &mdgpu_cu.g);
	}
	if (ret) {
		mdgpu_cu_log("cuInit: %s transport: %s", o.transport,
			     mdgpu_last_error(NULL));
		return ret == -ENOENT || ret == -ECONNREFUSED ?
			CUDA_ERROR_NO_DEVICE : mdgpu_cu_result(ret);
	}
	mdgpu_get_info(mdgpu_cu.g, &mdgpu_cu.info);
	mdgpu_cu.spin_env = getenv("MDGPU_SPIN_US") != NULL;
	mdgpu_cu_apply_sched(mdgpu_cu.primary_flags);
	r = mdgpu_cu_describe();
	if (r) {
		mdgpu_close(mdgpu_cu.g);
		mdgpu_cu.g = NULL;
		return r;
	}
	mdgpu_cu_log("cuInit: vGPU %u over the %s transport, quota %llu bytes",
		     mdgpu_cu.info.vgpu_id, o.transport,
		     (unsigned long long)mdgpu_cu.info.fb_quota);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
	CUresult r;

	if (Flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&mdgpu_cu.lock);
	/* The first outcome is the answer for the life of the process, as
	 * with the real driver. */
	if (!mdgpu_cu.init_done) {
		mdgpu_cu.init_result = mdgpu_cu_open();
		mdgpu_cu.init_done = true;
	}
	r = mdgpu_cu.init_result;
	pthread_mutex_unlock(&mdgpu_cu.lock);
	return r;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = MDGPU_CU_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

/* Index of the first row for `name` in mdgpu_cu_procs, or -1. */
static long mdgpu_cu_proc_first(const char *name)
{
	long lo = 0, hi = (long)mdgpu_cu_proc_count;

	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;

		if (strcmp(mdgpu_cu_procs[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < (long)mdgpu_cu_proc_count &&
	    !strcmp(mdgpu_cu_procs[lo].name, name))
		return lo;
	return -1;
}

/* The newest variant of `name` no newer than `version`, among the
 * per-thread rows if `ptds`, else among the legacy ones. */
static const struct mdgpu_cu_proc *mdgpu_cu_proc_pick(long first,
						      const char *name,
						      int version, bool ptds)
{
	const struct mdgpu_cu_proc *best = NULL;

	for (unsigned i = (unsigned)first; i < mdgpu_cu_proc_count &&
	     !strcmp(mdgpu_cu_procs[i].name, name); i++) {
		const struct mdgpu_cu_proc *p = &mdgpu_cu_procs[i];

		if ((bool)p->ptds != ptds)
			continue;
		if (p->version <= version)
			best = p;	/* rows ascend by version */
	}
	return best;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn,
				     int cudaVersion, cuuint64_t flags,
				     CUdriverProcAddressQueryResult *status)
{
	const cuuint64_t known = CU_GET_PROC_ADDRESS_LEGACY_STREAM |
				 CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	const struct mdgpu_cu_proc *p = NULL;
	long first;

	if (!symbol || !pfn || (flags & ~known) ||
	    cudaVersion > MDGPU_CU_DRIVER_VERSION)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	first = mdgpu_cu_proc_first(symbol);
	if (first >= 0) {
		/* Per-thread variant if asked for and there is one for this
		 * version, else the legacy one (cuda.h, cuGetProcAddress). */
		if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
			p = mdgpu_cu_proc_pick(first, symbol, cudaVersion, true);
		if (!p)
			p = mdgpu_cu_proc_pick(first, symbol, cudaVersion,
					       false);
	}
	if (p)
		*pfn = (void *)p->fn;
	if (status)
		*status = p ? CU_GET_PROC_ADDRESS_SUCCESS :
			  first >= 0 ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
			  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (!p)
		mdgpu_cu_log("cuGetProcAddress(%s, %d, %#llx): %s", symbol,
			     cudaVersion, (unsigned long long)flags,
			     first >= 0 ? "version not sufficient" :
			     "no such symbol");
	/* cuda.h: success with *pfn NULL when there is no such symbol or no
	 * variant for cudaVersion. */
	return CUDA_SUCCESS;
}

/* The 11.3 entry point, without symbolStatus.  cuda.h maps the name to
 * cuGetProcAddress_v2 and declares this one only for the driver's own
 * build. */
#undef cuGetProcAddress
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn,
				  int cudaVersion, cuuint64_t flags);
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn,
				  int cudaVersion, cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

static const struct mdgpu_cu_result *mdgpu_cu_result_find(CUresult error)
{
	for (unsigned i = 0; i < mdgpu_cu_result_count; i++)
		if (mdgpu_cu_results[i].value == (int)error)
			return &mdgpu_cu_results[i];
	return NULL;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
	const struct mdgpu_cu_result *r = mdgpu_cu_result_find(error);

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	*pStr = r ? r->name : NULL;
	return r ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
	const struct mdgpu_cu_result *r = mdgpu_cu_result_find(error);

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	*pStr = r ? r->text : NULL;
	return r ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
