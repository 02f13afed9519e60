/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * A binary min-heap on (key, insertion order), shared by flashsim (its
 * pending replies, the write buffer, the requests in a qdlat device) and
 * the Kyber simulator in tools/kyber-sim (its event queue). Equal keys leave in
 * FIFO order, so whoever uses it stays deterministic. The payload is a
 * pointer (flashsim) or a plain 64-bit value (the simulator packs an event
 * kind and argument into it): one entry is 24 bytes either way, so the
 * simulator pays nothing for sharing it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct heap_entry {
	uint64_t key;	/* due time (ns) */
	uint64_t seq;	/* insertion order: equal keys leave in FIFO order */
	union {
		void *data;
		uint64_t u64;
	};
};

struct heap {
	struct heap_entry *v;
	size_t n;
	size_t cap;
	uint64_t next_seq;
};

void heap_init(struct heap *h);
void heap_free(struct heap *h);
/* -ENOMEM */
int heap_push(struct heap *h, uint64_t key, void *data);
int heap_push_u64(struct heap *h, uint64_t key, uint64_t u64);
/* The caller checks h->n first; popping an empty heap is a bug. */
struct heap_entry heap_pop(struct heap *h);

static inline bool heap_empty(const struct heap *h)
{
	return h->n == 0;
}

static inline uint64_t heap_min_key(const struct heap *h)
{
	return h->v[0].key;
}
