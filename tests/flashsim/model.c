/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* ---------------------------------------------------------------- heap */

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

int heap_push(struct heap *h, uint64_t key, void *data)
{
	struct heap_entry e = { .key = key, .seq = h->next_seq++, .data = data };
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 256;
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

/* ---------------------------------------------------------------- names */

static const char *const profile_names[_PROFILE_MAX] = {
	[PROFILE_FLASH] = "flash",
	[PROFILE_OPTANE] = "optane",
	[PROFILE_BUFFERED] = "buffered",
};

static const char *const op_names[_MODEL_OP_MAX] = {
	[MODEL_READ] = "read",
	[MODEL_WRITE] = "write",
	[MODEL_FSYNC] = "fsync",
};

const char *model_profile_to_string(enum model_profile p)
{
	return p < _PROFILE_MAX ? profile_names[p] : NULL;
}

int model_profile_from_string(const char *s)
{
	for (int i = 0; i < _PROFILE_MAX; i++)
		if (strcmp(s, profile_names[i]) == 0)
			return i;
	return -EINVAL;
}

const char *model_op_to_string(enum model_op op)
{
	return op < _MODEL_OP_MAX ? op_names[op] : NULL;
}

/* ---------------------------------------------------------------- params */

void model_params_default(struct model_params *p, enum model_profile profile)
{
	*p = (struct model_params) {
		.profile = profile,
		.size = 256ULL << 20,
		.dies = 8,
		/*
		 * The timings of the prototype in testbed.md: 60 us reads and
		 * 500 us programs on 8 dies give ~16K page programs/s, which
		 * the FUSE path serves with ~10 us lateness.
		 */
		.read_ns = 60 * NSEC_PER_USEC,
		.program_ns = 500 * NSEC_PER_USEC,
		.write_ns = 0,
		.write_iops = 0,
		.buffer_pages = 0,
		.ack_ns = 0,
	};

	switch (profile) {
	case PROFILE_OPTANE:
		/*
		 * Symmetric, fast media with separate read and write resources.
		 * The write rate is capped well below what the FUSE path can
		 * serve (~100K requests/s on 2 CPUs): without the cap the
		 * daemon and the loop worker eat the CPU the reader needs and
		 * the "no interference" device would interfere through the CPU.
		 */
		p->read_ns = 12 * NSEC_PER_USEC;
		p->write_ns = 12 * NSEC_PER_USEC;
		p->program_ns = 0;
		p->write_iops = 16000;
		break;
	case PROFILE_BUFFERED:
		p->buffer_pages = 1024;
		p->ack_ns = 12 * NSEC_PER_USEC;
		break;
	default:
		break;
	}
}

int model_params_validate(const struct model_params *p, const char **bad_option)
{
	const char *bad = NULL;

	if (p->profile >= _PROFILE_MAX)
		bad = "--profile";
	else if (p->size < MODEL_PAGE_SIZE || p->size % MODEL_PAGE_SIZE != 0)
		bad = "--size";
	else if (p->dies < 1 || p->dies > 4096)
		bad = "--dies";
	else if (p->profile != PROFILE_OPTANE && p->program_ns == 0)
		/* A zero program time would make the round-robin pointless. */
		bad = "--program-us";
	else if (p->profile == PROFILE_BUFFERED && p->buffer_pages < 1)
		bad = "--buffer-pages";

	if (bad) {
		if (bad_option)
			*bad_option = bad;
		return -EINVAL;
	}
	return 0;
}

/* ---------------------------------------------------------------- model */

int model_init(struct model *m, const struct model_params *p)
{
	int r;

	r = model_params_validate(p, NULL);
	if (r < 0)
		return r;

	memset(m, 0, sizeof(*m));
	m->p = *p;
	m->die_free = calloc(p->dies, sizeof(*m->die_free));
	if (!m->die_free)
		return -ENOMEM;
	if (p->profile == PROFILE_OPTANE && p->write_iops > 0)
		m->write_gap_ns = NSEC_PER_SEC / p->write_iops;
	heap_init(&m->buffer);
	return 0;
}

void model_free(struct model *m)
{
	free(m->die_free);
	m->die_free = NULL;
	heap_free(&m->buffer);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* One FIFO per die: an operation starts when both it and the die are there. */
static uint64_t die_run(struct model *m, unsigned die, uint64_t at, uint64_t cost)
{
	uint64_t end = max_u64(at, m->die_free[die]) + cost;

	m->die_free[die] = end;
	return end;
}

static unsigned next_program_die(struct model *m)
{
	unsigned die = m->next_die;

	m->next_die = (m->next_die + 1) % m->p.dies;
	return die;
}

/* buffered: take a buffer slot at or after @now, return when it was free. */
static uint64_t buffer_take(struct model *m, uint64_t now)
{
	/* Slots whose program has finished are free again. */
	while (!heap_empty(&m->buffer) && heap_min_key(&m->buffer) <= now)
		(void) heap_pop(&m->buffer);

	if (m->buffer.n < m->p.buffer_pages)
		return now;

	/* Full: the write waits for the earliest program to finish. */
	return max_u64(now, heap_pop(&m->buffer).key);
}

static uint64_t page_write(struct model *m, uint64_t now)
{
	uint64_t start, end, in;

	switch (m->p.profile) {
	case PROFILE_FLASH:
		return die_run(m, next_program_die(m), now, m->p.program_ns);

	case PROFILE_OPTANE:
		/*
		 * The rate cap spaces out write starts; the write itself then
		 * takes write_ns. Reads never see any of this.
		 */
		start = max_u64(now, m->write_next);
		m->write_next = start + m->write_gap_ns;
		return start + m->p.write_ns;

	case PROFILE_BUFFERED:
		in = buffer_take(m, now);
		end = die_run(m, next_program_die(m), in, m->p.program_ns);
		/*
		 * Cannot fail in practice: the heap never holds more than
		 * buffer_pages entries and grew to that size already on the
		 * first fills. If it does, the slot is simply forgotten, which
		 * only makes the buffer briefly larger.
		 */
		(void) heap_push(&m->buffer, end, NULL);
		m->drained_at = max_u64(m->drained_at, end);
		return in + m->p.ack_ns;

	default:
		return now;
	}
}

static uint64_t page_read(struct model *m, uint64_t page, uint64_t now)
{
	/*
	 * Reads go to the die that holds the page and queue behind whatever
	 * that die has accepted before, programs included (optane: the die
	 * array only ever runs reads).
	 */
	return die_run(m, (unsigned) (page % m->p.dies), now, m->p.read_ns);
}

uint64_t model_submit(struct model *m, enum model_op op, uint64_t off,
		      uint64_t len, uint64_t now)
{
	uint64_t first, last, due = now;

	if (op == MODEL_FSYNC) {
		/*
		 * Acknowledged writes are durable except in the write buffer:
		 * a flush waits until the buffer has drained.
		 */
		if (m->p.profile == PROFILE_BUFFERED)
			due = max_u64(now, m->drained_at);
		return due;
	}

	if (len == 0)
		return now;

	first = off / MODEL_PAGE_SIZE;
	last = (off + len - 1) / MODEL_PAGE_SIZE;
	for (uint64_t page = first; page <= last; page++) {
		uint64_t end;

		if (op == MODEL_READ)
			end = page_read(m, page, now);
		else
			end = page_write(m, now);
		due = max_u64(due, end);
	}
	return due;
}
