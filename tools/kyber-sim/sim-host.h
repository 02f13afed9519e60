/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host path of the simulated plant: what a request spends after its
 * media (FUSE daemon, loop worker, completion, io_uring reap) and the
 * clients' think time, as the current disturbance has them. Inline: it runs
 * for every request. HOST_STALLS is in sim-host.c; the media disturbance
 * (GC_STORM) is the model's (model_set_storm()). Include after the
 * definition of struct sim (sim-internal.h does).
 */
#pragma once

#include <math.h>
#include <stdint.h>

/*
 * CPU_CONTENTION: the host path runs on CPUs shared with other work, so
 * it takes several times as long (x4) and varies more: the jitter's mean
 * grows x4, plus 2 host_ns so that there is some even with jitter off.
 */
#define SIM_CONTENTION_FACTOR 4
#define SIM_CONTENTION_JITTER_HOSTS 2

/* Exponential with the given mean, from the sim's stream. */
static inline uint64_t sim_exp_sample(struct sim *s, uint64_t mean)
{
	return (uint64_t)(-(double)mean * log1p(-sim_rng_unit(&s->rng)));
}

static inline uint64_t sim_host_complete_at(struct sim *s, uint64_t media_end)
{
	uint64_t host = s->p.host_ns, jitter = s->p.host_jitter_ns;

	if (s->disturb == SIM_DISTURB_CPU_CONTENTION) {
		host *= SIM_CONTENTION_FACTOR;
		jitter = jitter * SIM_CONTENTION_FACTOR + SIM_CONTENTION_JITTER_HOSTS * s->p.host_ns;
	}
	if (jitter)
		host += sim_exp_sample(s, jitter);
	if (s->p.hiccup_ns && sim_host_hiccup(s, media_end))
		host += sim_exp_sample(s, s->p.hiccup_ns);
	return media_end + host;
}

static inline uint64_t sim_host_think_ns(const struct sim *s)
{
	if (s->disturb == SIM_DISTURB_CPU_CONTENTION)
		return s->p.think_ns * SIM_CONTENTION_FACTOR;
	return s->p.think_ns;
}
