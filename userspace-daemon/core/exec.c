// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Execution of validated commands (mdgpud_validate() ran first): the
 * backend ops, allocation accounting, handle tables, IOVA bounce copies.
 */
#include <errno.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "core_priv.h"

/* Copy between device memory and guest IOVA through the bounce buffer. */
static int mdgpud_exec_iova_copy(struct mdgpud_vgpu *v,
				 const struct mdgpud_vcmd *vc)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint64_t done = 0, len = vc->copy.len;
	int ret = 0;

	while (done < len && !ret) {
		uint64_t n = len - done < v->bounce_size ? len - done :
							  v->bounce_size;
		if (vc->copy.dir == MDGPUD_COPY_H2D) {
			ret = v->tops->dma(v->tpriv, vc->copy.host.addr + done,
					   v->bounce, n, false);
			if (!ret)
				ret = b->copy_h2d(v->bctx, vc->stream,
						  vc->copy.dev_dst + done,
						  v->bounce, n, 0);
		} else {
			ret = b->copy_d2h(v->bctx, vc->stream, v->bounce,
					  vc->copy.dev_src + done, n, 0);
			if (!ret)
				ret = v->tops->dma(v->tpriv,
						   vc->copy.host.addr + done,
						   v->bounce, n, true);
		}
		done += n;
	}
	return ret;
}

static int mdgpud_exec_alloc(struct mdgpud_vgpu *v, uint64_t size,
			     uint64_t *addr)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint64_t reserved;
	int ret;

	ret = mdgpud_memtab_precheck(v->mem, size);
	if (ret)
		return ret;
	ret = b->mem_alloc(v->bctx, size, addr, &reserved);
	if (ret)
		return ret;
	pthread_mutex_lock(&v->core->lock);
	ret = mdgpud_memtab_insert(v->mem, *addr, size, reserved);
	pthread_mutex_unlock(&v->core->lock);
	if (ret) {
		b->mem_free(v->bctx, *addr, size);
		return ret == -EEXIST ? -EIO : ret;	/* backend bug */
	}
	return 0;
}

/*
 * The file a client sent for HOST_REGISTER: shared memory (tmpfs, which
 * memfds live on, or hugetlbfs), whose pages the GPU driver may pin for
 * as long as the registration lasts and whose access cannot stall the
 * worker (no file system behind it), holding [offset, offset + len).
 * Whether the client may write it, the mapping decides (its open mode).
 */
static int mdgpud_exec_host_file(int fd, uint64_t offset, uint64_t len)
{
	struct statfs fs;
	struct stat st;
	uint64_t end;

	if (fstat(fd, &st) || fstatfs(fd, &fs))
		return -errno;
	if (!S_ISREG(st.st_mode) || (fs.f_type != TMPFS_MAGIC &&
				     fs.f_type != HUGETLBFS_MAGIC))
		return -EINVAL;
	if (__builtin_add_overflow(offset, len, &end) || st.st_size < 0 ||
	    end > (uint64_t)st.st_size)
		return -ERANGE;
	return 0;
}

/*
 * HOST_REGISTER's checks: the descriptor the client sent is taken (*fd;
 * the caller closes it whatever the outcome, so that a refused
 * registration leaves nothing behind in the transport), the file is
 * shared memory holding the range, and the vGPU's registrations stay
 * within register_mib_max.
 */
static int mdgpud_exec_host_register_prep(struct mdgpud_vgpu *v,
					  const struct mdgpud_vcmd *vc,
					  int *fd)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint64_t max = (uint64_t)v->core->cfg.register_mib_max << 20;
	uint64_t len = vc->host_register.len, total;
	int ret;

	*fd = -1;
	if (!v->tops->take_fd)
		return -EOPNOTSUPP;
	*fd = v->tops->take_fd(v->tpriv, vc->host_register.token);
	if (*fd < 0)
		return *fd;
	ret = mdgpud_exec_host_file(*fd, vc->host_register.offset, len);
	if (!ret && (!b->host_register || !b->host_unregister))
		ret = -EOPNOTSUPP;
	if (!ret && (__builtin_add_overflow(v->host_reg_bytes, len, &total) ||
		     total > max))
		ret = -ENOMEM;
	return ret;
}

/* A registration of len bytes that the backend made at dev: counted. */
static int mdgpud_exec_host_register_done(struct mdgpud_vgpu *v, uint64_t dev,
					  uint64_t len, uint64_t *result)
{
	int ret;

	pthread_mutex_lock(&v->core->lock);
	ret = mdgpud_memtab_insert_host(v->mem, dev, len);
	if (!ret)
		v->host_reg_bytes += len;
	pthread_mutex_unlock(&v->core->lock);
	if (ret) {
		v->core->bops->host_unregister(v->bctx, dev);
		return ret == -EEXIST ? -EIO : ret;	/* backend bug */
	}
	*result = dev;
	return 0;
}

/* HOST_REGISTER where the backend cannot start one without waiting. */
static int mdgpud_exec_host_register(struct mdgpud_vgpu *v,
				     const struct mdgpud_vcmd *vc,
				     uint64_t *result)
{
	uint64_t dev;
	int fd, ret = mdgpud_exec_host_register_prep(v, vc, &fd);

	if (!ret)
		ret = v->core->bops->host_register(
			v->bctx, fd, vc->host_register.offset,
			vc->host_register.len, vc->host_register.addr,
			vc->host_register.flags & MDGPU_HOST_REG_F_READ_ONLY,
			&dev);
	if (fd >= 0)
		close(fd);
	if (ret)
		return ret;
	return mdgpud_exec_host_register_done(v, dev, vc->host_register.len,
					      result);
}

static int mdgpud_exec_host_unregister(struct mdgpud_vgpu *v, uint64_t addr)
{
	struct mdgpud_mem_entry e;
	int ret;

	pthread_mutex_lock(&v->core->lock);
	ret = mdgpud_memtab_remove_host(v->mem, addr, &e);
	if (!ret)
		v->host_reg_bytes -= e.size;
	pthread_mutex_unlock(&v->core->lock);
	if (ret)
		return ret;
	return v->core->bops->host_unregister(v->bctx, e.addr);
}

/* Reads len bytes of a validated host buffer (aperture or guest IOVA). */
int mdgpud_host_read(struct mdgpud_vgpu *v, const struct mdgpud_hostbuf *hb,
		     void *p, uint64_t len)
{
	if (hb->ptr) {
		memcpy(p, hb->ptr, len);
		return 0;
	}
	return v->tops->dma(v->tpriv, hb->addr, p, len, false);
}

/* Writes len bytes to a validated host buffer (none: no DMA of 0). */
int mdgpud_host_write(struct mdgpud_vgpu *v, const struct mdgpud_hostbuf *hb,
		      const void *p, uint64_t len)
{
	if (!len)
		return 0;
	if (hb->ptr) {
		memcpy(hb->ptr, p, len);
		return 0;
	}
	return v->tops->dma(v->tpriv, hb->addr, (void *)p, len, true);
}

/*
 * A module image in host memory (aperture or guest IOVA), copied once
 * into *img (malloc'ed, NUL-terminated): the guest may rewrite the
 * aperture while the driver compiles.
 */
static int mdgpud_exec_module_image(struct mdgpud_vgpu *v,
				    const struct mdgpud_vcmd *vc, uint8_t **img)
{
	uint8_t *p = malloc(vc->module_load.len + 1);
	int ret;

	if (!p)
		return -ENOMEM;
	ret = mdgpud_host_read(v, &vc->module_load.image, p,
			       vc->module_load.len);
	if (ret) {
		free(p);
		return ret;
	}
	p[vc->module_load.len] = '\0';	/* PTX is text */
	*img = p;
	return 0;
}

/* No room for a module's handle: refused before the driver compiles it. */
static int mdgpud_exec_module_room(const struct mdgpud_vgpu *v)
{
	return mdgpud_handles_count(v->handles) >= v->core->cfg.max_handles ?
	       -ENOSPC : 0;
}

/* The handle of a module the backend loaded (unloaded if none is had). */
static int mdgpud_exec_module_handle(struct mdgpud_vgpu *v, uint64_t module,
				     uint64_t *result)
{
	uint32_t h;
	int ret = mdgpud_handles_add(v->handles, MDGPUD_H_MODULE, module, 0,
				     &h);

	if (ret) {
		v->core->bops->module_unload(v->bctx, module);
		return ret;
	}
	*result = h;
	return 0;
}

static int mdgpud_exec_module_load(struct mdgpud_vgpu *v,
				   const struct mdgpud_vcmd *vc,
				   uint64_t *result)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint64_t module;
	uint8_t *img;
	int ret = mdgpud_exec_module_room(v);

	if (ret)
		return ret;
	/* From device memory the backend reads the image itself: the
	 * supervisor never holds a copy of it. */
	if (vc->module_load.from_dev) {
		ret = b->module_load_dev ?
		      b->module_load_dev(v->bctx, vc->module_load.kind,
					 vc->module_load.dev,
					 vc->module_load.len, &module) :
		      -EOPNOTSUPP;
	} else {
		ret = mdgpud_exec_module_image(v, vc, &img);
		if (ret)
			return ret;
		ret = b->module_load(v->bctx, vc->module_load.kind, img,
				     vc->module_load.len, &module);
		free(img);
	}
	if (ret)
		return ret;
	return mdgpud_exec_module_handle(v, module, result);
}

/*
 * Module loads and host registrations pend where the backend can start
 * them without waiting (module_load_start, host_register_start): the
 * driver's JIT of a PTX may take seconds and its pinning of a
 * registration tens of ms per GiB, which the dispatcher spends on the
 * other vGPUs (dispatch.c).
 */
bool mdgpud_exec_pends(const struct mdgpud_vgpu *v,
		       const struct mdgpud_vcmd *vc)
{
	const struct mdgpud_backend_ops *b = v->core->bops;

	if (!b->pend_abort)
		return false;
	switch (vc->opcode) {
	case MDGPU_OP_MODULE_LOAD:
		if (!b->module_load_poll)
			return false;
		return vc->module_load.from_dev ?
		       b->module_load_dev_start != NULL :
		       b->module_load_start != NULL;
	case MDGPU_OP_HOST_REGISTER:
		return b->host_register_start && b->host_register_poll;
	default:
		return false;
	}
}

static int mdgpud_exec_start_load(struct mdgpud_vgpu *v,
				  const struct mdgpud_vcmd *vc)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint8_t *img;
	int ret = mdgpud_exec_module_room(v);

	if (ret)
		return ret;
	if (vc->module_load.from_dev)
		return b->module_load_dev_start(v->bctx, vc->module_load.kind,
						vc->module_load.dev,
						vc->module_load.len);
	ret = mdgpud_exec_module_image(v, vc, &img);
	if (ret)
		return ret;
	ret = b->module_load_start(v->bctx, vc->module_load.kind, img,
				   vc->module_load.len);
	free(img);
	return ret;
}

static int mdgpud_exec_start_register(struct mdgpud_vgpu *v,
				      const struct mdgpud_vcmd *vc)
{
	int fd, ret = mdgpud_exec_host_register_prep(v, vc, &fd);

	if (!ret)
		ret = v->core->bops->host_register_start(
			v->bctx, fd, vc->host_register.offset,
			vc->host_register.len, vc->host_register.addr,
			vc->host_register.flags & MDGPU_HOST_REG_F_READ_ONLY);
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * Starts a command that pends (mdgpud_exec_pends); 0 once under way.
 * v->pending.len keeps what finishing it needs (a registration's
 * length): the dispatcher fills in the rest of v->pending.
 */
int mdgpud_exec_start(struct mdgpud_vgpu *v, const struct mdgpud_vcmd *vc)
{
	if (vc->opcode == MDGPU_OP_HOST_REGISTER) {
		v->pending.len = vc->host_register.len;
		return mdgpud_exec_start_register(v, vc);
	}
	return mdgpud_exec_start_load(v, vc);
}

/* v's pending command's result once done: -EINPROGRESS until then. */
int mdgpud_exec_finish(struct mdgpud_vgpu *v, uint64_t *result)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint64_t handle;
	int ret;

	if (v->pending.opcode == MDGPU_OP_HOST_REGISTER) {
		ret = b->host_register_poll(v->bctx, &handle);
		if (ret)
			return ret;
		return mdgpud_exec_host_register_done(v, handle,
						      v->pending.len, result);
	}
	ret = b->module_load_poll(v->bctx, &handle);
	if (ret)
		return ret;
	return mdgpud_exec_module_handle(v, handle, result);
}

void mdgpud_exec_abort(struct mdgpud_vgpu *v)
{
	v->core->bops->pend_abort(v->bctx);
}

/* The local memory the launch makes the driver reserve is charged first
 * (core/info.c): a launch past the quota never reaches the backend. */
static int mdgpud_exec_launch(struct mdgpud_vgpu *v,
			      const struct mdgpud_vcmd *vc)
{
	struct mdgpud_launch l = {
		.func = vc->launch.func,
		.grid = vc->launch.grid,
		.block = vc->launch.block,
		.shared_bytes = vc->launch.shared_bytes,
		.flags = vc->launch.flags,
		.cluster = vc->launch.cluster,
		.params_len = vc->launch.params_len,
		.params = vc->launch.params,
	};
	int ret = mdgpud_info_launch(v, vc->launch.local_bytes);

	if (ret)
		return ret;
	return v->core->bops->launch(v->bctx, vc->stream, &l);
}

int mdgpud_exec(struct mdgpud_vgpu *v, struct mdgpud_vcmd *vc,
		uint64_t *result, uint64_t *result2)
{
	struct mdgpud_core *c = v->core;
	const struct mdgpud_backend_ops *b = c->bops;
	struct mdgpud_mem_entry e;
	uint64_t val, local;
	uint32_t h;
	bool async;
	int ret;

	switch (vc->opcode) {
	case MDGPU_OP_NOP:
		return 0;
	case MDGPU_OP_MEM_ALLOC:
		return mdgpud_exec_alloc(v, vc->alloc.size, result);
	case MDGPU_OP_MEM_FREE:
		pthread_mutex_lock(&c->lock);
		ret = mdgpud_memtab_remove(v->mem, vc->free.addr, &e);
		pthread_mutex_unlock(&c->lock);
		if (ret)
			return ret;
		return b->mem_free(v->bctx, e.addr, e.size);
	case MDGPU_OP_HOST_REGISTER:
		return mdgpud_exec_host_register(v, vc, result);
	case MDGPU_OP_HOST_UNREGISTER:
		return mdgpud_exec_host_unregister(v, vc->free.addr);
	case MDGPU_OP_HOST_FUNC:
		/* The dispatcher holds the vGPU after it (dispatch.c). */
		return v->tops->host_done ? 0 : -EOPNOTSUPP;
	case MDGPU_OP_MEMSET:
		return b->mem_set(v->bctx, vc->stream, vc->memset.addr,
				  vc->memset.value, vc->memset.width,
				  vc->memset.len);
	case MDGPU_OP_COPY:
		if (!vc->copy.len)
			return 0;
		async = (vc->flags & MDGPU_CMD_F_ASYNC) != 0;
		if (vc->copy.dir == MDGPUD_COPY_D2D)
			ret = b->copy_d2d(v->bctx, vc->stream, vc->copy.dev_dst,
					  vc->copy.dev_src, vc->copy.len);
		else if (!vc->copy.host.ptr)	/* staged: always synchronous */
			ret = mdgpud_exec_iova_copy(v, vc);
		else if (vc->copy.dir == MDGPUD_COPY_H2D)
			ret = b->copy_h2d(v->bctx, vc->stream, vc->copy.dev_dst,
					  vc->copy.host.ptr, vc->copy.len,
					  async);
		else
			ret = b->copy_d2h(v->bctx, vc->stream, vc->copy.host.ptr,
					  vc->copy.dev_src, vc->copy.len,
					  async);
		if (!ret) {
			pthread_mutex_lock(&c->lock);
			v->bytes_copied += vc->copy.len;
			pthread_mutex_unlock(&c->lock);
		}
		return ret;
	case MDGPU_OP_MODULE_LOAD:
		return mdgpud_exec_module_load(v, vc, result);
	case MDGPU_OP_MODULE_LINK:
		return mdgpud_link_exec(v, vc, result);
	case MDGPU_OP_MODULE_UNLOAD:
		ret = b->module_unload(v->bctx, vc->module_unload.module);
		if (ret)
			return ret;
		mdgpud_handles_del_children(v->handles,
					    vc->module_unload.handle);
		pthread_mutex_lock(&c->lock);
		mdgpud_memtab_remove_module(v->mem, vc->module_unload.handle);
		pthread_mutex_unlock(&c->lock);
		return mdgpud_handles_del(v->handles, vc->module_unload.handle,
					  MDGPUD_H_MODULE);
	case MDGPU_OP_FUNC_GET:
		if (!vc->func_get.name_src.ptr) {
			ret = v->tops->dma(v->tpriv, vc->func_get.name_src.addr,
					   vc->func_get.name,
					   vc->func_get.name_len, false);
			if (!ret)
				ret = mdgpud_check_name(vc->func_get.name,
							vc->func_get.name_len);
			if (ret)
				return ret;
		}
		/* No room for its handle: refused before the backend is
		 * asked, so a full table costs the worker nothing. */
		if (mdgpud_handles_count(v->handles) >=
		    v->core->cfg.max_handles)
			return -ENOSPC;
		/* The function's local memory is learnt with it, once, and
		 * kept with its handle, where LAUNCH's validation finds it
		 * without asking the backend again. */
		ret = b->func_get(v->bctx, vc->func_get.module,
				  vc->func_get.name, &val, &local);
		if (ret)
			return ret;
		ret = mdgpud_handles_add_extra(v->handles, MDGPUD_H_FUNC, val,
					       vc->func_get.module_handle,
					       local, &h);
		if (!ret)
			*result = h;
		return ret;
	case MDGPU_OP_LAUNCH:
		if (vc->launch.params_len && !vc->launch.params_src.ptr) {
			ret = v->tops->dma(v->tpriv, vc->launch.params_src.addr,
					   vc->launch.params,
					   vc->launch.params_len, false);
			if (ret)
				return ret;
		}
		return mdgpud_exec_launch(v, vc);
	case MDGPU_OP_BUILTIN:
		return b->builtin(v->bctx, vc->stream, vc->builtin.kernel,
				  vc->builtin.arg, result);
	case MDGPU_OP_EVENT_CREATE:
		ret = b->event_create(v->bctx, vc->event.flags, &val);
		if (ret)
			return ret;
		ret = mdgpud_handles_add(v->handles, MDGPUD_H_EVENT, val, 0,
					 &h);
		if (ret) {
			b->event_destroy(v->bctx, val);
			return ret;
		}
		*result = h;
		return 0;
	case MDGPU_OP_EVENT_RECORD:
		return b->event_record(v->bctx, vc->stream, vc->event.event);
	case MDGPU_OP_EVENT_ELAPSED:
		return b->event_elapsed(v->bctx, vc->event.event,
					vc->event.end, result);
	case MDGPU_OP_EVENT_DESTROY:
		ret = b->event_destroy(v->bctx, vc->event.event);
		if (ret)
			return ret;
		return mdgpud_handles_del(v->handles, vc->event.handle,
					  MDGPUD_H_EVENT);
	case MDGPU_OP_SYNC:
		return b->sync(v->bctx, vc->stream);
	case MDGPU_OP_QUERY:
		switch (vc->query.what) {
		case MDGPU_QUERY_FB_QUOTA:
			*result = mdgpud_memtab_quota(v->mem);
			*result2 = mdgpud_memtab_requested(v->mem);
			return 0;
		case MDGPU_QUERY_FB_USED:
			*result = mdgpud_memtab_used(v->mem);
			*result2 = mdgpud_memtab_requested(v->mem);
			return 0;
		case MDGPU_QUERY_SM_COUNT:
			*result = c->gpu.sm_count;
			return 0;
		case MDGPU_QUERY_ABI_VERSION:
			*result = MDGPU_ABI_VERSION;
			return 0;
		case MDGPU_QUERY_BACKEND:
			*result = c->gpu.kind;
			return 0;
		case MDGPU_QUERY_APERTURE_DEVPTR:
			return mdgpud_info_exec(v, vc, result, result2);
		case MDGPU_QUERY_STREAM_PRIORITIES:
			return mdgpud_exec_stream_priorities(v, result,
							     result2);
		case MDGPU_QUERY_GPU_TIME:
			pthread_mutex_lock(&c->lock);
			*result = mdgpud_usage_window(&v->usage,
						      mdgpud_now_ns());
			pthread_mutex_unlock(&c->lock);
			*result2 = MDGPUD_USAGE_WINDOW_NS;
			return 0;
		}
		return -EINVAL;
	case MDGPU_OP_DEVICE_INFO:
	case MDGPU_OP_FUNC_INFO:
	case MDGPU_OP_FUNC_SET_ATTR:
	case MDGPU_OP_MODULE_GLOBAL:
	case MDGPU_OP_CTX_LIMIT:
	case MDGPU_OP_OCCUPANCY:
	case MDGPU_OP_MODULE_FUNCS:
		return mdgpud_info_exec(v, vc, result, result2);
	default:
		return mdgpud_exec_stream(v, vc, result);
	}
}
