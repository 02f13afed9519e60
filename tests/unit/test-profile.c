/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: per-model profiles, their text format and matching (daemon/profile.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profile.h"

static const char two_records[] =
	"# fleet profiles\n"
	"profile:Samsung SSD 980 PRO 1TB:5B2QGXA7\n"
	" GOAL=read-p99=2ms\n"
	" READ_TARGET_NSEC=2000000\n"
	" WRITE_TARGET_NSEC=1414213\n"
	" WRITE_FREE_P99_NSEC=9000000\n"
	" WRITE_FREE_IOPS=16000\n"
	"\n"
	"profile:Samsung SSD 980*:*\n"
	" GOAL=read-p99=2ms\n"
	" READ_TARGET_NSEC=1900000\n"
	" WRITE_TARGET_NSEC=2000000\n";

static struct goal goal_of(const char *text)
{
	struct goal g;

	assert_int_equal(goal_parse(text, &g, NULL), 0);
	return g;
}

static void test_parse_and_match(void **state)
{
	struct profiles p = {};
	struct goal g = goal_of("read-p99=2ms scheduler=kyber");
	const struct profile *e;
	char why[160];

	assert_int_equal(profiles_parse(two_records, strlen(two_records), &p, why, sizeof(why)), 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.v[0].model, "Samsung SSD 980 PRO 1TB");
	assert_string_equal(p.v[0].firmware, "5B2QGXA7");
	assert_true(p.v[0].targets.read_ns == 2000000 && p.v[0].targets.write_ns == 1414213);
	assert_true(p.v[0].write_free_p99_ns == 9000000 && p.v[0].write_free_iops == 16000);
	assert_true(p.v[1].write_free_p99_ns == 0 && p.v[1].write_free_iops == 0);

	/* Exact model and firmware first; the scheduler policy aside. */
	e = profiles_match(&p, "Samsung SSD 980 PRO 1TB", "5B2QGXA7", &g);
	assert_ptr_equal(e, &p.v[0]);
	/* Other firmware: the glob. */
	e = profiles_match(&p, "Samsung SSD 980 PRO 1TB", "6B2QGXA7", &g);
	assert_ptr_equal(e, &p.v[1]);
	/* Another goal, or another model: nothing. */
	g = goal_of("read-p99=1ms");
	assert_null(profiles_match(&p, "Samsung SSD 980 PRO 1TB", "5B2QGXA7", &g));
	g = goal_of("read-p99=2ms");
	assert_null(profiles_match(&p, "WDC WDS100T", "1", &g));
	profiles_done(&p);
}

static void test_format_round_trip(void **state)
{
	struct profile in = {
		.model = "loop", .firmware = "",
		.targets = { 1500000, 3000000 }, .write_free_p99_ns = 12000000, .write_free_iops = 5123.4,
	};
	struct profiles p = {};
	char *text = NULL, why[160];
	size_t len = 0;
	FILE *f;

	in.goal = goal_of("read-p99.9=3ms write-iops-min=1000 scheduler=kyber");
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(profile_format(f, &in, "learned on loop0"), 0);
	assert_int_equal(fclose(f), 0);
	assert_non_null(strstr(text, "# learned on loop0\nprofile:loop:\n GOAL=read-p99.9=3ms write-iops-min=1000"));
	/* The policy is the importer's: not exported. */
	assert_null(strstr(text, "scheduler="));
	assert_int_equal(profiles_parse(text, len, &p, why, sizeof(why)), 0);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.v[0].model, "loop");
	assert_string_equal(p.v[0].firmware, "");
	assert_true(p.v[0].targets.read_ns == 1500000 && p.v[0].targets.write_ns == 3000000);
	assert_true(p.v[0].write_free_iops == 5123);
	assert_non_null(profiles_match(&p, "loop", "", &in.goal));
	profiles_done(&p);
	free(text);
}

/* Every malformed file is refused whole, naming its line and problem. */
static void test_refused(void **state)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "profile:m:f\n GOAL=read-p99=2ms\n READ_TARGET_NSEC=1\n WRITE_TARGET_NSEC=2000\n",
		  "line 3: READ_TARGET_NSEC= out of" },
		{ "profile:m:f\n GOAL=read-p99=2ms\n READ_TARGET_NSEC=2000\n", "record without WRITE_TARGET_NSEC=" },
		{ "profile:m:f\n READ_TARGET_NSEC=2000\n WRITE_TARGET_NSEC=2000\n", "record without GOAL=" },
		{ "profile:m:f\n GOAL=read-p42=2ms\n", "line 2: invalid GOAL=" },
		{ "profile:m:f\n GOALS=read-p99=2ms\n", "line 2: unknown property 'GOALS'" },
		{ " GOAL=read-p99=2ms\n", "line 1: property outside a record" },
		{ "profile:m\n", "line 1: match line without ':FIRMWARE'" },
		{ "model:m:f\n", "line 1: expected a match line" },
		{ "pro\n", "line 1: expected a match line" },	/* shorter than the prefix */
		{ "profile::f\n", "line 1: model empty" },
		{ "profile:m:f\n novalue\n", "line 2: expected ' KEY=VALUE'" },
		{ "profile:m:f\n WRITE_FREE_IOPS=nan\n", "line 2: invalid WRITE_FREE_IOPS=" },
		{ "profile:m:f\n WRITE_FREE_IOPS=-1\n", "line 2: invalid WRITE_FREE_IOPS=" },
		{ "profile:m:f\n WRITE_FREE_P99_NSEC=12x\n", "line 2: invalid WRITE_FREE_P99_NSEC=" },
	};
	struct profiles p = {};
	char why[160], longline[400];

	/* What parsed before stays; the bad text adds nothing. */
	assert_int_equal(profiles_parse(two_records, strlen(two_records), &p, why, sizeof(why)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(profiles_parse(bad[i].text, strlen(bad[i].text), &p, why, sizeof(why)), -EBADMSG);
		if (!strstr(why, bad[i].why))
			fail_msg("'%s': got '%s', want '%s'", bad[i].text, why, bad[i].why);
		assert_int_equal(p.n, 2);
	}
	memset(longline, 'x', sizeof(longline));
	assert_int_equal(profiles_parse(longline, sizeof(longline), &p, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "line 1: line too long"));
	assert_int_equal(profiles_parse("profile:m:f\n\0", 13, &p, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "line 2: NUL byte"));
	assert_int_equal(p.n, 2);
	profiles_done(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_match),
		cmocka_unit_test(test_format_round_trip),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
