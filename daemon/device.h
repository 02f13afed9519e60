/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One tuned device, as its owner (the manager) drives it: created with a
 * goal, stepped once per interval, paused, resumed, reset, freed (rolling
 * back as configured). What it needs from its owner comes in a struct
 * device_env at creation; the device never reaches back into the manager.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "blockdev.h"
#include "cgroup-parse.h"
#include "controller.h"
#include "daemon-options.h"
#include "goal.h"
#include "host-cpu.h"
#include "kyber-sysfs.h"

struct cgroup_hierarchy;
struct metrics_device;
struct observer;
struct originals;
struct recorder;
struct state;

struct device_env {
	const struct manager_options *o;
	struct observer *observer;		/* shared by every device */
	const struct host_cpu_time *host;	/* the host's CPU time at the last tick, read once for all */
	const struct profiles *profiles;	/* per-model starting points; NULL: none */
	const struct cgroup_hierarchy *cgroups;	/* the io controller's; NULL: none (no weights) */
	sd_event *event;
	struct recorder *recorder;		/* NULL: no flight record */
	const struct manager_callbacks *cb;	/* read at each call: may change */
	/* What was learned and what to restore, kept in the owner's files:
	 * the device updates the tables, then asks the owner to save them
	 * (errors are logged there, never fatal). */
	struct state *state;
	struct originals *originals;
	void (*save_state)(void *owner);
	void (*save_originals)(void *owner);
	void *owner;
};

/* Saves the originals, switches to (or restarts) Kyber and starts
 * watching. -errno, with a sentence in error (error.h), on failure. */
int device_new(const struct device_env *env, const struct blockdev *bd, const struct goal *g,
	       enum goal_source source, struct device **ret, sd_bus_error *error);
/* Puts the cgroup limits back and rolls back if configured (and not
 * overridden): what the device leaves behind, done once. */
void device_release(struct device *d);
/* device_release() if not done yet, unwatches, frees. */
struct device *device_free(struct device *d);
/* Kyber changed a domain's depth on the disk watched in observer slot
 * `slot`: a grow pulse under way there takes its next step. */
void device_pulse_on_adjust(struct device *d, unsigned slot, int op, uint32_t depth);
/* One interval: measure, decide, apply, report. */
void device_step(struct device *d);
/* Is the disk still there, with the same dev_t and diskseq (a new disk
 * may reuse the name and number)? If not, why, in a phrase; nothing is
 * restored when the device is freed. */
bool device_present(struct device *d, char *why, size_t n);

void device_set_goal(struct device *d, const struct goal *g, enum goal_source source);
/* The configured goal a run-time goal stands over (NULL: none). */
void device_set_config_goal(struct device *d, const char *goal_text);
const char *device_config_goal(const struct device *d);
/* Does the device still have the scheduler and targets kyber-tuned left
 * on it? If not, what differs, in a phrase. */
bool device_as_left(struct device *d, char *why, size_t n);
/* Someone changed the device (kernel name) since the instance that
 * recorded e last wrote it: what differs, in a phrase. False if not, or
 * if e records nothing of it (an older version). */
struct original;
bool original_changed(const char *sysroot, const char *name, const struct original *e, char *why, size_t n);
/* A setting read now against one kyber-tuned left: what differs, in a
 * phrase, or false. */
bool kyber_saved_differ(const struct kyber_saved *now, const struct kyber_saved *left, char *why, size_t n);
void device_pause(struct device *d);
int device_resume(struct device *d);
int device_reset(struct device *d);

/* What a device looks like now. */
struct device_op_status {
	double iops;
	uint64_t p50_ns, p99_ns;	/* total latency, last interval; 0: none */
	uint32_t depth;			/* Kyber's depth; 0: unknown */
};

struct device_status {
	const char *name;
	const char *id;			/* stable id (WWID, serial+model, or the name) */
	char scheduler[SCHED_NAME_MAX];
	const char *scheduler_reason;	/* why it runs that one (scheduler=auto) */
	uint64_t scheduler_switches;
	/* The block layer's CPU time per I/O measured under the original
	 * scheduler and under Kyber; 0: not measured. */
	uint64_t original_cost_ns, kyber_cost_ns;
	char goal[GOAL_TEXT_MAX];
	enum ctl_state state;
	const char *reason;
	struct kyber_targets current;
	struct kyber_saved original;
	uint64_t interval_ns;		/* 0: no interval yet */
	uint64_t metric_ns;		/* the goal's read percentile; 0: unknown */
	int goal_met;			/* -1: unknown */
	struct device_op_status read, write;
	uint64_t changes;		/* targets written since tuning started */
	enum goal_source source;
};

void device_get_status(const struct device *d, struct device_status *out);
/* What the metrics file shows of it (metrics.h); out->totals points into d. */
void device_get_metrics(const struct device *d, struct metrics_device *out);
const char *device_name(const struct device *d);
/* Last interval's total-latency histogram of an op (KT_OP_READ,
 * KT_OP_WRITE), KT_HIST_BUCKETS buckets; NULL before the first interval. */
const __u64 *device_last_hist(const struct device *d, int op);

/* The scheduler-cost sampler's windows (cost-probe.h), as the owner runs
 * them over whole intervals: one begins after a tick, ends before the
 * next; after that tick's step the device takes what the window measured
 * if it did nearly all the I/O of the tuned devices (all_ios) and ran one
 * scheduler throughout. */
struct cost_window;
void device_cost_window_begin(struct device *d);
void device_cost_window_end(struct device *d, const struct cost_window *w, uint64_t all_ios);
/* I/Os of the interval measured at this tick; 0: none. */
uint64_t device_interval_ios(const struct device *d);
/* Busy, and its scheduler's cost not measured yet: sample soon. */
bool device_cost_wanted(const struct device *d);

/*
 * Cgroups sharing the disk by weight (share.h, device-share.c). A weight
 * names a cgroup by its path relative to the io controller's hierarchy
 * root; one set at run time stands over a configured one. -errno, with a
 * sentence in error: no io controller (-EOPNOTSUPP), an invalid path or
 * weight (-EINVAL), no such cgroup or no such weight (-ENOENT).
 */
struct device_weight {
	char cgroup[CGROUP_PATH_MAX];
	uint32_t weight;
	enum goal_source source;
};

int device_set_weight(struct device *d, const char *cgroup, uint32_t weight, enum goal_source source,
		      sd_bus_error *error);
int device_clear_weight(struct device *d, const char *cgroup, sd_bus_error *error);
size_t device_n_weights(const struct device *d);
const struct device_weight *device_weight(const struct device *d, size_t i);

/* One cgroup sharing the disk, as the last period saw it. */
struct device_share_row {
	char cgroup[CGROUP_PATH_MAX];	/* "(none)": requests without a cgroup */
	uint32_t weight;
	bool weighted;			/* a weight was set for it (else io.weight's default) */
	double share;			/* of the disk's capacity (limiting) or of what was done */
	double read_iops, write_iops, read_bps, write_bps;
	uint64_t read_p99_ns, write_p99_ns;	/* total latency; 0: none */
	struct cgroup_limits limit;	/* kyber-tuned's limits in force; 0: none */
};

/* The cgroups doing I/O on the disk, and the weighted ones that did
 * none lately: *ret (free()) with *n rows. -ENOMEM. */
int device_get_shares(const struct device *d, struct device_share_row **ret, size_t *n);
/* Tuned for its weights alone: no goal of its own (mode=throughput). */
bool device_weights_only(const struct device *d);
void device_set_weights_only(struct device *d, bool on);

/* What was learned here, as a profile record (profile.h) in *ret (free()).
 * -ENODATA, with a sentence in error, while nothing was learned yet. */
int device_export_profile(const struct device *d, char **ret, sd_bus_error *error);

const char *device_id(const struct device *d);
uint32_t device_kdev(const struct device *d);
const struct goal *device_goal(const struct device *d);
enum goal_source device_source(const struct device *d);
/* Someone else changed the scheduler or a target: hands off until resumed. */
bool device_overridden(const struct device *d);
/* Overridden or paused: not writing targets. */
bool device_stopped(const struct device *d);
