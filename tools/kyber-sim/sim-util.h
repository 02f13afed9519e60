/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by the simulator's files: the seeded PRNG and the
 * events. Not part of the simulator's API.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SIM_NSEC_PER_USEC 1000ULL
#define SIM_NSEC_PER_MSEC 1000000ULL
#define SIM_NSEC_PER_SEC 1000000000ULL

/* ---------------------------------------------------------------- PRNG */

/*
 * splitmix64: one u64 of state, good enough statistics for picking pages and
 * jitter, and the state lives in the sim struct so runs are reproducible and
 * two sims never share a stream.
 */
static inline uint64_t sim_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double sim_rng_unit(uint64_t *state)
{
	return (double)(sim_rng_next(state) >> 11) * 0x1.0p-53;
}

/* ---------------------------------------------------------------- events */

/*
 * The event queue is tools/flashsim/heap.c's min-heap on (time, push
 * order), shared with flashsim; an event's kind and argument are packed
 * into the entry's 64-bit payload.
 */
enum sim_event_kind {
	SIM_EV_COMPLETE,	/* arg: request index */
	SIM_EV_KYBER_TIMER,	/* arg: timer generation (stale ones are ignored) */
	SIM_EV_SUBMIT,		/* arg: op of the client whose think time is over */
};

struct sim_event {
	uint64_t time;
	uint32_t kind;
	uint32_t arg;
};

static inline uint64_t sim_event_pack(uint32_t kind, uint32_t arg)
{
	return (uint64_t)kind << 32 | arg;
}

static inline struct sim_event sim_event_unpack(uint64_t time, uint64_t packed)
{
	return (struct sim_event) {
		.time = time,
		.kind = (uint32_t)(packed >> 32),
		.arg = (uint32_t)packed,
	};
}
