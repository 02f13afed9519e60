/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cumulative counts for the metrics, from pairs of the observer's
 * snapshots. Kept apart from the interval (interval.c): an interval is
 * what the tuner judges and skips the settle time after a change, while a
 * Prometheus counter must count every completion, so the measurement
 * (measure.c) feeds both from the same snapshots. Pure.
 */
#include <errno.h>
#include <string.h>

#include "hist.h"
#include "macro.h"
#include "metrics.h"

const uint64_t metrics_le_ns[METRICS_LE_COUNT] = {
	5000, 10000, 25000, 50000, 100000, 250000, 500000,			/* 5 us .. 500 us */
	1000000, 2500000, 5000000, 10000000, 25000000, 50000000,		/* 1 ms .. 50 ms */
	100000000, 250000000, 500000000,					/* 100 ms .. 500 ms */
	1000000000, 2500000000, 5000000000, 10000000000,			/* 1 s .. 10 s */
};

/* The le bucket an observer bucket counts in: the first bound at or above
 * its midpoint; METRICS_LE_COUNT (+Inf) above them all. The last observer
 * bucket is open-ended, reported as [2^34, 2^35) ns: above 10 s. */
static unsigned le_of(uint32_t idx)
{
	uint64_t mid = hist_bucket_mid(idx);
	unsigned k = 0;

	while (k < METRICS_LE_COUNT && metrics_le_ns[k] < mid)
		k++;
	return k;
}

static bool went_back(const struct kt_snapshot *prev, const struct kt_snapshot *cur)
{
	for (int o = 0; o < KT_OP_MAX; o++) {
		const struct kt_op_counters *c = &cur->op[o], *p = &prev->op[o];

		if (c->completed < p->completed || c->bytes < p->bytes)
			return true;
		for (int k = 0; k < KT_LAT_MAX; k++)
			if (c->lat_sum_ns[k] < p->lat_sum_ns[k])
				return true;
	}
	return false;
}

/* The observer's histogram h between the two snapshots, into m. */
static void add_hist(struct metrics_hist *m, const struct kt_snapshot *prev, const struct kt_snapshot *cur,
		     int h)
{
	for (uint32_t i = 0; i < KT_HIST_BUCKETS; i++) {
		/* 32-bit bucket counters: the difference modulo 2^32. */
		uint32_t n = cur->hist[h][i] - prev->hist[h][i];

		if (n)
			m->bucket[le_of(i)] += n;
	}
}

int metrics_totals_add(struct metrics_totals *t, const struct kt_snapshot *prev, const struct kt_snapshot *cur)
{
	if (went_back(prev, cur))
		return -ERANGE;
	for (int o = 0; o < KT_OP_MAX; o++) {
		const struct kt_op_counters *c = &cur->op[o], *p = &prev->op[o];
		struct metrics_op_totals *ot = &t->op[o];

		ot->completed += c->completed - p->completed;
		ot->bytes += c->bytes - p->bytes;
		for (int k = 0; k < KT_LAT_MAX; k++) {
			int h = kt_hist_of((unsigned)o, (unsigned)k);

			if (h < 0)
				continue;	/* not kept: stays empty */
			add_hist(&ot->hist[k], prev, cur, h);
			ot->hist[k].sum_ns += c->lat_sum_ns[k] - p->lat_sum_ns[k];
		}
	}
	return 0;
}
