/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's state: shared by manager.c (lifecycle, the tick,
 * persistence) and its parts in manager-*.c, and nothing else. */
#pragma once

#include "cgroup-io.h"
#include "host-cpu.h"
#include "manager.h"
#include "profile.h"
#include "state.h"

struct manager {
	struct manager_options o;
	char *sysroot, *debugfs, *state_dir, *runtime_dir, *record_path, *metrics_path;	/* owned copies */
	sd_event *event;
	sd_event_source *tick;		/* off while no device is tuned */
	struct observer *observer;
	sd_event_source *adjusts;	/* Kyber's depth changes (manager-adjusts.c) */
	struct host_cpu_time host;	/* the host's CPU time at the last tick (or device start) */
	struct cost_probe *cost;	/* NULL: scheduler costs not measured */
	struct profiles profiles;	/* per-model starting points, read at start */
	unsigned ticks_since_cost;	/* ticks since the last sampling window */
	struct device **devs;
	size_t n_devs;
	struct manager_callbacks cb;
	struct recorder *recorder;
	struct metrics_writer *metrics;	/* NULL: no metrics file */
	struct state state;		/* goals set at run time, learned state */
	struct originals originals;	/* what to restore, also after a crash */
	char *state_path, *originals_path;	/* NULL: not kept */
	struct waiting_goal *waiting;
	size_t n_waiting;
	struct cgroup_hierarchy cgroups;	/* the io controller's, for weights */
	bool have_cgroups;
};

/* Start tuning a disk with a goal (weights_only: the goal is the one of
 * a disk tuned for its cgroups' weights alone, never kept in the state
 * file); *ret (if not NULL) the device. -errno, with a sentence in error. */
int manager_start_device(struct manager *m, const struct blockdev *bd, const struct goal *g,
			 enum goal_source source, bool weights_only, struct device **ret, sd_bus_error *error);

/* The interval timer, on while there is a device to tune and off
 * otherwise. */
void manager_update_tick(struct manager *m);

/* manager-adjusts.c: Kyber's depth changes to the devices (for their
 * grow pulses). -errno, logged. */
int manager_watch_adjusts(struct manager *m);
void manager_unwatch_adjusts(struct manager *m);

/* manager-weights.c. */
/* Where the io controller is (at start): weights need it. */
void manager_find_cgroups(struct manager *m);
/* A tuned disk whose goal was cleared while cgroups have weights on it:
 * tuned for them alone from now on. */
void manager_weights_only(struct manager *m, struct device *d);
/* Limits a previous instance left on cgroups, put back (at start). */
void manager_restore_cgroup_leftovers(struct manager *m);

/* Forgets devs[i]: the bus drops its object, its observer slot is freed,
 * it rolls back unless its disk is gone. */
void manager_remove_device(struct manager *m, size_t i);
/* A tuned device whose disk went away (why): its goals wait for it. */
void manager_device_gone(struct manager *m, size_t i, const char *why);
/* Keeps goal waiting for the disk id names (struct waiting_goal); one per
 * disk and source, a new one replaces the old. -ENOMEM. */
/* Longest /dev path a goal may wait under. */
#define WAITING_DEVICE_MAX 256

/* A goal for device (a name or /dev path given by the user) whose disk is
 * not here: kept waiting (in the state file too when set at run time),
 * said in the journal. 1, or -errno with a sentence in error. */
int manager_wait_absent(struct manager *m, const char *device, const struct goal *g, enum goal_source source,
			sd_bus_error *error);
int manager_wait_for(struct manager *m, const char *id, const char *name, const char *goal,
		     enum goal_source source);
/* Removes the goals waiting under name (a name or the text given); those
 * set at run time leave the state file. -ENODEV if there were none. */
int manager_forget_waiting(struct manager *m, const char *name);
/* Configured goals waiting for a disk that the configuration no longer has. */
void manager_drop_waiting_config_except(struct manager *m, const char *const *devices, size_t n);
void manager_free_waiting(struct manager *m);
/* Applies the goals waiting for disks that are here (at start, after lost
 * events). */
void manager_apply_waiting(struct manager *m);
/* Writes the state file (a device's save_state callback). */
void manager_save_state(void *owner);

/* Writes the originals file (a device's save_originals callback). */
void manager_save_originals(void *owner);

/* manager-cost.c: the scheduler-cost sampler's windows, one interval each. */
struct cost_window;
/* Close the running window (before the devices step): false if none ran. */
bool manager_cost_window_stop(struct manager *m, struct cost_window *w);
/* Charge what it measured to the device that did the I/O (after they stepped). */
void manager_cost_window_charge(struct manager *m, const struct cost_window *w);
/* Open one if it is time, or a busy device has no cost yet. */
void manager_cost_window_maybe_begin(struct manager *m);
/* Close it unread: the last device went, no tick follows. */
void manager_cost_window_abandon(struct manager *m);
