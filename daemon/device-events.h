/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Disks appearing, changing and going away. Where udev runs, its events
 * (sd-device monitor): they come after udev's rules, which may set a
 * scheduler themselves, and after its /dev/disk links exist. Without
 * udev (containers, initrd-less test machines), the kernel's own uevents.
 */
#pragma once

#include <systemd/sd-event.h>

#include "uevent.h"

enum device_events_source {
	DEVICE_EVENTS_AUTO,		/* udev when /run/udev/control exists, else kernel */
	DEVICE_EVENTS_UDEV,
	DEVICE_EVENTS_KERNEL,
	DEVICE_EVENTS_OFF,
	_DEVICE_EVENTS_MAX,
};

/* "auto", "udev", "kernel", "off"; -EINVAL for anything else. */
int device_events_source_from_string(const char *s, enum device_events_source *ret);

/* name: a whole disk's sysfs name; NULL with DEVICE_EVENT_LOST. */
typedef void (*device_event_handler)(enum device_event_action action, const char *name, void *userdata);

struct device_events;

/* -errno, the cause logged. OFF gives *ret = NULL and 0. */
int device_events_new(struct device_events **ret, sd_event *event, enum device_events_source source,
		      device_event_handler cb, void *userdata);
struct device_events *device_events_free(struct device_events *e);
