// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-pcitest: runs in the inner guest of the nested QEMU test
 * (Documentation/testing-vm.md, "check-vm-qemu").  QEMU's own vfio-pci
 * (-device vfio-pci,sysfsdev=...) exposes the mdgpu vGPU to this guest;
 * with no driver bound, the program checks what the guest kernel and BIOS
 * see (IDs, BARs), touches the BARs through sysfs resource files, and
 * submits one NOP command through the ring to the outer guest's mini
 * daemon (mdgpu-vmtest --hold), which completes it.
 * Prints one "PASS: qemu-<name>" / "FAIL: qemu-<name>: why" line per check.
 */
#include "include/uapi/mdgpu.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int failed;
static char dev[300];

static void check(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#include <stdarg.h>
static void check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS: qemu-%s\n", name);
		return;
	}
	failed++;
	printf("FAIL: qemu-%s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static unsigned long attr(const char *name)
{
	char p[400], b[64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dev, name);
	f = fopen(p, "r");
	if (!f || !fgets(b, sizeof(b), f))
		b[0] = 0;
	if (f)
		fclose(f);
	return strtoul(b, NULL, 0);
}

/* Start, size and flags of BAR n from the sysfs resource file. */
static int bar(int n, uint64_t *size, uint64_t *flags)
{
	char p[400];
	unsigned long long s, e, fl;
	FILE *f;
	int i, ok = 0;

	snprintf(p, sizeof(p), "%s/resource", dev);
	f = fopen(p, "r");
	for (i = 0; f && i <= n; i++)
		ok = fscanf(f, "%llx %llx %llx", &s, &e, &fl) == 3;
	if (f)
		fclose(f);
	if (!ok)
		return -1;
	*size = s || e ? e - s + 1 : 0;
	*flags = fl;
	return 0;
}

static volatile void *map_bar(int n, size_t size)
{
	char p[400];
	int fd;
	void *m;

	snprintf(p, sizeof(p), "%s/resource%d", dev, n);
	fd = open(p, O_RDWR | O_SYNC);
	if (fd < 0)
		return NULL;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

static int find_device(void)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(dev, sizeof(dev), "/sys/bus/pci/devices/%s", e->d_name);
		if (attr("vendor") == MDGPU_PCI_VENDOR_ID &&
		    attr("device") == MDGPU_PCI_DEVICE_ID) {
			closedir(d);
			return 0;
		}
	}
	if (d)
		closedir(d);
	return -1;
}

int main(void)
{
	uint64_t sz[6] = { 0 }, fl[6] = { 0 };
	volatile uint32_t *regs, *ring;
	volatile uint8_t *ap;
	char p[400];
	int fd, i;
	uint16_t cmd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (find_device()) {
		check(0, "device-present", "no %04x:%04x on the guest's PCI bus",
		      MDGPU_PCI_VENDOR_ID, MDGPU_PCI_DEVICE_ID);
		return 1;
	}
	check(1, "device-present", "%s", "");
	check(attr("class") == MDGPU_PCI_CLASS &&
	      attr("subsystem_vendor") == MDGPU_PCI_SUBSYS_VENDOR_ID &&
	      attr("subsystem_device") == MDGPU_PCI_SUBSYS_ID &&
	      attr("revision") == MDGPU_PCI_REVISION, "ids",
	      "class 0x%lx subsys %lx:%lx rev %lx", attr("class"),
	      attr("subsystem_vendor"), attr("subsystem_device"),
	      attr("revision"));
	for (i = 0; i < 6; i++)
		bar(i, &sz[i], &fl[i]);
	check(sz[0] == MDGPU_REGS_SIZE && sz[2] >= MDGPU_RING_BYTES(256) &&
	      sz[4] > 0 && !sz[1] && !sz[3] && !sz[5] &&
	      (fl[4] & 0x2000 /* IORESOURCE_PREFETCH */), "bars",
	      "sizes %llx %llx %llx flags4 %llx", (unsigned long long)sz[0],
	      (unsigned long long)sz[2], (unsigned long long)sz[4],
	      (unsigned long long)fl[4]);

	/* No driver is bound: turn on memory decoding ourselves. */
	snprintf(p, sizeof(p), "%s/config", dev);
	fd = open(p, O_RDWR);
	if (fd < 0 || pread(fd, &cmd, 2, 4) != 2) {
		check(0, "config", "%s: %s", p, strerror(errno));
		return 1;
	}
	cmd |= 0x6;	/* MEMORY | MASTER */
	check(pwrite(fd, &cmd, 2, 4) == 2, "config-command", "%s", strerror(errno));
	close(fd);

	regs = map_bar(0, sz[0]);
	ring = map_bar(2, sz[2]);
	ap = map_bar(4, sz[4]);
	if (!regs || !ring || !ap) {
		check(0, "bar-mmap", "resource mmap failed: %s", strerror(errno));
		return 1;
	}
	check(regs[MDGPU_REG_MAGIC / 4] == MDGPU_MAGIC &&
	      regs[MDGPU_REG_VERSION / 4] == MDGPU_ABI_VERSION, "bar0-identity",
	      "MAGIC 0x%x VERSION 0x%x", regs[MDGPU_REG_MAGIC / 4],
	      regs[MDGPU_REG_VERSION / 4]);
	regs[MDGPU_REG_SCRATCH / 4] = 0xc001d00d;
	check(regs[MDGPU_REG_SCRATCH / 4] == 0xc001d00d, "bar0-scratch",
	      "SCRATCH 0x%x", regs[MDGPU_REG_SCRATCH / 4]);
	check(regs[MDGPU_REG_STATUS / 4] & MDGPU_STATUS_READY, "status-ready",
	      "STATUS 0x%x", regs[MDGPU_REG_STATUS / 4]);
	ap[sz[4] - 1] = 0x5a;
	ap[0] = 0xa5;
	check(ap[0] == 0xa5 && ap[sz[4] - 1] == 0x5a, "bar4-aperture", "%s",
	      "readback differs");

	/* One NOP through the ring; the outer daemon completes it. */
	{
		uint32_t entries = regs[MDGPU_REG_RING_ENTRIES / 4];
		volatile struct mdgpu_cmd *sq = (volatile void *)ring;
		volatile struct mdgpu_cpl *cq = (volatile void *)((volatile uint8_t *)ring +
						MDGPU_RING_CQ_OFFSET(entries));
		struct timespec t = { 0, 50 * 1000 * 1000 };

		sq[0].opcode = MDGPU_OP_NOP;
		sq[0].flags = MDGPU_CMD_F_IRQ;
		sq[0].stream = 0;
		cq[0].status = -1;
		regs[MDGPU_REG_IRQ_MASK / 4] = MDGPU_IRQ_ALL;
		regs[MDGPU_REG_CONTROL / 4] = MDGPU_CONTROL_ENABLE;
		regs[MDGPU_REG_SQ_TAIL / 4] = 1;
		for (i = 0; i < 600 && regs[MDGPU_REG_SQ_HEAD / 4] != 1; i++)
			nanosleep(&t, NULL);
		check(regs[MDGPU_REG_SQ_HEAD / 4] == 1 &&
		      regs[MDGPU_REG_FENCE_LO / 4] == 1, "ring-nop",
		      "SQ_HEAD %u FENCE %u ERROR %u after %d ms",
		      regs[MDGPU_REG_SQ_HEAD / 4], regs[MDGPU_REG_FENCE_LO / 4],
		      regs[MDGPU_REG_ERROR / 4], i * 50);
		check(cq[0].status == 0 && cq[0].opcode == MDGPU_OP_NOP &&
		      cq[0].seq == 0, "ring-completion", "cq status %d opcode %u",
		      cq[0].status, cq[0].opcode);
		check(regs[MDGPU_REG_IRQ_STATUS / 4] & MDGPU_IRQ_COMPLETION,
		      "irq-status", "IRQ_STATUS 0x%x", regs[MDGPU_REG_IRQ_STATUS / 4]);
	}
	return failed ? 1 : 0;
}
