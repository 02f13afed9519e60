/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The reads' app span (kt_app_wait in observer-abi.h): a timed read's
 * completion (read_completed()) to the switch-in of the task waiting for it.
 * sched_waking takes the first user task woken on the completing CPU for
 * its waiter; sched_switch ends the span. Both run at every wakeup and
 * context switch of the machine, so each does the least it can, and
 * userspace attaches them only while a device is watched.
 */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "observer-abi.h"
#include "observer-stats.bpf.h"

#define KT_PF_KTHREAD		0x00200000	/* PF_KTHREAD, include/linux/sched.h */

/* Slot -> the reads moved to their app span's bucket (kt_app_moves), shared
 * by the CPUs. Zeroed by userspace with the slot's dev_stats. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KT_MAX_DEVICES_DEFAULT);
	__type(key, __u32);
	__type(value, struct kt_app_moves);
} app_moves SEC(".maps");

/* The last timed read completion of each CPU, until the first wakeup after
 * it takes it for its waiter (kt_read_done). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kt_read_done);
} read_done SEC(".maps");

/* Tasks woken by a read's completion, by pid modulo KT_APP_WAITS, until
 * they are switched in. An array: the switch-in of every task on the
 * machine looks here, and an indexed load with a compare is the least that
 * can cost; two waiters whose pids collide lose the older one's span (it
 * keeps its total). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KT_APP_WAITS);
	__type(key, __u32);
	__type(value, struct kt_app_wait);
} app_waits SEC(".maps");

/* A timed read completed on this CPU: its total is its app span until
 * its waiter, if one is woken, is switched in. */
static __always_inline void read_completed(struct kt_dev_stats *ds, __u64 now, __u64 total)
{
	__u32 zero = 0;
	struct kt_read_done *done = bpf_map_lookup_elem(&read_done, &zero);

	if (!done)
		return;
	done->done_ns = now;
	done->start_ns = now - total;
	done->slot = ds->slot;
	done->dev = ds->dev;
	done->bucket = kt_hist_index(total);
}

/* The first task woken on this CPU right after a read completed on it is
 * the read's waiter if it is a user task. A kernel thread is not: the
 * completion path's own workers (a loop device's, softirq's) wake each
 * other there when the reader has not gone to sleep yet, and taken for its
 * waiter such a wakeup ended the span at that worker's switch-in; the read
 * then keeps its total. Runs at every wakeup of the machine: the task is
 * read only for one inside the window. */
static __always_inline int on_waking(struct task_struct *p, bool btf)
{
	__u32 zero = 0, pid, idx, flags;
	struct kt_read_done *done = bpf_map_lookup_elem(&read_done, &zero);
	struct kt_app_wait *w;

	if (!done || !done->done_ns)
		return 0;
	if (bpf_ktime_get_ns() - done->done_ns > KT_APP_WAKE_NS) {
		done->done_ns = 0;
		return 0;
	}
	pid = btf ? p->pid : BPF_CORE_READ(p, pid);
	flags = btf ? p->flags : BPF_CORE_READ(p, flags);
	if (pid && !(flags & KT_PF_KTHREAD)) {
		idx = pid & (KT_APP_WAITS - 1);
		w = bpf_map_lookup_elem(&app_waits, &idx);
		if (w) {
			/* Free, filled, then published, so that a switch-in on
			 * another CPU sees no half-written entry as its own:
			 * volatile, since the compiler would drop the first
			 * store to pid as dead, and in this order between the
			 * compiler barriers (x86 keeps stores in order; where
			 * a CPU does not, a mixed entry costs one read's span). */
			*(volatile __u64 *)&w->pid = 0;
			barrier();
			w->slot = done->slot;
			w->dev = done->dev;
			w->bucket = done->bucket;
			w->start_ns = done->start_ns;
			w->total_ns = done->done_ns - done->start_ns;
			barrier();
			*(volatile __u64 *)&w->pid = pid;
		}
	}
	done->done_ns = 0;
	return 0;
}

/* A read into (delta 1) or out of (-1) a bucket of a slot's app span. */
static __always_inline void app_move(__u32 slot, __u32 bucket, int delta)
{
	struct kt_app_moves *m = bpf_map_lookup_elem(&app_moves, &slot);
	__u64 i = bucket;

	barrier_var(i);		/* bounded once for the verifier */
	if (m && i < KT_HIST_BUCKETS)
		__sync_fetch_and_add(&m->moves[i], delta);
}

/* The entry of a task being switched out is stale: it was woken while
 * still on its CPU, on its way to sleep (the wakeup found it before the
 * switch), and has run since, so its read's span ended at the completion.
 * Claimed later, at a preemption's switch-in, it would take the time the
 * task ran for the read's. */
static __always_inline void drop_waiter(struct task_struct *prev, bool btf)
{
	__u32 pid = btf ? prev->pid : BPF_CORE_READ(prev, pid);
	__u32 idx = pid & (KT_APP_WAITS - 1);
	struct kt_app_wait *w = bpf_map_lookup_elem(&app_waits, &idx);

	if (w && pid && w->pid == pid)
		__sync_bool_compare_and_swap(&w->pid, (__u64)pid, 0);
}

/* A woken waiter runs: its read's span ends here. */
static __always_inline int on_switch(struct task_struct *prev, struct task_struct *next, bool btf)
{
	__u32 pid = btf ? next->pid : BPF_CORE_READ(next, pid);
	__u32 idx = pid & (KT_APP_WAITS - 1), from, to;
	struct kt_app_wait *w = bpf_map_lookup_elem(&app_waits, &idx);
	struct kt_dev_stats *ds;
	__u64 span;

	drop_waiter(prev, btf);
	if (!w || !pid || w->pid != pid || !__sync_bool_compare_and_swap(&w->pid, (__u64)pid, 0))
		return 0;
	span = bpf_ktime_get_ns() - w->start_ns;
	ds = slot_stats(w->slot, w->dev);
	if (!ds || span > KT_APP_STALE_NS || span < w->total_ns)
		return 0;
	/* The read's total moves to the bucket of its app span. The sum is
	 * per CPU, summed modulo 2^64: its part may land on another CPU than
	 * the total did. */
	from = w->bucket;
	to = kt_hist_index(span);
	if (from != to) {
		app_move(w->slot, from, -1);
		app_move(w->slot, to, 1);
	}
	ctr(ds, KT_OP_READ)->lat_sum_ns[KT_LAT_APP] += span - w->total_ns;
	return 0;
}
