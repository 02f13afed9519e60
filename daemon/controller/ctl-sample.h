/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the controller sees of one interval of one device: a summary of the
 * observer's interval (daemon/interval.c) or of the simulator's
 * (tools/kyber-sim/). Pure data.
 */
#pragma once

#include <stdint.h>
#include <linux/types.h>

#include "observer-abi.h"

struct ctl_op_sample {
	uint64_t completed;		/* requests completed in the interval */
	double iops;
	double total_mean_ns;		/* insert (or issue) -> complete */
	uint64_t total_p90_ns, total_p99_ns;
	uint64_t device_p90_ns, device_p99_ns;	/* issue -> complete */
	/* Mean requests outstanding in the block layer (Little's law:
	 * iops x mean total latency). */
	double outstanding;
	uint32_t kyber_depth;		/* Kyber's token depth; 0: unknown */
	uint64_t throttled;		/* kyber_throttled events */
};

struct ctl_sample {
	uint64_t duration_ns;
	struct ctl_op_sample read, write;
	/* The reads' latency as the tasks waiting for them see it, from their
	 * start to when the task runs again (the observer's app span; the
	 * total for reads whose waiter was not asleep), the interval's
	 * histogram of KT_HIST_BUCKETS buckets: the goal's percentile is of
	 * this. The simulator, which has no host path, gives its totals. */
	const __u64 *read_hist;
	/* Share of the host's CPU time the hypervisor took (steal), 0..1; 0
	 * on bare metal or where it is not known. */
	double host_steal;
};

struct kt_interval;
/* The controller's view of an observer interval; read_hist points
 * into iv. */
void ctl_sample_from_interval(const struct kt_interval *iv, struct ctl_sample *out);
