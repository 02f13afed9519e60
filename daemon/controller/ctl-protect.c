/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The law while protecting reads (controller.c's header has the whole
 * design): engage from open with a cut, and then on each settled interval
 * cut on a miss, relax on slack, hold in between (probing a step down
 * after a steady run); with the exceptions that keep it off levels that
 * cannot hold the writes (drift) or starve them (write-iops-min).
 */
#include <math.h>
#include <stdio.h>

#include "ctl-internal.h"
#include "parse-util.h"

/* A far miss keeps a level out of use for twice as long. */
static unsigned miss_weight(const struct controller *c, uint64_t metric)
{
	return metric >= CTL_FAR_MISS * c->goal.read_ns ? 2 : 1;
}

void ctl_set_level(struct controller *c, int level, int move, struct ctl_decision *d)
{
	c->level = level;
	c->last_move = move;
	d->cut = move > 0;
	c->pull_ns = 0;
	c->frozen = move < 0;	/* a cut is frozen once reads are fine; a step down is */
	ctl_probe_moved(&c->probe);
	ctl_protect_targets(c, d);
}

/*
 * The level at which Kyber cuts the writes, where they are now, by about
 * as much as reads miss the goal: it scales a congested domain by (b + 1)/4
 * for a P99 in bucket b of its target, so the target is chosen to put the
 * writes' P99 in the middle of the bucket nearest goal/metric (x1/4 for
 * reads 4x over the goal, x1/2 for 2x, x3/4 closer). A Kyber depth above
 * the writes outstanding holds nothing back: the cut is counted from the
 * writes in flight. Each settled interval that still misses after a cut
 * makes the next cut one bucket harder: reads need not scale with the
 * write depth (a garbage-collection tail follows the write rate).
 */
static int cut_level(const struct controller *c, const struct ctl_sample *s, uint64_t metric)
{
	static const double bucket_middle[3] = { 0.125, 0.375, 0.625 };
	double want = (double)c->goal.read_ns / (double)MAX(metric, 1ULL);
	uint32_t depth = s->write.kyber_depth;
	int b;

	if (depth && s->write.outstanding < depth)
		want *= MAX(s->write.outstanding, 1.0) / depth;
	b = (int)clampd(round(4 * want - 1) - c->miss_streak, 0, 2);
	return ctl_level_at_least((double)s->write.total_p99_ns / bucket_middle[b]);
}

/* The level at which Kyber holds the writes where they are: their P99 in
 * the middle of bucket 3, neither cut on a congested window nor grown on
 * a noisy one. Their P99 is the highest their depth showed lately
 * (ctl-scatter.c): a target at one second's sits inside their scatter. */
static int hold_level(const struct controller *c, const struct ctl_sample *s)
{
	uint64_t p99 = MAX(s->write.total_p99_ns, ctl_scatter_high(&c->scatter, s->write.kyber_depth));

	return ctl_level_at_least((double)p99 / CTL_HOLD_MIDDLE);
}

/* From open: a level at which Kyber cuts the writes by about as much as
 * reads miss the goal, while they do; reads at the goal's P90 stop it. */
void ctl_engage(struct controller *c, const struct ctl_sample *s, uint64_t metric, struct ctl_decision *d)
{
	int open = ctl_open_level(c, s);

	ctl_levels_missed(&c->levels, CTL_LEVEL_OPEN, miss_weight(c, metric), c->host.disturbed);
	c->protecting = true;
	c->read_scale = 1.0;
	c->lower_step = 1;
	c->slack_streak = c->infeasible_streak = c->miss_streak = 0;
	ctl_interference_start(&c->o8, (double)metric, s->write.iops, writes_free(s));
	ctl_set_level(c, MIN(MAX(cut_level(c, s, metric), open + 1), ctl_max_level(c, s)), +1, d);
}

/* A miss with no more throttling to give (the top level, or Kyber's
 * depth 1): twice in a row, the goal is out of reach. */
static void out_of_reach(struct controller *c, const struct ctl_sample *s, int max, struct ctl_decision *d,
			 const char *m, const char *g)
{
	c->infeasible |= ++c->infeasible_streak >= 2;
	if (c->goal.write_iops_min && c->level >= max && s->write.kyber_depth != 1) {
		ctl_say(d, "read P%g %s over goal %s with writes at write-iops-min=%llu: holding",
			c->goal.read_pct, m, g, (unsigned long long)c->goal.write_iops_min);
		return;
	}
	/* Reads miss behind as few writes as Kyber allows: the device is
	 * slow (a GC storm), and what the levels did meanwhile says nothing
	 * of them once it is fast again. */
	if (c->infeasible) {
		c->device_slow = true;
		ctl_levels_recent_disturbed(&c->levels);
	}
	ctl_say(d, "read P%g %s over goal %s with writes throttled as far as they go (depth %u): "
		"the goal is out of reach, keeping the best setting", c->goal.read_pct, m, g,
		s->write.kyber_depth);
}

/* A tail under a calm P90: put the read target under the reads' P90 now,
 * a read scale step at least, so that Kyber counts them as hurt. */
static void read_target_under_p90(struct controller *c, const struct ctl_sample *s, struct ctl_decision *d)
{
	double shape = c->metric.shape > 0 ? c->metric.shape : CTL_SHAPE_DEFAULT;
	double now = CTL_READ_SCALE_STEP * (double)s->read.device_p90_ns / (shape * (double)c->goal.read_ns);

	c->read_scale = MAX(MIN(c->read_scale * CTL_READ_SCALE_STEP, now), CTL_READ_SCALE_MIN);
	ctl_protect_targets(c, d);
}

static void on_miss(struct controller *c, const struct ctl_sample *s, uint64_t metric, bool settled,
		    const struct kyber_targets *cur, struct ctl_decision *d, const char *m, const char *g)
{
	double t = (double)ctl_level_ns(c->level);
	int max = ctl_max_level(c, s), up, known;
	bool tail;
	uint64_t probe_p99;

	c->slack_streak = 0;
	c->lower_step = 1;
	if (ctl_probe_draining(&c->probe, settled)) {
		ctl_say(d, "read P%g %s over goal %s while the writes of a failed probe drain: holding",
			c->goal.read_pct, m, g);
		return;
	}
	probe_p99 = ctl_probe_failed(&c->probe);
	if (settled)
		c->miss_streak++;
	/* A tail under a calm P90: Kyber did not see the reads hurt (by the
	 * target in force, which may be one a rewrite left alone), so it never
	 * acted on the write target, and the read target is lowered below.
	 * The miss counts against the level like one the host disturbed: it
	 * goes once a disturbance passes. Held as an ordinary miss it kept
	 * the level out of use for an evidence half-life (flashsim R1+W256 at
	 * 2 ms, CI: a tail miss at 4-8 s held the writes at depth 2-4, 30-39%
	 * of none's, for 20-30 s with reads at a third of the goal). */
	tail = settled && s->read.device_p90_ns &&
	       s->read.device_p90_ns <= MAX(ctl_protect_read_target(c), cur->read_ns) &&
	       c->read_scale > CTL_READ_SCALE_MIN;
	/* Right after a step down, the miss is that step's doing. */
	if (settled || c->last_move < 0)
		ctl_levels_missed(&c->levels, c->level, miss_weight(c, metric), c->host.disturbed || tail);
	if (settled && metric < CTL_CLEAR_MISS * c->goal.read_ns && ctl_levels_rare_miss(&c->levels, c->level)) {
		/* The goal must hold in 95% of the seconds, not in all: a level
		 * with that record keeps it through a rare, near miss. */
		c->miss_streak = 0;
		ctl_say(d, "read P%g %s over goal %s, a rare miss at a level that met it in %u of %u seconds: "
			"holding", c->goal.read_pct, m, g, ctl_levels_met_count(&c->levels, c->level),
			ctl_levels_met_count(&c->levels, c->level) + ctl_levels_missed_count(&c->levels, c->level));
		return;
	}
	if (tail)
		read_target_under_p90(c, s, d);
	if (c->level >= max || s->write.kyber_depth == 1) {
		out_of_reach(c, s, max, d, m, g);
		return;
	}
	c->infeasible_streak = 0;
	/* While Kyber cuts, the cut follows the distance to the goal (less
	 * as reads get near it); the level never goes under the one in force
	 * unless Kyber is cutting. */
	up = cut_level(c, s, metric);
	if ((double)s->write.total_p99_ns >= CTL_CUT_ZONE * t)
		up = MAX(up, c->level + 1);
	/* Right after a step down, the level stepped from met the goal: back
	 * to it is enough. A cut by the miss's size would take a spike that
	 * fell just after the step for the step's doing. */
	known = c->last_move < 0 ? ctl_levels_good_above(&c->levels, c->level, max) : -1;
	if (known >= 0)
		up = MIN(up, known);
	/* A probe left reads near the goal, so its miss is its own: Kyber grew
	 * the writes at the lower level, and the level left can keep them
	 * grown (its band of 3/4 to 1 of a target holds both depths). Back at
	 * least to the level that puts their P99 of before the probe in the
	 * middle of that band, where Kyber cuts them back. Not after a slack
	 * step: reads had room then, a miss right after is as likely a spike,
	 * and that level is often one above the one left (hiccup R4+W64 at a
	 * fifth of none's P99: 81% of the oracle's writes fall to 76%). */
	if (probe_p99)
		up = MAX(up, ctl_level_at_least((double)probe_p99 / CTL_HOLD_MIDDLE));
	ctl_set_level(c, MIN(MAX(up, ctl_open_level(c, s) + 1), max), +1, d);
	ctl_say(d, "read P%g %s over goal %s%s: %swrite target %.3gms", c->goal.read_pct, m, g,
		probe_p99 ? " after a probe of less write throttling" : "",
		tail ? "read P90 under the read target: lower read target, " : "more write throttling, ",
		(double)ctl_level_ns(c->level) / 1e6);
}

/* Reads are fine after a cut: hold the writes there (a read spike no
 * longer cuts them further; the law decides that, on a second's data),
 * at a level that has held them lately. Once per cut; false when there is
 * nothing to freeze. */
static bool freeze(struct controller *c, const struct ctl_sample *s, struct ctl_decision *d)
{
	int level = MAX(hold_level(c, s), ctl_open_level(c, s) + 1);

	while (level < c->level && ctl_levels_unusable(&c->levels, level))
		level++;
	if (c->frozen || level >= c->level)
		return false;
	ctl_set_level(c, level, -1, d);
	return true;
}

/*
 * Writes held by a level from below settle shallower than where a cut from
 * above left them at the same level (where a depth's rate is nearly flat,
 * so is its latency: Kyber stops growing them early). When a level once
 * met the goal with clearly more writes than it holds now (after a
 * disturbance, say), pull them up: a write target at the P99 they had at
 * that rate makes Kyber grow them until their latency is back there, that
 * is until they run at that rate again; then the level's own target holds
 * them. At most once per evidence half-life.
 */
static bool pull_up(struct controller *c, const struct ctl_sample *s, struct ctl_decision *d,
		    const char *m, const char *g)
{
	double held = ctl_levels_rate(&c->levels, c->level);
	double p99 = ctl_levels_rate_p99(&c->levels, c->level);

	/* The lower rate must hold for two intervals: one alone may be a
	 * workload's edge (writes stopping within the interval). */
	if (c->pull_hold || !(p99 > 0) || held < CTL_PULL_GAIN * s->write.iops ||
	    held < CTL_PULL_GAIN * c->prev_write_iops || p99 >= (double)s->write.total_p99_ns)
		return false;
	c->pull_hold = CTL_EVIDENCE_HALF_LIFE;
	c->pull_ns = ctl_clamp_target(p99);
	c->pull_left = CTL_PULL_INTERVALS;
	c->last_move = -1;
	d->targets.write_ns = c->pull_ns;
	ctl_say(d, "read P%g %s well under goal %s with writes at %.0f of the %.0f IOPS this level held: "
		"pull them up (write target %.3gms until they are back)", c->goal.read_pct, m, g,
		s->write.iops, held, (double)c->pull_ns / 1e6);
	return true;
}

/* While pulling up: keep the pull's target until the writes are back at
 * the level's rate (or their P99 at the pull's target), or time is up. */
static void pulling(struct controller *c, const struct ctl_sample *s, struct ctl_decision *d)
{
	if (!c->pull_ns)
		return;
	if (c->pull_left-- > 0 && (double)s->write.total_p99_ns > (double)c->pull_ns &&
	    s->write.iops < CTL_PULL_REACHED * ctl_levels_rate(&c->levels, c->level)) {
		d->targets.write_ns = c->pull_ns;
		return;
	}
	c->pull_ns = 0;
}

/* The writes' P99 is too near the level's target for either a hold or a
 * deliberate growth. */
static bool in_noise_band(const struct ctl_sample *s, int level)
{
	double r = (double)s->write.total_p99_ns / (double)ctl_level_ns(level);

	return r >= CTL_NOISE_LO && r <= CTL_NOISE_HI;
}

/*
 * Kyber grows a domain by whole requests only (depth x (b + 1)/4,
 * truncated): from depth 1 only once its P99 is in bucket 7 (over 7/4 of
 * the target), from 2 and 3 in bucket 5 (over 5/4), from 4 up in bucket 4
 * (over the target). The highest level at which Kyber grows the writes
 * from where they are; a step down to any level above it changes nothing.
 */
static int growing_level(const struct ctl_sample *s)
{
	static const double grow_over[] = { [1] = 1.75, [2] = 1.25, [3] = 1.25 };
	uint32_t depth = s->write.kyber_depth;
	double over = depth < ELEMENTSOF(grow_over) ? grow_over[depth] : 1.0;

	if (!depth || depth >= KYBER_WRITE_DEPTH_CAP || !s->write.total_p99_ns)
		return CTL_LEVELS;
	return ctl_level_at_least((double)s->write.total_p99_ns / over) - 1;
}

/* The next level down for more writes: a step (growing while reads keep
 * having room), or straight to a lower level known to meet the goal; never
 * onto or past a level that missed it lately. c->level if there is none. */
static int lower_level(const struct controller *c, const struct ctl_sample *s, int open)
{
	int target = MAX(MIN(c->level - c->lower_step, growing_level(s)), 0), known;

	for (int l = c->level - 1; l >= target; l--)
		if (ctl_levels_unusable(&c->levels, l))
			return l + 1;
	known = ctl_levels_good_below(&c->levels, c->level, open + 1);
	return known >= 0 && known < target ? known : target;
}

/*
 * The writes run clearly faster at the same level and depth than an
 * interval ago, with reads well within the goal: the device got faster (a
 * GC storm or host stalls ended). The levels with less throttling that
 * missed the goal lately did so on the slower device, and their misses
 * are forgiven so the writes can have them back; so is a free-running
 * P99 learned while it was slow (ctl_regime_device_fast_again()), which
 * would keep the levels under it open. Each write must take
 * less time too, not only more of them complete: writes that started
 * during the last interval (a new write phase) complete more in this
 * one at the same latency, and the misses that keep throttling on for
 * them stay.
 */
static void forgive(struct controller *c, const struct ctl_sample *s, bool settled)
{
	/* No more writes in the device than an interval ago, and more done:
	 * that is the device too, not the depth. So it is in the interval
	 * right after a cut, which takes writes out of the device and cannot
	 * make them run faster, and right after any other write that left
	 * Kyber's depth where it was (a change of depth would be the write's
	 * doing; there was none). Waiting a settled interval missed the
	 * moment a GC storm ended (qdlat R1+W256 at a fifth of none's P99,
	 * matrix seeds 44 and 46: the free-running P99 of the storm stayed,
	 * and with it the writes at 60-70% of their rate before it). */
	uint32_t depth = s->write.kyber_depth;
	bool no_deeper = depth && ((c->since_write >= 1 || c->cut_written) ? depth <= c->prev_write_depth :
									     depth == c->prev_write_depth);

	if (!(settled || no_deeper) || s->write.iops < CTL_FASTER_GAIN * c->prev_write_iops ||
	    !(s->write.total_mean_ns > 0) ||
	    s->write.total_mean_ns * CTL_FASTER_GAIN > c->prev_write_mean_ns)
		return;
	ctl_levels_forgive_below(&c->levels, c->level);
	ctl_regime_device_fast_again(&c->regime);
}

/*
 * The level under this one nearest to it, above `floor`, where the writes
 * met the goal at their free-running rate (c->regime's), or `floor` if
 * none: a step past it gains the writes nothing and gives the reads their
 * queue back. After a disturbance a step that grew while reads had room
 * (lower_step) reaches past such a level, and a miss there starts the law
 * over from a cut (flash R1+W256 at a fifth, after CPU contention: the
 * open point, reads at 8.6 ms, and the writes back at their rate 16 s
 * after it, where the level held before it was one step away).
 */
static int full_rate_level(const struct controller *c, int floor)
{
	double full = CTL_FULL_RATE * c->regime.w_free_iops;

	for (int l = c->level - 1; l > floor; l--) {
		if (ctl_levels_unusable(&c->levels, l))
			break;
		if (full > 0 && ctl_levels_rate(&c->levels, l) >= full)
			return l;
	}
	return floor;
}

/*
 * Less write throttling: a step down the ladder (lower_level()), clear of
 * the writes' noise band, or throttling off where the next step is the
 * open point. `room` says why there is room ("well under goal" on slack,
 * or a probe's words); false when no level below may be tried, nothing
 * said.
 */
static bool relax(struct controller *c, const struct ctl_sample *s, uint64_t metric,
		  const struct kyber_targets *cur, struct ctl_decision *d, const char *m, const char *g,
		  const char *room, bool may_open)
{
	int open = ctl_open_level(c, s), next = lower_level(c, s, open);

	/* A target just above or below the writes' P99 holds them only until
	 * the P99's noise crosses it: go on to one that grows them on
	 * purpose (Kyber stops growing them where their P99 falls under it),
	 * or hold. */
	while (next > open && next < c->level && in_noise_band(s, next) &&
	       !ctl_levels_unusable(&c->levels, next - 1))
		next--;
	if (next > open && in_noise_band(s, next))
		next = c->level;
	next = full_rate_level(c, next);
	if (next <= open && may_open && !ctl_levels_unusable(&c->levels, CTL_LEVEL_OPEN)) {
		ctl_go_open(c, s, cur, d);
		c->last_move = -1;
		c->relaxed = true;
		ctl_say(d, "read P%g %s %s goal %s: throttling off", c->goal.read_pct, m, room, g);
		return true;
	}
	next = MAX(next, open + 1);
	if (next >= c->level)
		return false;
	if (metric < CTL_FAR_SLACK * c->goal.read_ns)
		c->lower_step = MIN(c->lower_step + 1, CTL_LOWER_MAX);
	else
		c->lower_step = 1;
	/* The read target comes back as many steps as the level goes down:
	 * the tail rule can lower it to under the reads' P90 in one second
	 * (a host hiccup's), and Kyber then cuts the writes to depth 1 on
	 * every read over it whatever the level (hiccup's GC storm at a
	 * fifth of none's P99: reads at 269 us against a 1.57 ms goal). */
	c->read_scale = MIN(c->read_scale / pow(CTL_READ_SCALE_STEP, c->lower_step), 1.0);
	ctl_set_level(c, next, -1, d);
	c->relaxed = true;
	ctl_say(d, "read P%g %s %s goal %s: less write throttling (write target %.3gms)",
		c->goal.read_pct, m, room, g, (double)ctl_level_ns(c->level) / 1e6);
	return true;
}

/* Writes at their free-running rate gain nothing from less throttling:
 * where the rate is flat in the depth, the writes' latency is too, and
 * Kyber could not hold them. */
static bool at_full_rate(const struct controller *c, const struct ctl_sample *s)
{
	return s->write.iops >= CTL_FULL_RATE * c->regime.w_free_iops;
}

static void on_slack(struct controller *c, const struct ctl_sample *s, uint64_t metric, bool settled,
		     const struct kyber_targets *cur, struct ctl_decision *d, const char *m, const char *g)
{
	c->infeasible_streak = 0;
	if (s->write.iops < CTL_SLACK_EDGE_RATE * c->prev_write_iops) {
		ctl_say(d, "read P%g %s well under goal %s with writes at %.0f IOPS from %.0f: their pause, "
			"not room for more", c->goal.read_pct, m, g, s->write.iops, c->prev_write_iops);
		return;
	}
	if (settled)
		ctl_levels_met(&c->levels, c->level, s->write.iops, s->write.total_p99_ns);
	if (++c->slack_streak < CTL_SLACK_INTERVALS) {
		ctl_say(d, "read P%g %s well under goal %s", c->goal.read_pct, m, g);
		return;
	}
	c->slack_streak = 0;
	if (at_full_rate(c, s)) {
		ctl_say(d, "read P%g %s well under goal %s with writes at their free-running rate: holding",
			c->goal.read_pct, m, g);
		return;
	}
	if (freeze(c, s, d)) {
		ctl_say(d, "read P%g %s well under goal %s: hold the writes where they are (write target %.3gms)",
			c->goal.read_pct, m, g, (double)ctl_level_ns(c->level) / 1e6);
		return;
	}
	if (pull_up(c, s, d, m, g))
		return;
	if (!relax(c, s, metric, cur, d, m, g, "well under", true) && !ctl_step_pulse(c, s, settled, d, m, g))
		ctl_say(d, "read P%g %s well under goal %s; less write throttling missed it lately: holding",
			c->goal.read_pct, m, g);
}

/* Within the goal but not clearly under it, for a steady run: a step down
 * to see whether the reads have room after all (ctl-probe.c). Never to the
 * open point, whose miss would start the law over from a cut. */
static bool probe(struct controller *c, const struct ctl_sample *s, uint64_t metric, bool settled,
		  const struct kyber_targets *cur, struct ctl_decision *d, const char *m, const char *g)
{
	if (!settled || !ctl_probe_due(&c->probe, c->spike.steady) || at_full_rate(c, s))
		return false;
	c->lower_step = 1;
	if (!relax(c, s, metric, cur, d, m, g, "steady within", false))
		return false;
	ctl_probe_started(&c->probe, s->write.total_p99_ns);
	ctl_spike_stepped(&c->spike);
	return true;
}

/*
 * Kyber grew the writes although they already ran at their free-running
 * rate, under targets unchanged for two intervals: the level's target sits
 * in the scatter of the writes' latency, where Kyber lets them creep up
 * until reads miss (CTL_DRIFT_WEIGHT). Remember it, and unless reads miss
 * already (the cut then takes over), go up to the level that holds the
 * writes where they are now, as a freeze does: at a flat rate their
 * latency grows with the depth (Little's law), and the interval's P99, a
 * tail, is already the grown writes' (scaled by the growth again, it
 * overshoots, and Kyber cuts them hard on the next congested window). One
 * level up is too little where Kyber grows them by a third or more at
 * once: their latency crosses the new target again, and they grow again
 * until reads miss.
 */
static int drift_level(const struct controller *c, const struct ctl_sample *s)
{
	int level = MAX(c->level + 1, hold_level(c, s)), max = ctl_max_level(c, s);

	/* Not onto a level that drifted or missed lately either. */
	while (level < max && ctl_levels_unusable(&c->levels, level))
		level++;
	return level;
}

static bool drifted(struct controller *c, const struct ctl_sample *s, enum ctl_verdict v,
		    struct ctl_decision *d)
{
	if (c->since_write < 2 || !c->prev_write_depth || s->write.kyber_depth <= c->prev_write_depth ||
	    c->prev_write_iops < CTL_FULL_RATE * c->regime.w_free_iops)
		return false;
	ctl_levels_drifted(&c->levels, c->level, c->host.disturbed);
	if (v == V_MISS || c->level >= ctl_max_level(c, s))
		return false;	/* on_miss() fails a probe under way, with its floor */
	ctl_probe_failed(&c->probe);
	ctl_set_level(c, MIN(drift_level(c, s), ctl_max_level(c, s)), +1, d);
	c->frozen = true;
	ctl_say(d, "Kyber grew the writes (depth %u -> %u) at their free-running rate: write target in their "
		"latency noise, up to where it holds them (%.3gms)", c->prev_write_depth, s->write.kyber_depth,
		(double)ctl_level_ns(c->level) / 1e6);
	return true;
}

/* write-iops-min outranks the read goal: writes under it get a lower
 * level, and no level above that one is used again in this regime. */
static bool below_floor(struct controller *c, const struct ctl_sample *s, enum ctl_verdict v,
			struct ctl_decision *d, const char *m, const char *g)
{
	if (!c->goal.write_iops_min || s->write.iops >= (double)c->goal.write_iops_min ||
	    c->level <= ctl_open_level(c, s) + 1)
		return false;
	ctl_set_level(c, c->level - 1, -1, d);
	c->floor_cap = c->level;
	c->floor_bound = v == V_MISS;
	d->state = c->floor_bound ? CTL_INFEASIBLE : CTL_TRACKING;
	ctl_say(d, "write IOPS %.0f below write-iops-min=%llu: less write throttling (read P%g %s, goal %s)",
		s->write.iops, (unsigned long long)c->goal.write_iops_min, c->goal.read_pct, m, g);
	return true;
}

void ctl_protect(struct controller *c, const struct ctl_sample *s, const struct kyber_targets *cur,
		 uint64_t metric, struct ctl_decision *d)
{
	uint32_t depth = s->write.kyber_depth;
	bool settled = c->since_write >= 1 && (depth ? depth == c->prev_write_depth : c->since_write >= 2);
	char m[DURATION_BUF_MAX], g[DURATION_BUF_MAX];
	enum ctl_verdict v = ctl_metric_judge(&c->goal, &c->metric, metric);

	format_duration(m, sizeof(m), metric);
	format_duration(g, sizeof(g), c->goal.read_ns);
	if (c->probe.adopt) {
		/* The pulse's hold, measured where the law could not: its
		 * level is the one nearest it (within the rewrite tolerance,
		 * so the hold stays written). */
		c->probe.adopt = false;
		c->level = ctl_level_nearest((double)cur->write_ns);
	}
	/* What the most throttling gives the reads, learned before the
	 * verdict too, so that the aim is ready with it (ctl-aim.c). */
	if (settled && (depth == 1 || c->level >= ctl_max_level(c, s)))
		ctl_aim_learn(&c->aim, metric, s->read.device_p90_ns);
	ctl_protect_targets(c, d);
	ctl_probe_update(&c->probe, settled, c->spike.steady);
	if (c->infeasible && settled)
		ctl_probe_aim_tick(&c->probe, v != V_MISS);
	if (v == V_MISS)
		c->pull_ns = 0;
	pulling(c, s, d);
	if (below_floor(c, s, v, d, m, g))
		return;
	if (settled && ctl_interference_none(&c->o8, (double)metric, s->write.iops)) {
		ctl_go_open(c, s, cur, d);
		d->state = CTL_HOLDING;
		ctl_say(d, "throttling writes cut them to %.0f IOPS but read P%g stayed at %s: no read/write "
			"interference (O-8), throttling off", s->write.iops, c->goal.read_pct, m);
		return;
	}
	if (v != V_MISS) {
		c->miss_streak = 0;
		forgive(c, s, settled);
	}
	if (drifted(c, s, v, d)) {
		c->slack_streak = 0;
	} else if (v == V_MISS) {
		on_miss(c, s, metric, settled, cur, d, m, g);
	} else if (v == V_SLACK) {
		on_slack(c, s, metric, settled, cur, d, m, g);
	} else {
		bool probed = false;

		/* Converging after the engaging cut, before any step down: a
		 * second with room for two steps counts towards the streak
		 * while the window still holds the miss before the cut, so the
		 * first step comes when it has gone, not a streak later (the
		 * convergence budget is 5 s). Later misses are the law's own
		 * steps failing or a disturbance, and the window has its say. */
		if (v == V_OK && !c->relaxed && !c->infeasible &&
		    ctl_metric_two_steps_alone(&c->goal, &c->metric, metric))
			c->slack_streak = MIN(c->slack_streak + 1, CTL_SLACK_INTERVALS - 1);
		else
			c->slack_streak = 0;
		c->lower_step = 1;
		if (settled && v == V_OK && !freeze(c, s, d)) {
			ctl_levels_met(&c->levels, c->level, s->write.iops, s->write.total_p99_ns);
			probed = probe(c, s, metric, settled, cur, d, m, g);
		}
		if (!probed)
			probed = ctl_grow_pulse(c, s, settled, d, m, g);
		if (!probed)
			ctl_say(d, "read P%g %s within goal %s (write target %.3gms)", c->goal.read_pct, m, g,
				(double)ctl_level_ns(c->level) / 1e6);
	}
	if (c->floor_bound && v == V_MISS && c->protecting)
		d->state = CTL_INFEASIBLE;	/* the floor and the goal cannot both hold */
	else if (v != V_MISS)
		c->floor_bound = false;
}
