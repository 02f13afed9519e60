/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether the host disturbed an interval: the hypervisor took the VM's
 * CPUs (steal) clearly more than it usually does here. Every request's
 * host path then slows at any write depth, so a level that misses the
 * goal meanwhile is not a level that misses it: the law still cuts (reads
 * need it now), but the miss is dropped once the disturbance has passed
 * and the level is tried again (ctl-levels.c).
 */
#include <math.h>
#include <string.h>

#include "ctl-internal.h"

void ctl_host_forget(struct ctl_host *h)
{
	memset(h, 0, sizeof(*h));
}

/* The usual steal follows each interval's by this much (a moving average
 * with a half-life of CTL_STEAL_USUAL_HALF_LIFE intervals). */
static double usual_weight(void)
{
	return 1.0 - exp2(-1.0 / CTL_STEAL_USUAL_HALF_LIFE);
}

bool ctl_host_update(struct ctl_host *h, double steal)
{
	if (!(steal >= 0))
		steal = 0;
	h->disturbed = h->known && steal >= CTL_STEAL_DISTURBED &&
		       steal >= CTL_STEAL_OVER_USUAL * h->steal_usual;
	h->steal_usual = h->known ? h->steal_usual + usual_weight() * (steal - h->steal_usual) : steal;
	h->known = true;
	if (h->disturbed) {
		h->passing = true;
		h->calm = 0;
		return false;
	}
	if (!h->passing || ++h->calm < CTL_HOST_CALM_INTERVALS)
		return false;
	h->passing = false;
	return true;
}
