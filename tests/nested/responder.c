// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-responder: a TEST responder for the nested QEMU test.  It is not the
 * daemon: it stands in for mdgpud's kernel transport (which comes later) so
 * that a guest's commands travel the whole path
 *
 *   guest client -> mdgpu-guest.ko -> vfio-pci (inner QEMU) -> mdgpu.ko
 *   -> /dev/mdgpu DOORBELL event -> this program -> CQ + COMPLETE -> MSI.
 *
 * It registers one GPU on /dev/mdgpu, maps each vGPU's ring and aperture
 * with MDGPU_CTL_MMAP_OFFSET and executes a few commands:
 *   NOP                      completes with status 0
 *   QUERY ABI_VERSION        result MDGPU_ABI_VERSION; BACKEND: SIM
 *   BUILTIN FILL_U32         a0 = aperture byte offset, a1 count, a2 value
 *   BUILTIN CHECKSUM         a0 = aperture byte offset, a1 count
 * It has no device memory: the builtins address the aperture (a test
 * convention, not the ABI's).  Anything else completes with -EOPNOTSUPP;
 * an unknown opcode, flags or reserved bits with -EINVAL; a range outside the
 * aperture with -ERANGE.  Every value in the ring is untrusted.
 *
 * Test hooks, selected by the first 8 operand bytes of a NOP:
 *   "HOLD"  the command (and everything after it) is not completed until
 *           the vGPU is reset: lets the client test timeouts and reset;
 *   "LOSE"  the responder exits without completing it: the kernel then
 *           reports BACKEND_LOST to the guest.
 *
 * Usage: mdgpu-responder [READY-FILE]
 * Writes the parent name (e.g. "mdgpu0") to READY-FILE once registered.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "uapi/mdgpu.h"

#define RSP_MAX_VGPUS	16
#define RSP_HOOK_HOLD	"HOLD"
#define RSP_HOOK_LOSE	"LOSE"

struct rsp_vgpu {
	int used;
	uint32_t id;
	uint32_t entries;
	struct mdgpu_cmd *sq;		/* in the ring mapping */
	struct mdgpu_cpl *cq;
	void *ring;
	size_t ring_len;
	uint8_t *aper;
	uint64_t aper_len;
	uint32_t head;			/* next command to execute */
	uint64_t done;			/* completed since reset */
	uint64_t executed;		/* statistics */
	uint32_t gen;			/* generation (RESET, OPEN events) */
};

static struct rsp_vgpu rsp_vgpus[RSP_MAX_VGPUS];

static void rsp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void rsp_log(const char *fmt, ...)
{
	va_list ap;

	fputs("responder: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static struct rsp_vgpu *rsp_find(uint32_t id)
{
	for (int i = 0; i < RSP_MAX_VGPUS; i++)
		if (rsp_vgpus[i].used && rsp_vgpus[i].id == id)
			return &rsp_vgpus[i];
	return NULL;
}

static void rsp_unmap(struct rsp_vgpu *v)
{
	if (v->ring)
		munmap(v->ring, v->ring_len);
	if (v->aper)
		munmap(v->aper, v->aper_len);
	memset(v, 0, sizeof(*v));
}

static int rsp_create(int fd, const struct mdgpu_ctl_event *ev)
{
	uint32_t entries = ev->create.ring_entries;
	struct rsp_vgpu *v = rsp_find(ev->vgpu_id);
	long page = sysconf(_SC_PAGESIZE);
	int i;

	if (v)
		rsp_unmap(v);
	for (i = 0; i < RSP_MAX_VGPUS && rsp_vgpus[i].used; i++)
		;
	if (i == RSP_MAX_VGPUS) {
		rsp_log("vgpu %u: too many vGPUs", ev->vgpu_id);
		return -ENOSPC;
	}
	if (!entries || (entries & (entries - 1)) || entries > 65536) {
		rsp_log("vgpu %u: bad ring entries %u", ev->vgpu_id, entries);
		return -EINVAL;
	}
	v = &rsp_vgpus[i];
	v->id = ev->vgpu_id;
	v->entries = entries;
	v->ring_len = (MDGPU_RING_BYTES(entries) + page - 1) & ~(size_t)(page - 1);
	v->ring = mmap(NULL, v->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       MDGPU_CTL_MMAP_OFFSET(v->id, MDGPU_CTL_MMAP_RING));
	if (v->ring == MAP_FAILED) {
		rsp_log("vgpu %u: mmap ring: %s", v->id, strerror(errno));
		v->ring = NULL;
		return -errno;
	}
	v->aper_len = ev->create.aperture_size;
	if (v->aper_len) {
		v->aper = mmap(NULL, v->aper_len, PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd,
			       MDGPU_CTL_MMAP_OFFSET(v->id, MDGPU_CTL_MMAP_APERTURE));
		if (v->aper == MAP_FAILED) {
			rsp_log("vgpu %u: mmap aperture: %s", v->id,
				strerror(errno));
			v->aper = NULL;
			munmap(v->ring, v->ring_len);
			v->ring = NULL;
			return -errno;
		}
	}
	v->sq = (struct mdgpu_cmd *)((uint8_t *)v->ring + MDGPU_RING_SQ_OFFSET);
	v->cq = (struct mdgpu_cpl *)((uint8_t *)v->ring +
				     MDGPU_RING_CQ_OFFSET(entries));
	v->used = 1;
	rsp_log("vgpu %u: created, %u entries, aperture %llu bytes", v->id,
		entries, (unsigned long long)v->aper_len);
	return 0;
}

/* [off, off + count * 4) inside the aperture, without overflow. */
static int rsp_aper_range(const struct rsp_vgpu *v, uint64_t off, uint64_t count)
{
	if (count > v->aper_len / 4 || off > v->aper_len - count * 4 || off % 4)
		return -ERANGE;
	return 0;
}

static int32_t rsp_builtin(struct rsp_vgpu *v, const struct mdgpu_cmd_builtin *b,
			   __u64 *result)
{
	uint64_t off = b->arg[0], count = b->arg[1], sum = 0;
	uint32_t *w;

	switch (b->kernel) {
	case MDGPU_BUILTIN_FILL_U32:
		if (rsp_aper_range(v, off, count))
			return -ERANGE;
		w = (uint32_t *)(v->aper + off);
		for (uint64_t i = 0; i < count; i++)
			w[i] = (uint32_t)b->arg[2];
		return 0;
	case MDGPU_BUILTIN_CHECKSUM:
		if (rsp_aper_range(v, off, count))
			return -ERANGE;
		w = (uint32_t *)(v->aper + off);
		for (uint64_t i = 0; i < count; i++)
			sum += (uint64_t)w[i] * (2 * i + 1);
		*result = sum;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

/* Execute one command; returns 1 to hold it, 2 to lose the backend. */
static int rsp_exec(struct rsp_vgpu *v, const struct mdgpu_cmd *c,
		    struct mdgpu_cpl *cpl)
{
	cpl->status = 0;
	cpl->opcode = c->opcode;
	cpl->result = 0;
	cpl->result2 = 0;
	if (c->opcode >= MDGPU_OP_COUNT || (c->flags & ~MDGPU_CMD_F_MASK) ||
	    c->stream) {
		cpl->status = -EINVAL;
		return 0;
	}
	switch (c->opcode) {
	case MDGPU_OP_NOP:
		if (!memcmp(c->raw, RSP_HOOK_HOLD, sizeof(RSP_HOOK_HOLD)))
			return 1;
		if (!memcmp(c->raw, RSP_HOOK_LOSE, sizeof(RSP_HOOK_LOSE)))
			return 2;
		break;
	case MDGPU_OP_QUERY:
		if (c->query.what == MDGPU_QUERY_ABI_VERSION)
			cpl->result = MDGPU_ABI_VERSION;
		else if (c->query.what == MDGPU_QUERY_BACKEND)
			cpl->result = MDGPU_BACKEND_SIM;
		else
			cpl->status = -EINVAL;
		break;
	case MDGPU_OP_BUILTIN:
		cpl->status = rsp_builtin(v, &c->builtin, &cpl->result);
		break;
	default:
		cpl->status = -EOPNOTSUPP;
		break;
	}
	return 0;
}

/* Returns 1 when the backend is to be lost (test hook). */
static int rsp_doorbell(int fd, struct rsp_vgpu *v, uint32_t tail)
{
	struct mdgpu_ctl_complete done = { .vgpu_id = v->id, .gen = v->gen };
	uint32_t irq = 0, n = 0;
	int hook = 0;

	if (tail - v->head > v->entries) {
		rsp_log("vgpu %u: bad tail %u (head %u)", v->id, tail, v->head);
		return 0;
	}
	while (v->head != tail) {
		uint32_t slot = v->head & (v->entries - 1);
		struct mdgpu_cmd cmd;
		struct mdgpu_cpl cpl;

		/* One copy: the guest may rewrite the slot meanwhile. */
		memcpy(&cmd, &v->sq[slot], sizeof(cmd));
		hook = rsp_exec(v, &cmd, &cpl);
		if (hook)
			break;
		cpl.seq = v->done;
		memcpy(&v->cq[slot], &cpl, sizeof(cpl));
		if (cmd.flags & MDGPU_CMD_F_IRQ)
			irq = MDGPU_IRQ_COMPLETION;
		v->head++;
		v->done++;
		v->executed++;
		n++;
	}
	if (hook == 2) {
		rsp_log("vgpu %u: LOSE hook: exiting without completing", v->id);
		return 1;
	}
	if (hook == 1)
		rsp_log("vgpu %u: HOLD hook: holding command %u", v->id, v->head);
	if (!n)
		return 0;
	__sync_synchronize();	/* completions before the head moves */
	done.sq_head = v->head;
	done.fence = v->done;
	done.irq = irq;
	if (ioctl(fd, MDGPU_CTL_COMPLETE, &done))
		rsp_log("vgpu %u: COMPLETE: %s", v->id, strerror(errno));
	return 0;
}

/*
 * The first COMPLETE of a generation (head 0) tells mdgpu.ko the reset is
 * taken up: STATUS.RESET_PENDING clears, and the guest driver's RESET
 * returns.  -ESTALE: a newer reset is queued behind this one.
 */
static void rsp_ack(int fd, struct rsp_vgpu *v)
{
	struct mdgpu_ctl_complete c = { .vgpu_id = v->id, .gen = v->gen };

	if (ioctl(fd, MDGPU_CTL_COMPLETE, &c) && errno != ESTALE)
		rsp_log("vgpu %u: COMPLETE of generation %u: %s", v->id,
			v->gen, strerror(errno));
}

int main(int argc, char **argv)
{
	struct mdgpu_ctl_register reg = {
		.abi_version = MDGPU_ABI_VERSION,
		.fb_size = 8ULL << 30,
		.sm_count = 132,
	};
	struct mdgpu_ctl_event ev;
	struct rsp_vgpu *v;
	FILE *ready;
	ssize_t n;
	int fd;

	setvbuf(stderr, NULL, _IOLBF, 0);
	snprintf(reg.name, sizeof(reg.name), "mdgpu test responder");
	snprintf(reg.bus_id, sizeof(reg.bus_id), "test:0");
	fd = open(MDGPU_CTL_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		rsp_log("open %s: %s", MDGPU_CTL_DEVICE, strerror(errno));
		return 1;
	}
	if (ioctl(fd, MDGPU_CTL_REGISTER_GPU, &reg)) {
		rsp_log("REGISTER_GPU: %s", strerror(errno));
		return 1;
	}
	reg.parent_name[sizeof(reg.parent_name) - 1] = '\0';
	rsp_log("registered parent %s (id %u)", reg.parent_name, reg.parent_id);
	if (argc > 1) {
		ready = fopen(argv[1], "w");
		if (!ready || fprintf(ready, "%s\n", reg.parent_name) < 0 ||
		    fclose(ready)) {
			rsp_log("%s: %s", argv[1], strerror(errno));
			return 1;
		}
	}

	for (;;) {
		n = read(fd, &ev, sizeof(ev));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(ev)) {
			rsp_log("read event: %zd: %s", n, strerror(errno));
			return 1;
		}
		v = rsp_find(ev.vgpu_id);
		switch (ev.type) {
		case MDGPU_EV_CREATE:
			rsp_create(fd, &ev);
			break;
		case MDGPU_EV_REMOVE:
			if (v)
				rsp_unmap(v);
			rsp_log("vgpu %u: removed", ev.vgpu_id);
			break;
		case MDGPU_EV_OPEN:
		case MDGPU_EV_CLOSE:
			rsp_log("vgpu %u: %s", ev.vgpu_id,
				ev.type == MDGPU_EV_OPEN ? "opened" : "closed");
			if (v && ev.type == MDGPU_EV_OPEN) {
				v->gen = ev.gen.gen;
				rsp_ack(fd, v);
			}
			break;
		case MDGPU_EV_RESET:
			rsp_log("vgpu %u: reset, generation %u", ev.vgpu_id,
				ev.gen.gen);
			if (v) {
				v->head = 0;
				v->done = 0;
				v->gen = ev.gen.gen;
				rsp_ack(fd, v);
			}
			break;
		case MDGPU_EV_DOORBELL:
			if (!v) {
				rsp_log("vgpu %u: doorbell for unknown vGPU",
					ev.vgpu_id);
				break;
			}
			if (rsp_doorbell(fd, v, ev.doorbell.sq_tail)) {
				close(fd);
				return 0;
			}
			break;
		default:
			break;
		}
	}
}
