/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <time.h>

/* The clock's time in ns: CLOCK_MONOTONIC for intervals, CLOCK_REALTIME
 * for timestamps that leave the process (JSON lines, the flight record). */
static inline uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
