/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "bus.h"
#include "conf.h"
#include "error.h"
#include "log.h"
#include "macro.h"
#include "privs.h"
#include "service.h"

struct service {
	const struct service_options *o;
	struct manager *m;
	struct conf conf;
	sd_event *event;
	struct device_events *events;
};

static void on_device_event(enum device_event_action action, const char *name, void *userdata)
{
	struct service *svc = userdata;

	manager_device_event(svc->m, action, name);
}

/* --foreground has nothing to serve once its last device is gone. */
static void on_device_removed(struct device *d, void *userdata)
{
	struct service *svc = userdata;

	if (manager_n_devices(svc->m) <= 1) {	/* called before d leaves the list */
		log_notice("No device left to tune; exiting");
		(void)sd_event_exit(svc->event, 0);
	}
}

int service_parse_device_goal(char *arg, struct service_goal *out, sd_bus_error *error)
{
	char *colon = arg ? strrchr(arg, ':') : NULL;
	struct goal g;

	if (!colon || colon == arg || !colon[1])
		return error_setf(error, -EINVAL, "Invalid --goal '%.64s': expected DEV:GOAL, "
				  "e.g. nvme0n1:read-p99=100us", arg ? arg : "");
	*colon = 0;
	out->device = arg;
	out->goal = colon + 1;
	/* Fail on the command line, not later in the loop. */
	return goal_parse(out->goal, &g, error);
}

static int on_resume(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct service *svc = userdata;

	manager_resume_all(svc->m);
	return 0;
}

/* Configuration values apply where the command line said nothing. */
static void apply_conf_options(const struct service_options *o, const struct conf *c,
			       struct manager_options *mo)
{
	if (c->has_interval && !(o->cli_set & SERVICE_CLI_INTERVAL))
		mo->interval_ns = c->interval_ns;
	if (c->has_settle && !(o->cli_set & SERVICE_CLI_SETTLE))
		mo->settle_ns = c->settle_ns;
	if (c->has_rollback && !(o->cli_set & SERVICE_CLI_ROLLBACK))
		mo->rollback = c->rollback;
	if (c->has_switch_scheduler && !(o->cli_set & SERVICE_CLI_SWITCH))
		mo->switch_scheduler = c->switch_scheduler;
	if (c->has_max_devices)
		mo->max_devices = c->max_devices;
	if (c->has_record_max && !(o->cli_set & SERVICE_CLI_RECORD_MAX))
		mo->record_max_bytes = c->record_max_bytes;
	if (c->has_record && !(o->cli_set & SERVICE_CLI_RECORD))
		mo->record_path = c->record_path && *c->record_path ? c->record_path : NULL;
	if (c->has_metrics && !(o->cli_set & SERVICE_CLI_METRICS))
		mo->metrics_path = c->metrics_path;
	if (mo->settle_ns >= mo->interval_ns) {
		log_warning("Settle= must be shorter than Interval=: using %llu ms",
			    (unsigned long long)(mo->interval_ns / 2000000));
		mo->settle_ns = mo->interval_ns / 2;
	}
}

static void apply_conf_log_level(const struct service_options *o, const struct conf *c)
{
	if (c->has_log_level && !(o->cli_set & SERVICE_CLI_LOG_LEVEL))
		log_set_max_level(c->log_level);
}

/* Goals of the configuration: set (a bad one is a warning), and those that
 * disappeared from it stop. Returns the number of goals refused. */
static unsigned apply_conf_goals(struct service *svc)
{
	const char **names = calloc(svc->conf.n_goals + 1, sizeof(char *));
	unsigned refused = 0;

	for (size_t i = 0; i < svc->conf.n_goals; i++) {
		_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
		const struct conf_goal *g = &svc->conf.goals[i];
		int r;

		if (names)
			names[i] = g->device;
		r = manager_set_goal_from(svc->m, g->device, g->goal, GOAL_SOURCE_CONFIG, &error);
		if (r < 0) {
			log_warning("%s: %s", g->where, error_message(&error, r));
			refused++;
		}
	}
	if (names)
		manager_drop_config_goals_except(svc->m, names, svc->conf.n_goals);
	free(names);
	return refused;
}

/* Weights of the configuration: set (a bad one is a warning), and those
 * that disappeared from it cleared. Returns the number refused. */
static unsigned apply_conf_weights(struct service *svc)
{
	const char **devices = calloc(svc->conf.n_weights + 1, sizeof(char *));
	const char **cgroups = calloc(svc->conf.n_weights + 1, sizeof(char *));
	unsigned refused = 0;

	for (size_t i = 0; i < svc->conf.n_weights; i++) {
		_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
		const struct conf_weight *w = &svc->conf.weights[i];
		int r;

		if (devices && cgroups) {
			devices[i] = w->device;
			cgroups[i] = w->cgroup;
		}
		r = manager_set_weight(svc->m, w->device, w->cgroup, w->weight, GOAL_SOURCE_CONFIG, &error);
		if (r < 0) {
			log_warning("%s: %s", w->where, error_message(&error, r));
			refused++;
		}
	}
	if (devices && cgroups)
		manager_drop_config_weights_except(svc->m, devices, cgroups, svc->conf.n_weights);
	free(devices);
	free(cgroups);
	return refused;
}

/* The command line's goals: each must take, or the daemon does not start. */
static int apply_cli_goals(struct service *svc)
{
	for (size_t i = 0; i < svc->o->n_goals; i++) {
		_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
		const struct service_goal *g = &svc->o->goals[i];
		int r;

		r = manager_set_goal_from(svc->m, g->device, g->goal, GOAL_SOURCE_CLI, &error);
		if (r < 0 && sd_bus_error_is_set(&error))
			return log_error_errno(r, "%s", error.message);	/* the sentence names device and cause */
		if (r < 0)
			return log_error_errno(r, "Failed to tune %s: %m", g->device);
	}
	return 0;
}

/* BPF is attached and the bus name owned: drop what is not needed. */
static int drop_privileges(struct service *svc)
{
	int r;

	r = privs_needed(CAP_BPF, manager_check_observer_access, svc->m);
	if (r < 0)
		return r;
	log_debug("%s CAP_BPF for the observer's maps", r ? "Keeping" : "Dropping");
	return privs_drop((const cap_value_t[]) { CAP_BPF }, r ? 1 : 0);
}

static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct service *svc = userdata;
	int r;

	if (!svc->o->config_path)
		return 0;
	(void)sd_notify(0, "RELOADING=1\nSTATUS=Reloading the configuration");
	conf_done(&svc->conf);
	r = conf_load(&svc->conf, svc->o->config_path, svc->o->dropin_dir);
	if (r < 0)
		log_warning_errno(r, "Failed to reload the configuration: %m");
	else {
		unsigned refused;

		apply_conf_log_level(svc->o, &svc->conf);
		refused = apply_conf_goals(svc);
		refused += apply_conf_weights(svc);
		log_info("Configuration reloaded, %u warning(s); Interval, Settle, Rollback, "
			 "SwitchScheduler, MaxDevices and Record take effect at the next start",
			 svc->conf.warnings + refused);
	}
	(void)sd_notify(0, "READY=1\nSTATUS=Tuning");
	return 0;
}

int service_run(const struct service_options *o)
{
	struct service svc = { .o = o };
	struct manager_options mo = o->manager;
	struct bus *bus = NULL;
	sd_event *event = NULL;
	sigset_t ss;
	int r;

	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGUSR1);
	sigaddset(&ss, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss, NULL);

	if (o->config_path) {
		r = conf_load(&svc.conf, o->config_path, o->dropin_dir);
		if (r < 0) {
			log_error_errno(r, "Failed to read the configuration: %m");
			goto out;
		}
		apply_conf_options(o, &svc.conf, &mo);
		apply_conf_log_level(o, &svc.conf);
	}
	r = sd_event_default(&event);
	if (r < 0) {
		log_error_errno(r, "Failed to allocate the event loop: %m");
		goto out;
	}
	svc.event = event;
	r = manager_new(&svc.m, event, &mo);
	if (r < 0)
		goto out;
	/* Before the goals: a disk plugged while they are set is not missed. */
	r = device_events_new(&svc.events, event, o->device_events, on_device_event, &svc);
	if (r < 0)
		log_warning("Not watching for disks plugged and unplugged: a disk that goes away is noticed "
			    "within an interval, a goal waiting for a disk applies at the next start");
	r = apply_cli_goals(&svc);
	if (r < 0)
		goto out;
	manager_resume_goals(svc.m);
	manager_resume_weights(svc.m);
	(void)apply_conf_goals(&svc);
	(void)apply_conf_weights(&svc);
	manager_restore_leftovers(svc.m);
	if (o->bus) {
		r = bus_start(&bus, event, svc.m);
		if (r < 0)
			goto out;
	} else if (manager_n_devices(svc.m) == 0) {
		r = log_error_errno(-EINVAL, "Nothing to tune: no goal and no D-Bus service");
		goto out;
	} else
		manager_set_callbacks(svc.m, &(const struct manager_callbacks) {
			.device_removed = on_device_removed, .userdata = &svc });
	(void)sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
	(void)sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
	(void)sd_event_add_signal(event, NULL, SIGUSR1, on_resume, &svc);
	(void)sd_event_add_signal(event, NULL, SIGHUP, on_reload, &svc);
	/* Keeps the watchdog fed when the unit has WatchdogSec=. */
	(void)sd_event_set_watchdog(event, true);
	r = drop_privileges(&svc);
	if (r < 0)
		goto out;

	(void)sd_notify(0, "READY=1\nSTATUS=Tuning");
	r = sd_event_loop(event);
	if (r < 0)
		log_error_errno(r, "Event loop failed: %m");
	(void)sd_notify(0, "STOPPING=1\nSTATUS=Restoring the original settings");
out:
	device_events_free(svc.events);
	bus_free(bus);
	manager_free(svc.m);
	conf_done(&svc.conf);
	sd_event_unref(event);
	return r < 0 ? r : 0;
}
