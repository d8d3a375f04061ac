/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpud-worker's private header: the worker's state and the functions its
 * files share.
 *
 *   main.c      arguments, the shared area, start-up and exit states
 *   context.c   the CUDA context: open, serve set-up, drain, teardown
 *   device.c    the GPU a selector (ordinal, bus id, UUID) names
 *   serve.c     the request loop: ring wait, async-error latch, wake-ups
 *   requests.c  one function per request op, dispatched through a table
 *   builtins.c  the builtin kernels (fill, add, checksum, spin)
 *   memory.c    device allocations and their scrub, host regions
 *   stream.c    the vGPU's streams, their error latches, draining them
 *   handles.c   modules, functions and events behind opaque handles
 *   err.c       CUresult to errno, the message to the supervisor
 *   info.c      ABI 1.2 introspection: device table, function info and
 *               attributes, globals, limits, occupancy, mapped host
 *               memory; a module's kernels (ABI 1.5)
 *   link.c      device linking with the driver's linker (ABI 1.7)
 *   sandbox.c   the sandbox the worker puts itself in before cuInit
 */
#ifndef MDGPUD_WORKER_H
#define MDGPUD_WORKER_H

#include "cuda_api.h"
#include "cuda_rpc.h"
#include "handles.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define MDGPUD_WORKER_JIT_LOG_BYTES	4096

/* Handle tags (handles.h): one per table, never 0. */
#define MDGPUD_WORKER_TAG_MODULE	1
#define MDGPUD_WORKER_TAG_FUNC		2
#define MDGPUD_WORKER_TAG_EVENT		3
#define MDGPUD_WORKER_TAG_STREAM	4

/*
 * A stream of the vGPU: the default one (handle 0, the driver's legacy
 * default stream) or one STREAM_CREATE made.  `err` latches the first
 * error of an asynchronous request on it (errno and CUresult), reported
 * and cleared by the next SYNC or STREAM_QUERY of it, or SYNC 0.
 */
struct mdgpud_worker_stream {
	mdgpud_cu_stream cu;
	int err;
	uint32_t err_cu;
	/* The slice (w->slice_seq) whose begin event its work waits for. */
	uint64_t slice_seq;
};

/* Host memory the supervisor shared, by region number. */
struct mdgpud_worker_region {
	uint8_t *ptr;
	uint64_t size;
	int registered;
};

struct mdgpud_worker_alloc {
	mdgpud_cu_deviceptr addr;
	uint64_t size;
};

struct mdgpud_worker {
	struct mdgpud_cuda_api cu;
	struct mdgpud_cuda_rpc_shm *shm;
	int sock;
	pid_t sup_pid;
	uint32_t vgpu_id;
	mdgpud_cu_device dev;
	mdgpud_cu_context ctx;
	/*
	 * The worker's own stream (non-blocking): slice events, scrubs and
	 * drains.  To wait for all of the vGPU's work, every stream of the
	 * vGPU is joined into it (join_ev recorded there, waited for here).
	 */
	mdgpud_cu_stream stream;
	mdgpud_cu_event join_ev;	/* no timing */
	struct mdgpud_worker_stream stream0;	/* the default stream */
	/* Set by a request on a stream: where serve.c latches its error. */
	struct mdgpud_worker_stream *req_stream;
	uint32_t last_cu;		/* CUresult of the last failure */
	mdgpud_cu_module builtin_mod;
	mdgpud_cu_function fn_fill, fn_add, fn_checksum, fn_spin;
	mdgpud_cu_deviceptr scratch;	/* 8 bytes: checksum result */
	mdgpud_cu_event slice_ev[2];
	mdgpud_cu_event drain_ev;	/* CU_EVENT_BLOCKING_SYNC, no timing */
	int slice_open;
	uint64_t slice_seq;		/* slices begun */
	uint32_t sm_count;
	int pending_err;		/* first error of an async request on
					 * no stream (a bad stream handle) */
	uint32_t pending_cu;

	/* regions[0 .. nr_regions) addressable; cap_regions allocated. */
	struct mdgpud_worker_region *regions;
	size_t nr_regions, cap_regions;
	struct mdgpud_worker_alloc *allocs;
	size_t nr_allocs, cap_allocs;
	/*
	 * Objects the context created, the only ones a request may name.
	 * A function's parent is its module's handle.
	 */
	struct mdgpud_worker_handles modules, funcs, events, streams;
};

/*
 * sandbox.c: applies the sandbox the supervisor passed as the last
 * argument (backends/cuda/sandbox.h) and removes it from argv.  0 when
 * there is none; negative errno, with the reason in the shared area,
 * when a required protection cannot be had.
 */
int mdgpud_worker_sandbox(struct mdgpud_worker *w, int *argc, char **argv);

/* err.c */
void mdgpud_worker_err_msg(struct mdgpud_worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int mdgpud_worker_err(struct mdgpud_worker *w, mdgpud_cu_result res,
		      const char *what);

/* context.c */
int mdgpud_worker_context_open(struct mdgpud_worker *w, const char *device);
/*
 * The CUDA ordinal of the GPU `device` names (common/gpu_select.h's
 * canonical forms) into *ordinal: 0, or -ENODEV with a message to the
 * supervisor that names the selector and the GPUs CUDA sees.
 */
int mdgpud_worker_device_find(struct mdgpud_worker *w, const char *device,
			      int *ordinal);
int mdgpud_worker_context_setup(struct mdgpud_worker *w);
void mdgpud_worker_context_teardown(struct mdgpud_worker *w);
mdgpud_cu_result mdgpud_worker_context_drain(struct mdgpud_worker *w,
					     mdgpud_cu_stream stream,
					     uint64_t expect_ns,
					     uint64_t spin_ns);
mdgpud_cu_result mdgpud_worker_context_drain_all(struct mdgpud_worker *w,
						 uint64_t expect_ns);

/* memory.c */
int mdgpud_worker_mem_init(struct mdgpud_worker *w);
uint8_t *mdgpud_worker_mem_host(struct mdgpud_worker *w, uint64_t region,
				uint64_t off, uint64_t len);
int mdgpud_worker_mem_map(struct mdgpud_worker *w, uint64_t region,
			  uint64_t off, uint64_t size, uint64_t addr,
			  uint64_t flags);
int mdgpud_worker_mem_unmap(struct mdgpud_worker *w, uint64_t region);
void mdgpud_worker_mem_unmap_all(struct mdgpud_worker *w);
int mdgpud_worker_mem_alloc(struct mdgpud_worker *w, uint64_t size,
			    mdgpud_cu_deviceptr *addr, uint64_t *reserved);
int mdgpud_worker_mem_free(struct mdgpud_worker *w, mdgpud_cu_deviceptr addr);
void mdgpud_worker_mem_free_all(struct mdgpud_worker *w);

/* stream.c */
int mdgpud_worker_stream_get(struct mdgpud_worker *w, uint64_t handle,
			     struct mdgpud_worker_stream **out);
int mdgpud_worker_stream_create(struct mdgpud_worker *w, uint32_t flags,
				int32_t priority, uint64_t *handle);
int mdgpud_worker_stream_destroy(struct mdgpud_worker *w, uint64_t handle);
void mdgpud_worker_stream_destroy_all(struct mdgpud_worker *w);
mdgpud_cu_result mdgpud_worker_stream_join(struct mdgpud_worker *w);
void mdgpud_worker_stream_enter_slice(struct mdgpud_worker *w,
				      struct mdgpud_worker_stream *st);
void mdgpud_worker_stream_latch(struct mdgpud_worker *w, int err);
int mdgpud_worker_stream_sync(struct mdgpud_worker *w, uint64_t handle);
int mdgpud_worker_busy(struct mdgpud_worker *w, uint64_t *busy);
int mdgpud_worker_stream_query(struct mdgpud_worker *w, uint64_t handle,
			       uint64_t *pending);

/* builtins.c */
int mdgpud_worker_builtins_run(struct mdgpud_worker *w,
			       struct mdgpud_cuda_rpc_slot *s);

/* requests.c */
int mdgpud_worker_requests_exec(struct mdgpud_worker *w, uint32_t op,
				struct mdgpud_cuda_rpc_slot *s);
bool mdgpud_worker_requests_async(uint32_t op,
				  const struct mdgpud_cuda_rpc_slot *s);

/* link.c */
int mdgpud_worker_op_module_link(struct mdgpud_worker *w,
				 struct mdgpud_cuda_rpc_slot *s);

/* info.c */
void mdgpud_worker_info_probe(struct mdgpud_worker *w);
int mdgpud_worker_op_func_info(struct mdgpud_worker *w,
			       struct mdgpud_cuda_rpc_slot *s);
int mdgpud_worker_op_func_set_attr(struct mdgpud_worker *w,
				   struct mdgpud_cuda_rpc_slot *s);
int mdgpud_worker_op_module_global(struct mdgpud_worker *w,
				   struct mdgpud_cuda_rpc_slot *s);
int mdgpud_worker_op_module_funcs(struct mdgpud_worker *w,
				  struct mdgpud_cuda_rpc_slot *s);
int mdgpud_worker_op_ctx_limit(struct mdgpud_worker *w,
			       struct mdgpud_cuda_rpc_slot *s);
int mdgpud_worker_op_occupancy(struct mdgpud_worker *w,
			       struct mdgpud_cuda_rpc_slot *s);
int mdgpud_worker_op_host_devptr(struct mdgpud_worker *w,
				 struct mdgpud_cuda_rpc_slot *s);

/* serve.c */
int mdgpud_worker_serve(struct mdgpud_worker *w);

#endif /* MDGPUD_WORKER_H */
