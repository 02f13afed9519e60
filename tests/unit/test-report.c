/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: snapshots -> intervals (daemon/interval.c) -> text/JSON (daemon/report.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl-sample.h"
#include "hist.h"
#include "interval.h"
#include "parse-util.h"
#include "json-line.h"
#include "report.h"

/* n samples of ns in the (op, span) histogram of a snapshot or of one
 * CPU's kt_dev_stats: both hold counters and 32-bit histograms alike. */
#define ADD(s, opc, k, ns, n) do {						\
		int h_ = kt_hist_of(opc, k);					\
		assert_true(h_ >= 0);						\
		(s)->hist[h_][kt_hist_index(ns)] += (n);			\
		(s)->op[opc].lat_sum_ns[k] += (uint64_t)(ns) * (n);		\
	} while (0)

static struct kt_snapshot *snap(void)
{
	struct kt_snapshot *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	return s;
}

static void test_sum_cpus(void **state)
{
	struct kt_dev_stats *cpu = calloc(2, sizeof(*cpu));
	struct kt_snapshot *sum = snap(), *zero = snap();
	struct kt_interval *iv = calloc(1, sizeof(*iv));

	assert_non_null(cpu);
	assert_non_null(iv);
	cpu[0].op[KT_OP_READ].completed = 3;
	cpu[0].op[KT_OP_READ].inflight = 5;	/* issued here ... */
	cpu[1].op[KT_OP_READ].inflight = -4;	/* ... completed there */
	ADD(&cpu[0], KT_OP_READ, KT_LAT_TOTAL, 100000, 2);
	ADD(&cpu[1], KT_OP_READ, KT_LAT_TOTAL, 100000, 1);
	dev_stats_sum_cpus(sum, cpu, 2, sizeof(*cpu));
	assert_int_equal(sum->op[KT_OP_READ].completed, 3);
	assert_int_equal(sum->op[KT_OP_READ].inflight, 1);
	cpu[0].op[KT_OP_WRITE].unsampled = 7;
	cpu[1].op[KT_OP_WRITE].unsampled = 8;
	dev_stats_sum_cpus(sum, cpu, 2, sizeof(*cpu));
	assert_int_equal(sum->op[KT_OP_WRITE].unsampled, 15);
	assert_int_equal(sum->hist[KT_HIST_READ_QUEUE + KT_LAT_TOTAL][kt_hist_index(100000)], 3);

	/* 32-bit buckets wrap: the interval is the difference modulo 2^32. */
	ADD(zero, KT_OP_READ, KT_LAT_TOTAL, 100000, UINT32_MAX - 1);
	sum->time_ns = 1000;
	sum->op[KT_OP_READ].completed = 3;
	sum->op[KT_OP_READ].lat_sum_ns[KT_LAT_TOTAL] = zero->op[KT_OP_READ].lat_sum_ns[KT_LAT_TOTAL] + 300000;
	assert_int_equal(interval_compute(zero, sum, iv), 0);
	assert_int_equal(iv->op[KT_OP_READ].lat[KT_LAT_TOTAL].count, 5);
	/* Discards keep no device histogram: reported empty, not zero. */
	assert_int_equal(iv->op[KT_OP_DISCARD].lat[KT_LAT_DEVICE].count, 0);
	free(cpu);
	free(sum);
	free(zero);
	free(iv);
}

/* The app span: the reads' totals, with the moved ones in their app span's
 * bucket (a move out of a bucket wraps modulo 2^32), and the moved reads'
 * part of the sum on top of the total's. The controller judges the goal
 * on it. */
static void test_app_span(void **state)
{
	struct kt_snapshot *a = snap(), *b = snap();
	struct kt_interval *iv = calloc(1, sizeof(*iv));
	struct kt_app_moves none = {}, moves = {};
	struct ctl_sample s;

	assert_non_null(iv);
	snapshot_app_span(a, &none);
	b->time_ns = 1000000000;
	b->op[KT_OP_READ].completed = 100;
	ADD(b, KT_OP_READ, KT_LAT_TOTAL, 50000, 100);
	/* 10 of them were waited for 150 us more: 200 us as their task saw it. */
	moves.moves[kt_hist_index(50000)] = (uint32_t)-10;
	moves.moves[kt_hist_index(200000)] = 10;
	b->op[KT_OP_READ].lat_sum_ns[KT_LAT_APP] = 10 * 150000ull;
	snapshot_app_span(b, &moves);
	assert_int_equal(b->hist[KT_HIST_READ_APP][kt_hist_index(50000)], 90);
	assert_int_equal(b->hist[KT_HIST_READ_APP][kt_hist_index(200000)], 10);
	assert_int_equal(b->op[KT_OP_READ].lat_sum_ns[KT_LAT_APP], 100 * 50000ull + 10 * 150000ull);
	assert_int_equal(interval_compute(a, b, iv), 0);
	assert_int_equal(iv->op[KT_OP_READ].lat[KT_LAT_APP].count, 100);
	assert_true(iv->op[KT_OP_READ].lat[KT_LAT_APP].mean_ns > 64000 && iv->op[KT_OP_READ].lat[KT_LAT_APP].mean_ns < 66000);
	assert_true(iv->op[KT_OP_READ].lat[KT_LAT_APP].pct[KT_P99] > 190000);
	assert_true(iv->op[KT_OP_READ].lat[KT_LAT_TOTAL].pct[KT_P99] < 52000);
	ctl_sample_from_interval(iv, &s);
	assert_ptr_equal(s.read_hist, iv->op[KT_OP_READ].hist[KT_LAT_APP]);
	assert_true(s.read.total_p99_ns < 52000);	/* the block layer's, for the rest of the law */
	free(a);
	free(b);
	free(iv);
}

/* The controller's sample: latencies where requests were timed; an op whose
 * completions were all left untimed counts as idle. */
static void test_ctl_sample(void **state)
{
	struct kt_snapshot *a = snap(), *b = snap();
	struct kt_interval *iv = calloc(1, sizeof(*iv));
	struct ctl_sample s;

	assert_non_null(iv);
	b->time_ns = 1000000000;
	ADD(b, KT_OP_READ, KT_LAT_TOTAL, 200000, 100);
	b->op[KT_OP_READ].completed = 1600;
	b->op[KT_OP_READ].unsampled = 1500;
	b->op[KT_OP_WRITE].completed = 12;
	b->op[KT_OP_WRITE].unsampled = 12;
	assert_int_equal(interval_compute(a, b, iv), 0);
	ctl_sample_from_interval(iv, &s);
	assert_int_equal(s.read.completed, 1600);
	assert_true(s.read.iops > 1599 && s.read.iops < 1601);
	assert_true(s.read.total_p99_ns > 190000 && s.read.total_p99_ns < 210000);
	assert_int_equal(s.write.completed, 0);
	assert_true(s.write.iops > 11 && s.write.iops < 13);
	free(a);
	free(b);
	free(iv);
}

/* Sampling keeps at least 20,000 timed completions a second, at most 1 in 16. */
static void test_sample_shift(void **state)
{
	assert_int_equal(interval_sample_shift(0), 0);
	assert_int_equal(interval_sample_shift(3000), 0);
	assert_int_equal(interval_sample_shift(39999), 0);
	assert_int_equal(interval_sample_shift(40000), 1);
	assert_int_equal(interval_sample_shift(300000), 3);	/* 37,500 timed */
	assert_int_equal(interval_sample_shift(319999), 3);
	assert_int_equal(interval_sample_shift(320000), 4);
	assert_int_equal(interval_sample_shift(5e6), 4);
	for (double r = 1000; r < 1e7; r *= 1.1) {
		unsigned k = interval_sample_shift(r);

		assert_true(k == 0 || r / (1u << k) >= 20000);
		assert_true(k == 4 || r / (2u << k) < 20000);
	}
}

static void test_interval(void **state)
{
	struct kt_snapshot *a = snap(), *b = snap();
	struct kt_interval *iv = calloc(1, sizeof(*iv));

	assert_non_null(iv);
	a->time_ns = 1000000000;
	b->time_ns = 3000000000;	/* 2 s */
	ADD(a, KT_OP_READ, KT_LAT_DEVICE, 50000, 10);
	b->op[KT_OP_READ] = a->op[KT_OP_READ];
	memcpy(b->hist, a->hist, sizeof(b->hist));
	ADD(b, KT_OP_READ, KT_LAT_DEVICE, 100000, 99);
	ADD(b, KT_OP_READ, KT_LAT_DEVICE, 10000000, 1);
	a->op[KT_OP_READ].completed = 10;
	b->op[KT_OP_READ].completed = 110;
	b->op[KT_OP_READ].bytes = 100 * 4096;
	b->op[KT_OP_READ].inflight = 1;
	a->op[KT_OP_READ].unsampled = 40;
	b->op[KT_OP_READ].unsampled = 340;
	b->kyber.depth[KT_OP_WRITE] = 32;
	b->kyber.adjust_count[KT_OP_WRITE] = 3;

	assert_int_equal(interval_compute(a, b, iv), 0);
	assert_false(iv->reset);
	assert_int_equal(iv->duration_ns, 2000000000);
	assert_true(iv->op[KT_OP_READ].iops > 49.9 && iv->op[KT_OP_READ].iops < 50.1);
	assert_int_equal(iv->op[KT_OP_READ].lat[KT_LAT_DEVICE].count, 100);
	/* The 10 samples before the interval are not in it. */
	assert_true(iv->op[KT_OP_READ].lat[KT_LAT_DEVICE].pct[KT_P50] > 98000);
	assert_true(iv->op[KT_OP_READ].lat[KT_LAT_DEVICE].pct[KT_P999] > 9800000);
	assert_int_equal(iv->op[KT_OP_READ].inflight, 1);
	assert_int_equal(iv->op[KT_OP_READ].unsampled, 300);
	assert_int_equal(iv->kyber_depth[KT_OP_WRITE], 32);
	assert_int_equal(iv->kyber_adjusts[KT_OP_WRITE], 3);

	/* Backwards: a reset, reported as such with no data. */
	assert_int_equal(interval_compute(b, a, iv), -EINVAL);
	a->time_ns = 4000000000;
	assert_int_equal(interval_compute(b, a, iv), 0);
	assert_true(iv->reset);
	assert_int_equal(iv->op[KT_OP_READ].completed, 0);
	free(a);
	free(b);
	free(iv);
}

static void test_lost_completions(void **state)
{
	struct kt_interval *iv = calloc(1, sizeof(*iv));

	assert_non_null(iv);
	/* Idle with nothing pending: nothing to do. */
	assert_false(interval_lost_completions(iv, 0));
	/* Idle, one request on our books, none in the kernel: lost. */
	iv->op[KT_OP_WRITE].inflight = 1;
	assert_true(interval_lost_completions(iv, 0));
	/* The kernel still has it: a slow request, not a lost one. */
	assert_false(interval_lost_completions(iv, 1));
	/* Any activity in the interval: not idle, wait. */
	iv->op[KT_OP_READ].completed = 1;
	assert_false(interval_lost_completions(iv, 0));
	iv->op[KT_OP_READ].completed = 0;
	iv->op[KT_OP_OTHER].issued = 1;
	assert_false(interval_lost_completions(iv, 0));
	iv->op[KT_OP_OTHER].issued = 0;
	iv->reset = true;
	assert_false(interval_lost_completions(iv, 0));
	free(iv);
}

static char *render(bool json, const struct report_device *d)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	if (json)
		assert_int_equal(report_json(f, d), 0);
	else
		report_text(f, d);
	fclose(f);
	return buf;
}

/* The member at a dotted path ("ops.read.iops"), which must exist. */
static json_object *member_at(json_object *o, const char *path)
{
	char buf[128], *save = NULL;

	assert_true(strlen(path) < sizeof(buf));
	strcpy(buf, path);
	for (char *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save))
		assert_true(json_object_object_get_ex(o, k, &o));
	return o;
}

static void assert_member_type(json_object *o, const char *path, enum json_type type)
{
	assert_int_equal(json_object_get_type(member_at(o, path)), type);
}

/* debugfs's live depth is the truth; Kyber's report and the in-flight count
 * stand in, in that order, and a report that differs is called stale. */
static void test_kyber_depth(void **state)
{
	struct kt_interval iv = {};
	bool stale;

	assert_int_equal(interval_kyber_depth(&iv, KT_OP_WRITE, -1, &stale), 0);
	assert_false(stale);
	iv.op[KT_OP_WRITE].queued = 5;
	iv.op[KT_OP_WRITE].inflight = 12;
	assert_int_equal(interval_kyber_depth(&iv, KT_OP_WRITE, -1, &stale), 12);
	iv.kyber_depth[KT_OP_WRITE] = 16;
	assert_int_equal(interval_kyber_depth(&iv, KT_OP_WRITE, -1, &stale), 16);
	assert_false(stale);
	assert_int_equal(interval_kyber_depth(&iv, KT_OP_WRITE, 16, &stale), 16);
	assert_false(stale);
	/* Kyber restarted: the live depth is back at the cap, the report is not. */
	assert_int_equal(interval_kyber_depth(&iv, KT_OP_WRITE, 128, &stale), 128);
	assert_true(stale);
	/* Nothing waiting: the in-flight count says nothing about tokens. */
	iv = (struct kt_interval){};
	iv.op[KT_OP_READ].inflight = 3;
	assert_int_equal(interval_kyber_depth(&iv, KT_OP_READ, -1, &stale), 0);
}

static void test_report(void **state)
{
	struct kt_snapshot *a = snap(), *b = snap();
	struct kt_interval *iv = calloc(1, sizeof(*iv));
	struct report_device d = {
		.name = "loop\"7", .scheduler = "kyber", .has_targets = true,
		.targets = { 2000000, 10000000 }, .iv = iv, .realtime_ns = 0,
	};
	const struct report_tuner tuner = {
		.goal = "read-p99=2ms", .state = "tracking", .reason = "a/b\n\x01", .goal_met = -1,
		.changed = true, .kyber_cpu_per_io_ns = 1540,
	};
	json_object *o;
	char *t, dur[DURATION_BUF_MAX], dev_p50[DURATION_BUF_MAX + 8];

	assert_non_null(iv);
	/* A percentile is its bucket's midpoint, whatever the bucket width. */
	snprintf(dev_p50, sizeof(dev_p50), "dev=%s/",
		 format_duration(dur, sizeof(dur), hist_bucket_mid(kt_hist_index(95000))));
	b->time_ns = 1000000000;
	ADD(b, KT_OP_READ, KT_LAT_DEVICE, 95000, 100);
	ADD(b, KT_OP_READ, KT_LAT_TOTAL, 120000, 100);
	b->op[KT_OP_READ].completed = 9100;
	b->kyber.depth[KT_OP_READ] = 256;
	assert_int_equal(interval_compute(a, b, iv), 0);

	t = render(false, &d);
	assert_non_null(strstr(t, "kyber[2.00ms/10.0ms]"));
	assert_non_null(strstr(t, "read 9.10k IOPS"));
	assert_non_null(strstr(t, dev_p50));
	assert_non_null(strstr(t, "write 0 IOPS dev=- tot=-"));
	assert_null(strstr(t, "discard"));	/* idle: not shown */
	assert_non_null(strstr(t, "depth r=256 w=?"));
	free(t);

	t = render(true, &d);
	assert_non_null(strstr(t, "\"device\":\"loop\\\"7\""));
	assert_non_null(strstr(t, "\"read_target_ns\":2000000"));
	assert_non_null(strstr(t, "\"write\":{\"iops\":0.0"));
	assert_non_null(strstr(t, "\"p99_ns\":null"));
	assert_non_null(strstr(t, "\"kyber_depth\":{\"read\":256,\"write\":null"));
	assert_true(t[strlen(t) - 1] == '\n');
	/* Values and types, as the Python tests read them. */
	o = parse_json_line(t);
	assert_string_equal(json_object_get_string(member_at(o, "device")), "loop\"7");
	assert_member_type(o, "reset", json_type_boolean);
	assert_member_type(o, "ops.read.iops", json_type_double);		/* "%.1f" */
	assert_true(json_object_get_double(member_at(o, "ops.read.iops")) == 9100.0);
	assert_member_type(o, "ops.read.bytes_per_sec", json_type_int);	/* "%.0f" */
	assert_int_equal(json_object_get_int64(member_at(o, "ops.read.device.count")), 100);
	assert_member_type(o, "ops.read.device.mean_ns", json_type_int);
	assert_member_type(o, "ops.write.total.p99_ns", json_type_null);
	assert_member_type(o, "ops.write.total.mean_ns", json_type_null);
	assert_member_type(o, "kyber_depth.other", json_type_null);
	assert_false(json_object_object_get_ex(o, "tuner", NULL));
	json_object_put(o);
	free(t);

	d.has_targets = false;
	d.scheduler = NULL;
	d.tuner = &tuner;
	t = render(true, &d);
	assert_non_null(strstr(t, "\"scheduler\":null,\"read_target_ns\":null"));
	assert_non_null(strstr(t, "\"tuner\":{\"goal\":\"read-p99=2ms\",\"state\":\"tracking\","));
	assert_non_null(strstr(t, "\"metric_ns\":null,\"goal_met\":null,\"changed\":true,"
			       "\"original_cpu_per_io_ns\":null,\"kyber_cpu_per_io_ns\":1540}}\n"));
	o = parse_json_line(t);
	assert_member_type(o, "write_target_ns", json_type_null);
	assert_string_equal(json_object_get_string(member_at(o, "tuner.reason")), "a/b\n\x01");
	json_object_put(o);
	free(t);
	free(a);
	free(b);
	free(iv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sum_cpus),
		cmocka_unit_test(test_app_span),
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_sample_shift),
		cmocka_unit_test(test_ctl_sample),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_lost_completions),
		cmocka_unit_test(test_kyber_depth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
