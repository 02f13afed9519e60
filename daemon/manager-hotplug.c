/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Disks that come and go. A goal for a disk that is not here waits for it
 * (struct waiting_goal); a device event (device-events.h) checks the
 * tuned disk of that name at once, instead of at the next interval, and
 * applies the goals waiting for the disk that appeared.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "error.h"
#include "log.h"
#include "manager-internal.h"

/* Goals waiting at once: an authorized caller naming disks that never come
 * must not grow the daemon without end. Far above any real machine's disks. */
#define WAITING_GOALS_MAX 256

static void waiting_remove(struct manager *m, size_t i)
{
	free(m->waiting[i].id);
	free(m->waiting[i].name);
	m->waiting[i] = m->waiting[--m->n_waiting];
}

void manager_free_waiting(struct manager *m)
{
	while (m->n_waiting)
		waiting_remove(m, m->n_waiting - 1);
	free(m->waiting);
	m->waiting = NULL;
}

int manager_wait_for(struct manager *m, const char *id, const char *name, const char *goal,
		     enum goal_source source)
{
	struct waiting_goal *w = NULL, *v;

	for (size_t i = 0; i < m->n_waiting && !w; i++)
		if (m->waiting[i].source == source && strcmp(m->waiting[i].id, id) == 0)
			w = &m->waiting[i];
	if (!w) {
		if (m->n_waiting >= WAITING_GOALS_MAX)
			return -ENOSPC;
		v = realloc(m->waiting, (m->n_waiting + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->waiting = v;
		w = &v[m->n_waiting];
		*w = (struct waiting_goal) { .id = strdup(id), .name = strdup(name), .source = source };
		if (!w->id || !w->name) {
			free(w->id);
			free(w->name);
			return -ENOMEM;
		}
		m->n_waiting++;
	}
	snprintf(w->goal, sizeof(w->goal), "%s", goal);
	return 0;
}

/* Whether w waits under name: the name it was given or last seen under,
 * or that name's /dev path. */
static bool waits_under(const struct waiting_goal *w, const char *name)
{
	if (strncmp(name, "/dev/", 5) == 0 && strcmp(w->name, name + 5) == 0)
		return true;
	return strcmp(w->name, name) == 0 || (strncmp(w->id, "name:", 5) == 0 && strcmp(w->id + 5, name) == 0);
}

const struct waiting_goal *manager_find_waiting(const struct manager *m, const char *name)
{
	for (size_t i = 0; name && i < m->n_waiting; i++)
		if (waits_under(&m->waiting[i], name))
			return &m->waiting[i];
	return NULL;
}

int manager_forget_waiting(struct manager *m, const char *name)
{
	bool found = false, runtime = false;

	/* As for a tuned device: clearing a goal set at run time (or on the
	 * command line) leaves the configured one, which then applies. */
	for (size_t i = 0; i < m->n_waiting; i++)
		runtime |= waits_under(&m->waiting[i], name) && m->waiting[i].source != GOAL_SOURCE_CONFIG;
	for (size_t i = 0; i < m->n_waiting;) {
		struct waiting_goal *w = &m->waiting[i];

		if (!waits_under(w, name) || (runtime && w->source == GOAL_SOURCE_CONFIG)) {
			i++;
			continue;
		}
		log_info("Goal %s waiting for %s cleared", w->goal, w->name);
		if (w->source == GOAL_SOURCE_RUNTIME) {
			state_remove(&m->state, w->id);
			manager_save_state(m);
		}
		waiting_remove(m, i);
		found = true;
	}
	return found ? 0 : -ENODEV;
}

void manager_drop_waiting_config_except(struct manager *m, const char *const *devices, size_t n)
{
	for (size_t i = 0; i < m->n_waiting;) {
		const struct waiting_goal *w = &m->waiting[i];
		bool listed = w->source != GOAL_SOURCE_CONFIG;

		for (size_t j = 0; !listed && j < n; j++)
			listed = strcmp(w->name, devices[j]) == 0;
		if (listed) {
			i++;
			continue;
		}
		log_info("The configured goal %s waiting for %s is no longer in the configuration", w->goal,
			 w->name);
		waiting_remove(m, i);
	}
}

int manager_wait_absent(struct manager *m, const char *device, const struct goal *g, enum goal_source source,
			sd_bus_error *error)
{
	char id[WAITING_DEVICE_MAX + 8], goal[GOAL_TEXT_MAX];
	int r;

	snprintf(id, sizeof(id), "name:%s", device);
	goal_format(g, goal, sizeof(goal));
	r = manager_wait_for(m, id, device, goal, source);
	if (r == -ENOSPC)
		return error_setf(error, r, "%s is not here, and %d goals already wait for disks that are not "
				  "here", device, WAITING_GOALS_MAX);
	if (r < 0)
		return error_setf(error, r, "Out of memory");
	if (source == GOAL_SOURCE_RUNTIME && state_put(&m->state, &(struct state_device) {
				.id = id, .name = (char *)device, .goal = goal }) == 0)
		manager_save_state(m);
	log_info("%s is not here (or has no medium); its goal %s applies when it appears", device, goal);
	return 1;
}

/* Whether the disk called name, whose stable id is stable, is the one id
 * stands for: a "name:" id by resolving its text, any other by equality. */
static bool disk_has_id(const struct manager *m, const char *name, const char *stable, const char *id)
{
	struct blockdev bd;

	if (strncmp(id, "name:", 5) == 0)
		return blockdev_resolve(m->o.sysroot, id + 5, &bd, NULL) == 0 && strcmp(bd.name, name) == 0;
	return strcmp(stable, id) == 0;
}

void manager_device_gone(struct manager *m, size_t i, const char *why)
{
	struct device *d = m->devs[i];
	const char *name = device_name(d);
	char goal[GOAL_TEXT_MAX], by_name[80];
	int r;

	if (device_weights_only(d)) {
		/* No goal of its own to keep; weights set at run time stay in
		 * the state file and apply at the next start. */
		log_dev_notice(name, "%s; no longer sharing it by weight", why);
		manager_remove_device(m, i);
		return;
	}
	/* A configured goal names a disk by what it is called; one set at
	 * run time or on the command line follows the disk itself. */
	snprintf(by_name, sizeof(by_name), "name:%s", name);
	goal_format(device_goal(d), goal, sizeof(goal));
	r = manager_wait_for(m, device_source(d) == GOAL_SOURCE_CONFIG ? by_name : device_id(d), name, goal,
			     device_source(d));
	if (r >= 0 && device_config_goal(d))
		r = manager_wait_for(m, by_name, name, device_config_goal(d), GOAL_SOURCE_CONFIG);
	if (r < 0)
		log_dev_warning_errno(name, r, "%s; no longer tuning it, and failed to keep its goal: %m", why);
	else
		log_dev_notice(name, "%s; no longer tuning it, its goal %s waits for it to come back", why, goal);
	manager_remove_device(m, i);
}

/* The tuned disk called name, if it is no longer the disk it was. */
static void check_tuned(struct manager *m, const char *name)
{
	char why[128];

	for (size_t i = 0; i < m->n_devs; i++)
		if (strcmp(device_name(m->devs[i]), name) == 0) {
			if (!device_present(m->devs[i], why, sizeof(why)))
				manager_device_gone(m, i, why);
			return;
		}
}

/* Goals waiting for the disk called name: those that follow the disk
 * first, so that a configured goal for it then stands behind them. */
static void appeared(struct manager *m, const char *name)
{
	struct blockdev bd;
	char stable[160];

	/* Looked up once: a disk that is not one, or has no medium, has nothing
	 * to wait for it yet. */
	if (blockdev_resolve(m->o.sysroot, name, &bd, NULL) < 0 || !blockdev_has_medium(m->o.sysroot, name))
		return;
	blockdev_stable_id(m->o.sysroot, &bd, stable, sizeof(stable));
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < m->n_waiting;) {
			_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
			struct waiting_goal w = m->waiting[i];
			struct device *d;
			int r;

			if ((w.source == GOAL_SOURCE_CONFIG) != (pass == 1) || !disk_has_id(m, name, stable, w.id)) {
				i++;
				continue;
			}
			/* Taken off first: setting the goal must not find it waiting. */
			m->waiting[i] = m->waiting[--m->n_waiting];
			log_dev_info(name, "appeared; applying the goal %s waiting for it", w.goal);
			r = manager_set_goal_from(m, name, w.goal, w.source, &error);
			d = manager_find(m, name);
			if (r < 0)
				log_dev_warning(name, "cannot apply the goal %s waiting for it: %s", w.goal,
						error_message(&error, r));
			else if (d && w.source == GOAL_SOURCE_RUNTIME && strcmp(w.id, device_id(d)) != 0) {
				/* Kept under the name it was given; now under the disk's own id. */
				state_remove(&m->state, w.id);
				manager_save_state(m);
			}
			free(w.id);
			free(w.name);
			i = 0;	/* setting a goal may have changed the list */
		}
}

void manager_apply_waiting(struct manager *m)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;

	if (!m->n_waiting)
		return;
	snprintf(path, sizeof(path), "%s/class/block", m->o.sysroot);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.' && !manager_find(m, de->d_name))
			appeared(m, de->d_name);
	closedir(dir);
}

void manager_device_event(struct manager *m, enum device_event_action action, const char *name)
{
	if (action == DEVICE_EVENT_LOST) {
		/* Every tuned disk checked, every disk looked at. */
		for (size_t i = m->n_devs; i > 0; i--)
			check_tuned(m, device_name(m->devs[i - 1]));
		manager_apply_waiting(m);
		return;
	}
	check_tuned(m, name);
	if (action != DEVICE_EVENT_REMOVE && !manager_find(m, name))
		appeared(m, name);
}

size_t manager_n_waiting(const struct manager *m)
{
	return m->n_waiting;
}

const struct waiting_goal *manager_waiting(const struct manager *m, size_t i)
{
	return i < m->n_waiting ? &m->waiting[i] : NULL;
}
