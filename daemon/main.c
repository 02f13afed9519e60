/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kyber-tuned: command line entry point. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "observe.h"
#include "parse-util.h"
#include "tuner.h"

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
	       "      --observe DEV        Print latency histograms of DEV (name or /dev path;\n"
	       "                           repeatable) once per interval, change nothing\n"
	       "      --foreground --goal DEV:GOAL\n"
	       "                           Tune DEV's Kyber targets toward GOAL (repeatable),\n"
	       "                           e.g. --goal nvme0n1:read-p99=100us. GOAL is\n"
	       "                           read-pNN=DURATION [write-iops-min=N]\n"
	       "                           [mode=latency|balanced|throughput|advise]\n"
	       "\n"
	       "Options:\n"
	       "      --interval DURATION  Interval (default 1s; 10ms..1h; units ns us ms s)\n"
	       "      --settle DURATION    Data ignored after a target change (default 300ms)\n"
	       "      --no-rollback        Leave the targets as tuned on exit (default: restore\n"
	       "                           the original scheduler and targets)\n"
	       "      --no-switch-scheduler  Refuse devices not on Kyber (default: switch them to\n"
	       "                           Kyber and back on exit)\n"
	       "      --count N            Stop after N intervals (default: until SIGINT/SIGTERM)\n"
	       "      --json               One JSON object per device and interval on stdout\n"
	       "      --attach MODE        BPF attach type: auto (default), tp_btf, raw_tp\n"
	       "      --log-level LEVEL    err, warning, notice, info (default), debug\n"
	       "  -h, --help               Show this help\n"
	       "      --version            Show the version\n"
	       "\n"
	       "Signals: SIGINT/SIGTERM stop (and roll back), SIGUSR1 resumes devices that\n"
	       "someone else changed (state overridden).\n"
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
};

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
		{}
	};
	struct tuner_options tun = {
		.interval_ns = NSEC_PER_SEC,
		.settle_ns = 300 * NSEC_PER_MSEC,
		.rollback = true,
		.switch_scheduler = true,
		.attach = OBSERVER_ATTACH_AUTO,
		.sysroot = "/sys",
		.debugfs = "/sys/kernel/debug",
	};
	_cleanup_free_ struct tuner_device_spec *specs = NULL;
	bool foreground = false;
	char err[512];
	struct observe_options obs = {
		.interval_ns = NSEC_PER_SEC,
		.attach = OBSERVER_ATTACH_AUTO,
		.sysroot = "/sys",
		.debugfs = "/sys/kernel/debug",
	};
	_cleanup_free_ char **devices = NULL;
	int c, r;

	log_set_prefix("kyber-tuned");
	devices = calloc((size_t)argc, sizeof(char *));
	specs = calloc((size_t)argc, sizeof(*specs));
	if (!devices || !specs)
		return 1;
	obs.devices = devices;
	tun.devices = specs;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (c) {
		case ARG_OBSERVE:
			devices[obs.n_devices++] = optarg;
			break;
		case ARG_INTERVAL:
			r = parse_duration_ns(optarg, 0, &obs.interval_ns);
			if (r < 0 || obs.interval_ns < 10 * NSEC_PER_MSEC || obs.interval_ns > 3600 * NSEC_PER_SEC) {
				log_error("Invalid --interval '%s': expected a duration from 10ms to 1h, "
					  "with a unit (e.g. 500ms, 1s)", optarg);
				return 2;
			}
			break;
		case ARG_FOREGROUND:
			foreground = true;
			break;
		case ARG_GOAL:
			if (tuner_parse_device_goal(optarg, &specs[tun.n_devices], err, sizeof(err)) < 0) {
				log_error("%s", err);
				return 2;
			}
			tun.n_devices++;
			break;
		case ARG_SETTLE:
			r = parse_duration_ns(optarg, 0, &tun.settle_ns);
			if (r < 0 || tun.settle_ns > 10 * NSEC_PER_SEC) {
				log_error("Invalid --settle '%s': expected a duration up to 10s, with a unit",
					  optarg);
				return 2;
			}
			break;
		case ARG_NO_ROLLBACK:
			tun.rollback = false;
			break;
		case ARG_NO_SWITCH:
			tun.switch_scheduler = false;
			break;
		case ARG_COUNT:
			if (parse_u64_strict(optarg, false, &obs.count) < 0 || obs.count == 0) {
				log_error("Invalid --count '%s': expected a positive integer", optarg);
				return 2;
			}
			break;
		case ARG_JSON:
			obs.json = true;
			break;
		case ARG_ATTACH:
			if (observer_attach_from_string(optarg, &obs.attach) < 0) {
				log_error("Invalid --attach '%s': expected auto, tp_btf or raw_tp", optarg);
				return 2;
			}
			break;
		case ARG_LOG_LEVEL:
			r = log_level_from_string(optarg);
			if (r < 0) {
				log_error("Invalid --log-level '%s': expected err, warning, notice, info or debug",
					  optarg);
				return 2;
			}
			log_set_max_level(r);
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
	tun.interval_ns = obs.interval_ns;
	tun.json = obs.json;
	tun.count = obs.count;
	tun.attach = obs.attach;
	if (obs.n_devices && (foreground || tun.n_devices)) {
		log_error("--observe and --foreground/--goal exclude each other");
		return 2;
	}
	if (tun.n_devices && !foreground) {
		log_error("--goal needs --foreground (the D-Bus service is not built yet)");
		return 2;
	}
	if (foreground && !tun.n_devices) {
		log_error("--foreground needs at least one --goal DEV:GOAL");
		return 2;
	}
	if (tun.settle_ns >= tun.interval_ns) {
		log_error("--settle must be shorter than --interval");
		return 2;
	}
	if (foreground)
		r = tuner_run(&tun);
	else if (obs.n_devices)
		r = observe_run(&obs);
	else {
		log_error("Nothing to do: use --observe DEV or --foreground --goal DEV:GOAL; see --help");
		return 2;
	}
	return r < 0 ? 1 : 0;
}
