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
#include "ctl-internal.h"
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
	c->floor_cap_hits = 0;
	ctl_forget_depths(c);
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


void ctl_say(struct ctl_decision *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
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

void ctl_go_open(struct controller *c, const struct ctl_sample *s,
		    const struct kyber_targets *cur, struct ctl_decision *d)
{
	c->protecting = false;
	c->probe_pending = false;
	if (!is_open(c, s, cur))
		d->targets = open_point(c, s, cur);
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

	if (ctl_workload_shifted(c, s, shift, sizeof(shift))) {
		c->step = c->p.step_init;
		c->last_dir = 0;
		c->relax_streak = c->infeasible_streak = 0;
		c->probe_pending = c->interference_seen = false;
		c->o8_strikes = c->o8_hold = 0;
		ctl_forget_depths(c);
		ctl_forget_window(c);	/* reads of the old workload */
	} else
		shift[0] = 0;

	if (g->has_read && ctl_estimate_metric(c, s, &metric)) {
		d->goal_known = true;
		d->metric_ns = metric;
		d->goal_met = metric <= g->read_ns;
	}

	if (g->mode == GOAL_MODE_THROUGHPUT || g->mode == GOAL_MODE_BALANCED) {
		ctl_go_open(c, s, cur, d);
		ctl_say(d, "mode=%s: targets at the open point, nothing throttled", goal_mode_to_string(g->mode));
		return;
	}

	ctl_learn_write_ref(c, s, *shift != 0);
	if (!writes_active(s)) {
		ctl_go_open(c, s, cur, d);
		if (d->goal_known && !d->goal_met)
			d->state = CTL_INFEASIBLE;
		ctl_say(d, "%s%sno writes to throttle%s", shift, *shift ? ": " : "",
		    d->goal_known && !d->goal_met ? "; reads miss the goal on their own" : "");
		return;
	}

	if (s->write.outstanding <= c->p.g1_outstanding) {
		/* G-1: Kyber always lets one write through; with one outstanding
		 * there is nothing to hold back. Hands off the targets. */
		d->state = CTL_HOLDING;
		ctl_say(d, "writes have %.1f requests outstanding: Kyber cannot throttle a single "
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
		ctl_go_open(c, s, cur, d);
		d->state = CTL_HOLDING;
		ctl_say(d, "throttling writes did not improve reads (no read/write interference, O-8): "
		    "not throttling, probing again in %u intervals", c->o8_hold);
		return;
	}

	if (!d->goal_known) {
		/* Between estimates nothing changes, the state included. */
		d->state = c->decided ? c->last_state : CTL_LEARNING;
		ctl_say(d, "%s%sgathering reads to estimate P%g (%llu of %llu)", shift, *shift ? ": " : "",
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

	if (c->protecting && ctl_o8_evidence(c, s, metric)) {
		c->o8_hold = c->p.o8_holdoff;
		c->o8_metric = (double)metric;
		c->o8_strikes = 0;
		ctl_go_open(c, s, cur, d);
		d->state = CTL_HOLDING;
		ctl_say(d, "throttling writes cut them to %.0f IOPS but read P%g stayed at %.0fus: no "
		    "read/write interference (O-8), throttling off", s->write.iops, g->read_pct,
		    (double)metric / 1e3);
		return;
	}

	if (!c->protecting && (double)metric <= c->p.tighten_above * (double)g->read_ns) {
		ctl_go_open(c, s, cur, d);
		ctl_say(d, "%s%sread P%g %.0fus within goal without throttling", shift, *shift ? ": " : "",
		    g->read_pct, (double)metric / 1e3);
		return;
	}

	ctl_protect(c, s, cur, metric, d);
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
			ctl_say(d, "out of memory");
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
	c->wrote_last = d->write;
	c->pulse_from = d->pulse ? MAX(s->write.kyber_depth, 1U) : 0;
	if (d->write)
		ctl_forget_window(c);
}
