/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "log.h"
#include "macro.h"
#include "service.h"

int service_parse_device_goal(char *arg, struct service_goal *out, char *err, size_t errlen)
{
	char *colon = arg ? strrchr(arg, ':') : NULL;
	struct goal g;

	if (!colon || colon == arg || !colon[1]) {
		snprintf(err, errlen, "Invalid --goal '%.64s': expected DEV:GOAL, e.g. nvme0n1:read-p99=100us",
			 arg ? arg : "");
		return -EINVAL;
	}
	*colon = 0;
	out->device = arg;
	out->goal = colon + 1;
	/* Fail on the command line, not later in the loop. */
	return goal_parse(out->goal, &g, err, errlen);
}

static int on_resume(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	manager_resume_all(userdata);
	return 0;
}

int service_run(const struct service_options *o)
{
	struct manager *m = NULL;
	sd_event *event = NULL;
	char err[512];
	sigset_t ss;
	int r;

	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGUSR1);
	sigaddset(&ss, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss, NULL);

	r = sd_event_default(&event);
	if (r < 0)
		return log_error_errno(r, "Failed to allocate the event loop: %m");
	r = manager_new(&m, event, &o->manager, err, sizeof(err));
	if (r < 0) {
		log_error("%s", err);
		goto out;
	}
	for (size_t i = 0; i < o->n_goals; i++) {
		r = manager_set_goal(m, o->goals[i].device, o->goals[i].goal, err, sizeof(err));
		if (r < 0) {
			log_error("%s", err);
			goto out;
		}
	}
	if (!o->bus && manager_n_devices(m) == 0) {
		r = log_error_errno(-EINVAL, "Nothing to tune: no --goal and no D-Bus service");
		goto out;
	}
	(void)sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
	(void)sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
	(void)sd_event_add_signal(event, NULL, SIGUSR1, on_resume, m);
	/* Keeps the watchdog fed when the unit has WatchdogSec=. */
	(void)sd_event_set_watchdog(event, true);

	(void)sd_notify(0, "READY=1\nSTATUS=Tuning");
	r = sd_event_loop(event);
	if (r < 0)
		log_error_errno(r, "Event loop failed: %m");
	(void)sd_notify(0, "STOPPING=1\nSTATUS=Restoring the original settings");
out:
	manager_free(m);
	sd_event_unref(event);
	return r < 0 ? r : 0;
}
