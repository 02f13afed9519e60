/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A discrete-event simulator of the plant the tuner controls: closed-loop
 * 4 KiB random readers and writers, the block layer's tags, Kyber (its
 * dispatch, tokens and its own latency controller, modelled on
 * block/kyber-iosched.c of Linux 6.x) and the media model of flashsim
 * (tools/flashsim/model.c, linked in). sim_run() summarises an interval the
 * way the observer does, as a struct ctl_sample, so daemon/controller/controller.c can
 * be unit tested against it. Pure: no clock, no I/O, no globals; the same
 * seed gives the same results. tools/kyber-sim/README.md describes the model.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ctl-sample.h"

/*
 * The media profiles of tools/flashsim (README.md there and in tools/kyber-sim):
 * flash: 8 dies, reads wait behind 500 us programs on their die;
 * optane: reads and writes on separate resources, no interference;
 * tlc: 4 dies, 1.5 ms programs; gc: flash plus a 2 ms GC stall every 16
 * programs per die; qdlat: parallel service whose time grows with the
 * number of requests in the device (a loop over a file on a file system).
 */
enum sim_profile {
	SIM_FLASH,
	SIM_OPTANE,
	SIM_TLC,
	SIM_GC,
	SIM_QDLAT,
	_SIM_PROFILE_MAX,
};

/* "flash", "optane", "tlc", "gc", "qdlat"; NULL for anything else. */
const char *sim_profile_to_string(enum sim_profile p);
/* The profile, or -EINVAL. */
int sim_profile_from_string(const char *s);

/* "Flash-like": flash, tlc, gc (dies with one FIFO each). */
struct sim_params {
	enum sim_profile profile;
	unsigned dies;			/* flash-like: dies (8; tlc 4); optane: read channels (8) */
	uint64_t read_ns;		/* flash-like: page read (60000; tlc 90000); qdlat: read alone (40000) */
	uint64_t program_ns;		/* flash-like: page program (500000; tlc 1500000) */
	uint64_t optane_ns;		/* optane: per op, reads and writes on separate resources (12000) */
	unsigned optane_write_iops;	/* optane: write starts are spaced to this rate (16000) */
	uint64_t host_ns;		/* fixed host/driver time per request, added after the media */
	unsigned tags;			/* driver tags (loop: 128); the scheduler gets 2x */
	uint64_t seed;
	/* ---- extensions ---- */
	/* Mean of an exponential extra host time per request (0 = off, the
	 * default). Models the tail of the FUSE path (README.md). */
	uint64_t host_jitter_ns;
	/* Client time between a completion and that client's next submission
	 * (fio + io_uring reap/submit; 30000). Not in any latency. */
	uint64_t think_ns;
	/* ---- the media of the newer profiles (tools/flashsim/model.c) ---- */
	unsigned gc_pages;		/* flash-like: programs per die between GC stalls, 0 = none (gc: 16) */
	uint64_t gc_ns;			/* flash-like: one GC stall, die busy (3 ms; gc: 2 ms) */
	uint64_t write_ns;		/* qdlat: page write alone in the device (100000) */
	uint64_t contention_ns;		/* qdlat: added per request already in the device (60000) */
	unsigned storm_gc_pages;	/* SIM_DISTURB_GC_STORM, flash-like: GC every this many programs per die (4) */
	unsigned storm_slowdown;	/* SIM_DISTURB_GC_STORM, optane/qdlat: media times x this (4) */
	/* Host hiccups (0 = none, the default): episodes of 100-300 ms at
	 * random times, hiccups_per_min a minute on average, in which every
	 * request's host path takes an extra exponential time with mean
	 * hiccup_ns. The host's own work (a kernel thread, interrupts), not a
	 * hypervisor's: no CPU steal shows, and no write setting avoids
	 * them. sim_hiccup_ns() says where they fell. */
	uint64_t hiccup_ns;
	unsigned hiccups_per_min;
};

/* The defaults of tools/flashsim for the profile (taken from its model),
 * host_ns tuned so that R1 alone matches the real flashsim-over-loop
 * numbers (README.md). An unknown profile gets flash's numbers, and
 * sim_new() then refuses it. */
void sim_params_default(struct sim_params *p, enum sim_profile profile);

struct sim;

/* -EINVAL for impossible parameters, -ENOMEM. The scheduler starts as none,
 * with no workload. */
int sim_new(struct sim **ret, const struct sim_params *p);
/* Returns NULL; NULL is fine. */
struct sim *sim_free(struct sim *s);

/*
 * Closed-loop clients, 4 KiB random: qd outstanding I/Os each, 0 = off.
 * Takes effect at the current simulated time (the next sim_run() starts by
 * topping the clients up); a client with more outstanding than its new qd
 * just stops issuing until below.
 */
void sim_set_workload(struct sim *s, unsigned read_qd, unsigned write_qd);
/* The same, in_ns after the current simulated time, within a later
 * sim_run() (a workload's edge inside an interval); replaces one pending. */
void sim_set_workload_at(struct sim *s, uint64_t in_ns, unsigned read_qd, unsigned write_qd);

/*
 * Scheduler: kyber (true) or none (false). Switching to kyber resets targets
 * to the defaults (2 ms / 10 ms) and depths to the caps, like the kernel.
 * Like the kernel's elevator switch, the queue is frozen: new requests wait
 * (outside the observer's view) until every request of the old scheduler
 * has completed, then the new one takes over. Setting the current one is a
 * no-op.
 */
void sim_set_kyber(struct sim *s, bool on);

/*
 * Like writing read_lat_nsec / write_lat_nsec: a plain store. Completions
 * from now on are bucketed against the new value; samples already bucketed
 * keep the old one, so Kyber's next timer evaluation mixes both, as in the
 * kernel. Ignored (returns without storing) while the requested scheduler
 * is none: the kernel has no such files then.
 */
void sim_set_targets(struct sim *s, uint64_t read_ns, uint64_t write_ns);
void sim_get_targets(const struct sim *s, uint64_t *read_ns, uint64_t *write_ns);

/*
 * Advance simulated time by duration_ns and summarise the interval as the
 * observer would (total = insert -> complete, including time waiting for a
 * Kyber token or a driver tag; device = issue -> complete; time waiting for
 * a request to be allocated is in neither). Fills every field of *out
 * (out may be NULL); out->read_hist points into the sim and is valid
 * until the next sim_run() or sim_free(). -EINVAL for duration 0 or a clock
 * overflow, -ENOMEM (the sim is then unusable).
 */
int sim_run(struct sim *s, uint64_t duration_ns, struct ctl_sample *out);

uint64_t sim_now_ns(const struct sim *s);

/* Kyber's current token depth of KT_OP_READ / KT_OP_WRITE; 0 when the
 * requested scheduler is none or for another domain. */
unsigned sim_kyber_depth(const struct sim *s, int domain);

/* ---- extensions: views the observer does not have ---- */

/*
 * A disturbance: the mean of the exponential extra host time per request
 * (sim_params.host_jitter_ns) from now on. A large value for a few seconds
 * models the host stalling the device's path (CPU steal on a shared VM, a
 * garbage-collection pause on a real SSD): every request slows down, at any
 * depth, and then it passes.
 */
void sim_set_host_jitter(struct sim *s, uint64_t mean_ns);

/*
 * Disturbances, to test a controller's recovery. One at a time, in force
 * from the current simulated time until another one (or NONE) is set.
 * - HOST_STALLS: the VM's host takes the CPUs away for 3-4 ms at a time,
 *   35% of the time on average (CPU steal measured on these machines):
 *   every event (completion, submission, Kyber's timer) that falls in a
 *   stall happens at its end. The media keeps working meanwhile.
 * - CPU_CONTENTION: other processes compete for the 2 CPUs: host_ns and
 *   think_ns x4, and the host jitter becomes an exponential with mean
 *   4 x host_jitter_ns + 2 x host_ns.
 * - GC_STORM: heavy garbage collection in the media: flash-like dies stall
 *   for gc_ns after every storm_gc_pages programs (only writes bring
 *   stalls); optane and qdlat media take storm_slowdown times as long.
 */
enum sim_disturbance {
	SIM_DISTURB_NONE,
	SIM_DISTURB_HOST_STALLS,
	SIM_DISTURB_CPU_CONTENTION,
	SIM_DISTURB_GC_STORM,
	_SIM_DISTURB_MAX,
};

/* -EINVAL (and nothing changes) for an unknown kind. */
int sim_set_disturbance(struct sim *s, enum sim_disturbance kind);
enum sim_disturbance sim_get_disturbance(const struct sim *s);
/* "none", "host-stalls", "cpu-contention", "gc-storm"; NULL otherwise. */
const char *sim_disturbance_to_string(enum sim_disturbance kind);

/* Time in [from, to) that host hiccups (sim_params.hiccup_ns) covered. */
uint64_t sim_hiccup_ns(const struct sim *s, uint64_t from, uint64_t to);

/* What the application sees (fio's clat): submit -> complete, including the
 * wait for a request to be allocated. For the last sim_run() interval. */
struct sim_client_op {
	uint64_t completed;
	double mean_ns;
	uint64_t p50_ns, p90_ns, p99_ns;	/* 0 when nothing completed */
};
/* -EINVAL for an op other than KT_OP_READ / KT_OP_WRITE. */
int sim_client_stats(const struct sim *s, int op, struct sim_client_op *out);

/* Kyber's own controller, cumulative since the last switch to kyber (the
 * kyber_latency / kyber_adjust tracepoints' view). Buckets are 0..7, -1 when
 * never computed. */
struct sim_kyber_info {
	uint64_t timer_runs;		/* timer evaluations */
	uint64_t congested_runs;	/* ... that found congestion */
	uint64_t adjusts[2];		/* depth changes per domain */
	int last_io_p90[2];		/* last computed I/O p90 bucket */
	int last_total_p99[2];		/* last computed total p99 bucket */
	unsigned min_depth[2];		/* lowest depth reached */
};
void sim_kyber_info(const struct sim *s, struct sim_kyber_info *out);
