// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ABI 1.2 introspection in the worker: the device table the probe
 * collects, and the requests FUNC_INFO, FUNC_SET_ATTR, MODULE_GLOBAL,
 * CTX_LIMIT, OCCUPANCY and HOST_DEVPTR (cuda_rpc.h); ABI 1.5's
 * MODULE_FUNCS.  Functions and modules are named by the worker's
 * handles, as in requests.c.  The supervisor validated the values
 * (core/validate.c); the driver judges what only it can (a cluster
 * shape, a shared size), and its refusal is -EINVAL.
 */
#include "worker.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <mdgpud/cuda_values.h>
#include <uapi/mdgpu.h>

/*
 * The probe: cuDeviceGetAttribute for every attribute number below
 * MDGPU_DEV_ATTR_MAX (MDGPU_ATTR_NONE where the driver refuses it;
 * nr_attrs is one past the last it answers) and the full name.
 */
void mdgpud_worker_info_probe(struct mdgpud_worker *w)
{
	struct mdgpud_cuda_rpc_info *info = &w->shm->info;
	uint32_t n = 0;

	for (uint32_t i = 0; i < MDGPU_DEV_ATTR_MAX; i++) {
		int v = 0;

		if (w->cu.device_get_attribute(&v, i, w->dev)) {
			info->attr[i] = MDGPU_ATTR_NONE;
			continue;
		}
		info->attr[i] = v;
		n = i + 1;
	}
	info->nr_attrs = n;
	if (w->cu.device_get_name(info->full_name, sizeof(info->full_name),
				  w->dev))
		memcpy(info->full_name, info->name, sizeof(info->name));
	info->full_name[sizeof(info->full_name) - 1] = 0;
}

/*
 * a0 function, a1 the most parameters the answer may hold.  Writes
 * struct mdgpu_func_info and its parameters into the staging area,
 * answers r0 = nr_params.  The count is the first index the driver
 * refuses with CUDA_ERROR_INVALID_VALUE (measured: cuda-surface.md);
 * more than a1 parameters: -E2BIG.
 */
int mdgpud_worker_op_func_info(struct mdgpud_worker *w,
			       struct mdgpud_cuda_rpc_slot *s)
{
	struct mdgpu_func_info *fi = (struct mdgpu_func_info *)w->shm->staging;
	uint64_t room = (sizeof(w->shm->staging) - sizeof(*fi)) /
			sizeof(fi->param[0]);
	uint64_t max = s->arg[1] < room ? s->arg[1] : room;
	mdgpud_cu_result res;
	uint64_t i;
	void *f;

	if (mdgpud_worker_handles_get(&w->funcs, s->arg[0], &f))
		return -ENOENT;
	if (!w->cu.func_get_param_info)
		return -EOPNOTSUPP;
	memset(fi, 0, sizeof(*fi));
	for (uint32_t a = 0; a < MDGPU_FUNC_ATTR_MAX; a++) {
		int v = 0;

		fi->attr[a] = w->cu.func_get_attribute(&v, a, f) ?
			      MDGPU_ATTR_NONE : v;
	}
	for (i = 0;; i++) {
		size_t off = 0, size = 0;

		res = w->cu.func_get_param_info(f, i, &off, &size);
		if (res == MDGPUD_CUDA_ERROR_INVALID_VALUE)
			break;
		if (res)
			return mdgpud_worker_err(w, res, "cuFuncGetParamInfo");
		if (i >= max)
			return -E2BIG;
		if (off > UINT32_MAX || size > UINT32_MAX)
			return -EIO;
		fi->param[i].offset = (uint32_t)off;
		fi->param[i].size = (uint32_t)size;
	}
	fi->nr_params = (uint32_t)i;
	fi->size = (uint32_t)(sizeof(*fi) + i * sizeof(fi->param[0]));
	s->result[0] = i;
	return 0;
}

/* a0 function, a1 attribute (or MDGPU_FUNC_ATTR_CACHE_CONFIG), a2 value. */
int mdgpud_worker_op_func_set_attr(struct mdgpud_worker *w,
				   struct mdgpud_cuda_rpc_slot *s)
{
	int value = (int)(int32_t)(uint32_t)s->arg[2];
	mdgpud_cu_result res;
	void *f;
	int ret;

	if (mdgpud_worker_handles_get(&w->funcs, s->arg[0], &f))
		return -ENOENT;
	if (s->arg[1] == MDGPU_FUNC_ATTR_CACHE_CONFIG)
		res = w->cu.func_set_cache_config(f,
						  (mdgpud_cu_func_cache)value);
	else if (s->arg[1] < MDGPU_FUNC_ATTR_MAX)
		res = w->cu.func_set_attribute(f, (uint32_t)s->arg[1], value);
	else
		return -EINVAL;
	ret = mdgpud_worker_err(w, res, "cuFuncSetAttribute");
	return ret == -EIO || ret == -ENODEV ? ret : ret ? -EINVAL : 0;
}

/* a0 module, inline data the global's name: r0 address, r1 bytes. */
int mdgpud_worker_op_module_global(struct mdgpud_worker *w,
				   struct mdgpud_cuda_rpc_slot *s)
{
	char name[MDGPU_NAME_MAX + 1];
	mdgpud_cu_deviceptr p = 0;
	mdgpud_cu_result res;
	size_t bytes = 0;
	void *mod;

	if (mdgpud_worker_handles_get(&w->modules, s->arg[0], &mod))
		return -ENOENT;
	if (s->inline_len == 0 || s->inline_len > MDGPU_NAME_MAX)
		return -EINVAL;
	memcpy(name, s->inline_data, s->inline_len);
	name[s->inline_len] = 0;
	res = w->cu.module_get_global(&p, &bytes, mod, name);
	if (res)
		return mdgpud_worker_err(w, res, "cuModuleGetGlobal");
	s->result[0] = p;
	s->result[1] = bytes;
	return 0;
}

/*
 * a0 module, a1 the bytes the answer may take.  Writes the names of the
 * module's kernels into the staging area in the driver's order
 * (cuModuleEnumerateFunctions, then cuFuncGetName of each), each
 * NUL-terminated, as many whole names as fit, and stops at the first
 * that does not; r0 is the bytes of the whole list, r1 the number of
 * kernels | the bytes written << 32.  A driver without the three entry
 * points (before CUDA 12.4): -EOPNOTSUPP.
 */
int mdgpud_worker_op_module_funcs(struct mdgpud_worker *w,
				  struct mdgpud_cuda_rpc_slot *s)
{
	uint8_t *out = w->shm->staging;
	uint64_t room = s->arg[1] < sizeof(w->shm->staging) ?
			s->arg[1] : sizeof(w->shm->staging);
	uint64_t size = 0, written = 0;
	mdgpud_cu_function *fns = NULL;
	mdgpud_cu_result res;
	unsigned int n = 0;
	bool full = false;
	void *mod;
	int ret = 0;

	if (mdgpud_worker_handles_get(&w->modules, s->arg[0], &mod))
		return -ENOENT;
	if (!w->cu.module_get_function_count ||
	    !w->cu.module_enumerate_functions || !w->cu.func_get_name)
		return -EOPNOTSUPP;
	res = w->cu.module_get_function_count(&n, mod);
	if (res)
		return mdgpud_worker_err(w, res, "cuModuleGetFunctionCount");
	if (n) {
		fns = calloc(n, sizeof(*fns));
		if (!fns)
			return -ENOMEM;
		res = w->cu.module_enumerate_functions(fns, n, mod);
		if (res)
			ret = mdgpud_worker_err(w, res,
						"cuModuleEnumerateFunctions");
	}
	for (unsigned int i = 0; !ret && i < n; i++) {
		const char *name = NULL;
		size_t len;

		res = w->cu.func_get_name(&name, fns[i]);
		if (res) {
			ret = mdgpud_worker_err(w, res, "cuFuncGetName");
			break;
		}
		if (!name || !name[0]) {
			ret = -EIO;	/* a kernel without a name */
			break;
		}
		len = strlen(name) + 1;
		if (__builtin_add_overflow(size, len, &size)) {
			ret = -EIO;
			break;
		}
		/* Whole names, in order: none after the first that does
		 * not fit, even a shorter one. */
		full = full || len > room - written;
		if (!full) {
			memcpy(out + written, name, len);
			written += len;
		}
	}
	free(fns);
	if (ret)
		return ret;
	s->result[0] = size;
	s->result[1] = n | written << 32;
	return 0;
}

/* a0 CUlimit, a1 set, a2 value: r0 the value in force afterwards. */
int mdgpud_worker_op_ctx_limit(struct mdgpud_worker *w,
			       struct mdgpud_cuda_rpc_slot *s)
{
	mdgpud_cu_result res;
	size_t v = 0;

	if (s->arg[0] >= MDGPUD_CU_LIMIT_MAX)
		return -EINVAL;
	if (s->arg[1]) {
		if (s->arg[2] > SIZE_MAX)
			return -EINVAL;
		res = w->cu.ctx_set_limit((mdgpud_cu_limit)s->arg[0],
					  (size_t)s->arg[2]);
		if (res)
			return mdgpud_worker_err(w, res, "cuCtxSetLimit");
	}
	res = w->cu.ctx_get_limit(&v, (mdgpud_cu_limit)s->arg[0]);
	if (res)
		return mdgpud_worker_err(w, res, "cuCtxGetLimit");
	s->result[0] = v;
	return 0;
}

/*
 * ACTIVE_CLUSTERS and CLUSTER_SIZE: the launch the question is about,
 * with its cluster for ACTIVE_CLUSTERS; CLUSTER_SIZE's launch has none
 * (the driver would ignore it: the cluster is the answer).
 */
static mdgpud_cu_result
mdgpud_worker_info_clusters(struct mdgpud_worker *w, void *f,
			    const struct mdgpud_cuda_rpc_slot *s, int *out)
{
	struct mdgpud_cu_launch_attr attr = {
		.id = MDGPUD_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
	};
	struct mdgpud_cu_launch_config cfg = {
		.grid_x = (uint32_t)s->arg[5],
		.grid_y = (uint32_t)(s->arg[5] >> 32),
		.grid_z = (uint32_t)s->arg[6],
		.block_x = (uint32_t)s->arg[2],
		.block_y = 1,
		.block_z = 1,
		.shared_bytes = (unsigned int)s->arg[3],
		.stream = w->stream,
		.attrs = &attr,
		.num_attrs = 1,
	};
	const struct CUlaunchConfig_st *c =
		(const struct CUlaunchConfig_st *)(const void *)&cfg;

	if ((uint32_t)s->arg[1] == MDGPU_OCC_CLUSTER_SIZE) {
		cfg.attrs = NULL;
		cfg.num_attrs = 0;
		return w->cu.occupancy_cluster_size(out, f, c);
	}
	attr.value.cluster_dim.x = (uint32_t)(s->arg[4] & 0xfffff);
	attr.value.cluster_dim.y = (uint32_t)((s->arg[4] >> 20) & 0xfffff);
	attr.value.cluster_dim.z = (uint32_t)((s->arg[4] >> 40) & 0xfffff);
	return w->cu.occupancy_active_clusters(out, f, c);
}

/*
 * a0 function, a1 question | flags << 32, a2 block threads | num_blocks
 * << 32, a3 dynamic shared bytes, a4 cluster, a5/a6 grid: r0 the answer.
 */
int mdgpud_worker_op_occupancy(struct mdgpud_worker *w,
			       struct mdgpud_cuda_rpc_slot *s)
{
	int block = (int)(uint32_t)s->arg[2];
	int nblocks = (int)(uint32_t)(s->arg[2] >> 32);
	mdgpud_cu_result res;
	size_t smem = 0;
	int n = 0;
	void *f;

	if (mdgpud_worker_handles_get(&w->funcs, s->arg[0], &f))
		return -ENOENT;
	if (block <= 0 || block > MDGPU_BLOCK_THREADS_MAX || nblocks < 0 ||
	    s->arg[3] > UINT32_MAX)
		return -EINVAL;
	switch ((uint32_t)s->arg[1]) {
	case MDGPU_OCC_ACTIVE_BLOCKS:
		res = w->cu.occupancy_active_blocks(&n, f, block,
						    (size_t)s->arg[3],
						    (uint32_t)(s->arg[1] >> 32));
		s->result[0] = n > 0 ? (uint64_t)n : 0;
		break;
	case MDGPU_OCC_DYN_SMEM:
		res = w->cu.occupancy_dyn_smem(&smem, f, nblocks, block);
		s->result[0] = smem;
		break;
	case MDGPU_OCC_ACTIVE_CLUSTERS:
		if (!w->cu.occupancy_active_clusters)
			return -EOPNOTSUPP;
		res = mdgpud_worker_info_clusters(w, f, s, &n);
		s->result[0] = n > 0 ? (uint64_t)n : 0;
		break;
	case MDGPU_OCC_CLUSTER_SIZE:
		if (!w->cu.occupancy_cluster_size)
			return -EOPNOTSUPP;
		res = mdgpud_worker_info_clusters(w, f, s, &n);
		s->result[0] = n > 0 ? (uint64_t)n : 0;
		break;
	default:
		return -EINVAL;
	}
	return mdgpud_worker_err(w, res, "cuOccupancy");
}

/*
 * a0 region: the device address of a region registered with the driver
 * (mapped: memory.c registers with DEVICEMAP), r0, and its size, r1; 0
 * and 0 for a region the driver has not registered (pinning refused, a
 * memlock limit) or does not map.
 */
int mdgpud_worker_op_host_devptr(struct mdgpud_worker *w,
				 struct mdgpud_cuda_rpc_slot *s)
{
	struct mdgpud_worker_region *r;
	mdgpud_cu_deviceptr p = 0;

	s->result[0] = 0;
	s->result[1] = 0;
	if (s->arg[0] >= w->nr_regions || !w->regions[s->arg[0]].ptr)
		return -ENOENT;
	r = &w->regions[s->arg[0]];
	if (!r->registered ||
	    w->cu.mem_host_get_device_pointer(&p, r->ptr, 0) || !p)
		return 0;
	s->result[0] = p;
	s->result[1] = r->size;
	return 0;
}
