/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: snapshots -> metrics totals (daemon/metrics-totals.c) ->
 * Prometheus text (daemon/metrics.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metrics.h"

/* Enough for every series of the few devices these tests format. */
#define MAX_LINES 4096

/* n samples of ns in the (op, span) histogram of a snapshot. */
static void add(struct kt_snapshot *s, int op, int span, uint64_t ns, uint32_t n)
{
	int h = kt_hist_of((unsigned)op, (unsigned)span);

	assert_true(h >= 0);
	s->hist[h][kt_hist_index(ns)] += n;
	s->op[op].lat_sum_ns[span] += ns * n;
}

static struct kt_snapshot *snap(void)
{
	struct kt_snapshot *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	return s;
}

static const char *const states[] = { "learning", "tracking", "paused" };

static struct metrics_device device(const char *name, const struct metrics_totals *t)
{
	return (struct metrics_device) {
		.name = name, .totals = t, .has_targets = true,
		.target_ns = { 2000000, 10000000 }, .depth = { 256, 64, 0, 0 },
		.state = 1, .has_goal = true, .goal_pct = 99.9, .goal_ns = 100000, .goal_met = 1,
		.target_changes = 3, .scheduler_switches = 1,
	};
}

/* The text of one metrics_format() call, split into lines. */
struct text {
	char *buf;
	char *line[MAX_LINES];
	size_t n;
};

static void format(struct text *t, const struct metrics_device *devs, size_t n)
{
	struct metrics_input in = {
		.devs = devs, .n_devs = n, .state_names = states, .n_states = 3,
		.cpu_usec = 1500000, .rss_bytes = 4096,
	};
	size_t len;
	FILE *f = open_memstream(&t->buf, &len);

	assert_non_null(f);
	assert_int_equal(metrics_format(f, &in), 0);
	assert_int_equal(fclose(f), 0);
	t->n = 0;
	for (char *p = strtok(t->buf, "\n"); p; p = strtok(NULL, "\n")) {
		assert_true(t->n < MAX_LINES);
		t->line[t->n++] = p;
	}
}

/* The value of the sample whose series (name and labels) is key; -1 if none. */
static double value(const struct text *t, const char *key)
{
	size_t k = strlen(key);

	for (size_t i = 0; i < t->n; i++)
		if (strncmp(t->line[i], key, k) == 0 && t->line[i][k] == ' ')
			return strtod(t->line[i] + k + 1, NULL);
	return -1;
}

#define READ_TOTAL "{device=\"sda\",op=\"read\",span=\"total\""

static void test_histogram_cumulative(void **state)
{
	struct kt_snapshot *a = snap(), *b = snap();
	struct metrics_totals tot = {};
	struct metrics_device d = device("sda", &tot);
	struct text t;
	const char *last = NULL;
	size_t buckets = 0;
	double prev = 0;

	add(b, KT_OP_READ, KT_LAT_TOTAL, 500, 2);		/* below the observer's first bound */
	add(b, KT_OP_READ, KT_LAT_TOTAL, 100000, 5);		/* at le=100 us */
	add(b, KT_OP_READ, KT_LAT_TOTAL, 200000, 7);		/* 100..250 us */
	add(b, KT_OP_READ, KT_LAT_TOTAL, 30000000000ull, 1);	/* above the last bound */
	b->op[KT_OP_READ].completed = 15;
	assert_int_equal(metrics_totals_add(&tot, a, b), 0);
	format(&t, &d, 1);

	/* In order of le, cumulative, +Inf last. */
	for (size_t i = 0; i < t.n; i++) {
		if (strncmp(t.line[i], "kyber_tuned_latency_seconds_bucket" READ_TOTAL,
			    strlen("kyber_tuned_latency_seconds_bucket" READ_TOTAL)) != 0)
			continue;
		assert_true(strtod(strrchr(t.line[i], ' ') + 1, NULL) >= prev);
		prev = strtod(strrchr(t.line[i], ' ') + 1, NULL);
		last = t.line[i];
		buckets++;
	}
	assert_int_equal(buckets, METRICS_LE_COUNT + 1);
	assert_non_null(strstr(last, "le=\"+Inf\"} 15"));
	assert_true(value(&t, "kyber_tuned_latency_seconds_bucket" READ_TOTAL ",le=\"0.000005\"}") == 2);
	assert_true(value(&t, "kyber_tuned_latency_seconds_bucket" READ_TOTAL ",le=\"0.0001\"}") == 7);
	assert_true(value(&t, "kyber_tuned_latency_seconds_bucket" READ_TOTAL ",le=\"0.00025\"}") == 14);
	assert_true(value(&t, "kyber_tuned_latency_seconds_bucket" READ_TOTAL ",le=\"10\"}") == 14);
	/* +Inf comes last and equals _count. */
	assert_true(value(&t, "kyber_tuned_latency_seconds_bucket" READ_TOTAL ",le=\"+Inf\"}") == 15);
	assert_true(value(&t, "kyber_tuned_latency_seconds_count" READ_TOTAL "}") == 15);
	assert_float_equal(value(&t, "kyber_tuned_latency_seconds_sum" READ_TOTAL "}"),
			   (2 * 500 + 5 * 100000 + 7 * 200000 + 30000000000.0) / 1e9, 1e-9);
	for (size_t i = 0; i + 1 < t.n; i++)
		if (strstr(t.line[i], "_bucket" READ_TOTAL ",le=\"+Inf\""))
			assert_non_null(strstr(t.line[i + 1], "_sum" READ_TOTAL));
	assert_true(value(&t, "kyber_tuned_io_completed_total{device=\"sda\",op=\"read\"}") == 15);
	/* Discards keep only their total span. */
	assert_true(value(&t, "kyber_tuned_latency_seconds_count{device=\"sda\",op=\"discard\",span=\"total\"}") == 0);
	assert_true(value(&t, "kyber_tuned_latency_seconds_count{device=\"sda\",op=\"discard\",span=\"queue\"}") == -1);
	free(t.buf);
	free(a);
	free(b);
}

/* Backslash, quote and newline escaped, as the exposition format says. */
static void test_escaping(void **state)
{
	struct metrics_device d = device("we\"ird\\na\nme", NULL);
	struct text t;

	format(&t, &d, 1);
	assert_true(value(&t, "kyber_tuned_target_changes_total{device=\"we\\\"ird\\\\na\\nme\"}") == 3);
	for (size_t i = 0; i < t.n; i++)
		assert_null(strstr(t.line[i], "we\"ird"));
	free(t.buf);
}

/* Every sample of every counter and histogram series in a, at or below b. */
static void assert_not_decreasing(const struct text *a, const struct text *b)
{
	size_t checked = 0;

	for (size_t i = 0; i < a->n; i++) {
		char key[512], *sp;

		if (a->line[i][0] == '#' || !(strstr(a->line[i], "_total") || strstr(a->line[i], "_bucket") ||
					     strstr(a->line[i], "_count") || strstr(a->line[i], "_sum")))
			continue;
		snprintf(key, sizeof(key), "%s", a->line[i]);
		sp = strrchr(key, ' ');
		assert_non_null(sp);
		*sp = 0;
		assert_true(value(b, key) >= strtod(sp + 1, NULL));
		checked++;
	}
	assert_true(checked > 100);
}

static void test_counters_monotonic(void **state)
{
	struct kt_snapshot *s0 = snap(), *s1 = snap(), *s2 = snap(), *reset = snap();
	struct metrics_totals tot = {};
	struct metrics_device d = device("sda", &tot);
	struct text t1, t2, t3;

	add(s1, KT_OP_WRITE, KT_LAT_DEVICE, 3000000, 10);
	s1->op[KT_OP_WRITE].completed = 10;
	s1->op[KT_OP_WRITE].bytes = 40960;
	assert_int_equal(metrics_totals_add(&tot, s0, s1), 0);
	format(&t1, &d, 1);

	/* A 32-bit bucket wraps between two snapshots: still counted forward. */
	*s2 = *s1;
	s2->hist[kt_hist_of(KT_OP_WRITE, KT_LAT_DEVICE)][kt_hist_index(3000000)] += UINT32_MAX;	/* +2^32 - 1 */
	s2->op[KT_OP_WRITE].lat_sum_ns[KT_LAT_DEVICE] += 3000000ull * 5;
	s2->op[KT_OP_WRITE].completed += 5;
	s2->hist[kt_hist_of(KT_OP_WRITE, KT_LAT_DEVICE)][kt_hist_index(3000000)] += 6;	/* wraps to +5 */
	assert_int_equal(metrics_totals_add(&tot, s1, s2), 0);
	format(&t2, &d, 1);
	assert_not_decreasing(&t1, &t2);
	assert_true(value(&t2, "kyber_tuned_latency_seconds_count{device=\"sda\",op=\"write\",span=\"device\"}") == 15);

	/* Counters that went backwards (a reassigned slot) change nothing. */
	assert_int_equal(metrics_totals_add(&tot, s2, reset), -ERANGE);
	format(&t3, &d, 1);
	assert_not_decreasing(&t2, &t3);
	assert_true(value(&t3, "kyber_tuned_io_completed_total{device=\"sda\",op=\"write\"}") == 15);
	free(t1.buf);
	free(t2.buf);
	free(t3.buf);
	free(s0);
	free(s1);
	free(s2);
	free(reset);
}

/* The family a sample belongs to: its name without a histogram suffix. */
static void family_of(const char *line, char *out, size_t n)
{
	static const char *const suffix[] = { "_bucket", "_sum", "_count" };
	size_t l = strcspn(line, "{ ");

	snprintf(out, n, "%.*s", (int)l, line);
	for (size_t i = 0; i < 3; i++) {
		size_t s = strlen(suffix[i]);

		if (l > s && strcmp(out + l - s, suffix[i]) == 0 && strncmp(out, "kyber_tuned_latency_seconds", 27) == 0)
			out[l - s] = 0;
	}
}

static size_t count_prefix(const struct text *t, const char *prefix)
{
	size_t n = 0, k = strlen(prefix);

	for (size_t i = 0; i < t->n; i++)
		n += strncmp(t->line[i], prefix, k) == 0;
	return n;
}

/* HELP and TYPE once per family, before its samples; none without them. */
static void test_help_type_once(void **state)
{
	struct metrics_device d[2] = { device("sda", NULL), device("nvme0n1", NULL) };

	for (size_t ndev = 0; ndev <= 2; ndev++) {
		struct text t;
		char fam[128], help[192], type[192];
		size_t families = 0;

		format(&t, d, ndev);
		for (size_t i = 0; i < t.n; i++) {
			if (strncmp(t.line[i], "# TYPE ", 7) == 0)
				families++;
			if (t.line[i][0] == '#')
				continue;
			family_of(t.line[i], fam, sizeof(fam));
			snprintf(help, sizeof(help), "# HELP %s ", fam);
			snprintf(type, sizeof(type), "# TYPE %s ", fam);
			assert_int_equal(count_prefix(&t, help), 1);
			assert_int_equal(count_prefix(&t, type), 1);
			/* ... and before this sample */
			for (size_t j = i; j < t.n; j++)
				assert_false(strncmp(t.line[j], type, strlen(type)) == 0);
		}
		assert_int_equal(families, 12);
		assert_int_equal(count_prefix(&t, "# HELP "), families);
		free(t.buf);
	}
}

static void test_gauges(void **state)
{
	struct metrics_device d = device("sda", NULL);
	struct text t;

	d.depth[KT_OP_WRITE] = 0;	/* unknown: absent */
	d.goal_met = -1;
	format(&t, &d, 1);
	assert_true(value(&t, "kyber_tuned_state{device=\"sda\",state=\"tracking\"}") == 1);
	assert_true(value(&t, "kyber_tuned_state{device=\"sda\",state=\"learning\"}") == 0);
	assert_true(value(&t, "kyber_tuned_target_seconds{device=\"sda\",op=\"read\"}") == 0.002);
	assert_true(value(&t, "kyber_tuned_depth{device=\"sda\",op=\"read\"}") == 256);
	assert_true(value(&t, "kyber_tuned_depth{device=\"sda\",op=\"write\"}") == -1);
	assert_true(value(&t, "kyber_tuned_goal_seconds{device=\"sda\",op=\"read\",percentile=\"99.9\"}") == 0.0001);
	assert_int_equal(count_prefix(&t, "kyber_tuned_goal_met{"), 0);
	assert_true(value(&t, "kyber_tuned_cpu_seconds_total") == 1.5);
	assert_true(value(&t, "kyber_tuned_resident_memory_bytes") == 4096);
	free(t.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_histogram_cumulative),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_counters_monotonic),
		cmocka_unit_test(test_help_type_once),
		cmocka_unit_test(test_gauges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
