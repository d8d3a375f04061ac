/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A vGPU's GPU time over a recent window (QUERY GPU_TIME): what NVML's
 * utilisation of the vGPU is computed from.
 *
 * The window is MDGPUD_USAGE_WINDOW_NS long, kept as MDGPUD_USAGE_BUCKETS
 * buckets of window/BUCKETS ns aligned on multiples of their width, plus
 * the bucket now filling, in a ring.  A slice's GPU time is charged when the
 * slice ends, as the interval [now - gpu_ns, now): the GPU was busy for the
 * vGPU up to the moment its slice ended.  The part of a charge older than
 * the ring is dropped.  The time in the window (now - window, now] is the
 * sum of the slots, the oldest counted only for the fraction of it still
 * inside the window (its time taken as spread evenly over the bucket).
 *
 * GPU time may exceed wall time (the sim backend's simulated clock, a slice
 * that overran), so the sum may exceed the window; readers clamp.
 *
 * Not thread-safe: the core calls it under core->lock.
 */
#ifndef MDGPUD_USAGE_H
#define MDGPUD_USAGE_H

#include <stdbool.h>
#include <stdint.h>

#define MDGPUD_USAGE_BUCKETS	10
#define MDGPUD_USAGE_SLOTS	(MDGPUD_USAGE_BUCKETS + 1)

/* One second: the longest sample period NVIDIA's NVML documents. */
#define MDGPUD_USAGE_WINDOW_NS	1000000000ULL
#define MDGPUD_USAGE_WIDTH_NS	(MDGPUD_USAGE_WINDOW_NS / MDGPUD_USAGE_BUCKETS)

struct mdgpud_usage {
	uint64_t slot_ns[MDGPUD_USAGE_SLOTS];	/* GPU ns per bucket */
	uint64_t head_start_ns;		/* start of the bucket now filling */
	uint32_t head;			/* index of that bucket */
	bool started;
};

/* Charge gpu_ns of GPU time that ended at now_ns. */
void mdgpud_usage_charge(struct mdgpud_usage *u, uint64_t now_ns,
			 uint64_t gpu_ns);
/* GPU ns charged inside (now_ns - window, now_ns]. */
uint64_t mdgpud_usage_window(struct mdgpud_usage *u, uint64_t now_ns);

#endif /* MDGPUD_USAGE_H */
