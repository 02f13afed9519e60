/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kyber's own view of a watched device, from its tracepoints: the latency
 * percentiles it judged each domain by, the depths it set (also streamed
 * for the write domain, which a pulse follows), and its throttled counts.
 */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "observer-abi.h"
#include "observer-stats.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KT_MAX_DEVICES_DEFAULT);
	__type(key, __u32);
	__type(value, struct kt_kyber_state);
} kyber_state SEC(".maps");

/* Kyber's depth changes as they happen (kt_kyber_adjust). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, KT_KYBER_ADJUSTS_BYTES);
} kyber_adjusts SEC(".maps");

static __always_inline int domain_of(const char *name)
{
	char c = 0;

	bpf_probe_read_kernel(&c, 1, name);
	switch (c) {
	case 'R':
		return KT_OP_READ;
	case 'W':
		return KT_OP_WRITE;
	case 'D':
		return KT_OP_DISCARD;
	default:
		return KT_OP_OTHER;
	}
}

static __always_inline struct kt_kyber_state *kyber_of(__u32 dev)
{
	struct kt_watch *w = bpf_map_lookup_elem(&watched, &dev);

	if (!w)
		return NULL;
	return bpf_map_lookup_elem(&kyber_state, &w->slot);
}

static __always_inline int on_kyber_latency(__u32 dev, const char *domain, const char *type,
					    unsigned int percentile, unsigned int numerator,
					    unsigned int denominator, unsigned int samples)
{
	struct kt_kyber_state *ks = kyber_of(dev);
	struct kt_kyber_latency *l;
	int dom, t;
	char c = 0;

	if (!ks)
		return 0;
	dom = domain_of(domain);
	bpf_probe_read_kernel(&c, 1, type);
	t = c == 'I' ? KT_KYBER_IO : KT_KYBER_TOTAL;	/* "I/O" or "total" */
	if (dom < 0 || dom >= KT_OP_MAX)
		return 0;
	l = &ks->latency[dom][t];
	l->time_ns = bpf_ktime_get_ns();
	l->percentile = percentile;
	l->numerator = numerator;
	l->denominator = denominator;
	l->samples = samples;
	return 0;
}

static __always_inline int on_kyber_adjust(__u32 dev, const char *domain, unsigned int depth)
{
	struct kt_watch *w = bpf_map_lookup_elem(&watched, &dev);
	struct kt_kyber_adjust ev = {};
	struct kt_kyber_state *ks;
	int dom;

	if (!w)
		return 0;
	ks = bpf_map_lookup_elem(&kyber_state, &w->slot);
	if (!ks)
		return 0;
	dom = domain_of(domain);
	if (dom < 0 || dom >= KT_OP_MAX)
		return 0;
	ks->depth[dom] = depth;
	ks->adjust_time_ns[dom] = bpf_ktime_get_ns();
	ks->adjust_count[dom]++;
	/* Only a pulse reads these, and it follows the writes. */
	if (dom != KT_OP_WRITE)
		return 0;
	ev.time_ns = ks->adjust_time_ns[dom];
	ev.slot = w->slot;
	ev.op = dom;
	ev.depth = depth;
	bpf_ringbuf_output(&kyber_adjusts, &ev, sizeof(ev), 0);
	return 0;
}

static __always_inline int on_kyber_throttled(__u32 dev, const char *domain)
{
	struct kt_dev_stats *ds = stats_of(dev);
	int op = domain_of(domain);

	if (ds && op >= 0 && op < KT_OP_MAX)
		ctr(ds, op)->kyber_throttled++;
	return 0;
}
