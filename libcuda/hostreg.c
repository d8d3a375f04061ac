// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libcuda: registered host memory that the vGPU's GPU reaches itself
 * (cuMemHostRegister, zero-copy).  The daemon's worker is another
 * process: it can map the same pages only where they belong to a file
 * both can open, shared memory (a memfd, a POSIX shm file in /dev/shm,
 * hugetlbfs) mapped MAP_SHARED.  For such a range this finds the file
 * behind the program's mapping, opens it, and registers it with the
 * daemon (mdgpu_host_register, ABI 1.12), which maps it at the same
 * address where that is free there, so that the device pointer is the
 * host pointer.  Private memory (malloc, the stack, anonymous mappings)
 * has no such file: its registration stays a record, copies are staged
 * (memory.c).
 *
 * The file is found through /proc/self/maps (the mapping's device, inode
 * and file offset) and opened by the first of: /proc/self/map_files
 * (needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), a descriptor of this
 * process open on the same inode (/proc/self/fd: NCCL, for one, keeps
 * its shm file open), the path named in the mapping when it still
 * exists.  Every candidate is checked by device and inode after it is
 * opened: a file renamed or replaced meanwhile is not taken.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "priv.h"

/* The mapping of this process that holds [base, end) whole. */
struct mdgpu_cu_map {
	uintptr_t start, end;
	uint64_t off;			/* file offset of start */
	dev_t dev;
	ino_t ino;
	bool shared;
	char path[256];			/* "" if none or too long */
};

/* Parses one line of /proc/self/maps into m; false if it is not one. */
static bool mdgpu_cu_map_parse(const char *line, struct mdgpu_cu_map *m)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[5];
	int n = 0;

	if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end,
		   perms, &off, &maj, &min, &ino, &n) < 7)
		return false;
	m->start = (uintptr_t)start;
	m->end = (uintptr_t)end;
	m->off = off;
	m->dev = makedev(maj, min);
	m->ino = (ino_t)ino;
	m->shared = perms[3] == 's';
	m->path[0] = 0;
	if (n > 0 && line[n] == '/') {
		size_t len = strcspn(line + n, "\n");

		if (len < sizeof(m->path)) {
			memcpy(m->path, line + n, len);
			m->path[len] = 0;
		}
	}
	return true;
}

static int mdgpu_cu_map_find(uintptr_t base, uintptr_t end,
			     struct mdgpu_cu_map *m)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!mdgpu_cu_map_parse(line, m) || m->start > base ||
		    m->end <= base)
			continue;
		/* One mapping must hold the range: shared, of a file. */
		ret = m->end >= end && m->shared && m->ino ? 0 : -EINVAL;
		break;
	}
	fclose(f);
	return ret;
}

/* fd if it is open on the mapping's file, else -1 (fd closed). */
static int mdgpu_cu_map_check(int fd, const struct mdgpu_cu_map *m)
{
	struct stat st;

	if (fd < 0)
		return -1;
	if (!fstat(fd, &st) && st.st_dev == m->dev && st.st_ino == m->ino)
		return fd;
	close(fd);
	return -1;
}

/* A descriptor of this process on the file, opened anew in `mode`. */
static int mdgpu_cu_map_fd_scan(const struct mdgpu_cu_map *m, int mode)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;

	if (!d)
		return -1;
	while (fd < 0 && (e = readdir(d))) {
		char path[64];
		struct stat st;
		char *end;
		long n = strtol(e->d_name, &end, 10);

		if (*end || n < 0 || n == dirfd(d) || n > INT32_MAX ||
		    fstat((int)n, &st) || st.st_dev != m->dev ||
		    st.st_ino != m->ino)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%ld", n);
		fd = mdgpu_cu_map_check(open(path, mode | O_CLOEXEC), m);
	}
	closedir(d);
	return fd;
}

static int mdgpu_cu_map_open(const struct mdgpu_cu_map *m, bool ro)
{
	int mode = ro ? O_RDONLY : O_RDWR;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)m->start, (unsigned long)m->end);
	fd = mdgpu_cu_map_check(open(path, mode | O_CLOEXEC), m);
	if (fd < 0)
		fd = mdgpu_cu_map_fd_scan(m, mode);
	if (fd < 0 && m->path[0])
		fd = mdgpu_cu_map_check(open(m->path, mode | O_CLOEXEC), m);
	return fd;
}

int mdgpu_cu_host_share(const void *p, size_t size, bool ro,
			uintptr_t *base, uint64_t *dev)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t b = (uintptr_t)p & ~(pg - 1), e;
	struct mdgpu_cu_map m;
	int fd, ret;

	if (__builtin_add_overflow((uintptr_t)p, size, &e) ||
	    __builtin_add_overflow(e, pg - 1, &e))
		return -EINVAL;
	e &= ~(pg - 1);
	ret = mdgpu_cu_map_find(b, e, &m);
	if (ret)
		return ret;
	fd = mdgpu_cu_map_open(&m, ro);
	if (fd < 0)
		return -EACCES;
	ret = mdgpu_host_register(mdgpu_cu.g, fd, m.off + (b - m.start), e - b,
				  b, ro ? MDGPU_HOST_REG_F_READ_ONLY : 0, dev);
	close(fd);
	if (!ret)
		*base = b;
	return ret;
}
