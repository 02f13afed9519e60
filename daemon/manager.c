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

void manager_update_tick(struct manager *m)
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
	manager_update_tick(m);
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
