// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A vGPU's GPU time over the last window (include/mdgpud/usage.h).
 */
#include "mdgpud/usage.h"

/* Move the ring forward to the bucket that holds now_ns. */
static void mdgpud_usage_advance(struct mdgpud_usage *u, uint64_t now_ns)
{
	const uint64_t w = MDGPUD_USAGE_WIDTH_NS;
	uint64_t steps;

	if (!u->started) {
		u->head_start_ns = now_ns - now_ns % w;
		u->started = true;
		return;
	}
	if (now_ns < u->head_start_ns + w)
		return;		/* same bucket (or a clock read before it) */
	steps = (now_ns - u->head_start_ns) / w;
	if (steps >= MDGPUD_USAGE_SLOTS) {
		/* Everything kept is older than the ring. */
		for (unsigned int i = 0; i < MDGPUD_USAGE_SLOTS; i++)
			u->slot_ns[i] = 0;
	} else {
		for (uint64_t i = 0; i < steps; i++) {
			u->head = (u->head + 1) % MDGPUD_USAGE_SLOTS;
			u->slot_ns[u->head] = 0;
		}
	}
	u->head_start_ns += steps * w;
}

void mdgpud_usage_charge(struct mdgpud_usage *u, uint64_t now_ns,
			 uint64_t gpu_ns)
{
	const uint64_t w = MDGPUD_USAGE_WIDTH_NS;
	uint64_t lo, hi = now_ns;

	mdgpud_usage_advance(u, now_ns);
	lo = gpu_ns < now_ns ? now_ns - gpu_ns : 0;
	/* Bucket k steps back covers [head_start - k w, head_start - k w + w);
	 * the head bucket ends at now. */
	for (unsigned int k = 0; k < MDGPUD_USAGE_SLOTS && hi > lo; k++) {
		uint64_t b_lo = u->head_start_ns >= k * w ?
				u->head_start_ns - k * w : 0;
		uint32_t idx = (u->head + MDGPUD_USAGE_SLOTS - k) %
			       MDGPUD_USAGE_SLOTS;
		uint64_t from = lo > b_lo ? lo : b_lo;

		if (hi > from) {
			u->slot_ns[idx] += hi - from;
			hi = from;
		}
		if (!b_lo)
			break;
	}
}

uint64_t mdgpud_usage_window(struct mdgpud_usage *u, uint64_t now_ns)
{
	const uint64_t w = MDGPUD_USAGE_WIDTH_NS;
	uint32_t oldest;
	uint64_t sum = 0, inside;

	mdgpud_usage_advance(u, now_ns);
	oldest = (u->head + 1) % MDGPUD_USAGE_SLOTS;
	for (unsigned int i = 0; i < MDGPUD_USAGE_SLOTS; i++)
		if (i != oldest)
			sum += u->slot_ns[i];
	/* The oldest bucket ends at head_start - (BUCKETS - 1) w; the window
	 * starts at now - BUCKETS w: w - (now - head_start) of it is inside. */
	inside = now_ns >= u->head_start_ns ? now_ns - u->head_start_ns : 0;
	inside = inside < w ? w - inside : 0;
	/* In two parts, so that no product overflows. */
	sum += u->slot_ns[oldest] / w * inside +
	       u->slot_ns[oldest] % w * inside / w;
	return sum;
}
