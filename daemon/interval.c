/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "interval.h"
#include "macro.h"

const double kt_pct_value[KT_PCT_MAX] = { 50, 90, 99, 99.9 };
const char *const kt_pct_name[KT_PCT_MAX] = { "p50", "p90", "p99", "p99.9" };
const char *const kt_op_name[KT_OP_MAX] = { "read", "write", "discard", "other" };
const char *const kt_lat_name[KT_LAT_MAX] = { "queue", "device", "total", "app" };

int kt_op_from_string(const char *s)
{
	for (int i = 0; i < KT_OP_MAX; i++)
		if (strcmp(s, kt_op_name[i]) == 0)
			return i;
	return -EINVAL;
}

void dev_stats_sum_cpus(struct kt_snapshot *dst, const void *percpu, unsigned ncpus, size_t stride)
{
	memset(dst->op, 0, sizeof(dst->op));
	memset(dst->hist, 0, sizeof(dst->hist));
	for (unsigned c = 0; c < ncpus; c++) {
		const struct kt_dev_stats *ds = (const void *)((const char *)percpu + c * stride);

		for (int o = 0; o < KT_OP_MAX; o++) {
			const struct kt_op_counters *s = &ds->op[o];
			struct kt_op_counters *d = &dst->op[o];

			for (int k = 0; k < KT_LAT_MAX; k++)
				d->lat_sum_ns[k] += s->lat_sum_ns[k];
			d->completed += s->completed;
			d->bytes += s->bytes;
			d->errors += s->errors;
			d->stamped += s->stamped;
			d->untimed += s->untimed;
			d->unsampled += s->unsampled;
			d->inserted += s->inserted;
			d->issued += s->issued;
			d->requeued += s->requeued;
			d->merged += s->merged;
			d->partial += s->partial;
			d->dropped += s->dropped;
			d->stale += s->stale;
			d->kyber_throttled += s->kyber_throttled;
			d->queued += s->queued;
			d->inflight += s->inflight;
		}
		for (int h = 0; h < KT_DEV_HISTS; h++)
			for (uint32_t i = 0; i < KT_HIST_BUCKETS; i++)
				dst->hist[h][i] += ds->hist[h][i];	/* modulo 2^32 */
	}
}

void snapshot_app_span(struct kt_snapshot *s, const struct kt_app_moves *m)
{
	int total = kt_hist_of(KT_OP_READ, KT_LAT_TOTAL);

	for (uint32_t i = 0; i < KT_HIST_BUCKETS; i++)
		s->hist[KT_HIST_READ_APP][i] = s->hist[total][i] + m->moves[i];	/* modulo 2^32 */
	s->op[KT_OP_READ].lat_sum_ns[KT_LAT_APP] += s->op[KT_OP_READ].lat_sum_ns[KT_LAT_TOTAL];
}

void lat_summary_compute(const __u64 *h, uint64_t sum_ns, struct kt_lat_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->count = hist_count(h);
	if (!out->count)
		return;
	for (int i = 0; i < KT_PCT_MAX; i++)
		(void)hist_percentile(h, kt_pct_value[i], &out->pct[i]);
	out->mean_ns = (double)sum_ns / (double)out->count;
}

/*
 * Timed completions per second an op keeps under sampling: 20,000. The
 * tuner needs 5/(1-p) samples of its percentile in an interval (500 for a
 * P99 goal, 5,000 for P99.9, at the default 1 s), and the shift follows
 * the rate one interval late: an op that slows down 10x at once still has
 * 2,000 samples in the interval before its sampling catches up.
 */
#define INTERVAL_TIMED_PER_SEC_MIN	20000.0
/* At most 1 in 16 timed: past that, what sampling saves is small beside
 * what every completion costs anyway (running the program, finding its
 * device, its counters). */
#define INTERVAL_SAMPLE_SHIFT_MAX	4u

unsigned interval_sample_shift(double per_sec)
{
	unsigned shift = 0;

	while (shift < INTERVAL_SAMPLE_SHIFT_MAX && per_sec / (double)(2u << shift) >= INTERVAL_TIMED_PER_SEC_MIN)
		shift++;
	return shift;
}

/* cur - prev for a counter; false when it went backwards. */
static bool diff(uint64_t cur, uint64_t prev, uint64_t *out)
{
	if (cur < prev)
		return false;
	*out = cur - prev;
	return true;
}

bool interval_lost_completions(const struct kt_interval *iv, unsigned kernel_inflight)
{
	int64_t pending = 0;

	if (iv->reset || kernel_inflight)
		return false;
	for (int o = 0; o < KT_OP_MAX; o++) {
		const struct kt_op_interval *r = &iv->op[o];

		if (r->issued || r->completed || r->merged || r->requeued)
			return false;
		pending += r->queued + r->inflight;
	}
	return pending > 0;
}

int interval_compute(const struct kt_snapshot *prev, const struct kt_snapshot *cur,
		     struct kt_interval *out)
{
	bool ok = true;

	if (cur->time_ns < prev->time_ns)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->duration_ns = cur->time_ns - prev->time_ns;
	out->host_steal = host_cpu_steal_share(&prev->host, &cur->host);

	for (int o = 0; o < KT_OP_MAX; o++) {
		const struct kt_op_counters *c = &cur->op[o], *p = &prev->op[o];
		struct kt_op_interval *r = &out->op[o];

		ok = ok && diff(c->completed, p->completed, &r->completed) &&
		     diff(c->bytes, p->bytes, &r->bytes) &&
		     diff(c->errors, p->errors, &r->errors) &&
		     diff(c->issued, p->issued, &r->issued) &&
		     diff(c->merged, p->merged, &r->merged) &&
		     diff(c->requeued, p->requeued, &r->requeued) &&
		     diff(c->kyber_throttled, p->kyber_throttled, &r->throttled) &&
		     diff(c->dropped, p->dropped, &r->dropped) &&
		     diff(c->stale, p->stale, &r->stale) &&
		     diff(c->stamped, p->stamped, &r->stamped) &&
		     diff(c->untimed, p->untimed, &r->untimed) &&
		     diff(c->unsampled, p->unsampled, &r->unsampled) &&
		     diff(cur->expired[o], prev->expired[o], &r->expired);
		for (int k = 0; ok && k < KT_LAT_MAX; k++) {
			int h = kt_hist_of(o, k);
			uint64_t sum;

			if (h < 0)
				continue;	/* not kept: stays empty */
			/* 32-bit bucket counters: the difference modulo 2^32. */
			for (uint32_t i = 0; i < KT_HIST_BUCKETS; i++)
				r->hist[k][i] = (uint32_t)(cur->hist[h][i] - prev->hist[h][i]);
			ok = diff(c->lat_sum_ns[k], p->lat_sum_ns[k], &sum);
			if (ok)
				lat_summary_compute(r->hist[k], sum, &r->lat[k]);
		}
		r->iops = rate_per_sec(r->completed, out->duration_ns);
		r->bytes_per_sec = rate_per_sec(r->bytes, out->duration_ns);
		r->queued = c->queued;
		r->inflight = c->inflight;

		out->kyber_depth[o] = cur->kyber.depth[o];
		out->kyber_adjusts[o] = cur->kyber.adjust_count[o] >= prev->kyber.adjust_count[o] ?
			cur->kyber.adjust_count[o] - prev->kyber.adjust_count[o] : 0;
	}

	if (!ok) {
		/* A counter reset (slot reassigned): report nothing rather than garbage. */
		uint64_t d = out->duration_ns;

		memset(out, 0, sizeof(*out));
		out->duration_ns = d;
		out->reset = true;
	}
	return 0;
}

uint32_t interval_kyber_depth(const struct kt_interval *iv, int op, int64_t live, bool *stale_report)
{
	const struct kt_op_interval *o = &iv->op[op];
	uint32_t reported = iv->kyber_depth[op];

	*stale_report = live > 0 && reported && reported != live;
	if (live > 0 && live <= UINT32_MAX)
		return (uint32_t)live;
	if (reported)
		return reported;
	if (o->queued > 0 && o->inflight > 0 && o->inflight <= UINT32_MAX)
		return (uint32_t)o->inflight;
	return 0;
}
