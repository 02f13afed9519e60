/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cgroup files kyber-tuned limits I/O with (cgroup-parse.h). Pure. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cgroup-parse.h"
#include "macro.h"
#include "parse-util.h"

static const char *const v1_files[_CGROUP_LIMIT_MAX] = {
	[CGROUP_LIMIT_READ_IOPS] = "blkio.throttle.read_iops_device",
	[CGROUP_LIMIT_WRITE_IOPS] = "blkio.throttle.write_iops_device",
	[CGROUP_LIMIT_READ_BPS] = "blkio.throttle.read_bps_device",
	[CGROUP_LIMIT_WRITE_BPS] = "blkio.throttle.write_bps_device",
};

/* io.max's keys, in the order the kernel prints them. */
static const char *const v2_keys[_CGROUP_LIMIT_MAX] = {
	[CGROUP_LIMIT_READ_BPS] = "rbps",
	[CGROUP_LIMIT_WRITE_BPS] = "wbps",
	[CGROUP_LIMIT_READ_IOPS] = "riops",
	[CGROUP_LIMIT_WRITE_IOPS] = "wiops",
};
static const enum cgroup_limit_kind v2_order[_CGROUP_LIMIT_MAX] = {
	CGROUP_LIMIT_READ_BPS, CGROUP_LIMIT_WRITE_BPS, CGROUP_LIMIT_READ_IOPS, CGROUP_LIMIT_WRITE_IOPS,
};

uint64_t *cgroup_limit_field(struct cgroup_limits *l, enum cgroup_limit_kind k)
{
	switch (k) {
	case CGROUP_LIMIT_READ_IOPS:
		return &l->read_iops;
	case CGROUP_LIMIT_WRITE_IOPS:
		return &l->write_iops;
	case CGROUP_LIMIT_READ_BPS:
		return &l->read_bps;
	case CGROUP_LIMIT_WRITE_BPS:
		return &l->write_bps;
	default:
		return NULL;
	}
}

const char *cgroup_v1_limit_file(enum cgroup_limit_kind k)
{
	return (unsigned)k < _CGROUP_LIMIT_MAX ? v1_files[k] : NULL;
}

bool cgroup_limits_equal(const struct cgroup_limits *a, const struct cgroup_limits *b)
{
	return a->read_iops == b->read_iops && a->write_iops == b->write_iops &&
	       a->read_bps == b->read_bps && a->write_bps == b->write_bps;
}

/* The next space-separated field of *p (NUL-terminated in place is not
 * possible on const input: its bounds instead). */
static bool next_field(const char **p, const char **start, size_t *len)
{
	const char *s = *p;

	while (*s == ' ')
		s++;
	if (!*s || *s == '\n')
		return false;
	*start = s;
	while (*s && *s != ' ' && *s != '\n')
		s++;
	*len = (size_t)(s - *start);
	*p = s;
	return true;
}

static bool field_is(const char *f, size_t len, const char *word)
{
	return len == strlen(word) && memcmp(f, word, len) == 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static int unescape_octal(const char *f, size_t len, char *out, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = f[i];

		if (c == '\\' && i + 3 < len && f[i + 1] >= '0' && f[i + 1] <= '3' &&
		    f[i + 2] >= '0' && f[i + 2] <= '7' && f[i + 3] >= '0' && f[i + 3] <= '7') {
			c = (char)((f[i + 1] - '0') * 64 + (f[i + 2] - '0') * 8 + (f[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= n)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = 0;
	return 0;
}

/* Is word one of the comma-separated options in f? */
static bool has_option(const char *f, size_t len, const char *word)
{
	size_t w = strlen(word), i = 0;

	while (i < len) {
		size_t j = i;

		while (j < len && f[j] != ',')
			j++;
		if (j - i == w && memcmp(f + i, word, w) == 0)
			return true;
		i = j + 1;
	}
	return false;
}

int cgroup_parse_mountinfo_line(const char *line, char *mount_point, size_t n, enum cgroup_version *ret,
				bool *blkio)
{
	const char *p = line, *f = NULL, *mnt = NULL;
	size_t len = 0, mnt_len = 0;
	int r;

	/* id parent maj:min root mount-point options [optional...] - type source super */
	for (unsigned i = 0; i < 6; i++) {
		if (!next_field(&p, &f, &len))
			return -EINVAL;
		if (i == 4) {
			mnt = f;
			mnt_len = len;
		}
	}
	do {
		if (!next_field(&p, &f, &len))
			return -EINVAL;
	} while (!field_is(f, len, "-"));
	if (!next_field(&p, &f, &len))
		return -EINVAL;
	if (field_is(f, len, "cgroup2"))
		*ret = CGROUP_V2;
	else if (field_is(f, len, "cgroup"))
		*ret = CGROUP_V1;
	else
		return -ENOENT;
	*blkio = false;
	if (!next_field(&p, &f, &len))	/* source */
		return -EINVAL;
	if (next_field(&p, &f, &len))	/* super options */
		*blkio = *ret == CGROUP_V1 && has_option(f, len, "blkio");
	r = unescape_octal(mnt, mnt_len, mount_point, n);
	return r < 0 ? r : 0;
}

/* "MAJ:MIN" at the start of a line; the rest after it. */
static int parse_devno(const char **p, uint32_t *major, uint32_t *minor)
{
	unsigned maj, min;
	int used = 0;

	if (sscanf(*p, "%u:%u%n", &maj, &min, &used) != 2 || used == 0 || (*p)[0] < '0' || (*p)[0] > '9')
		return -EINVAL;
	*major = maj;
	*minor = min;
	*p += used;
	return 0;
}

/* A decimal value or "max", up to the next blank. */
static int parse_value(const char *f, size_t len, uint64_t *ret)
{
	char buf[24];

	if (field_is(f, len, "max")) {
		*ret = 0;
		return 0;
	}
	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, f, len);
	buf[len] = 0;
	return parse_u64_strict(buf, false, ret);
}

int cgroup_v1_limit_parse(const char *content, uint32_t major, uint32_t minor, uint64_t *ret)
{
	const char *p = content;

	*ret = 0;
	while (*p) {
		const char *f;
		size_t len;
		uint32_t ma, mi;
		uint64_t v;
		int r;

		if (*p == '\n') {
			p++;
			continue;
		}
		r = parse_devno(&p, &ma, &mi);
		if (r < 0 || !next_field(&p, &f, &len))
			return -EINVAL;
		r = parse_value(f, len, &v);
		if (r < 0)
			return -EINVAL;
		while (*p == ' ')
			p++;
		if (*p && *p != '\n')
			return -EINVAL;
		if (ma == major && mi == minor)
			*ret = v;
	}
	return 0;
}

int cgroup_v1_limit_format(char *buf, size_t n, uint32_t major, uint32_t minor, uint64_t value)
{
	int r = snprintf(buf, n, "%" PRIu32 ":%" PRIu32 " %" PRIu64, major, minor, value);

	return r < 0 || (size_t)r >= n ? -ENOBUFS : 0;
}

int cgroup_v2_max_parse(const char *content, uint32_t major, uint32_t minor, struct cgroup_limits *ret)
{
	const char *p = content;

	memset(ret, 0, sizeof(*ret));
	while (*p) {
		struct cgroup_limits l = {};
		const char *f;
		size_t len;
		uint32_t ma, mi;
		int r;

		if (*p == '\n') {
			p++;
			continue;
		}
		r = parse_devno(&p, &ma, &mi);
		if (r < 0)
			return -EINVAL;
		while (next_field(&p, &f, &len)) {
			const char *eq = memchr(f, '=', len);
			unsigned k;

			if (!eq)
				return -EINVAL;
			for (k = 0; k < _CGROUP_LIMIT_MAX; k++)
				if (field_is(f, (size_t)(eq - f), v2_keys[k]))
					break;
			if (k == _CGROUP_LIMIT_MAX)
				return -EINVAL;
			r = parse_value(eq + 1, len - (size_t)(eq - f) - 1, cgroup_limit_field(&l, k));
			if (r < 0)
				return -EINVAL;
		}
		if (*p == '\n')
			p++;
		if (ma == major && mi == minor)
			*ret = l;
	}
	return 0;
}

static const char *value_or_max(char *buf, size_t n, uint64_t v)
{
	if (!v)
		return "max";
	snprintf(buf, n, "%" PRIu64, v);
	return buf;
}

int cgroup_v2_max_format(char *buf, size_t n, uint32_t major, uint32_t minor, const struct cgroup_limits *l)
{
	struct cgroup_limits c = *l;
	size_t o;
	int r = snprintf(buf, n, "%" PRIu32 ":%" PRIu32, major, minor);

	if (r < 0 || (size_t)r >= n)
		return -ENOBUFS;
	o = (size_t)r;
	for (unsigned i = 0; i < _CGROUP_LIMIT_MAX; i++) {
		enum cgroup_limit_kind k = v2_order[i];
		char v[24];

		r = snprintf(buf + o, n - o, " %s=%s", v2_keys[k],
			     value_or_max(v, sizeof(v), *cgroup_limit_field(&c, k)));
		if (r < 0 || (size_t)r >= n - o)
			return -ENOBUFS;
		o += (size_t)r;
	}
	return 0;
}

int cgroup_path_normalize(const char *in, char *out, size_t n, const char **why)
{
	size_t len, o = 0;
	const char *p;

	*why = NULL;
	while (*in == '/')
		in++;
	len = strlen(in);
	while (len && in[len - 1] == '/')
		len--;
	if (!len) {
		*why = "the hierarchy's root has no limits of its own";
		return -EINVAL;
	}
	if (len >= MIN(n, (size_t)CGROUP_PATH_MAX)) {
		*why = "path too long";
		return -ENAMETOOLONG;
	}
	if (!utf8_valid(in, len)) {
		*why = "not valid UTF-8";
		return -EINVAL;
	}
	for (p = in; p < in + len;) {
		const char *end = memchr(p, '/', (size_t)(in + len - p));
		size_t c = end ? (size_t)(end - p) : (size_t)(in + len - p);

		if (c == 0) {
			*why = "empty path component";
			return -EINVAL;
		}
		if ((c == 1 && p[0] == '.') || (c == 2 && p[0] == '.' && p[1] == '.')) {
			*why = "\".\" and \"..\" are not cgroups";
			return -EINVAL;
		}
		for (size_t i = 0; i < c; i++)
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) {
				*why = "control character in the path";
				return -EINVAL;
			}
		memcpy(out + o, p, c);
		o += c;
		p += c;
		if (p < in + len) {
			out[o++] = '/';
			p++;
		}
	}
	out[o] = 0;
	return 0;
}
