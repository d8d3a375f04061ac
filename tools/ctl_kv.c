// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * key=value data lines of the admin protocol (ctl_kv.h).  Words are
 * separated by single spaces (the daemon writes them so); a reader skips
 * runs of spaces anyway.
 */
#include <stdbool.h>
#include <string.h>

#include "ctl_kv.h"

/* Next word of *p: its start and length; false at the end. */
static bool ctl_kv_word(const char **p, const char **w, size_t *len)
{
	const char *s = *p;

	while (*s == ' ')
		s++;
	if (!*s)
		return false;
	*w = s;
	while (*s && *s != ' ')
		s++;
	*len = (size_t)(s - *w);
	*p = s;
	return true;
}

int ctl_kv_find(const char *line, const char *key, const char **val,
		size_t *len)
{
	size_t klen = strlen(key), wlen;
	const char *w;

	while (ctl_kv_word(&line, &w, &wlen)) {
		if (wlen > klen && w[klen] == '=' && !memcmp(w, key, klen)) {
			*val = w + klen + 1;
			*len = wlen - klen - 1;
			return 0;
		}
	}
	return -1;
}

/* Strict decimal of n bytes; leading zeros allowed only if lead0. */
static int ctl_kv_dec(const char *s, size_t n, bool lead0, uint64_t *out)
{
	uint64_t v = 0;

	if (!n || (!lead0 && n > 1 && s[0] == '0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
			return -1;
	}
	*out = v;
	return 0;
}

int ctl_kv_u64(const char *line, const char *key, uint64_t *out)
{
	const char *v;
	size_t n;

	if (ctl_kv_find(line, key, &v, &n))
		return -1;
	return ctl_kv_dec(v, n, true, out);
}

void ctl_kv_str(const char *line, const char *key, char *buf, size_t n)
{
	const char *v;
	size_t len;

	if (!n)
		return;
	if (ctl_kv_find(line, key, &v, &len)) {
		v = "-";
		len = 1;
	}
	if (len > n - 1)
		len = n - 1;
	memcpy(buf, v, len);
	buf[len] = '\0';
}

/* Keys whose values are names, strings even when they look numeric. */
static bool ctl_json_name_key(const char *k, size_t n)
{
	static const char *const names[] = {
		"type", "gpu", "name", "bus_id", "mdev_uuid", "mdev_parent",
		"abi", "daemon_version", "backend", "transport", "policy",
		"context",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && !memcmp(names[i], k, n))
			return true;
	return false;
}

static void ctl_json_string(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

int ctl_json_object(FILE *f, const char *line)
{
	const char *p = line, *w, *eq;
	size_t n;
	bool first = true;
	uint64_t num;

	/* Check every word first, so that nothing is written on error. */
	while (ctl_kv_word(&p, &w, &n)) {
		eq = memchr(w, '=', n);
		if (!eq || eq == w)
			return -1;
	}
	fputc('{', f);
	p = line;
	while (ctl_kv_word(&p, &w, &n)) {
		size_t klen;

		eq = memchr(w, '=', n);
		klen = (size_t)(eq - w);
		fputs(first ? "" : ", ", f);
		first = false;
		ctl_json_string(f, w, klen);
		fputs(": ", f);
		if (!ctl_json_name_key(w, klen) &&
		    !ctl_kv_dec(eq + 1, n - klen - 1, false, &num))
			fwrite(eq + 1, 1, n - klen - 1, f);
		else
			ctl_json_string(f, eq + 1, n - klen - 1);
	}
	fputc('}', f);
	return 0;
}
