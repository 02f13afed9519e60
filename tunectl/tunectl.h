/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kyber-tunectl's parts: options, D-Bus helpers (tunectl-bus.c), the
 * verbs (tunectl.c, tunectl-monitor.c, tunectl-replay.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <systemd/sd-bus.h>

#include "bus-api.h"
#include "tunectl-format.h"

#define EXIT_USAGE 2

extern bool arg_json;
extern bool arg_ask_password;
extern bool arg_utf8;

/* Connects to the system bus; 0 or an exit status (cause logged). */
int connect_bus(sd_bus **ret);
/* One line on stderr for a failed call (daemon not running, access
 * denied, the daemon's own sentence...); returns the exit status 1. */
int call_failed(const char *what, const sd_bus_error *e, int r);
/* The Device properties of path. The strings in s point into *ret_reply:
 * keep it until s is printed. Errors are logged. */
int get_status(sd_bus *bus, const char *path, sd_bus_message **ret_reply, struct tf_status *s);
/* The object path of DEV (a name or /dev path), strdup'ed. Errors are logged. */
int get_device_path(sd_bus *bus, const char *dev, char **ret);
/* Every tuned device's object path, a NULL-terminated array. Errors are logged. */
int list_paths(sd_bus *bus, char ***ret, size_t *ret_n);
/* Calls fn for each goal waiting for its disk (WaitingGoals); stops at
 * fn's first error. Errors are logged. */
int for_each_waiting(sd_bus *bus, int (*fn)(const char *device, const char *goal, const char *source, void *userdata),
		     void *userdata);
void strv_free(char **v);
/* Logs "Out of memory"; returns the exit status 1. */
int log_oom_status(void);

int verb_monitor(sd_bus *bus, int argc, char **argv);
int verb_replay(sd_bus *bus, int argc, char **argv);
