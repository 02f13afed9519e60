/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's main loop: event loop, signals, manager, D-Bus, config. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "manager.h"

struct service_goal {
	const char *device;	/* NUL-terminated copy of the DEV part */
	const char *goal;	/* goal text */
};

struct service_options {
	struct manager_options manager;
	struct service_goal *goals;	/* from the command line */
	size_t n_goals;
	bool bus;			/* serve the D-Bus API on the system bus */
	const char *config_path;	/* NULL: no configuration file */
};

/* Split "DEV:GOAL" at the last colon (/dev/disk/by-path names hold
 * colons). The strings point into arg, which is modified. */
int service_parse_device_goal(char *arg, struct service_goal *out, char *err, size_t errlen);

/* Runs until SIGINT/SIGTERM. SIGUSR1 resumes overridden or paused devices.
 * Returns 0 or -errno (cause logged). */
int service_run(const struct service_options *o);
