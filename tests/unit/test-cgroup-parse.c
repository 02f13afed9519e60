/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: the cgroup files kyber-tuned limits I/O with (daemon/cgroup-parse.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cgroup-parse.h"

static void test_mountinfo(void **state)
{
	char mnt[128];
	enum cgroup_version v;
	bool blkio;

	assert_int_equal(cgroup_parse_mountinfo_line(
		"35 24 0:30 / /sys/fs/cgroup/blkio rw,nosuid,nodev shared:9 - cgroup cgroup rw,blkio\n",
		mnt, sizeof(mnt), &v, &blkio), 0);
	assert_string_equal(mnt, "/sys/fs/cgroup/blkio");
	assert_int_equal(v, CGROUP_V1);
	assert_true(blkio);
	assert_int_equal(cgroup_parse_mountinfo_line(
		"33 24 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct", mnt, sizeof(mnt), &v,
		&blkio), 0);
	assert_false(blkio);
	/* No optional fields; an escaped space in the mount point. */
	assert_int_equal(cgroup_parse_mountinfo_line(
		"40 24 0:33 / /sys/fs/cgroup/my\\040unified rw - cgroup2 cgroup2 rw,nsdelegate", mnt,
		sizeof(mnt), &v, &blkio), 0);
	assert_string_equal(mnt, "/sys/fs/cgroup/my unified");
	assert_int_equal(v, CGROUP_V2);
	assert_int_equal(cgroup_parse_mountinfo_line(
		"22 1 254:0 / / rw,relatime - ext4 /dev/vda rw", mnt, sizeof(mnt), &v, &blkio), -ENOENT);
	assert_int_equal(cgroup_parse_mountinfo_line("22 1 254:0 / /", mnt, sizeof(mnt), &v, &blkio),
			 -EINVAL);
	assert_int_equal(cgroup_parse_mountinfo_line("", mnt, sizeof(mnt), &v, &blkio), -EINVAL);
	assert_int_equal(cgroup_parse_mountinfo_line(
		"35 24 0:30 / /sys/fs/cgroup/blkio rw - cgroup cgroup rw,blkio", mnt, 8, &v, &blkio),
		-ENAMETOOLONG);
}

static void test_v1(void **state)
{
	char buf[64];
	uint64_t v;

	assert_int_equal(cgroup_v1_limit_parse("", 7, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(cgroup_v1_limit_parse("8:0 500\n7:0 1200\n", 7, 0, &v), 0);
	assert_int_equal(v, 1200);
	assert_int_equal(cgroup_v1_limit_parse("8:0 500\n", 7, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(cgroup_v1_limit_parse("7:0\n", 7, 0, &v), -EINVAL);
	assert_int_equal(cgroup_v1_limit_parse("7:0 12x\n", 7, 0, &v), -EINVAL);
	assert_int_equal(cgroup_v1_limit_parse("7:0 12 13\n", 7, 0, &v), -EINVAL);
	assert_int_equal(cgroup_v1_limit_parse("sda 12\n", 7, 0, &v), -EINVAL);
	assert_int_equal(cgroup_v1_limit_format(buf, sizeof(buf), 7, 0, 1200), 0);
	assert_string_equal(buf, "7:0 1200");
	assert_int_equal(cgroup_v1_limit_format(buf, 5, 7, 0, 1200), -ENOBUFS);
	assert_string_equal(cgroup_v1_limit_file(CGROUP_LIMIT_WRITE_IOPS), "blkio.throttle.write_iops_device");
}

static void test_v2(void **state)
{
	struct cgroup_limits l, want = { .read_iops = 5000, .write_bps = 1048576 };
	char buf[128];

	assert_int_equal(cgroup_v2_max_parse(
		"8:0 rbps=max wbps=max riops=10 wiops=max\n7:0 rbps=max wbps=1048576 riops=5000 wiops=max\n",
		7, 0, &l), 0);
	assert_true(cgroup_limits_equal(&l, &want));
	assert_int_equal(cgroup_v2_max_parse("8:0 riops=10\n", 7, 0, &l), 0);
	assert_int_equal(l.read_iops, 0);
	assert_int_equal(cgroup_v2_max_format(buf, sizeof(buf), 7, 0, &want), 0);
	assert_string_equal(buf, "7:0 rbps=max wbps=1048576 riops=5000 wiops=max");
	assert_int_equal(cgroup_v2_max_parse(buf, 7, 0, &l), 0);
	assert_true(cgroup_limits_equal(&l, &want));
	assert_int_equal(cgroup_v2_max_parse("7:0 riops\n", 7, 0, &l), -EINVAL);
	assert_int_equal(cgroup_v2_max_parse("7:0 xiops=4\n", 7, 0, &l), -EINVAL);
	assert_int_equal(cgroup_v2_max_parse("7:0 riops=-4\n", 7, 0, &l), -EINVAL);
}

static void test_path(void **state)
{
	static const struct {
		const char *in, *out;
		int r;
	} cases[] = {
		{ "tenants/a", "tenants/a", 0 },
		{ "/system.slice/db.service/", "system.slice/db.service", 0 },
		{ "a b/c", "a b/c", 0 },
		{ "", NULL, -EINVAL },
		{ "/", NULL, -EINVAL },
		{ "a//b", NULL, -EINVAL },
		{ "a/../b", NULL, -EINVAL },
		{ "./a", NULL, -EINVAL },
		{ "a/\x1b[31m", NULL, -EINVAL },
		{ "a/\xff", NULL, -EINVAL },
	};
	char out[CGROUP_PATH_MAX], longer[CGROUP_PATH_MAX + 8];
	const char *why;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(cgroup_path_normalize(cases[i].in, out, sizeof(out), &why), cases[i].r);
		if (cases[i].r == 0)
			assert_string_equal(out, cases[i].out);
		else
			assert_non_null(why);
	}
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = 0;
	assert_int_equal(cgroup_path_normalize(longer, out, sizeof(out), &why), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
