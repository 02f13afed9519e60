/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Logging. stderr by default; the functions ending in _errno take a
 * negative errno, make it available to %m and return it, so callers can
 * write "return log_error_errno(r, "Failed to open %s: %m", path);".
 */
#pragma once

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

int log_internal(int level, int error, const char *fmt, ...) _printf_(3, 4);
int log_internalv(int level, int error, const char *fmt, va_list ap) _printf_(3, 0);

#define log_error(...)		log_internal(LOG_LEVEL_ERR, 0, __VA_ARGS__)
#define log_warning(...)	log_internal(LOG_LEVEL_WARNING, 0, __VA_ARGS__)
#define log_notice(...)		log_internal(LOG_LEVEL_NOTICE, 0, __VA_ARGS__)
#define log_info(...)		log_internal(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...)		log_internal(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
#define log_error_errno(e, ...)	log_internal(LOG_LEVEL_ERR, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_LEVEL_WARNING, (e), __VA_ARGS__)
#define log_debug_errno(e, ...)	log_internal(LOG_LEVEL_DEBUG, (e), __VA_ARGS__)
