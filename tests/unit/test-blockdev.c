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
#include "error.h"
#include "tmp-tree.h"

static char root[] = "/tmp/kt-blockdev-XXXXXX";

/* The error of the call about to be made: the last one's freed. */
static sd_bus_error *fresh(sd_bus_error *e)
{
	sd_bus_error_free(e);
	return e;
}

static void mk(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void put(const char *rel, const char *content)
{
	tmp_tree_put(root, rel, content);
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
	/* dm-0 over nvme0n1p1: stacked, no scheduler of its own. */
	mk("devices/dm-0");
	mk("devices/dm-0/slaves");
	put("devices/dm-0/dev", "253:0\n");
	link_to("../../nvme0n1/nvme0n1p1", "devices/dm-0/slaves/nvme0n1p1");
	link_to("../../devices/dm-0", "class/block/dm-0");
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
	unsigned inflight;

	assert_int_equal(blockdev_resolve(root, "nvme0n1", &d, NULL), 0);
	assert_string_equal(d.name, "nvme0n1");
	assert_int_equal(d.major, 259);
	assert_int_equal(d.minor, 0);
	assert_int_equal(d.kdev, (259u << 20) | 0);
	assert_int_equal(blockdev_check_kyber(root, &d, NULL), 0);
	assert_int_equal(blockdev_read_inflight(root, "nvme0n1", &inflight), 0);
	assert_int_equal(inflight, 8);
}

static void test_refusals(void **state)
{
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	struct blockdev d;

	assert_int_equal(blockdev_resolve(root, "nosuch", &d, fresh(&error)), -ENODEV);
	assert_string_equal(error.message, "No such block device: nosuch");

	assert_int_equal(blockdev_resolve(root, "nvme0n1p1", &d, fresh(&error)), -EISDIR);
	assert_string_equal(error.message, "nvme0n1p1 is a partition; I/O schedulers are set per disk (use nvme0n1)");

	assert_int_equal(blockdev_resolve(root, "zram0", &d, fresh(&error)), -ENOTSUP);
	assert_string_equal(error.message, "zram0 is not a blk-mq device: it has no I/O scheduler");

	assert_int_equal(blockdev_resolve(root, "../etc", &d, fresh(&error)), -EINVAL);
	assert_non_null(strstr(error.message, "Invalid device name"));
	assert_int_equal(blockdev_resolve(root, "", &d, fresh(&error)), -EINVAL);

	/* Only names and /dev paths: nothing else is looked at for a caller. */
	assert_int_equal(blockdev_resolve(root, "/nonexistent/dev/x", &d, fresh(&error)), -EINVAL);
	assert_string_equal(error.message, "Not a device name or a path under /dev: /nonexistent/dev/x");
	assert_int_equal(blockdev_resolve(root, "/dev/../etc/shadow", &d, fresh(&error)), -EINVAL);
	assert_int_equal(blockdev_resolve(root, "/dev/nonexistent-kt", &d, fresh(&error)), -ENOENT);
	assert_non_null(strstr(error.message, "No such block device: /dev/nonexistent-kt"));
	assert_int_equal(blockdev_resolve(root, "/dev/null", &d, fresh(&error)), -ENOTBLK);
	assert_string_equal(error.message, "/dev/null is not a block device");

	assert_int_equal(blockdev_resolve(root, "sda", &d, fresh(&error)), 0);
	assert_int_equal(blockdev_check_kyber(root, &d, fresh(&error)), -ENOTSUP);
	assert_string_equal(error.message, "Kyber is not available for sda (schedulers: mq-deadline none); "
			    "it needs CONFIG_MQ_IOSCHED_KYBER");
}

/* What users type for a goal's device (authorized requests). */
static void test_resolve_user(void **state)
{
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	struct blockdev d;
	char note[320];

	assert_int_equal(blockdev_resolve_user(root, "nvme0n1", &d, note, sizeof(note), NULL), 0);
	assert_string_equal(d.name, "nvme0n1");
	assert_string_equal(note, "");

	assert_int_equal(blockdev_resolve_user(root, "nvme0n1p1", &d, note, sizeof(note), NULL), 0);
	assert_string_equal(d.name, "nvme0n1");
	assert_string_equal(note, "nvme0n1p1 is a partition of nvme0n1: tuning nvme0n1");

	assert_int_equal(blockdev_resolve_user(root, "dm-0", &d, note, sizeof(note), fresh(&error)), -ENOTSUP);
	assert_string_equal(error.message, "dm-0 is a stacked device (device-mapper or md) with no I/O scheduler "
			    "of its own; the disks beneath it: nvme0n1");

	/* The fake sysfs has no entry for the root file system's device. */
	assert_int_equal(blockdev_resolve_user(root, "/", &d, note, sizeof(note), fresh(&error)), -ENOTBLK);
	assert_non_null(strstr(error.message, "/ is on device "));
	assert_int_equal(blockdev_resolve_user(root, "/nonexistent/kt", &d, note, sizeof(note), fresh(&error)),
			 -ENOENT);
	assert_non_null(strstr(error.message, "No such block device or path: /nonexistent/kt"));
	assert_int_equal(blockdev_resolve_user(root, "../etc", &d, note, sizeof(note), fresh(&error)), -EINVAL);
	assert_int_equal(blockdev_resolve_user(root, "nosuch", &d, note, sizeof(note), fresh(&error)), -ENODEV);
	assert_string_equal(error.message, "No such block device: nosuch");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_ok),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_resolve_user),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
