/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "blockdev.h"
#include "controller.h"
#include "kyber-sysfs.h"
#include "log.h"
#include "parse-util.h"
#include "report.h"
#include "tuner.h"

struct tuner;

struct tuned {
	struct tuner *t;
	struct blockdev dev;
	struct goal goal;
	unsigned slot;
	bool watching;
	struct controller *ctl;
	struct kyber_saved original;	/* for rollback */
	bool saved;
	struct kyber_targets written;	/* what sysfs holds as far as we know */
	enum ctl_state state;
	bool overridden;
	char why_overridden[160];
	struct kt_snapshot *base, *cur;
	struct kt_interval *iv;
	sd_event_source *settle;
	bool pulse_pending;		/* final targets to write when settle fires */
	struct kyber_targets after_pulse;
	uint64_t changes;
};

struct tuner {
	const struct tuner_options *opts;
	struct observer *observer;
	struct tuned *devs;
	size_t n_devs;
	sd_event *event;
	uint64_t intervals;
};

int tuner_parse_device_goal(const char *arg, struct tuner_device_spec *out, char *err, size_t errlen)
{
	const char *colon = arg ? strrchr(arg, ':') : NULL;	/* /dev/disk/by-path names hold colons */

	if (!colon || colon == arg) {
		snprintf(err, errlen, "Invalid --goal '%.64s': expected DEV:GOAL, e.g. nvme0n1:read-p99=100us",
			 arg ?: "");
		return -EINVAL;
	}
	out->device = arg;	/* the caller copies the name part out */
	return goal_parse(colon + 1, &out->goal, err, errlen);
}

static void format_targets(char *buf, size_t n, const struct kyber_targets *t)
{
	char r[DURATION_BUF_MAX], w[DURATION_BUF_MAX];

	snprintf(buf, n, "%s/%s", format_duration(r, sizeof(r), t->read_ns),
		 format_duration(w, sizeof(w), t->write_ns));
}

/* "read P99 12.1ms (goal 2.00ms) device P90 9.10ms 4.51k IOPS; write ..." */
static void format_observed(char *buf, size_t n, const struct tuned *d, const struct ctl_sample *s,
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

static int on_settled(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct tuned *d = userdata;
	int r;

	if (d->pulse_pending) {
		/* End of a growth pulse: the holding targets go in now. */
		d->pulse_pending = false;
		if (!d->overridden) {
			r = kyber_sysfs_write_targets(d->t->opts->sysroot, d->dev.name, &d->after_pulse);
			if (r < 0)
				log_warning_errno(r, "%s: failed to write targets: %m", d->dev.name);
			else
				d->written = d->after_pulse;
		}
	}
	/* The first Kyber window after a change mixes old and new buckets:
	 * start the next interval here. */
	if (observer_snapshot(d->t->observer, d->slot, d->base) < 0)
		log_warning("%s: failed to read counters after a change", d->dev.name);
	d->settle = sd_event_source_disable_unref(d->settle);
	return 0;
}

static void set_state(struct tuned *d, enum ctl_state st, const char *reason)
{
	if (st == d->state)
		return;
	log_info("%s: %s -> %s: %s", d->dev.name, ctl_state_to_string(d->state), ctl_state_to_string(st), reason);
	d->state = st;
}

/* Someone else wrote the scheduler or a target: hands off until resumed. */
static bool check_override(struct tuned *d)
{
	const char *root = d->t->opts->sysroot;
	struct kyber_targets now;
	struct sched_info si;

	if (d->overridden)
		return true;
	if (kyber_sysfs_read_scheduler(root, d->dev.name, &si) == 0 && strcmp(si.current, "kyber") != 0)
		snprintf(d->why_overridden, sizeof(d->why_overridden),
			 "scheduler changed to %s by someone else", si.current);
	else if (kyber_sysfs_read_targets(root, d->dev.name, &now) == 0 &&
		 (now.read_ns != d->written.read_ns || now.write_ns != d->written.write_ns))
		snprintf(d->why_overridden, sizeof(d->why_overridden),
			 "targets changed from %llu/%llu to %llu/%llu ns by someone else",
			 (unsigned long long)d->written.read_ns, (unsigned long long)d->written.write_ns,
			 (unsigned long long)now.read_ns, (unsigned long long)now.write_ns);
	else
		return false;
	d->overridden = true;
	set_state(d, CTL_OVERRIDDEN, d->why_overridden);
	log_notice("%s: %s; not touching it until resumed (SIGUSR1)", d->dev.name, d->why_overridden);
	return true;
}

static void report(struct tuned *d, const struct ctl_decision *dec, bool changed)
{
	char goal[GOAL_TEXT_MAX];
	struct report_tuner rt = {
		.goal = goal_format(&d->goal, goal, sizeof(goal)),
		.state = ctl_state_to_string(d->state),
		.reason = d->overridden ? d->why_overridden : dec->reason,
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

static bool apply(struct tuned *d, const struct ctl_sample *s, const struct ctl_decision *dec)
{
	char old[48], new[48], obs[320];
	uint64_t now;
	int r;

	format_observed(obs, sizeof(obs), d, s, dec);
	format_targets(old, sizeof(old), &d->written);
	if (!dec->write) {
		log_debug("%s: [%s] targets %s; %s; %s", d->dev.name, ctl_state_to_string(dec->state),
			  old, obs, dec->reason);
		if (dec->state == CTL_ADVISE && (dec->targets.read_ns != d->written.read_ns ||
						 dec->targets.write_ns != d->written.write_ns)) {
			format_targets(new, sizeof(new), &dec->targets);
			log_info("%s: advise: would set targets %s -> %s; %s; %s", d->dev.name, old, new,
				 obs, dec->reason);
		}
		return false;
	}
	r = kyber_sysfs_write_targets(d->t->opts->sysroot, d->dev.name,
				      dec->pulse ? &dec->pulse_targets : &dec->targets);
	if (r < 0) {
		log_warning_errno(r, "%s: failed to write targets: %m", d->dev.name);
		return false;
	}
	format_targets(new, sizeof(new), &dec->targets);
	if (dec->pulse) {
		char p[48];

		format_targets(p, sizeof(p), &dec->pulse_targets);
		log_info("%s: targets %s -> %s for %llu ms, then %s; %s; %s", d->dev.name, old, p,
			 (unsigned long long)(d->t->opts->settle_ns / 1000000), new, obs, dec->reason);
		d->written = dec->pulse_targets;
		d->after_pulse = dec->targets;
		d->pulse_pending = true;
	} else {
		log_info("%s: targets %s -> %s; %s; %s", d->dev.name, old, new, obs, dec->reason);
		d->written = dec->targets;
	}
	d->changes++;
	sd_event_now(d->t->event, CLOCK_MONOTONIC, &now);
	d->settle = sd_event_source_disable_unref(d->settle);
	if (sd_event_add_time(d->t->event, &d->settle, CLOCK_MONOTONIC,
			      now + d->t->opts->settle_ns / 1000, 1000, on_settled, d) < 0)
		log_warning("%s: failed to arm the settle timer", d->dev.name);
	return true;
}

static void fill_depths(const struct tuner *t, const struct tuned *d, struct kt_interval *iv)
{
	for (int op = 0; op < KT_OP_MAX; op++) {
		unsigned depth;

		if (kyber_debugfs_read_depth(t->opts->debugfs, d->dev.name, kt_op_name[op], &depth) == 0)
			iv->kyber_depth[op] = depth;
	}
}

static void step_device(struct tuner *t, struct tuned *d)
{
	struct ctl_decision dec = {};
	struct ctl_sample s;
	struct kt_snapshot *x;
	unsigned inflight;
	bool changed;

	if (d->settle)
		return;	/* a change is settling: this interval is not clean */
	if (observer_snapshot(t->observer, d->slot, d->cur) < 0 ||
	    interval_compute(d->base, d->cur, d->iv) < 0) {
		log_warning("%s: failed to read counters", d->dev.name);
		return;
	}
	x = d->base;
	d->base = d->cur;
	d->cur = x;
	if (blockdev_read_inflight(t->opts->sysroot, d->dev.name, &inflight) == 0)
		(void)observer_expire_lost(t->observer, d->slot, d->iv, inflight);
	if (d->iv->reset)
		return;
	fill_depths(t, d, d->iv);
	if (check_override(d)) {
		if (t->opts->json)
			report(d, &dec, false);
		return;
	}
	ctl_sample_from_interval(d->iv, &s);
	controller_decide(d->ctl, &s, &d->written, &dec);
	changed = apply(d, &s, &dec);
	set_state(d, dec.state, dec.reason);
	if (t->opts->json)
		report(d, &dec, changed);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct tuner *t = userdata;
	int r;

	for (size_t i = 0; i < t->n_devs; i++)
		step_device(t, &t->devs[i]);
	if (t->opts->count && ++t->intervals >= t->opts->count)
		return sd_event_exit(t->event, 0);
	r = sd_event_source_set_time(s, usec + t->opts->interval_ns / 1000);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_resume(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct tuner *t = userdata;

	for (size_t i = 0; i < t->n_devs; i++) {
		struct tuned *d = &t->devs[i];

		if (!d->overridden)
			continue;
		/* Take whatever is there now as the starting point. */
		if (kyber_sysfs_read_targets(t->opts->sysroot, d->dev.name, &d->written) < 0) {
			log_warning("%s: cannot resume: not on Kyber", d->dev.name);
			continue;
		}
		d->overridden = false;
		controller_relearn(d->ctl);
		set_state(d, CTL_LEARNING, "resumed");
	}
	return 0;
}

/* Resolve, save the originals, switch to Kyber where asked. */
static int prepare_device(struct tuner *t, const struct tuner_device_spec *spec, struct tuned *d)
{
	const struct tuner_options *o = t->opts;
	char err[512], name[64], tg[48];
	const char *colon = strrchr(spec->device, ':');
	size_t n = colon ? (size_t)(colon - spec->device) : strlen(spec->device);
	int r;

	snprintf(name, sizeof(name), "%.*s", (int)MIN(n, sizeof(name) - 1), spec->device);
	r = blockdev_resolve(o->sysroot, name, &d->dev, err, sizeof(err));
	if (r < 0 || (r = blockdev_check_kyber(o->sysroot, &d->dev, err, sizeof(err))) < 0)
		return log_error_errno(r, "%s", err);
	for (struct tuned *p = t->devs; p < d; p++)
		if (p->dev.kdev == d->dev.kdev)
			return log_error_errno(-EEXIST, "%s has two goals", d->dev.name);
	d->t = t;
	d->goal = spec->goal;
	d->state = CTL_LEARNING;
	d->ctl = calloc(1, sizeof(*d->ctl));
	d->base = calloc(1, sizeof(*d->base));
	d->cur = calloc(1, sizeof(*d->cur));
	d->iv = calloc(1, sizeof(*d->iv));
	if (!d->ctl || !d->base || !d->cur || !d->iv)
		return log_error_errno(-ENOMEM, "Out of memory");
	controller_init(d->ctl, &d->goal, NULL);

	r = kyber_sysfs_save(o->sysroot, d->dev.name, &d->original);
	if (r < 0)
		return log_error_errno(r, "%s: failed to read its scheduler and targets: %m", d->dev.name);
	d->saved = true;
	if (d->original.was_kyber && d->goal.mode != GOAL_MODE_ADVISE) {
		/*
		 * Kyber reports a domain's depth only when it changes it, and a
		 * depth is sticky: inherited throttling would be invisible and
		 * would hide the writes' unthrottled latency. Switching away and
		 * back starts from known depths (the caps); the original targets
		 * are restored on exit.
		 */
		r = kyber_sysfs_set_scheduler(o->sysroot, d->dev.name, "none");
		if (r >= 0)
			r = kyber_sysfs_set_scheduler(o->sysroot, d->dev.name, "kyber");
		if (r < 0)
			return log_error_errno(r, "%s: failed to restart Kyber: %m", d->dev.name);
		log_info("%s: restarted Kyber to start from known depths", d->dev.name);
	} else if (!d->original.was_kyber) {
		if (!o->switch_scheduler)
			return log_error_errno(-EINVAL, "%s uses scheduler %s, not Kyber (and switching "
					       "was disabled)", d->dev.name, d->original.scheduler);
		r = kyber_sysfs_set_scheduler(o->sysroot, d->dev.name, "kyber");
		if (r < 0)
			return log_error_errno(r, "%s: failed to switch to Kyber: %m", d->dev.name);
		log_info("%s: scheduler %s -> kyber", d->dev.name, d->original.scheduler);
	}
	r = kyber_sysfs_read_targets(o->sysroot, d->dev.name, &d->written);
	if (r < 0)
		return log_error_errno(r, "%s: failed to read Kyber's targets: %m", d->dev.name);
	goal_format(&d->goal, err, sizeof(err));
	format_targets(tg, sizeof(tg), &d->written);
	log_info("%s: tuning toward %s (targets now %s)", d->dev.name, err, tg);
	return 0;
}

static void restore_device(struct tuner *t, struct tuned *d)
{
	int r;

	if (!d->saved || !t->opts->rollback)
		return;
	if (d->overridden) {
		log_notice("%s: overridden by someone else: leaving it as it is", d->dev.name);
		return;
	}
	r = kyber_sysfs_restore(t->opts->sysroot, d->dev.name, &d->original);
	if (r < 0)
		log_error_errno(r, "%s: failed to restore scheduler %s: %m", d->dev.name, d->original.scheduler);
	else
		log_info("%s: restored scheduler %s%s", d->dev.name, d->original.scheduler,
			 d->original.was_kyber ? " and its targets" : "");
}

static void tuner_done(struct tuner *t)
{
	for (size_t i = 0; i < t->n_devs; i++) {
		struct tuned *d = &t->devs[i];

		restore_device(t, d);
		if (d->watching)
			(void)observer_unwatch(t->observer, d->slot);
		sd_event_source_disable_unref(d->settle);
		free(d->ctl);
		free(d->base);
		free(d->cur);
		free(d->iv);
	}
	free(t->devs);
	observer_free(t->observer);
	sd_event_unref(t->event);
}

int tuner_run(const struct tuner_options *opts)
{
	struct tuner t = { .opts = opts };
	char err[512];
	sigset_t ss;
	uint64_t now;
	int r = 0;

	t.devs = calloc(opts->n_devices, sizeof(*t.devs));
	if (!t.devs)
		return log_error_errno(-ENOMEM, "Out of memory");
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGUSR1);
	sigprocmask(SIG_BLOCK, &ss, NULL);

	for (size_t i = 0; i < opts->n_devices; i++) {
		r = prepare_device(&t, &opts->devices[i], &t.devs[i]);
		t.n_devs = i + 1;	/* restore what was prepared, even on failure */
		if (r < 0)
			goto out;
	}
	r = observer_new(&t.observer, opts->attach, (unsigned)t.n_devs, err, sizeof(err));
	if (r < 0) {
		log_error("%s", err);
		goto out;
	}
	for (size_t i = 0; i < t.n_devs; i++) {
		struct tuned *d = &t.devs[i];

		r = observer_watch(t.observer, d->dev.kdev, &d->slot);
		if (r < 0 || (r = observer_snapshot(t.observer, d->slot, d->base)) < 0) {
			log_error_errno(r, "%s: failed to watch: %m", d->dev.name);
			goto out;
		}
		d->watching = true;
	}

	r = sd_event_new(&t.event);
	if (r < 0) {
		log_error_errno(r, "Failed to allocate the event loop: %m");
		goto out;
	}
	(void)sd_event_add_signal(t.event, NULL, SIGINT, NULL, NULL);
	(void)sd_event_add_signal(t.event, NULL, SIGTERM, NULL, NULL);
	(void)sd_event_add_signal(t.event, NULL, SIGUSR1, on_resume, &t);
	sd_event_now(t.event, CLOCK_MONOTONIC, &now);
	r = sd_event_add_time(t.event, NULL, CLOCK_MONOTONIC, now + opts->interval_ns / 1000, 1000,
			      on_tick, &t);
	if (r < 0) {
		log_error_errno(r, "Failed to add the interval timer: %m");
		goto out;
	}
	(void)sd_notify(0, "READY=1");
	r = sd_event_loop(t.event);
	if (r < 0)
		log_error_errno(r, "Event loop failed: %m");
	(void)sd_notify(0, "STOPPING=1");
out:
	tuner_done(&t);
	return r < 0 ? r : 0;
}
