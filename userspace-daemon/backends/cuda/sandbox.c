// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The worker sandbox, supervisor side: resolves the workers' ids once
 * (backend open: a pool of uids, one per worker, ids.c, or the one
 * configured user), hands each worker its sandbox and its ids as an
 * argument (sandbox.h), and checks from /proc what a started worker
 * really runs with, rather than trusting the worker: a required
 * protection that is missing fails the context.  The worker applies the
 * sandbox itself (worker/sandbox.c), before it loads libcuda.
 *
 * Documentation/daemon.md, "Worker sandbox", has the decisions.
 */
#include "priv.h"
#include "sandbox.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mdgpud/log.h>

#define MDGPUD_SANDBOX_DEFAULT_USER	"65534"

static bool mdgpud_sandbox_is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static int mdgpud_sandbox_number(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	/* (uid_t)-1 means "unchanged" to setresuid(): never a real id. */
	if (errno || *end || v >= UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* worker_user: a name (its primary group comes along) or a number. */
static int mdgpud_sandbox_user(const char *user, uid_t *uid, gid_t *gid)
{
	struct passwd *pw;
	uint32_t v;

	if (mdgpud_sandbox_is_number(user)) {
		if (mdgpud_sandbox_number(user, &v))
			return -EINVAL;
		*uid = v;
		pw = getpwuid(*uid);
		/* A bare number with no passwd entry: gid = uid (65534:
		 * nobody/nogroup on Debian). */
		*gid = pw ? pw->pw_gid : (gid_t)v;
		return 0;
	}
	pw = getpwnam(user);
	if (!pw)
		return -ENOENT;
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

static int mdgpud_sandbox_group(const char *group, gid_t *gid)
{
	struct group *gr;
	uint32_t v;

	if (mdgpud_sandbox_is_number(group)) {
		if (mdgpud_sandbox_number(group, &v))
			return -EINVAL;
		*gid = v;
		return 0;
	}
	gr = getgrnam(group);
	if (!gr)
		return -ENOENT;
	*gid = gr->gr_gid;
	return 0;
}

/* "a,b" -> "a:b"; only syscall-name characters. */
static int mdgpud_sandbox_allow(const char *in, char *out, size_t len)
{
	size_t n = strlen(in);

	if (n >= len)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = in[i];

		if (c == ',')
			c = ':';
		else if (!islower((unsigned char)c) &&
			 !isdigit((unsigned char)c) && c != '_')
			return -EINVAL;
		out[i] = c;
	}
	out[n] = 0;
	return 0;
}

/*
 * A user or group of the system with an id in the workers' range would
 * share its files (and, for a user, its processes) with a worker: such a
 * range is refused.  What getpwent/getgrent enumerate is checked: local
 * files, and directories only where their enumeration is enabled.
 */
static int mdgpud_sandbox_range_free(uint32_t base, uint32_t count)
{
	struct passwd *pw;
	struct group *gr;
	int ret = 0;

	setpwent();
	while ((pw = getpwent()))
		if (pw->pw_uid - base < count) {
			mdgpud_err("cuda: worker uids %u..%u hold user '%s' "
				   "(%u): choose a range of no user "
				   "(worker_uid_base)", base, base + count - 1,
				   pw->pw_name, (unsigned)pw->pw_uid);
			ret = -EINVAL;
			break;
		}
	endpwent();
	if (ret)
		return ret;
	setgrent();
	while ((gr = getgrent()))
		if (gr->gr_gid - base < count) {
			mdgpud_err("cuda: worker gids %u..%u hold group '%s' "
				   "(%u): choose a range of no group "
				   "(worker_uid_base)", base, base + count - 1,
				   gr->gr_name, (unsigned)gr->gr_gid);
			ret = -EINVAL;
			break;
		}
	endgrent();
	return ret;
}

/* The pool of the workers' range [base, base + count): a uid each. */
static int mdgpud_sandbox_pool_open(struct mdgpud_cuda_sandbox *sb,
				    uint32_t base, uint32_t count)
{
	int ret;

	if (mdgpud_cuda_ids_check_range(base, count)) {
		mdgpud_err("cuda: worker_uid_base %u, worker_uid_count %u: the "
			   "range must be 1..%u ids, above 0 and below "
			   "4294967295", base, count, MDGPUD_CUDA_IDS_MAX);
		return -EINVAL;
	}
	ret = mdgpud_sandbox_range_free(base, count);
	return ret ? ret : mdgpud_cuda_ids_open(base, count, &sb->ids);
}

/*
 * The workers' ids: a pool of the range, with worker_group as their one
 * supplementary group when set (device nodes of that group), or the one
 * user (and group) every worker shares.  A range not known yet (base 0:
 * it follows the GPU, which the probe finds) is opened later by
 * sandbox_ids_open(); until then the probe runs as cfg->probe_uid.
 */
static int mdgpud_sandbox_ids_init(struct mdgpud_cuda_sandbox *sb,
				   const struct mdgpud_backend_cfg *cfg)
{
	const char *user = cfg->worker_user && *cfg->worker_user ?
			   cfg->worker_user : MDGPUD_SANDBOX_DEFAULT_USER;
	const char *group = cfg->worker_group && *cfg->worker_group ?
			    cfg->worker_group : NULL;
	uint32_t base = cfg->worker_uid_base, count = cfg->worker_uid_count;

	sb->group = MDGPUD_SANDBOX_NO_GROUP;
	if (count) {
		if (cfg->worker_user && *cfg->worker_user) {
			mdgpud_err("cuda: worker_user '%s' runs every worker "
				   "as one user, worker_uid_count %u gives "
				   "each its own: set one of them (count 0 "
				   "for worker_user)", cfg->worker_user, count);
			return -EINVAL;
		}
		if (group && mdgpud_sandbox_group(group, &sb->group)) {
			mdgpud_err("cuda: worker_group '%s': no such group",
				   group);
			return -EINVAL;
		}
		if (sb->group == 0) {
			mdgpud_err("cuda: worker_group must not be root");
			return -EINVAL;
		}
		if (base)
			return mdgpud_sandbox_pool_open(sb, base, count);
		if (mdgpud_cuda_ids_check_range(cfg->probe_uid, 1)) {
			mdgpud_err("cuda: the probe's uid %u is no uid",
				   cfg->probe_uid);
			return -EINVAL;
		}
		sb->uid = cfg->probe_uid;
		sb->gid = cfg->probe_uid;
		sb->ids_later = true;
		return mdgpud_sandbox_range_free(cfg->probe_uid, 1);
	}
	if (mdgpud_sandbox_user(user, &sb->uid, &sb->gid)) {
		mdgpud_err("cuda: worker_user '%s': no such user", user);
		return -EINVAL;
	}
	if (group && mdgpud_sandbox_group(group, &sb->gid)) {
		mdgpud_err("cuda: worker_group '%s': no such group", group);
		return -EINVAL;
	}
	if (sb->uid == 0 || sb->gid == 0) {
		mdgpud_err("cuda: worker_user/worker_group must not be root "
			   "(uid %u gid %u); worker_sandbox = off says so",
			   (unsigned)sb->uid, (unsigned)sb->gid);
		return -EINVAL;
	}
	return 0;
}

/*
 * environ without CUDA_CACHE_DISABLE, then CUDA_CACHE_DISABLE=1: the JIT
 * cache lives under $HOME or /tmp, which without a mount namespace are
 * the host's, and a cache one worker writes and another reads would be a
 * channel between tenants.  Strings are copied: a later setenv() in the
 * daemon must not change (or free) what workers are given.
 */
static int mdgpud_sandbox_env_init(struct mdgpud_cuda_sandbox *sb)
{
	static const char var[] = "CUDA_CACHE_DISABLE=";
	size_t n = 0, k = 0;
	char **env;

	while (environ && environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(environ[i], var, sizeof(var) - 1))
			continue;
		env[k] = strdup(environ[i]);
		if (!env[k++])
			goto err;
	}
	env[k] = strdup("CUDA_CACHE_DISABLE=1");
	if (!env[k])
		goto err;
	sb->env = env;
	return 0;
err:
	for (size_t i = 0; i < k; i++)
		free(env[i]);
	free(env);
	return -ENOMEM;
}

static void mdgpud_sandbox_env_fini(struct mdgpud_cuda_sandbox *sb)
{
	for (size_t i = 0; sb->env && sb->env[i]; i++)
		free(sb->env[i]);
	free(sb->env);
	sb->env = NULL;
}

char *const *mdgpud_cuda_sandbox_env(const struct mdgpud_cuda_sandbox *sb)
{
	return sb->env ? sb->env : environ;
}

/* "uids 100..199, one per worker, group 44" or "uid 65534 gid 65534". */
static void mdgpud_sandbox_ids_name(const struct mdgpud_cuda_sandbox *sb,
				    const struct mdgpud_backend_cfg *cfg,
				    char *buf, size_t len)
{
	uint32_t base = cfg->worker_uid_base;
	char group[16] = "none";

	if (sb->group != MDGPUD_SANDBOX_NO_GROUP)
		snprintf(group, sizeof(group), "%u", (unsigned)sb->group);
	if (sb->ids_later)
		snprintf(buf, len, "uid and gid %u for the probe, then one "
			 "per worker from the range of the GPU the probe finds, "
			 "group %s", (unsigned)sb->uid, group);
	else if (!sb->ids)
		snprintf(buf, len, "uid %u gid %u (one for all workers), no "
			 "groups", (unsigned)sb->uid, (unsigned)sb->gid);
	else if (sb->group == MDGPUD_SANDBOX_NO_GROUP)
		snprintf(buf, len, "uid and gid %u..%u, one per worker, no "
			 "groups", base, base + cfg->worker_uid_count - 1);
	else
		snprintf(buf, len, "uid and gid %u..%u, one per worker, "
			 "group %u", base, base + cfg->worker_uid_count - 1,
			 (unsigned)sb->group);
}

int mdgpud_cuda_sandbox_init(struct mdgpud_cuda_sandbox *sb,
			     const struct mdgpud_backend_cfg *cfg)
{
	char allow[256] = "", ids[128];
	bool tmp_only, net = cfg->net != MDGPUD_WORKER_NET_HOST;
	int ret;

	memset(sb, 0, sizeof(*sb));
	sb->mode = cfg->sandbox;
	if (sb->mode == MDGPUD_SANDBOX_OFF) {
		mdgpud_warn("cuda: worker_sandbox = off: workers run as the "
			    "daemon (uid %u), unconfined", (unsigned)getuid());
		return 0;
	}
	if (sb->mode != MDGPUD_SANDBOX_BEST_EFFORT &&
	    sb->mode != MDGPUD_SANDBOX_REQUIRED)
		return -EINVAL;
	sb->learn = cfg->seccomp_learn;
	if (cfg->seccomp_allow &&
	    mdgpud_sandbox_allow(cfg->seccomp_allow, allow, sizeof(allow))) {
		mdgpud_err("cuda: worker_seccomp_allow '%s': syscall names "
			   "separated by ','", cfg->seccomp_allow);
		return -EINVAL;
	}
	ret = mdgpud_sandbox_ids_init(sb, cfg);
	if (ret)
		return ret;
	tmp_only = cfg->dev == MDGPUD_WORKER_DEV_NONE &&
		   cfg->tmp != MDGPUD_WORKER_TMP_SHARED;
	if (cfg->dev == MDGPUD_WORKER_DEV_NONE && !tmp_only) {
		ret = mdgpud_sandbox_env_init(sb);
		if (ret) {
			mdgpud_cuda_ids_close(sb->ids);
			sb->ids = NULL;
			return ret;
		}
	}
	snprintf(sb->arg_tail, sizeof(sb->arg_tail), ",%s,%s,%s,%s%s%s",
		 sb->learn == 2 ? "audit" : sb->learn ? "learn" : "enforce",
		 cfg->dev == MDGPUD_WORKER_DEV_PRIVATE ? "private" :
		 cfg->dev == MDGPUD_WORKER_DEV_HOST ? "host" : "none",
		 net ? "private" : "host",
		 cfg->tmp == MDGPUD_WORKER_TMP_SHARED ? "shared" : "private",
		 allow[0] ? "," : "", allow);
	/*
	 * No core dumps of the supervisor (tenant data passes through it),
	 * and no ptrace of it by anything but CAP_SYS_PTRACE: workers run as
	 * other uids, without that capability, and with ptrace outside
	 * their allowlist, so this is the third wall, not the only one.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		mdgpud_warn("cuda: PR_SET_DUMPABLE 0: %s", strerror(errno));
	mdgpud_sandbox_ids_name(sb, cfg, ids, sizeof(ids));
	mdgpud_info("cuda: worker sandbox %s: %s, no_new_privs, seccomp "
		    "%s%s%s, %s, %s",
		    sb->mode == MDGPUD_SANDBOX_REQUIRED ? "required" :
		    "best-effort", ids,
		    sb->learn == 2 ? "audit (every syscall allowed and "
		    "reported)" : sb->learn ? "learn (unlisted syscalls "
		    "allowed and reported)" : "enforce",
		    allow[0] ? " + " : "", allow,
		    cfg->dev == MDGPUD_WORKER_DEV_PRIVATE ?
		    "mount namespace: private /dev and /tmp, read-only /" :
		    cfg->dev == MDGPUD_WORKER_DEV_HOST ?
		    "mount namespace: the host's /dev, private /tmp, "
		    "read-only /" : tmp_only ? "mount namespace: private /tmp "
		    "only" : "no mount namespace, JIT cache off",
		    net ? "network namespace" : "the host's network");
	sb->want = MDGPUD_SANDBOX_ALL;
	if (cfg->dev == MDGPUD_WORKER_DEV_NONE && !tmp_only)
		sb->want &= ~MDGPUD_SANDBOX_MOUNTNS;
	if (!net)
		sb->want &= ~MDGPUD_SANDBOX_NETNS;
	return 0;
}

int mdgpud_cuda_sandbox_ids_open(struct mdgpud_cuda_sandbox *sb,
				 uint32_t base, uint32_t count)
{
	int ret;

	if (!sb->ids_later)
		return 0;
	ret = mdgpud_sandbox_pool_open(sb, base, count);
	if (ret)
		return ret;
	sb->ids_later = false;
	mdgpud_info("cuda: worker uids and gids %u..%u, one per worker",
		    base, base + count - 1);
	return 0;
}

void mdgpud_cuda_sandbox_fini(struct mdgpud_cuda_sandbox *sb)
{
	mdgpud_sandbox_env_fini(sb);
	mdgpud_cuda_ids_close(sb->ids);
	sb->ids = NULL;
}

int mdgpud_cuda_sandbox_cred_get(const struct mdgpud_cuda_sandbox *sb,
				 uint32_t vgpu_id,
				 struct mdgpud_cuda_cred *cred)
{
	uint32_t id;

	*cred = (struct mdgpud_cuda_cred){
		.uid = sb->uid, .gid = sb->gid,
		/* The probe's uid (range not open yet) has worker_group as
		 * a pool's uids do; worker_user's is its own group. */
		.group = sb->ids_later ? sb->group : MDGPUD_SANDBOX_NO_GROUP,
	};
	if (!sb->ids)
		return 0;
	if (mdgpud_cuda_ids_get(sb->ids, &id)) {
		mdgpud_err("cuda: vgpu %u: no worker uid free: all %u of the "
			   "range are held by live workers (worker_uid_count)",
			   vgpu_id, mdgpud_cuda_ids_in_use(sb->ids));
		return -EBUSY;
	}
	cred->uid = id;
	cred->gid = id;
	cred->group = sb->group;
	cred->pool = sb->ids;
	return 0;
}

void mdgpud_cuda_sandbox_cred_put(struct mdgpud_cuda_cred *cred)
{
	if (cred->pool)
		mdgpud_cuda_ids_put(cred->pool, cred->uid);
	cred->pool = NULL;
}

void mdgpud_cuda_sandbox_arg(const struct mdgpud_cuda_sandbox *sb,
			     const struct mdgpud_cuda_cred *cred, char *buf,
			     size_t len)
{
	char group[16] = "-";

	if (cred->group != MDGPUD_SANDBOX_NO_GROUP)
		snprintf(group, sizeof(group), "%u", (unsigned)cred->group);
	snprintf(buf, len, "%s%s,%u,%u,%s%s", MDGPUD_SANDBOX_ARG,
		 sb->mode == MDGPUD_SANDBOX_REQUIRED ? "required" :
		 "best-effort", (unsigned)cred->uid, (unsigned)cred->gid,
		 group, sb->arg_tail);
}

void mdgpud_cuda_sandbox_names(uint32_t mask, char *buf, size_t len)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ MDGPUD_SANDBOX_IDS, "ids" },
		{ MDGPUD_SANDBOX_NNP, "nnp" },
		{ MDGPUD_SANDBOX_SECCOMP, "seccomp" },
		{ MDGPUD_SANDBOX_MOUNTNS, "mountns" },
		{ MDGPUD_SANDBOX_NETNS, "netns" },
	};
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(mask & names[i].bit) || n >= len)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "",
				      names[i].name);
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* /proc/PID/status: "Key:\tv1\tv2..." -> the values (up to 4). */
static int mdgpud_sandbox_status_line(const char *status, const char *key,
				      unsigned long v[4])
{
	const char *p = status;
	size_t klen = strlen(key);
	int n = 0;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			char *end;

			p += klen + 1;
			while (n < 4) {
				while (*p == ' ' || *p == '\t')
					p++;
				if (!isdigit((unsigned char)*p))
					break;
				v[n++] = strtoul(p, &end, 10);
				p = end;
			}
			return n;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* /proc/PID/<what> is another file (namespace, directory) than ours. */
static bool mdgpud_sandbox_own(pid_t pid, const char *what, const char *ours)
{
	struct stat a, b;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	return !stat(path, &a) && !stat(ours, &b) &&
	       (a.st_ino != b.st_ino || a.st_dev != b.st_dev);
}

static uint32_t mdgpud_sandbox_read(const struct mdgpud_cuda_cred *cred,
				    pid_t pid)
{
	int ngroups = cred->group == MDGPUD_SANDBOX_NO_GROUP ? 0 : 1;
	char path[64], status[4096];
	unsigned long v[4];
	uint32_t active = 0;
	ssize_t len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	len = (ssize_t)fread(status, 1, sizeof(status) - 1, f);
	fclose(f);
	status[len > 0 ? len : 0] = 0;
	if (mdgpud_sandbox_status_line(status, "Uid", v) == 4 &&
	    v[0] == cred->uid && v[1] == cred->uid && v[2] == cred->uid &&
	    v[3] == cred->uid &&
	    mdgpud_sandbox_status_line(status, "Gid", v) == 4 &&
	    v[0] == cred->gid && v[1] == cred->gid && v[2] == cred->gid &&
	    v[3] == cred->gid &&
	    mdgpud_sandbox_status_line(status, "Groups", v) == ngroups &&
	    (!ngroups || v[0] == cred->group))
		active |= MDGPUD_SANDBOX_IDS;
	if (mdgpud_sandbox_status_line(status, "NoNewPrivs", v) == 1 &&
	    v[0] == 1)
		active |= MDGPUD_SANDBOX_NNP;
	/* 2: SECCOMP_MODE_FILTER. */
	if (mdgpud_sandbox_status_line(status, "Seccomp", v) == 1 && v[0] == 2)
		active |= MDGPUD_SANDBOX_SECCOMP;
	/* A mount namespace of its own, and a /tmp of its own in it (every
	 * namespace a worker makes has one). */
	if (mdgpud_sandbox_own(pid, "ns/mnt", "/proc/self/ns/mnt") &&
	    mdgpud_sandbox_own(pid, "root/tmp", "/tmp"))
		active |= MDGPUD_SANDBOX_MOUNTNS;
	if (mdgpud_sandbox_own(pid, "ns/net", "/proc/self/ns/net"))
		active |= MDGPUD_SANDBOX_NETNS;
	return active;
}

int mdgpud_cuda_sandbox_check(const struct mdgpud_cuda_sandbox *sb,
			      const struct mdgpud_cuda_cred *cred,
			      uint32_t vgpu_id, pid_t pid, uint32_t *active)
{
	char on[64], off[64];
	uint32_t missing;

	*active = 0;
	if (sb->mode == MDGPUD_SANDBOX_OFF)
		return 0;
	*active = mdgpud_sandbox_read(cred, pid);
	missing = sb->want & ~*active;
	mdgpud_cuda_sandbox_names(*active, on, sizeof(on));
	mdgpud_cuda_sandbox_names(missing, off, sizeof(off));
	if (missing && sb->mode == MDGPUD_SANDBOX_REQUIRED) {
		mdgpud_err("cuda: vgpu %u: worker %d lacks sandbox %s "
			   "(worker_sandbox = required): refused", vgpu_id,
			   (int)pid, off);
		return -EPERM;
	}
	if (missing)
		mdgpud_warn("cuda: vgpu %u: worker %d sandbox DOWNGRADED: "
			    "active %s, missing %s (worker_sandbox = "
			    "best-effort)", vgpu_id, (int)pid, on, off);
	else if (sb->learn)
		mdgpud_warn("cuda: vgpu %u: worker %d sandbox %s, seccomp in "
			    "%s mode: syscalls are reported, not refused",
			    vgpu_id, (int)pid, on,
			    sb->learn == 2 ? "audit" : "learn");
	else
		mdgpud_dbg("cuda: vgpu %u: worker %d sandbox %s", vgpu_id,
			   (int)pid, on);
	return 0;
}

void mdgpud_cuda_sandbox_death(pid_t pid, char *buf, size_t len)
{
	siginfo_t si;

	buf[0] = 0;
	memset(&si, 0, sizeof(si));
	if (pid <= 0 ||
	    waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) ||
	    si.si_pid != pid ||
	    (si.si_code != CLD_KILLED && si.si_code != CLD_DUMPED))
		return;
	if (si.si_status == SIGSYS)
		snprintf(buf, len, "killed by SIGSYS: a system call outside "
			 "the worker's seccomp allowlist (the kernel log's "
			 "audit type=1326 line names it)");
	else
		snprintf(buf, len, "killed by signal %d (%s)", si.si_status,
			 strsignal(si.si_status));
}
