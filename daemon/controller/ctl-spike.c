/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One second's spike. The reads' tail can jump for a second whatever the
 * writes do: the host path of a loop device sharing busy CPUs, a device's
 * own pause. Cutting the writes then buys nothing, and a level that missed
 * stays out of use for a minute (ctl-levels.c), so each spike would cost
 * the writes far more than the second it lasted. A setting that lets the
 * writes hurt the reads keeps missing; a spike passes. So a far miss
 * (over CTL_CLEAR_MISS x the goal) after a steady run at the same targets
 * is held one interval before the law acts on it: if the next one misses
 * too, the law cuts as it would have, a second later; if not, it was a
 * spike, and neither the level nor the metric's noise (ctl-metric.c)
 * learns from it. Each hold is paid for: every settled second within the
 * goal at the same targets goes to a bank, a hold spends
 * CTL_SPIKE_STEADY of them, and the bank keeps CTL_SPIKE_BANKED holds'
 * worth at most. So two hiccups a few seconds apart after a steady run
 * are both held, and over time at most one second in CTL_SPIKE_STEADY + 1
 * misses this way; a miss acted on, or a change of targets, empties the
 * bank. A stall that slows every request (a host hiccup) also slows the
 * writes past their target, and Kyber grows them meanwhile; in the next
 * second reads miss behind the grown writes until Kyber, with reads hurt,
 * cuts them back to the depth the level held them at, by itself and
 * within a few of its 100 ms windows. So a miss right after a held one,
 * with Kyber's write depth above the one of the steady run but each write
 * no slower than then (the stall is over: a slow device, a GC storm, keeps
 * them slow), is the spike's too and held once more; a third miss in a
 * row is acted on.
 *
 * A probe or a pulse (one step less throttling, ctl-probe.c, ctl-grow.c)
 * starts from such a steady run, and the first interval after it has its
 * far miss held the same way, once (no aftermath: the writes grow there
 * by design). One step raises the reads' tail by about a third at most,
 * so a miss of half again is more likely a spike than the step's doing;
 * a step that does hurt the reads misses again and goes back a second
 * later. Acted on at once, such a spike failed the step and kept the
 * writes at depth 1 for the probe's doubled wait (hiccup R256+W256: 266
 * writes a second where a static setting with reads as good runs 500).
 *
 * A near miss is the noise of a level at its edge, judged on the level's
 * record (ctl-levels.c, rare misses), not here.
 */
#include <string.h>

#include "ctl-internal.h"

void ctl_spike_forget(struct ctl_spike *k)
{
	memset(k, 0, sizeof(*k));
}

void ctl_spike_moved(struct ctl_spike *k)
{
	k->steady = k->bank = 0;
}

void ctl_spike_stepped(struct ctl_spike *k)
{
	k->stepped = true;
	k->depth = 0;	/* the writes grow by the step's design: no aftermath */
}

bool ctl_spike_update(struct ctl_spike *k, const struct goal *g, uint64_t metric, bool settled,
		      uint32_t write_depth, uint64_t write_p99_ns)
{
	bool far = (double)metric > CTL_CLEAR_MISS * (double)g->read_ns, stepped = k->stepped;

	k->stepped = false;
	if (metric <= g->read_ns) {
		k->held = CTL_SPIKE_NONE;
		if (settled) {
			k->steady++;
			k->bank = MIN(k->bank + 1, CTL_SPIKE_BANKED * CTL_SPIKE_STEADY);
			k->depth = write_depth;
			k->write_p99_ns = write_p99_ns;
		}
		return false;
	}
	if (k->held == CTL_SPIKE_HELD && k->depth && write_depth > k->depth &&
	    write_p99_ns <= k->write_p99_ns) {
		k->held = CTL_SPIKE_AFTERMATH;
		return true;
	}
	/* The run of seconds without a miss (a probe's wait, ctl-probe.c)
	 * starts again after any miss, a held one included; the bank only
	 * after one acted on. */
	k->steady = 0;
	if (k->held != CTL_SPIKE_NONE || !far || !(stepped || (settled && k->bank >= CTL_SPIKE_STEADY))) {
		k->held = CTL_SPIKE_NONE;
		k->bank = 0;
		return false;
	}
	k->held = stepped ? CTL_SPIKE_AFTER_STEP : CTL_SPIKE_HELD;
	if (!stepped)
		k->bank -= CTL_SPIKE_STEADY;
	return true;
}
