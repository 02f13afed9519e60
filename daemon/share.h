/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Proportional share of one device among cgroups by weight: the
 * Kyber-fairness design (../shared/papers/kyber-fairness-proportional-share.md,
 * its Algorithm 1) with the kernel's existing actuators, per-cgroup I/O
 * limits recomputed every period. Pure: the caller measures, this decides.
 *
 * Each period (one tuning interval):
 *  - I/Os are counted in read-equivalent tokens: a write costs the measured
 *    ratio of write to read service time (the device latency of the
 *    fastest tenth of each: what a request takes without waiting behind
 *    others, which the mean on a saturated device is all about);
 *  - the device's capacity in tokens is predicted from the tokens used and
 *    from which groups were held at their limits: all held (they could do
 *    more) -> probe higher; one wanting more while under its limit (the
 *    device, not the limit, holds it back) -> what was done;
 *  - the capacity is split over the active groups by weight, water-filling:
 *    a group using less than its share keeps what it uses (with room to
 *    grow) and gives the rest back to the others (work conservation);
 *  - limits are lifted entirely while no group wants more than it gets
 *    (the device is not saturated), or while one group alone is active.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Weights as io.weight takes them; cgroups doing I/O without one count
 * with io.weight's default. */
#define SHARE_WEIGHT_MIN 1u
#define SHARE_WEIGHT_MAX 10000u
#define SHARE_WEIGHT_DEFAULT 100u
/* Groups one device's policy takes: as many as the observer accounts. */
#define SHARE_GROUPS_MAX 128u

/* One group's period, as measured (per second). */
struct share_input {
	uint32_t weight;
	bool limitable;			/* false: the hierarchy's root (no limit can be set) */
	double reads, writes;		/* I/Os completed */
	double read_bytes, write_bytes;
	/* Its requests in the block layer on average (total latency x rate,
	 * Little's law): over one, it has more I/O waiting than it gets done. */
	double outstanding;
};

/* What a group may do per second; 0: no limit. */
struct share_limits {
	double read_iops, write_iops;
	double read_bps, write_bps;
};

/* Per group, kept by the caller from one period to the next (zeroed for a
 * new group). */
struct share_group {
	double allocation;		/* tokens/s in force; 0: not limited */
	double read_frac;		/* smoothed share of reads in its I/Os */
	bool mix_known;			/* read_frac was measured */
	double share;			/* its share of the capacity, 0-1, for status */
	bool wants_more;		/* held at its limit, or more waiting than done */
};

/* The device's side. */
struct share {
	double capacity;		/* tokens/s when saturated; 0: not known yet */
	double write_cost;		/* tokens per write (a read is one) */
	double probe_gain;		/* the capacity's next probe, x per period */
	bool limiting;			/* limits in force */
	unsigned calm;			/* periods in a row with no group wanting more */
};

/* The device's read and write service time this period: the 10th
 * percentile of their device latency, ns; 0: no such I/O. */
struct share_period {
	double read_service_ns, write_service_ns;
};

void share_init(struct share *s);

/*
 * One period over n groups (n <= SHARE_GROUPS_MAX; more are not looked
 * at): in[i] measured, g[i] the group's kept state, out[i] its limits
 * from now on (all zero while not limiting).
 */
void share_step(struct share *s, const struct share_period *p, size_t n, const struct share_input *in,
		struct share_group *g, struct share_limits *out);

/* Weighted Jain fairness index of throughputs x over weights w:
 * (sum x_i/w_i)^2 / (n sum (x_i/w_i)^2); 1 when every x_i/w_i is equal,
 * 1/n at worst. 0 when n is 0 or every x is 0. */
double share_jain(size_t n, const double *x, const uint32_t *w);
