/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"

/* First allocation, in entries: the simulator's W256 keeps ~400 events. */
#define HEAP_INITIAL_CAP 256

void heap_init(struct heap *h)
{
	memset(h, 0, sizeof(*h));
}

void heap_free(struct heap *h)
{
	free(h->v);
	heap_init(h);
}

static bool heap_less(const struct heap_entry *a, const struct heap_entry *b)
{
	if (a->key != b->key)
		return a->key < b->key;
	return a->seq < b->seq;
}

static int heap_insert(struct heap *h, struct heap_entry e)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : HEAP_INITIAL_CAP;
		struct heap_entry *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}

	/* Sift up. */
	i = h->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!heap_less(&e, &h->v[parent]))
			break;
		h->v[i] = h->v[parent];
		i = parent;
	}
	h->v[i] = e;
	return 0;
}

int heap_push(struct heap *h, uint64_t key, void *data)
{
	return heap_insert(h, (struct heap_entry) { .key = key, .seq = h->next_seq++, .data = data });
}

int heap_push_u64(struct heap *h, uint64_t key, uint64_t u64)
{
	return heap_insert(h, (struct heap_entry) { .key = key, .seq = h->next_seq++, .u64 = u64 });
}

struct heap_entry heap_pop(struct heap *h)
{
	struct heap_entry top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	/* Sift the last element down from the root. */
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && heap_less(&h->v[c + 1], &h->v[c]))
			c++;
		if (!heap_less(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n > 0)
		h->v[i] = last;
	return top;
}
