/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: the writes' latency scatter at one depth (ctl-scatter.c) and
 * the holds the law sets by it (ctl-protect.c: a freeze, a drift's way up).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "law-samples.h"

/* Settled seconds at one depth count; an unsettled one (the depth new) and
 * another depth's do not, and the ring keeps the last
 * CTL_SCATTER_INTERVALS. */
static void test_scatter_ring(void **state)
{
	struct ctl_scatter sc;

	ctl_scatter_forget(&sc);
	assert_int_equal(ctl_scatter_high(&sc, 13), 0);
	ctl_scatter_add(&sc, 13, 20, 40 * MSEC);	/* first second at 13: not settled */
	assert_int_equal(ctl_scatter_high(&sc, 13), 0);
	ctl_scatter_add(&sc, 13, 13, 27 * MSEC);
	ctl_scatter_add(&sc, 13, 13, 14 * MSEC);
	assert_int_equal(ctl_scatter_high(&sc, 13), 27 * MSEC);
	assert_int_equal(ctl_scatter_high(&sc, 14), 0);
	for (unsigned i = 0; i < CTL_SCATTER_INTERVALS - 1; i++)
		ctl_scatter_add(&sc, 13, 13, 15 * MSEC);
	assert_int_equal(ctl_scatter_high(&sc, 13), 15 * MSEC);
	ctl_scatter_add(&sc, 14, 13, 30 * MSEC);	/* a new depth starts over */
	assert_int_equal(ctl_scatter_high(&sc, 14), 0);
	assert_int_equal(ctl_scatter_high(&sc, 13), 0);
	ctl_scatter_add(&sc, 0, 14, 30 * MSEC);		/* depth unknown */
	assert_int_equal(ctl_scatter_high(&sc, 0), 0);
}

/* One interval of reads at read_ns beside writes at their free-running
 * rate (engaged_at_2ms()'s 16,000 a second, give or take a second's
 * noise) at Kyber's write depth `depth`, their P99 at write_p99_ns. */
static void scattered(struct controller *c, struct kyber_targets *cur, uint64_t read_ns, uint32_t depth,
		      uint64_t write_p99_ns, struct ctl_decision *d)
{
	writes_at(c, cur, read_ns, 15900, depth, write_p99_ns, d);
}

/*
 * Reads over the goal for two seconds after the engage, the writes' P99 at
 * 27 ms; then within it at depth 13, their P99 at 14 ms. The freeze's
 * target, where the second high second ran at depth `high_depth`.
 */
static uint64_t frozen_after_scatter(uint32_t high_depth)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	struct ctl_decision d;

	engaged_at_2ms(&c, &cur);
	for (unsigned i = 0; i < 2; i++)
		scattered(&c, &cur, 3 * MSEC, i ? high_depth : 13, 27 * MSEC, &d);
	for (unsigned i = 0; i < 3; i++)
		scattered(&c, &cur, 1500 * USEC, 13, 14 * MSEC, &d);
	return cur.write_ns;
}

/* A freeze holds the writes by the highest P99 their depth showed lately,
 * not by the second it happens on: a target at 14 ms / 0.8 would sit
 * inside their scatter. A P99 seen at another depth is another load's. */
static void test_freeze_holds_the_scatter(void **state)
{
	uint64_t same = frozen_after_scatter(13), other = frozen_after_scatter(20);

	assert_true(same >= 27 * MSEC / CTL_HOLD_MIDDLE);
	assert_true(same < 27 * MSEC / CTL_HOLD_MIDDLE * 1.2);
	assert_true(other >= 14 * MSEC / CTL_HOLD_MIDDLE);
	assert_true(other < 14 * MSEC / CTL_HOLD_MIDDLE * 1.2);
}

/*
 * Kyber grows writes at their free-running rate (13 -> 16, their P99 at
 * 19 ms): the drift's way up goes to the level that holds them there, or
 * past it where that level drifted lately (marked), since the writes
 * would grow there again. The level reached, with or without the mark.
 */
static int drift_lands(bool mark)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	struct ctl_decision d;

	engaged_at_2ms(&c, &cur);
	for (unsigned i = 0; i < 6; i++)
		scattered(&c, &cur, 1500 * USEC, 13, 13 * MSEC, &d);
	if (mark)
		ctl_levels_drifted(&c.levels, ctl_level_at_least(19 * MSEC / CTL_HOLD_MIDDLE), false);
	scattered(&c, &cur, 1500 * USEC, 16, 19 * MSEC, &d);
	assert_non_null(strstr(d.reason, "grew"));
	return c.level;
}

static void test_drift_passes_a_marked_level(void **state)
{
	int hold = ctl_level_at_least(19 * MSEC / CTL_HOLD_MIDDLE);

	assert_int_equal(drift_lands(false), hold);
	assert_int_equal(drift_lands(true), hold + 1);
}

/* A new workload starts the record over, as a new depth does: the
 * writes' latency at the same depth was another load's. */
static void test_new_workload_forgets_the_scatter(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;

	engaged_at_2ms(&c, &cur);
	for (unsigned i = 0; i < 2; i++)
		scattered(&c, &cur, 1500 * USEC, 13, 27 * MSEC, &d);
	assert_int_equal(ctl_scatter_high(&c.scatter, 13), 27 * MSEC);
	flat_sample(&s, h, 1500 * USEC, 15900, 13);
	s.read.outstanding = 4 * CTL_SHIFT_FACTOR;	/* more reads beside the writes */
	decide(&c, &s, &cur, &d);
	assert_int_equal(ctl_scatter_high(&c.scatter, 13), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scatter_ring),
		cmocka_unit_test(test_freeze_holds_the_scatter),
		cmocka_unit_test(test_drift_passes_a_marked_level),
		cmocka_unit_test(test_new_workload_forgets_the_scatter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
