/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "log.h"

static int max_level = LOG_LEVEL_INFO;
static const char *log_prefix;
static log_sink_t sink;

void log_set_max_level(int level)
{
	max_level = level;
}

int log_get_max_level(void)
{
	return max_level;
}

void log_set_prefix(const char *prefix)
{
	log_prefix = prefix;
}

int log_level_from_string(const char *s)
{
	static const struct {
		const char *name;
		int level;
	} table[] = {
		{ "err", LOG_LEVEL_ERR }, { "error", LOG_LEVEL_ERR },
		{ "warning", LOG_LEVEL_WARNING }, { "notice", LOG_LEVEL_NOTICE },
		{ "info", LOG_LEVEL_INFO }, { "debug", LOG_LEVEL_DEBUG },
	};

	for (size_t i = 0; i < ELEMENTSOF(table); i++)
		if (strcasecmp(s, table[i].name) == 0)
			return table[i].level;
	return -EINVAL;
}

void log_set_sink(log_sink_t s)
{
	sink = s;
}

int log_internalv(int level, int error, const struct log_meta *meta, const char *fmt, va_list ap)
{
	int e = error < 0 ? -error : error;
	char msg[2048];

	if (level > max_level)
		return error < 0 ? error : -e;
	/* %m in fmt refers to the error passed in, not a stale errno. */
	errno = e;
	if (sink) {
		vsnprintf(msg, sizeof(msg), fmt, ap);
		sink(level, e, meta, msg);
	} else {
		if (log_prefix)
			fprintf(stderr, "%s: ", log_prefix);
		if (meta && meta->device)
			fprintf(stderr, "%s: ", meta->device);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	return error < 0 ? error : -e;
}

int log_internal_meta(int level, int error, const struct log_meta *meta, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = log_internalv(level, error, meta, fmt, ap);
	va_end(ap);
	return r;
}
