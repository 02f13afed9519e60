/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the law aims at while the goal is out of reach. Reads that miss it
 * even behind the most throttling (ctl-protect.c, on_miss()) get the best
 * the device gives them, and no write need be held back further than that
 * takes: where reads stop improving well before the writes' depth reaches
 * 1 (optane R4+W64: 167 us at depth 1 and at 16,000 writes alike), the
 * most throttling costs the writes for nothing. So once a verdict of
 * infeasible has CTL_AIM_MIN_SECONDS settled seconds at the most
 * throttling, the law judges, cuts, relaxes and probes against their
 * median, times CTL_AIM_MARGIN, instead of the goal. The read target goes
 * no lower than the reads' device P90 there, times the same margin: one
 * under what the most throttling gives them keeps Kyber congested, and
 * the writes at depth 1, whatever the write target (optane R4+W64: reads
 * hurt at a 62 us target with their P99 at 167 us).
 *
 * Stepping the write target down does not take the writes off depth 1:
 * Kyber grows a domain from depth 1 only on a P99 over 7/4 of its target,
 * a target that is the open point's. So once reads sit within the aim at
 * depth 1 (CTL_AIM_DESCENT_STEADY settled seconds) the law descends from
 * the top: throttling off for a second (the writes grow back), then
 * engaged again against the aim, with the read target from it; Kyber
 * cuts the writes only until reads are back at what depth 1 gave them,
 * as it does for a static setting from a cold start. A miss of the aim
 * after CTL_AIM_DESCENT_GRACE intervals sends the law back to the level
 * it left. A descent costs a second or two of reads behind free writes
 * where no depth but 1 keeps them, so there is one a regime, and none
 * once the goal was met in it: a goal met before and missed now behind a
 * single write is a slow device (a GC storm), which passes, and a descent
 * then would learn the writes' free-running figures from it.
 *
 * A second's P99 within the goal does not end the verdict: at the edge
 * of reach single seconds meet it, and each would restart the law from
 * the goal. CTL_AIM_CLEAR seconds in a row clearly within it do (the
 * device got faster, or the workload lighter), as does a new regime.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl-internal.h"

void ctl_aim_forget(struct ctl_aim *a)
{
	memset(a, 0, sizeof(*a));
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

static uint64_t median(const uint64_t *v, unsigned n)
{
	uint64_t sorted[CTL_AIM_SECONDS];

	memcpy(sorted, v, n * sizeof(sorted[0]));
	qsort(sorted, n, sizeof(sorted[0]), cmp_u64);
	return sorted[n / 2];
}

void ctl_aim_learn(struct ctl_aim *a, uint64_t metric, uint64_t read_p90_ns)
{
	if (!metric || !read_p90_ns)
		return;
	a->seen_ns[a->next] = metric;
	a->seen_p90_ns[a->next] = read_p90_ns;
	a->next = (a->next + 1) % CTL_AIM_SECONDS;
	a->n = MIN(a->n + 1, (unsigned)CTL_AIM_SECONDS);
	if (a->n < CTL_AIM_MIN_SECONDS)
		return;
	a->aim_ns = (uint64_t)(CTL_AIM_MARGIN * (double)median(a->seen_ns, a->n));
	a->read_p90_ns = (uint64_t)(CTL_AIM_MARGIN * (double)median(a->seen_p90_ns, a->n));
}

uint64_t ctl_aim_read_ns(const struct ctl_aim *a, uint64_t goal_ns)
{
	return MAX(a->aim_ns, goal_ns);
}

bool ctl_aim_within(struct ctl_aim *a, bool clearly_ok)
{
	if (!clearly_ok) {
		a->within = 0;
		return false;
	}
	if (++a->within < CTL_AIM_CLEAR)
		return false;
	/* The aim goes; that the goal was met in this regime stays. */
	a->n = a->next = a->within = 0;
	a->aim_ns = a->read_p90_ns = 0;
	return true;
}

bool ctl_aim_descent_due(struct ctl_aim *a, bool within)
{
	if (!a->aim_ns || !within || a->met || a->descended) {
		a->steady = 0;
		return false;
	}
	if (++a->steady < CTL_AIM_DESCENT_STEADY)
		return false;
	a->descended = a->descending = true;
	a->age = 0;
	return true;
}

void ctl_aim_tick(struct ctl_aim *a)
{
	if (a->descending)
		a->age++;
}

bool ctl_aim_descent_judged(const struct ctl_aim *a)
{
	return a->descending && a->age > CTL_AIM_DESCENT_GRACE;
}

