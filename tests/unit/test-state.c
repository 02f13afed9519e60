/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: the state and originals files and the flight record reader
 * (daemon/state.c, shared/record.c), without root: a temporary directory. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "kyber_tuned.pb-c.h"
#include "record.h"
#include "state.h"

static char dir[] = "/tmp/kt-test-state-XXXXXX";

static void make_state(struct state *s)
{
	struct state_device a = { .id = "wwn-0x5000", .name = "nvme0n1", .goal = "read-p99=100us mode=latency",
				  .read_target_ns = 80000, .write_target_ns = 1200000,
				  .write_ref_p99_ns = 900000, .write_ref_iops = 15234.5,
				  .read_floor_ns = 40000, .updated_ns = 1700000000000000000ull };
	struct state_device b = { .id = "name:loop3", .name = "loop3" };

	memset(s, 0, sizeof(*s));
	assert_int_equal(state_put(s, &a), 0);
	assert_int_equal(state_put(s, &b), 0);
}

static void assert_state_equal(const struct state *x, const struct state *y)
{
	assert_int_equal(x->n, y->n);
	for (size_t i = 0; i < x->n; i++) {
		const struct state_device *a = &x->devs[i], *b = &y->devs[i];

		assert_string_equal(a->id, b->id);
		assert_true((a->name == NULL) == (b->name == NULL));
		if (a->name)
			assert_string_equal(a->name, b->name);
		assert_true((a->goal == NULL) == (b->goal == NULL));
		if (a->goal)
			assert_string_equal(a->goal, b->goal);
		assert_int_equal(a->read_target_ns, b->read_target_ns);
		assert_int_equal(a->write_target_ns, b->write_target_ns);
		assert_int_equal(a->write_ref_p99_ns, b->write_ref_p99_ns);
		assert_true(a->write_ref_iops == b->write_ref_iops);
		assert_int_equal(a->read_floor_ns, b->read_floor_ns);
		assert_int_equal(a->updated_ns, b->updated_ns);
	}
}

static void test_state_round_trip(void **unused)
{
	struct state s, back;
	uint8_t *buf;
	size_t len;

	make_state(&s);
	assert_int_equal(state_encode(&s, &buf, &len), 0);
	assert_int_equal(state_decode(buf, len, &back), 0);
	assert_state_equal(&s, &back);
	assert_null(back.devs[1].goal);
	free(buf);
	state_done(&back);
	state_done(&s);
}

static void test_state_put_replaces_and_remove(void **unused)
{
	struct state s;
	struct state_device a2 = { .id = "wwn-0x5000", .goal = "read-p99=2ms mode=latency" };

	make_state(&s);
	assert_int_equal(state_put(&s, &a2), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(state_find(&s, "wwn-0x5000")->goal, "read-p99=2ms mode=latency");
	assert_null(state_find(&s, "wwn-0x5000")->name);
	state_remove(&s, "wwn-0x5000");
	assert_int_equal(s.n, 1);
	assert_null(state_find(&s, "wwn-0x5000"));
	assert_non_null(state_find(&s, "name:loop3"));
	state_remove(&s, "not-there");
	assert_int_equal(s.n, 1);
	assert_int_equal(state_put(&s, &(struct state_device) { .id = "" }), -EINVAL);
	state_done(&s);
}

static void test_state_bad_input(void **unused)
{
	struct state s, back;
	uint8_t *buf;
	size_t len;

	/* Not a protobuf message at all. */
	assert_int_equal(state_decode((const uint8_t *)"\xff\xff\xff", 3, &back), -EBADMSG);
	assert_int_equal(back.n, 0);
	/* Every truncation of a good file is refused or decodes to fewer devices;
	 * none crashes or invents a device. */
	make_state(&s);
	assert_int_equal(state_encode(&s, &buf, &len), 0);
	for (size_t cut = 0; cut < len; cut++) {
		int r = state_decode(buf, cut, &back);

		assert_true(r == 0 || r == -EBADMSG);
		if (r == 0)
			assert_true(back.n < s.n || cut == 0);
		state_done(&back);
	}
	free(buf);
	state_done(&s);
	/* An empty message has version 0: not ours. */
	assert_int_equal(state_decode((const uint8_t *)"", 0, &back), -EBADMSG);
	/* Version 3 (field 1 varint 3), from a later release, is refused, not misread. */
	assert_int_equal(state_decode((const uint8_t *)"\x08\x03", 2, &back), -EBADMSG);
	/* A device without an id (field 2, empty DeviceState) is refused. */
	assert_int_equal(state_decode((const uint8_t *)"\x08\x01\x12\x00", 4, &back), -EBADMSG);
}

static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_state_files(void **unused)
{
	char path[PATH_MAX];
	struct state s, back;
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, STATE_FILE);
	/* Missing: an empty state, not an error. */
	assert_int_equal(state_load(path, &back), 0);
	assert_int_equal(back.n, 0);
	make_state(&s);
	assert_int_equal(state_save(path, &s), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(state_load(path, &back), 0);
	assert_state_equal(&s, &back);
	state_done(&back);
	/* Saved again (a replace): no temporary file is left beside it. */
	assert_int_equal(state_save(path, &s), 0);
	assert_int_equal(count_entries(dir), 1);
	/* Garbage: -EBADMSG and an empty state. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("\x0a\xff\xff\xff\xff\x0fgarbage", f);
	fclose(f);
	assert_int_equal(state_load(path, &back), -EBADMSG);
	assert_int_equal(back.n, 0);
	/* A directory where the file should be: an error, not a crash. */
	assert_int_equal(state_save(dir, &s) < 0, 1);
	state_done(&s);
	unlink(path);
}

static void test_originals(void **unused)
{
	struct originals o = { 0 }, back;
	struct original a = { .id = "name:loop0", .name = "loop0", .scheduler = "none" };
	struct original b = { .id = "wwn-1", .name = "sda", .scheduler = "kyber", .was_kyber = true,
			      .read_target_ns = 3000000, .write_target_ns = 20000000,
			      .left_scheduler = "kyber", .left_read_target_ns = 1000000,
			      .left_write_target_ns = 40000000 };
	char path[PATH_MAX];

	assert_int_equal(originals_put(&o, &a), 0);
	assert_int_equal(originals_put(&o, &b), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, ORIGINALS_FILE);
	assert_int_equal(originals_save(path, &o), 0);
	assert_int_equal(originals_load(path, &back), 0);
	assert_int_equal(back.n, 2);
	assert_string_equal(originals_find(&back, "wwn-1")->scheduler, "kyber");
	assert_true(originals_find(&back, "wwn-1")->was_kyber);
	assert_int_equal(originals_find(&back, "wwn-1")->write_target_ns, 20000000);
	assert_false(originals_find(&back, "name:loop0")->was_kyber);
	/* What the daemon left: recorded for b, not for a (as an older file). */
	assert_string_equal(originals_find(&back, "wwn-1")->left_scheduler, "kyber");
	assert_int_equal(originals_find(&back, "wwn-1")->left_read_target_ns, 1000000);
	assert_int_equal(originals_find(&back, "wwn-1")->left_write_target_ns, 40000000);
	assert_string_equal(originals_find(&back, "name:loop0")->left_scheduler, "");
	originals_remove(&back, "name:loop0");
	assert_int_equal(back.n, 1);
	assert_null(originals_find(&back, "name:loop0"));
	originals_done(&back);
	originals_done(&o);
	assert_int_equal(originals_decode((const uint8_t *)"\x08\x07", 2, &back), -EBADMSG);
	unlink(path);
}

/* Weights set at run time and cgroups' original limits: kept by their
 * keys, replaced, removed, through a file and back; an entry without its
 * key is a corrupt file. */
static void test_weights_and_cgroup_originals(void **unused)
{
	struct state s = { 0 }, sback;
	struct originals o = { 0 }, oback;
	struct state_weight w1 = { .id = "wwn-1", .name = "sda", .cgroup = "tenants/a", .weight = 1000 };
	struct state_weight w2 = { .id = "wwn-1", .name = "sda", .cgroup = "tenants/b", .weight = 100 };
	struct cgroup_original c1 = { .cgroup = "tenants/a", .root = "/sys/fs/cgroup/blkio", .version = 1,
				      .major = 8, .minor = 0, .read_iops = 90000 };
	struct cgroup_original c2 = c1;
	char path[PATH_MAX];
	uint8_t *buf;
	size_t n;

	c2.minor = 16;
	assert_int_equal(state_weight_put(&s, &w1), 0);
	assert_int_equal(state_weight_put(&s, &w2), 0);
	w2.weight = 200;
	assert_int_equal(state_weight_put(&s, &w2), 0);
	assert_int_equal(s.n_weights, 2);
	snprintf(path, sizeof(path), "%s/%s", dir, STATE_FILE);
	assert_int_equal(state_save(path, &s), 0);
	assert_int_equal(state_load(path, &sback), 0);
	assert_int_equal(sback.n_weights, 2);
	assert_int_equal(state_weight_find(&sback, "wwn-1", "tenants/b")->weight, 200);
	state_weight_remove(&sback, "wwn-1", "tenants/a");
	assert_null(state_weight_find(&sback, "wwn-1", "tenants/a"));
	assert_int_equal(sback.n_weights, 1);
	state_done(&sback);
	unlink(path);

	assert_int_equal(originals_cg_put(&o, &c1), 0);
	assert_int_equal(originals_cg_put(&o, &c2), 0);
	c1.read_iops = 1;
	assert_int_equal(originals_cg_put(&o, &c1), 0);
	assert_int_equal(o.n_cg, 2);
	snprintf(path, sizeof(path), "%s/%s", dir, ORIGINALS_FILE);
	assert_int_equal(originals_save(path, &o), 0);
	assert_int_equal(originals_load(path, &oback), 0);
	assert_int_equal(oback.n_cg, 2);
	assert_int_equal(originals_cg_find(&oback, "/sys/fs/cgroup/blkio", "tenants/a", 8, 0)->read_iops, 1);
	assert_int_equal(originals_cg_find(&oback, "/sys/fs/cgroup/blkio", "tenants/a", 8, 16)->read_iops, 90000);
	originals_cg_remove(&oback, "/sys/fs/cgroup/blkio", "tenants/a", 8, 0);
	assert_int_equal(oback.n_cg, 1);
	originals_done(&oback);
	unlink(path);

	/* A weight without a cgroup, a cgroup original of hierarchy 3. */
	s.weights[0].cgroup[0] = 0;
	assert_int_equal(state_encode(&s, &buf, &n), 0);
	assert_int_equal(state_decode(buf, n, &sback), -EBADMSG);
	free(buf);
	o.cg[0].version = 3;
	assert_int_equal(originals_encode(&o, &buf, &n), 0);
	assert_int_equal(originals_decode(buf, n, &oback), -EBADMSG);
	free(buf);
	state_done(&s);
	originals_done(&o);
}

/* A scheduler name that does not fit is a corrupt file, not a truncation. */
static void test_originals_left_scheduler_too_long(void **unused)
{
	char name[ORIGINAL_SCHED_MAX + 1];
	Kybertune__Original e = KYBERTUNE__ORIGINAL__INIT, *ptr = &e;
	Kybertune__Originals m = KYBERTUNE__ORIGINALS__INIT;
	struct originals back;
	uint8_t buf[256];
	size_t n;

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	e.device_id = (char *)"name:loop0";
	e.scheduler = (char *)"none";
	e.left_scheduler = name;
	m.version = ORIGINALS_VERSION;
	m.n_devices = 1;
	m.devices = &ptr;
	n = kybertune__originals__pack(&m, buf);
	assert_int_equal(originals_decode(buf, n, &back), -EBADMSG);
	name[sizeof(name) - 2] = 0;	/* the longest that fits */
	n = kybertune__originals__pack(&m, buf);
	assert_int_equal(originals_decode(buf, n, &back), 0);
	assert_string_equal(back.v[0].left_scheduler, name);
	originals_done(&back);
}

/* A version-1 file was written when a goal without scheduler= meant Kyber
 * always: decoded, its goals say scheduler=kyber, so an upgrade changes no
 * device's scheduler. Version 2 goals are taken as they are. */
static void test_state_version1_goals_keep_kyber(void **unused)
{
	static const struct {
		uint32_t version;
		const char *goal, *decoded;
	} cases[] = {
		{ 1, "read-p99=2ms mode=latency", "read-p99=2ms mode=latency scheduler=kyber" },
		{ 1, "mode=throughput scheduler=auto", "mode=throughput scheduler=auto" },
		{ 1, "", NULL },
		{ 2, "read-p99=2ms mode=latency", "read-p99=2ms mode=latency" },
	};
	uint8_t buf[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		Kybertune__DeviceState e = KYBERTUNE__DEVICE_STATE__INIT, *ptr = &e;
		Kybertune__State m = KYBERTUNE__STATE__INIT;
		struct state back;
		size_t n;

		e.device_id = (char *)"wwn-1";
		e.goal = (char *)cases[i].goal;
		m.version = cases[i].version;
		m.n_devices = 1;
		m.devices = &ptr;
		n = kybertune__state__pack(&m, buf);
		assert_int_equal(state_decode(buf, n, &back), 0);
		assert_int_equal(back.n, 1);
		if (cases[i].decoded)
			assert_string_equal(back.devs[0].goal, cases[i].decoded);
		else
			assert_null(back.devs[0].goal);
		state_done(&back);
	}
}

/* Records in a file, in order: their time_ns, the count returned. */
static size_t read_times(const char *path, uint64_t *times, size_t max)
{
	uint8_t buf[4096];
	Kybertune__IntervalRecord *got;
	size_t len, off = 0, n = 0;
	FILE *f = fopen(path, "re");

	assert_non_null(f);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (n < max && record_next(buf, len, &off, &got) == 1) {
		times[n++] = got->time_ns;
		kybertune__interval_record__free_unpacked(got, NULL);
	}
	assert_int_equal(off, len);	/* every byte a whole record */
	return n;
}

/* Records with time_ns from..to appended to path, capped at 300 bytes. */
static void record_times(const char *path, uint64_t from, uint64_t to)
{
	Kybertune__IntervalRecord rec = KYBERTUNE__INTERVAL_RECORD__INIT;
	struct recorder *r;

	rec.device = "loop0";
	rec.reason = "a reason of some length, as the tuner writes them";
	assert_int_equal(recorder_open(&r, path, 300), 0);
	for (uint64_t t = from; t <= to; t++) {
		rec.time_ns = t;
		assert_int_equal(recorder_append(r, &rec), 0);
	}
	recorder_close(r);
}

/* The recorder stays under its cap: the full file becomes PATH.1, and
 * the newest records are in PATH, none lost across the rotation. */
static void test_recorder_rotates(void **unused)
{
	char path[PATH_MAX], old[PATH_MAX + 2];
	uint64_t cur[64], prev[64];
	struct stat st;
	size_t nc, np;

	snprintf(path, sizeof(path), "%s/record.pb", dir);
	snprintf(old, sizeof(old), "%s.1", path);
	record_times(path, 1, 20);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size <= 300);
	assert_int_equal(stat(old, &st), 0);
	assert_true(st.st_size <= 300);
	nc = read_times(path, cur, 64);
	np = read_times(old, prev, 64);
	assert_true(nc > 0 && np > 0);
	assert_int_equal(cur[nc - 1], 20);		/* the newest is kept */
	assert_int_equal(prev[np - 1] + 1, cur[0]);	/* none lost between */
	/* Reopened, it counts what is there already. */
	record_times(path, 21, 30);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size <= 300);
	unlink(path);
	unlink(old);
}

static void test_record_reader(void **unused)
{
	Kybertune__IntervalRecord rec = KYBERTUNE__INTERVAL_RECORD__INIT, *got;
	uint8_t buf[512];
	size_t len = 0, off = 0, n;

	/* Two records, length-delimited, as the recorder writes them. */
	for (int i = 0; i < 2; i++) {
		rec.time_ns = 1000 + i;
		rec.device = i ? "loop1" : "loop0";
		n = kybertune__interval_record__get_packed_size(&rec);
		len += varint_encode(n, buf + len);
		len += kybertune__interval_record__pack(&rec, buf + len);
	}
	assert_int_equal(record_next(buf, len, &off, &got), 1);
	assert_int_equal(got->time_ns, 1000);
	assert_string_equal(got->device, "loop0");
	kybertune__interval_record__free_unpacked(got, NULL);
	assert_int_equal(record_next(buf, len, &off, &got), 1);
	assert_string_equal(got->device, "loop1");
	kybertune__interval_record__free_unpacked(got, NULL);
	assert_int_equal(record_next(buf, len, &off, &got), 0);
	/* A torn last record (a crash mid-append) is -EBADMSG and does not
	 * move the offset: a reader stops there. */
	off = 0;
	assert_int_equal(record_next(buf, len - 3, &off, &got), 1);
	kybertune__interval_record__free_unpacked(got, NULL);
	n = off;
	assert_int_equal(record_next(buf, len - 3, &off, &got), -EBADMSG);
	assert_int_equal(off, n);
	/* A length beyond the buffer, and an over-long varint. */
	off = 0;
	assert_int_equal(record_next((const uint8_t *)"\x7f\x00", 2, &off, &got), -EBADMSG);
	assert_int_equal(record_next((const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11,
				     &off, &got), -EBADMSG);
}

static void test_varint(void **unused)
{
	static const uint64_t values[] = { 0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, UINT64_MAX };
	uint8_t b[10];
	uint64_t v;

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		size_t n = varint_encode(values[i], b);

		assert_int_equal(varint_decode(b, n, &v), n);
		assert_true(v == values[i]);
		if (n > 1)
			assert_int_equal(varint_decode(b, n - 1, &v), 0);
	}
}

static int setup(void **unused)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **unused)
{
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_round_trip),
		cmocka_unit_test(test_state_put_replaces_and_remove),
		cmocka_unit_test(test_state_bad_input),
		cmocka_unit_test(test_state_files),
		cmocka_unit_test(test_originals),
		cmocka_unit_test(test_weights_and_cgroup_originals),
		cmocka_unit_test(test_originals_left_scheduler_too_long),
		cmocka_unit_test(test_state_version1_goals_keep_kyber),
		cmocka_unit_test(test_recorder_rotates),
		cmocka_unit_test(test_record_reader),
		cmocka_unit_test(test_varint),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
