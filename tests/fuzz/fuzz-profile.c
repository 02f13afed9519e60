/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for profiles_parse() (daemon/profile.c): per-model
 * profile files, which a fleet copies between machines. Besides not
 * crashing: what parses has a model and both targets in Kyber's bounds,
 * and formats back into text that parses to the same records.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profiles p = {}, again = {};
	char why[160], *text = NULL;
	size_t len = 0;
	FILE *f;

	if (profiles_parse((const char *)data, size, &p, why, sizeof(why)) < 0) {
		if (p.n || !why[0])
			abort();	/* refused whole, and said why */
		profiles_done(&p);
		return 0;
	}
	f = open_memstream(&text, &len);
	if (!f)
		abort();
	for (size_t i = 0; i < p.n; i++) {
		const struct profile *e = &p.v[i];

		if (!e->model[0] || e->targets.read_ns < KYBER_TARGET_MIN_NS || e->targets.write_ns > KYBER_TARGET_MAX_NS)
			abort();
		fputc('\n', f);
		if (profile_format(f, e, NULL) < 0)
			abort();
	}
	if (fclose(f) != 0)
		abort();
	/* A model or firmware may hold what the format cannot carry (a
	 * newline cannot: lines split there); what was read must come back. */
	if (profiles_parse(text, len, &again, why, sizeof(why)) < 0 || again.n != p.n)
		abort();
	for (size_t i = 0; i < p.n; i++)
		if (strcmp(p.v[i].model, again.v[i].model) != 0 || strcmp(p.v[i].firmware, again.v[i].firmware) != 0 ||
		    p.v[i].targets.read_ns != again.v[i].targets.read_ns ||
		    p.v[i].targets.write_ns != again.v[i].targets.write_ns)
			abort();
	free(text);
	profiles_done(&p);
	profiles_done(&again);
	return 0;
}
