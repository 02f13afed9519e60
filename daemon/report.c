/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <time.h>

#include <json-c/json.h>

#include "macro.h"
#include "parse-util.h"
#include "report.h"

static const char *const pct_key[KT_PCT_MAX] = { "p50_ns", "p90_ns", "p99_ns", "p999_ns" };

void report_text_header(FILE *f)
{
	fprintf(f, "# latencies p50/p90/p99/p99.9; dev = issue->complete, "
		   "tot = insert->complete, app = insert->the waiting task runs; "
		   "[read/write targets]; depth = Kyber token depth\n");
}

static void text_latencies(FILE *f, const char *label, const struct kt_lat_summary *l)
{
	char b[DURATION_BUF_MAX];

	fprintf(f, " %s=", label);
	if (!l->count) {
		fputc('-', f);
		return;
	}
	for (int i = 0; i < KT_PCT_MAX; i++)
		fprintf(f, "%s%s", i ? "/" : "", format_duration(b, sizeof(b), l->pct[i]));
}

static bool op_active(const struct kt_op_interval *o)
{
	return o->completed || o->inflight > 0 || o->queued > 0;
}

void report_text(FILE *f, const struct report_device *d)
{
	const struct kt_interval *iv = d->iv;
	char tbuf[16], a[DURATION_BUF_MAX], b[DURATION_BUF_MAX];
	time_t t = (time_t)(d->realtime_ns / 1000000000ULL);
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(tbuf, sizeof(tbuf), "%H:%M:%S", &tm);
	else
		snprintf(tbuf, sizeof(tbuf), "?");
	fprintf(f, "%s %s %s", tbuf, d->name, d->scheduler ?: "?");
	if (d->has_targets)
		fprintf(f, "[%s/%s]", format_duration(a, sizeof(a), d->targets.read_ns),
			format_duration(b, sizeof(b), d->targets.write_ns));
	if (iv->reset) {
		fprintf(f, " | counters reset, no data this interval\n");
		return;
	}
	for (int op = 0; op < KT_OP_MAX; op++) {
		const struct kt_op_interval *o = &iv->op[op];

		/* Reads and writes always; discard/other only when they happen. */
		if (op > KT_OP_WRITE && !op_active(o))
			continue;
		fprintf(f, " | %s %s IOPS", kt_op_name[op], format_count_si(a, sizeof(a), o->iops));
		text_latencies(f, "dev", &o->lat[KT_LAT_DEVICE]);
		text_latencies(f, "tot", &o->lat[KT_LAT_TOTAL]);
		if (kt_hist_of((unsigned)op, KT_LAT_APP) >= 0)
			text_latencies(f, "app", &o->lat[KT_LAT_APP]);
		fprintf(f, " inflight=%" PRId64, o->inflight);
		if (o->queued)
			fprintf(f, " queued=%" PRId64, o->queued);
	}
	if (iv->kyber_depth[KT_OP_READ] || iv->kyber_depth[KT_OP_WRITE]) {
		fprintf(f, " | depth");
		for (int op = 0; op <= KT_OP_WRITE; op++) {
			if (iv->kyber_depth[op])
				fprintf(f, " %c=%u", kt_op_name[op][0], iv->kyber_depth[op]);
			else
				fprintf(f, " %c=?", kt_op_name[op][0]);
		}
	}
	fputc('\n', f);
}

/* json-c owns what it is given; a failed addition leaves it to us. */
static inline void json_object_putp(json_object **o)
{
	json_object_put(*o);
}

#define _cleanup_json_ _cleanup_(json_object_putp)

/* Adds v (NULL: a failed allocation) under key; v is consumed either way. */
static int add(json_object *o, const char *key, json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int add_null(json_object *o, const char *key)
{
	return json_object_object_add(o, key, NULL) < 0 ? -ENOMEM : 0;
}

static int add_u64(json_object *o, const char *key, uint64_t v)
{
	return add(o, key, json_object_new_uint64(v));
}

static int add_u64_or_null(json_object *o, const char *key, bool known, uint64_t v)
{
	return known ? add_u64(o, key, v) : add_null(o, key);
}

static int add_i64(json_object *o, const char *key, int64_t v)
{
	return add(o, key, json_object_new_int64(v));
}

static int add_bool(json_object *o, const char *key, bool v)
{
	return add(o, key, json_object_new_boolean(v));
}

static int add_str_or_null(json_object *o, const char *key, const char *s)
{
	return s ? add(o, key, json_object_new_string(s)) : add_null(o, key);
}

/* A double with a fixed number of decimals, printed as "%.*f" prints it
 * (bytes_per_sec and mean_ns whole, iops to a tenth); not finite: null. */
static int add_fixed(json_object *o, const char *key, double v, int decimals)
{
	char buf[DBL_MAX_10_EXP + 16];

	if (!isfinite(v))
		return add_null(o, key);
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return add(o, key, json_object_new_double_s(v, buf));
}

static int add_latencies(json_object *parent, const char *key, const struct kt_lat_summary *l)
{
	_cleanup_json_ json_object *o = json_object_new_object();

	if (!o || add_u64(o, "count", l->count) < 0)
		return -ENOMEM;
	for (int i = 0; i < KT_PCT_MAX; i++)
		if (add_u64_or_null(o, pct_key[i], l->count, l->pct[i]) < 0)
			return -ENOMEM;
	if ((l->count ? add_fixed(o, "mean_ns", l->mean_ns, 0) : add_null(o, "mean_ns")) < 0)
		return -ENOMEM;
	return add(parent, key, TAKE_PTR(o));
}

static int add_op(json_object *parent, const char *key, const struct kt_op_interval *op)
{
	_cleanup_json_ json_object *o = json_object_new_object();

	if (!o ||
	    add_fixed(o, "iops", op->iops, 1) < 0 ||
	    add_fixed(o, "bytes_per_sec", op->bytes_per_sec, 0) < 0 ||
	    add_u64(o, "completed", op->completed) < 0 ||
	    add_u64(o, "errors", op->errors) < 0 ||
	    add_i64(o, "inflight", op->inflight) < 0 ||
	    add_i64(o, "queued", op->queued) < 0 ||
	    add_u64(o, "kyber_throttled", op->throttled) < 0 ||
	    add_u64(o, "merged", op->merged) < 0 ||
	    add_u64(o, "dropped", op->dropped) < 0 ||
	    add_u64(o, "stale", op->stale) < 0 ||
	    add_u64(o, "expired", op->expired) < 0 ||
	    add_u64(o, "stamped", op->stamped) < 0 ||
	    add_u64(o, "untimed", op->untimed) < 0 ||
	    add_u64(o, "unsampled", op->unsampled) < 0)
		return -ENOMEM;
	for (int k = 0; k < KT_LAT_MAX; k++)
		if (add_latencies(o, kt_lat_name[k], &op->lat[k]) < 0)
			return -ENOMEM;
	return add(parent, key, TAKE_PTR(o));
}

/* "ops" and "kyber_depth", one member per op each. */
static int add_ops(json_object *parent, const struct kt_interval *iv)
{
	_cleanup_json_ json_object *ops = json_object_new_object();
	_cleanup_json_ json_object *depth = json_object_new_object();

	if (!ops || !depth)
		return -ENOMEM;
	for (int op = 0; op < KT_OP_MAX; op++)
		if (add_op(ops, kt_op_name[op], &iv->op[op]) < 0 ||
		    add_u64_or_null(depth, kt_op_name[op], iv->kyber_depth[op], iv->kyber_depth[op]) < 0)
			return -ENOMEM;
	if (add(parent, "ops", TAKE_PTR(ops)) < 0 || add(parent, "kyber_depth", TAKE_PTR(depth)) < 0)
		return -ENOMEM;
	return 0;
}

static int add_tuner(json_object *parent, const struct report_tuner *t)
{
	_cleanup_json_ json_object *o = json_object_new_object();

	if (!o ||
	    add_str_or_null(o, "goal", t->goal) < 0 ||
	    add_str_or_null(o, "state", t->state) < 0 ||
	    add_str_or_null(o, "reason", t->reason) < 0 ||
	    add_u64_or_null(o, "metric_ns", t->metric_ns, t->metric_ns) < 0 ||
	    (t->goal_met < 0 ? add_null(o, "goal_met") : add_bool(o, "goal_met", t->goal_met)) < 0 ||
	    add_bool(o, "changed", t->changed) < 0 ||
	    add_u64_or_null(o, "original_cpu_per_io_ns", t->original_cpu_per_io_ns, t->original_cpu_per_io_ns) < 0 ||
	    add_u64_or_null(o, "kyber_cpu_per_io_ns", t->kyber_cpu_per_io_ns, t->kyber_cpu_per_io_ns) < 0)
		return -ENOMEM;
	return add(parent, "tuner", TAKE_PTR(o));
}

int report_json(FILE *f, const struct report_device *d)
{
	const struct kt_interval *iv = d->iv;
	_cleanup_json_ json_object *o = json_object_new_object();
	const char *s;

	if (!o ||
	    add_u64(o, "time_ns", d->realtime_ns) < 0 ||
	    add_str_or_null(o, "device", d->name) < 0 ||
	    add_u64(o, "interval_ns", iv->duration_ns) < 0 ||
	    add_str_or_null(o, "scheduler", d->scheduler) < 0 ||
	    add_u64_or_null(o, "read_target_ns", d->has_targets, d->targets.read_ns) < 0 ||
	    add_u64_or_null(o, "write_target_ns", d->has_targets, d->targets.write_ns) < 0 ||
	    add_bool(o, "reset", iv->reset) < 0 ||
	    add_u64(o, "bpf_missed_events", d->bpf_misses) < 0 ||
	    add_ops(o, iv) < 0 ||
	    (d->tuner && add_tuner(o, d->tuner) < 0))
		return -ENOMEM;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s)
		return -ENOMEM;
	fprintf(f, "%s\n", s);
	return 0;
}
