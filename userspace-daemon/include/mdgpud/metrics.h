/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The admin socket's "metrics" request: mdgpud's statistics in the
 * Prometheus text exposition format (version 0.0.4), one metric family
 * after another, each with its HELP and TYPE lines.  Per-vGPU series carry
 * dcgm-exporter's style of labels (gpu, bus_id) plus vgpu_id, mdev_uuid
 * and type; GPU-wide series carry gpu and bus_id.  Documentation/
 * mdgpuctl.md ("metrics") names every family.
 *
 * The formatter is pure (a snapshot in, text out) so that it can be tested
 * without a daemon.
 */
#ifndef MDGPUD_METRICS_H
#define MDGPUD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mdgpud/daemon.h"

/* The queue-wait histogram's buckets, as indexes of the daemon's log2
 * buckets: le = 2^(i+1) - 1 ns for i in [FIRST, LAST] (1.023 us ..
 * 34.4 s), then +Inf.  Waits below the first bound count in it. */
#define MDGPUD_METRICS_WAIT_FIRST	9
#define MDGPUD_METRICS_WAIT_LAST	34

/*
 * Record one queue wait of wait_ns: hist[floor(log2(wait_ns))] (hist[0]
 * for 0 ns) gains one and *sum_ns gains wait_ns, saturating at UINT64_MAX
 * rather than wrapping, so _sum never goes backwards.  The dispatcher's
 * completion path calls it under core->lock (core/stats.c).
 */
void mdgpud_stats_wait_add(uint64_t hist[MDGPUD_WAIT_HIST_BUCKETS],
			   uint64_t *sum_ns, uint64_t wait_ns);

/* The GPU and the daemon, for the GPU-wide series and the labels. */
struct mdgpud_metrics_gpu {
	int ordinal;			/* gpu label: the CUDA ordinal the
					 * backend found cuda_device at */
	const char *bus_id;		/* backend's ("0000:65:00.0", "sim0") */
	const char *name;		/* the GPU's name */
	const char *backend, *transport, *policy, *version;
	bool mdev;			/* vGPUs are mdevs (kernel transport):
					 * mdev_uuid is their UUID, else "" */
	uint64_t fb_size;
	uint32_t sm_count;
	uint32_t max_vgpus;
	uint32_t timeslice_us;
	uint64_t cap_window_us;
	struct mdgpud_core_totals totals;	/* the daemon's lifetime */
};

/*
 * Write the exposition text of g and the n vGPUs of st to f.  Every line
 * ends with '\n' and starts with "# " or "mdgpu_".  Returns 0, or -EIO
 * when f reported an error.
 */
int mdgpud_metrics_write(FILE *f, const struct mdgpud_metrics_gpu *g,
			 const struct mdgpud_vgpu_stats *st, size_t n);

/*
 * Write s as a label value: '\\', '"' and newline escaped as the format
 * requires, any other byte outside printable ASCII as '_' (a GPU name is
 * the driver's; the text stays ASCII).
 */
void mdgpud_metrics_label_value(FILE *f, const char *s);

#endif /* MDGPUD_METRICS_H */
