/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "blockdev.h"
#include "error.h"
#include "kyber-sysfs.h"
#include "log.h"
#include "measure.h"
#include "observe.h"
#include "report.h"
#include "time-util.h"

struct observed {
	struct blockdev dev;
	struct measure ms;
};

struct observe_ctx {
	const struct observe_options *opts;
	struct observer *observer;
	struct observed *devs;
	size_t n_devs;
	uint64_t intervals;
	sd_event *event;
	struct host_cpu_time host;	/* the host's CPU time at the last tick */
};

/* Events the kernel skipped because the same program was already running
 * on that CPU (an interrupt nested in it): lost samples. */
static uint64_t bpf_misses(struct observe_ctx *c)
{
	struct observer_prog_stats ps[16];
	uint64_t sum = 0;
	int n;

	n = observer_prog_stats(c->observer, ps, ELEMENTSOF(ps));
	for (int i = 0; i < MIN(n, (int)ELEMENTSOF(ps)); i++)
		sum += ps[i].recursion_misses;
	return sum;
}

static void report_device(struct observe_ctx *c, struct observed *d)
{
	struct report_device rd = { .name = d->dev.name, .iv = d->ms.iv };
	struct measure_where w = {
		.sysroot = c->opts->sysroot, .debugfs = c->opts->debugfs, .name = d->dev.name,
		.track_requests = c->opts->track_requests, .host = &c->host,
	};
	struct sched_info si;
	int r;

	if (kyber_sysfs_read_scheduler(c->opts->sysroot, d->dev.name, &si) == 0) {
		rd.scheduler = si.current;
		w.scheduler = si.current;
		if (strcmp(si.current, "kyber") == 0)
			rd.has_targets = kyber_sysfs_read_targets(c->opts->sysroot, d->dev.name,
								 &rd.targets) == 0;
	}
	r = measure_step(&d->ms, c->observer, &w);
	if (r < 0) {
		log_warning_errno(r, "Failed to read the counters of %s: %m", d->dev.name);
		return;
	}
	rd.realtime_ns = now_ns(CLOCK_REALTIME);
	rd.bpf_misses = bpf_misses(c);
	if (c->opts->json)
		report_json(stdout, &rd);
	else
		report_text(stdout, &rd);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct observe_ctx *c = userdata;
	int r;

	measure_read_host(&c->host);
	for (size_t i = 0; i < c->n_devs; i++)
		report_device(c, &c->devs[i]);
	fflush(stdout);
	if (c->opts->count && ++c->intervals >= c->opts->count)
		return sd_event_exit(sd_event_source_get_event(s), 0);
	/* Scheduled from the previous deadline, not from now: no drift. */
	r = sd_event_source_set_time(s, usec + c->opts->interval_ns / 1000);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static void ctx_done(struct observe_ctx *c)
{
	for (size_t i = 0; i < c->n_devs; i++)
		measure_stop(&c->devs[i].ms, c->observer);
	free(c->devs);
	observer_free(c->observer);
	sd_event_unref(c->event);
}

/* Every device resolved before anything is loaded: a typo fails fast. */
static int resolve_devices(struct observe_ctx *c)
{
	const struct observe_options *opts = c->opts;

	for (size_t i = 0; i < opts->n_devices; i++) {
		_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
		struct observed *d = &c->devs[c->n_devs];
		int r;

		r = blockdev_resolve(opts->sysroot, opts->devices[i], &d->dev, &error);
		if (r < 0) {
			log_error("%s", error_message(&error, r));
			return r;
		}
		r = blockdev_check_kyber(opts->sysroot, &d->dev, &error);
		if (r < 0)
			log_warning("%s; observing latencies only", error_message(&error, r));
		c->n_devs++;
	}
	return 0;
}

static int watch_devices(struct observe_ctx *c)
{
	const struct observe_options *opts = c->opts;

	measure_read_host(&c->host);
	for (size_t i = 0; i < c->n_devs; i++) {
		struct observed *d = &c->devs[i];
		struct measure_where w = {
			.sysroot = opts->sysroot, .name = d->dev.name, .track_requests = opts->track_requests,
			.host = &c->host,
		};
		struct sched_info si;
		int r;

		if (kyber_sysfs_read_scheduler(opts->sysroot, d->dev.name, &si) == 0)
			w.scheduler = si.current;
		r = measure_start(&d->ms, c->observer, d->dev.kdev, &w);
		if (r == -EEXIST)
			return log_error_errno(r, "%s is given twice", d->dev.name);
		if (r < 0)
			return log_error_errno(r, "Failed to watch %s: %m", d->dev.name);
	}
	return 0;
}

int observe_run(const struct observe_options *opts)
{
	struct observe_ctx c = { .opts = opts };
	sigset_t ss;
	uint64_t now;
	int r;

	c.devs = calloc(opts->n_devices, sizeof(*c.devs));
	if (!c.devs)
		return log_error_errno(-ENOMEM, "Out of memory");
	r = resolve_devices(&c);
	if (r < 0)
		goto out;
	r = observer_new(&c.observer, opts->attach, (unsigned)opts->n_devices);
	if (r < 0)
		goto out;
	log_debug("BPF observer attached via %s%s", observer_attach_to_string(observer_attach_mode(c.observer)),
		  observer_has_kyber_view(c.observer) ? "" : " (no Kyber tracepoints)");
	r = watch_devices(&c);
	if (r < 0)
		goto out;

	r = sd_event_new(&c.event);
	if (r < 0) {
		log_error_errno(r, "Failed to allocate the event loop: %m");
		goto out;
	}
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	/* A NULL handler makes sd-event leave the loop on the signal. */
	(void)sd_event_add_signal(c.event, NULL, SIGINT, NULL, NULL);
	(void)sd_event_add_signal(c.event, NULL, SIGTERM, NULL, NULL);
	sd_event_now(c.event, CLOCK_MONOTONIC, &now);
	r = sd_event_add_time(c.event, NULL, CLOCK_MONOTONIC, now + opts->interval_ns / 1000,
			      1000 /* 1 ms accuracy */, on_tick, &c);
	if (r < 0) {
		log_error_errno(r, "Failed to add the interval timer: %m");
		goto out;
	}
	if (!opts->json)
		report_text_header(stdout);
	fflush(stdout);
	/* Attached and watching: tests and units wait for this. */
	(void)sd_notify(0, "READY=1");
	r = sd_event_loop(c.event);
	if (r < 0)
		log_error_errno(r, "Event loop failed: %m");
out:
	ctx_done(&c);
	return r < 0 ? r : 0;
}
