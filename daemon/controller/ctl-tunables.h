/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every constant of the control law, with its unit and the reason for its
 * value (docs/tuner.md explains the law). Kyber's own constants, which
 * these follow, are in block/kyber-iosched.c: a target's buckets are a
 * quarter of it wide, a domain is cut to (b + 1)/4 of its depth while
 * congested and grows by the same factor while its P99 is over its target,
 * and it holds while its P99 is in bucket 3 (3/4 to 1 of the target).
 */
#pragma once

/* Kyber's depth cap of the write domain (kyber_depth[KYBER_WRITE]): at it
 * the writes run free. */
#define KYBER_WRITE_DEPTH_CAP 128

/* ---- Judging the read metric (the goal's percentile of read latency) */

/* Intervals in the metric's window: one noisy second does not move the
 * targets, three seconds still follow a change within the 5 s budget. */
#define CTL_WINDOW 3
/* A miss counts after this many reads when it is already statistically
 * certain (more above the goal than 3 sigma over the allowed share), so
 * a slow reader does not delay the first reaction by seconds. */
#define CTL_CERTAIN_MISS_MIN_READS 20
/* The metric is at risk above goal x exp(-CTL_MET_Z x sigma), sigma the
 * measured spread of ln(metric) from one settled second to the next: the
 * goal must hold in 95% of the seconds (one-sided z of 1.65), not on
 * average. Before any is measured sigma is CTL_NOISE_SIGMA_DEFAULT (the
 * risk then at 0.85x the goal); it is kept within MIN (a histogram bucket
 * is 3.5% wide) and MAX, and learned with weight CTL_NOISE_WEIGHT per
 * settled second. */
#define CTL_MET_Z 1.65
#define CTL_NOISE_SIGMA_DEFAULT 0.1
#define CTL_NOISE_SIGMA_MIN 0.03
#define CTL_NOISE_SIGMA_MAX 0.3
#define CTL_NOISE_WEIGHT 0.1
/* x goal: a newest interval this far over is a miss without the window's
 * confirmation (a real collapse, not a noisy second). */
#define CTL_CLEAR_MISS 1.5
/* x goal: a metric at least this far over calls for the hardest step. */
#define CTL_FAR_MISS 2.0
/* Reads have room for more writes below the risk line / this: a level's
 * step (x1.19 in the write target) raises the metric by about that much
 * at most where reads scale with the writes, with room for the noise. */
#define CTL_STEP_GAIN 1.3

/* ---- The level: Kyber's write target while reads are protected */

/*
 * Levels are a ladder of write targets CTL_LEVEL_STEPS_PER_DOUBLING per
 * doubling (x1.19 a step): a little finer than a Kyber bucket (a quarter
 * of a target), so the edges of the band where Kyber holds a domain
 * (3/4 to 1 of the target) can be placed within one bucket. Level 0 is
 * CTL_LEVEL_BASE_NS; CTL_LEVELS levels reach past 100 s, the largest
 * target kyber-tuned writes.
 */
#define CTL_LEVEL_BASE_NS 10000ULL		/* 10 us */
#define CTL_LEVEL_STEPS_PER_DOUBLING 4
#define CTL_LEVELS 96
/* Levels down per slack step: one; while reads stay under CTL_FAR_SLACK x
 * the goal the step grows by one each step (from far away in few steps),
 * up to CTL_LOWER_MAX, and starts again at one after a miss. */
#define CTL_LOWER_MAX 4
#define CTL_FAR_SLACK 0.35
/* x the last interval's write rate, and its writes' mean latency over
 * this one's: writes this much faster at the same level and depth ran on
 * a slower device before (ctl-protect.c, forgive()); a rate that moves
 * this much by itself is no noise. */
#define CTL_FASTER_GAIN 1.5
/* x the writes' free-running rate: writes this fast have nothing to gain
 * from less throttling (the rate is flat in the depth). */
#define CTL_FULL_RATE 0.97
/* x the writes' best free-running rate: writes running free at least this
 * fast show the device as it usually is; slower, the device is slow (a GC
 * storm: 25-40% in the simulator), by a change CTL_FASTER_GAIN says is no
 * noise. Their P99 then is not what open means once it is fast again. */
#define CTL_USUAL_FREE_RATE (1.0 / CTL_FASTER_GAIN)
/* A level that once met the goal with this x the writes it holds now
 * pulls them up (ctl-protect.c, pull_up()): the writes are to come back to
 * 90% of their rate or more after a disturbance, and a rate 10% short is
 * no one-second noise (rates vary by a few percent). */
#define CTL_PULL_GAIN 1.1
/* A pull-up (ctl-protect.c, pull_up()) ends once the writes are back at
 * this x the rate the level held, or after this many intervals: Kyber
 * grows a domain by up to x2 every evaluation (100 ms with enough
 * samples, at most 1 s), so a few seconds cover any way back. */
#define CTL_PULL_REACHED 0.95
#define CTL_PULL_INTERVALS 3
/* Settled intervals of slack in a row before writes get more. */
#define CTL_SLACK_INTERVALS 3
/* Settled seconds without a miss at the same targets before reads within
 * the goal, but short of slack, get a probe of one level less throttling
 * (ctl-probe.c), and that the probe's level must last for the probe to
 * hold: over three times the metric's window, so that a level at its edge
 * has missed in it, and short enough that writes held a step or two short
 * of their room get it within the first half minute. After each failed
 * probe the run doubles, up to MAX: a second's miss every few minutes. */
#define CTL_PROBE_STEADY 10
#define CTL_PROBE_STEADY_MAX 160
/* x the last interval's write rate: writes under it stopped or paused
 * within the interval, whose reads saw them only in part. Its slack is
 * the pause's, not the level's, and gives the writes nothing. */
#define CTL_SLACK_EDGE_RATE 0.5
/* x the writes' unthrottled P99: a write target under this makes Kyber
 * grow writes back to full depth (under 1x always; up to 25% above it
 * whenever the P99's noise crosses the target), so such a level is the
 * open point, which says the same with no risk of congesting Kyber on
 * writes. Just above it Kyber holds writes wherever they are (bucket 3). */
#define CTL_OPEN_BELOW 1.25
/* x the writes' unthrottled P99: the highest level. Writes with a fixed
 * queue depth slow down about as much as their target allows (Little's
 * law), and Kyber's depth floor of 1 is reached well before. */
#define CTL_LEVEL_MAX_FACTOR 64
/* Kyber cuts a congested domain whose P99 is under this x its target
 * (buckets 0-2). */
#define CTL_CUT_ZONE 0.75
/* A step down skips a level at which the writes' P99 would sit between
 * these x its target: one-second P99s vary by +-10%, so Kyber would hold
 * them for a while and then grow them on a noisy window, the goal missed
 * and the step taken back, every half minute or so (seen on flashsim). */
#define CTL_NOISE_LO 0.85
#define CTL_NOISE_HI 1.1
/* Holding writes where they are puts their P99 at this x the target, in
 * bucket 3 where Kyber holds a domain, nearer its cut edge (0.75) than
 * its grow edge (1): noise that crosses the cut edge only cuts while
 * reads are at risk, noise over the grow edge lets writes grow and reads
 * miss. */
#define CTL_HOLD_MIDDLE 0.8
/* A grow pulse (ctl-grow.c, ctl_grow_pulse(); ctl-pulse.h runs it). Its
 * first target puts the writes' P99 at depth 1 at CTL_PULSE_GROW x it,
 * over the 7/4 at which Kyber doubles a depth of 1, with room for the
 * P99's noise. The drain target puts that P99 at CTL_PULSE_DRAIN x it:
 * the queue built at depth 1 drains at up to that P99, which must stay
 * under the 5/4 at which Kyber grows a depth of 2 again. */
#define CTL_PULSE_GROW 2.0
#define CTL_PULSE_DRAIN 1.2
/* A step pulse from depth 2 or more (ctl-grow.c, ctl_step_pulse()): the
 * drain target puts the writes' P99 before it at this x the target, in
 * bucket 3 (3/4 to 1), where Kyber neither grows the new depth further
 * (from 4 it grows in bucket 4) nor cuts it but on a congested window. */
#define CTL_STEP_DRAIN 0.9
/* No step pulse for writes already at this x their free-running rate: a
 * deeper depth gains them at most the rest, and near that rate it is flat
 * in the depth, so is their latency, and a grown depth drifts on in its
 * noise (tlc model R16+W16 at half of none's P99, depth 6 at 89% of it:
 * a pulse to 7 went on to 63 in two seconds, reads 1.6x over the goal).
 * No static setting gives them much more either. */
#define CTL_STEP_WORTH 0.85
/* If Kyber does not grow them, the pulse leaves a target at depth 1's P99
 * / 2 / CTL_PULSE_KEEP_AT: under 7/4 of it, so depth 1 stays, and in bucket
 * 3 for depth 2 should its rate double (Little's law halves the P99). */
#define CTL_PULSE_KEEP_AT 0.77
/* No pulse where the writes' P99 at depth 1 is over this, in ns: the
 * pulse drains for one such P99 and measures for another, and no interval
 * is judged meanwhile; with its grow (up to a second) that stays within
 * three 1-s intervals. The slowest writes of the simulator's matrix take
 * 765 ms at depth 1 (qdlat and hiccup, W256), and the pulse doubles them. */
#define CTL_PULSE_P99_MAX_NS 1000000000ULL
/* Intervals of the writes' P99 at one depth a hold is set by (their
 * highest): at 1 s intervals, flashsim's writes at one depth covered 13.6
 * to 27.3 ms in 7 s. Longer holds a depth's latency past a change of the
 * workload's. */
#define CTL_SCATTER_INTERVALS 8

/* Where the writes' rate is flat in the depth, their latency is too
 * (Little's law), and its P99 scatters around it (flashsim over FUSE:
 * 13-16 ms a second, some seconds 20 ms; Kyber's 100 ms windows, with a
 * tenth of the samples, scatter more): a target inside that scatter grows
 * the writes on every window over it and never cuts them while reads are
 * fine, so their depth creeps up with nothing gained until reads miss
 * (seen on flashsim: depth 15 -> 27 in 20 s). A level at which Kyber grew
 * writes already at their free-running rate is left for the next one up
 * and not stepped down onto until the mark has halved to nothing: 4 -> 2
 * -> 1 -> 0 is 2-3 half-lives (2-3 minutes at 1 s intervals); a device
 * noisy then is likely noisy still. */
#define CTL_DRIFT_WEIGHT 4

/* ---- What each level did: met/missed intervals, fading */

/* Intervals after which the counts halve: a level found bad is tried
 * again about a minute later (a disturbance passes, a workload drifts),
 * which keeps probing at a few target writes a minute at most. */
#define CTL_EVIDENCE_HALF_LIFE 60
/* A level is bad while it missed the goal in more than one of this many
 * of its intervals: the goal must hold in 95% of them. A level that met it
 * for long keeps its standing through a short disturbance's misses. */
#define CTL_BAD_MISS_RATIO 10
/* A near miss (under CTL_CLEAR_MISS) at a level that met the goal in 19
 * seconds per miss (95%), and in 10 at least, is the noise of a level
 * that keeps the goal: held, not cut. */
#define CTL_RARE_MISS_RATIO 19
#define CTL_RARE_MISS_MET_MIN 10

/* Settled seconds within the goal at the same targets that pay for one
 * far miss held a second as a possible spike (ctl-spike.c): at most one
 * second in 6 misses that way, and only while the others meet the goal.
 * Long enough that a level at its edge, or one the writes are still
 * settling at, has missed within it; short enough that hiccups a few
 * times a minute (a busy host) find one. */
#define CTL_SPIKE_STEADY 5
/* Holds the bank keeps at most: hiccups come in bursts (two a few seconds
 * apart on the hiccup model, as on a busy host), and the second one, cut,
 * costs a cut and a return: 13-15 target changes a minute on hiccup
 * R4+W64 (matrix seed 43) where two banked holds give 11-12. More would
 * let a level that misses now and then pass for one that keeps the goal
 * for longer. */
#define CTL_SPIKE_BANKED 2

/* ---- A goal out of reach (ctl-aim.c) */

/* Settled seconds at the most throttling whose median P99 the law aims
 * at: the median of five passes over one noisy second either way, and
 * five come within the 5 s a change has to be followed in. The aim is
 * set from MIN of them on: the two seconds that give the verdict, so
 * that it is in force once the law engages again (optane R4+W64: O-8
 * takes throttling off a second after the verdict, and the law engages
 * again 4 s later, against the aim, not the goal). */
#define CTL_AIM_SECONDS 5
#define CTL_AIM_MIN_SECONDS 2
/* x that median: the aim. Reads "as good" as the best reachable are
 * within 5% of it, about one histogram bucket (3.5%) and a little noise. */
#define CTL_AIM_MARGIN 1.05
/* Seconds in a row clearly within the goal (under its risk line) that
 * end a verdict of infeasible: one such second at the edge of reach
 * says nothing (loop over /dev/shm: single seconds at 43-56 us under a
 * 57 us goal between misses); three are longer than the metric's window. */
#define CTL_AIM_CLEAR 3

/* ---- The host: intervals its hypervisor disturbed (ctl-host.c) */

/* Steal over this share of the CPUs' time marks an interval disturbed:
 * the tests' and benchmarks' host monitor (tests/lib/hoststeal.py) draws
 * the line there too. Quiet periods on these VMs stay under 1%; a
 * disturbance runs at 5-55% (testbed.md), and it slows every request's
 * host path at any write depth, so a miss then says little about the
 * level. */
#define CTL_STEAL_DISTURBED 0.05
/* ... and at this many times the host's usual steal: where the VM's own
 * disk I/O shows as steal (a loop device over its root file system), a
 * steady share is the device's normal, not a disturbance. */
#define CTL_STEAL_OVER_USUAL 2.0
/* Intervals over which the usual steal is learned (the half-life of its
 * moving average): as long as a level's evidence lasts, so that a
 * disturbance of 10-30 s does not become the usual. */
#define CTL_STEAL_USUAL_HALF_LIFE 60
/* Undisturbed intervals after which a disturbance has passed and the
 * misses it caused are dropped: one calm second may be a gap in it
 * (steal comes in bursts). */
#define CTL_HOST_CALM_INTERVALS 2

/* ---- Targets */

/* Open point: read target x the read device P99 (at least Kyber's
 * default), write target x the write device P99, or the writes' P99 /
 * CTL_OPEN_GROW if lower (writes queued in Kyber, i.e. throttled: bucket
 * 4-5, grown by 5/4-6/4 each evaluation), never under CTL_WRITE_FLOOR x
 * their device P90. Nothing congests Kyber; throttled writes grow back. */
#define CTL_OPEN_READ 8.0
#define CTL_OPEN_WRITE 2.0
#define CTL_OPEN_GROW 1.25
/* Hysteresis: an existing open point is kept while its targets stay
 * above these multiples. */
#define CTL_OPEN_READ_KEEP 4.0
#define CTL_OPEN_WRITE_KEEP 1.25
/* While protecting, reads count as hurt once their device P90 is above
 * the P90 that goes with meeting the goal (the smoothed shape x goal) x
 * a read scale: Kyber cuts writes while reads are at risk and stops once
 * they are not. The scale steps down (x0.7, to 0.1) when the goal is
 * missed with the P90 under the target (a heavy tail), and back up as
 * writes get more. */
#define CTL_READ_SCALE_STEP 0.7
#define CTL_READ_SCALE_MIN 0.1
/* Shape (read device P90 / metric) before any is measured, its smoothing
 * weight per interval, and the metrics (x goal) it is learned at: near the
 * goal, where the read target acts. */
#define CTL_SHAPE_DEFAULT 0.75
#define CTL_SHAPE_WEIGHT 0.2
#define CTL_SHAPE_NEAR_LO 0.3
#define CTL_SHAPE_NEAR_HI 1.5
/* Never write a write target under this x the write device P90 while
 * reads count as fine: writes would congest Kyber and cut the reads (the
 * harmful pair). */
#define CTL_WRITE_FLOOR 1.5
/* A target that moved by less than this factor is not rewritten: Kyber's
 * buckets are a quarter of a target wide. */
#define CTL_REWRITE_READ 1.4
#define CTL_REWRITE_WRITE 1.1
/* A read target under this x the reads' device P90 counts them as hurt
 * at every Kyber decision through a second's noise of that P90 (a
 * bucket, a quarter of the target), and lets them grow to full depth:
 * two such targets are the same to Kyber, and the one in force stays. */
#define CTL_READ_HURT_MARGIN 0.75

/* ---- Workload awareness */

/* Writes with at most this many requests outstanding (Little's law):
 * Kyber always lets one through, there is nothing to throttle (G-1). */
#define CTL_G1_OUTSTANDING 1.5
/* Writes below this rate are "no writes" (IOPS). */
#define CTL_WRITES_ACTIVE_IOPS 10
/* Writes start / stop (hysteresis, IOPS), reads outstanding change by
 * this factor: a new workload regime. */
#define CTL_WRITES_START_IOPS 50
#define CTL_WRITES_STOP_IOPS 5
#define CTL_SHIFT_FACTOR 2.0
/* The writes' outstanding count in the block layer moves with the
 * throttling itself (requests held in Kyber count, those in the submitter
 * or a loop worker do not): up to 3.3x on a loop device over a file
 * (56-183 for W256). Only a larger change is a different writer. */
#define CTL_WRITE_SHIFT_FACTOR 6.0

/*
 * O-8: throttling that cut the writes to at most CTL_O8_CUT of their rate
 * and left the reads within CTL_O8_GAIN of where they were, CTL_O8_STRIKES
 * settled intervals running, shows no read/write interference: throttling
 * only costs. Stop for CTL_O8_HOLDOFF intervals, or until reads get twice
 * as bad with writes free.
 */
#define CTL_O8_CUT 0.7
#define CTL_O8_GAIN 0.9
#define CTL_O8_STRIKES 2
#define CTL_O8_HOLDOFF 60
/* Settled intervals of throttling after which a probe that has not cut
 * the writes for real ends without a verdict: the law cuts by as much as
 * reads miss, so a probe that leads anywhere does so within a few
 * seconds (the optane cells: 2-4), and a baseline older than this says
 * little of the device now (a GC storm 30 s later slowed the writes by
 * itself, and O-8 took the storm's reads for throttling's). */
#define CTL_O8_PROBE_INTERVALS 10
/* Intervals after throttling stops before the reads count against O-8:
 * while the writes grow back, reads see a burst. */
#define CTL_O8_SETTLE 2

/*
 * The scheduler choice (ctl-sched.c, scheduler=auto). Switching the
 * scheduler freezes the queue and drains it, and Kyber starts over from
 * its default targets, so a switch must be worth keeping.
 */
/* Settled intervals in a row with the goal missed while writes run,
 * before Kyber is started: one noisy second does not switch, and the
 * switch still comes within the 5 s a goal has to be met in. */
#define SCHED_MISSES_TO_KYBER 2
/* x goal: a miss this far is no noisy second (one-second P99s vary by 2x
 * on these hosts, tests/integration/test_sched_choice.py): one interval
 * of it with writes running starts Kyber. */
#define SCHED_FAR_MISS 3.0
/* Intervals in a row in which Kyber bought nothing (writes not throttled,
 * or none, and the goal held with margin) before it is left: longer than
 * a workload that alternates every 10 s stays in one phase. */
#define SCHED_IDLE_TO_LEAVE 20
/* x goal: "with margin". On Kyber with writes free the reads see what they
 * would see on the original scheduler, give or take the noise of a
 * one-second percentile (+-10%, CTL_NOISE_HI); this leaves twice that. */
#define SCHED_LEAVE_RISK 0.8
/* Intervals a scheduler is kept after a switch at least: at most four
 * switches a minute. */
#define SCHED_HOLD_MIN 15
/* A switch back within this many intervals of the last one is a flap:
 * the hold doubles, up to SCHED_HOLD_MAX; a stay this long resets it. */
#define SCHED_FLAP_WINDOW 60
#define SCHED_HOLD_MAX 600
/* The sampling windows kept of a scheduler say what the block layer costs
 * per I/O once they hold this many block-layer samples (+-10% at one
 * sigma: a Poisson count) and this many I/Os; a window of a device barely
 * in use (fewer I/Os than the window minimum) says nothing of its
 * scheduler and is not kept. */
#define SCHED_COST_MIN_SAMPLES 100
#define SCHED_COST_MIN_IOS 1000
#define SCHED_COST_MIN_WINDOW_IOS 100
/* Leaving Kyber is worth it when the CPU time it costs over the least
 * stay on the original (extra ns per I/O x I/Os x SCHED_HOLD_MIN
 * intervals) exceeds this many switch stalls: the one out and the one
 * back if the need comes again. */
#define SCHED_LEAVE_STALLS 2
/* Share of the tuned devices' I/Os a device must have done in a window to
 * be charged with its samples, which are the whole machine's. */
#define SCHED_COST_DOMINANT 0.9
