/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ladder of write targets the tuner moves on while it protects reads,
 * and what each level did to reads. Kyber keeps a domain's P99 in bucket
 * 3 of its target (it cuts below 3/4, grows above 1), so with reads
 * counting as hurt, a write target is a write latency, and for a writer
 * with a fixed queue depth a write rate (Little's law): one level per
 * bucket, about x1.26. Each level keeps counts of the settled intervals
 * it met and missed the goal in; the counts fade, so a level found bad
 * while something else disturbed the device is tried again, and what the
 * intervals the host disturbed (ctl-host.c) said goes once it has passed,
 * as does what a streak of misses said that ended with reads missing even
 * behind a single write (the device itself was slow: a GC storm).
 */
#include <math.h>
#include <string.h>

#include "ctl-internal.h"

uint64_t ctl_level_ns(int level)
{
	level = (int)clampd(level, 0, CTL_LEVELS - 1);
	return (uint64_t)((double)CTL_LEVEL_BASE_NS * exp2((double)level / CTL_LEVEL_STEPS_PER_DOUBLING));
}

int ctl_level_at_least(double ns)
{
	double l;

	if (!(ns > CTL_LEVEL_BASE_NS))
		return 0;
	/* The small epsilon keeps a level's own target on that level. */
	l = ceil(log2(ns / CTL_LEVEL_BASE_NS) * CTL_LEVEL_STEPS_PER_DOUBLING - 1e-9);
	return (int)clampd(l, 0, CTL_LEVELS - 1);
}

int ctl_level_nearest(double ns)
{
	int l = ctl_level_at_least(ns);

	if (l > 0 && (double)ctl_level_ns(l) / ns > ns / (double)ctl_level_ns(l - 1))
		l--;
	return l;
}

void ctl_levels_forget(struct ctl_levels *l)
{
	memset(l, 0, sizeof(*l));
}

void ctl_levels_forget_but_open_misses(struct ctl_levels *l)
{
	uint8_t missed = l->missed[CTL_LEVELS], disturbed = l->missed_disturbed[CTL_LEVELS];

	ctl_levels_forget(l);
	l->missed[CTL_LEVELS] = missed;
	l->missed_disturbed[CTL_LEVELS] = disturbed;
}

/* Where a level's counts live: open has the slot after the ladder. */
static int slot(int level)
{
	if (level == CTL_LEVEL_OPEN)
		return CTL_LEVELS;
	return level >= 0 && level < CTL_LEVELS ? level : -1;
}

void ctl_levels_tick(struct ctl_levels *l)
{
	if (++l->age < CTL_EVIDENCE_HALF_LIFE)
		return;
	for (unsigned i = 0; i <= CTL_LEVELS; i++) {
		l->met[i] /= 2;
		l->missed[i] /= 2;
		l->missed_disturbed[i] /= 2;
		l->missed_recent[i] /= 2;
		l->drifted[i] /= 2;
		l->drifted_disturbed[i] /= 2;
		l->drifted_recent[i] /= 2;
		if (!l->met[i])
			l->rate[i] = 0;
	}
	l->age = 0;
}

static void add(uint8_t *n, unsigned k)
{
	*n = (uint8_t)MIN((unsigned)*n + k, (unsigned)UINT8_MAX);
}

void ctl_levels_met(struct ctl_levels *l, int level, double write_iops, uint64_t write_p99_ns)
{
	int i = slot(level);

	if (i < 0)
		return;
	add(&l->met[i], 1);
	if (write_iops > (double)l->rate[i]) {
		l->rate[i] = (float)write_iops;
		l->rate_p99_ns[i] = (float)write_p99_ns;
	}
}

double ctl_levels_rate(const struct ctl_levels *l, int level)
{
	int i = slot(level);

	return i >= 0 ? l->rate[i] : 0;
}

double ctl_levels_rate_p99(const struct ctl_levels *l, int level)
{
	int i = slot(level);

	return i >= 0 && l->rate[i] > 0 ? l->rate_p99_ns[i] : 0;
}

void ctl_levels_forget_rate(struct ctl_levels *l, int level)
{
	int i = slot(level);

	if (i >= 0)
		l->rate[i] = 0;
}

unsigned ctl_levels_met_count(const struct ctl_levels *l, int level)
{
	int i = slot(level);

	return i >= 0 ? l->met[i] : 0;
}

unsigned ctl_levels_missed_count(const struct ctl_levels *l, int level)
{
	int i = slot(level);

	return i >= 0 ? l->missed[i] : 0;
}

bool ctl_levels_rare_miss(const struct ctl_levels *l, int level)
{
	int i = slot(level);

	return i >= 0 && l->met[i] >= CTL_RARE_MISS_MET_MIN &&
	       l->met[i] >= CTL_RARE_MISS_RATIO * (unsigned)l->missed[i];
}

bool ctl_levels_bad(const struct ctl_levels *l, int level)
{
	int i = slot(level);

	return i >= 0 && CTL_BAD_MISS_RATIO * l->missed[i] > l->met[i];
}

static void forgive_level(struct ctl_levels *l, unsigned i)
{
	l->missed[i] = l->missed_disturbed[i] = l->missed_recent[i] = 0;
	l->drifted[i] = l->drifted_disturbed[i] = l->drifted_recent[i] = 0;
}

void ctl_levels_forgive_below(struct ctl_levels *l, int level)
{
	for (int i = 0; i < MIN(level, CTL_LEVELS); i++)
		forgive_level(l, i);
	forgive_level(l, CTL_LEVELS);
}

void ctl_levels_forgive_disturbed(struct ctl_levels *l)
{
	for (unsigned i = 0; i <= CTL_LEVELS; i++) {
		l->missed[i] -= MIN(l->missed[i], l->missed_disturbed[i]);
		l->drifted[i] -= MIN(l->drifted[i], l->drifted_disturbed[i]);
		l->missed_disturbed[i] = l->drifted_disturbed[i] = 0;
	}
}

void ctl_levels_recent_stand(struct ctl_levels *l)
{
	memset(l->missed_recent, 0, sizeof(l->missed_recent));
	memset(l->drifted_recent, 0, sizeof(l->drifted_recent));
}

void ctl_levels_recent_disturbed(struct ctl_levels *l)
{
	for (unsigned i = 0; i <= CTL_LEVELS; i++) {
		add(&l->missed_disturbed[i], l->missed_recent[i]);
		add(&l->drifted_disturbed[i], l->drifted_recent[i]);
	}
	ctl_levels_recent_stand(l);
}

void ctl_levels_drifted(struct ctl_levels *l, int level, bool disturbed)
{
	int i = slot(level);

	if (i < 0)
		return;
	add(&l->drifted[i], CTL_DRIFT_WEIGHT);
	add(disturbed ? &l->drifted_disturbed[i] : &l->drifted_recent[i], CTL_DRIFT_WEIGHT);
}

bool ctl_levels_unusable(const struct ctl_levels *l, int level)
{
	int i = slot(level);

	return i >= 0 && (l->drifted[i] || ctl_levels_bad(l, level));
}

static bool good(const struct ctl_levels *l, int level)
{
	int i = slot(level);

	return i >= 0 && l->met[i] && !ctl_levels_unusable(l, level);
}

/*
 * Reads cannot do worse behind fewer writes: a miss at a level while a
 * level with less throttling (or the open point) meets the goal says the
 * device got slower for a while (a host stall, a GC pause), not that the
 * level is bad, and is not held against it.
 */
bool ctl_levels_missed(struct ctl_levels *l, int level, unsigned weight, bool disturbed)
{
	int i = slot(level);

	if (i < 0)
		return false;
	for (int below = level - 1; level != CTL_LEVEL_OPEN && below >= CTL_LEVEL_OPEN; below--)
		if (good(l, below))
			return false;
	add(&l->missed[i], weight);
	add(disturbed ? &l->missed_disturbed[i] : &l->missed_recent[i], weight);
	return true;
}

int ctl_levels_good_above(const struct ctl_levels *l, int level, int max)
{
	for (int i = MAX(level + 1, 0); i <= MIN(max, CTL_LEVELS - 1); i++)
		if (good(l, i))
			return i;
	return -1;
}

int ctl_levels_good_below(const struct ctl_levels *l, int level, int min)
{
	int found = -1;

	for (int i = MIN(level - 1, CTL_LEVELS - 1); i >= MAX(min, 0); i--) {
		if (ctl_levels_unusable(l, i))
			break;
		if (good(l, i))
			found = i;
	}
	return found;
}
