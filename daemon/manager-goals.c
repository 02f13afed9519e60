/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's goal requests (manager.h): set, clear, pause, resume and
 * reset a device's goal, from the bus, the command line or the
 * configuration, and which goals are kept across restarts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockdev.h"
#include "device.h"
#include "error.h"
#include "log.h"
#include "manager-internal.h"
#include "measure.h"
#include "state.h"

/* Run-time goals (and only those) are kept across restarts. */
static void remember_goal(struct manager *m, struct device *d)
{
	struct state_device *sd = state_find(&m->state, device_id(d)), e = {};
	char goal[GOAL_TEXT_MAX];

	if (sd)
		e = *sd;
	/* state_put() copies the strings. */
	e.id = (char *)device_id(d);
	e.name = (char *)device_name(d);
	e.goal = device_source(d) == GOAL_SOURCE_RUNTIME && !device_weights_only(d) ?
		 goal_format(device_goal(d), goal, sizeof(goal)) : NULL;
	if (state_put(&m->state, &e) == 0)
		manager_save_state(m);
}

/* A configured goal for a device whose goal was set at run time or on the
 * command line: that one stands; this one applies once a run-time goal is
 * cleared. Said once per change. */
static void stand_behind(struct device *d, const struct goal *g)
{
	const char *before = device_config_goal(d);
	char text[GOAL_TEXT_MAX], now[GOAL_TEXT_MAX];

	goal_format(g, text, sizeof(text));
	if (before && strcmp(before, text) == 0)
		return;
	device_set_config_goal(d, text);
	log_dev_info(device_name(d), "the configured goal %s stands behind the goal %s, %s", text,
		     goal_format(device_goal(d), now, sizeof(now)),
		     device_source(d) == GOAL_SOURCE_RUNTIME ? "set at run time, until it is cleared" :
							       "given on the command line");
}

/* What a user typed for a disk that is not here but may be plugged later:
 * a valid name or a /dev path. Anything else that does not resolve is an
 * error now. */
static bool could_appear(const char *device, int r)
{
	if (r != -ENODEV && r != -ENOENT)
		return false;
	if (strncmp(device, "/dev/", 5) != 0)
		return blockdev_name_valid(device);
	/* What udev puts in link names (it escapes the rest as \xNN). */
	if (strlen(device) >= WAITING_DEVICE_MAX || strstr(device, "/../") || strstr(device, "/./") ||
	    strspn(device, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._:+@=,#\\-") !=
	    strlen(device))
		return false;
	return true;
}

int manager_set_goal_from(struct manager *m, const char *device, const char *goal_text,
			  enum goal_source source, sd_bus_error *error)
{
	struct device *d;
	struct blockdev bd;
	char note[320];
	struct goal g;
	int r;

	r = goal_parse(goal_text, &g, error);
	if (r < 0)
		return r;
	d = manager_find(m, device);
	if (!d) {
		r = blockdev_resolve_user(m->o.sysroot, device, &bd, note, sizeof(note), error);
		if (r < 0 && source != GOAL_SOURCE_CLI && could_appear(device, r)) {
			sd_bus_error_free(error);
			return manager_wait_absent(m, device, &g, source, error);
		}
		if (r < 0)
			return r;
		if (note[0])
			log_info("%s", note);
		d = manager_find(m, bd.name);
		if (!d && source != GOAL_SOURCE_CLI && !blockdev_has_medium(m->o.sysroot, bd.name))
			return manager_wait_absent(m, bd.name, &g, source, error);
	}
	if (d) {
		if (source == GOAL_SOURCE_CONFIG && device_source(d) != GOAL_SOURCE_CONFIG) {
			stand_behind(d, &g);
			return 0;
		}
		/* A reload repeating a goal changes nothing: what was learned stays. */
		if (source == GOAL_SOURCE_CONFIG && device_source(d) == source && goal_equal(device_goal(d), &g))
			return 0;
		if (source == GOAL_SOURCE_RUNTIME && device_source(d) == GOAL_SOURCE_CONFIG) {
			char was[GOAL_TEXT_MAX];

			goal_format(device_goal(d), was, sizeof(was));
			device_set_config_goal(d, was);
			log_dev_info(device_name(d), "a goal set at run time replaces the configured goal %s "
				     "until it is cleared", was);
		}
		device_set_weights_only(d, false);
		device_set_goal(d, &g, source);
		remember_goal(m, d);
		/* Someone else took the device over; a goal set at run time is
		 * the administrator asking for tuning again. A paused device
		 * stays paused: resume says when. */
		if (device_overridden(d) && source == GOAL_SOURCE_RUNTIME) {
			r = device_resume(d);
			if (r < 0)
				return error_setf(error, r, "Goal set, but resuming %s failed: %s",
						  device_name(d), strerror(-r));
		}
		return 0;
	}
	return manager_start_device(m, &bd, &g, source, false, NULL, error);
}

int manager_start_device(struct manager *m, const struct blockdev *bd, const struct goal *g,
			 enum goal_source source, bool weights_only, struct device **ret, sd_bus_error *error)
{
	struct device *d, **devs;
	int r;

	if (m->n_devs >= m->o.max_devices)
		return error_setf(error, -ENOSPC, "Already tuning %zu devices, the most the observer was "
				  "sized for (MaxDevices)", m->n_devs);
	devs = realloc(m->devs, (m->n_devs + 1) * sizeof(*devs));
	if (!devs)
		return error_setf(error, -ENOMEM, "Out of memory");
	m->devs = devs;
	/* The tick may have been off: the device's first interval starts now. */
	measure_read_host(&m->host);
	r = device_new(&(const struct device_env) {
			       .o = &m->o, .observer = m->observer, .host = &m->host, .profiles = &m->profiles,
			       .cgroups = m->have_cgroups ? &m->cgroups : NULL, .event = m->event,
			       .recorder = m->recorder, .cb = &m->cb,
			       .state = &m->state, .originals = &m->originals,
			       .save_state = manager_save_state, .save_originals = manager_save_originals, .owner = m,
		       }, bd, g, source, &d, error);
	if (r < 0)
		return r;
	device_set_weights_only(d, weights_only);
	m->devs[m->n_devs++] = d;
	remember_goal(m, d);
	manager_update_tick(m);
	if (m->cb.device_added)
		m->cb.device_added(d, m->cb.userdata);
	if (ret)
		*ret = d;
	return 0;
}

int manager_set_goal(struct manager *m, const char *device, const char *goal_text, sd_bus_error *error)
{
	return manager_set_goal_from(m, device, goal_text, GOAL_SOURCE_RUNTIME, error);
}

void manager_drop_config_goals_except(struct manager *m, const char *const *devices, size_t n)
{
	manager_drop_waiting_config_except(m, devices, n);
	for (size_t i = 0; i < m->n_devs;) {
		struct device *d = m->devs[i];
		bool listed = false;

		for (size_t j = 0; !listed && j < n; j++)
			listed = manager_find(m, devices[j]) == d;
		if (!listed && device_config_goal(d)) {
			log_dev_info(device_name(d), "its configured goal %s is no longer in the configuration",
				     device_config_goal(d));
			device_set_config_goal(d, NULL);
		}
		if (listed || device_source(d) != GOAL_SOURCE_CONFIG) {
			i++;
			continue;
		}
		log_dev_info(device_name(d), "its goal is no longer in the configuration");
		(void)manager_clear_goal(m, device_name(d), NULL);
	}
}

int manager_clear_goal(struct manager *m, const char *device, sd_bus_error *error)
{
	struct device *d;
	size_t i;
	int r;

	d = manager_find(m, device);
	if (!d && manager_forget_waiting(m, device) == 0)
		return 0;
	r = manager_lookup(m, device, &d, error);
	if (r < 0)
		return r;
	for (i = 0; m->devs[i] != d; i++)
		;
	state_remove(&m->state, device_id(d));
	manager_save_state(m);
	if (device_source(d) == GOAL_SOURCE_RUNTIME && device_config_goal(d)) {
		struct goal g;

		r = goal_parse(device_config_goal(d), &g, NULL);
		if (r >= 0) {
			log_dev_info(device_name(d), "goal set at run time cleared; the configured goal %s applies again",
				     device_config_goal(d));
			device_set_goal(d, &g, GOAL_SOURCE_CONFIG);
			device_set_config_goal(d, NULL);
			return 0;
		}
	}
	if (device_n_weights(d)) {
		log_dev_info(device_name(d), "goal cleared; tuned for its cgroups' weights alone");
		manager_weights_only(m, d);
		return 0;
	}
	log_dev_info(device_name(d), "goal cleared");
	manager_remove_device(m, i);
	return 0;
}

int manager_pause(struct manager *m, const char *device, sd_bus_error *error)
{
	struct device *d;
	int r;

	r = manager_lookup(m, device, &d, error);
	if (r < 0)
		return r;
	device_pause(d);
	return 0;
}

int manager_resume(struct manager *m, const char *device, sd_bus_error *error)
{
	struct device *d;
	int r;

	r = manager_lookup(m, device, &d, error);
	if (r < 0)
		return r;
	r = device_resume(d);
	if (r < 0)
		return error_setf(error, r, "Failed to resume %s: %s", device_name(d), strerror(-r));
	return 0;
}

int manager_reset(struct manager *m, const char *device, sd_bus_error *error)
{
	struct device *d;
	int r;

	r = manager_lookup(m, device, &d, error);
	if (r < 0)
		return r;
	r = device_reset(d);
	if (r < 0)
		return error_setf(error, r, "Failed to restore %s: %s", device_name(d), strerror(-r));
	return 0;
}

void manager_resume_all(struct manager *m)
{
	for (size_t i = 0; i < m->n_devs; i++)
		if (device_stopped(m->devs[i]))
			(void)device_resume(m->devs[i]);
}
