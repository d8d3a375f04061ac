// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The Prometheus exposition of core/metrics.c from made-up snapshots:
 * exact samples (seconds with nine decimals, clamped utilisation, cap as
 * a ratio), labels (the mdev UUID only on the kernel transport, escaping
 * of hostile names), the cumulative queue-wait histogram, its bounds and
 * its _sum, the recording of a wait (mdgpud_stats_wait_add, saturating),
 * families kept together, and the framing the admin protocol needs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mdgpud/metrics.h"
#include "mdgpud/usage.h"

#define L1	"gpu=\"2\",bus_id=\"0000:65:00.0\",vgpu_id=\"7\"," \
		"mdev_uuid=\"\",type=\"2g\""

static struct mdgpud_metrics_gpu gpu(void)
{
	return (struct mdgpud_metrics_gpu){
		.ordinal = 2, .bus_id = "0000:65:00.0",
		.name = "NVIDIA H100", .backend = "cuda",
		.transport = "socket", .policy = "best-effort",
		.version = "1.0", .fb_size = 80ULL << 30, .sm_count = 132,
		.max_vgpus = 64, .timeslice_us = 2500,
		.cap_window_us = 100000,
		.totals = { .vgpus_created = 11, .vgpus_destroyed = 10,
			    .hangs = 3, .ctx_losses = 4 },
	};
}

static struct mdgpud_vgpu_stats vgpu(void)
{
	struct mdgpud_vgpu_stats s = {
		.vgpu_id = 7, .type_id = 2, .gpu_ns = 12345678901ULL,
		.slices = 10, .commands = 1000, .errors = 3,
		.bytes_copied = 4096, .fb_quota = 2ULL << 30,
		.fb_used = 1 << 20, .fb_requested = 1000, .allocations = 2,
		.weight = 3, .cap_pct = 50, .priority = 4, .resets = 5,
		.hangs = 1, .ctx_losses = 2, .ctx_lost = 1,
		.gpu_ns_window = MDGPUD_USAGE_WINDOW_NS / 4,
	};

	for (int i = 0; i < 16; i++)
		s.uuid[i] = (uint8_t)(0x10 + i);
	s.wait_hist[0] = 1;	/* 0..1 ns */
	s.wait_hist[9] = 2;	/* 512..1023 ns */
	s.wait_hist[10] = 4;	/* 1024..2047 ns */
	s.wait_hist[20] = 8;	/* ~1 ms */
	s.wait_hist[34] = 16;	/* last finite bucket */
	s.wait_hist[35] = 32;	/* beyond it: +Inf only */
	s.wait_hist[63] = 64;
	s.wait_sum_ns = 98765432123ULL;
	return s;
}

static char *write_all(const struct mdgpud_metrics_gpu *g,
		       const struct mdgpud_vgpu_stats *st, size_t n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(mdgpud_metrics_write(f, g, st, n), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static void has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return;
	fail_msg("line not found: %s", line);
}

static void test_samples(void **state)
{
	struct mdgpud_metrics_gpu g = gpu();
	struct mdgpud_vgpu_stats s = vgpu();
	char *t;

	(void)state;
	t = write_all(&g, &s, 1);
	has_line(t, "mdgpu_vgpu_gpu_seconds_total{" L1 "} 12.345678901");
	has_line(t, "mdgpu_vgpu_utilization_ratio{" L1 "} 0.250000");
	has_line(t, "mdgpu_vgpu_fb_quota_bytes{" L1 "} 2147483648");
	has_line(t, "mdgpu_vgpu_fb_used_bytes{" L1 "} 1048576");
	has_line(t, "mdgpu_vgpu_fb_requested_bytes{" L1 "} 1000");
	has_line(t, "mdgpu_vgpu_allocations{" L1 "} 2");
	has_line(t, "mdgpu_vgpu_commands_total{" L1 "} 1000");
	has_line(t, "mdgpu_vgpu_errors_total{" L1 "} 3");
	has_line(t, "mdgpu_vgpu_copied_bytes_total{" L1 "} 4096");
	has_line(t, "mdgpu_vgpu_slices_total{" L1 "} 10");
	has_line(t, "mdgpu_vgpu_resets_total{" L1 "} 5");
	has_line(t, "mdgpu_vgpu_hangs_total{" L1 "} 1");
	has_line(t, "mdgpu_vgpu_contexts_lost_total{" L1 "} 2");
	has_line(t, "mdgpu_vgpu_context_lost{" L1 "} 1");
	has_line(t, "mdgpu_vgpu_weight{" L1 "} 3");
	has_line(t, "mdgpu_vgpu_cap_ratio{" L1 "} 0.50");
	has_line(t, "mdgpu_vgpu_priority{" L1 "} 4");
	has_line(t, "# TYPE mdgpu_vgpu_gpu_seconds_total counter");
	has_line(t, "# TYPE mdgpu_vgpu_fb_used_bytes gauge");
	has_line(t, "# TYPE mdgpu_vgpu_queue_wait_seconds histogram");
	/* GPU-wide */
	has_line(t, "mdgpu_gpu_info{gpu=\"2\",bus_id=\"0000:65:00.0\","
		 "name=\"NVIDIA H100\",backend=\"cuda\",transport=\"socket\","
		 "policy=\"best-effort\",version=\"1.0\"} 1");
	has_line(t, "mdgpu_gpu_fb_size_bytes{gpu=\"2\",bus_id=\"0000:65:00.0\"} 85899345920");
	has_line(t, "mdgpu_timeslice_seconds{gpu=\"2\",bus_id=\"0000:65:00.0\"} 0.002500");
	has_line(t, "mdgpu_cap_window_seconds{gpu=\"2\",bus_id=\"0000:65:00.0\"} 0.100000");
	has_line(t, "mdgpu_vgpus{gpu=\"2\",bus_id=\"0000:65:00.0\"} 1");
	/* The daemon's lifetime counts, destroyed vGPUs included. */
	has_line(t, "mdgpu_vgpus_created_total{gpu=\"2\",bus_id=\"0000:65:00.0\"} 11");
	has_line(t, "mdgpu_vgpus_destroyed_total{gpu=\"2\",bus_id=\"0000:65:00.0\"} 10");
	has_line(t, "mdgpu_gpu_hangs_total{gpu=\"2\",bus_id=\"0000:65:00.0\"} 3");
	has_line(t, "mdgpu_gpu_contexts_lost_total{gpu=\"2\",bus_id=\"0000:65:00.0\"} 4");
	has_line(t, "# TYPE mdgpu_gpu_hangs_total counter");
	free(t);
}

static void test_histogram(void **state)
{
	struct mdgpud_metrics_gpu g = gpu();
	struct mdgpud_vgpu_stats s = vgpu();
	char *t;

	(void)state;
	t = write_all(&g, &s, 1);
	/* The first bound holds everything below it too: 1 + 2. */
	has_line(t, "mdgpu_vgpu_queue_wait_seconds_bucket{" L1
		 ",le=\"0.000001023\"} 3");
	has_line(t, "mdgpu_vgpu_queue_wait_seconds_bucket{" L1
		 ",le=\"0.000002047\"} 7");
	has_line(t, "mdgpu_vgpu_queue_wait_seconds_bucket{" L1
		 ",le=\"0.001048575\"} 7");
	has_line(t, "mdgpu_vgpu_queue_wait_seconds_bucket{" L1
		 ",le=\"0.002097151\"} 15");
	has_line(t, "mdgpu_vgpu_queue_wait_seconds_bucket{" L1
		 ",le=\"34.359738367\"} 31");
	has_line(t, "mdgpu_vgpu_queue_wait_seconds_bucket{" L1
		 ",le=\"+Inf\"} 127");
	has_line(t, "mdgpu_vgpu_queue_wait_seconds_sum{" L1
		 "} 98.765432123");
	has_line(t, "mdgpu_vgpu_queue_wait_seconds_count{" L1 "} 127");
	free(t);
	/* A saturated sum prints exactly, not as a rounded double. */
	s.wait_sum_ns = UINT64_MAX;
	t = write_all(&g, &s, 1);
	has_line(t, "mdgpu_vgpu_queue_wait_seconds_sum{" L1
		 "} 18446744073.709551615");
	/* FIRST..LAST finite buckets and +Inf, nothing else. */
	{
		size_t n = 0;

		for (const char *p = t;
		     (p = strstr(p, "queue_wait_seconds_bucket{")); p++)
			n++;
		assert_int_equal(n, MDGPUD_METRICS_WAIT_LAST -
				 MDGPUD_METRICS_WAIT_FIRST + 2);
	}
	free(t);
}

/* Each wait lands in its log2 bucket and adds to the sum, which stops at
 * UINT64_MAX instead of wrapping. */
static void test_wait_add(void **state)
{
	uint64_t h[MDGPUD_WAIT_HIST_BUCKETS] = { 0 }, sum = 0;

	(void)state;
	mdgpud_stats_wait_add(h, &sum, 0);
	mdgpud_stats_wait_add(h, &sum, 1);
	mdgpud_stats_wait_add(h, &sum, 1023);
	mdgpud_stats_wait_add(h, &sum, 1024);
	mdgpud_stats_wait_add(h, &sum, 1500000);
	assert_int_equal(h[0], 2);
	assert_int_equal(h[9], 1);
	assert_int_equal(h[10], 1);
	assert_int_equal(h[20], 1);
	assert_int_equal(sum, 0 + 1 + 1023 + 1024 + 1500000);
	mdgpud_stats_wait_add(h, &sum, UINT64_MAX - 10);
	assert_int_equal(h[63], 1);
	assert_true(sum == UINT64_MAX);
	mdgpud_stats_wait_add(h, &sum, 5);
	assert_true(sum == UINT64_MAX);
	assert_int_equal(h[2], 1);
	sum = UINT64_MAX - 3;
	mdgpud_stats_wait_add(h, &sum, 3);
	assert_true(sum == UINT64_MAX);
}

static void test_labels(void **state)
{
	struct mdgpud_metrics_gpu g = gpu();
	struct mdgpud_vgpu_stats s[2] = { vgpu(), vgpu() };
	char *t;

	(void)state;
	g.mdev = true;
	g.name = "evil\"name\\with\nnewline\x01\xff";
	g.bus_id = "sim0";
	s[1].vgpu_id = 8;
	s[1].type_id = 9999;		/* no such type */
	s[1].gpu_ns_window = 5 * MDGPUD_USAGE_WINDOW_NS;	/* sim clock */
	t = write_all(&g, s, 2);
	has_line(t, "mdgpu_vgpu_weight{gpu=\"2\",bus_id=\"sim0\",vgpu_id=\"7\","
		 "mdev_uuid=\"10111213-1415-1617-1819-1a1b1c1d1e1f\","
		 "type=\"2g\"} 3");
	has_line(t, "mdgpu_vgpu_utilization_ratio{gpu=\"2\",bus_id=\"sim0\","
		 "vgpu_id=\"8\",mdev_uuid=\"10111213-1415-1617-1819-"
		 "1a1b1c1d1e1f\",type=\"unknown\"} 1.000000");
	assert_non_null(strstr(t, "name=\"evil\\\"name\\\\with\\nnewline__\""));
	/* The whole GPU: 0.25 + 5 s in one second is clamped to 1. */
	has_line(t, "mdgpu_gpu_utilization_ratio{gpu=\"2\",bus_id=\"sim0\"} 1.000000");
	has_line(t, "mdgpu_vgpus{gpu=\"2\",bus_id=\"sim0\"} 2");
	has_line(t, "mdgpu_gpu_fb_quota_bytes{gpu=\"2\",bus_id=\"sim0\"} 4294967296");
	free(t);
}

/* Every line is a valid admin data line; every family's samples follow its
 * TYPE line without another family in between. */
static void test_framing(void **state)
{
	struct mdgpud_metrics_gpu g = gpu();
	struct mdgpud_vgpu_stats s[3] = { vgpu(), vgpu(), vgpu() };
	char family[128] = "", *t, *line, *save = NULL;
	size_t types = 0;

	(void)state;
	s[1].vgpu_id = 8;
	s[2].vgpu_id = 9;
	t = write_all(&g, s, 3);
	assert_true(strlen(t) > 0 && t[strlen(t) - 1] == '\n');
	for (line = strtok_r(t, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		assert_true(strlen(line) < 1024);
		assert_true(strcmp(line, "ok") && strncmp(line, "err ", 4));
		for (const char *p = line; *p; p++)
			assert_true(*p >= 0x20 && *p < 0x7f);
		if (!strncmp(line, "# TYPE ", 7)) {
			size_t n = strcspn(line + 7, " ");

			assert_true(n < sizeof(family));
			memcpy(family, line + 7, n);
			family[n] = '\0';
			types++;
		} else if (strncmp(line, "# HELP ", 7)) {
			assert_int_equal(strncmp(line, family, strlen(family)),
					 0);
		}
	}
	/* 14 GPU-wide, 17 per-vGPU, the histogram */
	assert_int_equal(types, 32);
	free(t);
	/* No vGPU: heads and GPU-wide samples only. */
	t = write_all(&g, NULL, 0);
	has_line(t, "mdgpu_vgpus{gpu=\"2\",bus_id=\"0000:65:00.0\"} 0");
	assert_null(strstr(t, "vgpu_id="));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_wait_add),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_framing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
