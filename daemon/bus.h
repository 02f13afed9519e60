/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus API on the system bus (docs/dbus.md): org.kybertune.KyberTune1,
 * one Manager object and one Device object per tuned device. Reading is
 * open to everyone; changing needs root or, where polkit runs, its
 * authorization for the action.
 */
#pragma once

#include <stddef.h>

#include <systemd/sd-event.h>

#include "bus-api.h"
#include "manager.h"


struct bus;

/*
 * Connect to the system bus (DBUS_SYSTEM_BUS_ADDRESS is honoured), attach
 * to the event loop, register the objects, take over the manager's
 * callbacks and request the name. On failure -errno, the cause logged.
 */
int bus_start(struct bus **ret, sd_event *event, struct manager *m);
struct bus *bus_free(struct bus *b);
