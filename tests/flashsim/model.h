/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The device model of flashsim: pure functions of (request, arrival time,
 * model state) -> due time, plus the min-heap the daemon keeps its pending
 * replies in. No FUSE and no clock in here, so the model is deterministic
 * and can be unit tested without root.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODEL_PAGE_SIZE 4096ULL
#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_SEC 1000000000ULL

/* ---------------------------------------------------------------- heap */

struct heap_entry {
	uint64_t key;	/* due time (ns) */
	uint64_t seq;	/* insertion order: equal keys leave in FIFO order */
	void *data;
};

struct heap {
	struct heap_entry *v;
	size_t n;
	size_t cap;
	uint64_t next_seq;
};

void heap_init(struct heap *h);
void heap_free(struct heap *h);
int heap_push(struct heap *h, uint64_t key, void *data);
/* The caller checks h->n first; popping an empty heap is a bug. */
struct heap_entry heap_pop(struct heap *h);

static inline bool heap_empty(const struct heap *h)
{
	return h->n == 0;
}

static inline uint64_t heap_min_key(const struct heap *h)
{
	return h->v[0].key;
}

/* ---------------------------------------------------------------- model */

enum model_profile {
	PROFILE_FLASH,
	PROFILE_OPTANE,
	PROFILE_BUFFERED,
	_PROFILE_MAX,
};

enum model_op {
	MODEL_READ,
	MODEL_WRITE,
	MODEL_FSYNC,
	_MODEL_OP_MAX,
};

struct model_params {
	enum model_profile profile;
	uint64_t size;		/* bytes, multiple of MODEL_PAGE_SIZE */
	unsigned dies;		/* flash/buffered: dies; optane: read channels */
	uint64_t read_ns;	/* page read */
	uint64_t program_ns;	/* flash/buffered: page program */
	uint64_t write_ns;	/* optane: page write */
	uint64_t write_iops;	/* optane: page write rate cap, 0 = none */
	unsigned buffer_pages;	/* buffered: write buffer size */
	uint64_t ack_ns;	/* buffered: write acknowledge latency */
};

struct model {
	struct model_params p;
	/* Per die (optane: per read channel) time the die becomes idle. */
	uint64_t *die_free;
	/* Die the next page program goes to (round-robin). */
	unsigned next_die;
	/* optane: earliest start of the next page write (rate cap). */
	uint64_t write_next;
	uint64_t write_gap_ns;
	/* buffered: end-of-program times of the occupied buffer slots. */
	struct heap buffer;
	/* buffered: when everything accepted so far is programmed. */
	uint64_t drained_at;
};

const char *model_profile_to_string(enum model_profile p);
int model_profile_from_string(const char *s);
const char *model_op_to_string(enum model_op op);

void model_params_default(struct model_params *p, enum model_profile profile);
/* Returns 0, or -EINVAL and the option name of the offending value. */
int model_params_validate(const struct model_params *p, const char **bad_option);

int model_init(struct model *m, const struct model_params *p);
void model_free(struct model *m);

/*
 * Account a request arriving at @now (ns, nondecreasing across calls) and
 * return the time its reply is due. @off/@len are already clamped to the
 * device; len 0 is due at once.
 */
uint64_t model_submit(struct model *m, enum model_op op, uint64_t off,
		      uint64_t len, uint64_t now);
