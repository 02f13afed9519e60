/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared between bus.c (connection, Manager object) and bus-device.c
 * (the Device objects). */
#pragma once

#include <stdbool.h>

#include <systemd/sd-bus.h>

#include "bus.h"
#include "device.h"
#include "manager.h"

struct bus_auth;

/* One Device object. */
struct bus_device {
	struct bus *bus;
	struct device *d;
	char *path;
	/* What the last PropertiesChanged announced (reason copied: the
	 * device rewrites its buffer in place). */
	bool announced;
	struct device_status last;
	char last_reason[256];
};

struct bus {
	sd_bus *bus;
	sd_event *event;
	struct manager *m;
	struct bus_auth *auth;
	struct bus_device **devs;
	size_t n_devs;
};

extern const sd_bus_vtable bus_device_vtable[];

int bus_device_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
		    void **ret_found, sd_bus_error *error);
int bus_device_enumerate(sd_bus *bus, const char *prefix, void *userdata, char ***ret_nodes,
			 sd_bus_error *error);

struct bus_device *bus_device_get(const struct bus *b, const struct device *d);
/* Registers d (idempotent); announce: emit InterfacesAdded and DeviceAdded. */
int bus_device_add(struct bus *b, struct device *d, bool announce);
void bus_device_remove(struct bus *b, struct device *d);
void bus_device_free_all(struct bus *b);

/* Manager callbacks for one device. */
void bus_device_interval(struct bus *b, struct device *d);
void bus_device_targets_changed(struct bus *b, struct device *d, const struct kyber_targets *old,
				const struct kyber_targets *new, const char *reason);
void bus_device_goal_violated(struct bus *b, struct device *d, uint64_t metric_ns, uint64_t goal_ns);
