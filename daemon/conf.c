/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kyber-tuned.conf(5). libinih walks the lines and tracks nothing we need
 * from it but the dispatch: Debian builds it without INI_HANDLER_LINENO, so
 * our reader hands it one line at a time and keeps the line number, the
 * current section and a clean copy of the line. The reader also rejects what
 * inih would mangle or drop silently (overlong lines, which inih would split
 * in two; control characters; lines without '='; broken section headers),
 * and strips leading blanks so inih's multi-line continuation never applies.
 * The handler splits the line itself at the first '=': inih also splits at
 * ':', which /dev/disk/by-path names contain.
 */
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf-internal.h"
#include "error.h"
#include "goal.h"
#include "kyber-sysfs.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"

/* Longer lines are rejected even if inih was built with a bigger buffer. */
#define CONF_LINE_MAX 1024

#define INTERVAL_MIN_NS (10 * NSEC_PER_MSEC)
#define INTERVAL_MAX_NS (3600 * NSEC_PER_SEC)
#define SETTLE_MAX_NS (10 * NSEC_PER_SEC)
#define MAX_DEVICES_MAX 1024

enum section {
	SECTION_NONE,		/* before the first header */
	SECTION_TUNER,
	SECTION_GOALS,
	SECTION_WEIGHTS,
	SECTION_IGNORED,	/* unknown or broken header, warned about once */
};

struct parse {
	struct conf *c;
	struct conf_origin *origin;
	const char *name;
	const char *p, *end;		/* the rest of the text */
	unsigned line;			/* of the line last handed to inih */
	enum section section;
	bool oom;
	char buf[CONF_LINE_MAX + 1];	/* that line, stripped */
};

static void conf_warn(struct parse *ps, const char *fmt, ...) _printf_(2, 3);
static void conf_warn(struct parse *ps, const char *fmt, ...)
{
	char msg[CONF_LINE_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warning("%s:%u: %s", ps->name, ps->line, msg);
	ps->c->warnings++;
}

static char *where_dup(const struct parse *ps)
{
	char *s;

	if (asprintf(&s, "%s:%u", ps->name, ps->line) < 0)
		return NULL;
	return s;
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Length of s without a comment: '#' or ';' after a blank starts one. */
static size_t strip_comment(const char *s, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if ((s[i] == '#' || s[i] == ';') && is_blank(s[i - 1]))
			return i;
	return n;
}

static enum section section_from_header(struct parse *ps, const char *h)
{
	const char *close = strchr(h, ']');
	size_t n;

	if (!close || close == h + 1 || close[1]) {
		conf_warn(ps, "Invalid section header '%s', ignoring the section.", h);
		return SECTION_IGNORED;
	}
	n = (size_t)(close - h - 1);
	if (n == strlen("Tuner") && strncmp(h + 1, "Tuner", n) == 0)
		return SECTION_TUNER;
	if (n == strlen("Goals") && strncmp(h + 1, "Goals", n) == 0)
		return SECTION_GOALS;
	if (n == strlen("Weights") && strncmp(h + 1, "Weights", n) == 0)
		return SECTION_WEIGHTS;
	conf_warn(ps, "Unknown section '%.*s'. Ignoring.", (int)n, h + 1);
	return SECTION_IGNORED;
}

/*
 * inih's reader: fgets() over our buffer. Every line is handed on, so that
 * inih's count stays in step, but a line we reject goes as an empty one.
 */
static char *reader(char *str, int num, void *stream)
{
	struct parse *ps = stream;
	const char *s, *nl;
	size_t n, max;

	if (ps->oom || ps->p >= ps->end || num < 2)
		return NULL;
	s = ps->p;
	nl = memchr(s, '\n', (size_t)(ps->end - s));
	n = (size_t)((nl ? nl : ps->end) - s);
	ps->p = nl ? nl + 1 : ps->end;
	ps->line++;
	str[0] = 0;
	ps->buf[0] = 0;

	if (ps->line == 1 && n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
		s += 3;
		n -= 3;
	}
	if (n > 0 && s[n - 1] == '\r')
		n--;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f) {
			conf_warn(ps, "Line contains control characters, ignoring.");
			return str;
		}
	if (!utf8_valid(s, n)) {
		conf_warn(ps, "Line is not valid UTF-8, ignoring.");
		return str;
	}
	while (n > 0 && is_blank(*s)) {
		s++;
		n--;
	}
	if (n == 0 || *s == '#' || *s == ';')
		return str;
	n = strip_comment(s, n);
	while (n > 0 && is_blank(s[n - 1]))
		n--;
	max = MIN((size_t)num - 1, (size_t)CONF_LINE_MAX);
	if (n > max) {
		conf_warn(ps, "Line too long (%zu bytes, at most %zu), ignoring.", n, max);
		return str;
	}
	memcpy(ps->buf, s, n);
	ps->buf[n] = 0;

	if (*s == '[') {
		ps->section = section_from_header(ps, ps->buf);
		/* inih's idea of the section does not matter: ours is used. */
		return str;
	}
	if (!memchr(s, '=', n)) {
		conf_warn(ps, "Missing '=', ignoring line.");
		return str;
	}
	memcpy(str, s, n);
	str[n] = 0;
	return str;
}

static int parse_bool(const char *v, bool *ret)
{
	static const char *const yes[] = { "yes", "true", "1", "on" };
	static const char *const no[] = { "no", "false", "0", "off" };

	for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int set_origin(struct parse *ps, char **slot)
{
	char *w = where_dup(ps);

	if (!w)
		return -ENOMEM;
	free(*slot);
	*slot = w;
	return 0;
}

int conf_parse_record_size(const char *s, uint64_t *ret)
{
	uint64_t v;
	int r = parse_count_si(s, &v);

	if (r < 0)
		return r;
	if (v < RECORD_SIZE_MIN || v > RECORD_SIZE_MAX)
		return -ERANGE;
	*ret = v;
	return 0;
}

/* [Tuner]. An empty value goes back to the default (Record=: off). */
/* KEY=PATH of a file the daemon writes: absolute, or empty for off. */
static int set_file_path(struct parse *ps, const char *key, const char *v, char **path, bool *has)
{
	char *copy = NULL;

	if (*v && v[0] != '/') {
		conf_warn(ps, "%s= path is not absolute, ignoring: %s", key, v);
		return 0;
	}
	if (*v && !(copy = strdup(v)))
		return -ENOMEM;
	free(*path);
	*path = copy;
	*has = true;
	return 0;
}

/* Interval= or Settle=: a duration with its unit, each in its own range. */
static int duration_key(struct parse *ps, const char *key, const char *v)
{
	struct conf *c = ps->c;
	bool settle = key[0] == 'S';
	uint64_t u;

	if (*v) {
		if (parse_duration_ns(v, 0, &u) < 0) {
			conf_warn(ps, "Failed to parse %s= value, ignoring: %s (expected a duration "
				  "with a unit: ns, us, ms, s)", key, v);
			return 0;
		}
		if (settle ? u > SETTLE_MAX_NS : (u < INTERVAL_MIN_NS || u > INTERVAL_MAX_NS)) {
			conf_warn(ps, "%s= must be %s, ignoring: %s", key,
				  settle ? "at most 10s" : "between 10ms and 3600s (1h)", v);
			return 0;
		}
		*(settle ? &c->settle_ns : &c->interval_ns) = u;
	}
	*(settle ? &c->has_settle : &c->has_interval) = *v;
	return set_origin(ps, settle ? &ps->origin->settle : &ps->origin->interval);
}

static void max_devices_key(struct parse *ps, const char *v)
{
	struct conf *c = ps->c;
	uint64_t u;
	int r;

	if (*v) {
		r = parse_u64_strict(v, false, &u);
		if (r == -EINVAL) {
			conf_warn(ps, "Failed to parse MaxDevices= value, ignoring: %s", v);
			return;
		}
		if (r < 0 || u < 1 || u > MAX_DEVICES_MAX) {
			conf_warn(ps, "MaxDevices= must be between 1 and %d, ignoring: %s",
				  MAX_DEVICES_MAX, v);
			return;
		}
		c->max_devices = (unsigned)u;
	}
	c->has_max_devices = *v;
}

static int tuner_key(struct parse *ps, const char *key, const char *v)
{
	struct conf *c = ps->c;
	int r;

	if (strcmp(key, "Interval") == 0 || strcmp(key, "Settle") == 0)
		return duration_key(ps, key, v);
	if (strcmp(key, "Rollback") == 0 || strcmp(key, "SwitchScheduler") == 0) {
		bool rollback = key[0] == 'R';

		if (*v && parse_bool(v, rollback ? &c->rollback : &c->switch_scheduler) < 0) {
			conf_warn(ps, "Failed to parse boolean value for %s=, ignoring: %s", key, v);
			return 0;
		}
		*(rollback ? &c->has_rollback : &c->has_switch_scheduler) = *v;
		return 0;
	}
	if (strcmp(key, "MaxDevices") == 0) {
		max_devices_key(ps, v);
		return 0;
	}
	if (strcmp(key, "LogLevel") == 0) {
		r = *v ? log_level_from_string(v) : 0;
		if (r < 0) {
			conf_warn(ps, "Failed to parse LogLevel= value, ignoring: %s (use err, warning, "
				  "notice, info or debug)", v);
			return 0;
		}
		if (*v)
			c->log_level = r;
		c->has_log_level = *v;
		return 0;
	}
	if (strcmp(key, "RecordMaxSize") == 0) {
		r = *v ? conf_parse_record_size(v, &c->record_max_bytes) : 0;
		if (r < 0) {
			conf_warn(ps, "RecordMaxSize= must be a size in bytes between %llu and %llu (k, M, G "
				  "multiply by 1000), ignoring: %s", (unsigned long long)RECORD_SIZE_MIN,
				  (unsigned long long)RECORD_SIZE_MAX, v);
			return 0;
		}
		c->has_record_max = *v;
		return 0;
	}
	if (strcmp(key, "Record") == 0)
		return set_file_path(ps, key, v, &c->record_path, &c->has_record);
	if (strcmp(key, "MetricsFile") == 0)
		return set_file_path(ps, key, v, &c->metrics_path, &c->has_metrics);
	conf_warn(ps, "Unknown key name '%s' in section 'Tuner', ignoring.", key);
	return 0;
}

bool conf_device_valid(const char *d)
{
	if (d[0] != '/')
		return blockdev_name_valid(d);
	if (strncmp(d, "/dev/", 5) != 0 || !d[5])
		return false;
	for (const char *p = d; *p; p++)
		if (is_blank(*p))
			return false;
	return true;
}

static struct conf_goal *find_goal(struct conf *c, const char *device)
{
	for (size_t i = 0; i < c->n_goals; i++)
		if (strcmp(c->goals[i].device, device) == 0)
			return &c->goals[i];
	return NULL;
}

static void conf_goal_done(struct conf_goal *g)
{
	free(g->device);
	free(g->goal);
	free(g->where);
}

/* Was g set earlier in the file being parsed? ("NAME:LINE") */
static bool from_this_file(const struct parse *ps, const struct conf_goal *g)
{
	const char *colon = strrchr(g->where, ':');
	size_t n = strlen(ps->name);

	return colon && (size_t)(colon - g->where) == n && strncmp(g->where, ps->name, n) == 0;
}

/* [Goals] DEVICE=GOAL. An empty GOAL drops an earlier goal for DEVICE. */
static int goals_key(struct parse *ps, const char *device, const char *v)
{
	struct conf *c = ps->c;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	struct conf_goal *g, *n, ng;
	struct goal parsed;
	int r;

	if (!conf_device_valid(device)) {
		conf_warn(ps, "Invalid device '%s' (expected a disk name such as nvme0n1 or a path "
			  "under /dev), ignoring.", device);
		return 0;
	}
	g = find_goal(c, device);
	if (!*v) {
		if (g) {
			conf_goal_done(g);
			*g = c->goals[--c->n_goals];
		}
		return 0;
	}
	r = goal_parse(v, &parsed, &error);
	if (r < 0) {
		conf_warn(ps, "Invalid goal for %s, ignoring: %s", device, error_message(&error, r));
		return 0;
	}
	ng = (struct conf_goal) {
		.device = g ? NULL : strdup(device),
		.goal = strdup(v),
		.where = where_dup(ps),
	};
	if ((!g && !ng.device) || !ng.goal || !ng.where) {
		conf_goal_done(&ng);
		return -ENOMEM;
	}
	if (g) {
		if (from_this_file(ps, g))
			conf_warn(ps, "Duplicate goal for %s, overriding the one at line %s.", device,
				  strrchr(g->where, ':') + 1);
		free(g->goal);
		free(g->where);
		g->goal = ng.goal;
		g->where = ng.where;
		return 0;
	}
	n = reallocarray(c->goals, c->n_goals + 1, sizeof(*n));
	if (!n) {
		conf_goal_done(&ng);
		return -ENOMEM;
	}
	c->goals = n;
	c->goals[c->n_goals++] = ng;
	return 0;
}

static int weights_key(struct parse *ps, const char *key, const char *v)
{
	_cleanup_free_ char *where = where_dup(ps);
	char warning[CONF_LINE_MAX + 128];
	int r;

	if (!where)
		return -ENOMEM;
	r = conf_weights_key(ps->c, key, v, where, warning, sizeof(warning));
	if (warning[0])
		conf_warn(ps, "%s", warning);
	return r;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse *ps = user;
	const char *key = ps->buf, *v;
	char *eq;
	size_t n;
	int r;

	/* Split our copy of the line, in place: inih splits at ':' too. */
	eq = strchr(ps->buf, '=');
	if (!eq)
		return 1;	/* not reached: the reader passes no such line */
	n = (size_t)(eq - ps->buf);
	while (n > 0 && is_blank(ps->buf[n - 1]))
		n--;
	v = eq + 1;
	while (is_blank(*v))
		v++;
	if (n == 0) {
		conf_warn(ps, "Missing key name before '=', ignoring line.");
		return 1;
	}
	ps->buf[n] = 0;		/* at or before the '=', so v is intact */

	switch (ps->section) {
	case SECTION_NONE:
		conf_warn(ps, "Assignment outside of section. Ignoring.");
		return 1;
	case SECTION_IGNORED:
		return 1;
	case SECTION_TUNER:
		r = tuner_key(ps, key, v);
		break;
	case SECTION_GOALS:
		r = goals_key(ps, key, v);
		break;
	case SECTION_WEIGHTS:
		r = weights_key(ps, key, v);
		break;
	default:
		return 1;
	}
	if (r == -ENOMEM) {
		ps->oom = true;
		return 0;
	}
	return 1;
}

int conf_parse_text_origin(struct conf *c, const char *text, size_t len, const char *name,
			   struct conf_origin *origin)
{
	struct parse ps = {
		.c = c,
		.origin = origin,
		.name = name ?: "(config)",
		.p = text,
	};

	if (!text)
		return 0;
	ps.end = text + len;
	/* inih's return value names the first line it disliked: the reader
	 * and handler have warned about every such line already. */
	(void)ini_parse_stream(reader, &ps, handler, &ps);
	return ps.oom ? -ENOMEM : 0;
}

int conf_parse_text(struct conf *c, const char *text, size_t len, const char *name)
{
	struct conf_origin o = {};
	int r;

	r = conf_parse_text_origin(c, text, len, name, &o);
	free(o.interval);
	free(o.settle);
	return r;
}

void conf_done(struct conf *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_goals; i++)
		conf_goal_done(&c->goals[i]);
	free(c->goals);
	conf_weights_done(c);
	free(c->record_path);
	free(c->metrics_path);
	memset(c, 0, sizeof(*c));
}
