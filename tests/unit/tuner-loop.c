/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "error.h"
#include "tuner-loop.h"

static bool hiccup_since(const struct sim *sim, uint64_t from)
{
	return sim_hiccup_ns(sim, from, sim_now_ns(sim)) > 0;
}

struct tuner_loop *tuner_loop_new(const struct sim_params *p, const char *goal_text,
				  unsigned read_qd, unsigned write_qd)
{
	struct tuner_loop *l = calloc(1, sizeof(*l));
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	struct goal g;

	assert_non_null(l);
	assert_int_equal(sim_new(&l->sim, p), 0);
	sim_set_workload(l->sim, read_qd, write_qd);
	if (goal_parse(goal_text, &g, &error) < 0)
		fail_msg("goal %s: %s", goal_text, error.message);
	controller_init(&l->ctl, &g);
	sched_choice_init(&l->sched, &g, false, true);
	sim_set_kyber(l->sim, l->sched.run == SCHED_RUN_KYBER);
	l->interval_ns = SEC;
	l->settle_ns = 300 * MSEC;
	l->trace = getenv("KT_TEST_TRACE") != NULL;
	return l;
}

void tuner_loop_free(struct tuner_loop *l)
{
	if (!l)
		return;
	sim_free(l->sim);
	free(l);
}

/* Every written target lies in its documented band and is never the
 * harmful pair (docs/tuner.md). */
static void check_written(const struct ctl_sample *s, const struct kyber_targets *t)
{
	assert_true(t->read_ns >= KYBER_TARGET_MIN_NS && t->read_ns <= KYBER_TARGET_MAX_NS);
	assert_true(t->write_ns >= KYBER_TARGET_MIN_NS && t->write_ns <= KYBER_TARGET_MAX_NS);
	if (s->write.completed && s->read.completed)
		assert_true(t->write_ns >= s->write.device_p90_ns || t->read_ns <= s->read.device_p90_ns);
}

/* Run `ns`; what it saw goes into the judged window. */
static void run_part(struct tuner_loop *l, uint64_t ns, struct ctl_sample *s, double *reads,
		     double *writes)
{
	assert_int_equal(sim_run(l->sim, ns, s), 0);
	hist_merge(l->window, s->read_hist);
	*reads += (double)s->read.completed;
	*writes += (double)s->write.completed;
}

void tuner_loop_shift_within(struct tuner_loop *l, uint64_t at_ns, unsigned read_qd, unsigned write_qd)
{
	assert_true(at_ns > 0 && at_ns < l->interval_ns);
	sim_set_workload_at(l->sim, at_ns, read_qd, write_qd);
}

/* The scheduler choice after the controller, as daemon/device-sched.c runs it. */
static void step_scheduler(struct tuner_loop *l)
{
	struct sched_input in = sched_input_from(&l->d, &l->s);

	switch (sched_choice_step(&l->sched, &in)) {
	case SCHED_TO_KYBER: {
		struct ctl_decision d;

		sim_set_kyber(l->sim, true);	/* default targets, full depths */
		sched_choice_switched(&l->sched, SCHED_RUN_KYBER);
		if (controller_engage(&l->ctl, &l->s, l->d.metric_ns, &d)) {
			check_written(&l->s, &d.targets);
			sim_set_targets(l->sim, d.targets.read_ns, d.targets.write_ns);
			l->changes++;
		}
		break;
	}
	case SCHED_TO_ORIGINAL:
		sim_set_kyber(l->sim, false);
		controller_relearn(&l->ctl);	/* the law's state was Kyber's */
		sched_choice_switched(&l->sched, SCHED_RUN_ORIGINAL);
		break;
	case SCHED_STAY:
		return;
	}
	l->switches++;
	l->changed_last = true;
	if (l->trace)
		print_message("  t=%us scheduler -> %s: %s\n", l->windows + 1,
			      sched_run_to_string(l->sched.run), l->sched.reason);
}

/* A pulse's writes (ctl-pulse.h) within this interval: polled every
 * PULSE_POLL_NS while it grows the writes, once per phase after that.
 * Each write counts as a target change. Returns the time it took. */
static uint64_t run_pulse(struct tuner_loop *l, struct ctl_sample *s, double *reads, double *writes)
{
	uint64_t t = 0;

	while (ctl_pulse_active(&l->pulse) && t < l->interval_ns) {
		uint64_t step = PULSE_POLL_NS, w = 0, in_phase;
		enum pulse_action a;

		if (l->pulse.phase != PULSE_GROW) {
			in_phase = sim_now_ns(l->sim) - l->pulse.phase_start_ns;
			step = l->pulse.drain_ns > in_phase ? l->pulse.drain_ns - in_phase : 0;
			step = MAX((step + MSEC - 1) / MSEC * MSEC, MSEC);
		}
		step = MIN(step, l->interval_ns - t);
		run_part(l, step, s, reads, writes);
		t += step;
		/* Measuring: the part just run is the measurement. */
		a = ctl_pulse_poll(&l->pulse, sim_kyber_depth(l->sim, KT_OP_WRITE), sim_now_ns(l->sim),
				   l->pulse.phase == PULSE_MEASURING ? s->write.total_p99_ns : 0, &w);
		if (a == PULSE_WAIT || a == PULSE_MEASURE)
			continue;
		sim_set_targets(l->sim, l->d.targets.read_ns, w);
		l->changes++;
	}
	return t;
}

void tuner_loop_step(struct tuner_loop *l)
{
	static hist_t input;
	double reads = 0, writes = 0;
	struct kyber_targets cur;
	struct ctl_sample s;
	uint64_t from = sim_now_ns(l->sim);
	bool decide_now = true;

	memset(l->window, 0, sizeof(l->window));
	if (ctl_pulse_active(&l->pulse)) {
		/* The decision's pulse (ctl-pulse.h), as the daemon runs it:
		 * then the settle after a change, and a decision only if a
		 * clean part of the interval is left. */
		uint64_t t = run_pulse(l, &s, &reads, &writes);

		decide_now = !ctl_pulse_active(&l->pulse) && t + l->settle_ns < l->interval_ns;
		if (!ctl_pulse_active(&l->pulse) && t < l->interval_ns) {
			uint64_t settle = MIN(l->settle_ns, l->interval_ns - t);

			run_part(l, settle, &s, &reads, &writes);
			if (t + settle < l->interval_ns)
				run_part(l, l->interval_ns - t - settle, &s, &reads, &writes);
		}
	} else if (l->changed_last) {
		/* The first 300 ms after a change are not the controller's. */
		run_part(l, l->settle_ns, &s, &reads, &writes);
		run_part(l, l->interval_ns - l->settle_ns, &s, &reads, &writes);
	} else
		run_part(l, l->interval_ns, &s, &reads, &writes);
	l->hiccup = hiccup_since(l->sim, from);
	memcpy(input, s.read_hist, sizeof(input));
	s.read_hist = input;
	l->s = s;
	if (!decide_now) {
		l->d.write = false;
		snprintf(l->d.reason, sizeof(l->d.reason), "a pulse under way");
	} else if (l->sched.run == SCHED_RUN_KYBER) {
		sim_get_targets(l->sim, &cur.read_ns, &cur.write_ns);
		controller_decide(&l->ctl, &l->s, &cur, &l->d);
	} else
		controller_observe(&l->ctl, &l->s, &l->d);
	l->changed_last = l->d.write;
	if (l->d.write) {
		uint64_t first = l->d.targets.write_ns;

		check_written(&l->s, &l->d.targets);
		if (l->d.pulse_write_ns)
			first = ctl_pulse_start(&l->pulse, &l->d, sim_kyber_depth(l->sim, KT_OP_WRITE),
						sim_now_ns(l->sim));
		sim_set_targets(l->sim, l->d.targets.read_ns, first);
		l->changes++;
	}
	step_scheduler(l);
	l->windows++;
	l->read_iops = reads * (double)SEC / (double)l->interval_ns;
	l->write_iops = writes * (double)SEC / (double)l->interval_ns;
	l->metric = 0;
	if (hist_count(l->window))
		(void)hist_percentile(l->window, l->ctl.goal.has_read ? l->ctl.goal.read_pct : 99, &l->metric);
	if (l->trace)
		print_message("  t=%us %-10s depth w=%3u wIOPS %6.0f wP99 %6.0fus (free %6.0fus) P%g %7.0fus rP90 %6.0fus "
			      "targets %llu/%llu%s%s: %s\n",
			      l->windows, ctl_state_to_string(l->d.state), l->s.write.kyber_depth,
			      l->write_iops, l->s.write.total_p99_ns / 1e3, controller_write_ref_ns(&l->ctl) / 1e3,
			      l->ctl.goal.read_pct, l->metric / 1e3, l->s.read.device_p90_ns / 1e3,
			      (unsigned long long)l->d.targets.read_ns,
			      (unsigned long long)l->d.targets.write_ns, l->d.write ? " (written)" : "",
			      l->hiccup ? " (hiccup)" : "", l->d.reason);
}

bool tuner_loop_met(const struct tuner_loop *l)
{
	return l->metric && l->metric <= l->ctl.goal.read_ns;
}

void static_point(const struct sim_params *p, const struct static_run *run, struct static_result *out)
{
	struct ctl_sample s;
	struct sim *sim;
	hist_t all = {};

	memset(out, 0, sizeof(*out));
	assert_true(run->measure_s <= STATIC_WINDOWS_MAX);
	assert_int_equal(sim_new(&sim, p), 0);
	sim_set_kyber(sim, run->kyber);
	if (run->kyber)
		sim_set_targets(sim, run->read_ns, run->write_ns);
	sim_set_workload(sim, run->read_qd, run->write_qd);
	if (run->warm_s)
		assert_int_equal(sim_run(sim, run->warm_s * SEC, NULL), 0);
	for (unsigned i = 0; i < run->measure_s; i++) {
		uint64_t from = sim_now_ns(sim);

		assert_int_equal(sim_run(sim, SEC, &s), 0);
		out->write_iops += s.write.iops / run->measure_s;
		out->read_iops += s.read.iops / run->measure_s;
		if (!run->judge_hiccups && hiccup_since(sim, from))
			continue;
		hist_merge(all, s.read_hist);
		if (hist_count(s.read_hist))
			(void)hist_percentile(s.read_hist, run->pct, &out->window_ns[out->windows]);
		out->windows++;
	}
	if (hist_count(all))
		(void)hist_percentile(all, run->pct, &out->p99_ns);
	sim_free(sim);
}

unsigned static_windows_met(const struct static_result *r, uint64_t goal_ns)
{
	unsigned n = 0;

	for (unsigned i = 0; i < r->windows; i++)
		n += r->window_ns[i] && r->window_ns[i] <= goal_ns;
	return n;
}
