/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The simulator's state, shared by kyber-sim.c (the API, interval
 * summaries), sim-blk.c (clients, tags, Kyber's dispatch, completions) and
 * sim-host.c (the host path and its disturbances). The media are
 * tools/flashsim/model.c. Not part of the simulator's API.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "../flashsim/model.h"
#include "hist.h"
#include "kyber-sim.h"
#include "sim-kyber.h"
#include "sim-util.h"

/* 256 MiB of 4 KiB pages, flashsim's default size: only page % dies matters. */
#define SIM_PAGES (1u << 16)

enum req_state {
	REQ_FREE,
	REQ_WAIT_TAG,		/* submitted, no request allocated yet */
	REQ_QUEUED,		/* in Kyber, waiting for a token */
	REQ_DISPATCH,		/* has a token, waits for a driver tag */
	REQ_INFLIGHT,		/* issued to the device */
};

struct sim_req {
	uint64_t submit_ns, insert_ns, issue_ns;
	uint32_t page;
	int32_t next;		/* link in whichever list holds it; -1: end */
	uint8_t op;		/* KT_OP_READ / KT_OP_WRITE */
	uint8_t state;
	bool sched_tag, driver_tag, token;
	bool kyber;		/* inserted into Kyber: completion feeds its stats */
};

struct req_list {
	int32_t head, tail;
	uint32_t n;
};

struct op_stats {
	uint64_t completed, throttled;
	uint64_t sum_total, sum_device, sum_client;
	__u64 hist_total[KT_HIST_BUCKETS];
	__u64 hist_device[KT_HIST_BUCKETS];
	__u64 hist_client[KT_HIST_BUCKETS];
};

struct sim {
	struct sim_params p;
	uint64_t rng;
	uint64_t now;
	struct model dev;		/* the media: tools/flashsim/model.c */
	struct heap events;		/* u64 payload: sim_event_pack() */
	enum sim_disturbance disturb;

	struct sim_req *reqs;
	uint32_t nreqs;
	int32_t free_list;

	/* Per client: target depth, requests submitted and not completed,
	 * submissions scheduled after a think time. */
	unsigned qd[2], outstanding[2], thinking[2];
	/* sim_set_workload_at(): the depths from `at` on (at 0: none). */
	struct {
		uint64_t at;
		unsigned qd[2];
	} next_workload;

	/* The scheduler the data path runs, and the one asked for; they differ
	 * while the queue is frozen for a switch. */
	bool kyber, want_kyber;
	unsigned sched_used, driver_used;
	unsigned write_sched_used;		/* scheduler requests held by writes */
	unsigned async_depth;			/* Kyber's limit on those */
	struct req_list tag_wait[2];		/* per client: submissions without a request */
	unsigned wait_rr;			/* client served first when a tag frees */
	struct req_list kq[2];			/* Kyber's per-domain FIFOs */
	struct req_list hctx_dispatch;		/* token held, driver tag missing */
	unsigned tokens_used[2];
	unsigned cur_domain, batching;		/* khd->cur_domain, khd->batching */
	struct kyber_model km;
	bool timer_pending;
	uint32_t timer_gen;

	struct op_stats st[2];
};

/* sim-blk.c */
void sim_blk_init(struct sim *s);
/* Bring every client to its qd at once (start of a run, a new workload),
 * after handing tags to waiters a finished switch released. */
int sim_blk_start(struct sim *s);
/* Complete the elevator switch if the old scheduler owns nothing. */
void sim_blk_maybe_switch(struct sim *s);
/* One event at s->now. -ENOMEM, -EINVAL. */
int sim_blk_handle(struct sim *s, const struct sim_event *ev);
/* -ENOMEM */
int sim_event_push(struct sim *s, uint64_t time, uint32_t kind, uint32_t arg);

/* sim-host.c */
/* When an event due at @t happens: the end of the host stall @t falls in
 * (HOST_STALLS), else @t. */
uint64_t sim_host_defer(const struct sim *s, uint64_t t);
/* The share of [from, to) the host spent stalled (the steal a VM's
 * /proc/stat shows for it), 0..1. */
double sim_host_steal(const struct sim *s, uint64_t from, uint64_t to);
/* Whether @t falls in a host hiccup (sim_params.hiccup_ns). */
bool sim_host_hiccup(const struct sim *s, uint64_t t);

/* The per-request host path, inline. */
#include "sim-host.h"
