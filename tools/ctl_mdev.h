/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mdgpuctl's sysfs side (Documentation/mdgpuctl.md, "vGPUs: types,
 * create, remove, show, set"): mdgpu's mdev types, creating and removing
 * vGPUs (mdevs) by sysfs or mdevctl, showing one and writing its knobs.
 * No daemon is involved.  The roots are $MDGPU_SYSFS_MDEV_BUS (default
 * /sys/class/mdev_bus) and $MDGPU_SYSFS_MDEV_DEVICES (default
 * /sys/bus/mdev/devices), so that tests run on a fake tree.
 */
#ifndef MDGPUCTL_MDEV_H
#define MDGPUCTL_MDEV_H

#include <stdbool.h>
#include <stddef.h>

/* An mdev UUID as text, with its NUL. */
#define CTL_MDEV_UUID_LEN	37
/* Longest parent or type name accepted. */
#define CTL_MDEV_NAME_MAX	128

/* s is 8-4-4-4-12 hex digits: 0 and out = s in lower case; -1 otherwise. */
int ctl_mdev_uuid(const char *s, char out[CTL_MDEV_UUID_LEN]);
/* s can be a sysfs directory name of a parent or type: 1..NAME_MAX
 * printable ASCII bytes without '/' and spaces, not "." or "..", not
 * starting with '-' (it would read as an option of mdevctl). */
bool ctl_mdev_name_ok(const char *s);
/* s is a knob value: 1..10 decimal digits, nothing else. */
bool ctl_mdev_value_ok(const char *s);
/* The index of knob in weight, cap, priority; -1 if it is none. */
int ctl_mdev_knob(const char *knob);
/* Copy s (n bytes) into out (size outlen > 1) as a key=value value:
 * every byte outside [A-Za-z0-9._:-] becomes '_', empty becomes "-"
 * (the daemon's rule for names); cut to outlen - 1 bytes. */
void ctl_mdev_sanitize(const char *s, size_t n, char *out, size_t outlen);

/*
 * The commands; argv holds the command's arguments (after its name).
 * Each returns a CTL_EXIT_* status, having printed what went wrong to
 * stderr ("mdgpuctl: ...").
 *
 *   types [PARENT] [--json]
 *   create PARENT TYPE [--uuid U] [--weight W] [--cap C] [--priority P]
 *          [--mdevctl]
 *   remove UUID [--mdevctl]
 *   show UUID [--json]
 */
int ctl_mdev_types(int argc, char **argv, bool json);
int ctl_mdev_create(int argc, char **argv);
int ctl_mdev_remove(int argc, char **argv);
int ctl_mdev_show(int argc, char **argv, bool json);
/* set UUID KNOB VALUE: write the vGPU's sysfs knob.  uuid must have
 * passed ctl_mdev_uuid(); knob and value are checked here (exit 1, as
 * the daemon refuses them). */
int ctl_mdev_set(const char *uuid, const char *knob, const char *value);

#endif /* MDGPUCTL_MDEV_H */
