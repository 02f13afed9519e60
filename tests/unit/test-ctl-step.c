/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: the step pulse (ctl-grow.c, ctl_step_pulse()). Reads well
 * under the goal with the law one level above the open point, which
 * missed: the writes get one of Kyber's steps deeper by a pulse, as a
 * probe. Hand-made samples, no plant.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "law-samples.h"

/* Engaged from open (reads at 8 ms beside writes free at 16000 IOPS and
 * 13 ms), then intervals of reads at 500 us, a quarter of the goal,
 * beside writes at write_iops, Kyber's depth 3, P99 14 ms: the law steps
 * down to the open point's edge. The decision with the first pulse, or
 * false after `max` intervals without one. */
static bool slack_until_pulse(struct controller *c, struct kyber_targets *cur, double write_iops,
			      unsigned max, struct ctl_decision *d)
{
	engaged_at_2ms(c, cur);
	for (unsigned i = 0; i < max; i++) {
		writes_at(c, cur, 500 * USEC, write_iops, 3, 14 * MSEC, d);
		if (d->pulse_write_ns)
			return true;
	}
	return false;
}

/*
 * From depth 3 Kyber grows the writes by a request only with their P99
 * in bucket 5 of the target (5/4 to 3/2 over it): the grow target puts
 * them in its middle. The drain keeps the writes queued at depth 3 in
 * bucket 3; the level stays until the pulse's hold is adopted.
 */
static void test_step_pulse_from_open_edge(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;

	assert_true(slack_until_pulse(&c, &cur, 9000, 60, &d));
	flat_sample(&s, h, 500 * USEC, 9000, 3);
	s.write.total_p99_ns = 14 * MSEC;
	assert_int_equal(c.level, ctl_open_level(&c, &s) + 1);
	assert_int_equal(d.pulse_write_ns, ctl_clamp_target(14.0 * MSEC / 1.375));
	assert_int_equal(d.pulse_drain_write_ns, ctl_clamp_target(14.0 * MSEC / CTL_STEP_DRAIN));
	assert_int_equal(d.pulse_drain_ns, 14 * MSEC);
	assert_int_equal(d.targets.write_ns, ctl_level_ns(c.level));
	assert_non_null(strstr(d.reason, "one step deeper"));
	assert_true(c.probe.under_way);
	assert_true(c.probe.adopt);
}

/* Reads miss after the pulse: it failed as a probe does, the law goes
 * back to a level that holds the writes' P99 of before it, and the next
 * waits twice as long. */
static void test_step_pulse_fails_on_miss(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	struct ctl_decision d;
	int level;

	assert_true(slack_until_pulse(&c, &cur, 9000, 60, &d));
	level = c.level;
	writes_at(&c, &cur, 3 * MSEC, 11000, 4, 12 * MSEC, &d);
	assert_true(d.write);
	assert_true(c.level >= level);
	assert_true((double)cur.write_ns * CTL_HOLD_MIDDLE >= 14.0 * MSEC);
	assert_false(c.probe.under_way);
	assert_int_equal(c.probe.wait, 2 * CTL_PROBE_STEADY);
}

/* Writes at CTL_STEP_WORTH of their free-running rate or more: a step
 * gains them little, and no pulse comes. */
static void test_no_step_pulse_near_free_rate(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	struct ctl_decision d;

	assert_false(slack_until_pulse(&c, &cur, CTL_STEP_WORTH * 16000, 60, &d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_pulse_from_open_edge),
		cmocka_unit_test(test_step_pulse_fails_on_miss),
		cmocka_unit_test(test_no_step_pulse_near_free_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
