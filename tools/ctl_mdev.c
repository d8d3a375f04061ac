// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpuctl's sysfs side (ctl_mdev.h): mdev types, create, remove, show
 * and the knobs of one vGPU, through sysfs or mdevctl.
 *
 * Every argument is hostile: names are checked before they become a path
 * component (ctl_mdev_name_ok), UUIDs are 8-4-4-4-12 hex digits, values
 * decimal digits, every path is formatted with its length checked, and
 * mdevctl is run by fork and execvp (no shell).  The kernel judges the
 * values themselves (one place for the ranges); its errno decides the
 * exit status (ctl_mdev_exit_of).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_client.h"
#include "ctl_kv.h"
#include "ctl_mdev.h"
#include "uapi/mdgpu.h"

#define CTL_MDEV_BUS_ENV	"MDGPU_SYSFS_MDEV_BUS"
#define CTL_MDEV_BUS_DEFAULT	"/sys/class/mdev_bus"
#define CTL_MDEV_DEV_ENV	"MDGPU_SYSFS_MDEV_DEVICES"
#define CTL_MDEV_DEV_DEFAULT	"/sys/bus/mdev/devices"
#define CTL_MDEV_UUID_SRC	"/proc/sys/kernel/random/uuid"
#define CTL_MDEV_PREFIX		"mdgpu-"
#define CTL_MDEV_PATH_MAX	4096
#define CTL_MDEV_FILE_MAX	4096	/* a sysfs file is at most a page */
#define CTL_MDEV_VALUE_MAX	512	/* one value of an output line */
#define CTL_MDEV_NKNOBS		3

static const char *const ctl_mdev_knobs[CTL_MDEV_NKNOBS] = {
	"weight", "cap", "priority",
};
/* The kernel's ranges (include/uapi/mdgpu.h), for messages only. */
static const unsigned int ctl_mdev_knob_range[CTL_MDEV_NKNOBS][2] = {
	{ MDGPU_WEIGHT_MIN, MDGPU_WEIGHT_MAX },
	{ MDGPU_CAP_MIN, MDGPU_CAP_MAX },
	{ MDGPU_PRIORITY_MIN, MDGPU_PRIORITY_MAX },
};

/* ---------------------------------------------------------- checks */

static bool ctl_mdev_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

int ctl_mdev_uuid(const char *s, char out[CTL_MDEV_UUID_LEN])
{
	if (strlen(s) != CTL_MDEV_UUID_LEN - 1)
		return -1;
	for (int i = 0; i < CTL_MDEV_UUID_LEN - 1; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !ctl_mdev_hex(s[i]))
			return -1;
		/* sysfs names the device in lower case */
		out[i] = s[i] >= 'A' && s[i] <= 'F' ? (char)(s[i] + 32) : s[i];
	}
	out[CTL_MDEV_UUID_LEN - 1] = '\0';
	return 0;
}

bool ctl_mdev_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > CTL_MDEV_NAME_MAX || s[0] == '-' || !strcmp(s, ".") ||
	    !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f ||
		    *s == '/')
			return false;
	return true;
}

bool ctl_mdev_value_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 10 && strspn(s, "0123456789") == n;
}

int ctl_mdev_knob(const char *knob)
{
	for (int k = 0; k < CTL_MDEV_NKNOBS; k++)
		if (!strcmp(knob, ctl_mdev_knobs[k]))
			return k;
	return -1;
}

static bool ctl_mdev_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && strchr("._:-", c));
}

void ctl_mdev_sanitize(const char *s, size_t n, char *out, size_t outlen)
{
	size_t i;

	for (i = 0; i < n && i + 1 < outlen; i++)
		out[i] = ctl_mdev_plain((unsigned char)s[i]) ? s[i] : '_';
	if (!i)
		out[i++] = '-';
	out[i] = '\0';
}

/* ------------------------------------------------------ files, paths */

static const char *ctl_mdev_root(const char *env, const char *def)
{
	const char *r = getenv(env);

	return r && *r ? r : def;
}

static const char *ctl_mdev_bus(void)
{
	return ctl_mdev_root(CTL_MDEV_BUS_ENV, CTL_MDEV_BUS_DEFAULT);
}

static const char *ctl_mdev_devices(void)
{
	return ctl_mdev_root(CTL_MDEV_DEV_ENV, CTL_MDEV_DEV_DEFAULT);
}

/* Format a path into buf (CTL_MDEV_PATH_MAX bytes); false, with a
 * message, when it does not fit (the roots come from the environment). */
__attribute__((format(printf, 2, 3)))
static bool ctl_mdev_path(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, CTL_MDEV_PATH_MAX, fmt, ap);
	va_end(ap);
	if (n >= 0 && n < CTL_MDEV_PATH_MAX)
		return true;
	fprintf(stderr, "mdgpuctl: path too long (%s, %s)\n", CTL_MDEV_BUS_ENV,
		CTL_MDEV_DEV_ENV);
	return false;
}

/* The exit status for errno e of a sysfs access. */
static int ctl_mdev_exit_of(int e)
{
	switch (e) {
	case EACCES:
	case EPERM:
	case EROFS:
		return CTL_EXIT_PERM;
	case EIO:
	case EINTR:
	case EAGAIN:
	case ENOMEM:
	case ETIMEDOUT:
	case EMFILE:
	case ENFILE:
	case EFAULT:
	case EBADF:
		return CTL_EXIT_PROTO;
	default:		/* EINVAL, ERANGE, ENOENT, EEXIST, ENOSPC, ... */
		return CTL_EXIT_REFUSED;
	}
}

/* Write s and a newline to path in one write(), as echo does (a sysfs
 * store sees one buffer): 0, or -errno, the kernel's answer. */
static int ctl_mdev_write(const char *path, const char *s)
{
	char buf[CTL_MDEV_UUID_LEN + 8];
	int n = snprintf(buf, sizeof(buf), "%s\n", s), fd, e = 0;
	ssize_t w;

	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EINVAL;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	w = write(fd, buf, (size_t)n);
	if (w < 0)
		e = -errno;
	else if (w != n)
		e = -EIO;
	if (close(fd) && !e && errno != EINTR)
		e = -errno;
	return e;
}

/* The file at path, NUL-terminated, at most len - 1 bytes: 0 or -errno. */
static int ctl_mdev_read(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;

	if (fd < 0)
		return -errno;
	while (got + 1 < len) {
		ssize_t r = read(fd, buf + got, len - 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			e = -errno;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return e;
}

/* The first line of the file dir/name, or "" when unreadable. */
static void ctl_mdev_read_line(const char *dir, const char *name, char *buf,
			       size_t len)
{
	char path[CTL_MDEV_PATH_MAX];

	buf[0] = '\0';
	if (!ctl_mdev_path(path, "%s/%s", dir, name) ||
	    ctl_mdev_read(path, buf, len))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static bool ctl_mdev_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/* After a failed ctl_mdev_exists(path): "mdgpuctl: WHAT NAME (PATH:
 * error)" and the exit status of that error. */
static int ctl_mdev_missing(const char *what, const char *name,
			    const char *path)
{
	int e = errno;

	fprintf(stderr, "mdgpuctl: %s %s (%s: %s)\n", what, name, path,
		strerror(e));
	return ctl_mdev_exit_of(e);
}

/* ---------------------------------------------------- output lines */

/* A key=value line being built; words that do not fit are dropped. */
struct ctl_mdev_line {
	char buf[CTL_LINE_MAX];
	size_t len;
};

/* Append key=v, v already a value (no space, no control byte). */
static void ctl_mdev_add_raw(struct ctl_mdev_line *l, const char *key,
			     const char *v)
{
	size_t room = sizeof(l->buf) - l->len;
	int w = snprintf(l->buf + l->len, room, "%s%s=%s",
			 l->len ? " " : "", key, v);

	if (w < 0 || (size_t)w >= room)
		l->buf[l->len] = '\0';
	else
		l->len += (size_t)w;
}

/* Append key=value, the value (n bytes) sanitized. */
static void ctl_mdev_add(struct ctl_mdev_line *l, const char *key,
			 const char *val, size_t n)
{
	char v[CTL_MDEV_VALUE_MAX];

	ctl_mdev_sanitize(val, n, v, sizeof(v));
	ctl_mdev_add_raw(l, key, v);
}

static void ctl_mdev_add_str(struct ctl_mdev_line *l, const char *key,
			     const char *val)
{
	ctl_mdev_add(l, key, val, strlen(val));
}

/* Lines printed as they are, or as JSON: an array of objects, or the
 * one object of show. */
struct ctl_mdev_out {
	bool json, array;
	size_t n;
};

static void ctl_mdev_emit(struct ctl_mdev_out *o, const char *line)
{
	if (!o->json) {
		printf("%s\n", line);
	} else {
		if (o->array)
			fputs(o->n ? ",\n  " : "[\n  ", stdout);
		/* every word is key=value with a key: it cannot fail */
		ctl_json_object(stdout, line);
		if (!o->array)
			fputc('\n', stdout);
	}
	o->n++;
}

static void ctl_mdev_emit_end(const struct ctl_mdev_out *o)
{
	if (o->json && o->array)
		fputs(o->n ? "\n]\n" : "[]\n", stdout);
}

/* ------------------------------------------------------------ types */

static int ctl_mdev_not_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static int ctl_mdev_is_type(const struct dirent *d)
{
	return !strncmp(d->d_name, CTL_MDEV_PREFIX, strlen(CTL_MDEV_PREFIX));
}

/* A type's description ("framebuffer: 1024 MiB\nmax_instances: 16\n...",
 * Documentation/kmod.md "Types") as one value: each line sanitized
 * (spaces become '_'), the lines joined by ','. */
static void ctl_mdev_add_description(struct ctl_mdev_line *l,
				     const char *dir)
{
	char path[CTL_MDEV_PATH_MAX], text[CTL_MDEV_FILE_MAX];
	char v[CTL_MDEV_VALUE_MAX], part[CTL_MDEV_VALUE_MAX];
	size_t len = 0;

	v[0] = '\0';
	if (ctl_mdev_path(path, "%s/description", dir) &&
	    !ctl_mdev_read(path, text, sizeof(text))) {
		for (char *s = text, *nl; *s; s = nl + !!*nl) {
			nl = s + strcspn(s, "\n");
			if (nl == s)
				continue;
			ctl_mdev_sanitize(s, (size_t)(nl - s), part,
					  sizeof(part));
			len += (size_t)snprintf(v + len, sizeof(v) - len,
						"%s%s", len ? "," : "", part);
			if (len >= sizeof(v) - 1)
				break;
		}
	}
	/* plain bytes and ',' only: added as it is */
	ctl_mdev_add_raw(l, "description", v[0] ? v : "-");
}

/* One line per mdgpu type of parent p (a name from the bus directory or
 * a checked argument); *found counts them.  0, or an exit status when the
 * types directory cannot be read and !quiet. */
static int ctl_mdev_types_of(const char *p, bool quiet,
			     struct ctl_mdev_out *o, size_t *found)
{
	char dir[CTL_MDEV_PATH_MAX], tdir[CTL_MDEV_PATH_MAX];
	char val[CTL_MDEV_VALUE_MAX];
	struct dirent **ents;
	int n;

	if (!ctl_mdev_path(dir, "%s/%s/mdev_supported_types", ctl_mdev_bus(),
			   p))
		return CTL_EXIT_USAGE;
	n = scandir(dir, &ents, ctl_mdev_is_type, alphasort);
	if (n < 0) {
		int e = errno;

		if (quiet)
			return 0;
		fprintf(stderr, "mdgpuctl: %s: %s\n", dir, strerror(e));
		return ctl_mdev_exit_of(e);
	}
	for (int i = 0; i < n; i++) {
		struct ctl_mdev_line l = { .len = 0 };

		if (ctl_mdev_path(tdir, "%s/%s", dir, ents[i]->d_name)) {
			ctl_mdev_add_str(&l, "mdev_parent", p);
			ctl_mdev_add_str(&l, "type", ents[i]->d_name);
			ctl_mdev_read_line(tdir, "name", val, sizeof(val));
			ctl_mdev_add_str(&l, "name", val);
			ctl_mdev_read_line(tdir, "available_instances", val,
					   sizeof(val));
			ctl_mdev_add_str(&l, "available", val);
			ctl_mdev_add_description(&l, tdir);
			ctl_mdev_emit(o, l.buf);
			(*found)++;
		}
		free(ents[i]);
	}
	free(ents);
	return 0;
}

/* Every parent of the bus, in name order; one without mdgpu types (or
 * without types at all) prints nothing. */
static int ctl_mdev_types_all(struct ctl_mdev_out *o)
{
	struct dirent **ents;
	size_t found = 0;
	int n, ret = 0;

	n = scandir(ctl_mdev_bus(), &ents, ctl_mdev_not_dot, alphasort);
	if (n < 0 && errno != ENOENT) {
		int e = errno;

		fprintf(stderr, "mdgpuctl: %s: %s\n", ctl_mdev_bus(),
			strerror(e));
		return ctl_mdev_exit_of(e);
	}
	for (int i = 0; i < n; i++) {
		if (!ret && ctl_mdev_name_ok(ents[i]->d_name))
			ret = ctl_mdev_types_of(ents[i]->d_name, true, o,
						&found);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	return ret;
}

static int ctl_mdev_types_one(const char *p, struct ctl_mdev_out *o)
{
	char dir[CTL_MDEV_PATH_MAX];
	size_t found = 0;
	int ret;

	if (!ctl_mdev_path(dir, "%s/%s", ctl_mdev_bus(), p))
		return CTL_EXIT_USAGE;
	if (!ctl_mdev_exists(dir))
		return ctl_mdev_missing("no mdev parent", p, dir);
	ret = ctl_mdev_types_of(p, false, o, &found);
	if (!ret && !found) {
		fprintf(stderr, "mdgpuctl: mdev parent '%s' has no %s* types\n",
			p, CTL_MDEV_PREFIX);
		ret = CTL_EXIT_REFUSED;
	}
	return ret;
}

int ctl_mdev_types(int argc, char **argv, bool json)
{
	struct ctl_mdev_out o = { .json = json, .array = true };
	const char *parent = NULL;
	int ret;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			o.json = true;
		} else if (!parent) {
			parent = argv[i];
		} else {
			fprintf(stderr, "mdgpuctl: types [PARENT] [--json]\n");
			return CTL_EXIT_USAGE;
		}
	}
	if (parent && !ctl_mdev_name_ok(parent)) {
		fprintf(stderr, "mdgpuctl: '%s' cannot be an mdev parent's name\n",
			parent);
		return CTL_EXIT_USAGE;
	}
	ret = parent ? ctl_mdev_types_one(parent, &o) : ctl_mdev_types_all(&o);
	if (!ret)
		ctl_mdev_emit_end(&o);
	return ret;
}

/* ------------------------------------------------------------ knobs */

/* Write value to knob k of vGPU uuid; the kernel checks the range. */
static int ctl_mdev_knob_write(const char *uuid, int k, const char *value)
{
	char path[CTL_MDEV_PATH_MAX];
	int e;

	if (!ctl_mdev_path(path, "%s/%s/mdgpu/%s", ctl_mdev_devices(), uuid,
			   ctl_mdev_knobs[k]))
		return CTL_EXIT_USAGE;
	e = -ctl_mdev_write(path, value);
	if (!e)
		return CTL_EXIT_OK;
	fprintf(stderr, "mdgpuctl: writing %s to %s: %s", value, path,
		strerror(e));
	if (e == EINVAL)
		fprintf(stderr, " (%s is %u..%u)", ctl_mdev_knobs[k],
			ctl_mdev_knob_range[k][0], ctl_mdev_knob_range[k][1]);
	fputc('\n', stderr);
	return ctl_mdev_exit_of(e);
}

/* The vGPU's mdgpu/ directory exists: 0, or an exit status (message). */
static int ctl_mdev_vgpu_dir(const char *uuid, char *dir)
{
	if (!ctl_mdev_path(dir, "%s/%s/mdgpu", ctl_mdev_devices(), uuid))
		return CTL_EXIT_USAGE;
	if (ctl_mdev_exists(dir))
		return 0;
	return ctl_mdev_missing("no mdgpu vGPU", uuid, dir);
}

/* knob and value as the daemon judges them: refused (1) otherwise. */
static int ctl_mdev_knob_check(const char *knob, const char *value)
{
	if (ctl_mdev_knob(knob) < 0) {
		fprintf(stderr, "mdgpuctl: unknown knob '%s' (weight, cap or priority)\n",
			knob);
		return CTL_EXIT_REFUSED;
	}
	if (!ctl_mdev_value_ok(value)) {
		fprintf(stderr, "mdgpuctl: %s: '%s' is not a decimal number (EINVAL)\n",
			knob, value);
		return CTL_EXIT_REFUSED;
	}
	return 0;
}

int ctl_mdev_set(const char *uuid, const char *knob, const char *value)
{
	char dir[CTL_MDEV_PATH_MAX];
	int ret = ctl_mdev_knob_check(knob, value);

	if (!ret)
		ret = ctl_mdev_vgpu_dir(uuid, dir);
	if (!ret)
		ret = ctl_mdev_knob_write(uuid, ctl_mdev_knob(knob), value);
	return ret;
}

/* ---------------------------------------------------------- mdevctl */

/* mdevctl is an executable file in a directory of $PATH. */
static bool ctl_mdev_have_mdevctl(void)
{
	const char *p = getenv("PATH");
	char path[CTL_MDEV_PATH_MAX];

	if (!p || !*p)
		p = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	while (*p) {
		size_t n = strcspn(p, ":");
		int w = snprintf(path, sizeof(path), "%.*s%smdevctl", (int)n,
				 p, n ? "/" : "");

		if (w > 0 && (size_t)w < sizeof(path) && !access(path, X_OK))
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

static void ctl_mdev_print_argv(char *const argv[])
{
	for (int i = 0; argv[i]; i++)
		fprintf(stderr, "%s%s", i ? " " : "", argv[i]);
}

/*
 * Run argv (mdevctl ...) by fork and execvp, no shell; its stdout goes to
 * our stderr, so that stdout keeps only what mdgpuctl prints.  0 when it
 * exited 0; else 1 (it failed: named on stderr if report) or 4 (it could
 * not run, or died of a signal).
 */
static int ctl_mdev_run(char *const argv[], bool report)
{
	int pfd[2], e = 0, st;
	ssize_t r;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if (pipe2(pfd, O_CLOEXEC)) {
		perror("mdgpuctl: pipe");
		return CTL_EXIT_PROTO;
	}
	pid = fork();
	if (pid < 0) {
		perror("mdgpuctl: fork");
		close(pfd[0]);
		close(pfd[1]);
		return CTL_EXIT_PROTO;
	}
	if (!pid) {
		/* the pipe tells the parent why execvp failed */
		close(pfd[0]);
		if (dup2(STDERR_FILENO, STDOUT_FILENO) >= 0)
			execvp(argv[0], argv);
		e = errno;
		if (write(pfd[1], &e, sizeof(e)) != sizeof(e))
			_exit(126);
		_exit(127);
	}
	close(pfd[1]);
	do {
		r = read(pfd[0], &e, sizeof(e));
	} while (r < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return CTL_EXIT_PROTO;
	if (r == (ssize_t)sizeof(e)) {
		fprintf(stderr, "mdgpuctl: cannot run %s: %s\n", argv[0],
			strerror(e));
		return CTL_EXIT_PROTO;
	}
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return CTL_EXIT_OK;
	if (report || !WIFEXITED(st)) {
		fputs("mdgpuctl: ", stderr);
		ctl_mdev_print_argv(argv);
		fprintf(stderr, WIFEXITED(st) ? ": exit status %d\n" :
			": killed by signal %d\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	return WIFEXITED(st) ? CTL_EXIT_REFUSED : CTL_EXIT_PROTO;
}

/* mdevctl VERB -u UUID */
static int ctl_mdev_mdevctl(const char *verb, const char *uuid, bool report)
{
	char *argv[] = { (char *)"mdevctl", (char *)verb, (char *)"-u",
			 (char *)uuid, NULL };

	return ctl_mdev_run(argv, report);
}

static bool ctl_mdev_device_exists(const char *uuid)
{
	char path[CTL_MDEV_PATH_MAX];

	return ctl_mdev_path(path, "%s/%s", ctl_mdev_devices(), uuid) &&
	       ctl_mdev_exists(path);
}

static int ctl_mdev_need_mdevctl(void)
{
	if (ctl_mdev_have_mdevctl())
		return 0;
	fprintf(stderr, "mdgpuctl: --mdevctl: mdevctl is not on PATH (Debian: apt install mdevctl)\n");
	return CTL_EXIT_REFUSED;
}

/* ----------------------------------------------------------- create */

struct ctl_mdev_new {
	const char *parent;
	char type[sizeof(CTL_MDEV_PREFIX) + CTL_MDEV_NAME_MAX];
	char uuid[CTL_MDEV_UUID_LEN];
	const char *knob[CTL_MDEV_NKNOBS];	/* value per knob, or NULL */
	bool mdevctl;
};

/* One option of create (--mdevctl, --NAME VALUE or --NAME=VALUE) at
 * argv[*i]: 0, or an exit status. */
static int ctl_mdev_create_opt(struct ctl_mdev_new *c, int argc, char **argv,
			       int *i)
{
	const char *a = argv[*i], *val, *eq = strchr(a, '=');
	char name[16];
	size_t n = eq ? (size_t)(eq - a) : strlen(a);
	int k;

	if (!strcmp(a, "--mdevctl")) {
		c->mdevctl = true;
		return 0;
	}
	if (strncmp(a, "--", 2) || n - 2 >= sizeof(name) || (!eq && *i + 1 >= argc))
		goto usage;
	memcpy(name, a + 2, n - 2);
	name[n - 2] = '\0';
	val = eq ? eq + 1 : argv[++*i];
	if (!strcmp(name, "uuid")) {
		if (c->uuid[0] || ctl_mdev_uuid(val, c->uuid)) {
			fprintf(stderr, "mdgpuctl: --uuid: '%s' is not a UUID (8-4-4-4-12 hex digits), or given twice\n",
				val);
			return CTL_EXIT_USAGE;
		}
		return 0;
	}
	k = ctl_mdev_knob(name);
	if (k < 0 || c->knob[k])
		goto usage;
	c->knob[k] = val;
	return ctl_mdev_knob_check(name, val);
usage:
	fprintf(stderr, "mdgpuctl: create PARENT TYPE [--uuid U] [--weight W] [--cap C] [--priority P] [--mdevctl]: bad option '%s'\n",
		a);
	return CTL_EXIT_USAGE;
}

/* The arguments of create, each checked: 0 or an exit status. */
static int ctl_mdev_create_args(struct ctl_mdev_new *c, int argc, char **argv)
{
	const char *t;
	int ret = 0;

	if (argc < 2) {
		fprintf(stderr, "mdgpuctl: create PARENT TYPE [--uuid U] [--weight W] [--cap C] [--priority P] [--mdevctl]\n");
		return CTL_EXIT_USAGE;
	}
	c->parent = argv[0];
	t = argv[1];
	/* TYPE: mdgpu-4g or 4g */
	snprintf(c->type, sizeof(c->type), "%s%s",
		 strncmp(t, CTL_MDEV_PREFIX, strlen(CTL_MDEV_PREFIX)) ?
		 CTL_MDEV_PREFIX : "", t);
	if (!ctl_mdev_name_ok(c->parent) || !ctl_mdev_name_ok(t)) {
		fprintf(stderr, "mdgpuctl: create: '%s' '%s' cannot be an mdev parent and type\n",
			c->parent, t);
		return CTL_EXIT_USAGE;
	}
	for (int i = 2; i < argc && !ret; i++)
		ret = ctl_mdev_create_opt(c, argc, argv, &i);
	return ret;
}

/* The type directory exists under the parent: 0 or an exit status. */
static int ctl_mdev_type_dir(const struct ctl_mdev_new *c, char *dir)
{
	if (!ctl_mdev_path(dir, "%s/%s", ctl_mdev_bus(), c->parent))
		return CTL_EXIT_USAGE;
	if (!ctl_mdev_exists(dir))
		return ctl_mdev_missing("no mdev parent", c->parent, dir);
	if (!ctl_mdev_path(dir, "%s/%s/mdev_supported_types/%s",
			   ctl_mdev_bus(), c->parent, c->type))
		return CTL_EXIT_USAGE;
	if (!ctl_mdev_exists(dir))
		return ctl_mdev_missing("no type", c->type, dir);
	return 0;
}

/* A new UUID from the kernel, when --uuid was not given. */
static int ctl_mdev_new_uuid(char out[CTL_MDEV_UUID_LEN])
{
	char buf[64];
	int e = -ctl_mdev_read(CTL_MDEV_UUID_SRC, buf, sizeof(buf));

	buf[strcspn(buf, "\n")] = '\0';
	if (!e && !ctl_mdev_uuid(buf, out))
		return 0;
	fprintf(stderr, "mdgpuctl: %s: %s\n", CTL_MDEV_UUID_SRC,
		e ? strerror(e) : "not a UUID");
	return CTL_EXIT_PROTO;
}

/* Remove the vGPU create made, after a knob write failed. */
static void ctl_mdev_rollback(const char *uuid)
{
	char path[CTL_MDEV_PATH_MAX];
	int e;

	if (!ctl_mdev_path(path, "%s/%s/remove", ctl_mdev_devices(), uuid))
		return;
	e = -ctl_mdev_write(path, "1");
	if (!e)
		fprintf(stderr, "mdgpuctl: vGPU %s removed again (a knob was refused)\n",
			uuid);
	else
		fprintf(stderr, "mdgpuctl: vGPU %s was created, but removing it failed: writing 1 to %s: %s; remove it by hand\n",
			uuid, path, strerror(e));
}

/* sysfs: the UUID to the type's create, then each knob; on a refused
 * knob the vGPU is removed again and the knob's status returned. */
static int ctl_mdev_create_sysfs(const struct ctl_mdev_new *c,
				 const char *tdir)
{
	char path[CTL_MDEV_PATH_MAX];
	int e, ret = 0;

	if (!ctl_mdev_path(path, "%s/create", tdir))
		return CTL_EXIT_USAGE;
	e = -ctl_mdev_write(path, c->uuid);
	if (e) {
		fprintf(stderr, "mdgpuctl: writing %s to %s: %s\n", c->uuid,
			path, strerror(e));
		return ctl_mdev_exit_of(e);
	}
	for (int k = 0; k < CTL_MDEV_NKNOBS && !ret; k++)
		if (c->knob[k])
			ret = ctl_mdev_knob_write(c->uuid, k, c->knob[k]);
	if (ret)
		ctl_mdev_rollback(c->uuid);
	return ret;
}

/* Undo a definition after a later step failed: stop the device if it
 * runs, undefine it. */
static void ctl_mdev_mdevctl_undo(const char *uuid)
{
	if (ctl_mdev_device_exists(uuid))
		ctl_mdev_mdevctl("stop", uuid, true);
	if (!ctl_mdev_mdevctl("undefine", uuid, true))
		fprintf(stderr, "mdgpuctl: vGPU %s undefined again (mdevctl undefine)\n",
			uuid);
	else
		fprintf(stderr, "mdgpuctl: vGPU %s stays defined: mdevctl undefine -u %s by hand\n",
			uuid, uuid);
}

/* mdevctl: define (--auto), one attribute per knob, start; a failure
 * after define undoes the definition. */
static int ctl_mdev_create_mdevctl(const struct ctl_mdev_new *c)
{
	char *def[] = { (char *)"mdevctl", (char *)"define", (char *)"-u",
			(char *)c->uuid, (char *)"-p", (char *)c->parent,
			(char *)"-t", (char *)c->type, (char *)"--auto", NULL };
	char attr[32], value[32];
	char *mod[] = { (char *)"mdevctl", (char *)"modify", (char *)"-u",
			(char *)c->uuid, attr, value, NULL };
	int ret = ctl_mdev_run(def, true);

	if (ret)
		return ret;
	for (int k = 0; k < CTL_MDEV_NKNOBS && !ret; k++) {
		if (!c->knob[k])
			continue;
		snprintf(attr, sizeof(attr), "--addattr=mdgpu/%s",
			 ctl_mdev_knobs[k]);
		snprintf(value, sizeof(value), "--value=%s", c->knob[k]);
		ret = ctl_mdev_run(mod, true);
	}
	if (!ret)
		ret = ctl_mdev_mdevctl("start", c->uuid, true);
	if (ret)
		ctl_mdev_mdevctl_undo(c->uuid);
	return ret;
}

int ctl_mdev_create(int argc, char **argv)
{
	struct ctl_mdev_new c = { .mdevctl = false };
	char tdir[CTL_MDEV_PATH_MAX];
	int ret = ctl_mdev_create_args(&c, argc, argv);

	if (!ret && c.mdevctl)
		ret = ctl_mdev_need_mdevctl();
	if (!ret)
		ret = ctl_mdev_type_dir(&c, tdir);
	if (!ret && !c.uuid[0])
		ret = ctl_mdev_new_uuid(c.uuid);
	if (!ret)
		ret = c.mdevctl ? ctl_mdev_create_mdevctl(&c) :
				  ctl_mdev_create_sysfs(&c, tdir);
	if (!ret)
		printf("%s\n", c.uuid);
	return ret;
}

/* ----------------------------------------------------------- remove */

/* mdevctl: stop (its failure tolerated when the device does not run),
 * then undefine. */
static int ctl_mdev_remove_mdevctl(const char *uuid)
{
	int ret = ctl_mdev_need_mdevctl();

	if (ret)
		return ret;
	ret = ctl_mdev_mdevctl("stop", uuid, false);
	if (ret && ctl_mdev_device_exists(uuid)) {
		fprintf(stderr, "mdgpuctl: mdevctl stop -u %s failed and the vGPU still exists; not undefined\n",
			uuid);
		return ret;
	}
	return ctl_mdev_mdevctl("undefine", uuid, true);
}

int ctl_mdev_remove(int argc, char **argv)
{
	char uuid[CTL_MDEV_UUID_LEN], path[CTL_MDEV_PATH_MAX];
	const char *u = NULL;
	bool mdevctl = false;
	int e;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--mdevctl") && !mdevctl) {
			mdevctl = true;
		} else if (!u) {
			u = argv[i];
		} else {
			u = NULL;
			break;
		}
	}
	if (!u || ctl_mdev_uuid(u, uuid)) {
		fprintf(stderr, "mdgpuctl: remove UUID [--mdevctl] (UUID: 8-4-4-4-12 hex digits)\n");
		return CTL_EXIT_USAGE;
	}
	if (mdevctl)
		return ctl_mdev_remove_mdevctl(uuid);
	if (!ctl_mdev_path(path, "%s/%s/remove", ctl_mdev_devices(), uuid))
		return CTL_EXIT_USAGE;
	e = -ctl_mdev_write(path, "1");
	if (!e)
		return CTL_EXIT_OK;
	fprintf(stderr, "mdgpuctl: %s%s: writing 1 to %s: %s\n",
		e == ENOENT ? "no vGPU " : "removing ", uuid, path, strerror(e));
	return ctl_mdev_exit_of(e);
}

/* ------------------------------------------------------------- show */

/* mdev_parent and type from where the device's mdev_type link leads
 * (.../<parent>/mdev_supported_types/<type>; the link itself is relative,
 * "../mdev_supported_types/<type>"); "-" when unreadable. */
static void ctl_mdev_add_type(struct ctl_mdev_line *l, const char *uuid)
{
	static const char mark_s[] = "/mdev_supported_types/";
	char path[CTL_MDEV_PATH_MAX], *real = NULL;
	const char *type = "", *parent = "", *mark = NULL;
	size_t plen = 0;

	if (ctl_mdev_path(path, "%s/%s/mdev_type", ctl_mdev_devices(), uuid))
		real = realpath(path, NULL);
	if (real)
		mark = strstr(real, mark_s);
	if (mark) {
		type = mark + strlen(mark_s);
		parent = mark;
		while (parent > real && parent[-1] != '/')
			parent--;
		plen = (size_t)(mark - parent);
	}
	ctl_mdev_add(l, "mdev_parent", parent, plen);
	ctl_mdev_add_str(l, "type", type);
	free(real);
}

/* The stats file's "key: value" lines as stats.key=value. */
static void ctl_mdev_add_stats(struct ctl_mdev_line *l, const char *dir)
{
	char path[CTL_MDEV_PATH_MAX], text[CTL_MDEV_FILE_MAX];
	char key[64], skey[80];

	if (!ctl_mdev_path(path, "%s/stats", dir) ||
	    ctl_mdev_read(path, text, sizeof(text)))
		return;
	for (char *s = text, *nl; *s; s = nl + !!*nl) {
		char *colon;

		nl = s + strcspn(s, "\n");
		colon = memchr(s, ':', (size_t)(nl - s));
		if (!colon || colon == s)
			continue;
		ctl_mdev_sanitize(s, (size_t)(colon - s), key, sizeof(key));
		snprintf(skey, sizeof(skey), "stats.%s", key);
		for (colon++; colon < nl && *colon == ' '; colon++)
			;
		ctl_mdev_add(l, skey, colon, (size_t)(nl - colon));
	}
}

int ctl_mdev_show(int argc, char **argv, bool json)
{
	static const char *const files[] = {
		"status", "vgpu_id", "weight", "cap", "priority",
	};
	struct ctl_mdev_out o = { .json = json };
	struct ctl_mdev_line l = { .len = 0 };
	char uuid[CTL_MDEV_UUID_LEN], dir[CTL_MDEV_PATH_MAX];
	char val[CTL_MDEV_VALUE_MAX];
	const char *u = NULL;
	int ret;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			o.json = true;
		else if (!u)
			u = argv[i];
		else
			u = "";
	}
	if (!u || ctl_mdev_uuid(u, uuid)) {
		fprintf(stderr, "mdgpuctl: show UUID [--json] (UUID: 8-4-4-4-12 hex digits)\n");
		return CTL_EXIT_USAGE;
	}
	ret = ctl_mdev_vgpu_dir(uuid, dir);
	if (ret)
		return ret;
	ctl_mdev_add_str(&l, "mdev_uuid", uuid);
	ctl_mdev_add_type(&l, uuid);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		ctl_mdev_read_line(dir, files[i], val, sizeof(val));
		ctl_mdev_add_str(&l, files[i], val);
	}
	ctl_mdev_add_stats(&l, dir);
	ctl_mdev_emit(&o, l.buf);
	return CTL_EXIT_OK;
}
