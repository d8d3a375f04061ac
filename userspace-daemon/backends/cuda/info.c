// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cuda backend's ABI 1.2 introspection (supervisor side): DEVICE_INFO
 * from the worker's probe, and the requests FUNC_INFO, FUNC_SET_ATTR,
 * MODULE_GLOBAL, CTX_LIMIT, OCCUPANCY and HOST_DEVPTR (cuda_rpc.h), which
 * backends/cuda/worker/info.c answers, as it does ABI 1.5's
 * MODULE_FUNCS.  What a worker writes is read once and bounded here: a
 * worker runs tenant code and is not trusted to be well-formed.
 */
#include "priv.h"

#include <errno.h>
#include <string.h>

#include "common/names.h"

/* The probe's device table, bounded, into DEVICE_INFO's answer. */
void mdgpud_cuda_info_from_probe(struct mdgpu_device_info *d,
				 const struct mdgpud_cuda_rpc_info *probe)
{
	uint32_t n = probe->nr_attrs;

	memset(d, 0, sizeof(*d));
	d->size = sizeof(*d);
	memcpy(d->name, probe->full_name, sizeof(d->name) - 1);
	d->gpu_mem_total = probe->mem_total_bytes;
	d->driver_version = probe->driver_version;
	d->nr_attrs = n < MDGPU_DEV_ATTR_MAX ? n : MDGPU_DEV_ATTR_MAX;
	for (uint32_t i = 0; i < MDGPU_DEV_ATTR_MAX; i++)
		d->attr[i] = i < d->nr_attrs ? probe->attr[i] : MDGPU_ATTR_NONE;
}

/*
 * The worker writes the answer (struct mdgpu_func_info, then nr_params
 * parameters) into the staging area and r0 = nr_params.  Bounded by
 * max_params and by the staging area; a parameter that does not lie
 * inside the launch parameter buffer the ABI allows is the worker's
 * error (-EIO).
 */
int mdgpud_cuda_func_info(struct mdgpud_bctx *ctx, uint64_t func,
			  struct mdgpu_func_info *out, uint32_t max_params)
{
	const uint32_t room = (uint32_t)((MDGPUD_CUDA_RPC_STAGING_BYTES -
					  sizeof(*out)) /
					 sizeof(out->param[0]));
	struct mdgpud_cuda_rpc_slot *s;
	uint64_t nr;
	int ret;

	if (max_params > room)
		max_params = room;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_FUNC_INFO, &ret);
	if (!s)
		return ret;
	s->arg[0] = func;
	s->arg[1] = max_params;
	ret = mdgpud_cuda_call(ctx, s);
	if (ret)
		return ret;
	nr = mdgpud_cuda_result(s, 0);
	if (nr > max_params)
		return -EIO;
	memcpy(out, ctx->shm->staging,
	       sizeof(*out) + nr * sizeof(out->param[0]));
	out->nr_params = (uint32_t)nr;
	return 0;
}

int mdgpud_cuda_func_set_attr(struct mdgpud_bctx *ctx, uint64_t func,
			      uint32_t attr, int32_t value)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_FUNC_SET_ATTR, &ret);
	if (!s)
		return ret;
	s->arg[0] = func;
	s->arg[1] = attr;
	s->arg[2] = (uint32_t)value;
	return mdgpud_cuda_call(ctx, s);
}

int mdgpud_cuda_module_global(struct mdgpud_bctx *ctx, uint64_t module,
			      const char *name, uint64_t *addr,
			      uint64_t *bytes)
{
	size_t n = strnlen(name, MDGPU_NAME_MAX + 1);
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	if (n == 0)
		return -EINVAL;
	if (n > MDGPU_NAME_MAX)
		return -E2BIG;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_MODULE_GLOBAL, &ret);
	if (!s)
		return ret;
	s->arg[0] = module;
	memcpy(s->inline_data, name, n);
	s->inline_len = (uint32_t)n;
	ret = mdgpud_cuda_call(ctx, s);
	if (ret)
		return ret;
	*addr = s->result[0];
	*bytes = s->result[1];
	return 0;
}

/*
 * The worker writes the names into the staging area (whole names, at
 * most len bytes) and answers r0 = the whole list's bytes, r1 = kernels |
 * bytes written << 32.  They are copied out once and checked on the copy:
 * no more bytes than asked for or than the list has, whole non-empty
 * names, no more of them than the kernels it counts, and all of them
 * when the whole list fit; anything else is the worker's error (-EIO).
 */
int mdgpud_cuda_module_funcs(struct mdgpud_bctx *ctx, uint64_t module,
			     char *buf, uint32_t len, uint32_t *written,
			     uint64_t *size, uint64_t *count)
{
	struct mdgpud_cuda_rpc_slot *s;
	uint64_t full, n, w, names;
	int ret;

	if (len > MDGPUD_CUDA_RPC_STAGING_BYTES)
		len = MDGPUD_CUDA_RPC_STAGING_BYTES;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_MODULE_FUNCS, &ret);
	if (!s)
		return ret;
	s->arg[0] = module;
	s->arg[1] = len;
	ret = mdgpud_cuda_call(ctx, s);
	if (ret)
		return ret;
	full = mdgpud_cuda_result(s, 0);
	w = mdgpud_cuda_result(s, 1);	/* kernels | bytes written << 32 */
	n = (uint32_t)w;
	w >>= 32;
	if (w > len || w > full)
		return -EIO;
	memcpy(buf, ctx->shm->staging, w);
	if (!mdgpu_names_check(buf, w, &names) || names > n ||
	    (full <= len && (w != full || names != n)))
		return -EIO;
	*written = (uint32_t)w;
	*size = full;
	*count = n;
	return 0;
}

int mdgpud_cuda_ctx_limit(struct mdgpud_bctx *ctx, uint32_t limit, int set,
			  uint64_t value, uint64_t *result)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_CTX_LIMIT, &ret);
	if (!s)
		return ret;
	s->arg[0] = limit;
	s->arg[1] = set ? 1 : 0;
	s->arg[2] = value;
	ret = mdgpud_cuda_call(ctx, s);
	if (!ret)
		*result = s->result[0];
	return ret;
}

int mdgpud_cuda_occupancy(struct mdgpud_bctx *ctx, uint64_t func,
			  const struct mdgpud_occupancy *q, uint64_t *result)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_OCCUPANCY, &ret);
	if (!s)
		return ret;
	s->arg[0] = func;
	s->arg[1] = q->what | (uint64_t)q->flags << 32;
	s->arg[2] = q->block_threads | (uint64_t)q->num_blocks << 32;
	s->arg[3] = q->dyn_smem;
	s->arg[4] = q->cluster[0] | (uint64_t)q->cluster[1] << 20 |
		    (uint64_t)q->cluster[2] << 40;
	s->arg[5] = q->grid[0] | (uint64_t)q->grid[1] << 32;
	s->arg[6] = q->grid[2];
	ret = mdgpud_cuda_call(ctx, s);
	if (!ret)
		*result = s->result[0];
	return ret;
}

/*
 * Host memory shared with the worker (a region) that the worker also
 * registered with the driver as mapped memory: its device address.  The
 * answer covers the whole region when [ptr, ptr + size) starts it; a
 * range inside a region is answered at its offset.
 */
int mdgpud_cuda_host_devptr(struct mdgpud_bctx *ctx, const void *ptr,
			    size_t size, uint64_t *devptr, uint64_t *bytes)
{
	const struct mdgpud_cuda_region *r =
		mdgpud_cuda_region_find(ctx, ptr, size);
	struct mdgpud_cuda_rpc_slot *s;
	uint64_t off, base, len;
	int ret;

	*devptr = 0;
	*bytes = 0;
	if (!r)
		return ctx->dead ? -ENODEV : 0;
	off = (uint64_t)((const uint8_t *)ptr - r->ptr);
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_HOST_DEVPTR, &ret);
	if (!s)
		return ret;
	s->arg[0] = r->id;
	ret = mdgpud_cuda_call(ctx, s);
	if (ret)
		return ret;
	base = mdgpud_cuda_result(s, 0);
	len = mdgpud_cuda_result(s, 1);
	/* Mapped in full or not at all; anything else is not trusted. */
	if (!base || len != r->size || base > UINT64_MAX - len)
		return 0;
	*devptr = base + off;
	*bytes = size;
	return 0;
}
