/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's state: shared by manager.c (devices, requests) and
 * manager-previous.c (what a previous instance left), and nothing else. */
#pragma once

#include "manager.h"
#include "state.h"

struct manager {
	struct manager_options o;
	char *sysroot, *debugfs, *state_dir, *runtime_dir, *record_path;	/* owned copies */
	sd_event *event;
	sd_event_source *tick;		/* off while no device is tuned */
	struct observer *observer;
	struct device **devs;
	size_t n_devs;
	struct manager_callbacks cb;
	struct recorder *recorder;
	struct state state;		/* goals set at run time, learned state */
	struct originals originals;	/* what to restore, also after a crash */
	char *state_path, *originals_path;	/* NULL: not kept */
};

/* Writes the originals file (a device's save_originals callback). */
void manager_save_originals(void *owner);
