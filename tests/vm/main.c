// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: the in-guest test suite for mdgpu.ko.  It plays both sides
 * of the module: QEMU (raw VFIO ioctls on an mdev: container, type1 IOMMU,
 * group, device fd, regions, mmap, interrupts) and a minimal daemon on
 * /dev/mdgpu (REGISTER_GPU, events, COMPLETE, DMA, mmap).  Expected values
 * come from include/uapi/mdgpu.h, mdev-types/mdgpu-types.def and
 * Documentation/kmod.md, never from the module's code.  The tests live in
 * t-*.c, one concern per file, and run in link order (vm.mk).
 * Documentation/testing-vm.md lists them.
 *
 *   mdgpu-vmtest [TEST]   run the suite, or one test
 *   mdgpu-vmtest --hold   the outer guest's daemon of check-vm-qemu
 */
#include "vgpu.h"

#include <signal.h>

/* ---------------------------------------------------------------- */
/* --hold: the outer guest's daemon for the nested QEMU test           */
/* ---------------------------------------------------------------- */

static volatile sig_atomic_t hold_stop;

static void hold_signal(int sig)
{
	(void)sig;
	hold_stop = 1;
}

/* Execute (NOP only) and complete the commands from head to tail. */
static int hold_doorbell(struct fx *f, volatile uint8_t *ring, uint32_t entries,
			 uint32_t *head, uint64_t *fence, uint32_t tail)
{
	uint32_t irq = 0;
	int bad = 0;

	for (; *head != tail; (*head)++, (*fence)++) {
		volatile struct mdgpu_cmd *c = (volatile void *)(ring +
			(uint64_t)(*head % entries) * MDGPU_CMD_SIZE);
		volatile struct mdgpu_cpl *q = (volatile void *)(ring +
			MDGPU_RING_CQ_OFFSET(entries) +
			(uint64_t)(*head % entries) * MDGPU_CPL_SIZE);
		int ok = c->opcode == MDGPU_OP_NOP && !c->stream &&
			 !(c->flags & ~MDGPU_CMD_F_MASK);

		q->seq = *head;
		q->opcode = c->opcode;
		q->result = q->result2 = 0;
		q->status = ok ? 0 : -EINVAL;
		bad += !ok;
		if (c->flags & MDGPU_CMD_F_IRQ)
			irq = MDGPU_IRQ_COMPLETION;
	}
	return complete(f, *head, *fence, 0, irq) ? -1 : bad;
}

static int hold(struct fx *f)
{
	struct sigaction sa = { .sa_handler = hold_signal };
	struct mdgpu_ctl_event ev;
	volatile uint8_t *ring = NULL;
	uint32_t entries = 0, head = 0, doorbells = 0, bad = 0;
	uint64_t fence = 0;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa, NULL);
	r = module_loaded() ? 0 : module_load();
	if (r) {
		printf("FAIL: qemu-daemon: load mdgpu.ko: %s\n", strerror(-r));
		return 1;
	}
	r = daemon_register(f);
	if (!r)
		r = mdev_create(f, TYPE_1G, UUID0);
	if (!r)
		r = ev_wait(f, MDGPU_EV_CREATE, ~0U, &ev, EV_TIMEOUT_MS);
	if (r) {
		printf("FAIL: qemu-daemon: setup: %s\n", strerror(-r));
		return 1;
	}
	f->vgpu = ev.vgpu_id;
	entries = ev.create.ring_entries;
	ring = ctl_map(f, MDGPU_CTL_MMAP_RING, MDGPU_RING_BYTES(entries));
	printf("hold: ready %s vgpu %u ring %s\n", UUID0, f->vgpu,
	       ring ? "mapped" : "NOT mapped");
	while (!hold_stop) {
		struct pollfd p = { .fd = f->ctl, .events = POLLIN };

		if (poll(&p, 1, 500) <= 0)
			continue;
		if (read(f->ctl, &ev, sizeof(ev)) != sizeof(ev))
			continue;
		printf("hold: event %u vgpu %u\n", ev.type, ev.vgpu_id);
		if (ev.type == MDGPU_EV_RESET)
			head = 0, fence = 0;
		/* Take up a reset or a new user: the generation's first
		 * COMPLETE (head 0) ends the kernel's RESET_PENDING. */
		if ((ev.type == MDGPU_EV_RESET || ev.type == MDGPU_EV_OPEN) &&
		    ev.vgpu_id == f->vgpu)
			complete_gen(f, ev.gen.gen, 0, 0, 0, 0);
		if (ev.type != MDGPU_EV_DOORBELL || ev.vgpu_id != f->vgpu || !ring)
			continue;
		doorbells++;
		r = hold_doorbell(f, ring, entries, &head, &fence,
				  ev.doorbell.sq_tail);
		bad += r != 0;
		printf("hold: doorbell tail %u, completed to %u (%d)\n",
		       ev.doorbell.sq_tail, head, r);
	}
	if (doorbells && !bad)
		printf("PASS: qemu-daemon-doorbell\n");
	else
		printf("FAIL: qemu-daemon-doorbell: %u doorbells, %u bad\n",
		       doorbells, bad);
	vt_teardown(f, FX_MDEV);
	return doorbells && !bad ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--hold"))
		return hold(&fx);
	return vt_main(argc, argv, &fx);
}
