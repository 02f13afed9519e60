/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: /proc/stat's "cpu" line and the steal share between two readings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "host-cpu.h"

static int parse(const char *text, struct host_cpu_time *out)
{
	return host_cpu_parse(text, strlen(text), out);
}

static void test_parse(void **state)
{
	struct host_cpu_time t;

	/* As Linux 6.18 writes it: two spaces after "cpu", ten fields. */
	assert_int_equal(parse("cpu  100 5 200 600 70 0 20 5 9 1\ncpu0 50 0 100 300 35 0 10 2 0 0\n", &t), 0);
	assert_int_equal(t.total, 100 + 5 + 200 + 600 + 70 + 0 + 20 + 5);	/* guest is in user */
	assert_int_equal(t.steal, 5);
	/* After other lines, and without a trailing newline. */
	assert_int_equal(parse("intr 1 2\ncpu  1 2 3 4 5 6 7 8", &t), 0);
	assert_int_equal(t.steal, 8);
	/* Kernels without a steal field: none. */
	assert_int_equal(parse("cpu 1 2 3 4\n", &t), 0);
	assert_int_equal(t.total, 10);
	assert_int_equal(t.steal, 0);
}

static void test_parse_rejects(void **state)
{
	static const char *const bad[] = {
		"",
		"cpu0 1 2 3 4 5 6 7 8\n",		/* no all-CPU line */
		"cpu  1 2 3\n",				/* too few fields */
		"cpu  1 2 x 4 5\n",
		"cpu  1 2 -3 4 5\n",
		"cpu  1 2 3 4 5\t6\n",
		"cpu  99999999999999999999 1 2 3\n",	/* over 2^64 */
		"cpu  18446744073709551615 1 2 3\n",	/* a sum over 2^64 */
		"xcpu  1 2 3 4 5\n",
	};
	struct host_cpu_time t;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(bad[i], &t), -EBADMSG);
	/* The length bounds the text: the line is cut after two fields. */
	assert_int_equal(host_cpu_parse("cpu  1 2 3 4 5\n", 9, &t), -EBADMSG);
}

static void test_steal_share(void **state)
{
	struct host_cpu_time a = { .total = 1000, .steal = 10 }, b = { .total = 1200, .steal = 60 };
	struct host_cpu_time none = {};

	assert_true(host_cpu_steal_share(&a, &b) == 0.25);
	assert_true(host_cpu_steal_share(&b, &a) == 0);		/* backwards */
	assert_true(host_cpu_steal_share(&a, &a) == 0);		/* nothing elapsed */
	assert_true(host_cpu_steal_share(&none, &b) == 0.05);	/* from zero: since boot */
	assert_true(host_cpu_steal_share(&b, &none) == 0);	/* not read */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_steal_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
