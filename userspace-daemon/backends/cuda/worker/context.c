// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The worker's CUDA context: opening it (probe and serve), the objects a
 * serving worker keeps (its own stream, builtin kernels, events), waiting
 * for a stream or the whole vGPU to drain, and the teardown that scrubs
 * and frees everything.
 */
#include "worker.h"

#include <errno.h>
#include <time.h>

extern const char mdgpud_builtin_ptx[];

/*
 * Polls between nanosleeps while a drain is far from its expected end: a
 * drain that ends before the estimate is seen this late at most.  The
 * worker runs with a 1 us timer slack (main.c), so a 25 us nanosleep lasts
 * about that, not the default slack's 50 us more; about 4 us of CPU a poll.
 */
#define MDGPUD_WORKER_DRAIN_POLL_NS	25000L

/*
 * Loads the driver API, finds the device `device` names (device.c), opens
 * its primary context, fills info.
 */
int mdgpud_worker_context_open(struct mdgpud_worker *w, const char *device)
{
	char why[256];
	mdgpud_cu_result res;
	int ordinal, sm = 0, ret;
	size_t free_b = 0, total_b = 0;

	ret = mdgpud_cuda_api_load(&w->cu, NULL, why, sizeof(why));
	if (ret) {
		mdgpud_worker_err_msg(w, "%s", why);
		return ret;
	}
	res = w->cu.init(0);
	if (res) {
		const char *name = NULL;

		w->cu.get_error_name(res, &name);
		mdgpud_worker_err_msg(w, "cuInit: %s (%u)", name ? name : "?",
				      res);
		return mdgpud_cuda_errno(res);
	}
	ret = mdgpud_worker_device_find(w, device, &ordinal);
	if (ret)
		return ret;
	if ((res = w->cu.device_get(&w->dev, ordinal)) ||
	    (res = w->cu.primary_ctx_retain(&w->ctx, w->dev)) ||
	    (res = w->cu.ctx_set_current(w->ctx)))
		return mdgpud_worker_err(w, res, "context");
	w->cu.device_get_attribute(
		&sm, MDGPUD_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, w->dev);
	w->sm_count = sm > 0 ? (uint32_t)sm : 1;
	w->shm->info.sm_count = w->sm_count;
	w->cu.device_get_name(w->shm->info.name, sizeof(w->shm->info.name),
			      w->dev);
	w->cu.device_get_pci_bus_id(w->shm->info.bus_id,
				    sizeof(w->shm->info.bus_id), w->dev);
	res = w->cu.device_get_uuid(
		(struct CUuuid_st *)(void *)w->shm->info.uuid, w->dev);
	if (res)
		return mdgpud_worker_err(w, res, "cuDeviceGetUuid");
	w->shm->info.ordinal = ordinal;
	w->cu.driver_get_version(&w->shm->info.driver_version);
	mdgpud_worker_info_probe(w);
	if (w->cu.ctx_get_stream_priority_range(&w->shm->info.prio_least,
						&w->shm->info.prio_greatest))
		w->shm->info.prio_least = w->shm->info.prio_greatest = 0;
	res = w->cu.mem_get_info(&free_b, &total_b);
	if (res)
		return mdgpud_worker_err(w, res, "cuMemGetInfo");
	w->shm->info.mem_free_bytes = free_b;
	w->shm->info.mem_total_bytes = total_b;
	return 0;
}

static int mdgpud_worker_context_builtins(struct mdgpud_worker *w)
{
	char log[MDGPUD_WORKER_JIT_LOG_BYTES] = "";
	mdgpud_cu_jit_option opt[2] = {
		MDGPUD_CU_JIT_ERROR_LOG_BUFFER,
		MDGPUD_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
	};
	void *val[2] = { log, (void *)(uintptr_t)sizeof(log) };
	mdgpud_cu_result res;

	res = w->cu.module_load_data_ex(&w->builtin_mod, mdgpud_builtin_ptx, 2,
					opt, val);
	if (res) {
		mdgpud_worker_err(w, res, "builtin PTX");
		mdgpud_worker_err_msg(w, "builtin PTX failed to load: %.400s",
				      log);
		return -EIO;
	}
	if ((res = w->cu.module_get_function(&w->fn_fill, w->builtin_mod,
					     "mdgpud_fill_u32")) ||
	    (res = w->cu.module_get_function(&w->fn_add, w->builtin_mod,
					     "mdgpud_add_u32")) ||
	    (res = w->cu.module_get_function(&w->fn_checksum, w->builtin_mod,
					     "mdgpud_checksum_u32")) ||
	    (res = w->cu.module_get_function(&w->fn_spin, w->builtin_mod,
					     "mdgpud_spin_ns")))
		return mdgpud_worker_err(w, res, "builtin function");
	return 0;
}

/* What a serving worker keeps beside the context. */
int mdgpud_worker_context_setup(struct mdgpud_worker *w)
{
	mdgpud_cu_result res;
	int ret;

	mdgpud_worker_handles_init(&w->modules, MDGPUD_WORKER_TAG_MODULE,
				   MDGPUD_WORKER_HANDLES_MAX);
	mdgpud_worker_handles_init(&w->funcs, MDGPUD_WORKER_TAG_FUNC,
				   MDGPUD_WORKER_HANDLES_MAX);
	mdgpud_worker_handles_init(&w->events, MDGPUD_WORKER_TAG_EVENT,
				   MDGPUD_WORKER_HANDLES_MAX);
	mdgpud_worker_handles_init(&w->streams, MDGPUD_WORKER_TAG_STREAM,
				   MDGPUD_WORKER_HANDLES_MAX);
	w->stream0.cu = MDGPUD_CU_STREAM_LEGACY;
	if ((res = w->cu.stream_create(&w->stream,
				       MDGPUD_CU_STREAM_NON_BLOCKING)))
		return mdgpud_worker_err(w, res, "cuStreamCreate");
	ret = mdgpud_worker_context_builtins(w);
	if (ret)
		return ret;
	if ((res = w->cu.mem_alloc(&w->scratch, sizeof(uint64_t))))
		return mdgpud_worker_err(w, res, "scratch alloc");
	if ((res = w->cu.event_create(&w->slice_ev[0],
				      MDGPUD_CU_EVENT_DEFAULT)) ||
	    (res = w->cu.event_create(&w->slice_ev[1],
				      MDGPUD_CU_EVENT_DEFAULT)) ||
	    (res = w->cu.event_create(&w->drain_ev,
				      MDGPUD_CU_EVENT_BLOCKING_SYNC |
				      MDGPUD_CU_EVENT_DISABLE_TIMING)) ||
	    (res = w->cu.event_create(&w->join_ev,
				      MDGPUD_CU_EVENT_DISABLE_TIMING)))
		return mdgpud_worker_err(w, res, "cuEventCreate");
	return mdgpud_worker_mem_init(w);
}

/*
 * Waits until `stream` has drained; the driver's result (a sticky error
 * of earlier work included).  The context keeps the driver's default
 * scheduling (spinning cuStreamSynchronize), so the worker never calls
 * that on a long wait:
 *  - expect_ns (SLICE_END: the work the supervisor queued in the slice)
 *    beyond the margin: nanosleep in MDGPUD_WORKER_DRAIN_POLL_NS steps,
 *    polling the stream, until MDGPUD_CUDA_EXPECT_MARGIN_NS before the
 *    expected end;
 *  - then poll it without sleeping for spin_ns (worker_spin_ns, or a
 *    copy's expected transfer time, mdgpud_cuda_copy_spin; plus two
 *    margins around an expected end): a short wait (launch + sync of a
 *    small kernel, a copy) ends here, as quickly as a spinning
 *    synchronize;
 *    while the worker holds the supervisor's poll grant (poll_until_ns),
 *    the poll lasts until the grant's end;
 *  - then block on drain_ev (CU_EVENT_BLOCKING_SYNC: the driver wakes the
 *    thread by interrupt), so that a long kernel costs no CPU.
 */
mdgpud_cu_result mdgpud_worker_context_drain(struct mdgpud_worker *w,
					     mdgpud_cu_stream stream,
					     uint64_t expect_ns,
					     uint64_t spin_ns)
{
	uint64_t now = mdgpud_cuda_now_ns(), until, grant;
	mdgpud_cu_result res;

	if (expect_ns > MDGPUD_CUDA_EXPECT_MARGIN_NS) {
		uint64_t from = now + expect_ns - MDGPUD_CUDA_EXPECT_MARGIN_NS;

		while (now < from) {
			struct timespec ts = { 0, MDGPUD_WORKER_DRAIN_POLL_NS };

			res = w->cu.stream_query(stream);
			if (res != MDGPUD_CUDA_ERROR_NOT_READY)
				return res;
			if (from - now < (uint64_t)ts.tv_nsec)
				ts.tv_nsec = (long)(from - now);
			nanosleep(&ts, NULL);
			now = mdgpud_cuda_now_ns();
		}
		spin_ns += 2 * MDGPUD_CUDA_EXPECT_MARGIN_NS;
	}
	until = now + spin_ns;
	/* A worker holding a poll grant would spin once idle anyway: it
	 * spins across the drain too, where a blocking wait would cost the
	 * wake-up the grant is there to save. */
	grant = atomic_load_explicit(&w->shm->poll_until_ns,
				     memory_order_relaxed);
	if (grant > until)
		until = grant;
	for (unsigned int n = 0;; n++) {
		res = w->cu.stream_query(stream);
		if (res != MDGPUD_CUDA_ERROR_NOT_READY)
			return res;
		if ((n & 15) == 15 && mdgpud_cuda_now_ns() >= until)
			break;
		mdgpu_cpu_relax();
	}
	res = w->cu.event_record(w->drain_ev, stream);
	if (!res)
		res = w->cu.event_synchronize(w->drain_ev);
	return res;
}

/*
 * Waits until all of the vGPU's work, every stream's (stream.c joins them
 * into the worker's own stream), has drained.
 */
mdgpud_cu_result mdgpud_worker_context_drain_all(struct mdgpud_worker *w,
						 uint64_t expect_ns)
{
	mdgpud_cu_result res = mdgpud_worker_stream_join(w);

	if (res)
		return res;
	return mdgpud_worker_context_drain(w, w->stream, expect_ns,
					   w->shm->worker_spin_ns);
}

/* Scrub and free everything the context still holds. */
void mdgpud_worker_context_teardown(struct mdgpud_worker *w)
{
	uint32_t cursor = 0;
	void *obj;

	w->cu.ctx_synchronize();	/* every stream */
	mdgpud_worker_mem_free_all(w);
	mdgpud_worker_stream_destroy_all(w);
	while (!mdgpud_worker_handles_next(&w->events, &cursor, &obj))
		w->cu.event_destroy(obj);
	cursor = 0;
	while (!mdgpud_worker_handles_next(&w->modules, &cursor, &obj))
		w->cu.module_unload(obj);
	mdgpud_worker_mem_unmap_all(w);
	mdgpud_worker_handles_fini(&w->events);
	mdgpud_worker_handles_fini(&w->funcs);
	mdgpud_worker_handles_fini(&w->modules);
}
