/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kyber-tunectl: the command line client. Talks only D-Bus (the system
 * bus, docs/dbus.md), except replay, which decodes a flight-recorder file.
 * Output is formatted by tunectl-format.c. Exit: 0 ok, 1 error, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <string.h>

#include <systemd/sd-bus.h>

#include "goal.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "tunectl.h"
#include "tunectl-weights.h"

#ifndef KT_VERSION
#define KT_VERSION "0.1"
#endif

bool arg_json;
bool arg_ask_password = true;
bool arg_utf8;

static void help(void)
{
	printf("Usage: kyber-tunectl [OPTIONS] COMMAND ...\n"
	       "\n"
	       "Control kyber-tuned, the Kyber I/O scheduler tuner, over D-Bus.\n"
	       "\n"
	       "Commands:\n"
	       "  status [DEV]             Show the state of DEV (or of every tuned device)\n"
	       "  list                     List the tuned devices\n"
	       "  set-goal DEV GOAL...     Tune DEV toward GOAL: read-pNN=DURATION\n"
	       "                           [write-iops-min=COUNT] [mode=latency|balanced|\n"
	       "                           throughput|advise], e.g. read-p99=100us\n"
	       "  clear-goal DEV           Stop tuning DEV, restore its original settings\n"
	       "  pause DEV                Stop changing DEV's targets\n"
	       "  resume DEV               Tune DEV again (also after someone else changed it)\n"
	       "  reset DEV                Restore DEV's original settings, forget what was\n"
	       "                           learned and pause\n"
	       "  set-weight DEV CGROUP WEIGHT\n"
	       "                           Share DEV among cgroups by weight: CGROUP (its path\n"
	       "                           in the io controller's hierarchy, e.g. tenants/a)\n"
	       "                           gets WEIGHT (1-10000, as io.weight)\n"
	       "  clear-weight DEV CGROUP  Clear CGROUP's weight on DEV\n"
	       "  weights DEV              Per cgroup on DEV: weight, share, IOPS and bytes/s,\n"
	       "                           P99 and the limits in force\n"
	       "  monitor [DEV]            One line per device and interval until Ctrl-C\n"
	       "  hist DEV [read|write]    The last interval's latency histogram (default read)\n"
	       "  replay FILE              Print a flight-recorder file (kyber-tuned --record)\n"
	       "  export-profile DEV       Print what was learned on DEV as a per-model\n"
	       "                           profile, for /etc/kyber-tuned/profiles.d elsewhere\n"
	       "\n"
	       "Options:\n"
	       "      --json               JSON output, one object per line (status, list,\n"
	       "                           monitor, hist, replay, weights)\n"
	       "      --no-ask-password    Do not let polkit ask for a password\n"
	       "  -h, --help               Show this help\n"
	       "      --version            Show the version\n"
	       "\n"
	       "Changing commands need root or polkit authorization. See kyber-tunectl(1).\n");
}

/* ---------------------------------------------------------------- verbs */

/* Goals waiting for their disks, after the tuned devices. */
struct waiting_out {
	size_t n;		/* printed so far */
	bool after_devices;	/* status: a blank line first */
	const char *device;	/* set-goal, status DEV: the one to look for */
	bool print;		/* status DEV: show it */
};

static int status_waiting(const char *device, const char *goal, const char *source, void *userdata)
{
	struct waiting_out *w = userdata;

	if (arg_json)
		return tf_waiting_json(stdout, device, goal, source);
	if (w->n++ || w->after_devices)
		putchar('\n');
	tf_waiting_print(stdout, device, goal, source, arg_utf8);
	return 0;
}

static int list_waiting(const char *device, const char *goal, const char *source, void *userdata)
{
	struct waiting_out *w = userdata;

	w->n++;
	if (arg_json)
		return tf_waiting_json(stdout, device, goal, source);
	tf_waiting_row(stdout, device, goal);
	return 0;
}

/* Counts the goals waiting under w->device (or its /dev path); with
 * w->print, shows them as status does. */
static int find_waiting(const char *device, const char *goal, const char *source, void *userdata)
{
	struct waiting_out *w = userdata;
	const char *want = w->device;

	if (strncmp(want, "/dev/", 5) == 0 && strcmp(device, want + 5) == 0)
		want = device;
	if (strcmp(device, want) != 0)
		return 0;
	if (w->print)
		(void)status_waiting(device, goal, source, &(struct waiting_out) { .after_devices = w->n > 0 });
	w->n++;
	return 0;
}

static int verb_status(sd_bus *bus, int argc, char **argv)
{
	struct waiting_out waiting = {};
	char **paths = NULL;
	size_t n = 0;
	int r, ret = 0;

	if (argc > 1) {
		/* A goal waiting for its disk: shown, not an error. */
		waiting = (struct waiting_out) { .device = argv[1], .print = true };
		if (for_each_waiting(bus, find_waiting, &waiting) < 0)
			return 1;
		if (waiting.n)
			return 0;
		paths = calloc(2, sizeof(char *));
		if (!paths)
			return log_oom_status();
		n = 1;
		r = get_device_path(bus, argv[1], &paths[0]);
	} else
		r = list_paths(bus, &paths, &n);
	if (r < 0) {
		strv_free(paths);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
		struct tf_status s;

		if (get_status(bus, paths[i], &reply, &s) < 0) {
			ret = 1;
			continue;
		}
		if (arg_json)
			tf_status_json(stdout, &s, 0);
		else {
			if (i)
				putchar('\n');
			tf_status_print(stdout, &s, arg_utf8);
		}
	}
	strv_free(paths);
	if (argc > 1)
		return ret;
	waiting.after_devices = n > 0;
	if (for_each_waiting(bus, status_waiting, &waiting) < 0)
		return 1;
	if (!n && !waiting.n && !arg_json)
		printf("No devices are tuned (kyber-tunectl set-goal DEV GOAL starts one).\n");
	return ret;
}

static int verb_list(sd_bus *bus, int argc, char **argv)
{
	struct waiting_out waiting = {};
	char **paths = NULL;
	size_t n = 0;
	int ret = 0;

	if (list_paths(bus, &paths, &n) < 0)
		return 1;
	if (!arg_json)
		tf_list_header(stdout);
	for (size_t i = 0; i < n; i++) {
		_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
		struct tf_status s;
		struct tf_json j;

		if (get_status(bus, paths[i], &reply, &s) < 0) {
			ret = 1;
			continue;
		}
		if (!arg_json) {
			tf_list_row(stdout, &s);
			continue;
		}
		tf_json_begin(&j, stdout);
		tf_json_str(&j, "device", s.name);
		tf_json_str(&j, "state", s.state);
		tf_json_str(&j, "goal", s.goal);
		tf_json_str(&j, "object_path", paths[i]);
		tf_json_end(&j);
	}
	strv_free(paths);
	if (for_each_waiting(bus, list_waiting, &waiting) < 0)
		return 1;
	if (!arg_json && waiting.n)
		printf("\n%zu device%s tuned, %zu goal%s waiting for %s disk.\n", n, n == 1 ? "" : "s",
		       waiting.n, waiting.n == 1 ? "" : "s", waiting.n == 1 ? "its" : "their");
	else if (!arg_json)
		printf("\n%zu device%s tuned.\n", n, n == 1 ? "" : "s");
	return ret;
}

/* GOAL may come as several words: read-p99=2ms mode=balanced. NULL when
 * out of memory. */
static char *goal_words(int argc, char **argv)
{
	size_t len = 1;
	char *goal;

	for (int a = 2; a < argc; a++)
		len += strlen(argv[a]) + 1;
	goal = calloc(1, len);
	if (!goal)
		return NULL;
	for (int a = 2; a < argc; a++) {
		if (a > 2)
			strcat(goal, " ");
		strcat(goal, argv[a]);
	}
	return goal;
}

/* The daemon judges a goal too; said here, a typo needs no bus. */
static int check_goal(int argc, char **argv)
{
	_cleanup_free_ char *goal = goal_words(argc, argv);
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct goal g;

	if (!goal)
		return log_oom_status();
	if (goal_parse(goal, &g, &e) >= 0)
		return 0;
	log_error("%s", e.message ?: "Invalid goal");
	sd_bus_error_free(&e);
	return EXIT_USAGE;
}

static int parse_weight(const char *arg, uint32_t *ret)
{
	uint64_t w;

	if (parse_u64_strict(arg, false, &w) < 0 || w < 1 || w > 10000) {
		log_error("Invalid weight '%s': expected 1-10000, as io.weight", arg);
		return EXIT_USAGE;
	}
	*ret = (uint32_t)w;
	return 0;
}

static int check_weight(int argc, char **argv)
{
	uint32_t w;

	return strcmp(argv[0], "set-weight") == 0 ? parse_weight(argv[3], &w) : 0;
}

/* set-goal, clear-goal, pause, resume, reset: one Manager call. */
static int verb_change(sd_bus *bus, int argc, char **argv)
{
	static const struct {
		const char *verb, *method, *what;
	} map[] = {
		{ "set-goal", "SetGoal", "set the goal" },
		{ "clear-goal", "ClearGoal", "clear the goal" },
		{ "pause", "Pause", "pause" },
		{ "resume", "Resume", "resume" },
		{ "reset", "Reset", "reset" },
	};
	sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *goal = NULL;
	size_t i;
	int r;

	for (i = 0; strcmp(map[i].verb, argv[0]) != 0; i++)
		;
	if (i > 0)
		r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_MANAGER_INTERFACE, map[i].method, &e, NULL,
				       "s", argv[1]);
	else {
		goal = goal_words(argc, argv);
		if (!goal)
			return log_oom_status();
		r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_MANAGER_INTERFACE, "SetGoal", &e, NULL, "ss",
				       argv[1], goal);
	}
	if (r < 0) {
		call_failed(map[i].what, &e, r);
		sd_bus_error_free(&e);
		return 1;
	}
	if (i == 0) {
		struct waiting_out waiting = { .device = argv[1] };

		if (for_each_waiting(bus, find_waiting, &waiting) == 0 && waiting.n)
			printf("%s is not here (or has no medium): the goal waits for it and applies when it "
			       "appears.\n", argv[1]);
	}
	return 0;
}

static int verb_hist(sd_bus *bus, int argc, char **argv)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_free_ struct tf_bucket *b = NULL;
	_cleanup_free_ struct tf_hist *h = NULL;
	_cleanup_free_ char *path = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	const char *op = argc > 2 ? argv[2] : "read";
	uint64_t lower, count;
	size_t n = 0, cap = 0;
	int r;

	if (strcmp(op, "read") != 0 && strcmp(op, "write") != 0) {
		log_error("Invalid op '%s': expected read or write", op);
		return EXIT_USAGE;
	}
	if (get_device_path(bus, argv[1], &path) < 0)
		return 1;
	r = sd_bus_call_method(bus, BUS_NAME, path, BUS_DEVICE_INTERFACE, "GetHistogram", &e, &reply, "s", op);
	if (r < 0) {
		call_failed("get the histogram", &e, r);
		sd_bus_error_free(&e);
		return 1;
	}
	r = sd_bus_message_enter_container(reply, 'a', "(tt)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(tt)", &lower, &count)) > 0) {
		if (n == cap) {
			struct tf_bucket *nb = realloc(b, (cap = cap * 2 + 64) * sizeof(*b));

			if (!nb)
				return log_oom_status();
			b = nb;
		}
		b[n++] = (struct tf_bucket) { lower, count };
	}
	if (r < 0) {
		log_error_errno(r, "Failed to parse the histogram: %m");
		return 1;
	}
	h = malloc(sizeof(*h));
	if (!h)
		return log_oom_status();
	tf_hist_build(b, n, TF_HIST_ROWS_MAX, h);
	if (arg_json)
		tf_hist_json(stdout, argv[1], op, b, n, h);
	else
		tf_hist_print(stdout, argv[1], op, h, arg_utf8);
	return 0;
}

static int verb_export_profile(sd_bus *bus, int argc, char **argv)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	const char *text;
	int r;

	r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_MANAGER_INTERFACE, "ExportProfile", &e, &reply, "s",
			       argv[1]);
	if (r >= 0)
		r = sd_bus_message_read(reply, "s", &text);
	if (r < 0) {
		call_failed("export the profile", &e, r);
		sd_bus_error_free(&e);
		return 1;
	}
	fputs(text, stdout);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* set-weight DEV CGROUP WEIGHT, clear-weight DEV CGROUP. */
static int verb_weight(sd_bus *bus, int argc, char **argv)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	bool set = strcmp(argv[0], "set-weight") == 0;
	uint32_t weight = 0;
	int r;

	if (set) {
		r = parse_weight(argv[3], &weight);
		if (r)
			return r;
		r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_MANAGER_INTERFACE, "SetWeight", &e, NULL, "ssu",
				       argv[1], argv[2], weight);
	} else
		r = sd_bus_call_method(bus, BUS_NAME, BUS_PATH, BUS_MANAGER_INTERFACE, "ClearWeight", &e, NULL,
				       "ss", argv[1], argv[2]);
	if (r < 0) {
		call_failed(set ? "set the weight" : "clear the weight", &e, r);
		sd_bus_error_free(&e);
		return 1;
	}
	return 0;
}

/* weights DEV: Device.GetShares as a table or JSON. */
static int verb_weights(sd_bus *bus, int argc, char **argv)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_free_ struct tf_share *rows = NULL;
	_cleanup_free_ char *path = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	size_t n = 0, cap = 0;
	struct tf_share s;
	int r, weighted;

	if (get_device_path(bus, argv[1], &path) < 0)
		return 1;
	r = sd_bus_call_method(bus, BUS_NAME, path, BUS_DEVICE_INTERFACE, "GetShares", &e, &reply, "");
	if (r < 0) {
		call_failed("get the shares", &e, r);
		sd_bus_error_free(&e);
		return 1;
	}
	r = sd_bus_message_enter_container(reply, 'a', BUS_SHARE_ROW);
	while (r >= 0 && (r = sd_bus_message_read(reply, BUS_SHARE_ROW, &s.cgroup, &s.weight, &weighted, &s.share,
						  &s.read_iops, &s.write_iops, &s.read_bps, &s.write_bps,
						  &s.read_p99_ns, &s.write_p99_ns, &s.limit_read_iops,
						  &s.limit_write_iops, &s.limit_read_bps, &s.limit_write_bps)) > 0) {
		if (n == cap) {
			struct tf_share *grown = realloc(rows, (cap = cap * 2 + 8) * sizeof(*rows));

			if (!grown)
				return log_oom_status();
			rows = grown;
		}
		s.weighted = weighted;
		rows[n++] = s;
	}
	if (r < 0) {
		log_error_errno(r, "Failed to parse the shares: %m");
		return 1;
	}
	if (arg_json)
		return tf_shares_json(stdout, argv[1], rows, n) < 0 ? 1 : 0;
	tf_shares_print(stdout, argv[1], rows, n);
	return 0;
}

/* ---------------------------------------------------------------- main */

static const struct verb {
	const char *name;
	int min_args, max_args;		/* after the verb; -1: any */
	bool bus;
	int (*run)(sd_bus *bus, int argc, char **argv);
	int (*check)(int argc, char **argv);	/* before the bus: 0, or the exit status */
} verbs[] = {
	{ "status", 0, 1, true, verb_status, NULL },
	{ "list", 0, 0, true, verb_list, NULL },
	{ "set-goal", 2, -1, true, verb_change, check_goal },
	{ "clear-goal", 1, 1, true, verb_change, NULL },
	{ "pause", 1, 1, true, verb_change, NULL },
	{ "resume", 1, 1, true, verb_change, NULL },
	{ "reset", 1, 1, true, verb_change, NULL },
	{ "set-weight", 3, 3, true, verb_weight, check_weight },
	{ "clear-weight", 2, 2, true, verb_weight, NULL },
	{ "weights", 1, 1, true, verb_weights, NULL },
	{ "monitor", 0, 1, true, verb_monitor, NULL },
	{ "hist", 1, 2, true, verb_hist, NULL },
	{ "replay", 1, 1, false, verb_replay, NULL },
	{ "export-profile", 1, 1, true, verb_export_profile, NULL },
};

enum {
	ARG_JSON = 0x100,
	ARG_VERSION,
	ARG_NO_ASK_PASSWORD,
};

int main(int argc, char *argv[])
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "json", no_argument, NULL, ARG_JSON },
		{ "no-ask-password", no_argument, NULL, ARG_NO_ASK_PASSWORD },
		{}
	};
	const struct verb *v = NULL;
	sd_bus *bus = NULL;
	int c, nargs, r;

	log_set_prefix("kyber-tunectl");
	setlocale(LC_ALL, "");
	arg_utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (c) {
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("kyber-tunectl %s\n", KT_VERSION);
			return 0;
		case ARG_JSON:
			arg_json = true;
			break;
		case ARG_NO_ASK_PASSWORD:
			arg_ask_password = false;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		log_error("Missing command; see --help");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
		if (strcmp(verbs[i].name, argv[optind]) == 0)
			v = &verbs[i];
	if (!v) {
		log_error("Unknown command '%s'; see --help", argv[optind]);
		return EXIT_USAGE;
	}
	nargs = argc - optind - 1;
	if (nargs < v->min_args || (v->max_args >= 0 && nargs > v->max_args)) {
		log_error("%s: %s arguments; see --help", v->name, nargs < v->min_args ? "missing" : "too many");
		return EXIT_USAGE;
	}
	if (v->check) {
		r = v->check(argc - optind, argv + optind);
		if (r)
			return r;
	}
	if (v->bus && connect_bus(&bus) != 0)
		return 1;
	r = v->run(bus, argc - optind, argv + optind);
	sd_bus_flush_close_unref(bus);
	fflush(stdout);
	return r;
}
