/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Persistent state (proto/kyber_tuned.proto): what must survive a restart.
 *  - state.pb in the state directory: goals set at run time, keyed by a
 *    stable device id (the learned fields are decoded, never written);
 *  - originals.pb in the runtime directory: each tuned device's scheduler
 *    and targets from before tuning, for rollback after a crash.
 * Encoding and decoding are pure (fuzzed); files are written atomically
 * (temporary file, fsync, rename, fsync of the directory).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATE_FILE "state.pb"
#define ORIGINALS_FILE "originals.pb"
/* Version 2: a goal without scheduler= means scheduler=auto. Version 1
 * files meant Kyber always by it; decoding one says so in the goal. */
#define STATE_VERSION 2
#define STATE_VERSION_KYBER_DEFAULT 1
#define ORIGINALS_VERSION 1

struct state_device {
	char *id, *name, *goal;		/* goal: NULL when none was set at run time */
	uint64_t read_target_ns, write_target_ns;
	uint64_t write_ref_p99_ns;
	double write_ref_iops;
	uint64_t read_floor_ns;
	uint64_t updated_ns;
};

struct state {
	struct state_device *devs;
	size_t n;
};

#define ORIGINAL_SCHED_MAX 32	/* a scheduler's name, NUL included */

struct original {
	char *id, *name, *scheduler;
	bool was_kyber;
	uint64_t read_target_ns, write_target_ns;
	/* What kyber-tuned last left on the device ("": not recorded). */
	char left_scheduler[ORIGINAL_SCHED_MAX];
	uint64_t left_read_target_ns, left_write_target_ns;
};

struct originals {
	struct original *v;
	size_t n;
};

/* Pure. decode: -EBADMSG on anything that is not a message of a known
 * version (state: 1 or 2; originals: 1). */
int state_decode(const uint8_t *buf, size_t len, struct state *out);
int state_encode(const struct state *s, uint8_t **ret, size_t *ret_len);
int originals_decode(const uint8_t *buf, size_t len, struct originals *out);
int originals_encode(const struct originals *o, uint8_t **ret, size_t *ret_len);

void state_done(struct state *s);
void originals_done(struct originals *o);

struct state_device *state_find(struct state *s, const char *id);
/* Insert or replace by id (copies the strings). */
int state_put(struct state *s, const struct state_device *d);
void state_remove(struct state *s, const char *id);

struct original *originals_find(struct originals *o, const char *id);
int originals_put(struct originals *o, const struct original *e);
void originals_remove(struct originals *o, const char *id);

/* Files. Load: a missing file is an empty state (0); a corrupt or
 * truncated one -EBADMSG (out left empty: the caller warns and starts
 * clean); other errors -errno. */
int state_load(const char *path, struct state *out);
int state_save(const char *path, const struct state *s);
int originals_load(const char *path, struct originals *out);
int originals_save(const char *path, const struct originals *o);

