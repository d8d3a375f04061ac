/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mdgpu.h - internal interfaces of mdgpu.ko, shared by the files of kmod/.
 *
 * Lock order (outermost first), asserted with lockdep_assert_held():
 *
 *   device_lock(PCI dev)  the driver core's, held around the PCI bus
 *                         notifier (mdgpu_pci.c): never taken by mdgpu
 *   mdgpu_lock            global mutex: mdgpu_parents list, parent ids,
 *                         parent ownership changes (register/release),
 *                         parent removal (unregister, PCI notifier, exit)
 *   mdgpu_parent.lock     mutex: the parent's vGPU list and quota, dying,
 *                         policy, timeslice_us
 *   mdgpu_vgpu.open_sem   rw_semaphore: vGPU open state; DMA holds it for
 *                         reading so close_device, and the COMPLETE that
 *                         ends a reset, wait for DMA to finish
 *   mdgpu_vgpu.lock       mutex: registers, config space, IRQ state, knobs,
 *                         statistics, the generation
 *   mdgpu_ev_lock         global spinlock: every file's event queue and
 *                         every parent's owner pointer
 *
 * mdgpu_parent.owner is written with both parent->lock and mdgpu_ev_lock
 * held, so either lock is enough to read it.
 *
 * The control channel finds vGPUs by id in mdgpu_vgpus (an allocating
 * xarray, its own spinlock) and pins the one it found with
 * mdgpu_vgpu_get(), a reference that .remove waits for (ctl_refs).
 */
#ifndef MDGPU_KMOD_H
#define MDGPU_KMOD_H

#include <linux/completion.h>
#include <linux/device.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mdev.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/vfio.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include <uapi/mdgpu.h>

#define MDGPU_DRV_NAME		"mdgpu"

/* ---- type table (mdgpu_types.c) ---------------------------------------- */

/* Index of each row of mdev-types/mdgpu-types.def, plus the row count. */
enum mdgpu_type_index {
#define MDGPU_TYPE(_id, ...) MDGPU_TYPE_INDEX_##_id,
#include "mdev-types/mdgpu-types.def"
#undef MDGPU_TYPE
	MDGPU_NR_TYPES
};

struct mdgpu_type_info {
	u32 id;
	const char *name;
	u32 fb_mib;
	u32 fb_divisor;
	u32 max_instances;
	u32 default_weight;
	u32 sm_percent;
	u32 aperture_mib;
	const char *description;
};

extern const struct mdgpu_type_info mdgpu_type_table[MDGPU_NR_TYPES];

/* One mdev type of one parent: the mdev core owns the kobject inside. */
struct mdgpu_type {
	struct mdev_type mtype;
	const struct mdgpu_type_info *info;
};

struct mdgpu_parent;
struct mdgpu_vgpu;
struct pci_dev;
u64 mdgpu_type_fb_quota(const struct mdgpu_type_info *info, u64 fb_size);
unsigned int mdgpu_type_available(struct mdgpu_parent *parent,
				  const struct mdgpu_type_info *info);
unsigned int mdgpu_mdev_get_available(struct mdev_type *mtype);
ssize_t mdgpu_mdev_show_description(struct mdev_type *mtype, char *buf);
int mdgpu_types_check(void);

/* ---- shared memory of BAR2/BAR4 (mdgpu_mem.c) -------------------------- */

/*
 * vmalloc_user() memory shared by the VFIO user's, the daemon's and the
 * worker's mappings.  Each mapping, and each file of mdgpu_mem_file(),
 * holds a reference, so the pages outlive the vGPU if a process keeps its
 * mapping or file.  No lock: vaddr and size are set once.
 */
struct mdgpu_mem {
	struct kref ref;
	void *vaddr;
	size_t size;
};

struct mdgpu_mem *mdgpu_mem_alloc(size_t size);
void mdgpu_mem_put(struct mdgpu_mem *mem);
int mdgpu_mem_mmap(struct mdgpu_mem *mem, struct vm_area_struct *vma,
		   u64 offset);
ssize_t mdgpu_mem_rw(struct mdgpu_mem *mem, char __user *ubuf, size_t count,
		     u64 offset, bool write);
struct file *mdgpu_mem_file(struct mdgpu_mem *mem, const char *name);

/* ---- events and the control channel (mdgpu_ctl.c) ---------------------- */

/* Event slots embedded in each vGPU, indexed by enum mdgpu_ctl_event_type. */
#define MDGPU_EV_SLOTS		(MDGPU_EV_POLICY + 1)

struct mdgpu_event {
	struct list_head node;		/* in owner's events, mdgpu_ev_lock */
	bool dynamic;			/* kfree()d once read or dropped */
	struct mdgpu_ctl_event ev;	/* payload, under mdgpu_ev_lock */
};

/* One open file of /dev/mdgpu: a daemon. */
struct mdgpu_ctl_file {
	struct list_head events;	/* struct mdgpu_event, mdgpu_ev_lock */
	wait_queue_head_t wait;
};

extern spinlock_t mdgpu_ev_lock;

void mdgpu_event_init(struct mdgpu_event *e);
void mdgpu_event_post(struct mdgpu_parent *parent, struct mdgpu_event *e,
		      const struct mdgpu_ctl_event *ev);
void mdgpu_event_cancel(struct mdgpu_event *e);
bool mdgpu_parent_owned_by(struct mdgpu_parent *parent,
			   struct mdgpu_ctl_file *file);
int mdgpu_ctl_init(void);
void mdgpu_ctl_exit(void);

/* ---- parents (mdgpu_parent.c) ------------------------------------------- */

struct mdgpu_parent {
	/* mdgpu<id>, class mdgpu, the knobs; a child of pdev if any */
	struct device dev;		/* refcounted: frees the parent */
	/*
	 * The GPU's PCI device, NULL without MDGPU_REGISTER_F_PCI: then dev
	 * is the mdev parent.  A reference, dropped when dev is released.
	 */
	struct pci_dev *pdev;
	struct mdev_parent mparent;
	struct list_head node;		/* mdgpu_parents, under mdgpu_lock */
	u32 id;
	char gpu_name[MDGPU_NAME_LEN];
	char bus_id[MDGPU_NAME_LEN];
	u64 fb_size;
	u32 sm_count;

	struct mutex lock;		/* see the lock order above */
	struct mdgpu_ctl_file *owner;	/* NULL while the daemon is lost */
	struct list_head vgpus;		/* every vGPU holding a quota */
	bool dying;			/* being unregistered: no new vGPU */
	u32 policy;			/* enum mdgpu_policy */
	u32 timeslice_us;
	struct mdgpu_event policy_ev;

	struct mdgpu_type types[MDGPU_NR_TYPES];
	struct mdev_type *type_ptrs[MDGPU_NR_TYPES];
};

extern struct mutex mdgpu_lock;
extern struct list_head mdgpu_parents;
extern struct class *mdgpu_class;
extern struct mdev_driver mdgpu_mdev_driver;

static inline struct mdgpu_parent *mdgpu_parent_of_mtype(struct mdev_type *t)
{
	return container_of(t->parent, struct mdgpu_parent, mparent);
}

int mdgpu_parent_register(struct mdgpu_ctl_file *file,
			  struct mdgpu_ctl_register *req);
struct mdgpu_parent *mdgpu_parent_find_pci(struct pci_dev *pdev);
void mdgpu_parent_kill(struct mdgpu_parent *parent);
int mdgpu_parent_unregister(struct mdgpu_ctl_file *file, u32 parent_id);
void mdgpu_parent_owner_lost(struct mdgpu_ctl_file *file);
void mdgpu_parent_post_policy(struct mdgpu_parent *parent);
int mdgpu_parent_attach_vgpu(struct mdgpu_parent *parent,
			     struct mdgpu_vgpu *vgpu);
void mdgpu_parent_detach_vgpu(struct mdgpu_parent *parent,
			      struct mdgpu_vgpu *vgpu);
void mdgpu_parents_destroy(void);

/* ---- the GPU's PCI device as parent (mdgpu_pci.c) ---------------------- */

int mdgpu_pci_canonical(char *bus_id, size_t size);
int mdgpu_pci_get(const char *bus_id, struct pci_dev **out);
int mdgpu_pci_name_types(struct mdgpu_parent *parent);
int mdgpu_pci_init(void);
void mdgpu_pci_exit(void);

/* ---- vGPUs (mdgpu_vgpu.c: vfio_device_ops and mdev_driver) -------------- */

#define MDGPU_CONFIG_SIZE	256
#define MDGPU_NR_REGS		(MDGPU_REG_LAST / 4 + 1)

struct mdgpu_vgpu_stats {
	u64 doorbells;			/* SQ_TAIL writes taken (BAR0) */
	u64 shadow_doorbells;		/* tails taken by COMPLETE_TAIL */
	u64 completions;
	u64 interrupts;
	u64 bad_accesses;
	u64 dma_bytes;
	u64 resets;
	u64 hangs;			/* MDGPU_VGPU_EVENT_HANG received */
	u64 contexts_lost;		/* MDGPU_VGPU_EVENT_LOST received */
	u64 bar0_reads;			/* trapped BAR0 accesses: VM exits */
	u64 bar0_writes;
};

struct mdgpu_vgpu {
	struct vfio_device vdev;	/* first: vfio_alloc_device() */
	struct mdgpu_parent *parent;	/* holds a reference on parent->dev */
	const struct mdgpu_type_info *type;
	struct mdev_device *mdev;
	struct list_head node;		/* parent->vgpus, parent->lock */
	u32 id;				/* control-channel id */
	bool published;			/* in mdgpu_vgpus, parent->lock */
	refcount_t ctl_refs;		/* 1 while published + ctl users */
	struct completion ctl_done;	/* ctl_refs reached 0 */
	struct mdgpu_event *remove_ev;	/* preallocated REMOVE event */

	u64 fb_quota;
	u32 ring_entries;
	u32 ring_size;			/* BAR2 bytes, power of two */
	u32 aperture_size;		/* BAR4 bytes, power of two */
	struct mdgpu_mem *ring;
	struct mdgpu_mem *aperture;

	struct rw_semaphore open_sem;
	bool open;			/* open_sem written and lock held */

	struct mutex lock;		/* everything below */
	/*
	 * Generation: bumped by every reset and every open; COMPLETE and
	 * DMA of another generation are refused (-ESTALE).
	 */
	u32 gen;
	u32 regs[MDGPU_NR_REGS];
	u8 config[MDGPU_CONFIG_SIZE];
	u8 config_wmask[MDGPU_CONFIG_SIZE];
	struct eventfd_ctx *intx_trigger;
	struct eventfd_ctx *msi_trigger;
	struct eventfd_ctx *req_trigger;	/* asks the user to release */
	bool intx_masked;
	u32 weight;
	u32 cap;
	u32 priority;
	struct mdgpu_vgpu_stats stats;

	struct mdgpu_event ev[MDGPU_EV_SLOTS];
};

struct mdgpu_vgpu *mdgpu_vgpu_get(u32 id);
void mdgpu_vgpu_put(struct mdgpu_vgpu *vgpu);
void mdgpu_vgpu_post(struct mdgpu_vgpu *vgpu, u32 type);
void mdgpu_vgpu_reset(struct mdgpu_vgpu *vgpu);
void mdgpu_vgpu_backend_lost(struct mdgpu_vgpu *vgpu);
void mdgpu_vgpu_backend_back(struct mdgpu_vgpu *vgpu);
int mdgpu_vgpu_context_event(struct mdgpu_vgpu *vgpu, u32 event);

/* ---- PCI config space (mdgpu_cfg.c) ------------------------------------- */

void mdgpu_cfg_init(struct mdgpu_vgpu *vgpu);
int mdgpu_cfg_access(struct mdgpu_vgpu *vgpu, u32 off, u32 size, u32 *val,
		     bool write);

/* ---- BAR0 registers (mdgpu_regs.c) -------------------------------------- */

void mdgpu_regs_init(struct mdgpu_vgpu *vgpu);
void mdgpu_regs_reset(struct mdgpu_vgpu *vgpu);
int mdgpu_regs_access(struct mdgpu_vgpu *vgpu, u64 off, size_t size,
		      u32 *val, bool write);
int mdgpu_regs_complete(struct mdgpu_vgpu *vgpu,
			const struct mdgpu_ctl_complete *c, bool dma_idle);
int mdgpu_regs_complete_tail(struct mdgpu_vgpu *vgpu,
			     const struct mdgpu_ctl_complete_tail *ct,
			     bool dma_idle);
bool mdgpu_regs_reset_pending(struct mdgpu_vgpu *vgpu);
void mdgpu_regs_mirror(struct mdgpu_vgpu *vgpu);

/*
 * The shadow doorbell in BAR2 (ABI 1.13): the VFIO user writes sq_tail,
 * the daemon daemon_polling; the module only resets them.
 */
static inline struct mdgpu_ring_shadow *
mdgpu_vgpu_shadow(struct mdgpu_vgpu *vgpu)
{
	return vgpu->ring->vaddr + MDGPU_RING_SHADOW_OFFSET(vgpu->ring_entries);
}

/* Index in vgpu->regs of the register at BAR0 offset @off. */
#define MDGPU_REG(off)		((off) / 4)

/*
 * mdgpu_reg_read(), mdgpu_reg_write(), mdgpu_reg_update() - the module's
 * own access to the stored value of register @reg (an MDGPU_REG_* offset):
 * no access-kind check, no write side effect.  Guest accesses go through
 * mdgpu_regs_access().  Caller must hold vgpu->lock.
 */
static inline u32 mdgpu_reg_read(struct mdgpu_vgpu *vgpu, u32 reg)
{
	lockdep_assert_held(&vgpu->lock);

	return vgpu->regs[MDGPU_REG(reg)];
}

static inline void mdgpu_reg_write(struct mdgpu_vgpu *vgpu, u32 reg, u32 val)
{
	lockdep_assert_held(&vgpu->lock);

	vgpu->regs[MDGPU_REG(reg)] = val;
	mdgpu_regs_mirror(vgpu);
}

/* Clear the bits of @clear, then set those of @set. */
static inline void mdgpu_reg_update(struct mdgpu_vgpu *vgpu, u32 reg,
				    u32 clear, u32 set)
{
	u32 *r = &vgpu->regs[MDGPU_REG(reg)];

	lockdep_assert_held(&vgpu->lock);

	*r = (*r & ~clear) | set;
	mdgpu_regs_mirror(vgpu);
}

/* ---- interrupts (mdgpu_irq.c) ------------------------------------------- */

void mdgpu_irq_raise(struct mdgpu_vgpu *vgpu, u32 bits);
void mdgpu_irq_update(struct mdgpu_vgpu *vgpu);
int mdgpu_irq_get_info(struct mdgpu_vgpu *vgpu, struct vfio_irq_info *info);
int mdgpu_irq_set(struct mdgpu_vgpu *vgpu, struct vfio_irq_set *hdr,
		  void __user *data);
void mdgpu_irq_release(struct mdgpu_vgpu *vgpu);
bool mdgpu_irq_request(struct mdgpu_vgpu *vgpu);

/* ---- DMA (mdgpu_dma.c) -------------------------------------------------- */

int mdgpu_dma_rw(struct mdgpu_vgpu *vgpu, const struct mdgpu_ctl_dma *req);

/* ---- sysfs (mdgpu_sysfs.c) ---------------------------------------------- */

extern const struct attribute_group *mdgpu_vgpu_groups[];
extern const struct attribute_group *mdgpu_parent_groups[];

#endif /* MDGPU_KMOD_H */
