// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cuda backend's operations (struct mdgpud_backend_ops) on top of the
 * request ring (rpc.c), and the host memory it shares with a worker:
 * regions of memfds mapped into the worker, used for zero-copy transfers,
 * and the ring's staging area for everything else.
 */
#include "priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mdgpud/log.h>
#include <uapi/mdgpu.h>

static int mdgpud_cuda_send_fd(struct mdgpud_bctx *ctx, int fd, uint32_t tag)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &tag, .iov_len = sizeof(tag) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	if (sendmsg(ctx->sock, &mh, MSG_NOSIGNAL) != sizeof(tag))
		return errno == EPIPE ? -ENODEV : -errno;
	return 0;
}

/* The lowest region number no region holds (the worker's are an array:
 * numbers freed by host_free/host_unregister are used again). */
static uint32_t mdgpud_cuda_region_id(const struct mdgpud_bctx *ctx)
{
	uint32_t id = MDGPUD_CUDA_RPC_REGION_STAGING + 1;

	for (size_t i = 0; i < ctx->nr_regions;) {
		if (ctx->regions[i].id == id) {
			id++;
			i = 0;
		} else {
			i++;
		}
	}
	return id;
}

/*
 * Posts MAP of [offset, offset + size) of fd (sent to the worker first)
 * as a new region, not yet waited for: *sp its slot, *idp its id (a3,
 * a4: `addr` and `flags` of a client's registration).  Room for the
 * region's record is made first, so that recording it after the answer
 * cannot fail.
 */
static int mdgpud_cuda_region_post(struct mdgpud_bctx *ctx, int fd,
				   uint64_t offset, size_t size, uint64_t addr,
				   uint32_t flags,
				   struct mdgpud_cuda_rpc_slot **sp,
				   uint32_t *idp)
{
	struct mdgpud_cuda_rpc_slot *s;
	uint32_t id;
	int ret;

	if (ctx->nr_regions == ctx->cap_regions) {
		size_t ncap = ctx->cap_regions ? ctx->cap_regions * 2 : 8;
		struct mdgpud_cuda_region *n =
			realloc(ctx->regions, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ctx->regions = n;
		ctx->cap_regions = ncap;
	}
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_MAP, &ret);
	if (!s)
		return ret;
	id = mdgpud_cuda_region_id(ctx);
	ret = mdgpud_cuda_send_fd(ctx, fd, id);
	if (ret)
		return ret;
	s->arg[0] = id;
	s->arg[1] = offset;
	s->arg[2] = size;
	s->arg[3] = addr;
	s->arg[4] = flags;
	*sp = s;
	*idp = id;
	return 0;
}

/*
 * The MAP posted in s (region id, len bytes, at ptr of the supervisor's,
 * or NULL for a client's registration) pends: the worker pins the pages
 * while the dispatcher goes on, within the hang bound; map_shared_poll()
 * or host_register_poll() collects it.
 */
static void mdgpud_cuda_pend_region(struct mdgpud_bctx *ctx,
				    struct mdgpud_cuda_rpc_slot *s,
				    uint32_t id, uint64_t len, void *ptr,
				    const char *what)
{
	mdgpud_cuda_pend_as(ctx, s, 0, ctx->be->hang_timeout_ns, what,
			    "hang_timeout_ms");
	ctx->pend_reg.active = true;
	ctx->pend_reg.id = id;
	ctx->pend_reg.len = len;
	ctx->pend_reg.ptr = ptr;
}

/* Maps [fd offset, +size) into the worker as a new region of the
 * supervisor's, at ptr here (owned: unmapped when dropped). */
static int mdgpud_cuda_region_add(struct mdgpud_bctx *ctx, int fd,
				  uint64_t offset, void *ptr, size_t size,
				  int owned)
{
	struct mdgpud_cuda_rpc_slot *s;
	uint32_t id;
	int ret;

	ret = mdgpud_cuda_region_post(ctx, fd, offset, size, 0, 0, &s, &id);
	if (ret)
		return ret;
	ret = mdgpud_cuda_call(ctx, s);
	if (ret)
		return ret;
	ctx->regions[ctx->nr_regions++] = (struct mdgpud_cuda_region){
		.ptr = ptr, .size = size, .id = id, .owned = owned };
	return 0;
}

/* Unmaps region i from the worker and forgets it. */
static void mdgpud_cuda_region_drop(struct mdgpud_bctx *ctx, size_t i)
{
	struct mdgpud_cuda_region r = ctx->regions[i];
	struct mdgpud_cuda_rpc_slot *s;
	int err;

	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_UNMAP, &err);
	if (s) {
		s->arg[0] = r.id;
		mdgpud_cuda_call(ctx, s);
	}
	if (r.owned)
		munmap(r.ptr, r.size);
	ctx->regions[i] = ctx->regions[--ctx->nr_regions];
}

/*
 * A client's registration (HOST_REGISTER): mapped by the worker at addr
 * where it can and registered with the driver (DEVICEMAP), one MAP
 * request posted and not waited for (the driver pins every page: tens of
 * ms per GiB), bounded by the hang bound.  Its answer is collected by
 * host_register_poll() (the dispatcher) or host_register() (waiting).
 */
static int mdgpud_cuda_host_register_start(struct mdgpud_bctx *ctx, int fd,
					   uint64_t offset, uint64_t len,
					   uint64_t addr, bool read_only)
{
	struct mdgpud_cuda_rpc_slot *s;
	uint32_t id;
	int ret;

	if (len > SIZE_MAX)
		return -ENOMEM;
	ret = mdgpud_cuda_region_post(ctx, fd, offset, (size_t)len, addr,
				      MDGPUD_CUDA_MAP_F_CLIENT |
				      (read_only ? MDGPUD_CUDA_MAP_F_READ_ONLY :
						   0), &s, &id);
	if (ret)
		return ret;
	mdgpud_cuda_pend_region(ctx, s, id, len, NULL, "host registration");
	return 0;
}

/*
 * The MAP's answer ret (0: mapped and registered): the region recorded,
 * then its device address asked for (HOST_DEVPTR), whole or not at all.
 */
static int mdgpud_cuda_host_register_answer(struct mdgpud_bctx *ctx, int ret,
					    uint64_t *devptr)
{
	struct mdgpud_cuda_rpc_slot *s;
	uint64_t dev, len = ctx->pend_reg.len;
	uint32_t id = ctx->pend_reg.id;
	size_t i;

	ctx->pend_reg.active = false;
	if (ret)
		return ret;
	i = ctx->nr_regions++;
	ctx->regions[i] = (struct mdgpud_cuda_region){
		.ptr = NULL, .size = (size_t)len, .id = id, .owned = 0 };
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_HOST_DEVPTR, &ret);
	if (s) {
		s->arg[0] = id;
		ret = mdgpud_cuda_call(ctx, s);
	}
	if (!ret) {
		dev = mdgpud_cuda_result(s, 0);
		/* The worker's answer is checked, never trusted. */
		if (!dev || mdgpud_cuda_result(s, 1) != len ||
		    dev > UINT64_MAX - len)
			ret = -EIO;
	}
	if (ret) {
		mdgpud_cuda_region_drop(ctx, i);
		return ret;
	}
	ctx->regions[i].devptr = dev;
	*devptr = dev;
	return 0;
}

/* -EINVAL when no registration is under way (a caller's bug). */
static int mdgpud_cuda_host_register_poll(struct mdgpud_bctx *ctx,
					  uint64_t *devptr)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	if (!ctx->pend_slot || !ctx->pend_reg.active || ctx->pend_reg.ptr)
		return -EINVAL;
	ret = mdgpud_cuda_pend_poll(ctx, &s);
	if (ret == -EINPROGRESS)
		return ret;
	return mdgpud_cuda_host_register_answer(ctx, ret, devptr);
}

static int mdgpud_cuda_host_register(struct mdgpud_bctx *ctx, int fd,
				     uint64_t offset, uint64_t len,
				     uint64_t addr, bool read_only,
				     uint64_t *devptr)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret = mdgpud_cuda_host_register_start(ctx, fd, offset, len, addr,
						  read_only);

	if (ret)
		return ret;
	ret = mdgpud_cuda_pend_wait(ctx, &s);
	return mdgpud_cuda_host_register_answer(ctx, ret, devptr);
}

static int mdgpud_cuda_host_unregister(struct mdgpud_bctx *ctx,
				       uint64_t devptr)
{
	for (size_t i = 0; i < ctx->nr_regions; i++) {
		if (!ctx->regions[i].ptr && ctx->regions[i].devptr == devptr) {
			mdgpud_cuda_region_drop(ctx, i);
			return ctx->dead ? -ENODEV : 0;
		}
	}
	return -ENOENT;
}

static void *mdgpud_cuda_host_alloc(struct mdgpud_bctx *ctx, size_t size)
{
	int fd, ret;
	void *p;

	if (size == 0 || ctx->dead)
		return NULL;
	fd = memfd_create("mdgpud-host", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	/*
	 * Huge pages, where shmem allows them (shmem_enabled "advise"): fewer,
	 * larger pages for the GPU's DMA.  Advisory; failure changes nothing.
	 */
	madvise(p, size, MADV_HUGEPAGE);
	ret = mdgpud_cuda_region_add(ctx, fd, 0, p, size, 1);
	close(fd);
	if (ret) {
		munmap(p, size);
		errno = -ret;
		return NULL;
	}
	return p;
}

static void mdgpud_cuda_host_free(struct mdgpud_bctx *ctx, void *ptr,
				  size_t size)
{
	(void)size;
	for (size_t i = 0; ptr && i < ctx->nr_regions; i++) {
		if (ctx->regions[i].ptr == ptr) {
			mdgpud_cuda_region_drop(ctx, i);
			return;
		}
	}
}

static int mdgpud_cuda_map_shared(struct mdgpud_bctx *ctx, int fd,
				  uint64_t offset, void *ptr, size_t size)
{
	if (!ptr || size == 0 || (offset & ((uint64_t)getpagesize() - 1)))
		return -EINVAL;
	return mdgpud_cuda_region_add(ctx, fd, offset, ptr, size, 0);
}

/* The same, posted and not waited for (the worker pins the pages). */
static int mdgpud_cuda_map_shared_start(struct mdgpud_bctx *ctx, int fd,
					uint64_t offset, void *ptr,
					size_t size)
{
	struct mdgpud_cuda_rpc_slot *s;
	uint32_t id;
	int ret;

	if (!ptr || size == 0 || (offset & ((uint64_t)getpagesize() - 1)))
		return -EINVAL;
	ret = mdgpud_cuda_region_post(ctx, fd, offset, size, 0, 0, &s, &id);
	if (ret)
		return ret;
	mdgpud_cuda_pend_region(ctx, s, id, size, ptr, "shared memory mapping");
	return 0;
}

/* -EINVAL when no mapping of map_shared_start() is under way. */
static int mdgpud_cuda_map_shared_poll(struct mdgpud_bctx *ctx)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	if (!ctx->pend_slot || !ctx->pend_reg.active || !ctx->pend_reg.ptr)
		return -EINVAL;
	ret = mdgpud_cuda_pend_poll(ctx, &s);
	if (ret == -EINPROGRESS)
		return ret;
	ctx->pend_reg.active = false;
	if (ret)
		return ret;
	ctx->regions[ctx->nr_regions++] = (struct mdgpud_cuda_region){
		.ptr = ctx->pend_reg.ptr, .size = (size_t)ctx->pend_reg.len,
		.id = ctx->pend_reg.id, .owned = 0 };
	return 0;
}

/* The region holding [p, p + len), or NULL (then the copy is staged). */
const struct mdgpud_cuda_region *
mdgpud_cuda_region_find(struct mdgpud_bctx *ctx, const void *p, uint64_t len)
{
	uintptr_t a = (uintptr_t)p;

	for (size_t i = 0; i < ctx->nr_regions; i++) {
		const struct mdgpud_cuda_region *r = &ctx->regions[i];
		uintptr_t b = (uintptr_t)r->ptr;

		if (r->ptr && a >= b && a - b <= r->size && len <= r->size - (a - b))
			return r;
	}
	return NULL;
}



static int mdgpud_cuda_mem_alloc(struct mdgpud_bctx *ctx, uint64_t size,
				 uint64_t *addr, uint64_t *reserved)
{
	int ret;
	struct mdgpud_cuda_rpc_slot *s = mdgpud_cuda_slot(
		ctx, MDGPUD_CUDA_RPC_MEM_ALLOC, &ret);

	if (!s)
		return ret;
	s->arg[0] = size;
	ret = mdgpud_cuda_call(ctx, s);
	if (ret)
		return ret;
	*addr = s->result[0];
	if (reserved)
		*reserved = s->result[1];
	return 0;
}

static int mdgpud_cuda_mem_free(struct mdgpud_bctx *ctx, uint64_t addr,
				uint64_t size)
{
	int ret;
	struct mdgpud_cuda_rpc_slot *s = mdgpud_cuda_slot(
		ctx, MDGPUD_CUDA_RPC_MEM_FREE, &ret);

	if (!s)
		return ret;
	s->arg[0] = addr;
	s->arg[1] = size;
	return mdgpud_cuda_call(ctx, s);
}

/* Queue an asynchronous request (no answer awaited): errors surface at the
 * next sync of its stream or slice_end. */
static int mdgpud_cuda_post_simple(struct mdgpud_bctx *ctx, uint32_t op,
				   uint64_t a0, uint64_t a1, uint64_t a2,
				   uint64_t a3)
{
	int ret;
	struct mdgpud_cuda_rpc_slot *s = mdgpud_cuda_slot(ctx, op, &ret);

	if (!s)
		return ret;
	s->arg[0] = a0;
	s->arg[1] = a1;
	s->arg[2] = a2;
	s->arg[3] = a3;
	mdgpud_cuda_post(ctx);
	return 0;
}

static int mdgpud_cuda_mem_set(struct mdgpud_bctx *ctx, uint64_t stream,
			       uint64_t addr, uint32_t value, uint32_t width,
			       uint64_t len)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	if ((width != 1 && width != 2 && width != 4) || len % width)
		return -EINVAL;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_MEMSET, &ret);
	if (!s)
		return ret;
	s->arg[0] = addr;
	s->arg[1] = value;
	s->arg[2] = len;
	s->arg[3] = width;
	s->arg[4] = stream;
	mdgpud_cuda_post(ctx);
	return 0;
}

/*
 * One host<->device copy on `stream`, zero-copy from a region or staged
 * in chunks.  With `async`, a zero-copy one is posted, not waited for
 * (the worker queues it and goes on); a staged one is always waited for,
 * since the staging area is reused by the next chunk or request.
 */
static int mdgpud_cuda_copy_host(struct mdgpud_bctx *ctx, uint32_t op,
				 uint64_t stream, uint64_t dev, uint8_t *host,
				 uint64_t len, int async)
{
	const struct mdgpud_cuda_region *r = mdgpud_cuda_region_find(ctx, host,
								     len);
	struct mdgpud_cuda_rpc_slot *s;
	const uint64_t chunk = MDGPUD_CUDA_RPC_STAGING_BYTES - 4096;
	int ret;

	if (len == 0)
		return ctx->dead ? -ENODEV : 0;
	if (r) {
		s = mdgpud_cuda_slot(ctx, op, &ret);
		if (!s)
			return ret;
		s->arg[0] = dev;
		s->arg[1] = r->id;
		s->arg[2] = (uint64_t)(host - r->ptr);
		s->arg[3] = len;
		s->arg[4] = stream;
		s->arg[5] = async ? 1 : 0;
		if (async) {
			mdgpud_cuda_post(ctx);
			return 0;
		}
		return mdgpud_cuda_call_copy(ctx, s, len);
	}
	for (uint64_t done = 0; done < len; done += chunk) {
		uint64_t n = len - done < chunk ? len - done : chunk;

		s = mdgpud_cuda_slot(ctx, op, &ret);
		if (!s)
			return ret;
		/* Earlier requests never touch staging once answered. */
		if (op == MDGPUD_CUDA_RPC_COPY_H2D)
			memcpy(ctx->shm->staging, host + done, n);
		s->arg[0] = dev + done;
		s->arg[1] = MDGPUD_CUDA_RPC_REGION_STAGING;
		s->arg[2] = 0;
		s->arg[3] = n;
		s->arg[4] = stream;
		ret = mdgpud_cuda_call_copy(ctx, s, n);
		if (ret)
			return ret;
		if (op == MDGPUD_CUDA_RPC_COPY_D2H)
			memcpy(host + done, ctx->shm->staging, n);
	}
	return 0;
}

static int mdgpud_cuda_copy_h2d(struct mdgpud_bctx *ctx, uint64_t stream,
				uint64_t dst, const void *src, uint64_t len,
				int async)
{
	return mdgpud_cuda_copy_host(ctx, MDGPUD_CUDA_RPC_COPY_H2D, stream,
				     dst, (uint8_t *)(uintptr_t)src, len,
				     async);
}

static int mdgpud_cuda_copy_d2h(struct mdgpud_bctx *ctx, uint64_t stream,
				void *dst, uint64_t src, uint64_t len,
				int async)
{
	return mdgpud_cuda_copy_host(ctx, MDGPUD_CUDA_RPC_COPY_D2H, stream,
				     src, dst, len, async);
}

static int mdgpud_cuda_copy_d2d(struct mdgpud_bctx *ctx, uint64_t stream,
				uint64_t dst, uint64_t src, uint64_t len)
{
	return mdgpud_cuda_post_simple(ctx, MDGPUD_CUDA_RPC_COPY_D2D, dst, src,
				       len, stream);
}

/*
 * The answer of a module load in `s`.  A refused image is logged at debug
 * level only (tenants choose their images): the errno, the driver's
 * CUresult and its JIT log, whose length the worker wrote is read once and
 * bounded by the inline area.
 */
static int mdgpud_cuda_module_answer(struct mdgpud_bctx *ctx,
				     struct mdgpud_cuda_rpc_slot *s, int ret,
				     uint64_t *module)
{
	uint32_t n;

	if (!ret) {
		*module = s->result[0];
		return 0;
	}
	n = *(volatile uint32_t *)&s->inline_len;
	if (n > MDGPUD_CUDA_RPC_INLINE_MAX)
		n = 0;
	mdgpud_dbg("cuda: vgpu %u: module load failed (%d, CUresult %u)%s%.*s",
		   ctx->vgpu_id, ret, ctx->last_cu, n ? ": " : "", (int)n,
		   (const char *)s->inline_data);
	return ret;
}

/*
 * A module load is posted, not waited for (rpc.c, mdgpud_cuda_pend): the
 * driver's JIT may take seconds.  Its bound is the load bound, not the
 * hang bound.  module_load() and module_load_dev() wait for it here;
 * the dispatcher starts it and polls instead.
 */
static int mdgpud_cuda_module_load_start(struct mdgpud_bctx *ctx,
					 uint32_t kind, const void *image,
					 size_t len)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	if (kind != MDGPU_MODULE_PTX && kind != MDGPU_MODULE_CUBIN)
		return -EINVAL;
	if (len == 0)
		return -EINVAL;
	if (len > MDGPU_MODULE_MAX || len >= MDGPUD_CUDA_RPC_STAGING_BYTES)
		return -E2BIG;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_MODULE_LOAD, &ret);
	if (!s)
		return ret;
	memcpy(ctx->shm->staging, image, len);
	ctx->shm->staging[len] = 0;	/* PTX is text */
	s->arg[0] = kind;
	s->arg[1] = len;
	mdgpud_cuda_pend(ctx, s, 0);
	return 0;
}

/*
 * An image in the vGPU's device memory: the worker copies it into a
 * buffer of its own and loads it from there.  The bound allows the copy's
 * transfer time before the load bound starts, as a host copy's does
 * before the hang bound.
 */
static int mdgpud_cuda_module_load_dev_start(struct mdgpud_bctx *ctx,
					     uint32_t kind, uint64_t addr,
					     uint64_t len)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	if (kind != MDGPU_MODULE_PTX && kind != MDGPU_MODULE_CUBIN)
		return -EINVAL;
	if (len == 0)
		return -EINVAL;
	if (len > MDGPU_MODULE_DEVICE_MAX)
		return -E2BIG;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_MODULE_LOAD_DEV, &ret);
	if (!s)
		return ret;
	s->arg[0] = kind;
	s->arg[1] = len;
	s->arg[2] = addr;
	mdgpud_cuda_pend(ctx, s, len * MDGPUD_CUDA_COPY_ALLOW_NS_PER_BYTE);
	return 0;
}

/* -EINVAL when no load is under way (a caller's bug). */
static int mdgpud_cuda_module_load_poll(struct mdgpud_bctx *ctx,
					uint64_t *module)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	if (!ctx->pend_slot || ctx->pend_reg.active)
		return -EINVAL;
	ret = mdgpud_cuda_pend_poll(ctx, &s);
	if (ret == -EINPROGRESS)
		return ret;
	return mdgpud_cuda_module_answer(ctx, s, ret, module);
}

static int mdgpud_cuda_module_load_wait(struct mdgpud_bctx *ctx,
					uint64_t *module)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret = mdgpud_cuda_pend_wait(ctx, &s);

	return mdgpud_cuda_module_answer(ctx, s, ret, module);
}

static int mdgpud_cuda_module_load(struct mdgpud_bctx *ctx, uint32_t kind,
				   const void *image, size_t len,
				   uint64_t *module)
{
	int ret = mdgpud_cuda_module_load_start(ctx, kind, image, len);

	return ret ? ret : mdgpud_cuda_module_load_wait(ctx, module);
}

static int mdgpud_cuda_module_load_dev(struct mdgpud_bctx *ctx, uint32_t kind,
				       uint64_t addr, uint64_t len,
				       uint64_t *module)
{
	int ret = mdgpud_cuda_module_load_dev_start(ctx, kind, addr, len);

	return ret ? ret : mdgpud_cuda_module_load_wait(ctx, module);
}

/* A synchronous request of two arguments and one result, answered in
 * about expect_ns (0: at once, mdgpud_cuda_call_expect). */
static int mdgpud_cuda_simple_expect(struct mdgpud_bctx *ctx, uint32_t op,
				     uint64_t a0, uint64_t a1,
				     uint64_t expect_ns, uint64_t *result)
{
	int ret;
	struct mdgpud_cuda_rpc_slot *s = mdgpud_cuda_slot(ctx, op, &ret);

	if (!s)
		return ret;
	s->arg[0] = a0;
	s->arg[1] = a1;
	ret = mdgpud_cuda_call_expect(ctx, s, expect_ns);
	if (!ret && result)
		*result = s->result[0];
	return ret;
}

static int mdgpud_cuda_simple(struct mdgpud_bctx *ctx, uint32_t op,
			      uint64_t a0, uint64_t a1, uint64_t *result)
{
	return mdgpud_cuda_simple_expect(ctx, op, a0, a1, 0, result);
}

static int mdgpud_cuda_module_unload(struct mdgpud_bctx *ctx, uint64_t module)
{
	return mdgpud_cuda_simple(ctx, MDGPUD_CUDA_RPC_MODULE_UNLOAD, module, 0,
				  NULL);
}

/*
 * The worker answers the function and its local memory per thread, which
 * the driver holds as an int: a larger answer is the worker's error.
 */
static int mdgpud_cuda_func_get(struct mdgpud_bctx *ctx, uint64_t module,
				const char *name, uint64_t *func,
				uint64_t *local_bytes)
{
	size_t n = strnlen(name, MDGPU_NAME_MAX + 1);
	struct mdgpud_cuda_rpc_slot *s;
	uint64_t local;
	int ret;

	if (n == 0)
		return -EINVAL;
	if (n > MDGPU_NAME_MAX)
		return -E2BIG;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_FUNC_GET, &ret);
	if (!s)
		return ret;
	s->arg[0] = module;
	memcpy(s->inline_data, name, n);
	s->inline_len = (uint32_t)n;
	ret = mdgpud_cuda_call(ctx, s);
	if (ret)
		return ret;
	local = mdgpud_cuda_result(s, 1);
	if (local > INT32_MAX)
		return -EIO;
	*func = mdgpud_cuda_result(s, 0);
	if (local_bytes)
		*local_bytes = local;
	return 0;
}

/*
 * A big parameter area for the next launch (cuda_rpc.h): the next in
 * turn, once the launch that used it last is done (a ring of them, so
 * that is rarely a wait).
 */
static int mdgpud_cuda_big_take(struct mdgpud_bctx *ctx, uint32_t *area)
{
	uint32_t k = ctx->big_next % MDGPUD_CUDA_RPC_BIG_SLOTS;
	int ret;

	if (ctx->big_busy[k]) {
		ret = mdgpud_cuda_wait_done(ctx, ctx->big_done[k]);
		if (ret)
			return ret;
		ctx->big_busy[k] = 0;
	}
	ctx->big_next++;
	*area = k;
	return 0;
}

static int mdgpud_cuda_launch(struct mdgpud_bctx *ctx, uint64_t stream,
			      const struct mdgpud_launch *l)
{
	struct mdgpud_cuda_rpc_slot *s;
	uint8_t *data;
	uint32_t big = 0;
	int ret;

	if (l->params_len > MDGPU_PARAMS_MAX)
		return -E2BIG;
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_LAUNCH, &ret);
	if (!s)
		return ret;
	data = s->inline_data;
	if (l->params_len > MDGPUD_CUDA_RPC_INLINE_MAX) {
		ret = mdgpud_cuda_big_take(ctx, &big);
		if (ret)
			return ret;
		data = ctx->shm->big[big];
		big++;				/* a4's high half: area + 1 */
	}
	s->arg[0] = l->func;
	s->arg[1] = l->grid.x | (uint64_t)l->grid.y << 32;
	s->arg[2] = l->grid.z | (uint64_t)l->block.x << 32;
	s->arg[3] = l->block.y | (uint64_t)l->block.z << 32;
	s->arg[4] = l->shared_bytes | (uint64_t)big << 32;
	s->arg[5] = stream;
	s->arg[6] = l->flags | (uint64_t)l->cluster << 32;
	if (l->params_len)
		memcpy(data, l->params, l->params_len);
	s->inline_len = l->params_len;
	mdgpud_cuda_post(ctx);
	if (big) {
		/* Free once `done` reaches this request's number + 1. */
		ctx->big_done[big - 1] = ctx->tail;
		ctx->big_busy[big - 1] = 1;
	}
	return 0;
}

static int mdgpud_cuda_builtin(struct mdgpud_bctx *ctx, uint64_t stream,
			       uint32_t kernel, const uint64_t arg[5],
			       uint64_t *result)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	switch (kernel) {
	case MDGPU_BUILTIN_FILL_U32:
	case MDGPU_BUILTIN_ADD_U32:
	case MDGPU_BUILTIN_CHECKSUM:
		break;
	case MDGPU_BUILTIN_SPIN_NS:
		if (arg[0] > MDGPU_SPIN_NS_MAX)
			return -E2BIG;
		break;
	default:
		return -EINVAL;
	}
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_BUILTIN, &ret);
	if (!s)
		return ret;
	s->arg[0] = kernel;
	memcpy(&s->arg[1], arg, 5 * sizeof(arg[0]));
	s->arg[6] = stream;
	if (kernel != MDGPU_BUILTIN_CHECKSUM) {
		mdgpud_cuda_post(ctx);
		if (result)
			*result = 0;
		return 0;
	}
	ret = mdgpud_cuda_call(ctx, s);
	if (!ret && result)
		*result = s->result[0];
	return ret;
}

static int mdgpud_cuda_event_create(struct mdgpud_bctx *ctx, uint32_t flags,
				    uint64_t *event)
{
	return mdgpud_cuda_simple(ctx, MDGPUD_CUDA_RPC_EVENT_CREATE, flags, 0,
				  event);
}

static int mdgpud_cuda_event_record(struct mdgpud_bctx *ctx, uint64_t stream,
				    uint64_t event)
{
	return mdgpud_cuda_post_simple(ctx, MDGPUD_CUDA_RPC_EVENT_RECORD,
				       event, stream, 0, 0);
}

static int mdgpud_cuda_event_elapsed(struct mdgpud_bctx *ctx, uint64_t start,
				     uint64_t end, uint64_t *ns)
{
	return mdgpud_cuda_simple(ctx, MDGPUD_CUDA_RPC_EVENT_ELAPSED, start,
				  end, ns);
}

static int mdgpud_cuda_event_destroy(struct mdgpud_bctx *ctx, uint64_t event)
{
	return mdgpud_cuda_simple(ctx, MDGPUD_CUDA_RPC_EVENT_DESTROY, event, 0,
				  NULL);
}

static int mdgpud_cuda_sync(struct mdgpud_bctx *ctx, uint64_t stream)
{
	return mdgpud_cuda_simple(ctx, MDGPUD_CUDA_RPC_SYNC, stream, 0, NULL);
}

static int mdgpud_cuda_slice_begin(struct mdgpud_bctx *ctx)
{
	return mdgpud_cuda_post_simple(ctx, MDGPUD_CUDA_RPC_SLICE_BEGIN, 0, 0, 0,
				       0);
}

/*
 * Lets ctx's worker poll its ring until until_ns instead of sleeping once
 * it is idle (cuda_rpc.h), so that its tenant, coming back from idle
 * within the window, pays no futex wake-up of the worker (about 45 us
 * at the median on the H100 machine, milliseconds at the tail:
 * Documentation/daemon.md, "Waking from idle").  At most nr_pollers
 * workers hold a grant: a new one takes the free entry or the one that
 * ends first, i.e. the least recently active worker's, whose grant is
 * taken back (it sees poll_until_ns drop and sleeps).
 */
void mdgpud_cuda_poll_grant(struct mdgpud_bctx *ctx, uint64_t until_ns)
{
	struct mdgpud_backend *be = ctx->be;
	struct mdgpud_cuda_poller *slot = NULL;

	if (!be->nr_pollers || ctx->dead)
		return;
	for (uint32_t i = 0; i < be->nr_pollers; i++) {
		struct mdgpud_cuda_poller *p = &be->pollers[i];

		if (p->ctx == ctx) {
			slot = p;
			break;
		}
		if (!slot || p->until_ns < slot->until_ns)
			slot = p;
	}
	if (slot->ctx && slot->ctx != ctx)
		atomic_store(&slot->ctx->shm->poll_until_ns, 0);
	slot->ctx = ctx;
	slot->until_ns = until_ns;
	atomic_store(&ctx->shm->poll_until_ns, until_ns);
}

/* ctx goes away: its grant, if any, is freed. */
void mdgpud_cuda_poll_drop(struct mdgpud_bctx *ctx)
{
	struct mdgpud_backend *be = ctx->be;

	for (uint32_t i = 0; i < be->nr_pollers; i++) {
		if (be->pollers[i].ctx == ctx) {
			be->pollers[i].ctx = NULL;
			be->pollers[i].until_ns = 0;
		}
	}
}

/*
 * The end of a slice: the worker drains the context's work.  Before it is
 * posted, the worker gets a poll grant from the expected end of that drain
 * on: a tenant that ran a slice is the one most likely to come back soon.
 */
static int mdgpud_cuda_slice_end_post(struct mdgpud_bctx *ctx,
				      uint64_t expect_ns)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret;

	if (ctx->be->poll_ns)
		mdgpud_cuda_poll_grant(ctx, mdgpud_cuda_now_ns() + expect_ns +
				       ctx->be->poll_ns);
	s = mdgpud_cuda_slot(ctx, MDGPUD_CUDA_RPC_SLICE_END, &ret);
	if (!s)
		return ret;
	s->arg[0] = expect_ns;
	s->arg[1] = 0;
	mdgpud_cuda_post_expect(ctx, s, expect_ns);
	return 0;
}

/* The answer to slice_end_post(), bounded from its post: *gpu_ns. */
static int mdgpud_cuda_slice_end_wait(struct mdgpud_bctx *ctx,
				      uint64_t *gpu_ns)
{
	struct mdgpud_cuda_rpc_slot *s;
	int ret = mdgpud_cuda_wait_posted(ctx, &s);

	if (!ret && gpu_ns)
		*gpu_ns = mdgpud_cuda_result(s, 0);
	return ret;
}

static int mdgpud_cuda_slice_end(struct mdgpud_bctx *ctx, uint64_t expect_ns,
				 uint64_t *gpu_ns)
{
	int ret = mdgpud_cuda_slice_end_post(ctx, expect_ns);

	return ret ? ret : mdgpud_cuda_slice_end_wait(ctx, gpu_ns);
}

/*
 * Work for this context is expected within about within_ns (the running
 * slice's drain): ask its worker to spin until shortly after, waking it if
 * it sleeps, so that the next slice's first request is taken at once.  A
 * hint only: a lost wake-up or a wrong guess costs latency, not
 * correctness; the worker spins only across the expected time (cuda_rpc.h),
 * and the hint reaches at most MDGPUD_CUDA_HINT_AHEAD_MAX_NS ahead.
 */
static void mdgpud_cuda_expect_work(struct mdgpud_bctx *ctx,
				    uint64_t within_ns)
{
	struct mdgpud_cuda_rpc_shm *shm = ctx->shm;

	if (ctx->dead)
		return;
	within_ns += MDGPUD_CUDA_EXPECT_MARGIN_NS;
	if (within_ns > MDGPUD_CUDA_HINT_AHEAD_MAX_NS)
		within_ns = MDGPUD_CUDA_HINT_AHEAD_MAX_NS;
	atomic_store(&shm->spin_until_ns, mdgpud_cuda_now_ns() + within_ns);
	if (atomic_load(&shm->worker_sleeping))
		mdgpud_cuda_futex_wake(&shm->req_tail);
}

static int mdgpud_cuda_ctx_status(const struct mdgpud_bctx *ctx)
{
	if (ctx->hung)
		return -ETIMEDOUT;
	if (!ctx->dead)
		return 0;
	return ctx->lost_cu ? -EIO : -ENODEV;	/* a GPU fault, or gone */
}

const struct mdgpud_backend_ops mdgpud_backend_cuda = {
	.name = "cuda",
	.open = mdgpud_cuda_open,
	.close = mdgpud_cuda_close,
	.ctx_create = mdgpud_cuda_ctx_create,
	.ctx_create_spatial = mdgpud_cuda_ctx_create_spatial,
	.ctx_start = mdgpud_cuda_ctx_start,
	.ctx_start_poll = mdgpud_cuda_ctx_start_poll,
	.ctx_destroy = mdgpud_cuda_ctx_destroy,
	.ctx_status = mdgpud_cuda_ctx_status,
	.host_alloc = mdgpud_cuda_host_alloc,
	.host_free = mdgpud_cuda_host_free,
	.map_shared = mdgpud_cuda_map_shared,
	.map_shared_start = mdgpud_cuda_map_shared_start,
	.map_shared_poll = mdgpud_cuda_map_shared_poll,
	.mem_alloc = mdgpud_cuda_mem_alloc,
	.mem_free = mdgpud_cuda_mem_free,
	.mem_set = mdgpud_cuda_mem_set,
	.copy_h2d = mdgpud_cuda_copy_h2d,
	.copy_d2h = mdgpud_cuda_copy_d2h,
	.copy_d2d = mdgpud_cuda_copy_d2d,
	.module_load = mdgpud_cuda_module_load,
	.module_load_dev = mdgpud_cuda_module_load_dev,
	.module_load_start = mdgpud_cuda_module_load_start,
	.module_load_dev_start = mdgpud_cuda_module_load_dev_start,
	.module_load_poll = mdgpud_cuda_module_load_poll,
	.pend_abort = mdgpud_cuda_pend_abort,
	.module_unload = mdgpud_cuda_module_unload,
	.func_get = mdgpud_cuda_func_get,
	.launch = mdgpud_cuda_launch,
	.builtin = mdgpud_cuda_builtin,
	.event_create = mdgpud_cuda_event_create,
	.event_record = mdgpud_cuda_event_record,
	.event_elapsed = mdgpud_cuda_event_elapsed,
	.event_destroy = mdgpud_cuda_event_destroy,
	.sync = mdgpud_cuda_sync,
	.slice_begin = mdgpud_cuda_slice_begin,
	.slice_end = mdgpud_cuda_slice_end,
	.slice_end_post = mdgpud_cuda_slice_end_post,
	.slice_end_wait = mdgpud_cuda_slice_end_wait,
	.expect_work = mdgpud_cuda_expect_work,
	.func_info = mdgpud_cuda_func_info,
	.func_set_attr = mdgpud_cuda_func_set_attr,
	.module_global = mdgpud_cuda_module_global,
	.module_funcs = mdgpud_cuda_module_funcs,
	.module_link = mdgpud_cuda_module_link,
	.ctx_limit = mdgpud_cuda_ctx_limit,
	.occupancy = mdgpud_cuda_occupancy,
	.host_devptr = mdgpud_cuda_host_devptr,
	.host_register = mdgpud_cuda_host_register,
	.host_register_start = mdgpud_cuda_host_register_start,
	.host_register_poll = mdgpud_cuda_host_register_poll,
	.host_unregister = mdgpud_cuda_host_unregister,
	.stream_create = mdgpud_cuda_stream_create,
	.stream_destroy = mdgpud_cuda_stream_destroy,
	.stream_wait_event = mdgpud_cuda_stream_wait_event,
	.stream_query = mdgpud_cuda_stream_query,
	.stream_memop = mdgpud_cuda_stream_memop,
	.event_query = mdgpud_cuda_event_query,
	.event_sync = mdgpud_cuda_event_sync,
	.busy = mdgpud_cuda_busy,
	.stream_priorities = mdgpud_cuda_stream_priorities,
	.err_code = mdgpud_cuda_err_code,
	.err_clear = mdgpud_cuda_err_clear,
};
