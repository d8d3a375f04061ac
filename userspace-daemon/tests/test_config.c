// SPDX-License-Identifier: GPL-2.0 OR MIT
/* mdgpud config parsing: defaults, file syntax, bad keys and values. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "uapi/mdgpu.h"
#include "mdgpud/backend.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

#define MDGPUD_EXAMPLE_CONF MDGPUD_SRCDIR "/userspace-daemon/mdgpud.conf"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_defaults(void **state)
{
	struct mdgpud_config c;
	char err[128];

	(void)state;
	mdgpud_config_defaults(&c);
	assert_string_equal(c.backend, "sim");
	assert_int_equal(c.timeslice_us, MDGPU_TIMESLICE_US_DEFAULT);
	assert_int_equal(c.socket_mode, 0660);
	assert_int_equal(mdgpud_config_validate(&c, err, sizeof(err)), 0);
	/* A missing optional file is fine, a missing explicit one is not. */
	assert_int_equal(mdgpud_config_load(&c, "/nonexistent/x.conf", true,
					    err, sizeof(err)), 0);
	assert_int_equal(mdgpud_config_load(&c, "/nonexistent/x.conf", false,
					    err, sizeof(err)), -ENOENT);
}

static void test_file(void **state)
{
	char path[64], err[256];
	struct mdgpud_config c;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/mdgpud-cfg-%d", (int)getpid());
	write_file(path, "# comment\n\n  socket_path = /tmp/x.sock  # tail\n"
		   "socket_mode=0640\nbackend = cuda\ntimeslice_us = 2000\n"
		   "policy = fixed-share\nlog_level = debug\n"
		   "sim_fb_mib = 512\nring_entries = 64\n");
	mdgpud_config_defaults(&c);
	assert_int_equal(mdgpud_config_load(&c, path, false, err, sizeof(err)),
			 0);
	assert_string_equal(c.socket_path, "/tmp/x.sock");
	assert_int_equal(c.socket_mode, 0640);
	assert_string_equal(c.backend, "cuda");
	assert_int_equal(c.timeslice_us, 2000);
	assert_int_equal(c.policy, MDGPU_POLICY_FIXED_SHARE);
	assert_int_equal(c.log_level, MDGPUD_LOG_DEBUG);
	assert_int_equal(c.sim_fb_mib, 512);
	assert_int_equal(c.ring_entries, 64);

	write_file(path, "timeslice_us = 1\n");
	assert_int_equal(mdgpud_config_load(&c, path, false, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, ":1:"));
	assert_non_null(strstr(err, "timeslice_us"));
	write_file(path, "\n\nno_such_key = 1\n");
	assert_int_equal(mdgpud_config_load(&c, path, false, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, ":3: unknown key"));
	write_file(path, "just words\n");
	assert_int_equal(mdgpud_config_load(&c, path, false, err, sizeof(err)),
			 -EINVAL);
	unlink(path);
}

/* The shipped example is valid and spells out the defaults. */
static void test_example(void **state)
{
	struct mdgpud_config c, d;
	char err[256];

	(void)state;
	mdgpud_config_defaults(&c);
	mdgpud_config_defaults(&d);
	assert_int_equal(mdgpud_config_load(&c, MDGPUD_EXAMPLE_CONF, false,
					    err, sizeof(err)), 0);
	/* The defaults but for the admin socket, which the packaged file
	 * opens to group mdgpu (Documentation/install.md). */
	assert_string_equal(c.admin_socket_group, "mdgpu");
	assert_int_equal(c.admin_socket_mode, 0660);
	strcpy(d.admin_socket_group, "mdgpu");
	d.admin_socket_mode = 0660;
	assert_memory_equal(&c, &d, sizeof(c));
}

/*
 * The groups the config names exist, checked where they are used: the
 * client socket's with the socket transport, the admin socket's unless
 * it is off.  Group "root" (gid 0) is in every group database.
 */
static void test_check_groups(void **state)
{
	struct mdgpud_config c;
	char err[256];

	(void)state;
	mdgpud_config_defaults(&c);
	assert_int_equal(mdgpud_config_check_groups(&c, err, sizeof(err)), 0);
	strcpy(c.socket_group, "root");
	strcpy(c.admin_socket_group, "root");
	assert_int_equal(mdgpud_config_check_groups(&c, err, sizeof(err)), 0);

	strcpy(c.admin_socket_group, "no-such-group-mdgpu");
	assert_int_equal(mdgpud_config_check_groups(&c, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "admin_socket_group = no-such-group-mdgpu: "
				    "no such group"));
	strcpy(c.admin_socket_path, "none");
	assert_int_equal(mdgpud_config_check_groups(&c, err, sizeof(err)), 0);

	strcpy(c.socket_group, "no-such-group-mdgpu");
	assert_int_equal(mdgpud_config_check_groups(&c, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "socket_group = no-such-group-mdgpu: "));
	strcpy(c.transport, "kernel");
	assert_int_equal(mdgpud_config_check_groups(&c, err, sizeof(err)), 0);
}

static void test_values(void **state)
{
	struct mdgpud_config c;
	char err[256];

	(void)state;
	mdgpud_config_defaults(&c);
	assert_int_equal(mdgpud_config_set(&c, "socket_mode", "0999", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "sim_fb_mib", "-1", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "sim_fb_mib", "12abc", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "sim_fb_mib",
					   "99999999999999999999999", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "policy", "fastest", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "log_level", "loud", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "timeslice_us", "1000001", err,
					   sizeof(err)), -EINVAL);
	/* The module load bound: 60 s by default, 100 ms .. 1 h. */
	assert_int_equal(c.module_load_timeout_ms, 60000);
	assert_int_equal(mdgpud_config_set(&c, "module_load_timeout_ms", "99",
					   err, sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "module_load_timeout_ms",
					   "3600001", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "module_load_timeout_ms",
					   "3600000", err, sizeof(err)), 0);
	assert_int_equal(c.module_load_timeout_ms, 3600000);
	/* The worker start bound: 30 s by default, 100 ms .. 10 min. */
	assert_int_equal(c.worker_start_timeout_ms, 30000);
	assert_int_equal(mdgpud_config_set(&c, "worker_start_timeout_ms", "99",
					   err, sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "worker_start_timeout_ms",
					   "600001", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "worker_start_timeout_ms",
					   "600000", err, sizeof(err)), 0);
	assert_int_equal(c.worker_start_timeout_ms, 600000);
	/* Idle polling: auto follows the machine's CPUs; numbers in range. */
	{
		bool many = sysconf(_SC_NPROCESSORS_ONLN) >=
			    MDGPUD_POLL_AUTO_CPUS;

		assert_int_equal(mdgpud_config_spin_us(&c),
				 many ? MDGPUD_POLL_AUTO_SPIN_US :
					MDGPUD_POLL_SMALL_SPIN_US);
		assert_int_equal(mdgpud_config_worker_pollers(&c),
				 many ? MDGPUD_POLL_AUTO_POLLERS : 0);
	}
	assert_int_equal(mdgpud_config_set(&c, "spin_us", "7", err,
					   sizeof(err)), 0);
	assert_int_equal(mdgpud_config_spin_us(&c), 7);
	assert_int_equal(mdgpud_config_set(&c, "spin_us", "auto", err,
					   sizeof(err)), 0);
	assert_int_equal(c.spin_us, MDGPUD_POLL_AUTO);
	assert_int_equal(mdgpud_config_set(&c, "spin_us", "1000001", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "worker_pollers", "0", err,
					   sizeof(err)), 0);
	assert_int_equal(mdgpud_config_worker_pollers(&c), 0);
	assert_int_equal(mdgpud_config_set(&c, "worker_pollers", "65", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "worker_poll_us", "1000001",
					   err, sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "worker_poll_us", "0", err,
					   sizeof(err)), 0);
	assert_int_equal(mdgpud_config_set(&c, "ring_entries", "100", err,
					   sizeof(err)), 0);
	assert_int_equal(mdgpud_config_validate(&c, err, sizeof(err)),
			 -EINVAL);	/* not a power of two */
	char longpath[300];

	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(mdgpud_config_set(&c, "socket_path", longpath, err,
					   sizeof(err)), -EINVAL);
}

/* The worker sandbox keys: default required, a uid per worker; each
 * value. */
static void test_worker_sandbox(void **state)
{
	struct mdgpud_config c;
	char err[256];
	uint32_t base;

	(void)state;
	mdgpud_config_defaults(&c);
	assert_int_equal(c.worker_sandbox, MDGPUD_SANDBOX_REQUIRED);
	assert_int_equal(c.worker_uid_base, MDGPUD_WORKER_UID_BASE_AUTO);
	assert_int_equal(c.worker_uid_count, 65536);
	/* auto: the block of the GPU's PCI location (test_worker_uid_auto
	 * has the mapping). */
	assert_int_equal(mdgpud_config_worker_uid_base(&c, "0000:41:00.0", 1,
						       &base), 0);
	assert_int_equal(base, 1879048192u + 0x41 * 32 * 65536u);
	assert_string_equal(c.worker_user, "");
	assert_string_equal(c.worker_group, "");
	assert_int_equal(c.worker_seccomp_learn, 0);
	assert_string_equal(c.worker_seccomp_allow, "");
	assert_int_equal(mdgpud_config_set(&c, "worker_sandbox", "best-effort",
					   err, sizeof(err)), 0);
	assert_int_equal(c.worker_sandbox, MDGPUD_SANDBOX_BEST_EFFORT);
	assert_int_equal(mdgpud_config_set(&c, "worker_sandbox", "off", err,
					   sizeof(err)), 0);
	assert_int_equal(c.worker_sandbox, MDGPUD_SANDBOX_OFF);
	assert_int_equal(mdgpud_config_set(&c, "worker_sandbox", "maybe", err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "worker_sandbox"));
	assert_int_equal(c.worker_sandbox, MDGPUD_SANDBOX_OFF);
	assert_int_equal(mdgpud_config_set(&c, "worker_seccomp", "learn", err,
					   sizeof(err)), 0);
	assert_int_equal(c.worker_seccomp_learn, 1);
	assert_int_equal(mdgpud_config_set(&c, "worker_seccomp", "audit", err,
					   sizeof(err)), 0);
	assert_int_equal(c.worker_seccomp_learn, 2);
	assert_int_equal(mdgpud_config_set(&c, "worker_seccomp", "kill", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "worker_user", "mdgpu-worker",
					   err, sizeof(err)), 0);
	assert_string_equal(c.worker_user, "mdgpu-worker");
	assert_int_equal(mdgpud_config_set(&c, "worker_group", "video", err,
					   sizeof(err)), 0);
	assert_string_equal(c.worker_group, "video");
	assert_int_equal(mdgpud_config_set(&c, "worker_seccomp_allow",
					   "sysinfo,shmget", err, sizeof(err)),
			 0);
	assert_string_equal(c.worker_seccomp_allow, "sysinfo,shmget");
	assert_int_equal(c.worker_net, MDGPUD_WORKER_NET_PRIVATE);
	assert_int_equal(c.worker_tmp, MDGPUD_WORKER_TMP_PRIVATE);
	assert_int_equal(mdgpud_config_set(&c, "worker_net", "host", err,
					   sizeof(err)), 0);
	assert_int_equal(c.worker_net, MDGPUD_WORKER_NET_HOST);
	assert_int_equal(mdgpud_config_set(&c, "worker_net", "none", err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "worker_net"));
	assert_int_equal(mdgpud_config_set(&c, "worker_net", "private", err,
					   sizeof(err)), 0);
	assert_int_equal(c.worker_net, MDGPUD_WORKER_NET_PRIVATE);
	assert_int_equal(mdgpud_config_set(&c, "worker_tmp", "shared", err,
					   sizeof(err)), 0);
	assert_int_equal(c.worker_tmp, MDGPUD_WORKER_TMP_SHARED);
	assert_int_equal(mdgpud_config_set(&c, "worker_tmp", "host", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "worker_tmp", "private", err,
					   sizeof(err)), 0);
	assert_int_equal(c.worker_tmp, MDGPUD_WORKER_TMP_PRIVATE);
}

/*
 * A uid per worker: worker_uid_base (auto or 1..2^32-2), worker_uid_count
 * (0..65536); worker_user only with count 0; the range must hold a uid
 * for each of max_vgpus and end below (uid_t)-1.
 */
static void test_worker_uids(void **state)
{
	struct mdgpud_config c;
	char err[256];
	uint32_t base;

	(void)state;
	mdgpud_config_defaults(&c);
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_base", "200000",
					   err, sizeof(err)), 0);
	assert_int_equal(mdgpud_config_worker_uid_base(&c, "0000:41:00.0", 3,
						       &base), 0);
	assert_int_equal(base, 200000);
	assert_int_equal(mdgpud_config_worker_uid_base(&c, "fake0", 3, &base),
			 0);
	assert_int_equal(base, 200000);
	/* auto: a bus id no block follows from, an ordinal out of range
	 * fails, unless no worker runs as a uid of the range. */
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_base", "auto", err,
					   sizeof(err)), 0);
	assert_int_equal(mdgpud_config_worker_uid_base(&c, "fake0", 3, &base),
			 0);
	assert_int_equal(base, 0xf0040000u);
	assert_int_equal(mdgpud_config_worker_uid_base(&c, "fake0", 256,
						       &base), -ERANGE);
	c.worker_sandbox = MDGPUD_SANDBOX_OFF;
	assert_int_equal(mdgpud_config_worker_uid_base(&c, "fake0", 256,
						       &base), 0);
	assert_int_equal(base, 0);
	c.worker_sandbox = MDGPUD_SANDBOX_REQUIRED;
	c.worker_uid_count = 0;
	assert_int_equal(mdgpud_config_worker_uid_base(&c, "fake0", 256,
						       &base), 0);
	c.worker_uid_count = 64;
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_base", "200000",
					   err, sizeof(err)), 0);
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_base", "0", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_base", "4294967295",
					   err, sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_base", "-5", err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_count", "65537",
					   err, sizeof(err)), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_count", "64", err,
					   sizeof(err)), 0);
	assert_int_equal(mdgpud_config_validate(&c, err, sizeof(err)), 0);
	/* One uid per vGPU at least. */
	c.max_vgpus = 65;
	assert_int_equal(mdgpud_config_validate(&c, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "max_vgpus"));
	c.max_vgpus = 64;
	/* The last uid of the range below 2^32 - 1. */
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_base", "4294967231",
					   err, sizeof(err)), 0);
	assert_int_equal(mdgpud_config_validate(&c, err, sizeof(err)), 0);
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_base", "4294967232",
					   err, sizeof(err)), 0);
	assert_int_equal(mdgpud_config_validate(&c, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "worker_uid_base"));
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_base", "auto", err,
					   sizeof(err)), 0);
	/* worker_user is the other way: exclusive. */
	assert_int_equal(mdgpud_config_set(&c, "worker_user", "65534", err,
					   sizeof(err)), 0);
	assert_int_equal(mdgpud_config_validate(&c, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "worker_uid_count = 0"));
	assert_int_equal(mdgpud_config_set(&c, "worker_uid_count", "0", err,
					   sizeof(err)), 0);
	assert_int_equal(mdgpud_config_validate(&c, err, sizeof(err)), 0);
}

/* parent_pci: auto, none or a PCI address, kept in canonical form. */
static void test_parent_pci(void **state)
{
	static const char *const bad[] = {
		"", "0000:00:03", "0000:00:03.", "0000:00:03.8", "0000:00:20.0",
		"0000:100:03.0", "000000000:00:03.0", "0x00:00:03.0",
		" 0000:00:03.0", "0000:00:03.0 ", "0000-00-03.0", "sim0",
		"80000000:00:00.0",
	};
	struct mdgpud_config c;
	char err[256], pci[MDGPUD_PCI_ADDR_LEN];

	(void)state;
	mdgpud_config_defaults(&c);
	assert_string_equal(c.parent_pci, "auto");
	/* auto: the backend's bus id when it is a PCI address. */
	assert_true(mdgpud_config_parent_pci(&c, "00000000:65:00.0", pci));
	assert_string_equal(pci, "0000:65:00.0");
	assert_true(mdgpud_config_parent_pci(&c, "0000:B1:1F.7", pci));
	assert_string_equal(pci, "0000:b1:1f.7");
	assert_false(mdgpud_config_parent_pci(&c, "sim0", pci));
	assert_false(mdgpud_config_parent_pci(&c, NULL, pci));
	assert_int_equal(mdgpud_config_set(&c, "parent_pci", "none", err,
					   sizeof(err)), 0);
	assert_false(mdgpud_config_parent_pci(&c, "0000:65:00.0", pci));
	assert_int_equal(mdgpud_config_set(&c, "parent_pci", "1:0:3.0", err,
					   sizeof(err)), 0);
	assert_string_equal(c.parent_pci, "0001:00:03.0");
	assert_true(mdgpud_config_parent_pci(&c, "sim0", pci));
	assert_string_equal(pci, "0001:00:03.0");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(mdgpud_config_set(&c, "parent_pci", bad[i], err,
						   sizeof(err)), -EINVAL);
		assert_int_equal(mdgpud_pci_addr_parse(bad[i], pci), -EINVAL);
	}
	/* A refused value leaves the last good one. */
	assert_string_equal(c.parent_pci, "0001:00:03.0");
}

/*
 * cuda_device: a CUDA ordinal, a PCI bus id (nvidia-smi's and
 * cuDeviceGetPCIBusId's forms, with or without the domain, any case) or
 * a GPU UUID, each kept in canonical form (common/gpu_select.h); anything
 * else is refused with the key and the accepted forms named, and leaves
 * the last good value.
 */
static void test_cuda_device(void **state)
{
	static const struct {
		const char *in, *out;
	} ok[] = {
		{ "0", "0" }, { "7", "7" }, { "10", "10" }, { "255", "255" },
		{ "0000:41:00.0", "0000:41:00.0" },
		{ "00000000:41:00.0", "0000:41:00.0" },
		{ "41:00.0", "0000:41:00.0" },
		{ "0000:C1:1F.7", "0000:c1:1f.7" },
		{ "c1:00.1", "0000:c1:00.1" },
		{ "1:2:3.4", "0001:02:03.4" },
		{ "10000:01:00.0", "10000:01:00.0" },
		{ "GPU-4d2b6c5e-0a1b-2c3d-4e5f-0123456789ab",
		  "GPU-4d2b6c5e-0a1b-2c3d-4e5f-0123456789ab" },
		{ "gpu-4D2B6C5E-0A1B-2C3D-4E5F-0123456789AB",
		  "GPU-4d2b6c5e-0a1b-2c3d-4e5f-0123456789ab" },
	};
	static const char *const bad[] = {
		/* empty, garbage */
		"", " ", "gpu0", "auto", "all", "none", "fake0",
		/* ordinals: out of range, signs, other bases, spaces */
		"256", "1000", "99999999999999999999", "-1", "+1", "01", "007",
		"0x1", " 0", "0 ", "1.0",
		/* bus ids: bad hex, parts missing or too long, function > 7,
		 * slot > 0x1f, a domain past INT32_MAX or of 9 digits */
		"0000:4g:00.0", "zz:00.0", "0000:41:00.8", "41:00.8",
		"0000:41:00.10", "0000:41:20.0", "0000:41:00", "41:00", "c1",
		":41:00.0", "0000::00.0", "0000:041:00.0", "0000:41:000.0",
		"000000000:41:00.0", "80000000:41:00.0", "0000:41:00.0 ",
		"0000:41:00.0\n", "0000-41-00.0", "41.00.0",
		/* UUIDs: groups too short or long, not hex, the prefix
		 * missing or another's, something after */
		"GPU-", "GPU-4d2b6c5e", "GPU-4d2b6c5e-0a1b-2c3d-4e5f-0123456789a",
		"GPU-4d2b6c5e-0a1b-2c3d-4e5f-0123456789abc",
		"GPU-4d2b6c5e0-a1b-2c3d-4e5f-0123456789ab",
		"GPU-4d2b6c5e-0a1b-2c3d-4e5f-0123456789ag",
		"4d2b6c5e-0a1b-2c3d-4e5f-0123456789ab",
		"MIG-4d2b6c5e-0a1b-2c3d-4e5f-0123456789ab",
		"GPU_4d2b6c5e-0a1b-2c3d-4e5f-0123456789ab",
		"GPU-4d2b6c5e-0a1b-2c3d-4e5f-0123456789ab ",
		"GPU-{4d2b6c5e-0a1b-2c3d-4e5f-0123456789ab}",
	};
	char err[512], sel[MDGPU_GPU_SELECT_LEN], big[4097];
	struct mdgpud_config c;

	(void)state;
	mdgpud_config_defaults(&c);
	assert_string_equal(c.cuda_device, "0");
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(mdgpud_config_set(&c, "cuda_device", ok[i].in,
						   err, sizeof(err)), 0);
		assert_string_equal(c.cuda_device, ok[i].out);
		assert_int_equal(mdgpud_gpu_select_parse(ok[i].in, sel), 0);
		assert_string_equal(sel, ok[i].out);
		/* The canonical form reads as itself. */
		assert_int_equal(mdgpud_gpu_select_parse(ok[i].out, sel), 0);
		assert_string_equal(sel, ok[i].out);
	}
	assert_int_equal(mdgpud_config_set(&c, "cuda_device", "41:00.0", err,
					   sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(mdgpud_config_set(&c, "cuda_device", bad[i],
						   err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "'cuda_device'"));
		assert_non_null(strstr(err, "CUDA ordinal (0..255)"));
		assert_non_null(strstr(err, "PCI bus id"));
		assert_non_null(strstr(err, "GPU UUID"));
		assert_int_equal(mdgpud_gpu_select_parse(bad[i], sel), -EINVAL);
		assert_string_equal(c.cuda_device, "0000:41:00.0");
	}
	/* Long values, of every kind's characters, are refused whole. */
	memset(big, '0', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(mdgpud_gpu_select_parse(big, sel), -EINVAL);
	memcpy(big, "0000:41:00.0", 12);
	assert_int_equal(mdgpud_gpu_select_parse(big, sel), -EINVAL);
	memcpy(big, "GPU-4d2b6c5e-0a1b-2c3d-4e5f-0123456789ab", 40);
	assert_int_equal(mdgpud_gpu_select_parse(big, sel), -EINVAL);
	memset(big, 'f', sizeof(big) - 1);
	assert_int_equal(mdgpud_gpu_select_parse(big, sel), -EINVAL);
	assert_int_equal(mdgpud_config_set(&c, "cuda_device", big, err,
					   sizeof(err)), -EINVAL);
	assert_string_equal(c.cuda_device, "0000:41:00.0");
}

/* What derives from the GPU's ordinal follows the ordinal given: the
 * default mps_dir (worker_uid_base in test_worker_sandbox). */
static void test_mps_dir(void **state)
{
	struct mdgpud_config c;
	char err[256], dir[128];

	(void)state;
	mdgpud_config_defaults(&c);
	assert_int_equal(mdgpud_config_set(&c, "socket_path",
					   "/run/mdgpu/0000:41:00.0/mdgpud.sock",
					   err, sizeof(err)), 0);
	assert_int_equal(mdgpud_config_set(&c, "cuda_device", "41:00.0", err,
					   sizeof(err)), 0);
	assert_int_equal(mdgpud_config_mps_dir(&c, 3, dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/run/mdgpu/0000:41:00.0/mps3");
	assert_int_equal(mdgpud_config_set(&c, "mps_dir", "/var/mps", err,
					   sizeof(err)), 0);
	assert_int_equal(mdgpud_config_mps_dir(&c, 3, dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/var/mps");
	assert_int_equal(mdgpud_config_mps_dir(&c, 3, dir, 4), -ENAMETOOLONG);
}

/* Collects mdgpud_config_diff()'s keys, space-separated. */
static void diff_key(const char *key, void *data)
{
	char *out = data;

	strcat(out, key);
	strcat(out, " ");
}

/*
 * mdgpud_config_diff() names each changed key once (a reload logs them),
 * and compares every key Documentation/daemon.md's table lists (the one
 * list of keys): a key added there and to mdgpud_config_set() but not to
 * the diff's table would never be reported by a reload.
 */
/*
 * worker_uid_base = auto: a block of 65536 uids per PCI location, N =
 * domain x 8192 + bus x 32 + device, base 0x70000000 + N x 65536, for
 * domains 0..3 and function 0; anything else by CUDA ordinal past the
 * probe uid, 0xf0010000 + ordinal x 65536.
 */
static void test_worker_uid_auto(void **state)
{
	static const struct {
		const char *bus_id;
		int ordinal, ret;
		uint32_t base;
	} cases[] = {
		{ "0000:00:00.0", 7, 0, 0x70000000u },
		{ "0000:41:00.0", 0, 0, 0x70000000u + 0x41 * 32 * 65536u },
		{ "0000:C1:00.0", 0, 0, 0x70000000u + 0xc1 * 32 * 65536u },
		{ "00000000:41:00.0", 0, 0, 0x70000000u + 0x41 * 32 * 65536u },
		{ "41:00.0", 0, 0, 0x70000000u + 0x41 * 32 * 65536u },
		{ "0000:00:1f.0", 0, 0, 0x70000000u + 31 * 65536u },
		{ "0001:00:00.0", 0, 0, 0x70000000u + 8192 * 65536u },
		{ "0000:ff:1f.0", 0, 0, 0x70000000u + 8191 * 65536u },
		/* The last block: its last uid just below the probe uid. */
		{ "0003:ff:1f.0", 0, 0, 0xefff0000u },
		/* Not PCI, or outside what the mapping takes: by ordinal. */
		{ "0004:00:00.0", 2, 1, 0xf0030000u },
		{ "ffffffff:41:00.0", 0, 1, 0xf0010000u },
		{ "0000:41:00.1", 1, 1, 0xf0020000u },
		{ "fake0", 0, 1, 0xf0010000u },
		{ NULL, 3, 1, 0xf0040000u },
		{ "", 0, 1, 0xf0010000u },
		{ "0000:41:00.0 ", 0, 1, 0xf0010000u },
		{ "0000:100:00.0", 0, 1, 0xf0010000u },
		{ "0000:41:20.0", 0, 1, 0xf0010000u },
		{ "123456789:41:00.0", 0, 1, 0xf0010000u },
		{ "fake0", 255, 1, 0xf1000000u },
		{ "fake0", 256, -ERANGE, 0 },
		{ "fake0", -1, -ERANGE, 0 },
		{ NULL, INT32_MAX, -ERANGE, 0 },
	};
	uint32_t base, next = MDGPUD_WORKER_UID_AUTO_BASE;
	char bus[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		base = 1;
		assert_int_equal(mdgpud_worker_uid_auto(cases[i].bus_id,
							cases[i].ordinal,
							&base), cases[i].ret);
		if (cases[i].ret >= 0)
			assert_int_equal(base, cases[i].base);
		else
			assert_int_equal(base, 1);	/* untouched */
	}
	/* Every PCI location in order: adjacent blocks, none shared, all
	 * above the system's uids and below the probe uid. */
	for (unsigned int dom = 0; dom < 4; dom++)
		for (unsigned int b = 0; b < 256; b++)
			for (unsigned int dev = 0; dev < 32; dev++) {
				snprintf(bus, sizeof(bus), "%04x:%02x:%02x.0",
					 dom, b, dev);
				assert_int_equal(mdgpud_worker_uid_auto(
						 bus, -1, &base), 0);
				assert_int_equal(base, next);
				next += MDGPUD_WORKER_UID_AUTO_STEP;
			}
	assert_int_equal(next, MDGPUD_WORKER_UID_PROBE);
	assert_true(MDGPUD_WORKER_UID_AUTO_BASE > 65535);
	/* The ordinal blocks: past the probe uid, the last below 2^32 - 1. */
	assert_int_equal(mdgpud_worker_uid_auto("x", 0, &base), 1);
	assert_true(base > MDGPUD_WORKER_UID_PROBE);
	assert_int_equal(mdgpud_worker_uid_auto("x", MDGPU_GPU_ORDINAL_MAX,
						&base), 1);
	assert_true((uint64_t)base + MDGPUD_WORKER_UID_AUTO_STEP - 1 <
		    UINT32_MAX);
}

static void test_diff(void **state)
{
	struct mdgpud_config a, b;
	char err[128], keys[256] = "", line[1024];
	unsigned int nr_keys = 0;
	bool in_table = false;
	FILE *f;

	(void)state;
	mdgpud_config_defaults(&a);
	mdgpud_config_defaults(&b);
	assert_int_equal(mdgpud_config_diff(&a, &b, diff_key, keys), 0);
	assert_int_equal(mdgpud_config_set(&b, "policy", "equal-share", err,
					   sizeof(err)), 0);
	assert_int_equal(mdgpud_config_set(&b, "max_vgpus", "8", err,
					   sizeof(err)), 0);
	/* Two fields, one key; "0" differs from "" only in the count. */
	assert_int_equal(mdgpud_config_set(&b, "uid_limits_exempt", "0", err,
					   sizeof(err)), 0);
	/* The same string, a different tail past its NUL: no change. */
	memset(b.socket_group + 1, 'x', sizeof(b.socket_group) - 2);
	assert_int_equal(mdgpud_config_diff(&a, &b, diff_key, keys), 3);
	assert_string_equal(keys, "policy max_vgpus uid_limits_exempt ");
	assert_int_equal(mdgpud_config_diff(&a, &b, NULL, NULL), 3);

	f = fopen(MDGPUD_SRCDIR "/Documentation/daemon.md", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char key[64];

		if (!strcmp(line, "## Configuration\n")) {
			in_table = true;
			continue;
		}
		if (in_table && line[0] == '#')
			break;
		if (!in_table || sscanf(line, "| %63[a-z0-9_] |", key) != 1 ||
		    !strcmp(key, "key"))
			continue;
		if (!mdgpud_config_key_compared(key))
			fail_msg("key '%s' of Documentation/daemon.md is not in mdgpud_config_diff()'s table",
				 key);
		nr_keys++;
	}
	fclose(f);
	assert_true(nr_keys > 40);
	assert_false(mdgpud_config_key_compared("no_such_key"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_check_groups),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_parent_pci),
		cmocka_unit_test(test_cuda_device),
		cmocka_unit_test(test_mps_dir),
		cmocka_unit_test(test_worker_sandbox),
		cmocka_unit_test(test_worker_uids),
		cmocka_unit_test(test_worker_uid_auto),
		cmocka_unit_test(test_diff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
