/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The BPF observer's lifecycle: open, load, attach, watch and unwatch a
 * device, snapshot its counters. One observer serves every device.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interval.h"

enum observer_attach {
	OBSERVER_ATTACH_AUTO,	/* tp_btf where the kernel has it, else raw_tp */
	OBSERVER_ATTACH_TP_BTF,
	OBSERVER_ATTACH_RAW_TP,
};

struct observer;

int observer_attach_from_string(const char *s, enum observer_attach *ret);
const char *observer_attach_to_string(enum observer_attach a);

/* The most devices one observer can watch (its maps are sized for max_devices). */
#define OBSERVER_DEVICES_MAX 1024u

/*
 * Load and attach. max_devices sizes the maps. On failure logs the cause
 * (missing BTF, which capability is missing, ...) and returns -errno.
 */
int observer_new(struct observer **ret, enum observer_attach attach, unsigned max_devices);
struct observer *observer_free(struct observer *o);

/* The attach type actually in use. */
enum observer_attach observer_attach_mode(const struct observer *o);
/* False when the kernel has no Kyber tracepoints (no Kyber view). */
bool observer_has_kyber_view(const struct observer *o);

/* Start watching a disk (kernel dev_t). Its counters start at zero.
 * -EEXIST if watched already, -ENOSPC if all slots are taken. */
int observer_watch(struct observer *o, uint32_t kdev, unsigned *ret_slot);
/* Stop, drop the device's in-flight request entries and give its
 * statistics' memory back. */
int observer_unwatch(struct observer *o, unsigned slot);

/*
 * How a watched device's requests are timed. tracked: the kernel does not
 * stamp their issue (see KT_WATCH_TRACK), so the insert/issue programs must
 * follow them; they are attached while any watched device needs them. A
 * device starts tracked until told otherwise.
 */
int observer_set_tracked(struct observer *o, unsigned slot, bool tracked);


/*
 * Drop every request entry of a slot, correcting its queued/inflight gauges
 * and counting the entries as expired. For entries whose completion event
 * the kernel never delivered: call it only when the device is idle (see
 * interval_lost_completions()). Returns the number dropped.
 */
int observer_expire(struct observer *o, unsigned slot);

/* Cumulative counters of a watched slot, summed over CPUs. */
int observer_snapshot(struct observer *o, unsigned slot, struct kt_snapshot *out);

/*
 * Time 1 in 2^shift of the device's completions per op (kt_sampling), the
 * rest counted as unsampled; none while its cgroups are accounted.
 */
int observer_set_sampling(struct observer *o, unsigned slot, const struct kt_sampling *sm);

/*
 * Per-cgroup accounting of a watched device (KT_WATCH_CGROUPS): on while
 * it has weights. Turning it off forgets its cgroups' counters.
 */
int observer_set_cgroups(struct observer *o, unsigned slot, bool on);

/* One cgroup's cumulative counters on a device. */
struct kt_cg_sample {
	uint64_t cgroup;			/* kernfs node id; 0: requests without one */
	struct kt_cg_counters op[KT_CG_OPS];
	uint64_t hist[KT_CG_OPS][KT_CG_HIST_BUCKETS];
};

/*
 * The cgroups accounted on a device now: up to max in out, their number
 * in *ret_n (may exceed max: the rest were not read). -errno.
 */
int observer_cgroup_snapshot(struct observer *o, unsigned slot, struct kt_cg_sample *out, size_t max,
			     size_t *ret_n);
/* Forget one cgroup's counters on a device (an idle one: its memory goes
 * back to the map, and it starts from zero if it comes back). */
int observer_cgroup_forget(struct observer *o, unsigned slot, uint64_t cgroup);

/* Kernel-side statistics of one attached program (bpf_prog_info). run_cnt
 * and run_time_ns count only while kernel.bpf_stats_enabled=1. */
struct observer_prog_stats {
	char name[32];
	uint64_t run_cnt, run_time_ns;
	uint64_t recursion_misses;	/* nested calls the kernel skipped */
};

/* Fills up to n entries, returns how many programs are attached. */
int observer_prog_stats(struct observer *o, struct observer_prog_stats *out, size_t n);

/* Kyber's depth changes as they happen (kt_kyber_adjust), for a grow
 * pulse (device-pulse.c). fn gets each with the device's slot. Returns an
 * fd to poll for them (owned by the observer), or -errno; -EBUSY when
 * open already. */
typedef void (*observer_adjust_fn)(unsigned slot, int op, uint32_t depth, void *userdata);
int observer_adjusts_open(struct observer *o, observer_adjust_fn fn, void *userdata);
/* Hands every waiting change to fn. -errno. */
int observer_adjusts_consume(struct observer *o);
void observer_adjusts_close(struct observer *o);

/* Entries in the per-request map (all devices); for leak checks. */
/* 0 if this process may still use the observer's maps (a capability
 * check), -errno (-EPERM) if not. */
int observer_check_access(struct observer *o);
int observer_pending_requests(struct observer *o, size_t *ret);
