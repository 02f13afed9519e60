/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kyber-tunectl's output, pure: the status block, list and monitor lines,
 * the histogram picture and JSON, from plain structs filled by the caller
 * (from D-Bus or the flight recorder), written to a FILE the caller owns.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tunectl-json.h"

/* ---- A device's status (the D-Bus Device properties). */

struct tf_status {
	const char *name, *id, *scheduler, *goal, *state, *reason;
	const char *goal_source;	/* runtime, config or command-line */
	const char *scheduler_reason;	/* why the device runs that scheduler */
	uint64_t scheduler_switches;	/* switches made by scheduler=auto */
	/* The block layer's CPU time per I/O under the original scheduler and
	 * under Kyber, sampled; 0: not measured. */
	uint64_t original_cpu_per_io_ns, kyber_cpu_per_io_ns;
	uint64_t read_target_ns, write_target_ns;
	const char *original_scheduler;
	uint64_t original_read_target_ns, original_write_target_ns;	/* 0: was not Kyber */
	uint64_t read_p50_ns, read_p99_ns, write_p50_ns, write_p99_ns;	/* 0: no samples */
	double read_iops, write_iops;
	uint32_t read_depth, write_depth;				/* 0: unknown */
	uint64_t goal_metric_ns;					/* 0: unknown */
	bool goal_met;
	uint64_t changes;
	uint64_t interval_ns;						/* 0: none yet */
};

/* A block like systemctl status: name, state and reason, goal, scheduler,
 * targets, per-op rates and latencies. utf8: draw "●" rather than "*". */
void tf_status_print(FILE *f, const struct tf_status *s, bool utf8);
/* One JSON line; time_ns (wall clock) is added when not 0. The *_json
 * functions return 0 or -errno (tf_json_end()). */
int tf_status_json(FILE *f, const struct tf_status *s, uint64_t time_ns);

/* list: a header and one row per device. */
void tf_list_header(FILE *f);
void tf_list_row(FILE *f, const struct tf_status *s);

/* A goal waiting for a disk that is not here (the WaitingGoals property):
 * as status prints it, as a list row, as a JSON object. */
void tf_waiting_print(FILE *f, const char *device, const char *goal, const char *source, bool utf8);
void tf_waiting_row(FILE *f, const char *device, const char *goal);
int tf_waiting_json(FILE *f, const char *device, const char *goal, const char *source);

/* ---- One interval of one device: a monitor or flight-recorder line. */

struct tf_op {
	double iops;
	uint64_t p50_ns, p90_ns, p99_ns, p999_ns;	/* total latency; 0: none */
	double mean_ns;
	uint64_t device_p90_ns, device_p99_ns;
	uint32_t depth;
	uint64_t completed;
};

struct tf_interval {
	uint64_t time_ns;		/* wall clock at the end; 0: unknown */
	const char *device, *goal, *state, *reason;
	uint64_t interval_ns;
	uint64_t read_target_ns, write_target_ns;
	bool changed;			/* targets written in this interval */
	uint64_t metric_ns;		/* the goal's read percentile; 0: unknown */
	int goal_met;			/* -1: unknown */
	struct tf_op read, write;
};

/* "2025-11-22 03:11:05.250" (with_date) or "03:11:05", local time. */
char *tf_format_time(char *buf, size_t n, uint64_t time_ns, bool with_date);
/* One line: time, device, state, read and write rates and P99s, targets
 * ("*" when changed), depths, reason. */
void tf_interval_line(FILE *f, const struct tf_interval *iv, bool with_date);
int tf_interval_json(FILE *f, const struct tf_interval *iv);

/* ---- Histogram picture. */

struct tf_bucket {
	uint64_t lower_ns;	/* a bucket's lower bound (kt_hist_lower) */
	uint64_t count;
};

enum {
	TF_P50,
	TF_P90,
	TF_P99,
	TF_P999,
	_TF_PCT_MAX,
};

#define TF_HIST_ROWS_MAX 20

struct tf_hist_row {
	uint64_t lo_ns, hi_ns;	/* [lo, hi) */
	uint64_t count;
	unsigned marks;		/* 1 << TF_Pxx: the row holds that percentile */
};

struct tf_hist {
	uint64_t total;
	uint64_t pct_ns[_TF_PCT_MAX];	/* bucket midpoints, like the daemon's */
	size_t n_rows;
	struct tf_hist_row rows[TF_HIST_ROWS_MAX];
};

extern const char *const tf_pct_name[_TF_PCT_MAX];

/*
 * Merge the observer's log-linear buckets into at most max_rows rows of
 * whole buckets, equal in log scale, from the first non-empty bucket to
 * the last. Buckets may come in any order; a bound that is not a bucket's
 * lower bound counts in the bucket holding it. total 0: no rows.
 */
void tf_hist_build(const struct tf_bucket *b, size_t n, size_t max_rows, struct tf_hist *out);
/* The picture: a summary line with the percentiles, then one bar per row
 * scaled to the fullest, percentiles marked at the right. */
void tf_hist_print(FILE *f, const char *device, const char *op, const struct tf_hist *h, bool utf8);
int tf_hist_json(FILE *f, const char *device, const char *op, const struct tf_bucket *b, size_t n,
		 const struct tf_hist *h);
