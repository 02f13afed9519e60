// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The scheduler's price: CPU time the block layer spends per I/O, by
 * sampling. A perf cpu-clock event on every CPU runs this program once per
 * KT_COST_PERIOD_NS of CPU time; a sample counts as the block layer's when
 * the interrupted kernel stack passes through one of its entry points:
 * submission (blk_mq_submit_bio, blk_mq_flush_plug_list), queue runs
 * (blk_mq_run_hw_queue, blk_mq_run_work_fn) or the end of a request
 * (__blk_mq_end_request, blk_mq_end_request_batch). Those hold the
 * elevator's insert, dispatch and completion hooks, its locks and what
 * bypassing it saves (direct issue under none), and none of the device's
 * own time.
 *
 * Sampling costs the same whatever the IOPS (one run per period, none per
 * I/O), and the test machines' kernel refuses fentry programs (EPERM),
 * which would time each call. Userspace reads the ranges of those functions from
 * /proc/kallsyms, enables the events for one interval now and then
 * (daemon/cost-probe.c) and spreads the time over the I/Os of the window.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "observer-abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Frames of the interrupted stack looked at: the entry points sit within
 * the first dozen or so below a driver or an elevator. */
#define STACK_FRAMES	40

/* [start, end) of each entry point, set before load. */
const volatile __u64 range_start[KT_COST_RANGES] = {};
const volatile __u64 range_end[KT_COST_RANGES] = {};
const volatile __u32 n_ranges = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kt_cost);
} cost SEC(".maps");

static __always_inline bool in_block_layer(__u64 ip)
{
	for (__u32 r = 0; r < KT_COST_RANGES && r < n_ranges; r++)
		if (ip >= range_start[r] && ip < range_end[r])
			return true;
	return false;
}

SEC("perf_event")
int sample(void *ctx)
{
	__u64 ips[STACK_FRAMES];
	__u32 zero = 0;
	struct kt_cost *c;
	long len;

	c = bpf_map_lookup_elem(&cost, &zero);
	if (!c)
		return 0;
	c->samples++;
	len = bpf_get_stack(ctx, ips, sizeof(ips), 0);
	if (len <= 0)
		return 0;	/* user mode: no kernel stack */
	for (__u32 i = 0; i < STACK_FRAMES; i++) {
		if (i >= (__u64)len / sizeof(ips[0]))
			break;
		if (in_block_layer(ips[i])) {
			c->block++;
			break;
		}
	}
	return 0;
}
