/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * HOST_STALLS, the host disturbance that defers events (sim-host.h has the
 * per-request host path, inline because it runs for every request).
 */
#include "sim-internal.h"

/*
 * HOST_STALLS: time is cut into periods, each with one stall of 3-4 ms
 * (uniform) at a random offset: 3.5 ms / 10 ms = 35% of the time, in the
 * middle of the 5-55% CPU steal measured on these VMs (testbed.md); gaps
 * between stalls run from 0 to ~2 periods. The schedule is a pure function
 * of the seed and the time: no state, and as deterministic as the rest.
 */
#define STALL_PERIOD_NS (10 * SIM_NSEC_PER_MSEC)
#define STALL_MIN_NS (3 * SIM_NSEC_PER_MSEC)
#define STALL_MAX_NS (4 * SIM_NSEC_PER_MSEC)
/* Mixed into the seed so the stall schedule is not the page stream. */
#define STALL_SEED_MIX 0x5ca1ab1e0ddba11ULL

/* The stall of period k: [*start, *start + *len). */
static void stall_of(uint64_t seed, uint64_t k, uint64_t *start, uint64_t *len)
{
	uint64_t state = seed ^ STALL_SEED_MIX ^ (k * 0x9e3779b97f4a7c15ULL);
	uint64_t h = sim_rng_next(&state);

	*len = STALL_MIN_NS + (h & UINT32_MAX) % (STALL_MAX_NS - STALL_MIN_NS + 1);
	*start = k * STALL_PERIOD_NS + (h >> 32) % (STALL_PERIOD_NS - *len + 1);
}

uint64_t sim_host_defer(const struct sim *s, uint64_t t)
{
	uint64_t start, len;

	if (s->disturb != SIM_DISTURB_HOST_STALLS)
		return t;
	/* A stall can end where the next period's begins: look again. */
	for (;;) {
		stall_of(s->p.seed, t / STALL_PERIOD_NS, &start, &len);
		if (t < start || t >= start + len)
			return t;
		t = start + len;
	}
}

double sim_host_steal(const struct sim *s, uint64_t from, uint64_t to)
{
	uint64_t stalled = 0;

	if (s->disturb != SIM_DISTURB_HOST_STALLS || to <= from)
		return 0;
	for (uint64_t k = from / STALL_PERIOD_NS; k * STALL_PERIOD_NS < to; k++) {
		uint64_t start, len, a, b;

		stall_of(s->p.seed, k, &start, &len);
		a = start > from ? start : from;
		b = start + len < to ? start + len : to;
		if (b > a)
			stalled += b - a;
	}
	return (double)stalled / (double)(to - from);
}
