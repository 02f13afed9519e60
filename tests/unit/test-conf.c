/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: daemon/conf.c and conf-weights.c, on text: every key and
 * section, their defaults, bad values and odd text, each warning's exact
 * text (conf-samples.h captures it). Loading files and drop-ins is in
 * test-conf-load.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conf.h"
#include "conf-samples.h"
#include "log.h"
#include "parse-util.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_defaults_and_empty),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_odd_text),
		cmocka_unit_test(test_weights),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
