/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The observer's state: shared by observer.c (its life, devices and
 * counters), observer-cgroup.c (per-cgroup accounting) and
 * observer-adjusts.c (Kyber's depth changes), nothing else. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "observer.h"

struct observer {
	struct kyber_observer_bpf *skel;
	enum observer_attach mode;
	bool kyber_view;
	unsigned ncpus;
	size_t stride;		/* bytes per CPU in a per-CPU value */
	void *percpu;		/* one per-CPU kt_dev_stats value */
	unsigned max_devices;
	bool *slot_used;
	bool *slot_tracked;	/* KT_WATCH_TRACK set for the slot */
	uint32_t *slot_kdev;
	struct slot_books *books;	/* userspace corrections per slot */
	struct bpf_program *track_progs[2];	/* insert, issue: attached on demand */
	struct bpf_link *track_links[2];
	/* sched_waking, sched_switch (the reads' app span): attached while a
	 * device is watched, since they run at every wakeup and context
	 * switch of the machine. */
	struct bpf_program *waiter_progs[2];
	struct bpf_link *waiter_links[2];
	uint64_t detached_ns;	/* when tracking stopped; 0: nothing to drain */
	bool *slot_cgroups;	/* KT_WATCH_CGROUPS set for the slot */
	struct kt_sampling *slot_sampling;	/* as asked for; none while cgroups are on */
	/* observer-adjusts.c: Kyber's depth changes as they come. */
	struct ring_buffer *adjusts;
	observer_adjust_fn adjust_fn;
	void *adjust_userdata;
};

/* What observer_expire() took off the kernel's books, per op. */
struct slot_books {
	int64_t queued[KT_OP_MAX], inflight[KT_OP_MAX];
	uint64_t expired[KT_OP_MAX];
};

/* The watch entry of a slot from its flags (tracked, cgroups). -errno. */
int observer_write_watch(struct observer *o, unsigned slot);
/* The sampling a slot is asked for into the map, or none while its
 * cgroups are accounted (their latencies count every request). -errno. */
int observer_write_sampling(struct observer *o, unsigned slot);
/* observer-cgroup.c: forget every cgroup entry of a slot's disk. */
void observer_cgroups_drop(struct observer *o, unsigned slot);
