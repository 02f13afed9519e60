/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The simulator's event queue: a binary min-heap on (time, push order). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim-util.h"

void sim_heap_init(struct sim_heap *h)
{
	memset(h, 0, sizeof(*h));
}

void sim_heap_free(struct sim_heap *h)
{
	free(h->v);
	sim_heap_init(h);
}

static bool ev_less(const struct sim_event *a, const struct sim_event *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->seq < b->seq;
}

int sim_heap_push(struct sim_heap *h, uint64_t time, uint32_t kind, uint32_t arg)
{
	struct sim_event e = { .time = time, .seq = h->next_seq++, .kind = kind, .arg = arg };
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 256;
		struct sim_event *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}

	for (i = h->n++; i > 0; ) {
		size_t parent = (i - 1) / 2;

		if (!ev_less(&e, &h->v[parent]))
			break;
		h->v[i] = h->v[parent];
		i = parent;
	}
	h->v[i] = e;
	return 0;
}

struct sim_event sim_heap_pop(struct sim_heap *h)
{
	struct sim_event top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && ev_less(&h->v[c + 1], &h->v[c]))
			c++;
		if (!ev_less(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n > 0)
		h->v[i] = last;
	return top;
}
