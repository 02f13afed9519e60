/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One tuned device: its state machine (learning, tracking, holding,
 * infeasible, overridden, advise, paused) driven by the manager's timer,
 * between the observer, the controller and sysfs.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "manager-internal.h"
#include "parse-util.h"
#include "report.h"

static void format_targets(char *buf, size_t n, const struct kyber_targets *t)
{
	char r[DURATION_BUF_MAX], w[DURATION_BUF_MAX];

	snprintf(buf, n, "%s/%s", format_duration(r, sizeof(r), t->read_ns),
		 format_duration(w, sizeof(w), t->write_ns));
}

/* "read P99 12.1ms (goal 2.00ms) device P90 9.10ms 4.51k IOPS; write ..." */
static void format_observed(char *buf, size_t n, const struct device *d, const struct ctl_sample *s,
			    const struct ctl_decision *dec)
{
	char a[DURATION_BUF_MAX], b[DURATION_BUF_MAX], c[DURATION_BUF_MAX], e[DURATION_BUF_MAX];
	char f[DURATION_BUF_MAX], ri[16], wi[16];

	format_count_si(ri, sizeof(ri), s->read.iops);
	format_count_si(wi, sizeof(wi), s->write.iops);
	snprintf(buf, n, "read P%g %s (goal %s) device P90 %s %s IOPS; write %s IOPS P99 %s "
		 "device P90 %s; depth r=%u w=%u",
		 d->goal.has_read ? d->goal.read_pct : 99.0,
		 dec->goal_known ? format_duration(a, sizeof(a), dec->metric_ns) : "?",
		 d->goal.has_read ? format_duration(b, sizeof(b), d->goal.read_ns) : "none",
		 format_duration(c, sizeof(c), s->read.device_p90_ns), ri, wi,
		 format_duration(e, sizeof(e), s->write.total_p99_ns),
		 format_duration(f, sizeof(f), s->write.device_p90_ns),
		 s->read.kyber_depth, s->write.kyber_depth);
}

static void set_state(struct device *d, enum ctl_state st, const char *reason)
{
	if (st != d->state)
		log_info("%s: %s -> %s: %s", d->dev.name, ctl_state_to_string(d->state),
			 ctl_state_to_string(st), reason);
	d->state = st;
	snprintf(d->reason, sizeof(d->reason), "%s", reason);
}

static int write_targets(struct device *d, const struct kyber_targets *t)
{
	int r = kyber_sysfs_write_targets(d->m->o.sysroot, d->dev.name, t);

	if (r < 0)
		return log_warning_errno(r, "%s: failed to write targets: %m", d->dev.name);
	d->written = *t;
	return 0;
}

static int on_settled(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct device *d = userdata;

	if (d->pulse_pending) {
		/* End of a growth pulse: the holding targets go in now. */
		d->pulse_pending = false;
		if (!d->overridden && !d->paused)
			(void)write_targets(d, &d->after_pulse);
	}
	/* The first Kyber window after a change mixes old and new buckets:
	 * start the next interval here. */
	if (observer_snapshot(d->m->observer, d->slot, d->base) < 0)
		log_warning("%s: failed to read counters after a change", d->dev.name);
	d->settle = sd_event_source_disable_unref(d->settle);
	return 0;
}

/* Someone else wrote the scheduler or a target: hands off until resumed. */
static bool check_override(struct device *d)
{
	const char *root = d->m->o.sysroot;
	struct kyber_targets now;
	struct sched_info si;
	char why[200];

	if (d->overridden)
		return true;
	if (kyber_sysfs_read_scheduler(root, d->dev.name, &si) == 0 && strcmp(si.current, "kyber") != 0)
		snprintf(why, sizeof(why), "scheduler changed to %s by someone else", si.current);
	else if (kyber_sysfs_read_targets(root, d->dev.name, &now) == 0 &&
		 (now.read_ns != d->written.read_ns || now.write_ns != d->written.write_ns))
		snprintf(why, sizeof(why), "targets changed from %llu/%llu to %llu/%llu ns by someone else",
			 (unsigned long long)d->written.read_ns, (unsigned long long)d->written.write_ns,
			 (unsigned long long)now.read_ns, (unsigned long long)now.write_ns);
	else
		return false;
	d->overridden = true;
	set_state(d, CTL_OVERRIDDEN, why);
	log_notice("%s: %s; not touching it until resumed", d->dev.name, why);
	return true;
}

static void report(struct device *d, bool changed)
{
	char goal[GOAL_TEXT_MAX];
	const struct ctl_decision *dec = &d->last;
	struct report_tuner rt = {
		.goal = goal_format(&d->goal, goal, sizeof(goal)),
		.state = ctl_state_to_string(d->state),
		.reason = d->reason,
		.metric_ns = dec->goal_known ? dec->metric_ns : 0,
		.goal_met = dec->goal_known ? dec->goal_met : -1,
		.changed = changed,
	};
	struct report_device rd = {
		.name = d->dev.name,
		.scheduler = "kyber",
		.has_targets = true,
		.targets = d->written,
		.iv = d->iv,
		.tuner = &rt,
	};
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	rd.realtime_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	report_json(stdout, &rd);
	fflush(stdout);
}

/* Write what the controller decided (a pulse first, if any). */
static bool apply(struct device *d, const struct ctl_sample *s, const struct ctl_decision *dec)
{
	struct manager *m = d->m;
	char old[48], new[48], obs[320];
	struct kyber_targets before = d->written;
	uint64_t now;

	format_observed(obs, sizeof(obs), d, s, dec);
	format_targets(old, sizeof(old), &d->written);
	format_targets(new, sizeof(new), &dec->targets);
	if (!dec->write) {
		log_debug("%s: [%s] targets %s; %s; %s", d->dev.name, ctl_state_to_string(dec->state),
			  old, obs, dec->reason);
		if (dec->state == CTL_ADVISE && (dec->targets.read_ns != d->written.read_ns ||
						 dec->targets.write_ns != d->written.write_ns))
			log_info("%s: advise: would set targets %s -> %s; %s; %s", d->dev.name, old, new,
				 obs, dec->reason);
		return false;
	}
	if (write_targets(d, dec->pulse ? &dec->pulse_targets : &dec->targets) < 0)
		return false;
	if (dec->pulse) {
		char p[48];

		format_targets(p, sizeof(p), &dec->pulse_targets);
		log_info("%s: targets %s -> %s for %llu ms, then %s; %s; %s", d->dev.name, old, p,
			 (unsigned long long)((dec->pulse_ns ?: m->o.settle_ns) / 1000000), new, obs, dec->reason);
		d->after_pulse = dec->targets;
		d->pulse_pending = true;
	} else
		log_info("%s: targets %s -> %s; %s; %s", d->dev.name, old, new, obs, dec->reason);
	d->changes++;
	sd_event_now(m->event, CLOCK_MONOTONIC, &now);
	d->settle = sd_event_source_disable_unref(d->settle);
	if (sd_event_add_time(m->event, &d->settle, CLOCK_MONOTONIC,
			      now + (dec->pulse && dec->pulse_ns ? dec->pulse_ns : m->o.settle_ns) / 1000, 1000,
			      on_settled, d) < 0)
		log_warning("%s: failed to arm the settle timer", d->dev.name);
	if (m->cb.targets_changed)
		m->cb.targets_changed(d, &before, &dec->targets, dec->reason, m->cb.userdata);
	return true;
}

static void fill_depths(const struct device *d, struct kt_interval *iv)
{
	for (int op = 0; op < KT_OP_MAX; op++) {
		unsigned depth;

		if (kyber_debugfs_read_depth(d->m->o.debugfs, d->dev.name, kt_op_name[op], &depth) == 0)
			iv->kyber_depth[op] = depth;
	}
}

void device_step(struct device *d)
{
	struct manager *m = d->m;
	struct ctl_sample s;
	struct kt_snapshot *x;
	unsigned inflight;
	bool changed = false;

	if (d->settle)
		return;	/* a change is settling: this interval is not clean */
	if (observer_snapshot(m->observer, d->slot, d->cur) < 0 ||
	    interval_compute(d->base, d->cur, d->iv) < 0) {
		log_warning("%s: failed to read counters", d->dev.name);
		return;
	}
	x = d->base;
	d->base = d->cur;
	d->cur = x;
	if (blockdev_read_inflight(m->o.sysroot, d->dev.name, &inflight) == 0)
		(void)observer_expire_lost(m->observer, d->slot, d->iv, inflight);
	if (d->iv->reset)
		return;
	d->have_interval = true;
	fill_depths(d, d->iv);
	memset(&d->last, 0, sizeof(d->last));
	if (!d->paused && !check_override(d)) {
		ctl_sample_from_interval(d->iv, &s);
		controller_decide(d->ctl, &s, &d->written, &d->last);
		changed = apply(d, &s, &d->last);
		set_state(d, d->last.state, d->last.reason);
		if (d->last.goal_known && !d->last.goal_met && m->cb.goal_violated)
			m->cb.goal_violated(d, d->last.metric_ns, d->goal.read_ns, m->cb.userdata);
	}
	if (m->o.json)
		report(d, changed);
	if (m->cb.interval)
		m->cb.interval(d, m->cb.userdata);
}

/*
 * Kyber reports a domain's depth only when it changes it, and a depth is
 * sticky: inherited throttling would be invisible and would hide the
 * writes' unthrottled latency. Switching away and back starts from known
 * depths (the caps); the originals are restored on exit.
 */
static int start_kyber(struct device *d, char *err, size_t errlen)
{
	const struct manager_options *o = &d->m->o;
	int r;

	if (d->original.was_kyber) {
		if (d->goal.mode == GOAL_MODE_ADVISE)
			return 0;	/* advise touches nothing */
		r = kyber_sysfs_set_scheduler(o->sysroot, d->dev.name, "none");
		if (r >= 0)
			r = kyber_sysfs_set_scheduler(o->sysroot, d->dev.name, "kyber");
		if (r < 0) {
			snprintf(err, errlen, "Failed to restart Kyber on %s: %s", d->dev.name, strerror(-r));
			return r;
		}
		log_info("%s: restarted Kyber to start from known depths", d->dev.name);
		return 0;
	}
	if (!o->switch_scheduler || d->goal.mode == GOAL_MODE_ADVISE) {
		snprintf(err, errlen, "%s uses scheduler %s, not Kyber, and switching is %s", d->dev.name,
			 d->original.scheduler,
			 d->goal.mode == GOAL_MODE_ADVISE ? "not done in mode=advise" : "disabled");
		return -EINVAL;
	}
	r = kyber_sysfs_set_scheduler(o->sysroot, d->dev.name, "kyber");
	if (r < 0) {
		snprintf(err, errlen, "Failed to switch %s to Kyber: %s", d->dev.name, strerror(-r));
		return r;
	}
	log_info("%s: scheduler %s -> kyber", d->dev.name, d->original.scheduler);
	return 0;
}

int device_new(struct manager *m, const struct blockdev *bd, const struct goal *g, struct device **ret,
	       char *err, size_t errlen)
{
	const struct manager_options *o = &m->o;
	char goal[GOAL_TEXT_MAX], tg[48];
	struct device *d;
	int r;

	r = blockdev_check_kyber(o->sysroot, bd, err, errlen);
	if (r < 0)
		return r;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->m = m;
	d->dev = *bd;
	d->goal = *g;
	d->state = CTL_LEARNING;
	snprintf(d->reason, sizeof(d->reason), "starting");
	blockdev_stable_id(o->sysroot, bd, d->id, sizeof(d->id));
	d->ctl = calloc(1, sizeof(*d->ctl));
	d->base = calloc(1, sizeof(*d->base));
	d->cur = calloc(1, sizeof(*d->cur));
	d->iv = calloc(1, sizeof(*d->iv));
	if (!d->ctl || !d->base || !d->cur || !d->iv) {
		r = -ENOMEM;
		goto fail;
	}
	controller_init(d->ctl, &d->goal, NULL);

	r = kyber_sysfs_save(o->sysroot, d->dev.name, &d->original);
	if (r < 0) {
		snprintf(err, errlen, "Failed to read the scheduler and targets of %s: %s", d->dev.name,
			 strerror(-r));
		goto fail;
	}
	d->saved = true;
	r = start_kyber(d, err, errlen);
	if (r < 0)
		goto fail;
	r = kyber_sysfs_read_targets(o->sysroot, d->dev.name, &d->written);
	if (r < 0) {
		snprintf(err, errlen, "Failed to read Kyber's targets of %s: %s", d->dev.name, strerror(-r));
		goto fail;
	}
	r = observer_watch(m->observer, d->dev.kdev, &d->slot);
	if (r < 0 || (r = observer_snapshot(m->observer, d->slot, d->base)) < 0) {
		snprintf(err, errlen, "Failed to watch %s: %s", d->dev.name,
			 r == -ENOSPC ? "all observer slots are in use (MaxDevices)" : strerror(-r));
		goto fail;
	}
	d->watching = true;
	if (g->mode == GOAL_MODE_ADVISE)
		set_state(d, CTL_ADVISE, "mode=advise: decisions are reported, nothing is written");
	format_targets(tg, sizeof(tg), &d->written);
	log_info("%s: tuning toward %s (targets now %s)", d->dev.name, goal_format(g, goal, sizeof(goal)), tg);
	*ret = d;
	return 0;
fail:
	device_free(d);
	return r;
}

static void restore(struct device *d)
{
	int r;

	if (!d->saved || !d->m->o.rollback || d->goal.mode == GOAL_MODE_ADVISE)
		return;
	if (d->overridden) {
		log_notice("%s: overridden by someone else: leaving it as it is", d->dev.name);
		return;
	}
	r = kyber_sysfs_restore(d->m->o.sysroot, d->dev.name, &d->original);
	if (r < 0)
		log_error_errno(r, "%s: failed to restore scheduler %s: %m", d->dev.name, d->original.scheduler);
	else
		log_info("%s: restored scheduler %s%s", d->dev.name, d->original.scheduler,
			 d->original.was_kyber ? " and its targets" : "");
}

struct device *device_free(struct device *d)
{
	if (!d)
		return NULL;
	restore(d);
	if (d->watching)
		(void)observer_unwatch(d->m->observer, d->slot);
	sd_event_source_disable_unref(d->settle);
	free(d->ctl);
	free(d->base);
	free(d->cur);
	free(d->iv);
	free(d);
	return NULL;
}

void device_set_goal(struct device *d, const struct goal *g)
{
	char goal[GOAL_TEXT_MAX];

	d->goal = *g;
	controller_init(d->ctl, g, NULL);
	set_state(d, g->mode == GOAL_MODE_ADVISE ? CTL_ADVISE : CTL_LEARNING, "new goal");
	log_info("%s: goal now %s", d->dev.name, goal_format(g, goal, sizeof(goal)));
}

void device_pause(struct device *d)
{
	d->paused = true;
	set_state(d, CTL_PAUSED, "paused by request");
}

int device_resume(struct device *d)
{
	struct sched_info si;
	int r;

	/* After a reset the device is back on its original scheduler. */
	r = kyber_sysfs_read_scheduler(d->m->o.sysroot, d->dev.name, &si);
	if (r < 0)
		return r;
	if (strcmp(si.current, "kyber") != 0) {
		if (!d->m->o.switch_scheduler || d->goal.mode == GOAL_MODE_ADVISE)
			return -EINVAL;
		r = kyber_sysfs_set_scheduler(d->m->o.sysroot, d->dev.name, "kyber");
		if (r < 0)
			return r;
	}
	/* Take whatever is there now as the starting point. */
	r = kyber_sysfs_read_targets(d->m->o.sysroot, d->dev.name, &d->written);
	if (r < 0)
		return r;
	d->overridden = d->paused = false;
	controller_relearn(d->ctl);
	set_state(d, d->goal.mode == GOAL_MODE_ADVISE ? CTL_ADVISE : CTL_LEARNING, "resumed");
	return 0;
}

int device_reset(struct device *d)
{
	int r;

	d->overridden = false;
	r = kyber_sysfs_restore(d->m->o.sysroot, d->dev.name, &d->original);
	if (r < 0)
		return r;
	/* Back on the originals: tuning again starts from Kyber afresh. */
	controller_init(d->ctl, &d->goal, NULL);
	d->paused = true;
	set_state(d, CTL_PAUSED, "reset: original scheduler and targets restored");
	return 0;
}
