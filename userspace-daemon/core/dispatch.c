// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The dispatcher: scan doorbells, ask the scheduler who runs, run that
 * vGPU's commands for up to the slice (validate, execute, complete),
 * charge the measured GPU time; spin, then sleep, when idle.  A module
 * load is started and not waited for (the driver's JIT may take seconds):
 * its vGPU is not runnable until the load is done, which each scan polls;
 * so is a vGPU whose backend context is starting (vgpu.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "core_priv.h"
#include "common/cpu.h"
#include "mdgpud/log.h"

/*
 * Record a new tail (already checked: tail - head <= entries) and stamp
 * the commands seen for the first time.  A tenant may also move its tail
 * back (withdrawing commands not yet started): then nothing is stamped.
 * Both distances are <= entries, so the loop is bounded by the ring size.
 */
static void mdgpud_dispatch_observe(struct mdgpud_vgpu *v, uint32_t tail,
				    uint64_t now)
{
	if (tail - v->head > v->observed_tail - v->head)
		for (uint32_t n = v->observed_tail; n != tail; n++)
			v->seen_ns[n & (v->entries - 1)] = now;
	v->observed_tail = tail;
}

/*
 * The latency class (Documentation/scheduler.md, "Latency class"): a vGPU
 * of the highest priority.  While one has had work in the last
 * MDGPUD_DISPATCH_LATENCY_ACTIVE_NS, the other vGPUs' slices keep at most
 * latency_queue_us of GPU work queued and end as soon as a latency-class
 * vGPU has work, so that it waits for at most that much of their work to
 * drain, not for a whole slice of it.
 */
#define MDGPUD_DISPATCH_LATENCY_ACTIVE_NS	100000000ULL	/* 100 ms */

static bool mdgpud_dispatch_is_latency(const struct mdgpud_vgpu *v)
{
	return v->entity.priority == MDGPU_PRIORITY_MAX;
}

static void mdgpud_dispatch_pending_poll(struct mdgpud_core *c,
					struct mdgpud_vgpu *v);

/*
 * Refresh every vGPU's doorbell and collect pending commands that are
 * done; returns true if any vGPU has work it can run (a vGPU with a
 * pending command has none until it is done).
 */
static bool mdgpud_dispatch_scan(struct mdgpud_core *c, uint64_t now)
{
	bool any = false;

	for (uint32_t i = 0; i < c->nr_vgpus; i++) {
		struct mdgpud_vgpu *v = c->vgpus[i];
		uint32_t tail, pending;
		bool runnable;

		if (v->starting)
			mdgpud_vgpu_start_poll(v);
		if (v->pending.active)
			mdgpud_dispatch_pending_poll(c, v);
		if (v->host_wait &&
		    v->tops->host_done(v->tpriv) == v->host_seq + 1)
			v->host_wait = false;
		tail = v->tops->sq_tail(v->tpriv);
		pending = tail - v->head;
		if (pending > v->entries) {
			if (!v->ring_broken) {
				mdgpud_warn("vgpu %u: bad doorbell: tail %u head %u entries %u",
					    v->id, tail, v->head, v->entries);
				v->tops->ring_error(v->tpriv, -EINVAL);
				v->ring_broken = true;
			}
			pending = 0;
		} else {
			v->ring_broken = false;
			mdgpud_dispatch_observe(v, tail, now);
		}
		runnable = pending > 0 && !mdgpud_vgpu_held(v);
		if (runnable && mdgpud_dispatch_is_latency(v))
			c->latency_seen_ns = now;
		if (runnable != v->runnable)
			mdgpud_spatial_set_runnable(v, runnable, now);
		any |= runnable;
	}
	return any;
}

static void mdgpud_dispatch_arm(struct mdgpud_core *c, bool sleeping)
{
	for (uint32_t i = 0; i < c->nr_vgpus; i++)
		c->vgpus[i]->tops->arm(c->vgpus[i]->tpriv, sleeping);
}

/* Commands a vGPU's first slice runs, to learn its GPU time per command. */
static const uint64_t mdgpud_dispatch_probe_cmds = 16;

/* Pure busy-wait before a spin starts yielding the CPU to others (a
 * client on an oversubscribed machine may need this core to ring). */
static const uint64_t mdgpud_dispatch_yield_after_ns = 20000;

/*
 * The only vGPU's linger past linger_us, while its work should still keep
 * the GPU busy (mdgpud_dispatch_linger), sleeps in steps of this much
 * instead of spinning: work rung meanwhile is seen at most this late,
 * while the GPU still has at least this much queued, so the GPU does not
 * idle for it, and the dispatcher costs a wake-up per step, not a core.
 */
static const uint64_t mdgpud_dispatch_nap_ns = 100000;

static void mdgpud_dispatch_nap(void)
{
	struct timespec ts = { 0, (long)mdgpud_dispatch_nap_ns };

	nanosleep(&ts, NULL);
}

static void mdgpud_dispatch_spin_once(bool yield)
{
	if (yield)
		sched_yield();
	else
		mdgpu_cpu_relax();
}

/* Work rung and not yet taken (the doorbell as the tenant wrote it),
 * that the vGPU can run now: none while a command of it is pending or
 * its context starts. */
static bool mdgpud_dispatch_has_work(const struct mdgpud_vgpu *v)
{
	return !mdgpud_vgpu_held(v) && v->tops->sq_tail(v->tpriv) != v->head;
}

/* A latency-class vGPU other than self has work it can run. */
static bool mdgpud_dispatch_latency_waiting(struct mdgpud_core *c,
					    const struct mdgpud_vgpu *self)
{
	for (uint32_t i = 0; i < c->nr_vgpus; i++) {
		struct mdgpud_vgpu *o = c->vgpus[i];

		if (o != self && mdgpud_dispatch_is_latency(o) &&
		    mdgpud_dispatch_has_work(o))
			return true;
	}
	return false;
}

/* Whether v's slice is paced for a latency-class vGPU (above). */
static bool mdgpud_dispatch_paced(const struct mdgpud_core *c,
				  const struct mdgpud_vgpu *v, uint64_t now)
{
	return c->latency_queue_ns && c->latency_seen_ns &&
	       !mdgpud_dispatch_is_latency(v) &&
	       now - c->latency_seen_ns < MDGPUD_DISPATCH_LATENCY_ACTIVE_NS;
}

static bool mdgpud_dispatch_others_pending(struct mdgpud_core *c,
					   const struct mdgpud_vgpu *self)
{
	for (uint32_t i = 0; i < c->nr_vgpus; i++) {
		struct mdgpud_vgpu *o = c->vgpus[i];

		if (o != self && mdgpud_dispatch_has_work(o))
			return true;
	}
	return false;
}

/*
 * A streaming tenant owed GPU time (its weight's share not yet had: the
 * scheduler would still pick it over every other competing vGPU, this
 * slice's estimated GPU time charged) lingers up to this long past its
 * estimated work for its next command, although others wait: a framework
 * between two launches (Python) leaves its queue empty for tens of
 * microseconds at a time, and handing the GPU over at each such moment
 * gave a weight-3 PyTorch tenant 57-64% of the GPU next to a weight-1
 * one instead of 75% (bench/frameworks.sh).  Streaming: at least
 * mdgpud_dispatch_owed_min_work work commands in this slice, so that a
 * latency tenant (one kernel, one sync) never holds the GPU idle.
 */
static const uint64_t mdgpud_dispatch_owed_linger_ns = 500000;
static const uint64_t mdgpud_dispatch_owed_min_work = 4;

static bool mdgpud_dispatch_owed(struct mdgpud_core *c,
				 const struct mdgpud_vgpu *v, uint64_t t0,
				 uint64_t busy_until)
{
	if (!v->ns_per_work || busy_until <= t0 ||
	    (busy_until - t0) / v->ns_per_work < mdgpud_dispatch_owed_min_work)
		return false;
	return mdgpud_sched_owed(c->sched, &v->entity, busy_until - t0);
}

/*
 * The longest a slice of the daemon's only vGPU is extended
 * (mdgpud_dispatch_extend, and its linger while its work runs): the vGPU's statistics (GPU time, utilisation)
 * and the scheduler's charge are brought up to date when a slice ends, so
 * this bounds how stale they get; one drain per this much work costs a
 * lone tenant about 0.1% of its throughput.
 */
#define MDGPUD_DISPATCH_EXTEND_MAX_NS	100000000ULL	/* 100 ms */

static bool mdgpud_dispatch_ready(const struct mdgpud_sched_entity *e,
				  void *arg);

/* How often the only vGPU's linger asks whether its streams still have
 * work (an RPC to its worker of about 10 us). */
static const uint64_t mdgpud_dispatch_lone_check_ns = 1000000;

/* The only vGPU may keep its slice: the scheduler would extend it, it is
 * within MDGPUD_DISPATCH_EXTEND_MAX_NS of t0, and work it queued still
 * runs (mdgpud_dispatch_linger). */
static bool mdgpud_dispatch_lone_busy(struct mdgpud_core *c,
				      struct mdgpud_vgpu *v, uint64_t t0,
				      uint64_t now)
{
	uint32_t busy = 0;

	if (now - t0 >= MDGPUD_DISPATCH_EXTEND_MAX_NS || v->ctx_err ||
	    !mdgpud_sched_may_extend(c->sched, &v->entity, now,
				     mdgpud_dispatch_ready, NULL))
		return false;
	return !c->bops->busy(v->bctx, &busy) && busy;
}

/*
 * The running vGPU's queue is empty.  Ending the slice now would make the
 * backend wait for the GPU (slice_end), which turns a stream of
 * asynchronous launches into synchronous ones.  So keep the slice open for
 * up to linger_us (and never past the slice) in case the tenant rings
 * again.  While another vGPU has work, linger only while the GPU should
 * still be busy with this slice's commands (until busy_until: t0 plus
 * the work commands run so far at the vGPU's average GPU time per work
 * command; t0 for a vGPU not measured yet): waiting then costs no GPU
 * time, and a tenant that keeps a few kernels queued and rings again as
 * soon as one is taken gets its whole slice instead of a switch each time
 * its queue runs dry.
 * The daemon's only vGPU lingers until busy_until when that is later than
 * linger_us: until then the drain that ending the slice starts would wait
 * anyway, and work rung meanwhile is taken at once instead of after the
 * drain (a PyTorch training step, whose Python between launches often
 * leaves the queue empty for longer than linger_us while the GPU is busy,
 * ended a slice every ~0.5 ms without this).  Past linger_us that wait
 * naps (mdgpud_dispatch_nap_ns) instead of spinning.  A streaming tenant
 * owed GPU time (mdgpud_dispatch_owed) lingers up to
 * mdgpud_dispatch_owed_linger_ns past busy_until although others wait; a
 * paced slice ends as soon as a latency-class vGPU has work.
 * busy_until is an estimate, far off for a backend whose GPU time is not
 * wall time (sim), and for a kernel far longer than the vGPU's average.
 * So the only vGPU, past that estimate, asks the backend whether any of
 * its streams still has work (bops->busy, every
 * mdgpud_dispatch_lone_check_ns) and keeps its slice while one does, up
 * to MDGPUD_DISPATCH_EXTEND_MAX_NS from t0 and while the scheduler would
 * extend it: ending it would drain every stream, and the other streams'
 * commands rung meanwhile (another thread's, a copy beside a long kernel)
 * would wait for the longest kernel instead of running beside it.  The
 * slice bound holds either way.  Returns the tail to run up to.
 */
static uint32_t mdgpud_dispatch_linger(struct mdgpud_core *c,
				       struct mdgpud_vgpu *v, uint64_t t0,
				       uint64_t slice_ns, uint64_t busy_until,
				       uint64_t *now)
{
	uint64_t end = *now + c->linger_ns, spin_end = end;
	uint64_t yield_from = *now + mdgpud_dispatch_yield_after_ns;
	bool owed = mdgpud_dispatch_owed(c, v, t0, busy_until);
	bool lone = c->nr_vgpus == 1 && c->bops->busy;
	uint32_t t;

	if (c->nr_vgpus == 1 && busy_until > end)
		end = busy_until;
	if (owed && busy_until + mdgpud_dispatch_owed_linger_ns > end)
		end = busy_until + mdgpud_dispatch_owed_linger_ns;
	if (t0 + slice_ns < end)
		end = t0 + slice_ns;
	for (;;) {
		t = v->tops->sq_tail(v->tpriv);
		if (t != v->head || c->stop_req)
			break;
		if (*now >= end) {
			if (!lone || !mdgpud_dispatch_lone_busy(c, v, t0, *now))
				break;
			end = *now + mdgpud_dispatch_lone_check_ns;
		}
		if (*now >= busy_until && !owed &&
		    mdgpud_dispatch_others_pending(c, v))
			break;
		if (mdgpud_dispatch_paced(c, v, *now) &&
		    mdgpud_dispatch_latency_waiting(c, v))
			break;
		if (*now >= spin_end && end - *now > mdgpud_dispatch_nap_ns)
			mdgpud_dispatch_nap();
		else
			mdgpud_dispatch_spin_once(*now >= yield_from);
		*now = mdgpud_now_ns();
	}
	if (t - v->head > v->entries)
		return v->head;	/* bad doorbell: the scan reports it */
	mdgpud_dispatch_observe(v, t, *now);
	return t;
}

/* t0 + n * ns, saturating: when n work commands of ns each end on the
 * GPU. */
static uint64_t mdgpud_dispatch_busy_until(uint64_t t0, uint64_t n,
					   uint64_t ns)
{
	if (ns && n > (UINT64_MAX - t0) / ns)
		return UINT64_MAX;
	return t0 + n * ns;
}

/*
 * Before v's next work command in a paced slice: waits until the work v
 * queued in this slice (t0 plus `work` commands at its average GPU time
 * per command) is estimated to end within latency_queue_ns; true, at
 * once, when a latency-class vGPU has work, or when the slice reaches
 * slice_end waiting: v's slice ends before the command.
 */
static bool mdgpud_dispatch_pace(struct mdgpud_core *c,
				 const struct mdgpud_vgpu *v, uint64_t t0,
				 uint64_t work, uint64_t slice_end,
				 uint64_t *now)
{
	uint64_t until = mdgpud_dispatch_busy_until(t0, work, v->ns_per_work);
	uint64_t yield_from = *now + mdgpud_dispatch_yield_after_ns;

	for (;;) {
		if (mdgpud_dispatch_latency_waiting(c, v) ||
		    *now >= slice_end)
			return true;
		if (until <= *now + c->latency_queue_ns || c->stop_req)
			return false;
		mdgpud_dispatch_spin_once(*now >= yield_from);
		*now = mdgpud_now_ns();
	}
}

static struct mdgpud_vgpu *
mdgpud_dispatch_vgpu_of(const struct mdgpud_sched_entity *e)
{
	return (struct mdgpud_vgpu *)((char *)e -
				      offsetof(struct mdgpud_vgpu, entity));
}

/*
 * peek_next()'s ready: work rung, whether or not the last scan saw it
 * (the scheduler learns of it at the next scan, after this slice).
 */
static bool mdgpud_dispatch_ready(const struct mdgpud_sched_entity *e,
				  void *arg)
{
	const struct mdgpud_sgroup *g = mdgpud_spatial_group_of(e);

	(void)arg;
	if (!g)
		return mdgpud_dispatch_has_work(mdgpud_dispatch_vgpu_of(e));
	for (uint32_t i = 0; i < g->nr_members; i++)
		if (mdgpud_dispatch_has_work(g->members[i]))
			return true;
	return false;
}

/*
 * The vGPU most likely to own the next slice after `self`, as the
 * scheduler's policy sees it, of the others with work queued; NULL when
 * none would run.  A hint only: it picks whom the backend gets ready (see
 * expect_work), the scheduler's pick still decides.
 */
static struct mdgpud_vgpu *
mdgpud_dispatch_next_hint(struct mdgpud_core *c,
			  const struct mdgpud_vgpu *self, uint64_t now)
{
	struct mdgpud_sched_entity *e;

	const struct mdgpud_sched_entity *running = self->group ?
		&self->group->entity : &self->entity;
	struct mdgpud_sgroup *g;

	e = mdgpud_sched_peek_next(c->sched, now, running,
				   mdgpud_dispatch_ready, NULL);
	if (!e)
		return NULL;
	g = mdgpud_spatial_group_of(e);
	if (!g)
		return mdgpud_dispatch_vgpu_of(e);
	/* A group: its first member with work is the hint's. */
	for (uint32_t i = 0; i < g->nr_members; i++)
		if (mdgpud_dispatch_has_work(g->members[i]))
			return g->members[i];
	return NULL;
}

/*
 * Commands that put work on the GPU (kernels, copies, fills): the ones the
 * slice budget and the busy estimate count.  Set-up and bookkeeping
 * commands (allocations, module loads, events, queries, SYNC, which only
 * waits for earlier work) take no GPU time of their own; counted, a
 * tenant's set-up would make its first estimate of GPU time per command
 * far too small, its next slice's budget far too large, and that slice
 * (kept open by the linger while its kernels run) an overrun of several
 * slices, paid back by idling (seen on the H100: a 1:2:4 tenant ran 93
 * kernels in the first 250 ms and none in the next).
 */
static bool mdgpud_dispatch_is_work(uint16_t opcode)
{
	switch (opcode) {
	case MDGPU_OP_MEMSET:
	case MDGPU_OP_COPY:
	case MDGPU_OP_LAUNCH:
	case MDGPU_OP_BUILTIN:
		return true;
	default:
		return false;
	}
}


/*
 * A command of v failed in the backend with ret: whether that lost the
 * context (then the vGPU is failed until a reset), the error the command
 * reports, and the backend's code of it in *result2.
 */
static int mdgpud_dispatch_failed(struct mdgpud_vgpu *v, int ret,
				  uint64_t *result2)
{
	const struct mdgpud_backend_ops *b = v->core->bops;

	mdgpud_vgpu_check_ctx(v);
	/* The command that found the worker gone after a fault reports the
	 * fault, as the later ones will. */
	if (ret == -ENODEV && v->ctx_err == -EIO)
		ret = -EIO;
	*result2 = b->err_code ? b->err_code(v->bctx) : 0;
	return ret;
}

/*
 * Executes one validated command, or fails it with the lost context's
 * error.  A failed command carries the backend's own error code in
 * *result2 (the CUresult on cuda) when its ops failed in the device or
 * its driver, 0 when the daemon refused it; the same code for every
 * command of a context lost to a GPU fault, until a reset.
 */
static int mdgpud_dispatch_exec(struct mdgpud_vgpu *v, struct mdgpud_vcmd *vc,
				uint64_t *result, uint64_t *result2)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	int ret;

	if (!v->ctx_err) {
		if (b->err_clear)
			b->err_clear(v->bctx);
		ret = mdgpud_exec(v, vc, result, result2);
		return ret ? mdgpud_dispatch_failed(v, ret, result2) : 0;
	}
	*result2 = v->ctx_err == -EIO ? v->ctx_err_code : 0;
	return v->ctx_err;
}

/*
 * Writes the completion of command `head` (ring slot idx) and publishes
 * it.  Statistics first: a client that saw its completion sees the
 * command counted.  wait: its queue wait, for the histogram.
 */
static void mdgpud_dispatch_complete(struct mdgpud_core *c,
				     struct mdgpud_vgpu *v, uint32_t idx,
				     uint16_t opcode, uint16_t flags, int ret,
				     uint64_t result, uint64_t result2,
				     uint64_t wait)
{
	struct mdgpu_cpl cpl = {
		.seq = v->fence,
		.status = ret,
		.opcode = opcode,
		.result = ret ? 0 : result,
		/* A failure's result2 is the backend's code (or 0); a
		 * refused command's stays 0. */
		.result2 = result2,
	};

	pthread_mutex_lock(&c->lock);
	v->commands++;
	v->errors += ret != 0;
	mdgpud_stats_wait_add(v->hist, &v->wait_sum_ns, wait);
	pthread_mutex_unlock(&c->lock);

	v->tops->cq_write(v->tpriv, idx, &cpl);
	v->head++;
	v->fence++;
	v->tops->publish(v->tpriv, v->head, v->fence,
			 (flags & MDGPU_CMD_F_IRQ) ? MDGPU_IRQ_COMPLETION : 0,
			 mdgpud_memtab_used(v->mem));
	/* Debug only: tenants choose what fails, and how often. */
	if (ret)
		mdgpud_dbg("vgpu %u: command %" PRIu64 " opcode %u: %s"
			   " (backend code %" PRIu64 ")", v->id,
			   (uint64_t)cpl.seq, cpl.opcode, strerror(-ret),
			   (uint64_t)cpl.result2);
}

/*
 * After the completion of command `head - 1`: a HOST_FUNC that succeeded
 * holds the vGPU (mdgpud_vgpu_held) until its client says the host
 * function returned (the scan polls the transport's host_done); true if
 * it did, and the slice ends there.
 */
static bool mdgpud_dispatch_host_hold(struct mdgpud_vgpu *v, uint16_t opcode,
				      int ret)
{
	if (ret || opcode != MDGPU_OP_HOST_FUNC)
		return false;
	v->host_seq = v->head - 1;
	v->host_wait = true;
	return true;
}

/*
 * Starts validated command vc (ring slot idx, queue wait `wait`), which
 * pends (mdgpud_exec_pends): once under way the vGPU holds it as its
 * pending command and 0 is returned; a command that could not be started
 * returns its error (to be completed at once), with *result2.
 */
static int mdgpud_dispatch_start(struct mdgpud_vgpu *v,
				 const struct mdgpud_vcmd *vc, uint32_t idx,
				 uint64_t wait, uint64_t *result2)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	int ret;

	if (b->err_clear)
		b->err_clear(v->bctx);
	ret = mdgpud_exec_start(v, vc);
	if (ret)
		return mdgpud_dispatch_failed(v, ret, result2);
	v->pending.active = true;
	v->pending.idx = idx;
	v->pending.opcode = vc->opcode;
	v->pending.flags = vc->flags;
	v->pending.wait_ns = wait;
	v->core->nr_pending++;
	return 0;
}

/* v's pending command, if it is done: completed, and v may run again. */
static void mdgpud_dispatch_pending_poll(struct mdgpud_core *c,
					 struct mdgpud_vgpu *v)
{
	uint64_t result = 0, result2 = 0;
	int ret = mdgpud_exec_finish(v, &result);

	if (ret == -EINPROGRESS)
		return;
	v->pending.active = false;
	c->nr_pending--;
	if (ret)
		ret = mdgpud_dispatch_failed(v, ret, &result2);
	mdgpud_dispatch_complete(c, v, v->pending.idx, v->pending.opcode,
				 v->pending.flags, ret, result, result2,
				 v->pending.wait_ns);
}

static bool mdgpud_dispatch_ends_slice(const struct mdgpud_vcmd *vc)
{
	return (vc->opcode == MDGPU_OP_QUERY &&
		vc->query.what == MDGPU_QUERY_GPU_TIME) ||
	       vc->opcode == MDGPU_OP_HOST_FUNC;
}

/*
 * The slice of v reached its length (*slice_ns from t0) or its budget of
 * work commands.  Ending it makes the backend drain the GPU (slice_end)
 * and leaves the GPU idle until the next slice's first command reaches
 * it: worth it to hand the GPU to another vGPU, pure loss for a vGPU that
 * is the daemon's only one.  So the slice of the only vGPU goes on for
 * another slice length and budget, as long as the scheduler agrees
 * (mdgpud_sched_may_extend: a work-conserving policy, v uncapped) and
 * neither the slice's wall time nor the slice lengths already added reach
 * MDGPUD_DISPATCH_EXTEND_MAX_NS (the budget is GPU time at the vGPU's
 * average per command, which the sim backend's clock makes far longer than
 * wall time).
 *
 * Only the only vGPU: launches are queued far faster than they run, so an
 * extended slice queues GPU work for up to its whole length, and a vGPU
 * that rang meanwhile would wait for all of it to drain (measured on the
 * H100 with "idle neighbour" as the condition instead: a latency tenant
 * beside a saturating one waited up to 102 ms, against 10 ms with
 * ordinary slices).  A vGPU created during an extended slice waits for it
 * once, at most MDGPUD_DISPATCH_EXTEND_MAX_NS plus its drain.
 */
static bool mdgpud_dispatch_extend(struct mdgpud_core *c,
				   struct mdgpud_vgpu *v, uint64_t t0,
				   uint64_t now, uint64_t step_ns,
				   uint64_t step_budget, uint64_t *slice_ns,
				   uint64_t *budget, uint64_t *added_ns)
{
	if (c->nr_vgpus != 1 || now - t0 >= MDGPUD_DISPATCH_EXTEND_MAX_NS ||
	    *added_ns >= MDGPUD_DISPATCH_EXTEND_MAX_NS ||
	    !mdgpud_sched_may_extend(c->sched, &v->entity, now,
				     mdgpud_dispatch_ready, NULL))
		return false;
	*slice_ns = now - t0 + step_ns;
	*budget += step_budget;
	*added_ns += step_ns;
	return true;
}

static void mdgpud_dispatch_run_slice(struct mdgpud_core *c,
				      struct mdgpud_vgpu *v, uint64_t slice_ns)
{
	const struct mdgpud_backend_ops *b = c->bops;
	uint64_t t0 = mdgpud_now_ns(), now = t0, gpu_ns = 0;
	uint64_t busy_until, drain_ns;
	uint32_t tail = v->observed_tail, first = v->head;
	/*
	 * Asynchronous work (launches) takes little wall time to submit but
	 * a lot of GPU time later, so wall time alone would let a slice
	 * queue a whole ring of kernels.  The slice also ends once the work
	 * commands submitted would, at this vGPU's average GPU time per work
	 * command, fill it.  Overruns are still measured and charged.
	 */
	const uint64_t step_ns = slice_ns;
	const uint64_t step_budget = v->ns_per_work ?
				     slice_ns / v->ns_per_work :
				     mdgpud_dispatch_probe_cmds;
	uint64_t budget = step_budget, added_ns = 0;
	uint64_t work = 0;
	/* slice_begin is posted before the first command the backend runs
	 * in the slice: a slice of refused commands, or one that only
	 * starts a module load, has none (nor a slice_end). */
	bool begun = false;
	int ret;

	while (v->head != tail &&
	       ((now - t0 < slice_ns && (work == 0 || work < budget)) ||
		mdgpud_dispatch_extend(c, v, t0, now, step_ns, step_budget,
				       &slice_ns, &budget, &added_ns))) {
		uint32_t idx = v->head & (v->entries - 1);
		uint64_t result = 0, result2 = 0, wait;
		bool pends;

		wait = now > v->seen_ns[idx] ? now - v->seen_ns[idx] : 0;
		ret = mdgpud_validate(&v->vctx, v->tops->sq_entry(v->tpriv, idx),
				      &c->vcmd);
		/* QUERY GPU_TIME counts whole slices: after other commands
		 * of this slice it waits for the next one, so that the time
		 * of the work before it is charged first.  Validated again
		 * then.  So does HOST_FUNC: the slice's end drains every
		 * stream, and it completes once the earlier work is done. */
		if (!ret && v->head != first && mdgpud_dispatch_ends_slice(
						&c->vcmd))
			break;
		/*
		 * A module load or a host registration pends: it starts a
		 * slice of its own (after this one's work was drained and
		 * charged, since the worker runs requests in order), the
		 * slice ends with it, and the vGPU waits for it outside the
		 * scheduler's slices.
		 */
		pends = !ret && !v->ctx_err && mdgpud_exec_pends(v, &c->vcmd);
		if (pends && v->head != first)
			break;
		/* Paced for a latency-class vGPU: this work command waits
		 * for room, or the slice ends here if that vGPU has work. */
		if (!ret && work && mdgpud_dispatch_is_work(c->vcmd.opcode) &&
		    mdgpud_dispatch_paced(c, v, now) &&
		    mdgpud_dispatch_pace(c, v, t0, work, t0 + slice_ns, &now))
			break;
		if (pends) {
			ret = mdgpud_dispatch_start(v, &c->vcmd, idx, wait,
						    &result2);
			if (v->pending.active)
				break;
		} else if (!ret) {
			if (!begun && !v->ctx_err) {
				ret = b->slice_begin(v->bctx);
				if (ret)
					mdgpud_warn("vgpu %u: slice_begin: %s",
						    v->id, strerror(-ret));
				begun = true;
			}
			ret = mdgpud_dispatch_exec(v, &c->vcmd, &result,
						   &result2);
		}
		mdgpud_dispatch_complete(c, v, idx, c->vcmd.opcode,
					 c->vcmd.flags, ret, result, result2,
					 wait);
		if (mdgpud_dispatch_host_hold(v, c->vcmd.opcode, ret))
			break;
		work += !ret && mdgpud_dispatch_is_work(c->vcmd.opcode);
		now = mdgpud_now_ns();
		if (v->head == tail) {	/* pick up newly rung work */
			busy_until = mdgpud_dispatch_busy_until(t0, work,
								v->ns_per_work);
			tail = mdgpud_dispatch_linger(c, v, t0, slice_ns,
						      busy_until, &now);
		}
	}
	busy_until = mdgpud_dispatch_busy_until(t0, work, v->ns_per_work);
	drain_ns = busy_until > now ? busy_until - now : 0;
	if (b->expect_work) {
		struct mdgpud_vgpu *next;

		next = mdgpud_dispatch_next_hint(c, v, now);
		if (next)
			b->expect_work(next->bctx, drain_ns);
	}
	if (begun && !v->ctx_err) {
		ret = b->slice_end(v->bctx, drain_ns, &gpu_ns);
		if (ret) {
			mdgpud_warn("vgpu %u: slice_end: %s", v->id,
				    strerror(-ret));
			mdgpud_vgpu_check_ctx(v);
		}
	}
	/* A context lost in this slice held the GPU until it was found
	 * lost (the hang bound): charged as GPU time, paid back later. */
	if (v->ctx_err && !gpu_ns)
		gpu_ns = mdgpud_now_ns() - t0;
	mdgpud_sched_charge(c->sched, &v->entity, t0, gpu_ns);
	if (work) {
		uint64_t sample = gpu_ns / work;

		v->ns_per_work = v->ns_per_work ?
				 (3 * v->ns_per_work + sample) / 4 : sample;
		if (!v->ns_per_work)
			v->ns_per_work = 1;	/* known: (almost) free */
	}
	pthread_mutex_lock(&c->lock);
	v->gpu_ns += gpu_ns;
	mdgpud_usage_charge(&v->usage, mdgpud_now_ns(), gpu_ns);
	v->slices++;
	pthread_mutex_unlock(&c->lock);
}

/*
 * A spatial group's slice (Documentation/spatial.md): every member with
 * work runs in the same slice, side by side on the GPU.  The dispatcher
 * takes one command of each member in turn (validate, execute, complete,
 * as a time-sliced slice does), so that all members' workers have work
 * queued together; each member stops at the rules of a time-sliced slice
 * (its budget of work commands at its own GPU time per command, a QUERY
 * GPU_TIME or a pending command after other commands, one started)
 * and before a command that waits for its earlier work
 * (mdgpud_dispatch_waits_for_gpu).
 * The slice ends at its length, or once no member has had a command for
 * linger_us.  Then every member's drain is posted (slice_end_post) before
 * any is waited for (slice_end_wait), each bounded from its post: the
 * drains overlap, since the members run at once, and members whose work
 * does not drain cost the group's end one hang bound together, not one
 * each (a backend without the two halves: slice_end() of each in turn).
 * Each member's statistics get its own GPU time; the group is charged
 * the longest of them once: the members used the GPU side by side, not
 * one after the other.
 */
struct mdgpud_dispatch_member {
	struct mdgpud_vgpu *v;
	uint32_t tail, first;		/* tail seen, head at the start */
	uint64_t work, budget;		/* work commands run, allowed */
	uint64_t gpu_ns;
	uint64_t drain_ns;		/* its expected drain when posted */
	bool begun;			/* slice_begin posted */
	bool done;			/* takes no more commands */
	bool posted;			/* slice_end_post done: wait for it */
	bool ended;			/* its slice's end was tried */
};

/*
 * A command that completes only once the work queued before it is done
 * (SYNC, EVENT_SYNC, a copy to or from host memory without F_ASYNC).
 * Run in a group slice after other work of its member, it would hold the
 * dispatcher until that work drains, and the other members would get no
 * command meanwhile: the members' kernels would take turns instead of
 * running side by side.  So the member stops there; the group slice's
 * end drains all members at once, and the command runs first in the
 * member's next slice, with nothing left to wait for.
 */
static bool mdgpud_dispatch_waits_for_gpu(const struct mdgpud_vcmd *vc)
{
	switch (vc->opcode) {
	case MDGPU_OP_SYNC:
	case MDGPU_OP_EVENT_SYNC:
		return true;
	case MDGPU_OP_COPY:
		return vc->copy.dir != MDGPUD_COPY_D2D &&
		       !(vc->flags & MDGPU_CMD_F_ASYNC);
	default:
		return false;
	}
}

/* One command of member m, if it has one it may run now: true if it ran
 * (or started) one. */
static bool mdgpud_dispatch_member_step(struct mdgpud_core *c,
					struct mdgpud_dispatch_member *m,
					uint64_t now)
{
	const struct mdgpud_backend_ops *b = c->bops;
	struct mdgpud_vgpu *v = m->v;
	uint64_t result = 0, result2 = 0, wait;
	uint32_t idx, t;
	bool pends;
	int ret;

	if (m->done)
		return false;
	if (v->head == m->tail) {
		t = v->tops->sq_tail(v->tpriv);
		if (t - v->head > v->entries) {
			m->done = true;	/* bad doorbell: the scan reports it */
			return false;
		}
		mdgpud_dispatch_observe(v, t, now);
		m->tail = t;
		if (v->head == t)
			return false;
	}
	if (m->work && m->work >= m->budget) {
		m->done = true;
		return false;
	}
	idx = v->head & (v->entries - 1);
	wait = now > v->seen_ns[idx] ? now - v->seen_ns[idx] : 0;
	ret = mdgpud_validate(&v->vctx, v->tops->sq_entry(v->tpriv, idx),
			      &c->vcmd);
	pends = !ret && !v->ctx_err && mdgpud_exec_pends(v, &c->vcmd);
	if (v->head != m->first &&
	    ((!ret && (mdgpud_dispatch_ends_slice(&c->vcmd) ||
		       mdgpud_dispatch_waits_for_gpu(&c->vcmd))) || pends)) {
		m->done = true;
		return false;
	}
	if (pends) {
		ret = mdgpud_dispatch_start(v, &c->vcmd, idx, wait, &result2);
		if (v->pending.active) {
			m->done = true;
			return true;
		}
	} else if (!ret) {
		if (!m->begun && !v->ctx_err) {
			ret = b->slice_begin(v->bctx);
			if (ret)
				mdgpud_warn("vgpu %u: slice_begin: %s", v->id,
					    strerror(-ret));
			m->begun = true;
		}
		ret = mdgpud_dispatch_exec(v, &c->vcmd, &result, &result2);
	}
	mdgpud_dispatch_complete(c, v, idx, c->vcmd.opcode, c->vcmd.flags,
				 ret, result, result2, wait);
	if (mdgpud_dispatch_host_hold(v, c->vcmd.opcode, ret))
		m->done = true;
	m->work += !ret && mdgpud_dispatch_is_work(c->vcmd.opcode);
	return true;
}

/* A member's slice_end (or one of its halves) failed with ret. */
static void mdgpud_dispatch_member_end_failed(struct mdgpud_vgpu *v, int ret)
{
	mdgpud_warn("vgpu %u: slice_end: %s", v->id, strerror(-ret));
	mdgpud_vgpu_check_ctx(v);
}

/*
 * The first half of the end of member m's part of a group slice from
 * t0: its drain posted, where the backend posts without waiting
 * (slice_end_post), with the time its work should still take.
 */
static void mdgpud_dispatch_member_end_post(struct mdgpud_core *c,
					    struct mdgpud_dispatch_member *m,
					    uint64_t t0)
{
	const struct mdgpud_backend_ops *b = c->bops;
	struct mdgpud_vgpu *v = m->v;
	uint64_t now = mdgpud_now_ns(), busy_until;
	int ret;

	busy_until = mdgpud_dispatch_busy_until(t0, m->work, v->ns_per_work);
	m->drain_ns = busy_until > now ? busy_until - now : 0;
	if (!m->begun || v->ctx_err || !b->slice_end_post || !b->slice_end_wait)
		return;
	ret = b->slice_end_post(v->bctx, m->drain_ns);
	if (ret) {
		m->ended = true;
		mdgpud_dispatch_member_end_failed(v, ret);
		return;
	}
	m->posted = true;
}

/* The end of member m's part of a group slice from t0: its drain (waited
 * for, posted or not yet), its GPU time (returned) and its statistics. */
static uint64_t mdgpud_dispatch_member_end(struct mdgpud_core *c,
					   struct mdgpud_dispatch_member *m,
					   uint64_t t0)
{
	struct mdgpud_vgpu *v = m->v;
	int ret = 0;

	/* A posted end is waited for even if a neighbour's fault marked
	 * v lost meanwhile: the backend holds it until then. */
	if (m->posted) {
		ret = c->bops->slice_end_wait(v->bctx, &m->gpu_ns);
	} else if (m->begun && !m->ended && !v->ctx_err) {
		uint64_t now = mdgpud_now_ns(), busy_until =
			mdgpud_dispatch_busy_until(t0, m->work,
						   v->ns_per_work);

		ret = c->bops->slice_end(v->bctx, busy_until > now ?
					 busy_until - now : 0, &m->gpu_ns);
	}
	if (ret)
		mdgpud_dispatch_member_end_failed(v, ret);
	if (v->ctx_err && m->begun && !m->gpu_ns)
		m->gpu_ns = mdgpud_now_ns() - t0;
	if (m->work) {
		uint64_t sample = m->gpu_ns / m->work;

		v->ns_per_work = v->ns_per_work ?
				 (3 * v->ns_per_work + sample) / 4 : sample;
		if (!v->ns_per_work)
			v->ns_per_work = 1;
	}
	pthread_mutex_lock(&c->lock);
	v->gpu_ns += m->gpu_ns;
	mdgpud_usage_charge(&v->usage, mdgpud_now_ns(), m->gpu_ns);
	v->slices += m->begun;
	pthread_mutex_unlock(&c->lock);
	return m->gpu_ns;
}

static void mdgpud_dispatch_run_group(struct mdgpud_core *c,
				      struct mdgpud_sgroup *g,
				      uint64_t slice_ns)
{
	struct mdgpud_dispatch_member m[MDGPUD_SGROUP_MEMBERS_MAX];
	uint64_t t0 = mdgpud_now_ns(), now = t0, last = t0, charge = 0;
	uint32_t n = g->nr_members;

	for (uint32_t i = 0; i < n; i++) {
		struct mdgpud_vgpu *v = g->members[i];

		m[i] = (struct mdgpud_dispatch_member){
			.v = v, .tail = v->observed_tail, .first = v->head,
			.budget = v->ns_per_work ? slice_ns / v->ns_per_work :
				  mdgpud_dispatch_probe_cmds,
			.done = mdgpud_vgpu_held(v),
		};
	}
	while (now - t0 < slice_ns && !c->stop_req) {
		bool ran = false, open = false;

		for (uint32_t i = 0; i < n; i++) {
			ran |= mdgpud_dispatch_member_step(c, &m[i], now);
			open |= !m[i].done;
		}
		now = mdgpud_now_ns();
		if (ran) {
			last = now;
			continue;
		}
		if (!open || now - last >= c->linger_ns)
			break;
		mdgpud_dispatch_spin_once(now - last >=
					  mdgpud_dispatch_yield_after_ns);
	}
	/* Every drain posted first: their bounds run together. */
	for (uint32_t i = 0; i < n; i++)
		mdgpud_dispatch_member_end_post(c, &m[i], t0);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t ns = mdgpud_dispatch_member_end(c, &m[i], t0);

		if (ns > charge)
			charge = ns;
	}
	mdgpud_sched_charge(c->sched, &g->entity, t0, charge);
}

/*
 * How often an idle dispatcher looks at pending commands (module loads,
 * host registrations)
 * and starting contexts: a worker's answer (its READY) wakes no fd, so
 * the dispatcher sleeps at most this long while one is under way.  A JIT
 * or a start takes milliseconds to seconds; its end is seen at most this
 * much late.
 */
#define MDGPUD_DISPATCH_PENDING_POLL_MS	1

/*
 * Milliseconds from now to until_ns, rounded up, at most 1000 (also for
 * UINT64_MAX, nothing scheduled), and at most the pending poll while a
 * command is pending: a timeout for mdgpud_core_poll().
 */
static int mdgpud_dispatch_wait_ms(const struct mdgpud_core *c,
				   uint64_t until_ns, uint64_t now)
{
	int ms;

	if (until_ns <= now)
		return 0;
	if (until_ns - now >= 1000 * 1000000ULL)
		ms = 1000;
	else
		ms = (int)((until_ns - now + 999999) / 1000000);
	if ((c->nr_pending || c->nr_starting) &&
	    ms > MDGPUD_DISPATCH_PENDING_POLL_MS)
		ms = MDGPUD_DISPATCH_PENDING_POLL_MS;
	return ms;
}

int mdgpud_dispatch_run(struct mdgpud_core *c)
{
	uint64_t spin_ns = (uint64_t)mdgpud_config_spin_us(&c->cfg) * 1000;
	uint64_t busy_since = mdgpud_now_ns(), last_poll = busy_since;
	/* While busy, fd events (connects, hang-ups) are looked at every
	 * poll_ns or every 64 rounds, whichever comes first. */
	const uint64_t poll_ns = 1000000;
	unsigned int iter = 0;

	mdgpud_info("dispatcher running: backend %s (%s), transport %s",
		    c->bops->name, c->gpu.name, c->tops->name);
	while (!c->stop_req) {
		struct mdgpud_sched_decision d;
		uint64_t now;
		bool any;
		int ms;

		if (c->dump_req) {
			c->dump_req = 0;
			mdgpud_core_dump(c);
		}
		if (c->reload_req) {
			c->reload_req = 0;
			if (c->reload_fn)
				c->reload_fn(c, c->reload_data);
		}
		now = mdgpud_now_ns();
		if ((++iter & 63) == 0 || now - last_poll >= poll_ns) {
			mdgpud_core_poll(c, 0);
			last_poll = now = mdgpud_now_ns();
		}
		any = mdgpud_dispatch_scan(c, now);
		if (any) {
			mdgpud_sched_pick(c->sched, now, &d);
			if (d.entity) {
				struct mdgpud_sgroup *g =
					mdgpud_spatial_group_of(d.entity);

				if (g)
					mdgpud_dispatch_run_group(c, g,
								  d.slice_ns);
				else
					mdgpud_dispatch_run_slice(c,
						mdgpud_dispatch_vgpu_of(
							d.entity), d.slice_ns);
				busy_since = mdgpud_now_ns();
				continue;
			}
			/* Runnable but held back (cap, fixed share): sleep
			 * until the scheduler's next event or a doorbell. */
			mdgpud_dispatch_arm(c, true);
			atomic_thread_fence(memory_order_seq_cst);
			ms = mdgpud_dispatch_wait_ms(c, d.idle_until_ns, now);
			mdgpud_core_poll(c, ms);
			mdgpud_dispatch_arm(c, false);
			last_poll = mdgpud_now_ns();
			continue;
		}
		if (now - busy_since < spin_ns) {
			mdgpud_dispatch_spin_once(now - busy_since >=
					mdgpud_dispatch_yield_after_ns);
			continue;
		}
		/* Sleep: arm the doorbells, then re-check (no lost wake-up). */
		mdgpud_dispatch_arm(c, true);
		atomic_thread_fence(memory_order_seq_cst);
		if (!mdgpud_dispatch_scan(c, mdgpud_now_ns()) && !c->stop_req &&
		    !c->dump_req && !c->reload_req)
			mdgpud_core_poll(c, c->nr_pending || c->nr_starting ?
					 MDGPUD_DISPATCH_PENDING_POLL_MS : -1);
		mdgpud_dispatch_arm(c, false);
		busy_since = last_poll = mdgpud_now_ns();
	}
	mdgpud_info("dispatcher stopping");
	c->stop_req = 0;	/* consumed: run() may be called again */
	return 0;
}
