/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests: daemon/conf-load.c, on fake files in a temp dir: the main
 * file and its drop-ins, in order, missing or unreadable, Settle= checked
 * against the final Interval=, and the installed example file. Parsing
 * the text of one file is in test-conf.c.
 */
#include <errno.h>
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
#include "conf-samples.h"
#include "log.h"
#include "parse-util.h"
#include "tmp-tree.h"

static char root[] = "/tmp/kt-conf-XXXXXX";

static void put(const char *rel, const char *content)
{
	tmp_tree_put(root, rel, content);
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
		cmocka_unit_test(test_load_dropins),
		cmocka_unit_test(test_load_missing),
		cmocka_unit_test(test_settle_vs_interval),
		cmocka_unit_test(test_example),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
