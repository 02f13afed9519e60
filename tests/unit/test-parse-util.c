/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: shared/parse-util.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "parse-util.h"

static void test_u64_strict(void **state)
{
	uint64_t v;

	assert_int_equal(parse_u64_strict("2000000\n", true, &v), 0);
	assert_int_equal(v, 2000000);
	assert_int_equal(parse_u64_strict("0", false, &v), 0);
	assert_int_equal(parse_u64_strict("18446744073709551615", false, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(parse_u64_strict("18446744073709551616", false, &v), -ERANGE);
	/* The junk Kyber itself rejects. */
	static const char *const bad[] = { "", "-1", "0x10", "1e6", " 5", "5 ", "5\n\n", "+5", "5a", "\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_u64_strict(bad[i], true, &v), -EINVAL);
	assert_int_equal(parse_u64_strict("5\n", false, &v), -EINVAL);
	assert_int_equal(parse_u64_strict(NULL, false, &v), -EINVAL);
}

static void test_duration(void **state)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} good[] = {
		{ "100us", 100000 }, { "2ms", 2000000 }, { "1.5s", 1500000000 }, { "250ns", 250 },
		{ "0.5ms", 500000 }, { "10\xc2\xb5s", 10000 }, { "1.0000000001s", 1000000000 },
		{ "100ms", 100000000 }, { "3", 3000000000ULL },
	};
	static const char *const bad[] = {
		"", "us", "-1ms", "1 ms", "1msx", "1m", "1h", "1e3us", "0x10us", "inf", "nan", "1..2s",
		".", "1,5s", "99999999999999999999s",
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(parse_duration_ns(good[i].s, NSEC_PER_SEC, &v), 0);
		assert_true(v == good[i].ns);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_true(parse_duration_ns(bad[i], 0, &v) < 0);
	/* No default unit: a bare number is refused. */
	assert_int_equal(parse_duration_ns("5", 0, &v), -EINVAL);
}

static void test_count_si(void **state)
{
	uint64_t v;

	assert_int_equal(parse_count_si("20k", &v), 0);
	assert_int_equal(v, 20000);
	assert_int_equal(parse_count_si("1.5M", &v), 0);
	assert_int_equal(v, 1500000);
	assert_int_equal(parse_count_si("300", &v), 0);
	assert_int_equal(v, 300);
	assert_true(parse_count_si("20kk", &v) < 0);
	assert_true(parse_count_si("20x", &v) < 0);
	assert_true(parse_count_si("-2", &v) < 0);
	assert_true(parse_count_si("k", &v) < 0);
}

static void test_format(void **state)
{
	char b[DURATION_BUF_MAX];

	assert_string_equal(format_duration(b, sizeof(b), 950), "950ns");
	assert_string_equal(format_duration(b, sizeof(b), 95200), "95.2us");
	assert_string_equal(format_duration(b, sizeof(b), 1840000), "1.84ms");
	assert_string_equal(format_duration(b, sizeof(b), 999999), "1.00ms");
	assert_string_equal(format_duration(b, sizeof(b), 12500000000ULL), "12.5s");
	assert_string_equal(format_count_si(b, sizeof(b), 16000), "16.0k");
	assert_string_equal(format_count_si(b, sizeof(b), 950), "950");
	assert_string_equal(format_count_si(b, sizeof(b), 1200000), "1.20M");
	assert_string_equal(format_count_si(b, sizeof(b), -1), "-");
}

static void test_utf8(void **state)
{
	static const struct {
		const char *s;
		bool ok;
	} cases[] = {
		{ "plain ascii", true },
		{ "nvme0n1 \xc2\xb5s", true },		/* µ */
		{ "\xe2\x97\x8f", true },			/* ● */
		{ "\xf0\x9f\x92\xbe", true },		/* U+1F4BE */
		{ "\xc0\xaf", false },			/* overlong '/' */
		{ "\xe0\x80\xaf", false },			/* overlong, 3 bytes */
		{ "\xed\xa0\x80", false },			/* surrogate U+D800 */
		{ "\xf4\x90\x80\x80", false },		/* above U+10FFFF */
		{ "\x80", false },				/* a lone continuation */
		{ "\xc2", false },				/* truncated at the end */
		{ "\xe2\x97", false },
		{ "\xf8\x88\x80\x80\x80", false },	/* 5-byte form */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(utf8_valid(cases[i].s, strlen(cases[i].s)), cases[i].ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64_strict),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_count_si),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
