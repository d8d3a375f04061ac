/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* libmdgpu internals: the handle and the client transport ops table. */
#ifndef LIBMDGPU_PRIV_H
#define LIBMDGPU_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "uapi/mdgpu.h"
#include "common/cpu.h"
#include "mdgpu/mdgpu.h"

/*
 * A client transport maps the vGPU's ring and aperture and provides the
 * doorbell and the completion wait.  "socket": mdgpud's Unix socket;
 * "vfio": an mdev through VFIO (BAR2/BAR4 mmap, BAR0 SQ_TAIL write,
 * eventfd IRQ); "guest": /dev/mdgpu-vgpuN of mdgpu-guest.ko in a VM.
 */
struct mdgpu_tops {
	const char *name;
	int (*open)(struct mdgpu *g, const struct mdgpu_open_opts *o);
	void (*close)(struct mdgpu *g);
	/* Publish g->tail to the device (doorbell). */
	void (*doorbell)(struct mdgpu *g, uint32_t tail);
	/* Current completed head. */
	uint32_t (*head)(struct mdgpu *g);
	/* Block until head - target >= 0 (mod 2^32), or fail (-ENODEV).
	 * With concurrent_wait, callable by several threads at once and
	 * while another thread submits (mdgpu_wait_run()). */
	int (*wait)(struct mdgpu *g, uint32_t target);
	bool concurrent_wait;
	/* Optional (vfio): device reset, callable from any thread; and
	 * re-enable after one, from the handle's thread. */
	int (*reset)(struct mdgpu *g);
	int (*rearm)(struct mdgpu *g);
	/* Optional, with reset: -ECANCELED if the device was reset since
	 * the handle last re-armed, else 0.  A reset zeroes the ring and the
	 * aperture, so a completion or staged data read after a wait is
	 * only the device's if no reset came before the read ended. */
	int (*reset_since)(struct mdgpu *g);
	/* Optional (socket, vfio): MDGPU_STATUS_* of the open vGPU now,
	 * for error messages; 0 when it cannot be read. */
	uint32_t (*status)(struct mdgpu *g);
	/* Optional (socket): map the aperture again at addr exactly and
	 * drop the old mapping, g->aperture following; -EEXIST where
	 * something lies at addr (nothing changes). */
	int (*place_aperture)(struct mdgpu *g, uint64_t addr);
	/* Optional (socket): send fd for the HOST_REGISTER of `token`. */
	int (*send_fd)(struct mdgpu *g, int fd, uint32_t token);
	/* Optional (socket): store ctrl.host_done = value and wake the
	 * daemon; callable from any thread. */
	void (*host_fn_done)(struct mdgpu *g, uint32_t value);
};

/*
 * Launch parameters of up to MDGPU_PARAM_SLOT_BYTES go to one of
 * MDGPU_PARAM_SLOTS slots of their own (a launch rarely waits for one);
 * larger ones (ABI 1.6, up to MDGPU_PARAMS_MAX) to a copy staging half.
 */
#define MDGPU_PARAM_SLOTS	16
#define MDGPU_PARAM_SLOT_BYTES	MDGPU_PARAMS_MAX_1_5
/* A wait's spin before it sleeps (opts.spin_us, MDGPU_SPIN_US). */
#define MDGPU_SPIN_US_DEFAULT	1000u
#define MDGPU_SPIN_US_MAX	1000000u

/* Per ring slot, what its completion means to the client. */
#define MDGPU_SLOT_ASYNC	(1U << 0)	/* nobody waits: keep its error */
#define MDGPU_SLOT_DRAINS	(1U << 1)	/* done means the queue is idle */

struct mdgpu {
	const struct mdgpu_tops *tops;
	void *tpriv;
	struct mdgpu_info info;
	uint32_t spin_us;

	/* Ring, set by the transport's open(). */
	uint8_t *sq;
	uint8_t *cq;
	uint32_t entries;
	uint8_t *aperture;
	uint64_t aperture_size;
	uint64_t host_off;		/* zero-copy area [host_off, host_end) */
	/* Zero-copy area: addresses [host_off, host_end) in host_space are
	 * host_mem in this process.  Socket: the aperture's tail
	 * (APERTURE, host_end = aperture_size); vfio: IOVA-mapped memory. */
	uint32_t host_space;
	uint8_t *host_mem;
	uint64_t host_end;

	/* Zero-copy allocations, sorted by offset. */
	struct mdgpu_host_blk { uint64_t off, size; } *blk;
	size_t nblk, blk_cap;

	/* Next command number; written under the caller's lock, read
	 * atomically by mdgpu_wait_run() outside it. */
	uint32_t tail;
	uint32_t reaped;		/* completions examined up to here */
	uint8_t *slot_flags;		/* per slot: MDGPU_SLOT_* */
	/* Commands before `drained` have all finished executing: command
	 * drained - 1 drains the queue (mdgpu_cmd_drains()) and completed
	 * without error.  drained == tail: the vGPU is idle. */
	uint32_t drained;
	int async_err;			/* first error of an async command */
	uint32_t async_op;
	uint64_t async_code;		/* its result2 */
	uint64_t last_code;		/* result2 of the last failed command */
	/* A command named a stream other than 0, or was an F_ASYNC copy,
	 * since the last SYNC of stream 0: a host copy on stream 0 no
	 * longer proves the vGPU idle. */
	bool streams_busy;

	/* Aperture layout: [0, stage_size * 2) copy staging (two halves),
	 * then MDGPU_PARAM_SLOTS * MDGPU_PARAM_SLOT_BYTES launch
	 * parameters.  A staging half is busy until command stage_seq
	 * completed: a copy's (its status is the copy's result) or, with
	 * stage_launch, a launch's large parameters (its error is an
	 * asynchronous one, kept for the next synchronisation). */
	uint64_t stage_size;
	uint32_t stage_seq[2];
	bool stage_busy[2];
	bool stage_launch[2];
	uint32_t stage_next_launch;	/* the half the next one takes */
	uint64_t params_off;
	uint32_t param_seq[MDGPU_PARAM_SLOTS];
	bool param_busy[MDGPU_PARAM_SLOTS];
	uint32_t param_next;

	/* Pageable copies (copy.c): threads sharing a staging chunk (1 =
	 * the caller alone), directions with non-temporal stores
	 * (MDGPU_NT_*), the helper pool (started by the first chunk of
	 * MDGPU_PCOPY_MIN bytes; NULL if it could not start). */
	uint32_t copy_threads;
	uint32_t copy_nt;
	bool pool_tried;
	struct mdgpu_pool *pool;

	char err[256];
};

extern const struct mdgpu_tops mdgpu_tops_socket;
extern const struct mdgpu_tops mdgpu_tops_vfio;
/* guest.c: /dev/mdgpu-vgpuN of mdgpu-guest.ko, inside a VM. */
extern const struct mdgpu_tops mdgpu_tops_guest;

int mdgpu_set_error(struct mdgpu *g, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * client.c's command primitives, for the other command files.
 * cmd_init: a zeroed command; submit: queue it (async: nobody waits for
 * its completion, its error is kept for the next synchronisation) and
 * ring the doorbell; call: submit and wait, 0 or the command's status
 * (the message set); async: submit with async set.
 */
struct mdgpu_cmd mdgpu_cmd_init(uint16_t op);
int mdgpu_submit(struct mdgpu *g, const struct mdgpu_cmd *c, bool async,
		 uint32_t *seq);
int mdgpu_call(struct mdgpu *g, const struct mdgpu_cmd *c, uint64_t *result,
	       uint64_t *result2);
/* A wait begun with mdgpu_wait_begin_*() (its result `begun`), run and
 * ended by the same thread: the synchronous calls. */
int mdgpu_wait_here(struct mdgpu *g, struct mdgpu_wait *w, int begun);
int mdgpu_async(struct mdgpu *g, const struct mdgpu_cmd *c);
/* Put `len` bytes at aperture offset 0 (staging half 0, idle first) for
 * a synchronous command that reads them there; -E2BIG if too large. */
int mdgpu_stage_small(struct mdgpu *g, const void *p, uint64_t len);
/* The same without writing: the first `len` bytes of the aperture are
 * the caller's for one synchronous command (an answer written there). */
int mdgpu_stage_claim(struct mdgpu *g, uint64_t len);

/*
 * Interrupt-driven transports (vfio, guest): set MDGPU_CMD_F_IRQ on every
 * descriptor from *flagged up to tail, so that a waiter that stopped
 * spinning sleeps on the interrupt; *flagged advances to tail.  Call before
 * the doorbell (the caller orders the stores before ringing it).
 */
void mdgpu_ring_flag_irq(struct mdgpu *g, uint32_t *flagged, uint32_t tail);

static inline uint64_t mdgpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * copy.c: the staging copies of mdgpu_copy_htod/dtoh.  init: thread count
 * (opts, $MDGPU_COPY_THREADS, else half the CPUs, 1..4) and
 * $MDGPU_COPY_NT; fini: joins the helpers.  stage_nt: whether a transfer
 * of `total` bytes in direction `dir` uses non-temporal stores;
 * stage_copy: one chunk, shared with the helpers when large enough.
 */
#define MDGPU_NT_OUT	1U	/* aperture -> user memory (dtoh) */
#define MDGPU_NT_IN	2U	/* user memory -> aperture (htod) */
#define MDGPU_NT_MIN	(4ULL << 20)	/* smaller transfers: plain stores */

void mdgpu_copy_init(struct mdgpu *g, const struct mdgpu_open_opts *o);
/* A positive decimal number from the environment, else 0 (copy.c). */
unsigned long mdgpu_env_ulong(const char *name);
void mdgpu_copy_fini(struct mdgpu *g);
bool mdgpu_stage_nt(const struct mdgpu *g, uint32_t dir, uint64_t total);
void mdgpu_stage_copy(struct mdgpu *g, void *dst, const void *src,
		      uint64_t n, bool nt);

#endif /* LIBMDGPU_PRIV_H */
