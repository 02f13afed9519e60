/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz the decoders of what the daemon reads back from disk: the state
 * file, the originals file (both may be left corrupt by a crash or edited
 * by hand) and the flight record (read by kyber-tunectl replay). Whatever
 * decodes must encode and decode again to the same thing.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "state.h"

static int str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void state_round_trip(const uint8_t *data, size_t size)
{
	struct state s, again;
	uint8_t *buf;
	size_t len;

	if (state_decode(data, size, &s) < 0)
		return;
	assert(state_encode(&s, &buf, &len) == 0);
	assert(state_decode(buf, len, &again) == 0);
	assert(again.n == s.n);
	for (size_t i = 0; i < s.n; i++) {
		assert(str_eq(s.devs[i].id, again.devs[i].id));
		assert(str_eq(s.devs[i].name, again.devs[i].name));
		assert(str_eq(s.devs[i].goal, again.devs[i].goal));
		assert(s.devs[i].read_target_ns == again.devs[i].read_target_ns);
	}
	free(buf);
	state_done(&again);
	state_done(&s);
}

static void originals_round_trip(const uint8_t *data, size_t size)
{
	struct originals o, again;
	uint8_t *buf;
	size_t len;

	if (originals_decode(data, size, &o) < 0)
		return;
	assert(originals_encode(&o, &buf, &len) == 0);
	assert(originals_decode(buf, len, &again) == 0);
	assert(again.n == o.n);
	for (size_t i = 0; i < o.n; i++) {
		assert(str_eq(o.v[i].id, again.v[i].id));
		assert(str_eq(o.v[i].scheduler, again.v[i].scheduler));
		assert(o.v[i].was_kyber == again.v[i].was_kyber);
	}
	free(buf);
	originals_done(&again);
	originals_done(&o);
}

static void records(const uint8_t *data, size_t size)
{
	Kybertune__IntervalRecord *rec;
	size_t off = 0, prev;
	int r;

	for (;;) {
		prev = off;
		r = record_next(data, size, &off, &rec);
		if (r <= 0) {
			assert(off == prev);
			break;
		}
		assert(off > prev && off <= size);
		kybertune__interval_record__free_unpacked(rec, NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	state_round_trip(data, size);
	originals_round_trip(data, size);
	records(data, size);
	return 0;
}
