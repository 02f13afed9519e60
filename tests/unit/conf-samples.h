/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers for the unit tests of daemon/conf.c and conf-load.c
 * (test-conf.c, test-conf-load.c): warnings go to stderr (log.c), and
 * are captured through a temp file so that their exact text can be
 * checked. Include after cmocka.h.
 */
#pragma once

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"

static int saved_stderr = -1;
static FILE *capture;
static char captured[16384];

static inline void capture_begin(void)
{
	fflush(stderr);
	capture = tmpfile();
	assert_non_null(capture);
	saved_stderr = dup(STDERR_FILENO);
	assert_true(saved_stderr >= 0);
	assert_true(dup2(fileno(capture), STDERR_FILENO) >= 0);
}

/* Everything logged since capture_begin(). */
static inline const char *capture_end(void)
{
	size_t n;

	fflush(stderr);
	assert_true(dup2(saved_stderr, STDERR_FILENO) >= 0);
	close(saved_stderr);
	rewind(capture);
	n = fread(captured, 1, sizeof(captured) - 1, capture);
	captured[n] = 0;
	fclose(capture);
	return captured;
}

/* Parse text as "t.conf" into a fresh c; returns the warnings logged. */
static inline const char *parse(struct conf *c, const char *text)
{
	memset(c, 0, sizeof(*c));
	capture_begin();
	assert_int_equal(conf_parse_text(c, text, strlen(text), "t.conf"), 0);
	return capture_end();
}
