// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cuda backend's stream and event-query operations (ABI 1.2) on top
 * of the request ring, and the backend error code it reports for -EIO.
 *
 * Streams are the worker's (backends/cuda/worker/stream.c): the values
 * handed to the core are the worker's handles, checked by the worker on
 * every request.  Every wait here is bounded like SYNC: an EVENT_SYNC on
 * a kernel that never ends finds the worker hung (rpc.c).
 */
#include "priv.h"

#include <errno.h>

#include <uapi/mdgpu.h>

/*
 * The probe worker's priority range, kept if it is one: least >= greatest
 * and both within what CUDA has ever reported (0 down to -16); else the
 * single priority 0.
 */
void mdgpud_cuda_prio_range(struct mdgpud_backend *be, int32_t least,
			    int32_t greatest)
{
	if (least < greatest || least > 0 || greatest < -16)
		least = greatest = 0;
	be->prio_least = least;
	be->prio_greatest = greatest;
}

void mdgpud_cuda_stream_priorities(struct mdgpud_backend *be,
				   int32_t *least, int32_t *greatest)
{
	*least = be->prio_least;
	*greatest = be->prio_greatest;
}

/* A request answered at once (its two arguments, result 0 in *r0). */
static int mdgpud_cuda_streams_call(struct mdgpud_bctx *ctx, uint32_t op,
				    uint64_t a0, uint64_t a1, uint64_t *r0)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	s = mdgpud_cuda_slot(ctx, op, &ret);
	if (!s)
		return ret;
	s->arg[0] = a0;
	s->arg[1] = a1;
	/* The answer may wait for GPU work: the bound of an expected one. */
	ret = mdgpud_cuda_call_expect(ctx, s, 0);
	if (!ret && r0)
		*r0 = s->result[0];
	return ret;
}

int mdgpud_cuda_stream_create(struct mdgpud_bctx *ctx, uint32_t flags,
			      int32_t priority, uint64_t *stream)
{
	if (flags & ~MDGPU_STREAM_F_NON_BLOCKING)
		return -EINVAL;
	return mdgpud_cuda_streams_call(ctx, MDGPUD_CUDA_RPC_STREAM_CREATE,
					flags, (uint32_t)priority, stream);
}

int mdgpud_cuda_stream_destroy(struct mdgpud_bctx *ctx, uint64_t stream)
{
	return mdgpud_cuda_streams_call(ctx, MDGPUD_CUDA_RPC_STREAM_DESTROY,
					stream, 0, NULL);
}

/* Posted: the worker enqueues the wait and goes on. */
int mdgpud_cuda_stream_wait_event(struct mdgpud_bctx *ctx, uint64_t stream,
				  uint64_t event)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_STREAM_WAIT_EVENT, &ret);
	if (!s)
		return ret;
	s->arg[0] = stream;
	s->arg[1] = event;
	mdgpud_cuda_post(ctx);
	return 0;
}

/* ABI 1.10, posted like a wait for an event: a0 stream, a1 op, a2 addr,
 * a3 value, a4 flags.  A wait never met keeps the stream from draining:
 * the slice's drain then finds the worker hung (rpc.c). */
int mdgpud_cuda_stream_memop(struct mdgpud_bctx *ctx, uint64_t stream,
			     uint32_t op, uint64_t addr, uint64_t value,
			     uint32_t flags)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_STREAM_MEMOP, &ret);
	if (!s)
		return ret;
	s->arg[0] = stream;
	s->arg[1] = op;
	s->arg[2] = addr;
	s->arg[3] = value;
	s->arg[4] = flags;
	mdgpud_cuda_post(ctx);
	return 0;
}

static int mdgpud_cuda_streams_query(struct mdgpud_bctx *ctx, uint32_t op,
				     uint64_t what, uint32_t *pending)
{
	uint64_t r = 0;
	int ret = mdgpud_cuda_streams_call(ctx, op, what, 0, &r);

	if (!ret)
		*pending = r != 0;
	return ret;
}

int mdgpud_cuda_stream_query(struct mdgpud_bctx *ctx, uint64_t stream,
			     uint32_t *pending)
{
	return mdgpud_cuda_streams_query(ctx, MDGPUD_CUDA_RPC_STREAM_QUERY,
					 stream, pending);
}

int mdgpud_cuda_event_query(struct mdgpud_bctx *ctx, uint64_t event,
			    uint32_t *pending)
{
	return mdgpud_cuda_streams_query(ctx, MDGPUD_CUDA_RPC_EVENT_QUERY,
					 event, pending);
}

int mdgpud_cuda_event_sync(struct mdgpud_bctx *ctx, uint64_t event)
{
	return mdgpud_cuda_streams_call(ctx, MDGPUD_CUDA_RPC_EVENT_SYNC, event,
					0, NULL);
}

int mdgpud_cuda_busy(struct mdgpud_bctx *ctx, uint32_t *busy)
{
	return mdgpud_cuda_streams_query(ctx, MDGPUD_CUDA_RPC_BUSY, 0, busy);
}

/* The backend ops err_code and err_clear (include/mdgpud/backend.h). */
uint64_t mdgpud_cuda_err_code(const struct mdgpud_bctx *ctx)
{
	if (ctx->dead && !ctx->hung && ctx->lost_cu)
		return ctx->lost_cu;
	return ctx->last_cu;
}

void mdgpud_cuda_err_clear(struct mdgpud_bctx *ctx)
{
	ctx->last_cu = 0;
}
