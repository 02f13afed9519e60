/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kyber's latency controller. Every rule here follows block/kyber-iosched.c
 * of Linux 6.x (kyber_completed_request, calculate_percentile,
 * kyber_timer_fn, kyber_resize_domain); the comments name the kernel detail
 * each one reproduces, because the tuner's behaviour depends on them.
 */
#include <string.h>

#include "sim-kyber.h"

unsigned kyber_model_cap(unsigned domain)
{
	/* kyber_depth[]: READ 256, WRITE 128 (DISCARD 64, OTHER 16). */
	return domain == KT_OP_READ ? 256 : domain == KT_OP_WRITE ? 128 : 0;
}

void kyber_model_init(struct kyber_model *k)
{
	memset(k, 0, sizeof(*k));
	k->target[KT_OP_READ] = KYBER_MODEL_READ_TARGET_NS;
	k->target[KT_OP_WRITE] = KYBER_MODEL_WRITE_TARGET_NS;
	for (unsigned d = 0; d < KYBER_MODEL_DOMAINS; d++) {
		k->depth[d] = kyber_model_cap(d);
		/* kyber_queue_data_alloc() sets domain_p99 to -1. */
		k->domain_p99[d] = -1;
		k->info.last_io_p90[d] = -1;
		k->info.last_total_p99[d] = -1;
		k->info.min_depth[d] = k->depth[d];
	}
}

unsigned kyber_model_bucket(uint64_t target, uint64_t latency)
{
	uint64_t divisor = target >> KYBER_MODEL_SHIFT, b;

	/* (latency - 1) / max(target >> 2, 1), capped at the last bucket: a
	 * latency exactly at the target is still good (bucket 3) when the
	 * target is a multiple of 4; otherwise the truncated divisor already
	 * makes it bad (bucket 4), as in the kernel. */
	if (!latency)
		return 0;
	if (!divisor)
		divisor = 1;
	b = (latency - 1) / divisor;
	return b < KYBER_MODEL_BUCKETS - 1 ? (unsigned)b : KYBER_MODEL_BUCKETS - 1;
}

void kyber_model_sample(struct kyber_model *k, unsigned domain, uint64_t total_ns, uint64_t io_ns)
{
	uint64_t t;

	if (domain >= KYBER_MODEL_DOMAINS)
		return;
	/*
	 * Bucketed now, against the target current now: a target change
	 * does not rebucket what is already counted, so the first decision
	 * after a change mixes both targets. The kernel counts into per-CPU
	 * buckets flushed at the timer; since only the timer reads them,
	 * counting straight into the summed buckets is the same thing.
	 */
	t = k->target[domain];
	k->buckets[domain][KYBER_MODEL_TOTAL][kyber_model_bucket(t, total_ns)]++;
	k->buckets[domain][KYBER_MODEL_IO][kyber_model_bucket(t, io_ns)]++;
}

/* calculate_percentile(): the bucket holding the percentile, or -1. */
static int percentile(struct kyber_model *k, unsigned domain, unsigned type,
		      unsigned pct, uint64_t now)
{
	unsigned *b = k->buckets[domain][type];
	unsigned samples = 0, rank, i;

	for (i = 0; i < KYBER_MODEL_BUCKETS; i++)
		samples += b[i];
	if (!samples)
		return -1;

	/*
	 * 500 samples, or one second after the first evaluation that saw
	 * samples. The timeout is per domain and shared by the I/O p90 and
	 * the total p99: whichever computes first clears it, and the other
	 * then starts a fresh second. A domain below 500 samples per second
	 * therefore decides only when its (never cleared until used) buckets
	 * reach 500 or the shared timeout happens to expire for it.
	 */
	if (!k->timeout[domain])
		k->timeout[domain] = now + KYBER_MODEL_TIMEOUT_NS;
	if (samples < KYBER_MODEL_MIN_SAMPLES && k->timeout[domain] > now)
		return -1;
	k->timeout[domain] = 0;

	/* DIV_ROUND_UP(samples * percentile, 100) */
	rank = (samples * pct + 99) / 100;
	for (i = 0; i < KYBER_MODEL_BUCKETS - 1; i++) {
		if (b[i] >= rank)
			break;
		rank -= b[i];
	}
	memset(b, 0, sizeof(k->buckets[domain][type]));
	return (int)i;
}

static void resize(struct kyber_model *k, unsigned domain, unsigned depth)
{
	unsigned cap = kyber_model_cap(domain);

	if (depth < 1)
		depth = 1;
	if (depth > cap)
		depth = cap;
	if (depth == k->depth[domain])
		return;
	k->depth[domain] = depth;
	k->info.adjusts[domain]++;	/* trace_kyber_adjust */
	if (depth < k->info.min_depth[domain])
		k->info.min_depth[domain] = depth;
}

void kyber_model_timer(struct kyber_model *k, uint64_t now)
{
	bool bad = false;
	unsigned d;

	k->info.timer_runs++;

	/* Congestion: ANY domain's I/O-latency p90 over its own target. */
	for (d = 0; d < KYBER_MODEL_DOMAINS; d++) {
		int p90 = percentile(k, d, KYBER_MODEL_IO, 90, now);

		if (p90 >= 0)
			k->info.last_io_p90[d] = p90;
		if (p90 >= KYBER_MODEL_GOOD)
			bad = true;
	}
	if (bad)
		k->info.congested_runs++;

	for (d = 0; d < KYBER_MODEL_DOMAINS; d++) {
		int p99 = percentile(k, d, KYBER_MODEL_TOTAL, 99, now);

		if (p99 >= 0)
			k->info.last_total_p99[d] = p99;
		/*
		 * A domain without enough samples this window uses the p99 it
		 * remembered from an uncongested window, once: congestion
		 * consumes the memory (-1) so it does not throttle twice on
		 * the same data.
		 */
		if (bad) {
			if (p99 < 0)
				p99 = k->domain_p99[d];
			k->domain_p99[d] = -1;
		} else if (p99 >= 0) {
			k->domain_p99[d] = p99;
		}
		if (p99 < 0)
			continue;

		/*
		 * Scale only when congested or this domain's own total p99 is
		 * bad: depth * (b + 1) / 4 in integer arithmetic (x1/4 .. x2).
		 * Integer truncation matters at small depths: depth 1 grows
		 * only from bucket 7 (1 * 8 / 4), depth 2 only from bucket 5.
		 */
		if (bad || p99 >= KYBER_MODEL_GOOD)
			resize(k, d, (k->depth[d] * (unsigned)(p99 + 1)) >> KYBER_MODEL_SHIFT);
	}
}
