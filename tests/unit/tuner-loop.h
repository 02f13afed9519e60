/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's control loop around the simulated plant, for the controller's
 * tests: one decision per interval, the settle time after a change
 * discarded from the controller's input (as daemon/device.c does) but
 * counted in the judged window (as fio's per-second log sees it). Also: static Kyber settings in steady state,
 * the oracle the tuner is judged against.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "controller.h"
#include "ctl-pulse.h"
#include "ctl-sched.h"
#include "hist.h"
#include "kyber-sim.h"

#define SEC 1000000000ULL
#define MSEC 1000000ULL
#define USEC 1000ULL

/* The real FUSE path's tail (tools/kyber-sim/README.md, test_jitter). */
#define LOOP_HOST_JITTER_NS (20 * USEC)

struct tuner_loop {
	struct sim *sim;
	struct controller ctl;
	struct sched_choice sched;	/* which scheduler the plant runs (goal's scheduler=) */
	unsigned switches;		/* scheduler switches */
	uint64_t interval_ns, settle_ns;
	bool changed_last;
	struct pulse pulse;		/* a decision's pulse under way (ctl-pulse.h) */
	unsigned changes;		/* target writes */
	unsigned windows;
	struct ctl_decision d;
	struct ctl_sample s;		/* the controller's input of the last step */
	hist_t window;			/* reads of the whole last interval */
	uint64_t metric;		/* the goal's percentile over `window`; 0: no reads */
	double write_iops, read_iops;	/* over the whole last interval */
	bool judge_hiccups;		/* count the windows host hiccups fall in (default: no,
					 * where they miss a goal at any setting); set before a run */
	bool hiccup;			/* a host hiccup fell in the last interval */
	bool trace;			/* KT_TEST_TRACE set: one line per step */
};

/* A fresh plant with the controller with goal_text, on Kyber with default
 * targets (or on none under scheduler=auto). Fails the test on any error. */
struct tuner_loop *tuner_loop_new(const struct sim_params *p, const char *goal_text,
				  unsigned read_qd, unsigned write_qd);
void tuner_loop_free(struct tuner_loop *l);
/* One interval and one decision, as the daemon runs them. */
void tuner_loop_step(struct tuner_loop *l);
/* The workload becomes read_qd/write_qd at_ns into the next step, as a
 * workload's edges fall anywhere in the daemon's intervals. */
void tuner_loop_shift_within(struct tuner_loop *l, uint64_t at_ns, unsigned read_qd, unsigned write_qd);
/* Whether the last interval's window counts: no hiccup fell in it, or
 * hiccups are judged. */
static inline bool tuner_loop_judged(const struct tuner_loop *l)
{
	return !l->hiccup || l->judge_hiccups;
}
/* Whether the last window met the goal (no reads: not judged, false). */
bool tuner_loop_met(const struct tuner_loop *l);

/* One static configuration in steady state, per one-second window. */
#define STATIC_WINDOWS_MAX 60
struct static_run {
	bool kyber;			/* Kyber at read_ns/write_ns; false: scheduler none */
	uint64_t read_ns, write_ns;
	unsigned read_qd, write_qd;
	double pct;			/* the read percentile taken */
	unsigned warm_s;		/* seconds of warm-up, not measured */
	unsigned measure_s;		/* one-second windows measured, <= STATIC_WINDOWS_MAX */
	bool judge_hiccups;		/* as struct tuner_loop's: else the reads of the
					 * windows a host hiccup fell in are left out */
};

struct static_result {
	uint64_t p99_ns;		/* percentile over the judged windows */
	double write_iops, read_iops;	/* means over the measured windows */
	unsigned windows;		/* judged */
	uint64_t window_ns[STATIC_WINDOWS_MAX];	/* the percentile per judged window; 0: no reads */
};

/* A static run from a fresh start: the read percentile of each judged window. */
void static_point(const struct sim_params *p, const struct static_run *run, struct static_result *out);
/* Windows of r at or under goal_ns. */
unsigned static_windows_met(const struct static_result *r, uint64_t goal_ns);
