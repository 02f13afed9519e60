/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "blockdev.h"
#include "error.h"
#include "kyber-sysfs.h"
#include "macro.h"
#include "observer-abi.h"

static int read_dev_numbers(const char *path, unsigned *major, unsigned *minor)
{
	_cleanup_fclose_ FILE *f = NULL;

	f = fopen(path, "re");
	if (!f)
		return negative_errno();
	if (fscanf(f, "%u:%u", major, minor) != 2)
		return -EBADMSG;
	return 0;
}

int blockdev_name_of(const char *sysroot, dev_t dev, char *name, size_t n)
{
	char link[PATH_MAX], target[PATH_MAX];
	ssize_t l;

	snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sysroot, major(dev), minor(dev));
	l = readlink(link, target, sizeof(target) - 1);
	if (l < 0)
		return negative_errno();
	target[l] = 0;
	snprintf(name, n, "%s", basename(target));
	return 0;
}

/* /dev/xyz -> name of the kernel's block device, through its numbers. */
static int name_from_path(const char *sysroot, const char *path, char *name, size_t n,
			  sd_bus_error *error)
{
	struct stat st;
	int r;

	if (stat(path, &st) < 0) {
		r = negative_errno();
		return error_setf(error, r, "No such block device: %s (%s)", path, strerror(-r));
	}
	if (!S_ISBLK(st.st_mode))
		return error_setf(error, -ENOTBLK, "%s is not a block device", path);
	r = blockdev_name_of(sysroot, st.st_rdev, name, n);
	if (r < 0)
		return error_setf(error, r, "No sysfs entry for %s (%u:%u): %s", path, major(st.st_rdev),
				  minor(st.st_rdev), strerror(-r));
	return 0;
}

static int read_diskseq(const char *path, uint64_t *ret)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	unsigned long long v;

	if (!f)
		return negative_errno();
	if (fscanf(f, "%llu", &v) != 1)
		return -EBADMSG;
	*ret = v;
	return 0;
}

int blockdev_resolve(const char *sysroot, const char *arg, struct blockdev *out, sd_bus_error *error)
{
	char name[64], path[PATH_MAX];
	int r;

	memset(out, 0, sizeof(*out));
	if (!arg || !*arg)
		return error_setf(error, -EINVAL, "Empty device name");
	if (arg[0] == '/') {
		/* Never stat an arbitrary path for a caller: who may ask must
		 * not learn what exists (blockdev_resolve_user() resolves file
		 * system paths, for requests that are authorized). */
		if (strncmp(arg, "/dev/", 5) != 0 || strstr(arg, "/../"))
			return error_setf(error, -EINVAL, "Not a device name or a path under /dev: %.128s", arg);
		r = name_from_path(sysroot, arg, name, sizeof(name), error);
		if (r < 0)
			return r;
	} else {
		if (!blockdev_name_valid(arg))
			return error_setf(error, -EINVAL, "Invalid device name '%.64s'", arg);
		snprintf(name, sizeof(name), "%s", arg);
	}

	snprintf(path, sizeof(path), "%s/class/block/%s", sysroot, name);
	if (access(path, F_OK) < 0)
		return error_setf(error, -ENODEV, "No such block device: %s", name);
	snprintf(path, sizeof(path), "%s/class/block/%s/partition", sysroot, name);
	if (access(path, F_OK) == 0) {
		char real[PATH_MAX], parent[PATH_MAX];

		snprintf(path, sizeof(path), "%s/class/block/%s", sysroot, name);
		if (!realpath(path, real))
			return error_setf(error, -EISDIR, "%s is a partition; I/O schedulers are set per disk",
					  name);
		snprintf(parent, sizeof(parent), "%s", dirname(real));
		return error_setf(error, -EISDIR, "%s is a partition; I/O schedulers are set per disk (use %s)",
				  name, basename(parent));
	}
	snprintf(path, sizeof(path), "%s/class/block/%s/dev", sysroot, name);
	r = read_dev_numbers(path, &out->major, &out->minor);
	if (r < 0)
		return error_setf(error, r, "Failed to read %s: %s", path, strerror(-r));
	snprintf(path, sizeof(path), "%s/block/%s/mq", sysroot, name);
	if (access(path, F_OK) < 0)
		return error_setf(error, -ENOTSUP, "%s is not a blk-mq device: it has no I/O scheduler", name);
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->kdev = KT_MKDEV(out->major, out->minor);
	snprintf(path, sizeof(path), "%s/class/block/%s/diskseq", sysroot, name);
	(void)read_diskseq(path, &out->diskseq);	/* absent: 0, names and dev_t only */
	return 0;
}

int blockdev_check_kyber(const char *sysroot, const struct blockdev *d, sd_bus_error *error)
{
	struct sched_info si;
	int r;

	r = kyber_sysfs_read_scheduler(sysroot, d->name, &si);
	if (r < 0)
		return error_setf(error, r, "Failed to read the scheduler of %s: %s", d->name, strerror(-r));
	if (!sched_info_has(&si, "kyber")) {
		char list[SCHED_LIST_MAX * SCHED_NAME_MAX] = "";

		for (unsigned i = 0; i < si.n_available; i++) {
			if (i)
				strcat(list, " ");
			strcat(list, si.available[i]);
		}
		return error_setf(error, -ENOTSUP, "Kyber is not available for %s (schedulers: %s); "
				  "it needs CONFIG_MQ_IOSCHED_KYBER", d->name, list);
	}
	return 0;
}

int blockdev_read_inflight(const char *sysroot, const char *name, unsigned *ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[PATH_MAX];
	unsigned r, w;

	snprintf(path, sizeof(path), "%s/block/%s/inflight", sysroot, name);
	f = fopen(path, "re");
	if (!f)
		return negative_errno();
	if (fscanf(f, "%u %u", &r, &w) != 2)
		return -EBADMSG;
	*ret = r + w;
	return 0;
}

int blockdev_read_iostats(const char *sysroot, const char *name, bool *ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[PATH_MAX];
	unsigned v;

	snprintf(path, sizeof(path), "%s/block/%s/queue/iostats", sysroot, name);
	f = fopen(path, "re");
	if (!f)
		return negative_errno();
	if (fscanf(f, "%u", &v) != 1 || v > 1)
		return -EBADMSG;
	*ret = v;
	return 0;
}

/* First line of a sysfs attribute, trimmed; false if absent or empty. */
static bool read_attr(const char *path, char *buf, size_t n)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	size_t l;

	if (!f || !fgets(buf, (int)n, f))
		return false;
	l = strcspn(buf, "\n");
	buf[l] = 0;
	while (l > 0 && buf[l - 1] == ' ')
		buf[--l] = 0;
	return l > 0;
}

bool blockdev_has_medium(const char *sysroot, const char *name)
{
	char path[PATH_MAX], size[32];

	snprintf(path, sizeof(path), "%s/class/block/%s/size", sysroot, name);
	/* Unreadable: not ours to judge; present. */
	return !read_attr(path, size, sizeof(size)) || strcmp(size, "0") != 0;
}

void blockdev_model(const char *sysroot, const char *name, char *model, size_t mn, char *firmware, size_t fn)
{
	char path[PATH_MAX];

	*model = *firmware = '\0';
	snprintf(path, sizeof(path), "%s/block/%s/device/model", sysroot, name);
	if (read_attr(path, model, mn)) {
		snprintf(path, sizeof(path), "%s/block/%s/device/firmware_rev", sysroot, name);
		if (!read_attr(path, firmware, fn)) {
			snprintf(path, sizeof(path), "%s/block/%s/device/rev", sysroot, name);
			(void)read_attr(path, firmware, fn);
		}
		return;
	}
	snprintf(path, sizeof(path), "%s/block/%s/loop", sysroot, name);
	if (access(path, F_OK) == 0)
		snprintf(model, mn, "loop");
}

void blockdev_stable_id(const char *sysroot, const struct blockdev *d, char *buf, size_t n)
{
	char path[PATH_MAX], a[128], b[PATH_MAX];

	snprintf(path, sizeof(path), "%s/block/%s/wwid", sysroot, d->name);
	if (read_attr(path, a, sizeof(a))) {
		snprintf(buf, n, "wwid:%s", a);
		return;
	}
	snprintf(path, sizeof(path), "%s/block/%s/device/wwid", sysroot, d->name);
	if (read_attr(path, a, sizeof(a))) {
		snprintf(buf, n, "wwid:%s", a);
		return;
	}
	snprintf(path, sizeof(path), "%s/block/%s/device/serial", sysroot, d->name);
	if (read_attr(path, a, sizeof(a))) {
		char model[96] = "";

		snprintf(path, sizeof(path), "%s/block/%s/device/model", sysroot, d->name);
		(void)read_attr(path, model, sizeof(model));
		snprintf(buf, n, "serial:%s:%s", model, a);
		return;
	}
	snprintf(path, sizeof(path), "%s/block/%s/loop/backing_file", sysroot, d->name);
	if (read_attr(path, b, sizeof(b))) {
		snprintf(buf, n, "loop:%s", b);
		return;
	}
	snprintf(buf, n, "name:%s", d->name);
}
