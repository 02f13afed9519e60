/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The scheduler and Kyber's two targets in sysfs: read, validate, write,
 * save and restore. Every function takes the sysfs root ("/sys" normally, a
 * fake tree in unit tests) and a disk name already checked by
 * blockdev_name_valid().
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "kyber-targets.h"

#define SCHED_NAME_MAX 32
#define SCHED_LIST_MAX 8

struct sched_info {
	char current[SCHED_NAME_MAX];
	char available[SCHED_LIST_MAX][SCHED_NAME_MAX];
	unsigned n_available;
};

struct kyber_saved {
	char scheduler[SCHED_NAME_MAX];
	bool was_kyber;
	struct kyber_targets targets;	/* valid when was_kyber */
};

/* A disk name that is safe to put in a path: no '/', not "." or "..",
 * printable, at most 63 characters. */
bool blockdev_name_valid(const char *name);

/* Parse "none [kyber] mq-deadline\n". -EBADMSG if no scheduler is marked
 * current or a name is too long. Pure. */
int sched_parse(const char *content, struct sched_info *out);
bool sched_info_has(const struct sched_info *s, const char *name);

/* Parse a target file ("2000000\n"). -EBADMSG on anything else. Pure. */
int kyber_target_parse(const char *content, uint64_t *ret);
/* -ERANGE outside [KYBER_TARGET_MIN_NS, KYBER_TARGET_MAX_NS]. */
int kyber_target_validate(uint64_t ns);

int kyber_sysfs_read_scheduler(const char *root, const char *dev, struct sched_info *out);
int kyber_sysfs_set_scheduler(const char *root, const char *dev, const char *name);
/* -ENOENT when the device is not running Kyber. */
int kyber_sysfs_read_targets(const char *root, const char *dev, struct kyber_targets *out);
int kyber_sysfs_write_targets(const char *root, const char *dev, const struct kyber_targets *t);

int kyber_sysfs_save(const char *root, const char *dev, struct kyber_saved *out);
/* Back to the saved scheduler (and targets, if it was Kyber). */
int kyber_sysfs_restore(const char *root, const char *dev, const struct kyber_saved *s);

/* Current token depth of a Kyber domain ("read", "write", ...) from debugfs;
 * -ENOENT when debugfs is not mounted or the device is not on Kyber. */
int kyber_debugfs_read_depth(const char *debugfs_root, const char *dev, const char *domain,
			     unsigned *ret);
