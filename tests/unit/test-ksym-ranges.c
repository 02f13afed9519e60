/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: where kernel functions lie, from kallsyms' format (daemon/ksym-ranges.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ksym-ranges.h"
#include "macro.h"

static const char *const names[] = { "blk_mq_submit_bio", "blk_mq_run_work_fn", "not_here" };

static int find(const char *text, struct ksym_range *out)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int r;

	assert_non_null(f);
	r = ksym_ranges_find(f, names, ELEMENTSOF(names), out);
	fclose(f);
	return r;
}

static void test_found(void **state)
{
	struct ksym_range out[ELEMENTSOF(names)];
	/* Unsorted, data symbols between, a module's symbol: the end is the
	 * next text symbol's address, whatever the order of the lines. */
	const char *text =
		"ffffffff81b49e50 T blk_mq_submit_bio\n"
		"ffffffff81b42aa0 t blk_mq_run_work_fn\n"
		"ffffffff81b42b00 d some_data\n"
		"ffffffff81b42c10 t blk_mq_next_one\n"
		"ffffffff81b4a400 T after_submit\n"
		"ffffffff81b4a000 W weak_between\n"
		"ffffffffc0001000 t loop_queue_rq\t[loop]\n";

	assert_int_equal(find(text, out), 2);
	assert_true(out[0].start == 0xffffffff81b49e50ull && out[0].end == 0xffffffff81b4a000ull);
	assert_true(out[1].start == 0xffffffff81b42aa0ull && out[1].end == 0xffffffff81b42c10ull);
	assert_true(out[2].start == 0 && out[2].end == 0);
}

static void test_refused(void **state)
{
	struct ksym_range out[ELEMENTSOF(names)];

	/* kptr_restrict: every address reads 0. */
	assert_int_equal(find("0000000000000000 T blk_mq_submit_bio\n0000000000000000 t x\n", out), -EPERM);
	assert_int_equal(find("", out), -EPERM);
	/* None of the names. */
	assert_int_equal(find("ffffffff81000000 T a\nffffffff81000100 T b\n", out), 0);
	/* The last text symbol has no known end: not found. */
	assert_int_equal(find("ffffffff81000000 T a\nffffffff81000100 T blk_mq_submit_bio\n", out), 0);
	/* Data symbols are not functions. */
	assert_int_equal(find("ffffffff81000000 D blk_mq_submit_bio\nffffffff81000100 T b\n", out), 0);
	/* Malformed lines. */
	assert_int_equal(find("ffffffff81000000 T\n", out), -EBADMSG);
	assert_int_equal(find("xyz T blk_mq_submit_bio\n", out), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
