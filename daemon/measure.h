/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One device's measurement pipeline, the same for the tuner (device.c) and
 * for --observe (observe.c): the BPF counters' snapshot, the interval since
 * the previous one, the sweep of request entries whose completion the
 * kernel never delivered, and Kyber's depths. Data flows one way: the
 * observer is asked for counters and, when the interval says so, to sweep;
 * it never sees an interval.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "interval.h"
#include "metrics.h"
#include "observer.h"

struct measure {
	unsigned slot;
	bool watching;
	struct kt_snapshot *base, *cur;
	struct kt_interval *iv;		/* the last interval */
	/* Every completion since the watch started, settle times included
	 * (the metrics' counters). */
	struct metrics_totals *totals;
	bool stale_depth[KT_OP_MAX];	/* Kyber's report disagreed with the live depth */
};

struct measure_where;

/* Watch kdev (timed as its scheduler in w allows) and take the first
 * snapshot. -EEXIST when kdev is watched already, -ENOSPC when every
 * observer slot is in use, -ENOMEM. */
int measure_start(struct measure *ms, struct observer *o, uint32_t kdev, const struct measure_where *w);
/* Unwatch and free; safe on a measure never started. */
void measure_stop(struct measure *ms, struct observer *o);
/* The next interval starts now (the first Kyber window after a change
 * mixes old and new buckets); what completed since the last one still
 * goes into the totals. */
int measure_restart(struct measure *ms, struct observer *o, const struct host_cpu_time *host);

/* The host's CPU time now (/proc/stat); zero, no steal seen, when it cannot
 * be read. The host's, not a device's: read once per interval for all. */
void measure_read_host(struct host_cpu_time *out);

struct measure_where {
	const char *sysroot, *debugfs;	/* "/sys", "/sys/kernel/debug" normally */
	const char *name;		/* the disk */
	const char *scheduler;		/* its scheduler now (Kyber: read its depths); NULL: unknown */
	bool track_requests;		/* track insert/issue even where the kernel stamps */
	const struct host_cpu_time *host;	/* as of this interval (measure_read_host()); NULL: not known */
};

/* The interval since the previous call, in ms->iv; -errno when the
 * counters cannot be read (ms->iv is then unchanged). */
int measure_step(struct measure *ms, struct observer *o, const struct measure_where *w);
