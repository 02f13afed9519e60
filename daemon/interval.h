/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Snapshots of one device's cumulative counters and what happened between
 * two of them (an interval): rates, percentiles, depths. Pure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "host-cpu.h"

struct kt_snapshot {
	uint64_t time_ns;		/* CLOCK_MONOTONIC when taken */
	struct kt_op_counters op[KT_OP_MAX];
	uint32_t hist[KT_HISTS][KT_HIST_BUCKETS];	/* summed over CPUs, modulo 2^32 */
	uint64_t expired[KT_OP_MAX];	/* entries dropped by observer_expire() */
	struct kt_kyber_state kyber;
	struct host_cpu_time host;	/* the host's CPU time then (measure.c); zero: not read */
};

/* Percentiles reported everywhere; index into kt_lat_summary.pct. */
enum kt_pct { KT_P50, KT_P90, KT_P99, KT_P999, KT_PCT_MAX };
extern const double kt_pct_value[KT_PCT_MAX];
extern const char *const kt_pct_name[KT_PCT_MAX];

struct kt_lat_summary {
	uint64_t count;
	uint64_t pct[KT_PCT_MAX];	/* ns; valid only when count > 0 */
	double mean_ns;
};

struct kt_op_interval {
	uint64_t completed, bytes, errors, issued, merged, requeued, throttled, dropped, stale, expired;
	uint64_t stamped, untimed;	/* timed by the request's stamps; not timed at all */
	uint64_t unsampled;		/* left untimed by sampling (kt_sampling) */
	double iops, bytes_per_sec;
	struct kt_lat_summary lat[KT_LAT_MAX];
	hist_t hist[KT_LAT_MAX];	/* this interval's samples; empty where not kept */
	int64_t queued, inflight;	/* at the end of the interval */
};

struct kt_interval {
	uint64_t duration_ns;
	bool reset;			/* counters went backwards: no data */
	struct kt_op_interval op[KT_OP_MAX];
	uint32_t kyber_depth[KT_OP_MAX];	/* last known depth; 0: unknown */
	uint64_t kyber_adjusts[KT_OP_MAX];	/* depth changes in the interval */
	double host_steal;		/* share of the CPUs' time the hypervisor took, 0..1 */
};

extern const char *const kt_op_name[KT_OP_MAX];
extern const char *const kt_lat_name[KT_LAT_MAX];

/* Sum the per-CPU values of one kt_dev_stats into dst's counters and
 * histograms (stride: bytes per CPU), the app histogram zeroed (it is not
 * per CPU: snapshot_app_span() makes it); the rest of dst is left alone. */
void dev_stats_sum_cpus(struct kt_snapshot *dst, const void *percpu, unsigned ncpus, size_t stride);
/* The reads' app span in a summed snapshot: the total's histogram with the
 * moved reads (kt_app_moves), and its sum from the moved reads' part. */
void snapshot_app_span(struct kt_snapshot *s, const struct kt_app_moves *m);

/*
 * How to sample an op's completions that ran at per_sec in the last
 * interval: the kt_sampling shift (1 in 2^shift timed) that still times
 * INTERVAL_TIMED_PER_SEC_MIN a second. 0 (all) for anything slower.
 */
unsigned interval_sample_shift(double per_sec);

/* Returns -EINVAL when cur is older than prev. */
int interval_compute(const struct kt_snapshot *prev, const struct kt_snapshot *cur,
		     struct kt_interval *out);

/*
 * True when the device did nothing for a whole interval, yet requests are on
 * our books and the kernel counts none in flight: their completion events
 * never reached the observer (seen at ~1 in 10^4..10^5 requests on 6.18)
 * and the entries should be expired.
 */
bool interval_lost_completions(const struct kt_interval *iv, unsigned kernel_inflight);

/*
 * Kyber's token depth of one domain, from one source of truth: the
 * kernel's live depth (debugfs; live < 0 when it cannot be read). The
 * others check it and stand in for it, in this order, when it is missing:
 * Kyber's last report (the kyber_adjust tracepoint, in iv; a restart of
 * Kyber resets the depth without one, so a report can be stale), and what
 * the interval implies (requests waiting in Kyber while others are in
 * flight: every token is taken, so the number in flight is the depth).
 * Returns the depth, 0 when unknown; *stale_report: Kyber's report and the
 * live depth differ.
 */
uint32_t interval_kyber_depth(const struct kt_interval *iv, int op, int64_t live, bool *stale_report);

void lat_summary_compute(const __u64 *h, uint64_t sum_ns, struct kt_lat_summary *out);

int kt_op_from_string(const char *s);
