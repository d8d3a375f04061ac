// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpu-e2e-client: a libmdgpu client for the end-to-end guests.  In
 * tests/e2e/init it opens an mdev exactly as QEMU would (libmdgpu "vfio"
 * transport, DEV is the mdev UUID); in the nested e2e
 * (tests/e2e/nested-inner-init) it runs inside the VM that QEMU gave the
 * vGPU to, through mdgpu-guest.ko (libmdgpu "guest" transport, DEV is
 * /dev/mdgpu-vgpuN).  Either way it does real work through mdgpud.
 *
 *   mdgpu-e2e-client [--transport=vfio|guest] COMMAND DEV [args]
 *
 * (default vfio; below, UUID stands for DEV).  iova needs the vfio
 * transport (VFIO_IOMMU_MAP_DMA); fuzz speaks to the device without
 * libmdgpu: BAR2 + SQ_TAIL over vfio, the driver's ring mapping + SUBMIT
 * over guest.
 *
 *   mdgpu-e2e-client roundtrip UUID          QUERY/alloc/copy/free round trip
 *   mdgpu-e2e-client iova UUID               zero-copy copies by guest IOVA
 *   mdgpu-e2e-client work UUID SEED ROUNDS   copy in, fill, add, checksum,
 *                                            copy out, verify vs C reference
 *   mdgpu-e2e-client quota UUID              allocate until -ENOMEM
 *   mdgpu-e2e-client spin UUID SECONDS NS    keep the ring full of SPIN_NS
 *   mdgpu-e2e-client reset UUID              VFIO_DEVICE_RESET mid-work
 *   mdgpu-e2e-client resetstorm UUID SECONDS SEED
 *                                            resets at random moments
 *                                            under verified work
 *   mdgpu-e2e-client survive UUID FILE       keep the device open across a
 *                                            daemon restart (FILE appears
 *                                            when mdgpud is back), reset it
 *                                            and work again
 *   mdgpu-e2e-client fuzz UUID ROUNDS        hostile ring: random
 *                                            descriptors straight into BAR2
 *   mdgpu-e2e-client demo UUID SECONDS       the demo's workload
 *
 * MDGPU_E2E_BACKEND=cuda: the daemon's backend `roundtrip` expects (sim
 * by default).
 *
 * Prints "ok: ..." lines and, on failure, "error: ..." with the errno and
 * libmdgpu's message.  Exit status: 0 passed, 1 failed, 2 usage; `spin`
 * exits 3 when the vGPU went away (-ENODEV: mdgpud gone), so the
 * fault test can tell that apart from a real failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/vfio.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mdgpu/mdgpu.h"
#include "uapi/mdgpu.h"
#include "guest/include/uapi/mdgpu-guest.h"

static const char *uuid;		/* DEV: mdev UUID or /dev/mdgpu-vgpuN */
static const char *transport = "vfio";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#define CHECK(g, expr) do {						\
	int r_ = (expr);						\
	if (r_) {							\
		printf("error: %s: %s: %d (%s)\n", uuid, #expr, r_,	\
		       (g) ? mdgpu_last_error(g) : mdgpu_last_error(NULL)); \
		return r_ == -ENODEV ? 3 : 1;				\
	}								\
} while (0)

#define EXPECT(cond, ...) do {						\
	if (!(cond)) {							\
		printf("error: %s: %s: ", uuid, #cond);			\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		return 1;						\
	}								\
} while (0)

static int open_vgpu(struct mdgpu **g)
{
	struct mdgpu_open_opts o = { .transport = transport, .path = uuid };

	CHECK(NULL, mdgpu_open(&o, g));
	return 0;
}

/* The C reference of CHECKSUM (uapi). */
static uint64_t checksum_ref(const uint32_t *w, uint64_t n)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += (uint64_t)w[i] * (2 * i + 1);
	return s;
}

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/*
 * The daemon's backend the checks expect: MDGPU_E2E_BACKEND, "sim" (the
 * default) or "cuda"; its name in *name.
 */
static uint64_t want_backend(const char **name)
{
	const char *b = getenv("MDGPU_E2E_BACKEND");

	*name = b && !strcmp(b, "cuda") ? "cuda" : "sim";
	return **name == 'c' ? MDGPU_BACKEND_CUDA : MDGPU_BACKEND_SIM;
}

static int cmd_roundtrip(void)
{
	const char *name;
	uint64_t want = want_backend(&name);
	struct mdgpu *g;
	struct mdgpu_info in;
	uint64_t v, quota, t0;
	mdgpu_devptr d;
	uint8_t out[4096], buf[4096];
	int ret;

	t0 = now_ns();
	ret = open_vgpu(&g);
	if (ret)
		return ret;
	mdgpu_get_info(g, &in);
	printf("ok: open %s: vgpu %u type %u quota %" PRIu64 " MiB ring %u "
	       "aperture %" PRIu64 " MiB backend %u (%.1f ms)\n", uuid,
	       in.vgpu_id, in.type_id, in.fb_quota >> 20, in.ring_entries,
	       in.aperture_size >> 20, in.backend, (now_ns() - t0) / 1e6);
	t0 = now_ns();
	CHECK(g, mdgpu_synchronize(g));		/* SYNC: a no-op command */
	printf("ok: sync round trip %.1f us\n", (now_ns() - t0) / 1e3);
	CHECK(g, mdgpu_query(g, MDGPU_QUERY_ABI_VERSION, &v));
	EXPECT(v == MDGPU_ABI_VERSION, "abi %#" PRIx64, v);
	CHECK(g, mdgpu_query(g, MDGPU_QUERY_FB_QUOTA, &quota));
	EXPECT(quota == in.fb_quota, "quota %" PRIu64 " vs register %" PRIu64,
	       quota, in.fb_quota);
	CHECK(g, mdgpu_query(g, MDGPU_QUERY_SM_COUNT, &v));
	EXPECT(v == in.sm_count, "sm %" PRIu64 " vs %u", v, in.sm_count);
	CHECK(g, mdgpu_query(g, MDGPU_QUERY_BACKEND, &v));
	EXPECT(v == want, "backend %" PRIu64 ", %s expected", v, name);
	printf("ok: queries (abi, quota, sm %u, backend %s)\n", in.sm_count,
	       name);
	CHECK(g, mdgpu_mem_alloc(g, sizeof(buf), &d));
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	CHECK(g, mdgpu_copy_htod(g, d, buf, sizeof(buf)));
	memset(out, 0, sizeof(out));
	CHECK(g, mdgpu_copy_dtoh(g, out, d, sizeof(out)));
	EXPECT(!memcmp(out, buf, sizeof(buf)), "copy back differs");
	CHECK(g, mdgpu_query(g, MDGPU_QUERY_FB_USED, &v));
	EXPECT(v >= sizeof(buf), "fb_used %" PRIu64, v);
	CHECK(g, mdgpu_mem_free(g, d));
	CHECK(g, mdgpu_query(g, MDGPU_QUERY_FB_USED, &v));
	EXPECT(v == 0, "fb_used after free %" PRIu64, v);
	printf("ok: alloc, copy in/out 4 KiB, free\n");
	mdgpu_close(g);
	return 0;
}

/* An attribute of the guest driver's PCI device, or -1. */
static long long guest_attr(const char *attr, char *text, size_t len)
{
	const char *dev = strrchr(uuid, '/');
	char path[256], buf[32] = "";
	FILE *fp;

	snprintf(path, sizeof(path), "/sys/class/misc/%s/device/%s",
		 dev ? dev + 1 : uuid, attr);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	if (!fgets(buf, sizeof(buf), fp))
		buf[0] = '\0';
	fclose(fp);
	buf[strcspn(buf, "\n")] = '\0';
	if (text)
		snprintf(text, len, "%s", buf);
	return buf[0] ? strtoll(buf, NULL, 10) : -1;
}

/*
 * What a launch and a synchronize cost over the guest driver in trapped
 * register accesses, each a VM exit to the VMM: the driver counts every
 * BAR0 access it makes (sysfs bar0_reads, bar0_writes) and how each
 * submission rang (doorbells_shadow, doorbells_bar0).  `n` rounds of a
 * FILL and a synchronize, after one warm-up round: two submissions each.
 * With the register mirror (ABI 1.11) a round reads no register; it
 * writes one SQ_TAIL per submission that rang BAR0 (plus, under INTx, an
 * acknowledgement per interrupt).  With the shadow doorbell (ABI 1.13) a
 * submission rings BAR0 only when the daemon was not polling.  `mirror`
 * says whether the driver is expected to use the mirror; `shadow`:
 *   "off"   shadow_doorbell 0: every submission rings BAR0;
 *   "on"    in use: the submissions add up, whoever rang them;
 *   "poll"  in use, and the daemon is known to poll throughout (a long
 *           spin_us): at most 1 in 10 submissions rings BAR0.
 */
static int cmd_exits(unsigned int n, int mirror, const char *shadow)
{
	long long r0, w0, r1, w1, use, sh, s0, b0, s1, b1;
	mdgpu_devptr d;
	struct mdgpu *g;
	char irq[16];
	uint64_t t0;
	double us;
	int ret;

	if (strcmp(shadow, "off") && strcmp(shadow, "on") &&
	    strcmp(shadow, "poll")) {
		fprintf(stderr, "exits: shadow mode %s: off, on or poll\n",
			shadow);
		return 2;
	}
	use = guest_attr("register_mirror", NULL, 0);
	sh = guest_attr("shadow_doorbell", NULL, 0);
	guest_attr("irq_mode", irq, sizeof(irq));
	EXPECT(use == mirror, "register_mirror %lld, expected %d", use,
	       mirror);
	EXPECT(sh == !!strcmp(shadow, "off"), "shadow_doorbell %lld, %s "
	       "expected", sh, shadow);
	ret = open_vgpu(&g);
	if (ret)
		return ret;
	CHECK(g, mdgpu_mem_alloc(g, 4096, &d));
	CHECK(g, mdgpu_fill_u32(g, d, 1024, 1));
	CHECK(g, mdgpu_synchronize(g));
	r0 = guest_attr("bar0_reads", NULL, 0);
	w0 = guest_attr("bar0_writes", NULL, 0);
	s0 = guest_attr("doorbells_shadow", NULL, 0);
	b0 = guest_attr("doorbells_bar0", NULL, 0);
	t0 = now_ns();
	for (unsigned int i = 0; i < n; i++) {
		CHECK(g, mdgpu_fill_u32(g, d, 1024, i));
		CHECK(g, mdgpu_synchronize(g));
	}
	us = (now_ns() - t0) / 1e3 / n;
	r1 = guest_attr("bar0_reads", NULL, 0) - r0;
	w1 = guest_attr("bar0_writes", NULL, 0) - w0;
	s1 = guest_attr("doorbells_shadow", NULL, 0) - s0;
	b1 = guest_attr("doorbells_bar0", NULL, 0) - b0;
	EXPECT(r0 >= 0 && w0 >= 0, "no bar0_reads/bar0_writes in sysfs");
	EXPECT(s0 >= 0 && b0 >= 0, "no doorbells_shadow/doorbells_bar0 in "
	       "sysfs");
	printf("ok: launch + synchronize, %u rounds, registers %s, doorbell "
	       "%s, %s: %.2f BAR0 reads and %.2f writes (VM exits) per round, "
	       "%.2f of 2 submissions through the shadow, %.0f us per round\n",
	       n, use ? "mirrored" : "in BAR0", sh ? "shadowed" : "in BAR0",
	       irq, (double)r1 / n, (double)w1 / n, (double)s1 / n, us);
	EXPECT(s1 + b1 == 2LL * n, "%lld shadow and %lld BAR0 doorbells for "
	       "%u submissions", s1, b1, 2 * n);
	if (!sh)
		EXPECT(s1 == 0, "%lld shadow doorbells with shadow_doorbell=0",
		       s1);
	if (!strcmp(shadow, "poll"))
		EXPECT(b1 * 10 <= 2LL * n, "%lld of %u submissions rang BAR0 "
		       "while the daemon polled", b1, 2 * n);
	if (mirror) {
		EXPECT(r1 == 0, "%lld BAR0 reads with the mirror", r1);
		if (!strcmp(irq, "msi"))
			EXPECT(w1 == b1, "%lld BAR0 writes for %lld "
			       "doorbells", w1, b1);
		else
			EXPECT(w1 >= b1 && w1 <= b1 + 2LL * n, "%lld BAR0 "
			       "writes for %lld doorbells", w1, b1);
	} else {
		/* Each submission alone reads STATUS and FENCE twice. */
		EXPECT(r1 >= 16LL * n, "%lld BAR0 reads without the mirror",
		       r1);
	}
	CHECK(g, mdgpu_mem_free(g, d));
	mdgpu_close(g);
	return 0;
}

/* Zero-copy host memory of the vfio transport: VFIO_IOMMU_MAP_DMA'd,
 * copies are MDGPU_SPACE_IOVA commands served with MDGPU_CTL_DMA. */
static int cmd_iova(void)
{
	struct mdgpu_open_opts o = { .transport = "vfio", .path = uuid,
				     .host_bytes = 8 << 20 };
	const uint64_t len = 3 << 20;	/* > the 1 MiB DMA bounce: chunked */
	struct mdgpu *g;
	uint32_t *src, *dst, st = 99;
	mdgpu_devptr d;
	uint64_t sum, t0;

	CHECK(NULL, mdgpu_open(&o, &g));
	CHECK(g, mdgpu_host_alloc(g, len, (void **)&src));
	CHECK(g, mdgpu_host_alloc(g, len, (void **)&dst));
	for (uint64_t i = 0; i < len / 4; i++)
		src[i] = xorshift(&st);
	memset(dst, 0, len);
	CHECK(g, mdgpu_mem_alloc(g, len, &d));
	t0 = now_ns();
	CHECK(g, mdgpu_copy_htod(g, d, src, len));
	CHECK(g, mdgpu_checksum(g, d, len / 4, &sum));
	EXPECT(sum == checksum_ref(src, len / 4), "checksum after IOVA copy");
	CHECK(g, mdgpu_copy_dtoh(g, dst, d, len));
	EXPECT(!memcmp(src, dst, len), "IOVA copy back differs");
	printf("ok: 3 MiB host->device->host by IOVA (MAP_DMA'd memory, "
	       "MDGPU_CTL_DMA), checksum and bytes verified (%.1f ms)\n",
	       (now_ns() - t0) / 1e6);
	CHECK(g, mdgpu_host_free(g, src));
	CHECK(g, mdgpu_host_free(g, dst));
	mdgpu_close(g);
	return 0;
}

/* Real work: the result of every step is checked against C. */
static int cmd_work(unsigned int seed, unsigned int rounds)
{
	const uint64_t n = 3 << 20;	/* 12 MiB per buffer: > aperture */
	uint32_t *a = malloc(n * 4), *c = malloc(n * 4), *ref = malloc(n * 4);
	uint32_t s = seed | 1, fillv;
	mdgpu_devptr da, db, dc;
	uint64_t sum, t0 = now_ns();
	struct mdgpu *g;
	int ret;

	if (!a || !c || !ref)
		return 1;
	ret = open_vgpu(&g);
	if (ret)
		return ret;
	CHECK(g, mdgpu_mem_alloc(g, n * 4, &da));
	CHECK(g, mdgpu_mem_alloc(g, n * 4, &db));
	CHECK(g, mdgpu_mem_alloc(g, n * 4, &dc));
	for (unsigned int r = 0; r < rounds; r++) {
		for (uint64_t i = 0; i < n; i++)
			a[i] = xorshift(&s);
		fillv = xorshift(&s);
		CHECK(g, mdgpu_copy_htod(g, da, a, n * 4));
		CHECK(g, mdgpu_fill_u32(g, db, n, fillv));
		CHECK(g, mdgpu_add_u32(g, dc, da, db, n));
		CHECK(g, mdgpu_synchronize(g));
		for (uint64_t i = 0; i < n; i++)
			ref[i] = a[i] + fillv;
		CHECK(g, mdgpu_checksum(g, dc, n, &sum));
		EXPECT(sum == checksum_ref(ref, n), "round %u: checksum %#"
		       PRIx64 " vs reference %#" PRIx64, r, sum,
		       checksum_ref(ref, n));
		memset(c, 0, n * 4);
		CHECK(g, mdgpu_copy_dtoh(g, c, dc, n * 4));
		for (uint64_t i = 0; i < n; i++)
			EXPECT(c[i] == ref[i], "round %u: word %" PRIu64
			       ": %#x vs %#x", r, i, c[i], ref[i]);
		/* device to device, then memset of a part */
		CHECK(g, mdgpu_copy_dtod(g, da, dc, n * 4));
		CHECK(g, mdgpu_memset(g, da, 0, 4096));
		memset(ref, 0, 4096);
		CHECK(g, mdgpu_checksum(g, da, n, &sum));
		EXPECT(sum == checksum_ref(ref, n), "round %u: d2d+memset "
		       "checksum", r);
	}
	CHECK(g, mdgpu_mem_free(g, da));
	CHECK(g, mdgpu_mem_free(g, db));
	CHECK(g, mdgpu_mem_free(g, dc));
	printf("ok: work seed %u: %u rounds of 12 MiB copy in, fill, add, "
	       "checksum, copy out, d2d, memset verified (%.2f s)\n", seed,
	       rounds, (now_ns() - t0) / 1e9);
	mdgpu_close(g);
	free(a);
	free(c);
	free(ref);
	return 0;
}

static int cmd_quota(void)
{
	struct mdgpu *g;
	struct mdgpu_info in;
	mdgpu_devptr d[64];
	uint64_t chunk, used;
	int n = 0, ret;

	ret = open_vgpu(&g);
	if (ret)
		return ret;
	mdgpu_get_info(g, &in);
	chunk = in.fb_quota / 4;
	for (; n < 4; n++)
		CHECK(g, mdgpu_mem_alloc(g, chunk, &d[n]));
	ret = mdgpu_mem_alloc(g, 4096, &d[n]);
	EXPECT(ret == -ENOMEM, "allocation past the quota gave %d", ret);
	printf("ok: quota %" PRIu64 " MiB: 4 x %" PRIu64 " MiB allocated, "
	       "one more page -> %d (%s)\n", in.fb_quota >> 20, chunk >> 20,
	       ret, mdgpu_last_error(g));
	CHECK(g, mdgpu_query(g, MDGPU_QUERY_FB_USED, &used));
	EXPECT(used == in.fb_quota, "fb_used %" PRIu64, used);
	CHECK(g, mdgpu_mem_free(g, d[0]));
	CHECK(g, mdgpu_mem_alloc(g, chunk, &d[0]));
	printf("ok: after a free the quota admits the same size again\n");
	mdgpu_close(g);
	return 0;
}

/* Keep the ring full of SPIN_NS kernels for `secs` seconds. */
static int cmd_spin(double secs, uint64_t ns)
{
	uint64_t end, n = 0;
	struct mdgpu *g;
	int ret;

	ret = open_vgpu(&g);
	if (ret)
		return ret;
	printf("ok: spinning %.1f s with %" PRIu64 " us kernels\n", secs,
	       ns / 1000);
	fflush(stdout);
	end = now_ns() + (uint64_t)(secs * 1e9);
	while (now_ns() < end) {
		/* Submission waits for room once the ring is full. */
		for (int i = 0; i < 32; i++, n++)
			CHECK(g, mdgpu_spin_ns(g, ns));
		if ((n & 1023) == 0)
			CHECK(g, mdgpu_query(g, MDGPU_QUERY_FB_USED,
					     &(uint64_t){ 0 }));
	}
	CHECK(g, mdgpu_synchronize(g));
	printf("ok: %" PRIu64 " kernels done\n", n);
	mdgpu_close(g);
	return 0;
}

struct reset_arg {
	struct mdgpu *g;
	int ret;
	uint64_t start_ns, end_ns;	/* the mdgpu_reset() call */
};

static void *reset_thread(void *p)
{
	struct reset_arg *a = p;
	struct timespec ts = { 0, 150 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	a->start_ns = now_ns();
	a->ret = mdgpu_reset(a->g);
	a->end_ns = now_ns();
	return NULL;
}

static int cmd_reset(void)
{
	struct reset_arg ra = { 0 };
	mdgpu_devptr d, d2;
	uint64_t sum, used, t0;
	pthread_t th;
	struct mdgpu *g;
	int ret;

	ret = open_vgpu(&g);
	if (ret)
		return ret;
	CHECK(g, mdgpu_mem_alloc(g, 1 << 20, &d));
	CHECK(g, mdgpu_fill_u32(g, d, 1 << 18, 0x5a5a5a5a));
	/*
	 * 20 s of queued work in 20 commands: few enough to be queued long
	 * before the reset, however slowly this guest submits, and long
	 * enough that the reset reaches the device first even in a guest
	 * nested in a TCG guest on a loaded 2-core host, where 2 s of work
	 * once finished before the reset took effect.  A reset that works
	 * ends the wait at once, so the length costs nothing.
	 */
	for (int i = 0; i < 20; i++)
		CHECK(g, mdgpu_spin_ns(g, MDGPU_SPIN_NS_MAX));
	ra.g = g;
	t0 = now_ns();
	pthread_create(&th, NULL, reset_thread, &ra);
	ret = mdgpu_synchronize(g);
	pthread_join(th, NULL);
	EXPECT(ra.ret == 0, "VFIO_DEVICE_RESET: %d", ra.ret);
	EXPECT(ret == -ECANCELED, "waiting through a reset gave %d (%s) "
	       "after %.0f ms; the reset call ran from %.0f to %.0f ms", ret,
	       mdgpu_last_error(g), (now_ns() - t0) / 1e6,
	       (ra.start_ns - t0) / 1e6, (ra.end_ns - t0) / 1e6);
	printf("ok: reset after 150 ms of 20 s of queued work: the wait "
	       "returned %d (%s) after %.0f ms; the reset call ran from "
	       "%.0f to %.0f ms\n", ret, mdgpu_last_error(g),
	       (now_ns() - t0) / 1e6, (ra.start_ns - t0) / 1e6,
	       (ra.end_ns - t0) / 1e6);
	CHECK(g, mdgpu_query(g, MDGPU_QUERY_FB_USED, &used));
	EXPECT(used == 0, "fb_used after reset %" PRIu64, used);
	ret = mdgpu_checksum(g, d, 1 << 18, &sum);
	EXPECT(ret == -ENOENT, "old allocation after reset: %d", ret);
	printf("ok: after the reset memory is freed (fb_used 0, old pointer "
	       "-> %d)\n", ret);
	CHECK(g, mdgpu_mem_alloc(g, 1 << 20, &d2));
	CHECK(g, mdgpu_checksum(g, d2, 1 << 18, &sum));
	EXPECT(sum == 0, "fresh memory after reset not scrubbed: %#" PRIx64,
	       sum);
	CHECK(g, mdgpu_fill_u32(g, d2, 1 << 18, 3));
	CHECK(g, mdgpu_checksum(g, d2, 1 << 18, &sum));
	EXPECT(sum == 3ULL * (1ULL << 18) * (1ULL << 18), "checksum %#"
	       PRIx64, sum);
	printf("ok: new work after the reset is correct\n");
	mdgpu_close(g);
	return 0;
}

/*
 * Resets at random moments under load.  The main thread runs rounds of
 * work whose every result is checked against C: copy in, FILL, SPIN_NS
 * kernels of random length (queued work for a reset to cut), ADD,
 * CHECKSUM, copy out word by word, and with the vfio transport a
 * device-to-IOVA and an IOVA-to-device copy (mdgpud's MDGPU_CTL_DMA).  A
 * second thread calls mdgpu_reset() after a random 0..STORM_GAP_MS, over
 * and over.  A call that a reset cut fails with -ECANCELED and the round
 * starts again on fresh memory; any other error, or a wrong result, fails
 * the test.  A watchdog fails it when one call takes longer than
 * STORM_CALL_MAX_S (a call that never returns).  It ends with rounds
 * after the last reset, which must all pass.
 */
#define STORM_GAP_MS		80
#define STORM_CALL_MAX_S	30
#define STORM_WORDS		(64 * 1024)

struct storm {
	struct mdgpu *g;
	uint32_t seed;
	volatile int stop;
	volatile uint64_t call_ns;	/* start of the call in progress */
	unsigned long resets;
	int reset_err;
};

static void storm_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *storm_resetter(void *p)
{
	struct storm *st = p;
	uint32_t s = st->seed * 2654435761U | 1;

	while (!st->stop) {
		storm_sleep_ms(xorshift(&s) % (STORM_GAP_MS + 1));
		if (st->stop)
			break;
		if (mdgpu_reset(st->g)) {
			st->reset_err = 1;
			break;
		}
		st->resets++;
	}
	return NULL;
}

static void *storm_watchdog(void *p)
{
	struct storm *st = p;

	while (!st->stop) {
		uint64_t t = st->call_ns;

		if (t && now_ns() - t > STORM_CALL_MAX_S * 1000000000ULL) {
			printf("error: %s: a call has not returned for %d s "
			       "(resets so far %lu)\n", uuid, STORM_CALL_MAX_S,
			       st->resets);
			fflush(stdout);
			_exit(1);
		}
		storm_sleep_ms(100);
	}
	return NULL;
}

/* One call of a storm round: 0, 1 (cut by a reset), -1 (failed). */
#define STORM_CALL(st, expr) do {						int r_;									(st)->call_ns = now_ns();						r_ = (expr);								(st)->call_ns = 0;							if (r_ == -ECANCELED)								return 1;							if (r_) {									printf("error: %s: %s: %d (%s)\n", uuid, #expr, r_,			       mdgpu_last_error((st)->g));					return -1;							}								} while (0)

#define STORM_EXPECT(cond, ...) do {						if (!(cond)) {									printf("error: %s: %s: ", uuid, #cond);					printf(__VA_ARGS__);							printf("\n");								return -1;							}								} while (0)

/* One round of verified work; host buffers a, c, ref of STORM_WORDS,
 * IOVA buffers hio, hio2 (NULL without). */
static int storm_round(struct storm *st, uint32_t *a, uint32_t *c,
		       uint32_t *ref, uint32_t *hio, uint32_t *hio2)
{
	const uint64_t n = STORM_WORDS, bytes = n * 4;
	struct mdgpu *g = st->g;
	mdgpu_devptr da, db, dc;
	uint32_t fillv, spins;
	uint64_t sum;

	for (uint64_t i = 0; i < n; i++)
		a[i] = xorshift(&st->seed);
	fillv = xorshift(&st->seed);
	for (uint64_t i = 0; i < n; i++)
		ref[i] = a[i] + fillv;
	STORM_CALL(st, mdgpu_mem_alloc(g, bytes, &da));
	STORM_CALL(st, mdgpu_mem_alloc(g, bytes, &db));
	STORM_CALL(st, mdgpu_mem_alloc(g, bytes, &dc));
	STORM_CALL(st, mdgpu_copy_htod(g, da, a, bytes));
	STORM_CALL(st, mdgpu_fill_u32(g, db, n, fillv));
	spins = xorshift(&st->seed) % 4;
	for (uint32_t i = 0; i < spins; i++)
		STORM_CALL(st, mdgpu_spin_ns(g, 250000ULL *
					     (1 + xorshift(&st->seed) % 8)));
	STORM_CALL(st, mdgpu_add_u32(g, dc, da, db, n));
	STORM_CALL(st, mdgpu_checksum(g, dc, n, &sum));
	STORM_EXPECT(sum == checksum_ref(ref, n), "checksum %#" PRIx64
		     " vs reference %#" PRIx64, sum, checksum_ref(ref, n));
	memset(c, 0, bytes);
	STORM_CALL(st, mdgpu_copy_dtoh(g, c, dc, bytes));
	for (uint64_t i = 0; i < n; i++)
		STORM_EXPECT(c[i] == ref[i], "word %" PRIu64 ": %#x vs %#x",
			     i, c[i], ref[i]);
	if (hio) {
		/* device -> IOVA, IOVA -> device, checked both ways */
		memset(hio, 0, bytes);
		STORM_CALL(st, mdgpu_copy_dtoh(g, hio, dc, bytes));
		for (uint64_t i = 0; i < n; i++)
			STORM_EXPECT(hio[i] == ref[i], "IOVA word %" PRIu64
				     ": %#x vs %#x", i, hio[i], ref[i]);
		for (uint64_t i = 0; i < n; i++)
			hio2[i] = ~ref[i];
		STORM_CALL(st, mdgpu_copy_htod(g, da, hio2, bytes));
		STORM_CALL(st, mdgpu_copy_dtoh(g, c, da, bytes));
		for (uint64_t i = 0; i < n; i++)
			STORM_EXPECT(c[i] == ~ref[i], "IOVA-in word %" PRIu64
				     ": %#x vs %#x", i, c[i], ~ref[i]);
	}
	STORM_CALL(st, mdgpu_mem_free(g, da));
	STORM_CALL(st, mdgpu_mem_free(g, db));
	STORM_CALL(st, mdgpu_mem_free(g, dc));
	return 0;
}

static int cmd_resetstorm(double secs, unsigned int seed)
{
	struct mdgpu_open_opts o = { .transport = transport, .path = uuid };
	uint32_t *a = malloc(STORM_WORDS * 4), *c = malloc(STORM_WORDS * 4);
	uint32_t *ref = malloc(STORM_WORDS * 4), *hio = NULL, *hio2 = NULL;
	struct storm st = { .seed = seed | 1 };
	unsigned long rounds = 0, cut = 0, after = 0;
	uint64_t end, t0 = now_ns(), used;
	pthread_t rt, wt;
	int r = 0;

	if (!a || !c || !ref)
		return 1;
	if (!strcmp(transport, "vfio"))
		o.host_bytes = 2 * STORM_WORDS * 4;
	CHECK(NULL, mdgpu_open(&o, &st.g));
	if (o.host_bytes) {
		CHECK(st.g, mdgpu_host_alloc(st.g, STORM_WORDS * 4,
					     (void **)&hio));
		CHECK(st.g, mdgpu_host_alloc(st.g, STORM_WORDS * 4,
					     (void **)&hio2));
	}
	pthread_create(&wt, NULL, storm_watchdog, &st);
	pthread_create(&rt, NULL, storm_resetter, &st);
	end = t0 + (uint64_t)(secs * 1e9);
	while (now_ns() < end && r >= 0 && !st.reset_err) {
		r = storm_round(&st, a, c, ref, hio, hio2);
		rounds++;
		cut += r == 1;
	}
	st.stop = 1;
	pthread_join(rt, NULL);
	EXPECT(!st.reset_err, "mdgpu_reset: %s", mdgpu_last_error(st.g));
	EXPECT(r >= 0, "round %lu failed after %lu resets", rounds,
	       st.resets);
	/* No more resets: the work must now complete, every time.  A reset
	 * the last round did not see yet costs one cut round. */
	for (int i = 0; i < 4; i++) {
		r = storm_round(&st, a, c, ref, hio, hio2);
		EXPECT(r >= 0, "round after the storm failed");
		after += r == 0;
		EXPECT(r == 0 || i == 0, "round %d after the storm cut", i);
	}
	st.call_ns = now_ns();
	CHECK(st.g, mdgpu_query(st.g, MDGPU_QUERY_FB_USED, &used));
	st.call_ns = 0;
	EXPECT(used == 0, "fb_used %" PRIu64 " after the last round", used);
	printf("ok: reset storm: %lu resets at random 0..%d ms gaps, %lu "
	       "rounds (%lu cut by a reset, -ECANCELED; %lu verified), "
	       "then %lu verified rounds without resets, every call "
	       "returned (%.1f s)\n", st.resets, STORM_GAP_MS, rounds, cut,
	       rounds - cut, after, (now_ns() - t0) / 1e9);
	st.stop = 1;
	pthread_join(wt, NULL);
	mdgpu_close(st.g);
	free(a);
	free(c);
	free(ref);
	return st.resets && rounds > cut ? 0 : 1;
}

/*
 * A hostile user of the device, without libmdgpu: random descriptors
 * written straight into the SQ (BAR2) and rung through SQ_TAIL, as a
 * malicious guest driver could.  Every one must complete with 0 or one of
 * the ABI's errnos; unmapped IOVAs reach the kernel's DMA path.  SPIN_NS
 * is kept short so the run stays short (it is not what is tested).
 */
static int fuzz_errno_ok(int32_t st)
{
	static const int ok[] = { 0, -EINVAL, -ERANGE, -ENOENT, -ENOMEM,
				  -EFAULT, -E2BIG, -EOPNOTSUPP, -EIO,
				  -ENOSPC };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (st == ok[i])
			return 1;
	return 0;
}

/*
 * The device side of the fuzzer: the ring mapping and how to ring it and
 * wait for it.  vfio: BAR2 mmap, SQ_TAIL/SQ_HEAD in BAR0; guest: the
 * driver's ring mapping, SUBMIT and WAIT_FENCE.
 */
struct fuzz_dev {
	uint8_t *ring;
	size_t ring_size;
	uint32_t entries;
	int dev;			/* vfio device fd or guest fd */
	uint64_t regs_off;		/* vfio: BAR0 region offset */
	uint64_t fence;			/* guest: fence of the last batch */
	int (*ring_tail)(struct fuzz_dev *f, uint32_t tail);
	int (*wait)(struct fuzz_dev *f, uint32_t tail);
	int grp, cont;
	/* vfio, ABI 1.13: the shadow doorbell, written with a hostile
	 * tail before every BAR0 doorbell (fuzz_vfio_tail()). */
	struct mdgpu_ring_shadow *shadow;
	uint32_t head;			/* vfio: SQ_HEAD after the last wait */
	unsigned int hostile;		/* hostile shadow tails written */
};

static uint32_t fuzz_rd(struct fuzz_dev *f, uint32_t reg)
{
	uint32_t v = 0;

	if (pread(f->dev, &v, 4, (off_t)(f->regs_off + reg)) != 4)
		return 0;
	return v;
}

/*
 * The BAR0 doorbell, with a tail mdgpud must ignore in the shadow doorbell
 * first (ABI 1.13): behind the head, more than entries past the tail rung
 * (so past the head by more than entries while the head moves up to that
 * tail: a tail only entries past the head when written is a valid move
 * once the head has advanced), or 2^31 past the head, in turn.  The
 * daemon may be polling the shadow meanwhile; it must serve the BAR0
 * tail and nothing else (the wait wants the head exactly at the tail
 * rung, and the completions' seq checked).
 */
static int fuzz_vfio_tail(struct fuzz_dev *f, uint32_t tail)
{
	if (f->shadow) {
		uint32_t v;

		switch (f->hostile % 3) {
		case 0:
			v = f->head - 1 - f->hostile;
			break;
		case 1:
			v = tail + f->entries + 1 + f->hostile;
			break;
		default:
			v = f->head + 0x80000000u;
			break;
		}
		f->hostile++;
		__atomic_store_n(&f->shadow->sq_tail, v, __ATOMIC_RELEASE);
	}
	return pwrite(f->dev, &tail, 4, (off_t)(f->regs_off +
		      MDGPU_REG_SQ_TAIL)) == 4 ? 0 : -EIO;
}

static int fuzz_vfio_wait(struct fuzz_dev *f, uint32_t tail)
{
	uint64_t t0 = now_ns();

	while (fuzz_rd(f, MDGPU_REG_SQ_HEAD) != tail) {
		if (now_ns() - t0 > 20000000000ULL) {
			printf("error: %s: head %u tail %u status %#x\n", uuid,
			       fuzz_rd(f, MDGPU_REG_SQ_HEAD), tail,
			       fuzz_rd(f, MDGPU_REG_STATUS));
			return -ETIMEDOUT;
		}
		usleep(1000);
	}
	f->head = tail;
	return 0;
}

static int fuzz_open_vfio(struct fuzz_dev *f)
{
	char link[256], path[512];
	struct vfio_region_info r0 = { .argsz = sizeof(r0), .index = 0 };
	struct vfio_region_info r2 = { .argsz = sizeof(r2), .index = 2 };
	uint32_t v;
	ssize_t n;

	f->cont = open("/dev/vfio/vfio", O_RDWR);
	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/iommu_group",
		 uuid);
	n = readlink(path, link, sizeof(link) - 1);
	EXPECT(f->cont >= 0 && n > 0, "container/group link");
	link[n] = 0;
	snprintf(path, sizeof(path), "/dev/vfio/%s", strrchr(link, '/') + 1);
	f->grp = open(path, O_RDWR);
	EXPECT(f->grp >= 0, "open %s", path);
	EXPECT(!ioctl(f->grp, VFIO_GROUP_SET_CONTAINER, &f->cont) &&
	       !ioctl(f->cont, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU), "iommu");
	f->dev = ioctl(f->grp, VFIO_GROUP_GET_DEVICE_FD, uuid);
	EXPECT(f->dev >= 0, "device fd");
	EXPECT(!ioctl(f->dev, VFIO_DEVICE_GET_REGION_INFO, &r0) &&
	       !ioctl(f->dev, VFIO_DEVICE_GET_REGION_INFO, &r2), "regions");
	f->regs_off = r0.offset;
	f->ring = mmap(NULL, r2.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       f->dev, (off_t)r2.offset);
	EXPECT(f->ring != MAP_FAILED, "mmap BAR2");
	f->ring_size = r2.size;
	f->entries = fuzz_rd(f, MDGPU_REG_RING_ENTRIES);
	EXPECT(f->entries >= 2 && !(f->entries & (f->entries - 1)) &&
	       MDGPU_RING_BYTES(f->entries) <= r2.size, "ring of %u entries",
	       f->entries);
	if ((fuzz_rd(f, MDGPU_REG_VERSION) & 0xffff) >= 13 &&
	    MDGPU_RING_REGION_BYTES(f->entries) <= r2.size)
		f->shadow = (struct mdgpu_ring_shadow *)(f->ring +
				MDGPU_RING_SHADOW_OFFSET(f->entries));
	v = MDGPU_CONTROL_RESET | MDGPU_CONTROL_ENABLE;
	EXPECT(pwrite(f->dev, &v, 4, (off_t)(f->regs_off + MDGPU_REG_CONTROL))
	       == 4, "enable");
	usleep(50000);
	f->ring_tail = fuzz_vfio_tail;
	f->wait = fuzz_vfio_wait;
	return 0;
}

static int fuzz_guest_tail(struct fuzz_dev *f, uint32_t tail)
{
	struct mdgpu_guest_submit sub = { .tail = tail };

	if (ioctl(f->dev, MDGPU_GUEST_SUBMIT, &sub))
		return -errno;
	f->fence = sub.fence;
	return 0;
}

static int fuzz_guest_wait(struct fuzz_dev *f, uint32_t tail)
{
	struct mdgpu_guest_wait w = { .fence = f->fence, .timeout_ms = 20000 };

	(void)tail;
	if (ioctl(f->dev, MDGPU_GUEST_WAIT_FENCE, &w)) {
		int ret = -errno;

		printf("error: %s: WAIT_FENCE %" PRIu64 ": %d (completed %"
		       PRIu64 ")\n", uuid, f->fence, ret,
		       (uint64_t)w.completed);
		return ret;
	}
	return 0;
}

static int fuzz_open_guest(struct fuzz_dev *f)
{
	struct mdgpu_guest_info in = { 0 };

	f->dev = open(uuid, O_RDWR);
	EXPECT(f->dev >= 0, "open %s: %s", uuid, strerror(errno));
	EXPECT(!ioctl(f->dev, MDGPU_GUEST_GET_INFO, &in), "GET_INFO");
	f->entries = in.ring_entries;
	EXPECT(f->entries >= 2 && !(f->entries & (f->entries - 1)) &&
	       MDGPU_RING_BYTES(f->entries) <= in.ring_size,
	       "ring of %u entries", f->entries);
	f->ring = mmap(NULL, in.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       f->dev, (off_t)MDGPU_GUEST_MMAP_RING);
	EXPECT(f->ring != MAP_FAILED, "mmap ring");
	f->ring_size = in.ring_size;
	EXPECT(!ioctl(f->dev, MDGPU_GUEST_RESET), "RESET");
	usleep(50000);
	f->ring_tail = fuzz_guest_tail;
	f->wait = fuzz_guest_wait;
	return 0;
}

static int cmd_fuzz(unsigned int rounds)
{
	struct fuzz_dev f = { .dev = -1, .grp = -1, .cont = -1 };
	int fails = 0, ret;
	uint32_t tail = 0, seed = 7, entries, hist[128] = { 0 };
	uint64_t done = 0, devaddr = 0;
	uint8_t *ring;

	ret = strcmp(transport, "guest") ? fuzz_open_vfio(&f) :
					   fuzz_open_guest(&f);
	if (ret)
		return ret;
	ring = f.ring;
	entries = f.entries;
	for (unsigned int r = 0; r < rounds; r++) {
		uint32_t batch = entries / 2;

		for (uint32_t i = 0; i < batch; i++) {
			uint32_t w[MDGPU_CMD_SIZE / 4];
			struct mdgpu_cmd c;

			for (size_t k = 0; k < MDGPU_CMD_SIZE / 4; k++)
				w[k] = xorshift(&seed);
			memcpy(&c, w, sizeof(c));
			/* Mostly plausible headers, so the operand checks
			 * are reached; sometimes anything at all. */
			if (xorshift(&seed) % 8) {
				c.opcode %= MDGPU_OP_COUNT;
				c.flags &= 1;
				c.stream = 0;
				if (xorshift(&seed) % 2)
					memset(c.raw + 16, 0, 40);
				if (xorshift(&seed) % 4 == 0 &&
				    c.opcode == MDGPU_OP_COPY) {
					c.copy.src_space = 1 + xorshift(&seed) % 3;
					c.copy.dst_space = 1 + xorshift(&seed) % 3;
				}
			}
			if (c.opcode == MDGPU_OP_BUILTIN &&
			    c.builtin.kernel == MDGPU_BUILTIN_SPIN_NS)
				c.builtin.arg[0] %= 100000;
			switch (xorshift(&seed) % 8) {
			case 0:	/* no operands: NOP, SYNC, EVENT_CREATE ok */
				memset(c.raw, 0, sizeof(c.raw));
				c.stream = 0;
				c.opcode %= MDGPU_OP_COUNT;
				break;
			case 1:	/* unmapped guest IOVA into real memory */
				if (!devaddr)
					break;
				memset(&c, 0, sizeof(c));
				c.opcode = MDGPU_OP_COPY;
				c.copy.src = (uint64_t)xorshift(&seed) << 12;
				c.copy.src_space = MDGPU_SPACE_IOVA;
				c.copy.dst = devaddr;
				c.copy.dst_space = MDGPU_SPACE_DEVICE;
				c.copy.len = 1 + xorshift(&seed) % 4096;
				break;
			}
			if (r == 0 && i == 0) {	/* one real allocation */
				memset(&c, 0, sizeof(c));
				c.opcode = MDGPU_OP_MEM_ALLOC;
				c.alloc.size = 4096;
			}
			/* The guest driver waits on interrupts: the last
			 * command of a batch asks for one. */
			if (i == batch - 1)
				c.flags |= MDGPU_CMD_F_IRQ;
			memcpy(ring + (size_t)((tail + i) % entries) *
			       MDGPU_CMD_SIZE, &c, sizeof(c));
		}
		tail += batch;
		ret = f.ring_tail(&f, tail);
		EXPECT(!ret, "round %u: ringing tail %u: %d", r, tail, ret);
		ret = f.wait(&f, tail);
		EXPECT(!ret, "round %u: waiting for tail %u: %d", r, tail, ret);
		for (uint32_t i = tail - batch; i != tail; i++) {
			struct mdgpu_cpl cpl;

			memcpy(&cpl, ring + MDGPU_RING_CQ_OFFSET(entries) +
			       (size_t)(i % entries) * MDGPU_CPL_SIZE,
			       sizeof(cpl));
			if (!fuzz_errno_ok(cpl.status) || cpl.seq != i)
				fails++;
			if (i == 0 && !cpl.status)
				devaddr = cpl.result;
			hist[(uint32_t)-cpl.status & 127]++;
			done++;
		}
	}
	EXPECT(!fails, "%d completions with a status outside the ABI or a "
	       "wrong seq", fails);
	printf("ok: %" PRIu64 " random descriptors through %s: all completed "
	       "with 0 or an ABI errno (ok %u, EINVAL %u, ENOENT %u, ERANGE "
	       "%u, E2BIG %u, EFAULT %u, ENOMEM %u)\n", done,
	       strcmp(transport, "guest") ? "BAR2" : "the guest driver's ring",
	       hist[0], hist[EINVAL], hist[ENOENT], hist[ERANGE], hist[E2BIG],
	       hist[EFAULT], hist[ENOMEM]);
	if (f.shadow)
		printf("ok: each of the %u BAR0 doorbells served with a hostile "
		       "tail in the shadow doorbell (behind the head, more "
		       "than entries past the tail, 2^31 past the head)\n",
		       f.hostile);
	munmap(ring, f.ring_size);
	close(f.dev);
	if (f.grp >= 0)
		close(f.grp);
	if (f.cont >= 0)
		close(f.cont);
	return 0;
}

/*
 * What a VM does when mdgpud dies under it: the device stays open; once a
 * daemon is back (the replayed OPEN leaves the vGPU unserved until the
 * user resets it: the daemon cannot know the old ring position), the
 * driver resets the device and carries on.
 */
static int cmd_survive(const char *back)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	uint64_t v = 0, sum;
	mdgpu_devptr d;
	struct mdgpu *g;
	int ret, i;

	ret = open_vgpu(&g);
	if (ret)
		return ret;
	CHECK(g, mdgpu_mem_alloc(g, 1 << 20, &d));
	do {
		for (i = 0; i < 16; i++) {
			ret = mdgpu_spin_ns(g, 1000000);
			if (ret)
				break;
		}
		if (!ret)
			ret = mdgpu_synchronize(g);
	} while (!ret);
	EXPECT(ret == -ENODEV, "daemon death gave %d (%s)", ret,
	       mdgpu_last_error(g));
	printf("ok: daemon gone: %d (%s); keeping the device open\n", ret,
	       mdgpu_last_error(g));
	for (i = 0; i < 600 && access(back, F_OK); i++)
		nanosleep(&ts, NULL);
	EXPECT(i < 600, "no daemon came back");
	CHECK(g, mdgpu_reset(g));
	ret = mdgpu_query(g, MDGPU_QUERY_FB_USED, &v);
	EXPECT(ret == -ECANCELED, "first call after reset gave %d", ret);
	CHECK(g, mdgpu_query(g, MDGPU_QUERY_FB_USED, &v));
	EXPECT(v == 0, "fb_used %" PRIu64 " after restart + reset", v);
	CHECK(g, mdgpu_mem_alloc(g, 1 << 20, &d));
	CHECK(g, mdgpu_fill_u32(g, d, 1 << 18, 7));
	CHECK(g, mdgpu_checksum(g, d, 1 << 18, &sum));
	EXPECT(sum == 7ULL * (1ULL << 18) * (1ULL << 18), "checksum %#" PRIx64,
	       sum);
	printf("ok: after the restart and a reset the same open device works "
	       "(fb_used 0, fill + checksum verified)\n");
	mdgpu_close(g);
	return 0;
}

/*
 * The demo's tenant: the same loop in every vGPU.  A round copies 1 MiB
 * in, queues 200 kernels of 2 ms and checks a checksum against C, so the
 * tenant stays backlogged (its share is what the scheduler gives it).
 * Runs until `secs` have passed or the file $MDGPU_DEMO_STOP exists.
 */
static int cmd_demo(double secs)
{
	const uint64_t n = 1 << 18;
	const char *stop = getenv("MDGPU_DEMO_STOP");
	uint32_t *a = malloc(n * 4), s = 12345;
	mdgpu_devptr da, db;
	uint64_t end, sum, k = 0, rounds = 0;
	struct mdgpu *g;
	int ret;

	if (!a)
		return 1;
	ret = open_vgpu(&g);
	if (ret)
		return ret;
	for (uint64_t i = 0; i < n; i++)
		a[i] = xorshift(&s);
	CHECK(g, mdgpu_mem_alloc(g, 256 << 20, &da));	/* "weights" */
	CHECK(g, mdgpu_mem_alloc(g, n * 4, &db));
	end = now_ns() + (uint64_t)(secs * 1e9);
	while (now_ns() < end && !(stop && !access(stop, F_OK))) {
		a[rounds % n] = (uint32_t)rounds;
		CHECK(g, mdgpu_copy_htod(g, db, a, n * 4));
		for (int i = 0; i < 200; i++, k++)
			CHECK(g, mdgpu_spin_ns(g, 2000000));
		CHECK(g, mdgpu_checksum(g, db, n, &sum));
		EXPECT(sum == checksum_ref(a, n), "checksum");
		rounds++;
	}
	printf("ok: demo tenant %s: %" PRIu64 " rounds, %" PRIu64 " kernels, "
	       "every checksum verified\n", uuid, rounds, k);
	mdgpu_close(g);
	free(a);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strncmp(argv[1], "--transport=", 12)) {
		transport = argv[1] + 12;
		argc--;
		argv++;
		if (strcmp(transport, "vfio") && strcmp(transport, "guest"))
			goto usage;
	}
	if (argc < 3)
		goto usage;
	uuid = argv[2];
	if (!strcmp(argv[1], "roundtrip"))
		return cmd_roundtrip();
	if (!strcmp(argv[1], "work") && argc == 5)
		return cmd_work((unsigned int)atoi(argv[3]),
				(unsigned int)atoi(argv[4]));
	if (!strcmp(argv[1], "fuzz") && argc == 4)
		return cmd_fuzz((unsigned int)atoi(argv[3]));
	if (!strcmp(argv[1], "iova") && strcmp(transport, "guest"))
		return cmd_iova();
	if (!strcmp(argv[1], "quota"))
		return cmd_quota();
	if (!strcmp(argv[1], "spin") && argc == 5)
		return cmd_spin(atof(argv[3]), strtoull(argv[4], NULL, 10));
	if (!strcmp(argv[1], "survive") && argc == 4)
		return cmd_survive(argv[3]);
	if (!strcmp(argv[1], "reset"))
		return cmd_reset();
	if (!strcmp(argv[1], "exits") && (argc == 5 || argc == 6) &&
	    !strcmp(transport, "guest"))
		return cmd_exits((unsigned int)atoi(argv[3]), atoi(argv[4]),
				 argc == 6 ? argv[5] : "on");
	if (!strcmp(argv[1], "resetstorm") && argc == 5)
		return cmd_resetstorm(atof(argv[3]),
				      (unsigned int)atoi(argv[4]));
	if (!strcmp(argv[1], "demo") && argc == 4)
		return cmd_demo(atof(argv[3]));
usage:
	fprintf(stderr, "usage: mdgpu-e2e-client [--transport=vfio|guest] "
		"roundtrip|iova|work|quota|spin|reset|resetstorm|survive|fuzz|"
		"demo|exits DEV "
		"[args] (see the source)\n");
	return 2;
}
