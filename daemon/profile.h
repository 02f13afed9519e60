/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-model starting points (docs/profiles.md): where the tuner settled
 * for a goal on one disk, so that disks of the same model and firmware
 * elsewhere start there. A text format after systemd's hwdb: a match line
 * "profile:MODEL:FIRMWARE" (shell globs; the firmware is what follows the
 * last ':'), then its properties, one " KEY=VALUE" per line, indented;
 * records are separated by blank lines, '#' starts a comment line.
 *
 *   profile:Samsung SSD 980 PRO 1TB:5B2QGXA7
 *    GOAL=read-p99=2ms
 *    READ_TARGET_NSEC=2000000
 *    WRITE_TARGET_NSEC=1414213
 *    WRITE_FREE_P99_NSEC=9000000
 *    WRITE_FREE_IOPS=16000
 *
 * Pure: parsing and formatting work on memory (fuzzed), matching on what
 * the caller read from sysfs.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "goal.h"
#include "kyber-targets.h"

#define PROFILE_MODEL_MAX 96	/* sysfs device/model is at most 40 (ATA) or 64 (NVMe) */
#define PROFILE_FIRMWARE_MAX 32
/* A profile file's size bound: thousands of records, a fleet's models. */
#define PROFILE_FILE_MAX (1024 * 1024)

struct profile {
	char model[PROFILE_MODEL_MAX];		/* glob */
	char firmware[PROFILE_FIRMWARE_MAX];	/* glob */
	struct goal goal;
	struct kyber_targets targets;		/* where the goal was met */
	uint64_t write_free_p99_ns;		/* the writes unthrottled; 0: not known */
	double write_free_iops;
};

struct profiles {
	struct profile *v;
	size_t n;
};

/*
 * Appends the records of text (len bytes, no NUL needed) to out. -EBADMSG
 * on a malformed file, with a sentence naming the line and the problem in
 * why; nothing is appended then. -ENOMEM.
 */
int profiles_parse(const char *text, size_t len, struct profiles *out, char *why, size_t n);
void profiles_done(struct profiles *p);
/* One record, the form parse reads; comment (one line, or NULL) above it. */
int profile_format(FILE *f, const struct profile *p, const char *comment);
/*
 * The starting point for a disk of this model and firmware under goal g
 * (its read goal, mode and write floor; the scheduler policy aside): the
 * first record matching both exactly, else the first whose globs match.
 * NULL: none.
 */
const struct profile *profiles_match(const struct profiles *p, const char *model, const char *firmware,
				     const struct goal *g);
