/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the controller knows about the workload: the read metric (the
 * goal's percentile of read total latency) over the newest interval and a
 * short window, the writes' unthrottled latency and rate, and whether the
 * workload shifted under it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ctl-internal.h"

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
bool ctl_estimate_metric(struct controller *c, const struct ctl_sample *s, uint64_t *ret)
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
void ctl_forget_window(struct controller *c)
{
	c->ring_n = c->ring_i = 0;
	c->acc_n = 0;
	c->window_metric = 0;
}

/* A write burst starting or stopping, or the read depth changing by 2x:
 * what was learned about the old workload no longer holds. */
bool ctl_workload_shifted(struct controller *c, const struct ctl_sample *s, char *what, size_t n)
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

/* Learn the writes' unthrottled latency and rate whenever they run free
 * (and raise the rate whenever they beat it). */
void ctl_learn_write_ref(struct controller *c, const struct ctl_sample *s, bool shifted)
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
