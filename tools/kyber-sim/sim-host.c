/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * HOST_STALLS, the host disturbance that defers events, and the schedule
 * of host hiccups (sim-host.h has the per-request host path, inline
 * because it runs for every request).
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

/* How much of [start, start + len) lies in [from, to). */
static uint64_t overlap_ns(uint64_t start, uint64_t len, uint64_t from, uint64_t to)
{
	uint64_t a = start > from ? start : from, b = start + len < to ? start + len : to;

	return b > a ? b - a : 0;
}

double sim_host_steal(const struct sim *s, uint64_t from, uint64_t to)
{
	uint64_t stalled = 0;

	if (s->disturb != SIM_DISTURB_HOST_STALLS || to <= from)
		return 0;
	for (uint64_t k = from / STALL_PERIOD_NS; k * STALL_PERIOD_NS < to; k++) {
		uint64_t start, len;

		stall_of(s->p.seed, k, &start, &len);
		stalled += overlap_ns(start, len, from, to);
	}
	return (double)stalled / (double)(to - from);
}

/*
 * Host hiccups: time is cut into periods of HICCUP_PERIOD_NS; each holds
 * one hiccup of 100-300 ms (uniform, at a random offset) with the chance
 * that gives hiccups_per_min a minute. The period is no multiple of a
 * second, so hiccups fall anywhere in the daemon's intervals, and some
 * span two. A pure function of the seed and the time, as the stalls are.
 */
#define HICCUP_PERIOD_NS (1700 * SIM_NSEC_PER_MSEC)
#define HICCUP_MIN_NS (100 * SIM_NSEC_PER_MSEC)
#define HICCUP_MAX_NS (300 * SIM_NSEC_PER_MSEC)
#define HICCUP_SEED_MIX 0x41cc0b5e11a7f00dULL

/* The hiccup of period k, if it has one: [*start, *start + *len). */
static bool hiccup_of(const struct sim *s, uint64_t k, uint64_t *start, uint64_t *len)
{
	uint64_t state = s->p.seed ^ HICCUP_SEED_MIX ^ (k * 0x9e3779b97f4a7c15ULL);
	double chance = (double)s->p.hiccups_per_min * (double)HICCUP_PERIOD_NS / (60.0 * SIM_NSEC_PER_SEC);
	uint64_t h;

	if (!s->p.hiccup_ns || sim_rng_unit(&state) >= chance)
		return false;
	h = sim_rng_next(&state);
	*len = HICCUP_MIN_NS + (h & UINT32_MAX) % (HICCUP_MAX_NS - HICCUP_MIN_NS + 1);
	*start = k * HICCUP_PERIOD_NS + (h >> 32) % (HICCUP_PERIOD_NS - *len + 1);
	return true;
}

bool sim_host_hiccup(const struct sim *s, uint64_t t)
{
	uint64_t start, len;

	return hiccup_of(s, t / HICCUP_PERIOD_NS, &start, &len) && t >= start && t < start + len;
}

uint64_t sim_hiccup_ns(const struct sim *s, uint64_t from, uint64_t to)
{
	uint64_t covered = 0;

	for (uint64_t k = from / HICCUP_PERIOD_NS; k * HICCUP_PERIOD_NS < to; k++) {
		uint64_t start, len;

		if (hiccup_of(s, k, &start, &len))
			covered += overlap_ns(start, len, from, to);
	}
	return covered;
}
