/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parsing and formatting of numbers, durations and rates. Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

/* Strict decimal u64: digits only, no sign, no spaces; one trailing '\n'
 * allowed when allow_newline (sysfs). -EINVAL on junk, -ERANGE on overflow. */
int parse_u64_strict(const char *s, bool allow_newline, uint64_t *ret);

/* "100us", "2ms", "1.5s", "250ns", "10" (default_unit_ns applies). Units:
 * ns, us (also µs), ms, s. Result in ns; -EINVAL on junk or a missing unit
 * when default_unit_ns is 0, -ERANGE on overflow or a negative value. */
int parse_duration_ns(const char *s, uint64_t default_unit_ns, uint64_t *ret);

/* "20k", "1.5M", "300": a count with an optional k/M/G (x1000) suffix. */
int parse_count_si(const char *s, uint64_t *ret);

/* Strict UTF-8: no overlong forms, no surrogates, nothing above
 * U+10FFFF, no truncated sequence at the end. */
bool utf8_valid(const char *s, size_t n);
/* Bytes in the valid UTF-8 sequence at s (1-4, within n), 0 if invalid. */
size_t utf8_sequence_len(const char *s, size_t n);

/* Human-readable duration with 3 significant digits: "95.2us", "1.84ms". */
char *format_duration(char *buf, size_t n, uint64_t ns);
/* "16.0k", "950", "1.20M". */
char *format_count_si(char *buf, size_t n, double v);

#define DURATION_BUF_MAX 24
