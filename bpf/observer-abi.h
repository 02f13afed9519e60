/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI between bpf/kyber_observer.bpf.c and the daemon: map layouts,
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
 * Log-linear latency histogram, in nanoseconds. Values below 64 ns get a
 * bucket each; above, every power of two is split into KT_HIST_SUB equal
 * sub-buckets. A bucket's width is at most 1/32 of its lower bound, so
 * reporting its midpoint is within 1/64 (1.6%) of any value inside it.
 * 1024 buckets reach 2^36 ns (68.7 s); larger values land in the last one.
 */
#define KT_HIST_SUB_BITS	5
#define KT_HIST_SUB		(1u << KT_HIST_SUB_BITS)
#define KT_HIST_BUCKETS		1024u

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
	KT_LAT_MAX = 3,
};

/* Devices the observer can watch at once; the map sizes follow at load. */
#define KT_MAX_DEVICES_DEFAULT	16u

/*
 * Per (device slot, op), per CPU, cumulative since the slot was assigned.
 * Userspace sums the CPUs and diffs consecutive snapshots; it never clears
 * the map. queued/inflight are signed per-CPU deltas: a request may be
 * issued on one CPU and completed on another, only the sum is meaningful.
 * Map key: slot * KT_OP_MAX + op.
 */
struct kt_op_stats {
	__u64 hist[KT_LAT_MAX][KT_HIST_BUCKETS];
	__u64 lat_sum_ns[KT_LAT_MAX];
	__u64 completed;	/* requests fully completed */
	__u64 bytes;		/* bytes completed, partial completions included */
	__u64 errors;		/* completed with a non-zero status */
	__u64 inserted;		/* first inserts into the scheduler */
	__u64 issued;		/* issues to the driver, re-issues included */
	__u64 requeued;
	__u64 merged;		/* merged away into another request, never issued */
	__u64 partial;		/* partial completions (request not finished yet) */
	__u64 dropped;		/* not tracked: the request map was full */
	__u64 stale;		/* entries found for a recycled request: a missed end */
	__u64 kyber_throttled;	/* kyber_throttled events for this domain */
	__s64 queued;		/* inserted, not yet issued */
	__s64 inflight;		/* issued, not yet completed */
};

/* Last kyber_latency record of one domain and type. */
struct kt_kyber_latency {
	__u64 time_ns;		/* bpf_ktime_get_ns() when seen; 0: never */
	__u32 percentile;	/* 90 or 99 */
	__u32 numerator;	/* bucket index + 1, out of ... */
	__u32 denominator;	/* ... 4: <= 4/4 means within the target */
	__u32 samples;
};

enum kt_kyber_lat_type {
	KT_KYBER_TOTAL = 0,
	KT_KYBER_IO = 1,
	KT_KYBER_TYPES = 2,
};

/* Kyber's own view of one device, written by its tracepoints. Map key: slot. */
struct kt_kyber_state {
	__u32 depth[KT_OP_MAX];		/* last kyber_adjust depth; 0: not seen */
	__u64 adjust_time_ns[KT_OP_MAX];
	__u64 adjust_count[KT_OP_MAX];
	struct kt_kyber_latency latency[KT_OP_MAX][KT_KYBER_TYPES];
};

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
	__u32 slot;
	__u8 op;
	__u8 state;
	__u8 flags;
	__u8 pad;
};

/* Kernel dev_t encoding (MKDEV), not glibc's. */
#define KT_MINORBITS	20
#define KT_MKDEV(ma, mi)	(((__u32)(ma) << KT_MINORBITS) | (__u32)(mi))

/* Histogram bucket of a value in ns. Loop-free for the BPF verifier. */
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

static inline __u32 kt_hist_index(__u64 v)
{
	__u32 msb, shift, idx;

	if (v < 2 * KT_HIST_SUB)
		return (__u32)v;
	msb = kt_log2_u64(v);
	shift = msb - KT_HIST_SUB_BITS;
	idx = (shift + 1) * KT_HIST_SUB + (__u32)((v >> shift) & (KT_HIST_SUB - 1));
	return idx < KT_HIST_BUCKETS ? idx : KT_HIST_BUCKETS - 1;
}

/* Inclusive lower bound and width of a bucket, in ns. */
static inline __u64 kt_hist_lower(__u32 idx)
{
	__u32 shift;

	if (idx < 2 * KT_HIST_SUB)
		return idx;
	shift = idx / KT_HIST_SUB - 1;
	return (__u64)(KT_HIST_SUB + idx % KT_HIST_SUB) << shift;
}

static inline __u64 kt_hist_width(__u32 idx)
{
	if (idx < 2 * KT_HIST_SUB)
		return 1;
	return (__u64)1 << (idx / KT_HIST_SUB - 1);
}

#ifndef __bpf__
_Static_assert(sizeof(struct kt_op_stats) ==
	       8 * (KT_LAT_MAX * KT_HIST_BUCKETS + KT_LAT_MAX + 13),
	       "kt_op_stats layout changed");
/* Per-CPU map values are limited to 32 KiB (PCPU_MIN_UNIT_SIZE). */
_Static_assert(sizeof(struct kt_op_stats) <= 32768, "kt_op_stats too big for a per-CPU map");
_Static_assert(sizeof(struct kt_kyber_latency) == 24, "kt_kyber_latency layout changed");
_Static_assert(sizeof(struct kt_kyber_state) == 16 + 32 + 32 + 4 * 2 * 24,
	       "kt_kyber_state layout changed");
_Static_assert(sizeof(struct kt_req) == 24, "kt_req layout changed");
#endif

#endif
