// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A fake libcuda.so.1 for CI, which has no GPU: the driver-API subset of
 * backends/cuda/worker/cuda_api.h implemented on host memory, so that test_cuda_fake runs
 * the whole cuda backend -- supervisor, worker processes, shared-memory
 * ring, fd passing, staging, crash detection, shutdown -- without a GPU.
 * It proves nothing about the GPU (no isolation, no real kernels); the GPU
 * machine runs test_cuda_backend for that.
 *
 * Exported names are the driver's own (cuInit, cuMemAlloc_v2, ...), the
 * one exception to the mdgpud_ prefix: this file IS a libcuda.
 *
 * "Device memory" is host memory of the worker, mapped for it alone (never
 * the heap: see cuMemAlloc_v2); device addresses are host pointers.  Work is asynchronous as on a GPU: every stream is a queue
 * run in order by a thread of its own (see "Streams" below), so a stream
 * can be busy while another runs, events and queries see work pending,
 * and a kernel that never ends hangs only its stream, as does a stream
 * memory wait whose condition never holds (see "Stream memory
 * operations" below).  Modules, their
 * kernels and globals, the named fake kernels that run as C on their
 * stream's thread, function attributes, occupancy, context limits and
 * the device attribute table live in modules.c (its header comment lists
 * the kernels).  cuInit fails with NO_DEVICE when MDGPUD_FAKE_CUDA_NODEV
 * is set.
 *
 * A slow or hung context start: MDGPUD_FAKE_CUDA_START_MS=ID:MS[,ID:MS...]
 * makes the worker serving vGPU ID ("mdgpud-worker serve ORDINAL ID ...")
 * sleep MS ms in cuDevicePrimaryCtxRetain, before it can report READY;
 * the probe worker never sleeps.  Read from the worker's environment,
 * which the daemon fixes when its backend opens.
 *
 * A slow pin: MDGPUD_FAKE_CUDA_REGISTER_MS_PER_MIB=N:MIN makes
 * cuMemHostRegister of MIN MiB or more sleep N ms per MiB, rounded up,
 * as the driver's pinning takes time per page; smaller ones (the
 * aperture and the staging area a context starts with) stay quick.
 *
 * A worker gone wrong, for the supervisor's bounds (read by the worker at
 * each cuMemAlloc of 4 KiB or more, which its own start-up never makes, so
 * a test sets it around the creation of the one context it concerns):
 *   MDGPUD_FAKE_CUDA_ALLOC=hang      cuMemAlloc never returns (a driver
 *                                    call that does not come back)
 *   MDGPUD_FAKE_CUDA_ALLOC=scribble  the worker's message in the shared
 *                                    memory is overwritten without a
 *                                    terminator, and the worker exits
 *                                    without answering (a hostile worker)
 *   MDGPUD_FAKE_CUDA_SYSCALL=ptrace  the worker tries PTRACE_ATTACH to its
 *                                    supervisor (driver code gone rogue)
 *   MDGPUD_FAKE_CUDA_SYSCALL=mount   the worker tries to mount a tmpfs
 *   MDGPUD_FAKE_CUDA_SYSCALL=execve  the worker tries to run /bin/true
 *   MDGPUD_FAKE_CUDA_SYSCALL=sigkill:PID  the worker tries to SIGKILL
 *                                    process PID through a pipe's SIGIO
 *                                    (fcntl F_SETOWN and F_SETSIG, which
 *                                    the allowlist lets through; the
 *                                    kernel delivers it only to a process
 *                                    of the worker's own uid)
 *   (under the worker sandbox's seccomp filter ptrace and mount kill the
 *   worker, and execve fails EPERM, after which the allocation succeeds;
 *   the result of a call that returns is printed on stderr)
 *   MDGPUD_FAKE_CUDA_TRY=OP:ARG      the worker tries OP, and its result
 *                                    becomes the allocation's: success,
 *                                    EPERM -> CUDA_ERROR_NOT_PERMITTED
 *                                    (-EPERM at the supervisor), ENOENT
 *                                    or ECONNREFUSED -> NOT_FOUND
 *                                    (-ENOENT), anything else -> UNKNOWN
 *                                    (-EIO).  OP, on a pipe of its own:
 *                                    setown (fcntl F_SETOWN ARG),
 *                                    setown_ex (F_SETOWN_EX ARG), setsig
 *                                    (F_SETSIG SIGKILL), fiosetown (ioctl
 *                                    FIOSETOWN ARG), fd_ops (fcntl and
 *                                    ioctl commands that stay allowed:
 *                                    F_DUPFD_CLOEXEC, F_GETFL, F_GETOWN,
 *                                    F_GETSIG, F_GETPIPE_SZ, FIONREAD),
 *                                    sigkill (SIGKILL to
 *                                    ARG through SIGIO, as above); bind
 *                                    (listen on the abstract unix socket
 *                                    @ARG, kept open), connect (connect
 *                                    to @ARG); tmp_write (create
 *                                    /tmp/ARG), tmp_read (open /tmp/ARG)
 */
#include "cuda_rpc.h"
#include "fake.h"
#include "common/memop.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

_Atomic mdgpud_cu_result fake_sticky;

struct CUctx_st { int dummy; };

static struct CUctx_st fake_ctx;

uint64_t fake_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Streams (ABI 1.2).                                                    */
/* ------------------------------------------------------------------ */

/*
 * Every stream is a FIFO of operations run by its own thread.  An
 * operation may depend on (stream, n): it starts only once that stream
 * has completed its n-th operation.  The legacy default stream
 * (CU_STREAM_LEGACY, or NULL) gets the driver's semantics from such
 * dependencies: an operation on it waits for the work queued so far on
 * every blocking stream, and an operation on a blocking stream waits for
 * the work queued so far on it; non-blocking streams take none.  Events
 * are (stream, n) marks; cuStreamWaitEvent queues an empty operation that
 * depends on the event's mark at the time of the call.  Streams are never
 * freed (a destroyed one only stops taking work): later dependencies may
 * still name them, and a worker makes few.
 */
#define FAKE_MAX_DEPS	64

struct fake_op;
typedef void (*fake_run_fn)(struct fake_op *op);

struct fake_dep {
	struct CUstream_st *st;
	uint64_t n;
};

struct fake_op {
	fake_run_fn run;
	uint64_t n;			/* its number on its stream */
	struct fake_dep dep[FAKE_MAX_DEPS];
	unsigned int nr_deps;
	/* Arguments, by kind. */
	mdgpud_cu_function fn;
	unsigned int threads;
	struct fake_launch_info info;
	uint8_t *blob;			/* owned copy of the parameters */
	size_t len;
	void *dst;
	const void *src;
	uint64_t value;
	unsigned int width;
	struct CUevent_st *ev;
	uint64_t ev_gen;
	struct fake_op *next;
};

struct CUstream_st {
	unsigned int flags;
	int legacy;
	int priority;
	uint64_t queued, done;		/* operations queued / completed */
	struct fake_op *head, *tail;
	pthread_t thread;
	struct CUstream_st *next_all;
};

struct CUevent_st {
	unsigned int flags;
	struct CUstream_st *st;		/* of the last record, or NULL */
	uint64_t n;			/* its mark on st */
	uint64_t gen;			/* records so far */
	uint64_t ns;			/* when the last record ran */
	unsigned int pending;		/* record operations not yet run */
	int recorded, destroyed;
};

static pthread_mutex_t fake_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fake_cv = PTHREAD_COND_INITIALIZER;
static struct CUstream_st fake_legacy = { .legacy = 1 };
static struct CUstream_st *fake_streams;	/* every stream but legacy */
static pthread_once_t fake_legacy_once = PTHREAD_ONCE_INIT;

static int fake_dep_done(const struct fake_op *op)
{
	for (unsigned int i = 0; i < op->nr_deps; i++)
		if (op->dep[i].st->done < op->dep[i].n)
			return 0;
	return 1;
}

static void *fake_stream_thread(void *arg)
{
	struct CUstream_st *st = arg;

	pthread_mutex_lock(&fake_mu);
	for (;;) {
		struct fake_op *op;

		while (!st->head || !fake_dep_done(st->head))
			pthread_cond_wait(&fake_cv, &fake_mu);
		op = st->head;
		pthread_mutex_unlock(&fake_mu);
		if (op->run)
			op->run(op);
		pthread_mutex_lock(&fake_mu);
		st->head = op->next;
		if (!st->head)
			st->tail = NULL;
		st->done = op->n;
		pthread_cond_broadcast(&fake_cv);
		if (op->fn)
			fake_kernel_release(op->fn);
		free(op->blob);
		free(op);
	}
	return NULL;
}

static void fake_legacy_start(void)
{
	pthread_create(&fake_legacy.thread, NULL, fake_stream_thread,
		       &fake_legacy);
}

static struct CUstream_st *fake_stream_of(mdgpud_cu_stream s)
{
	pthread_once(&fake_legacy_once, fake_legacy_start);
	if (!s || s == MDGPUD_CU_STREAM_LEGACY)
		return &fake_legacy;
	return s;
}

static int fake_blocking(const struct CUstream_st *st)
{
	return !st->legacy && !(st->flags & MDGPUD_CU_STREAM_NON_BLOCKING);
}

static void fake_add_dep(struct fake_op *op, struct CUstream_st *st,
			 uint64_t n)
{
	if (n > st->done && op->nr_deps < FAKE_MAX_DEPS)
		op->dep[op->nr_deps++] = (struct fake_dep){ st, n };
}

/* Queues op on stream s (fake_mu held): its number, its implicit deps. */
static void fake_enqueue_locked(mdgpud_cu_stream s, struct fake_op *op)
{
	struct CUstream_st *st = fake_stream_of(s);

	if (st->legacy) {
		for (struct CUstream_st *b = fake_streams; b; b = b->next_all)
			if (fake_blocking(b))
				fake_add_dep(op, b, b->queued);
	} else if (fake_blocking(st)) {
		fake_add_dep(op, &fake_legacy, fake_legacy.queued);
	}
	op->n = ++st->queued;
	op->next = NULL;
	if (st->tail)
		st->tail->next = op;
	else
		st->head = op;
	st->tail = op;
	pthread_cond_broadcast(&fake_cv);
}

static void fake_enqueue(mdgpud_cu_stream s, struct fake_op *op)
{
	pthread_mutex_lock(&fake_mu);
	fake_enqueue_locked(s, op);
	pthread_mutex_unlock(&fake_mu);
}

static struct fake_op *fake_op_new(fake_run_fn run)
{
	struct fake_op *op = calloc(1, sizeof(*op));

	if (op)
		op->run = run;
	return op;
}

/* Waits until st completed its n-th operation. */
static void fake_wait(struct CUstream_st *st, uint64_t n)
{
	pthread_mutex_lock(&fake_mu);
	while (st->done < n)
		pthread_cond_wait(&fake_cv, &fake_mu);
	pthread_mutex_unlock(&fake_mu);
}

static void fake_run_kernel(struct fake_op *op)
{
	mdgpud_cu_result r;

	r = fake_kernel_run(op->fn, op->blob, op->threads, &op->info);
	if (r && !fake_sticky)
		fake_sticky = r;
}

/*
 * Zeroes [d, d + n): the whole pages inside a large span are dropped
 * (MADV_DONTNEED: a private anonymous mapping reads zeros afterwards, and
 * pages never touched cost nothing), the edges written.  The worker's
 * scrub of a freed 1 GiB allocation then takes milliseconds, not the
 * seconds a write of every byte takes in a TCG guest (tests/e2e).
 */
static void fake_zero(uint8_t *d, size_t n)
{
	const uintptr_t page = 4096;
	uintptr_t lo = ((uintptr_t)d + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)d + n) & ~(page - 1);

	if (n >= (2u << 20) && hi > lo &&
	    !madvise((void *)lo, hi - lo, MADV_DONTNEED)) {
		memset(d, 0, lo - (uintptr_t)d);
		memset((void *)hi, 0, (uintptr_t)d + n - hi);
		return;
	}
	memset(d, 0, n);
}

static void fake_run_memset(struct fake_op *op)
{
	uint8_t *d = op->dst;
	uint64_t mask = op->width >= 8 ? ~0ull : (1ull << (8 * op->width)) - 1;

	if (!(op->value & mask)) {
		fake_zero(d, op->len * op->width);
		return;
	}
	if (op->width == 1) {
		memset(d, (int)(op->value & 0xff), op->len);
		return;
	}
	for (size_t i = 0; i < op->len; i++)
		memcpy(d + i * op->width, &op->value, op->width);
}

static void fake_run_copy(struct fake_op *op)
{
	memmove(op->dst, op->src, op->len);
}

static void fake_run_record(struct fake_op *op)
{
	struct CUevent_st *e = op->ev;
	uint64_t now = fake_now_ns();

	pthread_mutex_lock(&fake_mu);
	if (e->gen == op->ev_gen)
		e->ns = now;
	if (!--e->pending && e->destroyed)
		free(e);
	pthread_mutex_unlock(&fake_mu);
}

/* Queues an asynchronous memset or copy (the sticky error first). */
static mdgpud_cu_result fake_queue_mem(fake_run_fn run, void *dst,
				       const void *src, size_t n,
				       uint64_t value, unsigned int width,
				       mdgpud_cu_stream s)
{
	struct fake_op *op;

	if (fake_sticky)
		return fake_sticky;
	op = fake_op_new(run);
	if (!op)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	op->dst = dst;
	op->src = src;
	op->len = n;
	op->value = value;
	op->width = width;
	fake_enqueue(s, op);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuInit(unsigned int flags)
{
	(void)flags;
	return getenv("MDGPUD_FAKE_CUDA_NODEV") ? MDGPUD_CUDA_ERROR_NO_DEVICE
						: 0;
}

FAKE_EXPORT mdgpud_cu_result cuDriverGetVersion(int *v)
{
	*v = 13000;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuGetErrorName(mdgpud_cu_result e,
					    const char **s)
{
	switch (e) {
	case MDGPUD_CUDA_ERROR_ILLEGAL_ADDRESS:
		*s = "CUDA_ERROR_ILLEGAL_ADDRESS";
		break;
	case MDGPUD_CUDA_ERROR_INVALID_PTX:
		*s = "CUDA_ERROR_INVALID_PTX";
		break;
	case MDGPUD_CUDA_ERROR_NO_DEVICE:
		*s = "CUDA_ERROR_NO_DEVICE";
		break;
	default:
		*s = "CUDA_ERROR_FAKE";
	}
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuGetErrorString(mdgpud_cu_result e,
					      const char **s)
{
	return cuGetErrorName(e, s);
}

/* The vGPU this worker serves (argv[3] of "serve"), or 0 (the probe). */
static unsigned long fake_worker_vgpu(void)
{
	char cmd[512];
	const char *a = cmd;
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(cmd, 1, sizeof(cmd) - 1, f);
	fclose(f);
	cmd[n] = 0;
	for (int i = 0; i < 3 && a < cmd + n; i++) {
		if (i == 1 && strcmp(a, "serve"))
			return 0;
		a += strlen(a) + 1;
	}
	return a < cmd + n ? strtoul(a, NULL, 10) : 0;
}

/* MDGPUD_FAKE_CUDA_START_MS's sleep for this worker (file comment). */
static void fake_start_delay(void)
{
	const char *s = getenv("MDGPUD_FAKE_CUDA_START_MS");
	unsigned long id, want, ms;
	struct timespec ts;
	char *end;

	if (!s || !*s)
		return;
	id = fake_worker_vgpu();
	while (id && *s) {
		want = strtoul(s, &end, 10);
		if (*end != ':')
			return;
		ms = strtoul(end + 1, &end, 10);
		if (want == id) {
			ts.tv_sec = (time_t)(ms / 1000);
			ts.tv_nsec = (long)(ms % 1000) * 1000000L;
			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
			return;
		}
		s = *end == ',' ? end + 1 : end;
	}
}

FAKE_EXPORT mdgpud_cu_result cuDevicePrimaryCtxRetain(mdgpud_cu_context *c,
						      mdgpud_cu_device d)
{
	(void)d;
	fake_start_delay();
	*c = &fake_ctx;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuDevicePrimaryCtxRelease_v2(mdgpud_cu_device d)
{
	(void)d;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuCtxSetCurrent(mdgpud_cu_context c)
{
	(void)c;
	return 0;
}

/* Every stream's work queued so far. */
FAKE_EXPORT mdgpud_cu_result cuCtxSynchronize(void)
{
	struct CUstream_st *st;

	fake_wait(&fake_legacy, fake_legacy.queued);
	pthread_mutex_lock(&fake_mu);
	st = fake_streams;
	pthread_mutex_unlock(&fake_mu);
	for (; st; st = st->next_all)
		fake_wait(st, st->queued);
	return fake_sticky;
}

/*
 * A 4 GiB GPU with 1 GiB in use, or one of MDGPUD_FAKE_CUDA_MEM_MIB
 * (2048..1048576) MiB with 1 GiB in use: scripts that run many vGPUs on
 * the fake (tests/gpu/faults.sh), or need a given size (the e2e guest's
 * daemon re-attaches vGPUs made under the sim's 16 GiB only to a GPU of
 * that size).
 */
FAKE_EXPORT mdgpud_cu_result cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
	const char *s = getenv("MDGPUD_FAKE_CUDA_MEM_MIB");
	unsigned long mib = s ? strtoul(s, NULL, 10) : 0;

	if (mib < 2048 || mib > 1048576)
		mib = 4096;
	*free_b = (size_t)(mib - 1024) << 20;
	*total = (size_t)mib << 20;
	return 0;
}

/* The worker's mapping of the shared memfd, found by its name. */
static struct mdgpud_cuda_rpc_shm *fake_find_shm(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	void *addr = NULL;

	if (!f)
		return NULL;
	while (!addr && fgets(line, sizeof(line), f)) {
		unsigned long lo;

		if (strstr(line, "memfd:mdgpud-cuda-rpc") &&
		    sscanf(line, "%lx-", &lo) == 1)
			addr = (void *)lo;
	}
	fclose(f);
	return addr;
}

/*
 * SIGKILL to `pid` by way of SIGIO: the pipe's read end is owned by pid
 * (F_SETOWN), its I/O signal is SIGKILL (F_SETSIG), and a byte written
 * makes the kernel send it, if the owner's credentials (ours, taken at
 * F_SETOWN) match pid's uid.  0 once the byte is written.
 */
static long fake_sigio_kill(pid_t pid)
{
	int p[2];
	long r = -1;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	if (!fcntl(p[0], F_SETOWN, pid) && !fcntl(p[0], F_SETSIG, SIGKILL) &&
	    !fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK) &&
	    write(p[1], "k", 1) == 1)
		r = 0;
	close(p[0]);
	close(p[1]);
	return r;
}

/* An abstract unix socket address "@name" (no file, scoped by the
 * network namespace); its length for bind/connect. */
static socklen_t fake_abstract(struct sockaddr_un *a, const char *name)
{
	size_t n = strlen(name);

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (n > sizeof(a->sun_path) - 1)
		n = sizeof(a->sun_path) - 1;
	memcpy(a->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* One MDGPUD_FAKE_CUDA_TRY operation on its own pipe: 0 or -errno. */
static int fake_try_pipe(const char *op, long arg)
{
	struct f_owner_ex ex = { .type = F_OWNER_PID, .pid = (pid_t)arg };
	int p[2], r = -1, pid = (int)arg;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	errno = EINVAL;		/* an unknown op */
	if (!strcmp(op, "setown"))
		r = fcntl(p[0], F_SETOWN, pid);
	else if (!strcmp(op, "setown_ex"))
		r = fcntl(p[0], F_SETOWN_EX, &ex);
	else if (!strcmp(op, "setsig"))
		r = fcntl(p[0], F_SETSIG, SIGKILL);
	else if (!strcmp(op, "fiosetown"))
		r = ioctl(p[0], FIOSETOWN, &pid);
	else if (!strcmp(op, "fd_ops")) {
		/* Commands on either side of the refused ones. */
		int fd = fcntl(p[0], F_DUPFD_CLOEXEC, 10);

		r = fd < 0 || fcntl(p[0], F_GETFL) < 0 ||
		    fcntl(p[0], F_GETOWN) < 0 || fcntl(p[0], F_GETSIG) < 0 ||
		    fcntl(p[0], F_GETPIPE_SZ) < 0 ||
		    ioctl(p[0], FIONREAD, &pid) < 0 ? -1 : 0;
		if (fd >= 0)
			close(fd);
	}
	r = r < 0 ? -errno : 0;
	close(p[0]);
	close(p[1]);
	return r;
}

/* MDGPUD_FAKE_CUDA_TRY=OP:ARG (see the top of this file): 0 or -errno. */
static int fake_try(const char *spec)
{
	const char *arg = strchr(spec, ':');
	char op[32], path[128];
	struct sockaddr_un a;
	socklen_t alen;
	int fd, r;

	if (!arg || (size_t)(arg - spec) >= sizeof(op))
		return -EINVAL;
	snprintf(op, sizeof(op), "%.*s", (int)(arg - spec), spec);
	arg++;
	if (!strcmp(op, "sigkill"))
		return fake_sigio_kill((pid_t)atoi(arg)) ? -errno : 0;
	if (!strcmp(op, "tmp_write") || !strcmp(op, "tmp_read")) {
		snprintf(path, sizeof(path), "/tmp/%s", arg);
		fd = op[4] == 'w' ? open(path, O_WRONLY | O_CREAT | O_EXCL |
					 O_CLOEXEC, 0666) :
				    open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		close(fd);
		return 0;
	}
	if (strcmp(op, "bind") && strcmp(op, "connect"))
		return fake_try_pipe(op, strtol(arg, NULL, 10));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	alen = fake_abstract(&a, arg);
	if (!strcmp(op, "bind")) {
		/* Kept open: the name lives as long as the worker. */
		if (bind(fd, (struct sockaddr *)&a, alen) || listen(fd, 1)) {
			r = -errno;
			close(fd);
			return r;
		}
		return 0;
	}
	r = connect(fd, (struct sockaddr *)&a, alen) ? -errno : 0;
	close(fd);
	return r;
}

static mdgpud_cu_result fake_try_result(int r)
{
	switch (r) {
	case 0:
		return MDGPUD_CUDA_SUCCESS;
	case -EPERM:
		return MDGPUD_CUDA_ERROR_NOT_PERMITTED;
	case -ENOENT:
	case -ECONNREFUSED:
		return MDGPUD_CUDA_ERROR_NOT_FOUND;
	default:
		return MDGPUD_CUDA_ERROR_UNKNOWN;
	}
}

/* MDGPUD_FAKE_CUDA_ALLOC (see the top of this file). */
static mdgpud_cu_result fake_alloc_misbehave(size_t n)
{
	const char *try = getenv("MDGPUD_FAKE_CUDA_TRY");
	const char *how = getenv("MDGPUD_FAKE_CUDA_ALLOC");
	struct mdgpud_cuda_rpc_shm *shm;

	const char *sys = getenv("MDGPUD_FAKE_CUDA_SYSCALL");

	if (sys && n >= 4096) {
		long r = -1;

		if (!strcmp(sys, "ptrace"))
			r = syscall(SYS_ptrace, PTRACE_ATTACH, getppid(), 0, 0);
		else if (!strcmp(sys, "mount"))
			r = mount("none", "/tmp", "tmpfs", 0, NULL);
		else if (!strcmp(sys, "execve")) {
			char *const argv[] = { (char *)"true", NULL };

			r = execv("/bin/true", argv);
		} else if (!strncmp(sys, "sigkill:", 8))
			r = fake_sigio_kill((pid_t)atoi(sys + 8));
		fprintf(stderr, "fake libcuda: %s: %ld (%s)\n", sys, r,
			r ? strerror(errno) : "ok");
	}
	if (try && n >= 4096) {
		int r = fake_try(try);

		fprintf(stderr, "fake libcuda: try %s: %s\n", try,
			r ? strerror(-r) : "ok");
		return fake_try_result(r);
	}
	if (!how || n < 4096)
		return MDGPUD_CUDA_SUCCESS;
	if (!strcmp(how, "hang")) {
		for (;;)
			pause();
	}
	if (strcmp(how, "scribble"))
		return MDGPUD_CUDA_SUCCESS;
	shm = fake_find_shm();
	if (shm)
		memset(shm->msg, 'A', sizeof(shm->msg));
	_exit(3);
}

/*
 * Device memory: pages of its own (mmap), never the process's heap, so
 * that an allocation holds only what device memory held before, as on a
 * GPU: zero when new, and a freed block's old contents when it comes
 * back, as the driver gives freed memory back within a process (which is
 * why the worker must scrub).  Freed blocks are kept, up to
 * FAKE_DEV_KEPT bytes, and reused whole by the next allocation of their
 * rounded size; beyond that they are unmapped.
 */
#define FAKE_DEV_KEPT		(256u << 20)

struct fake_dev_block {
	uintptr_t addr;
	size_t len;
	bool free;
};

static pthread_mutex_t fake_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_dev_block *fake_dev;
static size_t fake_dev_n, fake_dev_cap, fake_dev_kept;

/* Under fake_dev_lock: a free block of len bytes, made used, or 0. */
static uintptr_t fake_dev_reuse(size_t len)
{
	for (size_t i = 0; i < fake_dev_n; i++)
		if (fake_dev[i].free && fake_dev[i].len == len) {
			fake_dev[i].free = false;
			fake_dev_kept -= len;
			return fake_dev[i].addr;
		}
	return 0;
}

/* Under fake_dev_lock: a new mapping of len bytes recorded, or 0. */
static uintptr_t fake_dev_map(size_t len)
{
	void *m;

	if (fake_dev_n == fake_dev_cap) {
		size_t cap = fake_dev_cap ? 2 * fake_dev_cap : 64;
		void *t = realloc(fake_dev, cap * sizeof(*fake_dev));

		if (!t)
			return 0;
		fake_dev = t;
		fake_dev_cap = cap;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	/* Huge pages: a large fill or copy on a loaded CI machine then
	 * costs far fewer page faults. */
	if (len >= (2u << 20))
		madvise(m, len, MADV_HUGEPAGE);
	fake_dev[fake_dev_n++] = (struct fake_dev_block){
		.addr = (uintptr_t)m, .len = len,
	};
	return (uintptr_t)m;
}

FAKE_EXPORT mdgpud_cu_result cuMemAlloc_v2(mdgpud_cu_deviceptr *p, size_t n)
{
	mdgpud_cu_result tried = fake_alloc_misbehave(n);
	size_t len;
	uintptr_t m;

	if (tried)
		return tried;
	if (fake_sticky)
		return fake_sticky;
	if (n > (1ull << 30))
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	len = (n + 4095) & ~(size_t)4095;
	pthread_mutex_lock(&fake_dev_lock);
	m = fake_dev_reuse(len);
	if (!m)
		m = fake_dev_map(len);
	pthread_mutex_unlock(&fake_dev_lock);
	if (!m)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	*p = m;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuMemFree_v2(mdgpud_cu_deviceptr p)
{
	mdgpud_cu_result r = MDGPUD_CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&fake_dev_lock);
	for (size_t i = 0; i < fake_dev_n; i++) {
		struct fake_dev_block *b = &fake_dev[i];

		if (b->addr != p || b->free)
			continue;
		if (fake_dev_kept + b->len <= FAKE_DEV_KEPT) {
			b->free = true;
			fake_dev_kept += b->len;
		} else {
			munmap((void *)b->addr, b->len);
			*b = fake_dev[--fake_dev_n];
		}
		r = fake_sticky;
		break;
	}
	pthread_mutex_unlock(&fake_dev_lock);
	return r;
}

FAKE_EXPORT mdgpud_cu_result cuMemsetD8Async(mdgpud_cu_deviceptr d,
					     unsigned char v, size_t n,
					     mdgpud_cu_stream s)
{
	return fake_queue_mem(fake_run_memset, (void *)(uintptr_t)d, NULL, n, v,
			      1, s);
}

FAKE_EXPORT mdgpud_cu_result cuMemsetD16Async(mdgpud_cu_deviceptr d,
					      unsigned short v, size_t n,
					      mdgpud_cu_stream s)
{
	if (d & 1)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	return fake_queue_mem(fake_run_memset, (void *)(uintptr_t)d, NULL, n, v,
			      2, s);
}

FAKE_EXPORT mdgpud_cu_result cuMemsetD32Async(mdgpud_cu_deviceptr d,
					      unsigned int v, size_t n,
					      mdgpud_cu_stream s)
{
	if (d & 3)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	return fake_queue_mem(fake_run_memset, (void *)(uintptr_t)d, NULL, n, v,
			      4, s);
}

/* Copies read and write host memory when they run, as DMA does. */
FAKE_EXPORT mdgpud_cu_result cuMemcpyHtoDAsync_v2(mdgpud_cu_deviceptr d,
						  const void *h, size_t n,
						  mdgpud_cu_stream s)
{
	return fake_queue_mem(fake_run_copy, (void *)(uintptr_t)d, h, n, 0, 0,
			      s);
}

FAKE_EXPORT mdgpud_cu_result cuMemcpyDtoHAsync_v2(void *h,
						  mdgpud_cu_deviceptr d,
						  size_t n, mdgpud_cu_stream s)
{
	return fake_queue_mem(fake_run_copy, h, (const void *)(uintptr_t)d, n,
			      0, 0, s);
}

FAKE_EXPORT mdgpud_cu_result cuMemcpyDtoDAsync_v2(mdgpud_cu_deviceptr d,
						  mdgpud_cu_deviceptr s,
						  size_t n,
						  mdgpud_cu_stream st)
{
	return fake_queue_mem(fake_run_copy, (void *)(uintptr_t)d,
			      (const void *)(uintptr_t)s, n, 0, 0, st);
}

FAKE_EXPORT mdgpud_cu_result cuMemHostRegister_v2(void *p, size_t n,
						  unsigned int flags)
{
	const char *s = getenv("MDGPUD_FAKE_CUDA_REGISTER_MS_PER_MIB");
	unsigned long long mib = (n + (1u << 20) - 1) >> 20;
	unsigned long ms = 0, min = 0;
	char *end;

	(void)p;
	(void)flags;
	if (s) {
		ms = strtoul(s, &end, 10);
		min = *end == ':' ? strtoul(end + 1, NULL, 10) : 0;
	}
	if (ms && mib >= min) {
		unsigned long long t = ms * mib;
		struct timespec ts = {
			.tv_sec = (time_t)(t / 1000),
			.tv_nsec = (long)(t % 1000) * 1000000L,
		};

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuMemHostUnregister(void *p)
{
	(void)p;
	return 0;
}

/* Host memory is "device memory" here: mapped at its own address. */
FAKE_EXPORT mdgpud_cu_result cuMemHostGetDevicePointer_v2(
	mdgpud_cu_deviceptr *d, void *p, unsigned int flags)
{
	if (flags)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	*d = (uintptr_t)p;
	return 0;
}

/* Checks a launch and queues the kernel with a copy of its parameters. */
static mdgpud_cu_result fake_launch(mdgpud_cu_function f, unsigned int gx,
				    unsigned int gy, unsigned int gz,
				    unsigned int bx, unsigned int by,
				    unsigned int bz, mdgpud_cu_stream s,
				    void **params, void **extra,
				    const struct fake_launch_info *info)
{
	struct fake_op *op;
	mdgpud_cu_result r;
	uint8_t *blob;

	if (fake_sticky)
		return fake_sticky;
	if ((uint64_t)bx * by * bz > 1024 || !gx || !gy || !gz || !bx || !by ||
	    !bz)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	op = fake_op_new(fake_run_kernel);
	if (!op)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	r = fake_kernel_prepare(f, params, extra, &blob);
	if (r) {
		free(op);
		return r;
	}
	op->blob = blob;
	op->fn = f;
	op->threads = gx * gy * gz * bx * by * bz;
	op->info = *info;
	fake_enqueue(s, op);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuLaunchKernel(mdgpud_cu_function f,
					    unsigned int gx, unsigned int gy,
					    unsigned int gz, unsigned int bx,
					    unsigned int by, unsigned int bz,
					    unsigned int shared,
					    mdgpud_cu_stream s, void **params,
					    void **extra)
{
	static const struct fake_launch_info plain;

	(void)shared;
	return fake_launch(f, gx, gy, gz, bx, by, bz, s, params, extra,
			   &plain);
}

FAKE_EXPORT mdgpud_cu_result cuEventCreate(mdgpud_cu_event *e,
					   unsigned int flags)
{
	*e = calloc(1, sizeof(**e));
	if (!*e)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	(*e)->flags = flags;
	return 0;
}

/* The event's mark moves to the end of the stream's queued work. */
FAKE_EXPORT mdgpud_cu_result cuEventRecord(mdgpud_cu_event e,
					   mdgpud_cu_stream s)
{
	struct fake_op *op;

	if (fake_sticky)
		return fake_sticky;
	op = fake_op_new(fake_run_record);
	if (!op)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&fake_mu);
	op->ev = e;
	op->ev_gen = ++e->gen;
	e->pending++;
	e->recorded = 1;
	e->st = fake_stream_of(s);
	fake_enqueue_locked(s, op);
	e->n = op->n;
	pthread_mutex_unlock(&fake_mu);
	return 0;
}

static int fake_event_done(mdgpud_cu_event e)
{
	int done;

	pthread_mutex_lock(&fake_mu);
	done = !e->st || e->st->done >= e->n;
	pthread_mutex_unlock(&fake_mu);
	return done;
}

FAKE_EXPORT mdgpud_cu_result cuEventSynchronize(mdgpud_cu_event e)
{
	if (e->st)
		fake_wait(e->st, e->n);
	return fake_sticky;
}

/*
 * The sticky error is read after the work is seen done: a kernel that
 * faults sets it before its stream marks it done, so a query that finds
 * the fault's work done also finds the fault.
 */
FAKE_EXPORT mdgpud_cu_result cuEventQuery(mdgpud_cu_event e)
{
	int done = fake_event_done(e);

	if (fake_sticky)
		return fake_sticky;
	return done ? 0 : MDGPUD_CUDA_ERROR_NOT_READY;
}

FAKE_EXPORT mdgpud_cu_result cuEventElapsedTime_v2(float *ms,
						   mdgpud_cu_event a,
						   mdgpud_cu_event b)
{
	if (!a->recorded || !b->recorded ||
	    ((a->flags | b->flags) & MDGPUD_CU_EVENT_DISABLE_TIMING))
		return MDGPUD_CUDA_ERROR_INVALID_HANDLE;
	if (!fake_event_done(a) || !fake_event_done(b))
		return MDGPUD_CUDA_ERROR_NOT_READY;
	pthread_mutex_lock(&fake_mu);
	*ms = (float)((double)(b->ns - a->ns) / 1e6);
	pthread_mutex_unlock(&fake_mu);
	return fake_sticky;
}

/* Freed once its pending records have run. */
FAKE_EXPORT mdgpud_cu_result cuEventDestroy_v2(mdgpud_cu_event e)
{
	pthread_mutex_lock(&fake_mu);
	if (e->pending)
		e->destroyed = 1;
	else
		free(e);
	pthread_mutex_unlock(&fake_mu);
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuStreamCreateWithPriority(mdgpud_cu_stream *s,
							unsigned int flags,
							int priority)
{
	struct CUstream_st *st;

	if (flags & ~(unsigned int)MDGPUD_CU_STREAM_NON_BLOCKING)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	fake_stream_of(NULL);	/* the legacy stream runs first */
	st = calloc(1, sizeof(*st));
	if (!st)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	st->flags = flags;
	st->priority = priority;
	if (pthread_create(&st->thread, NULL, fake_stream_thread, st)) {
		free(st);
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_lock(&fake_mu);
	st->next_all = fake_streams;
	fake_streams = st;
	pthread_mutex_unlock(&fake_mu);
	*s = st;
	return 0;
}

FAKE_EXPORT mdgpud_cu_result cuStreamCreate(mdgpud_cu_stream *s,
					    unsigned int flags)
{
	return cuStreamCreateWithPriority(s, flags, 0);
}

/* Its queued work still runs; the stream object stays (see above). */
FAKE_EXPORT mdgpud_cu_result cuStreamDestroy_v2(mdgpud_cu_stream s)
{
	return s && s != MDGPUD_CU_STREAM_LEGACY ? 0
						 : MDGPUD_CUDA_ERROR_INVALID_HANDLE;
}

FAKE_EXPORT mdgpud_cu_result cuStreamSynchronize(mdgpud_cu_stream s)
{
	struct CUstream_st *st = fake_stream_of(s);

	fake_wait(st, st->queued);
	return fake_sticky;
}

FAKE_EXPORT mdgpud_cu_result cuStreamQuery(mdgpud_cu_stream s)
{
	struct CUstream_st *st = fake_stream_of(s);
	int idle;

	pthread_mutex_lock(&fake_mu);
	idle = st->done >= st->queued;
	pthread_mutex_unlock(&fake_mu);
	if (fake_sticky)	/* after: see cuEventQuery */
		return fake_sticky;
	return idle ? 0 : MDGPUD_CUDA_ERROR_NOT_READY;
}

/* An empty operation on s that waits for e's mark as it is now. */
FAKE_EXPORT mdgpud_cu_result cuStreamWaitEvent(mdgpud_cu_stream s,
					       mdgpud_cu_event e,
					       unsigned int flags)
{
	struct fake_op *op;

	if (flags)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	op = fake_op_new(NULL);
	if (!op)
		return MDGPUD_CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&fake_mu);
	if (e->st)
		fake_add_dep(op, e->st, e->n);
	fake_enqueue_locked(s, op);
	pthread_mutex_unlock(&fake_mu);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Stream memory operations (the _v2 entry points of CUDA 11.7).         */
/* ------------------------------------------------------------------ */

/*
 * Each is an operation of its stream, run in order on the stream's
 * thread.  A write stores the word atomically (sequentially consistent:
 * the stream's earlier writes are visible first, the driver's default
 * barrier).  A wait polls the word every FAKE_WAIT_POLL_NS until its
 * condition (common/memop.h, CUDA's reading) holds, holding its stream,
 * and through the legacy stream's dependencies the work queued after it
 * there, as a GPU's wait does; other streams run on.  A wait that never
 * holds keeps its stream busy until the worker is killed (the daemon's
 * hang bound).  Flags: a write's NO_MEMORY_BARRIER (1) is taken and
 * changes nothing here; a wait's FLUSH (1 << 30) is refused as on a
 * device without remote-write flushes.
 */
#define FAKE_WAIT_POLL_NS	50000
#define FAKE_WRITE_NO_BARRIER	0x1u

static void fake_run_write_value(struct fake_op *op)
{
	if (op->width == 8)
		__atomic_store_n((uint64_t *)op->dst, op->value,
				 __ATOMIC_SEQ_CST);
	else
		__atomic_store_n((uint32_t *)op->dst, (uint32_t)op->value,
				 __ATOMIC_SEQ_CST);
}

static void fake_run_wait_value(struct fake_op *op)
{
	const struct timespec nap = { 0, FAKE_WAIT_POLL_NS };
	bool wide = op->width == 8;

	for (;;) {
		uint64_t w = wide ?
			__atomic_load_n((uint64_t *)op->dst, __ATOMIC_SEQ_CST) :
			__atomic_load_n((uint32_t *)op->dst, __ATOMIC_SEQ_CST);

		if (mdgpu_memop_met((uint32_t)op->len, wide, w, op->value))
			return;
		nanosleep(&nap, NULL);
	}
}

/* One operation of `width` bytes at d; cond is a wait's condition. */
static mdgpud_cu_result fake_memop(fake_run_fn run, mdgpud_cu_stream s,
				   mdgpud_cu_deviceptr d, uint64_t value,
				   unsigned int width, unsigned int cond)
{
	if (!d || d % width)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	/* len carries the wait's condition (fake_run_wait_value). */
	return fake_queue_mem(run, (void *)(uintptr_t)d, NULL, cond, value,
			      width, s);
}

FAKE_EXPORT mdgpud_cu_result cuStreamWriteValue32_v2(mdgpud_cu_stream s,
						     mdgpud_cu_deviceptr d,
						     uint32_t v,
						     unsigned int flags)
{
	if (flags & ~FAKE_WRITE_NO_BARRIER)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	return fake_memop(fake_run_write_value, s, d, v, 4, 0);
}

FAKE_EXPORT mdgpud_cu_result cuStreamWriteValue64_v2(mdgpud_cu_stream s,
						     mdgpud_cu_deviceptr d,
						     uint64_t v,
						     unsigned int flags)
{
	if (flags & ~FAKE_WRITE_NO_BARRIER)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	return fake_memop(fake_run_write_value, s, d, v, 8, 0);
}

FAKE_EXPORT mdgpud_cu_result cuStreamWaitValue32_v2(mdgpud_cu_stream s,
						    mdgpud_cu_deviceptr d,
						    uint32_t v,
						    unsigned int flags)
{
	if (flags > MDGPU_MEMOP_WAIT_NOR)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	return fake_memop(fake_run_wait_value, s, d, v, 4, flags);
}

FAKE_EXPORT mdgpud_cu_result cuStreamWaitValue64_v2(mdgpud_cu_stream s,
						    mdgpud_cu_deviceptr d,
						    uint64_t v,
						    unsigned int flags)
{
	if (flags > MDGPU_MEMOP_WAIT_NOR)
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	return fake_memop(fake_run_wait_value, s, d, v, 8, flags);
}

/* The H100's range. */
FAKE_EXPORT mdgpud_cu_result cuCtxGetStreamPriorityRange(int *least,
							 int *greatest)
{
	*least = 0;
	*greatest = -5;
	return 0;
}

/* Cooperative and cluster attributes, checked as the driver does. */
FAKE_EXPORT mdgpud_cu_result cuLaunchKernelEx(
	const struct CUlaunchConfig_st *config, mdgpud_cu_function f,
	void **params, void **extra)
{
	const struct mdgpud_cu_launch_config *c = (const void *)config;
	struct fake_launch_info info = { .ex = 1 };

	if (!c || (c->num_attrs && !c->attrs))
		return MDGPUD_CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < c->num_attrs; i++) {
		const struct mdgpud_cu_launch_attr *a = &c->attrs[i];

		switch (a->id) {
		case MDGPUD_CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
			info.cooperative = a->value.cooperative != 0;
			break;
		case MDGPUD_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
			info.cluster[0] = a->value.cluster_dim.x;
			info.cluster[1] = a->value.cluster_dim.y;
			info.cluster[2] = a->value.cluster_dim.z;
			if (!info.cluster[0] || !info.cluster[1] ||
			    !info.cluster[2] ||
			    c->grid_x % info.cluster[0] ||
			    c->grid_y % info.cluster[1] ||
			    c->grid_z % info.cluster[2])
				return MDGPUD_CUDA_ERROR_INVALID_VALUE;
			break;
		default:
			return MDGPUD_CUDA_ERROR_INVALID_VALUE;
		}
	}
	return fake_launch(f, c->grid_x, c->grid_y, c->grid_z, c->block_x,
			   c->block_y, c->block_z, c->stream, params, extra,
			   &info);
}
