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
 * This file keeps the probe's timing; where the law goes after a miss is
 * on_miss()'s, which for a failed probe goes at least where Kyber cuts
 * back the writes it grew meanwhile. The probe holds once the level it
 * reached has a run of its own of CTL_PROBE_STEADY seconds, or once the
 * law moves on from it without a miss. A miss before that, or Kyber
 * growing the writes past the probed level's hold (a drift), fails it.
 * The interval right after a failed probe still has its writes draining
 * from the device and is not held against the level the law went to. The
 * run the next probe waits for doubles after each failed probe, up to
 * CTL_PROBE_STEADY_MAX, and starts again at CTL_PROBE_STEADY after one
 * that holds: a level at its edge is tried a few times a minute at first,
 * then every few minutes, at a second's miss each time.
 *
 * While the goal is out of reach the probe is a grow pulse from depth 1
 * (ctl-grow.c, ctl_grow_pulse()), timed by its own run of settled seconds
 * within the aim: the run above counts misses of the goal, which these
 * reads miss every second. It holds after CTL_PROBE_STEADY such seconds
 * at the depth it reached and may then come again (the writes back at
 * depth 1 after a disturbance); one that failed does not, in the regime.
 * None comes in a regime in which the goal itself was met: out of reach
 * is then a disturbance's doing, and what it does to reads says nothing
 * of the regime.
 */
#include <string.h>

#include "ctl-internal.h"

void ctl_probe_forget(struct ctl_probe *p)
{
	memset(p, 0, sizeof(*p));
	p->wait = CTL_PROBE_STEADY;
}

bool ctl_probe_due(const struct ctl_probe *p, unsigned steady)
{
	return !p->under_way && steady >= p->wait;
}

void ctl_probe_started(struct ctl_probe *p, uint64_t write_p99_ns)
{
	p->under_way = true;
	p->write_p99_ns = write_p99_ns;
}

static void held(struct ctl_probe *p)
{
	p->under_way = false;
	p->wait = CTL_PROBE_STEADY;
}

void ctl_probe_moved(struct ctl_probe *p)
{
	if (p->under_way)
		held(p);
}

void ctl_probe_update(struct ctl_probe *p, bool settled, unsigned steady)
{
	if (settled)
		p->returned = false;
	if (p->under_way && steady >= CTL_PROBE_STEADY)
		held(p);
}

uint64_t ctl_probe_failed(struct ctl_probe *p)
{
	if (!p->under_way)
		return 0;
	p->under_way = false;
	p->wait = MIN(2 * p->wait, CTL_PROBE_STEADY_MAX);
	p->returned = true;
	return MAX(p->write_p99_ns, 1ULL);
}

bool ctl_probe_draining(struct ctl_probe *p, bool settled)
{
	if (!p->returned || settled)
		return false;
	p->returned = false;
	return true;
}

void ctl_probe_aim_tick(struct ctl_probe *p, bool within)
{
	p->aim_steady = within ? p->aim_steady + 1 : 0;
	/* A pulse holds, as a probe does, after a steady run at the depth
	 * it reached. */
	if (p->under_way && p->aim_tried && p->aim_steady >= CTL_PROBE_STEADY) {
		held(p);
		p->aim_tried = false;	/* one that held may come again */
	}
}

bool ctl_probe_aim_due(struct ctl_probe *p)
{
	if (p->aim_tried || p->goal_met || p->under_way || p->aim_steady < CTL_PROBE_STEADY)
		return false;
	p->aim_tried = true;
	p->aim_steady = 0;	/* the pulse's own run starts */
	return true;
}
