/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Protecting reads (docs/tuner.md): the read target says when Kyber counts
 * reads as hurt, the write target k x w_ref how far it lets write latency
 * inflate before it stops cutting writes. Tighten when the goal is missed,
 * hold when it is met, give writes back in short grow pulses when reads
 * have room, and give up throttling when it does not help reads (O-8).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ctl-internal.h"
#include "parse-util.h"

/* Read target while protecting: the read P90 that goes with the goal's
 * percentile at the goal (from this interval's shape), scaled, inside the
 * live band around what reads see now. Kyber calls reads hurt above it. */
static uint64_t protect_read_target(const struct controller *c, const struct ctl_sample *s)
{
	double t = (double)c->goal.read_ns * (c->shape > 0 ? c->shape : 1.0) * c->read_scale;

	if (s->read.device_p90_ns)
		t = clampd(t, c->p.read_band_lo * (double)s->read.device_p90_ns,
			   c->p.read_band_hi * (double)s->read.device_p90_ns);
	return clamp_target(t);
}

/* Write target while protecting: k x the unthrottled write P99, never below
 * the write device latency (a write target under it congests Kyber and, with
 * a loose read target, cuts the *reads*: the harmful pair). */
static uint64_t protect_write_target(const struct controller *c, const struct ctl_sample *s)
{
	double lo = c->p.write_band_lo * (double)s->write.device_p90_ns;

	return clamp_target(MAX(c->k * c->w_ref_ns, lo));
}

void ctl_forget_depths(struct controller *c)
{
	memset(c->depth_met, 0, sizeof(c->depth_met));
	memset(c->depth_missed, 0, sizeof(c->depth_missed));
	c->depth_age = 0;
	c->bad_depth = 0;
}

/* Reads missed at this depth at least twice, in more than a quarter of its
 * intervals. */
static bool depth_bad(const struct controller *c, unsigned d)
{
	return c->depth_missed[d] >= 2 && 3 * c->depth_missed[d] > c->depth_met[d];
}

/* Reads met the goal here again and again, missing in at most a fifth. */
static bool depth_proven(const struct controller *c, unsigned d)
{
	return c->depth_met[d] >= 5 && 4 * c->depth_missed[d] <= c->depth_met[d];
}

/* Record what this interval's write depth did to reads (only an interval
 * spent whole at one depth says anything about it; after a target write,
 * only a pulse's miss does), and find the lowest bad depth above the
 * deepest proven one. */
static void note_depth(struct controller *c, const struct ctl_sample *s, bool met)
{
	unsigned d = s->write.kyber_depth, proven = 0;
	uint8_t *n;

	if (++c->depth_age >= CTL_DEPTH_DECAY) {
		for (unsigned i = 0; i <= CTL_DEPTH_MAX; i++) {
			c->depth_met[i] /= 2;
			c->depth_missed[i] /= 2;
		}
		c->depth_age = 0;
	}
	n = NULL;
	if (c->wrote_last) {
		if (c->pulse_from && !met)	/* growing from pulse_from was too much */
			n = &c->depth_missed[MIN(c->pulse_from + 1, (uint32_t)CTL_DEPTH_MAX)];
	} else if (d && d <= CTL_DEPTH_MAX && d == c->prev_write_depth)
		n = met ? &c->depth_met[d] : &c->depth_missed[d];
	if (n && *n < UINT8_MAX)
		(*n)++;
	for (unsigned i = CTL_DEPTH_MAX; i >= 1 && !proven; i--)
		if (depth_proven(c, i))
			proven = i;
	c->bad_depth = 0;
	for (unsigned i = proven + 1; i <= CTL_DEPTH_MAX && !c->bad_depth; i++)
		if (depth_bad(c, i))
			c->bad_depth = i;
}

/* Multiplicative step that shrinks on every reversal and grows while the
 * direction holds: fast from far away, no ringing near the goal. */
static double next_step(struct controller *c, int dir)
{
	if (c->last_dir && dir != c->last_dir)
		c->step = MAX(c->p.step_min, sqrt(c->step));
	else if (c->last_dir == dir)
		c->step = MIN(c->p.step_max, c->step * 1.5);
	c->last_dir = dir;
	return c->step;
}

/* Remember where reads and writes were before throttling more. */
static void probe(struct controller *c, const struct ctl_sample *s, uint64_t metric)
{
	/* Once throttling has helped reads on this workload, the device has
	 * interference: a later small gain is the law of diminishing
	 * returns, not O-8. */
	if (c->interference_seen)
		return;
	/* Starting from writes already cut to a few, no gain proves nothing:
	 * the reads' own queueing dominates by then. */
	if (s->write.kyber_depth && s->write.kyber_depth < 32)
		return;
	c->probe_pending = true;
	c->probe_metric = (double)metric;
	c->probe_write_iops = s->write.iops;
	c->probe_write_depth = s->write.kyber_depth;
}

/*
 * O-8: since the last probe writes were throttled for real (IOPS down 30%
 * or depth down 4x) and reads did not get 10% better, twice in a row: the
 * device has no read/write interference to remove. Until writes are
 * throttled there is no evidence either way.
 */
bool ctl_o8_evidence(struct controller *c, const struct ctl_sample *s, uint64_t metric)
{
	bool throttled;

	if (!c->probe_pending)
		return false;
	throttled = s->write.iops <= 0.7 * c->probe_write_iops ||
		    (s->write.kyber_depth && c->probe_write_depth &&
		     4 * s->write.kyber_depth <= c->probe_write_depth);
	if (!throttled)
		return false;
	/* An interval in which Kyber still moved the write depth mixes the
	 * old depth's reads in: no evidence either way (a noisy host makes
	 * those look like "no gain"). */
	if (s->write.kyber_depth && s->write.kyber_depth != c->prev_write_depth)
		return false;
	if ((double)metric < 0.9 * c->probe_metric) {
		c->probe_pending = false;	/* throttling helps reads */
		c->o8_strikes = 0;
		c->interference_seen = true;
		return false;
	}
	return ++c->o8_strikes >= 2;
}

/*
 * Kyber cuts writes by (b + 1)/4 per read evaluation, b = 4 x their latency /
 * write target. Twice the goal or more, cut hard (b = 0: x1/4): the depth
 * that meets it is usually far below today's, and k also caps how far
 * Kyber goes (it stops cutting at 3/4 k). Closer, gently (b = 1: x1/2).
 */
static double k_for_distance(const struct controller *c, double ratio, double infl)
{
	double k = ratio >= 2 ? 4.2 : c->p.k_init;

	return MAX(k, infl * 1.34);	/* stay where Kyber cuts, never where it grows */
}

static void engage(struct controller *c, const struct ctl_sample *s, uint64_t metric,
		   struct ctl_decision *d)
{
	c->protecting = true;
	c->k = k_for_distance(c, (double)metric / (double)c->goal.read_ns, inflation(c, s));
	c->read_scale = c->p.read_scale_init;
	c->step = c->p.step_init;
	c->last_dir = 1;
	c->relax_streak = c->infeasible_streak = 0;
	c->floor_cap_hits = 0;
	c->o8_strikes = 0;
	probe(c, s, metric);
	d->targets.read_ns = protect_read_target(c, s);
	d->targets.write_ns = protect_write_target(c, s);
}

/*
 * Reads miss the goal. If Kyber sees them hurt (read P90 above the read
 * target) it is cutting writes, down to their ceiling: wait, or raise the
 * ceiling once writes are at it. If it does not see them hurt (a heavy tail
 * under a calm P90), call them hurt sooner.
 */
static void tighten(struct controller *c, const struct ctl_sample *s, const struct kyber_targets *cur,
		    uint64_t metric, double k_cap, struct ctl_decision *d, const char *m, const char *gl)
{
	const struct goal *g = &c->goal;
	double infl = inflation(c, s);
	bool seen_hurt = s->read.device_p90_ns > cur->read_ns;
	bool at_ceiling = infl >= 0.75 * c->k;
	bool floor_depth = s->write.kyber_depth && s->write.kyber_depth <= 1;
	const char *rel = metric > g->read_ns ? "above" : "close to";

	c->relax_streak = 0;
	/*
	 * write-iops-min caps the slowdown at k_cap. The cap binds when writes
	 * run near the floor, or when the tuner keeps meeting it (Kyber swings
	 * writes around a write target at the cap on its own: some intervals
	 * read as "at the ceiling", some as "still cutting"). Once found
	 * binding (floor_bound) the verdict stands until reads meet the goal:
	 * each swing is no news.
	 */
	bool floored = g->write_iops_min && k_cap < c->p.k_max;
	bool at_cap = at_ceiling && c->k >= k_cap;

	if (floored && at_cap && metric > g->read_ns)
		c->floor_cap_hits++;
	if (floored && at_cap && metric > g->read_ns &&
	    (s->write.iops < 1.25 * (double)g->write_iops_min || c->floor_cap_hits >= 4))
		c->floor_bound = true;
	if (floor_depth || at_cap || c->floor_bound) {
		c->infeasible_streak += metric > g->read_ns;
		d->state = c->infeasible_streak >= 2 || c->floor_bound ? CTL_INFEASIBLE : CTL_TRACKING;
		/* Found infeasible at the floor's cap: that verdict stands too
		 * (Kyber keeps swinging the depth around the cap). */
		if (floored && at_cap && d->state == CTL_INFEASIBLE)
			c->floor_bound = true;
		if (!floor_depth && floored)
			ctl_say(d, "read P%g %s %s goal %s with writes at write-iops-min=%llu: holding",
			    g->read_pct, m, rel, gl, (unsigned long long)g->write_iops_min);
		else
			ctl_say(d, "read P%g %s %s goal %s with writes throttled as far as they go "
			    "(depth %u): the goal is out of reach, keeping the best setting",
			    g->read_pct, m, rel, gl, s->write.kyber_depth);
		return;
	}
	c->infeasible_streak = 0;
	if (!seen_hurt && c->read_scale > c->p.read_scale_min) {
		/* A near miss lowers it a little, a clear one more. */
		c->read_scale = MAX(c->p.read_scale_min,
				    c->read_scale * (metric > 1.2 * g->read_ns ? 0.7 : 0.85));
		ctl_say(d, "read P%g %s %s goal %s while read P90 is under the read target: "
		    "lower read target", g->read_pct, m, rel, gl);
	} else if (!at_ceiling) {
		/* Kyber is on it; soften the cuts as the goal gets near. */
		c->k = MIN(c->k, k_for_distance(c, (double)metric / (double)g->read_ns, infl));
		ctl_say(d, "read P%g %s %s goal %s: Kyber is cutting writes (depth %u, latency %.1fx of "
		    "%.1fx allowed)", g->read_pct, m, rel, gl, s->write.kyber_depth, infl, c->k);
	} else {
		probe(c, s, metric);
		c->k = MIN(k_cap, c->k * next_step(c, 1));
		ctl_say(d, "read P%g %s %s goal %s with writes at their ceiling: more write throttling "
		    "(writes may slow down %.1fx)", g->read_pct, m, rel, gl, c->k);
	}
}

/*
 * The goal is met: keep the write depth where it is. A write target well
 * above the writes' latency means Kyber never grows them on a noisy
 * window's tail (depth creeps up otherwise, 100 ms at a time) and still
 * cuts them if reads get hurt. Only relax() lets them grow, on purpose.
 */
static void hold_depth(struct controller *c, const struct ctl_sample *s)
{
	c->k = MAX(c->k, c->p.k_hold);
}

/* Reads have room: give writes back what they lost, gently; park when
 * they run free anyway. Returns true when it parked at the open point. */
static bool relax(struct controller *c, const struct ctl_sample *s, const struct kyber_targets *cur,
		  struct ctl_decision *d, const char *m, const char *gl)
{
	const struct goal *g = &c->goal;
	bool losing = c->w_ref_iops > 0 && s->write.iops < 0.9 * c->w_ref_iops;

	c->infeasible_streak = 0;
	if (++c->relax_streak < c->p.relax_after) {
		ctl_say(d, "read P%g %s well under goal %s", g->read_pct, m, gl);
		return false;
	}
	c->relax_streak = 0;
	if (losing && c->read_scale < c->p.read_scale_init) {
		c->read_scale = MIN(c->p.read_scale_init, c->read_scale * 1.3);
		ctl_say(d, "read P%g %s well under goal %s, writes at %.0f of %.0f IOPS: higher read target",
		    g->read_pct, m, gl, s->write.iops, c->w_ref_iops);
	} else if (losing && c->bad_depth &&
		   MAX(s->write.kyber_depth + 1, s->write.kyber_depth * 5 / 4) >= c->bad_depth) {
		/* The next depth up keeps missing the goal: stay. */
		hold_depth(c, s);
		ctl_say(d, "read P%g %s well under goal %s, writes at %.0f IOPS; reads missed the goal at "
		    "write depth %u: holding", g->read_pct, m, gl, s->write.iops, c->bad_depth);
	} else if (losing) {
		/*
		 * A write target just under the writes' P99 makes Kyber grow them
		 * by 5/4 per evaluation, every 100 ms: kept for the settle time
		 * only (about x2), then back to holding.
		 */
		c->last_dir = -1;
		c->grow_pulse = true;
		/* Near a depth that missed the goal: one step of 5/4 only. */
		c->short_pulse = c->bad_depth && 2 * s->write.kyber_depth >= c->bad_depth;
		hold_depth(c, s);
		ctl_say(d, "read P%g %s well under goal %s, writes at %.0f of %.0f IOPS: writes may grow "
		    "for a moment", g->read_pct, m, gl, s->write.iops, c->w_ref_iops);
	} else if (s->write.kyber_depth >= 128) {
		ctl_say(d, "read P%g %s well under goal %s with writes unthrottled: throttling off",
		    g->read_pct, m, gl);
		ctl_go_open(c, s, cur, d);
		return true;
	} else {
		hold_depth(c, s);
		ctl_say(d, "read P%g %s well under goal %s, writes at full speed (%.0f IOPS): holding",
		    g->read_pct, m, gl, s->write.iops);
	}
	return false;
}

void ctl_protect(struct controller *c, const struct ctl_sample *s, const struct kyber_targets *cur,
		    uint64_t metric, struct ctl_decision *d)
{
	const struct goal *g = &c->goal;
	char m[DURATION_BUF_MAX], gl[DURATION_BUF_MAX];
	double k_cap = c->p.k_max;

	format_duration(m, sizeof(m), metric);
	format_duration(gl, sizeof(gl), g->read_ns);
	d->state = CTL_TRACKING;
	note_depth(c, s, metric <= g->read_ns);
	/* write-iops-min caps how much write throughput may be given up. */
	if (g->write_iops_min && c->w_ref_iops > 0)
		k_cap = clampd(c->w_ref_iops / (double)g->write_iops_min, 1.0, c->p.k_max);

	if (!c->protecting) {
		engage(c, s, metric, d);
		c->k = MIN(c->k, k_cap);
		d->targets.write_ns = protect_write_target(c, s);
		ctl_say(d, "read P%g %s %s goal %s: protecting reads (writes may slow down %.1fx)",
		    g->read_pct, m, metric > g->read_ns ? "above" : "close to", gl, c->k);
		return;
	}

	if (g->write_iops_min && s->write.iops < (double)g->write_iops_min &&
	    (c->k > 1.25 || c->read_scale < c->p.read_scale_max)) {
		/* The floor outranks the read goal: Kyber must call reads hurt
		 * less often (it cuts writes then) and let writes grow back. */
		c->relax_streak = 0;
		c->floor_bound = metric > g->read_ns;
		c->read_scale = MIN(c->p.read_scale_max, c->read_scale * 1.5);
		c->k = MAX(1.25, MIN(c->k, inflation(c, s)) / next_step(c, -1));
		d->state = metric > g->read_ns ? CTL_INFEASIBLE : CTL_TRACKING;
		ctl_say(d, "write IOPS %.0f below write-iops-min=%llu: less write throttling "
		    "(read P%g %s, goal %s)", s->write.iops, (unsigned long long)g->write_iops_min,
		    g->read_pct, m, gl);
	} else if ((double)metric > c->p.tighten_above * (double)g->read_ns &&
		   ((double)c->window_metric > c->p.tighten_above * (double)g->read_ns ||
		    (double)metric > 1.5 * (double)g->read_ns)) {
		/* Within 10% of the goal counts as at risk: one-second
		 * percentiles are noisy and the application sees the host
		 * path on top of the block layer's latency. A near miss must
		 * show in the window too: one noisy second is not a trend. */
		tighten(c, s, cur, metric, k_cap, d, m, gl);
	} else if ((double)metric < c->p.relax_below * (double)g->read_ns &&
		   (double)c->window_metric < c->p.relax_below * (double)g->read_ns) {
		if (relax(c, s, cur, d, m, gl))
			return;
	} else {
		c->relax_streak = 0;
		c->infeasible_streak = 0;
		hold_depth(c, s);
		ctl_say(d, "read P%g %s within goal %s", g->read_pct, m, gl);
	}
	if (metric <= g->read_ns)
		c->floor_bound = false;
	else if (c->floor_bound)
		d->state = CTL_INFEASIBLE;	/* the floor and the goal cannot both hold */
	d->targets.read_ns = protect_read_target(c, s);
	d->targets.write_ns = protect_write_target(c, s);
	if (c->grow_pulse) {
		c->grow_pulse = false;
		d->pulse = true;
		d->pulse_ns = c->short_pulse ? 120 * 1000000ULL : 0;
		d->pulse_targets.read_ns = d->targets.read_ns;
		/* Kyber grows depth d to d * (b + 1) / 4 in integers: bucket 4
		 * (x5/4) moves depths from 4 up, depths 1..3 need bucket 7 (x2). */
		double over = s->write.kyber_depth && s->write.kyber_depth < 4 && !c->short_pulse ? 1.9 : 1.1;

		d->pulse_targets.write_ns = clamp_target(MAX((double)s->write.total_p99_ns / over,
							     c->p.write_band_lo * (double)s->write.device_p90_ns));
	}
}
