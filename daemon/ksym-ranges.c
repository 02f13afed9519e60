/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ksym-ranges.h"

#define KSYM_LINE_MAX 512

struct ksym_line {
	uint64_t addr;
	bool text;
	char name[KSYM_LINE_MAX];
};

/* 1: a line read, 0: end of the stream, -EBADMSG. */
static int read_line(FILE *f, struct ksym_line *l)
{
	char buf[KSYM_LINE_MAX], type;
	int used = 0;

	if (!fgets(buf, sizeof(buf), f))
		return 0;
	if (!strchr(buf, '\n') && !feof(f))
		return -EBADMSG;	/* longer than any symbol line */
	if (sscanf(buf, "%" SCNx64 " %c %511s%n", &l->addr, &type, l->name, &used) != 3 || used == 0)
		return -EBADMSG;
	l->text = strchr("tTwW", type) != NULL;
	return 1;
}

static int find_starts(FILE *f, const char *const *names, size_t n, struct ksym_range *out, bool *all_zero)
{
	struct ksym_line l;
	int r, found = 0;

	*all_zero = true;
	while ((r = read_line(f, &l)) > 0) {
		if (l.addr)
			*all_zero = false;
		if (!l.text)
			continue;
		for (size_t i = 0; i < n; i++)
			if (!out[i].start && strcmp(l.name, names[i]) == 0) {
				out[i].start = l.addr;
				found++;
			}
	}
	return r < 0 ? r : found;
}

/* The end of each found function: the least text address above its start. */
static int find_ends(FILE *f, size_t n, struct ksym_range *out)
{
	struct ksym_line l;
	int r;

	while ((r = read_line(f, &l)) > 0) {
		if (!l.text)
			continue;
		for (size_t i = 0; i < n; i++)
			if (out[i].start && l.addr > out[i].start && (!out[i].end || l.addr < out[i].end))
				out[i].end = l.addr;
	}
	return r;
}

int ksym_ranges_find(FILE *f, const char *const *names, size_t n, struct ksym_range *out)
{
	bool all_zero;
	int found, r;

	memset(out, 0, n * sizeof(*out));
	found = find_starts(f, names, n, out, &all_zero);
	if (found < 0)
		return found;
	if (all_zero)
		return -EPERM;
	if (!found)
		return 0;
	rewind(f);
	r = find_ends(f, n, out);
	if (r < 0)
		return r;
	found = 0;
	for (size_t i = 0; i < n; i++) {
		if (out[i].start && !out[i].end)
			out[i] = (struct ksym_range) {};	/* the last symbol: no known end */
		found += out[i].start != 0;
	}
	return found;
}
