/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "ctl-sample.h"
#include "interval.h"

static void op_sample(const struct kt_op_interval *o, uint32_t depth, struct ctl_op_sample *out)
{
	const struct kt_lat_summary *t = &o->lat[KT_LAT_TOTAL], *dv = &o->lat[KT_LAT_DEVICE];

	memset(out, 0, sizeof(*out));
	/* The controller reads latencies wherever requests completed: an op
	 * whose completions were all left untimed (by sampling, where its rate
	 * fell to a few requests within the interval) has none to read, and
	 * counts as idle for once. */
	out->completed = t->count ? o->completed : 0;
	out->iops = o->iops;
	out->total_mean_ns = t->mean_ns;
	if (t->count) {
		out->total_p90_ns = t->pct[KT_P90];
		out->total_p99_ns = t->pct[KT_P99];
	}
	if (dv->count) {
		out->device_p90_ns = dv->pct[KT_P90];
		out->device_p99_ns = dv->pct[KT_P99];
	}
	out->outstanding = o->iops * t->mean_ns / 1e9;
	out->kyber_depth = depth;	/* resolved by the pipeline (measure.c) */
	out->throttled = o->throttled;
}

void ctl_sample_from_interval(const struct kt_interval *iv, struct ctl_sample *out)
{
	memset(out, 0, sizeof(*out));
	out->duration_ns = iv->duration_ns;
	op_sample(&iv->op[KT_OP_READ], iv->kyber_depth[KT_OP_READ], &out->read);
	op_sample(&iv->op[KT_OP_WRITE], iv->kyber_depth[KT_OP_WRITE], &out->write);
	out->read_hist = iv->op[KT_OP_READ].hist[KT_LAT_APP];
	out->host_steal = iv->host_steal;
}
