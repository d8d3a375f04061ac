// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Execution of the stream opcodes and event queries of ABI 1.2 (the
 * validator ran first): STREAM_CREATE and STREAM_DESTROY with their guest
 * handles, STREAM_WAIT_EVENT, STREAM_QUERY, EVENT_QUERY, EVENT_SYNC and
 * QUERY STREAM_PRIORITIES; ABI 1.10's STREAM_MEMOP.  The opcodes that
 * only gained a stream (MEMSET, COPY, LAUNCH, BUILTIN, EVENT_RECORD,
 * SYNC) stay in exec.c.
 */
#include <errno.h>

#include "core_priv.h"

/* The backend's range: least (lowest priority) >= greatest. */
static void mdgpud_exec_prio_range(struct mdgpud_vgpu *v, int32_t *least,
				   int32_t *greatest)
{
	const struct mdgpud_backend_ops *b = v->core->bops;

	*least = 0;
	*greatest = 0;
	b->stream_priorities(v->core->be, least, greatest);
	if (*greatest > *least)		/* a backend bug: no range */
		*greatest = *least;
}

int mdgpud_exec_stream_priorities(struct mdgpud_vgpu *v, uint64_t *least,
				  uint64_t *greatest)
{
	int32_t lo, hi;

	mdgpud_exec_prio_range(v, &lo, &hi);
	*least = (uint32_t)lo;
	*greatest = (uint32_t)hi;
	return 0;
}

static int mdgpud_exec_stream_create(struct mdgpud_vgpu *v,
				     const struct mdgpud_vcmd *vc,
				     uint64_t *result)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	int32_t least, greatest, prio = vc->stream_op.priority;
	uint64_t val;
	uint32_t h;
	int ret;

	/* No room for its handle: refused before the backend is asked. */
	if (mdgpud_handles_count(v->handles) >= v->core->cfg.max_handles)
		return -ENOSPC;
	mdgpud_exec_prio_range(v, &least, &greatest);
	if (prio > least)
		prio = least;
	if (prio < greatest)
		prio = greatest;
	ret = b->stream_create(v->bctx, vc->stream_op.flags, prio, &val);
	if (ret)
		return ret;
	ret = mdgpud_handles_add(v->handles, MDGPUD_H_STREAM, val, 0, &h);
	if (ret) {
		b->stream_destroy(v->bctx, val);
		return ret;
	}
	*result = h;
	return 0;
}

static int mdgpud_exec_stream_destroy(struct mdgpud_vgpu *v,
				      const struct mdgpud_vcmd *vc)
{
	int ret = v->core->bops->stream_destroy(v->bctx,
						vc->stream_op.stream);

	if (ret)
		return ret;
	return mdgpud_handles_del(v->handles, vc->stream_op.handle,
				  MDGPUD_H_STREAM);
}

int mdgpud_exec_stream(struct mdgpud_vgpu *v, const struct mdgpud_vcmd *vc,
		       uint64_t *result)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint32_t pending = 0;
	int ret;

	switch (vc->opcode) {
	case MDGPU_OP_STREAM_CREATE:
		return mdgpud_exec_stream_create(v, vc, result);
	case MDGPU_OP_STREAM_DESTROY:
		return mdgpud_exec_stream_destroy(v, vc);
	case MDGPU_OP_STREAM_WAIT_EVENT:
		return b->stream_wait_event(v->bctx, vc->stream,
					    vc->event.event);
	case MDGPU_OP_STREAM_QUERY:
		ret = b->stream_query(v->bctx, vc->stream, &pending);
		break;
	case MDGPU_OP_EVENT_QUERY:
		ret = b->event_query(v->bctx, vc->event.event, &pending);
		break;
	case MDGPU_OP_EVENT_SYNC:
		return b->event_sync(v->bctx, vc->event.event);
	case MDGPU_OP_STREAM_MEMOP:
		if (!b->stream_memop)
			return -EOPNOTSUPP;
		return b->stream_memop(v->bctx, vc->stream, vc->memop.op,
				       vc->memop.addr, vc->memop.value,
				       vc->memop.flags);
	default:
		return -EINVAL;
	}
	if (!ret)
		*result = pending != 0;
	return ret;
}

void mdgpud_vgpu_release_streams(struct mdgpud_vgpu *v, bool live)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint32_t cur = 0, h;
	uint64_t val;

	while (!mdgpud_handles_next(v->handles, MDGPUD_H_STREAM, &cur, &h,
				    &val)) {
		if (live)
			b->stream_destroy(v->bctx, val);
		mdgpud_handles_del(v->handles, h, MDGPUD_H_STREAM);
	}
}
