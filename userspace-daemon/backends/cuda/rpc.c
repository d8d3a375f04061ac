// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cuda backend's request ring, supervisor side (protocol: cuda_rpc.h).
 *
 * Every wait for a worker is bounded.  A synchronous request must be
 * answered within be->hang_timeout_ns after it is due (after the drain or
 * transfer time it was posted with); the ring must free up within the
 * same bound.  GPU kernels cannot be preempted from software, so a worker
 * that misses the bound (a kernel that never ends, a driver call that
 * does not return) is killed: the driver destroys its context when the
 * process is gone, and every later request of that context fails
 * -ENODEV.  The request that waited fails -ETIMEDOUT, which the core
 * reports as the vGPU's hang.
 *
 * A module load and a MAP of shared memory (a client's host registration,
 * a new context's aperture) are the requests posted without waiting for
 * their answer (mdgpud_cuda_pend): the driver's JIT of a PTX may take
 * seconds, its pinning of a mapping tens of ms per GiB, which the
 * dispatcher spends on the other vGPUs.  A load has its own bound,
 * be->load_timeout_ns, a MAP the hang bound; past it the worker is killed
 * the same way.
 */
#include "priv.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "common/cpu.h"
#include <mdgpud/log.h>

/*
 * The worker's last message (shm->msg, written by the worker, which may
 * be hostile): copied once into buf and terminated there, never read in
 * place.
 */
void mdgpud_cuda_worker_msg(const struct mdgpud_cuda_rpc_shm *shm, char *buf,
			    size_t len)
{
	size_t n = len - 1 < sizeof(shm->msg) ? len - 1 : sizeof(shm->msg);

	memcpy(buf, shm->msg, n);
	buf[n] = 0;
}

void mdgpud_cuda_mark_dead(struct mdgpud_bctx *ctx)
{
	/* A context a GPU fault lost: the worker named the CUresult. */
	if (!ctx->dead && !ctx->hung &&
	    atomic_load(&ctx->shm->state) == MDGPUD_CUDA_WORKER_LOST)
		ctx->lost_cu = *(volatile uint32_t *)&ctx->shm->lost_result;
	if (!ctx->dead) {
		char msg[MDGPUD_CUDA_RPC_MSG_MAX], why[160];

		mdgpud_cuda_worker_msg(ctx->shm, msg, sizeof(msg));
		/* A signal (SIGSYS: the seccomp allowlist) says more. */
		mdgpud_cuda_sandbox_death(ctx->pid, why, sizeof(why));
		mdgpud_warn("cuda: vgpu %u: worker %d lost%s%s%s%s", ctx->vgpu_id,
			    (int)ctx->pid, msg[0] ? ": " : "", msg,
			    why[0] ? "; " : "", why);
	}
	ctx->dead = 1;
}

/*
 * Request `target - 1` was not answered by its deadline: the context's
 * work does not drain.  The worker is killed (ctx_destroy reaps it) and
 * the context is dead from now on.
 */
static int mdgpud_cuda_hung(struct mdgpud_bctx *ctx)
{
	if (ctx->dead)
		return -ENODEV;
	mdgpud_warn("cuda: vgpu %u: worker %d did not answer within %llu ms "
		    "of the bound: killing it (work that does not drain)",
		    ctx->vgpu_id, (int)ctx->pid,
		    (unsigned long long)(ctx->be->hang_timeout_ns / 1000000));
	if (ctx->pid > 0)
		kill(ctx->pid, SIGKILL);
	ctx->hung = 1;
	ctx->dead = 1;
	return -ETIMEDOUT;
}

/* True once `done` has reached `target` (free-running counters). */
static int mdgpud_cuda_reached(struct mdgpud_bctx *ctx, uint32_t target)
{
	uint32_t done = atomic_load_explicit(&ctx->shm->done,
					     memory_order_acquire);

	return (int32_t)(done - target) >= 0;
}

/*
 * After a wait: 0 if request `target - 1` completed, -ENODEV if the worker
 * died without answering it (the context is marked dead), 1 to go on
 * waiting.
 */
static int mdgpud_cuda_answered(struct mdgpud_bctx *ctx, uint32_t target)
{
	if (mdgpud_cuda_reached(ctx, target))
		return 0;
	if (mdgpud_cuda_pid_exited(ctx->pidfd)) {
		/* It may have answered just before exiting. */
		if (mdgpud_cuda_reached(ctx, target))
			return 0;
		mdgpud_cuda_mark_dead(ctx);
		return -ENODEV;
	}
	return 1;
}

/*
 * Sleeps on the futex until request `target - 1` completed (0), the worker
 * died (-ENODEV) or until_ns passed (1).  The worker wakes a sleeping
 * supervisor when it publishes `done`; the sleep is cut into liveness
 * polls so that a worker that died without answering is noticed.
 */
static int mdgpud_cuda_sleep(struct mdgpud_bctx *ctx, uint32_t target,
			     uint64_t until_ns)
{
	struct mdgpud_cuda_rpc_shm *shm = ctx->shm;
	int ret;

	for (;;) {
		uint64_t now = mdgpud_cuda_now_ns(), left;
		struct timespec ts;
		uint32_t done;

		if (now >= until_ns)
			return 1;
		left = until_ns - now;
		if (left > MDGPUD_CUDA_LIVENESS_POLL_NS)
			left = MDGPUD_CUDA_LIVENESS_POLL_NS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left;
		atomic_store(&shm->sup_sleeping, 1);
		done = atomic_load(&shm->done);
		if ((int32_t)(done - target) < 0)
			mdgpud_cuda_futex_wait(&shm->done, done, &ts);
		atomic_store(&shm->sup_sleeping, 0);
		ret = mdgpud_cuda_answered(ctx, target);
		if (ret <= 0)
			return ret;
	}
}

/*
 * Waits until request `target - 1` completed; -ENODEV if the worker died,
 * -ETIMEDOUT past deadline_ns.  Spins for spin_ns first (an answer is due
 * within microseconds), then sleeps on the futex.
 */
int mdgpud_cuda_wait_until(struct mdgpud_bctx *ctx, uint32_t target,
			   uint64_t spin_ns, uint64_t deadline_ns)
{
	uint64_t start = 0;
	int ret;

	for (unsigned int n = 0; spin_ns; n++) {
		if (mdgpud_cuda_reached(ctx, target))
			return 0;
		mdgpu_cpu_relax();
		if ((n & 63) == 63) {
			uint64_t now = mdgpud_cuda_now_ns();

			if (!start)
				start = now;
			else if (now - start > spin_ns)
				break;
		}
	}
	ret = mdgpud_cuda_sleep(ctx, target, deadline_ns);
	return ret > 0 ? -ETIMEDOUT : ret;
}

/* from_ns + allow_ns + bound_ns, saturating. */
static uint64_t mdgpud_cuda_deadline_from(uint64_t from_ns, uint64_t allow_ns,
					  uint64_t bound_ns)
{
	if (allow_ns > UINT64_MAX - bound_ns ||
	    from_ns > UINT64_MAX - bound_ns - allow_ns)
		return UINT64_MAX;
	return from_ns + allow_ns + bound_ns;
}

/* now + allow_ns + bound_ns, saturating. */
static uint64_t mdgpud_cuda_deadline_after(uint64_t allow_ns,
					   uint64_t bound_ns)
{
	return mdgpud_cuda_deadline_from(mdgpud_cuda_now_ns(), allow_ns,
					 bound_ns);
}

/* now + allow_ns + the hang bound, saturating. */
static uint64_t mdgpud_cuda_deadline(struct mdgpud_bctx *ctx,
				     uint64_t allow_ns)
{
	return mdgpud_cuda_deadline_after(allow_ns, ctx->be->hang_timeout_ns);
}

/*
 * Waits for ring space: until request `target - 1` completed.  Half a ring
 * of requests is queued, so the supervisor naps in short sleeps and polls
 * instead of sleeping on the futex: the worker then never has to pay a
 * FUTEX_WAKE (several microseconds in a VM) in the middle of a stream of
 * asynchronous requests, and nothing spins on its cache lines.  Bounded
 * like an answer: a ring that does not drain is a hung worker.
 */
static int mdgpud_cuda_wait_space(struct mdgpud_bctx *ctx, uint32_t target)
{
	const struct timespec nap = { 0, MDGPUD_CUDA_RING_NAP_NS };
	uint64_t deadline = mdgpud_cuda_deadline(ctx, 0);

	for (;;) {
		int ret = mdgpud_cuda_answered(ctx, target);

		if (ret <= 0)
			return ret;
		if (mdgpud_cuda_now_ns() >= deadline)
			return mdgpud_cuda_hung(ctx);
		nanosleep(&nap, NULL);
	}
}

int mdgpud_cuda_wait_done(struct mdgpud_bctx *ctx, uint32_t target)
{
	if (mdgpud_cuda_reached(ctx, target))
		return 0;
	return mdgpud_cuda_wait_space(ctx, target);
}

/* A free slot for the next request, or NULL with *err set. */
struct mdgpud_cuda_rpc_slot *mdgpud_cuda_slot(struct mdgpud_bctx *ctx,
					      uint32_t op, int *err)
{
	struct mdgpud_cuda_rpc_slot *s;

	if (ctx->dead ||
	    atomic_load(&ctx->shm->state) != MDGPUD_CUDA_WORKER_READY) {
		if (!ctx->dead)
			mdgpud_cuda_mark_dead(ctx);
		*err = -ENODEV;
		return NULL;
	}
	/* A request behind a pending one (a module load, a MAP) would wait
	 * for the JIT or the pinning, with the wrong bound: the caller
	 * collects that first; so it does an answer posted and not yet
	 * waited for. */
	if (ctx->pend_slot || ctx->posted_slot) {
		*err = -EBUSY;
		return NULL;
	}
	/*
	 * Room in the ring.  `done` is re-read only when the cached value
	 * says the ring is full, and then the wait lasts until half the ring
	 * is free, so that producer and worker do not bounce the cache lines
	 * of every slot between them.
	 */
	if (ctx->tail - ctx->done_seen >= MDGPUD_CUDA_RPC_SLOTS) {
		ctx->done_seen = atomic_load_explicit(&ctx->shm->done,
						      memory_order_acquire);
		if (ctx->tail - ctx->done_seen >= MDGPUD_CUDA_RPC_SLOTS) {
			*err = mdgpud_cuda_wait_space(ctx, ctx->tail -
						      MDGPUD_CUDA_RPC_SLOTS / 2);
			if (*err)
				return NULL;
			ctx->done_seen = atomic_load(&ctx->shm->done);
		}
	}
	s = &ctx->shm->slot[ctx->tail % MDGPUD_CUDA_RPC_SLOTS];
	s->op = op;
	s->inline_len = 0;
	memset(s->arg, 0, sizeof(s->arg));
	return s;
}

void mdgpud_cuda_post(struct mdgpud_bctx *ctx)
{
	struct mdgpud_cuda_rpc_shm *shm = ctx->shm;

	ctx->tail++;
	atomic_store_explicit(&shm->req_tail, ctx->tail, memory_order_seq_cst);
	if (atomic_load(&shm->worker_sleeping))
		mdgpud_cuda_futex_wake(&shm->req_tail);
}

/*
 * The answer in `s` of the last request posted, which the worker has
 * given: its status, read once and kept to a negative errno or 0 (the
 * worker may be hostile), and its CUresult if it failed.
 */
static int mdgpud_cuda_collect(struct mdgpud_bctx *ctx,
			       struct mdgpud_cuda_rpc_slot *s)
{
	int ret = *(volatile int32_t *)&s->status;

	ctx->done_seen = ctx->tail;
	if (ret > 0 || ret < -4095)
		ret = -EIO;
	if (ret)
		ctx->last_cu = s->cu_result;
	if (ret && atomic_load(&ctx->shm->state) == MDGPUD_CUDA_WORKER_LOST) {
		/* The context faulted: this answer is its last. */
		mdgpud_cuda_mark_dead(ctx);
	}
	return ret;
}

/*
 * Waits for the answer to the request last posted, from `s`: spinning
 * for spin_ns, then asleep until deadline_ns, then the worker is hung.
 */
static int mdgpud_cuda_answer_by(struct mdgpud_bctx *ctx,
				 struct mdgpud_cuda_rpc_slot *s,
				 uint64_t spin_ns, uint64_t deadline_ns)
{
	int ret = mdgpud_cuda_wait_until(ctx, ctx->tail, spin_ns, deadline_ns);

	if (ret == -ETIMEDOUT)
		return mdgpud_cuda_hung(ctx);
	if (ret)
		return ret;
	return mdgpud_cuda_collect(ctx, s);
}

/* The same, until allow_ns from now (the time the request may
 * legitimately take) plus the hang bound. */
static int mdgpud_cuda_answer(struct mdgpud_bctx *ctx,
			      struct mdgpud_cuda_rpc_slot *s, uint64_t spin_ns,
			      uint64_t allow_ns)
{
	return mdgpud_cuda_answer_by(ctx, s, spin_ns,
				     mdgpud_cuda_deadline(ctx, allow_ns));
}

/* Posts the request in `s` and waits for its answer, due at once. */
int mdgpud_cuda_call(struct mdgpud_bctx *ctx, struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cuda_post(ctx);
	return mdgpud_cuda_answer(ctx, s, ctx->be->sup_spin_ns, 0);
}

/*
 * Posts a copy of `len` bytes and waits for its answer: spinning for its
 * expected transfer time (mdgpud_cuda_copy_spin, cuda_rpc.h), allowed
 * MDGPUD_CUDA_COPY_ALLOW_NS_PER_BYTE before the hang bound starts.
 */
int mdgpud_cuda_call_copy(struct mdgpud_bctx *ctx,
			  struct mdgpud_cuda_rpc_slot *s, uint64_t len)
{
	uint64_t allow = len > UINT64_MAX / MDGPUD_CUDA_COPY_ALLOW_NS_PER_BYTE ?
			 UINT64_MAX : len * MDGPUD_CUDA_COPY_ALLOW_NS_PER_BYTE;

	mdgpud_cuda_post(ctx);
	return mdgpud_cuda_answer(ctx, s,
				  mdgpud_cuda_copy_spin(len,
							ctx->be->sup_spin_ns),
				  allow);
}

/*
 * Posts the request in `s`, whose answer the caller expects in about
 * expect_ns (the GPU work queued before it), and waits for it: asleep on
 * the futex until MDGPUD_CUDA_EXPECT_MARGIN_NS before the expected time
 * (an early answer still wakes us), then spinning across it, so that the
 * usual answer does not pay a futex wake-up (45-70 us on the GPU machine)
 * and a long wait does not burn a CPU.  The hang bound starts after the
 * expected time.
 */
/*
 * The wait of mdgpud_cuda_call_expect() for the answer to the request
 * last posted, from `s`, at since_ns, expected expect_ns (clamped) later:
 * asleep until the margin before the expected time, then spinning
 * across it; the hang bound runs from the expected time (2 margins
 * after the sleep's end), so that a wait started late, after other
 * contexts' (a spatial group's end), ends when it would have ended
 * started at once.
 */
static int mdgpud_cuda_wait_expect(struct mdgpud_bctx *ctx,
				   struct mdgpud_cuda_rpc_slot *s,
				   uint64_t since_ns, uint64_t expect_ns)
{
	uint64_t spin_ns = ctx->be->sup_spin_ns, due_ns = since_ns;

	if (expect_ns > MDGPUD_CUDA_EXPECT_MAX_NS)
		expect_ns = MDGPUD_CUDA_EXPECT_MAX_NS;
	if (expect_ns > MDGPUD_CUDA_EXPECT_MARGIN_NS) {
		int ret;

		due_ns = since_ns + expect_ns - MDGPUD_CUDA_EXPECT_MARGIN_NS;
		ret = mdgpud_cuda_sleep(ctx, ctx->tail, due_ns);
		if (ret < 0)
			return ret;
		spin_ns += 2 * MDGPUD_CUDA_EXPECT_MARGIN_NS;
	}
	return mdgpud_cuda_answer_by(ctx, s, spin_ns,
				     mdgpud_cuda_deadline_from(due_ns,
					2 * MDGPUD_CUDA_EXPECT_MARGIN_NS,
					ctx->be->hang_timeout_ns));
}

int mdgpud_cuda_call_expect(struct mdgpud_bctx *ctx,
			    struct mdgpud_cuda_rpc_slot *s, uint64_t expect_ns)
{
	mdgpud_cuda_post(ctx);
	return mdgpud_cuda_wait_expect(ctx, s, mdgpud_cuda_now_ns(),
				       expect_ns);
}

void mdgpud_cuda_post_expect(struct mdgpud_bctx *ctx,
			     struct mdgpud_cuda_rpc_slot *s, uint64_t expect_ns)
{
	mdgpud_cuda_post(ctx);
	ctx->posted_slot = s;
	ctx->posted_ns = mdgpud_cuda_now_ns();
	ctx->posted_expect_ns = expect_ns;
}

int mdgpud_cuda_wait_posted(struct mdgpud_bctx *ctx,
			    struct mdgpud_cuda_rpc_slot **s)
{
	*s = ctx->posted_slot;
	if (!*s)
		return -EINVAL;
	ctx->posted_slot = NULL;
	return mdgpud_cuda_wait_expect(ctx, *s, ctx->posted_ns,
				       ctx->posted_expect_ns);
}

/*
 * Posts the request in `s` and returns without its answer: `what` (for
 * the log) may take allow_ns (an image's copy from device memory) plus
 * bound_ns, the bound named by the configuration key `knob`;
 * mdgpud_cuda_pend_poll() or _wait() collects it, and until then no
 * other request is posted (mdgpud_cuda_slot).
 */
void mdgpud_cuda_pend_as(struct mdgpud_bctx *ctx,
			 struct mdgpud_cuda_rpc_slot *s, uint64_t allow_ns,
			 uint64_t bound_ns, const char *what, const char *knob)
{
	mdgpud_cuda_post(ctx);
	ctx->pend_slot = s;
	ctx->pend_target = ctx->tail;
	ctx->pend_deadline_ns = mdgpud_cuda_deadline_after(allow_ns, bound_ns);
	ctx->pend_bound_ns = bound_ns;
	ctx->pend_what = what;
	ctx->pend_knob = knob;
}

/* A module load: the load bound (module_load_timeout_ms). */
void mdgpud_cuda_pend(struct mdgpud_bctx *ctx, struct mdgpud_cuda_rpc_slot *s,
		      uint64_t allow_ns)
{
	mdgpud_cuda_pend_as(ctx, s, allow_ns, ctx->be->load_timeout_ns,
			    "module load", "module_load_timeout_ms");
}

/* The pending request ran past its bound: the worker is killed, the
 * context lost as after a hang (ctx_status -ETIMEDOUT). */
static int mdgpud_cuda_pend_expired(struct mdgpud_bctx *ctx)
{
	mdgpud_warn("cuda: vgpu %u: %s not done within %llu ms (%s): "
		    "killing worker %d", ctx->vgpu_id, ctx->pend_what,
		    (unsigned long long)(ctx->pend_bound_ns / 1000000),
		    ctx->pend_knob, (int)ctx->pid);
	if (ctx->pid > 0)
		kill(ctx->pid, SIGKILL);
	ctx->hung = 1;
	ctx->dead = 1;
	return -ETIMEDOUT;
}

/* After the wait of a pending request ended with ret (0: answered). */
static int mdgpud_cuda_pend_end(struct mdgpud_bctx *ctx, int ret,
				struct mdgpud_cuda_rpc_slot **s)
{
	if (!ret) {
		ret = mdgpud_cuda_collect(ctx, ctx->pend_slot);
		/* Its caller's "still running": not an answer. */
		if (ret == -EINPROGRESS)
			ret = -EIO;
	} else if (ret == -ETIMEDOUT) {
		ret = mdgpud_cuda_pend_expired(ctx);
	}
	*s = ctx->pend_slot;
	ctx->pend_slot = NULL;
	return ret;
}

/*
 * The pending request's answer, without waiting: -EINPROGRESS while the
 * worker runs it within its bound, else its status once (then nothing
 * is pending), *s its slot; -ETIMEDOUT past its bound, -ENODEV if the
 * worker died.  Only while a request is pending (ctx->pend_slot).
 */
int mdgpud_cuda_pend_poll(struct mdgpud_bctx *ctx,
			  struct mdgpud_cuda_rpc_slot **s)
{
	int ret;

	ret = mdgpud_cuda_answered(ctx, ctx->pend_target);
	if (ret > 0) {
		if (mdgpud_cuda_now_ns() < ctx->pend_deadline_ns)
			return -EINPROGRESS;
		ret = -ETIMEDOUT;
	}
	return mdgpud_cuda_pend_end(ctx, ret, s);
}

/* The same, waiting for it (spinning, then asleep) up to its bound. */
int mdgpud_cuda_pend_wait(struct mdgpud_bctx *ctx,
			  struct mdgpud_cuda_rpc_slot **s)
{
	int ret;

	ret = mdgpud_cuda_wait_until(ctx, ctx->pend_target,
				     ctx->be->sup_spin_ns,
				     ctx->pend_deadline_ns);
	return mdgpud_cuda_pend_end(ctx, ret, s);
}

/*
 * Gives the pending request up (its vGPU is reset or destroyed): the
 * worker cannot be interrupted in the driver, and waiting would hold the
 * dispatcher, so it is killed and the context lost (-ENODEV).
 */
void mdgpud_cuda_pend_abort(struct mdgpud_bctx *ctx)
{
	if (!ctx->pend_slot)
		return;
	ctx->pend_slot = NULL;
	ctx->pend_reg.active = false;
	if (ctx->dead)
		return;
	mdgpud_info("cuda: vgpu %u: %s given up (vGPU reset or destroyed): "
		    "killing worker %d", ctx->vgpu_id, ctx->pend_what,
		    (int)ctx->pid);
	if (ctx->pid > 0)
		kill(ctx->pid, SIGKILL);
	ctx->dead = 1;
}
