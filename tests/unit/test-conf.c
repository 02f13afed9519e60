/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: daemon/conf.c and conf-load.c, on text and on fake files in a temp dir.
 * Warnings go to stderr (log.c); they are captured through a temp file so
 * that their exact text can be checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf.h"
#include "log.h"
#include "parse-util.h"

static char root[] = "/tmp/kt-conf-XXXXXX";
static int saved_stderr = -1;
static FILE *capture;
static char captured[16384];

static void capture_begin(void)
{
	fflush(stderr);
	capture = tmpfile();
	assert_non_null(capture);
	saved_stderr = dup(STDERR_FILENO);
	assert_true(saved_stderr >= 0);
	assert_true(dup2(fileno(capture), STDERR_FILENO) >= 0);
}

/* Everything logged since capture_begin(). */
static const char *capture_end(void)
{
	size_t n;

	fflush(stderr);
	assert_true(dup2(saved_stderr, STDERR_FILENO) >= 0);
	close(saved_stderr);
	rewind(capture);
	n = fread(captured, 1, sizeof(captured) - 1, capture);
	captured[n] = 0;
	fclose(capture);
	return captured;
}

/* Parse text as "t.conf" into a fresh c; returns the warnings logged. */
static const char *parse(struct conf *c, const char *text)
{
	memset(c, 0, sizeof(*c));
	capture_begin();
	assert_int_equal(conf_parse_text(c, text, strlen(text), "t.conf"), 0);
	return capture_end();
}

static void put(const char *rel, const char *content)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static char *path_of(const char *rel)
{
	static char buf[4][512];
	static unsigned i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", root, rel);
	return buf[i];
}

static int setup(void **state)
{
	if (!mkdtemp(root))
		return -1;
	return mkdir(path_of("conf.d"), 0755);
}

static int teardown(void **state)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_every_key(void **state)
{
	struct conf c;
	const char *w;

	w = parse(&c, "# a comment\n"
		  "; another\n"
		  "[Tuner]\n"
		  "Interval=2s\n"
		  "Settle = 500ms    # inline comment\n"
		  "Rollback=no\n"
		  "SwitchScheduler=off\n"
		  "MaxDevices=64\n"
		  "LogLevel=debug\n"
		  "Record=/var/lib/kyber-tuned/record.pb\n"
		  "MetricsFile=/var/lib/prometheus/node-exporter/kyber-tuned.prom\n"
		  "\n"
		  "[Goals]\n"
		  "nvme0n1=read-p99=100us\n"
		  "/dev/disk/by-id/nvme-Foo=read-p99=200us write-iops-min=20k mode=latency\n"
		  "/dev/disk/by-path/pci-0000:00:1f.2-ata-1 = read-p50=1ms ; comment\n");
	assert_string_equal(w, "");
	assert_int_equal(c.warnings, 0);
	assert_true(c.has_interval && c.interval_ns == 2 * NSEC_PER_SEC);
	assert_true(c.has_settle && c.settle_ns == 500 * NSEC_PER_MSEC);
	assert_true(c.has_rollback && !c.rollback);
	assert_true(c.has_switch_scheduler && !c.switch_scheduler);
	assert_true(c.has_max_devices && c.max_devices == 64);
	assert_true(c.has_log_level && c.log_level == LOG_LEVEL_DEBUG);
	assert_true(c.has_record);
	assert_string_equal(c.record_path, "/var/lib/kyber-tuned/record.pb");
	assert_int_equal(c.n_goals, 3);
	assert_string_equal(c.goals[0].device, "nvme0n1");
	assert_string_equal(c.goals[0].goal, "read-p99=100us");
	assert_true(c.has_metrics);
	assert_string_equal(c.metrics_path, "/var/lib/prometheus/node-exporter/kyber-tuned.prom");
	assert_string_equal(c.goals[0].where, "t.conf:14");
	assert_string_equal(c.goals[1].device, "/dev/disk/by-id/nvme-Foo");
	assert_string_equal(c.goals[1].goal, "read-p99=200us write-iops-min=20k mode=latency");
	/* by-path names hold colons: split at '=' only. */
	assert_string_equal(c.goals[2].device, "/dev/disk/by-path/pci-0000:00:1f.2-ata-1");
	assert_string_equal(c.goals[2].goal, "read-p50=1ms");
	assert_string_equal(c.goals[2].where, "t.conf:16");
	conf_done(&c);

	/* Every boolean spelling, case-insensitive. */
	static const struct {
		const char *v;
		bool b;
	} bools[] = {
		{ "yes", true }, { "true", true }, { "1", true }, { "on", true }, { "YES", true },
		{ "no", false }, { "false", false }, { "0", false }, { "off", false }, { "Off", false },
	};
	for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
		char text[128];

		snprintf(text, sizeof(text), "[Tuner]\nRollback=%s\nSwitchScheduler=%s\n", bools[i].v,
			 bools[i].v);
		assert_string_equal(parse(&c, text), "");
		assert_true(c.has_rollback && c.rollback == bools[i].b);
		assert_true(c.has_switch_scheduler && c.switch_scheduler == bools[i].b);
		conf_done(&c);
	}

	static const struct {
		const char *v;
		int level;
	} levels[] = {
		{ "err", LOG_LEVEL_ERR }, { "warning", LOG_LEVEL_WARNING }, { "notice", LOG_LEVEL_NOTICE },
		{ "info", LOG_LEVEL_INFO }, { "debug", LOG_LEVEL_DEBUG },
	};
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		char text[128];

		snprintf(text, sizeof(text), "[Tuner]\nLogLevel=%s\n", levels[i].v);
		assert_string_equal(parse(&c, text), "");
		assert_int_equal(c.log_level, levels[i].level);
		conf_done(&c);
	}

	/* Bounds are inclusive. */
	assert_string_equal(parse(&c, "[Tuner]\nInterval=10ms\nSettle=10s\nMaxDevices=1\n"), "");
	assert_true(c.interval_ns == 10 * NSEC_PER_MSEC && c.settle_ns == 10 * NSEC_PER_SEC &&
		    c.max_devices == 1);
	conf_done(&c);
	assert_string_equal(parse(&c, "[Tuner]\nInterval=3600s\nSettle=0ms\nMaxDevices=1024\n"), "");
	assert_true(c.interval_ns == 3600 * NSEC_PER_SEC && c.settle_ns == 0 && c.max_devices == 1024);
	conf_done(&c);
	assert_string_equal(parse(&c, "[Tuner]\nRecordMaxSize=4096\n"), "");
	assert_true(c.has_record_max && c.record_max_bytes == 4096);
	conf_done(&c);
	assert_string_equal(parse(&c, "[Tuner]\nRecordMaxSize=64M\nRecordMaxSize=1000G\n"), "");
	assert_true(c.record_max_bytes == 1000ull * 1000 * 1000 * 1000);
	conf_done(&c);
}

static void test_defaults_and_empty(void **state)
{
	struct conf c;

	assert_string_equal(parse(&c, ""), "");
	assert_false(c.has_interval || c.has_settle || c.has_rollback || c.has_switch_scheduler ||
		     c.has_max_devices || c.has_log_level || c.has_record);
	assert_int_equal(c.n_goals, 0);
	conf_done(&c);

	/* An empty value goes back to the default; Record= empty is "off". */
	assert_string_equal(parse(&c, "[Tuner]\nInterval=5s\nInterval=\nMaxDevices=3\nMaxDevices=\n"
				  "Rollback=no\nRollback=\nLogLevel=err\nLogLevel=\n"
				  "Record=/x\nRecord=\nMetricsFile=/m.prom\nMetricsFile=\n"), "");
	assert_false(c.has_interval || c.has_max_devices || c.has_rollback || c.has_log_level);
	assert_true(c.has_record && c.has_metrics);
	assert_null(c.record_path);
	assert_null(c.metrics_path);
	conf_done(&c);

	/* An empty goal drops an earlier goal for the device. */
	assert_string_equal(parse(&c, "[Goals]\na=read-p99=1ms\nb=read-p99=2ms\na=\n"), "");
	assert_int_equal(c.n_goals, 1);
	assert_string_equal(c.goals[0].device, "b");
	conf_done(&c);
}

static void test_bad_values(void **state)
{
	static const struct {
		const char *text, *warning;
	} cases[] = {
		{ "[Tuner]\nInterval=5ms\n",
		  "t.conf:2: Interval= must be between 10ms and 3600s (1h), ignoring: 5ms\n" },
		{ "[Tuner]\nInterval=3601s\n",
		  "t.conf:2: Interval= must be between 10ms and 3600s (1h), ignoring: 3601s\n" },
		{ "[Tuner]\nInterval=1\n",
		  "t.conf:2: Failed to parse Interval= value, ignoring: 1 (expected a duration with a "
		  "unit: ns, us, ms, s)\n" },
		{ "[Tuner]\nSettle=11s\n", "t.conf:2: Settle= must be at most 10s, ignoring: 11s\n" },
		{ "[Tuner]\nSettle=-1s\n",
		  "t.conf:2: Failed to parse Settle= value, ignoring: -1s (expected a duration with a "
		  "unit: ns, us, ms, s)\n" },
		{ "[Tuner]\nRollback=maybe\n",
		  "t.conf:2: Failed to parse boolean value for Rollback=, ignoring: maybe\n" },
		{ "[Tuner]\nSwitchScheduler=2\n",
		  "t.conf:2: Failed to parse boolean value for SwitchScheduler=, ignoring: 2\n" },
		{ "[Tuner]\nMaxDevices=0\n", "t.conf:2: MaxDevices= must be between 1 and 1024, ignoring: 0\n" },
		{ "[Tuner]\nMaxDevices=1025\n",
		  "t.conf:2: MaxDevices= must be between 1 and 1024, ignoring: 1025\n" },
		{ "[Tuner]\nMaxDevices=99999999999999999999999\n",
		  "t.conf:2: MaxDevices= must be between 1 and 1024, ignoring: 99999999999999999999999\n" },
		{ "[Tuner]\nMaxDevices=16k\n", "t.conf:2: Failed to parse MaxDevices= value, ignoring: 16k\n" },
#define RECORD_SIZE_WARN(v) "t.conf:2: RecordMaxSize= must be a size in bytes between 4096 and " \
	"1000000000000 (k, M, G multiply by 1000), ignoring: " v "\n"
		{ "[Tuner]\nRecordMaxSize=4095\n", RECORD_SIZE_WARN("4095") },
		{ "[Tuner]\nRecordMaxSize=0\n", RECORD_SIZE_WARN("0") },
		{ "[Tuner]\nRecordMaxSize=1001G\n", RECORD_SIZE_WARN("1001G") },
		{ "[Tuner]\nRecordMaxSize=64MB\n", RECORD_SIZE_WARN("64MB") },
		{ "[Tuner]\nRecordMaxSize=-1\n", RECORD_SIZE_WARN("-1") },
		{ "[Tuner]\nRecordMaxSize=lots\n", RECORD_SIZE_WARN("lots") },
		{ "[Tuner]\nLogLevel=loud\n",
		  "t.conf:2: Failed to parse LogLevel= value, ignoring: loud (use err, warning, notice, "
		  "info or debug)\n" },
		{ "[Tuner]\nRecord=record.pb\n", "t.conf:2: Record= path is not absolute, ignoring: record.pb\n" },
		{ "[Tuner]\nMetricsFile=kt.prom\n",
		  "t.conf:2: MetricsFile= path is not absolute, ignoring: kt.prom\n" },
		{ "[Tuner]\nSpeed=11\n", "t.conf:2: Unknown key name 'Speed' in section 'Tuner', ignoring.\n" },
		{ "[Tuner]\ninterval=1s\n",
		  "t.conf:2: Unknown key name 'interval' in section 'Tuner', ignoring.\n" },
		{ "[Turner]\nInterval=1s\nx=y\n", "t.conf:1: Unknown section 'Turner'. Ignoring.\n" },
		{ "[Tuner\nInterval=1s\n",
		  "t.conf:1: Invalid section header '[Tuner', ignoring the section.\n" },
		{ "[Tuner]x\n", "t.conf:1: Invalid section header '[Tuner]x', ignoring the section.\n" },
		{ "[]\n", "t.conf:1: Invalid section header '[]', ignoring the section.\n" },
		{ "Interval=1s\n", "t.conf:1: Assignment outside of section. Ignoring.\n" },
		{ "[Tuner]\nInterval\n", "t.conf:2: Missing '=', ignoring line.\n" },
		{ "[Tuner]\nInterval: 1s\n", "t.conf:2: Missing '=', ignoring line.\n" },
		{ "[Tuner]\nInterval #=1s\n", "t.conf:2: Missing '=', ignoring line.\n" },
		{ "[Tuner]\n=1s\n", "t.conf:2: Missing key name before '=', ignoring line.\n" },
		{ "[Goals]\nnvme0n1=read-p98=1ms\n",
		  "t.conf:2: Invalid goal for nvme0n1, ignoring: Invalid goal token 'read-p98=1ms': "
		  "unsupported percentile (use p50, p90, p95, p99 or p99.9)\n" },
		{ "[Goals]\nnvme0n1=mode=latency\n",
		  "t.conf:2: Invalid goal for nvme0n1, ignoring: Invalid goal 'mode=latency': a read goal "
		  "such as read-p99=100us is required (only mode=throughput goes without)\n" },
		{ "[Goals]\nnvme 0n1=read-p99=1ms\n",
		  "t.conf:2: Invalid device 'nvme 0n1' (expected a disk name such as nvme0n1 or a path "
		  "under /dev), ignoring.\n" },
		{ "[Goals]\n/sys/block/sda=read-p99=1ms\n",
		  "t.conf:2: Invalid device '/sys/block/sda' (expected a disk name such as nvme0n1 or a "
		  "path under /dev), ignoring.\n" },
		{ "[Goals]\n..=read-p99=1ms\n",
		  "t.conf:2: Invalid device '..' (expected a disk name such as nvme0n1 or a path under "
		  "/dev), ignoring.\n" },
		{ "[Goals]\nsda=read-p99=1ms\nsdb=read-p99=1ms\nsda=read-p99=2ms\n",
		  "t.conf:4: Duplicate goal for sda, overriding the one at line 2.\n" },
		{ "[Tuner]\nInterval=1s\x01\n", "t.conf:2: Line contains control characters, ignoring.\n" },
		{ "[Tuner]\nInterval=1s\rSettle=1ms\n",
		  "t.conf:2: Line contains control characters, ignoring.\n" },
		{ "[Goals]\nsd\xe9=read-p99=1ms\n", "t.conf:2: Line is not valid UTF-8, ignoring.\n" },
		{ "[Goals]\nsd\xc0\xaf=read-p99=1ms\n", "t.conf:2: Line is not valid UTF-8, ignoring.\n" },
		{ "[Goals]\nsd\xed\xa0\x80=read-p99=1ms\n", "t.conf:2: Line is not valid UTF-8, ignoring.\n" },
	};
	struct conf c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *w = parse(&c, cases[i].text);

		if (strcmp(w, cases[i].warning) != 0)
			fail_msg("case %zu: got '%s', want '%s'", i, w, cases[i].warning);
		assert_int_equal(c.warnings, 1);
		/* A rejected value leaves the default in place. */
		if (!strstr(cases[i].text, "Duplicate"))
			assert_false(c.has_interval || c.has_settle || c.has_max_devices ||
				     c.has_rollback || c.has_log_level || c.has_record);
		conf_done(&c);
	}

	/* The rest of the file still loads around a bad line. */
	assert_string_equal(parse(&c, "[Tuner]\nInterval=7\nSettle=100ms\n[Goals]\nsda=bogus\nsdb=read-p99=1ms\n"),
			    "t.conf:2: Failed to parse Interval= value, ignoring: 7 (expected a duration "
			    "with a unit: ns, us, ms, s)\n"
			    "t.conf:5: Invalid goal for sda, ignoring: Invalid goal token 'bogus': expected "
			    "KEY=VALUE\n");
	assert_int_equal(c.warnings, 2);
	assert_false(c.has_interval);
	assert_true(c.has_settle && c.settle_ns == 100 * NSEC_PER_MSEC);
	assert_int_equal(c.n_goals, 1);
	assert_string_equal(c.goals[0].device, "sdb");
	assert_string_equal(c.goals[0].where, "t.conf:6");
	conf_done(&c);
}

static void test_odd_text(void **state)
{
	struct conf c;
	char big[4096];

	/* CRLF, a BOM, leading blanks (never a continuation line), tabs. */
	assert_string_equal(parse(&c, "\xef\xbb\xbf[Tuner]\r\n  Interval=2s\r\n\tSettle=1s\r\n"
				  "   Rollback = yes\n"), "");
	assert_true(c.has_interval && c.interval_ns == 2 * NSEC_PER_SEC);
	assert_true(c.has_settle && c.settle_ns == NSEC_PER_SEC);
	assert_true(c.has_rollback && c.rollback);
	conf_done(&c);

	/* No newline at the end; '#' inside a value is not a comment. */
	assert_string_equal(parse(&c, "[Tuner]\nRecord=/var/lib/k#1"), "");
	assert_string_equal(c.record_path, "/var/lib/k#1");
	conf_done(&c);

	/* Keys of an unknown section are ignored silently after one warning. */
	assert_string_equal(parse(&c, "[Foo]\na=b\nc=d\n[Tuner]\nMaxDevices=2\n"),
			    "t.conf:1: Unknown section 'Foo'. Ignoring.\n");
	assert_true(c.has_max_devices && c.max_devices == 2);
	conf_done(&c);

	/* A line too long for inih is one warning, not two half lines. */
	memset(big, 0, sizeof(big));
	strcpy(big, "[Goals]\nsda=read-p99=1ms mode=latency");
	memset(big + strlen(big), ' ', 300);
	strcat(big, "mode=advise\nsdb=read-p99=1ms\n");
	{
		const char *w = parse(&c, big);

		assert_non_null(strstr(w, "t.conf:2: Line too long ("));
		assert_non_null(strstr(w, "), ignoring.\n"));
		assert_null(strchr(strchr(w, '\n') + 1, '\n'));
	}
	assert_int_equal(c.n_goals, 1);
	assert_string_equal(c.goals[0].device, "sdb");
	assert_string_equal(c.goals[0].where, "t.conf:3");
	conf_done(&c);

	/* NUL bytes in the middle of the text. */
	{
		static const char text[] = "[Tuner]\nInterval=2s\0junk\nMaxDevices=5\n";

		memset(&c, 0, sizeof(c));
		capture_begin();
		assert_int_equal(conf_parse_text(&c, text, sizeof(text) - 1, "t.conf"), 0);
		assert_string_equal(capture_end(), "t.conf:2: Line contains control characters, ignoring.\n");
		assert_false(c.has_interval);
		assert_true(c.has_max_devices && c.max_devices == 5);
		conf_done(&c);
	}

	/* NULL text and name are harmless. */
	memset(&c, 0, sizeof(c));
	assert_int_equal(conf_parse_text(&c, NULL, 0, NULL), 0);
	conf_done(&c);
	conf_done(NULL);
}

static void test_load_dropins(void **state)
{
	struct conf c = {};
	const char *w;
	char expect[2048];

	put("main.conf", "[Tuner]\nInterval=2s\nSettle=500ms\nMaxDevices=8\n"
	    "[Goals]\nsda=read-p99=1ms\nsdb=read-p99=2ms\n");
	/* Lexical (byte) order: "10-b" < "20-a" < "B" < "a", whatever the locale. */
	put("conf.d/20-a.conf", "[Tuner]\nMaxDevices=20\n[Goals]\nsda=read-p99=5ms mode=advise\n");
	put("conf.d/10-b.conf", "[Tuner]\nMaxDevices=10\nLogLevel=notice\n");
	put("conf.d/B.conf", "[Tuner]\nMaxDevices=30\n");
	put("conf.d/a.conf", "[Tuner]\nMaxDevices=40\n[Goals]\nsdc=read-p99=3ms\nsdb=\n");
	/* Not drop-ins: wrong suffix, hidden, a directory named *.conf. */
	put("conf.d/README", "[Tuner]\nMaxDevices=50\n");
	put("conf.d/c.conf.bak", "[Tuner]\nMaxDevices=60\n");
	put("conf.d/.hidden.conf", "[Tuner]\nMaxDevices=70\n");
	assert_int_equal(mkdir(path_of("conf.d/z.conf"), 0755), 0);

	capture_begin();
	assert_int_equal(conf_load(&c, path_of("main.conf"), path_of("conf.d")), 0);
	w = capture_end();
	snprintf(expect, sizeof(expect), "%s: Not a regular file, ignoring.\n", path_of("conf.d/z.conf"));
	assert_string_equal(w, expect);
	assert_int_equal(c.warnings, 1);
	assert_true(c.has_interval && c.interval_ns == 2 * NSEC_PER_SEC);
	assert_true(c.has_settle && c.settle_ns == 500 * NSEC_PER_MSEC);
	assert_true(c.has_max_devices && c.max_devices == 40);
	assert_true(c.has_log_level && c.log_level == LOG_LEVEL_NOTICE);
	/* sda replaced in place by 20-a.conf, without a warning; sdb dropped. */
	assert_int_equal(c.n_goals, 2);
	assert_string_equal(c.goals[0].device, "sda");
	assert_string_equal(c.goals[0].goal, "read-p99=5ms mode=advise");
	snprintf(expect, sizeof(expect), "%s:4", path_of("conf.d/20-a.conf"));
	assert_string_equal(c.goals[0].where, expect);
	assert_string_equal(c.goals[1].device, "sdc");
	snprintf(expect, sizeof(expect), "%s:4", path_of("conf.d/a.conf"));
	assert_string_equal(c.goals[1].where, expect);
	conf_done(&c);

	/* A warning in a drop-in names that file and line. */
	put("conf.d/a.conf", "[Tuner]\nBogus=1\n");
	capture_begin();
	assert_int_equal(conf_load(&c, NULL, path_of("conf.d")), 0);
	w = capture_end();
	snprintf(expect, sizeof(expect), "%s:2: Unknown key name 'Bogus' in section 'Tuner', ignoring.\n",
		 path_of("conf.d/a.conf"));
	assert_non_null(strstr(w, expect));
	conf_done(&c);
	assert_int_equal(rmdir(path_of("conf.d/z.conf")), 0);
}

static void test_load_missing(void **state)
{
	struct conf c = {};
	char expect[1024];

	capture_begin();
	assert_int_equal(conf_load(&c, path_of("nope.conf"), path_of("nope.d")), 0);
	assert_string_equal(capture_end(), "");
	assert_int_equal(c.warnings, 0);
	assert_false(c.has_interval);
	conf_done(&c);

	/* Main file missing, drop-ins still read; and the reverse. */
	put("conf.d/a.conf", "[Tuner]\nMaxDevices=3\n");
	assert_int_equal(conf_load(&c, path_of("nope.conf"), path_of("conf.d")), 0);
	assert_true(c.has_max_devices && c.max_devices == 3);
	conf_done(&c);
	put("main.conf", "[Tuner]\nMaxDevices=4\n");
	assert_int_equal(conf_load(&c, path_of("main.conf"), path_of("nope.d")), 0);
	assert_true(c.has_max_devices && c.max_devices == 4);
	conf_done(&c);

	/* A drop-in "directory" that is a file is an I/O error. */
	capture_begin();
	assert_int_equal(conf_load(&c, NULL, path_of("main.conf")), -ENOTDIR);
	snprintf(expect, sizeof(expect), "Failed to read %s: Not a directory\n", path_of("main.conf"));
	assert_string_equal(capture_end(), expect);
	conf_done(&c);
	unlink(path_of("conf.d/a.conf"));
}

static void test_settle_vs_interval(void **state)
{
	struct conf c = {};
	char expect[1024];

	/* Settle= before Interval=, and in another file: fine. */
	put("main.conf", "[Tuner]\nSettle=2s\n");
	put("conf.d/a.conf", "[Tuner]\nInterval=5s\n");
	capture_begin();
	assert_int_equal(conf_load(&c, path_of("main.conf"), path_of("conf.d")), 0);
	assert_string_equal(capture_end(), "");
	assert_true(c.has_settle && c.has_interval);
	conf_done(&c);

	/* Settle= not shorter than the final Interval=: Settle= is dropped. */
	put("conf.d/a.conf", "[Tuner]\nInterval=2s\n");
	capture_begin();
	assert_int_equal(conf_load(&c, path_of("main.conf"), path_of("conf.d")), 0);
	snprintf(expect, sizeof(expect), "%s:2: Settle=2.00s is not shorter than Interval=2.00s, ignoring.\n",
		 path_of("main.conf"));
	assert_string_equal(capture_end(), expect);
	assert_true(!c.has_settle && c.has_interval && c.interval_ns == 2 * NSEC_PER_SEC);
	assert_int_equal(c.warnings, 1);
	conf_done(&c);

	/* Only Settle= or only Interval= here: the daemon checks them against
	 * its defaults and the command line. */
	put("main.conf", "[Tuner]\nInterval=100ms\n");
	unlink(path_of("conf.d/a.conf"));
	capture_begin();
	assert_int_equal(conf_load(&c, path_of("main.conf"), path_of("conf.d")), 0);
	assert_string_equal(capture_end(), "");
	assert_true(c.has_interval && !c.has_settle);
	conf_done(&c);
	put("main.conf", "[Tuner]\nSettle=5s\n");
	capture_begin();
	assert_int_equal(conf_load(&c, path_of("main.conf"), NULL), 0);
	assert_string_equal(capture_end(), "");
	assert_true(!c.has_interval && c.has_settle);
	conf_done(&c);

	put("main.conf", "[Tuner]\nInterval=100ms\nSettle=20ms\n");
	capture_begin();
	assert_int_equal(conf_load(&c, path_of("main.conf"), NULL), 0);
	assert_string_equal(capture_end(), "");
	assert_true(c.has_interval && c.has_settle);
	conf_done(&c);
}

/* [Weights] DEVICE:CGROUP=WEIGHT: normalized cgroups, a later line for
 * the same pair wins, an empty weight drops one; bad lines are warnings
 * naming what is wrong, and change nothing. */
static void test_weights(void **state)
{
	struct conf c;
	const char *w;

	w = parse(&c, "[Weights]\n"
		      "nvme0n1:system.slice/db.service=1000\n"
		      "/dev/disk/by-id/nvme-Foo:/tenants/a/=250\n"
		      "nvme0n1:tenants/b=500\n"
		      "nvme0n1:tenants/b=600\n"
		      "nvme0n1:tenants/c=100\n"
		      "nvme0n1:tenants/c=\n"
		      "nvme0n1=100\n"
		      "nvme0n1:../x=100\n"
		      "nvme0n1:tenants/d=0\n"
		      "nvme0n1:tenants/d=10001\n"
		      "nvme0n1:tenants/d=1k\n"
		      "a b:tenants/d=5\n");
	assert_int_equal(c.n_weights, 3);
	assert_string_equal(c.weights[0].device, "nvme0n1");
	assert_string_equal(c.weights[0].cgroup, "system.slice/db.service");
	assert_int_equal(c.weights[0].weight, 1000);
	assert_string_equal(c.weights[1].device, "/dev/disk/by-id/nvme-Foo");
	assert_string_equal(c.weights[1].cgroup, "tenants/a");
	assert_string_equal(c.weights[2].cgroup, "tenants/b");
	assert_int_equal(c.weights[2].weight, 600);
	assert_string_equal(c.weights[2].where, "t.conf:5");
	assert_non_null(strstr(w, "t.conf:8: Invalid key 'nvme0n1' (expected DEVICE:CGROUP"));
	assert_non_null(strstr(w, "t.conf:9: Invalid cgroup '../x' for nvme0n1: \".\" and \"..\" are not cgroups"));
	assert_non_null(strstr(w, "t.conf:10: Invalid weight '0' for cgroup tenants/d on nvme0n1 (expected 1-10000"));
	assert_non_null(strstr(w, "t.conf:11: Invalid weight '10001'"));
	assert_non_null(strstr(w, "t.conf:12: Invalid weight '1k'"));
	assert_non_null(strstr(w, "t.conf:13: Invalid device 'a b'"));
	assert_int_equal(c.warnings, 6);
	conf_done(&c);
}

/* The installed example: nothing set as shipped; uncommented, every key
 * holds the default the comments and kyber-tuned.conf(5) give. */
static void test_example(void **state)
{
	static const char path[] = "systemd/kyber-tuned.conf";
	struct conf c = {};
	char text[8192], *out = text;
	FILE *f;

	capture_begin();
	assert_int_equal(conf_load(&c, path, NULL), 0);
	assert_string_equal(capture_end(), "");
	assert_false(c.has_interval || c.has_settle || c.has_rollback || c.has_switch_scheduler ||
		     c.has_max_devices || c.has_log_level || c.has_record || c.n_goals);
	conf_done(&c);

	f = fopen(path, "re");
	assert_non_null(f);
	for (char line[512]; fgets(line, sizeof(line), f);) {
		bool setting = line[0] == '#' && line[1] != ' ' && line[1] != '\n' && strchr(line, '=');

		out += snprintf(out, sizeof(text) - (size_t)(out - text), "%s", line + setting);
	}
	fclose(f);
	assert_string_equal(parse(&c, text), "");
	assert_true(c.has_interval && c.interval_ns == NSEC_PER_SEC);
	assert_true(c.has_settle && c.settle_ns == 300 * NSEC_PER_MSEC);
	assert_true(c.has_rollback && c.rollback);
	assert_true(c.has_switch_scheduler && c.switch_scheduler);
	assert_true(c.has_max_devices && c.max_devices == 16);
	assert_true(c.has_log_level && c.log_level == LOG_LEVEL_INFO);
	assert_true(c.has_record && !c.record_path);
	assert_true(c.has_metrics && !c.metrics_path);
	assert_int_equal(c.n_goals, 2);
	conf_done(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_defaults_and_empty),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_odd_text),
		cmocka_unit_test(test_load_dropins),
		cmocka_unit_test(test_load_missing),
		cmocka_unit_test(test_settle_vs_interval),
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_weights),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
