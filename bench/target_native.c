// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Native target: the CUDA driver API, as a CUDA program would use it.  One
 * primary context per process, one non-blocking stream, the benchmark's
 * PTX JIT-loaded with cuModuleLoadDataEx.  Saturating tenants use blocking
 * synchronisation (so 32 tenants do not burn 32 cores spinning),
 * latency-sensitive tenants the driver's default spin-then-yield.
 */
#include "cuda_dl.h"
#include "target.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bench_tenant {
	struct bench_cuda cu;
	bench_cu_device dev;
	bench_cu_context ctx;
	bench_cu_stream stream;
	bench_cu_module mod;
	bench_cu_function f_empty, f_work, f_spin;
	bench_cu_event ev[BENCH_FENCES_MAX];
	uint64_t ev_next;		/* tokens issued */
	bench_cu_deviceptr sink;	/* bench_work's never-written sink */
	struct bench_target_info info;
};

#define CK(t, call, what) bench_cuda_err(&(t)->cu, (t)->cu.call, what)

int bench_native_probe(struct bench_target_info *info, char *why,
		       size_t why_len)
{
	struct bench_cuda cu;
	bench_cu_device dev;
	int n = 0, sms = 0, ret;
	bench_cu_result r;

	ret = bench_cuda_load(&cu, why, why_len);
	if (ret)
		return -ENODEV;
	r = cu.init(0);
	if (r == BENCH_CUDA_SUCCESS)
		r = cu.device_get_count(&n);
	if (r != BENCH_CUDA_SUCCESS || n < 1) {
		const char *name = NULL;

		cu.get_error_name(r, &name);
		snprintf(why, why_len, "cuInit/cuDeviceGetCount: %s, %d devices",
			 r ? (name ? name : "error") : "ok", n);
		bench_cuda_unload(&cu);
		return -ENODEV;
	}
	memset(info, 0, sizeof(*info));
	if (cu.device_get(&dev, 0) || cu.device_get_name(info->gpu,
		       (int)sizeof(info->gpu) - 1, dev) ||
	    cu.device_get_attribute(&sms, BENCH_CU_ATTR_MULTIPROCESSOR_COUNT,
				    dev)) {
		snprintf(why, why_len, "cannot query device 0");
		bench_cuda_unload(&cu);
		return -ENODEV;
	}
	info->sm_count = (uint32_t)sms;
	bench_cuda_unload(&cu);
	return 0;
}

static void native_close(struct bench_tenant *t)
{
	if (!t)
		return;
	if (t->ctx) {
		if (t->stream)
			t->cu.stream_synchronize(t->stream);
		for (int i = 0; i < BENCH_FENCES_MAX; i++)
			if (t->ev[i])
				t->cu.event_destroy(t->ev[i]);
		if (t->sink)
			t->cu.mem_free(t->sink);
		if (t->mod)
			t->cu.module_unload(t->mod);
		if (t->stream)
			t->cu.stream_destroy(t->stream);
		t->cu.primary_ctx_release(t->dev);
	}
	bench_cuda_unload(&t->cu);
	free(t);
}

static int native_open(const struct bench_tenant_cfg *cfg,
		       struct bench_tenant **out)
{
	struct bench_tenant *t;
	char why[256];
	int sms = 0, ret;
	unsigned int flags;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	ret = bench_cuda_load(&t->cu, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "mdgpu-bench: native: %s\n", why);
		free(t);
		return ret;
	}
	flags = cfg->latency ? 0 : BENCH_CU_CTX_SCHED_BLOCKING_SYNC;
	ret = CK(t, init(0), "cuInit");
	if (!ret)
		ret = CK(t, device_get(&t->dev, 0), "cuDeviceGet");
	if (!ret)
		ret = CK(t, primary_ctx_set_flags(t->dev, flags),
			 "cuDevicePrimaryCtxSetFlags");
	if (!ret)
		ret = CK(t, primary_ctx_retain(&t->ctx, t->dev),
			 "cuDevicePrimaryCtxRetain");
	if (!ret)
		ret = CK(t, ctx_set_current(t->ctx), "cuCtxSetCurrent");
	if (!ret)
		ret = CK(t, stream_create(&t->stream,
					  BENCH_CU_STREAM_NON_BLOCKING),
			 "cuStreamCreate");
	if (!ret)
		ret = CK(t, module_load_data_ex(&t->mod, bench_ptx, 0, NULL,
						NULL), "cuModuleLoadDataEx");
	if (!ret)
		ret = CK(t, module_get_function(&t->f_empty, t->mod,
						BENCH_K_EMPTY), BENCH_K_EMPTY);
	if (!ret)
		ret = CK(t, module_get_function(&t->f_work, t->mod,
						BENCH_K_WORK), BENCH_K_WORK);
	if (!ret)
		ret = CK(t, module_get_function(&t->f_spin, t->mod,
						BENCH_K_SPIN), BENCH_K_SPIN);
	for (int i = 0; !ret && i < BENCH_FENCES_MAX; i++)
		ret = CK(t, event_create(&t->ev[i], cfg->latency ?
				BENCH_CU_EVENT_DISABLE_TIMING :
				BENCH_CU_EVENT_DISABLE_TIMING |
				BENCH_CU_EVENT_BLOCKING_SYNC),
			 "cuEventCreate");
	if (!ret)
		ret = CK(t, mem_alloc(&t->sink, 4096 * sizeof(float)),
			 "cuMemAlloc");
	if (!ret)
		ret = CK(t, device_get_name(t->info.gpu,
					    (int)sizeof(t->info.gpu) - 1,
					    t->dev), "cuDeviceGetName");
	if (!ret)
		ret = CK(t, device_get_attribute(&sms,
				BENCH_CU_ATTR_MULTIPROCESSOR_COUNT, t->dev),
			 "cuDeviceGetAttribute");
	if (ret) {
		native_close(t);
		return ret;
	}
	t->info.sm_count = (uint32_t)sms;
	*out = t;
	return 0;
}

static int native_info(struct bench_tenant *t, struct bench_target_info *info)
{
	*info = t->info;
	return 0;
}

static int native_mem_alloc(struct bench_tenant *t, uint64_t size,
			    uint64_t *addr)
{
	bench_cu_deviceptr p;
	int ret = CK(t, mem_alloc(&p, size), "cuMemAlloc");

	if (!ret)
		*addr = p;
	return ret;
}

static int native_mem_free(struct bench_tenant *t, uint64_t addr)
{
	return CK(t, mem_free(addr), "cuMemFree");
}

static void *native_host_alloc(struct bench_tenant *t, size_t size,
			       int pinned)
{
	void *p = NULL;

	if (!pinned) {
		p = malloc(size);
		if (p)
			memset(p, 0x5a, size);	/* fault the pages in */
		return p;
	}
	if (CK(t, mem_host_alloc(&p, size, 0), "cuMemHostAlloc"))
		return NULL;
	memset(p, 0x5a, size);
	return p;
}

static void native_host_free(struct bench_tenant *t, void *p, size_t size,
			     int pinned)
{
	(void)size;
	if (pinned)
		t->cu.mem_free_host(p);
	else
		free(p);
}

static int native_copy_h2d(struct bench_tenant *t, uint64_t dst,
			   const void *src, size_t len)
{
	return CK(t, memcpy_htod_async(dst, src, len, t->stream),
		  "cuMemcpyHtoDAsync");
}

static int native_copy_d2h(struct bench_tenant *t, void *dst, uint64_t src,
			   size_t len)
{
	return CK(t, memcpy_dtoh_async(dst, src, len, t->stream),
		  "cuMemcpyDtoHAsync");
}

static int native_launch_empty(struct bench_tenant *t)
{
	return CK(t, launch_kernel(t->f_empty, 1, 1, 1, 1, 1, 1, 0, t->stream,
				   NULL, NULL), "cuLaunchKernel(empty)");
}

static int native_launch_work(struct bench_tenant *t,
			      const struct bench_work *w)
{
	uint32_t iters = w->iters;
	void *params[] = { &iters, &t->sink };

	return CK(t, launch_kernel(t->f_work, w->grid, 1, 1, w->block, 1, 1,
				   0, t->stream, params, NULL),
		  "cuLaunchKernel(work)");
}

static int native_launch_spin(struct bench_tenant *t, uint64_t ns)
{
	unsigned long long v = ns;
	void *params[] = { &v };

	return CK(t, launch_kernel(t->f_spin, 1, 1, 1, 1, 1, 1, 0, t->stream,
				   params, NULL), "cuLaunchKernel(spin)");
}

static int native_fence(struct bench_tenant *t, uint64_t *token)
{
	uint64_t tok = t->ev_next;
	int ret = CK(t, event_record(t->ev[tok % BENCH_FENCES_MAX], t->stream),
		     "cuEventRecord");

	if (ret)
		return ret;
	t->ev_next++;
	*token = tok;
	return 0;
}

static int native_fence_wait(struct bench_tenant *t, uint64_t token)
{
	if (token >= t->ev_next || t->ev_next - token > BENCH_FENCES_MAX)
		return -EINVAL;
	return CK(t, event_synchronize(t->ev[token % BENCH_FENCES_MAX]),
		  "cuEventSynchronize");
}

static int native_sync(struct bench_tenant *t)
{
	return CK(t, stream_synchronize(t->stream), "cuStreamSynchronize");
}

const struct bench_target_ops bench_target_native = {
	.name = "native",
	.open = native_open,
	.close = native_close,
	.info = native_info,
	.mem_alloc = native_mem_alloc,
	.mem_free = native_mem_free,
	.host_alloc = native_host_alloc,
	.host_free = native_host_free,
	.copy_h2d = native_copy_h2d,
	.copy_d2h = native_copy_d2h,
	.launch_empty = native_launch_empty,
	.launch_work = native_launch_work,
	.launch_spin = native_launch_spin,
	.fence = native_fence,
	.fence_wait = native_fence_wait,
	.sync = native_sync,
};
