/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost-probe.h"
#include "device.h"
#include "error.h"
#include "log.h"
#include "manager-internal.h"
#include "measure.h"
#include "metrics-writer.h"
#include "profile-dirs.h"
#include "state.h"
#include "parse-util.h"
#include "record.h"


void manager_options_default(struct manager_options *o)
{
	*o = (struct manager_options) {
		.interval_ns = NSEC_PER_SEC,
		.settle_ns = 300 * NSEC_PER_MSEC,
		.rollback = true,
		.switch_scheduler = true,
		.attach = OBSERVER_ATTACH_AUTO,
		.max_devices = KT_MAX_DEVICES_DEFAULT,
		.record_max_bytes = RECORD_FILE_MAX_DEFAULT,
		.sysroot = "/sys",
		.debugfs = "/sys/kernel/debug",
	};
}

/* The timer runs only while there is a device to tune. */
static void update_tick(struct manager *m)
{
	uint64_t now;
	int enabled = 0;

	(void)sd_event_source_get_enabled(m->tick, &enabled);
	if (m->n_devs && !enabled) {
		sd_event_now(m->event, CLOCK_MONOTONIC, &now);
		(void)sd_event_source_set_time(m->tick, now + m->o.interval_ns / 1000);
		(void)sd_event_source_set_enabled(m->tick, SD_EVENT_ONESHOT);
	} else if (!m->n_devs && enabled) {
		(void)sd_event_source_set_enabled(m->tick, SD_EVENT_OFF);
		manager_cost_window_abandon(m);	/* no tick will close it */
	}
}

/* Callbacks first (the bus drops its object), then free. */
void manager_remove_device(struct manager *m, size_t i)
{
	struct device *d = m->devs[i];

	/* Put back before it is announced: a client that hears DeviceRemoved
	 * finds the disk as it was before kyber-tuned took it. */
	device_release(d);
	if (m->cb.device_removed)
		m->cb.device_removed(d, m->cb.userdata);
	memmove(&m->devs[i], &m->devs[i + 1], (m->n_devs - i - 1) * sizeof(*m->devs));
	m->n_devs--;
	device_free(d);
	update_tick(m);
	/* Its series leave the file now, not at the next tick (there may be none). */
	metrics_writer_update(m->metrics, m->devs, m->n_devs);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct manager *m = userdata;
	struct cost_window w;
	/* The window closes before the devices take their interval, so that
	 * both cover the same time. */
	bool sampled = manager_cost_window_stop(m, &w);

	measure_read_host(&m->host);
	for (size_t i = 0; i < m->n_devs;) {
		struct device *d = m->devs[i];

		char why[128];

		/* Device events say so at once; this catches what they missed. */
		if (!device_present(d, why, sizeof(why))) {
			manager_device_gone(m, i, why);
			continue;
		}
		device_step(d);
		i++;
	}
	if (sampled)
		manager_cost_window_charge(m, &w);
	manager_cost_window_maybe_begin(m);
	metrics_writer_update(m->metrics, m->devs, m->n_devs);
	if (!m->n_devs)
		return 0;
	/* Scheduled from the previous deadline, not from now: no drift. */
	if (sd_event_source_set_time(s, usec + m->o.interval_ns / 1000) < 0)
		return 0;
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}


static char *dup_or_null(const char *s, bool *oom)
{
	char *c;

	if (!s)
		return NULL;
	c = strdup(s);
	if (!c)
		*oom = true;
	return c;
}

/* A corrupt file is kept aside for inspection and replaced by a clean start. */
static void set_aside(const char *path, const char *what, int r)
{
	char aside[PATH_MAX];

	snprintf(aside, sizeof(aside), "%s.corrupt", path);
	if (rename(path, aside) == 0)
		log_warning_errno(r, "The %s %s is corrupt (%m); moved to %s, starting clean", what, path, aside);
	else
		log_warning_errno(r, "The %s %s is corrupt (%m) and could not be moved aside; starting clean",
				  what, path);
}

/*
 * A file that could not be loaded: set aside if it is not ours (corrupt,
 * too big, not a regular file); on any other error (EIO, ENOMEM, EACCES,
 * ELOOP...) it may be fine and only unreadable now: it is left in place
 * and not written in this run, so that nothing in it is lost.
 */
static void load_failed(char **path_slot, const char *what, int r)
{
	if (r == -EBADMSG || r == -EFBIG || r == -EINVAL) {
		set_aside(*path_slot, what, r);
		return;
	}
	log_warning_errno(r, "Failed to read %s %s: %m; leaving it as it is, starting without it and not "
			  "saving it until the next start", what, *path_slot);
	free(*path_slot);
	*path_slot = NULL;
}

static void load_persistent(struct manager *m)
{
	char path[PATH_MAX];
	int r;

	if (m->o.state_dir) {
		snprintf(path, sizeof(path), "%s/%s", m->o.state_dir, STATE_FILE);
		m->state_path = strdup(path);
		r = state_load(path, &m->state);
		if (r < 0 && m->state_path)
			load_failed(&m->state_path, "state file", r);
	}
	if (m->o.runtime_dir) {
		snprintf(path, sizeof(path), "%s/%s", m->o.runtime_dir, ORIGINALS_FILE);
		m->originals_path = strdup(path);
		r = originals_load(path, &m->originals);
		if (r < 0 && m->originals_path)
			load_failed(&m->originals_path, "originals file", r);
	}
}

void manager_save_state(void *owner)
{
	struct manager *m = owner;
	int r;

	if (!m->state_path)
		return;
	r = state_save(m->state_path, &m->state);
	if (r < 0)
		log_warning_errno(r, "Failed to save %s: %m", m->state_path);
}

void manager_save_originals(void *owner)
{
	struct manager *m = owner;
	int r;

	if (!m->originals_path)
		return;
	r = originals_save(m->originals_path, &m->originals);
	if (r < 0)
		log_warning_errno(r, "Failed to save %s: %m", m->originals_path);
}

static void load_profiles(struct manager *m)
{
	const char *defaults[] = { PROFILE_DIR_ETC, PROFILE_DIR_LIB }, *one[] = { m->o.profile_dir };
	bool given = m->o.profile_dir != NULL;
	int r;

	if (given && !*m->o.profile_dir)
		return;
	r = profiles_load(given ? one : defaults, given ? 1 : ELEMENTSOF(defaults), &m->profiles);
	if (r > 0)
		log_info("Read %d per-model profile%s from %s", r, r == 1 ? "" : "s",
			 given ? m->o.profile_dir : PROFILE_DIR_ETC " and " PROFILE_DIR_LIB);
}

int manager_new(struct manager **ret, sd_event *event, const struct manager_options *o)
{
	struct manager *m;
	bool oom = false;
	char why[160];
	int r;

	m = calloc(1, sizeof(*m));
	if (!m)
		return log_oom();
	m->o = *o;
	m->event = sd_event_ref(event);
	m->sysroot = dup_or_null(o->sysroot, &oom);
	m->debugfs = dup_or_null(o->debugfs, &oom);
	m->state_dir = dup_or_null(o->state_dir, &oom);
	m->runtime_dir = dup_or_null(o->runtime_dir, &oom);
	m->record_path = dup_or_null(o->record_path, &oom);
	m->metrics_path = dup_or_null(o->metrics_path, &oom);
	if (oom) {
		r = log_oom();
		goto fail;
	}
	m->o.sysroot = m->sysroot;
	m->o.debugfs = m->debugfs;
	m->o.state_dir = m->state_dir;
	m->o.runtime_dir = m->runtime_dir;
	m->o.record_path = m->record_path;
	m->o.metrics_path = m->metrics_path;

	load_persistent(m);
	load_profiles(m);
	manager_find_cgroups(m);
	if (m->o.record_path) {
		r = recorder_open(&m->recorder, m->o.record_path, m->o.record_max_bytes);
		if (r < 0) {
			log_error_errno(r, "Failed to open the flight recorder %s: %m", m->o.record_path);
			goto fail;
		}
	}
	if (m->o.metrics_path) {
		r = metrics_writer_new(&m->metrics, m->o.metrics_path);
		if (r < 0) {
			log_oom();
			goto fail;
		}
		/* At once: a path that cannot be written is said at start. */
		metrics_writer_update(m->metrics, NULL, 0);
	}
	r = observer_new(&m->observer, o->attach, o->max_devices);
	if (r < 0)
		goto fail;
	log_debug("BPF observer attached via %s", observer_attach_to_string(observer_attach_mode(m->observer)));
	r = manager_watch_adjusts(m);
	if (r < 0)
		goto fail;
	r = cost_probe_new(&m->cost, why, sizeof(why));
	if (r == -ENOMEM)
		goto fail;
	if (r < 0)
		log_info("The block layer's CPU time per I/O is not measured: the sampler %s", why);
	r = sd_event_add_time(event, &m->tick, CLOCK_MONOTONIC, 0, 1000, on_tick, m);
	if (r < 0) {
		log_error_errno(r, "Failed to add the interval timer: %m");
		goto fail;
	}
	(void)sd_event_source_set_enabled(m->tick, SD_EVENT_OFF);
	*ret = m;
	return 0;
fail:
	manager_free(m);
	return r;
}

struct manager *manager_free(struct manager *m)
{
	if (!m)
		return NULL;
	for (size_t i = 0; i < m->n_devs; i++)
		device_free(m->devs[i]);
	free(m->devs);
	manager_free_waiting(m);
	sd_event_source_disable_unref(m->tick);
	cost_probe_free(m->cost);
	profiles_done(&m->profiles);
	manager_unwatch_adjusts(m);
	observer_free(m->observer);
	sd_event_unref(m->event);
	free(m->sysroot);
	free(m->debugfs);
	free(m->state_dir);
	free(m->runtime_dir);
	free(m->record_path);
	free(m->metrics_path);
	metrics_writer_free(m->metrics);
	recorder_close(m->recorder);
	state_done(&m->state);
	originals_done(&m->originals);
	free(m->state_path);
	free(m->originals_path);
	free(m);
	return NULL;
}

void manager_set_callbacks(struct manager *m, const struct manager_callbacks *cb)
{
	m->cb = *cb;
}

int manager_check_observer_access(void *userdata)
{
	struct manager *m = userdata;

	return observer_check_access(m->observer);
}

uint64_t manager_interval_ns(const struct manager *m)
{
	return m->o.interval_ns;
}

size_t manager_n_devices(const struct manager *m)
{
	return m->n_devs;
}

struct device *manager_device(const struct manager *m, size_t i)
{
	return i < m->n_devs ? m->devs[i] : NULL;
}

struct device *manager_find(const struct manager *m, const char *device)
{
	struct blockdev bd;

	if (!device)
		return NULL;
	for (size_t i = 0; i < m->n_devs; i++)
		if (strcmp(device_name(m->devs[i]), device) == 0)
			return m->devs[i];
	/* A /dev path or another name for the same disk. */
	if (blockdev_resolve(m->o.sysroot, device, &bd, NULL) < 0)
		return NULL;
	for (size_t i = 0; i < m->n_devs; i++)
		if (device_kdev(m->devs[i]) == bd.kdev)
			return m->devs[i];
	return NULL;
}

int manager_lookup(const struct manager *m, const char *device, struct device **ret, sd_bus_error *error)
{
	const struct waiting_goal *w;

	*ret = manager_find(m, device);
	if (!*ret && (w = manager_find_waiting(m, device)))
		return error_setf(error, -ENODEV, "%.64s is not tuned: its goal %s waits for the disk to appear "
				  "(see WaitingGoals)", device, w->goal);
	if (!*ret)
		return error_setf(error, -ENODEV, "%.64s has no goal (see ListDevices)",
				  device ? device : "(null)");
	return 0;
}

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
	update_tick(m);
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
