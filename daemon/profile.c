/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "parse-util.h"
#include "profile.h"

#define PROFILE_PREFIX "profile:"
#define PROFILE_LINE_MAX 256

/* What a record must say besides its match line. */
enum {
	HAVE_GOAL = 1 << 0,
	HAVE_READ = 1 << 1,
	HAVE_WRITE = 1 << 2,
	HAVE_ALL = HAVE_GOAL | HAVE_READ | HAVE_WRITE,
};

struct parser {
	struct profiles *out;
	size_t first;		/* out->n before this text: dropped again on error */
	struct profile cur;
	unsigned have;		/* HAVE_* of cur; 0 with no record open */
	bool open;
	unsigned line;
	char *why;
	size_t n;
};

static int fail(struct parser *p, const char *what, const char *value)
{
	snprintf(p->why, p->n, "line %u: %s%s%.40s%s", p->line, what, value ? " '" : "", value ?: "",
		 value ? "'" : "");
	return -EBADMSG;
}

static int close_record(struct parser *p)
{
	struct profile *v;

	if (!p->open)
		return 0;
	if ((p->have & HAVE_ALL) != HAVE_ALL)
		return fail(p, !(p->have & HAVE_GOAL) ? "record without GOAL=" :
			    !(p->have & HAVE_READ) ? "record without READ_TARGET_NSEC=" :
			    "record without WRITE_TARGET_NSEC=", NULL);
	v = reallocarray(p->out->v, p->out->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->out->v = v;
	v[p->out->n++] = p->cur;
	p->open = false;
	return 0;
}

static int match_line(struct parser *p, const char *line)
{
	const char *spec, *colon;
	size_t model_len;
	int r;

	/* The prefix first: a line shorter than it has nothing past its end. */
	if (strncmp(line, PROFILE_PREFIX, strlen(PROFILE_PREFIX)) != 0)
		return fail(p, "expected a match line 'profile:MODEL:FIRMWARE', got", line);
	spec = line + strlen(PROFILE_PREFIX);
	colon = strrchr(spec, ':');
	if (!colon)
		return fail(p, "match line without ':FIRMWARE':", line);
	model_len = (size_t)(colon - spec);
	if (model_len == 0 || model_len >= sizeof(p->cur.model) ||
	    strlen(colon + 1) >= sizeof(p->cur.firmware))
		return fail(p, "model empty, or model or firmware too long:", line);
	r = close_record(p);
	if (r < 0)
		return r;
	memset(&p->cur, 0, sizeof(p->cur));
	memcpy(p->cur.model, spec, model_len);
	strcpy(p->cur.firmware, colon + 1);
	p->have = 0;
	p->open = true;
	return 0;
}

static int target_value(struct parser *p, const char *key, const char *value, uint64_t *ret)
{
	if (parse_u64_strict(value, false, ret) < 0 || *ret < KYBER_TARGET_MIN_NS || *ret > KYBER_TARGET_MAX_NS)
		return fail(p, key, value);
	return 0;
}

static int property(struct parser *p, const char *key, const char *value)
{
	uint64_t u;
	char *end;

	if (strcmp(key, "GOAL") == 0) {
		if (goal_parse(value, &p->cur.goal, NULL) < 0)
			return fail(p, "invalid GOAL=", value);
		p->have |= HAVE_GOAL;
	} else if (strcmp(key, "READ_TARGET_NSEC") == 0) {
		if (target_value(p, "READ_TARGET_NSEC= out of 1000..100000000000:", value, &p->cur.targets.read_ns) < 0)
			return -EBADMSG;
		p->have |= HAVE_READ;
	} else if (strcmp(key, "WRITE_TARGET_NSEC") == 0) {
		if (target_value(p, "WRITE_TARGET_NSEC= out of 1000..100000000000:", value, &p->cur.targets.write_ns) < 0)
			return -EBADMSG;
		p->have |= HAVE_WRITE;
	} else if (strcmp(key, "WRITE_FREE_P99_NSEC") == 0) {
		if (parse_u64_strict(value, false, &u) < 0 || u > KYBER_TARGET_MAX_NS)
			return fail(p, "invalid WRITE_FREE_P99_NSEC=", value);
		p->cur.write_free_p99_ns = u;
	} else if (strcmp(key, "WRITE_FREE_IOPS") == 0) {
		errno = 0;
		p->cur.write_free_iops = strtod(value, &end);
		if (errno || end == value || *end || !isfinite(p->cur.write_free_iops) ||
		    p->cur.write_free_iops < 0 || p->cur.write_free_iops > GOAL_IOPS_MAX)
			return fail(p, "invalid WRITE_FREE_IOPS=", value);
	} else
		return fail(p, "unknown property", key);	/* a typo must not pass for a setting */
	return 0;
}

static int one_line(struct parser *p, char *line)
{
	char *eq;

	if (line[0] == '#')
		return 0;
	if (line[0] == '\0')
		return close_record(p);
	if (line[0] != ' ')
		return match_line(p, line);
	if (!p->open)
		return fail(p, "property outside a record:", line + 1);
	eq = strchr(line + 1, '=');
	if (!eq || eq == line + 1)
		return fail(p, "expected ' KEY=VALUE', got", line + 1);
	*eq = '\0';
	return property(p, line + 1, eq + 1);
}

int profiles_parse(const char *text, size_t len, struct profiles *out, char *why, size_t n)
{
	struct parser p = { .out = out, .first = out->n, .why = why, .n = n };
	char line[PROFILE_LINE_MAX];
	int r = 0;

	*why = '\0';
	for (size_t i = 0; i < len && r >= 0;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t l = (nl ? (size_t)(nl - text) : len) - i;

		p.line++;
		if (l >= sizeof(line))
			r = fail(&p, "line too long", NULL);
		else if (memchr(text + i, '\0', l))
			r = fail(&p, "NUL byte", NULL);
		else {
			memcpy(line, text + i, l);
			line[l] = '\0';
			r = one_line(&p, line);
		}
		i += l + 1;
	}
	if (r >= 0)
		r = close_record(&p);
	if (r < 0)
		out->n = p.first;	/* all of this text, or none of it */
	if (r == -ENOMEM)
		snprintf(why, n, "out of memory");
	return r;
}

void profiles_done(struct profiles *p)
{
	free(p->v);
	*p = (struct profiles) {};
}

int profile_format(FILE *f, const struct profile *p, const char *comment)
{
	char goal[GOAL_TEXT_MAX];
	struct goal g = p->goal;

	/* The policy is the importing machine's to choose. */
	g.scheduler = GOAL_SCHEDULER_DEFAULT;
	if (comment)
		fprintf(f, "# %s\n", comment);
	fprintf(f, PROFILE_PREFIX "%s:%s\n GOAL=%s\n READ_TARGET_NSEC=%" PRIu64 "\n WRITE_TARGET_NSEC=%" PRIu64 "\n",
		p->model, p->firmware, goal_format(&g, goal, sizeof(goal)), p->targets.read_ns,
		p->targets.write_ns);
	if (p->write_free_p99_ns)
		fprintf(f, " WRITE_FREE_P99_NSEC=%" PRIu64 "\n", p->write_free_p99_ns);
	if (p->write_free_iops > 0)
		fprintf(f, " WRITE_FREE_IOPS=%.0f\n", p->write_free_iops);
	return ferror(f) ? -EIO : 0;
}

static bool same_goal(const struct goal *a, const struct goal *b)
{
	struct goal x = *a, y = *b;

	x.scheduler = y.scheduler = GOAL_SCHEDULER_DEFAULT;
	return goal_equal(&x, &y);
}

const struct profile *profiles_match(const struct profiles *p, const char *model, const char *firmware,
				     const struct goal *g)
{
	const struct profile *glob = NULL;

	for (size_t i = 0; i < p->n; i++) {
		const struct profile *e = &p->v[i];

		if (!same_goal(&e->goal, g))
			continue;
		if (strcmp(e->model, model) == 0 && strcmp(e->firmware, firmware) == 0)
			return e;
		if (!glob && fnmatch(e->model, model, 0) == 0 && fnmatch(e->firmware, firmware, 0) == 0)
			glob = e;
	}
	return glob;
}
