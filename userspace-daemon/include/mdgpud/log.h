/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpud logging: a level plus a printf-style callback.  The default sink
 * writes to stderr; mdgpud_log_use_syslog() switches to syslog(3).  The
 * library never writes to stdout.  errno is preserved across a log call.
 */
#ifndef MDGPUD_LOG_H
#define MDGPUD_LOG_H

#include <stdarg.h>

enum mdgpud_log_level {
	MDGPUD_LOG_ERR = 3,	/* syslog numbering */
	MDGPUD_LOG_WARN = 4,
	MDGPUD_LOG_INFO = 6,
	MDGPUD_LOG_DEBUG = 7,
};

typedef void (*mdgpud_log_fn)(void *data, int level, const char *fmt,
			      va_list ap);

/* Messages above `level` are dropped.  fn NULL restores stderr. */
void mdgpud_log_set(int level, mdgpud_log_fn fn, void *data);
/* The level alone, the sink kept (a reload's log_level). */
void mdgpud_log_set_level(int level);
int mdgpud_log_level(void);
void mdgpud_log_use_syslog(const char *ident);
/* "err", "warn", "info", "debug" -> level, or -EINVAL. */
int mdgpud_log_parse_level(const char *s);

void mdgpud_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define mdgpud_err(...)   mdgpud_log(MDGPUD_LOG_ERR, __VA_ARGS__)
#define mdgpud_warn(...)  mdgpud_log(MDGPUD_LOG_WARN, __VA_ARGS__)
#define mdgpud_info(...)  mdgpud_log(MDGPUD_LOG_INFO, __VA_ARGS__)
#define mdgpud_dbg(...)   mdgpud_log(MDGPUD_LOG_DEBUG, __VA_ARGS__)

#endif /* MDGPUD_LOG_H */
