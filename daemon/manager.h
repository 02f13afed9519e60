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
#include "goal.h"
#include "kyber-sysfs.h"
#include "observer.h"

struct manager;
struct device;

/* Where a device's goal came from: run-time goals persist in the state
 * file; configuration goals follow the configuration on reload. */
enum goal_source {
	GOAL_SOURCE_RUNTIME,		/* D-Bus / kyber-tunectl */
	GOAL_SOURCE_CONFIG,		/* kyber-tuned.conf [Goals] */
	GOAL_SOURCE_CLI,		/* --goal */
};

struct manager_options {
	uint64_t interval_ns;		/* control interval (1 s) */
	uint64_t settle_ns;		/* data discarded after a change (300 ms) */
	bool rollback;			/* restore scheduler and targets when a device stops */
	bool switch_scheduler;		/* switch a device with a goal to Kyber */
	bool json;			/* one JSON object per device and interval on stdout */
	enum observer_attach attach;
	unsigned max_devices;		/* observer map sizes (16) */
	const char *sysroot;		/* "/sys" */
	const char *debugfs;		/* "/sys/kernel/debug" */
	const char *state_dir;		/* goals and learned state; NULL: none kept */
	const char *runtime_dir;	/* originals for crash recovery; NULL: none kept */
	const char *record_path;	/* flight recorder; NULL: off */
};

void manager_options_default(struct manager_options *o);

/* Called from the event loop. Any may be NULL. */
struct manager_callbacks {
	void (*device_added)(struct device *d, void *userdata);
	void (*device_removed)(struct device *d, void *userdata);
	/* After every interval of a device (PropertiesChanged material). */
	void (*interval)(struct device *d, void *userdata);
	void (*targets_changed)(struct device *d, const struct kyber_targets *old,
				const struct kyber_targets *new, const char *reason, void *userdata);
	void (*goal_violated)(struct device *d, uint64_t metric_ns, uint64_t goal_ns, void *userdata);
	void *userdata;
};

/* Loads and attaches the observer. On failure -errno, the cause logged. */
int manager_new(struct manager **ret, sd_event *event, const struct manager_options *o);
/* Stops every device (rolling back as configured) and frees. */
struct manager *manager_free(struct manager *m);
void manager_set_callbacks(struct manager *m, const struct manager_callbacks *cb);

/*
 * Requests. device: a name or /dev path. A goal on a new device starts
 * tuning it; on a tuned device it replaces the goal. clear_goal restores
 * the original scheduler and targets and forgets the device. pause stops
 * writing targets (state paused) and resume starts again from what is in
 * sysfs then; resume also ends overridden. reset restores the originals,
 * forgets what was learned and pauses; resume starts afresh.
 */
int manager_set_goal(struct manager *m, const char *device, const char *goal_text,
		     char *err, size_t errlen);
/* The same with the goal's source (manager_set_goal: run time). A run-time
 * goal is not replaced by a configuration goal. */
int manager_set_goal_from(struct manager *m, const char *device, const char *goal_text,
			  enum goal_source source, char *err, size_t errlen);
/*
 * After the command line and configuration goals are set: resume the
 * run-time goals kept in the state file, and put back the originals of
 * devices a previous instance tuned but this one does not (after a crash).
 */
void manager_restore_previous(struct manager *m);
/* Configuration reload: devices whose goal came from the configuration and
 * that are no longer in it stop (rolling back). */
void manager_drop_config_goals_except(struct manager *m, const char *const *devices, size_t n);
int manager_clear_goal(struct manager *m, const char *device, char *err, size_t errlen);
int manager_pause(struct manager *m, const char *device, char *err, size_t errlen);
int manager_resume(struct manager *m, const char *device, char *err, size_t errlen);
int manager_reset(struct manager *m, const char *device, char *err, size_t errlen);
/* resume for every overridden or paused device */
void manager_resume_all(struct manager *m);

/* 0 if the observer's maps are still usable with the capabilities this
 * process has now (struct manager * as void *: a privs probe). */
int manager_check_observer_access(void *userdata);

/* The tuning interval, ns. */
uint64_t manager_interval_ns(const struct manager *m);
size_t manager_n_devices(const struct manager *m);
struct device *manager_device(const struct manager *m, size_t i);
/* By name or /dev path; NULL if not tuned. */
struct device *manager_find(const struct manager *m, const char *device);
