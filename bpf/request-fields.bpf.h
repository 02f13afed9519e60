/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the observer reads of a struct request, for both kinds of program.
 * tp_btf programs get a BTF-typed pointer and walk it with plain loads (the
 * verifier turns them into exception-handled loads, no helper call);
 * raw_tp programs must use bpf_probe_read_kernel(). The btf argument is a
 * compile-time constant: each program keeps one branch. Fields are found
 * through CO-RE, by name, on the running kernel.
 */
#pragma once

#define REQ_OP_BITS_MASK	0xff

/* Before 5.17 the request pointed at its disk directly. */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline __u32 rq_dev(struct request *rq, bool btf)
{
	struct gendisk *disk;

	if (btf) {
		if (bpf_core_field_exists(rq->q->disk))
			disk = rq->q->disk;
		else
			disk = ((struct request___old *)rq)->rq_disk;
		return disk ? KT_MKDEV(disk->major, disk->first_minor) : 0;
	}
	if (bpf_core_field_exists(rq->q->disk))
		disk = BPF_CORE_READ(rq, q, disk);
	else
		disk = BPF_CORE_READ((struct request___old *)rq, rq_disk);
	if (!disk)
		return 0;
	return KT_MKDEV(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
}

static __always_inline __u8 rq_op(struct request *rq, bool btf)
{
	__u32 flags = btf ? rq->cmd_flags : BPF_CORE_READ(rq, cmd_flags);

	switch (flags & REQ_OP_BITS_MASK) {
	case REQ_OP_READ:
		return KT_OP_READ;
	case REQ_OP_WRITE:
		return KT_OP_WRITE;
	case REQ_OP_DISCARD:
		return KT_OP_DISCARD;
	default:
		return KT_OP_OTHER;
	}
}

static __always_inline __u32 rq_data_len(struct request *rq, bool btf)
{
	return btf ? rq->__data_len : BPF_CORE_READ(rq, __data_len);
}

static __always_inline __u32 rq_flags(struct request *rq, bool btf)
{
	return btf ? rq->rq_flags : BPF_CORE_READ(rq, rq_flags);
}

/*
 * A request flag's mask on the running kernel (CO-RE: the bit numbers have
 * moved between versions); 0 where its BTF names no such flag, so a test
 * of it is false.
 */
#define RQF(name)									\
	(bpf_core_enum_value_exists(enum rqf_flags, __RQF_##name) ?			\
	 1u << bpf_core_enum_value(enum rqf_flags, __RQF_##name) : 0u)

/* A request allocated from scheduler tags: the queue has an elevator, and
 * the request normally went through insert before its issue. */
static __always_inline bool rq_has_sched_tag(struct request *rq, bool btf)
{
	int tag = btf ? rq->internal_tag : BPF_CORE_READ(rq, internal_tag);

	return tag >= 0;
}

/* The request queue's id: small, unique among the live queues. */
static __always_inline __u32 rq_queue_id(struct request *rq, bool btf)
{
	return btf ? (__u32)rq->q->id : (__u32)BPF_CORE_READ(rq, q, id);
}

/* The cgroup a request was issued for: its first bio's blkg's. Reached
 * through the bio, never the task at completion (an interrupt or a
 * kworker). 0 where the request has no bio (a flush) or no blkg. */
static __always_inline __u64 rq_cgroup(struct request *rq, bool btf)
{
	struct blkcg_gq *blkg;
	struct bio *bio;

	if (!bpf_core_field_exists(struct bio, bi_blkg))
		return 0;
	if (btf) {
		bio = rq->bio;
		blkg = bio ? bio->bi_blkg : NULL;
		return blkg && blkg->blkcg ? blkg->blkcg->css.cgroup->kn->id : 0;
	}
	bio = BPF_CORE_READ(rq, bio);
	blkg = bio ? BPF_CORE_READ(bio, bi_blkg) : NULL;
	return blkg ? BPF_CORE_READ(blkg, blkcg, css.cgroup, kn, id) : 0;
}
