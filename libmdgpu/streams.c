// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmdgpu: streams, events on streams, memsets and device copies queued
 * on a stream (ABI 1.2), stream memory operations (ABI 1.10).  Commands
 * that only queue GPU work are submitted without waiting; their errors
 * surface at the next synchronisation (mdgpu_synchronize,
 * mdgpu_stream_synchronize, mdgpu_event_synchronize).  Stream memory
 * operations are the exception: below.
 */
#include <errno.h>
#include <stdlib.h>

#include "priv.h"

int mdgpu_stream_create(struct mdgpu *g, uint32_t flags, int32_t priority,
			uint32_t *stream)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_STREAM_CREATE);
	uint64_t h = 0;
	int ret;

	c.stream_op.flags = flags;
	c.stream_op.priority = priority;
	ret = mdgpu_call(g, &c, &h, NULL);
	if (!ret)
		*stream = (uint32_t)h;
	return ret;
}

int mdgpu_stream_destroy(struct mdgpu *g, uint32_t stream)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_STREAM_DESTROY);

	c.stream_op.stream = stream;
	return mdgpu_call(g, &c, NULL, NULL);
}

int mdgpu_stream_wait_event(struct mdgpu *g, uint32_t stream, uint32_t event)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_STREAM_WAIT_EVENT);

	c.stream = stream;
	c.event.event = event;
	return mdgpu_async(g, &c);
}

/* A command whose result says 0 done / 1 pending. */
static int mdgpu_pending_call(struct mdgpu *g, struct mdgpu_cmd *c,
			      int *pending)
{
	uint64_t r = 0;
	int ret = mdgpu_call(g, c, &r, NULL);

	if (!ret)
		*pending = r != 0;
	return ret;
}

int mdgpu_stream_query(struct mdgpu *g, uint32_t stream, int *pending)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_STREAM_QUERY);

	c.stream = stream;
	return mdgpu_pending_call(g, &c, pending);
}

int mdgpu_stream_synchronize(struct mdgpu *g, uint32_t stream)
{
	struct mdgpu_wait w;

	return mdgpu_wait_here(g, &w, mdgpu_wait_begin_sync(g, stream, &w));
}

int mdgpu_stream_priorities(struct mdgpu *g, int32_t *least,
			    int32_t *greatest)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_QUERY);
	uint64_t lo = 0, hi = 0;
	int ret;

	c.query.what = MDGPU_QUERY_STREAM_PRIORITIES;
	ret = mdgpu_call(g, &c, &lo, &hi);
	if (ret)
		return ret;
	*least = (int32_t)(uint32_t)lo;
	*greatest = (int32_t)(uint32_t)hi;
	return 0;
}

int mdgpu_event_create_flags(struct mdgpu *g, uint32_t flags,
			     uint32_t *event)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_EVENT_CREATE);
	uint64_t h = 0;
	int ret;

	c.event.flags = flags;
	ret = mdgpu_call(g, &c, &h, NULL);
	if (!ret)
		*event = (uint32_t)h;
	return ret;
}

int mdgpu_event_record_on(struct mdgpu *g, uint32_t event, uint32_t stream)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_EVENT_RECORD);

	c.stream = stream;
	c.event.event = event;
	return mdgpu_async(g, &c);
}

int mdgpu_event_query(struct mdgpu *g, uint32_t event, int *pending)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_EVENT_QUERY);

	c.event.event = event;
	return mdgpu_pending_call(g, &c, pending);
}

int mdgpu_event_synchronize(struct mdgpu *g, uint32_t event)
{
	struct mdgpu_wait w;

	return mdgpu_wait_here(g, &w, mdgpu_wait_begin_event(g, event, &w));
}

int mdgpu_memset_on(struct mdgpu *g, uint32_t stream, mdgpu_devptr addr,
		    uint32_t value, uint32_t width, uint64_t len)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_MEMSET);

	if (width != 1 && width != 2 && width != 4)
		return mdgpu_set_error(g, -EINVAL, "memset width %u", width);
	c.stream = stream;
	c.memset.addr = addr;
	c.memset.len = len;
	c.memset.value = value;
	c.memset.width = width;
	return mdgpu_async(g, &c);
}

int mdgpu_copy_dtod_on(struct mdgpu *g, uint32_t stream, mdgpu_devptr dst,
		       mdgpu_devptr src, uint64_t len)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_COPY);

	c.stream = stream;
	c.copy.src_space = c.copy.dst_space = MDGPU_SPACE_DEVICE;
	c.copy.src = src;
	c.copy.dst = dst;
	c.copy.len = len;
	return mdgpu_async(g, &c);
}

/*
 * STREAM_MEMOP came with ABI 1.10: an older daemon is told apart here, as
 * it would refuse the opcode as malformed (-EINVAL).  Waited for, though
 * the daemon completes it once queued: a refusal (the validator's, or
 * sim's for a wait it cannot hold) is the caller's answer, not a later
 * synchronisation's.
 */
int mdgpu_stream_memop(struct mdgpu *g, uint32_t stream, uint32_t op,
		       mdgpu_devptr addr, uint64_t value, uint32_t flags)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_STREAM_MEMOP);
	uint32_t minor = g->info.abi_version & 0xffff;

	if (minor < 10)
		return mdgpu_set_error(g, -EOPNOTSUPP, "stream memory "
				       "operations: the daemon speaks ABI "
				       "1.%u (they need 1.10)", minor);
	c.stream = stream;
	c.memop.addr = addr;
	c.memop.value = value;
	c.memop.op = op;
	c.memop.flags = flags;
	return mdgpu_call(g, &c, NULL, NULL);
}
