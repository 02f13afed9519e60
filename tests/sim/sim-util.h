/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by the simulator's files: the seeded PRNG and the event
 * min-heap. Not part of the simulator's API.
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

enum sim_event_kind {
	SIM_EV_COMPLETE,	/* arg: request index */
	SIM_EV_KYBER_TIMER,	/* arg: timer generation (stale ones are ignored) */
	SIM_EV_SUBMIT,		/* arg: op of the client whose think time is over */
};

struct sim_event {
	uint64_t time;
	uint64_t seq;		/* push order: equal times pop FIFO, deterministically */
	uint32_t kind;
	uint32_t arg;
};

struct sim_heap {
	struct sim_event *v;
	size_t n, cap;
	uint64_t next_seq;
};

void sim_heap_init(struct sim_heap *h);
void sim_heap_free(struct sim_heap *h);
/* -ENOMEM */
int sim_heap_push(struct sim_heap *h, uint64_t time, uint32_t kind, uint32_t arg);
/* The caller checks h->n first. */
struct sim_event sim_heap_pop(struct sim_heap *h);
