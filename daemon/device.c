/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One tuned device: its state machine (learning, tracking, holding,
 * infeasible, overridden, advise, paused) driven by the manager's timer,
 * between the observer, the controller and sysfs.
 */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "device-internal.h"
#include "error.h"
#include "state.h"
#include "parse-util.h"
#include "record.h"
#include "report.h"

void device_format_targets(char *buf, size_t n, const struct kyber_targets *t)
{
	char r[DURATION_BUF_MAX], w[DURATION_BUF_MAX];

	snprintf(buf, n, "%s/%s", format_duration(r, sizeof(r), t->read_ns),
		 format_duration(w, sizeof(w), t->write_ns));
}

/* "read P99 12.1ms (goal 2.00ms) device P90 9.10ms 4.51k IOPS; write ...; host steal 0%";
 * without a read goal (mode=throughput), the interval's read P99. */
static void format_observed(char *buf, size_t n, const struct device *d, const struct ctl_sample *s,
			    const struct ctl_decision *dec)
{
	char a[DURATION_BUF_MAX], b[DURATION_BUF_MAX], c[DURATION_BUF_MAX], e[DURATION_BUF_MAX];
	char f[DURATION_BUF_MAX], ri[16], wi[16], rd[64];

	format_count_si(ri, sizeof(ri), s->read.iops);
	format_count_si(wi, sizeof(wi), s->write.iops);
	if (d->goal.has_read)
		snprintf(rd, sizeof(rd), "read P%g %s (goal %s)", d->goal.read_pct,
			 dec->goal_known ? format_duration(a, sizeof(a), dec->metric_ns) : "?",
			 format_duration(b, sizeof(b), d->goal.read_ns));
	else
		snprintf(rd, sizeof(rd), "read P99 %s",
			 format_duration(a, sizeof(a), s->read.total_p99_ns));
	snprintf(buf, n, "%s device P90 %s %s IOPS; write %s IOPS P99 %s device P90 %s; depth r=%u w=%u; "
		 "host steal %.0f%%",
		 rd, format_duration(c, sizeof(c), s->read.device_p90_ns), ri, wi,
		 format_duration(e, sizeof(e), s->write.total_p99_ns),
		 format_duration(f, sizeof(f), s->write.device_p90_ns),
		 s->read.kyber_depth, s->write.kyber_depth, 100 * s->host_steal);
}

void device_set_state(struct device *d, enum ctl_state st, const char *reason)
{
	if (st != d->state)
		log_dev_event(LOG_LEVEL_INFO, d->dev.name, LOG_MESSAGE_STATE_CHANGED, "%s -> %s: %s",
			      ctl_state_to_string(d->state), ctl_state_to_string(st), reason);
	d->state = st;
	snprintf(d->reason, sizeof(d->reason), "%s", reason);
}

int device_write_targets(struct device *d, const struct kyber_targets *t)
{
	int r = kyber_sysfs_write_targets(d->env.o->sysroot, d->dev.name, t);

	if (r < 0)
		return log_dev_warning_errno(d->dev.name, r, "failed to write targets: %m");
	d->written = *t;
	return 0;
}

static int on_settled(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct device *d = userdata;

	/* The first Kyber window after a change mixes old and new buckets:
	 * start the next interval here. */
	if (measure_restart(&d->ms, d->env.observer, d->env.host) < 0)
		log_dev_warning(d->dev.name, "failed to read counters after a change");
	d->settle = sd_event_source_disable_unref(d->settle);
	return 0;
}

/* Keeps the last scheduler read when sysfs cannot be read (the disk is
 * going away: device_present() tells). */
void device_refresh_scheduler(struct device *d)
{
	struct sched_info si;

	if (kyber_sysfs_read_scheduler(d->env.o->sysroot, d->dev.name, &si) == 0)
		memcpy(d->scheduler, si.current, sizeof(d->scheduler));
}

/* The journal fields of a target change: what was, what is, what was seen
 * and why (journalctl MESSAGE_ID=... -o verbose shows them). */
struct change_fields {
	char buf[11][360];
	const char *v[12];
};

static const char *const *change_fields(struct change_fields *f, const struct ctl_sample *s,
					const struct ctl_decision *dec, const struct kyber_targets *old,
					const struct kyber_targets *new)
{
	size_t n = 0;

#define FIELD(...) do { snprintf(f->buf[n], sizeof(f->buf[n]), __VA_ARGS__); f->v[n] = f->buf[n]; n++; } while (0)
	FIELD("KYBER_OLD_READ_TARGET_NSEC=%llu", (unsigned long long)old->read_ns);
	FIELD("KYBER_OLD_WRITE_TARGET_NSEC=%llu", (unsigned long long)old->write_ns);
	FIELD("KYBER_READ_TARGET_NSEC=%llu", (unsigned long long)new->read_ns);
	FIELD("KYBER_WRITE_TARGET_NSEC=%llu", (unsigned long long)new->write_ns);
	FIELD("KYBER_READ_P99_NSEC=%llu", (unsigned long long)s->read.total_p99_ns);
	FIELD("KYBER_WRITE_P99_NSEC=%llu", (unsigned long long)s->write.total_p99_ns);
	FIELD("KYBER_READ_IOPS=%.0f", s->read.iops);
	FIELD("KYBER_WRITE_IOPS=%.0f", s->write.iops);
	FIELD("KYBER_GOAL_METRIC_NSEC=%llu", (unsigned long long)dec->metric_ns);
	FIELD("KYBER_STATE=%s", ctl_state_to_string(dec->state));
	FIELD("KYBER_REASON=%s", dec->reason);
#undef FIELD
	f->v[n] = NULL;
	return f->v;
}

void device_arm_settle(struct device *d)
{
	uint64_t now;

	sd_event_now(d->env.event, CLOCK_MONOTONIC, &now);
	d->settle = sd_event_source_disable_unref(d->settle);
	if (sd_event_add_time(d->env.event, &d->settle, CLOCK_MONOTONIC,
			      now + d->env.o->settle_ns / 1000, 1000,
			      on_settled, d) < 0)
		log_dev_warning(d->dev.name, "failed to arm the settle timer");
}

bool device_apply(struct device *d, const struct ctl_sample *s, const struct ctl_decision *dec)
{
	const struct manager_callbacks *cb = d->env.cb;
	char old[48], new[48], obs[320];
	struct kyber_targets before = d->written;
	struct change_fields fields;

	format_observed(obs, sizeof(obs), d, s, dec);
	device_format_targets(old, sizeof(old), &d->written);
	device_format_targets(new, sizeof(new), &dec->targets);
	if (!dec->write) {
		log_dev_debug(d->dev.name, "[%s] targets %s; %s; %s", ctl_state_to_string(dec->state),
			  old, obs, dec->reason);
		if (dec->state == CTL_ADVISE && (dec->targets.read_ns != d->written.read_ns ||
						 dec->targets.write_ns != d->written.write_ns))
			log_dev_info(d->dev.name, "advise: would set targets %s -> %s; %s; %s", old, new,
				 obs, dec->reason);
		return false;
	}
	if ((dec->pulse_write_ns ? device_pulse_start(d, dec) : device_write_targets(d, &dec->targets)) < 0)
		return false;
	log_dev_event_fields(LOG_LEVEL_INFO, d->dev.name, LOG_MESSAGE_TARGETS_CHANGED,
			     change_fields(&fields, s, dec, &before, &dec->targets),
			     "targets %s -> %s; %s; %s", old, new, obs, dec->reason);
	d->changes++;
	device_arm_settle(d);
	if (cb->targets_changed)
		cb->targets_changed(d, &before, &dec->targets, dec->reason, cb->userdata);
	return true;
}

/* Where the device's measurement reads, with the scheduler it runs now. */
static struct measure_where where_of(const struct device *d)
{
	return (struct measure_where){
		.sysroot = d->env.o->sysroot, .debugfs = d->env.o->debugfs, .name = d->dev.name,
		.scheduler = d->scheduler[0] ? d->scheduler : NULL, .host = d->env.host,
	};
}

/* The tuner's part of an interval: measure, decide, apply, report. */
static void tune_step(struct device *d)
{
	const struct manager_callbacks *cb = d->env.cb;
	struct measure_where w;
	struct ctl_sample s;
	bool changed = false;

	device_refresh_scheduler(d);
	d->interval_ios = 0;
	if (d->settle || device_pulse_active(d))
		return;	/* a change is settling: this interval is not clean */
	w = where_of(d);
	if (measure_step(&d->ms, d->env.observer, &w) < 0) {
		log_dev_warning(d->dev.name, "failed to read counters");
		return;
	}
	if (d->ms.iv->reset)
		return;
	d->have_interval = true;
	for (unsigned op = 0; op < KT_OP_MAX; op++)
		d->interval_ios += d->ms.iv->op[op].completed;
	memset(&d->last, 0, sizeof(d->last));
	if (!d->paused && !device_check_override(d)) {
		ctl_sample_from_interval(d->ms.iv, &s);
		if (d->sched.run == SCHED_RUN_KYBER) {
			controller_decide(d->ctl, &s, &d->written, &d->last);
			changed = device_apply(d, &s, &d->last);
		} else
			controller_observe(d->ctl, &s, &d->last);
		device_set_state(d, d->last.state, d->last.reason);
		device_profile_learn(d);
		changed |= device_sched_step(d, &s);
		if (d->last.goal_known && !d->last.goal_met && cb->goal_violated)
			cb->goal_violated(d, d->last.metric_ns, d->goal.read_ns, cb->userdata);
	}
	device_note_left(d);
	if (d->env.o->json)
		device_report_json(d, changed);
	if (d->env.recorder)
		device_record_interval(d, changed);
	if (cb->interval)
		cb->interval(d, cb->userdata);
}

void device_step(struct device *d)
{
	tune_step(d);
	device_share_step(d);
}

/*
 * Kyber reports a domain's depth only when it changes it, and a depth is
 * sticky: inherited throttling would be invisible and would hide the
 * writes' unthrottled latency. Switching away and back starts from known
 * depths (the caps); the originals are restored on exit.
 */
static int start_kyber(struct device *d, sd_bus_error *error)
{
	const struct manager_options *o = d->env.o;
	int r;

	if (d->original.was_kyber) {
		if (d->goal.mode == GOAL_MODE_ADVISE)
			return 0;	/* advise touches nothing */
		r = kyber_sysfs_set_scheduler(o->sysroot, d->dev.name, "none");
		if (r >= 0)
			r = kyber_sysfs_set_scheduler(o->sysroot, d->dev.name, "kyber");
		if (r < 0)
			return error_setf(error, r, "Failed to restart Kyber on %s: %s", d->dev.name,
					  strerror(-r));
		log_dev_info(d->dev.name, "restarted Kyber to start from known depths");
		return 0;
	}
	if (!o->switch_scheduler || d->goal.mode == GOAL_MODE_ADVISE)
		return error_setf(error, -EINVAL, "%s uses scheduler %s, not Kyber, and switching is %s",
				  d->dev.name, d->original.scheduler,
				  d->goal.mode == GOAL_MODE_ADVISE ? "not done in mode=advise" : "disabled");
	r = kyber_sysfs_set_scheduler(o->sysroot, d->dev.name, "kyber");
	if (r < 0)
		return error_setf(error, r, "Failed to switch %s to Kyber: %s", d->dev.name, strerror(-r));
	log_dev_info(d->dev.name, "scheduler %s -> kyber", d->original.scheduler);
	return 0;
}

/* What sysfs holds, as the originals, recorded before anything changes. */
static int record_original(struct device *d, sd_bus_error *error)
{
	struct original e;
	int r;

	r = kyber_sysfs_save(d->env.o->sysroot, d->dev.name, &d->original);
	if (r < 0)
		return error_setf(error, r, "Failed to read the scheduler and targets of %s: %s",
				  d->dev.name, strerror(-r));
	d->saved = true;
	e = (struct original) {
		.id = d->id, .name = d->dev.name, .scheduler = d->original.scheduler,
		.was_kyber = d->original.was_kyber, .read_target_ns = d->original.targets.read_ns,
		.write_target_ns = d->original.targets.write_ns,
	};
	if (originals_put(d->env.originals, &e) == 0)
		d->env.save_originals(d->env.owner);
	return 0;
}

/*
 * The original scheduler and targets: what a previous instance recorded
 * if it was tuning this device when it died (sysfs holds its tuning now),
 * else what sysfs holds. Recorded in the runtime directory before anything
 * changes, so that a crash cannot lose them.
 */
static int save_original(struct device *d, sd_bus_error *error)
{
	struct original *prev = originals_find(d->env.originals, d->id);
	char why[160];

	if (prev && original_changed(d->env.o->sysroot, d->dev.name, prev, why, sizeof(why))) {
		/* Changed by hand while no instance ran: that is the device's
		 * setting now, and the one to go back to. */
		log_dev_notice(d->dev.name, "changed by someone else since the previous instance stopped (%s): "
			       "its settings now are its originals", why);
		originals_remove(d->env.originals, d->id);
		prev = NULL;
		d->overridden = true;
	}
	if (prev) {
		memset(&d->original, 0, sizeof(d->original));
		snprintf(d->original.scheduler, sizeof(d->original.scheduler), "%s", prev->scheduler);
		d->original.was_kyber = prev->was_kyber;
		d->original.targets.read_ns = prev->read_target_ns;
		d->original.targets.write_ns = prev->write_target_ns;
		log_dev_info(d->dev.name, "was tuned by a previous instance; its originals are scheduler %s",
			 prev->scheduler);
		d->saved = true;
		return 0;
	}
	return record_original(d, error);
}

/* Changed by hand while paused or reset: what sysfs holds now is what to
 * go back to from now on. */
static int retake_original(struct device *d, const char *why)
{
	int r = record_original(d, NULL);

	if (r < 0)
		return r;
	log_dev_notice(d->dev.name, "changed by someone else while not tuned (%s): scheduler %s is its "
		       "original from now on", why, d->original.scheduler);
	return 0;
}

int device_new(const struct device_env *env, const struct blockdev *bd, const struct goal *g,
	       enum goal_source source, struct device **ret, sd_bus_error *error)
{
	const struct manager_options *o = env->o;
	char goal[GOAL_TEXT_MAX], tg[48];
	struct measure_where w;
	struct device *d;
	int r;

	r = blockdev_check_kyber(o->sysroot, bd, error);
	if (r < 0)
		return r;
	d = calloc(1, sizeof(*d));
	if (!d)
		return error_setf(error, -ENOMEM, "Out of memory");
	d->env = *env;
	d->dev = *bd;
	d->goal = *g;
	d->source = source;
	d->state = CTL_LEARNING;
	snprintf(d->reason, sizeof(d->reason), "starting");
	blockdev_stable_id(o->sysroot, bd, d->id, sizeof(d->id));
	blockdev_model(o->sysroot, bd->name, d->model, sizeof(d->model), d->firmware, sizeof(d->firmware));
	d->ctl = calloc(1, sizeof(*d->ctl));
	if (!d->ctl) {
		r = error_setf(error, -ENOMEM, "Out of memory");
		goto fail;
	}
	controller_init(d->ctl, &d->goal);

	r = save_original(d, error);
	if (r < 0)
		goto fail;
	device_sched_choose(d);
	if (d->overridden)
		d->sched.run = strcmp(d->original.scheduler, "kyber") == 0 ? SCHED_RUN_KYBER : SCHED_RUN_ORIGINAL;
	r = d->sched.run == SCHED_RUN_KYBER && !d->overridden ? start_kyber(d, error) : 0;
	device_refresh_scheduler(d);
	if (r < 0)
		goto fail;
	r = d->sched.run == SCHED_RUN_KYBER ? kyber_sysfs_read_targets(o->sysroot, d->dev.name, &d->written) : 0;
	if (r < 0) {
		error_setf(error, r, "Failed to read Kyber's targets of %s: %s", d->dev.name, strerror(-r));
		goto fail;
	}
	if (d->sched.run == SCHED_RUN_KYBER && !d->overridden && g->mode != GOAL_MODE_ADVISE)
		device_profile_seed(d);
	w = where_of(d);
	r = measure_start(&d->ms, env->observer, d->dev.kdev, &w);
	if (r < 0) {
		error_setf(error, r, "Failed to watch %s: %s", d->dev.name,
			   r == -ENOSPC ? "all observer slots are in use (MaxDevices)" : strerror(-r));
		goto fail;
	}
	if (g->mode == GOAL_MODE_ADVISE)
		device_set_state(d, CTL_ADVISE, "mode=advise: decisions are reported, nothing is written");
	if (d->overridden)
		device_mark_overridden(d, "changed by someone else while kyber-tuned was not running");
	else
		device_note_left(d);
	device_format_targets(tg, sizeof(tg), &d->written);
	if (d->sched.run == SCHED_RUN_KYBER)
		log_dev_info(d->dev.name, "tuning toward %s (targets now %s)", goal_format(g, goal, sizeof(goal)),
			     tg);
	else
		log_dev_info(d->dev.name, "tuning toward %s, on %s while Kyber buys nothing",
			     goal_format(g, goal, sizeof(goal)), d->scheduler);
	*ret = d;
	return 0;
fail:
	device_free(d);
	return r;
}

bool device_present(struct device *d, char *why, size_t n)
{
	struct blockdev now;

	if (blockdev_resolve(d->env.o->sysroot, d->dev.name, &now, NULL) < 0 || now.kdev != d->dev.kdev)
		snprintf(why, n, "the disk went away");
	else if (!blockdev_has_medium(d->env.o->sysroot, d->dev.name)) {
		/* Still its queue, which keeps the scheduler for whatever disk
		 * comes next: put back what it had (not gone). */
		snprintf(why, n, "its medium went away (size 0: a loop device detached, a drive emptied)");
		return false;
	} else if (now.diskseq != d->dev.diskseq)
		/* A loop device detached and attached to another file, a disk
		 * swapped: what was saved and learned is the old disk's. */
		snprintf(why, n, "another disk took its name (diskseq %llu -> %llu)",
			 (unsigned long long)d->dev.diskseq, (unsigned long long)now.diskseq);
	else
		return true;
	d->gone = true;
	return false;
}

static void restore(struct device *d)
{
	char why[160];
	int r;

	if (!d->saved)
		return;
	d->saved = false;	/* once: device_release() and then device_free() */
	/* Stopping cleanly: whatever happens next, no later instance should
	 * restore this device for us. */
	originals_remove(d->env.originals, d->id);
	d->env.save_originals(d->env.owner);
	if (!d->env.o->rollback || d->goal.mode == GOAL_MODE_ADVISE || d->gone)
		return;
	if (d->overridden) {
		log_dev_notice(d->dev.name, "overridden by someone else: leaving it as it is");
		return;
	}
	if (!device_as_left(d, why, sizeof(why))) {
		log_dev_notice(d->dev.name, "changed by someone else (%s): leaving it as it is", why);
		return;
	}
	r = kyber_sysfs_restore(d->env.o->sysroot, d->dev.name, &d->original);
	device_refresh_scheduler(d);
	if (r < 0)
		log_dev_error_errno(d->dev.name, r, "failed to restore scheduler %s: %m", d->original.scheduler);
	else
		log_dev_event(LOG_LEVEL_INFO, d->dev.name, LOG_MESSAGE_RESTORED, "restored scheduler %s%s", d->original.scheduler,
			 d->original.was_kyber ? " and its targets" : "");
}

void device_release(struct device *d)
{
	device_pulse_stop(d);	/* its next write would undo the restore */
	/* Cgroup limits are put back whatever --no-rollback says: fixed,
	 * they would hold the cgroups to a share of a moment past. */
	device_share_free(d);
	restore(d);
}

struct device *device_free(struct device *d)
{
	if (!d)
		return NULL;
	device_release(d);
	measure_stop(&d->ms, d->env.observer);
	sd_event_source_disable_unref(d->settle);
	free(d->ctl);
	free(d);
	return NULL;
}

void device_set_goal(struct device *d, const struct goal *g, enum goal_source source)
{
	char goal[GOAL_TEXT_MAX];

	d->source = source;
	d->goal = *g;
	if (device_pulse_active(d)) {
		/* The old goal's probe: its hold is no decision of the new one. */
		device_pulse_stop(d);
		device_arm_settle(d);
	}
	controller_init(d->ctl, g);
	device_set_state(d, g->mode == GOAL_MODE_ADVISE ? CTL_ADVISE : CTL_LEARNING, "new goal");
	log_dev_info(d->dev.name, "goal now %s", goal_format(g, goal, sizeof(goal)));
	if (!d->paused && !d->overridden)
		(void)device_sched_adopt(d, NULL);	/* a failed switch is logged */
}

void device_pause(struct device *d)
{
	d->paused = true;
	device_pulse_stop(d);	/* paused: nothing more written */
	device_share_stop(d);
	device_set_state(d, CTL_PAUSED, "paused by request");
}

int device_resume(struct device *d)
{
	struct sched_info si;
	char why[160];
	int r;

	/* Changed by hand while kyber-tuned stood aside: that is what to go
	 * back to from now on. */
	if (!d->overridden && !device_as_left(d, why, sizeof(why))) {
		r = retake_original(d, why);
		if (r < 0)
			return r;
	}

	/* After a reset the device is back on its original scheduler. */
	r = kyber_sysfs_read_scheduler(d->env.o->sysroot, d->dev.name, &si);
	if (r < 0)
		return r;
	if (strcmp(si.current, "kyber") != 0 && (!d->env.o->switch_scheduler || d->goal.mode == GOAL_MODE_ADVISE))
		return -EINVAL;
	r = device_sched_adopt(d, NULL);
	if (r < 0)
		return r;
	/* Take whatever is there now as the starting point. */
	if (d->sched.run == SCHED_RUN_KYBER) {
		r = kyber_sysfs_read_targets(d->env.o->sysroot, d->dev.name, &d->written);
		if (r < 0)
			return r;
	}
	d->overridden = d->paused = d->restored = false;
	device_note_left(d);
	controller_relearn(d->ctl);
	device_set_state(d, d->goal.mode == GOAL_MODE_ADVISE ? CTL_ADVISE : CTL_LEARNING, "resumed");
	return 0;
}

int device_reset(struct device *d)
{
	int r;

	d->overridden = false;
	device_pulse_stop(d);	/* its next write would undo the restore */
	device_share_stop(d);
	r = kyber_sysfs_restore(d->env.o->sysroot, d->dev.name, &d->original);
	device_refresh_scheduler(d);
	if (r < 0)
		return r;
	/* Back on the originals: tuning again starts from Kyber afresh. */
	controller_init(d->ctl, &d->goal);
	d->paused = d->restored = true;
	device_note_left(d);
	device_set_state(d, CTL_PAUSED, "reset: original scheduler and targets restored");
	return 0;
}

const char *device_id(const struct device *d)
{
	return d->id;
}

uint32_t device_kdev(const struct device *d)
{
	return d->dev.kdev;
}

const struct goal *device_goal(const struct device *d)
{
	return &d->goal;
}

enum goal_source device_source(const struct device *d)
{
	return d->source;
}

bool device_overridden(const struct device *d)
{
	return d->overridden;
}

bool device_stopped(const struct device *d)
{
	return d->overridden || d->paused;
}
