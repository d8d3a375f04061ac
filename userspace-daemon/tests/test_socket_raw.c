// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The socket transport spoken raw (uapi section 4), as a hostile client
 * would: bad hellos, garbage after the handshake, a bad doorbell, and
 * thousands of random descriptors.  The daemon must answer every command
 * with a completion, keep serving, and never touch another tenant's data.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "uapi/mdgpu.h"
#include "mdgpu/mdgpu.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

#include "sim_daemon.h"

static int setup(void **state)
{
	mdgpud_log_set(MDGPUD_LOG_ERR, NULL, NULL);
	return sim_daemon_setup(state, "raw", 4096, 0660);
}

static int teardown(void **state)
{
	return sim_daemon_teardown(state);
}

struct raw {
	int fd;
	struct mdgpu_sock_welcome w;
	int fds[MDGPU_SOCK_NR_FDS];
	uint8_t *map;
	struct mdgpu_sock_ctrl *ctrl;
	struct mdgpu_cmd *sq;
	struct mdgpu_cpl *cq;
	uint32_t tail;
};

static int raw_connect(struct daemon *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	strcpy(sa.sun_path, d->path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Send `h`, receive the welcome; returns the number of fds received. */
static int raw_hello(struct raw *r, const struct mdgpu_sock_hello *h)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * MDGPU_SOCK_NR_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &r->w, sizeof(r->w) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	int n = 0;

	assert_int_equal(send(r->fd, h, sizeof(*h), MSG_NOSIGNAL),
			 sizeof(*h));
	assert_int_equal(recvmsg(r->fd, &msg, MSG_WAITALL), sizeof(r->w));
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		memcpy(r->fds, CMSG_DATA(cm), (size_t)n * sizeof(int));
	}
	return n;
}

static struct mdgpu_sock_hello good_hello(void)
{
	struct mdgpu_sock_hello h;

	memset(&h, 0, sizeof(h));
	h.magic = MDGPU_SOCK_MAGIC;
	h.abi_version = MDGPU_ABI_VERSION;
	strcpy(h.type, "1g");
	h.ring_entries = 16;
	return h;
}

static void raw_open(struct daemon *d, struct raw *r)
{
	struct mdgpu_sock_hello h = good_hello();

	memset(r, 0, sizeof(*r));
	r->fd = raw_connect(d);
	assert_int_equal(raw_hello(r, &h), MDGPU_SOCK_NR_FDS);
	assert_int_equal(r->w.status, 0);
	r->map = mmap(NULL, r->w.ring_size, PROT_READ | PROT_WRITE,
		      MAP_SHARED, r->fds[MDGPU_SOCK_FD_RING], 0);
	assert_true(r->map != MAP_FAILED);
	r->ctrl = (struct mdgpu_sock_ctrl *)r->map;
	r->sq = (struct mdgpu_cmd *)(r->map + r->w.ring_offset);
	r->cq = (struct mdgpu_cpl *)(r->map + r->w.ring_offset +
				     MDGPU_RING_CQ_OFFSET(r->w.ring_entries));
	assert_true(r->ctrl->status & MDGPU_STATUS_READY);
	/* The memfds are sealed: a tenant cannot shrink them under us. */
	assert_int_equal(ftruncate(r->fds[MDGPU_SOCK_FD_RING], 0), -1);
	assert_int_equal(errno, EPERM);
}

static void raw_close(struct raw *r)
{
	munmap(r->map, r->w.ring_size);
	for (int i = 0; i < MDGPU_SOCK_NR_FDS; i++)
		close(r->fds[i]);
	close(r->fd);
}

/*
 * Submit one command, ring the eventfd, wait (polling) for it.  A
 * HOST_FUNC that succeeded holds the vGPU until the client answers: its
 * "function" returns at once (ctrl.host_done, uapi section 4).
 */
static struct mdgpu_cpl raw_call(struct raw *r, const struct mdgpu_cmd *c)
{
	uint32_t n = r->tail++, entries = r->w.ring_entries;
	uint64_t one = 1;

	memcpy(&r->sq[n & (entries - 1)], c, sizeof(*c));
	__atomic_store_n(&r->ctrl->sq_tail, r->tail, __ATOMIC_SEQ_CST);
	assert_int_equal(write(r->fds[MDGPU_SOCK_FD_DOORBELL], &one, 8), 8);
	for (int i = 0; i < 2000000; i++) {
		if (__atomic_load_n(&r->ctrl->sq_head, __ATOMIC_ACQUIRE) ==
		    r->tail)
			break;
		if (i > 1000)
			usleep(10);
	}
	assert_int_equal(r->ctrl->sq_head, r->tail);
	assert_int_equal(r->ctrl->fence, r->tail);
	if (c->opcode == MDGPU_OP_HOST_FUNC &&
	    !r->cq[n & (entries - 1)].status) {
		__atomic_store_n(&r->ctrl->host_done, n + 1, __ATOMIC_SEQ_CST);
		assert_int_equal(write(r->fds[MDGPU_SOCK_FD_DOORBELL], &one, 8),
				 8);
	}
	return r->cq[n & (entries - 1)];
}

static void test_bad_hellos(void **state)
{
	struct daemon *d = *state;
	struct mdgpu_sock_hello h;
	struct raw r;
	char c;

	h = good_hello();
	h.magic = 0;
	r.fd = raw_connect(d);
	assert_int_equal(raw_hello(&r, &h), 0);
	assert_int_equal(r.w.status, -EPROTO);
	assert_int_equal(read(r.fd, &c, 1), 0);	/* daemon hung up */
	close(r.fd);

	h = good_hello();
	h.abi_version = (MDGPU_ABI_MAJOR + 1) << 16;
	r.fd = raw_connect(d);
	assert_int_equal(raw_hello(&r, &h), 0);
	assert_int_equal(r.w.status, -EPROTONOSUPPORT);
	close(r.fd);

	h = good_hello();
	h.reserved = 1;
	r.fd = raw_connect(d);
	assert_int_equal(raw_hello(&r, &h), 0);
	assert_int_equal(r.w.status, -EINVAL);
	close(r.fd);

	h = good_hello();
	memset(h.type, 'x', sizeof(h.type));		/* no NUL */
	r.fd = raw_connect(d);
	assert_int_equal(raw_hello(&r, &h), 0);
	assert_int_equal(r.w.status, -EINVAL);
	close(r.fd);

	h = good_hello();
	h.ring_entries = 1U << 20;			/* above the max */
	r.fd = raw_connect(d);
	assert_int_equal(raw_hello(&r, &h), 0);
	assert_int_equal(r.w.status, -EINVAL);
	close(r.fd);

	/* Half a hello, then gone. */
	r.fd = raw_connect(d);
	assert_int_equal(send(r.fd, &h, 10, MSG_NOSIGNAL), 10);
	close(r.fd);

	/* Garbage after the handshake: disconnected, vGPU destroyed. */
	raw_open(d, &r);
	assert_int_equal(mdgpud_core_nr_vgpus(d->core), 1);
	assert_int_equal(send(r.fd, "junk", 4, MSG_NOSIGNAL), 4);
	assert_int_equal(read(r.fd, &c, 1), 0);
	for (int i = 0; i < 500 && mdgpud_core_nr_vgpus(d->core); i++)
		usleep(1000);
	assert_int_equal(mdgpud_core_nr_vgpus(d->core), 0);
	raw_close(&r);
}

static void test_bad_doorbell(void **state)
{
	struct daemon *d = *state;
	struct mdgpu_cmd c;
	struct mdgpu_cpl cpl;
	struct raw r;
	uint64_t one = 1;

	raw_open(d, &r);
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_NOP;
	cpl = raw_call(&r, &c);
	assert_int_equal(cpl.status, 0);
	assert_int_equal(cpl.seq, 0);
	/* tail - head > entries: refused, flagged, nothing executed. */
	__atomic_store_n(&r.ctrl->sq_tail, r.tail + r.w.ring_entries + 1,
			 __ATOMIC_SEQ_CST);
	assert_int_equal(write(r.fds[MDGPU_SOCK_FD_DOORBELL], &one, 8), 8);
	for (int i = 0; i < 1000 &&
	     !(r.ctrl->status & MDGPU_STATUS_RING_ERROR); i++)
		usleep(1000);
	assert_true(r.ctrl->status & MDGPU_STATUS_RING_ERROR);
	assert_int_equal(r.ctrl->error, -EINVAL);
	assert_int_equal(r.ctrl->sq_head, 1);
	/* A sane tail again: served. */
	__atomic_store_n(&r.ctrl->sq_tail, r.tail, __ATOMIC_SEQ_CST);
	cpl = raw_call(&r, &c);
	assert_int_equal(cpl.status, 0);
	assert_int_equal(cpl.seq, 1);
	raw_close(&r);
}

static const int allowed[] = { 0, -EINVAL, -ERANGE, -ENOENT, -ENOMEM,
			       -E2BIG, -EOPNOTSUPP, -ENOSPC, -EPERM };

static bool status_allowed(int s)
{
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (s == allowed[i])
			return true;
	return false;
}

static const uint8_t payload[MDGPU_OP_COUNT] = {
	[MDGPU_OP_MEM_ALLOC] = sizeof(struct mdgpu_cmd_alloc),
	[MDGPU_OP_MEM_FREE] = sizeof(struct mdgpu_cmd_free),
	[MDGPU_OP_MEMSET] = sizeof(struct mdgpu_cmd_memset),
	[MDGPU_OP_COPY] = sizeof(struct mdgpu_cmd_copy),
	[MDGPU_OP_MODULE_LOAD] = sizeof(struct mdgpu_cmd_module_load),
	[MDGPU_OP_MODULE_UNLOAD] = sizeof(struct mdgpu_cmd_module_unload),
	[MDGPU_OP_FUNC_GET] = sizeof(struct mdgpu_cmd_func_get),
	[MDGPU_OP_LAUNCH] = sizeof(struct mdgpu_cmd_launch),
	[MDGPU_OP_BUILTIN] = sizeof(struct mdgpu_cmd_builtin),
	[MDGPU_OP_EVENT_RECORD] = sizeof(struct mdgpu_cmd_event),
	[MDGPU_OP_EVENT_ELAPSED] = sizeof(struct mdgpu_cmd_event),
	[MDGPU_OP_EVENT_DESTROY] = sizeof(struct mdgpu_cmd_event),
	[MDGPU_OP_QUERY] = sizeof(struct mdgpu_cmd_query),
};

/* Random descriptors: every one completes, with a listed status. */
static void test_fuzz(void **state)
{
	struct daemon *d = *state;
	struct mdgpu_open_opts o = { .path = d->path, .type = "1g" };
	struct mdgpu *victim;
	mdgpu_devptr vbuf, mine;
	uint64_t vsum, sum, seed = 0x9e3779b97f4a7c15ULL;
	struct mdgpu_cmd c;
	struct mdgpu_cpl cpl;
	struct raw r;
	unsigned int ok = 0;

	assert_int_equal(mdgpu_open(&o, &victim), 0);
	assert_int_equal(mdgpu_mem_alloc(victim, 1 << 20, &vbuf), 0);
	assert_int_equal(mdgpu_fill_u32(victim, vbuf, 1 << 18, 0x600df00d), 0);
	assert_int_equal(mdgpu_checksum(victim, vbuf, 1 << 18, &vsum), 0);

	raw_open(d, &r);
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_MEM_ALLOC;
	c.alloc.size = 1 << 20;
	cpl = raw_call(&r, &c);
	assert_int_equal(cpl.status, 0);
	mine = cpl.result;

	for (int i = 0; i < 20000; i++) {
		uint64_t *w = (uint64_t *)&c;

		for (int k = 0; k < 8; k++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			w[k] = seed;
		}
		/* Mostly plausible headers, so the operands get exercised. */
		c.opcode = (uint16_t)(c.opcode % (MDGPU_OP_COUNT + 2));
		if (i % 4)
			c.flags &= MDGPU_CMD_F_MASK;
		if (i % 3)
			c.stream = 0;
		if (i % 2) {	/* aim at real addresses */
			c.raw[0] = 0;
			w[1] = (i & 8 ? mine : vbuf) + (w[1] & 0xfffff);
			w[2] &= 0x1fffff;
			if (c.opcode == MDGPU_OP_BUILTIN)
				w[2] = (i & 16 ? mine : vbuf) + (w[2] & 0xffffc);
		}
		if (i % 8 && c.opcode < MDGPU_OP_COUNT) {
			size_t used = payload[c.opcode];

			memset(c.raw + used, 0, sizeof(c.raw) - used);
			/* small lengths, in-range kinds/spaces now and then */
			if (i & 32)
				c.raw[8 + 8 * (i % 3)] &= 0x3;
		}
		if (c.opcode == MDGPU_OP_MEM_FREE && (w[1] == mine))
			continue;	/* keep `mine` for the end check */
		cpl = raw_call(&r, &c);
		if (!status_allowed(cpl.status))
			fail_msg("command %d opcode %u: status %d", i,
				 c.opcode, cpl.status);
		ok += cpl.status == 0;
	}
	print_message("fuzz: 20000 random commands, %u succeeded\n", ok);
	/* The victim's memory is untouched; the fuzzer's vGPU still works. */
	assert_int_equal(mdgpu_checksum(victim, vbuf, 1 << 18, &sum), 0);
	assert_int_equal(sum, vsum);
	memset(&c, 0, sizeof(c));
	c.opcode = MDGPU_OP_QUERY;
	c.query.what = MDGPU_QUERY_FB_USED;
	cpl = raw_call(&r, &c);
	assert_int_equal(cpl.status, 0);
	assert_true(cpl.result >= 1 << 20);
	raw_close(&r);
	for (int i = 0; i < 500 && mdgpud_core_nr_vgpus(d->core) > 1; i++)
		usleep(1000);
	assert_int_equal(mdgpud_core_fb_used(d->core), 1 << 20);
	mdgpu_close(victim);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bad_hellos, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_doorbell, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fuzz, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
