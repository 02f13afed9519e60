/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for conf_parse_text() (daemon/conf.c). The input is
 * split at its first "\n----\n" (if any) into two files parsed
 * one after the other into the same struct conf, as the main file and a
 * drop-in would be, so overriding and replacing goals are covered too.
 * Whatever the input, what was accepted must be within the documented
 * bounds and every goal must parse.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "goal.h"
#include "log.h"
#include "parse-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct conf *c)
{
	struct goal g;

	if (c->has_interval && (c->interval_ns < 10 * NSEC_PER_MSEC || c->interval_ns > 3600 * NSEC_PER_SEC))
		abort();
	if (c->has_settle && c->settle_ns > 10 * NSEC_PER_SEC)
		abort();
	if (c->has_max_devices && (c->max_devices < 1 || c->max_devices > 1024))
		abort();
	if (c->has_log_level && (c->log_level < LOG_LEVEL_ERR || c->log_level > LOG_LEVEL_DEBUG))
		abort();
	if (c->record_path && (c->record_path[0] != '/' || !c->has_record))
		abort();
	for (size_t i = 0; i < c->n_goals; i++) {
		const struct conf_goal *cg = &c->goals[i];

		if (!cg->device[0] || !cg->where || goal_parse(cg->goal, &g, NULL) < 0)
			abort();
		for (size_t j = 0; j < i; j++)
			if (strcmp(c->goals[j].device, cg->device) == 0)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char sep[] = "\n----\n";
	const char *text = (const char *)data;
	const char *split = memmem(text, size, sep, strlen(sep));
	size_t first = split ? (size_t)(split - text) : size;
	struct conf c = {};

	/* Warnings are formatted either way; printing them only slows down. */
	log_set_max_level(LOG_LEVEL_ERR);
	if (conf_parse_text(&c, text, first, "main.conf") < 0)
		abort();
	check(&c);
	if (split) {
		size_t off = first + strlen(sep);

		if (conf_parse_text(&c, text + off, size - off, "conf.d/a.conf") < 0)
			abort();
		check(&c);
	}
	conf_done(&c);
	return 0;
}
