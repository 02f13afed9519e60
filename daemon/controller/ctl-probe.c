/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Probes for room the reads' margin does not show. Slack (ctl-metric.c)
 * assumes reads scale with the writes, one level's step raising their
 * tail by CTL_STEP_GAIN at most; where their own queue sets it (R256), a
 * read tail just within the goal may leave the writes twice the depth,
 * and only a try tells. After a run of settled seconds without a miss at
 * the same targets (ctl-spike.c counts it), the law steps down a level
 * from within the goal (ctl-protect.c, probe()).
 *
 * The probe holds once the level it reached has a run of its own of
 * CTL_PROBE_STEADY seconds, or once the law moves on from it without a
 * miss. A miss before that fails it, and the law goes back to the level
 * it left; or higher, where Kyber grew the writes at the probe's level
 * and the level left would keep them grown (its band of 3/4 to 1 of a
 * target can hold both depths): to the level that puts the writes' P99 of
 * before the probe in the middle of that band, where Kyber cuts the grown
 * writes back. The interval right after the return still has the probe's
 * writes draining from the device and is not held against the level
 * returned to. The run the next probe waits for doubles after each failed
 * probe, up to CTL_PROBE_STEADY_MAX, and starts again at CTL_PROBE_STEADY
 * after one that holds: a level at its edge is tried a few times a minute
 * at first, then every few minutes, at a second's miss each time.
 */
#include <string.h>

#include "ctl-internal.h"

void ctl_probe_forget(struct ctl_probe *p)
{
	memset(p, 0, sizeof(*p));
	p->from = -1;
	p->wait = CTL_PROBE_STEADY;
}

bool ctl_probe_due(const struct ctl_probe *p, unsigned steady)
{
	return p->from < 0 && steady >= p->wait;
}

void ctl_probe_started(struct ctl_probe *p, int from, uint64_t write_p99_ns)
{
	p->from = from;
	p->from_write_p99_ns = write_p99_ns;
}

void ctl_probe_moved(struct ctl_probe *p)
{
	if (p->from >= 0) {
		p->from = -1;
		p->wait = CTL_PROBE_STEADY;
	}
}

void ctl_probe_update(struct ctl_probe *p, bool settled, unsigned steady)
{
	if (settled)
		p->returned = false;
	if (p->from >= 0 && steady >= CTL_PROBE_STEADY) {
		p->from = -1;
		p->wait = CTL_PROBE_STEADY;
	}
}

int ctl_probe_missed(struct ctl_probe *p)
{
	int back = p->from;

	if (back < 0)
		return -1;
	p->from = -1;
	p->wait = MIN(2 * p->wait, CTL_PROBE_STEADY_MAX);
	p->returned = true;
	return MAX(back, ctl_level_at_least((double)p->from_write_p99_ns / CTL_HOLD_MIDDLE));
}

bool ctl_probe_draining(struct ctl_probe *p, bool settled)
{
	if (!p->returned || settled)
		return false;
	p->returned = false;
	return true;
}
