// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The request loop of a serving worker: waiting for the ring (spin, the
 * supervisor's hint, futex sleep), running each request, latching the
 * first error of asynchronous ones on their stream (stream.c), answering
 * synchronous ones with their errno and CUresult, publishing `done` and
 * waking a sleeping supervisor.  The protocol is cuda_rpc.h's.
 */
#include "worker.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define MDGPUD_WORKER_IDLE_CHECK_MS	200
/* How long a worker outlives its supervisor at most (the watch below). */
#define MDGPUD_WORKER_ORPHAN_GRACE_MS	2000
#define MDGPUD_WORKER_EXIT_ORPHANED	67

/*
 * The worker's own bound on outliving its supervisor.  The request loop
 * notices a vanished supervisor whenever it sleeps, then drains, scrubs,
 * frees and exits (mdgpud_worker_serve_wait, mdgpud_worker_context_
 * teardown); a worker blocked in the driver never gets there: a kernel
 * that never ends holds the teardown's synchronize, or a synchronize
 * whose bound was the supervisor's.  This thread looks every
 * MDGPUD_WORKER_IDLE_CHECK_MS and, once the supervisor has been gone for
 * MDGPUD_WORKER_ORPHAN_GRACE_MS, ends the process: the driver destroys
 * its context, the kernel with it, and frees its memory, as for any
 * killed worker (Documentation/cuda-backend.md, "Worker lifecycle":
 * what the driver leaves in such memory).  Reparenting is final, so the
 * count never resets.
 */
static void *mdgpud_worker_orphan_watch(void *arg)
{
	const struct mdgpud_worker *w = arg;
	const struct timespec tick = {
		0, MDGPUD_WORKER_IDLE_CHECK_MS * 1000000L };
	unsigned int gone_ms = 0;

	for (;;) {
		nanosleep(&tick, NULL);
		if (getppid() == w->sup_pid)
			continue;
		gone_ms += MDGPUD_WORKER_IDLE_CHECK_MS;
		if (gone_ms >= MDGPUD_WORKER_ORPHAN_GRACE_MS)
			_exit(MDGPUD_WORKER_EXIT_ORPHANED);
	}
	return NULL;
}

/*
 * Spins until req_tail != head (true, *tail set) or until the later of
 * `until` and the supervisor's poll grant (poll_until_ns, re-read as it
 * goes: a grant may be extended or taken back).  While only the grant
 * keeps it spinning, it yields the CPU between checks, so that on a busy
 * machine a polling worker takes no CPU another thread could use.
 */
static bool mdgpud_worker_serve_spin(struct mdgpud_cuda_rpc_shm *shm,
				     uint32_t head, uint64_t until,
				     uint32_t *tail)
{
	bool yield = false;

	for (unsigned int n = 0;; n++) {
		*tail = atomic_load_explicit(&shm->req_tail,
					     memory_order_acquire);
		if (*tail != head)
			return true;
		if (yield)
			sched_yield();
		else
			mdgpu_cpu_relax();
		if (yield || (n & 63) == 63) {
			uint64_t now = mdgpud_cuda_now_ns();

			if (now < until)
				continue;
			if (now >= atomic_load_explicit(&shm->poll_until_ns,
							memory_order_relaxed))
				return false;
			yield = true;
		}
	}
}

/*
 * Waits for req_tail != head and returns the new tail in *tail, or -1 when
 * the supervisor is gone.  Spins for worker_spin_ns, then sleeps on the
 * futex.  The supervisor's hint spin_until_ns (work expected: the next
 * slice is ours, at about the hint minus one margin) makes it sleep until
 * two margins before the hint and spin from there until the hint; a hint
 * that arrives while it sleeps wakes it (a request posted earlier wakes
 * it as any request does).  While the supervisor's poll grant
 * (poll_until_ns) lasts it never sleeps (mdgpud_worker_serve_spin).
 */
static int mdgpud_worker_serve_wait(struct mdgpud_worker *w, uint32_t head,
				    uint32_t *tail)
{
	struct mdgpud_cuda_rpc_shm *shm = w->shm;
	uint64_t until = mdgpud_cuda_now_ns() + shm->worker_spin_ns;
	uint64_t slept_to = 0;	/* the hint whose window it sleeps for */

	for (;;) {
		uint64_t hint = atomic_load_explicit(&shm->spin_until_ns,
						     memory_order_relaxed);
		uint64_t now = mdgpud_cuda_now_ns(), wake = 0;
		struct timespec nap = {
			0, MDGPUD_WORKER_IDLE_CHECK_MS * 1000000L };

		if (slept_to && hint == slept_to) {
			/* The window of the hint we slept for is open. */
			atomic_fetch_add(&shm->stat_hint_spins, 1);
			slept_to = 0;
		}

		if (hint > until) {
			const uint64_t ahead = 2 * MDGPUD_CUDA_EXPECT_MARGIN_NS;
			uint64_t from = hint > ahead ? hint - ahead : 0;

			if (from > now && from > until &&
			    atomic_load(&shm->poll_until_ns) <= now) {
				/* Sleep until the spin window opens. */
				wake = from;
				slept_to = hint;
			}
			until = hint;
		}
		if (!wake) {
			if (mdgpud_worker_serve_spin(shm, head, until, tail))
				return 0;
		} else if (wake - now < (uint64_t)nap.tv_nsec) {
			nap.tv_nsec = (long)(wake - now);
		}
		atomic_store(&shm->worker_sleeping, 1);
		if (atomic_load(&shm->req_tail) == head &&
		    atomic_load(&shm->spin_until_ns) <= hint &&
		    atomic_load(&shm->poll_until_ns) <= mdgpud_cuda_now_ns())
			mdgpud_cuda_futex_wait(&shm->req_tail, head, &nap);
		atomic_store(&shm->worker_sleeping, 0);
		*tail = atomic_load_explicit(&shm->req_tail,
					     memory_order_acquire);
		if (*tail != head)
			return 0;
		if (getppid() != w->sup_pid)
			return -1;
	}
}

/*
 * The supervisor wrote the requests after head from another CPU: start
 * pulling the cache lines of the next two now, so that the misses overlap
 * with this request's driver call.
 */
static void mdgpud_worker_serve_prefetch(struct mdgpud_cuda_rpc_shm *shm,
					 uint32_t head, uint32_t tail)
{
	for (uint32_t k = 1; k <= 2 && head + k != tail; k++) {
		const struct mdgpud_cuda_rpc_slot *nx =
			&shm->slot[(head + k) % MDGPUD_CUDA_RPC_SLOTS];

		__builtin_prefetch(nx, 0, 3);
		__builtin_prefetch(nx->inline_data, 0, 3);
	}
}

/* Publishes done, then wakes the supervisor if it sleeps (Dekker-style). */
static void mdgpud_worker_serve_publish(struct mdgpud_cuda_rpc_shm *shm,
					uint32_t head)
{
	atomic_store_explicit(&shm->done, head, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&shm->sup_sleeping, memory_order_relaxed))
		mdgpud_cuda_futex_wake(&shm->done);
}

/*
 * Runs request s, timing it when statistics are on.  *t_prev is the start
 * of the previous request while busy, 0 after a wait.
 */
static int mdgpud_worker_serve_one(struct mdgpud_worker *w, uint32_t op,
				   struct mdgpud_cuda_rpc_slot *s,
				   uint64_t *t_prev)
{
	struct mdgpud_cuda_rpc_shm *shm = w->shm;
	uint64_t t_start = 0;
	int ret;

	if (shm->stats_enabled) {
		uint64_t now = mdgpud_cuda_now_ns();

		if (*t_prev)
			shm->stat_busy_ns += now - *t_prev;
		t_start = now;
	}
	ret = mdgpud_worker_requests_exec(w, op, s);
	if (shm->stats_enabled) {
		shm->stat_exec_ns += mdgpud_cuda_now_ns() - t_start;
		shm->stat_requests++;
		*t_prev = t_start;
	}
	return ret;
}

/*
 * The request loop.  Latency and throughput: the tail is re-read only once
 * the requests known to be posted are done; `done` is published, followed
 * by a full fence and the check for a sleeping supervisor (Dekker-style,
 * needed before FUTEX_WAKE), only after a synchronous request, when the
 * ring is drained, or every 16 requests, so that a stream of asynchronous
 * launches does not bounce the `done` cache line to the supervisor on every
 * request.  The supervisor waits for synchronous requests (always
 * published) or for ring space (published at least every 16 requests).
 *
 * Returns the worker's exit status: 0 after SHUTDOWN or the supervisor's
 * death, 2 when the context is lost.
 */
int mdgpud_worker_serve(struct mdgpud_worker *w)
{
	struct mdgpud_cuda_rpc_shm *shm = w->shm;
	uint32_t head = atomic_load(&shm->done);
	uint32_t tail = head;
	uint64_t t_prev = 0;
	pthread_attr_t attr;
	pthread_t watch;

	/* Without the watch the worker still serves: the loop's own check
	 * covers every supervisor death but one under a blocked driver call. */
	if (!pthread_attr_init(&attr)) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		if (pthread_create(&watch, &attr, mdgpud_worker_orphan_watch, w))
			fprintf(stderr, "mdgpud-worker: vgpu %u: no orphan "
				"watch thread: blocked in the driver, it would "
				"outlive a killed supervisor\n", w->vgpu_id);
		pthread_attr_destroy(&attr);
	}

	for (;;) {
		struct mdgpud_cuda_rpc_slot *s;
		bool shutdown, async, lost;
		uint32_t op;
		int ret;

		if (head == tail) {
			/* Waiting is not busy time. */
			t_prev = 0;
			if (mdgpud_worker_serve_wait(w, head, &tail)) {
				mdgpud_worker_context_teardown(w);
				return 0;
			}
		}
		s = &shm->slot[head % MDGPUD_CUDA_RPC_SLOTS];
		mdgpud_worker_serve_prefetch(shm, head, tail);
		op = s->op;
		shutdown = op == MDGPUD_CUDA_RPC_SHUTDOWN;
		async = mdgpud_worker_requests_async(op, s);
		w->req_stream = NULL;
		w->last_cu = 0;
		ret = mdgpud_worker_serve_one(w, op, s, &t_prev);
		if (async) {
			mdgpud_worker_stream_latch(w, ret);
		} else {
			s->cu_result = ret ? w->last_cu : 0;
			s->status = ret;
		}
		lost = atomic_load(&shm->state) == MDGPUD_CUDA_WORKER_LOST;
		head++;
		if (!async || lost || head == tail || (head & 15) == 0)
			mdgpud_worker_serve_publish(shm, head);
		if (shutdown)
			return 0;
		if (lost) {
			/* The context is unusable: nothing can be scrubbed or
			 * freed through it; process exit releases it. */
			return 2;
		}
	}
}
