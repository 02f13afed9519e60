/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "goal.h"
#include "macro.h"
#include "parse-util.h"

#define TOKEN_MAX 64

static const char *const mode_names[_GOAL_MODE_MAX] = {
	[GOAL_MODE_LATENCY] = "latency",
	[GOAL_MODE_BALANCED] = "balanced",
	[GOAL_MODE_THROUGHPUT] = "throughput",
	[GOAL_MODE_ADVISE] = "advise",
};

static const char *const scheduler_names[_GOAL_SCHEDULER_MAX] = {
	[GOAL_SCHEDULER_KYBER] = "kyber",
	[GOAL_SCHEDULER_AUTO] = "auto",
};

static const struct {
	const char *name;
	double pct;
} percentiles[] = {
	{ "p50", 50 }, { "p90", 90 }, { "p95", 95 }, { "p99", 99 }, { "p99.9", 99.9 },
};

const char *goal_mode_to_string(enum goal_mode m)
{
	return (unsigned)m < _GOAL_MODE_MAX ? mode_names[m] : "?";
}

const char *goal_scheduler_to_string(enum goal_scheduler s)
{
	return (unsigned)s < _GOAL_SCHEDULER_MAX ? scheduler_names[s] : "?";
}

/* The index of value in names[n], or -1. */
static int lookup(const char *const *names, int n, const char *value)
{
	for (int i = 0; i < n; i++)
		if (strcmp(value, names[i]) == 0)
			return i;
	return -1;
}

static int fail(sd_bus_error *error, const char *token, const char *why)
{
	return error_setf(error, -EINVAL, "Invalid goal token '%.*s': %s", TOKEN_MAX, token, why);
}

/* Keys that may be given once each. */
struct seen {
	bool mode, floor, scheduler;
};

static int parse_token(const char *tok, struct goal *g, struct seen *seen, sd_bus_error *error)
{
	const char *eq = strchr(tok, '='), *value;
	char key[TOKEN_MAX];
	size_t klen;

	if (!eq || eq == tok || !eq[1])
		return fail(error, tok, "expected KEY=VALUE");
	klen = (size_t)(eq - tok);
	if (klen >= sizeof(key))
		return fail(error, tok, "unknown key");
	memcpy(key, tok, klen);
	key[klen] = 0;
	value = eq + 1;

	if (strncmp(key, "read-", 5) == 0) {
		size_t i;
		uint64_t ns;

		for (i = 0; i < ELEMENTSOF(percentiles); i++)
			if (strcmp(key + 5, percentiles[i].name) == 0)
				break;
		if (i == ELEMENTSOF(percentiles))
			return fail(error, tok,
				    "unsupported percentile (use p50, p90, p95, p99 or p99.9)");
		if (g->has_read)
			return fail(error, tok, "more than one read goal");
		if (parse_duration_ns(value, 0, &ns) < 0)
			return fail(error, tok,
				    "expected a duration with a unit (ns, us, ms, s), e.g. 100us");
		if (ns < GOAL_LATENCY_MIN_NS || ns > GOAL_LATENCY_MAX_NS)
			return fail(error, tok, "latency out of range (1us..100s)");
		g->has_read = true;
		g->read_pct = percentiles[i].pct;
		g->read_ns = ns;
	} else if (strcmp(key, "write-iops-min") == 0) {
		uint64_t v;

		if (seen->floor)
			return fail(error, tok, "given twice");
		if (parse_count_si(value, &v) < 0 || v == 0 || v > GOAL_IOPS_MAX)
			return fail(error, tok, "expected a positive count, e.g. 20k");
		g->write_iops_min = v;
		seen->floor = true;
	} else if (strcmp(key, "mode") == 0) {
		int m = lookup(mode_names, _GOAL_MODE_MAX, value);

		if (seen->mode)
			return fail(error, tok, "given twice");
		if (m < 0)
			return fail(error, tok, "unknown mode (use latency, balanced, throughput or advise)");
		g->mode = (enum goal_mode)m;
		seen->mode = true;
	} else if (strcmp(key, "scheduler") == 0) {
		int sc = lookup(scheduler_names, _GOAL_SCHEDULER_MAX, value);

		if (seen->scheduler)
			return fail(error, tok, "given twice");
		if (sc < 0)
			return fail(error, tok, "unknown scheduler policy (use kyber or auto)");
		g->scheduler = (enum goal_scheduler)sc;
		seen->scheduler = true;
	} else
		return fail(error, tok, "unknown key (use read-pNN, write-iops-min, mode or scheduler)");
	return 0;
}

int goal_parse(const char *text, struct goal *out, sd_bus_error *error)
{
	struct goal g = { .mode = GOAL_MODE_LATENCY, .scheduler = GOAL_SCHEDULER_DEFAULT };
	struct seen seen = {};
	const char *p = text;
	int r;

	if (!text)
		return fail(error, "", "empty goal");
	for (;;) {
		char tok[TOKEN_MAX + 1];
		size_t n;

		p += strspn(p, " \t,");
		if (!*p)
			break;
		n = strcspn(p, " \t,");
		if (n > TOKEN_MAX)
			return error_setf(error, -EINVAL, "Invalid goal token '%.*s...': too long", 24, p);
		memcpy(tok, p, n);
		tok[n] = 0;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)tok[i] < 0x20 || (unsigned char)tok[i] == 0x7f)
				return error_setf(error, -EINVAL, "Invalid goal: control character in a token");
		r = parse_token(tok, &g, &seen, error);
		if (r < 0)
			return r;
		p += n;
	}
	if (!g.has_read && g.mode != GOAL_MODE_THROUGHPUT)
		return error_setf(error, -EINVAL, "Invalid goal '%.*s': a read goal such as read-p99=100us "
				  "is required (only mode=throughput goes without)", TOKEN_MAX, text);
	*out = g;
	return 0;
}

char *goal_format(const struct goal *g, char *buf, size_t n)
{
	char d[DURATION_BUF_MAX + 8];
	size_t used = 0;

	buf[0] = 0;
	if (g->has_read) {
		const char *pn = "p99";

		for (size_t i = 0; i < ELEMENTSOF(percentiles); i++)
			if (percentiles[i].pct == g->read_pct)
				pn = percentiles[i].name;
		/* Exact units, so the text parses back to the same value. */
		if (g->read_ns % NSEC_PER_SEC == 0)
			snprintf(d, sizeof(d), "%" PRIu64 "s", (uint64_t)(g->read_ns / NSEC_PER_SEC));
		else if (g->read_ns % NSEC_PER_MSEC == 0)
			snprintf(d, sizeof(d), "%" PRIu64 "ms", (uint64_t)(g->read_ns / NSEC_PER_MSEC));
		else if (g->read_ns % NSEC_PER_USEC == 0)
			snprintf(d, sizeof(d), "%" PRIu64 "us", (uint64_t)(g->read_ns / NSEC_PER_USEC));
		else
			snprintf(d, sizeof(d), "%" PRIu64 "ns", g->read_ns);
		used += (size_t)snprintf(buf + used, n - MIN(used, n), "read-%s=%s ", pn, d);
	}
	if (g->write_iops_min)
		used += (size_t)snprintf(buf + used, n - MIN(used, n), "write-iops-min=%" PRIu64 " ",
					 g->write_iops_min);
	used += (size_t)snprintf(buf + MIN(used, n - 1), n - MIN(used, n - 1), "mode=%s",
				 goal_mode_to_string(g->mode));
	if (g->scheduler != GOAL_SCHEDULER_DEFAULT)
		snprintf(buf + MIN(used, n - 1), n - MIN(used, n - 1), " scheduler=%s",
			 goal_scheduler_to_string(g->scheduler));
	return buf;
}

bool goal_equal(const struct goal *a, const struct goal *b)
{
	return a->has_read == b->has_read && a->read_pct == b->read_pct && a->read_ns == b->read_ns &&
	       a->write_iops_min == b->write_iops_min && a->mode == b->mode && a->scheduler == b->scheduler;
}
