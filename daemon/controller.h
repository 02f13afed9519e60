/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tuner's decision logic, pure: from one settled interval of a device
 * (struct ctl_sample), its goal and the targets in force, decide the next
 * read/write targets and say why. No I/O, no clock: the caller owns time,
 * sysfs and logging. See docs/tuner.md for the control law and its bands.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ctl-sample.h"
#include "goal.h"
#include "hist.h"
#include "kyber-sysfs.h"

enum ctl_state {
	CTL_LEARNING,		/* not enough data yet */
	CTL_TRACKING,		/* steering toward the goal (or parked, goal met) */
	CTL_HOLDING,		/* Kyber cannot help now (G-1, O-8, no writes); holding */
	CTL_INFEASIBLE,		/* even full read priority misses the goal */
	CTL_OVERRIDDEN,		/* someone else changed the device: hands off */
	CTL_ADVISE,		/* mode=advise: reporting, never writing */
	CTL_PAUSED,		/* paused by request */
	_CTL_STATE_MAX,
};

const char *ctl_state_to_string(enum ctl_state s);

/* Tunables, with the documented defaults from controller_params_default(). */
struct ctl_params {
	double tighten_above;		/* protect more when the read metric > this x goal (0.9) */
	double relax_below;		/* relax when the read metric < this x goal (0.7) */
	unsigned relax_after;		/* ... for this many settled intervals in a row (2) */
	double read_scale_init;		/* read target = goal x (read P90/metric) x this (1.0) */
	double read_scale_min;		/* lowest read scale (0.1) */
	double read_scale_max;		/* highest, when writes are under their floor (4) */
	double read_band_lo, read_band_hi;	/* read target within x read device P90 (0.5, 4) */
	double write_band_lo;		/* write target >= x write device P90 (1.5): never harmful */
	double k_init, k_max;		/* permitted write latency inflation (2.2, 16) */
	double k_hold;			/* goal met: no growth below this inflation (4.2) */
	double open_read;		/* open point: read target = x read device P99 (8) ... */
	uint64_t open_read_min_ns;	/* ... at least this (2 ms, Kyber's default) */
	double open_write;		/* open point: write target = x write device P99 (2) */
	double step_init, step_min, step_max;	/* factor per move (2, 1.15, 4) */
	unsigned o8_holdoff;		/* intervals parked after O-8 before probing again (60) */
	double g1_outstanding;		/* writes with <= this many outstanding: G-1 (1.5) */
};

void controller_params_default(struct ctl_params *p);

struct controller {
	struct goal goal;
	struct ctl_params p;
	bool protecting;		/* write throttling engaged (else at the open point) */
	bool decided;			/* a decision was made since (re)learning */
	enum ctl_state last_state;
	/*
	 * The two control variables while protecting:
	 *  k: how much the writes' P99 total latency may inflate over w_ref,
	 *     their unthrottled P99; the write target is k x w_ref. Kyber cuts
	 *     writes (when reads hurt) only while they are below it and grows
	 *     them above it, so for a writer with a fixed queue depth k bounds
	 *     the write throughput given up: at most 1 - 1/k.
	 *  read_scale: the read target is the read P90 consistent with meeting
	 *     the goal, times read_scale: Kyber calls reads hurt above it.
	 */
	double k, read_scale;
	double shape;			/* read device P90 / read metric, smoothed */
	double w_ref_ns, w_ref_iops;	/* writes unthrottled: P99 total, IOPS */
	uint32_t prev_write_depth;	/* Kyber's write depth one interval ago */
	bool wrote_last;		/* the last decision wrote targets (Kyber moves depths after) */
	uint32_t pulse_from;		/* ... a grow pulse, from this write depth (0: none) */
	/*
	 * What each write depth did to reads: settled intervals spent whole at
	 * one Kyber write depth (the same depth at both ends, no target written
	 * before it) that met / missed the goal, and grow pulses from depth d
	 * that missed (a miss at d + 1: Kyber cuts the grown depth back within
	 * the interval, so it never shows whole), halved every
	 * CTL_DEPTH_DECAY intervals so that old evidence fades. bad_depth, the
	 * lowest depth that keeps missing, is where growth stops short. A
	 * depth is bad only on repeated misses, and never below a depth that
	 * has met the goal reliably (reads cannot do better behind more
	 * writes): a host stall or a GC pause misses at every depth, and must
	 * not cap the writes at the depth it happened to catch.
	 */
#define CTL_DEPTH_MAX 128
#define CTL_DEPTH_DECAY 60
	uint8_t depth_met[CTL_DEPTH_MAX + 1], depth_missed[CTL_DEPTH_MAX + 1];
	unsigned depth_age;
	uint32_t bad_depth;		/* 0: none */
	double step;
	int last_dir;			/* +1 tightened, -1 relaxed, 0 none yet */
	unsigned relax_streak;
	unsigned infeasible_streak;
	/* O-8 probe: the state before the last tightening move. */
	bool probe_pending;
	double probe_metric, probe_write_iops;
	uint32_t probe_write_depth;
	bool interference_seen;		/* throttling writes did help reads */
	bool grow_pulse;		/* this decision lets writes grow briefly */
	bool short_pulse;		/* ... for about one Kyber evaluation */
	bool floor_bound;		/* write-iops-min held writes back while the goal was missed */
	unsigned floor_cap_hits;	/* intervals at the floor's slowdown cap, goal missed */
	unsigned o8_strikes, o8_hold;
	double o8_metric;		/* read metric when O-8 was concluded */
	/* Workload signature for shift detection. */
	bool have_sig, sig_writes;
	double sig_read_outstanding;
	/*
	 * Read histograms of the last settled intervals since targets last
	 * changed: the metric comes from their union (CTL_WINDOW intervals in
	 * steady state, so one noisy second does not move the targets), a
	 * clear miss in the newest interval alone acts at once.
	 */
#define CTL_WINDOW 3
	hist_t ring[CTL_WINDOW];
	unsigned ring_n, ring_i;
	uint64_t acc_n;			/* reads in the window */
	uint64_t window_metric;		/* the metric over the whole window */
};

struct ctl_decision {
	bool write;			/* targets differ from the current ones: write them */
	struct kyber_targets targets;	/* what should be in force after this step */
	/* Write pulse_targets first and targets only after the settle time:
	 * a short window in which Kyber grows the writes, then hold. */
	bool pulse;
	struct kyber_targets pulse_targets;
	uint64_t pulse_ns;		/* how long the pulse lasts (0: the settle time) */
	enum ctl_state state;
	bool goal_known, goal_met;
	uint64_t metric_ns;		/* read total latency at the goal's percentile */
	char reason[256];
};

void controller_init(struct controller *c, const struct goal *g, const struct ctl_params *p);
/* Forget what was learned (workload, search state); the goal stays. */
void controller_relearn(struct controller *c);

/*
 * One step on a settled interval. cur: the targets in force (as read from
 * sysfs). In mode=advise the decision is computed and reported, the
 * controller's search state does not move (there is no feedback), and
 * d->write is false.
 */
void controller_decide(struct controller *c, const struct ctl_sample *s,
		       const struct kyber_targets *cur, struct ctl_decision *d);

/* Samples needed in a window to estimate percentile pct (5 beyond it). */
uint64_t controller_samples_needed(double pct);
