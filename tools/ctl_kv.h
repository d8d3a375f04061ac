/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The admin protocol's data lines ("key=value key=value ..."), read by
 * mdgpuctl: a key's value, and a line as a JSON object (--json).
 */
#ifndef MDGPUCTL_KV_H
#define MDGPUCTL_KV_H

#include <stdint.h>
#include <stdio.h>

/* The value of key in line: 0 and *val (not NUL-terminated), *len; -1
 * when line has no such key. */
int ctl_kv_find(const char *line, const char *key, const char **val,
		size_t *len);
/* The value of key as a strict decimal number (digits only, at most
 * UINT64_MAX); -1 absent or not such a number. */
int ctl_kv_u64(const char *line, const char *key, uint64_t *out);
/* The value of key copied into buf (cut to n - 1 bytes); "-" if absent. */
void ctl_kv_str(const char *line, const char *key, char *buf, size_t n);

/*
 * Write line as one JSON object, keys in the line's order: a value made
 * of decimal digits only (no leading zero, at most UINT64_MAX) is a JSON
 * number, except for keys whose values are names (type, gpu, ...); any
 * other value is a string.  Returns 0, or -1 (nothing written) when a
 * word of line is not key=value with a non-empty key.
 */
int ctl_json_object(FILE *f, const char *line);

#endif /* MDGPUCTL_KV_H */
