/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Prometheus metrics in the text exposition format (version 0.0.4), for
 * node_exporter's textfile collector: what is counted since a device was
 * first watched (metrics_totals, fed from the observer's snapshots) and
 * the formatter that writes every family from plain structs. Pure: links
 * without libbpf or sd-bus. docs/metrics.md lists the families.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "interval.h"

/*
 * The histogram's le bounds, in ns: a 1-2.5-5 series from 5 us (the
 * fastest NVMe reads) to 10 s (a stalled device), so that
 * histogram_quantile() lands within a factor of 2.5 before interpolation
 * wherever a goal may sit, with 20 buckets instead of the observer's ~500.
 * Fixed: changing them breaks every stored series' continuity. The values
 * are in metrics-totals.c.
 */
#define METRICS_LE_COUNT 20u
extern const uint64_t metrics_le_ns[METRICS_LE_COUNT];

/* One (op, span) histogram since the device was first watched. */
struct metrics_hist {
	/* Samples per le bucket, not cumulative; [METRICS_LE_COUNT]: above
	 * the last bound (+Inf). */
	uint64_t bucket[METRICS_LE_COUNT + 1];
	uint64_t sum_ns;
};

struct metrics_op_totals {
	uint64_t completed, bytes;
	struct metrics_hist hist[KT_LAT_MAX];	/* empty where the observer keeps none */
};

/* Everything counted for one device, monotonic while it is watched. */
struct metrics_totals {
	struct metrics_op_totals op[KT_OP_MAX];
};

/*
 * Adds what happened between two snapshots of the same watch (prev older
 * than cur) to t. An observer bucket that straddles an le bound counts
 * below it when its midpoint does: the bound is as sharp as the observer's
 * own resolution. -ERANGE, and t unchanged, when a counter went backwards
 * (the slot was reassigned): nothing is known about that stretch.
 */
int metrics_totals_add(struct metrics_totals *t, const struct kt_snapshot *prev, const struct kt_snapshot *cur);

/* One tuned device as the metrics show it. */
struct metrics_device {
	const char *name;
	const struct metrics_totals *totals;	/* NULL: nothing counted yet */
	bool has_targets;			/* on Kyber: read_ns/write_ns are its targets */
	uint64_t target_ns[KT_OP_WRITE + 1];	/* Kyber's read and write targets */
	uint32_t depth[KT_OP_MAX];		/* Kyber's token depth; 0: unknown, not shown */
	unsigned state;				/* index into metrics_input.state_names */
	bool has_goal;				/* a read latency goal */
	double goal_pct;			/* its percentile: 99 for read-p99 */
	uint64_t goal_ns;
	int goal_met;				/* 0, 1; -1: unknown, not shown */
	uint64_t target_changes, scheduler_switches;
};

struct metrics_input {
	const struct metrics_device *devs;
	size_t n_devs;
	const char *const *state_names;		/* every tuner state, for the state gauge */
	size_t n_states;
	uint64_t cpu_usec;			/* the daemon's user + system CPU time */
	uint64_t rss_bytes;			/* its resident memory */
};

/* Every family, each with its HELP and TYPE once. -EIO when f failed. */
int metrics_format(FILE *f, const struct metrics_input *in);
