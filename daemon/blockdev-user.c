/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * From what a user types for a disk to the disk: I/O schedulers are set
 * per disk, so a partition, or a directory on a mounted file system, means
 * the disk under it; a stacked device (device-mapper, md) has no
 * scheduler of its own, and the error names the disks beneath it.
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
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

/* The disk a partition belongs to: the partition's sysfs directory sits
 * in its disk's. False when name is not a partition. */
static bool disk_of_partition(const char *sysroot, const char *name, char *disk, size_t n)
{
	char path[PATH_MAX], real[PATH_MAX];

	snprintf(path, sizeof(path), "%s/class/block/%s/partition", sysroot, name);
	if (access(path, F_OK) < 0)
		return false;
	snprintf(path, sizeof(path), "%s/class/block/%s", sysroot, name);
	if (!realpath(path, real))
		return false;
	snprintf(disk, n, "%s", basename(dirname(real)));
	return true;
}

/* The devices a stacked device is built on (sysfs "slaves"), as their
 * disks, blank-separated; false when there are none. */
static bool disks_beneath(const char *sysroot, const char *name, char *list, size_t n)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	size_t used = 0;

	snprintf(path, sizeof(path), "%s/class/block/%s/slaves", sysroot, name);
	dir = opendir(path);
	if (!dir)
		return false;
	list[0] = 0;
	while ((de = readdir(dir))) {
		char disk[64];

		if (de->d_name[0] == '.' || !blockdev_name_valid(de->d_name))
			continue;
		if (!disk_of_partition(sysroot, de->d_name, disk, sizeof(disk)))
			snprintf(disk, sizeof(disk), "%.63s", de->d_name);
		if (used + strlen(disk) + 2 < n)
			used += (size_t)snprintf(list + used, n - used, "%s%s", used ? " " : "", disk);
	}
	closedir(dir);
	return used > 0;
}

/* A path that is not a block device: the device of the file system it is
 * on. */
static int name_under_path(const char *sysroot, const char *arg, char *name, size_t n, bool *fs,
			   sd_bus_error *error)
{
	struct stat st;
	dev_t dev;
	int r;

	if (stat(arg, &st) < 0) {
		r = -errno;
		return error_setf(error, r, "No such block device or path: %.128s (%s)", arg, strerror(-r));
	}
	*fs = !S_ISBLK(st.st_mode);
	dev = *fs ? st.st_dev : st.st_rdev;
	r = blockdev_name_of(sysroot, dev, name, n);
	if (r < 0)
		return error_setf(error, -ENOTBLK, "%.128s is on device %u:%u, which is not a block device "
				  "(a memory or network file system?)", arg, major(dev), minor(dev));
	return 0;
}

int blockdev_resolve_user(const char *sysroot, const char *arg, struct blockdev *out, char *note, size_t n,
			  sd_bus_error *error)
{
	char name[64], disk[64], beneath[256];
	bool fs = false;
	int r;

	note[0] = 0;
	if (!arg || arg[0] != '/' || (strncmp(arg, "/dev/", 5) == 0 && !strstr(arg, "/../"))) {
		/* A name or a /dev path: the disk itself, or a partition or a
		 * stacked device (no scheduler) to look beneath; else its error. */
		r = blockdev_resolve(sysroot, arg, out, error);
		if (r >= 0 || (r != -EISDIR && r != -ENOTSUP))
			return r;
		if (error)
			sd_bus_error_free(error);
	}
	if (arg[0] == '/') {
		r = name_under_path(sysroot, arg, name, sizeof(name), &fs, error);
		if (r < 0)
			return r;
	} else
		snprintf(name, sizeof(name), "%s", arg);	/* valid: blockdev_resolve() checked */

	if (disk_of_partition(sysroot, name, disk, sizeof(disk))) {
		if (fs)
			snprintf(note, n, "%.128s is on %s, a partition of %s: tuning %s", arg, name, disk, disk);
		else
			snprintf(note, n, "%s is a partition of %s: tuning %s", name, disk, disk);
	} else {
		snprintf(disk, sizeof(disk), "%s", name);
		if (fs)
			snprintf(note, n, "%.128s is on %s: tuning %s", arg, disk, disk);
	}
	if (disks_beneath(sysroot, disk, beneath, sizeof(beneath)))
		return error_setf(error, -ENOTSUP, "%s is a stacked device (device-mapper or md) with no I/O "
				  "scheduler of its own; the disks beneath it: %s", disk, beneath);
	return blockdev_resolve(sysroot, disk, out, error);
}
