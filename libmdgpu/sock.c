// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libmdgpu socket transport (uapi section 4): connect to mdgpud, send the
 * hello, receive the welcome with the ring memfd, the aperture memfd and the
 * doorbell eventfd, map them.  Doorbell: store the tail, kick the eventfd
 * only if the daemon said it sleeps.  Completion: spin on sq_head, then
 * sleep on it with FUTEX_WAIT (timed, so a dead daemon is noticed).
 * ctrl.status says when the vGPU's GPU context is lost (error messages).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "priv.h"

/* Pure busy-wait before the spin starts yielding the CPU. */
static const uint64_t mdgpu_sock_yield_after_ns = 20000;

/* How long one futex sleep lasts before the socket is checked again. */
static const long mdgpu_sock_recheck_ns = 20 * 1000 * 1000;

struct mdgpu_sock {
	int fd;
	int db_fd;
	struct mdgpu_sock_ctrl *ctrl;
	uint8_t *ring_map;
	size_t ring_map_size;
	uint8_t *ap;
	size_t ap_size;
	int ap_fd;		/* kept for mdgpu_sock_place_aperture() */
};

static int mdgpu_sock_recv_welcome(struct mdgpu *g, int fd,
				   struct mdgpu_sock_welcome *w,
				   int fds[MDGPU_SOCK_NR_FDS], int *nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * MDGPU_SOCK_NR_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { w, sizeof(*w) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	ssize_t n;

	*nfds = 0;
	do {
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return mdgpu_set_error(g, -errno, "receiving the welcome");
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS) {
			int k = (int)((cm->cmsg_len - CMSG_LEN(0)) /
				      sizeof(int));

			if (k > MDGPU_SOCK_NR_FDS)
				k = MDGPU_SOCK_NR_FDS;
			memcpy(fds, CMSG_DATA(cm), (size_t)k * sizeof(int));
			*nfds = k;
		}
	}
	if (n != (ssize_t)sizeof(*w) || (msg.msg_flags & MSG_CTRUNC))
		return mdgpu_set_error(g, -EPROTO, "short welcome from mdgpud");
	return 0;
}

static int mdgpu_sock_map(int fd, size_t size, uint8_t **out)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st))
		return -errno;
	if ((uint64_t)st.st_size < size)
		return -EPROTO;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*out = p;
	return 0;
}

static void mdgpu_sock_close(struct mdgpu *g)
{
	struct mdgpu_sock *s = g->tpriv;

	if (!s)
		return;
	if (s->ring_map)
		munmap(s->ring_map, s->ring_map_size);
	if (s->ap)
		munmap(s->ap, s->ap_size);
	if (s->db_fd >= 0)
		close(s->db_fd);
	if (s->ap_fd >= 0)
		close(s->ap_fd);
	if (s->fd >= 0)
		close(s->fd);	/* the daemon destroys the vGPU */
	free(s);
	g->tpriv = NULL;
}

static int mdgpu_sock_open(struct mdgpu *g, const struct mdgpu_open_opts *o)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct mdgpu_sock_hello h = { 0 };
	struct mdgpu_sock_welcome w;
	int fds[MDGPU_SOCK_NR_FDS] = { -1, -1, -1 };
	const char *path = o->path, *type = o->type ? o->type : "1g";
	struct mdgpu_sock *s;
	int nfds = 0, ret;
	ssize_t n;

	if (!path)
		path = getenv("MDGPU_SOCKET");
	if (!path)
		path = MDGPU_DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path))
		return mdgpu_set_error(g, -ENAMETOOLONG, "socket path");
	if (strlen(type) >= sizeof(h.type))
		return mdgpu_set_error(g, -EINVAL, "type name");
	strcpy(sa.sun_path, path);

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = s->db_fd = s->ap_fd = -1;
	g->tpriv = s;
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		ret = mdgpu_set_error(g, -errno, "socket");
		goto err;
	}
	if (connect(s->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = mdgpu_set_error(g, -errno, "connect %s", path);
		goto err;
	}
	h.magic = MDGPU_SOCK_MAGIC;
	h.abi_version = MDGPU_ABI_VERSION;
	strcpy(h.type, type);
	h.ring_entries = o->ring_entries;
	h.host_bytes = o->host_bytes;
	n = send(s->fd, &h, sizeof(h), MSG_NOSIGNAL);
	if (n != (ssize_t)sizeof(h)) {
		ret = mdgpu_set_error(g, n < 0 ? -errno : -EPROTO, "hello");
		goto err;
	}
	ret = mdgpu_sock_recv_welcome(g, s->fd, &w, fds, &nfds);
	if (ret)
		goto err_fds;
	if (w.magic != MDGPU_SOCK_MAGIC ||
	    (w.abi_version >> 16) != MDGPU_ABI_MAJOR) {
		ret = mdgpu_set_error(g, -EPROTO, "welcome: bad magic/ABI");
		goto err_fds;
	}
	if (w.status) {
		ret = mdgpu_set_error(g, w.status > 0 ? -EPROTO : w.status,
				      "mdgpud refused a vGPU of type '%s'",
				      type);
		goto err_fds;
	}
	if (nfds != MDGPU_SOCK_NR_FDS || !w.ring_entries ||
	    (w.ring_entries & (w.ring_entries - 1)) ||
	    w.ring_offset < MDGPU_SOCK_CTRL_SIZE ||
	    w.ring_size != w.ring_offset + MDGPU_RING_BYTES(w.ring_entries) ||
	    w.host_offset > w.aperture_size) {
		ret = mdgpu_set_error(g, -EPROTO, "welcome: bad ring layout");
		goto err_fds;
	}
	s->ring_map_size = (size_t)w.ring_size;
	s->ap_size = (size_t)w.aperture_size;
	ret = mdgpu_sock_map(fds[MDGPU_SOCK_FD_RING], s->ring_map_size,
			     &s->ring_map);
	if (!ret)
		ret = mdgpu_sock_map(fds[MDGPU_SOCK_FD_APERTURE], s->ap_size,
				     &s->ap);
	if (ret) {
		mdgpu_set_error(g, ret, "mapping the ring/aperture");
		goto err_fds;
	}
	close(fds[MDGPU_SOCK_FD_RING]);
	s->ap_fd = fds[MDGPU_SOCK_FD_APERTURE];
	s->db_fd = fds[MDGPU_SOCK_FD_DOORBELL];

	s->ctrl = (struct mdgpu_sock_ctrl *)s->ring_map;
	g->entries = w.ring_entries;
	g->sq = s->ring_map + w.ring_offset + MDGPU_RING_SQ_OFFSET;
	g->cq = s->ring_map + w.ring_offset +
		MDGPU_RING_CQ_OFFSET(w.ring_entries);
	g->aperture = s->ap;
	g->aperture_size = w.aperture_size;
	g->host_off = w.host_offset;
	g->tail = g->reaped = __atomic_load_n(&s->ctrl->sq_tail,
					      __ATOMIC_ACQUIRE);
	g->info = (struct mdgpu_info){
		.vgpu_id = w.vgpu_id, .type_id = w.type_id,
		.fb_quota = w.fb_quota, .aperture_size = w.aperture_size,
		.ring_entries = w.ring_entries, .backend = w.backend,
		.sm_count = w.sm_count, .abi_version = w.abi_version,
	};
	return 0;

err_fds:
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
err:
	mdgpu_sock_close(g);
	return ret;
}

/*
 * The aperture mapped again at addr, from the memfd kept open for it.
 * MAP_FIXED_NOREPLACE never replaces a mapping of this process; a
 * kernel older than 4.17 takes it as a hint and may map elsewhere, which
 * counts as taken.
 */
static int mdgpu_sock_place_aperture(struct mdgpu *g, uint64_t addr)
{
	struct mdgpu_sock *s = g->tpriv;
	void *want = (void *)(uintptr_t)addr, *p;

	if ((uint64_t)(uintptr_t)addr != addr)
		return -EINVAL;
	if (want == s->ap)
		return 0;
	p = mmap(want, s->ap_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, s->ap_fd, 0);
	if (p == MAP_FAILED)
		return errno == EEXIST ? -EEXIST : -errno;
	if (p != want) {
		munmap(p, s->ap_size);
		return -EEXIST;
	}
	munmap(s->ap, s->ap_size);
	s->ap = p;
	g->aperture = p;
	return 0;
}

/* One struct mdgpu_sock_fd_msg with fd (uapi section 4). */
static int mdgpu_sock_send_fd(struct mdgpu *g, int fd, uint32_t token)
{
	struct mdgpu_sock *s = g->tpriv;
	struct mdgpu_sock_fd_msg m = { .magic = MDGPU_SOCK_FD_MAGIC,
				       .token = token };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	ssize_t n;

	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	do {
		n = sendmsg(s->fd, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EPIPE ? -ENODEV : -errno;
	return n == (ssize_t)sizeof(m) ? 0 : -EPROTO;
}

/* Stores value in the client's word (release), then wakes the daemon
 * if it sleeps: the doorbell, and HOST_FUNC's host_done. */
static void mdgpu_sock_ring(struct mdgpu_sock *s, uint32_t *word,
			    uint32_t value)
{
	uint64_t one = 1;

	__atomic_store_n(word, value, __ATOMIC_RELEASE);
	atomic_thread_fence(memory_order_seq_cst);
	if (__atomic_load_n(&s->ctrl->daemon_sleeping, __ATOMIC_RELAXED)) {
		ssize_t r = write(s->db_fd, &one, sizeof(one));

		(void)r;	/* a full counter still wakes the daemon */
	}
}

static void mdgpu_sock_doorbell(struct mdgpu *g, uint32_t tail)
{
	struct mdgpu_sock *s = g->tpriv;

	mdgpu_sock_ring(s, &s->ctrl->sq_tail, tail);
}

/* Any thread: it touches only ctrl.host_done and the eventfd. */
static void mdgpu_sock_host_fn_done(struct mdgpu *g, uint32_t value)
{
	struct mdgpu_sock *s = g->tpriv;

	mdgpu_sock_ring(s, &s->ctrl->host_done, value);
}

static uint32_t mdgpu_sock_head(struct mdgpu *g)
{
	struct mdgpu_sock *s = g->tpriv;

	return __atomic_load_n(&s->ctrl->sq_head, __ATOMIC_ACQUIRE);
}

static bool mdgpu_sock_done(uint32_t head, uint32_t target)
{
	return (int32_t)(head - target) >= 0;
}

/* 0 while the daemon serves us, else the error the caller reports. */
static int mdgpu_sock_health(struct mdgpu_sock *s, bool check_socket)
{
	uint32_t st = __atomic_load_n(&s->ctrl->status, __ATOMIC_ACQUIRE);
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	if (st & MDGPU_STATUS_BACKEND_LOST)
		return -ENODEV;
	if (st & MDGPU_STATUS_RING_ERROR)
		return -EPROTO;
	if (check_socket && poll(&p, 1, 0) > 0 &&
	    (p.revents & (POLLIN | POLLHUP | POLLERR)))
		return -ENODEV;	/* EOF: the daemon is gone */
	return 0;
}

static int mdgpu_sock_wait(struct mdgpu *g, uint32_t target)
{
	struct mdgpu_sock *s = g->tpriv;
	uint32_t *head = &s->ctrl->sq_head;
	uint64_t spin_until = mdgpu_now_ns() +
		__atomic_load_n(&g->spin_us, __ATOMIC_RELAXED) * 1000ULL;
	unsigned int iter = 0;
	int ret = 0;

	uint64_t yield_from = mdgpu_now_ns() + mdgpu_sock_yield_after_ns;
	bool yield = false;

	while (!mdgpu_sock_done(__atomic_load_n(head, __ATOMIC_ACQUIRE),
				target)) {
		if ((++iter & 255) == 0 || yield) {
			uint64_t now = mdgpu_now_ns();

			ret = mdgpu_sock_health(s, false);
			if (ret || now > spin_until)
				break;
			yield = now > yield_from;
		}
		/* Past the pure spin, let the daemon have this CPU if the
		 * machine is oversubscribed. */
		if (yield)
			sched_yield();
		else
			mdgpu_cpu_relax();
	}
	/* client_waiting counts the threads asleep (mdgpu_wait_run() lets
	 * several wait at once); the daemon wakes while it is not 0. */
	if (!ret && !mdgpu_sock_done(__atomic_load_n(head, __ATOMIC_ACQUIRE),
				     target)) {
		__atomic_fetch_add(&s->ctrl->client_waiting, 1,
				   __ATOMIC_SEQ_CST);
		while (!ret) {
			struct timespec ts = { 0, mdgpu_sock_recheck_ns };
			uint32_t h = __atomic_load_n(head, __ATOMIC_SEQ_CST);

			if (mdgpu_sock_done(h, target))
				break;
			ret = mdgpu_sock_health(s, false);
			if (ret)
				break;
			if (syscall(SYS_futex, head, FUTEX_WAIT, h, &ts, NULL,
				    0) && errno == ETIMEDOUT)
				ret = mdgpu_sock_health(s, true);
		}
		__atomic_fetch_sub(&s->ctrl->client_waiting, 1,
				   __ATOMIC_RELAXED);
	}
	/* Completed work stays valid even if the daemon went away after. */
	if (mdgpu_sock_done(__atomic_load_n(head, __ATOMIC_ACQUIRE), target))
		return 0;
	return ret;
}

static uint32_t mdgpu_sock_status(struct mdgpu *g)
{
	struct mdgpu_sock *s = g->tpriv;

	return __atomic_load_n(&s->ctrl->status, __ATOMIC_ACQUIRE);
}

const struct mdgpu_tops mdgpu_tops_socket = {
	.name = "socket",
	.open = mdgpu_sock_open,
	.close = mdgpu_sock_close,
	.doorbell = mdgpu_sock_doorbell,
	.head = mdgpu_sock_head,
	.wait = mdgpu_sock_wait,
	.concurrent_wait = true,
	.status = mdgpu_sock_status,
	.place_aperture = mdgpu_sock_place_aperture,
	.send_fd = mdgpu_sock_send_fd,
	.host_fn_done = mdgpu_sock_host_fn_done,
};
