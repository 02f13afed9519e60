/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How Kyber's two targets act (block/kyber-iosched.c, docs/tuner.md):
 *
 *  - Kyber is "congested" when any domain's P90 device latency exceeds its
 *    target; then every domain whose P99 total latency sits below its own
 *    target is cut (depth x 1/4 .. 3/4 per 100 ms window), and a domain only
 *    grows back when its own P99 total latency exceeds its target.
 *  - So the read target decides *when* reads count as hurt, and the write
 *    target decides *how much write latency* (hence, for a writer with a
 *    fixed queue depth, how little write throughput) Kyber settles at while
 *    protecting reads: writes are cut until their P99 reaches it.
 *
 * Where the writes' P99 sits against the write target picks Kyber's action
 * for them each 100 ms window: below 3/4 of it they are cut (if reads are
 * hurt), between 3/4 and 1 they hold, above it they grow. So the write
 * target is a ceiling on write latency inflation, k x w_ref, and the read
 * target decides when Kyber uses it. The controller steers k and the read
 * target on the read metric (the goal's percentile of read total latency):
 * more protection when the goal is missed, less when there is room,
 * multiplicatively with an adaptive step. With nothing to gain it parks
 * both at the open point, where nothing is throttled and throttled domains
 * grow back.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "controller.h"
#include "macro.h"
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

void controller_params_default(struct ctl_params *p)
{
	*p = (struct ctl_params) {
		.tighten_above = 0.9,
		.relax_below = 0.7,
		.relax_after = 2,
		.read_scale_init = 1.0,
		.read_scale_min = 0.1,
		.read_scale_max = 4,
		.read_band_lo = 0.1,
		.read_band_hi = 4,
		.write_band_lo = 1.5,
		.k_init = 2.2,
		.k_hold = 4.2,
		.k_max = 16,
		.open_read = 8,
		.open_read_min_ns = KYBER_DEFAULT_READ_NS,
		.open_write = 2,
		.step_init = 1.5,
		.step_min = 1.25,
		.step_max = 2,
		.o8_holdoff = 60,
		.g1_outstanding = 1.5,
	};
}

uint64_t controller_samples_needed(double pct)
{
	return (uint64_t)ceil(5.0 / (1.0 - pct / 100.0) - 1e-9);
}

void controller_relearn(struct controller *c)
{
	c->protecting = false;
	c->decided = false;
	c->k = c->p.k_init;
	c->read_scale = c->p.read_scale_init;
	c->shape = 0;
	c->w_ref_ns = c->w_ref_iops = 0;
	c->step = c->p.step_init;
	c->last_dir = 0;
	c->relax_streak = 0;
	c->infeasible_streak = 0;
	c->probe_pending = false;
	c->interference_seen = false;
	c->floor_bound = false;
	c->bad_depth = c->bad_depth_age = 0;
	c->o8_strikes = 0;
	c->o8_hold = 0;
	c->have_sig = false;
	c->ring_n = c->ring_i = 0;
	c->acc_n = 0;
	c->window_metric = 0;
}

void controller_init(struct controller *c, const struct goal *g, const struct ctl_params *p)
{
	memset(c, 0, sizeof(*c));
	c->goal = *g;
	if (p)
		c->p = *p;
	else
		controller_params_default(&c->p);
	controller_relearn(c);
}

static uint64_t clamp_target(double ns)
{
	if (!(ns >= KYBER_TARGET_MIN_NS))
		return KYBER_TARGET_MIN_NS;
	if (ns > KYBER_TARGET_MAX_NS)
		return KYBER_TARGET_MAX_NS;
	return (uint64_t)ns;
}

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void say(struct ctl_decision *d, const char *fmt, ...) _printf_(2, 3);
static void say(struct ctl_decision *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
}

static bool writes_active(const struct ctl_sample *s)
{
	return s->write.completed > 0 && s->write.iops >= 10;
}

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

/* How far the writes' latency is above its unthrottled level. */
static double inflation(const struct controller *c, const struct ctl_sample *s)
{
	return c->w_ref_ns > 0 ? (double)s->write.total_p99_ns / c->w_ref_ns : 1.0;
}

/* Learn the writes' unthrottled latency and rate whenever they run free
 * (and raise the rate whenever they beat it). */
static void learn_write_ref(struct controller *c, const struct ctl_sample *s, bool shifted)
{
	bool free_running = !c->protecting || s->write.kyber_depth >= 128;

	if (shifted || !writes_active(s) || !s->write.total_p99_ns)
		return;
	if (s->write.iops > c->w_ref_iops)
		c->w_ref_iops = s->write.iops;
	if (!free_running)
		return;
	if (c->w_ref_ns <= 0)
		c->w_ref_ns = (double)s->write.total_p99_ns;
	else
		c->w_ref_ns = 0.5 * c->w_ref_ns + 0.5 * (double)s->write.total_p99_ns;
}

/* The open point: reads never count as hurt and never as slow; writes never
 * count as hurt, and writes throttled earlier see their P99 above the target
 * and grow back. Keeps the current value of a class that has no data. */
static struct kyber_targets open_point(const struct controller *c, const struct ctl_sample *s,
				       const struct kyber_targets *cur)
{
	struct kyber_targets t = *cur;

	if (s->read.completed)
		t.read_ns = clamp_target(MAX(c->p.open_read * (double)s->read.device_p99_ns,
					     (double)c->p.open_read_min_ns));
	if (s->write.completed)
		t.write_ns = clamp_target(c->p.open_write * (double)s->write.device_p99_ns);
	if (c->goal.mode == GOAL_MODE_BALANCED)	/* G-5: the same target for both */
		t.read_ns = t.write_ns = MAX(t.read_ns, t.write_ns);
	return t;
}

/* Are cur already an open point for these latencies? Hysteresis: leave
 * them alone while they keep the open point's properties. */
static bool is_open(const struct controller *c, const struct ctl_sample *s,
		    const struct kyber_targets *cur)
{
	bool read_ok = !s->read.completed ||
		(double)cur->read_ns >= c->p.open_read / 2 * (double)s->read.device_p99_ns;
	bool write_ok = !s->write.completed ||
		((double)cur->write_ns >= 1.25 * (double)s->write.device_p99_ns &&
		 /* throttled writes must be able to grow back */
		 (s->write.kyber_depth == 0 || s->write.kyber_depth >= 128 ||
		  (double)s->write.total_p99_ns >= 1.75 * (double)cur->write_ns));

	if (c->goal.mode == GOAL_MODE_BALANCED && cur->read_ns != cur->write_ns)
		return false;
	return read_ok && write_ok;
}

static void go_open(struct controller *c, const struct ctl_sample *s,
		    const struct kyber_targets *cur, struct ctl_decision *d)
{
	c->protecting = false;
	c->probe_pending = false;
	if (!is_open(c, s, cur))
		d->targets = open_point(c, s, cur);
}

/* A miss that is already certain with n samples: more above the goal than
 * (1 - pct) x n + 3 sigma + 2 cannot come from a distribution meeting it. */
static bool certain_miss(const struct controller *c, const __u64 *h)
{
	double q = 1.0 - c->goal.read_pct / 100.0, n = (double)hist_count(h);
	double above = n * (1.0 - hist_fraction_le(h, c->goal.read_ns));

	return n >= 20 && above > q * n + 3 * sqrt(q * n) + 2;
}

/*
 * The read metric of the newest interval (the metric everything reports)
 * and, in c->window_metric, over the window of recent intervals. When the
 * newest interval alone has too few reads, both come from the window; a
 * miss that is already certain counts as known either way.
 */
static bool estimate_metric(struct controller *c, const struct ctl_sample *s, uint64_t *ret)
{
	uint64_t need = controller_samples_needed(c->goal.read_pct), n_latest = 0;
	const __u64 *latest = s->read_total_hist;
	hist_t window = {};
	bool window_known;

	if (latest && (n_latest = hist_count(latest))) {
		memcpy(c->ring[c->ring_i], latest, sizeof(hist_t));
		c->ring_i = (c->ring_i + 1) % CTL_WINDOW;
		c->ring_n = MIN(c->ring_n + 1, CTL_WINDOW);
	}
	for (unsigned i = 0; i < c->ring_n; i++)
		hist_merge(window, c->ring[i]);
	c->acc_n = hist_count(window);
	window_known = (c->acc_n >= need || certain_miss(c, window)) &&
		       hist_percentile(window, c->goal.read_pct, &c->window_metric) == 0;
	if (!window_known)
		c->window_metric = 0;
	if (n_latest && (n_latest >= need || certain_miss(c, latest)) &&
	    hist_percentile(latest, c->goal.read_pct, ret) == 0) {
		if (!window_known)
			c->window_metric = *ret;
		return true;
	}
	if (!window_known)
		return false;
	*ret = c->window_metric;
	return true;
}

/* New targets, new regime: what came before says nothing about it. */
static void forget_window(struct controller *c)
{
	c->ring_n = c->ring_i = 0;
	c->acc_n = 0;
	c->window_metric = 0;
}

/* A write burst starting or stopping, or the read depth changing by 2x:
 * what was learned about the old workload no longer holds. */
static bool workload_shifted(struct controller *c, const struct ctl_sample *s, char *what, size_t n)
{
	bool writes = c->sig_writes ? s->write.iops >= 5 : s->write.iops >= 50;
	double ro = s->read.outstanding, old = c->sig_read_outstanding;
	bool shifted = false;

	if (!c->have_sig) {
		c->have_sig = true;
	} else if (writes != c->sig_writes) {
		snprintf(what, n, "writes %s", writes ? "started" : "stopped");
		shifted = true;
	} else if (s->read.completed && fabs(ro - old) >= 1 && (ro >= 2 * old || old >= 2 * ro)) {
		snprintf(what, n, "reads outstanding %.1f -> %.1f", old, ro);
		shifted = true;
	}
	c->sig_writes = writes;
	if (s->read.completed)
		c->sig_read_outstanding = ro;
	return shifted;
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
static bool o8_evidence(struct controller *c, const struct ctl_sample *s, uint64_t metric)
{
	bool throttled;

	if (!c->probe_pending)
		return false;
	throttled = s->write.iops <= 0.7 * c->probe_write_iops ||
		    (s->write.kyber_depth && c->probe_write_depth &&
		     4 * s->write.kyber_depth <= c->probe_write_depth);
	if (!throttled)
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
 * write target. Far from the goal cut hard (b = 0: x1/4), closer gently
 * (b = 1: x1/2, b = 2: x3/4): the k that gives that b at today's latency.
 */
static double k_for_distance(const struct controller *c, double ratio, double infl)
{
	double k = ratio >= 4 ? 4.2 : c->p.k_init;

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
	/* Only a whole interval at one depth says that depth is too much. */
	if (s->write.kyber_depth && s->write.kyber_depth == c->prev_write_depth && metric > g->read_ns &&
	    (!c->bad_depth || s->write.kyber_depth < c->bad_depth)) {
		c->bad_depth = s->write.kyber_depth;
		c->bad_depth_age = 0;
	}
	if (floor_depth || (at_ceiling && c->k >= k_cap)) {
		c->infeasible_streak += metric > g->read_ns;
		d->state = c->infeasible_streak >= 2 ? CTL_INFEASIBLE : CTL_TRACKING;
		if (!floor_depth && k_cap < c->p.k_max)
			say(d, "read P%g %s %s goal %s with writes at write-iops-min=%llu: holding",
			    g->read_pct, m, rel, gl, (unsigned long long)g->write_iops_min);
		else
			say(d, "read P%g %s %s goal %s with writes throttled as far as they go "
			    "(depth %u): the goal is out of reach, keeping the best setting",
			    g->read_pct, m, rel, gl, s->write.kyber_depth);
		return;
	}
	c->infeasible_streak = 0;
	if (!seen_hurt && c->read_scale > c->p.read_scale_min) {
		/* A near miss lowers it a little, a clear one more. */
		c->read_scale = MAX(c->p.read_scale_min,
				    c->read_scale * (metric > 1.2 * g->read_ns ? 0.7 : 0.85));
		say(d, "read P%g %s %s goal %s while read P90 is under the read target: "
		    "lower read target", g->read_pct, m, rel, gl);
	} else if (!at_ceiling) {
		/* Kyber is on it; soften the cuts as the goal gets near. */
		c->k = MIN(c->k, k_for_distance(c, (double)metric / (double)g->read_ns, infl));
		say(d, "read P%g %s %s goal %s: Kyber is cutting writes (depth %u, latency %.1fx of "
		    "%.1fx allowed)", g->read_pct, m, rel, gl, s->write.kyber_depth, infl, c->k);
	} else {
		probe(c, s, metric);
		c->k = MIN(k_cap, c->k * next_step(c, 1));
		say(d, "read P%g %s %s goal %s with writes at their ceiling: more write throttling "
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
		say(d, "read P%g %s well under goal %s", g->read_pct, m, gl);
		return false;
	}
	c->relax_streak = 0;
	if (losing && c->read_scale < c->p.read_scale_init) {
		c->read_scale = MIN(c->p.read_scale_init, c->read_scale * 1.3);
		say(d, "read P%g %s well under goal %s, writes at %.0f of %.0f IOPS: higher read target",
		    g->read_pct, m, gl, s->write.iops, c->w_ref_iops);
	} else if (losing && c->bad_depth && 5 * s->write.kyber_depth >= 4 * c->bad_depth) {
		/* A quarter more depth missed the goal not long ago: stay. */
		hold_depth(c, s);
		say(d, "read P%g %s well under goal %s, writes at %.0f IOPS; reads missed the goal at "
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
		say(d, "read P%g %s well under goal %s, writes at %.0f of %.0f IOPS: writes may grow "
		    "for a moment", g->read_pct, m, gl, s->write.iops, c->w_ref_iops);
	} else if (s->write.kyber_depth >= 128) {
		say(d, "read P%g %s well under goal %s with writes unthrottled: throttling off",
		    g->read_pct, m, gl);
		go_open(c, s, cur, d);
		return true;
	} else {
		hold_depth(c, s);
		say(d, "read P%g %s well under goal %s, writes at full speed (%.0f IOPS): holding",
		    g->read_pct, m, gl, s->write.iops);
	}
	return false;
}

static void protect(struct controller *c, const struct ctl_sample *s, const struct kyber_targets *cur,
		    uint64_t metric, struct ctl_decision *d)
{
	const struct goal *g = &c->goal;
	char m[DURATION_BUF_MAX], gl[DURATION_BUF_MAX];
	double k_cap = c->p.k_max;

	format_duration(m, sizeof(m), metric);
	format_duration(gl, sizeof(gl), g->read_ns);
	d->state = CTL_TRACKING;
	/* write-iops-min caps how much write throughput may be given up. */
	if (g->write_iops_min && c->w_ref_iops > 0)
		k_cap = clampd(c->w_ref_iops / (double)g->write_iops_min, 1.0, c->p.k_max);

	if (!c->protecting) {
		engage(c, s, metric, d);
		c->k = MIN(c->k, k_cap);
		d->targets.write_ns = protect_write_target(c, s);
		say(d, "read P%g %s %s goal %s: protecting reads (writes may slow down %.1fx)",
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
		say(d, "write IOPS %.0f below write-iops-min=%llu: less write throttling "
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
		say(d, "read P%g %s within goal %s", g->read_pct, m, gl);
	}
	if (metric <= g->read_ns) {
		c->floor_bound = false;
		/* After a minute without a miss, let growth try again. */
		if (c->bad_depth && ++c->bad_depth_age >= 60) {
			c->bad_depth = 0;
			c->bad_depth_age = 0;
		}
	}
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

/* Write only what changed enough to matter: a target that moved by less
 * than 10% is left alone (each write perturbs one Kyber window). */
static void settle_write(const struct kyber_targets *cur, struct ctl_decision *d)
{
	double rr = (double)d->targets.read_ns / (double)MAX(cur->read_ns, 1ULL);
	double wr = (double)d->targets.write_ns / (double)MAX(cur->write_ns, 1ULL);

	/* Kyber's buckets are a quarter of a target wide: closer than that
	 * changes nothing worth a write. */
	if (rr > 0.7 && rr < 1.4)
		d->targets.read_ns = cur->read_ns;
	if (wr > 0.8 && wr < 1.25)
		d->targets.write_ns = cur->write_ns;
	d->write = d->pulse || d->targets.read_ns != cur->read_ns || d->targets.write_ns != cur->write_ns;
}

/*
 * Last line of defence: a write target below the write device latency makes
 * writes congest Kyber, and with a read target above the read latency the
 * reads are what gets cut (the harmful pair). Never write that.
 */
static void never_harmful(const struct ctl_sample *s, struct kyber_targets *t)
{
	if (!s->write.completed || t->write_ns >= s->write.device_p90_ns)
		return;
	if (s->read.completed && t->read_ns <= s->read.device_p90_ns)
		return;	/* reads count as hurt anyway: writes get cut, not reads */
	t->write_ns = clamp_target(1.5 * (double)s->write.device_p90_ns);
}

static void decide(struct controller *c, const struct ctl_sample *s,
		   const struct kyber_targets *cur, struct ctl_decision *d)
{
	const struct goal *g = &c->goal;
	char shift[96];
	uint64_t metric = 0;

	d->targets = *cur;
	d->state = CTL_TRACKING;

	if (workload_shifted(c, s, shift, sizeof(shift))) {
		c->step = c->p.step_init;
		c->last_dir = 0;
		c->relax_streak = c->infeasible_streak = 0;
		c->probe_pending = c->interference_seen = false;
		c->o8_strikes = c->o8_hold = 0;
		c->bad_depth = c->bad_depth_age = 0;
		forget_window(c);	/* reads of the old workload */
	} else
		shift[0] = 0;

	if (g->has_read && estimate_metric(c, s, &metric)) {
		d->goal_known = true;
		d->metric_ns = metric;
		d->goal_met = metric <= g->read_ns;
	}

	if (g->mode == GOAL_MODE_THROUGHPUT || g->mode == GOAL_MODE_BALANCED) {
		go_open(c, s, cur, d);
		say(d, "mode=%s: targets at the open point, nothing throttled", goal_mode_to_string(g->mode));
		return;
	}

	learn_write_ref(c, s, *shift != 0);
	if (!writes_active(s)) {
		go_open(c, s, cur, d);
		if (d->goal_known && !d->goal_met)
			d->state = CTL_INFEASIBLE;
		say(d, "%s%sno writes to throttle%s", shift, *shift ? ": " : "",
		    d->goal_known && !d->goal_met ? "; reads miss the goal on their own" : "");
		return;
	}

	if (s->write.outstanding <= c->p.g1_outstanding) {
		/* G-1: Kyber always lets one write through; with one outstanding
		 * there is nothing to hold back. Hands off the targets. */
		d->state = CTL_HOLDING;
		say(d, "writes have %.1f requests outstanding: Kyber cannot throttle a single "
		    "outstanding write (G-1), holding", s->write.outstanding);
		return;
	}

	if (c->o8_hold && d->goal_known && (double)d->metric_ns > 2 * c->o8_metric) {
		/* Reads got much worse with writes free: there is interference
		 * after all. */
		c->o8_hold = 0;
		c->interference_seen = true;
	}
	if (c->o8_hold) {
		c->o8_hold--;
		go_open(c, s, cur, d);
		d->state = CTL_HOLDING;
		say(d, "throttling writes did not improve reads (no read/write interference, O-8): "
		    "not throttling, probing again in %u intervals", c->o8_hold);
		return;
	}

	if (!d->goal_known) {
		/* Between estimates nothing changes, the state included. */
		d->state = c->decided ? c->last_state : CTL_LEARNING;
		say(d, "%s%sgathering reads to estimate P%g (%llu of %llu)", shift, *shift ? ": " : "",
		    g->read_pct, (unsigned long long)c->acc_n,
		    (unsigned long long)controller_samples_needed(g->read_pct));
		return;
	}
	c->decided = true;
	if (s->read.device_p90_ns) {
		/* How P90 relates to the goal's percentile for these reads: the
		 * read target is a P90 (Kyber's congestion test). Smoothed, so a
		 * noisy interval does not move the target. */
		double shape = clampd((double)s->read.device_p90_ns / (double)MAX(metric, 1ULL), 0.2, 1.0);

		c->shape = c->shape > 0 ? 0.8 * c->shape + 0.2 * shape : shape;
	}
	if (c->w_ref_ns <= 0) {
		/* Never saw the writes unthrottled: take them as they are. */
		c->w_ref_ns = (double)MAX(s->write.total_p99_ns, 1ULL);
		c->w_ref_iops = s->write.iops;
	}

	if (c->protecting && o8_evidence(c, s, metric)) {
		c->o8_hold = c->p.o8_holdoff;
		c->o8_metric = (double)metric;
		c->o8_strikes = 0;
		go_open(c, s, cur, d);
		d->state = CTL_HOLDING;
		say(d, "throttling writes cut them to %.0f IOPS but read P%g stayed at %.0fus: no "
		    "read/write interference (O-8), throttling off", s->write.iops, g->read_pct,
		    (double)metric / 1e3);
		return;
	}

	if (!c->protecting && (double)metric <= c->p.tighten_above * (double)g->read_ns) {
		go_open(c, s, cur, d);
		say(d, "%s%sread P%g %.0fus within goal without throttling", shift, *shift ? ": " : "",
		    g->read_pct, (double)metric / 1e3);
		return;
	}

	protect(c, s, cur, metric, d);
	if (*shift) {
		char r[sizeof(d->reason) + sizeof(shift) + 2];

		size_t n;

		snprintf(r, sizeof(r), "%s; %s", shift, d->reason);
		n = strnlen(r, sizeof(d->reason) - 1);	/* truncation is fine */
		memcpy(d->reason, r, n);
		d->reason[n] = 0;
	}
}

void controller_decide(struct controller *c, const struct ctl_sample *s,
		       const struct kyber_targets *cur, struct ctl_decision *d)
{
	memset(d, 0, sizeof(*d));
	if (c->goal.mode == GOAL_MODE_ADVISE) {
		/* No feedback from a plant we never touch: decide on a copy. */
		struct controller *copy = malloc(sizeof(*copy));

		if (!copy) {
			d->targets = *cur;
			d->state = CTL_ADVISE;
			say(d, "out of memory");
			return;
		}
		*copy = *c;
		copy->goal.mode = GOAL_MODE_LATENCY;
		decide(copy, s, cur, d);
		/* Keep only the read window, so the metric keeps accumulating. */
		memcpy(c->ring, copy->ring, sizeof(c->ring));
		c->ring_n = copy->ring_n;
		c->ring_i = copy->ring_i;
		c->acc_n = copy->acc_n;
		c->have_sig = copy->have_sig;
		c->sig_writes = copy->sig_writes;
		c->sig_read_outstanding = copy->sig_read_outstanding;
		free(copy);
		settle_write(cur, d);
		d->write = d->pulse = false;
		d->state = CTL_ADVISE;
		return;
	}
	decide(c, s, cur, d);
	c->last_state = d->state;
	if (d->goal_known)
		c->prev_write_depth = s->write.kyber_depth;
	never_harmful(s, &d->targets);
	if (d->pulse)
		never_harmful(s, &d->pulse_targets);
	settle_write(cur, d);
	if (d->write)
		forget_window(c);
}
