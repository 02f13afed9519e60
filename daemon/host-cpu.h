/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host's CPU time, from /proc/stat's "cpu" line (all CPUs, in
 * USER_HZ ticks): how much of it the hypervisor took (steal). A stalled
 * VM slows every request's host path (a FUSE device, a loop worker, the
 * completion), so the controller weighs what it saw in such an interval
 * differently. Pure: the parser is unit-tested and fuzzed.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct host_cpu_time {
	uint64_t total;			/* every field of the line summed */
	uint64_t steal;			/* the 8th field; 0 where the kernel has none */
};

/* The "cpu " line of a /proc/stat text (not NUL-terminated, len bytes):
 * 0, or -EBADMSG when it is missing, has fewer than 4 fields, a field that
 * is not a decimal number, or a sum that overflows. */
int host_cpu_parse(const char *text, size_t len, struct host_cpu_time *out);

/* The share of the CPUs' time the hypervisor took between two readings,
 * 0..1; 0 when nothing elapsed or the counters went backwards (a reading
 * missing, a counter reset). */
double host_cpu_steal_share(const struct host_cpu_time *prev, const struct host_cpu_time *cur);
