/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: the goal grammar (shared/goal.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "error.h"
#include "goal.h"

/* The error of the call about to be made: the last one's freed. */
static sd_bus_error *fresh(sd_bus_error *e)
{
	sd_bus_error_free(e);
	return e;
}

static void test_good(void **state)
{
	static const struct {
		const char *text, *canonical;
	} cases[] = {
		{ "read-p99=100us", "read-p99=100us mode=latency" },
		{ "read-p99=2ms", "read-p99=2ms mode=latency" },
		{ "read-p50=1.5ms,write-iops-min=20k", "read-p50=1500us write-iops-min=20000 mode=latency" },
		{ "  read-p99.9=1s   mode=advise ", "read-p99.9=1s mode=advise" },
		{ "mode=throughput", "mode=throughput" },
		{ "read-p95=250us mode=balanced", "read-p95=250us mode=balanced" },
		{ "read-p90=10us\twrite-iops-min=1.5M", "read-p90=10us write-iops-min=1500000 mode=latency" },
		{ "scheduler=auto read-p99=1ms", "read-p99=1ms mode=latency" },
		{ "read-p99=1ms scheduler=kyber", "read-p99=1ms mode=latency scheduler=kyber" },
		{ "mode=throughput scheduler=kyber", "mode=throughput scheduler=kyber" },
	};
	char buf[GOAL_TEXT_MAX];
	struct goal g, again;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(goal_parse(cases[i].text, &g, NULL), 0);
		assert_string_equal(goal_format(&g, buf, sizeof(buf)), cases[i].canonical);
		/* The canonical form parses back to the same goal. */
		assert_int_equal(goal_parse(buf, &again, NULL), 0);
		assert_memory_equal(&g, &again, sizeof(g));
	}
	assert_int_equal(goal_parse("read-p99=100us", &g, NULL), 0);
	assert_true(g.has_read && g.read_pct == 99 && g.read_ns == 100000 && g.mode == GOAL_MODE_LATENCY);
	/* Kyber runs where it buys something unless the goal says always. */
	assert_int_equal(g.scheduler, GOAL_SCHEDULER_AUTO);
	/* Equal whatever the spelling; any field differing makes them differ. */
	assert_int_equal(goal_parse("read-p99=0.1ms mode=latency", &again, NULL), 0);
	assert_true(goal_equal(&g, &again));
	assert_int_equal(goal_parse("read-p99.9=100us", &again, NULL), 0);
	assert_false(goal_equal(&g, &again));
	assert_int_equal(goal_parse("read-p99=100us write-iops-min=1", &again, NULL), 0);
	assert_false(goal_equal(&g, &again));
	assert_int_equal(goal_parse("read-p99=100us mode=advise", &again, NULL), 0);
	assert_false(goal_equal(&g, &again));
	assert_int_equal(goal_parse("read-p99=100us scheduler=kyber", &again, NULL), 0);
	assert_false(goal_equal(&g, &again));
}

static void test_bad_names_the_token(void **state)
{
	static const struct {
		const char *text, *token, *why;
	} cases[] = {
		{ "read-p98=1ms", "read-p98=1ms", "unsupported percentile" },
		{ "read-p99=1", "read-p99=1", "with a unit" },
		{ "read-p99=-1ms", "read-p99=-1ms", "with a unit" },
		{ "read-p99=0us", "read-p99=0us", "out of range" },
		{ "read-p99=200s", "read-p99=200s", "out of range" },
		{ "read-p99=1ms read-p50=1ms", "read-p50=1ms", "more than one read goal" },
		{ "read-p99=1ms mode=fast", "mode=fast", "unknown mode" },
		{ "read-p99=1ms mode=latency mode=advise", "mode=advise", "given twice" },
		{ "read-p99=1ms write-iops-min=lots", "write-iops-min=lots", "positive count" },
		{ "read-p99=1ms write-iops-min=0", "write-iops-min=0", "positive count" },
		{ "read-p99=1ms bogus=1", "bogus=1", "unknown key" },
		{ "read-p99=1ms scheduler=bfq", "scheduler=bfq", "unknown scheduler policy" },
		{ "read-p99=1ms scheduler=auto scheduler=kyber", "scheduler=kyber", "given twice" },
		{ "read-p99", "read-p99", "KEY=VALUE" },
		{ "=1ms", "=1ms", "KEY=VALUE" },
		{ "read-p99=", "read-p99=", "KEY=VALUE" },
	};
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	struct goal g;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(goal_parse(cases[i].text, &g, fresh(&error)), -EINVAL);
		assert_non_null(strstr(error.message, cases[i].token));
		assert_non_null(strstr(error.message, cases[i].why));
	}
	assert_int_equal(goal_parse("", &g, fresh(&error)), -EINVAL);
	assert_non_null(strstr(error.message, "read goal"));
	assert_int_equal(goal_parse("mode=latency", &g, fresh(&error)), -EINVAL);
	assert_int_equal(goal_parse("read-p99=1ms\x01", &g, fresh(&error)), -EINVAL);
	assert_int_equal(goal_parse(NULL, &g, fresh(&error)), -EINVAL);
	/* A long token is cut in the message, not overflowed. */
	char longtok[400];
	memset(longtok, 'a', sizeof(longtok) - 1);
	longtok[sizeof(longtok) - 1] = 0;
	assert_int_equal(goal_parse(longtok, &g, fresh(&error)), -EINVAL);
	assert_non_null(strstr(error.message, "too long"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad_names_the_token),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
