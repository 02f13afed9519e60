/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's core: the set of tuned devices, the observer they share,
 * their timers, and what the outside (D-Bus, config, signals) may ask of
 * them. Every request returns -errno and, on failure, a sentence for the
 * caller in err (D-Bus passes it on as the error message); start-up
 * (manager_new) logs its own failure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "controller.h"
#include "daemon-options.h"
#include "goal.h"
#include "kyber-sysfs.h"
#include "observer.h"
#include "uevent.h"

struct manager;
struct device;

/* A goal for a disk that is not here: set or configured before it was
 * plugged, or kept when it went away. It applies when the disk appears. */
struct waiting_goal {
	/* Which disk: "name:X" is whatever disk the name or /dev path X
	 * resolves to (configured goals, goals set while it was absent);
	 * any other stable id (blockdev_stable_id()) is that disk only,
	 * under whatever name it comes back (goals it had when it left). */
	char *id;
	char *name;		/* as last seen or given: for ClearGoal and status */
	char goal[GOAL_TEXT_MAX];
	enum goal_source source;
};

void manager_options_default(struct manager_options *o);


/* Loads and attaches the observer. On failure -errno, the cause logged. */
int manager_new(struct manager **ret, sd_event *event, const struct manager_options *o);
/* Stops every device (rolling back as configured) and frees. */
struct manager *manager_free(struct manager *m);
void manager_set_callbacks(struct manager *m, const struct manager_callbacks *cb);

/*
 * Requests. device: a name or /dev path. A goal on a new device starts
 * tuning it; on a tuned device it replaces the goal; for a disk that is
 * not here (a name or /dev path that does not exist, a disk without
 * medium) it waits for the disk and returns 1 (not with --goal, which
 * must take at once). clear_goal restores
 * the original scheduler and targets and forgets the device. pause stops
 * writing targets (state paused) and resume starts again from what is in
 * sysfs then; resume also ends overridden. reset restores the originals,
 * forgets what was learned and pauses; resume starts afresh. Each
 * returns -errno, with the sentence for the requester in error (error.h).
 */
int manager_set_goal(struct manager *m, const char *device, const char *goal_text, sd_bus_error *error);
/* The same with the goal's source (manager_set_goal: run time). A run-time
 * goal is not replaced by a configuration goal. */
int manager_set_goal_from(struct manager *m, const char *device, const char *goal_text,
			  enum goal_source source, sd_bus_error *error);
/*
 * At start, after the command line's goals and before the configuration's
 * (a run-time goal stands over a configured one): resume the run-time
 * goals kept in the state file.
 */
void manager_resume_goals(struct manager *m);
/* Then, after the configuration's: put back the originals of devices a
 * previous instance tuned but this one does not (after a crash), unless
 * someone changed them since. */
void manager_restore_leftovers(struct manager *m);
/* Configuration reload: devices whose goal came from the configuration and
 * that are no longer in it stop (rolling back). */
void manager_drop_config_goals_except(struct manager *m, const char *const *devices, size_t n);
int manager_clear_goal(struct manager *m, const char *device, sd_bus_error *error);
int manager_pause(struct manager *m, const char *device, sd_bus_error *error);
int manager_resume(struct manager *m, const char *device, sd_bus_error *error);
int manager_reset(struct manager *m, const char *device, sd_bus_error *error);
/* resume for every overridden or paused device */
void manager_resume_all(struct manager *m);

/*
 * Weights of cgroups on a disk (device: a name or /dev path; cgroup: its
 * path relative to the io controller's hierarchy root; weight 1-10000, as
 * io.weight). A disk without a goal is tuned for its weights alone (no
 * latency goal, its own scheduler). A weight set at run time is kept
 * across restarts and stands over a configured one. Clearing the last
 * weight of a disk tuned for its weights alone stops tuning it. -errno,
 * with the sentence for the requester in error.
 */
int manager_set_weight(struct manager *m, const char *device, const char *cgroup, uint32_t weight,
		       enum goal_source source, sd_bus_error *error);
int manager_clear_weight(struct manager *m, const char *device, const char *cgroup, sd_bus_error *error);
/* At start, after manager_resume_goals(): the weights set at run time. */
void manager_resume_weights(struct manager *m);
/* Configuration reload: configured weights not among the n pairs
 * (devices[i], cgroups[i]) are cleared. */
void manager_drop_config_weights_except(struct manager *m, const char *const *devices,
					const char *const *cgroups, size_t n);

/* 0 if the observer's maps are still usable with the capabilities this
 * process has now (struct manager * as void *: a privs probe). */
int manager_check_observer_access(void *userdata);

/* A disk appeared, changed or went away (device-events.h): the tuned disk
 * of that name is checked at once; goals waiting for it apply. */
void manager_device_event(struct manager *m, enum device_event_action action, const char *name);
size_t manager_n_waiting(const struct manager *m);
const struct waiting_goal *manager_waiting(const struct manager *m, size_t i);
/* The goal waiting under device (a name or its /dev path), or NULL. */
const struct waiting_goal *manager_find_waiting(const struct manager *m, const char *device);

/* The tuning interval, ns. */
uint64_t manager_interval_ns(const struct manager *m);
size_t manager_n_devices(const struct manager *m);
struct device *manager_device(const struct manager *m, size_t i);
/* By name or /dev path; NULL if not tuned. */
struct device *manager_find(const struct manager *m, const char *device);
/* The same, or -ENODEV with a sentence in error: the device has no goal,
 * or its goal waits for the disk. */
int manager_lookup(const struct manager *m, const char *device, struct device **ret, sd_bus_error *error);
