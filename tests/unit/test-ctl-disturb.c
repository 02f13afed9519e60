/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: what the control law learns while something else slows the
 * device, and forgets once it has passed: the host's steal (ctl-host.c),
 * a device so slow that reads miss even behind a single write (a GC
 * storm; ctl-levels.c, ctl-regime.c), a tail miss Kyber did not see
 * (ctl-protect.c), a second's spike and the second
 * after it while Kyber cuts back the writes it grew (ctl-spike.c), and
 * a device that slows down long after an O-8 probe began
 * (ctl-interference.c), and the way back after one, which stops on the
 * level that ran the writes at their full rate (ctl-protect.c). Hand-made
 * samples, no plant.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "law-samples.h"

/*
 * The hypervisor's steal over what is usual here marks an interval
 * disturbed; a steady share (a loop device over the VM's own disk) becomes
 * the usual and marks nothing; a disturbance passes after
 * CTL_HOST_CALM_INTERVALS calm intervals.
 */
static void test_host_disturbance(void **state)
{
	struct ctl_host h;
	unsigned passed = 0;

	ctl_host_forget(&h);
	assert_false(ctl_host_update(&h, 0.004));
	assert_false(h.disturbed);	/* the first interval only learns */
	assert_false(ctl_host_update(&h, 0.03));
	assert_false(h.disturbed);	/* under CTL_STEAL_DISTURBED */
	for (unsigned i = 0; i < 6; i++) {
		assert_false(ctl_host_update(&h, 0.25));
		assert_true(h.disturbed);
	}
	assert_false(ctl_host_update(&h, 0.0));
	assert_false(h.disturbed);
	assert_true(ctl_host_update(&h, 0.0));	/* passed */
	assert_false(ctl_host_update(&h, 0.0));	/* once */
	/* A steady 12% for ten minutes is the usual, not a disturbance. */
	for (unsigned i = 0; i < 600; i++)
		passed += ctl_host_update(&h, 0.12);
	assert_int_equal(passed, 1);
	assert_false(h.disturbed);
	assert_false(ctl_host_update(&h, 0.12));
	assert_false(h.disturbed);
	assert_false(ctl_host_update(&h, 0.40));
	assert_true(h.disturbed);
}

/*
 * Host steal made reads miss at the writes' depth 8 (as in a CI run on
 * flashsim: reads 2.7-3.1 ms, goal 2 ms); the law cut the writes to depth
 * 2, and reads came back to 0.7 ms once it passed. The levels that missed
 * during the steal are tried again at once: the writes get more within a
 * few intervals, not after the misses have faded (a minute). The same
 * misses with no steal keep those levels out of use, unless reads went on
 * missing behind a single write (slow_intervals of them at depth 1): then
 * the device itself was slow (a GC storm), and they are tried again too.
 */
static int level_after_misses(double steal, unsigned slow_intervals, bool *held)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;

	engaged_at_2ms(&c, &cur);
	for (unsigned i = 0; i < 4 + slow_intervals; i++) {
		flat_sample(&s, h, 3 * MSEC, i < 4 ? 8000 : 1000, i < 4 ? 8 : 1);
		s.write.total_p99_ns = i < 4 ? 25 * MSEC : 200 * MSEC;
		s.host_steal = steal;
		decide(&c, &s, &cur, &d);
	}
	*held = false;
	for (unsigned i = 0; i < 12; i++) {
		flat_sample(&s, h, 700 * USEC, 2000, 2);
		s.write.total_p99_ns = 100 * MSEC;
		decide(&c, &s, &cur, &d);
		*held |= strstr(d.reason, "missed it lately: holding") != NULL;
		if (getenv("KT_TEST_TRACE"))
			print_message("steal %.2f slow %u t=%u level %d: %s\n", steal, slow_intervals, i,
				      c.level, d.reason);
	}
	return c.level;
}

/* The misses of the first run (steal, slow intervals) go, and the writes
 * get levels the second run's keep out of use. */
static void assert_misses_pass(double steal, unsigned slow, unsigned slow_kept)
{
	bool held, held_kept;
	int level = level_after_misses(steal, slow, &held), kept = level_after_misses(0, slow_kept, &held_kept);

	assert_true(held_kept);
	assert_false(held);
	assert_true(level < kept);
}

static void test_disturbed_misses_pass(void **state)
{
	assert_misses_pass(0.3, 0, 0);
}

/* Reads that go on missing behind a single write: the misses before it,
 * at deeper writes, were the device's, not those levels'. One interval at
 * depth 1 is not yet a verdict (CTL_INFEASIBLE needs two). */
static void test_slow_device_misses_pass(void **state)
{
	assert_misses_pass(0, 3, 1);
}

/*
 * A tail miss (the reads' P99 over the goal while their device P90 is under
 * the read target: Kyber never saw them hurt) counts against its level as
 * one the host disturbed does: it goes once a disturbance passes. An
 * ordinary miss (the P90 over the target too) at the same level stands.
 * Returns the level's misses after a steal episode that came and passed.
 */
static unsigned misses_after_steal(uint64_t read_p90_ns)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;
	int level;

	steady_at_2ms(&c, &cur, 30);
	level = c.level;
	flat_sample(&s, h, 3 * MSEC, 15000, 13);
	s.read.device_p90_ns = read_p90_ns;
	decide(&c, &s, &cur, &d);
	assert_true(ctl_levels_missed_count(&c.levels, level) > 0);
	for (unsigned i = 0; i < 3 + CTL_HOST_CALM_INTERVALS; i++) {
		flat_sample(&s, h, 1700 * USEC, 15000, 13);
		s.host_steal = i < 3 ? 0.3 : 0.0;
		decide(&c, &s, &cur, &d);
	}
	assert_non_null(strstr(d.reason, "host steal back to its usual"));
	return ctl_levels_missed_count(&c.levels, level);
}

static void test_tail_miss_passes_with_a_disturbance(void **state)
{
	assert_int_equal(misses_after_steal(300 * USEC), 0);
	assert_true(misses_after_steal(3 * MSEC) > 0);
}

/* The misses since reads last met the goal stand once they meet it, and
 * go with the disturbance once even the most throttling missed. */
static void test_recent_misses(void **state)
{
	struct ctl_levels l;

	ctl_levels_forget(&l);
	assert_true(ctl_levels_missed(&l, 30, 2, false));
	ctl_levels_recent_stand(&l);
	assert_true(ctl_levels_missed(&l, 31, 1, false));
	ctl_levels_drifted(&l, 32, false);
	ctl_levels_recent_disturbed(&l);
	assert_true(ctl_levels_missed(&l, 31, 1, false));	/* after the verdict: stands */
	ctl_levels_recent_stand(&l);
	ctl_levels_forgive_disturbed(&l);
	assert_int_equal(ctl_levels_missed_count(&l, 30), 2);
	assert_int_equal(ctl_levels_missed_count(&l, 31), 1);
	assert_false(ctl_levels_unusable(&l, 32));
	assert_true(ctl_levels_bad(&l, 30));
}

/* The writes' free-running P99 learned while they ran free but slow (a GC
 * storm) goes back to the usual one once the device is fast again; one
 * learned since that is lower stays. */
static void test_free_p99_after_slow_device(void **state)
{
	struct ctl_regime r;
	struct ctl_sample s;
	hist_t h;

	ctl_regime_forget(&r);
	flat_sample(&s, h, 1 * MSEC, 16000, 128);
	ctl_regime_learn_writes(&r, &s, true);
	assert_true(fabs(r.w_free_ns - 13.0 * MSEC) < 1);
	flat_sample(&s, h, 1 * MSEC, 6000, 128);
	s.write.total_p99_ns = 33 * MSEC;
	ctl_regime_learn_writes(&r, &s, true);
	assert_true(r.w_free_ns > 20.0 * MSEC);
	ctl_regime_device_fast_again(&r);
	assert_true(fabs(r.w_free_ns - 13.0 * MSEC) < 1);
	/* At the usual rate, it is the usual P99. */
	flat_sample(&s, h, 1 * MSEC, 15000, 128);
	s.write.total_p99_ns = 17 * MSEC;
	ctl_regime_learn_writes(&r, &s, true);
	ctl_regime_device_fast_again(&r);
	assert_true(fabs(r.w_free_ns - 15.0 * MSEC) < 1);
	/* Throttled writes faster than either: both come down. */
	s.write.total_p99_ns = 9 * MSEC;
	ctl_regime_learn_writes(&r, &s, false);
	assert_true(fabs(r.w_free_ns_usual - 9.0 * MSEC) < 1);
}

/*
 * A far miss after a steady run is held a second: a spike passes, and
 * neither the level's record nor the metric's noise learns from it; a
 * miss that repeats is cut a second later. A steady run banks two holds
 * at most: a second spike soon after is held too, a third is cut, and
 * the seconds within the goal between them bank toward the next.
 */
static void test_spike_held_a_second(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC }, held;
	struct controller c, repeat;
	struct ctl_decision d;
	double ceiling;

	steady_fork(&c, &repeat, &cur, &held);
	ceiling = ctl_metric_ceiling(&c.metric);
	held_writes(&c, &cur, 6 * MSEC, &d);
	assert_false(d.write);
	assert_non_null(strstr(d.reason, "a spike passes"));
	held_writes(&c, &cur, 1700 * USEC, &d);
	assert_false(d.write);
	assert_int_equal(ctl_levels_missed_count(&c.levels, c.level), 0);
	assert_true(ctl_metric_ceiling(&c.metric) == ceiling);
	/* Another spike a second later: held on the bank's second hold. */
	held_writes(&c, &cur, 6 * MSEC, &d);
	assert_false(d.write);
	assert_non_null(strstr(d.reason, "a spike passes"));
	held_writes(&c, &cur, 1700 * USEC, &d);
	assert_false(d.write);
	/* A second within the goal left over from the first hold, and three
	 * more: one short of a third hold, so the next spike is a miss. */
	for (unsigned i = 0; i < CTL_SPIKE_STEADY - 3; i++)
		held_writes(&c, &cur, 1700 * USEC, &d);
	assert_false(d.write);
	held_writes(&c, &cur, 6 * MSEC, &d);
	assert_true(d.write);
	assert_true(cur.write_ns > held.write_ns);

	/* A miss that repeats: cut on its second second. */
	cur = held;
	held_writes(&repeat, &cur, 6 * MSEC, &d);
	assert_false(d.write);
	held_writes(&repeat, &cur, 6 * MSEC, &d);
	assert_true(d.write);
	assert_true(cur.write_ns > held.write_ns);
}

/* One interval of reads at read_ns beside writes Kyber grew to `depth`,
 * each write taking write_p99_ns at the tail. */
static void grown_writes(struct controller *c, struct kyber_targets *cur, uint64_t read_ns, uint32_t depth,
			 uint64_t write_p99_ns, struct ctl_decision *d)
{
	writes_at(c, cur, read_ns, 15000, depth, write_p99_ns, d);
}

/*
 * A host stall slows the writes too, and Kyber grows them meanwhile: the
 * second after the spike, reads miss behind writes at twice the depth
 * though each is as fast as before the stall. That second is the spike's
 * and held as well (Kyber cuts them back by itself); a third miss is cut.
 * Writes still slower than before (a slow device) are no aftermath: cut
 * on the second second, as before.
 */
static void test_spike_aftermath_held(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC }, held;
	struct controller c, slow;
	struct ctl_decision d;

	steady_fork(&c, &slow, &cur, &held);
	held_writes(&c, &cur, 6 * MSEC, &d);
	assert_false(d.write);
	grown_writes(&c, &cur, 3 * MSEC, 26, 13 * MSEC, &d);
	assert_false(d.write);
	assert_non_null(strstr(d.reason, "right after a spike"));
	assert_int_equal(ctl_levels_missed_count(&c.levels, c.level), 0);
	grown_writes(&c, &cur, 3 * MSEC, 20, 13 * MSEC, &d);
	assert_true(d.write);
	assert_true(cur.write_ns > held.write_ns);

	cur = held;
	held_writes(&slow, &cur, 6 * MSEC, &d);
	assert_false(d.write);
	grown_writes(&slow, &cur, 3 * MSEC, 26, 20 * MSEC, &d);
	assert_true(d.write);
	assert_true(cur.write_ns > held.write_ns);
}

/*
 * The baseline is the device as it was when throttling began: a probe
 * that has not cut the writes for real within CTL_O8_PROBE_INTERVALS ends
 * without a verdict, and a device that slows down later (a GC storm: the
 * writes at 40% by themselves, the reads as bad as before throttling)
 * does not pass for O-8.
 */
static void test_o8_probe_expires(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;

	steady_at_2ms(&c, &cur, CTL_O8_PROBE_INTERVALS + 5);
	for (unsigned i = 0; i < 20; i++) {
		flat_sample(&s, h, 8 * MSEC, 6400, 4);
		decide(&c, &s, &cur, &d);
		assert_null(strstr(d.reason, "O-8"));
	}
	assert_true(c.protecting);
}

/*
 * After a disturbance the writes are held well above the level that ran
 * them at their free-running rate before it, and reads have room: the
 * slack steps, grown while reads stayed far under the goal, reach past
 * that level. The law stops on it, one change, instead of taking
 * throttling off (whose reads, at their free-running P99, would start it
 * over from a cut) or stepping to a level under it that gains the writes
 * nothing. Without such a level the step goes where it reaches.
 */
static int relaxed_from(struct controller *c, struct kyber_targets *cur, int above_open,
			uint64_t write_p99_ns)
{
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;

	memset(&s, 0, sizeof(s));	/* the open level is the learned one's */
	c->level = ctl_open_level(c, &s) + above_open;
	c->lower_step = CTL_LOWER_MAX;
	c->frozen = true;	/* no freeze: the writes were held there already */
	cur->write_ns = ctl_level_ns(c->level);
	for (unsigned i = 0; i < 2 * CTL_SLACK_INTERVALS; i++) {
		flat_sample(&s, h, 300 * USEC, 12000, 8);
		s.write.total_p99_ns = write_p99_ns;
		decide(c, &s, cur, &d);
		if (d.write)
			return c->protecting ? c->level : -1;
	}
	fail_msg("no step down in %u intervals of slack", 2 * CTL_SLACK_INTERVALS);
	return -2;
}

static void test_return_stops_at_full_rate_level(void **state)
{
	struct kyber_targets start = { 2 * MSEC, 10 * MSEC }, cur;
	struct controller engaged, c;
	struct ctl_sample s;
	int open, step;

	engaged_at_2ms(&engaged, &start);
	/* The engaging miss at the open point has faded (two half-lives). */
	ctl_levels_forgive_below(&engaged.levels, 0);
	memset(&s, 0, sizeof(s));
	open = ctl_open_level(&engaged, &s);

	/* A step to the open point stops on the full-rate level over it. */
	c = engaged, cur = start;
	ctl_levels_met(&c.levels, open + 1, 16000, 13 * MSEC);
	assert_int_equal(relaxed_from(&c, &cur, 4, 17 * MSEC), open + 1);
	assert_int_equal(cur.write_ns, ctl_level_ns(open + 1));
	c = engaged, cur = start;
	assert_int_equal(relaxed_from(&c, &cur, 4, 17 * MSEC), -1);

	/* So does a grown step that ends short of the open point: writes
	 * whose P99 is over the open point's target (40 ms) grow at the
	 * levels above it, so the step stops before the open point. */
	c = engaged, cur = start;
	step = relaxed_from(&c, &cur, 2 * CTL_LOWER_MAX, 40 * MSEC);
	assert_in_range(step, open + 1, open + 2 * CTL_LOWER_MAX - 2);
	c = engaged, cur = start;
	ctl_levels_met(&c.levels, step + 1, 16000, 13 * MSEC);
	assert_int_equal(relaxed_from(&c, &cur, 2 * CTL_LOWER_MAX, 40 * MSEC), step + 1);
}

/*
 * A read target the tail rule lowered comes back with the slack steps,
 * as many of its steps as the level takes: while reads stay far under
 * the goal the level's steps grow, and so do the read target's.
 */
static void test_read_target_back_with_the_steps(void **state)
{
	struct kyber_targets start = { 2 * MSEC, 10 * MSEC }, cur = start;
	struct controller c;
	double lowered = 0.2;

	engaged_at_2ms(&c, &start);
	ctl_levels_forgive_below(&c.levels, 0);
	c.read_scale = lowered;
	cur.read_ns = ctl_protect_read_target(&c);
	assert_true(relaxed_from(&c, &cur, 2 * CTL_LOWER_MAX, 40 * MSEC) >= 0);
	/* A step grown past one (reads far under the goal), and the read
	 * target back by at least two steps of its own, or all the way. */
	assert_true(c.lower_step >= 2);
	assert_true(c.read_scale >= MIN(lowered / pow(CTL_READ_SCALE_STEP, 2), 1.0) - 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_disturbance),
		cmocka_unit_test(test_disturbed_misses_pass),
		cmocka_unit_test(test_slow_device_misses_pass),
		cmocka_unit_test(test_tail_miss_passes_with_a_disturbance),
		cmocka_unit_test(test_recent_misses),
		cmocka_unit_test(test_free_p99_after_slow_device),
		cmocka_unit_test(test_spike_held_a_second),
		cmocka_unit_test(test_spike_aftermath_held),
		cmocka_unit_test(test_o8_probe_expires),
		cmocka_unit_test(test_return_stops_at_full_rate_level),
		cmocka_unit_test(test_read_target_back_with_the_steps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
