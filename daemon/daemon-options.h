/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the manager and each of its devices share: the options the daemon
 * was started with, where a goal came from, and the callbacks through
 * which the outside (D-Bus) hears of devices. Types only, so that
 * device.h and manager.h need not include each other.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "kyber-targets.h"
#include "observer.h"

struct device;

/* Where a device's goal came from: run-time goals persist in the state
 * file; configuration goals follow the configuration on reload. */
enum goal_source {
	GOAL_SOURCE_RUNTIME,		/* D-Bus / kyber-tunectl */
	GOAL_SOURCE_CONFIG,		/* kyber-tuned.conf [Goals] */
	GOAL_SOURCE_CLI,		/* --goal */
	_GOAL_SOURCE_MAX,
};

/* "runtime", "config", "command-line": the GoalSource property. */
static inline const char *goal_source_to_string(enum goal_source s)
{
	static const char *const names[_GOAL_SOURCE_MAX] = {
		[GOAL_SOURCE_RUNTIME] = "runtime",
		[GOAL_SOURCE_CONFIG] = "config",
		[GOAL_SOURCE_CLI] = "command-line",
	};

	return (unsigned)s < _GOAL_SOURCE_MAX ? names[s] : "?";
}

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
	uint64_t record_max_bytes;	/* its size before it rotates (64 MiB) */
	const char *metrics_path;	/* Prometheus textfile, every interval; NULL: off */
	/* Per-model profiles: NULL the defaults (profile-dirs.h), "" none,
	 * else this directory alone. */
	const char *profile_dir;
};

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
