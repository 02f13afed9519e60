/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: which new targets are written (ctl-targets.c). A read
 * target Kyber cannot tell from the one in force, because both count the
 * reads as hurt at every decision, is not rewritten; and advice is what
 * would be written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "law-samples.h"

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

	assert_false(ctl_keep_in_force(&s, &cur, &t));
	assert_int_equal(t.read_ns, cur.read_ns);

	t = (struct kyber_targets) { 290 * USEC, 8 * MSEC };
	assert_false(ctl_keep_in_force(&s, &cur, &t));
	assert_int_equal(t.read_ns, cur.read_ns);
}

/* A write target that moves is still written, with the read target in
 * force. */
static void test_hurt_read_kept_beside_a_new_write_target(void **state)
{
	struct ctl_sample s = reads_at(400 * USEC);
	struct kyber_targets cur = { 200 * USEC, 8 * MSEC }, t = { 100 * USEC, 16 * MSEC };

	assert_true(ctl_keep_in_force(&s, &cur, &t));
	assert_int_equal(t.read_ns, 200 * USEC);
	assert_int_equal(t.write_ns, 16 * MSEC);
}

/* Over the margin, near the P90, either target may leave the reads
 * counted as fine in some of Kyber's decisions: written. */
static void test_read_near_its_p90_written(void **state)
{
	struct ctl_sample s = reads_at(400 * USEC);
	struct kyber_targets cur = { 200 * USEC, 8 * MSEC }, t = { 320 * USEC, 8 * MSEC };

	assert_true(ctl_keep_in_force(&s, &cur, &t));
	assert_int_equal(t.read_ns, 320 * USEC);

	cur.read_ns = 600 * USEC;
	t.read_ns = 100 * USEC;
	assert_true(ctl_keep_in_force(&s, &cur, &t));
	assert_int_equal(t.read_ns, 100 * USEC);
}

/* No reads in the interval: nothing says how Kyber counts them. */
static void test_no_reads_leaves_target(void **state)
{
	struct ctl_sample s = reads_at(400 * USEC);
	struct kyber_targets cur = { 200 * USEC, 8 * MSEC }, t = { 100 * USEC, 8 * MSEC };

	s.read.completed = 0;
	assert_true(ctl_keep_in_force(&s, &cur, &t));
	assert_int_equal(t.read_ns, 100 * USEC);
}

/* Engaging on reads at 8 ms, for read-p99=2ms, from targets in force. */
static struct ctl_decision engage(enum goal_mode mode, const struct kyber_targets *in_force)
{
	struct kyber_targets cur = *in_force;
	struct controller c;
	struct ctl_decision d;

	first_at_8ms(&c, mode, &cur, 128, &d);
	return d;
}

/* Advice is what latency mode would write from the same targets: the
 * brake as computed on engaging, even near the read target in force. */
static void test_advice_is_what_latency_writes(void **state)
{
	const struct kyber_targets open = { KYBER_TARGET_MAX_NS, KYBER_TARGET_MAX_NS };
	struct ctl_decision latency = engage(GOAL_MODE_LATENCY, &open), advice;
	struct kyber_targets near = { latency.targets.read_ns * 6 / 5, 100 * USEC };

	advice = engage(GOAL_MODE_ADVISE, &open);
	assert_int_equal(advice.state, CTL_ADVISE);
	assert_false(advice.write);
	assert_memory_equal(&advice.targets, &latency.targets, sizeof(latency.targets));

	latency = engage(GOAL_MODE_LATENCY, &near);
	advice = engage(GOAL_MODE_ADVISE, &near);
	assert_true(latency.write);
	assert_memory_equal(&advice.targets, &latency.targets, sizeof(latency.targets));
}

/* Reads at 8 ms in total but 100 us at the device, beside writes whose
 * device P90 is 300 ms while their P99 in total stays at 13 ms. No device
 * gives that sample; it is what puts the brake, sized from the writes'
 * total latency, under their device P90 with the read target over the
 * reads' device P90: the harmful pair, which ctl_never_harmful() mends. */
static struct ctl_decision engage_slow_writes(enum goal_mode mode)
{
	struct kyber_targets cur = { KYBER_TARGET_MAX_NS, KYBER_TARGET_MAX_NS };
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;

	new_at_8ms(&c, mode, &s, h, 128);
	s.read.device_p90_ns = 100 * USEC;
	s.write.device_p90_ns = 300 * MSEC;
	decide(&c, &s, &cur, &d);
	return d;
}

/* Advice is never the harmful pair either: the write target goes up to
 * CTL_WRITE_FLOOR x the writes' device P90, as latency mode writes it. */
static void test_advice_never_harmful(void **state)
{
	struct ctl_decision latency = engage_slow_writes(GOAL_MODE_LATENCY);
	struct ctl_decision advice = engage_slow_writes(GOAL_MODE_ADVISE);

	assert_true(latency.write);
	assert_true(latency.targets.read_ns > 100 * USEC);
	assert_int_equal(latency.targets.write_ns, (uint64_t)(CTL_WRITE_FLOOR * 300 * MSEC));
	assert_memory_equal(&advice.targets, &latency.targets, sizeof(latency.targets));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hurt_read_kept),
		cmocka_unit_test(test_hurt_read_kept_beside_a_new_write_target),
		cmocka_unit_test(test_read_near_its_p90_written),
		cmocka_unit_test(test_no_reads_leaves_target),
		cmocka_unit_test(test_advice_is_what_latency_writes),
		cmocka_unit_test(test_advice_never_harmful),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
