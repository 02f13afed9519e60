/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: the grow pulse's sequence of write targets (ctl-pulse.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ctl-pulse.h"

#define MSEC 1000000ULL

static struct ctl_decision pulse_decision(void)
{
	struct ctl_decision d;

	memset(&d, 0, sizeof(d));
	d.write = true;
	d.targets = (struct kyber_targets) { 4 * MSEC, 500 * MSEC };
	d.pulse_write_ns = 380 * MSEC;
	d.pulse_drain_write_ns = 640 * MSEC;
	d.pulse_drain_ns = 765 * MSEC;
	return d;
}

/* Grow until the depth changes, drain for one P99, measure for another,
 * then the hold at the measured P99 / PULSE_HOLD_AT. */
static void test_pulse_grows_drains_holds(void **state)
{
	struct ctl_decision d = pulse_decision();
	struct pulse p;
	uint64_t w = 0, t = 0;

	assert_int_equal(ctl_pulse_start(&p, &d, 1, t), 380 * MSEC);
	assert_true(ctl_pulse_active(&p));
	for (t = MSEC; t < 200 * MSEC; t += MSEC)
		assert_int_equal(ctl_pulse_poll(&p, 1, t, 0, &w), PULSE_WAIT);
	assert_int_equal(ctl_pulse_poll(&p, 2, t, 0, &w), PULSE_WRITE);
	assert_int_equal(w, 640 * MSEC);
	assert_int_equal(ctl_pulse_poll(&p, 2, t + 764 * MSEC, 0, &w), PULSE_WAIT);
	assert_int_equal(ctl_pulse_poll(&p, 2, t + 765 * MSEC, 0, &w), PULSE_MEASURE);
	t += 765 * MSEC;
	assert_int_equal(ctl_pulse_poll(&p, 2, t + 700 * MSEC, 383 * MSEC, &w), PULSE_WAIT);
	assert_int_equal(ctl_pulse_poll(&p, 2, t + 765 * MSEC, 383 * MSEC, &w), PULSE_DONE);
	assert_int_equal(w, (uint64_t)(383 * MSEC / PULSE_HOLD_AT));
	assert_false(ctl_pulse_active(&p));
}

/* Kyber never grows the writes: after PULSE_GROW_MAX_NS the decision's
 * own target, and nothing measured leaves it too. */
static void test_pulse_without_growth(void **state)
{
	struct ctl_decision d = pulse_decision();
	struct pulse p;
	uint64_t w = 0;

	(void)ctl_pulse_start(&p, &d, 1, 5 * MSEC);
	assert_int_equal(ctl_pulse_poll(&p, 1, 5 * MSEC + PULSE_GROW_MAX_NS - 1, 0, &w), PULSE_WAIT);
	assert_int_equal(ctl_pulse_poll(&p, 1, 5 * MSEC + PULSE_GROW_MAX_NS, 0, &w), PULSE_DONE);
	assert_int_equal(w, 500 * MSEC);

	(void)ctl_pulse_start(&p, &d, 1, 0);
	assert_int_equal(ctl_pulse_poll(&p, 2, 10 * MSEC, 0, &w), PULSE_WRITE);
	assert_int_equal(ctl_pulse_poll(&p, 2, 775 * MSEC, 0, &w), PULSE_MEASURE);
	assert_int_equal(ctl_pulse_poll(&p, 2, 1540 * MSEC, 0, &w), PULSE_DONE);
	assert_int_equal(w, 500 * MSEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pulse_grows_drains_holds),
		cmocka_unit_test(test_pulse_without_growth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
