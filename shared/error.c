/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "bus-api.h"
#include "error.h"

/* The D-Bus error name of each errno a request can fail with; Failed otherwise. */
static const struct {
	int errnum;
	const char *name;
} error_names[] = {
	{ ENODEV, BUS_ERROR_NO_SUCH_DEVICE },		/* no such disk, or no goal on it */
	{ ENOENT, BUS_ERROR_NO_SUCH_DEVICE },		/* its /dev node or sysfs entry is gone */
	{ EINVAL, SD_BUS_ERROR_INVALID_ARGS },		/* a malformed goal or device name */
	{ EISDIR, SD_BUS_ERROR_INVALID_ARGS },		/* a partition */
	{ ENOTBLK, SD_BUS_ERROR_INVALID_ARGS },		/* not a block device */
	{ ENAMETOOLONG, SD_BUS_ERROR_INVALID_ARGS },
	{ EOPNOTSUPP, SD_BUS_ERROR_NOT_SUPPORTED },	/* not blk-mq, or no Kyber */
	{ ENOSPC, SD_BUS_ERROR_LIMITS_EXCEEDED },	/* beyond MaxDevices */
	{ ENOMEM, SD_BUS_ERROR_NO_MEMORY },
};

static const char *error_name(int r)
{
	for (size_t i = 0; i < ELEMENTSOF(error_names); i++)
		if (error_names[i].errnum == -r)
			return error_names[i].name;
	return SD_BUS_ERROR_FAILED;
}

int error_setf(sd_bus_error *e, int r, const char *fmt, ...)
{
	va_list ap;

	if (e && !sd_bus_error_is_set(e)) {
		va_start(ap, fmt);
		(void)sd_bus_error_setfv(e, error_name(r), fmt, ap);
		va_end(ap);
	}
	return r;
}

const char *error_message(const sd_bus_error *e, int r)
{
	return e && sd_bus_error_is_set(e) && e->message ? e->message : strerror(-r);
}
