/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kyber-tunectl: talking to kyber-tuned over the system bus. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "tunectl.h"

static bool error_not_running(const sd_bus_error *e)
{
	return sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER) ||
	       (e->name && (strncmp(e->name, "org.freedesktop.DBus.Error.Spawn.", 33) == 0 ||
			    strncmp(e->name, "org.freedesktop.systemd1.", 25) == 0));
}

int call_failed(const char *what, const sd_bus_error *e, int r)
{
	if (error_not_running(e))
		log_error("kyber-tuned is not running (" BUS_NAME " is not on the system bus)");
	else if (sd_bus_error_has_name(e, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED) ||
		 (sd_bus_error_has_name(e, SD_BUS_ERROR_ACCESS_DENIED) && e->message &&
		  strstr(e->message, "kyber-tuned's settings")))
		log_error("Access denied: changing kyber-tuned's settings needs root or polkit authorization");
	else if (sd_bus_error_has_name(e, SD_BUS_ERROR_ACCESS_DENIED))
		/* The bus refused: its policy (org.kybertune.KyberTune1.conf) is missing or differs. */
		log_error("Access denied: %s", e->message ?: "refused by the bus");
	else if (sd_bus_error_has_names(e, SD_BUS_ERROR_INVALID_ARGS, BUS_ERROR_NO_SUCH_DEVICE))
		log_error("%s", e->message ?: e->name);	/* the daemon's sentence names the cause */
	else if (e->message)
		log_error("Failed to %s: %s", what, e->message);
	else
		log_error_errno(r, "Failed to %s: %m", what);
	return 1;
}

int connect_bus(sd_bus **ret)
{
	int r = sd_bus_open_system(ret);

	if (r < 0) {
		log_error_errno(r, "Failed to connect to the system bus (is D-Bus running? kyber-tuned serves its API there): %m");
		return 1;
	}
	(void)sd_bus_set_allow_interactive_authorization(*ret, arg_ask_password && isatty(STDIN_FILENO));
	return 0;
}

/* The Device properties (shared/bus-api.h) and where each goes. */
static const struct {
	const char *name;
	char type;
	size_t offset;
} status_props[] = {
#define STATUS_PROP(id, member, sig, kind, field) { member, sig[0], offsetof(struct tf_status, field) },
	BUS_DEVICE_PROPERTIES(STATUS_PROP)
#undef STATUS_PROP
};

static int read_status_props(sd_bus_message *reply, struct tf_status *s)
{
	int r;

	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key, *contents;
		size_t i;

		r = sd_bus_message_read(reply, "s", &key);
		if (r < 0)
			return r;
		r = sd_bus_message_peek_type(reply, NULL, &contents);
		if (r < 0)
			return r;
		for (i = 0; i < ELEMENTSOF(status_props); i++)
			if (strcmp(status_props[i].name, key) == 0)
				break;
		/* Unknown or retyped properties (a newer daemon) are skipped. */
		if (i == ELEMENTSOF(status_props) || contents[0] != status_props[i].type || contents[1])
			r = sd_bus_message_skip(reply, "v");
		else {
			void *field = (char *)s + status_props[i].offset;
			int b;

			r = sd_bus_message_enter_container(reply, 'v', contents);
			if (r >= 0 && status_props[i].type == 'b') {
				r = sd_bus_message_read_basic(reply, 'b', &b);
				*(bool *)field = b;
			} else if (r >= 0)
				r = sd_bus_message_read_basic(reply, status_props[i].type, field);
			if (r >= 0)
				r = sd_bus_message_exit_container(reply);
		}
		if (r < 0)
			return r;
		r = sd_bus_message_exit_container(reply);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(reply);
}

int get_status(sd_bus *bus, const char *path, sd_bus_message **ret_reply, struct tf_status *s)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	memset(s, 0, sizeof(*s));
	r = sd_bus_call_method(bus, BUS_NAME, path, "org.freedesktop.DBus.Properties", "GetAll", &e,
			       ret_reply, "s", BUS_DEVICE_INTERFACE);
	if (r < 0) {
		call_failed("get the device's properties", &e, r);
		sd_bus_error_free(&e);
		return r;
	}
	r = read_status_props(*ret_reply, s);
	if (r < 0)
		log_error_errno(r, "Failed to parse the properties of %s: %m", path);
	return r;
}

int get_device_path(sd_bus *bus, const char *dev, char **ret)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	const char *path;
	int r;

	r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_MANAGER_INTERFACE, "GetDevice", &e, &reply, "s", dev);
	if (r < 0) {
		call_failed("look up the device", &e, r);
		sd_bus_error_free(&e);
		return r;
	}
	r = sd_bus_message_read(reply, "o", &path);
	if (r < 0)
		return log_error_errno(r, "Failed to parse the reply of GetDevice: %m");
	*ret = strdup(path);
	return *ret ? 0 : -ENOMEM;
}

int list_paths(sd_bus *bus, char ***ret, size_t *ret_n)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	const char *name, *state, *path;
	char **paths = NULL;
	size_t n = 0;
	int r;

	r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_MANAGER_INTERFACE, "ListDevices", &e, &reply, NULL);
	if (r < 0) {
		call_failed("list the devices", &e, r);
		sd_bus_error_free(&e);
		return r;
	}
	r = sd_bus_message_enter_container(reply, 'a', "(sso)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(sso)", &name, &state, &path)) > 0) {
		char **p = realloc(paths, (n + 2) * sizeof(char *));

		if (!p) {
			r = -ENOMEM;
			break;
		}
		paths = p;
		paths[n] = strdup(path);
		if (!paths[n]) {
			r = -ENOMEM;
			break;
		}
		paths[++n] = NULL;
	}
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
		return log_error_errno(r, "Failed to parse the device list: %m");
	}
	*ret = paths;
	*ret_n = n;
	return 0;
}

int for_each_waiting(sd_bus *bus, int (*fn)(const char *device, const char *goal, const char *source, void *userdata),
		     void *userdata)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	const char *device, *goal, *source;
	int r;

	r = sd_bus_get_property(bus, BUS_NAME, BUS_PATH, BUS_MANAGER_INTERFACE, "WaitingGoals", &e, &reply,
				"a(sss)");
	if (r < 0) {
		call_failed("list the goals waiting for their disks", &e, r);
		sd_bus_error_free(&e);
		return r;
	}
	r = sd_bus_message_enter_container(reply, 'a', "(sss)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(sss)", &device, &goal, &source)) > 0) {
		r = fn(device, goal, source, userdata);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return log_error_errno(r, "Failed to parse the goals waiting for their disks: %m");
	return 0;
}

void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

int log_oom_status(void)
{
	log_error("Out of memory");
	return 1;
}
