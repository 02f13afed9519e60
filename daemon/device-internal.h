/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One device's state: shared by device.c (its life and its interval) and
 * device-status.c (what it shows outside), and by nothing else. */
#pragma once

#include "blockdev.h"
#include "controller.h"
#include "ctl-pulse.h"
#include "ctl-sched.h"
#include "device.h"
#include "measure.h"
#include "profile.h"

struct device {
	struct device_env env;
	struct blockdev dev;
	char id[160];			/* stable id for persistent state */
	struct goal goal;
	enum goal_source source;
	struct measure ms;		/* its counters, intervals and depths */
	struct controller *ctl;
	struct sched_choice sched;	/* which scheduler it runs (scheduler=auto) */
	uint64_t switch_stall_ns;	/* how long the last scheduler switch took */
	struct sched_cost_book cost;	/* CPU per I/O under each scheduler, measured */
	/* An open sampling window: the scheduler and switch count it began
	 * with, since a window across a switch measures neither. */
	bool cost_window;
	char cost_window_scheduler[SCHED_NAME_MAX];
	unsigned cost_window_switches;
	uint64_t interval_ios;		/* I/Os of this tick's interval; 0: none measured */
	/* Per-model profiles: the disk's key, and the point learned here
	 * (device-profile.c). */
	char model[PROFILE_MODEL_MAX], firmware[PROFILE_FIRMWARE_MAX];
	unsigned met_streak;		/* settled intervals in a row on Kyber with the goal met */
	bool learned;
	struct profile learned_point;
	struct kyber_saved original;	/* for rollback */
	bool saved;
	struct kyber_targets written;	/* what sysfs holds as far as we know */
	/* The scheduler as last read: once per interval and after every
	 * change kyber-tuned makes, so that status reads cost no sysfs read. */
	char scheduler[SCHED_NAME_MAX];
	enum ctl_state state;
	char reason[256];
	bool overridden, paused;
	bool restored;			/* reset: the originals are what it left there */
	/* The configured goal a run-time goal stands over: it applies again
	 * once the run-time goal is cleared. "": none. */
	char config_goal[GOAL_TEXT_MAX];
	bool gone;			/* the disk went away: nothing to restore */
	bool have_interval;
	struct ctl_decision last;	/* last decision */
	struct device_share *share;	/* cgroups sharing it by weight; NULL: no weights */
	bool weights_only;		/* tuned for its weights alone, no goal of its own */
	sd_event_source *settle;
	uint64_t changes;
	/* A grow pulse under way (device-pulse.c). */
	struct pulse pulse;
	uint32_t pulse_depth;		/* Kyber's write depth, as its changes come */
	sd_event_source *pulse_timer;
	struct kt_snapshot *pulse_mark;	/* the counters when the measurement began */
};

/* device.c, for device-sched.c and device-profile.c. */
/* "2.00ms/10.0ms": read/write targets, for the log. */
void device_format_targets(char *buf, size_t n, const struct kyber_targets *t);
/* Write targets (logged on failure); d->written follows. */
int device_write_targets(struct device *d, const struct kyber_targets *t);
/* Write what the controller decided (if dec->write), log it with the
 * evidence of s, arm the settle timer and tell the bus; true if written. */
bool device_apply(struct device *d, const struct ctl_sample *s, const struct ctl_decision *dec);
void device_refresh_scheduler(struct device *d);
/* The next interval starts after the settle time: the one after a change is not clean. */
void device_arm_settle(struct device *d);

/* device-pulse.c: writes dec's first targets of its pulse and follows it
 * to its end. -errno (nothing under way then). */
int device_pulse_start(struct device *d, const struct ctl_decision *dec);
bool device_pulse_active(const struct device *d);
void device_pulse_stop(struct device *d);
void device_set_state(struct device *d, enum ctl_state st, const char *reason);

/* device-sched.c: the scheduler the device should be on now. */
/* The scheduler choice for the goal in force (sched_choice_init()), on
 * Kyber at once where a per-model profile says the goal needs it. */
void device_sched_choose(struct device *d);
const char *device_sched_expected(const struct device *d);
/* Choose the scheduler for the goal in force (at start, on a new goal, on
 * resume): switches at once where the goal asks for Kyber. -errno (with
 * a sentence in error, if not NULL) when that switch fails. */
int device_sched_adopt(struct device *d, sd_bus_error *error);
/* After the controller's step: stay, or switch (true). */
bool device_sched_step(struct device *d, const struct ctl_sample *s);

/* device-profile.c: per-model starting points. */
/* The profile for the disk's model, firmware and goal; NULL: none. */
const struct profile *device_profile(const struct device *d);
/* Kyber was just started with its default targets: start from the
 * profile of this model, firmware and goal instead, if there is one. */
void device_profile_seed(struct device *d);
/* After each decision: a goal met long enough on Kyber is a point learned. */
void device_profile_learn(struct device *d);

/* device-share.c: cgroups sharing the disk by weight. */
/* One period: accounting, the policy, limits written (from device_step). */
void device_share_step(struct device *d);
/* Every cgroup's limits back, accounting off; the weights stay (pause,
 * reset: hands off until resumed). */
void device_share_stop(struct device *d);
/* The same, and the weights forgotten (the device stops). */
void device_share_free(struct device *d);

/* device-operator.c: settings changed by someone else. */
/* Someone else changed it: hands off until resumed (logged, state overridden). */
void device_mark_overridden(struct device *d, const char *why);
/* true: the operator changed the device (marked overridden now if not
 * before); the caller writes nothing. */
bool device_check_override(struct device *d);
/* Record in the originals what kyber-tuned leaves on the device now, for
 * the next instance to compare (after every change it makes). */
void device_note_left(struct device *d);

/* device-status.c: the interval's --json line and flight record. */
void device_report_json(const struct device *d, bool changed);
void device_record_interval(struct device *d, bool changed);
