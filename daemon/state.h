/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Persistent state (proto/kyber_tuned.proto): what must survive a restart.
 *  - state.pb in the state directory: goals set at run time, keyed by a
 *    stable device id (the learned fields are decoded, never written);
 *  - originals.pb in the runtime directory: each tuned device's scheduler
 *    and targets from before tuning, for rollback after a crash.
 * Encoding and decoding are pure (fuzzed); files are written atomically
 * (temporary file, fsync, rename, fsync of the directory). state.c has
 * the first, originals.c the second, state-table.c what both share.
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

/* A weight set at run time, kept across restarts. */
struct state_weight {
	char *id, *name, *cgroup;	/* the device's stable id, its name, the cgroup's path */
	uint32_t weight;
};

struct state {
	struct state_device *devs;
	size_t n;
	struct state_weight *weights;
	size_t n_weights;
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

/* A cgroup's limits on one disk from before kyber-tuned limited it. */
struct cgroup_original {
	char *cgroup, *root;		/* its path; the hierarchy's mount point */
	int version;			/* enum cgroup_version */
	uint32_t major, minor;
	uint64_t read_iops, write_iops, read_bps, write_bps;	/* 0: none */
};

struct originals {
	struct original *v;
	size_t n;
	struct cgroup_original *cg;
	size_t n_cg;
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

/* Weights by (device id, cgroup); put copies the strings. */
struct state_weight *state_weight_find(struct state *s, const char *id, const char *cgroup);
int state_weight_put(struct state *s, const struct state_weight *w);
void state_weight_remove(struct state *s, const char *id, const char *cgroup);

struct original *originals_find(struct originals *o, const char *id);
int originals_put(struct originals *o, const struct original *e);
void originals_remove(struct originals *o, const char *id);
/* Cgroup limits by (root, cgroup, major, minor); put copies the strings. */
struct cgroup_original *originals_cg_find(struct originals *o, const char *root, const char *cgroup,
					  uint32_t major, uint32_t minor);
int originals_cg_put(struct originals *o, const struct cgroup_original *c);
void originals_cg_remove(struct originals *o, const char *root, const char *cgroup, uint32_t major, uint32_t minor);

/* Files. Load: a missing file is an empty state (0); a corrupt or
 * truncated one -EBADMSG (out left empty: the caller warns and starts
 * clean); other errors -errno. */
int state_load(const char *path, struct state *out);
int state_save(const char *path, const struct state *s);
int originals_load(const char *path, struct originals *out);
int originals_save(const char *path, const struct originals *o);

