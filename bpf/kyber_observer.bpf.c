// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * kyber-tuned's observer: per-device, per-op latency histograms from the
 * block request tracepoints, and Kyber's own view from its tracepoints.
 *
 * Every program exists twice: tp_btf (preferred) and raw_tp (fallback for
 * kernels without BTF-typed tracepoints). Userspace enables one set before
 * load. Both read the request through CO-RE, so one body serves both.
 *
 * Timing. The kernel stamps a request at allocation (start_time_ns, when it
 * has an elevator or does I/O accounting) and at issue (io_start_time_ns,
 * when the queue keeps I/O statistics: Kyber turns them on). Kyber's own
 * latency samples are these very stamps, so a request carrying both is timed
 * at completion alone, with no per-request state. Only where the issue is
 * not stamped (an elevator other than Kyber, no I/O accounting) does
 * userspace attach the insert/issue programs and mark the device
 * KT_WATCH_TRACK; those requests are timed by bpf_ktime_get_ns() at insert
 * and issue, kept in the requests map. Where an op completes faster than
 * its percentiles need, the daemon has only a sample of its stamped
 * requests timed (kt_sampling); every one is still counted.
 *
 * This file has the requests' programs and every attach point; the
 * watched devices' maps are in observer-stats.bpf.h, the reads' app span
 * (a read's completion to its waiting task's switch-in) in app-span.bpf.h,
 * Kyber's tracepoints in kyber-events.bpf.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "observer-abi.h"
#include "request-fields.bpf.h"
#include "observer-stats.bpf.h"
#include "app-span.bpf.h"
#include "kyber-events.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#ifndef EEXIST
#define EEXIST			17	/* vmlinux.h has no errno values */
#endif
#ifndef BPF_F_NO_PREALLOC
#define BPF_F_NO_PREALLOC	1
#endif

/*
 * Request queue id (small, unique among live queues) -> the slot its disk
 * was last found in: a hint written by the programs themselves, so that a
 * completion finds its statistics without hashing its dev_t. Never trusted:
 * dev_stats' own dev_t decides, and a wrong or stale hint (a slot given to
 * another device since, a queue id reused) costs one lookup in watched.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KT_QUEUE_HINTS);
	__type(key, __u32);
	__type(value, __u32);
} queue_slot SEC(".maps");

/* Slot -> how its ops' completions are sampled. Written by the daemon. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KT_MAX_DEVICES_DEFAULT);
	__type(key, __u32);
	__type(value, struct kt_sampling);
} sampling SEC(".maps");

/*
 * Tracked requests (KT_WATCH_TRACK devices) between insert/issue and their
 * final completion. Preallocated: no allocation on the I/O path. Userspace
 * resizes it with the device count before load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct kt_req);
} requests SEC(".maps");

/* (disk, cgroup) -> per-cgroup statistics of KT_WATCH_CGROUPS devices.
 * Not preallocated: memory only for cgroups doing I/O there. Shared by the
 * CPUs (atomic adds), not per CPU: per-CPU memory is what dev_stats needs,
 * and entries made at run time are allocated without sleeping, which a
 * per-CPU area that must grow cannot do. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KT_MAX_CGROUPS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct kt_cg_key);
	__type(value, struct kt_cg_stats);
} cg_stats SEC(".maps");

/* Whether entries may exist in requests: set by userspace while the
 * insert/issue programs are attached and until it swept what they left. */
volatile bool tracking = false;
/* Whether any watched device is KT_WATCH_CGROUPS: set by userspace, so
 * that completions look at the watch flags only while one is. */
volatile bool cgroups = false;

/*
 * The statistics of a request's device, if it is watched: through its
 * queue's hint where that is right (every request of a watched device but
 * the first), else by its dev_t, leaving the hint for the next one.
 */
static __always_inline struct kt_dev_stats *rq_stats(struct request *rq, __u32 dev, bool btf)
{
	__u32 qid = rq_queue_id(rq, btf);
	__u32 *hint = bpf_map_lookup_elem(&queue_slot, &qid);
	struct kt_dev_stats *ds;
	struct kt_watch *w;

	if (hint) {
		ds = slot_stats(*hint, dev);
		if (ds)
			return ds;
	}
	w = bpf_map_lookup_elem(&watched, &dev);
	if (!w)
		return NULL;
	ds = slot_stats(w->slot, dev);
	if (ds && hint)
		*hint = w->slot;
	return ds;
}

static __always_inline void record(struct kt_dev_stats *ds, __u8 op, enum kt_lat kind, __u64 ns)
{
	int h = kt_hist_of(op, kind);
	__u64 flat;

	if (h < 0)
		return;
	/* One index into the histograms, bounded once for the verifier. */
	flat = (__u64)h * KT_HIST_BUCKETS + kt_hist_index(ns);
	barrier_var(flat);
	if (flat >= KT_DEV_HISTS * KT_HIST_BUCKETS)
		return;
	(&ds->hist[0][0])[flat]++;
	ctr(ds, op)->lat_sum_ns[kind] += ns;
}

/* Undo the queued/inflight count of an entry that is going away unseen. */
static __always_inline void forget(struct kt_req *r)
{
	struct kt_dev_stats *old = stats_of(r->dev);
	__u8 op = r->op;

	if (!old || op >= KT_OP_MAX)
		return;
	if (r->state == KT_REQ_QUEUED)
		ctr(old, op)->queued--;
	else
		ctr(old, op)->inflight--;
}

/* The device's statistics, if it is watched and its requests are tracked. */
static __always_inline struct kt_dev_stats *tracked_stats(__u32 dev)
{
	struct kt_watch *w = bpf_map_lookup_elem(&watched, &dev);

	if (!w || !(w->flags & KT_WATCH_TRACK))
		return NULL;
	return slot_stats(w->slot, dev);
}

static __always_inline int on_insert(struct request *rq, bool btf)
{
	__u64 key = (__u64)rq;
	struct kt_dev_stats *ds;
	struct kt_req *r, n = {};
	__u32 dev = rq_dev(rq, btf);
	long err;

	ds = tracked_stats(dev);
	if (!ds)
		return 0;
	n.dev = dev;
	n.op = rq_op(rq, btf);
	n.insert_ns = bpf_ktime_get_ns();
	n.state = KT_REQ_QUEUED;

	/* The common case, a new request, costs one map operation: create the
	 * entry, and look only when one exists already. */
	err = bpf_map_update_elem(&requests, &key, &n, BPF_NOEXIST);
	if (err == -EEXIST) {
		r = bpf_map_lookup_elem(&requests, &key);
		if (!r)
			return 0;
		/* A requeued request coming back keeps its first insert time. */
		if (r->state == KT_REQ_QUEUED && (r->flags & KT_REQ_F_REQUEUED))
			return 0;
		/* Anything else is a recycled request whose end we missed. */
		forget(r);
		ctr(ds, n.op)->stale++;
		err = bpf_map_update_elem(&requests, &key, &n, BPF_ANY);
	}
	if (err) {
		ctr(ds, n.op)->dropped++;
		return 0;
	}
	ctr(ds, n.op)->inserted++;
	ctr(ds, n.op)->queued++;
	return 0;
}

/* Track a request issued without an insert: total time starts at its issue.
 * flags BPF_NOEXIST: returns -EEXIST, having counted nothing, when an entry
 * exists already. */
static __always_inline long issue_new(struct request *rq, struct kt_dev_stats *ds, __u64 *key,
				      __u32 dev, __u64 now, __u64 flags, bool btf)
{
	struct kt_req n = {};
	long err;

	n.dev = dev;
	n.op = rq_op(rq, btf);
	n.issue_ns = now;
	n.state = KT_REQ_ISSUED;
	err = bpf_map_update_elem(&requests, key, &n, flags);
	if (err == -EEXIST)
		return err;
	if (err) {
		ctr(ds, n.op)->dropped++;
		return err;
	}
	ctr(ds, n.op)->issued++;
	ctr(ds, n.op)->inflight++;
	return 0;
}

static __always_inline int on_issue(struct request *rq, bool btf)
{
	__u64 key = (__u64)rq, now;
	struct kt_dev_stats *ds;
	struct kt_op_counters *c;
	struct kt_req *r;
	__u32 dev = rq_dev(rq, btf);
	__u8 op;

	ds = tracked_stats(dev);
	if (!ds)
		return 0;

	now = bpf_ktime_get_ns();
	/*
	 * No elevator: usually a direct issue, never inserted. Creating the
	 * entry is then the one map operation; an existing one (inserted
	 * because the hardware queue was busy, or issued again) is below.
	 */
	if (!rq_has_sched_tag(rq, btf) && issue_new(rq, ds, &key, dev, now, BPF_NOEXIST, btf) != -EEXIST)
		return 0;
	r = bpf_map_lookup_elem(&requests, &key);
	if (!r) {
		/* Direct issue past an elevator (or the entry just went away). */
		issue_new(rq, ds, &key, dev, now, BPF_ANY, btf);
		return 0;
	}
	op = r->op;
	if (op >= KT_OP_MAX)
		return 0;
	c = ctr(ds, op);
	if (r->state == KT_REQ_QUEUED) {
		/* Queue time once: a requeue does not start a new one. */
		if (r->insert_ns && !(r->flags & KT_REQ_F_QUEUE_SEEN)) {
			record(ds, op, KT_LAT_QUEUE, now - r->insert_ns);
			r->flags |= KT_REQ_F_QUEUE_SEEN;
		}
		c->queued--;
		c->inflight++;
		r->state = KT_REQ_ISSUED;
	}
	/* Issued again without a requeue (driver busy): restamp only. */
	r->issue_ns = now;
	c->issued++;
	return 0;
}

static __always_inline int on_requeue(struct request *rq, bool btf)
{
	__u64 key = (__u64)rq;
	struct kt_dev_stats *ds = rq_stats(rq, rq_dev(rq, btf), btf);
	struct kt_op_counters *c;
	struct kt_req *r;

	if (!ds)
		return 0;
	c = ctr(ds, rq_op(rq, btf));
	c->requeued++;
	r = tracking ? bpf_map_lookup_elem(&requests, &key) : NULL;
	if (!r)
		return 0;
	if (r->state == KT_REQ_ISSUED) {
		c->inflight--;
		c->queued++;
		r->state = KT_REQ_QUEUED;
	}
	r->flags |= KT_REQ_F_REQUEUED;
	r->issue_ns = 0;
	return 0;
}

/* rq was merged into another request and will be freed without issue. */
static __always_inline int on_merge(struct request *rq, bool btf)
{
	__u64 key = (__u64)rq;
	struct kt_dev_stats *ds = rq_stats(rq, rq_dev(rq, btf), btf);
	struct kt_req *r;

	if (!ds)
		return 0;
	ctr(ds, rq_op(rq, btf))->merged++;
	r = tracking ? bpf_map_lookup_elem(&requests, &key) : NULL;
	if (!r)
		return 0;
	forget(r);
	bpf_map_delete_elem(&requests, &key);
	return 0;
}

/* A request tracked since its insert or issue: times from the entry.
 * Returns its total latency, 0 when it has none. */
static __always_inline __u64 complete_tracked(struct kt_dev_stats *ds, __u8 op, struct kt_req *r,
					      __u64 now)
{
	__u64 start = r->insert_ns ? r->insert_ns : r->issue_ns;

	if (r->state == KT_REQ_ISSUED) {
		record(ds, op, KT_LAT_DEVICE, now - r->issue_ns);
		ctr(ds, op)->inflight--;
	} else {
		ctr(ds, op)->queued--;	/* ended without an issue (failed in the queue) */
	}
	if (!start)
		return 0;
	record(ds, op, KT_LAT_TOTAL, now - start);
	return now - start;
}

/*
 * A request timed by its own stamps. Without an elevator a request is
 * issued as it is allocated (directly, or when its plug is flushed), so
 * where the issue is not stamped its device time is its total. Returns the
 * total latency, 0 when the request has no start stamp.
 */
static __always_inline __u64 complete_stamped(struct kt_dev_stats *ds, __u8 op, struct request *rq,
					      __u64 now, bool btf)
{
	__u32 flags = rq_flags(rq, btf);
	__u64 start = btf ? rq->start_time_ns : BPF_CORE_READ(rq, start_time_ns);
	__u64 io = 0;

	if (flags & RQF(STATS))
		io = btf ? rq->io_start_time_ns : BPF_CORE_READ(rq, io_start_time_ns);
	if (!start || start > now) {
		ctr(ds, op)->untimed++;
		return 0;
	}
	if (io && io <= now && io >= start) {
		record(ds, op, KT_LAT_QUEUE, io - start);
		record(ds, op, KT_LAT_DEVICE, now - io);
	} else if (RQF(USE_SCHED) && !(flags & RQF(USE_SCHED))) {
		record(ds, op, KT_LAT_DEVICE, now - start);
	}
	record(ds, op, KT_LAT_TOTAL, now - start);
	ctr(ds, op)->stamped++;
	return now - start;
}

/* A completed read or write of a KT_WATCH_CGROUPS device, to its cgroup. */
static __always_inline void account_cgroup(struct kt_dev_stats *ds, struct request *rq, __u32 dev, __u8 op,
					   __u32 bytes, __u64 total_ns, bool btf)
{
	static const struct kt_cg_stats zero;
	struct kt_cg_key key = { .dev = dev };
	struct kt_cg_stats *cs;
	struct kt_watch *w;
	__u64 flat;

	if (op > KT_OP_WRITE)
		return;
	w = bpf_map_lookup_elem(&watched, &dev);
	if (!w || !(w->flags & KT_WATCH_CGROUPS))
		return;
	key.cgroup = rq_cgroup(rq, btf);
	cs = bpf_map_lookup_elem(&cg_stats, &key);
	if (!cs) {
		/* EEXIST: another CPU created it meanwhile; anything else:
		 * the map is full. */
		if (bpf_map_update_elem(&cg_stats, &key, &zero, BPF_NOEXIST) && !bpf_map_lookup_elem(&cg_stats, &key)) {
			ctr(ds, op)->cg_dropped++;
			return;
		}
		cs = bpf_map_lookup_elem(&cg_stats, &key);
		if (!cs)
			return;
	}
	__sync_fetch_and_add(&cs->op[op & 1].completed, 1);
	__sync_fetch_and_add(&cs->op[op & 1].bytes, bytes);
	if (!total_ns)
		return;
	__sync_fetch_and_add(&cs->op[op & 1].lat_sum_ns, total_ns);
	flat = (__u64)(op & 1) * KT_CG_HIST_BUCKETS + kt_hist_index(total_ns) / KT_CG_HIST_GROUP;
	barrier_var(flat);
	if (flat < KT_CG_OPS * KT_CG_HIST_BUCKETS)
		__sync_fetch_and_add(&(&cs->hist[0][0])[flat], 1);
}

/*
 * Whether this completion goes untimed: all but one in 2^shift, at random,
 * not every 2^shift-th by a count, so that the timed ones cannot keep step
 * with a pattern in the completions (a loop worker's batches, an io_uring
 * reap's) and are a fair sample of all.
 */
static __always_inline bool sampled_out(struct kt_dev_stats *ds, __u8 op)
{
	__u32 slot = ds->slot, i = op;
	struct kt_sampling *sm = bpf_map_lookup_elem(&sampling, &slot);
	__u32 shift;

	if (!sm)
		return false;
	barrier_var(i);		/* keep the mask: the compiler knows op < 4, the verifier not */
	shift = sm->shift[i & (KT_OP_MAX - 1)] & 7;
	return (bpf_get_prandom_u32() & ((1u << shift) - 1)) != 0;
}

static __always_inline int on_complete(struct request *rq, int error, unsigned int nr_bytes, bool btf)
{
	__u64 key = (__u64)rq, total, now;
	__u32 dev = rq_dev(rq, btf);
	struct kt_dev_stats *ds = rq_stats(rq, dev, btf);
	struct kt_req *r;
	__u8 op;

	if (!ds)
		return 0;
	op = rq_op(rq, btf);
	/*
	 * A data request whose data is all done can complete again with no
	 * bytes: the end of a flush sequence (a write with PREFLUSH or FUA).
	 * Its completion was counted when its data completed.
	 */
	if (nr_bytes == 0 && op != KT_OP_OTHER)
		return 0;
	ctr(ds, op)->bytes += nr_bytes;
	/*
	 * The tracepoint fires before the completed bytes are taken off the
	 * request: anything short of the remaining length is a partial
	 * completion and the request lives on.
	 */
	if (nr_bytes < rq_data_len(rq, btf)) {
		ctr(ds, op)->partial++;
		return 0;
	}

	now = bpf_ktime_get_ns();
	r = tracking ? bpf_map_lookup_elem(&requests, &key) : NULL;
	if (r) {
		total = complete_tracked(ds, op, r, now);
		bpf_map_delete_elem(&requests, &key);
	} else if (sampled_out(ds, op)) {
		ctr(ds, op)->unsampled++;
		total = 0;
	} else {
		total = complete_stamped(ds, op, rq, now, btf);
	}
	if (op == KT_OP_READ && total)
		read_completed(ds, now, total);
	ctr(ds, op)->completed++;
	if (error)
		ctr(ds, op)->errors++;
	if (cgroups)
		account_cgroup(ds, rq, dev, op, nr_bytes, total, btf);
	return 0;
}

/* ------------------------------------------------------------- attach points */

#define KT_PROGS(kind, sec, btf)									\
SEC(sec "/block_rq_insert")									\
int BPF_PROG(kind##_rq_insert, struct request *rq)						\
{ return on_insert(rq, btf); }									\
SEC(sec "/block_rq_issue")									\
int BPF_PROG(kind##_rq_issue, struct request *rq)						\
{ return on_issue(rq, btf); }									\
SEC(sec "/block_rq_requeue")									\
int BPF_PROG(kind##_rq_requeue, struct request *rq)						\
{ return on_requeue(rq, btf); }									\
SEC(sec "/block_rq_merge")									\
int BPF_PROG(kind##_rq_merge, struct request *rq)						\
{ return on_merge(rq, btf); }									\
SEC(sec "/block_rq_complete")									\
int BPF_PROG(kind##_rq_complete, struct request *rq, int error, unsigned int nr_bytes)		\
{ return on_complete(rq, error, nr_bytes, btf); }							\
SEC(sec "/kyber_adjust")									\
int BPF_PROG(kind##_kyber_adjust, dev_t dev, const char *domain, unsigned int depth)		\
{ return on_kyber_adjust(dev, domain, depth); }							\
SEC(sec "/kyber_throttled")									\
int BPF_PROG(kind##_kyber_throttled, dev_t dev, const char *domain)				\
{ return on_kyber_throttled(dev, domain); }							\
SEC(sec "/sched_waking")									\
int BPF_PROG(kind##_sched_waking, struct task_struct *p)					\
{ return on_waking(p, btf); }									\
SEC(sec "/sched_switch")									\
int BPF_PROG(kind##_sched_switch, bool preempt, struct task_struct *prev,			\
	     struct task_struct *next)								\
{ return on_switch(prev, next, btf); }

KT_PROGS(btf, "tp_btf", true)
KT_PROGS(raw, "raw_tp", false)
