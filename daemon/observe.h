/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kyber-tuned --observe: print what the observer sees, one line per interval. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "observer.h"

struct observe_options {
	char **devices;
	size_t n_devices;
	uint64_t interval_ns;
	uint64_t count;			/* stop after this many intervals; 0: never */
	bool json;
	bool track_requests;		/* time from insert/issue even where stamps would do */
	enum observer_attach attach;
	const char *sysroot;		/* "/sys" */
	const char *debugfs;		/* "/sys/kernel/debug" */
};

/* Runs until SIGINT/SIGTERM or count intervals. Returns 0 or -errno
 * (the cause already logged). */
int observe_run(const struct observe_options *opts);
