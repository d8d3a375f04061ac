// SPDX-License-Identifier: GPL-2.0
/*
 * mdgpu-vmtest: sysfs knobs of vGPUs and parents.
 * Documentation/testing-vm.md describes each test.
 */
#include "vgpu.h"

static void knob_check(struct fx *f, const char *knob, int min, int max,
		       int good)
{
	const char *p = mdev_path(UUID0, NULL);
	char path[300], v[32];
	static const char *const junk[] = { "abc", "5x", "", " ", "1 2", "0x",
					    "99999999999999999999" };
	struct mdgpu_ctl_event ev;
	long long now;

	snprintf(path, sizeof(path), "%.200s/mdgpu/%s", p, knob);
	snprintf(v, sizeof(v), "%d\n", good);
	ASSERT(sysfs_write(path, v) == 0, "%s = %d", knob, good);
	EXPECT(sysfs_num(path) == good, "%s reads %lld", knob, sysfs_num(path));
	ASSERT(ev_wait(f, MDGPU_EV_KNOB, f->vgpu, &ev, EV_TIMEOUT_MS) == 0,
	       "no KNOB event");
	now = !strcmp(knob, "weight") ? ev.knob.weight :
	      !strcmp(knob, "cap") ? ev.knob.cap : ev.knob.priority;
	EXPECT(now == good, "KNOB event %s %lld", knob, now);
	snprintf(v, sizeof(v), "%d", min - 1);
	EXPECT(sysfs_write(path, v) == -EINVAL, "%s = %s", knob, v);
	snprintf(v, sizeof(v), "%d", max + 1);
	EXPECT(sysfs_write(path, v) == -EINVAL, "%s = %s", knob, v);
	for (size_t i = 0; i < ARRAY_SIZE(junk); i++)
		if (junk[i][0])	/* an empty write never reaches the store */
			EXPECT(sysfs_write(path, junk[i]) == -EINVAL, "%s = '%s'",
			       knob, junk[i]);
	EXPECT(sysfs_num(path) == good, "%s changed by a bad write", knob);
	EXPECT(ev_wait(f, MDGPU_EV_KNOB, f->vgpu, NULL, NO_EV_MS) == -ETIMEDOUT,
	       "KNOB event for a rejected write");
	snprintf(v, sizeof(v), "%d", min);
	EXPECT(sysfs_write(path, v) == 0 && sysfs_num(path) == min, "%s min", knob);
	snprintf(v, sizeof(v), "%d", max);
	EXPECT(sysfs_write(path, v) == 0 && sysfs_num(path) == max, "%s max", knob);
}

TEST(knob_weight, FX_VFIO)
{
	EXPECT(sysfs_num(mdev_path(UUID0, "mdgpu/weight")) ==
	       vtype_by_name("1g")->default_weight, "default weight");
	knob_check(f, "weight", MDGPU_WEIGHT_MIN, MDGPU_WEIGHT_MAX, 50);
	EXPECT(rd32(f, MDGPU_REG_WEIGHT) == MDGPU_WEIGHT_MAX,
	       "WEIGHT register %u does not mirror sysfs", rd32(f, MDGPU_REG_WEIGHT));
}

TEST(knob_same_value_and_sign, FX_MDEV)
{
	const char *p = mdev_path(UUID0, "mdgpu/priority");
	char path[300];
	struct mdgpu_ctl_event ev;

	snprintf(path, sizeof(path), "%s", p);
	ASSERT(sysfs_write(path, "5") == 0);
	EXPECT(ev_wait(f, MDGPU_EV_KNOB, f->vgpu, NULL, EV_TIMEOUT_MS) == 0, "KNOB");
	/* An accepted write emits KNOB even when nothing changes. */
	ASSERT(sysfs_write(path, "5") == 0);
	EXPECT(ev_wait(f, MDGPU_EV_KNOB, f->vgpu, &ev, EV_TIMEOUT_MS) == 0 &&
	       ev.knob.priority == 5, "no KNOB for an unchanged value");
	/* kstrtou32 takes one leading '+', nothing else. */
	EXPECT(sysfs_write(path, "+6") == 0 && sysfs_num(path) == 6, "+6");
	EXPECT(sysfs_write(path, "++6") == -EINVAL, "++6");
	EXPECT(sysfs_write(path, "6\n\n") == -EINVAL, "two newlines");
}

TEST(knob_cap, FX_MDEV)
{
	EXPECT(sysfs_num(mdev_path(UUID0, "mdgpu/cap")) == MDGPU_CAP_MAX, "default");
	knob_check(f, "cap", MDGPU_CAP_MIN, MDGPU_CAP_MAX, 30);
}

TEST(knob_priority, FX_MDEV)
{
	EXPECT(sysfs_num(mdev_path(UUID0, "mdgpu/priority")) ==
	       MDGPU_PRIORITY_DEFAULT, "default");
	knob_check(f, "priority", MDGPU_PRIORITY_MIN, MDGPU_PRIORITY_MAX, 6);
}

TEST(knob_policy, FX_PARENT)
{
	const char *p = parent_knob(f, "policy");
	char b[64];
	struct mdgpu_ctl_event ev;
	static const char *const names[] = { "best-effort", "equal-share",
					     "fixed-share" };

	EXPECT(sysfs_read(p, b, sizeof(b)) > 0 && !strcmp(b, "best-effort"),
	       "default policy '%s'", b);
	for (int i = 2; i >= 0; i--) {
		ASSERT(sysfs_write(parent_knob(f, "policy"), names[i]) == 0,
		       "policy %s", names[i]);
		EXPECT(sysfs_read(parent_knob(f, "policy"), b, sizeof(b)) > 0 &&
		       !strcmp(b, names[i]), "policy reads '%s'", b);
		EXPECT(ev_wait(f, MDGPU_EV_POLICY, ~0U, &ev, EV_TIMEOUT_MS) == 0 &&
		       ev.policy.policy == (uint32_t)i, "POLICY event %u",
		       ev.policy.policy);
	}
	p = parent_knob(f, "policy");
	EXPECT(sysfs_write(p, "fastest") == -EINVAL, "bad policy");
	EXPECT(sysfs_write(p, "best-effortx") == -EINVAL, "bad policy");
	EXPECT(sysfs_write(p, "equal-share\n") == 0, "newline accepted");
	EXPECT(sysfs_read(p, b, sizeof(b)) > 0 && !strcmp(b, "equal-share"),
	       "policy '%s'", b);
}

TEST(knob_timeslice, FX_PARENT)
{
	char p[256];
	struct mdgpu_ctl_event ev;

	snprintf(p, sizeof(p), "%s", parent_knob(f, "timeslice_us"));
	EXPECT(sysfs_num(p) == MDGPU_TIMESLICE_US_DEFAULT, "default");
	EXPECT(sysfs_write(p, "500") == 0 && sysfs_num(p) == 500, "min");
	EXPECT(ev_wait(f, MDGPU_EV_POLICY, ~0U, &ev, EV_TIMEOUT_MS) == 0 &&
	       ev.policy.timeslice_us == 500, "POLICY event %u",
	       ev.policy.timeslice_us);
	EXPECT(sysfs_write(p, "1000000\n") == 0 && sysfs_num(p) == 1000000, "max");
	EXPECT(sysfs_write(p, "499") == -EINVAL, "below min");
	EXPECT(sysfs_write(p, "1000001") == -EINVAL, "above max");
	EXPECT(sysfs_write(p, "-1") == -EINVAL, "negative");
	EXPECT(sysfs_write(p, "2000us") == -EINVAL, "garbage");
	EXPECT(sysfs_num(p) == 1000000, "changed by a bad write");
}
