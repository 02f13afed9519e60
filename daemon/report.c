/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <time.h>

#include "parse-util.h"
#include "report.h"

static const char *const pct_key[KT_PCT_MAX] = { "p50_ns", "p90_ns", "p99_ns", "p999_ns" };

void report_text_header(FILE *f)
{
	fprintf(f, "# latencies p50/p90/p99/p99.9; dev = issue->complete, "
		   "tot = insert->complete; [read/write targets]; depth = Kyber token depth\n");
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

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void json_latencies(FILE *f, const struct kt_lat_summary *l)
{
	fprintf(f, "{\"count\":%" PRIu64, l->count);
	for (int i = 0; i < KT_PCT_MAX; i++) {
		if (l->count)
			fprintf(f, ",\"%s\":%" PRIu64, pct_key[i], l->pct[i]);
		else
			fprintf(f, ",\"%s\":null", pct_key[i]);
	}
	if (l->count)
		fprintf(f, ",\"mean_ns\":%.0f}", l->mean_ns);
	else
		fprintf(f, ",\"mean_ns\":null}");
}

void report_json(FILE *f, const struct report_device *d)
{
	const struct kt_interval *iv = d->iv;

	fprintf(f, "{\"time_ns\":%" PRIu64 ",\"device\":", d->realtime_ns);
	json_string(f, d->name);
	fprintf(f, ",\"interval_ns\":%" PRIu64 ",\"scheduler\":", iv->duration_ns);
	if (d->scheduler)
		json_string(f, d->scheduler);
	else
		fputs("null", f);
	if (d->has_targets)
		fprintf(f, ",\"read_target_ns\":%" PRIu64 ",\"write_target_ns\":%" PRIu64,
			d->targets.read_ns, d->targets.write_ns);
	else
		fputs(",\"read_target_ns\":null,\"write_target_ns\":null", f);
	fprintf(f, ",\"reset\":%s,\"bpf_missed_events\":%" PRIu64 ",\"ops\":{",
		iv->reset ? "true" : "false", d->bpf_misses);
	for (int op = 0; op < KT_OP_MAX; op++) {
		const struct kt_op_interval *o = &iv->op[op];

		fprintf(f, "%s\"%s\":{\"iops\":%.1f,\"bytes_per_sec\":%.0f,\"completed\":%" PRIu64
			",\"errors\":%" PRIu64 ",\"inflight\":%" PRId64 ",\"queued\":%" PRId64
			",\"kyber_throttled\":%" PRIu64 ",\"merged\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"stale\":%" PRIu64
			",\"expired\":%" PRIu64,
			op ? "," : "", kt_op_name[op], o->iops, o->bytes_per_sec, o->completed,
			o->errors, o->inflight, o->queued, o->throttled, o->merged, o->dropped, o->stale, o->expired);
		for (int k = 0; k < KT_LAT_MAX; k++) {
			fprintf(f, ",\"%s\":", kt_lat_name[k]);
			json_latencies(f, &o->lat[k]);
		}
		fputc('}', f);
	}
	fputs("},\"kyber_depth\":{", f);
	for (int op = 0; op < KT_OP_MAX; op++) {
		fprintf(f, "%s\"%s\":", op ? "," : "", kt_op_name[op]);
		if (iv->kyber_depth[op])
			fprintf(f, "%u", iv->kyber_depth[op]);
		else
			fputs("null", f);
	}
	fputc('}', f);
	if (d->tuner) {
		const struct report_tuner *t = d->tuner;

		fputs(",\"tuner\":{\"goal\":", f);
		json_string(f, t->goal);
		fputs(",\"state\":", f);
		json_string(f, t->state);
		fputs(",\"reason\":", f);
		json_string(f, t->reason);
		if (t->metric_ns)
			fprintf(f, ",\"metric_ns\":%" PRIu64, t->metric_ns);
		else
			fputs(",\"metric_ns\":null", f);
		fprintf(f, ",\"goal_met\":%s,\"changed\":%s}",
			t->goal_met < 0 ? "null" : t->goal_met ? "true" : "false",
			t->changed ? "true" : "false");
	}
	fputs("}\n", f);
}
