/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The text exposition format (Prometheus 0.0.4): each family's HELP and
 * TYPE once, then its samples, device by device. Seconds are printed from
 * whole nanoseconds as exact decimals, never through a double, so a
 * counter's text never goes down by rounding. Pure.
 */
#include <errno.h>
#include <inttypes.h>

#include "metrics.h"

/* As uint64_t, so that PRIu64 fits whatever they divide. */
#define NSEC_PER_SEC_U ((uint64_t)1000000000)
#define USEC_PER_SEC_U ((uint64_t)1000000)

/* The series an op has a histogram for: reads and writes all three spans,
 * the rest their total only (the observer's kt_hist_of()). */
static bool span_kept(int op, int span)
{
	return kt_hist_of((unsigned)op, (unsigned)span) >= 0;
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value, escaped as the format asks: backslash, quote, newline. */
static void label_value(FILE *f, const char *v)
{
	fputc('"', f);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*v, f);
	}
	fputc('"', f);
}

static void device_label(FILE *f, const char *name)
{
	fputs("{device=", f);
	label_value(f, name);
}

static void seconds(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%09" PRIu64, ns / NSEC_PER_SEC_U, ns % NSEC_PER_SEC_U);
}

/* An le bound: the shortest exact decimal ("0.000005", "2.5", "10"), as
 * Prometheus' own clients print them. */
static void le_seconds(FILE *f, uint64_t ns)
{
	char frac[16];
	int n;

	fprintf(f, "%" PRIu64, ns / NSEC_PER_SEC_U);
	if (!(ns % NSEC_PER_SEC_U))
		return;
	n = snprintf(frac, sizeof(frac), "%09" PRIu64, ns % NSEC_PER_SEC_U);
	while (n > 0 && frac[n - 1] == '0')
		frac[--n] = 0;
	fprintf(f, ".%s", frac);
}

static void histogram(FILE *f, const char *dev, int op, int span, const struct metrics_hist *h)
{
	static const char name[] = "kyber_tuned_latency_seconds";
	uint64_t cum = 0;

	for (unsigned k = 0; k <= METRICS_LE_COUNT; k++) {
		cum += h->bucket[k];
		fprintf(f, "%s_bucket", name);
		device_label(f, dev);
		fprintf(f, ",op=\"%s\",span=\"%s\",le=\"", kt_op_name[op], kt_lat_name[span]);
		if (k < METRICS_LE_COUNT)
			le_seconds(f, metrics_le_ns[k]);
		else
			fputs("+Inf", f);
		fprintf(f, "\"} %" PRIu64 "\n", cum);
	}
	fprintf(f, "%s_sum", name);
	device_label(f, dev);
	fprintf(f, ",op=\"%s\",span=\"%s\"} ", kt_op_name[op], kt_lat_name[span]);
	seconds(f, h->sum_ns);
	fprintf(f, "\n%s_count", name);
	device_label(f, dev);
	fprintf(f, ",op=\"%s\",span=\"%s\"} %" PRIu64 "\n", kt_op_name[op], kt_lat_name[span], cum);
}

/* A device's counts; all zero before the first interval. */
static const struct metrics_totals *totals_of(const struct metrics_device *d)
{
	static const struct metrics_totals none;

	return d->totals ?: &none;
}

/* A counter per device and op: completions, or bytes. */
static void op_counter_family(FILE *f, const struct metrics_input *in, const char *name, const char *help,
			      bool bytes)
{
	family(f, name, "counter", help);
	for (size_t i = 0; i < in->n_devs; i++)
		for (int op = 0; op < KT_OP_MAX; op++) {
			const struct metrics_op_totals *t = &totals_of(&in->devs[i])->op[op];

			fputs(name, f);
			device_label(f, in->devs[i].name);
			fprintf(f, ",op=\"%s\"} %" PRIu64 "\n", kt_op_name[op], bytes ? t->bytes : t->completed);
		}
}

static void io_families(FILE *f, const struct metrics_input *in)
{
	family(f, "kyber_tuned_latency_seconds", "histogram",
	       "Latency of completed requests since the device was first watched, by op and span "
	       "(queue: in the scheduler; device: issue to completion; total: both).");
	for (size_t i = 0; i < in->n_devs; i++)
		for (int op = 0; op < KT_OP_MAX; op++)
			for (int span = 0; span < KT_LAT_MAX; span++)
				if (span_kept(op, span))
					histogram(f, in->devs[i].name, op, span,
						  &totals_of(&in->devs[i])->op[op].hist[span]);

	op_counter_family(f, in, "kyber_tuned_io_completed_total",
			  "Requests completed since the device was first watched.", false);
	op_counter_family(f, in, "kyber_tuned_io_bytes_total",
			  "Bytes completed since the device was first watched.", true);
}

static void kyber_families(FILE *f, const struct metrics_input *in)
{
	family(f, "kyber_tuned_target_seconds", "gauge",
	       "Kyber's latency target (read_lat_nsec, write_lat_nsec) as kyber-tuned last wrote or read it; "
	       "absent while the device is not on Kyber.");
	for (size_t i = 0; i < in->n_devs; i++)
		for (int op = 0; in->devs[i].has_targets && op <= KT_OP_WRITE; op++) {
			fputs("kyber_tuned_target_seconds", f);
			device_label(f, in->devs[i].name);
			fprintf(f, ",op=\"%s\"} ", kt_op_name[op]);
			seconds(f, in->devs[i].target_ns[op]);
			fputc('\n', f);
		}

	family(f, "kyber_tuned_depth", "gauge",
	       "Kyber's token depth of a scheduling domain at the end of the last interval; absent when unknown.");
	for (size_t i = 0; i < in->n_devs; i++)
		for (int op = 0; op < KT_OP_MAX; op++) {
			if (!in->devs[i].depth[op])
				continue;
			fputs("kyber_tuned_depth", f);
			device_label(f, in->devs[i].name);
			fprintf(f, ",op=\"%s\"} %" PRIu32 "\n", kt_op_name[op], in->devs[i].depth[op]);
		}
}

static void tuner_gauges(FILE *f, const struct metrics_input *in)
{
	family(f, "kyber_tuned_state", "gauge", "The tuner's state: 1 for the current one, 0 for the others.");
	for (size_t i = 0; i < in->n_devs; i++)
		for (size_t s = 0; s < in->n_states; s++) {
			fputs("kyber_tuned_state", f);
			device_label(f, in->devs[i].name);
			fputs(",state=", f);
			label_value(f, in->state_names[s]);
			fprintf(f, "} %d\n", in->devs[i].state == s);
		}

	family(f, "kyber_tuned_goal_seconds", "gauge",
	       "The read latency goal, at its percentile; absent for a goal without one (mode=throughput).");
	for (size_t i = 0; i < in->n_devs; i++) {
		if (!in->devs[i].has_goal)
			continue;
		fputs("kyber_tuned_goal_seconds", f);
		device_label(f, in->devs[i].name);
		/* "percentile", not "quantile": that label is a summary's. %g
		 * prints the goal's own 99 or 99.9. */
		fprintf(f, ",op=\"read\",percentile=\"%g\"} ", in->devs[i].goal_pct);
		seconds(f, in->devs[i].goal_ns);
		fputc('\n', f);
	}

	family(f, "kyber_tuned_goal_met", "gauge",
	       "1 if the last interval met the goal, 0 if not; absent when unknown (no reads, paused).");
	for (size_t i = 0; i < in->n_devs; i++) {
		if (in->devs[i].goal_met < 0)
			continue;
		fputs("kyber_tuned_goal_met", f);
		device_label(f, in->devs[i].name);
		fprintf(f, "} %d\n", in->devs[i].goal_met > 0);
	}
}

static void tuner_counters(FILE *f, const struct metrics_input *in)
{
	family(f, "kyber_tuned_target_changes_total", "counter",
	       "Changes of Kyber's targets kyber-tuned made since it started tuning the device.");
	for (size_t i = 0; i < in->n_devs; i++) {
		fputs("kyber_tuned_target_changes_total", f);
		device_label(f, in->devs[i].name);
		fprintf(f, "} %" PRIu64 "\n", in->devs[i].target_changes);
	}

	family(f, "kyber_tuned_scheduler_switches_total", "counter",
	       "Scheduler switches (scheduler=auto) since kyber-tuned started tuning the device.");
	for (size_t i = 0; i < in->n_devs; i++) {
		fputs("kyber_tuned_scheduler_switches_total", f);
		device_label(f, in->devs[i].name);
		fprintf(f, "} %" PRIu64 "\n", in->devs[i].scheduler_switches);
	}
}

static void process_families(FILE *f, const struct metrics_input *in)
{
	family(f, "kyber_tuned_cpu_seconds_total", "counter", "CPU time kyber-tuned used, user and system.");
	fprintf(f, "kyber_tuned_cpu_seconds_total %" PRIu64 ".%06" PRIu64 "\n", in->cpu_usec / USEC_PER_SEC_U,
		in->cpu_usec % USEC_PER_SEC_U);
	family(f, "kyber_tuned_resident_memory_bytes", "gauge", "kyber-tuned's resident memory.");
	fprintf(f, "kyber_tuned_resident_memory_bytes %" PRIu64 "\n", in->rss_bytes);
}

int metrics_format(FILE *f, const struct metrics_input *in)
{
	io_families(f, in);
	kyber_families(f, in);
	tuner_gauges(f, in);
	tuner_counters(f, in);
	process_families(f, in);
	if (fflush(f) != 0 || ferror(f))
		return -EIO;
	return 0;
}
