/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "host-cpu.h"

/* user nice system idle iowait irq softirq steal guest guest_nice: guest
 * time is already counted in user and nice, and is left out of the total. */
#define STAT_FIELDS_MIN 4
#define STAT_FIELD_STEAL 7
#define STAT_FIELDS_SUMMED 8

/* The "cpu " line: at the start, or after a newline. */
static const char *cpu_line(const char *text, size_t len, size_t *line_len)
{
	static const char key[] = "cpu ";

	for (size_t i = 0; i + sizeof(key) - 1 <= len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;

		if (end - i >= sizeof(key) - 1 && memcmp(text + i, key, sizeof(key) - 1) == 0) {
			*line_len = end - i - (sizeof(key) - 1);
			return text + i + sizeof(key) - 1;
		}
		if (!nl)
			break;
		i = end + 1;
	}
	return NULL;
}

int host_cpu_parse(const char *text, size_t len, struct host_cpu_time *out)
{
	size_t n, i = 0;
	unsigned field = 0;
	const char *p = cpu_line(text, len, &n);

	if (!p)
		return -EBADMSG;
	*out = (struct host_cpu_time){};
	while (i < n) {
		uint64_t v = 0;
		size_t start;

		while (i < n && p[i] == ' ')
			i++;
		if (i == n)
			break;
		start = i;
		for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
			if (v > (UINT64_MAX - (uint64_t)(p[i] - '0')) / 10)
				return -EBADMSG;
			v = v * 10 + (uint64_t)(p[i] - '0');
		}
		if (i == start || (i < n && p[i] != ' '))
			return -EBADMSG;
		if (field < STAT_FIELDS_SUMMED) {
			if (out->total > UINT64_MAX - v)
				return -EBADMSG;
			out->total += v;
		}
		if (field == STAT_FIELD_STEAL)
			out->steal = v;
		field++;
	}
	return field >= STAT_FIELDS_MIN ? 0 : -EBADMSG;
}

double host_cpu_steal_share(const struct host_cpu_time *prev, const struct host_cpu_time *cur)
{
	uint64_t total, steal;

	if (cur->total <= prev->total || cur->steal < prev->steal)
		return 0;
	total = cur->total - prev->total;
	steal = cur->steal - prev->steal;
	return steal >= total ? 1.0 : (double)steal / (double)total;
}
