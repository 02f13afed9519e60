/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: histogram bucketing (bpf/observer-abi.h) and math (shared/hist.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hist.h"

/* Every bucket: index(lower) and index(last value) map back to it, and the
 * next bucket starts where this one ends. */
static void test_bucket_bounds(void **state)
{
	for (uint32_t i = 0; i < KT_HIST_BUCKETS - 1; i++) {
		uint64_t lo = kt_hist_lower(i), w = kt_hist_width(i);

		assert_int_equal(kt_hist_index(lo), i);
		assert_int_equal(kt_hist_index(lo + w - 1), i);
		assert_int_equal(kt_hist_lower(i + 1), lo + w);
	}
	/* Overflow lands in the last bucket. */
	assert_int_equal(kt_hist_index(UINT64_MAX), KT_HIST_BUCKETS - 1);
	assert_int_equal(kt_hist_index(0), 0);
	/* 10 s is inside the range, not clamped. */
	assert_true(kt_hist_index(10ULL * 1000000000ULL) < KT_HIST_BUCKETS - 1);
}

/* The reported midpoint is within half a bucket's share of its lower
 * bound, 1/(2 * KT_HIST_SUB) (2.5%), of anything in its bucket: inside the
 * 3% percentile bound. Bounds are whole nanoseconds, so one more. */
static double mid_bound_ns(uint64_t v)
{
	return (double)v / (2 * KT_HIST_SUB) + 1.0;
}

static void test_bucket_resolution(void **state)
{
	for (uint32_t i = 0; i < KT_HIST_BUCKETS - 1; i++) {
		uint64_t lo = kt_hist_lower(i), w = kt_hist_width(i), mid = hist_bucket_mid(i);

		if (lo < 1024)
			continue;
		assert_true((double)(mid - lo) <= mid_bound_ns(lo));
		assert_true((double)(lo + w - 1 - mid) <= mid_bound_ns(lo + w - 1));
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Exact percentile, same definition: the ceil(p/100*n)-th smallest. */
static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double p)
{
	size_t rank = (size_t)ceil(p / 100.0 * (double)n);

	return sorted[(rank ? rank : 1) - 1];
}

/* The bound: within 3% of the exact value from 1 us to 10 s, for
 * several distributions (log-uniform over the whole range, narrow, bimodal). */
static void test_percentile_bound(void **state)
{
	static const double ps[] = { 1, 10, 50, 90, 99, 99.9, 100 };
	const size_t n = 20000;
	uint64_t *v = calloc(n, sizeof(*v));
	__u64 *h = calloc(KT_HIST_BUCKETS, sizeof(*h));
	double worst = 0;

	assert_non_null(v);
	assert_non_null(h);
	srand(12345);
	for (int dist = 0; dist < 4; dist++) {
		memset(h, 0, KT_HIST_BUCKETS * sizeof(*h));
		for (size_t i = 0; i < n; i++) {
			double u = (double)rand() / RAND_MAX;

			switch (dist) {
			case 0:	/* log-uniform 1 us .. 10 s */
				v[i] = (uint64_t)(1e3 * pow(1e7, u));
				break;
			case 1:	/* narrow: 95..105 us */
				v[i] = (uint64_t)(95e3 + 10e3 * u);
				break;
			case 2:	/* bimodal: 80 us reads, 15 ms behind programs */
				v[i] = i % 10 ? (uint64_t)(80e3 + 5e3 * u) : (uint64_t)(15e6 + 1e6 * u);
				break;
			default: /* every value at a bucket's lower edge: worst case for a midpoint */
				v[i] = kt_hist_lower(kt_hist_index((uint64_t)(1e3 * pow(1e7, u))));
				break;
			}
			h[kt_hist_index(v[i])]++;
		}
		qsort(v, n, sizeof(*v), cmp_u64);
		for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
			uint64_t est, ex = exact_percentile(v, n, ps[k]);
			double err;

			assert_int_equal(hist_percentile(h, ps[k], &est), 0);
			err = fabs((double)est - (double)ex) / (double)ex;
			if (err > worst)
				worst = err;
			assert_true(err <= 0.03);
		}
	}
	print_message("worst percentile error: %.3f%%\n", worst * 100);
	/* Half a bucket, plus the whole-ns rounding over the least value (1 us). */
	assert_true(worst <= 1.0 / (2 * KT_HIST_SUB) + 1.0 / 1000);
	free(v);
	free(h);
}

static void test_percentile_edges(void **state)
{
	hist_t h = {};
	uint64_t v;

	assert_int_equal(hist_percentile(h, 50, &v), -ENODATA);
	h[kt_hist_index(2000)] = 1;
	assert_int_equal(hist_percentile(h, 0, &v), -EINVAL);
	assert_int_equal(hist_percentile(h, 100.5, &v), -EINVAL);
	assert_int_equal(hist_percentile(h, NAN, &v), -EINVAL);
	assert_int_equal(hist_percentile(h, 100, &v), 0);
	assert_true(v >= 1950 && v <= 2050);
	/* Below 1 us one bucket holds everything, reported as its midpoint. */
	memset(h, 0, sizeof(h));
	h[kt_hist_index(7)] = 3;
	assert_int_equal(kt_hist_index(1023), 0);
	assert_int_equal(hist_percentile(h, 50, &v), 0);
	assert_int_equal(v, 512);
}

static void test_merge(void **state)
{
	hist_t a = {}, b = {};

	a[10] = 5;
	a[100] = 7;
	b[10] = 2;
	hist_merge(a, b);
	assert_int_equal(a[10], 7);
	assert_int_equal(hist_count(a), 14);
}

static void test_mean_fraction_rate(void **state)
{
	hist_t h = {};
	double m;

	assert_int_equal(hist_mean(h, &m), -ENODATA);
	h[kt_hist_index(100000)] = 1;
	h[kt_hist_index(300000)] = 1;
	assert_int_equal(hist_mean(h, &m), 0);
	assert_true(fabs(m - 200000) / 200000 < 0.02);
	assert_true(fabs(hist_fraction_le(h, 150000) - 0.5) < 1e-9);
	assert_true(fabs(hist_fraction_le(h, 1000000) - 1.0) < 1e-9);
	assert_true(fabs(rate_per_sec(500, 500000000ULL) - 1000.0) < 1e-9);
	assert_true(rate_per_sec(5, 0) == 0.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_bounds),
		cmocka_unit_test(test_bucket_resolution),
		cmocka_unit_test(test_percentile_bound),
		cmocka_unit_test(test_percentile_edges),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_mean_fraction_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
