// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The socket transport (uapi section 4): a Unix-domain stream socket whose
 * mode and group (config) decide who may connect; each connection is one
 * vGPU whose ring (behind a control page) and aperture live in memfds handed
 * to the client with SCM_RIGHTS, plus an eventfd doorbell.  The connection
 * stays open for the vGPU's lifetime; its end destroys the vGPU.
 *
 * Nothing a client does can hold the dispatcher up: every socket is
 * non-blocking, a hello is gathered across as many reads as it takes, and
 * a connection whose hello is not complete handshake_timeout_ms after its
 * accept is dropped (one timerfd for all, armed to the earliest deadline).
 * What a client holds is charged to its SO_PEERCRED uid (core/limits.c):
 * the connection at accept, then its vGPU and its aperture (pinned host
 * memory, zero-copy area included) at the handshake.  A client over its
 * uid's limit is still answered with a welcome carrying the refusal, once
 * its hello is in, so that it sees the errno rather than a broken pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mdgpud/daemon.h"
#include "mdgpud/limits.h"
#include "mdgpud/log.h"
#include "mdgpud/transport.h"
#include "mdgpud/unix_listen.h"

struct mdgpud_transport {
	struct mdgpud_core *core;
	const struct mdgpud_config *cfg;
	int listen_fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct mdgpud_sock_client *clients;
	uint32_t nr_clients;		/* connected, handshake done or not,
					 * refused ones not included */
	uint32_t nr_refused;		/* over their uid's limit, waiting
					 * for their hello to be answered */
	struct mdgpud_limits *limits;
	int timer_fd;			/* handshake deadlines */
	uint64_t timer_at_ns;		/* when it fires; 0 = disarmed */
	uint64_t full_log_ns;		/* last "too many connections" */
	uint64_t full_unlogged;		/* refusals since that message */
};

/* Connections beyond max_vgpus that may sit in the handshake at once. */
static const uint32_t mdgpud_sock_pending_max = 16;
/* Connections over their uid's limit that may wait for their answer. */
static const uint32_t mdgpud_sock_refused_max = 16;
/* Connections the kernel queues before accept(). */
static const int mdgpud_sock_backlog = 64;

struct mdgpud_sock_client {
	struct mdgpud_transport *t;
	struct mdgpud_sock_client *next;
	int fd;				/* connection */
	pid_t pid;
	uid_t uid;
	uint8_t hello_buf[sizeof(struct mdgpu_sock_hello)];
	size_t hello_len;
	uint64_t deadline_ns;		/* hello due by then; 0 once done */
	int refuse;			/* <0: answer the hello with it */
	bool charged_conn, charged_vgpu;	/* to uid (core/limits.c) */
	bool limited;			/* refused by its uid's limits */
	uint64_t charged_pinned;
	struct mdgpud_vgpu *vgpu;	/* NULL until the handshake is done */
	int ring_fd, ap_fd, db_fd;
	uint8_t *ring_map;		/* ctrl page + ring */
	size_t ring_map_size;
	struct mdgpu_sock_ctrl *ctrl;
	uint8_t *ring;
	uint32_t entries;
	uint8_t *ap;
	uint64_t ap_size;
	/* Descriptors sent for HOST_REGISTER, not yet taken (take_fd). */
	struct { uint32_t token; int fd; } fds[MDGPU_SOCK_FDS_MAX];
	uint32_t nr_fds;
	bool bad;			/* broke the protocol: shut down */
};

/* ---------------------------------------------------------------- */
/* Hot path: per-vGPU ops                                           */

static void mdgpud_sock_futex_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static uint32_t mdgpud_sock_sq_tail(void *priv)
{
	struct mdgpud_sock_client *cl = priv;

	return __atomic_load_n(&cl->ctrl->sq_tail, __ATOMIC_ACQUIRE);
}

static const struct mdgpu_cmd *mdgpud_sock_sq_entry(void *priv, uint32_t idx)
{
	struct mdgpud_sock_client *cl = priv;

	return (const struct mdgpu_cmd *)(cl->ring + MDGPU_RING_SQ_OFFSET +
					  (size_t)idx * MDGPU_CMD_SIZE);
}

static void mdgpud_sock_cq_write(void *priv, uint32_t idx,
				 const struct mdgpu_cpl *cpl)
{
	struct mdgpud_sock_client *cl = priv;

	memcpy(cl->ring + MDGPU_RING_CQ_OFFSET(cl->entries) +
	       (size_t)idx * MDGPU_CPL_SIZE, cpl, sizeof(*cpl));
}

static void mdgpud_sock_wake_if_waiting(struct mdgpud_sock_client *cl)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (__atomic_load_n(&cl->ctrl->client_waiting, __ATOMIC_RELAXED))
		mdgpud_sock_futex_wake(&cl->ctrl->sq_head);
}

static void mdgpud_sock_publish(void *priv, uint32_t head, uint64_t fence,
				uint32_t irq, uint64_t fb_used)
{
	struct mdgpud_sock_client *cl = priv;

	(void)irq;	/* every completion wakes a waiting client */
	(void)fb_used;
	__atomic_store_n(&cl->ctrl->fence, fence, __ATOMIC_RELAXED);
	__atomic_store_n(&cl->ctrl->sq_head, head, __ATOMIC_RELEASE);
	mdgpud_sock_wake_if_waiting(cl);
}

static void mdgpud_sock_arm(void *priv, bool sleeping)
{
	struct mdgpud_sock_client *cl = priv;

	__atomic_store_n(&cl->ctrl->daemon_sleeping, sleeping ? 1U : 0U,
			 __ATOMIC_SEQ_CST);
}

static void mdgpud_sock_ring_error(void *priv, int err)
{
	struct mdgpud_sock_client *cl = priv;

	__atomic_store_n(&cl->ctrl->error, err, __ATOMIC_RELAXED);
	__atomic_fetch_or(&cl->ctrl->status, MDGPU_STATUS_RING_ERROR,
			  __ATOMIC_SEQ_CST);
	mdgpud_sock_futex_wake(&cl->ctrl->sq_head);
}

static void mdgpud_sock_lost(void *priv)
{
	struct mdgpud_sock_client *cl = priv;

	__atomic_store_n(&cl->ctrl->status, MDGPU_STATUS_BACKEND_LOST,
			 __ATOMIC_SEQ_CST);
	mdgpud_sock_futex_wake(&cl->ctrl->sq_head);
}

/*
 * HANG and LOST set CONTEXT_LOST in ctrl.status, RESTORED clears it; any
 * change wakes a client sleeping on sq_head so that it looks at the status
 * now rather than at its next timed re-check.  Other values (the core's
 * own) are ignored.
 */
static void mdgpud_sock_context_event(void *priv, uint32_t event)
{
	struct mdgpud_sock_client *cl = priv;

	switch (event) {
	case MDGPU_VGPU_EVENT_HANG:
	case MDGPU_VGPU_EVENT_LOST:
		__atomic_fetch_or(&cl->ctrl->status, MDGPU_STATUS_CONTEXT_LOST,
				  __ATOMIC_SEQ_CST);
		break;
	case MDGPU_VGPU_EVENT_RESTORED:
		__atomic_fetch_and(&cl->ctrl->status,
				   ~(uint32_t)MDGPU_STATUS_CONTEXT_LOST,
				   __ATOMIC_SEQ_CST);
		break;
	default:
		mdgpud_warn("vgpu %u: unknown context event %u: ignored",
			    cl->vgpu ? mdgpud_vgpu_id(cl->vgpu) : 0, event);
		return;
	}
	mdgpud_sock_futex_wake(&cl->ctrl->sq_head);
}

/*
 * Takes every message the client sent since the handshake: each must be
 * a struct mdgpu_sock_fd_msg with exactly one descriptor (kept for a
 * HOST_REGISTER, up to MDGPU_SOCK_FDS_MAX; past that it is closed and
 * its registration fails -ENOENT).  Anything else breaks the protocol:
 * the connection is shut down here and freed by its next event (the
 * dispatcher may be the caller, in the middle of the vGPU's slice).
 * Returns 0, or -EPIPE once the connection is broken or closed.
 */
static int mdgpud_sock_recv_fds(struct mdgpud_sock_client *cl)
{
	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(int) * 2)];
			struct cmsghdr align;
		} u;
		struct mdgpu_sock_fd_msg m;
		struct iovec iov = { &m, sizeof(m) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = u.buf,
				      .msg_controllen = sizeof(u.buf) };
		struct cmsghdr *cm;
		int fds[2], nfds = 0;
		ssize_t n;

		if (cl->bad)
			return -EPIPE;
		n = recvmsg(cl->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		for (cm = CMSG_FIRSTHDR(&msg); n > 0 && cm;
		     cm = CMSG_NXTHDR(&msg, cm)) {
			size_t k;

			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SCM_RIGHTS)
				continue;
			k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
				       sizeof(fd));
				if (nfds < 2)
					fds[nfds++] = fd;
				else
					close(fd);
			}
		}
		if (n == (ssize_t)sizeof(m) && m.magic == MDGPU_SOCK_FD_MAGIC &&
		    nfds == 1 && !(msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
			if (cl->nr_fds < MDGPU_SOCK_FDS_MAX) {
				cl->fds[cl->nr_fds].token = m.token;
				cl->fds[cl->nr_fds++].fd = fds[0];
			} else {
				mdgpud_dbg("vgpu %u: pid %d sent more than %u "
					   "descriptors not yet registered: "
					   "closed one", mdgpud_vgpu_id(cl->vgpu),
					   (int)cl->pid, MDGPU_SOCK_FDS_MAX);
				close(fds[0]);
			}
			continue;
		}
		while (nfds)
			close(fds[--nfds]);
		if (n > 0)
			mdgpud_warn("vgpu %u: unexpected data from pid %d, "
				    "disconnecting", mdgpud_vgpu_id(cl->vgpu),
				    (int)cl->pid);
		cl->bad = true;
		shutdown(cl->fd, SHUT_RDWR);
		return -EPIPE;
	}
}

static uint32_t mdgpud_sock_host_done(void *priv)
{
	struct mdgpud_sock_client *cl = priv;

	return __atomic_load_n(&cl->ctrl->host_done, __ATOMIC_ACQUIRE);
}

static int mdgpud_sock_take_fd(void *priv, uint32_t token)
{
	struct mdgpud_sock_client *cl = priv;

	mdgpud_sock_recv_fds(cl);
	for (uint32_t i = 0; i < cl->nr_fds; i++) {
		if (cl->fds[i].token == token) {
			int fd = cl->fds[i].fd;

			cl->fds[i] = cl->fds[--cl->nr_fds];
			return fd;
		}
	}
	return -ENOENT;
}

static const struct mdgpud_vgpu_tops mdgpud_sock_tops = {
	.sq_tail = mdgpud_sock_sq_tail,
	.sq_entry = mdgpud_sock_sq_entry,
	.cq_write = mdgpud_sock_cq_write,
	.publish = mdgpud_sock_publish,
	.arm = mdgpud_sock_arm,
	.ring_error = mdgpud_sock_ring_error,
	.lost = mdgpud_sock_lost,
	.context_event = mdgpud_sock_context_event,
	.take_fd = mdgpud_sock_take_fd,
	.host_done = mdgpud_sock_host_done,
	.dma = NULL,		/* no guest IOVA over a socket */
};

/* ---------------------------------------------------------------- */
/* Connections                                                      */

static void mdgpud_sock_client_free(struct mdgpud_sock_client *cl)
{
	struct mdgpud_transport *t = cl->t;
	struct mdgpud_sock_client **pp;

	for (pp = &t->clients; *pp; pp = &(*pp)->next) {
		if (*pp == cl) {
			*pp = cl->next;
			if (cl->refuse)
				t->nr_refused--;
			else
				t->nr_clients--;
			break;
		}
	}
	if (cl->vgpu)
		mdgpud_vgpu_destroy(cl->vgpu);	/* frees + scrubs memory */
	if (cl->charged_conn)
		mdgpud_limits_uncharge(t->limits, cl->uid,
				       MDGPUD_LIMIT_CONNECTIONS, 1);
	if (cl->charged_vgpu)
		mdgpud_limits_uncharge(t->limits, cl->uid, MDGPUD_LIMIT_VGPUS,
				       1);
	if (cl->charged_pinned)
		mdgpud_limits_uncharge(t->limits, cl->uid, MDGPUD_LIMIT_PINNED,
				       cl->charged_pinned);
	if (cl->db_fd >= 0) {
		mdgpud_core_unwatch(t->core, cl->db_fd);
		close(cl->db_fd);
	}
	mdgpud_core_unwatch(t->core, cl->fd);
	close(cl->fd);
	if (cl->ring_map)
		munmap(cl->ring_map, cl->ring_map_size);
	if (cl->ap)
		munmap(cl->ap, cl->ap_size);
	if (cl->ring_fd >= 0)
		close(cl->ring_fd);
	if (cl->ap_fd >= 0)
		close(cl->ap_fd);
	while (cl->nr_fds)
		close(cl->fds[--cl->nr_fds].fd);
	free(cl);
}

static void mdgpud_sock_doorbell(void *data, uint32_t events)
{
	struct mdgpud_sock_client *cl = data;
	uint64_t v;

	(void)events;
	/* The dispatcher re-scans every tail after any event. */
	while (read(cl->db_fd, &v, sizeof(v)) == sizeof(v))
		;
}

static int mdgpud_sock_memfd(const char *name, uint64_t size, uint8_t **map)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *p;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	*map = p;
	return fd;
}

static int mdgpud_sock_send_welcome(struct mdgpud_sock_client *cl,
				    const struct mdgpu_sock_welcome *w,
				    bool with_fds)
{
	int fds[MDGPU_SOCK_NR_FDS] = { cl->ring_fd, cl->ap_fd, cl->db_fd };
	union {
		char buf[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)w, sizeof(*w) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (with_fds) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	}
	n = sendmsg(cl->fd, &msg, MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(*w) ? 0 : -EPROTO;
}

static int mdgpud_sock_handshake(struct mdgpud_sock_client *cl,
				 const struct mdgpu_sock_hello *h,
				 struct mdgpu_sock_welcome *w)
{
	struct mdgpud_transport *t = cl->t;
	const struct mdgpud_gpu_info *gpu = mdgpud_core_gpu(t->core);
	struct mdgpud_vgpu_params p = { 0 };
	uint64_t quota, ring_bytes, type_ap, pinned;
	uint32_t type_id, entries;
	int ret;

	if (h->magic != MDGPU_SOCK_MAGIC)
		return -EPROTO;
	if ((h->abi_version >> 16) != MDGPU_ABI_MAJOR)
		return -EPROTONOSUPPORT;
	if (h->flags || h->reserved)
		return -EINVAL;
	if (h->host_bytes > ((uint64_t)t->cfg->host_mib_max << 20))
		return -E2BIG;
	if (!memchr(h->type, '\0', sizeof(h->type)))
		return -EINVAL;
	entries = h->ring_entries ? h->ring_entries : t->cfg->ring_entries;
	if ((entries & (entries - 1)) || entries > t->cfg->ring_entries_max ||
	    entries < 2)
		return -EINVAL;
	ret = mdgpud_core_type_lookup(t->core, h->type, &type_id, &quota,
				      &type_ap);
	if (ret)
		return ret;
	/* The zero-copy host area follows the type's aperture, whole pages;
	 * host_mib_max bounds it, so no overflow. */
	cl->ap_size = type_ap + ((h->host_bytes + 4095) & ~4095ULL);
	/* What the uid pins: the aperture memfd and what the backend pins
	 * for the vGPU's context (bounded by the backend, 16 MiB on cuda). */
	pinned = cl->ap_size + gpu->ctx_pinned;

	/* The uid's limits, before any memory is allocated for it. */
	ret = mdgpud_limits_charge(t->limits, cl->uid, MDGPUD_LIMIT_VGPUS, 1);
	if (ret)
		goto limited;
	cl->charged_vgpu = true;
	ret = mdgpud_limits_charge(t->limits, cl->uid, MDGPUD_LIMIT_PINNED,
				   pinned);
	if (ret)
		goto limited;
	cl->charged_pinned = pinned;

	ring_bytes = MDGPU_SOCK_CTRL_SIZE + MDGPU_RING_BYTES(entries);
	cl->ring_map_size = (size_t)ring_bytes;
	ret = mdgpud_sock_memfd("mdgpu-ring", ring_bytes, &cl->ring_map);
	if (ret < 0)
		return ret;
	cl->ring_fd = ret;
	cl->ctrl = (struct mdgpu_sock_ctrl *)cl->ring_map;
	cl->ring = cl->ring_map + MDGPU_SOCK_CTRL_SIZE;
	cl->entries = entries;
	ret = mdgpud_sock_memfd("mdgpu-aperture", cl->ap_size, &cl->ap);
	if (ret < 0) {
		cl->ap = NULL;
		return ret;
	}
	cl->ap_fd = ret;
	cl->db_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (cl->db_fd < 0)
		return -errno;

	p.type_name = h->type;
	p.ring_entries = entries;
	p.ring = cl->ring;
	p.aperture = cl->ap;
	p.aperture_size = cl->ap_size;
	p.aperture_fd = cl->ap_fd;
	p.tops = &mdgpud_sock_tops;
	p.tpriv = cl;
	ret = mdgpud_vgpu_create(t->core, &p, &cl->vgpu);
	if (ret) {
		cl->vgpu = NULL;
		return ret;
	}
	ret = mdgpud_core_watch(t->core, cl->db_fd, mdgpud_sock_doorbell, cl);
	if (ret)
		return ret;
	cl->ctrl->status = MDGPU_STATUS_READY | MDGPU_STATUS_ENABLED;

	w->vgpu_id = mdgpud_vgpu_id(cl->vgpu);
	w->type_id = type_id;
	w->ring_entries = entries;
	w->ring_size = ring_bytes;
	w->ring_offset = MDGPU_SOCK_CTRL_SIZE;
	w->aperture_size = cl->ap_size;
	w->fb_quota = quota;
	w->sm_count = gpu->sm_count;
	w->backend = gpu->kind;
	w->host_offset = type_ap;
	return 0;
limited:
	cl->limited = true;
	return ret;
}

static uint64_t mdgpud_sock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Arms the handshake timer to the earliest deadline of a client still in
 * its handshake, or disarms it.  O(clients), called when it fires and
 * when a deadline earlier than the armed one appears.
 */
static void mdgpud_sock_timer_arm(struct mdgpud_transport *t)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	uint64_t at = 0;

	for (struct mdgpud_sock_client *cl = t->clients; cl; cl = cl->next)
		if (cl->deadline_ns && (!at || cl->deadline_ns < at))
			at = cl->deadline_ns;
	its.it_value.tv_sec = (time_t)(at / 1000000000ULL);
	its.it_value.tv_nsec = (long)(at % 1000000000ULL);
	if (timerfd_settime(t->timer_fd, TFD_TIMER_ABSTIME, &its, NULL))
		mdgpud_err("handshake timer: %s", strerror(errno));
	t->timer_at_ns = at;
}

/* Drops every client whose hello is overdue. */
static void mdgpud_sock_timer_event(void *data, uint32_t events)
{
	struct mdgpud_transport *t = data;
	struct mdgpud_sock_client *cl, *next;
	uint64_t now = mdgpud_sock_now_ns(), expirations;

	(void)events;
	while (read(t->timer_fd, &expirations, sizeof(expirations)) > 0)
		;
	for (cl = t->clients; cl; cl = next) {
		next = cl->next;
		if (!cl->deadline_ns || cl->deadline_ns > now)
			continue;
		mdgpud_dbg("client pid %d uid %u: %zu of %zu hello bytes in "
			   "%u ms: dropped", (int)cl->pid,
			   (unsigned int)cl->uid, cl->hello_len,
			   sizeof(cl->hello_buf), t->cfg->handshake_timeout_ms);
		mdgpud_limits_note_timeout(t->limits, cl->uid,
					   t->cfg->handshake_timeout_ms);
		mdgpud_sock_client_free(cl);
	}
	mdgpud_sock_timer_arm(t);
}

/*
 * After the handshake a client sends only descriptors for HOST_REGISTER;
 * anything else, or its end, ends the connection.
 */
static void mdgpud_sock_client_idle_event(struct mdgpud_sock_client *cl,
					  uint32_t events)
{
	if (!mdgpud_sock_recv_fds(cl) && !(events & (EPOLLHUP | EPOLLERR)))
		return;
	mdgpud_info("vgpu %u: client pid %d gone", mdgpud_vgpu_id(cl->vgpu),
		    (int)cl->pid);
	mdgpud_sock_client_free(cl);
}

static void mdgpud_sock_client_event(void *data, uint32_t events)
{
	struct mdgpud_sock_client *cl = data;
	struct mdgpu_sock_welcome w = {
		.magic = MDGPU_SOCK_MAGIC, .abi_version = MDGPU_ABI_VERSION,
	};
	struct mdgpu_sock_hello h;
	ssize_t n;
	int ret;

	if (cl->vgpu) {
		mdgpud_sock_client_idle_event(cl, events);
		return;
	}

	/* Non-blocking: takes what is there, the rest comes with later
	 * events (or never: the handshake timer drops the client). */
	n = read(cl->fd, cl->hello_buf + cl->hello_len,
		 sizeof(cl->hello_buf) - cl->hello_len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		mdgpud_sock_client_free(cl);
		return;
	}
	cl->hello_len += (size_t)n;
	if (cl->hello_len < sizeof(cl->hello_buf))
		return;
	cl->deadline_ns = 0;	/* the timer finds it done */
	if (cl->refuse) {
		/* Over its uid's limit since its accept (logged there). */
		w.status = cl->refuse;
		mdgpud_sock_send_welcome(cl, &w, false);
		mdgpud_sock_client_free(cl);
		return;
	}
	memcpy(&h, cl->hello_buf, sizeof(h));
	ret = mdgpud_sock_handshake(cl, &h, &w);
	w.status = ret;
	if (!ret)
		ret = mdgpud_sock_send_welcome(cl, &w, true);
	else
		mdgpud_sock_send_welcome(cl, &w, false);
	if (ret) {
		/* A refusal by the uid's limits was logged (rate limited)
		 * by core/limits.c. */
		if (!cl->limited)
			mdgpud_warn("client pid %d uid %u: handshake failed: "
				    "%s", (int)cl->pid, (unsigned int)cl->uid,
				    strerror(-ret));
		mdgpud_sock_client_free(cl);
		return;
	}
	mdgpud_info("vgpu %u: client pid %d uid %u connected, type %s",
		    w.vgpu_id, (int)cl->pid, (unsigned int)cl->uid, h.type);
}

/* Log at most once per limit_log_interval_s: "too many connections". */
static void mdgpud_sock_log_full(struct mdgpud_transport *t)
{
	uint64_t now = mdgpud_sock_now_ns();
	uint64_t interval = (uint64_t)t->cfg->limit_log_interval_s *
			    1000000000ULL;

	if (t->full_log_ns && now - t->full_log_ns < interval) {
		t->full_unlogged++;
		return;
	}
	mdgpud_warn("too many connections (%u live or in their handshake, "
		    "%u refused waiting): closing one; %" PRIu64 " closed "
		    "since the last message", t->nr_clients, t->nr_refused,
		    t->full_unlogged);
	t->full_log_ns = now;
	t->full_unlogged = 0;
}

static void mdgpud_sock_accept(void *data, uint32_t events)
{
	struct mdgpud_transport *t = data;
	struct mdgpud_sock_client *cl;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, ret;

	(void)events;
	fd = accept4(t->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			mdgpud_warn("accept: %s", strerror(errno));
		return;
	}
	/* Without its uid nothing can be charged: no service. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		mdgpud_warn("SO_PEERCRED: %s: closing a connection",
			    strerror(errno));
		close(fd);
		return;
	}
	cl = calloc(1, sizeof(*cl));
	if (!cl) {
		close(fd);
		return;
	}
	cl->t = t;
	cl->fd = fd;
	cl->ring_fd = cl->ap_fd = cl->db_fd = -1;
	cl->pid = cred.pid;
	cl->uid = cred.uid;
	ret = mdgpud_limits_charge(t->limits, cl->uid,
				   MDGPUD_LIMIT_CONNECTIONS, 1);
	if (ret) {
		/* Answered once its hello is in, if there is room to wait. */
		if (t->nr_refused >= mdgpud_sock_refused_max)
			goto drop;
		cl->refuse = ret;
	} else {
		cl->charged_conn = true;
		if (t->nr_clients >= t->cfg->max_vgpus +
				     mdgpud_sock_pending_max) {
			mdgpud_sock_log_full(t);
			goto drop;
		}
	}
	if (mdgpud_core_watch(t->core, fd, mdgpud_sock_client_event, cl))
		goto drop;
	cl->deadline_ns = mdgpud_sock_now_ns() +
			  (uint64_t)t->cfg->handshake_timeout_ms * 1000000ULL;
	cl->next = t->clients;
	t->clients = cl;
	if (cl->refuse)
		t->nr_refused++;
	else
		t->nr_clients++;
	if (!t->timer_at_ns || cl->deadline_ns < t->timer_at_ns)
		mdgpud_sock_timer_arm(t);
	return;
drop:
	if (cl->charged_conn)
		mdgpud_limits_uncharge(t->limits, cl->uid,
				       MDGPUD_LIMIT_CONNECTIONS, 1);
	close(fd);
	free(cl);
}

/* ---------------------------------------------------------------- */
/* Transport lifetime                                               */

static int mdgpud_sock_listen(struct mdgpud_transport *t)
{
	const struct mdgpud_config *cfg = t->cfg;
	const struct mdgpud_unix_listen_opts opts = {
		.mode = cfg->socket_mode,
		.group = cfg->socket_group,
		.backlog = mdgpud_sock_backlog,
		.log_prefix = "",
	};
	int fd = mdgpud_unix_listen(cfg->socket_path, &opts);

	if (fd < 0)
		return fd;
	/* mdgpud_unix_listen() refuses a path longer than t->path. */
	strcpy(t->path, cfg->socket_path);
	t->listen_fd = fd;
	return 0;
}

static void mdgpud_sock_destroy(struct mdgpud_transport *t)
{
	if (!t)
		return;
	while (t->clients)
		mdgpud_sock_client_free(t->clients);
	if (t->timer_fd >= 0) {
		mdgpud_core_unwatch(t->core, t->timer_fd);
		close(t->timer_fd);
	}
	if (t->listen_fd >= 0) {
		mdgpud_core_unwatch(t->core, t->listen_fd);
		close(t->listen_fd);
		unlink(t->path);
	}
	free(t);
}

static int mdgpud_sock_create(struct mdgpud_core *core,
			      const struct mdgpud_config *cfg,
			      struct mdgpud_transport **out)
{
	struct mdgpud_transport *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return -ENOMEM;
	t->core = core;
	t->cfg = mdgpud_core_config(core);
	t->limits = mdgpud_core_limits(core);
	t->listen_fd = -1;
	t->timer_fd = timerfd_create(CLOCK_MONOTONIC,
				     TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->timer_fd < 0) {
		ret = -errno;
		goto err;
	}
	ret = mdgpud_core_watch(core, t->timer_fd, mdgpud_sock_timer_event, t);
	if (ret) {
		close(t->timer_fd);
		t->timer_fd = -1;
		goto err;
	}
	ret = mdgpud_sock_listen(t);
	if (ret)
		goto err;
	ret = mdgpud_core_watch(core, t->listen_fd, mdgpud_sock_accept, t);
	if (ret)
		goto err;
	mdgpud_info("listening on %s (mode %04o%s%s)", t->path,
		    cfg->socket_mode, cfg->socket_group[0] ? ", group " : "",
		    cfg->socket_group);
	*out = t;
	return 0;
err:
	mdgpud_sock_destroy(t);
	return ret;
}

const struct mdgpud_transport_ops mdgpud_transport_socket = {
	.name = "socket",
	.create = mdgpud_sock_create,
	.destroy = mdgpud_sock_destroy,
};
