/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "model.h"

struct flashsim_config {
	struct model_params model;
	const char *mountpoint;
	unsigned max_background;
	uint64_t spin_ns;	/* busy-poll this long before a due reply */
	int cpu;		/* pin the daemon to this CPU, -1 = no pinning */
	bool fuse_debug;
};

#define EXIT_USAGE 2

/*
 * Parses the command line. Returns 1 when the caller should run, 0 when it
 * should exit successfully (--help), or -EINVAL after printing an error that
 * names the offending option (exit with EXIT_USAGE).
 */
int flashsim_parse_argv(int argc, char *argv[], struct flashsim_config *cfg);

void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
