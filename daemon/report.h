/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One interval of one device as a text line or a JSON object. Pure. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "interval.h"
#include "kyber-sysfs.h"

/* What the tuner adds to an interval's report. */
struct report_tuner {
	const char *goal;		/* canonical goal text */
	const char *state;
	const char *reason;
	uint64_t metric_ns;		/* 0: not estimated this interval */
	int goal_met;			/* -1: unknown */
	bool changed;			/* targets written this interval */
	/* The block layer's CPU time per I/O sampled under the original
	 * scheduler and under Kyber; 0: not measured. */
	uint64_t original_cpu_per_io_ns, kyber_cpu_per_io_ns;
};

struct report_device {
	const char *name;
	const char *scheduler;		/* NULL: unknown */
	bool has_targets;		/* Kyber is active and targets were read */
	struct kyber_targets targets;
	const struct kt_interval *iv;
	uint64_t realtime_ns;		/* wall clock at the end of the interval */
	uint64_t bpf_misses;		/* observer events the kernel skipped, all devices */
	const struct report_tuner *tuner;	/* NULL in --observe */
};

void report_text_header(FILE *f);
void report_text(FILE *f, const struct report_device *d);
/* One line of JSON (JSON Lines); keys are documented in kyber-tuned(8).
 * -ENOMEM, and nothing written, when the object cannot be built. */
int report_json(FILE *f, const struct report_device *d);
