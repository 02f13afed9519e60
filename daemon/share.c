/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The proportional-share policy (share.h). One period: price the I/Os in
 * tokens, predict the capacity, split it by weight with water-filling,
 * and turn each group's tokens into per-op limits.
 */
#include <math.h>
#include <string.h>

#include "macro.h"
#include "share.h"

/* A group doing fewer I/Os a second than this is idle: it has no share,
 * and no limit (it gets one again a period after it comes back). */
#define SHARE_ACTIVE_IOPS 5.0
/* x its allocation: a group doing this much is held at its limit.
 * blk-throttle lets a group through at its rate in slices of 100 ms, so a
 * group held there does within a few percent of it. */
#define SHARE_AT_LIMIT 0.9
/* Requests a group keeps in the block layer on average (Little's law):
 * over this, more of its I/O waits than gets done, so it wants more. A
 * synchronous reader keeps one. */
#define SHARE_BACKLOG 1.5
/* x its use: what a group using less than its share keeps, so it can grow
 * within a period (and show it wants more) before it gets its share. */
#define SHARE_HEADROOM 1.25
/* x the capacity, per period, while every group wanting more is held at
 * its limit: the device might do more. The first probe is small (an
 * overshoot costs fairness for a period, until the device holds the groups
 * back and the capacity is what it did); each one that finds the groups
 * held again doubles the step, up to x2 a period, so a capacity
 * underestimated 3x (writes priced wrong at first) is found in 4 periods
 * rather than 12. */
#define SHARE_PROBE_GAIN 1.1
#define SHARE_PROBE_GAIN_MAX 2.0
/* Periods in a row with no group wanting more before the limits are
 * lifted: a group between two bursts keeps its limits. */
#define SHARE_CALM_PERIODS 3
/* Smoothing weight per period of the write cost and of a group's mix:
 * one noisy period moves neither far. */
#define SHARE_SMOOTH 0.3
/* Tokens a write may cost: a write never costs less than a read, and no
 * device's writes take 64x its reads (a TLC program against a read is
 * 10-20x). */
#define SHARE_WRITE_COST_MIN 1.0
#define SHARE_WRITE_COST_MAX 64.0
/* The least allocation, tokens/s: a limit of 0 would mean none. */
#define SHARE_ALLOCATION_MIN 10.0
/* Each op keeps at least this share of its group's allocation (in its own
 * I/Os), so a group that changes its mix shows it at its limit. */
#define SHARE_OP_FLOOR 0.05
/* Average request size from which a group's limits are in bytes: large
 * requests cost the device by their size, not their number. */
#define SHARE_LARGE_IO_BYTES 65536.0

void share_init(struct share *s)
{
	memset(s, 0, sizeof(*s));
	s->write_cost = SHARE_WRITE_COST_MIN;
}

static double smooth(double old, double now)
{
	return (1 - SHARE_SMOOTH) * old + SHARE_SMOOTH * now;
}

static double tokens_of(const struct share *s, const struct share_input *in)
{
	return in->reads + s->write_cost * in->writes;
}

static bool active(const struct share_input *in)
{
	return in->reads + in->writes >= SHARE_ACTIVE_IOPS;
}

/* Writes cost their service time in reads. */
static void learn_write_cost(struct share *s, const struct share_period *p)
{
	double c;

	if (!(p->read_service_ns > 0) || !(p->write_service_ns > 0))
		return;
	c = p->write_service_ns / p->read_service_ns;
	c = MIN(MAX(c, SHARE_WRITE_COST_MIN), SHARE_WRITE_COST_MAX);
	s->write_cost = smooth(s->write_cost, c);
}

/* Who wants more than it gets: held at its limit, or more of its I/O
 * waiting in the block layer than done. Returns whether some group wants
 * more while under its limit: the device, not a limit, holds it back. */
static bool judge_groups(const struct share *s, size_t n, const struct share_input *in,
			 struct share_group *g, unsigned *wanting)
{
	bool device_bound = false;

	*wanting = 0;
	for (size_t i = 0; i < n; i++) {
		double t = tokens_of(s, &in[i]);
		bool held = g[i].allocation > 0 && t >= SHARE_AT_LIMIT * g[i].allocation;

		g[i].wants_more = active(&in[i]) && (held || in[i].outstanding > SHARE_BACKLOG);
		if (!g[i].wants_more)
			continue;
		(*wanting)++;
		device_bound |= !held;
	}
	return device_bound;
}

/*
 * The capacity from what was done: while a group wanting more is under its
 * limit, the device is saturated at what it did; while every such group is
 * held at its limit, it may do more, so probe higher.
 */
static void predict_capacity(struct share *s, double used, bool device_bound, unsigned wanting)
{
	if (!(s->probe_gain > 1))
		s->probe_gain = SHARE_PROBE_GAIN;
	if (device_bound || !(s->capacity > 0)) {
		s->capacity = used;
		s->probe_gain = SHARE_PROBE_GAIN;
	} else if (wanting) {
		s->capacity *= s->probe_gain;
		s->probe_gain = MIN(1 + 2 * (s->probe_gain - 1), SHARE_PROBE_GAIN_MAX);
	} else
		s->capacity = MAX(s->capacity, used);
}

/*
 * Split the capacity over the active groups by weight. A group that does
 * not want more and uses less than its share keeps its use (with headroom)
 * and the rest goes back to the others, until every group left gets its
 * weighted share of what remains.
 */
static void water_fill(const struct share *s, size_t n, const struct share_input *in,
		       struct share_group *g)
{
	double remaining = s->capacity, weights = 0;
	bool in_set[SHARE_GROUPS_MAX];
	bool changed = true;

	for (size_t i = 0; i < n; i++) {
		g[i].allocation = 0;
		in_set[i] = active(&in[i]) && in[i].limitable;
		if (active(&in[i]) && !in[i].limitable)
			remaining -= tokens_of(s, &in[i]);	/* cannot be limited: comes first */
	}
	remaining = MAX(remaining, 0.0);
	while (changed) {
		changed = false;
		weights = 0;
		for (size_t i = 0; i < n; i++)
			if (in_set[i])
				weights += in[i].weight;
		if (!(weights > 0))
			return;
		for (size_t i = 0; i < n; i++) {
			double fair = remaining * in[i].weight / weights, use;

			if (!in_set[i] || g[i].wants_more)
				continue;
			use = SHARE_HEADROOM * tokens_of(s, &in[i]);
			if (use >= fair)
				continue;
			g[i].allocation = MAX(use, SHARE_ALLOCATION_MIN);
			remaining = MAX(remaining - g[i].allocation, 0.0);
			in_set[i] = false;
			changed = true;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (in_set[i])
			g[i].allocation = MAX(remaining * in[i].weight / weights, SHARE_ALLOCATION_MIN);
}

/* A group's tokens as per-op limits, by its mix; in bytes where its
 * requests are large. */
static void limits_of(const struct share *s, const struct share_input *in, struct share_group *g,
		      struct share_limits *out)
{
	double a = g->allocation, rf = g->mix_known ? g->read_frac : 0.5;
	double iops = a / (rf + s->write_cost * (1 - rf));

	memset(out, 0, sizeof(*out));
	if (!(a > 0))
		return;
	out->read_iops = MAX(iops * rf, SHARE_OP_FLOOR * a);
	out->write_iops = MAX(iops * (1 - rf), SHARE_OP_FLOOR * a / s->write_cost);
	if (in->reads > 0 && in->read_bytes / in->reads >= SHARE_LARGE_IO_BYTES) {
		out->read_bps = out->read_iops * in->read_bytes / in->reads;
		out->read_iops = 0;
	}
	if (in->writes > 0 && in->write_bytes / in->writes >= SHARE_LARGE_IO_BYTES) {
		out->write_bps = out->write_iops * in->write_bytes / in->writes;
		out->write_iops = 0;
	}
}

void share_step(struct share *s, const struct share_period *p, size_t n, const struct share_input *in,
		struct share_group *g, struct share_limits *out)
{
	double used = 0;
	unsigned n_active = 0, wanting;
	bool device_bound;

	n = MIN(n, (size_t)SHARE_GROUPS_MAX);
	learn_write_cost(s, p);
	for (size_t i = 0; i < n; i++) {
		double ios = in[i].reads + in[i].writes;

		if (ios > 0) {
			g[i].read_frac = g[i].mix_known ? smooth(g[i].read_frac, in[i].reads / ios) :
							  in[i].reads / ios;
			g[i].mix_known = true;
		}
		used += tokens_of(s, &in[i]);
		n_active += active(&in[i]);
	}
	device_bound = judge_groups(s, n, in, g, &wanting);
	predict_capacity(s, used, device_bound, wanting);
	s->calm = wanting ? 0 : s->calm + 1;
	if (n_active >= 2 && wanting)
		s->limiting = true;
	else if (n_active < 2 || s->calm >= SHARE_CALM_PERIODS)
		s->limiting = false;

	if (s->limiting)
		water_fill(s, n, in, g);
	for (size_t i = 0; i < n; i++) {
		if (!s->limiting)
			g[i].allocation = 0;
		g[i].share = s->limiting ? (s->capacity > 0 ? g[i].allocation / s->capacity : 0) :
					   (used > 0 ? tokens_of(s, &in[i]) / used : 0);
		limits_of(s, &in[i], &g[i], &out[i]);
	}
}

double share_jain(size_t n, const double *x, const uint32_t *w)
{
	double sum = 0, sq = 0;

	for (size_t i = 0; i < n; i++) {
		double v = w[i] ? x[i] / w[i] : 0;

		sum += v;
		sq += v * v;
	}
	return n && sq > 0 ? sum * sum / (n * sq) : 0;
}
