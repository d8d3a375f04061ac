// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The sim backend: builtins against the C reference, scrub on free,
 * fb_size limit, simulated clock, events, foreign code refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "uapi/mdgpu.h"
#include "mdgpud/backend.h"

/* A plain launch (no flags, no cluster) through the ops table. */
static int test_launch(const struct mdgpud_backend_ops *o,
		       struct mdgpud_bctx *c, uint64_t stream, uint64_t fn,
		       struct mdgpud_dim3 grid, struct mdgpud_dim3 block,
		       uint32_t shared_bytes, const void *params,
		       uint32_t params_len)
{
	struct mdgpud_launch l = {
		.func = fn, .grid = grid, .block = block,
		.shared_bytes = shared_bytes, .params = params,
		.params_len = params_len,
	};

	return o->launch(c, stream, &l);
}

struct fx {
	const struct mdgpud_backend_ops *ops;
	struct mdgpud_backend *be;
	struct mdgpud_bctx *ctx;
	struct mdgpud_gpu_info info;
};

static int setup(void **state)
{
	struct mdgpud_backend_cfg cfg = { .fb_size = 64ULL << 20,
					  .sm_count = 8 };
	struct fx *f = calloc(1, sizeof(*f));

	f->ops = mdgpud_backend_find("sim");
	assert_non_null(f->ops);
	assert_int_equal(f->ops->open(&cfg, &f->be, &f->info), 0);
	assert_int_equal(f->ops->ctx_create(f->be, 1, &f->ctx), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	f->ops->ctx_destroy(f->ctx);
	f->ops->close(f->be);
	free(f);
	return 0;
}

static void test_info(void **state)
{
	struct fx *f = *state;

	assert_int_equal(f->info.kind, MDGPU_BACKEND_SIM);
	assert_int_equal(f->info.fb_size, 64ULL << 20);
	assert_int_equal(f->info.sm_count, 8);
	assert_null(mdgpud_backend_find("nosuch"));
}

static void test_checksum_ref(void **state)
{
	uint32_t w[4] = { 1, 2, 3, 0xffffffffU };

	(void)state;
	/* 1*1 + 2*3 + 3*5 + 0xffffffff*7 */
	assert_int_equal(mdgpud_checksum_ref(w, 4),
			 1 + 6 + 15 + 0xffffffffULL * 7);
	assert_int_equal(mdgpud_checksum_ref(w, 0), 0);
}

static void test_builtins(void **state)
{
	struct fx *f = *state;
	const uint64_t n = 100000;
	uint32_t *host = f->ops->host_alloc(f->ctx, n * 4);
	uint32_t *ref = malloc(n * 4);
	uint64_t a, b, c, rsv, sum, arg[5] = { 0 };

	assert_non_null(host);
	assert_int_equal(f->ops->mem_alloc(f->ctx, n * 4, &a, &rsv), 0);
	assert_int_equal(rsv % 4096, 0);
	assert_true(rsv >= n * 4);
	assert_int_equal(f->ops->mem_alloc(f->ctx, n * 4, &b, &rsv), 0);
	assert_int_equal(f->ops->mem_alloc(f->ctx, n * 4, &c, &rsv), 0);
	for (uint64_t i = 0; i < n; i++)
		host[i] = (uint32_t)(i * 0x9e3779b9U);
	assert_int_equal(f->ops->copy_h2d(f->ctx, 0, a, host, n * 4, 0), 0);

	arg[0] = b; arg[1] = n; arg[2] = 0x01020304;
	assert_int_equal(f->ops->builtin(f->ctx, 0, MDGPU_BUILTIN_FILL_U32, arg,
					 &sum), 0);
	arg[0] = c; arg[1] = a; arg[2] = b; arg[3] = n;
	assert_int_equal(f->ops->builtin(f->ctx, 0, MDGPU_BUILTIN_ADD_U32, arg,
					 &sum), 0);
	for (uint64_t i = 0; i < n; i++)
		ref[i] = host[i] + 0x01020304;
	memset(arg, 0, sizeof(arg));
	arg[0] = c; arg[1] = n;
	assert_int_equal(f->ops->builtin(f->ctx, 0, MDGPU_BUILTIN_CHECKSUM, arg,
					 &sum), 0);
	assert_int_equal(sum, mdgpud_checksum_ref(ref, n));
	assert_int_equal(f->ops->copy_d2h(f->ctx, 0, host, c, n * 4, 0), 0);
	assert_memory_equal(host, ref, n * 4);
	/* d2d + memset */
	assert_int_equal(f->ops->copy_d2d(f->ctx, 0, a, c, n * 4), 0);
	assert_int_equal(f->ops->mem_set(f->ctx, 0, a, 0xff, 1, 8), 0);
	assert_int_equal(f->ops->copy_d2h(f->ctx, 0, host, a, n * 4, 0), 0);
	assert_int_equal(host[0], 0xffffffffU);
	assert_int_equal(host[2], ref[2]);
	/* A range outside every allocation is refused, never touched. */
	assert_int_equal(f->ops->mem_set(f->ctx, 0, a + n * 4 - 4, 0, 1, 8),
			 -EFAULT);
	assert_int_equal(f->ops->builtin(f->ctx, 0, 99, arg, &sum), -EINVAL);
	f->ops->host_free(f->ctx, host, n * 4);
	free(ref);
}

static void test_scrub_and_limit(void **state)
{
	struct fx *f = *state;
	struct mdgpud_bctx *other;
	uint64_t a, b, rsv, sum, arg[5] = { 0 };

	assert_int_equal(f->ops->mem_alloc(f->ctx, 1 << 20, &a, &rsv), 0);
	arg[0] = a; arg[1] = (1 << 20) / 4; arg[2] = 0xabcdef01;
	assert_int_equal(f->ops->builtin(f->ctx, 0, MDGPU_BUILTIN_FILL_U32, arg,
					 &sum), 0);
	assert_int_equal(f->ops->mem_free(f->ctx, a, 1 << 20), 0);
	assert_int_equal(f->ops->mem_free(f->ctx, a, 1 << 20), -ENOENT);
	/* Another context receives the cached block: it reads zero. */
	assert_int_equal(f->ops->ctx_create(f->be, 2, &other), 0);
	assert_int_equal(f->ops->mem_alloc(other, 1 << 20, &b, &rsv), 0);
	memset(arg, 0, sizeof(arg));
	arg[0] = b; arg[1] = (1 << 20) / 4;
	assert_int_equal(f->ops->builtin(other, 0, MDGPU_BUILTIN_CHECKSUM, arg,
					 &sum), 0);
	assert_int_equal(sum, 0);
	/* Contexts cannot reach each other's addresses. */
	assert_int_equal(f->ops->mem_set(f->ctx, 0, b, 1, 1, 1), -EFAULT);
	/* fb_size is the backend's hard limit (64 MiB here). */
	assert_int_equal(f->ops->mem_alloc(other, 64ULL << 20, &a, &rsv),
			 -ENOMEM);
	assert_int_equal(f->ops->mem_alloc(other, 63ULL << 20, &a, &rsv), 0);
	assert_int_equal(f->ops->mem_alloc(f->ctx, 1, &a, &rsv), -ENOMEM);
	/* Destroying a context frees (and scrubs) what it left behind. */
	f->ops->ctx_destroy(other);
	assert_int_equal(f->ops->mem_alloc(f->ctx, 64ULL << 20, &a, &rsv), 0);
}

static void test_clock_events(void **state)
{
	struct fx *f = *state;
	uint64_t e0, e1, ns, slice, arg[5] = { 5000000 };

	assert_int_equal(f->ops->event_create(f->ctx, 0, &e0), 0);
	assert_int_equal(f->ops->event_create(f->ctx, 0, &e1), 0);
	assert_int_equal(f->ops->event_elapsed(f->ctx, e0, e1, &ns), -EINVAL);
	assert_int_equal(f->ops->slice_begin(f->ctx), 0);
	assert_int_equal(f->ops->event_record(f->ctx, 0, e0), 0);
	assert_int_equal(f->ops->builtin(f->ctx, 0, MDGPU_BUILTIN_SPIN_NS, arg,
					 &ns), 0);
	assert_int_equal(f->ops->event_record(f->ctx, 0, e1), 0);
	assert_int_equal(f->ops->event_elapsed(f->ctx, e0, e1, &ns), 0);
	assert_int_equal(ns, 5000000);		/* deterministic */
	assert_int_equal(f->ops->slice_end(f->ctx, 0, &slice), 0);
	assert_int_equal(slice, 5000000);
	arg[0] = MDGPU_SPIN_NS_MAX + 1;
	assert_int_equal(f->ops->builtin(f->ctx, 0, MDGPU_BUILTIN_SPIN_NS, arg,
					 &ns), -E2BIG);
	assert_int_equal(f->ops->event_destroy(f->ctx, e0), 0);
	/* e1 is left for ctx_destroy to free (ASAN checks the leak). */
	assert_int_equal(f->ops->sync(f->ctx, 0), 0);
}

static void test_no_foreign_code(void **state)
{
	struct fx *f = *state;
	uint64_t mod;
	struct mdgpud_dim3 one = { 1, 1, 1 };

	assert_int_equal(f->ops->module_load(f->ctx, MDGPU_MODULE_PTX,
					     ".version 8.0", 13, &mod),
			 -EOPNOTSUPP);
	assert_int_equal(test_launch(f->ops, f->ctx, 0, 1, one, one, 0, NULL, 0),
			 -EOPNOTSUPP);
}

/*
 * Stream memory operations (ABI 1.10): writes of both widths, waits met
 * under each condition (GEQ cyclic, NOR at its edge), a wait not met
 * refused with nothing changed, a word outside the context's memory, an
 * unknown operation.
 */
static void test_stream_memop(void **state)
{
	struct fx *f = *state;
	uint64_t a, rsv, w64 = 0;
	uint32_t w32[2] = { 0 };
	int (*memop)(struct mdgpud_bctx *, uint64_t, uint32_t, uint64_t,
		     uint64_t, uint32_t) = f->ops->stream_memop;

	assert_non_null(memop);
	assert_int_equal(f->ops->mem_alloc(f->ctx, 4096, &a, &rsv), 0);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WRITE64, a,
			       0x1122334455667788ULL, 0), 0);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WRITE32, a, 0xaabbccdd,
			       0), 0);
	assert_int_equal(f->ops->copy_d2h(f->ctx, 0, w32, a, 8, 0), 0);
	assert_int_equal(w32[0], 0xaabbccdd);
	assert_int_equal(w32[1], 0x11223344);

	/* 32-bit conditions on 0xaabbccdd. */
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT32, a, 0xaabbccdd,
			       MDGPU_MEMOP_WAIT_EQ), 0);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT32, a, 0xaabbccdc,
			       MDGPU_MEMOP_WAIT_GEQ), 0);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT32, a, 0x1,
			       MDGPU_MEMOP_WAIT_AND), 0);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT32, a, 0x2,
			       MDGPU_MEMOP_WAIT_NOR), 0);
	/* Not met: refused, the word unchanged. */
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT32, a, 0xaabbccde,
			       MDGPU_MEMOP_WAIT_GEQ), -EOPNOTSUPP);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT32, a, 0,
			       MDGPU_MEMOP_WAIT_EQ), -EOPNOTSUPP);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT32, a, 0x2,
			       MDGPU_MEMOP_WAIT_AND), -EOPNOTSUPP);
	/* ~(w | v) is 0 when w | v has every bit. */
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT32, a, ~0xaabbccddU,
			       MDGPU_MEMOP_WAIT_NOR), -EOPNOTSUPP);
	/* GEQ is cyclic: 1 is after 0xffffffff, 0x80000000 apart is not. */
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WRITE32, a, 1, 0), 0);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT32, a, 0xffffffff,
			       MDGPU_MEMOP_WAIT_GEQ), 0);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT32, a, 0x80000001,
			       MDGPU_MEMOP_WAIT_GEQ), -EOPNOTSUPP);
	assert_int_equal(f->ops->copy_d2h(f->ctx, 0, w32, a, 4, 0), 0);
	assert_int_equal(w32[0], 1);

	/* 64-bit: the whole word counts. */
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WRITE64, a + 8,
			       1ULL << 40, 0), 0);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT64, a + 8,
			       1ULL << 40, MDGPU_MEMOP_WAIT_EQ), 0);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT64, a + 8,
			       (1ULL << 40) - 1, MDGPU_MEMOP_WAIT_GEQ), 0);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT64, a + 8,
			       UINT64_MAX, MDGPU_MEMOP_WAIT_GEQ), 0);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT64, a + 8,
			       (1ULL << 40) + 1, MDGPU_MEMOP_WAIT_GEQ),
			 -EOPNOTSUPP);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WAIT64, a + 8, 1,
			       MDGPU_MEMOP_WAIT_AND), -EOPNOTSUPP);
	assert_int_equal(f->ops->copy_d2h(f->ctx, 0, &w64, a + 8, 8, 0), 0);
	assert_int_equal(w64, 1ULL << 40);

	/* Outside the context's memory; an unknown operation. */
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WRITE64, a + 4092, 0, 0),
			 -EFAULT);
	assert_int_equal(memop(f->ctx, 0, MDGPU_MEMOP_WRITE32, a + 4096, 0, 0),
			 -EFAULT);
	assert_int_equal(memop(f->ctx, 0, 99, a, 0, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_info, setup, teardown),
		cmocka_unit_test(test_checksum_ref),
		cmocka_unit_test_setup_teardown(test_builtins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_memop, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_scrub_and_limit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_clock_events, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_foreign_code, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
