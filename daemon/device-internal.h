/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One device's state: shared by device.c (its life and its interval) and
 * device-status.c (what it shows outside), and by nothing else. */
#pragma once

#include "blockdev.h"
#include "controller.h"
#include "device.h"
#include "measure.h"

struct device {
	struct device_env env;
	struct blockdev dev;
	char id[160];			/* stable id for persistent state */
	struct goal goal;
	enum goal_source source;
	struct measure ms;		/* its counters, intervals and depths */
	struct controller *ctl;
	struct kyber_saved original;	/* for rollback */
	bool saved;
	struct kyber_targets written;	/* what sysfs holds as far as we know */
	/* The scheduler as last read: once per interval and after every
	 * change kyber-tuned makes, so that status reads cost no sysfs read. */
	char scheduler[SCHED_NAME_MAX];
	enum ctl_state state;
	char reason[256];
	bool overridden, paused;
	bool gone;			/* the disk went away: nothing to restore */
	bool have_interval;
	struct ctl_decision last;	/* last decision */
	sd_event_source *settle;
	uint64_t changes;
};

/* device-status.c: the interval's --json line and flight record. */
void device_report_json(const struct device *d, bool changed);
void device_record_interval(struct device *d, bool changed);
