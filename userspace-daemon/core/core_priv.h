/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpud core internals shared by core.c (event loop, lifetime), vgpu.c
 * (vGPU lifecycle), exec.c (command execution), dispatch.c (the
 * dispatcher) and stats.c.  Not an interface: include only from core/.
 *
 * Threading: everything runs in ONE thread, the one that calls
 * mdgpud_core_run() (the dispatcher).  Transports' fd callbacks run in it
 * too, so vGPUs are created and destroyed between slices, never during one.
 * The scheduler (core->sched), which is not thread-safe, is called from
 * this thread only.  core->lock only makes the statistics and the vGPU
 * list readable from other threads (mdgpud_core_stats(), tests); the
 * dispatcher takes it around every change of those.
 */
#ifndef MDGPUD_CORE_PRIV_H
#define MDGPUD_CORE_PRIV_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "mdgpud/daemon.h"
#include "mdgpud/handles.h"
#include "mdgpud/memtab.h"
#include "mdgpud/metrics.h"
#include "mdgpud/sched.h"
#include "mdgpud/usage.h"
#include "mdgpud/validate.h"
#include "mdgpud/vtypes.h"

#define MDGPUD_HIST_BUCKETS	MDGPUD_WAIT_HIST_BUCKETS	/* log2(ns) */

struct mdgpud_watch {
	int fd;
	bool dead;
	mdgpud_watch_fn fn;
	void *data;
	struct mdgpud_watch *next;
};

/*
 * A spatial group (spatial.c, Documentation/spatial.md): spatial vGPUs
 * whose SM shares add up to at most 100%, scheduled as ONE entity whose
 * slices run all its runnable members side by side.  The members' own
 * entities are not in the scheduler; they keep the members' knobs.
 */
#define MDGPUD_SGROUP_MEMBERS_MAX	99	/* shares are 1..99% */
/* Group entities' ids: apart from vGPU ids (1, 2, ...). */
#define MDGPUD_SGROUP_ID_BIT		0x80000000u

struct mdgpud_sgroup {
	struct mdgpud_sched_entity entity;
	struct mdgpud_vgpu *members[MDGPUD_SGROUP_MEMBERS_MAX];
	uint32_t nr_members;
	uint32_t share_sum;		/* members' SM shares, <= 100 */
	bool runnable;			/* as the scheduler was told */
	struct mdgpud_sgroup *next;	/* core->sgroups */
};

struct mdgpud_vgpu {
	struct mdgpud_core *core;
	uint32_t id;
	/* Spatial (sm_share > 0): its SM share and group; else NULL, 0. */
	uint32_t sm_share;
	struct mdgpud_sgroup *group;
	const struct mdgpud_vtype *type;
	uint32_t entries;
	uint8_t *ring;
	const struct mdgpud_vgpu_tops *tops;
	void *tpriv;

	struct mdgpud_bctx *bctx;
	struct mdgpud_memtab *mem;
	struct mdgpud_handles *handles;
	struct mdgpud_vctx vctx;
	struct mdgpud_sched_entity entity;
	bool runnable;
	bool ring_broken;
	/*
	 * The backend context is gone (bops->ctx_status): every command
	 * fails with ctx_err (-ETIMEDOUT after a hang, -ENODEV after a loss)
	 * without reaching the backend, until a reset opens a new context.
	 */
	int ctx_err;
	uint64_t ctx_err_code;		/* bops->err_code of the loss */
	int aperture_fd;		/* dup of the transport's, or -1 */
	/*
	 * The backend context is starting (bops->ctx_start, which nobody
	 * waits for: a cuda worker's start takes a second or more): until
	 * bops->ctx_start_poll() says it is usable (each scan of the
	 * dispatcher asks, mdgpud_vgpu_start_poll), the vGPU takes no
	 * command and is not runnable; commands rung meanwhile wait in the
	 * ring.  start_restores: it is a reset's new context for a lost one
	 * (ctx_err is cleared and RESTORED sent once it is usable).
	 * Written under core->lock (statistics read it).
	 */
	bool starting;
	bool start_restores;
	/* Still starting: the started context's aperture is being mapped
	 * (bops->map_shared_start; mdgpud_vgpu_start_poll polls it). */
	bool attaching;

	/*
	 * A command the backend runs while the dispatcher goes on (a module
	 * load or a host registration: bops->module_load_start,
	 * host_register_start): it is command `head`, in ring slot idx;
	 * until it is done (dispatch.c polls it) the vGPU takes no other
	 * command and is not runnable.
	 */
	struct {
		bool active;
		uint32_t idx;
		uint16_t opcode;
		uint16_t flags;		/* the command's MDGPU_CMD_F_* */
		uint64_t wait_ns;	/* its queue wait, for the histogram */
		uint64_t len;		/* a registration's bytes */
	} pending;

	/*
	 * HOST_FUNC (ABI 1.12) completed as command host_seq: the vGPU takes
	 * no other command (is held) until its transport's host_done reads
	 * host_seq + 1, the client's word that the function returned.
	 */
	bool host_wait;
	uint32_t host_seq;

	uint32_t head;			/* next command to execute */
	uint32_t observed_tail;
	uint64_t fence;			/* commands completed */
	uint64_t *seen_ns;		/* per slot: when the doorbell was seen */
	uint64_t ns_per_work;		/* GPU ns per work command
					 * (mdgpud_dispatch_is_work), moving
					 * average over slices; 0 = unknown */

	void *bounce;			/* IOVA transports */
	size_t bounce_size;

	/* ABI 1.2 introspection state (core/info.c). */
	uint8_t uuid[16];		/* DEVICE_INFO's: this vGPU's own */
	/*
	 * Limits that reserve memory (memtab charge slot i = CUlimit i):
	 * the context's own value, read once before CTX_LIMIT or a launch
	 * changes it (limit_known), and whether one did (limit_changed):
	 * a reset then restores it.
	 */
	bool limit_known[MDGPUD_MEMTAB_CHARGES];
	bool limit_changed[MDGPUD_MEMTAB_CHARGES];
	uint64_t limit_default[MDGPUD_MEMTAB_CHARGES];
	/*
	 * The per-thread local memory the STACK_SIZE slot is charged for is
	 * the largest of the default, the last STACK_SIZE set through
	 * CTX_LIMIT (stack_set, 0: none) and the largest local size of a
	 * function launched (stack_launched, 0: none), which the driver
	 * grows the context's local memory to and keeps.  Both since the
	 * context began or was reset.
	 */
	uint64_t stack_set;
	uint64_t stack_launched;

	/* Statistics (written under core->lock). */
	uint64_t gpu_ns, slices, commands, errors, bytes_copied;
	uint64_t host_reg_bytes;	/* registered (HOST_REGISTER) */
	uint64_t hangs, ctx_losses;	/* contexts lost, by cause */
	uint64_t resets;		/* mdgpud_vgpu_reset() calls */
	uint64_t hist[MDGPUD_HIST_BUCKETS];
	uint64_t wait_sum_ns;		/* queue waits of hist[], added */
	struct mdgpud_usage usage;	/* GPU time of the last window */
};

struct mdgpud_core {
	struct mdgpud_config cfg;
	const struct mdgpud_backend_ops *bops;
	struct mdgpud_backend *be;
	struct mdgpud_gpu_info gpu;
	struct mdgpud_sched *sched;
	const struct mdgpud_transport_ops *tops;
	struct mdgpud_transport *t;

	int epfd;
	int ctl_efd;			/* stop / dump / reload requests */
	volatile sig_atomic_t stop_req;
	volatile sig_atomic_t dump_req;
	volatile sig_atomic_t reload_req;
	mdgpud_reload_fn reload_fn;	/* mdgpud_core_set_reload_hook() */
	void *reload_data;
	struct mdgpud_watch *watches;

	pthread_mutex_t lock;		/* vgpus[], nr_vgpus, vGPU stats */
	struct mdgpud_vgpu **vgpus;
	uint32_t nr_vgpus;
	uint32_t next_id;
	struct mdgpud_core_totals totals;	/* under lock */

	struct mdgpud_limits *limits;	/* per-uid accounting (limits.c) */
	uint32_t nr_pending;		/* vGPUs with a pending command */
	uint32_t nr_starting;		/* vGPUs whose context starts */
	uint64_t linger_ns;		/* cfg.linger_us */
	uint64_t latency_queue_ns;	/* cfg.latency_queue_us */
	uint64_t latency_seen_ns;	/* a latency-class vGPU last had work
					 * (dispatch.c), 0: never */
	struct mdgpud_vcmd vcmd;	/* scratch of the dispatcher */
	struct mdgpud_sgroup *sgroups;	/* spatial groups (spatial.c) */
	uint32_t next_sgroup_id;
};

static inline uint64_t mdgpud_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* core.c: wait up to timeout_ms (-1: forever) for fd events, run them. */
void mdgpud_core_poll(struct mdgpud_core *c, int timeout_ms);
/*
 * dispatch.c: the dispatcher loop behind mdgpud_core_run(), until a stop
 * request (which it consumes).
 */
int mdgpud_dispatch_run(struct mdgpud_core *c);
/* vgpu.c: device memory a vGPU's context costs besides its quota
 * (ctx_overhead_mib), reserved at admission. */
uint64_t mdgpud_vgpu_ctx_overhead(const struct mdgpud_core *c);
/* vgpu.c: the quota of a vGPU of type t (-ENOSPC: none to give). */
int mdgpud_vgpu_type_quota(const struct mdgpud_core *c,
			   const struct mdgpud_vtype *t, uint64_t *quota);
/* vgpu.c: after a backend error of v, see whether its context is lost. */
void mdgpud_vgpu_check_ctx(struct mdgpud_vgpu *v);
/* vgpu.c: v's context is starting: whether it is done (then usable, or
 * lost), without waiting.  Dispatcher thread. */
void mdgpud_vgpu_start_poll(struct mdgpud_vgpu *v);
/* v takes no command now: a command of it is pending, or its context
 * is starting. */
static inline bool mdgpud_vgpu_held(const struct mdgpud_vgpu *v)
{
	return v->pending.active || v->starting || v->host_wait;
}
/* vgpu.c: v's context is lost with st (and the backend's code): commands
 * fail with st until a reset; counted, the transport told. */
void mdgpud_vgpu_mark_lost(struct mdgpud_vgpu *v, int st, uint64_t code);
/*
 * spatial.c (Documentation/spatial.md).  share(): the SM share a vGPU of
 * type t gets, 0 when it is time-sliced (spatial = none, or a share of
 * 0 or 100).  join() puts spatial v into the first group its share fits
 * (a new one if none), whose entity the scheduler then has; leave()
 * takes it out (the group goes with its last member).  set_knobs() is
 * mdgpud_vgpu_set_knobs() for a member (the group's entity follows).
 * set_runnable() tells the scheduler v's state, through its group for a
 * member.  group_of(): the group whose entity e is, or NULL for a vGPU's.
 * lost(): a member's context was lost to a GPU fault: every other
 * spatial vGPU (all are clients of the one MPS server) is marked lost.
 */
uint32_t mdgpud_spatial_share(const struct mdgpud_core *c,
			      const struct mdgpud_vtype *t);
int mdgpud_spatial_join(struct mdgpud_vgpu *v, uint64_t now_ns);
void mdgpud_spatial_leave(struct mdgpud_vgpu *v);
int mdgpud_spatial_set_knobs(struct mdgpud_vgpu *v, uint32_t weight,
			     uint32_t cap_pct, uint32_t priority);
void mdgpud_spatial_set_runnable(struct mdgpud_vgpu *v, bool runnable,
				 uint64_t now_ns);
struct mdgpud_sgroup *
mdgpud_spatial_group_of(const struct mdgpud_sched_entity *e);
void mdgpud_spatial_lost(struct mdgpud_vgpu *v);
/* info.c: the ABI 1.2 introspection opcodes, DEVICE_INFO .. OCCUPANCY and
 * QUERY APERTURE_DEVPTR, and MODULE_FUNCS (ABI 1.5); the charge of a
 * launch's local memory, before the backend sees the launch;
 * mdgpud_info_release on reset and destroy. */
int mdgpud_info_exec(struct mdgpud_vgpu *v, struct mdgpud_vcmd *vc,
		     uint64_t *result, uint64_t *result2);
int mdgpud_info_launch(struct mdgpud_vgpu *v, uint64_t local_bytes);
void mdgpud_info_uuid_init(struct mdgpud_vgpu *v, const uint8_t *uuid);
void mdgpud_info_release(struct mdgpud_vgpu *v, bool live);
/* link.c: MODULE_LINK (ABI 1.7); result: the answer's size. */
int mdgpud_link_exec(struct mdgpud_vgpu *v, struct mdgpud_vcmd *vc,
		     uint64_t *result);
/* exec.c: len bytes from or to a validated host buffer of v (aperture,
 * or guest IOVA by the transport's DMA). */
int mdgpud_host_read(struct mdgpud_vgpu *v, const struct mdgpud_hostbuf *hb,
		     void *p, uint64_t len);
int mdgpud_host_write(struct mdgpud_vgpu *v, const struct mdgpud_hostbuf *hb,
		      const void *p, uint64_t len);
/* exec.c: execute one validated command of v. */
int mdgpud_exec(struct mdgpud_vgpu *v, struct mdgpud_vcmd *vc,
		uint64_t *result, uint64_t *result2);
/*
 * exec.c: commands the backend runs while the dispatcher goes on (module
 * loads and host registrations, where the backend has module_load_start
 * and host_register_start).  pends() says whether vc is one; start()
 * starts it: 0 once under way, else its error; finish() answers
 * -EINPROGRESS while it runs, then its result once (*result: the new
 * handle, or the registration's device address); abort() gives it up
 * (reset, destroy).
 */
bool mdgpud_exec_pends(const struct mdgpud_vgpu *v,
		       const struct mdgpud_vcmd *vc);
int mdgpud_exec_start(struct mdgpud_vgpu *v, const struct mdgpud_vcmd *vc);
int mdgpud_exec_finish(struct mdgpud_vgpu *v, uint64_t *result);
void mdgpud_exec_abort(struct mdgpud_vgpu *v);
/* exec_stream.c: the stream and event-query opcodes (ABI 1.2). */
int mdgpud_exec_stream(struct mdgpud_vgpu *v, const struct mdgpud_vcmd *vc,
		       uint64_t *result);
int mdgpud_exec_stream_priorities(struct mdgpud_vgpu *v, uint64_t *least,
				  uint64_t *greatest);
/* exec_stream.c: destroy every stream of v (reset, destroy); through
 * the backend only while its context is live. */
void mdgpud_vgpu_release_streams(struct mdgpud_vgpu *v, bool live);

#endif /* MDGPUD_CORE_PRIV_H */
