// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The builtin kernels (kernels/builtin.cu, loaded at start-up): fill, add,
 * checksum and spin, launched with their parameters packed as the kernels
 * take them.  Only the checksum waits for its answer.
 */
#include "worker.h"

#include <errno.h>
#include <string.h>

#include <uapi/mdgpu.h>

#define MDGPUD_WORKER_BLOCK_THREADS	256
#define MDGPUD_WORKER_BLOCKS_PER_SM	8

/* Blocks for n elements, a thread each, at most a few per SM. */
static unsigned int mdgpud_worker_builtins_grid(struct mdgpud_worker *w,
						uint64_t n)
{
	uint64_t blocks = (n + MDGPUD_WORKER_BLOCK_THREADS - 1) /
			  MDGPUD_WORKER_BLOCK_THREADS;
	uint64_t max = (uint64_t)w->sm_count * MDGPUD_WORKER_BLOCKS_PER_SM;

	if (blocks > max)
		blocks = max;
	return blocks ? (unsigned int)blocks : 1;
}

static int mdgpud_worker_builtins_launch(struct mdgpud_worker *w,
					 mdgpud_cu_stream st,
					 mdgpud_cu_function f,
					 unsigned int grid, unsigned int block,
					 void *blob, size_t len)
{
	void *extra[] = {
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT,
		blob,
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT,
		&len,
		(void *)(uintptr_t)MDGPUD_CU_LAUNCH_PARAM_END_AS_INT,
	};

	return mdgpud_worker_err(w, w->cu.launch_kernel(f, grid, 1, 1, block,
							  1, 1, 0, st,
							  NULL, extra),
				 "builtin launch");
}

/* a: dst, count, value. */
static int mdgpud_worker_builtins_fill(struct mdgpud_worker *w,
				       mdgpud_cu_stream st, const uint64_t *a)
{
	/* Packed exactly as the kernel's parameters: 8 + 8 + 4. */
	uint8_t p[20];
	uint32_t value = (uint32_t)a[2];

	if (!a[1])
		return 0;
	memcpy(p, &a[0], 8);
	memcpy(p + 8, &a[1], 8);
	memcpy(p + 16, &value, 4);
	unsigned int grid = mdgpud_worker_builtins_grid(w, a[1]);

	return mdgpud_worker_builtins_launch(w, st, w->fn_fill, grid,
					     MDGPUD_WORKER_BLOCK_THREADS,
					     p, sizeof(p));
}

/* a: dst, a, b, count. */
static int mdgpud_worker_builtins_add(struct mdgpud_worker *w,
				      mdgpud_cu_stream st, const uint64_t *a)
{
	struct { uint64_t dst, a, b, count; } p = { a[0], a[1], a[2], a[3] };

	if (!a[3])
		return 0;
	unsigned int grid = mdgpud_worker_builtins_grid(w, a[3]);

	return mdgpud_worker_builtins_launch(w, st, w->fn_add, grid,
					     MDGPUD_WORKER_BLOCK_THREADS,
					     &p, sizeof(p));
}

/* a: src, count.  Waits for the sum, returned in *sum. */
static int mdgpud_worker_builtins_checksum(struct mdgpud_worker *w,
					   mdgpud_cu_stream st,
					   const uint64_t *a, uint64_t *sum)
{
	struct { uint64_t src, count, out; } p = { a[0], a[1], w->scratch };
	mdgpud_cu_result res;
	int ret;

	*sum = 0;
	res = w->cu.memset_d8_async(w->scratch, 0, sizeof(*sum), st);
	if (res)
		return mdgpud_worker_err(w, res, "checksum");
	if (a[1]) {
		ret = mdgpud_worker_builtins_launch(
			w, st, w->fn_checksum, mdgpud_worker_builtins_grid(w, a[1]),
			MDGPUD_WORKER_BLOCK_THREADS, &p, sizeof(p));
		if (ret)
			return ret;
	}
	res = w->cu.memcpy_dtoh_async(sum, w->scratch, sizeof(*sum), st);
	if (!res)
		res = mdgpud_worker_context_drain(w, st, 0,
						  w->shm->worker_spin_ns);
	return mdgpud_worker_err(w, res, "checksum");
}

/*
 * s->arg[0]: the kernel (enum mdgpu_builtin), then its five arguments,
 * then (a6) the stream it runs on.
 */
int mdgpud_worker_builtins_run(struct mdgpud_worker *w,
			       struct mdgpud_cuda_rpc_slot *s)
{
	const uint64_t *a = &s->arg[1];
	struct mdgpud_worker_stream *st;
	uint64_t v;
	int ret;

	if (mdgpud_worker_stream_get(w, s->arg[6], &st))
		return -ENOENT;
	w->req_stream = st;
	mdgpud_worker_stream_enter_slice(w, st);
	switch (s->arg[0]) {
	case MDGPU_BUILTIN_FILL_U32:
		return mdgpud_worker_builtins_fill(w, st->cu, a);
	case MDGPU_BUILTIN_ADD_U32:
		return mdgpud_worker_builtins_add(w, st->cu, a);
	case MDGPU_BUILTIN_CHECKSUM:
		ret = mdgpud_worker_builtins_checksum(w, st->cu, a, &v);
		if (!ret)
			s->result[0] = v;
		return ret;
	case MDGPU_BUILTIN_SPIN_NS:
		v = a[0];
		return mdgpud_worker_builtins_launch(w, st->cu, w->fn_spin, 1,
						     1, &v, sizeof(v));
	default:
		return -EINVAL;
	}
}
