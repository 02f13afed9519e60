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
		.writes_free = writes_free(s),
		.ios = s->read.completed + s->write.completed,
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

void sched_choice_start_on_kyber(struct sched_choice *c, const char *why)
{
	c->run = SCHED_RUN_KYBER;
	snprintf(c->reason, sizeof(c->reason), "%s", why);
}

/* On the original: has the goal been missed while writes ran, long enough? */
static enum sched_action step_original(struct sched_choice *c, const struct sched_input *in)
{
	bool far;

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
	far = (double)in->metric_ns >= SCHED_FAR_MISS * (double)c->goal_ns;
	if ((c->misses < SCHED_MISSES_TO_KYBER && !far) || c->since_switch < c->hold)
		return SCHED_STAY;
	if (c->misses < SCHED_MISSES_TO_KYBER)
		snprintf(c->reason, sizeof(c->reason), "goal missed by %.1fx with writes running",
			 (double)in->metric_ns / (double)c->goal_ns);
	else
		snprintf(c->reason, sizeof(c->reason), "goal missed %u intervals in a row with writes running",
			 c->misses);
	return SCHED_TO_KYBER;
}

/*
 * Kyber has bought nothing; is leaving worth the switches? Where both
 * costs were measured, the CPU time Kyber costs over the least stay on
 * the original must exceed SCHED_LEAVE_STALLS switch stalls; else the
 * device stays (and says why). Unmeasured: leave, Kyber's cost is known
 * to be above none's in general.
 */
static bool worth_leaving(const struct sched_input *in, char *why, size_t n)
{
	uint64_t kyber_ns, original_ns;
	double extra_ns, saved_ns, price_ns;

	*why = 0;
	if (!in->cost || !sched_cost_get(in->cost, SCHED_RUN_KYBER, &kyber_ns) ||
	    !sched_cost_get(in->cost, SCHED_RUN_ORIGINAL, &original_ns))
		return true;
	extra_ns = (double)kyber_ns - (double)original_ns;
	saved_ns = extra_ns * (double)in->ios * SCHED_HOLD_MIN;
	price_ns = SCHED_LEAVE_STALLS * (double)in->stall_ns;
	snprintf(why, n, "CPU per I/O %.2f us on Kyber, %.2f us on the original", kyber_ns / 1e3,
		 original_ns / 1e3);
	return saved_ns > price_ns;
}

/* On Kyber: has it bought nothing (writes free or none, reads well within
 * the goal) long enough, and does leaving pay? */
static enum sched_action step_kyber(struct sched_choice *c, const struct sched_input *in)
{
	bool idle = (!in->writes || in->writes_free) &&
		    (!c->has_read || (in->goal_known && in->goal_met &&
				      (double)in->metric_ns <= SCHED_LEAVE_RISK * (double)c->goal_ns));
	char cost[64];

	c->idle = idle ? c->idle + 1 : 0;
	if (c->idle < SCHED_IDLE_TO_LEAVE || c->since_switch < c->hold)
		return SCHED_STAY;
	if (!worth_leaving(in, cost, sizeof(cost))) {
		snprintf(c->reason, sizeof(c->reason), "Kyber bought nothing, but leaving would not "
			 "repay %d switch stalls (%s)", SCHED_LEAVE_STALLS, cost);
		return SCHED_STAY;
	}
	snprintf(c->reason, sizeof(c->reason), "Kyber bought nothing for %u intervals (%s)%s%s", c->idle,
		 in->writes ? "writes not throttled, reads within the goal" : "no writes",
		 *cost ? "; " : "", cost);
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

void sched_cost_add(struct sched_cost_book *b, enum sched_run r, uint64_t block_samples, uint64_t period_ns,
		    uint64_t ios)
{
	unsigned k = b->next[r];

	if (ios < SCHED_COST_MIN_WINDOW_IOS)
		return;
	b->block_ns[r][k] = block_samples * period_ns;
	b->samples[r][k] = block_samples;
	b->ios[r][k] = ios;
	b->next[r] = (k + 1) % SCHED_COST_KEEP;
	b->n[r] = MIN(b->n[r] + 1, (unsigned)SCHED_COST_KEEP);
}

bool sched_cost_get(const struct sched_cost_book *b, enum sched_run r, uint64_t *ret_ns)
{
	uint64_t ns = 0, samples = 0, ios = 0;

	for (unsigned k = 0; k < b->n[r]; k++) {
		ns += b->block_ns[r][k];
		samples += b->samples[r][k];
		ios += b->ios[r][k];
	}
	if (samples < SCHED_COST_MIN_SAMPLES || ios < SCHED_COST_MIN_IOS)
		return false;
	*ret_ns = (ns + ios / 2) / ios;
	return true;
}
