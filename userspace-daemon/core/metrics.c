// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Prometheus text exposition of mdgpud's statistics (mdgpud/metrics.h).
 * Families are written one after another (the format wants every sample
 * of a family together), the per-vGPU ones from a table.  Integers are
 * printed exactly; nanoseconds become seconds with nine decimals, so no
 * precision is lost to a double.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/gpu_select.h"
#include "mdgpud/metrics.h"
#include "mdgpud/usage.h"
#include "mdgpud/vtypes.h"

/* How a per-vGPU family's value is read from struct mdgpud_vgpu_stats. */
enum mdgpud_metrics_kind {
	MDGPUD_MK_U64,		/* a uint64_t, as it is */
	MDGPUD_MK_U32,		/* a uint32_t, as it is */
	MDGPUD_MK_NS,		/* a uint64_t of ns, in seconds */
	MDGPUD_MK_WINDOW,	/* a uint64_t of ns in the usage window, as a
				 * fraction of the window (at most 1) */
	MDGPUD_MK_PCT,		/* a uint32_t percentage, as a ratio */
};

struct mdgpud_metrics_family {
	const char *name;
	const char *type;
	const char *help;
	size_t off;
	enum mdgpud_metrics_kind kind;
};

#define MDGPUD_MF(n, t, k, f, h) \
	{ "mdgpu_vgpu_" n, t, h, offsetof(struct mdgpud_vgpu_stats, f), k }

static const struct mdgpud_metrics_family mdgpud_metrics_vgpu[] = {
	MDGPUD_MF("gpu_seconds_total", "counter", MDGPUD_MK_NS, gpu_ns,
		  "GPU time charged to the vGPU (when its slices end)."),
	MDGPUD_MF("utilization_ratio", "gauge", MDGPUD_MK_WINDOW,
		  gpu_ns_window,
		  "GPU time of the vGPU in the last second, over one second."),
	MDGPUD_MF("fb_quota_bytes", "gauge", MDGPUD_MK_U64, fb_quota,
		  "Device memory quota of the vGPU."),
	MDGPUD_MF("fb_used_bytes", "gauge", MDGPUD_MK_U64, fb_used,
		  "Device memory reserved by the vGPU's allocations."),
	MDGPUD_MF("fb_requested_bytes", "gauge", MDGPUD_MK_U64, fb_requested,
		  "Device memory the vGPU's allocations asked for."),
	MDGPUD_MF("allocations", "gauge", MDGPUD_MK_U32, allocations,
		  "Live device memory allocations of the vGPU."),
	MDGPUD_MF("commands_total", "counter", MDGPUD_MK_U64, commands,
		  "Commands the vGPU completed, failed ones included."),
	MDGPUD_MF("errors_total", "counter", MDGPUD_MK_U64, errors,
		  "Commands of the vGPU that completed with an error."),
	MDGPUD_MF("copied_bytes_total", "counter", MDGPUD_MK_U64,
		  bytes_copied, "Bytes moved by the vGPU's copy commands."),
	MDGPUD_MF("slices_total", "counter", MDGPUD_MK_U64, slices,
		  "Scheduler time slices the vGPU ran."),
	MDGPUD_MF("resets_total", "counter", MDGPUD_MK_U64, resets,
		  "Device resets of the vGPU."),
	MDGPUD_MF("hangs_total", "counter", MDGPUD_MK_U64, hangs,
		  "GPU contexts of the vGPU lost to the hang bound."),
	MDGPUD_MF("contexts_lost_total", "counter", MDGPUD_MK_U64, ctx_losses,
		  "GPU contexts of the vGPU lost otherwise than by a hang."),
	MDGPUD_MF("context_lost", "gauge", MDGPUD_MK_U32, ctx_lost,
		  "1 while the vGPU's GPU context is lost (until a reset)."),
	MDGPUD_MF("weight", "gauge", MDGPUD_MK_U32, weight,
		  "Scheduling weight of the vGPU."),
	MDGPUD_MF("cap_ratio", "gauge", MDGPUD_MK_PCT, cap_pct,
		  "Most of the GPU's time the vGPU may use (1: no cap)."),
	MDGPUD_MF("priority", "gauge", MDGPUD_MK_U32, priority,
		  "Scheduling priority of the vGPU (0 highest)."),
};

void mdgpud_metrics_label_value(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '\\' || ch == '"') {
			fputc('\\', f);
			fputc(ch, f);
		} else if (ch == '\n') {
			fputs("\\n", f);
		} else {
			fputc(ch >= 0x20 && ch < 0x7f ? ch : '_', f);
		}
	}
}

static void mdgpud_metrics_gpu_labels(FILE *f,
				      const struct mdgpud_metrics_gpu *g)
{
	fprintf(f, "gpu=\"%d\",bus_id=\"", g->ordinal);
	mdgpud_metrics_label_value(f, g->bus_id);
	fputc('"', f);
}

/* {gpu=..,bus_id=..,vgpu_id=..,mdev_uuid=..,type=..} without the brace
 * that closes it, so that a histogram can add le. */
static void mdgpud_metrics_vgpu_labels(FILE *f,
				       const struct mdgpud_metrics_gpu *g,
				       const struct mdgpud_vgpu_stats *s)
{
	const struct mdgpud_vtype *t = mdgpud_vtype_by_id(s->type_id);
	char uuid[MDGPU_UUID_STR_LEN];

	fputc('{', f);
	mdgpud_metrics_gpu_labels(f, g);
	fprintf(f, ",vgpu_id=\"%u\",mdev_uuid=\"%s\",type=\"", s->vgpu_id,
		g->mdev ? mdgpu_uuid_format(s->uuid, uuid) : "");
	mdgpud_metrics_label_value(f, t ? t->name : "unknown");
	fputc('"', f);
}

static void mdgpud_metrics_head(FILE *f, const char *name, const char *type,
				const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* ns as seconds, exactly: "12.345678901". */
static void mdgpud_metrics_seconds(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u,
		ns % 1000000000u);
}

static void mdgpud_metrics_value(FILE *f, const struct mdgpud_vgpu_stats *s,
				 const struct mdgpud_metrics_family *m)
{
	const char *p = (const char *)s + m->off;
	uint64_t v64;
	uint32_t v32;

	switch (m->kind) {
	case MDGPUD_MK_U64:
	case MDGPUD_MK_NS:
	case MDGPUD_MK_WINDOW:
		memcpy(&v64, p, sizeof(v64));
		if (m->kind == MDGPUD_MK_NS)
			mdgpud_metrics_seconds(f, v64);
		else if (m->kind == MDGPUD_MK_WINDOW)
			/* GPU time may exceed wall time (usage.h): clamp */
			fprintf(f, "%.6f", v64 >= MDGPUD_USAGE_WINDOW_NS ? 1.0 :
				(double)v64 / (double)MDGPUD_USAGE_WINDOW_NS);
		else
			fprintf(f, "%" PRIu64, v64);
		break;
	case MDGPUD_MK_U32:
	case MDGPUD_MK_PCT:
		memcpy(&v32, p, sizeof(v32));
		if (m->kind == MDGPUD_MK_PCT)
			fprintf(f, "%u.%02u", v32 / 100, v32 % 100);
		else
			fprintf(f, "%u", v32);
		break;
	}
}

/* The cumulative queue-wait histogram of one vGPU: its buckets, then _sum
 * (exact, like every time here) and _count. */
static void mdgpud_metrics_wait(FILE *f, const struct mdgpud_metrics_gpu *g,
				const struct mdgpud_vgpu_stats *s)
{
	const char *name = "mdgpu_vgpu_queue_wait_seconds";
	uint64_t acc = 0;
	unsigned int i;

	for (i = 0; i < MDGPUD_METRICS_WAIT_FIRST; i++)
		acc += s->wait_hist[i];
	for (; i <= MDGPUD_METRICS_WAIT_LAST; i++) {
		acc += s->wait_hist[i];
		fprintf(f, "%s_bucket", name);
		mdgpud_metrics_vgpu_labels(f, g, s);
		fputs(",le=\"", f);
		mdgpud_metrics_seconds(f, (2ULL << i) - 1);
		fprintf(f, "\"} %" PRIu64 "\n", acc);
	}
	for (; i < MDGPUD_WAIT_HIST_BUCKETS; i++)
		acc += s->wait_hist[i];
	fprintf(f, "%s_bucket", name);
	mdgpud_metrics_vgpu_labels(f, g, s);
	fprintf(f, ",le=\"+Inf\"} %" PRIu64 "\n%s_sum", acc, name);
	mdgpud_metrics_vgpu_labels(f, g, s);
	fputs("} ", f);
	mdgpud_metrics_seconds(f, s->wait_sum_ns);
	fprintf(f, "\n%s_count", name);
	mdgpud_metrics_vgpu_labels(f, g, s);
	fprintf(f, "} %" PRIu64 "\n", acc);
}

/* A GPU-wide sample: name{gpu,bus_id} value (value already formatted). */
static void mdgpud_metrics_gpu_sample(FILE *f,
				      const struct mdgpud_metrics_gpu *g,
				      const char *name, const char *type,
				      const char *help, const char *value)
{
	mdgpud_metrics_head(f, name, type, help);
	fprintf(f, "%s{", name);
	mdgpud_metrics_gpu_labels(f, g);
	fprintf(f, "} %s\n", value);
}

static void mdgpud_metrics_gpu_wide(FILE *f,
				    const struct mdgpud_metrics_gpu *g,
				    const struct mdgpud_vgpu_stats *st,
				    size_t n)
{
	uint64_t quota = 0, used = 0, window = 0;
	char v[48];

	for (size_t i = 0; i < n; i++) {
		quota += st[i].fb_quota;
		used += st[i].fb_used;
		window += st[i].gpu_ns_window;
	}
	mdgpud_metrics_head(f, "mdgpu_gpu_info", "gauge",
			    "The GPU and its daemon (always 1).");
	fputs("mdgpu_gpu_info{", f);
	mdgpud_metrics_gpu_labels(f, g);
	fputs(",name=\"", f);
	mdgpud_metrics_label_value(f, g->name);
	fputs("\",backend=\"", f);
	mdgpud_metrics_label_value(f, g->backend);
	fputs("\",transport=\"", f);
	mdgpud_metrics_label_value(f, g->transport);
	fputs("\",policy=\"", f);
	mdgpud_metrics_label_value(f, g->policy);
	fputs("\",version=\"", f);
	mdgpud_metrics_label_value(f, g->version);
	fputs("\"} 1\n", f);

	snprintf(v, sizeof(v), "%" PRIu64, g->fb_size);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_gpu_fb_size_bytes", "gauge",
				  "Device memory the daemon partitions.", v);
	snprintf(v, sizeof(v), "%" PRIu64, quota);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_gpu_fb_quota_bytes", "gauge",
				  "Sum of the quotas of the live vGPUs.", v);
	snprintf(v, sizeof(v), "%" PRIu64, used);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_gpu_fb_used_bytes", "gauge",
				  "Device memory reserved by all vGPUs.", v);
	snprintf(v, sizeof(v), "%.6f", window >= MDGPUD_USAGE_WINDOW_NS ?
		 1.0 : (double)window / (double)MDGPUD_USAGE_WINDOW_NS);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_gpu_utilization_ratio",
				  "gauge",
				  "GPU time of all vGPUs in the last second, over one second.",
				  v);
	snprintf(v, sizeof(v), "%u", g->sm_count);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_gpu_multiprocessors", "gauge",
				  "Streaming multiprocessors of the GPU.", v);
	snprintf(v, sizeof(v), "%zu", n);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_vgpus", "gauge",
				  "Live vGPUs on the GPU.", v);
	snprintf(v, sizeof(v), "%u", g->max_vgpus);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_vgpus_max", "gauge",
				  "Most vGPUs the daemon admits (max_vgpus).",
				  v);
	snprintf(v, sizeof(v), "%u.%06u", g->timeslice_us / 1000000,
		 g->timeslice_us % 1000000);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_timeslice_seconds", "gauge",
				  "Scheduler time slice.", v);
	snprintf(v, sizeof(v), "%" PRIu64 ".%06" PRIu64,
		 g->cap_window_us / 1000000, g->cap_window_us % 1000000);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_cap_window_seconds", "gauge",
				  "Window over which caps are enforced.", v);
	snprintf(v, sizeof(v), "%" PRIu64, g->totals.vgpus_created);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_vgpus_created_total",
				  "counter",
				  "vGPUs created since the daemon started.", v);
	snprintf(v, sizeof(v), "%" PRIu64, g->totals.vgpus_destroyed);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_vgpus_destroyed_total",
				  "counter",
				  "vGPUs destroyed since the daemon started.", v);
	snprintf(v, sizeof(v), "%" PRIu64, g->totals.hangs);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_gpu_hangs_total", "counter",
				  "GPU contexts lost to the hang bound since the daemon started, destroyed vGPUs included.",
				  v);
	snprintf(v, sizeof(v), "%" PRIu64, g->totals.ctx_losses);
	mdgpud_metrics_gpu_sample(f, g, "mdgpu_gpu_contexts_lost_total",
				  "counter",
				  "GPU contexts lost otherwise than by a hang since the daemon started, destroyed vGPUs included.",
				  v);
}

int mdgpud_metrics_write(FILE *f, const struct mdgpud_metrics_gpu *g,
			 const struct mdgpud_vgpu_stats *st, size_t n)
{
	const size_t nf = sizeof(mdgpud_metrics_vgpu) /
			  sizeof(mdgpud_metrics_vgpu[0]);

	mdgpud_metrics_gpu_wide(f, g, st, n);
	for (size_t k = 0; k < nf; k++) {
		const struct mdgpud_metrics_family *m = &mdgpud_metrics_vgpu[k];

		mdgpud_metrics_head(f, m->name, m->type, m->help);
		for (size_t i = 0; i < n; i++) {
			fputs(m->name, f);
			mdgpud_metrics_vgpu_labels(f, g, &st[i]);
			fputs("} ", f);
			mdgpud_metrics_value(f, &st[i], m);
			fputc('\n', f);
		}
	}
	mdgpud_metrics_head(f, "mdgpu_vgpu_queue_wait_seconds", "histogram",
			    "Time from the doorbell that queued a command to its start (log2 buckets; _sum saturates at 2^64-1 ns).");
	for (size_t i = 0; i < n; i++)
		mdgpud_metrics_wait(f, g, &st[i]);
	return ferror(f) ? -EIO : 0;
}
