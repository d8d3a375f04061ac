// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cuda backend through its ops table, on a real GPU.  Without one (no
 * libcuda, cuInit fails, no device) every test prints the reason and is
 * SKIPPED.  The worker binary must exist: $MDGPUD_WORKER, or
 * ../../mdgpud-worker relative to this test (build/daemon-san/tests/).
 *
 * test_cuda_fake.c includes this file with MDGPUD_TEST_CUDA_FAKE defined:
 * then the workers load the fake libcuda.so.1 of tests/test_cuda_fake/
 * (built into build/cuda-fake/) and nothing may be skipped for want of a
 * GPU, so CI runs the supervisor, the workers and the ring for real.
 *
 * This binary is built with ASAN+UBSAN; it never loads libcuda (only the
 * unsanitized worker processes do).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <mdgpud/backend.h>
#include <mdgpud/log.h>
#include <uapi/mdgpu.h>

#include "../backends/cuda/cuda_backend.h"
#include "../backends/cuda/cuda_rpc.h"
#include "../backends/cuda/sandbox.h"

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

/* The hang bound of the tests' backend (cfg.hang_timeout_ms). */
#define TEST_HANG_MS	2000
/* Its module load bound (cfg.module_load_timeout_ms), past the hang
 * bound so that a load between the two shows which one applies. */
#define TEST_LOAD_MS	3500

/*
 * Every worker of these tests is sandboxed (Documentation/daemon.md,
 * "Worker sandbox") as a uid of its own from this range (and the gid of
 * that number), with TEST_WORKER_GROUP as its supplementary group, chosen
 * apart from the daemon's default range so that the tests see the
 * configured ids.  $MDGPUD_TEST_SANDBOX (required, best-effort, off) and
 * $MDGPUD_TEST_SECCOMP (enforce, learn, audit) override the mode,
 * tests/gpu/sandbox-on-gpu.sh uses them.  TEST_SHARED_UID is the one
 * user of a backend whose workers share it (worker_uid_count 0).
 */
#define TEST_WORKER_UID_BASE	1879500000u
#define TEST_WORKER_UID_COUNT	32u
#define TEST_WORKER_GROUP	65532
#define TEST_SHARED_UID		65533
static int test_sandbox = MDGPUD_SANDBOX_REQUIRED;
/* worker_dev: the fake driver runs in the private /dev; NVIDIA's needs
 * the host's (Documentation/daemon.md, "Worker sandbox"). */
#ifdef MDGPUD_TEST_CUDA_FAKE
static const int test_private_dev = 1;
#else
static const int test_private_dev;
#endif
static int test_seccomp;	/* 0 enforce, 1 learn, 2 audit */
/* worker_net and worker_tmp: the defaults (private), or host / shared
 * from $MDGPUD_TEST_NET / $MDGPUD_TEST_TMP (tests/gpu/sandbox-on-gpu.sh
 * tells with them what the driver needs). */
static int test_net = MDGPUD_WORKER_NET_PRIVATE;
static int test_tmp = MDGPUD_WORKER_TMP_PRIVATE;

#define STR_(x)		#x
#define STR(x)		STR_(x)

static const struct mdgpud_backend_ops *ops = &mdgpud_backend_cuda;
static struct mdgpud_backend *be;
static struct mdgpud_gpu_info info;
static char skip_reason[1024];	/* the backend's last message */
static char no_gpu_reason[1024];	/* why open() failed, kept */
static char worker_path[PATH_MAX];

/* Keeps the backend's last message: the reason when open() fails. */
static void capture_log(void *data, int level, const char *fmt, va_list ap)
{
	(void)data;
	if (level <= MDGPUD_LOG_INFO) {
		va_list aq;

		va_copy(aq, ap);
		vsnprintf(skip_reason, sizeof(skip_reason), fmt, aq);
		va_end(aq);
	}
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static int find_worker(void)
{
	const char *env = getenv("MDGPUD_WORKER");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(worker_path, sizeof(worker_path), "%s", env);
		return access(worker_path, X_OK);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	if ((size_t)snprintf(worker_path, sizeof(worker_path),
			     "%.*s/../../mdgpud-worker", PATH_MAX - 32,
			     self) >= sizeof(worker_path))
		return -1;
	return access(worker_path, X_OK);
}

/* The tests' backend configuration (a test may open more backends). */
static void test_cfg(struct mdgpud_backend_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->device = "0";
	cfg->worker_path = worker_path;
	cfg->hang_timeout_ms = TEST_HANG_MS;
	cfg->module_load_timeout_ms = TEST_LOAD_MS;
	cfg->sandbox = test_sandbox;
	/* The fake driver runs in the private /dev; NVIDIA's needs the
	 * host's (Documentation/daemon.md, "Worker sandbox"). */
	cfg->dev = test_private_dev ? MDGPUD_WORKER_DEV_PRIVATE :
				      MDGPUD_WORKER_DEV_NONE;
	cfg->worker_uid_base = TEST_WORKER_UID_BASE;
	cfg->worker_uid_count = TEST_WORKER_UID_COUNT;
	cfg->worker_group = STR(TEST_WORKER_GROUP);
	cfg->seccomp_learn = test_seccomp;
	cfg->seccomp_allow = getenv("MDGPUD_TEST_SECCOMP_ALLOW");
	cfg->net = test_net;
	cfg->tmp = test_tmp;
}

static int group_setup(void **state)
{
	struct mdgpud_backend_cfg cfg = { 0 };
	int ret;

	(void)state;
	/* A missing worker is a build error, not a missing GPU. */
	if (find_worker()) {
		fprintf(stderr, "mdgpud-worker not found (%s)\n", worker_path);
		return -1;
	}
	mdgpud_log_set(MDGPUD_LOG_INFO, capture_log, NULL);
#ifdef MDGPUD_TEST_CUDA_FAKE
	{
		/* Workers inherit the environment: point them at the fake. */
		char dir[PATH_MAX];
		char *slash;

		snprintf(dir, sizeof(dir), "%s", worker_path);
		slash = strrchr(dir, '/');
		if (!slash)
			return -1;
		slash[1] = 0;
		if (strlen(dir) + sizeof("cuda-fake") > sizeof(dir))
			return -1;
		strcat(dir, "cuda-fake");
		if (access(dir, R_OK) || setenv("LD_LIBRARY_PATH", dir, 1))
			return -1;
	}
#endif
	{
		const char *m = getenv("MDGPUD_TEST_SANDBOX");
		const char *sc = getenv("MDGPUD_TEST_SECCOMP");
		const char *net = getenv("MDGPUD_TEST_NET");
		const char *tmp = getenv("MDGPUD_TEST_TMP");

		if (m && !strcmp(m, "off"))
			test_sandbox = MDGPUD_SANDBOX_OFF;
		else if (m && !strcmp(m, "best-effort"))
			test_sandbox = MDGPUD_SANDBOX_BEST_EFFORT;
		if (sc && !strcmp(sc, "learn"))
			test_seccomp = 1;
		else if (sc && !strcmp(sc, "audit"))
			test_seccomp = 2;
		if (net && !strcmp(net, "host"))
			test_net = MDGPUD_WORKER_NET_HOST;
		if (tmp && !strcmp(tmp, "shared"))
			test_tmp = MDGPUD_WORKER_TMP_SHARED;
	}
	test_cfg(&cfg);
	ret = ops->open(&cfg, &be, &info);
#ifdef MDGPUD_TEST_CUDA_FAKE
	if (ret) {
		fprintf(stderr, "fake cuda backend failed to open: %s\n",
			skip_reason);
		return -1;
	}
#endif
	if (ret) {
		be = NULL;
		if (!skip_reason[0])
			snprintf(skip_reason, sizeof(skip_reason),
				 "cuda backend open: %s", strerror(-ret));
		/* Later tests log on purpose (test_open_errors): the reason
		 * for skipping is this one. */
		snprintf(no_gpu_reason, sizeof(no_gpu_reason), "%s",
			 skip_reason);
		return 0;
	}
	fprintf(stderr, "GPU: %s (%s), %u SMs, fb_size %" PRIu64 " MiB\n",
		info.name, info.bus_id, info.sm_count, info.fb_size >> 20);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (be)
		ops->close(be);
	mdgpud_log_set(MDGPUD_LOG_WARN, NULL, NULL);
	return 0;
}

#define REQUIRE_GPU()							\
	do {								\
		if (!be) {						\
			printf("SKIPPED: no usable GPU: %s\n", no_gpu_reason); \
			skip();						\
		}							\
	} while (0)

/* A GPU, and the sandbox asked for as required ($MDGPUD_TEST_SANDBOX). */
#define REQUIRE_SANDBOX()						\
	do {								\
		REQUIRE_GPU();						\
		if (test_sandbox != MDGPUD_SANDBOX_REQUIRED) {		\
			printf("SKIPPED: the sandbox is not required "	\
			       "($MDGPUD_TEST_SANDBOX)\n");		\
			skip();						\
		}							\
	} while (0)

static struct mdgpud_bctx *ctx_new(uint32_t vgpu)
{
	struct mdgpud_bctx *ctx = NULL;

	assert_int_equal(ops->ctx_create(be, vgpu, &ctx), 0);
	assert_non_null(ctx);
	return ctx;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_info(void **state)
{
	(void)state;
	REQUIRE_GPU();
	assert_int_equal(info.kind, MDGPU_BACKEND_CUDA);
	assert_true(info.sm_count > 0);
	assert_true(info.fb_size > 0);
	assert_true(strlen(info.name) > 0);
}

static void test_alloc_copy(void **state)
{
	const uint64_t n = (4u << 20) + 12;	/* not a multiple of a page */
	struct mdgpud_bctx *ctx;
	uint8_t *h, *back, *heap;
	uint64_t a, b, res, seed = 0x1234567;

	(void)state;
	REQUIRE_GPU();
	ctx = ctx_new(1);
	h = ops->host_alloc(ctx, n);
	back = ops->host_alloc(ctx, n);
	assert_non_null(h);
	assert_non_null(back);
	for (uint64_t i = 0; i < n; i++)
		h[i] = (uint8_t)xorshift(&seed);
	assert_int_equal(ops->mem_alloc(ctx, n, &a, &res), 0);
	assert_true(res >= n);
	assert_int_equal(ops->mem_alloc(ctx, n, &b, &res), 0);
	assert_int_not_equal(a, b);

	/* Zero-copy path: host_alloc'd buffers. */
	assert_int_equal(ops->copy_h2d(ctx, 0, a, h, n, 0), 0);
	assert_int_equal(ops->copy_d2d(ctx, 0, b, a, n), 0);
	assert_int_equal(ops->copy_d2h(ctx, 0, back, b, n, 0), 0);
	assert_memory_equal(h, back, n);

	/* Staged path: memory the worker does not map, at an offset. */
	heap = malloc(n);
	assert_non_null(heap);
	memset(heap, 0, n);
	assert_int_equal(ops->copy_d2h(ctx, 0, heap + 1, a + 1, n - 1, 0), 0);
	assert_memory_equal(heap + 1, h + 1, n - 1);
	heap[5] ^= 0xff;
	assert_int_equal(ops->copy_h2d(ctx, 0, b + 5, heap + 5, 1, 0), 0);
	assert_int_equal(ops->copy_d2h(ctx, 0, back, b, 16, 0), 0);
	assert_int_equal(back[5], heap[5]);
	assert_int_equal(back[4], h[4]);
	assert_int_equal(back[6], h[6]);
	h[5] = heap[5];		/* b now holds h with this byte changed */
	free(heap);

	/* memset8 */
	assert_int_equal(ops->mem_set(ctx, 0, b + 100, 0xa5, 1, 1000), 0);
	assert_int_equal(ops->copy_d2h(ctx, 0, back, b, 2000, 0), 0);
	for (int i = 0; i < 2000; i++)
		assert_int_equal(back[i], i >= 100 && i < 1100 ? 0xa5 : h[i]);

	assert_int_equal(ops->sync(ctx, 0), 0);
	assert_int_equal(ops->mem_free(ctx, a, n), 0);
	assert_int_equal(ops->mem_free(ctx, b, n), 0);
	assert_int_equal(ops->mem_free(ctx, b, n), -ENOENT);
	ops->host_free(ctx, h, n);
	ops->host_free(ctx, back, n);
	ops->ctx_destroy(ctx);
}

static void test_builtins(void **state)
{
	const uint64_t count = 1000003;
	struct mdgpud_bctx *ctx;
	uint32_t *x, *y, *out;
	uint64_t dx, dy, dz, res, sum, seed = 99;
	uint64_t arg[5] = { 0 };

	(void)state;
	REQUIRE_GPU();
	ctx = ctx_new(2);
	x = ops->host_alloc(ctx, count * 4);
	y = ops->host_alloc(ctx, count * 4);
	out = ops->host_alloc(ctx, count * 4);
	assert_non_null(x);
	assert_non_null(y);
	assert_non_null(out);
	for (uint64_t i = 0; i < count; i++) {
		x[i] = (uint32_t)xorshift(&seed);
		y[i] = (uint32_t)xorshift(&seed);
	}
	assert_int_equal(ops->mem_alloc(ctx, count * 4, &dx, &res), 0);
	assert_int_equal(ops->mem_alloc(ctx, count * 4, &dy, &res), 0);
	assert_int_equal(ops->mem_alloc(ctx, count * 4, &dz, &res), 0);
	assert_int_equal(ops->copy_h2d(ctx, 0, dx, x, count * 4, 0), 0);
	assert_int_equal(ops->copy_h2d(ctx, 0, dy, y, count * 4, 0), 0);

	/* CHECKSUM equals the C reference, on random data. */
	arg[0] = dx;
	arg[1] = count;
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_CHECKSUM, arg, &sum), 0);
	assert_int_equal(sum, mdgpud_checksum_ref(x, count));
	arg[1] = 0;
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_CHECKSUM, arg, &sum), 0);
	assert_int_equal(sum, 0);
	arg[1] = 1;
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_CHECKSUM, arg, &sum), 0);
	assert_int_equal(sum, x[0]);

	/* ADD: z = x + y (wrapping). */
	arg[0] = dz;
	arg[1] = dx;
	arg[2] = dy;
	arg[3] = count;
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_ADD_U32, arg, NULL), 0);
	assert_int_equal(ops->copy_d2h(ctx, 0, out, dz, count * 4, 0), 0);
	for (uint64_t i = 0; i < count; i++)
		assert_int_equal(out[i], (uint32_t)(x[i] + y[i]));

	/* FILL part of z, leaving the last 3 words. */
	arg[0] = dz;
	arg[1] = count - 3;
	arg[2] = 0xdeadbeef;
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL), 0);
	assert_int_equal(ops->copy_d2h(ctx, 0, out, dz, count * 4, 0), 0);
	for (uint64_t i = 0; i < count - 3; i++)
		assert_int_equal(out[i], 0xdeadbeef);
	for (uint64_t i = count - 3; i < count; i++)
		assert_int_equal(out[i], (uint32_t)(x[i] + y[i]));
	arg[0] = dz;
	arg[1] = count;
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_CHECKSUM, arg, &sum), 0);
	assert_int_equal(sum, mdgpud_checksum_ref(out, count));

	/* SPIN_NS: 2 ms of GPU time, measured by a slice. */
	assert_int_equal(ops->slice_begin(ctx), 0);
	arg[0] = 2000000;
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_SPIN_NS, arg, NULL), 0);
	assert_int_equal(ops->slice_end(ctx, 0, &res), 0);
	fprintf(stderr, "slice with SPIN_NS 2 ms: %" PRIu64 " ns\n", res);
	assert_true(res >= 1900000 && res < 200000000);
	assert_int_equal(ops->builtin(ctx, 0, 77, arg, NULL), -EINVAL);

	assert_int_equal(ops->sync(ctx, 0), 0);
	ops->ctx_destroy(ctx);	/* frees dx, dy, dz and the host buffers */
}

/* p[i] = p[i] * k + i for i < n; parameters (u64 p, u64 n, u32 k). */
static const char scale_add_ptx[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	".visible .entry scale_add(.param .u64 p_ptr, .param .u64 p_n,\n"
	"                          .param .u32 p_k)\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b32 %r<8>;\n"
	"	.reg .b64 %rd<8>;\n"
	"	ld.param.u64 %rd1, [p_ptr];\n"
	"	ld.param.u64 %rd2, [p_n];\n"
	"	ld.param.u32 %r1, [p_k];\n"
	"	mov.u32 %r2, %ctaid.x;\n"
	"	mov.u32 %r3, %ntid.x;\n"
	"	mov.u32 %r4, %tid.x;\n"
	"	mul.wide.u32 %rd3, %r2, %r3;\n"
	"	cvt.u64.u32 %rd4, %r4;\n"
	"	add.u64 %rd3, %rd3, %rd4;\n"
	"	setp.ge.u64 %p1, %rd3, %rd2;\n"
	"	@%p1 bra DONE;\n"
	"	cvta.to.global.u64 %rd5, %rd1;\n"
	"	shl.b64 %rd6, %rd3, 2;\n"
	"	add.u64 %rd7, %rd5, %rd6;\n"
	"	ld.global.u32 %r5, [%rd7];\n"
	"	cvt.u32.u64 %r6, %rd3;\n"
	"	mad.lo.u32 %r7, %r5, %r1, %r6;\n"
	"	st.global.u32 [%rd7], %r7;\n"
	"DONE:\n"
	"	ret;\n"
	"}\n";

/* *addr += val through whatever address it is given. */
static const char poke_ptx[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	".visible .entry poke(.param .u64 p_addr, .param .u32 p_val)\n"
	"{\n"
	"	.reg .b32 %r<4>;\n"
	"	.reg .b64 %rd<3>;\n"
	"	ld.param.u64 %rd1, [p_addr];\n"
	"	ld.param.u32 %r1, [p_val];\n"
	"	cvta.to.global.u64 %rd2, %rd1;\n"
	"	ld.global.u32 %r2, [%rd2];\n"
	"	add.u32 %r3, %r2, %r1;\n"
	"	st.global.u32 [%rd2], %r3;\n"
	"	ret;\n"
	"}\n";

static void pack_scale_add(uint8_t blob[20], uint64_t p, uint64_t n,
			   uint32_t k)
{
	memcpy(blob, &p, 8);
	memcpy(blob + 8, &n, 8);
	memcpy(blob + 16, &k, 4);
}

/* A fatbin of zeroed entries, one whose entry reaches past the bytes it
 * gave, an ELF whose section table lies past its end, a fatbin wrapper
 * (host pointers). */
static const uint32_t zeroed_fatbin[20] = { 0xba55ed50U, 0x00100001U, 64 };
static const uint32_t long_entry_fatbin[8] = { 0xba55ed50U, 0x00100001U, 16,
					       0, 0x01010002U, 16, 4096, 0 };
static const unsigned char short_elf[64] = {
	0x7f, 'E', 'L', 'F', 2, 1, 1, 0, [16] = 2, 0, 190, 0, 1,
	[40] = 0, 0x10, 0, 0, 0, 0, 0, 0,	/* e_shoff 4096 */
	[52] = 64, 0, 0, 0, 0, 0, 64, 0, 4, 0,	/* 4 section headers */
};
static const uint32_t wrapper[4] = { 0x466243b1U, 1, 0x1000, 0 };
static const struct {
	const void *p;
	size_t len;
} bad_images[] = {
	{ zeroed_fatbin, sizeof(zeroed_fatbin) },
	{ long_entry_fatbin, sizeof(long_entry_fatbin) },
	{ short_elf, sizeof(short_elf) },
	{ wrapper, sizeof(wrapper) },
};

static void test_module_launch_events(void **state)
{
	const uint64_t n = 100000;
	struct mdgpud_dim3 block = { 128, 1, 1 };
	struct mdgpud_dim3 grid = { (uint32_t)((n + 127) / 128), 1, 1 };
	struct mdgpud_bctx *ctx;
	uint64_t mod, fn, fn2, d, res, ev0, ev1, ns;
	uint64_t arg[5] = { 0 };
	uint32_t *h;
	uint8_t blob[20];
	static const char bad_ptx[] = ".version 8.0\n.target sm_90\n"
				      ".address_size 64\nthis is not ptx\n";

	(void)state;
	REQUIRE_GPU();
	ctx = ctx_new(3);
	h = ops->host_alloc(ctx, n * 4);
	assert_non_null(h);
	for (uint64_t i = 0; i < n; i++)
		h[i] = (uint32_t)(i * 7 + 3);
	assert_int_equal(ops->mem_alloc(ctx, n * 4, &d, &res), 0);
	assert_int_equal(ops->copy_h2d(ctx, 0, d, h, n * 4, 0), 0);

	/* A JIT error is -EINVAL, with the driver's CUresult (218, invalid
	 * PTX), and leaves the context usable. */
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX, bad_ptx,
					  sizeof(bad_ptx) - 1, &mod), -EINVAL);
	assert_int_equal(ops->err_code(ctx), 218);
	/* Images not whole by their own headers never reach the driver
	 * (NVIDIA's loader trusts them: the zeroed fatbin kept it busy for
	 * more than 60 s): -EINVAL, CUDA_ERROR_INVALID_IMAGE (200). */
	for (size_t i = 0; i < sizeof(bad_images) / sizeof(bad_images[0]);
	     i++) {
		assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_CUBIN,
						  bad_images[i].p,
						  bad_images[i].len, &mod),
				 -EINVAL);
		assert_int_equal(ops->err_code(ctx), 200);
	}
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX, scale_add_ptx,
					  sizeof(scale_add_ptx) - 1, &mod), 0);
	assert_int_equal(ops->func_get(ctx, mod, "no_such_kernel", &fn, NULL),
			 -ENOENT);
	assert_int_equal(ops->func_get(ctx, mod, "scale_add", &fn, NULL), 0);

	assert_int_equal(ops->event_create(ctx, 0, &ev0), 0);
	assert_int_equal(ops->event_create(ctx, 0, &ev1), 0);
	assert_int_equal(ops->event_record(ctx, 0, ev0), 0);
	pack_scale_add(blob, d, n, 5);
	assert_int_equal(test_launch(ops, ctx, 0, fn, grid, block, 0, blob,
				     sizeof(blob)), 0);
	arg[0] = 1000000;	/* 1 ms between the events */
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_SPIN_NS, arg, NULL), 0);
	assert_int_equal(ops->event_record(ctx, 0, ev1), 0);
	assert_int_equal(ops->sync(ctx, 0), 0);
	assert_int_equal(ops->event_elapsed(ctx, ev0, ev1, &ns), 0);
	fprintf(stderr, "event elapsed around launch + 1 ms spin: %" PRIu64
		" ns\n", ns);
	assert_true(ns >= 950000 && ns < 100000000);

	assert_int_equal(ops->copy_d2h(ctx, 0, h, d, n * 4, 0), 0);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(h[i], (uint32_t)((i * 7 + 3) * 5 + i));

	/* A bad launch shape fails, reported by the next sync. */
	block.x = 4096;
	assert_int_equal(test_launch(ops, ctx, 0, fn, grid, block, 0, blob,
				     sizeof(blob)), 0);
	assert_int_equal(ops->sync(ctx, 0), -EINVAL);
	assert_int_equal(ops->sync(ctx, 0), 0);

	/* Unload: its functions are gone with it. */
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX, scale_add_ptx,
					  sizeof(scale_add_ptx), &res), 0);
	assert_int_equal(ops->func_get(ctx, res, "scale_add", &fn2, NULL), 0);
	assert_int_equal(ops->module_unload(ctx, mod), 0);
	block.x = 128;
	assert_int_equal(test_launch(ops, ctx, 0, fn, grid, block, 0, blob,
				     sizeof(blob)), 0);
	assert_int_equal(ops->sync(ctx, 0), -ENOENT);
	assert_int_equal(test_launch(ops, ctx, 0, fn2, grid, block, 0, blob,
				     sizeof(blob)), 0);
	assert_int_equal(ops->sync(ctx, 0), 0);

	assert_int_equal(ops->event_destroy(ctx, ev0), 0);
	assert_int_equal(ops->event_destroy(ctx, ev1), 0);
	assert_int_equal(ops->event_destroy(ctx, ev1), -ENOENT);
	ops->ctx_destroy(ctx);
}

static void test_free_scrub(void **state)
{
	const uint64_t n = 64u << 20;
	struct mdgpud_bctx *ctx;
	uint64_t d, d2, res, sum, arg[5] = { 0 };
	uint32_t *h;

	(void)state;
	REQUIRE_GPU();
	ctx = ctx_new(4);
	assert_int_equal(ops->mem_alloc(ctx, n, &d, &res), 0);
	arg[0] = d;
	arg[1] = n / 4;
	arg[2] = 0x5ec7e7;
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL), 0);
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_CHECKSUM, arg, &sum), 0);
	assert_int_not_equal(sum, 0);
	assert_int_equal(ops->mem_free(ctx, d, n), 0);
	assert_int_equal(ops->mem_alloc(ctx, n, &d2, &res), 0);
	fprintf(stderr, "re-allocation %s the freed address\n",
		d2 == d ? "reused" : "did not reuse");
	arg[0] = d2;
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_CHECKSUM, arg, &sum), 0);
	assert_int_equal(sum, 0);
	h = ops->host_alloc(ctx, 1u << 20);
	assert_non_null(h);
	memset(h, 0xff, 1u << 20);
	assert_int_equal(ops->copy_d2h(ctx, 0, h, d2 + n - (1u << 20), 1u << 20, 0),
			 0);
	for (uint32_t i = 0; i < (1u << 18); i++)
		assert_int_equal(h[i], 0);
	ops->ctx_destroy(ctx);
}

/* Tenant B's worker is killed: B reports -ENODEV, A carries on. */
static void test_worker_crash(void **state)
{
	struct mdgpud_bctx *a, *b;
	uint64_t da, db, res, sum, arg[5] = { 0 };
	pid_t pid;

	(void)state;
	REQUIRE_GPU();
	a = ctx_new(5);
	b = ctx_new(6);
	assert_int_equal(ops->mem_alloc(a, 1u << 20, &da, &res), 0);
	assert_int_equal(ops->mem_alloc(b, 1u << 20, &db, &res), 0);
	arg[0] = da;
	arg[1] = 1u << 18;
	arg[2] = 7;
	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL), 0);

	pid = mdgpud_backend_cuda_worker_pid(b);
	assert_true(pid > 0);
	assert_int_equal(kill(pid, SIGKILL), 0);
	{
		siginfo_t si;

		/* Dead before B's next request (not reaped: B's job). */
		assert_int_equal(waitid(P_PID, (id_t)pid, &si,
					WEXITED | WNOWAIT), 0);
	}
	assert_int_equal(ops->sync(b, 0), -ENODEV);
	assert_int_equal(ops->mem_alloc(b, 4096, &db, &res), -ENODEV);
	assert_null(ops->host_alloc(b, 4096));
	assert_int_equal(mdgpud_backend_cuda_worker_pid(b), -1);

	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_CHECKSUM, arg, &sum), 0);
	assert_int_equal(sum, 7ull * (1ull << 18) * (1ull << 18));
	assert_int_equal(ops->sync(a, 0), 0);
	ops->ctx_destroy(b);
	ops->ctx_destroy(a);
}

/*
 * Isolation: tenant B's own PTX kernel dereferences a forged pointer into
 * tenant A's allocation.  A's data is neither read nor changed, B's context
 * fails (-EIO, then -ENODEV), and A keeps running correctly.
 */
static void test_isolation_forged_pointer(void **state)
{
	const uint64_t n = 64u << 20;
	struct mdgpud_dim3 one = { 1, 1, 1 };
	struct mdgpud_bctx *a, *b;
	uint64_t da, res, sum_before, sum_after, mod, fn, arg[5] = { 0 };
	uint64_t target;
	uint32_t *h, val = 0x1111;
	uint8_t blob[12];
	int ret;

	(void)state;
	REQUIRE_GPU();
	a = ctx_new(7);
	b = ctx_new(8);
	assert_int_equal(ops->mem_alloc(a, n, &da, &res), 0);
	arg[0] = da;
	arg[1] = n / 4;
	arg[2] = 0xa11ce5;
	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL), 0);
	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_CHECKSUM, arg,
				      &sum_before), 0);

	assert_int_equal(ops->module_load(b, MDGPU_MODULE_PTX, poke_ptx,
					  sizeof(poke_ptx), &mod), 0);
	assert_int_equal(ops->func_get(b, mod, "poke", &fn, NULL), 0);
	target = da + n / 2;	/* A's device address, forged into B */
	memcpy(blob, &target, 8);
	memcpy(blob + 8, &val, 4);
	assert_int_equal(test_launch(ops, b, 0, fn, one, one, 0, blob, sizeof(blob)),
			 0);
	ret = ops->sync(b, 0);
	fprintf(stderr, "tenant B's forged access to 0x%" PRIx64 ": sync %d "
		"(%s)\n", target, ret, strerror(-ret));
	assert_true(ret == -EIO || ret == -ENODEV);
	assert_int_equal(ops->sync(b, 0), -ENODEV);
	assert_int_equal(mdgpud_backend_cuda_worker_pid(b), -1);

	/* A is intact and keeps working. */
	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_CHECKSUM, arg,
				      &sum_after), 0);
	assert_int_equal(sum_after, sum_before);
	h = ops->host_alloc(a, 4096);
	assert_non_null(h);
	assert_int_equal(ops->copy_d2h(a, 0, h, target, 4096, 0), 0);
	for (int i = 0; i < 1024; i++)
		assert_int_equal(h[i], 0xa11ce5);
	arg[2] = 42;
	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL), 0);
	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_CHECKSUM, arg,
				      &sum_after), 0);
	assert_int_equal(sum_after, 42ull * (n / 4) * (n / 4));
	assert_int_equal(ops->sync(a, 0), 0);
	ops->ctx_destroy(b);
	ops->ctx_destroy(a);
}

/*
 * A tenant whose worker is killed cannot scrub its memory: the memory is
 * released by the driver when the process dies.  A new tenant that takes
 * as much memory must not find any of the dead tenant's data.
 */
static void test_crash_leaves_no_data(void **state)
{
	/* On the fake driver (host memory, ASAN) 256 MiB copies take longer
	 * than the hang bound on a loaded 2-core machine: 32 MiB there. */
	const uint64_t n = strncmp(info.name, "mdgpu fake", 10) ?
			   256u << 20 : 32u << 20;
	const uint64_t words = n / 4;
	const uint32_t secret = 0x7e57da7a;
	struct mdgpud_bctx *a, *c;
	uint64_t da, dc, res, arg[5] = { 0 };
	uint32_t *h;
	uint64_t found = 0;
	siginfo_t si;
	pid_t pid;

	(void)state;
	REQUIRE_GPU();
	a = ctx_new(9);
	assert_int_equal(ops->mem_alloc(a, n, &da, &res), 0);
	arg[0] = da;
	arg[1] = words;
	arg[2] = secret;
	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL), 0);
	assert_int_equal(ops->sync(a, 0), 0);
	pid = mdgpud_backend_cuda_worker_pid(a);
	assert_true(pid > 0);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(ops->sync(a, 0), -ENODEV);
	ops->ctx_destroy(a);

	c = ctx_new(10);
	assert_int_equal(ops->mem_alloc(c, n, &dc, &res), 0);
	h = ops->host_alloc(c, n);
	assert_non_null(h);
	assert_int_equal(ops->copy_d2h(c, 0, h, dc, n, 0), 0);
	for (uint64_t i = 0; i < words; i++)
		found += h[i] == secret;
	fprintf(stderr, "new tenant's fresh %" PRIu64 " MiB: %" PRIu64 " words "
		"of the dead tenant's pattern (address %s)\n", n >> 20, found,
		dc == da ? "reused" : "differs");
	assert_int_equal(found, 0);
	ops->ctx_destroy(c);
}

struct thread_arg {
	uint32_t vgpu;
	int failures;
};

static void *tenant_thread(void *p)
{
	struct thread_arg *t = p;
	struct mdgpud_bctx *ctx = NULL;
	const uint64_t words = 1u << 20;
	uint64_t d, res, sum, arg[5] = { 0 };

	if (ops->ctx_create(be, t->vgpu, &ctx) ||
	    ops->mem_alloc(ctx, words * 4, &d, &res)) {
		t->failures++;
		if (ctx)
			ops->ctx_destroy(ctx);
		return NULL;
	}
	for (uint32_t i = 0; i < 200; i++) {
		arg[0] = d;
		arg[1] = words;
		arg[2] = t->vgpu * 1000 + i;
		if (ops->builtin(ctx, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL) ||
		    ops->builtin(ctx, 0, MDGPU_BUILTIN_CHECKSUM, arg, &sum) ||
		    sum != (uint64_t)(t->vgpu * 1000 + i) * words * words)
			t->failures++;
	}
	if (ops->sync(ctx, 0))
		t->failures++;
	ops->ctx_destroy(ctx);
	return NULL;
}

/* Four tenants, each driven from its own thread, concurrently. */
static void test_concurrent_tenants(void **state)
{
	pthread_t th[4];
	struct thread_arg ta[4];

	(void)state;
	REQUIRE_GPU();
	for (int i = 0; i < 4; i++) {
		ta[i].vgpu = 20 + (uint32_t)i;
		ta[i].failures = 0;
		assert_int_equal(pthread_create(&th[i], NULL, tenant_thread,
						&ta[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(ta[i].failures, 0);
	}
}

/* map_shared: a memfd mapped by the caller, used at an offset. */
static void test_map_shared(void **state)
{
	const size_t size = 8u << 20, off = 2u << 20;
	struct mdgpud_bctx *ctx;
	uint64_t d, res;
	uint8_t *p;
	int fd;

	(void)state;
	REQUIRE_GPU();
	ctx = ctx_new(11);
	fd = memfd_create("test-aperture", MFD_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(size + off)), 0);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)off);
	assert_true(p != MAP_FAILED);
	assert_int_equal(ops->map_shared(ctx, fd, off, p, size), 0);
	assert_int_equal(ops->map_shared(ctx, fd, 1, p, size), -EINVAL);
	close(fd);	/* the worker holds its own mapping */
	for (size_t i = 0; i < size; i++)
		p[i] = (uint8_t)(i * 131 + 7);
	assert_int_equal(ops->mem_alloc(ctx, size, &d, &res), 0);
	assert_int_equal(ops->copy_h2d(ctx, 0, d, p + 4096, size - 4096, 0), 0);
	memset(p, 0, size);
	assert_int_equal(ops->copy_d2h(ctx, 0, p, d, size - 4096, 0), 0);
	for (size_t i = 0; i < size - 4096; i++)
		assert_int_equal(p[i], (uint8_t)((i + 4096) * 131 + 7));
	ops->host_free(ctx, p, size);	/* unmaps in the worker only */
	assert_int_equal(ops->copy_d2h(ctx, 0, p, d, 4096, 0), 0);	/* staged */
	assert_int_equal(p[0], (uint8_t)(4096 * 131 + 7));
	assert_int_equal(munmap(p, size), 0);
	ops->ctx_destroy(ctx);
}

/*
 * A cubin image ($MDGPUD_TEST_CUBIN, built from tests/gpu/scale_add.cu by
 * tests/gpu/run-on-gpu.sh when nvcc exists) loads and runs like PTX.
 */
static void test_cubin(void **state)
{
	const char *path = getenv("MDGPUD_TEST_CUBIN");
	const uint64_t n = 5000;
	struct mdgpud_dim3 block = { 256, 1, 1 }, grid = { 20, 1, 1 };
	struct mdgpud_bctx *ctx;
	uint64_t mod, fn, d, res;
	uint8_t blob[20], *img;
	uint32_t *h;
	long len;
	FILE *f;

	(void)state;
	REQUIRE_GPU();
	if (!path || !*path) {
		printf("SKIPPED: MDGPUD_TEST_CUBIN not set (no nvcc)\n");
		skip();
	}
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len > 0);
	rewind(f);
	img = malloc((size_t)len);
	assert_non_null(img);
	assert_int_equal(fread(img, 1, (size_t)len, f), (size_t)len);
	fclose(f);

	ctx = ctx_new(12);
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_CUBIN, img,
					  (size_t)len, &mod), 0);
	free(img);
	assert_int_equal(ops->func_get(ctx, mod, "scale_add", &fn, NULL), 0);
	h = ops->host_alloc(ctx, n * 4);
	assert_non_null(h);
	for (uint64_t i = 0; i < n; i++)
		h[i] = (uint32_t)i;
	assert_int_equal(ops->mem_alloc(ctx, n * 4, &d, &res), 0);
	assert_int_equal(ops->copy_h2d(ctx, 0, d, h, n * 4, 0), 0);
	pack_scale_add(blob, d, n, 3);
	assert_int_equal(test_launch(ops, ctx, 0, fn, grid, block, 0, blob,
				     sizeof(blob)), 0);
	assert_int_equal(ops->sync(ctx, 0), 0);
	assert_int_equal(ops->copy_d2h(ctx, 0, h, d, n * 4, 0), 0);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(h[i], (uint32_t)(i * 3 + i));
	ops->ctx_destroy(ctx);
}

/* A kernel that never ends. */
static const char loop_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry forever()\n{\nLOOP:\n\tbra LOOP;\n}\n";

static double secs_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* The worker has exited (not reaped: that is ctx_destroy's job). */
static void assert_worker_exited(pid_t pid)
{
	siginfo_t si;

	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
}

/*
 * A tenant kernel that never ends: ctx_destroy gives the worker
 * MDGPUD_CUDA_SHUTDOWN_MS (set to 2 s in main) and then kills it; another
 * tenant keeps working.
 */
static void test_hung_kernel_destroy(void **state)
{
	struct mdgpud_dim3 one = { 1, 1, 1 };
	struct mdgpud_bctx *a, *h;
	uint64_t mod, fn, d, res, sum, arg[5] = { 0 };
	struct timespec t0;
	double secs;
	pid_t pid;

	(void)state;
	REQUIRE_GPU();
	a = ctx_new(13);
	h = ctx_new(14);
	assert_int_equal(ops->module_load(h, MDGPU_MODULE_PTX, loop_ptx,
					  sizeof(loop_ptx), &mod), 0);
	assert_int_equal(ops->func_get(h, mod, "forever", &fn, NULL), 0);
	assert_int_equal(test_launch(ops, h, 0, fn, one, one, 0, NULL, 0), 0);
	pid = mdgpud_backend_cuda_worker_pid(h);
	assert_true(pid > 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ops->ctx_destroy(h);
	secs = secs_since(&t0);
	fprintf(stderr, "destroying a context with an endless kernel took "
		"%.2f s\n", secs);
	assert_true(secs < 8);
	assert_int_equal(kill(pid, 0), -1);	/* reaped */

	assert_int_equal(ops->mem_alloc(a, 4096, &d, &res), 0);
	arg[0] = d;
	arg[1] = 1024;
	arg[2] = 3;
	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL), 0);
	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_CHECKSUM, arg, &sum), 0);
	assert_int_equal(sum, 3ull * 1024 * 1024);
	ops->ctx_destroy(a);
}

/*
 * A kernel that never ends, found by the bound on every wait
 * (hang_timeout_ms, TEST_HANG_MS here) where the dispatcher finds it, at
 * the end of the slice that launched it: slice_end fails -ETIMEDOUT
 * within the bound, the worker is killed, every later op of that context
 * fails -ENODEV, destroy returns at once, and another tenant works before,
 * during and after.
 */
static void test_hung_kernel_bound(void **state)
{
	struct mdgpud_dim3 one = { 1, 1, 1 };
	struct mdgpud_bctx *a, *h;
	uint64_t mod, fn, d, res, sum, gpu_ns, arg[5] = { 0 };
	struct timespec t0;
	double secs;
	pid_t pid;

	(void)state;
	REQUIRE_GPU();
	a = ctx_new(15);
	h = ctx_new(16);
	assert_int_equal(ops->mem_alloc(a, 4096, &d, &res), 0);
	arg[0] = d;
	arg[1] = 1024;
	arg[2] = 5;
	assert_int_equal(ops->module_load(h, MDGPU_MODULE_PTX, loop_ptx,
					  sizeof(loop_ptx), &mod), 0);
	assert_int_equal(ops->func_get(h, mod, "forever", &fn, NULL), 0);
	pid = mdgpud_backend_cuda_worker_pid(h);
	assert_true(pid > 0);

	assert_int_equal(ops->slice_begin(h), 0);
	assert_int_equal(test_launch(ops, h, 0, fn, one, one, 0, NULL, 0), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ops->slice_end(h, 0, &gpu_ns), -ETIMEDOUT);
	secs = secs_since(&t0);
	fprintf(stderr, "a slice with an endless kernel ended after %.3f s "
		"(bound %u ms)\n", secs, TEST_HANG_MS);
	assert_true(secs >= TEST_HANG_MS * 1e-3);
	assert_true(secs < TEST_HANG_MS * 1e-3 + 1.0);
	assert_int_equal(mdgpud_backend_cuda_worker_pid(h), -1);
	assert_worker_exited(pid);
	assert_int_equal(ops->sync(h, 0), -ENODEV);
	assert_int_equal(ops->mem_alloc(h, 4096, &d, &res), -ENODEV);
	assert_int_equal(test_launch(ops, h, 0, fn, one, one, 0, NULL, 0), -ENODEV);

	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL), 0);
	assert_int_equal(ops->builtin(a, 0, MDGPU_BUILTIN_CHECKSUM, arg, &sum), 0);
	assert_int_equal(sum, 5ull * 1024 * 1024);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ops->ctx_destroy(h);
	secs = secs_since(&t0);
	fprintf(stderr, "destroying the hung context took %.3f s\n", secs);
	assert_true(secs < 1.5);
	assert_int_equal(kill(pid, 0), -1);	/* reaped */
	assert_int_equal(ops->sync(a, 0), 0);
	ops->ctx_destroy(a);
}


/* ------------------------------------------------------------------ */
/* Streams (ABI 1.2)                                                    */
/* ------------------------------------------------------------------ */

/* count u32 words at d on `stream` hold `v` (checksum v * count^2). */
static void assert_words(struct mdgpud_bctx *ctx, uint64_t stream,
			 uint64_t d, uint64_t count, uint32_t v)
{
	uint64_t sum = 0, arg[5] = { d, count, 0, 0, 0 };

	assert_int_equal(ops->builtin(ctx, stream, MDGPU_BUILTIN_CHECKSUM, arg,
				      &sum), 0);
	assert_int_equal(sum, (uint64_t)v * count * count);
}

static void builtin_on(struct mdgpud_bctx *ctx, uint64_t stream,
		       uint32_t kernel, uint64_t a0, uint64_t a1, uint64_t a2)
{
	uint64_t arg[5] = { a0, a1, a2, 0, 0 };

	assert_int_equal(ops->builtin(ctx, stream, kernel, arg, NULL), 0);
}

/*
 * Two streams: one busy with a long kernel while the other's work
 * completes (they run concurrently), events pending then complete,
 * STREAM_WAIT_EVENT orders a fill on one stream after a fill on the
 * other, per-stream order, memset widths.
 */
static void test_streams_order_events(void **state)
{
	const uint64_t words = 1024;
	struct mdgpud_bctx *ctx;
	uint64_t d, d2, res, s1, s2, ev, ev_nt, ns;
	uint32_t pending;
	int32_t least, greatest;
	uint16_t *h16;

	(void)state;
	REQUIRE_GPU();
	ops->stream_priorities(be, &least, &greatest);
	fprintf(stderr, "stream priorities: least %d greatest %d\n", least,
		greatest);
	assert_true(greatest <= least);
	ctx = ctx_new(30);
	assert_int_equal(ops->mem_alloc(ctx, words * 4, &d, &res), 0);
	assert_int_equal(ops->mem_alloc(ctx, words * 4, &d2, &res), 0);
	assert_int_equal(ops->stream_create(ctx, 0, least, &s1), 0);
	assert_int_equal(ops->stream_create(ctx, MDGPU_STREAM_F_NON_BLOCKING,
					    greatest, &s2), 0);
	assert_int_not_equal(s1, s2);
	assert_int_equal(ops->event_create(ctx, 0, &ev), 0);

	/* s1: 600 ms of spinning, then fill 1, then the event. */
	builtin_on(ctx, s1, MDGPU_BUILTIN_SPIN_NS, 600000000, 0, 0);
	builtin_on(ctx, s1, MDGPU_BUILTIN_FILL_U32, d, words, 1);
	assert_int_equal(ops->event_record(ctx, s1, ev), 0);
	assert_int_equal(ops->event_query(ctx, ev, &pending), 0);
	assert_int_equal(pending, 1);
	assert_int_equal(ops->stream_query(ctx, s1, &pending), 0);
	assert_int_equal(pending, 1);
	/* s2 runs meanwhile: its sync ends while s1 still spins. */
	builtin_on(ctx, s2, MDGPU_BUILTIN_FILL_U32, d2, words, 5);
	assert_int_equal(ops->sync(ctx, s2), 0);
	assert_int_equal(ops->stream_query(ctx, s2, &pending), 0);
	assert_int_equal(pending, 0);
	assert_int_equal(ops->stream_query(ctx, s1, &pending), 0);
	assert_int_equal(pending, 1);
	/* s2 waits for the event, then fills 2: after s1's fill of 1. */
	assert_int_equal(ops->stream_wait_event(ctx, s2, ev), 0);
	builtin_on(ctx, s2, MDGPU_BUILTIN_FILL_U32, d, words, 2);
	assert_int_equal(ops->event_sync(ctx, ev), 0);
	assert_int_equal(ops->event_query(ctx, ev, &pending), 0);
	assert_int_equal(pending, 0);
	assert_int_equal(ops->sync(ctx, s2), 0);
	assert_words(ctx, 0, d, words, 2);
	assert_words(ctx, s2, d2, words, 5);

	/* Per-stream order: fill 3, fill 4, 16-bit memset of the first
	 * half, all on s1, then a copy on s1. */
	builtin_on(ctx, s1, MDGPU_BUILTIN_FILL_U32, d, words, 3);
	builtin_on(ctx, s1, MDGPU_BUILTIN_FILL_U32, d, words, 4);
	assert_int_equal(ops->mem_set(ctx, s1, d, 0xbeef, 2, words * 2), 0);
	assert_int_equal(ops->mem_set(ctx, s1, d + words * 2, 0x01020304, 4,
				      words * 2), 0);
	h16 = ops->host_alloc(ctx, words * 4);
	assert_non_null(h16);
	assert_int_equal(ops->copy_d2h(ctx, s1, h16, d, words * 4, 0), 0);
	for (uint64_t i = 0; i < words; i++)
		assert_int_equal(h16[i], 0xbeef);
	for (uint64_t i = words; i < 2 * words; i += 2) {
		assert_int_equal(h16[i], 0x0304);
		assert_int_equal(h16[i + 1], 0x0102);
	}

	/* Timing disabled: ELAPSED refuses it. */
	assert_int_equal(ops->event_create(ctx, MDGPU_EVENT_F_DISABLE_TIMING,
					   &ev_nt), 0);
	assert_int_equal(ops->event_record(ctx, s1, ev_nt), 0);
	assert_int_equal(ops->event_record(ctx, s1, ev), 0);
	assert_int_equal(ops->sync(ctx, 0), 0);
	assert_int_equal(ops->event_elapsed(ctx, ev_nt, ev, &ns), -EINVAL);
	assert_int_equal(ops->event_elapsed(ctx, ev, ev, &ns), 0);

	/* Unknown streams fail cleanly. */
	assert_int_equal(ops->stream_destroy(ctx, s2), 0);
	assert_int_equal(ops->stream_destroy(ctx, s2), -ENOENT);
	assert_int_equal(ops->sync(ctx, s2), -ENOENT);
	assert_int_equal(ops->stream_query(ctx, s2, &pending), -ENOENT);
	assert_int_equal(ops->stream_query(ctx, ev, &pending), -ENOENT);
	builtin_on(ctx, s2, MDGPU_BUILTIN_FILL_U32, d, words, 9);
	assert_int_equal(ops->sync(ctx, 0), -ENOENT);	/* latched */
	assert_int_equal(ops->sync(ctx, 0), 0);
	assert_words(ctx, s1, d2, words, 5);
	ops->ctx_destroy(ctx);
}

/*
 * F_ASYNC host copies: a copy from a shared region is queued, not waited
 * for (a kernel ahead of it on its stream still runs), and done at the
 * stream's SYNC; a staged one completes before it returns.  A destroyed
 * stream's queued work still runs and SYNC 0 waits for it.  A slice's
 * GPU time covers the work of every stream.
 */
static void test_streams_async_copy_slice(void **state)
{
	const uint64_t words = 1024;
	struct mdgpud_bctx *ctx;
	uint64_t d, res, s1, s2, gpu_ns;
	uint32_t *h, *heap, pending;
	struct timespec t0;
	double secs;

	(void)state;
	REQUIRE_GPU();
	ctx = ctx_new(31);
	assert_int_equal(ops->mem_alloc(ctx, words * 4, &d, &res), 0);
	assert_int_equal(ops->stream_create(ctx, 0, 0, &s1), 0);
	assert_int_equal(ops->stream_create(ctx, MDGPU_STREAM_F_NON_BLOCKING,
					    0, &s2), 0);
	h = ops->host_alloc(ctx, words * 4);
	assert_non_null(h);
	memset(h, 0xff, words * 4);

	builtin_on(ctx, s1, MDGPU_BUILTIN_SPIN_NS, 400000000, 0, 0);
	builtin_on(ctx, s1, MDGPU_BUILTIN_FILL_U32, d, words, 0x600d);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ops->copy_d2h(ctx, s1, h, d, words * 4, 1), 0);
	secs = secs_since(&t0);
	fprintf(stderr, "async d2h behind a 400 ms kernel returned after "
		"%.3f s\n", secs);
	assert_true(secs < 0.3);
	assert_int_equal(h[0], 0xffffffffu);	/* not yet copied */
	assert_int_equal(ops->stream_query(ctx, s1, &pending), 0);
	assert_int_equal(pending, 1);
	assert_int_equal(ops->sync(ctx, s1), 0);
	for (uint64_t i = 0; i < words; i++)
		assert_int_equal(h[i], 0x600d);

	/* Heap memory is staged: done when the call returns. */
	heap = calloc(words, 4);
	assert_non_null(heap);
	builtin_on(ctx, s1, MDGPU_BUILTIN_SPIN_NS, 100000000, 0, 0);
	assert_int_equal(ops->copy_d2h(ctx, s1, heap, d, words * 4, 1), 0);
	assert_int_equal(heap[words - 1], 0x600d);
	free(heap);

	/* An async host-to-device copy, then SYNC 0. */
	for (uint64_t i = 0; i < words; i++)
		h[i] = 77;
	assert_int_equal(ops->copy_h2d(ctx, s2, d, h, words * 4, 1), 0);
	assert_int_equal(ops->sync(ctx, 0), 0);
	assert_words(ctx, 0, d, words, 77);

	/* Destroyed with work queued: the work runs, SYNC 0 waits for it. */
	builtin_on(ctx, s2, MDGPU_BUILTIN_SPIN_NS, 300000000, 0, 0);
	builtin_on(ctx, s2, MDGPU_BUILTIN_FILL_U32, d, words, 8);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ops->stream_destroy(ctx, s2), 0);
	assert_true(secs_since(&t0) < 0.2);
	assert_int_equal(ops->sync(ctx, 0), 0);
	secs = secs_since(&t0);
	fprintf(stderr, "SYNC 0 after destroying a busy stream: %.3f s\n",
		secs);
	assert_true(secs >= 0.25);
	assert_words(ctx, 0, d, words, 8);

	/* A slice with 150 ms on s1 and 300 ms on stream 0 ... */
	assert_int_equal(ops->slice_begin(ctx), 0);
	builtin_on(ctx, s1, MDGPU_BUILTIN_SPIN_NS, 150000000, 0, 0);
	builtin_on(ctx, 0, MDGPU_BUILTIN_SPIN_NS, 300000000, 0, 0);
	assert_int_equal(ops->slice_end(ctx, 0, &gpu_ns), 0);
	fprintf(stderr, "slice with 150 ms on s1 and 300 ms on stream 0: "
		"%" PRIu64 " ns of GPU time\n", gpu_ns);
	assert_true(gpu_ns >= 290000000);
	assert_int_equal(ops->stream_query(ctx, s1, &pending), 0);
	assert_int_equal(pending, 0);
	/* ... and one with 300 ms on a non-blocking stream only. */
	assert_int_equal(ops->stream_create(ctx, MDGPU_STREAM_F_NON_BLOCKING,
					    0, &s2), 0);
	assert_int_equal(ops->slice_begin(ctx), 0);
	builtin_on(ctx, s2, MDGPU_BUILTIN_SPIN_NS, 300000000, 0, 0);
	assert_int_equal(ops->slice_end(ctx, 0, &gpu_ns), 0);
	fprintf(stderr, "slice with 300 ms on a non-blocking stream: %" PRIu64
		" ns\n", gpu_ns);
	assert_true(gpu_ns >= 290000000);
	assert_int_equal(ops->stream_query(ctx, s2, &pending), 0);
	assert_int_equal(pending, 0);
	ops->ctx_destroy(ctx);
}

/*
 * The open slice of ctx, whose work (`what`) never drains, ends
 * -ETIMEDOUT at the hang bound, within 1.5 s of slack.
 */
static void slice_end_hangs(struct mdgpud_bctx *ctx, const char *what)
{
	struct timespec t0;
	uint64_t gpu_ns;
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ops->slice_end(ctx, 0, &gpu_ns), -ETIMEDOUT);
	secs = secs_since(&t0);
	fprintf(stderr, "a slice with %s ended after %.3f s (bound %u ms)\n",
		what, secs, TEST_HANG_MS);
	assert_true(secs >= TEST_HANG_MS * 1e-3);
	assert_true(secs < TEST_HANG_MS * 1e-3 + 1.5);
}

/*
 * A kernel that never ends on a created stream: the default stream's
 * queries still answer, STREAM_QUERY says pending, and SYNC 0 (which
 * covers every stream) ends at the hang bound with -ETIMEDOUT.
 */
static void test_streams_hang_bound(void **state)
{
	struct mdgpud_dim3 one = { 1, 1, 1 };
	struct mdgpud_bctx *h;
	uint64_t mod, fn, s1, d, res;
	uint32_t pending;

	(void)state;
	REQUIRE_GPU();
	h = ctx_new(32);
	assert_int_equal(ops->mem_alloc(h, 4096, &d, &res), 0);
	assert_int_equal(ops->module_load(h, MDGPU_MODULE_PTX, loop_ptx,
					  sizeof(loop_ptx), &mod), 0);
	assert_int_equal(ops->func_get(h, mod, "forever", &fn, NULL), 0);
	assert_int_equal(ops->stream_create(h, MDGPU_STREAM_F_NON_BLOCKING, 0,
					    &s1), 0);
	assert_int_equal(test_launch(ops, h, s1, fn, one, one, 0, NULL, 0), 0);
	builtin_on(h, 0, MDGPU_BUILTIN_FILL_U32, d, 1024, 4);
	assert_int_equal(ops->sync(h, 0), -ETIMEDOUT);
	assert_int_equal(ops->ctx_status(h), -ETIMEDOUT);
	ops->ctx_destroy(h);

	/* The same, seen through STREAM_QUERY first. */
	h = ctx_new(33);
	assert_int_equal(ops->module_load(h, MDGPU_MODULE_PTX, loop_ptx,
					  sizeof(loop_ptx), &mod), 0);
	assert_int_equal(ops->func_get(h, mod, "forever", &fn, NULL), 0);
	assert_int_equal(ops->stream_create(h, 0, 0, &s1), 0);
	assert_int_equal(test_launch(ops, h, s1, fn, one, one, 0, NULL, 0), 0);
	assert_int_equal(ops->stream_query(h, s1, &pending), 0);
	assert_int_equal(pending, 1);
	assert_int_equal(ops->slice_begin(h), 0);
	slice_end_hangs(h, "an endless kernel on a created stream");
	assert_int_equal(ops->stream_query(h, s1, &pending), -ENODEV);
	ops->ctx_destroy(h);
}

/*
 * Stream memory operations (ABI 1.10): a wait on s1 holds it, and a fill
 * queued behind it, while s2 runs; a write on s2 releases it; 64-bit
 * writes and waits; a destroyed stream latched for SYNC 0; a wait that
 * nothing releases ends its slice at the hang bound.
 */
static void test_streams_memop(void **state)
{
	struct mdgpud_bctx *ctx;
	uint64_t d, res, s1, s2;
	uint32_t pending;

	(void)state;
	REQUIRE_GPU();
	ctx = ctx_new(37);
	assert_int_equal(ops->mem_alloc(ctx, 4096, &d, &res), 0);
	assert_int_equal(ops->mem_set(ctx, 0, d, 0, 1, 4096), 0);
	assert_int_equal(ops->sync(ctx, 0), 0);
	assert_int_equal(ops->stream_create(ctx, MDGPU_STREAM_F_NON_BLOCKING, 0,
					    &s1), 0);
	assert_int_equal(ops->stream_create(ctx, MDGPU_STREAM_F_NON_BLOCKING, 0,
					    &s2), 0);

	assert_int_equal(ops->stream_memop(ctx, s1, MDGPU_MEMOP_WAIT32, d, 1,
					   MDGPU_MEMOP_WAIT_EQ), 0);
	builtin_on(ctx, s1, MDGPU_BUILTIN_FILL_U32, d + 64, 16, 7);
	assert_int_equal(ops->stream_query(ctx, s1, &pending), 0);
	assert_int_equal(pending, 1);
	builtin_on(ctx, s2, MDGPU_BUILTIN_FILL_U32, d + 128, 16, 5);
	assert_int_equal(ops->sync(ctx, s2), 0);
	assert_words(ctx, s2, d + 128, 16, 5);
	assert_words(ctx, s2, d + 64, 16, 0);	/* s1's fill waits */
	assert_int_equal(ops->stream_query(ctx, s1, &pending), 0);
	assert_int_equal(pending, 1);
	assert_int_equal(ops->stream_memop(ctx, s2, MDGPU_MEMOP_WRITE32, d, 1,
					   0), 0);
	assert_int_equal(ops->sync(ctx, s1), 0);
	assert_words(ctx, s1, d + 64, 16, 7);

	assert_int_equal(ops->stream_memop(ctx, s1, MDGPU_MEMOP_WRITE64, d + 8,
					   1ULL << 40, 0), 0);
	assert_int_equal(ops->stream_memop(ctx, s2, MDGPU_MEMOP_WAIT64, d + 8,
					   1ULL << 40, MDGPU_MEMOP_WAIT_GEQ),
			 0);
	assert_int_equal(ops->stream_memop(ctx, s2, MDGPU_MEMOP_WAIT64, d + 8,
					   1ULL << 40, MDGPU_MEMOP_WAIT_AND),
			 0);
	assert_int_equal(ops->sync(ctx, 0), 0);

	assert_int_equal(ops->stream_destroy(ctx, s2), 0);
	assert_int_equal(ops->stream_memop(ctx, s2, MDGPU_MEMOP_WRITE32, d, 2,
					   0), 0);
	assert_int_equal(ops->sync(ctx, 0), -ENOENT);	/* latched */
	assert_int_equal(ops->sync(ctx, 0), 0);

	/* The word is 1: a wait for 2 is never met. */
	assert_int_equal(ops->slice_begin(ctx), 0);
	assert_int_equal(ops->stream_memop(ctx, s1, MDGPU_MEMOP_WAIT32, d, 2,
					   MDGPU_MEMOP_WAIT_EQ), 0);
	slice_end_hangs(ctx, "an unreleased stream wait");
	assert_int_equal(ops->ctx_status(ctx), -ETIMEDOUT);
	ops->ctx_destroy(ctx);
}

/*
 * A GPU fault: the failing command's -EIO carries the CUresult (700,
 * illegal address) in err_code, and the lost context reports -EIO with
 * the same code.
 */
static void test_fault_code(void **state)
{
	struct mdgpud_dim3 one = { 1, 1, 1 };
	struct mdgpud_bctx *b;
	uint64_t mod, fn, target = 16, s1;
	uint32_t val = 1;
	uint8_t blob[12];

	(void)state;
	REQUIRE_GPU();
	b = ctx_new(34);
	assert_int_equal(ops->module_load(b, MDGPU_MODULE_PTX, poke_ptx,
					  sizeof(poke_ptx), &mod), 0);
	assert_int_equal(ops->func_get(b, mod, "poke", &fn, NULL), 0);
	assert_int_equal(ops->stream_create(b, 0, 0, &s1), 0);
	memcpy(blob, &target, 8);
	memcpy(blob + 8, &val, 4);
	assert_int_equal(test_launch(ops, b, s1, fn, one, one, 0, blob,
				     sizeof(blob)), 0);
	assert_int_equal(ops->sync(b, s1), -EIO);
	assert_int_equal(ops->err_code(b), 700);
	assert_int_equal(ops->ctx_status(b), -EIO);
	assert_int_equal(ops->sync(b, 0), -ENODEV);
	assert_int_equal(ops->err_code(b), 700);
	ops->ctx_destroy(b);
}

/* CUresults of refused images (cuda.h). */
#define TEST_CU_INVALID_PTX	218

/*
 * `text` followed by PTX comment lines up to `len` bytes in all (the last
 * byte a newline), malloc'ed and NUL-terminated: a valid module far larger
 * than its code.
 */
static char *padded_ptx(const char *text, size_t len)
{
	static const char line[] = "// padding past the staging area ......"
				   "..........................................\n";
	size_t n = strlen(text), at;
	char *p;

	assert_true(len > n + 1);
	p = malloc(len + 1);
	assert_non_null(p);
	memcpy(p, text, n);
	for (at = n; at < len; at += sizeof(line) - 1)
		memcpy(p + at, line, len - at < sizeof(line) - 1 ?
		       len - at : sizeof(line) - 1);
	p[len - 1] = '\n';
	p[len] = '\0';
	return p;
}

/*
 * An image in device memory (module_load_dev, ABI 1.3): larger than the
 * worker's staging area (which refuses it through module_load), it loads
 * and its kernel runs; a refused one answers the driver's CUresult in
 * err_code, cleared by err_clear; over the bound it is refused before
 * the worker sees it.
 */
static void test_module_load_dev(void **state)
{
	const size_t len = MDGPUD_CUDA_RPC_STAGING_BYTES + (4u << 20);
	const uint64_t n = 4096;
	struct mdgpud_dim3 block = { 256, 1, 1 }, grid = { 16, 1, 1 };
	struct mdgpud_bctx *ctx;
	uint64_t img, d, res, mod, fn;
	uint8_t blob[20];
	uint32_t *h;
	char *ptx, *bad;

	(void)state;
	REQUIRE_GPU();
	ctx = ctx_new(35);
	ptx = padded_ptx(scale_add_ptx, len);
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX, ptx, len + 1,
					  &mod), -E2BIG);
	assert_int_equal(ops->mem_alloc(ctx, len, &img, &res), 0);
	assert_int_equal(ops->copy_h2d(ctx, 0, img, ptx, len, 0), 0);
	/* Without its NUL: the worker terminates the text it copied. */
	assert_int_equal(ops->module_load_dev(ctx, MDGPU_MODULE_PTX, img, len,
					      &mod), 0);
	assert_int_equal(ops->func_get(ctx, mod, "scale_add", &fn, NULL), 0);

	h = ops->host_alloc(ctx, n * 4);
	assert_non_null(h);
	for (uint64_t i = 0; i < n; i++)
		h[i] = (uint32_t)(i * 5 + 1);
	assert_int_equal(ops->mem_alloc(ctx, n * 4, &d, &res), 0);
	assert_int_equal(ops->copy_h2d(ctx, 0, d, h, n * 4, 0), 0);
	pack_scale_add(blob, d, n, 3);
	assert_int_equal(test_launch(ops, ctx, 0, fn, grid, block, 0, blob,
				     sizeof(blob)), 0);
	assert_int_equal(ops->sync(ctx, 0), 0);
	assert_int_equal(ops->copy_d2h(ctx, 0, h, d, n * 4, 0), 0);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(h[i], (uint32_t)((i * 5 + 1) * 3 + i));

	/* The driver's refusal: its CUresult, the context still usable. */
	bad = padded_ptx(".version 8.0\n.target sm_90\n.address_size 64\n"
			 "this is not ptx\n", len);
	assert_int_equal(ops->copy_h2d(ctx, 0, img, bad, len, 0), 0);
	ops->err_clear(ctx);
	assert_int_equal(ops->module_load_dev(ctx, MDGPU_MODULE_PTX, img, len,
					      &res), -EINVAL);
	assert_int_equal(ops->err_code(ctx), TEST_CU_INVALID_PTX);
	ops->err_clear(ctx);
	assert_int_equal(ops->err_code(ctx), 0);
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX, bad, 4096,
					  &res), -EINVAL);
	assert_int_equal(ops->err_code(ctx), TEST_CU_INVALID_PTX);
	assert_int_equal(ops->ctx_status(ctx), 0);

	/* Bounds: the ABI's, checked before the worker sees the request. */
	assert_int_equal(ops->module_load_dev(ctx, MDGPU_MODULE_PTX, img,
					      MDGPU_MODULE_DEVICE_MAX + 1ULL,
					      &res), -E2BIG);
	assert_int_equal(ops->module_load_dev(ctx, MDGPU_MODULE_PTX, img, 0,
					      &res), -EINVAL);
	assert_int_equal(ops->module_load_dev(ctx, 7, img, len, &res),
			 -EINVAL);
#ifndef MDGPUD_TEST_CUDA_FAKE
	/* An address this context does not have is the driver's refusal
	 * (the fake's device memory is the worker's own: it cannot tell). */
	ops->err_clear(ctx);
	assert_int_not_equal(ops->module_load_dev(ctx, MDGPU_MODULE_PTX, 8,
						  4096, &res), 0);
	assert_int_not_equal(ops->err_code(ctx), 0);
	assert_int_equal(ops->ctx_status(ctx), 0);
#endif

	/* The module loaded from device memory outlives that memory. */
	assert_int_equal(ops->mem_free(ctx, img, len), 0);
	assert_int_equal(test_launch(ops, ctx, 0, fn, grid, block, 0, blob,
				     sizeof(blob)), 0);
	assert_int_equal(ops->sync(ctx, 0), 0);
	assert_int_equal(ops->module_unload(ctx, mod), 0);
	free(bad);
	free(ptx);
	ops->ctx_destroy(ctx);
}

/*
 * A module's kernels by name (ABI 1.5): three kernels declared ka, kb,
 * _Z2kcPd, and a global that is no kernel.  Their order is the driver's:
 * the fake lists them as declared, which is what the real driver does for
 * a cubin (measured on driver 580); on a GPU the PTX's JIT decides, so
 * there only the set is checked.
 */
static const char funcs_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .global .u32 not_a_kernel;\n"
	".visible .entry ka()\n{\n\tret;\n}\n"
	".visible .entry kb(.param .u64 p)\n{\n\tret;\n}\n"
	".visible .entry _Z2kcPd(.param .u64 p)\n{\n\tret;\n}\n";
static const char funcs_list[] = "ka\0kb\0_Z2kcPd";	/* + its NUL */

/* A module with no kernel at all: one global. */
static const char no_funcs_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .global .u32 only_data;\n";

/* module_funcs into a buffer of len bytes filled with 0xa5 first. */
static int list_funcs(struct mdgpud_bctx *ctx, uint64_t mod, char *buf,
		      uint32_t len, uint32_t *written, uint64_t *size,
		      uint64_t *count)
{
	memset(buf, 0xa5, len);
	*written = UINT32_MAX;
	*size = UINT64_MAX;
	*count = UINT64_MAX;
	return ops->module_funcs(ctx, mod, buf, len, written, size, count);
}

/* Whether the n bytes of buf from `from` are still the 0xa5 fill. */
static bool untouched(const char *buf, size_t from, size_t n)
{
	for (size_t i = from; i < from + n; i++)
		if ((uint8_t)buf[i] != 0xa5)
			return false;
	return true;
}

static void test_module_funcs(void **state)
{
	const uint32_t whole = sizeof(funcs_list);	/* 3 + 3 + 8 bytes */
	struct mdgpud_bctx *ctx;
	uint64_t mod, none, gone, size, count, fn;
	uint32_t written;
	char buf[64];

	(void)state;
	REQUIRE_GPU();
	assert_int_equal(whole, 14);
	ctx = ctx_new(36);
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX, funcs_ptx,
					  sizeof(funcs_ptx), &mod), 0);

	/* The whole list, then every kernel by its name. */
	assert_int_equal(list_funcs(ctx, mod, buf, sizeof(buf), &written,
				    &size, &count), 0);
	assert_int_equal(written, whole);
	assert_int_equal(size, whole);
	assert_int_equal(count, 3);
	assert_true(untouched(buf, whole, sizeof(buf) - whole));
#ifdef MDGPUD_TEST_CUDA_FAKE
	assert_memory_equal(buf, funcs_list, whole);
#endif
	for (const char *p = buf; p < buf + written; p += strlen(p) + 1) {
		assert_non_null(memmem(funcs_list, whole, p, strlen(p) + 1));
		assert_int_equal(ops->func_get(ctx, mod, p, &fn, NULL), 0);
	}

	/* Short buffers: whole names only, the rest untouched; size and
	 * count are the whole list's all the same. */
	assert_int_equal(list_funcs(ctx, mod, buf, whole - 1, &written, &size,
				    &count), 0);
	assert_int_equal(size, whole);
	assert_int_equal(count, 3);
#ifdef MDGPUD_TEST_CUDA_FAKE
	assert_int_equal(written, 6);			/* ka, kb */
	assert_memory_equal(buf, "ka\0kb", 6);
	assert_true(untouched(buf, 6, whole - 1 - 6));
	assert_int_equal(list_funcs(ctx, mod, buf, 6, &written, &size,
				    &count), 0);
	assert_int_equal(written, 6);			/* exactly two */
	assert_int_equal(list_funcs(ctx, mod, buf, 5, &written, &size,
				    &count), 0);
	assert_int_equal(written, 3);			/* ka */
	assert_memory_equal(buf, "ka", 3);
	assert_true(untouched(buf, 3, 2));
#endif
	assert_true(written < whole);
	assert_int_equal(list_funcs(ctx, mod, buf, 1, &written, &size,
				    &count), 0);
	assert_int_equal(written, 0);			/* not even one */
	assert_true(untouched(buf, 0, 1));
	assert_int_equal(size, whole);
	assert_int_equal(count, 3);

	/* A module without kernels: an empty list. */
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX, no_funcs_ptx,
					  sizeof(no_funcs_ptx), &none), 0);
	assert_int_equal(list_funcs(ctx, none, buf, sizeof(buf), &written,
				    &size, &count), 0);
	assert_int_equal(written, 0);
	assert_int_equal(size, 0);
	assert_int_equal(count, 0);
	assert_true(untouched(buf, 0, sizeof(buf)));

	/* A module the worker does not have: never loaded, or unloaded. */
	assert_int_equal(list_funcs(ctx, 0x12345678, buf, sizeof(buf),
				    &written, &size, &count), -ENOENT);
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX, funcs_ptx,
					  sizeof(funcs_ptx), &gone), 0);
	assert_int_equal(ops->module_unload(ctx, gone), 0);
	assert_int_equal(list_funcs(ctx, gone, buf, sizeof(buf), &written,
				    &size, &count), -ENOENT);
	assert_true(untouched(buf, 0, sizeof(buf)));

	/* None of it lost the context. */
	assert_int_equal(ops->ctx_status(ctx), 0);
	assert_int_equal(list_funcs(ctx, mod, buf, sizeof(buf), &written,
				    &size, &count), 0);
	assert_int_equal(written, whole);
	assert_int_equal(ops->module_unload(ctx, none), 0);
	assert_int_equal(ops->module_unload(ctx, mod), 0);
	ops->ctx_destroy(ctx);
}

/*
 * Cooperative and clustered launches go through cuLaunchKernelEx with the
 * attributes; plain ones through cuLaunchKernel.  The fake's launch_info
 * kernel reports how it was launched.
 */
#ifdef MDGPUD_TEST_CUDA_FAKE
static const char launch_info_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry launch_info(.param .u64 p)\n{\n\tret;\n}\n";

static void test_launch_ex(void **state)
{
	struct mdgpud_bctx *ctx;
	uint64_t mod, fn, d, res;
	uint32_t *h;
	struct mdgpud_launch l = {
		.grid = { 4, 2, 1 }, .block = { 32, 1, 1 },
		.params_len = 8,
	};

	(void)state;
	REQUIRE_GPU();
	ctx = ctx_new(35);
	assert_int_equal(ops->mem_alloc(ctx, 64, &d, &res), 0);
	h = ops->host_alloc(ctx, 4096);
	assert_non_null(h);
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX,
					  launch_info_ptx,
					  sizeof(launch_info_ptx), &mod), 0);
	assert_int_equal(ops->func_get(ctx, mod, "launch_info", &fn, NULL), 0);
	l.func = fn;
	l.params = &d;
	l.flags = MDGPU_LAUNCH_F_COOPERATIVE;
	l.cluster = MDGPU_CLUSTER(2, 2, 1);
	assert_int_equal(ops->launch(ctx, 0, &l), 0);
	assert_int_equal(ops->copy_d2h(ctx, 0, h, d, 20, 0), 0);
	assert_int_equal(h[0], 1);	/* cuLaunchKernelEx */
	assert_int_equal(h[1], 1);	/* cooperative */
	assert_int_equal(h[2], 2);
	assert_int_equal(h[3], 2);
	assert_int_equal(h[4], 1);
	l.flags = 0;
	l.cluster = MDGPU_CLUSTER(4, 1, 1);
	assert_int_equal(ops->launch(ctx, 0, &l), 0);
	assert_int_equal(ops->copy_d2h(ctx, 0, h, d, 20, 0), 0);
	assert_int_equal(h[0], 1);
	assert_int_equal(h[1], 0);
	assert_int_equal(h[2], 4);
	l.cluster = 0;
	assert_int_equal(ops->launch(ctx, 0, &l), 0);
	assert_int_equal(ops->copy_d2h(ctx, 0, h, d, 20, 0), 0);
	assert_int_equal(h[0], 0);	/* cuLaunchKernel */
	assert_int_equal(h[2], 0);
	/* A cluster the driver refuses (3 does not divide 4) fails at the
	 * next sync, as any bad launch. */
	l.cluster = MDGPU_CLUSTER(3, 1, 1);
	assert_int_equal(ops->launch(ctx, 0, &l), 0);
	assert_int_equal(ops->sync(ctx, 0), -EINVAL);
	ops->ctx_destroy(ctx);
}

/* The fake's sum_big: *out = the sum of the bytes of p (32756 bytes: a
 * blob of MDGPU_PARAMS_MAX). */
static const char sum_big_ptx[] =
	".version 8.1\n.target sm_90\n.address_size 64\n"
	".visible .entry sum_big(.param .u64 out, .param .align 8 "
	".b8 p[32756])\n{\n\tret;\n}\n";

/*
 * Blobs past the RPC slot's 4 KiB (ABI 1.6) travel in the big areas:
 * three times as many launches as areas, back to back and between small
 * inline launches, each with its own bytes; every sum must be its own
 * blob's (an area reused before its launch ran would give another's).
 */
static void test_launch_big_params(void **state)
{
	enum { RUNS = 3 * MDGPUD_CUDA_RPC_BIG_SLOTS };
	struct mdgpud_bctx *ctx;
	uint64_t mod, fn, info_fn, d, res, want[RUNS], *got;
	uint8_t *blob = malloc(MDGPU_PARAMS_MAX + 1);
	struct mdgpud_launch l = {
		.grid = { 1, 1, 1 }, .block = { 1, 1, 1 },
		.params = blob, .params_len = MDGPU_PARAMS_MAX,
	};
	struct mdgpud_launch small = l;

	(void)state;
	assert_non_null(blob);
	ctx = ctx_new(36);
	assert_int_equal(ops->mem_alloc(ctx, 8 * RUNS + 64, &d, &res), 0);
	got = ops->host_alloc(ctx, 4096);
	assert_non_null(got);
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX, sum_big_ptx,
					  sizeof(sum_big_ptx), &mod), 0);
	assert_int_equal(ops->func_get(ctx, mod, "sum_big", &fn, NULL), 0);
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX,
					  launch_info_ptx,
					  sizeof(launch_info_ptx), &mod), 0);
	assert_int_equal(ops->func_get(ctx, mod, "launch_info", &info_fn,
				       NULL), 0);
	l.func = fn;
	small.func = info_fn;
	small.params_len = 8;
	for (int i = 0; i < RUNS; i++) {
		uint64_t out = d + 8 * (uint64_t)i, info = d + 8 * RUNS;

		want[i] = 0;
		memcpy(blob, &out, sizeof(out));
		for (uint32_t j = 8; j < MDGPU_PARAMS_MAX; j++) {
			blob[j] = (uint8_t)(j * 31 + i * 7);
			want[i] += blob[j];
		}
		assert_int_equal(ops->launch(ctx, 0, &l), 0);
		memcpy(blob, &info, sizeof(info));	/* inline, 8 bytes */
		assert_int_equal(ops->launch(ctx, 0, &small), 0);
	}
	assert_int_equal(ops->sync(ctx, 0), 0);
	assert_int_equal(ops->copy_d2h(ctx, 0, got, d, 8 * RUNS, 0), 0);
	for (int i = 0; i < RUNS; i++)
		assert_int_equal(got[i], want[i]);
	l.params_len = MDGPU_PARAMS_MAX + 1;
	assert_int_equal(ops->launch(ctx, 0, &l), -E2BIG);
	ops->ctx_destroy(ctx);
	free(blob);
}
#endif

#ifdef MDGPUD_TEST_CUDA_FAKE
/* A context whose worker misbehaves at its first cuMemAlloc (the fake's
 * MDGPUD_FAKE_CUDA_ALLOC). */
static struct mdgpud_bctx *ctx_misbehaving(uint32_t vgpu, const char *how)
{
	struct mdgpud_bctx *ctx;

	assert_int_equal(setenv("MDGPUD_FAKE_CUDA_ALLOC", how, 1), 0);
	ctx = ctx_new(vgpu);
	unsetenv("MDGPUD_FAKE_CUDA_ALLOC");
	return ctx;
}

/* A driver call that never returns: the request fails -ETIMEDOUT within
 * the bound, then the context is dead and destroy does not wait. */
static void test_worker_call_hangs(void **state)
{
	struct mdgpud_bctx *h = ctx_misbehaving(17, "hang");
	pid_t pid = mdgpud_backend_cuda_worker_pid(h);
	struct timespec t0;
	uint64_t d, res;
	double secs;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ops->mem_alloc(h, 4096, &d, &res), -ETIMEDOUT);
	secs = secs_since(&t0);
	assert_true(secs >= TEST_HANG_MS * 1e-3);
	assert_true(secs < TEST_HANG_MS * 1e-3 + 1.0);
	assert_worker_exited(pid);
	assert_int_equal(ops->mem_alloc(h, 4096, &d, &res), -ENODEV);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ops->ctx_destroy(h);
	assert_true(secs_since(&t0) < 1.5);
}

/* scale_add_ptx whose load the fake's JIT makes last `ms`. */
static void slow_ptx(char *buf, size_t len, unsigned int ms)
{
	assert_true((size_t)snprintf(buf, len, "// mdgpud-fake-jit-ms %u\n%s",
				     ms, scale_add_ptx) < len);
}

/* One fill + checksum round of 4096 words at d: whether it was right. */
static bool fill_sum(struct mdgpud_bctx *c, uint64_t d, uint32_t v)
{
	uint64_t arg[5] = { d, 4096, v, 0, 0 }, sum = 0;

	if (ops->builtin(c, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL))
		return false;
	arg[2] = 0;
	if (ops->builtin(c, 0, MDGPU_BUILTIN_CHECKSUM, arg, &sum))
		return false;
	return sum == (uint64_t)v * 4096 * 4096;
}

/*
 * A module load the caller does not wait for (module_load_start, as the
 * dispatcher loads): it returns at once; the context takes nothing else
 * (-EBUSY) while the JIT runs; another context works all along; a JIT
 * longer than the hang bound succeeds and its kernel runs; module_load()
 * waits for the same JIT past the hang bound too.  A JIT past the load
 * bound fails -ETIMEDOUT at that bound, the context lost as after a hang.
 * A load given up (pend_abort, or ctx_destroy) kills its worker at
 * once.
 */
static void test_module_load_pending(void **state)
{
	const unsigned int slow_ms = TEST_HANG_MS + 500;
	struct mdgpud_dim3 one = { 1, 1, 1 }, block = { 64, 1, 1 };
	struct mdgpud_bctx *a, *b, *c;
	uint64_t mod, fn, da, db, res, max_ns = 0;
	unsigned int rounds = 0, bad = 0;
	struct timespec t0, r0;
	uint32_t h[64];
	uint8_t blob[20];
	char ptx[2048];
	double secs;
	pid_t pid;
	int ret;

	(void)state;
	a = ctx_new(95);
	b = ctx_new(96);
	assert_int_equal(ops->mem_alloc(a, sizeof(h), &da, &res), 0);
	assert_int_equal(ops->mem_alloc(b, 1u << 16, &db, &res), 0);
	slow_ptx(ptx, sizeof(ptx), slow_ms);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ops->module_load_start(a, MDGPU_MODULE_PTX, ptx,
						strlen(ptx)), 0);
	assert_true(secs_since(&t0) < 0.5);
	assert_int_equal(ops->module_load_poll(a, &mod), -EINPROGRESS);
	assert_int_equal(ops->mem_alloc(a, 4096, &res, &res), -EBUSY);
	for (;;) {
		uint64_t ns;

		ret = ops->module_load_poll(a, &mod);
		if (ret != -EINPROGRESS)
			break;
		clock_gettime(CLOCK_MONOTONIC, &r0);
		bad += !fill_sum(b, db, rounds + 1);
		ns = (uint64_t)(secs_since(&r0) * 1e9);
		if (ns > max_ns)
			max_ns = ns;
		rounds++;
	}
	secs = secs_since(&t0);
	fprintf(stderr, "pending load of a %u ms JIT (hang bound %u ms): %d "
		"after %.3f s; the other context: %u rounds, %u bad, longest "
		"%.3f ms\n", slow_ms, TEST_HANG_MS, ret, secs, rounds, bad,
		(double)max_ns * 1e-6);
	assert_int_equal(ret, 0);
	assert_true(secs >= slow_ms * 1e-3);
	assert_int_equal(bad, 0);
	assert_true(rounds >= 10);
	assert_true(max_ns < 500000000ull);
	/* Collected once: nothing is pending any more. */
	assert_int_equal(ops->module_load_poll(a, &res), -EINVAL);
	/* The module runs. */
	assert_int_equal(ops->func_get(a, mod, "scale_add", &fn, NULL), 0);
	memset(h, 0, sizeof(h));
	assert_int_equal(ops->copy_h2d(a, 0, da, h, sizeof(h), 0), 0);
	pack_scale_add(blob, da, 64, 3);
	assert_int_equal(test_launch(ops, a, 0, fn, one, block, 0, blob,
				     sizeof(blob)), 0);
	assert_int_equal(ops->copy_d2h(a, 0, h, da, sizeof(h), 0), 0);
	for (uint32_t i = 0; i < 64; i++)
		assert_int_equal(h[i], i);

	/* module_load() waits for the same JIT, past the hang bound. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ops->module_load(a, MDGPU_MODULE_PTX, ptx,
					  strlen(ptx), &mod), 0);
	assert_true(secs_since(&t0) >= slow_ms * 1e-3);

	/* Past the load bound: -ETIMEDOUT at the bound, the context lost
	 * as after a hang, its worker killed. */
	slow_ptx(ptx, sizeof(ptx), 10 * TEST_LOAD_MS);
	pid = mdgpud_backend_cuda_worker_pid(a);
	skip_reason[0] = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ops->module_load_start(a, MDGPU_MODULE_PTX, ptx,
						strlen(ptx)), 0);
	while ((ret = ops->module_load_poll(a, &mod)) == -EINPROGRESS) {
		bad += !fill_sum(b, db, 7);
		usleep(10000);
	}
	secs = secs_since(&t0);
	fprintf(stderr, "a %u ms JIT with a %u ms load bound: %d after %.3f "
		"s\n", 10 * TEST_LOAD_MS, TEST_LOAD_MS, ret, secs);
	assert_int_equal(ret, -ETIMEDOUT);
	assert_true(secs >= TEST_LOAD_MS * 1e-3);
	assert_true(secs < TEST_LOAD_MS * 1e-3 + 1.0);
	assert_non_null(strstr(skip_reason, "module_load_timeout_ms"));
	skip_reason[0] = 0;
	assert_int_equal(ops->ctx_status(a), -ETIMEDOUT);
	assert_worker_exited(pid);
	assert_int_equal(ops->mem_alloc(a, 4096, &res, &res), -ENODEV);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ops->ctx_destroy(a);
	assert_true(secs_since(&t0) < 1.5);

	/* Given up: the worker is killed at once, the context lost. */
	c = ctx_new(97);
	pid = mdgpud_backend_cuda_worker_pid(c);
	assert_int_equal(ops->module_load_start(c, MDGPU_MODULE_PTX, ptx,
						strlen(ptx)), 0);
	ops->pend_abort(c);
	assert_worker_exited(pid);
	assert_int_equal(ops->ctx_status(c), -ENODEV);
	assert_int_equal(ops->module_load_poll(c, &mod), -EINVAL);
	ops->ctx_destroy(c);
	/* Destroyed with its load under way: no wait for the JIT. */
	c = ctx_new(98);
	assert_int_equal(ops->module_load_start(c, MDGPU_MODULE_PTX, ptx,
						strlen(ptx)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ops->ctx_destroy(c);
	assert_true(secs_since(&t0) < 1.5);
	skip_reason[0] = 0;

	assert_int_equal(bad, 0);
	assert_true(fill_sum(b, db, 9));
	ops->ctx_destroy(b);
}

/*
 * A hostile worker fills its message with no terminator and exits without
 * answering: the request fails -ENODEV at once, and the supervisor logs a
 * message cut at the message size (a copy, never the shared bytes).
 */
static void test_worker_scribbles(void **state)
{
	struct mdgpud_bctx *h = ctx_misbehaving(18, "scribble");
	uint64_t d, res;
	const char *lost;

	(void)state;
	skip_reason[0] = 0;
	assert_int_equal(ops->mem_alloc(h, 4096, &d, &res), -ENODEV);
	lost = strstr(skip_reason, "lost: AAAA");
	assert_non_null(lost);
	assert_int_equal(strspn(lost + 6, "A"), MDGPUD_CUDA_RPC_MSG_MAX - 1);
	skip_reason[0] = 0;
	ops->ctx_destroy(h);
}
#endif

/* The worker inherits no descriptor of the supervisor but its own two. */
static void test_worker_fds(void **state)
{
	struct mdgpud_bctx *ctx;
	char dir[64], link[PATH_MAX], path[PATH_MAX + 64];
	struct dirent *de;
	int canary, found = 0;
	DIR *d;
	pid_t pid;

	(void)state;
	REQUIRE_GPU();
	/*
	 * Deliberately without CLOEXEC, as a careless daemon might, and above
	 * the numbers the worker's own descriptors take (3, 4).
	 */
	canary = memfd_create("mdgpud-leak-canary", 0);
	assert_true(canary >= 0);
	found = fcntl(canary, F_DUPFD, 64);
	assert_true(found >= 64);
	close(canary);
	canary = found;
	found = 0;
	ctx = ctx_new(15);
	pid = mdgpud_backend_cuda_worker_pid(ctx);
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = 0;
		if (strstr(link, "mdgpud-leak-canary"))
			found++;
	}
	closedir(d);
	close(canary);
	assert_int_equal(found, 0);
	ops->ctx_destroy(ctx);
}

/*
 * The scheduling state letter of a process (/proc/PID/stat: "pid (comm) S
 * ..."), 0 if it cannot be read (gone), '?' if it cannot be parsed.
 */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static int pid_gone(pid_t pid)
{
	char st = proc_state(pid);

	return !st || st == 'Z' || st == 'X';
}

/*
 * A short-lived supervisor (a forked child: no cuInit in this process)
 * makes a context for vgpu_id, then an allocation, or with `hung` a
 * kernel that never ends, and exits without ctx_destroy.  Returns its
 * worker's pid once the supervisor is gone.
 */
static pid_t orphan_a_worker(uint32_t vgpu_id, bool hung)
{
	struct mdgpud_dim3 one = { 1, 1, 1 };
	int pfd[2], status;
	pid_t sup, worker = -1;

	assert_int_equal(pipe(pfd), 0);
	sup = fork();
	assert_true(sup >= 0);
	if (sup == 0) {
		struct mdgpud_bctx *ctx;
		uint64_t d, res, mod, fn;
		pid_t w = -1;

		if (!ops->ctx_create(be, vgpu_id, &ctx) &&
		    (hung ? !ops->module_load(ctx, MDGPU_MODULE_PTX, loop_ptx,
					      sizeof(loop_ptx), &mod) &&
			    !ops->func_get(ctx, mod, "forever", &fn, NULL) &&
			    !test_launch(ops, ctx, 0, fn, one, one, 0, NULL, 0)
			  : !ops->mem_alloc(ctx, 1u << 20, &d, &res)))
			w = mdgpud_backend_cuda_worker_pid(ctx);
		if (write(pfd[1], &w, sizeof(w)) != sizeof(w))
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &worker, sizeof(worker)),
			 sizeof(worker));
	close(pfd[0]);
	assert_int_equal(waitpid(sup, &status, 0), sup);
	assert_true(worker > 0);
	return worker;
}

/*
 * A supervisor that dies without ctx_destroy: its worker notices (it is
 * reparented), scrubs, frees and exits on its own.
 */
static void test_orphaned_worker_exits(void **state)
{
	pid_t worker;

	(void)state;
	REQUIRE_GPU();
	worker = orphan_a_worker(16, false);
	for (int i = 0; i < 500 && !pid_gone(worker); i++)
		usleep(10000);
	assert_true(pid_gone(worker));
}

/*
 * The same with the worker blocked in the driver: an endless kernel holds
 * the synchronize of its teardown, so its idle check never runs; its
 * orphan watch ends it 2 s after the supervisor went.
 */
static void test_orphaned_hung_worker_exits(void **state)
{
	struct timespec t0;
	pid_t worker;
	double secs;

	(void)state;
	REQUIRE_GPU();
	worker = orphan_a_worker(17, true);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 1000 && !pid_gone(worker); i++)
		usleep(10000);
	secs = secs_since(&t0);
	fprintf(stderr, "a worker with an endless kernel outlived its "
		"supervisor by %.2f s\n", secs);
	assert_true(pid_gone(worker));
	assert_true(secs >= 1.5);	/* not the idle path: it was blocked */
}

/* open() failures need no GPU: a missing worker; a driver without device. */
static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Polls until the process is in state `st`; false after timeout_ms. */
/* CPU time of another process (clock_getcpuclockid), ns. */
static uint64_t cpu_ns(clockid_t clk)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(clk, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool wait_state(pid_t pid, char st, unsigned int timeout_ms)
{
	uint64_t end = mono_ns() + (uint64_t)timeout_ms * 1000000;

	do {
		if (proc_state(pid) == st)
			return true;
		usleep(50);
	} while (mono_ns() < end);
	return false;
}

/*
 * The dispatcher's hints (core/dispatch.c): a slice_end told to expect a
 * long drain still returns as soon as the worker answers (the supervisor
 * sleeps on the futex the answer wakes, not a timer), and expect_work
 * makes a worker asleep on its futex spin across the hinted time (it uses
 * CPU), not before it (asleep, no CPU), then sleep again.  CPU time from
 * clock_getcpuclockid(), not /proc states: a spin of 0.6 ms is easy to
 * miss by polling on a loaded machine.
 */
static void test_slice_hints(void **state)
{
	uint64_t arg[5] = { 1000000 }, gpu = 0, t = UINT64_MAX, c0, c1, c2, spins;
	struct mdgpud_bctx *ctx;
	clockid_t cpu;
	pid_t pid;

	(void)state;
	REQUIRE_GPU();
	ctx = ctx_new(71);
	pid = mdgpud_backend_cuda_worker_pid(ctx);
	assert_true(pid > 0);

	/* The best of three: a machine busy with other work may not run the
	 * worker for tens of ms once, which says nothing of the wake-up. */
	for (int i = 0; i < 3; i++) {
		uint64_t g = 0, d;

		assert_int_equal(ops->slice_begin(ctx), 0);
		assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_SPIN_NS,
					      arg, NULL), 0);
		d = mono_ns();
		assert_int_equal(ops->slice_end(ctx, 80000000, &g), 0);
		d = mono_ns() - d;
		assert_true(g >= 900000);
		if (d < t) {
			t = d;
			gpu = g;
		}
	}
	fprintf(stderr, "slice_end expecting 80 ms for 1 ms of work: %" PRIu64
		" us (best of 3), gpu %" PRIu64 " ns\n", t / 1000, gpu);
	assert_true(t < 40000000);

	assert_non_null(ops->expect_work);
	assert_true(wait_state(pid, 'S', 5000));	/* idle: asleep */
	assert_int_equal(clock_getcpuclockid(pid, &cpu), 0);
	spins = mdgpud_backend_cuda_hint_spins(ctx);
	t = mono_ns();
	c0 = cpu_ns(cpu);
	ops->expect_work(ctx, 15000000);
	/* Work expected in 15 ms: asleep until 0.3 ms before it ... */
	while (mono_ns() - t < 12000000)
		usleep(500);
	c1 = cpu_ns(cpu);
	assert_int_equal(proc_state(pid), 'S');
	/* ... then spinning across the expected time, 0.6 ms. */
	while (mono_ns() - t < 25000000)
		usleep(1000);
	c2 = cpu_ns(cpu);
	fprintf(stderr, "hint of 15 ms: worker CPU %" PRIu64 " us in the first "
		"12 ms, %" PRIu64 " us in the next 13 ms\n", (c1 - c0) / 1000,
		(c2 - c1) / 1000);
	/* Asleep (CPU time accrues only while running, whatever the load);
	 * then it spun in the window, however late it got a CPU. */
	assert_true(c1 - c0 < 2000000);
	assert_int_equal(mdgpud_backend_cuda_hint_spins(ctx), spins + 1);
	assert_true(wait_state(pid, 'S', 5000));	/* ... and asleep after */
	ops->ctx_destroy(ctx);
}

/* CPU time worker `clk` uses in the next `ms` milliseconds. */
static uint64_t cpu_over(clockid_t clk, unsigned int ms)
{
	uint64_t c0 = cpu_ns(clk), t = mono_ns();

	while (mono_ns() - t < ms * 1000000ULL)
		usleep(1000);
	return cpu_ns(clk) - c0;
}

/*
 * Whether worker `clk` uses `want_ns` of CPU within `ms` milliseconds
 * (a polling worker on a loaded machine gets a share of a CPU, at times
 * a small one: the test waits for the CPU time rather than judging one
 * short window).  *used: what it used until then.
 */
static bool cpu_reaches(clockid_t clk, uint64_t want_ns, unsigned int ms,
			uint64_t *used)
{
	uint64_t c0 = cpu_ns(clk), t = mono_ns();

	do {
		usleep(1000);
		*used = cpu_ns(clk) - c0;
	} while (*used < want_ns && mono_ns() - t < ms * 1000000ULL);
	return *used >= want_ns;
}

/*
 * Idle polling (Documentation/daemon.md, "Waking from idle"): with one
 * poll grant (worker_pollers = 1), the worker of the context whose slice
 * ended last polls its ring (it uses CPU while idle) and the other sleeps;
 * a new slice end moves the grant, taking it back from the first worker,
 * and a destroyed context's grant goes to the next.  CPU bounds are loose:
 * a polling worker yields between checks, so on a loaded machine it gets
 * a share of a CPU, not all of it; an asleep one gets none.
 */
static void test_poll_grants(void **state)
{
	struct mdgpud_backend_cfg cfg;
	struct mdgpud_backend *b2;
	struct mdgpud_gpu_info i2;
	struct mdgpud_bctx *x, *y;
	clockid_t cx, cy;
	uint64_t g, ux, uy;
	bool polled;

	(void)state;
	REQUIRE_GPU();
	test_cfg(&cfg);
	cfg.worker_pollers = 1;
	cfg.worker_poll_us = 400000;
	assert_int_equal(ops->open(&cfg, &b2, &i2), 0);
	assert_int_equal(ops->ctx_create(b2, 93, &x), 0);
	assert_int_equal(ops->ctx_create(b2, 94, &y), 0);
	assert_int_equal(clock_getcpuclockid(
				mdgpud_backend_cuda_worker_pid(x), &cx), 0);
	assert_int_equal(clock_getcpuclockid(
				mdgpud_backend_cuda_worker_pid(y), &cy), 0);
	assert_true(wait_state(mdgpud_backend_cuda_worker_pid(y), 'S', 5000));

	assert_int_equal(ops->slice_begin(x), 0);
	assert_int_equal(ops->slice_end(x, 0, &g), 0);
	polled = cpu_reaches(cx, 10000000, 2000, &ux);
	uy = cpu_over(cy, 100);
	fprintf(stderr, "grant to x: x used %" PRIu64 " us of CPU (10 ms "
		"wanted within 2 s), y %" PRIu64 " us in 100 ms\n",
		ux / 1000, uy / 1000);
	assert_true(polled);
	assert_true(uy < 5000000);

	/* y's slice ends: the one grant moves to y, x sleeps. */
	assert_int_equal(ops->slice_begin(y), 0);
	assert_int_equal(ops->slice_end(y, 0, &g), 0);
	assert_true(wait_state(mdgpud_backend_cuda_worker_pid(x), 'S', 5000));
	ux = cpu_over(cx, 100);
	polled = cpu_reaches(cy, 10000000, 2000, &uy);
	fprintf(stderr, "grant to y: x used %" PRIu64 " us in 100 ms, y %"
		PRIu64 " us\n", ux / 1000, uy / 1000);
	assert_true(ux < 5000000);
	assert_true(polled);

	/* y goes away with its grant; x's next slice end gets one again. */
	ops->ctx_destroy(y);
	assert_int_equal(ops->slice_begin(x), 0);
	assert_int_equal(ops->slice_end(x, 0, &g), 0);
	assert_true(cpu_reaches(cx, 10000000, 2000, &ux));
	ops->ctx_destroy(x);
	ops->close(b2);
}

/* "Key:\tv1\tv2 ..." of /proc/PID/status: how many numbers, into v. */
static int proc_status(pid_t pid, const char *key, unsigned long v[4])
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = line + klen + 1, *end;

		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		for (n = 0; n < 4; n++, p = end) {
			v[n] = strtoul(p, &end, 10);
			if (end == p)
				break;
		}
		break;
	}
	fclose(f);
	return n;
}

/* /proc/PID/<what> is another file (namespace, directory) than ours. */
static bool proc_differs(pid_t pid, const char *what, const char *ours)
{
	struct stat a, b;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	assert_int_equal(stat(path, &a), 0);
	assert_int_equal(stat(ours, &b), 0);
	return a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

/* Process `pid` was started with `var` ("NAME=value") in its
 * environment.  All of it is read: the worker's may be long. */
static bool proc_environ_has(pid_t pid, const char *var)
{
	size_t n = 0, cap = 0, got, len = strlen(var) + 1;
	char path[64], *env = NULL;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	do {
		if (n == cap) {
			cap = cap ? 2 * cap : 16384;
			env = realloc(env, cap);
			assert_non_null(env);
		}
		got = fread(env + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	/* Entries are NUL-terminated: match a whole one. */
	for (size_t i = 0; i + len <= n && !found;
	     i += strnlen(env + i, n - i) + 1)
		found = !memcmp(env + i, var, len);
	free(env);
	return found;
}

static bool dev_allowed(const char *name)
{
	return !strcmp(name, "null") || !strcmp(name, "zero") ||
	       !strcmp(name, "urandom") || !strncmp(name, "nvidia", 6);
}

/*
 * A worker runs as unprivileged ids of its own with the configured group,
 * no_new_privs, a seccomp filter, and its own mount namespace whose /dev
 * holds only null, zero, urandom and every host /dev/nvidia*, whose /tmp
 * is its own and whose / is read-only.  The supervisor is not dumpable.
 */
static void test_sandbox_worker(void **state)
{
	char path[PATH_MAX], self_ns[64] = "", w_ns[64] = "";
	struct mdgpud_bctx *ctx;
	unsigned long v[4], uid;
	struct dirent *de;
	struct statvfs sv;
	struct stat st;
	uint64_t d, res;
	int nodes = 0, fd;
	pid_t pid;
	DIR *dir;

	(void)state;
	REQUIRE_SANDBOX();
	assert_int_equal(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	ctx = ctx_new(81);
	pid = mdgpud_backend_cuda_worker_pid(ctx);
	assert_true(pid > 0);
	/* It works in there. */
	assert_int_equal(ops->mem_alloc(ctx, 1u << 20, &d, &res), 0);

	assert_int_equal(proc_status(pid, "Seccomp", v), 1);
	assert_int_equal(v[0], 2);
	assert_int_equal(proc_status(pid, "NoNewPrivs", v), 1);
	assert_int_equal(v[0], 1);
	/* Its own uid of the range, the gid of that number, and the
	 * configured group as its one supplementary group. */
	assert_int_equal(proc_status(pid, "Uid", v), 4);
	assert_in_range(v[0], TEST_WORKER_UID_BASE,
			TEST_WORKER_UID_BASE + TEST_WORKER_UID_COUNT - 1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(v[i], v[0]);
	uid = v[0];
	assert_int_equal(proc_status(pid, "Gid", v), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(v[i], uid);
	assert_int_equal(proc_status(pid, "Groups", v), 1);
	assert_int_equal(v[0], TEST_WORKER_GROUP);
	assert_int_equal(proc_status(pid, "CapEff", v), 1);
	assert_int_equal(v[0], 0);	/* hex 0 reads as 0 */

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	assert_true(readlink(path, w_ns, sizeof(w_ns) - 1) > 0);
	assert_true(readlink("/proc/self/ns/mnt", self_ns,
			     sizeof(self_ns) - 1) > 0);
	/* A network namespace of its own, unless worker_net = host. */
	assert_int_equal(proc_differs(pid, "ns/net", "/proc/self/ns/net"),
			 test_net == MDGPUD_WORKER_NET_PRIVATE);
	if (!test_private_dev) {
		/* worker_dev = none: worker_tmp = private gives a namespace
		 * with a /tmp of its own and the host's mounts otherwise
		 * (/usr as writable as ours, the host's /dev); shared, no
		 * namespace and no JIT cache. */
		bool priv = test_tmp == MDGPUD_WORKER_TMP_PRIVATE;
		struct statvfs ours;

		assert_int_equal(strcmp(w_ns, self_ns) != 0, priv);
		assert_int_equal(proc_differs(pid, "root/tmp", "/tmp"), priv);
		assert_false(proc_differs(pid, "root/dev", "/dev"));
		snprintf(path, sizeof(path), "/proc/%d/root/usr", (int)pid);
		assert_int_equal(statvfs(path, &sv), 0);
		assert_int_equal(statvfs("/usr", &ours), 0);
		assert_int_equal(sv.f_flag & ST_RDONLY, ours.f_flag & ST_RDONLY);
		if (!priv)
			assert_true(proc_environ_has(pid,
						     "CUDA_CACHE_DISABLE=1"));
		ops->ctx_destroy(ctx);
		return;
	}
	assert_string_not_equal(w_ns, self_ns);

	/* Its /dev, seen through its root: with worker_dev = private only
	 * the allowed nodes (with the host's /dev, every node) ... */
	snprintf(path, sizeof(path), "/proc/%d/root/dev", (int)pid);
	dir = opendir(path);
	assert_non_null(dir);
	while (test_private_dev && (de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!dev_allowed(de->d_name))
			fail_msg("worker /dev holds %s", de->d_name);
		nodes++;
	}
	closedir(dir);
	assert_true(nodes >= 3 || !test_private_dev);
	/* ... every host /dev/nvidia* among them, and /dev/null usable. */
	dir = opendir("/dev");
	assert_non_null(dir);
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "nvidia", 6))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/root/dev/%s", (int)pid,
			 de->d_name);
		if (lstat(path, &st))
			fail_msg("worker /dev lacks %s", de->d_name);
	}
	closedir(dir);
	snprintf(path, sizeof(path), "/proc/%d/root/dev/null", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	/* Read-only /, a /tmp of its own (empty, writable, not ours). */
	snprintf(path, sizeof(path), "/proc/%d/root/usr", (int)pid);
	assert_int_equal(statvfs(path, &sv), 0);
	assert_true(sv.f_flag & ST_RDONLY);
	snprintf(path, sizeof(path), "/proc/%d/root/tmp", (int)pid);
	assert_int_equal(statvfs(path, &sv), 0);
	assert_false(sv.f_flag & ST_RDONLY);
	assert_int_equal(stat(path, &st), 0);
	{
		struct stat host;

		assert_int_equal(stat("/tmp", &host), 0);
		assert_true(st.st_dev != host.st_dev);
	}
	ops->ctx_destroy(ctx);
}

/*
 * The supervisor's check of a worker that is not sandboxed (this very
 * process stands in for it): required refuses it, naming what is
 * missing; best-effort lets it run and logs the downgrade.  No GPU.
 */
static void test_sandbox_downgrade(void **state)
{
	struct mdgpud_cuda_sandbox sb = {
		.mode = MDGPUD_SANDBOX_REQUIRED,
		.want = MDGPUD_SANDBOX_ALL,
	};
	struct mdgpud_cuda_cred cred = {
		.uid = TEST_WORKER_UID_BASE,
		.gid = TEST_WORKER_UID_BASE,
		.group = TEST_WORKER_GROUP,
	};
	uint32_t active = ~0u;

	(void)state;
	skip_reason[0] = 0;
	assert_int_equal(mdgpud_cuda_sandbox_check(&sb, &cred, 90, getpid(),
						   &active), -EPERM);
	assert_int_equal(active & (MDGPUD_SANDBOX_IDS | MDGPUD_SANDBOX_MOUNTNS),
			 0);
	assert_non_null(strstr(skip_reason, "refused"));
	assert_non_null(strstr(skip_reason, "mountns"));
	sb.mode = MDGPUD_SANDBOX_BEST_EFFORT;
	skip_reason[0] = 0;
	assert_int_equal(mdgpud_cuda_sandbox_check(&sb, &cred, 90, getpid(),
						   &active), 0);
	assert_non_null(strstr(skip_reason, "DOWNGRADED"));
	assert_non_null(strstr(skip_reason, "missing ids"));
	sb.mode = MDGPUD_SANDBOX_OFF;
	assert_int_equal(mdgpud_cuda_sandbox_check(&sb, &cred, 90, getpid(),
						   &active), 0);
	assert_int_equal(active, 0);
	skip_reason[0] = 0;
}

/* The uid worker `pid` runs as (all four of /proc's Uid line equal). */
static unsigned long worker_uid(pid_t pid)
{
	unsigned long v[4];

	assert_int_equal(proc_status(pid, "Uid", v), 4);
	for (int i = 1; i < 4; i++)
		assert_int_equal(v[i], v[0]);
	return v[0];
}

/* What reach_as() found a process may do; all bits: as it should be. */
#define REACH_KILL0_OTHER	(1 << 0)	/* kill(other, 0) EPERM */
#define REACH_KILL_OTHER	(1 << 1)	/* kill(other, SIGKILL) EPERM */
#define REACH_PTRACE_OTHER	(1 << 2)	/* PTRACE_ATTACH other EPERM */
#define REACH_MEM_OTHER		(1 << 3)	/* its /proc mem refused */
#define REACH_KILL0_SAME	(1 << 4)	/* kill(same, 0) allowed */
#define REACH_PTRACE_SAME	(1 << 5)	/* PTRACE_ATTACH same EPERM */
#define REACH_MEM_SAME		(1 << 6)	/* its /proc mem refused */
#define REACH_ALL		0x7f

static bool reach_mem_refused(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return fd < 0;
}

/*
 * A worker-like process: the ids (uid, gid = uid, no groups) and
 * no_new_privs of worker `same`, but no seccomp filter, so that only the
 * kernel's own rules stand between it and worker `other` (another uid)
 * and `same` (its uid, not dumpable).  Returns the REACH_* bits that held.
 */
static int reach_as(unsigned long uid, pid_t same, pid_t other)
{
	int status;
	pid_t c = fork();

	assert_true(c >= 0);
	if (c == 0) {
		int r = 0;

		if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
		    setresuid(uid, uid, uid) ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(255);
		if (kill(other, 0) && errno == EPERM)
			r |= REACH_KILL0_OTHER;
		if (kill(other, SIGKILL) && errno == EPERM)
			r |= REACH_KILL_OTHER;
		if (ptrace(PTRACE_ATTACH, other, NULL, NULL) && errno == EPERM)
			r |= REACH_PTRACE_OTHER;
		if (reach_mem_refused(other))
			r |= REACH_MEM_OTHER;
		if (!kill(same, 0))
			r |= REACH_KILL0_SAME;
		if (ptrace(PTRACE_ATTACH, same, NULL, NULL) && errno == EPERM)
			r |= REACH_PTRACE_SAME;
		if (reach_mem_refused(same))
			r |= REACH_MEM_SAME;
		_exit(r);
	}
	assert_int_equal(waitpid(c, &status, 0), c);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/*
 * Workers of two vGPUs run as two uids of the range, each with the gid
 * of its number.  A process with A's ids and no_new_privs, without the
 * seccomp filter (the kernel's rules alone), can neither signal B, nor
 * ptrace it, nor open its memory; it may signal A (the same uid: the rule
 * the split relies on) but not ptrace A or read its memory (A is not
 * dumpable).  Both work on afterwards.
 */
static void test_sandbox_worker_uids(void **state)
{
	struct mdgpud_bctx *a, *b;
	unsigned long ua, ub, v[4];
	pid_t pa, pb;
	uint64_t d, res;
	int r;

	(void)state;
	REQUIRE_SANDBOX();
	a = ctx_new(85);
	b = ctx_new(86);
	pa = mdgpud_backend_cuda_worker_pid(a);
	pb = mdgpud_backend_cuda_worker_pid(b);
	ua = worker_uid(pa);
	ub = worker_uid(pb);
	fprintf(stderr, "worker uids: vgpu 85 %lu, vgpu 86 %lu\n", ua, ub);
	assert_int_not_equal(ua, ub);
	assert_in_range(ua, TEST_WORKER_UID_BASE,
			TEST_WORKER_UID_BASE + TEST_WORKER_UID_COUNT - 1);
	assert_in_range(ub, TEST_WORKER_UID_BASE,
			TEST_WORKER_UID_BASE + TEST_WORKER_UID_COUNT - 1);
	assert_int_equal(proc_status(pb, "Gid", v), 4);
	assert_int_equal(v[0], ub);
	assert_int_equal(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);

	r = reach_as(ua, pa, pb);
	fprintf(stderr, "as uid %lu: kill/ptrace/mem of the other worker "
		"refused %d/%d/%d, kill(0) of its own %s, ptrace/mem of it "
		"refused %d/%d\n", ua, !!(r & REACH_KILL_OTHER),
		!!(r & REACH_PTRACE_OTHER), !!(r & REACH_MEM_OTHER),
		r & REACH_KILL0_SAME ? "allowed" : "refused",
		!!(r & REACH_PTRACE_SAME), !!(r & REACH_MEM_SAME));
	assert_int_equal(r, REACH_ALL);
	assert_int_equal(ops->mem_alloc(a, 8192, &d, &res), 0);
	assert_int_equal(ops->mem_alloc(b, 8192, &d, &res), 0);
	assert_int_equal(ops->sync(b, 0), 0);
	ops->ctx_destroy(b);
	ops->ctx_destroy(a);
}

/*
 * The range: a backend of two uids runs two workers and refuses a third
 * (-EBUSY, the log says why) while both live; once one is destroyed and
 * reaped, its uid is given to the next.  A range that overlaps the open
 * backend's is refused.
 */
static void test_sandbox_uid_range(void **state)
{
	struct mdgpud_backend_cfg cfg;
	struct mdgpud_backend *b3, *b4;
	struct mdgpud_bctx *x, *y, *z = NULL;
	struct mdgpud_gpu_info i3;
	unsigned long ux, uy;
	const uint32_t base = TEST_WORKER_UID_BASE + TEST_WORKER_UID_COUNT;

	(void)state;
	REQUIRE_SANDBOX();
	test_cfg(&cfg);
	cfg.worker_uid_base = base;
	cfg.worker_uid_count = 2;
	assert_int_equal(ops->open(&cfg, &b3, &i3), 0);
	assert_int_equal(ops->ctx_create(b3, 87, &x), 0);
	assert_int_equal(ops->ctx_create(b3, 88, &y), 0);
	ux = worker_uid(mdgpud_backend_cuda_worker_pid(x));
	uy = worker_uid(mdgpud_backend_cuda_worker_pid(y));
	assert_int_not_equal(ux, uy);
	assert_in_range(ux, base, base + 1);
	assert_in_range(uy, base, base + 1);
	skip_reason[0] = 0;
	assert_int_equal(ops->ctx_create(b3, 89, &z), -EBUSY);
	assert_non_null(strstr(skip_reason, "no worker uid free"));
	skip_reason[0] = 0;
	ops->ctx_destroy(x);		/* reaped: its uid is free */
	assert_int_equal(ops->ctx_create(b3, 89, &z), 0);
	assert_int_equal(worker_uid(mdgpud_backend_cuda_worker_pid(z)), ux);
	ops->ctx_destroy(z);
	ops->ctx_destroy(y);
	/* Overlapping this test's main backend's range. */
	cfg.worker_uid_base = TEST_WORKER_UID_BASE + 1;
	assert_int_equal(ops->open(&cfg, &b4, &i3), -EBUSY);
	assert_non_null(strstr(skip_reason, "overlap"));
	skip_reason[0] = 0;
	ops->close(b3);
}

#ifdef MDGPUD_TEST_CUDA_FAKE
/*
 * Runs MDGPUD_FAKE_CUDA_TRY=`spec` in a new worker of backend `b` (the
 * fake tries it at the first allocation and answers with its result):
 * 0, -EPERM, -ENOENT (ENOENT or ECONNREFUSED) or -EIO.  The worker is
 * destroyed unless `keep` takes it.
 */
static int try_in_worker(struct mdgpud_backend *b, uint32_t vgpu,
			 const char *spec, struct mdgpud_bctx **keep)
{
	struct mdgpud_bctx *c = NULL;
	uint64_t d, res;
	int ret;

	assert_int_equal(setenv("MDGPUD_FAKE_CUDA_TRY", spec, 1), 0);
	ret = ops->ctx_create(b, vgpu, &c);
	unsetenv("MDGPUD_FAKE_CUDA_TRY");
	assert_int_equal(ret, 0);
	ret = ops->mem_alloc(c, 8192, &d, &res);
	if (keep)
		*keep = c;
	else
		ops->ctx_destroy(c);
	return ret;
}

/* Worker `pid` has not exited (a zombie counts as exited). */
static bool worker_alive(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)pid, &si,
				WEXITED | WNOHANG | WNOWAIT), 0);
	return si.si_pid == 0;
}

/*
 * From inside a worker, under the whole sandbox: the fake libcuda of
 * worker C tries to aim an fd's SIGIO at worker B and at the supervisor
 * (fcntl F_SETOWN, F_SETOWN_EX, ioctl FIOSETOWN) and to choose SIGKILL
 * as that signal (F_SETSIG): each fails EPERM (the allowlist), and the
 * SIGKILL-through-SIGIO route fails at its first step, on a backend of a
 * uid per worker and on one whose workers share a uid, where the kernel
 * alone would have delivered it.  B lives on and works, and commands
 * beside the refused ones still pass.  Without the sandbox, the same
 * route kills its target: the test sees the difference.
 */
static void test_sandbox_sigio_owner(void **state)
{
	struct mdgpud_backend_cfg cfg;
	struct mdgpud_backend *b2;
	struct mdgpud_bctx *b, *t;
	struct mdgpud_gpu_info i2;
	char spec[64];
	uint64_t d, res;
	pid_t pb, pt;

	(void)state;
	if (test_sandbox != MDGPUD_SANDBOX_REQUIRED || test_seccomp) {
		printf("SKIPPED: the sandbox is not required and enforced\n");
		skip();
	}
	b = ctx_new(90);
	pb = mdgpud_backend_cuda_worker_pid(b);
	{
		const struct {
			const char *op;
			pid_t to;
		} tries[] = {
			{ "setown", pb }, { "setown_ex", pb },
			{ "fiosetown", pb }, { "setown", getpid() },
			{ "setown_ex", getpid() }, { "setsig", 0 },
			{ "sigkill", pb },
		};

		for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
			snprintf(spec, sizeof(spec), "%s:%d", tries[i].op,
				 (int)tries[i].to);
			fprintf(stderr, "worker tries %s\n", spec);
			assert_int_equal(try_in_worker(be, 91, spec, NULL),
					 -EPERM);
		}
	}
	/* The other fcntl and ioctl commands pass. */
	assert_int_equal(try_in_worker(be, 91, "fd_ops:0", NULL), 0);
	usleep(100000);
	assert_true(worker_alive(pb));
	assert_int_equal(ops->mem_alloc(b, 8192, &d, &res), 0);
	assert_int_equal(ops->sync(b, 0), 0);
	ops->ctx_destroy(b);

	/* One uid for all workers: the kernel would deliver it. */
	test_cfg(&cfg);
	cfg.worker_uid_count = 0;
	cfg.worker_user = STR(TEST_SHARED_UID);
	assert_int_equal(ops->open(&cfg, &b2, &i2), 0);
	assert_int_equal(ops->ctx_create(b2, 92, &t), 0);
	pt = mdgpud_backend_cuda_worker_pid(t);
	assert_int_equal(worker_uid(pt), TEST_SHARED_UID);
	snprintf(spec, sizeof(spec), "sigkill:%d", (int)pt);
	assert_int_equal(try_in_worker(b2, 93, spec, NULL), -EPERM);
	usleep(100000);
	assert_true(worker_alive(pt));
	assert_int_equal(ops->mem_alloc(t, 8192, &d, &res), 0);
	ops->ctx_destroy(t);
	ops->close(b2);

	/* Without the sandbox the same route kills: the test sees it. */
	test_cfg(&cfg);
	cfg.sandbox = MDGPUD_SANDBOX_OFF;
	assert_int_equal(ops->open(&cfg, &b2, &i2), 0);
	assert_int_equal(ops->ctx_create(b2, 94, &t), 0);
	pt = mdgpud_backend_cuda_worker_pid(t);
	snprintf(spec, sizeof(spec), "sigkill:%d", (int)pt);
	assert_int_equal(try_in_worker(b2, 95, spec, NULL), 0);
	{
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		assert_int_equal(waitid(P_PID, (id_t)pt, &si,
					WEXITED | WNOWAIT), 0);
		assert_int_equal(si.si_status, SIGKILL);
	}
	skip_reason[0] = 0;
	ops->ctx_destroy(t);
	ops->close(b2);
}
#endif

#ifdef MDGPUD_TEST_CUDA_FAKE
/* Connects to the abstract unix socket @name from this process: 0 or
 * -errno. */
static int host_connect_abstract(const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	assert_true(fd >= 0);
	assert_true(n < sizeof(a.sun_path) - 1);
	memcpy(a.sun_path + 1, name, n);
	r = connect(fd, (struct sockaddr *)&a,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				n)) ? -errno : 0;
	close(fd);
	return r;
}

/*
 * worker_net = private: worker A listens on an abstract unix socket;
 * worker B cannot connect to it (-ENOENT: ECONNREFUSED, no such name in
 * its namespace), nor can the host; each worker's network namespace is
 * its own.  With worker_net = host the same connection succeeds, from
 * B and from the host: the channel the namespace closes, and the test
 * sees it.
 */
static void test_sandbox_netns(void **state)
{
	struct mdgpud_backend_cfg cfg;
	struct mdgpud_backend *b2;
	struct mdgpud_gpu_info i2;
	struct mdgpud_bctx *a;
	char name[64], spec[96];
	pid_t pa;

	(void)state;
	REQUIRE_SANDBOX();
	snprintf(name, sizeof(name), "mdgpu-test-netns-%d", (int)getpid());
	for (int host = 0; host < 2; host++) {
		test_cfg(&cfg);
		cfg.net = host ? MDGPUD_WORKER_NET_HOST :
				 MDGPUD_WORKER_NET_PRIVATE;
		assert_int_equal(ops->open(&cfg, &b2, &i2), 0);
		snprintf(spec, sizeof(spec), "bind:%s", name);
		assert_int_equal(try_in_worker(b2, 96, spec, &a), 0);
		pa = mdgpud_backend_cuda_worker_pid(a);
		assert_int_equal(proc_differs(pa, "ns/net", "/proc/self/ns/net"),
				 !host);
		snprintf(spec, sizeof(spec), "connect:%s", name);
		assert_int_equal(try_in_worker(b2, 97, spec, NULL),
				 host ? 0 : -ENOENT);
		assert_int_equal(host_connect_abstract(name),
				 host ? 0 : -ECONNREFUSED);
		fprintf(stderr, "worker_net = %s: abstract socket @%s of worker "
			"%d %s from another worker and the host\n",
			host ? "host" : "private", name, (int)pa,
			host ? "reached" : "unreachable");
		ops->ctx_destroy(a);
		ops->close(b2);
	}
}

/*
 * worker_dev = none with worker_tmp = private: worker A's file in /tmp
 * is in A's own /tmp (seen through /proc/A/root), not in the host's,
 * and worker B does not find it; A's other mounts are the host's
 * (/dev).  With worker_tmp = shared the file lands in the host's /tmp,
 * owned by A's uid, where the next holder of that uid would find it.
 */
/* A backend of worker_dev = none and `tmp` whose workers try `spec`:
 * with worker_tmp = shared the workers' environment is the one at open
 * (plus CUDA_CACHE_DISABLE), so the spec is set around open. */
static struct mdgpud_backend *tmp_backend(int tmp, const char *spec)
{
	struct mdgpud_backend_cfg cfg;
	struct mdgpud_backend *b;
	struct mdgpud_gpu_info i;

	test_cfg(&cfg);
	cfg.dev = MDGPUD_WORKER_DEV_NONE;
	cfg.tmp = tmp;
	assert_int_equal(setenv("MDGPUD_FAKE_CUDA_TRY", spec, 1), 0);
	assert_int_equal(ops->open(&cfg, &b, &i), 0);
	unsetenv("MDGPUD_FAKE_CUDA_TRY");
	return b;
}

static void test_sandbox_private_tmp(void **state)
{
	struct mdgpud_backend *bw, *br;
	struct mdgpud_bctx *a;
	char name[64], spec[96], host_path[128], path[PATH_MAX];
	struct stat st;
	pid_t pa;

	(void)state;
	REQUIRE_SANDBOX();
	snprintf(name, sizeof(name), "mdgpu-test-tmp-%d", (int)getpid());
	snprintf(host_path, sizeof(host_path), "/tmp/%s", name);
	unlink(host_path);
	for (int shared = 0; shared < 2; shared++) {
		int tmp = shared ? MDGPUD_WORKER_TMP_SHARED :
				   MDGPUD_WORKER_TMP_PRIVATE;

		snprintf(spec, sizeof(spec), "tmp_write:%s", name);
		bw = tmp_backend(tmp, spec);
		assert_int_equal(try_in_worker(bw, 98, spec, &a), 0);
		pa = mdgpud_backend_cuda_worker_pid(a);
		snprintf(path, sizeof(path), "/proc/%d/root/tmp/%s", (int)pa,
			 name);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_uid, worker_uid(pa));
		assert_int_equal(stat(host_path, &st) == 0, shared);
		assert_false(proc_differs(pa, "root/dev", "/dev"));
		assert_int_equal(proc_differs(pa, "ns/mnt", "/proc/self/ns/mnt"),
				 !shared);
		assert_int_equal(proc_environ_has(pa, "CUDA_CACHE_DISABLE=1"),
				 shared);
		snprintf(spec, sizeof(spec), "tmp_read:%s", name);
		br = tmp_backend(tmp, spec);
		assert_int_equal(try_in_worker(br, 99, spec, NULL),
				 shared ? 0 : -ENOENT);
		ops->close(br);
		fprintf(stderr, "worker_tmp = %s: worker %d's /tmp/%s %s\n",
			shared ? "shared" : "private", (int)pa, name,
			shared ? "in the host's /tmp" : "its own");
		ops->ctx_destroy(a);
		ops->close(bw);
		unlink(host_path);
	}
}
#endif

#ifdef MDGPUD_TEST_CUDA_FAKE
/*
 * Driver code that makes a syscall outside the allowlist (the fake's
 * MDGPUD_FAKE_CUDA_SYSCALL, at the first cuMemAlloc): the worker dies by
 * SIGSYS at once, the request fails -ENODEV well within the hang bound,
 * the context is lost, the log says why, and another tenant carries on.
 * execve is refused softly (EPERM): that worker lives on.
 */
static void test_sandbox_forbidden_syscall(void **state)
{
	static const char *const killers[] = { "ptrace", "mount" };
	struct mdgpud_bctx *a, *h;
	struct timespec t0;
	uint64_t d, res;
	siginfo_t si;
	pid_t pid;

	(void)state;
	if (test_sandbox != MDGPUD_SANDBOX_REQUIRED || test_seccomp) {
		printf("SKIPPED: seccomp is not enforced\n");
		skip();
	}
	a = ctx_new(82);
	for (size_t i = 0; i < sizeof(killers) / sizeof(killers[0]); i++) {
		assert_int_equal(setenv("MDGPUD_FAKE_CUDA_SYSCALL", killers[i],
					1), 0);
		h = ctx_new(83);
		unsetenv("MDGPUD_FAKE_CUDA_SYSCALL");
		pid = mdgpud_backend_cuda_worker_pid(h);
		skip_reason[0] = 0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		assert_int_equal(ops->mem_alloc(h, 8192, &d, &res), -ENODEV);
		assert_true(secs_since(&t0) < TEST_HANG_MS * 1e-3 / 2);
		assert_int_equal(ops->ctx_status(h), -ENODEV);
		memset(&si, 0, sizeof(si));
		assert_int_equal(waitid(P_PID, (id_t)pid, &si,
					WEXITED | WNOWAIT), 0);
		assert_int_equal(si.si_code, CLD_KILLED);
		assert_int_equal(si.si_status, SIGSYS);
		assert_non_null(strstr(skip_reason, "SIGSYS"));
		skip_reason[0] = 0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ops->ctx_destroy(h);
		assert_true(secs_since(&t0) < 1.5);
		assert_int_equal(ops->mem_alloc(a, 8192, &d, &res), 0);
	}
	assert_int_equal(setenv("MDGPUD_FAKE_CUDA_SYSCALL", "execve", 1), 0);
	h = ctx_new(84);
	unsetenv("MDGPUD_FAKE_CUDA_SYSCALL");
	assert_int_equal(ops->mem_alloc(h, 8192, &d, &res), 0);
	assert_int_equal(ops->ctx_status(h), 0);
	assert_int_equal(ops->sync(h, 0), 0);
	ops->ctx_destroy(h);
	assert_int_equal(ops->sync(a, 0), 0);
	ops->ctx_destroy(a);
}
#endif

static void test_open_errors(void **state)
{
	struct mdgpud_backend_cfg cfg = { 0 };
	struct mdgpud_backend *b2 = NULL;
	struct mdgpud_gpu_info i2;

	(void)state;
	cfg.worker_path = "/nonexistent/mdgpud-worker";
	assert_int_equal(ops->open(&cfg, &b2, &i2), -ENOENT);
	assert_null(b2);
#ifdef MDGPUD_TEST_CUDA_FAKE
	/* The fake's cuInit fails: -ENODEV, with the worker's reason. */
	cfg.worker_path = worker_path;
	skip_reason[0] = 0;
	assert_int_equal(setenv("MDGPUD_FAKE_CUDA_NODEV", "1", 1), 0);
	assert_int_equal(ops->open(&cfg, &b2, &i2), -ENODEV);
	unsetenv("MDGPUD_FAKE_CUDA_NODEV");
	assert_non_null(strstr(skip_reason, "cuInit"));
	skip_reason[0] = 0;
	cfg.device = "3";
	assert_int_equal(ops->open(&cfg, &b2, &i2), -ENODEV);
	assert_non_null(strstr(skip_reason, "no CUDA device 3"));
	skip_reason[0] = 0;
#endif
}

#ifdef MDGPUD_TEST_CUDA_FAKE
/*
 * Three fake GPUs (test_cuda_fake/devices.c): bus ids by ordinal, and
 * UUIDs that end in the ordinal.
 */
#define TEST_FAKE_GPUS		"0000:01:00.0,0000:41:00.0,0000:c1:00.0"
#define TEST_FAKE_UUID(i)	"GPU-facecda0-0000-4000-8000-00000000000" #i
static const char *const test_fake_bus[] = {
	"0000:01:00.0", "0000:41:00.0", "0000:c1:00.0",
};
static const char *const test_fake_uuid[] = {
	TEST_FAKE_UUID(0), TEST_FAKE_UUID(1), TEST_FAKE_UUID(2),
};

/* Every message of the backend at info or above, appended. */
static char test_log[8192];

static void grab_log(void *data, int level, const char *fmt, va_list ap)
{
	size_t n = strlen(test_log);

	if (level <= MDGPUD_LOG_INFO && n < sizeof(test_log) - 1) {
		va_list aq;

		va_copy(aq, ap);
		vsnprintf(test_log + n, sizeof(test_log) - n, fmt, aq);
		va_end(aq);
		n = strlen(test_log);
		if (n < sizeof(test_log) - 1)
			strcpy(test_log + n, "\n");
	}
	capture_log(data, level, fmt, ap);
}

/* The backend's derive() as the core's, the ordinal and bus id kept: the
 * tests' range, and an mps_dir that names the ordinal. */
static int test_derived = -1;
static char test_derived_bus[32];

static int test_derive(const void *arg, int ordinal, const char *bus_id,
		       uint32_t *base, char *mps_dir, size_t len)
{
	(void)arg;
	test_derived = ordinal;
	snprintf(test_derived_bus, sizeof(test_derived_bus), "%s", bus_id);
	*base = TEST_WORKER_UID_BASE;
	snprintf(mps_dir, len, "/nonexistent/mps%d", ordinal);
	return 0;
}

/*
 * cuda_device names the GPU by ordinal, PCI bus id or GPU UUID: the probe
 * finds it, the GPU's info says which it is (ordinal, bus id, UUID), and
 * a context's worker, given the ordinal, runs there.  One that names no
 * GPU fails open() with the selector and every GPU CUDA sees.
 */
static void test_select_gpu(void **state)
{
	static const struct {
		const char *device;
		int ordinal;
	} ok[] = {
		{ "2", 2 }, { "0", 0 }, { "0000:41:00.0", 1 },
		{ "0000:c1:00.0", 2 }, { TEST_FAKE_UUID(1), 1 },
		{ TEST_FAKE_UUID(0), 0 },
	};
	static const char *const none[] = {
		"3", "0000:99:00.0", "0000:41:00.1", TEST_FAKE_UUID(3),
	};
	struct mdgpud_backend_cfg cfg;
	struct mdgpud_backend *b2;
	struct mdgpud_gpu_info i2;
	struct mdgpud_bctx *ctx;
	uint64_t d, res;

	(void)state;
	REQUIRE_GPU();
	assert_int_equal(setenv("MDGPUD_FAKE_CUDA_DEVICES", TEST_FAKE_GPUS, 1),
			 0);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int o = ok[i].ordinal;

		test_cfg(&cfg);
		cfg.device = ok[i].device;
		assert_int_equal(ops->open(&cfg, &b2, &i2), 0);
		assert_int_equal(i2.ordinal, o);
		assert_string_equal(i2.bus_id, test_fake_bus[o]);
		assert_string_equal(i2.uuid, test_fake_uuid[o]);
		assert_int_equal(ops->ctx_create(b2, 95, &ctx), 0);
		assert_int_equal(ops->mem_alloc(ctx, 4096, &d, &res), 0);
		ops->ctx_destroy(ctx);
		ops->close(b2);
	}
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		char want[64];

		test_cfg(&cfg);
		cfg.device = none[i];
		skip_reason[0] = 0;
		assert_int_equal(ops->open(&cfg, &b2, &i2), -ENODEV);
		snprintf(want, sizeof(want), "no CUDA device %s:", none[i]);
		assert_non_null(strstr(skip_reason, want));
		assert_non_null(strstr(skip_reason, "CUDA sees 3"));
		for (int k = 0; k < 3; k++) {
			assert_non_null(strstr(skip_reason, test_fake_bus[k]));
			assert_non_null(strstr(skip_reason,
					       test_fake_uuid[k]));
		}
	}
	skip_reason[0] = 0;
	unsetenv("MDGPUD_FAKE_CUDA_DEVICES");
}

/*
 * What derives from the GPU (worker_uid_base = auto: its PCI bus id) is
 * known only once the probe found it, whatever names it (UUID, ordinal),
 * so the probe runs as probe_uid and the pool of the derived range opens
 * after it; derive() gets the ordinal and bus id the probe found.
 */
static void test_select_derive(void **state)
{
	struct mdgpud_backend_cfg cfg;
	struct mdgpud_backend *b2;
	struct mdgpud_gpu_info i2;
	struct mdgpud_bctx *ctx;
	unsigned long v[4];
	char probe[64];
	bool sandboxed = test_sandbox != MDGPUD_SANDBOX_OFF;

	(void)state;
	REQUIRE_GPU();
	assert_int_equal(setenv("MDGPUD_FAKE_CUDA_DEVICES", TEST_FAKE_GPUS, 1),
			 0);
	test_cfg(&cfg);
	cfg.device = TEST_FAKE_UUID(1);
	cfg.worker_uid_base = 0;
	cfg.derive = test_derive;
	cfg.probe_uid = TEST_WORKER_UID_BASE - 1;
	snprintf(probe, sizeof(probe), "uid and gid %u for the probe",
		 TEST_WORKER_UID_BASE - 1);
	test_log[0] = 0;
	test_derived = -1;
	mdgpud_log_set(MDGPUD_LOG_INFO, grab_log, NULL);
	assert_int_equal(ops->open(&cfg, &b2, &i2), 0);
	assert_int_equal(test_derived, 1);
	assert_string_equal(test_derived_bus, test_fake_bus[1]);
	assert_int_equal(i2.ordinal, 1);
	if (sandboxed) {
		assert_non_null(strstr(test_log, probe));
		snprintf(probe, sizeof(probe), "worker uids and gids %u..",
			 TEST_WORKER_UID_BASE);
		assert_non_null(strstr(test_log, probe));
	}
	assert_int_equal(ops->ctx_create(b2, 96, &ctx), 0);
	if (sandboxed) {
		pid_t pid = mdgpud_backend_cuda_worker_pid(ctx);

		assert_int_equal(proc_status(pid, "Uid", v), 4);
		assert_in_range(v[0], TEST_WORKER_UID_BASE,
				TEST_WORKER_UID_BASE + TEST_WORKER_UID_COUNT -
				1);
	}
	ops->ctx_destroy(ctx);
	ops->close(b2);

	/* An ordinal: the same, the bus id the probe found at it. */
	cfg.device = "2";
	test_log[0] = 0;
	assert_int_equal(ops->open(&cfg, &b2, &i2), 0);
	assert_int_equal(test_derived, 2);
	assert_string_equal(test_derived_bus, test_fake_bus[2]);
	if (sandboxed)
		assert_non_null(strstr(test_log, "for the probe"));
	ops->close(b2);
	mdgpud_log_set(MDGPUD_LOG_INFO, capture_log, NULL);
	unsetenv("MDGPUD_FAKE_CUDA_DEVICES");
}

/*
 * A worker is given the ordinal the probe found: should the driver number
 * the GPUs otherwise later (a GPU gone to another driver), that ordinal
 * is another GPU, and the context is refused rather than run there.
 */
static void test_select_renumbered(void **state)
{
	struct mdgpud_backend_cfg cfg;
	struct mdgpud_backend *b2;
	struct mdgpud_gpu_info i2;
	struct mdgpud_bctx *ctx;

	(void)state;
	REQUIRE_GPU();
	assert_int_equal(setenv("MDGPUD_FAKE_CUDA_DEVICES", TEST_FAKE_GPUS, 1),
			 0);
	test_cfg(&cfg);
	cfg.device = "0000:41:00.0";
	assert_int_equal(ops->open(&cfg, &b2, &i2), 0);
	assert_int_equal(i2.ordinal, 1);
	/* 0000:01:00.0 leaves: ordinal 1 is 0000:c1:00.0 now. */
	assert_int_equal(setenv("MDGPUD_FAKE_CUDA_DEVICES",
				"0000:41:00.0,0000:c1:00.0", 1), 0);
	skip_reason[0] = 0;
	assert_int_equal(ops->ctx_create(b2, 97, &ctx), -ENODEV);
	assert_non_null(strstr(skip_reason, "ordinal 1 is GPU 0000:c1:00.0 "
			       "now, not 0000:41:00.0"));
	skip_reason[0] = 0;
	ops->close(b2);
	unsetenv("MDGPUD_FAKE_CUDA_DEVICES");
}
#endif

/* ---- ABI 1.2: what CTX_LIMIT's charge stands for, on the GPU ---------- */

/* Free GPU memory now, as a fresh probe sees it (fb_size: free - reserve). */
static uint64_t probe_free(void)
{
	struct mdgpud_backend_cfg cfg = { 0 };
	struct mdgpud_backend *b2;
	struct mdgpud_gpu_info i2;

	cfg.worker_path = worker_path;
	cfg.hang_timeout_ms = TEST_HANG_MS;
	cfg.fb_reserve = 1;
	assert_int_equal(ops->open(&cfg, &b2, &i2), 0);
	ops->close(b2);
	return i2.fb_size + 1;
}

/*
 * Sets STACK_SIZE to 64 KiB in a worker's context, runs a kernel (the
 * driver may size the local memory at launch) and prints how much the
 * GPU's free memory dropped against the daemon's charge for it, (64 KiB -
 * default) x SMs x threads per SM (core/info.c).  GPU only: the fake
 * reserves nothing.
 */
static void test_stack_limit_memory(void **state)
{
	const uint64_t stack = 64 << 10;
	struct mdgpud_bctx *ctx;
	uint64_t dflt, now, before, after, charge, d, res;
	uint64_t arg[5] = { 0 };

	(void)state;
#ifdef MDGPUD_TEST_CUDA_FAKE
	printf("SKIPPED: the fake libcuda reserves no memory for limits\n");
	skip();
#endif
	REQUIRE_GPU();
	ctx = ctx_new(40);
	assert_int_equal(ops->ctx_limit(ctx, 0, 0, 0, &dflt), 0);
	assert_int_equal(ops->mem_alloc(ctx, 4096, &d, &res), 0);
	arg[0] = d;
	arg[1] = 1024;
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL),
			 0);
	assert_int_equal(ops->sync(ctx, 0), 0);
	before = probe_free();
	assert_int_equal(ops->ctx_limit(ctx, 0, 1, stack, &now), 0);
	assert_true(now >= stack);
	assert_int_equal(ops->builtin(ctx, 0, MDGPU_BUILTIN_FILL_U32, arg, NULL),
			 0);
	assert_int_equal(ops->sync(ctx, 0), 0);
	after = probe_free();
	charge = (stack - dflt) * (uint64_t)info.dev.attr[16] *
		 (uint64_t)info.dev.attr[39];
	fprintf(stderr, "STACK_SIZE %" PRIu64 " -> %" PRIu64 " B: free memory "
		"dropped %" PRId64 " B (%.1f MiB), the daemon charges %" PRIu64
		" B (%.1f MiB)\n", dflt, now, (int64_t)(before - after),
		(double)(int64_t)(before - after) / (1 << 20), charge,
		(double)charge / (1 << 20));
	assert_true(charge > 0);
	ops->ctx_destroy(ctx);
}

/*
 * A kernel whose threads each use a LOCAL_ARRAY_BYTES local array, with
 * fill_u32's parameters so that the fake runs it too: a[n] = v, *p =
 * a[1].  The dynamic index keeps ptxas from dropping the array.
 */
#define LOCAL_ARRAY_BYTES	32768
static const char local_ptx[] =
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	".visible .entry fill_u32(.param .u64 p_ptr, .param .u32 p_v,\n"
	"                         .param .u32 p_n)\n"
	"{\n"
	"	.local .align 8 .b8 a[" STR(LOCAL_ARRAY_BYTES) "];\n"
	"	.reg .b32 %r<4>;\n"
	"	.reg .b64 %rd<6>;\n"
	"	ld.param.u64 %rd1, [p_ptr];\n"
	"	ld.param.u32 %r1, [p_v];\n"
	"	ld.param.u32 %r2, [p_n];\n"
	"	mov.u64 %rd2, a;\n"
	"	mul.wide.u32 %rd3, %r2, 4;\n"
	"	add.u64 %rd4, %rd2, %rd3;\n"
	"	st.local.u32 [%rd4], %r1;\n"
	"	ld.local.u32 %r3, [%rd2+4];\n"
	"	cvta.to.global.u64 %rd5, %rd1;\n"
	"	st.global.u32 [%rd5], %r3;\n"
	"	ret;\n"
	"}\n";

/*
 * A kernel with a 32 KiB local array: func_get answers its local size
 * (LOCAL_SIZE_BYTES; the fake's from the PTX) and its launch grows the
 * context's STACK_SIZE to it.  On the GPU, the free memory the launch
 * takes against what the daemon charges for it (core/info.c,
 * mdgpud_info_launch): (local size - default stack) x SMs x threads per
 * SM, which must cover the drop but for the driver's 2 MiB granularity.
 */
static void test_local_memory(void **state)
{
	const int64_t slack = 2 << 20;
	struct mdgpud_dim3 one = { 1, 1, 1 };
	struct mdgpud_bctx *ctx;
	uint64_t mod, fn, local, dflt, now, d, res, charge;
	uint8_t blob[16] = { 0 };
	int64_t before, drop;

	(void)state;
	REQUIRE_GPU();
	ctx = ctx_new(41);
	assert_int_equal(ops->ctx_limit(ctx, 0, 0, 0, &dflt), 0);
	assert_int_equal(ops->mem_alloc(ctx, 4096, &d, &res), 0);
	assert_int_equal(ops->module_load(ctx, MDGPU_MODULE_PTX, local_ptx,
					  sizeof(local_ptx) - 1, &mod), 0);
	assert_int_equal(ops->func_get(ctx, mod, "fill_u32", &fn, &local), 0);
	assert_true(local >= LOCAL_ARRAY_BYTES);
	assert_true(local > dflt);
	memcpy(blob, &d, sizeof(d));		/* p; v and n 0 */
	assert_int_equal(ops->sync(ctx, 0), 0);
	before = (int64_t)probe_free();
	assert_int_equal(test_launch(ops, ctx, 0, fn, one, one, 0, blob,
				     sizeof(blob)), 0);
	assert_int_equal(ops->sync(ctx, 0), 0);
	drop = before - (int64_t)probe_free();
	assert_int_equal(ops->ctx_limit(ctx, 0, 0, 0, &now), 0);
	assert_true(now >= local);
	ops->ctx_destroy(ctx);
#ifdef MDGPUD_TEST_CUDA_FAKE
	printf("SKIPPED: the fake libcuda reserves no local memory\n");
	skip();
#endif
	charge = (local - dflt) * (uint64_t)info.dev.attr[16] *
		 (uint64_t)info.dev.attr[39];
	fprintf(stderr, "kernel with LOCAL_SIZE_BYTES %" PRIu64 " (default "
		"stack %" PRIu64 " B, %" PRIu64 " B after): its first launch "
		"took %" PRId64 " B (%.1f MiB) of free GPU memory; the daemon "
		"charges (%" PRIu64 " - %" PRIu64 ") x %d SMs x %d threads/SM "
		"= %" PRIu64 " B (%.1f MiB); the charge must be >= the drop "
		"- 2 MiB\n", local, dflt, now, drop,
		(double)drop / (1 << 20), local, dflt, info.dev.attr[16],
		info.dev.attr[39], charge, (double)charge / (1 << 20));
	assert_true((int64_t)charge >= drop - slack);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_errors),
#ifdef MDGPUD_TEST_CUDA_FAKE
		cmocka_unit_test(test_select_gpu),
		cmocka_unit_test(test_select_derive),
		cmocka_unit_test(test_select_renumbered),
#endif
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_alloc_copy),
		cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_module_launch_events),
		cmocka_unit_test(test_free_scrub),
		cmocka_unit_test(test_worker_crash),
		cmocka_unit_test(test_isolation_forged_pointer),
		cmocka_unit_test(test_crash_leaves_no_data),
		cmocka_unit_test(test_concurrent_tenants),
		cmocka_unit_test(test_map_shared),
		cmocka_unit_test(test_cubin),
		cmocka_unit_test(test_hung_kernel_destroy),
		cmocka_unit_test(test_stack_limit_memory),
		cmocka_unit_test(test_local_memory),
		cmocka_unit_test(test_hung_kernel_bound),
#ifdef MDGPUD_TEST_CUDA_FAKE
		cmocka_unit_test(test_worker_call_hangs),
		cmocka_unit_test(test_worker_scribbles),
		cmocka_unit_test(test_module_load_pending),
#endif
		cmocka_unit_test(test_worker_fds),
		cmocka_unit_test(test_orphaned_worker_exits),
		cmocka_unit_test(test_orphaned_hung_worker_exits),
		cmocka_unit_test(test_slice_hints),
		cmocka_unit_test(test_sandbox_worker),
		cmocka_unit_test(test_sandbox_downgrade),
		cmocka_unit_test(test_sandbox_worker_uids),
		cmocka_unit_test(test_sandbox_uid_range),
#ifdef MDGPUD_TEST_CUDA_FAKE
		cmocka_unit_test(test_sandbox_sigio_owner),
		cmocka_unit_test(test_sandbox_netns),
		cmocka_unit_test(test_sandbox_private_tmp),
		cmocka_unit_test(test_sandbox_forbidden_syscall),
#endif
		cmocka_unit_test(test_streams_order_events),
		cmocka_unit_test(test_streams_async_copy_slice),
		cmocka_unit_test(test_streams_hang_bound),
		cmocka_unit_test(test_streams_memop),
		cmocka_unit_test(test_fault_code),
		cmocka_unit_test(test_module_load_dev),
		cmocka_unit_test(test_module_funcs),
#ifdef MDGPUD_TEST_CUDA_FAKE
		cmocka_unit_test(test_launch_ex),
		cmocka_unit_test(test_launch_big_params),
#endif
		cmocka_unit_test(test_poll_grants),
	};

	/* Workers are our children: never let a test's exit orphan them. */
	signal(SIGPIPE, SIG_IGN);
	setenv("MDGPUD_CUDA_SHUTDOWN_MS", "2000", 1);
	return cmocka_run_group_tests_name("cuda_backend", tests, group_setup,
					   group_teardown);
}
