/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for goal_parse() (shared/goal.c): the goal grammar comes
 * from the config, the command line and D-Bus callers. Besides not crashing,
 * a goal that parses must survive goal_format() and parse back to the same
 * goal, and a rejected one must come with a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "goal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	char text[GOAL_TEXT_MAX];
	struct goal g, again;
	char *s;

	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	if (goal_parse(s, &g, &error) < 0) {
		/* Every refusal carries a sentence. */
		if (!sd_bus_error_is_set(&error) || !error.message || !error.message[0])
			abort();
		free(s);
		return 0;
	}
	free(s);

	if (!g.has_read && g.mode != GOAL_MODE_THROUGHPUT)
		abort();
	if (g.has_read && (g.read_ns < GOAL_LATENCY_MIN_NS || g.read_ns > GOAL_LATENCY_MAX_NS))
		abort();
	if (g.write_iops_min > GOAL_IOPS_MAX || (unsigned)g.mode >= _GOAL_MODE_MAX ||
	    (unsigned)g.scheduler >= _GOAL_SCHEDULER_MAX)
		abort();
	goal_format(&g, text, sizeof(text));
	if (goal_parse(text, &again, NULL) < 0)
		abort();
	/* Field by field: padding bytes are not part of the value. */
	if (again.has_read != g.has_read || again.read_ns != g.read_ns ||
	    (g.has_read && again.read_pct != g.read_pct) ||
	    again.write_iops_min != g.write_iops_min || again.mode != g.mode ||
	    again.scheduler != g.scheduler)
		abort();
	return 0;
}
