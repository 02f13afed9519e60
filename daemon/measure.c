/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blockdev.h"
#include "fileio.h"
#include "kyber-sysfs.h"
#include "log.h"
#include "macro.h"
#include "measure.h"

/*
 * Whether the kernel leaves the issue of this device's requests unstamped,
 * so the observer must track them from insert/issue: Kyber turns on the
 * queue's I/O statistics (issue stamps); with no elevator a request is
 * issued as it is allocated and I/O accounting stamps the allocation. Any
 * other elevator, or none without accounting, is tracked.
 */
static bool on_kyber(const struct measure_where *w)
{
	return w->scheduler && strcmp(w->scheduler, "kyber") == 0;
}

static bool needs_tracking(const struct measure_where *w)
{
	bool iostats;

	if (!w->scheduler || w->track_requests)
		return true;
	if (on_kyber(w))
		return false;
	if (strcmp(w->scheduler, "none") != 0)
		return true;
	return blockdev_read_iostats(w->sysroot, w->name, &iostats) < 0 || !iostats;
}

/* /proc/stat is a few hundred bytes per CPU. */
#define PROC_STAT_MAX (1024 * 1024)

void measure_read_host(struct host_cpu_time *out)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r;

	*out = (struct host_cpu_time){};
	r = read_virtual_file("/proc/stat", PROC_STAT_MAX, &text, &len);
	if (r >= 0)
		r = host_cpu_parse(text, len, out);
	if (r < 0)
		log_debug_errno(r, "Failed to read the host's CPU time from /proc/stat: %m");
}

/* The device's counters as of now, with the host's CPU time of this
 * interval (host: NULL, not known). */
static int snapshot(struct measure *ms, struct observer *o, const struct host_cpu_time *host,
		    struct kt_snapshot *dst)
{
	int r = observer_snapshot(o, ms->slot, dst);

	if (r >= 0)
		dst->host = host ? *host : (struct host_cpu_time){};
	return r;
}

int measure_start(struct measure *ms, struct observer *o, uint32_t kdev, const struct measure_where *w)
{
	int r;

	*ms = (struct measure){};
	ms->base = calloc(1, sizeof(*ms->base));
	ms->cur = calloc(1, sizeof(*ms->cur));
	ms->iv = calloc(1, sizeof(*ms->iv));
	ms->totals = calloc(1, sizeof(*ms->totals));
	if (!ms->base || !ms->cur || !ms->iv || !ms->totals)
		return -ENOMEM;
	r = observer_watch(o, kdev, &ms->slot);
	if (r < 0)
		return r;
	ms->watching = true;
	r = observer_set_tracked(o, ms->slot, needs_tracking(w));
	if (r < 0)
		return r;
	return snapshot(ms, o, w->host, ms->base);
}

void measure_stop(struct measure *ms, struct observer *o)
{
	if (ms->watching)
		(void)observer_unwatch(o, ms->slot);
	free(ms->base);
	free(ms->cur);
	free(ms->iv);
	free(ms->totals);
	*ms = (struct measure){};
}

/* The snapshot in cur becomes the base of the next interval. */
static void advance(struct measure *ms)
{
	struct kt_snapshot *t = ms->base;

	ms->base = ms->cur;
	ms->cur = t;
}

int measure_restart(struct measure *ms, struct observer *o, const struct host_cpu_time *host)
{
	int r = snapshot(ms, o, host, ms->cur);

	if (r < 0)
		return r;
	/* -ERANGE: the counters were reset; nothing to count. */
	(void)metrics_totals_add(ms->totals, ms->base, ms->cur);
	advance(ms);
	return 0;
}

/* Kyber's depths (interval_kyber_depth(): debugfs is the truth, the rest checks). */
static void resolve_depths(struct measure *ms, const struct measure_where *w)
{
	for (int op = 0; op < KT_OP_MAX; op++) {
		unsigned live;
		bool stale;

		if (kyber_debugfs_read_depth(w->debugfs, w->name, kt_op_name[op], &live) < 0)
			live = 0;
		ms->iv->kyber_depth[op] = interval_kyber_depth(ms->iv, op, live ? (int64_t)live : -1, &stale);
		/* Expected once after a restart of Kyber; said when it starts. */
		if (stale && !ms->stale_depth[op])
			log_debug("%s: Kyber's last reported %s depth is stale; the live depth is %u",
				  w->name, kt_op_name[op], live);
		ms->stale_depth[op] = stale;
	}
}

/*
 * Entries whose completion the kernel never delivered: dropped once the
 * device is idle, so the request map is empty again. Returns how many.
 */
static int expire_lost(struct measure *ms, struct observer *o, const struct measure_where *w)
{
	unsigned kernel_inflight;
	int n;

	if (blockdev_read_inflight(w->sysroot, w->name, &kernel_inflight) < 0 ||
	    !interval_lost_completions(ms->iv, kernel_inflight))
		return 0;
	n = observer_expire(o, ms->slot);
	if (n > 0)
		log_debug("%s: expired %d request entries whose completion was never seen", w->name, n);
	return n;
}

/* Each op sampled as often as the interval's rate of it allows. */
static void set_sampling(struct measure *ms, struct observer *o, const struct measure_where *w)
{
	struct kt_sampling sm;
	int r;

	for (int op = 0; op < KT_OP_MAX; op++)
		sm.shift[op] = (__u8)interval_sample_shift(ms->iv->op[op].iops);
	r = observer_set_sampling(o, ms->slot, &sm);
	if (r < 0)
		log_warning_errno(r, "%s: Failed to set how its completions are sampled: %m", w->name);
}

/* The interval from base to a snapshot taken now, into cur and iv. */
static int take_interval(struct measure *ms, struct observer *o, const struct measure_where *w)
{
	int r = snapshot(ms, o, w->host, ms->cur);

	if (r < 0)
		return r;
	return interval_compute(ms->base, ms->cur, ms->iv);
}

int measure_step(struct measure *ms, struct observer *o, const struct measure_where *w)
{
	int r;

	r = observer_set_tracked(o, ms->slot, needs_tracking(w));
	if (r < 0)
		log_warning_errno(r, "%s: Failed to set how its requests are timed: %m", w->name);

	r = take_interval(ms, o, w);
	if (r < 0)
		return r;
	/* Measured again after an expiry: the interval that shows the device
	 * idle also counts what was expired, and its gauges read 0. */
	if (expire_lost(ms, o, w) > 0) {
		r = take_interval(ms, o, w);
		if (r < 0)
			return r;
	}
	if (!ms->iv->reset)
		(void)metrics_totals_add(ms->totals, ms->base, ms->cur);
	advance(ms);
	if (!ms->iv->reset)
		set_sampling(ms, o, w);
	if (on_kyber(w) && !ms->iv->reset)
		resolve_depths(ms, w);
	return 0;
}
