/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where kernel functions lie, from /proc/kallsyms: a function runs from
 * its address to the next text symbol's. Pure: reads the stream it is
 * given.
 */
#pragma once

#include <stdint.h>
#include <stdio.h>

struct ksym_range {
	uint64_t start, end;	/* [start, end); 0, 0: not found */
};

/* Finds names[0..n) among the text symbols of f (kallsyms' format,
 * "ADDR TYPE NAME [MODULE]"), rewinding it once. Returns how many were
 * found, or -errno: -EPERM when every address reads 0 (kptr_restrict, or
 * no CAP_SYSLOG), -EBADMSG on a malformed line. */
int ksym_ranges_find(FILE *f, const char *const *names, size_t n, struct ksym_range *out);
