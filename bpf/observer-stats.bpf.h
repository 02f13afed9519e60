/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The watched devices and their statistics, which every part of the
 * observer (kyber_observer.bpf.c) finds a request's or an event's device in.
 */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "observer-abi.h"

/* Kernel dev_t of the whole disk -> slot and timing flags. Filled by the daemon. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KT_MAX_DEVICES_DEFAULT);
	__type(key, __u32);
	__type(value, struct kt_watch);
} watched SEC(".maps");

/*
 * Slot -> the watched device's statistics, per CPU. Userspace writes a
 * slot (zeroed, with its device's dev_t in every CPU's copy) before it
 * enters the device in watched, and zeroes it after it took it out; a
 * program uses a slot only where the copy names the very device of the
 * request. An array: its lookup is an indexed load, where a hash lookup
 * is the costliest step of a completion before its timestamp (a jhash and
 * a bucket walk, on every I/O of the machine). Preallocated (max_devices
 * values per CPU, taken at load): a per-CPU value allocated at run time is
 * allocated without sleeping, and once the kernel's first per-CPU chunk is
 * used up that fails (ENOMEM at the fifth or sixth 16 KiB device on the
 * test machines).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KT_MAX_DEVICES_DEFAULT);
	__type(key, __u32);
	__type(value, struct kt_dev_stats);
} dev_stats SEC(".maps");

/* A watched slot's statistics, if they are still that device's. */
static __always_inline struct kt_dev_stats *slot_stats(__u32 slot, __u32 dev)
{
	struct kt_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &slot);

	return ds && dev && ds->dev == dev ? ds : NULL;
}

/* The device's statistics, if it is watched: by its dev_t. */
static __always_inline struct kt_dev_stats *stats_of(__u32 dev)
{
	struct kt_watch *w = bpf_map_lookup_elem(&watched, &dev);

	return w ? slot_stats(w->slot, dev) : NULL;
}

/* An op's counters; the mask bounds a value the verifier lost track of. */
static __always_inline struct kt_op_counters *ctr(struct kt_dev_stats *ds, __u32 op)
{
	barrier_var(op);	/* keep the mask: the compiler knows op < 4, the verifier not */
	return &ds->op[op & (KT_OP_MAX - 1)];
}
