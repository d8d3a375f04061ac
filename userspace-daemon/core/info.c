// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Execution of the ABI 1.2 introspection commands (validated first):
 * DEVICE_INFO, FUNC_INFO, FUNC_SET_ATTR, MODULE_GLOBAL, CTX_LIMIT,
 * OCCUPANCY and QUERY APERTURE_DEVPTR, and of ABI 1.5's MODULE_FUNCS; the
 * vGPU's UUID; the charge of the local memory a LAUNCH makes the driver
 * reserve; the release of what CTX_LIMIT and launches changed.
 * Documentation/abi.md says what each answers.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core_priv.h"
#include "mdgpud/cuda_values.h"
#include "mdgpud/log.h"

/* Parameters a FUNC_INFO answer of at most MDGPU_INFO_MAX bytes holds. */
#define MDGPUD_INFO_PARAMS_MAX						\
	((MDGPU_INFO_MAX - sizeof(struct mdgpu_func_info)) /		\
	 sizeof(struct mdgpu_func_param))

/*
 * DEVICE_INFO's UUID: the transport's (the mdev UUID) or a random
 * version-4 UUID (RFC 9562).  Should getrandom fail (it does not block
 * once the kernel's pool is ready, which it is long before a vGPU
 * exists), the clock and the vGPU's id still make it unique per daemon.
 */
void mdgpud_info_uuid_init(struct mdgpud_vgpu *v, const uint8_t *uuid)
{
	uint8_t *u = v->uuid;
	ssize_t n = 0;

	if (uuid) {
		memcpy(u, uuid, sizeof(v->uuid));
		return;
	}
	while (n < (ssize_t)sizeof(v->uuid)) {
		ssize_t r = getrandom(u + n, sizeof(v->uuid) - (size_t)n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += r;
	}
	if (n < (ssize_t)sizeof(v->uuid)) {
		struct timespec ts;
		static uint32_t seq;
		uint32_t s = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);

		clock_gettime(CLOCK_REALTIME, &ts);
		memcpy(u, &ts, sizeof(ts) < 12 ? sizeof(ts) : 12);
		memcpy(u + 12, &s, sizeof(s));
	}
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);	/* version 4 */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);	/* variant 10 */
}

/* Writes min(len, size) bytes of an answer to the command's buffer. */
static int mdgpud_info_write(struct mdgpud_vgpu *v,
			     const struct mdgpud_vcmd *vc, const void *ans,
			     uint32_t size)
{
	uint32_t n = vc->info.len < size ? vc->info.len : size;

	return mdgpud_host_write(v, &vc->info.dst, ans, n);
}

static int mdgpud_info_device(struct mdgpud_vgpu *v,
			      const struct mdgpud_vcmd *vc, uint64_t *result)
{
	struct mdgpu_device_info d = v->core->gpu.dev;
	int ret;

	d.size = sizeof(d);
	memcpy(d.uuid, v->uuid, sizeof(d.uuid));
	ret = mdgpud_info_write(v, vc, &d, sizeof(d));
	if (!ret)
		*result = sizeof(d);
	return ret;
}

static int mdgpud_info_func(struct mdgpud_vgpu *v,
			    const struct mdgpud_vcmd *vc, uint64_t *result)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	struct mdgpu_func_info *fi;
	uint32_t size;
	int ret;

	if (!b->func_info)
		return -EOPNOTSUPP;
	fi = calloc(1, MDGPU_INFO_MAX);
	if (!fi)
		return -ENOMEM;
	ret = b->func_info(v->bctx, vc->info.func, fi, MDGPUD_INFO_PARAMS_MAX);
	if (!ret && fi->nr_params > MDGPUD_INFO_PARAMS_MAX)
		ret = -EIO;	/* a backend that overran its room */
	if (!ret) {
		size = (uint32_t)(sizeof(*fi) +
				  fi->nr_params * sizeof(fi->param[0]));
		fi->size = size;
		ret = mdgpud_info_write(v, vc, fi, size);
		if (!ret)
			*result = size;
	}
	free(fi);
	return ret;
}

/*
 * MODULE_FUNCS: the backend lists the names into a buffer of the daemon's
 * own (len bytes, validated), which is then written to the command's
 * buffer: the client's memory is never read back.  What the backend
 * claims is bounded here: it wrote at most len bytes and no more than the
 * whole list has.
 */
static int mdgpud_info_funcs(struct mdgpud_vgpu *v,
			     const struct mdgpud_vcmd *vc, uint64_t *result,
			     uint64_t *result2)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint64_t size = 0, count = 0;
	uint32_t written = 0;
	char *buf;
	int ret;

	if (!b->module_funcs)
		return -EOPNOTSUPP;
	buf = malloc(vc->info.len);
	if (!buf)
		return -ENOMEM;
	ret = b->module_funcs(v->bctx, vc->info.module, buf, vc->info.len,
			      &written, &size, &count);
	if (!ret && (written > vc->info.len || written > size)) {
		mdgpud_warn("vgpu %u: module functions: the backend wrote %u "
			    "bytes of a %llu-byte list into %u", v->id,
			    written, (unsigned long long)size, vc->info.len);
		ret = -EIO;	/* the backend's inconsistency */
	}
	if (!ret)
		ret = mdgpud_info_write(v, vc, buf, written);
	free(buf);
	if (ret)
		return ret;
	*result = size;
	*result2 = count;
	return 0;
}

static int mdgpud_info_global(struct mdgpud_vgpu *v, struct mdgpud_vcmd *vc,
			      uint64_t *result, uint64_t *result2)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint64_t addr, bytes;
	int ret;

	if (!b->module_global)
		return -EOPNOTSUPP;
	if (!vc->module_global.name_src.ptr) {
		ret = v->tops->dma(v->tpriv, vc->module_global.name_src.addr,
				   vc->module_global.name,
				   vc->module_global.name_len, false);
		if (!ret)
			ret = mdgpud_check_name(vc->module_global.name,
						vc->module_global.name_len);
		if (ret)
			return ret;
	}
	ret = b->module_global(v->bctx, vc->module_global.module,
			       vc->module_global.name, &addr, &bytes);
	if (ret)
		return ret;
	if (bytes) {	/* an empty range names nothing */
		pthread_mutex_lock(&v->core->lock);
		ret = mdgpud_memtab_insert_global(
			v->mem, addr, bytes, vc->module_global.module_handle);
		pthread_mutex_unlock(&v->core->lock);
		if (ret == -EEXIST || ret == -EINVAL) {
			mdgpud_warn("vgpu %u: module global %s at %#llx, %llu "
				    "bytes, overlaps the vGPU's memory table",
				    v->id, vc->module_global.name,
				    (unsigned long long)addr,
				    (unsigned long long)bytes);
			return -EIO;	/* the backend's inconsistency */
		}
		if (ret)
			return ret;
	}
	*result = addr;
	*result2 = bytes;
	return 0;
}

/* A device attribute of the GPU, or 0 where it has none. */
static uint64_t mdgpud_info_dev_attr(const struct mdgpud_core *c,
				     uint32_t attr)
{
	int32_t a;

	if (attr >= c->gpu.dev.nr_attrs || attr >= MDGPU_DEV_ATTR_MAX)
		return 0;
	a = c->gpu.dev.attr[attr];
	return a > 0 ? (uint64_t)a : 0;
}

/*
 * Device memory the context reserves for `limit` at `value`
 * (Documentation/abi.md, CTX_LIMIT): a stack of `value` bytes for every
 * thread the GPU can hold resident, value x SMs x threads per SM; the
 * printf FIFO and the malloc heap their size.  UINT64_MAX on overflow.
 */
static uint64_t mdgpud_info_limit_bytes(const struct mdgpud_core *c,
					uint32_t limit, uint64_t value)
{
	uint64_t sms, threads, per_sm, bytes;

	if (limit != MDGPUD_CU_LIMIT_STACK_SIZE)
		return value;
	sms = mdgpud_info_dev_attr(c, MDGPUD_CU_DEV_ATTR_MULTIPROCESSOR_COUNT);
	if (!sms)
		sms = c->gpu.sm_count;
	threads = mdgpud_info_dev_attr(
		c, MDGPUD_CU_DEV_ATTR_MAX_THREADS_PER_MULTIPROCESSOR);
	if (!threads)
		threads = MDGPU_BLOCK_THREADS_MAX * 2ULL;
	if (__builtin_mul_overflow(sms, threads, &per_sm) ||
	    __builtin_mul_overflow(value, per_sm, &bytes))
		return UINT64_MAX;
	return bytes;
}

/*
 * The charge of `limit` at `value`: what it reserves above the context's
 * default dflt, whose memory came with the context, inside the daemon's
 * reserve.  UINT64_MAX (it never fits) on overflow.
 */
static uint64_t mdgpud_info_limit_charge(const struct mdgpud_core *c,
					 uint32_t limit, uint64_t value,
					 uint64_t dflt)
{
	uint64_t hi;

	if (value <= dflt)
		return 0;
	hi = mdgpud_info_limit_bytes(c, limit, value);
	/* Monotonic in the value: dflt's bytes do not overflow. */
	return hi == UINT64_MAX ? UINT64_MAX :
	       hi - mdgpud_info_limit_bytes(c, limit, dflt);
}

/*
 * The context's own value of a limit that reserves memory, read once,
 * before CTX_LIMIT or a launch changes it.  A backend without limits has
 * none to read: 0, so that a launch's local memory is charged whole.
 */
static int mdgpud_info_limit_default(struct mdgpud_vgpu *v, uint32_t limit,
				     uint64_t *dflt)
{
	const struct mdgpud_backend_ops *b = v->core->bops;
	uint64_t value;
	int ret;

	if (!v->limit_known[limit]) {
		if (!b->ctx_limit) {
			*dflt = 0;
			return 0;
		}
		ret = b->ctx_limit(v->bctx, limit, 0, 0, &value);
		if (ret)
			return ret;
		v->limit_default[limit] = value;
		v->limit_known[limit] = true;
	}
	*dflt = v->limit_default[limit];
	return 0;
}

/*
 * CTX_LIMIT.  The three limits that reserve memory (STACK_SIZE,
 * PRINTF_FIFO_SIZE, MALLOC_HEAP_SIZE: CUlimit 0..2, memtab charge slot =
 * CUlimit) are charged what a set adds above the context's own default.
 * The charge is replaced by each set; a set whose charge would not fit
 * the quota is refused (-ENOMEM) before the backend sees it.  STACK_SIZE
 * is charged for no less than the largest local memory of a function
 * launched (mdgpud_info_launch): a set below it makes the driver shrink
 * the context's local memory, but the next launch of that function grows
 * it back, and launches at or below the charged level are not checked.
 */
static int mdgpud_info_limit(struct mdgpud_vgpu *v,
			     const struct mdgpud_vcmd *vc, uint64_t *result)
{
	struct mdgpud_core *c = v->core;
	const struct mdgpud_backend_ops *b = c->bops;
	uint32_t lim = vc->limit.limit;
	uint64_t dflt, level, charge, now;
	int ret;

	if (!b->ctx_limit)
		return -EOPNOTSUPP;
	if (!vc->limit.set || lim >= MDGPUD_MEMTAB_CHARGES)
		return b->ctx_limit(v->bctx, lim, vc->limit.set,
				    vc->limit.value, result);
	ret = mdgpud_info_limit_default(v, lim, &dflt);
	if (ret)
		return ret;
	level = vc->limit.value;
	if (lim == MDGPUD_CU_LIMIT_STACK_SIZE && level < v->stack_launched)
		level = v->stack_launched;
	charge = mdgpud_info_limit_charge(c, lim, level, dflt);
	pthread_mutex_lock(&c->lock);
	ret = mdgpud_memtab_charge_check(v->mem, lim, charge);
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return ret;
	ret = b->ctx_limit(v->bctx, lim, 1, vc->limit.value, &now);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	ret = mdgpud_memtab_charge_set(v->mem, lim, charge);
	pthread_mutex_unlock(&c->lock);
	if (ret)	/* cannot happen: one thread changes the table */
		return ret;
	v->limit_changed[lim] = true;
	if (lim == MDGPUD_CU_LIMIT_STACK_SIZE)
		v->stack_set = vc->limit.value;
	*result = now;
	return 0;
}

/*
 * LAUNCH of a function whose threads use local_bytes of local memory each
 * (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, learnt at FUNC_GET).  The driver
 * grows the context's per-thread local memory to that size at the
 * launch, for every thread the GPU can hold resident, and keeps it
 * (cuda.h, CU_CTX_LMEM_RESIZE_TO_MAX): a size above the level STACK_SIZE's
 * slot is charged for raises the charge to what a STACK_SIZE set to it
 * would be charged, before the backend sees the launch, or refuses the
 * launch (-ENOMEM) where that does not fit the quota.  A launch the
 * backend then refuses keeps the charge: the driver may have grown the
 * memory first.  At or below the level, nothing is asked of the backend.
 */
int mdgpud_info_launch(struct mdgpud_vgpu *v, uint64_t local_bytes)
{
	const uint32_t lim = MDGPUD_CU_LIMIT_STACK_SIZE;
	struct mdgpud_core *c = v->core;
	uint64_t dflt, charge;
	int ret;

	if (local_bytes <= v->stack_set || local_bytes <= v->stack_launched)
		return 0;
	ret = mdgpud_info_limit_default(v, lim, &dflt);
	if (ret)
		return ret;
	charge = mdgpud_info_limit_charge(c, lim, local_bytes, dflt);
	pthread_mutex_lock(&c->lock);
	ret = mdgpud_memtab_charge_set(v->mem, lim, charge);
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return ret;
	if (local_bytes > dflt)		/* the driver's stack grows */
		v->limit_changed[lim] = true;
	v->stack_launched = local_bytes;
	return 0;
}

/*
 * Reset and destroy: the limits CTX_LIMIT or launches changed go back to
 * the context's defaults (a live context; a lost one took them along),
 * which frees what the driver reserved for them, and their charges are
 * freed.
 */
void mdgpud_info_release(struct mdgpud_vgpu *v, bool live)
{
	const struct mdgpud_backend_ops *b = v->core->bops;

	for (uint32_t i = 0; i < MDGPUD_MEMTAB_CHARGES; i++) {
		uint64_t now;

		if (v->limit_changed[i] && live && b->ctx_limit &&
		    b->ctx_limit(v->bctx, i, 1, v->limit_default[i], &now))
			mdgpud_warn("vgpu %u: limit %u not restored (the "
				    "context keeps it until it ends)", v->id,
				    i);
		pthread_mutex_lock(&v->core->lock);
		mdgpud_memtab_charge_set(v->mem, i, 0);
		pthread_mutex_unlock(&v->core->lock);
		v->limit_changed[i] = false;
		v->limit_known[i] = false;
	}
	v->stack_set = 0;
	v->stack_launched = 0;
}

/* Kernels reach the aperture at this address where the backend maps it. */
static int mdgpud_info_aperture(struct mdgpud_vgpu *v, uint64_t *result,
				uint64_t *result2)
{
	const struct mdgpud_backend_ops *b = v->core->bops;

	*result = 0;
	*result2 = 0;
	if (!b->host_devptr || !v->vctx.aperture || !v->vctx.aperture_size)
		return 0;
	return b->host_devptr(v->bctx, v->vctx.aperture, v->vctx.aperture_size,
			      result, result2);
}

int mdgpud_info_exec(struct mdgpud_vgpu *v, struct mdgpud_vcmd *vc,
		     uint64_t *result, uint64_t *result2)
{
	const struct mdgpud_backend_ops *b = v->core->bops;

	switch (vc->opcode) {
	case MDGPU_OP_DEVICE_INFO:
		return mdgpud_info_device(v, vc, result);
	case MDGPU_OP_FUNC_INFO:
		return mdgpud_info_func(v, vc, result);
	case MDGPU_OP_FUNC_SET_ATTR:
		if (!b->func_set_attr)
			return -EOPNOTSUPP;
		return b->func_set_attr(v->bctx, vc->func_attr.func,
					vc->func_attr.attr,
					vc->func_attr.value);
	case MDGPU_OP_MODULE_GLOBAL:
		return mdgpud_info_global(v, vc, result, result2);
	case MDGPU_OP_MODULE_FUNCS:
		return mdgpud_info_funcs(v, vc, result, result2);
	case MDGPU_OP_CTX_LIMIT:
		return mdgpud_info_limit(v, vc, result);
	case MDGPU_OP_OCCUPANCY:
		if (!b->occupancy)
			return -EOPNOTSUPP;
		return b->occupancy(v->bctx, vc->occupancy.func,
				    &vc->occupancy.q, result);
	case MDGPU_OP_QUERY:
		if (vc->query.what == MDGPU_QUERY_APERTURE_DEVPTR)
			return mdgpud_info_aperture(v, result, result2);
		return -EINVAL;
	}
	return -EINVAL;
}
