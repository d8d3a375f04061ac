/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vgpu.h: what the files of mdgpu-vmtest share: the fixture state, the
 * constants of the test setup, and the helpers that play QEMU (VFIO) and
 * the mini daemon (/dev/mdgpu).  Documentation/testing-vm.md.
 */
#ifndef MDGPU_VMTEST_VGPU_H
#define MDGPU_VMTEST_VGPU_H

#include "vmtest.h"
#include "include/uapi/mdgpu.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/vfio.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define MODULE_PATH	"/lib/modules/mdgpu.ko"
#define GIB		(1ULL << 30)
#define MIB		(1ULL << 20)
#define FB_SIZE		(16 * GIB)	/* what the mini daemon registers */
#define SM_COUNT	132
#define BUS_ID		"0000:65:00.0"	/* without a PCI stand-in */
/* QEMU's `edu` device (-device edu, run-vm.sh): the stand-in GPU. */
#define EDU_VENDOR	0x1234
#define EDU_DEVICE	0x11e8
#define GPU_NAME	"mdgpu-vmtest GPU"
#define UUID0		"6d677075-0000-4000-8000-000000000001"
#define UUID1		"6d677075-0000-4000-8000-000000000002"
#define UUID2		"6d677075-0000-4000-8000-000000000003"
#define TYPE_1G		"mdgpu-1g"
#define DMA_IOVA	0x100000ULL	/* guest buffer mapped by the fixture */
#define DMA_SIZE	(4 * MIB)	/* > the module's 1 MiB DMA chunk */
#define UNMAPPED_IOVA	0x40000000ULL
#define EV_TIMEOUT_MS	2000
#define NO_EV_MS	300	/* how long "no event / no interrupt" waits */

struct vtype {
	unsigned int id;
	const char *name;
	unsigned long long fb_mib, fb_divisor;
	unsigned int max_instances, default_weight, sm_percent, aperture_mib;
};

enum level { FX_NONE, FX_MODULE, FX_PARENT, FX_MDEV, FX_VFIO };

struct region {
	uint64_t offset, size;
	uint32_t flags;
};

struct fx {
	int ctl;			/* /dev/mdgpu, the mini daemon */
	struct mdgpu_ctl_register reg;
	int registered;
	char parent[MDGPU_NAME_LEN];
	int mdev;			/* UUID0 exists */
	uint32_t vgpu;
	uint32_t gen;			/* last generation vgpu_gen() read */
	int container, group, dev;
	void *dma;			/* guest memory at DMA_IOVA */
	struct region rg[VFIO_PCI_NUM_REGIONS];
};

/* The type table, as data, from the same file the module reads (vgpu.c). */
extern const struct vtype vtypes[];
extern const size_t nr_vtypes;
#define NR_VTYPES nr_vtypes

extern struct fx fx;

/* type table, UUIDs, time */
const struct vtype *vtype_by_name(const char *name);
uint64_t vtype_quota(const struct vtype *t);
void uuid_bytes(const char *str, uint8_t out[16]);
int uuid_is(const uint8_t got[16], const char *str);
int uuid_matches(const uint8_t got[16], const char *str);
void msleep(unsigned int ms);

/* sysfs, mdev, processes */
int path_exists(const char *p);
int sysfs_write(const char *path, const char *s);
int sysfs_read(const char *path, char *buf, size_t len);
long long sysfs_num(const char *path);
const char *type_path(const char *parent, const char *type, const char *attr);
const char *mdev_path(const char *uuid, const char *attr);
const char *parent_knob(const struct fx *f, const char *knob);
const char *gpu_pci(void);
const char *gpu_bus_id(void);
long long avail(struct fx *f, const char *type);
int mdev_create(struct fx *f, const char *type, const char *uuid);
int mdev_remove(const char *uuid);
long long stat_value(const char *uuid, const char *key);
int run_cmd(const char *cmd, char *out, size_t len);

/* the module */
int module_loaded(void);
int module_load(void);
int module_unload(void);

/* the mini daemon on /dev/mdgpu */
void reg_init(struct mdgpu_ctl_register *r);
int daemon_register(struct fx *f);
int ev_wait(struct fx *f, uint32_t type, uint32_t vgpu,
	    struct mdgpu_ctl_event *out, int timeout_ms);
int ev_next(struct fx *f, struct mdgpu_ctl_event *ev, int timeout_ms);
void ev_drain(struct fx *f);
uint32_t vgpu_gen(struct fx *f);
int complete(struct fx *f, uint32_t head, uint64_t fence, uint64_t fb_used,
	     uint32_t irq);
int complete_gen(struct fx *f, uint32_t gen, uint32_t head, uint64_t fence,
		 uint64_t fb_used, uint32_t irq);
int context_event(struct fx *f, uint32_t event);
int dma(struct fx *f, int write, uint64_t iova, void *buf, uint64_t len);
int dma_gen(struct fx *f, uint32_t gen, int write, uint64_t iova, void *buf,
	    uint64_t len);
void *ctl_map(struct fx *f, unsigned int region, size_t len);

/* the VFIO user, as QEMU */
void vfio_open(struct fx *f);
void vfio_close(struct fx *f);
ssize_t rg_rw(struct fx *f, int idx, uint64_t off, void *buf, size_t len,
	      int write);
uint32_t rd32(struct fx *f, uint32_t off);
void wr32(struct fx *f, uint32_t off, uint32_t v);
uint32_t cfg_rd(struct fx *f, uint32_t off, size_t size);
void cfg_wr(struct fx *f, uint32_t off, size_t size, uint32_t v);
void *bar_map(struct fx *f, int bar);
int set_irq_fd(struct fx *f, unsigned int index, int efd);
int set_irqs_raw(struct fx *f, uint32_t index, uint32_t start,
		 uint32_t count, uint32_t flags, uint32_t argsz, int efd);
int set_irq_none(struct fx *f, unsigned int index, uint32_t action,
		 uint32_t count);
int fired(int efd, int ms);
int msi_on(struct fx *f);

#endif
