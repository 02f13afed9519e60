/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a previous instance left: the goals set at run time it kept in the
 * state file (resumed before the configuration's goals, which stand behind
 * them), and the originals of devices it tuned when it died (put back,
 * unless someone changed the device since).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "error.h"
#include "log.h"
#include "manager-internal.h"

/* A device (in /sys/class/block) whose stable id is id; false if none. */
static bool find_by_id(const struct manager *m, const char *id, const char *hint, struct blockdev *out)
{
	char path[PATH_MAX], other[160];
	struct dirent *de;
	DIR *dir;
	bool found = false;

	if (hint && blockdev_resolve(m->o.sysroot, hint, out, NULL) == 0) {
		blockdev_stable_id(m->o.sysroot, out, other, sizeof(other));
		if (strcmp(other, id) == 0)
			return true;
	}
	snprintf(path, sizeof(path), "%s/class/block", m->o.sysroot);
	dir = opendir(path);
	if (!dir)
		return false;
	while (!found && (de = readdir(dir))) {
		if (de->d_name[0] == '.' || blockdev_resolve(m->o.sysroot, de->d_name, out, NULL) < 0)
			continue;
		blockdev_stable_id(m->o.sysroot, out, other, sizeof(other));
		found = strcmp(other, id) == 0;
	}
	closedir(dir);
	return found;
}

void manager_resume_goals(struct manager *m)
{
	struct blockdev bd;

	for (size_t i = 0; i < m->state.n; i++) {
		const struct state_device *sd = &m->state.devs[i];
		_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
		int r;

		if (!sd->goal || manager_find(m, sd->name))
			continue;
		/* A goal set for a name rather than a disk (it was not here
		 * then): applied below, with the other goals waiting. */
		if (strncmp(sd->id, "name:", 5) == 0 || !find_by_id(m, sd->id, sd->name, &bd)) {
			if (strncmp(sd->id, "name:", 5) != 0)
				log_notice("Device %s (%s) with a goal set at run time is not here; its goal "
					   "waits for it", sd->name ? sd->name : "?", sd->id);
			if (manager_wait_for(m, sd->id, sd->name ? sd->name : sd->id, sd->goal,
					     GOAL_SOURCE_RUNTIME) < 0)
				log_warning("Cannot keep the goal of %s waiting: out of memory or too many",
					    sd->name ? sd->name : sd->id);
			continue;
		}
		r = manager_set_goal_from(m, bd.name, sd->goal, GOAL_SOURCE_RUNTIME, &error);
		if (r < 0)
			log_dev_warning(bd.name, "cannot resume its goal %s: %s", sd->goal,
					error_message(&error, r));
		else if (device_overridden(manager_find(m, bd.name)))
			log_dev_info(bd.name, "kept the goal set at run time, %s, not tuning while overridden",
				     sd->goal);
		else
			log_dev_info(bd.name, "resumed the goal set at run time: %s", sd->goal);
	}
	manager_apply_waiting(m);
}

void manager_restore_leftovers(struct manager *m)
{
	struct blockdev bd;

	manager_restore_cgroup_leftovers(m);
	/* Originals left by an instance that did not exit cleanly. */
	for (size_t i = 0; i < m->originals.n;) {
		struct original *e = &m->originals.v[i];
		struct kyber_saved saved = { .was_kyber = e->was_kyber,
					     .targets = { e->read_target_ns, e->write_target_ns } };
		bool tuned = false;
		char why[160];

		for (size_t j = 0; j < m->n_devs; j++)
			tuned |= strcmp(device_id(m->devs[j]), e->id) == 0;
		if (tuned) {
			i++;
			continue;
		}
		snprintf(saved.scheduler, sizeof(saved.scheduler), "%s", e->scheduler);
		if (!find_by_id(m, e->id, e->name, &bd))
			log_warning("Device %s (%s) tuned by a previous instance is not here: nothing to restore",
				    e->name ? e->name : "?", e->id);
		else if (original_changed(m->o.sysroot, bd.name, e, why, sizeof(why)))
			/* What is there now stays. */
			log_dev_notice(bd.name, "tuned by a previous instance, changed by someone else since "
				       "(%s): leaving it as it is", why);
		else if (kyber_sysfs_restore(m->o.sysroot, bd.name, &saved) == 0)
			log_dev_event(LOG_LEVEL_INFO, bd.name, LOG_MESSAGE_RESTORED,
				      "restored scheduler %s left tuned by a previous instance",
				 e->scheduler);
		else
			log_dev_warning(bd.name, "tuned by a previous instance: could not restore it");
		originals_remove(&m->originals, e->id);	/* moves the last entry here */
	}
	manager_save_originals(m);
}

