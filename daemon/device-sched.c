/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A device's scheduler under scheduler=auto: ctl-sched.c decides, this
 * file switches. A switch freezes the queue and drains what is in flight,
 * so it is timed and logged with its evidence; a new Kyber instance starts
 * from its default targets, which become what the controller moves from.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

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
	if (to == SCHED_RUN_KYBER)
		/* A new Kyber instance: its default targets, depths at their caps. */
		(void)kyber_sysfs_read_targets(d->env.o->sysroot, d->dev.name, &d->written);
	else
		controller_relearn(d->ctl);	/* what the law learned was about Kyber */
	log_dev_event(LOG_LEVEL_INFO, d->dev.name, LOG_MESSAGE_SCHEDULER_CHANGED,
		      "scheduler %s -> %s (the switch took %s): %s%s%s", from, name,
		      format_duration(took, sizeof(took), d->switch_stall_ns), d->sched.reason,
		      evidence ? "; " : "", evidence ?: "");
	device_arm_settle(d);
	return 0;
}

int device_sched_adopt(struct device *d, sd_bus_error *error)
{
	sched_choice_init(&d->sched, &d->goal, d->original.was_kyber, d->env.o->switch_scheduler);
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

bool device_sched_step(struct device *d, const struct ctl_sample *s)
{
	struct sched_input in = sched_input_from(&d->last, s);
	enum sched_action a = sched_choice_step(&d->sched, &in);
	char reason[256];

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
	return true;
}
