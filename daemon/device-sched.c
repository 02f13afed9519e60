/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A device's scheduler under scheduler=auto: ctl-sched.c decides, this
 * file switches. A switch freezes the queue and drains what is in flight,
 * so it is timed and logged with its evidence; a new Kyber instance starts
 * from its default targets, which become what the controller moves from.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "cost-probe.h"
#include "ctl-tunables.h"
#include "device-internal.h"
#include "error.h"
#include "log.h"
#include "parse-util.h"
#include "time-util.h"

const char *device_sched_expected(const struct device *d)
{
	return d->sched.run == SCHED_RUN_KYBER ? "kyber" : d->original.scheduler;
}

static int switch_to(struct device *d, enum sched_run to, const char *evidence, sd_bus_error *error)
{
	const char *name = to == SCHED_RUN_KYBER ? "kyber" : d->original.scheduler;
	char from[SCHED_NAME_MAX], took[DURATION_BUF_MAX];
	uint64_t start;
	int r;

	memcpy(from, d->scheduler, sizeof(from));
	start = now_ns(CLOCK_MONOTONIC);
	r = kyber_sysfs_set_scheduler(d->env.o->sysroot, d->dev.name, name);
	d->switch_stall_ns = now_ns(CLOCK_MONOTONIC) - start;
	device_refresh_scheduler(d);
	if (r < 0) {
		log_dev_warning_errno(d->dev.name, r, "failed to switch to %s: %m", name);
		return error_setf(error, r, "Failed to switch %s to %s: %s", d->dev.name, name, strerror(-r));
	}
	if (d->sched.automatic)
		sched_choice_switched(&d->sched, to);
	else
		d->sched.run = to;
	if (to == SCHED_RUN_KYBER) {
		/* A new Kyber instance: its default targets, depths at their caps. */
		(void)kyber_sysfs_read_targets(d->env.o->sysroot, d->dev.name, &d->written);
		device_profile_seed(d);
	} else
		controller_relearn(d->ctl);	/* what the law learned was about Kyber */
	log_dev_event(LOG_LEVEL_INFO, d->dev.name, LOG_MESSAGE_SCHEDULER_CHANGED,
		      "scheduler %s -> %s (the switch took %s): %s%s%s", from, name,
		      format_duration(took, sizeof(took), d->switch_stall_ns), d->sched.reason,
		      evidence ? "; " : "", evidence ?: "");
	device_arm_settle(d);
	return 0;
}

void device_sched_choose(struct device *d)
{
	sched_choice_init(&d->sched, &d->goal, d->original.was_kyber, d->env.o->switch_scheduler);
	/* Disks of this model needed Kyber for this goal elsewhere: no need
	 * to miss it here first. */
	if (d->sched.automatic && !d->overridden && device_profile(d))
		sched_choice_start_on_kyber(&d->sched, "a profile of this model says this goal needs Kyber");
}

int device_sched_adopt(struct device *d, sd_bus_error *error)
{
	device_sched_choose(d);
	device_refresh_scheduler(d);
	/* Already on Kyber: under scheduler=auto it stays until it has bought
	 * nothing for a while, as after any switch. */
	if (strcmp(d->scheduler, "kyber") == 0) {
		d->sched.run = SCHED_RUN_KYBER;
		return 0;
	}
	if (d->sched.run == SCHED_RUN_ORIGINAL)
		return 0;
	/* Kyber is wanted but nothing may switch (mode=advise touches
	 * nothing, SwitchScheduler=no): the device stays where it is. */
	if (!d->env.o->switch_scheduler || d->goal.mode == GOAL_MODE_ADVISE) {
		d->sched.run = SCHED_RUN_ORIGINAL;
		return 0;
	}
	return switch_to(d, SCHED_RUN_KYBER, NULL, error);
}

/*
 * Kyber came because reads missed with writes running: protect them from
 * its first interval, with targets from the interval that showed the need,
 * rather than spend that interval at Kyber's defaults (which judge reads
 * against 2 ms whatever the goal, and are then judged on a queue drained
 * by the switch).
 */
static void engage_at_switch(struct device *d, const struct ctl_sample *s)
{
	struct ctl_decision dec;

	if (controller_engage(d->ctl, s, d->last.metric_ns, &dec))
		(void)device_apply(d, s, &dec);
}

bool device_sched_step(struct device *d, const struct ctl_sample *s)
{
	struct sched_input in = sched_input_from(&d->last, s);
	enum sched_action a;
	char reason[256];

	in.stall_ns = d->switch_stall_ns;
	in.cost = &d->cost;
	a = sched_choice_step(&d->sched, &in);

	if (a == SCHED_STAY) {
		if (d->sched.run == SCHED_RUN_ORIGINAL && d->sched.automatic) {
			snprintf(reason, sizeof(reason), "on %s (scheduler=auto): %s", d->original.scheduler,
				 d->sched.reason);
			device_set_state(d, CTL_HOLDING, reason);
		}
		return false;
	}
	if (switch_to(d, a == SCHED_TO_KYBER ? SCHED_RUN_KYBER : SCHED_RUN_ORIGINAL, d->last.reason, NULL) < 0)
		return false;
	device_set_state(d, a == SCHED_TO_KYBER ? CTL_LEARNING : CTL_HOLDING, d->sched.reason);
	if (a == SCHED_TO_KYBER)
		engage_at_switch(d, s);
	return true;
}

uint64_t device_interval_ios(const struct device *d)
{
	return d->interval_ios;
}

bool device_cost_wanted(const struct device *d)
{
	uint64_t ns;

	/* Until the windows kept are full: a device too slow to gather
	 * enough samples in them is then sampled only now and then. */
	return d->interval_ios >= SCHED_COST_MIN_WINDOW_IOS && d->cost.n[d->sched.run] < SCHED_COST_KEEP &&
	       !sched_cost_get(&d->cost, d->sched.run, &ns);
}

void device_cost_window_begin(struct device *d)
{
	/* Someone else's scheduler, or a pause: what runs is not ours to price. */
	d->cost_window = !d->overridden && !d->paused && strcmp(d->scheduler, device_sched_expected(d)) == 0;
	memcpy(d->cost_window_scheduler, d->scheduler, sizeof(d->cost_window_scheduler));
	d->cost_window_switches = d->sched.switches;
}

void device_cost_window_end(struct device *d, const struct cost_window *w, uint64_t all_ios)
{
	uint64_t ns;

	if (!d->cost_window)
		return;
	d->cost_window = false;
	/* The samples are the whole machine's: only a device that did
	 * nearly all the tuned I/O can be charged with them. */
	if (!d->interval_ios || d->sched.switches != d->cost_window_switches ||
	    strcmp(d->scheduler, d->cost_window_scheduler) != 0 ||
	    (double)d->interval_ios < SCHED_COST_DOMINANT * (double)all_ios)
		return;
	sched_cost_add(&d->cost, d->sched.run, w->block, w->period_ns, all_ios);
	if (sched_cost_get(&d->cost, d->sched.run, &ns))
		log_dev_debug(d->dev.name, "block layer on %s: %.2f us of CPU per I/O (this window: %" PRIu64
			      " of %" PRIu64 " samples, %" PRIu64 " I/Os)", d->scheduler, ns / 1e3, w->block,
			      w->samples, all_ios);
}
