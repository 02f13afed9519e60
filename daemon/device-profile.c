/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A device and the per-model profiles (profile.h, docs/profiles.md): it
 * learns the point where its goal held with the writes throttled, exports
 * it for other machines, and starts Kyber from such a point where one was
 * given for its model, firmware and goal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device-internal.h"
#include "error.h"
#include "log.h"
#include "macro.h"

/* Settled intervals in a row with the goal met while the writes are
 * throttled before the targets count as learned: past the noise of a few
 * lucky seconds (the read metric's window is CTL_WINDOW intervals). */
#define PROFILE_LEARN_INTERVALS 10

const struct profile *device_profile(const struct device *d)
{
	if (!d->env.profiles || !d->model[0] || !d->goal.has_read || d->goal.mode != GOAL_MODE_LATENCY)
		return NULL;
	return profiles_match(d->env.profiles, d->model, d->firmware, &d->goal);
}

void device_profile_seed(struct device *d)
{
	const struct profile *p = device_profile(d);
	char tg[48];

	if (!p)
		return;
	controller_seed(d->ctl, p->targets.write_ns, (double)p->write_free_p99_ns, p->write_free_iops);
	if (device_write_targets(d, &p->targets) < 0)
		return;
	device_format_targets(tg, sizeof(tg), &p->targets);
	log_dev_info(d->dev.name, "starting from the profile of %s firmware %s (%s:%s): targets %s", d->model,
		     d->firmware[0] ? d->firmware : "-", p->model, p->firmware, tg);
}

void device_profile_learn(struct device *d)
{
	bool met = d->sched.run == SCHED_RUN_KYBER && !d->paused && !d->overridden && d->ctl->protecting &&
		   d->last.goal_known && d->last.goal_met && d->last.state == CTL_TRACKING;

	d->met_streak = met ? d->met_streak + 1 : 0;
	if (d->met_streak < PROFILE_LEARN_INTERVALS)
		return;
	/* The latest point that held: the workload of the moment. */
	d->learned = true;
	d->learned_point = (struct profile) {
		.goal = d->goal,
		.targets = d->written,
		.write_free_p99_ns = (uint64_t)controller_write_ref_ns(d->ctl),
		.write_free_iops = controller_write_ref_iops(d->ctl),
	};
	snprintf(d->learned_point.model, sizeof(d->learned_point.model), "%s", d->model);
	snprintf(d->learned_point.firmware, sizeof(d->learned_point.firmware), "%s", d->firmware);
}

int device_export_profile(const struct device *d, char **ret, sd_bus_error *error)
{
	_cleanup_free_ char *text = NULL;
	char comment[320];
	size_t len = 0;
	FILE *f;
	int r;

	if (!d->model[0])
		return error_setf(error, -ENODATA, "%s has no model in sysfs: a profile could match nothing",
				  d->dev.name);
	if (!d->learned)
		return error_setf(error, -ENODATA, "Nothing learned on %s yet: a profile is taken once its goal "
				  "held for %u intervals in a row with the writes throttled", d->dev.name,
				  PROFILE_LEARN_INTERVALS);
	f = open_memstream(&text, &len);
	if (!f)
		return error_setf(error, -ENOMEM, "Out of memory");
	snprintf(comment, sizeof(comment), "Learned on %s (%s): the goal held for %u intervals in a row here",
		 d->dev.name, d->id, PROFILE_LEARN_INTERVALS);
	r = profile_format(f, &d->learned_point, comment);
	if (fclose(f) != 0 || r < 0)
		return error_setf(error, -ENOMEM, "Out of memory");
	*ret = TAKE_PTR(text);
	return 0;
}
