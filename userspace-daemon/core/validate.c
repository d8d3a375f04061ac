// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The command validator (see mdgpud/validate.h).  Pure: it reads the vGPU's
 * tables and writes only *out; a rejected command changes nothing.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "mdgpud/cuda_values.h"
#include "mdgpud/validate.h"

/*
 * Bytes of the 56-byte operand area each opcode uses; the rest must be zero
 * (reserved for future minor ABI versions).  Opcodes without operands
 * (NOP, SYNC, STREAM_QUERY) use none.
 */
static const uint8_t mdgpud_payload_bytes[MDGPU_OP_COUNT] = {
	[MDGPU_OP_NOP] = 0,
	[MDGPU_OP_MEM_ALLOC] = sizeof(struct mdgpu_cmd_alloc),
	[MDGPU_OP_MEM_FREE] = sizeof(struct mdgpu_cmd_free),
	[MDGPU_OP_MEMSET] = sizeof(struct mdgpu_cmd_memset),
	[MDGPU_OP_COPY] = sizeof(struct mdgpu_cmd_copy),
	[MDGPU_OP_MODULE_LOAD] = sizeof(struct mdgpu_cmd_module_load),
	[MDGPU_OP_MODULE_UNLOAD] = sizeof(struct mdgpu_cmd_module_unload),
	[MDGPU_OP_FUNC_GET] = sizeof(struct mdgpu_cmd_func_get),
	[MDGPU_OP_LAUNCH] = sizeof(struct mdgpu_cmd_launch),
	[MDGPU_OP_BUILTIN] = sizeof(struct mdgpu_cmd_builtin),
	[MDGPU_OP_EVENT_CREATE] = offsetof(struct mdgpu_cmd_event, pad),
	[MDGPU_OP_EVENT_RECORD] = offsetof(struct mdgpu_cmd_event, flags),
	[MDGPU_OP_EVENT_ELAPSED] = offsetof(struct mdgpu_cmd_event, flags),
	[MDGPU_OP_EVENT_DESTROY] = offsetof(struct mdgpu_cmd_event, flags),
	[MDGPU_OP_SYNC] = 0,
	[MDGPU_OP_QUERY] = sizeof(struct mdgpu_cmd_query),
	[MDGPU_OP_DEVICE_INFO] = sizeof(struct mdgpu_cmd_info),
	[MDGPU_OP_FUNC_INFO] = sizeof(struct mdgpu_cmd_info),
	[MDGPU_OP_FUNC_SET_ATTR] = sizeof(struct mdgpu_cmd_func_attr),
	[MDGPU_OP_MODULE_GLOBAL] = sizeof(struct mdgpu_cmd_module_global),
	[MDGPU_OP_CTX_LIMIT] = sizeof(struct mdgpu_cmd_limit),
	[MDGPU_OP_OCCUPANCY] = sizeof(struct mdgpu_cmd_occupancy),
	[MDGPU_OP_MODULE_FUNCS] = sizeof(struct mdgpu_cmd_info),
	[MDGPU_OP_MODULE_LINK] = sizeof(struct mdgpu_cmd_module_link),
	[MDGPU_OP_STREAM_MEMOP] = sizeof(struct mdgpu_cmd_memop),
	[MDGPU_OP_HOST_REGISTER] = sizeof(struct mdgpu_cmd_host_register),
	[MDGPU_OP_HOST_UNREGISTER] = sizeof(struct mdgpu_cmd_free),
	[MDGPU_OP_HOST_FUNC] = 0,
	[MDGPU_OP_STREAM_CREATE] = offsetof(struct mdgpu_cmd_stream, pad),
	[MDGPU_OP_STREAM_DESTROY] = offsetof(struct mdgpu_cmd_stream, flags),
	[MDGPU_OP_STREAM_WAIT_EVENT] = offsetof(struct mdgpu_cmd_event, end),
	[MDGPU_OP_STREAM_QUERY] = 0,
	[MDGPU_OP_EVENT_QUERY] = offsetof(struct mdgpu_cmd_event, end),
	[MDGPU_OP_EVENT_SYNC] = offsetof(struct mdgpu_cmd_event, end),
};

static int mdgpud_check_tail_zero(const struct mdgpu_cmd *c, size_t used)
{
	for (size_t i = used; i < sizeof(c->raw); i++)
		if (c->raw[i])
			return -EINVAL;
	return 0;
}

static int mdgpud_check_dev(const struct mdgpud_vctx *vc, uint64_t addr,
			    uint64_t len)
{
	return mdgpud_memtab_check(vc->mem, addr, len);
}

/* A host-side buffer of `len` bytes at `addr` in `space`. */
static int mdgpud_check_host(const struct mdgpud_vctx *vc, uint32_t space,
			     uint64_t addr, uint64_t len,
			     struct mdgpud_hostbuf *hb)
{
	uint64_t end;

	switch (space) {
	case MDGPU_SPACE_APERTURE:
		if (__builtin_add_overflow(addr, len, &end) ||
		    end > vc->aperture_size)
			return -ERANGE;
		hb->space = space;
		hb->addr = addr;
		hb->ptr = vc->aperture + addr;
		return 0;
	case MDGPU_SPACE_IOVA:
		if (!vc->iova_ok)
			return -EINVAL;
		if (len > MDGPU_DMA_MAX)
			return -E2BIG;
		if (__builtin_add_overflow(addr, len, &end))
			return -ERANGE;
		hb->space = space;
		hb->addr = addr;
		hb->ptr = NULL;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Width 1, 2 or 4 (0 means 1), a value that fits it, addr and len
 * multiples of it, the range inside one allocation. */
static int mdgpud_v_memset(const struct mdgpud_vctx *vc,
			   const struct mdgpu_cmd_memset *m,
			   struct mdgpud_vcmd *o)
{
	uint32_t width = m->width ? m->width : 1;

	if (width != 1 && width != 2 && width != 4)
		return -EINVAL;
	if (width < 4 && (m->value >> (8 * width)))
		return -EINVAL;
	if ((m->addr | m->len) & (width - 1))
		return -EINVAL;
	o->memset.addr = m->addr;
	o->memset.len = m->len;
	o->memset.value = m->value;
	o->memset.width = width;
	return mdgpud_check_dev(vc, m->addr, m->len);
}

/*
 * STREAM_MEMOP (ABI 1.10): a known operation, a 32-bit value for a
 * 32-bit one, a known wait condition (a write: flags 0), the word
 * aligned to its width and inside one allocation of the vGPU.
 */
static int mdgpud_v_memop(const struct mdgpud_vctx *vc,
			  const struct mdgpu_cmd_memop *m,
			  struct mdgpud_vcmd *o)
{
	uint32_t width;
	bool wait;

	switch (m->op) {
	case MDGPU_MEMOP_WRITE32:
	case MDGPU_MEMOP_WAIT32:
		width = 4;
		break;
	case MDGPU_MEMOP_WRITE64:
	case MDGPU_MEMOP_WAIT64:
		width = 8;
		break;
	default:
		return -EINVAL;
	}
	wait = m->op == MDGPU_MEMOP_WAIT32 || m->op == MDGPU_MEMOP_WAIT64;
	if (width == 4 && (m->value >> 32))
		return -EINVAL;
	if (wait ? m->flags > MDGPU_MEMOP_WAIT_NOR : m->flags != 0)
		return -EINVAL;
	if (m->addr & (width - 1))
		return -EINVAL;
	o->memop.addr = m->addr;
	o->memop.value = m->value;
	o->memop.op = m->op;
	o->memop.flags = m->flags;
	return mdgpud_check_dev(vc, m->addr, width);
}

static int mdgpud_v_copy(const struct mdgpud_vctx *vc,
			 const struct mdgpu_cmd_copy *c, struct mdgpud_vcmd *o)
{
	bool sdev = c->src_space == MDGPU_SPACE_DEVICE;
	bool ddev = c->dst_space == MDGPU_SPACE_DEVICE;
	int ret;

	o->copy.len = c->len;
	if (sdev && ddev) {
		o->copy.dir = MDGPUD_COPY_D2D;
		ret = mdgpud_check_dev(vc, c->src, c->len);
		if (!ret)
			ret = mdgpud_check_dev(vc, c->dst, c->len);
		o->copy.dev_src = c->src;
		o->copy.dev_dst = c->dst;
		return ret;
	}
	if (ddev) {
		o->copy.dir = MDGPUD_COPY_H2D;
		o->copy.dev_dst = c->dst;
		ret = mdgpud_check_host(vc, c->src_space, c->src, c->len,
					&o->copy.host);
		return ret ? ret : mdgpud_check_dev(vc, c->dst, c->len);
	}
	if (sdev) {
		o->copy.dir = MDGPUD_COPY_D2H;
		o->copy.dev_src = c->src;
		ret = mdgpud_check_host(vc, c->dst_space, c->dst, c->len,
					&o->copy.host);
		return ret ? ret : mdgpud_check_dev(vc, c->src, c->len);
	}
	return -EINVAL;	/* host to host, or an unknown space */
}

/*
 * MODULE_LOAD: a known kind and a non-empty image, in host memory (at most
 * MDGPU_MODULE_MAX) or, from ABI 1.3, inside one device allocation of the
 * vGPU (at most MDGPU_MODULE_DEVICE_MAX): the backend reads that one
 * itself, the supervisor never copies it.
 */
static int mdgpud_v_module_load(const struct mdgpud_vctx *vc,
				const struct mdgpu_cmd_module_load *m,
				struct mdgpud_vcmd *o)
{
	if (m->kind != MDGPU_MODULE_PTX && m->kind != MDGPU_MODULE_CUBIN)
		return -EINVAL;
	if (m->space != MDGPU_SPACE_APERTURE && m->space != MDGPU_SPACE_IOVA &&
	    m->space != MDGPU_SPACE_DEVICE)
		return -EINVAL;
	if (!m->len)
		return -EINVAL;
	o->module_load.kind = m->kind;
	o->module_load.len = m->len;
	o->module_load.from_dev = m->space == MDGPU_SPACE_DEVICE;
	o->module_load.dev = 0;
	if (o->module_load.from_dev) {
		if (m->len > MDGPU_MODULE_DEVICE_MAX)
			return -E2BIG;
		o->module_load.dev = m->addr;
		return mdgpud_check_dev(vc, m->addr, m->len);
	}
	if (m->len > MDGPU_MODULE_MAX)
		return -E2BIG;
	return mdgpud_check_host(vc, m->space, m->addr, m->len,
				 &o->module_load.image);
}

/*
 * MODULE_LINK (ABI 1.7): a bundle of at least its header and at most
 * MDGPU_MODULE_MAX bytes, an answer buffer of at least the answer's
 * header and at most MDGPU_LINK_OUT_MAX bytes, both in host memory.  The
 * bundle's contents are the worker's to check (it parses them).
 */
static int mdgpud_v_module_link(const struct mdgpud_vctx *vc,
				const struct mdgpu_cmd_module_link *m,
				struct mdgpud_vcmd *o)
{
	int ret;

	if (m->len < sizeof(struct mdgpu_link_bundle) ||
	    m->out_len < sizeof(struct mdgpu_link_answer))
		return -EINVAL;
	if (m->len > MDGPU_MODULE_MAX || m->out_len > MDGPU_LINK_OUT_MAX)
		return -E2BIG;
	o->module_link.len = m->len;
	o->module_link.out_len = m->out_len;
	ret = mdgpud_check_host(vc, m->space, m->addr, m->len,
				&o->module_link.src);
	if (ret)
		return ret;
	return mdgpud_check_host(vc, m->out_space, m->out_addr, m->out_len,
				 &o->module_link.dst);
}

/* u32 arrays of `count` words at addr: 4-byte aligned, inside one alloc. */
static int mdgpud_check_words(const struct mdgpud_vctx *vc, uint64_t addr,
			      uint64_t count)
{
	uint64_t bytes;

	if (addr & 3)
		return -EINVAL;
	if (__builtin_mul_overflow(count, (uint64_t)4, &bytes))
		return -ERANGE;
	return mdgpud_check_dev(vc, addr, bytes);
}

static int mdgpud_v_builtin(const struct mdgpud_vctx *vc,
			    const struct mdgpu_cmd_builtin *b,
			    struct mdgpud_vcmd *o)
{
	const uint64_t *a = o->builtin.arg;
	int ret;

	if (b->pad)
		return -EINVAL;
	o->builtin.kernel = b->kernel;
	for (int i = 0; i < 5; i++)
		o->builtin.arg[i] = b->arg[i];
	switch (b->kernel) {
	case MDGPU_BUILTIN_FILL_U32:
		if (a[2] > UINT32_MAX || a[3] || a[4])
			return -EINVAL;
		return mdgpud_check_words(vc, a[0], a[1]);
	case MDGPU_BUILTIN_ADD_U32:
		if (a[4])
			return -EINVAL;
		ret = mdgpud_check_words(vc, a[0], a[3]);
		if (!ret)
			ret = mdgpud_check_words(vc, a[1], a[3]);
		if (!ret)
			ret = mdgpud_check_words(vc, a[2], a[3]);
		return ret;
	case MDGPU_BUILTIN_CHECKSUM:
		if (a[2] || a[3] || a[4])
			return -EINVAL;
		return mdgpud_check_words(vc, a[0], a[1]);
	case MDGPU_BUILTIN_SPIN_NS:
		if (a[1] || a[2] || a[3] || a[4])
			return -EINVAL;
		return a[0] > MDGPU_SPIN_NS_MAX ? -E2BIG : 0;
	default:
		return -EINVAL;
	}
}

static int mdgpud_check_dim(const uint32_t d[3], struct mdgpud_dim3 *out,
			    uint32_t max_each)
{
	for (int i = 0; i < 3; i++)
		if (!d[i] || d[i] > max_each)
			return -EINVAL;
	*out = (struct mdgpud_dim3){ d[0], d[1], d[2] };
	return 0;
}

/*
 * LAUNCH's ABI 1.2 operands: known flags only; a cluster of three nonzero
 * dimensions (bits 30-31 zero) that divide the grid's, as the driver
 * requires, or no cluster.
 */
static int mdgpud_check_launch_ext(const struct mdgpu_cmd_launch *l,
				   struct mdgpud_vcmd *o)
{
	uint32_t c = l->cluster;
	uint32_t dim[3] = { MDGPU_CLUSTER_X(c), MDGPU_CLUSTER_Y(c),
			    MDGPU_CLUSTER_Z(c) };

	if (l->flags & ~MDGPU_LAUNCH_F_COOPERATIVE)
		return -EINVAL;
	if (c & ~MDGPU_CLUSTER_MASK)
		return -EINVAL;
	o->launch.flags = l->flags;
	o->launch.cluster = c;
	if (!c)
		return 0;
	for (int i = 0; i < 3; i++)
		if (!dim[i] || l->grid[i] % dim[i])
			return -EINVAL;
	return 0;
}

static int mdgpud_v_launch(const struct mdgpud_vctx *vc,
			   const struct mdgpu_cmd_launch *l,
			   struct mdgpud_vcmd *o)
{
	uint64_t threads;
	int ret;

	ret = mdgpud_handles_get_extra(vc->handles, l->func, MDGPUD_H_FUNC,
				       &o->launch.func, &o->launch.local_bytes);
	if (ret)
		return ret;
	ret = mdgpud_check_dim(l->grid, &o->launch.grid, MDGPU_GRID_DIM_MAX);
	if (ret)
		return ret;
	ret = mdgpud_check_dim(l->block, &o->launch.block,
			       MDGPU_BLOCK_THREADS_MAX);
	if (ret)
		return ret;
	/* Each factor <= 1024, so the product fits in 64 bits. */
	threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
	if (threads > MDGPU_BLOCK_THREADS_MAX)
		return -EINVAL;
	if (l->shared_bytes > vc->shared_bytes_max)
		return -E2BIG;
	o->launch.shared_bytes = l->shared_bytes;
	ret = mdgpud_check_launch_ext(l, o);
	if (ret)
		return ret;
	if (l->params_len > MDGPU_PARAMS_MAX)
		return -E2BIG;
	o->launch.params_len = l->params_len;
	if (!l->params_len)
		return 0;
	ret = mdgpud_check_host(vc, l->params_space, l->params_addr,
				l->params_len, &o->launch.params_src);
	if (ret)
		return ret;
	if (o->launch.params_src.ptr)	/* TOCTOU: copy now */
		memcpy(o->launch.params, o->launch.params_src.ptr,
		       l->params_len);
	return 0;
}

int mdgpud_check_name(char *name, uint32_t len)
{
	name[len] = '\0';
	return memchr(name, '\0', len) ? -EINVAL : 0;	/* embedded NUL */
}

static int mdgpud_v_func_get(const struct mdgpud_vctx *vc,
			     const struct mdgpu_cmd_func_get *f,
			     struct mdgpud_vcmd *o)
{
	int ret;

	if (f->pad)
		return -EINVAL;
	if (!f->name_len)
		return -EINVAL;
	if (f->name_len > MDGPU_NAME_MAX)
		return -E2BIG;
	ret = mdgpud_handles_get(vc->handles, f->module, MDGPUD_H_MODULE,
				 &o->func_get.module);
	if (ret)
		return ret;
	o->func_get.module_handle = f->module;
	ret = mdgpud_check_host(vc, f->name_space, f->name_addr, f->name_len,
				&o->func_get.name_src);
	if (ret)
		return ret;
	o->func_get.name_len = f->name_len;
	if (!o->func_get.name_src.ptr)	/* IOVA: the executor DMAs it */
		return 0;
	memcpy(o->func_get.name, o->func_get.name_src.ptr, f->name_len);
	return mdgpud_check_name(o->func_get.name, f->name_len);
}

/* ---- ABI 1.2 introspection: DEVICE_INFO .. OCCUPANCY ---------------- */

/*
 * DEVICE_INFO, FUNC_INFO: an answer buffer of 1..MDGPU_INFO_MAX bytes;
 * MODULE_FUNCS (ABI 1.5): 1..MDGPU_FUNCS_MAX.  FUNC_INFO names a function
 * of this vGPU, MODULE_FUNCS a module, DEVICE_INFO nothing.
 */
static int mdgpud_v_info(const struct mdgpud_vctx *vc, uint16_t opcode,
			 const struct mdgpu_cmd_info *c, struct mdgpud_vcmd *o)
{
	uint32_t max = MDGPU_INFO_MAX;
	int ret = 0;

	if (c->pad)
		return -EINVAL;
	switch (opcode) {
	case MDGPU_OP_DEVICE_INFO:
		if (c->handle)
			return -EINVAL;
		break;
	case MDGPU_OP_FUNC_INFO:
		ret = mdgpud_handles_get(vc->handles, c->handle, MDGPUD_H_FUNC,
					 &o->info.func);
		break;
	default:	/* MDGPU_OP_MODULE_FUNCS */
		ret = mdgpud_handles_get(vc->handles, c->handle,
					 MDGPUD_H_MODULE, &o->info.module);
		max = MDGPU_FUNCS_MAX;
		break;
	}
	if (ret)
		return ret;
	o->info.handle = c->handle;
	if (!c->len)
		return -EINVAL;
	if (c->len > max)
		return -E2BIG;
	o->info.len = c->len;
	return mdgpud_check_host(vc, c->space, c->addr, c->len, &o->info.dst);
}

/*
 * The attributes FUNC_SET_ATTR may set, with the values cuFuncSetAttribute
 * (cuFuncSetCacheConfig for MDGPU_FUNC_ATTR_CACHE_CONFIG) can accept; the
 * driver judges the rest (a too large shared size, a cluster shape).
 * Every other attribute is read-only or not the tenant's to set.
 */
static int mdgpud_v_func_attr_value(uint32_t attr, int32_t v)
{
	switch (attr) {
	case MDGPUD_CU_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES:
	case MDGPUD_CU_FUNC_ATTR_REQUIRED_CLUSTER_WIDTH:
	case MDGPUD_CU_FUNC_ATTR_REQUIRED_CLUSTER_HEIGHT:
	case MDGPUD_CU_FUNC_ATTR_REQUIRED_CLUSTER_DEPTH:
		return v >= 0 ? 0 : -EINVAL;
	case MDGPUD_CU_FUNC_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT:
		return v >= MDGPUD_CU_SHAREDMEM_CARVEOUT_DEFAULT &&
		       v <= MDGPUD_CU_SHAREDMEM_CARVEOUT_MAX_SHARED ? 0 : -EINVAL;
	case MDGPUD_CU_FUNC_ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		return v == 0 || v == 1 ? 0 : -EINVAL;
	case MDGPUD_CU_FUNC_ATTR_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		return v >= 0 &&
		       v <= MDGPUD_CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING ?
		       0 : -EINVAL;
	case MDGPU_FUNC_ATTR_CACHE_CONFIG:
		return v >= 0 && v <= MDGPUD_CU_FUNC_CACHE_PREFER_EQUAL ?
		       0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

static int mdgpud_v_func_attr(const struct mdgpud_vctx *vc,
			      const struct mdgpu_cmd_func_attr *c,
			      struct mdgpud_vcmd *o)
{
	int ret;

	if (c->pad)
		return -EINVAL;
	ret = mdgpud_handles_get(vc->handles, c->func, MDGPUD_H_FUNC,
				 &o->func_attr.func);
	if (ret)
		return ret;
	o->func_attr.attr = c->attr;
	o->func_attr.value = c->value;
	return mdgpud_v_func_attr_value(c->attr, c->value);
}

static int mdgpud_v_module_global(const struct mdgpud_vctx *vc,
				  const struct mdgpu_cmd_module_global *g,
				  struct mdgpud_vcmd *o)
{
	int ret;

	if (g->pad)
		return -EINVAL;
	if (!g->name_len)
		return -EINVAL;
	if (g->name_len > MDGPU_NAME_MAX)
		return -E2BIG;
	ret = mdgpud_handles_get(vc->handles, g->module, MDGPUD_H_MODULE,
				 &o->module_global.module);
	if (ret)
		return ret;
	o->module_global.module_handle = g->module;
	ret = mdgpud_check_host(vc, g->name_space, g->name_addr, g->name_len,
				&o->module_global.name_src);
	if (ret)
		return ret;
	o->module_global.name_len = g->name_len;
	if (!o->module_global.name_src.ptr)	/* IOVA: the executor DMAs it */
		return 0;
	memcpy(o->module_global.name, o->module_global.name_src.ptr,
	       g->name_len);
	return mdgpud_check_name(o->module_global.name, g->name_len);
}

/*
 * CTX_LIMIT: every CUlimit may be read.  Set: the three that reserve
 * device memory (charged by the executor) and the L2 fetch granularity
 * (a hint); the persisting L2 size is the whole GPU's (-EPERM); the
 * device runtime's limits reserve memory the daemon cannot measure, and
 * the CIG ones are not settable (-EOPNOTSUPP).  A get carries no value.
 */
static int mdgpud_v_limit(const struct mdgpu_cmd_limit *c,
			  struct mdgpud_vcmd *o)
{
	if (c->limit >= MDGPUD_CU_LIMIT_MAX || c->set > 1)
		return -EINVAL;
	o->limit.limit = c->limit;
	o->limit.set = c->set;
	o->limit.value = c->value;
	if (!c->set)
		return c->value ? -EINVAL : 0;
	switch (c->limit) {
	case MDGPUD_CU_LIMIT_STACK_SIZE:
	case MDGPUD_CU_LIMIT_PRINTF_FIFO_SIZE:
	case MDGPUD_CU_LIMIT_MALLOC_HEAP_SIZE:
	case MDGPUD_CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
		return 0;
	case MDGPUD_CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
		return -EPERM;
	default:
		return -EOPNOTSUPP;
	}
}

/* A cluster shape: each of x, y, z in 1..1023, nothing above bit 29. */
static int mdgpud_v_cluster(uint32_t c, uint32_t out[3])
{
	if (c & ~MDGPU_CLUSTER_MASK)
		return -EINVAL;
	out[0] = MDGPU_CLUSTER_X(c);
	out[1] = MDGPU_CLUSTER_Y(c);
	out[2] = MDGPU_CLUSTER_Z(c);
	return out[0] && out[1] && out[2] ? 0 : -EINVAL;
}

/* OCCUPANCY: each question takes its own operands, the others are 0. */
static int mdgpud_v_occupancy(const struct mdgpud_vctx *vc,
			      const struct mdgpu_cmd_occupancy *c,
			      struct mdgpud_vcmd *o)
{
	struct mdgpud_occupancy *q = &o->occupancy.q;
	struct mdgpud_dim3 g;
	int ret;

	if (c->pad)
		return -EINVAL;
	ret = mdgpud_handles_get(vc->handles, c->func, MDGPUD_H_FUNC,
				 &o->occupancy.func);
	if (ret)
		return ret;
	if (!c->block_threads || c->block_threads > MDGPU_BLOCK_THREADS_MAX)
		return -EINVAL;
	if (c->dyn_smem > vc->shared_bytes_max)
		return -E2BIG;
	q->what = c->what;
	q->block_threads = c->block_threads;
	q->dyn_smem = c->dyn_smem;
	switch (c->what) {
	case MDGPU_OCC_ACTIVE_BLOCKS:
		if (c->flags & ~MDGPUD_CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
			return -EINVAL;
		if (c->num_blocks || c->cluster || c->grid[0] || c->grid[1] ||
		    c->grid[2])
			return -EINVAL;
		q->flags = c->flags;
		return 0;
	case MDGPU_OCC_DYN_SMEM:
		if (c->flags || c->dyn_smem || c->cluster || c->grid[0] ||
		    c->grid[1] || c->grid[2])
			return -EINVAL;
		if (!c->num_blocks || c->num_blocks > INT32_MAX)
			return -EINVAL;
		q->num_blocks = c->num_blocks;
		return 0;
	case MDGPU_OCC_ACTIVE_CLUSTERS:
	case MDGPU_OCC_CLUSTER_SIZE:
		if (c->flags || c->num_blocks)
			return -EINVAL;
		ret = mdgpud_check_dim(c->grid, &g, MDGPU_GRID_DIM_MAX);
		if (ret)
			return ret;
		q->grid[0] = g.x;
		q->grid[1] = g.y;
		q->grid[2] = g.z;
		/* CLUSTER_SIZE: the cluster is the answer, so the question
		 * carries none (the host driver ignores the launch's). */
		if (c->what == MDGPU_OCC_CLUSTER_SIZE)
			return c->cluster ? -EINVAL : 0;
		return mdgpud_v_cluster(c->cluster, q->cluster);
	default:
		return -EINVAL;
	}
}

/* The opcodes whose GPU work goes to the header's stream. */
static bool mdgpud_op_takes_stream(uint16_t opcode)
{
	switch (opcode) {
	case MDGPU_OP_MEMSET:
	case MDGPU_OP_COPY:
	case MDGPU_OP_LAUNCH:
	case MDGPU_OP_BUILTIN:
	case MDGPU_OP_EVENT_RECORD:
	case MDGPU_OP_SYNC:
	case MDGPU_OP_STREAM_WAIT_EVENT:
	case MDGPU_OP_STREAM_QUERY:
	case MDGPU_OP_STREAM_MEMOP:
		return true;
	default:
		return false;
	}
}

/*
 * The header's ABI 1.2 fields: F_ASYNC on COPY only; a stream only on
 * the opcodes that take one, and then 0 or a live stream of this vGPU.
 */
static int mdgpud_check_header_stream(const struct mdgpud_vctx *vc,
				      const struct mdgpu_cmd *c,
				      struct mdgpud_vcmd *o)
{
	if ((c->flags & MDGPU_CMD_F_ASYNC) && c->opcode != MDGPU_OP_COPY)
		return -EINVAL;
	o->stream_handle = c->stream;
	o->stream = 0;
	if (!c->stream)
		return 0;
	if (!mdgpud_op_takes_stream(c->opcode))
		return -EINVAL;
	return mdgpud_handles_get(vc->handles, c->stream, MDGPUD_H_STREAM,
				  &o->stream);
}

/* STREAM_CREATE, STREAM_DESTROY. */
static int mdgpud_v_stream_op(const struct mdgpud_vctx *vc, uint16_t opcode,
			      const struct mdgpu_cmd_stream *st,
			      struct mdgpud_vcmd *o)
{
	if (opcode == MDGPU_OP_STREAM_DESTROY) {
		o->stream_op.handle = st->stream;
		return mdgpud_handles_get(vc->handles, st->stream,
					  MDGPUD_H_STREAM,
					  &o->stream_op.stream);
	}
	if (st->stream || (st->flags & ~MDGPU_STREAM_F_NON_BLOCKING))
		return -EINVAL;
	o->stream_op.flags = st->flags;
	o->stream_op.priority = st->priority;	/* clamped by the executor */
	return 0;
}

/*
 * HOST_REGISTER: page-aligned offset, length and address (the ABI's page
 * is 4 KiB; a host of larger pages refuses what its mmap refuses), the
 * range not wrapping.  Whether the token names a descriptor, and the
 * file behind it, are the executor's to check (core/exec.c).
 */
static int mdgpud_v_host_register(const struct mdgpu_cmd_host_register *h,
				  struct mdgpud_vcmd *o)
{
	const uint64_t page = 4096;
	uint64_t end;

	if (h->flags & ~MDGPU_HOST_REG_F_READ_ONLY)
		return -EINVAL;
	if (!h->len || (h->len | h->offset | h->addr) & (page - 1))
		return -EINVAL;
	if (__builtin_add_overflow(h->offset, h->len, &end) ||
	    __builtin_add_overflow(h->addr, h->len, &end))
		return -ERANGE;
	o->host_register.token = h->token;
	o->host_register.flags = h->flags;
	o->host_register.offset = h->offset;
	o->host_register.len = h->len;
	o->host_register.addr = h->addr;
	return 0;
}

/* The queried value is one this ABI defines and the daemon answers. */
static bool mdgpud_query_known(uint32_t what)
{
	switch (what) {
	case MDGPU_QUERY_FB_QUOTA:
	case MDGPU_QUERY_FB_USED:
	case MDGPU_QUERY_SM_COUNT:
	case MDGPU_QUERY_ABI_VERSION:
	case MDGPU_QUERY_BACKEND:
	case MDGPU_QUERY_APERTURE_DEVPTR:
	case MDGPU_QUERY_STREAM_PRIORITIES:
	case MDGPU_QUERY_GPU_TIME:
		return true;
	default:
		return false;
	}
}

int mdgpud_validate(const struct mdgpud_vctx *vc,
		    const struct mdgpu_cmd *shared, struct mdgpud_vcmd *o)
{
	struct mdgpu_cmd c;
	int ret;

	/* The only read of guest memory for the descriptor itself. */
	memcpy(&c, shared, sizeof(c));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);

	memset(o, 0, offsetof(struct mdgpud_vcmd, alloc));
	o->opcode = c.opcode;
	o->flags = c.flags;
	if (c.opcode >= MDGPU_OP_COUNT)
		return -EINVAL;
	if (c.flags & ~MDGPU_CMD_F_MASK)
		return -EINVAL;
	ret = mdgpud_check_header_stream(vc, &c, o);
	if (ret)
		return ret;
	ret = mdgpud_check_tail_zero(&c, mdgpud_payload_bytes[c.opcode]);
	if (ret)
		return ret;

	switch (c.opcode) {
	case MDGPU_OP_NOP:
	case MDGPU_OP_SYNC:
	case MDGPU_OP_STREAM_QUERY:
	case MDGPU_OP_HOST_FUNC:
		return 0;
	case MDGPU_OP_EVENT_CREATE:
		if (c.event.event || c.event.end ||
		    (c.event.flags & ~MDGPU_EVENT_F_DISABLE_TIMING))
			return -EINVAL;
		o->event.flags = c.event.flags;
		return 0;
	case MDGPU_OP_STREAM_CREATE:
	case MDGPU_OP_STREAM_DESTROY:
		return mdgpud_v_stream_op(vc, c.opcode, &c.stream_op, o);
	case MDGPU_OP_STREAM_WAIT_EVENT:
	case MDGPU_OP_EVENT_QUERY:
	case MDGPU_OP_EVENT_SYNC:
		o->event.handle = c.event.event;
		return mdgpud_handles_get(vc->handles, c.event.event,
					  MDGPUD_H_EVENT, &o->event.event);
	case MDGPU_OP_MEM_ALLOC:
		if (!c.alloc.size || c.alloc.flags)
			return -EINVAL;
		o->alloc.size = c.alloc.size;
		return 0;
	case MDGPU_OP_MEM_FREE:
	case MDGPU_OP_HOST_UNREGISTER:
		o->free.addr = c.free.addr;
		/* Exactly an allocation's (a registration's) start: the
		 * executor removes it. */
		return mdgpud_check_dev(vc, c.free.addr, 0);
	case MDGPU_OP_HOST_REGISTER:
		return mdgpud_v_host_register(&c.host_register, o);
	case MDGPU_OP_MEMSET:
		return mdgpud_v_memset(vc, &c.memset, o);
	case MDGPU_OP_COPY:
		return mdgpud_v_copy(vc, &c.copy, o);
	case MDGPU_OP_STREAM_MEMOP:
		return mdgpud_v_memop(vc, &c.memop, o);
	case MDGPU_OP_MODULE_LOAD:
		return mdgpud_v_module_load(vc, &c.module_load, o);
	case MDGPU_OP_MODULE_LINK:
		return mdgpud_v_module_link(vc, &c.module_link, o);
	case MDGPU_OP_MODULE_UNLOAD:
		if (c.module_unload.pad)
			return -EINVAL;
		o->module_unload.handle = c.module_unload.module;
		return mdgpud_handles_get(vc->handles, c.module_unload.module,
					  MDGPUD_H_MODULE,
					  &o->module_unload.module);
	case MDGPU_OP_FUNC_GET:
		return mdgpud_v_func_get(vc, &c.func_get, o);
	case MDGPU_OP_LAUNCH:
		return mdgpud_v_launch(vc, &c.launch, o);
	case MDGPU_OP_BUILTIN:
		return mdgpud_v_builtin(vc, &c.builtin, o);
	case MDGPU_OP_EVENT_RECORD:
	case MDGPU_OP_EVENT_DESTROY:
		if (c.event.end)
			return -EINVAL;
		o->event.handle = c.event.event;
		return mdgpud_handles_get(vc->handles, c.event.event,
					  MDGPUD_H_EVENT, &o->event.event);
	case MDGPU_OP_EVENT_ELAPSED:
		o->event.handle = c.event.event;
		o->event.end_handle = c.event.end;
		ret = mdgpud_handles_get(vc->handles, c.event.event,
					 MDGPUD_H_EVENT, &o->event.event);
		if (!ret)
			ret = mdgpud_handles_get(vc->handles, c.event.end,
						 MDGPUD_H_EVENT, &o->event.end);
		return ret;
	case MDGPU_OP_QUERY:
		if (c.query.pad)
			return -EINVAL;
		if (!mdgpud_query_known(c.query.what))
			return -EINVAL;
		o->query.what = c.query.what;
		return 0;
	case MDGPU_OP_DEVICE_INFO:
	case MDGPU_OP_FUNC_INFO:
	case MDGPU_OP_MODULE_FUNCS:
		return mdgpud_v_info(vc, c.opcode, &c.info, o);
	case MDGPU_OP_FUNC_SET_ATTR:
		return mdgpud_v_func_attr(vc, &c.func_attr, o);
	case MDGPU_OP_MODULE_GLOBAL:
		return mdgpud_v_module_global(vc, &c.module_global, o);
	case MDGPU_OP_CTX_LIMIT:
		return mdgpud_v_limit(&c.limit, o);
	case MDGPU_OP_OCCUPANCY:
		return mdgpud_v_occupancy(vc, &c.occupancy, o);
	}
	return -EINVAL;
}
