/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tuner's glue: per-device state machine on sd-event timers, between
 * the observer (BPF), the controller (pure) and sysfs.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goal.h"
#include "observer.h"

struct tuner_device_spec {
	const char *device;	/* name or /dev path */
	struct goal goal;
};

struct tuner_options {
	struct tuner_device_spec *devices;
	size_t n_devices;
	uint64_t interval_ns;		/* control interval (1 s) */
	uint64_t settle_ns;		/* data discarded after a change (300 ms) */
	uint64_t count;			/* stop after this many intervals; 0: never */
	bool rollback;			/* restore scheduler and targets on exit */
	bool switch_scheduler;		/* switch a device with a goal to Kyber */
	bool json;			/* one JSON object per device and interval on stdout */
	enum observer_attach attach;
	const char *sysroot, *debugfs;
};

/* Parse "DEV:GOAL" (the goal grammar after the first colon). On failure
 * -EINVAL and a sentence in err. */
int tuner_parse_device_goal(const char *arg, struct tuner_device_spec *out, char *err, size_t errlen);

/* Runs until SIGINT/SIGTERM (or count intervals). SIGUSR1 resumes devices
 * that were overridden. Returns 0 or -errno (cause logged). */
int tuner_run(const struct tuner_options *opts);
