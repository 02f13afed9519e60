/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "hist.h"

uint64_t hist_count(const __u64 *h)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < KT_HIST_BUCKETS; i++)
		n += h[i];
	return n;
}

void hist_merge(__u64 *dst, const __u64 *src)
{
	for (uint32_t i = 0; i < KT_HIST_BUCKETS; i++)
		dst[i] += src[i];
}

uint64_t hist_bucket_mid(uint32_t idx)
{
	uint64_t w = kt_hist_width(idx);

	/* Width-1 buckets hold exactly one value. */
	return kt_hist_lower(idx) + w / 2;
}

int hist_percentile(const __u64 *h, double p, uint64_t *ret)
{
	uint64_t n = hist_count(h), rank, seen = 0;

	if (!(p > 0 && p <= 100))
		return -EINVAL;
	if (n == 0)
		return -ENODATA;
	rank = (uint64_t)ceil(p / 100.0 * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	for (uint32_t i = 0; i < KT_HIST_BUCKETS; i++) {
		seen += h[i];
		if (seen >= rank) {
			*ret = hist_bucket_mid(i);
			return 0;
		}
	}
	return -ENODATA;	/* not reached */
}

int hist_mean(const __u64 *h, double *ret)
{
	double sum = 0;
	uint64_t n = 0;

	for (uint32_t i = 0; i < KT_HIST_BUCKETS; i++) {
		if (!h[i])
			continue;
		sum += (double)h[i] * (double)hist_bucket_mid(i);
		n += h[i];
	}
	if (!n)
		return -ENODATA;
	*ret = sum / (double)n;
	return 0;
}

double hist_fraction_le(const __u64 *h, uint64_t ns)
{
	uint64_t n = 0, le = 0;
	uint32_t limit = kt_hist_index(ns);

	for (uint32_t i = 0; i < KT_HIST_BUCKETS; i++) {
		n += h[i];
		if (i <= limit)
			le += h[i];
	}
	return n ? (double)le / (double)n : 0.0;
}

double rate_per_sec(uint64_t events, uint64_t interval_ns)
{
	if (!interval_ns)
		return 0.0;
	return (double)events * 1e9 / (double)interval_ns;
}
