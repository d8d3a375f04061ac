// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mdgpud: the mdgpu daemon.  A thin wrapper around libmdgpud: parse the
 * command line and config, set up logging and signals, run the core.
 *
 *   mdgpud [-c CONFIG] [-o key=value]... [-f]
 *
 * SIGTERM/SIGINT: clean shutdown (clients see -ENODEV).  SIGUSR1: status
 * dump to the log.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdgpud/admin.h"
#include "mdgpud/daemon.h"
#include "mdgpud/log.h"

static struct mdgpud_core *mdgpud_main_core;

static void mdgpud_main_signal(int sig)
{
	if (!mdgpud_main_core)
		return;
	if (sig == SIGUSR1)
		mdgpud_core_request_dump(mdgpud_main_core);
	else
		mdgpud_core_stop(mdgpud_main_core);
}

static void mdgpud_main_usage(FILE *f)
{
	fprintf(f, "usage: mdgpud [-c CONFIG] [-o key=value]...\n"
		"  -c CONFIG     config file (default %s; missing is fine)\n"
		"  -o key=value  override one config key (after the file)\n"
		"  -h            this help\n"
		"See Documentation/daemon.md for the keys.\n",
		MDGPUD_DEFAULT_CONFIG);
}

int main(int argc, char **argv)
{
	const char *config = MDGPUD_DEFAULT_CONFIG;
	bool explicit_config = false;
	struct mdgpud_config cfg;
	struct mdgpud_admin *admin = NULL;
	struct sigaction sa;
	char err[512];
	char **overrides;
	int nover = 0, opt, ret;

	overrides = calloc((size_t)argc, sizeof(*overrides));
	if (!overrides)
		return 1;
	while ((opt = getopt(argc, argv, "c:o:h")) != -1) {
		switch (opt) {
		case 'c':
			config = optarg;
			explicit_config = true;
			break;
		case 'o':
			overrides[nover++] = optarg;
			break;
		case 'h':
			mdgpud_main_usage(stdout);
			free(overrides);
			return 0;
		default:
			mdgpud_main_usage(stderr);
			free(overrides);
			return 2;
		}
	}

	mdgpud_config_defaults(&cfg);
	ret = mdgpud_config_load(&cfg, config, !explicit_config, err,
				 sizeof(err));
	for (int i = 0; !ret && i < nover; i++) {
		char *eq = strchr(overrides[i], '=');

		if (!eq) {
			snprintf(err, sizeof(err), "-o %s: expected key=value",
				 overrides[i]);
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		ret = mdgpud_config_set(&cfg, overrides[i], eq + 1, err,
					sizeof(err));
	}
	free(overrides);
	if (ret) {
		fprintf(stderr, "mdgpud: %s\n", err);
		return 2;
	}
	mdgpud_log_set(cfg.log_level, NULL, NULL);
	if (cfg.log_syslog)
		mdgpud_log_use_syslog("mdgpud");

	ret = mdgpud_core_create(&cfg, &mdgpud_main_core);
	if (ret) {
		mdgpud_err("startup failed: %s", strerror(-ret));
		return 1;
	}
	/* The admin socket (mdgpuctl), served by the core's event loop. */
	ret = mdgpud_admin_create(mdgpud_main_core, &cfg, &admin);
	if (ret) {
		mdgpud_err("startup failed: admin socket: %s", strerror(-ret));
		mdgpud_core_destroy(mdgpud_main_core);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = mdgpud_main_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	ret = mdgpud_core_run(mdgpud_main_core);
	mdgpud_admin_destroy(admin);
	mdgpud_core_destroy(mdgpud_main_core);
	mdgpud_info("exited");
	return ret ? 1 : 0;
}
