/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which scheduler a device runs under scheduler=auto: every scheduler
 * costs CPU per I/O against none, and Kyber buys something only where
 * writes hurt reads. So the device stays on its original scheduler while
 * the read goal holds there (or when there is no read goal), moves to
 * Kyber when the goal is missed while writes run, and goes back once
 * Kyber has bought nothing for a while and what it costs outweighs what
 * leaving costs. Hysteresis and a hold that grows on flapping bound the
 * switches. Pure: the device (device-sched.c) does the switching and feeds
 * the verdicts and the measured costs back.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "controller.h"
#include "goal.h"

enum sched_run {
	SCHED_RUN_ORIGINAL,	/* the scheduler the device had (none, mq-deadline, ...) */
	SCHED_RUN_KYBER,
};

enum sched_action {
	SCHED_STAY,
	SCHED_TO_KYBER,
	SCHED_TO_ORIGINAL,
};

/*
 * The block layer's CPU time per I/O under each scheduler, as the sampler
 * measured it on this device (cost-probe.c): the last SCHED_COST_KEEP
 * windows of each, pooled, so that a device with few I/Os a second still
 * gathers enough samples to say.
 */
#define SCHED_COST_KEEP 5
struct sched_cost_book {
	uint64_t block_ns[2][SCHED_COST_KEEP];	/* per enum sched_run */
	uint64_t samples[2][SCHED_COST_KEEP];
	uint64_t ios[2][SCHED_COST_KEEP];
	unsigned n[2], next[2];
};

/* One settled interval, as the controller judged it. */
struct sched_input {
	bool goal_known, goal_met;	/* the read goal's verdict (no read goal: both false) */
	uint64_t metric_ns;		/* the goal's percentile of read latency */
	bool writes;			/* writes are running */
	bool writes_free;		/* on Kyber: their depth is at its cap (not throttled) */
	uint64_t ios;			/* I/Os completed in the interval */
	uint64_t stall_ns;		/* how long the last switch froze the queue */
	const struct sched_cost_book *cost;	/* NULL: costs not measured */
};

struct sched_choice {
	bool automatic;			/* scheduler=auto and a mode that may switch */
	bool has_read;
	uint64_t goal_ns;
	enum sched_run run;
	unsigned since_switch;		/* intervals on the current scheduler */
	unsigned misses;		/* on the original: intervals in a row missed with writes */
	unsigned idle;			/* on Kyber: intervals in a row it bought nothing */
	unsigned hold;			/* intervals a scheduler is kept after a switch */
	unsigned switches;
	char reason[160];		/* why the device runs what it runs */
};

/*
 * Start: Kyber under scheduler=kyber, in mode=advise (which touches
 * nothing), when the original scheduler is Kyber (the operator chose it)
 * and when the daemon may not switch schedulers (SwitchScheduler=no);
 * else the original.
 */
void sched_choice_init(struct sched_choice *c, const struct goal *g, bool original_is_kyber,
		       bool may_switch);
/* Under scheduler=auto, start on Kyber at once (evidence from elsewhere:
 * a per-model profile); it is left as after any switch. */
void sched_choice_start_on_kyber(struct sched_choice *c, const char *why);
/* The input of one interval: the controller's verdict and the writes it saw. */
struct sched_input sched_input_from(const struct ctl_decision *d, const struct ctl_sample *s);
/* One settled interval: stay, or switch (then call sched_choice_switched()). */
enum sched_action sched_choice_step(struct sched_choice *c, const struct sched_input *in);
/* The switch was made. */
void sched_choice_switched(struct sched_choice *c, enum sched_run now);
const char *sched_run_to_string(enum sched_run r);

/* One sampling window under r: block_samples samples of period_ns each
 * in the block layer while ios I/Os were done. Windows of a device barely
 * in use (under SCHED_COST_MIN_WINDOW_IOS) say nothing and are dropped. */
void sched_cost_add(struct sched_cost_book *b, enum sched_run r, uint64_t block_samples, uint64_t period_ns,
		    uint64_t ios);
/* CPU ns per I/O under r over the windows kept; false while they hold too
 * few samples or I/Os to say (SCHED_COST_MIN_SAMPLES, SCHED_COST_MIN_IOS). */
bool sched_cost_get(const struct sched_cost_book *b, enum sched_run r, uint64_t *ret_ns);
