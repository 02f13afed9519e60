/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: the controller (daemon/controller/controller.c) closed-loop against the
 * simulated plant (tools/kyber-sim/: Kyber's algorithm on a flash/optane model),
 * the same scenarios as the real-kernel acceptance tests, in seconds.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl-internal.h"
#include "tuner-loop.h"

#define GOAL_2MS (2 * MSEC)
#define STEADY_CHANGES_PER_MIN 6

/* The plant of these tests: the profile's defaults with the real FUSE
 * path's tail. */
static struct tuner_loop *loop_new(enum sim_profile profile, const char *goal_text, unsigned rqd,
				   unsigned wqd)
{
	struct sim_params p;
	char goal[GOAL_TEXT_MAX];

	sim_params_default(&p, profile);
	p.seed = 42;
	p.host_jitter_ns = LOOP_HOST_JITTER_NS;
	/* The law on Kyber; when to run Kyber at all is test-ctl-sched's. */
	snprintf(goal, sizeof(goal), "%s scheduler=kyber", goal_text);
	return tuner_loop_new(&p, goal, rqd, wqd);
}

/* A static setting in steady state: warm up, then measure. */
static void static_run(enum sim_profile profile, bool kyber, uint64_t r, uint64_t w, unsigned rqd,
		       unsigned wqd, uint64_t *p99, double *write_iops)
{
	struct static_result res;
	struct sim_params p;

	sim_params_default(&p, profile);
	p.seed = 7;
	p.host_jitter_ns = LOOP_HOST_JITTER_NS;
	static_point(&p, &(struct static_run){ .kyber = kyber, .read_ns = r, .write_ns = w, .read_qd = rqd,
					      .write_qd = wqd, .pct = 99, .warm_s = 10, .measure_s = 10 }, &res);
	*p99 = res.p99_ns;
	*write_iops = res.write_iops;
}

static void test_flash_goal_met_writes_kept(void **state)
{
	static const uint64_t reads[] = { 50 * USEC, 100 * USEC, 200 * USEC, 500 * USEC, 1 * MSEC,
					  2 * MSEC, 3 * MSEC, 5 * MSEC, 10 * MSEC };
	static const uint64_t writes[] = { 20 * USEC, 50 * USEC, 100 * USEC, 500 * USEC, 1 * MSEC,
					   5 * MSEC, 10 * MSEC, 20 * MSEC, 50 * MSEC, 100 * MSEC };
	struct tuner_loop *l = loop_new(SIM_FLASH, "read-p99=2ms", 1, 256);
	unsigned first_met = 0, late_windows = 0, late_met = 0, changes_at_15 = 0;
	double best = 0, tuned, write_sum = 0;

	for (unsigned i = 1; i <= 60; i++) {
		tuner_loop_step(l);
		write_sum += l->write_iops;
		if (!first_met && tuner_loop_met(l))
			first_met = i;
		if (i > 5) {
			late_windows++;
			late_met += tuner_loop_met(l);
		}
		if (i == 15)
			changes_at_15 = l->changes;
	}
	tuned = write_sum / l->windows;
	for (size_t r = 0; r < sizeof(reads) / sizeof(reads[0]); r++)
		for (size_t w = 0; w < sizeof(writes) / sizeof(writes[0]); w++) {
			uint64_t p99;
			double iops;

			static_run(SIM_FLASH, true, reads[r], writes[w], 1, 256, &p99, &iops);
			if (p99 <= GOAL_2MS && iops > best)
				best = iops;
		}
	print_message("first met at %us; met %u/%u after 5 s; tuned %.0f write IOPS, best static %.0f; "
		      "changes %u (%u after 15 s)\n", first_met, late_met, late_windows, tuned, best,
		      l->changes, l->changes - changes_at_15);
	assert_true(first_met && first_met <= 5);
	assert_true(late_met >= 0.9 * late_windows);
	assert_true(best > 0);
	assert_true(tuned >= 0.9 * best);
	assert_true((l->changes - changes_at_15) * 60.0 / 45 <= STEADY_CHANGES_PER_MIN);
	tuner_loop_free(l);
}

/* Goal met again within 5 s of each shift. */
static void test_shifts(void **state)
{
	static const struct {
		unsigned rqd, wqd;
		const char *what;
	} phases[] = {
		{ 1, 256, "R1+W256" }, { 1, 0, "W256 stops" }, { 1, 256, "W256 starts" }, { 64, 256, "R1 -> R64" },
	};
	struct tuner_loop *l = loop_new(SIM_FLASH, "read-p99=2ms", 1, 256);

	for (size_t p = 0; p < sizeof(phases) / sizeof(phases[0]); p++) {
		unsigned first = 0, late = 0, late_met = 0;

		sim_set_workload(l->sim, phases[p].rqd, phases[p].wqd);
		for (unsigned i = 1; i <= 20; i++) {
			tuner_loop_step(l);
			if (!first && tuner_loop_met(l))
				first = i;
			if (i > 5) {
				late++;
				late_met += tuner_loop_met(l);
			}
		}
		print_message("%s: met first at %us, then %u/%u; last reason: %s\n", phases[p].what, first,
			      late_met, late, l->d.reason);
		assert_true(first && first <= 5);
		assert_true(late_met >= 0.8 * late);
	}
	tuner_loop_free(l);
}

/* G-1: one request per op, Kyber cannot act: never write. */
static void test_r1_w1_hands_off(void **state)
{
	struct tuner_loop *l = loop_new(SIM_FLASH, "read-p99=150us", 1, 1);

	for (unsigned i = 0; i < 20; i++)
		tuner_loop_step(l);
	assert_int_equal(l->changes, 0);
	assert_int_equal(l->d.state, CTL_HOLDING);
	assert_non_null(strstr(l->d.reason, "G-1"));
	tuner_loop_free(l);
}

/* No interference and a goal met without throttling: nothing throttled,
 * write IOPS as with scheduler none. */
static void test_optane_open(void **state)
{
	struct tuner_loop *l = loop_new(SIM_OPTANE, "read-p99=5ms", 1, 256);
	uint64_t p99;
	double none_iops;

	for (unsigned i = 0; i < 20; i++)
		tuner_loop_step(l);
	static_run(SIM_OPTANE, false, 0, 0, 1, 256, &p99, &none_iops);
	print_message("optane: tuned %.0f write IOPS, none %.0f; %s\n", l->write_iops, none_iops, l->d.reason);
	assert_true(l->write_iops >= 0.95 * none_iops);
	assert_int_equal(l->d.state, CTL_TRACKING);
	tuner_loop_free(l);
}

/* O-8: a goal the optane device misses and a writer that never fills the
 * tags (W32): throttling writes takes their depth down but does nothing
 * for reads, so the tuner backs off to the open point and says so. */
static void test_optane_o8_backs_off(void **state)
{
	struct tuner_loop *l = loop_new(SIM_OPTANE, "read-p99=50us", 1, 32);
	bool o8 = false;

	for (unsigned i = 0; i < 30 && !o8; i++) {
		tuner_loop_step(l);
		o8 = strstr(l->d.reason, "O-8") != NULL;
	}
	print_message("optane, tight goal: %s\n", l->d.reason);
	assert_true(o8);
	assert_int_equal(l->d.state, CTL_HOLDING);
	/* Parked: writes grow back, nothing throttled. */
	for (unsigned i = 0; i < 5; i++)
		tuner_loop_step(l);
	assert_true(l->s.write.kyber_depth >= 32);
	tuner_loop_free(l);
}

/* An unreachable goal: infeasible, reads at least as good as the static
 * read-priority setting, and a write floor honoured. */
static void test_infeasible_and_floor(void **state)
{
	struct tuner_loop *l = loop_new(SIM_FLASH, "read-p99=10us", 1, 256), *f;
	uint64_t static_p99;
	double static_w, floor_w = 0;
	hist_t h = {};
	uint64_t tuned_p99;

	for (unsigned i = 0; i < 30; i++) {
		tuner_loop_step(l);
		if (i >= 15)
			hist_merge(h, l->s.read_hist);
	}
	assert_int_equal(hist_percentile(h, 99, &tuned_p99), 0);
	static_run(SIM_FLASH, true, 50 * USEC, 100 * MSEC, 1, 256, &static_p99, &static_w);
	print_message("infeasible: state %s, read P99 %.0f us vs static 50us/100ms %.0f us\n",
		      ctl_state_to_string(l->d.state), tuned_p99 / 1e3, static_p99 / 1e3);
	assert_int_equal(l->d.state, CTL_INFEASIBLE);
	assert_true(tuned_p99 <= 1.1 * static_p99);

	/* Once the floor binds the verdict stands: no flapping back to
	 * tracking while Kyber's depth wanders at the floor's limit. */
	f = loop_new(SIM_FLASH, "read-p99=10us write-iops-min=8k", 1, 256);
	for (unsigned i = 0, settled = 0; i < 40; i++) {
		tuner_loop_step(f);
		if (i >= 25)
			floor_w += f->s.write.iops / 15;
		if (settled)
			assert_int_equal(f->d.state, CTL_INFEASIBLE);
		settled |= f->d.state == CTL_INFEASIBLE;
	}
	print_message("with write-iops-min=8k: %.0f write IOPS, state %s\n", floor_w,
		      ctl_state_to_string(f->d.state));
	assert_true(floor_w >= 8000 * 0.95);
	assert_int_equal(f->d.state, CTL_INFEASIBLE);
	tuner_loop_free(l);
	tuner_loop_free(f);
}

/* advise computes, reports, writes nothing. */
static void test_advise_never_writes(void **state)
{
	struct tuner_loop *l = loop_new(SIM_FLASH, "read-p99=2ms mode=advise", 1, 256);
	bool proposed = false;

	for (unsigned i = 0; i < 10; i++) {
		struct kyber_targets cur;

		tuner_loop_step(l);
		sim_get_targets(l->sim, &cur.read_ns, &cur.write_ns);
		assert_false(l->d.write);
		assert_int_equal(l->d.state, CTL_ADVISE);
		proposed |= l->d.targets.read_ns != cur.read_ns || l->d.targets.write_ns != cur.write_ns;
	}
	assert_true(proposed);
	assert_int_equal(l->changes, 0);
	tuner_loop_free(l);
}

/* throughput and balanced: nothing throttled even when reads suffer;
 * balanced keeps both targets equal (G-5). */
static void test_open_modes(void **state)
{
	static const char *const goals[] = { "mode=throughput", "read-p99=2ms mode=balanced" };

	for (size_t g = 0; g < 2; g++) {
		struct tuner_loop *l = loop_new(SIM_FLASH, goals[g], 256, 256);
		struct kyber_targets cur;

		for (unsigned i = 0; i < 15; i++)
			tuner_loop_step(l);
		sim_get_targets(l->sim, &cur.read_ns, &cur.write_ns);
		print_message("%s: depth w=%u, targets %llu/%llu\n", goals[g], l->s.write.kyber_depth,
			      (unsigned long long)cur.read_ns, (unsigned long long)cur.write_ns);
		assert_true(l->s.write.kyber_depth >= 128);
		if (g == 1)
			assert_true(cur.read_ns == cur.write_ns);
		tuner_loop_free(l);
	}
}

/* A steady workload: after convergence no ringing. */
static void test_no_oscillation(void **state)
{
	struct tuner_loop *l = loop_new(SIM_FLASH, "read-p99=1ms", 1, 256);
	unsigned before;

	for (unsigned i = 0; i < 20; i++)
		tuner_loop_step(l);
	before = l->changes;
	for (unsigned i = 0; i < 120; i++)
		tuner_loop_step(l);
	print_message("read-p99=1ms: %u changes in the first 20 s, %u in the next 120 s\n", before,
		      l->changes - before);
	assert_true((l->changes - before) / 2.0 <= STEADY_CHANGES_PER_MIN);
	tuner_loop_free(l);
}

/*
 * Host stalls (every request slower for a few seconds, at any write depth:
 * CPU steal on a shared VM, a garbage-collection pause) are not the write
 * depth's fault. The tuner protects reads while they last, and once they
 * pass it gives writes back what it took: the converged write rate and the
 * goal return, with no depth written off for a minute by one bad second.
 */
static void test_recovers_after_stalls(void **state)
{
	static const struct {
		unsigned at, len;
		uint64_t jitter_ns;
	} stalls[] = { { 30, 3, 400 * USEC }, { 40, 6, 1 * MSEC } };
	struct tuner_loop *l = loop_new(SIM_FLASH, "read-p99=2ms", 1, 256);
	double before = 0, after = 0;
	unsigned after_n = 0, after_met = 0;

	for (unsigned i = 1; i <= 90; i++) {
		for (size_t k = 0; k < sizeof(stalls) / sizeof(stalls[0]); k++) {
			if (i == stalls[k].at)
				sim_set_host_jitter(l->sim, stalls[k].jitter_ns);
			if (i == stalls[k].at + stalls[k].len)
				sim_set_host_jitter(l->sim, 20 * USEC);
		}
		tuner_loop_step(l);
		if (i > 15 && i <= 30)
			before += l->write_iops / 15;
		if (i > 65) {
			after += l->write_iops;
			after_n++;
			after_met += tuner_loop_met(l);
		}
	}
	after /= after_n;
	print_message("write IOPS %.0f before the stalls, %.0f from 21 s after them; goal met in %u/%u "
		      "windows then\n", before, after, after_met, after_n);
	assert_true(after >= 0.9 * before);
	assert_true(after_met >= 0.9 * after_n);
	tuner_loop_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flash_goal_met_writes_kept),
		cmocka_unit_test(test_shifts),
		cmocka_unit_test(test_r1_w1_hands_off),
		cmocka_unit_test(test_optane_open),
		cmocka_unit_test(test_optane_o8_backs_off),
		cmocka_unit_test(test_infeasible_and_floor),
		cmocka_unit_test(test_advise_never_writes),
		cmocka_unit_test(test_open_modes),
		cmocka_unit_test(test_no_oscillation),
		cmocka_unit_test(test_recovers_after_stalls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
