/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "ctl-internal.h"
#include "ctl-sched.h"
#include "ctl-tunables.h"
#include "macro.h"

const char *sched_run_to_string(enum sched_run r)
{
	return r == SCHED_RUN_KYBER ? "kyber" : "original";
}

struct sched_input sched_input_from(const struct ctl_decision *d, const struct ctl_sample *s)
{
	return (struct sched_input) {
		.goal_known = d->goal_known, .goal_met = d->goal_met, .metric_ns = d->metric_ns,
		.writes = writes_active(s),
		.writes_free = s->write.kyber_depth == 0 || s->write.kyber_depth >= KYBER_WRITE_DEPTH_CAP,
	};
}

void sched_choice_init(struct sched_choice *c, const struct goal *g, bool original_is_kyber,
		       bool may_switch)
{
	*c = (struct sched_choice) {
		.automatic = g->scheduler == GOAL_SCHEDULER_AUTO && g->mode != GOAL_MODE_ADVISE &&
			     !original_is_kyber && may_switch,
		.has_read = g->has_read,
		.goal_ns = g->read_ns,
	};	/* hold 0: the first switch need not wait */
	if (!c->automatic) {
		c->run = SCHED_RUN_KYBER;
		snprintf(c->reason, sizeof(c->reason), "%s",
			 original_is_kyber ? "Kyber was the device's scheduler" :
			 g->scheduler == GOAL_SCHEDULER_KYBER ? "scheduler=kyber" :
			 g->mode == GOAL_MODE_ADVISE ? "mode=advise" : "switching schedulers is disabled");
		return;
	}
	c->run = SCHED_RUN_ORIGINAL;
	snprintf(c->reason, sizeof(c->reason), "%s",
		 g->has_read ? "the goal has not been missed here" : "no read goal: Kyber would only cost");
}

/* On the original: has the goal been missed while writes ran, long enough? */
static enum sched_action step_original(struct sched_choice *c, const struct sched_input *in)
{
	if (!c->has_read)
		return SCHED_STAY;
	if (!in->goal_known || in->goal_met) {
		c->misses = 0;
		return SCHED_STAY;
	}
	if (!in->writes) {
		c->misses = 0;
		snprintf(c->reason, sizeof(c->reason), "goal missed with no writes running: "
			 "Kyber cannot help reads alone");
		return SCHED_STAY;
	}
	c->misses++;
	if (c->misses < SCHED_MISSES_TO_KYBER || c->since_switch < c->hold)
		return SCHED_STAY;
	snprintf(c->reason, sizeof(c->reason), "goal missed %u intervals in a row with writes running",
		 c->misses);
	return SCHED_TO_KYBER;
}

/* On Kyber: has it bought nothing (writes free or none, reads well within the goal) long enough? */
static enum sched_action step_kyber(struct sched_choice *c, const struct sched_input *in)
{
	bool idle = (!in->writes || in->writes_free) &&
		    (!c->has_read || (in->goal_known && in->goal_met &&
				      (double)in->metric_ns <= SCHED_LEAVE_RISK * (double)c->goal_ns));

	c->idle = idle ? c->idle + 1 : 0;
	if (c->idle < SCHED_IDLE_TO_LEAVE || c->since_switch < c->hold)
		return SCHED_STAY;
	snprintf(c->reason, sizeof(c->reason), "Kyber bought nothing for %u intervals (%s)", c->idle,
		 in->writes ? "writes not throttled, reads within the goal" : "no writes");
	return SCHED_TO_ORIGINAL;
}

enum sched_action sched_choice_step(struct sched_choice *c, const struct sched_input *in)
{
	if (!c->automatic)
		return SCHED_STAY;
	c->since_switch++;
	return c->run == SCHED_RUN_ORIGINAL ? step_original(c, in) : step_kyber(c, in);
}

void sched_choice_switched(struct sched_choice *c, enum sched_run now)
{
	/* Back within the flap window: the evidence did not last, wait longer next time. */
	if (c->switches && c->since_switch < SCHED_FLAP_WINDOW)
		c->hold = MIN(2 * c->hold, (unsigned)SCHED_HOLD_MAX);
	else
		c->hold = SCHED_HOLD_MIN;
	c->run = now;
	c->since_switch = c->misses = c->idle = 0;
	c->switches++;
}
