/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control law (docs/tuner.md). Kyber cuts a domain while any domain is
 * congested (a device P90 over its target) and the domain's own P99 is
 * under 3/4 of its target, grows it while its P99 is over its target, and
 * holds it in between. So:
 *
 *  - open: a read target far above the reads' latency and a write target
 *    above the writes' device latency: nothing congests, throttled writes
 *    grow back. Where the goal holds without throttling, the tuner stays
 *    here.
 *  - protecting: a read target low enough that reads count as hurt
 *    whenever Kyber evaluates them, and a write target T: Kyber then holds
 *    the writes' P99 between 3/4 T and T by itself, every 100 ms, cutting
 *    or growing them as needed. T is the one knob: for a writer with a
 *    fixed queue depth it is a write rate (Little's law), and reads get
 *    better as it rises. The tuner moves T on a ladder of levels one
 *    Kyber bucket apart: up on a miss (by about as much as reads miss;
 *    right after a step down, back to the level stepped from), down while
 *    reads have room (by a step that grows while room remains, never onto
 *    a level that missed recently), and back to open once the writes would
 *    run free anyway. A far miss after a steady run is acted on only if
 *    the next second misses too: a spike passes (ctl-spike.c). Reads
 *    within the goal but short of slack for a steady run get a probe of
 *    one step down, undone on a miss (ctl-probe.c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ctl-internal.h"
#include "parse-util.h"

static const char *const state_names[_CTL_STATE_MAX] = {
	[CTL_LEARNING] = "learning",
	[CTL_TRACKING] = "tracking",
	[CTL_HOLDING] = "holding",
	[CTL_INFEASIBLE] = "infeasible",
	[CTL_OVERRIDDEN] = "overridden",
	[CTL_ADVISE] = "advise",
	[CTL_PAUSED] = "paused",
};

const char *ctl_state_to_string(enum ctl_state s)
{
	return (unsigned)s < _CTL_STATE_MAX ? state_names[s] : "?";
}

void controller_relearn(struct controller *c)
{
	ctl_metric_forget(&c->metric);
	c->metric.shape = 0;
	ctl_regime_forget(&c->regime);
	ctl_levels_forget(&c->levels);
	ctl_interference_forget(&c->o8);
	ctl_spike_forget(&c->spike);
	ctl_probe_forget(&c->probe);
	ctl_aim_forget(&c->aim);
	ctl_scatter_forget(&c->scatter);
	c->protecting = c->infeasible = c->device_slow = c->floor_bound = c->decided = false;
	c->level = c->last_move = 0;
	c->read_scale = c->calm_read_scale = 1.0;
	c->lower_step = 1;
	c->slack_streak = c->infeasible_streak = c->miss_streak = c->since_write = 0;
	c->relaxed = false;
	c->prev_write_depth = 0;
	c->cut_written = false;
	c->prev_write_iops = 0;
	c->prev_write_mean_ns = 0;
	c->pull_ns = 0;
	c->floor_cap = -1;
	c->last_state = CTL_LEARNING;
}

void controller_init(struct controller *c, const struct goal *g)
{
	memset(c, 0, sizeof(*c));
	c->goal = *g;
	ctl_host_forget(&c->host);
	controller_relearn(c);
}

void ctl_say(struct ctl_decision *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------- targets */

void ctl_go_open(struct controller *c, const struct ctl_sample *s, const struct kyber_targets *cur,
		 struct ctl_decision *d)
{
	c->protecting = false;
	c->pull_ns = 0;
	if (!ctl_is_open(c->goal.mode, s, cur))
		d->targets = ctl_open_point(c->goal.mode, s, cur);
}

uint64_t ctl_protect_read_target(const struct controller *c)
{
	uint64_t t = ctl_read_target(&c->goal, c->metric.shape > 0 ? c->metric.shape : CTL_SHAPE_DEFAULT,
				     c->read_scale);

	/* Out of reach, reads count as hurt only once worse than the most
	 * throttling gave them (ctl-aim.c); scaled down as any read target
	 * where their tail is not in their device P90 (R256: queued in Kyber). */
	return c->infeasible ? MAX(t, (uint64_t)(c->read_scale * (double)c->aim.read_p90_ns)) : t;
}

void ctl_protect_targets(const struct controller *c, struct ctl_decision *d)
{
	d->targets.read_ns = ctl_protect_read_target(c);
	d->targets.write_ns = ctl_level_ns(c->level);
}

/* ---------------------------------------------------------------- judging */

/* The highest level at which writes would run free (their P99 at full
 * depth over the target: Kyber grows them back), and the highest allowed. */
int ctl_open_level(const struct controller *c, const struct ctl_sample *s)
{
	double w = c->regime.w_free_ns > 0 ? c->regime.w_free_ns : (double)s->write.total_p99_ns;

	return ctl_level_at_least(CTL_OPEN_BELOW * w) - 1;
}

int ctl_max_level(const struct controller *c, const struct ctl_sample *s)
{
	double w = c->regime.w_free_ns > 0 ? c->regime.w_free_ns : (double)s->write.total_p99_ns;
	int max = ctl_level_at_least(CTL_LEVEL_MAX_FACTOR * w);

	/* write-iops-min: no level that would slow the writes under it. */
	if (c->goal.write_iops_min && c->regime.w_free_iops > 0) {
		double floor_ns = w * c->regime.w_free_iops / (double)c->goal.write_iops_min;
		int floor_level = ctl_level_at_least(floor_ns);

		if (ctl_level_ns(floor_level) > floor_ns)
			floor_level--;
		max = MIN(max, MAX(floor_level, ctl_open_level(c, s) + 1));
	}
	if (c->floor_cap >= 0)
		max = MIN(max, c->floor_cap);
	return max;
}

/* A new workload: what the levels did says nothing about it. A new writer
 * also invalidates the level scale (set against its free-running P99):
 * back to open, where it is learned again. One thing still holds when
 * more reads come beside the same writes: unthrottled writes that made
 * fewer reads miss the goal make more reads miss it too (each read now
 * also waits behind other reads), so the open point's misses stay, and
 * the law does not take throttling off to find that out again. So do they
 * where writes stop, start or change under a throttle kept in force: they
 * are why it is kept, and the writers' free-running figures, which would
 * say where open begins, are unknown until the writes run free again. */
static void new_regime(struct controller *c, enum ctl_shift shift)
{
	ctl_metric_forget(&c->metric);
	if (shift == CTL_SHIFT_MORE_READS || (shift == CTL_SHIFT_WRITES && c->protecting))
		ctl_levels_forget_but_open_misses(&c->levels);
	else
		ctl_levels_forget(&c->levels);
	ctl_interference_forget(&c->o8);
	ctl_spike_forget(&c->spike);
	ctl_probe_forget(&c->probe);
	ctl_aim_forget(&c->aim);
	ctl_scatter_forget(&c->scatter);
	c->lower_step = 1;
	c->slack_streak = c->infeasible_streak = 0;
	c->relaxed = c->infeasible = c->device_slow = false;
	c->floor_cap = -1;
	/* Writes that stop, start or change keep the throttle in force: the
	 * law moves on from it (a miss cuts, slack relaxes), reads unhurt
	 * meanwhile. A read shift with the writes' figures unknown starts
	 * over from open. */
	if (c->regime.w_free_ns <= 0 && shift != CTL_SHIFT_WRITES)
		c->protecting = false;
}

static bool at_risk(const struct controller *c, uint64_t metric)
{
	enum ctl_verdict v = ctl_metric_judge(&c->goal, &c->metric, metric);

	return v == V_MISS || v == V_RISK;
}

/*
 * A verdict of infeasible stands until reads are clearly within the goal
 * (clearly_ok) for a few seconds in a row (ctl-aim.c): at its edge it
 * would flap with every second's noise. If it came with the writes at
 * depth 1, the device was slow (a GC storm), and
 * what the misses since reads last met the goal taught goes now: the
 * levels' misses (ctl_levels_recent_disturbed()) and the free-running P99
 * of the slow device. True when that happened. Misses of a streak that
 * ends with reads meeting the goal (met) stand.
 */
static bool judge_infeasible(struct controller *c, bool clearly_ok, bool met)
{
	bool fast_again = clearly_ok && c->device_slow;

	if (ctl_aim_within(&c->aim, clearly_ok))
		c->infeasible = false;
	if (fast_again) {
		ctl_levels_forgive_disturbed(&c->levels);
		ctl_regime_device_fast_again(&c->regime);
		c->device_slow = false;
	} else if (met && !c->device_slow) {
		ctl_levels_recent_stand(&c->levels);
	}
	return fast_again;
}

/* The reason says when a disturbance (the host's, the device's) marked the
 * interval or passed. */
static void say_disturbance(const struct controller *c, const struct ctl_sample *s, bool calm_again,
			    bool fast_again, struct ctl_decision *d)
{
	char r[sizeof(d->reason)];

	if (!calm_again && !c->host.disturbed && !fast_again)
		return;
	snprintf(r, sizeof(r), "%s", d->reason);
	if (fast_again)
		ctl_say(d, "%s (reads meet the goal again after missing it behind the most throttling: "
			"the misses during that are dropped)", r);
	else if (calm_again)
		ctl_say(d, "%s (host steal back to its usual: the misses during it are dropped)", r);
	else
		ctl_say(d, "%s (host steal %.0f%%, over its usual)", r, 100 * s->host_steal);
}

static void say_aim(const struct controller *c, uint64_t goal_ns, struct ctl_decision *d)
{
	char r[sizeof(d->reason)], a[DURATION_BUF_MAX], g[DURATION_BUF_MAX];

	snprintf(r, sizeof(r), "%s", d->reason);
	ctl_say(d, "%s (goal %s out of reach: aiming at %s, the best reads the most throttling gave)", r,
		format_duration(g, sizeof(g), goal_ns), format_duration(a, sizeof(a), c->goal.read_ns));
}

/* Why a spike is held for a second (ctl-spike.c): the kind of spike. */
static void say_spike(const struct controller *c, const struct ctl_sample *s, const char *m,
		      struct ctl_decision *d)
{
	double pct = c->goal.read_pct;

	if (c->spike.held == CTL_SPIKE_AFTERMATH)
		ctl_say(d, "read P%g %s over goal right after a spike that let Kyber grow the writes (depth %u, "
			"%u before it): holding a second more while Kyber cuts them back", pct, m,
			s->write.kyber_depth, c->spike.depth);
	else if (c->spike.held == CTL_SPIKE_AFTER_STEP)
		ctl_say(d, "read P%g %s far over goal right after a step to less write throttling from a steady "
			"run: holding a second (a spike passes; a step that lets the writes hurt reads misses "
			"again)", pct, m);
	else
		ctl_say(d, "read P%g %s far over goal with a hold banked (one per %u seconds within it at these "
			"targets): holding a second (a spike passes; a setting that lets the writes hurt reads "
			"misses again)", pct, m, CTL_SPIKE_STEADY);
}

/* What the law reads from one interval before it acts: the read metric,
 * whether a spike is held, and what passed (a host disturbance, a slow
 * device) or shifted (the workload). */
struct ctl_reading {
	uint64_t metric;
	bool spike, calm_again, fast_again;
	char shift[96];
	char m[DURATION_BUF_MAX];	/* the metric, formatted */
};

/* Learn from the sample, in order: the levels' evidence ages, the host's
 * disturbance, the workload's regime, the read metric with its noise and
 * spikes, the infeasible verdict, the writes' free-running rate. */
static void read_sample(struct controller *c, const struct ctl_sample *s, struct ctl_reading *r,
			struct ctl_decision *d)
{
	const struct goal *g = &c->goal;
	enum ctl_shift kind;

	ctl_levels_tick(&c->levels);
	/* What the law learned from intervals the host disturbed goes once it
	 * has passed: the levels' misses and drift marks, and a read target
	 * lowered because reads were slow with a calm device P90 (the stalls
	 * are in the host path, not in the device). */
	if (!c->host.passing)
		c->calm_read_scale = c->read_scale;
	r->calm_again = ctl_host_update(&c->host, s->host_steal);
	if (r->calm_again) {
		ctl_levels_forgive_disturbed(&c->levels);
		c->read_scale = MAX(c->read_scale, c->calm_read_scale);
	}
	if (c->pull_hold)
		c->pull_hold--;

	kind = ctl_regime_shifted(&c->regime, s, r->shift, sizeof(r->shift));
	if (kind != CTL_SHIFT_NONE)
		new_regime(c, kind);
	if (g->has_read && ctl_metric_estimate(&c->metric, g, s, &r->metric)) {
		d->goal_known = true;
		d->metric_ns = r->metric;
		d->goal_met = r->metric <= g->read_ns;
		c->probe.goal_met |= d->goal_met;
		r->spike = ctl_spike_update(&c->spike, g, r->metric, c->decided && c->since_write >= 1 &&
					    writes_active(s), s->write.kyber_depth,
					    s->write.total_p99_ns);
		ctl_metric_learn_noise(&c->metric, r->metric, !r->spike && c->since_write >= 2 &&
				       s->write.kyber_depth == c->prev_write_depth);
		r->fast_again = judge_infeasible(c, ctl_metric_judge(g, &c->metric, r->metric) >= V_OK,
						 d->goal_met);
	}
	format_duration(r->m, sizeof(r->m), r->metric);
	/* Protecting, writes at Kyber's cap (or before its first depth
	 * change: right after a switch to it) still ran free. */
	ctl_regime_learn_writes(&c->regime, s, !c->protecting || writes_free(s));
}

/* The law's one choice per interval, first case that applies: the mode's
 * open point; no writes; a single write (G-1); no interference (O-8); no
 * estimate yet; a spike held; within the goal unthrottled; engage; and
 * else the law while protecting reads (ctl-protect.c). */
static void steer(struct controller *c, const struct ctl_sample *s, const struct kyber_targets *cur,
		  const struct ctl_reading *r, struct ctl_decision *d)
{
	const struct goal *g = &c->goal;
	const char *shift = r->shift, *m = r->m, *sep = *shift ? ": " : "";

	if (g->mode == GOAL_MODE_THROUGHPUT || g->mode == GOAL_MODE_BALANCED) {
		ctl_go_open(c, s, cur, d);
		ctl_say(d, "mode=%s: targets at the open point, nothing throttled", goal_mode_to_string(g->mode));
	} else if (!writes_active(s)) {
		/* Throttling no writes costs nothing: a throttle in force
		 * stays for their return, so that reads are protected from
		 * its first second, not after the metric's window. */
		if (!c->protecting)
			ctl_go_open(c, s, cur, d);
		if (d->goal_known && !d->goal_met)
			d->state = CTL_INFEASIBLE;
		ctl_say(d, "%s%sno writes to throttle%s%s", shift, sep,
			d->goal_known && !d->goal_met ? "; reads miss the goal on their own" : "",
			c->protecting ? "; the write target stays for their return" : "");
	} else if (s->write.outstanding <= CTL_G1_OUTSTANDING) {
		/* G-1: Kyber always lets one write through. Hands off. */
		d->state = CTL_HOLDING;
		ctl_say(d, "writes have %.1f requests outstanding: Kyber cannot throttle a single "
			"outstanding write (G-1), holding", s->write.outstanding);
	} else if (ctl_interference_holding(&c->o8, d->goal_known && c->since_write >= CTL_O8_SETTLE,
					    (double)r->metric)) {
		ctl_go_open(c, s, cur, d);
		d->state = CTL_HOLDING;
		ctl_say(d, "throttling writes did not improve reads (no read/write interference, O-8): "
			"not throttling, probing again in %u intervals", c->o8.hold);
	} else if (!d->goal_known) {
		/* Between estimates nothing changes, the state included. */
		d->state = c->decided ? c->last_state : CTL_LEARNING;
		ctl_say(d, "%s%sgathering reads to estimate P%g (%llu of %llu)", shift, sep,
			g->read_pct, (unsigned long long)c->metric.window_n,
			(unsigned long long)controller_samples_needed(g->read_pct));
	} else if (r->spike) {
		d->state = c->last_state;
		say_spike(c, s, m, d);
	} else if (!c->protecting && !at_risk(c, r->metric)) {
		c->decided = true;
		if (c->since_write >= 1)
			ctl_levels_met(&c->levels, CTL_LEVEL_OPEN, s->write.iops, s->write.total_p99_ns);
		ctl_go_open(c, s, cur, d);
		ctl_say(d, "%s%sread P%g %s within goal without throttling", shift, sep, g->read_pct, m);
	} else if (!c->protecting) {
		c->decided = true;
		ctl_engage(c, s, r->metric, d);
		ctl_say(d, "%s%sread P%g %s at risk of missing goal: protecting reads (write target %.3gms)",
			shift, sep, g->read_pct, m, (double)d->targets.write_ns / 1e6);
	} else {
		c->decided = true;
		ctl_protect(c, s, cur, r->metric, d);
		if (*shift) {
			char why[sizeof(d->reason)];

			snprintf(why, sizeof(why), "%s", d->reason);
			ctl_say(d, "%s; %s", shift, why);
		}
	}
}

static void decide(struct controller *c, const struct ctl_sample *s, const struct kyber_targets *cur,
		   struct ctl_decision *d)
{
	struct ctl_reading r = {};
	uint64_t goal_ns;

	memset(d, 0, sizeof(*d));
	d->targets = *cur;
	d->state = CTL_TRACKING;
	read_sample(c, s, &r, d);
	/* Out of reach, the law aims at the best reads the device gives
	 * (ctl-aim.c): steer() judges and steers by that. */
	goal_ns = c->goal.read_ns;
	if (c->infeasible)
		c->goal.read_ns = ctl_aim_read_ns(&c->aim, goal_ns);
	steer(c, s, cur, &r, d);
	if (c->goal.read_ns != goal_ns)
		say_aim(c, goal_ns, d);
	c->goal.read_ns = goal_ns;
	if (c->infeasible && d->state == CTL_TRACKING)
		d->state = CTL_INFEASIBLE;
	say_disturbance(c, s, r.calm_again, r.fast_again, d);
}

/* The law's targets as they are written: never the harmful pair, and a
 * target Kyber cannot tell from the one in force left as it is; true when
 * anything is left to write. */
static bool targets_to_write(const struct ctl_sample *s, const struct kyber_targets *cur, bool engaging,
			     struct kyber_targets *t)
{
	uint64_t engaged_read_ns;
	bool write;

	ctl_never_harmful(s, t);
	engaged_read_ns = t->read_ns;
	write = ctl_keep_in_force(s, cur, t);
	/* Engaging, the read target in force was not set for this goal (Kyber's
	 * default, an open point, or the operator's): the brake is written as
	 * computed. */
	if (engaging && t->read_ns != engaged_read_ns) {
		t->read_ns = engaged_read_ns;
		write = true;
	}
	return write;
}

/* No feedback from a plant we do not drive: the law decides on a copy;
 * only what was observed (the read metric, the workload) is kept. */
static void decide_on_copy(struct controller *c, const struct ctl_sample *s,
			   const struct kyber_targets *cur, struct ctl_decision *d)
{
	struct controller copy = *c;

	copy.goal.mode = GOAL_MODE_LATENCY;
	decide(&copy, s, cur, d);
	c->metric = copy.metric;
	c->regime = copy.regime;
	c->host = copy.host;
	/* Engaging as in controller_decide(). Advise keeps no protecting state
	 * (the copy's is dropped), so with it this is copy.protecting: each
	 * advice is what a tuner engaging here would write. Observing, the
	 * caller writes the open point whatever this computes. */
	(void)targets_to_write(s, cur, !c->protecting && copy.protecting, &d->targets);
	d->write = false;
}

void controller_observe(struct controller *c, const struct ctl_sample *s, struct ctl_decision *d)
{
	const struct kyber_targets open = { KYBER_TARGET_MAX_NS, KYBER_TARGET_MAX_NS };

	decide_on_copy(c, s, &open, d);
	d->targets = open;
	d->state = CTL_HOLDING;
}

void controller_decide(struct controller *c, const struct ctl_sample *s,
		       const struct kyber_targets *cur, struct ctl_decision *d)
{
	if (c->goal.mode == GOAL_MODE_ADVISE) {
		decide_on_copy(c, s, cur, d);
		d->state = CTL_ADVISE;
		return;
	}
	bool was_protecting = c->protecting;

	ctl_scatter_add(&c->scatter, s->write.kyber_depth, c->prev_write_depth, s->write.total_p99_ns);
	decide(c, s, cur, d);
	c->last_state = d->state;
	d->write = targets_to_write(s, cur, !was_protecting && c->protecting, &d->targets) || d->pulse_write_ns;
	if (d->write)
		ctl_spike_moved(&c->spike);
	c->prev_write_depth = s->write.kyber_depth;
	c->prev_write_iops = s->write.iops;
	c->prev_write_mean_ns = s->write.total_mean_ns;
	c->since_write = d->write ? 0 : c->since_write + 1;
	c->cut_written = d->cut && d->write;
}

void controller_seed(struct controller *c, uint64_t write_ns, double write_free_p99_ns, double write_free_iops)
{
	struct ctl_decision d = {};

	c->regime.w_free_ns = write_free_p99_ns;
	c->regime.w_free_iops = write_free_iops;
	c->o8.seen = true;
	c->protecting = c->decided = true;
	c->read_scale = 1.0;
	c->lower_step = 1;
	c->slack_streak = c->infeasible_streak = c->miss_streak = 0;
	c->relaxed = false;
	ctl_spike_forget(&c->spike);
	ctl_probe_forget(&c->probe);
	c->last_state = CTL_TRACKING;
	/* The level of the target: the goal was met there, and the law moves
	 * on from it as from a cut of its own. */
	ctl_set_level(c, ctl_level_at_least((double)write_ns), -1, &d);
	ctl_levels_met(&c->levels, c->level, 0, 0);
}

bool controller_engage(struct controller *c, const struct ctl_sample *s, uint64_t metric,
		       struct ctl_decision *d)
{
	char m[DURATION_BUF_MAX];

	if (c->protecting || c->goal.mode != GOAL_MODE_LATENCY || !c->goal.has_read ||
	    metric <= c->goal.read_ns || !writes_active(s) || s->write.outstanding <= CTL_G1_OUTSTANDING)
		return false;
	memset(d, 0, sizeof(*d));
	c->decided = true;
	c->last_state = d->state = CTL_TRACKING;
	c->since_write = 0;
	ctl_spike_forget(&c->spike);
	ctl_probe_forget(&c->probe);
	ctl_engage(c, s, metric, d);
	c->cut_written = d->cut;
	ctl_never_harmful(s, &d->targets);
	d->write = true;
	d->goal_known = true;
	d->metric_ns = metric;
	ctl_say(d, "read P%g %s on the original scheduler: protecting reads from the switch on "
		"(write target %.3gms)", c->goal.read_pct, format_duration(m, sizeof(m), metric),
		(double)d->targets.write_ns / 1e6);
	return true;
}
