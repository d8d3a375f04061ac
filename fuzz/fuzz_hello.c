// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer harness: the socket transport's handshake (hello parsing and
 * validation, vGPU creation, the welcome), through the real transport of
 * a daemon core (sim backend) whose event loop this thread turns by hand
 * (mdgpud_core_poll()), so nothing runs concurrently.
 *
 * Input: the bytes a client sends after connecting (a struct
 * mdgpu_sock_hello is 64 bytes; fewer is a client that stops half way,
 * more is data after the handshake, which the daemon must refuse).  Each
 * input connects, sends, lets the daemon accept and answer, reads the
 * welcome, and disconnects.  Checked beyond the sanitizers: the welcome's
 * header and status; an accepted hello gets the three file descriptors,
 * memfds of the sizes the welcome states; after the disconnect no vGPU
 * is left.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fuzz.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"
#include "userspace-daemon/core/core_priv.h"	/* mdgpud_core_poll() */

static struct mdgpud_core *core;
static struct sockaddr_un addr = { .sun_family = AF_UNIX };
static char dir[64];

static void cleanup(void)
{
	mdgpud_core_destroy(core);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct mdgpud_config cfg;

	(void)argc;
	(void)argv;
	mdgpud_log_set(MDGPUD_LOG_DEBUG, fuzz_log_sink, NULL);
	snprintf(dir, sizeof(dir), "/tmp/mdgpud-fuzz-hello-XXXXXX");
	FUZZ_CHECK(mkdtemp(dir));
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/sock", dir);
	mdgpud_config_defaults(&cfg);
	strcpy(cfg.socket_path, addr.sun_path);
	cfg.sim_fb_mib = 8192;
	cfg.sim_realtime = 0;
	/* Small tables: each accepted hello allocates them (memtab, handles). */
	cfg.max_allocs = 64;
	cfg.max_handles = 64;
	FUZZ_CHECK(!mdgpud_core_create(&cfg, &core));
	atexit(cleanup);
	return 0;
}

static void check_welcome(const struct mdgpu_sock_welcome *w, int *fds,
			  int nfds)
{
	const struct mdgpud_config *cfg = mdgpud_core_config(core);
	struct stat st;

	FUZZ_CHECK(w->magic == MDGPU_SOCK_MAGIC &&
		   w->abi_version == MDGPU_ABI_VERSION);
	FUZZ_CHECK(w->status <= 0);
	if (w->status) {
		FUZZ_CHECK(nfds == 0);
		return;
	}
	FUZZ_CHECK(nfds == MDGPU_SOCK_NR_FDS);
	FUZZ_CHECK(w->ring_entries >= 2 &&
		   w->ring_entries <= cfg->ring_entries_max &&
		   !(w->ring_entries & (w->ring_entries - 1)));
	FUZZ_CHECK(w->ring_offset == MDGPU_SOCK_CTRL_SIZE &&
		   w->ring_size == MDGPU_SOCK_CTRL_SIZE +
				   MDGPU_RING_BYTES(w->ring_entries));
	FUZZ_CHECK(w->host_offset <= w->aperture_size &&
		   w->aperture_size - w->host_offset <=
		   ((uint64_t)cfg->host_mib_max << 20));
	FUZZ_CHECK(!fstat(fds[MDGPU_SOCK_FD_RING], &st) &&
		   (uint64_t)st.st_size == w->ring_size);
	FUZZ_CHECK(!fstat(fds[MDGPU_SOCK_FD_APERTURE], &st) &&
		   (uint64_t)st.st_size == w->aperture_size);
}

/* Read the welcome if one came; -EAGAIN when none did. */
static int read_welcome(int fd)
{
	struct mdgpu_sock_welcome w;
	int fds[MDGPU_SOCK_NR_FDS];
	union {
		char buf[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { &w, sizeof(w) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	int nfds = 0;
	ssize_t n;

	n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && errno == EAGAIN)
		return -EAGAIN;
	FUZZ_CHECK(n == (ssize_t)sizeof(w) && !(msg.msg_flags & MSG_CTRUNC));
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm;
	     cm = CMSG_NXTHDR(&msg, cm)) {
		FUZZ_CHECK(cm->cmsg_level == SOL_SOCKET &&
			   cm->cmsg_type == SCM_RIGHTS && !nfds);
		nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		FUZZ_CHECK(nfds == MDGPU_SOCK_NR_FDS);
		memcpy(fds, CMSG_DATA(cm), sizeof(fds));
	}
	check_welcome(&w, fds, nfds);
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(!connect(fd, (struct sockaddr *)&addr, sizeof(addr)));
	if (size)
		FUZZ_CHECK(send(fd, data, size, MSG_NOSIGNAL) ==
			   (ssize_t)size);
	mdgpud_core_poll(core, 0);	/* accept */
	mdgpud_core_poll(core, 0);	/* the hello, the welcome */
	/* A welcome exactly when the whole hello arrived. */
	FUZZ_CHECK((read_welcome(fd) == 0) ==
		   (size >= sizeof(struct mdgpu_sock_hello)));
	close(fd);
	mdgpud_core_poll(core, 0);	/* the disconnect */
	FUZZ_CHECK(mdgpud_core_nr_vgpus(core) == 0);
	return 0;
}
