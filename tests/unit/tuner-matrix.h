/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tuner matrix's bounds, its simulated devices and workloads, and the
 * oracle each cell is judged against: every static point of a grid of
 * Kyber targets on the same device (tests/unit/tuner-matrix-oracle.c).
 * test-tuner-matrix.c runs the tuner on each cell and grades it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tuner-loop.h"

/* The acceptance bounds (issue 11). */
#define CONVERGE_S 5			/* first window meeting the goal, s after start or a shift */
#define MET_SHARE 0.95			/* windows meeting the goal after convergence */
#define ORACLE_SHARE 0.90		/* tuned write IOPS / the oracle's */
#define RECOVER_S 10			/* after a disturbance ends ... */
#define RECOVER_SHARE 0.90		/* ... writes back to this share of their earlier rate */
#define INFEASIBLE_READ_SLACK 1.15	/* infeasible: reads within this x the best static reads */
/* Infeasible: writes at ORACLE_SHARE of the most a static setting runs with
 * reads as good as the tuner's, within one step of the latency histogram
 * (2.6-4.8% apart at these latencies): the best reachable setting is not
 * more throttling than reads gain from. */
#define INFEASIBLE_SAME_READS 1.05
#define STEADY_FROM_S 15		/* churn counted from here: convergence and a first probe done */
#define STEADY_CHANGES_PER_MIN 6	/* target writes a minute in steady state */

/* The floors (test-tuner-matrix.c): what the tuner must never do worse than. */
#define FLOOR_CONVERGE_S 15
#define FLOOR_MET_SHARE 0.80
#define FLOOR_ORACLE_SHARE 0.50
#define FLOOR_RECOVER_SHARE 0.75
#define FLOOR_INFEASIBLE_READ_SLACK 1.25
/* The law keeps the most throttling on an infeasible goal: 25% of such a
 * static setting's writes on flash R16+W16 and R1+W16 at a fifth. */
#define FLOOR_INFEASIBLE_WRITE_SHARE 0.20
#define FLOOR_STEADY_CHANGES_PER_MIN 12
#define RUN_S 60			/* tuned run */
#define JUDGE_FROM_S 10			/* write IOPS judged from here (after convergence) */

/* The oracle's grid: the study's range of read x write targets. Static
 * points run from a fresh Kyber start (depths at the caps), as a static
 * setting chosen by hand would. */
#define N_READ 5
#define N_WRITE 12
extern const uint64_t grid_read_ns[N_READ];
extern const uint64_t grid_write_ns[N_WRITE];
#define STATIC_WARM_S 5
#define STATIC_MEASURE_S 15

/* The simulator's seeds: the static grid's (the oracle's data), and the
 * tuned runs' unless KT_MATRIX_SEED gives another. One seed is one
 * realization of each device's noise, and a law shaped on it alone does
 * worse on the next: laws are compared over several
 * (make tuner-matrix-seeds). */
#define STATIC_SEED 7
#define TUNED_SEED_DEFAULT 42
/* KT_MATRIX_SEED, or TUNED_SEED_DEFAULT when unset; -EINVAL when it is
 * not a number. */
int tuned_seed_from_env(uint64_t *ret);

struct workload {
	const char *name;
	unsigned read_qd, write_qd;
};

#define N_WORKLOADS 5
extern const struct workload workloads[N_WORKLOADS];

/*
 * The devices: every media profile of the sim, and one whose host path
 * hiccups (kyber-sim.h): qdlat, a loop device over a file, with episodes
 * of 100-300 ms HICCUPS_PER_MIN times a minute in which each request's
 * host path takes an extra exponential time of mean HICCUP_NS. A second's
 * read P99 then misses a goal of a few ms, whatever the writes do (as the
 * reads' tail of a loop over /dev/shm spiked on a busy host); the windows
 * they fall in are not judged (struct tuner_loop), but what the tuner does
 * about them is: every write it throttles because of them counts.
 */
#define HICCUP_NS (1 * MSEC)
#define HICCUPS_PER_MIN 4

/*
 * A noisier host, like the root-fs loop (docs/tuner.md, its reads by
 * write depth). Its hiccups are milder and more frequent than hiccup's:
 * NOISY_HICCUP_NS a request moves a second's read P99 by a few hundred
 * us, about as far over a goal as the root-fs loop's seconds went (387-537
 * us against 370-399 us), and NOISY_HICCUPS_PER_MIN of them fall in about
 * half the seconds. At a tight goal such a second misses at any write
 * depth, as the root-fs loop's did at depths 1-8 alike
 * (tools/experiments/depth-sweep.py): a law that takes each one for the
 * writes' doing cuts them for nothing. At others it misses at some depths
 * and not at others (R4+W64 at a fifth of none's P99, 859 us, in the
 * tuned run's trace: 564-878 us at write depth 3, one second in seven
 * over; 904 us at 8). So unlike hiccup's, these
 * windows are judged, the oracle's as the tuner's: they are part of
 * the device a setting is chosen for; left out, the oracle can be a depth
 * whose hiccup seconds all miss, which by the daemon's own test (the goal
 * in 95% of the seconds) does not meet the goal.
 */
#define NOISY_HICCUP_NS (150 * USEC)
#define NOISY_HICCUPS_PER_MIN 20

struct matrix_device {
	const char *name;
	enum sim_profile profile;
	uint64_t hiccup_ns;
	unsigned hiccups_per_min;
	bool hiccups_judged;	/* the windows they fall in count (struct static_run) */
};

#define N_DEVICES 7
extern const struct matrix_device matrix_devices[N_DEVICES];

struct device_data {
	const char *name;
	const struct matrix_device *dev;
	uint64_t seed;			/* the tuned runs' */
	struct static_result none[N_WORKLOADS];
	struct static_result grid[N_WORKLOADS][N_READ][N_WRITE];
	unsigned cells, missed, failed;
};

struct oracle {
	bool feasible;
	uint64_t read_ns, write_ns;	/* the best static setting meeting the goal */
	struct static_result best;
	uint64_t lowest_p99_ns;		/* the best reads any static setting gave */
	double lowest_write_iops;	/* most writes among settings within INFEASIBLE_READ_SLACK of it */
	double same_reads_write_iops;	/* most writes among settings with reads as good as the tuner's */
};

void sim_params_for(const struct matrix_device *dev, uint64_t seed, struct sim_params *p);
/* The static run of one grid point (kyber false: scheduler none). */
struct static_run static_run_for(const struct matrix_device *dev, const struct workload *w, bool kyber,
				 uint64_t read_ns, uint64_t write_ns, unsigned warm_s, unsigned measure_s);
/* Every static point of the grid and scheduler none on one device and
 * workload, from the same seed. */
void measure_device(struct device_data *dd, size_t wi);
/* The best static setting meeting goal_ns, and the best reads any gave. */
void find_oracle(const struct device_data *dd, size_t wi, uint64_t goal_ns, struct oracle *o);
/* KT_MATRIX_GRID=1: every static point of a cell's grid, read P99 and
 * write IOPS, rows the read target, columns the write target. */
void print_grid(const struct device_data *dd, size_t wi);
/* The most writes a static setting ran with a read P99 as good as p99_ns
 * (INFEASIBLE_SAME_READS), 0: none. */
double writes_at_reads(const struct device_data *dd, size_t wi, uint64_t p99_ns);
/* The oracle's setting from a cold start (fresh Kyber, no warm-up): the
 * first second it meets the goal in, 0: none in FLOOR_CONVERGE_S. How fast
 * Kyber itself can get there, for the reader of a slow first_met. */
unsigned oracle_cold_first_met(const struct device_data *dd, const struct workload *w, const struct oracle *o,
			       uint64_t goal_ns);
/* The oracle's setting on the tuned run's seed, warmed CONVERGE_S and then
 * measured over the windows the tuned run's goal is judged on. Not a grade:
 * the oracle is chosen on STATIC_SEED's 15 s, and this says how the same
 * setting fares on the realization a missed cell was tuned on. */
void oracle_replay(const struct device_data *dd, const struct workload *w, const struct oracle *o,
		   struct static_result *out);
