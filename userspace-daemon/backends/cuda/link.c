// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cuda backend's MODULE_LINK (ABI 1.7), supervisor side: the bundle
 * goes to the worker through the staging area, the worker links it with
 * the driver's linker (worker/link.c) and writes its answer back there.
 * The link is a JIT as a module load is: it is posted and waited for
 * under the load bound (module_load_timeout_ms), not the hang bound.
 * What the worker wrote is read once and bounded here; core/link.c
 * checks the answer's consistency on its own copy.
 */
#include "priv.h"

#include <errno.h>
#include <string.h>

#include <mdgpud/log.h>

int mdgpud_cuda_module_link(struct mdgpud_bctx *ctx, const void *bundle,
			    uint32_t len, void *out, uint32_t cap,
			    uint32_t *written, uint64_t *size)
{
	struct mdgpud_cuda_rpc_slot *s;
	uint64_t full, w;
	int ret;

	*written = 0;
	*size = 0;
	if (len < sizeof(struct mdgpu_link_bundle) || !cap)
		return -EINVAL;
	if (len > MDGPU_MODULE_MAX)
		return -E2BIG;
	if (cap > MDGPU_LINK_OUT_MAX)
		cap = MDGPU_LINK_OUT_MAX;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_MODULE_LINK, &ret);
	if (!s)
		return ret;
	memcpy(ctx->shm->staging, bundle, len);
	s->arg[0] = len;
	s->arg[1] = cap;
	mdgpud_cuda_pend(ctx, s, 0);
	ret = mdgpud_cuda_pend_wait(ctx, &s);
	if (ret && ret != -EINVAL)
		return ret;
	full = mdgpud_cuda_result(s, 0);
	w = mdgpud_cuda_result(s, 1);
	if (w > cap || w > full || full > MDGPU_LINK_OUT_MAX) {
		mdgpud_warn("cuda: vgpu %u: module link: the worker answered "
			    "%llu bytes of %llu into %u", ctx->vgpu_id,
			    (unsigned long long)w, (unsigned long long)full,
			    cap);
		return -EIO;
	}
	memcpy(out, ctx->shm->staging, w);
	*written = (uint32_t)w;
	*size = full;
	if (ret)
		mdgpud_dbg("cuda: vgpu %u: module link refused (CUresult %u)",
			   ctx->vgpu_id, ctx->last_cu);
	return ret;
}
