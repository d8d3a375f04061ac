// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpuctl top: a per-vGPU table refreshed every interval, from two
 * `list` answers an interval apart (Documentation/mdgpuctl.md, "top").
 * Plain text: on a terminal each frame clears the screen first, elsewhere
 * frames follow each other separated by a blank line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl_kv.h"
#include "ctl_top.h"

struct ctl_top_row {
	char line[CTL_LINE_MAX];	/* the list line */
	uint32_t id;
	uint64_t gpu_ns, commands;
};

struct ctl_top_sample {
	struct ctl_top_row *rows;
	size_t n, cap;
	uint64_t t_ns;
	char stats[CTL_LINE_MAX];
};

static uint64_t ctl_top_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int ctl_top_add(void *arg, const char *line)
{
	struct ctl_top_sample *s = arg;
	struct ctl_top_row *r;
	uint64_t id;

	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16;
		struct ctl_top_row *nr = realloc(s->rows, ncap * sizeof(*nr));

		if (!nr)
			return -1;
		s->rows = nr;
		s->cap = ncap;
	}
	r = &s->rows[s->n];
	if (ctl_kv_u64(line, "id", &id) || id > UINT32_MAX ||
	    ctl_kv_u64(line, "gpu_ns", &r->gpu_ns) ||
	    ctl_kv_u64(line, "commands", &r->commands)) {
		fprintf(stderr, "mdgpuctl: top: list line without id, gpu_ns or commands: %s\n",
			line);
		return -1;
	}
	r->id = (uint32_t)id;
	snprintf(r->line, sizeof(r->line), "%s", line);
	s->n++;
	return 0;
}

static int ctl_top_stats(void *arg, const char *line)
{
	struct ctl_top_sample *s = arg;

	snprintf(s->stats, sizeof(s->stats), "%s", line);
	return 0;
}

/* One sample: stats then list; a CTL_EXIT_* status. */
static int ctl_top_sample(const struct ctl_opts *o, struct ctl_top_sample *s)
{
	char err[512];
	int ret;

	s->n = 0;
	s->stats[0] = '\0';
	ret = ctl_request(o, "stats", ctl_top_stats, s, err, sizeof(err));
	if (!ret)
		ret = ctl_request(o, "list", ctl_top_add, s, err, sizeof(err));
	if (ret == CTL_EXIT_REFUSED || ret == CTL_EXIT_PERM)
		fprintf(stderr, "mdgpuctl: top: %s\n", err);
	s->t_ns = ctl_top_now_ns();
	return ret;
}

static const struct ctl_top_row *ctl_top_find(const struct ctl_top_sample *s,
					      uint32_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->rows[i].id == id)
			return &s->rows[i];
	return NULL;
}

/* A duration in ns, short: "850ns", "12.3us", "4.1ms", "2.0s". */
static void ctl_top_dur(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, n, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.1fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, n, "%.1fms", (double)ns / 1e6);
	else
		snprintf(buf, n, "%.1fs", (double)ns / 1e9);
}

static void ctl_top_frame(FILE *f, const struct ctl_top_sample *a,
			  const struct ctl_top_sample *b)
{
	double dt = (double)(b->t_ns - a->t_ns) / 1e9, total = 0;
	char gpu[64], bus_id[32], backend[32], policy[32], when[32];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	ctl_kv_str(b->stats, "gpu", gpu, sizeof(gpu));
	ctl_kv_str(b->stats, "bus_id", bus_id, sizeof(bus_id));
	ctl_kv_str(b->stats, "backend", backend, sizeof(backend));
	ctl_kv_str(b->stats, "policy", policy, sizeof(policy));
	for (size_t i = 0; i < b->n; i++) {
		const struct ctl_top_row *p = ctl_top_find(a, b->rows[i].id);

		if (p && b->rows[i].gpu_ns >= p->gpu_ns)
			total += (double)(b->rows[i].gpu_ns - p->gpu_ns);
	}
	total = total / 1e9 / dt * 100;
	fprintf(f, "mdgpuctl top  %s  interval %.2f s  GPU %s at %s (%s)  policy %s  vGPUs %zu  util %.1f%%\n",
		when, dt, gpu, bus_id, backend, policy, b->n,
		total > 100 ? 100 : total);
	fprintf(f, "%6s %-8s %6s %4s %4s %6s %11s %11s %10s %9s %-8s %s\n",
		"VGPU", "TYPE", "WEIGHT", "CAP", "PRIO", "UTIL%",
		"FB_USED_MiB", "FB_QUOTA_MiB", "CMDS/S", "WAIT_P99", "CONTEXT",
		"MDEV_UUID");
	for (size_t i = 0; i < b->n; i++) {
		const struct ctl_top_row *r = &b->rows[i];
		const struct ctl_top_row *p = ctl_top_find(a, r->id);
		uint64_t used = 0, quota = 0, wait = 0;
		char type[16], weight[8], cap[8], prio[8], ctx[16], uuid[40];
		char util[16] = "-", cmds[24] = "-", wait_s[16];

		ctl_kv_str(r->line, "type", type, sizeof(type));
		ctl_kv_str(r->line, "weight", weight, sizeof(weight));
		ctl_kv_str(r->line, "cap", cap, sizeof(cap));
		ctl_kv_str(r->line, "priority", prio, sizeof(prio));
		ctl_kv_str(r->line, "context", ctx, sizeof(ctx));
		ctl_kv_str(r->line, "mdev_uuid", uuid, sizeof(uuid));
		ctl_kv_u64(r->line, "fb_used", &used);
		ctl_kv_u64(r->line, "fb_quota", &quota);
		ctl_kv_u64(r->line, "wait_p99_ns", &wait);
		/* A vGPU new in this interval (or one whose counters went
		 * back: another vGPU with its id) has no rate yet. */
		if (p && r->gpu_ns >= p->gpu_ns && r->commands >= p->commands) {
			double u = (double)(r->gpu_ns - p->gpu_ns) / 1e9 / dt *
				   100;

			snprintf(util, sizeof(util), "%.1f", u > 100 ? 100 : u);
			snprintf(cmds, sizeof(cmds), "%.0f",
				 (double)(r->commands - p->commands) / dt);
		}
		ctl_top_dur(wait_s, sizeof(wait_s), wait);
		fprintf(f, "%6u %-8s %6s %4s %4s %6s %11" PRIu64 " %11" PRIu64
			" %10s %9s %-8s %s\n", r->id, type, weight, cap, prio,
			util, used >> 20, quota >> 20, cmds, wait ? wait_s : "-",
			ctx, uuid);
	}
	fflush(f);
}

int ctl_top(const struct ctl_opts *o, double interval_s, long frames)
{
	struct ctl_top_sample s[2] = { 0 };
	bool tty = isatty(STDOUT_FILENO);
	int cur = 0, ret;

	ret = ctl_top_sample(o, &s[cur]);
	for (long k = 0; !ret && (frames <= 0 || k < frames); k++) {
		struct timespec ts = {
			.tv_sec = (time_t)interval_s,
			.tv_nsec = (long)((interval_s - (double)(time_t)interval_s) *
					  1e9),
		};

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		ret = ctl_top_sample(o, &s[!cur]);
		if (ret)
			break;
		if (tty)
			fputs("\033[H\033[J", stdout);
		else if (k)
			fputc('\n', stdout);
		ctl_top_frame(stdout, &s[cur], &s[!cur]);
		cur = !cur;
	}
	free(s[0].rows);
	free(s[1].rows);
	return ret;
}
