/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "parse-util.h"

int parse_u64_strict(const char *s, bool allow_newline, uint64_t *ret)
{
	uint64_t v = 0;
	const char *p;

	if (!s || !*s)
		return -EINVAL;
	for (p = s; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (p == s)
		return -EINVAL;
	if (allow_newline && *p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*ret = v;
	return 0;
}

/*
 * A decimal number with an optional fraction, parsed by hand (no strtod):
 * locale-independent, and it rejects "inf", "nan", hex, exponents and signs.
 * Returns the value as mantissa/10^frac_digits.
 */
static int parse_decimal(const char **s, uint64_t *mant, unsigned *frac_digits)
{
	const char *p = *s;
	uint64_t m = 0;
	unsigned frac = 0;
	bool digits = false, dot = false;

	for (;; p++) {
		if (*p >= '0' && *p <= '9') {
			unsigned d = (unsigned)(*p - '0');

			digits = true;
			if (dot && frac >= 9)
				continue;	/* beyond ns precision: ignore */
			if (m > (UINT64_MAX - d) / 10)
				return -ERANGE;
			m = m * 10 + d;
			if (dot)
				frac++;
		} else if (*p == '.' && !dot) {
			dot = true;
		} else
			break;
	}
	if (!digits)
		return -EINVAL;
	*s = p;
	*mant = m;
	*frac_digits = frac;
	return 0;
}

static int scale(uint64_t mant, unsigned frac, uint64_t unit, uint64_t *ret)
{
	uint64_t div = 1;

	for (unsigned i = 0; i < frac; i++)
		div *= 10;
	/* mant * unit / div without overflow where possible */
	if (unit % div == 0) {
		uint64_t u = unit / div;

		if (u && mant > UINT64_MAX / u)
			return -ERANGE;
		*ret = mant * u;
		return 0;
	}
	if (mant > UINT64_MAX / unit) {
		long double v = (long double)mant * unit / div;

		if (v > (long double)UINT64_MAX)
			return -ERANGE;
		*ret = (uint64_t)v;
		return 0;
	}
	*ret = mant * unit / div;
	return 0;
}

int parse_duration_ns(const char *s, uint64_t default_unit_ns, uint64_t *ret)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {
		{ "ns", 1 }, { "us", NSEC_PER_USEC }, { "\xc2\xb5s", NSEC_PER_USEC },
		{ "ms", NSEC_PER_MSEC }, { "s", NSEC_PER_SEC },
	};
	uint64_t mant, unit = 0;
	unsigned frac;
	int r;

	if (!s)
		return -EINVAL;
	if (*s == '-')
		return -ERANGE;
	r = parse_decimal(&s, &mant, &frac);
	if (r < 0)
		return r;
	if (!*s)
		unit = default_unit_ns;
	else
		for (size_t i = 0; i < ELEMENTSOF(units); i++)
			if (strcmp(s, units[i].suffix) == 0) {
				unit = units[i].ns;
				break;
			}
	if (!unit)
		return -EINVAL;
	return scale(mant, frac, unit, ret);
}

int parse_count_si(const char *s, uint64_t *ret)
{
	uint64_t mant, unit = 1;
	unsigned frac;
	int r;

	if (!s)
		return -EINVAL;
	if (*s == '-')
		return -ERANGE;
	r = parse_decimal(&s, &mant, &frac);
	if (r < 0)
		return r;
	if (*s) {
		if (s[1])
			return -EINVAL;
		switch (*s) {
		case 'k': case 'K': unit = 1000; break;
		case 'M': unit = 1000000; break;
		case 'G': unit = 1000000000; break;
		default: return -EINVAL;
		}
	}
	return scale(mant, frac, unit, ret);
}

static void format_3sig(char *buf, size_t n, double v, const char *unit)
{
	if (v >= 100)
		snprintf(buf, n, "%.0f%s", v, unit);
	else if (v >= 10)
		snprintf(buf, n, "%.1f%s", v, unit);
	else
		snprintf(buf, n, "%.2f%s", v, unit);
}

char *format_duration(char *buf, size_t n, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, n, "%lluns", (unsigned long long)ns);
	else if (ns < 999500)
		format_3sig(buf, n, ns / 1e3, "us");
	else if (ns < 999500000)
		format_3sig(buf, n, ns / 1e6, "ms");
	else
		format_3sig(buf, n, ns / 1e9, "s");
	return buf;
}

char *format_count_si(char *buf, size_t n, double v)
{
	if (!isfinite(v) || v < 0)
		snprintf(buf, n, "-");
	else if (v < 1000)
		snprintf(buf, n, "%.0f", v);
	else if (v < 999500)
		format_3sig(buf, n, v / 1e3, "k");
	else
		format_3sig(buf, n, v / 1e6, "M");
	return buf;
}

size_t utf8_sequence_len(const char *text, size_t n)
{
	const unsigned char *s = (const unsigned char *)text;
	unsigned char c = s[0];
	size_t len;

	if (!n)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, UTF-16 surrogates, beyond U+10FFFF. */
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
		return 0;
	return len;
}

bool utf8_valid(const char *s, size_t n)
{
	for (size_t i = 0, len; i < n; i += len) {
		len = utf8_sequence_len(s + i, n - i);
		if (!len)
			return false;
	}
	return true;
}
