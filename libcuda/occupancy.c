// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: occupancy (cuOccupancy*).  Each question goes to the host
 * driver through the daemon (OCCUPANCY); the figures are the physical
 * GPU's per SM, which a vGPU's SMs share with others.
 *
 * cuOccupancyMaxPotentialBlockSize(WithFlags) is computed here as the
 * CUDA runtime's occupancy calculator does: for each block size from the
 * limit down, in steps of the warp size, the blocks per SM the host
 * driver answers, keeping the size with the most resident threads (the
 * largest such size), stopping once an SM is full.  The callback giving
 * a block size's dynamic shared memory is the application's: it is
 * called without mdgpu_cu.lock held.
 */
#include <limits.h>
#include <string.h>

#include "code.h"

/*
 * Under the lock: one OCCUPANCY question about a live function, answered
 * from the function's kept answers when it was asked before (priv.h),
 * else by the daemon.  The whole question (padding included, zero in
 * every caller's initializer) is the key.
 */
static CUresult mdgpu_cu_occ(CUfunction f, struct mdgpu_cmd_occupancy *q,
			     uint64_t *result)
{
	struct mdgpu_cu_occ_answer *a;
	int ret;

	if (!mdgpu_cu_set_has(&mdgpu_cu.funcs, f))
		return CUDA_ERROR_INVALID_HANDLE;
	q->func = f->func;
	for (unsigned int i = 0; i < f->occ_n; i++) {
		if (!memcmp(&f->occ[i].q, q, sizeof(*q))) {
			*result = f->occ[i].v;
			return CUDA_SUCCESS;
		}
	}
	ret = mdgpu_occupancy(mdgpu_cu.g, q, result);
	if (ret)
		return mdgpu_cu_error(ret);
	a = &f->occ[f->occ_next];
	a->q = *q;
	a->v = *result;
	f->occ_next = (f->occ_next + 1) % MDGPU_CU_OCC_CACHED;
	if (f->occ_n < MDGPU_CU_OCC_CACHED)
		f->occ_n++;
	return CUDA_SUCCESS;
}

static bool mdgpu_cu_block_ok(int block)
{
	return block > 0 && block <= MDGPU_BLOCK_THREADS_MAX;
}

/* An int answer of the daemon, which must fit one. */
static CUresult mdgpu_cu_occ_int(uint64_t v, int *out)
{
	if (v > INT_MAX)
		return CUDA_ERROR_UNKNOWN;
	*out = (int)v;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
	int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize,
	unsigned int flags)
{
	struct mdgpu_cmd_occupancy q = {
		.what = MDGPU_OCC_ACTIVE_BLOCKS,
		.block_threads = (uint32_t)blockSize,
		.flags = flags,
		.dyn_smem = dynamicSMemSize,
	};
	uint64_t v = 0;
	CUresult r;

	if (!numBlocks || !mdgpu_cu_block_ok(blockSize) ||
	    (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_occ(func, &q, &v);
	if (!r)
		r = mdgpu_cu_occ_int(v, numBlocks);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(
	int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize)
{
	return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
		numBlocks, func, blockSize, dynamicSMemSize,
		CU_OCCUPANCY_DEFAULT);
}

CUresult CUDAAPI cuOccupancyAvailableDynamicSMemPerBlock(
	size_t *dynamicSmemSize, CUfunction func, int numBlocks, int blockSize)
{
	struct mdgpu_cmd_occupancy q = {
		.what = MDGPU_OCC_DYN_SMEM,
		.block_threads = (uint32_t)blockSize,
		.num_blocks = (uint32_t)numBlocks,
	};
	uint64_t v = 0;
	CUresult r;

	if (!dynamicSmemSize || numBlocks <= 0 || !mdgpu_cu_block_ok(blockSize))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_enter();
	if (r)
		return r;
	r = mdgpu_cu_occ(func, &q, &v);
	if (!r) {
		if (v > SIZE_MAX)
			r = CUDA_ERROR_UNKNOWN;
		else
			*dynamicSmemSize = (size_t)v;
	}
	mdgpu_cu_leave();
	return r;
}

/* The launch's block, grid and dynamic shared memory into q. */
static CUresult mdgpu_cu_occ_dims(const CUlaunchConfig *config,
				  struct mdgpu_cmd_occupancy *q)
{
	uint64_t threads = (uint64_t)config->blockDimX * config->blockDimY *
			   config->blockDimZ;

	if (!threads || threads > MDGPU_BLOCK_THREADS_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	q->block_threads = (uint32_t)threads;
	q->dyn_smem = config->sharedMemBytes;
	q->grid[0] = config->gridDimX;
	q->grid[1] = config->gridDimY;
	q->grid[2] = config->gridDimZ;
	return CUDA_SUCCESS;
}

/* A cluster question q for a launch on `stream`, answered by the host
 * driver into *out. */
static CUresult mdgpu_cu_occ_ask(CUfunction func, CUstream stream,
				 struct mdgpu_cmd_occupancy *q, int *out)
{
	uint64_t v = 0;
	CUresult r = mdgpu_cu_enter();

	if (r)
		return r;
	r = mdgpu_cu_stream_check(stream);
	if (!r)
		r = mdgpu_cu_occ(func, q, &v);
	if (!r)
		r = mdgpu_cu_occ_int(v, out);
	mdgpu_cu_leave();
	return r;
}

CUresult CUDAAPI cuOccupancyMaxActiveClusters(int *numClusters,
					      CUfunction func,
					      const CUlaunchConfig *config)
{
	struct mdgpu_cmd_occupancy q = { .what = MDGPU_OCC_ACTIVE_CLUSTERS };
	uint32_t flags = 0;
	CUresult r;

	if (!numClusters || !config)
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_occ_dims(config, &q);
	if (!r)
		r = mdgpu_cu_launch_attrs(config->attrs, config->numAttrs,
					  &flags, &q.cluster);
	if (r)
		return r;
	return mdgpu_cu_occ_ask(func, config->hStream, &q, numClusters);
}

/*
 * The largest cluster, in blocks, the host driver answers for this
 * launch (ABI 1.9's CLUSTER_SIZE; an older daemon: NOT_SUPPORTED).  As
 * cuda.h says, the launch's cluster dimensions are ignored, so they are
 * neither checked nor sent; every other attribute is judged as
 * cuLaunchKernelEx judges it, one at a time.
 */
CUresult CUDAAPI cuOccupancyMaxPotentialClusterSize(
	int *clusterSize, CUfunction func, const CUlaunchConfig *config)
{
	struct mdgpu_cmd_occupancy q = { .what = MDGPU_OCC_CLUSTER_SIZE };
	uint32_t flags = 0, cluster = 0;
	CUresult r;

	if (!clusterSize || !config ||
	    (config->numAttrs && !config->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_occ_dims(config, &q);
	if (r)
		return r;
	for (unsigned int i = 0; i < config->numAttrs; i++) {
		if (config->attrs[i].id ==
		    CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
			continue;
		r = mdgpu_cu_launch_attrs(&config->attrs[i], 1, &flags,
					  &cluster);
		if (r)
			return r;
	}
	return mdgpu_cu_occ_ask(func, config->hStream, &q, clusterSize);
}

/* A device attribute the block-size search needs; > 0 or an error. */
static CUresult mdgpu_cu_dev_attr(CUdevice_attribute a, int *v)
{
	CUresult r = cuDeviceGetAttribute(v, a, 0);

	if (!r && *v <= 0)
		r = CUDA_ERROR_NOT_SUPPORTED;
	return r;
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(
	int *minGridSize, int *blockSize, CUfunction func,
	CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
	int blockSizeLimit, unsigned int flags)
{
	int dev_block, sm_threads, sms, warp, func_block, limit;
	int best_size = 0, best_blocks = 0;
	int64_t best_threads = 0;
	CUresult r;

	if (!minGridSize || !blockSize || blockSizeLimit < 0 ||
	    (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
		return CUDA_ERROR_INVALID_VALUE;
	r = mdgpu_cu_dev_attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
			      &dev_block);
	if (!r)
		r = mdgpu_cu_dev_attr(
			CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
			&sm_threads);
	if (!r)
		r = mdgpu_cu_dev_attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
				      &sms);
	if (!r)
		r = mdgpu_cu_dev_attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE, &warp);
	if (!r)
		r = cuFuncGetAttribute(&func_block,
				       CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
				       func);
	if (r)
		return r;
	limit = blockSizeLimit && blockSizeLimit < dev_block ?
		blockSizeLimit : dev_block;
	if (func_block < limit)
		limit = func_block;
	if (limit <= 0 || limit > MDGPU_BLOCK_THREADS_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	for (int aligned = (limit + warp - 1) / warp * warp; aligned > 0;
	     aligned -= warp) {
		int size = aligned < limit ? aligned : limit, blocks = 0;
		size_t smem = blockSizeToDynamicSMemSize ?
			      blockSizeToDynamicSMemSize(size) :
			      dynamicSMemSize;

		r = cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
			&blocks, func, size, smem, flags);
		if (r)
			return r;
		if ((int64_t)blocks * size > best_threads) {
			best_threads = (int64_t)blocks * size;
			best_blocks = blocks;
			best_size = size;
		}
		if (best_threads >= sm_threads)
			break;
	}
	if ((int64_t)best_blocks * sms > INT_MAX)
		return CUDA_ERROR_UNKNOWN;
	*minGridSize = best_blocks * sms;
	*blockSize = best_size;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(
	int *minGridSize, int *blockSize, CUfunction func,
	CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
	int blockSizeLimit)
{
	return cuOccupancyMaxPotentialBlockSizeWithFlags(
		minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
		dynamicSMemSize, blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}
