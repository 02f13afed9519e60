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
	static_point(&p, kyber, r, w, rqd, wqd, 99, 10, 10, &res);
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
			hist_merge(h, l->s.read_total_hist);
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

/* Pure decisions on hand-made samples. */
static void test_samples_needed_and_early_miss(void **state)
{
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s = {};
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	hist_t h = {};
	struct goal g;

	assert_int_equal(controller_samples_needed(99), 500);
	assert_int_equal(controller_samples_needed(50), 10);
	assert_int_equal(controller_samples_needed(99.9), 5000);
	assert_int_equal(goal_parse("read-p99=2ms", &g, NULL), 0);
	controller_init(&c, &g);
	/* 40 reads, all at 8 ms: a miss is already certain, decide now. */
	h[kt_hist_index(8 * MSEC)] = 40;
	s.duration_ns = SEC;
	s.read_total_hist = h;
	s.read.completed = 40;
	s.read.iops = 40;
	s.read.device_p90_ns = s.read.device_p99_ns = s.read.total_p99_ns = 8 * MSEC;
	s.read.outstanding = 1;
	s.write.completed = 16000;
	s.write.iops = 16000;
	s.write.outstanding = 256;
	s.write.device_p90_ns = 8 * MSEC;
	s.write.device_p99_ns = 9 * MSEC;
	s.write.total_p99_ns = 13 * MSEC;
	s.write.kyber_depth = 128;
	controller_decide(&c, &s, &cur, &d);
	/* First interval establishes the workload; the miss is acted on at once. */
	assert_true(d.goal_known);
	assert_false(d.goal_met);
	assert_true(d.write);
	assert_true(d.targets.write_ns > cur.write_ns);
	/* 40 reads at 1 ms: not enough to call it met. */
	memset(h, 0, sizeof(h));
	h[kt_hist_index(1 * MSEC)] = 40;
	controller_init(&c, &g);
	controller_decide(&c, &s, &cur, &d);
	assert_false(d.goal_known);
	assert_int_equal(d.state, CTL_LEARNING);
}

/* An interval of R1+W256 on flash: every read at read_ns, the writes at
 * write_iops with Kyber's write depth `depth` and their P99 at 13 ms. */
static void flat_sample(struct ctl_sample *s, hist_t h, uint64_t read_ns, double write_iops,
			uint32_t depth)
{
	memset(s, 0, sizeof(*s));
	memset(h, 0, sizeof(hist_t));
	h[kt_hist_index(read_ns)] = 1000;
	s->duration_ns = SEC;
	s->read_total_hist = h;
	s->read.completed = 1000;
	s->read.iops = 1000;
	s->read.device_p90_ns = s->read.device_p99_ns = s->read.total_p99_ns = read_ns;
	s->read.outstanding = 1;
	s->write.completed = (uint64_t)write_iops;
	s->write.iops = write_iops;
	s->write.outstanding = 200;
	s->write.device_p90_ns = 800 * USEC;
	s->write.device_p99_ns = 1 * MSEC;
	s->write.total_p99_ns = 13 * MSEC;
	s->write.kyber_depth = depth;
}

static void decide(struct controller *c, const struct ctl_sample *s, struct kyber_targets *cur,
		   struct ctl_decision *d)
{
	controller_decide(c, s, cur, d);
	*cur = d->targets;
}

/* A controller for read-p99=2ms that has just engaged: reads at 8 ms beside
 * free-running writes. */
static void engaged_at_2ms(struct controller *c, struct kyber_targets *cur)
{
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;
	struct goal g;

	assert_int_equal(goal_parse("read-p99=2ms", &g, NULL), 0);
	controller_init(c, &g);
	flat_sample(&s, h, 8 * MSEC, 16000, 128);
	decide(c, &s, cur, &d);
	assert_true(c->protecting);
}

/*
 * Kyber grows writes already at their free-running rate: the level's
 * target sits in their latency noise (flashsim over FUSE: their 100 ms
 * P99s scatter around it), so the tuner goes one level up at once, and
 * neither a freeze after a later cut nor a step down returns to it while
 * the evidence lasts.
 */
static void test_drift_leaves_level(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c;
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;
	uint64_t drifted_ns, above_ns;

	/* Free-running writes, reads far over the goal: protect. */
	engaged_at_2ms(&c, &cur);
	/* Reads within the goal: the writes are frozen where their P99
	 * (13 ms) is held, at their free-running rate, depth steady. */
	for (unsigned i = 0; i < 6; i++) {
		flat_sample(&s, h, 1500 * USEC, 15900, 13);
		decide(&c, &s, &cur, &d);
	}
	drifted_ns = cur.write_ns;
	assert_true(drifted_ns > 13 * MSEC && drifted_ns < 13 * MSEC / CTL_HOLD_MIDDLE * 1.2);
	/* Kyber grows them anyway: one level up. */
	flat_sample(&s, h, 1500 * USEC, 15900, 16);
	decide(&c, &s, &cur, &d);
	assert_true(d.write);
	above_ns = cur.write_ns;
	assert_true(above_ns > drifted_ns && above_ns < drifted_ns * 1.3);
	assert_non_null(strstr(d.reason, "grew"));
	/* A miss and a cut, then reads fine again: the freeze stops above the
	 * level that drifted, and slack (writes a little under their free
	 * rate, not so far under that the level is re-cut from above) does
	 * not step back onto it. */
	for (unsigned i = 0; i < 3; i++) {
		flat_sample(&s, h, 4 * MSEC, 15900, 16);
		decide(&c, &s, &cur, &d);
	}
	assert_true(cur.write_ns > above_ns);
	for (unsigned i = 0; i < 40; i++) {
		flat_sample(&s, h, i < 10 ? 1500 * USEC : 1000 * USEC, i < 10 ? 15900 : 14500, 10);
		decide(&c, &s, &cur, &d);
		assert_true(cur.write_ns > drifted_ns);
	}
	assert_int_equal(cur.write_ns, above_ns);
}

/*
 * A level that held the writes at one rate and holds them at a third of it
 * now is re-cut from above (recut()), but only once the lower rate lasts:
 * the interval in which the writes stop is at a lower rate too, and
 * re-cutting on it forgets the level the writes will want when they come
 * back.
 */
static bool run_free_within(struct controller *c, struct kyber_targets *cur, double write_iops,
			    unsigned n)
{
	struct ctl_decision d;
	struct ctl_sample s;
	hist_t h;
	bool seen = false;

	for (unsigned i = 0; i < n; i++) {
		flat_sample(&s, h, 1000 * USEC, write_iops, 13);
		decide(c, &s, cur, &d);
		seen = seen || strstr(d.reason, "run free") != NULL;
	}
	return seen;
}

static void test_recut_needs_a_lasting_drop(void **state)
{
	struct kyber_targets cur = { 2 * MSEC, 10 * MSEC };
	struct controller c, edge;

	engaged_at_2ms(&c, &cur);
	/* A level that meets the goal with 12000 writes a second. */
	assert_false(run_free_within(&c, &cur, 12000, 20));
	edge = c;
	/* Each lone interval at a third of the rate, between normal ones, as
	 * when writes stop (or pause) within an interval: never re-cut. */
	for (unsigned i = 0; i < 6; i++) {
		assert_false(run_free_within(&edge, &cur, 12000, 2));
		assert_false(run_free_within(&edge, &cur, 4000, 1));
	}
	/* A third of the rate for good: re-cut from above. */
	assert_true(run_free_within(&c, &cur, 4000, 10));
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
	for (unsigned slack = 0, i = 0; slack < CTL_SLACK_INTERVALS - 1; i++) {
		assert_true(i < 10);
		slow_writes(&s, h, 600 * USEC, 10000);
		decide(&c, &s, &cur, &d);
		slack += strstr(d.reason, "well under") != NULL;
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

/* More reads beside the same writes keep the open point's misses (reads
 * behind unthrottled writes do no better with more reads queued); any
 * other shift forgets everything the levels recorded. */
static void test_more_reads_keep_open_misses(void **state)
{
	struct ctl_regime r = {};
	struct ctl_levels l = {};
	struct ctl_sample s = {};
	char what[96];

	s.write.iops = 10000;
	s.write.completed = 10000;
	s.write.outstanding = 256;
	s.read.completed = 500;
	s.read.outstanding = 1;
	assert_int_equal(ctl_regime_shifted(&r, &s, what, sizeof(what)), CTL_SHIFT_NONE);
	s.read.outstanding = 4;
	assert_int_equal(ctl_regime_shifted(&r, &s, what, sizeof(what)), CTL_SHIFT_MORE_READS);
	assert_string_equal(what, "reads outstanding 1.0 -> 4.0");
	s.read.outstanding = 1;
	assert_int_equal(ctl_regime_shifted(&r, &s, what, sizeof(what)), CTL_SHIFT_FEWER_READS);
	s.write.outstanding = 16;
	assert_int_equal(ctl_regime_shifted(&r, &s, what, sizeof(what)), CTL_SHIFT_WRITES);
	s.write.iops = 0;
	assert_int_equal(ctl_regime_shifted(&r, &s, what, sizeof(what)), CTL_SHIFT_WRITES);

	ctl_levels_missed(&l, CTL_LEVEL_OPEN, 2);
	ctl_levels_missed(&l, 10, 1);
	ctl_levels_met(&l, 12, 5000);
	assert_true(ctl_levels_unusable(&l, CTL_LEVEL_OPEN) && ctl_levels_unusable(&l, 10));
	ctl_levels_forget_but_open_misses(&l);
	assert_true(ctl_levels_unusable(&l, CTL_LEVEL_OPEN));
	assert_false(ctl_levels_unusable(&l, 10));
	assert_true(ctl_levels_rate(&l, 12) == 0);
	ctl_levels_forget(&l);
	assert_false(ctl_levels_unusable(&l, CTL_LEVEL_OPEN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples_needed_and_early_miss),
		cmocka_unit_test(test_recut_needs_a_lasting_drop),
		cmocka_unit_test(test_slack_of_a_pause),
		cmocka_unit_test(test_more_reads_keep_open_misses),
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
		cmocka_unit_test(test_drift_leaves_level),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
