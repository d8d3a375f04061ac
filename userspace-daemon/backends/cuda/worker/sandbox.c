// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The worker sandbox, applied by the worker to itself right after exec
 * and before it loads libcuda (Documentation/daemon.md, "Worker
 * sandbox"), in this order, each step needing what the previous ones
 * still have:
 *
 *   1. network namespace (needs CAP_SYS_ADMIN): a new, empty one, so
 *      that abstract unix sockets and the like are its own; mount
 *      namespace (CAP_SYS_ADMIN too): a new empty /tmp (HOME points
 *      there) and, with worker_dev host or private, / read-only and
 *      private, and a new /dev holding only null, zero, urandom and the
 *      nvidia* nodes (private); with worker_dev none only the /tmp;
 *   2. ids: the supplementary groups (none, or the one that may open
 *      the device nodes), then the worker gid, then the worker uid (all
 *      of real, effective, saved; its own, or one all workers share);
 *      not dumpable;
 *   3. PR_SET_NO_NEW_PRIVS;
 *   4. the seccomp allowlist (syscalls outside it kill the process), or
 *      in learn/audit mode a reporter child that logs them and lets them
 *      run (SECCOMP_RET_USER_NOTIF + SECCOMP_USER_NOTIF_FLAG_CONTINUE).
 *
 * Mode "required": the first step that fails fails the worker with its
 * reason.  "best-effort": a failed step is reported on stderr and the
 * next is tried.  The supervisor checks the result in /proc either way.
 */
#include "worker.h"
#include "sandbox.h"
#include "mdgpud/backend.h"
#include "common/words.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* mount_setattr(2) (Linux 5.12), without <linux/mount.h>, which clashes
 * with <sys/mount.h> on some glibc versions. */
#ifndef __NR_mount_setattr
#define __NR_mount_setattr		442
#endif
#define MDGPUD_SB_MOUNT_ATTR_RDONLY	0x00000001ull
#define MDGPUD_SB_AT_RECURSIVE		0x8000

struct mdgpud_sb_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* The device nodes besides /dev/nvidia*. */
static const char *const mdgpud_sb_dev_nodes[] = { "null", "zero", "urandom" };
#define MDGPUD_SB_DEV_MAX		64

/* Private tmpfs sizes: /dev holds only mount points, /tmp the driver's
 * files (e.g. its JIT cache under $HOME). */
#define MDGPUD_SB_DEV_OPTS		"mode=0755,size=64k"
#define MDGPUD_SB_TMP_OPTS		"mode=01777,size=64m"
#define MDGPUD_SB_JIT_CACHE_MAX		"33554432"	/* bytes */

enum mdgpud_sb_seccomp { SB_ENFORCE, SB_LEARN, SB_AUDIT };

struct mdgpud_sb {
	struct mdgpud_worker *w;
	int required;
	uid_t uid;
	gid_t gid;
	gid_t group;				/* supplementary, or NO_GROUP */
	enum mdgpud_sb_seccomp seccomp;
	int dev;				/* enum mdgpud_worker_dev */
	int net;				/* enum mdgpud_worker_net */
	int tmp;				/* enum mdgpud_worker_tmp */
	bool tmp_made;				/* a private /tmp is mounted */
	char allow[MDGPUD_SANDBOX_ARG_MAX];	/* extra names, ':' separated */
};

/*
 * The allowlist: what glibc, the dynamic loader, this worker and the
 * fake libcuda use (measured in CI), plus what NVIDIA's driver is known
 * to use (ioctl and mmap on /dev/nvidia*, threads, NUMA policy, sockets
 * to nvidia-persistenced and MPS, /proc and /sys reads), confirmed or
 * extended on the GPU machine with worker_seccomp = learn / audit
 * (tests/gpu/sandbox-on-gpu.sh).  Names unknown to this architecture are
 * skipped.  Syscalls with argument rules are in mdgpud_sb_rules().
 */
static const char *const mdgpud_sb_allow[] = {
	/* files: read anything the mounts let it, write only in /tmp */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv",
	"pwritev", "preadv2", "pwritev2", "open", "openat", "close",
	"close_range", "lseek", "dup", "dup2", "dup3", "stat",
	"lstat", "fstat", "newfstatat", "statx", "statfs", "fstatfs",
	"access", "faccessat", "faccessat2", "readlink", "readlinkat",
	"getdents", "getdents64", "getcwd", "mkdir", "mkdirat", "unlink",
	"unlinkat", "rename", "renameat", "renameat2", "rmdir", "ftruncate",
	"fallocate", "fsync", "fdatasync", "flock", "umask", "fchmod",
	"fadvise64", "utimensat", "pipe", "pipe2", "memfd_create",
	/* NVIDIA's driver 580 in cuInit (measured on the H100 with
	 * worker_seccomp = learn): a symlink beside a listening unix
	 * socket of its own */
	"symlink", "symlinkat", "bind", "listen", "accept", "accept4",
	/* memory */
	"mmap", "munmap", "mprotect", "mremap", "madvise", "brk", "mlock",
	"mlock2", "munlock", "mlockall", "munlockall", "mincore", "msync",
	"membarrier", "mbind", "get_mempolicy", "set_mempolicy",
	/* threads, time, scheduling (clone is in the rules) */
	"futex", "futex_waitv", "set_robust_list", "get_robust_list", "rseq",
	"set_tid_address", "sched_yield", "sched_getaffinity",
	"sched_setaffinity", "sched_getparam", "sched_setparam",
	"sched_getscheduler", "sched_setscheduler", "sched_getattr",
	"sched_get_priority_max", "sched_get_priority_min", "getpriority",
	"setpriority", "nanosleep", "clock_nanosleep", "clock_gettime",
	"clock_getres", "gettimeofday", "time", "getcpu",
	/* signals (kill and tgkill are in the rules) */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
	"rt_sigtimedwait", "rt_sigsuspend", "rt_sigpending",
	"restart_syscall", "pause", "alarm", "getitimer", "setitimer",
	"timer_create", "timer_settime", "timer_gettime", "timer_getoverrun",
	"timer_delete", "timerfd_create", "timerfd_settime",
	"timerfd_gettime", "signalfd4",
	/* waiting on fds */
	"poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1",
	"epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd",
	"eventfd2",
	/* about itself */
	"getpid", "gettid", "getppid", "getpgrp", "getpgid", "getsid",
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid",
	"getgroups", "capget", "uname", "sysinfo", "getrlimit", "getrusage",
	"times", "prctl", "getrandom", "exit", "exit_group", "wait4",
	"waitid",
	/* unix sockets (socket() itself is in the rules); fd passing */
	"socketpair", "connect", "sendto", "recvfrom", "sendmsg", "recvmsg",
	"sendmmsg", "recvmmsg", "shutdown", "getsockname", "getpeername",
	"getsockopt", "setsockopt",
};

#define MDGPUD_SB_N(a)		(sizeof(a) / sizeof((a)[0]))

/* Namespace flags a worker's clone() may not ask for. */
#define MDGPUD_SB_CLONE_NS	(CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | \
				 CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC | \
				 CLONE_NEWCGROUP)

static int mdgpud_sb_fail(struct mdgpud_sb *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * A step failed: the reason goes to the supervisor (required) or to
 * stderr (best-effort, where the supervisor's /proc check logs the
 * downgrade).  Returns -err when required, else 0.
 */
static int mdgpud_sb_fail(struct mdgpud_sb *s, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (s->required) {
		mdgpud_worker_err_msg(s->w, "sandbox: %s: %s (worker_sandbox = "
				      "required)", msg, strerror(err));
		return -err;
	}
	fprintf(stderr, "mdgpud-worker %d: sandbox: %s: %s (best-effort: "
		"going on without it)\n", (int)getpid(), msg, strerror(err));
	return 0;
}

static int mdgpud_sb_parse(struct mdgpud_sb *s, const char *spec)
{
	static const char *const seccomp_words[] = {
		"enforce", "learn", "audit",
	};
	static const char *const dev_words[] = { "none", "host", "private" };
	static const char *const net_words[] = { "private", "host" };
	static const char *const tmp_words[] = { "private", "shared" };
	int seccomp;
	char buf[MDGPUD_SANDBOX_ARG_MAX], *save = NULL, *f[9] = { 0 };
	unsigned long uid, gid, group;
	char *end;
	int n = 0;

	if (strlen(spec) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, spec);
	for (char *t = strtok_r(buf, ",", &save); t && n < 9;
	     t = strtok_r(NULL, ",", &save))
		f[n++] = t;
	if (n < 8)
		return -EINVAL;
	if (!strcmp(f[0], "required"))
		s->required = 1;
	else if (strcmp(f[0], "best-effort"))
		return -EINVAL;
	uid = strtoul(f[1], &end, 10);
	if (*end || !uid || uid >= UINT32_MAX)
		return -EINVAL;
	gid = strtoul(f[2], &end, 10);
	if (*end || !gid || gid >= UINT32_MAX)
		return -EINVAL;
	s->uid = (uid_t)uid;
	s->gid = (gid_t)gid;
	s->group = MDGPUD_SANDBOX_NO_GROUP;
	if (strcmp(f[3], "-")) {
		group = strtoul(f[3], &end, 10);
		if (*end || !group || group >= UINT32_MAX)
			return -EINVAL;
		s->group = (gid_t)group;
	}
	/* The word lists in their enums' order. */
	if (mdgpu_word_index(f[4], seccomp_words, MDGPUD_SB_N(seccomp_words),
			     &seccomp) ||
	    mdgpu_word_index(f[5], dev_words, MDGPUD_SB_N(dev_words), &s->dev) ||
	    mdgpu_word_index(f[6], net_words, MDGPUD_SB_N(net_words), &s->net) ||
	    mdgpu_word_index(f[7], tmp_words, MDGPUD_SB_N(tmp_words), &s->tmp))
		return -EINVAL;
	s->seccomp = (enum mdgpud_sb_seccomp)seccomp;
	if (f[8])
		snprintf(s->allow, sizeof(s->allow), "%s", f[8]);
	return 0;
}

/*
 * O_PATH descriptors of the device nodes the worker may see, taken
 * before /dev is replaced; names[i] is fds[i]'s name under /dev.
 */
static int mdgpud_sb_dev_collect(int fds[], char names[][64], int *n)
{
	DIR *d;
	struct dirent *de;

	*n = 0;
	for (size_t i = 0; i < sizeof(mdgpud_sb_dev_nodes) /
			       sizeof(mdgpud_sb_dev_nodes[0]); i++) {
		char path[80];

		snprintf(path, sizeof(path), "/dev/%s", mdgpud_sb_dev_nodes[i]);
		fds[*n] = open(path, O_PATH | O_CLOEXEC);
		if (fds[*n] < 0)
			return -errno;
		snprintf(names[(*n)++], 64, "%s", mdgpud_sb_dev_nodes[i]);
	}
	d = opendir("/dev");
	if (!d)
		return -errno;
	while ((de = readdir(d)) && *n < MDGPUD_SB_DEV_MAX) {
		char path[300];

		if (strncmp(de->d_name, "nvidia", 6) ||
		    strlen(de->d_name) >= 64)
			continue;
		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		/* Nodes and directories (nvidia-caps), never a symlink. */
		fds[*n] = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fds[*n] < 0)
			continue;
		snprintf(names[(*n)++], 64, "%s", de->d_name);
	}
	closedir(d);
	return 0;
}

/*
 * The private /tmp hides the host's.  A driver library the loader finds
 * under /tmp (LD_LIBRARY_PATH; a build tree there, CI's fake driver) must
 * stay reachable: the top directory under /tmp of each such entry (the
 * loader resolves the entry as written, "..", symlinks and all) is
 * opened O_PATH before, and bound read-only at the same path inside the
 * new /tmp.
 */
#define MDGPUD_SB_TMP_LIBS	8

/* "/tmp/<first component>" of an absolute path under /tmp into top. */
static bool mdgpud_sb_tmp_top(const char *path, char top[PATH_MAX])
{
	const char *end;

	if (strncmp(path, "/tmp/", 5) || !path[5] || path[5] == '/')
		return false;
	end = strchr(path + 5, '/');
	snprintf(top, PATH_MAX, "%.*s", end ? (int)(end - path) : PATH_MAX - 1,
		 path);
	return strcmp(top + 5, ".") && strcmp(top + 5, "..");
}

static int mdgpud_sb_tmp_libs_collect(int fds[], char paths[][PATH_MAX])
{
	const char *env = getenv("LD_LIBRARY_PATH");
	const char *mps = getenv("CUDA_MPS_PIPE_DIRECTORY");
	char buf[4096], real[PATH_MAX], *save = NULL;
	int n = 0;

	/*
	 * A spatial worker's MPS pipe directory (Documentation/spatial.md)
	 * under /tmp stays reachable the same way: connecting to the
	 * control socket needs no writable mount.
	 */
	if (!mps && !env)
		return 0;
	if ((size_t)snprintf(buf, sizeof(buf), "%s%s%s", mps ? mps : "",
			     mps && env ? ":" : "", env ? env : "") >=
	    sizeof(buf))
		return 0;
	for (char *t = strtok_r(buf, ":", &save);
	     t && n < MDGPUD_SB_TMP_LIBS - 1; t = strtok_r(NULL, ":", &save)) {
		const char *cand[2] = { t, realpath(t, real) ? real : "" };

		for (int k = 0; k < 2 && n < MDGPUD_SB_TMP_LIBS; k++) {
			bool dup = false;

			if (!mdgpud_sb_tmp_top(cand[k], paths[n]))
				continue;
			for (int j = 0; j < n; j++)
				dup |= !strcmp(paths[j], paths[n]);
			if (dup)
				continue;
			fds[n] = open(paths[n],
				      O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fds[n] >= 0)
				n++;
		}
	}
	return n;
}

static int mdgpud_sb_tmp_libs_bind(const int fds[], char paths[][PATH_MAX],
				   int n)
{
	for (int i = 0; i < n; i++) {
		char src[64];

		/* One level inside the new, empty, writable /tmp. */
		if (mkdir(paths[i], 0755) && errno != EEXIST)
			return -errno;
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fds[i]);
		if (mount(src, paths[i], NULL, MS_BIND, NULL) ||
		    mount(NULL, paths[i], NULL,
			  MS_BIND | MS_REMOUNT | MS_RDONLY, NULL))
			return -errno;
	}
	return 0;
}

/* Binds each collected node (or directory) onto the new /dev. */
static int mdgpud_sb_dev_bind(const int fds[], char names[][64], int n)
{
	for (int i = 0; i < n; i++) {
		char src[64], dst[80];
		struct stat st;
		int fd;

		if (fstat(fds[i], &st))
			return -errno;
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fds[i]);
		snprintf(dst, sizeof(dst), "/dev/%s", names[i]);
		if (S_ISDIR(st.st_mode)) {
			if (mkdir(dst, 0755))
				return -errno;
		} else {
			fd = open(dst, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
				  0600);
			if (fd < 0)
				return -errno;
			close(fd);
		}
		if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL))
			return -errno;
	}
	return 0;
}

static int mdgpud_sb_mountns(struct mdgpud_sb *s)
{
	struct mdgpud_sb_mount_attr ro = {
		.attr_set = MDGPUD_SB_MOUNT_ATTR_RDONLY,
	};
	int fds[MDGPUD_SB_DEV_MAX], n = 0, ret, host_ns;
	int lib_fds[MDGPUD_SB_TMP_LIBS], nlibs = 0;
	static char lib_paths[MDGPUD_SB_TMP_LIBS][PATH_MAX];
	char names[MDGPUD_SB_DEV_MAX][64];
	const char *step;

	/* To go back to if a later step fails (best-effort). */
	host_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (host_ns < 0)
		return mdgpud_sb_fail(s, errno, "open /proc/self/ns/mnt");
	if (unshare(CLONE_NEWNS)) {
		ret = errno;
		close(host_ns);
		return mdgpud_sb_fail(s, ret, "unshare(CLONE_NEWNS)");
	}
	/* Nothing the worker mounts may reach the host, and back. */
	step = "make / private";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		goto fail_errno;
	if (s->dev == MDGPUD_WORKER_DEV_PRIVATE) {
		step = "open the /dev nodes";
		ret = mdgpud_sb_dev_collect(fds, names, &n);
		if (ret)
			goto fail;
		step = "tmpfs on /dev";
		if (mount("tmpfs", "/dev", "tmpfs",
			  MS_NOSUID | MS_NOEXEC | MS_NODEV, MDGPUD_SB_DEV_OPTS))
			goto fail_errno;
		step = "bind the nodes into /dev";
		ret = mdgpud_sb_dev_bind(fds, names, n);
		if (ret)
			goto fail;
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	n = 0;
	/*
	 * Everything read-only, /dev included (its nodes stay usable:
	 * opening a device for writing needs no writable mount).  Not with
	 * worker_dev = none: NVIDIA's driver fails cuInit once any mount is
	 * made read-only (Documentation/daemon.md, "Worker sandbox").
	 */
	step = "mount_setattr(/, AT_RECURSIVE, RDONLY)";
	if (s->dev != MDGPUD_WORKER_DEV_NONE &&
	    syscall(__NR_mount_setattr, AT_FDCWD, "/", MDGPUD_SB_AT_RECURSIVE,
		    &ro, sizeof(ro)))
		goto fail_errno;
	step = "keep the driver libraries under /tmp";
	nlibs = mdgpud_sb_tmp_libs_collect(lib_fds, lib_paths);
	step = "tmpfs on /tmp";
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  MDGPUD_SB_TMP_OPTS))
		goto fail_errno;
	step = "bind the driver libraries under /tmp";
	ret = mdgpud_sb_tmp_libs_bind(lib_fds, lib_paths, nlibs);
	for (int i = 0; i < nlibs; i++)
		close(lib_fds[i]);
	nlibs = 0;
	if (ret)
		goto fail;
	/* The driver's per-user files (JIT cache) land in the private,
	 * writable, per-worker /tmp: never shared with another tenant, and
	 * gone with the worker.  The cache is kept to half of that /tmp
	 * unless the environment sizes it. */
	setenv("HOME", "/tmp", 1);
	setenv("CUDA_CACHE_MAXSIZE", MDGPUD_SB_JIT_CACHE_MAX, 0);
	if (chdir("/"))
		goto fail_errno;
	close(host_ns);
	s->tmp_made = true;
	return 0;

fail_errno:
	ret = -errno;
fail:
	for (int i = 0; i < n; i++)
		close(fds[i]);
	for (int i = 0; i < nlibs; i++)
		close(lib_fds[i]);
	/*
	 * Half a namespace (an empty /dev, say) would break the driver and
	 * still look like a namespace to the supervisor: best-effort goes
	 * back to the host's, and the supervisor reports mountns missing.
	 */
	if (!s->required && (setns(host_ns, CLONE_NEWNS) || chdir("/"))) {
		int err = errno;

		/* Stuck in half a namespace: fail even best-effort. */
		close(host_ns);
		mdgpud_worker_err_msg(s->w, "sandbox: mount namespace: %s: %s; "
				      "going back to the host's: %s", step,
				      strerror(-ret), strerror(err));
		return -err;
	}
	close(host_ns);
	return mdgpud_sb_fail(s, -ret, "mount namespace: %s", step);
}

static int mdgpud_sb_ids(struct mdgpud_sb *s)
{
	uid_t r, e, sv;
	gid_t gr, ge, gs;

	/* One supplementary group at most: the one that may open the
	 * device nodes (worker_group) when each worker has its own gid. */
	if (s->group != MDGPUD_SANDBOX_NO_GROUP ? setgroups(1, &s->group) :
						  setgroups(0, NULL))
		return mdgpud_sb_fail(s, errno, "setgroups(%s)",
				      s->group != MDGPUD_SANDBOX_NO_GROUP ?
				      "1" : "0");
	if (setresgid(s->gid, s->gid, s->gid))
		return mdgpud_sb_fail(s, errno, "setresgid(%u)",
				      (unsigned)s->gid);
	if (setresuid(s->uid, s->uid, s->uid))
		return mdgpud_sb_fail(s, errno, "setresuid(%u)",
				      (unsigned)s->uid);
	if (getresuid(&r, &e, &sv) || getresgid(&gr, &ge, &gs) ||
	    r != s->uid || e != s->uid || sv != s->uid || gr != s->gid ||
	    ge != s->gid || gs != s->gid)
		return mdgpud_sb_fail(s, EPERM, "ids did not change");
	/*
	 * Not dumpable (the kernel already does it on the uid change unless
	 * fs.suid_dumpable = 1): no core dump with tenant data, and no
	 * ptrace or /proc/PID/mem of it by a process of its own uid, which
	 * is every other worker when they share one (worker_uid_count = 0)
	 * and, with a uid each, a process it forked.
	 */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return 0;
}

/* One rule; on failure *bad names the syscall. */
static int mdgpud_sb_rule(scmp_filter_ctx ctx, uint32_t action,
			  const char *name, unsigned int n,
			  const struct scmp_arg_cmp *cmp, const char **bad)
{
	int nr = seccomp_syscall_resolve_name(name);
	int ret;

	if (nr == __NR_SCMP_ERROR) {
		*bad = name;
		return -ENOENT;
	}
	if (nr < 0)	/* not a syscall of this architecture */
		return 0;
	ret = seccomp_rule_add_array(ctx, action, nr, n, cmp);
	if (ret)
		*bad = name;
	return ret;
}

/* Allows `name` for the values [lo, hi) of argument `arg`'s low 32 bits,
 * as aligned power-of-two blocks (the way a CIDR range is written). */
static int mdgpud_sb_allow_range(scmp_filter_ctx ctx, const char *name,
				 unsigned int arg, uint64_t lo, uint64_t hi,
				 const char **bad)
{
	int ret = 0;

	while (!ret && lo < hi) {
		uint64_t size = lo ? lo & -lo : 1ull << 32;
		struct scmp_arg_cmp c;

		while (lo + size > hi)
			size >>= 1;
		c = (struct scmp_arg_cmp){
			arg, SCMP_CMP_MASKED_EQ, (uint32_t)~(size - 1), lo,
		};
		ret = mdgpud_sb_rule(ctx, SCMP_ACT_ALLOW, name, 1, &c, bad);
		lo += size;
	}
	return ret;
}

/*
 * Allows syscall `name` for every value of argument `arg` but the `n` in
 * `refused` (sorted, ascending), which are left to other rules or to the
 * default action.  libseccomp takes one comparison per argument and rule
 * and gives no order between overlapping rules of different actions, so
 * the allowed values are written as disjoint rules, and a refused value
 * can have its own action (EPERM) without depending on such an order.
 * Only the low 32 bits are compared (masked): the kernel reads ioctl's
 * and fcntl's command as an unsigned int, so bits above it must not
 * carry a refused command past the filter.
 */
static int mdgpud_sb_allow_except(scmp_filter_ctx ctx, const char *name,
				  unsigned int arg, const uint32_t *refused,
				  size_t n, const char **bad)
{
	uint64_t lo = 0;
	int ret = 0;

	for (size_t i = 0; !ret && i < n; i++) {
		ret = mdgpud_sb_allow_range(ctx, name, arg, lo, refused[i],
					    bad);
		lo = (uint64_t)refused[i] + 1;
	}
	if (!ret)
		ret = mdgpud_sb_allow_range(ctx, name, arg, lo, 1ull << 32,
					    bad);
	return ret;
}

/*
 * Who may receive the SIGIO of an fd: its owner, which fcntl F_SETOWN
 * and F_SETOWN_EX and ioctl FIOSETOWN and SIOCSPGRP set, with the signal
 * F_SETSIG chooses (SIGKILL included).  The kernel checks only the
 * setter's uid against the target's, so a worker could kill a process
 * of its own uid (every worker, with worker_uid_count = 0), and policy,
 * not the uid rule alone, should keep it off the supervisor and every
 * other process.  Refused with EPERM, not killed: a driver that sets an
 * owner copes with an error.  With no owner set, a file's SIGIO goes
 * nowhere; F_NOTIFY and F_SETLEASE make the caller itself the owner.
 */
static const uint32_t mdgpud_sb_fcntl_eperm[] = {
	F_SETOWN, F_SETSIG, F_SETOWN_EX,
};
static const uint32_t mdgpud_sb_ioctl_eperm[] = { FIOSETOWN, SIOCSPGRP };
/* Outside the allowlist (killed): TIOCSTI types into the daemon's
 * terminal.  Sorted, as mdgpud_sb_allow_except() wants them. */
static const uint32_t mdgpud_sb_ioctl_refused[] = {
	TIOCSTI, FIOSETOWN, SIOCSPGRP,
};

/* `name` with argument 1 (a command) one of `cmds`: EPERM. */
static int mdgpud_sb_eperm(scmp_filter_ctx ctx, const char *name,
			   const uint32_t *cmds, size_t n, const char **bad)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < n; i++) {
		struct scmp_arg_cmp c = SCMP_A1_32(SCMP_CMP_MASKED_EQ,
						   0xffffffffu, cmds[i]);

		ret = mdgpud_sb_rule(ctx, SCMP_ACT_ERRNO(EPERM), name, 1, &c,
				     bad);
	}
	return ret;
}

/* The syscalls allowed only with some arguments, or refused softly. */
static int mdgpud_sb_rules(scmp_filter_ctx ctx, enum mdgpud_sb_seccomp mode,
			   const char **bad)
{
	const scmp_datum_t self = (scmp_datum_t)getpid();
	struct scmp_arg_cmp clone_ok = SCMP_A0_64(SCMP_CMP_MASKED_EQ,
						  MDGPUD_SB_CLONE_NS, 0);
	struct scmp_arg_cmp to_self = SCMP_A0_32(SCMP_CMP_EQ, self);
	struct scmp_arg_cmp rlimit_self[2] = {
		SCMP_A0_32(SCMP_CMP_EQ, 0),
		SCMP_A0_32(SCMP_CMP_EQ, self),
	};
	struct scmp_arg_cmp unix_only = SCMP_A0_32(SCMP_CMP_EQ, AF_UNIX);
	struct scmp_arg_cmp not_unix = SCMP_A0_32(SCMP_CMP_NE, AF_UNIX);
	int ret = 0;

	/* Threads without new namespaces; glibc falls back from clone3,
	 * whose flags a filter cannot read, to clone. */
	ret |= mdgpud_sb_rule(ctx, SCMP_ACT_ALLOW, "clone", 1, &clone_ok, bad);
	ret |= mdgpud_sb_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL,
			      bad);
	ret |= mdgpud_sb_allow_except(ctx, "ioctl", 1,
				      mdgpud_sb_ioctl_refused,
				      MDGPUD_SB_N(mdgpud_sb_ioctl_refused), bad);
	ret |= mdgpud_sb_allow_except(ctx, "fcntl", 1, mdgpud_sb_fcntl_eperm,
				      MDGPUD_SB_N(mdgpud_sb_fcntl_eperm), bad);
	/* Signals to itself only: workers may share one uid
	 * (worker_uid_count = 0), and then the kernel would let one
	 * signal the others. */
	ret |= mdgpud_sb_rule(ctx, SCMP_ACT_ALLOW, "kill", 1, &to_self, bad);
	ret |= mdgpud_sb_rule(ctx, SCMP_ACT_ALLOW, "tgkill", 1, &to_self, bad);
	ret |= mdgpud_sb_rule(ctx, SCMP_ACT_ALLOW, "prlimit64", 1,
			      &rlimit_self[0], bad);
	ret |= mdgpud_sb_rule(ctx, SCMP_ACT_ALLOW, "prlimit64", 1,
			      &rlimit_self[1], bad);
	ret |= mdgpud_sb_rule(ctx, SCMP_ACT_ALLOW, "socket", 1, &unix_only,
			      bad);
	if (mode == SB_ENFORCE) {
		/*
		 * Refused with an error, not killed: a library probing for a
		 * network socket or a helper program (nvidia-modprobe) copes
		 * with the error.  Learn mode reports them instead.
		 */
		ret |= mdgpud_sb_rule(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT),
				      "socket", 1, &not_unix, bad);
		ret |= mdgpud_sb_rule(ctx, SCMP_ACT_ERRNO(EPERM), "execve", 0,
				      NULL, bad);
		ret |= mdgpud_sb_rule(ctx, SCMP_ACT_ERRNO(EPERM), "execveat", 0,
				      NULL, bad);
		ret |= mdgpud_sb_eperm(ctx, "fcntl", mdgpud_sb_fcntl_eperm,
				       MDGPUD_SB_N(mdgpud_sb_fcntl_eperm), bad);
		ret |= mdgpud_sb_eperm(ctx, "ioctl", mdgpud_sb_ioctl_eperm,
				       MDGPUD_SB_N(mdgpud_sb_ioctl_eperm), bad);
	}
	return ret ? -EINVAL : 0;
}

/*
 * Learn/audit mode's reporter, a child forked before the filter: it
 * receives each notified syscall, prints it the first time its number
 * is seen, and lets it run.  It exits when the worker is gone.
 */
static void mdgpud_sb_reporter(int sock, pid_t worker)
{
	static unsigned char seen[1024];
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	char byte;
	int fd;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = &byte;
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	if (recvmsg(sock, &mh, 0) != 1)
		_exit(0);
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		_exit(0);
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	if (seccomp_notify_alloc(&req, &resp))
		_exit(1);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int nr;

		/* POLLHUP: no task uses the filter any more, the worker is
		 * gone (receive would fail at once, again and again). */
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
			break;
		if (!(p.revents & POLLIN))
			continue;
		memset(req, 0, sizeof(*req));
		/* ENOENT: that syscall's task died or was interrupted. */
		if (seccomp_notify_receive(fd, req))
			continue;
		nr = req->data.nr;
		if (nr >= 0 && (size_t)nr < sizeof(seen) * 8 &&
		    !(seen[nr / 8] & (1u << (nr % 8)))) {
			char *name = seccomp_syscall_resolve_num_arch(
				SCMP_ARCH_NATIVE, nr);

			seen[nr / 8] |= (unsigned char)(1u << (nr % 8));
			fprintf(stderr, "mdgpud-worker %d: seccomp-learn: %s "
				"(%d) args %#llx %#llx %#llx\n", (int)worker,
				name ? name : "?", nr,
				(unsigned long long)req->data.args[0],
				(unsigned long long)req->data.args[1],
				(unsigned long long)req->data.args[2]);
			free(name);
		}
		memset(resp, 0, sizeof(*resp));
		resp->id = req->id;
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		seccomp_notify_respond(fd, resp);
	}
	_exit(0);
}

/* Forks the reporter; *sock_out is the worker's end for the fd. */
static int mdgpud_sb_fork_reporter(struct mdgpud_sb *s, int *sock_out)
{
	pid_t worker = getpid(), pid;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (pid == 0) {
		close(sv[0]);
		/* Nothing of the worker's but stderr and its socket. */
		munmap(s->w->shm, sizeof(*s->w->shm));
		if (dup2(sv[1], 3) < 0)
			_exit(1);
		close_range(4, ~0u, 0);
		mdgpud_sb_reporter(3, worker);
	}
	close(sv[1]);
	*sock_out = sv[0];
	return 0;
}

static int mdgpud_sb_send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -errno;
}

static int mdgpud_sb_seccomp(struct mdgpud_sb *s)
{
	uint32_t dflt = s->seccomp == SB_ENFORCE ? SCMP_ACT_KILL_PROCESS
						 : SCMP_ACT_NOTIFY;
	scmp_filter_ctx ctx = seccomp_init(dflt);
	int ret = 0, sock = -1;
	const char *step = "seccomp_init", *bad = "";

	if (!ctx)
		return mdgpud_sb_fail(s, EINVAL, "%s", step);
	/* Other ABIs (i386 int 0x80, x32) are killed, not filtered. */
	step = "allowlist";
	if (s->seccomp == SB_AUDIT) {
		/* Every syscall reported, but the fd must reach the
		 * reporter and the reporter's answers the worker. */
		ret = mdgpud_sb_rule(ctx, SCMP_ACT_ALLOW, "sendmsg", 0, NULL,
				     &bad);
		if (!ret)
			ret = mdgpud_sb_rule(ctx, SCMP_ACT_ALLOW, "close", 0,
					     NULL, &bad);
	} else {
		for (size_t i = 0; !ret && i < sizeof(mdgpud_sb_allow) /
					       sizeof(mdgpud_sb_allow[0]); i++) {
			ret = mdgpud_sb_rule(ctx, SCMP_ACT_ALLOW,
					     mdgpud_sb_allow[i], 0, NULL, &bad);
			/* Newer than this libseccomp: not used here either. */
			if (ret == -ENOENT)
				ret = 0;
		}
		if (!ret)
			ret = mdgpud_sb_rules(ctx, s->seccomp, &bad);
	}
	if (ret)
		goto fail;
	/* worker_seccomp_allow: names the configuration adds. */
	for (char *save = NULL, *t = strtok_r(s->allow, ":", &save); t;
	     t = strtok_r(NULL, ":", &save)) {
		if (mdgpud_sb_rule(ctx, SCMP_ACT_ALLOW, t, 0, NULL, &bad)) {
			seccomp_release(ctx);
			return mdgpud_sb_fail(s, EINVAL, "worker_seccomp_allow: "
					      "'%s' is not a syscall here", t);
		}
	}
	if (s->seccomp != SB_ENFORCE) {
		step = "fork the learn-mode reporter";
		ret = mdgpud_sb_fork_reporter(s, &sock);
		if (ret)
			goto fail;
	}
	step = "seccomp_load";
	ret = seccomp_load(ctx);
	if (!ret && sock >= 0) {
		int nfd = seccomp_notify_fd(ctx);

		step = "pass the notification fd to the reporter";
		ret = nfd < 0 ? nfd : mdgpud_sb_send_fd(sock, nfd);
		if (nfd >= 0)
			close(nfd);	/* the reporter holds it now */
	}
	if (sock >= 0)
		close(sock);
	seccomp_release(ctx);
	if (ret)
		return mdgpud_sb_fail(s, -ret, "seccomp: %s", step);
	return 0;

fail:
	if (sock >= 0)
		close(sock);
	seccomp_release(ctx);
	return mdgpud_sb_fail(s, ret < 0 ? -ret : EINVAL, "seccomp: %s %s",
			      step, bad);
}

int mdgpud_worker_sandbox(struct mdgpud_worker *w, int *argc, char **argv)
{
	struct mdgpud_sb s = { .w = w };
	const char *arg;
	int ret;

	if (*argc < 2 || strncmp(argv[*argc - 1], MDGPUD_SANDBOX_ARG,
				 strlen(MDGPUD_SANDBOX_ARG)))
		return 0;	/* worker_sandbox = off */
	arg = argv[--*argc] + strlen(MDGPUD_SANDBOX_ARG);
	argv[*argc] = NULL;
	if (mdgpud_sb_parse(&s, arg)) {
		mdgpud_worker_err_msg(w, "sandbox: bad argument '%s'", arg);
		return -EINVAL;
	}
	ret = 0;
	if (s.net == MDGPUD_WORKER_NET_PRIVATE && unshare(CLONE_NEWNET))
		ret = mdgpud_sb_fail(&s, errno, "unshare(CLONE_NEWNET)");
	if (!ret && (s.dev != MDGPUD_WORKER_DEV_NONE ||
		     s.tmp == MDGPUD_WORKER_TMP_PRIVATE))
		ret = mdgpud_sb_mountns(&s);
	/*
	 * No private /tmp (worker_tmp = shared, or a namespace best-effort
	 * could not make): no JIT cache either, since a cache shared
	 * between tenants would be a channel between them.  The supervisor
	 * execs a worker of worker_tmp = shared with it set already; this
	 * covers the best-effort case and a worker started some other way.
	 */
	if (!ret && !s.tmp_made)
		setenv("CUDA_CACHE_DISABLE", "1", 1);
	if (!ret)
		ret = mdgpud_sb_ids(&s);
	if (!ret && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		ret = mdgpud_sb_fail(&s, errno, "PR_SET_NO_NEW_PRIVS");
	if (!ret)
		ret = mdgpud_sb_seccomp(&s);
	return ret;
}
