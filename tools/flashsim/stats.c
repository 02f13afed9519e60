/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <inttypes.h>

#include "stats.h"

static unsigned lhist_index(uint64_t v)
{
	unsigned msb, shift;

	if (v < LHIST_SUB)
		return (unsigned) v;
	msb = 63 - (unsigned) __builtin_clzll(v);
	shift = msb - LHIST_SUB_BITS;
	/* Row (msb - SUB_BITS + 1), column = the SUB_BITS bits below the msb. */
	return (shift + 1) * LHIST_SUB + (unsigned) ((v >> shift) & (LHIST_SUB - 1));
}

static uint64_t lhist_upper(unsigned idx)
{
	unsigned row = idx / LHIST_SUB, col = idx % LHIST_SUB, shift;

	if (row == 0)
		return col;
	shift = row - 1;
	/* Largest value that maps to this bucket. */
	return (((uint64_t) (LHIST_SUB + col) + 1) << shift) - 1;
}

void lhist_add(struct lhist *h, uint64_t v)
{
	h->buckets[lhist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

uint64_t lhist_quantile(const struct lhist *h, double q)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	rank = (uint64_t) (q * (double) h->count + 0.999999);
	if (rank < 1)
		rank = 1;
	for (unsigned i = 0; i < LHIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			uint64_t up = lhist_upper(i);

			/* Never report more than was seen. */
			return up < h->max ? up : h->max;
		}
	}
	return h->max;
}

void stats_submitted(struct flashsim_stats *s, enum model_op op, uint64_t bytes,
		     uint64_t model_lat_ns)
{
	struct op_stats *o = &s->ops[op];

	o->requests++;
	o->bytes += bytes;
	o->model_lat_sum_ns += model_lat_ns;
	if (model_lat_ns > o->model_lat_max_ns)
		o->model_lat_max_ns = model_lat_ns;
	s->inflight++;
	if (s->inflight > s->inflight_max)
		s->inflight_max = s->inflight;
}

void stats_replied(struct flashsim_stats *s, uint64_t due_ns, uint64_t now_ns)
{
	lhist_add(&s->lateness, now_ns > due_ns ? now_ns - due_ns : 0);
	if (s->inflight > 0)
		s->inflight--;
}

void stats_error(struct flashsim_stats *s, enum model_op op)
{
	s->ops[op].errors++;
}

static double div_or_zero(uint64_t a, uint64_t b)
{
	return b ? (double) a / (double) b : 0.0;
}

void stats_write_json(const struct flashsim_stats *s, const struct model *m,
		      uint64_t now_ns, FILE *f)
{
	const struct model_params *p = &m->p;
	const struct lhist *l = &s->lateness;

	fprintf(f, "{\"profile\": \"%s\", ", model_profile_to_string(p->profile));
	fprintf(f, "\"params\": {\"size\": %" PRIu64 ", \"page_size\": %llu, "
		"\"dies\": %u, \"read_ns\": %" PRIu64 ", \"program_ns\": %" PRIu64 ", "
		"\"write_ns\": %" PRIu64 ", \"write_iops\": %" PRIu64 ", "
		"\"buffer_pages\": %u, \"ack_ns\": %" PRIu64 ", "
		"\"gc_pages\": %u, \"gc_ns\": %" PRIu64 ", \"contention_ns\": %" PRIu64 ", "
		"\"storm_gc_pages\": %u, \"storm_slowdown\": %u}, ",
		p->size, MODEL_PAGE_SIZE, p->dies, p->read_ns, p->program_ns,
		p->write_ns, p->write_iops, p->buffer_pages, p->ack_ns,
		p->gc_pages, p->gc_ns, p->contention_ns, p->storm_gc_pages,
		p->storm_slowdown);
	fprintf(f, "\"storm\": %s, \"gc_stalls\": %" PRIu64 ", ",
		m->storm ? "true" : "false", m->gc_stalls);
	fprintf(f, "\"uptime_ns\": %" PRIu64 ", ",
		now_ns > s->started_ns ? now_ns - s->started_ns : 0);
	fputs("\"ops\": {", f);
	for (int op = 0; op < _MODEL_OP_MAX; op++) {
		const struct op_stats *o = &s->ops[op];

		fprintf(f, "%s\"%s\": {\"requests\": %" PRIu64 ", \"bytes\": %" PRIu64
			", \"errors\": %" PRIu64 ", \"model_lat_mean_ns\": %.1f"
			", \"model_lat_max_ns\": %" PRIu64 "}",
			op ? ", " : "", model_op_to_string(op), o->requests, o->bytes,
			o->errors, div_or_zero(o->model_lat_sum_ns, o->requests),
			o->model_lat_max_ns);
	}
	fputs("}, ", f);
	fprintf(f, "\"lateness_ns\": {\"count\": %" PRIu64 ", \"mean\": %.1f, "
		"\"p50\": %" PRIu64 ", \"p99\": %" PRIu64 ", \"p999\": %" PRIu64
		", \"max\": %" PRIu64 "}, ",
		l->count, div_or_zero(l->sum, l->count), lhist_quantile(l, 0.50),
		lhist_quantile(l, 0.99), lhist_quantile(l, 0.999), l->max);
	fprintf(f, "\"inflight\": %" PRIu64 ", \"inflight_max\": %" PRIu64 "}\n",
		s->inflight, s->inflight_max);
}
