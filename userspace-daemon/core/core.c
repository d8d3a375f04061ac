// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpud core: the event loop (epoll, fd watches, stop/dump/reload
 * requests), GPU-wide settings (type lookup, policy, a reload's new
 * configuration) and the core's lifetime (create, run, destroy).  See
 * core_priv.h for the threading rules.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core_priv.h"
#include "mdgpud/limits.h"
#include "mdgpud/log.h"

/* ---------------------------------------------------------------- */
/* Event loop                                                       */

int mdgpud_core_watch(struct mdgpud_core *c, int fd, mdgpud_watch_fn fn,
		      void *data)
{
	struct mdgpud_watch *w = calloc(1, sizeof(*w));
	struct epoll_event ev = { .events = EPOLLIN };

	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->fn = fn;
	w->data = data;
	ev.data.ptr = w;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		int ret = -errno;

		free(w);
		return ret;
	}
	w->next = c->watches;
	c->watches = w;
	return 0;
}

/* The watch is freed after the current batch of events (it may be in it). */
void mdgpud_core_unwatch(struct mdgpud_core *c, int fd)
{
	for (struct mdgpud_watch *w = c->watches; w; w = w->next) {
		if (w->fd == fd && !w->dead) {
			epoll_ctl(c->epfd, EPOLL_CTL_DEL, fd, NULL);
			w->dead = true;
			return;
		}
	}
}

int mdgpud_core_watch_events(struct mdgpud_core *c, int fd, uint32_t events)
{
	for (struct mdgpud_watch *w = c->watches; w; w = w->next) {
		if (w->fd == fd && !w->dead) {
			struct epoll_event ev = { .events = events,
						  .data.ptr = w };

			return epoll_ctl(c->epfd, EPOLL_CTL_MOD, fd, &ev) ?
			       -errno : 0;
		}
	}
	return -ENOENT;
}

static void mdgpud_core_reap_watches(struct mdgpud_core *c)
{
	struct mdgpud_watch **pp = &c->watches, *w;

	while ((w = *pp)) {
		if (w->dead) {
			*pp = w->next;
			free(w);
		} else {
			pp = &w->next;
		}
	}
}

static void mdgpud_core_ctl_event(void *data, uint32_t events)
{
	struct mdgpud_core *c = data;
	uint64_t v;

	(void)events;
	while (read(c->ctl_efd, &v, sizeof(v)) == sizeof(v))
		;
}

void mdgpud_core_poll(struct mdgpud_core *c, int timeout_ms)
{
	struct epoll_event evs[16];
	int n = epoll_wait(c->epfd, evs, 16, timeout_ms);

	for (int i = 0; i < n; i++) {
		struct mdgpud_watch *w = evs[i].data.ptr;

		if (!w->dead)
			w->fn(w->data, evs[i].events);
	}
	mdgpud_core_reap_watches(c);
}

/* Async-signal-safe: wake the loop to look at its request flags. */
static void mdgpud_core_kick(struct mdgpud_core *c)
{
	uint64_t one = 1;
	ssize_t r;

	r = write(c->ctl_efd, &one, sizeof(one));
	(void)r;
}

void mdgpud_core_stop(struct mdgpud_core *c)
{
	c->stop_req = 1;
	mdgpud_core_kick(c);
}

void mdgpud_core_request_dump(struct mdgpud_core *c)
{
	c->dump_req = 1;
	mdgpud_core_kick(c);
}

void mdgpud_core_request_reload(struct mdgpud_core *c)
{
	c->reload_req = 1;
	mdgpud_core_kick(c);
}

void mdgpud_core_set_reload_hook(struct mdgpud_core *c, mdgpud_reload_fn fn,
				 void *data)
{
	c->reload_fn = fn;
	c->reload_data = data;
}

const struct mdgpud_gpu_info *mdgpud_core_gpu(const struct mdgpud_core *c)
{
	return &c->gpu;
}

const struct mdgpud_config *mdgpud_core_config(const struct mdgpud_core *c)
{
	return &c->cfg;
}

/* ---------------------------------------------------------------- */
/* GPU-wide settings                                                */

int mdgpud_core_type_lookup(const struct mdgpud_core *c, const char *name,
			    uint32_t *type_id, uint64_t *fb_quota,
			    uint64_t *aperture_size)
{
	const struct mdgpud_vtype *t = mdgpud_vtype_by_name(name);
	int ret;

	if (!t)
		return -ENOENT;
	ret = mdgpud_vgpu_type_quota(c, t, fb_quota);
	if (ret)
		return ret;
	*type_id = t->id;
	*aperture_size = t->aperture_mib << 20;
	return 0;
}

/* The scheduler's three settings at once: refused, none changes. */
static int mdgpud_core_set_sched(struct mdgpud_core *c, uint32_t policy,
				 uint32_t timeslice_us, uint64_t cap_window_us)
{
	struct mdgpud_sched_cfg scfg = {
		.policy = policy,
		.timeslice_ns = (uint64_t)timeslice_us * 1000,
		.cap_window_ns = cap_window_us * 1000,
	};
	int ret = mdgpud_sched_configure(c->sched, &scfg);

	if (ret) {
		mdgpud_warn("policy %u timeslice_us %u cap_window_us %" PRIu64
			    " refused: %s", policy, timeslice_us,
			    cap_window_us, strerror(-ret));
		return ret;
	}
	c->cfg.policy = policy;
	c->cfg.timeslice_us = timeslice_us;
	c->cfg.cap_window_us = cap_window_us;
	return 0;
}

int mdgpud_core_set_policy(struct mdgpud_core *c, uint32_t policy,
			   uint32_t timeslice_us)
{
	return mdgpud_core_set_sched(c, policy, timeslice_us,
				     c->cfg.cap_window_us);
}

/* The keys mdgpud_core_reconfigure() applies live. */
static bool mdgpud_core_key_live(const char *key)
{
	return !strcmp(key, "policy") || !strcmp(key, "timeslice_us") ||
	       !strcmp(key, "cap_window_us") || !strcmp(key, "linger_us") ||
	       !strcmp(key, "log_level");
}

/*
 * What a reload changed, for its summary (systemd's STATUS=): the keys
 * applied and those that need a restart, each list space-separated and
 * cut short with "..." when its buffer is full.
 */
struct mdgpud_core_reload_sum {
	char applied[160], restart[160];
};

/* Append key to list (of size len), or "..." once when it does not fit. */
static void mdgpud_core_sum_add(char *list, size_t len, const char *key)
{
	size_t used = strlen(list);

	if (used >= 3 && !strcmp(list + used - 3, "..."))
		return;
	if (used + 1 + strlen(key) + 4 > len) {
		snprintf(list + used, len - used, "%s...", used ? " " : "");
		return;
	}
	snprintf(list + used, len - used, "%s%s", used ? " " : "", key);
}

static void mdgpud_core_reload_key(const char *key, void *data)
{
	struct mdgpud_core_reload_sum *sum = data;

	if (mdgpud_core_key_live(key)) {
		mdgpud_info("reload: %s applied", key);
		mdgpud_core_sum_add(sum->applied, sizeof(sum->applied), key);
	} else {
		mdgpud_warn("reload: %s changed: needs a restart, "
			    "keeps its running value", key);
		mdgpud_core_sum_add(sum->restart, sizeof(sum->restart), key);
	}
}

/* The one-line summary of a successful reload into msg. */
static void mdgpud_core_reload_summary(const struct mdgpud_core_reload_sum *s,
				       unsigned int changed, char *msg,
				       size_t len)
{
	if (!changed)
		snprintf(msg, len, "no key changed");
	else if (!s->restart[0])
		snprintf(msg, len, "applied %s", s->applied);
	else if (!s->applied[0])
		snprintf(msg, len, "nothing applied, needs a restart: %s",
			 s->restart);
	else
		snprintf(msg, len, "applied %s; needs a restart: %s",
			 s->applied, s->restart);
}

int mdgpud_core_reconfigure(struct mdgpud_core *c,
			    const struct mdgpud_config *cfg, char *msg,
			    size_t msglen)
{
	struct mdgpud_core_reload_sum sum = { { 0 }, { 0 } };
	struct mdgpud_config old = c->cfg;
	unsigned int changed;
	char err[256];
	int ret;

	ret = mdgpud_config_validate(cfg, err, sizeof(err));
	if (ret) {
		mdgpud_err("reload: %s; the running configuration is unchanged",
			   err);
		if (msg)
			snprintf(msg, msglen, "%s", err);
		return ret;
	}
	/* One call for the three: refused, none changes. */
	if (cfg->policy != old.policy ||
	    cfg->timeslice_us != old.timeslice_us ||
	    cfg->cap_window_us != old.cap_window_us) {
		ret = mdgpud_core_set_sched(c, cfg->policy, cfg->timeslice_us,
					    cfg->cap_window_us);
		if (ret) {
			mdgpud_err("reload: policy/timeslice_us/cap_window_us "
				   "refused: %s; the running configuration "
				   "is unchanged", strerror(-ret));
			if (msg)
				snprintf(msg, msglen, "policy/timeslice_us/"
					 "cap_window_us refused: %s",
					 strerror(-ret));
			return ret;
		}
	}
	/* Read by the dispatcher, which runs this hook between slices. */
	c->cfg.linger_us = cfg->linger_us;
	c->linger_ns = (uint64_t)cfg->linger_us * 1000;
	if (cfg->log_level != old.log_level) {
		mdgpud_log_set_level(cfg->log_level);
		c->cfg.log_level = cfg->log_level;
	}
	changed = mdgpud_config_diff(&old, cfg, mdgpud_core_reload_key, &sum);
	if (!changed)
		mdgpud_info("reload: no key changed");
	if (msg)
		mdgpud_core_reload_summary(&sum, changed, msg, msglen);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Lifetime                                                         */

/*
 * The backend's derive(): what the config derives from the GPU the
 * backend found cuda_device at: worker_uid_base = auto from its PCI bus id
 * (the ordinal where that is no PCI address), the default mps_dir from
 * its ordinal.
 */
static int mdgpud_core_derive(const void *arg, int ordinal,
			      const char *bus_id, uint32_t *worker_uid_base,
			      char *mps_dir, size_t mps_dir_len)
{
	const struct mdgpud_config *cfg = arg;
	int ret;

	ret = mdgpud_config_worker_uid_base(cfg, bus_id, ordinal,
					    worker_uid_base);
	if (ret)
		return ret;
	if (mdgpud_config_mps_dir(cfg, ordinal, mps_dir, mps_dir_len)) {
		mdgpud_err("config: mps_dir: the path is too long");
		return -ENAMETOOLONG;
	}
	return 0;
}

int mdgpud_core_create(const struct mdgpud_config *cfg,
		       struct mdgpud_core **out)
{
	struct mdgpud_backend_cfg bcfg = { 0 };
	struct mdgpud_sched_cfg scfg;
	struct mdgpud_core *c;
	char err[256];
	int ret;

	ret = mdgpud_config_validate(cfg, err, sizeof(err));
	if (ret) {
		mdgpud_err("config: %s", err);
		return ret;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->linger_ns = (uint64_t)cfg->linger_us * 1000;
	c->latency_queue_ns = (uint64_t)cfg->latency_queue_us * 1000;
	c->epfd = c->ctl_efd = -1;
	pthread_mutex_init(&c->lock, NULL);
	c->vgpus = calloc(cfg->max_vgpus, sizeof(*c->vgpus));
	if (!c->vgpus) {
		ret = -ENOMEM;
		goto err;
	}
	ret = mdgpud_limits_create(cfg, &c->limits);
	if (ret)
		goto err;

	c->bops = mdgpud_backend_find(cfg->backend);
	if (!c->bops) {
		mdgpud_err("backend '%s' is not available in this build",
			   cfg->backend);
		ret = -ENOENT;
		goto err;
	}
	bcfg.device = c->cfg.cuda_device;
	bcfg.fb_size = !strcmp(cfg->backend, "sim") ? cfg->sim_fb_mib << 20 : 0;
	bcfg.fb_reserve = cfg->cuda_fb_reserve_mib << 20;
	bcfg.hang_timeout_ms = cfg->hang_timeout_ms;
	bcfg.module_load_timeout_ms = cfg->module_load_timeout_ms;
	bcfg.worker_start_timeout_ms = cfg->worker_start_timeout_ms;
	bcfg.sm_count = cfg->sim_sm_count;
	bcfg.sim_ctx_pinned = cfg->sim_ctx_pinned_kib << 10;
	bcfg.sim_realtime = cfg->sim_realtime;
	bcfg.worker_path = cfg->cuda_worker[0] ? cfg->cuda_worker : NULL;
	bcfg.sandbox = cfg->worker_sandbox;
	/* worker_uid_base = auto and mps_dir's default follow the GPU the
	 * backend finds cuda_device at: derive() gives them. */
	bcfg.worker_uid_base = cfg->worker_uid_base ==
			       MDGPUD_WORKER_UID_BASE_AUTO ? 0 :
			       (uint32_t)cfg->worker_uid_base;
	bcfg.worker_uid_count = cfg->worker_uid_count;
	bcfg.derive = mdgpud_core_derive;
	bcfg.derive_arg = &c->cfg;
	bcfg.probe_uid = MDGPUD_WORKER_UID_PROBE;
	bcfg.worker_user = cfg->worker_user[0] ? cfg->worker_user : NULL;
	bcfg.worker_group = cfg->worker_group[0] ? cfg->worker_group : NULL;
	bcfg.seccomp_learn = cfg->worker_seccomp_learn;
	bcfg.seccomp_allow = cfg->worker_seccomp_allow;
	bcfg.dev = cfg->worker_dev;
	bcfg.net = cfg->worker_net;
	bcfg.tmp = cfg->worker_tmp;
	bcfg.worker_poll_us = cfg->worker_poll_us;
	bcfg.worker_pollers = mdgpud_config_worker_pollers(cfg);
	bcfg.spatial = cfg->spatial;
	bcfg.mps_control = cfg->mps_control;
	ret = c->bops->open(&bcfg, &c->be, &c->gpu);
	if (ret) {
		mdgpud_err("backend %s: open: %s", cfg->backend,
			   strerror(-ret));
		goto err;
	}

	scfg = (struct mdgpud_sched_cfg){
		.policy = cfg->policy,
		.timeslice_ns = (uint64_t)cfg->timeslice_us * 1000,
		.cap_window_ns = cfg->cap_window_us * 1000,
	};
	ret = mdgpud_sched_create(&scfg, &c->sched);
	if (ret) {
		mdgpud_err("scheduler: %s (policy %u, timeslice_us %u, cap_window_us %" PRIu64 ")",
			   strerror(-ret), cfg->policy, cfg->timeslice_us,
			   cfg->cap_window_us);
		goto err;
	}

	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->ctl_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->epfd < 0 || c->ctl_efd < 0) {
		ret = -errno;
		goto err;
	}
	ret = mdgpud_core_watch(c, c->ctl_efd, mdgpud_core_ctl_event, c);
	if (ret)
		goto err;

	c->tops = mdgpud_transport_find(cfg->transport);
	if (!c->tops) {
		mdgpud_err("transport '%s' is not available", cfg->transport);
		ret = -ENOENT;
		goto err;
	}
	ret = c->tops->create(c, cfg, &c->t);
	if (ret)
		goto err;
	*out = c;
	return 0;
err:
	c->tops = NULL;
	mdgpud_core_destroy(c);
	return ret;
}

/*
 * The event loop and the dispatcher are one loop, in dispatch.c; it runs
 * in the calling thread (core_priv.h: threading).
 */
int mdgpud_core_run(struct mdgpud_core *c)
{
	return mdgpud_dispatch_run(c);
}

void mdgpud_core_destroy(struct mdgpud_core *c)
{
	if (!c)
		return;
	/* Tell every client first, then tear the transport (and with it
	 * every vGPU, whose memory is scrubbed) down. */
	for (uint32_t i = 0; i < c->nr_vgpus; i++)
		c->vgpus[i]->tops->lost(c->vgpus[i]->tpriv);
	if (c->tops && c->t)
		c->tops->destroy(c->t);
	while (c->nr_vgpus)	/* a transport that left some behind */
		mdgpud_vgpu_destroy(c->vgpus[0]);
	if (c->sched)
		mdgpud_sched_destroy(c->sched);
	if (c->be)
		c->bops->close(c->be);
	for (struct mdgpud_watch *w = c->watches; w; w = w->next)
		w->dead = true;
	mdgpud_core_reap_watches(c);
	if (c->ctl_efd >= 0)
		close(c->ctl_efd);
	if (c->epfd >= 0)
		close(c->epfd);
	free(c->vgpus);
	mdgpud_limits_destroy(c->limits);	/* after the transport */
	pthread_mutex_destroy(&c->lock);
	free(c);
}
