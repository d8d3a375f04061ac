// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: stream capture and CUDA graphs, recorded and replayed in this
 * library; the daemon only ever sees the work a graph launch queues.
 *
 * Capture.  cuStreamBeginCapture makes a capture sequence with a new
 * graph.  While a stream takes part in one, the work the other files
 * hand to mdgpu_cu_submit() (launches, memsets, copies) becomes a node
 * of that graph instead of being queued: a copy of the operation (kernel
 * parameters included) that depends on the stream's dependency set, which
 * then becomes that node alone.  An event recorded in a capturing stream
 * keeps the stream's dependency set; a stream that waits on it joins the
 * capture with that set (a fork), or, already in it, adds the set to its
 * own (a join).  cuStreamEndCapture on the stream that began the capture
 * hands the graph over once every other stream's dependency set is
 * reachable from its own (CUDA_ERROR_STREAM_CAPTURE_UNJOINED otherwise).
 * Work that cannot be captured invalidates the capture with CUDA's error;
 * nothing of a capture is ever queued.  A thread's per-thread default
 * stream is a blocking stream of its context (stream.c) and captures as
 * one; the legacy stream never does.
 *
 * Graphs.  A node depends only on nodes that existed when it was made
 * (captured, or added with its dependencies), so creation order is a
 * topological order.  cuGraphInstantiate copies the nodes in that order
 * into the executable graph, which does not change when its graph does or
 * goes.  cuGraphLaunch queues the operations one after the other on the
 * launch stream: the graph's own concurrency is not used (serialised
 * replay), its order is kept.  Each launch first waits for the previous
 * launch of the same executable graph (on any stream), as CUDA orders
 * them.  Before anything is queued, every function, event and memory
 * range a node names is found live again, so a launch that would use
 * something freed fails whole with CUDA_ERROR_INVALID_HANDLE /
 * INVALID_VALUE (CUDA leaves that undefined).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/*
 * A capture sequence, from cuStreamBeginCapture on `origin` to
 * cuStreamEndCapture.  thread: the thread that began it, which owns it
 * for the capture modes.  members: the streams in it, origin first.
 */
struct mdgpu_cu_capture {
	uint64_t id;
	CUgraph graph;
	CUstream origin;
	CUcontext ctx;
	CUstreamCaptureMode mode;
	pthread_t thread;
	bool invalidated;
	struct mdgpu_cu_set members;	/* struct mdgpu_cu_member * */
};

/* A stream's part in a capture: what its next captured node depends
 * on.  edges: deps.n zeroed edges for cuStreamGetCaptureInfo_v3. */
struct mdgpu_cu_member {
	struct mdgpu_cu_capture *c;
	CUstream s;
	struct mdgpu_cu_set deps;	/* CUgraphNode */
	CUgraphEdgeData *edges;
};

/* An event last recorded in a capturing stream: the nodes a wait on it
 * depends on.  c is NULL once that capture is over: the event then
 * stands for no work that will ever run (CUDA_ERROR_CAPTURED_EVENT). */
struct mdgpu_cu_evcap {
	struct mdgpu_cu_capture *c;
	struct mdgpu_cu_set deps;	/* CUgraphNode */
};

struct CUgraphNode_st {
	CUgraph graph;
	CUgraphNodeType type;
	struct mdgpu_cu_op op;		/* owns its kernel parameters */
	struct mdgpu_cu_set deps;	/* CUgraphNode, each made earlier */
	uint64_t mark;			/* reachability walks */
};

/* capture: the capture building it, NULL once handed over. */
struct CUgraph_st {
	struct mdgpu_cu_set nodes;	/* CUgraphNode, creation order */
	struct mdgpu_cu_capture *capture;
};

/* done: a daemon event recorded after each launch, which the next
 * launch waits for. */
struct CUgraphExec_st {
	CUcontext ctx;
	struct mdgpu_cu_op *ops;	/* topological order, owned */
	size_t n;
	unsigned long long flags;
	uint32_t done;
	bool launched;
};

/* The calling thread's capture mode (cuThreadExchangeStreamCaptureMode);
 * 0 is CU_STREAM_CAPTURE_MODE_GLOBAL, CUDA's default. */
static _Thread_local CUstreamCaptureMode mdgpu_cu_thread_mode;
static uint64_t mdgpu_cu_capture_next_id = 1;
static uint64_t mdgpu_cu_mark_next = 1;

/* ---------------------------------------------------------------- */
/* Operations.                                                      */

static CUgraphNodeType mdgpu_cu_op_type(enum mdgpu_cu_op_kind k)
{
	switch (k) {
	case MDGPU_CU_OP_KERNEL:
		return CU_GRAPH_NODE_TYPE_KERNEL;
	case MDGPU_CU_OP_MEMSET:
		return CU_GRAPH_NODE_TYPE_MEMSET;
	case MDGPU_CU_OP_COPY:
		return CU_GRAPH_NODE_TYPE_MEMCPY;
	case MDGPU_CU_OP_EVENT_RECORD:
		return CU_GRAPH_NODE_TYPE_EVENT_RECORD;
	case MDGPU_CU_OP_EVENT_WAIT:
		return CU_GRAPH_NODE_TYPE_WAIT_EVENT;
	default:
		return CU_GRAPH_NODE_TYPE_EMPTY;
	}
}

/* *dst = *src with a copy of its kernel parameters of its own. */
static int mdgpu_cu_op_dup(struct mdgpu_cu_op *dst,
			   const struct mdgpu_cu_op *src)
{
	void *p;

	*dst = *src;
	if (src->kind != MDGPU_CU_OP_KERNEL)
		return 0;
	dst->u.kernel.params = NULL;
	if (!src->u.kernel.len)
		return 0;
	p = malloc(src->u.kernel.len);
	if (!p)
		return -ENOMEM;
	memcpy(p, src->u.kernel.params, src->u.kernel.len);
	dst->u.kernel.params = p;
	return 0;
}

static void mdgpu_cu_op_free(struct mdgpu_cu_op *op)
{
	if (op->kind == MDGPU_CU_OP_KERNEL)
		free((void *)op->u.kernel.params);
}

/* The bytes rows rows of width bytes, pitch apart, span. */
static uint64_t mdgpu_cu_span(uint64_t rows, uint64_t pitch, uint64_t width)
{
	return rows > 1 ? (rows - 1) * pitch + width : width;
}

static int mdgpu_cu_copy_run(const struct mdgpu_cu_op *op, uint32_t stream)
{
	uint32_t f = op->u.copy.async ? MDGPU_COPY_ASYNC : 0;
	uint64_t w = op->u.copy.width, rows = op->u.copy.rows;
	bool wait = false;
	int ret = 0;

	/* Contiguous rows on both sides are one copy. */
	if (rows > 1 && op->u.copy.dpitch == w && op->u.copy.spitch == w) {
		w *= rows;
		rows = 1;
	}
	for (uint64_t i = 0; i < rows && !ret; i++) {
		uintptr_t d = op->u.copy.dst + i * op->u.copy.dpitch;
		uintptr_t s = op->u.copy.src + i * op->u.copy.spitch;
		uint64_t dev = 0;

		/* Registered shared memory: the GPU copies it itself. */
		if (op->u.copy.dir == MDGPU_CU_HTOD)
			dev = mdgpu_cu_host_reg_dev(s, w);
		else if (op->u.copy.dir == MDGPU_CU_DTOH)
			dev = mdgpu_cu_host_reg_dev(d, w);
		if (dev) {
			ret = op->u.copy.dir == MDGPU_CU_HTOD ?
			      mdgpu_copy_dtod_on(mdgpu_cu.g, stream, d, dev, w) :
			      mdgpu_copy_dtod_on(mdgpu_cu.g, stream, dev, s, w);
			wait = !op->u.copy.async;
			continue;
		}
		switch (op->u.copy.dir) {
		case MDGPU_CU_HTOD:
			ret = mdgpu_copy_htod_on(mdgpu_cu.g, stream, f, d,
						 (const void *)s, w);
			break;
		case MDGPU_CU_DTOH:
			ret = mdgpu_copy_dtoh_on(mdgpu_cu.g, stream, f,
						 (void *)d, s, w);
			break;
		default:
			ret = mdgpu_copy_dtod_on(mdgpu_cu.g, stream, d, s, w);
			break;
		}
	}
	/* A synchronous copy with pinned memory returns once done. */
	if (!ret && wait)
		ret = mdgpu_stream_synchronize(mdgpu_cu.g, stream);
	return ret;
}

/* Queues op on the daemon's stream `stream`; negative errno. */
static int mdgpu_cu_op_run(const struct mdgpu_cu_op *op, uint32_t stream)
{
	struct mdgpu_launch_cfg cfg;
	uint64_t bytes, rows;
	CUevent e;
	int ret = 0;

	switch (op->kind) {
	case MDGPU_CU_OP_KERNEL:
		cfg = op->u.kernel.cfg;
		cfg.stream = stream;
		return mdgpu_launch_ex(mdgpu_cu.g, op->u.kernel.func, &cfg,
				       op->u.kernel.params, op->u.kernel.len);
	case MDGPU_CU_OP_MEMSET:
		bytes = op->u.memset.bytes;
		rows = op->u.memset.rows;
		if (rows > 1 && op->u.memset.pitch == bytes) {
			bytes *= rows;
			rows = 1;
		}
		for (uint64_t i = 0; i < rows && !ret; i++)
			ret = mdgpu_memset_on(mdgpu_cu.g, stream,
					      op->u.memset.dst +
					      i * op->u.memset.pitch,
					      op->u.memset.value,
					      op->u.memset.width, bytes);
		return ret;
	case MDGPU_CU_OP_COPY:
		return mdgpu_cu_copy_run(op, stream);
	case MDGPU_CU_OP_EVENT_RECORD:
		e = op->u.event.e;
		ret = mdgpu_event_record_on(mdgpu_cu.g, e->event, stream);
		if (!ret) {
			e->recorded = true;
			mdgpu_cu_capture_event_recorded(e);
		}
		return ret;
	case MDGPU_CU_OP_EVENT_WAIT:
		e = op->u.event.e;
		/* An event never recorded is complete. */
		if (!e->recorded)
			return 0;
		return mdgpu_stream_wait_event(mdgpu_cu.g, stream, e->event);
	default:
		return 0;
	}
}

/* Is everything op names still there (a graph's node, at launch). */
static CUresult mdgpu_cu_op_check(const struct mdgpu_cu_op *op)
{
	const struct mdgpu_cu_op *c = op;
	uint64_t dspan, sspan;
	CUevent e;

	switch (op->kind) {
	case MDGPU_CU_OP_KERNEL:
		if (!mdgpu_cu_set_has(&mdgpu_cu.funcs, op->u.kernel.f) ||
		    op->u.kernel.f->func != op->u.kernel.func)
			return CUDA_ERROR_INVALID_HANDLE;
		return CUDA_SUCCESS;
	case MDGPU_CU_OP_MEMSET:
		if (!mdgpu_cu_dev_range(op->u.memset.dst,
					  mdgpu_cu_span(op->u.memset.rows,
							op->u.memset.pitch,
							op->u.memset.bytes)))
			return CUDA_ERROR_INVALID_VALUE;
		return CUDA_SUCCESS;
	case MDGPU_CU_OP_COPY:
		dspan = mdgpu_cu_span(c->u.copy.rows, c->u.copy.dpitch,
				      c->u.copy.width);
		sspan = mdgpu_cu_span(c->u.copy.rows, c->u.copy.spitch,
				      c->u.copy.width);
		if (c->u.copy.dir == MDGPU_CU_DTOH ?
		    !mdgpu_cu_host_zero_copy(c->u.copy.dst, dspan) :
		    !mdgpu_cu_dev_range(c->u.copy.dst, dspan))
			return CUDA_ERROR_INVALID_VALUE;
		if (c->u.copy.dir == MDGPU_CU_HTOD ?
		    !mdgpu_cu_host_zero_copy(c->u.copy.src, sspan) :
		    !mdgpu_cu_dev_range(c->u.copy.src, sspan))
			return CUDA_ERROR_INVALID_VALUE;
		return CUDA_SUCCESS;
	case MDGPU_CU_OP_EVENT_RECORD:
	case MDGPU_CU_OP_EVENT_WAIT:
		e = op->u.event.e;
		if (!mdgpu_cu_set_has(&mdgpu_cu.events, e) ||
		    e->event != op->u.event.event || !mdgpu_cu_ctx_live(e->ctx))
			return CUDA_ERROR_INVALID_HANDLE;
		return CUDA_SUCCESS;
	default:
		return CUDA_SUCCESS;
	}
}

/* A copy a graph can replay: its host side is zero-copy memory, which
 * the daemon reads or writes when the node runs. */
static bool mdgpu_cu_op_capturable(const struct mdgpu_cu_op *op)
{
	if (op->kind != MDGPU_CU_OP_COPY || op->u.copy.dir == MDGPU_CU_DTOD)
		return true;
	if (op->u.copy.dir == MDGPU_CU_HTOD)
		return mdgpu_cu_host_zero_copy(op->u.copy.src,
			mdgpu_cu_span(op->u.copy.rows, op->u.copy.spitch,
				      op->u.copy.width));
	return mdgpu_cu_host_zero_copy(op->u.copy.dst,
		mdgpu_cu_span(op->u.copy.rows, op->u.copy.dpitch,
			      op->u.copy.width));
}

/* ---------------------------------------------------------------- */
/* Graphs and nodes.                                                */

static CUgraph mdgpu_cu_graph_new(void)
{
	CUgraph g = calloc(1, sizeof(*g));

	if (!g || mdgpu_cu_set_add(&mdgpu_cu.graphs, g)) {
		free(g);
		return NULL;
	}
	return g;
}

static void mdgpu_cu_graph_free(CUgraph g)
{
	for (size_t i = 0; i < g->nodes.n; i++) {
		CUgraphNode n = g->nodes.v[i];

		mdgpu_cu_op_free(&n->op);
		free(n->deps.v);
		free(n);
	}
	free(g->nodes.v);
	mdgpu_cu_set_del(&mdgpu_cu.graphs, g);
	free(g);
}

/* A node of g running op after deps[0..n) (nodes of g). */
static CUgraphNode mdgpu_cu_node_new(CUgraph g, const struct mdgpu_cu_op *op,
				     void *const *deps, size_t n)
{
	CUgraphNode node = calloc(1, sizeof(*node));

	if (!node)
		return NULL;
	if (mdgpu_cu_op_dup(&node->op, op))
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (!mdgpu_cu_set_has(&node->deps, deps[i]) &&
		    mdgpu_cu_set_add(&node->deps, deps[i]))
			goto fail_op;
	if (mdgpu_cu_set_add(&g->nodes, node))
		goto fail_op;
	node->graph = g;
	node->type = mdgpu_cu_op_type(op->kind);
	return node;
fail_op:
	mdgpu_cu_op_free(&node->op);
	free(node->deps.v);
fail:
	free(node);
	return NULL;
}

/* Under the lock: the live node n, or NULL. */
static CUgraphNode mdgpu_cu_node_find(CUgraphNode n)
{
	for (size_t i = 0; n && i < mdgpu_cu.graphs.n; i++) {
		CUgraph g = mdgpu_cu.graphs.v[i];

		if (mdgpu_cu_set_has(&g->nodes, n))
			return n;
	}
	return NULL;
}

/* Marks every node from which one of the n nodes is reachable
 * (themselves included) with a fresh mark, which it returns. */
static uint64_t mdgpu_cu_mark_ancestors(void *const *nodes, size_t n)
{
	uint64_t mark = mdgpu_cu_mark_next++;
	struct mdgpu_cu_set work = { 0 };
	bool oom = false;

	for (size_t i = 0; i < n; i++) {
		CUgraphNode x = nodes[i];

		if (x->mark != mark) {
			x->mark = mark;
			oom |= mdgpu_cu_set_add(&work, x) != 0;
		}
	}
	while (work.n) {
		CUgraphNode x = work.v[--work.n];

		for (size_t i = 0; i < x->deps.n; i++) {
			CUgraphNode d = x->deps.v[i];

			if (d->mark != mark) {
				d->mark = mark;
				oom |= mdgpu_cu_set_add(&work, d) != 0;
			}
		}
	}
	free(work.v);
	/* Out of memory: a mark no node has, so nothing looks reachable
	 * and the caller refuses rather than accepts. */
	return oom ? mdgpu_cu_mark_next++ : mark;
}

/* ---------------------------------------------------------------- */
/* Captures.                                                        */

static CUresult mdgpu_cu_deps_set(struct mdgpu_cu_set *to,
				  const struct mdgpu_cu_set *from)
{
	to->n = 0;
	for (size_t i = 0; i < from->n; i++)
		if (mdgpu_cu_set_add(to, from->v[i]))
			return CUDA_ERROR_OUT_OF_MEMORY;
	return CUDA_SUCCESS;
}

static CUresult mdgpu_cu_deps_union(struct mdgpu_cu_set *to,
				    const struct mdgpu_cu_set *from)
{
	for (size_t i = 0; i < from->n; i++)
		if (!mdgpu_cu_set_has(to, from->v[i]) &&
		    mdgpu_cu_set_add(to, from->v[i]))
			return CUDA_ERROR_OUT_OF_MEMORY;
	return CUDA_SUCCESS;
}

static void mdgpu_cu_invalidate(struct mdgpu_cu_capture *c, const char *why)
{
	if (!c->invalidated)
		mdgpu_cu_log("stream capture %llu invalidated: %s",
			     (unsigned long long)c->id, why);
	c->invalidated = true;
}

static struct mdgpu_cu_member *mdgpu_cu_member_new(struct mdgpu_cu_capture *c,
						   CUstream s)
{
	struct mdgpu_cu_member *m = calloc(1, sizeof(*m));

	if (!m || mdgpu_cu_set_add(&c->members, m)) {
		free(m);
		return NULL;
	}
	m->c = c;
	m->s = s;
	s->cap = m;
	return m;
}

static void mdgpu_cu_member_free(struct mdgpu_cu_member *m)
{
	m->s->cap = NULL;
	mdgpu_cu_set_del(&m->c->members, m);
	free(m->deps.v);
	free(m->edges);
	free(m);
}

/* Ends capture c: its streams leave it, events recorded in it stand for
 * nothing any more, and its graph is freed unless handed over. */
static void mdgpu_cu_capture_end(struct mdgpu_cu_capture *c, bool keep_graph)
{
	while (c->members.n)
		mdgpu_cu_member_free(c->members.v[c->members.n - 1]);
	free(c->members.v);
	for (size_t i = 0; i < mdgpu_cu.events.n; i++) {
		CUevent e = mdgpu_cu.events.v[i];

		if (e->cap && e->cap->c == c)
			e->cap->c = NULL;
	}
	c->graph->capture = NULL;
	if (!keep_graph)
		mdgpu_cu_graph_free(c->graph);
	mdgpu_cu_set_del(&mdgpu_cu.captures, c);
	free(c);
}

/*
 * The legacy stream of the current context used while a blocking stream
 * of that context captures: CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, and with
 * `invalidate` those captures are invalidated.
 */
static CUresult mdgpu_cu_legacy_check(bool invalidate)
{
	CUcontext ctx = mdgpu_cu_current();
	CUresult r = CUDA_SUCCESS;

	for (size_t i = 0; i < mdgpu_cu.captures.n; i++) {
		struct mdgpu_cu_capture *c = mdgpu_cu.captures.v[i];

		for (size_t j = 0; j < c->members.n; j++) {
			struct mdgpu_cu_member *m = c->members.v[j];

			if (m->s->ctx != ctx ||
			    (m->s->flags & CU_STREAM_NON_BLOCKING))
				continue;
			if (invalidate)
				mdgpu_cu_invalidate(c, "the legacy stream was "
						    "used");
			r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
			break;
		}
	}
	return r;
}

/* s's part in an active capture (*m, NULL when s does not capture), or
 * the error work on s gets. */
static CUresult mdgpu_cu_capture_of(CUstream s, struct mdgpu_cu_member **m)
{
	*m = NULL;
	if (mdgpu_cu_stream_handle(s)) {
		if (s->cap && s->cap->c->invalidated)
			return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
		*m = s->cap;
		return CUDA_SUCCESS;
	}
	return mdgpu_cu_legacy_check(true);
}

/* Refuses work that cannot be captured: the capture is invalidated. */
static CUresult mdgpu_cu_refuse(struct mdgpu_cu_capture *c, const char *what)
{
	mdgpu_cu_log("%s cannot be captured", what);
	mdgpu_cu_invalidate(c, what);
	return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

/* op as a node of m's capture after m's dependency set, which becomes
 * that node. */
static CUresult mdgpu_cu_capture_add(struct mdgpu_cu_member *m,
				     const struct mdgpu_cu_op *op)
{
	CUgraphNode n = mdgpu_cu_node_new(m->c->graph, op, m->deps.v,
					  m->deps.n);

	m->deps.n = 0;
	if (!n || mdgpu_cu_set_add(&m->deps, n)) {
		mdgpu_cu_invalidate(m->c, "out of memory");
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

CUresult mdgpu_cu_submit(CUstream s, const struct mdgpu_cu_op *op)
{
	struct mdgpu_cu_member *m;
	CUresult r = mdgpu_cu_capture_of(s, &m);
	int ret;

	if (r)
		return r;
	if (m) {
		if (!mdgpu_cu_op_capturable(op))
			return mdgpu_cu_refuse(m->c, "a copy with host memory "
					       "not from cuMemHostAlloc");
		return mdgpu_cu_capture_add(m, op);
	}
	ret = mdgpu_cu_op_run(op, mdgpu_cu_stream_handle(s));
	return ret ? mdgpu_cu_error(ret) : CUDA_SUCCESS;
}

CUresult mdgpu_cu_capture_refuse(CUstream s, const char *what)
{
	struct mdgpu_cu_member *m;
	CUresult r = mdgpu_cu_capture_of(s, &m);

	return r ? r : m ? mdgpu_cu_refuse(m->c, what) : CUDA_SUCCESS;
}

CUresult mdgpu_cu_capture_unsafe(const char *who)
{
	CUstreamCaptureMode mode = mdgpu_cu_thread_mode;
	pthread_t self = pthread_self();
	bool prohibited = false;

	if (mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_SUCCESS;
	for (size_t i = 0; i < mdgpu_cu.captures.n; i++) {
		struct mdgpu_cu_capture *c = mdgpu_cu.captures.v[i];
		bool mine = pthread_equal(c->thread, self);

		if ((mine && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED) ||
		    (!mine && mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
		     c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
			mdgpu_cu_invalidate(c, who);
			prohibited = true;
		}
	}
	if (prohibited)
		mdgpu_cu_log("%s during stream capture: prohibited by the "
			     "capture mode", who);
	return prohibited ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED :
			    CUDA_SUCCESS;
}

CUresult mdgpu_cu_capture_sync(CUstream s)
{
	if (mdgpu_cu_stream_handle(s)) {
		if (!s->cap)
			return CUDA_SUCCESS;
		mdgpu_cu_invalidate(s->cap->c, "a capturing stream was "
				    "synchronised or queried");
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	return mdgpu_cu_legacy_check(true);
}

static struct mdgpu_cu_evcap *mdgpu_cu_evcap_of(CUevent e)
{
	if (!e->cap)
		e->cap = calloc(1, sizeof(*e->cap));
	return e->cap;
}

CUresult mdgpu_cu_capture_record(CUevent e, CUstream s, unsigned flags,
				 bool *done)
{
	struct mdgpu_cu_op op = { .kind = MDGPU_CU_OP_EVENT_RECORD };
	struct mdgpu_cu_member *m;
	struct mdgpu_cu_evcap *ec;
	CUresult r = mdgpu_cu_capture_of(s, &m);

	*done = false;
	if (r)
		return r;
	if (!m)		/* RECORD_EXTERNAL is for capture only */
		return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	/* External: a node that records e when the graph runs. */
	if (flags & CU_EVENT_RECORD_EXTERNAL) {
		op.u.event.e = e;
		op.u.event.event = e->event;
		r = mdgpu_cu_capture_add(m, &op);
		if (r)
			return r;
	}
	ec = mdgpu_cu_evcap_of(e);
	if (!ec || mdgpu_cu_deps_set(&ec->deps, &m->deps)) {
		mdgpu_cu_invalidate(m->c, "out of memory");
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	ec->c = m->c;
	*done = true;
	return CUDA_SUCCESS;
}

/* s, not capturing, waits on an event of capture c: it joins c. */
static CUresult mdgpu_cu_capture_fork(CUstream s, struct mdgpu_cu_evcap *ec)
{
	struct mdgpu_cu_member *m;

	if (!mdgpu_cu_stream_handle(s))
		return mdgpu_cu_refuse(ec->c, "the legacy stream joining a "
				       "capture");
	m = mdgpu_cu_member_new(ec->c, s);
	if (!m || mdgpu_cu_deps_set(&m->deps, &ec->deps)) {
		mdgpu_cu_invalidate(ec->c, "out of memory");
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

CUresult mdgpu_cu_capture_wait(CUstream s, CUevent e, unsigned flags,
			       bool *done)
{
	struct mdgpu_cu_op op = { .kind = MDGPU_CU_OP_EVENT_WAIT };
	struct mdgpu_cu_evcap *ec = e->cap;
	struct mdgpu_cu_member *m = NULL;
	CUresult r = CUDA_SUCCESS;

	*done = false;
	/* The legacy stream waiting on a captured event is refused the join
	 * (mdgpu_cu_capture_fork), not its use beside a capture. */
	if (!ec || mdgpu_cu_stream_handle(s))
		r = mdgpu_cu_capture_of(s, &m);
	if (r)
		return r;
	if (ec && !ec->c) {
		if (m)
			mdgpu_cu_invalidate(m->c, "a wait on an event of a "
					    "capture that is over");
		return CUDA_ERROR_CAPTURED_EVENT;
	}
	if (ec) {
		*done = true;
		if (!m)
			return mdgpu_cu_capture_fork(s, ec);
		if (m->c != ec->c) {
			mdgpu_cu_invalidate(m->c, "a wait on another capture's "
					    "event");
			return CUDA_ERROR_STREAM_CAPTURE_MERGE;
		}
		r = mdgpu_cu_deps_union(&m->deps, &ec->deps);
		if (r)
			mdgpu_cu_invalidate(m->c, "out of memory");
		return r;
	}
	if (!m)		/* WAIT_EXTERNAL is for capture only */
		return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	*done = true;
	if (!e->recorded)	/* an event never recorded: no-op */
		return CUDA_SUCCESS;
	if (!(flags & CU_EVENT_WAIT_EXTERNAL)) {
		mdgpu_cu_invalidate(m->c, "a wait on an event recorded "
				    "outside the capture");
		return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
	}
	op.u.event.e = e;
	op.u.event.event = e->event;
	return mdgpu_cu_capture_add(m, &op);
}

CUresult mdgpu_cu_capture_event_use(CUevent e)
{
	return e->cap ? CUDA_ERROR_CAPTURED_EVENT : CUDA_SUCCESS;
}

void mdgpu_cu_capture_event_recorded(CUevent e)
{
	mdgpu_cu_capture_event_gone(e);
}

void mdgpu_cu_capture_event_gone(CUevent e)
{
	if (!e->cap)
		return;
	free(e->cap->deps.v);
	free(e->cap);
	e->cap = NULL;
}

/* A stream going away ends the capture it began (its graph with it) or
 * invalidates the one it joined. */
void mdgpu_cu_capture_stream_gone(CUstream s)
{
	struct mdgpu_cu_member *m = s->cap;

	if (!m)
		return;
	if (m->c->origin == s) {
		mdgpu_cu_capture_end(m->c, false);
		return;
	}
	mdgpu_cu_invalidate(m->c, "a stream in it was destroyed");
	mdgpu_cu_member_free(m);
}

/* ---------------------------------------------------------------- */
/* Capture entry points.                                            */

static CUresult mdgpu_cu_begin(CUstream s, CUstreamCaptureMode mode)
{
	struct mdgpu_cu_capture *c;
	CUresult r;

	if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_stream_resolve(NULL, &s);
	if (r)
		goto out;
	if (!mdgpu_cu_stream_handle(s)) {
		r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		goto out;
	}
	if (s->cap) {
		r = CUDA_ERROR_ILLEGAL_STATE;
		goto out;
	}
	c = calloc(1, sizeof(*c));
	if (!c || mdgpu_cu_set_add(&mdgpu_cu.captures, c)) {
		free(c);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	c->graph = mdgpu_cu_graph_new();
	if (!c->graph || !mdgpu_cu_member_new(c, s)) {
		if (c->graph)
			mdgpu_cu_graph_free(c->graph);
		mdgpu_cu_set_del(&mdgpu_cu.captures, c);
		free(c);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	c->graph->capture = c;
	c->id = mdgpu_cu_capture_next_id++;
	c->origin = s;
	c->ctx = s->ctx;
	c->mode = mode;
	c->thread = pthread_self();
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream,
					 CUstreamCaptureMode mode)
{
	return mdgpu_cu_begin(hStream, mode);
}
MDGPU_CU_PTSZ(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture_v2,
	      (CUstream s, CUstreamCaptureMode mode),
	      mdgpu_cu_begin(MDGPU_CU_PTS(s), mode))

/* CUDA 10.0's, before capture modes: the global mode, 10.1's default. */
#undef cuStreamBeginCapture
CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream);
CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
	return mdgpu_cu_begin(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}
MDGPU_CU_PTSZ(cuStreamBeginCapture_ptsz, cuStreamBeginCapture, (CUstream s),
	      mdgpu_cu_begin(MDGPU_CU_PTS(s), CU_STREAM_CAPTURE_MODE_GLOBAL))

/* Is every other stream's dependency set reachable from the origin's. */
static bool mdgpu_cu_joined(struct mdgpu_cu_capture *c)
{
	struct mdgpu_cu_member *o = c->origin->cap;
	uint64_t mark = mdgpu_cu_mark_ancestors(o->deps.v, o->deps.n);

	for (size_t i = 0; i < c->members.n; i++) {
		struct mdgpu_cu_member *m = c->members.v[i];

		for (size_t j = 0; j < m->deps.n; j++)
			if (((CUgraphNode)m->deps.v[j])->mark != mark)
				return false;
	}
	return true;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	struct mdgpu_cu_capture *c;
	CUresult r;

	if (!phGraph)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_stream_resolve(NULL, &hStream);
	if (r)
		goto out;
	if (!mdgpu_cu_stream_handle(hStream) || !hStream->cap) {
		r = CUDA_ERROR_ILLEGAL_STATE;
		goto out;
	}
	c = hStream->cap->c;
	if (c->origin != hStream) {
		r = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
		goto out;
	}
	if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
	    !pthread_equal(c->thread, pthread_self())) {
		r = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
		goto out;
	}
	*phGraph = NULL;
	if (c->invalidated) {
		r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	} else if (!mdgpu_cu_joined(c)) {
		mdgpu_cu_log("cuStreamEndCapture: a stream forked from the "
			     "capture was not joined back");
		r = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
	} else {
		*phGraph = c->graph;
	}
	mdgpu_cu_capture_end(c, r == CUDA_SUCCESS);
out:
	mdgpu_cu_leave();
	return r;
}

/* The capture state of s; NULL outputs are not wanted. */
static CUresult mdgpu_cu_capture_info(CUstream s,
				      CUstreamCaptureStatus *status,
				      cuuint64_t *id, CUgraph *graph,
				      const CUgraphNode **deps,
				      const CUgraphEdgeData **edges,
				      size_t *ndeps)
{
	struct mdgpu_cu_member *m;
	CUresult r;

	if (!status || (edges && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_stream_resolve(NULL, &s);
	if (r)
		goto out;
	if (!mdgpu_cu_stream_handle(s)) {
		r = mdgpu_cu_legacy_check(false);
		if (!r)
			*status = CU_STREAM_CAPTURE_STATUS_NONE;
		goto out;
	}
	m = s->cap;
	if (!m) {
		*status = CU_STREAM_CAPTURE_STATUS_NONE;
		goto out;
	}
	*status = m->c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED :
				      CU_STREAM_CAPTURE_STATUS_ACTIVE;
	if (id)
		*id = m->c->id;
	if (graph)
		*graph = m->c->graph;
	if (edges) {
		/* Every captured edge is a full dependency: zeroed data. */
		free(m->edges);
		m->edges = calloc(m->deps.n ? m->deps.n : 1,
				  sizeof(*m->edges));
		if (!m->edges) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		*edges = m->edges;
	}
	if (deps)
		*deps = (const CUgraphNode *)m->deps.v;
	if (ndeps)
		*ndeps = m->deps.n;
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream,
		CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
		CUgraph *graph_out, const CUgraphNode **dependencies_out,
		const CUgraphEdgeData **edgeData_out,
		size_t *numDependencies_out)
{
	return mdgpu_cu_capture_info(hStream, captureStatus_out, id_out,
				     graph_out, dependencies_out, edgeData_out,
				     numDependencies_out);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream,
		CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
		CUgraph *graph_out, const CUgraphNode **dependencies_out,
		size_t *numDependencies_out);
CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream,
		CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
		CUgraph *graph_out, const CUgraphNode **dependencies_out,
		size_t *numDependencies_out)
{
	return mdgpu_cu_capture_info(hStream, captureStatus_out, id_out,
				     graph_out, dependencies_out, NULL,
				     numDependencies_out);
}

#undef cuStreamGetCaptureInfo
CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream,
		CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out);
CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream,
		CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out)
{
	return mdgpu_cu_capture_info(hStream, captureStatus_out, id_out,
				     NULL, NULL, NULL, NULL);
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream,
				     CUstreamCaptureStatus *captureStatus)
{
	return mdgpu_cu_capture_info(hStream, captureStatus, NULL, NULL, NULL,
				     NULL, NULL);
}

/* The node handles of m's capture graph, n of them at deps. */
static CUresult mdgpu_cu_deps_check(const struct mdgpu_cu_member *m,
				    const CUgraphNode *deps, size_t n)
{
	if (n && !deps)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++)
		if (!mdgpu_cu_set_has(&m->c->graph->nodes, deps[i]))
			return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static CUresult mdgpu_cu_update_deps(CUstream s, CUgraphNode *deps,
				     const CUgraphEdgeData *data, size_t n,
				     unsigned flags)
{
	struct mdgpu_cu_member *m;
	struct mdgpu_cu_set add = { .v = (void **)deps, .n = n };
	CUresult r;

	if (flags & ~(unsigned)CU_STREAM_SET_CAPTURE_DEPENDENCIES)
		return CUDA_ERROR_INVALID_VALUE;
	/* Only full dependencies (zeroed edge data) are captured. */
	for (size_t i = 0; data && i < n; i++)
		if (memcmp(&data[i], &(CUgraphEdgeData){ 0 },
			   sizeof(data[i])))
			return CUDA_ERROR_NOT_SUPPORTED;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_stream_resolve(NULL, &s);
	if (r)
		goto out;
	m = mdgpu_cu_stream_handle(s) ? s->cap : NULL;
	if (!m || m->c->invalidated) {
		r = CUDA_ERROR_ILLEGAL_STATE;
		goto out;
	}
	r = mdgpu_cu_deps_check(m, deps, n);
	if (r)
		goto out;
	if (flags & CU_STREAM_SET_CAPTURE_DEPENDENCIES)
		m->deps.n = 0;
	r = mdgpu_cu_deps_union(&m->deps, &add);
	if (r)
		mdgpu_cu_invalidate(m->c, "out of memory");
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuStreamUpdateCaptureDependencies_v2(CUstream hStream,
		CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
		size_t numDependencies, unsigned int flags)
{
	return mdgpu_cu_update_deps(hStream, dependencies, dependencyData,
				    numDependencies, flags);
}

#undef cuStreamUpdateCaptureDependencies
CUresult CUDAAPI cuStreamUpdateCaptureDependencies(CUstream hStream,
		CUgraphNode *dependencies, size_t numDependencies,
		unsigned int flags);
CUresult CUDAAPI cuStreamUpdateCaptureDependencies(CUstream hStream,
		CUgraphNode *dependencies, size_t numDependencies,
		unsigned int flags)
{
	return mdgpu_cu_update_deps(hStream, dependencies, NULL,
				    numDependencies, flags);
}

CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	CUstreamCaptureMode old = mdgpu_cu_thread_mode;
	CUresult r;

	if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	mdgpu_cu_leave();
	mdgpu_cu_thread_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}

MDGPU_CU_PTSZ(cuStreamEndCapture_ptsz, cuStreamEndCapture,
	      (CUstream s, CUgraph *phGraph),
	      cuStreamEndCapture(MDGPU_CU_PTS(s), phGraph))
MDGPU_CU_PTSZ(cuStreamGetCaptureInfo_ptsz, cuStreamGetCaptureInfo,
	      (CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id),
	      cuStreamGetCaptureInfo(MDGPU_CU_PTS(s), status, id))
MDGPU_CU_PTSZ(cuStreamGetCaptureInfo_v2_ptsz, cuStreamGetCaptureInfo_v2,
	      (CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
	       CUgraph *graph, const CUgraphNode **deps, size_t *ndeps),
	      cuStreamGetCaptureInfo_v2(MDGPU_CU_PTS(s), status, id, graph,
					deps, ndeps))
MDGPU_CU_PTSZ(cuStreamGetCaptureInfo_v3_ptsz, cuStreamGetCaptureInfo_v3,
	      (CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
	       CUgraph *graph, const CUgraphNode **deps,
	       const CUgraphEdgeData **edges, size_t *ndeps),
	      cuStreamGetCaptureInfo_v3(MDGPU_CU_PTS(s), status, id, graph,
					deps, edges, ndeps))
MDGPU_CU_PTSZ(cuStreamIsCapturing_ptsz, cuStreamIsCapturing,
	      (CUstream s, CUstreamCaptureStatus *status),
	      cuStreamIsCapturing(MDGPU_CU_PTS(s), status))
MDGPU_CU_PTSZ(cuStreamUpdateCaptureDependencies_ptsz,
	      cuStreamUpdateCaptureDependencies,
	      (CUstream s, CUgraphNode *deps, size_t n, unsigned int flags),
	      cuStreamUpdateCaptureDependencies(MDGPU_CU_PTS(s), deps, n,
						flags))
MDGPU_CU_PTSZ(cuStreamUpdateCaptureDependencies_v2_ptsz,
	      cuStreamUpdateCaptureDependencies_v2,
	      (CUstream s, CUgraphNode *deps, const CUgraphEdgeData *data,
	       size_t n, unsigned int flags),
	      cuStreamUpdateCaptureDependencies_v2(MDGPU_CU_PTS(s), deps, data,
						   n, flags))

/* ---------------------------------------------------------------- */
/* Graphs.                                                          */

CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	CUresult r;

	if (!phGraph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	*phGraph = mdgpu_cu_graph_new();
	if (!*phGraph)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	mdgpu_cu_leave();
	return r;
}

/* Executable graphs made from it are their own copies and stay. */
CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.graphs, hGraph))
		r = CUDA_ERROR_INVALID_VALUE;
	else if (hGraph->capture)	/* cuStreamEndCapture frees it */
		r = CUDA_ERROR_ILLEGAL_STATE;
	else
		mdgpu_cu_graph_free(hGraph);
	mdgpu_cu_leave();
	return r;
}

static void mdgpu_cu_exec_free(CUgraphExec x)
{
	for (size_t i = 0; i < x->n; i++)
		mdgpu_cu_op_free(&x->ops[i]);
	free(x->ops);
	/* Queued work that records it still completes (stream.c). */
	mdgpu_event_destroy(mdgpu_cu.g, x->done);
	mdgpu_cu_set_del(&mdgpu_cu.execs, x);
	free(x);
}

void mdgpu_cu_graph_release(CUcontext ctx)
{
	for (size_t i = mdgpu_cu.execs.n; i-- > 0;) {
		CUgraphExec x = mdgpu_cu.execs.v[i];

		if (x->ctx == ctx)
			mdgpu_cu_exec_free(x);
	}
}

/*
 * Flags: AUTO_FREE_ON_LAUNCH concerns memory allocated by graph nodes,
 * which no graph here has, so it changes nothing; USE_NODE_PRIORITY
 * concerns priorities, hints for the scheduler.  UPLOAD is for
 * cuGraphInstantiateWithParams (with_params), DEVICE_LAUNCH is not
 * supported.  *err: the node that failed, if one did.
 */
static CUresult mdgpu_cu_instantiate(CUgraphExec *out, CUgraph g,
				     unsigned long long flags,
				     bool with_params, CUgraphNode *err)
{
	unsigned long long known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
				   CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
				   CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
	CUgraphExec x = NULL;
	CUcontext ctx;
	CUresult r;
	int ret;

	if (with_params)
		known |= CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
	if (err)
		*err = NULL;
	if (!out || (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) {
		mdgpu_cu_log("cuGraphInstantiate: device launch is not "
			     "supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.graphs, g) || g->capture) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	for (size_t i = 0; i < g->nodes.n; i++) {
		CUgraphNode n = g->nodes.v[i];

		r = mdgpu_cu_op_check(&n->op);
		if (r) {
			if (err)
				*err = n;
			goto out;
		}
	}
	x = calloc(1, sizeof(*x));
	if (!x || mdgpu_cu_set_add(&mdgpu_cu.execs, x)) {
		free(x);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	x->ctx = ctx;
	x->flags = flags;
	x->ops = calloc(g->nodes.n ? g->nodes.n : 1, sizeof(*x->ops));
	ret = x->ops ? mdgpu_event_create_flags(mdgpu_cu.g,
						MDGPU_EVENT_F_DISABLE_TIMING,
						&x->done) : -ENOMEM;
	if (ret) {
		free(x->ops);
		mdgpu_cu_set_del(&mdgpu_cu.execs, x);
		free(x);
		r = mdgpu_cu_error(ret);
		goto out;
	}
	/* Creation order is a topological order (head of this file). */
	for (size_t i = 0; i < g->nodes.n; i++, x->n++) {
		CUgraphNode n = g->nodes.v[i];

		if (mdgpu_cu_op_dup(&x->ops[i], &n->op)) {
			mdgpu_cu_exec_free(x);
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
	}
	*out = x;
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec,
					     CUgraph hGraph,
					     unsigned long long flags)
{
	return mdgpu_cu_instantiate(phGraphExec, hGraph, flags, false, NULL);
}

/* The 10.0 and 11.0 ones: no flags; the log is left empty. */
static CUresult mdgpu_cu_instantiate_log(CUgraphExec *x, CUgraph g,
					 CUgraphNode *err, char *log,
					 size_t size)
{
	if (log && size)
		log[0] = '\0';
	return mdgpu_cu_instantiate(x, g, 0, false, err);
}

#undef cuGraphInstantiate
CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
				    CUgraphNode *phErrorNode, char *logBuffer,
				    size_t bufferSize);
CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
				    CUgraphNode *phErrorNode, char *logBuffer,
				    size_t bufferSize)
{
	return mdgpu_cu_instantiate_log(phGraphExec, hGraph, phErrorNode,
					logBuffer, bufferSize);
}

CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec,
				       CUgraph hGraph, CUgraphNode *phErrorNode,
				       char *logBuffer, size_t bufferSize);
CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec,
				       CUgraph hGraph, CUgraphNode *phErrorNode,
				       char *logBuffer, size_t bufferSize)
{
	return mdgpu_cu_instantiate_log(phGraphExec, hGraph, phErrorNode,
					logBuffer, bufferSize);
}

/* cuGraphInstantiateWithParams; ptsz: a NULL hUploadStream is the
 * per-thread default stream. */
static CUresult mdgpu_cu_instantiate_params(CUgraphExec *phGraphExec,
					    CUgraph hGraph,
					    CUDA_GRAPH_INSTANTIATE_PARAMS *p,
					    bool ptsz)
{
	CUresult r;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_instantiate(phGraphExec, hGraph, p->flags, true,
				 &p->hErrNode_out);
	if (!r && (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)) {
		r = cuGraphUpload(*phGraphExec,
				  ptsz ? MDGPU_CU_PTS(p->hUploadStream) :
					 p->hUploadStream);
		if (r)
			cuGraphExecDestroy(*phGraphExec);
	}
	p->result_out = r ? CUDA_GRAPH_INSTANTIATE_ERROR :
			    CUDA_GRAPH_INSTANTIATE_SUCCESS;
	return r;
}

CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec *phGraphExec,
		CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
	return mdgpu_cu_instantiate_params(phGraphExec, hGraph,
					   instantiateParams, false);
}
MDGPU_CU_PTSZ(cuGraphInstantiateWithParams_ptsz, cuGraphInstantiateWithParams,
	      (CUgraphExec *phGraphExec, CUgraph hGraph,
	       CUDA_GRAPH_INSTANTIATE_PARAMS *p),
	      mdgpu_cu_instantiate_params(phGraphExec, hGraph, p, true))

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.execs, hGraphExec))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		mdgpu_cu_exec_free(hGraphExec);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuGraphExecGetFlags(CUgraphExec hGraphExec,
				     cuuint64_t *flags)
{
	CUresult r;

	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.execs, hGraphExec))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*flags = hGraphExec->flags;
	mdgpu_cu_leave();
	return r;
}

/* Under the lock, after the checks of a launch or an upload: x and *s
 * (resolved). */
static CUresult mdgpu_cu_exec_enter(CUgraphExec x, CUstream *s)
{
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.execs, x))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		r = mdgpu_cu_stream_resolve(NULL, s);
	if (!r && !mdgpu_cu_stream_handle(*s) && !mdgpu_cu_current())
		r = CUDA_ERROR_INVALID_CONTEXT;
	if (r)
		mdgpu_cu_leave();
	return r;
}

/*
 * Serialised replay: the operations in topological order on s, after
 * the previous launch of x (its `done` event).  Everything is checked
 * before the first is queued.
 */
CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	CUgraphExec x = hGraphExec;
	uint32_t stream;
	CUresult r = mdgpu_cu_exec_enter(x, &hStream);
	int ret = 0;

	if (r)
		return r;
	r = mdgpu_cu_capture_refuse(hStream, "cuGraphLaunch (a child graph)");
	for (size_t i = 0; !r && i < x->n; i++)
		r = mdgpu_cu_op_check(&x->ops[i]);
	if (r)
		goto out;
	stream = mdgpu_cu_stream_handle(hStream);
	if (x->launched)
		ret = mdgpu_stream_wait_event(mdgpu_cu.g, stream, x->done);
	for (size_t i = 0; !ret && i < x->n; i++)
		ret = mdgpu_cu_op_run(&x->ops[i], stream);
	if (!ret)
		ret = mdgpu_event_record_on(mdgpu_cu.g, x->done, stream);
	if (ret)
		r = mdgpu_cu_error(ret);
	else
		x->launched = true;
out:
	mdgpu_cu_leave();
	return r;
}

/* Nothing is staged on the device ahead of a launch (each launch queues
 * its operations), so an upload, a hint with no effect of its own, has
 * nothing to do. */
CUresult CUDAAPI cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	CUresult r = mdgpu_cu_exec_enter(hGraphExec, &hStream);

	if (r)
		return r;
	mdgpu_cu_leave();
	return CUDA_SUCCESS;
}

MDGPU_CU_PTSZ(cuGraphLaunch_ptsz, cuGraphLaunch, (CUgraphExec x, CUstream s),
	      cuGraphLaunch(x, MDGPU_CU_PTS(s)))
MDGPU_CU_PTSZ(cuGraphUpload_ptsz, cuGraphUpload, (CUgraphExec x, CUstream s),
	      cuGraphUpload(x, MDGPU_CU_PTS(s)))

/* ---------------------------------------------------------------- */
/* Nodes: queries.                                                  */

/*
 * CUDA's convention for node lists: out NULL asks for the count;
 * otherwise up to *num entries are written, those past the list NULL,
 * and *num becomes the count written.
 */
static void mdgpu_cu_list_out(void *const *v, size_t n, CUgraphNode *out,
			      size_t *num)
{
	if (!out) {
		*num = n;
		return;
	}
	for (size_t i = 0; i < *num; i++)
		out[i] = i < n ? v[i] : NULL;
	if (*num > n)
		*num = n;
}

/* Zeroed edge data (full dependencies) for the entries written. */
static void mdgpu_cu_edges_out(CUgraphEdgeData *data, size_t num)
{
	if (data && num)
		memset(data, 0, num * sizeof(*data));
}

CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes,
				 size_t *numNodes)
{
	CUresult r;

	if (!numNodes)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.graphs, hGraph))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		mdgpu_cu_list_out(hGraph->nodes.v, hGraph->nodes.n, nodes,
				  numNodes);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes,
				     size_t *numRootNodes)
{
	struct mdgpu_cu_set roots = { 0 };
	CUresult r;

	if (!numRootNodes)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.graphs, hGraph)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	for (size_t i = 0; i < hGraph->nodes.n && !r; i++) {
		CUgraphNode n = hGraph->nodes.v[i];

		if (!n->deps.n && mdgpu_cu_set_add(&roots, n))
			r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (!r)
		mdgpu_cu_list_out(roots.v, roots.n, rootNodes, numRootNodes);
out:
	free(roots.v);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
	CUresult r;

	if (!type)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (!mdgpu_cu_node_find(hNode))
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*type = hNode->type;
	mdgpu_cu_leave();
	return r;
}

/* dependents: the nodes that depend on n, else those n depends on. */
static CUresult mdgpu_cu_node_edges(CUgraphNode n, bool dependents,
				    CUgraphNode *out, CUgraphEdgeData *data,
				    size_t *num)
{
	struct mdgpu_cu_set list = { 0 };
	CUresult r;

	if (!num || (data && !out))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (!mdgpu_cu_node_find(n)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (!dependents) {
		mdgpu_cu_list_out(n->deps.v, n->deps.n, out, num);
		goto edges;
	}
	for (size_t i = 0; i < n->graph->nodes.n && !r; i++) {
		CUgraphNode d = n->graph->nodes.v[i];

		if (mdgpu_cu_set_has(&d->deps, n) && mdgpu_cu_set_add(&list, d))
			r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (r)
		goto out;
	mdgpu_cu_list_out(list.v, list.n, out, num);
edges:
	if (out)
		mdgpu_cu_edges_out(data, *num);
out:
	free(list.v);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuGraphNodeGetDependencies_v2(CUgraphNode hNode,
		CUgraphNode *dependencies, CUgraphEdgeData *edgeData,
		size_t *numDependencies)
{
	return mdgpu_cu_node_edges(hNode, false, dependencies, edgeData,
				   numDependencies);
}

#undef cuGraphNodeGetDependencies
CUresult CUDAAPI cuGraphNodeGetDependencies(CUgraphNode hNode,
		CUgraphNode *dependencies, size_t *numDependencies);
CUresult CUDAAPI cuGraphNodeGetDependencies(CUgraphNode hNode,
		CUgraphNode *dependencies, size_t *numDependencies)
{
	return mdgpu_cu_node_edges(hNode, false, dependencies, NULL,
				   numDependencies);
}

CUresult CUDAAPI cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode,
		CUgraphNode *dependentNodes, CUgraphEdgeData *edgeData,
		size_t *numDependentNodes)
{
	return mdgpu_cu_node_edges(hNode, true, dependentNodes, edgeData,
				   numDependentNodes);
}

#undef cuGraphNodeGetDependentNodes
CUresult CUDAAPI cuGraphNodeGetDependentNodes(CUgraphNode hNode,
		CUgraphNode *dependentNodes, size_t *numDependentNodes);
CUresult CUDAAPI cuGraphNodeGetDependentNodes(CUgraphNode hNode,
		CUgraphNode *dependentNodes, size_t *numDependentNodes)
{
	return mdgpu_cu_node_edges(hNode, true, dependentNodes, NULL,
				   numDependentNodes);
}

/* Every edge (dependency -> node), nodes in creation order. */
static CUresult mdgpu_cu_graph_edges(CUgraph g, CUgraphNode *from,
				     CUgraphNode *to, CUgraphEdgeData *data,
				     size_t *num)
{
	size_t k = 0;
	CUresult r;

	if (!num || (!from != !to) || (data && !from))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.graphs, g)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	for (size_t i = 0; i < g->nodes.n; i++) {
		CUgraphNode n = g->nodes.v[i];

		for (size_t j = 0; j < n->deps.n; j++, k++) {
			if (!from || k >= *num)
				continue;
			from[k] = n->deps.v[j];
			to[k] = n;
		}
	}
	if (from) {
		for (size_t i = k; i < *num; i++)
			from[i] = to[i] = NULL;
		if (*num > k)
			*num = k;
		mdgpu_cu_edges_out(data, *num);
	} else {
		*num = k;
	}
out:
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode *from,
				    CUgraphNode *to, CUgraphEdgeData *edgeData,
				    size_t *numEdges)
{
	return mdgpu_cu_graph_edges(hGraph, from, to, edgeData, numEdges);
}

#undef cuGraphGetEdges
CUresult CUDAAPI cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from,
				 CUgraphNode *to, size_t *numEdges);
CUresult CUDAAPI cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from,
				 CUgraphNode *to, size_t *numEdges)
{
	return mdgpu_cu_graph_edges(hGraph, from, to, NULL, numEdges);
}

/* ---------------------------------------------------------------- */
/* Nodes: added by hand.                                            */

/* Under the lock: op as a new node of g after deps[0..n). */
static CUresult mdgpu_cu_node_add(CUgraphNode *out, CUgraph g,
				  const CUgraphNode *deps, size_t n,
				  const struct mdgpu_cu_op *op)
{
	CUgraphNode node;

	if (!mdgpu_cu_set_has(&mdgpu_cu.graphs, g) || (n && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++)
		if (!mdgpu_cu_set_has(&g->nodes, deps[i]))
			return CUDA_ERROR_INVALID_VALUE;
	node = mdgpu_cu_node_new(g, op, (void *const *)deps, n);
	if (!node)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*out = node;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				     const CUgraphNode *dependencies,
				     size_t numDependencies)
{
	struct mdgpu_cu_op op = { .kind = MDGPU_CU_OP_EMPTY };
	CUresult r;

	if (!phGraphNode)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_node_add(phGraphNode, hGraph, dependencies,
			      numDependencies, &op);
	mdgpu_cu_leave();
	return r;
}

/* A kernel node: the parameters are packed and copied now, as a launch
 * would. */
static CUresult mdgpu_cu_add_kernel(CUgraphNode *out, CUgraph g,
				    const CUgraphNode *deps, size_t n,
				    CUfunction f, const unsigned int dims[7],
				    void **kernelParams, void **extra)
{
	unsigned char packed[MDGPU_CU_PACKED_BYTES], *heap = NULL;
	struct mdgpu_cu_op op = { .kind = MDGPU_CU_OP_KERNEL };
	const void *blob = NULL;
	size_t len = 0;
	CUcontext ctx;
	CUresult r;

	if (!out || (kernelParams && extra))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter_ctx(&ctx);
	if (r)
		return r;
	if (!mdgpu_cu_set_has(&mdgpu_cu.funcs, f)) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	r = mdgpu_cu_kernel_blob(f, kernelParams, extra, packed, &heap, &blob,
				 &len);
	if (r)
		goto out;
	op.u.kernel.f = f;
	op.u.kernel.func = f->func;
	for (int i = 0; i < 3; i++) {
		op.u.kernel.cfg.grid[i] = dims[i];
		op.u.kernel.cfg.block[i] = dims[3 + i];
	}
	op.u.kernel.cfg.shared_bytes = dims[6];
	op.u.kernel.params = blob;
	op.u.kernel.len = (uint32_t)len;
	r = mdgpu_cu_node_add(out, g, deps, n, &op);
	free(heap);
out:
	mdgpu_cu_leave();
	return r;
}

/* func, else kern (a CUkernel is its library's function here); ctx is
 * the current one: all contexts share the vGPU. */
CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode,
		CUgraph hGraph, const CUgraphNode *dependencies,
		size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return mdgpu_cu_add_kernel(phGraphNode, hGraph, dependencies,
				   numDependencies,
				   p->func ? p->func : (CUfunction)p->kern,
				   (const unsigned int[7]){
					p->gridDimX, p->gridDimY, p->gridDimZ,
					p->blockDimX, p->blockDimY,
					p->blockDimZ, p->sharedMemBytes },
				   p->kernelParams, p->extra);
}

#undef cuGraphAddKernelNode
CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode *phGraphNode,
		CUgraph hGraph, const CUgraphNode *dependencies,
		size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *p);
CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode *phGraphNode,
		CUgraph hGraph, const CUgraphNode *dependencies,
		size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return mdgpu_cu_add_kernel(phGraphNode, hGraph, dependencies,
				   numDependencies, p->func,
				   (const unsigned int[7]){
					p->gridDimX, p->gridDimY, p->gridDimZ,
					p->blockDimX, p->blockDimY,
					p->blockDimZ, p->sharedMemBytes },
				   p->kernelParams, p->extra);
}

/* A memset node: as cuMemsetD2D*Async would (memory.c), checked now. */
CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode *phGraphNode,
		CUgraph hGraph, const CUgraphNode *dependencies,
		size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *p,
		CUcontext ctx)
{
	struct mdgpu_cu_op op = { .kind = MDGPU_CU_OP_MEMSET };
	uint64_t bytes, span;
	unsigned w;
	CUresult r;

	if (!phGraphNode || !p)
		return CUDA_ERROR_INVALID_VALUE;
	w = p->elementSize;
	if ((w != 1 && w != 2 && w != 4) || !p->width || !p->height ||
	    p->dst % w || (p->height > 1 && p->pitch % w))
		return CUDA_ERROR_INVALID_VALUE;
	if (__builtin_mul_overflow((uint64_t)p->width, (uint64_t)w, &bytes) ||
	    (p->height > 1 && p->pitch < bytes) ||
	    __builtin_mul_overflow((uint64_t)(p->height - 1),
				   (uint64_t)p->pitch, &span) ||
	    __builtin_add_overflow(span, bytes, &span))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	if (ctx && !mdgpu_cu_ctx_live(ctx)) {
		r = CUDA_ERROR_INVALID_CONTEXT;
		goto out;
	}
	if (!mdgpu_cu_alloc_range(p->dst, span)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	op.u.memset.dst = p->dst;
	op.u.memset.pitch = p->pitch;
	op.u.memset.bytes = bytes;
	op.u.memset.rows = p->height;
	op.u.memset.width = w;
	op.u.memset.value = w == 4 ? p->value : p->value & ((1U << (8 * w)) - 1);
	r = mdgpu_cu_node_add(phGraphNode, hGraph, dependencies,
			      numDependencies, &op);
out:
	mdgpu_cu_leave();
	return r;
}
