// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpud-worker: executes one vGPU's work in its own process, holding its
 * own CUDA context and so its own GPU address space
 * (Documentation/cuda-backend.md, "Why one process per vGPU").  Started by
 * the cuda backend's supervisor (backends/cuda/spawn.c) with fork+exec:
 *
 *   mdgpud-worker probe <device> [--sandbox=...]
 *       fd 3: the shared memfd.  Finds the GPU <device> names (an
 *       ordinal, a PCI bus id or a GPU UUID in common/gpu_select.h's
 *       canonical form: device.c), fills shm->info (its ordinal
 *       included), state PROBED, exits.
 *   mdgpud-worker serve <device> <vgpu-id> <supervisor-pid>
 *                 [--sandbox=...]
 *       <device> as for probe; the supervisor gives the ordinal the
 *       probe found.
 *       fd 3: the shared memfd, fd 4: unix socket for fd passing.
 *       Serves requests from the ring (backends/cuda/cuda_rpc.h) until
 *       SHUTDOWN, until the supervisor disappears, or until a sticky GPU
 *       error makes the context unusable.
 *
 *   mdgpud-worker --help | --version
 *
 * --sandbox (backends/cuda/sandbox.h) is applied first (sandbox.c).
 * The worker is built without sanitizers: it is the only process that
 * loads libcuda.  worker.h lists its files.
 */
#include "worker.h"
#include "mdgpu_version.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Timed waits (drain polls, the hint's futex timeout) end on time. */
#define MDGPUD_WORKER_TIMER_SLACK_NS	1000UL

/* Exit statuses before the shared area can tell the supervisor why. */
#define MDGPUD_WORKER_EXIT_USAGE	64
#define MDGPUD_WORKER_EXIT_SHM		65
#define MDGPUD_WORKER_EXIT_ORPHAN	66

static void mdgpud_worker_main_help(FILE *f)
{
	fprintf(f, "usage: mdgpud-worker probe <device> | serve "
		"<device> <vgpu-id> <supervisor-pid>\n"
		"(started by mdgpud, fds 3 and 4 set up)\n"
		"       mdgpud-worker --help | --version\n");
}

static int mdgpud_worker_main_usage(void)
{
	mdgpud_worker_main_help(stderr);
	return MDGPUD_WORKER_EXIT_USAGE;
}

/* Maps the shared area of fd 3 and checks it is the protocol's. */
static int mdgpud_worker_main_map_shm(struct mdgpud_worker *w)
{
	void *p = mmap(NULL, sizeof(*w->shm), PROT_READ | PROT_WRITE,
		       MAP_SHARED, MDGPUD_CUDA_WORKER_SHM_FD, 0);

	int err = errno;

	if (p == MAP_FAILED) {
		fprintf(stderr, "mdgpud-worker: mmap fd 3: %s\n",
			strerror(err));
		return -err;
	}
	w->shm = p;
	close(MDGPUD_CUDA_WORKER_SHM_FD);
	if (w->shm->magic != MDGPUD_CUDA_RPC_MAGIC ||
	    w->shm->version != MDGPUD_CUDA_RPC_VERSION) {
		fprintf(stderr, "mdgpud-worker: bad shared area\n");
		return -EPROTO;
	}
	return 0;
}

/* Publishes the start-up state and wakes the supervisor waiting on it. */
static void mdgpud_worker_main_state(struct mdgpud_worker *w,
				     enum mdgpud_cuda_worker_state state)
{
	atomic_store(&w->shm->state, state);
	mdgpud_cuda_futex_wake(&w->shm->state);
}

int main(int argc, char **argv)
{
	struct mdgpud_worker w = { 0 };
	const char *device;
	int probe, ret;

	if (argc == 2 && !strcmp(argv[1], "--help")) {
		mdgpud_worker_main_help(stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("mdgpud-worker %s\n", MDGPU_VERSION);
		return 0;
	}
	if (argc < 3)
		return mdgpud_worker_main_usage();
	probe = !strcmp(argv[1], "probe");
	if (!probe && (strcmp(argv[1], "serve") || argc < 5))
		return mdgpud_worker_main_usage();
	prctl(PR_SET_TIMERSLACK, MDGPUD_WORKER_TIMER_SLACK_NS, 0, 0, 0);
	device = argv[2];
	signal(SIGPIPE, SIG_IGN);
	if (mdgpud_worker_main_map_shm(&w))
		return MDGPUD_WORKER_EXIT_SHM;
	/* Before libcuda is loaded: nothing of the driver runs unconfined. */
	if (mdgpud_worker_sandbox(&w, &argc, argv)) {
		mdgpud_worker_main_state(&w, MDGPUD_CUDA_WORKER_FAILED);
		return 1;
	}
	if (!probe) {
		w.vgpu_id = (uint32_t)strtoul(argv[3], NULL, 0);
		w.sup_pid = (pid_t)strtol(argv[4], NULL, 0);
		w.sock = MDGPUD_CUDA_WORKER_SOCK_FD;
		if (getppid() != w.sup_pid)
			return MDGPUD_WORKER_EXIT_ORPHAN;
	}

	ret = mdgpud_worker_context_open(&w, device);
	if (!ret && !probe)
		ret = mdgpud_worker_context_setup(&w);
	if (ret) {
		mdgpud_worker_main_state(&w, MDGPUD_CUDA_WORKER_FAILED);
		return 1;
	}
	mdgpud_worker_main_state(&w, probe ? MDGPUD_CUDA_WORKER_PROBED
					   : MDGPUD_CUDA_WORKER_READY);
	if (probe)
		return 0;
	return mdgpud_worker_serve(&w);
}
