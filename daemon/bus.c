/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus service (daemon/bus.h, docs/dbus.md): the connection, the
 * Manager object and its methods, and the manager's callbacks turned into
 * signals. The Device objects are in bus-device.c, authorization in
 * bus-auth.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-auth.h"
#include "bus-internal.h"
#include "cgroup-parse.h"
#include "error.h"
#include "log.h"
#include "macro.h"

#ifndef KT_VERSION
#define KT_VERSION "0.1"
#endif

#define ACTION_PREFIX "org.kybertune.KyberTune1."

/* The longest arguments taken, bytes: a device is a name or a path
 * (PATH_MAX), a goal a handful of tokens. Longer ones are refused before
 * anything else is done with them (no polkit query, no lookup). */
#define BUS_DEVICE_ARG_MAX 4096
#define BUS_GOAL_ARG_MAX 512
#define BUS_CGROUP_ARG_MAX CGROUP_PATH_MAX

static int check_length(const char *what, const char *s, size_t max, sd_bus_error *error)
{
	size_t n = strnlen(s, max + 1);

	if (n > max)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "Invalid %s: longer than %zu bytes", what, max);
	return 0;
}

static int method_list_devices(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	struct bus *b = userdata;
	int r;

	r = sd_bus_message_new_method_return(msg, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', "(sso)");
	if (r < 0)
		return r;
	for (size_t i = 0; i < b->n_devs; i++) {
		struct device_status s;

		device_get_status(b->devs[i]->d, &s);
		r = sd_bus_message_append(reply, "(sso)", s.name, ctl_state_to_string(s.state), b->devs[i]->path);
		if (r < 0)
			return r;
	}
	r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

/* The tuned device a method's one argument names: its name or /dev path. */
static int read_device_arg(sd_bus_message *msg, struct bus *b, const char **ret_arg, struct device **ret,
			   sd_bus_error *error)
{
	int r;

	r = sd_bus_message_read(msg, "s", ret_arg);
	if (r < 0)
		return r;
	r = check_length("device", *ret_arg, BUS_DEVICE_ARG_MAX, error);
	if (r < 0)
		return r;
	return manager_lookup(b->m, *ret_arg, ret, error);
}

static int method_get_device(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct bus *b = userdata;
	struct bus_device *bd;
	const char *device;
	struct device *d;
	int r;

	r = read_device_arg(msg, b, &device, &d, error);
	if (r < 0)
		return r;
	bd = bus_device_get(b, d);
	if (!bd)
		return sd_bus_error_setf(error, BUS_ERROR_NO_SUCH_DEVICE, "%.64s has no goal (see ListDevices)",
					 device);
	return sd_bus_reply_method_return(msg, "o", bd->path);
}

/* Reading, like status: what was learned says no more than the targets do. */
static int method_export_profile(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_free_ char *text = NULL;
	const char *device;
	struct device *d;
	int r;

	r = read_device_arg(msg, userdata, &device, &d, error);
	if (r < 0)
		return r;
	r = device_export_profile(d, &text, error);
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(msg, "s", text);
}

enum request {
	REQ_SET_GOAL,
	REQ_CLEAR_GOAL,
	REQ_SET_WEIGHT,
	REQ_CLEAR_WEIGHT,
	REQ_PAUSE,
	REQ_RESUME,
	REQ_RESET,
};

static const char *const request_action[] = {
	[REQ_SET_GOAL] = ACTION_PREFIX "set-goal",
	[REQ_CLEAR_GOAL] = ACTION_PREFIX "clear-goal",
	[REQ_SET_WEIGHT] = ACTION_PREFIX "set-weight",
	[REQ_CLEAR_WEIGHT] = ACTION_PREFIX "clear-weight",
	[REQ_PAUSE] = ACTION_PREFIX "pause",
	[REQ_RESUME] = ACTION_PREFIX "resume",
	[REQ_RESET] = ACTION_PREFIX "reset",
};

/*
 * The changing methods: arguments, authorization, then the manager. Runs
 * twice when polkit is asked (bus-auth.h): the arguments are read again
 * from the rewound message.
 */
static int request(sd_bus_message *msg, struct bus *b, enum request req, sd_bus_message_handler_t self,
		   sd_bus_error *error)
{
	const char *device, *goal = NULL, *cgroup = NULL, *who = sd_bus_message_get_sender(msg);
	uint32_t weight = 0;
	int r;

	if (req == REQ_SET_GOAL)
		r = sd_bus_message_read(msg, "ss", &device, &goal);
	else if (req == REQ_SET_WEIGHT)
		r = sd_bus_message_read(msg, "ssu", &device, &cgroup, &weight);
	else if (req == REQ_CLEAR_WEIGHT)
		r = sd_bus_message_read(msg, "ss", &device, &cgroup);
	else
		r = sd_bus_message_read(msg, "s", &device);
	if (r < 0)
		return r;
	r = check_length("device", device, BUS_DEVICE_ARG_MAX, error);
	if (r >= 0 && goal)
		r = check_length("goal", goal, BUS_GOAL_ARG_MAX, error);
	if (r >= 0 && cgroup)
		r = check_length("cgroup", cgroup, BUS_CGROUP_ARG_MAX, error);
	if (r < 0)
		return r;
	r = bus_auth_check(b->auth, msg, request_action[req], self, b, error);
	if (r < 0)
		return r;
	if (r == 0)
		return 1;	/* polkit answers later; the reply goes out then */

	switch (req) {
	case REQ_SET_GOAL:
		r = manager_set_goal(b->m, device, goal, error);
		break;
	case REQ_CLEAR_GOAL:
		r = manager_clear_goal(b->m, device, error);
		break;
	case REQ_SET_WEIGHT:
		r = manager_set_weight(b->m, device, cgroup, weight, GOAL_SOURCE_RUNTIME, error);
		break;
	case REQ_CLEAR_WEIGHT:
		r = manager_clear_weight(b->m, device, cgroup, error);
		break;
	case REQ_PAUSE:
		r = manager_pause(b->m, device, error);
		break;
	case REQ_RESUME:
		r = manager_resume(b->m, device, error);
		break;
	case REQ_RESET:
		r = manager_reset(b->m, device, error);
		break;
	}
	if (r < 0) {
		/* The manager named the cause in error; a bare errno gets its D-Bus name here. */
		(void)error_setf(error, r, "%s", strerror(-r));
		log_debug("%s from %s refused: %s", request_action[req] + strlen(ACTION_PREFIX),
			  who ?: "?", error->message);
		return r;
	}
	/* Who changed what, for the journal. */
	if (goal)
		log_info("%.64s: goal '%.*s' set over D-Bus by %s", device, GOAL_TEXT_MAX, goal, who ?: "?");
	else if (req == REQ_SET_WEIGHT)
		log_info("%.64s: weight %u of cgroup %.128s set over D-Bus by %s", device, weight, cgroup,
			 who ?: "?");
	else if (req == REQ_CLEAR_WEIGHT)
		log_info("%.64s: weight of cgroup %.128s cleared over D-Bus by %s", device, cgroup, who ?: "?");
	else
		log_info("%.64s: %s over D-Bus by %s", device, request_action[req] + strlen(ACTION_PREFIX),
			 who ?: "?");
	return sd_bus_reply_method_return(msg, NULL);
}

static int method_set_goal(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	return request(msg, userdata, REQ_SET_GOAL, method_set_goal, error);
}

static int method_clear_goal(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	return request(msg, userdata, REQ_CLEAR_GOAL, method_clear_goal, error);
}

static int method_set_weight(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	return request(msg, userdata, REQ_SET_WEIGHT, method_set_weight, error);
}

static int method_clear_weight(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	return request(msg, userdata, REQ_CLEAR_WEIGHT, method_clear_weight, error);
}

static int method_pause(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	return request(msg, userdata, REQ_PAUSE, method_pause, error);
}

static int method_resume(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	return request(msg, userdata, REQ_RESUME, method_resume, error);
}

static int method_reset(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	return request(msg, userdata, REQ_RESET, method_reset, error);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
				sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	return sd_bus_message_append(reply, "s", KT_VERSION);
}

static int property_get_interval(sd_bus *bus, const char *path, const char *interface, const char *property,
				 sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct bus *b = userdata;

	return sd_bus_message_append(reply, "t", manager_interval_ns(b->m));
}

/* Goals for disks that are not here: (device, goal, source). No change
 * signal: DeviceAdded says when one applies. */
static int property_get_waiting_goals(sd_bus *bus, const char *path, const char *interface, const char *property,
				      sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	struct bus *b = userdata;
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(sss)");
	for (size_t i = 0; r >= 0 && i < manager_n_waiting(b->m); i++) {
		const struct waiting_goal *w = manager_waiting(b->m, i);

		r = sd_bus_message_append(reply, "(sss)", w->name, w->goal, goal_source_to_string(w->source));
	}
	return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* Every method may be called by anyone as far as sd-bus is concerned
 * (UNPRIVILEGED): the changing ones check authorization themselves. */
static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Interval", "t", property_get_interval, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("WaitingGoals", "a(sss)", property_get_waiting_goals, 0, 0),
	SD_BUS_METHOD_WITH_ARGS("ListDevices", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sso)", devices),
				method_list_devices, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetDevice", SD_BUS_ARGS("s", device), SD_BUS_RESULT("o", path),
				method_get_device, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ExportProfile", SD_BUS_ARGS("s", device), SD_BUS_RESULT("s", profile),
				method_export_profile, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SetGoal", SD_BUS_ARGS("s", device, "s", goal), SD_BUS_NO_RESULT,
				method_set_goal, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ClearGoal", SD_BUS_ARGS("s", device), SD_BUS_NO_RESULT,
				method_clear_goal, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SetWeight", SD_BUS_ARGS("s", device, "s", cgroup, "u", weight), SD_BUS_NO_RESULT,
				method_set_weight, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ClearWeight", SD_BUS_ARGS("s", device, "s", cgroup), SD_BUS_NO_RESULT,
				method_clear_weight, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Pause", SD_BUS_ARGS("s", device), SD_BUS_NO_RESULT,
				method_pause, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Resume", SD_BUS_ARGS("s", device), SD_BUS_NO_RESULT,
				method_resume, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Reset", SD_BUS_ARGS("s", device), SD_BUS_NO_RESULT,
				method_reset, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("DeviceAdded", SD_BUS_ARGS("s", name, "o", path), 0),
	SD_BUS_SIGNAL_WITH_ARGS("DeviceRemoved", SD_BUS_ARGS("s", name, "o", path), 0),
	SD_BUS_VTABLE_END
};

static void on_device_added(struct device *d, void *userdata)
{
	int r = bus_device_add(userdata, d, true);

	if (r < 0)
		log_warning_errno(r, "Failed to put %s on the bus: %m", device_name(d));
}

static void on_device_removed(struct device *d, void *userdata)
{
	bus_device_remove(userdata, d);
}

static void on_interval(struct device *d, void *userdata)
{
	bus_device_interval(userdata, d);
}

static void on_targets_changed(struct device *d, const struct kyber_targets *old,
			       const struct kyber_targets *new, const char *reason, void *userdata)
{
	bus_device_targets_changed(userdata, d, old, new, reason);
}

static void on_goal_violated(struct device *d, uint64_t metric_ns, uint64_t goal_ns, void *userdata)
{
	bus_device_goal_violated(userdata, d, metric_ns, goal_ns);
}

/* Without the bus nobody can control the tuner: stop (rolling back as
 * configured) and let the service manager restart us. */
static int on_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	struct bus *b = userdata;

	log_error("Lost the connection to the system bus; stopping");
	return sd_event_exit(b->event, -ECONNRESET);
}

int bus_start(struct bus **ret, sd_event *event, struct manager *m)
{
	struct manager_callbacks cb = {
		.device_added = on_device_added,
		.device_removed = on_device_removed,
		.interval = on_interval,
		.targets_changed = on_targets_changed,
		.goal_violated = on_goal_violated,
	};
	struct bus *b;
	const char *what;
	int r;

	*ret = NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return log_oom();
	b->m = m;
	b->event = sd_event_ref(event);

	what = "connect to the system bus";
	r = sd_bus_open_system(&b->bus);
	if (r < 0)
		goto fail;
	what = "register the Manager object";
	r = sd_bus_add_object_vtable(b->bus, NULL, BUS_PATH, BUS_MANAGER_INTERFACE, manager_vtable, b);
	if (r < 0)
		goto fail;
	what = "register the Device objects";
	r = sd_bus_add_fallback_vtable(b->bus, NULL, BUS_DEVICE_PATH_PREFIX, BUS_DEVICE_INTERFACE,
				       bus_device_vtable, bus_device_find, b);
	if (r >= 0)
		r = sd_bus_add_node_enumerator(b->bus, NULL, BUS_DEVICE_PATH_PREFIX, bus_device_enumerate, b);
	if (r >= 0)
		r = sd_bus_add_object_manager(b->bus, NULL, BUS_PATH);
	if (r < 0)
		goto fail;
	what = "watch for the bus going away";
	r = sd_bus_match_signal(b->bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
				"org.freedesktop.DBus.Local", "Disconnected", on_disconnected, b);
	if (r < 0)
		goto fail;
	what = "set up authorization";
	r = bus_auth_new(&b->auth, b->bus);
	if (r < 0)
		goto fail;
	/* Devices tuned before the bus came up (command line, configuration). */
	what = "register the devices";
	for (size_t i = 0; i < manager_n_devices(m); i++) {
		r = bus_device_add(b, manager_device(m, i), false);
		if (r < 0)
			goto fail;
	}
	what = "attach the bus to the event loop";
	r = sd_bus_attach_event(b->bus, event, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0)
		goto fail;
	what = "own " BUS_NAME;
	r = sd_bus_request_name(b->bus, BUS_NAME, 0);
	if (r < 0)
		goto fail;
	cb.userdata = b;
	manager_set_callbacks(m, &cb);
	*ret = b;
	return 0;
fail:
	if (r == -EEXIST && strcmp(what, "own " BUS_NAME) == 0)
		log_error("Failed to own %s: another kyber-tuned is running", BUS_NAME);
	else if (r == -EACCES && strcmp(what, "own " BUS_NAME) == 0)
		log_error("Failed to own %s: not allowed (is the D-Bus policy %s.conf installed?)",
			  BUS_NAME, BUS_NAME);
	else
		log_error_errno(r, "Failed to %s: %m", what);
	bus_free(b);
	return r;
}

struct bus *bus_free(struct bus *b)
{
	if (!b)
		return NULL;
	/* The manager outlives us: no more calls into freed memory. */
	manager_set_callbacks(b->m, &(struct manager_callbacks) {});
	b->auth = bus_auth_free(b->auth);
	b->bus = sd_bus_flush_close_unref(b->bus);
	bus_device_free_all(b);
	sd_event_unref(b->event);
	free(b);
	return NULL;
}
