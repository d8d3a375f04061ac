// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmdgpu: command building, submission and completion over any client
 * transport.  One handle, one ring: commands complete in order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "priv.h"

int mdgpu_set_error(struct mdgpu *g, int err, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	/* A failure of a command sets its code after this. */
	g->last_code = 0;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(g->err, sizeof(g->err), "%s: %s (%d)", what,
		 mdgpu_strerror(err), err);
	return err;
}

/*
 * A command of an open handle failed with err.  Where the transport can
 * read the vGPU's status, the message also says when its GPU context is
 * lost (a hang or a fault, STATUS.CONTEXT_LOST), the cause behind the
 * -ETIMEDOUT, -EIO or -ENODEV of every command until the daemon restores
 * the context.
 */
static int mdgpu_cmd_error(struct mdgpu *g, int err, const char *what)
{
	if (g->tops->status &&
	    (g->tops->status(g) & MDGPU_STATUS_CONTEXT_LOST))
		return mdgpu_set_error(g, err, "%s: GPU context lost (hang or "
				       "fault)", what);
	return mdgpu_set_error(g, err, "%s", what);
}

/* Why the calling thread's last mdgpu_open() failed (no handle to keep
 * it in). */
static _Thread_local char mdgpu_open_err[256];

const char *mdgpu_last_error(const struct mdgpu *g)
{
	return g ? g->err : mdgpu_open_err;
}

static int mdgpu_open_fail(struct mdgpu *g, int err)
{
	if (g && g->err[0])
		snprintf(mdgpu_open_err, sizeof(mdgpu_open_err), "%s", g->err);
	else
		snprintf(mdgpu_open_err, sizeof(mdgpu_open_err),
			 "mdgpu_open: %s (%d)", mdgpu_strerror(err), err);
	return err;
}

static const struct mdgpu_tops *mdgpu_tops_find(const char *name)
{
	if (!name || !strcmp(name, "socket"))
		return &mdgpu_tops_socket;
	if (!strcmp(name, "vfio"))
		return &mdgpu_tops_vfio;
	if (!strcmp(name, "guest"))
		return &mdgpu_tops_guest;
	return NULL;
}

int mdgpu_open(const struct mdgpu_open_opts *opts, struct mdgpu **out)
{
	struct mdgpu_open_opts o = { 0 };
	struct mdgpu *g;
	uint64_t params_bytes = (uint64_t)MDGPU_PARAM_SLOTS *
				MDGPU_PARAM_SLOT_BYTES;
	int ret;

	if (opts)
		o = *opts;
	if (!out)
		return -EINVAL;
	*out = NULL;
	mdgpu_open_err[0] = '\0';
	g = calloc(1, sizeof(*g));
	if (!g)
		return mdgpu_open_fail(NULL, -ENOMEM);
	g->tops = mdgpu_tops_find(o.transport);
	if (!g->tops) {
		free(g);
		return mdgpu_open_fail(NULL, -EINVAL);
	}
	/* How long a wait spins before it sleeps: the caller's, else
	 * MDGPU_SPIN_US, else MDGPU_SPIN_US_DEFAULT. */
	g->spin_us = o.spin_us;
	if (!g->spin_us) {
		unsigned long env = mdgpu_env_ulong("MDGPU_SPIN_US");

		g->spin_us = env && env <= MDGPU_SPIN_US_MAX ? (uint32_t)env :
			     MDGPU_SPIN_US_DEFAULT;
	}
	mdgpu_copy_init(g, &o);
	ret = g->tops->open(g, &o);
	if (ret) {
		mdgpu_open_fail(g, ret);
		free(g);
		return ret;
	}
	/* Zero-copy host area: by default the aperture's tail (socket);
	 * a transport may put it elsewhere (vfio: guest memory by IOVA). */
	if (!g->host_space) {
		g->host_space = MDGPU_SPACE_APERTURE;
		g->host_mem = g->aperture + g->host_off;
		g->host_end = g->aperture_size;
	}
	/* Staging and parameter slots live below host_off. */
	if (g->host_off < params_bytes + 2 * 4096) {
		ret = -EPROTO;
		goto err;
	}
	g->params_off = g->host_off - params_bytes;
	g->stage_size = (g->params_off / 2) & ~4095ULL;
	g->slot_flags = calloc(g->entries, 1);
	if (!g->slot_flags) {
		ret = -ENOMEM;
		goto err;
	}
	/* Transports whose open learns no backend kind (vfio: registers
	 * only) ask the daemon; this is also the first round trip. */
	if (!g->info.backend) {
		uint64_t kind = 0;

		ret = mdgpu_query(g, MDGPU_QUERY_BACKEND, &kind);
		if (ret)
			goto err;
		g->info.backend = (uint32_t)kind;
	}
	*out = g;
	return 0;
err:
	mdgpu_open_fail(g, ret);
	g->tops->close(g);
	free(g);
	return ret;
}

void mdgpu_close(struct mdgpu *g)
{
	if (!g)
		return;
	mdgpu_copy_fini(g);
	g->tops->close(g);
	free(g->slot_flags);
	free(g->blk);
	free(g);
}

int mdgpu_set_spin_us(struct mdgpu *g, uint32_t spin_us)
{
	if (!g || spin_us > MDGPU_SPIN_US_MAX)
		return -EINVAL;
	/* A wait of another thread may be reading it (mdgpu_wait_run()). */
	__atomic_store_n(&g->spin_us, spin_us, __ATOMIC_RELAXED);
	return 0;
}

int mdgpu_get_info(struct mdgpu *g, struct mdgpu_info *info)
{
	*info = g->info;
	return 0;
}

static struct mdgpu_cpl *mdgpu_cpl_at(struct mdgpu *g, uint32_t seq)
{
	return (struct mdgpu_cpl *)(g->cq + (size_t)(seq & (g->entries - 1)) *
				    MDGPU_CPL_SIZE);
}

/* Collect errors of asynchronous commands completed so far. */
static void mdgpu_reap(struct mdgpu *g)
{
	uint32_t head = g->tops->head(g);

	while (g->reaped != head && (int32_t)(head - g->reaped) > 0) {
		uint32_t slot = g->reaped & (g->entries - 1);
		uint8_t f = g->slot_flags[slot];

		if (f) {
			struct mdgpu_cpl cpl;

			memcpy(&cpl, mdgpu_cpl_at(g, g->reaped), sizeof(cpl));
			if ((f & MDGPU_SLOT_ASYNC) && cpl.status < 0 &&
			    !g->async_err) {
				g->async_err = cpl.status;
				g->async_op = cpl.opcode;
				g->async_code = cpl.result2;
			}
			if ((f & MDGPU_SLOT_DRAINS) && !cpl.status)
				g->drained = g->reaped + 1;
			g->slot_flags[slot] = 0;
		}
		g->reaped++;
	}
}

/* The device was reset under us: everything queued is gone, the ring
 * restarts at 0 and the vGPU's memory was freed (mdgpu_reset()). */
static void mdgpu_resync(struct mdgpu *g)
{
	if (g->tops->rearm)
		g->tops->rearm(g);
	g->tail = g->reaped = g->drained = 0;
	memset(g->slot_flags, 0, g->entries);
	g->async_err = 0;
	g->streams_busy = false;
	g->stage_busy[0] = g->stage_busy[1] = false;
	g->stage_launch[0] = g->stage_launch[1] = false;
	memset(g->param_busy, 0, sizeof(g->param_busy));
}

static int mdgpu_wait_head(struct mdgpu *g, uint32_t target)
{
	int ret = g->tops->wait(g, target);

	if (ret == -ECANCELED && g->tops->rearm) {
		mdgpu_resync(g);
		return mdgpu_set_error(g, ret, "the vGPU was reset: queued "
				       "work cancelled, memory freed");
	}
	if (ret)
		return mdgpu_set_error(g, ret, "waiting for the vGPU");
	return 0;
}

/*
 * After reading a completion or staged data out of the shared ring or
 * aperture: was the device reset meanwhile (another thread's
 * mdgpu_reset())?  Then what was read may be the reset's zeros, not the
 * device's answer: -ECANCELED, as for a wait that the reset cut.
 */
static int mdgpu_check_reset(struct mdgpu *g)
{
	if (!g->tops->reset_since || !g->tops->reset_since(g))
		return 0;
	mdgpu_resync(g);
	return mdgpu_set_error(g, -ECANCELED, "the vGPU was reset: queued "
			       "work cancelled, memory freed");
}

int mdgpu_reset(struct mdgpu *g)
{
	int ret;

	if (!g->tops->reset)
		return mdgpu_set_error(g, -EOPNOTSUPP, "reset on the %s "
				       "transport", g->tops->name);
	ret = g->tops->reset(g);
	if (ret)
		return mdgpu_set_error(g, ret, "device reset");
	return 0;
}

/*
 * Work runs in submission order, and a SYNC or a COPY that reads or writes
 * host memory completes only once it is done (include/uapi/mdgpu.h): its
 * completion without error means everything before it has finished too.
 */
static bool mdgpu_cmd_drains(const struct mdgpu *g,
			     const struct mdgpu_cmd *c)
{
	if (c->stream)
		return false;
	if (c->opcode == MDGPU_OP_SYNC)
		return true;
	/* A host copy on stream 0 proves the vGPU idle only if no other
	 * stream, and no copy left running (F_ASYNC), has work since the
	 * last SYNC of stream 0. */
	return c->opcode == MDGPU_OP_COPY && !g->streams_busy &&
	       !(c->flags & MDGPU_CMD_F_ASYNC) &&
	       (c->copy.src_space != MDGPU_SPACE_DEVICE ||
		c->copy.dst_space != MDGPU_SPACE_DEVICE);
}

int mdgpu_submit(struct mdgpu *g, const struct mdgpu_cmd *c, bool async,
		 uint32_t *seq)
{
	uint32_t head = g->tops->head(g);
	int ret;

	if (g->tail - head >= g->entries) {
		ret = mdgpu_wait_head(g, g->tail - g->entries + 1);
		if (ret)
			return ret;
	}
	mdgpu_reap(g);
	memcpy(g->sq + (size_t)(g->tail & (g->entries - 1)) * MDGPU_CMD_SIZE,
	       c, sizeof(*c));
	g->slot_flags[g->tail & (g->entries - 1)] =
		(async ? MDGPU_SLOT_ASYNC : 0) |
		(mdgpu_cmd_drains(g, c) ? MDGPU_SLOT_DRAINS : 0);
	if (c->opcode == MDGPU_OP_SYNC && !c->stream)
		g->streams_busy = false;
	else if (c->stream || (c->flags & MDGPU_CMD_F_ASYNC))
		g->streams_busy = true;
	*seq = g->tail;
	/* Before the doorbell: a command that reuses the completion slot
	 * of a waiter outside the lock is visible to it first
	 * (mdgpu_wait_run()). */
	__atomic_store_n(&g->tail, g->tail + 1, __ATOMIC_RELEASE);
	g->tops->doorbell(g, g->tail);
	return 0;
}

/* Wait for command `seq` and copy its completion; 0 or a transport error
 * (the command's own status is in out->status). */
static int mdgpu_wait_cpl(struct mdgpu *g, uint32_t seq, struct mdgpu_cpl *out)
{
	int ret = mdgpu_wait_head(g, seq + 1);

	if (ret)
		return ret;
	memcpy(out, mdgpu_cpl_at(g, seq), sizeof(*out));
	ret = mdgpu_check_reset(g);
	if (ret)
		return ret;
	mdgpu_reap(g);
	return 0;
}

static const char *const mdgpu_op_names[MDGPU_OP_COUNT] = {
	"nop", "mem_alloc", "mem_free", "memset", "copy", "module_load",
	"module_unload", "func_get", "launch", "builtin", "event_create",
	"event_record", "event_elapsed", "event_destroy", "sync", "query",
	"stream_create", "stream_destroy", "stream_wait_event", "stream_query",
	"event_query", "event_sync", "device_info", "func_info",
	"func_set_attr", "module_global", "ctx_limit", "occupancy",
	"module_funcs", "module_link", "stream_memop", "host_register",
	"host_unregister", "host_func",
};

static const char *mdgpu_op_name(uint32_t op)
{
	return op < MDGPU_OP_COUNT ? mdgpu_op_names[op] : "?";
}

/* Submit and wait: the common synchronous call. */
int mdgpu_call(struct mdgpu *g, const struct mdgpu_cmd *c, uint64_t *result,
	       uint64_t *result2)
{
	struct mdgpu_cpl cpl;
	uint32_t seq;
	int ret;

	ret = mdgpu_submit(g, c, false, &seq);
	if (ret)
		return ret;
	ret = mdgpu_wait_cpl(g, seq, &cpl);
	if (ret)
		return ret;
	if (cpl.status) {
		ret = mdgpu_cmd_error(g, cpl.status, mdgpu_op_name(c->opcode));
		g->last_code = cpl.result2;
		return ret;
	}
	if (result)
		*result = cpl.result;
	if (result2)
		*result2 = cpl.result2;
	return 0;
}

int mdgpu_async(struct mdgpu *g, const struct mdgpu_cmd *c)
{
	uint32_t seq;

	return mdgpu_submit(g, c, true, &seq);
}

struct mdgpu_cmd mdgpu_cmd_init(uint16_t op)
{
	struct mdgpu_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = op;
	return c;
}

/* ---------------------------------------------------------------- */

int mdgpu_mem_alloc(struct mdgpu *g, uint64_t size, mdgpu_devptr *addr)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_MEM_ALLOC);

	c.alloc.size = size;
	return mdgpu_call(g, &c, addr, NULL);
}

int mdgpu_mem_free(struct mdgpu *g, mdgpu_devptr addr)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_MEM_FREE);

	c.free.addr = addr;
	return mdgpu_call(g, &c, NULL, NULL);
}

int mdgpu_memset(struct mdgpu *g, mdgpu_devptr addr, uint8_t value,
		 uint64_t len)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_MEMSET);

	c.memset.addr = addr;
	c.memset.len = len;
	c.memset.value = value;
	return mdgpu_call(g, &c, NULL, NULL);
}

int mdgpu_query(struct mdgpu *g, uint32_t what, uint64_t *value)
{
	return mdgpu_query2(g, what, value, NULL);
}

int mdgpu_query2(struct mdgpu *g, uint32_t what, uint64_t *value,
		 uint64_t *value2)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_QUERY);

	c.query.what = what;
	return mdgpu_call(g, &c, value, value2);
}

int mdgpu_aperture_place(struct mdgpu *g, uint64_t addr)
{
	int ret;

	if (!g->tops->place_aperture)
		return mdgpu_set_error(g, -EOPNOTSUPP, "the %s transport "
				       "cannot place its aperture",
				       g->tops->name);
	if (g->nblk)
		return mdgpu_set_error(g, -EBUSY, "zero-copy memory was "
				       "handed out before the aperture moved");
	if (addr % (uint64_t)sysconf(_SC_PAGESIZE))
		return mdgpu_set_error(g, -EINVAL, "aperture address %#llx is "
				       "not page aligned",
				       (unsigned long long)addr);
	ret = g->tops->place_aperture(g, addr);
	if (ret)
		return mdgpu_set_error(g, ret, "placing the aperture at %#llx",
				       (unsigned long long)addr);
	if (g->host_space == MDGPU_SPACE_APERTURE)
		g->host_mem = g->aperture + g->host_off;
	return 0;
}

int mdgpu_host_register(struct mdgpu *g, int fd, uint64_t offset,
			uint64_t len, uint64_t addr, uint32_t flags,
			mdgpu_devptr *devptr)
{
	static _Atomic uint32_t next_token;
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_HOST_REGISTER);
	uint32_t token = atomic_fetch_add(&next_token, 1);
	int ret;

	if (!g->tops->send_fd)
		return mdgpu_set_error(g, -EOPNOTSUPP, "the %s transport "
				       "cannot register host memory",
				       g->tops->name);
	if ((g->info.abi_version & 0xffff) < 12)
		return mdgpu_set_error(g, -EOPNOTSUPP, "the daemon's ABI "
				       "predates host registration (1.12)");
	ret = g->tops->send_fd(g, fd, token);
	if (ret)
		return mdgpu_set_error(g, ret, "sending a descriptor to "
				       "register");
	c.host_register.token = token;
	c.host_register.flags = flags;
	c.host_register.offset = offset;
	c.host_register.len = len;
	c.host_register.addr = addr;
	return mdgpu_call(g, &c, devptr, NULL);
}

int mdgpu_host_unregister(struct mdgpu *g, mdgpu_devptr devptr)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_HOST_UNREGISTER);

	c.free.addr = devptr;
	return mdgpu_call(g, &c, NULL, NULL);
}

/* Wait for staging half k to be free again; returns its status. */
static int mdgpu_stage_wait(struct mdgpu *g, int k)
{
	struct mdgpu_cpl cpl;
	int ret;

	if (!g->stage_busy[k])
		return 0;
	g->stage_busy[k] = false;
	if (g->stage_launch[k]) {
		/* The daemon copied the parameters when it took the
		 * command; the launch's own error is kept as an async one. */
		g->stage_launch[k] = false;
		if ((int32_t)(g->tops->head(g) - (g->stage_seq[k] + 1)) >= 0)
			return 0;
		return mdgpu_wait_head(g, g->stage_seq[k] + 1);
	}
	ret = mdgpu_wait_cpl(g, g->stage_seq[k], &cpl);
	if (ret)
		return ret;
	if (cpl.status) {
		ret = mdgpu_cmd_error(g, cpl.status, "copy");
		g->last_code = cpl.result2;
		return ret;
	}
	return 0;
}

static int mdgpu_stage_drain(struct mdgpu *g, int first_err)
{
	int r0 = mdgpu_stage_wait(g, 0), r1 = mdgpu_stage_wait(g, 1);

	return first_err ? first_err : r0 ? r0 : r1;
}

/* ---------------------------------------------------------------- */
/* Zero-copy host memory                                            */

#define MDGPU_HOST_ALIGN	4096ULL

int mdgpu_host_alloc(struct mdgpu *g, size_t size, void **ptr)
{
	uint64_t need, at = g->host_off;
	size_t i;

	if (!size || size > g->host_end)
		return mdgpu_set_error(g, -EINVAL, "host_alloc of %zu bytes",
				       size);
	need = (size + MDGPU_HOST_ALIGN - 1) & ~(MDGPU_HOST_ALIGN - 1);
	/* First fit between the sorted blocks. */
	for (i = 0; i <= g->nblk; i++) {
		uint64_t end = i < g->nblk ? g->blk[i].off : g->host_end;

		if (end >= at && end - at >= need)
			break;
		if (i < g->nblk)
			at = g->blk[i].off + g->blk[i].size;
	}
	if (i > g->nblk)
		return mdgpu_set_error(g, -ENOMEM, "host_alloc of %zu bytes "
				       "(opened with %llu zero-copy bytes)",
				       size, (unsigned long long)
				       (g->host_end - g->host_off));
	if (g->nblk == g->blk_cap) {
		size_t cap = g->blk_cap ? g->blk_cap * 2 : 8;
		void *nb = realloc(g->blk, cap * sizeof(*g->blk));

		if (!nb)
			return -ENOMEM;
		g->blk = nb;
		g->blk_cap = cap;
	}
	memmove(&g->blk[i + 1], &g->blk[i], (g->nblk - i) * sizeof(*g->blk));
	g->blk[i].off = at;
	g->blk[i].size = need;
	g->nblk++;
	*ptr = g->host_mem + (at - g->host_off);
	return 0;
}

int mdgpu_host_free(struct mdgpu *g, void *ptr)
{
	for (size_t i = 0; i < g->nblk; i++) {
		if (g->host_mem + (g->blk[i].off - g->host_off) ==
		    (uint8_t *)ptr) {
			memmove(&g->blk[i], &g->blk[i + 1],
				(g->nblk - i - 1) * sizeof(*g->blk));
			g->nblk--;
			return 0;
		}
	}
	return mdgpu_set_error(g, -ENOENT, "host_free of %p", ptr);
}

/* Address (in g->host_space) of [p, p + len) if it lies in the zero-copy
 * area. */
static bool mdgpu_host_offset(const struct mdgpu *g, const void *p,
			      uint64_t len, uint64_t *off)
{
	uintptr_t a = (uintptr_t)p, lo = (uintptr_t)g->host_mem;
	uintptr_t hi = lo + (uintptr_t)(g->host_end - g->host_off);

	if (a < lo || a > hi || len > hi - a)
		return false;
	*off = g->host_off + (uint64_t)(a - lo);	/* in host_space */
	return true;
}

int mdgpu_host_aperture_offset(struct mdgpu *g, const void *p,
			       uint64_t *off)
{
	if (g->host_space != MDGPU_SPACE_APERTURE ||
	    !mdgpu_host_offset(g, p, 1, off))
		return -ENOENT;
	return 0;
}

/* A copy whose host side is zero-copy memory: one command.  With
 * MDGPU_COPY_ASYNC it is only queued (F_ASYNC); its error, if any,
 * surfaces at the next synchronisation. */
static int mdgpu_copy_direct(struct mdgpu *g, uint32_t stream, uint32_t flags,
			     uint64_t src, uint32_t ss, uint64_t dst,
			     uint32_t ds, uint64_t len)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_COPY);

	c.stream = stream;
	c.copy.src = src;
	c.copy.src_space = ss;
	c.copy.dst = dst;
	c.copy.dst_space = ds;
	c.copy.len = len;
	if (flags & MDGPU_COPY_ASYNC) {
		c.flags = MDGPU_CMD_F_ASYNC;
		return mdgpu_async(g, &c);
	}
	return mdgpu_call(g, &c, NULL, NULL);
}

int mdgpu_copy_htod(struct mdgpu *g, mdgpu_devptr dst, const void *src,
		    uint64_t len)
{
	return mdgpu_copy_htod_on(g, 0, 0, dst, src, len);
}

int mdgpu_copy_htod_on(struct mdgpu *g, uint32_t stream, uint32_t flags,
		       mdgpu_devptr dst, const void *src, uint64_t len)
{
	const uint8_t *s = src;
	uint64_t done = 0, off;
	int k = 0, ret = 0;
	bool nt = mdgpu_stage_nt(g, MDGPU_NT_IN, len);

	if (flags & ~MDGPU_COPY_ASYNC)
		return mdgpu_set_error(g, -EINVAL, "copy flags %#x", flags);
	if (mdgpu_host_offset(g, src, len, &off))	/* zero-copy */
		return mdgpu_copy_direct(g, stream, flags, off, g->host_space,
					 dst, MDGPU_SPACE_DEVICE, len);

	/* Two staging halves: fill one while the daemon copies the other. */
	while (done < len) {
		uint64_t n = len - done < g->stage_size ? len - done :
							 g->stage_size;
		struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_COPY);

		ret = mdgpu_stage_wait(g, k);
		if (ret)
			break;
		mdgpu_stage_copy(g, g->aperture + (uint64_t)k * g->stage_size,
				 s + done, n, nt);
		c.stream = stream;
		c.copy.src_space = MDGPU_SPACE_APERTURE;
		c.copy.src = (uint64_t)k * g->stage_size;
		c.copy.dst_space = MDGPU_SPACE_DEVICE;
		c.copy.dst = dst + done;
		c.copy.len = n;
		ret = mdgpu_submit(g, &c, false, &g->stage_seq[k]);
		if (ret)
			break;
		g->stage_busy[k] = true;
		done += n;
		k ^= 1;
	}
	return mdgpu_stage_drain(g, ret);
}

int mdgpu_copy_dtoh(struct mdgpu *g, void *dst, mdgpu_devptr src,
		    uint64_t len)
{
	return mdgpu_copy_dtoh_on(g, 0, 0, dst, src, len);
}

int mdgpu_copy_dtoh_on(struct mdgpu *g, uint32_t stream, uint32_t flags,
		       void *dst, mdgpu_devptr src, uint64_t len)
{
	uint64_t off[2] = { 0, 0 }, nbytes[2] = { 0, 0 };
	uint64_t submitted = 0, consumed = 0, zoff;
	int sub = 0, rd = 0, ret;
	uint8_t *d = dst;
	bool nt = mdgpu_stage_nt(g, MDGPU_NT_OUT, len);

	if (flags & ~MDGPU_COPY_ASYNC)
		return mdgpu_set_error(g, -EINVAL, "copy flags %#x", flags);
	if (mdgpu_host_offset(g, dst, len, &zoff))	/* zero-copy */
		return mdgpu_copy_direct(g, stream, flags, src,
					 MDGPU_SPACE_DEVICE, zoff,
					 g->host_space, len);
	ret = mdgpu_stage_drain(g, 0);
	if (ret)
		return ret;
	/* Keep the next chunk in flight while the previous one is read. */
	while (consumed < len) {
		while (submitted < len && !g->stage_busy[sub]) {
			uint64_t n = len - submitted < g->stage_size ?
				     len - submitted : g->stage_size;
			struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_COPY);

			c.stream = stream;
			c.copy.src_space = MDGPU_SPACE_DEVICE;
			c.copy.src = src + submitted;
			c.copy.dst_space = MDGPU_SPACE_APERTURE;
			c.copy.dst = (uint64_t)sub * g->stage_size;
			c.copy.len = n;
			ret = mdgpu_submit(g, &c, false, &g->stage_seq[sub]);
			if (ret)
				return mdgpu_stage_drain(g, ret);
			g->stage_busy[sub] = true;
			off[sub] = submitted;
			nbytes[sub] = n;
			submitted += n;
			sub ^= 1;
		}
		ret = mdgpu_stage_wait(g, rd);
		if (ret)
			return mdgpu_stage_drain(g, ret);
		mdgpu_stage_copy(g, d + off[rd],
				 g->aperture + (uint64_t)rd * g->stage_size,
				 nbytes[rd], nt);
		ret = mdgpu_check_reset(g);
		if (ret)
			return ret;
		consumed += nbytes[rd];
		rd ^= 1;
	}
	return 0;
}

int mdgpu_copy_dtod(struct mdgpu *g, mdgpu_devptr dst, mdgpu_devptr src,
		    uint64_t len)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_COPY);

	c.copy.src_space = c.copy.dst_space = MDGPU_SPACE_DEVICE;
	c.copy.src = src;
	c.copy.dst = dst;
	c.copy.len = len;
	return mdgpu_call(g, &c, NULL, NULL);
}

/* Put `len` bytes in staging half 0 for a synchronous command. */
int mdgpu_stage_small(struct mdgpu *g, const void *p, uint64_t len)
{
	int ret = mdgpu_stage_claim(g, len);

	if (!ret)
		memcpy(g->aperture, p, len);
	return ret;
}

int mdgpu_stage_claim(struct mdgpu *g, uint64_t len)
{
	if (len > g->stage_size)
		return mdgpu_set_error(g, -E2BIG, "larger than the aperture "
				       "staging area (%llu bytes)",
				       (unsigned long long)g->stage_size);
	return mdgpu_stage_drain(g, 0);
}

/*
 * An image larger than the staging area (ABI 1.3): copied into a device
 * buffer of the vGPU (charged to its quota while the load runs) by the
 * pipelined copy, loaded from there by MODULE_LOAD space DEVICE, freed.
 * A daemon of an older minor would refuse the space: told apart here.
 */
static int mdgpu_module_load_dev(struct mdgpu *g, uint32_t kind,
				 const void *image, size_t len, uint64_t *h)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_MODULE_LOAD);
	uint32_t minor = g->info.abi_version & 0xffff;
	char err[sizeof(g->err)];
	mdgpu_devptr buf;
	uint64_t code;
	int ret, fret;

	if (minor < 3)
		return mdgpu_set_error(g, -EOPNOTSUPP, "module image of %zu "
				       "bytes: larger than the aperture "
				       "staging area (%llu bytes), and the "
				       "daemon speaks ABI 1.%u (loading "
				       "from device memory needs 1.3)", len,
				       (unsigned long long)g->stage_size,
				       minor);
	ret = mdgpu_mem_alloc(g, len, &buf);
	if (ret)
		return mdgpu_set_error(g, ret, "module image of %zu bytes: "
				       "no device buffer for it in the vGPU's "
				       "memory", len);
	ret = mdgpu_copy_htod(g, buf, image, len);
	if (!ret) {
		c.module_load.addr = buf;
		c.module_load.len = len;
		c.module_load.space = MDGPU_SPACE_DEVICE;
		c.module_load.kind = kind;
		ret = mdgpu_call(g, &c, h, NULL);
	}
	/* The buffer goes either way; the load's error is the one told. */
	memcpy(err, g->err, sizeof(err));
	code = g->last_code;
	fret = mdgpu_mem_free(g, buf);
	if (ret) {
		memcpy(g->err, err, sizeof(err));
		g->last_code = code;
		return ret;
	}
	return fret;
}

int mdgpu_module_load(struct mdgpu *g, uint32_t kind, const void *image,
		      size_t len, uint32_t *module)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_MODULE_LOAD);
	uint64_t h = 0;
	int ret;

	if (len > MDGPU_MODULE_DEVICE_MAX)
		return mdgpu_set_error(g, -E2BIG, "module image of %zu bytes: "
				       "above the ABI's bound of %u bytes",
				       len, MDGPU_MODULE_DEVICE_MAX);
	/* Small images through the aperture: one copy fewer. */
	if (len > g->stage_size || len > MDGPU_MODULE_MAX) {
		ret = mdgpu_module_load_dev(g, kind, image, len, &h);
	} else {
		ret = mdgpu_stage_small(g, image, len);
		if (ret)
			return ret;
		c.module_load.addr = 0;
		c.module_load.len = len;
		c.module_load.space = MDGPU_SPACE_APERTURE;
		c.module_load.kind = kind;
		ret = mdgpu_call(g, &c, &h, NULL);
	}
	if (!ret)
		*module = (uint32_t)h;
	return ret;
}

int mdgpu_module_unload(struct mdgpu *g, uint32_t module)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_MODULE_UNLOAD);

	c.module_unload.module = module;
	return mdgpu_call(g, &c, NULL, NULL);
}

int mdgpu_func_get(struct mdgpu *g, uint32_t module, const char *name,
		   uint32_t *func)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_FUNC_GET);
	size_t len = strlen(name);
	uint64_t h = 0;
	int ret;

	if (len > MDGPU_NAME_MAX)
		return mdgpu_set_error(g, -E2BIG, "func_get '%.32s...'", name);
	ret = mdgpu_stage_small(g, name, len);
	if (ret)
		return ret;
	c.func_get.name_addr = 0;
	c.func_get.name_len = (uint32_t)len;
	c.func_get.name_space = MDGPU_SPACE_APERTURE;
	c.func_get.module = module;
	ret = mdgpu_call(g, &c, &h, NULL);
	if (!ret)
		*func = (uint32_t)h;
	return ret;
}

/*
 * Parameters past a slot (ABI 1.6): at most MDGPU_PARAMS_MAX, a daemon
 * of 1.6 or later (an older one refuses them), a staging half that holds
 * them.
 */
static int mdgpu_launch_check_large(struct mdgpu *g, uint32_t params_len)
{
	uint32_t minor = g->info.abi_version & 0xffff;

	if (params_len > MDGPU_PARAMS_MAX)
		return mdgpu_set_error(g, -E2BIG, "launch parameters of %u "
				       "bytes: more than %u", params_len,
				       MDGPU_PARAMS_MAX);
	if (minor < 6)
		return mdgpu_set_error(g, -E2BIG, "launch parameters of %u "
				       "bytes: the daemon speaks ABI 1.%u, "
				       "which takes at most %u (more needs "
				       "1.6)", params_len, minor,
				       MDGPU_PARAMS_MAX_1_5);
	if (params_len > g->stage_size)
		return mdgpu_set_error(g, -E2BIG, "launch parameters of %u "
				       "bytes: larger than the aperture "
				       "staging half (%llu bytes)", params_len,
				       (unsigned long long)g->stage_size);
	return 0;
}

/*
 * Large parameters go to a staging half, alternating so that back-to-back
 * large launches do not wait for each other: a copy or staged command
 * that wants the half later waits for the launch to be taken
 * (mdgpu_stage_wait), not for it to run.
 */
static int mdgpu_launch_large(struct mdgpu *g, struct mdgpu_cmd *c,
			      const void *params, uint32_t params_len)
{
	int k = (int)(g->stage_next_launch++ & 1);
	uint32_t seq;
	int ret;

	ret = mdgpu_stage_wait(g, k);
	if (ret)
		return ret;
	memcpy(g->aperture + (uint64_t)k * g->stage_size, params, params_len);
	c->launch.params_addr = (uint64_t)k * g->stage_size;
	c->launch.params_len = params_len;
	c->launch.params_space = MDGPU_SPACE_APERTURE;
	ret = mdgpu_submit(g, c, true, &seq);
	if (ret)
		return ret;
	g->stage_seq[k] = seq;
	g->stage_busy[k] = true;
	g->stage_launch[k] = true;
	return 0;
}

int mdgpu_launch(struct mdgpu *g, uint32_t func, const uint32_t grid[3],
		 const uint32_t block[3], uint32_t shared_bytes,
		 const void *params, uint32_t params_len)
{
	struct mdgpu_launch_cfg cfg = { .shared_bytes = shared_bytes };

	memcpy(cfg.grid, grid, sizeof(cfg.grid));
	memcpy(cfg.block, block, sizeof(cfg.block));
	return mdgpu_launch_ex(g, func, &cfg, params, params_len);
}

int mdgpu_launch_ex(struct mdgpu *g, uint32_t func,
		    const struct mdgpu_launch_cfg *cfg, const void *params,
		    uint32_t params_len)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_LAUNCH);
	uint32_t slot, seq;
	int ret;

	if (params_len > MDGPU_PARAM_SLOT_BYTES) {
		ret = mdgpu_launch_check_large(g, params_len);
		if (ret)
			return ret;
	}
	c.stream = cfg->stream;
	c.launch.func = func;
	memcpy(c.launch.grid, cfg->grid, sizeof(c.launch.grid));
	memcpy(c.launch.block, cfg->block, sizeof(c.launch.block));
	c.launch.shared_bytes = cfg->shared_bytes;
	c.launch.flags = cfg->flags;
	c.launch.cluster = cfg->cluster;
	if (params_len > MDGPU_PARAM_SLOT_BYTES)
		return mdgpu_launch_large(g, &c, params, params_len);
	if (params_len) {
		/* The daemon copies parameters when it validates the
		 * command: the slot is free once the command completed. */
		slot = g->param_next++ % MDGPU_PARAM_SLOTS;
		if (g->param_busy[slot] &&
		    (int32_t)(g->tops->head(g) - (g->param_seq[slot] + 1)) < 0) {
			ret = mdgpu_wait_head(g, g->param_seq[slot] + 1);
			if (ret)
				return ret;
		}
		memcpy(g->aperture + g->params_off +
		       (uint64_t)slot * MDGPU_PARAM_SLOT_BYTES, params,
		       params_len);
		c.launch.params_addr = g->params_off +
				       (uint64_t)slot * MDGPU_PARAM_SLOT_BYTES;
		c.launch.params_len = params_len;
		c.launch.params_space = MDGPU_SPACE_APERTURE;
		ret = mdgpu_submit(g, &c, true, &seq);
		if (!ret) {
			g->param_seq[slot] = seq;
			g->param_busy[slot] = true;
		}
		return ret;
	}
	return mdgpu_async(g, &c);
}

static struct mdgpu_cmd mdgpu_builtin_cmd(uint32_t kernel, uint64_t a0,
					  uint64_t a1, uint64_t a2,
					  uint64_t a3)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_BUILTIN);

	c.builtin.kernel = kernel;
	c.builtin.arg[0] = a0;
	c.builtin.arg[1] = a1;
	c.builtin.arg[2] = a2;
	c.builtin.arg[3] = a3;
	return c;
}

int mdgpu_fill_u32(struct mdgpu *g, mdgpu_devptr dst, uint64_t count,
		   uint32_t value)
{
	struct mdgpu_cmd c = mdgpu_builtin_cmd(MDGPU_BUILTIN_FILL_U32, dst,
					       count, value, 0);

	return mdgpu_async(g, &c);
}

int mdgpu_add_u32(struct mdgpu *g, mdgpu_devptr dst, mdgpu_devptr a,
		  mdgpu_devptr b, uint64_t count)
{
	struct mdgpu_cmd c = mdgpu_builtin_cmd(MDGPU_BUILTIN_ADD_U32, dst, a,
					       b, count);

	return mdgpu_async(g, &c);
}

int mdgpu_checksum(struct mdgpu *g, mdgpu_devptr src, uint64_t count,
		   uint64_t *sum)
{
	struct mdgpu_cmd c = mdgpu_builtin_cmd(MDGPU_BUILTIN_CHECKSUM, src,
					       count, 0, 0);

	return mdgpu_call(g, &c, sum, NULL);
}

int mdgpu_spin_ns(struct mdgpu *g, uint64_t ns)
{
	struct mdgpu_cmd c = mdgpu_builtin_cmd(MDGPU_BUILTIN_SPIN_NS, ns, 0,
					       0, 0);

	return mdgpu_async(g, &c);
}

int mdgpu_event_create(struct mdgpu *g, uint32_t *event)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_EVENT_CREATE);
	uint64_t h = 0;
	int ret = mdgpu_call(g, &c, &h, NULL);

	if (!ret)
		*event = (uint32_t)h;
	return ret;
}

int mdgpu_event_record(struct mdgpu *g, uint32_t event)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_EVENT_RECORD);

	c.event.event = event;
	return mdgpu_call(g, &c, NULL, NULL);
}

int mdgpu_event_elapsed_ns(struct mdgpu *g, uint32_t start, uint32_t end,
			   uint64_t *ns)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_EVENT_ELAPSED);

	c.event.event = start;
	c.event.end = end;
	return mdgpu_call(g, &c, ns, NULL);
}

int mdgpu_event_destroy(struct mdgpu *g, uint32_t event)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_EVENT_DESTROY);

	c.event.event = event;
	return mdgpu_call(g, &c, NULL, NULL);
}

int mdgpu_synchronize(struct mdgpu *g)
{
	struct mdgpu_wait w;

	return mdgpu_wait_here(g, &w, mdgpu_wait_begin_sync(g, 0, &w));
}

/* ---------------------------------------------------------------- */
/* Waits outside the caller's lock (mdgpu.h)                        */

int mdgpu_wait_concurrent(const struct mdgpu *g)
{
	return g->tops->concurrent_wait;
}

static int mdgpu_wait_submit(struct mdgpu *g, const struct mdgpu_cmd *c,
			     struct mdgpu_wait *w)
{
	int ret;

	memset(w, 0, sizeof(*w));
	w->cmd = *c;
	ret = mdgpu_submit(g, c, false, &w->seq);
	if (!ret)
		w->state = MDGPU_WAIT_QUEUED;
	return ret;
}

int mdgpu_wait_begin_sync(struct mdgpu *g, uint32_t stream,
			  struct mdgpu_wait *w)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_SYNC);

	/* Idle since the last draining command (a copy to or from host
	 * memory, typically; libmdgpu waits for every one of them, so it is
	 * reaped): no SYNC round trip, as cuCtxSynchronize on an idle context
	 * makes none either. */
	if (!stream && g->drained == g->tail) {
		memset(w, 0, sizeof(*w));
		w->state = MDGPU_WAIT_IDLE;
		return 0;
	}
	c.stream = stream;
	return mdgpu_wait_submit(g, &c, w);
}

int mdgpu_wait_begin_event(struct mdgpu *g, uint32_t event,
			   struct mdgpu_wait *w)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_EVENT_SYNC);

	c.event.event = event;
	return mdgpu_wait_submit(g, &c, w);
}

int mdgpu_wait_begin_host_fn(struct mdgpu *g, struct mdgpu_wait *w)
{
	struct mdgpu_cmd c = mdgpu_cmd_init(MDGPU_OP_HOST_FUNC);

	if (!g->tops->host_fn_done || !g->tops->concurrent_wait ||
	    (g->info.abi_version & 0xffff) < 12)
		return mdgpu_set_error(g, -EOPNOTSUPP, "host functions need "
				       "the socket transport and a daemon of "
				       "ABI 1.12");
	return mdgpu_wait_submit(g, &c, w);
}

void mdgpu_host_fn_done(struct mdgpu *g, const struct mdgpu_wait *w)
{
	g->tops->host_fn_done(g, w->seq + 1);
}

/*
 * Touches only what is safe beside another thread's calls on the handle
 * (with tops->concurrent_wait): the transport's wait, the completion
 * slot, and g->tail read atomically.  The slot of command seq is reused
 * by command seq + entries, whose completion the daemon can write only
 * after that command was submitted, i.e. after g->tail passed it: if
 * g->tail has not, read after the copy, the copy is this command's.
 */
void mdgpu_wait_run(struct mdgpu *g, struct mdgpu_wait *w)
{
	uint32_t tail;

	if (w->state != MDGPU_WAIT_QUEUED)
		return;
	w->ret = g->tops->wait(g, w->seq + 1);
	w->state = MDGPU_WAIT_DONE;
	if (w->ret)
		return;
	memcpy(&w->cpl, mdgpu_cpl_at(g, w->seq), sizeof(w->cpl));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	tail = __atomic_load_n(&g->tail, __ATOMIC_ACQUIRE);
	if (tail - w->seq > g->entries)
		w->state = MDGPU_WAIT_SLOT_REUSED;
}

/* Stream 0's SYNC also reports the first error of an asynchronous
 * command since the last one (mdgpu_synchronize()). */
static int mdgpu_wait_async_err(struct mdgpu *g)
{
	char what[64];
	int ret;

	if (!g->async_err)
		return 0;
	snprintf(what, sizeof(what), "asynchronous %s",
		 mdgpu_op_name(g->async_op));
	ret = mdgpu_cmd_error(g, g->async_err, what);
	g->last_code = g->async_code;
	g->async_err = 0;
	return ret;
}

int mdgpu_wait_end(struct mdgpu *g, struct mdgpu_wait *w)
{
	bool all = w->cmd.opcode == MDGPU_OP_SYNC && !w->cmd.stream;
	int ret;

	switch (w->state) {
	case MDGPU_WAIT_IDLE:
		return mdgpu_wait_async_err(g);
	case MDGPU_WAIT_QUEUED:
		mdgpu_wait_run(g, w);
		break;
	case MDGPU_WAIT_SLOT_REUSED:
		/* Done, but its answer was overwritten: ask again. */
		ret = mdgpu_call(g, &w->cmd, NULL, NULL);
		return ret || !all ? ret : mdgpu_wait_async_err(g);
	default:
		break;
	}
	if (w->ret == -ECANCELED && g->tops->rearm) {
		mdgpu_resync(g);
		return mdgpu_set_error(g, w->ret, "the vGPU was reset: queued "
				       "work cancelled, memory freed");
	}
	if (w->ret)
		return mdgpu_set_error(g, w->ret, "waiting for the vGPU");
	ret = mdgpu_check_reset(g);
	if (ret)
		return ret;
	mdgpu_reap(g);
	if (w->cpl.status) {
		ret = mdgpu_cmd_error(g, w->cpl.status,
				      mdgpu_op_name(w->cmd.opcode));
		g->last_code = w->cpl.result2;
		return ret;
	}
	return all ? mdgpu_wait_async_err(g) : 0;
}

int mdgpu_wait_here(struct mdgpu *g, struct mdgpu_wait *w, int begun)
{
	if (begun)
		return begun;
	mdgpu_wait_run(g, w);
	return mdgpu_wait_end(g, w);
}

void mdgpu_ring_flag_irq(struct mdgpu *g, uint32_t *flagged, uint32_t tail)
{
	for (; *flagged != tail; (*flagged)++) {
		struct mdgpu_cmd *c = (struct mdgpu_cmd *)
			(g->sq + (size_t)(*flagged & (g->entries - 1)) *
			 MDGPU_CMD_SIZE);

		c->flags |= MDGPU_CMD_F_IRQ;
	}
}
