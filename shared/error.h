/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One convention for failures a user must hear about (a malformed goal, a
 * device that is not a disk, a request the daemon refuses): the function
 * returns -errno and, where the cause needs a sentence, fills an
 * sd_bus_error with it. The sentence is said once, where the failure is
 * reported: the bus returns the sd_bus_error as the method's error, every
 * other caller (configuration, command line, --observe) logs its message.
 * A caller that wants only the errno passes NULL. Internal failures that
 * nobody asked for are logged where they happen (log_error_errno()).
 *
 * The D-Bus error name follows the errno, by the table in error.c
 * (docs/dbus.md, "Errors"), so the name and the errno cannot disagree.
 */
#pragma once

#include <systemd/sd-bus.h>

#include "macro.h"

/* Fills e (unless NULL) with the name for r and the formatted sentence; returns r (< 0). */
int error_setf(sd_bus_error *e, int r, const char *fmt, ...) _printf_(3, 4);

/* What to log for a failure r reported through e: its sentence, or strerror. */
const char *error_message(const sd_bus_error *e, int r);
