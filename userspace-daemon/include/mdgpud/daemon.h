/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpud core: configuration, the event loop / dispatcher, vGPUs and their
 * statistics.  main.c is a thin wrapper around this.
 */
#ifndef MDGPUD_DAEMON_H
#define MDGPUD_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/gpu_select.h"
#include "mdgpud/backend.h"
#include "mdgpud/transport.h"

#define MDGPUD_DEFAULT_CONFIG	"/etc/mdgpu/mdgpud.conf"

/* Most uids uid_limits_exempt may name. */
#define MDGPUD_UID_EXEMPT_MAX		16
/* ctx_overhead_mib = auto. */
#define MDGPUD_CTX_OVERHEAD_AUTO	UINT64_MAX
/*
 * spin_us = auto and worker_pollers = auto (the defaults) are chosen from
 * the machine's online CPUs.  With MDGPUD_POLL_AUTO_CPUS or more, the
 * dispatcher polls MDGPUD_POLL_AUTO_SPIN_US after its last
 * command and MDGPUD_POLL_AUTO_POLLERS workers may poll; with fewer, a
 * polling thread would take a CPU the tenants need, and the dispatcher
 * spins MDGPUD_POLL_SMALL_SPIN_US and no worker polls.
 */
#define MDGPUD_POLL_AUTO		UINT32_MAX
#define MDGPUD_POLL_AUTO_CPUS		8
#define MDGPUD_POLL_AUTO_SPIN_US	20000u
#define MDGPUD_POLL_AUTO_POLLERS	2u
#define MDGPUD_POLL_SMALL_SPIN_US	50u
#define MDGPUD_POLLERS_MAX		64u
/*
 * worker_uid_base = auto: each GPU's workers get a block of
 * MDGPUD_WORKER_UID_AUTO_STEP uids that follows from where the GPU sits
 * on the PCI bus, so that the daemons of a host's GPUs (one per GPU) have
 * ranges apart without configuration, and a GPU keeps its block when
 * GPUs are added, removed or renumbered by CUDA:
 *
 *   N    = domain x 8192 + bus x 32 + device    (domains 0..3, function 0)
 *   base = MDGPUD_WORKER_UID_AUTO_BASE + N x MDGPUD_WORKER_UID_AUTO_STEP
 *
 * N < 32768, so the blocks fill 0x70000000..0xefffffff.  0x70000000
 * (1879048192) is where systemd's unused block starts (its
 * UIDS-GIDS.md), above Debian's subordinate uids (login.defs SUB_UID_MAX
 * 600100000); blocks of N >= 4096 (domain 0 bus 128 and up, or domains
 * 1-3) are above 2^31, where tools that keep a uid in a signed int
 * misread it.
 *
 * A bus id that is not such an address (the fake libcuda's "fake0", a
 * domain above 3, a function other than 0) falls back, with a warning, to
 * a block by CUDA ordinal, past the probe uid:
 * MDGPUD_WORKER_UID_AUTO_ORDINAL_BASE + ordinal x STEP, ordinal 0..255,
 * the last uid 0xf100ffff.
 *
 * MDGPUD_WORKER_UID_PROBE, between the two, is the uid the probe runs as
 * with worker_uid_base = auto: the block follows from the bus id the
 * probe reports.  No worker that serves a tenant ever runs as it.
 */
#define MDGPUD_WORKER_UID_BASE_AUTO		UINT64_MAX
#define MDGPUD_WORKER_UID_AUTO_BASE		0x70000000u
#define MDGPUD_WORKER_UID_AUTO_STEP		65536u
#define MDGPUD_WORKER_UID_PCI_DOMAINS		4u
#define MDGPUD_WORKER_UID_PCI_SLOTS	\
	(MDGPUD_WORKER_UID_PCI_DOMAINS * 8192u)
#define MDGPUD_WORKER_UID_PROBE			0xf0000000u
#define MDGPUD_WORKER_UID_AUTO_ORDINAL_BASE	\
	(MDGPUD_WORKER_UID_PROBE + MDGPUD_WORKER_UID_AUTO_STEP)

/* Room for a PCI address in canonical form, NUL included. */
#define MDGPUD_PCI_ADDR_LEN	32

/* Every key of the config file; Documentation/daemon.md lists them. */
struct mdgpud_config {
	char socket_path[108];		/* socket_path */
	uint32_t socket_mode;		/* socket_mode, octal */
	char socket_group[64];		/* socket_group, "" = daemon's */
	char backend[16];		/* backend = sim | cuda */
	char transport[16];		/* transport = socket */
	uint64_t sim_fb_mib;		/* sim_fb_mib */
	uint32_t sim_sm_count;		/* sim_sm_count */
	int sim_realtime;		/* sim_realtime = 0 | 1 */
	uint64_t sim_ctx_pinned_kib;	/* sim_ctx_pinned_kib */
	char cuda_device[MDGPU_GPU_SELECT_LEN];	/* cuda_device: an ordinal,
						 * PCI bus id or GPU UUID in
						 * canonical form
						 * (common/gpu_select.h) */
	uint64_t cuda_fb_reserve_mib;	/* cuda_fb_reserve_mib */
	uint32_t hang_timeout_ms;	/* hang_timeout_ms: bound of a wait
					 * on GPU work past its expected end */
	uint32_t module_load_timeout_ms; /* module_load_timeout_ms: bound of
					  * a module load (the driver's JIT) */
	uint32_t worker_start_timeout_ms; /* worker_start_timeout_ms: bound
					   * of a vGPU context's start (its
					   * worker's cuInit, context) */
	char cuda_worker[256];		/* cuda_worker, "" = auto */
	/* cuda workers' sandbox (Documentation/daemon.md, "Worker sandbox") */
	int worker_sandbox;		/* worker_sandbox = required |
					 * best-effort | off */
	uint64_t worker_uid_base;	/* worker_uid_base, or _AUTO */
	uint32_t worker_uid_count;	/* worker_uid_count: a uid of
					 * [base, base + count) per worker;
					 * 0 = all run as worker_user */
	char worker_user[64];		/* worker_user, name or uid, "" =
					 * unset (65534 with count 0) */
	char worker_group[64];		/* worker_group: with count 0 the
					 * workers' group ("" = the user's),
					 * else their supplementary group
					 * ("" = none) */
	int worker_seccomp_learn;	/* worker_seccomp = enforce (0) |
					 * learn (1) | audit (2) */
	char worker_seccomp_allow[256];	/* worker_seccomp_allow, names */
	int worker_dev;			/* worker_dev = none | host | private
					 * (enum mdgpud_worker_dev) */
	int worker_net;			/* worker_net = private | host
					 * (enum mdgpud_worker_net) */
	int worker_tmp;			/* worker_tmp = private | shared
					 * (enum mdgpud_worker_tmp) */
	uint32_t timeslice_us;		/* timeslice_us */
	uint32_t policy;		/* policy = best-effort | equal-share |
					 * fixed-share */
	uint64_t cap_window_us;		/* cap_window_us */
	int log_level;			/* log_level = err|warn|info|debug */
	int log_syslog;			/* log_syslog = 0 | 1 */
	uint32_t ring_entries;		/* ring_entries (default per vGPU) */
	uint32_t ring_entries_max;	/* ring_entries_max */
	uint32_t max_vgpus;		/* max_vgpus */
	uint32_t max_allocs;		/* max_allocs per vGPU */
	uint32_t max_handles;		/* max_handles per vGPU */
	uint32_t shared_bytes_max;	/* shared_bytes_max per launch */
	uint32_t spin_us;		/* spin_us: the dispatcher polls this
					 * long after its last command before
					 * sleeping, or MDGPUD_POLL_AUTO
					 * (mdgpud_config_spin_us) */
	/*
	 * Idle polling of workers (Documentation/daemon.md, "Waking from
	 * idle"): after a vGPU's slice, its worker polls its ring for
	 * worker_poll_us; at most worker_pollers workers poll at once (the
	 * most recently active), or MDGPUD_POLL_AUTO
	 * (mdgpud_config_worker_pollers).
	 */
	uint32_t worker_poll_us;	/* worker_poll_us */
	uint32_t worker_pollers;	/* worker_pollers */
	uint32_t linger_us;		/* linger_us: keep a slice open */
	uint32_t latency_queue_us;	/* latency_queue_us: the GPU work
					 * others keep queued while a
					 * latency-class vGPU is active;
					 * 0: no pacing */
	uint32_t dma_bounce_kib;	/* dma_bounce_kib (IOVA transports) */
	uint32_t host_mib_max;		/* host_mib_max: zero-copy host area
					 * a socket client may ask for */
	uint32_t register_mib_max;	/* register_mib_max: host memory one
					 * vGPU may register (HOST_REGISTER) */
	/* Admin socket (core/admin.c, Documentation/mdgpuctl.md). */
	char admin_socket_path[108];	/* admin_socket_path, "" = derived
					 * from socket_path, "none" = off */
	uint32_t admin_socket_mode;	/* admin_socket_mode, octal */
	char admin_socket_group[64];	/* admin_socket_group, "" = daemon's */
	/*
	 * Per-uid limits of socket clients (core/limits.c) and the socket
	 * handshake bound; 0 = unlimited for the uid_max_* keys.
	 */
	uint32_t uid_max_connections;	/* uid_max_connections, handshakes
					 * included */
	uint32_t uid_max_vgpus;		/* uid_max_vgpus */
	uint64_t uid_max_pinned_mib;	/* uid_max_pinned_mib: apertures,
					 * host_bytes included */
	uint32_t uid_limits_exempt[MDGPUD_UID_EXEMPT_MAX];
	uint32_t nr_uid_limits_exempt;	/* uid_limits_exempt = uid,uid,... */
	uint32_t limit_log_interval_s;	/* limit_log_interval_s */
	uint32_t handshake_timeout_ms;	/* handshake_timeout_ms */
	/* ctx_overhead_mib: device memory a vGPU's context costs besides its
	 * quota, reserved at admission; MDGPUD_CTX_OVERHEAD_AUTO = the
	 * backend's default (vgpu.c). */
	uint64_t ctx_overhead_mib;
	/*
	 * parent_pci: the mdev parent the kernel transport registers
	 * (Documentation/daemon.md, "The mdev parent"): "auto" (the
	 * backend's bus id if it is a PCI address), "none" (the virtual
	 * parent mdgpu<id>) or a PCI address, stored in canonical form.
	 */
	char parent_pci[MDGPUD_PCI_ADDR_LEN];
	/*
	 * Spatial sharing (Documentation/spatial.md): spatial = none | mps
	 * (enum mdgpud_spatial); mps_control: the MPS control binary, ""
	 * = searched; mps_dir: its pipe and log directories' parent, "" =
	 * mdgpud_config_mps_dir()'s default.
	 */
	int spatial;
	char mps_control[256];
	char mps_dir[108];
};

void mdgpud_config_defaults(struct mdgpud_config *cfg);
/* One `key = value` assignment; -EINVAL with a message in err. */
int mdgpud_config_set(struct mdgpud_config *cfg, const char *key,
		      const char *value, char *err, size_t errlen);
/* Parse a file; a missing file is not an error when optional is true. */
int mdgpud_config_load(struct mdgpud_config *cfg, const char *path,
		       bool optional, char *err, size_t errlen);
int mdgpud_config_validate(const struct mdgpud_config *cfg, char *err,
			   size_t errlen);
/*
 * The groups the config names (socket_group with the socket transport,
 * admin_socket_group with an admin socket) exist in the group database:
 * 0, or -ENOENT with err naming the key and the group.  Checked once at
 * start, before anything is created, so that a missing group is one clear
 * error rather than a socket that is bound and then removed.
 */
int mdgpud_config_check_groups(const struct mdgpud_config *cfg, char *err,
			       size_t errlen);
/*
 * Calls fn(key, data) (fn may be NULL) once for each key whose value
 * differs between a and b, in the order Documentation/daemon.md lists
 * them; returns how many differ.
 */
unsigned int mdgpud_config_diff(const struct mdgpud_config *a,
				const struct mdgpud_config *b,
				void (*fn)(const char *key, void *data),
				void *data);
/* Whether mdgpud_config_diff() compares key (a test of its table). */
bool mdgpud_config_key_compared(const char *key);
/*
 * worker_uid_base = auto for the GPU with PCI bus id bus_id (as the probe
 * reports it; NULL or not PCI: by ordinal) into *base: 0 from the PCI
 * location, 1 from the ordinal (the fallback), -ERANGE when neither
 * applies (an ordinal outside 0..MDGPU_GPU_ORDINAL_MAX).  Pure.
 */
int mdgpud_worker_uid_auto(const char *bus_id, int ordinal, uint32_t *base);
/*
 * The first uid of the workers' range into *base: cfg's number, or auto
 * resolved by mdgpud_worker_uid_auto() with a warning logged for the
 * ordinal fallback.  0, or -ERANGE (logged).
 */
int mdgpud_config_worker_uid_base(const struct mdgpud_config *cfg,
				  const char *bus_id, int ordinal,
				  uint32_t *base);
/* spin_us and worker_pollers with `auto` resolved for this machine. */
uint32_t mdgpud_config_spin_us(const struct mdgpud_config *cfg);
uint32_t mdgpud_config_worker_pollers(const struct mdgpud_config *cfg);
/* mps_dir, or with "" the default "<directory of socket_path>/mps<N>"
 * (N = ordinal, the GPU's CUDA ordinal), into out; -ENAMETOOLONG if it
 * does not fit. */
int mdgpud_config_mps_dir(const struct mdgpud_config *cfg, int ordinal,
			  char *out, size_t len);
/*
 * A PCI address "domain:bus:slot.function" (hexadecimal; a domain of 1 to
 * 8 digits, as CUDA and nvidia-smi print it) in the kernel's canonical
 * form "%04x:%02x:%02x.%x" into out: 0, or -EINVAL if s is not one.
 */
int mdgpud_pci_addr_parse(const char *s, char out[MDGPUD_PCI_ADDR_LEN]);
/*
 * A value of cuda_device in canonical form (common/gpu_select.h) into
 * out: a decimal ordinal 0..MDGPU_GPU_ORDINAL_MAX; a PCI bus id as
 * mdgpud_pci_addr_parse() takes it or without its domain ("41:00.0",
 * domain 0); a GPU UUID "GPU-" and 8-4-4-4-12 hex digits, any case.  0,
 * or -EINVAL (out untouched).
 */
int mdgpud_gpu_select_parse(const char *s, char out[MDGPU_GPU_SELECT_LEN]);
/*
 * The PCI address the kernel transport registers as mdev parent for a
 * GPU whose backend reports bus_id, resolving parent_pci: true with the
 * address in out, false for the virtual parent.
 */
bool mdgpud_config_parent_pci(const struct mdgpud_config *cfg,
			      const char *bus_id,
			      char out[MDGPUD_PCI_ADDR_LEN]);

struct mdgpud_core;
struct mdgpud_vgpu;

/* Per-vGPU statistics, a snapshot. */
/* Queue-wait histogram: bucket i counts waits of floor(log2(ns)) == i
 * (bucket 0 also holds 0 ns), so its upper bound is 2^(i+1) - 1 ns. */
#define MDGPUD_WAIT_HIST_BUCKETS	64

struct mdgpud_vgpu_stats {
	uint32_t vgpu_id;
	uint32_t type_id;
	uint64_t gpu_ns;		/* GPU time charged */
	uint64_t slices;		/* slices it ran */
	uint64_t commands;
	uint64_t errors;		/* commands completed with status < 0 */
	uint64_t bytes_copied;
	uint64_t hangs;			/* contexts lost to the hang bound */
	uint64_t ctx_losses;		/* contexts lost otherwise */
	uint32_t ctx_lost;		/* 1 until a reset restores it */
	uint32_t ctx_starting;		/* 1 while its context starts (at
					 * creation, or a reset's new one) */
	uint64_t wait_p50_ns;		/* queue wait, doorbell -> start */
	uint64_t wait_p99_ns;
	uint64_t fb_quota;
	uint64_t fb_used;		/* reserved bytes */
	uint64_t fb_requested;
	uint32_t allocations;
	uint32_t weight;		/* scheduling knobs in force */
	uint32_t cap_pct;
	uint32_t priority;
	uint64_t resets;		/* device resets (mdgpud_vgpu_reset) */
	uint64_t gpu_ns_window;		/* GPU time in the last
					 * MDGPUD_USAGE_WINDOW_NS (usage.h) */
	uint8_t uuid[16];		/* DEVICE_INFO's: the mdev's UUID on
					 * the kernel transport */
	uint64_t wait_hist[MDGPUD_WAIT_HIST_BUCKETS];
	uint64_t wait_sum_ns;		/* all queue waits added, saturating
					 * at UINT64_MAX (584 years) */
};

/*
 * Counts over the daemon's lifetime, destroyed vGPUs included: what an
 * operator's monitoring still sees after a tenant whose context was lost
 * has gone (its vGPU, and the vGPU's own counters, with it).
 */
struct mdgpud_core_totals {
	uint64_t vgpus_created;
	uint64_t vgpus_destroyed;
	uint64_t hangs;			/* contexts lost to the hang bound */
	uint64_t ctx_losses;		/* contexts lost otherwise */
};

int mdgpud_core_create(const struct mdgpud_config *cfg,
		       struct mdgpud_core **out);
/* Runs the event loop and dispatcher until mdgpud_core_stop() (a stop
 * requested before run() makes it return at once); may be called again. */
int mdgpud_core_run(struct mdgpud_core *core);
/* Async-signal-safe: ask run() to return (clients see -ENODEV). */
void mdgpud_core_stop(struct mdgpud_core *core);
/* Async-signal-safe: ask run() to log a status dump. */
void mdgpud_core_request_dump(struct mdgpud_core *core);
/*
 * Async-signal-safe: ask run() to call the reload hook, in its thread,
 * between slices (where the status dump runs).  Without a hook it does
 * nothing.
 */
void mdgpud_core_request_reload(struct mdgpud_core *core);
typedef void (*mdgpud_reload_fn)(struct mdgpud_core *core, void *data);
void mdgpud_core_set_reload_hook(struct mdgpud_core *core,
				 mdgpud_reload_fn fn, void *data);
/*
 * Apply cfg, a complete new configuration, from run()'s thread (the
 * reload hook): validated as at start; the keys that change live
 * (policy, timeslice_us: mdgpud_core_set_policy(), as the admin requests;
 * log_level) take their new values; every other key whose value differs
 * is logged by name as needing a restart and keeps its running value.
 * 0, or a negative errno with an error logged and nothing changed.  msg
 * (may be NULL) gets one line for systemd's STATUS=: on success what
 * changed ("applied policy timeslice_us; needs a restart: max_vgpus",
 * "no key changed"), on failure the reason.
 */
int mdgpud_core_reconfigure(struct mdgpud_core *core,
			    const struct mdgpud_config *cfg, char *msg,
			    size_t msglen);
/* After run() returned (or was never called): tells every client the
 * daemon is gone, destroys every vGPU (scrubbing its memory), the
 * transport, the scheduler and the backend. */
void mdgpud_core_destroy(struct mdgpud_core *core);
void mdgpud_core_dump(struct mdgpud_core *core);

const struct mdgpud_gpu_info *mdgpud_core_gpu(const struct mdgpud_core *c);
const struct mdgpud_config *mdgpud_core_config(const struct mdgpud_core *c);
/* Backend-wide: bytes reserved by all vGPUs together. */
uint64_t mdgpud_core_fb_used(struct mdgpud_core *c);
uint32_t mdgpud_core_nr_vgpus(struct mdgpud_core *c);
/* The daemon's lifetime counts, a snapshot. */
void mdgpud_core_totals(struct mdgpud_core *c, struct mdgpud_core_totals *out);
/* Snapshot of every vGPU's stats; returns the count (<= max). */
size_t mdgpud_core_stats(struct mdgpud_core *c, struct mdgpud_vgpu_stats *out,
			 size_t max);

/* Event loop hook for transports: fn(data, epoll events) runs in the
 * dispatcher thread. */
typedef void (*mdgpud_watch_fn)(void *data, uint32_t events);
int mdgpud_core_watch(struct mdgpud_core *c, int fd, mdgpud_watch_fn fn,
		      void *data);
void mdgpud_core_unwatch(struct mdgpud_core *c, int fd);
/* Change the epoll events (EPOLLIN, EPOLLOUT) of a watched fd. */
int mdgpud_core_watch_events(struct mdgpud_core *c, int fd, uint32_t events);

/* vGPU lifecycle, called by transports from the dispatcher thread. */
struct mdgpud_vgpu_params {
	const char *type_name;		/* or type_id when NULL */
	uint32_t type_id;
	uint32_t ring_entries;		/* power of two, validated */
	uint8_t *ring;			/* section-2 ring, SQ at offset 0 */
	uint8_t *aperture;
	uint64_t aperture_size;
	int aperture_fd;		/* for backend map_shared, or -1 */
	const struct mdgpud_vgpu_tops *tops;
	void *tpriv;
	/* Scheduling knobs; 0 = the type's default weight, no cap (100),
	 * MDGPU_PRIORITY_DEFAULT.  The kernel transport passes sysfs values. */
	uint32_t weight;
	uint32_t cap_pct;
	uint32_t priority;
	/* DEVICE_INFO's UUID of the vGPU (the mdev's), or NULL: a random
	 * version-4 UUID made at creation. */
	const uint8_t *uuid;
};
int mdgpud_vgpu_create(struct mdgpud_core *c,
		       const struct mdgpud_vgpu_params *p,
		       struct mdgpud_vgpu **out);
/* Frees (and so scrubs) every allocation and handle of the vGPU. */
void mdgpud_vgpu_destroy(struct mdgpud_vgpu *v);
/* Device reset (kernel transport): queued commands are dropped, every
 * allocation and handle is released (memory scrubbed), the ring restarts
 * at command 0 (head = fence = 0).  Statistics are kept. */
void mdgpud_vgpu_reset(struct mdgpud_vgpu *v);
/* Knob changes (sysfs weight/cap/priority); -EINVAL out of range. */
int mdgpud_vgpu_set_knobs(struct mdgpud_vgpu *v, uint32_t weight,
			  uint32_t cap_pct, uint32_t priority);
/* Policy/timeslice change for the whole GPU; -EINVAL out of range. */
int mdgpud_core_set_policy(struct mdgpud_core *c, uint32_t policy,
			   uint32_t timeslice_us);
uint32_t mdgpud_vgpu_id(const struct mdgpud_vgpu *v);
uint64_t mdgpud_vgpu_fb_quota(const struct mdgpud_vgpu *v);
/* Aperture bytes of a type (type table), for transports sizing memfds. */
int mdgpud_core_type_lookup(const struct mdgpud_core *c, const char *name,
			    uint32_t *type_id, uint64_t *fb_quota,
			    uint64_t *aperture_size);

#endif /* MDGPUD_DAEMON_H */
