// SPDX-License-Identifier: GPL-2.0 OR MIT
/* mdgpud logging: level + callback, stderr by default, syslog on request. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <time.h>

#include "mdgpud/log.h"

/* Protects the sink configuration; messages themselves are not serialised
 * beyond what stdio/syslog do. */
static pthread_mutex_t mdgpud_log_lock = PTHREAD_MUTEX_INITIALIZER;
static int mdgpud_log_cur_level = MDGPUD_LOG_WARN;
static mdgpud_log_fn mdgpud_log_cur_fn;
static void *mdgpud_log_cur_data;

static const char *mdgpud_log_names[8] = {
	[MDGPUD_LOG_ERR] = "err", [MDGPUD_LOG_WARN] = "warn",
	[MDGPUD_LOG_INFO] = "info", [MDGPUD_LOG_DEBUG] = "debug",
};

static void mdgpud_log_stderr(void *data, int level, const char *fmt,
			      va_list ap)
{
	char buf[1024];
	struct timespec ts;

	(void)data;
	clock_gettime(CLOCK_REALTIME, &ts);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "mdgpud[%ld.%06ld] %s: %s\n", (long)ts.tv_sec,
		ts.tv_nsec / 1000L,
		level >= 0 && level < 8 && mdgpud_log_names[level] ?
		mdgpud_log_names[level] : "?", buf);
}

static void mdgpud_log_syslog(void *data, int level, const char *fmt,
			      va_list ap)
{
	(void)data;
	vsyslog(level, fmt, ap);
}

void mdgpud_log_set_level(int level)
{
	__atomic_store_n(&mdgpud_log_cur_level, level, __ATOMIC_RELAXED);
}

void mdgpud_log_set(int level, mdgpud_log_fn fn, void *data)
{
	pthread_mutex_lock(&mdgpud_log_lock);
	mdgpud_log_set_level(level);
	mdgpud_log_cur_fn = fn;
	mdgpud_log_cur_data = data;
	pthread_mutex_unlock(&mdgpud_log_lock);
}

int mdgpud_log_level(void)
{
	return __atomic_load_n(&mdgpud_log_cur_level, __ATOMIC_RELAXED);
}

void mdgpud_log_use_syslog(const char *ident)
{
	openlog(ident ? ident : "mdgpud", LOG_PID, LOG_DAEMON);
	pthread_mutex_lock(&mdgpud_log_lock);
	mdgpud_log_cur_fn = mdgpud_log_syslog;
	mdgpud_log_cur_data = NULL;
	pthread_mutex_unlock(&mdgpud_log_lock);
}

int mdgpud_log_parse_level(const char *s)
{
	for (int i = 0; i < 8; i++)
		if (mdgpud_log_names[i] && !strcasecmp(s, mdgpud_log_names[i]))
			return i;
	return -EINVAL;
}

void mdgpud_log(int level, const char *fmt, ...)
{
	int saved = errno;
	mdgpud_log_fn fn;
	void *data;
	va_list ap;

	/* Filtered messages cost one atomic load, no lock. */
	if (level > __atomic_load_n(&mdgpud_log_cur_level, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&mdgpud_log_lock);
	fn = mdgpud_log_cur_fn ? mdgpud_log_cur_fn : mdgpud_log_stderr;
	data = mdgpud_log_cur_data;
	pthread_mutex_unlock(&mdgpud_log_lock);

	va_start(ap, fmt);
	fn(data, level, fmt, ap);
	va_end(ap);
	errno = saved;
}
