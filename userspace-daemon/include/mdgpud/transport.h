/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpud transports: how vGPUs and their rings reach the daemon.
 *
 * A transport has two ops tables.  The transport-level table creates and
 * destroys it; a transport watches its own file descriptors through the
 * core's event loop (mdgpud_core_watch()) and creates/destroys vGPUs with
 * mdgpud_vgpu_create()/mdgpud_vgpu_destroy() as clients come and go.
 *
 * The per-vGPU table is what the dispatcher uses on the hot path: read the
 * doorbell (SQ tail), point at an SQ entry (the validator copies it once),
 * write a completion, publish head/fence (+ interrupt), arm the doorbell
 * wake-up before the dispatcher sleeps, DMA guest memory by IOVA.
 *
 *   socket  Unix-domain socket (transports/socket.c); rings/aperture in
 *           memfds shared with the client; doorbell eventfd, completion
 *           futex (uapi section 4).
 *   kernel  /dev/mdgpu (transports/kernel.c): CREATE/REMOVE events
 *           create/destroy vGPUs, DOORBELL events and the shadow
 *           doorbell's sq_tail (ABI 1.13, each taken only as a valid
 *           forward move) update the tail that sq_tail() returns,
 *           rings/apertures are mmap()ed from /dev/mdgpu, publish() is
 *           MDGPU_CTL_COMPLETE_TAIL (fence, head, irq, the tail served),
 *           dma() is MDGPU_CTL_DMA, arm() sets the shadow's
 *           daemon_polling while awake (the control fd is always
 *           watched, so a BAR0 doorbell wakes a sleeping dispatcher).
 */
#ifndef MDGPUD_TRANSPORT_H
#define MDGPUD_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "uapi/mdgpu.h"

struct mdgpud_core;
struct mdgpud_config;
struct mdgpud_transport;

struct mdgpud_vgpu_tops {
	/* Current SQ tail (doorbell), read with acquire semantics. */
	uint32_t (*sq_tail)(void *priv);
	/* SQ slot `idx` (already reduced modulo entries). */
	const struct mdgpu_cmd *(*sq_entry)(void *priv, uint32_t idx);
	/* Write the completion of slot `idx`. */
	void (*cq_write)(void *priv, uint32_t idx, const struct mdgpu_cpl *cpl);
	/* Commands up to `head` are complete; irq: MDGPU_IRQ_* to raise. */
	void (*publish)(void *priv, uint32_t head, uint64_t fence,
			uint32_t irq, uint64_t fb_used);
	/* The dispatcher is about to sleep (true) or woke up (false). */
	void (*arm)(void *priv, bool sleeping);
	/* Report a bad doorbell (tail - head > entries). */
	void (*ring_error)(void *priv, int err);
	/* The daemon is going away: tell the client (-ENODEV). */
	void (*lost)(void *priv);
	/*
	 * The vGPU's GPU context changed state: MDGPU_VGPU_EVENT_* (uapi).
	 * Called by the dispatcher thread; NULL when the transport has no
	 * way to tell.
	 */
	void (*context_event)(void *priv, uint32_t event);
	/*
	 * The file descriptor the client sent with `token` for HOST_REGISTER
	 * (uapi section 4), now the caller's to close; -ENOENT if none was
	 * sent.  Called by the dispatcher thread; NULL when the transport
	 * carries no descriptors.
	 */
	int (*take_fd)(void *priv, uint32_t token);
	/*
	 * The client's ctrl.host_done (HOST_FUNC, uapi section 4), read with
	 * acquire semantics; NULL when the transport has none.
	 */
	uint32_t (*host_done)(void *priv);
	/* Guest memory by IOVA; NULL when the transport has none. */
	int (*dma)(void *priv, uint64_t iova, void *buf, uint64_t len,
		   bool write);
	/*
	 * Where the vGPU's weight, cap and priority are set, when not by
	 * the daemon's admin `set`: the kernel transport's are the mdev's
	 * sysfs files (the module passes them on as KNOB events), so an
	 * admin `set` is refused there rather than leave sysfs, the
	 * guest-visible registers and the daemon disagreeing.  NULL: the
	 * admin socket owns them.
	 */
	const char *knobs_owner;
};

struct mdgpud_transport_ops {
	const char *name;
	int (*create)(struct mdgpud_core *core, const struct mdgpud_config *cfg,
		      struct mdgpud_transport **out);
	/* Destroys the transport's vGPUs too. */
	void (*destroy)(struct mdgpud_transport *t);
	/*
	 * The name of the mdev parent its vGPUs are children of
	 * (/sys/class/mdev_bus/<name>: a PCI address or mdgpu<id>), or
	 * NULL; a NULL op: the transport makes no mdevs.
	 */
	const char *(*mdev_parent)(const struct mdgpud_transport *t);
};

/* Unix-domain socket (transports/socket.c, uapi section 4). */
extern const struct mdgpud_transport_ops mdgpud_transport_socket;
/* /dev/mdgpu (transports/kernel.c, Documentation/e2e.md). */
extern const struct mdgpud_transport_ops mdgpud_transport_kernel;

/* The transport called `name` (config key `transport`), or NULL when none
 * is (transports/transport.c). */
const struct mdgpud_transport_ops *mdgpud_transport_find(const char *name);

#endif /* MDGPUD_TRANSPORT_H */
