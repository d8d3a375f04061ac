/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * An in-process mdgpud for tests that reach it through its socket: a core
 * (sim backend, socket transport at /tmp/mdgpud-NAME-PID/sock) whose
 * dispatcher runs on a thread.  sim_daemon_setup() and sim_daemon_teardown()
 * are cmocka fixtures' bodies; *state is the struct daemon.  Included by
 * test_socket_raw.c and test_libmdgpu_copy.c after <cmocka.h> and
 * "mdgpud/daemon.h".
 */
#ifndef MDGPUD_TEST_SIM_DAEMON_H
#define MDGPUD_TEST_SIM_DAEMON_H

struct daemon {
	struct mdgpud_core *core;
	pthread_t thread;
	char dir[64], path[96];
};

static void *daemon_main(void *arg)
{
	mdgpud_core_run(((struct daemon *)arg)->core);
	return NULL;
}

static int sim_daemon_setup(void **state, const char *name, uint64_t fb_mib,
			    uint32_t socket_mode)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct mdgpud_config cfg;

	assert_non_null(d);
	snprintf(d->dir, sizeof(d->dir), "/tmp/mdgpud-%s-%d", name,
		 (int)getpid());
	snprintf(d->path, sizeof(d->path), "%s/sock", d->dir);
	mdgpud_config_defaults(&cfg);
	strcpy(cfg.socket_path, d->path);
	cfg.sim_fb_mib = fb_mib;
	cfg.socket_mode = socket_mode;
	assert_int_equal(mdgpud_core_create(&cfg, &d->core), 0);
	assert_int_equal(pthread_create(&d->thread, NULL, daemon_main, d), 0);
	*state = d;
	return 0;
}

static int sim_daemon_teardown(void **state)
{
	struct daemon *d = *state;

	mdgpud_core_stop(d->core);
	pthread_join(d->thread, NULL);
	mdgpud_core_destroy(d->core);
	rmdir(d->dir);
	free(d);
	return 0;
}

#endif /* MDGPUD_TEST_SIM_DAEMON_H */
