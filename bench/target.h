/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpu-bench targets: one ops table per way of reaching the GPU, so that
 * every benchmark runs the same code against native CUDA (driver API,
 * dlopen'd libcuda) and against mdgpu (libmdgpu over the daemon's socket
 * transport).
 *
 * A tenant is one process's handle on a GPU: a CUDA context with one
 * stream (native) or one vGPU (mdgpu).  Each tenant is opened in its own
 * process (fork() before any CUDA call), so native tenants are separate
 * processes exactly as mdgpu's vGPUs are separate worker processes.
 *
 * Ordering: launches, copies and fences of a tenant execute in submission
 * order.  Every op returns 0 or a negative errno.
 */
#ifndef BENCH_TARGET_H
#define BENCH_TARGET_H

#include <stddef.h>
#include <stdint.h>

struct bench_tenant;

/* The compute kernel bench_work (kernels/bench.cu): fixed arithmetic. */
struct bench_work {
	uint32_t grid;		/* blocks */
	uint32_t block;		/* threads per block */
	uint32_t iters;		/* FMA iterations per thread */
	uint64_t ns_hint;	/* its duration alone: backends that cannot
				 * run PTX (mdgpu sim) spin this long */
};

struct bench_tenant_cfg {
	uint32_t index;		/* 0.. within one benchmark */
	uint32_t weight;	/* scheduler weight (mdgpu); native ignores */
	uint32_t priority;	/* scheduler priority (mdgpu), 0: leave the
				 * default; native ignores */
	int latency;		/* 1: waits spin (latency-sensitive tenant);
				 * 0: waits block (saturating tenant) */
	uint64_t pinned_bytes;	/* pinned host memory it will ask for */
	uint32_t depth;		/* saturating tenants: kernels queued
				 * behind the running one (a power of two;
				 * mdgpu: the ring's size); 0 for any other
				 * tenant (mdgpu: the daemon's default ring) */
};

struct bench_target_info {
	char gpu[64];		/* device name */
	uint32_t sm_count;
	uint32_t id;		/* mdgpu: vGPU id; native: 0 */
};

struct bench_target_ops {
	const char *name;	/* "native", "mdgpu" */

	int (*open)(const struct bench_tenant_cfg *cfg,
		    struct bench_tenant **out);
	void (*close)(struct bench_tenant *t);
	int (*info)(struct bench_tenant *t, struct bench_target_info *info);

	int (*mem_alloc)(struct bench_tenant *t, uint64_t size,
			 uint64_t *addr);
	int (*mem_free)(struct bench_tenant *t, uint64_t addr);

	/*
	 * Host memory for copies.  pinned 1: the fast path (native: page-
	 * locked cuMemHostAlloc memory; mdgpu: the vGPU's shared aperture,
	 * zero-copy); pinned 0: ordinary pageable memory (malloc).
	 * Returns NULL when the target has no such memory of that size.
	 */
	void *(*host_alloc)(struct bench_tenant *t, size_t size, int pinned);
	void (*host_free)(struct bench_tenant *t, void *p, size_t size,
			  int pinned);
	/* Copies are ordered; they are complete after sync(). */
	int (*copy_h2d)(struct bench_tenant *t, uint64_t dst, const void *src,
			size_t len);
	int (*copy_d2h)(struct bench_tenant *t, void *dst, uint64_t src,
			size_t len);

	int (*launch_empty)(struct bench_tenant *t);
	int (*launch_work)(struct bench_tenant *t, const struct bench_work *w);
	int (*launch_spin)(struct bench_tenant *t, uint64_t ns);

	/* fence() marks the work submitted so far; fence_wait() returns once
	 * it has finished.  At most BENCH_FENCES_MAX fences are pending. */
	int (*fence)(struct bench_tenant *t, uint64_t *token);
	int (*fence_wait)(struct bench_tenant *t, uint64_t token);
	/* Wait for all submitted work. */
	int (*sync)(struct bench_tenant *t);

	/*
	 * Optional (NULL if none): the cheapest synchronous round trip the
	 * target's submission path has that reaches no GPU (mdgpu: a QUERY
	 * answered by the daemon).  Splits the launch round trip per hop.
	 */
	int (*nop)(struct bench_tenant *t);
};

#define BENCH_FENCES_MAX	64

extern const struct bench_target_ops bench_target_native;
extern const struct bench_target_ops bench_target_mdgpu;

/*
 * Embedded kernels/bench.ptx (NUL-terminated) and the names of its
 * kernels.
 */
extern const char bench_ptx[];
#define BENCH_K_EMPTY	"bench_empty"
#define BENCH_K_WORK	"bench_work"
#define BENCH_K_SPIN	"bench_spin_ns"

/* Probe the GPU from a process that has not touched CUDA yet (the caller
 * forks): 0 and *info, or -ENODEV with the reason. */
int bench_native_probe(struct bench_target_info *info, char *why,
		       size_t why_len);

/* mdgpu target configuration, set by the parent before forking. */
struct bench_mdgpu_env {
	char socket_path[256];	/* daemon's socket */
	char admin_path[256];	/* its admin socket (weights) */
	int sim;		/* the daemon runs the sim backend */
};
extern struct bench_mdgpu_env bench_mdgpu_env;

#endif /* BENCH_TARGET_H */
