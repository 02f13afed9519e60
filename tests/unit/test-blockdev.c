/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: daemon/blockdev.c against a fake sysfs tree: every refusal
 * names its cause. */
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

#include "blockdev.h"

static char root[] = "/tmp/kt-blockdev-XXXXXX";

static void mk(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
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

static void link_to(const char *target, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

/* Real sysfs: /sys/class/block/X links into /sys/devices/.../block/DISK[/PART];
 * /sys/block/DISK links to the same disk directory. */
static int setup(void **state)
{
	if (!mkdtemp(root))
		return -1;
	mk("class");
	mk("class/block");
	mk("devices");
	mk("devices/nvme0n1");
	mk("devices/nvme0n1/mq");
	mk("devices/nvme0n1/queue");
	put("devices/nvme0n1/dev", "259:0\n");
	put("devices/nvme0n1/queue/scheduler", "[none] mq-deadline kyber\n");
	put("devices/nvme0n1/inflight", "       3        5\n");
	mk("devices/nvme0n1/nvme0n1p1");
	put("devices/nvme0n1/nvme0n1p1/dev", "259:1\n");
	put("devices/nvme0n1/nvme0n1p1/partition", "1\n");
	mk("devices/zram0");
	put("devices/zram0/dev", "252:0\n");
	mk("devices/sda");
	mk("devices/sda/mq");
	mk("devices/sda/queue");
	put("devices/sda/dev", "8:0\n");
	put("devices/sda/queue/scheduler", "[mq-deadline] none\n");
	link_to("../../devices/nvme0n1", "class/block/nvme0n1");
	link_to("../../devices/nvme0n1/nvme0n1p1", "class/block/nvme0n1p1");
	link_to("../../devices/zram0", "class/block/zram0");
	link_to("../../devices/sda", "class/block/sda");
	mk("block");
	link_to("../devices/nvme0n1", "block/nvme0n1");
	link_to("../devices/zram0", "block/zram0");
	link_to("../devices/sda", "block/sda");
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_resolve_ok(void **state)
{
	struct blockdev d;
	char err[256] = "";
	unsigned inflight;

	assert_int_equal(blockdev_resolve(root, "nvme0n1", &d, err, sizeof(err)), 0);
	assert_string_equal(d.name, "nvme0n1");
	assert_int_equal(d.major, 259);
	assert_int_equal(d.minor, 0);
	assert_int_equal(d.kdev, (259u << 20) | 0);
	assert_int_equal(blockdev_check_kyber(root, &d, err, sizeof(err)), 0);
	assert_int_equal(blockdev_read_inflight(root, "nvme0n1", &inflight), 0);
	assert_int_equal(inflight, 8);
}

static void test_refusals(void **state)
{
	struct blockdev d;
	char err[256];

	assert_int_equal(blockdev_resolve(root, "nosuch", &d, err, sizeof(err)), -ENODEV);
	assert_string_equal(err, "No such block device: nosuch");

	assert_int_equal(blockdev_resolve(root, "nvme0n1p1", &d, err, sizeof(err)), -EISDIR);
	assert_string_equal(err, "nvme0n1p1 is a partition; I/O schedulers are set per disk (use nvme0n1)");

	assert_int_equal(blockdev_resolve(root, "zram0", &d, err, sizeof(err)), -ENOTSUP);
	assert_string_equal(err, "zram0 is not a blk-mq device: it has no I/O scheduler");

	assert_int_equal(blockdev_resolve(root, "../etc", &d, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "Invalid device name"));
	assert_int_equal(blockdev_resolve(root, "", &d, err, sizeof(err)), -EINVAL);

	assert_int_equal(blockdev_resolve(root, "/nonexistent/dev/x", &d, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "No such block device: /nonexistent/dev/x"));
	assert_int_equal(blockdev_resolve(root, "/dev/null", &d, err, sizeof(err)), -ENOTBLK);
	assert_string_equal(err, "/dev/null is not a block device");

	assert_int_equal(blockdev_resolve(root, "sda", &d, err, sizeof(err)), 0);
	assert_int_equal(blockdev_check_kyber(root, &d, err, sizeof(err)), -ENOTSUP);
	assert_string_equal(err, "Kyber is not available for sda (schedulers: mq-deadline none); "
			    "it needs CONFIG_MQ_IOSCHED_KYBER");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_ok),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
