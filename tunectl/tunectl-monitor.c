/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kyber-tunectl monitor: a line per device and interval, driven by the
 * daemon's PropertiesChanged (one per interval and device). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-event.h>

#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "tunectl.h"
#include "time-util.h"

struct monitor {
	sd_event *event;
	sd_bus *bus;
	const char *path;	/* NULL: every device */
	/* Changes seen per device path, to mark intervals that changed targets. */
	struct seen {
		char *path;
		uint64_t changes;
	} *seen;
	size_t n_seen;
};

/* Whether the device's Changes went up since its previous line. */
static bool monitor_changed(struct monitor *mo, const char *path, uint64_t changes)
{
	struct seen *s;
	bool changed;

	for (size_t i = 0; i < mo->n_seen; i++)
		if (strcmp(mo->seen[i].path, path) == 0) {
			changed = changes > mo->seen[i].changes;
			mo->seen[i].changes = changes;
			return changed;
		}
	s = realloc(mo->seen, (mo->n_seen + 1) * sizeof(*s));
	if (!s)
		return false;
	mo->seen = s;
	s[mo->n_seen].path = strdup(path);
	if (s[mo->n_seen].path)
		s[mo->n_seen++].changes = changes;
	return false;
}

/* PropertiesChanged comes once per interval and device. */
static int on_properties_changed(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct monitor *mo = userdata;
	const char *path = sd_bus_message_get_path(msg);
	struct tf_status s;
	struct tf_interval iv;

	if (!path || (mo->path && strcmp(path, mo->path) != 0))
		return 0;
	if (get_status(mo->bus, path, &reply, &s) < 0)
		return 0;	/* gone meanwhile: its removal is no error */
	if (arg_json) {
		tf_status_json(stdout, &s, now_ns(CLOCK_REALTIME));
		return 0;
	}
	iv = (struct tf_interval) {
		.time_ns = now_ns(CLOCK_REALTIME),
		.device = s.name, .goal = s.goal, .state = s.state, .reason = s.reason,
		.interval_ns = s.interval_ns,
		.read_target_ns = s.read_target_ns, .write_target_ns = s.write_target_ns,
		.changed = monitor_changed(mo, path, s.changes),
		.metric_ns = s.goal_metric_ns,
		.goal_met = s.goal_metric_ns ? s.goal_met : -1,
		.read = { .iops = s.read_iops, .p50_ns = s.read_p50_ns, .p99_ns = s.read_p99_ns,
			  .depth = s.read_depth },
		.write = { .iops = s.write_iops, .p50_ns = s.write_p50_ns, .p99_ns = s.write_p99_ns,
			   .depth = s.write_depth },
	};
	tf_interval_line(stdout, &iv, false);
	return 0;
}

static int on_name_owner_changed(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct monitor *mo = userdata;
	const char *name, *old, *new;

	if (sd_bus_message_read(msg, "sss", &name, &old, &new) < 0 || strcmp(name, BUS_NAME) != 0 || *new)
		return 0;
	log_error("kyber-tuned stopped");
	return sd_event_exit(mo->event, 1);
}

static int on_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct monitor *mo = userdata;

	log_error("Lost the connection to the system bus");
	return sd_event_exit(mo->event, 1);
}

int verb_monitor(sd_bus *bus, int argc, char **argv)
{
	_cleanup_free_ char *path = NULL, *rule = NULL;
	struct monitor mo = { .bus = bus };
	char **paths = NULL;
	size_t n;
	sigset_t ss;
	int r;

	/* Fails here, not silently later, when the daemon or DEV is not there. */
	if (argc > 1)
		r = get_device_path(bus, argv[1], &path);
	else
		r = list_paths(bus, &paths, &n);
	strv_free(paths);
	if (r < 0)
		return 1;
	mo.path = path;
	setvbuf(stdout, NULL, _IOLBF, 0);

	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	r = sd_event_default(&mo.event);
	if (r < 0) {
		log_error_errno(r, "Failed to allocate the event loop: %m");
		return 1;
	}
	/* A NULL handler exits the loop with 0. */
	(void)sd_event_add_signal(mo.event, NULL, SIGINT, NULL, NULL);
	(void)sd_event_add_signal(mo.event, NULL, SIGTERM, NULL, NULL);
	if (asprintf(&rule, "type='signal',sender='" BUS_NAME "',interface='org.freedesktop.DBus.Properties',"
		     "member='PropertiesChanged',arg0='" BUS_DEVICE_INTERFACE "',%s='%s'",
		     path ? "path" : "path_namespace", path ?: BUS_DEVICE_PATH_PREFIX) < 0) {
		rule = NULL;
		r = -ENOMEM;
	} else
		r = sd_bus_add_match(bus, NULL, rule, on_properties_changed, &mo);
	if (r >= 0)
		r = sd_bus_add_match(bus, NULL, "type='signal',sender='org.freedesktop.DBus',"
				     "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='" BUS_NAME "'",
				     on_name_owner_changed, &mo);
	if (r >= 0)
		r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
					"org.freedesktop.DBus.Local", "Disconnected", on_disconnected, &mo);
	if (r >= 0)
		r = sd_bus_attach_event(bus, mo.event, SD_EVENT_PRIORITY_NORMAL);
	if (r >= 0)
		r = sd_event_loop(mo.event);
	if (r < 0)
		log_error_errno(r, "Failed to monitor kyber-tuned: %m");
	(void)sd_bus_detach_event(bus);
	mo.event = sd_event_unref(mo.event);
	for (size_t i = 0; i < mo.n_seen; i++)
		free(mo.seen[i].path);
	free(mo.seen);
	return r != 0 ? 1 : 0;
}
