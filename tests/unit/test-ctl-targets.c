/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: which new targets are written (ctl-targets.c). A read
 * target Kyber cannot tell from the one in force, because both count the
 * reads as hurt at every decision, is not rewritten.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ctl-internal.h"

#define MSEC 1000000ULL
#define USEC 1000ULL

/* Reads with their device P90 at p90_ns, writes at 13 ms. */
static struct ctl_sample reads_at(uint64_t p90_ns)
{
	struct ctl_sample s;

	memset(&s, 0, sizeof(s));
	s.read.completed = 1000;
	s.read.device_p90_ns = p90_ns;
	s.write.completed = 1000;
	s.write.total_p99_ns = 13 * MSEC;
	return s;
}

/* Both under CTL_READ_HURT_MARGIN x the P90: the one in force stays, and
 * with the write target unchanged nothing is left to write. */
static void test_hurt_read_kept(void **state)
{
	struct ctl_sample s = reads_at(400 * USEC);
	struct kyber_targets cur = { 200 * USEC, 8 * MSEC }, t = { 120 * USEC, 8 * MSEC };

	ctl_keep_hurt_read(&s, &cur, &t);
	assert_int_equal(t.read_ns, cur.read_ns);
	assert_false(ctl_settle_write(&cur, &t));

	t = (struct kyber_targets) { 290 * USEC, 8 * MSEC };
	ctl_keep_hurt_read(&s, &cur, &t);
	assert_int_equal(t.read_ns, cur.read_ns);
}

/* A write target that moves is still written, with the read target in
 * force. */
static void test_hurt_read_kept_beside_a_new_write_target(void **state)
{
	struct ctl_sample s = reads_at(400 * USEC);
	struct kyber_targets cur = { 200 * USEC, 8 * MSEC }, t = { 100 * USEC, 16 * MSEC };

	ctl_keep_hurt_read(&s, &cur, &t);
	assert_true(ctl_settle_write(&cur, &t));
	assert_int_equal(t.read_ns, 200 * USEC);
	assert_int_equal(t.write_ns, 16 * MSEC);
}

/* Over the margin, near the P90, either target may leave the reads
 * counted as fine in some of Kyber's decisions: written. */
static void test_read_near_its_p90_written(void **state)
{
	struct ctl_sample s = reads_at(400 * USEC);
	struct kyber_targets cur = { 200 * USEC, 8 * MSEC }, t = { 320 * USEC, 8 * MSEC };

	ctl_keep_hurt_read(&s, &cur, &t);
	assert_int_equal(t.read_ns, 320 * USEC);
	assert_true(ctl_settle_write(&cur, &t));

	cur.read_ns = 600 * USEC;
	t.read_ns = 100 * USEC;
	ctl_keep_hurt_read(&s, &cur, &t);
	assert_int_equal(t.read_ns, 100 * USEC);
}

/* No reads in the interval: nothing says how Kyber counts them. */
static void test_no_reads_leaves_target(void **state)
{
	struct ctl_sample s = reads_at(400 * USEC);
	struct kyber_targets cur = { 200 * USEC, 8 * MSEC }, t = { 100 * USEC, 8 * MSEC };

	s.read.completed = 0;
	ctl_keep_hurt_read(&s, &cur, &t);
	assert_int_equal(t.read_ns, 100 * USEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hurt_read_kept),
		cmocka_unit_test(test_hurt_read_kept_beside_a_new_write_target),
		cmocka_unit_test(test_read_near_its_p90_written),
		cmocka_unit_test(test_no_reads_leaves_target),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
