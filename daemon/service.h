/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's main loop: event loop, signals, manager, D-Bus, config. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "device-events.h"
#include "manager.h"

struct service_goal {
	const char *device;	/* NUL-terminated copy of the DEV part */
	const char *goal;	/* goal text */
};

/* Settings given on the command line, which the configuration must not
 * override. */
enum {
	SERVICE_CLI_INTERVAL = 1 << 0,
	SERVICE_CLI_SETTLE = 1 << 1,
	SERVICE_CLI_ROLLBACK = 1 << 2,
	SERVICE_CLI_SWITCH = 1 << 3,
	SERVICE_CLI_LOG_LEVEL = 1 << 4,
	SERVICE_CLI_RECORD = 1 << 5,
	SERVICE_CLI_RECORD_MAX = 1 << 6,
	SERVICE_CLI_METRICS = 1 << 7,
};

struct service_options {
	struct manager_options manager;
	struct service_goal *goals;	/* from the command line */
	size_t n_goals;
	bool bus;			/* serve the D-Bus API on the system bus */
	enum device_events_source device_events;	/* hotplug (auto) */
	const char *config_path;	/* NULL: no configuration file */
	const char *dropin_dir;		/* NULL: no drop-ins */
	unsigned cli_set;		/* SERVICE_CLI_* */
};

/* Split "DEV:GOAL" at the last colon (/dev/disk/by-path names hold
 * colons). The strings point into arg, which is modified. -EINVAL, with
 * a sentence in error (error.h), on a malformed one. */
int service_parse_device_goal(char *arg, struct service_goal *out, sd_bus_error *error);

/* Runs until SIGINT/SIGTERM. SIGUSR1 resumes overridden or paused devices.
 * Returns 0 or -errno (cause logged). */
int service_run(const struct service_options *o);
