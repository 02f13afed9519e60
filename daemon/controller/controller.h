/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tuner's decision logic, pure: from one settled interval of a device
 * (struct ctl_sample), its goal and the targets in force, decide the next
 * read/write targets and say why. No I/O, no clock: the caller owns time,
 * sysfs and logging. docs/tuner.md describes the law; ctl-tunables.h has
 * its constants.
 *
 * State, each part owned (initialised, updated, reset) by one file:
 *   struct ctl_metric        ctl-metric.c        the read metric and its window
 *   struct ctl_regime        ctl-regime.c        workload signature, the writes' free-running figures
 *   struct ctl_levels        ctl-levels.c        what each write-target level did to reads
 *   struct ctl_interference  ctl-interference.c  whether throttling writes helps reads (O-8)
 *   struct ctl_host          ctl-host.c          whether the host disturbed the interval (steal)
 *   struct ctl_spike         ctl-spike.c         whether a far miss is held as a spike
 *   struct ctl_probe         ctl-probe.c         a step down from within the goal
 *   struct ctl_aim           ctl-aim.c           what the law aims at while the goal is out of reach
 *   struct ctl_scatter       ctl-scatter.c       the writes' P99 scatter at Kyber's depth for them
 *   the rest of struct controller   controller.c the law: open or protecting;
 *                                    ctl-protect.c the level in force while protecting
 *                                    ctl-grow.c    its pulses (one more write depth)
 * and ctl-targets.c computes the targets themselves (pure functions).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ctl-sample.h"
#include "ctl-tunables.h"
#include "goal.h"
#include "hist.h"
#include "kyber-targets.h"

enum ctl_state {
	CTL_LEARNING,		/* not enough data yet */
	CTL_TRACKING,		/* steering toward the goal (or open, goal met) */
	CTL_HOLDING,		/* Kyber cannot help now (G-1, O-8); holding */
	CTL_INFEASIBLE,		/* even the most write throttling misses the goal */
	CTL_OVERRIDDEN,		/* someone else changed the device: hands off */
	CTL_ADVISE,		/* mode=advise: reporting, never writing */
	CTL_PAUSED,		/* paused by request */
	_CTL_STATE_MAX,
};

const char *ctl_state_to_string(enum ctl_state s);

struct ctl_metric {
	hist_t ring[CTL_WINDOW];	/* read total latency of the last settled intervals */
	unsigned ring_n, ring_i;
	uint64_t window_n;		/* reads in the window */
	uint64_t window_ns;		/* the goal's percentile over the window; 0: unknown */
	double shape;			/* read device P90 / metric, smoothed; 0: none yet */
	bool from_latest;		/* the last estimate came from the newest interval alone */
	uint64_t last_settled_ns;	/* that estimate, when the plant was settled; 0: none */
	double noise_var;		/* variance of ln(metric) from one settled second to the next */
	unsigned noise_n;		/* pairs of seconds it was learned from */
};

struct ctl_regime {
	bool known;
	bool writes;			/* writes running (with hysteresis) */
	/* Writes started within this interval (none ran in the last one):
	 * their queue was still filling, so their latency was under their own. */
	bool writes_new;
	double read_outstanding, write_outstanding;
	/* The writes running free (unthrottled): P99 total latency and rate;
	 * 0: not seen yet. Levels are set against w_free_ns. */
	double w_free_ns, w_free_iops;
	/* w_free_ns learned only from writes at CTL_USUAL_FREE_RATE or more:
	 * the device as it usually is, without a GC storm's P99. */
	double w_free_ns_usual;
	bool w_free_partial;		/* both from the last interval, a writes_new one */
};

struct ctl_levels {
	/* Settled intervals per level (and, last, at the open point) that
	 * met / missed the goal, halved every CTL_EVIDENCE_HALF_LIFE intervals. */
	uint8_t met[CTL_LEVELS + 1], missed[CTL_LEVELS + 1];
	/* Times Kyber grew the writes there while they already ran at their
	 * free-running rate (the target sits in their latency noise),
	 * weighted CTL_DRIFT_WEIGHT and halved with the counts above. */
	uint8_t drifted[CTL_LEVELS + 1];
	/* Of the misses and drift marks, those of intervals the host
	 * disturbed: dropped once it has passed (ctl_levels_forgive_disturbed()). */
	uint8_t missed_disturbed[CTL_LEVELS + 1], drifted_disturbed[CTL_LEVELS + 1];
	/* And those since reads last met the goal: the device's disturbance
	 * if it turns out that even the most throttling misses
	 * (ctl_levels_recent_disturbed()). */
	uint8_t missed_recent[CTL_LEVELS + 1], drifted_recent[CTL_LEVELS + 1];
	float rate[CTL_LEVELS + 1];	/* the most write IOPS seen meeting the goal there */
	float rate_p99_ns[CTL_LEVELS + 1];	/* the writes' P99 total latency at that rate */
	unsigned age;
};

struct ctl_interference {
	bool seen;			/* throttling writes did help reads in this regime */
	bool probing;			/* comparing against the metric before throttling */
	double metric_before, write_iops_before;
	unsigned strikes;		/* settled intervals throttled with no gain */
	unsigned age;			/* settled intervals throttled since the probe began */
	unsigned hold;			/* intervals left not throttling after O-8 */
	double hold_metric;		/* the metric when O-8 was concluded */
};

/* A far miss after a steady run, held a second to see whether it passes
 * (ctl-spike.c). */
enum ctl_spike_hold {
	CTL_SPIKE_NONE,			/* the last interval's miss, if any, was acted on */
	CTL_SPIKE_HELD,			/* ... held as a possible spike */
	CTL_SPIKE_AFTERMATH,		/* ... held as the second after one, Kyber's writes grown in it */
	CTL_SPIKE_AFTER_STEP,		/* ... held as a possible spike right after a probe or pulse */
};

struct ctl_spike {
	unsigned steady;		/* settled intervals without a miss at the targets in force */
	unsigned bank;			/* settled intervals within the goal there, banked for holds */
	enum ctl_spike_hold held;
	uint32_t depth;			/* Kyber's write depth in the steady run (0: unknown) */
	uint64_t write_p99_ns;		/* the writes' P99 then */
	bool stepped;			/* a probe or pulse stepped from a steady run: the next
					 * interval's far miss is held */
};

/* While the goal is out of reach: the best reads the most throttling gave
 * (ctl-aim.c). */
struct ctl_aim {
	uint64_t seen_ns[CTL_AIM_SECONDS];	/* settled P99s at the most throttling, a ring */
	uint64_t seen_p90_ns[CTL_AIM_SECONDS];	/* and the reads' device P90s */
	unsigned n, next;		/* seconds in the rings (up to CTL_AIM_SECONDS); the next slot */
	uint64_t aim_ns;		/* what the law aims at (0: the goal) */
	uint64_t read_p90_ns;		/* the lowest read target then (0: none) */
	unsigned within;		/* seconds in a row clearly within the goal */
};

/* A step down from within the goal, to find room reads do not show
 * (ctl-probe.c). */
struct ctl_probe {
	bool under_way;			/* stepped down, neither held nor failed yet */
	uint64_t write_p99_ns;		/* the writes' P99 at the level it left */
	unsigned wait;			/* steady seconds (ctl_spike) before the next probe */
	bool returned;			/* a probe failed: its writes drain */
	unsigned aim_steady;		/* out of reach: settled seconds within the aim at depth 1 */
	bool aim_tried;			/* out of reach: this regime's probe from depth 1 is spent */
	bool adopt;			/* a pulse's hold target was measured and written: the law's
					 * level becomes the one nearest it */
	bool goal_met;			/* the goal was met in this regime: out of reach now is a
					 * disturbance's doing, not the workload's */
};

/* The writes' latency scatter at Kyber's depth for them (ctl-scatter.c). */
struct ctl_scatter {
	uint32_t depth;			/* the depth the P99s below were seen at (0: none) */
	uint64_t p99_ns[CTL_SCATTER_INTERVALS];	/* settled intervals' write P99s, a ring */
	unsigned n, next;		/* P99s in the ring; the next slot */
};

/* The hypervisor's steal, against what is usual on this host. */
struct ctl_host {
	bool known;			/* steal_usual learned from at least one interval */
	double steal_usual;		/* moving average, CTL_STEAL_USUAL_HALF_LIFE */
	bool disturbed;			/* the last interval was */
	unsigned calm;			/* undisturbed intervals since the last disturbed one */
	bool passing;			/* a disturbance was seen and has not passed yet */
};

struct controller {
	struct goal goal;
	struct ctl_metric metric;
	struct ctl_regime regime;
	struct ctl_levels levels;
	struct ctl_interference o8;
	struct ctl_host host;
	struct ctl_spike spike;
	struct ctl_probe probe;
	struct ctl_aim aim;
	struct ctl_scatter scatter;
	/* The law (controller.c, ctl-protect.c). */
	bool protecting;		/* writes throttled to `level` (else the open point) */
	int level;			/* index on the level ladder while protecting */
	int last_move;			/* the last level change: +1 up, -1 down (or open), 0 none */
	bool frozen;			/* the writes were held where a cut left them (or stepped down since) */
	unsigned pull_hold;		/* intervals before the next pull-up */
	uint64_t pull_ns;		/* pulling the writes up: the write target meanwhile (0: not) */
	unsigned pull_left;		/* intervals the pull-up may still take */
	double read_scale;		/* read target: the goal's read P90 x this */
	double calm_read_scale;		/* the read scale before the host's last disturbance */
	int lower_step;			/* levels per slack step */
	unsigned slack_streak;		/* settled intervals of slack in a row */
	bool relaxed;			/* stepped down since the regime (or goal) began */
	unsigned miss_streak;		/* settled intervals missing in a row */
	unsigned since_write;		/* intervals since targets were last written */
	bool cut_written;		/* that write was a cut (writes taken out of the device) */
	uint32_t prev_write_depth;	/* Kyber's write depth one interval ago (0: unknown) */
	double prev_write_iops;		/* the writes' rate one interval ago */
	double prev_write_mean_ns;	/* and their mean latency (0: unknown) */
	unsigned infeasible_streak;	/* misses in a row with no more throttling to give */
	bool infeasible;		/* the verdict, until reads are clearly within the goal */
	bool device_slow;		/* infeasible with the writes at depth 1: the device was slow */
	int floor_cap;			/* highest level write-iops-min allows here (-1: none found) */
	bool floor_bound;		/* write-iops-min held writes back while the goal was missed */
	bool decided;			/* a decision was made since (re)learning */
	enum ctl_state last_state;
};

struct ctl_decision {
	bool write;			/* targets differ from the current ones: write them */
	struct kyber_targets targets;	/* what should be in force after this step */
	/* A grow pulse (ctl-pulse.h runs it): 0, or the write target to
	 * write first, until Kyber changes the writes' depth; then the drain
	 * target for pulse_drain_ns, twice; then a hold it measures, or
	 * `targets` if Kyber did not grow them. */
	uint64_t pulse_write_ns;
	uint64_t pulse_drain_write_ns;
	uint64_t pulse_drain_ns;
	enum ctl_state state;
	bool cut;			/* the law moved the writes a level up: fewer in the device */
	bool goal_known, goal_met;
	uint64_t metric_ns;		/* read total latency at the goal's percentile */
	char reason[256];
};

void controller_init(struct controller *c, const struct goal *g);
/* Forget what was learned (workload, levels); the goal stays. */
void controller_relearn(struct controller *c);

/*
 * Start from a point learned elsewhere (a per-model profile), whose
 * targets the caller writes: protecting at the level of write_ns, the
 * writes' free-running figures as given (0: learn them), throttling known
 * to help reads (no O-8 probe). The law moves on from there.
 */
void controller_seed(struct controller *c, uint64_t write_ns, double write_free_p99_ns, double write_free_iops);

/*
 * The device has just switched to Kyber because reads missed the goal with
 * writes running (s: that interval on the original scheduler, metric: its
 * read percentile). Protect from the first interval on Kyber, cutting the
 * writes from where s saw them, instead of spending it at Kyber's default
 * targets: d says what to write and why. False, and nothing to write,
 * where the law already protects (a seed) or s gives no reason to.
 */
bool controller_engage(struct controller *c, const struct ctl_sample *s, uint64_t metric,
		       struct ctl_decision *d);

/*
 * One step on a settled interval. cur: the targets in force (as read from
 * sysfs). In mode=advise the decision is computed and reported, the law's
 * state does not move (there is no feedback), and d->write is false.
 */
void controller_decide(struct controller *c, const struct ctl_sample *s,
		       const struct kyber_targets *cur, struct ctl_decision *d);

/*
 * The device runs another scheduler (ctl-sched.h): judge the read goal
 * and learn the workload, decide nothing (d->write false, state holding).
 * The law's state stays where it was.
 */
void controller_observe(struct controller *c, const struct ctl_sample *s, struct ctl_decision *d);

/* Samples needed in a window to estimate percentile pct (5 beyond it). */
uint64_t controller_samples_needed(double pct);

/* What was learned about the writes running free (for the state file). */
static inline double controller_write_ref_ns(const struct controller *c)
{
	return c->regime.w_free_ns;
}

static inline double controller_write_ref_iops(const struct controller *c)
{
	return c->regime.w_free_iops;
}
