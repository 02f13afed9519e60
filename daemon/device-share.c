/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Cgroups sharing one tuned disk by weight (share.h): the weights, the
 * observer's per-cgroup accounting (on while the disk has weights), one
 * policy step per interval, and the limits written to the cgroups: their
 * originals recorded first (also for a restart after a crash) and put
 * back when the limits are lifted, the weights cleared or the daemon
 * stops.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-io.h"
#include "device-internal.h"
#include "error.h"
#include "log.h"
#include "macro.h"
#include "share.h"
#include "state.h"
#include "time-util.h"

/* Periods a cgroup may stay idle before it is forgotten (its limits put
 * back, its counters dropped): a tenant between jobs keeps its history
 * for half a minute. */
#define SHARE_IDLE_PERIODS 30
/* A limit is rewritten only when it moves by more than this factor:
 * blk-throttle's own accuracy is a few percent, and each write is a
 * system call per cgroup and file. */
#define SHARE_REWRITE 1.02
/* Device completions of an op a service time is estimated from: a tenth
 * of them is 10 requests at least. */
#define SHARE_SERVICE_MIN_SAMPLES 100
/* A period shorter than this share of the interval is no period (a tick
 * that came early after a resume): the next one counts from the same
 * start. */
#define SHARE_PERIOD_MIN 0.5

struct share_member {
	uint64_t id;			/* the cgroup's kernfs id; 0: I/O without a cgroup */
	char path[CGROUP_PATH_MAX];	/* relative to the hierarchy root; "": the root */
	struct kt_cg_sample last;	/* counters at the previous period */
	bool have_last, seen;
	struct share_group g;
	struct cgroup_limits written;	/* what the cgroup has as far as kyber-tuned wrote */
	struct cgroup_limits original;	/* its limits before kyber-tuned; valid when limited */
	bool limited;			/* kyber-tuned changed them: the originals are recorded */
	unsigned idle;
	struct device_share_row fig;	/* the last period, for status */
};

struct device_share {
	struct device_weight *weights;
	size_t n_weights;
	struct share policy;
	struct share_member *members;
	size_t n_members;
	uint64_t last_ns;		/* CLOCK_MONOTONIC of the last period */
	bool accounting;		/* the observer accounts this disk's cgroups */
	struct kt_cg_sample samples[KT_MAX_CGROUPS];
};

static const struct cgroup_hierarchy *hierarchy(const struct device *d)
{
	return d->env.cgroups;
}

static uint32_t disk_major(const struct device *d)
{
	return d->dev.major;
}

static uint32_t disk_minor(const struct device *d)
{
	return d->dev.minor;
}

/* ------------------------------------------------------------- limits */

/* Record a cgroup's limits before the first change (a crash must not lose
 * them), or forget them once they are back. */
static void note_original(struct device *d, struct share_member *m, bool keep)
{
	const struct cgroup_hierarchy *h = hierarchy(d);
	struct cgroup_original c = {
		.cgroup = m->path, .root = (char *)h->root, .version = h->version,
		.major = disk_major(d), .minor = disk_minor(d),
		.read_iops = m->original.read_iops, .write_iops = m->original.write_iops,
		.read_bps = m->original.read_bps, .write_bps = m->original.write_bps,
	};

	if (keep)
		(void)originals_cg_put(d->env.originals, &c);
	else
		originals_cg_remove(d->env.originals, h->root, m->path, disk_major(d), disk_minor(d));
	d->env.save_originals(d->env.owner);
}

/* One limit from the policy's, never above the cgroup's own (0: none). */
static uint64_t limit_of(double want, uint64_t own)
{
	uint64_t v;

	if (!(want > 0))
		return own;
	v = (uint64_t)ceil(want);
	return own && own < v ? own : v;
}

/* Does new differ from old by more than the rewrite threshold? */
static bool moved(uint64_t old, uint64_t new)
{
	if (!old || !new)
		return old != new;
	return new > SHARE_REWRITE * old || old > SHARE_REWRITE * new;
}

static int write_limits(struct device *d, struct share_member *m, const struct cgroup_limits *want)
{
	int r = cgroup_limits_write(hierarchy(d), m->path, disk_major(d), disk_minor(d), &m->written, want);

	if (r == -ENOENT && !cgroup_exists(hierarchy(d), m->path)) {
		/* Removed meanwhile: nothing left to limit or to put back. */
		log_dev_info(d->dev.name, "cgroup %s went away", m->path);
		if (m->limited)
			note_original(d, m, false);
		m->limited = false;
		m->written = (struct cgroup_limits){};
		return r;
	}
	if (r < 0)
		return log_dev_warning_errno(d->dev.name, r, "failed to write the I/O limits of cgroup %s: %m",
					     m->path);
	m->written = *want;
	return 0;
}

/* The policy's limits for a member, written where they moved. */
static void apply(struct device *d, struct share_member *m, const struct share_limits *l)
{
	bool any = l->read_iops > 0 || l->write_iops > 0 || l->read_bps > 0 || l->write_bps > 0;
	struct cgroup_limits want;

	if (!any && !m->limited)
		return;
	if (any && !m->limited) {
		int r = cgroup_limits_read(hierarchy(d), m->path, disk_major(d), disk_minor(d), &m->original);

		if (r < 0) {
			log_dev_warning_errno(d->dev.name, r, "cannot read the I/O limits of cgroup %s: %m",
					      m->path);
			return;
		}
		m->written = m->original;
		m->limited = true;
		note_original(d, m, true);
	}
	want = m->original;
	if (any) {
		want.read_iops = limit_of(l->read_iops, m->original.read_iops);
		want.write_iops = limit_of(l->write_iops, m->original.write_iops);
		want.read_bps = limit_of(l->read_bps, m->original.read_bps);
		want.write_bps = limit_of(l->write_bps, m->original.write_bps);
		if (!moved(m->written.read_iops, want.read_iops) && !moved(m->written.write_iops, want.write_iops) &&
		    !moved(m->written.read_bps, want.read_bps) && !moved(m->written.write_bps, want.write_bps))
			return;
	}
	if (write_limits(d, m, &want) < 0 || any)
		return;
	m->limited = false;
	note_original(d, m, false);
}

/* Put a member's own limits back. */
static void give_back(struct device *d, struct share_member *m)
{
	static const struct share_limits none;

	if (m->limited && !d->gone)
		apply(d, m, &none);
}

/* ------------------------------------------------------------- members */

static struct share_member *member_of(struct device *d, uint64_t id)
{
	struct device_share *ds = d->share;
	struct share_member *m;
	char path[CGROUP_PATH_MAX] = "";

	for (size_t i = 0; i < ds->n_members; i++)
		if (ds->members[i].id == id)
			return &ds->members[i];
	if (ds->n_members >= SHARE_GROUPS_MAX)
		return NULL;
	if (id && cgroup_path_of_id(hierarchy(d), id, path, sizeof(path)) < 0) {
		/* Gone already: its counters go too, or every period would
		 * walk the hierarchy for it again. */
		(void)observer_cgroup_forget(d->env.observer, d->ms.slot, id);
		return NULL;
	}
	m = realloc(ds->members, (ds->n_members + 1) * sizeof(*m));
	if (!m)
		return NULL;
	ds->members = m;
	m = &ds->members[ds->n_members++];
	memset(m, 0, sizeof(*m));
	m->id = id;
	snprintf(m->path, sizeof(m->path), "%s", path);
	return m;
}

static void drop_member(struct device *d, size_t i)
{
	struct device_share *ds = d->share;

	give_back(d, &ds->members[i]);
	(void)observer_cgroup_forget(d->env.observer, d->ms.slot, ds->members[i].id);
	ds->members[i] = ds->members[--ds->n_members];
}

static const struct device_weight *weight_of(const struct device *d, const char *path)
{
	const struct device_share *ds = d->share;

	for (size_t i = 0; i < ds->n_weights; i++)
		if (strcmp(ds->weights[i].cgroup, path) == 0)
			return &ds->weights[i];
	return NULL;
}

/* The P99 of a cgroup histogram's delta (KT_CG_HIST_GROUP fine buckets a
 * coarse one, counted at the middle one). */
static uint64_t cg_p99(const uint64_t *now, const uint64_t *before)
{
	hist_t h = {};
	uint64_t v = 0;

	for (unsigned b = 0; b < KT_CG_HIST_BUCKETS; b++) {
		unsigned fine = MIN(b * KT_CG_HIST_GROUP + KT_CG_HIST_GROUP / 2, KT_HIST_BUCKETS - 1);

		h[fine] += now[b] - before[b];
	}
	return hist_count(h) && hist_percentile(h, 99, &v) == 0 ? v : 0;
}

/* A member's period from its counters now; false when it has no period
 * (first seen, or its counters went back). */
static bool period_of(struct share_member *m, const struct kt_cg_sample *now, double secs,
		      struct share_input *in)
{
	const struct kt_cg_sample *b = &m->last;
	double lat = 0;

	memset(in, 0, sizeof(*in));
	if (!m->have_last || now->op[KT_CG_READ].completed < b->op[KT_CG_READ].completed ||
	    now->op[KT_CG_WRITE].completed < b->op[KT_CG_WRITE].completed)
		return false;
	in->reads = (double)(now->op[KT_CG_READ].completed - b->op[KT_CG_READ].completed) / secs;
	in->writes = (double)(now->op[KT_CG_WRITE].completed - b->op[KT_CG_WRITE].completed) / secs;
	in->read_bytes = (double)(now->op[KT_CG_READ].bytes - b->op[KT_CG_READ].bytes) / secs;
	in->write_bytes = (double)(now->op[KT_CG_WRITE].bytes - b->op[KT_CG_WRITE].bytes) / secs;
	for (unsigned op = 0; op < KT_CG_OPS; op++)
		lat += (double)(now->op[op].lat_sum_ns - b->op[op].lat_sum_ns);
	/* Little's law: requests in the block layer on average. */
	in->outstanding = lat / (secs * 1e9);
	m->fig.read_iops = in->reads;
	m->fig.write_iops = in->writes;
	m->fig.read_bps = in->read_bytes;
	m->fig.write_bps = in->write_bytes;
	m->fig.read_p99_ns = cg_p99(now->hist[KT_CG_READ], b->hist[KT_CG_READ]);
	m->fig.write_p99_ns = cg_p99(now->hist[KT_CG_WRITE], b->hist[KT_CG_WRITE]);
	return true;
}

/* ------------------------------------------------------------- the period */

/* Counters now, members found or added, idle ones counted. Returns the
 * number of samples read. */
static size_t take_samples(struct device *d)
{
	struct device_share *ds = d->share;
	size_t n = 0;

	if (observer_cgroup_snapshot(d->env.observer, d->ms.slot, ds->samples, ELEMENTSOF(ds->samples), &n) < 0) {
		log_dev_warning(d->dev.name, "failed to read the per-cgroup counters");
		return 0;
	}
	return MIN(n, ELEMENTSOF(ds->samples));
}

/* A request's service time: the device latency of the fastest tenth,
 * which waited behind few others. 0: no such requests. */
static double service_ns(const __u64 *device_hist)
{
	uint64_t v = 0;

	return hist_count(device_hist) >= SHARE_SERVICE_MIN_SAMPLES && hist_percentile(device_hist, 10, &v) == 0 ?
	       (double)v : 0;
}

static bool limits_any(const struct share_limits *l)
{
	return l->read_iops > 0 || l->write_iops > 0 || l->read_bps > 0 || l->write_bps > 0;
}

/* Each member's period from the cgroups' counters (a member not seen
 * did nothing), its weight, and its state from the last step. */
static void gather(struct device *d, double secs, struct share_input *in, struct share_group *g)
{
	struct device_share *ds = d->share;
	size_t n = take_samples(d);

	for (size_t i = 0; i < ds->n_members; i++)
		ds->members[i].seen = false;
	for (size_t i = 0; i < n; i++) {
		struct share_member *m = member_of(d, ds->samples[i].cgroup);

		if (!m)
			continue;
		m->seen = true;
		if (!period_of(m, &ds->samples[i], secs, &in[m - ds->members]))
			memset(&in[m - ds->members], 0, sizeof(in[0]));
		m->last = ds->samples[i];
		m->have_last = true;
	}
	for (size_t i = 0; i < ds->n_members; i++) {
		struct share_member *m = &ds->members[i];
		const struct device_weight *w = weight_of(d, m->path);

		if (!m->seen)
			memset(&in[i], 0, sizeof(in[i]));
		in[i].weight = w ? w->weight : SHARE_WEIGHT_DEFAULT;
		in[i].limitable = m->id && m->path[0];
		g[i] = m->g;
		m->idle = in[i].reads + in[i].writes > 0 ? 0 : m->idle + 1;
	}
}

void device_share_step(struct device *d)
{
	struct device_share *ds = d->share;
	struct share_input in[SHARE_GROUPS_MAX];
	struct share_limits out[SHARE_GROUPS_MAX];
	struct share_group g[SHARE_GROUPS_MAX];
	struct share_period p = {};
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	bool was_limiting;
	double secs;

	if (!ds || !ds->n_weights || d->paused || d->gone)
		return;
	if (!ds->accounting) {
		if (observer_set_cgroups(d->env.observer, d->ms.slot, true) < 0) {
			log_dev_warning(d->dev.name, "failed to turn per-cgroup accounting on");
			return;
		}
		ds->accounting = true;
		ds->last_ns = now;
		return;
	}
	secs = (double)(now - ds->last_ns) / 1e9;
	if (secs * 1e9 < SHARE_PERIOD_MIN * (double)d->env.o->interval_ns)
		return;
	ds->last_ns = now;
	gather(d, secs, in, g);
	if (d->have_interval) {
		p.read_service_ns = service_ns(d->ms.iv->op[KT_OP_READ].hist[KT_LAT_DEVICE]);
		p.write_service_ns = service_ns(d->ms.iv->op[KT_OP_WRITE].hist[KT_LAT_DEVICE]);
	}
	was_limiting = ds->policy.limiting;
	share_step(&ds->policy, &p, ds->n_members, in, g, out);
	log_dev_debug(d->dev.name, "sharing: %zu cgroups, capacity %.0f, write cost %.2f, %s", ds->n_members,
		      ds->policy.capacity, ds->policy.write_cost, ds->policy.limiting ? "limiting" : "not limiting");
	for (size_t i = 0; i < ds->n_members; i++)
		log_dev_debug(d->dev.name, "  %s: %.0f r/s %.0f w/s, %.1f outstanding, %s, allocation %.0f",
			      ds->members[i].path, in[i].reads, in[i].writes, in[i].outstanding,
			      g[i].wants_more ? "wants more" : "satisfied", g[i].allocation);
	if (ds->policy.limiting != was_limiting)
		log_dev_info(d->dev.name, ds->policy.limiting ?
			     "sharing by weight: cgroups limited to their shares of %.0f read-equivalent I/Os a "
			     "second (a write costs %.2f)" :
			     "sharing by weight: limits lifted, no cgroup wants more than it gets (%.0f, %.2f)",
			     ds->policy.capacity, ds->policy.write_cost);
	for (size_t i = 0; i < ds->n_members; i++) {
		struct share_member *m = &ds->members[i];

		m->g = g[i];
		m->fig.share = g[i].share;
		if (!in[i].limitable)
			continue;
		if (limits_any(&out[i]) || m->limited)
			apply(d, m, &out[i]);
	}
	for (size_t i = ds->n_members; i-- > 0;)
		if (ds->members[i].idle >= SHARE_IDLE_PERIODS)
			drop_member(d, i);
}

/* ------------------------------------------------------------- weights */

void device_share_stop(struct device *d)
{
	struct device_share *ds = d->share;

	if (!ds)
		return;
	while (ds->n_members)
		drop_member(d, ds->n_members - 1);
	if (ds->accounting && !d->gone)
		(void)observer_set_cgroups(d->env.observer, d->ms.slot, false);
	ds->accounting = false;
	share_init(&ds->policy);
}

void device_share_free(struct device *d)
{
	if (!d->share)
		return;
	device_share_stop(d);
	free(d->share->weights);
	free(d->share->members);
	free(d->share);
	d->share = NULL;
}

int device_set_weight(struct device *d, const char *cgroup, uint32_t weight, enum goal_source source,
		      sd_bus_error *error)
{
	const struct cgroup_hierarchy *h = hierarchy(d);
	struct device_weight *w, *grown;
	char path[CGROUP_PATH_MAX];
	const char *why;
	int r;

	if (!h)
		return error_setf(error, -EOPNOTSUPP, "No cgroup hierarchy has the io (blkio) controller here: "
				  "weights cannot be applied");
	r = cgroup_path_normalize(cgroup, path, sizeof(path), &why);
	if (r < 0)
		return error_setf(error, -EINVAL, "Invalid cgroup \"%.64s\": %s", cgroup, why);
	if (weight < SHARE_WEIGHT_MIN || weight > SHARE_WEIGHT_MAX)
		return error_setf(error, -EINVAL, "Invalid weight %u: %u-%u, as io.weight", weight,
				  SHARE_WEIGHT_MIN, SHARE_WEIGHT_MAX);
	if (!cgroup_exists(h, path))
		return error_setf(error, -ENOENT, "No cgroup %s in %s", path, h->root);
	if (!d->share) {
		d->share = calloc(1, sizeof(*d->share));
		if (!d->share)
			return error_setf(error, -ENOMEM, "Out of memory");
		share_init(&d->share->policy);
	}
	w = (struct device_weight *)weight_of(d, path);
	if (w && w->source == GOAL_SOURCE_RUNTIME && source == GOAL_SOURCE_CONFIG) {
		log_dev_info(d->dev.name, "the configured weight %u of cgroup %s stands behind the weight %u set "
			     "at run time", weight, path, w->weight);
		return 0;
	}
	if (!w) {
		grown = realloc(d->share->weights, (d->share->n_weights + 1) * sizeof(*grown));
		if (!grown)
			return error_setf(error, -ENOMEM, "Out of memory");
		d->share->weights = grown;
		w = &grown[d->share->n_weights++];
		snprintf(w->cgroup, sizeof(w->cgroup), "%s", path);
	} else if (w->weight == weight && w->source == source)
		return 0;
	w->weight = weight;
	w->source = source;
	log_dev_info(d->dev.name, "cgroup %s shares it with weight %u (%s)", path, weight,
		     goal_source_to_string(source));
	return 0;
}

int device_clear_weight(struct device *d, const char *cgroup, sd_bus_error *error)
{
	struct device_weight *w;
	char path[CGROUP_PATH_MAX];
	const char *why;

	if (cgroup_path_normalize(cgroup, path, sizeof(path), &why) < 0)
		return error_setf(error, -EINVAL, "Invalid cgroup \"%.64s\": %s", cgroup, why);
	w = d->share ? (struct device_weight *)weight_of(d, path) : NULL;
	if (!w)
		return error_setf(error, -ENOENT, "Cgroup %s has no weight on %s", path, d->dev.name);
	*w = d->share->weights[--d->share->n_weights];
	log_dev_info(d->dev.name, "cgroup %s no longer has a weight", path);
	if (!d->share->n_weights)
		device_share_free(d);
	return 0;
}

size_t device_n_weights(const struct device *d)
{
	return d->share ? d->share->n_weights : 0;
}

const struct device_weight *device_weight(const struct device *d, size_t i)
{
	return d->share && i < d->share->n_weights ? &d->share->weights[i] : NULL;
}

int device_get_shares(const struct device *d, struct device_share_row **ret, size_t *ret_n)
{
	const struct device_share *ds = d->share;
	struct device_share_row *rows;
	size_t n = 0;

	*ret = NULL;
	*ret_n = 0;
	if (!ds)
		return 0;
	rows = calloc(ds->n_members + ds->n_weights + 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < ds->n_members; i++) {
		const struct share_member *m = &ds->members[i];
		const struct device_weight *w = weight_of(d, m->path);

		rows[n] = m->fig;
		snprintf(rows[n].cgroup, sizeof(rows[n].cgroup), "%s", !m->id ? "(none)" : m->path[0] ? m->path : "/");
		rows[n].weight = w ? w->weight : SHARE_WEIGHT_DEFAULT;
		rows[n].weighted = w != NULL;
		rows[n].limit = m->limited ? m->written : (struct cgroup_limits){};
		n++;
	}
	/* Weights of cgroups that did no I/O here lately. */
	for (size_t i = 0; i < ds->n_weights; i++) {
		bool listed = false;

		for (size_t j = 0; j < n && !listed; j++)
			listed = strcmp(rows[j].cgroup, ds->weights[i].cgroup) == 0;
		if (listed)
			continue;
		snprintf(rows[n].cgroup, sizeof(rows[n].cgroup), "%s", ds->weights[i].cgroup);
		rows[n].weight = ds->weights[i].weight;
		rows[n].weighted = true;
		n++;
	}
	*ret = rows;
	*ret_n = n;
	return 0;
}

bool device_weights_only(const struct device *d)
{
	return d->weights_only;
}

void device_set_weights_only(struct device *d, bool on)
{
	d->weights_only = on;
}
