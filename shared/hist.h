/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Histogram math over the observer's log-linear buckets (bpf/observer-abi.h):
 * merge, delta between cumulative snapshots, percentiles, mean. Pure.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "observer-abi.h"

typedef __u64 hist_t[KT_HIST_BUCKETS];

uint64_t hist_count(const __u64 *h);
void hist_merge(__u64 *dst, const __u64 *src);
/* Value below which p percent of the samples lie (p in (0,100]): the
 * midpoint of the bucket holding the ceil(p/100*n)-th sample. -ENODATA on an
 * empty histogram, -EINVAL for p out of range. */
int hist_percentile(const __u64 *h, double p, uint64_t *ret);

/* Mean from bucket midpoints; exact sums (kt_op_counters.lat_sum_ns) are
 * better when available. -ENODATA when empty. */
int hist_mean(const __u64 *h, double *ret);

/* Fraction of samples at or below ns (bucket-resolution). */
double hist_fraction_le(const __u64 *h, uint64_t ns);

/* Events per second over an interval; 0 for an empty interval. */
double rate_per_sec(uint64_t events, uint64_t interval_ns);

/* Midpoint of a bucket, the value a percentile reports. */
uint64_t hist_bucket_mid(uint32_t idx);
