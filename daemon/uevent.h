/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's block device events (NETLINK_KOBJECT_UEVENT): a message is
 * "ACTION@DEVPATH" then KEY=VALUE strings, each NUL-terminated. Pure: the
 * parser is unit-tested and fuzzed (tests/fuzz/fuzz-uevent.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum device_event_action {
	DEVICE_EVENT_ADD,
	DEVICE_EVENT_CHANGE,		/* a loop device attached or detached, media changed */
	DEVICE_EVENT_REMOVE,
	DEVICE_EVENT_LOST,		/* events were dropped: look at every device again */
	DEVICE_EVENT_OTHER,		/* bind, move, online...: nothing to do */
};

struct uevent {
	enum device_event_action action;
	bool disk;			/* SUBSYSTEM=block, DEVTYPE=disk */
	char name[64];			/* the sysfs name: DEVPATH's last part */
	uint64_t diskseq;		/* 0: none given */
};

/* 0, or -EBADMSG when buf is not a uevent: no "@" header, a header that
 * disagrees with ACTION= or DEVPATH=, a field not NUL-terminated, a name
 * that is empty, too long or "." or "..". Non-block events parse with
 * disk false. */
int uevent_parse(const char *buf, size_t len, struct uevent *out);
