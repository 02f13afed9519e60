/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Kyber's own view of a watched device, from its tracepoints: the depths
 * it set (also streamed for the write domain, which a pulse follows) and
 * its throttled counts. Not its kyber_latency records: nothing in the
 * daemon reads them (docs/observer.md, "Kyber's view").
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

/* The Kyber state of a watched device, and its slot; NULL if not watched. */
static __always_inline struct kt_kyber_state *kyber_of(__u32 dev, __u32 *slot)
{
	struct kt_watch *w = bpf_map_lookup_elem(&watched, &dev);

	if (!w)
		return NULL;
	*slot = w->slot;
	return bpf_map_lookup_elem(&kyber_state, &w->slot);
}

static __always_inline int on_kyber_adjust(__u32 dev, const char *domain, unsigned int depth)
{
	struct kt_kyber_adjust ev = {};
	struct kt_kyber_state *ks;
	__u32 slot = 0;
	int dom;

	ks = kyber_of(dev, &slot);
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
	ev.slot = slot;
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
