/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for uevent_parse() (daemon/uevent.c): the kernel's
 * device events, read from a netlink socket. Besides not crashing, what
 * parses must be a sane name: not empty, NUL-terminated, no '/', not "."
 * or "..".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "uevent.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uevent ev;

	if (uevent_parse((const char *)data, size, &ev) < 0)
		return 0;
	if (!ev.name[0] || strnlen(ev.name, sizeof(ev.name)) == sizeof(ev.name) || strchr(ev.name, '/') ||
	    strcmp(ev.name, ".") == 0 || strcmp(ev.name, "..") == 0)
		abort();
	return 0;
}
