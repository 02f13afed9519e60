/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The observer's per-cgroup accounting (observer.h, KT_WATCH_CGROUPS). */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kyber_observer.skel.h"
#include "log.h"
#include "macro.h"
#include "observer-internal.h"

/* The bpf program looks at the watch flags only while some slot wants
 * its cgroups accounted. */
static void update_global(struct observer *o)
{
	bool any = false;

	for (unsigned slot = 0; slot < o->max_devices; slot++)
		any = any || (o->slot_used[slot] && o->slot_cgroups[slot]);
	o->skel->bss->cgroups = any;
}

/* Calls f for every cgroup entry of the slot's disk; stops at a negative
 * return. The keys are collected first, so f may delete its entry. */
static int for_each_entry(struct observer *o, unsigned slot,
			  int (*f)(struct observer *o, const struct kt_cg_key *k, void *userdata), void *userdata)
{
	int fd = bpf_map__fd(o->skel->maps.cg_stats);
	struct kt_cg_key key, next;
	bool first = true;
	/* Deleting the current key while walking a hash restarts the walk. */
	struct kt_cg_key keys[KT_MAX_CGROUPS];
	size_t n = 0;
	int r;

	while (n < ELEMENTSOF(keys) && bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		first = false;
		key = next;
		if (next.dev == o->slot_kdev[slot])
			keys[n++] = next;
	}
	for (size_t i = 0; i < n; i++) {
		r = f(o, &keys[i], userdata);
		if (r < 0)
			return r;
	}
	return 0;
}

static int delete_entry(struct observer *o, const struct kt_cg_key *k, void *userdata)
{
	(void)bpf_map_delete_elem(bpf_map__fd(o->skel->maps.cg_stats), k);
	return 0;
}

void observer_cgroups_drop(struct observer *o, unsigned slot)
{
	(void)for_each_entry(o, slot, delete_entry, NULL);
	o->slot_cgroups[slot] = false;
	update_global(o);
}

int observer_set_cgroups(struct observer *o, unsigned slot, bool on)
{
	int r;

	if (slot >= o->max_devices || !o->slot_used[slot])
		return -ENOENT;
	if (o->slot_cgroups[slot] == on)
		return 0;
	o->slot_cgroups[slot] = on;
	r = observer_write_watch(o, slot);
	if (r < 0) {
		o->slot_cgroups[slot] = !on;
		return r;
	}
	if (!on)
		observer_cgroups_drop(o, slot);
	update_global(o);
	/* Cgroups' latencies count every request: no sampling while on. */
	r = observer_write_sampling(o, slot);
	if (r < 0)
		log_warning_errno(r, "Failed to set the sampling of slot %u: %m", slot);
	return 0;
}

struct snapshot_ctx {
	struct kt_cg_sample *out;
	size_t max, n;
};

static int read_entry(struct observer *o, const struct kt_cg_key *k, void *userdata)
{
	struct snapshot_ctx *c = userdata;
	struct kt_cg_stats v;
	struct kt_cg_sample *s;

	if (c->n++ >= c->max)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.cg_stats), k, &v) < 0) {
		c->n--;		/* deleted meanwhile */
		return 0;
	}
	s = &c->out[c->n - 1];
	memset(s, 0, sizeof(*s));
	s->cgroup = k->cgroup;
	for (unsigned op = 0; op < KT_CG_OPS; op++) {
		s->op[op] = v.op[op];
		for (unsigned b = 0; b < KT_CG_HIST_BUCKETS; b++)
			s->hist[op][b] = v.hist[op][b];
	}
	return 0;
}

int observer_cgroup_snapshot(struct observer *o, unsigned slot, struct kt_cg_sample *out, size_t max,
			     size_t *ret_n)
{
	struct snapshot_ctx c = { .out = out, .max = max };
	int r;

	if (slot >= o->max_devices || !o->slot_used[slot])
		return -ENOENT;
	r = for_each_entry(o, slot, read_entry, &c);
	if (r < 0)
		return r;
	*ret_n = c.n;
	return 0;
}

int observer_cgroup_forget(struct observer *o, unsigned slot, uint64_t cgroup)
{
	struct kt_cg_key k = { .cgroup = cgroup };

	if (slot >= o->max_devices || !o->slot_used[slot])
		return -ENOENT;
	k.dev = o->slot_kdev[slot];
	if (bpf_map_delete_elem(bpf_map__fd(o->skel->maps.cg_stats), &k) < 0 && errno != ENOENT)
		return negative_errno();
	return 0;
}
