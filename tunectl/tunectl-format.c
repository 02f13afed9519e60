/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "hist.h"
#include "macro.h"
#include "parse-util.h"
#include "tunectl-format.h"

const char *const tf_pct_name[_TF_PCT_MAX] = {
	[TF_P50] = "P50", [TF_P90] = "P90", [TF_P99] = "P99", [TF_P999] = "P99.9",
};

static const double tf_pct_value[_TF_PCT_MAX] = {
	[TF_P50] = 50, [TF_P90] = 90, [TF_P99] = 99, [TF_P999] = 99.9,
};

/* Text for a terminal: control characters (from a corrupt recording, say)
 * must not reach it. */
static void put_text(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ?: ""); *p; p++)
		fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
}

/* A duration, "-" for 0 (none). */
static const char *dur(char *buf, size_t n, uint64_t ns)
{
	if (!ns) {
		snprintf(buf, n, "-");
		return buf;
	}
	return format_duration(buf, n, ns);
}

/* "P99.9" from "read-p99.9=1ms mode=latency"; "P99" if there is none. */
static const char *goal_pct_label(const char *goal, char *buf, size_t n)
{
	const char *p = goal ? strstr(goal, "read-p") : NULL;
	size_t l;

	if (!p) {
		snprintf(buf, n, "P99");
		return buf;
	}
	p += strlen("read-p");
	l = strcspn(p, "= \t,");
	snprintf(buf, n, "P%.*s", (int)MIN(l, (size_t)8), p);
	return buf;
}

static void op_line(FILE *f, const char *label, double iops, uint64_t p50, uint64_t p99, uint32_t depth)
{
	char a[DURATION_BUF_MAX], b[DURATION_BUF_MAX], c[16];

	fprintf(f, "%12s: %s IOPS, P50 %s, P99 %s", label, format_count_si(c, sizeof(c), iops),
		dur(a, sizeof(a), p50), dur(b, sizeof(b), p99));
	if (depth)
		fprintf(f, ", depth %" PRIu32, depth);
	fputc('\n', f);
}

/* The block layer's CPU time per I/O under each scheduler, where sampled. */
static void cpu_per_io_line(FILE *f, const struct tf_status *s)
{
	char a[DURATION_BUF_MAX], b[DURATION_BUF_MAX];

	if (!s->original_cpu_per_io_ns && !s->kyber_cpu_per_io_ns)
		return;
	fprintf(f, "\n%12s: ", "CPU per I/O");
	if (s->original_cpu_per_io_ns) {
		fprintf(f, "%s on ", dur(a, sizeof(a), s->original_cpu_per_io_ns));
		put_text(f, s->original_scheduler && *s->original_scheduler ? s->original_scheduler : "the original");
	}
	if (s->kyber_cpu_per_io_ns)
		fprintf(f, "%s%s on kyber", s->original_cpu_per_io_ns ? ", " : "",
			dur(b, sizeof(b), s->kyber_cpu_per_io_ns));
	fputs(" (block layer, sampled)", f);
}

/* What status says of a goal's source: where to change it. */
static const char *goal_source_label(const char *source)
{
	if (strcmp(source, "runtime") == 0)
		return "set at run time";
	if (strcmp(source, "config") == 0)
		return "from the configuration";
	if (strcmp(source, "command-line") == 0)
		return "from the command line";
	return source;
}

void tf_status_print(FILE *f, const struct tf_status *s, bool utf8)
{
	char a[DURATION_BUF_MAX], b[DURATION_BUF_MAX], pct[16];

	fputs(utf8 ? "\u25cf " : "* ", f);
	put_text(f, s->name);
	if (s->id && *s->id && (!s->name || strcmp(s->id, s->name) != 0)) {
		fputs(" (", f);
		put_text(f, s->id);
		fputc(')', f);
	}
	fprintf(f, "\n%12s: ", "State");
	put_text(f, s->state);
	if (s->reason && *s->reason) {
		fputs(" (", f);
		put_text(f, s->reason);
		fputc(')', f);
	}
	fprintf(f, "\n%12s: ", "Goal");
	put_text(f, s->goal && *s->goal ? s->goal : "none (tuned for its cgroups' weights: kyber-tunectl weights)");
	if (s->goal && *s->goal && s->goal_source && *s->goal_source) {
		fputs(" (", f);
		put_text(f, goal_source_label(s->goal_source));
		fputc(')', f);
	}
	if (s->goal_metric_ns)
		fprintf(f, "; read %s now %s: %s", goal_pct_label(s->goal, pct, sizeof(pct)),
			format_duration(a, sizeof(a), s->goal_metric_ns), s->goal_met ? "met" : "missed");
	fprintf(f, "\n%12s: ", "Scheduler");
	put_text(f, s->scheduler);
	if (s->original_scheduler && *s->original_scheduler) {
		fputs(" (originally ", f);
		put_text(f, s->original_scheduler);
		if (s->original_read_target_ns || s->original_write_target_ns)
			fprintf(f, ", targets %s/%s", dur(a, sizeof(a), s->original_read_target_ns),
				dur(b, sizeof(b), s->original_write_target_ns));
		fputc(')', f);
	}
	if (s->scheduler_reason && *s->scheduler_reason) {
		fprintf(f, "\n%12s: ", "");
		put_text(f, s->scheduler_reason);
		if (s->scheduler_switches)
			fprintf(f, " (%" PRIu64 " switch%s)", s->scheduler_switches,
				s->scheduler_switches == 1 ? "" : "es");
	}
	cpu_per_io_line(f, s);
	fprintf(f, "\n%12s: read %s, write %s (%" PRIu64 " change%s)\n", "Targets",
		dur(a, sizeof(a), s->read_target_ns), dur(b, sizeof(b), s->write_target_ns), s->changes,
		s->changes == 1 ? "" : "s");
	op_line(f, "Read", s->read_iops, s->read_p50_ns, s->read_p99_ns, s->read_depth);
	op_line(f, "Write", s->write_iops, s->write_p50_ns, s->write_p99_ns, s->write_depth);
	fprintf(f, "%12s: %s\n", "Interval", s->interval_ns ? format_duration(a, sizeof(a), s->interval_ns) :
		"none yet");
}

int tf_status_json(FILE *f, const struct tf_status *s, uint64_t time_ns)
{
	struct tf_json j;

	tf_json_begin(&j, f);
	if (time_ns)
		tf_json_u64(&j, "time_ns", time_ns);
	tf_json_str(&j, "device", s->name);
	tf_json_str(&j, "id", s->id);
	tf_json_str(&j, "scheduler", s->scheduler);
	tf_json_str(&j, "scheduler_reason", s->scheduler_reason);
	tf_json_u64(&j, "scheduler_switches", s->scheduler_switches);
	if (s->original_cpu_per_io_ns)
		tf_json_u64(&j, "original_cpu_per_io_ns", s->original_cpu_per_io_ns);
	else
		tf_json_null(&j, "original_cpu_per_io_ns");
	if (s->kyber_cpu_per_io_ns)
		tf_json_u64(&j, "kyber_cpu_per_io_ns", s->kyber_cpu_per_io_ns);
	else
		tf_json_null(&j, "kyber_cpu_per_io_ns");
	tf_json_str(&j, "goal", s->goal);
	tf_json_str(&j, "goal_source", s->goal_source);
	tf_json_str(&j, "state", s->state);
	tf_json_str(&j, "reason", s->reason);
	tf_json_u64(&j, "read_target_ns", s->read_target_ns);
	tf_json_u64(&j, "write_target_ns", s->write_target_ns);
	tf_json_str(&j, "original_scheduler", s->original_scheduler);
	tf_json_u64(&j, "original_read_target_ns", s->original_read_target_ns);
	tf_json_u64(&j, "original_write_target_ns", s->original_write_target_ns);
	tf_json_u64(&j, "read_p50_ns", s->read_p50_ns);
	tf_json_u64(&j, "read_p99_ns", s->read_p99_ns);
	tf_json_u64(&j, "write_p50_ns", s->write_p50_ns);
	tf_json_u64(&j, "write_p99_ns", s->write_p99_ns);
	tf_json_dbl(&j, "read_iops", s->read_iops);
	tf_json_dbl(&j, "write_iops", s->write_iops);
	tf_json_u64(&j, "read_depth", s->read_depth);
	tf_json_u64(&j, "write_depth", s->write_depth);
	tf_json_u64(&j, "goal_metric_ns", s->goal_metric_ns);
	/* Unknown until the metric is. */
	if (s->goal_metric_ns)
		tf_json_bool(&j, "goal_met", s->goal_met);
	else
		tf_json_null(&j, "goal_met");
	tf_json_u64(&j, "changes", s->changes);
	tf_json_u64(&j, "interval_ns", s->interval_ns);
	return tf_json_end(&j);
}

void tf_list_header(FILE *f)
{
	fprintf(f, "%-12s %-11s %-34s %9s %9s %s\n", "DEVICE", "STATE", "GOAL", "READ P99", "WRITE IOPS",
		"TARGETS");
}

void tf_list_row(FILE *f, const struct tf_status *s)
{
	char a[DURATION_BUF_MAX], b[DURATION_BUF_MAX], c[DURATION_BUF_MAX], w[16];

	/* Names and states are plain ASCII; %-Ns keeps the columns. */
	fprintf(f, "%-12s %-11s %-34s %9s %9s %s/%s\n", s->name ?: "", s->state ?: "", s->goal ?: "",
		dur(a, sizeof(a), s->read_p99_ns), format_count_si(w, sizeof(w), s->write_iops),
		dur(b, sizeof(b), s->read_target_ns), dur(c, sizeof(c), s->write_target_ns));
}

void tf_waiting_print(FILE *f, const char *device, const char *goal, const char *source, bool utf8)
{
	fputs(utf8 ? "\u25cb " : "o ", f);
	put_text(f, device);
	fprintf(f, "\n%12s: waiting for the disk (not here, or no medium); the goal applies when it appears",
		"State");
	fprintf(f, "\n%12s: ", "Goal");
	put_text(f, goal);
	fputs(" (", f);
	put_text(f, goal_source_label(source));
	fputs(")\n", f);
}

void tf_waiting_row(FILE *f, const char *device, const char *goal)
{
	fprintf(f, "%-12s %-11s %-34s %9s %9s %s\n", device, "waiting", goal, "-", "-", "-");
}

int tf_waiting_json(FILE *f, const char *device, const char *goal, const char *source)
{
	struct tf_json j;

	tf_json_begin(&j, f);
	tf_json_str(&j, "device", device);
	tf_json_str(&j, "state", "waiting");
	tf_json_str(&j, "goal", goal);
	tf_json_str(&j, "goal_source", source);
	return tf_json_end(&j);
}

char *tf_format_time(char *buf, size_t n, uint64_t time_ns, bool with_date)
{
	time_t t = (time_t)(time_ns / NSEC_PER_SEC);
	struct tm tm;
	size_t l;

	if (!time_ns || !localtime_r(&t, &tm)) {
		snprintf(buf, n, "-");
		return buf;
	}
	l = strftime(buf, n, with_date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
	if (with_date && l)
		snprintf(buf + l, n - l, ".%03u", (unsigned)(time_ns % NSEC_PER_SEC / NSEC_PER_MSEC));
	return buf;
}

void tf_interval_line(FILE *f, const struct tf_interval *iv, bool with_date)
{
	char t[48], a[DURATION_BUF_MAX], b[DURATION_BUF_MAX], c[DURATION_BUF_MAX], d[DURATION_BUF_MAX];
	char ri[16], wi[16];

	fprintf(f, "%s ", tf_format_time(t, sizeof(t), iv->time_ns, with_date));
	fprintf(f, "%-8s %-11s ", iv->device ?: "?", iv->state ?: "?");
	fprintf(f, "read %6s IOPS P99 %7s %-7s write %6s IOPS P99 %7s  targets %s/%s%s",
		format_count_si(ri, sizeof(ri), iv->read.iops), dur(a, sizeof(a), iv->read.p99_ns),
		iv->goal_met < 0 ? "" : iv->goal_met ? "(met)" : "(miss)",
		format_count_si(wi, sizeof(wi), iv->write.iops), dur(b, sizeof(b), iv->write.p99_ns),
		dur(c, sizeof(c), iv->read_target_ns), dur(d, sizeof(d), iv->write_target_ns),
		iv->changed ? "*" : "");
	if (iv->read.depth || iv->write.depth)
		fprintf(f, "  depth %" PRIu32 "/%" PRIu32, iv->read.depth, iv->write.depth);
	if (iv->reason && *iv->reason) {
		fputs("  ", f);
		put_text(f, iv->reason);
	}
	fputc('\n', f);
}

static void op_json(struct tf_json *j, const char *key, const struct tf_op *o)
{
	tf_json_object(j, key);
	tf_json_dbl(j, "iops", o->iops);
	tf_json_u64(j, "p50_ns", o->p50_ns);
	tf_json_u64(j, "p90_ns", o->p90_ns);
	tf_json_u64(j, "p99_ns", o->p99_ns);
	tf_json_u64(j, "p999_ns", o->p999_ns);
	tf_json_dbl(j, "mean_ns", o->mean_ns);
	tf_json_u64(j, "device_p90_ns", o->device_p90_ns);
	tf_json_u64(j, "device_p99_ns", o->device_p99_ns);
	tf_json_u64(j, "depth", o->depth);
	tf_json_u64(j, "completed", o->completed);
	tf_json_object_end(j);
}

int tf_interval_json(FILE *f, const struct tf_interval *iv)
{
	struct tf_json j;

	tf_json_begin(&j, f);
	tf_json_u64(&j, "time_ns", iv->time_ns);
	tf_json_str(&j, "device", iv->device);
	tf_json_u64(&j, "interval_ns", iv->interval_ns);
	tf_json_str(&j, "goal", iv->goal);
	tf_json_str(&j, "state", iv->state);
	tf_json_str(&j, "reason", iv->reason);
	tf_json_u64(&j, "read_target_ns", iv->read_target_ns);
	tf_json_u64(&j, "write_target_ns", iv->write_target_ns);
	tf_json_bool(&j, "changed", iv->changed);
	tf_json_u64(&j, "metric_ns", iv->metric_ns);
	if (iv->goal_met < 0)
		tf_json_null(&j, "goal_met");
	else
		tf_json_bool(&j, "goal_met", iv->goal_met);
	op_json(&j, "read", &iv->read);
	op_json(&j, "write", &iv->write);
	return tf_json_end(&j);
}

void tf_hist_build(const struct tf_bucket *b, size_t n, size_t max_rows, struct tf_hist *out)
{
	_cleanup_free_ __u64 *h = calloc(KT_HIST_BUCKETS, sizeof(__u64));
	uint32_t first = KT_HIST_BUCKETS, last = 0, span, rows;

	memset(out, 0, sizeof(*out));
	if (!h)
		return;
	for (size_t i = 0; i < n; i++) {
		uint32_t idx = kt_hist_index(b[i].lower_ns);

		h[idx] = b[i].count > UINT64_MAX - h[idx] ? UINT64_MAX : h[idx] + b[i].count;
	}
	for (uint32_t i = 0; i < KT_HIST_BUCKETS; i++) {
		if (!h[i])
			continue;
		out->total = h[i] > UINT64_MAX - out->total ? UINT64_MAX : out->total + h[i];
		first = MIN(first, i);
		last = i;
	}
	if (!out->total)
		return;
	for (int p = 0; p < _TF_PCT_MAX; p++)
		(void)hist_percentile(h, tf_pct_value[p], &out->pct_ns[p]);

	span = last - first + 1;
	rows = (uint32_t)MIN(MIN(max_rows, (size_t)TF_HIST_ROWS_MAX), (size_t)span);
	if (!rows)
		rows = 1;
	for (uint32_t r = 0; r < rows; r++) {
		struct tf_hist_row *row = &out->rows[r];
		uint32_t a = first + (uint32_t)((uint64_t)r * span / rows);
		uint32_t e = first + (uint32_t)((uint64_t)(r + 1) * span / rows);

		row->lo_ns = kt_hist_lower(a);
		row->hi_ns = r + 1 < rows ? kt_hist_lower(e) : kt_hist_lower(last) + kt_hist_width(last);
		for (uint32_t i = a; i < e; i++)
			row->count = h[i] > UINT64_MAX - row->count ? UINT64_MAX : row->count + h[i];
		for (int p = 0; p < _TF_PCT_MAX; p++) {
			uint32_t pi = kt_hist_index(out->pct_ns[p]);

			if (pi >= a && pi < e)
				row->marks |= 1u << p;
		}
	}
	out->n_rows = rows;
}

#define BAR_WIDTH 40

static void bar(FILE *f, uint64_t count, uint64_t max, bool utf8)
{
	/* Eighths of a cell in UTF-8, whole cells in ASCII; a non-empty row
	 * always shows something. */
	static const char *const eighths[8] = {
		"", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589",
	};
	unsigned res = utf8 ? 8 : 1;
	unsigned units = max ? (unsigned)((double)count / (double)max * BAR_WIDTH * res) : 0;
	unsigned cells;

	if (count && !units)
		units = 1;
	units = MIN(units, BAR_WIDTH * res);
	cells = units / res;
	for (unsigned i = 0; i < cells; i++)
		fputs(utf8 ? "\u2588" : "#", f);
	if (utf8 && units % res) {
		fputs(eighths[units % res], f);
		cells++;
	}
	for (unsigned i = cells; i < BAR_WIDTH; i++)
		fputc(' ', f);
}

void tf_hist_print(FILE *f, const char *device, const char *op, const struct tf_hist *h, bool utf8)
{
	char a[DURATION_BUF_MAX], b[DURATION_BUF_MAX];
	uint64_t max = 0;

	if (!h->total) {
		fprintf(f, "%s: no %ss in the last interval\n", device, op);
		return;
	}
	fprintf(f, "%s %s latency (insert to completion), last interval: %" PRIu64 " I/Os\n", device, op,
		h->total);
	for (int p = 0; p < _TF_PCT_MAX; p++)
		fprintf(f, "  %s %s", tf_pct_name[p], format_duration(a, sizeof(a), h->pct_ns[p]));
	fputs("\n\n", f);
	for (size_t r = 0; r < h->n_rows; r++)
		max = MAX(max, h->rows[r].count);
	for (size_t r = 0; r < h->n_rows; r++) {
		const struct tf_hist_row *row = &h->rows[r];
		bool first_mark = true;

		fprintf(f, "  %7s %s %7s %s", format_duration(a, sizeof(a), row->lo_ns), utf8 ? "\u2026" : "-",
			format_duration(b, sizeof(b), row->hi_ns), utf8 ? "\u2502" : "|");
		bar(f, row->count, max, utf8);
		fprintf(f, "%s %10" PRIu64, utf8 ? "\u2502" : "|", row->count);
		for (int p = 0; p < _TF_PCT_MAX; p++) {
			if (!(row->marks & (1u << p)))
				continue;
			fprintf(f, "%s%s", first_mark ? (utf8 ? "  \u25c0 " : "  <- ") : " ", tf_pct_name[p]);
			first_mark = false;
		}
		fputc('\n', f);
	}
}

int tf_hist_json(FILE *f, const char *device, const char *op, const struct tf_bucket *b, size_t n,
		 const struct tf_hist *h)
{
	static const char *const keys[_TF_PCT_MAX] = { "p50_ns", "p90_ns", "p99_ns", "p999_ns" };
	struct tf_json j;

	tf_json_begin(&j, f);
	tf_json_str(&j, "device", device);
	tf_json_str(&j, "op", op);
	tf_json_u64(&j, "count", h->total);
	for (int p = 0; p < _TF_PCT_MAX; p++) {
		if (h->total)
			tf_json_u64(&j, keys[p], h->pct_ns[p]);
		else
			tf_json_null(&j, keys[p]);
	}
	tf_json_array(&j, "buckets");
	for (size_t i = 0; i < n; i++) {
		tf_json_object(&j, NULL);
		tf_json_u64(&j, "lower_ns", b[i].lower_ns);
		tf_json_u64(&j, "count", b[i].count);
		tf_json_object_end(&j);
	}
	tf_json_array_end(&j);
	tf_json_array(&j, "rows");
	for (size_t r = 0; r < h->n_rows; r++) {
		tf_json_object(&j, NULL);
		tf_json_u64(&j, "lo_ns", h->rows[r].lo_ns);
		tf_json_u64(&j, "hi_ns", h->rows[r].hi_ns);
		tf_json_u64(&j, "count", h->rows[r].count);
		tf_json_array(&j, "marks");
		for (int p = 0; p < _TF_PCT_MAX; p++)
			if (h->rows[r].marks & (1u << p))
				tf_json_str(&j, NULL, tf_pct_name[p]);
		tf_json_array_end(&j);
		tf_json_object_end(&j);
	}
	tf_json_array_end(&j);
	return tf_json_end(&j);
}
