/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Resolving what a user typed ("nvme0n1", "/dev/loop3") to a blk-mq disk. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

struct blockdev {
	char name[64];		/* "loop3" */
	unsigned major, minor;
	uint32_t kdev;		/* kernel dev_t encoding, as BPF sees it */
	/* The kernel's number for this disk's media, new with every attach
	 * (a loop device's new file, a disk replugged): a name and dev_t
	 * can be reused by another disk, a diskseq cannot. 0: the kernel
	 * has none (before 5.15). */
	uint64_t diskseq;
};

/*
 * Resolve arg (a name under <sysroot>/class/block or a path under /dev) to
 * a whole disk that has an I/O scheduler. On failure returns -errno, with
 * a sentence naming the cause in error (error.h): no such device, a
 * partition, not a block device, not blk-mq, a path outside /dev.
 */
int blockdev_resolve(const char *sysroot, const char *arg, struct blockdev *out, sd_bus_error *error);

/*
 * What a user may type to name a disk to tune (a goal's device: D-Bus
 * SetGoal, the configuration, --goal): a name, a /dev path or link
 * (/dev/disk/by-id/...), a partition (its disk is tuned), or a path in a
 * mounted file system (the disk under it). A device-mapper or md device
 * is refused naming the disks beneath it. note gets a sentence saying
 * what arg resolved to when that is not arg itself, else "". Resolves
 * any path: only for requests that are authorized.
 */
int blockdev_resolve_user(const char *sysroot, const char *arg, struct blockdev *out, char *note, size_t n,
			  sd_bus_error *error);

/* The kernel's name of block device dev (/sys/dev/block/MAJ:MIN). */
int blockdev_name_of(const char *sysroot, dev_t dev, char *name, size_t n);

/* -ENOTSUP, with a sentence in error, when Kyber is not among the schedulers. */
int blockdev_check_kyber(const char *sysroot, const struct blockdev *d, sd_bus_error *error);

/* Requests the kernel counts in flight (/sys/block/DEV/inflight, both directions). */
int blockdev_read_inflight(const char *sysroot, const char *name, unsigned *ret);

/* Whether the kernel does I/O accounting for the disk (queue/iostats). */
int blockdev_read_iostats(const char *sysroot, const char *name, bool *ret);

/* False when the disk has no medium: size 0 (a loop device with no file,
 * an empty drive). Its goal waits for one. */
bool blockdev_has_medium(const char *sysroot, const char *name);

/*
 * A name for the device that survives reboots and renumbering, for
 * persistent state: "wwid:...", "serial:MODEL:SERIAL", "loop:BACKING_FILE",
 * or "name:NAME" as a last resort.
 */
void blockdev_stable_id(const char *sysroot, const struct blockdev *d, char *buf, size_t n);

/* The disk's model and firmware revision, the key of per-model profiles
 * (profile.h): device/model and device/firmware_rev (NVMe) or device/rev
 * (SCSI, ATA); a loop device is model "loop", no firmware. "" where sysfs
 * says nothing. */
void blockdev_model(const char *sysroot, const char *name, char *model, size_t mn, char *firmware, size_t fn);
