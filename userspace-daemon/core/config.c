// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpud configuration: `key = value` lines, '#' comments, blank lines.
 * Unknown keys and bad values are errors (a typo must not silently fall
 * back to a default).  Defaults work without any file.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uapi/mdgpu.h"
#include "mdgpud/backend.h"
#include "mdgpud/daemon.h"
#include "mdgpud/handles.h"
#include "mdgpud/log.h"
#include "mdgpud/sched.h"
#include "common/gpu_select.h"
#include "common/pci_loc.h"
#include "common/words.h"

void mdgpud_config_defaults(struct mdgpud_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	strcpy(cfg->socket_path, "/run/mdgpud/mdgpud.sock");
	cfg->socket_mode = 0660;
	strcpy(cfg->backend, "sim");
	strcpy(cfg->cuda_device, "0");
	strcpy(cfg->transport, "socket");
	cfg->sim_fb_mib = 16384;
	cfg->sim_sm_count = 132;
	cfg->cuda_fb_reserve_mib = 1024;
	cfg->hang_timeout_ms = 5000;
	cfg->module_load_timeout_ms = 60000;
	cfg->worker_start_timeout_ms = 30000;
	cfg->worker_sandbox = MDGPUD_SANDBOX_REQUIRED;
	cfg->worker_uid_base = MDGPUD_WORKER_UID_BASE_AUTO;
	cfg->worker_uid_count = MDGPUD_WORKER_UID_AUTO_STEP;
	cfg->timeslice_us = MDGPU_TIMESLICE_US_DEFAULT;
	cfg->policy = MDGPU_POLICY_BEST_EFFORT;
	cfg->cap_window_us = 100000;
	cfg->log_level = MDGPUD_LOG_INFO;
	cfg->ring_entries = MDGPU_RING_ENTRIES_DEFAULT;
	cfg->ring_entries_max = 4096;
	cfg->max_vgpus = 64;
	cfg->max_allocs = 65536;
	cfg->max_handles = 4096;
	cfg->shared_bytes_max = 227 * 1024;	/* H100 per-block opt-in max */
	cfg->spin_us = MDGPUD_POLL_AUTO;
	cfg->worker_poll_us = 20000;
	cfg->worker_pollers = MDGPUD_POLL_AUTO;
	cfg->linger_us = 50;
	cfg->latency_queue_us = 500;
	cfg->dma_bounce_kib = 1024;
	cfg->host_mib_max = 1024;
	cfg->register_mib_max = 1024;
	cfg->admin_socket_path[0] = '\0';	/* derived from socket_path */
	cfg->admin_socket_mode = 0600;
	/* Per-uid limits and the handshake bound (Documentation/daemon.md,
	 * "Per-uid limits"). */
	cfg->uid_max_connections = 32;
	cfg->uid_max_vgpus = 16;
	cfg->uid_max_pinned_mib = 4096;
	cfg->nr_uid_limits_exempt = 0;
	cfg->limit_log_interval_s = 60;
	cfg->handshake_timeout_ms = 3000;
	cfg->ctx_overhead_mib = MDGPUD_CTX_OVERHEAD_AUTO;
	strcpy(cfg->parent_pci, "auto");
}

static int mdgpud_cfg_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int mdgpud_cfg_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int mdgpud_parse_u64(const char *s, int base, uint64_t min,
			    uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int mdgpud_set_str(char *dst, size_t size, const char *v)
{
	if (strlen(v) >= size)
		return -EINVAL;
	strcpy(dst, v);
	return 0;
}

static bool mdgpud_is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/*
 * uid_limits_exempt: "" (none) or decimal uids separated by commas, at
 * most MDGPUD_UID_EXEMPT_MAX; (uid_t)-1 is not a uid.  The list is
 * replaced, not appended to, so that -o overrides the file.
 */
static int mdgpud_parse_uid_list(const char *value, uint32_t *uids,
				 uint32_t *nr)
{
	char buf[256], *tok, *save = NULL;
	uint32_t n = 0, tmp[MDGPUD_UID_EXEMPT_MAX];
	uint64_t v;

	if (mdgpud_set_str(buf, sizeof(buf), value))
		return -EINVAL;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		for (char *e = tok + strlen(tok);
		     e > tok && isspace((unsigned char)e[-1]);)
			*--e = '\0';
		if (n == MDGPUD_UID_EXEMPT_MAX ||
		    mdgpud_parse_u64(tok, 10, 0, UINT32_MAX - 1, &v))
			return -EINVAL;
		tmp[n++] = (uint32_t)v;
	}
	memset(uids, 0, MDGPUD_UID_EXEMPT_MAX * sizeof(*uids));
	memcpy(uids, tmp, n * sizeof(*uids));
	*nr = n;
	return 0;
}

int mdgpud_config_set(struct mdgpud_config *cfg, const char *key,
		      const char *value, char *err, size_t errlen)
{
	uint64_t v;
	int ret = 0;

#define U(name, min, max, field)					\
	if (!strcmp(key, name)) {					\
		ret = mdgpud_parse_u64(value, 0, min, max, &v);		\
		if (!ret)						\
			cfg->field = (__typeof__(cfg->field))v;		\
		goto out;						\
	}
/* A number in [min, max], or `auto`: auto_val. */
#define UA(name, min, max, field, auto_val)				\
	if (!strcmp(key, name)) {					\
		v = auto_val;						\
		ret = strcmp(value, "auto") ?				\
		      mdgpud_parse_u64(value, 0, min, max, &v) : 0;	\
		if (!ret)						\
			cfg->field = (__typeof__(cfg->field))v;		\
		goto out;						\
	}
#define E(name, field, ...)						\
	if (!strcmp(key, name)) {					\
		static const char *const words[] = { __VA_ARGS__ };	\
		ret = mdgpu_word_index(value, words, sizeof(words) /	\
					sizeof(words[0]), &cfg->field);	\
		goto out;						\
	}
#define S(name, field)							\
	if (!strcmp(key, name)) {					\
		ret = mdgpud_set_str(cfg->field, sizeof(cfg->field), value); \
		goto out;						\
	}
	S("socket_path", socket_path)
	S("socket_group", socket_group)
	S("backend", backend)
	S("transport", transport)
	S("cuda_worker", cuda_worker)
	S("admin_socket_path", admin_socket_path)
	S("admin_socket_group", admin_socket_group)
	S("worker_user", worker_user)
	S("worker_group", worker_group)
	S("worker_seccomp_allow", worker_seccomp_allow)
	S("mps_control", mps_control)
	S("mps_dir", mps_dir)
	/* Each word list in its enum's order. */
	E("worker_sandbox", worker_sandbox, "off", "best-effort", "required")
	E("worker_dev", worker_dev, "none", "host", "private")
	E("worker_net", worker_net, "private", "host")
	E("worker_tmp", worker_tmp, "private", "shared")
	E("worker_seccomp", worker_seccomp_learn, "enforce", "learn", "audit")
	E("spatial", spatial, "none", "mps")
	if (!strcmp(key, "admin_socket_mode")) {
		ret = mdgpud_parse_u64(value, 8, 0, 0777, &v);
		if (!ret)
			cfg->admin_socket_mode = (uint32_t)v;
		goto out;
	}
	if (!strcmp(key, "socket_mode")) {
		ret = mdgpud_parse_u64(value, 8, 0, 0777, &v);
		if (!ret)
			cfg->socket_mode = (uint32_t)v;
		goto out;
	}
	U("sim_fb_mib", 1, 1ULL << 24, sim_fb_mib)
	U("sim_sm_count", 1, 1024, sim_sm_count)
	U("sim_realtime", 0, 1, sim_realtime)
	U("sim_ctx_pinned_kib", 0, 1ULL << 24, sim_ctx_pinned_kib)
	U("cuda_fb_reserve_mib", 0, 1ULL << 24, cuda_fb_reserve_mib)
	U("hang_timeout_ms", 100, 600000, hang_timeout_ms)
	U("module_load_timeout_ms", 100, 3600000, module_load_timeout_ms)
	U("worker_start_timeout_ms", 100, 600000, worker_start_timeout_ms)
	U("timeslice_us", MDGPU_TIMESLICE_US_MIN, MDGPU_TIMESLICE_US_MAX,
	  timeslice_us)
	/* The scheduler checks its own range at mdgpud_core_create(). */
	U("cap_window_us", 1, UINT32_MAX, cap_window_us)
	U("log_syslog", 0, 1, log_syslog)
	U("ring_entries", 2, 1U << 16, ring_entries)
	U("ring_entries_max", 2, 1U << 16, ring_entries_max)
	U("max_vgpus", 1, 4096, max_vgpus)
	U("max_allocs", 1, 1U << 24, max_allocs)
	U("max_handles", 1, MDGPUD_HANDLES_MAX, max_handles)
	U("shared_bytes_max", 0, 1U << 30, shared_bytes_max)
	UA("spin_us", 0, 1000000, spin_us, MDGPUD_POLL_AUTO)
	UA("worker_pollers", 0, MDGPUD_POLLERS_MAX, worker_pollers,
	   MDGPUD_POLL_AUTO)
	U("worker_poll_us", 0, 1000000, worker_poll_us)
	U("linger_us", 0, 1000000, linger_us)
	U("latency_queue_us", 0, 1000000, latency_queue_us)
	U("dma_bounce_kib", 4, 1U << 20, dma_bounce_kib)
	U("host_mib_max", 0, 1U << 20, host_mib_max)
	U("register_mib_max", 0, 1U << 20, register_mib_max)
	/* Per-uid limits, the handshake bound, context overhead. */
	U("uid_max_connections", 0, 1U << 20, uid_max_connections)
	U("uid_max_vgpus", 0, 1U << 20, uid_max_vgpus)
	U("uid_max_pinned_mib", 0, 1ULL << 32, uid_max_pinned_mib)
	U("limit_log_interval_s", 1, 86400, limit_log_interval_s)
	U("handshake_timeout_ms", 100, 600000, handshake_timeout_ms)
	if (!strcmp(key, "cuda_device")) {
		if (mdgpud_gpu_select_parse(value, cfg->cuda_device))
			return mdgpud_cfg_err(err, errlen,
					      "bad value '%s' for 'cuda_device': "
					      "a CUDA ordinal (0..%d), a PCI bus id "
					      "(0000:41:00.0, 00000000:41:00.0 or "
					      "41:00.0) or a GPU UUID (GPU-xxxxxxxx-"
					      "xxxx-xxxx-xxxx-xxxxxxxxxxxx, as "
					      "nvidia-smi -L prints it)", value,
					      MDGPU_GPU_ORDINAL_MAX);
		return 0;
	}
	if (!strcmp(key, "parent_pci")) {
		if (!strcmp(value, "auto") || !strcmp(value, "none"))
			ret = mdgpud_set_str(cfg->parent_pci,
					     sizeof(cfg->parent_pci), value);
		else
			ret = mdgpud_pci_addr_parse(value, cfg->parent_pci);
		goto out;
	}
	if (!strcmp(key, "uid_limits_exempt")) {
		ret = mdgpud_parse_uid_list(value, cfg->uid_limits_exempt,
					    &cfg->nr_uid_limits_exempt);
		goto out;
	}
	U("worker_uid_count", 0, MDGPUD_WORKER_UID_AUTO_STEP, worker_uid_count)
	/* Not 0 (root), not 2^32 - 1 ((uid_t)-1). */
	UA("worker_uid_base", 1, UINT32_MAX - 1, worker_uid_base,
	   MDGPUD_WORKER_UID_BASE_AUTO)
	UA("ctx_overhead_mib", 0, 1ULL << 20, ctx_overhead_mib,
	   MDGPUD_CTX_OVERHEAD_AUTO)
	if (!strcmp(key, "policy")) {
		ret = mdgpud_sched_policy_parse(value);
		if (ret >= 0) {
			cfg->policy = (uint32_t)ret;
			ret = 0;
		}
		goto out;
	}
	if (!strcmp(key, "log_level")) {
		ret = mdgpud_log_parse_level(value);
		if (ret >= 0) {
			cfg->log_level = ret;
			ret = 0;
		}
		goto out;
	}
#undef U
#undef UA
#undef S
#undef E
	return mdgpud_cfg_err(err, errlen, "unknown key '%s'", key);
out:
	if (ret)
		return mdgpud_cfg_err(err, errlen, "bad value '%s' for '%s'",
				      value, key);
	return 0;
}

static char *mdgpud_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int mdgpud_config_load(struct mdgpud_config *cfg, const char *path,
		       bool optional, char *err, size_t errlen)
{
	char line[512], sub[256];
	unsigned int lineno = 0;
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f) {
		if (optional && errno == ENOENT)
			return 0;
		ret = -errno;
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		char *k, *v, *eq, *hash;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			ret = mdgpud_cfg_err(err, errlen, "%s:%u: line too long",
					     path, lineno);
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		k = mdgpud_trim(line);
		if (!*k)
			continue;
		eq = strchr(k, '=');
		if (!eq) {
			ret = mdgpud_cfg_err(err, errlen,
					     "%s:%u: expected 'key = value'",
					     path, lineno);
			break;
		}
		*eq = '\0';
		v = mdgpud_trim(eq + 1);
		k = mdgpud_trim(k);
		ret = mdgpud_config_set(cfg, k, v, sub, sizeof(sub));
		if (ret) {
			mdgpud_cfg_err(err, errlen, "%s:%u: %s", path, lineno,
				       sub);
			break;
		}
	}
	fclose(f);
	return ret;
}

int mdgpud_config_validate(const struct mdgpud_config *cfg, char *err,
			   size_t errlen)
{
	if (!mdgpud_is_pow2(cfg->ring_entries) ||
	    !mdgpud_is_pow2(cfg->ring_entries_max) ||
	    cfg->ring_entries > cfg->ring_entries_max)
		return mdgpud_cfg_err(err, errlen,
				      "ring_entries (%u) and ring_entries_max (%u) must be powers of two, default <= max",
				      cfg->ring_entries, cfg->ring_entries_max);
	if (!cfg->socket_path[0])
		return mdgpud_cfg_err(err, errlen, "socket_path is empty");
	if (cfg->worker_uid_count && cfg->worker_user[0])
		return mdgpud_cfg_err(err, errlen,
				      "worker_user (%s) runs every worker as one user, worker_uid_count (%u) gives each its own uid: set worker_uid_count = 0 to use worker_user",
				      cfg->worker_user, cfg->worker_uid_count);
	if (cfg->worker_uid_count &&
	    cfg->worker_uid_base != MDGPUD_WORKER_UID_BASE_AUTO &&
	    cfg->worker_uid_base + cfg->worker_uid_count - 1 >= UINT32_MAX)
		return mdgpud_cfg_err(err, errlen,
				      "worker_uid_base (%" PRIu64 ") + worker_uid_count (%u) runs past uid 4294967294",
				      cfg->worker_uid_base,
				      cfg->worker_uid_count);
	/* Every live worker holds a uid until it is reaped. */
	if (cfg->worker_uid_count && cfg->worker_uid_count < cfg->max_vgpus)
		return mdgpud_cfg_err(err, errlen,
				      "worker_uid_count (%u) is below max_vgpus (%u): every vGPU's worker needs a uid of its own",
				      cfg->worker_uid_count, cfg->max_vgpus);
	return 0;
}

/* One group key: its name resolves, or err says which key names what. */
static int mdgpud_config_group(const char *key, const char *name, char *err,
			       size_t errlen)
{
	if (!name[0])
		return 0;
	errno = 0;
	if (getgrnam(name))
		return 0;
	/* getgrnam(3): these errno values, or none, mean "not found". */
	if (errno && errno != ENOENT && errno != ESRCH && errno != EBADF &&
	    errno != EPERM) {
		int ret = -errno;

		snprintf(err, errlen, "%s = %s: group database: %s", key, name,
			 strerror(errno));
		return ret;
	}
	snprintf(err, errlen, "%s = %s: no such group (the mdgpud package's "
		 "sysusers.d file creates group mdgpu; systemd-sysusers or "
		 "addgroup --system creates one by hand)", key, name);
	return -ENOENT;
}

int mdgpud_config_check_groups(const struct mdgpud_config *cfg, char *err,
			       size_t errlen)
{
	int ret = 0;

	if (!strcmp(cfg->transport, "socket"))
		ret = mdgpud_config_group("socket_group", cfg->socket_group,
					  err, errlen);
	if (!ret && strcmp(cfg->admin_socket_path, "none"))
		ret = mdgpud_config_group("admin_socket_group",
					  cfg->admin_socket_group, err, errlen);
	return ret;
}

/*
 * Each key's field, for mdgpud_config_diff(): strings compare up to their
 * NUL, other fields byte for byte (uid_limits_exempt's unused tail is
 * zero, mdgpud_parse_uid_list()).  Every key mdgpud_config_set() takes
 * is here; test_config checks that against Documentation/daemon.md.
 */
struct mdgpud_config_field {
	const char *key;
	size_t off, size;
	bool str;
};

#define MDGPUD_CFG_FIELD(key, field, str)				\
	{ key, offsetof(struct mdgpud_config, field),			\
	  sizeof(((struct mdgpud_config *)0)->field), str }
#define MDGPUD_CFG_S(field)	MDGPUD_CFG_FIELD(#field, field, true)
#define MDGPUD_CFG_V(field)	MDGPUD_CFG_FIELD(#field, field, false)

static const struct mdgpud_config_field mdgpud_config_fields[] = {
	MDGPUD_CFG_S(socket_path), MDGPUD_CFG_V(socket_mode),
	MDGPUD_CFG_S(socket_group), MDGPUD_CFG_S(backend),
	MDGPUD_CFG_S(transport), MDGPUD_CFG_V(sim_fb_mib),
	MDGPUD_CFG_V(sim_sm_count), MDGPUD_CFG_V(sim_realtime),
	MDGPUD_CFG_V(sim_ctx_pinned_kib),
	MDGPUD_CFG_S(cuda_device), MDGPUD_CFG_V(cuda_fb_reserve_mib),
	MDGPUD_CFG_V(hang_timeout_ms), MDGPUD_CFG_V(module_load_timeout_ms),
	MDGPUD_CFG_V(worker_start_timeout_ms), MDGPUD_CFG_S(cuda_worker),
	MDGPUD_CFG_V(worker_sandbox), MDGPUD_CFG_V(worker_uid_base),
	MDGPUD_CFG_V(worker_uid_count), MDGPUD_CFG_S(worker_user),
	MDGPUD_CFG_S(worker_group),
	MDGPUD_CFG_FIELD("worker_seccomp", worker_seccomp_learn, false),
	MDGPUD_CFG_S(worker_seccomp_allow), MDGPUD_CFG_V(worker_dev),
	MDGPUD_CFG_V(worker_net), MDGPUD_CFG_V(worker_tmp),
	MDGPUD_CFG_V(timeslice_us), MDGPUD_CFG_V(policy),
	MDGPUD_CFG_V(cap_window_us), MDGPUD_CFG_V(log_level),
	MDGPUD_CFG_V(log_syslog), MDGPUD_CFG_V(ring_entries),
	MDGPUD_CFG_V(ring_entries_max), MDGPUD_CFG_V(max_vgpus),
	MDGPUD_CFG_V(max_allocs), MDGPUD_CFG_V(max_handles),
	MDGPUD_CFG_V(shared_bytes_max), MDGPUD_CFG_V(spin_us),
	MDGPUD_CFG_V(worker_poll_us), MDGPUD_CFG_V(worker_pollers),
	MDGPUD_CFG_V(linger_us), MDGPUD_CFG_V(latency_queue_us),
	MDGPUD_CFG_V(dma_bounce_kib), MDGPUD_CFG_V(host_mib_max),
	MDGPUD_CFG_V(register_mib_max),
	MDGPUD_CFG_S(admin_socket_path), MDGPUD_CFG_V(admin_socket_mode),
	MDGPUD_CFG_S(admin_socket_group),
	MDGPUD_CFG_V(uid_max_connections), MDGPUD_CFG_V(uid_max_vgpus),
	MDGPUD_CFG_V(uid_max_pinned_mib), MDGPUD_CFG_V(uid_limits_exempt),
	MDGPUD_CFG_FIELD("uid_limits_exempt", nr_uid_limits_exempt, false),
	MDGPUD_CFG_V(limit_log_interval_s), MDGPUD_CFG_V(handshake_timeout_ms),
	MDGPUD_CFG_V(ctx_overhead_mib), MDGPUD_CFG_S(parent_pci),
	MDGPUD_CFG_V(spatial), MDGPUD_CFG_S(mps_control), MDGPUD_CFG_S(mps_dir),
};

#undef MDGPUD_CFG_S
#undef MDGPUD_CFG_V
#undef MDGPUD_CFG_FIELD

unsigned int mdgpud_config_diff(const struct mdgpud_config *a,
				const struct mdgpud_config *b,
				void (*fn)(const char *key, void *data),
				void *data)
{
	const char *last = NULL;
	unsigned int n = 0;

	for (size_t i = 0; i < sizeof(mdgpud_config_fields) /
			       sizeof(mdgpud_config_fields[0]); i++) {
		const struct mdgpud_config_field *f = &mdgpud_config_fields[i];
		const char *fa = (const char *)a + f->off;
		const char *fb = (const char *)b + f->off;

		if (f->str ? !strncmp(fa, fb, f->size) :
			     !memcmp(fa, fb, f->size))
			continue;
		/* A key of two fields (uid_limits_exempt) counts once. */
		if (last && !strcmp(last, f->key))
			continue;
		last = f->key;
		n++;
		if (fn)
			fn(f->key, data);
	}
	return n;
}

bool mdgpud_config_key_compared(const char *key)
{
	for (size_t i = 0; i < sizeof(mdgpud_config_fields) /
			       sizeof(mdgpud_config_fields[0]); i++)
		if (!strcmp(mdgpud_config_fields[i].key, key))
			return true;
	return false;
}

/* The address s names, in canonical form into out. */
static int mdgpud_pci_parse(const char *s, bool domain_optional,
			    char out[MDGPUD_PCI_ADDR_LEN])
{
	struct mdgpu_pci_loc l;

	if (mdgpu_pci_loc_parse(s, domain_optional ?
				MDGPU_PCI_LOC_DOMAIN_OPTIONAL : 0, &l))
		return -EINVAL;
	snprintf(out, MDGPUD_PCI_ADDR_LEN, "%04" PRIx32 ":%02" PRIx32
		 ":%02" PRIx32 ".%" PRIx32, l.dom, l.bus, l.slot, l.fn);
	return 0;
}

/*
 * Each term is below its limit, so N < MDGPUD_WORKER_UID_PCI_SLOTS
 * (32768) and base + N x 65536 + 65535 <= 0xefffffff: no uint32_t
 * overflow, and the block stays below MDGPUD_WORKER_UID_PROBE.
 */
_Static_assert((uint64_t)MDGPUD_WORKER_UID_AUTO_BASE +
	       (uint64_t)MDGPUD_WORKER_UID_PCI_SLOTS *
	       MDGPUD_WORKER_UID_AUTO_STEP <= MDGPUD_WORKER_UID_PROBE,
	       "the PCI blocks end below the probe uid");
_Static_assert((uint64_t)MDGPUD_WORKER_UID_AUTO_ORDINAL_BASE +
	       (MDGPU_GPU_ORDINAL_MAX + 1ull) * MDGPUD_WORKER_UID_AUTO_STEP - 1
	       < UINT32_MAX, "the ordinal blocks end below uid 2^32-1");

int mdgpud_worker_uid_auto(const char *bus_id, int ordinal, uint32_t *base)
{
	struct mdgpu_pci_loc l;

	if (bus_id && !mdgpu_pci_loc_parse(bus_id,
					   MDGPU_PCI_LOC_DOMAIN_OPTIONAL, &l) &&
	    l.dom < MDGPUD_WORKER_UID_PCI_DOMAINS && l.fn == 0) {
		uint32_t n = l.dom * 8192u + l.bus * 32u + l.slot;

		*base = MDGPUD_WORKER_UID_AUTO_BASE +
			n * MDGPUD_WORKER_UID_AUTO_STEP;
		return 0;
	}
	if (ordinal < 0 || ordinal > MDGPU_GPU_ORDINAL_MAX)
		return -ERANGE;
	*base = MDGPUD_WORKER_UID_AUTO_ORDINAL_BASE +
		(uint32_t)ordinal * MDGPUD_WORKER_UID_AUTO_STEP;
	return 1;
}

int mdgpud_pci_addr_parse(const char *s, char out[MDGPUD_PCI_ADDR_LEN])
{
	return mdgpud_pci_parse(s, false, out);
}

int mdgpud_gpu_select_parse(const char *s, char out[MDGPU_GPU_SELECT_LEN])
{
	char pci[MDGPUD_PCI_ADDR_LEN];
	uint8_t uuid[16];
	int ordinal;

	if (!mdgpu_gpu_select_ordinal(s, &ordinal)) {
		snprintf(out, MDGPU_GPU_SELECT_LEN, "%d", ordinal);
		return 0;
	}
	if (!mdgpu_gpu_uuid_parse(s, uuid)) {
		mdgpu_gpu_uuid_format(uuid, out);
		return 0;
	}
	/* Longer than any selector: refused before it is read further. */
	if (strnlen(s, MDGPU_GPU_SELECT_LEN) >= MDGPU_GPU_SELECT_LEN ||
	    mdgpud_pci_parse(s, true, pci))
		return -EINVAL;
	_Static_assert(MDGPUD_PCI_ADDR_LEN <= MDGPU_GPU_SELECT_LEN,
		       "a canonical PCI address fits a selector");
	strcpy(out, pci);
	return 0;
}

bool mdgpud_config_parent_pci(const struct mdgpud_config *cfg,
			      const char *bus_id,
			      char out[MDGPUD_PCI_ADDR_LEN])
{
	if (!strcmp(cfg->parent_pci, "none"))
		return false;
	if (!strcmp(cfg->parent_pci, "auto"))
		return bus_id && !mdgpud_pci_addr_parse(bus_id, out);
	memcpy(out, cfg->parent_pci, MDGPUD_PCI_ADDR_LEN);
	return true;
}

/* Online CPUs, for the `auto` polling defaults. */
static bool mdgpud_config_many_cpus(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN) >= MDGPUD_POLL_AUTO_CPUS;
}

uint32_t mdgpud_config_spin_us(const struct mdgpud_config *cfg)
{
	if (cfg->spin_us != MDGPUD_POLL_AUTO)
		return cfg->spin_us;
	return mdgpud_config_many_cpus() ? MDGPUD_POLL_AUTO_SPIN_US :
					   MDGPUD_POLL_SMALL_SPIN_US;
}

uint32_t mdgpud_config_worker_pollers(const struct mdgpud_config *cfg)
{
	if (cfg->worker_pollers != MDGPUD_POLL_AUTO)
		return cfg->worker_pollers;
	return mdgpud_config_many_cpus() ? MDGPUD_POLL_AUTO_POLLERS : 0;
}

int mdgpud_config_mps_dir(const struct mdgpud_config *cfg, int ordinal,
			  char *out, size_t len)
{
	const char *slash = strrchr(cfg->socket_path, '/');
	int dir_len = slash ? (int)(slash - cfg->socket_path) : 1;
	int n;

	if (cfg->mps_dir[0])
		n = snprintf(out, len, "%s", cfg->mps_dir);
	else
		n = snprintf(out, len, "%.*s/mps%d", dir_len,
			     slash ? cfg->socket_path : ".", ordinal);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int mdgpud_config_worker_uid_base(const struct mdgpud_config *cfg,
				  const char *bus_id, int ordinal,
				  uint32_t *base)
{
	int ret;

	if (cfg->worker_uid_base != MDGPUD_WORKER_UID_BASE_AUTO) {
		*base = (uint32_t)cfg->worker_uid_base;
		return 0;
	}
	ret = mdgpud_worker_uid_auto(bus_id, ordinal, base);
	/* No worker runs as a uid of the range: nothing to warn about or
	 * fail for. */
	if (ret && (!cfg->worker_uid_count ||
		    cfg->worker_sandbox == MDGPUD_SANDBOX_OFF)) {
		if (ret < 0)
			*base = 0;
		return 0;
	}
	if (ret < 0)
		mdgpud_err("config: worker_uid_base = auto: GPU %d, bus id "
			   "'%s': no uid block", ordinal,
			   bus_id ? bus_id : "?");
	else if (ret)
		mdgpud_warn("config: worker_uid_base = auto: bus id '%s' is "
			    "not a PCI address in domains 0-%u with function "
			    "0: uids %u..%u from CUDA ordinal %d instead, "
			    "which another daemon that numbers its GPUs "
			    "otherwise may share; set worker_uid_base",
			    bus_id ? bus_id : "?",
			    MDGPUD_WORKER_UID_PCI_DOMAINS - 1, *base,
			    *base + (MDGPUD_WORKER_UID_AUTO_STEP - 1),
			    ordinal);
	return ret < 0 ? ret : 0;
}
