/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Logging. stderr by default, or a sink (log-journal.c: the journal, with
 * structured fields). The functions ending in _errno take a negative
 * errno, make it available to %m and return it, so callers can write
 * "return log_error_errno(r, "Failed to open %s: %m", path);". The log_dev_
 * ones are about one device: the message starts with its name on stderr,
 * and the journal gets it as KYBER_DEVICE= to filter on.
 */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include "macro.h"

enum log_level {
	LOG_LEVEL_ERR = 3,
	LOG_LEVEL_WARNING = 4,
	LOG_LEVEL_NOTICE = 5,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

void log_set_max_level(int level);
int log_get_max_level(void);
int log_level_from_string(const char *s);
void log_set_prefix(const char *prefix);

/* Where a message came from and what it is about; any field may be NULL. */
struct log_meta {
	const char *file, *func;
	int line;
	const char *device;		/* KYBER_DEVICE= */
	const char *message_id;		/* MESSAGE_ID= (32 hex digits) */
	const char *const *fields;	/* more "KEY=value" journal fields, NULL-terminated */
};

/* Receives every message at or below the maximum level, formatted. */
typedef void (*log_sink_t)(int level, int error, const struct log_meta *meta, const char *message);
void log_set_sink(log_sink_t sink);

int log_internal_meta(int level, int error, const struct log_meta *meta, const char *fmt, ...)
	_printf_(4, 5);
int log_internalv(int level, int error, const struct log_meta *meta, const char *fmt, va_list ap)
	_printf_(4, 0);

#define LOG_META_FIELDS(dev, id, f) \
	(&(const struct log_meta) { __FILE__, __func__, __LINE__, (dev), (id), (f) })
#define LOG_META(dev, id) LOG_META_FIELDS(dev, id, NULL)
#define log_internal(level, error, ...) log_internal_meta((level), (error), LOG_META(NULL, NULL), __VA_ARGS__)

/* Message ids of the events worth finding in the journal. */
#define LOG_MESSAGE_TARGETS_CHANGED	"091c90aed03643d7b2931618a9dcd061"
#define LOG_MESSAGE_STATE_CHANGED	"6b314ed4989842c39b13146eedd21eec"
#define LOG_MESSAGE_OVERRIDDEN		"9bb48ed0348d4785b065791c265e9d32"
#define LOG_MESSAGE_RESTORED		"1674a13f0db943dcb4434d0650ffd7ae"
#define LOG_MESSAGE_SCHEDULER_CHANGED	"2e8ca75b47474f15b9395f3ae61c722c"

#define log_error(...)		log_internal(LOG_LEVEL_ERR, 0, __VA_ARGS__)
#define log_warning(...)	log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_notice(...)		log_internal(LOG_LEVEL_NOTICE, 0, __VA_ARGS__)
#define log_info(...)		log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...)		log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
#define log_error_errno(e, ...)	log_internal(LOG_LEVEL_ERR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_debug_errno(e, ...)	log_internal(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)
/* -ENOMEM, logged. */
#define log_oom()		log_error_errno(-ENOMEM, "Out of memory")

#define log_dev(level, error, dev, ...) log_internal_meta((level), (error), LOG_META((dev), NULL), __VA_ARGS__)
#define log_dev_event(level, dev, id, ...) log_internal_meta((level), 0, LOG_META((dev), (id)), __VA_ARGS__)
/* An event with more journal fields (stderr shows the message only). */
#define log_dev_event_fields(level, dev, id, fields, ...) \
	log_internal_meta((level), 0, LOG_META_FIELDS((dev), (id), (fields)), __VA_ARGS__)
#define log_dev_error_errno(dev, e, ...)	log_dev(LOG_LEVEL_ERR, (e), (dev), __VA_ARGS__)
#define log_dev_warning(dev, ...)		log_dev(LOG_LEVEL_WARNING, 0, (dev), __VA_ARGS__)
#define log_dev_warning_errno(dev, e, ...)	log_dev(LOG_LEVEL_WARNING, (e), (dev), __VA_ARGS__)
#define log_dev_notice(dev, ...)		log_dev(LOG_LEVEL_NOTICE, 0, (dev), __VA_ARGS__)
#define log_dev_info(dev, ...)			log_dev(LOG_LEVEL_INFO, 0, (dev), __VA_ARGS__)
#define log_dev_debug(dev, ...)			log_dev(LOG_LEVEL_DEBUG, 0, (dev), __VA_ARGS__)
