/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Shared-memory protocol between the cuda backend's supervisor side
 * (the .c files of backends/cuda/) and one mdgpud-worker process
 * (backends/cuda/worker/).
 *
 * One memfd holds a struct mdgpud_cuda_rpc_shm: a header, a ring of
 * request slots and a staging area.  The supervisor is the only producer
 * (req_tail), the worker the only consumer (done).  Request n lives in
 * slot n % MDGPUD_CUDA_RPC_SLOTS; the worker writes the answer of a
 * synchronous request into the same slot and then publishes done (release
 * store).  The supervisor never has more than MDGPUD_CUDA_RPC_SLOTS
 * requests outstanding.
 *
 * Asynchronous requests (launch, memset, builtins other than checksum,
 * event record, stream wait, stream memory operations, device-to-device
 * copies, host copies with the async argument set, slice begin) are
 * posted and not waited for;
 * the first error of each stream is kept by the worker and reported by
 * the next SYNC of that stream, or of stream 0 (every stream).
 * Everything else is waited for.  An answer carries, beside its errno
 * status, the CUresult behind it (cu_result, 0 if none); a worker whose
 * context a sticky error lost writes that CUresult to lost_result before
 * it sets the LOST state.
 *
 * Streams: a request's stream argument is 0 for the vGPU's default
 * stream (the driver's legacy default stream, CU_STREAM_LEGACY) or a
 * handle STREAM_CREATE answered; a handle the worker does not have fails
 * the request with -ENOENT.  The worker
 * publishes done after every synchronous request, when it has drained the
 * ring, and every 16 requests.
 *
 * Wake-ups: both sides spin for a while, then sleep on a futex on the
 * other side's counter (req_tail or done), announcing it in *_sleeping so
 * that the other side issues FUTEX_WAKE only when someone sleeps.  The
 * supervisor may announce work ahead (spin_until_ns, plus a FUTEX_WAKE if
 * the worker sleeps): the worker then sleeps until two margins before that
 * time and spins from there until it, so that the first request of its
 * next slice does not pay a futex wake-up (a request posted earlier wakes
 * it as usual).  After a slice the supervisor may also grant the worker a
 * poll window (poll_until_ns): it polls the ring until then, yielding the
 * CPU between checks, so that a tenant coming back from idle within the
 * window pays no wake-up; at most worker_pollers workers hold a grant.  Waiting for the GPU, the worker polls the stream for its
 * spin budget (or, for SLICE_END, sleeps and polls until a margin before
 * the expected drain and spins from there), then blocks on an event with
 * CU_EVENT_BLOCKING_SYNC: long drains cost no CPU.  The
 * sleeping flag is set before the counter is re-checked, and the counter
 * published before the flag is read (both sequentially consistent), so a
 * wake-up cannot be lost.  A supervisor waiting for ring space naps and
 * polls instead (no flag, no wake-up needed).
 *
 * File descriptors of host memory are passed over a unix socket
 * (SCM_RIGHTS).  Deaths: the supervisor watches each worker through a
 * pidfd; a worker notices its supervisor's death by being reparented.
 */
#ifndef MDGPUD_CUDA_RPC_H
#define MDGPUD_CUDA_RPC_H

#include <linux/futex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/cpu.h"
#include "uapi/mdgpu.h"

#define MDGPUD_CUDA_RPC_MAGIC		0x5743444dU	/* "MDCW" */
#define MDGPUD_CUDA_RPC_VERSION		15
#define MDGPUD_CUDA_RPC_SLOTS		256
/* Inline payload of one request: a launch parameter blob or a name. */
#define MDGPUD_CUDA_RPC_INLINE_MAX	4096
/*
 * A launch parameter blob larger than the inline payload (ABI 1.6, up to
 * MDGPU_PARAMS_MAX) travels in one of MDGPUD_CUDA_RPC_BIG_SLOTS areas of
 * MDGPUD_CUDA_RPC_BIG_BYTES beside the ring, named in the high half of
 * the launch's a4 (area + 1; 0: inline), so that the ring's slots stay
 * 4 KiB.  The supervisor reuses an area once the launch that used it is
 * done (the driver copied the parameters when it was launched).
 */
#define MDGPUD_CUDA_RPC_BIG_SLOTS	4
#define MDGPUD_CUDA_RPC_BIG_BYTES	32768
_Static_assert(MDGPU_PARAMS_MAX <= MDGPUD_CUDA_RPC_BIG_BYTES,
	       "a launch's parameters must fit a big area");
/* A function or global name travels inline, without its NUL. */
_Static_assert(MDGPU_NAME_MAX <= MDGPUD_CUDA_RPC_INLINE_MAX,
	       "names must fit the inline data");
/*
 * Module images in host memory and copies from unregistered host memory
 * go through it; images in device memory never do (the worker reads them
 * into a buffer of its own).
 */
#define MDGPUD_CUDA_RPC_STAGING_BYTES	((16u << 20) + 8192u)
/* A MODULE_FUNCS answer travels in the staging area. */
_Static_assert(MDGPU_FUNCS_MAX <= MDGPUD_CUDA_RPC_STAGING_BYTES,
	       "a module's names must fit the staging area");
/* So do a MODULE_LINK bundle and its answer (one after the other). */
_Static_assert(MDGPU_LINK_OUT_MAX <= MDGPUD_CUDA_RPC_STAGING_BYTES,
	       "a link's answer must fit the staging area");
#define MDGPUD_CUDA_RPC_MSG_MAX		512

/*
 * Timing margin of an expected answer (SLICE_END's arg[0]) and of the
 * spin_until_ns hint: the waiter spins from this much before the expected
 * time to this much after it, and sleeps before.  It covers a futex or
 * nanosleep waking late (timer slack, 50 us by default) and the error of
 * the estimate.
 */
#define MDGPUD_CUDA_EXPECT_MARGIN_NS	300000u

/*
 * Spin budget of a copy of `len` bytes, for the supervisor waiting for the
 * answer and the worker waiting for the GPU: its expected transfer time at
 * MDGPUD_CUDA_SPIN_BYTES_PER_US, plus the usual budget `spin_ns`, at most
 * MDGPUD_CUDA_SPIN_COPY_MAX_NS.  A wake-up costs 45-70 us on the GPU
 * machine: a 64 MiB copy (1.2 ms) lost 5-10 % of its bandwidth when the
 * supervisor went to sleep after 200 us, and 5-7 % when the worker blocked
 * on an event after 200 us.
 */
#define MDGPUD_CUDA_SPIN_BYTES_PER_US	20000u		/* 20 GB/s */
#define MDGPUD_CUDA_SPIN_COPY_MAX_NS	10000000u	/* 10 ms */

static inline uint64_t mdgpud_cuda_copy_spin(uint64_t len, uint64_t spin_ns)
{
	uint64_t ns = len / MDGPUD_CUDA_SPIN_BYTES_PER_US * 1000 + spin_ns;

	return ns < MDGPUD_CUDA_SPIN_COPY_MAX_NS ? ns
						 : MDGPUD_CUDA_SPIN_COPY_MAX_NS;
}

/*
 * MAP's flags.  CLIENT: a tenant's memory (HOST_REGISTER), mapped at a3
 * when that range is free, and registered with the driver or refused
 * (the supervisor's regions stay usable, pageable, if pinning fails).
 * READ_ONLY: mapped and registered for reading only.
 */
#define MDGPUD_CUDA_MAP_F_CLIENT	(1u << 0)
#define MDGPUD_CUDA_MAP_F_READ_ONLY	(1u << 1)

/* Worker fds (fixed numbers after exec). */
#define MDGPUD_CUDA_WORKER_SHM_FD	3
#define MDGPUD_CUDA_WORKER_SOCK_FD	4

enum mdgpud_cuda_worker_state {
	MDGPUD_CUDA_WORKER_STARTING = 0,
	MDGPUD_CUDA_WORKER_READY = 1,
	MDGPUD_CUDA_WORKER_FAILED = 2,	/* init failed; msg says why */
	MDGPUD_CUDA_WORKER_LOST = 3,	/* context unusable; worker exits */
	MDGPUD_CUDA_WORKER_PROBED = 4,	/* --probe finished; info filled */
};

enum mdgpud_cuda_rpc_op {
	MDGPUD_CUDA_RPC_NOP = 0,
	MDGPUD_CUDA_RPC_MAP,		/* a0 region, a1 offset, a2 size, a3
					 * address wished (CLIENT), a4
					 * MDGPUD_CUDA_MAP_F_*; fd */
	MDGPUD_CUDA_RPC_UNMAP,		/* a0 region */
	MDGPUD_CUDA_RPC_MEM_ALLOC,	/* a0 size -> r0 addr, r1 reserved */
	MDGPUD_CUDA_RPC_MEM_FREE,	/* a0 addr, a1 size */
	MDGPUD_CUDA_RPC_MEMSET,		/* a0 addr, a1 value, a2 len (bytes),
					 * a3 width 1/2/4, a4 stream */
	MDGPUD_CUDA_RPC_COPY_H2D,	/* a0 dst, a1 region, a2 off, a3 len,
					 * a4 stream, a5 1: posted */
	MDGPUD_CUDA_RPC_COPY_D2H,	/* a0 src, a1 region, a2 off, a3 len,
					 * a4 stream, a5 1: posted */
	MDGPUD_CUDA_RPC_COPY_D2D,	/* a0 dst, a1 src, a2 len, a3 stream */
	MDGPUD_CUDA_RPC_MODULE_LOAD,	/* a0 kind, a1 len (staging) -> r0;
					 * refused: the driver's JIT log as
					 * inline data, NUL excluded */
	MDGPUD_CUDA_RPC_MODULE_UNLOAD,	/* a0 module */
	MDGPUD_CUDA_RPC_FUNC_GET,	/* a0 module; inline name -> r0, r1
					 * its LOCAL_SIZE_BYTES */
	MDGPUD_CUDA_RPC_LAUNCH,		/* a0 func, a1 grid x|y<<32, a2 grid z|
				   block x<<32, a3 block y|z<<32, a4 shm |
				   big area + 1 << 32 (0: inline), a5
				   stream, a6 flags | cluster << 32 */
	MDGPUD_CUDA_RPC_BUILTIN,	/* a0 kernel, a1..a5 args, a6 stream
					 * -> r0 */
	MDGPUD_CUDA_RPC_EVENT_CREATE,	/* a0 MDGPU_EVENT_F_* -> r0 event */
	MDGPUD_CUDA_RPC_EVENT_RECORD,	/* a0 event, a1 stream */
	MDGPUD_CUDA_RPC_EVENT_ELAPSED,	/* a0 start, a1 end -> r0 ns */
	MDGPUD_CUDA_RPC_EVENT_DESTROY,	/* a0 event */
	MDGPUD_CUDA_RPC_SYNC,		/* a0 stream (0: every stream) */
	MDGPUD_CUDA_RPC_SLICE_BEGIN,
	MDGPUD_CUDA_RPC_SLICE_END,	/* a0 expected drain ns -> r0 GPU ns */
	MDGPUD_CUDA_RPC_SHUTDOWN,	/* scrub and free everything, exit */
	/* ABI 1.2 introspection (backends/cuda/info.c, worker/info.c). */
	MDGPUD_CUDA_RPC_FUNC_INFO,	/* a0 func, a1 max params -> staging:
					 * struct mdgpu_func_info + params,
					 * r0 nr_params */
	MDGPUD_CUDA_RPC_FUNC_SET_ATTR,	/* a0 func, a1 attr, a2 value (s32) */
	MDGPUD_CUDA_RPC_MODULE_GLOBAL,	/* a0 module; inline name -> r0 addr,
					 * r1 bytes */
	MDGPUD_CUDA_RPC_CTX_LIMIT,	/* a0 CUlimit, a1 set, a2 value -> r0
					 * the value in force */
	MDGPUD_CUDA_RPC_OCCUPANCY,	/* a0 func, a1 what | flags << 32,
					 * a2 block threads | num_blocks << 32,
					 * a3 dyn smem, a4 cluster x | y << 20
					 * | z << 40, a5 grid x | y << 32,
					 * a6 grid z -> r0 */
	MDGPUD_CUDA_RPC_HOST_DEVPTR,	/* a0 region -> r0 device address
					 * (0: not mapped), r1 bytes */
	/* ABI 1.2 streams and events (worker/stream.c). */
	MDGPUD_CUDA_RPC_STREAM_CREATE,	/* a0 MDGPU_STREAM_F_*, a1 priority
					 * (s32) -> r0 stream */
	MDGPUD_CUDA_RPC_STREAM_DESTROY,	/* a0 stream */
	MDGPUD_CUDA_RPC_STREAM_WAIT_EVENT, /* a0 stream, a1 event */
	MDGPUD_CUDA_RPC_STREAM_QUERY,	/* a0 stream -> r0 1: pending */
	MDGPUD_CUDA_RPC_EVENT_QUERY,	/* a0 event -> r0 1: pending */
	MDGPUD_CUDA_RPC_EVENT_SYNC,	/* a0 event */
	/* ABI 1.3: an image in device memory (worker/requests.c). */
	MDGPUD_CUDA_RPC_MODULE_LOAD_DEV, /* a0 kind, a1 len, a2 device
					  * address -> r0 */
	/* ABI 1.5: a module's kernels (worker/info.c). */
	MDGPUD_CUDA_RPC_MODULE_FUNCS,	/* a0 module, a1 bytes the answer
					 * may take -> staging: the names,
					 * NUL-terminated, whole names only;
					 * r0 bytes of the whole list, r1
					 * kernels | bytes written << 32 */
	/* ABI 1.7: device linking (worker/link.c). */
	MDGPUD_CUDA_RPC_MODULE_LINK,	/* a0 bundle bytes (staging), a1
					 * bytes the answer may take -> the
					 * answer in staging, whole or its
					 * header alone; r0 its size, r1
					 * bytes written (also when the
					 * driver refused the link: -EINVAL) */
	/* Whether any stream still has work (worker/stream.c). */
	MDGPUD_CUDA_RPC_BUSY,		/* -> r0 1: work queued on a stream */
	/* ABI 1.10: stream memory operations (worker/requests.c). */
	MDGPUD_CUDA_RPC_STREAM_MEMOP,	/* a0 stream, a1 MDGPU_MEMOP_*, a2
					 * addr, a3 value, a4 wait condition
					 * MDGPU_MEMOP_WAIT_* (write: 0) */
	MDGPUD_CUDA_RPC_OP_COUNT
};

/* Host region 0 is the staging area of the shared memfd itself. */
#define MDGPUD_CUDA_RPC_REGION_STAGING	0

/*
 * A request fits in one cache line (the worker reads one line for an
 * empty launch); the answer, written only for synchronous requests, lives
 * in the next line, then the inline payload.
 */
struct mdgpud_cuda_rpc_slot {
	uint32_t op;			/* enum mdgpud_cuda_rpc_op */
	uint32_t inline_len;
	uint64_t arg[7];
	/* Written by the worker. */
	_Alignas(64) int32_t status;	/* 0 or negative errno */
	uint32_t cu_result;		/* the CUresult behind it, or 0 */
	uint64_t result[2];
	_Alignas(64) uint8_t inline_data[MDGPUD_CUDA_RPC_INLINE_MAX];
};

_Static_assert(offsetof(struct mdgpud_cuda_rpc_slot, status) == 64,
	       "request header is one cache line");

struct mdgpud_cuda_rpc_info {
	char name[64];
	char bus_id[32];		/* cuDeviceGetPCIBusId */
	uint8_t uuid[16];		/* cuDeviceGetUuid */
	int32_t ordinal;		/* the CUDA ordinal the worker's
					 * device argument named */
	uint64_t mem_free_bytes;
	uint64_t mem_total_bytes;
	uint32_t sm_count;
	int32_t driver_version;
	/* DEVICE_INFO (ABI 1.2): cuDeviceGetName in full, and
	 * cuDeviceGetAttribute i for i < nr_attrs (MDGPU_ATTR_NONE where
	 * the driver refused it). */
	char full_name[MDGPU_DEV_NAME_LEN];
	uint32_t nr_attrs;
	int32_t attr[MDGPU_DEV_ATTR_MAX];
	/* Streams (ABI 1.2). */
	int32_t prio_least;		/* cuCtxGetStreamPriorityRange */
	int32_t prio_greatest;
};

struct mdgpud_cuda_rpc_shm {
	uint32_t magic;
	uint32_t version;
	_Atomic uint32_t state;		/* enum mdgpud_cuda_worker_state */
	uint32_t lost_result;		/* LOST: the CUresult that lost it */
	struct mdgpud_cuda_rpc_info info;	/* filled by the worker */
	char msg[MDGPUD_CUDA_RPC_MSG_MAX];	/* worker's last message */
	/* Spin budgets, set by the supervisor before exec. */
	uint32_t worker_spin_ns;
	uint32_t stats_enabled;		/* MDGPUD_CUDA_STATS: time requests */
	/* Worker statistics (only while stats_enabled), for diagnosis. */
	uint64_t stat_requests;		/* requests executed */
	uint64_t stat_exec_ns;		/* time inside their execution */
	uint64_t stat_busy_ns;		/* from each request's start to the
					 * next one's, while not waiting */
	/* Hint windows the worker spun in (always counted). */
	_Atomic uint64_t stat_hint_spins;

	_Alignas(64) _Atomic uint32_t req_tail;	/* supervisor -> worker */
	_Atomic uint32_t worker_sleeping;
	/* Supervisor's hint: requests are expected before this time
	 * (CLOCK_MONOTONIC ns), so an idle worker spins until then instead
	 * of sleeping (see mdgpud_cuda_expect_work). */
	_Atomic uint64_t spin_until_ns;
	/* Supervisor's poll grant: an idle worker polls the ring until
	 * this time (CLOCK_MONOTONIC ns) instead of sleeping; 0 takes the
	 * grant back (see mdgpud_cuda_poll_grant). */
	_Atomic uint64_t poll_until_ns;
	_Alignas(64) _Atomic uint32_t done;	/* worker -> supervisor */
	_Atomic uint32_t sup_sleeping;

	_Alignas(64) struct mdgpud_cuda_rpc_slot slot[MDGPUD_CUDA_RPC_SLOTS];
	_Alignas(64) uint8_t big[MDGPUD_CUDA_RPC_BIG_SLOTS]
				[MDGPUD_CUDA_RPC_BIG_BYTES];
	_Alignas(4096) uint8_t staging[MDGPUD_CUDA_RPC_STAGING_BYTES];
};

_Static_assert(sizeof(_Atomic uint32_t) == 4, "futex word size");

/*
 * Shared (not FUTEX_PRIVATE) futex operations on a word of the memfd, which
 * both processes map.  rel NULL: no timeout.
 */
static inline long mdgpud_cuda_futex_wait(_Atomic uint32_t *word,
					  uint32_t expected,
					  const struct timespec *rel)
{
	return syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, rel,
		       NULL, 0);
}

static inline void mdgpud_cuda_futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT32_MAX, NULL,
		NULL, 0);
}

static inline uint64_t mdgpud_cuda_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* MDGPUD_CUDA_RPC_H */
