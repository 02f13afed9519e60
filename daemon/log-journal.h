/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "log.h"

/* If stderr is the journal stream systemd set up, send log messages to
 * the journal with structured fields from now on: 1; otherwise 0. */
int log_open_journal(const char *identifier);
