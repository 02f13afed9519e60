/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's device events: what a disk's event parses to, and the
 * malformed ones refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "uevent.h"

/* A message as the kernel sends it; sizeof includes the final NUL. */
#define MSG(s) (s), sizeof(s)

static void test_disk_events(void **state)
{
	struct uevent ev;

	assert_int_equal(uevent_parse(MSG("add@/devices/virtual/block/loop200\0ACTION=add\0"
					  "DEVPATH=/devices/virtual/block/loop200\0SUBSYSTEM=block\0MAJOR=7\0"
					  "MINOR=200\0DEVNAME=loop200\0DEVTYPE=disk\0DISKSEQ=5580\0SEQNUM=1"),
				      &ev), 0);
	assert_int_equal(ev.action, DEVICE_EVENT_ADD);
	assert_true(ev.disk);
	assert_string_equal(ev.name, "loop200");
	assert_int_equal(ev.diskseq, 5580);

	/* The sysfs name (DEVPATH's last part), not DEVNAME: "cciss!c0d0". */
	assert_int_equal(uevent_parse(MSG("change@/devices/x/block/cciss!c0d0\0ACTION=change\0"
					  "SUBSYSTEM=block\0DEVNAME=cciss/c0d0\0DEVTYPE=disk"), &ev), 0);
	assert_int_equal(ev.action, DEVICE_EVENT_CHANGE);
	assert_string_equal(ev.name, "cciss!c0d0");
	assert_int_equal(ev.diskseq, 0);

	assert_int_equal(uevent_parse(MSG("remove@/devices/virtual/block/loop3\0SUBSYSTEM=block\0"
					  "DEVTYPE=disk"), &ev), 0);
	assert_int_equal(ev.action, DEVICE_EVENT_REMOVE);
}

static void test_not_disks(void **state)
{
	struct uevent ev;

	/* A partition, a bdi, a disk's "bind": parsed, nothing to do. */
	assert_int_equal(uevent_parse(MSG("add@/devices/virtual/block/loop3/loop3p1\0SUBSYSTEM=block\0"
					  "DEVTYPE=partition"), &ev), 0);
	assert_false(ev.disk);
	assert_int_equal(uevent_parse(MSG("remove@/devices/virtual/bdi/7:200\0SUBSYSTEM=bdi"), &ev), 0);
	assert_false(ev.disk);
	assert_int_equal(uevent_parse(MSG("bind@/devices/virtual/block/loop3\0SUBSYSTEM=block\0"
					  "DEVTYPE=disk"), &ev), 0);
	assert_int_equal(ev.action, DEVICE_EVENT_OTHER);
	/* A later SUBSYSTEM= wins, as in the kernel's own environment. */
	assert_int_equal(uevent_parse(MSG("add@/devices/b/loop3\0SUBSYSTEM=block\0SUBSYSTEM=bdi\0"
					  "DEVTYPE=disk"), &ev), 0);
	assert_false(ev.disk);
}

static void test_malformed(void **state)
{
	static const struct {
		const char *buf;
		size_t len;
	} bad[] = {
		{ MSG("") },
		{ "add@/devices/x/loop3", 20 },			/* not NUL-terminated */
		{ MSG("libudev\0\xfe\xed\xca\xfe") },		/* udev's format, not the kernel's */
		{ MSG("add/devices/x/loop3\0SUBSYSTEM=block") },	/* no '@' */
		{ MSG("@/devices/x/loop3") },			/* no action */
		{ MSG("add@devices/x/loop3") },			/* path not absolute */
		{ MSG("add@/devices/x/\0SUBSYSTEM=block") },	/* no name */
		{ MSG("add@/devices/x/..\0SUBSYSTEM=block") },
		{ MSG("add@/devices/x/.") },
		{ MSG("add@/devices/x/" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa") },
		{ MSG("add@/devices/x/loop3\0ACTION=remove") },	/* header and body disagree */
		{ MSG("add@/devices/x/loop3\0DEVPATH=/devices/y/loop3") },
		{ MSG("add@/devices/x/loop3\0DISKSEQ=12x") },
		{ MSG("add@/devices/x/loop3\0DISKSEQ=99999999999999999999999") },
	};
	struct uevent ev;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = uevent_parse(bad[i].buf, bad[i].len, &ev);

		if (r != -EBADMSG)
			fail_msg("case %zu: %d, expected -EBADMSG", i, r);
	}
	assert_int_equal(uevent_parse(NULL, 0, &ev), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disk_events),
		cmocka_unit_test(test_not_disks),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
