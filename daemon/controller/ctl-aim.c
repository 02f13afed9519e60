/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the law aims at while the goal is out of reach. Reads that miss it
 * even behind the most throttling (ctl-protect.c, on_miss()) get the best
 * the device gives them, and no write need be held back further than that
 * takes: where reads stop improving well before the writes' depth reaches
 * 1 (optane R4+W64: 167 us at depth 1 and at 16,000 writes alike), the
 * most throttling costs the writes for nothing. So once a verdict of
 * infeasible has CTL_AIM_MIN_SECONDS settled seconds at the most
 * throttling, the law judges, cuts and relaxes against their median,
 * times CTL_AIM_MARGIN, instead of the goal (the probe's steady run still
 * counts misses of the goal: counted against the aim, probes took the
 * reads past what they gained the writes). The read target goes
 * no lower than the reads' device P90 there, times the same margin: one
 * under what the most throttling gives them keeps Kyber congested, and
 * the writes at depth 1, whatever the write target (optane R4+W64: reads
 * hurt at a 62 us target with their P99 at 167 us).
 *
 * With that read target Kyber counts reads as hurt only where they are
 * worse than the most throttling gave them, and cuts the writes only
 * then: engaged from where the writes run (the open point after O-8 took
 * throttling off, or a regime's start), it stops cutting at the depth
 * whose reads are as good as depth 1's, as it does for a static setting
 * from a cold start (optane R4+W64: 167 us with the writes at their full
 * 16,000). From depth 1 itself the writes do not grow: Kyber grows a
 * domain from depth 1 only on a P99 over 7/4 of its target, and on such a
 * device that target is under the open point's edge. A descent from the
 * top that forced it (throttling off for a second) cost 2-3 s of reads
 * at their free-running P99 wherever no depth kept them, and allowed only
 * on such devices it made no cell of the matrix better than the aim
 * alone (docs/tuner.md).
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
	/* The aim goes: the law steers by the goal again. */
	a->n = a->next = a->within = 0;
	a->aim_ns = a->read_p90_ns = 0;
	return true;
}
