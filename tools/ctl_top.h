/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* mdgpuctl top: a refreshing per-vGPU table (Documentation/mdgpuctl.md). */
#ifndef MDGPUCTL_TOP_H
#define MDGPUCTL_TOP_H

#include "ctl_client.h"

/* Print a frame every interval_s seconds (0.1 .. 3600), frames of them
 * (<= 0: until killed).  A CTL_EXIT_* status. */
int ctl_top(const struct ctl_opts *o, double interval_s, long frames);

#endif /* MDGPUCTL_TOP_H */
