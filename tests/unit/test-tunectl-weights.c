/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: kyber-tunectl weights' table and JSON (tunectl/tunectl-weights.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "json-line.h"
#include "tunectl-weights.h"

static const struct tf_share rows[] = {
	{ .cgroup = "tenants/a", .weight = 1000, .weighted = true, .share = 0.541, .read_iops = 7550,
	  .write_iops = 7520, .read_bps = 30.9e6, .write_bps = 30.8e6, .read_p99_ns = 5560000,
	  .write_p99_ns = 5560000, .limit_read_iops = 8430, .limit_write_iops = 8430 },
	{ .cgroup = "odd\x1b[31m", .weight = 100, .share = 0.1, .write_iops = 10 },
};

static char *capture(int (*json)(FILE *, const char *, const struct tf_share *, size_t),
		     void (*print)(FILE *, const char *, const struct tf_share *, size_t), size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (json)
		assert_int_equal(json(f, "loop0", rows, n), 0);
	else
		print(f, "loop0", rows, n);
	fclose(f);
	return buf;
}

static void test_table(void **state)
{
	char *t = capture(NULL, tf_shares_print, 2);

	assert_non_null(strstr(t, "CGROUP"));
	assert_non_null(strstr(t, "tenants/a"));
	assert_non_null(strstr(t, "54.1%"));
	assert_non_null(strstr(t, "8.43k"));
	assert_non_null(strstr(t, "5.56ms"));
	assert_null(strchr(t, '\x1b'));		/* escaped */
	assert_non_null(strstr(t, "odd?[31m"));
	assert_non_null(strstr(t, "  100*"));	/* no weight set: the default */
	free(t);
	t = capture(NULL, tf_shares_print, 0);
	assert_non_null(strstr(t, "(no cgroup has a weight on loop0)"));
	free(t);
}

static void test_json(void **state)
{
	char *t = capture(tf_shares_json, NULL, 2);
	json_object *o = parse_json_line(t), *cg, *r, *v;

	assert_string_equal(json_object_get_string(json_object_object_get(o, "device")), "loop0");
	cg = json_object_object_get(o, "cgroups");
	assert_int_equal(json_object_array_length(cg), 2);
	r = json_object_array_get_idx(cg, 0);
	assert_int_equal(json_object_get_int(json_object_object_get(r, "weight")), 1000);
	assert_true(json_object_get_boolean(json_object_object_get(r, "weight_set")));
	assert_int_equal(json_object_get_int64(json_object_object_get(r, "read_p99_ns")), 5560000);
	v = json_object_object_get(json_object_object_get(r, "limit"), "write_iops");
	assert_int_equal(json_object_get_int64(v), 8430);
	r = json_object_array_get_idx(cg, 1);
	assert_false(json_object_get_boolean(json_object_object_get(r, "weight_set")));
	assert_true(json_object_object_get_ex(r, "read_p99_ns", &v) && v == NULL);	/* null */
	assert_string_equal(json_object_get_string(json_object_object_get(r, "cgroup")), "odd\x1b[31m");
	json_object_put(o);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
