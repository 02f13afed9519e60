/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which scheduler a device runs under scheduler=auto: every scheduler
 * costs CPU per I/O against none, and Kyber buys something only where
 * writes hurt reads. So the device stays on its original scheduler while
 * the read goal holds there (or when there is no read goal), moves to
 * Kyber when the goal is missed while writes run, and goes back once
 * Kyber has bought nothing for a while. Hysteresis and a hold that grows
 * on flapping bound the switches. Pure: the device (device-sched.c) does
 * the switching and feeds the verdicts back.
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

/* One settled interval, as the controller judged it. */
struct sched_input {
	bool goal_known, goal_met;	/* the read goal's verdict (no read goal: both false) */
	uint64_t metric_ns;		/* the goal's percentile of read latency */
	bool writes;			/* writes are running */
	bool writes_free;		/* on Kyber: their depth is at its cap (not throttled) */
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
/* The input of one interval: the controller's verdict and the writes it saw. */
struct sched_input sched_input_from(const struct ctl_decision *d, const struct ctl_sample *s);
/* One settled interval: stay, or switch (then call sched_choice_switched()). */
enum sched_action sched_choice_step(struct sched_choice *c, const struct sched_input *in);
/* The switch was made. */
void sched_choice_switched(struct sched_choice *c, enum sched_run now);
const char *sched_run_to_string(enum sched_run r);
