/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The controller's parts, each owning one piece of struct controller
 * (controller.h lists which). controller.c calls them; they never call
 * each other. The law itself is two files: controller.c decides between
 * open and protecting, ctl-protect.c steers while protecting, and both
 * use the helpers below. Pure: no I/O, no clock.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller.h"
#include "macro.h"

static inline double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static inline bool writes_active(const struct ctl_sample *s)
{
	return s->write.completed > 0 && s->write.iops >= CTL_WRITES_ACTIVE_IOPS;
}

/* Kyber's write depth at its cap (or unknown): the writes ran unthrottled. */
static inline bool writes_free(const struct ctl_sample *s)
{
	return s->write.kyber_depth == 0 || s->write.kyber_depth >= KYBER_WRITE_DEPTH_CAP;
}

/* controller.c: the decision's reason, and the targets and level bounds
 * of the law's state. */
void ctl_say(struct ctl_decision *d, const char *fmt, ...) _printf_(2, 3);
/* Throttling off: the open point, unless cur already is one. */
void ctl_go_open(struct controller *c, const struct ctl_sample *s, const struct kyber_targets *cur,
		 struct ctl_decision *d);
uint64_t ctl_protect_read_target(const struct controller *c);
/* The read target and the write target of the level in force. */
void ctl_protect_targets(const struct controller *c, struct ctl_decision *d);
/* The highest level at which writes would run free, and the highest
 * level allowed. */
int ctl_open_level(const struct controller *c, const struct ctl_sample *s);
int ctl_max_level(const struct controller *c, const struct ctl_sample *s);

/* ctl-protect.c: the law while protecting. */
/* Move to `level` (move: +1 a cut, -1 a step down) and protect there. */
void ctl_set_level(struct controller *c, int level, int move, struct ctl_decision *d);
/* From open: protect, cutting the writes about as far as reads miss. */
void ctl_engage(struct controller *c, const struct ctl_sample *s, uint64_t metric, struct ctl_decision *d);
/* One settled-or-not interval while protecting. */
void ctl_protect(struct controller *c, const struct ctl_sample *s, const struct kyber_targets *cur,
		 uint64_t metric, struct ctl_decision *d);

/* ctl-grow.c: the law's pulses. Each says so in d and returns true when
 * it starts one. Out of reach at depth 1 and steady within the aim: a
 * pulse to depth 2. */
bool ctl_grow_pulse(struct controller *c, const struct ctl_sample *s, bool settled, struct ctl_decision *d,
		    const char *m, const char *g);
/* Reads well under the goal with the law at the open point's edge: a
 * pulse one of Kyber's steps deeper. */
bool ctl_step_pulse(struct controller *c, const struct ctl_sample *s, bool settled, struct ctl_decision *d,
		    const char *m, const char *g);

/* ctl-targets.c: the targets the law writes. Pure functions. */
/* Into [KYBER_TARGET_MIN_NS, KYBER_TARGET_MAX_NS]. */
uint64_t ctl_clamp_target(double ns);
/* The open point; keeps the current value of a class that has no data. */
struct kyber_targets ctl_open_point(enum goal_mode mode, const struct ctl_sample *s,
				    const struct kyber_targets *cur);
/* Are cur an open point already? Hysteresis: kept while they keep its
 * properties. */
bool ctl_is_open(enum goal_mode mode, const struct ctl_sample *s, const struct kyber_targets *cur);
/* While protecting, reads count as hurt once their device P90 is above
 * the P90 that goes with meeting the goal (the shape x the goal), times a
 * scale lowered for a tail under a calm P90: Kyber cuts writes only then,
 * and only as far as the write target lets it. */
uint64_t ctl_read_target(const struct goal *g, double shape, double scale);
/* Last line of defence: a write target below the write device latency
 * makes writes congest Kyber, and with a read target above the read
 * latency the reads are what gets cut (the harmful pair). Never that. */
void ctl_never_harmful(const struct ctl_sample *s, struct kyber_targets *t);
/* Keeps in t the target in force wherever the new one would act the same
 * in Kyber: one that moved too little to matter, and a read target where
 * it and the one in force both count the reads as hurt in sample s
 * (CTL_READ_HURT_MARGIN); true when anything is left to write. */
bool ctl_keep_in_force(const struct ctl_sample *s, const struct kyber_targets *cur, struct kyber_targets *t);

/* ctl-metric.c: the goal's percentile of read total latency. */
void ctl_metric_forget(struct ctl_metric *m);
/*
 * Adds the interval's reads to the window and estimates the metric: from
 * the newest interval when it has enough reads (or an already certain
 * miss), else from the window. False when neither has enough. Also
 * updates the smoothed shape (read device P90 / metric).
 */
/* The metric against the goal: a miss (over it, confirmed by the window
 * or far over), at risk (over the risk line ctl_metric_ceiling() of it),
 * slack for more writes (under that line / CTL_STEP_GAIN, the window
 * too), or fine. */
enum ctl_verdict { V_MISS, V_RISK, V_OK, V_SLACK };	/* worst first */
/* Learn how much the metric varies from one settled second to the next
 * (settled: the targets and Kyber's write depth unchanged). */
void ctl_metric_learn_noise(struct ctl_metric *m, uint64_t metric, bool settled);
/* x goal: the highest metric that still meets the goal in CTL_MET_Z
 * sigmas of that noise. */
double ctl_metric_ceiling(const struct ctl_metric *m);
enum ctl_verdict ctl_metric_judge(const struct goal *g, const struct ctl_metric *m, uint64_t metric);
/* The metric alone with room for two steps (under the slack line /
 * CTL_STEP_GAIN), whatever the window says. */
bool ctl_metric_two_steps_alone(const struct goal *g, const struct ctl_metric *m, uint64_t metric);
bool ctl_metric_estimate(struct ctl_metric *m, const struct goal *g, const struct ctl_sample *s,
			 uint64_t *ret);

/* ctl-regime.c: the workload's signature and the writes running free. */
void ctl_regime_forget(struct ctl_regime *r);
/* What changed in a new regime. */
enum ctl_shift {
	CTL_SHIFT_NONE,
	CTL_SHIFT_WRITES,		/* writes started, stopped, or their count changed */
	CTL_SHIFT_MORE_READS,		/* more reads outstanding, the writes as they were */
	CTL_SHIFT_FEWER_READS,
};
/*
 * A new regime: writes started or stopped, the reads' outstanding count
 * changed by CTL_SHIFT_FACTOR, or the writes' by CTL_WRITE_SHIFT_FACTOR. Writes what changed into
 * `what`. The first call only learns the signature.
 */
enum ctl_shift ctl_regime_shifted(struct ctl_regime *r, const struct ctl_sample *s, char *what, size_t n);
/* Learn the writes' free-running P99 and rate (free_running: the writes
 * were not throttled in this interval). The P99 of an interval in which
 * they started (writes_new) is replaced by the next interval's if they
 * run free in that one too. */
void ctl_regime_learn_writes(struct ctl_regime *r, const struct ctl_sample *s, bool free_running);
/* The device was slow and is fast again: the free-running P99 goes back
 * to the usual one (w_free_ns_usual) if that is lower. */
void ctl_regime_device_fast_again(struct ctl_regime *r);

/* ctl-levels.c: the ladder of write targets and what each did to reads;
 * the open point keeps its counts as level CTL_LEVEL_OPEN. */
#define CTL_LEVEL_OPEN (-1)
uint64_t ctl_level_ns(int level);
/* The lowest level whose target is at least ns. */
int ctl_level_at_least(double ns);
/* The level whose target is nearest ns (by ratio). */
int ctl_level_nearest(double ns);
void ctl_levels_forget(struct ctl_levels *l);
/* The same, but for the open point's misses (ctl_levels_missed()). */
void ctl_levels_forget_but_open_misses(struct ctl_levels *l);
/* Once per interval: the counts halve every CTL_EVIDENCE_HALF_LIFE. */
void ctl_levels_tick(struct ctl_levels *l);
/* A settled interval at `level` met the goal, with the writes at
 * write_iops and their total P99 at write_p99_ns. */
void ctl_levels_met(struct ctl_levels *l, int level, double write_iops, uint64_t write_p99_ns);
/* The most write IOPS `level` met the goal with lately; 0: none (the rate
 * fades with the level's met count, ctl_levels_tick()). */
double ctl_levels_rate(const struct ctl_levels *l, int level);
/* The writes' P99 when they ran at ctl_levels_rate() there; 0: none. */
double ctl_levels_rate_p99(const struct ctl_levels *l, int level);
void ctl_levels_forget_rate(struct ctl_levels *l, int level);
/* An interval at `level` missed it; weight 2 for a far miss, which
 * keeps the level out of use for two half-lives. False (not counted)
 * while a level with less throttling meets the goal. disturbed: the host
 * disturbed the interval, and the miss lasts only as long as that does. */
bool ctl_levels_missed(struct ctl_levels *l, int level, unsigned weight, bool disturbed);
/* A disturbance has passed (the host's, or the device's: see
 * ctl_levels_recent_disturbed()): drop the misses and drift marks of the
 * intervals it disturbed. */
void ctl_levels_forgive_disturbed(struct ctl_levels *l);
/* Reads met the goal: the misses and drift marks since they last did
 * were the writes' doing and stand. */
void ctl_levels_recent_stand(struct ctl_levels *l);
/* Reads missed even behind the most throttling: those misses and drift
 * marks were the device's, dropped with ctl_levels_forgive_disturbed(). */
void ctl_levels_recent_disturbed(struct ctl_levels *l);
/* Met there in at least CTL_RARE_MISS_RATIO of its seconds per miss,
 * with CTL_RARE_MISS_MET_MIN met at least: a level that meets the goal in
 * 95% of them. */
bool ctl_levels_rare_miss(const struct ctl_levels *l, int level);
unsigned ctl_levels_met_count(const struct ctl_levels *l, int level);
unsigned ctl_levels_missed_count(const struct ctl_levels *l, int level);
/* Missed there more than once in CTL_BAD_MISS_RATIO: do not go back
 * before the counts fade. */
bool ctl_levels_bad(const struct ctl_levels *l, int level);
/* Forget the misses and drift marks of every level with less throttling
 * than `level`, the open point included. */
void ctl_levels_forgive_below(struct ctl_levels *l, int level);
/* Kyber grew the writes at `level` while they ran at their free-running
 * rate: the level cannot hold them (disturbed: as ctl_levels_missed()). */
void ctl_levels_drifted(struct ctl_levels *l, int level, bool disturbed);
/* Bad, or the writes drifted there lately: never stepped down onto. */
bool ctl_levels_unusable(const struct ctl_levels *l, int level);
/* The lowest level above `level` (at most `max`) that met the goal and is
 * usable; -1 if none. */
int ctl_levels_good_above(const struct ctl_levels *l, int level, int max);
/* The lowest level below `level` (at least `min`) that met the goal, with
 * no unusable level between; -1 if none. */
int ctl_levels_good_below(const struct ctl_levels *l, int level, int min);

/* ctl-host.c: whether the host's hypervisor disturbed an interval. */
void ctl_host_forget(struct ctl_host *h);
/* Once per interval with its steal (0..1): sets h->disturbed; true when a
 * disturbance has just passed (CTL_HOST_CALM_INTERVALS calm ones after it). */
bool ctl_host_update(struct ctl_host *h, double steal);

/* ctl-spike.c: a far miss after a steady run is held a second. */
void ctl_spike_forget(struct ctl_spike *k);
/* The targets changed: the run of seconds without a miss starts again. */
void ctl_spike_moved(struct ctl_spike *k);
/* The targets changed by one step less throttling from a steady run (a
 * probe, a pulse): the next interval's far miss is held as a spike. */
void ctl_spike_stepped(struct ctl_spike *k);
/* Once per interval with a read metric (settled: the targets in force for
 * a whole interval), Kyber's write depth and the writes' P99. True when
 * this interval's miss is held as a possible spike, or as the second
 * after one with the writes grown by it: the law leaves the targets and
 * the levels' record alone. */
bool ctl_spike_update(struct ctl_spike *k, const struct goal *g, uint64_t metric, bool settled,
		      uint32_t write_depth, uint64_t write_p99_ns);

/* ctl-probe.c: a step down from within the goal after a steady run. */
void ctl_probe_forget(struct ctl_probe *p);
/* A probe may start after `steady` settled seconds without a miss. */
bool ctl_probe_due(const struct ctl_probe *p, unsigned steady);
/* A probe stepped down from a level holding the writes at write_p99_ns. */
void ctl_probe_started(struct ctl_probe *p, uint64_t write_p99_ns);
/* The law moved the level: a probe under way, not failed by then, holds. */
void ctl_probe_moved(struct ctl_probe *p);
/* Once per interval: a probe under way holds after CTL_PROBE_STEADY
 * steady seconds at the level it reached. */
void ctl_probe_update(struct ctl_probe *p, bool settled, unsigned steady);
/* Reads missed, or Kyber grew the writes past the probed level's hold:
 * when that failed a probe under way (the next one waits twice as long),
 * the writes' P99 at the level it left; else 0. Call before the law moves
 * the level. */
uint64_t ctl_probe_failed(struct ctl_probe *p);
/* Reads missed in the unsettled interval right after a failed probe: its
 * writes still draining, not the doing of the level the law went to
 * (once). */
bool ctl_probe_draining(struct ctl_probe *p, bool settled);
/* Out of reach at depth 1, once per settled interval there (within: the
 * aim met): true once a regime, after CTL_PROBE_STEADY such in a row. */
void ctl_probe_aim_tick(struct ctl_probe *p, bool within);
bool ctl_probe_aim_due(struct ctl_probe *p);

/* ctl-aim.c: what the law aims at while the goal is out of reach. */
void ctl_aim_forget(struct ctl_aim *a);
/* A settled second's metric and reads' device P90 at the most throttling
 * (depth 1 or the highest level). */
void ctl_aim_learn(struct ctl_aim *a, uint64_t metric, uint64_t read_p90_ns);
/* The read latency the law aims at: the aim, never under the goal. */
uint64_t ctl_aim_read_ns(const struct ctl_aim *a, uint64_t goal_ns);
/* Once per interval with a metric: true (and the aim forgotten) once
 * CTL_AIM_CLEAR of them in a row were clearly within the goal. */
bool ctl_aim_within(struct ctl_aim *a, bool clearly_ok);

/* ctl-scatter.c: the writes' P99 scatter at one depth. */
void ctl_scatter_forget(struct ctl_scatter *sc);
/* Once per interval: Kyber's write depth now and an interval ago, and the
 * writes' P99. */
void ctl_scatter_add(struct ctl_scatter *sc, uint32_t depth, uint32_t prev_depth, uint64_t p99_ns);
/* The highest settled P99 seen lately at `depth` (0: none). */
uint64_t ctl_scatter_high(const struct ctl_scatter *sc, uint32_t depth);

/* ctl-interference.c: does throttling writes help reads (O-8)? */
void ctl_interference_forget(struct ctl_interference *o);
/* Throttling starts: remember the reads and writes before it, if the
 * writes ran free then (writes_free); else there is nothing to compare. */
void ctl_interference_start(struct ctl_interference *o, double metric, double write_iops, bool free);
/* A settled interval while throttling: true when it shows, for the
 * CTL_O8_STRIKES-th time running, that cutting the writes left reads as
 * they were. Then holding starts. */
bool ctl_interference_none(struct ctl_interference *o, double metric, double write_iops);
/* While holding after O-8: true (and the hold ends) once reads are twice
 * as bad as when it started; else counts the hold down. */
bool ctl_interference_holding(struct ctl_interference *o, bool metric_known, double metric);
