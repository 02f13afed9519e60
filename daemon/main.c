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
	       "      --state-dir DIR      Goals set at run time and learned state (service\n"
	       "                           default: $STATE_DIRECTORY or /var/lib/kyber-tuned)\n"
	       "      --runtime-dir DIR    Originals for crash recovery (service default:\n"
	       "                           $RUNTIME_DIRECTORY or /run/kyber-tuned)\n"
	       "      --record FILE        Flight recorder: one record per device and interval\n"
	       "      --count N            --observe: stop after N intervals\n"
	       "      --json               One JSON object per device and interval on stdout\n"
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

int main(int argc, char *argv[])
{
	static const struct option options[] = {
		{ "observe", required_argument, NULL, ARG_OBSERVE },
		{ "interval", required_argument, NULL, ARG_INTERVAL },
		{ "count", required_argument, NULL, ARG_COUNT },
		{ "json", no_argument, NULL, ARG_JSON },
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
		{}
	};
	bool config_given = false, state_given = false, runtime_given = false;
	char dropin_dir[PATH_MAX];
	struct observe_options obs = {
		.interval_ns = NSEC_PER_SEC,
		.attach = OBSERVER_ATTACH_AUTO,
		.sysroot = "/sys",
		.debugfs = "/sys/kernel/debug",
	};
	struct service_options svc = { .bus = true };
	_cleanup_free_ struct service_goal *goals = NULL;
	_cleanup_free_ char **devices = NULL;
	char err[512];
	int c, r;

	log_set_prefix("kyber-tuned");
	(void)log_open_journal("kyber-tuned");
	manager_options_default(&svc.manager);
	devices = calloc((size_t)argc, sizeof(char *));
	goals = calloc((size_t)argc, sizeof(*goals));
	if (!devices || !goals)
		return 1;
	obs.devices = devices;
	svc.goals = goals;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (c) {
		case ARG_OBSERVE:
			devices[obs.n_devices++] = optarg;
			break;
		case ARG_INTERVAL:
			if (parse_interval(optarg, &obs.interval_ns) < 0)
				return 2;
			svc.manager.interval_ns = obs.interval_ns;
			svc.cli_set |= SERVICE_CLI_INTERVAL;
			break;
		case ARG_FOREGROUND:
			svc.bus = false;
			break;
		case ARG_GOAL:
			if (service_parse_device_goal(optarg, &goals[svc.n_goals], err, sizeof(err)) < 0) {
				log_error("%s", err);
				return 2;
			}
			svc.n_goals++;
			break;
		case ARG_SETTLE:
			r = parse_duration_ns(optarg, 0, &svc.manager.settle_ns);
			if (r < 0 || svc.manager.settle_ns > 10 * NSEC_PER_SEC) {
				log_error("Invalid --settle '%s': expected a duration up to 10s, with a unit",
					  optarg);
				return 2;
			}
			svc.cli_set |= SERVICE_CLI_SETTLE;
			break;
		case ARG_CONFIG:
			svc.config_path = *optarg ? optarg : NULL;
			config_given = true;
			/* Its drop-ins sit beside it, as /etc/kyber-tuned/conf.d does. */
			if (svc.config_path) {
				const char *slash = strrchr(optarg, '/');

				snprintf(dropin_dir, sizeof(dropin_dir), "%.*s%sconf.d",
					 slash ? (int)(slash - optarg) : 0, optarg, slash ? "/" : "");
				svc.dropin_dir = dropin_dir;
			} else
				svc.dropin_dir = NULL;
			break;
		case ARG_STATE_DIR:
			svc.manager.state_dir = *optarg ? optarg : NULL;
			state_given = true;
			break;
		case ARG_RUNTIME_DIR:
			svc.manager.runtime_dir = *optarg ? optarg : NULL;
			runtime_given = true;
			break;
		case ARG_RECORD:
			svc.manager.record_path = *optarg ? optarg : NULL;
			svc.cli_set |= SERVICE_CLI_RECORD;
			break;
		case ARG_NO_ROLLBACK:
			svc.manager.rollback = false;
			svc.cli_set |= SERVICE_CLI_ROLLBACK;
			break;
		case ARG_NO_SWITCH:
			svc.manager.switch_scheduler = false;
			svc.cli_set |= SERVICE_CLI_SWITCH;
			break;
		case ARG_COUNT:
			if (parse_u64_strict(optarg, false, &obs.count) < 0 || obs.count == 0) {
				log_error("Invalid --count '%s': expected a positive integer", optarg);
				return 2;
			}
			break;
		case ARG_JSON:
			obs.json = svc.manager.json = true;
			break;
		case ARG_ATTACH:
			if (observer_attach_from_string(optarg, &obs.attach) < 0) {
				log_error("Invalid --attach '%s': expected auto, tp_btf or raw_tp", optarg);
				return 2;
			}
			svc.manager.attach = obs.attach;
			break;
		case ARG_LOG_LEVEL:
			r = log_level_from_string(optarg);
			if (r < 0) {
				log_error("Invalid --log-level '%s': expected err, warning, notice, info or debug",
					  optarg);
				return 2;
			}
			log_set_max_level(r);
			svc.cli_set |= SERVICE_CLI_LOG_LEVEL;
			break;
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("kyber-tuned %s\n", KT_VERSION);
			return 0;
		default:
			return 2;
		}
	}
	if (optind < argc) {
		log_error("Unexpected argument '%s'; see --help", argv[optind]);
		return 2;
	}
	if (obs.n_devices && (svc.n_goals || !svc.bus)) {
		log_error("--observe excludes --goal and --foreground");
		return 2;
	}
	if (svc.manager.settle_ns >= svc.manager.interval_ns) {
		log_error("--settle must be shorter than --interval");
		return 2;
	}
	if (!svc.bus && !svc.n_goals && !svc.config_path) {
		log_error("--foreground needs a --goal DEV:GOAL or a --config FILE with goals");
		return 2;
	}
	/* A file named on the command line must be there; the default may not. */
	if (config_given && svc.config_path && access(svc.config_path, R_OK) < 0) {
		log_error_errno(-errno, "Failed to open %s: %m", svc.config_path);
		return 1;
	}
	/* The service keeps its configuration and state where the system
	 * does; --foreground only what it is told to. */
	if (svc.bus) {
		if (!config_given) {
			svc.config_path = CONF_PATH;
			svc.dropin_dir = CONF_DROPIN_DIR;
		}
		if (!state_given)
			svc.manager.state_dir = service_dir("STATE_DIRECTORY", "/var/lib/kyber-tuned");
		if (!runtime_given)
			svc.manager.runtime_dir = service_dir("RUNTIME_DIRECTORY", "/run/kyber-tuned");
	}
	if ((svc.manager.state_dir && ensure_dir(svc.manager.state_dir) < 0) ||
	    (svc.manager.runtime_dir && ensure_dir(svc.manager.runtime_dir) < 0))
		return 1;
	if (obs.n_devices)
		r = observe_run(&obs);
	else
		r = service_run(&svc);
	return r < 0 ? 1 : 0;
}
