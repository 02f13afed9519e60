/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared between manager.c (the set of devices) and device.c (one device). */
#pragma once

#include "blockdev.h"
#include "controller.h"
#include "interval.h"
#include "measure.h"
#include "manager.h"
#include "state.h"

struct recorder;

struct device {
	struct manager *m;
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

struct manager {
	struct manager_options o;
	char *sysroot, *debugfs, *state_dir, *runtime_dir, *record_path;	/* owned copies */
	sd_event *event;
	sd_event_source *tick;		/* off while no device is tuned */
	struct observer *observer;
	struct device **devs;
	size_t n_devs;
	struct manager_callbacks cb;
	struct recorder *recorder;
	struct state state;		/* goals set at run time, learned state */
	struct originals originals;	/* what to restore, also after a crash */
	char *state_path, *originals_path;	/* NULL: not kept */
};

/* manager.c: persist (errors are logged, never fatal) */
void manager_save_state(struct manager *m);
void manager_save_originals(struct manager *m);

/* device.c */
int device_new(struct manager *m, const struct blockdev *bd, const struct goal *g,
	       enum goal_source source, struct device **ret, char *err, size_t errlen);
/* Rolls back if configured (and not overridden), unwatches, frees. */
struct device *device_free(struct device *d);
void device_step(struct device *d);

/* device-status.c: the interval's --json line and flight record. */
void device_report_json(const struct device *d, bool changed);
void device_record_interval(struct device *d, bool changed);
/* Is the disk still there, with the same dev_t (a new disk may reuse the
 * name)? Sets d->gone when not. */
bool device_present(struct device *d);
void device_set_goal(struct device *d, const struct goal *g);
void device_pause(struct device *d);
int device_resume(struct device *d);
int device_reset(struct device *d);
