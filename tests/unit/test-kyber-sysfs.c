/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: daemon/kyber-sysfs.c against a fake sysfs tree in a temp dir. */
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

#include "kyber-sysfs.h"
#include "tmp-tree.h"

static char root[] = "/tmp/kt-sysfs-XXXXXX";

static void put(const char *rel, const char *content)
{
	tmp_tree_put(root, rel, content);
}

static char *get(const char *rel)
{
	static char buf[256];
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static int setup(void **state)
{
	char path[512];

	if (!mkdtemp(root))
		return -1;
	snprintf(path, sizeof(path), "%s/block", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/block/fake0", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/block/fake0/queue", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/block/fake0/queue/iosched", root);
	mkdir(path, 0755);
	put("block/fake0/queue/scheduler", "mq-deadline [kyber] bfq none\n");
	put("block/fake0/queue/iosched/read_lat_nsec", "2000000\n");
	put("block/fake0/queue/iosched/write_lat_nsec", "10000000\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_sched_parse(void **state)
{
	struct sched_info si;

	assert_int_equal(sched_parse("none [kyber] mq-deadline\n", &si), 0);
	assert_string_equal(si.current, "kyber");
	assert_int_equal(si.n_available, 3);
	assert_true(sched_info_has(&si, "mq-deadline"));
	assert_false(sched_info_has(&si, "bfq"));
	assert_int_equal(sched_parse("[none]\n", &si), 0);
	assert_string_equal(si.current, "none");
	/* zram and friends: "none" only, still fine. */
	static const char *const bad[] = {
		"", "\n", "none kyber\n", "[none] [kyber]\n", "[]\n", "[none\n", "none]\n",
		"[kyber] n$ne\n", "[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sched_parse(bad[i], &si), -EBADMSG);
}

static void test_target_parse_validate(void **state)
{
	uint64_t v;

	assert_int_equal(kyber_target_parse("2000000\n", &v), 0);
	assert_int_equal(v, 2000000);
	assert_int_equal(kyber_target_parse("abc\n", &v), -EBADMSG);
	assert_int_equal(kyber_target_parse("-1\n", &v), -EBADMSG);
	assert_int_equal(kyber_target_parse("", &v), -EBADMSG);
	assert_int_equal(kyber_target_validate(KYBER_TARGET_MIN_NS), 0);
	assert_int_equal(kyber_target_validate(KYBER_TARGET_MAX_NS), 0);
	assert_int_equal(kyber_target_validate(KYBER_TARGET_MIN_NS - 1), -ERANGE);
	assert_int_equal(kyber_target_validate(KYBER_TARGET_MAX_NS + 1), -ERANGE);
	assert_int_equal(kyber_target_validate(0), -ERANGE);
}

static void test_name_valid(void **state)
{
	assert_true(blockdev_name_valid("nvme0n1"));
	assert_true(blockdev_name_valid("loop3"));
	assert_false(blockdev_name_valid(""));
	assert_false(blockdev_name_valid(".."));
	assert_false(blockdev_name_valid("."));
	assert_false(blockdev_name_valid("../../etc"));
	assert_false(blockdev_name_valid("a b"));
	assert_false(blockdev_name_valid("a\nb"));
	assert_false(blockdev_name_valid(NULL));
	assert_false(blockdev_name_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

static void test_read_write_targets(void **state)
{
	struct kyber_targets t, bad = { .read_ns = 50000, .write_ns = 0 };

	assert_int_equal(kyber_sysfs_read_targets(root, "fake0", &t), 0);
	assert_int_equal(t.read_ns, 2000000);
	assert_int_equal(t.write_ns, 10000000);
	t.read_ns = 50000;
	t.write_ns = 100000000;
	assert_int_equal(kyber_sysfs_write_targets(root, "fake0", &t), 0);
	assert_string_equal(get("block/fake0/queue/iosched/read_lat_nsec"), "50000");
	assert_string_equal(get("block/fake0/queue/iosched/write_lat_nsec"), "100000000");
	/* Out of range: nothing is written, not even the valid half. */
	put("block/fake0/queue/iosched/read_lat_nsec", "2000000\n");
	assert_int_equal(kyber_sysfs_write_targets(root, "fake0", &bad), -ERANGE);
	assert_string_equal(get("block/fake0/queue/iosched/read_lat_nsec"), "2000000\n");
	/* Junk in sysfs is an error, not a zero. */
	put("block/fake0/queue/iosched/write_lat_nsec", "lots\n");
	assert_int_equal(kyber_sysfs_read_targets(root, "fake0", &t), -EBADMSG);
	/* Paths are never built from unsafe names. */
	assert_int_equal(kyber_sysfs_read_targets(root, "../fake0", &t), -EINVAL);
	/* No iosched files: not on Kyber. */
	assert_int_equal(kyber_sysfs_read_targets(root, "nosuch", &t), -ENOENT);
}

static void test_save_restore(void **state)
{
	struct kyber_saved s;
	struct sched_info si;

	put("block/fake0/queue/scheduler", "mq-deadline [kyber] bfq none\n");
	put("block/fake0/queue/iosched/read_lat_nsec", "123456\n");
	put("block/fake0/queue/iosched/write_lat_nsec", "654321\n");
	assert_int_equal(kyber_sysfs_save(root, "fake0", &s), 0);
	assert_true(s.was_kyber);
	assert_int_equal(s.targets.read_ns, 123456);
	/* Someone changes everything, restore puts it back. */
	put("block/fake0/queue/iosched/read_lat_nsec", "50000\n");
	put("block/fake0/queue/iosched/write_lat_nsec", "100000000\n");
	assert_int_equal(kyber_sysfs_restore(root, "fake0", &s), 0);
	assert_string_equal(get("block/fake0/queue/iosched/read_lat_nsec"), "123456");
	assert_string_equal(get("block/fake0/queue/iosched/write_lat_nsec"), "654321");

	/* A device that was on none: restore writes the scheduler name. In the
	 * fake tree the file just takes the word, as sysfs does. */
	put("block/fake0/queue/scheduler", "mq-deadline kyber bfq [none]\n");
	assert_int_equal(kyber_sysfs_save(root, "fake0", &s), 0);
	assert_false(s.was_kyber);
	assert_string_equal(s.scheduler, "none");
	put("block/fake0/queue/scheduler", "mq-deadline [kyber] bfq none\n");
	assert_int_equal(kyber_sysfs_restore(root, "fake0", &s), 0);
	assert_string_equal(get("block/fake0/queue/scheduler"), "none");
	assert_int_equal(kyber_sysfs_read_scheduler(root, "fake0", &si), -EBADMSG);
}

static void test_debugfs_depth(void **state)
{
	char path[512];
	unsigned d;

	snprintf(path, sizeof(path), "%s/dbg", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dbg/block", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dbg/block/fake0", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dbg/block/fake0/sched", root);
	mkdir(path, 0755);
	put("dbg/block/fake0/sched/write_tokens", "depth=32\nbusy=3\ncleared=0\n");
	put("dbg/block/fake0/sched/read_tokens", "busy=3\n");
	snprintf(path, sizeof(path), "%s/dbg", root);
	assert_int_equal(kyber_debugfs_read_depth(path, "fake0", "write", &d), 0);
	assert_int_equal(d, 32);
	assert_int_equal(kyber_debugfs_read_depth(path, "fake0", "read", &d), -EBADMSG);
	assert_int_equal(kyber_debugfs_read_depth(path, "fake0", "discard", &d), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sched_parse),
		cmocka_unit_test(test_target_parse_validate),
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_read_write_targets),
		cmocka_unit_test(test_save_restore),
		cmocka_unit_test(test_debugfs_depth),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
