// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer harness: the admin protocol's request handler
 * (mdgpud_admin_exec()), without sockets, against a daemon core (sim
 * backend, dispatcher not running) with three vGPUs.
 *
 * Input: one byte of peer rights (bit 0: may change settings, as uid 0
 * or the daemon's uid), then request lines separated by '\n', the
 * first MAX_LINES of them run (a '\r' before the '\n' dropped, lines
 * with a NUL skipped: the connection code does both before the handler).
 * Checked beyond the sanitizers: every response is zero or more data
 * lines, none starting with "ok" or "err", then exactly one final line,
 * "ok" when the handler returned 0, "err <ERRNO-NAME> ..." when it
 * returned a negative errno.  Knobs, policy and timeslice go back to
 * their defaults after each input that may change them, so an input
 * always runs against the same state.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "mdgpud/admin.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

#define NR_VGPUS 3
#define ENTRIES 16
#define MAX_LINES 16		/* requests run per input */

struct fake_vgpu {
	uint8_t ring[MDGPU_RING_BYTES(ENTRIES)];
	uint8_t *aperture;
	struct mdgpud_vgpu *v;
};

static struct mdgpud_core *core;
static struct fake_vgpu vgpus[NR_VGPUS];
static char dir[64], sock[96];

static uint32_t f_tail(void *p)
{
	(void)p;
	return 0;
}

static const struct mdgpu_cmd *f_entry(void *p, uint32_t idx)
{
	return (const struct mdgpu_cmd *)(((struct fake_vgpu *)p)->ring +
					  idx * MDGPU_CMD_SIZE);
}

static void f_cq_write(void *p, uint32_t idx, const struct mdgpu_cpl *cpl)
{
	memcpy(((struct fake_vgpu *)p)->ring + MDGPU_RING_CQ_OFFSET(ENTRIES) +
	       idx * MDGPU_CPL_SIZE, cpl, sizeof(*cpl));
}

static void f_publish(void *p, uint32_t head, uint64_t fence, uint32_t irq,
		      uint64_t fb_used)
{
	(void)p, (void)head, (void)fence, (void)irq, (void)fb_used;
}

static void f_arm(void *p, bool sleeping)
{
	(void)p, (void)sleeping;
}

static void f_ring_error(void *p, int err)
{
	(void)p, (void)err;
}

static void f_lost(void *p)
{
	(void)p;
}

static const struct mdgpud_vgpu_tops fake_tops = {
	.sq_tail = f_tail, .sq_entry = f_entry, .cq_write = f_cq_write,
	.publish = f_publish, .arm = f_arm, .ring_error = f_ring_error,
	.lost = f_lost,
};

static void cleanup(void)
{
	mdgpud_core_destroy(core);
	for (int i = 0; i < NR_VGPUS; i++)
		free(vgpus[i].aperture);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const types[NR_VGPUS] = { "1g", "2g", "quarter" };
	struct mdgpud_config cfg;

	(void)argc;
	(void)argv;
	mdgpud_log_set(MDGPUD_LOG_DEBUG, fuzz_log_sink, NULL);
	snprintf(dir, sizeof(dir), "/tmp/mdgpud-fuzz-admin-XXXXXX");
	FUZZ_CHECK(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/sock", dir);
	mdgpud_config_defaults(&cfg);
	strcpy(cfg.socket_path, sock);
	cfg.sim_fb_mib = 8192;
	cfg.sim_realtime = 0;
	cfg.max_vgpus = 4;	/* list allocates stats for max_vgpus */
	FUZZ_CHECK(!mdgpud_core_create(&cfg, &core));
	for (int i = 0; i < NR_VGPUS; i++) {
		struct mdgpud_vgpu_params p = {
			.type_name = types[i],
			.ring_entries = ENTRIES,
			.ring = vgpus[i].ring,
			.aperture_size = 16 << 20,	/* the largest type aperture */
			.aperture_fd = -1,
			.tops = &fake_tops,
			.tpriv = &vgpus[i],
		};

		vgpus[i].aperture = calloc(1, p.aperture_size);
		FUZZ_CHECK(vgpus[i].aperture);
		p.aperture = vgpus[i].aperture;
		FUZZ_CHECK(!mdgpud_vgpu_create(core, &p, &vgpus[i].v));
	}
	atexit(cleanup);
	return 0;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The response contract of mdgpud/admin.h. */
static void check_response(const char *buf, size_t len, int ret)
{
	const char *line = buf, *nl;

	FUZZ_CHECK(buf && len && buf[len - 1] == '\n' &&
		   strlen(buf) == len);
	while ((nl = strchr(line, '\n')) && nl[1]) {
		FUZZ_CHECK(!starts(line, "ok") && !starts(line, "err"));
		line = nl + 1;
	}
	if (!ret)
		FUZZ_CHECK(!strcmp(line, "ok\n"));
	else
		FUZZ_CHECK(ret < 0 && starts(line, "err E") &&
			   strchr(line + 5, ' ') < nl);
}

static void reset_state(void)
{
	for (int i = 0; i < NR_VGPUS; i++)
		FUZZ_CHECK(!mdgpud_vgpu_set_knobs(vgpus[i].v, (uint32_t)i + 1,
						  MDGPU_CAP_MAX,
						  MDGPU_PRIORITY_DEFAULT));
	FUZZ_CHECK(!mdgpud_core_set_policy(core, MDGPU_POLICY_BEST_EFFORT,
					   MDGPU_TIMESLICE_US_DEFAULT));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *line, *next;
	bool may_write;
	int lines = 0;

	if (!size)
		return 0;
	may_write = data[0] & 1;
	text = malloc(size);
	FUZZ_CHECK(text);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	for (line = text; line < text + size - 1 && lines < MAX_LINES;
	     line = next) {
		char *end = memchr(line, '\n', (size_t)(text + size - 1 - line));
		char *buf = NULL;
		size_t len = 0, cap = 0, n;
		int ret;

		if (!end)
			break;	/* an unfinished line is never run */
		next = end + 1;
		*end = '\0';
		n = (size_t)(end - line);
		if (memchr(line, '\0', n))
			continue;
		if (n && line[n - 1] == '\r')
			line[n - 1] = '\0';
		lines++;
		ret = mdgpud_admin_exec(core, line, may_write, &buf, &len,
					&cap);
		check_response(buf, len, ret);
		free(buf);
	}
	free(text);
	if (may_write)		/* nothing else changes state */
		reset_state();
	return 0;
}
