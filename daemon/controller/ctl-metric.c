/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The read metric: the goal's percentile of read total latency, over the
 * newest interval and over a window of recent ones, and how the reads'
 * device P90 (what Kyber tests) relates to it.
 */
#include <math.h>
#include <string.h>

#include "ctl-internal.h"

void ctl_metric_forget(struct ctl_metric *m)
{
	/* Properties of the device and reads, kept. */
	double shape = m->shape, noise_var = m->noise_var;
	unsigned noise_n = m->noise_n;

	memset(m, 0, sizeof(*m));
	m->shape = shape;
	m->noise_var = noise_var;
	m->noise_n = noise_n;
}

/* A miss that is already certain with n samples: more above the goal than
 * (1 - pct) x n + 3 sigma + 2 cannot come from a distribution meeting it. */
static bool certain_miss(const struct goal *g, const __u64 *h)
{
	double q = 1.0 - g->read_pct / 100.0, n = (double)hist_count(h);
	double above = n * (1.0 - hist_fraction_le(h, g->read_ns));

	return n >= CTL_CERTAIN_MISS_MIN_READS && above > q * n + 3 * sqrt(q * n) + 2;
}

static bool estimable(const struct goal *g, const __u64 *h, uint64_t n, uint64_t *ret)
{
	return (n >= controller_samples_needed(g->read_pct) || certain_miss(g, h)) &&
	       hist_percentile(h, g->read_pct, ret) == 0;
}

/* The shape near the goal is the one that matters: far from it (reads
 * queued behind a full device) P90 and P99 are nearly the same. */
static void learn_shape(struct ctl_metric *m, const struct goal *g, const struct ctl_sample *s,
			uint64_t metric)
{
	double shape;

	if (!s->read.device_p90_ns || metric < CTL_SHAPE_NEAR_LO * g->read_ns ||
	    metric > CTL_SHAPE_NEAR_HI * g->read_ns)
		return;
	shape = clampd((double)s->read.device_p90_ns / (double)metric, 0.02, 1.0);
	m->shape = m->shape > 0 ? (1 - CTL_SHAPE_WEIGHT) * m->shape + CTL_SHAPE_WEIGHT * shape : shape;
}

bool ctl_metric_estimate(struct ctl_metric *m, const struct goal *g, const struct ctl_sample *s,
			 uint64_t *ret)
{
	const __u64 *latest = s->read_hist;
	uint64_t n_latest = latest ? hist_count(latest) : 0;
	hist_t window = {};
	bool window_known;

	if (n_latest) {
		memcpy(m->ring[m->ring_i], latest, sizeof(hist_t));
		m->ring_i = (m->ring_i + 1) % CTL_WINDOW;
		m->ring_n = MIN(m->ring_n + 1, (unsigned)CTL_WINDOW);
	}
	for (unsigned i = 0; i < m->ring_n; i++)
		hist_merge(window, m->ring[i]);
	m->window_n = hist_count(window);
	window_known = estimable(g, window, m->window_n, &m->window_ns);
	if (!window_known)
		m->window_ns = 0;
	m->from_latest = false;
	if (n_latest && estimable(g, latest, n_latest, ret)) {
		m->from_latest = n_latest >= controller_samples_needed(g->read_pct);
		if (!window_known)
			m->window_ns = *ret;
	} else if (window_known)
		*ret = m->window_ns;
	else
		return false;
	learn_shape(m, g, s, *ret);
	return true;
}

uint64_t controller_samples_needed(double pct)
{
	return (uint64_t)ceil(5.0 / (1.0 - pct / 100.0) - 1e-9);
}

void ctl_metric_learn_noise(struct ctl_metric *m, uint64_t metric, bool settled)
{
	double d;

	if (!settled || !metric || !m->from_latest) {
		m->last_settled_ns = 0;
		return;
	}
	if (m->last_settled_ns) {
		/* Half the squared difference of two draws: one draw's variance. */
		d = log((double)metric / (double)m->last_settled_ns);
		d = d * d / 2;
		m->noise_var = m->noise_n ? (1 - CTL_NOISE_WEIGHT) * m->noise_var + CTL_NOISE_WEIGHT * d : d;
		m->noise_n++;
	}
	m->last_settled_ns = metric;
}

double ctl_metric_ceiling(const struct ctl_metric *m)
{
	double sigma = m->noise_n ? sqrt(m->noise_var) : CTL_NOISE_SIGMA_DEFAULT;

	return exp(-CTL_MET_Z * clampd(sigma, CTL_NOISE_SIGMA_MIN, CTL_NOISE_SIGMA_MAX));
}

/* The slack line: reads under it have room for one more level's step. */
static double slack_line(const struct goal *g, const struct ctl_metric *m)
{
	return ctl_metric_ceiling(m) * (double)g->read_ns / CTL_STEP_GAIN;
}

enum ctl_verdict ctl_metric_judge(const struct goal *g, const struct ctl_metric *m, uint64_t metric)
{
	double goal = (double)g->read_ns, x = (double)metric, w = (double)m->window_ns;
	double slack = slack_line(g, m), risk = slack * CTL_STEP_GAIN;
	bool window_risk = !w || w > risk;

	if (x > CTL_CLEAR_MISS * goal || (x > goal && window_risk))
		return V_MISS;
	if (x > risk && window_risk)
		return V_RISK;
	if (x < slack && (!w || w < slack))
		return V_SLACK;
	return V_OK;
}

bool ctl_metric_two_steps_alone(const struct goal *g, const struct ctl_metric *m, uint64_t metric)
{
	return metric && (double)metric < slack_line(g, m) / CTL_STEP_GAIN;
}
