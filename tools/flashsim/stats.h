/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What flashsim served and how well it kept its own timing. Pure: the daemon
 * feeds it numbers and asks for a JSON rendering.
 */

#include <stdint.h>
#include <stdio.h>

#include "model.h"

/*
 * Log-linear histogram: values below 2^SUB_BITS ns are exact, above that
 * each power of two is split into 2^SUB_BITS buckets (error < 1/16).
 */
#define LHIST_SUB_BITS 4
#define LHIST_SUB (1U << LHIST_SUB_BITS)
#define LHIST_BUCKETS ((64 - LHIST_SUB_BITS + 1) * LHIST_SUB)

struct lhist {
	uint64_t count;
	uint64_t sum;
	uint64_t max;
	uint64_t buckets[LHIST_BUCKETS];
};

void lhist_add(struct lhist *h, uint64_t v);
/* Upper bound of the bucket holding the q-quantile (0 < q <= 1); 0 if empty. */
uint64_t lhist_quantile(const struct lhist *h, double q);

struct op_stats {
	uint64_t requests;
	uint64_t bytes;
	uint64_t errors;
	uint64_t model_lat_sum_ns;
	uint64_t model_lat_max_ns;
};

struct flashsim_stats {
	struct op_stats ops[_MODEL_OP_MAX];
	/* How late replies left compared to their due time. */
	struct lhist lateness;
	uint64_t inflight;
	uint64_t inflight_max;
	uint64_t started_ns;
};

void stats_submitted(struct flashsim_stats *s, enum model_op op, uint64_t bytes,
		     uint64_t model_lat_ns);
void stats_replied(struct flashsim_stats *s, uint64_t due_ns, uint64_t now_ns);
void stats_error(struct flashsim_stats *s, enum model_op op);

/* Writes one JSON object (and a newline) to @f. */
void stats_write_json(const struct flashsim_stats *s, const struct model *m,
		      uint64_t now_ns, FILE *f);
