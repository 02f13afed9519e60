/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared between conf.c (one file's text, line by line) and conf-load.c
 * (the files and drop-ins, and the check across them), and nothing else. */
#pragma once

#include <stddef.h>

#include "conf.h"

/* Where Interval= and Settle= were last set ("FILE:LINE"), for the check
 * across files. */
struct conf_origin {
	char *interval, *settle;
};

/* conf_parse_text(), also recording in origin where Interval= and Settle=
 * were set (replacing what it held). -ENOMEM only. */
int conf_parse_text_origin(struct conf *c, const char *text, size_t len, const char *name,
			   struct conf_origin *origin);
