/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who may change kyber-tuned's settings over D-Bus: a caller with
 * effective uid 0, or one polkit authorizes for the method's action.
 * polkit is asked asynchronously: the method handler returns and is called
 * again with the same message when the answer is in, so the tuner's event
 * loop never waits on polkit (or on a person typing a password).
 */
#pragma once

#include <systemd/sd-bus.h>

struct bus_auth;

int bus_auth_new(struct bus_auth **ret, sd_bus *bus);
/* Drops pending queries; their callers get no answer (we are exiting). */
struct bus_auth *bus_auth_free(struct bus_auth *a);

/*
 * Returns 1 when the sender of msg may do action; 0 when polkit was asked
 * and handler(msg, userdata) will be called again once it answered (the
 * caller must return 1 and not reply); < 0 with error set when denied
 * (org.freedesktop.DBus.Error.AccessDenied naming what is needed) or the
 * check failed. Call before changing anything.
 */
int bus_auth_check(struct bus_auth *a, sd_bus_message *msg, const char *action,
		   sd_bus_message_handler_t handler, void *userdata, sd_bus_error *error);
