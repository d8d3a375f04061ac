// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer harness: the config parser (mdgpud_config_load()), then the
 * checks the daemon runs on a loaded config (mdgpud_config_validate(), the
 * admin socket path derived from it).
 *
 * Input: the config file's bytes.  They are written to a memfd that the
 * parser opens by its /proc/self/fd path, so the parser runs unchanged,
 * file I/O included, with no file in the tree or in /tmp.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "mdgpud/admin.h"
#include "mdgpud/daemon.h"

static int fd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fd = memfd_create("mdgpud-fuzz.conf", MFD_CLOEXEC);
	FUZZ_CHECK(fd >= 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return 0;
}

/* A string field is NUL-terminated inside its array. */
#define TERMINATED(f) (memchr((f), '\0', sizeof(f)) != NULL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mdgpud_config cfg;
	char err[256], apath[108];
	int ret;

	FUZZ_CHECK(!ftruncate(fd, 0));
	FUZZ_CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
	mdgpud_config_defaults(&cfg);
	err[0] = '\0';
	ret = mdgpud_config_load(&cfg, path, false, err, sizeof(err));
	FUZZ_CHECK(ret == 0 || (ret < 0 && err[0]));
	FUZZ_CHECK(TERMINATED(cfg.socket_path) &&
		   TERMINATED(cfg.socket_group) && TERMINATED(cfg.backend) &&
		   TERMINATED(cfg.transport) && TERMINATED(cfg.cuda_worker) &&
		   TERMINATED(cfg.admin_socket_path));
	if (ret)
		return 0;
	if (mdgpud_config_validate(&cfg, err, sizeof(err)))
		return 0;
	FUZZ_CHECK(cfg.ring_entries <= cfg.ring_entries_max);
	ret = mdgpud_admin_socket_path(&cfg, apath, sizeof(apath));
	if (!ret)
		FUZZ_CHECK(strlen(apath) < sizeof(apath) &&
			   strcmp(apath, cfg.socket_path));
	return 0;
}
