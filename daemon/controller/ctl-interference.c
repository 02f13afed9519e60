/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Does throttling writes help reads on this device and workload? Where
 * reads never wait behind writes (the study's O-8: an Optane-like device,
 * or interference elsewhere than in the device queue), cutting the writes
 * only costs write throughput: once the tuner has cut them for real and
 * the reads stayed where they were, it stops throttling for a while.
 */
#include <string.h>

#include "ctl-internal.h"

void ctl_interference_forget(struct ctl_interference *o)
{
	memset(o, 0, sizeof(*o));
}

void ctl_interference_start(struct ctl_interference *o, double metric, double write_iops, bool free)
{
	/* Once throttling helped reads in this regime, a later small gain is
	 * diminishing returns, not O-8. And the reads before throttling are
	 * only the baseline if the writes ran free: a throttle still in force
	 * (kept across a shift, say) has already taken what cutting the
	 * writes gives the reads. Flashsim R64+W256 after such a shift: reads
	 * 2.8 ms with the writes held at depth 12-24, 20-23 ms with them free. */
	o->probing = false;
	if (o->seen || !free || metric <= 0 || write_iops <= 0)
		return;
	o->probing = true;
	o->strikes = 0;
	o->age = 0;
	o->metric_before = metric;
	o->write_iops_before = write_iops;
}

bool ctl_interference_none(struct ctl_interference *o, double metric, double write_iops)
{
	/* The reads before throttling are the baseline only while the device
	 * is as it was then: one that slows down later (a GC storm) cuts the
	 * writes by itself, and its reads with them, which is no evidence of
	 * what throttling does. */
	if (o->probing && ++o->age > CTL_O8_PROBE_INTERVALS)
		o->probing = false;
	if (!o->probing || write_iops > CTL_O8_CUT * o->write_iops_before)
		return false;	/* not cut for real yet: no evidence either way */
	if (metric < CTL_O8_GAIN * o->metric_before) {
		o->probing = false;
		o->seen = true;
		return false;
	}
	if (++o->strikes < CTL_O8_STRIKES)
		return false;
	o->probing = false;
	o->hold = CTL_O8_HOLDOFF;
	o->hold_metric = metric;
	return true;
}

bool ctl_interference_holding(struct ctl_interference *o, bool metric_known, double metric)
{
	if (!o->hold)
		return false;
	if (metric_known && metric > 2 * o->hold_metric) {
		/* Reads got much worse with writes free: interference after all. */
		o->hold = 0;
		o->seen = true;
		return false;
	}
	o->hold--;
	return true;
}
