/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kyber's latency controller, as in block/kyber-iosched.c (Linux 6.x):
 * per-domain latency buckets relative to the target, the 100 ms timer and
 * the depth scaling. Only the READ and WRITE domains are modelled (the sim
 * issues nothing else; an empty domain never decides in the kernel either).
 * Pure: the caller supplies the time.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "kyber-sim.h"

enum {
	KYBER_MODEL_DOMAINS = 2,	/* KT_OP_READ, KT_OP_WRITE */
	KYBER_MODEL_SHIFT = 2,		/* bucket width = target >> 2 */
	KYBER_MODEL_GOOD = 1 << KYBER_MODEL_SHIFT,	/* buckets 0..3: <= target */
	KYBER_MODEL_BUCKETS = 2 << KYBER_MODEL_SHIFT,	/* 4..7: bad; 7 catches the rest */
	KYBER_MODEL_TOTAL = 0,		/* insert -> complete */
	KYBER_MODEL_IO = 1,		/* issue -> complete */
	KYBER_MODEL_MIN_SAMPLES = 500,
};

#define KYBER_MODEL_TIMER_NS (100ULL * 1000 * 1000)	/* HZ / 10 */
#define KYBER_MODEL_TIMEOUT_NS (1000ULL * 1000 * 1000)	/* HZ */
#define KYBER_MODEL_READ_TARGET_NS (2ULL * 1000 * 1000)
#define KYBER_MODEL_WRITE_TARGET_NS (10ULL * 1000 * 1000)

struct kyber_model {
	uint64_t target[KYBER_MODEL_DOMAINS];
	unsigned depth[KYBER_MODEL_DOMAINS];
	/* kqd->latency_buckets: accumulate until a percentile is computed. */
	unsigned buckets[KYBER_MODEL_DOMAINS][2][KYBER_MODEL_BUCKETS];
	/* kqd->latency_timeout: one per domain, shared by both types. 0: unset. */
	uint64_t timeout[KYBER_MODEL_DOMAINS];
	/* kqd->domain_p99: remembered for the next congested window; -1: none. */
	int domain_p99[KYBER_MODEL_DOMAINS];
	struct sim_kyber_info info;
};

/* Domain token caps: READ 256, WRITE 128. */
unsigned kyber_model_cap(unsigned domain);

/* Fresh Kyber: default targets, depths at the caps, no samples. */
void kyber_model_init(struct kyber_model *k);

/* Bucket of a latency against a target (add_latency_sample()). */
unsigned kyber_model_bucket(uint64_t target, uint64_t latency);

/* kyber_completed_request(): both samples against the current target. */
void kyber_model_sample(struct kyber_model *k, unsigned domain, uint64_t total_ns, uint64_t io_ns);

/* kyber_timer_fn() at time now. */
void kyber_model_timer(struct kyber_model *k, uint64_t now);
