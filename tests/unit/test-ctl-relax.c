/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: how the control law gives the writes back once the reads
 * allow it (ctl-protect.c, ctl-probe.c): slack and its steps down, probes
 * from within the goal and what a miss after one does, and the pull-up of
 * writes whose rate dropped at a level. Hand-made samples, no plant
 * (test-ctl-law.c has the law's other rules).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "law-samples.h"

/*
 * A level that held the writes at one rate and holds them at a third of it
 * now pulls them up (pull_up(): a write target at the P99 they had at that
 * rate, until they are back), but only once the lower rate lasts: the
 * interval in which the writes stop is at a lower rate too, and pulling on
 * it would grow writes that are about to come back by themselves. The
 * level's rate is near the free-running one (16000 a second), where a step
 * pulse gains nothing (CTL_STEP_WORTH) and the level stays.
 */
#define LEVEL_IOPS 14000.0

static bool pulled_within(struct controller *c, struct kyber_targets *cur, uint64_t read_ns, double write_iops,
			  unsigned n, uint64_t *pull_ns)
{
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;
	bool seen = false;

	for (unsigned i = 0; i < n; i++) {
		flat_sample(&s, h, read_ns, write_iops, 13);
		/* The same writers, slower: their latency grows (Little's law). */
		s.write.total_p99_ns = (uint64_t)(13 * MSEC * LEVEL_IOPS / write_iops);
		decide(c, &s, cur, &d);
		if (strstr(d.reason, "pull them up")) {
			seen = true;
			*pull_ns = d.targets.write_ns;
		}
	}
	return seen;
}

static void test_pull_up_needs_a_lasting_drop(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC }, edge_cur;
	struct controller c, edge;

	uint64_t pull_ns = 0, level_ns;

	engaged_at_2ms(&c, &cur);
	/* A level that meets the goal with LEVEL_IOPS writes a second. */
	assert_false(pulled_within(&c, &cur, 1000 * USEC, LEVEL_IOPS, 20, &pull_ns));
	level_ns = cur.write_ns;
	edge = c;
	/* Each lone interval at a third of the rate, between normal ones, as
	 * when writes stop (or pause) within an interval: never pulled. With
	 * fewer writes the reads are faster (the writes interfere: O-8 does
	 * not take over). */
	edge_cur = cur;
	for (unsigned i = 0; i < 6; i++) {
		assert_false(pulled_within(&edge, &edge_cur, 1000 * USEC, LEVEL_IOPS, 2, &pull_ns));
		assert_false(pulled_within(&edge, &edge_cur, 800 * USEC, LEVEL_IOPS / 3, 1, &pull_ns));
	}
	/* A third of the rate for good: pulled up to the P99 they had at
	 * LEVEL_IOPS, under the level's target (Kyber grows them). */
	assert_true(pulled_within(&c, &cur, 800 * USEC, LEVEL_IOPS / 3, 10, &pull_ns));
	assert_int_equal(pull_ns, 13 * MSEC);
	assert_true(pull_ns < level_ns);
	/* Back at the rate, reads within the goal but short of slack (no
	 * step down either): the level's own target again. */
	assert_false(pulled_within(&c, &cur, 1500 * USEC, LEVEL_IOPS, 1, &pull_ns));
	assert_int_equal(cur.write_ns, level_ns);
}

/*
 * Reads well under the goal in an interval in which the writes stopped part
 * way say nothing of the level: the writes get no less throttling for it,
 * and come back to the level that held them. Slack at the writes' usual
 * rate still gives them more.
 */
static void slow_writes(struct ctl_sample *s, hist_t h, uint64_t read_ns, double write_iops)
{
	flat_sample(s, h, read_ns, write_iops, 10);
	s->write.total_p99_ns = 20 * MSEC;	/* throttled: 200 outstanding at 10k/s */
}

static void test_slack_of_a_pause(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC }, held;
	struct controller c, fresh;
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;

	engaged_at_2ms(&c, &cur);
	for (unsigned i = 0; i < 6; i++) {
		slow_writes(&s, h, 1500 * USEC, 10000);
		decide(&c, &s, &cur, &d);
	}
	held = cur;
	/* Slack for all but the last interval the law waits for... */
	for (unsigned i = 0; c.slack_streak < CTL_SLACK_INTERVALS - 1; i++) {
		assert_true(i < 10);
		slow_writes(&s, h, 600 * USEC, 10000);
		decide(&c, &s, &cur, &d);
	}
	assert_int_equal(cur.write_ns, held.write_ns);
	fresh = c;
	/* ...then the interval in which the writes stop: no step down. */
	slow_writes(&s, h, 500 * USEC, 3000);
	decide(&c, &s, &cur, &d);
	assert_int_equal(cur.write_ns, held.write_ns);
	assert_non_null(strstr(d.reason, "pause"));
	/* The same slack at the writes' rate: less throttling. */
	slow_writes(&s, h, 500 * USEC, 10000);
	decide(&fresh, &s, &held, &d);
	assert_true(d.write && held.write_ns < cur.write_ns);
}

/*
 * Kyber grows a domain by whole requests: from depth 1 only once its P99
 * is over 7/4 of its target. A step down for more writes goes at least
 * that far; a smaller one would change nothing and cost a target write.
 */
static void test_step_down_reaches_growth(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s;
	uint64_t before = 0;
	hist_t h;

	engaged_at_2ms(&c, &cur);
	for (unsigned i = 0; i < 12 && !before; i++) {
		uint64_t was = cur.write_ns;

		flat_sample(&s, h, 500 * USEC, 1700, 1);
		s.write.total_p99_ns = 118 * MSEC;	/* 200 writers at 1700/s */
		decide(&c, &s, &cur, &d);
		if (d.write && strstr(d.reason, "less write throttling"))
			before = was;
	}
	/* From a level at which Kyber held them (P99 within 7/4 of it). */
	assert_true(before > 0 && (double)before * 1.75 > 118.0 * MSEC);
	assert_true((double)cur.write_ns * 1.75 < 118.0 * MSEC);
}

/* Intervals of reads at read_ns beside writes held at depth 8 (12000
 * IOPS, P99 17 ms), until the law steps down (at most max): how many it
 * took, or max. */
static unsigned until_step_down(struct controller *c, struct kyber_targets *cur, uint64_t read_ns, unsigned max)
{
	struct ctl_decision d;
	unsigned i;

	for (i = 0; i < max; i++) {
		writes_at(c, cur, read_ns, 12000, 8, 17 * MSEC, &d);
		if (d.write && strstr(d.reason, "less write throttling"))
			return i + 1;
	}
	return max;
}

/*
 * After the engaging cut, the first step down comes with the first second
 * of slack, as soon as the cut's miss has left the metric's window: the
 * seconds before it, with room for two steps, counted towards the streak.
 * A miss after that first step is the law's own (or a disturbance's):
 * then the streak starts only once the window is clear again.
 */
static void test_first_step_after_engaging(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	unsigned n;

	engaged_at_2ms(&c, &cur);
	assert_int_equal(until_step_down(&c, &cur, 500 * USEC, 12), CTL_WINDOW);
	assert_true(c.relaxed);
	/* A miss, then the same room: the window, then a whole streak. */
	writes_at(&c, &cur, 3 * MSEC, 12000, 8, 17 * MSEC, &(struct ctl_decision){});
	n = until_step_down(&c, &cur, 500 * USEC, 20);
	assert_true(n >= CTL_WINDOW + CTL_SLACK_INTERVALS - 1);
	assert_true(n < 20);
}

/* Writes held at a 41 ms write target: their P99 near it. */
static void held_sample(struct ctl_sample *s, hist_t h, uint64_t read_ns)
{
	flat_sample(s, h, read_ns, 9000, 6);
	s->write.total_p99_ns = 35 * MSEC;
}

/* A controller for read-p99=2ms seeded at a 40 ms write target (writes
 * free at 13 ms and 16000 IOPS), and the targets it put in force. */
static void seeded_at_40ms(struct controller *c, struct kyber_targets *cur)
{
	struct goal g;

	assert_int_equal(goal_parse("read-p99=2ms", &g, NULL), 0);
	controller_init(c, &g);
	controller_seed(c, 40 * MSEC, 13 * MSEC, 16000);
	cur->read_ns = ctl_protect_read_target(c);
	cur->write_ns = ctl_level_ns(c->level);
}

/*
 * A miss right after a step down goes back to the level stepped from,
 * which met the goal, however far over the goal the reads were: a spike
 * that falls just after a step is not the step's measure.
 */
static void test_miss_after_step_goes_back(void **state)
{
	struct kyber_targets cur, stepped_from = {};
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;

	seeded_at_40ms(&c, &cur);
	for (unsigned i = 0; i < 12; i++) {
		held_sample(&s, h, 1700 * USEC);
		decide(&c, &s, &cur, &d);
	}
	/* Room: steps down, each level meeting the goal, until the second. */
	for (unsigned i = 0, steps = 0; i < 20 && steps < 2; i++) {
		struct kyber_targets before = cur;

		held_sample(&s, h, 500 * USEC);
		decide(&c, &s, &cur, &d);
		if (d.write) {
			assert_true(cur.write_ns < before.write_ns);
			stepped_from = before;
			steps++;
		}
	}
	assert_true(stepped_from.write_ns > cur.write_ns);
	/* 4x over the goal at once: a cut by that would go to ~280 ms. */
	held_sample(&s, h, 8 * MSEC);
	decide(&c, &s, &cur, &d);
	assert_true(d.write);
	assert_true(cur.write_ns == stepped_from.write_ns);
}

/* Seeded at 40 ms (before: its targets), then reads steady within the
 * goal (1.7 ms against 2 ms) until the probe steps down, at most
 * CTL_PROBE_STEADY + 2 intervals: how many it took. */
static unsigned probed_at_40ms(struct controller *c, struct kyber_targets *cur, struct kyber_targets *before)
{
	struct ctl_decision d;
	struct ctl_sample s;
	unsigned i;
	hist_t h;

	seeded_at_40ms(c, cur);
	*before = *cur;
	for (i = 0; i < CTL_PROBE_STEADY + 2 && cur->write_ns == before->write_ns; i++) {
		held_sample(&s, h, 1700 * USEC);
		decide(c, &s, cur, &d);
	}
	assert_non_null(strstr(d.reason, "steady within"));
	return i;
}

/*
 * Reads within the goal but short of slack for a steady run: a probe of
 * less throttling. A miss right after it goes back, the interval after
 * that (the probe's writes draining) is held, and the next probe waits
 * twice as long, and not onto the level that missed.
 */
static void test_probe_from_within_goal(void **state)
{
	struct kyber_targets cur, before;
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s;
	unsigned i;
	hist_t h;

	assert_int_equal(probed_at_40ms(&c, &cur, &before), CTL_PROBE_STEADY + 1);
	assert_true(cur.write_ns < before.write_ns);
	/* Kyber grew the writes, and reads miss: back, a level that holds
	 * the writes' P99 of before the probe at least. */
	held_sample(&s, h, 2500 * USEC);
	s.write.kyber_depth = 9;
	decide(&c, &s, &cur, &d);
	assert_true(d.write);
	assert_true(cur.write_ns >= before.write_ns);
	assert_non_null(strstr(d.reason, "after a probe"));
	before = cur;
	held_sample(&s, h, 2500 * USEC);
	decide(&c, &s, &cur, &d);
	assert_false(d.write);
	assert_non_null(strstr(d.reason, "drain"));
	/* The next probe waits twice the run, and never onto the level that
	 * missed before its record has faded. */
	assert_int_equal(c.probe.wait, 2 * CTL_PROBE_STEADY);
	for (i = 0; i < 2 * CTL_PROBE_STEADY; i++) {
		held_sample(&s, h, 1700 * USEC);
		decide(&c, &s, &cur, &d);
		assert_false(d.write);
	}
}

/*
 * A far miss right after the probe's step is held a second, as a spike
 * after a steady run is (ctl-spike.c): reads within the goal again, the
 * probe goes on at its level; a second far miss goes back, a second later
 * than without the hold, and fails the probe.
 */
static void test_far_miss_after_probe_held(void **state)
{
	struct kyber_targets cur, before, probed;
	struct controller c, again;
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;

	probed_at_40ms(&c, &cur, &before);
	assert_true(c.probe.under_way);
	probed = cur;
	again = c;
	held_sample(&s, h, 4 * MSEC);
	decide(&c, &s, &cur, &d);
	assert_false(d.write);
	assert_non_null(strstr(d.reason, "right after a step"));
	held_sample(&s, h, 1700 * USEC);
	decide(&c, &s, &cur, &d);
	assert_false(d.write);
	assert_true(c.probe.under_way);
	assert_true(cur.write_ns == probed.write_ns);

	cur = probed;
	held_sample(&s, h, 4 * MSEC);
	decide(&again, &s, &cur, &d);
	assert_false(d.write);
	held_sample(&s, h, 4 * MSEC);
	decide(&again, &s, &cur, &d);
	assert_true(d.write);
	assert_true(cur.write_ns >= before.write_ns);
	assert_non_null(strstr(d.reason, "after a probe"));
	assert_int_equal(again.probe.wait, 2 * CTL_PROBE_STEADY);
}

/* Kyber grows the writes past the probed level's hold, at their free
 * rate: the level is left as after any drift, and the probe has failed
 * (the next one waits twice as long), not held by the move. */
static void test_drift_fails_probe(void **state)
{
	struct kyber_targets cur, before;
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;

	probed_at_40ms(&c, &cur, &before);
	assert_true(cur.write_ns < before.write_ns);
	assert_true(c.probe.under_way);
	for (unsigned i = 0; i < 2; i++) {
		flat_sample(&s, h, 1700 * USEC, 15800, 6);
		decide(&c, &s, &cur, &d);
		assert_false(d.write);
	}
	flat_sample(&s, h, 1700 * USEC, 15800, 9);
	decide(&c, &s, &cur, &d);
	assert_true(d.write);
	assert_non_null(strstr(d.reason, "grew"));
	assert_false(c.probe.under_way);
	assert_int_equal(c.probe.wait, 2 * CTL_PROBE_STEADY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pull_up_needs_a_lasting_drop),
		cmocka_unit_test(test_slack_of_a_pause),
		cmocka_unit_test(test_step_down_reaches_growth),
		cmocka_unit_test(test_first_step_after_engaging),
		cmocka_unit_test(test_miss_after_step_goes_back),
		cmocka_unit_test(test_probe_from_within_goal),
		cmocka_unit_test(test_far_miss_after_probe_held),
		cmocka_unit_test(test_drift_fails_probe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
