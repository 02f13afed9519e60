/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: kyber-tunectl's output (tunectl/tunectl-format.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "hist.h"
#include "json-line.h"
#include "parse-util.h"
#include "tunectl-format.h"

/* Captures what a formatter writes. */
struct capture {
	FILE *f;
	char *buf;
	size_t len;
};

static FILE *cap_open(struct capture *c)
{
	memset(c, 0, sizeof(*c));
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
	return c->f;
}

static const char *cap_text(struct capture *c)
{
	fflush(c->f);
	return c->buf;
}

static void cap_close(struct capture *c)
{
	fclose(c->f);
	free(c->buf);
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* in, written as a member, reads back as the JSON literal want does. */
static void check_json_string(const char *in, const char *want)
{
	enum json_tokener_error err;
	json_object *line, *got, *expect;
	struct capture c;
	struct tf_json j;

	tf_json_begin(&j, cap_open(&c));
	tf_json_str(&j, "s", in);
	assert_int_equal(tf_json_end(&j), 0);
	line = parse_json_line(cap_text(&c));
	assert_true(json_object_object_get_ex(line, "s", &got));
	expect = json_tokener_parse_verbose(want, &err);
	assert_int_equal(err, json_tokener_success);
	if (!expect)
		assert_null(got);
	else
		assert_string_equal(json_object_get_string(got), json_object_get_string(expect));
	json_object_put(expect);
	json_object_put(line);
	cap_close(&c);
}

/* The member at a dotted path ("read.iops"), which must exist. */
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

static void test_json_escaping(void **state)
{
	check_json_string("plain", "\"plain\"");
	check_json_string("", "\"\"");
	check_json_string(NULL, "null");
	check_json_string("a\"b\\c", "\"a\\\"b\\\\c\"");
	check_json_string("l1\nl2\tx\r", "\"l1\\nl2\\tx\\r\"");
	check_json_string("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	/* Valid UTF-8 passes as is. */
	check_json_string("95\xc2\xb5s \xe2\x97\x8f \xf0\x9f\x98\x80", "\"95\xc2\xb5s \xe2\x97\x8f \xf0\x9f\x98\x80\"");
	/* Invalid UTF-8 becomes U+FFFD, byte by byte; never raw bytes. */
	check_json_string("a\x80z", "\"a\\ufffdz\"");
	check_json_string("\xc2", "\"\\ufffd\"");			/* truncated at the end */
	check_json_string("\xe2\x97", "\"\\ufffd\\ufffd\"");
	check_json_string("\xc0\x80", "\"\\ufffd\\ufffd\"");		/* overlong NUL */
	check_json_string("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");	/* surrogate */
	check_json_string("\xf5\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	check_json_string("\xff", "\"\\ufffd\"");
}

static void test_json_writer(void **state)
{
	struct capture c;
	struct tf_json j;

	tf_json_begin(&j, cap_open(&c));
	tf_json_str(&j, "a", "x");
	tf_json_u64(&j, "b", UINT64_MAX);
	tf_json_object(&j, "o");
	tf_json_bool(&j, "t", true);
	tf_json_null(&j, "n");
	tf_json_object_end(&j);
	tf_json_array(&j, "l");
	tf_json_u64(&j, NULL, 1);
	tf_json_object(&j, NULL);
	tf_json_dbl(&j, "d", 1.5);
	tf_json_object_end(&j);
	tf_json_array_end(&j);
	tf_json_dbl(&j, "nan", 0.0 / 0.0);
	tf_json_dbl(&j, "inf", 1.0 / 0.0);
	assert_int_equal(tf_json_end(&j), 0);
	assert_string_equal(cap_text(&c), "{\"a\":\"x\",\"b\":18446744073709551615,\"o\":{\"t\":true,\"n\":null},"
			    "\"l\":[1,{\"d\":1.5}],\"nan\":null,\"inf\":null}\n");
	cap_close(&c);
	/* Misuse is an error, and then nothing is written. */
	tf_json_begin(&j, cap_open(&c));
	tf_json_u64(&j, NULL, 1);
	assert_int_equal(tf_json_end(&j), -EINVAL);
	assert_string_equal(cap_text(&c), "");
	cap_close(&c);
	tf_json_begin(&j, cap_open(&c));
	for (int i = 0; i < TF_JSON_DEPTH_MAX; i++)
		tf_json_array(&j, i ? NULL : "deep");
	tf_json_str(&j, NULL, "x");
	assert_int_equal(tf_json_end(&j), -EINVAL);
	assert_string_equal(cap_text(&c), "");
	cap_close(&c);
}

static struct tf_status sample_status(void)
{
	return (struct tf_status) {
		.name = "nvme0n1", .id = "wwid:eui.0025", .scheduler = "kyber",
		.goal = "read-p99.9=2ms mode=latency", .state = "tracking",
		.reason = "protecting reads \"hard\"",
		.read_target_ns = 1200000, .write_target_ns = 8000000,
		.original_scheduler = "none",
		.read_p50_ns = 95200, .read_p99_ns = 1840000, .write_p50_ns = 1100000, .write_p99_ns = 8000000,
		.read_iops = 1200, .write_iops = 16000, .read_depth = 256, .write_depth = 12,
		.goal_metric_ns = 1840000, .goal_met = true, .changes = 3, .interval_ns = 1000000000,
		.original_cpu_per_io_ns = 840, .kyber_cpu_per_io_ns = 1540,
	};
}

static void test_status(void **state)
{
	struct tf_status s = sample_status();
	struct capture c;
	const char *t;

	tf_status_print(cap_open(&c), &s, false);
	t = cap_text(&c);
	assert_non_null(strstr(t, "* nvme0n1 (wwid:eui.0025)\n"));
	assert_non_null(strstr(t, "       State: tracking (protecting reads \"hard\")\n"));
	assert_non_null(strstr(t, "        Goal: read-p99.9=2ms mode=latency; read P99.9 now 1.84ms: met\n"));
	assert_non_null(strstr(t, "   Scheduler: kyber (originally none)\n"));
	assert_non_null(strstr(t, " CPU per I/O: 840ns on none, 1.54us on kyber (block layer, sampled)\n"));
	assert_non_null(strstr(t, "     Targets: read 1.20ms, write 8.00ms (3 changes)\n"));
	assert_non_null(strstr(t, "        Read: 1.20k IOPS, P50 95.2us, P99 1.84ms, depth 256\n"));
	assert_non_null(strstr(t, "       Write: 16.0k IOPS, P50 1.10ms, P99 8.00ms, depth 12\n"));
	assert_non_null(strstr(t, "    Interval: 1.00s\n"));
	cap_close(&c);

	/* Unknowns: no metric, no samples, Kyber originally with its targets. */
	s.goal_metric_ns = 0;
	s.read_p50_ns = s.read_p99_ns = 0;
	s.read_depth = 0;
	s.original_scheduler = "kyber";
	s.original_read_target_ns = 2000000;
	s.original_write_target_ns = 10000000;
	s.interval_ns = 0;
	s.original_cpu_per_io_ns = 0;
	s.reason = "bad\x1b[2Jterminal";
	s.changes = 1;
	tf_status_print(cap_open(&c), &s, true);
	t = cap_text(&c);
	assert_non_null(strstr(t, "\xe2\x97\x8f nvme0n1"));
	assert_non_null(strstr(t, "Goal: read-p99.9=2ms mode=latency\n"));
	assert_non_null(strstr(t, "(originally kyber, targets 2.00ms/10.0ms)"));
	assert_non_null(strstr(t, "(1 change)"));
	assert_non_null(strstr(t, "Read: 1.20k IOPS, P50 -, P99 -\n"));
	assert_non_null(strstr(t, "Interval: none yet"));
	assert_non_null(strstr(t, " CPU per I/O: 1.54us on kyber (block layer, sampled)\n"));
	/* No escape sequence reaches the terminal. */
	assert_null(strchr(t, '\x1b'));
	assert_non_null(strstr(t, "bad?[2Jterminal"));
	cap_close(&c);
}

static void test_status_json(void **state)
{
	struct tf_status s = sample_status();
	struct capture c;
	json_object *o;
	const char *t;

	tf_status_json(cap_open(&c), &s, 0);
	t = cap_text(&c);
	assert_true(starts_with(t, "{\"device\":\"nvme0n1\","));
	assert_non_null(strstr(t, "\"reason\":\"protecting reads \\\"hard\\\"\""));
	assert_non_null(strstr(t, "\"read_target_ns\":1200000,\"write_target_ns\":8000000"));
	assert_non_null(strstr(t, "\"read_p99_ns\":1840000"));
	assert_non_null(strstr(t, "\"read_iops\":1200,\"write_iops\":16000"));
	assert_non_null(strstr(t, "\"goal_met\":true"));
	assert_non_null(strstr(t, "\"original_cpu_per_io_ns\":840,\"kyber_cpu_per_io_ns\":1540"));
	assert_int_equal(t[strlen(t) - 1], '\n');
	assert_ptr_equal(strchr(t, '\n'), t + strlen(t) - 1);	/* one line */
	o = parse_json_line(t);
	assert_string_equal(json_object_get_string(member_at(o, "reason")), "protecting reads \"hard\"");
	assert_string_equal(json_object_get_string(member_at(o, "original_scheduler")), "none");
	assert_member_type(o, "read_iops", json_type_int);	/* "%.10g": 1200, as before */
	assert_int_equal(json_object_get_int64(member_at(o, "read_depth")), 256);
	assert_member_type(o, "goal_met", json_type_boolean);
	json_object_put(o);
	cap_close(&c);

	s.goal_metric_ns = 0;
	s.kyber_cpu_per_io_ns = 0;
	tf_status_json(cap_open(&c), &s, 1234);
	t = cap_text(&c);
	assert_true(starts_with(t, "{\"time_ns\":1234,"));
	assert_non_null(strstr(t, "\"goal_met\":null"));
	assert_non_null(strstr(t, "\"kyber_cpu_per_io_ns\":null"));
	o = parse_json_line(t);
	assert_member_type(o, "goal_met", json_type_null);
	json_object_put(o);
	cap_close(&c);
}

static void test_interval_line(void **state)
{
	struct tf_interval iv = {
		/* 2025-11-22 03:11:05.250 UTC */
		.time_ns = 1763781065250000000ULL, .device = "loop3", .state = "tracking",
		.goal = "read-p99=2ms", .reason = "reads \x01 fine", .read_target_ns = 1200000,
		.write_target_ns = 8000000, .changed = true, .metric_ns = 1500000, .goal_met = 1,
		.read = { .iops = 950, .p99_ns = 1500000, .depth = 64 },
		.write = { .iops = 16400, .p99_ns = 20000000, .depth = 12 },
	};
	char buf[64];
	struct capture c;
	json_object *o;
	const char *t;

	setenv("TZ", "UTC", 1);
	tzset();
	assert_string_equal(tf_format_time(buf, sizeof(buf), iv.time_ns, true), "2025-11-22 03:11:05.250");
	assert_string_equal(tf_format_time(buf, sizeof(buf), iv.time_ns, false), "03:11:05");
	assert_string_equal(tf_format_time(buf, sizeof(buf), 0, false), "-");

	tf_interval_line(cap_open(&c), &iv, true);
	t = cap_text(&c);
	assert_true(starts_with(t, "2025-11-22 03:11:05.250 loop3 "));
	assert_non_null(strstr(t, "read    950 IOPS P99  1.50ms (met)"));
	assert_non_null(strstr(t, "write  16.4k IOPS P99  20.0ms"));
	assert_non_null(strstr(t, "targets 1.20ms/8.00ms*"));
	assert_non_null(strstr(t, "depth 64/12"));
	assert_non_null(strstr(t, "reads ? fine\n"));
	cap_close(&c);

	iv.goal_met = -1;
	iv.changed = false;
	tf_interval_json(cap_open(&c), &iv);
	t = cap_text(&c);
	assert_non_null(strstr(t, "\"time_ns\":1763781065250000000,\"device\":\"loop3\""));
	assert_non_null(strstr(t, "\"reason\":\"reads \\u0001 fine\""));
	assert_non_null(strstr(t, "\"changed\":false"));
	assert_non_null(strstr(t, "\"goal_met\":null"));
	assert_non_null(strstr(t, "\"read\":{\"iops\":950,"));
	assert_non_null(strstr(t, "\"write\":{\"iops\":16400,"));
	o = parse_json_line(t);
	assert_string_equal(json_object_get_string(member_at(o, "reason")), "reads \x01 fine");
	assert_int_equal(json_object_get_int64(member_at(o, "read.p99_ns")), 1500000);
	assert_member_type(o, "goal_met", json_type_null);
	json_object_put(o);
	cap_close(&c);

	/* Doubles as "%.10g"; not finite: null. */
	iv.read.iops = 950.25;
	iv.read.mean_ns = 1.0 / 3.0;
	iv.write.iops = 0.0 / 0.0;
	tf_interval_json(cap_open(&c), &iv);
	t = cap_text(&c);
	assert_non_null(strstr(t, "\"read\":{\"iops\":950.25,"));
	assert_non_null(strstr(t, "\"mean_ns\":0.3333333333,"));
	assert_non_null(strstr(t, "\"write\":{\"iops\":null,"));
	o = parse_json_line(t);
	assert_true(json_object_get_double(member_at(o, "read.iops")) == 950.25);
	json_object_put(o);
	cap_close(&c);
}

/* A lognormal-ish spread: most samples around 100 us, a tail to 20 ms. */
static size_t spread(struct tf_bucket *b, size_t max)
{
	static const struct {
		uint64_t ns, count;
	} shape[] = {
		{ 20000, 5 }, { 50000, 200 }, { 80000, 3000 }, { 100000, 9000 }, { 130000, 5000 },
		{ 200000, 1500 }, { 500000, 200 }, { 1000000, 60 }, { 3000000, 20 }, { 20000000, 3 },
	};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(shape) / sizeof(shape[0]) && n < max; i++)
		b[n++] = (struct tf_bucket) { kt_hist_lower(kt_hist_index(shape[i].ns)), shape[i].count };
	return n;
}

static void test_hist_rows(void **state)
{
	struct tf_bucket b[32], rev[32];
	struct tf_hist h, h2;
	uint64_t sum = 0, total = 0;
	unsigned seen_marks = 0;
	size_t n = spread(b, 32);

	for (size_t i = 0; i < n; i++)
		total += b[i].count;
	tf_hist_build(b, n, TF_HIST_ROWS_MAX, &h);
	assert_int_equal(h.total, total);
	assert_true(h.n_rows > 10 && h.n_rows <= TF_HIST_ROWS_MAX);
	for (size_t r = 0; r < h.n_rows; r++) {
		sum += h.rows[r].count;
		assert_true(h.rows[r].lo_ns < h.rows[r].hi_ns);
		if (r + 1 < h.n_rows)
			assert_int_equal(h.rows[r].hi_ns, h.rows[r + 1].lo_ns);
		/* Each percentile is marked in exactly one row. */
		assert_int_equal(seen_marks & h.rows[r].marks, 0);
		seen_marks |= h.rows[r].marks;
		for (int p = 0; p < _TF_PCT_MAX; p++)
			if (h.rows[r].marks & (1u << p))
				assert_true(h.pct_ns[p] >= h.rows[r].lo_ns && h.pct_ns[p] < h.rows[r].hi_ns);
	}
	assert_int_equal(sum, total);
	assert_int_equal(seen_marks, (1u << _TF_PCT_MAX) - 1);
	assert_true(h.rows[0].lo_ns <= 20000 && h.rows[h.n_rows - 1].hi_ns > 20000000);
	/* Percentiles are the daemon's: bucket midpoints. */
	assert_true(h.pct_ns[TF_P50] >= 98000 && h.pct_ns[TF_P50] <= 104000);
	assert_true(h.pct_ns[TF_P99] >= 480000 && h.pct_ns[TF_P99] <= 520000);
	assert_true(h.pct_ns[TF_P50] <= h.pct_ns[TF_P90] && h.pct_ns[TF_P90] <= h.pct_ns[TF_P99] &&
		    h.pct_ns[TF_P99] <= h.pct_ns[TF_P999]);

	/* Order does not matter; a value inside a bucket counts in it. */
	for (size_t i = 0; i < n; i++)
		rev[i] = (struct tf_bucket) { b[n - 1 - i].lower_ns + 1, b[n - 1 - i].count };
	tf_hist_build(rev, n, TF_HIST_ROWS_MAX, &h2);
	assert_memory_equal(&h, &h2, sizeof(h));

	/* Fewer rows on request; never more than the buckets spanned. */
	tf_hist_build(b, n, 5, &h2);
	assert_int_equal(h2.n_rows, 5);
	tf_hist_build(b, n, 0, &h2);
	assert_int_equal(h2.n_rows, 1);
	assert_int_equal(h2.rows[0].count, total);
	assert_int_equal(h2.rows[0].marks, (1u << _TF_PCT_MAX) - 1);
	tf_hist_build(b, 1, TF_HIST_ROWS_MAX, &h2);
	assert_int_equal(h2.n_rows, 1);
	assert_int_equal(h2.rows[0].hi_ns - h2.rows[0].lo_ns, kt_hist_width(kt_hist_index(b[0].lower_ns)));

	/* Empty; absurd values and counts do not crash or wrap. */
	tf_hist_build(NULL, 0, TF_HIST_ROWS_MAX, &h2);
	assert_int_equal(h2.total, 0);
	assert_int_equal(h2.n_rows, 0);
	b[0] = (struct tf_bucket) { UINT64_MAX, UINT64_MAX };
	b[1] = (struct tf_bucket) { 0, UINT64_MAX };
	b[2] = (struct tf_bucket) { 5, 0 };
	tf_hist_build(b, 3, TF_HIST_ROWS_MAX, &h2);
	assert_int_equal(h2.total, UINT64_MAX);
	assert_int_equal(h2.n_rows, TF_HIST_ROWS_MAX);
}

static size_t count_lines(const char *t, const char *needle)
{
	size_t n = 0;

	for (const char *p = t; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* "  P50 X  P90 X  P99 X  P99.9 X\n", each X the midpoint of the bucket
 * holding the given value. */
static void pct_line(char *buf, size_t n, const uint64_t ns[4])
{
	static const char *const label[4] = { "P50", "P90", "P99", "P99.9" };
	char d[DURATION_BUF_MAX];
	size_t off = 0;

	for (int i = 0; i < 4; i++)
		off += (size_t)snprintf(buf + off, n - off, "  %s %s", label[i],
					format_duration(d, sizeof(d), hist_bucket_mid(kt_hist_index(ns[i]))));
	snprintf(buf + off, n - off, "\n");
}

static void test_hist_picture(void **state)
{
	struct tf_bucket b[32];
	struct capture c;
	struct tf_hist h;
	size_t marked;
	char full[41], want[128];
	const char *t;

	tf_hist_build(b, spread(b, 32), TF_HIST_ROWS_MAX, &h);
	tf_hist_print(cap_open(&c), "loop3", "read", &h, false);
	t = cap_text(&c);
	assert_true(starts_with(t, "loop3 read latency (insert to completion), last interval: 18988 I/Os\n"));
	/* A percentile is the midpoint of the bucket holding it: spread()'s
	 * 100 us, 130 us, 500 us and 3 ms buckets. */
	pct_line(want, sizeof(want), (const uint64_t[]) { 100000, 130000, 500000, 3000000 });
	assert_non_null(strstr(t, want));
	assert_non_null(strstr(t, "  P99.9 "));
	/* One bar per row, the fullest row a full bar, every mark shown. */
	assert_int_equal(count_lines(t, "|"), 2 * h.n_rows);
	memset(full, '#', 40);
	full[40] = 0;
	assert_int_equal(count_lines(t, full), 1);
	marked = 0;
	for (size_t r = 0; r < h.n_rows; r++)
		marked += h.rows[r].marks != 0;
	assert_int_equal(count_lines(t, "<- "), marked);
	assert_non_null(strstr(t, "P50"));
	assert_non_null(strstr(t, "P99.9\n"));
	assert_non_null(strstr(t, "|      12000  <- P50\n"));
	cap_close(&c);

	tf_hist_print(cap_open(&c), "loop3", "read", &h, true);
	t = cap_text(&c);
	assert_non_null(strstr(t, "\xe2\x96\x88"));	/* full block */
	assert_non_null(strstr(t, "\xe2\x97\x80 P50"));
	cap_close(&c);

	tf_hist_build(NULL, 0, TF_HIST_ROWS_MAX, &h);
	tf_hist_print(cap_open(&c), "loop3", "write", &h, false);
	assert_string_equal(cap_text(&c), "loop3: no writes in the last interval\n");
	cap_close(&c);
}

static void test_hist_json(void **state)
{
	struct tf_bucket b[2] = { { 100000, 7 }, { 2000000, 3 } };
	struct capture c;
	struct tf_hist h;
	json_object *o;
	char want[128];
	const char *t;

	tf_hist_build(b, 2, TF_HIST_ROWS_MAX, &h);
	tf_hist_json(cap_open(&c), "loop3", "write", b, 2, &h);
	t = cap_text(&c);
	snprintf(want, sizeof(want), "{\"device\":\"loop3\",\"op\":\"write\",\"count\":10,\"p50_ns\":%llu,",
		 (unsigned long long)hist_bucket_mid(kt_hist_index(100000)));
	assert_true(starts_with(t, want));
	assert_non_null(strstr(t, "\"buckets\":[{\"lower_ns\":100000,\"count\":7},{\"lower_ns\":2000000,\"count\":3}]"));
	assert_non_null(strstr(t, "\"marks\":[\"P50\"]"));
	assert_non_null(strstr(t, "\"marks\":[\"P90\",\"P99\",\"P99.9\"]"));
	o = parse_json_line(t);
	assert_int_equal(json_object_array_length(member_at(o, "buckets")), 2);
	assert_int_equal(json_object_array_length(member_at(o, "rows")), h.n_rows);
	json_object_put(o);
	cap_close(&c);

	tf_hist_build(NULL, 0, TF_HIST_ROWS_MAX, &h);
	tf_hist_json(cap_open(&c), "loop3", "read", NULL, 0, &h);
	assert_string_equal(cap_text(&c), "{\"device\":\"loop3\",\"op\":\"read\",\"count\":0,\"p50_ns\":null,"
			    "\"p90_ns\":null,\"p99_ns\":null,\"p999_ns\":null,\"buckets\":[],\"rows\":[]}\n");
	cap_close(&c);
}

static void test_list(void **state)
{
	struct tf_status s = sample_status();
	struct capture c;
	const char *t;

	tf_list_header(cap_open(&c));
	tf_list_row(c.f, &s);
	t = cap_text(&c);
	assert_true(starts_with(t, "DEVICE       STATE       GOAL"));
	assert_non_null(strstr(t, "nvme0n1      tracking    read-p99.9=2ms mode=latency"));
	assert_non_null(strstr(t, "1.84ms     16.0k 1.20ms/8.00ms\n"));
	cap_close(&c);
}

/* A goal waiting for its disk: the text a user typed is shown escaped. */
static void test_waiting(void **state)
{
	struct capture c;
	const char *t;

	tf_waiting_print(cap_open(&c), "/dev/x\x1b[31m", "read-p99=1ms mode=latency", "runtime", false);
	t = cap_text(&c);
	assert_null(strchr(t, '\x1b'));
	assert_true(starts_with(t, "o /dev/x"));
	assert_non_null(strstr(t, "State: waiting for the disk (not here, or no medium)"));
	assert_non_null(strstr(t, "Goal: read-p99=1ms mode=latency (set at run time)\n"));
	cap_close(&c);

	tf_waiting_row(cap_open(&c), "loop9", "read-p99=1ms mode=latency");
	assert_true(starts_with(cap_text(&c), "loop9        waiting     read-p99=1ms mode=latency"));
	cap_close(&c);

	assert_int_equal(tf_waiting_json(cap_open(&c), "loop9", "read-p99=1ms", "config"), 0);
	assert_string_equal(cap_text(&c), "{\"device\":\"loop9\",\"state\":\"waiting\",\"goal\":\"read-p99=1ms\","
			    "\"goal_source\":\"config\"}\n");
	cap_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_escaping),
		cmocka_unit_test(test_json_writer),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_status_json),
		cmocka_unit_test(test_interval_line),
		cmocka_unit_test(test_hist_rows),
		cmocka_unit_test(test_hist_picture),
		cmocka_unit_test(test_hist_json),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_waiting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
