/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kyber-tuned: command line entry point. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "conf.h"
#include "device-events.h"
#include "error.h"
#include "log.h"
#include "log-journal.h"
#include "macro.h"
#include "observe.h"
#include "parse-util.h"
#include "service.h"

#ifndef KT_VERSION
#define KT_VERSION "0.1"
#endif

static void help(void)
{
	printf("Usage: kyber-tuned [OPTIONS]\n"
	       "\n"
	       "Online auto-tuner for the Linux Kyber I/O scheduler.\n"
	       "\n"
	       "Modes:\n"
	       "  (default)                The service: tune the devices with goals, serve the\n"
	       "                           D-Bus API org.kybertune.KyberTune1 on the system bus\n"
	       "      --goal DEV:GOAL      Tune DEV toward GOAL (repeatable), e.g.\n"
	       "                           --goal nvme0n1:read-p99=100us. GOAL is\n"
	       "                           read-pNN=DURATION [write-iops-min=N]\n"
	       "                           [mode=latency|balanced|throughput|advise]\n"
	       "      --foreground         Tune the --goal devices without D-Bus\n"
	       "      --observe DEV        Print latency histograms of DEV (name or /dev path;\n"
	       "                           repeatable) once per interval, change nothing\n"
	       "\n"
	       "Options:\n"
	       "      --interval DURATION  Interval (default 1s; 10ms..1h; units ns us ms s)\n"
	       "      --settle DURATION    Data ignored after a target change (default 300ms)\n"
	       "      --no-rollback        Leave the targets as tuned on exit (default: restore\n"
	       "                           the original scheduler and targets)\n"
	       "      --no-switch-scheduler  Refuse devices not on Kyber (default: switch them to\n"
	       "                           Kyber and back on exit)\n"
	       "      --config FILE        Configuration, and the drop-ins in conf.d/*.conf beside\n"
	       "                           it (service default: " CONF_PATH "\n"
	       "                           and " CONF_DROPIN_DIR "/*.conf); --config= for none\n"
	       "      --state-dir DIR      Goals set at run time (service\n"
	       "                           default: $STATE_DIRECTORY or /var/lib/kyber-tuned)\n"
	       "      --runtime-dir DIR    Originals for crash recovery (service default:\n"
	       "                           $RUNTIME_DIRECTORY or /run/kyber-tuned)\n"
	       "      --record FILE        Flight recorder: one record per device and interval\n"
	       "      --record-max-size SIZE  FILE's size before it becomes FILE.1 (64M)\n"
	       "      --metrics-file PATH  Prometheus metrics, replaced every interval, for\n"
	       "                           node_exporter's textfile collector (absolute path)\n"
	       "      --profile-dir DIR    Per-model profiles: DIR alone instead of\n"
	       "                           /etc/kyber-tuned/profiles.d and\n"
	       "                           /usr/lib/kyber-tuned/profiles.d (\"\": none)\n"
	       "      --device-events SOURCE  Disks plugged and unplugged: auto (default: udev\n"
	       "                           where it runs, else the kernel's uevents), udev,\n"
	       "                           kernel, off\n"
	       "      --count N            --observe: stop after N intervals\n"
	       "      --json               One JSON object per device and interval on stdout\n"
	       "      --track-requests     --observe: time requests from their insert/issue\n"
	       "                           events even where the kernel's stamps would do\n"
	       "                           (a cross-check; costs more per I/O)\n"
	       "      --attach MODE        BPF attach type: auto (default), tp_btf, raw_tp\n"
	       "      --log-level LEVEL    err, warning, notice, info (default), debug\n"
	       "  -h, --help               Show this help\n"
	       "      --version            Show the version\n"
	       "\n"
	       "Signals: SIGINT/SIGTERM stop (and roll back), SIGUSR1 resumes devices that\n"
	       "were paused or that someone else changed (state overridden).\n"
	       "Needs root (CAP_BPF and CAP_PERFMON) and a kernel with BTF.\n"
	       "See kyber-tuned(8).\n");
}

enum {
	ARG_OBSERVE = 0x100,
	ARG_INTERVAL,
	ARG_COUNT,
	ARG_JSON,
	ARG_TRACK_REQUESTS,
	ARG_ATTACH,
	ARG_LOG_LEVEL,
	ARG_VERSION,
	ARG_FOREGROUND,
	ARG_GOAL,
	ARG_SETTLE,
	ARG_NO_ROLLBACK,
	ARG_NO_SWITCH,
	ARG_CONFIG,
	ARG_STATE_DIR,
	ARG_RUNTIME_DIR,
	ARG_RECORD,
	ARG_RECORD_MAX,
	ARG_DEVICE_EVENTS,
	ARG_METRICS_FILE,
	ARG_PROFILE_DIR,
};

/* The directory systemd made for us, else the default; created if needed. */
static const char *service_dir(const char *env, const char *fallback)
{
	const char *d = getenv(env);

	/* $STATE_DIRECTORY may list several, colon-separated: ours is first. */
	if (d && *d && !strchr(d, ':'))
		return d;
	return fallback;
}

static int ensure_dir(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return log_error_errno(negative_errno(), "Failed to create %s: %m", path);
	return 0;
}

static int parse_interval(const char *arg, uint64_t *ret)
{
	int r = parse_duration_ns(arg, 0, ret);

	if (r < 0 || *ret < 10 * NSEC_PER_MSEC || *ret > 3600 * NSEC_PER_SEC)
		return log_error_errno(-EINVAL, "Invalid --interval '%s': expected a duration from 10ms to "
				       "1h, with a unit (e.g. 500ms, 1s)", arg);
	return 0;
}

static const struct option options[] = {
	{ "observe", required_argument, NULL, ARG_OBSERVE },
	{ "interval", required_argument, NULL, ARG_INTERVAL },
	{ "count", required_argument, NULL, ARG_COUNT },
	{ "json", no_argument, NULL, ARG_JSON },
	{ "track-requests", no_argument, NULL, ARG_TRACK_REQUESTS },
	{ "attach", required_argument, NULL, ARG_ATTACH },
	{ "log-level", required_argument, NULL, ARG_LOG_LEVEL },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, ARG_VERSION },
	{ "foreground", no_argument, NULL, ARG_FOREGROUND },
	{ "goal", required_argument, NULL, ARG_GOAL },
	{ "settle", required_argument, NULL, ARG_SETTLE },
	{ "no-rollback", no_argument, NULL, ARG_NO_ROLLBACK },
	{ "no-switch-scheduler", no_argument, NULL, ARG_NO_SWITCH },
	{ "config", required_argument, NULL, ARG_CONFIG },
	{ "state-dir", required_argument, NULL, ARG_STATE_DIR },
	{ "runtime-dir", required_argument, NULL, ARG_RUNTIME_DIR },
	{ "record", required_argument, NULL, ARG_RECORD },
	{ "record-max-size", required_argument, NULL, ARG_RECORD_MAX },
	{ "device-events", required_argument, NULL, ARG_DEVICE_EVENTS },
	{ "metrics-file", required_argument, NULL, ARG_METRICS_FILE },
	{ "profile-dir", required_argument, NULL, ARG_PROFILE_DIR },
	{}
};

struct args {
	struct observe_options obs;
	struct service_options svc;
	bool config_given, state_given, runtime_given;
	char dropin_dir[PATH_MAX];
	char **devices;			/* --observe, argc entries */
	struct service_goal *goals;	/* --goal, argc entries */
};

/* --config FILE ("": none); its drop-ins sit beside it, as
 * /etc/kyber-tuned/conf.d does. */
static void set_config(struct args *a, const char *arg)
{
	const char *slash = strrchr(arg, '/');

	a->config_given = true;
	a->svc.config_path = *arg ? arg : NULL;
	a->svc.dropin_dir = NULL;
	if (!a->svc.config_path)
		return;
	snprintf(a->dropin_dir, sizeof(a->dropin_dir), "%.*s%sconf.d",
		 slash ? (int)(slash - arg) : 0, arg, slash ? "/" : "");
	a->svc.dropin_dir = a->dropin_dir;
}

static int parse_goal(char *arg, struct args *a)
{
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	int r;

	r = service_parse_device_goal(arg, &a->goals[a->svc.n_goals], &error);
	if (r < 0)
		return log_error_errno(r, "%s", error_message(&error, r));
	a->svc.n_goals++;
	return 0;
}

static int parse_settle(const char *arg, struct args *a)
{
	int r = parse_duration_ns(arg, 0, &a->svc.manager.settle_ns);

	if (r < 0 || a->svc.manager.settle_ns > 10 * NSEC_PER_SEC) {
		log_error("Invalid --settle '%s': expected a duration up to 10s, with a unit", arg);
		return -EINVAL;
	}
	a->svc.cli_set |= SERVICE_CLI_SETTLE;
	return 0;
}

/* --attach and --log-level: one of a list. */
static int parse_choice(int c, const char *arg, struct args *a)
{
	int r;

	if (c == ARG_ATTACH) {
		if (observer_attach_from_string(arg, &a->obs.attach) < 0) {
			log_error("Invalid --attach '%s': expected auto, tp_btf or raw_tp", arg);
			return -EINVAL;
		}
		a->svc.manager.attach = a->obs.attach;
		return 0;
	}
	r = log_level_from_string(arg);
	if (r < 0) {
		log_error("Invalid --log-level '%s': expected err, warning, notice, info or debug", arg);
		return -EINVAL;
	}
	log_set_max_level(r);
	a->svc.cli_set |= SERVICE_CLI_LOG_LEVEL;
	return 0;
}

/* A path option: absolute, or "" for none. */
static bool absolute_or_empty(const char *option, const char *arg)
{
	if (!*arg || arg[0] == '/')
		return true;
	log_error("Invalid %s '%s': the path must be absolute", option, arg);
	return false;
}

/* The options that name where the daemon keeps its files, and how large
 * its record grows: 0, or -EINVAL (logged). */
static int parse_file_option(int c, const char *arg, struct args *a)
{
	struct manager_options *mp = &a->svc.manager;

	switch (c) {
	case ARG_STATE_DIR:
		mp->state_dir = *arg ? arg : NULL;
		a->state_given = true;
		break;
	case ARG_RUNTIME_DIR:
		mp->runtime_dir = *arg ? arg : NULL;
		a->runtime_given = true;
		break;
	case ARG_RECORD:
		mp->record_path = *arg ? arg : NULL;
		a->svc.cli_set |= SERVICE_CLI_RECORD;
		break;
	case ARG_METRICS_FILE:
		if (!absolute_or_empty("--metrics-file", arg))
			return -EINVAL;
		mp->metrics_path = *arg ? arg : NULL;
		a->svc.cli_set |= SERVICE_CLI_METRICS;
		break;
	case ARG_PROFILE_DIR:
		if (!absolute_or_empty("--profile-dir", arg))
			return -EINVAL;
		mp->profile_dir = arg;
		break;
	default:	/* ARG_RECORD_MAX */
		if (conf_parse_record_size(arg, &mp->record_max_bytes) < 0) {
			log_error("Invalid --record-max-size '%s': a size in bytes between %llu and %llu "
				  "(k, M, G multiply by 1000)", arg, (unsigned long long)RECORD_SIZE_MIN,
				  (unsigned long long)RECORD_SIZE_MAX);
			return -EINVAL;
		}
		a->svc.cli_set |= SERVICE_CLI_RECORD_MAX;
		break;
	}
	return 0;
}

/* The options without an argument. */
static void set_flag(int c, struct args *a)
{
	switch (c) {
	case ARG_FOREGROUND:
		a->svc.bus = false;
		break;
	case ARG_NO_ROLLBACK:
		a->svc.manager.rollback = false;
		a->svc.cli_set |= SERVICE_CLI_ROLLBACK;
		break;
	case ARG_NO_SWITCH:
		a->svc.manager.switch_scheduler = false;
		a->svc.cli_set |= SERVICE_CLI_SWITCH;
		break;
	case ARG_JSON:
		a->obs.json = a->svc.manager.json = true;
		break;
	default:	/* ARG_TRACK_REQUESTS */
		a->obs.track_requests = true;
		break;
	}
}

/* 1: go on; 0: done (--help, --version); -EINVAL: bad usage (logged). */
static int parse_argv(int argc, char *argv[], struct args *a)
{
	int c;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (c) {
		case ARG_OBSERVE:
			a->devices[a->obs.n_devices++] = optarg;
			break;
		case ARG_INTERVAL:
			if (parse_interval(optarg, &a->obs.interval_ns) < 0)
				return -EINVAL;
			a->svc.manager.interval_ns = a->obs.interval_ns;
			a->svc.cli_set |= SERVICE_CLI_INTERVAL;
			break;
		case ARG_GOAL:
			if (parse_goal(optarg, a) < 0)
				return -EINVAL;
			break;
		case ARG_SETTLE:
			if (parse_settle(optarg, a) < 0)
				return -EINVAL;
			break;
		case ARG_CONFIG:
			set_config(a, optarg);
			break;
		case ARG_STATE_DIR:
		case ARG_RUNTIME_DIR:
		case ARG_RECORD:
		case ARG_METRICS_FILE:
		case ARG_PROFILE_DIR:
		case ARG_RECORD_MAX:
			if (parse_file_option(c, optarg, a) < 0)
				return -EINVAL;
			break;
		case ARG_DEVICE_EVENTS:
			if (device_events_source_from_string(optarg, &a->svc.device_events) < 0) {
				log_error("Invalid --device-events '%s': auto, udev, kernel or off", optarg);
				return -EINVAL;
			}
			break;
		case ARG_COUNT:
			if (parse_u64_strict(optarg, false, &a->obs.count) < 0 || a->obs.count == 0) {
				log_error("Invalid --count '%s': expected a positive integer", optarg);
				return -EINVAL;
			}
			break;
		case ARG_FOREGROUND:
		case ARG_NO_ROLLBACK:
		case ARG_NO_SWITCH:
		case ARG_JSON:
		case ARG_TRACK_REQUESTS:
			set_flag(c, a);
			break;
		case ARG_ATTACH:
		case ARG_LOG_LEVEL:
			if (parse_choice(c, optarg, a) < 0)
				return -EINVAL;
			break;
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("kyber-tuned %s\n", KT_VERSION);
			return 0;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		log_error("Unexpected argument '%s'; see --help", argv[optind]);
		return -EINVAL;
	}
	return 1;
}

/* Options that only make sense together, and where the service keeps its
 * files. -EINVAL: bad usage; other -errno: a file or directory (logged). */
static int finish_args(struct args *a)
{
	if (a->obs.n_devices && (a->svc.n_goals || !a->svc.bus)) {
		log_error("--observe excludes --goal and --foreground");
		return -EINVAL;
	}
	if (a->obs.n_devices && a->svc.manager.metrics_path) {
		log_error("--metrics-file needs the tuner: --observe writes none");
		return -EINVAL;
	}
	if (a->obs.track_requests && !a->obs.n_devices) {
		log_error("--track-requests needs --observe");
		return -EINVAL;
	}
	if (a->svc.manager.settle_ns >= a->svc.manager.interval_ns) {
		log_error("--settle must be shorter than --interval");
		return -EINVAL;
	}
	if (!a->svc.bus && !a->svc.n_goals && !a->svc.config_path) {
		log_error("--foreground needs a --goal DEV:GOAL or a --config FILE with goals");
		return -EINVAL;
	}
	/* A file named on the command line must be there; the default may not. */
	if (a->config_given && a->svc.config_path && access(a->svc.config_path, R_OK) < 0)
		return log_error_errno(-errno, "Failed to open %s: %m", a->svc.config_path);
	/* The service keeps its configuration and state where the system
	 * does; --foreground only what it is told to. */
	if (a->svc.bus) {
		if (!a->config_given) {
			a->svc.config_path = CONF_PATH;
			a->svc.dropin_dir = CONF_DROPIN_DIR;
		}
		if (!a->state_given)
			a->svc.manager.state_dir = service_dir("STATE_DIRECTORY", "/var/lib/kyber-tuned");
		if (!a->runtime_given)
			a->svc.manager.runtime_dir = service_dir("RUNTIME_DIRECTORY", "/run/kyber-tuned");
	}
	if ((a->svc.manager.state_dir && ensure_dir(a->svc.manager.state_dir) < 0) ||
	    (a->svc.manager.runtime_dir && ensure_dir(a->svc.manager.runtime_dir) < 0))
		return -EIO;	/* logged */
	return 0;
}

int main(int argc, char *argv[])
{
	_cleanup_free_ struct service_goal *goals = NULL;
	_cleanup_free_ char **devices = NULL;
	struct args a = {
		.obs = {
			.interval_ns = NSEC_PER_SEC,
			.attach = OBSERVER_ATTACH_AUTO,
			.sysroot = "/sys",
			.debugfs = "/sys/kernel/debug",
		},
		.svc = { .bus = true },
	};
	int r;

	log_set_prefix("kyber-tuned");
	(void)log_open_journal("kyber-tuned");
	manager_options_default(&a.svc.manager);
	devices = calloc((size_t)argc, sizeof(char *));
	goals = calloc((size_t)argc, sizeof(*goals));
	if (!devices || !goals)
		return 1;
	a.devices = a.obs.devices = devices;
	a.goals = a.svc.goals = goals;

	r = parse_argv(argc, argv, &a);
	if (r <= 0)
		return r < 0 ? 2 : 0;
	r = finish_args(&a);
	if (r < 0)
		return r == -EINVAL ? 2 : 1;
	r = a.obs.n_devices ? observe_run(&a.obs) : service_run(&a.svc);
	return r < 0 ? 1 : 0;
}
