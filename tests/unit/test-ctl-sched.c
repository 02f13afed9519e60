/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: the scheduler choice (daemon/controller/ctl-sched.c), its
 * rules on their own and closed-loop with the controller against the
 * simulated plant (none or Kyber, tools/kyber-sim/).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "macro.h"
#include "tuner-loop.h"

static struct goal goal_of(const char *text)
{
	struct goal g;

	assert_int_equal(goal_parse(text, &g, NULL), 0);
	return g;
}

static const struct sched_input missed_with_writes = {
	.goal_known = true, .goal_met = false, .metric_ns = 4 * MSEC, .writes = true,
};

static void test_rules(void **state)
{
	struct goal g = goal_of("read-p99=2ms scheduler=auto");
	struct sched_input calm = { .goal_known = true, .goal_met = true, .metric_ns = 1 * MSEC,
				    .writes = true, .writes_free = true };
	struct sched_choice c;
	unsigned n;

	/* Kyber unless told otherwise, and where the operator had it. */
	sched_choice_init(&c, &(struct goal) { .has_read = true, .read_ns = 2 * MSEC }, false, true);
	assert_int_equal(c.run, SCHED_RUN_KYBER);
	assert_int_equal(sched_choice_step(&c, &missed_with_writes), SCHED_STAY);
	sched_choice_init(&c, &g, true, true);
	assert_int_equal(c.run, SCHED_RUN_KYBER);

	/* Auto starts on the original; one missed second does not switch, two do. */
	sched_choice_init(&c, &g, false, true);
	assert_int_equal(c.run, SCHED_RUN_ORIGINAL);
	assert_int_equal(sched_choice_step(&c, &missed_with_writes), SCHED_STAY);
	assert_int_equal(sched_choice_step(&c, &missed_with_writes), SCHED_TO_KYBER);
	assert_non_null(strstr(c.reason, "2 intervals in a row"));
	/* A miss SCHED_FAR_MISS x the goal is no noisy second: one switches. */
	sched_choice_init(&c, &g, false, true);
	assert_int_equal(sched_choice_step(&c, &(struct sched_input) {
		.goal_known = true, .goal_met = false, .metric_ns = 6 * MSEC, .writes = true }),
		SCHED_TO_KYBER);
	assert_non_null(strstr(c.reason, "missed by 3.0x"));
	sched_choice_switched(&c, SCHED_RUN_KYBER);

	/* On Kyber: throttled writes are Kyber at work; free writes and reads
	 * well within the goal for SCHED_IDLE_TO_LEAVE intervals are not. */
	for (n = 0; n < 100; n++)
		assert_int_equal(sched_choice_step(&c, &(struct sched_input) {
			.goal_known = true, .goal_met = true, .metric_ns = 1 * MSEC, .writes = true }),
			SCHED_STAY);
	for (n = 1; n < SCHED_IDLE_TO_LEAVE; n++)
		assert_int_equal(sched_choice_step(&c, &calm), SCHED_STAY);
	assert_int_equal(sched_choice_step(&c, &calm), SCHED_TO_ORIGINAL);
	sched_choice_switched(&c, SCHED_RUN_ORIGINAL);

	/* Back to Kyber within the flap window: the hold doubles each time. */
	for (n = 1; n < SCHED_HOLD_MIN; n++)
		assert_int_equal(sched_choice_step(&c, &missed_with_writes), SCHED_STAY);
	assert_int_equal(sched_choice_step(&c, &missed_with_writes), SCHED_TO_KYBER);
	sched_choice_switched(&c, SCHED_RUN_KYBER);
	assert_int_equal(c.hold, 2 * SCHED_HOLD_MIN);
	for (n = 1; n < 2 * SCHED_HOLD_MIN; n++)
		assert_int_equal(sched_choice_step(&c, &calm), SCHED_STAY);
	assert_int_equal(sched_choice_step(&c, &calm), SCHED_TO_ORIGINAL);
	sched_choice_switched(&c, SCHED_RUN_ORIGINAL);
	assert_int_equal(c.hold, 4 * SCHED_HOLD_MIN);

	/* Reads missing with no writes: Kyber cannot help. */
	sched_choice_init(&c, &g, false, true);
	for (n = 0; n < 10; n++)
		assert_int_equal(sched_choice_step(&c, &(struct sched_input) {
			.goal_known = true, .metric_ns = 4 * MSEC }), SCHED_STAY);
	assert_non_null(strstr(c.reason, "cannot help"));

	/* No read goal: nothing for Kyber to protect. */
	sched_choice_init(&c, &(struct goal) { .mode = GOAL_MODE_THROUGHPUT,
					       .scheduler = GOAL_SCHEDULER_AUTO }, false, true);
	assert_int_equal(c.run, SCHED_RUN_ORIGINAL);
	for (n = 0; n < 10; n++)
		assert_int_equal(sched_choice_step(&c, &missed_with_writes), SCHED_STAY);
}

static struct tuner_loop *loop_new(enum sim_profile profile, uint64_t goal_ns, unsigned rqd, unsigned wqd)
{
	char text[64];
	struct sim_params p;

	sim_params_default(&p, profile);
	p.seed = 42;
	p.host_jitter_ns = LOOP_HOST_JITTER_NS;
	snprintf(text, sizeof(text), "read-p99=%lluus scheduler=auto", (unsigned long long)(goal_ns / USEC));
	return tuner_loop_new(&p, text, rqd, wqd);
}

static void none_run(enum sim_profile profile, unsigned rqd, unsigned wqd, uint64_t *p99, double *write_iops)
{
	struct static_result res;
	struct sim_params p;

	sim_params_default(&p, profile);
	p.seed = 42;
	p.host_jitter_ns = LOOP_HOST_JITTER_NS;
	static_point(&p, &(struct static_run){ .read_qd = rqd, .write_qd = wqd, .pct = 99, .warm_s = 5,
					      .measure_s = 20 }, &res);
	*p99 = res.p99_ns;
	*write_iops = res.write_iops;
}

/* A goal none misses by far: Kyber, within seconds, and the goal met. */
static void test_flash_needs_kyber(void **state)
{
	struct tuner_loop *l = loop_new(SIM_FLASH, 2 * MSEC, 1, 256);
	unsigned switched_at = 0, late = 0, late_met = 0;

	for (unsigned i = 1; i <= 60; i++) {
		tuner_loop_step(l);
		if (!switched_at && l->sched.run == SCHED_RUN_KYBER)
			switched_at = i;
		if (i > 10) {
			late++;
			late_met += tuner_loop_met(l);
		}
	}
	print_message("flash, goal 2ms: Kyber from %us, %u switch(es), met %u/%u after 10 s, %.0f write IOPS\n",
		      switched_at, l->switches, late_met, late, l->write_iops);
	assert_true(switched_at && switched_at <= 3);
	assert_int_equal(l->switches, 1);
	assert_true(late_met >= 0.9 * late);
	tuner_loop_free(l);
}

/* A goal none meets, on flash and on optane: the device never leaves none,
 * and the writes run as under none. */
static void test_none_meets_stays(void **state)
{
	static const enum sim_profile profiles[] = { SIM_FLASH, SIM_OPTANE };

	for (size_t k = 0; k < ELEMENTSOF(profiles); k++) {
		struct tuner_loop *l;
		double none_iops, write_sum = 0;
		uint64_t none_p99;

		none_run(profiles[k], 1, 256, &none_p99, &none_iops);
		l = loop_new(profiles[k], 3 * none_p99, 1, 256);
		for (unsigned i = 1; i <= 60; i++) {
			tuner_loop_step(l);
			write_sum += l->write_iops;
		}
		print_message("%s, goal 3x none's P99 (%.0fus): %u switch(es), %.0f write IOPS vs none %.0f\n",
			      sim_profile_to_string(profiles[k]), 3 * none_p99 / 1e3, l->switches,
			      write_sum / 60, none_iops);
		assert_int_equal(l->switches, 0);
		assert_true(write_sum / 60 >= 0.95 * none_iops);
		tuner_loop_free(l);
	}
}

/*
 * R1 and R1+W256 alternating every 10 s for 2 minutes, goal 2 ms on flash
 * (issue 13's acceptance): at most 4 switches a minute and the goal met in
 * 90% of the windows with writes. The misses are the cold start's (two
 * intervals on none to see the need, then the first cuts): every phase
 * with writes after the first meets the goal from its first second, as
 * the throttle in force stays through the phases without writes.
 */
static void test_alternating(void **state)
{
	struct tuner_loop *l = loop_new(SIM_FLASH, 2 * MSEC, 1, 256);
	unsigned with_writes = 0, met = 0, phases_late_met = 0, later = 0, later_met = 0;

	for (unsigned i = 1; i <= 120; i++) {
		bool writes = (i - 1) / 10 % 2 == 0;
		unsigned in_phase = (i - 1) % 10 + 1;

		if (in_phase == 1) {
			sim_set_workload(l->sim, 1, writes ? 256 : 0);
			phases_late_met = 0;
		}
		tuner_loop_step(l);
		if (writes) {
			with_writes++;
			met += tuner_loop_met(l);
			phases_late_met += in_phase > 5 && tuner_loop_met(l);
			if (in_phase == 10 && i > 10)
				assert_int_equal(phases_late_met, 5);
			if (i > 10) {
				later++;
				later_met += tuner_loop_met(l);
			}
		}
	}
	print_message("alternating: %u switches in 2 min, met %u/%u windows with writes (%u/%u after the "
		      "first phase)\n", l->switches, met, with_writes, later_met, later);
	assert_true(met >= 0.90 * with_writes);
	assert_true(later_met >= 0.95 * later);
	assert_true(l->switches <= 8);
	tuner_loop_free(l);
}

/*
 * The same with the workload's edges half-way through the daemon's
 * intervals, as they fall on a real machine: the intervals at the edges
 * hold part of each phase (test-ctl-relax's test_slack_of_a_pause judges
 * what the law makes of them). Windows with writes: over
 * ALT_WRITES_MIN_IOPS, as bench/sched_choice.py counts them.
 */
#define ALT_WRITES_MIN_IOPS 1000
static void test_alternating_off_beat(void **state)
{
	struct tuner_loop *l = loop_new(SIM_FLASH, 2 * MSEC, 1, 0);
	unsigned with_writes = 0, met = 0, later = 0, later_met = 0;

	for (unsigned i = 1; i <= 121; i++) {
		if ((i - 1) % 10 == 0 && i <= 120)
			tuner_loop_shift_within(l, SEC / 2, 1, (i - 1) / 10 % 2 == 0 ? 256 : 0);
		tuner_loop_step(l);
		if (l->write_iops < ALT_WRITES_MIN_IOPS)
			continue;
		with_writes++;
		met += tuner_loop_met(l);
		if (i > 12) {
			later++;
			later_met += tuner_loop_met(l);
		}
	}
	print_message("alternating off the beat: %u switches, met %u/%u windows with writes (%u/%u after the "
		      "first phase)\n", l->switches, met, with_writes, later_met, later);
	assert_true(met >= 0.90 * with_writes);
	assert_true(later_met >= 0.95 * later);
	assert_true(l->switches <= 8);
	tuner_loop_free(l);
}

/* The cost book pools the windows kept and says nothing on too little. */
static void test_cost_book(void **state)
{
	struct sched_cost_book b = {};
	uint64_t ns;

	assert_false(sched_cost_get(&b, SCHED_RUN_KYBER, &ns));
	/* A window of a device barely in use is not kept. */
	sched_cost_add(&b, SCHED_RUN_KYBER, 500, 1000, SCHED_COST_MIN_WINDOW_IOS - 1);
	assert_int_equal(b.n[SCHED_RUN_KYBER], 0);
	/* Too few samples alone, enough pooled: 40 + 80 samples of 1 us
	 * over 60,000 I/Os is 2 ns per I/O. */
	sched_cost_add(&b, SCHED_RUN_KYBER, 40, 1000, 20000);
	assert_false(sched_cost_get(&b, SCHED_RUN_KYBER, &ns));
	sched_cost_add(&b, SCHED_RUN_KYBER, 80, 1000, 40000);
	assert_true(sched_cost_get(&b, SCHED_RUN_KYBER, &ns));
	assert_int_equal(ns, 2);
	/* The other scheduler's book is its own. */
	assert_false(sched_cost_get(&b, SCHED_RUN_ORIGINAL, &ns));
	/* Only the last SCHED_COST_KEEP windows count. */
	for (unsigned k = 0; k < SCHED_COST_KEEP; k++)
		sched_cost_add(&b, SCHED_RUN_KYBER, 300, 1000, 100000);
	assert_true(sched_cost_get(&b, SCHED_RUN_KYBER, &ns));
	assert_int_equal(ns, 3);
	/* Samples aplenty but too few I/Os in all: nothing said. */
	b = (struct sched_cost_book) {};
	for (unsigned k = 0; k < 3; k++)
		sched_cost_add(&b, SCHED_RUN_ORIGINAL, 1000, 1000, SCHED_COST_MIN_WINDOW_IOS);
	assert_false(sched_cost_get(&b, SCHED_RUN_ORIGINAL, &ns));
}

/* Kyber idle long enough: it is left where its measured cost repays the
 * stalls of switching, kept where it does not, left where unmeasured. */
static void test_leave_pays(void **state)
{
	struct goal g = goal_of("read-p99=2ms scheduler=auto");
	struct sched_cost_book book = {};
	struct sched_input calm = { .goal_known = true, .goal_met = true, .metric_ns = 1 * MSEC,
				    .writes = true, .writes_free = true, .ios = 100000, .cost = &book };
	struct sched_choice c;
	unsigned n;

	/* Samples of 1 ms: 1.5 us per I/O on Kyber, 0.9 on the original. */
	for (unsigned k = 0; k < 2; k++) {
		sched_cost_add(&book, SCHED_RUN_KYBER, 150, 1000000, 100000);
		sched_cost_add(&book, SCHED_RUN_ORIGINAL, 90, 1000000, 100000);
	}
	sched_choice_init(&c, &g, false, true);
	sched_choice_switched(&c, SCHED_RUN_KYBER);
	/* Leaving saves 0.6 us x 100,000 I/Os x SCHED_HOLD_MIN = 0.9 s of
	 * CPU; a stall of 1 s each way costs more: stay, and say why. */
	calm.stall_ns = 1000 * MSEC;
	for (n = 0; n < 3 * SCHED_IDLE_TO_LEAVE; n++)
		assert_int_equal(sched_choice_step(&c, &calm), SCHED_STAY);
	assert_non_null(strstr(c.reason, "would not repay"));
	assert_non_null(strstr(c.reason, "1.50 us on Kyber, 0.90 us on the original"));
	/* A 5 ms stall: leaving repays it many times over. */
	calm.stall_ns = 5 * MSEC;
	assert_int_equal(sched_choice_step(&c, &calm), SCHED_TO_ORIGINAL);
	assert_non_null(strstr(c.reason, "CPU per I/O 1.50 us on Kyber"));
	sched_choice_switched(&c, SCHED_RUN_ORIGINAL);

	/* Kyber no dearer than the original: never worth a switch. */
	book = (struct sched_cost_book) {};
	for (unsigned k = 0; k < 2; k++) {
		sched_cost_add(&book, SCHED_RUN_KYBER, 90, 1000000, 100000);
		sched_cost_add(&book, SCHED_RUN_ORIGINAL, 90, 1000000, 100000);
	}
	sched_choice_init(&c, &g, false, true);
	sched_choice_switched(&c, SCHED_RUN_KYBER);
	calm.stall_ns = 0;
	for (n = 0; n < 3 * SCHED_IDLE_TO_LEAVE; n++)
		assert_int_equal(sched_choice_step(&c, &calm), SCHED_STAY);

	/* Only one scheduler measured: left as before. */
	book = (struct sched_cost_book) {};
	sched_cost_add(&book, SCHED_RUN_KYBER, 150, 1000000, 100000);
	sched_choice_init(&c, &g, false, true);
	sched_choice_switched(&c, SCHED_RUN_KYBER);
	calm.stall_ns = 1000 * MSEC;
	for (n = 1; n < SCHED_IDLE_TO_LEAVE; n++)
		assert_int_equal(sched_choice_step(&c, &calm), SCHED_STAY);
	assert_int_equal(sched_choice_step(&c, &calm), SCHED_TO_ORIGINAL);
}

/* Steps until the goal has been met SEED_COVERED windows in a row: the
 * start of that run of windows (n + 1: never within n steps). */
#define SEED_COVERED 5
static unsigned steps_to_converge(struct tuner_loop *l, unsigned n)
{
	unsigned run = 0;

	for (unsigned i = 1; i <= n; i++) {
		tuner_loop_step(l);
		run = tuner_loop_met(l) ? run + 1 : 0;
		if (run == SEED_COVERED)
			return i - SEED_COVERED + 1;
	}
	return n + 1;
}

/* A per-model profile of where a cold start settled: the next cold start
 * begins on Kyber at those targets (device_new: sched_choice_start_on_kyber,
 * controller_seed) instead of missing the goal on none first; it converges
 * sooner and keeps the goal as well. */
static void test_seeded_start(void **state)
{
	struct tuner_loop *cold = loop_new(SIM_FLASH, 2 * MSEC, 1, 256), *seeded;
	unsigned cold_at = steps_to_converge(cold, 30), seeded_at, met = 0;
	struct kyber_targets learned;

	for (unsigned i = 0; i < 30; i++)
		tuner_loop_step(cold);
	learned = cold->d.targets;
	seeded = loop_new(SIM_FLASH, 2 * MSEC, 1, 256);
	sched_choice_start_on_kyber(&seeded->sched, "a profile");
	sim_set_kyber(seeded->sim, true);
	sim_set_targets(seeded->sim, learned.read_ns, learned.write_ns);
	controller_seed(&seeded->ctl, learned.write_ns, controller_write_ref_ns(&cold->ctl),
			controller_write_ref_iops(&cold->ctl));
	seeded_at = steps_to_converge(seeded, 30);
	for (unsigned i = 0; i < 30; i++) {
		tuner_loop_step(seeded);
		met += tuner_loop_met(seeded);
	}
	print_message("cold start met the goal from %us; seeded at %llu/%llu ns from %us, then %u/30 met, "
		      "%u switch(es)\n", cold_at, (unsigned long long)learned.read_ns,
		      (unsigned long long)learned.write_ns, seeded_at, met, seeded->switches);
	assert_true(cold_at <= 30 && seeded_at < cold_at);
	assert_true(met >= 27);
	assert_int_equal(seeded->switches, 0);
	tuner_loop_free(cold);
	tuner_loop_free(seeded);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_cost_book),
		cmocka_unit_test(test_leave_pays),
		cmocka_unit_test(test_flash_needs_kyber),
		cmocka_unit_test(test_none_meets_stays),
		cmocka_unit_test(test_alternating),
		cmocka_unit_test(test_alternating_off_beat),
		cmocka_unit_test(test_seeded_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
