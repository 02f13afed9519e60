/* SPDX-License-Identifier: GPL-2.0-or-later */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

/* Longest modelled time accepted: more is a typo, not a device. */
#define MAX_USEC 10000000.0

void log_error(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	fputs("flashsim: ", stderr);
	va_start(ap, fmt);
	errno = saved;	/* so %m in fmt still means the caller's errno */
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void help_profiles(void)
{
	printf("Profiles (--profile, default flash):\n"
	       "  flash     DIES dies, one FIFO each. Page reads go to die (page %% DIES),\n"
	       "            page programs round-robin over the dies; a read queued behind\n"
	       "            a program waits for it. Defaults: 8 dies, 60 us read,\n"
	       "            500 us program.\n"
	       "  tlc       flash with fewer dies and slower programs (TLC NAND).\n"
	       "            Defaults: 4 dies, 90 us read, 1500 us program.\n"
	       "  gc        flash with garbage collection: after every GC_PAGES programs\n"
	       "            on a die, that die is busy for GC_US (erase and page moves)\n"
	       "            and reads that land on it wait. Stalls scale with the write\n"
	       "            volume. Defaults: flash timings, 16 pages, 2000 us.\n"
	       "  optane    Reads and writes use separate resources: reads on DIES read\n"
	       "            channels (page %% DIES), writes through one pipeline capped at\n"
	       "            WRITE_IOPS page writes/s that then take WRITE_US. Reads never\n"
	       "            wait for writes. Defaults: 8 channels, 12 us read, 12 us write,\n"
	       "            16000 write IOPS.\n"
	       "  qdlat     Requests are served in parallel, but each takes READ_US or\n"
	       "            WRITE_US per page plus CONTENTION_US for every request already\n"
	       "            in the device (like a loop over a file on a file system):\n"
	       "            throughput grows with depth towards 1/CONTENTION_US, and reads\n"
	       "            slow down with the write depth. Defaults: 40 us read, 100 us\n"
	       "            write, 60 us contention.\n"
	       "  buffered  flash plus a write buffer of BUFFER_PAGES pages: a page write\n"
	       "            is acknowledged ACK_US after it got a buffer slot and drains\n"
	       "            in the background as a program on the dies (reads still\n"
	       "            collide with programs). A full buffer makes writes wait for\n"
	       "            a slot. Defaults: flash timings, 1024 pages, 12 us ack.\n"
	       "\n"
	       "GC storm (toggled by SIGUSR2): flash, tlc, gc and buffered dies stall for\n"
	       "GC_US after every STORM_GC_PAGES programs instead; optane and qdlat media\n"
	       "take STORM_SLOWDOWN times as long for everything.\n"
	       "\n");
}

static void help(void)
{
	printf("Usage: flashsim [OPTIONS] MOUNTPOINT\n"
	       "\n"
	       "Mounts a FUSE file system with one fixed-size file 'disk' whose requests\n"
	       "complete after the time a flash device model gives them, and a read-only\n"
	       "'stats' file (JSON). Attach 'disk' with losetup --direct-io=on to get a\n"
	       "block device with deterministic read/write interference. Runs in the\n"
	       "foreground; SIGTERM/SIGINT unmount and exit 0, SIGUSR1 prints the\n"
	       "statistics to stderr, SIGUSR2 toggles a GC storm.\n"
	       "\n"
	       "Requests are split into 4 KiB page operations; a request is due when its\n"
	       "last page operation finishes (qdlat: one request in the device).\n"
	       "\n");
	help_profiles();
	printf("fsync: immediate, except buffered, where it completes when every write\n"
	       "accepted so far has been programmed (the buffer drained).\n"
	       "\n"
	       "Options (times in microseconds, fractions allowed; every option\n"
	       "overrides the profile's default whatever the order):\n"
	       "  -p, --profile=NAME       flash, tlc, gc, optane, qdlat or buffered\n"
	       "  -s, --size=BYTES         size of 'disk', K/M/G suffixes (binary),\n"
	       "                           multiple of 4096 (default 256M)\n"
	       "      --dies=N             dies (optane: read channels; qdlat: unused),\n"
	       "                           1..4096\n"
	       "      --read-us=US         page read time (qdlat: alone in the device)\n"
	       "      --program-us=US      page program time (flash, tlc, gc, buffered; > 0)\n"
	       "      --write-us=US        page write time (optane; qdlat: alone in the device)\n"
	       "      --write-iops=N       page write rate cap (optane; 0 = none)\n"
	       "      --buffer-pages=N     write buffer size (buffered; >= 1)\n"
	       "      --ack-us=US          write acknowledge time (buffered)\n"
	       "      --gc-pages=N         programs per die between GC stalls (flash,\n"
	       "                           tlc, gc, buffered; 0 = no GC, gc: >= 1;\n"
	       "                           up to 1048576)\n"
	       "      --gc-us=US           length of one GC stall (flash-like; > 0;\n"
	       "                           default 3000, gc: 2000)\n"
	       "      --contention-us=US   qdlat: added per request in the device (> 0)\n"
	       "      --storm-gc-pages=N   storm: programs per die between GC stalls\n"
	       "                           (flash-like; 1..1048576, default 4)\n"
	       "      --storm-slowdown=N   storm: optane/qdlat media time factor\n"
	       "                           (1..1000, default 4)\n"
	       "      --max-background=N   FUSE max_background (default 1024)\n"
	       "      --spin-us=US         busy-poll (yielding) this long before a reply\n"
	       "                           is due instead of sleeping; waking from a\n"
	       "                           timer takes 30-40 us here (default 50, 0 = off)\n"
	       "      --cpu=N              pin the daemon to CPU N\n"
	       "  -d, --fuse-debug         libfuse debug output\n"
	       "  -h, --help               this text\n"
	       "\n"
	       "Exit status: 0 after a clean unmount, 1 on a runtime error, 2 on a bad\n"
	       "command line.\n");
}

static int bad_value(const char *option, const char *value, const char *expected)
{
	log_error("Invalid value for %s: '%s' (expected %s)", option, value, expected);
	return -EINVAL;
}

static int parse_u64(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret)
{
	uint64_t v;

	if (parse_u64(s, &v) < 0 || v < min || v > max)
		return -EINVAL;
	*ret = (unsigned) v;
	return 0;
}

static int parse_usec(const char *s, uint64_t *ret_ns)
{
	double v;
	char *end;

	if (!*s || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0 || v > MAX_USEC)
		return -EINVAL;
	*ret_ns = (uint64_t) llround(v * 1000.0);
	return 0;
}

static int parse_size(const char *s, uint64_t *ret)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		switch (*end) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: return -EINVAL;
		}
		end++;
		/* Allow "256M", "256MiB" and "256MB", all binary. */
		if (strcmp(end, "") != 0 && strcmp(end, "iB") != 0 && strcmp(end, "B") != 0)
			return -EINVAL;
	}
	/* Keep the whole disk addressable in memory on this machine. */
	if (v > (64ULL << 30) >> shift)
		return -EINVAL;
	*ret = v << shift;
	return 0;
}

enum {
	ARG_DIES = 0x100,
	ARG_READ_US,
	ARG_PROGRAM_US,
	ARG_WRITE_US,
	ARG_WRITE_IOPS,
	ARG_BUFFER_PAGES,
	ARG_ACK_US,
	ARG_MAX_BACKGROUND,
	ARG_CPU,
	ARG_SPIN_US,
	ARG_GC_PAGES,
	ARG_GC_US,
	ARG_CONTENTION_US,
	ARG_STORM_GC_PAGES,
	ARG_STORM_SLOWDOWN,
};

static const struct option long_options[] = {
	{ "profile", required_argument, NULL, 'p' },
	{ "size", required_argument, NULL, 's' },
	{ "dies", required_argument, NULL, ARG_DIES },
	{ "read-us", required_argument, NULL, ARG_READ_US },
	{ "program-us", required_argument, NULL, ARG_PROGRAM_US },
	{ "write-us", required_argument, NULL, ARG_WRITE_US },
	{ "write-iops", required_argument, NULL, ARG_WRITE_IOPS },
	{ "buffer-pages", required_argument, NULL, ARG_BUFFER_PAGES },
	{ "ack-us", required_argument, NULL, ARG_ACK_US },
	{ "max-background", required_argument, NULL, ARG_MAX_BACKGROUND },
	{ "cpu", required_argument, NULL, ARG_CPU },
	{ "spin-us", required_argument, NULL, ARG_SPIN_US },
	{ "gc-pages", required_argument, NULL, ARG_GC_PAGES },
	{ "gc-us", required_argument, NULL, ARG_GC_US },
	{ "contention-us", required_argument, NULL, ARG_CONTENTION_US },
	{ "storm-gc-pages", required_argument, NULL, ARG_STORM_GC_PAGES },
	{ "storm-slowdown", required_argument, NULL, ARG_STORM_SLOWDOWN },
	{ "fuse-debug", no_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{}
};

static const char short_options[] = "p:s:dh";

/* Pass 1: only the profile (and --help), so pass 2 can override its defaults. */
static int parse_profile(int argc, char *argv[], enum model_profile *ret, bool *want_help)
{
	enum model_profile profile = PROFILE_FLASH;
	int c, r;

	opterr = 0;	/* pass 2 reports unknown options */
	optind = 0;	/* glibc: full re-initialisation */
	while ((c = getopt_long(argc, argv, short_options, long_options, NULL)) >= 0) {
		if (c == 'h')
			*want_help = true;
		if (c != 'p')
			continue;
		r = model_profile_from_string(optarg);
		if (r < 0)
			return bad_value("--profile", optarg,
					 "flash, tlc, gc, optane, qdlat or buffered");
		profile = (enum model_profile) r;
	}
	*ret = profile;
	return 0;
}

/*
 * One option of the device model. Returns 1 when handled, 0 when @c is not
 * a model option, -EINVAL (reported) on a bad value.
 */
static int parse_model_option(int c, const char *arg, struct model_params *p)
{
	switch (c) {
	case 's':
		if (parse_size(arg, &p->size) < 0 || p->size < MODEL_PAGE_SIZE ||
		    p->size % MODEL_PAGE_SIZE != 0)
			return bad_value("--size", arg,
					 "a multiple of 4096 bytes up to 64G, e.g. 256M");
		return 1;
	case ARG_DIES:
		if (parse_uint(arg, 1, 4096, &p->dies) < 0)
			return bad_value("--dies", arg, "an integer 1..4096");
		return 1;
	case ARG_READ_US:
		if (parse_usec(arg, &p->read_ns) < 0)
			return bad_value("--read-us", arg, "microseconds 0..10000000");
		return 1;
	case ARG_PROGRAM_US:
		if (parse_usec(arg, &p->program_ns) < 0 || p->program_ns == 0)
			return bad_value("--program-us", arg, "microseconds > 0 and <= 10000000");
		return 1;
	case ARG_WRITE_US:
		if (parse_usec(arg, &p->write_ns) < 0)
			return bad_value("--write-us", arg, "microseconds 0..10000000");
		return 1;
	case ARG_WRITE_IOPS:
		if (parse_u64(arg, &p->write_iops) < 0 || p->write_iops > NSEC_PER_SEC)
			return bad_value("--write-iops", arg, "an integer 0..1000000000 (0 = no cap)");
		return 1;
	case ARG_BUFFER_PAGES:
		if (parse_uint(arg, 1, 1U << 24, &p->buffer_pages) < 0)
			return bad_value("--buffer-pages", arg, "an integer 1..16777216");
		return 1;
	case ARG_ACK_US:
		if (parse_usec(arg, &p->ack_ns) < 0)
			return bad_value("--ack-us", arg, "microseconds 0..10000000");
		return 1;
	case ARG_GC_PAGES:
		if (parse_uint(arg, 0, 1U << 20, &p->gc_pages) < 0)
			return bad_value("--gc-pages", arg, "an integer 0..1048576 (0 = no GC)");
		return 1;
	case ARG_GC_US:
		if (parse_usec(arg, &p->gc_ns) < 0 || p->gc_ns == 0)
			return bad_value("--gc-us", arg, "microseconds > 0 and <= 10000000");
		return 1;
	case ARG_CONTENTION_US:
		if (parse_usec(arg, &p->contention_ns) < 0 || p->contention_ns == 0)
			return bad_value("--contention-us", arg, "microseconds > 0 and <= 10000000");
		return 1;
	case ARG_STORM_GC_PAGES:
		if (parse_uint(arg, 1, 1U << 20, &p->storm_gc_pages) < 0)
			return bad_value("--storm-gc-pages", arg, "an integer 1..1048576");
		return 1;
	case ARG_STORM_SLOWDOWN:
		if (parse_uint(arg, 1, 1000, &p->storm_slowdown) < 0)
			return bad_value("--storm-slowdown", arg, "an integer 1..1000");
		return 1;
	default:
		return 0;
	}
}

/* One option of the daemon itself; the same returns as parse_model_option(). */
static int parse_daemon_option(int c, const char *arg, struct flashsim_config *cfg)
{
	unsigned u;

	switch (c) {
	case 'p':
		return 1;	/* pass 1 */
	case ARG_MAX_BACKGROUND:
		/* The kernel's field is 16 bits wide. */
		if (parse_uint(arg, 1, 65535, &cfg->max_background) < 0)
			return bad_value("--max-background", arg, "an integer 1..65535");
		return 1;
	case ARG_CPU:
		if (parse_uint(arg, 0, 4095, &u) < 0)
			return bad_value("--cpu", arg, "a CPU number");
		cfg->cpu = (int) u;
		return 1;
	case ARG_SPIN_US:
		if (parse_usec(arg, &cfg->spin_ns) < 0 || cfg->spin_ns > NSEC_PER_SEC)
			return bad_value("--spin-us", arg, "microseconds 0..1000000");
		return 1;
	case 'd':
		cfg->fuse_debug = true;
		return 1;
	default:
		return 0;
	}
}

int flashsim_parse_argv(int argc, char *argv[], struct flashsim_config *cfg)
{
	struct model_params *p = &cfg->model;
	enum model_profile profile;
	bool want_help = false;
	const char *bad, *why;
	int c, r;

	r = parse_profile(argc, argv, &profile, &want_help);
	if (want_help) {
		help();
		return 0;
	}
	if (r < 0)
		return r;

	*cfg = (struct flashsim_config) {
		.max_background = 1024,
		.cpu = -1,
		.spin_ns = 50 * NSEC_PER_USEC,
	};
	model_params_default(p, profile);

	opterr = 1;
	optind = 0;
	while ((c = getopt_long(argc, argv, short_options, long_options, NULL)) >= 0) {
		r = parse_model_option(c, optarg, p);
		if (r == 0)
			r = parse_daemon_option(c, optarg, cfg);
		if (r < 0)
			return r;
		if (r == 0) {
			/* getopt printed what was wrong. */
			log_error("Try 'flashsim --help'.");
			return -EINVAL;
		}
	}

	if (optind != argc - 1) {
		log_error(optind >= argc ? "Missing MOUNTPOINT argument." :
			  "Too many arguments: expected only MOUNTPOINT.");
		log_error("Try 'flashsim --help'.");
		return -EINVAL;
	}
	cfg->mountpoint = argv[optind];

	r = model_params_check(p, &bad, &why);
	if (r < 0) {
		log_error("Invalid value for %s for profile %s%s%s.", bad,
			  model_profile_to_string(p->profile), why ? ": " : "", why ?: "");
		return r;
	}
	return 1;
}
