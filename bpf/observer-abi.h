/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI between the BPF programs (bpf/kyber_observer.bpf.c,
 * bpf/sched_cost.bpf.c) and the daemon: map layouts,
 * histogram bucketing, op classes. Both sides include this one header; the
 * size asserts at the bottom catch a layout change made on one side only.
 *
 * The BPF side includes vmlinux.h first, userspace <linux/types.h>.
 */
#ifndef KT_OBSERVER_ABI_H
#define KT_OBSERVER_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/*
 * Log-linear latency histogram, in nanoseconds: every power of two from
 * 2^10 ns (1 us) to 2^34 ns (17 s) is split into KT_HIST_SUB equal
 * sub-buckets, so a bucket is 1/20 of its lower bound wide and its midpoint
 * lies within 1/40 (2.5%) of any value inside it: the coarsest split inside
 * the 3% percentile bound, since the histograms are most of the observer's
 * memory (KT_PERCPU_BUDGET). Values below 1 us share the first bucket,
 * values from 17 s the last.
 */
#define KT_HIST_SUB		20u
#define KT_HIST_MIN_SHIFT	10u
#define KT_HIST_MAX_SHIFT	34u
#define KT_HIST_BUCKETS		(2u + (KT_HIST_MAX_SHIFT - KT_HIST_MIN_SHIFT) * KT_HIST_SUB)

/* Op classes, the same split as Kyber's scheduling domains. */
enum kt_op {
	KT_OP_READ = 0,
	KT_OP_WRITE = 1,
	KT_OP_DISCARD = 2,
	KT_OP_OTHER = 3,	/* flush and everything else */
	KT_OP_MAX = 4,
};

/* Which span of a request's life a histogram measures. */
enum kt_lat {
	KT_LAT_QUEUE = 0,	/* insert -> issue: time in the scheduler */
	KT_LAT_DEVICE = 1,	/* issue -> complete: time in the driver/device */
	KT_LAT_TOTAL = 2,	/* insert (or issue if never inserted) -> complete */
	KT_LAT_APP = 3,		/* insert -> the task waiting for it runs (reads; see kt_app_wait) */
	KT_LAT_MAX = 4,
};

/* Spans a read or write has a histogram of in the flat layout below
 * (KT_LAT_APP is kept for reads only, after the others). */
#define KT_OP_SPANS		3u

/* Devices the observer can watch at once; the map sizes follow at load. */
#define KT_MAX_DEVICES_DEFAULT	16u

/*
 * Histograms kept per device. Reads and writes, the two domains the tuner
 * steers, get the queue, device and total spans; discards and the rest
 * only their total, so that a device's statistics fit in one per-CPU value
 * (KT_DEV_HISTS of them). Reads also get the span to their waiting task
 * (the goal's): their total's histogram, with the reads moved from there
 * to their app span's bucket (kt_app_moves).
 */
enum kt_hist_id {
	KT_HIST_READ_QUEUE = 0,		/* KT_OP_READ * KT_OP_SPANS + kind */
	KT_HIST_WRITE_QUEUE = 3,	/* KT_OP_WRITE * KT_OP_SPANS + kind */
	KT_HIST_DISCARD_TOTAL = 6,
	KT_HIST_OTHER_TOTAL = 7,
	KT_DEV_HISTS = 8,		/* those in kt_dev_stats */
	KT_HIST_READ_APP = 8,		/* the total's plus kt_app_moves */
	KT_HISTS = 9,			/* in a snapshot */
};

/* The histogram of (op, span), or -1 where none is kept. */
static inline int kt_hist_of(unsigned op, unsigned kind)
{
	if (kind >= KT_LAT_MAX || op >= KT_OP_MAX)
		return -1;
	if (kind == KT_LAT_APP)
		return op == KT_OP_READ ? KT_HIST_READ_APP : -1;
	if (op <= KT_OP_WRITE)
		return (int)(op * KT_OP_SPANS + kind);
	return kind == KT_LAT_TOTAL ? (int)(KT_HIST_DISCARD_TOTAL + op - KT_OP_DISCARD) : -1;
}

/*
 * Per op, per CPU, cumulative since the device was watched. Userspace sums
 * the CPUs and diffs consecutive snapshots; it never clears the map.
 * queued/inflight are signed per-CPU deltas: a request may be issued on one
 * CPU and completed on another, only the sum is meaningful. They count only
 * requests tracked by insert/issue (see kt_watch).
 */
struct kt_op_counters {
	__u64 lat_sum_ns[KT_LAT_MAX];
	__u64 completed;	/* requests fully completed */
	__u64 bytes;		/* bytes completed, partial completions included */
	__u64 errors;		/* completed with a non-zero status */
	__u64 stamped;		/* completions timed by the request's own stamps */
	__u64 untimed;		/* completions with no start time at all */
	__u64 inserted;		/* first inserts into the scheduler (tracked) */
	__u64 issued;		/* issues to the driver, re-issues included (tracked) */
	__u64 requeued;
	__u64 merged;		/* merged away into another request, never issued */
	__u64 partial;		/* partial completions (request not finished yet) */
	__u64 dropped;		/* not tracked: the request map was full */
	__u64 stale;		/* entries found for a recycled request: a missed end */
	__u64 kyber_throttled;	/* kyber_throttled events for this domain */
	__s64 queued;		/* inserted, not yet issued (tracked) */
	__s64 inflight;		/* issued, not yet completed (tracked) */
	__u64 cg_dropped;	/* completions not accounted per cgroup: cg_stats full */
	__u64 unsampled;	/* completions left untimed by sampling (kt_sampling) */
};

/*
 * One device's statistics, per CPU: the value of the per-CPU array
 * dev_stats, keyed by the device's slot. dev is the kernel dev_t of the
 * device the slot holds (0: free), written by userspace in every CPU's
 * copy with the slot; the programs count into a slot only for that device. Histogram
 * counters are 32 bits: userspace sums and diffs them modulo 2^32, exact
 * while fewer than 2^32 samples land in one bucket between two snapshots.
 */
struct kt_dev_stats {
	__u32 dev;
	__u32 slot;	/* its own key, for the maps indexed by slot */
	struct kt_op_counters op[KT_OP_MAX];
	__u32 hist[KT_DEV_HISTS][KT_HIST_BUCKETS];
};

/*
 * The reads of one device whose waiter was switched in after their
 * completion, moved from the bucket of their total to that of their app
 * span: -1 and +1 per read, modulo 2^32 (the value of the array app_moves,
 * keyed by slot). The app span's histogram (KT_HIST_READ_APP) is the
 * total's plus these; its sum (lat_sum_ns[KT_LAT_APP]) counts only what
 * the moved reads added, the total's sum is added in userspace. So a
 * completion does no more than record its total. One value for all CPUs,
 * with atomic adds: the per-CPU budget below has no room for a ninth
 * histogram, and only moved reads, sampled (kt_sampling), touch it.
 * Zeroed by userspace with the slot's kt_dev_stats.
 */
struct kt_app_moves {
	__u32 moves[KT_HIST_BUCKETS];
};

/* Per-CPU map memory, in bytes, the observer may take at the default
 * device count: a tuning daemon's share of a CPU's memory on a host with
 * hundreds of CPUs. */
#define KT_PERCPU_BUDGET	(256u * 1024u)
/* Per-CPU memory one watched device may take: its share of that budget,
 * and below the kernel's limit for one per-CPU value (PCPU_MIN_UNIT_SIZE,
 * 32 KiB). */
#define KT_DEV_STATS_BUDGET	(KT_PERCPU_BUDGET / KT_MAX_DEVICES_DEFAULT)

/*
 * A watched device: its slot (index of kyber_state) and how its requests
 * are timed. The observer prefers the request's own stamps (start_time_ns
 * from allocation, io_start_time_ns from issue when the queue keeps I/O
 * statistics, as Kyber makes it do): one program at completion, no
 * per-request state. KT_WATCH_TRACK: the kernel does not stamp the issue of
 * this device's requests (an elevator other than Kyber, or no I/O
 * accounting), so insert/issue are tracked in the requests map.
 */
#define KT_WATCH_TRACK		0x1u
/* Account this device's completions per cgroup too (cg_stats): set while
 * it has weights (daemon/share.h). */
#define KT_WATCH_CGROUPS	0x2u

struct kt_watch {
	__u32 slot;
	__u32 flags;
};

/*
 * Request queue ids the completion path keeps a slot hint for (map
 * queue_slot): ids are small integers unique among the live queues, so
 * this covers a host with up to that many block queues at once; a request
 * of a queue with a larger id finds its device by dev_t (a hash lookup),
 * as correct and slower. 4 KiB.
 */
#define KT_QUEUE_HINTS		1024u

/*
 * Timing by sample. What a completion costs is mostly its timestamp and
 * the histograms it goes into; the counters are cheap. So where an op
 * completes so often that a fraction of its requests gives percentiles as
 * good, userspace sets that op's shift on the device's slot, and one of
 * its completions in 2^shift, chosen at random, is timed (the others count in
 * kt_op_counters.unsampled, and in completed and bytes as ever). Requests
 * tracked by insert/issue are always timed: their entries end at
 * completion. The value of the array sampling, keyed by slot.
 */
struct kt_sampling {
	__u8 shift[KT_OP_MAX];
};

/*
 * Per-cgroup accounting of KT_WATCH_CGROUPS devices, for proportional
 * share by weight: a hash keyed by (disk, cgroup id), updated with atomic
 * adds by every CPU, the cgroup
 * of a request being its bio's blkg's (blkcg->css.cgroup->kn->id: the
 * cgroup's kernfs node, never the task that happens to complete it). At
 * most KT_MAX_CGROUPS entries over every device (a tenant host's cgroups
 * doing I/O on the disks with weights); userspace deletes the entries of
 * cgroups idle for a while, and a cgroup that finds the map full is not
 * accounted (kt_op_counters.cg_dropped). Latency is the total span, in a
 * histogram KT_CG_HIST_GROUP times coarser than a device's (a bucket 1/4
 * of its lower bound wide: +-12.5%, enough for a per-cgroup P99 in
 * status), so that a cgroup's statistics fit in 1 KiB.
 */
#define KT_MAX_CGROUPS		128u
#define KT_CG_HIST_GROUP	5u
#define KT_CG_HIST_BUCKETS	((KT_HIST_BUCKETS + KT_CG_HIST_GROUP - 1) / KT_CG_HIST_GROUP)

enum kt_cg_op {
	KT_CG_READ = 0,
	KT_CG_WRITE = 1,
	KT_CG_OPS = 2,		/* discards and the rest are not shared by weight */
};

struct kt_cg_key {
	__u32 dev;		/* kernel dev_t of the disk */
	__u32 pad;
	__u64 cgroup;		/* kernfs node id of the cgroup; 0: none (no bio or blkg) */
};

struct kt_cg_counters {
	__u64 completed;
	__u64 bytes;
	__u64 lat_sum_ns;	/* total span */
};

struct kt_cg_stats {
	struct kt_cg_counters op[KT_CG_OPS];
	__u32 hist[KT_CG_OPS][KT_CG_HIST_BUCKETS];
};

/*
 * The span a read's waiting task sees (KT_LAT_APP): from the read's start
 * to when the task that waits for it runs again. The block layer's total
 * ends at completion; the task then still waits to be woken and for a CPU
 * (10-60 us at P99 on a 2-CPU VM whose loop workers share the CPUs: the
 * difference between fio's read latency and the total, docs/observer.md).
 * A read's completion is kept per CPU (kt_read_done); the first task
 * woken on that CPU within KT_APP_WAKE_NS after it is taken for its waiter
 * if it is a user task, not a kernel thread (sched_waking runs in the
 * completing context, right after the bio's end), and a kt_app_wait
 * entry, indexed by its pid, waits for it to be switched in. The
 * completion counts its total in the app histogram at once, and the
 * switch-in moves it to the bucket of the span it measured, so a read
 * whose waiter was not asleep (busy polling, a batch reaped together)
 * keeps its total there.
 */
#define KT_APP_WAKE_NS		(20ull * 1000)		/* a wakeup that follows a completion within 20 us */
#define KT_APP_STALE_NS		(1000ull * 1000 * 1000)	/* a waiter switched in a second later: stale */
#define KT_APP_WAITS		1024u			/* entries, indexed by pid modulo this */

struct kt_read_done {
	__u64 done_ns;		/* the completion (bpf_ktime_get_ns()); 0: none pending */
	__u64 start_ns;		/* the read's start, as the total span counts it */
	__u32 slot, dev;	/* its device */
	__u32 bucket;		/* where its total went in the app histogram */
	__u32 pad;
};

struct kt_app_wait {
	__u64 pid;		/* the task woken; 0: free (64 bits: the width BPF's compare-and-swap takes) */
	__u64 start_ns;
	__u64 total_ns;		/* its total span, in the app sum until moved */
	__u32 slot, dev;
	__u32 bucket;
	__u32 pad;
};

/* Kyber's own view of one device, written by its tracepoints. Map key: slot. */
struct kt_kyber_state {
	__u32 depth[KT_OP_MAX];		/* last kyber_adjust depth; 0: not seen */
	__u64 adjust_time_ns[KT_OP_MAX];
	__u64 adjust_count[KT_OP_MAX];
};

/* One change of Kyber's depth, in the kyber_adjusts ring buffer: what a
 * grow pulse waits for (daemon/device-pulse.c), which must react within a
 * millisecond or two, faster than any poll of kyber_state. */
struct kt_kyber_adjust {
	__u64 time_ns;
	__u32 slot;
	__u32 op;			/* KT_OP_READ / KT_OP_WRITE / ... */
	__u32 depth;
	__u32 pad;
};

/* The ring buffer's size: Kyber adjusts a domain at most every 100 ms, so
 * a watched device adds at most tens a second; the daemon drains it as
 * they come. */
#define KT_KYBER_ADJUSTS_BYTES 16384

/* Per-request bookkeeping, keyed by the request pointer. */
enum kt_req_state {
	KT_REQ_QUEUED = 1,	/* inserted (or requeued), waiting for issue */
	KT_REQ_ISSUED = 2,	/* handed to the driver */
};

#define KT_REQ_F_REQUEUED	0x1	/* back in the queue after a requeue */
#define KT_REQ_F_QUEUE_SEEN	0x2	/* queue time already recorded */

struct kt_req {
	__u64 insert_ns;	/* 0: issued directly, never inserted */
	__u64 issue_ns;		/* 0: not issued (since the last requeue) */
	__u32 dev;		/* kernel dev_t of its disk */
	__u8 op;
	__u8 state;
	__u8 flags;
	__u8 pad;
};

/*
 * bpf/sched_cost.bpf.c's samples of one CPU: the value of its per-CPU
 * array cost. Cumulative; userspace sums the CPUs and diffs a window.
 */
struct kt_cost {
	__u64 samples;		/* cpu-clock samples taken, idle ones included */
	__u64 block;		/* of which in the block layer's entry points */
};

/* Entry points the sampler knows, and its period: about 1 kHz per CPU, a
 * prime number of microseconds off the timer tick so that the samples do
 * not beat with work the tick starts. */
#define KT_COST_RANGES		8
#define KT_COST_PERIOD_NS	997000ull

/* Kernel dev_t encoding (MKDEV), not glibc's. */
#define KT_MINORBITS	20
#define KT_MKDEV(ma, mi)	(((__u32)(ma) << KT_MINORBITS) | (__u32)(mi))

/* Index of the highest set bit (v > 0). Loop-free for the BPF verifier. */
static inline __u32 kt_log2_u64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

/* Histogram bucket of a value in ns. Loop-free for the BPF verifier. */
static inline __u32 kt_hist_index(__u64 v)
{
	__u32 msb;

	if (v < (1ull << KT_HIST_MIN_SHIFT))
		return 0;
	msb = kt_log2_u64(v);
	if (msb >= KT_HIST_MAX_SHIFT)
		return KT_HIST_BUCKETS - 1;
	/* v - 2^msb < 2^msb <= 2^33: the product fits in 64 bits. */
	return 1 + (msb - KT_HIST_MIN_SHIFT) * KT_HIST_SUB +
	       (__u32)(((v - (1ull << msb)) * KT_HIST_SUB) >> msb);
}

/* Inclusive lower bound of a bucket, in ns: the least v with that index. */
static inline __u64 kt_hist_lower(__u32 idx)
{
	__u32 k, msb;
	__u64 base;

	if (idx == 0)
		return 0;
	if (idx >= KT_HIST_BUCKETS - 1)
		return 1ull << KT_HIST_MAX_SHIFT;
	k = idx - 1;
	msb = KT_HIST_MIN_SHIFT + k / KT_HIST_SUB;
	base = 1ull << msb;
	/* ceil(f * 2^msb / SUB): the first v whose sub-bucket is f. */
	return base + (((__u64)(k % KT_HIST_SUB) << msb) + KT_HIST_SUB - 1) / KT_HIST_SUB;
}

/* Width of a bucket, in ns; the last one is open-ended and reported as
 * [2^34, 2^35). */
static inline __u64 kt_hist_width(__u32 idx)
{
	if (idx >= KT_HIST_BUCKETS - 1)
		return 1ull << KT_HIST_MAX_SHIFT;
	return kt_hist_lower(idx + 1) - kt_hist_lower(idx);
}

#ifndef __bpf__
_Static_assert(sizeof(struct kt_op_counters) == 8 * (KT_LAT_MAX + 17), "kt_op_counters layout changed");
_Static_assert(sizeof(struct kt_sampling) == KT_OP_MAX, "kt_sampling layout changed");
_Static_assert(sizeof(struct kt_dev_stats) ==
	       8 + KT_OP_MAX * sizeof(struct kt_op_counters) + 4 * KT_DEV_HISTS * KT_HIST_BUCKETS,
	       "kt_dev_stats layout changed");
_Static_assert(sizeof(struct kt_app_moves) == 4 * KT_HIST_BUCKETS, "kt_app_moves layout changed");
_Static_assert(KT_HIST_READ_APP == KT_DEV_HISTS && KT_HISTS == KT_DEV_HISTS + 1,
	       "the app histogram follows those of kt_dev_stats");
_Static_assert(sizeof(struct kt_dev_stats) <= KT_DEV_STATS_BUDGET, "kt_dev_stats over its budget");
_Static_assert(KT_HIST_WRITE_QUEUE == KT_OP_WRITE * KT_OP_SPANS && KT_HIST_DISCARD_TOTAL == 2 * KT_OP_SPANS &&
	       KT_LAT_APP == KT_OP_SPANS, "kt_hist_id out of step with kt_hist_of()");
_Static_assert(sizeof(struct kt_read_done) == 32, "kt_read_done layout changed");
_Static_assert(sizeof(struct kt_app_wait) == 40, "kt_app_wait layout changed");
_Static_assert((KT_APP_WAITS & (KT_APP_WAITS - 1)) == 0, "KT_APP_WAITS must be a power of two");
_Static_assert(sizeof(struct kt_kyber_state) == 16 + 32 + 32, "kt_kyber_state layout changed");
_Static_assert(sizeof(struct kt_req) == 24, "kt_req layout changed");
_Static_assert(sizeof(struct kt_kyber_adjust) == 24, "kt_kyber_adjust layout changed");
_Static_assert(sizeof(struct kt_watch) == 8, "kt_watch layout changed");
_Static_assert(sizeof(struct kt_cost) == 16, "kt_cost layout changed");
_Static_assert(sizeof(struct kt_cg_key) == 16, "kt_cg_key layout changed");
_Static_assert(sizeof(struct kt_cg_stats) == KT_CG_OPS * 24 + 4 * KT_CG_OPS * KT_CG_HIST_BUCKETS,
	       "kt_cg_stats layout changed");
_Static_assert(sizeof(struct kt_cg_stats) <= 1024, "kt_cg_stats over 1 KiB");
#endif

#endif
